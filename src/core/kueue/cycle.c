/*
 * cycle.c - the scheduling cycle: Kueue's round of heads, one nomination
 * per ClusterQueue (admission.c's flavor assignment), entries in Kueue's
 * order, then reserve, preempt or mark pending, and the migration pass
 * after it.
 *
 * Invariant 4 (cycle pace and heads per queue) is kept here.
 */
#include "kueue/fairshare.h"
#include "kueue/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Quota set aside in the snapshot for a preemptor until the cycle ends. */
struct aside {
    int cq; /* fq_adm CQ index */
    int nuse;
    uint16_t fr[FQ_ADM_MAX_FLAVORS];
    int64_t amt[FQ_ADM_MAX_FLAVORS];
};

/* One cycle's state, shared by its steps. */
struct cyc {
    struct kueue *k;
    struct fq_engine *e;
    struct snap *s;
    int64_t now;
    int limit;     /* policy.max_admissions_per_cq_per_cycle (0: all) */
    bool cooldown; /* policy.flavor_failure_cooldown */
    size_t nhandled;
    /* Kueue's cycleCohortsSkipPreemption and the preemptors' share of
     * cycleCohortsUsage (scheduler.go): a cohort (fq_adm node) where a
     * head issued preemptions this cycle, and the quota set aside. */
    uint8_t *cohort_preempted; /* owned, one per fq_adm node: CO_* bits */
    struct aside *aside;       /* owned */
    size_t naside, capaside;
    uint64_t reserved0; /* stats.reservations when the cycle began */
};

/* What moved in a cohort this cycle (cohort_preempted): a head evicted
 * its targets, a head waits for spared ones only (grace.c), a head
 * reserved. Only an eviction makes later preemptors of the cohort skip
 * (Kueue's cycleCohortsSkipPreemption: the holders are in flux). A wait
 * moves no holder, only the set-aside, which the snapshot has charged:
 * a later head is assigned again against it (process, `moved`) and
 * preempts or waits on what it finds, so one waiting preemptor cannot
 * hold back another whose victims are not spared. A head that no longer
 * fits because of a wait's set-aside is not retried at once: nothing
 * changes until a spared victim ends (its finish kicks a cycle) or
 * grace_wake comes, and retrying in every turn meanwhile would spin. */
enum {
    CO_EVICTED = 1,
    CO_WAITED = 2,
    CO_RESERVED = 4
};

/* The cohort node of CQ `cq` (fq_adm index), or -1 when it has none. */
static int cohort_of(const struct snap *s, int cq)
{
    return s->adm.nodes[s->adm.cqs[cq].node].parent;
}

/*
 * Sets aside, until the cycle ends, the quota preemptor w asked for, as
 * Kueue's resourcesToReserve counts a Preempt entry into the cycle's
 * cohort usage: what it asked up to its nominal quota, or up to nominal
 * plus its borrowing limit when it borrows. Later heads of the cycle see
 * that room taken, so a lower-priority workload cannot use the room the
 * preemptor is freeing and be preempted for it again next cycle (with
 * cycleMilliseconds 0, in the same instant, without end).
 *
 * A preemptor that waits for spared victims only (grace.c) sets aside
 * less: what it asked beyond what those victims hold in the same cells
 * (`held`, per r->use_fr; NULL: Kueue's reservation). They keep that
 * room from others until they end and hand it on, so the free room plus
 * the held room covers what it asked. Counting the held room again would
 * shrink the cohort for as long as the grace lasts and keep out heads
 * that fit beside the preemptor (Kueue's reservation lasts one cycle:
 * its victims are evicted at once).
 */
static void set_aside(struct cyc *y, const struct wl *w,
                      const struct fq_adm_result *r, const int64_t *held)
{
    struct fq_adm *a = &y->s->adm;
    int cq = y->s->cqs[w->cq].adm;
    const struct fq_adm_cell *cells = a->nodes[a->cqs[cq].node].cells;
    FQ_GROW(y->aside, y->capaside, y->naside + 1);
    struct aside *as = &y->aside[y->naside];
    as->cq = cq;
    as->nuse = 0;
    for (int i = 0; i < r->nuse; i++) {
        const struct fq_adm_cell *c = &cells[r->use_fr[i]];
        int64_t amt = r->use_amt[i];
        int64_t room;
        if (r->borrows)
            room = c->borrow_limit == FQ_ADM_UNLIMITED ?
                       amt :
                       c->nominal + c->borrow_limit - c->usage;
        else
            room = c->nominal - c->usage;
        if (amt > room)
            amt = room;
        if (held && amt > r->use_amt[i] - held[i])
            amt = r->use_amt[i] - held[i];
        if (amt <= 0)
            continue;
        as->fr[as->nuse] = r->use_fr[i];
        as->amt[as->nuse++] = amt;
    }
    if (as->nuse == 0)
        return;
    fq_adm_charge(a, cq, as->nuse, as->fr, as->amt, +1);
    kq_nm_touch(y->k, cq);
    y->naside++;
}

