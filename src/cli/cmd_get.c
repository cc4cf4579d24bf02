/*
 * cmd_get.c - `flexq get KIND[,KIND...] [NAME...]`: list or show objects.
 *
 * How it works: each kind is listed (or each named object fetched) from
 * the API with the namespace and label selector, then printed as a table
 * with the kind's printer columns (print.c), or as JSON, YAML or names.
 * With several kinds each gets its own table, names prefixed with
 * kind.group/, separated by blank lines, as kubectl does. Events are
 * sorted by time. `-w` streams changes of one kind as table rows.
 *
 * Exit status: 1 if any named object is missing or a request failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"
#include "flexq/alloc.h"
#include "flexq/paths.h"
#include "jsonpath.h"
#include "positions.h"
#include "print.h"

enum out_mode {
    OUT_TABLE,
    OUT_WIDE,
    OUT_JSON,
    OUT_YAML,
    OUT_NAME,
    OUT_JSONPATH,
    OUT_COLUMNS
};

/* --field-selector: comma-separated PATH=V, PATH==V or PATH!=V on dotted
 * paths (metadata.name, status.phase, spec.nodeName, ...), checked here on
 * what the server returned. A missing field is "". */
static bool field_match(const struct fq_value *obj, const char *sel)
{
    if (!sel || !*sel)
        return true;
    char *copy = fq_xstrdup(sel);
    bool ok = true;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && ok;
         tok = strtok_r(NULL, ",", &save)) {
        char *op = strstr(tok, "!=");
        bool neg = op != NULL;
        size_t skip = 2;
        if (!op) {
            op = strstr(tok, "==");
            if (!op) {
                op = strchr(tok, '=');
                skip = 1;
            }
        }
        if (!op)
            continue; /* refused before any request (field_sel_ok) */
        *op = '\0';
        const char *want = op + skip;
        const struct fq_value *v = fq_value_path(obj, tok);
        const char *have = fq_value_as_str(v);
        char num[64] = "";
        if (!have && v && v->type == FQ_V_BOOL)
            have = v->u.b ? "true" : "false";
        if (!have && v && v->type == FQ_V_NUM) {
            snprintf(num, sizeof(num), "%lld",
                     (long long)fq_value_path_int(obj, tok, 0));
            have = num;
        }
        bool eq = !strcmp(have ? have : "", want);
        ok = neg ? !eq : eq;
    }
    free(copy);
    return ok;
}

static bool field_sel_ok(const char *sel)
{
    char *copy = fq_xstrdup(sel);
    bool ok = *sel != '\0';
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && ok;
         tok = strtok_r(NULL, ",", &save))
        ok = strchr(tok, '=') != NULL && tok[0] != '=' && tok[0] != '!';
    free(copy);
    return ok;
}

static int cmp_event_time(const void *a, const void *b)
{
    const struct fq_value *x = *(const struct fq_value *const *)a;
    const struct fq_value *y = *(const struct fq_value *const *)b;
    const char *tx = fq_value_path_str(x, "lastTimestamp", "");
    const char *ty = fq_value_path_str(y, "lastTimestamp", "");
    return strcmp(tx, ty);
}

struct watch_ctx {
    enum fq_kind kind;
    int flags;
    enum out_mode mode;
    size_t widths[FQ_PRINT_MAX_COLS]; /* rows stay aligned */
    const char *field_selector;
};

static int on_event(void *ctx, const char *type, const struct fq_value *obj)
{
    struct watch_ctx *w = ctx;
    (void)type;
    if (!field_match(obj, w->field_selector))
        return 0;
    if (w->mode == OUT_JSON || w->mode == OUT_YAML) {
        struct fq_buf b = FQ_BUF_INIT;
        if (w->mode == OUT_JSON)
            fq_json_encode(obj, FQ_JSON_PRETTY, &b);
        else
            fq_yaml_encode(obj, &b);
        printf("%s%s\n", w->mode == OUT_YAML ? "---\n" : "", fq_buf_str(&b));
        fq_buf_release(&b);
    } else {
        const struct fq_value *one[1] = {obj};
        fq_print_table_keep(w->kind, one, 1, w->flags, NULL, fq_print_now(),
                            w->widths, stdout);
        w->flags |= FQ_PRINT_NO_HEADERS;
    }
    fflush(stdout);
    return 0;
}

