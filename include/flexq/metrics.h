/*
 * metrics.h - Prometheus text exposition of the engine's state, with
 * Kueue's metric names where the meaning is the same.
 *
 * Two halves (metrics.c explains which metric comes from which):
 *
 *   gauges and object-derived counters are computed from the object store
 *   at render time (queues, quota, usage, node pools, provisioning
 *   requests, cost, provider errors);
 *
 *   counters and histograms of transitions (quota reserved, admitted,
 *   evicted, finished, and the wait times between them) need history, so
 *   they live in a struct fq_metrics that the shell owns and feeds with
 *   every committed change (fq_metrics_observe). A transition is
 *   recognised by its condition's lastTransitionTime, so feeding the same
 *   object twice counts it once.
 *
 * Pure: no clock, no I/O; the daemon serves the text at /metrics
 * (src/daemon/api/metrics_http.c).
 */
#ifndef FLEXQ_CORE_METRICS_H
#define FLEXQ_CORE_METRICS_H

#include "flexq/buf.h"
#include "flexq/objstore.h"

struct fq_metrics;

/* Returns owned; free with fq_metrics_free. */
struct fq_metrics *fq_metrics_new(void);
void fq_metrics_free(struct fq_metrics *m);

/*
 * Remembers the current transitions of every Workload in `s` without
 * counting them (a daemon restart starts its counters at zero, as a
 * Prometheus counter may, but must not count old admissions as new).
 */
void fq_metrics_seed(struct fq_metrics *m, const struct fq_objstore *s);

/* Counts the transitions one change shows (c borrowed; c->obj may be
 * NULL for DELETED, which forgets the workload). */
void fq_metrics_observe(struct fq_metrics *m, const struct fq_change *c);

struct fq_engine;
/*
 * Counts the kueue controller's admission attempts (scheduling cycles
 * that tried workloads) made since the last call, into
 * kueue_admission_attempts_total{result} and
 * kueue_admission_attempt_duration_seconds{result}; `run_seconds` is the
 * wall time the shell measured for the engine runs that made them,
 * shared evenly among them (the core has no clock). Call it after every
 * fq_engine_run that may have scheduled.
 */
void fq_metrics_observe_attempts(struct fq_metrics *m, struct fq_engine *e,
                                 double run_seconds);

/* Appends the whole exposition (# HELP, # TYPE, samples) to `out`. */
void fq_metrics_render(const struct fq_metrics *m, const struct fq_objstore *s,
                       struct fq_buf *out);

#endif
