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
 *                  the tutorial's Ray head has somewhere to run;
 *   2. model       rebuild the cloud from the CapacityModel (the first by
 *                  name) when it changed; none = an unlimited cloud;
 *   3. snapshot    decode pools, list nodes with their allocatable and what
 *                  is placed or bound on them (a node is decoded again only
 *                  when its resourceVersion moved; bound pods and watched
 *                  workloads are kept up to date by on_change, so a run
 *                  costs what changed, not what is stored);
 *   4. boot        nodes whose boot latency has passed become Ready;
 *   5. cost        accrue node-seconds x price (cost.c);
 *   6. provreqs    move each ProvisioningRequest along (provreq.c);
 *   7. autoscaler  place, scale up, back off, scale down, fall back
 *                  (autoscaler.c);
 *   8. status      write each pool's node counts and conditions.
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
#include "capacity.h"
#include "provider_demand.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/quantity.h"

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

const struct fq_value *fq_capacity_cond(const struct fq_value *status,
                                        const char *type)
{
    const struct fq_value *conds = fq_map_get(status, "conditions");
    for (size_t i = 0; i < fq_value_len(conds); i++) {
        const struct fq_value *c = fq_seq_at(conds, i);
        if (!strcmp(fq_value_path_str(c, "type", ""), type))
            return c;
    }
    return NULL;
}

bool fq_capacity_cond_true(const struct fq_value *status, const char *type)
{
    const struct fq_value *c = fq_capacity_cond(status, type);
    return c && !strcmp(fq_value_path_str(c, "status", ""), "True");
}

int64_t fq_capacity_cond_time(const struct fq_value *status, const char *type)
{
    const struct fq_value *c = fq_capacity_cond(status, type);
    int64_t t;
    const char *s = fq_value_path_str(c, "lastTransitionTime", NULL);
    if (!s || fq_time_parse(s, &t) < 0)
        return -1;
    return t;
}

static bool set_str(struct fq_value *m, const char *key, const char *v)
{
    const char *old = fq_value_as_str(fq_map_get(m, key));
    if (old && !strcmp(old, v))
        return false;
    fq_map_set(m, key, fq_value_str(v));
    return true;
}

bool fq_capacity_cond_set(struct fq_value *status, const char *type,
                          const char *cstatus, const char *reason,
                          const char *message, int64_t now)
{
    struct fq_value *conds = fq_map_get(status, "conditions");
    if (!conds || conds->type != FQ_V_SEQ) {
        conds = fq_value_seq();
        fq_map_set(status, "conditions", conds);
    }
    struct fq_value *c = NULL;
    for (size_t i = 0; i < fq_value_len(conds); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(conds, i), "type", ""), type))
            c = fq_seq_at(conds, i);
    bool changed = false;
    if (!c) {
        c = fq_value_map();
        fq_map_set(c, "type", fq_value_str(type));
        fq_seq_push(conds, c);
        changed = true;
    }
    if (set_str(c, "status", cstatus) || changed) {
        char ts[40];
        fq_time_format(now, ts, sizeof(ts));
        fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
        changed = true;
    }
    changed |= set_str(c, "reason", reason);
    changed |= set_str(c, "message", message ? message : "");
    return changed;
}

/* --- resources ------------------------------------------------------------ */

static int res_index(const char *name)
{
    if (!strcmp(name, "cpu"))
        return FQ_R_CPU;
    if (!strcmp(name, "memory"))
        return FQ_R_MEM;
    if (!strcmp(name, "google.com/tpu"))
        return FQ_R_TPU;
    if (!strcmp(name, "nvidia.com/gpu"))
        return FQ_R_GPU;
    if (!strcmp(name, "pods"))
        return FQ_R_PODS;
    return -1;
}

