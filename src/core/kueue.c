/*
 * kueue.c - the "kueue" controller: Kueue's scheduler and workload
 * controller over stored objects.
 *
 * It watches ResourceFlavor, ClusterQueue, Cohort, LocalQueue, Workload,
 * WorkloadPriorityClass, AdmissionCheck and Namespace objects and writes
 * Workload status (conditions, admission, admissionChecks, requeueState)
 * and ClusterQueue / LocalQueue status, as Kueue does. The algorithm itself
 * (flavors, quota, preemption targets) is admission.c; this file turns
 * objects into its compact structs and decisions back into objects.
 *
 * The workload state machine (one function performs each transition):
 *
 *                 reserve()                      checks all Ready
 *   +---------+  (QuotaReserved=True) +----------+  (Admitted=True) +---------+
 *   | pending |---------------------->| reserved |----------------->|admitted |
 *   +---------+                       +----------+                  +---------+
 *     ^  ^  |                           |   |  check Retry / Evicted    |  |
 *     |  |  | active=false              |   +---------------+           |  |
 *     |  |  v                           | Rejected          v           |  |
 *     |  | +-------------+ deactivate() |            +-----------+ evict()| |
 *     |  | | deactivated |<-------------+------------|  evicted  |<-------+  |
 *     |  | +-------------+                           +-----------+          |
 *     |  |   active=true (Requeued=True Reactivated)  |  release_quota()    |
 *     |  +--------------------------------------------+  Requeued=True now, |
 *     |     backoff over (Requeued=True BackoffFinished)  or False+backoff   |
 *     |                                                                       |
 *     +-- finished (Finished=True, set by the job integration) <------------+
 *
 * Invariants
 *   1. Quota is held by exactly the workloads with status.admission set,
 *      QuotaReserved=True and not Finished; usage is recomputed from them
 *      on every full run, so it can never be counted twice (also after a
 *      crash). A cycle may reuse the last full run's workloads and usage
 *      only while nothing changed but this controller's own pending
 *      messages (struct kueue's kept state; any other change, a due timer
 *      or quota moving in a cycle drops it).
 *   2. A workload with Evicted=True and status.admission set is being
 *      evicted; the next run releases its quota (release_quota) whoever
 *      set the condition (preemption, a check, capacity, jobs).
 *   3. Admitted=True implies QuotaReserved=True and every applicable
 *      check Ready.
 *   4. Scheduling cycles are at least policy.cycle_ms apart in engine
 *      time (Kueue: FQ_KUEUE_CYCLE_MS; flexq: 0, a cycle when kicked);
 *      in each, at most policy.max_admissions_per_cq_per_cycle heads
 *      per ClusterQueue are tried (0 = all that fit).
 *
 * Policy switches (struct fq_policy; docs/policies.md):
 *   max_admissions_per_cq_per_cycle  Kueue: 1
 *   migrate_to_preferred_flavor      a reserved workload waiting on a
 *                                    check moves to an earlier flavor that
 *                                    now fits (Kueue: off)
 *   flavor_failure_cooldown          flavors named in the avoid-flavors
 *                                    annotation (set here on a check
 *                                    Retry, or by capacity on a stockout)
 *                                    are tried last until their time
 *                                    (Kueue: off)
 *
 * What it does not do: create or read Pods, Jobs or ProvisioningRequests
 * (jobframework.c, provcheck.c), write check states (the check
 * controllers), fair sharing, TAS. Elastic slices: kueue_slices.c.
 */
#include "kueue.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "flexq/alloc.h"
#include "flexq/objects.h"
#include "flexq/quantity.h"
#include "kueue_slices.h"
#include "smap.h"

/* --- controller state ---------------------------------------------------- */

/* A decoded workload, kept while its resourceVersion holds. */
struct wcache {
    uint64_t rv;
    uint64_t seen;           /* run number of the last use */
    bool lc_known, needs_lc; /* needs_lifecycle() of this rv */
    /* What collect() reads of the tree on every run, read once per rv. */
    bool finished, qr_true, admitted, evicted, in_backoff;
    const char *qr_false_msg; /* QuotaReserved=False message, or NULL */
    int64_t created, qts, reserved_at;
    struct fq_value *tree; /* owned copy the view borrows from */
    struct fq_workload v;
    bool ok;
};

static void wcache_free(void *p)
{
    struct wcache *c = p;
    if (c->ok)
        fq_workload_release(&c->v);
    fq_value_free(c->tree);
    free(c);
}

struct kueue {
    bool need_cycle;             /* something changed: run a cycle when due */
    bool requeue;                /* capacity changed: retry inadmissible ones */
    int64_t last_cycle;          /* engine time of the last cycle */
    int64_t cycle_ms;            /* policy.cycle_ms */
    int64_t timer;               /* earliest backoff / timeout deadline */
    struct fq_smap inadmissible; /* "ns/name" of parked workloads */
    struct fq_smap seen_gen;     /* "kind/ns/name@generation" of config */
    struct fq_smap cache;        /* "ns/name" -> struct wcache */
    struct fq_smap dirty;        /* "ns/name" of workloads changed since
                                   the last run */
    struct fq_smap live;         /* "ns/name" of every workload not
                                   Finished (a superset at run time:
                                   collect() checks again) */
    bool live_ready;             /* live was filled from the store */
    /* live's keys sorted and split, kept while the set is unchanged (a
     * deep queue's cycles mostly rewrite statuses, not the set). */
    char **lk_ns, **lk_names;
    size_t lk_n;
    bool lk_valid;
    /* The last full run's workloads and snapshot, kept for the next cycle
     * while nothing changed but this controller's own QuotaReserved=False
     * messages: a deep queue whose heads are tried one per cycle is then
     * not decoded again for every head. `own` holds "ns/name" -> the
     * revision of such a write; any other change drops the cache. */
    struct wl *ws;
    size_t nw;
    void *snap;       /* struct snap, owned; NULL when nothing is kept */
    bool quota_moved; /* the running cycle reserved, preempted or moved */
    /* cycle()'s queue order over the kept workloads (or this run's, which
     * become the kept ones): pending workloads sorted, grouped by queue
     * from qstart; dropped with them. */
    struct wl **ord, **byq;
    size_t nord, *qstart;
    struct fq_smap own;
    struct fq_smap inert; /* "ns/name" of workloads out of live
                                   until they or the configuration change:
                                   pending with no LocalQueue (none named,
                                   or it does not exist) or deactivated,
                                   with nothing for lifecycle() */
    uint64_t runs;
    bool cycle_due; /* collect() built podsets: the cycle may run */
    struct fq_kueue_stats stats;
};

/* --- small helpers on object trees ------------------------------------- */

static void fmt_time(int64_t ms, char *buf, size_t n)
{
    fq_time_format(ms, buf, n);
}

static int64_t parse_time(const char *s, int64_t def)
{
    int64_t ms;
    if (!s || fq_time_parse(s, &ms) != 0)
        return def;
    return ms;
}

static struct fq_value *conds_of(struct fq_value *obj)
{
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    struct fq_value *c = fq_map_get(st, "conditions");
    if (!c || c->type != FQ_V_SEQ) {
        c = fq_value_seq();
        fq_map_set(st, "conditions", c);
    }
    return c;
}

static struct fq_value *cond_find(const struct fq_value *obj, const char *type)
{
    const struct fq_value *c = fq_value_path(obj, "status.conditions");
    for (size_t i = 0; i < fq_value_len(c); i++) {
        struct fq_value *x = fq_seq_at(c, i);
        if (!strcmp(fq_value_path_str(x, "type", ""), type))
            return x;
    }
    return NULL;
}

static bool cond_true(const struct fq_value *obj, const char *type)
{
    const struct fq_value *c = cond_find(obj, type);
    return c && !strcmp(fq_value_path_str(c, "status", ""), "True");
}

static const char *cond_reason(const struct fq_value *obj, const char *type)
{
    return fq_value_path_str(cond_find(obj, type), "reason", "");
}

/*
 * Sets a condition as Kubernetes' meta.SetStatusCondition does: the
 * transition time changes only when the status does.
 */
static void cond_set(struct fq_value *obj, const char *type, const char *status,
                     const char *reason, const char *message, int64_t now)
{
    struct fq_value *conds = conds_of(obj);
    struct fq_value *c = NULL;
    for (size_t i = 0; i < fq_value_len(conds); i++) {
        struct fq_value *x = fq_seq_at(conds, i);
        if (!strcmp(fq_value_path_str(x, "type", ""), type))
            c = x;
    }
    char ts[40];
    fmt_time(now, ts, sizeof(ts));
    if (!c) {
        c = fq_value_map();
        fq_map_set(c, "type", fq_value_str(type));
        fq_seq_push(conds, c);
    }
    if (strcmp(fq_value_path_str(c, "status", ""), status) ||
        !fq_map_get(c, "lastTransitionTime")) {
        fq_map_set(c, "status", fq_value_str(status));
        fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
    }
    fq_map_set(c, "reason", fq_value_str(reason));
    fq_map_set(c, "message", fq_value_str(message));
    int64_t gen = fq_value_path_int(obj, "metadata.generation", 0);
    if (gen > 0)
        fq_map_set(c, "observedGeneration", fq_value_int(gen));
}

/* Sets an existing condition False (no-op when absent). */
static void cond_clear(struct fq_value *obj, const char *type,
                       const char *reason, const char *message, int64_t now)
{
    if (cond_find(obj, type))
        cond_set(obj, type, "False", reason, message, now);
}

static void live_add(struct kueue *k, const char *key)
{
    size_t n = k->live.n;
    fq_smap_add(&k->live, key);
    if (k->live.n != n)
        k->lk_valid = false;
}

static void live_del(struct kueue *k, const char *key)
{
    size_t n = k->live.n;
    fq_smap_del(&k->live, key);
    if (k->live.n != n)
        k->lk_valid = false;
}

static void lk_free(struct kueue *k)
{
    for (size_t i = 0; i < k->lk_n; i++) {
        free(k->lk_ns[i]);
        free(k->lk_names[i]);
    }
    free(k->lk_ns);
    free(k->lk_names);
    k->lk_ns = k->lk_names = NULL;
    k->lk_n = 0;
    k->lk_valid = false;
}

static void wl_key(const char *ns, const char *name, char *buf, size_t n)
{
    size_t a = strlen(ns), b = strlen(name);
    if (a + b + 2 > n) {
        snprintf(buf, n, "%s/%s", ns, name);
        return;
    }
    memcpy(buf, ns, a);
    buf[a] = '/';
    memcpy(buf + a + 1, name, b + 1);
}

/* Writes an edited copy back; returns true when something changed. */
static bool commit(struct fq_engine *e, struct fq_value *obj)
{
    bool changed = false;
    struct fq_err err;
    if (fq_objstore_update(fq_engine_store(e), obj, true, &changed, NULL,
                           &err) != 0)
        return false;
    return changed;
}

static const struct fq_value *stored(struct fq_engine *e, enum fq_kind k,
                                     const char *ns, const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), k, ns, name);
    return o ? o->obj : NULL;
}

/* --- the configuration snapshot ---------------------------------------- */

