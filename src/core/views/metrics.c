/*
 * metrics.c - Prometheus text exposition (format 0.0.4) of the engine's
 * store, with Kueue's names and labels where the meaning is the same
 * (Kueue's pkg/metrics names and labels).
 *
 * Where each metric comes from:
 *
 *   derived from objects at render time (always exact, survive restarts)
 *     kueue_pending_workloads{cluster_queue,status=active|inadmissible}
 *     kueue_reserving_active_workloads{cluster_queue}   CQ status
 *     kueue_admitted_active_workloads{cluster_queue}    CQ status
 *     kueue_cluster_queue_status{cluster_queue,status}  Active condition
 *     kueue_local_queue_pending_workloads{name,namespace,status}
 *     kueue_local_queue_reserving_active_workloads{name,namespace}
 *     kueue_local_queue_admitted_active_workloads{name,namespace}
 *                                                       LQ status, pending
 *                                                       workloads
 *     kueue_cluster_queue_nominal_quota / borrowing_limit / lending_limit
 *         {cluster_queue,cohort,flavor,resource}        CQ spec
 *     kueue_cluster_queue_resource_reservation{...}     CQ status
 *     kueue_cluster_queue_resource_usage{...}           admitted workloads
 *     kueue_cluster_queue_weighted_share{cluster_queue} CQ status.fairSharing
 *     kueue_cohort_weighted_share{cohort}               Cohort status
 *     flexq_nodepool_nodes{nodepool,state=ready|not_ready}  Nodes
 *     flexq_nodepool_cost_usd_total, flexq_nodepool_node_seconds_total,
 *     flexq_nodepool_price_per_node_hour_usd{nodepool}  NodePool status.cost
 *     flexq_cluster_queue_cost_usd_total{cluster_queue} CQ status.cost
 *     flexq_provisioning_requests{state}                ProvisioningRequests
 *     flexq_provider_errors_total{nodepool,reason}      Warning Events on
 *                                                       NodePools (count)
 *
 *   kept in struct fq_metrics from the change stream (reset on restart)
 *     kueue_quota_reserved_workloads_total{cluster_queue}
 *     kueue_admitted_workloads_total{cluster_queue}
 *     kueue_evicted_workloads_total{cluster_queue,reason}
 *     kueue_finished_workloads_total{cluster_queue}
 *     kueue_preempted_workloads_total{preempting_cluster_queue,reason}
 *         (the preemptor's queue read from the Preempted condition's
 *         message, "preemptor path: /cohort/cq", as Kueue writes it)
 *     kueue_quota_reserved_wait_time_seconds{cluster_queue}   histograms
 *     kueue_admission_wait_time_seconds{cluster_queue}
 *     kueue_admission_checks_wait_time_seconds{cluster_queue}  (only
 *         workloads with admission checks)
 *
 *   counted by the kueue controller, read by fq_metrics_observe_attempts
 *     kueue_admission_attempts_total{result=success|inadmissible}
 *     kueue_admission_attempt_duration_seconds{result}   (the wall time
 *         of the engine runs that made them, measured by the shell)
 *
 * How transitions are counted: for each Workload the struct remembers the
 * lastTransitionTime of its QuotaReserved=True, Admitted=True,
 * Evicted=True and Finished=True conditions. A change whose condition is
 * True with another time than remembered is a new transition. Wait times
 * are measured in the objects' own times (the engine's clock), from the
 * workload's creation or its latest requeue (Requeued=True), as Kueue's
 * are; so they are right in the simulator's virtual time too.
 *
 * Buckets, as Kueue's: 1, 2.5, 5, then 10 doubling; 14 buckets (to 2.8 h)
 * for the quota and admission waits, 16 (to 11.4 h) for the admission
 * check wait, which is where a DWS request waits for capacity.
 *
 * "inadmissible" pending workloads are those the scheduler tried and
 * could not fit (QuotaReserved=False with reason Pending or Inadmissible);
 * the others (never tried yet, or requeued) are "active".
 *
 * Invariants: render never modifies the store; output is deterministic
 * (objects in the store's order, series in first-seen order).
 * Not done: Kueue's replica_role label, the per-LocalQueue twins of the
 * counters and histograms, admission_cycle_preemption_skips.
 */
#include "flexq/metrics.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/engine.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "flexq/timefmt.h"
#include "kueue/kueue.h"

#define MAX_BUCKETS 16

static const double wait_bounds[MAX_BUCKETS] = {
    1,   2.5, 5,    10,   20,   40,    80,    160,
    320, 640, 1280, 2560, 5120, 10240, 20480, 40960};

struct counter {
    const char *name; /* static */
    char *labels;     /* owned, already rendered: cluster_queue="x" */
    double v;
};

struct histogram {
    const char *name;
    char *labels;
    const double *bounds; /* static, nb upper bounds */
    int nb;
    uint64_t counts[MAX_BUCKETS]; /* per bucket, not cumulative */
    uint64_t n;
    double sum;
};

/* What we last saw of one Workload. */
struct wlrec {
    char *key; /* "ns/name"; NULL = empty slot */
    uint64_t hash;
    char cq[64];
    char qr[40], adm[40], ev[40], fin[40], pre[40];
};

