/*
 * grace.c - the preemption grace (policy.preemptionGraceSeconds, a flexq
 * switch; off by default, and off is Kueue's behaviour): a preemption
 * target that its user said will finish within the grace is not evicted,
 * and its preemptor waits for it instead.
 *
 * Why. Kueue evicts whatever its preemption rules choose, however little
 * the victim has left to run: its work so far is lost and it queues
 * again. In Kueue's scheduler baseline (bench/baseline.c) the large
 * workloads of priority 200 preempt mediums and smalls admitted in the
 * gaps, about 4,500 cpu-s of runs thrown away, a floor of about 76 s
 * under a 66 s ideal. A victim with 0.2 s left costs its preemptor 0.2 s
 * of waiting, and the cluster nothing.
 *
 * How. The scheduling cycle (cycle.c, preempt_for) asks kq_grace_spares
 * about each target of a preemption that Kueue's rules chose (admission.c
 * is unchanged, so the targets, and the failed nominations nommemo.c
 * remembers, do not depend on time). A target is spared when all hold:
 *
 *   1. it is admitted and not already being evicted;
 *   2. its user stated a run time (stated_runtime): the
 *      flexq.dev/expected-runtime annotation, else activeDeadlineSeconds,
 *      on the Workload, else on the object that owns it (its first
 *      ownerReference): the sources flexq's wait-time estimates read
 *      first (docs/estimates.md), without their guesses (a queue's mean
 *      is no user's word);
 *   3. its expected end, admitted time + run time, is at most one grace
 *      ahead, and less than one grace behind: a stated time is an
 *      approximation, and a finish takes a moment to be seen (a pod's
 *      exit, its status write), so a victim a little past its end is
 *      most likely finishing; one that overran it by a grace is not
 *      trusted any more and is fair game;
 *   4. it has not been spared for a whole grace since it was first
 *      spared in its current admission: the preemptor gives each victim
 *      at most one grace to finish, as Kubernetes gives a pod its
 *      termination grace period (a run time edited later while it runs
 *      buys nothing).
 *
 * The targets that are not spared are evicted as Kueue would; the
 * preemptor stays pending at the head of its queue (reason
 * WaitingForPreemptedWorkloads, its message counting the spared ones),
 * its ClusterQueue is blocked for the rest of the cycle and its quota
 * set aside in the cohort as for any preemptor, so no lower-priority
 * workload takes the room it waits for. The controller wakes for a cycle
 * at the earliest time a spared victim stops being spared (grace_wake:
 * its grace used up, or its end overrun by a grace); a victim's finish
 * wakes it anyway.
 *
 * Worked example: grace 1 s; a large workload (priority 200, 20 cpu)
 * arrives at t = 10.0 s in a ClusterQueue of 20 cpu running a medium
 * (5 cpu, expected-runtime 0.5s, admitted at 9.8 s) and 15 smalls (1 cpu,
 * 0.2s, admitted 9.85 - 9.95 s). Kueue's rules choose all 16; each ends
 * by 10.3 s, within 1 s: none is evicted, the large waits and is admitted
 * when the last finishes, at about 10.3 s; one still running at 11.0 s
 * (a grace after the large first waited) is evicted then. Had the medium
 * stated 5s (expected end 14.8 s), it would be evicted at once and the
 * large would wait for the smalls only.
 *
 * Starvation. A preemptor waits for a victim at most one grace (4),
 * and only for victims that hold quota it needs; new workloads cannot
 * take that room from it in the cycles it waits (the set-aside, and it
 * is ordered before lower priorities). But while it waits, its cohort
 * counts as one where a head preempted (cycle.c, CO_WAITED), so every
 * later preemptor in the cohort, even in another ClusterQueue with
 * victims that state no run time, is skipped as Kueue skips after an
 * eviction, and is not retried until a spared victim ends or grace_wake:
 * it waits up to a grace for victims it does not need, and up to one
 * grace more for each preemptor ahead of it whose own victims are
 * spared in turn. So "admitted at most about one grace after Kueue
 * would have" holds for the first preemptor of a cohort only.
 * (After a restart the controller has forgotten grace_since: a victim
 * spared before it may be spared for one more grace.)
 *
 * Precision. Conditions store whole seconds; the controller keeps the
 * millisecond of the reservation in the record (kq_reserve) and uses it
 * when the Admitted time is in the same second. After a restart the
 * stored second is used (an expected end up to a second early).
 *
 * What it does not do: spare a victim without a stated run time, guess
 * run times from history, or weigh the victim's lost work against the
 * preemptor's wait beyond the grace.
 */
#include "kueue/internal.h"

#include "flexq/kinds.h"
#include "flexq/paths.h"

/* A stated run time on one object, or -1. */
static int64_t stated_on(const struct fq_value *obj)
{
    int64_t ms = 0;
    const char *a = fq_value_as_str(
        fq_map_get(fq_meta_annotations(obj), FQ_ANN_EXPECTED_RUNTIME));
    if (a && fq_duration_parse(a, &ms) == 0 && ms > 0)
        return ms;
    int64_t ads = fq_value_path_int(obj, "spec.activeDeadlineSeconds", -1);
    return ads > 0 && ads <= FQ_DURATION_MAX_MS / 1000 ? ads * 1000 : -1;
}

/* The run time the user stated for Workload obj: on it, else on the
 * object that owns it (its first ownerReference), or -1. */
static int64_t stated_runtime(struct fq_engine *e, const struct fq_value *obj)
{
    int64_t ms = stated_on(obj);
    if (ms > 0)
        return ms;
    const struct fq_value *ref = fq_seq_at(fq_meta_owners(obj), 0);
    if (!ref)
        return -1;
    enum fq_kind kind = fq_kind_from_gvk(str_at(ref, "apiVersion", ""),
                                         str_at(ref, "kind", ""));
    const struct fq_value *own =
        kind == FQ_KIND_NONE ?
            NULL :
            stored(e, kind, fq_meta_namespace(obj), str_at(ref, "name", ""));
    return own ? stated_on(own) : -1;
}

bool kq_grace_spares(struct fq_engine *e, struct rec *v, int64_t now,
                     int64_t *until)
{
    int64_t grace = fq_engine_config(e)->policy.preemption_grace_ms;
    if (grace <= 0 || v->w.evicting || !v->w.admitted) /* 1 */
        return false;
    const struct fq_value *obj =
        stored(e, FQ_KIND_WORKLOAD, v->w.ns, v->w.name);
    if (!obj)
        return false;
    int64_t run = stated_runtime(e, obj); /* 2 */
    if (run <= 0)
        return false;
    int64_t at = parse_time(
        str_at(kq_cond_find(obj, "Admitted"), "lastTransitionTime", NULL), -1);
    if (at < 0)
        return false;
    if (v->w.hold->grace_rsv >= at && v->w.hold->grace_rsv < at + 1000)
        at = v->w.hold->grace_rsv;
    int64_t end = at + run;
    if (end - now > grace || now - end >= grace) /* 3 */
        return false;
    if (v->w.hold->grace_since == 0)
        v->w.hold->grace_since = now;
    int64_t used_up = v->w.hold->grace_since + grace;
    if (now >= used_up) /* 4 */
        return false;
    *until = end + grace < used_up ? end + grace : used_up;
    return true;
}
