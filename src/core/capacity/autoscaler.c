/*
 * autoscaler.c - the cluster autoscaler: scale up for pending demand,
 * back off on stockouts, scale idle nodes down; and, in no_pods mode,
 * the placement of admitted workloads on nodes.
 *
 * How it works, each run of the capacity controller:
 *
 *   1. Demand. With pods: every Pod that the binder found Unschedulable
 *      (PodScheduled=False), has no node, and does not consume a
 *      ProvisioningRequest, grouped by the first pool whose nodes it could
 *      go to (selector matches, taints tolerated, not a queued pool). In
 *      no_pods mode: every podset of every admitted, unfinished Workload,
 *      minus what is already placed, on the pool of its flavor (the pool
 *      whose node labels match the ResourceFlavor's nodeLabels).
 *   2. Placement (no_pods only): first fit on Ready nodes of that pool, in
 *      name order, recorded in the Node's status.placements. A podset that
 *      consumes a ProvisioningRequest (the check's podSetUpdates carry the
 *      consume annotation) goes only to that request's nodes. When every
 *      podset is placed on Ready nodes the Workload gets PodsReady=True
 *      (reason Started); when the workload ends, its placements go.
 *   3. Scale-up. Demand left after counting the room on nodes still
 *      booting becomes new nodes: ceil(pods / pods-per-node), rounded up to
 *      whole slices, capped at maxNodeCount. The cloud model says yes or
 *      no; a no is a stockout: the pool backs off 5, 10, 20, 30 min (the
 *      autoscaler's --initial/max-node-group-backoff-duration), records a
 *      ScaleUp=False GCE_STOCKOUT condition and a FailedToScaleUpGroup
 *      event. A yes emits ScaledUpGroup and TriggeredScaleUp.
 *   4. Stockout fallback (policy stockout_fallback): a workload admitted on
 *      a flavor without admission checks whose pool cannot get nodes
 *      (backing off after a stockout) for stockout_fallback_after_ms since
 *      its admission gets Evicted=True, reason NodesUnavailable, and the
 *      annotation flexq.dev/avoid-flavors "<flavor>=<until>"; the kueue
 *      controller evicts it and tries the next flavor.
 *   5. Scale-down. A Ready node with nothing placed or bound is unneeded
 *      from that moment (annotation flexq.dev/unneeded-since); after the
 *      unneeded time (10 min) its slice goes, all nodes at once, if every
 *      node of the slice is unneeded and the pool stays at or above its
 *      minimum. Nodes still booked by a ProvisioningRequest are kept.
 *      Pools are also filled up to their minimum (and initialNodeCount at
 *      creation).
 *
 * Example (the tutorial, no_pods): job 1's podset "tpu-group" (4 pods of
 * 4 TPU) is admitted on flavor on-demand -> pool on-demand-pool (0 nodes,
 * max 4, 4x4 slices of 4 hosts). Nothing fits; booting room is 0; need
 * ceil(4 / 1) = 4 nodes = 1 slice; the cloud has stock; one slice of 4
 * nodes boots; after the boot latency they are Ready, the 4 pods are
 * placed, PodsReady=True. When job 1 finishes, the placements go, the 4
 * nodes are unneeded, and 10 min later the slice is deleted: 0 nodes.
 *
 * What a run visits. The steps above read like walks over every node and
 * every workload; a run visits only what can have moved since the last:
 * the watched workloads not settled (watch.c's unsettled list), each
 * decoded once per resourceVersion (struct fq_cap_wldec: a workload
 * waiting for its nodes is visited run after run), their
 * placements through the placements index (struct fq_cap_wl) instead of
 * the nodes, the nodes of a group's pool (pool->up through its first-fit
 * tree, which skips nodes without room for one pod, ->booting, and this
 * run's `created`, each in node order, so first fit picks the node a walk
 * over all nodes by name would), the nodes of a stopped workload for
 * unplacing, and for scale-down the nodes marked since (st->sd_dirty),
 * those whose unneeded time came (st->idle_heap) and those unneeded long
 * enough (st->sd_due). Invariants of the scale-down sets, between runs,
 * for every Ready node not gone and not marked:
 *  - busy (placed, bound, or booked by its request): no unneeded-since
 *    time, FQ_SD_BUSY;
 *  - idle, its unneeded time not up: FQ_SD_WAIT, with an idle-heap entry
 *    (unneeded-since + unneeded time, name);
 *  - idle long enough: FQ_SD_DUE, in sd_due.
 * Anything that can move a node out of its state marks it (nodes.c and
 * capacity.c: decoded, Ready, placements or pods changed, its
 * ProvisioningRequest changed, the cloud model changed).
 *
 * Invariants:
 *  1. A placement never exceeds a node's allocatable.
 *  2. A scale-up creates whole slices and never passes maxNodeCount.
 *  3. A scale-down removes whole slices and never goes below minNodeCount.
 *
 * What it does not do: least-waste or priority expanders (the first
 * matching pool wins), scale-down of nodes that still have pods (no
 * drain), max-node-provision-time (the sim's boots always finish).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity/autoscaler.h"
#include "capacity/common.h"
#include "capacity/nodes.h"
#include "capacity/provider_demand.h"
#include "capacity/provider_protocol.h"
#include "capacity/slices.h"
#include "capacity/watch.h"
#include "engine/timescale.h"
#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "flexq/timefmt.h"

struct group {
    struct fq_cap_pool *pool;
    int64_t req[FQ_R_N];
    int64_t want, placed;
    char *provreq; /* consume key "ns/name" or NULL */
    char *wl;      /* "ns/name" (no_pods) or NULL */
    char *podset;  /* no_pods */
    /* The object events are about (a Workload or a Pod), looked up when
     * an event is made: a copy for each group would cost more than the
     * events, which a simulation does not even record. */
    enum fq_kind about_kind;
    char *about_ns, *about_name;
};

struct groups {
    struct group *g;
    size_t n, cap;
};

/* A group's texts are small blocks (fq_capacity_text), not malloc's: the
 * groups are made again at every run that has a workload to place, five
 * texts each, and malloc and free were most of what making them cost. */
static void groups_release(struct groups *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        fq_capacity_text_free(gs->g[i].provreq);
        fq_capacity_text_free(gs->g[i].wl);
        fq_capacity_text_free(gs->g[i].podset);
        fq_capacity_text_free(gs->g[i].about_ns);
        fq_capacity_text_free(gs->g[i].about_name);
    }
    free(gs->g);
}