struct fq_metrics {
    struct counter *ctr;
    size_t nctr, capctr;
    struct histogram *hist;
    size_t nhist, caphist;
    struct wlrec *wl; /* open addressing, linear probing */
    size_t wlcap, wln;
    /* The kueue controller's admission attempts counted so far:
     * [0] success, [1] inadmissible (fq_metrics_observe_attempts). */
    uint64_t att_seen[2];
};

/* Prometheus' default buckets, which Kueue's attempt duration uses. */
static const double attempt_bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                        0.5,   1,    2.5,   5,    10};
#define NATTEMPT_BOUNDS ((int)(sizeof(attempt_bounds) / sizeof(double)))

struct fq_metrics *fq_metrics_new(void)
{
    return fq_xcalloc(1, sizeof(struct fq_metrics));
}

void fq_metrics_free(struct fq_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nctr; i++)
        free(m->ctr[i].labels);
    for (size_t i = 0; i < m->nhist; i++)
        free(m->hist[i].labels);
    for (size_t i = 0; i < m->wlcap; i++)
        free(m->wl[i].key);
    free(m->ctr);
    free(m->hist);
    free(m->wl);
    free(m);
}

/* --- the workload table ---------------------------------------------- */

static uint64_t hash_str(const char *k)
{
    uint64_t h = 1469598103934665603ull;
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211ull;
    return h;
}

static struct wlrec *wl_find(struct fq_metrics *m, const char *key)
{
    if (!m->wlcap)
        return NULL;
    uint64_t h = hash_str(key);
    for (size_t i = h & (m->wlcap - 1);; i = (i + 1) & (m->wlcap - 1)) {
        struct wlrec *r = &m->wl[i];
        if (!r->key)
            return NULL;
        if (r->hash == h && !strcmp(r->key, key))
            return r;
    }
}

static void wl_place(struct fq_metrics *m, struct wlrec *src)
{
    for (size_t i = src->hash & (m->wlcap - 1);; i = (i + 1) & (m->wlcap - 1))
        if (!m->wl[i].key) {
            m->wl[i] = *src;
            return;
        }
}

/* Moves every record into a table of `cap` slots (a power of two). */
static void wl_resize(struct fq_metrics *m, size_t cap)
{
    size_t old = m->wlcap;
    struct wlrec *t = m->wl;
    m->wlcap = cap;
    m->wl = fq_xcalloc(m->wlcap, sizeof(*m->wl));
    for (size_t i = 0; i < old; i++)
        if (t[i].key)
            wl_place(m, &t[i]);
    free(t);
}

static struct wlrec *wl_get(struct fq_metrics *m, const char *key)
{
    struct wlrec *r = wl_find(m, key);
    if (r)
        return r;
    if ((m->wln + 1) * 2 > m->wlcap)
        wl_resize(m, m->wlcap ? m->wlcap * 2 : 64);
    struct wlrec n = {0};
    n.key = fq_xstrdup(key);
    n.hash = hash_str(key);
    wl_place(m, &n);
    m->wln++;
    return wl_find(m, key);
}

/* Removes by backward shift, so probes never cross a hole. */
static void wl_del(struct fq_metrics *m, const char *key)
{
    struct wlrec *r = wl_find(m, key);
    if (!r)
        return;
    size_t i = (size_t)(r - m->wl), mask = m->wlcap - 1;
    free(r->key);
    memset(r, 0, sizeof(*r));
    m->wln--;
    for (size_t j = (i + 1) & mask; m->wl[j].key; j = (j + 1) & mask) {
        size_t home = m->wl[j].hash & mask;
        /* move j into the hole at i unless its home lies in (i, j] */
        bool stay = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stay)
            continue;
        m->wl[i] = m->wl[j];
        memset(&m->wl[j], 0, sizeof(m->wl[j]));
        i = j;
    }
    /* A table an eighth full shrinks to a quarter (then half full): after
     * 20,000 Workloads came and went it held 16 MB of empty slots. */
    if (m->wlcap > 64 && m->wln * 8 < m->wlcap)
        wl_resize(m, m->wlcap / 4 < 64 ? 64 : m->wlcap / 4);
}

/* --- series ------------------------------------------------------------ */

/* Appends `v` to `b` escaped as a label value. */
static void put_label(struct fq_buf *b, const char *k, const char *v, bool more)
{
    fq_buf_printf(b, "%s=\"", k);
    for (const char *p = v ? v : ""; *p; p++) {
        if (*p == '\\' || *p == '"')
            fq_buf_putc(b, '\\');
        if (*p == '\n') {
            fq_buf_puts(b, "\\n");
            continue;
        }
        fq_buf_putc(b, *p);
    }
    fq_buf_putc(b, '"');
    if (more)
        fq_buf_putc(b, ',');
}

static char *labels1(const char *k, const char *v)
{
    struct fq_buf b = FQ_BUF_INIT;
    put_label(&b, k, v, false);
    return fq_buf_detach(&b);
}

static char *labels2(const char *k1, const char *v1, const char *k2,
                     const char *v2)
{
    struct fq_buf b = FQ_BUF_INIT;
    put_label(&b, k1, v1, true);
    put_label(&b, k2, v2, false);
    return fq_buf_detach(&b);
}