/* The round's heads, one per ClusterQueue that is active, not blocked and
 * under its limit, from its act array past the cursor (a parked workload
 * ahead of the head blocks a StrictFIFO queue). Returns their count. */
static int pick_heads(struct cyc *y)
{
    struct kueue *k = y->k;
    struct snap *s = y->s;
    int nheads = 0;
    for (size_t c = 0; c < (size_t)s->ncq; c++) {
        if (k->cq_blocked[c] || !s->cqs[c].active)
            continue;
        if (y->limit > 0 && k->cq_taken[c] >= y->limit)
            continue;
        struct pq *q = &k->pq[c];
        bool strict = s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO;
        struct rec *ph = strict ? kq_pq_park_head(q) : NULL;
        for (; k->cq_cur[c] < kq_pq_nact(q); k->cq_cur[c]++) {
            struct rec *r = kq_pq_act(q, k->cq_cur[c]);
            if (r->done == k->cycle_no)
                continue;
            if (ph && kq_rec_cmp(ph, r) < 0) {
                k->cq_blocked[c] = true;
                break;
            }
            k->heads[nheads++] = r;
            break;
        }
    }
    return nheads;
}

/* Assigns head w against the snapshot into its queue's nomination: a
 * failure found for a head of its kind since nothing it depends on moved
 * is taken from the memo (nommemo.c), else searched and remembered. */
static void assign(struct cyc *y, struct wl *w, struct fq_adm_result *r)
{
    struct fq_adm_wl aw;
    struct rec *rc = (struct rec *)w; /* heads are records */
    kq_adm_wl(w, &aw, y->cooldown);
    aw.cq = y->s->cqs[w->cq].adm;
    /* Behind its queue's starved workload (policy.starved_after_ms):
     * not on its flavors, and not remembered (the memo's entries are for
     * heads that may use every flavor they select). */
    uint64_t yield = kq_yield_mask(y->k, rc);
    if (yield) {
        aw.skip_flv |= yield;
        y->k->stats.nom_searches++;
        fq_adm_assign(&y->s->adm, &aw, y->k->hs, (int)y->k->nh, r);
        return;
    }
    if (kq_nm_find(y->k, rc, &aw, r))
        return;
    y->k->stats.nom_searches++;
    fq_adm_assign(&y->s->adm, &aw, y->k->hs, (int)y->k->nh, r);
    kq_nm_put(y->k, rc, &aw, r);
}

/* Nominates every head of the round: its flavors' cool-downs, then its
 * assignment, which stays its outcome unless an earlier head moves
 * quota. */
static void nominate(struct cyc *y, int nheads)
{
    for (int h = 0; h < nheads; h++) {
        struct wl *w = &y->k->heads[h]->w;
        int64_t next = FQ_NEVER;
        w->avoid = kq_avoid_mask(&y->s->adm, w->avoid_ann, y->now, &next);
        struct fq_adm_result *r = &y->k->nom[w->cq];
        assign(y, w, r);
        w->nom_fit = r->mode == FQ_ADM_FIT;
        w->nom_borrows = r->borrows;
    }
}

/* Preempts the targets of head w's nomination and leaves it pending at
 * the head of its queue (retried next cycle). With the preemption grace
 * (grace.c) a target about to finish is spared instead, and the cycle
 * that looks at w again comes when one ends or stops being spared. */