static void set_about(struct group *g, enum fq_kind kind, const char *ns,
                      const char *name)
{
    g->about_kind = kind;
    g->about_ns = fq_capacity_text(ns);
    g->about_name = fq_capacity_text(name);
}

/* The object a group's events are about (borrowed), or NULL. */
static const struct fq_value *about(struct fq_engine *e, const struct group *g)
{
    if (!g || !g->about_name)
        return NULL;
    const struct fq_object *o = fq_objstore_get(
        fq_engine_store(e), g->about_kind, g->about_ns, g->about_name);
    return o ? o->obj : NULL;
}

static bool cond_is(const struct fq_value *status, const char *type,
                    const char *want)
{
    return fq_cond_status_is(fq_cond_in_status(status, type), want);
}

static const struct fq_value *find_podset(const struct fq_value *wl,
                                          const char *name)
{
    const struct fq_value *ps = fq_value_path(wl, FQ_WL_PODSETS);
    for (size_t i = 0; i < fq_value_len(ps); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(ps, i), "name", ""), name))
            return fq_seq_at(ps, i);
    return NULL;
}

/* The flavor of a podset assignment: the first of its flavors map. */
static const char *assignment_flavor(const struct fq_value *psa)
{
    const struct fq_value *f = fq_map_get(psa, "flavors");
    if (!f || f->type != FQ_V_MAP || f->u.map.n == 0)
        return NULL;
    return fq_value_as_str(f->u.map.items[0].val);
}

/* The pool a flavor's nodes come from: node labels match its nodeLabels. */
static struct fq_cap_pool *flavor_pool(struct fq_capacity *st,
                                       struct fq_engine *e, const char *flavor,
                                       const struct fq_value *podset)
{
    const struct fq_object *rf =
        flavor ? fq_objstore_get(fq_engine_store(e), FQ_KIND_RESOURCEFLAVOR, "",
                                 flavor) :
                 NULL;
    const struct fq_value *labels =
        rf ? fq_value_path(rf->obj, FQ_RF_NODE_LABELS) : NULL;
    const struct fq_value *sel =
        fq_value_path(podset, FQ_TEMPLATE_NODE_SELECTOR);
    for (size_t i = 0; i < st->npools; i++) {
        struct fq_cap_pool *p = &st->pools[i];
        if (!p->ok)
            continue;
        if (labels && fq_value_len(labels) > 0) {
            if (fq_capacity_pool_matches(p, labels))
                return p;
        } else if (!p->spec.queued && fq_capacity_pool_matches(p, sel)) {
            return p;
        }
    }
    return NULL;
}

/*
 * flavor_pool() for the workloads a run decodes: a flavor with nodeLabels
 * maps to the same pool whatever the podset, so that answer is kept
 * (st->fmemo) until the pools or the flavors change (decode_gen moves).
 */
static struct fq_cap_pool *flavor_pool_memo(struct fq_capacity *st,
                                            struct fq_engine *e,
                                            const char *flavor,
                                            const struct fq_value *podset)
{
    if (!flavor)
        return flavor_pool(st, e, flavor, podset);
    struct fq_cap_fmemo *m = &st->fmemo;
    if (m->gen != st->decode_gen) {
        m->n = 0;
        m->gen = st->decode_gen;
    }
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].flavor, flavor))
            return m->v[i].pool;
    const struct fq_object *rf =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_RESOURCEFLAVOR, "", flavor);
    const struct fq_value *labels =
        rf ? fq_value_path(rf->obj, FQ_RF_NODE_LABELS) : NULL;
    struct fq_cap_pool *p = flavor_pool(st, e, flavor, podset);
    size_t len = strlen(flavor);
    if (labels && fq_value_len(labels) > 0 &&
        m->n < sizeof(m->v) / sizeof(m->v[0]) && len < sizeof(m->v[0].flavor)) {
        memcpy(m->v[m->n].flavor, flavor, len + 1);
        m->v[m->n].pool = p;
        m->n++;
    }
    return p;
}

/* The consume annotation the check put in podSetUpdates for a podset. */
static const char *consumed_provreq(const struct fq_value *wl,
                                    const char *podset)
{
    const struct fq_value *acs = fq_value_path(wl, FQ_WL_ADMISSION_CHECKS);
    for (size_t i = 0; i < fq_value_len(acs); i++) {
        const struct fq_value *ups =
            fq_map_get(fq_seq_at(acs, i), "podSetUpdates");
        for (size_t k = 0; k < fq_value_len(ups); k++) {
            const struct fq_value *u = fq_seq_at(ups, k);
            if (strcmp(fq_value_path_str(u, "name", ""), podset))
                continue;
            const char *pr = fq_value_as_str(fq_map_get(
                fq_map_get(u, "annotations"), FQ_ANN_CONSUME_PROVREQ));
            if (pr)
                return pr;
        }
    }
    return NULL;
}

/*
 * How many pods of a workload's podset are placed, from the placements
 * index (struct fq_cap_wl): those on nodes not gone with anything placed,
 * and whether all their nodes are Ready.
 */
static int64_t placed_count(struct fq_capacity *st, const char *wl,
                            uint64_t wl_hash, const char *podset,
                            bool *all_ready)
{
    const struct fq_cap_wl *w = fq_smap_get_h(&st->wls, wl, wl_hash);
    int64_t n = 0;
    for (size_t i = 0; w && i < w->nrefs; i++) {
        const struct fq_cap_node *nd = w->refs[i].node;
        const struct fq_cap_place *x = &nd->pl[w->refs[i].k];
        if (nd->gone || nd->busy == 0 || strcmp(x->podset, podset))
            continue;
        n += x->count;
        if (!nd->ready)
            *all_ready = false;
    }
    return n;
}

/* --- no_pods: placements ------------------------------------------------ */

static struct fq_value *requests_map(const int64_t req[FQ_R_N])
{
    static const char *const names[FQ_R_N] = {"cpu", "memory", "google.com/tpu",
                                              "nvidia.com/gpu", "pods"};
    struct fq_value *m = fq_value_map();
    for (int k = 0; k < FQ_R_PODS; k++) {
        if (!req[k])
            continue;
        char buf[40];
        fq_quantity_format(req[k], fq_quantity_scale_for(names[k]),
                           k == FQ_R_MEM ? FQ_QF_BINARY_SI : FQ_QF_DECIMAL_SI,
                           buf, sizeof(buf));
        fq_map_set(m, names[k], fq_value_str(buf));
    }
    return m;
}