/* Adds to counter name{labels}; takes `labels`. */
static void count(struct fq_metrics *m, const char *name, char *labels)
{
    for (size_t i = 0; i < m->nctr; i++)
        if (m->ctr[i].name == name && !strcmp(m->ctr[i].labels, labels)) {
            m->ctr[i].v += 1;
            free(labels);
            return;
        }
    FQ_GROW(m->ctr, m->capctr, m->nctr + 1);
    m->ctr[m->nctr++] = (struct counter){name, labels, 1};
}

/* Observes secs in histogram name{labels} with `nb` bucket bounds; takes
 * `labels`. */
static void observe_in(struct fq_metrics *m, const char *name,
                       const double *bounds, int nb, char *labels, double secs)
{
    if (secs < 0)
        secs = 0;
    struct histogram *h = NULL;
    for (size_t i = 0; i < m->nhist && !h; i++)
        if (m->hist[i].name == name && !strcmp(m->hist[i].labels, labels))
            h = &m->hist[i];
    if (h) {
        free(labels);
    } else {
        FQ_GROW(m->hist, m->caphist, m->nhist + 1);
        h = &m->hist[m->nhist++];
        memset(h, 0, sizeof(*h));
        h->name = name;
        h->labels = labels;
        h->bounds = bounds;
        h->nb = nb;
    }
    int b = 0;
    while (b < h->nb && secs > h->bounds[b])
        b++;
    if (b < h->nb)
        h->counts[b]++;
    h->n++;
    h->sum += secs;
}

static void observe_hist(struct fq_metrics *m, const char *name, int nb,
                         const char *cq, double secs)
{
    observe_in(m, name, wait_bounds, nb, labels1("cluster_queue", cq), secs);
}

/* Metric names, compared by pointer in the tables above. */
static const char M_RESERVED[] = "kueue_quota_reserved_workloads_total";
static const char M_ADMITTED[] = "kueue_admitted_workloads_total";
static const char M_EVICTED[] = "kueue_evicted_workloads_total";
static const char M_FINISHED[] = "kueue_finished_workloads_total";
static const char M_PREEMPTED[] = "kueue_preempted_workloads_total";
static const char M_ATTEMPTS[] = "kueue_admission_attempts_total";
static const char H_ATTEMPT[] = "kueue_admission_attempt_duration_seconds";
static const char H_RESERVED[] = "kueue_quota_reserved_wait_time_seconds";
static const char H_ADMITTED[] = "kueue_admission_wait_time_seconds";
static const char H_CHECKS[] = "kueue_admission_checks_wait_time_seconds";

/* --- reading objects --------------------------------------------------- */

/* lastTransitionTime of a True condition, or "" */
static const char *true_at(const struct fq_value *obj, const char *type)
{
    const struct fq_value *c = fq_cond_find(obj, type);
    if (!c || strcmp(fq_value_path_str(c, "status", ""), "True"))
        return "";
    return fq_value_path_str(c, "lastTransitionTime", "");
}

static int64_t ms_of(const char *ts)
{
    int64_t ms = 0;
    if (!ts || !*ts || fq_time_parse(ts, &ms) < 0)
        return 0;
    return ms;
}

/* Where the wait being measured began: creation, or the latest requeue
 * before `until`. */
static int64_t wait_start(const struct fq_value *wl, int64_t until)
{
    int64_t t = ms_of(fq_value_path_str(wl, FQ_META_CREATED, NULL));
    int64_t rq = ms_of(true_at(wl, "Requeued"));
    if (rq > t && rq <= until)
        t = rq;
    return t;
}

static void remember(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src);
}

/* The preempting ClusterQueue, from the Preempted condition's message as
 * Kueue writes it ("...; preemptor path: /cohort/cq; preemptee path:
 * ..."): the path's last part, or "" when the message has none. */
static void preemptor_of(const char *msg, char *out, size_t n)
{
    out[0] = '\0';
    const char *p = strstr(msg, "preemptor path: ");
    if (!p)
        return;
    p += strlen("preemptor path: ");
    size_t len = strcspn(p, ";");
    const char *last = p;
    for (size_t i = 0; i < len; i++)
        if (p[i] == '/')
            last = p + i + 1;
    size_t l = len - (size_t)(last - p);
    if (l >= n)
        l = n - 1;
    memcpy(out, last, l);
    out[l] = '\0';
}