static int run(int argc, char **argv)
{
    struct fq_cmd_flags f;
    if (fq_cmd_parse("get", argc, argv,
                     "namespace,all-namespaces,selector,output,watch,"
                     "no-headers,ignore-not-found,pending,show-labels,"
                     "field-selector",
                     &f) < 0)
        return FQ_CLI_FAIL;
    struct fq_cmd_target t[FQ_CMD_MAX_ARGS];
    int nt = fq_cmd_targets("get", &f, t);
    if (nt < 0)
        return FQ_CLI_FAIL;
    enum out_mode mode = OUT_TABLE;
    const char *o = f.output;
    if (o) {
        if (!strcmp(o, "wide"))
            mode = OUT_WIDE;
        else if (!strcmp(o, "json"))
            mode = OUT_JSON;
        else if (!strcmp(o, "yaml"))
            mode = OUT_YAML;
        else if (!strcmp(o, "name"))
            mode = OUT_NAME;
        else if (!strncmp(o, "jsonpath=", 9))
            mode = OUT_JSONPATH;
        else if (!strncmp(o, "custom-columns=", 15))
            mode = OUT_COLUMNS;
        else
            return fq_cli_usage_error("get",
                                      "-o %s: use wide, json, yaml, name, "
                                      "jsonpath=TEMPLATE or "
                                      "custom-columns=HEADER:PATH,...",
                                      o);
    }
    if (mode == OUT_JSONPATH || mode == OUT_COLUMNS) {
        /* A bad template is refused before any request. */
        struct fq_value *empty = fq_value_map();
        struct fq_buf b = FQ_BUF_INIT;
        struct fq_err err = {0};
        const struct fq_value *one[1] = {empty};
        int r = mode == OUT_JSONPATH ?
                    fq_jsonpath_render(o + 9, empty, &b, &err) :
                    fq_jsonpath_columns(o + 15, one, 1, true, &b, &err);
        fq_buf_release(&b);
        fq_value_free(empty);
        if (r < 0)
            return fq_cli_usage_error("get", "%s", err.msg);
    }
    if (f.field_selector && !field_sel_ok(f.field_selector))
        return fq_cli_usage_error(
            "get",
            "--field-selector %s: use PATH=VALUE, PATH==VALUE or "
            "PATH!=VALUE, comma-separated",
            f.field_selector);
    const char *ns = f.all_ns ? NULL : fq_cmd_namespace(&f);
    char *query = NULL;
    if (f.selector) {
        char *esc = fq_client_escape(f.selector);
        query = fq_xasprintf("labelSelector=%s", esc);
        free(esc);
    }
    struct fq_client *c = fq_client_new(NULL, NULL);
    int rc = FQ_CLI_OK;
    if (f.watch) {
        if (nt != 1) {
            fq_client_free(c);
            free(query);
            return fq_cli_usage_error("get", "-w watches one kind");
        }
        char *q = fq_xasprintf("watch=true%s%s", query ? "&" : "",
                               query ? query : "");
        if (t[0].name) {
            free(q);
            char *esc = fq_client_escape(t[0].name);
            q = fq_xasprintf("watch=true&fieldSelector=metadata.name%%3D%s",
                             esc);
            free(esc);
        }
        char *path = fq_client_path(t[0].kind, ns, NULL, NULL, q);
        struct watch_ctx w = {
            t[0].kind,
            (mode == OUT_WIDE ? FQ_PRINT_WIDE : 0) |
                (f.all_ns ? FQ_PRINT_NAMESPACE : 0) |
                (f.no_headers ? FQ_PRINT_NO_HEADERS : 0) |
                (f.show_labels ? FQ_PRINT_LABELS : 0),
            mode == OUT_JSONPATH || mode == OUT_COLUMNS ? OUT_JSON : mode,
            {0},
            f.field_selector};
        struct fq_err err = {0};
        int r = fq_client_watch(c, path, 0, on_event, &w, &err);
        if (r < 0)
            rc = fq_cmd_fail(r, &err);
        free(path);
        free(q);
        fq_client_free(c);
        free(query);
        return rc;
    }
    /* Distinct kinds, in order, for the "several kinds" layout. */
    int nkinds = 0;
    for (int i = 0; i < nt; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= t[j].kind == t[i].kind;
        nkinds += !seen;
    }
    struct fq_value *all = fq_value_seq(); /* for -o json|yaml */
    bool printed_table = false;
    for (int i = 0; i < nt; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= t[j].kind == t[i].kind;
        if (seen) /* every name of a kind went into its first table */
            continue;
        /* Gather the objects of this kind: a list, or the named ones. */
        struct fq_value *items = fq_value_seq();
        if (!t[i].name) {
            char *path = fq_client_path(t[i].kind, ns, NULL, NULL, query);
            struct fq_value *list = NULL;
            struct fq_err err = {0};
            int r = fq_client_get(c, path, &list, &err);
            free(path);
            if (r < 0) {
                rc = fq_cmd_fail(r, &err);
                fq_value_free(items);
                if (r == FQ_EIO)
                    break;
                continue;
            }
            struct fq_value *li = fq_map_get(list, "items");
            for (size_t k = 0; k < fq_value_len(li); k++)
                fq_seq_push(items, fq_value_clone(fq_seq_at(li, k)));
            fq_value_free(list);
        } else {
            for (int j = i; j < nt; j++) {
                if (t[j].kind != t[i].kind || !t[j].name)
                    continue;
                bool again = false; /* `get cq a a`: a once */
                for (int k = i; k < j; k++)
                    again |= t[k].kind == t[j].kind && t[k].name &&
                             !strcmp(t[k].name, t[j].name);
                if (again)
                    continue;
                char *path = fq_client_path(t[j].kind, ns ? ns : "default",
                                            t[j].name, NULL, NULL);
                struct fq_value *obj = NULL;
                struct fq_err err = {0};
                int r = fq_client_get(c, path, &obj, &err);
                free(path);
                if (r == FQ_ENOTFOUND && f.ignore_not_found)
                    continue;
                if (r < 0) {
                    rc = fq_cmd_fail(r, &err);
                    continue;
                }
                fq_seq_push(items, obj);
            }
        }
        if (t[i].kind == FQ_KIND_WORKLOAD && (f.pending || mode == OUT_WIDE)) {
            struct fq_err err = {0};
            int r =
                fq_cli_positions(c, items, f.pending, mode == OUT_WIDE, &err);
            if (r < 0)
                rc = fq_cmd_fail(r, &err);
        }
        size_t n = 0;
        const struct fq_value **objs =
            fq_xcalloc(fq_value_len(items) + 1, sizeof(*objs));
        for (size_t k = 0; k < fq_value_len(items); k++)
            if (field_match(fq_seq_at(items, k), f.field_selector))
                objs[n++] = fq_seq_at(items, k);
        if (t[i].kind == FQ_KIND_EVENT)
            qsort(objs, n, sizeof(*objs), cmp_event_time);
        if (mode == OUT_JSON || mode == OUT_YAML || mode == OUT_JSONPATH ||
            mode == OUT_COLUMNS) {
            for (size_t k = 0; k < n; k++)
                fq_seq_push(all, fq_value_clone(objs[k]));
        } else if (mode == OUT_NAME) {
            for (size_t k = 0; k < n; k++) {
                struct fq_buf b = FQ_BUF_INIT;
                fq_print_name(t[i].kind, fq_meta_name(objs[k]), &b);
                printf("%s\n", fq_buf_str(&b));
                fq_buf_release(&b);
            }
        } else if (n > 0 || !t[i].name) {
            int flags = (mode == OUT_WIDE ? FQ_PRINT_WIDE : 0) |
                        (f.all_ns ? FQ_PRINT_NAMESPACE : 0) |
                        (nkinds > 1 ? FQ_PRINT_KIND : 0) |
                        (f.no_headers ? FQ_PRINT_NO_HEADERS : 0) |
                        (f.show_labels ? FQ_PRINT_LABELS : 0);
            if (n > 0 && printed_table)
                putchar('\n');
            if (n > 0 || nkinds == 1)
                fq_print_table(t[i].kind, objs, n, flags, ns, fq_print_now(),
                               stdout);
            printed_table |= n > 0;
        }
        free(objs);
        fq_value_free(items);
    }
    if (mode == OUT_COLUMNS) {
        size_t n = fq_value_len(all);
        const struct fq_value **objs = fq_xcalloc(n + 1, sizeof(*objs));
        for (size_t k = 0; k < n; k++)
            objs[k] = fq_seq_at(all, k);
        struct fq_buf b = FQ_BUF_INIT;
        struct fq_err err = {0};
        if (n == 0)
            fprintf(stderr, "No resources found\n");
        else if (fq_jsonpath_columns(o + 15, objs, n, !f.no_headers, &b, &err) <
                 0)
            rc = fq_cmd_fail(FQ_EINVAL, &err);
        else
            fputs(fq_buf_str(&b), stdout);
        fq_buf_release(&b);
        free(objs);
    }
    if (mode == OUT_JSON || mode == OUT_YAML || mode == OUT_JSONPATH) {
        struct fq_value *out;
        bool single = nt == 1 && t[0].name && fq_value_len(all) == 1;
        if (single) {
            out = fq_value_clone(fq_seq_at(all, 0));
        } else {
            out = fq_value_map();
            fq_map_set(out, "apiVersion", fq_value_str("v1"));
            fq_map_set(out, "kind", fq_value_str("List"));
            fq_map_set(out, "items", fq_value_clone(all));
            struct fq_value *md = fq_map_ensure_map(out, "metadata");
            fq_map_set(md, "resourceVersion", fq_value_str(""));
        }
        if (mode == OUT_JSONPATH) {
            struct fq_buf b = FQ_BUF_INIT;
            struct fq_err err = {0};
            if (fq_jsonpath_render(o + 9, out, &b, &err) < 0)
                rc = fq_cmd_fail(FQ_EINVAL, &err);
            else
                fputs(fq_buf_str(&b), stdout);
            fq_buf_release(&b);
        } else if (!single || rc == FQ_CLI_OK) {
            struct fq_buf b = FQ_BUF_INIT;
            if (mode == OUT_JSON)
                fq_json_encode(out, FQ_JSON_PRETTY, &b);
            else
                fq_yaml_encode(out, &b);
            fputs(fq_buf_str(&b), stdout);
            if (b.len && b.data[b.len - 1] != '\n')
                putchar('\n');
            fq_buf_release(&b);
        }
        fq_value_free(out);
    }
    fq_value_free(all);
    fq_client_free(c);
    free(query);
    return rc;
}

