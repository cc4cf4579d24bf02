/*
 * admit.c - what a scheduling cycle does to a workload: reserve its quota
 * (the pending -> reserved transition), mark it pending with Kueue's
 * message, preempt for it, and move a reserved workload to a preferred
 * flavor (the migrate_to_preferred_flavor switch).
 */
#include "flexq/paths.h"
#include "kueue/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kq_fmt_qty(const char *res, int64_t v, char *buf, size_t n)
{
    enum fq_qformat f = FQ_QF_DECIMAL_SI;
    if (!strcmp(res, "memory") || strstr(res, "storage"))
        f = FQ_QF_BINARY_SI;
    fq_quantity_format(v, fq_quantity_scale_for(res), f, buf, n);
}

/* Writes status.admission and QuotaReserved (and Admitted without checks). */
void kq_reserve(struct kueue *k, struct fq_engine *e, struct snap *s,
                struct wl *w, const struct fq_adm_result *r, int64_t now,
                const char *how)
{
    struct rec *rc = (struct rec *)w; /* every wl here is a record's */
    k->quota_moved = true;
    /* The record changes below without being derived: its fingerprint no
     * longer says what it was derived from (a workload reserved, then
     * preempted and released within one second, came back to a status
     * equal to the one fingerprinted, and its record was not derived
     * again: a holder in no queue). */
    rc->fp_ok = false;
    kq_account(k, rc, -1);
    struct cq_info *c = &s->cqs[w->cq];
    /* Only status changes, and it does: in place. */
    struct fq_value *obj = fq_objstore_edit_in_place(
        fq_engine_store(e), FQ_KIND_WORKLOAD, w->ns, w->name);
    if (!obj)
        return;
    struct fq_value *adm = fq_value_map();
    fq_map_set(adm, "clusterQueue", fq_value_str(c->name));
    struct fq_value *psa = fq_value_seq();
    uint64_t flv = 0;
    for (int p = 0; p < w->npodsets; p++) {
        struct fq_value *a = fq_value_map();
        fq_map_set(a, "name", fq_value_str(w->ps[p].name));
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
            kq_fmt_qty(s->adm.res_names[res], amt, q, sizeof(q));
            fq_map_set(ru, s->adm.res_names[res], fq_value_str(q));
        }
        fq_map_set(a, "flavors", fl);
        fq_map_set(a, "resourceUsage", ru);
        fq_map_set(a, "count", fq_value_int(r->count[p]));
        if (p < FQ_ADM_MAX_PODSETS && k->tas_assign[p]) {
            fq_map_set(a, "topologyAssignment", k->tas_assign[p]);
            k->tas_assign[p] = NULL;
        }
        fq_seq_push(psa, a);
    }
    fq_map_set(adm, "podSetAssignments", psa);
    fq_map_set(fq_map_ensure_map(obj, "status"), "admission", adm);
    kq_cond_set(obj, "QuotaReserved", "True", "QuotaReserved", c->reserved_msg,
                now);
    cond_clear(obj, "Evicted", "QuotaReserved", "Previously: evicted", now);
    cond_clear(obj, "Preempted", "QuotaReserved", "Previously: preempted", now);
    /* Checks that apply to the assigned flavors. */
    kq_sync_checks(s, c, obj, flv, now);
    const struct fq_value *cl = status_get(obj, "admissionChecks");
    bool checks = fq_value_len(cl) > 0;
    bool ready = true;
    for (size_t i = 0; i < fq_value_len(cl); i++)
        if (strcmp(str_at(fq_seq_at(cl, i), "state", ""), "Ready"))
            ready = false;
    if (!checks || ready)
        kq_cond_set(obj, "Admitted", "True", "Admitted",
                    "The workload is admitted", now);
    else
        kq_cond_set(obj, "Admitted", "False", "UnsatisfiedAdmissionChecks",
                    "The workload has not all admission checks ready", now);
    fq_objstore_edited(fq_engine_store(e), FQ_KIND_WORKLOAD, w->ns, w->name,
                       false);
    const struct fq_value *so = obj;
    /* The "Flavors considered" part of Kueue's event, shortened (made
     * only when Events are). */
    struct fq_buf b = FQ_BUF_INIT;
    bool events = fq_engine_config(e)->record_events;
    for (int p = 0; events && p < w->npodsets; p++) {
        fq_buf_printf(&b, "%s%s: ", p ? ", " : "", w->ps[p].name);
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
    /* The snapshot follows: it holds the usage from now on. */
    bool new_holder = !w->holds; /* not a migration */
    w->holds = true;
    w->pending = false;
    kq_wl_set_use(w, r->nuse, r->use_fr, r->use_amt);
    if (new_holder) {
        struct wl_hold *hd = kq_wl_hold(w);
        hd->reserved_at = now;
        hd->grace_rsv = now;
        hd->grace_since = 0;
    }
    kq_account(k, rc, +1);
    if (new_holder && k->afs_on)
        kq_afs_penalty(k, e, w);
    if (!rc->holder)
        kq_holders_add(k, rc);
    else
        kq_holder_fill(k, kq_holder_at(k, rc));
}

