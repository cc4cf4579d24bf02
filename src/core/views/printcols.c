/*
 * printcols.c - the printer columns of every kind, shared by the CLI's
 * tables (src/cli/print.c) and the API's server-side Tables
 * (src/daemon/api/table.c), so `flexq get` and `kubectl get` show the same
 * columns with the same cells.
 *
 * How it works: each kind has a list of columns (the printer columns that
 * Kueue's, KubeRay's and Kubernetes' CRDs and printers declare, e.g. for
 * Workloads NAME QUEUE RESERVED IN ADMITTED FINISHED AGE); a column reads a
 * dotted path, a condition's status, a timestamp's age, or calls a small
 * function. Wide columns (-o wide) are priority 1 in a Table.
 *
 * Invariants: cells never read the clock except through `now`, so tests
 * can pin it; the NAME column is implicit (every kind but Event has it).
 *
 * What it does not do: layout (the CLI pads, kubectl lays out Tables).
 */
#include "flexq/printcols.h"
#include "flexq/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/timefmt.h"

void fq_printcols_duration(int64_t ms, char *buf, size_t size)
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

void fq_printcols_age(const char *ts, int64_t now, char *buf, size_t size)
{
    int64_t t;
    if (!ts || !*ts || fq_time_parse(ts, &t) < 0) {
        snprintf(buf, size, "<unknown>");
        return;
    }
    fq_printcols_duration(now - t, buf, size);
}

const char *fq_printcols_condition(const struct fq_value *obj, const char *type)
{
    const struct fq_value *conds = fq_value_path(obj, FQ_STATUS_CONDITIONS);
    for (size_t i = 0; i < fq_value_len(conds); i++) {
        const struct fq_value *c = fq_seq_at(conds, i);
        if (!strcmp(fq_value_path_str(c, "type", ""), type))
            return fq_value_path_str(c, "status", "");
    }
    return "";
}

/* --- columns ------------------------------------------------------------ */

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
    fq_printcols_age(ts, now, b, sizeof(b));
    fq_buf_puts(out, b);
}

/* v1beta1's spec.cohort, or v1beta2's spec.cohortName. */
static void cq_cohort(const struct fq_value *obj, int64_t now,
                      struct fq_buf *out)
{
    (void)now;
    const struct fq_value *v = fq_value_path(obj, FQ_CQ_COHORT);
    scalar(v ? v : fq_value_path(obj, FQ_CQ_COHORT_NAME), out);
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
    size_t total = fq_value_len(fq_value_path(obj, FQ_POD_CONTAINERS));
    const struct fq_value *st = fq_value_path(obj, FQ_POD_CONTAINER_STATUSES);
    size_t ready = 0;
    for (size_t i = 0; i < fq_value_len(st); i++)
        ready += fq_value_path_bool(fq_seq_at(st, i), "ready", false);
    if (!st && !strcmp(fq_printcols_condition(obj, "Ready"), "True"))
        ready = total;
    fq_buf_printf(out, "%zu/%zu", ready, total ? total : 1);
}

/* Restarts of all containers (kubectl's RESTARTS); status.restartCount
 * for pods written before containerStatuses carried it. */
static void pod_restarts(const struct fq_value *obj, int64_t now,
                         struct fq_buf *out)
{
    (void)now;
    const struct fq_value *st = fq_value_path(obj, FQ_POD_CONTAINER_STATUSES);
    int64_t n = 0;
    for (size_t i = 0; i < fq_value_len(st); i++)
        n += fq_value_path_int(fq_seq_at(st, i), "restartCount", 0);
    if (!st)
        n = fq_value_path_int(obj, "status.restartCount", 0);
    fq_buf_printf(out, "%lld", (long long)n);
}

/* kubectl's STATUS: the phase, or the pod's reason, or the last
 * container's waiting or terminated reason ("ContainerCreating",
 * "Completed", "Error", "OOMKilled"); "Terminating" once deleted. */
