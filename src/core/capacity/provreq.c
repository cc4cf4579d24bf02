/*
 * provreq.c - the ProvisioningRequest lifecycle, as the cluster autoscaler
 * and GKE's Dynamic Workload Scheduler run it (dws_rayjob.md section 1).
 *
 * Classes:
 *   queued-provisioning.gke.io                DWS: queue until the cloud has
 *                                             the capacity, then all nodes
 *                                             of the request at once, in a
 *                                             queued pool; max wait, max run
 *   best-effort-atomic-scale-up.autoscaling.x-k8s.io
 *                                             one atomic scale-up of an
 *                                             ordinary pool, Provisioned
 *                                             without waiting for boot
 *   check-capacity.autoscaling.x-k8s.io       only checks that the nodes
 *                                             there now can hold the pods
 * Other classes are left alone, as the autoscaler ignores them.
 *
 * The lifecycle (one function per transition):
 *
 *   (no conditions)
 *        | accept(): Accepted=True "Accepted", Provisioned=False with an
 *        v           ETA (queued) or CapacityIsNotFound (others)
 *   Accepted ---- max wait after creation ----> Failed=True "Expired"
 *        |   \--- check-capacity + noRetry ---> Failed=True
 *        |                                        "CapacityIsNotFound"
 *        | queued: ETA passed, flex stock and pool room -> create the
 *        |         request's slices, booting (grant())
 *        | best-effort: atomic scale-up succeeded (grant())
 *        | check-capacity: free room on nodes found
 *        v
 *   (queued: nodes boot) -- all Ready --> Provisioned=True
 *        "CapacityIsProvisioned" / "CapacityIsFound"
 *        |            \
 *        | booking    \ queued: maxRunDurationSeconds after Provisioned
 *        | time, unused \
 *        v               v
 *   BookingExpired=True      CapacityRevoked=True "MaxRunDurationReached"
 *   "CapacityReservation-    (the nodes are deleted; Kueue's check goes
 *    TimeExpired" (queued:    Rejected and the workload is evicted)
 *    unused nodes deleted)
 *
 * Invariants:
 *  1. Failed, BookingExpired and CapacityRevoked are terminal: nothing moves
 *     a request out of them.
 *  2. A queued request's nodes are created together (whole slices, one
 *     call) and only once (status.provisioningClassDetails records the
 *     grant).
 *  3. Requests are handled oldest first, so the FIFO queue of DWS holds.
 *
 * Deadlines live in the request's status (conditions' lastTransitionTime,
 * provisioningClassDetails "flexq.dev/eta"), so a restart resumes them.
 *
 * Which requests a run steps: a request table kept between runs (see
 * "the request table" below) holds, for each request, whether its last
 * step changed anything and, if not, until when and on what its outcome
 * depends; a run steps only the requests whose step can do something new
 * (changed, their nodes changed, a deadline came, the pools' sizes moved
 * for a request waiting on them), in the order a pass over all of them
 * would, and asks for the earliest wake-up of the others.
 * The request's pods are described by spec.podSets[].count and, as flexq
 * has no PodTemplate kind, by the template provcheck.c inlines beside
 * podTemplateRef (spec.podSets[].template).
 *
 * What it does not do: create or delete requests (provcheck.c does, for
 * Kueue), or place pods (the binder, or autoscaler.c in no_pods mode).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity/common.h"
#include "capacity/nodes.h"
#include "capacity/provider_demand.h"
#include "capacity/provider_protocol.h"
#include "capacity/provreq.h"
#include "capacity/slices.h"
#include "engine/timescale.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/conditions.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

#define CLASS_QUEUED "queued-provisioning.gke.io"
#define CLASS_ATOMIC "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
#define CLASS_CHECK  "check-capacity.autoscaling.x-k8s.io"
#define DETAIL_ETA   "flexq.dev/eta"
#define DETAIL_GRANT "flexq.dev/granted"
#define DETAIL_RETRY "flexq.dev/retry-at"
#define DETAIL_TRIES "flexq.dev/retries"

/*
 * What the steps of one request keep of its spec, which each of them
 * reads: the pool pick_pool finds for it, per kind of pool (queued or
 * not), and the nodes it needs there (nodes_needed). They hold while the
 * pools are decoded as they were (decode_gen `gen`) and the spec is the
 * one of generation `spec_gen` (a request's spec does not change in
 * Kubernetes; a new generation drops them all the same).
 */
struct req_memo {
    uint64_t gen;
    int64_t spec_gen;
    bool picked[2], sized[2];
    struct fq_cap_pool *pool[2];
    int64_t need[2];
};

struct req {
    const char *ns, *name, *klass;
    const char *key;            /* "ns/name", as nodes carry it */
    const struct fq_value *obj; /* the stored request, read only */
    /* Its status as the step has it: the stored one until the step first
     * changes something, then `copy` (owned), which is written back. */
    const struct fq_value *status;
    struct fq_value *copy;
    int64_t created;
    /* What the step depended on, for a step that changes nothing: it
     * would change nothing again until `until` (a time it compared now
     * with), unless the request, its nodes, the pools or the cloud change
     * or, with `counts`, the pools' sizes; `wake` is the earliest wake it
     * asked for. never_clean: the step read something else (an outside
     * provider's state, or now as the creation time). */
    int64_t until, wake;
    bool counts, never_clean;
    struct req_memo *memo; /* the request table's, or NULL */
};

