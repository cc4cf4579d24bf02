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
#include "capacity/provider_protocol.h"
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

void fq_capacity_wake(struct fq_capacity *st, int64_t t)
{
    if (t < st->wake)
        st->wake = t;
}

int64_t fq_capacity_scaled(struct fq_engine *e, int64_t ms)
{
    double s = fq_engine_config(e)->time_scale;
    if (!(s > 0))
        s = 1.0;
    return (int64_t)llround((double)ms * s);
}

struct fq_cap_pool *fq_capacity_pool(struct fq_capacity *st, const char *name)
{
    for (size_t i = 0; name && i < st->npools; i++)
        if (!strcmp(st->pools[i].name, name))
            return &st->pools[i];
    return NULL;
}

bool fq_capacity_pool_matches(const struct fq_cap_pool *p,
                              const struct fq_value *selector)
{
    if (!selector || selector->type != FQ_V_MAP || selector->u.map.n == 0)
        return true;
    for (size_t i = 0; i < selector->u.map.n; i++) {
        const struct fq_member *m = &selector->u.map.items[i];
        const char *want = fq_value_as_str(m->val);
        const char *have = fq_value_as_str(fq_map_get(p->labels, m->key));
        if (!want || !have || strcmp(want, have))
            return false;
    }
    return true;
}

static bool cond_is(const struct fq_value *status, const char *type,
                    const char *want)
{
    return fq_cond_status_is(fq_cond_in_status(status, type), want);
}

static bool str_is(const struct fq_value *m, const char *key, const char *v)
{
    const char *have = fq_value_as_str(fq_map_get(m, key));
    return have && !strcmp(have, v);
}

void fq_capacity_set_cond_stored(struct fq_engine *e, enum fq_kind kind,
                                 const char *ns, const char *name,
                                 const char *type, const char *cstatus,
                                 const char *reason, const char *message,
                                 int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    /* Only the condition changes, in place (nothing copied or compared). */
    struct fq_value *obj = fq_objstore_edit_in_place(s, kind, ns, name);
    if (!obj)
        return;
    bool made = !fq_map_get(obj, "status");
    if (fq_cond_status_set(fq_map_ensure_map(obj, "status"), type, cstatus,
                           reason, message, now) ||
        made)
        fq_objstore_edited(s, kind, ns, name, false);
}

/* --- pods (not no_pods) ----------------------------------------------- */

static void pod_free(void *v)
{
    struct fq_cap_pod *p = v;
    free(p->node);
    free(p);
}

/* Adds (sign 1) or takes (-1) a bound pod's requests to its node. */
static void podsum_add(struct fq_capacity *st, const struct fq_cap_pod *p,
                       int sign)
{
    struct fq_cap_podsum *ps = fq_smap_get(&st->podsum, p->node);
    if (!ps) {
        ps = fq_xcalloc(1, sizeof(*ps));
        fq_smap_put(&st->podsum, p->node, ps);
    }
    for (int r = 0; r < FQ_R_N; r++)
        ps->used[r] += sign * p->req[r];
    ps->busy += sign;
    struct fq_cap_node *n = fq_smap_get(&st->node_by_name, p->node);
    if (ps->busy == 0)
        fq_smap_del(&st->podsum, p->node);
    if (!n || n->gone)
        return;
    bool was_busy = n->busy > 0;
    fq_capacity_pods_usage(st, n);
    fq_capacity_fit_touch(n);
    fq_capacity_sd_mark(st, n);
    if (was_busy != (n->busy > 0))
        fq_capacity_provreq_touch(st, n);
}

/* Records a pod's new state in the bound and unschedulable sets. */
static void pod_note(struct fq_capacity *st, const char *ns, const char *name,
                     const struct fq_value *pod)
{
    char key[600];
    fq_capacity_key(ns, name, key, sizeof(key));
    const char *node = pod ? fq_value_path_str(pod, FQ_POD_NODE_NAME, "") : "";
    const char *ph = pod ? fq_value_path_str(pod, FQ_POD_PHASE, "") : "";
    bool done = !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed");
    const struct fq_cap_pod *old = fq_smap_get(&st->pods, key);
    if (old)
        podsum_add(st, old, -1);
    if (pod && *node && !done) {
        struct fq_cap_pod *p = fq_xcalloc(1, sizeof(*p));
        p->node = fq_xstrdup(node);
        fq_capacity_pod_requests(pod, p->req);
        fq_smap_put(&st->pods, key, p);
        podsum_add(st, p, 1);
    } else {
        fq_smap_del(&st->pods, key);
    }
    bool unsched = pod && !*node && (!*ph || !strcmp(ph, "Pending")) &&
                   cond_is(fq_map_get(pod, "status"), "PodScheduled", "False");
    if (unsched)
        fq_smap_add(&st->unsched, key);
    else
        fq_smap_del(&st->unsched, key);
}

