/*
 * jobframework_slices.h - elastic jobs (Kueue's ElasticJobsViaWorkloadSlices),
 * the job side: which Workload slice an elastic job runs under, new slices
 * on scale up, counts updated in place on scale down. See
 * jobframework_slices.c; the admission side is kueue_slices.c.
 */
#ifndef FLEXQ_JOBFRAMEWORK_SLICES_H
#define FLEXQ_JOBFRAMEWORK_SLICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/engine.h"
#include "flexq/names.h"

/* Whether a job (RayJob or Job, borrowed) carries
 * kueue.x-k8s.io/elastic-job: "true". */
bool fq_jobslices_elastic(const struct fq_value *job);

/*
 * Reconciles the slices of an elastic job. `job` is borrowed and read
 * before anything is written; `want` (borrowed) is the podsets the job asks
 * for now (as its first Workload's spec.podSets would be); `wname` holds
 * the job's first Workload name on entry (it must exist) and receives the
 * name of the Workload the job runs under (at most n bytes). *keep_running
 * is set when that Workload is a slice that reserved quota and waits on
 * its admission checks: the job keeps running on the old counts meanwhile
 * and must not be suspended.
 *
 * Scale up of a job whose Workload holds quota creates slice
 * `<prefix>-<5 hex>` with the annotation
 * kueue.x-k8s.io/workload-slice-replacement-for; scale down (or any change
 * while nothing is reserved) updates the counts in place, with
 * status.admission's counts and resourceUsage when reserved. A pending
 * slice that the job no longer needs (scaled back) is deleted.
 */
void fq_jobslices_reconcile(struct fq_engine *e, const struct fq_value *job,
                            const struct fq_value *want, char *wname, size_t n,
                            bool *keep_running, int64_t now);

/*
 * Pod gating, so that a scale up's pods start only once its slice is
 * admitted. The RayCluster controller calls fq_jobslices_gate_pod on each
 * worker pod it makes (pod owned, edited; rc borrowed): when the cluster
 * comes from a queued elastic RayJob the pod gets the gate. Gated pods
 * wait in the binder (SchedulingGated).
 */
void fq_jobslices_gate_pod(struct fq_engine *e, const struct fq_value *rc,
                           struct fq_value *pod);

/* The name of the RayJob a changed pod (borrowed) belongs to when it is
 * gated by FQ_SLICE_GATE (borrowed from pod), else NULL: jobframework's
 * on_change marks that job so that it ungates the pod. */
const char *fq_jobslices_gated_job(const struct fq_value *pod);

/*
 * Removes the gate from the worker pods of RayJob `job` (borrowed) whose
 * replica is within the counts of its Workload `wl` (borrowed), when wl is
 * Admitted: replica r of a group of h hosts runs when (r + 1) * h <= the
 * group's admitted count.
 */
void fq_jobslices_ungate(struct fq_engine *e, const struct fq_value *job,
                         const struct fq_value *wl);

#endif
