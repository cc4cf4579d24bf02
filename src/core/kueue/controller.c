/*
 * controller.c - the "kueue" controller: Kueue's scheduler and workload
 * controller over stored objects.
 *
 * It watches ResourceFlavor, ClusterQueue, Cohort, LocalQueue, Workload,
 * WorkloadPriorityClass, AdmissionCheck and Namespace objects and writes
 * Workload status (conditions, admission, admissionChecks, requeueState)
 * and ClusterQueue / LocalQueue status, as Kueue does. The algorithm itself
 * (flavors, quota, preemption targets) is admission.c; this file turns
 * objects into its compact structs and decisions back into objects.
 *
 * This file is the controller itself (on_change, run, deadlines, queue
 * status); kueue/internal.h lists the files it is split into and what
 * each holds. The workload state machine (one function performs each
 * transition, in lifecycle.c and admit.c):
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
 * How a run costs what changed. Each live workload has a record (struct
 * rec: the compact struct wl the scheduler reads), kept between runs and
 * derived again only when on_change saw its workload change, or when the
 * configuration did (then a new snapshot, and every record again). What
 * a record adds to the quota tree's usage and to the queue counts is
 * added and taken out by account() alone; its place in its ClusterQueue's
 * pending queue (struct pq, in Kueue's heap order), among the holders
 * (preemption candidates) and the migration candidates follows from it
 * (rec_attach / rec_detach). lifecycle() runs for workloads that changed
 * and those whose deadline (a min-heap) came. So a cycle looks at heads,
 * not at every workload, and a run between cycles at what changed.
 *
 * What a change costs. on_change reads a workload's conditions once
 * (cond_scan) and appends its key to the lists of records to derive and
 * lifecycles to run (struct fq_keyq: read back sorted, each key once);
 * rec_refresh derives a record again only when its fingerprint (what
 * rec_derive reads) moved, and a new workload whose podSets match an
 * earlier one's takes that one's podset view instead of decoding its pod
 * templates (psviews: workloads of a job shape are alike), as a holder's
 * status write takes its admission's view (admviews). A cycle allocates nothing: its per-queue
 * scratch lives in the controller, and so do the heads' nominations,
 * which are their outcomes too unless an earlier head of the round
 * reserved or preempted. Callers that read only an assignment's outcome
 * (ff_quiet, try_migrate) ask fq_adm_assign for no message. A migration
 * pass looks at every candidate only after a release on a flavor one
 * may move to or the end of a cool-down, else at the candidates that
 * came since (mig_pass), and a holder derived again to the usage it had
 * releases nothing (held_restore); a requeue puts parked heads back where they
 * were taken from (pq_requeue); a plan of quiet cycles reads each queue
 * once, at a load per head of a shape already found quiet (ff_plan).
 *
 * Invariants
 *   1. Quota is held by exactly the workloads with status.admission set,
 *      QuotaReserved=True and not Finished: the snapshot's usage cells are
 *      the sum of account() over the records that hold, and a record is
 *      derived from its stored workload before any cycle that follows a
 *      change of it, so usage can never be counted twice (after a crash
 *      the records are derived from the store again).
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
#include "kueue/internal.h"
#include "kueue/kueue.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/smap.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/names.h"
#include "flexq/objects.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "flexq/timefmt.h"
#include "kueue/admission.h"
#include "kueue/fairshare.h"
#include "kueue/kueue_slices.h"

/* --- controller state ---------------------------------------------------- */

/* --- ClusterQueue / LocalQueue status ---------------------------------- */

/* status.fairSharing of a node of the quota tree: {weightedShare}, its
 * dominant resource share rounded up (fairshare.c). */
static struct fq_value *share_of(const struct snap *s, int node)
{
    struct fq_fs_drs d;
    fq_fs_drs(&s->adm, node, &d);
    struct fq_value *fs = fq_value_map();
    fq_map_set(fs, "weightedShare", fq_value_int(fq_fs_weighted_share(&d)));
    return fs;
}

/* Each stored Cohort's status.fairSharing with fair sharing on; without,
 * a share left from when it was on goes. */