static void track(struct fq_metrics *m, const struct fq_value *wl,
                  bool counting)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", fq_meta_namespace(wl),
             fq_meta_name(wl));
    struct wlrec *r = wl_get(m, key);
    const char *cq = fq_value_path_str(wl, FQ_WL_ADMITTED_CQ, "");
    if (*cq)
        remember(r->cq, sizeof(r->cq), cq);
    const char *qr = true_at(wl, "QuotaReserved");
    const char *adm = true_at(wl, "Admitted");
    const char *ev = true_at(wl, "Evicted");
    const char *fin = true_at(wl, "Finished");
    if (counting && *qr && strcmp(qr, r->qr)) {
        count(m, M_RESERVED, labels1("cluster_queue", r->cq));
        int64_t at = ms_of(qr);
        observe_hist(m, H_RESERVED, 14, r->cq,
                     (double)(at - wait_start(wl, at)) / 1000.0);
    }
    if (counting && *adm && strcmp(adm, r->adm)) {
        count(m, M_ADMITTED, labels1("cluster_queue", r->cq));
        int64_t at = ms_of(adm);
        observe_hist(m, H_ADMITTED, 14, r->cq,
                     (double)(at - wait_start(wl, at)) / 1000.0);
        /* as Kueue: only workloads that waited on admission checks */
        if (*qr && fq_value_len(fq_value_path(wl, FQ_WL_ADMISSION_CHECKS)))
            observe_hist(m, H_CHECKS, 16, r->cq,
                         (double)(at - ms_of(qr)) / 1000.0);
    }
    if (counting && *ev && strcmp(ev, r->ev)) {
        const struct fq_value *c = fq_cond_find(wl, "Evicted");
        count(m, M_EVICTED,
              labels2("cluster_queue", r->cq, "reason",
                      fq_value_path_str(c, "reason", "")));
    }
    if (counting && *fin && strcmp(fin, r->fin))
        count(m, M_FINISHED, labels1("cluster_queue", r->cq));
    const char *pre = true_at(wl, "Preempted");
    if (counting && *pre && strcmp(pre, r->pre)) {
        const struct fq_value *c = fq_cond_find(wl, "Preempted");
        char by[256];
        preemptor_of(fq_value_path_str(c, "message", ""), by, sizeof(by));
        count(m, M_PREEMPTED,
              labels2("preempting_cluster_queue", by, "reason",
                      fq_value_path_str(c, "reason", "")));
    }
    remember(r->pre, sizeof(r->pre), pre);
    remember(r->qr, sizeof(r->qr), qr);
    remember(r->adm, sizeof(r->adm), adm);
    remember(r->ev, sizeof(r->ev), ev);
    remember(r->fin, sizeof(r->fin), fin);
}

void fq_metrics_seed(struct fq_metrics *m, const struct fq_objstore *s)
{
    const struct fq_object **ws = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &ws);
    for (size_t i = 0; i < n; i++)
        track(m, ws[i]->obj, false);
    free(ws);
}

void fq_metrics_observe(struct fq_metrics *m, const struct fq_change *c)
{
    if (c->kind != FQ_KIND_WORKLOAD)
        return;
    if (c->type == FQ_CHANGE_DELETED || !c->obj) {
        char key[512];
        snprintf(key, sizeof(key), "%s/%s", c->ns ? c->ns : "",
                 c->name ? c->name : "");
        wl_del(m, key);
        return;
    }
    track(m, c->obj, true);
}

void fq_metrics_observe_attempts(struct fq_metrics *m, struct fq_engine *e,
                                 double run_seconds)
{
    const void *kq = fq_engine_controller(e, "kueue");
    if (!kq)
        return;
    struct fq_kueue_stats st;
    fq_kueue_get_stats(kq, &st);
    uint64_t now[2] = {st.attempts_success, st.attempts_inadmissible};
    uint64_t fresh = 0;
    for (int i = 0; i < 2; i++)
        if (now[i] > m->att_seen[i])
            fresh += now[i] - m->att_seen[i];
    for (int i = 0; i < 2; i++) {
        const char *result = i == 0 ? "success" : "inadmissible";
        for (; m->att_seen[i] < now[i]; m->att_seen[i]++) {
            count(m, M_ATTEMPTS, labels1("result", result));
            observe_in(m, H_ATTEMPT, attempt_bounds, NATTEMPT_BOUNDS,
                       labels1("result", result), run_seconds / (double)fresh);
        }
    }
}

/* --- rendering ------------------------------------------------------- */

