/*
 * cost.c - what the nodes cost: node-seconds x price, per pool, per
 * workload and per ClusterQueue, written into their status.
 *
 * How it works.
 *   Pools: status.cost {nodeSeconds, usd, pricePerNodeHour, asOf}. Before
 *   a pool's node count changes (fq_cost_pool_flush, called by the slice
 *   functions) and at least once a minute of engine time, the time since
 *   asOf is charged at the pool's current node count, so the sum is exact:
 *   every interval is charged at the count that held during it.
 *   Price: the CapacityModel's price for the machine type and way of
 *   buying (on-demand, flex-start, Spot), else the catalog's.
 *   In no_pods mode (the simulator, which counts cost from the nodes it
 *   sees come and go) the once-a-minute write is not made: the flush
 *   before each change of the count keeps the total exact as of that
 *   change. When the engine throttles status rewrites (status_every_ms,
 *   as the simulator does) the flush adds to figures kept in memory and
 *   writes them at most once per status_every_ms.
 *
 *   Workloads: each placement is charged, for the time it is there, its
 *   share of the node (the largest fraction of any allocatable resource
 *   its pods take; a 4-TPU pod on a 4-TPU host is the whole host) at the
 *   node's price. Charges are accumulated in memory and written to
 *   status.cost {usd, nodeSeconds}; each ClusterQueue's status.cost is the
 *   sum of its workloads' charges, written once per run.
 *
 *   With pods: each run charges the time since the previous run to the
 *   bound live pods' workloads (the workload of the job a pod comes
 *   from), and writes a workload every five minutes of engine time and
 *   when it stops running.
 *
 *   no_pods (the simulator: thousands of workloads at once): a charge is
 *   accrued only when something it depends on changes (its placements,
 *   their nodes, the pools or the prices; nodes.c calls fq_cost_accrue
 *   first), for the time since the last accrual, up to the charging clock
 *   (the time of the last run that moved time on, as if each such run
 *   had charged everything; changes made before the cost step of a run
 *   count from that clock, as when a run charged its whole interval from
 *   the nodes it had decoded). A workload is written once, at the first
 *   run that moves time on after its last placement went. The workloads
 *   written and their order are those of the run-by-run charging: a
 *   workload's entry is numbered (seq) at the first run that would have
 *   charged it, in the order that charging met its placements (node
 *   name, placement index), and entries are written in that order.
 *   The sums themselves add the same terms over longer intervals, so they
 *   can differ from run-by-run sums in the last bits of a double.
 *
 * Example: on-demand-pool, ct6e-standard-4t at USD 10.80 per node-hour,
 * 4 nodes for 30 minutes: nodeSeconds 7200, usd 21.60.
 *
 * Invariants: charges only grow; a charge is made once (asOf moves with
 * it; no_pods: a workload's `since` moves with each accrual, and every
 * workload with placements charged is in `wls` with since <= the
 * charging clock). What it does not do: charge pods of no workload (they
 * count in their pool only), discounts for commitments, or the control
 * plane.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/smap.h"
#include "capacity/common.h"
#include "capacity/cost.h"
#include "capacity/nodes.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

#define FLUSH_MS (60 * 1000)

/* The cloud is asked once per pool and cloud: charges ask at every
 * placement change. */
static double pool_price(struct fq_capacity *st, struct fq_cap_pool *p)
{
    if (!p->ok)
        return 0;
    if (!p->price_known || p->price_gen != st->cloud_gen) {
        p->price =
            fq_cloud_price(st->cloud, p->spec.machine->name, p->spec.location,
                           fq_nodepool_provisioning(&p->spec));
        p->price_gen = st->cloud_gen;
        p->price_known = true;
    }
    return p->price;
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

/* A "%.4f" string value, formatted once into a buffer (fq_value_strf
 * formats twice, to size then to fill, and a double's digits are what a
 * cost write spends most on). */
static struct fq_value *fixed4(double v)
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%.4f", v);
    if (n < 0 || (size_t)n >= sizeof(buf))
        return fq_value_strf("%.4f", v); /* beyond any price or bill */
    return fq_value_str(buf);
}