static void place_on(struct fq_capacity *st, struct fq_engine *e,
                     struct fq_cap_node *nd, struct group *g, int64_t n)
{
    struct fq_objstore *s = fq_engine_store(e);
    /* The placement goes into the stored node in place, with its
     * unneeded-since annotation gone: nothing is copied. */
    struct fq_value *o =
        fq_objstore_edit_in_place(s, FQ_KIND_NODE, "", nd->name);
    if (!o)
        return;
    struct fq_value *status = fq_map_ensure_map(o, "status");
    struct fq_value *pl = fq_map_get(status, "placements");
    if (!pl || pl->type != FQ_V_SEQ) {
        pl = fq_value_seq();
        fq_map_set(status, "placements", pl);
    }
    struct fq_value *entry = NULL;
    size_t at = 0;
    for (size_t k = 0; k < fq_value_len(pl); k++) {
        struct fq_value *p = fq_seq_at(pl, k);
        if (!strcmp(fq_value_path_str(p, "workload", ""), g->wl) &&
            !strcmp(fq_value_path_str(p, "podSet", ""), g->podset)) {
            entry = p;
            at = k;
        }
    }
    if (!entry) {
        at = fq_value_len(pl);
        entry = fq_value_map();
        fq_map_set(entry, "workload", fq_value_str(g->wl));
        fq_map_set(entry, "podSet", fq_value_str(g->podset));
        fq_map_set(entry, "count", fq_value_int(n));
        fq_map_set(entry, "requests", requests_map(g->req));
        fq_seq_push(pl, entry);
    } else {
        fq_map_set(entry, "count",
                   fq_value_int(fq_value_path_int(entry, "count", 0) + n));
    }
    fq_map_del(
        fq_map_ensure_map(fq_map_ensure_map(o, "metadata"), "annotations"),
        FQ_ANN_UNNEEDED);
    /* The run goes on with this node: its decoded view follows. */
    fq_capacity_node_place(st, nd, at, entry, pl);
    fq_objstore_edited(s, FQ_KIND_NODE, "", nd->name, false);
    fq_capacity_node_unneeded(st, nd, FQ_NEVER, true);
    fq_capacity_node_stored(st, e, nd);
}

/* Removes every placement of workloads that are no longer active. */
static void unplace_inactive(struct fq_capacity *st, struct fq_engine *e)
{
    /* Only placements of workloads that stopped being active since the
     * last run (all of them at the first run) can go: visit the nodes
     * they are on, in node order. */
    if (!st->unplace_all && st->stopped.n == 0)
        return;
    struct fq_objstore *s = fq_engine_store(e);
    struct fq_cap_nodes todo = {0};
    if (st->unplace_all) {
        todo.n = fq_capacity_all_nodes(st, &todo.v);
    } else {
        uint64_t pass = ++st->pass;
        for (size_t i = 0; i < st->nstopped_keys; i++) {
            const struct fq_cap_wl *w =
                fq_smap_get(&st->wls, st->stopped_keys[i]);
            for (size_t r = 0; w && r < w->nrefs; r++) {
                struct fq_cap_node *nd = w->refs[r].node;
                if (nd->seen == pass)
                    continue; /* listed already */
                nd->seen = pass;
                fq_capacity_nodes_add(&todo, nd);
            }
        }
        fq_capacity_nodes_sort(&todo);
    }
    for (size_t i = 0; i < todo.n; i++) {
        struct fq_cap_node *nd = todo.v[i];
        if (nd->gone || nd->busy == 0)
            continue;
        /* Most runs drop nothing: look at the decoded placements first,
         * copy the stored node's placements only when one goes. The
         * flags are a small block (alloc.h): this runs for every busy
         * node a run looks at. */
        size_t gone_size = (nd->npl + 1) * sizeof(bool);
        bool *gone = fq_small_alloc(gone_size);
        memset(gone, 0, gone_size);
        bool dropped = false;
        for (size_t k = 0; k < nd->npl; k++) {
            if (!st->unplace_all &&
                !fq_smap_has_h(&st->stopped, nd->pl[k].wl, nd->pl[k].wl_hash))
                continue;
            const struct fq_object *wl =
                fq_capacity_keyed(e, FQ_KIND_WORKLOAD, nd->pl[k].wl);
            if (!wl || !fq_capacity_workload_active(wl->obj))
                dropped = gone[k] = true;
        }
        if (!dropped) {
            fq_small_free(gone, gone_size);
            continue;
        }
        /* Only status.placements changes: the entries that go are taken
         * out of the stored node in place. */
        struct fq_value *no =
            fq_objstore_edit_in_place(s, FQ_KIND_NODE, "", nd->name);
        struct fq_value *pl = no ? fq_value_path(no, FQ_NODE_PLACEMENTS) : NULL;
        if (!no || !pl || pl->type != FQ_V_SEQ) {
            struct fq_value *none = fq_value_seq();
            fq_capacity_node_drop(st, nd, gone, none);
            fq_value_free(none);
            fq_small_free(gone, gone_size);
            continue;
        }
        size_t m = fq_value_len(pl) < nd->npl ? fq_value_len(pl) : nd->npl;
        while (fq_value_len(pl) > m) /* entries the decoded view lacks */
            fq_seq_remove(pl, fq_value_len(pl) - 1);
        for (size_t k = m; k-- > 0;)
            if (gone[k])
                fq_seq_remove(pl, k);
        fq_objstore_edited(s, FQ_KIND_NODE, "", nd->name, false);
        fq_capacity_node_drop(st, nd, gone, pl);
        fq_small_free(gone, gone_size);
        fq_capacity_node_stored(st, e, nd);
    }
    free(todo.v);
    st->unplace_all = false;
    for (size_t i = 0; i < st->nstopped_keys; i++) {
        fq_smap_del(&st->stopped, st->stopped_keys[i]);
        free(st->stopped_keys[i]);
    }
    st->nstopped_keys = 0;
}

/* Places what fits of a group on node `nd`, first fit. */
static void place_at(struct fq_capacity *st, struct fq_engine *e,
                     struct fq_cap_node *nd, struct group *g)
{
    int64_t free_[FQ_R_N];
    for (int k = 0; k < FQ_R_N; k++)
        free_[k] = nd->alloc[k] - nd->used[k];
    int64_t n = fq_capacity_fits(free_, g->req);
    if (n == INT64_MAX || n > g->want - g->placed)
        n = g->want - g->placed;
    if (n > 0) {
        place_on(st, e, nd, g, n);
        g->placed += n;
    }
}