static void write_cohort_status(const struct snap *s, struct fq_engine *e)
{
    for (int i = 0; i < s->nco; i++) {
        const struct fq_value *cur =
            stored(e, FQ_KIND_COHORT, "", s->co_name[i]);
        if (!cur)
            continue;
        const struct fq_value *old = fq_map_get(cur, "status");
        if (!s->adm.fair && !fq_map_get(old, "fairSharing"))
            continue;
        struct fq_value *st = old ? fq_value_clone(old) : fq_value_map();
        if (s->adm.fair)
            fq_map_set(st, "fairSharing", share_of(s, s->co_node[i]));
        else
            fq_map_del(st, "fairSharing");
        if (!fq_value_equal(st, old))
            fq_objstore_set_status(fq_engine_store(e), FQ_KIND_COHORT, "",
                                   s->co_name[i], st, NULL);
        else
            fq_value_free(st);
    }
}

/* Writes each queue's status from the counts the records keep (only when
 * some count or the configuration moved since the last write). */
static void write_queue_status(struct kueue *k, struct fq_engine *e)
{
    struct snap *s = k->snap;
    k->counts_dirty = false;
    size_t nc = kq_ncell(s);
    for (int i = 0; i < s->ncq; i++) {
        struct cq_info *c = &s->cqs[i];
        const struct fq_value *cur =
            stored(e, FQ_KIND_CLUSTERQUEUE, "", c->name);
        if (!cur)
            continue;
        struct fq_value *st = fq_value_map();
        struct fq_value *conds = fq_value_seq();
        const struct fq_value *old = kq_cond_find(cur, "Active");
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
        fq_map_set(st, "pendingWorkloads", fq_value_int(k->cqn[i][0]));
        fq_map_set(st, "reservingWorkloads", fq_value_int(k->cqn[i][1]));
        fq_map_set(st, "admittedWorkloads", fq_value_int(k->cqn[i][2]));
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
                            kind == 0 ?
                                cell->usage :
                                k->adm_use[(size_t)i * nc +
                                           (size_t)(f * s->adm.nres + r)];
                        kq_fmt_qty(s->adm.res_names[r], used, q, sizeof(q));
                        fq_map_set(re, "total", fq_value_str(q));
                        int64_t b = used - cell->nominal;
                        kq_fmt_qty(s->adm.res_names[r], b > 0 ? b : 0, q,
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
        if (s->adm.fair)
            fq_map_set(st, "fairSharing", share_of(s, ac->node));
        /* Keep what the capacity controller writes here (cost.c). */
        const struct fq_value *cost = fq_value_path(cur, FQ_STATUS_COST);
        if (cost)
            fq_map_set(st, "cost", fq_value_clone(cost));
        if (!fq_value_equal(st, fq_map_get(cur, "status")))
            fq_objstore_set_status(fq_engine_store(e), FQ_KIND_CLUSTERQUEUE, "",
                                   c->name, st, NULL);
        else
            fq_value_free(st);
    }
    for (int i = 0; i < s->nlq; i++) {
        struct lq_info *l = &s->lqs[i];
        const struct fq_value *cur =
            stored(e, FQ_KIND_LOCALQUEUE, l->ns, l->name);
        if (!cur)
            continue;
        struct fq_value *st = fq_value_map();
        fq_map_set(st, "pendingWorkloads", fq_value_int(k->lqn[i][0]));
        fq_map_set(st, "reservingWorkloads", fq_value_int(k->lqn[i][1]));
        fq_map_set(st, "admittedWorkloads", fq_value_int(k->lqn[i][2]));
        if (k->afs_on && l->afs_use)
            fq_map_set(st, "fairSharing", kq_afs_status(k, l));
        if (!fq_value_equal(st, fq_map_get(cur, "status")))
            fq_objstore_set_status(fq_engine_store(e), FQ_KIND_LOCALQUEUE,
                                   l->ns, l->name, st, NULL);
        else
            fq_value_free(st);
    }
    write_cohort_status(s, e);
}

/* --- the controller ------------------------------------------------------ */

static bool tq_less(const void *a, const void *b);

static void *create(struct fq_engine *e)
{
    struct kueue *k = fq_xcalloc(1, sizeof(*k));
    fq_keyq_init(&k->dirty);
    fq_keyq_init(&k->lc_dirty);
    /* a control-plane duration: scaled as every other (timescale.h) */
    k->cycle_ms = fq_time_scaled(e, fq_engine_config(e)->policy.cycle_ms);
    if (k->cycle_ms < 0)
        k->cycle_ms = 0;
    k->last_cycle = INT64_MIN / 2;
    k->need_cycle = true;
    k->grace_wake = FQ_NEVER;
    kq_pendmsg_init(
        k, fq_time_scaled(
               e, fq_engine_config(e)->policy.pending_message_refresh_ms));
    int64_t yield = fq_engine_config(e)->policy.starved_after_ms;
    k->starved_after_ms = yield < 0 ? -1 : fq_time_scaled(e, yield);
    k->config_dirty = true;
    k->recs.free_val = kq_rec_free;
    k->recs.borrow_keys = true; /* a record holds its key */
    k->timers.free_val = free;
    fq_heap_init(&k->tq, sizeof(struct timer), tq_less);
    k->psviews.free_val = kq_psview_free;
    k->admviews.free_val = free;
    k->qnames.free_val = kq_qname_free;
    k->park_gen = 1;
    k->snap_ver = 1;
    k->ff_len = 1;
    k->last_status = INT64_MIN / 2;
    k->ran_at = INT64_MIN / 2;
    return k;
}

/* --- lifecycle deadlines ---------------------------------------------- */

static bool tq_less(const void *a, const void *b)
{
    return ((const struct timer *)a)->t < ((const struct timer *)b)->t;
}

static bool tq_valid(const struct kueue *k, const struct timer *t)
{
    const int64_t *at = fq_smap_get(&k->timers, t->key);
    return at && *at == t->t;
}

static void tq_push(struct kueue *k, int64_t t, const char *key)
{
    struct timer x = {t, fq_xstrdup(key)};
    fq_heap_push(&k->tq, &x);
}

static struct timer tq_pop(struct kueue *k)
{
    struct timer top;
    fq_heap_pop(&k->tq, &top);
    return top;
}

static const struct timer *tq_top(const struct kueue *k)
{
    return fq_heap_top(&k->tq);
}

/* Drops stale entries from the top, so the top is the next deadline. */
static void tq_clean(struct kueue *k)
{
    while (tq_top(k) && !tq_valid(k, tq_top(k)))
        free(tq_pop(k).key);
}

static int64_t tq_next(const struct kueue *k)
{
    return tq_top(k) ? tq_top(k)->t : FQ_NEVER;
}

/* The workload `key` wants lifecycle() again at t (FQ_NEVER: not). */
static void timer_set(struct kueue *k, const char *key, int64_t t)
{
    int64_t *at = fq_smap_get(&k->timers, key);
    if (t == FQ_NEVER) {
        if (at)
            fq_smap_del(&k->timers, key);
        return;
    }
    if (at && *at == t)
        return;
    at = fq_xmalloc(sizeof(*at));
    *at = t;
    fq_smap_put(&k->timers, key, at);
    tq_push(k, t, key);
}

/* --- configuration and seeding --------------------------------------- */

static void recs_mark_all(struct kueue *k)
{
    for (size_t i = 0; i < k->recs.cap; i++)
        if (k->recs.t[i].key) {
            fq_keyq_add(&k->dirty, k->recs.t[i].key);
            fq_keyq_add(&k->lc_dirty, k->recs.t[i].key);
        }
}

static void queues_free(struct kueue *k)
{
    for (int c = 0; k->snap && c < k->snap->ncq; c++)
        kq_pq_release(&k->pq[c]);
    free(k->pq);
    free(k->cqn);
    free(k->lqn);
    free(k->adm_use);
    free(k->lq_use);
    k->lq_use = NULL;
    free(k->hw);
    free(k->hs);
    free(k->mig);
    free(k->mig_new);
    k->mig_new = NULL;
    k->nmig_new = k->capmig_new = 0;
    memset(k->mig_to, 0, sizeof(k->mig_to));
    free(k->cq_cur);
    free(k->cq_taken);
    free(k->cq_blocked);
    free(k->starved);
    free(k->starved_flv);
    free(k->starved_fp);
    k->starved = NULL;
    k->starved_flv = k->starved_fp = NULL;
    free(k->heads);
    free(k->nom);
    k->nom = NULL;
    k->cq_cur = NULL;
    k->cq_taken = NULL;
    k->cq_blocked = NULL;
    k->heads = NULL;
    free(k->memo);
    kq_nm_free(k); /* its versions and outcomes are the snapshot's */
    fq_smap_clear(&k->shapes);
    fq_smap_clear(&k->psviews); /* they hold the snapshot's indexes */
    fq_smap_clear(&k->admviews);
    k->nshapes = 0;
    k->memo = NULL;
    k->memo_cap = 0;
    k->ff_n = 0;
    k->pq = NULL;
    k->cqn = k->lqn = NULL;
    k->adm_use = NULL;
    k->hw = NULL;
    k->hs = NULL;
    k->mig = NULL;
    k->nh = k->caph = k->nh_sorted = 0;
    k->nmig = k->capmig = 0;
}

/*
 * The configuration changed: a new snapshot, empty queues and counts,
 * and every record derived again (by the next full run) and its
 * lifecycle looked at (checks may apply differently). O(workloads), but
 * only when the configuration moves.
 */
static void rebuild(struct kueue *k, struct fq_engine *e)
{
    k->config_dirty = false;
    queues_free(k);
    /* Kept until the new one is built: admission fair sharing carries
     * each LocalQueue's usage over (afs.c). */
    struct snap *old = k->snap;
    for (size_t i = 0; i < k->recs.cap; i++) {
        struct rec *r = k->recs.t[i].val;
        if (!k->recs.t[i].key)
            continue;
        r->accounted = r->holder = r->in_mig = r->in_mig_new = false;
        r->in_park_gen = 0;
        r->fp_ok = r->spec_ok = false;
        r->qcq = -1;
        r->shape = SHAPE_UNKNOWN; /* queues_free forgot the shapes */
    }
    recs_mark_all(k);
    k->snap = fq_xmalloc(sizeof(*k->snap));
    kq_snap_build(k->snap, e);
    struct snap *s = k->snap;
    kq_afs_setup(k, e, old, fq_engine_now(e));
    if (old) {
        kq_snap_release(old);
        free(old);
    }
    k->pq = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->pq));
    k->cqn = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->cqn));
    k->lqn = fq_xcalloc((size_t)s->nlq + 1, sizeof(*k->lqn));
    k->adm_use =
        fq_xcalloc((size_t)s->ncq * kq_ncell(s) + 1, sizeof(*k->adm_use));
    k->cq_cur = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->cq_cur));
    k->cq_taken = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->cq_taken));
    k->cq_blocked = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->cq_blocked));
    k->starved = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->starved));
    k->starved_flv = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->starved_flv));
    k->starved_fp = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->starved_fp));
    k->heads = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->heads));
    k->nom = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->nom));
    k->snap_ver++;
    k->counts_dirty = true;
    k->mig_dirty = true;
}

