/*
 * report.h - what one simulated run measured, and how it is written out.
 *
 * The simulator (simrun.c) fills a struct fq_sim_result: one record per
 * trace job, one entry per node pool, and a time series sampled at a fixed
 * interval. This module turns it into figures (wait percentiles by job size
 * class, slowdown, utilisation, cost) and writes them as a JSON summary, a
 * readable table, a per-job CSV, and a side-by-side table for --compare.
 * Everything it prints is a function of the result alone, so a seeded run
 * prints the same bytes every time.
 */
#ifndef FLEXQ_SIM_REPORT_H
#define FLEXQ_SIM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/buf.h"

enum fq_sim_outcome {
    FQ_SIM_UNFINISHED = 0, /* still pending or running when the run ended */
    FQ_SIM_FINISHED,
    FQ_SIM_REFUSED, /* the policy's long-job rule refused it */
    FQ_SIM_EXPIRED, /* its Plan B nodes reached max run: deactivated */
};

const char *fq_sim_outcome_name(enum fq_sim_outcome o);

/* One trace job as the simulation saw it. Times are ms since trace start. */
struct fq_sim_jobrec {
    const char *id; /* borrowed from the trace */
    int64_t submit_ms;
    int64_t duration_ms;
    int64_t start_ms;  /* first start (its nodes up), -1 if never */
    int64_t finish_ms; /* -1 unless finished */
    int64_t run_ms;    /* time spent running, including lost work */
    int32_t chips;
    int32_t hosts;
    int16_t pool;     /* pool it (last) ran on, -1 if none */
    uint8_t outcome;  /* enum fq_sim_outcome */
    uint8_t segments; /* checkpointed segments it ran in (a boundary
                       * kept in the same workload counts too) */
    uint16_t evictions;
};

/* A start forecast made at a job's submission (times in ms after it). */
struct fq_sim_forecast {
    uint32_t job;                   /* index in the trace */
    int64_t p10_ms, p50_ms, p90_ms; /* -1: later than the horizon */
    uint8_t conf;                   /* enum fq_runhist_confidence */
    uint32_t ahead;                 /* jobs running or waiting then */
};

/* One node pool, with what the run measured on it. */
struct fq_sim_pool {
    char name[64];
    char flavor[64]; /* the ResourceFlavor that selects it, or "" */
    bool queued;     /* flex-start with queued provisioning (Plan B) */
    int64_t chips_per_node;
    double price_per_node_hour; /* USD */
    double node_ms;             /* node-milliseconds provisioned */
    double chip_ms;             /* chip-milliseconds provisioned */
    double busy_chip_ms;        /* chip-milliseconds used by running jobs */
    int64_t max_nodes;          /* most nodes at once */
};

/* The time series: n samples, each with `npools` pool columns. */
struct fq_sim_series {
    size_t n, cap;
    int64_t *t_ms;       /* owned */
    int32_t *pending;    /* owned: jobs submitted, not yet started */
    int32_t *running;    /* owned: jobs running */
    int32_t *pool_chips; /* owned: [i * npools + p] chips provisioned */
    int32_t *pool_used;  /* owned: [i * npools + p] chips in use */
};

struct fq_sim_result {
    char policy[32];
    const char *long_rule; /* the rule for jobs longer than Plan B's max run */
    int64_t max_run_ms;    /* Plan B's max run */
    struct fq_sim_jobrec *jobs; /* owned, in trace order */
    size_t njobs;
    struct fq_sim_pool *pools; /* owned */
    size_t npools;
    struct fq_sim_series series;
    int64_t end_ms;             /* virtual time when the run ended */
    uint64_t steps;             /* engine settles */
    uint64_t events;            /* stored changes the engine made */
    size_t skipped_rows;        /* bad trace rows skipped */
    struct fq_sim_forecast *fc; /* owned, in submission order */
    size_t nfc, fccap;
    size_t fc_skipped;    /* sampled jobs not forecast (too much ahead) */
    size_t routed_b;      /* jobs routed to Plan B by --route-b-over */
    double arrival_scale; /* arrivals x this (1: as in the trace) */
    int64_t plan_a_quota; /* Plan A's quota when resized, else 0 */
    /* Segment boundaries of split jobs (not in the reports: they say how
     * the run got its figures, not what they are): kept in the same
     * workload, or ended and queued again as a new one. */
    uint64_t seg_kept, seg_requeued;
};

