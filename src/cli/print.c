/*
 * print.c - kubectl-style tables and names for the CLI.
 *
 * How it works: each kind has a list of columns (the printer columns that
 * Kueue's, KubeRay's and Kubernetes' CRDs declare, e.g. for Workloads
 * NAME QUEUE RESERVED IN ADMITTED FINISHED AGE); a column reads a dotted
 * path, a condition's status, a timestamp's age, or calls a small function.
 * Cells are laid out like kubectl's tabwriter: every column but the last is
 * padded to max(10, widest cell + 3).
 *
 * Invariants: output is stable (objects come sorted from the server) and
 * never reads the clock except through `now`, so tests can pin it.
 *
 * What it does not do: colour, sorting flags, custom columns.
 */
#include "print.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"

int64_t fq_print_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fq_print_duration(int64_t ms, char *buf, size_t size)
{
    int64_t s = ms / 1000;
    if (s < -1) {
        snprintf(buf, size, "<invalid>");
        return;
    }
    if (s < 0)
        s = 0;
    int64_t m = s / 60, h = s / 3600, d = h / 24, y = d / 365;
    if (s < 120)
        snprintf(buf, size, "%llds", (long long)s);
    else if (m < 10 && s % 60)
        snprintf(buf, size, "%lldm%llds", (long long)m, (long long)(s % 60));
    else if (m < 180)
        snprintf(buf, size, "%lldm", (long long)m);
    else if (h < 8 && m % 60)
        snprintf(buf, size, "%lldh%lldm", (long long)h, (long long)(m % 60));
    else if (h < 48)
        snprintf(buf, size, "%lldh", (long long)h);
    else if (h < 24 * 8 && h % 24)
        snprintf(buf, size, "%lldd%lldh", (long long)d, (long long)(h % 24));
    else if (d < 365 * 2)
        snprintf(buf, size, "%lldd", (long long)d);
    else if (y < 8 && d % 365)
        snprintf(buf, size, "%lldy%lldd", (long long)y, (long long)(d % 365));
    else
        snprintf(buf, size, "%lldy", (long long)y);
}

void fq_print_age(const char *ts, int64_t now, char *buf, size_t size)
{
    int64_t t;
    if (!ts || !*ts || fq_time_parse(ts, &t) < 0) {
        snprintf(buf, size, "<unknown>");
        return;
    }
    fq_print_duration(now - t, buf, size);
}

void fq_print_name(enum fq_kind kind, const char *name, struct fq_buf *out)
{
    const struct fq_kind_info *ki = fq_kind_info(kind);
    if (*ki->group)
        fq_buf_printf(out, "%s.%s/%s", ki->singular, ki->group, name);
    else
        fq_buf_printf(out, "%s/%s", ki->singular, name);
}

const char *fq_print_condition(const struct fq_value *obj, const char *type)
{
    const struct fq_value *conds = fq_value_path(obj, "status.conditions");
    for (size_t i = 0; i < fq_value_len(conds); i++) {
        const struct fq_value *c = fq_seq_at(conds, i);
        if (!strcmp(fq_value_path_str(c, "type", ""), type))
            return fq_value_path_str(c, "status", "");
    }
    return "";
}

/* --- columns ------------------------------------------------------------ */

enum ctype {
    C_PATH,
    C_COND,
    C_AGE,
    C_FN
};

typedef void (*cell_fn)(const struct fq_value *obj, int64_t now,
                        struct fq_buf *out);

struct col {
    const char *header;
    enum ctype type;
    const char *arg; /* path or condition type */
    cell_fn fn;
    bool wide;
};

static void scalar(const struct fq_value *v, struct fq_buf *out)
{
    if (!v)
        return;
    switch (v->type) {
    case FQ_V_STR:
        fq_buf_puts(out, v->u.str.s);
        break;
    case FQ_V_NUM:
        fq_buf_puts(out, v->u.num.raw);
        break;
    case FQ_V_BOOL:
        fq_buf_puts(out, v->u.b ? "true" : "false");
        break;
    default:
        break;
    }
}

static void ts_age(const struct fq_value *obj, const char *path, int64_t now,
                   struct fq_buf *out)
{
    const char *ts = fq_value_path_str(obj, path, NULL);
    if (!ts)
        return;
    char b[32];
    fq_print_age(ts, now, b, sizeof(b));
    fq_buf_puts(out, b);
}

