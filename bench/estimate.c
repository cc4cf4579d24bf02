/*
 * bench/estimate.c - how good are flexq's wait-time forecasts on the dev
 * traces? (docs/estimates.md presents the figures.)
 *
 *   build/bench/estimate [MAX_JOBS [SAMPLES [SEEDS [TRACE]]]]
 *
 * Run from the repository root (it reads examples/sim/NAME-50.yaml and
 * ../shared/traces/NAME/dev.csv). Defaults: the first 200 jobs of each of
 * the Philly, Alibaba and KTH dev traces, 12 sampled jobs each, 3 cloud
 * seeds per forecast; about 2 minutes on the shared machine (a forecast
 * costs more with every workload ahead: the warm-up re-admits them).
 * FLEXQ_BENCH_DEBUG=1 prints each forecast on stderr.
 *
 * Method, per trace:
 *   1. Truth: replay the window through the config (Plan A at 50% of the
 *      offered load + Plan B flex-start, Kueue's policy) with cloud seed
 *      1000 (fq_estimate_replay): every job's real start.
 *   2. At the submit time s of each sampled job, build the state the
 *      daemon would see then from the truth run: jobs started before s and
 *      not yet ended are running, jobs submitted before s and not started
 *      are pending, later jobs are unknown. Ask the estimator (unpinned
 *      row, cloud seeds 1..SEEDS, which the truth's seed is not among)
 *      when the sampled job starts.
 *   3. Covered: the real wait lies within [p10, p90]. Also reported: the
 *      share within a tolerance band [0.8 p10 - 120 s, 1.25 p90 + 120 s]
 *      (120 s: one node boot, as the replay's state carries no Nodes),
 *      the same among jobs that really waited at least a minute, and the
 *      median absolute error of p50.
 *   Run times given to the estimator, three ways: "mean" (the mean
 *   duration of the jobs finished before s: what a cluster knows), "oracle"
 *   (the true durations: the engine's error alone) and, for KTH, "request"
 *   (the users' wall-time requests, as activeDeadlineSeconds would give).
 *
 * Prints a table, then as the last line one JSON object with the figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/estimate.h"
#include "flexq/value.h"
#include "trace.h"

#define EPOCH   1767225600000LL /* 2026-01-01T00:00:00Z */
#define MIN_S   60000LL
#define DEF_RUN 3600000LL

struct tcase {
    const char *name, *config, *trace;
    int64_t chips_per_host;
};

static const struct tcase cases[] = {
    {"philly", "examples/sim/philly-50.yaml",
     "../shared/traces/philly_2017/dev.csv", 0},
    {"alibaba", "examples/sim/alibaba-50.yaml",
     "../shared/traces/alibaba_gpu_v2023/dev.csv", 0},
    {"kth", "examples/sim/kth-50.yaml", "../shared/traces/kth_sp2_1996/dev.csv",
     8},
};

enum {
    V_MEAN,
    V_ORACLE,
    V_REQUEST,
    V_N
};

static const char *const vnames[V_N] = {"mean", "oracle", "request"};

