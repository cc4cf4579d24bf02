/*
 * cmd_sim.c - `flexq sim`: replay a job trace through a queue config in
 * virtual time, with the same core engine flexqd runs.
 *
 *   flexq sim --config FILE.yaml --trace FILE.csv [--policy NAME]
 *             [--compare a,b,c] [--out DIR] [--seed N] [--skip-bad]
 *             [--map KEY=VALUE,...] [--long-jobs keep-a|split|split-a|
 *             refuse]
 *             [--resource NAME] [--scale-arrivals F]
 *             [--size-plan-a auto|auto:P|P%|N] [--forecasts N|all]
 *             [--forecast-seeds N] [--forecast-oracle] [--switch K=V,...]
 *             [--route-b-over D] [--route-b-area H]
 *             [--route-guess last|share] [--pods-ready D] [--jobs N]
 *             [-o table|json] [--quiet]
 *
 * How it works: reads the config (any flexq YAML) and the trace once, then
 * runs fq_sim_run once per policy (--compare; on up to --jobs threads, one
 * engine each, results kept in policy order so the output is the same)
 * and prints the readable table (or JSON) on stdout. With --out it also
 * writes summary.json, summary.txt, jobs-POLICY.csv, the SVG plots
 * (wait-cdf.svg, wait-cdf-tail.svg, queue.svg, pools-POLICY.svg) and
 * report.html into DIR. A progress line goes to stderr
 * once a run has taken more than a second of wall time; wall time is read
 * here, never in the simulation, so results stay reproducible.
 *
 * It does not talk to flexqd: the simulation is self-contained.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/timefmt.h"
#include "flexq/value.h"
#include "html.h"
#include "report.h"
#include "simloop.h"
#include "sizing.h"
#include "svg.h"

#define MAX_COMPARE 16
#define CONFIG_MAX  (16u << 20)

struct progress {
    struct timespec start, last;
    const char *policy;
    bool quiet, shown, tty;
};

static double since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) +
           (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void on_progress(void *ctx, const struct fq_sim_progress *p)
{
    struct progress *pr = ctx;
    if (pr->quiet)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double wall = since(&pr->start, &now);
    bool final = p->done == p->njobs;
    if (wall < 1.0 || (!final && since(&pr->last, &now) < (pr->tty ? 0.5 : 5)))
        return;
    pr->last = now;
    pr->shown = true;
    fprintf(stderr,
            "%ssim %s: day %.1f, %zu/%zu jobs done, %zu waiting, %zu "
            "running, %llu settles (%.1fs)%s",
            pr->tty ? "\r" : "", pr->policy, (double)p->now_ms / 86400000.0,
            p->done, p->njobs, p->pending, p->running,
            (unsigned long long)p->steps, wall, pr->tty ? "\033[K" : "\n");
    fflush(stderr);
}

static int write_file(const char *dir, const char *name, const struct fq_buf *b)
{
    char *path = fq_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int rc = 0;
    if (!f || fwrite(fq_buf_str(b), 1, b->len, f) != b->len) {
        fprintf(stderr, "flexq sim: cannot write %s: %s\n", path,
                strerror(errno));
        rc = -1;
    }
    if (f && fclose(f) != 0 && !rc) {
        fprintf(stderr, "flexq sim: cannot write %s: %s\n", path,
                strerror(errno));
        rc = -1;
    }
    free(path);
    return rc;
}

/* mkdir -p: the output directory and any parent it lacks. */
static int make_dirs(const char *dir)
{
    char *p = fq_xstrdup(dir);
    int rc = 0;
    for (char *s = p + 1; rc == 0; s++) {
        bool end = *s == '\0';
        if (*s != '/' && !end)
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            rc = -1;
        if (end)
            break;
        *s = '/';
    }
    free(p);
    return rc;
}