/* Asks for a run at t, remembering that the step's outcome moves then. */
static void req_wake(struct fq_capacity *st, struct req *r, int64_t t)
{
    fq_capacity_wake(st, t);
    if (t < r->wake)
        r->wake = t;
    if (t < r->until)
        r->until = t;
}

/* The step's outcome moves at t (no run asked for). */
static void req_until(struct req *r, int64_t t)
{
    if (t < r->until)
        r->until = t;
}

/* The status to change: the stored one is copied at the first change, as
 * most steps change nothing and the copy cost more than the step. */
static struct fq_value *edit_status(struct req *r)
{
    if (!r->copy) {
        r->copy = fq_value_clone(r->status);
        r->status = r->copy;
    }
    return r->copy;
}

/* fq_cond_status_set on the request's status, copying it only when the
 * condition changes. */
static void set_cond(struct req *r, const char *type, const char *cstatus,
                     const char *reason, const char *message, int64_t now)
{
    if (fq_cond_status_differs(r->status, type, cstatus, reason, message))
        fq_cond_status_set(edit_status(r), type, cstatus, reason, message, now);
}

static const char *detail(const struct req *r, const char *key)
{
    return fq_value_as_str(
        fq_map_get(fq_map_get(r->status, "provisioningClassDetails"), key));
}

/* Sets (v) or removes (NULL) a detail; the details map is made when
 * missing, even to remove one. */
static void set_detail(struct req *r, const char *key, const char *v)
{
    const struct fq_value *d =
        fq_map_get(r->status, "provisioningClassDetails");
    const char *have = fq_value_as_str(fq_map_get(d, key));
    bool same = d && d->type == FQ_V_MAP &&
                (v ? have && !strcmp(have, v) : !fq_map_get(d, key));
    if (same)
        return;
    struct fq_value *m =
        fq_map_ensure_map(edit_status(r), "provisioningClassDetails");
    if (v)
        fq_map_set(m, key, fq_value_str(v));
    else
        fq_map_del(m, key);
}

static int64_t detail_time(const struct req *r, const char *key)
{
    const char *s = detail(r, key);
    int64_t t;
    if (!s || fq_time_parse(s, &t) < 0)
        return -1;
    return t;
}

static void set_detail_time(struct req *r, const char *key, int64_t t)
{
    char ts[40];
    fq_time_format(t, ts, sizeof(ts));
    set_detail(r, key, ts);
}

static void fmt_dur(int64_t ms, char *buf, size_t n)
{
    int64_t s = ms / 1000;
    if (s % 3600 == 0 && s >= 3600)
        snprintf(buf, n, "%lldh", (long long)(s / 3600));
    else if (s % 60 == 0 && s >= 60)
        snprintf(buf, n, "%lldm", (long long)(s / 60));
    else
        snprintf(buf, n, "%llds", (long long)s);
}

/* The podsets' demand: nodes needed on `pool` for every podset. */
static int64_t nodes_needed_of(const struct req *r, const struct fq_cap_pool *p)
{
    const struct fq_value *ps = fq_value_path(r->obj, FQ_WL_PODSETS);
    int64_t alloc_cpu, alloc_mem, total = 0;
    fq_catalog_allocatable(p->spec.machine, &alloc_cpu, &alloc_mem);
    int64_t free_[FQ_R_N] = {0};
    free_[FQ_R_CPU] = alloc_cpu;
    free_[FQ_R_MEM] = alloc_mem;
    if (fq_catalog_is_tpu(p->spec.machine))
        free_[FQ_R_TPU] = p->spec.machine->accel_count;
    else if (p->spec.machine->accel_count)
        free_[FQ_R_GPU] = p->spec.machine->accel_count;
    free_[FQ_R_PODS] = 110;
    for (size_t i = 0; i < fq_value_len(ps); i++) {
        const struct fq_value *s = fq_seq_at(ps, i);
        int64_t count = fq_value_path_int(s, "count", 1);
        int64_t req[FQ_R_N];
        fq_capacity_pod_requests(fq_map_get(s, "template"), req);
        int64_t per = fq_capacity_fits(free_, req);
        if (per <= 0)
            return -1; /* a pod larger than a node */
        if (per == INT64_MAX)
            per = 1;
        total += (count + per - 1) / per;
    }
    int64_t h = p->spec.slice_hosts > 0 ? p->spec.slice_hosts : 1;
    return (total + h - 1) / h * h;
}

/* The first pool (by name) of the right kind matching the template's
 * nodeSelector. */
static struct fq_cap_pool *pick_pool_of(struct fq_capacity *st,
                                        const struct req *r, bool queued)
{
    const struct fq_value *ps = fq_value_path(r->obj, FQ_WL_PODSETS);
    const struct fq_value *sel = fq_value_path(
        fq_map_get(fq_seq_at(ps, 0), "template"), FQ_POD_NODE_SELECTOR);
    for (size_t i = 0; i < st->npools; i++) {
        struct fq_cap_pool *p = &st->pools[i];
        if (p->ok && p->spec.queued == queued &&
            fq_capacity_pool_matches(p, sel))
            return p;
    }
    return NULL;
}

/* pick_pool_of through the request's memo. */
static struct fq_cap_pool *pick_pool(struct fq_capacity *st,
                                     const struct req *r, bool queued)
{
    struct req_memo *m = r->memo;
    if (!m)
        return pick_pool_of(st, r, queued);
    if (!m->picked[queued]) {
        m->pool[queued] = pick_pool_of(st, r, queued);
        m->picked[queued] = true;
    }
    return m->pool[queued];
}