/* A notice saw workload `key` live (stored, not Finished): its record,
 * made now when it has none (derived at the next full run). */
static void mark_live(struct kueue *k, const char *key)
{
    struct rec *r = fq_smap_get(&k->recs, key);
    if (!r)
        r = kq_rec_new(k, key);
    r->gone = false;
}

/* The first run: workloads stored before the controller watched (a
 * restart) are looked at like changed ones. */
static void seed(struct kueue *k, struct fq_engine *e)
{
    k->seeded = true;
    const struct fq_object **objs;
    size_t n =
        fq_objstore_list(fq_engine_store(e), FQ_KIND_WORKLOAD, NULL, &objs);
    for (size_t i = 0; i < n; i++) {
        if (cond_true(objs[i]->obj, "Finished"))
            continue;
        char key[600];
        kq_wl_key(objs[i]->ns, objs[i]->name, key, sizeof(key));
        mark_live(k, key);
        fq_keyq_add(&k->dirty, key);
        fq_keyq_add(&k->lc_dirty, key);
    }
    free(objs);
}

static void destroy(void *self)
{
    struct kueue *k = self;
    queues_free(k);
    if (k->snap) {
        kq_snap_release(k->snap);
        free(k->snap);
    }
    fq_smap_free(&k->seen_gen);
    fq_smap_free(&k->recs);
    fq_keyq_release(&k->dirty);
    fq_keyq_release(&k->lc_dirty);
    fq_smap_free(&k->slices);
    fq_smap_free(&k->timers);
    kq_pendmsg_release(k);
    fq_smap_free(&k->shapes);
    fq_smap_free(&k->psviews);
    fq_smap_free(&k->admviews);
    fq_smap_free(&k->qnames);
    for (size_t i = 0; i < k->tq.n; i++)
        free(((struct timer *)fq_heap_at(&k->tq, i))->key);
    fq_heap_release(&k->tq);
    free(k->handled);
    free(k->mig_copy);
    for (int p = 0; p < FQ_ADM_MAX_PODSETS; p++)
        fq_value_free(k->tas_assign[p]);
    free(k);
}

