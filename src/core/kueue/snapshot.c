/*
 * snapshot.c - the configuration snapshot: ResourceFlavors, ClusterQueues,
 * Cohorts, LocalQueues and AdmissionChecks decoded into the compact
 * tables the scheduler reads (struct snap), with the quota tree of
 * admission.c.
 *
 * A cache of the configuration objects: built by snap_build when any of
 * them changes (config_dirty, set by on_change for a new generation) and
 * never patched in place, so it cannot drift from the objects. Every
 * scenario and test_kueue run through it; the invariant checker K3/K4
 * (kueue/check.c) compares its usage with the stored workloads after
 * every scenario settle. It decides nothing.
 */
#include "kueue/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kq_find_cq(const struct snap *s, const char *name)
{
    for (int i = 0; i < s->ncq; i++)
        if (!strcmp(s->cqs[i].name, name))
            return i;
    return -1;
}

struct lq_info *kq_find_lq(struct snap *s, const char *ns, const char *name)
{
    for (int i = 0; i < s->nlq; i++)
        if (!strcmp(s->lqs[i].ns, ns) && !strcmp(s->lqs[i].name, name))
            return &s->lqs[i];
    return NULL;
}

static void set_quota(struct fq_adm *a, int node,
                      const struct fq_flavor_quotas *fq, int flv)
{
    for (size_t r = 0; r < fq->n_resources; r++) {
        const struct fq_resource_quota *q = &fq->resources[r];
        int ri = fq_adm_find_resource(a, q->name);
        if (ri < 0)
            continue;
        struct fq_adm_cell *c = fq_adm_cell(a, node, flv, ri);
        c->nominal = q->nominal;
        c->borrow_limit =
            q->has_borrowing_limit ? q->borrowing_limit : FQ_ADM_UNLIMITED;
        c->lend_limit =
            q->has_lending_limit ? q->lending_limit : FQ_ADM_UNLIMITED;
    }
}

static enum fq_adm_policy map_policy(enum fq_preempt_policy p)
{
    switch (p) {
    case FQ_PREEMPT_LOWER_PRIORITY:
        return FQ_ADM_LOWER_PRIORITY;
    case FQ_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY:
        return FQ_ADM_LOWER_OR_NEWER_EQUAL_PRIORITY;
    case FQ_PREEMPT_ANY:
        return FQ_ADM_ANY;
    case FQ_PREEMPT_NEVER:
        break;
    }
    return FQ_ADM_NEVER;
}

static int cohort_node(struct fq_adm *a, struct cohort_ent **cs, size_t *n,
                       size_t *cap, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*cs)[i].name, name))
            return (*cs)[i].node;
    FQ_GROW(*cs, *cap, *n + 1);
    struct cohort_ent *c = &(*cs)[(*n)++];
    memset(c, 0, sizeof(*c));
    c->name = fq_xstrdup(name);
    c->node = fq_adm_add_node(a, false);
    return c->node;
}

