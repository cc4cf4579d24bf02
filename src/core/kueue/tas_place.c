/*
 * tas_place.c - topology-aware scheduling in the scheduling cycle: when a
 * workload fits the quota on a flavor with spec.topologyName, its pods
 * must also fit the Topology's domains, or it is not reserved.
 *
 * For each podset on a TAS flavor (kq_tas_assign):
 *
 *   1. the request: the Workload's podSets[].topologyRequest (required /
 *      preferred level, or unconstrained), else the pod template's
 *      annotations kueue.x-k8s.io/podset-required-topology,
 *      -preferred-topology, -unconstrained-topology; none is
 *      unconstrained (Kueue's implicit default on a TAS flavor);
 *   2. the nodes: Ready, schedulable, with every label of the flavor's
 *      nodeLabels and of every level; what each can still take is its
 *      allocatable minus what the topology assignments of the workloads
 *      holding quota put on it (and the podsets of this workload placed
 *      just before), minus the requests of the live pods bound to it that
 *      are not of a TAS workload (label kueue.x-k8s.io/tas);
 *   3. the leaves (domains of the lowest level) with how many pods of the
 *      podset each can take, and kueue/tas.c's placement;
 *   4. status.admission.podSetAssignments[].topologyAssignment, Kueue's
 *      v1beta1 shape: {levels: [label keys], domains: [{values: [one per
 *      level], count}]}.
 *
 * A podset that does not fit waits with QuotaReserved=False reason
 * TopologyPlacementFailed and Kueue's message ("couldn't assign flavors
 * to pod set main: topology \"t\" allows to fit only 2 out of 4
 * pod(s)"); it is tried again when capacity changes (a workload releases
 * quota, a Node changes).
 *
 * Cost: a pass over the Nodes and the Workloads holding quota per podset
 * placed, only when some flavor has a topology. Possible optimisation, not
 * needed so far: keep the per-node usage between placements.
 *
 * Not done: node taints are not checked against the pods; no second pass after a ProvisioningRequest (delayed topology requests);
 * podset slices and groups.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/smap.h"
#include "flexq/paths.h"
#include "kueue/internal.h"
#include "kueue/tas.h"

#define ANN_REQUIRED      "kueue.x-k8s.io/podset-required-topology"
#define ANN_PREFERRED     "kueue.x-k8s.io/podset-preferred-topology"
#define ANN_UNCONSTRAINED "kueue.x-k8s.io/podset-unconstrained-topology"
#define MAX_TAS_NODES     100000

/* A node as the placement sees it. */
struct tnode {
    const struct fq_value *obj; /* borrowed from the store */
    const char *values[FQ_TAS_MAX_LEVELS];
    int64_t free[FQ_ADM_MAX_RES];
};

struct topo {
    const char *name;
    int nlevels;
    const char *keys[FQ_TAS_MAX_LEVELS];
};

static bool read_topology(struct fq_engine *e, const char *name, struct topo *t)
{
    const struct fq_value *o = stored(e, FQ_KIND_TOPOLOGY, "", name);
    if (!o)
        return false;
    const struct fq_value *lv = fq_value_path(o, "spec.levels");
    t->name = name;
    t->nlevels = 0;
    for (size_t i = 0; i < fq_value_len(lv) && i < FQ_TAS_MAX_LEVELS; i++) {
        const char *k = str_at(fq_seq_at(lv, i), "nodeLabel", NULL);
        if (k)
            t->keys[t->nlevels++] = k;
    }
    return t->nlevels > 0;
}

/* The podset's request: mode and level label (NULL for unconstrained). */
static enum fq_tas_mode request_of(const struct fq_value *ps, const char **key)
{
    const struct fq_value *tr = fq_map_get(ps, "topologyRequest");
    const struct fq_value *ann =
        fq_value_path(ps, "template.metadata.annotations");
    *key = NULL;
    if ((*key = str_at(tr, "required", NULL)) ||
        (*key = str_at(ann, ANN_REQUIRED, NULL)))
        return FQ_TAS_REQUIRED;
    if ((*key = str_at(tr, "preferred", NULL)) ||
        (*key = str_at(ann, ANN_PREFERRED, NULL)))
        return FQ_TAS_PREFERRED;
    *key = NULL;
    return FQ_TAS_UNCONSTRAINED;
}

