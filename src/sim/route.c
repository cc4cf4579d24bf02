/*
 * route.c - `--route-b-area`: send the jobs that would hold Plan A longest
 * to Plan B, where their nodes cost no more per chip-hour.
 *
 * Why. Where no job is long (KTH), Plan A is held by the few jobs with the
 * most chip-hours: on KTH's dev split 5% of the jobs hold two thirds of the
 * chip-hours and 10% hold 83%. Every job that finds Plan A full pays a
 * flex-start request's wait; a job sent to Plan B pays it once, whatever
 * its size. Keeping Plan A for the many small jobs lets them start at once,
 * and the few big ones pay one request each for a long, wide run.
 *
 * The rule, at a job's first submission: its guessed chip-hours (the run
 * history's guess of its run time, never the trace's truth, times its
 * chips) are at least `route_b_area` x Plan A's quota x one hour, and on
 * Plan B's nodes its pods cost no more per chip-hour than on Plan A's
 * (Plan B's nodes are whole machines; a 1-chip pod alone on an 8-chip
 * flex-start node costs 8 times its share, more than the discount gives
 * back). Such a job gets a nodeSelector on Plan B's flavor's labels, as
 * --route-b-over does. A job with no history is not routed.
 *
 * What it does not do: change the engine's choices, route a long job's
 * later segments, or look at the queue as it is now (the rule is fixed by
 * the config and the job, so a user can tell in advance where a job goes).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flexq/cloud.h"
#include "flexq/nodepool.h"
#include "flexq/quantity.h"
#include "flexq/runhist.h"
#include "simrun.h"

static int64_t nominal_of(const struct fq_value *v)
{
    if (!v)
        return 0;
    if (v->type == FQ_V_NUM)
        return v->u.num.is_int ? v->u.num.i : (int64_t)v->u.num.d;
    const char *str = fq_value_as_str(v);
    int64_t q = 0;
    if (str && fq_quantity_parse(str, FQ_Q_UNIT, &q, NULL, NULL) == 0)
        return q;
    return 0;
}

/* Chips per node and price per node-hour of a flavor's pool; false when
 * the pool or its machine is unknown. */
static bool pool_price(const struct sim *s, struct fq_value **docs, size_t n,
                       const struct flavor *f, int64_t *cpn, double *price)
{
    for (size_t i = 0; f->pool && i < n; i++) {
        if (strcmp(fq_value_path_str(docs[i], "kind", ""), "NodePool") ||
            strcmp(fq_value_path_str(docs[i], "metadata.name", ""), f->pool))
            continue;
        struct fq_nodepool_spec spec;
        if (fq_nodepool_decode(docs[i], &spec, NULL) || !spec.machine ||
            spec.machine->accel_count <= 0)
            return false;
        *cpn = spec.machine->accel_count;
        *price = s->cloud ? fq_cloud_price(s->cloud, spec.machine->name,
                                           spec.location ? spec.location : "",
                                           fq_nodepool_provisioning(&spec)) :
                            fq_nodepool_price(&spec);
        return *price > 0;
    }
    return false;
}

void sim_route_setup(struct sim *s, struct fq_value **docs, size_t n)
{
    struct sim_route *rt = &s->route;
    memset(rt, 0, sizeof(*rt));
    if (!(s->o->route_b_area > 0) || !s->plan_b_selector)
        return;
    /* Plan A's quota: the nominal quotas of the accelerator on every
     * Plan A flavor of every ClusterQueue (as applied: after
     * --size-plan-a). */
    int64_t quota = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(fq_value_path_str(docs[i], "kind", ""), "ClusterQueue"))
            continue;
        const struct fq_value *rgs =
            fq_value_path(docs[i], "spec.resourceGroups");
        for (size_t g = 0; g < fq_value_len(rgs); g++) {
            const struct fq_value *fls =
                fq_map_get(fq_seq_at(rgs, g), "flavors");
            for (size_t k = 0; k < fq_value_len(fls); k++) {
                const struct fq_value *fe = fq_seq_at(fls, k);
                const char *fname = fq_value_path_str(fe, "name", "");
                bool plan_a = false;
                for (size_t f = 0; f < s->nflv; f++)
                    if (!strcmp(s->flv[f].name, fname))
                        plan_a = !s->flv[f].plan_b;
                if (!plan_a)
                    continue;
                const struct fq_value *rs = fq_map_get(fe, "resources");
                for (size_t r = 0; r < fq_value_len(rs); r++) {
                    const struct fq_value *rq = fq_seq_at(rs, r);
                    if (!strcmp(fq_value_path_str(rq, "name", ""), s->res))
                        quota += nominal_of(fq_map_get(rq, "nominalQuota"));
                }
            }
        }
    }
    bool have_a = false, have_b = false;
    for (size_t f = 0; f < s->nflv; f++) {
        const struct flavor *fl = &s->flv[f];
        if (!fl->gives)
            continue;
        if (fl->plan_b && !have_b)
            have_b = pool_price(s, docs, n, fl, &rt->b_cpn, &rt->b_price);
        else if (!fl->plan_b && !have_a)
            have_a = pool_price(s, docs, n, fl, &rt->a_cpn, &rt->a_price);
    }
    if (quota <= 0 || !have_a || !have_b)
        return; /* nothing to compare with: never routes */
    rt->min_chip_ms = s->o->route_b_area * (double)quota * 3600000.0;
    rt->on = true;
}

bool sim_route_area(struct sim *s, size_t idx)
{
    const struct sim_route *rt = &s->route;
    const struct jstate *j = &s->js[idx];
    if (!rt->on || !s->hist || j->seg != 1)
        return false;
    const struct fq_trace_job *tj = &s->o->trace->jobs[idx];
    int64_t hosts, per;
    fq_trace_shape(&s->o->map, tj, &hosts, &per);
    if (per <= 0 || hosts <= 0 || per > rt->b_cpn)
        return false;
    /* Plan B: the request's pods packed onto whole nodes. */
    int64_t pods_per_node = rt->b_cpn / per;
    int64_t nodes = (hosts + pods_per_node - 1) / pods_per_node;
    double chips = (double)hosts * (double)per;
    if ((double)nodes * rt->b_price > chips * rt->a_price / (double)rt->a_cpn)
        return false;
    struct fq_runhist_guess g;
    if (s->o->route_guess == FQ_SIM_GUESS_SHARE)
        fq_runhist_guess_share(s->hist, tj->user, sim_history_queue(s, tj),
                               s->r->jobs[idx].chips, tj->requested_ms, &g);
    else
        fq_runhist_guess(s->hist, tj->user, sim_history_queue(s, tj),
                         s->r->jobs[idx].chips, tj->requested_ms, &g);
    if (g.src == FQ_RUNHIST_DEFAULT ||
        (double)g.run_ms * chips < rt->min_chip_ms)
        return false;
    s->r->routed_b++;
    return true;
}
