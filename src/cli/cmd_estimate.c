/*
 * cmd_estimate.c - `flexq estimate -f JOB.yaml`: when would this job start,
 * on each flavor of its queue?
 *
 * How it works: each job of the manifests is POSTed to flexqd's estimate
 * API (api_estimate.h), which copies the cluster into a fresh engine and
 * runs it forward in virtual time with the cloud model, once unpinned and
 * once pinned to each flavor, for several seeds. The answer's rows are
 * printed as a table of p10 / p50 / p90 starts after now, and the lines
 * under it say how the run times of the workloads ahead were chosen and
 * how much to trust them.
 *
 *   $ flexq estimate -f rayjob.yaml
 *   rayjob.ray.io/train: queue default/user-queue, ClusterQueue
 *   cluster-queue, 2 running, 1 pending ahead
 *   FLAVOR      P10    P50    P90    STARTS ON   RUNS
 *   (any)       10m    10m    12m    dws         5/5
 *   on-demand   1h2m   1h2m   1h2m   on-demand   5/5
 *   dws         10m    10m    12m    dws         5/5
 *   run times of the workloads ahead: 2 from the namespace's last runs,
 *   1 from their flexq.dev/expected-runtime
 *     confidence: 3 high; the history holds 14 finished runs
 *     forecast confidence: high (theirs, weighted by the work they have
 *     left)
 *
 * fq_cli_estimate_section prints the same table inside `flexq describe`
 * for a job that waits (a Workload not admitted, a suspended RayJob or
 * Job with a queue label).
 *
 * It does not: estimate from a stored state without a server (use
 * `flexq sim` for what-ifs), or create anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"
#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "flexq/runguess.h"
#include "print.h"

#define ESTIMATE_PATH "/apis/estimates.flexq.dev/v1alpha1/namespaces/"

/* "later than the horizon" prints as ">14d". */
static void dur(int64_t s, int64_t horizon_s, char *buf, size_t size)
{
    if (s < 0) {
        char h[24]; /* "14d": short; 1 + 23 fits any buf of 32 */
        fq_print_duration(horizon_s * 1000, h, sizeof(h));
        snprintf(buf, size, ">%s", h);
        return;
    }
    fq_print_duration(s * 1000, buf, size);
}

static void print_rows(const struct fq_value *est, const char *indent)
{
    int64_t hz = fq_value_path_int(est, "horizonSeconds", 0);
    const struct fq_value *rows = fq_map_get(est, "flavors");
    printf("%s%-16s%-9s%-9s%-9s%-16s%s\n", indent, "FLAVOR", "P10", "P50",
           "P90", "STARTS ON", "RUNS");
    for (size_t i = 0; i < fq_value_len(rows); i++) {
        const struct fq_value *r = fq_seq_at(rows, i);
        const char *fl = fq_value_path_str(r, "flavor", "");
        char p[3][32];
        static const char *const keys[3] = {"p10Seconds", "p50Seconds",
                                            "p90Seconds"};
        for (int k = 0; k < 3; k++)
            dur(fq_value_path_int(r, keys[k], -1), hz, p[k], sizeof(p[k]));
        if (!fq_value_path_bool(r, "pinnable", true)) {
            printf("%s%-16s(no nodeLabels to pin on)\n", indent, fl);
            continue;
        }
        const char *on = fq_value_path_str(r, "admittedOn", "");
        printf("%s%-16s%-9s%-9s%-9s%-16s%lld/%lld\n", indent,
               strcmp(fl, "*") ? fl : "(any)", p[0], p[1], p[2], *on ? on : "-",
               (long long)fq_value_path_int(r, "started", 0),
               (long long)fq_value_path_int(r, "runs", 0));
    }
    const struct fq_value *rt = fq_map_get(est, "runtimes");
    struct fq_buf b = FQ_BUF_INIT;
    for (int k = 0; k < FQ_RUNGUESS_NSOURCES; k++) {
        int64_t n = fq_value_path_int(
            rt, fq_runguess_source_key((enum fq_runguess_source)k), 0);
        if (n)
            fq_buf_printf(&b, "%s%lld from %s", b.len ? ", " : "", (long long)n,
                          fq_runguess_source_words((enum fq_runguess_source)k));
    }
    if (b.len) {
        printf("%srun times of the workloads ahead: %s\n", indent,
               fq_buf_str(&b));
        fq_buf_reset(&b);
        static const char *const conf[] = {"high", "medium", "low"};
        const struct fq_value *cf = fq_map_get(rt, "confidence");
        for (size_t k = 0; k < 3; k++) {
            int64_t n = fq_value_path_int(cf, conf[k], 0);
            if (n)
                fq_buf_printf(&b, "%s%lld %s", b.len ? ", " : "", (long long)n,
                              conf[k]);
        }
        int64_t runs = fq_value_path_int(rt, "historyRuns", 0);
        printf("%s  confidence: %s; the history holds %lld finished run%s\n",
               indent, fq_buf_str(&b), (long long)runs, runs == 1 ? "" : "s");
        printf("%s  forecast confidence: %s (theirs, weighted by the work "
               "they have left)\n",
               indent, fq_value_path_str(rt, "forecastConfidence", "?"));
    }
    fq_buf_release(&b);
}