static void pod_status(const struct fq_value *obj, int64_t now,
                       struct fq_buf *out)
{
    (void)now;
    const char *reason = fq_value_path_str(obj, "status.reason", NULL);
    if (!reason)
        reason = fq_value_path_str(obj, FQ_POD_PHASE, "Pending");
    const struct fq_value *cs = fq_value_path(obj, FQ_POD_CONTAINER_STATUSES);
    bool running = false;
    for (size_t i = fq_value_len(cs); i-- > 0;) {
        const struct fq_value *c = fq_seq_at(cs, i);
        const char *w = fq_value_path_str(c, FQ_CSTATE_WAITING_REASON, NULL);
        const char *t = fq_value_path_str(c, "state.terminated.reason", NULL);
        if (w && *w)
            reason = w;
        else if (t && *t)
            reason = t;
        else if (fq_value_path(c, FQ_CSTATE_RUNNING) &&
                 fq_value_path_bool(c, "ready", false))
            running = true;
    }
    if (!strcmp(reason, "Completed") && running)
        reason = "Running";
    if (fq_value_path_str(obj, FQ_META_DELETED, NULL))
        reason = "Terminating";
    fq_buf_puts(out, reason);
}

static void node_status(const struct fq_value *obj, int64_t now,
                        struct fq_buf *out)
{
    (void)now;
    const char *r = fq_printcols_condition(obj, "Ready");
    fq_buf_puts(out, !strcmp(r, "True") ? "Ready" : "NotReady");
    if (fq_value_path_bool(obj, FQ_NODE_UNSCHEDULABLE, false))
        fq_buf_puts(out, ",SchedulingDisabled");
}

/* kubectl's ROLES: node-role.kubernetes.io/ROLE labels, or <none>. */
static void node_roles(const struct fq_value *obj, int64_t now,
                       struct fq_buf *out)
{
    (void)now;
    const struct fq_value *l = fq_meta_labels(obj);
    size_t start = out->len;
    for (size_t i = 0; l && l->type == FQ_V_MAP && i < l->u.map.n; i++) {
        const char *k = l->u.map.items[i].key;
        if (strncmp(k, "node-role.kubernetes.io/", 24) != 0 || !k[24])
            continue;
        fq_buf_printf(out, "%s%s", out->len > start ? "," : "", k + 24);
    }
    if (out->len == start)
        fq_buf_puts(out, "<none>");
}

/* The kubelet version a node reports (GKE's, for flexq's nodes). */
static void node_version(const struct fq_value *obj, int64_t now,
                         struct fq_buf *out)
{
    (void)now;
    fq_buf_puts(out, fq_value_path_str(obj, "status.nodeInfo.kubeletVersion",
                                       "v1.32.0-gke.flexq"));
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
    if (!strcmp(fq_printcols_condition(obj, "Complete"), "True"))
        fq_buf_puts(out, "Complete");
    else if (!strcmp(fq_printcols_condition(obj, "Failed"), "True"))
        fq_buf_puts(out, "Failed");
    else if (fq_value_path_bool(obj, FQ_SPEC_SUSPEND, false))
        fq_buf_puts(out, "Suspended");
    else
        fq_buf_puts(out, "Running");
}

/* Kubeflow's State column: the type of the last condition. */
static void kubeflow_state(const struct fq_value *obj, int64_t now,
                           struct fq_buf *out)
{
    (void)now;
    const struct fq_value *cs = fq_value_path(obj, FQ_STATUS_CONDITIONS);
    size_t n = fq_value_len(cs);
    if (n)
        fq_buf_puts(out, fq_value_path_str(fq_seq_at(cs, n - 1), "type", ""));
}

