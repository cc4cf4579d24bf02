/*
 * cmd_nodepool.c - `flexq nodepool create|describe|list|update|delete`,
 * the gcloud `container node-pools` commands of the tutorial.
 *
 * How it works: `create` turns gcloud's flags into a NodePool object
 * (fq_cli_nodepool_from_flags), checks it with the core's validator
 * (nodepool.c: unknown machine type with the closest names, a topology
 * the type cannot form, min above max, a queued pool without autoscaling)
 * and POSTs it; the server runs the same validator, so the API is guarded
 * too. `describe` prints the pool in gcloud's shape (config.machineType,
 * config.flexStart, autoscaling, placementPolicy, queuedProvisioning,
 * status) as YAML, or one field with --format='get(PATH)' /
 * 'value(PATH)', booleans as gcloud prints them ("True"), so
 *   flexq nodepool describe dws-pool --format='get(config.flexStart)'
 * prints True. `update` merge-patches the autoscaling bounds; `list`
 * prints a table; `delete` deletes (its nodes go with it).
 *
 * Flags are gcloud's: --flag=value or --flag value; --cluster, --location
 * (--zone, --region), --machine-type, --tpu-topology, --num-nodes,
 * --enable-autoscaling / --no-enable-autoscaling, --min-nodes,
 * --max-nodes, --total-min-nodes, --total-max-nodes, --location-policy,
 * --reservation-affinity, --flex-start, --enable-queued-provisioning,
 * --spot, --node-labels=k=v,..., --node-taints=k=v:Effect,...; accepted
 * and ignored: --no-enable-autorepair, --enable-autorepair, --quiet.
 * flexq's own: --slurm-partition=NAME (the annotation
 * flexq.dev/slurm-partition: with flexqd --executor slurm, the partition
 * backing the pool when its name is not the pool's).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/nodepool.h"
#include "flexq/paths.h"
#include "flexq/value.h"

/* The helpers below are exported for tests (test_nodepool.c). */
int fq_cli_nodepool_from_flags(const char *name, int argc, char **argv,
                               struct fq_value **out, struct fq_err *err);
struct fq_value *fq_cli_nodepool_view(const struct fq_value *pool);
int fq_cli_nodepool_get(const struct fq_value *view, const char *format,
                        struct fq_buf *out, struct fq_err *err);

/* Splits "--flag=value" / "--flag value"; returns the value or NULL. */
static const char *flag_value(int argc, char **argv, int *i, const char *arg,
                              const char *name)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] == 0 && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

static int parse_count(const char *flag, const char *v, int64_t *out,
                       struct fq_err *err)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || x < 0 || x > 100000)
        return fq_err_set(err, FQ_EINVAL,
                          "%s: expected a whole number >= 0, got \"%s\"", flag,
                          v);
    *out = x;
    return 0;
}

static int parse_labels(const char *v, struct fq_value *map, struct fq_err *err)
{
    char *s = fq_xstrdup(v);
    int rc = 0;
    for (char *save = NULL, *kv = strtok_r(s, ",", &save); kv;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv) {
            rc = fq_err_set(err, FQ_EINVAL,
                            "--node-labels: \"%s\" is not KEY=VALUE", kv);
            break;
        }
        *eq = 0;
        fq_map_set(map, kv, fq_value_str(eq + 1));
    }
    free(s);
    return rc;
}

