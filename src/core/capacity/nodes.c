/*
 * nodes.c - the capacity controller's node table: every Node decoded once
 * (allocatable, pool, slice, readiness, what is placed on it), indexed by
 * name, pool, slice and ProvisioningRequest, kept in node order, with
 * first fit over a pool's nodes, the sets and the min-heap the run steps
 * share, and the refresh that brings the table up to date with the store
 * at the start of a run.
 *
 * It exists for speed: the table is what placement, scale-down and the
 * ProvisioningRequest lifecycle read instead of decoding Nodes again. It
 * follows the store (a Node's resourceVersion tells whether its entry is
 * current; changed and deleted Nodes are marked dirty by on_change and
 * refreshed before anything reads them), and the invariant checker C4
 * (capacity/check.c) holds it against the stored Nodes after every
 * scenario settle.
 *
 * What it does not do: decide scaling (autoscaler.c), make or delete
 * slices (slices.c), or write Node objects beyond their placements. It
 * includes no module above it: what cost.c and provreq.c must hear of a
 * change it tells them through st->hooks (capacity/state.h).
 */
#include "capacity/nodes.h"
#include "capacity/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "flexq/timefmt.h"

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

void fq_capacity_add_resources(const struct fq_value *m, int64_t v[FQ_R_N])
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
    const struct fq_value *cs = fq_value_path(tmpl, FQ_POD_CONTAINERS);
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        const struct fq_value *r = fq_value_path(c, FQ_CTR_REQUESTS);
        int64_t one[FQ_R_N] = {0};
        fq_capacity_add_resources(r, one);
        /* A request defaults to its limit, resource by resource. */
        int64_t lim[FQ_R_N] = {0};
        fq_capacity_add_resources(fq_value_path(c, FQ_CTR_LIMITS), lim);
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
    /* The pools' counts are their nodes not gone: the same sum as over
     * the nodes, without visiting them. */
    int64_t n = 0;
    for (size_t i = 0; i < st->npools; i++) {
        const struct fq_cap_pool *p = &st->pools[i];
        if (!p->ok || strcmp(p->spec.machine->name, machine))
            continue;
        bool pf = fq_nodepool_provisioning(&p->spec) == FQ_PROV_FLEX_START;
        if (pf == flex)
            n += p->nodes;
    }
    return n;
}

/* --- node sets and the heap ---------------------------------------------- */

static int str_ptr_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void fq_capacity_nodes_add(struct fq_cap_nodes *s, struct fq_cap_node *n)
{
    FQ_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n++] = n;
}

void fq_capacity_nodes_remove(struct fq_cap_nodes *s,
                              const struct fq_cap_node *n)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == n) {
            s->v[i] = s->v[--s->n];
            return;
        }
}

int fq_capacity_node_order(const struct fq_cap_node *a,
                           const struct fq_cap_node *b)
{
    if (!a->born != !b->born)
        return a->born ? 1 : -1;
    if (a->born)
        return a->born < b->born ? -1 : a->born > b->born;
    return strcmp(a->name, b->name);
}

static int node_ptr_cmp(const void *a, const void *b)
{
    return fq_capacity_node_order(*(struct fq_cap_node *const *)a,
                                  *(struct fq_cap_node *const *)b);
}

void fq_capacity_nodes_sort(struct fq_cap_nodes *s)
{
    if (s->n > 1)
        qsort(s->v, s->n, sizeof(*s->v), node_ptr_cmp);
}

