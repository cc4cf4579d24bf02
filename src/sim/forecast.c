/*
 * forecast.c - start forecasts measured on every run: at a sampled job's
 * submission the estimator (fq_estimate_run, the one `flexq estimate`
 * uses) forecasts its start under the policy being simulated, with the
 * run's own history of run times; at its real start the forecast is
 * scored against docs/estimates.md's tolerance.
 *
 * What it does not do: change the run (the estimate runs on a copy).
 */
#include "simrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/estimate.h"
#include "flexq/runguess.h"
#include "flexq/runhist.h"
#include "flexq/timefmt.h"

/* --- forecasts ------------------------------------------------------------ */

/* The queue a job's history is kept under: the trace's queue column, else
 * the LocalQueue it goes to. */
const char *sim_history_queue(const struct sim *s,
                              const struct fq_trace_job *tj)
{
    return *tj->queue ? tj->queue : fq_trace_queue(&s->o->map, tj, s->defq);
}

/* How long a live job's current workload runs from now, as a cluster
 * would guess it (or, with forecast_oracle, as it will); *conf: the
 * guess's confidence. */
static int64_t guess_left(struct sim *s, size_t i, int *conf)
{
    const struct fq_trace_job *tj = &s->o->trace->jobs[i];
    const struct jstate *j = &s->js[i];
    int64_t done_before = tj->duration_ms - j->remaining_ms;
    int64_t elapsed = j->phase == PH_RUNNING ? s->now - j->run_start : 0;
    int64_t left;
    if (s->o->forecast_oracle) {
        *conf = FQ_RUNHIST_HIGH;
        left = j->remaining_ms - elapsed;
    } else {
        struct fq_runhist_guess g;
        fq_runhist_guess(s->hist, tj->user, sim_history_queue(s, tj),
                         s->r->jobs[i].chips, tj->requested_ms, &g);
        *conf = (int)g.conf;
        left =
            fq_runhist_left(g.run_ms, done_before + elapsed, tj->requested_ms);
    }
    /* A split job's workload ends with its segment. */
    if (j->split && left > s->seg_ms - elapsed)
        left = s->seg_ms - elapsed;
    return left > 1000 ? left : 1000;
}

/*
 * Forecasts job idx's start with the estimator, from the state a cluster
 * would see now: the config, the Nodes, and every job running or waiting
 * with its guessed run time. `w` is its workload, not yet submitted.
 */
void sim_forecast(struct sim *s, size_t idx, const struct fq_value *w)
{
    struct fq_sim_result *r = s->r;
    if (s->pending + s->running > FQ_SIM_FORECAST_MAX_AHEAD) {
        r->fc_skipped++;
        return;
    }
    const struct fq_object **nodes = NULL;
    size_t nn = fq_objstore_list(s->store, FQ_KIND_NODE, NULL, &nodes);
    const struct fq_value **objs = fq_xcalloc(s->ndocs + nn + 1, sizeof(*objs));
    size_t no = 0;
    for (size_t i = 0; i < s->ndocs; i++)
        objs[no++] = s->docs[i];
    for (size_t i = 0; i < nn; i++)
        objs[no++] = nodes[i]->obj;
    free(nodes);
    while (s->first_live < idx && (s->js[s->first_live].phase == PH_DONE ||
                                   s->js[s->first_live].phase == PH_NEW))
        s->first_live++;
    size_t cap = s->pending + s->running + 1, nj = 0;
    struct fq_estimate_job *jobs = fq_xcalloc(cap, sizeof(*jobs));
    struct fq_runguess_tally tally = {0};
    for (size_t i = s->first_live; i < idx && nj < cap; i++) {
        const struct jstate *j = &s->js[i];
        if (j->phase != PH_WAITING && j->phase != PH_RUNNING)
            continue;
        char name[WL_NAME_SIZE];
        sim_wl_name(name, i, j->wseg);
        const struct fq_object *o =
            fq_objstore_get(s->store, FQ_KIND_WORKLOAD, s->ns, name);
        if (!o)
            continue;
        int conf = 0;
        int64_t left = guess_left(s, i, &conf);
        fq_runguess_tally_add(&tally, (enum fq_runhist_confidence)conf,
                              r->jobs[i].chips, left);
        jobs[nj++] =
            (struct fq_estimate_job){o->obj, sim_to_abs(r->jobs[i].submit_ms),
                                     left, j->phase == PH_RUNNING};
    }
    struct fq_estimate_world world = {
        .objects = objs,
        .nobjects = no,
        .jobs = jobs,
        .njobs = nj,
        .now_ms = sim_to_abs(s->now),
        .policy = s->policy,
    };
    struct fq_estimate_options eo;
    fq_estimate_options_init(&eo);
    if (s->o->forecast_seeds > 0)
        eo.nseeds = s->o->forecast_seeds; /* else flexq estimate's default */
    eo.seed = s->o->seed * 1000 + 1;      /* not the run's own draws */
    eo.pin = false;
    struct fq_estimate_result res;
    struct fq_err e2 = {0};
    if (fq_estimate_run(&world, w, &eo, &res, &e2) == 0 && res.n) {
        FQ_GROW(r->fc, r->fccap, r->nfc + 1);
        int conf = (int)fq_runguess_tally_result(&tally);
        r->fc[r->nfc++] = (struct fq_sim_forecast){
            (uint32_t)idx,      res.rows[0].p10_ms, res.rows[0].p50_ms,
            res.rows[0].p90_ms, (uint8_t)conf,      (uint32_t)nj};
        fq_estimate_result_release(&res);
    } else {
        r->fc_skipped++;
    }
    free(jobs);
    free(objs);
}
