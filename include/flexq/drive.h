/*
 * drive.h - pieces for driving an engine forward on a virtual clock,
 * shared by the estimator (estimate.c, inside the core) and the simulator
 * (src/sim/simloop.c): the heap of expected run ends, marking a
 * Workload Finished when its run ends, and dropping piled-up Events.
 * See drive.c.
 */
#ifndef FLEXQ_DRIVE_H
#define FLEXQ_DRIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/objstore.h"

/* One expected end of a run: at time t, job index `job`, run generation
 * `gen` (the caller drops entries whose gen is stale). */
struct fq_drive_fin {
    int64_t t;
    uint32_t job, gen;
};

/* Min-heap of run ends by (t, job). Zero-initialised is empty. */
struct fq_drive_heap {
    struct fq_drive_fin *v;
    size_t n, cap;
};

void fq_drive_heap_push(struct fq_drive_heap *h, struct fq_drive_fin x);
/* Removes and returns the earliest entry; h->n must be > 0. */
struct fq_drive_fin fq_drive_heap_pop(struct fq_drive_heap *h);
void fq_drive_heap_free(struct fq_drive_heap *h);

/*
 * Sets Finished=True (reason Succeeded, `message`, lastTransitionTime
 * `now` in ms since the epoch) on Workload ns/name and commits it.
 * Returns false when there is no such Workload.
 */
bool fq_drive_mark_finished(struct fq_objstore *s, const char *ns,
                            const char *name, int64_t now, const char *message);

/* Deletes every Event once 1024 or more are stored: a forward run has no
 * reader for them, and they would grow the store without bound. */
void fq_drive_purge_events(struct fq_objstore *s);

#endif