static void add_resources(const struct fq_value *m, int64_t v[FQ_R_N])
{
    for (size_t i = 0; m && m->type == FQ_V_MAP && i < m->u.map.n; i++) {
        const struct fq_member *r = &m->u.map.items[i];
        int k = res_index(r->key);
        int64_t q = 0;
        const char *s = fq_value_as_str(r->val);
        char num[64];
        if (!s && r->val->type == FQ_V_NUM) {
            snprintf(num, sizeof(num), "%s", r->val->u.num.raw);
            s = num;
        }
        if (k < 0 || !s ||
            fq_quantity_parse(s, fq_quantity_scale_for(r->key), &q, NULL,
                              NULL) < 0)
            continue;
        v[k] += q;
    }
}

void fq_capacity_pod_requests(const struct fq_value *tmpl, int64_t req[FQ_R_N])
{
    memset(req, 0, sizeof(int64_t) * FQ_R_N);
    const struct fq_value *cs = fq_value_path(tmpl, "spec.containers");
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        const struct fq_value *r = fq_value_path(c, "resources.requests");
        int64_t one[FQ_R_N] = {0};
        add_resources(r, one);
        /* A request defaults to its limit, resource by resource. */
        int64_t lim[FQ_R_N] = {0};
        add_resources(fq_value_path(c, "resources.limits"), lim);
        for (int k = 0; k < FQ_R_N; k++)
            req[k] += one[k] ? one[k] : lim[k];
    }
    req[FQ_R_PODS] = 1;
}

int64_t fq_capacity_fits(const int64_t free_[FQ_R_N], const int64_t req[FQ_R_N])
{
    int64_t n = INT64_MAX;
    for (int k = 0; k < FQ_R_N; k++) {
        if (req[k] <= 0)
            continue;
        int64_t f = free_[k] > 0 ? free_[k] / req[k] : 0;
        if (f < n)
            n = f;
    }
    return n;
}

int64_t fq_capacity_hosts_in_use(struct fq_capacity *st, const char *machine,
                                 bool flex)
{
    int64_t n = 0;
    for (size_t i = 0; i < st->nnodes; i++) {
        const struct fq_cap_node *nd = &st->nodes[i];
        struct fq_cap_pool *p = fq_capacity_pool(st, nd->pool);
        if (nd->gone || !p || !p->ok || strcmp(p->spec.machine->name, machine))
            continue;
        bool pf = fq_nodepool_provisioning(&p->spec) == FQ_PROV_FLEX_START;
        if (pf == flex)
            n++;
    }
    return n;
}

/* --- snapshot --------------------------------------------------------------- */

static void node_release(struct fq_cap_node *n)
{
    free(n->name);
    free(n->pool);
    free(n->slice);
    free(n->provreq);
    for (size_t i = 0; i < n->npl; i++) {
        free(n->pl[i].wl);
        free(n->pl[i].podset);
    }
    free(n->pl);
}

static void pools_free(struct fq_capacity *st)
{
    for (size_t i = 0; i < st->npools; i++) {
        free(st->pools[i].name);
        fq_value_free(st->pools[i].obj);
        fq_value_free(st->pools[i].labels);
    }
    free(st->pools);
    st->pools = NULL;
    st->npools = 0;
}

static void snapshot_free(struct fq_capacity *st)
{
    pools_free(st);
    for (size_t i = 0; i < st->nnodes; i++)
        node_release(&st->nodes[i]);
    st->nnodes = 0;
}

static int64_t ann_time(const struct fq_value *obj, const char *key)
{
    const char *s = fq_value_as_str(
        fq_map_get(fq_value_path(obj, "metadata.annotations"), key));
    int64_t t;
    if (!s || fq_time_parse(s, &t) < 0)
        return FQ_NEVER;
    return t;
}

static struct fq_cap_node *push_node(struct fq_capacity *st)
{
    FQ_GROW(st->nodes, st->capnodes, st->nnodes + 1);
    struct fq_cap_node *n = &st->nodes[st->nnodes++];
    memset(n, 0, sizeof(*n));
    return n;
}