static int post(struct fq_client *c, const struct fq_value *job, int seeds,
                struct fq_value **out, struct fq_err *err)
{
    const char *ns = fq_value_path_str(job, FQ_META_NAMESPACE, "default");
    char *esc = fq_client_escape(ns);
    char *path = seeds > 0 ? fq_xasprintf("%s%s/estimates?seeds=%d",
                                          ESTIMATE_PATH, esc, seeds) :
                             fq_xasprintf("%s%s/estimates", ESTIMATE_PATH, esc);
    /* The server reads the job as a user would write it. */
    struct fq_value *copy = fq_value_clone(job);
    fq_map_del(copy, "status");
    int rc = fq_client_post(c, path, copy, out, err);
    fq_value_free(copy);
    free(path);
    free(esc);
    return rc;
}

static bool waiting(const struct fq_value *obj)
{
    const char *kind = fq_value_path_str(obj, "kind", "");
    if (!strcmp(kind, "Workload")) {
        if (!*fq_value_path_str(obj, FQ_WL_QUEUE_NAME, ""))
            return false;
        const struct fq_value *cs = fq_value_path(obj, FQ_STATUS_CONDITIONS);
        for (size_t i = 0; i < fq_value_len(cs); i++) {
            const struct fq_value *c = fq_seq_at(cs, i);
            const char *t = fq_value_path_str(c, "type", "");
            if ((!strcmp(t, "Admitted") || !strcmp(t, "Finished")) &&
                !strcmp(fq_value_path_str(c, "status", ""), "True"))
                return false;
        }
        return fq_value_path_bool(obj, FQ_WL_ACTIVE, true);
    }
    if (strcmp(kind, "RayJob") && strcmp(kind, "Job"))
        return false;
    return fq_map_get(fq_meta_labels(obj), FQ_LABEL_QUEUE_NAME) &&
           fq_value_path_bool(obj, FQ_SPEC_SUSPEND, false);
}

void fq_cli_estimate_section(struct fq_client *c, const struct fq_value *obj)
{
    if (!waiting(obj))
        return;
    struct fq_value *est = NULL;
    struct fq_err err = {0};
    if (post(c, obj, 0, &est, &err) < 0) {
        printf("Estimated Start: <unavailable: %s>\n", err.msg);
        return;
    }
    printf("Estimated Start: (after now, over %lld cloud seeds)\n",
           (long long)fq_value_path_int(
               fq_seq_at(fq_map_get(est, "flavors"), 0), "runs", 0));
    print_rows(est, "  ");
    fq_value_free(est);
}

/* Takes "--seeds N" / "--seeds=N" out of argv; -1 if malformed. */
static int take_seeds(int *argc, char **argv)
{
    int seeds = 0;
    for (int i = 1; i < *argc; i++) {
        const char *v = NULL;
        int drop = 0;
        if (!strcmp(argv[i], "--seeds") && i + 1 < *argc) {
            v = argv[i + 1];
            drop = 2;
        } else if (!strncmp(argv[i], "--seeds=", 8)) {
            v = argv[i] + 8;
            drop = 1;
        } else if (!strcmp(argv[i], "--seeds")) {
            return -1;
        }
        if (!v)
            continue;
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || n < 1 || n > 20)
            return -1;
        seeds = (int)n;
        for (int k = i; k + drop < *argc; k++)
            argv[k] = argv[k + drop];
        *argc -= drop;
        i--;
    }
    return seeds;
}