/* nodes_needed_of through the request's memo, for the pool pick_pool
 * found. */
static int64_t nodes_needed(const struct req *r, const struct fq_cap_pool *p)
{
    struct req_memo *m = r->memo;
    bool q = p->spec.queued;
    if (!m || !m->picked[q] || m->pool[q] != p)
        return nodes_needed_of(r, p);
    if (!m->sized[q]) {
        m->need[q] = nodes_needed_of(r, p);
        m->sized[q] = true;
    }
    return m->need[q];
}

static int req_nodes(struct fq_capacity *st, const char *key, int *ready,
                     int *busy)
{
    *ready = *busy = 0;
    const struct fq_cap_nodes *s = fq_smap_get(&st->by_provreq, key);
    for (size_t i = 0; s && i < s->n; i++) {
        *ready += s->v[i]->ready;
        *busy += s->v[i]->busy > 0;
    }
    return s ? (int)s->n : 0;
}

static void delete_req_nodes(struct fq_capacity *st, struct fq_engine *e,
                             const char *key, bool only_unused, const char *why)
{
    struct fq_cap_node **v;
    size_t n = fq_capacity_provreq_nodes(st, key, &v);
    for (size_t i = 0; i < n; i++) {
        struct fq_cap_node *nd = v[i];
        if (nd->gone)
            continue;
        if (only_unused) {
            /* a slice is kept whole if any of its nodes is used */
            struct fq_cap_node **sl;
            size_t ns = fq_capacity_slice_nodes(st, nd->slice, &sl);
            bool used = false;
            for (size_t k = 0; k < ns; k++)
                used |= sl[k]->busy > 0;
            free(sl);
            if (used)
                continue;
        }
        fq_capacity_delete_slice(st, e, nd->slice, why);
    }
    free(v);
}

/* --- transitions -------------------------------------------------------- */

static void accept(struct fq_capacity *st, struct fq_engine *e, struct req *r)
{
    set_cond(r, "Accepted", "True", "Accepted",
             "ProvisioningRequest is accepted by "
             "ClusterAutoscaler",
             st->now);
    if (!strcmp(r->klass, CLASS_QUEUED)) {
        struct fq_cap_pool *p = pick_pool(st, r, true);
        const char *mt = p ? p->spec.machine->name : NULL;
        const char *zone = p ? p->spec.location : NULL;
        int64_t wait = fq_cloud_flex_wait_ms(
            st->cloud, mt, zone, fq_engine_rand_in(e, FQ_RAND_CLOUD));
        int64_t eta = wait == FQ_NEVER ? FQ_NEVER : r->created + wait;
        if (eta < st->now)
            eta = st->now;
        if (eta != FQ_NEVER)
            set_detail_time(r, DETAIL_ETA, eta);
    }
    set_cond(r, "Provisioned", "False",
             !strcmp(r->klass, CLASS_QUEUED) ? "NotProvisioned" :
                                               "CapacityIsNotFound",
             "Waiting for capacity", st->now);
}

static void fail(struct fq_capacity *st, struct fq_engine *e, struct req *r,
                 const char *reason, const char *msg)
{
    set_cond(r, "Failed", "True", reason, msg, st->now);
    set_cond(r, "Provisioned", "False", reason, msg, st->now);
    delete_req_nodes(st, e, r->key, true,
                     "ProvisioningRequest failed: node removed");
}

static void provisioned(struct fq_capacity *st, struct req *r,
                        const char *reason, const char *msg)
{
    set_cond(r, "Provisioned", "True", reason, msg, st->now);
    set_detail(r, DETAIL_RETRY, NULL);
}

static void booking_expired(struct fq_capacity *st, struct fq_engine *e,
                            struct req *r)
{
    set_cond(r, "BookingExpired", "True", "CapacityReservationTimeExpired",
             "Capacity reservation time expired", st->now);
    if (!strcmp(r->klass, CLASS_QUEUED))
        delete_req_nodes(st, e, r->key, true,
                         "booking of the ProvisioningRequest expired: "
                         "unused node removed");
}

static void revoke(struct fq_capacity *st, struct fq_engine *e, struct req *r,
                   int64_t max_run)
{
    char d[32], msg[200];
    fmt_dur(max_run, d, sizeof(d));
    snprintf(msg, sizeof(msg),
             "The nodes reached maxRunDurationSeconds (%s) and were deleted",
             d);
    set_cond(r, "CapacityRevoked", "True", "MaxRunDurationReached", msg,
             st->now);
    delete_req_nodes(st, e, r->key, false,
                     "flex-start node reached its maximum run duration");
}

