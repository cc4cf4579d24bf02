/*
 * report.c - figures and writers for a simulated run (see report.h).
 *
 * How it works: fq_sim_figures walks the job records once per size class,
 * copies the waits of finished jobs into a scratch array, sorts it and reads
 * nearest-rank percentiles; pool figures come straight from the pool
 * entries (node time x price = cost; busy chip time / provisioned chip time
 * = utilisation). The writers print those figures with fixed formats, so
 * the output is a pure function of the result.
 *
 * Worked example (the unit test's): jobs of 1 chip waiting 0, 10, 20 and
 * 30 s: mean 15, p50 = 2nd smallest = 10, p95 = p99 = max = 30.
 *
 * It does not: read clocks (a run's wall time is the caller's to print), or
 * compute anything the simulator did not record.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

const char *fq_sim_outcome_name(enum fq_sim_outcome o)
{
    switch (o) {
    case FQ_SIM_FINISHED:
        return "finished";
    case FQ_SIM_REFUSED:
        return "refused";
    case FQ_SIM_EXPIRED:
        return "expired";
    case FQ_SIM_UNFINISHED:
        break;
    }
    return "unfinished";
}

void fq_sim_result_init(struct fq_sim_result *r)
{
    memset(r, 0, sizeof(*r));
    r->long_rule = "";
}

void fq_sim_result_release(struct fq_sim_result *r)
{
    free(r->jobs);
    free(r->pools);
    free(r->fc);
    free(r->series.t_ms);
    free(r->series.pending);
    free(r->series.running);
    free(r->series.pool_chips);
    free(r->series.pool_used);
    memset(r, 0, sizeof(*r));
}

void fq_sim_series_push(struct fq_sim_result *r, int64_t t_ms, int32_t pending,
                        int32_t running, const int32_t *pool_chips,
                        const int32_t *pool_used)
{
    struct fq_sim_series *s = &r->series;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        size_t np = r->npools ? r->npools : 1;
        s->t_ms = fq_xrealloc(s->t_ms, cap * sizeof(*s->t_ms));
        s->pending = fq_xrealloc(s->pending, cap * sizeof(*s->pending));
        s->running = fq_xrealloc(s->running, cap * sizeof(*s->running));
        s->pool_chips =
            fq_xrealloc(s->pool_chips, cap * np * sizeof(*s->pool_chips));
        s->pool_used =
            fq_xrealloc(s->pool_used, cap * np * sizeof(*s->pool_used));
        s->cap = cap;
    }
    s->t_ms[s->n] = t_ms;
    s->pending[s->n] = pending;
    s->running[s->n] = running;
    for (size_t p = 0; p < r->npools; p++) {
        s->pool_chips[s->n * r->npools + p] = pool_chips ? pool_chips[p] : 0;
        s->pool_used[s->n * r->npools + p] = pool_used ? pool_used[p] : 0;
    }
    s->n++;
}

/* --- figures ------------------------------------------------------------- */

const char *fq_sim_class_name(int c)
{
    static const char *const names[FQ_SIM_NCLASSES] = {"all", "1", "2-8",
                                                       "9-64", "65+"};
    return c >= 0 && c < FQ_SIM_NCLASSES ? names[c] : "?";
}

