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
#include "flexq/paths.h"
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

/* ResourceFlavors: interned, and decoded where they exist. */
static void add_flavors(struct snap *s, struct fq_objstore *st)
{
    const struct fq_object **objs;
    size_t n = fq_objstore_list(st, FQ_KIND_RESOURCEFLAVOR, NULL, &objs);
    for (size_t i = 0; i < n; i++) {
        int f = fq_adm_flavor(&s->adm, objs[i]->name);
        if (f < 0)
            continue;
        if (fq_resourceflavor_decode(objs[i]->obj, NULL, &s->flv[f].view,
                                     NULL) == 0) {
            s->flv[f].exists = true;
            s->has_tas |= s->flv[f].view.topology_name != NULL;
        }
    }
    free(objs);
}

/* The resources and flavors of resource groups, interned. */
static void intern_groups(struct snap *s, const struct fq_resource_group *rgs,
                          size_t ng, bool note_pods)
{
    for (size_t g = 0; g < ng; g++) {
        const struct fq_resource_group *rg = &rgs[g];
        for (size_t r = 0; r < rg->n_covered; r++) {
            fq_adm_resource(&s->adm, rg->covered[r]);
            if (note_pods && !strcmp(rg->covered[r], "pods"))
                s->have_pods_res = true;
        }
        for (size_t f = 0; f < rg->n_flavors; f++)
            fq_adm_flavor(&s->adm, rg->flavors[f].name);
    }
}

/* ClusterQueues decoded into s->cqs (the ones that decode). */
static void add_clusterqueues(struct snap *s, struct fq_objstore *st)
{
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
        intern_groups(s, c->view.groups, c->view.n_groups, true);
    }
    free(cqo);
}

/* The Cohort objects while a snapshot is built, and the quota tree's
 * cohort nodes made so far (cohort_node). */
struct cohorts {
    const struct fq_object **objs;
    size_t n;
    struct fq_cohort *views;
    bool *ok; /* views[i] decoded */
    struct cohort_ent *ents;
    size_t nents, capents;
};

static void cohorts_decode(struct snap *s, struct fq_objstore *st,
                           struct cohorts *co)
{
    memset(co, 0, sizeof(*co));
    co->n = fq_objstore_list(st, FQ_KIND_COHORT, NULL, &co->objs);
    co->views = fq_xcalloc(co->n + 1, sizeof(*co->views));
    co->ok = fq_xcalloc(co->n + 1, sizeof(bool));
    for (size_t i = 0; i < co->n; i++) {
        if (fq_cohort_decode(co->objs[i]->obj, NULL, &co->views[i], NULL) != 0)
            continue;
        co->ok[i] = true;
        /* Cohort quotas may name resources too. */
        intern_groups(s, co->views[i].groups, co->views[i].n_groups, false);
    }
}

static int cohort_of(struct snap *s, struct cohorts *co, const char *name)
{
    return cohort_node(&s->adm, &co->ents, &co->nents, &co->capents, name);
}

/* The cohorts' own quota, then their parents (a cycle is refused: the
 * link that would close it is not made). */
static void cohorts_link(struct snap *s, struct cohorts *co)
{
    for (size_t i = 0; i < co->n; i++) {
        if (!co->ok[i])
            continue;
        int node = cohort_of(s, co, co->objs[i]->name);
        for (size_t g = 0; g < co->views[i].n_groups; g++) {
            const struct fq_resource_group *rg = &co->views[i].groups[g];
            for (size_t f = 0; f < rg->n_flavors; f++) {
                int fi = fq_adm_find_flavor(&s->adm, rg->flavors[f].name);
                if (fi >= 0)
                    set_quota(&s->adm, node, &rg->flavors[f], fi);
            }
        }
    }
    for (size_t i = 0; i < co->n; i++) {
        if (!co->ok[i] || !co->views[i].parent)
            continue;
        int node = cohort_of(s, co, co->objs[i]->name);
        int parent = cohort_of(s, co, co->views[i].parent);
        int p = parent, guard = 0;
        while (p >= 0 && p != node && guard++ < 1000)
            p = s->adm.nodes[p].parent;
        if (p != node)
            s->adm.nodes[node].parent = parent;
    }
}