/* Where `n` goes in a set kept by name (the first entry not below it). */
static size_t sorted_at(const struct fq_cap_nodes *s, const char *name)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->v[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void sorted_insert(struct fq_cap_nodes *s, struct fq_cap_node *n)
{
    FQ_GROW(s->v, s->cap, s->n + 1);
    size_t at = sorted_at(s, n->name);
    memmove(&s->v[at + 1], &s->v[at], (s->n - at) * sizeof(*s->v));
    s->v[at] = n;
    s->n++;
}

static void sorted_remove(struct fq_cap_nodes *s, const struct fq_cap_node *n)
{
    /* Names are unique among live nodes, but a gone node and its
     * successor may share one: look for the pointer from there. */
    for (size_t at = sorted_at(s, n->name);
         at < s->n && !strcmp(s->v[at]->name, n->name); at++)
        if (s->v[at] == n) {
            memmove(&s->v[at], &s->v[at + 1], (s->n - at - 1) * sizeof(*s->v));
            s->n--;
            return;
        }
}

/* A pool's Ready / booting lists (kept by name); `up` changing makes its
 * first-fit tree stale. */
static void pool_list_insert(struct fq_cap_node *n)
{
    sorted_insert(n->ready ? &n->p->up : &n->p->booting, n);
    if (n->ready)
        n->p->fit_stale = true;
}

static void pool_list_remove(struct fq_cap_node *n)
{
    size_t before = n->p->up.n;
    sorted_remove(&n->p->up, n);
    sorted_remove(&n->p->booting, n);
    if (n->p->up.n != before)
        n->p->fit_stale = true;
}

/* --- first fit ---------------------------------------------------------- */

/* A leaf: the node's free room, or nothing for a node groups cannot use. */
static void fit_leaf(const struct fq_cap_pool *p, const struct fq_cap_node *n,
                     int64_t out[FQ_R_N + 1])
{
    bool usable = n && n->ready && !n->gone && !(p->spec.queued && n->provreq);
    for (int k = 0; k < FQ_R_N; k++)
        out[k] = usable ? n->alloc[k] - n->used[k] : -1;
    out[FQ_R_N] = usable;
}

static void fit_pull(struct fq_cap_pool *p, size_t x)
{
    for (int k = 0; k <= FQ_R_N; k++) {
        int64_t a = p->fit[2 * x][k], b = p->fit[2 * x + 1][k];
        p->fit[x][k] = a > b ? a : b;
    }
}

static void fit_build(struct fq_cap_pool *p)
{
    size_t size = 1;
    while (size < p->up.n)
        size *= 2;
    /* Every entry of the tree is written below, so the array is kept
     * from one build to the next: a fresh zeroed one, each time a node
     * became Ready or went, cost more than the build itself. */
    if (size > p->fit_cap) {
        free(p->fit);
        p->fit = fq_xcalloc(2 * size, sizeof(*p->fit));
        p->fit_cap = size;
    }
    p->fit_size = size;
    for (size_t i = 0; i < size; i++)
        fit_leaf(p, i < p->up.n ? p->up.v[i] : NULL, p->fit[size + i]);
    for (size_t x = size - 1; x >= 1; x--)
        fit_pull(p, x);
    p->fit_stale = false;
}

/* A node's room or usability changed: its leaf follows. */
void fq_capacity_fit_touch(struct fq_cap_node *n)
{
    struct fq_cap_pool *p = n->p;
    if (!p || n->born || p->fit_stale || !p->fit)
        return;
    size_t at = sorted_at(&p->up, n->name);
    while (at < p->up.n && p->up.v[at] != n &&
           !strcmp(p->up.v[at]->name, n->name))
        at++;
    if (at >= p->up.n || p->up.v[at] != n)
        return; /* not Ready: not in `up` */
    size_t x = p->fit_size + at;
    fit_leaf(p, n, p->fit[x]);
    for (x /= 2; x >= 1; x /= 2)
        fit_pull(p, x);
}

/* Whether some node below tree node x may have room for one pod. */
static bool fit_may(const int64_t v[FQ_R_N + 1], const int64_t req[FQ_R_N])
{
    if (v[FQ_R_N] < 1)
        return false;
    for (int k = 0; k < FQ_R_N; k++)
        if (req[k] > 0 && v[k] < req[k])
            return false;
    return true;
}

static size_t fit_find(const struct fq_cap_pool *p, size_t x, size_t lo,
                       size_t hi, size_t from, const int64_t req[FQ_R_N])
{
    if (hi <= from || !fit_may(p->fit[x], req))
        return SIZE_MAX;
    if (hi - lo == 1)
        return lo; /* a leaf: the test is exact */
    size_t mid = lo + (hi - lo) / 2;
    size_t r = fit_find(p, 2 * x, lo, mid, from, req);
    return r != SIZE_MAX ? r : fit_find(p, 2 * x + 1, mid, hi, from, req);
}

size_t fq_capacity_first_fit(struct fq_cap_pool *p, size_t from,
                             const int64_t req[FQ_R_N])
{
    if (p->fit_stale || !p->fit)
        fit_build(p);
    if (from >= p->up.n)
        return p->up.n;
    size_t r = fit_find(p, 1, 0, p->fit_size, from, req);
    return r < p->up.n ? r : p->up.n;
}

static bool hent_less(const void *x, const void *y)
{
    const struct fq_cap_hent *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t;
    return strcmp(a->key, b->key) < 0;
}

void fq_capacity_heap_push(struct fq_cap_heap *h, int64_t t, const char *key,
                           uint64_t stamp)
{
    if (!h->h.size)
        fq_heap_init(&h->h, sizeof(struct fq_cap_hent), hent_less);
    struct fq_cap_hent e = {t, stamp, fq_xstrdup(key)};
    fq_heap_push(&h->h, &e);
}

const struct fq_cap_hent *fq_capacity_heap_top(const struct fq_cap_heap *h)
{
    return fq_heap_top(&h->h);
}

void fq_capacity_heap_pop(struct fq_cap_heap *h)
{
    struct fq_cap_hent e;
    if (fq_heap_pop(&h->h, &e))
        free(e.key);
}

static void hent_drop(void *elem)
{
    free(((struct fq_cap_hent *)elem)->key);
}

struct hent_keep {
    bool (*keep)(void *ctx, const struct fq_cap_hent *ent);
    void *ctx;
};

static bool hent_keep(void *ctx, void *elem)
{
    const struct hent_keep *k = ctx;
    return k->keep(k->ctx, elem);
}

void fq_capacity_heap_filter(struct fq_cap_heap *h,
                             bool (*keep)(void *ctx,
                                          const struct fq_cap_hent *ent),
                             void *ctx)
{
    struct hent_keep k = {keep, ctx};
    fq_heap_filter(&h->h, hent_keep, hent_drop, &k);
}

void fq_capacity_heap_free(struct fq_cap_heap *h)
{
    for (size_t i = 0; i < h->h.n; i++)
        hent_drop(fq_heap_at(&h->h, i));
    fq_heap_release(&h->h);
}

/* --- the node table: decoding ------------------------------------------- */

static void places_free(struct fq_cap_place *pl, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fq_capacity_text_free(pl[i].wl);
        fq_capacity_text_free(pl[i].podset);
    }
    free(pl);
}