static int write_outputs(const char *dir, const char *title,
                         struct fq_sim_result *const *rs, size_t n)
{
    if (make_dirs(dir) != 0) {
        fprintf(stderr, "flexq sim: cannot create %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    const struct fq_sim_result *const *crs =
        (const struct fq_sim_result *const *)rs;
    struct fq_buf b = FQ_BUF_INIT;
    int rc = 0;
    if (n == 1)
        fq_sim_report_json(rs[0], &b);
    else
        fq_sim_report_compare_json(crs, n, &b);
    rc |= write_file(dir, "summary.json", &b);
    fq_buf_reset(&b);
    for (size_t i = 0; i < n; i++) {
        fq_sim_report_table(rs[i], &b);
        fq_buf_putc(&b, '\n');
    }
    if (n > 1)
        fq_sim_report_compare(crs, n, &b);
    rc |= write_file(dir, "summary.txt", &b);
    for (size_t i = 0; i < n; i++) {
        char name[96];
        fq_buf_reset(&b);
        fq_sim_report_jobs_csv(rs[i], &b);
        snprintf(name, sizeof(name), "jobs-%s.csv", rs[i]->policy);
        rc |= write_file(dir, name, &b);
        if (rs[i]->nfc) {
            fq_buf_reset(&b);
            fq_sim_report_forecasts_csv(rs[i], &b);
            snprintf(name, sizeof(name), "forecasts-%s.csv", rs[i]->policy);
            rc |= write_file(dir, name, &b);
        }
        fq_buf_reset(&b);
        fq_sim_plot_pools(rs[i], &b);
        snprintf(name, sizeof(name), "pools-%s.svg", rs[i]->policy);
        rc |= write_file(dir, name, &b);
    }
    fq_buf_reset(&b);
    fq_sim_plot_wait_cdf(crs, n, &b);
    rc |= write_file(dir, "wait-cdf.svg", &b);
    fq_buf_reset(&b);
    fq_sim_plot_queue(crs, n, &b);
    rc |= write_file(dir, "queue.svg", &b);
    fq_buf_reset(&b);
    fq_sim_plot_wait_tail(crs, n, &b);
    rc |= write_file(dir, "wait-cdf-tail.svg", &b);
    fq_buf_reset(&b);
    fq_sim_report_html(crs, n, title, &b);
    rc |= write_file(dir, "report.html", &b);
    fq_buf_release(&b);
    return rc ? -1 : 0;
}

/*
 * The policies of a compare on `jobs` threads. Each run has its own engine
 * and copies of the config; the trace and the parsed config are only
 * read. Results land in rs[i] by policy, so the output does not depend on
 * which thread ran what, or when. Progress lines are whole lines here
 * (no carriage-return redraw: several runs print at once).
 */
struct pool {
    pthread_mutex_t mu;
    size_t next, npol;
    const struct fq_sim_options *base;
    const struct fq_sim_policy *const *pols;
    struct fq_sim_result **rs;
    struct fq_err *errs;
    int *rcs;
    bool quiet;
};

static void *worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->npol)
            return NULL;
        struct fq_sim_options o = *p->base;
        struct progress pr = {
            .policy = p->pols[i]->name, .quiet = p->quiet, .tty = false};
        clock_gettime(CLOCK_MONOTONIC, &pr.start);
        pr.last = pr.start;
        o.policy = p->pols[i];
        o.progress = on_progress;
        o.progress_ctx = &pr;
        p->rcs[i] = fq_sim_run(&o, p->rs[i], &p->errs[i]);
    }
}

static int run_parallel(const struct fq_sim_options *o,
                        const struct fq_sim_policy *const *pols, size_t npol,
                        size_t jobs, bool quiet, struct fq_sim_result **rs)
{
    struct pool p = {
        .npol = npol, .base = o, .pols = pols, .rs = rs, .quiet = quiet};
    pthread_mutex_init(&p.mu, NULL);
    p.errs = fq_xcalloc(npol, sizeof(*p.errs));
    p.rcs = fq_xcalloc(npol, sizeof(*p.rcs));
    for (size_t i = 0; i < npol; i++)
        rs[i] = fq_xcalloc(1, sizeof(*rs[i]));
    pthread_t th[MAX_COMPARE];
    size_t started = 0;
    for (size_t t = 0; t < jobs; t++)
        if (pthread_create(&th[started], NULL, worker, &p) == 0)
            started++;
    if (started == 0)
        worker(&p); /* no thread to be had: run them here */
    for (size_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&p.mu);
    int status = FQ_CLI_OK;
    for (size_t i = 0; i < npol && status == FQ_CLI_OK; i++) {
        if (p.rcs[i]) {
            fprintf(stderr, "flexq sim: %s\n", p.errs[i].msg);
            status = FQ_CLI_FAIL;
        }
    }
    free(p.errs);
    free(p.rcs);
    return status;
}

