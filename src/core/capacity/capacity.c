/*
 * capacity.c - the "capacity" controller: the cloud and the cluster
 * autoscaler, over NodePool, Node, ProvisioningRequest and CapacityModel
 * objects.
 *
 * How it works. Each run (kicked by a change of a watched kind, or woken
 * by a deadline it asked for) does, at one instant `now`:
 *
 *   1. bootstrap   once per engine: in a fresh cluster (no default-pool
 *                  and no Node at all) create `default-pool` (n2-standard-16,
 *                  one node, autoscaling 1..3), like a new GKE cluster, so
 *                  the tutorial's Ray head has somewhere to run; its first
 *                  node is Ready at once (GKE's `clusters create` returns
 *                  once the default pool's nodes are up);
 *   2. refresh     bring the node table up to date: nodes deleted in the
 *                  last run leave, nodes it created take their place in
 *                  name order, pools are decoded again if one changed, and
 *                  each Node on_change named (not those whose change is
 *                  this controller's own write, held in step already) is
 *                  compared with the store and decoded again if its
 *                  resourceVersion moved (charges are accrued first when
 *                  pools or prices change);
 *   3. model       rebuild the cloud from the CapacityModel (the first by
 *                  name) when it changed; none = an unlimited cloud; then
 *                  every node and request is looked at again;
 *   4. boot        nodes whose boot latency has passed become Ready;
 *   5. cost        accrue node-seconds x price (cost.c);
 *   6. provreqs    move ProvisioningRequests along (provreq.c);
 *   7. autoscaler  place, scale up, back off, scale down, fall back
 *                  (autoscaler.c);
 *   8. status      write each pool's node counts and conditions (at most
 *                  once per status_every_ms when the engine says so).
 *
 * The node table is kept between runs, so a run costs what changed, not
 * what is stored (on_change names the Nodes, pools, pods and workloads to
 * look at again). It holds, for every stored Node, its decoded form
 * (struct fq_cap_node), and these indices, with their invariants at the
 * start of each step above from 4 on:
 *
 *   node_by_name  name -> node, every node of the table (gone ones too);
 *   sorted        the nodes there when the run started, by name; nodes
 *                 created by this run are in `created`, in creation order
 *                 (born 1, 2, ...), and a run sees nodes in that order
 *                 (fq_capacity_node_order), as a list rebuilt from the
 *                 store at the start of the run and appended to would;
 *   pool up/booting  the nodes of `sorted` of a pool that are Ready / not
 *                 Ready, by name; pool nodes/ready count its nodes that
 *                 are not gone;
 *   by_slice, by_provreq  slice id / request key -> its nodes not gone;
 *   orphans       nodes not gone whose pool does not exist;
 *   boot_heap     every node not Ready with a ready-at time has an entry
 *                 (time, name) (stale entries are dropped at the top);
 *   wls           (no_pods) workload -> every placement of it on a node
 *                 not gone;
 *   pool fit      unless fit_stale, a segment tree over `up` whose
 *                 leaves are the free room of the nodes groups may use
 *                 (first fit without visiting full nodes);
 *   gone          nodes deleted during this run (they stay in the lists
 *                 above, marked, until the next run).
 *
 * A node entry agrees with the stored Node of its resourceVersion; where
 * a run writes a Node and keeps its entry in step, it takes the new
 * resourceVersion (fq_capacity_node_stored), else the next run decodes it
 * again (a stored time has second precision: the unneeded-since time a
 * run sets in memory is exact, the one decoded from the store is not, as
 * it always was).
 *
 * A node's life:
 *
 *        add_slice            ready-at passed        unneeded for
 *   (none) ------> Booting ------------------> Ready ----------------> (deleted)
 *                  Ready=False                 Ready=True   scale-down, or
 *                  flexq.dev/ready-at                       booking expiry,
 *                                                           revocation,
 *                                                           request failure
 *
 * Invariants:
 *  1. Nodes of a slice are created in one call and deleted in one call:
 *     no settle ever ends with part of a multi-host slice.
 *  2. A pool never has more than its maxNodeCount nodes, nor (by
 *     scale-down) fewer than its minNodeCount.
 *  3. Every node carries cloud.google.com/gke-nodepool of an existing pool;
 *     nodes of a deleted pool are deleted.
 *
 * What it does not do: bind pods (binder.c), decide admission (kueue), or
 * talk to a real cloud (the daemon's providers report Nodes when
 * sim_provider is false; then this controller creates none).
 */