static void on_change(void *self, struct fq_engine *e,
                      const struct fq_change *c)
{
    struct kueue *k = self;
    if (c->kind == FQ_KIND_NODE) {
        /* Only topology-aware placement reads Nodes: a node that comes,
         * goes or changes may let a waiting workload fit. */
        if (k->snap && k->snap->has_tas) {
            k->requeue = true;
            k->need_cycle = true;
            k->ff_len = 1;
            fq_engine_kick(e, self);
        }
        return;
    }
    if (c->kind != FQ_KIND_WORKLOAD) {
        if (c->obj) {
            /* Status-only writes (ours) keep the generation: not a change
             * of capacity or configuration. */
            char key[700];
            snprintf(
                key, sizeof(key), "%d/%s/%s@%lld", (int)c->kind, c->ns, c->name,
                (long long)fq_value_path_int(c->obj, FQ_META_GENERATION, 0));
            if (fq_smap_has(&k->seen_gen, key)) {
                /* Labels of a Namespace and a priority class's value are
                 * no spec: records read them, so derive them again. */
                if (c->kind == FQ_KIND_NAMESPACE ||
                    c->kind == FQ_KIND_WORKLOADPRIORITYCLASS)
                    kq_ff_note(k, e, c);
                if (c->kind == FQ_KIND_NAMESPACE ||
                    c->kind == FQ_KIND_WORKLOADPRIORITYCLASS)
                    for (size_t i = 0; i < k->recs.cap; i++)
                        if (k->recs.t[i].key) {
                            struct rec *r = k->recs.t[i].val;
                            r->fp_ok = r->spec_ok = false;
                            fq_keyq_add(&k->dirty, k->recs.t[i].key);
                        }
                return;
            }
            fq_smap_add(&k->seen_gen, key);
        }
        kq_ff_note(k, e, c);
        k->config_dirty = true;
        k->requeue = true;
        k->need_cycle = true;
        k->ff_len = 1;
        fq_engine_kick(e, self);
        return;
    }
    kq_ff_note(k, e, c);
    char key[600];
    kq_wl_key(c->ns, c->name, key, sizeof(key));
    struct rec *r = fq_smap_get(&k->recs, key);
    if (r && c->obj && c->type == FQ_CHANGE_MODIFIED && r->own_rev == c->rev) {
        /* Our own QuotaReserved=False message (kq_set_pending, two in five
         * of the notices of a replay): the record stays true, and its
         * conditions are not read. The workload was live and not Finished
         * when the cycle wrote it (its record was derived first), the
         * write set QuotaReserved, so it unparks nothing; a Finished
         * written after it has a notice of its own, which does what the
         * Finished branch below does. */
        r->gone = false;
        k->need_cycle = true;
        fq_engine_kick(e, self);
        return;
    }
    const struct fq_value *cond[NCOND];
    kq_cond_scan(c->obj, cond);
    if (c->type == FQ_CHANGE_DELETED || cond_is_true(cond[C_FINISHED])) {
        /* Leaving the live ones frees what it held; a finished workload
         * being deleted, or written again, frees nothing more. */
        if (r && !r->gone) {
            r->gone = true;
            k->requeue = true;
        }
        fq_keyq_add(&k->dirty, key);    /* its record goes */
        fq_keyq_add(&k->lc_dirty, key); /* and its deadlines */
        k->ff_len = 1;
    } else if (c->obj) {
        mark_live(k, key);
        fq_keyq_add(&k->dirty, key);
        fq_keyq_add(&k->lc_dirty, key);
        k->ff_len = 1;
        /* A changed workload gets a fresh chance. */
        if (r && kq_rec_parked(k, r) && !cond[C_QUOTA_RESERVED])
            r->parked = 0;
    }
    k->need_cycle = true;
    fq_engine_kick(e, self);
}