int fq_sim_class_of(int64_t chips)
{
    if (chips <= 1)
        return 1;
    if (chips <= 8)
        return 2;
    if (chips <= 64)
        return 3;
    return 4;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double fq_sim_percentile(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    double rank = ceil(p * (double)n);
    size_t i = rank < 1 ? 0 : (size_t)rank - 1;
    if (i >= n)
        i = n - 1;
    return sorted[i];
}

static double slowdown(const struct fq_sim_jobrec *j)
{
    double run = (double)(j->duration_ms > 10000 ? j->duration_ms : 10000);
    double s = (double)(j->finish_ms - j->submit_ms) / run;
    return s < 1 ? 1 : s;
}

/* In band: within docs/estimates.md's tolerance; p90 = -1 (later than
 * the horizon) has no upper end. */
static bool fc_in_band(const struct fq_sim_forecast *c, double wait_ms)
{
    if (c->p10_ms >= 0 && wait_ms < 0.8 * (double)c->p10_ms - 120000.0)
        return false;
    if (c->p10_ms < 0)
        return wait_ms >= 14 * 86400000.0 * 0.8;
    return c->p90_ms < 0 || wait_ms <= 1.25 * (double)c->p90_ms + 120000.0;
}

static void fc_figures(const struct fq_sim_result *r,
                       struct fq_sim_fc_figures *f)
{
    double *err = fq_xmalloc((r->nfc ? r->nfc : 1) * sizeof(*err));
    for (size_t i = 0; i < r->nfc; i++) {
        const struct fq_sim_forecast *c = &r->fc[i];
        const struct fq_sim_jobrec *j = &r->jobs[c->job];
        if (j->start_ms < 0)
            continue;
        double wait = (double)(j->start_ms - j->submit_ms);
        bool band = fc_in_band(c, wait);
        bool range = c->p10_ms >= 0 && wait >= (double)c->p10_ms &&
                     (c->p90_ms < 0 || wait <= (double)c->p90_ms);
        err[f->n] = c->p50_ms < 0 ? 14 * 86400.0 :
                                    fabs(wait - (double)c->p50_ms) / 1000.0;
        f->n++;
        f->band += band;
        f->range += range;
        if (wait > FQ_SIM_FC_WAITED_S * 1000.0) {
            f->waited++;
            f->waited_band += band;
        }
        int k = c->conf < 3 ? c->conf : 0;
        f->conf_n[k]++;
        f->conf_band[k] += band;
    }
    qsort(err, f->n, sizeof(*err), cmp_double);
    f->p50_abs_err_s = fq_sim_percentile(err, f->n, 0.5);
    free(err);
}

void fq_sim_figures(const struct fq_sim_result *r, struct fq_sim_figures *f)
{
    memset(f, 0, sizeof(*f));
    f->jobs = r->njobs;
    double *w = fq_xmalloc((r->njobs ? r->njobs : 1) * sizeof(*w));
    for (size_t i = 0; i < r->njobs; i++) {
        const struct fq_sim_jobrec *j = &r->jobs[i];
        f->evictions += j->evictions;
        switch ((enum fq_sim_outcome)j->outcome) {
        case FQ_SIM_FINISHED:
            f->finished++;
            break;
        case FQ_SIM_REFUSED:
            f->refused++;
            break;
        case FQ_SIM_EXPIRED:
            f->expired++;
            break;
        case FQ_SIM_UNFINISHED:
            f->unfinished++;
            break;
        }
    }
    for (int c = 0; c < FQ_SIM_NCLASSES; c++) {
        struct fq_sim_waits *cw = &f->cls[c];
        size_t n = 0;
        double sum = 0, sd = 0;
        size_t once = 0, hour = 0;
        for (size_t i = 0; i < r->njobs; i++) {
            const struct fq_sim_jobrec *j = &r->jobs[i];
            if (j->outcome != FQ_SIM_FINISHED)
                continue;
            if (c > 0 && fq_sim_class_of(j->chips) != c)
                continue;
            w[n] = (double)(j->start_ms - j->submit_ms) / 1000.0;
            sum += w[n];
            once += w[n] <= FQ_SIM_AT_ONCE_S;
            hour += w[n] > 3600.0;
            sd += slowdown(j);
            n++;
        }
        cw->n = n;
        if (n == 0)
            continue;
        qsort(w, n, sizeof(*w), cmp_double);
        cw->mean_s = sum / (double)n;
        cw->p50_s = fq_sim_percentile(w, n, 0.50);
        cw->p90_s = fq_sim_percentile(w, n, 0.90);
        cw->at_once = (double)once / (double)n;
        cw->over_1h = (double)hour / (double)n;
        cw->p95_s = fq_sim_percentile(w, n, 0.95);
        cw->p99_s = fq_sim_percentile(w, n, 0.99);
        cw->max_s = w[n - 1];
        cw->slowdown_mean = sd / (double)n;
    }
    free(w);
    for (size_t p = 0; p < r->npools; p++) {
        const struct fq_sim_pool *pl = &r->pools[p];
        double cost = pl->node_ms / 3600000.0 * pl->price_per_node_hour;
        f->cost_total += cost;
        f->chip_hours_delivered += pl->busy_chip_ms / 3600000.0;
        if (p < 64) {
            f->pool_cost[p] = cost;
            f->pool_util[p] =
                pl->chip_ms > 0 ? pl->busy_chip_ms / pl->chip_ms : 0;
        }
    }
    fc_figures(r, &f->fc);
    f->cost_per_chip_hour = f->chip_hours_delivered > 0 ?
                                f->cost_total / f->chip_hours_delivered :
                                0;
}

/* --- writers ------------------------------------------------------------ */

static void json_str(struct fq_buf *b, const char *s)
{
    fq_buf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fq_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            fq_buf_printf(b, "\\u%04x", c);
        else
            fq_buf_putc(b, (char)c);
    }
    fq_buf_putc(b, '"');
}