void fq_capacity_node_free(struct fq_cap_node *n)
{
    free(n->name);
    free(n->pool);
    free(n->slice);
    free(n->provreq);
    places_free(n->pl, n->npl);
    free(n);
}

static int64_t ann_time(const struct fq_value *obj, const char *key)
{
    const char *s = fq_value_as_str(fq_map_get(fq_meta_annotations(obj), key));
    int64_t t;
    if (!s || fq_time_parse(s, &t) < 0)
        return FQ_NEVER;
    return t;
}

/* pl, used and busy from a status.placements sequence. */
static void decode_places(struct fq_cap_node *n,
                          const struct fq_value *placements)
{
    places_free(n->pl, n->npl);
    n->npl = fq_value_len(placements);
    n->pl = n->npl ? fq_xcalloc(n->npl, sizeof(*n->pl)) : NULL;
    memset(n->used, 0, sizeof(n->used));
    n->busy = 0;
    for (size_t i = 0; i < n->npl; i++) {
        const struct fq_value *p = fq_seq_at(placements, i);
        struct fq_cap_place *x = &n->pl[i];
        x->wl = fq_capacity_text(fq_value_path_str(p, "workload", ""));
        x->wl_hash = fq_smap_hash(x->wl);
        x->podset = fq_capacity_text(fq_value_path_str(p, "podSet", ""));
        x->count = fq_value_path_int(p, "count", 0);
        fq_capacity_add_resources(fq_map_get(p, "requests"), x->req);
        for (int k = 0; k < FQ_R_N; k++)
            n->used[k] += x->req[k] * x->count;
        n->used[FQ_R_PODS] += x->count;
        n->busy += (int)x->count;
    }
}

void fq_capacity_pods_usage(struct fq_capacity *st, struct fq_cap_node *n)
{
    const struct fq_cap_podsum *ps = fq_smap_get(&st->podsum, n->name);
    memset(n->used, 0, sizeof(n->used));
    n->busy = 0;
    if (ps) {
        memcpy(n->used, ps->used, sizeof(n->used));
        n->busy = ps->busy;
    }
}

static struct fq_cap_node *node_decode(struct fq_capacity *st,
                                       const struct fq_object *obj)
{
    const struct fq_value *o = obj->obj;
    struct fq_cap_node *n = fq_xcalloc(1, sizeof(*n));
    n->rv = obj->rv;
    const struct fq_value *labels = fq_meta_labels(o);
    n->name = fq_xstrdup(obj->name);
    const char *pool = fq_value_as_str(fq_map_get(labels, FQ_LABEL_NODEPOOL));
    n->pool = fq_xstrdup(pool ? pool : "");
    const char *slice = fq_value_as_str(fq_map_get(labels, FQ_LABEL_SLICE));
    n->slice = fq_xstrdup(slice ? slice : n->name);
    const char *pr = fq_value_as_str(
        fq_map_get(fq_meta_annotations(o), FQ_ANN_NODE_PROVREQ));
    n->provreq = pr ? fq_xstrdup(pr) : NULL;
    n->ready = fq_cond_in_status_true(fq_map_get(o, "status"), "Ready");
    n->ready_at = n->ready ? FQ_NEVER : ann_time(o, FQ_ANN_READY_AT);
    n->unneeded_since = ann_time(o, FQ_ANN_UNNEEDED);
    fq_capacity_add_resources(fq_value_path(o, FQ_NODE_ALLOCATABLE), n->alloc);
    /* no_pods placements: status.placements[{workload, podSet, count,
     * requests (per pod)}] */
    decode_places(n, fq_value_path(o, FQ_NODE_PLACEMENTS));
    /* With pods, what is bound there makes it busy, not placements. */
    if (!st->no_pods)
        fq_capacity_pods_usage(st, n);
    return n;
}