/*
 * First fit on the Ready nodes a group may use, in node order: a group
 * that consumes a ProvisioningRequest only that request's nodes (of its
 * pool), any other group its pool's nodes, except those of a queued pool
 * that belong to a request.
 */
static void place_group(struct fq_capacity *st, struct fq_engine *e,
                        struct group *g)
{
    if (g->provreq) {
        struct fq_cap_node **v;
        size_t n = fq_capacity_provreq_nodes(st, g->provreq, &v);
        for (size_t i = 0; i < n && g->placed < g->want; i++)
            if (v[i]->ready && !v[i]->gone && v[i]->p == g->pool)
                place_at(st, e, v[i], g);
        free(v);
        return;
    }
    bool queued = g->pool->spec.queued;
    /* The Ready nodes with room, by the pool's first-fit tree: the nodes
     * a walk would find nothing on are not visited. */
    struct fq_cap_pool *p = g->pool;
    for (size_t i = fq_capacity_first_fit(p, 0, g->req);
         i < p->up.n && g->placed < g->want;
         i = fq_capacity_first_fit(p, i + 1, g->req))
        place_at(st, e, p->up.v[i], g);
    for (size_t i = 0; i < st->created.n && g->placed < g->want; i++) {
        struct fq_cap_node *nd = st->created.v[i];
        if (nd->ready && !nd->gone && nd->p == g->pool &&
            !(queued && nd->provreq))
            place_at(st, e, nd, g);
    }
}

/* A podset's requests per pod as `old` (the last decode of the workload)
 * has them, when its spec is the same: a workload's status changes far
 * more often than its spec, and reading the pod template is most of a
 * decode. False when it must be read. */
static bool old_requests(const struct fq_cap_wldec *old, int64_t spec_gen,
                         size_t k, const char *name, int64_t req[FQ_R_N])
{
    if (!old || old->spec_gen != spec_gen || k >= old->nps ||
        strcmp(old->ps[k].name, name))
        return false;
    memcpy(req, old->ps[k].req, sizeof(old->ps[k].req));
    return true;
}

/* Decodes what collect_workloads reads of a workload (its podsets as
 * admitted, their pools and requests); `old` is its last decode, or
 * NULL. */
static struct fq_cap_wldec *wl_decode(struct fq_capacity *st,
                                      struct fq_engine *e,
                                      const struct fq_object *o,
                                      const struct fq_cap_wldec *old)
{
    const struct fq_value *wl = o->obj;
    /* Small blocks (alloc.h), freed by fq_capacity_wldec_free: a
     * workload is decoded again at each of its changes. */
    struct fq_cap_wldec *d = fq_small_alloc(sizeof(*d));
    memset(d, 0, sizeof(*d));
    d->rv = o->rv;
    d->gen = st->decode_gen;
    d->spec_gen = fq_value_path_int(wl, FQ_META_GENERATION, 0);
    struct fq_cap_wlconds conds;
    fq_capacity_wlconds(wl, &conds);
    d->active = fq_capacity_wlconds_active(&conds);
    d->pods_ready = conds.pods_ready;
    d->finished = conds.finished;
    const struct fq_value *psas = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
    d->nps = fq_value_len(psas);
    if (d->nps) {
        d->ps = fq_small_alloc(d->nps * sizeof(*d->ps));
        memset(d->ps, 0, d->nps * sizeof(*d->ps));
    }
    for (size_t k = 0; k < d->nps; k++) {
        const struct fq_value *psa = fq_seq_at(psas, k);
        struct fq_cap_wlpodset *x = &d->ps[k];
        x->name = fq_capacity_text(fq_value_path_str(psa, "name", ""));
        const struct fq_value *ps = find_podset(wl, x->name);
        x->want =
            fq_value_path_int(psa, "count", fq_value_path_int(ps, "count", 1));
        x->pool = flavor_pool_memo(st, e, assignment_flavor(psa), ps);
        if (!old_requests(old, d->spec_gen, k, x->name, x->req))
            fq_capacity_pod_requests(fq_map_get(ps, "template"), x->req);
        const char *pr = consumed_provreq(wl, x->name);
        if (pr) { /* "ns/name", without a printf for it */
            size_t a = strlen(o->ns), b = strlen(pr);
            x->provreq = fq_small_alloc(a + b + 2);
            memcpy(x->provreq, o->ns, a);
            x->provreq[a] = '/';
            memcpy(x->provreq + a + 1, pr, b + 1);
        }
    }
    return d;
}

static void collect_workloads(struct fq_capacity *st, struct fq_engine *e,
                              struct groups *gs)
{
    struct fq_cap_unsettled *list;
    size_t n = fq_capacity_unsettled(st, e, &list);
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *o = list[i].obj;
        const char *key = list[i].key;
        struct fq_cap_watch *w = list[i].w;
        /* A workload waits here run after run (its nodes boot): decode
         * it again only when it, the pools or the flavors changed. */
        if (!w->dec || w->dec->rv != o->rv || w->dec->gen != st->decode_gen) {
            struct fq_cap_wldec *old = w->dec;
            w->dec = wl_decode(st, e, o, old);
            fq_capacity_wldec_free(old);
        }
        const struct fq_cap_wldec *d = w->dec;
        if (!d->active) {
            /* Its pods are gone (evicted, not finished): not ready. */
            if (d->pods_ready && !d->finished) {
                fq_capacity_set_cond_stored(e, FQ_KIND_WORKLOAD, o->ns, o->name,
                                            "PodsReady", "False",
                                            "WaitForStart",
                                            "Not all pods are ready or "
                                            "succeeded",
                                            st->now);
                /* What changed is what we wrote: the decode still holds. */
                w->dec->rv = o->rv;
                w->dec->pods_ready = false;
            } else {
                w->settled = true;
            }
            continue;
        }
        bool all = true, all_ready = true;
        uint64_t key_hash = fq_smap_hash(key); /* once for its podsets */
        for (size_t k = 0; k < d->nps; k++) {
            const struct fq_cap_wlpodset *x = &d->ps[k];
            if (x->want <= 0)
                continue;
            int64_t placed =
                placed_count(st, key, key_hash, x->name, &all_ready);
            if (placed >= x->want)
                continue;
            all = false;
            if (!x->pool)
                continue;
            FQ_GROW(gs->g, gs->cap, gs->n + 1);
            struct group *g = &gs->g[gs->n++];
            memset(g, 0, sizeof(*g));
            g->pool = x->pool;
            memcpy(g->req, x->req, sizeof(g->req));
            g->want = x->want - placed;
            if (x->provreq)
                g->provreq = fq_capacity_text(x->provreq);
            g->wl = fq_capacity_text(key);
            g->podset = fq_capacity_text(x->name);
            set_about(g, FQ_KIND_WORKLOAD, o->ns, o->name);
        }
        if (all && all_ready && d->pods_ready) {
            /* Nothing left to do until it or one of its nodes changes. */
            w->settled = true;
        } else if (all && d->nps > 0 && all_ready) {
            uint64_t rv = o->rv;
            fq_capacity_set_cond_stored(e, FQ_KIND_WORKLOAD, o->ns, o->name,
                                        "PodsReady", "True", "Started",
                                        "All pods reached readiness and the "
                                        "workload is running",
                                        st->now);
            w->dec->rv = o->rv;
            w->dec->pods_ready = true;
            /* It stays listed, so the write's notice need not list it
             * again. */
            if (o->rv != rv)
                w->own_rev = o->rv;
        }
    }
}