void fq_capacity_node_usage(struct fq_cap_node *n,
                            const struct fq_value *placements)
{
    for (size_t i = 0; i < n->npl; i++) {
        free(n->pl[i].wl);
        free(n->pl[i].podset);
    }
    free(n->pl);
    n->npl = fq_value_len(placements);
    n->pl = n->npl ? fq_xcalloc(n->npl, sizeof(*n->pl)) : NULL;
    memset(n->used, 0, sizeof(n->used));
    n->busy = 0;
    for (size_t i = 0; i < n->npl; i++) {
        const struct fq_value *p = fq_seq_at(placements, i);
        struct fq_cap_place *x = &n->pl[i];
        x->wl = fq_xstrdup(fq_value_path_str(p, "workload", ""));
        x->podset = fq_xstrdup(fq_value_path_str(p, "podSet", ""));
        x->count = fq_value_path_int(p, "count", 0);
        add_resources(fq_map_get(p, "requests"), x->req);
        for (int k = 0; k < FQ_R_N; k++)
            n->used[k] += x->req[k] * x->count;
        n->used[FQ_R_PODS] += x->count;
        n->busy += (int)x->count;
    }
}

static void decode_node(struct fq_cap_node *n, const struct fq_object *obj)
{
    const struct fq_value *o = obj->obj;
    memset(n, 0, sizeof(*n));
    n->rv = obj->rv;
    n->charged_at = -1;
    const struct fq_value *labels = fq_value_path(o, "metadata.labels");
    n->name = fq_xstrdup(obj->name);
    const char *pool = fq_value_as_str(fq_map_get(labels, FQ_LABEL_NODEPOOL));
    n->pool = fq_xstrdup(pool ? pool : "");
    const char *slice = fq_value_as_str(fq_map_get(labels, FQ_LABEL_SLICE));
    n->slice = fq_xstrdup(slice ? slice : n->name);
    const char *pr = fq_value_as_str(fq_map_get(
        fq_value_path(o, "metadata.annotations"), FQ_ANN_NODE_PROVREQ));
    n->provreq = pr ? fq_xstrdup(pr) : NULL;
    n->ready = fq_capacity_cond_true(fq_map_get(o, "status"), "Ready");
    n->ready_at = n->ready ? FQ_NEVER : ann_time(o, FQ_ANN_READY_AT);
    n->unneeded_since = ann_time(o, FQ_ANN_UNNEEDED);
    add_resources(fq_value_path(o, "status.allocatable"), n->alloc);
    /* no_pods placements: status.placements[{workload, podSet, count,
     * requests (per pod)}] */
    fq_capacity_node_usage(n, fq_value_path(o, "status.placements"));
}

static int node_name_cmp(const void *a, const void *b)
{
    const struct fq_cap_node *x = a, *y = b;
    return strcmp(x->name, y->name);
}

/*
 * The nodes, in the store's (name) order. Decoding a node's tree is the
 * costly part of a run in a big cluster, so an entry of the run before
 * whose resourceVersion still holds is kept as it was decoded (with pods,
 * snapshot() counts the bound pods on top afresh each run).
 */
static void snapshot_nodes(struct fq_capacity *st, struct fq_engine *e)
{
    struct fq_cap_node *old = st->nodes;
    size_t nold = st->nnodes;
    if (nold > 1)
        qsort(old, nold, sizeof(*old), node_name_cmp);
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_NODE, NULL, &list);
    struct fq_cap_node *v = fq_xcalloc(n ? n : 1, sizeof(*v));
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        while (j < nold && strcmp(old[j].name, list[i]->name) < 0)
            node_release(&old[j++]);
        struct fq_cap_node *was =
            j < nold && !strcmp(old[j].name, list[i]->name) ? &old[j++] : NULL;
        if (was && !was->gone && was->rv == list[i]->rv) {
            v[i] = *was;
            continue;
        }
        decode_node(&v[i], list[i]);
        if (was) {
            v[i].charged_at = was->charged_at;
            node_release(was);
        }
    }
    while (j < nold)
        node_release(&old[j++]);
    free(old);
    free(list);
    st->nodes = v;
    st->nnodes = n;
    st->capnodes = n ? n : 1;
}