static void preempt_for(struct cyc *y, struct wl *w, struct fq_adm_result *r)
{
    struct kueue *k = y->k;
    int nspared = 0, nevicted = 0;
    int64_t held[FQ_ADM_MAX_FLAVORS] = {0}; /* by the spared, per use_fr */
    for (int t = 0; t < r->ntargets; t++) {
        struct rec *v = k->hw[r->targets[t]];
        int64_t until = FQ_NEVER;
        if (!v->w.evicting && kq_grace_spares(y->e, v, y->now, &until)) {
            nspared++;
            if (until < k->grace_wake)
                k->grace_wake = until;
            const struct fq_adm_holder *h = &k->hs[r->targets[t]];
            for (int i = 0; i < r->nuse; i++)
                for (int j = 0; j < h->nuse; j++)
                    if (h->use_fr[j] == r->use_fr[i])
                        held[i] += h->use_amt[j];
        } else if (!v->w.evicting) {
            kq_preempt(k, y->e, &v->w, w, r->target_reason[t], y->now);
            k->hs[r->targets[t]].evicting = true;
            kq_nm_touch(k, k->hs[r->targets[t]].cq);
            nevicted++;
        }
    }
    char msg[FQ_ADM_MSG_MAX + 160];
    int n = snprintf(msg, sizeof(msg), "%s%s", r->msg, r->msg[0] ? ". " : "");
    if (n < 0 || (size_t)n >= sizeof(msg))
        n = 0;
    if (nspared == r->ntargets)
        snprintf(msg + n, sizeof(msg) - (size_t)n,
                 "Waiting for %d workload(s) expected to finish within the "
                 "preemption grace",
                 nspared);
    else if (nspared > 0)
        snprintf(msg + n, sizeof(msg) - (size_t)n,
                 "Pending the preemption of %d workload(s); waiting for %d "
                 "workload(s) expected to finish within the preemption grace",
                 r->ntargets - nspared, nspared);
    else
        snprintf(msg + n, sizeof(msg) - (size_t)n,
                 "Pending the preemption of %d workload(s)", r->ntargets);
    kq_set_pending(y->k, y->e, w, "WaitingForPreemptedWorkloads", msg, y->now);
    /* Evictions change the holders at once; spared victims change
     * nothing until they finish (a change that kicks a cycle) or
     * grace_wake comes. */
    if (nevicted > 0 || nspared == 0)
        k->need_cycle = true;
    k->cq_blocked[w->cq] = true;
    int co = cohort_of(y->s, y->s->cqs[w->cq].adm);
    if (co >= 0) {
        bool waits = nevicted == 0 && nspared > 0;
        y->cohort_preempted[co] |= waits ? CO_WAITED : CO_EVICTED;
        set_aside(y, w, r, waits ? held : NULL);
    }
}

/* Processes one head in Kueue's order: reserve, preempt, or pending
 * (parked when inadmissible). `moved` says whether quota or holders moved
 * since the nominations (then it is assigned again); returns whether they
 * have moved now. */
