/*
 * svg.h - line charts as SVG text, written by flexq itself.
 *
 * The simulator's plots (wait-time CDF per policy, pool usage over time,
 * queue length over time) are all line charts: a few named series of
 * (x, y) points on linear or log-x axes. fq_svg_chart draws one; the
 * fq_sim_plot_* helpers build the three plots from simulation results.
 */
#ifndef FLEXQ_SIM_SVG_H
#define FLEXQ_SIM_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "flexq/buf.h"
#include "report.h"

struct fq_svg_series {
    const char *name;
    const double *x, *y; /* borrowed, n points, x non-decreasing */
    size_t n;
    bool step; /* draw as a step function */
};

enum {
    FQ_SVG_LOGX = 1 << 0, /* log10 x axis (values <= 0 are clamped) */
    /* log10 x axis of seconds, ticked at 1 s, 10 s, 1 min, ..., 1 d, 10 d */
    FQ_SVG_LOGX_SECONDS = 1 << 1,
    /* log10(1 + y) y axis, ticked at 0, 1, 10, 100, ...: one queue of
     * thousands and another of tens stay readable in one chart */
    FQ_SVG_LOGY = 1 << 2,
    /* y axis from the data's smallest value instead of from 0 (a zoom) */
    FQ_SVG_YDATA = 1 << 3,
};

/* Appends a complete SVG document (760 x 400) to `out`. */
void fq_svg_chart(struct fq_buf *out, const char *title, const char *xlabel,
                  const char *ylabel, const struct fq_svg_series *s, size_t ns,
                  int flags);

/* CDF of the waits of finished jobs, one series per run. */
void fq_sim_plot_wait_cdf(const struct fq_sim_result *const *rs, size_t n,
                          struct fq_buf *out);
/* The same CDF from the 90th percentile up: the tail, where policies
 * differ most. */
void fq_sim_plot_wait_tail(const struct fq_sim_result *const *rs, size_t n,
                           struct fq_buf *out);
/* Chips provisioned and in use per pool over time (days). */
void fq_sim_plot_pools(const struct fq_sim_result *r, struct fq_buf *out);
/* Jobs pending (submitted, not started) over time, one series per run, on
 * a log axis (FQ_SVG_LOGY). */
void fq_sim_plot_queue(const struct fq_sim_result *const *rs, size_t n,
                       struct fq_buf *out);

#endif
