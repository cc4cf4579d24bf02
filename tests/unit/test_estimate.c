/*
 * test_estimate.c - wait-time forecasts on hand-computable states.
 *
 * The config is test_sim.c's: Plan A is one 8-GPU node that always exists
 * (quota 8), Plan B is flex-start with a fixed 600 s wait and instant
 * boots. So a job's start can be worked out by hand from what runs and
 * waits before it; the forecast must equal it (within Kueue's 100 ms
 * scheduling cycle), for every seed, so p10 = p50 = p90.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "flexq/engine.h"
#include "flexq/estimate.h"
#include "flexq/names.h"
#include "flexq/runtime.h"
#include "flexq/timefmt.h"
#include "flexq/value.h"

#include "planab_testlib.h"
#include "yaml_testlib.h"

#define NOW 1767225600000LL /* 2026-01-01T00:00:00Z */

static struct fq_value *workload(const char *name, int gpus)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "apiVersion: kueue.x-k8s.io/v1beta1\n"
             "kind: Workload\n"
             "metadata:\n"
             "  name: %s\n"
             "  namespace: default\n"
             "  labels: {kueue.x-k8s.io/queue-name: user-queue}\n"
             "spec:\n"
             "  queueName: user-queue\n"
             "  podSets:\n"
             "  - name: main\n"
             "    count: 1\n"
             "    template:\n"
             "      spec:\n"
             "        tolerations: [{operator: Exists}]\n"
             "        containers:\n"
             "        - name: main\n"
             "          image: x\n"
             "          resources:\n"
             "            requests: {nvidia.com/gpu: \"%d\"}\n"
             "            limits: {nvidia.com/gpu: \"%d\"}\n",
             name, gpus, gpus);
    return testlib_yaml1(buf);
}

struct fixture {
    struct fq_docs docs;
    struct fq_value *wl[8];
    struct fq_estimate_job jobs[8];
    size_t njobs;
    struct fq_estimate_world w;
};

static void setup(struct fixture *x)
{
    memset(x, 0, sizeof(*x));
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_yaml_parse(config_ab, strlen(config_ab), "c.yaml", &lim,
                                   &x->docs, NULL),
                     0);
    x->w.objects = (const struct fq_value *const *)x->docs.items;
    x->w.nobjects = x->docs.n;
    x->w.now_ms = NOW;
    x->w.policy = fq_policy_kueue();
    x->w.horizon_ms = 86400000LL;
}

static void add_job(struct fixture *x, int gpus, int64_t run_s, bool running)
{
    char name[32];
    snprintf(name, sizeof(name), "w%zu", x->njobs);
    x->wl[x->njobs] = workload(name, gpus);
    x->jobs[x->njobs] = (struct fq_estimate_job){
        .obj = x->wl[x->njobs],
        .submit_ms = NOW - 1000 + (int64_t)x->njobs,
        .run_ms = run_s * 1000,
        .running = running,
    };
    x->njobs++;
    x->w.jobs = x->jobs;
    x->w.njobs = x->njobs;
}

static void teardown(struct fixture *x)
{
    for (size_t i = 0; i < x->njobs; i++)
        fq_value_free(x->wl[i]);
    fq_docs_release(&x->docs);
}

static bool engine_ready(void)
{
    struct fq_engine *e = fq_engine_new(NULL);
    bool ok =
        fq_engine_controller(e, "kueue") && fq_engine_controller(e, "capacity");
    fq_engine_free(e);
    return ok;
}

#define NEAR_MS(a, b)                                                        \
 do {                                                                        \
  int64_t a_ = (a), b_ = (b);                                                \
  if (a_ < b_ - 1000 || a_ > b_ + 1000)                                      \
   fail_msg("%s = %lld ms, want %lld ms", #a, (long long)a_, (long long)b_); \
 } while (0)

static const struct fq_estimate_range *row(const struct fq_estimate_result *r,
                                           const char *flavor)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].flavor, flavor))
            return &r->rows[i];
    fail_msg("no row %s", flavor);
    return NULL;
}

static void same_range(const struct fq_estimate_range *x, int64_t ms)
{
    assert_int_equal(x->started, x->runs);
    NEAR_MS(x->p10_ms, ms);
    NEAR_MS(x->p50_ms, ms);
    NEAR_MS(x->p90_ms, ms);
}