/* --- pods: pending pods as demand ----------------------------------------- */

static bool tolerates(const struct fq_value *pod, const struct fq_value *taint)
{
    const struct fq_value *tols = fq_value_path(pod, FQ_POD_TOLERATIONS);
    const char *key = fq_value_path_str(taint, "key", "");
    const char *val = fq_value_path_str(taint, "value", "");
    const char *eff = fq_value_path_str(taint, "effect", "");
    if (!strcmp(eff, "PreferNoSchedule"))
        return true;
    for (size_t i = 0; i < fq_value_len(tols); i++) {
        const struct fq_value *t = fq_seq_at(tols, i);
        const char *tk = fq_value_path_str(t, "key", NULL);
        const char *op = fq_value_path_str(t, "operator", "Equal");
        const char *te = fq_value_path_str(t, "effect", NULL);
        if (te && *te && strcmp(te, eff))
            continue;
        if (!tk || !*tk) {
            if (!strcmp(op, "Exists"))
                return true;
            continue;
        }
        if (strcmp(tk, key))
            continue;
        if (!strcmp(op, "Exists") ||
            !strcmp(fq_value_path_str(t, "value", ""), val))
            return true;
    }
    return false;
}

static void collect_pods(struct fq_capacity *st, struct fq_engine *e,
                         struct groups *gs)
{
    const struct fq_object **list;
    size_t n = fq_capacity_unsched(st, e, &list);
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *pod = list[i]->obj;
        const char *node = fq_value_path_str(pod, FQ_POD_NODE_NAME, "");
        const char *ph = fq_value_path_str(pod, FQ_POD_PHASE, "Pending");
        if (*node || strcmp(ph, "Pending") ||
            !cond_is(fq_map_get(pod, "status"), "PodScheduled", "False"))
            continue;
        if (fq_map_get(fq_meta_annotations(pod), FQ_ANN_CONSUME_PROVREQ))
            continue; /* its nodes come from its request */
        const struct fq_value *sel = fq_value_path(pod, FQ_POD_NODE_SELECTOR);
        struct fq_cap_pool *pool = NULL;
        for (size_t k = 0; !pool && k < st->npools; k++) {
            struct fq_cap_pool *p = &st->pools[k];
            if (!p->ok || p->spec.queued || !fq_capacity_pool_matches(p, sel))
                continue;
            struct fq_value *taints = fq_nodepool_node_taints(&p->spec);
            bool ok = true;
            for (size_t t = 0; ok && t < fq_value_len(taints); t++)
                ok = tolerates(pod, fq_seq_at(taints, t));
            fq_value_free(taints);
            if (ok)
                pool = p;
        }
        if (!pool)
            continue;
        int64_t req[FQ_R_N];
        fq_capacity_pod_requests(pod, req);
        struct group *g = NULL;
        for (size_t k = 0; k < gs->n && !g; k++)
            if (gs->g[k].pool == pool &&
                !memcmp(gs->g[k].req, req, sizeof(req)))
                g = &gs->g[k];
        if (!g) {
            FQ_GROW(gs->g, gs->cap, gs->n + 1);
            g = &gs->g[gs->n++];
            memset(g, 0, sizeof(*g));
            g->pool = pool;
            memcpy(g->req, req, sizeof(req));
            set_about(g, FQ_KIND_POD, list[i]->ns, list[i]->name);
        }
        g->want++;
    }
    free(list);
}

/* --- scale-up ---------------------------------------------------------- */

