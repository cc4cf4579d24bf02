/*
 * api_estimate.h - the wait-time estimate API of flexqd.
 *
 *   POST /apis/estimates.flexq.dev/v1alpha1/namespaces/NS/estimates
 *        [?seeds=N]      (1..20, default 5)
 *
 * The body is a job (RayJob, Job or Workload; JSON or YAML) as it would be
 * created in NS. The answer is an Estimate object (estimate.h's
 * fq_estimate_to_value): per flavor of the job's ClusterQueue, when it
 * would start (p10 / p50 / p90 seconds after now), plus how the run times
 * of the workloads ahead were chosen. Nothing is stored. A job that exists
 * already (describe asks about pending jobs) is left out of the state
 * that is copied, so it is not counted twice.
 *
 * It has its own API group because the router hands whole /apis/GROUP/
 * prefixes to modules.
 */
#ifndef FLEXQ_API_ESTIMATE_H
#define FLEXQ_API_ESTIMATE_H

#include "daemon.h"

#define FQ_API_ESTIMATE_PREFIX "/apis/estimates.flexq.dev/"

/* Registers the route on d's API. */
void fq_api_estimate_attach(struct fq_daemon *d);

#endif