void fq_capacity_pods_seed(struct fq_capacity *st, struct fq_engine *e)
{
    if (st->pods_seeded || st->no_pods)
        return;
    st->pods_seeded = true;
    st->pods.free_val = pod_free;
    st->podsum.free_val = free;
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_POD, NULL, &list);
    for (size_t i = 0; i < n; i++)
        pod_note(st, list[i]->ns, list[i]->name, list[i]->obj);
    free(list);
}

void fq_capacity_key(const char *ns, const char *name, char *buf, size_t n)
{
    size_t a = strlen(ns), b = strlen(name);
    if (n == 0)
        return;
    if (a > n - 1)
        a = n - 1;
    memcpy(buf, ns, a);
    size_t at = a;
    if (at < n - 1)
        buf[at++] = '/';
    if (b > n - 1 - at)
        b = n - 1 - at;
    memcpy(buf + at, name, b);
    buf[at + b] = 0;
}

const struct fq_object *fq_capacity_keyed(struct fq_engine *e,
                                          enum fq_kind kind, const char *key)
{
    const char *slash = strchr(key, '/');
    size_t l = slash ? (size_t)(slash - key) : 0;
    char ns[300];
    if (!slash || l >= sizeof(ns))
        return NULL;
    memcpy(ns, key, l);
    ns[l] = 0;
    return fq_objstore_get(fq_engine_store(e), kind, ns, slash + 1);
}

/* The objects of kind `kind` named by "ns/name" keys, in their order;
 * takes (and frees) the keys array, whose strings are borrowed. */
static size_t objects_of(struct fq_engine *e, enum fq_kind kind,
                         const char **keys, size_t nk,
                         const struct fq_object ***out)
{
    const struct fq_object **v = fq_xcalloc(nk + 1, sizeof(*v));
    size_t m = 0;
    for (size_t i = 0; i < nk; i++) {
        const struct fq_object *o = fq_capacity_keyed(e, kind, keys[i]);
        if (o)
            v[m++] = o;
    }
    free(keys);
    *out = v;
    return m;
}

size_t fq_capacity_unsched(struct fq_capacity *st, struct fq_engine *e,
                           const struct fq_object ***out)
{
    fq_capacity_pods_seed(st, e);
    const char **keys;
    size_t nk = fq_smap_sorted_keys(&st->unsched, NULL, &keys);
    return objects_of(e, FQ_KIND_POD, keys, nk, out);
}

/* --- slices ----------------------------------------------------------------- */