void kq_snap_build(struct snap *s, struct fq_engine *e)
{
    struct fq_objstore *st = fq_engine_store(e);
    const struct fq_object **objs;
    memset(s, 0, sizeof(*s));
    fq_adm_init(&s->adm);

    /* Flavors. */
    size_t n = fq_objstore_list(st, FQ_KIND_RESOURCEFLAVOR, NULL, &objs);
    for (size_t i = 0; i < n; i++) {
        int f = fq_adm_flavor(&s->adm, objs[i]->name);
        if (f < 0)
            continue;
        if (fq_resourceflavor_decode(objs[i]->obj, NULL, &s->flv[f].view,
                                     NULL) == 0)
            s->flv[f].exists = true;
    }
    free(objs);

    /* ClusterQueues: decode, intern resources and referenced flavors. */
    const struct fq_object **cqo;
    size_t ncq = fq_objstore_list(st, FQ_KIND_CLUSTERQUEUE, NULL, &cqo);
    s->cqs = fq_xcalloc(ncq + 1, sizeof(*s->cqs));
    for (size_t i = 0; i < ncq; i++) {
        struct cq_info *c = &s->cqs[s->ncq];
        if (fq_clusterqueue_decode(cqo[i]->obj, NULL, &c->view, NULL) != 0)
            continue;
        c->name = fq_xstrdup(cqo[i]->name);
        struct fq_buf b = FQ_BUF_INIT;
        fq_buf_printf(&b, "Quota reserved in ClusterQueue %s", c->name);
        c->reserved_msg = fq_xstrdup(fq_buf_str(&b));
        fq_buf_release(&b);
        s->ncq++;
        for (size_t g = 0; g < c->view.n_groups; g++) {
            const struct fq_resource_group *rg = &c->view.groups[g];
            for (size_t r = 0; r < rg->n_covered; r++) {
                fq_adm_resource(&s->adm, rg->covered[r]);
                if (!strcmp(rg->covered[r], "pods"))
                    s->have_pods_res = true;
            }
            for (size_t f = 0; f < rg->n_flavors; f++)
                fq_adm_flavor(&s->adm, rg->flavors[f].name);
        }
    }
    free(cqo);
    const struct fq_object **coo;
    size_t nco = fq_objstore_list(st, FQ_KIND_COHORT, NULL, &coo);
    struct cohort_ent *cos = NULL;
    size_t ncos = 0, capcos = 0;
    /* Cohort quotas may name resources too. */
    struct fq_cohort *coviews = fq_xcalloc(nco + 1, sizeof(*coviews));
    bool *cook = fq_xcalloc(nco + 1, sizeof(bool));
    for (size_t i = 0; i < nco; i++) {
        if (fq_cohort_decode(coo[i]->obj, NULL, &coviews[i], NULL) != 0)
            continue;
        cook[i] = true;
        for (size_t g = 0; g < coviews[i].n_groups; g++) {
            const struct fq_resource_group *rg = &coviews[i].groups[g];
            for (size_t r = 0; r < rg->n_covered; r++)
                fq_adm_resource(&s->adm, rg->covered[r]);
            for (size_t f = 0; f < rg->n_flavors; f++)
                fq_adm_flavor(&s->adm, rg->flavors[f].name);
        }
    }

    /* Nodes: cohorts first (explicit), then CQs. */
    for (size_t i = 0; i < nco; i++) {
        if (!cook[i])
            continue;
        int node = cohort_node(&s->adm, &cos, &ncos, &capcos, coo[i]->name);
        for (size_t g = 0; g < coviews[i].n_groups; g++) {
            const struct fq_resource_group *rg = &coviews[i].groups[g];
            for (size_t f = 0; f < rg->n_flavors; f++) {
                int fi = fq_adm_find_flavor(&s->adm, rg->flavors[f].name);
                if (fi >= 0)
                    set_quota(&s->adm, node, &rg->flavors[f], fi);
            }
        }
    }
    for (size_t i = 0; i < nco; i++) {
        if (!cook[i] || !coviews[i].parent)
            continue;
        int node = cohort_node(&s->adm, &cos, &ncos, &capcos, coo[i]->name);
        int parent =
            cohort_node(&s->adm, &cos, &ncos, &capcos, coviews[i].parent);
        /* Refuse a cycle: walk up from the parent. */
        int p = parent, guard = 0;
        while (p >= 0 && p != node && guard++ < 1000)
            p = s->adm.nodes[p].parent;
        if (p != node)
            s->adm.nodes[node].parent = parent;
    }
    for (int i = 0; i < s->ncq; i++) {
        struct cq_info *c = &s->cqs[i];
        struct fq_clusterqueue *v = &c->view;
        c->adm = fq_adm_add_cq(&s->adm);
        struct fq_adm_cq *ac = &s->adm.cqs[c->adm];
        if (v->cohort)
            s->adm.nodes[ac->node].parent =
                cohort_node(&s->adm, &cos, &ncos, &capcos, v->cohort);
        c->active = true;
        ac->ngroups = (int)v->n_groups;
        ac->groups = fq_xcalloc(v->n_groups + 1, sizeof(*ac->groups));
        for (size_t g = 0; g < v->n_groups; g++) {
            const struct fq_resource_group *rg = &v->groups[g];
            struct fq_adm_group *ag = &ac->groups[g];
            for (size_t r = 0; r < rg->n_covered; r++) {
                int ri = fq_adm_find_resource(&s->adm, rg->covered[r]);
                if (ri >= 0)
                    ag->res_mask |= 1u << ri;
            }
            for (size_t f = 0; f < rg->n_flavors && f < FQ_ADM_MAX_FLAVORS;
                 f++) {
                int fi = fq_adm_find_flavor(&s->adm, rg->flavors[f].name);
                if (fi < 0)
                    continue;
                ag->flv[ag->nflv++] = (uint8_t)fi;
                c->all_flv |= 1ull << fi;
                set_quota(&s->adm, ac->node, &rg->flavors[f], fi);
                if (!s->flv[fi].exists && c->active) {
                    c->active = false;
                    c->inactive_reason = fq_xstrdup("FlavorNotFound");
                    c->inactive_msg = fq_xasprintf(
                        "Can't admit new workloads: references missing "
                        "ResourceFlavor(s): [%s]",
                        rg->flavors[f].name);
                }
            }
        }
        ac->strategy = v->queueing_strategy == FQ_STRICT_FIFO ?
                           FQ_ADM_STRICT_FIFO :
                           FQ_ADM_BEST_EFFORT_FIFO;
        ac->within_cq = map_policy(v->preemption.within_cluster_queue);
        ac->reclaim_within_cohort =
            map_policy(v->preemption.reclaim_within_cohort);
        ac->borrow_within_cohort =
            map_policy(v->preemption.borrow_within_cohort);
        s->preempts |= ac->within_cq != FQ_ADM_NEVER ||
                       ac->reclaim_within_cohort != FQ_ADM_NEVER ||
                       ac->borrow_within_cohort != FQ_ADM_NEVER;
        ac->has_borrow_threshold = v->preemption.has_max_priority_threshold;
        ac->borrow_threshold = (int32_t)v->preemption.max_priority_threshold;
        ac->can_borrow_try_next =
            v->fungibility.when_can_borrow == FQ_FUNG_TRY_NEXT_FLAVOR;
        ac->can_preempt_try_next =
            v->fungibility.when_can_preempt == FQ_FUNG_TRY_NEXT_FLAVOR;
        ac->preemption_over_borrowing =
            v->fungibility.preference == FQ_PREFER_PREEMPTION_OVER_BORROWING;
        c->nchecks = (int)v->n_checks;
        c->checks = fq_xcalloc(v->n_checks + 1, sizeof(*c->checks));
        for (size_t k = 0; k < v->n_checks; k++) {
            c->checks[k].name = fq_xstrdup(v->checks[k].name);
            for (size_t f = 0; f < v->checks[k].n_on_flavors; f++) {
                int fi =
                    fq_adm_find_flavor(&s->adm, v->checks[k].on_flavors[f]);
                if (fi >= 0)
                    c->checks[k].on_flv |= 1ull << fi;
            }
            if (c->active &&
                !stored(e, FQ_KIND_ADMISSIONCHECK, "", v->checks[k].name)) {
                c->active = false;
                c->inactive_reason = fq_xstrdup("AdmissionCheckNotFound");
                c->inactive_msg = fq_xasprintf(
                    "Can't admit new workloads: references missing "
                    "AdmissionCheck(s): [%s]",
                    v->checks[k].name);
            }
        }
        if (c->active && v->stop_policy != FQ_STOP_NONE) {
            c->active = false;
            c->inactive_reason = fq_xstrdup("Stopped");
            c->inactive_msg =
                fq_xstrdup("Can't admit new workloads: is stopped");
        }
    }
    fq_adm_finish(&s->adm);
    for (size_t i = 0; i < ncos; i++)
        free(cos[i].name);
    free(cos);
    for (size_t i = 0; i < nco; i++)
        if (cook[i])
            fq_cohort_release(&coviews[i]);
    free(coviews);
    free(cook);
    free(coo);

    /* LocalQueues. */
    size_t nlq = fq_objstore_list(st, FQ_KIND_LOCALQUEUE, NULL, &objs);
    s->lqs = fq_xcalloc(nlq + 1, sizeof(*s->lqs));
    for (size_t i = 0; i < nlq; i++) {
        const char *cq =
            fq_value_path_str(objs[i]->obj, "spec.clusterQueue", NULL);
        if (!cq)
            continue;
        struct lq_info *l = &s->lqs[s->nlq++];
        l->ns = fq_xstrdup(objs[i]->ns);
        l->name = fq_xstrdup(objs[i]->name);
        l->cq = fq_xstrdup(cq);
    }
    free(objs);
}

void kq_snap_release(struct snap *s)
{
    for (int i = 0; i < s->ncq; i++) {
        struct cq_info *c = &s->cqs[i];
        free(c->name);
        free(c->reserved_msg);
        free(c->inactive_reason);
        free(c->inactive_msg);
        for (int k = 0; k < c->nchecks; k++)
            free(c->checks[k].name);
        free(c->checks);
        fq_clusterqueue_release(&c->view);
    }
    free(s->cqs);
    for (int i = 0; i < s->nlq; i++) {
        free(s->lqs[i].ns);
        free(s->lqs[i].name);
        free(s->lqs[i].cq);
    }
    free(s->lqs);
    for (int f = 0; f < FQ_ADM_MAX_FLAVORS; f++)
        if (s->flv[f].exists)
            fq_resourceflavor_release(&s->flv[f].view);
    fq_adm_release(&s->adm);
}