static int parse_taints(const char *v, struct fq_value *seq, struct fq_err *err)
{
    char *s = fq_xstrdup(v);
    int rc = 0;
    for (char *save = NULL, *t = strtok_r(s, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(t, ':');
        if (!colon) {
            rc = fq_err_set(err, FQ_EINVAL,
                            "--node-taints: \"%s\" is not KEY=VALUE:EFFECT", t);
            break;
        }
        *colon = 0;
        const char *effect = colon + 1;
        if (strcmp(effect, "NoSchedule") &&
            strcmp(effect, "PreferNoSchedule") && strcmp(effect, "NoExecute")) {
            rc = fq_err_set(err, FQ_EINVAL,
                            "--node-taints: effect \"%s\" is not NoSchedule, "
                            "PreferNoSchedule or NoExecute",
                            effect);
            break;
        }
        char *eq = strchr(t, '=');
        struct fq_value *x = fq_value_map();
        if (eq)
            *eq = 0;
        fq_map_set(x, "key", fq_value_str(t));
        if (eq)
            fq_map_set(x, "value", fq_value_str(eq + 1));
        fq_map_set(x, "effect", fq_value_str(effect));
        fq_seq_push(seq, x);
    }
    free(s);
    return rc;
}

int fq_cli_nodepool_from_flags(const char *name, int argc, char **argv,
                               struct fq_value **out, struct fq_err *err)
{
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("flexq.dev/v1alpha1"));
    fq_map_set(o, "kind", fq_value_str("NodePool"));
    fq_map_set(fq_map_ensure_map(o, "metadata"), "name", fq_value_str(name));
    struct fq_value *spec = fq_map_ensure_map(o, "spec");
    int rc = 0;
    for (int i = 0; rc == 0 && i < argc; i++) {
        const char *a = argv[i], *v;
        int64_t n;
        if ((v = flag_value(argc, argv, &i, a, "--cluster")))
            fq_map_set(spec, "cluster", fq_value_str(v));
        else if ((v = flag_value(argc, argv, &i, a, "--location")) ||
                 (v = flag_value(argc, argv, &i, a, "--zone")) ||
                 (v = flag_value(argc, argv, &i, a, "--region")))
            fq_map_set(spec, "location", fq_value_str(v));
        else if ((v = flag_value(argc, argv, &i, a, "--machine-type")))
            fq_map_set(spec, "machineType", fq_value_str(v));
        else if ((v = flag_value(argc, argv, &i, a, "--tpu-topology")))
            fq_map_set(spec, "tpuTopology", fq_value_str(v));
        else if ((v = flag_value(argc, argv, &i, a, "--num-nodes"))) {
            if ((rc = parse_count("--num-nodes", v, &n, err)) == 0)
                fq_map_set(spec, "initialNodeCount", fq_value_int(n));
        } else if ((v = flag_value(argc, argv, &i, a, "--min-nodes"))) {
            if ((rc = parse_count("--min-nodes", v, &n, err)) == 0)
                fq_map_set(fq_map_ensure_map(spec, "autoscaling"),
                           "minNodeCount", fq_value_int(n));
        } else if ((v = flag_value(argc, argv, &i, a, "--max-nodes"))) {
            if ((rc = parse_count("--max-nodes", v, &n, err)) == 0)
                fq_map_set(fq_map_ensure_map(spec, "autoscaling"),
                           "maxNodeCount", fq_value_int(n));
        } else if ((v = flag_value(argc, argv, &i, a, "--total-min-nodes"))) {
            if ((rc = parse_count("--total-min-nodes", v, &n, err)) == 0)
                fq_map_set(fq_map_ensure_map(spec, "autoscaling"),
                           "totalMinNodeCount", fq_value_int(n));
        } else if ((v = flag_value(argc, argv, &i, a, "--total-max-nodes"))) {
            if ((rc = parse_count("--total-max-nodes", v, &n, err)) == 0)
                fq_map_set(fq_map_ensure_map(spec, "autoscaling"),
                           "totalMaxNodeCount", fq_value_int(n));
        } else if ((v = flag_value(argc, argv, &i, a, "--location-policy")))
            fq_map_set(fq_map_ensure_map(spec, "autoscaling"), "locationPolicy",
                       fq_value_str(v));
        else if ((v = flag_value(argc, argv, &i, a, "--reservation-affinity")))
            fq_map_set(spec, "reservationAffinity", fq_value_str(v));
        else if ((v = flag_value(argc, argv, &i, a, "--slurm-partition")))
            fq_map_set(fq_map_ensure_map(fq_map_ensure_map(o, "metadata"),
                                         "annotations"),
                       FQ_ANN_SLURM_PARTITION, fq_value_str(v));
        else if ((v = flag_value(argc, argv, &i, a, "--node-labels")))
            rc = parse_labels(v, fq_map_ensure_map(spec, "labels"), err);
        else if ((v = flag_value(argc, argv, &i, a, "--node-taints"))) {
            struct fq_value *seq = fq_map_get(spec, "taints");
            if (!seq) {
                seq = fq_value_seq();
                fq_map_set(spec, "taints", seq);
            }
            rc = parse_taints(v, seq, err);
        } else if (!strcmp(a, "--enable-autoscaling"))
            fq_map_set(fq_map_ensure_map(spec, "autoscaling"), "enabled",
                       fq_value_bool(true));
        else if (!strcmp(a, "--no-enable-autoscaling"))
            fq_map_set(fq_map_ensure_map(spec, "autoscaling"), "enabled",
                       fq_value_bool(false));
        else if (!strcmp(a, "--flex-start"))
            fq_map_set(spec, "flexStart", fq_value_bool(true));
        else if (!strcmp(a, "--enable-queued-provisioning"))
            fq_map_set(fq_map_ensure_map(spec, "queuedProvisioning"), "enabled",
                       fq_value_bool(true));
        else if (!strcmp(a, "--spot"))
            fq_map_set(spec, "spot", fq_value_bool(true));
        else if (!strcmp(a, "--no-enable-autorepair") ||
                 !strcmp(a, "--enable-autorepair") || !strcmp(a, "--quiet") ||
                 !strcmp(a, "-q"))
            continue;
        else
            rc = fq_err_set(err, FQ_EINVAL, "unrecognized argument: %s", a);
    }
    if (rc == 0 && !fq_map_get(spec, "initialNodeCount"))
        /* gcloud's default is 3 nodes; autoscaled pools in the tutorial
         * pass --num-nodes=0. */
        fq_map_set(
            spec, "initialNodeCount",
            fq_value_int(fq_value_path(spec, "queuedProvisioning") ? 0 : 3));
    if (rc == 0)
        rc = fq_nodepool_validate(o, err);
    if (rc < 0) {
        fq_value_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

/* gcloud's view: config.*, autoscaling, placementPolicy, status. */
struct fq_value *fq_cli_nodepool_view(const struct fq_value *pool)
{
    const struct fq_value *spec = fq_map_get(pool, "spec");
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "name", fq_value_str(fq_meta_name(pool)));
    struct fq_value *cfg = fq_map_ensure_map(v, "config");
    fq_map_set(cfg, "machineType",
               fq_value_str(fq_value_path_str(spec, "machineType", "")));
    fq_map_set(cfg, "flexStart",
               fq_value_bool(fq_value_path_bool(spec, "flexStart", false)));
    fq_map_set(cfg, "spot",
               fq_value_bool(fq_value_path_bool(spec, "spot", false)));
    const char *ra = fq_value_path_str(spec, "reservationAffinity", NULL);
    if (ra)
        fq_map_set(fq_map_ensure_map(cfg, "reservationAffinity"),
                   "consumeReservationType",
                   fq_value_str(!strcmp(ra, "none") ? "NO_RESERVATION" :
                                !strcmp(ra, "any")  ? "ANY_RESERVATION" :
                                                      "SPECIFIC_RESERVATION"));
    if (fq_map_get(spec, "labels"))
        fq_map_set(cfg, "labels", fq_value_clone(fq_map_get(spec, "labels")));
    if (fq_map_get(spec, "taints"))
        fq_map_set(cfg, "taints", fq_value_clone(fq_map_get(spec, "taints")));
    fq_map_set(v, "initialNodeCount",
               fq_value_int(fq_value_path_int(spec, "initialNodeCount", 0)));
    const struct fq_value *as = fq_map_get(spec, "autoscaling");
    if (as)
        fq_map_set(v, "autoscaling", fq_value_clone(as));
    const char *topo = fq_value_path_str(spec, "tpuTopology", NULL);
    if (topo)
        fq_map_set(fq_map_ensure_map(v, "placementPolicy"), "tpuTopology",
                   fq_value_str(topo));
    fq_map_set(fq_map_ensure_map(v, "queuedProvisioning"), "enabled",
               fq_value_bool(fq_value_path_bool(
                   spec, FQ_POOL_QUEUED_PROVISIONING, false)));
    struct fq_value *locs = fq_value_seq();
    fq_seq_push(locs, fq_value_str(fq_value_path_str(
                          spec, "location", FQ_NODEPOOL_DEFAULT_ZONE)));
    fq_map_set(v, "locations", locs);
    const struct fq_value *st = fq_map_get(pool, "status");
    fq_map_set(v, "status",
               fq_value_str(fq_value_path_str(st, "phase", "PROVISIONING")));
    if (st) {
        fq_map_set(v, "nodeCount",
                   fq_value_int(fq_value_path_int(st, "nodeCount", 0)));
        fq_map_set(v, "readyNodeCount",
                   fq_value_int(fq_value_path_int(st, "readyNodeCount", 0)));
        if (fq_map_get(st, "conditions"))
            fq_map_set(v, "conditions",
                       fq_value_clone(fq_map_get(st, "conditions")));
        if (fq_map_get(st, "cost"))
            fq_map_set(v, "cost", fq_value_clone(fq_map_get(st, "cost")));
    }
    return v;
}

/* gcloud prints Python's str(): True/False, numbers, strings as is. */
static void print_scalar(const struct fq_value *x, struct fq_buf *out)
{
    if (!x || x->type == FQ_V_NULL)
        return;
    if (x->type == FQ_V_BOOL)
        fq_buf_puts(out, x->u.b ? "True" : "False");
    else if (x->type == FQ_V_NUM)
        fq_buf_puts(out, x->u.num.raw);
    else if (x->type == FQ_V_STR)
        fq_buf_puts(out, x->u.str.s);
    else
        fq_json_encode(x, FQ_JSON_COMPACT, out);
}

int fq_cli_nodepool_get(const struct fq_value *view, const char *format,
                        struct fq_buf *out, struct fq_err *err)
{
    if (!format || !strcmp(format, "yaml") || !*format) {
        fq_yaml_encode(view, out);
        return 0;
    }
    if (!strcmp(format, "json")) {
        fq_json_encode(view, FQ_JSON_PRETTY, out);
        fq_buf_putc(out, '\n');
        return 0;
    }
    const char *open = strchr(format, '(');
    size_t flen = strlen(format);
    if (!open || format[flen - 1] != ')' ||
        (strncmp(format, "get(", 4) && strncmp(format, "value(", 6)))
        return fq_err_set(err, FQ_EINVAL,
                          "--format: \"%s\" is not yaml, json, get(FIELD) or "
                          "value(FIELD)",
                          format);
    char *fields = fq_xstrndup(open + 1, flen - (size_t)(open - format) - 2);
    bool first = true;
    for (char *save = NULL, *f = strtok_r(fields, ",", &save); f;
         f = strtok_r(NULL, ",", &save)) {
        while (*f == ' ')
            f++;
        if (!first)
            fq_buf_putc(out, '\t');
        first = false;
        print_scalar(fq_value_path(view, f), out);
    }
    fq_buf_putc(out, '\n');
    free(fields);
    return 0;
}

/* --- commands ------------------------------------------------------------ */

static int fail(int code, const struct fq_err *err)
{
    return fq_cmd_fail(code, err);
}

static int get_pool(struct fq_client *c, const char *name,
                    struct fq_value **out)
{
    char *path = fq_client_path(FQ_KIND_NODEPOOL, NULL, name, NULL, NULL);
    struct fq_err err = {0};
    int rc = fq_client_get(c, path, out, &err);
    free(path);
    if (rc < 0)
        return fail(rc, &err);
    return FQ_CLI_OK;
}

static int do_create(struct fq_client *c, int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-')
        return fq_cli_usage_error("nodepool", "create needs a pool NAME");
    struct fq_value *o = NULL;
    struct fq_err err = {0};
    int rc = fq_cli_nodepool_from_flags(argv[0], argc - 1, argv + 1, &o, &err);
    if (rc < 0) {
        fprintf(stderr, "ERROR: (flexq.nodepool.create) %s\n", err.msg);
        return FQ_CLI_FAIL;
    }
    char *path = fq_client_path(FQ_KIND_NODEPOOL, NULL, NULL, NULL, NULL);
    rc = fq_client_post(c, path, o, NULL, &err);
    free(path);
    fq_value_free(o);
    if (rc < 0)
        return fail(rc, &err);
    printf("Created node pool [%s].\n", argv[0]);
    return FQ_CLI_OK;
}

static const char *format_flag(int argc, char **argv)
{
    const char *fmt = NULL;
    for (int i = 0; i < argc; i++) {
        const char *v = flag_value(argc, argv, &i, argv[i], "--format");
        if (v)
            fmt = v;
    }
    return fmt;
}

static int do_describe(struct fq_client *c, int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-')
        return fq_cli_usage_error("nodepool", "describe needs a pool NAME");
    struct fq_value *pool = NULL;
    if (get_pool(c, argv[0], &pool) != FQ_CLI_OK)
        return FQ_CLI_FAIL;
    struct fq_value *view = fq_cli_nodepool_view(pool);
    struct fq_buf b = FQ_BUF_INIT;
    struct fq_err err = {0};
    int rc =
        fq_cli_nodepool_get(view, format_flag(argc - 1, argv + 1), &b, &err);
    if (rc == 0)
        fputs(fq_buf_str(&b), stdout);
    else
        fprintf(stderr, "ERROR: (flexq.nodepool.describe) %s\n", err.msg);
    fq_buf_release(&b);
    fq_value_free(view);
    fq_value_free(pool);
    return rc == 0 ? FQ_CLI_OK : FQ_CLI_FAIL;
}

static int do_list(struct fq_client *c)
{
    char *path = fq_client_path(FQ_KIND_NODEPOOL, NULL, NULL, NULL, NULL);
    struct fq_value *list = NULL;
    struct fq_err err = {0};
    int rc = fq_client_get(c, path, &list, &err);
    free(path);
    if (rc < 0)
        return fail(rc, &err);
    printf("%-20s %-18s %-9s %-6s %-4s %-4s %-22s %s\n", "NAME", "MACHINE_TYPE",
           "TOPOLOGY", "NODES", "MIN", "MAX", "MODE", "COST_USD");
    const struct fq_value *items = fq_map_get(list, "items");
    for (size_t i = 0; i < fq_value_len(items); i++) {
        const struct fq_value *p = fq_seq_at(items, i);
        const struct fq_value *s = fq_map_get(p, "spec");
        bool queued = fq_value_path_bool(s, FQ_POOL_QUEUED_PROVISIONING, false);
        bool flex = fq_value_path_bool(s, "flexStart", false);
        bool spot = fq_value_path_bool(s, "spot", false);
        printf("%-20s %-18s %-9s %-6lld %-4lld %-4lld %-22s %s\n",
               fq_meta_name(p), fq_value_path_str(s, "machineType", ""),
               fq_value_path_str(s, "tpuTopology", "-"),
               (long long)fq_value_path_int(p, FQ_POOL_NODE_COUNT, 0),
               (long long)fq_value_path_int(s, "autoscaling.minNodeCount", 0),
               (long long)fq_value_path_int(s, "autoscaling.maxNodeCount", 0),
               queued ? "flex-start,queued" :
               flex   ? "flex-start" :
               spot   ? "spot" :
                        "on-demand",
               fq_value_path_str(p, FQ_STATUS_COST_USD, "0"));
    }
    fq_value_free(list);
    return FQ_CLI_OK;
}

static int do_update(struct fq_client *c, int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-')
        return fq_cli_usage_error("nodepool", "update needs a pool NAME");
    struct fq_value *pool = NULL;
    if (get_pool(c, argv[0], &pool) != FQ_CLI_OK)
        return FQ_CLI_FAIL;
    /* Apply the flags on the stored spec, validate the result whole. */
    struct fq_value *flags = NULL;
    struct fq_err err = {0};
    char **args = fq_xcalloc((size_t)argc + 4, sizeof(*args));
    int n = 0;
    char mt[300];
    snprintf(mt, sizeof(mt), "--machine-type=%s",
             fq_value_path_str(pool, FQ_POOL_MACHINE_TYPE, ""));
    args[n++] = mt;
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    int rc = fq_cli_nodepool_from_flags(argv[0], n, args, &flags, &err);
    free(args);
    if (rc < 0 && rc != FQ_EINVAL) {
        fq_value_free(pool);
        return fail(rc, &err);
    }
    struct fq_value *patch = fq_value_map();
    struct fq_value *ps = fq_map_ensure_map(patch, "spec");
    const struct fq_value *as =
        flags ? fq_value_path(flags, FQ_POOL_AUTOSCALING) : NULL;
    if (!flags) {
        /* The flags alone may not form a valid pool (e.g. only
         * --max-nodes): rebuild them without validation for the patch. */
        for (int i = 1; i < argc; i++) {
            int64_t x = 0;
            const char *v;
            if ((v = flag_value(argc, argv, &i, argv[i], "--min-nodes")) &&
                parse_count("--min-nodes", v, &x, &err) == 0)
                fq_map_set(fq_map_ensure_map(ps, "autoscaling"), "minNodeCount",
                           fq_value_int(x));
            else if ((v = flag_value(argc, argv, &i, argv[i], "--max-nodes")) &&
                     parse_count("--max-nodes", v, &x, &err) == 0)
                fq_map_set(fq_map_ensure_map(ps, "autoscaling"), "maxNodeCount",
                           fq_value_int(x));
            else if (!strcmp(argv[i], "--enable-autoscaling"))
                fq_map_set(fq_map_ensure_map(ps, "autoscaling"), "enabled",
                           fq_value_bool(true));
            else if (!strcmp(argv[i], "--no-enable-autoscaling"))
                fq_map_set(fq_map_ensure_map(ps, "autoscaling"), "enabled",
                           fq_value_bool(false));
        }
    } else if (as) {
        fq_map_set(ps, "autoscaling", fq_value_clone(as));
    }
    fq_value_free(flags);
    /* The pool as it would be, checked by the core before sending. */
    struct fq_value *after = fq_value_clone(pool);
    fq_value_merge_patch(&after, patch);
    memset(&err, 0, sizeof(err));
    rc = fq_nodepool_validate(after, &err);
    fq_value_free(after);
    fq_value_free(pool);
    if (rc < 0) {
        fq_value_free(patch);
        fprintf(stderr, "ERROR: (flexq.nodepool.update) %s\n", err.msg);
        return FQ_CLI_FAIL;
    }
    char *path = fq_client_path(FQ_KIND_NODEPOOL, NULL, argv[0], NULL, NULL);
    rc = fq_client_patch(c, path, NULL, patch, NULL, &err);
    free(path);
    fq_value_free(patch);
    if (rc < 0)
        return fail(rc, &err);
    printf("Updated node pool [%s].\n", argv[0]);
    return FQ_CLI_OK;
}

static int do_delete(struct fq_client *c, int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-')
        return fq_cli_usage_error("nodepool", "delete needs a pool NAME");
    char *path = fq_client_path(FQ_KIND_NODEPOOL, NULL, argv[0], NULL, NULL);
    struct fq_err err = {0};
    int rc = fq_client_delete(c, path, NULL, &err);
    free(path);
    if (rc < 0)
        return fail(rc, &err);
    printf("Deleted node pool [%s].\n", argv[0]);
    return FQ_CLI_OK;
}

static int run(int argc, char **argv)
{
    if (argc < 2)
        return fq_cli_usage_error("nodepool",
                                  "expected create, describe, list, update "
                                  "or delete");
    const char *sub = argv[1];
    struct fq_client *c = fq_client_new(NULL, NULL);
    int rc;
    if (!strcmp(sub, "create"))
        rc = do_create(c, argc - 2, argv + 2);
    else if (!strcmp(sub, "describe"))
        rc = do_describe(c, argc - 2, argv + 2);
    else if (!strcmp(sub, "list"))
        rc = do_list(c);
    else if (!strcmp(sub, "update"))
        rc = do_update(c, argc - 2, argv + 2);
    else if (!strcmp(sub, "delete"))
        rc = do_delete(c, argc - 2, argv + 2);
    else
        rc = fq_cli_usage_error("nodepool", "unknown subcommand \"%s\"", sub);
    fq_client_free(c);
    return rc;
}

const struct fq_cli_cmd fq_cli_cmd_nodepool = {
    "nodepool", run, "Create, describe, list, update and delete node pools",
    "Usage:\n"
    "  flexq nodepool create NAME --machine-type=TYPE [--tpu-topology=AxB]\n"
    "      [--location=ZONE] [--num-nodes=N] [--enable-autoscaling\n"
    "      --min-nodes=N --max-nodes=N] [--reservation-affinity=none]\n"
    "      [--flex-start --enable-queued-provisioning] [--spot]\n"
    "      [--node-labels=K=V,...] [--node-taints=K=V:EFFECT,...]\n"
    "      [--slurm-partition=NAME]\n"
    "  flexq nodepool describe NAME [--format=yaml|json|get(FIELD)]\n"
    "  flexq nodepool list\n"
    "  flexq nodepool update NAME [--enable-autoscaling] [--min-nodes=N]\n"
    "      [--max-nodes=N]\n"
    "  flexq nodepool delete NAME\n"
    "\n"
    "The gcloud container node-pools commands of the tutorial, e.g.\n"
    "  flexq nodepool create dws-pool --machine-type=ct6e-standard-4t \\\n"
    "    --tpu-topology=4x4 --enable-autoscaling --num-nodes=0 \\\n"
    "    --min-nodes=0 --max-nodes=4 --flex-start \\\n"
    "    --enable-queued-provisioning\n"
    "  flexq nodepool describe dws-pool --format='get(config.flexStart)'\n"
    "Bad flags change nothing: an unknown machine type (with the closest\n"
    "names), a topology that does not fit it, --min-nodes above\n"
    "--max-nodes, or queued provisioning without autoscaling.\n"};