#include "capacity/capacity.h"
#include "capacity/autoscaler.h"
#include "capacity/common.h"
#include "capacity/cost.h"
#include "capacity/nodes.h"
#include "capacity/provider_demand.h"
#include "capacity/provider_protocol.h"
#include "capacity/provreq.h"
#include "capacity/slices.h"
#include "capacity/watch.h"
#include "flexq/conditions.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "flexq/timefmt.h"

/* --- small helpers -------------------------------------------------------- */

static bool str_is(const struct fq_value *m, const char *key, const char *v)
{
    const char *have = fq_value_as_str(fq_map_get(m, key));
    return have && !strcmp(have, v);
}

/* --- run steps ---------------------------------------------------------------- */

static void bootstrap(struct fq_capacity *st, struct fq_engine *e)
{
    if (st->bootstrapped)
        return;
    st->bootstrapped = true;
    if (!fq_engine_config(e)->sim_provider)
        return;
    /* A fresh cluster: no default-pool and no nodes yet (a restarted one
     * has its nodes, so a deleted default-pool stays deleted as long as
     * the cluster has any node). */
    if (fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "",
                        FQ_NODEPOOL_DEFAULT) ||
        fq_objstore_count(fq_engine_store(e), FQ_KIND_NODE) > 0)
        return;
    char uid[40];
    snprintf(uid, sizeof(uid), "%016llx-pool",
             (unsigned long long)fq_engine_rand(e));
    st->default_pool_fresh =
        fq_objstore_create(fq_engine_store(e), fq_nodepool_default_object(),
                           st->now, uid, NULL, NULL) == 0;
}

/* Whether the cloud must be built again (the CapacityModel changed). */
static bool model_stale(struct fq_capacity *st, struct fq_engine *e)
{
    if (!st->model_seen || !st->cloud)
        return true;
    if (!st->model_dirty)
        return false;
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_CAPACITYMODEL, NULL,
                                &list);
    uint64_t rv = n ? list[0]->rv : 0;
    free(list);
    if (rv == st->model_rv)
        st->model_dirty = false;
    return rv != st->model_rv;
}

static void load_model(struct fq_capacity *st, struct fq_engine *e)
{
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_CAPACITYMODEL, NULL,
                                &list);
    const struct fq_object *m = n ? list[0] : NULL;
    uint64_t rv = m ? m->rv : 0;
    int64_t origin = st->now;
    const char *ct =
        m ? fq_value_path_str(m->obj, FQ_META_CREATED, NULL) : NULL;
    if (ct)
        fq_time_parse(ct, &origin);
    struct fq_err err = {0};
    struct fq_cloud *c = fq_cloud_new(
        m ? m->obj : NULL, fq_engine_config(e)->time_scale, origin, &err);
    if (!c) {
        fq_engine_event(e, m->obj, "Warning", "InvalidModel", "%s", err.msg);
        c = fq_cloud_new(NULL, fq_engine_config(e)->time_scale, origin, NULL);
    }
    char why[512];
    if (m && fq_cloud_never_provisions(c, why, sizeof(why)))
        fq_engine_event(e, m->obj, "Warning", "NeverProvisions", "%s", why);
    fq_cloud_free(st->cloud);
    st->cloud = c;
    st->cloud_gen++;
    st->model_seen = true;
    st->model_dirty = false;
    st->model_rv = rv;
    free(list);
    /* Idle times, prices and request deadlines may all have moved. */
    for (size_t i = 0; i < st->sorted.n; i++)
        fq_capacity_sd_mark(st, st->sorted.v[i]);
    fq_provreq_all_changed(st);
}