/* Queued: create the request's slices on its pool when the cloud has them. */
static void try_grant_queued(struct fq_capacity *st, struct fq_engine *e,
                             struct req *r)
{
    struct fq_cap_pool *p = pick_pool(st, r, true);
    char msg[512];
    if (!p) {
        set_cond(r, "Provisioned", "False", "NotProvisioned",
                 "No node pool with queued provisioning matches "
                 "the pod template",
                 st->now);
        return;
    }
    int64_t need = nodes_needed(r, p);
    if (need < 0) {
        fail(st, e, r, "FailedToCreatePods",
             "A pod of the request does not fit on any node of the pool");
        return;
    }
    if (fq_provider_demand_on(e)) { /* the provider's cloud decides */
        r->never_clean = true;
        if (fq_provider_demand_provision(st, e, p, need, r->key, r->obj))
            set_detail_time(r, DETAIL_GRANT, st->now);
        else
            set_cond(r, "Provisioned", "False", "NotProvisioned",
                     "Waiting for capacity: provision requested "
                     "from the provider",
                     st->now);
        return;
    }
    int64_t eta = detail_time(r, DETAIL_ETA);
    if (eta < 0 || eta > st->now) {
        char ts[40] = "indefinite";
        if (eta >= 0) {
            fq_time_format(eta, ts, sizeof(ts));
            req_wake(st, r, eta);
        }
        /* Most steps of a queued request end here: no printf. */
        size_t at =
            fq_text_put(msg, sizeof(msg), 0, "Waiting for capacity in ");
        at = fq_text_put(msg, sizeof(msg), at, p->spec.location);
        at =
            fq_text_put(msg, sizeof(msg), at, "; expected provisioning time: ");
        fq_text_put(msg, sizeof(msg), at, ts);
        set_cond(r, "Provisioned", "False", "NotProvisioned", msg, st->now);
        return;
    }
    r->counts = true; /* the pool's size and the hosts in use from here */
    if (p->nodes + need > p->spec.max_nodes) {
        snprintf(msg, sizeof(msg),
                 "Max nodepool size reached: %s has %lld of %lld nodes, the "
                 "request needs %lld",
                 p->name, (long long)p->nodes, (long long)p->spec.max_nodes,
                 (long long)need);
        set_cond(r, "Provisioned", "False", "NotProvisioned", msg, st->now);
        return;
    }
    int64_t stock = fq_cloud_flex_stock(st->cloud, p->spec.machine->name,
                                        p->spec.location, st->now);
    int64_t used = fq_capacity_hosts_in_use(st, p->spec.machine->name, true);
    if (stock != FQ_CLOUD_UNLIMITED && used + need > stock) {
        int64_t next = fq_cloud_flex_next_arrival(
            st->cloud, p->spec.machine->name, p->spec.location, st->now);
        req_wake(st, r, next);
        snprintf(msg, sizeof(msg),
                 "Waiting for capacity: %lld x %s in %s not available yet "
                 "(ResourcePoolExhausted)",
                 (long long)need, p->spec.machine->name, p->spec.location);
        set_cond(r, "Provisioned", "False", "NotProvisioned", msg, st->now);
        return;
    }
    /* All slices in this one call: the request's nodes come together. */
    for (int64_t n = 0; n < need; n += p->spec.slice_hosts)
        fq_capacity_add_slice(st, e, p, r->key);
    set_detail_time(r, DETAIL_GRANT, st->now);
    set_cond(r, "Provisioned", "False", "NotProvisioned",
             "Capacity found; nodes are being created", st->now);
    fq_engine_event(e, r->obj, "Normal", "TriggeredScaleUp",
                    "pod triggered scale-up: [{%s %lld->%lld (max: %lld)}]",
                    p->name, (long long)(p->nodes - need), (long long)p->nodes,
                    (long long)p->spec.max_nodes);
}

/* Exponential retry pacing of the autoscaler: 1 min, then 10 min. */
static bool retry_due(struct fq_capacity *st, struct fq_engine *e,
                      struct req *r, bool failed_now)
{
    int64_t at = detail_time(r, DETAIL_RETRY);
    if (!failed_now) {
        if (at > st->now)
            req_until(r, at);
        return at < 0 || at <= st->now;
    }
    const char *tries = detail(r, DETAIL_TRIES);
    int n = tries ? atoi(tries) : 0;
    int64_t delay = fq_capacity_scaled(e, n == 0 ? 60 * 1000 : 600 * 1000);
    char buf[16];
    snprintf(buf, sizeof(buf), "%d", n + 1);
    set_detail(r, DETAIL_TRIES, buf);
    set_detail_time(r, DETAIL_RETRY, st->now + delay);
    req_wake(st, r, st->now + delay);
    return false;
}

static void try_grant_atomic(struct fq_capacity *st, struct fq_engine *e,
                             struct req *r)
{
    if (!retry_due(st, e, r, false))
        return;
    if (fq_provider_demand_on(e)) { /* not carried to providers yet */
        r->never_clean = true;
        set_cond(r, "Provisioned", "False", "CapacityIsNotFound",
                 "best-effort-atomic-scale-up needs the sim "
                 "provider in flexq",
                 st->now);
        return;
    }
    struct fq_cap_pool *p = pick_pool(st, r, false);
    int64_t need = p ? nodes_needed(r, p) : -1;
    int64_t until = FQ_NEVER;
    r->counts = true;
    bool ok = p && need >= 0 && p->nodes + need <= p->spec.max_nodes &&
              fq_cloud_ondemand_ok(
                  st->cloud, p->spec.machine->name, p->spec.location, st->now,
                  fq_capacity_hosts_in_use(st, p->spec.machine->name, false),
                  need, &until);
    if (!ok) {
        set_cond(r, "Provisioned", "False", "CapacityIsNotFound",
                 "Capacity is not found, CA will try to find it "
                 "later.",
                 st->now);
        retry_due(st, e, r, true);
        return;
    }
    for (int64_t n = 0; n < need; n += p->spec.slice_hosts)
        fq_capacity_add_slice(st, e, p, r->key);
    set_detail_time(r, DETAIL_GRANT, st->now);
    provisioned(st, r, "CapacityIsProvisioned",
                "Capacity is provisioned; scale-up was requested");
}

