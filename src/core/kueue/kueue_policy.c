/*
 * kueue_policy.c - maximumExecutionTimeSeconds and the stop policies, as
 * Kueue applies them per workload (reference/kueue.md §1.2, §1.4, §1.5,
 * §2.9):
 *
 *   maximumExecutionTimeSeconds  a workload admitted for this long in all
 *                                (accumulated across evictions) is
 *                                deactivated: spec.active=false, Evicted
 *                                DeactivatedDueToMaximumExecutionTimeExceeded
 *   stopPolicy Hold              (LocalQueue or ClusterQueue) no new
 *                                admissions; a workload holding quota but
 *                                not admitted yet loses its reservation
 *                                (Evicted LocalQueueStopped /
 *                                ClusterQueueStopped); admitted ones run on
 *   stopPolicy HoldAndDrain      Hold, and admitted workloads are evicted
 *
 * The kueue controller (kueue.c) calls fq_kueue_policy_check from its
 * lifecycle step and acts on the answer; keeping pending workloads of a
 * stopped LocalQueue out of admission is done there too (inadmissible,
 * "LocalQueue X is stopped"). Times here are the job's real run time, so
 * the time scale does not apply (docs/capacity.md, "Time scale").
 *
 * What it does not do: write anything itself, Kueue's "...Restarted"
 * Requeued reasons when a queue resumes.
 */
#include "kueue/kueue_policy.h"

#include <stdio.h>
#include <string.h>

#include "flexq/conditions.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

enum fq_stop_policy fq_kueue_lq_stop(const struct fq_value *lq)
{
    const char *s = fq_value_path_str(lq, "spec.stopPolicy", "None");
    return !strcmp(s, "Hold")         ? FQ_STOP_HOLD :
           !strcmp(s, "HoldAndDrain") ? FQ_STOP_HOLD_AND_DRAIN :
                                        FQ_STOP_NONE;
}

static int64_t admitted_at(const struct fq_value *obj)
{
    const struct fq_value *c = fq_cond_find(obj, "Admitted");
    int64_t t = 0;
    if (!c ||
        fq_time_parse(fq_value_path_str(c, "lastTransitionTime", ""), &t) < 0)
        return -1;
    return t;
}

void fq_kueue_policy_check(struct fq_engine *e, const struct fq_value *obj,
                           enum fq_stop_policy cq_stop, bool has_adm,
                           bool admitted, bool evicted, int64_t now,
                           struct fq_kueue_policy *out)
{
    memset(out, 0, sizeof(*out));
    out->wake_at = FQ_NEVER;
    if (!has_adm || evicted)
        return;
    /* maximumExecutionTimeSeconds */
    const struct fq_value *mx = fq_value_path(obj, FQ_WL_MAX_EXEC_S);
    int64_t at = admitted ? admitted_at(obj) : -1;
    if (mx && mx->type == FQ_V_NUM && at >= 0) {
        int64_t max_s = fq_value_path_int(obj, FQ_WL_MAX_EXEC_S, 0);
        int64_t past_s = fq_value_path_int(
            obj, "status.accumulatedPastExecutionTimeSeconds", 0);
        int64_t deadline = at + (max_s - past_s) * 1000;
        if (now >= deadline) {
            out->deactivate_cause = "MaximumExecutionTimeExceeded";
            snprintf(out->msg, sizeof(out->msg),
                     "exceeding the maximum execution time (%llds)",
                     (long long)max_s);
            return;
        }
        out->wake_at = deadline;
    }
    /* Stop policies: the LocalQueue's, then the ClusterQueue's. */
    const char *ns = fq_value_path_str(obj, FQ_META_NAMESPACE, "default");
    const char *q = fq_value_path_str(obj, FQ_WL_QUEUE_NAME, NULL);
    const struct fq_object *lq =
        q ? fq_objstore_get(fq_engine_store(e), FQ_KIND_LOCALQUEUE, ns, q) :
            NULL;
    enum fq_stop_policy lq_stop = lq ? fq_kueue_lq_stop(lq->obj) : FQ_STOP_NONE;
    enum fq_stop_policy stop = lq_stop != FQ_STOP_NONE ? lq_stop : cq_stop;
    if (stop == FQ_STOP_NONE || (admitted && stop == FQ_STOP_HOLD))
        return;
    bool by_lq = lq_stop != FQ_STOP_NONE;
    out->evict_reason = by_lq ? "LocalQueueStopped" : "ClusterQueueStopped";
    snprintf(out->msg, sizeof(out->msg), "The %s is stopped",
             by_lq ? "LocalQueue" : "ClusterQueue");
}

bool fq_kueue_policy_accumulate(struct fq_value *obj, int64_t now)
{
    if (!fq_cond_true(obj, "Admitted"))
        return false;
    int64_t at = admitted_at(obj);
    if (at < 0 || now <= at)
        return false;
    int64_t past =
        fq_value_path_int(obj, "status.accumulatedPastExecutionTimeSeconds", 0);
    fq_map_set(fq_map_ensure_map(obj, "status"),
               "accumulatedPastExecutionTimeSeconds",
               fq_value_int(past + (now - at) / 1000));
    return true;
}