static bool cond_is(const struct fq_value *status, const char *type,
                    const char *want)
{
    const struct fq_value *c = fq_capacity_cond(status, type);
    return c && !strcmp(fq_value_path_str(c, "status", ""), want);
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
        char key[600];
        snprintf(key, sizeof(key), "%s", keys[i]);
        char *slash = strchr(key, '/');
        if (!slash)
            continue;
        *slash = 0;
        const struct fq_object *o =
            fq_objstore_get(fq_engine_store(e), kind, key, slash + 1);
        if (o)
            v[m++] = o;
    }
    free(keys);
    *out = v;
    return m;
}

/* --- pods (not no_pods) ----------------------------------------------- */

static void pod_free(void *v)
{
    struct fq_cap_pod *p = v;
    free(p->node);
    free(p);
}

/* Records a pod's new state in the bound and unschedulable sets. */
static void pod_note(struct fq_capacity *st, const char *ns, const char *name,
                     const struct fq_value *pod)
{
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    const char *node = pod ? fq_value_path_str(pod, "spec.nodeName", "") : "";
    const char *ph = pod ? fq_value_path_str(pod, "status.phase", "") : "";
    bool done = !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed");
    if (pod && *node && !done) {
        struct fq_cap_pod *p = fq_xcalloc(1, sizeof(*p));
        p->node = fq_xstrdup(node);
        fq_capacity_pod_requests(pod, p->req);
        fq_smap_put(&st->pods, key, p);
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

static void pods_seed(struct fq_capacity *st, struct fq_engine *e)
{
    if (st->pods_seeded || fq_engine_config(e)->no_pods)
        return;
    st->pods_seeded = true;
    st->pods.free_val = pod_free;
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_POD, NULL, &list);
    for (size_t i = 0; i < n; i++)
        pod_note(st, list[i]->ns, list[i]->name, list[i]->obj);
    free(list);
}

size_t fq_capacity_unsched(struct fq_capacity *st, struct fq_engine *e,
                           const struct fq_object ***out)
{
    pods_seed(st, e);
    const char **keys;
    size_t nk = fq_smap_sorted_keys(&st->unsched, NULL, &keys);
    return objects_of(e, FQ_KIND_POD, keys, nk, out);
}

static struct fq_cap_node *node_by_name(struct fq_capacity *st,
                                        const char *name)
{
    size_t lo = 0, hi = st->nnodes;
    while (lo < hi) { /* snapshot_nodes keeps them in name order */
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(st->nodes[mid].name, name);
        if (c == 0)
            return &st->nodes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void snapshot(struct fq_capacity *st, struct fq_engine *e)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object **list;
    size_t n = fq_objstore_list(s, FQ_KIND_NODEPOOL, NULL, &list);
    st->pools = fq_xcalloc(n ? n : 1, sizeof(*st->pools));
    for (size_t i = 0; i < n; i++) {
        struct fq_cap_pool *p = &st->pools[st->npools++];
        p->name = fq_xstrdup(list[i]->name);
        p->obj = fq_value_clone(list[i]->obj);
        p->ok = fq_nodepool_decode(p->obj, &p->spec, NULL) == 0;
        p->labels = p->ok ? fq_nodepool_node_labels(&p->spec) : NULL;
    }
    free(list);
    snapshot_nodes(st, e);
    if (!fq_engine_config(e)->no_pods) {
        /* Bound, live pods make their node busy (counted afresh each run:
         * a kept node entry holds the last run's count). */
        pods_seed(st, e);
        for (size_t k = 0; k < st->nnodes; k++) {
            memset(st->nodes[k].used, 0, sizeof(st->nodes[k].used));
            st->nodes[k].busy = 0;
        }
        for (size_t i = 0; i < st->pods.cap; i++) {
            const struct fq_cap_pod *p = st->pods.t[i].val;
            struct fq_cap_node *nd =
                st->pods.t[i].key ? node_by_name(st, p->node) : NULL;
            if (!nd)
                continue;
            for (int r = 0; r < FQ_R_N; r++)
                nd->used[r] += p->req[r];
            nd->busy++;
        }
    }
    for (size_t i = 0; i < st->nnodes; i++) {
        struct fq_cap_pool *p = fq_capacity_pool(st, st->nodes[i].pool);
        if (p) {
            p->nodes++;
            p->ready += st->nodes[i].ready;
        }
    }
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
    char slice[300];
    snprintf(slice, sizeof(slice), "%.200s-%s", pool->name, sfx);
    int64_t boot = fq_cloud_boot_ms(st->cloud, pool->spec.machine->name,
                                    pool->spec.location);
    int64_t ready_at = st->now + boot;
    char ts[40];
    fq_time_format(ready_at, ts, sizeof(ts));
    const char *id = NULL;
    for (int i = 0; i < pool->spec.slice_hosts; i++) {
        char name[320];
        if (pool->spec.slice_hosts > 1)
            snprintf(name, sizeof(name), "gke-%s-%d", slice, i);
        else
            snprintf(name, sizeof(name), "gke-%s", slice);
        bool ready = boot <= 0;
        struct fq_value *node =
            fq_nodepool_make_node(&pool->spec, name, slice, i, ready, st->now);
        struct fq_value *ann = fq_map_ensure_map(
            fq_map_ensure_map(node, "metadata"), "annotations");
        if (!ready)
            fq_map_set(ann, FQ_ANN_READY_AT, fq_value_str(ts));
        if (provreq)
            fq_map_set(ann, FQ_ANN_NODE_PROVREQ, fq_value_str(provreq));
        char uid[40];
        snprintf(uid, sizeof(uid), "%016llx-node",
                 (unsigned long long)fq_engine_rand_in(e, FQ_RAND_CLOUD));
        if (fq_objstore_create(fq_engine_store(e), node, st->now, uid, NULL,
                               NULL) < 0)
            continue;
        const struct fq_object *made =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_NODE, "", name);
        if (!made)
            continue;
        struct fq_cap_node *nd = push_node(st);
        decode_node(nd, made);
        if (!ready)
            nd->ready_at = ready_at;
        id = nd->slice;
        pool->nodes++;
        pool->ready += ready;
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
    char *sl = fq_xstrdup(slice);
    for (size_t i = 0; i < st->nnodes; i++) {
        struct fq_cap_node *nd = &st->nodes[i];
        if (nd->gone || strcmp(nd->slice, sl))
            continue;
        struct fq_cap_pool *p = fq_capacity_pool(st, nd->pool);
        if (p)
            fq_cost_pool_flush(st, e, p);
        /* What ran here must be placed again. */
        for (size_t k = 0; k < nd->npl; k++) {
            struct fq_cap_watch *w = fq_smap_get(&st->watch, nd->pl[k].wl);
            if (w)
                w->settled = false;
        }
        const struct fq_object *o =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_NODE, "", nd->name);
        if (o && why)
            fq_engine_event(e, o->obj, "Normal", "ScaleDown", "%s", why);
        fq_objstore_delete(fq_engine_store(e), FQ_KIND_NODE, "", nd->name,
                           NULL);
        nd->gone = true;
        if (p) {
            p->nodes--;
            p->ready -= nd->ready;
        }
    }
    free(sl);
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
    fq_objstore_create(fq_engine_store(e), fq_nodepool_default_object(),
                       st->now, uid, NULL, NULL);
}

static void load_model(struct fq_capacity *st, struct fq_engine *e)
{
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_CAPACITYMODEL, NULL,
                                &list);
    const struct fq_object *m = n ? list[0] : NULL;
    uint64_t rv = m ? m->rv : 0;
    if (!st->model_seen || rv != st->model_rv || !st->cloud) {
        int64_t origin = st->now;
        const char *ct =
            m ? fq_value_path_str(m->obj, "metadata.creationTimestamp", NULL) :
                NULL;
        if (ct)
            fq_time_parse(ct, &origin);
        struct fq_err err = {0};
        struct fq_cloud *c = fq_cloud_new(
            m ? m->obj : NULL, fq_engine_config(e)->time_scale, origin, &err);
        if (!c) {
            fq_engine_event(e, m->obj, "Warning", "InvalidModel", "%s",
                            err.msg);
            c = fq_cloud_new(NULL, fq_engine_config(e)->time_scale, origin,
                             NULL);
        }
        fq_cloud_free(st->cloud);
        st->cloud = c;
        st->model_seen = true;
        st->model_rv = rv;
    }
    free(list);
}