static const char *need_arg(int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *eq = strchr(a, '=');
    if (a[0] == '-' && a[1] == '-' && eq)
        return eq + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static bool flag_is(const char *a, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(a, name, n) && (a[n] == '\0' || a[n] == '=');
}

/* A duration flag's value ("6h", "90m", "1h30m", "600"; the reader of
 * fq_duration_parse) as seconds in *out; -1 if it is none. */
static int parse_secs(const char *v, double *out)
{
    int64_t ms;
    if (fq_duration_parse(v, &ms) < 0)
        return -1;
    *out = (double)ms / 1000.0;
    return 0;
}

static int run(int argc, char **argv)
{
    const char *config = NULL, *trace = NULL, *policy = NULL, *compare = NULL,
               *out = NULL, *output = "table";
    struct fq_sim_options o;
    fq_sim_options_init(&o);
    o.forecasts = 200;
    bool skip_bad = false, quiet = false;
    size_t jobs = 0; /* --jobs: threads for a compare; 0: one per CPU */
    double scale = 1.0, size_pct = 0;
    int64_t size_chips = 0;
    struct fq_err err = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
#define ARG(name)                            \
 (flag_is(a, name) &&                        \
  ((v = need_arg(argc, argv, &i)) != NULL || \
   (fq_cli_usage_error("sim", "%s needs a value", name), false)))
        if (!strcmp(a, "--skip-bad")) {
            skip_bad = true;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = true;
        } else if (flag_is(a, "--config") || flag_is(a, "-f")) {
            if (!(v = need_arg(argc, argv, &i)))
                return fq_cli_usage_error("sim", "--config needs a file");
            config = v;
        } else if (flag_is(a, "--trace")) {
            if (!(v = need_arg(argc, argv, &i)))
                return fq_cli_usage_error("sim", "--trace needs a file");
            trace = v;
        } else if (flag_is(a, "--policy")) {
            if (!ARG("--policy"))
                return FQ_CLI_FAIL;
            policy = v;
        } else if (flag_is(a, "--compare")) {
            if (!ARG("--compare"))
                return FQ_CLI_FAIL;
            compare = v;
        } else if (flag_is(a, "--out")) {
            if (!ARG("--out"))
                return FQ_CLI_FAIL;
            out = v;
        } else if (flag_is(a, "--seed")) {
            if (!ARG("--seed"))
                return FQ_CLI_FAIL;
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 10);
            if (*end || errno || !*v)
                return fq_cli_usage_error("sim",
                                          "--seed must be a whole "
                                          "number, got \"%s\"",
                                          v);
            o.seed = s;
        } else if (flag_is(a, "--map")) {
            if (!ARG("--map"))
                return FQ_CLI_FAIL;
            if (fq_trace_map_parse(&o.map, v, &err))
                return fq_cli_usage_error("sim", "%s", err.msg);
        } else if (flag_is(a, "--long-jobs")) {
            if (!ARG("--long-jobs"))
                return FQ_CLI_FAIL;
            if (fq_sim_long_rule_parse(v, &o.long_rule))
                return fq_cli_usage_error("sim",
                                          "--long-jobs must be "
                                          "keep-a, split, split-a or "
                                          "refuse, "
                                          "got \"%s\"",
                                          v);
            o.long_rule_set = true;
        } else if (flag_is(a, "--scale-arrivals")) {
            if (!ARG("--scale-arrivals"))
                return FQ_CLI_FAIL;
            char *end;
            errno = 0;
            scale = strtod(v, &end);
            if (*end || errno || !*v ||
                !(scale >= FQ_SIM_SCALE_MIN && scale <= FQ_SIM_SCALE_MAX))
                return fq_cli_usage_error("sim",
                                          "--scale-arrivals must be a "
                                          "factor from 0.01 to 100, got "
                                          "\"%s\"",
                                          v);
        } else if (flag_is(a, "--size-plan-a")) {
            if (!ARG("--size-plan-a"))
                return FQ_CLI_FAIL;
            if (fq_sim_size_parse(v, &size_pct, &size_chips, &err))
                return fq_cli_usage_error("sim", "%s", err.msg);
        } else if (flag_is(a, "--forecasts")) {
            if (!ARG("--forecasts"))
                return FQ_CLI_FAIL;
            char *end;
            errno = 0;
            unsigned long long nf = strtoull(v, &end, 10);
            if (!strcmp(v, "all"))
                o.forecasts = FQ_SIM_FORECAST_ALL;
            else if (*end || errno || !*v || v[0] == '-' || nf > 100000000ull)
                return fq_cli_usage_error("sim",
                                          "--forecasts must be a number of "
                                          "jobs or all, got \"%s\"",
                                          v);
            else
                o.forecasts = (size_t)nf;
        } else if (flag_is(a, "--forecast-seeds")) {
            if (!ARG("--forecast-seeds"))
                return FQ_CLI_FAIL;
            char *end;
            long ns = strtol(v, &end, 10);
            if (*end || !*v || ns < 1 || ns > 99)
                return fq_cli_usage_error("sim",
                                          "--forecast-seeds must be 1 to 99, "
                                          "got \"%s\"",
                                          v);
            o.forecast_seeds = (int)ns;
        } else if (flag_is(a, "--jobs") || flag_is(a, "-j")) {
            if (!(v = need_arg(argc, argv, &i)))
                return fq_cli_usage_error("sim", "--jobs needs a number");
            char *end;
            long nj = strtol(v, &end, 10);
            if (*end || !*v || nj < 1 || nj > MAX_COMPARE)
                return fq_cli_usage_error("sim",
                                          "--jobs must be 1 to %d, got "
                                          "\"%s\"",
                                          MAX_COMPARE, v);
            jobs = (size_t)nj;
        } else if (flag_is(a, "--route-b-over")) {
            if (!ARG("--route-b-over"))
                return FQ_CLI_FAIL;
            double secs;
            if (parse_secs(v, &secs) < 0 || !(secs > 0) || secs > 365 * 86400.0)
                return fq_cli_usage_error("sim",
                                          "--route-b-over must be a "
                                          "duration such as 4h, 90m or "
                                          "3600, got \"%s\"",
                                          v);
            o.route_b_ms = (int64_t)(secs * 1000);
        } else if (flag_is(a, "--pods-ready")) {
            if (!ARG("--pods-ready"))
                return FQ_CLI_FAIL;
            double secs;
            if (parse_secs(v, &secs) < 0 || secs > 7 * 86400.0)
                return fq_cli_usage_error("sim",
                                          "--pods-ready must be 0 (off) or "
                                          "a duration of at most 7 days "
                                          "such as 10m or 600, got \"%s\"",
                                          v);
            o.pods_ready_ms = (int64_t)(secs * 1000);
            o.pods_ready_set = true;
        } else if (flag_is(a, "--segment")) {
            if (!ARG("--segment"))
                return FQ_CLI_FAIL;
            double secs;
            if (parse_secs(v, &secs) < 0 || !(secs >= 60) ||
                secs > 365 * 86400.0)
                return fq_cli_usage_error("sim",
                                          "--segment must be a duration of "
                                          "at least a minute such as 6h, "
                                          "90m or 3600, got \"%s\"",
                                          v);
            o.segment_ms = (int64_t)(secs * 1000);
            o.segment_set = true;
        } else if (flag_is(a, "--route-b-area")) {
            if (!ARG("--route-b-area"))
                return FQ_CLI_FAIL;
            char *end;
            errno = 0;
            double d = strtod(v, &end);
            if (end == v || *end || errno || !(d >= 0) || d > 10000)
                return fq_cli_usage_error("sim",
                                          "--route-b-area must be a number "
                                          "of hours of Plan A's quota, 0 to "
                                          "10000, got \"%s\"",
                                          v);
            o.route_b_area = d;
            o.route_b_area_set = true;
        } else if (flag_is(a, "--route-guess")) {
            if (!ARG("--route-guess"))
                return FQ_CLI_FAIL;
            if (fq_sim_route_guess_parse(v, &o.route_guess))
                return fq_cli_usage_error("sim",
                                          "--route-guess must be last or "
                                          "share, got \"%s\"",
                                          v);
            o.route_guess_set = true;
        } else if (flag_is(a, "--switch")) {
            if (!ARG("--switch"))
                return FQ_CLI_FAIL;
            struct fq_policy probe = fq_policy_default();
            if (fq_sim_switches_apply(v, &probe, &err))
                return fq_cli_usage_error("sim", "%s", err.msg);
            o.switches = v;
        } else if (!strcmp(a, "--forecast-oracle")) {
            o.forecast_oracle = true;
        } else if (!strcmp(a, "--check-invariants")) {
            o.check_invariants = true;
        } else if (flag_is(a, "--resource")) {
            if (!ARG("--resource"))
                return FQ_CLI_FAIL;
            o.resource = v;
        } else if (flag_is(a, "-o") || flag_is(a, "--output")) {
            if (!(v = need_arg(argc, argv, &i)))
                return fq_cli_usage_error("sim", "-o needs table or json");
            output = v;
            if (strcmp(v, "table") && strcmp(v, "json"))
                return fq_cli_usage_error("sim",
                                          "-o must be table or json, "
                                          "got \"%s\"",
                                          v);
        } else {
            return fq_cli_usage_error("sim", "unknown argument \"%s\"", a);
        }
#undef ARG
    }
    if (!config)
        return fq_cli_usage_error("sim", "--config FILE.yaml is required");
    if (!trace)
        return fq_cli_usage_error("sim", "--trace FILE.csv is required");
    if (policy && compare)
        return fq_cli_usage_error("sim", "give --policy or --compare, not "
                                         "both");

    /* The policies to run. */
    const struct fq_sim_policy *pols[MAX_COMPARE];
    size_t npol = 0;
    if (compare) {
        char *copy = fq_xstrdup(compare), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t;
             t = strtok_r(NULL, ",", &save)) {
            const struct fq_sim_policy *p = fq_sim_policy_find(t);
            if (!p || npol == MAX_COMPARE) {
                fprintf(stderr,
                        "flexq sim: %s \"%s\" (policies: plan-a-only, "
                        "plan-b-only, kueue, flexq)\n",
                        p ? "too many policies at" : "unknown policy", t);
                free(copy);
                return FQ_CLI_FAIL;
            }
            pols[npol++] = p;
        }
        free(copy);
        if (npol == 0)
            return fq_cli_usage_error("sim", "--compare needs policy names");
    } else {
        const char *name = policy ? policy : "flexq";
        pols[0] = fq_sim_policy_find(name);
        if (!pols[0]) {
            fprintf(stderr,
                    "flexq sim: unknown policy \"%s\" (policies: "
                    "plan-a-only, plan-b-only, kueue, flexq)\n",
                    name);
            return FQ_CLI_FAIL;
        }
        npol = 1;
    }

    /* The config and the trace. */
    char *text = NULL;
    size_t len = 0;
    if (fq_cli_read_file(config, CONFIG_MAX, &text, &len, &err)) {
        fprintf(stderr, "flexq sim: %s\n", err.msg);
        return FQ_CLI_FAIL;
    }
    struct fq_docs docs = {0};
    struct fq_limits lim = fq_limits_default();
    int rc = fq_yaml_parse(text, len, config, &lim, &docs, &err);
    free(text);
    if (rc) {
        fprintf(stderr, "flexq sim: %s\n", err.msg);
        return FQ_CLI_FAIL;
    }
    struct fq_trace tr;
    fq_trace_init(&tr);
    if ((rc = fq_trace_load(&tr, trace, skip_bad, &err)) != 0) {
        fprintf(stderr, "flexq sim: %s%s\n", err.msg,
                skip_bad || rc != FQ_EINVAL ? "" :
                                              " (--skip-bad skips bad rows)");
        fq_trace_release(&tr);
        fq_docs_release(&docs);
        return FQ_CLI_FAIL;
    }
    if (tr.skipped && !quiet) {
        fprintf(stderr, "flexq sim: skipped %zu bad row%s of %zu:\n",
                tr.skipped, tr.skipped == 1 ? "" : "s", tr.lines);
        for (size_t i = 0; i < tr.n_skip_errors; i++)
            fprintf(stderr, "  %s\n", tr.skip_errors[i].msg);
        if (tr.skipped > tr.n_skip_errors)
            fprintf(stderr, "  ... and %zu more\n",
                    tr.skipped - tr.n_skip_errors);
    }
    fq_sim_scale_arrivals(&tr, scale);
    o.arrival_scale = scale;
    if (size_pct > 0) {
        double load = fq_sim_offered_load(&tr, &o.map);
        double q = load * size_pct / 100.0;
        o.plan_a_quota = q < 1 ? 1 : (int64_t)(q + 0.999999);
        if (!quiet)
            fprintf(stderr,
                    "flexq sim: Plan A quota %lld chips (%.0f%% of the "
                    "offered load, %.1f chips busy on average)\n",
                    (long long)o.plan_a_quota, size_pct, load);
    } else if (size_chips > 0) {
        o.plan_a_quota = size_chips;
    }
    o.config = &docs;
    o.config_name = config;
    o.trace = &tr;

    struct fq_sim_result *rs[MAX_COMPARE] = {0};
    int status = FQ_CLI_OK;
    size_t ran = 0;
    if (jobs == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? (size_t)cpus : 1;
    }
    if (jobs > npol)
        jobs = npol;
    if (jobs > 1) {
        ran = npol;
        status = run_parallel(&o, pols, npol, jobs, quiet, rs);
    }
    for (size_t i = 0; jobs <= 1 && i < npol; i++) {
        struct progress pr = {
            .policy = pols[i]->name, .quiet = quiet, .tty = isatty(2)};
        clock_gettime(CLOCK_MONOTONIC, &pr.start);
        pr.last = pr.start;
        o.policy = pols[i];
        o.progress = on_progress;
        o.progress_ctx = &pr;
        rs[i] = fq_xcalloc(1, sizeof(*rs[i]));
        ran++;
        if (fq_sim_run(&o, rs[i], &err)) {
            if (pr.shown && pr.tty)
                fputc('\n', stderr);
            fprintf(stderr, "flexq sim: %s\n", err.msg);
            status = FQ_CLI_FAIL;
            break;
        }
        if (pr.shown && pr.tty)
            fputc('\n', stderr);
    }
    if (status == FQ_CLI_OK) {
        struct fq_buf b = FQ_BUF_INIT;
        const struct fq_sim_result *const *crs =
            (const struct fq_sim_result *const *)rs;
        if (!strcmp(output, "json")) {
            if (npol == 1)
                fq_sim_report_json(rs[0], &b);
            else
                fq_sim_report_compare_json(crs, npol, &b);
        } else if (npol == 1) {
            fq_sim_report_table(rs[0], &b);
        } else {
            fq_sim_report_compare(crs, npol, &b);
        }
        fwrite(fq_buf_str(&b), 1, b.len, stdout);
        fq_buf_release(&b);
        char *title = fq_xasprintf("flexq sim: %s through %s", trace, config);
        if (out && write_outputs(out, title, rs, npol))
            status = FQ_CLI_FAIL;
        free(title);
    }
    for (size_t i = 0; i < ran; i++) {
        fq_sim_result_release(rs[i]);
        free(rs[i]);
    }
    fq_trace_release(&tr);
    fq_docs_release(&docs);
    return status;
}