/* An empty cluster: the job starts now on Plan A; pinned to Plan B it
 * waits the flex-start's 600 s. */
static void test_empty(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fixture x;
    setup(&x);
    struct fq_value *t = workload("mine", 8);
    struct fq_estimate_options o;
    fq_estimate_options_init(&o);
    o.nseeds = 3;
    struct fq_estimate_result r;
    struct fq_err err = {0};
    assert_int_equal(fq_estimate_run(&x.w, t, &o, &r, &err), 0);
    assert_string_equal(r.cluster_queue, "cluster-queue");
    assert_string_equal(r.local_queue, "default/user-queue");
    assert_int_equal(r.n, 3);
    assert_string_equal(r.rows[0].flavor, "");
    same_range(&r.rows[0], 0);
    assert_string_equal(r.rows[0].admitted, "on-demand");
    same_range(row(&r, "on-demand"), 0);
    same_range(row(&r, "dws"), 600000);
    assert_string_equal(row(&r, "dws")->admitted, "dws");
    assert_int_equal(r.warmup_ms, 0);
    fq_estimate_result_release(&r);
    fq_value_free(t);
    teardown(&x);
}

/* Plan A busy for 1000 s more: unpinned the job goes to Plan B (600 s),
 * pinned to Plan A it waits for the running job (1000 s). */
static void test_running_job(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fixture x;
    setup(&x);
    add_job(&x, 8, 1000, true);
    struct fq_value *t = workload("mine", 8);
    struct fq_estimate_options o;
    fq_estimate_options_init(&o);
    o.nseeds = 2;
    struct fq_estimate_result r;
    struct fq_err err = {0};
    assert_int_equal(fq_estimate_run(&x.w, t, &o, &r, &err), 0);
    same_range(&r.rows[0], 600000);
    assert_string_equal(r.rows[0].admitted, "dws");
    same_range(row(&r, "on-demand"), 1000000);
    same_range(row(&r, "dws"), 600000);
    fq_estimate_result_release(&r);
    fq_value_free(t);
    teardown(&x);
}

/* A queue on Plan A: running 1000 s left, then a pending 8-GPU job of
 * 500 s submitted before ours that asks for Plan A's nodes (nodeSelector):
 * ours, pinned to Plan A, starts at 1500 s; unpinned it takes Plan B at
 * 600 s. */
static void test_queue_ahead(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fixture x;
    setup(&x);
    add_job(&x, 8, 1000, true);
    add_job(&x, 8, 500, false);
    struct fq_value *sel = fq_map_ensure_map(
        fq_value_path(fq_seq_at(fq_value_path(x.wl[1], "spec.podSets"), 0),
                      "template.spec"),
        "nodeSelector");
    fq_map_set(sel, "cloud.google.com/gke-nodepool",
               fq_value_str("on-demand-pool"));
    struct fq_value *t = workload("mine", 8);
    struct fq_estimate_options o;
    fq_estimate_options_init(&o);
    o.nseeds = 1;
    struct fq_estimate_result r;
    struct fq_err err = {0};
    assert_int_equal(fq_estimate_run(&x.w, t, &o, &r, &err), 0);
    same_range(row(&r, "on-demand"), 1500000);
    same_range(&r.rows[0], 600000);
    fq_estimate_result_release(&r);
    fq_value_free(t);
    teardown(&x);
}

/* Two running jobs: A on Plan A with 100 s left, B on Plan B (its pod
 * template selects the dws pool) with 100 s left. The warm-up places A at
 * once and B after a new 600 s flex-start wait; A ends at 100 s, inside
 * the warm-up. So t0 = 600 s, Plan A is free by then: the job starts at
 * once on Plan A (0 s after t0). */
