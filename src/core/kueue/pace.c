/*
 * pace.c - Kueue-paced cycles, ahead: with a cycle pace (policy.cycle_ms,
 * Kueue's 100 ms) most cycles try heads that cannot fit; a plan finds
 * them quiet once and replays only their effect (the heads' messages),
 * so virtual time can run far ahead without running each quiet cycle.
 *
 * A cache of outcomes: memo[shape, queue] holds a head shape's outcome
 * for the snapshot version it was found on (snap_ver), so any usage or
 * configuration change invalidates it; a plan is dropped whenever a
 * queue or the snapshot moves (ff_drop). test_kueue's pace tests and
 * the Kueue-policy scenarios (12-one-pop-per-cycle) prove a plan admits
 * exactly what the cycles it replaces would.
 */
#include "kueue/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * With a cycle pace (cycle_ms > 0: Kueue's one pop per ClusterQueue per
 * cycle), a deep queue is tried one head per cycle after every requeue,
 * and most of those cycles only find their head inadmissible and park it:
 * in a replay, hundreds of millions of settles that decide nothing. So at
 * the end of a run, ff_plan looks ahead over the next cycles, each taking
 * the next head of each queue as cycle() would, while every such head is
 * certainly inadmissible against the snapshot as it is now (its podset
 * shape's outcome, ff_quiet). The controller then wakes only for the
 * first cycle that may do more, and the next run, whenever it comes,
 * first replays the quiet cycles that came before its own time (ff_replay:
 * park those heads, count the cycles, move last_cycle). Nothing can change
 * the snapshot or the queues in between without a run, and a run replays
 * only the cycles before it, so every admission happens when it would
 * have, cycle by cycle. What differs: a replayed cycle does not rewrite
 * its head's QuotaReserved=False message (the head keeps its last one
 * until a real cycle tries it again). A plan looks 1, 2, 4, ... cycles
 * ahead, doubling while nothing else happens, so the work ahead is never
 * more than the cycles it replaces.
 */

/* Is this head certainly inadmissible now (NoFit or NoCandidates on a
 * queue whose outcome depends on nothing but its podsets and usage)? */
static bool ff_quiet(struct kueue *k, struct rec *r)
{
    struct snap *s = k->snap;
    struct wl *w = &r->w;
    if (r->shape == SHAPE_UNKNOWN)
        r->shape = kq_shape_of(k, w);
    if (r->shape < 0 || w->replaces || w->avoid_ann || w->cq < 0)
        return false;
    const struct fq_adm_cq *ac = &s->adm.cqs[s->cqs[w->cq].adm];
    if (ac->within_cq != FQ_ADM_NEVER ||
        ac->reclaim_within_cohort != FQ_ADM_NEVER ||
        ac->borrow_within_cohort != FQ_ADM_NEVER)
        return false; /* preemption: the holders matter */
    size_t at = (size_t)r->shape * (size_t)s->ncq + (size_t)w->cq;
    if (at >= k->memo_cap) {
        size_t cap = k->memo_cap ? k->memo_cap : 64;
        while (cap <= at)
            cap *= 2;
        k->memo = fq_xrealloc(k->memo, cap * sizeof(*k->memo));
        memset(&k->memo[k->memo_cap], 0,
               (cap - k->memo_cap) * sizeof(*k->memo));
        k->memo_cap = cap;
    }
    struct memo *m = &k->memo[at];
    if (m->ver != k->snap_ver) {
        struct fq_adm_wl aw;
        kq_adm_wl(w, &aw, false);
        aw.cq = s->cqs[w->cq].adm;
        aw.no_msg = true;
        struct fq_adm_result res;
        fq_adm_assign(&s->adm, &aw, k->hs, (int)k->nh, &res);
        m->ver = k->snap_ver;
        m->mode = (int8_t)res.mode;
        fq_adm_result_release(&res);
    }
    return m->mode == FQ_ADM_NOFIT || m->mode == FQ_ADM_NO_CANDIDATES;
}

/* The head queue c gives the next cycle when its first `skip` act
 * entries are taken (parked) already, or NULL; a StrictFIFO queue with a
 * parked workload ahead gives none. */
static struct rec *ff_head(struct kueue *k, size_t c, size_t skip)
{
    const struct snap *s = k->snap;
    struct pq *q = &k->pq[c];
    if (!s->cqs[c].active || skip >= kq_pq_nact(q))
        return NULL;
    struct rec *r = kq_pq_act(q, skip);
    struct rec *ph = kq_pq_park_head(q);
    if (s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO &&
        (skip > 0 || (ph && kq_rec_cmp(ph, r) < 0)))
        return NULL;
    return r;
}

/* Replays the planned quiet cycles whose time is before now. */
void kq_ff_replay(struct kueue *k, int64_t now)
{
    if (k->ff_n == 0)
        return;
    if (k->ff_snap_ver != k->snap_ver || k->ff_q_ver != k->q_ver) {
        k->ff_n = 0; /* cannot be: both move only in runs */
        return;
    }
    int64_t due = (now - (k->ff_incl ? 0 : 1) - k->last_cycle) / k->cycle_ms;
    k->ff_incl = false;
    if (due <= 0)
        return;
    if (due > k->ff_n)
        due = k->ff_n;
    /* Each of the `due` cycles parks the head of each queue: the first
     * `due` act entries of a queue, or one of a StrictFIFO queue (that
     * head, parked, blocks it from then on). */
    size_t ncq = (size_t)k->snap->ncq;
    for (size_t c = 0; c < ncq; c++) {
        if (!ff_head(k, c, 0))
            continue;
        const struct pq *q = &k->pq[c];
        const struct snap *s = k->snap;
        size_t live = kq_pq_nact(q);
        size_t m = (uint64_t)due < live ? (size_t)due : live;
        if (s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO)
            m = 1;
        kq_pq_park_first(k, c, m);
    }
    k->stats.cycles += (uint64_t)due;
    k->stats.attempts_inadmissible += (uint64_t)due; /* quiet cycles */
    k->last_cycle += due * k->cycle_ms;
    k->ff_n -= due;
    if (k->ff_n == 0)
        k->ff_slept = false;
    k->ff_snap_ver = k->snap_ver;
    k->ff_q_ver = k->q_ver;
}

