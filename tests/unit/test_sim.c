/*
 * test_sim.c - small traces through the real engine, with outcomes worked
 * out by hand: a few jobs, fixed capacity, every figure of the summary.
 *
 * The configs keep the arithmetic simple: nodes boot instantly, Plan A's
 * one node always exists (min 1), Plan B's flex-start requests wait a
 * fixed 600 s, and prices are round numbers.
 *
 * When the engine is built without the kueue or capacity controller (other
 * modules still landing), the engine tests skip rather than fail.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/value.h"
#include "report.h"
#include "simloop.h"
#include "trace.h"

#include "planab_testlib.h"

#define HDR "job_id,submit_s,duration_s,chips,hosts,priority,queue,user\n"

struct run {
    struct fq_docs docs;
    struct fq_trace trace;
    struct fq_sim_result r;
    struct fq_sim_figures f;
};

static bool engine_ready(void)
{
    struct fq_engine *e = fq_engine_new(NULL);
    bool ok =
        fq_engine_controller(e, "kueue") && fq_engine_controller(e, "capacity");
    fq_engine_free(e);
    return ok;
}

static int sim(struct run *x, const char *config, const char *csv,
               const char *policy, int long_rule, uint64_t seed,
               struct fq_err *err)
{
    memset(x, 0, sizeof(*x));
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(
        fq_yaml_parse(config, strlen(config), "c.yaml", &lim, &x->docs, err),
        0);
    fq_trace_init(&x->trace);
    assert_int_equal(
        fq_trace_parse(&x->trace, csv, strlen(csv), "t.csv", false, err), 0);
    struct fq_sim_options o;
    fq_sim_options_init(&o);
    o.config = &x->docs;
    o.config_name = "c.yaml";
    o.trace = &x->trace;
    o.policy = fq_sim_policy_find(policy);
    assert_non_null(o.policy);
    if (long_rule >= 0) {
        o.long_rule_set = true;
        o.long_rule = (enum fq_sim_long_rule)long_rule;
    }
    o.seed = seed;
    int rc = fq_sim_run(&o, &x->r, err);
    if (rc == 0)
        fq_sim_figures(&x->r, &x->f);
    return rc;
}

static void done(struct run *x)
{
    fq_sim_result_release(&x->r);
    fq_trace_release(&x->trace);
    fq_docs_release(&x->docs);
}

#define NEAR(a, b)                               \
 do {                                            \
  double a_ = (a), b_ = (b);                     \
  if (fabs(a_ - b_) > 1e-6 * (1 + fabs(b_)))     \
   fail_msg("%s = %.9g, want %.9g", #a, a_, b_); \
 } while (0)

static int pool_named(const struct fq_sim_result *r, const char *name)
{
    for (size_t i = 0; i < r->npools; i++)
        if (!strcmp(r->pools[i].name, name))
            return (int)i;
    return -1;
}

/*
 * Plan A only, one 8-GPU node. Kueue admits one workload per ClusterQueue
 * per scheduling cycle, and cycles are 100 ms apart (kueue.h), so of two
 * jobs that fit at the same instant the second starts 0.1 s later:
 *   j1  t=0   8 chips 100 s  -> runs 0..100
 *   j2  t=10  4 chips  50 s  -> waits for j1: runs 100..150
 *   j3  t=20  4 chips 200 s  -> next cycle: runs 100.1..300.1 beside j2
 *   j4  t=30  1 chip   10 s  -> waits for j2: runs 150..160
 * waits 0, 90, 80.1, 120; slowdowns 1, 2.8, 1.4005, 13.
 * The node is up 0..300.1: 300.1 s x 36 USD/h = 3.001 USD; busy
 * chip-seconds 800 + 200 + 800 + 10 = 1810 of 2400.8.
 */
