/*
 * estimate.h - wait-time forecasts: when would this job start, per flavor?
 *
 * The forecast copies the cluster's objects (pools, model, flavors, queues,
 * checks, nodes) into a fresh engine in simulator mode (no_pods, the sim
 * cloud provider, a virtual clock starting at `now`), re-submits the
 * running and pending workloads with their expected run times, adds the
 * job, and runs forward until it starts: once unpinned and once pinned to
 * each flavor of its ClusterQueue, for several seeds of the cloud model.
 * See estimate.c for the method and docs/estimates.md for how good it is.
 */
#ifndef FLEXQ_ESTIMATE_H
#define FLEXQ_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/engine.h"
#include "flexq/err.h"
#include "flexq/names.h"
#include "flexq/value.h"

/* A workload of the current state, or of a replay. */
struct fq_estimate_job {
    const struct fq_value *obj; /* borrowed: a Workload */
    int64_t submit_ms;          /* submit time, absolute ms: sets the order
                                   (and, in a replay, when it arrives) */
    int64_t run_ms;             /* run time once started; for a running
                                   workload, what is left */
    bool running;               /* running now: placed first (warm-up) */
};

/* The state to forecast from. Everything is borrowed. */
struct fq_estimate_world {
    /* Any objects: NodePool, CapacityModel, ResourceFlavor, ClusterQueue,
     * LocalQueue, AdmissionCheck, ProvisioningRequestConfig,
     * WorkloadPriorityClass and Node are copied; other kinds are ignored. */
    const struct fq_value *const *objects;
    size_t nobjects;
    const struct fq_estimate_job *jobs; /* sorted by submit_ms */
    size_t njobs;
    int64_t now_ms;
    struct fq_policy policy;
    double time_scale;  /* 0: 1.0 */
    int64_t horizon_ms; /* give up this long after now; 0: 14 days */
};

/*
 * Replays `w` once with cloud seed `seed`: the running jobs are placed
 * first (the warm-up: their nodes exist or are made again), then each job
 * arrives at its submit time (shifted by the warm-up) and runs for run_ms
 * once started. start_ms[i] (njobs entries, caller's) gets job i's start
 * relative to the end of the warm-up, or -1 if it did not start within
 * the horizon; running jobs get 0. *warmup_ms (may be NULL): the warm-up.
 * Returns 0 or FQ_EINVAL (an object the engine refuses).
 */
int fq_estimate_replay(const struct fq_estimate_world *w, uint64_t seed,
                       int64_t *start_ms, int64_t *warmup_ms,
                       struct fq_err *err);

/* One row of a forecast: the job pinned to a flavor, or unpinned. */
struct fq_estimate_range {
    char flavor[64];   /* pinned flavor; "" for the unpinned row */
    char admitted[64]; /* the flavor it started on in most runs */
    bool pinnable;     /* false: the flavor has no nodeLabels to pin on */
    int runs, started; /* seeds run, and how many started in the horizon */
    /* ms after now; -1: later than the horizon (in that share of runs) */
    int64_t p10_ms, p50_ms, p90_ms;
};

struct fq_estimate_result {
    char local_queue[128];
    char cluster_queue[128];
    int64_t now_ms;
    int64_t horizon_ms;
    int64_t warmup_ms;              /* max over runs */
    struct fq_estimate_range *rows; /* owned; rows[0] is unpinned */
    size_t n;
};

/* Cloud seeds per row by default: the fewest whose earliest and latest
 * starts bound the next start (the real one, a draw like the others) 80%
 * of the time, which is what [p10, p90] promises (a draw falls outside n
 * exchangeable draws' range with probability 2 / (n + 1); with 5 seeds,
 * [p10, p90] was the range of five draws and held only two thirds of the
 * time). docs/estimates.md has the measurement. */
#define FQ_ESTIMATE_SEEDS 9

struct fq_estimate_options {
    int nseeds;    /* cloud seeds per row; 0: FQ_ESTIMATE_SEEDS */
    uint64_t seed; /* the first seed; the others follow */
    bool pin;      /* also one row per flavor of the ClusterQueue */
};

void fq_estimate_options_init(struct fq_estimate_options *o);

/*
 * Forecasts when `target` (borrowed: a Workload, RayJob or Job, submitted
 * now through its LocalQueue) would start. Fills `out` (release with
 * fq_estimate_result_release). FQ_EINVAL: no queue label, unknown
 * LocalQueue or ClusterQueue, or an object the engine refuses.
 */
int fq_estimate_run(const struct fq_estimate_world *w,
                    const struct fq_value *target,
                    const struct fq_estimate_options *o,
                    struct fq_estimate_result *out, struct fq_err *err);

void fq_estimate_result_release(struct fq_estimate_result *r);

/* Pins to a flavor the pod templates under v (a job or Workload, edited in
 * place) that the flavor serves: `pin` is {nodeLabels: {...}, covered:
 * [resource names of the ClusterQueue groups listing the flavor]}; only a
 * template whose containers ask for a covered resource gets nodeLabels as
 * nodeSelector. */
void fq_estimate_pin_templates(struct fq_value *v, const struct fq_value *pin);

/* The result as an object for the API (returns owned): kind Estimate. */
struct fq_value *fq_estimate_to_value(const struct fq_estimate_result *r);

#endif