/* Hands the cohort nodes' names over to the snapshot, with each
 * Cohort's fairSharing.weight on its node. */
static void cohorts_keep(struct snap *s, struct cohorts *co)
{
    for (size_t i = 0; i < co->n; i++) {
        if (!co->ok[i])
            continue;
        int node = cohort_of(s, co, co->objs[i]->name);
        s->adm.nodes[node].fair_weight_milli = co->views[i].fair_weight_milli;
    }
    s->co_name = fq_xcalloc(co->nents + 1, sizeof(char *));
    s->co_node = fq_xcalloc(co->nents + 1, sizeof(int));
    for (size_t i = 0; i < co->nents; i++) {
        s->co_name[i] = co->ents[i].name;
        s->co_node[i] = co->ents[i].node;
        co->ents[i].name = NULL;
    }
    s->nco = (int)co->nents;
}

static void cohorts_release(struct cohorts *co)
{
    for (size_t i = 0; i < co->nents; i++)
        free(co->ents[i].name);
    free(co->ents);
    for (size_t i = 0; i < co->n; i++)
        if (co->ok[i])
            fq_cohort_release(&co->views[i]);
    free(co->views);
    free(co->ok);
    free(co->objs);
}

/* Marks ClusterQueue c inactive (the first reason found wins). */
static void cq_inactive(struct cq_info *c, const char *reason, char *msg)
{
    if (!c->active) {
        free(msg);
        return;
    }
    c->active = false;
    c->inactive_reason = fq_xstrdup(reason);
    c->inactive_msg = msg;
}

/* A ClusterQueue's resource groups and their quota into its node; a
 * missing flavor makes it inactive (FlavorNotFound). */
static void cq_groups(struct snap *s, struct cq_info *c, struct fq_adm_cq *ac)
{
    struct fq_clusterqueue *v = &c->view;
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
        for (size_t f = 0; f < rg->n_flavors && f < FQ_ADM_MAX_FLAVORS; f++) {
            int fi = fq_adm_find_flavor(&s->adm, rg->flavors[f].name);
            if (fi < 0)
                continue;
            ag->flv[ag->nflv++] = (uint8_t)fi;
            c->all_flv |= 1ull << fi;
            set_quota(&s->adm, ac->node, &rg->flavors[f], fi);
            if (!s->flv[fi].exists && c->active)
                cq_inactive(c, "FlavorNotFound",
                            fq_xasprintf("Can't admit new workloads: "
                                         "references missing "
                                         "ResourceFlavor(s): [%s]",
                                         rg->flavors[f].name));
        }
    }
}

/* Queueing strategy, preemption and flavor fungibility. */
static void cq_policies(struct snap *s, const struct fq_clusterqueue *v,
                        struct fq_adm_cq *ac)
{
    ac->strategy = v->queueing_strategy == FQ_STRICT_FIFO ?
                       FQ_ADM_STRICT_FIFO :
                       FQ_ADM_BEST_EFFORT_FIFO;
    ac->within_cq = map_policy(v->preemption.within_cluster_queue);
    ac->reclaim_within_cohort = map_policy(v->preemption.reclaim_within_cohort);
    ac->borrow_within_cohort = map_policy(v->preemption.borrow_within_cohort);
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
}

/* The admission checks a ClusterQueue names, with the flavors each
 * applies on; a missing check makes it inactive (AdmissionCheckNotFound),
 * and so does a stopPolicy (Stopped). */