static bool process(struct cyc *y, struct rec *rc, bool moved)
{
    struct kueue *k = y->k;
    struct wl *w = &rc->w;
    struct cq_info *c = &y->s->cqs[w->cq];
    bool strict = y->s->adm.cqs[c->adm].strategy == FQ_ADM_STRICT_FIFO;
    rc->done = k->cycle_no;
    FQ_GROW(k->handled, k->caphandled, y->nhandled + 1);
    k->handled[y->nhandled++] = rc;
    k->cq_taken[w->cq]++;
    struct fq_adm_result *r = &k->nom[w->cq];
    if (moved) {
        fq_adm_result_release(r);
        assign(y, w, r);
    }
    /* A slice never preempts the slice it replaces. */
    for (int t = 0; w->replaces && r->mode == FQ_ADM_PREEMPT && t < r->ntargets;
         t++)
        if (!strcmp(k->hw[r->targets[t]]->w.name, w->replaces) &&
            !strcmp(k->hw[r->targets[t]]->w.ns, w->ns))
            r->mode = FQ_ADM_NO_CANDIDATES;
    char tas_msg[512];
    if (r->mode == FQ_ADM_FIT &&
        !kq_tas_assign(k, y->e, w, r, tas_msg, sizeof(tas_msg))) {
        /* Quota fits but the pods do not fit the topology: wait, as
         * inadmissible, until capacity changes. */
        kq_set_pending(y->k, y->e, w, "TopologyPlacementFailed", tas_msg,
                       y->now);
        rc->parked = k->park_gen;
        kq_nm_parked(k, rc, false, y->limit == 0);
        if (strict)
            k->cq_blocked[w->cq] = true;
        fq_adm_result_release(r);
        return moved;
    }
    int co = cohort_of(y->s, c->adm);
    if (r->mode == FQ_ADM_PREEMPT && r->ntargets > 0 && co >= 0 &&
        (y->cohort_preempted[co] & CO_EVICTED)) {
        /* Kueue: another head's preemptions in this cohort invalidated
         * this one's targets; it is tried again next cycle. (A head that
         * only waits for spared victims invalidates nothing: see
         * CO_WAITED.) */
        kq_set_pending(y->k, y->e, w, "Pending",
                       "Workload skipped because its preemption calculations "
                       "were invalidated by another workload",
                       y->now);
        k->need_cycle = true;
        /* Its queue's next heads wait too (Kueue pops one head per queue
         * a cycle): each would compute preemptions to be skipped the
         * same way, the whole queue in one cycle. */
        k->cq_blocked[w->cq] = true;
    } else if (r->mode == FQ_ADM_FIT) {
        kq_reserve(k, y->e, y->s, w, r, y->now, NULL);
        if (co >= 0)
            y->cohort_preempted[co] |= CO_RESERVED;
        if (w->replaces)
            fq_kueue_slice_replaced(y->e, w->ns, w->replaces, w->name, y->now);
        rc->parked = 0;
        moved = true;
    } else if (r->mode == FQ_ADM_PREEMPT && r->ntargets > 0) {
        preempt_for(y, w, r);
        moved = true;
    } else if (w->nom_fit) {
        /* Another head took the room first: retry next cycle. */
        kq_set_pending(y->k, y->e, w, "Pending",
                       "Workload no longer fits after processing "
                       "another workload",
                       y->now);
        if (co < 0 || y->cohort_preempted[co] != CO_WAITED)
            k->need_cycle = true;
    } else {
        kq_set_pending(y->k, y->e, w, fq_adm_why_reason(r->why), r->msg,
                       y->now);
        rc->parked = k->park_gen;
        kq_nm_parked(k, rc, true, y->limit == 0);
        if (strict)
            k->cq_blocked[w->cq] = true;
    }
    fq_adm_result_release(r);
    return moved;
}

/* With fair sharing: the round's heads in the order of Kueue's
 * tournament (fairshare.c), chosen again before each one, on the quota
 * the heads before it left. Returns whether quota moved. */
static bool process_fair(struct cyc *y, int nheads)
{
    struct kueue *k = y->k;
    struct fq_fs_entry *fe = fq_xcalloc((size_t)nheads, sizeof(*fe));
    bool moved = false;
    for (int d = 0; d < nheads; d++) {
        for (int i = d; i < nheads; i++) {
            const struct wl *w = &k->heads[i]->w;
            const struct fq_adm_result *r = &k->nom[w->cq];
            fe[i - d] = (struct fq_fs_entry){.cq = y->s->cqs[w->cq].adm,
                                             .priority = w->prio,
                                             .ts = w->qts,
                                             .nuse = r->nuse,
                                             .use_fr = r->use_fr,
                                             .use_amt = r->use_amt};
        }
        int win = d + fq_fs_next(&y->s->adm, fe, nheads - d);
        struct rec *r = k->heads[win];
        memmove(&k->heads[d + 1], &k->heads[d],
                sizeof(*k->heads) * (size_t)(win - d));
        k->heads[d] = r;
        moved = process(y, r, moved);
    }
    free(fe);
    return moved;
}

/* After a cycle that tried heads: its time counts, and another cycle is
 * due if some queue still has a head to try. */
static void after_heads(struct cyc *y)
{
    struct kueue *k = y->k;
    k->stats.cycles++;
    /* Kueue's admission attempt: "success" when the cycle reserved
     * quota for at least one workload. */
    if (k->stats.reservations > y->reserved0)
        k->stats.attempts_success++;
    else
        k->stats.attempts_inadmissible++;
    k->last_cycle = y->now;
    for (size_t c = 0; c < (size_t)y->s->ncq && !k->need_cycle; c++) {
        if (k->cq_blocked[c] || !y->s->cqs[c].active)
            continue;
        struct pq *q = &k->pq[c];
        for (size_t i = k->cq_cur[c]; i < kq_pq_nact(q); i++)
            if (kq_pq_act(q, i)->done != k->cycle_no) {
                k->need_cycle = true;
                break;
            }
    }
}

/*
 * The heads a requeue kept parked under a quiet root (nommemo.c): put
 * back, before the rounds, under each root whose version moved since or
 * where some queue has a head to try (uses cq_taken as scratch). Returns
 * whether an active queue keeps parked heads: walking them would have
 * made this a cycle that tried heads.
 */
