/*
 * cmd_create.c - `flexq create configmap NAME --from-file=...` and
 * `flexq create -f FILE`.
 *
 * How it works: a ConfigMap is built from files (key = the file's base
 * name, or KEY=PATH) and literals (KEY=VALUE), then POSTed; `-f` POSTs
 * each validated manifest, so an object that exists is an error (use
 * apply to update). Prints `configmap/NAME created`.
 *
 * What it does not do: --from-env-file, secrets (flexq has no Secret kind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"
#include "flexq/alloc.h"
#include "flexq/objects.h"
#include "print.h"

#define MAX_CONFIGMAP (1u << 20) /* Kubernetes' limit for a ConfigMap */

static int post_one(struct fq_client *c, struct fq_value *obj)
{
    enum fq_kind kind = FQ_KIND_NONE;
    const char *ns = NULL, *name = NULL;
    fq_object_meta(obj, &kind, &ns, &name);
    char *path = fq_client_path(kind, ns, NULL, NULL, NULL);
    struct fq_err err = {0};
    int r = fq_client_post(c, path, obj, NULL, &err);
    free(path);
    if (r < 0)
        return fq_cmd_fail(r, &err);
    struct fq_buf b = FQ_BUF_INIT;
    fq_print_name(kind, name, &b);
    printf("%s created\n", fq_buf_str(&b));
    fq_buf_release(&b);
    return FQ_CLI_OK;
}

static int configmap(struct fq_cmd_flags *f)
{
    if (f->nargs != 2)
        return fq_cli_usage_error("create",
                                  "create configmap needs exactly one NAME");
    const char *name = f->args[1];
    const char *why = fq_check_dns1123_subdomain(name);
    if (why)
        return fq_cli_usage_error("create", "invalid name \"%s\": %s", name,
                                  why);
    struct fq_value *cm = fq_value_map();
    fq_map_set(cm, "apiVersion", fq_value_str("v1"));
    fq_map_set(cm, "kind", fq_value_str("ConfigMap"));
    struct fq_value *md = fq_map_ensure_map(cm, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str(fq_cmd_namespace(f)));
    struct fq_value *data = fq_map_ensure_map(cm, "data");
    size_t total = 0;
    int rc = FQ_CLI_OK;
    for (int i = 0; i < f->nfrom_file && rc == FQ_CLI_OK; i++) {
        const char *spec = f->from_file[i];
        const char *eq = strchr(spec, '=');
        const char *path = eq ? eq + 1 : spec;
        char key[256];
        if (eq)
            snprintf(key, sizeof(key), "%.*s", (int)(eq - spec), spec);
        else {
            const char *slash = strrchr(path, '/');
            snprintf(key, sizeof(key), "%s", slash ? slash + 1 : path);
        }
        char *text = NULL;
        size_t len = 0;
        struct fq_err err = {0};
        if (fq_cli_read_file(path, MAX_CONFIGMAP, &text, &len, &err) < 0) {
            fprintf(stderr, "error: %s\n", err.msg);
            rc = FQ_CLI_FAIL;
            break;
        }
        if (strlen(text) != len) {
            fprintf(stderr, "error: %s: binary files are not supported\n",
                    path);
            rc = FQ_CLI_FAIL;
        }
        total += len;
        fq_map_set(data, key, fq_value_strn(text, len));
        free(text);
    }
    for (int i = 0; i < f->nfrom_literal && rc == FQ_CLI_OK; i++) {
        const char *eq = strchr(f->from_literal[i], '=');
        if (!eq) {
            rc = fq_cli_usage_error("create", "--from-literal needs KEY=VALUE");
            break;
        }
        char *key =
            fq_xstrndup(f->from_literal[i], (size_t)(eq - f->from_literal[i]));
        fq_map_set(data, key, fq_value_str(eq + 1));
        total += strlen(eq + 1);
        free(key);
    }
    if (rc == FQ_CLI_OK && total > MAX_CONFIGMAP) {
        fprintf(stderr,
                "error: ConfigMap \"%s\" is invalid: data is larger "
                "than 1 MiB\n",
                name);
        rc = FQ_CLI_FAIL;
    }
    if (rc == FQ_CLI_OK) {
        struct fq_client *c = fq_client_new(NULL, NULL);
        rc = post_one(c, cm);
        fq_client_free(c);
    }
    fq_value_free(cm);
    return rc;
}

static int run(int argc, char **argv)
{
    struct fq_cmd_flags f;
    if (fq_cmd_parse("create", argc, argv,
                     "namespace,filename,from-file,from-literal", &f) < 0)
        return FQ_CLI_FAIL;
    if (f.nfiles) {
        struct fq_docs docs;
        if (fq_cmd_read_manifests(f.files, f.nfiles, fq_cmd_namespace(&f),
                                  &docs) < 0)
            return FQ_CLI_FAIL;
        struct fq_client *c = fq_client_new(NULL, NULL);
        int rc = FQ_CLI_OK;
        for (size_t i = 0; i < docs.n; i++)
            if (post_one(c, docs.items[i]) != FQ_CLI_OK)
                rc = FQ_CLI_FAIL;
        fq_client_free(c);
        fq_docs_release(&docs);
        return rc;
    }
    if (f.nargs == 0)
        return fq_cli_usage_error("create", "what to create? (configmap, -f)");
    enum fq_kind k = fq_kind_lookup(f.args[0]);
    if (k == FQ_KIND_CONFIGMAP)
        return configmap(&f);
    return fq_cli_usage_error("create",
                              "cannot create \"%s\" from flags; write a "
                              "manifest and use `flexq apply -f`",
                              f.args[0]);
}

const struct fq_cli_cmd fq_cli_cmd_create = {
    "create", run, "Create a ConfigMap from files, or objects from manifests",
    "Usage: flexq create configmap NAME [--from-file=[KEY=]PATH...]\n"
    "                   [--from-literal=KEY=VALUE...] [-n NAMESPACE]\n"
    "       flexq create -f FILE|- [-n NAMESPACE]\n"
    "\n"
    "  --from-file [KEY=]PATH  a data entry from a file (key: the file's\n"
    "                          name unless given)\n"
    "  --from-literal K=V      a data entry from a literal value\n"
    "  -f, --filename FILE     create every object of a manifest; an\n"
    "                          object that exists is an error\n"
    "  -n, --namespace NS      the namespace (default \"default\")\n"};