static void check_capacity(struct fq_capacity *st, struct fq_engine *e,
                           struct req *r)
{
    if (!retry_due(st, e, r, false))
        return;
    /* Free room on Ready nodes matching the template, first fit. */
    const struct fq_value *ps = fq_value_path(r->obj, FQ_WL_PODSETS);
    struct fq_cap_node **nodes;
    size_t nn = fq_capacity_all_nodes(st, &nodes);
    int64_t(*room)[FQ_R_N] = fq_xcalloc(nn + 1, sizeof(*room));
    for (size_t i = 0; i < nn; i++)
        for (int k = 0; k < FQ_R_N; k++)
            room[i][k] = nodes[i]->alloc[k] - nodes[i]->used[k];
    bool fits = true;
    for (size_t s = 0; fits && s < fq_value_len(ps); s++) {
        const struct fq_value *set = fq_seq_at(ps, s);
        const struct fq_value *tmpl = fq_map_get(set, "template");
        const struct fq_value *sel = fq_value_path(tmpl, FQ_POD_NODE_SELECTOR);
        int64_t req[FQ_R_N];
        fq_capacity_pod_requests(tmpl, req);
        int64_t left = fq_value_path_int(set, "count", 1);
        for (size_t i = 0; left > 0 && i < nn; i++) {
            struct fq_cap_node *nd = nodes[i];
            struct fq_cap_pool *p = nd->p;
            if (nd->gone || !nd->ready || !p || !p->ok ||
                !fq_capacity_pool_matches(p, sel))
                continue;
            while (left > 0 && fq_capacity_fits(room[i], req) > 0) {
                for (int k = 0; k < FQ_R_N; k++)
                    room[i][k] -= req[k];
                left--;
            }
        }
        fits = left == 0;
    }
    free(room);
    free(nodes);
    if (fits) {
        provisioned(st, r, "CapacityIsFound",
                    "Capacity is found in the "
                    "cluster");
        return;
    }
    const char *no_retry =
        fq_value_path_str(r->obj, "spec.parameters.noRetry", NULL);
    if (no_retry && !strcmp(no_retry, "true")) {
        fail(st, e, r, "CapacityIsNotFound",
             "Capacity is not found and noRetry is set");
        return;
    }
    set_cond(r, "Provisioned", "False", "CapacityIsNotFound",
             "Capacity is not found, CA will try to find it "
             "later.",
             st->now);
    retry_due(st, e, r, true);
}

static int64_t max_run_ms(struct fq_engine *e, struct fq_capacity *st,
                          const struct req *r)
{
    const struct fq_value *v =
        fq_value_path(r->obj, "spec.parameters.maxRunDurationSeconds");
    const char *s = fq_value_as_str(v);
    /* An explicit limit is scaled like every other duration. */
    if (s && *s)
        return fq_time_scaled(e, (int64_t)atoll(s) * 1000);
    if (v && v->type == FQ_V_NUM)
        return fq_time_scaled(e, (int64_t)(v->u.num.d * 1000.0));
    struct fq_cap_pool *p = pick_pool(st, r, true);
    return fq_cloud_max_run_ms(st->cloud, p ? p->spec.machine->name : NULL,
                               p ? p->spec.location : NULL);
}

static void step(struct fq_capacity *st, struct fq_engine *e, struct req *r)
{
    bool queued = !strcmp(r->klass, CLASS_QUEUED);
    struct fq_cap_pool *qp = queued ? pick_pool(st, r, true) : NULL;
    const char *mt = qp ? qp->spec.machine->name : NULL;
    const char *zone = qp ? qp->spec.location : NULL;
    if (!fq_cond_in_status(r->status, "Accepted"))
        accept(st, e, r);
    if (fq_cond_in_status_true(r->status, "Provisioned")) {
        int64_t at = fq_cond_in_status_time(r->status, "Provisioned");
        int ready, busy = 1;
        if (!detail(r, "flexq.dev/consumed"))
            req_nodes(st, r->key, &ready, &busy);
        if (queued) {
            int64_t end = at + max_run_ms(e, st, r);
            if (st->now >= end) {
                revoke(st, e, r, end - at);
                return;
            }
            req_wake(st, r, end);
        }
        int64_t booking = fq_cloud_booking_ms(st->cloud, mt, zone);
        if (busy == 0 && !detail(r, "flexq.dev/consumed")) {
            if (st->now >= at + booking) {
                booking_expired(st, e, r);
                return;
            }
            req_wake(st, r, at + booking);
        } else if (!detail(r, "flexq.dev/consumed")) {
            set_detail_time(r, "flexq.dev/consumed", st->now);
        }
        return;
    }
    int64_t max_wait = fq_cloud_max_wait_ms(st->cloud, mt, zone);
    if (st->now >= r->created + max_wait) {
        char d[32], msg[200];
        fmt_dur(max_wait, d, sizeof(d));
        snprintf(msg, sizeof(msg),
                 "Provisioning Request was not provisioned within %s of its "
                 "creation",
                 d);
        fail(st, e, r, "Expired", msg);
        return;
    }
    req_wake(st, r, r->created + max_wait);
    if (queued) {
        if (!detail(r, DETAIL_GRANT)) {
            try_grant_queued(st, e, r);
            return;
        }
        int ready, busy;
        int n = req_nodes(st, r->key, &ready, &busy);
        if (n > 0 && ready == n)
            provisioned(st, r, "CapacityIsProvisioned",
                        "Provisioning Request was successfully provisioned.");
        else if (n == 0) /* nodes lost before boot: grant again */
            set_detail(r, DETAIL_GRANT, NULL);
    } else if (!strcmp(r->klass, CLASS_ATOMIC)) {
        try_grant_atomic(st, e, r);
    } else {
        check_capacity(st, e, r);
    }
}

