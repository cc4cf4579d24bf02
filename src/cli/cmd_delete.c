/*
 * cmd_delete.c - `flexq delete KIND NAME... | KIND/NAME... | -f FILE`.
 *
 * How it works: each named object (or each object of a validated
 * manifest) gets a DELETE; kubectl's line `kind.group "name" deleted` is
 * printed for each. With -l SELECTOR and no names, every object of the
 * kind matching the selector is deleted.
 *
 * Exit status: 1 if any deletion failed (a missing object counts, unless
 * --ignore-not-found).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"
#include "flexq/alloc.h"
#include "flexq/objects.h"
#include "flexq/paths.h"

static int delete_one(struct fq_client *c, enum fq_kind kind, const char *ns,
                      const char *name, bool ignore_missing)
{
    char *path = fq_client_path(kind, ns, name, NULL, NULL);
    struct fq_err err = {0};
    int r = fq_client_delete(c, path, NULL, &err);
    free(path);
    if (r == FQ_ENOTFOUND && ignore_missing)
        return FQ_CLI_OK;
    if (r < 0)
        return fq_cmd_fail(r, &err);
    const struct fq_kind_info *ki = fq_kind_info(kind);
    if (*ki->group)
        printf("%s.%s \"%s\" deleted\n", ki->singular, ki->group, name);
    else
        printf("%s \"%s\" deleted\n", ki->singular, name);
    return FQ_CLI_OK;
}

static int run(int argc, char **argv)
{
    struct fq_cmd_flags f;
    if (fq_cmd_parse("delete", argc, argv,
                     "namespace,filename,selector,ignore-not-found", &f) < 0)
        return FQ_CLI_FAIL;
    const char *ns = fq_cmd_namespace(&f);
    struct fq_client *c = fq_client_new(NULL, NULL);
    int rc = FQ_CLI_OK;
    if (f.nfiles) {
        struct fq_docs docs;
        if (fq_cmd_read_manifests(f.files, f.nfiles, ns, &docs) < 0) {
            fq_client_free(c);
            return FQ_CLI_FAIL;
        }
        for (size_t i = 0; i < docs.n; i++) {
            enum fq_kind k = FQ_KIND_NONE;
            const char *ons = NULL, *name = NULL;
            fq_object_meta(docs.items[i], &k, &ons, &name);
            if (delete_one(c, k, ons, name, f.ignore_not_found) != 0)
                rc = FQ_CLI_FAIL;
        }
        fq_docs_release(&docs);
        fq_client_free(c);
        return rc;
    }
    struct fq_cmd_target t[FQ_CMD_MAX_ARGS];
    int nt = fq_cmd_targets("delete", &f, t);
    if (nt < 0) {
        fq_client_free(c);
        return FQ_CLI_FAIL;
    }
    for (int i = 0; i < nt; i++) {
        if (t[i].name) {
            if (delete_one(c, t[i].kind, ns, t[i].name, f.ignore_not_found))
                rc = FQ_CLI_FAIL;
            continue;
        }
        if (!f.selector) {
            fq_client_free(c);
            return fq_cli_usage_error("delete",
                                      "name the objects to delete, or give "
                                      "-l SELECTOR");
        }
        char *esc = fq_client_escape(f.selector);
        char *q = fq_xasprintf("labelSelector=%s", esc);
        char *path = fq_client_path(t[i].kind, ns, NULL, NULL, q);
        struct fq_value *list = NULL;
        struct fq_err err = {0};
        int r = fq_client_get(c, path, &list, &err);
        if (r < 0)
            rc = fq_cmd_fail(r, &err);
        const struct fq_value *items = fq_map_get(list, "items");
        for (size_t k = 0; k < fq_value_len(items); k++) {
            const struct fq_value *o = fq_seq_at(items, k);
            if (delete_one(c, t[i].kind,
                           fq_value_path_str(o, FQ_META_NAMESPACE, ns),
                           fq_meta_name(o), true))
                rc = FQ_CLI_FAIL;
        }
        if (r == 0 && fq_value_len(items) == 0)
            fprintf(stderr, "No resources found\n");
        fq_value_free(list);
        free(path);
        free(q);
        free(esc);
    }
    fq_client_free(c);
    return rc;
}

const struct fq_cli_cmd fq_cli_cmd_delete = {
    "delete", run, "Delete objects by name, selector or manifest",
    "Usage: flexq delete KIND NAME... [-n NAMESPACE]\n"
    "       flexq delete KIND/NAME... [-n NAMESPACE]\n"
    "       flexq delete KIND -l SELECTOR [-n NAMESPACE]\n"
    "       flexq delete -f FILE|-\n"
    "\n"
    "  -n, --namespace NS     namespace (default \"default\")\n"
    "  -l, --selector SEL     delete every object of KIND that matches\n"
    "  -f, --filename FILE    delete the objects a manifest names\n"
    "  --ignore-not-found     a missing object is not an error\n"};