struct check_info {
    char *name;
    uint64_t on_flv; /* bit per flavor; 0 = all flavors */
};

struct cq_info {
    char *name;
    int adm; /* index in the fq_adm */
    bool active;
    char *inactive_reason;
    char *inactive_msg;
    struct fq_clusterqueue view; /* decoded; borrows from the store */
    uint64_t all_flv;
    int nchecks;
    struct check_info *checks;
    /* counts for status */
    int pending, reserving, admitted;
};

struct lq_info {
    char *ns, *name, *cq;
    int pending, reserving, admitted;
};

struct flv_info {
    bool exists;
    struct fq_resourceflavor view;
};

struct snap {
    struct fq_adm adm;
    struct cq_info *cqs;
    int ncq;
    struct lq_info *lqs;
    int nlq;
    struct flv_info flv[FQ_ADM_MAX_FLAVORS];
    bool have_pods_res;
};

static int find_cq(const struct snap *s, const char *name)
{
    for (int i = 0; i < s->ncq; i++)
        if (!strcmp(s->cqs[i].name, name))
            return i;
    return -1;
}

static struct lq_info *find_lq(struct snap *s, const char *ns, const char *name)
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

struct cohort_ent {
    char *name;
    int node;
    struct fq_cohort view;
    bool has_view;
    char *parent;
};

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

static void snap_build(struct snap *s, struct fq_engine *e)
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