static int run(int argc, char **argv)
{
    int seeds = take_seeds(&argc, argv);
    if (seeds < 0)
        return fq_cli_usage_error("estimate", "--seeds needs a number 1..20");
    struct fq_cmd_flags f;
    if (fq_cmd_parse("estimate", argc, argv, "filename,namespace,output", &f) <
        0)
        return FQ_CLI_FAIL;
    if (f.nfiles == 0)
        return fq_cli_usage_error("estimate", "-f FILE is required");
    if (f.nargs)
        return fq_cli_usage_error("estimate", "unexpected argument \"%s\"",
                                  f.args[0]);
    if (f.output && strcmp(f.output, "json") && strcmp(f.output, "yaml"))
        return fq_cli_usage_error("estimate", "-o takes json or yaml");
    struct fq_docs docs;
    if (fq_cmd_read_manifests(f.files, f.nfiles, fq_cmd_namespace(&f), &docs) <
        0)
        return FQ_CLI_FAIL;
    struct fq_client *c = fq_client_new(NULL, NULL);
    int rc = FQ_CLI_OK;
    for (size_t i = 0; i < docs.n; i++) {
        const struct fq_value *job = docs.items[i];
        struct fq_value *est = NULL;
        struct fq_err err = {0};
        int r = post(c, job, seeds, &est, &err);
        if (r < 0) {
            rc = fq_cmd_fail(r, &err);
            if (r == FQ_EIO)
                break;
            continue;
        }
        if (f.output) {
            struct fq_buf b = FQ_BUF_INIT;
            if (!strcmp(f.output, "json")) {
                fq_json_encode(est, FQ_JSON_PRETTY, &b);
                fq_buf_putc(&b, '\n');
            } else {
                if (docs.n > 1)
                    fq_buf_puts(&b, "---\n");
                fq_yaml_encode(est, &b);
            }
            fputs(fq_buf_str(&b), stdout);
            fq_buf_release(&b);
        } else {
            struct fq_buf name = FQ_BUF_INIT;
            fq_print_name(
                fq_kind_from_gvk(fq_value_path_str(job, "apiVersion", ""),
                                 fq_value_path_str(job, "kind", "")),
                fq_meta_name(job), &name);
            if (i)
                printf("\n");
            printf("%s: queue %s, ClusterQueue %s, %lld running, %lld "
                   "pending ahead\n",
                   fq_buf_str(&name), fq_value_path_str(est, "localQueue", ""),
                   fq_value_path_str(est, "clusterQueue", ""),
                   (long long)fq_value_path_int(est, "running", 0),
                   (long long)fq_value_path_int(est, "pending", 0));
            print_rows(est, "");
            fq_buf_release(&name);
        }
        fq_value_free(est);
    }
    fflush(stdout);
    fq_client_free(c);
    fq_docs_release(&docs);
    return rc;
}

const struct fq_cli_cmd fq_cli_cmd_estimate = {
    "estimate", run, "Forecast when a job would start, per flavor",
    "Usage: flexq estimate -f FILE|- [-n NAMESPACE] [--seeds N] [-o json|yaml]\n"
    "\n"
    "Asks flexqd when each job of the manifests (RayJob, Job or Workload,\n"
    "with a kueue.x-k8s.io/queue-name label) would start if it were\n"
    "submitted now. flexqd copies the cluster into a fresh engine and runs\n"
    "it forward with the cloud model: once as Kueue would place the job\n"
    "(\"(any)\"), and once pinned to each flavor of its ClusterQueue, for N\n"
    "cloud seeds (default 9). P10 / P50 / P90 are starts after now over the\n"
    "seeds. Running and pending workloads run for their\n"
    "flexq.dev/expected-runtime annotation, else a guess from the runs that\n"
    "finished in flexqd (the namespace's, then its ClusterQueue's), within\n"
    "their own limit; the last lines say which, and how much to trust\n"
    "them. Nothing is created.\n"
    "docs/estimates.md says how good the forecasts are.\n"
    "\n"
    "  -f, --filename FILE   a manifest file, or - for stdin (repeatable)\n"
    "  -n, --namespace NS    namespace for jobs that name none\n"
    "      --seeds N         cloud seeds per row, 1..20 (default 9)\n"
    "  -o, --output FORMAT   json or yaml: the Estimate objects\n"};
