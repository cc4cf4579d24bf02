/*
 * jobframework.h - the "jobframework" controller: Kueue's job integration
 * for RayJob and batch Job (Workload per queued job, suspend/unsuspend,
 * status mapping). See jobframework.c.
 */
#ifndef FLEXQ_JOBFRAMEWORK_H
#define FLEXQ_JOBFRAMEWORK_H

#include "flexq/engine.h"

extern const struct fq_controller_ops fq_jobframework_controller;

#endif