static void test_plan_a_only(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct run x;
    struct fq_err err = {0};
    const char *csv = HDR "j1,0,100,8,1,0,,\n"
                          "j2,10,50,4,1,0,,\n"
                          "j3,20,200,4,1,0,,\n"
                          "j4,30,10,1,1,0,,\n";
    if (sim(&x, config_ab, csv, "plan-a-only", -1, 1, &err))
        fail_msg("%s", err.msg);
    const struct fq_sim_figures *f = &x.f;
    assert_int_equal(f->jobs, 4);
    assert_int_equal(f->finished, 4);
    assert_int_equal(f->refused + f->expired + f->unfinished, 0);
    assert_int_equal(f->evictions, 0);
    const int64_t start[] = {0, 100000, 100100, 150000},
                  fin[] = {100000, 150000, 300100, 160000};
    for (int i = 0; i < 4; i++) {
        if (x.r.jobs[i].start_ms != start[i] || x.r.jobs[i].finish_ms != fin[i])
            fail_msg("job %d ran %.3f..%.3f, want %.3f..%.3f", i + 1,
                     (double)x.r.jobs[i].start_ms / 1000,
                     (double)x.r.jobs[i].finish_ms / 1000,
                     (double)start[i] / 1000, (double)fin[i] / 1000);
    }
    NEAR(f->cls[0].mean_s, 290.1 / 4);
    NEAR(f->cls[0].p50_s, 80.1);
    NEAR(f->cls[0].p95_s, 120);
    NEAR(f->cls[0].p99_s, 120);
    NEAR(f->cls[0].max_s, 120);
    NEAR(f->cls[0].slowdown_mean, (1 + 2.8 + 1.4005 + 13) / 4);
    assert_int_equal(f->cls[1].n, 1);
    NEAR(f->cls[1].mean_s, 120);
    assert_int_equal(f->cls[2].n, 3);
    NEAR(f->cls[2].mean_s, 170.1 / 3);
    NEAR(f->cls[2].p50_s, 80.1);
    assert_int_equal(f->cls[3].n + f->cls[4].n, 0);
    int a = pool_named(&x.r, "on-demand-pool");
    assert_true(a >= 0);
    assert_int_equal(x.r.pools[a].max_nodes, 1);
    assert_false(x.r.pools[a].queued);
    NEAR(x.r.pools[a].node_ms, 300.1e3);
    NEAR(x.r.pools[a].chip_ms, 2400.8e3);
    NEAR(x.r.pools[a].busy_chip_ms, 1810e3);
    NEAR(f->pool_util[a], 1810.0 / 2400.8);
    NEAR(f->pool_cost[a], 3.001);
    /* A new cluster has default-pool too: one n2-standard-16 node at the
     * catalog's 0.78 USD/h, up as long as the run. */
    int d = pool_named(&x.r, "default-pool");
    double dcost = d >= 0 ? 300.1 / 3600 * 0.78 : 0;
    if (d >= 0)
        NEAR(f->pool_cost[d], dcost);
    NEAR(f->cost_total, 3.001 + dcost);
    NEAR(f->chip_hours_delivered, 1810.0 / 3600);
    NEAR(f->cost_per_chip_hour, (3.001 + dcost) / (1810.0 / 3600));
    assert_int_equal(x.r.end_ms, 300100);
    assert_string_equal(x.r.policy, "plan-a-only");
    assert_string_equal(x.r.long_rule, "kept on Plan A");
    assert_true(x.r.max_run_ms == 3000000);
    done(&x);
}

/*
 * A then B as Kueue does:
 *   j1 t=0  8 chips 1000 s -> Plan A, runs 0..1000
 *   j2 t=10 8 chips 1000 s -> Plan A full: Plan B, request provisioned
 *                             after 600 s, runs 610..1610
 * Plan B's node lives 610..1610 in the accounting (the run ends then):
 * 1000 s x 18 USD/h = 5 USD; Plan A 1610 s x 36 USD/h = 16.1 USD.
 */
