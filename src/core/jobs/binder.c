/*
 * binder.c - binds Pending pods to nodes: kube-scheduler's filter phase.
 *
 * The binder keeps, from the Pod changes it sees, the set of pending pods
 * and what each live bound pod takes on its node, so a run costs the
 * pending pods times the nodes, not a scan of every pod ever made.
 * Each run looks at every Pod that has no spec.nodeName and is Pending,
 * highest spec.priority first, then oldest, then by name, and keeps the
 * first Node (in name order) that passes every filter:
 *
 *   1. the node is Ready (condition Ready=True) and not spec.unschedulable;
 *   2. pod spec.nodeSelector: every key/value is a node label;
 *   3. required node affinity: one of the nodeSelectorTerms matches (each
 *      term's matchExpressions all hold: In, NotIn, Exists, DoesNotExist,
 *      Gt, Lt; matchFields on metadata.name);
 *   4. taints with effect NoSchedule or NoExecute are all tolerated
 *      (PreferNoSchedule is a preference, ignored by a filter);
 *   0. pods with spec.schedulingGates wait (PodScheduled=False,
 *      SchedulingGated), as Kueue's elastic slices gate new pods;
 *   5. requests fit: allocatable minus the requests of the non-terminal
 *      pods already bound there, for every resource the pod asks for
 *      (a container's request defaults to its limit) and one "pods" slot.
 *
 * A bound pod gets spec.nodeName and PodScheduled=True, and an event
 * "Scheduled". A pod that fits nowhere gets PodScheduled=False, reason
 * Unschedulable, with kube-scheduler's message, e.g.
 *   0/3 nodes are available: 1 Insufficient google.com/tpu, 2 node(s)
 *   didn't match Pod's node affinity/selector.
 * which the cluster autoscaler reads to scale a pool up.
 *
 * Gangs: pods with the annotation flexq.dev/gang (a RayCluster's worker
 * slice, see raycluster.c) bind all-or-nothing once all flexq.dev/gang-size
 * of them exist. When nodes carry flexq.dev/slice (multi-host TPU slices,
 * nodepool.c), the whole gang goes onto the nodes of one slice, as KubeRay
 * and GKE place one replica of a multi-host worker group on one slice.
 *
 * Invariants:
 *  1. A pod is bound at most once; spec.nodeName never changes after.
 *  2. The requests of the pods bound to a node never exceed its
 *     allocatable, counting only pods that are not Succeeded/Failed.
 *  3. A gang is either wholly bound or not bound at all.
 *
 * What it does not do: scoring and spreading (first fit in name order
 * keeps it deterministic and packs nodes, which lets pools scale down),
 * preemption, inter-pod affinity, topology spread, volumes, ports; nor
 * anything in `no_pods` mode (the capacity controller places podsets
 * itself in the simulator).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/smap.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "jobs/pods.h"

#define MAX_RES 16

struct res {
    const char *name[MAX_RES]; /* borrowed from the object trees */
    int64_t v[MAX_RES];
    int n;
};

struct bnode {
    const struct fq_value *obj; /* borrowed: nodes are not written here */
    const char *name;
    const char *slice; /* flexq.dev/slice label or NULL */
    bool ready;
    struct res alloc, used;
};

struct bpod {
    struct fq_value *obj; /* owned copy */
    const char *ns, *name;
    int64_t prio;
    const char *created;
    const char *gang; /* "ns/gang" key or NULL */
    int64_t gang_size;
    struct res req;
    bool done;
};

/* A live pod bound to a node: what it takes there. */
struct bres {
    char *node;           /* owned */
    char *names[MAX_RES]; /* owned; req.name[i] points here */
    struct res req;
};

/*
 * The binder's view, kept from the change stream so that a run costs the
 * pending pods and the live bound ones, not every pod ever made:
 * `pending` holds the keys ("ns/name") of unbound, non-terminal pods;
 * `bound` maps the keys of bound, non-terminal pods to a struct bres.
 */
struct binder {
    struct fq_smap pending;
    struct fq_smap bound;
    bool dirty;
};

