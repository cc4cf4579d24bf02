/*
 * lifecycle.c - the workload state machine of controller.c's diagram: one
 * function per transition (reserve is in admit.c), and lifecycle(), which
 * looks at one workload that changed or came due and performs the
 * transitions its conditions call for: checks synced to the ClusterQueue,
 * Admitted when every check is Ready, eviction for a check's Retry or
 * Rejected, a PodsReady timeout or deactivation, quota released after an
 * eviction, requeue after the backoff.
 *
 * Invariants (numbered as in controller.c): 2 and 3 are kept here.
 */
#include "kueue/internal.h"

#include "flexq/names.h"
#include "flexq/paths.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
bool kq_sync_checks(const struct snap *s, const struct cq_info *c,
                    struct fq_value *obj, uint64_t flv, int64_t now)
{
    const struct fq_value *old = status_get(obj, "admissionChecks");
    /* The entries it should have, in the ClusterQueue's order: the
     * (last) one of that name kept, or a new Pending one (NULL). */
    int n = c ? c->nchecks : 0, nwant = 0;
    const struct fq_value **want = fq_xcalloc((size_t)n + 1, sizeof(*want));
    bool same = true;
    for (int k = 0; k < n; k++) {
        if (!check_applies(s, c, &c->checks[k], flv))
            continue;
        const struct fq_value *found = NULL;
        for (size_t i = 0; i < fq_value_len(old); i++)
            if (!strcmp(str_at(fq_seq_at(old, i), "name", ""),
                        c->checks[k].name))
                found = fq_seq_at(old, i);
        same &= found && fq_seq_at(old, (size_t)nwant) == found;
        want[nwant++] = found;
    }
    same &= old && old->type == FQ_V_SEQ && fq_value_len(old) == (size_t)nwant;
    if ((nwant == 0 && !old) || same) {
        free(want);
        return false; /* as it is */
    }
    struct fq_value *nw = fq_value_seq();
    char ts[40];
    fmt_time(now, ts, sizeof(ts));
    for (int i = 0; i < nwant; i++) {
        if (want[i]) {
            fq_seq_push(nw, fq_value_clone(want[i]));
            continue;
        }
        int k = 0; /* the i-th applicable check */
        for (int seen = -1; k < n; k++)
            if (check_applies(s, c, &c->checks[k], flv) && ++seen == i)
                break;
        struct fq_value *ch = fq_value_map();
        fq_map_set(ch, "name", fq_value_str(c->checks[k].name));
        fq_map_set(ch, "state", fq_value_str("Pending"));
        fq_map_set(ch, "lastTransitionTime", fq_value_str(ts));
        fq_map_set(ch, "message", fq_value_str(""));
        fq_seq_push(nw, ch);
    }
    free(want);
    fq_map_set(fq_map_ensure_map(obj, "status"), "admissionChecks", nw);
    return true;
}

