/*
 * timescale.h - the one time-scale rule (docs/capacity.md, "Time scale"):
 * every control-plane and cloud duration, built in or configured, is
 * multiplied by the engine's time_scale (1.0 = real time; the daemon's
 * --time-scale N gives 1/N). Job run times are not: pods are real
 * processes. Private to src/core.
 */
#ifndef FLEXQ_TIMESCALE_H
#define FLEXQ_TIMESCALE_H

#include <math.h>
#include <stdint.h>

#include "flexq/engine.h"

/* ms scaled by the engine's time_scale (rounded; at least 1 ms when ms is
 * positive, so a scaled delay never becomes "now"). */
static inline int64_t fq_time_scaled(struct fq_engine *e, int64_t ms)
{
    double s = fq_engine_config(e)->time_scale;
    if (!(s > 0) || s == 1.0 || ms <= 0)
        return ms;
    int64_t r = (int64_t)llround((double)ms * s);
    return r > 0 ? r : 1;
}

#endif