/* A double as JSON: never nan/inf, never an exponent for the sizes a
 * summary holds (a cost of 2,710,935.42 USD keeps its cents), six
 * decimals at most, trailing zeros dropped. */
static void json_num(struct fq_buf *b, double d)
{
    if (!isfinite(d))
        d = 0;
    if (d == floor(d) && fabs(d) < 1e15) {
        fq_buf_printf(b, "%.0f", d);
        return;
    }
    if (fabs(d) < 1e-3 || fabs(d) >= 1e15) {
        fq_buf_printf(b, "%.6g", d);
        return;
    }
    char s[64];
    snprintf(s, sizeof(s), "%.6f", d);
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '0')
        s[--n] = '\0';
    if (n > 0 && s[n - 1] == '.')
        s[--n] = '\0';
    fq_buf_puts(b, s);
}

static void summary_json(const struct fq_sim_result *r, struct fq_buf *b,
                         const char *indent)
{
    struct fq_sim_figures f;
    fq_sim_figures(r, &f);
    fq_buf_printf(b, "{\n%s  \"policy\": ", indent);
    json_str(b, r->policy);
    fq_buf_printf(b, ",\n%s  \"long_job_rule\": ", indent);
    json_str(b, r->long_rule ? r->long_rule : "");
    fq_buf_printf(b, ",\n%s  \"arrival_scale\": ", indent);
    json_num(b, r->arrival_scale > 0 ? r->arrival_scale : 1.0);
    fq_buf_printf(b, ",\n%s  \"plan_a_quota\": %lld", indent,
                  (long long)r->plan_a_quota);
    if (r->routed_b)
        fq_buf_printf(b, ",\n%s  \"routed_to_plan_b\": %zu", indent,
                      r->routed_b);
    fq_buf_printf(b, ",\n%s  \"plan_b_max_run_s\": ", indent);
    json_num(b, (double)r->max_run_ms / 1000.0);
    fq_buf_printf(b,
                  ",\n%s  \"jobs\": %zu,\n%s  \"finished\": %zu,\n"
                  "%s  \"refused\": %zu,\n%s  \"expired_on_plan_b\": %zu,\n"
                  "%s  \"unfinished\": %zu,\n%s  \"evictions\": %zu,\n"
                  "%s  \"skipped_rows\": %zu,\n",
                  indent, f.jobs, indent, f.finished, indent, f.refused, indent,
                  f.expired, indent, f.unfinished, indent, f.evictions, indent,
                  r->skipped_rows);
    fq_buf_printf(b, "%s  \"end_s\": ", indent);
    json_num(b, (double)r->end_ms / 1000.0);
    fq_buf_printf(b, ",\n%s  \"steps\": %llu,\n%s  \"events\": %llu,\n", indent,
                  (unsigned long long)r->steps, indent,
                  (unsigned long long)r->events);
    fq_buf_printf(b, "%s  \"wait_s\": {", indent);
    for (int c = 0; c < FQ_SIM_NCLASSES; c++) {
        const struct fq_sim_waits *w = &f.cls[c];
        fq_buf_printf(b, "%s\n%s    ", c ? "," : "", indent);
        json_str(b, fq_sim_class_name(c));
        fq_buf_printf(b, ": {\"jobs\": %zu, \"mean\": ", w->n);
        json_num(b, w->mean_s);
        fq_buf_puts(b, ", \"p50\": ");
        json_num(b, w->p50_s);
        fq_buf_puts(b, ", \"p90\": ");
        json_num(b, w->p90_s);
        fq_buf_puts(b, ", \"p95\": ");
        json_num(b, w->p95_s);
        fq_buf_puts(b, ", \"p99\": ");
        json_num(b, w->p99_s);
        fq_buf_puts(b, ", \"max\": ");
        json_num(b, w->max_s);
        fq_buf_puts(b, ", \"slowdown_mean\": ");
        json_num(b, w->slowdown_mean);
        fq_buf_puts(b, ", \"at_once\": ");
        json_num(b, w->at_once);
        fq_buf_puts(b, ", \"over_1h\": ");
        json_num(b, w->over_1h);
        fq_buf_puts(b, "}");
    }
    fq_buf_printf(b, "\n%s  },\n%s  \"pools\": [", indent, indent);
    for (size_t p = 0; p < r->npools; p++) {
        const struct fq_sim_pool *pl = &r->pools[p];
        fq_buf_printf(b, "%s\n%s    {\"name\": ", p ? "," : "", indent);
        json_str(b, pl->name);
        fq_buf_puts(b, ", \"flavor\": ");
        json_str(b, pl->flavor);
        fq_buf_printf(b, ", \"queued\": %s, \"max_nodes\": %lld",
                      pl->queued ? "true" : "false", (long long)pl->max_nodes);
        fq_buf_puts(b, ", \"node_hours\": ");
        json_num(b, pl->node_ms / 3600000.0);
        fq_buf_puts(b, ", \"chip_hours\": ");
        json_num(b, pl->chip_ms / 3600000.0);
        fq_buf_puts(b, ", \"busy_chip_hours\": ");
        json_num(b, pl->busy_chip_ms / 3600000.0);
        fq_buf_puts(b, ", \"utilisation\": ");
        json_num(b, p < 64 ? f.pool_util[p] : 0);
        fq_buf_puts(b, ", \"cost_usd\": ");
        json_num(b, p < 64 ? f.pool_cost[p] : 0);
        fq_buf_puts(b, "}");
    }
    fq_buf_printf(b, "\n%s  ],\n%s  \"cost_usd\": ", indent, indent);
    json_num(b, f.cost_total);
    fq_buf_printf(b, ",\n%s  \"chip_hours_delivered\": ", indent);
    json_num(b, f.chip_hours_delivered);
    fq_buf_printf(b, ",\n%s  \"cost_per_chip_hour_usd\": ", indent);
    json_num(b, f.cost_per_chip_hour);
    if (r->nfc || r->fc_skipped) {
        const struct fq_sim_fc_figures *c = &f.fc;
        fq_buf_printf(b,
                      ",\n%s  \"forecasts\": {\"jobs\": %zu, \"skipped\": "
                      "%zu, \"in_band\": %zu, \"in_range\": %zu, "
                      "\"waited_over_5m\": %zu, \"waited_in_band\": %zu, "
                      "\"by_confidence\": {\"low\": [%zu, %zu], "
                      "\"medium\": [%zu, %zu], \"high\": [%zu, %zu]}, "
                      "\"p50_abs_error_s\": ",
                      indent, c->n, r->fc_skipped, c->band, c->range, c->waited,
                      c->waited_band, c->conf_n[0], c->conf_band[0],
                      c->conf_n[1], c->conf_band[1], c->conf_n[2],
                      c->conf_band[2]);
        json_num(b, c->p50_abs_err_s);
        fq_buf_puts(b, "}");
    }
    fq_buf_printf(b, "\n%s}", indent);
}

