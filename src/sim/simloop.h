/*
 * simloop.h - replays a job trace through flexq's engine in virtual time.
 *
 * fq_sim_run builds an engine in simulator mode (no_pods, the sim cloud
 * provider), applies the config's objects (NodePools, CapacityModel,
 * ResourceFlavors, ClusterQueues, LocalQueues, AdmissionChecks,
 * ProvisioningRequestConfigs) after the policy's plan choice, then submits
 * each trace job as a Workload at its submit time and lets the engine's
 * real controllers admit, provision, place and revoke. A job runs from the
 * moment its workload is PodsReady for its trace duration; then the
 * simulator marks it Finished, records its figures and deletes it.
 */
#ifndef FLEXQ_SIM_SIMLOOP_H
#define FLEXQ_SIM_SIMLOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/err.h"
#include "flexq/value.h"
#include "policies.h"
#include "report.h"
#include "trace.h"

/* Virtual time 0 (the trace's first submit) is this instant in the engine:
 * 2026-01-01T00:00:00Z, so timestamps in objects read like real ones. */
#define FQ_SIM_EPOCH_MS 1767225600000LL

struct fq_sim_progress {
    int64_t now_ms; /* virtual time since the trace start */
    size_t njobs, submitted, done, pending, running;
    uint64_t steps;
};

typedef void (*fq_sim_progress_fn)(void *ctx, const struct fq_sim_progress *p);

struct fq_sim_options {
    const struct fq_docs *config; /* borrowed: the config's objects */
    const char *config_name;      /* labels errors */
    const struct fq_trace *trace; /* borrowed */
    struct fq_trace_map map;
    const struct fq_sim_policy *policy;
    bool long_rule_set; /* --long-jobs given: overrides the policy's rule */
    enum fq_sim_long_rule long_rule;
    uint64_t seed;
    /* The accelerator resource jobs ask for; NULL: the first covered
     * resource of the ClusterQueues that is not cpu, memory or pods. */
    const char *resource;
    /* Stop this long after the last arrival even if jobs remain
     * (default 365 days); they are reported as unfinished. */
    int64_t horizon_ms;
    /* Plan A's nominal quota of the accelerator, replacing the config's on
     * every Plan A flavor (its pool and on-demand stock resized to match,
     * fq_sim_plan_a_nodes); 0: as configured (--size-plan-a). */
    int64_t plan_a_quota;
    /* The arrival-rate factor the caller applied to the trace
     * (fq_sim_scale_arrivals), only reported; 0 or 1: none. */
    double arrival_scale;
    /* Time-series interval; 0: the trace's span / 1000, at least 60 s. */
    int64_t sample_ms;
    /* Start forecasts (docs/estimates.md): how many jobs, sampled evenly
     * by trace order, get one at their submission from the estimator
     * (fq_estimate_run) under the simulated policy; 0: none,
     * FQ_SIM_FORECAST_ALL: every job. Each forecast runs forecast_seeds
     * cloud seeds (0: FQ_ESTIMATE_SEEDS, as flexq estimate). With
     * forecast_oracle the jobs ahead are given their true run times
     * instead of the history's guesses (the engine's own error). */
    size_t forecasts;
    int forecast_seeds;
    bool forecast_oracle;
    /* Route jobs whose guessed run time (from the run's history) is at
     * least this to Plan B only (a nodeSelector on its flavor's labels);
     * 0: off, the flavors in order as Kueue tries them (--route-b-over). */
    int64_t route_b_ms;
    /* Route jobs whose guessed chip-hours are at least this many hours of
     * Plan A's whole quota to Plan B only, when Plan B's nodes cost no
     * more per chip-hour for their shape (route.c); 0: off
     * (--route-b-area). Unless route_b_area_set, the policy's value. */
    bool route_b_area_set;
    double route_b_area;
    /* How that rule guesses run times (--route-guess); unless
     * route_guess_set, the policy's. */
    bool route_guess_set;
    enum fq_sim_route_guess route_guess;
    /* Kueue's waitForPodsReady timeout (--pods-ready): a workload
     * admitted whose pods are not all placed within it is evicted and
     * queued again; 0: off (Kueue's default). Unless pods_ready_set, the
     * policy's value. */
    bool pods_ready_set;
    int64_t pods_ready_ms;
    /* Length of a split long job's segments, when shorter than the
     * default (Plan B's max run less an hour); 0: the default
     * (--segment). Each segment ends in a free checkpoint and queues
     * again, so a short segment makes long jobs take turns more often.
     * Unless segment_set, the policy's value. */
    bool segment_set;
    int64_t segment_ms;
    /* End every segment's workload and queue the next segment as a new
     * one, also where keep.c proves that it would be admitted again at
     * once on the same nodes (by default such a boundary keeps its
     * workload: same figures, fewer engine changes). For tests and
     * bench/sim --requeue-all. */
    bool requeue_segments;
    /* Engine switch overrides for every policy (fq_sim_switches_apply),
     * or NULL. */
    const char *switches;
    /* Hold the engine to every invariant of flexq/check.h after each
     * settle; the first broken one ends the run with FQ_EINVAL naming it
     * (slow: a pass over the objects per settle; --check-invariants). */
    bool check_invariants;
    fq_sim_progress_fn progress; /* called every few thousand steps */
    void *progress_ctx;
};

#define FQ_SIM_FORECAST_ALL ((size_t)-1)
/* A job is not forecast when more jobs than this are live ahead of it (the
 * forecast re-runs all of them); it is counted as skipped. */
#define FQ_SIM_FORECAST_MAX_AHEAD 3000

void fq_sim_options_init(struct fq_sim_options *o);

/*
 * Runs one simulation. Fills `out` (initialised by the call; release with
 * fq_sim_result_release). Returns 0, or FQ_EINVAL with `err` when the
 * config is unusable (an object the engine refuses, no LocalQueue, a
 * LocalQueue named by the trace that the config lacks).
 */
int fq_sim_run(const struct fq_sim_options *o, struct fq_sim_result *out,
               struct fq_err *err);

#endif