static void family(struct fq_buf *b, const char *name, const char *type,
                   const char *help)
{
    fq_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample(struct fq_buf *b, const char *name, const char *labels,
                   double v)
{
    fq_buf_puts(b, name);
    if (labels && *labels)
        fq_buf_printf(b, "{%s}", labels);
    fq_buf_printf(b, " %.17g\n", v);
}

/* A quantity (number or string such as "64Gi", "2500m") in base units. */
static double qty(const struct fq_value *v, const char *resource)
{
    if (!v)
        return 0;
    if (v->type == FQ_V_NUM)
        return v->u.num.d;
    const char *s = fq_value_as_str(v);
    if (!s)
        return 0;
    enum fq_qscale sc = fq_quantity_scale_for(resource);
    int64_t q = 0;
    if (fq_quantity_parse(s, sc, &q, NULL, NULL) < 0)
        return 0;
    return sc == FQ_Q_MILLI ? (double)q / 1000.0 : (double)q;
}

static double num(const struct fq_value *v)
{
    if (!v)
        return 0;
    if (v->type == FQ_V_NUM)
        return v->u.num.d;
    const char *s = fq_value_as_str(v);
    return s ? strtod(s, NULL) : 0;
}

static const char *cohort_of(const struct fq_value *cq)
{
    const char *c = fq_value_path_str(cq, FQ_CQ_COHORT, NULL);
    return c ? c : fq_value_path_str(cq, FQ_CQ_COHORT_NAME, "");
}

static void render_counters(const struct fq_metrics *m, struct fq_buf *b,
                            const char *name, const char *help)
{
    family(b, name, "counter", help);
    for (size_t i = 0; i < m->nctr; i++)
        if (m->ctr[i].name == name)
            sample(b, name, m->ctr[i].labels, m->ctr[i].v);
}

static void render_hists(const struct fq_metrics *m, struct fq_buf *b,
                         const char *name, const char *help)
{
    family(b, name, "histogram", help);
    for (size_t i = 0; i < m->nhist; i++) {
        const struct histogram *h = &m->hist[i];
        if (h->name != name)
            continue;
        uint64_t cum = 0;
        for (int k = 0; k < h->nb; k++) {
            cum += h->counts[k];
            fq_buf_printf(b, "%s_bucket{%s,le=\"%g\"} %llu\n", name, h->labels,
                          h->bounds[k], (unsigned long long)cum);
        }
        fq_buf_printf(b, "%s_bucket{%s,le=\"+Inf\"} %llu\n", name, h->labels,
                      (unsigned long long)h->n);
        fq_buf_printf(b, "%s_sum{%s} %.17g\n", name, h->labels, h->sum);
        fq_buf_printf(b, "%s_count{%s} %llu\n", name, h->labels,
                      (unsigned long long)h->n);
    }
}

/* The ClusterQueue a workload queues in (through its LocalQueue), or "". */
static const char *cq_of(const struct fq_objstore *s, const struct fq_value *wl)
{
    const char *adm = fq_value_path_str(wl, FQ_WL_ADMITTED_CQ, NULL);
    if (adm)
        return adm;
    const char *q = fq_value_path_str(wl, FQ_WL_QUEUE_NAME, NULL);
    if (!q)
        return "";
    const struct fq_object *lq =
        fq_objstore_get(s, FQ_KIND_LOCALQUEUE, fq_meta_namespace(wl), q);
    return lq ? fq_value_path_str(lq->obj, FQ_LQ_CLUSTER_QUEUE, "") : "";
}

static bool is_pending(const struct fq_value *wl)
{
    return !fq_cond_true(wl, "QuotaReserved") &&
           !fq_cond_true(wl, "Finished") &&
           fq_value_path_bool(wl, FQ_WL_ACTIVE, true);
}

static bool is_inadmissible(const struct fq_value *wl)
{
    const struct fq_value *c = fq_cond_find(wl, "QuotaReserved");
    if (!c || strcmp(fq_value_path_str(c, "status", ""), "False"))
        return false;
    const char *r = fq_value_path_str(c, "reason", "");
    return !strcmp(r, "Pending") || !strcmp(r, "Inadmissible");
}

static void render_pending(const struct fq_objstore *s, struct fq_buf *b,
                           const struct fq_object **cqs, size_t ncq)
{
    const struct fq_object **ws = NULL;
    size_t nw = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &ws);
    family(b, "kueue_pending_workloads", "gauge",
           "The number of pending workloads, per cluster_queue and status");
    for (size_t i = 0; i < ncq; i++) {
        int active = 0, inadm = 0;
        for (size_t j = 0; j < nw; j++) {
            const struct fq_value *w = ws[j]->obj;
            if (!is_pending(w) || strcmp(cq_of(s, w), cqs[i]->name))
                continue;
            if (is_inadmissible(w))
                inadm++;
            else
                active++;
        }
        char *l = labels2("cluster_queue", cqs[i]->name, "status", "active");
        sample(b, "kueue_pending_workloads", l, active);
        free(l);
        l = labels2("cluster_queue", cqs[i]->name, "status", "inadmissible");
        sample(b, "kueue_pending_workloads", l, inadm);
        free(l);
    }
    free(ws);
}

static void render_cq_counts(struct fq_buf *b, const struct fq_object **cqs,
                             size_t ncq)
{
    static const struct {
        const char *name, *field, *help;
    } g[] = {
        {"kueue_reserving_active_workloads", "status.reservingWorkloads",
         "The number of workloads holding quota, per cluster_queue"},
        {"kueue_admitted_active_workloads", "status.admittedWorkloads",
         "The number of admitted workloads that are active, per "
         "cluster_queue"},
    };

    for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
        family(b, g[k].name, "gauge", g[k].help);
        for (size_t i = 0; i < ncq; i++) {
            char *l = labels1("cluster_queue", cqs[i]->name);
            sample(b, g[k].name, l,
                   (double)fq_value_path_int(cqs[i]->obj, g[k].field, 0));
            free(l);
        }
    }
    family(b, "kueue_cluster_queue_status", "gauge",
           "1 for the status the cluster_queue is in (pending, active, "
           "terminated)");
    static const char *const sts[] = {"pending", "active", "terminated"};
    for (size_t i = 0; i < ncq; i++) {
        const struct fq_value *o = cqs[i]->obj;
        int now = fq_value_path(o, FQ_META_DELETED) ? 2 :
                  fq_cond_true(o, "Active")         ? 1 :
                                                      0;
        for (int k = 0; k < 3; k++) {
            char *l = labels2("cluster_queue", cqs[i]->name, "status", sts[k]);
            sample(b, "kueue_cluster_queue_status", l, k == now);
            free(l);
        }
    }
}

/* Kueue's LocalQueue twins of the pending and active gauges: pending
 * from the workloads submitted to each LocalQueue (active or
 * inadmissible, as for ClusterQueues), reserving and admitted from the
 * LocalQueue's status as the kueue controller writes it. */