void fq_sim_report_json(const struct fq_sim_result *r, struct fq_buf *out)
{
    summary_json(r, out, "");
    fq_buf_putc(out, '\n');
}

void fq_sim_report_compare_json(const struct fq_sim_result *const *rs, size_t n,
                                struct fq_buf *out)
{
    fq_buf_puts(out, "{\"runs\": [\n");
    for (size_t i = 0; i < n; i++) {
        fq_buf_puts(out, i ? ",\n  " : "  ");
        summary_json(rs[i], out, "  ");
    }
    fq_buf_puts(out, "\n]}\n");
}

static double pct_of(size_t a, size_t n)
{
    return n ? 100.0 * (double)a / (double)n : 0;
}

/* Seconds as a short human duration: 45s, 12.5m, 3.2h, 4.1d. */
static void human_s(char *buf, size_t size, double s)
{
    if (s < 60)
        snprintf(buf, size, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, size, "%.1fm", s / 60);
    else if (s < 86400)
        snprintf(buf, size, "%.1fh", s / 3600);
    else
        snprintf(buf, size, "%.1fd", s / 86400);
}

void fq_sim_report_table(const struct fq_sim_result *r, struct fq_buf *out)
{
    struct fq_sim_figures f;
    fq_sim_figures(r, &f);
    char mr[32];
    human_s(mr, sizeof(mr), (double)r->max_run_ms / 1000.0);
    fq_buf_printf(out,
                  "policy %s: jobs longer than Plan B's max run (%s) "
                  "are %s\n",
                  r->policy, mr, r->long_rule ? r->long_rule : "");
    if ((r->arrival_scale > 0 && r->arrival_scale != 1.0) || r->plan_a_quota)
        fq_buf_printf(out, "arrivals x%.2f, Plan A quota %s%lld\n",
                      r->arrival_scale > 0 ? r->arrival_scale : 1.0,
                      r->plan_a_quota ? "" : "as configured ",
                      (long long)r->plan_a_quota);
    if (r->routed_b)
        fq_buf_printf(out, "jobs routed to Plan B by their guessed run: %zu\n",
                      r->routed_b);
    fq_buf_printf(out,
                  "jobs %zu  finished %zu  refused %zu  expired on Plan B "
                  "%zu  unfinished %zu  evictions %zu\n\n",
                  f.jobs, f.finished, f.refused, f.expired, f.unfinished,
                  f.evictions);
    fq_buf_printf(out, "%-6s %8s %8s %8s %8s %8s %8s %9s\n", "chips", "jobs",
                  "mean", "p50", "p95", "p99", "max", "slowdown");
    for (int c = 0; c < FQ_SIM_NCLASSES; c++) {
        const struct fq_sim_waits *w = &f.cls[c];
        char a[5][24];
        human_s(a[0], sizeof(a[0]), w->mean_s);
        human_s(a[1], sizeof(a[1]), w->p50_s);
        human_s(a[2], sizeof(a[2]), w->p95_s);
        human_s(a[3], sizeof(a[3]), w->p99_s);
        human_s(a[4], sizeof(a[4]), w->max_s);
        fq_buf_printf(out, "%-6s %8zu %8s %8s %8s %8s %8s %9.2f\n",
                      fq_sim_class_name(c), w->n, a[0], a[1], a[2], a[3], a[4],
                      w->slowdown_mean);
    }
    fq_buf_printf(out, "\n%-20s %-6s %9s %12s %12s %7s %14s\n", "pool", "plan",
                  "max nodes", "node-hours", "chip-hours", "util",
                  "cost (USD)");
    for (size_t p = 0; p < r->npools; p++) {
        const struct fq_sim_pool *pl = &r->pools[p];
        fq_buf_printf(
            out, "%-20s %-6s %9lld %12.1f %12.1f %6.1f%% %14.2f\n", pl->name,
            pl->queued ? "B" : "A", (long long)pl->max_nodes,
            pl->node_ms / 3600000.0, pl->chip_ms / 3600000.0,
            100.0 * (p < 64 ? f.pool_util[p] : 0), p < 64 ? f.pool_cost[p] : 0);
    }
    fq_buf_printf(out,
                  "%-20s %6s %9s %12s %12.1f %7s %14.2f\n"
                  "cost per chip-hour delivered: %.4f USD\n",
                  "total", "", "", "", f.chip_hours_delivered, "", f.cost_total,
                  f.cost_per_chip_hour);
    if (r->nfc || r->fc_skipped) {
        const struct fq_sim_fc_figures *c = &f.fc;
        fq_buf_printf(out,
                      "forecasts: %zu jobs, %.1f%% within tolerance (%.1f%% "
                      "in [p10, p90]); waited over 5 min: %zu, %.1f%% within "
                      "tolerance; median error of p50 %.0f s; %zu skipped\n",
                      c->n, pct_of(c->band, c->n), pct_of(c->range, c->n),
                      c->waited, pct_of(c->waited_band, c->waited),
                      c->p50_abs_err_s, r->fc_skipped);
        fq_buf_printf(out,
                      "forecasts by confidence: low %zu (%.1f%%), medium %zu "
                      "(%.1f%%), high %zu (%.1f%%) within tolerance\n",
                      c->conf_n[0], pct_of(c->conf_band[0], c->conf_n[0]),
                      c->conf_n[1], pct_of(c->conf_band[1], c->conf_n[1]),
                      c->conf_n[2], pct_of(c->conf_band[2], c->conf_n[2]));
    }
}