static bool node_usable(const struct fq_value *n,
                        const struct fq_resourceflavor *fv,
                        const struct topo *t, struct tnode *out)
{
    const struct fq_value *labels = fq_meta_labels(n);
    if (fq_value_path_bool(n, FQ_NODE_UNSCHEDULABLE, false) ||
        !cond_true(n, "Ready"))
        return false;
    for (size_t i = 0; i < fv->node_labels.n; i++) {
        const char *v = str_at(labels, fv->node_labels.items[i].key, NULL);
        if (!v || strcmp(v, fv->node_labels.items[i].value))
            return false;
    }
    for (int l = 0; l < t->nlevels; l++)
        if (!(out->values[l] = str_at(labels, t->keys[l], NULL)))
            return false;
    out->obj = n;
    return true;
}

static int64_t qty_of(const char *res, const struct fq_value *v)
{
    int64_t x = 0;
    const char *s = fq_value_as_str(v);
    if (s)
        fq_quantity_parse(s, fq_quantity_scale_for(res), &x, NULL, NULL);
    else if (v && v->type == FQ_V_NUM)
        x = v->u.num.is_int ? v->u.num.i : (int64_t)v->u.num.d;
    if (v && v->type == FQ_V_NUM && !strcmp(res, "cpu"))
        x *= 1000;
    return x;
}

static int tnode_cmp(const void *x, const void *y, int nlevels)
{
    const struct tnode *a = x, *b = y;
    for (int l = 0; l < nlevels; l++) {
        int c = strcmp(a->values[l], b->values[l]);
        if (c)
            return c;
    }
    return strcmp(str_at(fq_map_get(a->obj, "metadata"), "name", ""),
                  str_at(fq_map_get(b->obj, "metadata"), "name", ""));
}