/* What node_decode would read from a node add_slice just built, known
 * without reading it: no placements, no unneeded mark, and the exact
 * ready time rather than the stored one (seconds). */
struct fq_cap_node *fq_capacity_node_made(struct fq_capacity *st,
                                          const struct fq_object *obj,
                                          const struct fq_cap_pool *pool,
                                          const char *slice,
                                          const char *provreq, bool ready,
                                          int64_t ready_at)
{
    struct fq_cap_node *n = fq_xcalloc(1, sizeof(*n));
    n->rv = obj->rv;
    n->name = fq_xstrdup(obj->name);
    const char *pl = fq_value_as_str(
        fq_map_get(fq_meta_labels(obj->obj), FQ_LABEL_NODEPOOL));
    n->pool = fq_xstrdup(pl ? pl : "");
    n->slice = fq_xstrdup(slice);
    n->provreq = provreq ? fq_xstrdup(provreq) : NULL;
    n->ready = ready;
    n->ready_at = ready ? FQ_NEVER : ready_at;
    n->unneeded_since = FQ_NEVER;
    memcpy(n->alloc, pool->node_alloc, sizeof(n->alloc));
    if (!st->no_pods)
        fq_capacity_pods_usage(st, n);
    return n;
}

/* --- the node table: indices ---------------------------------------------- */

static void nodes_val_free(void *v)
{
    struct fq_cap_nodes *s = v;
    free(s->v);
    free(s);
}

static void index_add(struct fq_smap *ix, const char *key,
                      struct fq_cap_node *n)
{
    struct fq_cap_nodes *s = fq_smap_get(ix, key);
    if (!s) {
        s = fq_xcalloc(1, sizeof(*s));
        fq_smap_put(ix, key, s);
    }
    fq_capacity_nodes_add(s, n);
}

static void index_remove(struct fq_smap *ix, const char *key,
                         const struct fq_cap_node *n)
{
    struct fq_cap_nodes *s = fq_smap_get(ix, key);
    if (!s)
        return;
    fq_capacity_nodes_remove(s, n);
    if (s->n == 0)
        fq_smap_del(ix, key);
}

static size_t index_nodes(struct fq_smap *ix, const char *key,
                          struct fq_cap_node ***out)
{
    const struct fq_cap_nodes *s = key ? fq_smap_get(ix, key) : NULL;
    struct fq_cap_nodes copy = {0};
    copy.v = fq_xcalloc(s && s->n ? s->n : 1, sizeof(*copy.v));
    copy.cap = s && s->n ? s->n : 1;
    for (size_t i = 0; s && i < s->n; i++)
        copy.v[copy.n++] = s->v[i];
    fq_capacity_nodes_sort(&copy);
    *out = copy.v;
    return copy.n;
}

size_t fq_capacity_slice_nodes(struct fq_capacity *st, const char *slice,
                               struct fq_cap_node ***out)
{
    return index_nodes(&st->by_slice, slice, out);
}

const struct fq_cap_nodes *fq_capacity_slice(struct fq_capacity *st,
                                             const char *slice)
{
    return slice ? fq_smap_get(&st->by_slice, slice) : NULL;
}

size_t fq_capacity_provreq_nodes(struct fq_capacity *st, const char *key,
                                 struct fq_cap_node ***out)
{
    return index_nodes(&st->by_provreq, key, out);
}

bool fq_capacity_provreq_has_nodes(struct fq_capacity *st, const char *key)
{
    return key && fq_smap_get(&st->by_provreq, key) != NULL;
}

size_t fq_capacity_all_nodes(struct fq_capacity *st, struct fq_cap_node ***out)
{
    struct fq_cap_node **v =
        fq_xcalloc(st->sorted.n + st->created.n + 1, sizeof(*v));
    size_t m = 0;
    for (size_t i = 0; i < st->sorted.n; i++)
        if (!st->sorted.v[i]->gone)
            v[m++] = st->sorted.v[i];
    for (size_t i = 0; i < st->created.n; i++)
        if (!st->created.v[i]->gone)
            v[m++] = st->created.v[i];
    *out = v;
    return m;
}

