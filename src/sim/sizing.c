/*
 * sizing.c - arrivals scaled in time and Plan A sized to the offered load
 * (see sizing.h).
 *
 * How it works. Scaling divides submit times: a job at 3600 s with
 * f = 1.2 arrives at 3000 s. It keeps every job and its shape, so the
 * only thing that changes is the load (chips x duration per unit of
 * time), by f exactly. The offered load of a window is
 *
 *     sum(chips_j * duration_j) / (last submit - first submit)
 *
 * which is what examples/sim/ calls "100%": for KTH's dev split about 72
 * chips, for Philly's about 1,170 GPUs. Plan A's quota is then a share of
 * it, rounded up to a whole chip, and its pool gets 25% headroom in nodes
 * (examples/sim/: 72 chips on 8-chip hosts -> 12 nodes).
 *
 * It does not edit the config: simrun.c applies the quota to the Plan A
 * flavors it finds.
 */
#include "sizing.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void fq_sim_scale_arrivals(struct fq_trace *t, double f)
{
    if (!(f >= FQ_SIM_SCALE_MIN && f <= FQ_SIM_SCALE_MAX) || f == 1.0)
        return;
    for (size_t i = 0; i < t->n; i++)
        t->jobs[i].submit_ms = (int64_t)floor((double)t->jobs[i].submit_ms / f);
}

double fq_sim_offered_load(const struct fq_trace *t,
                           const struct fq_trace_map *m)
{
    if (!t->n)
        return 0;
    double work = 0, dur = 0;
    for (size_t i = 0; i < t->n; i++) {
        int64_t hosts, per;
        fq_trace_shape(m, &t->jobs[i], &hosts, &per);
        work += (double)(hosts * per) * (double)t->jobs[i].duration_ms;
        dur += (double)t->jobs[i].duration_ms;
    }
    double span = (double)(t->jobs[t->n - 1].submit_ms - t->jobs[0].submit_ms);
    if (span <= 0)
        span = dur / (double)t->n;
    return span > 0 ? work / span : 0;
}

int fq_sim_size_parse(const char *s, double *percent, int64_t *chips,
                      struct fq_err *err)
{
    *percent = 0;
    *chips = 0;
    if (!s || !*s)
        return fq_err_set(err, FQ_EINVAL, "--size-plan-a: empty value");
    const char *num = NULL;
    bool pct = false;
    if (!strcmp(s, "auto")) {
        *percent = 100;
        return 0;
    }
    if (!strncmp(s, "auto:", 5)) {
        num = s + 5;
        pct = true;
    } else {
        num = s;
        size_t n = strlen(s);
        pct = n > 1 && s[n - 1] == '%';
    }
    char *end;
    errno = 0;
    double v = strtod(num, &end);
    bool ok = end != num && !errno && (pct ? (*end == '%' || !*end) : !*end) &&
              (!*end || !end[1]);
    if (pct && ok && !(v >= 1 && v <= 1000))
        ok = false;
    if (!pct && ok && !(v >= 1 && v <= 1e12 && v == floor(v)))
        ok = false;
    if (!ok)
        return fq_err_set(err, FQ_EINVAL,
                          "--size-plan-a must be auto, auto:P or P%% (P "
                          "percent of the offered load, 1..1000) or a chip "
                          "count, got \"%s\"",
                          s);
    if (pct)
        *percent = v;
    else
        *chips = (int64_t)v;
    return 0;
}

int64_t fq_sim_plan_a_nodes(int64_t quota, int64_t chips_per_node)
{
    if (chips_per_node <= 0)
        chips_per_node = 1;
    double nodes = ceil((double)quota / (double)chips_per_node * 1.25 - 1e-9);
    return nodes < 1 ? 1 : (int64_t)nodes;
}