static void test_kueue_a_then_b(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct run x;
    struct fq_err err = {0};
    const char *csv = HDR "j1,0,1000,8,1,0,,\nj2,10,1000,8,1,0,,\n";
    if (sim(&x, config_ab, csv, "kueue", -1, 1, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(x.f.finished, 2);
    int a = pool_named(&x.r, "on-demand-pool"),
        b = pool_named(&x.r, "dws-pool");
    assert_true(a >= 0 && b >= 0);
    assert_int_equal(x.r.jobs[0].pool, a);
    assert_int_equal(x.r.jobs[1].pool, b);
    assert_true(x.r.pools[b].queued);
    assert_int_equal(x.r.jobs[0].start_ms, 0);
    assert_int_equal(x.r.jobs[1].start_ms, 610000);
    assert_int_equal(x.r.jobs[1].finish_ms, 1610000);
    NEAR(x.f.cls[0].mean_s, 300);
    NEAR(x.f.cls[0].max_s, 600);
    NEAR(x.r.pools[b].node_ms, 1000e3);
    NEAR(x.f.pool_cost[b], 5.0);
    NEAR(x.f.pool_cost[a], 16.1);
    NEAR(x.f.pool_util[b], 1.0);
    done(&x);
}

/*
 * Jobs longer than Plan B's max run (3000 s here) under each rule, with
 * Plan A busy until 2900 s with j1 (not a long job):
 *   keep-a: j2 (4000 s) is pinned to Plan A: runs 2900..6900;
 *   refuse: j2 is refused, never submitted;
 *   split:  j2 runs in segments of 1500 s (max run / 2, since max run is
 *           under 2 h): on Plan B 610..2110, on Plan B again (A is still
 *           busy) 2710..4210, then on Plan A, free by then, 4210..5210.
 */
static void test_long_job_rules(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    const char *csv = HDR "j1,0,2900,8,1,0,,\nj2,10,4000,8,1,0,,\n";
    struct run x;
    struct fq_err err = {0};

    if (sim(&x, config_ab, csv, "kueue", FQ_SIM_LONG_KEEP_A, 1, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(x.f.finished, 2);
    assert_int_equal(x.r.jobs[1].start_ms, 2900000);
    assert_int_equal(x.r.jobs[1].finish_ms, 6900000);
    assert_int_equal(x.r.jobs[1].pool, pool_named(&x.r, "on-demand-pool"));
    done(&x);

    if (sim(&x, config_ab, csv, "kueue", FQ_SIM_LONG_REFUSE, 1, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(x.f.finished, 1);
    assert_int_equal(x.f.refused, 1);
    assert_int_equal(x.r.jobs[1].outcome, FQ_SIM_REFUSED);
    assert_int_equal(x.r.jobs[1].start_ms, -1);
    assert_string_equal(x.r.long_rule, "refused");
    done(&x);

    if (sim(&x, config_ab, csv, "flexq", FQ_SIM_LONG_SPLIT, 1, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(x.r.long_rule, "split into checkpointed segments");
    assert_int_equal(x.f.finished, 2);
    assert_int_equal(x.r.jobs[1].segments, 3);
    assert_int_equal(x.r.jobs[1].start_ms, 610000);
    assert_int_equal(x.r.jobs[1].finish_ms, 5210000);
    assert_int_equal(x.r.jobs[1].run_ms, 4000000);
    assert_int_equal(x.r.jobs[1].pool, pool_named(&x.r, "on-demand-pool"));
    done(&x);

    /* flexq's own rule: segments pinned to Plan A (each of 1,500 s, under
     * the 6-hour default); nothing runs on Plan B. */
    if (sim(&x, config_ab, csv, "flexq", -1, 1, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(x.r.long_rule,
                        "split into checkpointed segments on Plan A");
    assert_int_equal(x.f.finished, 2);
    assert_int_equal(x.r.jobs[1].segments, 3);
    assert_int_equal(x.r.jobs[1].run_ms, 4000000);
    assert_int_equal(x.r.jobs[1].pool, pool_named(&x.r, "on-demand-pool"));
    done(&x);
}

/* The same seed gives the same bytes; the summary is reproducible. */
static void test_reproducible(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    const char *csv = HDR "j1,0,500,8,1,0,,\nj2,10,300,4,1,0,,\n"
                          "j3,20,700,8,1,0,,\nj4,30,100,2,1,0,,\n"
                          "j5,40,900,8,1,0,,\n";
    struct fq_buf out[2] = {FQ_BUF_INIT, FQ_BUF_INIT};
    for (int i = 0; i < 2; i++) {
        struct run x;
        struct fq_err err = {0};
        if (sim(&x, config_ab, csv, "flexq", -1, 42, &err))
            fail_msg("%s", err.msg);
        fq_sim_report_json(&x.r, &out[i]);
        fq_sim_report_jobs_csv(&x.r, &out[i]);
        done(&x);
    }
    assert_string_equal(fq_buf_str(&out[0]), fq_buf_str(&out[1]));
    fq_buf_release(&out[0]);
    fq_buf_release(&out[1]);
}

/* Config errors are reported, not simulated. */
static void test_config_errors(void **state)
{
    (void)state;
    struct run x;
    struct fq_err err = {0};
    const char *csv = HDR "j1,0,100,8,1,0,,\n";
    const char *no_lq = "apiVersion: kueue.x-k8s.io/v1beta1\n"
                        "kind: ResourceFlavor\n"
                        "metadata: {name: on-demand}\n";
    assert_int_equal(sim(&x, no_lq, csv, "kueue", -1, 1, &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "defines no LocalQueue"));
    done(&x);

    memset(&err, 0, sizeof(err));
    const char *q_csv = HDR "j1,0,100,8,1,0,elsewhere,\n";
    struct fq_limits lim = fq_limits_default();
    memset(&x, 0, sizeof(x));
    assert_int_equal(fq_yaml_parse(config_ab, strlen(config_ab), "c.yaml", &lim,
                                   &x.docs, &err),
                     0);
    fq_trace_init(&x.trace);
    assert_int_equal(
        fq_trace_parse(&x.trace, q_csv, strlen(q_csv), "t.csv", false, &err),
        0);
    struct fq_sim_options o;
    fq_sim_options_init(&o);
    o.config = &x.docs;
    o.trace = &x.trace;
    assert_int_equal(fq_trace_map_parse(&o.map, "queue=@queue", &err), 0);
    assert_int_equal(fq_sim_run(&o, &x.r, &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "trace line 2: job j1 goes to "
                                    "LocalQueue \"elsewhere\""));
    done(&x);
}

static void test_policy_table(void **state)
{
    (void)state;
    assert_int_equal(fq_sim_policy_count(), 4);
    const struct fq_sim_policy *k = fq_sim_policy_find("kueue");
    assert_non_null(k);
    assert_true(k->kueue_exact);
    struct fq_policy p = fq_sim_policy_engine(k);
    assert_int_equal(p.max_admissions_per_cq_per_cycle, 1);
    assert_false(p.stockout_fallback);
    const struct fq_sim_policy *f = fq_sim_policy_find("flexq");
    assert_false(f->kueue_exact);
    assert_true(fq_sim_policy_engine(f).stockout_fallback);
    assert_int_equal(fq_sim_policy_find("plan-a-only")->plans,
                     FQ_SIM_PLAN_A_ONLY);
    assert_int_equal(fq_sim_policy_find("plan-b-only")->plans,
                     FQ_SIM_PLAN_B_ONLY);
    assert_null(fq_sim_policy_find("fifo"));
    enum fq_sim_long_rule r;
    assert_int_equal(fq_sim_long_rule_parse("split", &r), 0);
    assert_int_equal(r, FQ_SIM_LONG_SPLIT);
    assert_int_equal(fq_sim_long_rule_parse("nope", &r), FQ_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_table),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_plan_a_only),
        cmocka_unit_test(test_kueue_a_then_b),
        cmocka_unit_test(test_long_job_rules),
        cmocka_unit_test(test_reproducible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
