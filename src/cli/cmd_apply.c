/*
 * cmd_apply.c - `flexq apply -f FILE|-`: create or update objects.
 *
 * How it works: every document of every file is read and validated first
 * (cmdutil's fq_cmd_read_manifests); if any is invalid nothing is sent.
 * Then each object goes to the server as an apply patch
 * (PATCH .../NAME, application/apply-patch+json), which creates it or
 * replaces its spec and metadata, and the server says which in
 * X-Flexq-Result; the line printed is kubectl's
 * `kind.group/name created|configured|unchanged`.
 *
 * Exit status: 0 when every object was applied, 1 otherwise (the others
 * are still applied, as kubectl does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"
#include "flexq/objects.h"
#include "print.h"

static int run(int argc, char **argv)
{
    struct fq_cmd_flags f;
    if (fq_cmd_parse("apply", argc, argv, "filename,namespace", &f) < 0)
        return FQ_CLI_FAIL;
    if (f.nfiles == 0)
        return fq_cli_usage_error("apply", "-f FILE is required");
    if (f.nargs)
        return fq_cli_usage_error("apply", "unexpected argument \"%s\"",
                                  f.args[0]);
    struct fq_docs docs;
    if (fq_cmd_read_manifests(f.files, f.nfiles, fq_cmd_namespace(&f), &docs) <
        0)
        return FQ_CLI_FAIL;
    struct fq_client *c = fq_client_new(NULL, NULL);
    int rc = FQ_CLI_OK;
    for (size_t i = 0; i < docs.n; i++) {
        enum fq_kind kind = FQ_KIND_NONE;
        const char *ns = NULL, *name = NULL;
        fq_object_meta(docs.items[i], &kind, &ns, &name);
        char *path = fq_client_path(kind, ns, name, NULL, NULL);
        char *body = fq_json_dumps(docs.items[i], FQ_JSON_COMPACT);
        char *result = NULL;
        struct fq_err err = {0};
        int r =
            fq_client_request(c, "PATCH", path, "application/apply-patch+json",
                              body, strlen(body), NULL, NULL, &result, &err);
        if (r < 0) {
            rc = fq_cmd_fail(r, &err);
            if (r == FQ_EIO)
                i = docs.n; /* the server is gone: stop */
        } else {
            struct fq_buf b = FQ_BUF_INIT;
            fq_print_name(kind, name, &b);
            printf("%s %s\n", fq_buf_str(&b), result ? result : "configured");
            fq_buf_release(&b);
        }
        free(result);
        free(body);
        free(path);
    }
    fflush(stdout);
    fq_client_free(c);
    fq_docs_release(&docs);
    return rc;
}

const struct fq_cli_cmd fq_cli_cmd_apply = {
    "apply", run, "Create or update objects from YAML/JSON manifests",
    "Usage: flexq apply -f FILE|- [-f FILE...] [-n NAMESPACE]\n"
    "\n"
    "Reads every document of every file (\"-\" is stdin), validates all of\n"
    "them, and only then sends them to flexqd, one by one. Prints\n"
    "`kind.group/name created|configured|unchanged` for each.\n"
    "\n"
    "  -f, --filename FILE   a manifest file, or - for stdin (repeatable)\n"
    "  -n, --namespace NS    namespace for objects that name none\n"
    "                        (default: $FLEXQ_NAMESPACE or \"default\")\n"};
