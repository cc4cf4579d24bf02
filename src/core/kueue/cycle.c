/*
 * cycle.c - the scheduling cycle: Kueue's round of heads, one nomination
 * per ClusterQueue (admission.c's flavor assignment), entries in Kueue's
 * order, then reserve, preempt or mark pending, and the migration pass
 * after it.
 *
 * Invariant 4 (cycle pace and heads per queue) is kept here.
 */
#include "kueue/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kq_cycle(struct kueue *k, struct fq_engine *e, int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    struct snap *s = k->snap;
    int limit = cfg->policy.max_admissions_per_cq_per_cycle;
    bool cooldown = cfg->policy.flavor_failure_cooldown;
    k->need_cycle = false;
    k->cycle_no++;
    k->in_cycle = true;

    /* Policy (b) first: moves free the later flavor for others. */
    if (cfg->policy.migrate_to_preferred_flavor && k->nmig > 0 &&
        (k->mig_dirty || now >= k->mig_retry))
        kq_mig_pass(k, e, now);

    /* Heads come from each queue's act array, in Kueue's heap order; a
     * cursor per queue skips those handled in this cycle. The arrays do
     * not change during the cycle: what a head's outcome moves (admitted:
     * out of the queue; inadmissible: to park) is applied at the end. */
    size_t ncq = (size_t)s->ncq;
    size_t *cur = k->cq_cur;
    int *taken = k->cq_taken;
    bool *blocked = k->cq_blocked;
    struct rec **heads = k->heads;
    for (size_t c = 0; c < ncq; c++) {
        cur[c] = k->pq[c].alo;
        taken[c] = 0;
        blocked[c] = false;
    }
    size_t nhandled = 0;
    bool progress = true;
    while (progress) {
        progress = false;
        /* One head per CQ per round; heads ordered as Kueue's iterator
         * does (non-borrowing first, then priority, then FIFO). */
        int nheads = 0;
        for (size_t c = 0; c < ncq; c++) {
            if (blocked[c] || !s->cqs[c].active)
                continue;
            if (limit > 0 && taken[c] >= limit)
                continue;
            struct pq *q = &k->pq[c];
            bool strict =
                s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO;
            for (; cur[c] < q->nact; cur[c]++) {
                struct rec *r = q->act[cur[c]];
                if (r->done == k->cycle_no)
                    continue;
                /* A parked workload ahead of it blocks a StrictFIFO
                 * queue. */
                if (strict && q->plo < q->npark &&
                    kq_rec_cmp(q->park[q->plo], r) < 0) {
                    blocked[c] = true;
                    break;
                }
                heads[nheads++] = r;
                break;
            }
        }
        /* Nominate every head against the snapshot, then process them
         * in Kueue's order: non-borrowing first, priority, FIFO. A head
         * is assigned again when it is processed only if an earlier one
         * reserved or preempted (fq_adm_assign reads nothing else that
         * processing moves): until then its nomination is its outcome. */
        for (int h = 0; h < nheads; h++) {
            struct wl *w = &heads[h]->w;
            int64_t next = FQ_NEVER;
            w->avoid = kq_avoid_mask(&s->adm, w->avoid_ann, now, &next);
            struct fq_adm_wl aw;
            kq_adm_wl(w, &aw, cooldown);
            aw.cq = s->cqs[w->cq].adm;
            struct fq_adm_result *r = &k->nom[w->cq];
            fq_adm_assign(&s->adm, &aw, k->hs, (int)k->nh, r);
            w->nom_fit = r->mode == FQ_ADM_FIT;
            w->nom_borrows = r->borrows;
        }
        qsort(heads, (size_t)nheads, sizeof(*heads), kq_head_cmp);
        bool moved = false; /* quota or holders moved since nominating */
        for (int h = 0; h < nheads; h++) {
            struct rec *rc = heads[h];
            struct wl *w = &rc->w;
            struct cq_info *c = &s->cqs[w->cq];
            bool strict = s->adm.cqs[c->adm].strategy == FQ_ADM_STRICT_FIFO;
            rc->done = k->cycle_no;
            FQ_GROW(k->handled, k->caphandled, nhandled + 1);
            k->handled[nhandled++] = rc;
            taken[w->cq]++;
            progress = true;
            struct fq_adm_result *r = &k->nom[w->cq];
            if (moved) {
                struct fq_adm_wl aw;
                kq_adm_wl(w, &aw, cooldown);
                aw.cq = c->adm;
                fq_adm_result_release(r);
                fq_adm_assign(&s->adm, &aw, k->hs, (int)k->nh, r);
            }
            /* A slice never preempts the slice it replaces. */
            for (int t = 0;
                 w->replaces && r->mode == FQ_ADM_PREEMPT && t < r->ntargets;
                 t++)
                if (!strcmp(k->hw[r->targets[t]]->w.name, w->replaces) &&
                    !strcmp(k->hw[r->targets[t]]->w.ns, w->ns))
                    r->mode = FQ_ADM_NO_CANDIDATES;
            if (r->mode == FQ_ADM_FIT) {
                kq_reserve(k, e, s, w, r, now, NULL);
                if (w->replaces)
                    fq_kueue_slice_replaced(e, w->ns, w->replaces, w->name,
                                            now);
                rc->parked = 0;
                moved = true;
            } else if (r->mode == FQ_ADM_PREEMPT && r->ntargets > 0) {
                for (int t = 0; t < r->ntargets; t++) {
                    struct rec *v = k->hw[r->targets[t]];
                    if (!v->w.evicting) {
                        kq_preempt(k, e, &v->w, w, r->target_reason[t], now);
                        k->hs[r->targets[t]].evicting = true;
                    }
                }
                moved = true;
                char msg[FQ_ADM_MSG_MAX + 64];
                snprintf(msg, sizeof(msg),
                         "%s%sPending the preemption of %d workload(s)", r->msg,
                         r->msg[0] ? ". " : "", r->ntargets);
                kq_set_pending(e, w, "WaitingForPreemptedWorkloads", msg, now);
                /* Stays at the head: retried next cycle. */
                k->need_cycle = true;
                blocked[w->cq] = true;
            } else if (w->nom_fit) {
                /* Another head took the room first: retry next cycle. */
                kq_set_pending(e, w, "Pending",
                               "Workload no longer fits after processing "
                               "another workload",
                               now);
                k->need_cycle = true;
            } else {
                kq_set_pending(e, w, fq_adm_why_reason(r->why), r->msg, now);
                rc->parked = k->park_gen;
                if (strict)
                    blocked[w->cq] = true;
            }
            fq_adm_result_release(r);
        }
        /* Kueue: one pop per CQ per cycle. */
        if (limit == 1)
            break;
    }
    /* A cycle that tried no head took no time (Kueue's scheduler sleeps
     * until a queue has a head). */
    if (nhandled > 0) {
        k->stats.cycles++;
        k->last_cycle = now;
        /* Another cycle if some queue still has a head to try. */
        for (size_t c = 0; c < ncq && !k->need_cycle; c++) {
            if (blocked[c] || !s->cqs[c].active)
                continue;
            const struct pq *q = &k->pq[c];
            for (size_t i = cur[c]; i < q->nact; i++)
                if (q->act[i]->done != k->cycle_no) {
                    k->need_cycle = true;
                    break;
                }
        }
    }
    /* What the heads' outcomes moved. */
    for (size_t i = 0; i < nhandled; i++) {
        struct rec *rc = k->handled[i];
        if (!rc->w.pending)
            kq_pq_remove(k, rc);
        else if (kq_rec_parked(k, rc))
            kq_pq_park(k, rc);
    }
    kq_holders_settle(k);
}