static void boot_nodes(struct fq_capacity *st, struct fq_engine *e)
{
    /* The due nodes, then in node order as a walk over all would edit
     * them. */
    struct fq_cap_nodes due = {0};
    const struct fq_cap_hent *h;
    while ((h = fq_capacity_heap_top(&st->boot_heap)) && h->t <= st->now) {
        struct fq_cap_node *nd = fq_capacity_node(st, h->key);
        if (nd && !nd->gone && !nd->ready && nd->ready_at == h->t)
            fq_capacity_nodes_add(&due, nd);
        fq_capacity_heap_pop(&st->boot_heap);
    }
    fq_capacity_nodes_sort(&due);
    for (size_t i = 0; i < due.n; i++) {
        struct fq_cap_node *nd = due.v[i];
        if (nd->ready) /* listed twice */
            continue;
        /* In place: a node is a big tree, and only its Ready condition
         * and one annotation change. */
        struct fq_objstore *s = fq_engine_store(e);
        struct fq_value *o =
            fq_objstore_edit_in_place(s, FQ_KIND_NODE, "", nd->name);
        if (!o)
            continue;
        bool changed = !fq_map_get(o, "status");
        changed |= fq_cond_status_set(
            fq_map_ensure_map(o, "status"), "Ready", "True", "KubeletReady",
            "kubelet is posting ready status", st->now);
        struct fq_value *md = fq_map_ensure_map(o, "metadata");
        struct fq_value *ann = fq_map_get(md, "annotations");
        if (!ann)
            changed = true;
        else if (fq_map_get(ann, FQ_ANN_READY_AT))
            changed = true;
        fq_map_del(fq_map_ensure_map(md, "annotations"), FQ_ANN_READY_AT);
        if (changed)
            fq_objstore_edited(s, FQ_KIND_NODE, "", nd->name, false);
        fq_capacity_node_ready(st, nd);
        fq_capacity_node_stored(st, e, nd);
    }
    free(due.v);
    /* The earliest boot still to come. */
    while ((h = fq_capacity_heap_top(&st->boot_heap))) {
        struct fq_cap_node *nd = fq_capacity_node(st, h->key);
        if (nd && !nd->gone && !nd->ready && nd->ready_at == h->t) {
            fq_capacity_wake(st, h->t);
            break;
        }
        fq_capacity_heap_pop(&st->boot_heap);
    }
}

/* Nodes whose pool is gone go too (whole slices). */
static void orphans(struct fq_capacity *st, struct fq_engine *e)
{
    if (!fq_engine_config(e)->sim_provider || st->orphans.n == 0)
        return;
    struct fq_cap_nodes v = {0};
    for (size_t i = 0; i < st->orphans.n; i++)
        fq_capacity_nodes_add(&v, st->orphans.v[i]);
    fq_capacity_nodes_sort(&v);
    for (size_t i = 0; i < v.n; i++)
        if (!v.v[i]->gone)
            fq_capacity_delete_slice(st, e, v.v[i]->slice,
                                     "node pool deleted: node removed");
    free(v.v);
}

/* The pool's stored status holds what pool_status would write. */
static void pool_shown(struct fq_cap_pool *p, const struct fq_object *o)
{
    p->shown_rv = o->rv;
    p->shown_held = true;
    p->shown_nodes = p->nodes;
    p->shown_ready = p->ready;
    p->shown_failed = p->failed_scale_up;
    snprintf(p->shown_reason, sizeof(p->shown_reason), "%s", p->fail_reason);
}

/* An integer member equal to n, as fq_value_equal compares it with
 * fq_value_int(n) (for counts, far below 2^53). */
static bool int_is(const struct fq_value *v, int64_t n)
{
    return v && v->type == FQ_V_NUM && v->u.num.is_int && v->u.num.i == n;
}

/* Would pool_status's writes change the stored status cs (which
 * members they set and how, compared as fq_value_equal would)? */
static bool pool_status_differs(const struct fq_value *cs,
                                const struct fq_cap_pool *p, const char *phase)
{
    if (!cs || cs->type != FQ_V_MAP ||
        !int_is(fq_map_get(cs, "nodeCount"), p->nodes) ||
        !int_is(fq_map_get(cs, "readyNodeCount"), p->ready) ||
        !str_is(cs, "phase", phase))
        return true;
    if (!p->ok)
        return false;
    const struct fq_value *init = fq_map_get(cs, "initialized");
    if (!init || init->type != FQ_V_BOOL || !init->u.b)
        return true;
    if (p->failed_scale_up)
        return fq_cond_status_differs(cs, "ScaleUp", "False", "GCE_STOCKOUT",
                                      p->fail_reason);
    return fq_cond_in_status(cs, "ScaleUp") &&
           fq_cond_status_differs(cs, "ScaleUp", "True", "Ok",
                                  "scale-up possible");
}

