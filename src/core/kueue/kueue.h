/*
 * kueue.h - the "kueue" controller: Kueue's scheduler and workload
 * controller (queues, flavor assignment, preemption, admission checks,
 * eviction and requeue). See controller.c for the workload state machine and
 * docs/admission.md for the whole picture.
 */
#ifndef FLEXQ_KUEUE_H
#define FLEXQ_KUEUE_H

#include <stdint.h>

#include "engine/controllers.h"
#include "flexq/engine.h"
#include "flexq/names.h"

/* Counters, for tests and the dashboard (fq_engine_controller(e, "kueue")
 * returns the controller's state; pass it here). */
struct fq_kueue_stats {
    uint64_t cycles;
    uint64_t reservations;
    uint64_t admissions;
    uint64_t evictions;
    uint64_t preemptions;
    uint64_t migrations;
    /* Kueue's admission attempts: scheduling cycles that tried heads,
     * by whether one was reserved (kueue_admission_attempts_total). */
    uint64_t attempts_success;
    uint64_t attempts_inadmissible;
    /* Heads' flavor assignments in cycles: searched, and taken from the
     * memo of failed ones (nommemo.c). */
    uint64_t nom_searches;
    uint64_t nom_memo_hits;
    /* Parked heads a requeue kept parked (their root cohort quiet). */
    uint64_t requeue_kept;
    /* Pending messages that changed only in counts and were held back,
     * and held texts written at the end of their refresh interval
     * (pendmsg.c). */
    uint64_t pending_msgs_held;
    uint64_t pending_msgs_flushed;
};

void fq_kueue_get_stats(const void *self, struct fq_kueue_stats *out);

/* The time a pending workload queues by (ms): its creation, or the
 * Evicted transition for check and (with timestamp=Eviction) PodsReady
 * evictions, as Kueue's queue order uses. With priority (higher first)
 * and namespace/name it is the order of the ClusterQueue's heap; the
 * visibility API's positions follow it. */
int64_t fq_kueue_queue_order_ts(const struct fq_value *wl,
                                const struct fq_engine_config *cfg);

#endif