static void scale_up(struct fq_capacity *st, struct fq_engine *e,
                     struct fq_cap_pool *p, int64_t need,
                     const struct fq_value *about)
{
    int64_t h = p->spec.slice_hosts > 0 ? p->spec.slice_hosts : 1;
    need = (need + h - 1) / h * h;
    int64_t room = (p->spec.max_nodes - p->nodes) / h * h;
    if (room <= 0) {
        if (about)
            fq_engine_event(e, about, "Normal", "NotTriggerScaleUp",
                            "pod didn't trigger scale-up: 1 max node group "
                            "size reached (%s: %lld/%lld)",
                            p->name, (long long)p->nodes,
                            (long long)p->spec.max_nodes);
        return;
    }
    if (need > room)
        need = room;
    struct fq_cap_backoff *b = fq_capacity_backoff(st, p->name);
    if (b->until > st->now) {
        p->failed_scale_up = true;
        fq_capacity_wake(st, b->until);
        return;
    }
    if (fq_provider_demand_on(e)) {
        fq_provider_demand_create(st, e, p, need, about);
        return;
    }
    bool flex = fq_nodepool_provisioning(&p->spec) == FQ_PROV_FLEX_START;
    int64_t in_use = fq_capacity_hosts_in_use(st, p->spec.machine->name, flex);
    int64_t until = FQ_NEVER;
    bool ok;
    if (flex) {
        int64_t stock = fq_cloud_flex_stock(st->cloud, p->spec.machine->name,
                                            p->spec.location, st->now);
        ok = stock == FQ_CLOUD_UNLIMITED || in_use + need <= stock;
    } else {
        ok = fq_cloud_ondemand_ok(st->cloud, p->spec.machine->name,
                                  p->spec.location, st->now, in_use, need,
                                  &until);
    }
    if (!ok) {
        b->fails++;
        b->last_fail = st->now;
        b->until = st->now + fq_cloud_backoff_ms(st->cloud, b->fails);
        p->failed_scale_up = true;
        snprintf(p->fail_reason, sizeof(p->fail_reason),
                 "Atomic resize failed with [GCE_STOCKOUT]: %lld x %s in %s; "
                 "Google Compute Engine resources are temporarily "
                 "unavailable",
                 (long long)need, p->spec.machine->name, p->spec.location);
        const struct fq_object *po =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", p->name);
        if (po)
            fq_engine_event(e, po->obj, "Warning", "FailedToScaleUpGroup",
                            "Scale-up failed for group %s: %s", p->name,
                            p->fail_reason);
        if (about)
            fq_engine_event(e, about, "Normal", "NotTriggerScaleUp",
                            "pod didn't trigger scale-up: 1 in backoff after "
                            "failed scale-up (%s)",
                            p->name);
        st->scale_up_failures++;
        fq_capacity_wake(st, b->until);
        return;
    }
    int64_t before = p->nodes;
    for (int64_t n = 0; n < need; n += h)
        fq_capacity_add_slice(st, e, p, NULL);
    b->fails = 0;
    b->until = -1;
    st->scale_ups++;
    const struct fq_object *po =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", p->name);
    if (po)
        fq_engine_event(e, po->obj, "Normal", "ScaledUpGroup",
                        "Scale-up: setting group %s size to %lld instead of "
                        "%lld (max: %lld)",
                        p->name, (long long)p->nodes, (long long)before,
                        (long long)p->spec.max_nodes);
    if (about)
        fq_engine_event(e, about, "Normal", "TriggeredScaleUp",
                        "pod triggered scale-up: [{%s %lld->%lld (max: %lld)}]",
                        p->name, (long long)before, (long long)p->nodes,
                        (long long)p->spec.max_nodes);
}

/* Takes a group's pods off the room left on a booting node (this pass). */
static void take_room(struct fq_capacity *st, struct fq_cap_node *nd,
                      const struct group *g, int64_t *left)
{
    if (nd->room_pass != st->run_id) {
        nd->room_pass = st->run_id;
        for (int k = 0; k < FQ_R_N; k++)
            nd->room[k] = nd->alloc[k] - nd->used[k];
    }
    int64_t n = fq_capacity_fits(nd->room, g->req);
    if (n == INT64_MAX || n > *left)
        n = *left;
    for (int k = 0; k < FQ_R_N; k++)
        nd->room[k] -= g->req[k] * n;
    *left -= n;
}

/* Room on booting nodes counts as coming capacity; the rest scales up. */
static void scale_for_groups(struct fq_capacity *st, struct fq_engine *e,
                             struct groups *gs)
{
    if (gs->n == 0)
        return; /* most runs: no demand left */
    int64_t *need = fq_xcalloc(st->npools + 1, sizeof(*need));
    const struct group **first = fq_xcalloc(st->npools + 1, sizeof(*first));
    for (size_t gi = 0; gi < gs->n; gi++) {
        struct group *g = &gs->g[gi];
        int64_t left = g->want - g->placed;
        if (left <= 0 || g->provreq || g->pool->spec.queued)
            continue;
        /* The pool's booting nodes, in node order (not a queued pool:
         * all of them may take the group). */
        const struct fq_cap_nodes *bn = &g->pool->booting;
        for (size_t i = 0; left > 0 && i < bn->n; i++)
            if (!bn->v[i]->ready && !bn->v[i]->gone)
                take_room(st, bn->v[i], g, &left);
        for (size_t i = 0; left > 0 && i < st->created.n; i++) {
            struct fq_cap_node *nd = st->created.v[i];
            if (!nd->ready && !nd->gone && nd->p == g->pool)
                take_room(st, nd, g, &left);
        }
        if (left <= 0)
            continue;
        int64_t cpu, mem, per;
        int64_t full[FQ_R_N] = {0};
        fq_catalog_allocatable(g->pool->spec.machine, &cpu, &mem);
        full[FQ_R_CPU] = cpu;
        full[FQ_R_MEM] = mem;
        if (fq_catalog_is_tpu(g->pool->spec.machine))
            full[FQ_R_TPU] = g->pool->spec.machine->accel_count;
        else
            full[FQ_R_GPU] = g->pool->spec.machine->accel_count;
        full[FQ_R_PODS] = 110;
        per = fq_capacity_fits(full, g->req);
        if (per <= 0) {
            const struct fq_value *a = about(e, g);
            if (a)
                fq_engine_event(e, a, "Normal", "NotTriggerScaleUp",
                                "pod didn't trigger scale-up: 1 node(s) of "
                                "%s would not fit it",
                                g->pool->name);
            continue;
        }
        if (per == INT64_MAX)
            per = left;
        size_t pi = (size_t)(g->pool - st->pools);
        need[pi] += (left + per - 1) / per;
        if (!first[pi] && g->about_name)
            first[pi] = g;
    }
    for (size_t pi = 0; pi < st->npools; pi++)
        if (need[pi] > 0)
            scale_up(st, e, &st->pools[pi], need[pi], about(e, first[pi]));
    free(first);
    free(need);
}

/* Pools at least at their minimum (and initialNodeCount when new). */
static void fill_minimum(struct fq_capacity *st, struct fq_engine *e)
{
    for (size_t i = 0; i < st->npools; i++) {
        struct fq_cap_pool *p = &st->pools[i];
        if (!p->ok || p->spec.queued)
            continue;
        int64_t target = p->spec.min_nodes;
        if (p->spec.initial_nodes > target &&
            !fq_value_path(p->obj, "status.initialized"))
            target = p->spec.initial_nodes;
        if (p->nodes < target)
            scale_up(st, e, p, target - p->nodes, NULL);
    }
}

/* --- stockout fallback ---------------------------------------------------- */

