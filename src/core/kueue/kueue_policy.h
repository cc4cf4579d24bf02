/*
 * kueue_policy.h - per-workload Kueue policies the kueue controller's
 * lifecycle step applies: maximumExecutionTimeSeconds and the stop
 * policies of LocalQueues and ClusterQueues. See kueue_policy.c. Private
 * to src/core.
 */
#ifndef FLEXQ_KUEUE_POLICY_H
#define FLEXQ_KUEUE_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/engine.h"
#include "flexq/objects.h"
#include "flexq/value.h"

struct fq_kueue_policy {
    /* Deactivate (spec.active=false, Evicted DeactivatedDueTo<cause>). */
    const char *deactivate_cause; /* "MaximumExecutionTimeExceeded" */
    /* Evict and requeue (reason LocalQueueStopped / ClusterQueueStopped). */
    const char *evict_reason;
    char msg[320];
    int64_t wake_at; /* when to look again (FQ_NEVER: no need) */
};

/*
 * Decides for Workload `obj` (borrowed) at `now`, given whether it holds
 * an admission (has_adm), is Admitted and is already Evicted, and its
 * ClusterQueue's stop policy (FQ_STOP_NONE when unknown):
 *   - Admitted for longer than spec.maximumExecutionTimeSeconds in all
 *     (status.accumulatedPastExecutionTimeSeconds plus the time since the
 *     Admitted condition turned True) -> deactivate, cause
 *     MaximumExecutionTimeExceeded; before that, wake_at is the deadline;
 *   - its LocalQueue (spec.queueName in its namespace) or ClusterQueue
 *     stopped: Hold or HoldAndDrain evict a workload that reserved quota
 *     but is not admitted yet; HoldAndDrain also evicts an admitted one;
 *     Hold lets admitted ones run to completion.
 */
void fq_kueue_policy_check(struct fq_engine *e, const struct fq_value *obj,
                           enum fq_stop_policy cq_stop, bool has_adm,
                           bool admitted, bool evicted, int64_t now,
                           struct fq_kueue_policy *out);

/* An admitted workload is being evicted: adds the time since Admitted to
 * status.accumulatedPastExecutionTimeSeconds (Kueue's counter across
 * evictions). Edits obj; true when it changed. */
bool fq_kueue_policy_accumulate(struct fq_value *obj, int64_t now);

/* The stop policy a LocalQueue object says (spec.stopPolicy). */
enum fq_stop_policy fq_kueue_lq_stop(const struct fq_value *lq);

#endif