/*
 * A queued request whose nodes are provisioned and in use has nothing to
 * do until its maximum run time ends (step() would only ask for a wake-up
 * then): look at it in place instead of copying it. Returns that end, or
 * -1 when the request is not quiet.
 */
static int64_t quiet(struct fq_capacity *st, struct fq_engine *e,
                     const struct fq_object *o, struct req_memo *memo)
{
    struct req r = {0};
    r.obj = o->obj;
    r.memo = memo;
    r.status = fq_map_get(o->obj, "status");
    if (strcmp(fq_value_path_str(o->obj, FQ_PR_CLASS, ""), CLASS_QUEUED) ||
        !detail(&r, "flexq.dev/consumed") ||
        !fq_cond_in_status_true(r.status, "Provisioned") ||
        fq_provreq_terminal(r.status))
        return -1;
    int64_t end =
        fq_cond_in_status_time(r.status, "Provisioned") + max_run_ms(e, st, &r);
    if (st->now >= end)
        return -1;
    fq_capacity_wake(st, end);
    return end;
}

/* --- the request table ---------------------------------------------------- */

/*
 * Requests between runs. A run steps a request only when the step can do
 * something a step at the last run did not: the request is dirty (new,
 * changed in the store, stepped with a change last time, one of its
 * nodes came, went, became Ready or busy or idle, the pools or the cloud
 * model changed, or its step read the pools' sizes and they changed), or
 * a time its last step compared `now` with has come (until). A clean
 * request's step would change nothing and ask for the same wake-ups, so
 * its earliest wake-up is kept (wake) and asked for in its stead.
 *
 * Invariants, between runs: every stored request of a class handled here
 * and not terminal is `live` in the table; a live request is dirty (and
 * listed) or clean with entries (until, stamp) in until_h and (wake,
 * stamp) in wake_h when those are not FQ_NEVER, and, if `counts`, in
 * cdeps. Heap entries whose stamp is not the request's are stale, and
 * stay so: stamps come from one counter of the table, so a request made
 * again under a deleted one's name never takes up its stamps. A run
 * starts by dropping the stale entries when they outnumber the requests
 * four to one (a request settles again and again, pushing the same far
 * deadlines each time, and each stale entry popped costs a log n).
 *
 * Order: a run steps its dirty requests oldest first, then by namespace
 * and name, as a pass over all of them would. A request dirtied during
 * the run (pool sizes changed by a grant) is stepped in the same run if
 * it comes later in that order, else at the next run, as the pass would
 * have met it before the change.
 */
struct preq {
    char *key, *ns, *name; /* owned; key "ns/name" */
    int64_t created;       /* metadata.creationTimestamp */
    bool has_created;
    bool live, dirty;
    bool listed, in_run, in_cdeps;
    bool counts;
    int64_t until, wake;
    int64_t order_t; /* this run's sort time */
    uint64_t stamp;
    /* The revision of its last step's status write: that write's notice
     * brings nothing the step did not take into account. */
    uint64_t own_rev;
    struct req_memo memo;
};

struct preqs {
    struct fq_smap by_key; /* "ns/name" -> struct preq (owned) */
    struct preq **dirty;   /* listed: to be stepped at the next run */
    size_t ndirty, capdirty;
    struct preq **cdeps; /* clean with `counts` */
    size_t ncdeps, capcdeps;
    struct fq_cap_heap until_h, wake_h;
    uint64_t stamps; /* the last stamp given */
    bool seeded, all;
    /* during a run: the requests still to step (a min-heap in step
     * order) and the one being stepped */
    struct preq **q;
    size_t nq, capq;
    const struct preq *cur;
    bool running;
};

static void preq_free(void *v)
{
    struct preq *r = v;
    free(r->key);
    free(r->ns);
    free(r->name);
    free(r);
}

static struct preqs *table(struct fq_capacity *st)
{
    if (!st->provreq_state) {
        struct preqs *t = fq_xcalloc(1, sizeof(*t));
        t->by_key.free_val = preq_free;
        st->provreq_state = t;
    }
    return st->provreq_state;
}

void fq_provreq_release(struct fq_capacity *st)
{
    struct preqs *t = st->provreq_state;
    if (!t)
        return;
    fq_smap_free(&t->by_key);
    free(t->dirty);
    free(t->cdeps);
    free(t->q);
    fq_capacity_heap_free(&t->until_h);
    fq_capacity_heap_free(&t->wake_h);
    free(t);
    st->provreq_state = NULL;
}

static int preq_cmp(const struct preq *a, const struct preq *b)
{
    if (a->order_t != b->order_t)
        return a->order_t < b->order_t ? -1 : 1;
    int c = strcmp(a->ns, b->ns);
    return c ? c : strcmp(a->name, b->name);
}

