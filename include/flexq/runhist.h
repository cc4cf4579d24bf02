/*
 * runhist.h - run-time guesses from history: how long will this job run?
 *
 * A forecast of when a job starts is only as good as the run times it
 * assumes for the jobs ahead of it. This module keeps a compact history of
 * finished runs (per user, per queue and job size, per queue, overall) and
 * guesses a new job's run time from the most specific level that knows
 * something, capped by the job's own limit (its requested wall time, or
 * activeDeadlineSeconds) when it has one. Each guess says where it came
 * from and how much to trust it.
 *
 * Pure: no clocks, no I/O; memory grows with the number of distinct users
 * and queues (capped), not with the number of runs.
 */
#ifndef FLEXQ_RUNHIST_H
#define FLEXQ_RUNHIST_H

#include <stdint.h>

/* Where a guess came from, most specific first. */
enum fq_runhist_source {
    FQ_RUNHIST_USER = 0, /* the mean of the user's last two runs */
    FQ_RUNHIST_LIMIT,    /* the job's own limit, scaled by history */
    FQ_RUNHIST_SHAPE,    /* recent runs of the queue's jobs of its size */
    FQ_RUNHIST_QUEUE,    /* recent runs of its queue */
    FQ_RUNHIST_ALL,      /* recent runs of every queue */
    FQ_RUNHIST_DEFAULT,  /* nothing known: one hour */
    FQ_RUNHIST_NSOURCES,
};

/* How much a guess is worth, from the spread its source has shown. */
enum fq_runhist_confidence {
    FQ_RUNHIST_LOW = 0,
    FQ_RUNHIST_MEDIUM,
    FQ_RUNHIST_HIGH,
};

struct fq_runhist_guess {
    int64_t run_ms; /* > 0 */
    enum fq_runhist_source src;
    enum fq_runhist_confidence conf;
};

/* Most users and queue/size keys kept; later ones fall back to coarser
 * levels. */
#define FQ_RUNHIST_MAX_KEYS   65536
#define FQ_RUNHIST_DEFAULT_MS (3600 * 1000LL)

struct fq_runhist; /* opaque */

struct fq_runhist *fq_runhist_new(void);
void fq_runhist_free(struct fq_runhist *h);

/*
 * Records a finished run of run_ms (> 0). user and queue may be "" (not
 * known: that level is skipped); chips is the job's size; limit_ms its
 * own limit (requested wall time) or <= 0. Strings are copied.
 */
void fq_runhist_add(struct fq_runhist *h, const char *user, const char *queue,
                    int64_t chips, int64_t run_ms, int64_t limit_ms);

/*
 * Guesses the run time of a job like that. With a limit, the guess never
 * exceeds it: the user's history capped by the limit, else the limit
 * times the median share of their limits that past jobs used.
 */
void fq_runhist_guess(const struct fq_runhist *h, const char *user,
                      const char *queue, int64_t chips, int64_t limit_ms,
                      struct fq_runhist_guess *out);

/*
 * Like fq_runhist_guess, except for a job with a limit whose user has
 * finished runs with limits: the limit times the mean share of their
 * limits that the user's last 8 such runs used (src USER). Never over the
 * limit; without a limit or such runs, fq_runhist_guess's answer.
 */
void fq_runhist_guess_share(const struct fq_runhist *h, const char *user,
                            const char *queue, int64_t chips, int64_t limit_ms,
                            struct fq_runhist_guess *out);

/*
 * What is left of a running job's guessed run after elapsed_ms: the guess
 * minus elapsed while that is over a minute; past its guess a job is
 * expected to run about as long again as it has (heavy tails), capped by
 * what its limit leaves, and never under a minute.
 */
int64_t fq_runhist_left(int64_t guess_ms, int64_t elapsed_ms, int64_t limit_ms);

#endif
