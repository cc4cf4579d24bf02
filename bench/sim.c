/*
 * bench/sim.c - how fast `flexq sim` replays a trace.
 *
 *   build/bench/sim [--compare P1,P2,... [--threads N]]
 *                   [TRACE.csv [CONFIG.yaml [POLICY [CHIPS_PER_HOST
 *                   [MAX_JOBS]]]]]
 *
 * Defaults: the first 1,000 jobs of the KTH dev trace, 8 chips per host,
 * through examples/sim/kth-100.yaml with the flexq policy (well under a
 * second, so that `make bench` stays quick). The targets (issue 19) are
 *
 *   build/bench/sim --compare kueue,flexq,plan-a-only \
 *       ../shared/traces/philly_2017/dev.csv examples/sim/philly-100.yaml \
 *       flexq 0 0
 *
 * one policy through the whole Philly dev trace (71,466 jobs) in under
 * 1 s of CPU, and a three-policy compare of the whole Philly trace in
 * under 5 s of wall time on two cores (the policies of a compare run on
 * --threads threads, default 2, as `flexq sim --compare --jobs 2` runs
 * them). Prints jobs/s (trace jobs per second of wall time), events/s
 * (stored changes the engine made per second), settles, the process's
 * CPU time, peak memory, the heap in use when a quarter, half, three
 * quarters and all of the jobs had finished (flat when finished jobs cost
 * nothing; it follows the jobs live at the time, and includes the
 * allocator's cache of up to 16 MiB of free small blocks) and the run's
 * outcome counts; with --compare, the compare's wall time and each
 * policy's CPU time and counts; then, as the last line, one JSON object
 * with the same figures. MAX_JOBS 0 means all; CHIPS_PER_HOST 0 means the
 * trace's hosts. It also prints how many segment boundaries of split jobs
 * kept their Workload and how many queued a new one; --requeue-all queues
 * a new one at every boundary (fq_sim_options.requeue_segments), the
 * simulator as it was before boundaries were kept, for a before/after on
 * one build.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/value.h"
#include "report.h"
#include "simloop.h"
#include "trace.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The heap in use (glibc's count of allocated bytes) when the share of
 * finished jobs first reaches each quarter. */
struct heap_marks {
    double mib[4];
    int next;
};

static void on_progress(void *ctx, const struct fq_sim_progress *p)
{
    struct heap_marks *h = ctx;
    while (h->next < 4 && p->njobs &&
           p->done * 4 >= p->njobs * (size_t)(h->next + 1)) {
        h->mib[h->next++] = (double)mallinfo2().uordblks / (1024.0 * 1024.0);
    }
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct fq_buf b = FQ_BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fq_buf_append(&b, chunk, n);
    fclose(f);
    *len = b.len;
    return b.data ? fq_buf_detach(&b) : fq_xstrdup("");
}

/* --- the compare: one engine per policy, on a few threads ------------- */

#define MAX_COMPARE 8

struct cmp_run {
    const struct fq_sim_policy *policy;
    struct fq_sim_result r;
    struct fq_err err;
    int rc;
    double cpu; /* the thread's CPU time for this run */
};

struct cmp_pool {
    pthread_mutex_t mu;
    size_t next, n;
    const struct fq_sim_options *base;
    struct cmp_run *runs;
};

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *cmp_worker(void *arg)
{
    struct cmp_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n)
            return NULL;
        struct cmp_run *run = &p->runs[i];
        struct fq_sim_options o = *p->base;
        o.policy = run->policy;
        o.progress = NULL;
        double c0 = thread_cpu_s();
        run->rc = fq_sim_run(&o, &run->r, &run->err);
        run->cpu = thread_cpu_s() - c0;
    }
}

/* The policies of `list` ("a,b,c") into runs[]; false (printed) when
 * one is unknown or there are too many. */
static bool parse_compare(const char *list, struct cmp_run *runs, size_t *nruns)
{
    char *copy = fq_xstrdup(list), *save = NULL;
    size_t n = 0;
    bool ok = true;
    for (char *t = strtok_r(copy, ",", &save); t && ok;
         t = strtok_r(NULL, ",", &save)) {
        if (n == MAX_COMPARE) {
            fprintf(stderr, "bench sim: at most %d policies\n", MAX_COMPARE);
            ok = false;
            break;
        }
        memset(&runs[n], 0, sizeof(runs[n]));
        runs[n].policy = fq_sim_policy_find(t);
        if (!runs[n].policy) {
            fprintf(stderr, "bench sim: unknown policy %s\n", t);
            ok = false;
        }
        n++;
    }
    free(copy);
    *nruns = n;
    if (ok && n == 0)
        fprintf(stderr, "bench sim: --compare needs policy names\n");
    return ok && n > 0;
}