static void add_avoid(struct fq_value *wl, const char *flavor, int64_t until,
                      int64_t now)
{
    struct fq_value *ann =
        fq_map_ensure_map(fq_map_ensure_map(wl, "metadata"), "annotations");
    const char *old = fq_value_as_str(fq_map_get(ann, FQ_ANN_AVOID_FLAVORS));
    char *buf = fq_xstrdup(old ? old : "");
    char out[1024] = "";
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int64_t t;
        if (!eq || fq_time_parse(eq + 1, &t) < 0 || t <= now)
            continue;
        *eq = 0;
        if (!strcmp(tok, flavor))
            continue;
        *eq = '=';
        if (*out)
            strncat(out, ",", sizeof(out) - strlen(out) - 1);
        strncat(out, tok, sizeof(out) - strlen(out) - 1);
    }
    free(buf);
    char ts[40], entry[300];
    fq_time_format(until, ts, sizeof(ts));
    snprintf(entry, sizeof(entry), "%s%s=%s", *out ? "," : "", flavor, ts);
    strncat(out, entry, sizeof(out) - strlen(out) - 1);
    fq_map_set(ann, FQ_ANN_AVOID_FLAVORS, fq_value_str(out));
}

static void stockout_fallback(struct fq_capacity *st, struct fq_engine *e)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    if (!cfg->policy.stockout_fallback)
        return;
    /* Only workloads on a pool that failed to scale up can fall back: with
     * none (the usual case) there is nothing to look at. */
    bool any_failed = false;
    for (size_t i = 0; i < st->npools && !any_failed; i++)
        any_failed = st->pools[i].failed_scale_up;
    if (!any_failed)
        return;
    const struct fq_object **list;
    size_t n = fq_capacity_watched(st, e, &list);
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *wl = list[i]->obj;
        const struct fq_value *s = fq_map_get(wl, "status");
        if (!fq_capacity_workload_active(wl) ||
            cond_is(s, "PodsReady", "True") ||
            fq_value_len(fq_map_get(s, "admissionChecks")) > 0)
            continue;
        int64_t admitted = fq_cond_in_status_time(s, "Admitted");
        const struct fq_value *psas =
            fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
        for (size_t k = 0; k < fq_value_len(psas); k++) {
            const struct fq_value *psa = fq_seq_at(psas, k);
            const char *flavor = assignment_flavor(psa);
            struct fq_cap_pool *p = flavor_pool(
                st, e, flavor,
                find_podset(wl, fq_value_path_str(psa, "name", "")));
            if (!p || !flavor || !p->failed_scale_up)
                continue;
            int64_t deadline =
                admitted +
                fq_time_scaled(e, cfg->policy.stockout_fallback_after_ms);
            if (st->now < deadline) {
                fq_capacity_wake(st, deadline);
                continue;
            }
            struct fq_value *o =
                fq_objstore_edit(fq_engine_store(e), FQ_KIND_WORKLOAD,
                                 list[i]->ns, list[i]->name);
            if (!o)
                break;
            char msg[512];
            snprintf(
                msg, sizeof(msg),
                "Nodes for flavor %s (node pool %s) could not be "
                "provisioned within %llds: %s",
                flavor, p->name,
                (long long)(fq_time_scaled(
                                e, cfg->policy.stockout_fallback_after_ms) /
                            1000),
                p->fail_reason[0] ? p->fail_reason : "stockout");
            fq_cond_status_set(fq_map_ensure_map(o, "status"), "Evicted",
                               "True", "NodesUnavailable", msg, st->now);
            add_avoid(o, flavor,
                      st->now +
                          fq_time_scaled(e, cfg->policy.flavor_cooldown_ms),
                      st->now);
            fq_engine_event(e, o, "Warning", "NodesUnavailable", "%s", msg);
            fq_objstore_update(fq_engine_store(e), o, true, NULL, NULL, NULL);
            break;
        }
    }
    free(list);
}

/* --- scale-down -------------------------------------------------------------- */

/* A node still booked by a live, unconsumed ProvisioningRequest. */
static bool booked(struct fq_engine *e, const struct fq_cap_node *nd)
{
    if (!nd->provreq)
        return false;
    const struct fq_object *pr =
        fq_capacity_keyed(e, FQ_KIND_PROVISIONINGREQUEST, nd->provreq);
    if (!pr)
        return false;
    const struct fq_value *s = fq_map_get(pr->obj, "status");
    if (fq_provreq_terminal(s))
        return false;
    return !fq_map_get(fq_map_get(s, "provisioningClassDetails"),
                       "flexq.dev/consumed");
}

static void set_unneeded(struct fq_capacity *st, struct fq_engine *e,
                         struct fq_cap_node *nd, int64_t t)
{
    /* In place: only one annotation of a big tree changes. */
    struct fq_objstore *s = fq_engine_store(e);
    struct fq_value *o =
        fq_objstore_edit_in_place(s, FQ_KIND_NODE, "", nd->name);
    if (!o)
        return;
    struct fq_value *md = fq_map_ensure_map(o, "metadata");
    bool changed = !fq_map_get(md, "annotations");
    struct fq_value *ann = fq_map_ensure_map(md, "annotations");
    const char *cur = fq_value_as_str(fq_map_get(ann, FQ_ANN_UNNEEDED));
    if (t == FQ_NEVER) {
        changed |= fq_map_get(ann, FQ_ANN_UNNEEDED) != NULL;
        fq_map_del(ann, FQ_ANN_UNNEEDED);
    } else {
        char ts[40];
        fq_time_format_ms(t, ts, sizeof(ts));
        if (!cur || strcmp(cur, ts)) {
            fq_map_set(ann, FQ_ANN_UNNEEDED, fq_value_str(ts));
            changed = true;
        }
    }
    if (changed)
        fq_objstore_edited(s, FQ_KIND_NODE, "", nd->name, false);
    /* The store keeps the exact time (milliseconds) too, so the entry
     * stays in step with it: the next run need not decode the node
     * again. */
    fq_capacity_node_unneeded(st, nd, t, false);
    if (changed)
        fq_capacity_node_stored(st, e, nd);
}

static void sd_set(struct fq_capacity *st, struct fq_cap_node *nd, int sd)
{
    nd->sd = sd;
    if (sd == FQ_SD_DUE && !nd->sd_in_due) {
        nd->sd_in_due = true;
        fq_capacity_nodes_add(&st->sd_due, nd);
        st->sd_gen++;
    } else if (sd != FQ_SD_DUE && nd->sd_in_due) {
        nd->sd_in_due = false;
        fq_capacity_nodes_remove(&st->sd_due, nd);
        st->sd_gen++;
    }
}

/* An idle-heap entry still stands for its node's unneeded time. */
static bool idle_valid(struct fq_capacity *st, const struct fq_cap_hent *h,
                       int64_t unneeded)
{
    const struct fq_cap_node *nd = fq_capacity_node(st, h->key);
    return nd && !nd->gone && nd->sd == FQ_SD_WAIT &&
           nd->unneeded_since + unneeded == h->t;
}