static void write_cost(struct fq_value *status, double usd, double node_s,
                       int64_t as_of, double price)
{
    struct fq_value *c = fq_map_ensure_map(status, "cost");
    fq_map_set(c, "usd", fixed4(usd));
    fq_map_set(c, "nodeSeconds", fq_value_int((int64_t)(node_s + 0.5)));
    if (price >= 0)
        fq_map_set(c, "pricePerNodeHour", fixed4(price));
    char ts[40];
    fq_time_format(as_of, ts, sizeof(ts));
    fq_map_set(c, "asOf", fq_value_str(ts));
    fq_map_set(c, "asOfMs", fq_value_int(as_of));
}

/*
 * fq_cost_pool_flush when the engine throttles status rewrites
 * (status_every_ms, the simulator): the charge since the last flush is
 * added to the pool's figures in memory, and status.cost is written from
 * them at most once per status_every_ms (the simulator counts cost from
 * the nodes it sees, and nothing reads a pool's status there).
 */
static void pool_flush_throttled(struct fq_capacity *st, struct fq_engine *e,
                                 struct fq_cap_pool *pool)
{
    struct fq_objstore *s = fq_engine_store(e);
    if (!pool->throttled.held) {
        const struct fq_object *o =
            fq_objstore_get(s, FQ_KIND_NODEPOOL, "", pool->name);
        if (!o)
            return;
        const struct fq_value *c = fq_value_path(o->obj, FQ_STATUS_COST);
        pool->throttled.held = true;
        pool->throttled.usd = num(fq_map_get(c, "usd"));
        pool->throttled.node_s = num(fq_map_get(c, "nodeSeconds"));
        pool->throttled.cost_written = INT64_MIN;
        pool->cost_as_of = fq_value_path_int(c, "asOfMs", st->now);
    }
    double price = pool_price(st, pool);
    if (st->now > pool->cost_as_of) {
        double secs =
            (double)(st->now - pool->cost_as_of) / 1000.0 * (double)pool->nodes;
        pool->throttled.node_s += secs;
        pool->throttled.usd += secs / 3600.0 * price;
    }
    pool->cost_as_of = st->now;
    if (!fq_capacity_pool_rewrite_due(st, e, pool->throttled.cost_written))
        return;
    struct fq_value *tmp = fq_value_map();
    write_cost(tmp, pool->throttled.usd, pool->throttled.node_s, st->now,
               price);
    fq_objstore_set_status_key(s, FQ_KIND_NODEPOOL, "", pool->name, "cost",
                               fq_map_take(tmp, "cost"), NULL, NULL);
    fq_value_free(tmp);
    pool->throttled.cost_written = st->now;
}

void fq_cost_pool_flush(struct fq_capacity *st, struct fq_engine *e,
                        struct fq_cap_pool *pool)
{
    if (fq_engine_config(e)->status_every_ms > 0) {
        pool_flush_throttled(st, e, pool);
        return;
    }
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_NODEPOOL, "", pool->name);
    if (!o)
        return;
    const struct fq_value *c = fq_value_path(o->obj, FQ_STATUS_COST);
    int64_t as_of = fq_value_path_int(c, "asOfMs", st->now);
    double usd = num(fq_map_get(c, "usd"));
    double node_s = num(fq_map_get(c, "nodeSeconds"));
    double price = pool_price(st, pool);
    if (st->now > as_of) {
        double secs = (double)(st->now - as_of) / 1000.0 * (double)pool->nodes;
        node_s += secs;
        usd += secs / 3600.0 * price;
    }
    /* Only status.cost changes: write that member alone instead of
     * copying the pool. */
    struct fq_value *tmp = fq_value_map();
    if (c)
        fq_map_set(tmp, "cost", fq_value_clone(c));
    write_cost(tmp, usd, node_s, st->now, price);
    fq_objstore_set_status_key(s, FQ_KIND_NODEPOOL, "", pool->name, "cost",
                               fq_map_take(tmp, "cost"), NULL, NULL);
    fq_value_free(tmp);
    pool->cost_as_of = st->now;
}

