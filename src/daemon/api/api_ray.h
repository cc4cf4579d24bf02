/*
 * api_ray.h - the Ray Jobs REST API for RayJobs (what the Ray dashboard on
 * port 8265 answers, and what KubeRay polls).
 *
 *   GET /api/version          {"version": "5", "ray_version", ...}
 *   GET /api/gcs_healthz      "success"
 *   GET /api/jobs/            a JSON list of JobDetails, one per RayJob
 *                             that has a jobId
 *   GET /api/jobs/ID          JobDetails of the RayJob whose
 *                             status.jobId (or name) is ID; 404 text
 *                             "Job ID does not exist"
 *   GET /api/jobs/ID/logs     {"logs": "<the driver's log>"}
 *   POST /api/jobs/...        405: on flexq a job is submitted as a RayJob
 *
 * JobDetails carry Ray's fields (type, job_id, submission_id, status,
 * entrypoint, message, error_type, start_time, end_time in Unix ms,
 * metadata, runtime_env, driver_info, driver_exit_code) plus flexq's
 * "metrics": the last metrics rank 0 reported through the training helper.
 */
#ifndef FLEXQ_API_RAY_H
#define FLEXQ_API_RAY_H

#include "daemon.h"
#include "flexq/value.h"

/* Registers the routes on d's API. */
void fq_api_ray_attach(struct fq_daemon *d);

/* The route handler (ctx unused), for routers that dispatch themselves. */
void fq_api_ray_handle(struct fq_daemon *d, struct fq_http_req *r, void *ctx);

/* JobDetails of one RayJob object (borrowed); returns owned. `data_dir`
 * locates the pods' metrics files (may be NULL). */
struct fq_value *fq_api_ray_job_details(const struct fq_objstore *s,
                                        const char *data_dir,
                                        const struct fq_value *rayjob);

#endif