void fq_sim_report_jobs_csv(const struct fq_sim_result *r, struct fq_buf *out)
{
    fq_buf_puts(out, "job_id,submit_s,chips,hosts,duration_s,start_s,"
                     "finish_s,wait_s,slowdown,pool,segments,evictions,"
                     "outcome\n");
    for (size_t i = 0; i < r->njobs; i++) {
        const struct fq_sim_jobrec *j = &r->jobs[i];
        bool quote = strpbrk(j->id, ",\"\n") != NULL;
        if (quote) {
            fq_buf_putc(out, '"');
            for (const char *s = j->id; *s; s++) {
                if (*s == '"')
                    fq_buf_putc(out, '"');
                fq_buf_putc(out, *s);
            }
            fq_buf_putc(out, '"');
        } else {
            fq_buf_puts(out, j->id);
        }
        fq_buf_printf(out, ",%.3f,%d,%d,%.3f,", (double)j->submit_ms / 1000.0,
                      j->chips, j->hosts, (double)j->duration_ms / 1000.0);
        if (j->start_ms >= 0)
            fq_buf_printf(out, "%.3f", (double)j->start_ms / 1000.0);
        fq_buf_putc(out, ',');
        if (j->outcome == FQ_SIM_FINISHED)
            fq_buf_printf(out, "%.3f,%.3f,%.3f", (double)j->finish_ms / 1000.0,
                          (double)(j->start_ms - j->submit_ms) / 1000.0,
                          slowdown(j));
        else
            fq_buf_puts(out, ",,");
        fq_buf_printf(out, ",%s,%d,%d,%s\n",
                      j->pool >= 0 && (size_t)j->pool < r->npools ?
                          r->pools[j->pool].name :
                          "",
                      j->segments, j->evictions,
                      fq_sim_outcome_name((enum fq_sim_outcome)j->outcome));
    }
}