struct fq_cap_node *fq_capacity_node(struct fq_capacity *st, const char *name)
{
    return name ? fq_smap_get(&st->node_by_name, name) : NULL;
}

void fq_capacity_sd_mark(struct fq_capacity *st, struct fq_cap_node *n)
{
    if (n->sd_listed || n->gone)
        return;
    n->sd_listed = true;
    fq_capacity_nodes_add(&st->sd_dirty, n);
}

void fq_capacity_provreq_written(struct fq_capacity *st, const char *key)
{
    fq_capacity_provreq_written_h(st, key, fq_smap_hash(key));
}

void fq_capacity_provreq_written_h(struct fq_capacity *st, const char *key,
                                   uint64_t hash)
{
    const struct fq_cap_nodes *s = fq_smap_get_h(&st->by_provreq, key, hash);
    for (size_t i = 0; s && i < s->n; i++)
        fq_capacity_sd_mark(st, s->v[i]);
}

static void wl_free(void *v)
{
    struct fq_cap_wl *w = v;
    free(w->key);
    free(w->refs);
    free(w->cq);
    free(w);
}

/* The placements of `n` leave the workload index (what they were charged
 * is accrued first). */
static void refs_remove(struct fq_capacity *st, struct fq_cap_node *n)
{
    if (!st->no_pods)
        return;
    for (size_t k = 0; k < n->npl; k++) {
        struct fq_cap_wl *w =
            fq_smap_get_h(&st->wls, n->pl[k].wl, n->pl[k].wl_hash);
        if (!w)
            continue;
        st->hooks.accrue(st, w);
        size_t m = 0;
        for (size_t i = 0; i < w->nrefs; i++)
            if (w->refs[i].node != n)
                w->refs[m++] = w->refs[i];
        w->nrefs = m;
    }
}

static void refs_add(struct fq_capacity *st, struct fq_cap_node *n)
{
    if (!st->no_pods)
        return;
    for (size_t k = 0; k < n->npl; k++) {
        struct fq_cap_wl *w =
            fq_smap_get_h(&st->wls, n->pl[k].wl, n->pl[k].wl_hash);
        if (!w) {
            w = fq_xcalloc(1, sizeof(*w));
            w->key = fq_xstrdup(n->pl[k].wl);
            w->since = INT64_MIN;
            fq_smap_put_h(&st->wls, n->pl[k].wl, n->pl[k].wl_hash, w);
        }
        st->hooks.accrue(st, w);
        FQ_GROW(w->refs, w->caprefs, w->nrefs + 1);
        w->refs[w->nrefs++] = (struct fq_cap_ref){n, k};
    }
}

/* Tells the request of `n` (if any) that its nodes changed. */
void fq_capacity_provreq_touch(struct fq_capacity *st,
                               const struct fq_cap_node *n)
{
    if (n->provreq)
        st->hooks.provreq_nodes_changed(st, n->provreq);
}

/* The indices that hold only nodes not gone, and the counts. */
void fq_capacity_node_attach(struct fq_capacity *st, struct fq_cap_node *n)
{
    st->sd_gen++;
    index_add(&st->by_slice, n->slice, n);
    if (n->provreq)
        index_add(&st->by_provreq, n->provreq, n);
    if (n->p) {
        n->p->nodes++;
        n->p->ready += n->ready;
        st->hooks.provreq_counts_changed(st);
    } else {
        fq_capacity_nodes_add(&st->orphans, n);
    }
    refs_add(st, n);
    if (!n->ready && n->ready_at != FQ_NEVER)
        fq_capacity_heap_push(&st->boot_heap, n->ready_at, n->name, 0);
    fq_capacity_sd_mark(st, n);
    fq_capacity_provreq_touch(st, n);
}

static void node_detach(struct fq_capacity *st, struct fq_cap_node *n)
{
    st->sd_gen++;
    index_remove(&st->by_slice, n->slice, n);
    if (n->provreq)
        index_remove(&st->by_provreq, n->provreq, n);
    if (n->p) {
        n->p->nodes--;
        n->p->ready -= n->ready;
        st->hooks.provreq_counts_changed(st);
    } else {
        fq_capacity_nodes_remove(&st->orphans, n);
    }
    refs_remove(st, n);
    fq_capacity_provreq_touch(st, n);
}

/* A node there when the run starts: every index. */
static void node_link(struct fq_capacity *st, struct fq_cap_node *n)
{
    n->p = fq_capacity_pool(st, n->pool);
    fq_smap_put(&st->node_by_name, n->name, n);
    sorted_insert(&st->sorted, n);
    if (n->p)
        pool_list_insert(n);
    fq_capacity_node_attach(st, n);
}