static void snap_release(struct snap *s)
{
    for (int i = 0; i < s->ncq; i++) {
        struct cq_info *c = &s->cqs[i];
        free(c->name);
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

/* --- workloads, compact ------------------------------------------------- */

struct wl {
    char *ns, *name, *uid; /* owned */
    int cq;                /* snapshot index, or -1 */
    struct lq_info *lq;
    int32_t prio;
    int64_t created, qts, reserved_at;
    bool holds; /* holds quota */
    bool admitted;
    bool pending; /* may be scheduled now */
    bool evicting;
    int npodsets;
    struct fq_adm_podset ps[FQ_ADM_MAX_PODSETS];
    char *psname[FQ_ADM_MAX_PODSETS];
    int64_t *req; /* owned, npodsets * nres */
    uint64_t avoid;
    char *why_msg; /* the QuotaReserved=False message now stored */
    /* quota held */
    int nuse;
    uint16_t use_fr[FQ_ADM_MAX_FLAVORS];
    int64_t use_amt[FQ_ADM_MAX_FLAVORS];
    uint64_t assigned_flv; /* bit per flavor of the current admission */
    bool waiting_check;    /* reserved, a check applies, none Ready yet */
    bool done;             /* handled in this cycle */
    bool parked;           /* in the inadmissible set (cycle only) */
    /* The decoded workload (borrowed from the cache for the run): a
     * pending workload's podsets are built only when it becomes a head. */
    const struct fq_workload *v;
    bool ps_ready;
    bool nom_fit;     /* nominated this cycle as a Fit */
    bool nom_borrows; /* ... and borrowing */
    /* Elastic slice (kueue_slices.c): the Workload it replaces (owned, or
     * NULL) and, while that one holds quota, its flavors and counts. */
    char *replaces;
    bool is_slice;
    int8_t slice_flv[FQ_ADM_MAX_PODSETS];
    int32_t slice_base[FQ_ADM_MAX_PODSETS];
};

static void wl_release(struct wl *w)
{
    free(w->ns);
    free(w->name);
    free(w->uid);
    for (int i = 0; i < w->npodsets; i++)
        free(w->psname[i]);
    free(w->req);
    free(w->why_msg);
    free(w->replaces);
}

static bool tolerated(const struct fq_taint *t, const struct fq_podspec *ps,
                      const struct fq_resourceflavor *f)
{
    if (t->effect == FQ_EFFECT_PREFER_NO_SCHEDULE)
        return true;
    for (size_t i = 0; i < ps->n_tolerations; i++)
        if (fq_toleration_tolerates(&ps->tolerations[i], t))
            return true;
    for (size_t i = 0; i < f->n_tolerations; i++)
        if (fq_toleration_tolerates(&f->tolerations[i], t))
            return true;
    return false;
}

static bool expr_matches(const struct fq_value *ex, const char *val)
{
    const char *op = fq_value_path_str(ex, "operator", "");
    const struct fq_value *vals = fq_map_get(ex, "values");
    bool in = false;
    for (size_t i = 0; val && i < fq_value_len(vals); i++)
        if (!strcmp(fq_value_as_str(fq_seq_at(vals, i)) ?
                        fq_value_as_str(fq_seq_at(vals, i)) :
                        "",
                    val))
            in = true;
    if (!strcmp(op, "In"))
        return in;
    if (!strcmp(op, "NotIn"))
        return !in;
    if (!strcmp(op, "Exists"))
        return val != NULL;
    if (!strcmp(op, "DoesNotExist"))
        return val == NULL;
    return true;
}

/* nodeSelector and required node affinity, on this flavor's label keys. */
static bool selector_ok(const struct fq_podspec *ps,
                        const struct fq_resourceflavor *f)
{
    for (size_t i = 0; i < ps->node_selector.n; i++) {
        const char *v =
            fq_kvs_get(&f->node_labels, ps->node_selector.items[i].key);
        if (v && strcmp(v, ps->node_selector.items[i].value))
            return false;
    }
    const struct fq_value *terms = fq_value_path(
        ps->affinity, "nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                      "Execution.nodeSelectorTerms");
    if (fq_value_len(terms) == 0)
        return true;
    for (size_t t = 0; t < fq_value_len(terms); t++) {
        const struct fq_value *exs =
            fq_map_get(fq_seq_at(terms, t), "matchExpressions");
        bool ok = true;
        for (size_t i = 0; i < fq_value_len(exs) && ok; i++) {
            const struct fq_value *ex = fq_seq_at(exs, i);
            const char *key = fq_value_path_str(ex, "key", "");
            bool has = false;
            for (size_t l = 0; l < f->node_labels.n; l++)
                if (!strcmp(f->node_labels.items[l].key, key))
                    has = true;
            if (!has)
                continue; /* only this flavor's keys are considered */
            ok = expr_matches(ex, fq_kvs_get(&f->node_labels, key));
        }
        if (ok)
            return true;
    }
    return false;
}

/* Parses "f=until,g=until" into a bit mask of flavors still cooling. */
static uint64_t avoid_mask(const struct fq_adm *a, const char *ann, int64_t now,
                           int64_t *next)
{
    uint64_t m = 0;
    if (!ann)
        return 0;
    char *dup = fq_xstrdup(ann), *save = NULL;
    for (char *tok = strtok_r(dup, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        while (*tok == ' ')
            tok++;
        int64_t until = parse_time(eq + 1, 0);
        int f = fq_adm_find_flavor(a, tok);
        if (f >= 0 && until > now) {
            m |= 1ull << f;
            if (until < *next)
                *next = until;
        }
    }
    free(dup);
    return m;
}

static int64_t queue_order_ts(const struct fq_value *obj,
                              const struct fq_engine_config *cfg)
{
    int64_t created = parse_time(
        fq_value_path_str(obj, "metadata.creationTimestamp", NULL), 0);
    const struct fq_value *ev = cond_find(obj, "Evicted");
    if (ev && !strcmp(fq_value_path_str(ev, "status", ""), "True")) {
        const char *r = fq_value_path_str(ev, "reason", "");
        if (!strcmp(r, "AdmissionCheck") ||
            (!strcmp(r, "PodsReadyTimeout") &&
             cfg->pods_ready.timestamp_eviction))
            return parse_time(fq_value_path_str(ev, "lastTransitionTime", NULL),
                              created);
    }
    return created;
}

/* Public for the visibility API (queue positions use the same order). */
int64_t fq_kueue_queue_order_ts(const struct fq_value *wl,
                                const struct fq_engine_config *cfg)
{
    return queue_order_ts(wl, cfg);
}

static int32_t priority_of(struct fq_engine *e, const struct fq_workload *v)
{
    if (v->has_priority)
        return (int32_t)v->priority;
    if (v->priority_class_name) {
        const struct fq_value *p = stored(e, FQ_KIND_WORKLOADPRIORITYCLASS, "",
                                          v->priority_class_name);
        if (p)
            return (int32_t)fq_value_path_int(p, "value", 0);
    }
    return 0;
}

/* Fills w's podsets from the decoded view (requests per resource index). */
static void wl_podsets(struct snap *s, struct wl *w,
                       const struct fq_workload *v)
{
    int nres = s->adm.nres > 0 ? s->adm.nres : 1;
    w->npodsets = (int)(v->n_podsets < FQ_ADM_MAX_PODSETS ? v->n_podsets :
                                                            FQ_ADM_MAX_PODSETS);
    w->req = fq_xcalloc((size_t)w->npodsets * (size_t)nres, sizeof(int64_t));
    for (int p = 0; p < w->npodsets; p++) {
        const struct fq_podset *ps = &v->podsets[p];
        struct fq_adm_podset *ap = &w->ps[p];
        w->psname[p] = fq_xstrdup(ps->name ? ps->name : "main");
        ap->name = w->psname[p];
        ap->count = (int32_t)ps->count;
        ap->min_count =
            ps->has_min_count ? (int32_t)ps->min_count : (int32_t)ps->count;
        ap->req = &w->req[p * nres];
        struct fq_resource rs[64];
        size_t nr = fq_podspec_requests(&ps->template.spec, rs, 64);
        if (nr > 64)
            nr = 64;
        for (size_t r = 0; r < nr; r++) {
            int ri = fq_adm_find_resource(&s->adm, rs[r].name);
            if (ri >= 0)
                w->req[p * nres + ri] = rs[r].value;
            else if (rs[r].value > 0)
                w->req[p * nres] += 0; /* not covered: see below */
        }
        if (s->have_pods_res) {
            int ri = fq_adm_find_resource(&s->adm, "pods");
            if (ri >= 0)
                w->req[p * nres + ri] = 1;
        }
        for (int f = 0; f < s->adm.nflv; f++) {
            if (!s->flv[f].exists)
                continue;
            const struct fq_resourceflavor *fv = &s->flv[f].view;
            if (selector_ok(&ps->template.spec, fv))
                ap->selector_ok |= 1ull << f;
            bool ok = true;
            for (size_t t = 0; t < fv->n_node_taints && ok; t++)
                ok = tolerated(&fv->node_taints[t], &ps->template.spec, fv);
            if (ok)
                ap->taint_ok |= 1ull << f;
        }
    }
}

/* Usage held by an admitted workload, from status.admission. */
static void wl_usage(struct snap *s, struct wl *w, const struct fq_workload *v)
{
    w->nuse = 0;
    w->assigned_flv = 0;
    for (size_t p = 0; p < v->n_assignments; p++) {
        const struct fq_podset_assignment *pa = &v->assignments[p];
        for (size_t r = 0; r < pa->resource_usage.n; r++) {
            const char *res = pa->resource_usage.items[r].name;
            const char *flv = fq_kvs_get(&pa->flavors, res);
            int ri = fq_adm_find_resource(&s->adm, res);
            int fi = flv ? fq_adm_find_flavor(&s->adm, flv) : -1;
            if (ri < 0 || fi < 0)
                continue;
            w->assigned_flv |= 1ull << fi;
            uint16_t fr = (uint16_t)(fi * s->adm.nres + ri);
            int k = 0;
            while (k < w->nuse && w->use_fr[k] != fr)
                k++;
            if (k == w->nuse) {
                if (w->nuse >= FQ_ADM_MAX_FLAVORS)
                    continue;
                w->use_fr[w->nuse] = fr;
                w->use_amt[w->nuse++] = 0;
            }
            w->use_amt[k] += pa->resource_usage.items[r].value;
        }
    }
}

/* --- transitions --------------------------------------------------------- */

/* Does check k of cq apply to a workload assigned `flv` (0 = no admission)? */
static bool check_applies(const struct snap *s, const struct cq_info *c,
                          const struct check_info *k, uint64_t flv)
{
    if (k->on_flv == 0)
        return true;
    if (flv == 0)
        return (c->all_flv & ~k->on_flv) == 0;
    (void)s;
    return (k->on_flv & flv) != 0;
}

/*
 * Brings status.admissionChecks in line with the checks that apply: new
 * ones Pending, ones that no longer apply removed.
 */
static void sync_checks(const struct snap *s, const struct cq_info *c,
                        struct fq_value *obj, uint64_t flv, int64_t now)
{
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    struct fq_value *old = fq_map_get(st, "admissionChecks");
    struct fq_value *nw = fq_value_seq();
    char ts[40];
    fmt_time(now, ts, sizeof(ts));
    for (int k = 0; c && k < c->nchecks; k++) {
        if (!check_applies(s, c, &c->checks[k], flv))
            continue;
        struct fq_value *found = NULL;
        for (size_t i = 0; i < fq_value_len(old); i++)
            if (!strcmp(fq_value_path_str(fq_seq_at(old, i), "name", ""),
                        c->checks[k].name))
                found = fq_seq_at(old, i);
        if (found) {
            fq_seq_push(nw, fq_value_clone(found));
            continue;
        }
        struct fq_value *ch = fq_value_map();
        fq_map_set(ch, "name", fq_value_str(c->checks[k].name));
        fq_map_set(ch, "state", fq_value_str("Pending"));
        fq_map_set(ch, "lastTransitionTime", fq_value_str(ts));
        fq_map_set(ch, "message", fq_value_str(""));
        fq_seq_push(nw, ch);
    }
    if (fq_value_len(nw) == 0 && !old) {
        fq_value_free(nw);
        return;
    }
    fq_map_set(st, "admissionChecks", nw);
}

/* Resets every non-Pending check to Pending, as Kueue does on eviction. */
static void reset_checks(struct fq_value *obj, int64_t now)
{
    struct fq_value *chs = fq_value_path(obj, "status.admissionChecks");
    char ts[40];
    fmt_time(now, ts, sizeof(ts));
    for (size_t i = 0; i < fq_value_len(chs); i++) {
        struct fq_value *ch = fq_seq_at(chs, i);
        const char *state = fq_value_path_str(ch, "state", "Pending");
        if (!strcmp(state, "Pending"))
            continue;
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "Reset to Pending after eviction. Previously: %s", state);
        if (!strcmp(state, "Retry"))
            fq_map_set(
                ch, "retryCount",
                fq_value_int(fq_value_path_int(ch, "retryCount", 0) + 1));
        fq_map_set(ch, "state", fq_value_str("Pending"));
        fq_map_set(ch, "lastTransitionTime", fq_value_str(ts));
        fq_map_set(ch, "message", fq_value_str(msg));
        fq_map_del(ch, "podSetUpdates");
    }
}

/*
 * Releases a workload's quota (the end of an eviction): admission cleared,
 * QuotaReserved/Admitted False, checks reset, Requeued set per the reason.
 */
static void release_quota(struct kueue *k, struct fq_engine *e,
                          const struct snap *s, struct fq_value *obj,
                          int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    const char *reason = cond_reason(obj, "Evicted");
    char *r = fq_xstrdup(reason);
    char *msg =
        fq_xstrdup(fq_value_path_str(cond_find(obj, "Evicted"), "message", ""));
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    fq_map_del(st, "admission");
    cond_set(obj, "QuotaReserved", "False", "PendingEvaluation",
             "The workload has no reservation", now);
    cond_set(obj, "Admitted", "False", "NoReservation",
             "The workload has no reservation", now);
    reset_checks(obj, now);
    /* Scoped checks no longer apply without an admission. */
    const char *cqn = fq_value_path_str(obj, "spec.queueName", "");
    (void)cqn;
    bool deactivated = !fq_value_path_bool(obj, "spec.active", true);
    if (deactivated) {
        cond_set(obj, "Requeued", "False", r, msg, now);
    } else if (!strcmp(r, "PodsReadyTimeout") || !strcmp(r, "AdmissionCheck")) {
        int64_t at = parse_time(
            fq_value_path_str(obj, "status.requeueState.requeueAt", NULL), 0);
        if (at > now) {
            cond_set(obj, "Requeued", "False", r, msg, now);
            if (at < k->timer)
                k->timer = at;
        } else {
            cond_set(obj, "Requeued", "True", "BackoffFinished",
                     "The workload backoff was finished", now);
        }
    } else {
        cond_set(obj, "Requeued", "True", r, msg, now);
    }
    (void)s;
    (void)cfg;
    k->requeue = true;
    k->stats.evictions++;
    free(r);
    free(msg);
}

/* Marks a workload for eviction (Evicted=True) with a reason. */
static void evict(struct fq_value *obj, const char *reason, const char *msg,
                  int64_t now)
{
    cond_set(obj, "Evicted", "True", reason, msg, now);
}

static void deactivate(struct fq_value *obj, const char *cause, const char *msg,
                       int64_t now)
{
    fq_value_set_path(obj, "spec.active", fq_value_bool(false));
    char reason[96];
    snprintf(reason, sizeof(reason), "DeactivatedDueTo%s", cause);
    cond_set(obj, "DeactivationTarget", "True", reason, msg, now);
    cond_set(obj, "Evicted", "True", reason, msg, now);
}

static int64_t backoff_ms(const struct fq_pods_ready_config *c, int64_t count)
{
    int64_t d = c->backoff_base_ms;
    for (int64_t i = 1; i < count && d < c->backoff_max_ms; i++)
        d *= 2;
    return d < c->backoff_max_ms ? d : c->backoff_max_ms;
}

/*
 * One workload's non-scheduling transitions (checks, eviction, backoff,
 * PodsReady timeout, deactivation). Edits obj; the caller commits.
 */
static void lifecycle(struct kueue *k, struct fq_engine *e, struct snap *s,
                      struct fq_value *obj, int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    if (cond_true(obj, "Finished"))
        return;
    bool active = fq_value_path_bool(obj, "spec.active", true);
    bool has_adm = fq_value_path(obj, "status.admission") != NULL;
    const char *cqname =
        fq_value_path_str(obj, "status.admission.clusterQueue", "");
    int ci = find_cq(s, cqname);
    struct cq_info *c = ci >= 0 ? &s->cqs[ci] : NULL;

    if (!active && !cond_true(obj, "Evicted") &&
        (has_adm || !cond_true(obj, "DeactivationTarget"))) {
        if (!cond_find(obj, "DeactivationTarget"))
            cond_set(obj, "Evicted", "True", "Deactivated",
                     "The workload is deactivated", now);
        else
            cond_set(obj, "Evicted", "True",
                     cond_reason(obj, "DeactivationTarget"),
                     fq_value_path_str(cond_find(obj, "DeactivationTarget"),
                                       "message", ""),
                     now);
    }
    if (active && cond_true(obj, "DeactivationTarget")) {
        /* A user set active=true again: Kueue's reactivation. */
        cond_set(obj, "DeactivationTarget", "False", "Reactivated",
                 "The workload was reactivated", now);
        cond_set(obj, "Requeued", "True", "Reactivated",
                 "The workload was reactivated", now);
        cond_clear(obj, "Evicted", "Reactivated",
                   "The workload was reactivated", now);
        fq_map_del(fq_map_ensure_map(obj, "status"), "requeueState");
        k->need_cycle = true;
    }

    if (has_adm && cond_true(obj, "Evicted")) {
        release_quota(k, e, s, obj, now);
        has_adm = false;
    }

    if (has_adm && cond_true(obj, "QuotaReserved")) {
        uint64_t flv = 0;
        const struct fq_value *psa =
            fq_value_path(obj, "status.admission.podSetAssignments");
        for (size_t i = 0; i < fq_value_len(psa); i++) {
            const struct fq_value *fl =
                fq_map_get(fq_seq_at(psa, i), "flavors");
            for (size_t j = 0; fl && fl->type == FQ_V_MAP && j < fl->u.map.n;
                 j++) {
                int f = fq_adm_find_flavor(
                    &s->adm, fq_value_as_str(fl->u.map.items[j].val) ?
                                 fq_value_as_str(fl->u.map.items[j].val) :
                                 "");
                if (f >= 0)
                    flv |= 1ull << f;
            }
        }
        sync_checks(s, c, obj, flv, now);
        /* Read the states. */
        struct fq_value *chs = fq_value_path(obj, "status.admissionChecks");
        bool all_ready = true, retry = false, rejected = false;
        const char *rname = NULL, *rmsg = NULL;
        int64_t requeue_at = 0;
        for (size_t i = 0; i < fq_value_len(chs); i++) {
            struct fq_value *ch = fq_seq_at(chs, i);
            const char *state = fq_value_path_str(ch, "state", "Pending");
            if (strcmp(state, "Ready"))
                all_ready = false;
            if (!strcmp(state, "Rejected")) {
                rejected = true;
                rname = fq_value_path_str(ch, "name", "");
                rmsg = fq_value_path_str(ch, "message", "");
            } else if (!strcmp(state, "Retry")) {
                retry = true;
                if (!rname) {
                    rname = fq_value_path_str(ch, "name", "");
                    rmsg = fq_value_path_str(ch, "message", "");
                }
                int64_t t = parse_time(
                    fq_value_path_str(ch, "lastTransitionTime", NULL), now);
                int64_t at =
                    t + fq_value_path_int(ch, "requeueAfterSeconds", 0) * 1000;
                if (at > requeue_at)
                    requeue_at = at;
            }
        }
        if (rejected) {
            char msg[512];
            snprintf(msg, sizeof(msg),
                     "The workload is deactivated due to AdmissionCheck "
                     "rejected: \"%s\" (%s)",
                     rname, rmsg);
            char *m = fq_xstrdup(msg);
            char *n = fq_xstrdup(rname);
            deactivate(obj, "AdmissionCheck", m, now);
            fq_engine_event(e, obj, "Warning", "AdmissionCheckRejected",
                            "Deactivating workload because AdmissionCheck for "
                            "%s was Rejected: %s",
                            n, m);
            release_quota(k, e, s, obj, now);
            free(m);
            free(n);
            return;
        }
        if (retry) {
            char msg[512];
            snprintf(msg, sizeof(msg),
                     "Evicted due to AdmissionCheck in Retry state: \"%s\" "
                     "(%s)",
                     rname, rmsg);
            char *m = fq_xstrdup(msg);
            if (requeue_at > now) {
                char ts[40];
                fmt_time(requeue_at, ts, sizeof(ts));
                struct fq_value *rs = fq_map_ensure_map(
                    fq_map_ensure_map(obj, "status"), "requeueState");
                fq_map_set(rs, "requeueAt", fq_value_str(ts));
            }
            if (cfg->policy.flavor_failure_cooldown) {
                /* Remember the flavors the failed check was on. */
                struct fq_buf b = FQ_BUF_INIT;
                const char *oldann = fq_value_path_str(
                    fq_value_path(obj, "metadata.annotations"),
                    FQ_KUEUE_AVOID_FLAVORS, NULL);
                const struct fq_value *ann =
                    fq_value_path(obj, "metadata.annotations");
                oldann = NULL;
                if (ann)
                    oldann = fq_value_as_str(
                        fq_map_get(ann, FQ_KUEUE_AVOID_FLAVORS));
                if (oldann && *oldann)
                    fq_buf_puts(&b, oldann);
                char until[40];
                fmt_time(now + cfg->policy.flavor_cooldown_ms, until,
                         sizeof(until));
                for (int f = 0; f < s->adm.nflv; f++) {
                    bool on = (flv >> f) & 1;
                    bool checked = false;
                    for (int kk = 0; c && kk < c->nchecks; kk++)
                        if (!strcmp(c->checks[kk].name, rname) &&
                            (c->checks[kk].on_flv == 0 ||
                             ((c->checks[kk].on_flv >> f) & 1)))
                            checked = true;
                    if (on && checked)
                        fq_buf_printf(&b, "%s%s=%s", b.len ? "," : "",
                                      s->adm.flv_names[f], until);
                }
                fq_map_set(fq_map_ensure_map(fq_map_ensure_map(obj, "metadata"),
                                             "annotations"),
                           FQ_KUEUE_AVOID_FLAVORS,
                           fq_value_str(fq_buf_str(&b)));
                fq_buf_release(&b);
            }
            evict(obj, "AdmissionCheck", m, now);
            fq_engine_event(e, obj, "Normal", "EvictedDueToAdmissionCheck",
                            "%s", m);
            release_quota(k, e, s, obj, now);
            free(m);
            return;
        }
        if (all_ready && !cond_true(obj, "Admitted")) {
            cond_set(obj, "Admitted", "True", "Admitted",
                     "The workload is admitted", now);
            int64_t rt =
                parse_time(fq_value_path_str(cond_find(obj, "QuotaReserved"),
                                             "lastTransitionTime", NULL),
                           now);
            fq_engine_event(e, obj, "Normal", "Admitted",
                            "Admitted by ClusterQueue %s, wait time since "
                            "reservation was %llds",
                            cqname, (long long)((now - rt) / 1000));
            k->stats.admissions++;
        } else if (!all_ready) {
            cond_set(obj, "Admitted", "False", "UnsatisfiedAdmissionChecks",
                     "The workload has not all admission checks ready", now);
        }
    }

    /* waitForPodsReady: counts from Admitted. */
    if (cfg->pods_ready.enable && cond_true(obj, "Admitted") &&
        !cond_true(obj, "PodsReady") && !cond_true(obj, "Evicted")) {
        int64_t at = parse_time(fq_value_path_str(cond_find(obj, "Admitted"),
                                                  "lastTransitionTime", NULL),
                                now);
        const struct fq_value *pr = cond_find(obj, "PodsReady");
        int64_t timeout = cfg->pods_ready.timeout_ms;
        if (pr &&
            !strcmp(fq_value_path_str(pr, "reason", ""), "WaitForRecovery")) {
            at = parse_time(fq_value_path_str(pr, "lastTransitionTime", NULL),
                            at);
            timeout = cfg->pods_ready.recovery_timeout_ms;
        }
        if (!pr)
            cond_set(obj, "PodsReady", "False", "WaitForStart",
                     "Not all pods are ready or succeeded", now);
        if (now >= at + timeout) {
            int64_t count =
                fq_value_path_int(obj, "status.requeueState.count", 0) + 1;
            char msg[300];
            snprintf(msg, sizeof(msg), "Exceeded the PodsReady timeout %s/%s",
                     fq_value_path_str(obj, "metadata.namespace", ""),
                     fq_value_path_str(obj, "metadata.name", ""));
            struct fq_value *rs = fq_map_ensure_map(
                fq_map_ensure_map(obj, "status"), "requeueState");
            fq_map_set(rs, "count", fq_value_int(count));
            int lim = cfg->pods_ready.backoff_limit_count;
            if (lim >= 0 && count > lim) {
                fq_map_del(rs, "requeueAt");
                deactivate(obj, "RequeuingLimitExceeded",
                           "The workload is deactivated due to exceeding the "
                           "maximum number of re-queuing retries",
                           now);
            } else {
                char ts[40];
                fmt_time(now + backoff_ms(&cfg->pods_ready, count), ts,
                         sizeof(ts));
                fq_map_set(rs, "requeueAt", fq_value_str(ts));
                evict(obj, "PodsReadyTimeout", msg, now);
            }
            fq_engine_event(e, obj, "Normal", "EvictedDueToPodsReadyTimeout",
                            "%s", msg);
            release_quota(k, e, s, obj, now);
            return;
        }
        if (at + timeout < k->timer)
            k->timer = at + timeout;
    }

    /* Backoff over: Requeued=True. */
    if (!fq_value_path(obj, "status.admission") && active) {
        const struct fq_value *rq = cond_find(obj, "Requeued");
        if (rq && !strcmp(fq_value_path_str(rq, "status", ""), "False")) {
            int64_t at = parse_time(
                fq_value_path_str(obj, "status.requeueState.requeueAt", NULL),
                0);
            if (at <= now) {
                cond_set(obj, "Requeued", "True", "BackoffFinished",
                         "The workload backoff was finished", now);
                struct fq_value *rs = fq_value_path(obj, "status.requeueState");
                if (rs)
                    fq_map_del(rs, "requeueAt");
                k->need_cycle = true;
            } else if (at < k->timer) {
                k->timer = at;
            }
        }
    }
}

/* --- the scheduling cycle --------------------------------------------- */

static int wl_cmp(const void *x, const void *y)
{
    const struct wl *a = *(struct wl *const *)x;
    const struct wl *b = *(struct wl *const *)y;
    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    if (a->qts != b->qts)
        return a->qts < b->qts ? -1 : 1;
    int c = strcmp(a->ns, b->ns);
    if (c)
        return c;
    return strcmp(a->name, b->name);
}

/* Kueue's entry order within a cycle (makeClassicalIterator). */
static int entry_cmp(const void *x, const void *y)
{
    const struct wl *a = *(struct wl *const *)x;
    const struct wl *b = *(struct wl *const *)y;
    if (a->nom_borrows != b->nom_borrows)
        return a->nom_borrows ? 1 : -1;
    return wl_cmp(x, y);
}

static void fmt_qty(const char *res, int64_t v, char *buf, size_t n)
{
    enum fq_qformat f = FQ_QF_DECIMAL_SI;
    if (!strcmp(res, "memory") || strstr(res, "storage"))
        f = FQ_QF_BINARY_SI;
    fq_quantity_format(v, fq_quantity_scale_for(res), f, buf, n);
}

/* Writes status.admission and QuotaReserved (and Admitted without checks). */
static void reserve(struct kueue *k, struct fq_engine *e, struct snap *s,
                    struct wl *w, const struct fq_adm_result *r, int64_t now,
                    const char *how)
{
    k->quota_moved = true;
    struct cq_info *c = &s->cqs[w->cq];
    struct fq_value *obj =
        fq_objstore_edit(fq_engine_store(e), FQ_KIND_WORKLOAD, w->ns, w->name);
    if (!obj)
        return;
    struct fq_value *adm = fq_value_map();
    fq_map_set(adm, "clusterQueue", fq_value_str(c->name));
    struct fq_value *psa = fq_value_seq();
    uint64_t flv = 0;
    for (int p = 0; p < w->npodsets; p++) {
        struct fq_value *a = fq_value_map();
        fq_map_set(a, "name", fq_value_str(w->psname[p]));
        struct fq_value *fl = fq_value_map();
        struct fq_value *ru = fq_value_map();
        for (int res = 0; res < s->adm.nres; res++) {
            int f = r->flv[p][res];
            if (f < 0)
                continue;
            flv |= 1ull << f;
            fq_map_set(fl, s->adm.res_names[res],
                       fq_value_str(s->adm.flv_names[f]));
            char q[48];
            int64_t amt = w->ps[p].req[res] * r->count[p];
            fmt_qty(s->adm.res_names[res], amt, q, sizeof(q));
            fq_map_set(ru, s->adm.res_names[res], fq_value_str(q));
        }
        fq_map_set(a, "flavors", fl);
        fq_map_set(a, "resourceUsage", ru);
        fq_map_set(a, "count", fq_value_int(r->count[p]));
        fq_seq_push(psa, a);
    }
    fq_map_set(adm, "podSetAssignments", psa);
    fq_map_set(fq_map_ensure_map(obj, "status"), "admission", adm);
    char msg[512];
    snprintf(msg, sizeof(msg), "Quota reserved in ClusterQueue %s", c->name);
    cond_set(obj, "QuotaReserved", "True", "QuotaReserved", msg, now);
    cond_clear(obj, "Evicted", "QuotaReserved", "Previously: evicted", now);
    cond_clear(obj, "Preempted", "QuotaReserved", "Previously: preempted", now);
    /* Checks that apply to the assigned flavors. */
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    struct fq_value *chs = fq_map_get(st, "admissionChecks");
    (void)chs;
    sync_checks(s, c, obj, flv, now);
    bool checks =
        fq_value_len(fq_value_path(obj, "status.admissionChecks")) > 0;
    bool ready = true;
    const struct fq_value *cl = fq_value_path(obj, "status.admissionChecks");
    for (size_t i = 0; i < fq_value_len(cl); i++)
        if (strcmp(fq_value_path_str(fq_seq_at(cl, i), "state", ""), "Ready"))
            ready = false;
    if (!checks || ready)
        cond_set(obj, "Admitted", "True", "Admitted",
                 "The workload is admitted", now);
    else
        cond_set(obj, "Admitted", "False", "UnsatisfiedAdmissionChecks",
                 "The workload has not all admission checks ready", now);
    commit(e, obj);
    const struct fq_value *so = stored(e, FQ_KIND_WORKLOAD, w->ns, w->name);
    /* The "Flavors considered" part of Kueue's event, shortened. */
    struct fq_buf b = FQ_BUF_INIT;
    for (int p = 0; p < w->npodsets; p++) {
        fq_buf_printf(&b, "%s%s: ", p ? ", " : "", w->psname[p]);
        bool first = true;
        for (int res = 0; res < s->adm.nres; res++) {
            int f = r->flv[p][res];
            if (f < 0)
                continue;
            fq_buf_printf(&b, "%s%s=%s", first ? "" : " ",
                          s->adm.res_names[res], s->adm.flv_names[f]);
            first = false;
        }
    }
    fq_engine_event(e, so ? so : obj, "Normal", "QuotaReserved",
                    "Quota reserved in ClusterQueue %s, wait time since queued "
                    "was %llds; Flavors considered: %s%s",
                    c->name, (long long)((now - w->qts) / 1000), fq_buf_str(&b),
                    how ? how : "");
    w->admitted = !checks || ready;
    if (!checks || ready) {
        fq_engine_event(e, so ? so : obj, "Normal", "Admitted",
                        "Admitted by ClusterQueue %s, wait time since "
                        "reservation was 0s",
                        c->name);
        k->stats.admissions++;
    }
    fq_buf_release(&b);
    k->stats.reservations++;
    /* The snapshot follows: charge the usage. */
    fq_adm_charge(&s->adm, c->adm, r->nuse, r->use_fr, r->use_amt, +1);
    w->holds = true;
    w->pending = false;
    w->nuse = r->nuse;
    memcpy(w->use_fr, r->use_fr, sizeof(w->use_fr));
    memcpy(w->use_amt, r->use_amt, sizeof(w->use_amt));
}

/* Writes QuotaReserved=False with a reason and message, when it changed. */
/*
 * cond_set() on a stored workload, writing status.conditions alone (no
 * copy of the whole object); true when it changed.
 */
static bool cond_write(struct fq_engine *e, const char *ns, const char *name,
                       const char *type, const char *status, const char *reason,
                       const char *msg, int64_t now)
{
    struct fq_objstore *st = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, name);
    if (!o)
        return false;
    struct fq_value *shell = fq_value_map();
    const struct fq_value *gen = fq_value_path(o->obj, "metadata.generation");
    if (gen)
        fq_map_set(fq_map_ensure_map(shell, "metadata"), "generation",
                   fq_value_clone(gen));
    const struct fq_value *oc = fq_value_path(o->obj, "status.conditions");
    if (oc)
        fq_map_set(fq_map_ensure_map(shell, "status"), "conditions",
                   fq_value_clone(oc));
    cond_set(shell, type, status, reason, msg, now);
    bool changed = false;
    fq_objstore_set_status_key(
        st, FQ_KIND_WORKLOAD, ns, name, "conditions",
        fq_value_clone(fq_value_path(shell, "status.conditions")), &changed,
        NULL);
    fq_value_free(shell);
    return changed;
}

static void set_pending(struct kueue *k, struct fq_engine *e, struct wl *w,
                        const char *reason, const char *msg, int64_t now)
{
    if (w->why_msg && !strcmp(w->why_msg, msg))
        return;
    if (cond_write(e, w->ns, w->name, "QuotaReserved", "False", reason, msg,
                   now)) {
        const struct fq_object *o = fq_objstore_get(
            fq_engine_store(e), FQ_KIND_WORKLOAD, w->ns, w->name);
        if (o) {
            fq_engine_event(e, o->obj, "Warning", reason, "%s", msg);
            /* Our own message: the kept workloads stay valid (w is one). */
            char key[600];
            wl_key(w->ns, w->name, key, sizeof(key));
            fq_smap_put(&k->own, key, (void *)(uintptr_t)o->rv);
        }
    }
    free(w->why_msg);
    w->why_msg = fq_xstrdup(msg);
}

static void preempt(struct kueue *k, struct fq_engine *e, struct wl *victim,
                    const struct wl *by, int reason, int64_t now)
{
    k->quota_moved = true;
    struct fq_value *obj = fq_objstore_edit(
        fq_engine_store(e), FQ_KIND_WORKLOAD, victim->ns, victim->name);
    if (!obj)
        return;
    const char *why = reason == FQ_ADM_IN_CLUSTER_QUEUE ?
                          "prioritization in the ClusterQueue" :
                      reason == FQ_ADM_IN_COHORT_RECLAMATION ?
                          "reclamation within the cohort" :
                          "reclamation within the cohort while borrowing";
    char msg[512];
    snprintf(msg, sizeof(msg),
             "Preempted to accommodate a workload (UID: %s) due to %s",
             by->uid ? by->uid : "", why);
    evict(obj, "Preempted", msg, now);
    cond_set(obj, "Preempted", "True", fq_adm_preempt_reason_str(reason), msg,
             now);
    commit(e, obj);
    const struct fq_value *so =
        stored(e, FQ_KIND_WORKLOAD, victim->ns, victim->name);
    if (so) {
        fq_engine_event(e, so, "Normal", "Preempted", "%s", msg);
        fq_engine_event(e, so, "Normal", "EvictedDueToPreempted", "%s", msg);
    }
    victim->evicting = true;
    k->stats.preemptions++;
}

/* Builds the adm view of a workload. */
/* A head's podsets, built on first need (most pending workloads of a
 * deep queue are never a head in a run). */
static void head_podsets(struct snap *s, struct wl *w)
{
    if (w->ps_ready || !w->v)
        return;
    wl_podsets(s, w, w->v);
    w->ps_ready = true;
}

static void adm_wl(const struct wl *w, struct fq_adm_wl *aw, bool cooldown)
{
    memset(aw, 0, sizeof(*aw));
    aw->cq = -1;
    aw->priority = w->prio;
    aw->ts = w->qts;
    aw->npodsets = w->npodsets;
    aw->ps = w->ps;
    aw->avoid_flv = cooldown ? w->avoid : 0;
    if (w->is_slice) {
        aw->forced_flv = w->slice_flv;
        aw->base_count = w->slice_base;
    }
}

/* Policy (b): a reserved workload waiting on a check of a later flavor moves
 * to an earlier flavor that now fits. Returns true when it moved. */
static bool try_migrate(struct kueue *k, struct fq_engine *e, struct snap *s,
                        struct wl *w, struct fq_adm_holder *hs, int nh,
                        int64_t now)
{
    struct cq_info *c = &s->cqs[w->cq];
    struct fq_adm_cq *ac = &s->adm.cqs[c->adm];
    /* Flavors at or after the latest assigned one, per group, are skipped. */
    uint64_t skip = 0;
    for (int g = 0; g < ac->ngroups; g++) {
        const struct fq_adm_group *grp = &ac->groups[g];
        int last = -1;
        for (int i = 0; i < grp->nflv; i++)
            if ((w->assigned_flv >> grp->flv[i]) & 1)
                last = i;
        if (last < 0)
            continue;
        for (int i = last; i < grp->nflv; i++)
            skip |= 1ull << grp->flv[i];
    }
    /* Only when the current flavors carry a pending check. */
    struct fq_adm_wl aw;
    adm_wl(w, &aw, false);
    aw.cq = c->adm;
    aw.skip_flv = skip;
    /* A flavor in its failure cool-down is no better than where it is. */
    if (fq_engine_config(e)->policy.flavor_failure_cooldown)
        aw.skip_flv |= w->avoid;
    fq_adm_charge(&s->adm, c->adm, w->nuse, w->use_fr, w->use_amt, -1);
    struct fq_adm_result r;
    fq_adm_assign(&s->adm, &aw, hs, 0, &r);
    (void)nh;
    bool moved = false;
    if (r.mode == FQ_ADM_FIT) {
        w->holds = false;
        reserve(k, e, s, w, &r, now, " (moved to a preferred flavor)");
        k->stats.migrations++;
        moved = true;
    } else {
        fq_adm_charge(&s->adm, c->adm, w->nuse, w->use_fr, w->use_amt, +1);
    }
    fq_adm_result_release(&r);
    return moved;
}

static bool ns_matches(struct fq_engine *e, const struct cq_info *c,
                       const char *ns)
{
    if (!c->view.namespace_selector.present)
        return false;
    struct fq_kv kv[65];
    size_t n = 0;
    kv[n].key = "kubernetes.io/metadata.name";
    kv[n++].value = ns;
    const struct fq_value *o = stored(e, FQ_KIND_NAMESPACE, "", ns);
    const struct fq_value *labels = fq_value_path(o, "metadata.labels");
    for (size_t i = 0;
         labels && labels->type == FQ_V_MAP && i < labels->u.map.n && n < 65;
         i++) {
        const char *v = fq_value_as_str(labels->u.map.items[i].val);
        if (!v)
            continue;
        kv[n].key = labels->u.map.items[i].key;
        kv[n++].value = v;
    }
    struct fq_kvs kvs = {kv, n};
    return fq_selector_matches(&c->view.namespace_selector, &kvs);
}

static void cycle(struct kueue *k, struct fq_engine *e, struct snap *s,
                  struct wl *ws, size_t nw, int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    int limit = cfg->policy.max_admissions_per_cq_per_cycle;
    bool cooldown = cfg->policy.flavor_failure_cooldown;
    k->need_cycle = false;

    /* Holders, for preemption. */
    struct fq_adm_holder *hs = fq_xcalloc(nw + 1, sizeof(*hs));
    struct wl **hw = fq_xcalloc(nw + 1, sizeof(*hw));
    int nh = 0;
    for (size_t i = 0; i < nw; i++) {
        if (!ws[i].holds || ws[i].cq < 0)
            continue;
        struct fq_adm_holder *h = &hs[nh];
        h->cq = s->cqs[ws[i].cq].adm;
        h->priority = ws[i].prio;
        h->ts = ws[i].qts;
        h->reserved_at = ws[i].reserved_at;
        h->evicting = ws[i].evicting;
        h->nuse = ws[i].nuse;
        h->use_fr = ws[i].use_fr;
        h->use_amt = ws[i].use_amt;
        hw[nh++] = &ws[i];
    }

    /* Policy (b) first: moves free the later flavor for others. */
    if (cfg->policy.migrate_to_preferred_flavor) {
        for (size_t i = 0; i < nw; i++)
            if (ws[i].holds && ws[i].waiting_check && ws[i].cq >= 0 &&
                !ws[i].evicting && s->cqs[ws[i].cq].active)
                try_migrate(k, e, s, &ws[i], hs, nh, now);
    }

    /* Queues: pending workloads per CQ, in Kueue's heap order, with each
     * marked parked; kept with the workloads for the next cycle (where
     * order and parked marks are still true: nothing else changed). */
    if (!k->ord) {
        free(k->ord);
        free(k->byq);
        free(k->qstart);
        k->ord = fq_xcalloc(nw + 1, sizeof(*k->ord));
        k->nord = 0;
        for (size_t i = 0; i < nw; i++)
            if (ws[i].pending && ws[i].cq >= 0)
                k->ord[k->nord++] = &ws[i];
        qsort(k->ord, k->nord, sizeof(*k->ord), wl_cmp);
        /* Each queue's pending workloads in that order. */
        k->qstart = fq_xcalloc((size_t)s->ncq + 2, sizeof(size_t));
        for (size_t i = 0; i < k->nord; i++) {
            char key[600];
            wl_key(k->ord[i]->ns, k->ord[i]->name, key, sizeof(key));
            k->ord[i]->parked = fq_smap_has(&k->inadmissible, key);
            k->qstart[k->ord[i]->cq + 1]++;
        }
        for (int c = 0; c < s->ncq; c++)
            k->qstart[c + 1] += k->qstart[c];
        k->byq = fq_xcalloc(k->nord + 1, sizeof(*k->byq));
        size_t *at = fq_xcalloc((size_t)s->ncq + 1, sizeof(size_t));
        for (int c = 0; c < s->ncq; c++)
            at[c] = k->qstart[c];
        for (size_t i = 0; i < k->nord; i++)
            k->byq[at[k->ord[i]->cq]++] = k->ord[i];
        free(at);
    }
    struct wl **order = k->ord, **byq = k->byq;
    size_t no = k->nord, *qstart = k->qstart;
    /* A cursor per queue past those that cannot be its head any more in
     * this cycle (handled or parked): a deep queue of parked workloads is
     * walked once per cycle, not once per round. */
    size_t *cur = fq_xcalloc((size_t)s->ncq + 1, sizeof(size_t));
    for (int c = 0; c < s->ncq; c++)
        cur[c] = qstart[c];
    int *taken = fq_xcalloc((size_t)s->ncq + 1, sizeof(int));
    bool *blocked = fq_xcalloc((size_t)s->ncq + 1, sizeof(bool));
    bool progress = true;
    while (progress) {
        progress = false;
        /* One head per CQ per round; heads ordered as Kueue's iterator
         * does (non-borrowing first, then priority, then FIFO). */
        struct wl **heads = fq_xcalloc((size_t)s->ncq + 1, sizeof(*heads));
        int nheads = 0;
        for (int c = 0; c < s->ncq; c++) {
            if (blocked[c] || !s->cqs[c].active)
                continue;
            if (limit > 0 && taken[c] >= limit)
                continue;
            bool strict =
                s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO;
            for (; cur[c] < qstart[c + 1]; cur[c]++) {
                struct wl *w = byq[cur[c]];
                if (w->done)
                    continue;
                if (w->parked) {
                    if (strict) {
                        /* A parked head blocks a StrictFIFO queue. */
                        blocked[c] = true;
                        break;
                    }
                    continue;
                }
                heads[nheads++] = w;
                break;
            }
        }
        /* Nominate every head against the snapshot, then process them
         * in Kueue's order: non-borrowing first, priority, FIFO. */
        for (int h = 0; h < nheads; h++) {
            struct wl *w = heads[h];
            head_podsets(s, w);
            struct fq_adm_wl aw;
            adm_wl(w, &aw, cooldown);
            aw.cq = s->cqs[w->cq].adm;
            struct fq_adm_result r;
            fq_adm_assign(&s->adm, &aw, hs, nh, &r);
            w->nom_fit = r.mode == FQ_ADM_FIT;
            w->nom_borrows = r.borrows;
            fq_adm_result_release(&r);
        }
        qsort(heads, (size_t)nheads, sizeof(*heads), entry_cmp);
        for (int h = 0; h < nheads; h++) {
            struct wl *w = heads[h];
            struct cq_info *c = &s->cqs[w->cq];
            bool strict = s->adm.cqs[c->adm].strategy == FQ_ADM_STRICT_FIFO;
            char key[600];
            wl_key(w->ns, w->name, key, sizeof(key));
            w->done = true;
            taken[w->cq]++;
            progress = true;
            struct fq_adm_wl aw;
            adm_wl(w, &aw, cooldown);
            aw.cq = c->adm;
            struct fq_adm_result r;
            fq_adm_assign(&s->adm, &aw, hs, nh, &r);
            /* A slice never preempts the slice it replaces. */
            for (int t = 0;
                 w->replaces && r.mode == FQ_ADM_PREEMPT && t < r.ntargets; t++)
                if (!strcmp(hw[r.targets[t]]->name, w->replaces) &&
                    !strcmp(hw[r.targets[t]]->ns, w->ns))
                    r.mode = FQ_ADM_NO_CANDIDATES;
            if (r.mode == FQ_ADM_FIT) {
                reserve(k, e, s, w, &r, now, NULL);
                if (w->replaces)
                    fq_kueue_slice_replaced(e, w->ns, w->replaces, w->name,
                                            now);
                /* It now holds quota: a possible target for later heads. */
                struct fq_adm_holder *nhd = &hs[nh];
                nhd->cq = c->adm;
                nhd->priority = w->prio;
                nhd->ts = w->qts;
                nhd->reserved_at = now;
                nhd->nuse = w->nuse;
                nhd->use_fr = w->use_fr;
                nhd->use_amt = w->use_amt;
                hw[nh++] = w;
                fq_smap_del(&k->inadmissible, key);
                w->parked = false;
            } else if (r.mode == FQ_ADM_PREEMPT && r.ntargets > 0) {
                int fresh = 0;
                for (int t = 0; t < r.ntargets; t++) {
                    struct wl *v = hw[r.targets[t]];
                    if (!v->evicting) {
                        preempt(k, e, v, w, r.target_reason[t], now);
                        hs[r.targets[t]].evicting = true;
                        fresh++;
                    }
                }
                char msg[FQ_ADM_MSG_MAX + 64];
                snprintf(msg, sizeof(msg),
                         "%s%sPending the preemption of %d workload(s)", r.msg,
                         r.msg[0] ? ". " : "", r.ntargets);
                set_pending(k, e, w, "WaitingForPreemptedWorkloads", msg, now);
                (void)fresh;
                /* Stays at the head: retried next cycle. */
                k->need_cycle = true;
                blocked[w->cq] = true;
            } else if (w->nom_fit) {
                /* Another head took the room first: retry next cycle. */
                set_pending(k, e, w, "Pending",
                            "Workload no longer fits after processing "
                            "another workload",
                            now);
                k->need_cycle = true;
            } else {
                set_pending(k, e, w, fq_adm_why_reason(r.why), r.msg, now);
                fq_smap_add(&k->inadmissible, key);
                w->parked = true;
                if (strict)
                    blocked[w->cq] = true;
            }
            fq_adm_result_release(&r);
        }
        free(heads);
        /* Kueue: one pop per CQ per cycle. */
        if (limit == 1)
            break;
    }
    /* A cycle that tried no head took no time (Kueue's scheduler sleeps
     * until a queue has a head). */
    bool tried = false;
    for (size_t i = 0; i < no; i++)
        tried |= order[i]->done;
    if (tried) {
        k->stats.cycles++;
        k->last_cycle = now;
    }
    /* Another cycle if some queue still has a head to try. */
    for (size_t i = 0; tried && i < no; i++) {
        struct wl *w = order[i];
        if (w->done || blocked[w->cq] || !s->cqs[w->cq].active)
            continue;
        if (!w->parked) {
            k->need_cycle = true;
            break;
        }
    }
    free(cur);
    free(taken);
    free(blocked);
    free(hs);
    free(hw);
}

/* --- ClusterQueue / LocalQueue status ---------------------------------- */

static void write_queue_status(struct fq_engine *e, struct snap *s,
                               struct wl *ws, size_t nw)
{
    for (size_t i = 0; i < nw; i++) {
        struct wl *w = &ws[i];
        if (w->cq < 0)
            continue;
        struct cq_info *c = &s->cqs[w->cq];
        if (w->holds) {
            c->reserving++;
            if (w->lq)
                w->lq->reserving++;
            if (w->admitted) {
                c->admitted++;
                if (w->lq)
                    w->lq->admitted++;
            }
        } else if (w->pending) {
            c->pending++;
            if (w->lq)
                w->lq->pending++;
        }
    }
    /* Usage of admitted workloads per ClusterQueue and (flavor, resource). */
    size_t ncell = (size_t)(s->adm.nflv * s->adm.nres);
    int64_t *adm_use = fq_xcalloc((size_t)s->ncq * ncell + 1, sizeof(int64_t));
    for (size_t i = 0; i < nw; i++) {
        const struct wl *w = &ws[i];
        if (w->cq < 0 || !w->holds || !w->admitted)
            continue;
        for (int u = 0; u < w->nuse; u++)
            if (w->use_fr[u] < ncell)
                adm_use[(size_t)w->cq * ncell + w->use_fr[u]] += w->use_amt[u];
    }
    for (int i = 0; i < s->ncq; i++) {
        struct cq_info *c = &s->cqs[i];
        const struct fq_value *cur =
            stored(e, FQ_KIND_CLUSTERQUEUE, "", c->name);
        if (!cur)
            continue;
        struct fq_value *st = fq_value_map();
        struct fq_value *conds = fq_value_seq();
        const struct fq_value *old = cond_find(cur, "Active");
        struct fq_value *cd = fq_value_map();
        const char *status = c->active ? "True" : "False";
        fq_map_set(cd, "type", fq_value_str("Active"));
        fq_map_set(cd, "status", fq_value_str(status));
        char ts[40];
        fmt_time(fq_engine_now(e), ts, sizeof(ts));
        if (old && !strcmp(fq_value_path_str(old, "status", ""), status))
            fq_map_set(
                cd, "lastTransitionTime",
                fq_value_str(fq_value_path_str(old, "lastTransitionTime", ts)));
        else
            fq_map_set(cd, "lastTransitionTime", fq_value_str(ts));
        fq_map_set(cd, "reason",
                   fq_value_str(c->active ? "Ready" : c->inactive_reason));
        fq_map_set(cd, "message",
                   fq_value_str(c->active ? "Can admit new workloads" :
                                            c->inactive_msg));
        fq_seq_push(conds, cd);
        fq_map_set(st, "conditions", conds);
        fq_map_set(st, "pendingWorkloads", fq_value_int(c->pending));
        fq_map_set(st, "reservingWorkloads", fq_value_int(c->reserving));
        fq_map_set(st, "admittedWorkloads", fq_value_int(c->admitted));
        /* flavorsReservation (reserved) and flavorsUsage (admitted):
         * total and borrowed per flavor/resource. */
        const struct fq_adm_cq *ac = &s->adm.cqs[c->adm];
        const struct fq_adm_node *node = &s->adm.nodes[ac->node];
        for (int kind = 0; kind < 2; kind++) {
            struct fq_value *fr = fq_value_seq();
            for (int g = 0; g < ac->ngroups; g++) {
                for (int fi = 0; fi < ac->groups[g].nflv; fi++) {
                    int f = ac->groups[g].flv[fi];
                    struct fq_value *fe = fq_value_map();
                    fq_map_set(fe, "name", fq_value_str(s->adm.flv_names[f]));
                    struct fq_value *rs = fq_value_seq();
                    for (int r = 0; r < s->adm.nres; r++) {
                        if (!(ac->groups[g].res_mask & (1u << r)))
                            continue;
                        const struct fq_adm_cell *cell =
                            &node->cells[f * s->adm.nres + r];
                        struct fq_value *re = fq_value_map();
                        char q[48];
                        fq_map_set(re, "name",
                                   fq_value_str(s->adm.res_names[r]));
                        int64_t used =
                            kind == 0 ? cell->usage :
                                        adm_use[(size_t)i * ncell +
                                                (size_t)(f * s->adm.nres + r)];
                        fmt_qty(s->adm.res_names[r], used, q, sizeof(q));
                        fq_map_set(re, "total", fq_value_str(q));
                        int64_t b = used - cell->nominal;
                        fmt_qty(s->adm.res_names[r], b > 0 ? b : 0, q,
                                sizeof(q));
                        fq_map_set(re, "borrowed", fq_value_str(q));
                        fq_seq_push(rs, re);
                    }
                    fq_map_set(fe, "resources", rs);
                    fq_seq_push(fr, fe);
                }
            }
            fq_map_set(st, kind == 0 ? "flavorsReservation" : "flavorsUsage",
                       fr);
        }
        /* Keep what the capacity controller writes here (cost.c). */
        const struct fq_value *cost = fq_value_path(cur, "status.cost");
        if (cost)
            fq_map_set(st, "cost", fq_value_clone(cost));
        if (!fq_value_equal(st, fq_map_get(cur, "status")))
            fq_objstore_set_status(fq_engine_store(e), FQ_KIND_CLUSTERQUEUE, "",
                                   c->name, st, NULL);
        else
            fq_value_free(st);
    }
    free(adm_use);
    for (int i = 0; i < s->nlq; i++) {
        struct lq_info *l = &s->lqs[i];
        const struct fq_value *cur =
            stored(e, FQ_KIND_LOCALQUEUE, l->ns, l->name);
        if (!cur)
            continue;
        struct fq_value *st = fq_value_map();
        fq_map_set(st, "pendingWorkloads", fq_value_int(l->pending));
        fq_map_set(st, "reservingWorkloads", fq_value_int(l->reserving));
        fq_map_set(st, "admittedWorkloads", fq_value_int(l->admitted));
        if (!fq_value_equal(st, fq_map_get(cur, "status")))
            fq_objstore_set_status(fq_engine_store(e), FQ_KIND_LOCALQUEUE,
                                   l->ns, l->name, st, NULL);
        else
            fq_value_free(st);
    }
}

/* --- the controller ------------------------------------------------------ */

static void *create(struct fq_engine *e)
{
    struct kueue *k = fq_xcalloc(1, sizeof(*k));
    k->cycle_ms = fq_engine_config(e)->policy.cycle_ms;
    if (k->cycle_ms < 0)
        k->cycle_ms = 0;
    k->last_cycle = INT64_MIN / 2;
    k->timer = FQ_NEVER;
    k->need_cycle = true;
    k->cache.free_val = wcache_free;
    return k;
}

/* Forgets the kept workloads and snapshot (see struct kueue). */
static void drop_kept(struct kueue *k)
{
    if (k->snap) {
        for (size_t i = 0; i < k->nw; i++)
            wl_release(&k->ws[i]);
        free(k->ws);
        snap_release(k->snap);
        free(k->snap);
    }
    k->ws = NULL;
    k->nw = 0;
    k->snap = NULL;
    free(k->ord);
    free(k->byq);
    free(k->qstart);
    k->ord = k->byq = NULL;
    k->qstart = NULL;
    k->nord = 0;
    fq_smap_clear(&k->own);
}

static void destroy(void *self)
{
    struct kueue *k = self;
    fq_smap_free(&k->inadmissible);
    fq_smap_free(&k->seen_gen);
    fq_smap_free(&k->cache);
    fq_smap_free(&k->dirty);
    fq_smap_free(&k->live);
    lk_free(k);
    drop_kept(k);
    fq_smap_free(&k->own);
    fq_smap_free(&k->inert);
    free(k);
}

static void on_change(void *self, struct fq_engine *e,
                      const struct fq_change *c)
{
    struct kueue *k = self;
    bool was_live = false;
    if (c->kind != FQ_KIND_WORKLOAD && c->obj) {
        /* Status-only writes (ours) keep the generation: not a change of
         * capacity or configuration. */
        char key[700];
        snprintf(
            key, sizeof(key), "%d/%s/%s@%lld", (int)c->kind, c->ns, c->name,
            (long long)fq_value_path_int(c->obj, "metadata.generation", 0));
        if (fq_smap_has(&k->seen_gen, key))
            return;
        fq_smap_add(&k->seen_gen, key);
        drop_kept(k); /* configuration: decode everything again */
    }
    if (c->kind != FQ_KIND_WORKLOAD && k->inert.n > 0) {
        /* A LocalQueue may have appeared: look at them all again. */
        for (size_t i = 0; i < k->inert.cap; i++)
            if (k->inert.t[i].key)
                live_add(k, k->inert.t[i].key);
        fq_smap_clear(&k->inert);
    }
    if (c->kind == FQ_KIND_WORKLOAD) {
        char key[600];
        wl_key(c->ns, c->name, key, sizeof(key));
        uintptr_t mine = (uintptr_t)fq_smap_get(&k->own, key);
        if (k->snap &&
            !(c->type == FQ_CHANGE_MODIFIED && mine && mine == c->rev))
            drop_kept(k);
        was_live = fq_smap_has(&k->live, key) || fq_smap_has(&k->inert, key);
        fq_smap_del(&k->inert, key);
        if (c->type == FQ_CHANGE_DELETED ||
            (c->obj && cond_true(c->obj, "Finished"))) {
            live_del(k, key);
            fq_smap_del(&k->cache, key); /* gone or finished */
        } else if (c->obj) {
            live_add(k, key);
        }
    }
    k->need_cycle = true;
    if (c->kind != FQ_KIND_WORKLOAD) {
        k->requeue = true;
    } else if (c->type == FQ_CHANGE_DELETED ||
               (c->obj && cond_true(c->obj, "Finished"))) {
        /* Leaving the live set frees what it held; a finished workload
         * being deleted, or written again, frees nothing more. */
        if (was_live)
            k->requeue = true;
    } else if (c->obj) {
        /* A changed workload gets a fresh chance. */
        char key[600];
        wl_key(c->ns, c->name, key, sizeof(key));
        fq_smap_add(&k->dirty, key);
        if (fq_smap_has(&k->inadmissible, key) &&
            !cond_find(c->obj, "QuotaReserved"))
            fq_smap_del(&k->inadmissible, key);
    }
    fq_engine_kick(e, self);
}

/*
 * Whether lifecycle() may have something to do for this workload: most
 * workloads (pending without backoff, admitted and running) have nothing,
 * and skipping them spares a deep copy per workload per run.
 */
static bool needs_lifecycle(const struct fq_value *obj,
                            const struct fq_engine_config *cfg)
{
    if (cond_true(obj, "Finished"))
        return false;
    bool active = fq_value_path_bool(obj, "spec.active", true);
    bool has_adm = fq_value_path(obj, "status.admission") != NULL;
    bool evicted = cond_true(obj, "Evicted");
    if (!active)
        return has_adm || !evicted;
    if (cond_true(obj, "DeactivationTarget"))
        return true;
    if (has_adm) {
        if (evicted || !cond_true(obj, "Admitted"))
            return true;
        if (cfg->pods_ready.enable && !cond_true(obj, "PodsReady"))
            return true;
        const struct fq_value *chs =
            fq_value_path(obj, "status.admissionChecks");
        for (size_t i = 0; i < fq_value_len(chs); i++)
            if (strcmp(fq_value_path_str(fq_seq_at(chs, i), "state", ""),
                       "Ready"))
                return true;
        return false;
    }
    const struct fq_value *rq = cond_find(obj, "Requeued");
    return rq && !strcmp(fq_value_path_str(rq, "status", ""), "False");
}

/* Reads once, at decode, what collect() needs of a workload's tree. */
static void wcache_derive(struct wcache *wc, const struct fq_engine_config *cfg)
{
    const struct fq_value *obj = wc->tree;
    wc->finished = cond_true(obj, "Finished");
    const struct fq_value *qr = cond_find(obj, "QuotaReserved");
    if (qr && !strcmp(fq_value_path_str(qr, "status", ""), "False"))
        wc->qr_false_msg = fq_value_path_str(qr, "message", "");
    wc->qr_true = cond_true(obj, "QuotaReserved");
    wc->admitted = cond_true(obj, "Admitted");
    wc->evicted = cond_true(obj, "Evicted");
    wc->reserved_at =
        parse_time(fq_value_path_str(qr, "lastTransitionTime", NULL), 0);
    const struct fq_value *rq = cond_find(obj, "Requeued");
    wc->in_backoff =
        rq && !strcmp(fq_value_path_str(rq, "status", ""), "False");
    if (wc->ok)
        wc->created = parse_time(wc->v.meta.creation_timestamp, 0);
    wc->qts = queue_order_ts(obj, cfg);
}

/* Orders "ns/name" keys as fq_objstore_list orders objects: by namespace,
 * then name. */
static int live_cmp(const void *x, const void *y)
{
    const char *a = *(char *const *)x, *b = *(char *const *)y;
    size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
    int c = strncmp(a, b, la < lb ? la : lb);
    if (c)
        return c;
    if (la != lb)
        return la < lb ? -1 : 1;
    return strcmp(a + la, b + lb);
}

/*
 * The namespaces and names of the workloads not Finished, in the store's
 * order (owned arrays of owned strings). Finished workloads stay in the
 * store (jobs keep them) but have nothing left to do here, so a full run
 * costs what the live ones cost, not what the history does. The first
 * call fills the set from the store (objects restored before the
 * controller watched).
 */
static size_t live_keys(struct kueue *k, struct fq_objstore *st, char ***ns_out,
                        char ***names_out)
{
    if (!k->live_ready) {
        const struct fq_object **objs;
        size_t n = fq_objstore_list(st, FQ_KIND_WORKLOAD, NULL, &objs);
        for (size_t i = 0; i < n; i++) {
            if (cond_true(objs[i]->obj, "Finished"))
                continue;
            char key[600];
            wl_key(objs[i]->ns, objs[i]->name, key, sizeof(key));
            live_add(k, key);
        }
        free(objs);
        k->live_ready = true;
    }
    if (!k->lk_valid) {
        lk_free(k);
        char **keys = fq_xcalloc(k->live.n + 1, sizeof(char *));
        size_t n = 0;
        for (size_t i = 0; i < k->live.cap; i++)
            if (k->live.t[i].key)
                keys[n++] = k->live.t[i].key;
        qsort(keys, n, sizeof(char *), live_cmp);
        k->lk_ns = fq_xcalloc(n + 1, sizeof(char *));
        k->lk_names = fq_xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++) {
            size_t l = strcspn(keys[i], "/");
            k->lk_ns[i] = fq_xstrndup(keys[i], l);
            k->lk_names[i] = fq_xstrdup(keys[i][l] ? keys[i] + l + 1 : "");
        }
        free(keys);
        k->lk_n = n;
        k->lk_valid = true;
    }
    /* Borrowed until the next call: collect() may change the set while it
     * walks these (which only marks them stale). */
    *ns_out = k->lk_ns;
    *names_out = k->lk_names;
    return k->lk_n;
}

/* Decodes every workload not Finished, runs its lifecycle, then builds
 * the compact list for the cycle. */
static size_t collect(struct kueue *k, struct fq_engine *e, struct snap *s,
                      int64_t now, struct wl **out)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    struct fq_objstore *st = fq_engine_store(e);
    char **ns, **names;
    size_t n = live_keys(k, st, &ns, &names);
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *co =
            fq_objstore_get(st, FQ_KIND_WORKLOAD, ns[i], names[i]);
        if (!co)
            continue;
        /* needs_lifecycle() depends on the object alone: once per rv. */
        char key[600];
        wl_key(ns[i], names[i], key, sizeof(key));
        const struct wcache *kc = fq_smap_get(&k->cache, key);
        bool need = kc && kc->rv == co->rv && kc->lc_known ?
                        kc->needs_lc :
                        needs_lifecycle(co->obj, cfg);
        if (!need)
            continue;
        struct fq_value *obj =
            fq_objstore_edit(st, FQ_KIND_WORKLOAD, ns[i], names[i]);
        lifecycle(k, e, s, obj, now);
        commit(e, obj);
    }
    struct wl *ws = fq_xcalloc(n + 1, sizeof(*ws));
    size_t nw = 0;
    /* Podsets (requests by resource index, flavor masks) are only needed
     * when a cycle runs now; most runs are not cycles. */
    bool due =
        (k->need_cycle || k->requeue) && now >= k->last_cycle + k->cycle_ms;
    k->cycle_due = due;
    k->runs++;
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *so =
            fq_objstore_get(st, FQ_KIND_WORKLOAD, ns[i], names[i]);
        if (!so)
            continue;
        /* Decode once per resourceVersion (decoding validates). */
        char key[600];
        wl_key(ns[i], names[i], key, sizeof(key));
        struct wcache *wc = fq_smap_get(&k->cache, key);
        if (!wc || wc->rv != so->rv) {
            if (cond_true(so->obj, "Finished"))
                continue;
            wc = fq_xcalloc(1, sizeof(*wc));
            wc->rv = so->rv;
            wc->tree = fq_value_clone(so->obj);
            wc->ok = fq_workload_decode(wc->tree, NULL, &wc->v, NULL) == 0;
            wcache_derive(wc, cfg);
            fq_smap_put(&k->cache, key, wc);
        }
        if (wc->finished)
            continue;
        wc->seen = k->runs;
        if (!wc->ok)
            continue;
        if (!wc->lc_known) {
            wc->needs_lc = needs_lifecycle(so->obj, cfg);
            wc->lc_known = true;
        }
        const struct fq_workload v = wc->v;
        struct wl *w = &ws[nw++];
        w->ns = fq_xstrdup(ns[i]);
        w->name = fq_xstrdup(names[i]);
        w->uid = fq_xstrdup(v.meta.uid ? v.meta.uid : "");
        w->cq = -1;
        w->prio = priority_of(e, &v);
        w->created = wc->created;
        w->qts = wc->qts;
        int64_t next = FQ_NEVER;
        w->avoid = avoid_mask(
            &s->adm, fq_kvs_get(&v.meta.annotations, FQ_KUEUE_AVOID_FLAVORS),
            now, &next);
        if (wc->qr_false_msg)
            w->why_msg = fq_xstrdup(wc->qr_false_msg);
        bool reserved = v.has_admission && wc->qr_true;
        if (reserved) {
            w->cq = find_cq(
                s, v.admission_cluster_queue ? v.admission_cluster_queue : "");
            w->holds = w->cq >= 0;
            w->admitted = wc->admitted;
            w->evicting = wc->evicted;
            w->reserved_at = wc->reserved_at;
            wl_usage(s, w, &v);
            if (w->holds)
                fq_adm_charge(&s->adm, s->cqs[w->cq].adm, w->nuse, w->use_fr,
                              w->use_amt, +1);
            /* Waiting on a check, none Ready: may migrate. */
            bool any = false, ready = false;
            for (size_t c = 0; c < v.n_check_states; c++) {
                any = true;
                if (v.check_states[c].state != FQ_CHECK_PENDING)
                    ready = true;
            }
            w->waiting_check = any && !ready && !w->admitted;
            if (w->waiting_check && due) {
                wl_podsets(s, w, &v);
                w->ps_ready = true;
            }
            if (v.queue_name)
                w->lq = find_lq(s, ns[i], v.queue_name);
            continue;
        }
        /* Pending: admissible now? */
        bool in_backoff = wc->in_backoff;
        if (v.active && !in_backoff && v.queue_name) {
            w->lq = find_lq(s, ns[i], v.queue_name);
            char msg[512];
            if (!w->lq) {
                snprintf(msg, sizeof(msg), "LocalQueue %s doesn't exist",
                         v.queue_name);
                if (!w->why_msg || strcmp(w->why_msg, msg))
                    set_pending(k, e, w, "Inadmissible", msg, now);
            } else {
                int ci = find_cq(s, w->lq->cq);
                if (ci < 0) {
                    snprintf(msg, sizeof(msg), "ClusterQueue %s doesn't exist",
                             w->lq->cq);
                    set_pending(k, e, w, "Inadmissible", msg, now);
                } else if (!s->cqs[ci].active) {
                    snprintf(msg, sizeof(msg), "ClusterQueue %s is inactive",
                             w->lq->cq);
                    set_pending(k, e, w, "Inadmissible", msg, now);
                } else if (!ns_matches(e, &s->cqs[ci], ns[i])) {
                    set_pending(k, e, w, "Inadmissible",
                                "Workload namespace doesn't match "
                                "ClusterQueue selector",
                                now);
                } else {
                    w->cq = ci;
                    w->pending = true;
                    w->v = &wc->v;
                    const char *old =
                        fq_kvs_get(&v.meta.annotations, FQ_SLICE_ANN_REPLACES);
                    if (old && due) {
                        wl_podsets(s, w, &v);
                        w->ps_ready = true;
                    }
                    if (old) {
                        w->replaces = fq_xstrdup(old);
                        w->is_slice =
                            due && fq_kueue_slice_prepare(
                                       &s->adm,
                                       stored(e, FQ_KIND_WORKLOAD, ns[i], old),
                                       w->npodsets, w->psname, w->slice_flv,
                                       w->slice_base);
                    }
                }
            }
        }
        /* No LocalQueue to count it in and nothing to schedule: skip it
         * until it or the configuration changes (set_pending above wrote
         * a new rv when its message changed, so that is seen first). */
        if (!w->lq && !w->pending && !w->holds && !reserved && !wc->needs_lc &&
            so == fq_objstore_get(st, FQ_KIND_WORKLOAD, ns[i], names[i]) &&
            so->rv == wc->rv) {
            fq_smap_add(&k->inert, key);
            live_del(k, key);
        }
    }
    /* Workloads gone or finished left the cache in on_change. */
    *out = ws;
    return nw;
}