static int64_t res_get(const struct res *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->name[i], name) == 0)
            return r->v[i];
    return 0;
}

static bool res_has(const struct res *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->name[i], name) == 0)
            return true;
    return false;
}

static void res_add(struct res *r, const char *name, int64_t v)
{
    for (int i = 0; i < r->n; i++) {
        if (strcmp(r->name[i], name) == 0) {
            r->v[i] += v;
            return;
        }
    }
    if (r->n == MAX_RES)
        return;
    r->name[r->n] = name;
    r->v[r->n++] = v;
}

static void res_from_map(struct res *r, const struct fq_value *m)
{
    if (!m || m->type != FQ_V_MAP)
        return;
    for (size_t i = 0; i < m->u.map.n; i++) {
        const struct fq_member *mb = &m->u.map.items[i];
        const char *s = fq_value_as_str(mb->val);
        char buf[32];
        if (!s && mb->val->type == FQ_V_NUM) {
            s = mb->val->u.num.raw;
        } else if (!s) {
            continue;
        }
        int64_t v = 0;
        snprintf(buf, sizeof(buf), "%s", s);
        if (fq_quantity_parse(buf, fq_quantity_scale_for(mb->key), &v, NULL,
                              NULL) == 0)
            res_add(r, mb->key, v);
    }
}

/* A pod's requests: per container, requests, else limits; plus one pod. */
static void pod_requests(const struct fq_value *pod, struct res *r)
{
    const struct fq_value *cs = fq_value_path(pod, FQ_POD_CONTAINERS);
    memset(r, 0, sizeof(*r));
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *res = fq_map_get(fq_seq_at(cs, i), "resources");
        struct res c;
        memset(&c, 0, sizeof(c));
        res_from_map(&c, fq_map_get(res, "requests"));
        struct res lim;
        memset(&lim, 0, sizeof(lim));
        res_from_map(&lim, fq_map_get(res, "limits"));
        for (int k = 0; k < lim.n; k++)
            if (!res_has(&c, lim.name[k]))
                res_add(&c, lim.name[k], lim.v[k]);
        for (int k = 0; k < c.n; k++)
            res_add(r, c.name[k], c.v[k]);
    }
    res_add(r, "pods", 1);
}

/* --- filters ---------------------------------------------------------- */

static bool selector_ok(const struct fq_value *pod, const struct fq_value *node)
{
    const struct fq_value *sel = fq_value_path(pod, FQ_POD_NODE_SELECTOR);
    const struct fq_value *labels = fq_meta_labels(node);
    if (!sel || sel->type != FQ_V_MAP)
        return true;
    for (size_t i = 0; i < sel->u.map.n; i++) {
        const char *want = fq_value_as_str(sel->u.map.items[i].val);
        const char *have =
            fq_value_as_str(fq_map_get(labels, sel->u.map.items[i].key));
        if (!have || !want || strcmp(want, have) != 0)
            return false;
    }
    return true;
}

static bool in_values(const struct fq_value *vals, const char *s)
{
    for (size_t i = 0; s && i < fq_value_len(vals); i++) {
        const char *v = fq_value_as_str(fq_seq_at(vals, i));
        if (v && strcmp(v, s) == 0)
            return true;
    }
    return false;
}

static bool expr_ok(const struct fq_value *ex, const char *have)
{
    const char *op = fq_value_path_str(ex, "operator", "");
    const struct fq_value *vals = fq_map_get(ex, "values");
    if (strcmp(op, "In") == 0)
        return in_values(vals, have);
    if (strcmp(op, "NotIn") == 0)
        return !in_values(vals, have);
    if (strcmp(op, "Exists") == 0)
        return have != NULL;
    if (strcmp(op, "DoesNotExist") == 0)
        return have == NULL;
    if (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) {
        const char *v = fq_value_as_str(fq_seq_at(vals, 0));
        if (!have || !v)
            return false;
        long long a = atoll(have), b = atoll(v);
        return op[0] == 'G' ? a > b : a < b;
    }
    return false;
}