/* Takes a node out of the table and frees it (the run has not started
 * looking at nodes, so no step holds it). */
static void node_unlink(struct fq_capacity *st, struct fq_cap_node *n)
{
    if (!n->gone)
        node_detach(st, n);
    sorted_remove(&st->sorted, n);
    if (n->p)
        pool_list_remove(n);
    if (fq_smap_get(&st->node_by_name, n->name) == n)
        fq_smap_del(&st->node_by_name, n->name);
    if (n->sd_listed)
        fq_capacity_nodes_remove(&st->sd_dirty, n);
    if (n->sd_in_due)
        fq_capacity_nodes_remove(&st->sd_due, n);
    fq_capacity_node_free(n);
}

/* Deleted during this run: out of the indices of live nodes now, out of
 * the ordered lists at the start of the next run. */
void fq_capacity_node_gone(struct fq_capacity *st, struct fq_cap_node *n)
{
    if (n->gone)
        return;
    node_detach(st, n);
    n->gone = true;
    fq_capacity_fit_touch(n);
    fq_capacity_nodes_add(&st->gone, n);
}

void fq_capacity_node_usage(struct fq_capacity *st, struct fq_cap_node *n,
                            const struct fq_value *placements)
{
    bool was_busy = n->busy > 0;
    refs_remove(st, n);
    decode_places(n, placements);
    fq_capacity_fit_touch(n);
    refs_add(st, n);
    fq_capacity_sd_mark(st, n);
    if (was_busy != (n->busy > 0))
        fq_capacity_provreq_touch(st, n);
}

/* One placement from its stored entry, as decode_places reads it. */
static void decode_place(struct fq_cap_place *x, const struct fq_value *p)
{
    memset(x, 0, sizeof(*x));
    x->wl = fq_capacity_text(fq_value_path_str(p, "workload", ""));
    x->wl_hash = fq_smap_hash(x->wl);
    x->podset = fq_capacity_text(fq_value_path_str(p, "podSet", ""));
    x->count = fq_value_path_int(p, "count", 0);
    fq_capacity_add_resources(fq_map_get(p, "requests"), x->req);
}

/* used and busy from pl, as decode_places sums them. */
static void sum_places(struct fq_cap_node *n)
{
    memset(n->used, 0, sizeof(n->used));
    n->busy = 0;
    for (size_t i = 0; i < n->npl; i++) {
        const struct fq_cap_place *x = &n->pl[i];
        for (int k = 0; k < FQ_R_N; k++)
            n->used[k] += x->req[k] * x->count;
        n->used[FQ_R_PODS] += x->count;
        n->busy += (int)x->count;
    }
}

void fq_capacity_node_place(struct fq_capacity *st, struct fq_cap_node *n,
                            size_t k, const struct fq_value *entry,
                            const struct fq_value *placements)
{
    /* Nothing held before: placements of others may start being charged,
     * so everything follows the long way (as it does when the decoded
     * placements and the stored ones do not line up). */
    const char *wl = fq_value_path_str(entry, "workload", "");
    if (n->busy <= 0 || k > n->npl ||
        fq_value_len(placements) != n->npl + (k == n->npl) ||
        (k < n->npl &&
         (strcmp(n->pl[k].wl, wl) ||
          strcmp(n->pl[k].podset, fq_value_path_str(entry, "podSet", ""))))) {
        fq_capacity_node_usage(st, n, placements);
        return;
    }
    struct fq_cap_wl *w = st->no_pods ? fq_smap_get(&st->wls, wl) : NULL;
    if (w)
        st->hooks.accrue(st, w); /* at the share it had */
    if (k < n->npl) {
        n->pl[k].count = fq_value_path_int(entry, "count", 0);
    } else {
        n->pl = fq_xrealloc(n->pl, (n->npl + 1) * sizeof(*n->pl));
        decode_place(&n->pl[k], entry);
        n->npl = k + 1;
        refs_remove(st, n);
        refs_add(st, n);
    }
    sum_places(n);
    fq_capacity_fit_touch(n);
    fq_capacity_sd_mark(st, n);
}

void fq_capacity_node_drop(struct fq_capacity *st, struct fq_cap_node *n,
                           const bool *drop, const struct fq_value *placements)
{
    size_t kept = 0;
    for (size_t k = 0; k < n->npl; k++)
        kept += !drop[k];
    if (fq_value_len(placements) != kept) {
        fq_capacity_node_usage(st, n, placements);
        return;
    }
    bool was_busy = n->busy > 0;
    refs_remove(st, n);
    size_t m = 0;
    for (size_t k = 0; k < n->npl; k++) {
        if (drop[k]) {
            fq_capacity_text_free(n->pl[k].wl);
            fq_capacity_text_free(n->pl[k].podset);
        } else {
            n->pl[m++] = n->pl[k];
        }
    }
    n->npl = m;
    if (m == 0) {
        free(n->pl);
        n->pl = NULL;
    }
    sum_places(n);
    fq_capacity_fit_touch(n);
    refs_add(st, n);
    fq_capacity_sd_mark(st, n);
    if (was_busy != (n->busy > 0))
        fq_capacity_provreq_touch(st, n);
}