/*
 * A run between scheduling cycles: only the workloads that changed get
 * their lifecycle transitions. Queue counts and timers wait for the next
 * full run (a cycle, a due timer), which on_change has asked for.
 */
static void run_changed(struct kueue *k, struct fq_engine *e, int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    struct fq_objstore *st = fq_engine_store(e);
    struct snap s;
    snap_build(&s, e);
    for (size_t i = 0; i < k->dirty.cap; i++) {
        const char *key = k->dirty.t[i].key;
        if (!key)
            continue;
        const char *slash = strchr(key, '/');
        if (!slash)
            continue;
        char ns[300];
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
        const struct fq_value *cur = stored(e, FQ_KIND_WORKLOAD, ns, slash + 1);
        if (!cur || !needs_lifecycle(cur, cfg))
            continue;
        struct fq_value *obj =
            fq_objstore_edit(st, FQ_KIND_WORKLOAD, ns, slash + 1);
        lifecycle(k, e, &s, obj, now);
        commit(e, obj);
    }
    fq_smap_clear(&k->dirty);
    snap_release(&s);
}

static void run(void *self, struct fq_engine *e, int64_t now)
{
    struct kueue *k = self;
    bool full =
        ((k->need_cycle || k->requeue) && now >= k->last_cycle + k->cycle_ms) ||
        now >= k->timer;
    if (!full) {
        if (k->dirty.n > 0)
            run_changed(k, e, now);
        return;
    }
    if (k->snap && !k->requeue && now < k->timer) {
        /* Only a cycle is due and only our own messages changed. */
        fq_smap_clear(&k->dirty);
        fq_smap_clear(&k->own);
        for (size_t i = 0; i < k->nw; i++)
            k->ws[i].done = k->ws[i].nom_fit = k->ws[i].nom_borrows = false;
        k->quota_moved = false;
        cycle(k, e, k->snap, k->ws, k->nw, now);
        if (k->quota_moved) {
            /* The queue counts move with it, as after a full run. */
            struct snap *ks = k->snap;
            for (int i = 0; i < ks->ncq; i++)
                ks->cqs[i].pending = ks->cqs[i].reserving =
                    ks->cqs[i].admitted = 0;
            for (int i = 0; i < ks->nlq; i++)
                ks->lqs[i].pending = ks->lqs[i].reserving =
                    ks->lqs[i].admitted = 0;
            write_queue_status(e, ks, k->ws, k->nw);
            drop_kept(k);
        }
        return;
    }
    drop_kept(k);
    fq_smap_clear(&k->dirty);
    struct snap s;
    k->timer = FQ_NEVER;
    snap_build(&s, e);
    if (k->requeue) {
        fq_smap_clear(&k->inadmissible);
        k->requeue = false;
        k->need_cycle = true;
    }
    struct wl *ws;
    size_t nw = collect(k, e, &s, now, &ws);
    if (k->requeue) { /* lifecycle released quota */
        fq_smap_clear(&k->inadmissible);
        k->requeue = false;
        k->need_cycle = true;
    }
    k->quota_moved = false;
    if (k->cycle_due && k->need_cycle && now >= k->last_cycle + k->cycle_ms)
        cycle(k, e, &s, ws, nw, now);
    write_queue_status(e, &s, ws, nw);
    /* Kept for the next cycle unless quota moved (then the queue counts
     * and usage change: the next run decodes again). */
    k->ws = ws;
    k->nw = nw;
    k->snap = fq_xmalloc(sizeof(s));
    memcpy(k->snap, &s, sizeof(s));
    if (k->quota_moved)
        drop_kept(k);
}