static void boot_nodes(struct fq_capacity *st, struct fq_engine *e)
{
    for (size_t i = 0; i < st->nnodes; i++) {
        struct fq_cap_node *nd = &st->nodes[i];
        if (nd->gone || nd->ready)
            continue;
        if (nd->ready_at > st->now) {
            fq_capacity_wake(st, nd->ready_at);
            continue;
        }
        struct fq_value *o =
            fq_objstore_edit(fq_engine_store(e), FQ_KIND_NODE, "", nd->name);
        if (!o)
            continue;
        struct fq_value *status = fq_map_ensure_map(o, "status");
        fq_capacity_cond_set(status, "Ready", "True", "KubeletReady",
                             "kubelet is posting ready status", st->now);
        fq_map_del(
            fq_map_ensure_map(fq_map_ensure_map(o, "metadata"), "annotations"),
            FQ_ANN_READY_AT);
        fq_objstore_update(fq_engine_store(e), o, true, NULL, NULL, NULL);
        nd->ready = true;
        nd->ready_at = FQ_NEVER;
        struct fq_cap_pool *p = fq_capacity_pool(st, nd->pool);
        if (p)
            p->ready++;
    }
}

/* Nodes whose pool is gone go too (whole slices). */
static void orphans(struct fq_capacity *st, struct fq_engine *e)
{
    if (!fq_engine_config(e)->sim_provider)
        return;
    for (size_t i = 0; i < st->nnodes; i++) {
        struct fq_cap_node *nd = &st->nodes[i];
        if (!nd->gone && !fq_capacity_pool(st, nd->pool))
            fq_capacity_delete_slice(st, e, nd->slice,
                                     "node pool deleted: node removed");
    }
}