const char *fq_capacity_add_slice(struct fq_capacity *st, struct fq_engine *e,
                                  struct fq_cap_pool *pool, const char *provreq)
{
    if (!pool->ok)
        return NULL;
    fq_cost_pool_flush(st, e, pool);
    char sfx[8];
    fq_engine_rand_suffix_in(e, FQ_RAND_CLOUD, sfx, 5);
    /* The names are joined without a printf: a slice is made per
     * granted request. "%.200s-%s": */
    char slice[300];
    size_t pl = strnlen(pool->name, 200);
    memcpy(slice, pool->name, pl);
    slice[pl] = '-';
    fq_text_put(slice, sizeof(slice), pl + 1, sfx);
    int64_t boot = fq_cloud_boot_ms(st->cloud, pool->spec.machine->name,
                                    pool->spec.location);
    /* A fresh cluster's default pool comes with its (one) node Ready;
     * later nodes of that pool boot as any other. */
    if (st->default_pool_fresh && !strcmp(pool->name, FQ_NODEPOOL_DEFAULT)) {
        boot = 0;
        st->default_pool_fresh = false;
    }
    int64_t ready_at = st->now + boot;
    char ts[40];
    fq_time_format_ms(ready_at, ts, sizeof(ts));
    const char *id = NULL;
    /* Its place in the pool's racks: hosts fill racks of
     * FQ_TOPO_RACK_HOSTS (a larger slice has a rack of its own), racks
     * blocks of FQ_TOPO_BLOCK_RACKS, in the order the pool grows; all
     * hosts of a slice share a rack. */
    int64_t rack_hosts = pool->spec.slice_hosts > FQ_TOPO_RACK_HOSTS ?
                             pool->spec.slice_hosts :
                             FQ_TOPO_RACK_HOSTS;
    int64_t rack = pool->nodes / rack_hosts;
    char block_v[240], rack_v[280];
    snprintf(block_v, sizeof(block_v), "%.200s-b%lld", pool->name,
             (long long)(rack / FQ_TOPO_BLOCK_RACKS));
    snprintf(rack_v, sizeof(rack_v), "%s-r%lld", block_v, (long long)rack);
    for (int i = 0; i < pool->spec.slice_hosts; i++) {
        char name[320];
        if (pool->spec.slice_hosts > 1)
            snprintf(name, sizeof(name), "gke-%s-%d", slice, i);
        else
            fq_text_put(name, sizeof(name),
                        fq_text_put(name, sizeof(name), 0, "gke-"), slice);
        bool ready = boot <= 0;
        if (!pool->node_proto) {
            pool->node_proto = fq_nodepool_node_proto(&pool->spec);
            memset(pool->node_alloc, 0, sizeof(pool->node_alloc));
            fq_capacity_add_resources(
                fq_value_path(pool->node_proto, FQ_NODE_ALLOCATABLE),
                pool->node_alloc);
        }
        struct fq_value *node = fq_nodepool_node_from(
            pool->node_proto, &pool->spec, name, slice, i, ready, st->now);
        struct fq_value *nl =
            fq_map_ensure_map(fq_map_ensure_map(node, "metadata"), "labels");
        fq_map_set(nl, FQ_LABEL_TOPO_BLOCK, fq_value_str(block_v));
        fq_map_set(nl, FQ_LABEL_TOPO_SUBBLOCK, fq_value_str(rack_v));
        fq_map_set(nl, FQ_LABEL_TOPO_HOST, fq_value_str(name));
        struct fq_value *ann = fq_map_ensure_map(
            fq_map_ensure_map(node, "metadata"), "annotations");
        if (!ready)
            fq_map_set(ann, FQ_ANN_READY_AT, fq_value_str(ts));
        if (provreq)
            fq_map_set(ann, FQ_ANN_NODE_PROVREQ, fq_value_str(provreq));
        char uid[40]; /* "%016llx-node" */
        fq_hex_put(uid, fq_engine_rand_in(e, FQ_RAND_CLOUD), 16);
        fq_text_put(uid, sizeof(uid), 16, "-node");
        const struct fq_object *made = NULL;
        if (fq_objstore_create(fq_engine_store(e), node, st->now, uid, &made,
                               NULL) < 0)
            continue;
        struct fq_cap_node *nd = fq_capacity_node_made(
            st, made, pool, slice, provreq, ready, ready_at);
        nd->born = ++st->nborn;
        nd->p = fq_capacity_pool(st, nd->pool);
        fq_smap_put(&st->node_by_name, nd->name, nd);
        fq_capacity_nodes_add(&st->created, nd);
        fq_capacity_node_attach(st, nd);
        id = nd->slice;
    }
    if (boot > 0)
        fq_capacity_wake(st, ready_at);
    st->slices_created++;
    return id;
}

void fq_capacity_delete_slice(struct fq_capacity *st, struct fq_engine *e,
                              const char *slice, const char *why)
{
    if (fq_provider_demand_on(e)) { /* the provider deletes, then reports */
        fq_provider_demand_delete(st, e, slice, why);
        return;
    }
    struct fq_cap_node **v;
    size_t n = fq_capacity_slice_nodes(st, slice, &v);
    for (size_t i = 0; i < n; i++) {
        struct fq_cap_node *nd = v[i];
        if (nd->gone)
            continue;
        if (nd->p)
            fq_cost_pool_flush(st, e, nd->p);
        /* What ran here must be placed again. */
        for (size_t k = 0; k < nd->npl; k++)
            fq_capacity_unsettle(st, nd->pl[k].wl);
        const struct fq_object *o =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_NODE, "", nd->name);
        if (o && why)
            fq_engine_event(e, o->obj, "Normal", "ScaleDown", "%s", why);
        fq_objstore_delete(fq_engine_store(e), FQ_KIND_NODE, "", nd->name,
                           NULL);
        fq_capacity_node_gone(st, nd);
    }
    free(v);
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