static void render_lq(const struct fq_objstore *s, struct fq_buf *b)
{
    const struct fq_object **lqs = NULL, **ws = NULL;
    size_t nlq = fq_objstore_list(s, FQ_KIND_LOCALQUEUE, NULL, &lqs);
    size_t nw = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &ws);
    family(b, "kueue_local_queue_pending_workloads", "gauge",
           "The number of pending workloads, per local_queue and status");
    for (size_t i = 0; i < nlq; i++) {
        int active = 0, inadm = 0;
        for (size_t j = 0; j < nw; j++) {
            const struct fq_value *w = ws[j]->obj;
            if (!is_pending(w) || strcmp(ws[j]->ns, lqs[i]->ns) ||
                strcmp(fq_value_path_str(w, FQ_WL_QUEUE_NAME, ""),
                       lqs[i]->name))
                continue;
            if (is_inadmissible(w))
                inadm++;
            else
                active++;
        }
        for (int k = 0; k < 2; k++) {
            struct fq_buf l = FQ_BUF_INIT;
            put_label(&l, "name", lqs[i]->name, true);
            put_label(&l, "namespace", lqs[i]->ns, true);
            put_label(&l, "status", k ? "inadmissible" : "active", false);
            sample(b, "kueue_local_queue_pending_workloads", fq_buf_str(&l),
                   k ? inadm : active);
            fq_buf_release(&l);
        }
    }

    static const struct {
        const char *name, *field, *help;
    } g[] = {
        {"kueue_local_queue_reserving_active_workloads",
         "status.reservingWorkloads",
         "The number of workloads holding quota, per local_queue"},
        {"kueue_local_queue_admitted_active_workloads",
         "status.admittedWorkloads",
         "The number of admitted workloads that are active, per "
         "local_queue"},
    };

    for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
        family(b, g[k].name, "gauge", g[k].help);
        for (size_t i = 0; i < nlq; i++) {
            char *l = labels2("name", lqs[i]->name, "namespace", lqs[i]->ns);
            sample(b, g[k].name, l,
                   (double)fq_value_path_int(lqs[i]->obj, g[k].field, 0));
            free(l);
        }
    }
    free(ws);
    free(lqs);
}

static char *cell_labels(const char *cq, const char *cohort, const char *flv,
                         const char *res)
{
    struct fq_buf b = FQ_BUF_INIT;
    put_label(&b, "cluster_queue", cq, true);
    put_label(&b, "cohort", cohort, true);
    put_label(&b, "flavor", flv, true);
    put_label(&b, "resource", res, false);
    return fq_buf_detach(&b);
}

/* Sum of `res` on flavor `flv` over the admitted, unfinished workloads of
 * ClusterQueue `cq`. */
static double usage_of(const struct fq_value *const *ws, size_t nw,
                       const char *cq, const char *flv, const char *res)
{
    double sum = 0;
    for (size_t j = 0; j < nw; j++) {
        const struct fq_value *w = ws[j];
        if (!fq_cond_true(w, "Admitted") || fq_cond_true(w, "Finished") ||
            strcmp(fq_value_path_str(w, FQ_WL_ADMITTED_CQ, ""), cq))
            continue;
        const struct fq_value *psa = fq_value_path(w, FQ_WL_PODSET_ASSIGNMENTS);
        for (size_t p = 0; p < fq_value_len(psa); p++) {
            const struct fq_value *a = fq_seq_at(psa, p);
            const char *f =
                fq_value_as_str(fq_map_get(fq_map_get(a, "flavors"), res));
            if (f && !strcmp(f, flv))
                sum +=
                    qty(fq_map_get(fq_map_get(a, "resourceUsage"), res), res);
        }
    }
    return sum;
}

/* Reservation from the CQ's status.flavorsReservation. */
static double reservation_of(const struct fq_value *cq, const char *flv,
                             const char *res)
{
    const struct fq_value *fr = fq_value_path(cq, FQ_WL_FLAVORS_RESERVATION);
    for (size_t i = 0; i < fq_value_len(fr); i++) {
        const struct fq_value *f = fq_seq_at(fr, i);
        if (strcmp(fq_value_path_str(f, "name", ""), flv))
            continue;
        const struct fq_value *rs = fq_map_get(f, "resources");
        for (size_t k = 0; k < fq_value_len(rs); k++) {
            const struct fq_value *r = fq_seq_at(rs, k);
            if (!strcmp(fq_value_path_str(r, "name", ""), res))
                return qty(fq_map_get(r, "total"), res);
        }
    }
    return 0;
}

enum cell_what {
    NOMINAL,
    BORROWING,
    LENDING,
    RESERVATION,
    USAGE
};