/*
 * Whether lifecycle() may have something to do for this workload: most
 * workloads (pending without backoff, admitted and running) have nothing,
 * and skipping them spares a deep copy per workload per run. cond gets
 * obj's cond_scan, which lifecycle() reads instead of scanning again.
 */
static bool needs_lifecycle(const struct fq_value *obj,
                            const struct fq_engine_config *cfg,
                            const struct fq_value *cond[NCOND],
                            bool k_stops_any)
{
    kq_cond_scan(obj, cond);
    if (cond_is_true(cond[C_FINISHED]))
        return false;
    const struct fq_value *st = fq_map_get(obj, "status");
    /* spec.active and spec.maximumExecutionTimeSeconds by member, not by
     * a path parsed for every workload that changed */
    const struct fq_value *spec = fq_map_get(obj, "spec");
    const struct fq_value *act = fq_map_get(spec, "active");
    bool active = act && act->type == FQ_V_BOOL ? act->u.b : true;
    bool has_adm = fq_map_get(st, "admission") != NULL;
    bool evicted = cond_is_true(cond[C_EVICTED]);
    if (!active)
        return has_adm || !evicted;
    if (cond_is_true(cond[C_DEACTIVATION_TARGET]))
        return true;
    if (has_adm) {
        if (evicted || !cond_is_true(cond[C_ADMITTED]))
            return true;
        if (cfg->pods_ready.enable && !cond_is_true(cond[C_PODS_READY]))
            return true;
        const struct fq_value *chs = fq_map_get(st, "admissionChecks");
        for (size_t i = 0; i < fq_value_len(chs); i++)
            if (strcmp(str_at(fq_seq_at(chs, i), "state", ""), "Ready"))
                return true;
        /* kueue_policy.c: a deadline, or a stopped queue to drain. */
        return fq_map_get(spec, "maximumExecutionTimeSeconds") || k_stops_any;
    }
    const struct fq_value *rq = cond[C_REQUEUED];
    return rq && !strcmp(str_at(rq, "status", ""), "False");
}