bool fq_capacity_pool_rewrite_due(const struct fq_capacity *st,
                                  const struct fq_engine *e, int64_t last)
{
    int64_t every = fq_engine_config(e)->status_every_ms;
    return every <= 0 || last == INT64_MIN || st->now >= last + every;
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

/* --- watched workloads ------------------------------------------------- */

void fq_capacity_wlconds(const struct fq_value *wl, struct fq_cap_wlconds *out)
{
    static const char *const types[] = {"Admitted", "Finished", "Evicted",
                                        "PodsReady"};
    const struct fq_value *s = fq_map_get(wl, "status");
    const struct fq_value *c[4];
    fq_conds_in_status(s, 4, types, c);
    out->admission = fq_map_get(s, "admission") != NULL;
    out->admitted = fq_cond_status_is(c[0], "True");
    out->finished = fq_cond_status_is(c[1], "True");
    out->evicted = fq_cond_status_is(c[2], "True");
    out->pods_ready = fq_cond_status_is(c[3], "True");
}

bool fq_capacity_wlconds_active(const struct fq_cap_wlconds *c)
{
    return c->admission && c->admitted && !c->finished && !c->evicted;
}

bool fq_capacity_workload_active(const struct fq_value *wl)
{
    /* The cheap test first: most workloads of a deep queue are pending. */
    if (!fq_map_get(fq_map_get(wl, "status"), "admission"))
        return false;
    struct fq_cap_wlconds c;
    fq_capacity_wlconds(wl, &c);
    return fq_capacity_wlconds_active(&c);
}

static bool watch_wanted(const struct fq_cap_wlconds *c)
{
    return (c->admission || c->pods_ready) && !c->finished;
}

/* fq_capacity_unsettle for a watch entry in hand. */
static void unsettle(struct fq_capacity *st, const char *key,
                     struct fq_cap_watch *w)
{
    w->settled = false;
    if (w->listed)
        return;
    w->listed = true;
    FQ_GROW(st->unsettled, st->capunsettled, st->nunsettled + 1);
    st->unsettled[st->nunsettled++] = fq_xstrdup(key);
}

void fq_capacity_unsettle(struct fq_capacity *st, const char *key)
{
    struct fq_cap_watch *w = fq_smap_get(&st->watch, key);
    if (w)
        unsettle(st, key, w);
}

/* The workload's placements go at the next run. */
static void stop(struct fq_capacity *st, const char *key)
{
    size_t n = st->stopped.n;
    fq_smap_add(&st->stopped, key);
    if (st->stopped.n == n)
        return; /* stopped already */
    FQ_GROW(st->stopped_keys, st->capstopped_keys, st->nstopped_keys + 1);
    st->stopped_keys[st->nstopped_keys++] = fq_xstrdup(key);
}

/* Records a workload's new state at revision `rev` (0: unknown); true
 * if it is or was watched. */
static bool watch_note(struct fq_capacity *st, const char *ns, const char *name,
                       const struct fq_value *wl, uint64_t rev)
{
    char key[600];
    fq_capacity_key(ns, name, key, sizeof(key));
    struct fq_cap_watch *w = fq_smap_get(&st->watch, key);
    if (w && wl && rev && w->own_rev == rev)
        return true;
    struct fq_cap_wlconds conds = {0};
    if (wl)
        fq_capacity_wlconds(wl, &conds);
    if (!wl || !watch_wanted(&conds)) {
        if (!w)
            return false;
        fq_smap_del(&st->watch, key);
        stop(st, key);
        return true;
    }
    if (!w) {
        w = fq_xcalloc(1, sizeof(*w));
        fq_smap_put(&st->watch, key, w);
    }
    w->active = fq_capacity_wlconds_active(&conds);
    unsettle(st, key, w);
    if (!w->active)
        stop(st, key);
    return true;
}

void fq_capacity_wldec_free(struct fq_cap_wldec *d)
{
    for (size_t i = 0; d && i < d->nps; i++) {
        free(d->ps[i].name);
        free(d->ps[i].provreq);
    }
    if (d)
        free(d->ps);
    free(d);
}

static void watch_free(void *v)
{
    struct fq_cap_watch *w = v;
    fq_capacity_wldec_free(w->dec);
    free(w);
}

static void watch_seed(struct fq_capacity *st, struct fq_engine *e)
{
    if (st->watch_seeded)
        return;
    st->watch_seeded = true;
    st->watch.free_val = watch_free;
    st->unplace_all = true;
    const struct fq_object **all;
    size_t n =
        fq_objstore_list(fq_engine_store(e), FQ_KIND_WORKLOAD, NULL, &all);
    for (size_t i = 0; i < n; i++)
        watch_note(st, all[i]->ns, all[i]->name, all[i]->obj, 0);
    free(all);
}

static int unsettled_cmp(const void *a, const void *b)
{
    return strcmp(((const struct fq_cap_unsettled *)a)->key,
                  ((const struct fq_cap_unsettled *)b)->key);
}

/* The list drops those that settled or left (and repeats) on the way. */
size_t fq_capacity_unsettled(struct fq_capacity *st, struct fq_engine *e,
                             struct fq_cap_unsettled **out)
{
    watch_seed(st, e);
    *out = NULL;
    if (st->nunsettled == 0)
        return 0;
    FQ_GROW(st->ulist, st->capulist, st->nunsettled);
    struct fq_cap_unsettled *v = st->ulist;
    size_t m = 0;
    uint64_t pass = ++st->unsettled_pass;
    for (size_t i = 0; i < st->nunsettled; i++) {
        char *k = st->unsettled[i];
        struct fq_cap_watch *w = fq_smap_get(&st->watch, k);
        if (!w || w->settled || w->seen == pass) {
            if (w && w->seen != pass)
                w->listed = false;
            free(k);
            continue;
        }
        /* A workload that left while listed and came back is there
         * twice: keep one. */
        w->seen = pass;
        w->listed = true;
        st->unsettled[m] = k;
        v[m++] = (struct fq_cap_unsettled){NULL, k, w};
    }
    st->nunsettled = m;
    if (m > 1)
        qsort(v, m, sizeof(*v), unsettled_cmp);
    size_t n = 0;
    for (size_t i = 0; i < m; i++) {
        v[i].obj = fq_capacity_keyed(e, FQ_KIND_WORKLOAD, v[i].key);
        if (v[i].obj)
            v[n++] = v[i];
    }
    *out = v;
    return n;
}

size_t fq_capacity_watched(struct fq_capacity *st, struct fq_engine *e,
                           const struct fq_object ***out)
{
    watch_seed(st, e);
    const char **keys;
    size_t nk = fq_smap_sorted_keys(&st->watch, NULL, &keys);
    return objects_of(e, FQ_KIND_WORKLOAD, keys, nk, out);
}

/* --- controller ops --------------------------------------------------------- */

static void *cap_create(struct fq_engine *e)
{
    struct fq_capacity *st = fq_xcalloc(1, sizeof(*st));
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
 * (our status writes keep the generation). */
static void pool_note(struct fq_capacity *st, const struct fq_change *c)
{
    if (c->type != FQ_CHANGE_MODIFIED || !c->obj) {
        st->pools_dirty = true;
        return;
    }
    struct fq_cap_pool *p = fq_capacity_pool(st, c->name);
    if (!p || p->generation != fq_value_path_int(c->obj, FQ_META_GENERATION, 0))
        st->pools_dirty = true;
    else
        p->shown_held = false; /* pool_status looks at the store again */
}

static void cap_on_change(void *self, struct fq_engine *e,
                          const struct fq_change *c)
{
    struct fq_capacity *st = self;
    /* A workload matters only while watched (pending ones come and go in
     * a deep queue without anything here to do). */
    if (c->kind == FQ_KIND_POD && st->pods_seeded)
        pod_note(st, c->ns, c->name,
                 c->type == FQ_CHANGE_DELETED ? NULL : c->obj);
    if (c->kind == FQ_KIND_WORKLOAD && st->watch_seeded &&
        !watch_note(st, c->ns, c->name,
                    c->type == FQ_CHANGE_DELETED ? NULL : c->obj, c->rev))
        return;
    switch (c->kind) {
    case FQ_KIND_NODE:
        if (st->nodes_seeded && !node_in_step(st, c)) {
            FQ_GROW(st->node_dirty, st->capnode_dirty, st->nnode_dirty + 1);
            st->node_dirty[st->nnode_dirty++] = fq_xstrdup(c->name);
        }
        break;
    case FQ_KIND_NODEPOOL:
        pool_note(st, c);
        break;
    case FQ_KIND_CAPACITYMODEL:
        st->model_dirty = true;
        break;
    case FQ_KIND_RESOURCEFLAVOR:
        st->decode_gen++; /* which pool a flavor's nodes come from */
        break;
    case FQ_KIND_PROVISIONINGREQUEST: {
        if (fq_provreq_note(st, c))
            break;
        char key[600];
        fq_capacity_key(c->ns, c->name, key, sizeof(key));
        fq_capacity_provreq_written(st, key);
        break;
    }
    default:
        break;
    }
    /* Our own status writes to Nodes and NodePools come back here; a run
     * after them is harmless (it changes nothing) but costs time, so only
     * changes that can matter kick. */
    if (c->kind == FQ_KIND_NODE && c->type == FQ_CHANGE_MODIFIED)
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
    watch_seed(st, e);
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
    if (fq_engine_config(e)->sim_provider)
        fq_provreq_reconcile(st, e);
    else if (fq_provider_demand_on(e))
        fq_provider_demand_provreqs(st, e); /* queued pools via provision */
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