static void csv_secs(struct fq_buf *out, int64_t ms)
{
    fq_buf_putc(out, ',');
    if (ms >= 0)
        fq_buf_printf(out, "%.3f", (double)ms / 1000.0);
}

void fq_sim_report_forecasts_csv(const struct fq_sim_result *r,
                                 struct fq_buf *out)
{
    static const char *const conf[] = {"low", "medium", "high"};
    fq_buf_puts(out, "job_id,submit_s,ahead,confidence,p10_s,p50_s,p90_s,"
                     "wait_s,held\n");
    for (size_t i = 0; i < r->nfc; i++) {
        const struct fq_sim_forecast *c = &r->fc[i];
        const struct fq_sim_jobrec *j = &r->jobs[c->job];
        bool quote = strpbrk(j->id, ",\"\n") != NULL;
        fq_buf_puts(out, quote ? "\"" : "");
        for (const char *p = j->id; *p; p++) {
            if (*p == '"')
                fq_buf_putc(out, '"');
            fq_buf_putc(out, *p);
        }
        fq_buf_puts(out, quote ? "\"" : "");
        fq_buf_printf(out, ",%.3f,%u,%s", (double)j->submit_ms / 1000.0,
                      (unsigned)c->ahead, conf[c->conf < 3 ? c->conf : 0]);
        csv_secs(out, c->p10_ms);
        csv_secs(out, c->p50_ms);
        csv_secs(out, c->p90_ms);
        int64_t wait = j->start_ms >= 0 ? j->start_ms - j->submit_ms : -1;
        csv_secs(out, wait);
        fq_buf_printf(out, ",%s\n",
                      wait < 0                    ? "" :
                      fc_in_band(c, (double)wait) ? "1" :
                                                    "0");
    }
}