static void pool_status(struct fq_capacity *st, struct fq_engine *e)
{
    for (size_t i = 0; i < st->npools; i++) {
        struct fq_cap_pool *p = &st->pools[i];
        const struct fq_object *cur =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", p->name);
        if (!cur)
            continue;
        /* Most runs change nothing here: compare before copying. */
        const struct fq_value *cs = fq_map_get(cur->obj, "status");
        const struct fq_value *cond = fq_capacity_cond(cs, "ScaleUp");
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
            !strcmp(fq_value_path_str(cs, "phase", ""), phase))
            continue;
        struct fq_value *o =
            fq_objstore_edit(fq_engine_store(e), FQ_KIND_NODEPOOL, "", p->name);
        if (!o)
            continue;
        struct fq_value *s = fq_map_ensure_map(o, "status");
        fq_map_set(s, "nodeCount", fq_value_int(p->nodes));
        if (p->ok)
            fq_map_set(s, "initialized", fq_value_bool(true));
        fq_map_set(s, "readyNodeCount", fq_value_int(p->ready));
        fq_map_set(s, "phase",
                   fq_value_str(!p->ok               ? "Error" :
                                p->nodes == p->ready ? "Running" :
                                                       "Reconciling"));
        if (p->ok) {
            if (p->failed_scale_up)
                fq_capacity_cond_set(s, "ScaleUp", "False", "GCE_STOCKOUT",
                                     p->fail_reason, st->now);
            else if (fq_capacity_cond(s, "ScaleUp"))
                fq_capacity_cond_set(s, "ScaleUp", "True", "Ok",
                                     "scale-up possible", st->now);
        }
        fq_objstore_update(fq_engine_store(e), o, true, NULL, NULL, NULL);
    }
}