/* v1beta1's spec.cohort, or v1beta2's spec.cohortName. */
static void cq_cohort(const struct fq_value *obj, int64_t now,
                      struct fq_buf *out)
{
    (void)now;
    const struct fq_value *v = fq_value_path(obj, "spec.cohort");
    scalar(v ? v : fq_value_path(obj, "spec.cohortName"), out);
}

static void wl_count(const struct fq_value *obj, int64_t now,
                     struct fq_buf *out)
{
    (void)now;
    scalar(fq_value_path(obj, "status.pendingWorkloads"), out);
    if (!out->len)
        fq_buf_puts(out, "0");
}

static void wl_admitted(const struct fq_value *obj, int64_t now,
                        struct fq_buf *out)
{
    (void)now;
    scalar(fq_value_path(obj, "status.admittedWorkloads"), out);
    if (!out->len)
        fq_buf_puts(out, "0");
}

static void pod_ready(const struct fq_value *obj, int64_t now,
                      struct fq_buf *out)
{
    (void)now;
    size_t total = fq_value_len(fq_value_path(obj, "spec.containers"));
    const struct fq_value *st = fq_value_path(obj, "status.containerStatuses");
    size_t ready = 0;
    for (size_t i = 0; i < fq_value_len(st); i++)
        ready += fq_value_path_bool(fq_seq_at(st, i), "ready", false);
    if (!st && !strcmp(fq_print_condition(obj, "Ready"), "True"))
        ready = total;
    fq_buf_printf(out, "%zu/%zu", ready, total ? total : 1);
}

static void pod_status(const struct fq_value *obj, int64_t now,
                       struct fq_buf *out)
{
    (void)now;
    const char *reason = fq_value_path_str(obj, "status.reason", NULL);
    if (fq_value_path_str(obj, "metadata.deletionTimestamp", NULL))
        reason = "Terminating";
    fq_buf_puts(out, reason ?
                         reason :
                         fq_value_path_str(obj, "status.phase", "Pending"));
}

static void node_status(const struct fq_value *obj, int64_t now,
                        struct fq_buf *out)
{
    (void)now;
    const char *r = fq_print_condition(obj, "Ready");
    fq_buf_puts(out, !strcmp(r, "True") ? "Ready" : "NotReady");
    if (fq_value_path_bool(obj, "spec.unschedulable", false))
        fq_buf_puts(out, ",SchedulingDisabled");
}

static void data_count(const struct fq_value *obj, int64_t now,
                       struct fq_buf *out)
{
    (void)now;
    fq_buf_printf(out, "%zu",
                  fq_value_len(fq_map_get(obj, "data")) +
                      fq_value_len(fq_map_get(obj, "binaryData")));
}

static void job_status(const struct fq_value *obj, int64_t now,
                       struct fq_buf *out)
{
    (void)now;
    if (!strcmp(fq_print_condition(obj, "Complete"), "True"))
        fq_buf_puts(out, "Complete");
    else if (!strcmp(fq_print_condition(obj, "Failed"), "True"))
        fq_buf_puts(out, "Failed");
    else if (fq_value_path_bool(obj, "spec.suspend", false))
        fq_buf_puts(out, "Suspended");
    else
        fq_buf_puts(out, "Running");
}

static void job_completions(const struct fq_value *obj, int64_t now,
                            struct fq_buf *out)
{
    (void)now;
    int64_t want = fq_value_path_int(obj, "spec.completions", 1);
    fq_buf_printf(out, "%lld/%lld",
                  (long long)fq_value_path_int(obj, "status.succeeded", 0),
                  (long long)want);
}

static void duration_between(const struct fq_value *obj, const char *from,
                             const char *to, int64_t now, struct fq_buf *out)
{
    int64_t a, b = now;
    const char *s = fq_value_path_str(obj, from, NULL);
    const char *e = fq_value_path_str(obj, to, NULL);
    if (!s || fq_time_parse(s, &a) < 0)
        return;
    if (e)
        fq_time_parse(e, &b);
    char buf[32];
    fq_print_duration(b - a, buf, sizeof(buf));
    fq_buf_puts(out, buf);
}

static void job_duration(const struct fq_value *obj, int64_t now,
                         struct fq_buf *out)
{
    duration_between(obj, "status.startTime", "status.completionTime", now,
                     out);
}