/* Insertion sort by values then name (qsort has no context). */
static void sort_nodes(struct tnode *v, size_t n, int nlevels)
{
    for (size_t i = 1; i < n; i++) {
        struct tnode x = v[i];
        size_t j = i;
        while (j > 0 && tnode_cmp(&v[j - 1], &x, nlevels) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* The first nodes of leaf `values` take `count` pods of per-pod usage. */
static void take(struct tnode *ns, size_t nn, int nlevels,
                 const char *const *values, int64_t count, int nres,
                 const int64_t *per_pod)
{
    for (size_t i = 0; i < nn && count > 0; i++) {
        bool same = true;
        for (int l = 0; l < nlevels && same; l++)
            same = !strcmp(ns[i].values[l], values[l]);
        if (!same)
            continue;
        int64_t fit = count;
        for (int r = 0; r < nres; r++)
            if (per_pod[r] > 0 && ns[i].free[r] / per_pod[r] < fit)
                fit = ns[i].free[r] / per_pod[r];
        if (fit <= 0)
            fit = count; /* over-committed already: charge the first */
        for (int r = 0; r < nres; r++)
            ns[i].free[r] -= per_pod[r] * fit;
        count -= fit;
    }
}

/* Subtracts the topology assignments of the workloads holding quota
 * (workload `self` excepted) from the nodes of topology t. */
static void charge_holders(struct fq_engine *e, const struct snap *s,
                           const struct topo *t, struct tnode *ns, size_t nn,
                           const char *self_ns, const char *self_name)
{
    const struct fq_object **ws = NULL;
    size_t n =
        fq_objstore_list(fq_engine_store(e), FQ_KIND_WORKLOAD, NULL, &ws);
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *w = ws[i]->obj;
        if (!cond_true(w, "QuotaReserved") || cond_true(w, "Finished") ||
            (!strcmp(ws[i]->ns, self_ns) && !strcmp(ws[i]->name, self_name)))
            continue;
        const struct fq_value *psa = fq_value_path(w, FQ_WL_PODSET_ASSIGNMENTS);
        for (size_t p = 0; p < fq_value_len(psa); p++) {
            const struct fq_value *a = fq_seq_at(psa, p);
            const struct fq_value *ta = fq_map_get(a, "topologyAssignment");
            const struct fq_value *lv = fq_map_get(ta, "levels");
            if (!ta || (int)fq_value_len(lv) != t->nlevels)
                continue;
            bool same = true;
            for (int l = 0; l < t->nlevels && same; l++)
                same = !strcmp(fq_value_as_str(fq_seq_at(lv, l)) ?
                                   fq_value_as_str(fq_seq_at(lv, l)) :
                                   "",
                               t->keys[l]);
            int64_t cnt = int_at(a, "count", 0);
            if (!same || cnt <= 0)
                continue;
            int64_t per[FQ_ADM_MAX_RES] = {0};
            const struct fq_value *ru = fq_map_get(a, "resourceUsage");
            for (int r = 0; r < s->adm.nres; r++)
                per[r] = qty_of(s->adm.res_names[r],
                                fq_map_get(ru, s->adm.res_names[r])) /
                         cnt;
            const struct fq_value *ds = fq_map_get(ta, "domains");
            for (size_t d = 0; d < fq_value_len(ds); d++) {
                const struct fq_value *dv = fq_seq_at(ds, d);
                const struct fq_value *vals = fq_map_get(dv, "values");
                if ((int)fq_value_len(vals) != t->nlevels)
                    continue;
                const char *v[FQ_TAS_MAX_LEVELS];
                for (int l = 0; l < t->nlevels; l++) {
                    v[l] = fq_value_as_str(fq_seq_at(vals, l));
                    if (!v[l])
                        v[l] = "";
                }
                take(ns, nn, t->nlevels, v, int_at(dv, "count", 0), s->adm.nres,
                     per);
            }
        }
    }
    free(ws);
}

/* Subtracts what the live pods bound to the nodes and not of a TAS
 * workload request (a container's request defaults to its limit), as
 * Kueue counts non-TAS pods against a TAS node's room. */
static void charge_pods(struct fq_engine *e, const struct snap *s,
                        struct tnode *ns, size_t nn)
{
    if (fq_engine_config(e)->no_pods || nn == 0)
        return;
    struct fq_smap by_name = {0};
    for (size_t i = 0; i < nn; i++)
        fq_smap_put(&by_name,
                    str_at(fq_map_get(ns[i].obj, "metadata"), "name", ""),
                    &ns[i]);
    const struct fq_object **pods = NULL;
    size_t np = fq_objstore_list(fq_engine_store(e), FQ_KIND_POD, NULL, &pods);
    for (size_t i = 0; i < np; i++) {
        const struct fq_value *p = pods[i]->obj;
        const char *node = fq_value_path_str(p, FQ_POD_NODE_NAME, NULL);
        struct tnode *tn = node ? fq_smap_get(&by_name, node) : NULL;
        const char *ph = fq_value_path_str(p, FQ_POD_PHASE, "");
        if (!tn || !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed") ||
            str_at(fq_meta_labels(p), FQ_LABEL_TAS, NULL))
            continue;
        const struct fq_value *cs = fq_value_path(p, FQ_POD_CONTAINERS);
        for (size_t c = 0; c < fq_value_len(cs); c++) {
            const struct fq_value *res =
                fq_map_get(fq_seq_at(cs, c), "resources");
            const struct fq_value *req = fq_map_get(res, "requests");
            const struct fq_value *lim = fq_map_get(res, "limits");
            for (int r = 0; r < s->adm.nres; r++) {
                const char *rn = s->adm.res_names[r];
                const struct fq_value *v = fq_map_get(req, rn);
                tn->free[r] -= qty_of(rn, v ? v : fq_map_get(lim, rn));
            }
        }
    }
    free(pods);
    fq_smap_free(&by_name);
}

/* The usable nodes of flavor fv and topology t, sorted, with what is free
 * on each; returns how many (*out owned). */
static size_t load_nodes(struct fq_engine *e, const struct snap *s,
                         const struct fq_resourceflavor *fv,
                         const struct topo *t, struct tnode **out)
{
    const struct fq_object **objs = NULL;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_NODE, NULL, &objs);
    if (n > MAX_TAS_NODES)
        n = MAX_TAS_NODES;
    struct tnode *ns = fq_xcalloc(n + 1, sizeof(*ns));
    size_t nn = 0;
    for (size_t i = 0; i < n; i++) {
        if (!node_usable(objs[i]->obj, fv, t, &ns[nn]))
            continue;
        const struct fq_value *al =
            fq_value_path(objs[i]->obj, FQ_NODE_ALLOCATABLE);
        for (int r = 0; r < s->adm.nres; r++)
            ns[nn].free[r] = qty_of(s->adm.res_names[r],
                                    fq_map_get(al, s->adm.res_names[r]));
        nn++;
    }
    free(objs);
    sort_nodes(ns, nn, t->nlevels);
    *out = ns;
    return nn;
}

/* The topologyAssignment value for counts per leaf. */
static struct fq_value *assignment_value(const struct topo *t,
                                         const struct fq_tas_leaf *lv, int nl,
                                         const int64_t *cnt)
{
    struct fq_value *ta = fq_value_map();
    struct fq_value *levels = fq_value_seq();
    for (int l = 0; l < t->nlevels; l++)
        fq_seq_push(levels, fq_value_str(t->keys[l]));
    fq_map_set(ta, "levels", levels);
    struct fq_value *ds = fq_value_seq();
    for (int i = 0; i < nl; i++) {
        if (cnt[i] <= 0)
            continue;
        struct fq_value *d = fq_value_map();
        struct fq_value *vals = fq_value_seq();
        for (int l = 0; l < t->nlevels; l++)
            fq_seq_push(vals, fq_value_str(lv[i].values[l]));
        fq_map_set(d, "values", vals);
        fq_map_set(d, "count", fq_value_int(cnt[i]));
        fq_seq_push(ds, d);
    }
    fq_map_set(ta, "domains", ds);
    return ta;
}

/* Places podset p of w on flavor f; its assignment into *out. */
static bool place_podset(struct fq_engine *e, const struct snap *s,
                         const struct wl *w, const struct fq_value *ps, int p,
                         int32_t count, int f, struct fq_value **out,
                         struct fq_value *const *earlier, char *msg, size_t n)
{
    const struct fq_resourceflavor *fv = &s->flv[f].view;
    struct topo t;
    if (!read_topology(e, fv->topology_name, &t)) {
        snprintf(msg, n, "topology \"%s\" not found", fv->topology_name);
        return false;
    }
    const char *key;
    enum fq_tas_mode mode = request_of(ps, &key);
    int level = t.nlevels - 1;
    if (key) {
        level = -1;
        for (int l = 0; l < t.nlevels; l++)
            if (!strcmp(t.keys[l], key))
                level = l;
        if (level < 0) {
            snprintf(msg, n,
                     "couldn't assign flavors to pod set %s: no requested "
                     "topology level: %s",
                     w->ps[p].name, key);
            return false;
        }
    }
    struct tnode *ns = NULL;
    size_t nn = load_nodes(e, s, fv, &t, &ns);
    charge_holders(e, s, &t, ns, nn, w->ns, w->name);
    charge_pods(e, s, ns, nn);
    /* Podsets of this workload placed just before on the same topology. */
    for (int q = 0; q < p; q++) {
        const struct fq_value *ta = earlier[q];
        if (!ta)
            continue;
        const struct fq_value *ds = fq_map_get(ta, "domains");
        for (size_t d = 0; d < fq_value_len(ds); d++) {
            const struct fq_value *vals =
                fq_map_get(fq_seq_at(ds, d), "values");
            if ((int)fq_value_len(vals) != t.nlevels)
                continue;
            const char *v[FQ_TAS_MAX_LEVELS];
            for (int l = 0; l < t.nlevels; l++)
                v[l] = fq_value_as_str(fq_seq_at(vals, l));
            take(ns, nn, t.nlevels, v, int_at(fq_seq_at(ds, d), "count", 0),
                 s->adm.nres, w->ps[q].req);
        }
    }
    /* The leaves: nodes with equal values make one domain. */
    struct fq_tas_leaf *lv = fq_xcalloc(nn + 1, sizeof(*lv));
    int nl = 0;
    for (size_t i = 0; i < nn; i++) {
        int64_t cap = INT64_MAX;
        for (int r = 0; r < s->adm.nres; r++)
            if (w->ps[p].req[r] > 0) {
                int64_t c =
                    ns[i].free[r] > 0 ? ns[i].free[r] / w->ps[p].req[r] : 0;
                if (c < cap)
                    cap = c;
            }
        if (cap == INT64_MAX)
            cap = count;
        bool same = nl > 0;
        for (int l = 0; same && l < t.nlevels; l++)
            same = !strcmp(lv[nl - 1].values[l], ns[i].values[l]);
        if (!same) {
            memcpy(lv[nl].values, ns[i].values, sizeof(lv[nl].values));
            nl++;
        }
        lv[nl - 1].capacity += cap;
    }
    int64_t *cnt = fq_xcalloc((size_t)nl + 1, sizeof(int64_t));
    int64_t most = 0;
    bool ok = fq_tas_place(lv, nl, t.nlevels, mode, level, count, cnt, &most);
    if (ok)
        *out = assignment_value(&t, lv, nl, cnt);
    else if (most <= 0)
        snprintf(msg, n,
                 "couldn't assign flavors to pod set %s: topology \"%s\" "
                 "doesn't allow to fit any of %d pod(s)",
                 w->ps[p].name, t.name, count);
    else
        snprintf(msg, n,
                 "couldn't assign flavors to pod set %s: topology \"%s\" "
                 "allows to fit only %lld out of %d pod(s)",
                 w->ps[p].name, t.name, (long long)most, count);
    free(cnt);
    free(lv);
    free(ns);
    return ok;
}

bool kq_tas_assign(struct kueue *k, struct fq_engine *e, const struct wl *w,
                   const struct fq_adm_result *r, char *msg, size_t n)
{
    const struct snap *s = k->snap;
    for (int p = 0; p < FQ_ADM_MAX_PODSETS; p++) {
        fq_value_free(k->tas_assign[p]);
        k->tas_assign[p] = NULL;
    }
    if (!s->has_tas)
        return true;
    const struct fq_value *obj = stored(e, FQ_KIND_WORKLOAD, w->ns, w->name);
    const struct fq_value *pss = fq_value_path(obj, FQ_WL_PODSETS);
    for (int p = 0; p < w->npodsets && p < FQ_ADM_MAX_PODSETS; p++) {
        int f = -1;
        for (int res = 0; res < s->adm.nres && f < 0; res++)
            if (r->flv[p][res] >= 0 && s->flv[r->flv[p][res]].exists &&
                s->flv[r->flv[p][res]].view.topology_name)
                f = r->flv[p][res];
        if (f < 0 || r->count[p] <= 0)
            continue;
        if (!place_podset(e, s, w, fq_seq_at(pss, (size_t)p), p, r->count[p], f,
                          &k->tas_assign[p], k->tas_assign, msg, n)) {
            for (int q = 0; q < p; q++) {
                fq_value_free(k->tas_assign[q]);
                k->tas_assign[q] = NULL;
            }
            return false;
        }
    }
    return true;
}