/* Writes QuotaReserved=False with a reason and message, when it changed
 * and pendmsg.c does not hold a count-only change back.
 * The stored tree is edited in place, so it is the object the Event
 * names, and the store's revision after the edit is the one its notice
 * carries: no second lookup of the workload. */
void kq_set_pending(struct kueue *k, struct fq_engine *e, struct wl *w,
                    const char *reason, const char *msg, int64_t now)
{
    if (w->why_msg && !strcmp(w->why_msg, msg)) {
        kq_pendmsg_drop(k, w); /* the counts came back */
        return;
    }
    if (kq_pendmsg_hold(k, w, reason, msg, now))
        return;
    kq_pendmsg_write(k, e, w, reason, msg, now);
}

void kq_pendmsg_write(struct kueue *k, struct fq_engine *e, struct wl *w,
                      const char *reason, const char *msg, int64_t now)
{
    struct rec *rc = (struct rec *)w;
    kq_pendmsg_drop(k, w);
    rc->why_rsn = kq_pendmsg_reason_code(reason);
    struct fq_objstore *st = fq_engine_store(e);
    struct fq_value *obj =
        fq_objstore_edit_in_place(st, FQ_KIND_WORKLOAD, w->ns, w->name);
    if (obj && kq_cond_set(obj, "QuotaReserved", "False", reason, msg, now)) {
        fq_objstore_edited(st, FQ_KIND_WORKLOAD, w->ns, w->name, false);
        /* Our own message: the record stays true (w is one). Read before
         * the Event, which flexqd stores as an object of its own. */
        rc->own_rev = fq_objstore_revision(st);
        rc->msg_at = now;
        fq_engine_event(e, obj, "Warning", reason, "%s", msg);
    }
    size_t n = strlen(msg) + 1;
    w->why_msg = fq_xrealloc(w->why_msg, n);
    memcpy(w->why_msg, msg, n);
}

/* A ClusterQueue's path in its cohort tree, as Kueue writes it in the
 * preemption message: "/root/.../cq" (just "/cq" without a cohort). */