static void event_object(const struct fq_value *obj, int64_t now,
                         struct fq_buf *out)
{
    (void)now;
    const char *k = fq_value_path_str(obj, "involvedObject.kind", "");
    enum fq_kind kind = fq_kind_lookup(k);
    const char *name = fq_value_path_str(obj, "involvedObject.name", "");
    if (kind != FQ_KIND_NONE)
        fq_buf_printf(out, "%s/%s", fq_kind_info(kind)->singular, name);
    else
        fq_buf_printf(out, "%s/%s", k, name);
}

static void event_seen(const struct fq_value *obj, int64_t now,
                       struct fq_buf *out)
{
    const char *p = fq_value_path_str(obj, "lastTimestamp", NULL) ?
                        "lastTimestamp" :
                        "metadata.creationTimestamp";
    ts_age(obj, p, now, out);
}

static void pr_cond(const struct fq_value *obj, const char *type,
                    struct fq_buf *out)
{
    const char *s = fq_print_condition(obj, type);
    fq_buf_puts(out, *s ? s : "");
}

static void prq_accepted(const struct fq_value *o, int64_t n, struct fq_buf *b)
{
    (void)n;
    pr_cond(o, "Accepted", b);
}

static void prq_provisioned(const struct fq_value *o, int64_t n,
                            struct fq_buf *b)
{
    (void)n;
    pr_cond(o, "Provisioned", b);
}

static void prq_failed(const struct fq_value *o, int64_t n, struct fq_buf *b)
{
    (void)n;
    pr_cond(o, "Failed", b);
}

static void pool_nodes(const struct fq_value *o, int64_t n, struct fq_buf *b)
{
    (void)n;
    const struct fq_value *v = fq_value_path(o, "status.nodeCount");
    if (v)
        scalar(v, b);
    else
        fq_buf_puts(b, "0");
}

/* spec.X, or GKE's spelling spec.config.X. */
static const struct fq_value *pool_field(const struct fq_value *o,
                                         const char *x)
{
    const struct fq_value *v = fq_map_get(fq_map_get(o, "spec"), x);
    return v ? v : fq_map_get(fq_value_path(o, "spec.config"), x);
}

static void pool_machine(const struct fq_value *o, int64_t n, struct fq_buf *b)
{
    (void)n;
    scalar(pool_field(o, "machineType"), b);
}

static void pool_mode(const struct fq_value *o, int64_t n, struct fq_buf *b)
{
    (void)n;
    const struct fq_value *flex = pool_field(o, "flexStart");
    bool queued =
        fq_value_path_bool(o, "spec.queuedProvisioning.enabled", false);
    bool fs = flex && flex->type == FQ_V_BOOL && flex->u.b;
    fq_buf_puts(b, fs ? "flex-start" : queued ? "queued" : "on-demand");
}

static void pool_autoscale(const struct fq_value *o, int64_t n,
                           struct fq_buf *b)
{
    (void)n;
    const struct fq_value *a = fq_value_path(o, "spec.autoscaling");
    if (!a || !fq_value_path_bool(a, "enabled", true)) {
        fq_buf_puts(b, "off");
        return;
    }
    fq_buf_printf(b, "%lld-%lld",
                  (long long)fq_value_path_int(a, "minNodeCount", 0),
                  (long long)fq_value_path_int(a, "maxNodeCount", 0));
}

#define END                       \
 {                                \
  NULL, C_PATH, NULL, NULL, false \
 }
#define AGE                                               \
 {                                                        \
  "AGE", C_AGE, "metadata.creationTimestamp", NULL, false \
 }

static const struct col cols_workload[] = {
    {"QUEUE", C_PATH, "spec.queueName", NULL, false},
    {"RESERVED IN", C_PATH, "status.admission.clusterQueue", NULL, false},
    {"ADMITTED", C_COND, "Admitted", NULL, false},
    {"FINISHED", C_COND, "Finished", NULL, false},
    {"POSITION IN CQ", C_PATH, "flexqCLI.positionInClusterQueue", NULL, true},
    {"POSITION IN LQ", C_PATH, "flexqCLI.positionInLocalQueue", NULL, true},
    AGE,
    END};
static const struct col cols_cq[] = {
    {"COHORT", C_FN, NULL, cq_cohort, false},
    {"STRATEGY", C_PATH, "spec.queueingStrategy", NULL, true},
    {"PENDING WORKLOADS", C_FN, NULL, wl_count, false},
    {"ADMITTED WORKLOADS", C_FN, NULL, wl_admitted, false},
    END};