static void test_warmup(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fixture x;
    setup(&x);
    add_job(&x, 8, 100, true);
    add_job(&x, 8, 100, true);
    struct fq_value *sel = fq_map_ensure_map(
        fq_value_path(fq_seq_at(fq_value_path(x.wl[1], "spec.podSets"), 0),
                      "template.spec"),
        "nodeSelector");
    fq_map_set(sel, "cloud.google.com/gke-nodepool", fq_value_str("dws-pool"));
    struct fq_value *t = workload("mine", 8);
    struct fq_estimate_options o;
    fq_estimate_options_init(&o);
    o.nseeds = 1;
    struct fq_estimate_result r;
    struct fq_err err = {0};
    assert_int_equal(fq_estimate_run(&x.w, t, &o, &r, &err), 0);
    NEAR_MS(r.warmup_ms, 600000);
    same_range(row(&r, "on-demand"), 0);
    same_range(&r.rows[0], 0);
    assert_string_equal(r.rows[0].admitted, "on-demand");
    fq_estimate_result_release(&r);
    fq_value_free(t);
    teardown(&x);
}

/* As test_warmup, but A has 1000 s left: it still has them at t0, the
 * end of the 600 s warm-up that stands for now, so the job pinned to Plan
 * A starts 1000 s after t0 (not 400 s, as if A's clock had run during the
 * warm-up). */
static void test_warmup_keeps_run(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fixture x;
    setup(&x);
    add_job(&x, 8, 1000, true);
    add_job(&x, 8, 100, true);
    struct fq_value *sel = fq_map_ensure_map(
        fq_value_path(fq_seq_at(fq_value_path(x.wl[1], "spec.podSets"), 0),
                      "template.spec"),
        "nodeSelector");
    fq_map_set(sel, "cloud.google.com/gke-nodepool", fq_value_str("dws-pool"));
    struct fq_value *t = workload("mine", 8);
    struct fq_estimate_options o;
    fq_estimate_options_init(&o);
    o.nseeds = 1;
    struct fq_estimate_result r;
    struct fq_err err = {0};
    assert_int_equal(fq_estimate_run(&x.w, t, &o, &r, &err), 0);
    NEAR_MS(r.warmup_ms, 600000);
    same_range(row(&r, "on-demand"), 1000000);
    fq_estimate_result_release(&r);
    fq_value_free(t);
    teardown(&x);
}

/* A replay: the jobs' starts relative to now, as worked out by hand. */
static void test_replay(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fixture x;
    setup(&x);
    /* j0 (8 GPUs, 100 s) arrives now, j1 (4 GPUs, 50 s) at 10 s. */
    add_job(&x, 8, 100, true);
    x.jobs[0].submit_ms = NOW;
    add_job(&x, 4, 50, false);
    x.jobs[1].submit_ms = NOW + 10000;
    int64_t st[2];
    assert_int_equal(fq_estimate_replay(&x.w, 1, st, NULL, NULL), 0);
    assert_int_equal(st[0], 0);
    /* j1 does not fit Plan A before 100 s, so Kueue gives it Plan B, whose
     * request is provisioned 600 s after its arrival at 10 s. */
    NEAR_MS(st[1], 610000);
    teardown(&x);
}

static void test_runtime(void **state)
{
    (void)state;
    struct fq_value *w = workload("a", 1);
    enum fq_runtime_source src;
    assert_int_equal(fq_runtime_stated(w, &src), -1);
    assert_int_equal(src, FQ_RUNTIME_NONE);
    struct fq_value *ann =
        fq_map_ensure_map(fq_map_ensure_map(w, "metadata"), "annotations");
    fq_map_set(ann, FQ_ANN_EXPECTED_RUNTIME, fq_value_str("1h30m"));
    assert_int_equal(fq_runtime_stated(w, &src), 5400000);
    assert_int_equal(src, FQ_RUNTIME_ANNOTATION);
    fq_map_set(ann, FQ_ANN_EXPECTED_RUNTIME, fq_value_str("120"));
    assert_int_equal(fq_runtime_stated(w, NULL), 120000);
    fq_map_set(ann, FQ_ANN_EXPECTED_RUNTIME, fq_value_str("soon"));
    fq_map_set(fq_map_ensure_map(w, "spec"), "activeDeadlineSeconds",
               fq_value_int(60));
    assert_int_equal(fq_runtime_stated(w, &src), 60000);
    assert_int_equal(src, FQ_RUNTIME_DEADLINE);
    /* A deadline whose milliseconds overflow an int64 (a Job takes any
     * int64) states no run time, as an annotation over 100 years. */
    fq_map_set(fq_map_get(w, "spec"), "activeDeadlineSeconds",
               fq_value_int(INT64_MAX / 10));
    assert_int_equal(fq_runtime_stated(w, &src), -1);
    assert_int_equal(src, FQ_RUNTIME_NONE);
    fq_map_set(fq_map_get(w, "spec"), "activeDeadlineSeconds",
               fq_value_int(FQ_DURATION_MAX_MS / 1000));
    assert_int_equal(fq_runtime_stated(w, NULL), FQ_DURATION_MAX_MS);
    fq_value_free(w);
}