/* Whether some LocalQueue or ClusterQueue has a stop policy (then admitted
 * workloads may have to be drained: kueue_policy.c). */
static bool stops_any(const struct kueue *k)
{
    const struct snap *s = k->snap;
    for (int i = 0; s && i < s->nlq; i++)
        if (s->lqs[i].stop != FQ_STOP_NONE)
            return true;
    for (int i = 0; s && i < s->ncq; i++)
        if (s->cqs[i].view.stop_policy != FQ_STOP_NONE)
            return true;
    return false;
}

/* lifecycle() for the workloads that changed and those whose deadline
 * came, in the store's order. */
static void lifecycle_pass(struct kueue *k, struct fq_engine *e, int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    struct fq_objstore *st = fq_engine_store(e);
    bool stops = stops_any(k); /* once a pass, not per workload */
    while (tq_top(k) && tq_top(k)->t <= now) {
        struct timer t = tq_pop(k);
        if (tq_valid(k, &t))
            fq_keyq_add(&k->lc_dirty, t.key);
        free(t.key);
    }
    if (k->lc_dirty.n == 0)
        return;
    const char *const *keys;
    size_t n = fq_keyq_take(&k->lc_dirty, &keys);
    for (size_t i = 0; i < n; i++) {
        char ns[300];
        const char *name = key_split(keys[i], ns, sizeof(ns));
        if (!name)
            name = "";
        /* The stored tree, to read and, if lifecycle() changes it, to
         * change in place (fq_objstore_edited tells the store). */
        struct fq_value *obj =
            fq_objstore_edit_in_place(st, FQ_KIND_WORKLOAD, ns, name);
        const struct fq_value *cond[NCOND];
        if (!obj || !needs_lifecycle(obj, cfg, cond, stops)) {
            timer_set(k, keys[i], FQ_NEVER);
            continue;
        }
        k->lc_timer = FQ_NEVER;
        k->lc_changed = k->lc_spec = false;
        kq_lifecycle(k, e, k->snap, obj, cond, now);
        if (k->lc_changed)
            fq_objstore_edited(st, FQ_KIND_WORKLOAD, ns, name, k->lc_spec);
        timer_set(k, keys[i], k->lc_timer);
    }
    fq_keyq_clear(&k->lc_dirty);
}