static const struct col cols_lq[] = {
    {"CLUSTERQUEUE", C_PATH, "spec.clusterQueue", NULL, false},
    {"PENDING WORKLOADS", C_FN, NULL, wl_count, false},
    {"ADMITTED WORKLOADS", C_FN, NULL, wl_admitted, false},
    END};
static const struct col cols_rayjob[] = {
    {"JOB STATUS", C_PATH, "status.jobStatus", NULL, false},
    {"DEPLOYMENT STATUS", C_PATH, "status.jobDeploymentStatus", NULL, false},
    {"RAY CLUSTER NAME", C_PATH, "status.rayClusterName", NULL, true},
    {"START TIME", C_PATH, "status.startTime", NULL, false},
    {"END TIME", C_PATH, "status.endTime", NULL, false},
    AGE,
    END};
static const struct col cols_raycluster[] = {
    {"DESIRED WORKERS", C_PATH, "status.desiredWorkerReplicas", NULL, false},
    {"AVAILABLE WORKERS", C_PATH, "status.availableWorkerReplicas", NULL,
     false},
    {"STATUS", C_PATH, "status.state", NULL, false},
    AGE,
    END};
static const struct col cols_job[] = {
    {"STATUS", C_FN, NULL, job_status, false},
    {"COMPLETIONS", C_FN, NULL, job_completions, false},
    {"DURATION", C_FN, NULL, job_duration, false},
    AGE,
    END};
static const struct col cols_pod[] = {
    {"READY", C_FN, NULL, pod_ready, false},
    {"STATUS", C_FN, NULL, pod_status, false},
    {"RESTARTS", C_PATH, "status.restartCount", NULL, false},
    AGE,
    {"IP", C_PATH, "status.podIP", NULL, true},
    {"NODE", C_PATH, "spec.nodeName", NULL, true},
    END};
static const struct col cols_node[] = {
    {"STATUS", C_FN, NULL, node_status, false},
    AGE,
    {"POOL", C_PATH, "metadata.labels.cloud\\.google\\.com/gke-nodepool", NULL,
     true},
    END};
static const struct col cols_event[] = {
    {"LAST SEEN", C_FN, NULL, event_seen, false},
    {"TYPE", C_PATH, "type", NULL, false},
    {"REASON", C_PATH, "reason", NULL, false},
    {"OBJECT", C_FN, NULL, event_object, false},
    {"MESSAGE", C_PATH, "message", NULL, false},
    END};
static const struct col cols_configmap[] = {
    {"DATA", C_FN, NULL, data_count, false}, AGE, END};
static const struct col cols_wpc[] = {
    {"VALUE", C_PATH, "value", NULL, false}, AGE, END};
static const struct col cols_cohort[] = {
    {"PARENT", C_PATH, "spec.parentName", NULL, false}, AGE, END};
static const struct col cols_ac[] = {
    {"CONTROLLER", C_PATH, "spec.controllerName", NULL, true},
    {"ACTIVE", C_COND, "Active", NULL, false},
    AGE,
    END};
static const struct col cols_prq[] = {
    {"ACCEPTED", C_FN, NULL, prq_accepted, false},
    {"PROVISIONED", C_FN, NULL, prq_provisioned, false},
    {"FAILED", C_FN, NULL, prq_failed, false},
    AGE,
    END};
static const struct col cols_pool[] = {
    {"MACHINE TYPE", C_FN, NULL, pool_machine, false},
    {"MODE", C_FN, NULL, pool_mode, false},
    {"NODES", C_FN, NULL, pool_nodes, false},
    {"AUTOSCALING", C_FN, NULL, pool_autoscale, true},
    {"TOPOLOGY", C_PATH, "spec.tpuTopology", NULL, true},
    AGE,
    END};
static const struct col cols_default[] = {AGE, END};