/* In-memory workload charges, written out now and then. */
struct wcharge {
    char *key; /* "ns/name" */
    char *cq;
    double usd, node_s; /* not yet written */
    int64_t written_at;
    int64_t touched; /* the run time of its last charge */
};

struct wcharges {
    /* with pods */
    struct wcharge *w;
    size_t n, cap;
    struct fq_smap at; /* key -> index in w, plus one (0 = none) */
    /* The time of the last run that moved time on (-1: none yet); no_pods:
     * the charging clock. */
    int64_t last_run;
    /* no_pods: workloads accrued since the last charging run (each once,
     * struct fq_cap_wl.listed), and the last entry number given. */
    struct fq_cap_wl **changed;
    size_t nchanged, capchanged;
    uint64_t seq;
    /* charge_changed's lists of those to write and to enter, kept for its
     * next call. */
    struct fq_cap_wl **flush, **fresh;
    size_t capflush, capfresh;
};

/* The charges live beside the controller state; one per engine. */
static struct wcharges *charges(struct fq_capacity *st)
{
    if (!st->cost_state) {
        struct wcharges *c = fq_xcalloc(1, sizeof(*c));
        c->last_run = -1;
        st->cost_state = c;
    }
    return st->cost_state;
}

void fq_cost_release(struct fq_capacity *st)
{
    struct wcharges *c = st->cost_state;
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->w[i].key);
        free(c->w[i].cq);
    }
    free(c->w);
    fq_smap_free(&c->at);
    free(c->changed);
    free(c->flush);
    free(c->fresh);
    free(c);
    st->cost_state = NULL;
}

static struct wcharge *charge_of(struct wcharges *c, const char *key)
{
    uintptr_t at = (uintptr_t)fq_smap_get(&c->at, key);
    if (at)
        return &c->w[at - 1];
    FQ_GROW(c->w, c->cap, c->n + 1);
    struct wcharge *w = &c->w[c->n++];
    fq_smap_put(&c->at, key, (void *)(uintptr_t)c->n);
    memset(w, 0, sizeof(*w));
    w->key = fq_xstrdup(key);
    w->written_at = -1;
    return w;
}

/* Per-ClusterQueue sums of one run's flushes, written once per queue. */
struct qsum {
    const char *cq; /* borrowed from a wcharge */
    double usd, node_s;
};

struct qsums {
    struct qsum *v;
    size_t n, cap;
};

static void queue_add(struct qsums *qs, const char *cq, double usd,
                      double node_s)
{
    for (size_t i = 0; i < qs->n; i++)
        if (!strcmp(qs->v[i].cq, cq)) {
            qs->v[i].usd += usd;
            qs->v[i].node_s += node_s;
            return;
        }
    FQ_GROW(qs->v, qs->cap, qs->n + 1);
    qs->v[qs->n++] = (struct qsum){cq, usd, node_s};
}

static void queues_write(struct fq_capacity *st, struct fq_engine *e,
                         struct qsums *qs)
{
    struct fq_objstore *s = fq_engine_store(e);
    for (size_t i = 0; i < qs->n; i++) {
        struct fq_value *q =
            fq_objstore_edit(s, FQ_KIND_CLUSTERQUEUE, "", qs->v[i].cq);
        if (!q)
            continue;
        struct fq_value *status = fq_map_ensure_map(q, "status");
        const struct fq_value *c = fq_map_get(status, "cost");
        write_cost(status, num(fq_map_get(c, "usd")) + qs->v[i].usd,
                   num(fq_map_get(c, "nodeSeconds")) + qs->v[i].node_s, st->now,
                   -1);
        fq_objstore_update(s, q, true, NULL, NULL, NULL);
    }
    free(qs->v);
}

/* Writes a workload's unwritten charges into its status.cost and adds
 * them to its queue's sum; *cq is its ClusterQueue (owned, updated). */
