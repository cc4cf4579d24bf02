/*
 * tas_ungater.c - the "tas-ungater" controller: Kueue's TopologyUngater.
 * It gives each pod of a topology-assigned podset its domain.
 *
 * When a Workload's podset has a topologyAssignment, the job framework
 * starts its pods behind the scheduling gate kueue.x-k8s.io/topology,
 * with the label kueue.x-k8s.io/podset and the annotation
 * kueue.x-k8s.io/workload (jobs/workload.c). Once the Workload is
 * Admitted, this controller takes the gated pods of each (workload,
 * podset), in name order, and gives each the first domain of the
 * assignment that still has room: the domain's label values for every
 * level go into the pod's nodeSelector and the gate is lifted. The binder
 * (jobs/binder.c) then places the pod on a node of that domain, so the
 * pods land where the scheduler counted them.
 *
 * A domain's room is its count minus the live pods of the same workload
 * and podset already ungated into it (matched by their nodeSelector), so
 * a replaced pod takes the place of the one that ended.
 *
 * Invariants: a pod is ungated at most once; no domain gets more live
 * pods than its count. It does nothing in no_pods mode (no pods) and
 * nothing to pods without the gate.
 */
#include <stdlib.h>
#include <string.h>

#include "base/smap.h"
#include "engine/controllers.h"
#include "flexq/paths.h"
#include "kueue/internal.h"
#include "kueue/tas.h"

struct ungater {
    struct fq_smap gated; /* "ns/name" of pods behind the topology gate */
    bool dirty;
};

static bool has_gate(const struct fq_value *pod)
{
    const struct fq_value *gs = fq_value_path(pod, FQ_POD_SCHEDULING_GATES);
    for (size_t i = 0; i < fq_value_len(gs); i++)
        if (!strcmp(str_at(fq_seq_at(gs, i), "name", ""), FQ_GATE_TOPOLOGY))
            return true;
    return false;
}

static bool terminal(const struct fq_value *pod)
{
    const char *ph = fq_value_path_str(pod, FQ_POD_PHASE, "");
    return !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed");
}

/* Is pod p (no gate) in domain d of assignment ta (its nodeSelector has
 * every level's value)? */
static bool in_domain(const struct fq_value *p, const struct fq_value *levels,
                      const struct fq_value *vals)
{
    const struct fq_value *sel = fq_value_path(p, FQ_POD_NODE_SELECTOR);
    for (size_t l = 0; l < fq_value_len(levels); l++) {
        const char *k = fq_value_as_str(fq_seq_at(levels, l));
        const char *v = fq_value_as_str(fq_seq_at(vals, l));
        const char *have = k ? str_at(sel, k, NULL) : NULL;
        if (!have || !v || strcmp(have, v))
            return false;
    }
    return true;
}

/* The podset's topologyAssignment of an Admitted workload, or NULL. */
static const struct fq_value *assignment(struct fq_engine *e, const char *ns,
                                         const char *wl, const char *ps)
{
    const struct fq_value *w = stored(e, FQ_KIND_WORKLOAD, ns, wl);
    if (!w || !cond_true(w, "Admitted"))
        return NULL;
    const struct fq_value *psa = fq_value_path(w, FQ_WL_PODSET_ASSIGNMENTS);
    for (size_t i = 0; i < fq_value_len(psa); i++)
        if (!strcmp(str_at(fq_seq_at(psa, i), "name", ""), ps))
            return fq_map_get(fq_seq_at(psa, i), "topologyAssignment");
    return NULL;
}

/* Gives pod ns/name its domain, if the assignment has room; true when it
 * was ungated. */