static const struct col *columns(enum fq_kind k)
{
    switch (k) {
    case FQ_KIND_WORKLOAD:
        return cols_workload;
    case FQ_KIND_CLUSTERQUEUE:
        return cols_cq;
    case FQ_KIND_LOCALQUEUE:
        return cols_lq;
    case FQ_KIND_RAYJOB:
        return cols_rayjob;
    case FQ_KIND_RAYCLUSTER:
        return cols_raycluster;
    case FQ_KIND_JOB:
        return cols_job;
    case FQ_KIND_POD:
        return cols_pod;
    case FQ_KIND_NODE:
        return cols_node;
    case FQ_KIND_EVENT:
        return cols_event;
    case FQ_KIND_CONFIGMAP:
        return cols_configmap;
    case FQ_KIND_WORKLOADPRIORITYCLASS:
        return cols_wpc;
    case FQ_KIND_COHORT:
        return cols_cohort;
    case FQ_KIND_ADMISSIONCHECK:
        return cols_ac;
    case FQ_KIND_PROVISIONINGREQUEST:
        return cols_prq;
    case FQ_KIND_NODEPOOL:
        return cols_pool;
    default:
        return cols_default;
    }
}

/* A dotted path where "\." escapes a dot inside a key (label names). */
static const struct fq_value *escaped_path(const struct fq_value *v,
                                           const char *path)
{
    if (!strstr(path, "\\."))
        return fq_value_path(v, path);
    char key[256];
    size_t k = 0;
    for (const char *p = path;; p++) {
        if (*p == '\\' && p[1] == '.') {
            if (k < sizeof(key) - 1)
                key[k++] = '.';
            p++;
            continue;
        }
        if (*p == '.' || *p == '\0') {
            key[k] = '\0';
            v = fq_map_get(v, key);
            k = 0;
            if (!v || !*p)
                return v;
            continue;
        }
        if (k < sizeof(key) - 1)
            key[k++] = *p;
    }
}

static void cell(const struct col *c, const struct fq_value *obj, int64_t now,
                 struct fq_buf *out)
{
    switch (c->type) {
    case C_PATH:
        scalar(escaped_path(obj, c->arg), out);
        break;
    case C_COND:
        fq_buf_puts(out, fq_print_condition(obj, c->arg));
        break;
    case C_AGE:
        ts_age(obj, c->arg, now, out);
        break;
    case C_FN:
        c->fn(obj, now, out);
        break;
    }
}

/* --- layout --------------------------------------------------------------- */

struct grid {
    char **cells; /* rows * ncols */
    size_t rows, ncols;
};

/* keep (may be NULL): g->ncols widths carried between calls, so rows
 * printed one call at a time (get -w) stay aligned: each column is as
 * wide as the widest cell seen so far. */
static void grid_print_keep(const struct grid *g, const char *indent,
                            size_t *keep, FILE *out)
{
    size_t *w = fq_xcalloc(g->ncols, sizeof(*w));
    for (size_t c = 0; keep && c < g->ncols; c++)
        w[c] = keep[c];
    for (size_t r = 0; r < g->rows; r++)
        for (size_t c = 0; c < g->ncols; c++) {
            size_t l = strlen(g->cells[r * g->ncols + c]);
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < g->rows; r++) {
        fputs(indent, out);
        for (size_t c = 0; c < g->ncols; c++) {
            const char *s = g->cells[r * g->ncols + c];
            if (c + 1 == g->ncols) {
                fputs(s, out);
                break;
            }
            size_t width = w[c] + 3 < 10 ? 10 : w[c] + 3;
            fprintf(out, "%-*s", (int)width, s);
        }
        fputc('\n', out);
    }
    for (size_t c = 0; keep && c < g->ncols; c++)
        keep[c] = w[c];
    free(w);
}

static void grid_print(const struct grid *g, const char *indent, FILE *out)
{
    grid_print_keep(g, indent, NULL, out);
}

static void grid_free(struct grid *g)
{
    for (size_t i = 0; i < g->rows * g->ncols; i++)
        free(g->cells[i]);
    free(g->cells);
}

void fq_print_table(enum fq_kind kind, const struct fq_value *const *objs,
                    size_t n, int flags, const char *ns, int64_t now, FILE *out)
{
    fq_print_table_keep(kind, objs, n, flags, ns, now, NULL, out);
}