/* Issue 20: pinned to a flavor, only the podsets asking for what the
 * flavor's resource group covers carry its node labels. A head asking for
 * no GPU keeps its template; the GPU podset is pinned. */
static void test_pin_served_podsets(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fixture x;
    setup(&x);
    struct fq_value *t = workload("mine", 8);
    struct fq_value *pss = fq_value_path(t, "spec.podSets");
    struct fq_value *head =
        testlib_yaml1("name: head\n"
                      "count: 1\n"
                      "template:\n"
                      "  spec:\n"
                      "    nodeSelector: {pool: head}\n"
                      "    containers: [{name: head, image: x}]\n");
    fq_seq_push(pss, head);
    struct fq_value *pin =
        testlib_yaml1("nodeLabels: {cloud.google.com/gke-nodepool: dws-pool}\n"
                      "covered: [nvidia.com/gpu]\n");
    fq_estimate_pin_templates(t, pin);
    struct fq_value *ps0 = fq_seq_at(pss, 0);
    assert_string_equal(fq_value_as_str(fq_map_get(
                            fq_value_path(ps0, "template.spec.nodeSelector"),
                            "cloud.google.com/gke-nodepool")),
                        "dws-pool");
    const struct fq_value *hsel =
        fq_value_path(fq_seq_at(pss, 1), "template.spec.nodeSelector");
    assert_int_equal(fq_value_len(hsel), 1);
    assert_string_equal(fq_value_as_str(fq_map_get(hsel, "pool")), "head");
    fq_value_free(pin);
    fq_value_free(t);
    teardown(&x);
}

/* A job without a queue label, or naming a LocalQueue that does not
 * exist, is refused with a message. */
static void test_bad_target(void **state)
{
    (void)state;
    struct fixture x;
    setup(&x);
    struct fq_value *t = workload("mine", 8);
    fq_map_set(fq_value_path(t, "metadata.labels"), "kueue.x-k8s.io/queue-name",
               fq_value_str("nope"));
    fq_map_set(fq_map_get(t, "spec"), "queueName", fq_value_str("nope"));
    struct fq_estimate_result r;
    struct fq_err err = {0};
    assert_int_equal(fq_estimate_run(&x.w, t, NULL, &r, &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "no LocalQueue default/nope"));
    fq_value_free(t);
    teardown(&x);
}

/* `flexq estimate` refuses bad arguments before asking any server. */
static void test_cli_args(void **state)
{
    (void)state;
    char a0[] = "estimate", a1[] = "--seeds", a2[] = "0", a3[] = "-f",
         a4[] = "x.yaml", a5[] = "extra", a6[] = "-o", a7[] = "table";
    char *bad_seeds[] = {a0, a1, a2, a3, a4, NULL};
    assert_int_equal(fq_cli_cmd_estimate.fn(5, bad_seeds), FQ_CLI_FAIL);
    char *no_file[] = {a0, NULL};
    assert_int_equal(fq_cli_cmd_estimate.fn(1, no_file), FQ_CLI_FAIL);
    char *extra[] = {a0, a3, a4, a5, NULL};
    assert_int_equal(fq_cli_cmd_estimate.fn(4, extra), FQ_CLI_FAIL);
    char *bad_out[] = {a0, a3, a4, a6, a7, NULL};
    assert_int_equal(fq_cli_cmd_estimate.fn(5, bad_out), FQ_CLI_FAIL);
    char *missing[] = {a0, a3, a4, NULL}; /* no such file */
    assert_int_equal(fq_cli_cmd_estimate.fn(3, missing), FQ_CLI_FAIL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_running_job),
        cmocka_unit_test(test_warmup_keeps_run),
        cmocka_unit_test(test_queue_ahead),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_warmup),
        cmocka_unit_test(test_runtime),
        cmocka_unit_test(test_bad_target),
        cmocka_unit_test(test_cli_args),
        cmocka_unit_test(test_pin_served_podsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