static bool settle_kept(struct cyc *y)
{
    struct kueue *k = y->k;
    int n = y->s->ncq;
    bool pb, tried = false;
    for (int c = 0; c < n; c++)
        if (kq_nm_kept(k, c, &pb) && kq_pq_nact(&k->pq[c]) > 0)
            kq_nm_unquiet(k, c);
    for (int c = 0; c < n; c++) {
        k->cq_taken[c] = 0;
        if (kq_nm_kept(k, c, &pb)) {
            if (y->s->cqs[c].active && kq_pq_npark(&k->pq[c]) > 0)
                tried = true;
        } else if (pb) {
            k->cq_taken[c] = 1;
            kq_pq_unpark(k, c);
        }
    }
    for (int c = 0; c < n; c++)
        if (k->cq_taken[c])
            kq_nm_put_back_root(k, c);
    return tried;
}

/*
 * A scheduling cycle. The migration pass first (moves free the later
 * flavor for others); then rounds of one head per ClusterQueue, each
 * nominated against the snapshot and processed in Kueue's order
 * (non-borrowing first, priority, FIFO), until no head is left or, with
 * Kueue's one pop per queue per cycle, after one round. The act arrays do
 * not change during the cycle (a cursor per queue skips what was
 * handled): what the heads' outcomes move is applied at the end.
 */
void kq_cycle(struct kueue *k, struct fq_engine *e, int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    struct cyc y = {.k = k,
                    .e = e,
                    .s = k->snap,
                    .now = now,
                    .limit = cfg->policy.max_admissions_per_cq_per_cycle,
                    .cooldown = cfg->policy.flavor_failure_cooldown};
    y.cohort_preempted =
        fq_xcalloc((size_t)y.s->adm.nnodes + 1, sizeof(*y.cohort_preempted));
    k->need_cycle = false;
    k->cycle_no++;
    k->in_cycle = true;
    if (k->starved_after_ms >= 0)
        kq_starved_update(k, now);
    if (cfg->policy.migrate_to_preferred_flavor && k->nmig > 0 &&
        (k->mig_dirty || now >= k->mig_retry))
        kq_mig_pass(k, e, now);
    y.reserved0 = k->stats.reservations;
    bool tried = k->nm && settle_kept(&y);
    for (size_t c = 0; c < (size_t)y.s->ncq; c++) {
        k->cq_cur[c] = 0;
        k->cq_taken[c] = 0;
        k->cq_blocked[c] = false;
    }
    for (;;) {
        int nheads = pick_heads(&y);
        if (nheads == 0)
            break;
        nominate(&y, nheads);
        qsort(k->heads, (size_t)nheads, sizeof(*k->heads), kq_head_cmp);
        bool moved = false;
        if (y.s->adm.fair)
            process_fair(&y, nheads);
        else
            for (int h = 0; h < nheads; h++)
                moved = process(&y, k->heads[h], moved);
        if (y.limit == 1)
            break; /* Kueue: one pop per CQ per cycle. */
    }
    /* A cycle that tried no head took no time (Kueue's scheduler sleeps
     * until a queue has a head). */
    if (y.nhandled > 0 || tried)
        after_heads(&y);
    kq_nm_cycle_end(k);
    for (size_t i = 0; i < y.naside; i++) {
        fq_adm_charge(&y.s->adm, y.aside[i].cq, y.aside[i].nuse, y.aside[i].fr,
                      y.aside[i].amt, -1);
        kq_nm_touch(k, y.aside[i].cq);
    }
    free(y.aside);
    free(y.cohort_preempted);
    for (size_t i = 0; i < y.nhandled; i++) {
        struct rec *rc = k->handled[i];
        if (!rc->w.pending)
            kq_pq_remove(k, rc);
        else if (kq_rec_parked(k, rc))
            kq_pq_park(k, rc);
    }
    /* A starved workload that got its room: the heads parked behind it
     * wait for the next cycle (kq_starved_update puts them back), which
     * no release may bring. */
    for (int c = 0; k->starved && c < y.s->ncq; c++) {
        if (k->starved[c] && !k->starved[c]->w.pending)
            k->need_cycle = true;
        k->starved[c] = NULL; /* a record may go before the next cycle */
    }
    kq_holders_settle(k);
}