static bool affinity_ok(const struct fq_value *pod, const struct fq_value *node)
{
    const struct fq_value *terms =
        fq_value_path(pod, "spec.affinity.nodeAffinity."
                           "requiredDuringSchedulingIgnoredDuringExecution."
                           "nodeSelectorTerms");
    if (!terms || fq_value_len(terms) == 0)
        return true;
    const struct fq_value *labels = fq_meta_labels(node);
    const char *nname = fq_meta_name(node);
    for (size_t t = 0; t < fq_value_len(terms); t++) {
        const struct fq_value *term = fq_seq_at(terms, t);
        const struct fq_value *exprs = fq_map_get(term, "matchExpressions");
        const struct fq_value *fields = fq_map_get(term, "matchFields");
        if (fq_value_len(exprs) == 0 && fq_value_len(fields) == 0)
            continue; /* an empty term matches nothing */
        bool ok = true;
        for (size_t i = 0; ok && i < fq_value_len(exprs); i++) {
            const struct fq_value *ex = fq_seq_at(exprs, i);
            ok = expr_ok(ex, fq_value_as_str(fq_map_get(
                                 labels, fq_value_path_str(ex, "key", ""))));
        }
        for (size_t i = 0; ok && i < fq_value_len(fields); i++) {
            const struct fq_value *ex = fq_seq_at(fields, i);
            bool is_name =
                strcmp(fq_value_path_str(ex, "key", ""), "metadata.name") == 0;
            ok = expr_ok(ex, is_name ? nname : NULL);
        }
        if (ok)
            return true;
    }
    return false;
}

static bool tolerates(const struct fq_value *tols, const struct fq_value *t)
{
    const char *key = fq_value_path_str(t, "key", "");
    const char *val = fq_value_path_str(t, "value", "");
    const char *eff = fq_value_path_str(t, "effect", "");
    for (size_t i = 0; i < fq_value_len(tols); i++) {
        const struct fq_value *tol = fq_seq_at(tols, i);
        const char *tk = fq_value_path_str(tol, "key", "");
        const char *op = fq_value_path_str(tol, "operator", "Equal");
        const char *tv = fq_value_path_str(tol, "value", "");
        const char *te = fq_value_path_str(tol, "effect", "");
        if (*te && strcmp(te, eff) != 0)
            continue;
        if (strcmp(op, "Exists") == 0) {
            if (!*tk || strcmp(tk, key) == 0)
                return true;
        } else if (strcmp(tk, key) == 0 && strcmp(tv, val) == 0) {
            return true;
        }
    }
    return false;
}

/* The first untolerated hard taint, or NULL. */
static const struct fq_value *untolerated(const struct fq_value *pod,
                                          const struct fq_value *node)
{
    const struct fq_value *taints = fq_value_path(node, FQ_NODE_TAINTS);
    const struct fq_value *tols = fq_value_path(pod, FQ_POD_TOLERATIONS);
    for (size_t i = 0; i < fq_value_len(taints); i++) {
        const struct fq_value *t = fq_seq_at(taints, i);
        const char *eff = fq_value_path_str(t, "effect", "");
        if (strcmp(eff, "NoSchedule") != 0 && strcmp(eff, "NoExecute") != 0)
            continue;
        if (!tolerates(tols, t))
            return t;
    }
    return NULL;
}

/* Why a node refuses a pod, as kube-scheduler words it; NULL if it fits.
 * `used` is the node's usage to check against. */
static const char *node_refuses(const struct bpod *p, const struct bnode *n,
                                const struct res *used, char *buf, size_t size)
{
    if (!n->ready)
        return "node(s) were not ready";
    if (fq_value_path_bool(n->obj, FQ_NODE_UNSCHEDULABLE, false))
        return "node(s) were unschedulable";
    if (!selector_ok(p->obj, n->obj) || !affinity_ok(p->obj, n->obj))
        return "node(s) didn't match Pod's node affinity/selector";
    const struct fq_value *t = untolerated(p->obj, n->obj);
    if (t) {
        snprintf(buf, size, "node(s) had untolerated taint {%s: %s}",
                 fq_value_path_str(t, "key", ""),
                 fq_value_path_str(t, "value", ""));
        return buf;
    }
    for (int i = 0; i < p->req.n; i++) {
        if (p->req.v[i] <= 0)
            continue;
        int64_t free_ =
            res_get(&n->alloc, p->req.name[i]) - res_get(used, p->req.name[i]);
        if (p->req.v[i] > free_) {
            snprintf(buf, size, "Insufficient %s", p->req.name[i]);
            return buf;
        }
    }
    return NULL;
}