/*
 * Scale-down. Each Ready node is, between runs, in one of three steady
 * states: busy (placed, bound or booked) with no unneeded-since time;
 * unneeded with a time not up yet (in the idle heap); unneeded long
 * enough (in the due set). A walk over every node would write nothing
 * for a node in a steady state; so this looks at the nodes marked since
 * (sd_dirty: new, decoded again, Ready now, placements or pods changed,
 * their request changed), in node order, as that walk would, then at the
 * heap's nodes whose time came, then at the due set as the candidates.
 */
static void scale_down(struct fq_capacity *st, struct fq_engine *e)
{
    int64_t unneeded = fq_cloud_unneeded_ms(st->cloud);
    struct fq_cap_nodes dirty = st->sd_dirty;
    memset(&st->sd_dirty, 0, sizeof(st->sd_dirty));
    fq_capacity_nodes_sort(&dirty);
    for (size_t i = 0; i < dirty.n; i++) {
        struct fq_cap_node *nd = dirty.v[i];
        nd->sd_listed = false;
        if (nd->gone)
            continue;
        if (!nd->ready) {
            sd_set(st, nd, FQ_SD_NONE);
            continue;
        }
        if (nd->busy > 0 || booked(e, nd)) {
            if (nd->unneeded_since != FQ_NEVER)
                set_unneeded(st, e, nd, FQ_NEVER);
            sd_set(st, nd, FQ_SD_BUSY);
            continue;
        }
        if (nd->unneeded_since == FQ_NEVER)
            set_unneeded(st, e, nd, st->now);
        if (st->now >= nd->unneeded_since + unneeded) {
            sd_set(st, nd, FQ_SD_DUE);
        } else {
            sd_set(st, nd, FQ_SD_WAIT);
            fq_capacity_heap_push(&st->idle_heap, nd->unneeded_since + unneeded,
                                  nd->name, 0);
        }
    }
    free(dirty.v);
    const struct fq_cap_hent *h;
    while ((h = fq_capacity_heap_top(&st->idle_heap)) && h->t <= st->now) {
        if (idle_valid(st, h, unneeded))
            sd_set(st, fq_capacity_node(st, h->key), FQ_SD_DUE);
        fq_capacity_heap_pop(&st->idle_heap);
    }
    while ((h = fq_capacity_heap_top(&st->idle_heap))) {
        if (idle_valid(st, h, unneeded)) {
            fq_capacity_wake(st, h->t);
            break;
        }
        fq_capacity_heap_pop(&st->idle_heap);
    }
    /* A choice that deleted nothing would delete nothing again while
     * what it depends on stays (sd_gen): due nodes that cannot go (a
     * pool at its minimum, a slice partly busy) are not looked at run
     * after run. A provider is asked again each time instead. */
    bool provider = fq_provider_demand_on(e);
    if (!provider && st->sd_gen == st->sd_idle_gen)
        return;
    uint64_t gen = st->sd_gen;
    /* The candidates, in node order; a slice goes when all its nodes are
     * candidates. */
    struct fq_cap_nodes cand = {0};
    size_t m = 0;
    for (size_t i = 0; i < st->sd_due.n; i++) {
        struct fq_cap_node *nd = st->sd_due.v[i];
        if (nd->gone) {
            nd->sd_in_due = false;
            continue;
        }
        st->sd_due.v[m++] = nd;
        nd->cand_run = st->run_id;
        fq_capacity_nodes_add(&cand, nd);
    }
    st->sd_due.n = m;
    fq_capacity_nodes_sort(&cand);
    for (size_t i = 0; i < cand.n; i++) {
        struct fq_cap_node *nd = cand.v[i];
        if (nd->gone)
            continue;
        struct fq_cap_pool *p = nd->p;
        const struct fq_cap_nodes *sl = fq_capacity_slice(st, nd->slice);
        int64_t size = sl ? (int64_t)sl->n : 0;
        bool all = true;
        for (int64_t k = 0; k < size; k++)
            all &= sl->v[k]->cand_run == st->run_id;
        if (!all || !p)
            continue;
        if (p->ok && !nd->provreq && p->nodes - size < p->spec.min_nodes)
            continue;
        char why[400];
        snprintf(why, sizeof(why),
                 "Scale-down: removing empty node %s (unneeded for %llds)",
                 nd->name, (long long)((st->now - nd->unneeded_since) / 1000));
        if (provider)
            fq_provider_demand_delete(st, e, nd->slice, why);
        else
            fq_capacity_delete_slice(st, e, nd->slice, why);
        st->scale_downs++;
    }
    free(cand.v);
    st->sd_idle_gen = st->sd_gen == gen ? gen : UINT64_MAX;
}

void fq_autoscaler_run(struct fq_capacity *st, struct fq_engine *e)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    struct groups gs = {0};
    if (cfg->no_pods) {
        unplace_inactive(st, e);
        collect_workloads(st, e, &gs);
        for (size_t i = 0; i < gs.n; i++)
            place_group(st, e, &gs.g[i]);
    } else {
        collect_pods(st, e, &gs);
    }
    if (fq_provider_demand_on(e))
        fq_provider_demand_reconcile(st, e);
    if (cfg->sim_provider || cfg->provider_demand) {
        fill_minimum(st, e);
        scale_for_groups(st, e, &gs);
    }
    /* Pools still backing off keep failing until their backoff ends
     * (while they have demand: without groups there is none). */
    for (size_t i = 0; gs.n > 0 && i < st->npools; i++) {
        struct fq_cap_backoff *b = fq_capacity_backoff(st, st->pools[i].name);
        if (b->until > st->now && !st->pools[i].failed_scale_up) {
            bool demand = false;
            for (size_t g = 0; g < gs.n; g++)
                demand |= gs.g[g].pool == &st->pools[i] &&
                          gs.g[g].placed < gs.g[g].want;
            st->pools[i].failed_scale_up = demand;
        }
    }
    stockout_fallback(st, e);
    if (cfg->no_pods && gs.n > 0) {
        /* Second placement pass: nodes that became ready in this run. */
        groups_release(&gs);
        memset(&gs, 0, sizeof(gs));
        collect_workloads(st, e, &gs);
        for (size_t i = 0; i < gs.n; i++)
            place_group(st, e, &gs.g[i]);
    }
    if (cfg->sim_provider || cfg->provider_demand)
        scale_down(st, e);
    groups_release(&gs);
}