static void pool_status(struct fq_capacity *st, struct fq_engine *e)
{
    for (size_t i = 0; i < st->npools; i++) {
        struct fq_cap_pool *p = &st->pools[i];
        if (!fq_capacity_pool_rewrite_due(st, e, p->throttled.status_written))
            continue;
        /* Most runs change nothing here: skip what was found equal or
         * written already, else compare before writing. While no notice
         * of the pool came, the store need not even be asked. */
        bool same = p->shown_nodes == p->nodes && p->shown_ready == p->ready &&
                    p->shown_failed == p->failed_scale_up &&
                    !strcmp(p->shown_reason, p->fail_reason);
        if (same && p->shown_held)
            continue;
        const struct fq_object *cur =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", p->name);
        if (!cur)
            continue;
        if (same && cur->rv == p->shown_rv)
            continue;
        const struct fq_value *cs = fq_map_get(cur->obj, "status");
        const struct fq_value *cond = fq_cond_in_status(cs, "ScaleUp");
        const char *cst = fq_value_path_str(cond, "status", "");
        bool cond_ok =
            !p->ok || (p->failed_scale_up ?
                           !strcmp(cst, "False") &&
                               !strcmp(fq_value_path_str(cond, "message", ""),
                                       p->fail_reason) :
                           !cond || !strcmp(cst, "True"));
        const char *phase = !p->ok               ? "Error" :
                            p->nodes == p->ready ? "Running" :
                                                   "Reconciling";
        if (cond_ok && fq_value_path_int(cs, "nodeCount", -1) == p->nodes &&
            fq_value_path_int(cs, "readyNodeCount", -1) == p->ready &&
            fq_value_path_bool(cs, "initialized", false) == p->ok &&
            !strcmp(fq_value_path_str(cs, "phase", ""), phase)) {
            pool_shown(p, cur);
            continue;
        }
        /* The members below are written in place (the pool is there:
         * `cur`), without copying or comparing the whole status, when
         * they change it. */
        if (pool_status_differs(cs, p, phase)) {
            struct fq_objstore *store = fq_engine_store(e);
            struct fq_value *o =
                fq_objstore_edit_in_place(store, FQ_KIND_NODEPOOL, "", p->name);
            struct fq_value *s = fq_map_ensure_map(o, "status");
            fq_map_set(s, "nodeCount", fq_value_int(p->nodes));
            if (p->ok)
                fq_map_set(s, "initialized", fq_value_bool(true));
            fq_map_set(s, "readyNodeCount", fq_value_int(p->ready));
            fq_map_set(s, "phase", fq_value_str(phase));
            if (p->ok) {
                if (p->failed_scale_up)
                    fq_cond_status_set(s, "ScaleUp", "False", "GCE_STOCKOUT",
                                       p->fail_reason, st->now);
                else if (fq_cond_in_status(s, "ScaleUp"))
                    fq_cond_status_set(s, "ScaleUp", "True", "Ok",
                                       "scale-up possible", st->now);
            }
            fq_objstore_edited(store, FQ_KIND_NODEPOOL, "", p->name, false);
            p->throttled.status_written = st->now;
        }
        const struct fq_object *now =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", p->name);
        if (now)
            pool_shown(p, now);
    }
}

/* --- controller ops --------------------------------------------------------- */

static void *cap_create(struct fq_engine *e)
{
    struct fq_capacity *st = fq_xcalloc(1, sizeof(*st));
    /* The node table's notices to the modules above it (state.h). */
    st->hooks.accrue = fq_cost_accrue;
    st->hooks.provreq_nodes_changed = fq_provreq_nodes_changed;
    st->hooks.provreq_counts_changed = fq_provreq_counts_changed;
    st->hooks.provreq_all_changed = fq_provreq_all_changed;
    st->wake = FQ_NEVER;
    st->sd_idle_gen = UINT64_MAX;
    st->no_pods = fq_engine_config(e)->no_pods;
    return st;
}