static void job_completions(const struct fq_value *obj, int64_t now,
                            struct fq_buf *out)
{
    (void)now;
    int64_t want = fq_value_path_int(obj, FQ_JOB_COMPLETIONS, 1);
    fq_buf_printf(out, "%lld/%lld",
                  (long long)fq_value_path_int(obj, FQ_JOB_SUCCEEDED, 0),
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
    fq_printcols_duration(b - a, buf, sizeof(buf));
    fq_buf_puts(out, buf);
}

static void job_duration(const struct fq_value *obj, int64_t now,
                         struct fq_buf *out)
{
    duration_between(obj, "status.startTime", "status.completionTime", now,
                     out);
}

void fq_printcols_event_object(const struct fq_value *obj, int64_t now,
                               struct fq_buf *out)
{
    (void)now;
    const char *k = fq_value_path_str(obj, FQ_EVENT_OBJECT_KIND, "");
    enum fq_kind kind = fq_kind_lookup(k);
    const char *name = fq_value_path_str(obj, FQ_EVENT_OBJECT_NAME, "");
    if (kind != FQ_KIND_NONE)
        fq_buf_printf(out, "%s/%s", fq_kind_info(kind)->singular, name);
    else
        fq_buf_printf(out, "%s/%s", k, name);
}

void fq_printcols_event_seen(const struct fq_value *obj, int64_t now,
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
    const char *s = fq_printcols_condition(obj, type);
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
    const struct fq_value *v = fq_value_path(o, FQ_POOL_NODE_COUNT);
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
    const struct fq_value *a = fq_value_path(o, FQ_POOL_AUTOSCALING);
    if (!a || !fq_value_path_bool(a, "enabled", true)) {
        fq_buf_puts(b, "off");
        return;
    }
    fq_buf_printf(b, "%lld-%lld",
                  (long long)fq_value_path_int(a, "minNodeCount", 0),
                  (long long)fq_value_path_int(a, "maxNodeCount", 0));
}

#define END                            \
 {                                     \
  NULL, FQ_COL_PATH, NULL, NULL, false \
 }
#define AGE                                                    \
 {                                                             \
  "AGE", FQ_COL_AGE, "metadata.creationTimestamp", NULL, false \
 }

/* --- Service cells, as kubectl's service printer makes them ------------ */

static void svc_cluster_ip(const struct fq_value *obj, int64_t now,
                           struct fq_buf *out)
{
    (void)now;
    const char *ip = fq_value_path_str(obj, FQ_SVC_CLUSTER_IP, "");
    fq_buf_puts(out, *ip ? ip : "<none>");
}

/* ExternalName: the name; LoadBalancer: the ingress addresses and the
 * external IPs, "<pending>" while there are none; else the external IPs. */
static void svc_external_ip(const struct fq_value *obj, int64_t now,
                            struct fq_buf *out)
{
    (void)now;
    const char *type = fq_value_path_str(obj, "spec.type", "ClusterIP");
    if (!strcmp(type, "ExternalName")) {
        fq_buf_puts(out, fq_value_path_str(obj, "spec.externalName", ""));
        return;
    }
    size_t start = out->len;
    if (!strcmp(type, "LoadBalancer")) {
        const struct fq_value *ing =
            fq_value_path(obj, "status.loadBalancer.ingress");
        for (size_t i = 0; i < fq_value_len(ing); i++) {
            const struct fq_value *e = fq_seq_at(ing, i);
            const char *a = fq_value_path_str(e, "ip", NULL);
            if (!a)
                a = fq_value_path_str(e, "hostname", NULL);
            if (!a)
                continue;
            if (out->len > start)
                fq_buf_puts(out, ",");
            fq_buf_puts(out, a);
        }
    }
    const struct fq_value *ext = fq_value_path(obj, "spec.externalIPs");
    for (size_t i = 0; i < fq_value_len(ext); i++) {
        const char *a = fq_value_as_str(fq_seq_at(ext, i));
        if (!a)
            continue;
        if (out->len > start)
            fq_buf_puts(out, ",");
        fq_buf_puts(out, a);
    }
    if (out->len == start)
        fq_buf_puts(out,
                    !strcmp(type, "LoadBalancer") ? "<pending>" : "<none>");
}

/* "8265/TCP,6379/TCP"; a node port as "80:30080/TCP". */
static void svc_ports(const struct fq_value *obj, int64_t now,
                      struct fq_buf *out)
{
    (void)now;
    const struct fq_value *ports = fq_value_path(obj, "spec.ports");
    for (size_t i = 0; i < fq_value_len(ports); i++) {
        const struct fq_value *p = fq_seq_at(ports, i);
        char b[64];
        long long port = (long long)fq_value_path_int(p, "port", 0);
        long long np = (long long)fq_value_path_int(p, "nodePort", 0);
        const char *proto = fq_value_path_str(p, "protocol", "TCP");
        if (np > 0)
            snprintf(b, sizeof(b), "%s%lld:%lld/%.8s", i ? "," : "", port, np,
                     proto);
        else
            snprintf(b, sizeof(b), "%s%lld/%.8s", i ? "," : "", port, proto);
        fq_buf_puts(out, b);
    }
    if (!fq_value_len(ports))
        fq_buf_puts(out, "<none>");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "k=v,k=v" in key order, as a label selector prints. */
static void svc_selector(const struct fq_value *obj, int64_t now,
                         struct fq_buf *out)
{
    (void)now;
    const struct fq_value *sel = fq_value_path(obj, "spec.selector");
    size_t n = sel && sel->type == FQ_V_MAP ? fq_value_len(sel) : 0;
    if (!n) {
        fq_buf_puts(out, "<none>");
        return;
    }
    const char **keys = fq_xcalloc(n, sizeof(*keys));
    for (size_t i = 0; i < n; i++)
        keys[i] = sel->u.map.items[i].key;
    qsort(keys, n, sizeof(*keys), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fq_buf_puts(out, ",");
        fq_buf_puts(out, keys[i]);
        fq_buf_puts(out, "=");
        const char *v = fq_value_as_str(fq_map_get(sel, keys[i]));
        fq_buf_puts(out, v ? v : "");
    }
    free(keys);
}

static const struct fq_printcol cols_workload[] = {
    {"QUEUE", FQ_COL_PATH, "spec.queueName", NULL, false},
    {"RESERVED IN", FQ_COL_PATH, "status.admission.clusterQueue", NULL, false},
    {"ADMITTED", FQ_COL_COND, "Admitted", NULL, false},
    {"FINISHED", FQ_COL_COND, "Finished", NULL, false},
    {"POSITION IN CQ", FQ_COL_PATH, "flexqCLI.positionInClusterQueue", NULL,
     true},
    {"POSITION IN LQ", FQ_COL_PATH, "flexqCLI.positionInLocalQueue", NULL,
     true},
    AGE,
    END};
static const struct fq_printcol cols_cq[] = {
    {"COHORT", FQ_COL_FN, NULL, cq_cohort, false},
    {"STRATEGY", FQ_COL_PATH, "spec.queueingStrategy", NULL, true},
    {"PENDING WORKLOADS", FQ_COL_FN, NULL, wl_count, false},
    {"ADMITTED WORKLOADS", FQ_COL_FN, NULL, wl_admitted, false},
    END};
static const struct fq_printcol cols_lq[] = {
    {"CLUSTERQUEUE", FQ_COL_PATH, "spec.clusterQueue", NULL, false},
    {"PENDING WORKLOADS", FQ_COL_FN, NULL, wl_count, false},
    {"ADMITTED WORKLOADS", FQ_COL_FN, NULL, wl_admitted, false},
    END};
static const struct fq_printcol cols_rayjob[] = {
    {"JOB STATUS", FQ_COL_PATH, "status.jobStatus", NULL, false},
    {"DEPLOYMENT STATUS", FQ_COL_PATH, "status.jobDeploymentStatus", NULL,
     false},
    {"RAY CLUSTER NAME", FQ_COL_PATH, "status.rayClusterName", NULL, true},
    {"START TIME", FQ_COL_PATH, "status.startTime", NULL, false},
    {"END TIME", FQ_COL_PATH, "status.endTime", NULL, false},
    AGE,
    END};
static const struct fq_printcol cols_raycluster[] = {
    {"DESIRED WORKERS", FQ_COL_PATH, "status.desiredWorkerReplicas", NULL,
     false},
    {"AVAILABLE WORKERS", FQ_COL_PATH, "status.availableWorkerReplicas", NULL,
     false},
    {"STATUS", FQ_COL_PATH, "status.state", NULL, false},
    AGE,
    END};
static const struct fq_printcol cols_job[] = {
    {"STATUS", FQ_COL_FN, NULL, job_status, false},
    {"COMPLETIONS", FQ_COL_FN, NULL, job_completions, false},
    {"DURATION", FQ_COL_FN, NULL, job_duration, false},
    AGE,
    END};
/* The CRDs' additionalPrinterColumns. */
static const struct fq_printcol cols_jobset[] = {
    {"TERMINALSTATE", FQ_COL_PATH, "status.terminalState", NULL, false},
    {"RESTARTS", FQ_COL_PATH, "status.restarts", NULL, false},
    {"COMPLETED", FQ_COL_COND, "Completed", NULL, false},
    {"SUSPENDED", FQ_COL_PATH, "spec.suspend", NULL, false},
    AGE,
    END};
static const struct fq_printcol cols_kubeflow[] = {
    {"STATE", FQ_COL_FN, NULL, kubeflow_state, false}, AGE, END};
static const struct fq_printcol cols_pod[] = {
    {"READY", FQ_COL_FN, NULL, pod_ready, false},
    {"STATUS", FQ_COL_FN, NULL, pod_status, false},
    {"RESTARTS", FQ_COL_FN, NULL, pod_restarts, false},
    AGE,
    {"IP", FQ_COL_PATH, "status.podIP", NULL, true},
    {"NODE", FQ_COL_PATH, "spec.nodeName", NULL, true},
    END};
static const struct fq_printcol cols_node[] = {
    {"STATUS", FQ_COL_FN, NULL, node_status, false},
    {"ROLES", FQ_COL_FN, NULL, node_roles, false},
    AGE,
    {"VERSION", FQ_COL_FN, NULL, node_version, false},
    {"POOL", FQ_COL_PATH, "metadata.labels.cloud\\.google\\.com/gke-nodepool",
     NULL, true},
    END};
static const struct fq_printcol cols_event[] = {
    {"LAST SEEN", FQ_COL_FN, NULL, fq_printcols_event_seen, false},
    {"TYPE", FQ_COL_PATH, "type", NULL, false},
    {"REASON", FQ_COL_PATH, "reason", NULL, false},
    {"OBJECT", FQ_COL_FN, NULL, fq_printcols_event_object, false},
    {"MESSAGE", FQ_COL_PATH, "message", NULL, false},
    END};
static const struct fq_printcol cols_configmap[] = {
    {"DATA", FQ_COL_FN, NULL, data_count, false}, AGE, END};
/* kubectl's Secret columns: NAME TYPE DATA AGE */
static const struct fq_printcol cols_secret[] = {
    {"TYPE", FQ_COL_PATH, "type", NULL, false},
    {"DATA", FQ_COL_FN, NULL, data_count, false},
    AGE,
    END};
static const struct fq_printcol cols_wpc[] = {
    {"VALUE", FQ_COL_PATH, "value", NULL, false}, AGE, END};
static const struct fq_printcol cols_cohort[] = {
    {"PARENT", FQ_COL_PATH, "spec.parentName", NULL, false}, AGE, END};
static const struct fq_printcol cols_ac[] = {
    {"CONTROLLER", FQ_COL_PATH, "spec.controllerName", NULL, true},
    {"ACTIVE", FQ_COL_COND, "Active", NULL, false},
    AGE,
    END};
static const struct fq_printcol cols_prq[] = {
    {"ACCEPTED", FQ_COL_FN, NULL, prq_accepted, false},
    {"PROVISIONED", FQ_COL_FN, NULL, prq_provisioned, false},
    {"FAILED", FQ_COL_FN, NULL, prq_failed, false},
    AGE,
    END};
static const struct fq_printcol cols_pool[] = {
    {"MACHINE TYPE", FQ_COL_FN, NULL, pool_machine, false},
    {"MODE", FQ_COL_FN, NULL, pool_mode, false},
    {"NODES", FQ_COL_FN, NULL, pool_nodes, false},
    {"AUTOSCALING", FQ_COL_FN, NULL, pool_autoscale, true},
    {"TOPOLOGY", FQ_COL_PATH, "spec.tpuTopology", NULL, true},
    AGE,
    END};
static const struct fq_printcol cols_namespace[] = {
    {"STATUS", FQ_COL_PATH, "status.phase", NULL, false}, AGE, END};
static const struct fq_printcol cols_service[] = {
    {"TYPE", FQ_COL_PATH, "spec.type", NULL, false},
    {"CLUSTER-IP", FQ_COL_FN, NULL, svc_cluster_ip, false},
    {"EXTERNAL-IP", FQ_COL_FN, NULL, svc_external_ip, false},
    {"PORT(S)", FQ_COL_FN, NULL, svc_ports, false},
    AGE,
    {"SELECTOR", FQ_COL_FN, NULL, svc_selector, true},
    END};
static const struct fq_printcol cols_default[] = {AGE, END};

const struct fq_printcol *fq_printcols(enum fq_kind k)
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
    case FQ_KIND_JOBSET:
        return cols_jobset;
    case FQ_KIND_PYTORCHJOB:
    case FQ_KIND_MPIJOB:
    case FQ_KIND_TRAINJOB:
        return cols_kubeflow;
    case FQ_KIND_POD:
        return cols_pod;
    case FQ_KIND_NODE:
        return cols_node;
    case FQ_KIND_EVENT:
        return cols_event;
    case FQ_KIND_CONFIGMAP:
        return cols_configmap;
    case FQ_KIND_SECRET:
        return cols_secret;
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
    case FQ_KIND_NAMESPACE:
        return cols_namespace;
    case FQ_KIND_SERVICE:
        return cols_service;
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

void fq_printcol_cell(const struct fq_printcol *c, const struct fq_value *obj,
                      int64_t now, struct fq_buf *out)
{
    switch (c->type) {
    case FQ_COL_PATH:
        scalar(escaped_path(obj, c->arg), out);
        break;
    case FQ_COL_COND:
        fq_buf_puts(out, fq_printcols_condition(obj, c->arg));
        break;
    case FQ_COL_AGE:
        ts_age(obj, c->arg, now, out);
        break;
    case FQ_COL_FN:
        c->fn(obj, now, out);
        break;
    }
}
