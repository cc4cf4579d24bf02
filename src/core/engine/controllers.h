/*
 * controllers.h - what the engine needs from the layers above it.
 *
 * The engine (settle loop, notices, wakeups) knows no controller by its
 * header: each controller module defines one of the ops tables declared
 * here, and includes this file so that the definition is checked against
 * the declaration. The engine lists them, in the order they run within a
 * round, in engine.c's table. A new controller is one line here and one
 * line there.
 */
#ifndef FLEXQ_ENGINE_CONTROLLERS_H
#define FLEXQ_ENGINE_CONTROLLERS_H

#include <stdint.h>

#include "flexq/engine.h"
#include "flexq/err.h"

extern const struct fq_controller_ops fq_jobframework_controller; /* jobs/ */
extern const struct fq_controller_ops fq_kueue_controller;        /* kueue/ */
extern const struct fq_controller_ops fq_provcheck_controller;    /* kueue/ */
extern const struct fq_controller_ops fq_rayjob_controller;       /* jobs/ */
extern const struct fq_controller_ops fq_raycluster_controller;   /* jobs/ */
extern const struct fq_controller_ops fq_job_controller;          /* jobs/ */
extern const struct fq_controller_ops fq_jobset_controller;       /* jobs/ */
extern const struct fq_controller_ops fq_pytorchjob_controller;   /* jobs/ */
extern const struct fq_controller_ops fq_mpijob_controller;       /* jobs/ */
extern const struct fq_controller_ops fq_lws_controller;          /* jobs/ */
extern const struct fq_controller_ops fq_trainjob_controller;     /* jobs/ */
extern const struct fq_controller_ops fq_binder_controller;       /* jobs/ */
extern const struct fq_controller_ops fq_capacity_controller; /* capacity/ */
extern const struct fq_controller_ops fq_gc_controller;       /* jobs/ */

/*
 * The kubelet's half of fq_engine_pod_update, in jobs/pods.c: applies the
 * runner's report to pod ns/name (phase, Ready / ContainersReady /
 * Initialized conditions, containerStatuses with running / terminated
 * states, exit code and reason, startTime). A Failed report on a pod whose
 * restartPolicy is OnFailure or Always counts a restart and leaves the pod
 * Running (not ready), which tells the runner to start the process again.
 * FQ_ENOTFOUND when the pod is not there, FQ_EINVAL for a bad phase.
 */
int fq_pods_report(struct fq_engine *e, const char *ns, const char *name,
                   const struct fq_pod_report *r, int64_t now,
                   struct fq_err *err);

/* The API server's defaulting of a new Job, in jobs/pods.c (unless
 * spec.manualSelector): spec.selector matching
 * batch.kubernetes.io/controller-uid, and the template's job-name and
 * controller-uid labels (both spellings), so `kubectl logs job/NAME` finds
 * its pods by the selector. */
void fq_job_default_selector(struct fq_value *job, const char *uid);

#endif