static void render_cells(const struct fq_objstore *s, struct fq_buf *b,
                         const struct fq_object **cqs, size_t ncq)
{
    static const struct {
        const char *name, *help;
        enum cell_what what;
    } fam[] = {
        {"kueue_cluster_queue_nominal_quota",
         "The nominal quota, per cluster_queue, flavor and resource", NOMINAL},
        {"kueue_cluster_queue_borrowing_limit",
         "The borrowing limit, per cluster_queue, flavor and resource",
         BORROWING},
        {"kueue_cluster_queue_lending_limit",
         "The lending limit, per cluster_queue, flavor and resource", LENDING},
        {"kueue_cluster_queue_resource_reservation",
         "Quota reserved by workloads, per cluster_queue, flavor and "
         "resource",
         RESERVATION},
        {"kueue_cluster_queue_resource_usage",
         "Quota used by admitted workloads, per cluster_queue, flavor and "
         "resource",
         USAGE},
    };
    const struct fq_object **wo = NULL;
    size_t nw = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &wo);
    const struct fq_value **ws = fq_xcalloc(nw + 1, sizeof(*ws));
    for (size_t j = 0; j < nw; j++)
        ws[j] = wo[j]->obj;
    free(wo);
    for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
        family(b, fam[k].name, "gauge", fam[k].help);
        for (size_t i = 0; i < ncq; i++) {
            const struct fq_value *cq = cqs[i]->obj;
            const struct fq_value *rgs =
                fq_value_path(cq, FQ_CQ_RESOURCE_GROUPS);
            for (size_t g = 0; g < fq_value_len(rgs); g++) {
                const struct fq_value *fl =
                    fq_map_get(fq_seq_at(rgs, g), "flavors");
                for (size_t f = 0; f < fq_value_len(fl); f++) {
                    const struct fq_value *fv = fq_seq_at(fl, f);
                    const char *flv = fq_value_path_str(fv, "name", "");
                    const struct fq_value *rs = fq_map_get(fv, "resources");
                    for (size_t r = 0; r < fq_value_len(rs); r++) {
                        const struct fq_value *rv = fq_seq_at(rs, r);
                        const char *res = fq_value_path_str(rv, "name", "");
                        const struct fq_value *lim = NULL;
                        double v = 0;
                        switch (fam[k].what) {
                        case NOMINAL:
                            v = qty(fq_map_get(rv, "nominalQuota"), res);
                            break;
                        case BORROWING:
                        case LENDING:
                            lim = fq_map_get(rv, fam[k].what == BORROWING ?
                                                     "borrowingLimit" :
                                                     "lendingLimit");
                            if (!lim)
                                continue; /* no limit: no series */
                            v = qty(lim, res);
                            break;
                        case RESERVATION:
                            v = reservation_of(cq, flv, res);
                            break;
                        case USAGE:
                            v = usage_of(ws, nw, cqs[i]->name, flv, res);
                            break;
                        }
                        char *l =
                            cell_labels(cqs[i]->name, cohort_of(cq), flv, res);
                        sample(b, fam[k].name, l, v);
                        free(l);
                    }
                }
            }
        }
    }
    free(ws);
}

static void render_pools(const struct fq_objstore *s, struct fq_buf *b)
{
    const struct fq_object **ps = NULL, **ns = NULL;
    size_t np = fq_objstore_list(s, FQ_KIND_NODEPOOL, NULL, &ps);
    size_t nn = fq_objstore_list(s, FQ_KIND_NODE, NULL, &ns);
    family(b, "flexq_nodepool_nodes", "gauge",
           "Nodes per node pool and state (ready, not_ready)");
    for (size_t i = 0; i < np; i++) {
        int ready = 0, not_ready = 0;
        for (size_t j = 0; j < nn; j++) {
            const char *pool = fq_value_as_str(fq_map_get(
                fq_meta_labels(ns[j]->obj), "cloud.google.com/gke-nodepool"));
            if (!pool || strcmp(pool, ps[i]->name))
                continue;
            if (fq_cond_true(ns[j]->obj, "Ready"))
                ready++;
            else
                not_ready++;
        }
        char *l = labels2("nodepool", ps[i]->name, "state", "ready");
        sample(b, "flexq_nodepool_nodes", l, ready);
        free(l);
        l = labels2("nodepool", ps[i]->name, "state", "not_ready");
        sample(b, "flexq_nodepool_nodes", l, not_ready);
        free(l);
    }

    static const struct {
        const char *name, *type, *field, *help;
    } cost[] = {
        {"flexq_nodepool_cost_usd_total", "counter", "status.cost.usd",
         "What the pool's nodes have cost so far, in US dollars"},
        {"flexq_nodepool_node_seconds_total", "counter",
         "status.cost.nodeSeconds", "Node-seconds the pool has run"},
        {"flexq_nodepool_price_per_node_hour_usd", "gauge",
         "status.cost.pricePerNodeHour", "The price of one node-hour"},
    };

    for (size_t k = 0; k < sizeof(cost) / sizeof(cost[0]); k++) {
        family(b, cost[k].name, cost[k].type, cost[k].help);
        for (size_t i = 0; i < np; i++) {
            char *l = labels1("nodepool", ps[i]->name);
            sample(b, cost[k].name, l,
                   num(fq_value_path(ps[i]->obj, cost[k].field)));
            free(l);
        }
    }
    free(ps);
    free(ns);
}

static void render_provreqs(const struct fq_objstore *s, struct fq_buf *b)
{
    /* A request's state is its furthest True condition. */
    static const char *const states[] = {"Pending",        "Accepted",
                                         "Provisioned",    "Failed",
                                         "BookingExpired", "CapacityRevoked"};
    int counts[6] = {0};
    const struct fq_object **rs = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_PROVISIONINGREQUEST, NULL, &rs);
    for (size_t i = 0; i < n; i++) {
        int st = 0;
        for (int k = 5; k >= 1 && !st; k--)
            if (fq_cond_true(rs[i]->obj, states[k]))
                st = k;
        counts[st]++;
    }
    free(rs);
    family(b, "flexq_provisioning_requests", "gauge",
           "ProvisioningRequests by state (their furthest True condition)");
    for (int k = 0; k < 6; k++) {
        char *l = labels1("state", states[k]);
        sample(b, "flexq_provisioning_requests", l, counts[k]);
        free(l);
    }
}

