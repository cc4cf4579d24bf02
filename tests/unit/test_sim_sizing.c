/*
 * test_sim_sizing.c - `flexq sim`'s load knobs: arrivals scaled in time,
 * the offered load of a window, --size-plan-a parsing, and a run whose
 * Plan A was resized (the second job fits on Plan A only after it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/engine.h"
#include "flexq/value.h"
#include "report.h"
#include "simloop.h"
#include "sizing.h"
#include "trace.h"

#include "planab_testlib.h"

#define HDR "job_id,submit_s,duration_s,chips,hosts,priority,queue,user\n"

static void parse(struct fq_trace *t, const char *csv)
{
    struct fq_err err = {0};
    fq_trace_init(t);
    if (fq_trace_parse(t, csv, strlen(csv), "t.csv", false, &err))
        fail_msg("%s", err.msg);
}

static void test_scale_arrivals(void **state)
{
    (void)state;
    struct fq_trace t;
    parse(&t, HDR "a,0,10,1,1,0,,\nb,60,10,1,1,0,,\nc,120,10,1,1,0,,\n");
    fq_sim_scale_arrivals(&t, 1.2);
    assert_int_equal(t.jobs[0].submit_ms, 0);
    assert_int_equal(t.jobs[1].submit_ms, 50000);
    assert_int_equal(t.jobs[2].submit_ms, 100000);
    fq_sim_scale_arrivals(&t, 0.5);
    assert_int_equal(t.jobs[2].submit_ms, 200000);
    assert_int_equal(t.jobs[0].duration_ms, 10000); /* durations untouched */
    fq_sim_scale_arrivals(&t, 1000);                /* out of range: ignored */
    assert_int_equal(t.jobs[2].submit_ms, 200000);
    fq_trace_release(&t);
}

/* 4 chips x 100 s + 2 x 300 s = 1000 chip-s over a 100 s window: 10. */
static void test_offered_load(void **state)
{
    (void)state;
    struct fq_trace t;
    parse(&t, HDR "a,0,100,4,1,0,,\nb,100,300,2,1,0,,\n");
    struct fq_trace_map m;
    fq_trace_map_init(&m);
    assert_true(fq_sim_offered_load(&t, &m) > 9.999 &&
                fq_sim_offered_load(&t, &m) < 10.001);
    /* Pods of at most 3 chips: 4 chips become 2 pods of 2, still 4. */
    m.chips_per_host = 3;
    assert_true(fq_sim_offered_load(&t, &m) > 9.999);
    fq_trace_release(&t);
    struct fq_trace empty;
    fq_trace_init(&empty);
    assert_true(fq_sim_offered_load(&empty, &m) == 0);
    fq_trace_release(&empty);
}

static void test_size_parse(void **state)
{
    (void)state;
    double pct;
    int64_t chips;
    struct fq_err err = {0};
    assert_int_equal(fq_sim_size_parse("auto", &pct, &chips, &err), 0);
    assert_true(pct == 100 && chips == 0);
    assert_int_equal(fq_sim_size_parse("auto:50", &pct, &chips, &err), 0);
    assert_true(pct == 50);
    assert_int_equal(fq_sim_size_parse("80%", &pct, &chips, &err), 0);
    assert_true(pct == 80);
    assert_int_equal(fq_sim_size_parse("72", &pct, &chips, &err), 0);
    assert_true(pct == 0 && chips == 72);
    static const char *const bad[] = {"",     "auto:", "auto:0", "0",
                                      "1.5",  "50%%",  "x%",     "auto:5000",
                                      "12ab", "-3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err.msg[0] = '\0';
        if (fq_sim_size_parse(bad[i], &pct, &chips, &err) != FQ_EINVAL)
            fail_msg("\"%s\" was accepted", bad[i]);
        assert_non_null(strstr(err.msg, "--size-plan-a"));
    }
    /* The examples' headroom: 72 chips on 8-chip hosts -> 12 nodes. */
    assert_int_equal(fq_sim_plan_a_nodes(72, 8), 12);
    assert_int_equal(fq_sim_plan_a_nodes(1200, 8), 188);
    assert_int_equal(fq_sim_plan_a_nodes(16, 8), 3);
    assert_int_equal(fq_sim_plan_a_nodes(1, 8), 1);
}

/*
 * Two 8-chip jobs at once on Plan A alone: with the config's quota of 8
 * the second waits for the first (100 s); with --size-plan-a 16 the quota,
 * the pool and the on-demand stock allow both at once.
 */
static void run_quota(int64_t quota, int64_t *second_start)
{
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_yaml_parse(config_ab, strlen(config_ab), "c.yaml", &lim,
                                   &docs, &err),
                     0);
    struct fq_trace t;
    parse(&t, HDR "a,0,100,8,1,0,,\nb,0,100,8,1,0,,\n");
    struct fq_sim_options o;
    fq_sim_options_init(&o);
    o.config = &docs;
    o.trace = &t;
    o.policy = fq_sim_policy_find("plan-a-only");
    o.plan_a_quota = quota;
    struct fq_sim_result r;
    if (fq_sim_run(&o, &r, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(r.plan_a_quota, quota);
    assert_int_equal(r.jobs[1].outcome, FQ_SIM_FINISHED);
    *second_start = r.jobs[1].start_ms;
    fq_sim_result_release(&r);
    fq_trace_release(&t);
    fq_docs_release(&docs);
}

static void test_resized_plan_a(void **state)
{
    (void)state;
    struct fq_engine *e = fq_engine_new(NULL);
    bool ready =
        fq_engine_controller(e, "kueue") && fq_engine_controller(e, "capacity");
    fq_engine_free(e);
    if (!ready)
        skip();
    int64_t as_is = -1, resized = -1;
    run_quota(0, &as_is);
    run_quota(16, &resized);
    assert_true(as_is >= 100000);
    assert_true(resized < 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale_arrivals),
        cmocka_unit_test(test_offered_load),
        cmocka_unit_test(test_size_parse),
        cmocka_unit_test(test_resized_plan_a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
