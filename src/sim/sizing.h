/*
 * sizing.h - load knobs for `flexq sim`: arrivals scaled in time, and a
 * Plan A sized to the trace window's own offered load.
 *
 * A config sized for one window is weak evidence on its own; these two
 * knobs let the same config be run at 0.8x and 1.2x the arrival rate, and
 * with Plan A resized to whatever window is replayed (--size-plan-a auto).
 */
#ifndef FLEXQ_SIM_SIZING_H
#define FLEXQ_SIM_SIZING_H

#include <stdint.h>

#include "flexq/err.h"
#include "trace.h"

/* Limits of --scale-arrivals (a factor on the arrival rate). */
#define FQ_SIM_SCALE_MIN 0.01
#define FQ_SIM_SCALE_MAX 100.0

/*
 * Scales the arrival rate by f: every submit time becomes submit / f
 * (rounded down to the ms), so f = 1.2 packs the same jobs into a window
 * 1/1.2 as long. Order, durations and shapes are unchanged. f must lie in
 * [FQ_SIM_SCALE_MIN, FQ_SIM_SCALE_MAX].
 */
void fq_sim_scale_arrivals(struct fq_trace *t, double f);

/*
 * The trace's offered load in chips busy on average: the sum of chips x
 * duration over the jobs (chips as the map shapes them), divided by the
 * arrival window (first to last submit; the mean duration when every job
 * arrives at once). 0 for an empty trace.
 */
double fq_sim_offered_load(const struct fq_trace *t,
                           const struct fq_trace_map *m);

/*
 * Parses --size-plan-a: "auto" (100% of the offered load), "auto:P" or
 * "P%" (P percent, 1..1000) or a plain chip count "N" (N >= 1). Fills
 * *percent (> 0 for the forms with a share) or *chips. FQ_EINVAL with
 * `err` naming the value otherwise.
 */
int fq_sim_size_parse(const char *s, double *percent, int64_t *chips,
                      struct fq_err *err);

/* Plan A's pool: at most ceil(quota / chips_per_node * 1.25) nodes, the
 * headroom the examples/sim/ configs give for placement gaps. */
int64_t fq_sim_plan_a_nodes(int64_t quota, int64_t chips_per_node);

#endif