static void cap_destroy(void *self)
{
    struct fq_capacity *st = self;
    if (!st)
        return;
    for (size_t i = 0; i < st->sorted.n; i++)
        fq_capacity_node_free(st->sorted.v[i]);
    for (size_t i = 0; i < st->created.n; i++)
        fq_capacity_node_free(st->created.v[i]);
    free(st->sorted.v);
    free(st->created.v);
    free(st->gone.v);
    free(st->orphans.v);
    free(st->sd_dirty.v);
    free(st->sd_due.v);
    fq_capacity_heap_free(&st->boot_heap);
    fq_capacity_heap_free(&st->idle_heap);
    fq_smap_free(&st->node_by_name);
    for (size_t i = 0; i < st->nnode_dirty; i++)
        free(st->node_dirty[i]);
    free(st->node_dirty);
    fq_smap_free(&st->by_slice);
    fq_smap_free(&st->by_provreq);
    fq_capacity_pools_free(st);
    for (size_t i = 0; i < st->nbo; i++)
        free(st->bo[i].pool);
    free(st->bo);
    fq_cloud_free(st->cloud);
    fq_cost_release(st);
    fq_provreq_release(st);
    fq_smap_free(&st->wls);
    fq_smap_free(&st->watch);
    for (size_t i = 0; i < st->nunsettled; i++)
        free(st->unsettled[i]);
    free(st->unsettled);
    free(st->ulist);
    fq_smap_free(&st->stopped);
    for (size_t i = 0; i < st->nstopped_keys; i++)
        free(st->stopped_keys[i]);
    free(st->stopped_keys);
    fq_smap_free(&st->pods);
    fq_smap_free(&st->podsum);
    fq_smap_free(&st->unsched);
    free(st);
}

/* Is a Node's change one the node table already holds (a write of this
 * controller that kept its entry in step, fq_capacity_node_stored)? A
 * later change has a notice of its own. */
static bool node_in_step(struct fq_capacity *st, const struct fq_change *c)
{
    if (c->type != FQ_CHANGE_MODIFIED)
        return false;
    const struct fq_cap_node *n = fq_smap_get(&st->node_by_name, c->name);
    return n && !n->gone && n->rv == c->rev;
}

/* A stored pool changed: its decoded form is stale only if its spec did
 * (our status writes keep the generation). True if only its status did. */
static bool pool_note(struct fq_capacity *st, const struct fq_change *c)
{
    if (c->type != FQ_CHANGE_MODIFIED || !c->obj) {
        st->pools_dirty = true;
        return false;
    }
    struct fq_cap_pool *p = fq_capacity_pool(st, c->name);
    if (!p ||
        p->generation != fq_value_path_int(c->obj, FQ_META_GENERATION, 0)) {
        st->pools_dirty = true;
        return false;
    }
    p->shown_held = false; /* pool_status looks at the store again */
    return true;
}

/* Whether a run at this instant has something to do that no wake-up
 * asked for: something marked for the next run. */
static bool marked_for_next_run(const struct fq_capacity *st)
{
    return st->nstopped_keys > 0 || st->sd_dirty.n > 0 || st->pools_dirty ||
           st->model_dirty || fq_provreq_pending(st);
}

