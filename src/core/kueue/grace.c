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
 *   2. its user stated a run time (fq_runtime_stated_wl, runtime.h):
 *      the flexq.dev/expected-runtime annotation, else
 *      activeDeadlineSeconds, on the Workload, else on the object that
 *      owns it (its first ownerReference): the sources flexq's wait-time
 *      estimates read first (docs/estimates.md, the same reader),
 *      without their guesses (a guess from history is no user's word);
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
 * set aside in the cohort as for any preemptor (when it only waits, less
 * what its spared victims hold), so no lower-priority workload takes
 * the room it waits for. The controller wakes for a cycle
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
 * Starvation. A preemptor waits for a victim at most one grace (4), and
 * only for victims that hold quota it needs; new workloads cannot take
 * that room from it in the cycles it waits (its spared victims hold
 * part of it, the rest is set aside, and it is ordered before lower
 * priorities). Its wait holds back only heads that need that room: it
 * sets aside what its spared victims do not hold, and its cohort's
 * later heads are assigned again against that in the same cycle
 * (cycle.c, CO_WAITED), not skipped as after an eviction; a later
 * preemptor whose targets are not spared evicts them at once, as Kueue
 * would, and one whose targets are spared waits alongside (grace_since
 * is the victim's, whoever spares it, so graces do not chain). So a
 * preemptor is delayed by the grace only through victims it needs (its
 * own, or those holding room a preemptor ahead of it waits for): about
 * one grace, not one per preemptor ahead of it.
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

#include "flexq/runtime.h"

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
    int64_t run = fq_runtime_stated_wl(fq_engine_store(e), obj, NULL); /* 2 */
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