/* --- watched workloads ------------------------------------------------- */

bool fq_capacity_workload_active(const struct fq_value *wl)
{
    const struct fq_value *s = fq_map_get(wl, "status");
    /* The cheap test first: most workloads of a deep queue are pending. */
    return fq_map_get(s, "admission") && cond_is(s, "Admitted", "True") &&
           !cond_is(s, "Finished", "True") && !cond_is(s, "Evicted", "True");
}

static bool watch_wanted(const struct fq_value *wl)
{
    const struct fq_value *s = fq_map_get(wl, "status");
    return (fq_map_get(s, "admission") ||
            fq_capacity_cond_true(s, "PodsReady")) &&
           !fq_capacity_cond_true(s, "Finished");
}

/* Records a workload's new state; true if it is or was watched. */
static bool watch_note(struct fq_capacity *st, const char *ns, const char *name,
                       const struct fq_value *wl)
{
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    struct fq_cap_watch *w = fq_smap_get(&st->watch, key);
    if (!wl || !watch_wanted(wl)) {
        if (!w)
            return false;
        fq_smap_del(&st->watch, key);
        fq_smap_add(&st->stopped, key);
        return true;
    }
    if (!w) {
        w = fq_xcalloc(1, sizeof(*w));
        fq_smap_put(&st->watch, key, w);
    }
    w->active = fq_capacity_workload_active(wl);
    w->settled = false;
    if (!w->active)
        fq_smap_add(&st->stopped, key);
    return true;
}

static void watch_seed(struct fq_capacity *st, struct fq_engine *e)
{
    if (st->watch_seeded)
        return;
    st->watch_seeded = true;
    st->watch.free_val = free;
    st->unplace_all = true;
    const struct fq_object **all;
    size_t n =
        fq_objstore_list(fq_engine_store(e), FQ_KIND_WORKLOAD, NULL, &all);
    for (size_t i = 0; i < n; i++)
        watch_note(st, all[i]->ns, all[i]->name, all[i]->obj);
    free(all);
}

static bool unsettled(const void *val)
{
    return !((const struct fq_cap_watch *)val)->settled;
}

size_t fq_capacity_watched(struct fq_capacity *st, struct fq_engine *e,
                           bool only_unsettled, const struct fq_object ***out)
{
    watch_seed(st, e);
    const char **keys;
    size_t nk = fq_smap_sorted_keys(&st->watch,
                                    only_unsettled ? unsettled : NULL, &keys);
    return objects_of(e, FQ_KIND_WORKLOAD, keys, nk, out);
}

void fq_capacity_settled(struct fq_capacity *st, const char *ns,
                         const char *name)
{
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    struct fq_cap_watch *w = fq_smap_get(&st->watch, key);
    if (w)
        w->settled = true;
}

/* --- controller ops --------------------------------------------------------- */

static void *cap_create(struct fq_engine *e)
{
    (void)e;
    struct fq_capacity *st = fq_xcalloc(1, sizeof(*st));
    st->wake = FQ_NEVER;
    return st;
}

static void cap_destroy(void *self)
{
    struct fq_capacity *st = self;
    if (!st)
        return;
    snapshot_free(st);
    free(st->nodes);
    for (size_t i = 0; i < st->nbo; i++)
        free(st->bo[i].pool);
    free(st->bo);
    fq_cloud_free(st->cloud);
    fq_cost_release(st);
    fq_smap_free(&st->watch);
    fq_smap_free(&st->stopped);
    fq_smap_free(&st->pods);
    fq_smap_free(&st->unsched);
    free(st);
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
                    c->type == FQ_CHANGE_DELETED ? NULL : c->obj))
        return;
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
    bootstrap(st, e);
    watch_seed(st, e);
    load_model(st, e);
    pools_free(st);
    snapshot(st, e);
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