static void write_workload(struct fq_capacity *st, struct fq_engine *e,
                           const char *wl, double usd, double node_s, char **cq,
                           struct qsums *qs)
{
    char key[512];
    fq_text_put(key, sizeof(key), 0, wl);
    char *slash = strchr(key, '/');
    if (!slash)
        return;
    *slash = 0;
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_WORKLOAD, key, slash + 1);
    if (o) {
        /* Only status.cost changes: write that member alone instead of
         * copying the whole workload. */
        const struct fq_value *c = fq_value_path(o->obj, FQ_STATUS_COST);
        struct fq_value *tmp = fq_value_map();
        if (c)
            fq_map_set(tmp, "cost", fq_value_clone(c));
        write_cost(tmp, num(fq_map_get(c, "usd")) + usd,
                   num(fq_map_get(c, "nodeSeconds")) + node_s, st->now, -1);
        const char *q = fq_value_path_str(o->obj, FQ_WL_ADMITTED_CQ, NULL);
        if (q) {
            free(*cq);
            *cq = fq_xstrdup(q);
        }
        fq_objstore_set_status_key(s, FQ_KIND_WORKLOAD, key, slash + 1, "cost",
                                   fq_map_take(tmp, "cost"), NULL, NULL);
        fq_value_free(tmp);
    }
    if (*cq)
        queue_add(qs, *cq, usd, node_s);
}

static void flush_workload(struct fq_capacity *st, struct fq_engine *e,
                           struct wcharge *w, struct qsums *qs)
{
    write_workload(st, e, w->key, w->usd, w->node_s, &w->cq, qs);
    w->usd = 0;
    w->node_s = 0;
    w->written_at = st->now;
}

/* A placement's share of its node. */
static double share_of(const struct fq_cap_node *nd,
                       const struct fq_cap_place *x)
{
    double share = 0;
    for (int r = 0; r < FQ_R_PODS; r++) {
        double f = nd->alloc[r] > 0 ?
                       (double)(x->req[r] * x->count) / (double)nd->alloc[r] :
                       0;
        if (f > share)
            share = f;
    }
    return share > 1 ? 1 : share;
}

/* --- no_pods: charges accrued when they change --------------------------- */

/* A placement is charged while its node is there, busy, in a pool. */
static bool charged(const struct fq_cap_ref *r)
{
    return !r->node->gone && r->node->busy > 0 && r->node->p;
}

void fq_cost_accrue(struct fq_capacity *st, struct fq_cap_wl *w)
{
    if (!st->no_pods)
        return;
    struct wcharges *c = charges(st);
    int64_t to = c->last_run;
    if (w->since != INT64_MIN && to > w->since) {
        for (size_t i = 0; i < w->nrefs; i++) {
            const struct fq_cap_ref *r = &w->refs[i];
            if (!charged(r))
                continue;
            double secs = (double)(to - w->since) / 1000.0 *
                          share_of(r->node, &r->node->pl[r->k]);
            w->node_s += secs;
            w->usd += secs / 3600.0 * pool_price(st, r->node->p);
        }
    }
    if (w->since == INT64_MIN || to > w->since)
        w->since = to;
    if (!w->listed) {
        w->listed = true;
        FQ_GROW(c->changed, c->capchanged, c->nchanged + 1);
        c->changed[c->nchanged++] = w;
    }
}

void fq_cost_accrue_all(struct fq_capacity *st)
{
    for (size_t i = 0; st->no_pods && i < st->wls.cap; i++)
        if (st->wls.t[i].key)
            fq_cost_accrue(st, st->wls.t[i].val);
}

static size_t ncharged(const struct fq_cap_wl *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->nrefs; i++)
        n += charged(&w->refs[i]);
    return n;
}