static void q_push(struct preqs *t, struct preq *r, int64_t now)
{
    r->order_t = r->has_created ? r->created : now;
    r->in_run = true;
    FQ_GROW(t->q, t->capq, t->nq + 1);
    size_t i = t->nq++;
    t->q[i] = r;
    while (i > 0 && preq_cmp(t->q[i], t->q[(i - 1) / 2]) < 0) {
        struct preq *x = t->q[i];
        t->q[i] = t->q[(i - 1) / 2];
        t->q[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
}

static struct preq *q_pop(struct preqs *t)
{
    struct preq *top = t->q[0];
    t->q[0] = t->q[--t->nq];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, rr = l + 1, m = i;
        if (l < t->nq && preq_cmp(t->q[l], t->q[m]) < 0)
            m = l;
        if (rr < t->nq && preq_cmp(t->q[rr], t->q[m]) < 0)
            m = rr;
        if (m == i)
            break;
        struct preq *x = t->q[i];
        t->q[i] = t->q[m];
        t->q[m] = x;
        i = m;
    }
    top->in_run = false;
    return top;
}

static void list_add(struct preq ***v, size_t *n, size_t *cap, struct preq *r)
{
    FQ_GROW(*v, *cap, *n + 1);
    (*v)[(*n)++] = r;
}

static void list_remove(struct preq **v, size_t *n, const struct preq *r)
{
    for (size_t i = 0; i < *n; i++)
        if (v[i] == r) {
            v[i] = v[--*n];
            return;
        }
}

/* The request must be stepped: in this run if it comes after the one
 * being stepped, else at the next. */
static void mark(struct fq_capacity *st, struct preqs *t, struct preq *r)
{
    if (!r->live || r->dirty)
        return;
    r->dirty = true;
    r->order_t = r->has_created ? r->created : st->now;
    if (t->running && (!t->cur || preq_cmp(t->cur, r) < 0)) {
        q_push(t, r, st->now);
    } else if (!r->listed) {
        r->listed = true;
        list_add(&t->dirty, &t->ndirty, &t->capdirty, r);
    }
}

static bool handled_class(const char *klass)
{
    return !strcmp(klass, CLASS_QUEUED) || !strcmp(klass, CLASS_ATOMIC) ||
           !strcmp(klass, CLASS_CHECK);
}

/* Takes the stored request's news: live or not, and dirty. */
static void note_obj(struct fq_capacity *st, struct preqs *t, const char *ns,
                     const char *name, const char *key, uint64_t hash,
                     const struct fq_value *obj)
{
    struct preq *r = fq_smap_get_h(&t->by_key, key, hash);
    if (!obj) {
        if (!r)
            return;
        if (r->listed)
            list_remove(t->dirty, &t->ndirty, r);
        if (r->in_cdeps)
            list_remove(t->cdeps, &t->ncdeps, r);
        fq_smap_del_h(&t->by_key, key, hash);
        return;
    }
    if (!r) {
        r = fq_xcalloc(1, sizeof(*r));
        r->key = fq_xstrdup(key);
        r->ns = fq_xstrdup(ns);
        r->name = fq_xstrdup(name);
        const char *ct = fq_value_path_str(obj, FQ_META_CREATED, NULL);
        r->has_created = ct && fq_time_parse(ct, &r->created) == 0;
        fq_smap_put_h(&t->by_key, key, hash, r);
    }
    r->live = handled_class(fq_value_path_str(obj, FQ_PR_CLASS, "")) &&
              !fq_provreq_terminal(fq_map_get(obj, "status"));
    r->stamp = ++t->stamps; /* what it said before is stale */
    r->dirty = false;
    mark(st, t, r);
}

bool fq_provreq_note(struct fq_capacity *st, const struct fq_change *c)
{
    struct preqs *t = table(st);
    if (!t->seeded)
        return false; /* the first run lists them all */
    char buf[600];
    uint64_t hash;
    const char *key = fq_capacity_change_key(c, buf, sizeof(buf), &hash);
    if (c->type == FQ_CHANGE_MODIFIED) {
        const struct preq *r = fq_smap_get_h(&t->by_key, key, hash);
        if (r && r->own_rev == c->rev)
            return true;
    }
    note_obj(st, t, c->ns, c->name, key, hash,
             c->type == FQ_CHANGE_DELETED ? NULL : c->obj);
    return false;
}

bool fq_provreq_pending(const struct fq_capacity *st)
{
    const struct preqs *t = st->provreq_state;
    return !t || !t->seeded || t->all || t->ndirty > 0;
}

void fq_provreq_nodes_changed(struct fq_capacity *st, const char *key)
{
    struct preqs *t = table(st);
    struct preq *r = fq_smap_get(&t->by_key, key);
    if (r)
        mark(st, t, r);
}

void fq_provreq_counts_changed(struct fq_capacity *st)
{
    struct preqs *t = table(st);
    size_t n = t->ncdeps;
    struct preq **v = t->cdeps;
    t->cdeps = NULL;
    t->ncdeps = t->capcdeps = 0;
    for (size_t i = 0; i < n; i++) {
        v[i]->in_cdeps = false;
        if (v[i]->counts)
            mark(st, t, v[i]);
    }
    free(v);
}

void fq_provreq_all_changed(struct fq_capacity *st)
{
    table(st)->all = true;
}

static void seed(struct fq_capacity *st, struct fq_engine *e, struct preqs *t)
{
    t->seeded = true;
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST,
                                NULL, &list);
    for (size_t i = 0; i < n; i++) {
        char key[600];
        fq_capacity_key(list[i]->ns, list[i]->name, key, sizeof(key));
        note_obj(st, t, list[i]->ns, list[i]->name, key, fq_smap_hash(key),
                 list[i]->obj);
    }
    free(list);
}

