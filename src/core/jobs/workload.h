/*
 * workload.h - what Kueue's job integrations share (workload.c): the
 * Workload name and the Workload made for a job, and an admission merged
 * into a pod template.
 */
#ifndef FLEXQ_JOBS_WORKLOAD_H
#define FLEXQ_JOBS_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "flexq/engine.h"
#include "flexq/value.h"

/* Kueue's Workload name for a job: <prefix>-<name>-<5 hex from uid and
 * name>, at most 253 characters, into buf. */
void fq_jobframework_workload_name(const char *prefix, const char *name,
                                   const char *uid, char *buf, size_t n);

/* Creates Workload ns/wname for `job` (queue from its queue-name label,
 * WorkloadPriorityClass from its priority-class label, job as the
 * controlling owner) with `podsets` (taken). Returns 0 or the store's
 * negative FQ_E* code; emits CreatedWorkload on the job. */
int fq_jobframework_create_workload(struct fq_engine *e,
                                    const struct fq_value *job,
                                    struct fq_value *podsets, const char *wname,
                                    int64_t now);

/* Merges admission into pod template (or Pod) `t`: the nodeLabels and
 * tolerations of the flavors of podSetAssignment `a`, and the checks'
 * podSetUpdates for a's podset. */
void fq_jobframework_merge_podset(struct fq_engine *e, struct fq_value *t,
                                  const struct fq_value *wl,
                                  const struct fq_value *a);

#endif