static void cq_checks(struct snap *s, struct fq_engine *e, struct cq_info *c)
{
    struct fq_clusterqueue *v = &c->view;
    c->nchecks = (int)v->n_checks;
    c->checks = fq_xcalloc(v->n_checks + 1, sizeof(*c->checks));
    for (size_t k = 0; k < v->n_checks; k++) {
        c->checks[k].name = fq_xstrdup(v->checks[k].name);
        for (size_t f = 0; f < v->checks[k].n_on_flavors; f++) {
            int fi = fq_adm_find_flavor(&s->adm, v->checks[k].on_flavors[f]);
            if (fi >= 0)
                c->checks[k].on_flv |= 1ull << fi;
        }
        if (c->active &&
            !stored(e, FQ_KIND_ADMISSIONCHECK, "", v->checks[k].name))
            cq_inactive(c, "AdmissionCheckNotFound",
                        fq_xasprintf("Can't admit new workloads: references "
                                     "missing AdmissionCheck(s): [%s]",
                                     v->checks[k].name));
    }
    /* A TAS flavor whose Topology is missing (Kueue: TopologyNotFound). */
    for (int f = 0; c->active && f < s->adm.nflv; f++) {
        const char *tn = s->flv[f].exists && (c->all_flv >> f & 1) ?
                             s->flv[f].view.topology_name :
                             NULL;
        if (tn && !stored(e, FQ_KIND_TOPOLOGY, "", tn))
            cq_inactive(c, "TopologyNotFound",
                        fq_xasprintf("Can't admit new workloads: references "
                                     "missing Topology: %s",
                                     tn));
    }
    if (c->active && v->stop_policy != FQ_STOP_NONE)
        cq_inactive(c, "Stopped",
                    fq_xstrdup("Can't admit new workloads: is stopped"));
}

/* LocalQueues: namespace, name and their ClusterQueue. */
static void add_localqueues(struct snap *s, struct fq_objstore *st)
{
    const struct fq_object **objs;
    size_t nlq = fq_objstore_list(st, FQ_KIND_LOCALQUEUE, NULL, &objs);
    s->lqs = fq_xcalloc(nlq + 1, sizeof(*s->lqs));
    for (size_t i = 0; i < nlq; i++) {
        const char *cq =
            fq_value_path_str(objs[i]->obj, FQ_LQ_CLUSTER_QUEUE, NULL);
        if (!cq)
            continue;
        struct lq_info *l = &s->lqs[s->nlq++];
        l->ns = fq_xstrdup(objs[i]->ns);
        l->name = fq_xstrdup(objs[i]->name);
        l->cq = fq_xstrdup(cq);
        l->stop = fq_kueue_lq_stop(objs[i]->obj);
    }
    free(objs);
}

/*
 * Builds the snapshot from the configuration objects: flavors, then the
 * ClusterQueues and Cohorts with every resource and flavor they name
 * interned, the quota tree (cohorts first, explicit, then each queue
 * under its cohort), each queue's policies and checks, and the
 * LocalQueues.
 */
void kq_snap_build(struct snap *s, struct fq_engine *e)
{
    struct fq_objstore *st = fq_engine_store(e);
    memset(s, 0, sizeof(*s));
    fq_adm_init(&s->adm);
    add_flavors(s, st);
    add_clusterqueues(s, st);
    struct cohorts co;
    cohorts_decode(s, st, &co);
    cohorts_link(s, &co);
    for (int i = 0; i < s->ncq; i++) {
        struct cq_info *c = &s->cqs[i];
        c->adm = fq_adm_add_cq(&s->adm);
        struct fq_adm_cq *ac = &s->adm.cqs[c->adm];
        if (c->view.cohort)
            s->adm.nodes[ac->node].parent = cohort_of(s, &co, c->view.cohort);
        c->active = true;
        cq_groups(s, c, ac);
        cq_policies(s, &c->view, ac);
        cq_checks(s, e, c);
        s->adm.nodes[ac->node].fair_weight_milli = c->view.fair_weight_milli;
    }
    const struct fq_fair_sharing_config *fs =
        &fq_engine_config(e)->fair_sharing;
    s->adm.fair = fs->enable;
    s->adm.nfs_strategies = fs->nstrategies;
    for (int i = 0; i < fs->nstrategies && i < 2; i++)
        s->adm.fs_strategies[i] = (uint8_t)fs->strategies[i];
    fq_adm_finish(&s->adm);
    cohorts_keep(s, &co);
    cohorts_release(&co);
    add_localqueues(s, st);
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
    kq_afs_release(s);
    for (int i = 0; i < s->nlq; i++) {
        free(s->lqs[i].ns);
        free(s->lqs[i].name);
        free(s->lqs[i].cq);
    }
    free(s->lqs);
    for (int i = 0; i < s->nco; i++)
        free(s->co_name[i]);
    free(s->co_name);
    free(s->co_node);
    for (int f = 0; f < FQ_ADM_MAX_FLAVORS; f++)
        if (s->flv[f].exists)
            fq_resourceflavor_release(&s->flv[f].view);
    fq_adm_release(&s->adm);
}