void fq_capacity_node_unneeded(struct fq_capacity *st, struct fq_cap_node *n,
                               int64_t t, bool look_again)
{
    n->unneeded_since = t;
    if (look_again)
        fq_capacity_sd_mark(st, n);
}

void fq_capacity_node_stored(struct fq_capacity *st, struct fq_engine *e,
                             struct fq_cap_node *n)
{
    (void)st;
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_NODE, "", n->name);
    /* Stored times keep their milliseconds (fq_time_format_ms); a node
     * whose stored times still differ from the decoded ones (one written
     * before they did) is decoded again by the next run. */
    if (o && ann_time(o->obj, FQ_ANN_UNNEEDED) == n->unneeded_since &&
        (n->ready || ann_time(o->obj, FQ_ANN_READY_AT) == n->ready_at))
        n->rv = o->rv;
}

/* A booting node became Ready. */
void fq_capacity_node_ready(struct fq_capacity *st, struct fq_cap_node *n)
{
    n->ready = true;
    n->ready_at = FQ_NEVER;
    if (n->p) {
        n->p->ready++;
        if (!n->born) {
            pool_list_remove(n);
            pool_list_insert(n);
        }
    }
    fq_capacity_sd_mark(st, n);
    fq_capacity_provreq_touch(st, n);
}

/* --- the node table: refresh at the start of a run ------------------------ */

static void pool_release(struct fq_cap_pool *p)
{
    free(p->name);
    fq_value_free(p->obj);
    fq_value_free(p->labels);
    fq_value_free(p->node_proto);
    free(p->up.v);
    free(p->booting.v);
    free(p->fit);
}

void fq_capacity_pools_free(struct fq_capacity *st)
{
    for (size_t i = 0; i < st->npools; i++)
        pool_release(&st->pools[i]);
    free(st->pools);
    st->pools = NULL;
    st->npools = 0;
}

/*
 * Decodes every pool again (one was added, deleted or changed its spec)
 * and puts each node under its pool. Rare: a cluster's pools are its
 * configuration.
 */
static void pools_load(struct fq_capacity *st, struct fq_engine *e)
{
    struct fq_cap_pool *old = st->pools;
    size_t nold = st->npools;
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object **list;
    size_t n = fq_objstore_list(s, FQ_KIND_NODEPOOL, NULL, &list);
    st->pools = fq_xcalloc(n ? n : 1, sizeof(*st->pools));
    st->npools = 0;
    for (size_t i = 0; i < n; i++) {
        struct fq_cap_pool *p = &st->pools[st->npools++];
        p->name = fq_xstrdup(list[i]->name);
        p->obj = fq_value_clone(list[i]->obj);
        p->generation = fq_value_path_int(p->obj, FQ_META_GENERATION, 0);
        p->ok = fq_nodepool_decode(p->obj, &p->spec, NULL) == 0;
        p->labels = p->ok ? fq_nodepool_node_labels(&p->spec) : NULL;
        p->cost_as_of =
            fq_value_path_int(p->obj, "status.cost.asOfMs", INT64_MIN);
        p->throttled.cost_written = p->throttled.status_written = INT64_MIN;
        /* Charges and rewrite times held in memory stay with the pool. */
        for (size_t k = 0; k < nold; k++) {
            if (strcmp(old[k].name, p->name))
                continue;
            p->throttled = old[k].throttled;
            if (p->throttled.held)
                p->cost_as_of = old[k].cost_as_of;
        }
    }
    free(list);
    for (size_t k = 0; k < nold; k++)
        pool_release(&old[k]);
    free(old);
    st->pools_dirty = false;
    st->pools_seen = true;
    st->decode_gen++;
    st->sd_gen++;
    st->orphans.n = 0;
    for (size_t i = 0; i < st->sorted.n; i++) {
        struct fq_cap_node *nd = st->sorted.v[i];
        nd->p = fq_capacity_pool(st, nd->pool);
        if (!nd->p) {
            fq_capacity_nodes_add(&st->orphans, nd);
            continue;
        }
        /* `sorted` is in name order: appending keeps the pool's too. */
        fq_capacity_nodes_add(nd->ready ? &nd->p->up : &nd->p->booting, nd);
        nd->p->nodes++;
        nd->p->ready += nd->ready;
    }
    st->hooks.provreq_all_changed(st);
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Brings a node entry in step with the store (see the top comment). */
static void node_refresh(struct fq_capacity *st, struct fq_engine *e,
                         const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_NODE, "", name);
    struct fq_cap_node *n = fq_smap_get(&st->node_by_name, name);
    if (n && o && !n->gone && n->rv == o->rv)
        return;
    struct fq_cap_node *d = o ? node_decode(st, o) : NULL;
    if (n && d && same_str(n->pool, d->pool) && same_str(n->slice, d->slice) &&
        same_str(n->provreq, d->provreq) && n->ready == d->ready) {
        /* Most often the node only had its placements or annotations
         * written: it keeps its place in every list, and only what hangs
         * on its placements and times follows. */
        bool was_busy = n->busy > 0;
        refs_remove(st, n);
        places_free(n->pl, n->npl);
        n->pl = d->pl;
        n->npl = d->npl;
        d->pl = NULL;
        d->npl = 0;
        n->rv = d->rv;
        n->ready_at = d->ready_at;
        n->unneeded_since = d->unneeded_since;
        memcpy(n->alloc, d->alloc, sizeof(n->alloc));
        memcpy(n->used, d->used, sizeof(n->used));
        n->busy = d->busy;
        fq_capacity_node_free(d);
        fq_capacity_fit_touch(n);
        refs_add(st, n);
        if (!n->ready && n->ready_at != FQ_NEVER)
            fq_capacity_heap_push(&st->boot_heap, n->ready_at, n->name, 0);
        fq_capacity_sd_mark(st, n);
        if (was_busy != (n->busy > 0))
            fq_capacity_provreq_touch(st, n);
        return;
    }
    if (n)
        node_unlink(st, n);
    if (d)
        node_link(st, d);
}