void fq_print_table_keep(enum fq_kind kind, const struct fq_value *const *objs,
                         size_t n, int flags, const char *ns, int64_t now,
                         size_t keep[FQ_PRINT_MAX_COLS], FILE *out)
{
    const struct fq_kind_info *ki = fq_kind_info(kind);
    if (n == 0) {
        if (ns && ki->namespaced && !(flags & FQ_PRINT_NAMESPACE))
            fprintf(stderr, "No resources found in %s namespace.\n", ns);
        else
            fprintf(stderr, "No resources found\n");
        return;
    }
    const struct col *cols = columns(kind);
    bool with_ns = (flags & FQ_PRINT_NAMESPACE) && ki->namespaced;
    bool wide = flags & FQ_PRINT_WIDE;
    /* kubectl's event table has no NAME column: OBJECT says what it is. */
    bool name_col = kind != FQ_KIND_EVENT;
    bool labels = flags & FQ_PRINT_LABELS;
    size_t ncols = (size_t)name_col + with_ns + labels;
    for (const struct col *c = cols; c->header; c++)
        ncols += !c->wide || wide;
    if (ncols > FQ_PRINT_MAX_COLS)
        keep = NULL;
    struct grid g = {fq_xcalloc((n + 1) * ncols, sizeof(char *)), 0, ncols};
    size_t k = 0;
    bool headers = !(flags & FQ_PRINT_NO_HEADERS);
    if (headers) {
        if (with_ns)
            g.cells[k++] = fq_xstrdup("NAMESPACE");
        if (name_col)
            g.cells[k++] = fq_xstrdup("NAME");
        for (const struct col *c = cols; c->header; c++)
            if (!c->wide || wide)
                g.cells[k++] = fq_xstrdup(c->header);
        if (labels)
            g.cells[k++] = fq_xstrdup("LABELS");
        g.rows++;
    }
    struct fq_buf b = FQ_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (with_ns)
            g.cells[k++] = fq_xstrdup(
                fq_value_path_str(objs[i], "metadata.namespace", ""));
        const char *name = fq_value_path_str(objs[i], "metadata.name", "");
        fq_buf_reset(&b);
        if (flags & FQ_PRINT_KIND)
            fq_print_name(kind, name, &b);
        else
            fq_buf_puts(&b, name);
        if (name_col)
            g.cells[k++] = fq_xstrdup(fq_buf_str(&b));
        for (const struct col *c = cols; c->header; c++) {
            if (c->wide && !wide)
                continue;
            fq_buf_reset(&b);
            cell(c, objs[i], now, &b);
            g.cells[k++] = fq_xstrdup(fq_buf_str(&b));
        }
        if (labels) {
            const struct fq_value *l =
                fq_value_path(objs[i], "metadata.labels");
            fq_buf_reset(&b);
            for (size_t m = 0; l && l->type == FQ_V_MAP && m < l->u.map.n;
                 m++) {
                const char *v = fq_value_as_str(l->u.map.items[m].val);
                fq_buf_printf(&b, "%s%s=%s", m ? "," : "",
                              l->u.map.items[m].key, v ? v : "");
            }
            g.cells[k++] = fq_xstrdup(b.len ? fq_buf_str(&b) : "<none>");
        }
        g.rows++;
    }
    fq_buf_release(&b);
    grid_print_keep(&g, "", keep, out);
    grid_free(&g);
}

void fq_print_events(const struct fq_value *const *events, size_t n,
                     bool with_object, int64_t now, const char *indent,
                     FILE *out)
{
    size_t ncols = with_object ? 5 : 5;
    struct grid g = {fq_xcalloc((n + 2) * ncols, sizeof(char *)), 0, ncols};
    size_t k = 0;
    const char *h[5] = {"Type", "Reason", "Age", "From", "Message"};
    const char *hl[5] = {"----", "------", "----", "----", "-------"};
    if (with_object) {
        h[3] = "Object";
        hl[3] = "------";
    }
    for (int i = 0; i < 5; i++)
        g.cells[k++] = fq_xstrdup(h[i]);
    for (int i = 0; i < 5; i++)
        g.cells[k++] = fq_xstrdup(hl[i]);
    g.rows = 2;
    struct fq_buf b = FQ_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *e = events[i];
        g.cells[k++] = fq_xstrdup(fq_value_path_str(e, "type", ""));
        g.cells[k++] = fq_xstrdup(fq_value_path_str(e, "reason", ""));
        fq_buf_reset(&b);
        event_seen(e, now, &b);
        g.cells[k++] = fq_xstrdup(fq_buf_str(&b));
        fq_buf_reset(&b);
        if (with_object)
            event_object(e, now, &b);
        else
            fq_buf_puts(&b, fq_value_path_str(e, "source.component", ""));
        g.cells[k++] = fq_xstrdup(fq_buf_str(&b));
        g.cells[k++] = fq_xstrdup(fq_value_path_str(e, "message", ""));
        g.rows++;
    }
    fq_buf_release(&b);
    grid_print(&g, indent, out);
    grid_free(&g);
}