static void cq_path(const struct snap *s, int cq, char *buf, size_t n)
{
    buf[0] = '\0';
    if (cq < 0 || cq >= s->ncq) {
        snprintf(buf, n, "UNKNOWN");
        return;
    }
    const char *parts[32];
    int np = 0;
    parts[np++] = s->cqs[cq].name;
    int node = s->adm.nodes[s->adm.cqs[s->cqs[cq].adm].node].parent;
    while (node >= 0 && np < 32) {
        const char *name = NULL;
        for (int i = 0; i < s->nco && !name; i++)
            if (s->co_node[i] == node)
                name = s->co_name[i];
        parts[np++] = name ? name : "UNKNOWN";
        node = s->adm.nodes[node].parent;
    }
    size_t len = 0;
    for (int i = np - 1; i >= 0 && len < n; i--) {
        int w = snprintf(buf + len, n - len, "/%s", parts[i]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

void kq_preempt(struct kueue *k, struct fq_engine *e, struct wl *victim,
                const struct wl *by, int reason, int64_t now)
{
    k->quota_moved = true;
    struct fq_value *obj = fq_objstore_edit_status(
        fq_engine_store(e), FQ_KIND_WORKLOAD, victim->ns, victim->name);
    if (!obj)
        return;
    /* Kueue's HumanReadablePreemptionReasons. */
    const char *why = reason == FQ_ADM_IN_CLUSTER_QUEUE ?
                          "prioritization in the ClusterQueue" :
                      reason == FQ_ADM_IN_COHORT_RECLAMATION ?
                          "reclamation within the cohort" :
                      reason == FQ_ADM_IN_COHORT_FAIR_SHARING ?
                          "Fair Sharing within the cohort" :
                          "reclamation within the cohort while borrowing";
    /* The paths name the preemptor's ClusterQueue, which the metric
     * kueue_preempted_workloads_total{preempting_cluster_queue} reads. */
    char from[256], to[256];
    cq_path(k->snap, by->cq, from, sizeof(from));
    cq_path(k->snap, victim->cq, to, sizeof(to));
    /* The preemptor's uid from its stored object (the record keeps no
     * copy: it is read here only, once a preemption). */
    const struct fq_value *bmd =
        fq_map_get(stored(e, FQ_KIND_WORKLOAD, by->ns, by->name), "metadata");
    const char *uid = str_at(bmd, "uid", "");
    const char *juid =
        str_at(fq_map_get(bmd, "labels"), "kueue.x-k8s.io/job-uid", "");
    char msg[1024];
    snprintf(msg, sizeof(msg),
             "Preempted to accommodate a workload (UID: %s, JobUID: %s) "
             "due to %s; preemptor path: %s; preemptee path: %s",
             *uid ? uid : "UNKNOWN", *juid ? juid : "UNKNOWN", why, from, to);
    kq_evict(obj, "Preempted", msg, now);
    kq_cond_set(obj, "Preempted", "True", fq_adm_preempt_reason_str(reason),
                msg, now);
    fq_objstore_put_status(fq_engine_store(e), FQ_KIND_WORKLOAD, victim->ns,
                           victim->name, obj, NULL, NULL);
    const struct fq_value *so =
        stored(e, FQ_KIND_WORKLOAD, victim->ns, victim->name);
    if (so) {
        fq_engine_event(e, so, "Normal", "Preempted", "%s", msg);
        fq_engine_event(e, so, "Normal", "EvictedDueToPreempted", "%s", msg);
    }
    victim->evicting = true;
    ((struct rec *)victim)->fp_ok = false; /* as in kq_reserve */
    k->stats.preemptions++;
}

void kq_adm_wl(const struct wl *w, struct fq_adm_wl *aw, bool cooldown)
{
    memset(aw, 0, sizeof(*aw));
    aw->cq = -1;
    aw->priority = w->prio;
    aw->ts = w->qts;
    aw->npodsets = w->npodsets;
    aw->ps = w->ps;
    aw->avoid_flv = cooldown ? w->avoid : 0;
    if (w->is_slice) {
        aw->forced_flv = w->slice->flv;
        aw->base_count = w->slice->base;
    }
}

/*
 * Can w fit at all, with the flavors in `skip` left out? A necessary
 * condition of a Fit, and cheap: each podset, at its smallest count, must
 * find in each resource group it asks of a flavor it may use with room
 * for each of those resources (the room fq_adm_assign compares with).
 */
static bool might_fit(const struct snap *s, int cq, const struct wl *w,
                      uint64_t skip)
{
    const struct fq_adm_cq *ac = &s->adm.cqs[cq];
    int nres = s->adm.nres;
    for (int p = 0; p < w->npodsets; p++) {
        const struct fq_adm_podset *ps = &w->ps[p];
        uint32_t asked = 0;
        for (int r = 0; r < nres; r++)
            if (ps->req[r] > 0)
                asked |= 1u << r;
        for (int g = 0; g < ac->ngroups; g++) {
            const struct fq_adm_group *grp = &ac->groups[g];
            uint32_t need = grp->res_mask & asked;
            if (!need)
                continue;
            bool room = false;
            for (int i = 0; i < grp->nflv && !room; i++) {
                int f = grp->flv[i];
                uint64_t bit = 1ull << f;
                if ((skip & bit) || !(ps->selector_ok & bit) ||
                    !(ps->taint_ok & bit))
                    continue;
                room = true;
                for (int r = 0; r < nres && room; r++)
                    if ((need >> r) & 1)
                        room = ps->req[r] * ps->min_count <=
                               fq_adm_available(&s->adm, cq, f * nres + r);
            }
            if (!room)
                return false;
        }
    }
    return true;
}

/* How many workloads of each of a queue's two sequences (act, park)
 * kq_starved_update looks at for one that has waited long enough. */
#define YIELD_LOOK 64

/* Flavors every podset of w may use (nodeSelector, affinity, taints). */
static uint64_t usable_flavors(const struct wl *w)
{
    uint64_t m = ~0ull;
    for (int p = 0; p < w->npodsets; p++)
        m &= w->ps[p].selector_ok & w->ps[p].taint_ok;
    return w->npodsets > 0 ? m : 0;
}

/* Whether w would fit its ClusterQueue's own nominal quota with nothing
 * else there, on some flavor it may use of each resource group: a
 * workload that never could must not hold a flavor from those behind it. */
static bool fits_empty(const struct snap *s, const struct wl *w)
{
    const struct fq_adm *a = &s->adm;
    int cq = s->cqs[w->cq].adm;
    const struct fq_adm_cq *ac = &a->cqs[cq];
    const struct fq_adm_cell *cells = a->nodes[ac->node].cells;
    uint64_t usable = usable_flavors(w);
    for (int g = 0; g < ac->ngroups; g++) {
        const struct fq_adm_group *grp = &ac->groups[g];
        bool asks = false, some = false;
        for (int i = 0; i < grp->nflv && !some; i++) {
            int f = grp->flv[i];
            bool ok = (usable >> f) & 1;
            for (int r = 0; r < a->nres && ok; r++) {
                if (!((grp->res_mask >> r) & 1))
                    continue;
                int64_t need = 0;
                for (int p = 0; p < w->npodsets; p++)
                    need += w->ps[p].req[r] * w->ps[p].count;
                asks |= need > 0;
                ok = need <= cells[f * a->nres + r].nominal;
            }
            some = ok;
        }
        if (asks && !some)
            return false;
    }
    return true;
}

/* The first record of q, in Kueue's order, that decodes, has waited since
 * `since` or longer, may use some flavor and would fit its queue's own
 * quota; NULL if none among the first YIELD_LOOK. */
static struct rec *first_starved(const struct snap *s, struct kq_seq *q,
                                 int64_t since)
{
    for (size_t i = 0; i < q->n && i < YIELD_LOOK; i++) {
        struct rec *p = kq_seq_at(q, i);
        if (p->ok && p->w.qts <= since && usable_flavors(&p->w) &&
            fits_empty(s, &p->w))
            return p;
    }
    return NULL;
}

/*
 * policy.starved_after_ms (off: < 0). Without it a move of policy (b)
 * and a head that fits pass an older workload that does not fit yet: on
 * Plan A, kept full, they take each chip it frees before a wide workload
 * that may only use Plan A (a long job pinned there) sees enough of them
 * at once (Philly's dev split: a 32-GPU job waited 306 h, against 96 h
 * under Kueue). With it, the first workload of each queue in Kueue's
 * order (priority, then queue time) that has waited that long is the
 * queue's starved one: a move, and a head behind it, may not use the
 * flavors it may use; they fall to a later flavor (Plan B) or wait, and
 * the room Plan A frees adds up for it. A workload that would not fit the
 * queue's own quota even with nothing else there is never the starved
 * one (it would hold the flavor for good). One per queue, found again at
 * each cycle's start; when it changes, its root's failed nominations are
 * forgotten (nommemo.c), as they were found under another rule.
 */
void kq_starved_update(struct kueue *k, int64_t now)
{
    const struct snap *s = k->snap;
    int64_t since = now - k->starved_after_ms;
    for (int c = 0; c < s->ncq; c++) {
        struct pq *q = &k->pq[c];
        struct rec *w = NULL;
        if (k->starved_after_ms >= 0 && s->cqs[c].active) {
            struct rec *a = first_starved(s, &q->act, since);
            struct rec *p = first_starved(s, &q->park, since);
            w = !a ? p : !p ? a : kq_rec_cmp(a, p) < 0 ? a : p;
        }
        uint64_t fp = w ? (fq_smap_hash(w->key) ^ (uint64_t)w->w.qts) | 1 : 0;
        k->starved[c] = w;
        k->starved_flv[c] = w ? usable_flavors(&w->w) : 0;
        if (fp != k->starved_fp[c]) {
            /* Those parked behind the last one were parked by the rule
             * (or found no room it had): they are tried again. */
            if (k->starved_fp[c]) {
                kq_pq_unpark(k, c);
                kq_nm_put_back_root(k, c);
            }
            k->starved_fp[c] = fp;
            kq_nm_touch(k, s->cqs[c].adm);
        }
    }
}

uint64_t kq_yield_mask(const struct kueue *k, const struct rec *rc)
{
    int c = rc->w.cq;
    if (c < 0 || !k->starved || !k->starved[c] || k->starved[c] == rc ||
        kq_rec_cmp(k->starved[c], rc) > 0)
        return 0;
    return k->starved_flv[c];
}

/* Policy (b): a reserved workload waiting on a check of a later flavor moves
 * to an earlier flavor that now fits. Returns true when it moved. An
 * attempt that does not fit cannot fit later while no quota is released
 * on a flavor it may move to and no flavor cool-down of it ends (a
 * flavor's room depends on that flavor's usage alone, and shrinks as it
 * grows), so until then the record says so and nothing is tried. */
bool kq_try_migrate(struct kueue *k, struct fq_engine *e, struct rec *rc,
                    int64_t now)
{
    struct snap *s = k->snap;
    struct wl *w = &rc->w;
    struct cq_info *c = &s->cqs[w->cq];
    /* The flavors where it is, and those after them, are skipped; so is
     * a flavor in its failure cool-down (no better than where it is). */
    struct wl_hold *hd = w->hold; /* a candidate holds quota */
    uint64_t skip = hd->mig_skip;
    int64_t retry = FQ_NEVER;
    if (w->avoid_ann && fq_engine_config(e)->policy.flavor_failure_cooldown)
        skip |= kq_avoid_mask(&s->adm, w->avoid_ann, now, &retry);
    uint64_t sum = 0;
    uint64_t to =
        ~skip & (s->adm.nflv < 64 ? (1ull << s->adm.nflv) - 1 : ~0ull);
    for (uint64_t m = to; m; m &= m - 1)
        sum += k->rel_flv[__builtin_ctzll(m)];
    if (hd->mig_valid && hd->mig_sum == sum && now < hd->mig_retry)
        return false;
    /* Not cached as "cannot fit": it may move once the starved one goes. */
    if (kq_yield_mask(k, rc) & to)
        return false;
    /* When its usage is on flavors it may not move to (always, unless
     * its podsets sit on different flavors of one group), whether it
     * might fit does not depend on that usage: a move that cannot fit is
     * known before the usage is taken out. */
    uint64_t own = 0;
    for (int u = 0; u < w->nuse && s->adm.nres > 0; u++)
        own |= 1ull << ((w->use_fr[u] / s->adm.nres) % FQ_ADM_MAX_FLAVORS);
    if (!w->is_slice && !(own & ~skip) && !might_fit(s, c->adm, w, skip)) {
        hd->mig_valid = true;
        hd->mig_sum = sum;
        hd->mig_retry = retry;
        return false;
    }
    struct fq_adm_wl aw;
    kq_adm_wl(w, &aw, false);
    aw.cq = c->adm;
    aw.skip_flv = skip;
    aw.no_msg = true; /* a move is a Fit or nothing */
    /* Its own usage does not count against the move; taking it out and
     * putting it back is not a release (neither the release counts nor
     * mig_dirty keep a trace of it: otherwise every attempt would make
     * the next cycle look at every candidate again, for nothing). */
    uint64_t rel[FQ_ADM_MAX_FLAVORS];
    size_t nrel = (size_t)s->adm.nflv * sizeof(rel[0]);
    memcpy(rel, k->rel_flv, nrel);
    bool mig_dirty = k->mig_dirty;
    uint64_t mig_rel = k->mig_rel;
    kq_account(k, rc, -1);
    struct fq_adm_result r;
    bool fits = w->is_slice || might_fit(s, c->adm, w, aw.skip_flv);
    if (fits)
        fq_adm_assign(&s->adm, &aw, NULL, 0, &r);
    bool moved = fits && r.mode == FQ_ADM_FIT;
    if (moved) {
        kq_reserve(k, e, s, w, &r, now, " (moved to a preferred flavor)");
        k->stats.migrations++;
    } else {
        kq_account(k, rc, +1);
        memcpy(k->rel_flv, rel, nrel);
        k->mig_dirty = mig_dirty;
        k->mig_rel = mig_rel;
        hd->mig_valid = true;
        hd->mig_sum = sum;
        hd->mig_retry = retry;
    }
    if (fits)
        fq_adm_result_release(&r);
    return moved;
}

bool kq_ns_matches(struct fq_engine *e, const struct cq_info *c, const char *ns)
{
    if (!c->view.namespace_selector.present)
        return false;
    struct fq_kv kv[65];
    size_t n = 0;
    kv[n].key = "kubernetes.io/metadata.name";
    kv[n++].value = ns;
    const struct fq_value *o = stored(e, FQ_KIND_NAMESPACE, "", ns);
    const struct fq_value *labels = fq_meta_labels(o);
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