/* Forgets the plan (a change came before its first cycle). */
static void ff_drop(struct kueue *k)
{
    k->ff_n = 0;
    if (k->ff_slept)
        k->need_cycle = true; /* the plan had put it off */
    k->ff_slept = false;
}

/*
 * A change the controller sees. One at the instant of the plan comes
 * before every planned cycle. One later comes after those before its
 * time (ff_replay), and after the one at its time too when a controller
 * made it in a settle before this controller ran: a cycle due then would
 * have run first.
 */
void kq_ff_note(struct kueue *k, struct fq_engine *e, const struct fq_change *c)
{
    if (k->ff_n == 0)
        return;
    int64_t now = fq_engine_now(e);
    if (now <= k->ff_at) {
        ff_drop(k);
        return;
    }
    if (c->by_controller && k->ran_at < now &&
        (now - k->last_cycle) % k->cycle_ms == 0 &&
        (now - k->last_cycle) / k->cycle_ms <= k->ff_n)
        k->ff_incl = true;
}

/* How many heads queue c gives the next cycles, one a cycle, until it
 * has none left (a StrictFIFO queue gives one: that head, parked, blocks
 * it). */
static size_t ff_heads(struct kueue *k, size_t c)
{
    const struct pq *q = &k->pq[c];
    if (!ff_head(k, c, 0))
        return 0;
    const struct snap *s = k->snap;
    if (s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO)
        return 1;
    return kq_pq_nact(q);
}

/* How many of the first n heads of queue c are quiet before the first
 * that is not. Heads of one shape get one outcome (ff_quiet's memo), so
 * a head of the shape of the quiet one before it is quiet too: a deep
 * queue is read at the cost of a load per head. */
static size_t ff_quiet_run(struct kueue *k, size_t c, size_t n)
{
    struct pq *q = &k->pq[c];
    int quiet_shape = -1; /* the shape of a quiet head before, or -1 */
    size_t i = 0;
    for (; i < n; i++) {
        struct rec *r = kq_pq_act(q, i);
        if (r->shape >= 0 && r->shape == quiet_shape && !r->w.replaces &&
            !r->w.avoid_ann)
            continue;
        if (!ff_quiet(k, r))
            break;
        quiet_shape = r->shape;
    }
    return i;
}

/*
 * Plans the quiet cycles after last_cycle (see above). The j-th cycle
 * ahead takes the j-th head of each queue that has one: it is quiet
 * when every one of those heads is, and the plan ends at the first that
 * is not, at the first with no head at all, or `ahead` cycles on. So
 * each queue is read on its own, up to the nearest end found so far.
 */
void kq_ff_plan(struct kueue *k, int64_t now)
{
    if (k->cycle_ms <= 0 || !k->snap || !k->need_cycle)
        return;
    /* What the next full run takes in first (records to derive, a
     * requeue, new configuration, slices) would change the queues
     * before the first cycle: no plan then. */
    if (k->dirty.n > 0 || k->requeue || k->config_dirty || k->slices.n > 0) {
        k->ff_n = 0;
        k->ff_slept = false;
        return;
    }
    if (k->ff_n > 0 && k->ff_snap_ver == k->snap_ver && k->ff_q_ver == k->q_ver)
        return; /* still true */
    k->ff_slept = false;
    size_t ncq = (size_t)k->snap->ncq;
    int64_t ahead = k->ff_len > 0 ? k->ff_len : 1;
    k->ff_len = ahead * 2 < FF_MAX_AHEAD ? ahead * 2 : FF_MAX_AHEAD;
    /* Admission fair sharing may reorder the queues at its next sample:
     * plan no cycle from then on. */
    if (k->afs_on && k->afs_next < INT64_MAX) {
        int64_t lim = (k->afs_next - k->last_cycle) / k->cycle_ms - 1;
        if (ahead > lim)
            ahead = lim > 0 ? lim : 0;
    }
    size_t n = (size_t)ahead; /* cycles planned so far */
    size_t most = 0;          /* the most heads a queue gives */
    for (size_t c = 0; c < ncq; c++) {
        size_t nh = ff_heads(k, c);
        if (nh > most)
            most = nh;
        size_t look = nh < n ? nh : n;
        size_t quiet = ff_quiet_run(k, c, look);
        if (quiet < look)
            n = quiet; /* cycle `quiet` takes a head that is not */
    }
    /* After the last quiet cycle no queue has a head: Kueue's scheduler
     * would sleep until something changes. */
    bool exhausted = most < n;
    k->ff_n = exhausted ? (int64_t)most : (int64_t)n;
    if (exhausted) {
        k->need_cycle = false;
        k->ff_slept = k->ff_n > 0;
    }
    k->ff_at = now;
    k->ff_snap_ver = k->snap_ver;
    k->ff_q_ver = k->q_ver;
}