const struct fq_cli_cmd fq_cli_cmd_sim = {
    "sim", run, "Replay a job trace through a queue config in virtual time",
    "Usage: flexq sim --config FILE.yaml --trace FILE.csv [--policy NAME]\n"
    "                 [--compare a,b,c] [--out DIR] [--seed N] [--skip-bad]\n"
    "                 [--map KEY=VALUE,...] [--long-jobs RULE]\n"
    "                 [--resource NAME] [--scale-arrivals F]\n"
    "                 [--size-plan-a auto|auto:P|P%|N] [--forecasts N|all]\n"
    "                 [--forecast-seeds N] [--forecast-oracle]\n"
    "                 [--switch K=V,...] [--route-b-over D] [--route-b-area H]\n"
    "                 [--route-guess G] [--pods-ready D] [--jobs N]\n"
    "                 [--check-invariants]\n"
    "                 [-o table|json] [--quiet]\n"
    "\n"
    "Replays a job trace (the normalized CSV: job_id,submit_s,duration_s,\n"
    "chips,hosts,...) through the flexq config in FILE.yaml (NodePools,\n"
    "CapacityModel, ResourceFlavors, ClusterQueues, LocalQueues, checks)\n"
    "with flexq's own engine in virtual time, and reports waits, slowdown,\n"
    "utilisation and cost.\n"
    "\n"
    "  --policy NAME     plan-a-only, plan-b-only, kueue or flexq (default)\n"
    "  --compare a,b,c   run several policies and print them side by side\n"
    "  --out DIR         also write summary.json, summary.txt,\n"
    "                    jobs-POLICY.csv, wait-cdf.svg, wait-cdf-tail.svg,\n"
    "                    queue.svg, pools-POLICY.svg, forecasts-POLICY.csv\n"
    "                    and report.html (the summary table beside the\n"
    "                    plots) into DIR\n"
    "  --seed N          seed of the engine's PRNG (default 1); the same\n"
    "                    seed gives the same output, byte for byte\n"
    "  --skip-bad        skip and count bad trace rows instead of failing\n"
    "  --map K=V,...     chips-per-host=N (pods of at most N chips),\n"
    "                    queue=NAME|@queue|@user (the LocalQueue),\n"
    "                    priority=N|@priority\n"
    "  --long-jobs RULE  what to do with jobs longer than Plan B's max run:\n"
    "                    keep-a (pin to Plan A), split (checkpointed\n"
    "                    segments), split-a (segments pinned to Plan A)\n"
    "                    or refuse; default: the policy's rule\n"
    "  --check-invariants  hold every settle to flexq's invariants (quota,\n"
    "                    node table; docs/architecture.md), stopping at the\n"
    "                    first broken one (slow)\n"
    "  --resource NAME   the accelerator resource jobs request (default:\n"
    "                    the ClusterQueue's first non-cpu/memory resource)\n"
    "  --scale-arrivals F  arrival rate x F: submit times divided by F\n"
    "                    (0.8: a lighter window, 1.2: a heavier one)\n"
    "  --size-plan-a S   Plan A's quota: auto (100% of the trace's offered\n"
    "                    load, chips busy on average), auto:P or P% (P\n"
    "                    percent of it) or N chips; its pool and on-demand\n"
    "                    stock get 25% headroom in nodes\n"
    "  --forecasts N|all forecast the start of N jobs (sampled evenly) at\n"
    "                    their submission with `flexq estimate`'s engine,\n"
    "                    under the policy simulated, and report how many\n"
    "                    held (default 200; 0: none)\n"
    "  --forecast-seeds N  cloud seeds per forecast (default 9)\n"
    "  --forecast-oracle give forecasts the true run times (the engine's\n"
    "                    own error) instead of the history's guesses\n"
    "  --switch K=V,...  engine switches (docs/policies.md): admissions=N,\n"
    "                    migrate=on|off, cooldown=on|off,\n"
    "                    stockout-fallback=on|off, cycle-ms=N,\n"
    "                    message-refresh=S, starved-after=S|off\n"
    "  --route-b-over D  jobs whose run time, as guessed from the run's\n"
    "                    history (never the trace's), is at least D\n"
    "                    (4h, 90m, 3600) go to Plan B only\n"
    "  --route-b-area H  jobs whose guessed chip-hours are at least H\n"
    "                    hours of Plan A's whole quota go to Plan B only,\n"
    "                    where its nodes cost no more per chip-hour\n"
    "  --route-guess G   last|share; --pods-ready D: 0, 10m (policies.md)\n"
    "  -j, --jobs N      run the policies of --compare on N threads\n"
    "                    (default: one per CPU); the output is the same\n"
    "  -o table|json     what to print on stdout (default table)\n"
    "  -q, --quiet       no progress line on stderr\n"};
