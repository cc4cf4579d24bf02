/*
 * runguess.h - how long will each workload of a cluster run? flexqd's
 * answer for its forecasts, the one `flexq sim` measures.
 *
 * A workload's run time is, in this order:
 *   1. stated: its flexq.dev/expected-runtime annotation, or its owner
 *      job's (what the user says, taken as said);
 *   2. guessed from the history of the workloads that finished in the
 *      same store (runhist.h: the namespace's last two runs, the job's
 *      own limit times the share of their limits past jobs used, the
 *      ClusterQueue's runs of its size, the ClusterQueue's, every
 *      queue's), never over the job's own limit (the shortest of activeDeadlineSeconds, on the
 *      Workload or its owner, and Kueue's maximumExecutionTimeSeconds);
 *   3. one hour.
 * The namespace stands for the user: a Workload does not say who made it,
 * and a flexq developer token works in its own namespaces (docs/api.md).
 *
 * The history is built once from the store: every Workload whose
 * Finished condition says Succeeded and that has a PodsReady time, its
 * run being PodsReady to Finished, added in the order they finished.
 * Failed runs are left out (cut short, they say little of a full run).
 *
 * Pure: reads the store it is given, no clocks; the caller passes `now`.
 */
#ifndef FLEXQ_RUNGUESS_H
#define FLEXQ_RUNGUESS_H

#include <stddef.h>
#include <stdint.h>

#include "flexq/objstore.h"
#include "flexq/runhist.h"
#include "flexq/value.h"

/* Where a run time came from. */
enum fq_runguess_source {
    FQ_RUNGUESS_STATED = 0, /* flexq.dev/expected-runtime */
    FQ_RUNGUESS_NAMESPACE,  /* the namespace's last runs */
    FQ_RUNGUESS_LIMIT,      /* its limit, scaled by history */
    FQ_RUNGUESS_SHAPE,      /* its queue's runs of its size */
    FQ_RUNGUESS_QUEUE,      /* its queue's runs */
    FQ_RUNGUESS_ALL,        /* every queue's runs */
    FQ_RUNGUESS_DEFAULT,    /* nothing known: one hour */
    FQ_RUNGUESS_NSOURCES,
};

struct fq_runguess_answer {
    int64_t run_ms;   /* > 0: the whole run, from its start */
    int64_t limit_ms; /* its own limit, or -1 */
    int64_t chips;    /* its accelerators in all (the size its runs are
                         kept under; a forecast weighs guesses by it) */
    enum fq_runguess_source src;
    /* A stated run time counts as HIGH: the user's word, taken as given. */
    enum fq_runhist_confidence conf;
};

struct fq_runguess; /* opaque: the history of one store */

/* Builds the history of store s's finished workloads. Owned. */
struct fq_runguess *fq_runguess_new(const struct fq_objstore *s);
void fq_runguess_free(struct fq_runguess *g);
/* How many finished runs the history holds. */
uint64_t fq_runguess_runs(const struct fq_runguess *g);

/* The run time of workload wl (borrowed; its owner is looked up in s). */
void fq_runguess_of(const struct fq_runguess *g, const struct fq_objstore *s,
                    const struct fq_value *wl, struct fq_runguess_answer *out);

/* What is left of a run guessed as `a` after elapsed_ms (runhist.h's
 * fq_runhist_left: at least a minute, past its guess about as long again
 * as it has run, within its limit). */
int64_t fq_runguess_left(const struct fq_runguess_answer *a,
                         int64_t elapsed_ms);

/*
 * A forecast's confidence from the guesses of the workloads ahead: their
 * confidences weighted by their work (run time left x chips, a job
 * without accelerators counted as one chip), rounded; HIGH with nothing
 * ahead. flexqd's estimates and flexq sim's forecasts both rate theirs
 * so: start from {0}, add each workload ahead, then read the result.
 */
struct fq_runguess_tally {
    double weight, score;
};

void fq_runguess_tally_add(struct fq_runguess_tally *t,
                           enum fq_runhist_confidence conf, int64_t chips,
                           int64_t left_ms);
enum fq_runhist_confidence fq_runguess_tally_result(
    const struct fq_runguess_tally *t);

/* The JSON key and the words for a source ("namespace", "the namespace's
 * last runs"). */
const char *fq_runguess_source_key(enum fq_runguess_source s);
const char *fq_runguess_source_words(enum fq_runguess_source s);

#endif