struct figures {
    int n, covered, tol, waited, waited_tol;
    double abs_err_s[1024];
    int nerr;
    double wall_s;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *first_res(const struct fq_docs *d)
{
    for (size_t i = 0; i < d->n; i++) {
        if (strcmp(fq_value_path_str(d->items[i], "kind", ""), "ClusterQueue"))
            continue;
        const struct fq_value *rgs =
            fq_value_path(d->items[i], "spec.resourceGroups");
        for (size_t g = 0; g < fq_value_len(rgs); g++) {
            const struct fq_value *cov =
                fq_value_path(fq_seq_at(rgs, g), "coveredResources");
            for (size_t k = 0; k < fq_value_len(cov); k++) {
                const char *r = fq_value_as_str(fq_seq_at(cov, k));
                if (r && strcmp(r, "cpu") && strcmp(r, "memory") &&
                    strcmp(r, "pods"))
                    return r;
            }
        }
    }
    return "nvidia.com/gpu";
}

static struct fq_value *workload(const struct fq_trace_map *m,
                                 const struct fq_trace_job *j, size_t idx,
                                 const char *res, const char *queue)
{
    int64_t hosts, per;
    fq_trace_shape(m, j, &hosts, &per);
    char buf[1536];
    snprintf(
        buf, sizeof(buf),
        "{apiVersion: kueue.x-k8s.io/v1beta1, kind: Workload,"
        " metadata: {name: job-%zu, namespace: default,"
        "  labels: {kueue.x-k8s.io/queue-name: %s}},"
        " spec: {queueName: %s, priority: %lld, podSets: [{name: main,"
        "  count: %lld, template: {spec: {tolerations: [{operator: "
        "Exists}], containers: [{name: main, image: x, resources: {"
        "requests: {\"%s\": \"%lld\"}, limits: {\"%s\": \"%lld\"}}}]}}}]}}",
        idx, queue, queue, (long long)fq_trace_priority(m, j), (long long)hosts,
        res, (long long)per, res, (long long)per);
    struct fq_limits lim = fq_limits_default();
    struct fq_docs d = {0};
    if (fq_yaml_parse(buf, strlen(buf), "wl", &lim, &d, NULL) || d.n != 1) {
        fprintf(stderr, "bench: bad workload\n");
        exit(1);
    }
    struct fq_value *v = d.items[0];
    d.n = 0;
    fq_docs_release(&d);
    return v;
}

static double fabs_d(double x)
{
    return x < 0 ? -x : x;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run_case(const struct tcase *tc, size_t max_jobs, int samples,
                    int seeds, struct figures fig[V_N])
{
    char *text;
    size_t len;
    struct fq_err err = {0};
    if (fq_cli_read_file(tc->config, 1 << 22, &text, &len, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    struct fq_limits lim = fq_limits_default();
    struct fq_docs docs = {0};
    int rc = fq_yaml_parse(text, len, tc->config, &lim, &docs, &err);
    free(text);
    if (rc) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    struct fq_trace tr;
    fq_trace_init(&tr);
    if (fq_trace_load(&tr, tc->trace, true, &err)) {
        fprintf(stderr, "bench: %s (run from the repository root)\n", err.msg);
        fq_docs_release(&docs);
        return -1;
    }
    size_t n = tr.n < max_jobs ? tr.n : max_jobs;
    struct fq_trace_map map;
    fq_trace_map_init(&map);
    map.chips_per_host = tc->chips_per_host;
    const char *res = first_res(&docs);
    const char *queue = "user-queue";
    for (size_t i = 0; i < docs.n; i++)
        if (!strcmp(fq_value_path_str(docs.items[i], "kind", ""), "LocalQueue"))
            queue = fq_value_path_str(docs.items[i], "metadata.name", queue);

    struct fq_value **wl = fq_xcalloc(n, sizeof(*wl));
    struct fq_estimate_job *jobs = fq_xcalloc(n, sizeof(*jobs));
    for (size_t i = 0; i < n; i++) {
        wl[i] = workload(&map, &tr.jobs[i], i, res, queue);
        jobs[i] = (struct fq_estimate_job){wl[i], EPOCH + tr.jobs[i].submit_ms,
                                           tr.jobs[i].duration_ms, false};
    }
    struct fq_estimate_world w = {
        .objects = (const struct fq_value *const *)docs.items,
        .nobjects = docs.n,
        .jobs = jobs,
        .njobs = n,
        .now_ms = EPOCH,
        .policy = fq_policy_kueue(),
        .horizon_ms = 30 * 86400000LL,
    };
    int64_t *truth = fq_xcalloc(n, sizeof(*truth));
    double t0 = now_s();
    rc = fq_estimate_replay(&w, 1000, truth, NULL, &err);
    if (rc) {
        fprintf(stderr, "bench: %s: %s\n", tc->name, err.msg);
        goto out;
    }
    fprintf(stderr, "%s: truth replay of %zu jobs in %.1f s\n", tc->name, n,
            now_s() - t0);

    struct fq_estimate_job *state = fq_xcalloc(n, sizeof(*state));
    for (int v = 0; v < V_N; v++) {
        if (v == V_REQUEST && strcmp(tc->name, "kth"))
            continue;
        double tv = now_s();
        for (int k = 0; k < samples; k++) {
            size_t i = n / 10 + (size_t)k * (n - n / 10) / (size_t)samples;
            int64_t s = tr.jobs[i].submit_ms;
            if (truth[i] < 0)
                continue;
            /* What a cluster knows at s: finished jobs' mean duration. */
            double sum = 0;
            int cnt = 0;
            for (size_t j = 0; j < i; j++)
                if (truth[j] >= 0 && truth[j] + tr.jobs[j].duration_ms <= s) {
                    sum += (double)tr.jobs[j].duration_ms;
                    cnt++;
                }
            int64_t mean = cnt ? (int64_t)(sum / cnt) : DEF_RUN;
            size_t ns = 0;
            for (size_t j = 0; j < i; j++) {
                int64_t exp = v == V_ORACLE ? tr.jobs[j].duration_ms :
                              v == V_REQUEST && tr.jobs[j].requested_ms > 0 ?
                                              tr.jobs[j].requested_ms :
                                              mean;
                bool started = truth[j] >= 0 && truth[j] <= s;
                if (started && truth[j] + tr.jobs[j].duration_ms <= s)
                    continue; /* finished */
                int64_t run = exp;
                if (started) {
                    run = exp - (s - truth[j]);
                    if (run < MIN_S)
                        run = v == V_ORACLE ? (run > 0 ? run : 1) : MIN_S;
                }
                state[ns++] = (struct fq_estimate_job){
                    wl[j], EPOCH + tr.jobs[j].submit_ms, run, started};
            }
            struct fq_estimate_world sw = w;
            sw.jobs = state;
            sw.njobs = ns;
            sw.now_ms = EPOCH + s;
            struct fq_estimate_options o;
            fq_estimate_options_init(&o);
            o.nseeds = seeds;
            o.seed = 1;
            o.pin = false;
            struct fq_estimate_result r;
            if (fq_estimate_run(&sw, wl[i], &o, &r, &err)) {
                fprintf(stderr, "bench: %s: %s\n", tc->name, err.msg);
                continue;
            }
            double real = (double)(truth[i] - s) / 1000;
            if (getenv("FLEXQ_BENCH_DEBUG"))
                fprintf(stderr,
                        "  %s %s job %zu: %zu ahead, real %.0f s, p10 %lld "
                        "p50 %lld p90 %lld ms (%.2f s)\n",
                        tc->name, vnames[v], i, ns, real,
                        (long long)r.rows[0].p10_ms,
                        (long long)r.rows[0].p50_ms,
                        (long long)r.rows[0].p90_ms, now_s() - tv);
            const struct fq_estimate_range *x = &r.rows[0];
            double p10 = x->p10_ms < 0 ? 1e18 : (double)x->p10_ms / 1000;
            double p50 = x->p50_ms < 0 ? 1e18 : (double)x->p50_ms / 1000;
            double p90 = x->p90_ms < 0 ? 1e18 : (double)x->p90_ms / 1000;
            struct figures *f = &fig[v];
            f->n++;
            bool cov = real >= p10 - 1 && real <= p90 + 1;
            /* The band's 120 s is one node boot: the replay does not hand
             * the estimator its nodes, so an idle node the truth had (or
             * not) shows as a 120 s error either way. */
            bool tol = real >= 0.8 * p10 - 120 && real <= 1.25 * p90 + 120;
            f->covered += cov;
            f->tol += tol;
            if (real >= 60) {
                f->waited++;
                f->waited_tol += tol;
            }
            if (f->nerr < 1024)
                f->abs_err_s[f->nerr++] = p50 > 1e17 ? 1e9 : fabs_d(p50 - real);
            fq_estimate_result_release(&r);
        }
        fig[v].wall_s = now_s() - tv;
    }
    free(state);
out:
    for (size_t i = 0; i < n; i++)
        fq_value_free(wl[i]);
    free(wl);
    free(jobs);
    free(truth);
    fq_trace_release(&tr);
    fq_docs_release(&docs);
    return rc;
}

static double pc(int a, int b)
{
    return b ? 100.0 * a / b : 0;
}

int main(int argc, char **argv)
{
    size_t max_jobs = argc > 1 ? (size_t)atol(argv[1]) : 200;
    int samples = argc > 2 ? atoi(argv[2]) : 12;
    int seeds = argc > 3 ? atoi(argv[3]) : 3;
    if (max_jobs < 20 || samples < 1 || seeds < 1) {
        fprintf(stderr, "usage: estimate [MAX_JOBS>=20 [SAMPLES [SEEDS]]]\n");
        return 2;
    }
    struct fq_buf js = FQ_BUF_INIT;
    fq_buf_printf(&js,
                  "{\"bench\":\"estimate\",\"max_jobs\":%zu,"
                  "\"samples\":%d,\"seeds\":%d,\"traces\":{",
                  max_jobs, samples, seeds);
    /* [TRACE]: only that trace (philly, alibaba, kth). */
    printf("%-8s %-8s %5s %9s %9s %9s %9s %11s %8s\n", "trace", "runtimes", "n",
           "in-range", "in-band", "waited", "band|wait", "p50-err-med",
           "wall-s");
    int rc = 0, done = 0;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct figures *fig = fq_xcalloc(V_N, sizeof(*fig));
        if (argc > 4 && strcmp(argv[4], cases[c].name)) {
            free(fig);
            continue;
        }
        if (run_case(&cases[c], max_jobs, samples, seeds, fig)) {
            rc = 1;
            free(fig);
            continue;
        }
        fq_buf_printf(&js, "%s\"%s\":{", done++ ? "," : "", cases[c].name);
        bool first = true;
        for (int v = 0; v < V_N; v++) {
            struct figures *f = &fig[v];
            if (!f->n)
                continue;
            qsort(f->abs_err_s, (size_t)f->nerr, sizeof(double), cmp_d);
            double med = f->nerr ? f->abs_err_s[f->nerr / 2] : 0;
            /* [TRACE]: only that trace (philly, alibaba, kth). */
            printf("%-8s %-8s %5d %8.0f%% %8.0f%% %9d %8.0f%% %10.0fs %8.1f\n",
                   cases[c].name, vnames[v], f->n, pc(f->covered, f->n),
                   pc(f->tol, f->n), f->waited, pc(f->waited_tol, f->waited),
                   med, f->wall_s);
            fq_buf_printf(&js,
                          "%s\"%s\":{\"n\":%d,\"in_range_pct\":%.1f,"
                          "\"in_band_pct\":%.1f,\"waited\":%d,"
                          "\"waited_in_band_pct\":%.1f,"
                          "\"p50_abs_err_median_s\":%.0f,\"wall_s\":%.2f}",
                          first ? "" : ",", vnames[v], f->n,
                          pc(f->covered, f->n), pc(f->tol, f->n), f->waited,
                          pc(f->waited_tol, f->waited), med, f->wall_s);
            first = false;
        }
        fq_buf_puts(&js, "}");
        free(fig);
    }
    fq_buf_puts(&js, "}}");
    printf("%s\n", fq_buf_str(&js));
    fq_buf_release(&js);
    return rc;
}
