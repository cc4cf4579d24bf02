/*
 * jobs.h - what a shell may ask of the job controllers directly.
 *
 * The shells drive jobs through stored objects (engine.h); the one
 * exception is Ray's job API, whose `stop` acts on a running RayJob
 * without an object edit of the user's.
 */
#ifndef FLEXQ_JOBS_H
#define FLEXQ_JOBS_H

#include <stdbool.h>

#include "flexq/engine.h"
#include "flexq/err.h"

/*
 * Stops a RayJob's running Ray job, as Ray's POST /api/jobs/ID/stop (`ray
 * job stop`) does: status.jobStatus becomes STOPPED, and the controller's
 * next run stops the driver (the submitter's pod) and makes the deployment
 * Complete. *stopped says whether there was a running Ray job to stop
 * (false: not submitted yet, or already over). FQ_ENOTFOUND without the
 * RayJob.
 */
int fq_rayjob_stop(struct fq_engine *e, const char *ns, const char *name,
                   bool *stopped, struct fq_err *err);

#endif