/* --- messages --------------------------------------------------------- */

struct reasons {
    char *text[32]; /* owned */
    int count[32];
    int n;
};

static void reasons_add(struct reasons *rs, const char *why)
{
    for (int i = 0; i < rs->n; i++) {
        if (strcmp(rs->text[i], why) == 0) {
            rs->count[i]++;
            return;
        }
    }
    if (rs->n == 32)
        return;
    rs->text[rs->n] = fq_xstrdup(why);
    rs->count[rs->n++] = 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "0/N nodes are available: 1 Insufficient cpu, 2 node(s) ... ." */
static char *unsched_message(struct reasons *rs, size_t nnodes)
{
    if (nnodes == 0)
        return fq_xstrdup("no nodes available to schedule pods");
    char *parts[32];
    for (int i = 0; i < rs->n; i++) {
        parts[i] = fq_xasprintf("%d %s", rs->count[i], rs->text[i]);
        free(rs->text[i]);
    }
    qsort(parts, (size_t)rs->n, sizeof(*parts), cmp_str);
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_printf(&b, "0/%zu nodes are available: ", nnodes);
    for (int i = 0; i < rs->n; i++) {
        fq_buf_printf(&b, "%s%s", i ? ", " : "", parts[i]);
        free(parts[i]);
    }
    fq_buf_putc(&b, '.');
    rs->n = 0;
    return fq_buf_detach(&b);
}

/* --- writes ----------------------------------------------------------- */

static void bind_pod(struct fq_engine *e, struct bpod *p, const char *node,
                     int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    struct fq_value *obj = fq_objstore_edit(s, FQ_KIND_POD, p->ns, p->name);
    if (!obj)
        return;
    fq_map_set(fq_map_ensure_map(obj, "spec"), "nodeName", fq_value_str(node));
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    fq_pods_cond_set(st, "PodScheduled", "True", NULL, NULL, now);
    if (fq_objstore_update(s, obj, true, NULL, NULL, NULL) == 0)
        fq_engine_event(e, p->obj, "Normal", "Scheduled",
                        "Successfully assigned %s/%s to %s", p->ns, p->name,
                        node);
    p->done = true;
}

static void mark_pending(struct fq_engine *e, struct bpod *p,
                         const char *reason, const char *msg, int64_t now)
{
    const struct fq_value *old =
        fq_pods_cond(fq_map_get(p->obj, "status"), "PodScheduled");
    if (old && strcmp(fq_value_path_str(old, "message", ""), msg) == 0 &&
        strcmp(fq_value_path_str(old, "status", ""), "False") == 0)
        return;
    struct fq_value *st = fq_value_clone(fq_map_get(p->obj, "status"));
    if (!st || st->type != FQ_V_MAP) {
        fq_value_free(st);
        st = fq_value_map();
    }
    fq_pods_cond_set(st, "PodScheduled", "False", reason, msg, now);
    if (fq_pods_put_status(e, FQ_KIND_POD, p->ns, p->name, st) &&
        strcmp(reason, "Unschedulable") == 0)
        fq_engine_event(e, p->obj, "Warning", "FailedScheduling", "%s", msg);
}

static void mark_unschedulable(struct fq_engine *e, struct bpod *p,
                               const char *msg, int64_t now)
{
    mark_pending(e, p, "Unschedulable", msg, now);
}

/* --- placement -------------------------------------------------------- */

/* Places one pod on a node (first fit); returns the node index or -1 and
 * collects the reasons of every refusal. `only_slice`: NULL = nodes
 * without a slice label are allowed and sliced ones too; else only that
 * slice. */
static int place(struct bpod *p, struct bnode *nodes, size_t nn,
                 const char *only_slice, struct reasons *rs)
{
    char buf[300];
    for (size_t i = 0; i < nn; i++) {
        if (only_slice &&
            (!nodes[i].slice || strcmp(nodes[i].slice, only_slice) != 0))
            continue;
        const char *why =
            node_refuses(p, &nodes[i], &nodes[i].used, buf, sizeof(buf));
        if (!why)
            return (int)i;
        if (rs)
            reasons_add(rs, why);
    }
    return -1;
}

static void charge(struct bnode *n, const struct res *req, int sign)
{
    for (int i = 0; i < req->n; i++)
        res_add(&n->used, req->name[i], sign * req->v[i]);
}

/* Tries to place the members of a gang on one slice (or on unsliced
 * nodes); on success fills where[] and charges the nodes. */
static bool place_gang(struct bpod **mem, size_t m, struct bnode *nodes,
                       size_t nn, int *where)
{
    /* Candidate slices: each distinct slice label, then "no slice". */
    const char **slices = fq_xcalloc(nn + 1, sizeof(*slices));
    size_t ns = 0;
    for (size_t i = 0; i < nn; i++) {
        if (!nodes[i].slice)
            continue;
        bool seen = false;
        for (size_t j = 0; j < ns && !seen; j++)
            seen = strcmp(slices[j], nodes[i].slice) == 0;
        if (!seen)
            slices[ns++] = nodes[i].slice;
    }
    bool ok = false;
    for (size_t s = 0; s <= ns && !ok; s++) {
        const char *only = s < ns ? slices[s] : NULL;
        size_t k = 0;
        for (; k < m; k++) {
            int w = -1;
            if (only) {
                w = place(mem[k], nodes, nn, only, NULL);
            } else {
                /* Unsliced nodes only, so a gang never straddles slices. */
                char buf[300];
                for (size_t i = 0; i < nn && w < 0; i++)
                    if (!nodes[i].slice &&
                        !node_refuses(mem[k], &nodes[i], &nodes[i].used, buf,
                                      sizeof(buf)))
                        w = (int)i;
            }
            if (w < 0)
                break;
            where[k] = w;
            charge(&nodes[w], &mem[k]->req, 1);
        }
        if (k == m) {
            ok = true;
        } else {
            while (k-- > 0)
                charge(&nodes[where[k]], &mem[k]->req, -1);
        }
    }
    free(slices);
    return ok;
}

static int cmp_pod(const void *a, const void *b)
{
    const struct bpod *x = a, *y = b;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    int c = strcmp(x->created, y->created);
    if (c)
        return c;
    c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}

static void run_binder(struct binder *b, struct fq_engine *e, int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object **nobjs = NULL;
    size_t nn = fq_objstore_list(s, FQ_KIND_NODE, NULL, &nobjs);
    /* Nodes are not written in this function, so borrowing them is safe;
     * pods are, so the pending ones are copied. */
    struct bnode *nodes = fq_xcalloc(nn + 1, sizeof(*nodes));
    struct fq_smap by_name = {0};
    for (size_t i = 0; i < nn; i++) {
        struct bnode *n = &nodes[i];
        n->obj = nobjs[i]->obj;
        n->name = nobjs[i]->name;
        n->slice = fq_value_as_str(
            fq_map_get(fq_meta_labels(n->obj), "flexq.dev/slice"));
        n->ready = fq_pods_cond_true(fq_map_get(n->obj, "status"), "Ready");
        res_from_map(&n->alloc, fq_value_path(n->obj, FQ_NODE_ALLOCATABLE));
        fq_smap_put(&by_name, n->name, (void *)(uintptr_t)(i + 1));
    }
    for (size_t i = 0; i < b->bound.cap; i++) {
        const struct bres *br = b->bound.t[i].val;
        if (!b->bound.t[i].key)
            continue;
        uintptr_t ix = (uintptr_t)fq_smap_get(&by_name, br->node);
        if (ix)
            charge(&nodes[ix - 1], &br->req, 1);
    }
    fq_smap_free(&by_name);

    size_t np = b->pending.n;
    struct bpod *pend = fq_xcalloc(np + 1, sizeof(*pend));
    size_t npend = 0;
    char **gone = fq_xcalloc(np + 1, sizeof(*gone));
    size_t ngone = 0;
    for (size_t slot = 0; slot < b->pending.cap; slot++) {
        const char *key = b->pending.t[slot].key;
        if (!key)
            continue;
        char *k = fq_xstrdup(key);
        const char *ns, *name;
        fq_pods_key_split(k, &ns, &name);
        const struct fq_object *o = fq_objstore_get(s, FQ_KIND_POD, ns, name);
        const struct fq_value *p = o ? o->obj : NULL;
        const char *node = fq_value_path_str(p, FQ_POD_NODE_NAME, NULL);
        if (!p || fq_pods_terminal(p) || (node && *node)) {
            gone[ngone++] = fq_xstrdup(key);
            free(k);
            continue;
        }
        free(k);
        struct bpod *bp = &pend[npend++];
        bp->obj = fq_value_clone(p);
        bp->ns = fq_meta_namespace(bp->obj);
        bp->name = fq_meta_name(bp->obj);
        bp->prio = fq_value_path_int(bp->obj, FQ_WL_PRIORITY, 0);
        bp->created = fq_value_path_str(bp->obj, FQ_META_CREATED, "");
        const struct fq_value *ann = fq_meta_annotations(bp->obj);
        bp->gang = fq_value_as_str(fq_map_get(ann, FQ_ANN_GANG));
        const char *gs = fq_value_as_str(fq_map_get(ann, FQ_ANN_GANG_SIZE));
        bp->gang_size = gs ? atoll(gs) : 1;
        pod_requests(bp->obj, &bp->req);
    }
    for (size_t i = 0; i < ngone; i++) {
        fq_smap_del(&b->pending, gone[i]);
        free(gone[i]);
    }
    free(gone);
    for (size_t i = 0; i < npend; i++) {
        struct bpod *bp = &pend[i];
        if (fq_value_len(fq_value_path(bp->obj, FQ_POD_SCHEDULING_GATES))) {
            /* Kueue's elastic slices gate new pods until admitted. */
            mark_pending(e, bp, "SchedulingGated",
                         "Scheduling is blocked due to non-empty scheduling "
                         "gates",
                         now);
            bp->done = true;
        }
    }
    qsort(pend, npend, sizeof(*pend), cmp_pod);

    struct reasons rs;
    memset(&rs, 0, sizeof(rs));
    for (size_t i = 0; i < npend; i++) {
        struct bpod *p = &pend[i];
        if (p->done)
            continue;
        if (!p->gang || p->gang_size <= 1) {
            int w = place(p, nodes, nn, NULL, &rs);
            char *msg = unsched_message(&rs, nn);
            if (w >= 0) {
                charge(&nodes[w], &p->req, 1);
                bind_pod(e, p, nodes[w].name, now);
            } else {
                mark_unschedulable(e, p, msg, now);
            }
            free(msg);
            continue;
        }
        /* A gang: gather its pending members (same namespace). */
        struct bpod **mem = fq_xcalloc(npend, sizeof(*mem));
        size_t m = 0;
        for (size_t j = i; j < npend; j++)
            if (!pend[j].done && pend[j].gang &&
                strcmp(pend[j].gang, p->gang) == 0 &&
                strcmp(pend[j].ns, p->ns) == 0)
                mem[m++] = &pend[j];
        int *where = fq_xcalloc(m + 1, sizeof(*where));
        if ((int64_t)m >= p->gang_size &&
            place_gang(mem, m, nodes, nn, where)) {
            for (size_t k = 0; k < m; k++)
                bind_pod(e, mem[k], nodes[where[k]].name, now);
        } else {
            char *msg;
            if ((int64_t)m < p->gang_size) {
                msg = fq_xasprintf("waiting for gang %s: %zu of %lld pods "
                                   "created",
                                   p->gang, m, (long long)p->gang_size);
            } else {
                place(p, nodes, nn, NULL, &rs);
                char *base = unsched_message(&rs, nn);
                msg = fq_xasprintf("%s Gang %s: its %zu pods do not fit "
                                   "together on one slice.",
                                   base, p->gang, m);
                free(base);
            }
            for (size_t k = 0; k < m; k++) {
                mark_unschedulable(e, mem[k], msg, now);
                mem[k]->done = true;
            }
            free(msg);
        }
        free(where);
        free(mem);
    }
    for (int i = 0; i < rs.n; i++)
        free(rs.text[i]);
    for (size_t i = 0; i < npend; i++)
        fq_value_free(pend[i].obj);
    free(pend);
    free(nodes);
    free(nobjs);
}

/* --- controller ------------------------------------------------------- */

static void bres_free(void *p)
{
    struct bres *br = p;
    if (!br)
        return;
    for (int i = 0; i < br->req.n; i++)
        free(br->names[i]);
    free(br->node);
    free(br);
}

static void *b_create(struct fq_engine *e)
{
    (void)e;
    /* Not dirty at start: every pod or node stored (also when flexqd
     * reloads its store) is a change that reaches on_change. */
    struct binder *b = fq_xcalloc(1, sizeof(*b));
    b->bound.free_val = bres_free;
    return b;
}

static void b_destroy(void *self)
{
    struct binder *b = self;
    fq_smap_free(&b->pending);
    fq_smap_free(&b->bound);
    free(b);
}

/* Keeps `pending` and `bound` in step with one Pod change; returns true
 * when the binder has something new to try. */
static bool note_pod(struct binder *b, const struct fq_change *c)
{
    char *key = fq_xasprintf("%s/%s", c->ns, c->name);
    bool was_bound = fq_smap_has(&b->bound, key);
    bool live =
        c->type != FQ_CHANGE_DELETED && c->obj && !fq_pods_terminal(c->obj);
    const char *node =
        live ? fq_value_path_str(c->obj, FQ_POD_NODE_NAME, NULL) : NULL;
    bool kick = false;
    if (!live) {
        fq_smap_del(&b->pending, key);
        fq_smap_del(&b->bound, key);
        kick = was_bound; /* room freed */
    } else if (node && *node) {
        fq_smap_del(&b->pending, key);
        struct bres *old = fq_smap_get(&b->bound, key);
        if (!old || strcmp(old->node, node) != 0) {
            struct bres *br = fq_xcalloc(1, sizeof(*br));
            struct res r;
            pod_requests(c->obj, &r);
            br->node = fq_xstrdup(node);
            for (int i = 0; i < r.n; i++) {
                br->names[i] = fq_xstrdup(r.name[i]);
                br->req.name[i] = br->names[i];
                br->req.v[i] = r.v[i];
            }
            br->req.n = r.n;
            fq_smap_put(&b->bound, key, br);
        }
    } else {
        fq_smap_add(&b->pending, key);
        kick = true;
    }
    free(key);
    return kick && b->pending.n > 0;
}

static void b_on_change(void *self, struct fq_engine *e,
                        const struct fq_change *c)
{
    struct binder *b = self;
    if (fq_engine_config(e)->no_pods)
        return;
    bool kick;
    if (c->kind == FQ_KIND_POD)
        kick = note_pod(b, c);
    else
        kick = b->pending.n > 0; /* a node changed */
    if (kick) {
        b->dirty = true;
        fq_engine_kick(e, self);
    }
}

static void b_run(void *self, struct fq_engine *e, int64_t now)
{
    struct binder *b = self;
    if (!b->dirty)
        return;
    b->dirty = false;
    if (fq_engine_config(e)->no_pods || b->pending.n == 0)
        return;
    run_binder(b, e, now);
}

static int64_t b_next_wakeup(const void *self)
{
    const struct binder *b = self;
    return b->dirty ? 0 : FQ_NEVER;
}

const struct fq_controller_ops fq_binder_controller = {
    .name = "binder",
    .watch = FQ_KIND_BIT(FQ_KIND_POD) | FQ_KIND_BIT(FQ_KIND_NODE),
    .create = b_create,
    .destroy = b_destroy,
    .on_change = b_on_change,
    .run = b_run,
    .next_wakeup = b_next_wakeup,
};