static int seq_cmp(const void *a, const void *b)
{
    const struct fq_cap_wl *x = *(struct fq_cap_wl *const *)a,
                           *y = *(struct fq_cap_wl *const *)b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Where run-by-run charging met a workload first: its charged placement
 * earliest in node order, then in the node's placements. */
static const struct fq_cap_ref *first_ref(const struct fq_cap_wl *w)
{
    const struct fq_cap_ref *best = NULL;
    for (size_t i = 0; i < w->nrefs; i++) {
        const struct fq_cap_ref *r = &w->refs[i];
        if (!charged(r))
            continue;
        int c = best ? fq_capacity_node_order(r->node, best->node) : -1;
        if (c < 0 || (c == 0 && r->k < best->k))
            best = r;
    }
    return best;
}

static int first_cmp(const void *a, const void *b)
{
    const struct fq_cap_ref *x = first_ref(*(struct fq_cap_wl *const *)a),
                            *y = first_ref(*(struct fq_cap_wl *const *)b);
    int c = fq_capacity_node_order(x->node, y->node);
    return c ? c : (x->k < y->k ? -1 : x->k > y->k);
}

/*
 * A run that moves time on: what run-by-run charging would do with the
 * workloads whose charges changed. Those with an entry and nothing
 * charged now are written (entry order) and lose the entry; those with
 * no entry and something charged get one (in the order charging would
 * meet them); workloads with nothing left to remember go.
 */
static void charge_changed(struct fq_capacity *st, struct fq_engine *e,
                           struct wcharges *c)
{
    if (c->nchanged == 0)
        return; /* most runs: nothing was accrued since the last */
    FQ_GROW(c->flush, c->capflush, c->nchanged);
    FQ_GROW(c->fresh, c->capfresh, c->nchanged);
    struct fq_cap_wl **flush = c->flush, **fresh = c->fresh;
    size_t nflush = 0, nfresh = 0;
    for (size_t i = 0; i < c->nchanged; i++) {
        struct fq_cap_wl *w = c->changed[i];
        size_t n = ncharged(w);
        if (w->seq && n == 0)
            flush[nflush++] = w;
        else if (!w->seq && n > 0)
            fresh[nfresh++] = w;
    }
    if (nflush > 1)
        qsort(flush, nflush, sizeof(*flush), seq_cmp);
    struct qsums qs = {0};
    for (size_t i = 0; i < nflush; i++) {
        struct fq_cap_wl *w = flush[i];
        if (w->usd > 0 || w->node_s > 0)
            write_workload(st, e, w->key, w->usd, w->node_s, &w->cq, &qs);
        w->usd = 0;
        w->node_s = 0;
        w->seq = 0;
    }
    /* Queue names borrow from the workloads: write before any goes. */
    queues_write(st, e, &qs);
    if (nfresh > 1)
        qsort(fresh, nfresh, sizeof(*fresh), first_cmp);
    for (size_t i = 0; i < nfresh; i++)
        fresh[i]->seq = ++c->seq;
    for (size_t i = 0; i < c->nchanged; i++) {
        struct fq_cap_wl *w = c->changed[i];
        w->listed = false;
        if (w->nrefs == 0 && !w->seq && w->usd <= 0 && w->node_s <= 0) {
            /* The entry's key goes with it: delete by a copy. */
            char key[600];
            fq_text_put(key, sizeof(key), 0, w->key);
            fq_smap_del(&st->wls, key);
        }
    }
    c->nchanged = 0;
}

/* --- with pods: charged run by run ----------------------------------------- */

/*
 * With pods as objects: a pod's workload is the one owned by the job the
 * pod comes from (a RayJob's pods carry ray.io/originated-from-cr-name, a
 * batch Job's pods batch.kubernetes.io/job-name; a RayJob's submitter Job
 * has the RayJob's name): the first workload, in the store's order, of the
 * pod's namespace with an owner reference of that name.
 *
 * The owners index: (namespace, owner name, position in the workload list)
 * sorted, so that each pod's workload is a binary search instead of a walk
 * over every workload (jobs keep their finished workloads).
 */
struct owner_ent {
    const char *ns, *owner; /* borrowed from the store */
    size_t at;              /* index in the workload list */
};

struct owners {
    struct owner_ent *v;
    size_t n, cap;
    bool built;
};

static int owner_cmp(const void *a, const void *b)
{
    const struct owner_ent *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    if (!c)
        c = strcmp(x->owner, y->owner);
    if (c)
        return c;
    return x->at < y->at ? -1 : x->at > y->at ? 1 : 0;
}

static void owners_build(struct owners *ix, const struct fq_object *const *wls,
                         size_t nwl)
{
    ix->built = true;
    for (size_t i = 0; i < nwl; i++) {
        const struct fq_value *refs = fq_meta_owners(wls[i]->obj);
        for (size_t k = 0; k < fq_value_len(refs); k++) {
            FQ_GROW(ix->v, ix->cap, ix->n + 1);
            struct owner_ent *x = &ix->v[ix->n++];
            x->ns = wls[i]->ns;
            x->owner = fq_value_path_str(fq_seq_at(refs, k), "name", "");
            x->at = i;
        }
    }
    if (ix->n > 1)
        qsort(ix->v, ix->n, sizeof(*ix->v), owner_cmp);
}

static bool pod_workload(struct fq_engine *e, const struct fq_value *pod,
                         const struct fq_object *const *wls, size_t nwl,
                         struct owners *ix, char *buf, size_t n)
{
    const struct fq_value *labels = fq_meta_labels(pod);
    const char *owner =
        fq_value_as_str(fq_map_get(labels, "ray.io/originated-from-cr-name"));
    if (!owner)
        owner =
            fq_value_as_str(fq_map_get(labels, "batch.kubernetes.io/job-name"));
    const char *ns = fq_meta_namespace(pod);
    (void)e;
    if (!owner)
        return false;
    if (!ix->built)
        owners_build(ix, wls, nwl);
    struct owner_ent key = {ns, owner, 0};
    size_t lo = 0, hi = ix->n;
    while (lo < hi) { /* the first entry >= key */
        size_t mid = lo + (hi - lo) / 2;
        if (owner_cmp(&ix->v[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ix->n || strcmp(ix->v[lo].ns, ns) ||
        strcmp(ix->v[lo].owner, owner))
        return false;
    const struct fq_object *w = wls[ix->v[lo].at];
    snprintf(buf, n, "%s/%s", w->ns, w->name);
    return true;
}

/* "ns/name" keys in the store's order: namespace, then name. */
static int pod_key_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    const char *xs = strchr(x, '/'), *ys = strchr(y, '/');
    size_t xl = xs ? (size_t)(xs - x) : strlen(x);
    size_t yl = ys ? (size_t)(ys - y) : strlen(y);
    int c = strncmp(x, y, xl < yl ? xl : yl);
    if (c || xl != yl)
        return c ? c : (xl < yl ? -1 : 1);
    return strcmp(xs ? xs + 1 : "", ys ? ys + 1 : "");
}

/*
 * The pods that may run: the capacity controller's index of live bound
 * pods (st->pods, kept by on_change) when it keeps one, in the store's
 * order, so that a run does not walk every finished pod; else every pod.
 */
static size_t running_pods(struct fq_capacity *st, struct fq_engine *e,
                           const struct fq_object ***out)
{
    if (!st->pods_seeded)
        return fq_objstore_list(fq_engine_store(e), FQ_KIND_POD, NULL, out);
    const char **keys = fq_xmalloc(sizeof(*keys) * (st->pods.n + 1));
    size_t nk = 0;
    for (size_t i = 0; i < st->pods.cap; i++)
        if (st->pods.t[i].key)
            keys[nk++] = st->pods.t[i].key;
    qsort(keys, nk, sizeof(*keys), pod_key_cmp);
    const struct fq_object **v = fq_xmalloc(sizeof(*v) * (nk + 1));
    size_t n = 0;
    for (size_t i = 0; i < nk; i++) {
        const struct fq_object *o = fq_capacity_keyed(e, FQ_KIND_POD, keys[i]);
        if (o)
            v[n++] = o;
    }
    free(keys);
    *out = v;
    return n;
}

static void charge_pods(struct fq_capacity *st, struct fq_engine *e,
                        struct wcharges *c, int64_t dt)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object **wls = NULL, **pods;
    size_t nwl = 0;
    bool listed = false; /* the Workloads, listed when first needed */
    size_t np = running_pods(st, e, &pods);
    struct owners ix = {0};
    for (size_t i = 0; i < np; i++) {
        const struct fq_value *pod = pods[i]->obj;
        const char *node = fq_value_path_str(pod, FQ_POD_NODE_NAME, "");
        const char *ph = fq_value_path_str(pod, FQ_POD_PHASE, "");
        if (!*node || !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))
            continue;
        const struct fq_cap_node *nd = fq_capacity_node(st, node);
        struct fq_cap_pool *p = nd ? nd->p : NULL;
        char key[600];
        if (p && !listed) {
            nwl = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &wls);
            listed = true;
        }
        if (!p || !pod_workload(e, pod, wls, nwl, &ix, key, sizeof(key)))
            continue;
        int64_t req[FQ_R_N];
        fq_capacity_pod_requests(pod, req);
        double share = 0;
        for (int r = 0; r < FQ_R_PODS; r++)
            if (nd->alloc[r] > 0 &&
                (double)req[r] / (double)nd->alloc[r] > share)
                share = (double)req[r] / (double)nd->alloc[r];
        if (share > 1)
            share = 1;
        struct wcharge *w = charge_of(c, key);
        double secs = (double)dt / 1000.0 * share;
        w->node_s += secs;
        w->usd += secs / 3600.0 * pool_price(st, p);
        w->touched = st->now;
    }
    free(ix.v);
    free(pods);
    free(wls);
}