static bool ungate(struct fq_engine *e, const char *ns, const char *name)
{
    const struct fq_value *pod = stored(e, FQ_KIND_POD, ns, name);
    if (!pod || !has_gate(pod))
        return true; /* nothing to do any more */
    const char *wl = str_at(fq_meta_annotations(pod), FQ_ANN_WORKLOAD, NULL);
    const char *ps = str_at(fq_meta_labels(pod), FQ_LABEL_PODSET, NULL);
    const struct fq_value *ta = wl && ps ? assignment(e, ns, wl, ps) : NULL;
    if (!ta)
        return false;
    const struct fq_value *levels = fq_map_get(ta, "levels");
    const struct fq_value *ds = fq_map_get(ta, "domains");
    size_t nd = fq_value_len(ds);
    if (nd == 0 || fq_value_len(levels) == 0)
        return false;
    int64_t *used = fq_xcalloc(nd, sizeof(int64_t));
    const struct fq_object **pods = NULL;
    size_t np = fq_objstore_list(fq_engine_store(e), FQ_KIND_POD, ns, &pods);
    for (size_t i = 0; i < np; i++) {
        const struct fq_value *p = pods[i]->obj;
        if (terminal(p) || has_gate(p) ||
            strcmp(str_at(fq_meta_annotations(p), FQ_ANN_WORKLOAD, ""), wl) ||
            strcmp(str_at(fq_meta_labels(p), FQ_LABEL_PODSET, ""), ps))
            continue;
        for (size_t d = 0; d < nd; d++)
            if (in_domain(p, levels, fq_map_get(fq_seq_at(ds, d), "values"))) {
                used[d]++;
                break;
            }
    }
    free(pods);
    size_t pick = nd;
    for (size_t d = 0; d < nd && pick == nd; d++)
        if (used[d] < int_at(fq_seq_at(ds, d), "count", 0))
            pick = d;
    free(used);
    if (pick == nd)
        return false; /* every domain is full: a pod too many */
    struct fq_value *p =
        fq_objstore_edit(fq_engine_store(e), FQ_KIND_POD, ns, name);
    if (!p)
        return false;
    struct fq_value *spec = fq_map_ensure_map(p, "spec");
    struct fq_value *sel = fq_map_ensure_map(spec, "nodeSelector");
    const struct fq_value *vals = fq_map_get(fq_seq_at(ds, pick), "values");
    for (size_t l = 0; l < fq_value_len(levels); l++) {
        const char *k = fq_value_as_str(fq_seq_at(levels, l));
        const char *v = fq_value_as_str(fq_seq_at(vals, l));
        if (k && v)
            fq_map_set(sel, k, fq_value_str(v));
    }
    const struct fq_value *gs = fq_map_get(spec, "schedulingGates");
    struct fq_value *keep = fq_value_seq();
    for (size_t i = 0; i < fq_value_len(gs); i++)
        if (strcmp(str_at(fq_seq_at(gs, i), "name", ""), FQ_GATE_TOPOLOGY))
            fq_seq_push(keep, fq_value_clone(fq_seq_at(gs, i)));
    if (fq_value_len(keep))
        fq_map_set(spec, "schedulingGates", keep);
    else {
        fq_value_free(keep);
        fq_map_del(spec, "schedulingGates");
    }
    fq_objstore_update(fq_engine_store(e), p, true, NULL, NULL, NULL);
    return true;
}

static void *u_create(struct fq_engine *e)
{
    (void)e;
    return fq_xcalloc(1, sizeof(struct ungater));
}

static void u_destroy(void *self)
{
    struct ungater *u = self;
    fq_smap_free(&u->gated);
    free(u);
}

static void u_on_change(void *self, struct fq_engine *e,
                        const struct fq_change *c)
{
    struct ungater *u = self;
    if (fq_engine_config(e)->no_pods)
        return;
    if (c->kind == FQ_KIND_POD) {
        char *key = fq_xasprintf("%s/%s", c->ns, c->name);
        if (c->type != FQ_CHANGE_DELETED && c->obj && has_gate(c->obj) &&
            !terminal(c->obj)) {
            fq_smap_add(&u->gated, key);
            u->dirty = true;
        } else {
            /* A pod that ends frees its domain for a gated one. */
            fq_smap_del(&u->gated, key);
            u->dirty |= u->gated.n > 0;
        }
        free(key);
    } else {
        u->dirty |= u->gated.n > 0; /* a workload admitted, perhaps */
    }
    if (u->dirty)
        fq_engine_kick(e, self);
}

static void u_run(void *self, struct fq_engine *e, int64_t now)
{
    (void)now;
    struct ungater *u = self;
    if (!u->dirty)
        return;
    u->dirty = false;
    const char **keys = NULL;
    size_t n = fq_smap_sorted_keys(&u->gated, NULL, &keys);
    char **done = fq_xcalloc(n + 1, sizeof(char *));
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        char ns[256];
        const char *name = key_split(keys[i], ns, sizeof(ns));
        if (name && ungate(e, ns, name))
            done[nd++] = fq_xstrdup(keys[i]);
    }
    free(keys);
    for (size_t i = 0; i < nd; i++) {
        fq_smap_del(&u->gated, done[i]);
        free(done[i]);
    }
    free(done);
}

static int64_t u_next_wakeup(const void *self)
{
    const struct ungater *u = self;
    return u->dirty ? 0 : FQ_NEVER;
}

const struct fq_controller_ops fq_tas_ungater_controller = {
    .name = "tas-ungater",
    .watch = FQ_KIND_BIT(FQ_KIND_POD) | FQ_KIND_BIT(FQ_KIND_WORKLOAD),
    .create = u_create,
    .destroy = u_destroy,
    .on_change = u_on_change,
    .run = u_run,
    .next_wakeup = u_next_wakeup,
};