void fq_capacity_refresh(struct fq_capacity *st, struct fq_engine *e)
{
    /* Nodes deleted by the last run leave; those it created join. */
    for (size_t i = 0; i < st->gone.n; i++)
        node_unlink(st, st->gone.v[i]);
    st->gone.n = 0;
    for (size_t i = 0; i < st->created.n; i++) {
        struct fq_cap_node *n = st->created.v[i];
        n->born = 0;
        sorted_insert(&st->sorted, n);
        if (n->p)
            pool_list_insert(n);
    }
    st->created.n = 0;
    st->nborn = 0;
    if (st->pools_dirty || !st->pools_seen)
        pools_load(st, e);
    if (!st->nodes_seeded) {
        st->nodes_seeded = true;
        st->node_by_name.free_val = NULL;
        st->by_slice.free_val = nodes_val_free;
        st->by_provreq.free_val = nodes_val_free;
        st->wls.free_val = wl_free;
        const struct fq_object **list;
        size_t n =
            fq_objstore_list(fq_engine_store(e), FQ_KIND_NODE, NULL, &list);
        for (size_t i = 0; i < n; i++)
            node_link(st, node_decode(st, list[i]));
        free(list);
    }
    /* The Nodes on_change named, each once, in name order. */
    if (st->nnode_dirty > 1)
        qsort(st->node_dirty, st->nnode_dirty, sizeof(*st->node_dirty),
              str_ptr_cmp);
    for (size_t i = 0; i < st->nnode_dirty; i++) {
        if (i == 0 || strcmp(st->node_dirty[i - 1], st->node_dirty[i]))
            node_refresh(st, e, st->node_dirty[i]);
    }
    for (size_t i = 0; i < st->nnode_dirty; i++)
        free(st->node_dirty[i]);
    st->nnode_dirty = 0;
    fq_capacity_pods_seed(st, e);
}

/* --- live pods bound to nodes (with pods) ------------------------------ */

static bool cond_is(const struct fq_value *status, const char *type,
                    const char *want)
{
    return fq_cond_status_is(fq_cond_in_status(status, type), want);
}

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
void fq_capacity_pod_note(struct fq_capacity *st, const char *ns,
                          const char *name, const struct fq_value *pod)
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
        fq_capacity_pod_note(st, list[i]->ns, list[i]->name, list[i]->obj);
    free(list);
}

size_t fq_capacity_unsched(struct fq_capacity *st, struct fq_engine *e,
                           const struct fq_object ***out)
{
    fq_capacity_pods_seed(st, e);
    const char **keys;
    size_t nk = fq_smap_sorted_keys(&st->unsched, NULL, &keys);
    return fq_capacity_objects_of(e, FQ_KIND_POD, keys, nk, out);
}