static int64_t next_wakeup(const void *self)
{
    const struct kueue *k = self;
    int64_t t = k->timer;
    if (k->need_cycle) {
        int64_t c = k->last_cycle + k->cycle_ms;
        if (c < t)
            t = c;
    }
    return t;
}

void fq_kueue_get_stats(const void *self, struct fq_kueue_stats *out)
{
    const struct kueue *k = self;
    *out = k->stats;
}

const struct fq_controller_ops fq_kueue_controller = {
    .name = "kueue",
    .watch = FQ_KIND_BIT(FQ_KIND_RESOURCEFLAVOR) |
             FQ_KIND_BIT(FQ_KIND_CLUSTERQUEUE) | FQ_KIND_BIT(FQ_KIND_COHORT) |
             FQ_KIND_BIT(FQ_KIND_LOCALQUEUE) | FQ_KIND_BIT(FQ_KIND_WORKLOAD) |
             FQ_KIND_BIT(FQ_KIND_WORKLOADPRIORITYCLASS) |
             FQ_KIND_BIT(FQ_KIND_ADMISSIONCHECK) |
             FQ_KIND_BIT(FQ_KIND_NAMESPACE),
    .create = create,
    .destroy = destroy,
    .on_change = on_change,
    .run = run,
    .next_wakeup = next_wakeup,
};