const struct fq_cli_cmd fq_cli_cmd_get = {
    "get", run, "List objects, or show some, as tables, JSON or YAML",
    "Usage: flexq get KIND[,KIND...] [NAME...] [flags]\n"
    "       flexq get KIND/NAME [KIND/NAME...] [flags]\n"
    "\n"
    "KIND is a plural, singular, Kind or short name: workloads, wl,\n"
    "clusterqueues, cq, localqueues, lq, resourceflavors, rf,\n"
    "admissionchecks, ac, provisioningrequests, provreq,\n"
    "provisioningrequestconfigs, prc, workloadpriorityclasses, wpc,\n"
    "rayjobs, rayclusters, jobs, pods, nodes, events, configmaps,\n"
    "nodepools, ...\n"
    "\n"
    "  -n, --namespace NS      namespace (default $FLEXQ_NAMESPACE or\n"
    "                          \"default\")\n"
    "  -A, --all-namespaces    every namespace (adds a NAMESPACE column)\n"
    "  -l, --selector SEL      label selector: a=b,c!=d,e,!f,g in (x,y)\n"
    "  -o, --output FMT        wide, json, yaml, name, jsonpath=TEMPLATE\n"
    "                          ({.items[*].metadata.name}, {range ...}\n"
    "                          {end}) or custom-columns=HEADER:PATH,...\n"
    "      --show-labels       a LABELS column\n"
    "      --field-selector S  PATH=V, PATH!=V, comma-separated, e.g.\n"
    "                          status.phase=Running,spec.nodeName=n1\n"
    "      --pending           workloads: only pending ones (with -o wide,\n"
    "                          their positions in ClusterQueue and "
    "LocalQueue)\n"
    "  -w, --watch             stream changes of one kind\n"
    "  --no-headers            tables without the header line\n"
    "  --ignore-not-found      a missing NAME is not an error\n"};