void fq_sim_report_compare(const struct fq_sim_result *const *rs, size_t n,
                           struct fq_buf *out)
{
    struct fq_sim_figures *f = fq_xcalloc(n ? n : 1, sizeof(*f));
    for (size_t i = 0; i < n; i++)
        fq_sim_figures(rs[i], &f[i]);
    if (n && ((rs[0]->arrival_scale > 0 && rs[0]->arrival_scale != 1.0) ||
              rs[0]->plan_a_quota))
        fq_buf_printf(out, "arrivals x%.2f, Plan A quota %s%lld\n",
                      rs[0]->arrival_scale > 0 ? rs[0]->arrival_scale : 1.0,
                      rs[0]->plan_a_quota ? "" : "as configured ",
                      (long long)rs[0]->plan_a_quota);
    fq_buf_printf(out, "%-28s", "");
    for (size_t i = 0; i < n; i++)
        fq_buf_printf(out, " %14s", rs[i]->policy);
    fq_buf_putc(out, '\n');
#define ROW(label, fmt, expr)            \
 do {                                    \
  fq_buf_printf(out, "%-28s", label);    \
  for (size_t i = 0; i < n; i++)         \
   fq_buf_printf(out, " %14" fmt, expr); \
  fq_buf_putc(out, '\n');                \
 } while (0)
    ROW("jobs finished", "zu", f[i].finished);
    ROW("refused", "zu", f[i].refused);
    ROW("expired on Plan B", "zu", f[i].expired);
    ROW("unfinished", "zu", f[i].unfinished);
    ROW("evictions", "zu", f[i].evictions);
    for (int c = 0; c < FQ_SIM_NCLASSES; c++) {
        char label[64];
        snprintf(label, sizeof(label), "wait mean, %s chips (h)",
                 fq_sim_class_name(c));
        ROW(label, ".2f", f[i].cls[c].mean_s / 3600.0);
    }
    ROW("started at once (%)", ".1f", 100.0 * f[i].cls[0].at_once);
    ROW("waited over 1 h (%)", ".1f", 100.0 * f[i].cls[0].over_1h);
    ROW("wait p50 (h)", ".2f", f[i].cls[0].p50_s / 3600.0);
    ROW("wait p90 (h)", ".2f", f[i].cls[0].p90_s / 3600.0);
    ROW("wait p95 (h)", ".2f", f[i].cls[0].p95_s / 3600.0);
    ROW("wait p99 (h)", ".2f", f[i].cls[0].p99_s / 3600.0);
    ROW("wait max (h)", ".2f", f[i].cls[0].max_s / 3600.0);
    ROW("slowdown mean", ".2f", f[i].cls[0].slowdown_mean);
    ROW("cost (kUSD)", ".2f", f[i].cost_total / 1000.0);
    ROW("chip-hours delivered (k)", ".2f", f[i].chip_hours_delivered / 1000.0);
    ROW("cost per chip-hour (USD)", ".4f", f[i].cost_per_chip_hour);
    if (n && (rs[0]->nfc || rs[0]->fc_skipped)) {
        ROW("forecasts (jobs)", "zu", f[i].fc.n);
        ROW("forecasts in tolerance (%)", ".1f",
            pct_of(f[i].fc.band, f[i].fc.n));
        ROW("waited > 5 min (jobs)", "zu", f[i].fc.waited);
        ROW("  of them in tolerance (%)", ".1f",
            pct_of(f[i].fc.waited_band, f[i].fc.waited));
    }
#undef ROW
    /* Utilisation and cost per pool, for every pool any run used (by name,
     * in the order the runs list them). */
    for (size_t r0 = 0; r0 < n; r0++) {
        for (size_t p = 0; p < rs[r0]->npools && p < 64; p++) {
            const char *name = rs[r0]->pools[p].name;
            bool seen = false;
            for (size_t r1 = 0; r1 < r0 && !seen; r1++)
                for (size_t q = 0; q < rs[r1]->npools && q < 64; q++)
                    if (!strcmp(rs[r1]->pools[q].name, name))
                        seen = true;
            if (seen)
                continue;
            char label[2][96];
            snprintf(label[0], sizeof(label[0]), "util %.20s (%%)", name);
            snprintf(label[1], sizeof(label[1]), "cost %.20s (kUSD)", name);
            for (int k = 0; k < 2; k++) {
                fq_buf_printf(out, "%-28s", label[k]);
                for (size_t i = 0; i < n; i++) {
                    double v = 0;
                    for (size_t q = 0; q < rs[i]->npools && q < 64; q++)
                        if (!strcmp(rs[i]->pools[q].name, name))
                            v = k ? f[i].pool_cost[q] / 1000.0 :
                                    100.0 * f[i].pool_util[q];
                    fq_buf_printf(out, k ? " %14.2f" : " %14.1f", v);
                }
                fq_buf_putc(out, '\n');
            }
        }
    }
    free(f);
}