/* Records of the workloads that changed (and of every elastic slice),
 * derived again in the store's order. */
static void refresh_pass(struct kueue *k, struct fq_engine *e, int64_t now)
{
    for (size_t i = 0; i < k->slices.cap; i++)
        if (k->slices.t[i].key)
            fq_keyq_add(&k->dirty, k->slices.t[i].key);
    if (k->dirty.n == 0)
        return;
    const char *const *keys;
    size_t n = fq_keyq_take(&k->dirty, &keys);
    for (size_t i = 0; i < n; i++)
        kq_rec_refresh(k, e, keys[i], now);
    fq_keyq_clear(&k->dirty);
}

/*
 * A run. Every run gives lifecycle() to what changed or came due. A full
 * run (a cycle is due, or a deadline came) also derives the changed
 * records, runs the scheduling cycle when its time has come, and writes
 * the queues' status; between Kueue-paced cycles the records wait, as
 * Kueue's queues see changes at its next cycle.
 */
static void run(void *self, struct fq_engine *e, int64_t now)
{
    struct kueue *k = self;
    kq_ff_replay(k, now);
    k->ff_incl = false;
    k->ran_at = now;
    bool full =
        ((k->need_cycle || k->requeue) && now >= k->last_cycle + k->cycle_ms) ||
        now >= tq_next(k) || (k->afs_on && now >= k->afs_next) ||
        now >= k->grace_wake;
    if (now >= k->grace_wake) {
        /* A spared victim stops being spared (grace.c). */
        k->grace_wake = FQ_NEVER;
        k->need_cycle = true;
    }
    if (k->config_dirty)
        rebuild(k, e);
    if (!k->seeded)
        seed(k, e);
    lifecycle_pass(k, e, now);
    kq_pendmsg_flush(k, e, now);
    tq_clean(k);
    if (!full) {
        kq_ff_plan(k, now);
        return;
    }
    if (k->requeue) {
        kq_pq_requeue(k);
        k->requeue = false;
        k->need_cycle = true;
    }
    refresh_pass(k, e, now);
    k->quota_moved = false;
    if (k->need_cycle && now >= k->last_cycle + k->cycle_ms)
        kq_cycle(k, e, now);
    if (k->afs_on)
        kq_afs_run(k, e, now);
    if (k->counts_dirty &&
        now >= k->last_status + fq_engine_config(e)->status_every_ms) {
        write_queue_status(k, e);
        k->last_status = now;
    }
    kq_ff_plan(k, now);
}

static int64_t next_wakeup(const void *self)
{
    const struct kueue *k = self;
    int64_t t = tq_next(k);
    if (k->afs_on && k->afs_next < t)
        t = k->afs_next;
    if (k->grace_wake < t)
        t = k->grace_wake;
    if (kq_pendmsg_next(k) < t)
        t = kq_pendmsg_next(k);
    if (k->need_cycle) {
        /* After the quiet cycles planned (ff_plan), if any. */
        int64_t c = k->last_cycle + (k->ff_n + 1) * k->cycle_ms;
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
             FQ_KIND_BIT(FQ_KIND_NAMESPACE) | FQ_KIND_BIT(FQ_KIND_TOPOLOGY) |
             FQ_KIND_BIT(FQ_KIND_NODE),
    .create = create,
    .destroy = destroy,
    .on_change = on_change,
    .run = run,
    .next_wakeup = next_wakeup,
};