/* Resets every non-Pending check to Pending, as Kueue does on eviction. */
static bool reset_checks(struct fq_value *obj, int64_t now)
{
    struct fq_value *chs = fq_value_path(obj, FQ_WL_ADMISSION_CHECKS);
    char ts[40];
    fmt_time(now, ts, sizeof(ts));
    bool changed = false;
    for (size_t i = 0; i < fq_value_len(chs); i++) {
        struct fq_value *ch = fq_seq_at(chs, i);
        const char *state = fq_value_path_str(ch, "state", "Pending");
        if (!strcmp(state, "Pending"))
            continue;
        changed = true;
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
    return changed;
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
    char *msg = fq_xstrdup(
        fq_value_path_str(kq_cond_find(obj, "Evicted"), "message", ""));
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    fq_map_del(st, "admission");
    kq_cond_set(obj, "QuotaReserved", "False", "PendingEvaluation",
                "The workload has no reservation", now);
    kq_cond_set(obj, "Admitted", "False", "NoReservation",
                "The workload has no reservation", now);
    reset_checks(obj, now);
    /* Scoped checks no longer apply without an admission. */
    const char *cqn = fq_value_path_str(obj, FQ_WL_QUEUE_NAME, "");
    (void)cqn;
    bool deactivated = !fq_value_path_bool(obj, FQ_WL_ACTIVE, true);
    if (deactivated) {
        kq_cond_set(obj, "Requeued", "False", r, msg, now);
    } else if (!strcmp(r, "PodsReadyTimeout") || !strcmp(r, "AdmissionCheck")) {
        int64_t at =
            parse_time(fq_value_path_str(obj, FQ_WL_REQUEUE_AT, NULL), 0);
        if (at > now) {
            kq_cond_set(obj, "Requeued", "False", r, msg, now);
            if (at < k->lc_timer)
                k->lc_timer = at;
        } else {
            kq_cond_set(obj, "Requeued", "True", "BackoffFinished",
                        "The workload backoff was finished", now);
        }
    } else {
        kq_cond_set(obj, "Requeued", "True", r, msg, now);
    }
    (void)s;
    (void)cfg;
    k->requeue = true;
    k->stats.evictions++;
    k->lc_changed = true; /* the admission went */
    free(r);
    free(msg);
}

/* Marks a workload for eviction (Evicted=True) with a reason; true when
 * it changed. */
bool kq_evict(struct fq_value *obj, const char *reason, const char *msg,
              int64_t now)
{
    return kq_cond_set(obj, "Evicted", "True", reason, msg, now);
}

/* Sets spec.active=false with the conditions that say why (lifecycle();
 * a change of spec). */
static void deactivate(struct kueue *k, struct fq_value *obj, const char *cause,
                       const char *msg, int64_t now)
{
    if (fq_value_path_bool(obj, FQ_WL_ACTIVE, true)) {
        fq_value_set_path(obj, FQ_WL_ACTIVE, fq_value_bool(false));
        k->lc_spec = true;
    }
    char reason[96];
    snprintf(reason, sizeof(reason), "DeactivatedDueTo%s", cause);
    kq_cond_set(obj, "DeactivationTarget", "True", reason, msg, now);
    kq_cond_set(obj, "Evicted", "True", reason, msg, now);
    k->lc_changed = true;
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
 * PodsReady timeout, deactivation). Edits obj, the stored tree, in place,
 * and says what it changed in k->lc_changed (anything) and k->lc_spec
 * (spec.active): the caller tells the store. Its conditions are read in
 * one pass (cd: the caller's cond_scan of obj, which this updates), and
 * again after a step that changed something.
 */
/*
 * One look at a workload, shared by the transitions below: what they read
 * of it and of the configuration, and where they write. Each transition
 * sets k->lc_changed when it wrote, and the caller scans the conditions
 * again (kq_cond_scan) before the next one reads them.
 */
struct look {
    struct kueue *k;
    struct fq_engine *e;
    struct snap *s;
    const struct fq_engine_config *cfg;
    struct fq_value *obj;
    const struct fq_value **cd; /* [NCOND], kept current by rescan */
    int64_t now;
    bool active;    /* spec.active */
    bool has_adm;   /* status.admission set */
    const char *cq; /* status.admission.clusterQueue, "" without */
    struct cq_info *c;
};

static void rescan(struct look *l)
{
    if (l->k->lc_changed)
        kq_cond_scan(l->obj, l->cd);
}

/* maximumExecutionTimeSeconds and stop policies (kueue_policy.c): an
 * admitted workload past its time is deactivated, one of a queue being
 * drained is evicted; else a wakeup at its deadline. */
static void apply_policies(struct look *l)
{
    struct fq_kueue_policy pol;
    fq_kueue_policy_check(
        l->e, l->obj, l->c ? l->c->view.stop_policy : FQ_STOP_NONE,
        l->has_adm && l->active, cond_is_true(l->cd[C_ADMITTED]),
        cond_is_true(l->cd[C_EVICTED]), l->now, &pol);
    if (pol.deactivate_cause) {
        deactivate(l->k, l->obj, pol.deactivate_cause, pol.msg, l->now);
        l->active = false;
        kq_cond_scan(l->obj, l->cd);
    } else if (pol.evict_reason) {
        l->k->lc_changed |= kq_evict(l->obj, pol.evict_reason, pol.msg, l->now);
        kq_cond_scan(l->obj, l->cd);
    } else if (pol.wake_at < l->k->lc_timer) {
        l->k->lc_timer = pol.wake_at;
    }
}

/* active=false: Evicted=True (Deactivated, or the DeactivationTarget's
 * reason), unless already evicted or a deactivated workload without
 * quota. */
static void deactivate_inactive(struct look *l)
{
    const struct fq_value *dt = l->cd[C_DEACTIVATION_TARGET];
    if (l->active || cond_is_true(l->cd[C_EVICTED]) ||
        (!l->has_adm && cond_is_true(dt)))
        return;
    if (!dt)
        l->k->lc_changed |=
            kq_cond_set(l->obj, "Evicted", "True", "Deactivated",
                        "The workload is deactivated", l->now);
    else
        l->k->lc_changed |=
            kq_cond_set(l->obj, "Evicted", "True", str_at(dt, "reason", ""),
                        fq_value_path_str(dt, "message", ""), l->now);
}

/* deactivated -> pending: a user set active=true again (Kueue's
 * reactivation). */
static void reactivate(struct look *l)
{
    if (!l->active || !cond_is_true(l->cd[C_DEACTIVATION_TARGET]))
        return;
    struct kueue *k = l->k;
    const char *msg = "The workload was reactivated";
    k->lc_changed |= kq_cond_set(l->obj, "DeactivationTarget", "False",
                                 "Reactivated", msg, l->now);
    k->lc_changed |=
        kq_cond_set(l->obj, "Requeued", "True", "Reactivated", msg, l->now);
    k->lc_changed |= cond_clear(l->obj, "Evicted", "Reactivated", msg, l->now);
    k->lc_changed |=
        fq_map_del(fq_map_ensure_map(l->obj, "status"), "requeueState");
    k->need_cycle = true;
}

/* The flavors of the workload's admission, a bit per snapshot flavor. */
static uint64_t admitted_flavors(const struct look *l)
{
    uint64_t flv = 0;
    const struct fq_value *psa =
        fq_map_get(status_get(l->obj, "admission"), "podSetAssignments");
    for (size_t i = 0; i < fq_value_len(psa); i++) {
        const struct fq_value *fl = fq_map_get(fq_seq_at(psa, i), "flavors");
        for (size_t j = 0; fl && fl->type == FQ_V_MAP && j < fl->u.map.n; j++) {
            const char *name = fq_value_as_str(fl->u.map.items[j].val);
            int f = fq_adm_find_flavor(&l->s->adm, name ? name : "");
            if (f >= 0)
                flv |= 1ull << f;
        }
    }
    return flv;
}

/* The admission checks' states, read once. */
struct check_states {
    bool all_ready, retry, rejected;
    const char *name, *msg; /* the Rejected one's, else the first Retry's */
    int64_t requeue_at;     /* latest Retry's lastTransitionTime + after */
};

static void read_checks(const struct look *l, struct check_states *cs)
{
    *cs = (struct check_states){.all_ready = true};
    struct fq_value *chs = status_get(l->obj, "admissionChecks");
    for (size_t i = 0; i < fq_value_len(chs); i++) {
        struct fq_value *ch = fq_seq_at(chs, i);
        const char *state = fq_value_path_str(ch, "state", "Pending");
        if (strcmp(state, "Ready"))
            cs->all_ready = false;
        if (!strcmp(state, "Rejected")) {
            cs->rejected = true;
            cs->name = fq_value_path_str(ch, "name", "");
            cs->msg = fq_value_path_str(ch, "message", "");
        } else if (!strcmp(state, "Retry")) {
            cs->retry = true;
            if (!cs->name) {
                cs->name = fq_value_path_str(ch, "name", "");
                cs->msg = fq_value_path_str(ch, "message", "");
            }
            int64_t t = parse_time(
                fq_value_path_str(ch, "lastTransitionTime", NULL), l->now);
            int64_t at =
                t + fq_time_scaled(
                        l->e,
                        fq_value_path_int(ch, "requeueAfterSeconds", 0) * 1000);
            if (at > cs->requeue_at)
                cs->requeue_at = at;
        }
    }
}

/* reserved -> deactivated: a check was Rejected. */
static void reject_by_check(struct look *l, const struct check_states *cs)
{
    char msg[512];
    snprintf(msg, sizeof(msg),
             "The workload is deactivated due to AdmissionCheck "
             "rejected: \"%s\" (%s)",
             cs->name, cs->msg);
    char *m = fq_xstrdup(msg);
    char *n = fq_xstrdup(cs->name);
    deactivate(l->k, l->obj, "AdmissionCheck", m, l->now);
    fq_engine_event(l->e, l->obj, "Warning", "AdmissionCheckRejected",
                    "Deactivating workload because AdmissionCheck for "
                    "%s was Rejected: %s",
                    n, m);
    release_quota(l->k, l->e, l->s, l->obj, l->now);
    free(m);
    free(n);
}

/* flavor_failure_cooldown: the flavors check `check` failed on are
 * avoided until the cool-down ends (the avoid-flavors annotation). */
static void avoid_failed_flavors(struct look *l, const char *check,
                                 uint64_t flv)
{
    const struct fq_engine_config *cfg = l->cfg;
    struct snap *s = l->s;
    struct fq_buf b = FQ_BUF_INIT;
    const struct fq_value *ann = fq_meta_annotations(l->obj);
    const char *oldann =
        ann ? fq_value_as_str(fq_map_get(ann, FQ_ANN_AVOID_FLAVORS)) : NULL;
    if (oldann && *oldann)
        fq_buf_puts(&b, oldann);
    char until[40];
    fmt_time(l->now + fq_time_scaled(l->e, cfg->policy.flavor_cooldown_ms),
             until, sizeof(until));
    for (int f = 0; f < s->adm.nflv; f++) {
        bool on = (flv >> f) & 1;
        bool checked = false;
        for (int kk = 0; l->c && kk < l->c->nchecks; kk++)
            if (!strcmp(l->c->checks[kk].name, check) &&
                (l->c->checks[kk].on_flv == 0 ||
                 ((l->c->checks[kk].on_flv >> f) & 1)))
                checked = true;
        if (on && checked)
            fq_buf_printf(&b, "%s%s=%s", b.len ? "," : "", s->adm.flv_names[f],
                          until);
    }
    fq_map_set(
        fq_map_ensure_map(fq_map_ensure_map(l->obj, "metadata"), "annotations"),
        FQ_ANN_AVOID_FLAVORS, fq_value_str(fq_buf_str(&b)));
    fq_buf_release(&b);
    l->k->lc_changed = true;
}

/* reserved -> evicted: a check asked for a Retry. */
static void evict_for_retry(struct look *l, const struct check_states *cs,
                            uint64_t flv)
{
    char msg[512];
    snprintf(msg, sizeof(msg),
             "Evicted due to AdmissionCheck in Retry state: \"%s\" (%s)",
             cs->name, cs->msg);
    char *m = fq_xstrdup(msg);
    if (cs->requeue_at > l->now) {
        char ts[40];
        fmt_time(cs->requeue_at, ts, sizeof(ts));
        struct fq_value *rs = fq_map_ensure_map(
            fq_map_ensure_map(l->obj, "status"), "requeueState");
        fq_map_set(rs, "requeueAt", fq_value_str(ts));
        l->k->lc_changed = true;
    }
    if (l->cfg->policy.flavor_failure_cooldown)
        avoid_failed_flavors(l, cs->name, flv);
    l->k->lc_changed |= kq_evict(l->obj, "AdmissionCheck", m, l->now);
    fq_engine_event(l->e, l->obj, "Normal", "EvictedDueToAdmissionCheck", "%s",
                    m);
    release_quota(l->k, l->e, l->s, l->obj, l->now);
    free(m);
}

/* reserved -> admitted when every check is Ready (Admitted=False with
 * UnsatisfiedAdmissionChecks while not). */
static void admit_when_ready(struct look *l, bool all_ready)
{
    struct kueue *k = l->k;
    if (all_ready && !cond_is_true(l->cd[C_ADMITTED])) {
        k->lc_changed |= kq_cond_set(l->obj, "Admitted", "True", "Admitted",
                                     "The workload is admitted", l->now);
        int64_t rt = parse_time(fq_value_path_str(l->cd[C_QUOTA_RESERVED],
                                                  "lastTransitionTime", NULL),
                                l->now);
        fq_engine_event(l->e, l->obj, "Normal", "Admitted",
                        "Admitted by ClusterQueue %s, wait time since "
                        "reservation was %llds",
                        l->cq, (long long)((l->now - rt) / 1000));
        k->stats.admissions++;
    } else if (!all_ready) {
        k->lc_changed |= kq_cond_set(
            l->obj, "Admitted", "False", "UnsatisfiedAdmissionChecks",
            "The workload has not all admission checks ready", l->now);
    }
}

/* A reserved workload's checks: synced to its ClusterQueue, then the
 * transition their states call for. Returns true when the workload was
 * evicted or deactivated (nothing more to look at). */
static bool follow_checks(struct look *l)
{
    uint64_t flv = admitted_flavors(l);
    l->k->lc_changed |= kq_sync_checks(l->s, l->c, l->obj, flv, l->now);
    struct check_states cs;
    read_checks(l, &cs);
    if (cs.rejected) {
        reject_by_check(l, &cs);
        return true;
    }
    if (cs.retry) {
        evict_for_retry(l, &cs, flv);
        return true;
    }
    /* (sync_checks wrote no condition: cd holds) */
    admit_when_ready(l, cs.all_ready);
    return false;
}

/* admitted -> evicted (or deactivated past the requeue limit) when the
 * pods are not ready within waitForPodsReady's timeout, counted from
 * Admitted (or from WaitForRecovery). Asks for a wakeup at the timeout.
 * Returns true when the workload was evicted. */
static bool pods_ready_timeout(struct look *l)
{
    const struct fq_engine_config *cfg = l->cfg;
    const struct fq_value *const *cd = l->cd;
    struct kueue *k = l->k;
    if (!cfg->pods_ready.enable || !cond_is_true(cd[C_ADMITTED]) ||
        cond_is_true(cd[C_PODS_READY]) || cond_is_true(cd[C_EVICTED]))
        return false;
    int64_t at = parse_time(
        fq_value_path_str(cd[C_ADMITTED], "lastTransitionTime", NULL), l->now);
    const struct fq_value *pr = cd[C_PODS_READY];
    int64_t timeout = cfg->pods_ready.timeout_ms;
    if (pr && !strcmp(fq_value_path_str(pr, "reason", ""), "WaitForRecovery")) {
        at = parse_time(fq_value_path_str(pr, "lastTransitionTime", NULL), at);
        timeout = cfg->pods_ready.recovery_timeout_ms;
    }
    if (!pr)
        k->lc_changed |=
            kq_cond_set(l->obj, "PodsReady", "False", "WaitForStart",
                        "Not all pods are ready or succeeded", l->now);
    if (l->now < at + timeout) {
        if (at + timeout < k->lc_timer)
            k->lc_timer = at + timeout;
        return false;
    }
    int64_t count =
        fq_value_path_int(l->obj, "status.requeueState.count", 0) + 1;
    char msg[300];
    snprintf(msg, sizeof(msg), "Exceeded the PodsReady timeout %s/%s",
             fq_meta_namespace(l->obj), fq_meta_name(l->obj));
    struct fq_value *rs =
        fq_map_ensure_map(fq_map_ensure_map(l->obj, "status"), "requeueState");
    fq_map_set(rs, "count", fq_value_int(count));
    k->lc_changed = true;
    int lim = cfg->pods_ready.backoff_limit_count;
    if (lim >= 0 && count > lim) {
        fq_map_del(rs, "requeueAt");
        deactivate(k, l->obj, "RequeuingLimitExceeded",
                   "The workload is deactivated due to exceeding the "
                   "maximum number of re-queuing retries",
                   l->now);
    } else {
        char ts[40];
        fmt_time(l->now + backoff_ms(&cfg->pods_ready, count), ts, sizeof(ts));
        fq_map_set(rs, "requeueAt", fq_value_str(ts));
        k->lc_changed |= kq_evict(l->obj, "PodsReadyTimeout", msg, l->now);
    }
    fq_engine_event(l->e, l->obj, "Normal", "EvictedDueToPodsReadyTimeout",
                    "%s", msg);
    release_quota(k, l->e, l->s, l->obj, l->now);
    return true;
}

/* evicted -> pending when the requeue backoff is over (Requeued=True
 * BackoffFinished); asks for a wakeup at its end. */
static void requeue_after_backoff(struct look *l)
{
    struct kueue *k = l->k;
    if (status_get(l->obj, "admission") || !l->active)
        return;
    const struct fq_value *rq = l->cd[C_REQUEUED];
    if (!rq || strcmp(fq_value_path_str(rq, "status", ""), "False"))
        return;
    int64_t at =
        parse_time(fq_value_path_str(l->obj, FQ_WL_REQUEUE_AT, NULL), 0);
    if (at <= l->now) {
        k->lc_changed |=
            kq_cond_set(l->obj, "Requeued", "True", "BackoffFinished",
                        "The workload backoff was finished", l->now);
        struct fq_value *rs = fq_value_path(l->obj, "status.requeueState");
        if (rs)
            k->lc_changed |= fq_map_del(rs, "requeueAt");
        k->need_cycle = true;
    } else if (at < k->lc_timer) {
        k->lc_timer = at;
    }
}

/*
 * Looks at one workload that changed or came due and performs, in order,
 * the transitions of the diagram in controller.c that its state calls for.
 * Writes go to `obj` (the caller's copy; it stores it when lc_changed);
 * `cd` are its conditions by enum cond_type, scanned again after each
 * transition that wrote. A Finished workload has none.
 */
void kq_lifecycle(struct kueue *k, struct fq_engine *e, struct snap *s,
                  struct fq_value *obj, const struct fq_value *cd[NCOND],
                  int64_t now)
{
    if (cond_is_true(cd[C_FINISHED]))
        return;
    const struct fq_value *adm = status_get(obj, "admission");
    struct look l = {.k = k,
                     .e = e,
                     .s = s,
                     .cfg = fq_engine_config(e),
                     .obj = obj,
                     .cd = cd,
                     .now = now,
                     .active = fq_value_path_bool(obj, FQ_WL_ACTIVE, true),
                     .has_adm = adm != NULL,
                     .cq = str_at(adm, "clusterQueue", "")};
    int ci = kq_find_cq(s, l.cq);
    l.c = ci >= 0 ? &s->cqs[ci] : NULL;

    apply_policies(&l);
    deactivate_inactive(&l);
    rescan(&l);
    reactivate(&l);
    rescan(&l);
    if (l.has_adm && cond_is_true(cd[C_EVICTED])) {
        fq_kueue_policy_accumulate(obj, now);
        release_quota(k, e, s, obj, now);
        l.has_adm = false;
        kq_cond_scan(obj, cd);
    }
    if (l.has_adm && cond_is_true(cd[C_QUOTA_RESERVED]) && follow_checks(&l))
        return;
    rescan(&l);
    if (pods_ready_timeout(&l))
        return;
    rescan(&l);
    requeue_after_backoff(&l);
}