void fq_sim_result_init(struct fq_sim_result *r);
void fq_sim_result_release(struct fq_sim_result *r);

/* Appends a sample (pool columns from the two arrays of r->npools). */
void fq_sim_series_push(struct fq_sim_result *r, int64_t t_ms, int32_t pending,
                        int32_t running, const int32_t *pool_chips,
                        const int32_t *pool_used);

/* --- figures ------------------------------------------------------------ */

/* Job size classes, by chips. */
enum {
    FQ_SIM_NCLASSES = 5
}; /* all, 1, 2-8, 9-64, 65+ */

/* A job "starts at once" when its wait is at most this (a node boot is
 * 120 s in the examples, so one that had to boot a node does not). */
#define FQ_SIM_AT_ONCE_S 60.0

const char *fq_sim_class_name(int c);
int fq_sim_class_of(int64_t chips); /* 1..4 */

struct fq_sim_waits {
    size_t n; /* finished jobs in the class */
    double mean_s, p50_s, p90_s, p95_s, p99_s, max_s;
    double at_once;       /* share that started within FQ_SIM_AT_ONCE_S */
    double over_1h;       /* share that waited more than an hour */
    double slowdown_mean; /* bounded slowdown, tau = 10 s */
};

/* How forecasts held: n forecast jobs that started, band = within the
 * tolerance of docs/estimates.md ([0.8 p10 - 120 s, 1.25 p90 + 120 s]),
 * range = within [p10, p90]; "waited": the jobs that waited over 5 min. */
struct fq_sim_fc_figures {
    size_t n, band, range, waited, waited_band;
    size_t conf_n[3], conf_band[3]; /* by confidence low, medium, high */
    double p50_abs_err_s;           /* median |wait - p50| */
};

#define FQ_SIM_FC_WAITED_S 300.0

struct fq_sim_figures {
    struct fq_sim_fc_figures fc;
    size_t jobs, finished, refused, expired, unfinished, evictions;
    struct fq_sim_waits cls[FQ_SIM_NCLASSES];
    double cost_total;           /* USD */
    double chip_hours_delivered; /* busy chip-hours on all pools */
    double cost_per_chip_hour;   /* 0 when nothing was delivered */
    double pool_cost[64];        /* per pool (first 64) */
    double pool_util[64];        /* busy / provisioned chip time */
};

/*
 * Computes the figures. Percentiles are nearest-rank (the ceil(p*n)-th
 * smallest wait), waits are first start minus submit, slowdown is
 * max(1, (finish - submit) / max(duration, 10 s)).
 */
void fq_sim_figures(const struct fq_sim_result *r, struct fq_sim_figures *f);

/* Nearest-rank percentile of n sorted values (p in [0, 1]); 0 if n == 0. */
double fq_sim_percentile(const double *sorted, size_t n, double p);

/* --- writers ------------------------------------------------------------ */

void fq_sim_report_json(const struct fq_sim_result *r, struct fq_buf *out);
void fq_sim_report_table(const struct fq_sim_result *r, struct fq_buf *out);
void fq_sim_report_jobs_csv(const struct fq_sim_result *r, struct fq_buf *out);
/* One row per forecast: job_id, submit_s, ahead, confidence, p10_s,
 * p50_s, p90_s (empty: later than the horizon), wait_s (empty: never
 * started), held (1 within tolerance, 0 not). */
void fq_sim_report_forecasts_csv(const struct fq_sim_result *r,
                                 struct fq_buf *out);
/* Several runs of one trace side by side, one column per policy. */
void fq_sim_report_compare(const struct fq_sim_result *const *rs, size_t n,
                           struct fq_buf *out);
/* The JSON of several runs: {"runs": [summary, ...]}. */
void fq_sim_report_compare_json(const struct fq_sim_result *const *rs, size_t n,
                                struct fq_buf *out);

#endif
