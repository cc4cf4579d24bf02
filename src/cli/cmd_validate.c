/*
 * cmd_validate.c - `flexq validate -f FILE|- [-f FILE ...]`: reads
 * manifests the way `flexq apply` will, without a server, and says either
 * what they hold or everything that is wrong with them.
 *
 * For each file, in order: fq_manifest_read (parse within the input
 * limits, validate every document, look for duplicates). A good file
 * prints one `Kind/name` line per object (with ` -n NAMESPACE` for
 * namespaced objects that name one); a bad one prints all its errors on
 * stderr. Every file is checked even after a bad one. Exit status 0 when
 * all are valid, 1 otherwise (also for usage errors and unreadable files).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/manifest.h"
#include "flexq/objects.h"
#include "flexq/paths.h"
#include "flexq/value.h"

static int check_file(const char *path, FILE *out, FILE *err)
{
    struct fq_limits lim = fq_limits_default();
    struct fq_err e;
    memset(&e, 0, sizeof(e));
    char *text = NULL;
    size_t len = 0;
    int rc = fq_cli_read_file(path, lim.max_bytes, &text, &len, &e);
    if (rc < 0) {
        fprintf(err, "error: %s\n", e.msg);
        return FQ_CLI_FAIL;
    }
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    struct fq_docs docs;
    memset(&docs, 0, sizeof(docs));
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    rc = fq_manifest_read(text, len, name, &docs, &errs);
    free(text);
    if (rc < 0) {
        for (size_t i = 0; i < errs.n; i++)
            fprintf(err, "error: %s\n", errs.items[i].msg);
        if (errs.n == 0)
            fprintf(err, "error: %s: %s\n", name, fq_strerror(rc));
        fq_errlist_release(&errs);
        return FQ_CLI_FAIL;
    }
    fq_errlist_release(&errs);
    for (size_t i = 0; i < docs.n; i++) {
        enum fq_kind kind;
        const char *ns, *oname;
        fq_object_meta(docs.items[i], &kind, &ns, &oname);
        if (!oname)
            oname =
                fq_value_path_str(docs.items[i], FQ_META_GENERATE_NAME, "?");
        if (fq_kind_info(kind)->namespaced && ns)
            fprintf(out, "%s/%s -n %s\n", fq_kind_info(kind)->name, oname, ns);
        else
            fprintf(out, "%s/%s\n", fq_kind_info(kind)->name, oname);
    }
    fq_docs_release(&docs);
    return FQ_CLI_OK;
}

int fq_cli_validate(int argc, char **argv, FILE *out, FILE *err)
{
    const char **files = calloc((size_t)argc + 1, sizeof(*files));
    size_t nfiles = 0;
    int rc = FQ_CLI_OK;
    if (!files)
        return FQ_CLI_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (strcmp(a, "-f") == 0 || strcmp(a, "--filename") == 0) {
            if (i + 1 >= argc) {
                fprintf(err,
                        "flexq validate: %s needs a file name (or - for "
                        "stdin)\nRun 'flexq validate --help' for usage.\n",
                        a);
                free(files);
                return FQ_CLI_FAIL;
            }
            val = argv[++i];
        } else if (strncmp(a, "--filename=", 11) == 0) {
            val = a + 11;
        } else if (strncmp(a, "-f", 2) == 0 && a[2]) {
            val = a[2] == '=' ? a + 3 : a + 2;
        } else {
            fprintf(err,
                    "flexq validate: unknown argument \"%s\"\nRun 'flexq "
                    "validate --help' for usage.\n",
                    a);
            free(files);
            return FQ_CLI_FAIL;
        }
        files[nfiles++] = val;
    }
    if (nfiles == 0) {
        fprintf(err, "flexq validate: give at least one -f FILE (or -f - for "
                     "stdin)\nRun 'flexq validate --help' for usage.\n");
        free(files);
        return FQ_CLI_FAIL;
    }
    for (size_t i = 0; i < nfiles; i++)
        if (check_file(files[i], out, err) != FQ_CLI_OK)
            rc = FQ_CLI_FAIL;
    free(files);
    return rc;
}

static int run(int argc, char **argv)
{
    return fq_cli_validate(argc, argv, stdout, stderr);
}

const struct fq_cli_cmd fq_cli_cmd_validate = {
    "validate", run, "Check manifests without applying them",
    "Usage: flexq validate -f FILE [-f FILE ...]\n"
    "\n"
    "Reads each FILE (- for stdin) as flexq apply would: a YAML or JSON\n"
    "stream of objects, each checked against its kind's rules (names,\n"
    "labels, required fields, quantities, Kueue's and KubeRay's rules).\n"
    "Prints Kind/name for each object of a valid file, or every error as\n"
    "FILE:LINE:COL: FIELD: what. Exit status 0 when all files are valid,\n"
    "1 otherwise.\n"
    "\n"
    "  -f, --filename FILE  a manifest to check; repeat for more files\n"
    "\n"
    "Example:\n"
    "  envsubst < dws-tpu-queue.yaml | flexq validate -f -\n"};
