/*
 * runtime.h - the run time a job's user stated, read one way for every
 * reader: the kueue controller's preemption grace (which spares a victim
 * about to finish) and flexq's wait-time estimates (which start from it
 * before guessing from history).
 *
 * The sources, in order: the flexq.dev/expected-runtime annotation (a
 * duration as fq_duration_parse reads it: "3600", "90m", "1h30m",
 * "200ms"), else spec.activeDeadlineSeconds; on the Workload, else on
 * the object that owns it (its first ownerReference, as a Job owns its
 * Workload). A value that is malformed, zero, negative or longer than
 * FQ_DURATION_MAX_MS states nothing (a Job's deadline may be any int64:
 * its milliseconds could overflow).
 *
 * It does not guess: a guess from the history of finished runs is the
 * estimate's own fallback (flexq/runguess.h), not a user's word.
 */
#ifndef FLEXQ_RUNTIME_H
#define FLEXQ_RUNTIME_H

#include <stdint.h>

#include "flexq/objstore.h"
#include "flexq/value.h"

/* Where a stated run time came from. */
enum fq_runtime_source {
    FQ_RUNTIME_NONE = 0,   /* nothing stated */
    FQ_RUNTIME_ANNOTATION, /* flexq.dev/expected-runtime */
    FQ_RUNTIME_DEADLINE,   /* spec.activeDeadlineSeconds */
};

/* The run time stated on obj itself, in ms, or -1. `src` (may be NULL)
 * says where it came from (FQ_RUNTIME_NONE with -1). */
int64_t fq_runtime_stated(const struct fq_value *obj,
                          enum fq_runtime_source *src);

/* obj's spec.activeDeadlineSeconds in ms (a limit, not a run time), or
 * -1 when absent, not positive or longer than FQ_DURATION_MAX_MS. */
int64_t fq_runtime_deadline(const struct fq_value *obj);

/* The run time stated for Workload wl: on it, else on its owner found in
 * store s (borrowed, read only), in ms, or -1. `src` as above. */
int64_t fq_runtime_stated_wl(const struct fq_objstore *s,
                             const struct fq_value *wl,
                             enum fq_runtime_source *src);

#endif