/* Runs runs[0..n) on `threads` threads; returns the wall time, or a
 * negative number on an error (printed). */
static double run_compare(const struct fq_sim_options *base, long threads,
                          struct cmp_run *runs, size_t n)
{
    struct cmp_pool p = {.n = n, .base = base, .runs = runs};
    pthread_mutex_init(&p.mu, NULL);
    pthread_t th[MAX_COMPARE];
    size_t started = 0;
    if (threads < 1)
        threads = 1;
    double t0 = now_s();
    for (long t = 0; t < threads && (size_t)t < n; t++)
        if (pthread_create(&th[started], NULL, cmp_worker, &p) == 0)
            started++;
    if (started == 0)
        cmp_worker(&p);
    for (size_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    double wall = now_s() - t0;
    pthread_mutex_destroy(&p.mu);
    for (size_t i = 0; i < n; i++) {
        if (runs[i].rc) {
            fprintf(stderr, "bench sim: %s: %s\n", runs[i].policy->name,
                    runs[i].err.msg);
            return -1;
        }
    }
    return wall;
}

int main(int argc, char **argv)
{
    const char *compare = NULL;
    long threads = 2;
    bool requeue_all = false;
    while (argc > 1 && !strncmp(argv[1], "--", 2)) {
        if (!strcmp(argv[1], "--requeue-all")) {
            requeue_all = true; /* a flag without a value */
            argv++;
            argc--;
            continue;
        }
        if (!strcmp(argv[1], "--compare") && argc > 2) {
            compare = argv[2];
        } else if (!strcmp(argv[1], "--threads") && argc > 2) {
            threads = atol(argv[2]);
        } else {
            fprintf(stderr, "usage: bench/sim [--requeue-all] [--compare "
                            "P1,P2,... [--threads N]] [TRACE [CONFIG "
                            "[POLICY [CHIPS_PER_HOST [MAX_JOBS]]]]]\n");
            return 2;
        }
        argv += 2;
        argc -= 2;
    }
    struct cmp_run runs[MAX_COMPARE];
    size_t nruns = 0;
    if (compare && !parse_compare(compare, runs, &nruns))
        return 2;
    const char *trace = argc > 1 ? argv[1] :
                                   FLEXQ_SOURCE_DIR
                            "/../shared/traces/kth_sp2_1996/dev.csv";
    const char *config =
        argc > 2 ? argv[2] : FLEXQ_SOURCE_DIR "/examples/sim/kth-100.yaml";
    long long chips_per_host = argc > 4 ? atoll(argv[4]) : (argc > 1 ? 0 : 8);
    long long max_jobs = argc > 5 ? atoll(argv[5]) : (argc > 1 ? 0 : 1000);
    const char *policy = argc > 3 ? argv[3] : "flexq";
    struct fq_err err = {0};

    struct fq_trace tr;
    fq_trace_init(&tr);
    double t0 = now_s();
    if (fq_trace_load(&tr, trace, true, &err)) {
        fprintf(stderr, "bench sim: %s\n", err.msg);
        return 1;
    }
    double t_load = now_s() - t0;
    size_t all_jobs = tr.n;
    if (max_jobs > 0 && (size_t)max_jobs < tr.n)
        tr.n = (size_t)max_jobs; /* rows are in submit order */
    size_t len = 0;
    char *text = slurp(config, &len);
    if (!text) {
        fprintf(stderr, "bench sim: cannot read %s\n", config);
        return 1;
    }
    struct fq_docs docs = {0};
    struct fq_limits lim = fq_limits_default();
    if (fq_yaml_parse(text, len, config, &lim, &docs, &err)) {
        fprintf(stderr, "bench sim: %s\n", err.msg);
        return 1;
    }
    free(text);

    struct fq_sim_options o;
    fq_sim_options_init(&o);
    o.config = &docs;
    o.config_name = config;
    o.trace = &tr;
    o.policy = fq_sim_policy_find(policy);
    o.map.chips_per_host = chips_per_host > 0 ? chips_per_host : 0;
    o.requeue_segments = requeue_all;
    if (!o.policy) {
        fprintf(stderr, "bench sim: unknown policy %s\n", policy);
        return 1;
    }
    struct heap_marks heap = {{0}, 0};
    o.progress = on_progress;
    o.progress_ctx = &heap;
    struct fq_sim_result r;
    t0 = now_s();
    double c0 = cpu_s();
    int rc = fq_sim_run(&o, &r, &err);
    double wall = now_s() - t0, cpu = cpu_s() - c0;
    if (rc) {
        fprintf(stderr, "bench sim: %s\n", err.msg);
        return 1;
    }
    struct fq_sim_figures f;
    fq_sim_figures(&r, &f);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss_mib = (double)ru.ru_maxrss / 1024.0;
    double jobs_s = wall > 0 ? (double)r.njobs / wall : 0;
    double events_s = wall > 0 ? (double)r.events / wall : 0;

    printf("trace        %s (first %zu of %zu jobs, read in %.2f s)\n", trace,
           r.njobs, all_jobs, t_load);
    printf("config       %s, policy %s\n", config, r.policy);
    printf("simulated    %.1f days in %.2f s of wall time\n",
           (double)r.end_ms / 86400000.0, wall);
    printf("jobs/s       %.0f\n", jobs_s);
    printf("events/s     %.0f (%llu stored changes, %llu settles)\n", events_s,
           (unsigned long long)r.events, (unsigned long long)r.steps);
    printf("segments     %llu boundaries kept in their workload, %llu "
           "queued again as a new one\n",
           (unsigned long long)r.seg_kept, (unsigned long long)r.seg_requeued);
    printf("cpu time     %.2f s\n", cpu);
    printf("peak memory  %.1f MiB\n", rss_mib);
    printf("heap in use  %.1f / %.1f / %.1f / %.1f MiB with 25 / 50 / 75 / "
           "100%% of the jobs finished\n",
           heap.mib[0], heap.mib[1], heap.mib[2], heap.mib[3]);
    printf("outcome      %zu finished, %zu refused, %zu expired, %zu "
           "unfinished\n",
           f.finished, f.refused, f.expired, f.unfinished);
    /* The compare after the single run, so that the heap marks above
     * are the single run's alone. */
    double cmp_wall = 0, cmp_cpu = 0;
    if (compare) {
        cmp_wall = run_compare(&o, threads, runs, nruns);
        if (cmp_wall < 0)
            return 1;
        printf("compare      %zu policies on %ld threads in %.2f s of wall "
               "time\n",
               nruns, threads, cmp_wall);
        for (size_t i = 0; i < nruns; i++) {
            struct fq_sim_figures cf;
            fq_sim_figures(&runs[i].r, &cf);
            cmp_cpu += runs[i].cpu;
            printf("  %-12s %.2f s CPU, %llu stored changes, %llu settles, "
                   "%zu finished, %zu unfinished, %llu / %llu boundaries "
                   "kept / queued again\n",
                   runs[i].policy->name, runs[i].cpu,
                   (unsigned long long)runs[i].r.events,
                   (unsigned long long)runs[i].r.steps, cf.finished,
                   cf.unfinished, (unsigned long long)runs[i].r.seg_kept,
                   (unsigned long long)runs[i].r.seg_requeued);
        }
    }
    struct fq_buf cj = FQ_BUF_INIT;
    if (compare) {
        fq_buf_printf(&cj,
                      ", \"compare_threads\": %ld, \"compare_wall_s\": "
                      "%.3f, \"compare_cpu_s\": %.3f, \"compare\": [",
                      threads, cmp_wall, cmp_cpu);
        for (size_t i = 0; i < nruns; i++)
            fq_buf_printf(&cj,
                          "%s{\"policy\": \"%s\", \"cpu_s\": %.3f, "
                          "\"events\": %llu, \"settles\": %llu, "
                          "\"segments_kept\": %llu, "
                          "\"segments_requeued\": %llu}",
                          i ? ", " : "", runs[i].policy->name, runs[i].cpu,
                          (unsigned long long)runs[i].r.events,
                          (unsigned long long)runs[i].r.steps,
                          (unsigned long long)runs[i].r.seg_kept,
                          (unsigned long long)runs[i].r.seg_requeued);
        fq_buf_printf(&cj, "]");
    }
    printf("{\"bench\": \"sim\", \"policy\": \"%s\", \"jobs\": %zu, "
           "\"wall_s\": %.3f, \"cpu_s\": %.3f, \"jobs_per_s\": %.0f, "
           "\"events\": %llu, \"events_per_s\": %.0f, \"settles\": %llu, "
           "\"segments_kept\": %llu, \"segments_requeued\": %llu, "
           "\"peak_rss_mib\": %.1f, \"heap_mib_at_quarters\": [%.1f, %.1f, "
           "%.1f, %.1f], \"finished\": %zu, \"unfinished\": %zu%s}\n",
           r.policy, r.njobs, wall, cpu, jobs_s, (unsigned long long)r.events,
           events_s, (unsigned long long)r.steps,
           (unsigned long long)r.seg_kept, (unsigned long long)r.seg_requeued,
           rss_mib, heap.mib[0], heap.mib[1], heap.mib[2], heap.mib[3],
           f.finished, f.unfinished, cj.data ? cj.data : "");
    fq_buf_release(&cj);
    for (size_t i = 0; i < nruns; i++)
        fq_sim_result_release(&runs[i].r);
    fq_sim_result_release(&r);
    fq_trace_release(&tr);
    fq_docs_release(&docs);
    return 0;
}