static void render_cq_cost(struct fq_buf *b, const struct fq_object **cqs,
                           size_t ncq)
{
    family(b, "flexq_cluster_queue_cost_usd_total", "counter",
           "What the cluster_queue's workloads have cost, in US dollars");
    for (size_t i = 0; i < ncq; i++) {
        char *l = labels1("cluster_queue", cqs[i]->name);
        sample(b, "flexq_cluster_queue_cost_usd_total", l,
               num(fq_value_path(cqs[i]->obj, FQ_STATUS_COST_USD)));
        free(l);
    }
}

/* Warning events about node pools (stockouts, failed scale-ups) by pool
 * and reason; an Event's count says how often it repeated. */
static void render_provider_errors(const struct fq_objstore *s,
                                   struct fq_buf *b)
{
    const struct fq_object **es = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_EVENT, NULL, &es);
    struct counter *agg = NULL;
    size_t na = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *e = es[i]->obj;
        if (strcmp(fq_value_path_str(e, "type", ""), "Warning") ||
            strcmp(fq_value_path_str(e, FQ_EVENT_OBJECT_KIND, ""), "NodePool"))
            continue;
        char *l =
            labels2("nodepool", fq_value_path_str(e, FQ_EVENT_OBJECT_NAME, ""),
                    "reason", fq_value_path_str(e, "reason", ""));
        double c = (double)fq_value_path_int(e, "count", 1);
        size_t k = 0;
        while (k < na && strcmp(agg[k].labels, l))
            k++;
        if (k < na) {
            agg[k].v += c;
            free(l);
        } else {
            FQ_GROW(agg, cap, na + 1);
            agg[na++] = (struct counter){NULL, l, c};
        }
    }
    free(es);
    family(b, "flexq_provider_errors_total", "counter",
           "Failed scale-ups and stockouts reported for node pools");
    for (size_t k = 0; k < na; k++) {
        sample(b, "flexq_provider_errors_total", agg[k].labels, agg[k].v);
        free(agg[k].labels);
    }
    free(agg);
}

/* Kueue's fair-sharing gauges, from status.fairSharing.weightedShare of
 * the ClusterQueues and Cohorts that show one (fair sharing on). */
static void render_shares(const struct fq_objstore *s, struct fq_buf *b,
                          const struct fq_object **cqs, size_t ncq)
{
    family(b, "kueue_cluster_queue_weighted_share", "gauge",
           "The cluster_queue's dominant resource share over what its "
           "cohort can lend, divided by its fair-sharing weight");
    for (size_t i = 0; i < ncq; i++) {
        const struct fq_value *v =
            fq_value_path(cqs[i]->obj, FQ_FAIR_WEIGHTED_SHARE);
        if (!v)
            continue;
        char *l = labels1("cluster_queue", cqs[i]->name);
        sample(b, "kueue_cluster_queue_weighted_share", l, num(v));
        free(l);
    }
    const struct fq_object **cos = NULL;
    size_t nco = fq_objstore_list(s, FQ_KIND_COHORT, NULL, &cos);
    family(b, "kueue_cohort_weighted_share", "gauge",
           "The cohort's dominant resource share over what its parent can "
           "lend, divided by its fair-sharing weight");
    for (size_t i = 0; i < nco; i++) {
        const struct fq_value *v =
            fq_value_path(cos[i]->obj, FQ_FAIR_WEIGHTED_SHARE);
        if (!v)
            continue;
        char *l = labels1("cohort", cos[i]->name);
        sample(b, "kueue_cohort_weighted_share", l, num(v));
        free(l);
    }
    free(cos);
}

void fq_metrics_render(const struct fq_metrics *m, const struct fq_objstore *s,
                       struct fq_buf *out)
{
    const struct fq_object **cqs = NULL;
    size_t ncq = fq_objstore_list(s, FQ_KIND_CLUSTERQUEUE, NULL, &cqs);
    render_pending(s, out, cqs, ncq);
    render_cq_counts(out, cqs, ncq);
    render_lq(s, out);
    render_counters(m, out, M_RESERVED,
                    "The number of quota reservations, per cluster_queue");
    render_counters(m, out, M_ADMITTED,
                    "The number of admissions, per cluster_queue");
    render_counters(m, out, M_EVICTED,
                    "The number of evictions, per cluster_queue and reason");
    render_counters(m, out, M_FINISHED,
                    "The number of finished workloads, per cluster_queue");
    render_counters(m, out, M_PREEMPTED,
                    "The number of preempted workloads, per "
                    "preempting_cluster_queue and reason");
    render_counters(m, out, M_ATTEMPTS,
                    "The number of scheduling cycles that tried workloads: "
                    "success (one was admitted) or inadmissible");
    render_hists(m, out, H_RESERVED,
                 "Time from creation or requeue to quota reservation");
    render_hists(m, out, H_ADMITTED,
                 "Time from creation or requeue to admission");
    render_hists(m, out, H_CHECKS,
                 "Time from quota reservation to admission (admission "
                 "checks, e.g. waiting for a ProvisioningRequest)");
    render_hists(m, out, H_ATTEMPT,
                 "The latency of an admission attempt, by result");
    render_cells(s, out, cqs, ncq);
    render_shares(s, out, cqs, ncq);
    render_cq_cost(out, cqs, ncq);
    render_pools(s, out);
    render_provreqs(s, out);
    render_provider_errors(s, out);
    free(cqs);
}