void fq_cost_run(struct fq_capacity *st, struct fq_engine *e)
{
    int64_t flush = fq_capacity_scaled(e, FLUSH_MS);
    for (size_t i = 0; i < st->npools; i++) {
        struct fq_cap_pool *p = &st->pools[i];
        int64_t as_of = p->cost_as_of;
        if (as_of == INT64_MIN || (st->now - as_of >= flush && !st->no_pods))
            fq_cost_pool_flush(st, e, p);
    }
    struct wcharges *c = charges(st);
    if (st->no_pods) {
        if (c->last_run < 0) {
            /* Nothing was charged before the first run. */
            for (size_t i = 0; i < st->wls.cap; i++)
                if (st->wls.t[i].key)
                    ((struct fq_cap_wl *)st->wls.t[i].val)->since = st->now;
        } else if (st->now > c->last_run) {
            c->last_run = st->now;
            charge_changed(st, e, c);
        }
        c->last_run = st->now;
        return;
    }
    struct qsums qs = {0};
    if (c->last_run >= 0 && st->now > c->last_run)
        charge_pods(st, e, c, st->now - c->last_run);
    c->last_run = st->now;
    for (size_t i = 0; i < c->n; i++) {
        struct wcharge *w = &c->w[i];
        if (w->usd <= 0 && w->node_s <= 0)
            continue;
        /* Write every few minutes, and at once when it stopped running. */
        if (w->written_at < 0 || st->now - w->written_at >= 5 * flush ||
            w->touched != st->now)
            flush_workload(st, e, w, &qs);
    }
    /* Queue names borrow from charges: write before any is freed. */
    queues_write(st, e, &qs);
    /* Forget charges of workloads that no longer run (all written). */
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->w[i].touched != st->now && c->w[i].usd <= 0 &&
            c->w[i].node_s <= 0) {
            fq_smap_del(&c->at, c->w[i].key);
            free(c->w[i].key);
            free(c->w[i].cq);
            continue;
        }
        if (k != i)
            fq_smap_put(&c->at, c->w[i].key, (void *)(uintptr_t)(k + 1));
        c->w[k++] = c->w[i];
    }
    c->n = k;
}

bool fq_capacity_pool_rewrite_due(const struct fq_capacity *st,
                                  const struct fq_engine *e, int64_t last)
{
    int64_t every = fq_engine_config(e)->status_every_ms;
    return every <= 0 || last == INT64_MIN || st->now >= last + every;
}