static void cap_on_change(void *self, struct fq_engine *e,
                          const struct fq_change *c)
{
    struct fq_capacity *st = self;
    /* Whether the change is one our tables hold already (our own write,
     * taken in step by the run that made it): a run for it would change
     * nothing. */
    bool in_step = false;
    /* A workload matters only while watched (pending ones come and go in
     * a deep queue without anything here to do). */
    if (c->kind == FQ_KIND_POD && st->pods_seeded)
        fq_capacity_pod_note(st, c->ns, c->name,
                             c->type == FQ_CHANGE_DELETED ? NULL : c->obj);
    if (c->kind == FQ_KIND_WORKLOAD && st->watch_seeded) {
        char buf[600];
        uint64_t hash;
        const char *key = fq_capacity_change_key(c, buf, sizeof(buf), &hash);
        enum fq_cap_watch_news news = fq_capacity_watch_note_key(
            st, key, hash, c->type == FQ_CHANGE_DELETED ? NULL : c->obj,
            c->rev);
        if (news == FQ_CAP_WATCH_NONE)
            return;
        in_step = news == FQ_CAP_WATCH_IN_STEP;
    }
    switch (c->kind) {
    case FQ_KIND_NODE:
        if (st->nodes_seeded && !node_in_step(st, c)) {
            FQ_GROW(st->node_dirty, st->capnode_dirty, st->nnode_dirty + 1);
            st->node_dirty[st->nnode_dirty++] = fq_xstrdup(c->name);
        }
        /* A node we made is in the node table already; while it boots,
         * its boot wake-up brings the run that can use it. One made
         * Ready (no boot time) or deleted can let a group waiting in
         * this run fit or scale up at once: that wants a run now. */
        if (c->type == FQ_CHANGE_ADDED) {
            const struct fq_cap_node *nd =
                fq_smap_get(&st->node_by_name, c->name);
            in_step = nd && !nd->gone && !nd->ready && nd->ready_at > st->now;
        }
        break;
    case FQ_KIND_NODEPOOL:
        in_step = pool_note(st, c);
        break;
    case FQ_KIND_CAPACITYMODEL:
        st->model_dirty = true;
        break;
    case FQ_KIND_RESOURCEFLAVOR:
        st->decode_gen++; /* which pool a flavor's nodes come from */
        break;
    case FQ_KIND_PROVISIONINGREQUEST: {
        if (fq_provreq_note(st, c)) {
            in_step = true;
            break;
        }
        char buf[600];
        uint64_t hash;
        const char *key = fq_capacity_change_key(c, buf, sizeof(buf), &hash);
        fq_capacity_provreq_written_h(st, key, hash);
        break;
    }
    default:
        break;
    }
    /* Our own status writes to Nodes come back here; a run after them is
     * harmless (it changes nothing) but costs time, so only changes that
     * can matter kick. */
    if (c->kind == FQ_KIND_NODE && c->type == FQ_CHANGE_MODIFIED)
        return;
    /* Nor does any other write of ours that the run which made it held in
     * step (a workload or request at the revision it wrote, a pool's
     * status, a node it made or deleted): it leaves nothing for a run at
     * this instant. A write we did not hold in step (a request written
     * twice in one run) still kicks. On Philly's first 10,000 jobs, runs
     * kicked by our own writes were 27,000 of 65,000, none of them
     * changing a stored object. */
    if (in_step && fq_engine_change_is_own(e) && !marked_for_next_run(st))
        return;
    fq_engine_kick(e, self);
}

static void cap_run(void *self, struct fq_engine *e, int64_t now)
{
    struct fq_capacity *st = self;
    st->now = now;
    st->wake = FQ_NEVER;
    st->run_id++;
    bootstrap(st, e);
    fq_capacity_watch_seed(st, e);
    bool stale = model_stale(st, e);
    /* Charges so far are at the old prices and pools. */
    if (stale || st->pools_dirty || !st->pools_seen)
        fq_cost_accrue_all(st);
    fq_capacity_refresh(st, e);
    if (stale)
        load_model(st, e);
    for (size_t i = 0; i < st->npools; i++) {
        st->pools[i].failed_scale_up = false;
        st->pools[i].fail_reason[0] = 0;
    }
    if (fq_engine_config(e)->sim_provider) {
        boot_nodes(st, e);
        orphans(st, e);
    }
    fq_cost_run(st, e);
    /* The ProvisioningRequest lifecycle: the sim's, or with an outside
     * provider the same one whose grant step asks the provider instead
     * (fq_provider_demand_provision) for queued pools. */
    if (fq_engine_config(e)->sim_provider || fq_provider_demand_on(e))
        fq_provreq_reconcile(st, e);
    fq_autoscaler_run(st, e);
    pool_status(st, e);
}

static int64_t cap_next_wakeup(const void *self)
{
    const struct fq_capacity *st = self;
    return st->wake;
}

const struct fq_controller_ops fq_capacity_controller = {
    .name = "capacity",
    .watch = FQ_KIND_BIT(FQ_KIND_NODEPOOL) | FQ_KIND_BIT(FQ_KIND_NODE) |
             FQ_KIND_BIT(FQ_KIND_CAPACITYMODEL) |
             FQ_KIND_BIT(FQ_KIND_PROVISIONINGREQUEST) |
             FQ_KIND_BIT(FQ_KIND_WORKLOAD) | FQ_KIND_BIT(FQ_KIND_POD) |
             FQ_KIND_BIT(FQ_KIND_RESOURCEFLAVOR),
    .create = cap_create,
    .destroy = cap_destroy,
    .on_change = cap_on_change,
    .run = cap_run,
    .next_wakeup = cap_next_wakeup,
};
