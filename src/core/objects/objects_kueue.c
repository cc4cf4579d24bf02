/*
 * objects_kueue.c - decoders (= validators) of Kueue's kinds:
 * ResourceFlavor, ClusterQueue, Cohort, LocalQueue, Workload,
 * WorkloadPriorityClass, AdmissionCheck, ProvisioningRequestConfig.
 *
 * Rules come from Kueue's API types (v1beta1 and v1beta2 are both read;
 * where they differ, both spellings are accepted: cohort / cohortName,
 * admissionChecks / admissionChecksStrategy, Borrow / MayStopSearch,
 * priorityClassName / priorityClassRef) and from its CEL rules and
 * webhooks, e.g. for a ClusterQueue:
 *   - at most 16 resource groups, 64 covered resources and 64 flavors per
 *     group, 256 flavors in all;
 *   - a resource and a flavor each belong to one group only;
 *   - every flavor lists every covered resource of its group (flexq accepts
 *     any order, Kueue wants the coveredResources order);
 *   - borrowingLimit / lendingLimit need a cohort; lendingLimit <= nominal;
 *   - borrowWithinCohort needs reclaimWithinCohort != Never;
 *   - flavorFungibility.preference needs both policies TryNextFlavor;
 *   - admissionChecks and admissionChecksStrategy exclude each other, and
 *     onFlavors names flavors of this queue (stricter than Kueue, which
 *     finds the typo only when nothing gets checked).
 *
 * It does not check that referenced objects exist: that needs the store.
 */
#include <stdio.h>
#include <string.h>

#include "objects/objects_internal.h"

static const char *const stop_names[] = {"None", "Hold", "HoldAndDrain", NULL};

/* --- ResourceFlavor ------------------------------------------------------ */