/* After a step: clean (with what it depended on) or dirty again. */
static void settle(struct fq_capacity *st, struct preqs *t, struct preq *r,
                   bool dirty, int64_t until, int64_t wake, bool counts)
{
    r->stamp = ++t->stamps;
    if (dirty || r->dirty) {
        r->dirty = false;
        mark(st, t, r);
        return;
    }
    r->until = until;
    r->wake = wake;
    r->counts = counts;
    if (until != FQ_NEVER)
        fq_capacity_heap_push(&t->until_h, until, r->key, r->stamp);
    if (wake != FQ_NEVER)
        fq_capacity_heap_push(&t->wake_h, wake, r->key, r->stamp);
    if (counts && !r->in_cdeps) {
        r->in_cdeps = true;
        list_add(&t->cdeps, &t->ncdeps, &t->capcdeps, r);
    }
}

/* A heap entry that still speaks for a clean request. */
static struct preq *entry_req(struct preqs *t, const struct fq_cap_hent *h)
{
    struct preq *r = fq_smap_get(&t->by_key, h->key);
    return r && r->live && r->stamp == h->stamp ? r : NULL;
}

static bool entry_live(void *t, const struct fq_cap_hent *h)
{
    return entry_req(t, h) != NULL;
}

/* Drops a heap's stale entries when they pile up (see the invariants). */
static void prune(struct preqs *t, struct fq_cap_heap *h)
{
    if (h->h.n >= 64 && h->h.n > 4 * t->by_key.n)
        fq_capacity_heap_filter(h, entry_live, t);
}

static void step_one(struct fq_capacity *st, struct fq_engine *e,
                     struct preqs *t, struct preq *pr)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_PROVISIONINGREQUEST, pr->ns, pr->name);
    pr->dirty = false;
    if (!o)
        return; /* its DELETED notice follows */
    int64_t spec_gen = fq_value_path_int(o->obj, FQ_META_GENERATION, 0);
    if (pr->memo.gen != st->decode_gen || pr->memo.spec_gen != spec_gen) {
        memset(&pr->memo, 0, sizeof(pr->memo));
        pr->memo.gen = st->decode_gen;
        pr->memo.spec_gen = spec_gen;
    }
    int64_t end = quiet(st, e, o, &pr->memo);
    if (end >= 0) {
        settle(st, t, pr, false, end, end, false);
        return;
    }
    struct req r = {0};
    /* Stored entries stay put while other objects change; this one
     * changes only by the status write after its step. */
    r.obj = o->obj;
    r.ns = pr->ns;
    r.name = pr->name;
    r.klass = fq_value_path_str(r.obj, FQ_PR_CLASS, "");
    r.key = pr->key;
    const struct fq_value *st0 = fq_map_get(r.obj, "status");
    if (st0 && st0->type == FQ_V_MAP)
        r.status = st0;
    else
        r.status = r.copy = fq_value_map();
    r.created = pr->has_created ? pr->created : st->now;
    r.until = FQ_NEVER;
    r.wake = FQ_NEVER;
    r.never_clean = !pr->has_created;
    r.memo = &pr->memo;
    step(st, e, &r);
    /* A step that changed nothing made no copy; one that changed
     * something may have set it back, which the store finds (it writes
     * no status equal to the stored one). Only the status is written
     * back: the spec is immutable. */
    bool changed = false;
    if (r.copy) {
        uint64_t rev = fq_objstore_revision(s);
        bool live = handled_class(r.klass) && !fq_provreq_terminal(r.copy);
        fq_objstore_set_status(s, FQ_KIND_PROVISIONINGREQUEST, pr->ns, pr->name,
                               r.copy, NULL);
        changed = fq_objstore_revision(s) != rev;
        /* What the write's notice would tell the table, it is told now:
         * the request is marked below, its nodes here. */
        if (changed) {
            pr->own_rev = fq_objstore_revision(s);
            pr->live = live;
        }
    }
    /* This run's scale-down reads whether its nodes are booked. */
    if (changed)
        fq_capacity_provreq_written(st, pr->key);
    settle(st, t, pr, changed || r.never_clean, r.until, r.wake, r.counts);
}

void fq_provreq_reconcile(struct fq_capacity *st, struct fq_engine *e)
{
    struct preqs *t = table(st);
    if (!t->seeded)
        seed(st, e, t);
    if (t->all) {
        t->all = false;
        for (size_t i = 0; i < t->by_key.cap; i++)
            if (t->by_key.t[i].key)
                mark(st, t, t->by_key.t[i].val);
    }
    prune(t, &t->until_h);
    prune(t, &t->wake_h);
    /* Clean requests whose time came. */
    const struct fq_cap_hent *h;
    while ((h = fq_capacity_heap_top(&t->until_h)) && h->t <= st->now) {
        struct preq *r = entry_req(t, h);
        if (r && !r->dirty)
            mark(st, t, r);
        fq_capacity_heap_pop(&t->until_h);
    }
    t->running = true;
    t->cur = NULL;
    for (size_t i = 0; i < t->ndirty; i++) {
        struct preq *r = t->dirty[i];
        r->listed = false;
        if (r->live && r->dirty)
            q_push(t, r, st->now);
    }
    t->ndirty = 0;
    /* Oldest first (the DWS queue is FIFO), then by name. */
    while (t->nq > 0) {
        struct preq *r = q_pop(t);
        t->cur = r;
        step_one(st, e, t, r);
    }
    t->running = false;
    t->cur = NULL;
    /* The clean requests' wake-ups, as their steps would ask. */
    while ((h = fq_capacity_heap_top(&t->wake_h))) {
        if (entry_req(t, h)) {
            fq_capacity_wake(st, h->t);
            break;
        }
        fq_capacity_heap_pop(&t->wake_h);
    }
}