int fq_resourceflavor_decode(const struct fq_value *obj, const char *file,
                             struct fq_resourceflavor *out,
                             struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_RESOURCEFLAVOR, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", false);
        size_t old = path_key(&c, "spec");
        want_kvs(&c, spec, "nodeLabels", KVS_LABELS, 8, &out->node_labels);
        want_taints(&c, spec, "nodeTaints", 8, &out->node_taints,
                    &out->n_node_taints);
        want_tolerations(&c, spec, "tolerations", 8, &out->tolerations,
                         &out->n_tolerations);
        out->topology_name = want_name(&c, spec, "topologyName", false,
                                       fq_check_dns1123_subdomain);
        if (out->topology_name && out->node_labels.n == 0)
            derr_key(&c, field(spec, "topologyName"), "topologyName",
                     "needs at least one entry in nodeLabels");
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_resourceflavor_release(struct fq_resourceflavor *v)
{
    objmem_free(&v->mem);
}

/* --- resource groups (ClusterQueue and Cohort) --------------------------- */

struct seen_flavor {
    const char *name;
    size_t group;
};

static void decode_flavor(struct dctx *c, const struct fq_value *fl,
                          const struct fq_resource_group *g, bool can_limit,
                          const char *limit_needs, struct fq_flavor_quotas *fq)
{
    fq->name = want_name(c, fl, "name", true, fq_check_dns1123_subdomain);
    const struct fq_value *rs = want_seq(c, fl, "resources", true, 1, 64);
    fq->resources = MEM_ARRAY(c, struct fq_resource_quota, g->n_covered);
    if (!rs)
        return;
    bool *have = MEM_ARRAY(c, bool, g->n_covered + 1);
    size_t old = path_key(c, "resources");
    for (size_t i = 0; i < rs->u.seq.n; i++) {
        const struct fq_value *r = rs->u.seq.items[i];
        size_t o2 = path_idx(c, i);
        if (!r || r->type != FQ_V_MAP) {
            derr(c, r, "must be a mapping, not %s", type_word(r));
            path_pop(c, o2);
            continue;
        }
        const char *name =
            want_name(c, r, "name", true, fq_check_qualified_name);
        size_t slot = g->n_covered;
        for (size_t j = 0; name && j < g->n_covered; j++)
            if (strcmp(g->covered[j], name) == 0)
                slot = j;
        if (name && slot == g->n_covered && g->n_covered > 0)
            derr_key(c, field(r, "name"), "name",
                     "resource \"%s\" is not in this group's "
                     "coveredResources",
                     name);
        else if (name && slot < g->n_covered && have[slot])
            derr_key(c, field(r, "name"), "name", "duplicate resource \"%s\"",
                     name);
        struct fq_resource_quota q;
        memset(&q, 0, sizeof(q));
        q.name = name;
        if (!field(r, "nominalQuota"))
            derr_missing(c, r, "nominalQuota");
        want_qty(c, r, "nominalQuota", name, true, &q.nominal);
        q.has_borrowing_limit =
            want_qty(c, r, "borrowingLimit", name, true, &q.borrowing_limit);
        q.has_lending_limit =
            want_qty(c, r, "lendingLimit", name, true, &q.lending_limit);
        if (field(r, "borrowingLimit") && !can_limit)
            derr_key(c, field(r, "borrowingLimit"), "borrowingLimit",
                     "must not be set without %s", limit_needs);
        if (field(r, "lendingLimit") && !can_limit)
            derr_key(c, field(r, "lendingLimit"), "lendingLimit",
                     "must not be set without %s", limit_needs);
        else if (q.has_lending_limit && q.lending_limit > q.nominal)
            derr_key(c, field(r, "lendingLimit"), "lendingLimit",
                     "must be less than or equal to nominalQuota (%s)",
                     scalar_text(field(r, "nominalQuota")));
        if (name && slot < g->n_covered && !have[slot]) {
            have[slot] = true;
            fq->resources[slot] = q;
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
    char missing[512] = "";
    size_t used = 0, nmiss = 0;
    for (size_t j = 0; j < g->n_covered; j++) {
        if (have[j])
            continue;
        int w = snprintf(missing + used, sizeof(missing) - used, "%s\"%s\"",
                         nmiss ? ", " : "", g->covered[j]);
        if (w > 0 && (size_t)w < sizeof(missing) - used)
            used += (size_t)w;
        nmiss++;
    }
    if (nmiss)
        derr_key(c, rs, "resources",
                 "must list every covered resource of the group; missing %s",
                 missing);
    else
        fq->n_resources = g->n_covered;
}

/* Decodes spec.resourceGroups. `can_limit` says whether borrowing/lending
 * limits are allowed (a cohort / a parent exists). */
static void decode_groups(struct dctx *c, const struct fq_value *spec,
                          bool can_limit, const char *limit_needs,
                          struct fq_resource_group **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const struct fq_value *gs =
        want_seq(c, spec, "resourceGroups", false, 0, 16);
    if (!gs)
        return;
    *out = MEM_ARRAY(c, struct fq_resource_group, gs->u.seq.n);
    size_t total_flavors = 0;
    for (size_t i = 0; i < gs->u.seq.n; i++) {
        const struct fq_value *g = gs->u.seq.items[i];
        if (g && g->type == FQ_V_MAP)
            total_flavors += fq_value_len(field(g, "flavors"));
    }
    if (total_flavors > 256)
        derr_key(c, gs, "resourceGroups",
                 "must have at most 256 flavors in all, not %zu",
                 total_flavors);
    struct seen_flavor *seen = MEM_ARRAY(c, struct seen_flavor, total_flavors);
    size_t nseen = 0;
    size_t old = path_key(c, "resourceGroups");
    for (size_t i = 0; i < gs->u.seq.n; i++) {
        const struct fq_value *g = gs->u.seq.items[i];
        size_t o2 = path_idx(c, i);
        if (!g || g->type != FQ_V_MAP) {
            derr(c, g, "must be a mapping, not %s", type_word(g));
            path_pop(c, o2);
            continue;
        }
        struct fq_resource_group *rg = &(*out)[(*n)++];
        rg->covered = want_strs(c, g, "coveredResources", true, 64,
                                fq_check_qualified_name, &rg->n_covered);
        if (field(g, "coveredResources") && rg->n_covered == 0 &&
            fq_value_len(field(g, "coveredResources")) == 0)
            derr_key(c, field(g, "coveredResources"), "coveredResources",
                     "must have at least 1 item");
        /* A resource belongs to one group only. */
        const struct fq_value *cov = field(g, "coveredResources");
        for (size_t j = 0; j < rg->n_covered; j++) {
            for (size_t k = 0; k + 1 < *n; k++) {
                const struct fq_resource_group *og = &(*out)[k];
                for (size_t l = 0; l < og->n_covered; l++) {
                    if (strcmp(og->covered[l], rg->covered[j]) != 0)
                        continue;
                    size_t o3 = path_key(c, "coveredResources");
                    path_idx(c, j);
                    const struct fq_value *at = NULL;
                    for (size_t m = 0; m < fq_value_len(cov); m++)
                        if (strcmp(scalar_text(fq_seq_at(cov, m)),
                                   rg->covered[j]) == 0)
                            at = fq_seq_at(cov, m);
                    derr(c, at,
                         "resource \"%s\" is already covered by "
                         "resourceGroups[%zu]",
                         rg->covered[j], k);
                    path_pop(c, o3);
                }
            }
        }
        const struct fq_value *fls = want_seq(c, g, "flavors", true, 1, 64);
        if (fls) {
            rg->flavors = MEM_ARRAY(c, struct fq_flavor_quotas, fls->u.seq.n);
            size_t o3 = path_key(c, "flavors");
            for (size_t j = 0; j < fls->u.seq.n; j++) {
                const struct fq_value *fl = fls->u.seq.items[j];
                size_t o4 = path_idx(c, j);
                if (!fl || fl->type != FQ_V_MAP) {
                    derr(c, fl, "must be a mapping, not %s", type_word(fl));
                    path_pop(c, o4);
                    continue;
                }
                struct fq_flavor_quotas *fq = &rg->flavors[rg->n_flavors++];
                decode_flavor(c, fl, rg, can_limit, limit_needs, fq);
                if (fq->name) {
                    for (size_t k = 0; k < nseen; k++)
                        if (strcmp(seen[k].name, fq->name) == 0) {
                            if (seen[k].group == i)
                                derr_key(c, field(fl, "name"), "name",
                                         "duplicate flavor \"%s\"", fq->name);
                            else
                                derr_key(c, field(fl, "name"), "name",
                                         "flavor \"%s\" already appears in "
                                         "resourceGroups[%zu]",
                                         fq->name, seen[k].group);
                            break;
                        }
                    if (nseen < total_flavors) {
                        seen[nseen].name = fq->name;
                        seen[nseen].group = i;
                        nseen++;
                    }
                }
                path_pop(c, o4);
            }
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}

const struct fq_resource_quota *fq_groups_quota(
    const struct fq_resource_group *groups, size_t n_groups, const char *flavor,
    const char *resource)
{
    for (size_t i = 0; i < n_groups; i++)
        for (size_t j = 0; j < groups[i].n_flavors; j++) {
            const struct fq_flavor_quotas *f = &groups[i].flavors[j];
            if (!f->name || strcmp(f->name, flavor) != 0)
                continue;
            for (size_t k = 0; k < f->n_resources; k++)
                if (f->resources[k].name &&
                    strcmp(f->resources[k].name, resource) == 0)
                    return &f->resources[k];
        }
    return NULL;
}

static int64_t fair_weight(struct dctx *c, const struct fq_value *spec)
{
    const struct fq_value *fs = want_map(c, spec, "fairSharing", false);
    int64_t w = 1000;
    if (fs) {
        size_t old = path_key(c, "fairSharing");
        int64_t q;
        if (want_qty(c, fs, "weight", "cpu", true, &q))
            w = q;
        path_pop(c, old);
    }
    return w;
}

/* --- ClusterQueue ---------------------------------------------------------- */

static bool flavor_in_groups(const struct fq_clusterqueue *cq, const char *f)
{
    for (size_t i = 0; i < cq->n_groups; i++)
        for (size_t j = 0; j < cq->groups[i].n_flavors; j++)
            if (cq->groups[i].flavors[j].name &&
                strcmp(cq->groups[i].flavors[j].name, f) == 0)
                return true;
    return false;
}

static void decode_checks(struct dctx *c, const struct fq_value *spec,
                          struct fq_clusterqueue *out)
{
    const struct fq_value *plain = field(spec, "admissionChecks");
    const struct fq_value *strat =
        want_map(c, spec, "admissionChecksStrategy", false);
    if (plain && strat) {
        derr_key(c, plain, "admissionChecks",
                 "either admissionChecks or admissionChecksStrategy can be "
                 "set, not both");
        return;
    }
    if (plain) {
        size_t n;
        const char **names = want_strs(c, spec, "admissionChecks", false, 64,
                                       fq_check_dns1123_subdomain, &n);
        out->checks = MEM_ARRAY(c, struct fq_check_ref, n);
        for (size_t i = 0; i < n; i++)
            out->checks[out->n_checks++].name = names[i];
        return;
    }
    if (!strat)
        return;
    size_t old = path_key(c, "admissionChecksStrategy");
    const struct fq_value *acs =
        want_seq(c, strat, "admissionChecks", false, 0, 64);
    if (acs) {
        out->checks = MEM_ARRAY(c, struct fq_check_ref, acs->u.seq.n);
        size_t o2 = path_key(c, "admissionChecks");
        for (size_t i = 0; i < acs->u.seq.n; i++) {
            const struct fq_value *a = acs->u.seq.items[i];
            size_t o3 = path_idx(c, i);
            if (!a || a->type != FQ_V_MAP) {
                derr(c, a, "must be a mapping, not %s", type_word(a));
                path_pop(c, o3);
                continue;
            }
            struct fq_check_ref r;
            memset(&r, 0, sizeof(r));
            r.name = want_name(c, a, "name", true, fq_check_dns1123_subdomain);
            r.on_flavors =
                want_strs(c, a, "onFlavors", false, 64,
                          fq_check_dns1123_subdomain, &r.n_on_flavors);
            const struct fq_value *of = field(a, "onFlavors");
            for (size_t j = 0; j < r.n_on_flavors; j++) {
                if (flavor_in_groups(out, r.on_flavors[j]))
                    continue;
                size_t o4 = path_key(c, "onFlavors");
                path_idx(c, j);
                const struct fq_value *at = NULL;
                for (size_t k = 0; k < fq_value_len(of); k++)
                    if (strcmp(scalar_text(fq_seq_at(of, k)),
                               r.on_flavors[j]) == 0)
                        at = fq_seq_at(of, k);
                derr(c, at,
                     "flavor \"%s\" is not in this ClusterQueue's "
                     "resourceGroups",
                     r.on_flavors[j]);
                path_pop(c, o4);
            }
            for (size_t j = 0; r.name && j < out->n_checks; j++)
                if (strcmp(out->checks[j].name, r.name) == 0)
                    derr_key(c, field(a, "name"), "name",
                             "duplicate admission check \"%s\"", r.name);
            if (r.name)
                out->checks[out->n_checks++] = r;
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}

static void decode_preemption(struct dctx *c, const struct fq_value *spec,
                              struct fq_clusterqueue *out)
{
    static const char *const within[] = {"Never", "LowerPriority",
                                         "LowerOrNewerEqualPriority", NULL};
    static const char *const reclaim[] = {"Never", "LowerPriority", "Any",
                                          NULL};
    static const char *const borrow[] = {"Never", "LowerPriority", NULL};
    const struct fq_value *p = want_map(c, spec, "preemption", false);
    if (!p)
        return;
    size_t old = path_key(c, "preemption");
    out->preemption.within_cluster_queue = (enum fq_preempt_policy)want_enum(
        c, p, "withinClusterQueue", within, 0);
    int r = want_enum(c, p, "reclaimWithinCohort", reclaim, 0);
    out->preemption.reclaim_within_cohort =
        r == 2 ? FQ_PREEMPT_ANY : (enum fq_preempt_policy)r;
    const struct fq_value *b = want_map(c, p, "borrowWithinCohort", false);
    if (b) {
        size_t o2 = path_key(c, "borrowWithinCohort");
        out->preemption.borrow_within_cohort =
            (enum fq_preempt_policy)want_enum(c, b, "policy", borrow, 0);
        out->preemption.max_priority_threshold =
            want_int(c, b, "maxPriorityThreshold", 0, FQ_INT32_MIN,
                     FQ_INT32_MAX, &out->preemption.has_max_priority_threshold);
        path_pop(c, o2);
        if (out->preemption.borrow_within_cohort != FQ_PREEMPT_NEVER &&
            out->preemption.reclaim_within_cohort == FQ_PREEMPT_NEVER)
            derr_key(c, b, "borrowWithinCohort",
                     "policy %s needs reclaimWithinCohort other than Never",
                     borrow[out->preemption.borrow_within_cohort]);
    }
    path_pop(c, old);
}

static void decode_fungibility(struct dctx *c, const struct fq_value *spec,
                               struct fq_clusterqueue *out)
{
    /* v1beta1 spelled MayStopSearch "Borrow" / "Preempt". */
    static const char *const borrow[] = {"MayStopSearch", "TryNextFlavor",
                                         "Borrow", NULL};
    static const char *const preempt[] = {"MayStopSearch", "TryNextFlavor",
                                          "Preempt", NULL};
    static const char *const pref[] = {"BorrowingOverPreemption",
                                       "PreemptionOverBorrowing", NULL};
    out->fungibility.when_can_borrow = FQ_FUNG_MAY_STOP_SEARCH;
    out->fungibility.when_can_preempt = FQ_FUNG_TRY_NEXT_FLAVOR;
    const struct fq_value *f = want_map(c, spec, "flavorFungibility", false);
    if (!f)
        return;
    size_t old = path_key(c, "flavorFungibility");
    int b = want_enum(c, f, "whenCanBorrow", borrow, 0);
    int p = want_enum(c, f, "whenCanPreempt", preempt, 1);
    out->fungibility.when_can_borrow =
        b == 1 ? FQ_FUNG_TRY_NEXT_FLAVOR : FQ_FUNG_MAY_STOP_SEARCH;
    out->fungibility.when_can_preempt =
        p == 1 ? FQ_FUNG_TRY_NEXT_FLAVOR : FQ_FUNG_MAY_STOP_SEARCH;
    out->fungibility.preference =
        (enum fq_fung_preference)want_enum(c, f, "preference", pref, 0);
    if (field(f, "preference") &&
        (out->fungibility.when_can_borrow != FQ_FUNG_TRY_NEXT_FLAVOR ||
         out->fungibility.when_can_preempt != FQ_FUNG_TRY_NEXT_FLAVOR))
        derr_key(c, field(f, "preference"), "preference",
                 "may only be set when whenCanBorrow and whenCanPreempt are "
                 "both TryNextFlavor");
    path_pop(c, old);
}

int fq_clusterqueue_decode(const struct fq_value *obj, const char *file,
                           struct fq_clusterqueue *out, struct fq_errlist *errs)
{
    static const char *const qs[] = {"BestEffortFIFO", "StrictFIFO", NULL};
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_CLUSTERQUEUE, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        const char *co = field(spec, "cohortName") ? "cohortName" : "cohort";
        if (field(spec, "cohortName") && field(spec, "cohort"))
            derr_key(&c, field(spec, "cohort"), "cohort",
                     "set cohort (v1beta1) or cohortName (v1beta2), not both");
        out->cohort =
            want_name(&c, spec, co, false, fq_check_dns1123_subdomain);
        if (out->cohort && !*out->cohort)
            out->cohort = NULL;
        bool has_cohort = field(spec, co) != NULL;
        want_selector(&c, spec, "namespaceSelector", &out->namespace_selector);
        decode_groups(&c, spec, has_cohort, "a cohort", &out->groups,
                      &out->n_groups);
        out->queueing_strategy = (enum fq_queueing_strategy)want_enum(
            &c, spec, "queueingStrategy", qs, 0);
        decode_preemption(&c, spec, out);
        decode_fungibility(&c, spec, out);
        decode_checks(&c, spec, out);
        out->stop_policy = (enum fq_stop_policy)want_enum(
            &c, spec, "stopPolicy", stop_names, 0);
        out->fair_weight_milli = fair_weight(&c, spec);
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_clusterqueue_release(struct fq_clusterqueue *v)
{
    objmem_free(&v->mem);
}

/* --- Cohort --------------------------------------------------------------------- */

int fq_cohort_decode(const struct fq_value *obj, const char *file,
                     struct fq_cohort *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_COHORT, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", false);
        size_t old = path_key(&c, "spec");
        const char *pk = field(spec, "parentName") ? "parentName" : "parent";
        out->parent =
            want_name(&c, spec, pk, false, fq_check_dns1123_subdomain);
        if (out->parent && out->meta.name &&
            strcmp(out->parent, out->meta.name) == 0)
            derr_key(&c, field(spec, pk), pk,
                     "a cohort cannot be its own parent");
        decode_groups(&c, spec, out->parent != NULL, "a parentName",
                      &out->groups, &out->n_groups);
        out->fair_weight_milli = fair_weight(&c, spec);
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_cohort_release(struct fq_cohort *v)
{
    objmem_free(&v->mem);
}

/* --- LocalQueue ------------------------------------------------------------------ */

int fq_localqueue_decode(const struct fq_value *obj, const char *file,
                         struct fq_localqueue *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_LOCALQUEUE, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        if (spec)
            out->cluster_queue = want_name(&c, spec, "clusterQueue", true,
                                           fq_check_dns1123_subdomain);
        out->stop_policy = (enum fq_stop_policy)want_enum(
            &c, spec, "stopPolicy", stop_names, 0);
        out->fair_weight_milli = fair_weight(&c, spec);
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_localqueue_release(struct fq_localqueue *v)
{
    objmem_free(&v->mem);
}

/* --- Workload ----------------------------------------------------------------------- */

/* The `parts` (enum fq_wl_status_part) of status into out. */
static void decode_workload_status(struct dctx *c, const struct fq_value *st,
                                   unsigned parts, struct fq_workload *out)
{
    static const char *const states[] = {"Pending", "Ready", "Retry",
                                         "Rejected", NULL};
    size_t old = path_key(c, "status");
    if (parts & FQ_WL_CONDITIONS)
        want_conditions(c, st, "conditions", &out->conditions);
    const struct fq_value *adm =
        parts & FQ_WL_ADMISSION ? want_map(c, st, "admission", false) : NULL;
    if (adm) {
        out->has_admission = true;
        size_t o2 = path_key(c, "admission");
        out->admission_cluster_queue = want_str(c, adm, "clusterQueue", true);
        const struct fq_value *psa =
            want_seq(c, adm, "podSetAssignments", false, 0, 0);
        if (psa) {
            out->assignments =
                MEM_ARRAY(c, struct fq_podset_assignment, psa->u.seq.n);
            size_t o3 = path_key(c, "podSetAssignments");
            for (size_t i = 0; i < psa->u.seq.n; i++) {
                const struct fq_value *a = psa->u.seq.items[i];
                size_t o4 = path_idx(c, i);
                if (!a || a->type != FQ_V_MAP) {
                    derr(c, a, "must be a mapping, not %s", type_word(a));
                } else {
                    struct fq_podset_assignment *pa =
                        &out->assignments[out->n_assignments++];
                    pa->name = want_str(c, a, "name", true);
                    want_kvs(c, a, "flavors", KVS_ANY, 0, &pa->flavors);
                    want_resources(c, a, "resourceUsage", false,
                                   &pa->resource_usage);
                    pa->count = want_int(c, a, "count", 1, 0, INT64_MAX, NULL);
                }
                path_pop(c, o4);
            }
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    const struct fq_value *acs =
        parts & FQ_WL_CHECKS ? want_seq(c, st, "admissionChecks", false, 0, 0) :
                               NULL;
    if (acs) {
        out->check_states = MEM_ARRAY(c, struct fq_check_status, acs->u.seq.n);
        size_t o2 = path_key(c, "admissionChecks");
        for (size_t i = 0; i < acs->u.seq.n; i++) {
            const struct fq_value *a = acs->u.seq.items[i];
            size_t o3 = path_idx(c, i);
            if (!a || a->type != FQ_V_MAP) {
                derr(c, a, "must be a mapping, not %s", type_word(a));
            } else {
                static const char *const keys[] = {
                    "name",       "state",
                    "message",    "lastTransitionTime",
                    "retryCount", "requeueAfterSeconds"};
                const struct fq_value *f[6];
                fields(a, keys, 6, f);
                struct fq_check_status *cs =
                    &out->check_states[out->n_check_states++];
                cs->name = str_of(c, a, "name", f[0], true);
                cs->state = (enum fq_check_state)enum_of(c, a, "state", f[1],
                                                         states, 0);
                cs->message = str_of(c, a, "message", f[2], false);
                cs->last_transition_time =
                    str_of(c, a, "lastTransitionTime", f[3], false);
                cs->retry_count =
                    int_of(c, "retryCount", f[4], 0, 0, INT64_MAX, NULL);
                cs->requeue_after_seconds = int_of(c, "requeueAfterSeconds",
                                                   f[5], 0, 0, INT64_MAX, NULL);
            }
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    const struct fq_value *rq =
        parts & FQ_WL_REQUEUE ? want_map(c, st, "requeueState", false) : NULL;
    if (rq) {
        out->has_requeue_state = true;
        size_t o2 = path_key(c, "requeueState");
        out->requeue_count = want_int(c, rq, "count", 0, 0, INT64_MAX, NULL);
        out->requeue_at = want_str(c, rq, "requeueAt", false);
        path_pop(c, o2);
    }
    path_pop(c, old);
}

/* A Workload, spec.podSets too when `podsets`. */
static int decode_workload(const struct fq_value *obj, const char *file,
                           bool podsets, struct fq_workload *out,
                           struct fq_errlist *errs)
{
    static const char *const sources[] = {
        "", "kueue.x-k8s.io/workloadpriorityclass",
        "scheduling.k8s.io/priorityclass", NULL};
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_WORKLOAD, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        const struct fq_value *ps =
            podsets ? want_seq(&c, spec, "podSets", true, 1, 18) : NULL;
        if (ps) {
            out->podsets = MEM_ARRAY(&c, struct fq_podset, ps->u.seq.n);
            size_t o2 = path_key(&c, "podSets");
            size_t with_min = 0;
            for (size_t i = 0; i < ps->u.seq.n; i++) {
                const struct fq_value *p = ps->u.seq.items[i];
                size_t o3 = path_idx(&c, i);
                if (!p || p->type != FQ_V_MAP) {
                    derr(&c, p, "must be a mapping, not %s", type_word(p));
                    path_pop(&c, o3);
                    continue;
                }
                struct fq_podset *s = &out->podsets[out->n_podsets++];
                s->name =
                    want_name(&c, p, "name", false, fq_check_dns1123_label);
                if (!s->name)
                    s->name = "main";
                for (size_t j = 0; j + 1 < out->n_podsets; j++)
                    if (strcmp(out->podsets[j].name, s->name) == 0)
                        derr_key(&c, field(p, "name"), "name",
                                 "duplicate podSet name \"%s\"", s->name);
                s->count = want_int(&c, p, "count", 1, 0, FQ_INT32_MAX, NULL);
                s->min_count = want_int(&c, p, "minCount", 0, 1, FQ_INT32_MAX,
                                        &s->has_min_count);
                if (s->has_min_count) {
                    if (++with_min == 2)
                        derr_key(&c, field(p, "minCount"), "minCount",
                                 "only one podSet may set minCount");
                    if (s->min_count > s->count)
                        derr_key(&c, field(p, "minCount"), "minCount",
                                 "must be less than or equal to count (%lld)",
                                 (long long)s->count);
                }
                want_podtemplate(&c, p, "template", true, &s->template);
                path_pop(&c, o3);
            }
            path_pop(&c, o2);
        }
        out->queue_name =
            want_name(&c, spec, "queueName", false, fq_check_dns1123_subdomain);
        out->priority_class_name = want_name(&c, spec, "priorityClassName",
                                             false, fq_check_dns1123_subdomain);
        int src = want_enum(&c, spec, "priorityClassSource", sources, 0);
        out->priority_class_source = src > 0 ? sources[src] : NULL;
        const struct fq_value *ref =
            want_map(&c, spec, "priorityClassRef", false);
        if (ref) {
            size_t o2 = path_key(&c, "priorityClassRef");
            const char *grp = want_str(&c, ref, "group", false);
            const char *kind = want_str(&c, ref, "kind", false);
            out->priority_class_name =
                want_name(&c, ref, "name", true, fq_check_dns1123_subdomain);
            if (kind && strcmp(kind, "WorkloadPriorityClass") == 0)
                out->priority_class_source = sources[1];
            else if (kind && strcmp(kind, "PriorityClass") == 0)
                out->priority_class_source = sources[2];
            else if (kind)
                derr_key(&c, field(ref, "kind"), "kind",
                         "unsupported value \"%s\": must be one of "
                         "WorkloadPriorityClass, PriorityClass",
                         kind);
            (void)grp;
            path_pop(&c, o2);
        }
        out->priority = want_int(&c, spec, "priority", 0, FQ_INT32_MIN,
                                 FQ_INT32_MAX, &out->has_priority);
        out->active = want_bool(&c, spec, "active", true);
        out->max_exec_seconds =
            want_int(&c, spec, "maximumExecutionTimeSeconds", 0, 1,
                     FQ_INT32_MAX, &out->has_max_exec);
        path_pop(&c, old);
        const struct fq_value *st = want_map(&c, obj, "status", false);
        if (st)
            decode_workload_status(&c, st, FQ_WL_STATUS_ALL, out);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

int fq_workload_decode(const struct fq_value *obj, const char *file,
                       struct fq_workload *out, struct fq_errlist *errs)
{
    return decode_workload(obj, file, true, out, errs);
}

int fq_workload_decode_no_podsets(const struct fq_value *obj,
                                  struct fq_workload *out)
{
    return decode_workload(obj, NULL, false, out, NULL);
}

int fq_workload_status_decode(const struct fq_value *obj, unsigned parts,
                              struct fq_workload *out)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    memset(&c, 0, sizeof(c));
    c.mem = &out->mem;
    c.obj = obj;
    c.kind = FQ_KIND_WORKLOAD;
    const struct fq_value *st = fq_map_get(obj, "status");
    if (st && st->type == FQ_V_MAP)
        decode_workload_status(&c, st, parts, out);
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_workload_release(struct fq_workload *v)
{
    objmem_free(&v->mem);
}

/* --- WorkloadPriorityClass ----------------------------------------------------------- */

int fq_workloadpriorityclass_decode(const struct fq_value *obj,
                                    const char *file,
                                    struct fq_workloadpriorityclass *out,
                                    struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_WORKLOADPRIORITYCLASS,
                   &out->mem, &out->meta) == 0) {
        if (!field(obj, "value"))
            derr_missing(&c, obj, "value");
        out->value =
            want_int(&c, obj, "value", 0, FQ_INT32_MIN, FQ_INT32_MAX, NULL);
        out->description = want_str(&c, obj, "description", false);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_workloadpriorityclass_release(struct fq_workloadpriorityclass *v)
{
    objmem_free(&v->mem);
}

/* --- AdmissionCheck ------------------------------------------------------------------ */

int fq_admissioncheck_decode(const struct fq_value *obj, const char *file,
                             struct fq_admissioncheck *out,
                             struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_ADMISSIONCHECK, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        if (spec)
            out->controller_name = want_str(&c, spec, "controllerName", true);
        const struct fq_value *p = want_map(&c, spec, "parameters", false);
        if (p) {
            out->has_parameters = true;
            size_t o2 = path_key(&c, "parameters");
            out->param_api_group =
                want_name(&c, p, "apiGroup", true, fq_check_dns1123_subdomain);
            out->param_kind = want_str(&c, p, "kind", true);
            out->param_name =
                want_name(&c, p, "name", true, fq_check_dns1123_subdomain);
            path_pop(&c, o2);
        }
        want_int(&c, spec, "retryDelayMinutes", 15, 0, INT64_MAX, NULL);
        path_pop(&c, old);
        const struct fq_value *st = want_map(&c, obj, "status", false);
        if (st) {
            size_t o2 = path_key(&c, "status");
            want_conditions(&c, st, "conditions", &out->conditions);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_admissioncheck_release(struct fq_admissioncheck *v)
{
    objmem_free(&v->mem);
}

/* --- ProvisioningRequestConfig ------------------------------------------------------- */

/* Parameters of a ProvisioningRequest(Config): <= 100, values <= 255. */
static void want_params(struct dctx *c, const struct fq_value *spec,
                        struct fq_kvs *out)
{
    want_kvs(c, spec, "parameters", KVS_ANY, 100, out);
    const struct fq_value *p = field(spec, "parameters");
    for (size_t i = 0; i < out->n; i++)
        if (strlen(out->items[i].value) > 255) {
            size_t old = path_key(c, "parameters");
            derr_key(c, fq_map_get(p, out->items[i].key), out->items[i].key,
                     "must be no more than 255 characters");
            path_pop(c, old);
        }
}

int fq_provisioningrequestconfig_decode(
    const struct fq_value *obj, const char *file,
    struct fq_provisioningrequestconfig *out, struct fq_errlist *errs)
{
    static const char *const merge[] = {
        "IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements",
        NULL};
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_PROVISIONINGREQUESTCONFIG,
                   &out->mem, &out->meta) == 0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        if (spec)
            out->provisioning_class_name =
                want_name(&c, spec, "provisioningClassName", true,
                          fq_check_dns1123_subdomain);
        want_params(&c, spec, &out->parameters);
        out->managed_resources =
            want_strs(&c, spec, "managedResources", false, 100,
                      fq_check_qualified_name, &out->n_managed_resources);
        out->backoff_limit_count = 3;
        out->backoff_base_seconds = 60;
        out->backoff_max_seconds = 1800;
        const struct fq_value *rs = want_map(&c, spec, "retryStrategy", false);
        if (rs) {
            size_t o2 = path_key(&c, "retryStrategy");
            out->backoff_limit_count =
                want_int(&c, rs, "backoffLimitCount", 3, 0, FQ_INT32_MAX, NULL);
            out->backoff_base_seconds = want_int(&c, rs, "backoffBaseSeconds",
                                                 60, 0, FQ_INT32_MAX, NULL);
            out->backoff_max_seconds = want_int(&c, rs, "backoffMaxSeconds",
                                                1800, 0, FQ_INT32_MAX, NULL);
            path_pop(&c, o2);
        }
        const struct fq_value *pu = want_map(&c, spec, "podSetUpdates", false);
        if (pu) {
            size_t o2 = path_key(&c, "podSetUpdates");
            const struct fq_value *ns =
                want_seq(&c, pu, "nodeSelector", false, 0, 8);
            if (ns) {
                out->node_selector_updates =
                    MEM_ARRAY(&c, struct fq_prc_node_selector, ns->u.seq.n);
                size_t o3 = path_key(&c, "nodeSelector");
                for (size_t i = 0; i < ns->u.seq.n; i++) {
                    const struct fq_value *e = ns->u.seq.items[i];
                    size_t o4 = path_idx(&c, i);
                    if (!e || e->type != FQ_V_MAP) {
                        derr(&c, e, "must be a mapping, not %s", type_word(e));
                    } else {
                        struct fq_prc_node_selector *u =
                            &out->node_selector_updates
                                 [out->n_node_selector_updates++];
                        u->key = want_name(&c, e, "key", true,
                                           fq_check_qualified_name);
                        u->value_from_detail = want_str(
                            &c, e, "valueFromProvisioningClassDetail", true);
                    }
                    path_pop(&c, o4);
                }
                path_pop(&c, o3);
            }
            path_pop(&c, o2);
        }
        int m = want_enum(&c, spec, "podSetMergePolicy", merge, -1);
        out->podset_merge_policy = m >= 0 ? merge[m] : NULL;
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_provisioningrequestconfig_release(
    struct fq_provisioningrequestconfig *v)
{
    objmem_free(&v->mem);
}

/* --- ProvisioningRequest (autoscaling.x-k8s.io) ------------------------------------- */

int fq_provisioningrequest_decode(const struct fq_value *obj, const char *file,
                                  struct fq_provisioningrequest *out,
                                  struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_PROVISIONINGREQUEST, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        if (spec)
            out->provisioning_class_name =
                want_name(&c, spec, "provisioningClassName", true,
                          fq_check_dns1123_subdomain);
        const struct fq_value *ps =
            spec ? want_seq(&c, spec, "podSets", true, 1, 32) : NULL;
        if (ps) {
            out->podsets = MEM_ARRAY(&c, struct fq_provreq_podset, ps->u.seq.n);
            size_t o2 = path_key(&c, "podSets");
            for (size_t i = 0; i < ps->u.seq.n; i++) {
                const struct fq_value *p = ps->u.seq.items[i];
                size_t o3 = path_idx(&c, i);
                if (!p || p->type != FQ_V_MAP) {
                    derr(&c, p, "must be a mapping, not %s", type_word(p));
                } else {
                    struct fq_provreq_podset *s =
                        &out->podsets[out->n_podsets++];
                    const struct fq_value *ref =
                        want_map(&c, p, "podTemplateRef", true);
                    if (ref) {
                        size_t o4 = path_key(&c, "podTemplateRef");
                        s->template_name = want_name(
                            &c, ref, "name", true, fq_check_dns1123_subdomain);
                        path_pop(&c, o4);
                    }
                    if (!field(p, "count"))
                        derr_missing(&c, p, "count");
                    s->count =
                        want_int(&c, p, "count", 1, 1, FQ_INT32_MAX, NULL);
                }
                path_pop(&c, o3);
            }
            path_pop(&c, o2);
        }
        want_params(&c, spec, &out->parameters);
        path_pop(&c, old);
        const struct fq_value *st = want_map(&c, obj, "status", false);
        if (st) {
            size_t o2 = path_key(&c, "status");
            want_conditions(&c, st, "conditions", &out->conditions);
            want_kvs(&c, st, "provisioningClassDetails", KVS_ANY, 64,
                     &out->class_details);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_provisioningrequest_release(struct fq_provisioningrequest *v)
{
    objmem_free(&v->mem);
}
