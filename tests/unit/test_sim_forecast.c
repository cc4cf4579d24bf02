/*
 * test_sim_forecast.c - start forecasts made during a simulation: each
 * sampled job is forecast at its submission with the estimator, from the
 * run-time guesses of the history, and the report counts how many held.
 *
 * Plan A alone (one 8-GPU node), two 8-chip jobs of 1,000 s at 0 and 10 s:
 * the second really starts at 1,000 s (waits 990 s). With true run times
 * the forecast says so; with nothing in the history the first job is
 * guessed at an hour, and the forecast (about 3,590 s) misses.
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
#include "trace.h"

#include "planab_testlib.h"

#define HDR "job_id,submit_s,duration_s,chips,hosts,priority,queue,user\n"

static bool engine_ready(void)
{
    struct fq_engine *e = fq_engine_new(NULL);
    bool ok =
        fq_engine_controller(e, "kueue") && fq_engine_controller(e, "capacity");
    fq_engine_free(e);
    return ok;
}

static void run(bool oracle, size_t forecasts, struct fq_sim_result *r,
                struct fq_sim_figures *f)
{
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_yaml_parse(config_ab, strlen(config_ab), "c.yaml", &lim,
                                   &docs, &err),
                     0);
    struct fq_trace t;
    fq_trace_init(&t);
    const char *csv = HDR "a,0,1000,8,1,0,,u1\nb,10,1000,8,1,0,,u1\n";
    assert_int_equal(fq_trace_parse(&t, csv, strlen(csv), "t.csv", false, &err),
                     0);
    struct fq_sim_options o;
    fq_sim_options_init(&o);
    o.config = &docs;
    o.trace = &t;
    o.policy = fq_sim_policy_find("plan-a-only");
    o.forecasts = forecasts;
    o.forecast_seeds = 2;
    o.forecast_oracle = oracle;
    if (fq_sim_run(&o, r, &err))
        fail_msg("%s", err.msg);
    fq_sim_figures(r, f);
    fq_trace_release(&t);
    fq_docs_release(&docs);
}

static void test_oracle_holds(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_sim_result r;
    struct fq_sim_figures f;
    run(true, FQ_SIM_FORECAST_ALL, &r, &f);
    assert_int_equal(r.nfc, 2);
    assert_int_equal(r.fc[1].job, 1);
    assert_int_equal(r.fc[1].ahead, 1);
    assert_true(r.fc[1].p50_ms >= 985000 && r.fc[1].p50_ms <= 995000);
    assert_int_equal(r.jobs[1].start_ms, 1000000);
    assert_int_equal(f.fc.n, 2);
    assert_int_equal(f.fc.band, 2);
    assert_int_equal(f.fc.waited, 1);
    assert_int_equal(f.fc.waited_band, 1);
    fq_sim_result_release(&r);
}

static void test_guess_misses(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_sim_result r;
    struct fq_sim_figures f;
    run(false, FQ_SIM_FORECAST_ALL, &r, &f);
    assert_int_equal(r.nfc, 2);
    /* The first job, guessed at the default hour, holds the node. */
    assert_true(r.fc[1].p50_ms > 3500000);
    assert_int_equal(f.fc.waited, 1);
    assert_int_equal(f.fc.waited_band, 0);
    assert_int_equal(f.fc.conf_n[0], 1); /* low: a default guess ahead */
    struct fq_buf b = FQ_BUF_INIT;
    fq_sim_report_json(&r, &b);
    assert_non_null(strstr(fq_buf_str(&b), "\"forecasts\": {\"jobs\": 2, "));
    fq_buf_release(&b);
    fq_sim_result_release(&r);
}

/* Off: no forecasts, and nothing about them in the summary. */
static void test_off(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_sim_result r;
    struct fq_sim_figures f;
    run(false, 0, &r, &f);
    assert_int_equal(r.nfc, 0);
    struct fq_buf b = FQ_BUF_INIT;
    fq_sim_report_json(&r, &b);
    assert_null(strstr(fq_buf_str(&b), "forecasts"));
    fq_buf_release(&b);
    fq_sim_result_release(&r);
}

/*
 * --route-b-over 1000 s: the first job has no history (a default guess
 * routes nothing) and runs on Plan A; it ran 2,000 s, so u1's next job is
 * guessed long and goes to Plan B although Plan A is free, and so does
 * u2's (no runs of its own, but its queue's jobs of its size ran long).
 */
static void test_route_long_to_b(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_yaml_parse(config_ab, strlen(config_ab), "c.yaml", &lim,
                                   &docs, &err),
                     0);
    struct fq_trace t;
    fq_trace_init(&t);
    const char *csv = HDR "a,0,2000,8,1,0,,u1\nb,3000,100,8,1,0,,u1\n"
                          "c,3000,100,8,1,0,,u2\n";
    assert_int_equal(fq_trace_parse(&t, csv, strlen(csv), "t.csv", false, &err),
                     0);
    struct fq_sim_options o;
    fq_sim_options_init(&o);
    o.config = &docs;
    o.trace = &t;
    o.policy = fq_sim_policy_find("flexq");
    o.route_b_ms = 1000000;
    struct fq_sim_result r;
    if (fq_sim_run(&o, &r, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(r.routed_b, 2);
    assert_true(r.jobs[0].pool >= 0 && !r.pools[r.jobs[0].pool].queued);
    assert_int_equal(r.jobs[0].start_ms, 0);
    for (int i = 1; i <= 2; i++) {
        assert_true(r.jobs[i].pool >= 0 && r.pools[r.jobs[i].pool].queued);
        assert_true(r.jobs[i].start_ms >= 3600000); /* the 600 s request */
    }
    fq_sim_result_release(&r);
    fq_trace_release(&t);
    fq_docs_release(&docs);
}

/* --long-jobs split-a: a 4,000 s job against a 3,000 s max run runs in
 * segments of 1,500 s, all on Plan A. */
static void test_split_on_a(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_yaml_parse(config_ab, strlen(config_ab), "c.yaml", &lim,
                                   &docs, &err),
                     0);
    struct fq_trace t;
    fq_trace_init(&t);
    const char *csv = HDR "a,0,4000,8,1,0,,u1\n";
    assert_int_equal(fq_trace_parse(&t, csv, strlen(csv), "t.csv", false, &err),
                     0);
    struct fq_sim_options o;
    fq_sim_options_init(&o);
    o.config = &docs;
    o.trace = &t;
    o.policy = fq_sim_policy_find("flexq");
    assert_int_equal(fq_sim_long_rule_parse("split-a", &o.long_rule), 0);
    o.long_rule_set = true;
    struct fq_sim_result r;
    if (fq_sim_run(&o, &r, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(r.long_rule,
                        "split into checkpointed segments on Plan A");
    assert_int_equal(r.jobs[0].outcome, FQ_SIM_FINISHED);
    assert_int_equal(r.jobs[0].segments, 3);
    assert_true(r.jobs[0].pool >= 0 && !r.pools[r.jobs[0].pool].queued);
    assert_int_equal(r.jobs[0].run_ms, 4000000);
    for (size_t p = 0; p < r.npools; p++)
        if (r.pools[p].queued)
            assert_true(r.pools[p].busy_chip_ms == 0);
    fq_sim_result_release(&r);
    fq_trace_release(&t);
    fq_docs_release(&docs);
}

/*
 * --route-b-area 0.1 (0.8 chip-hours against Plan A's quota of 8): u1's
 * first job has no history and runs on Plan A for 4,000 s; then its 8-chip
 * job is guessed at 4,000 s (8.9 chip-hours) and goes to Plan B, whose
 * whole nodes cost 18 USD/h against Plan A's 36 for the same 8 chips. Its
 * 1-chip job (guessed 1.1 chip-hours) would cost 18 USD/h alone on a flex
 * node against 4.5 on Plan A, so it stays on Plan A and starts at once.
 * With the rule off (0) nothing is routed and e waits for b on Plan A.
 */
static void test_route_by_area(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_yaml_parse(config_ab, strlen(config_ab), "c.yaml", &lim,
                                   &docs, &err),
                     0);
    struct fq_trace t;
    fq_trace_init(&t);
    const char *csv = HDR "a,0,4000,8,1,0,,u1\nb,5000,100,8,1,0,,u1\n"
                          "e,5000,100,1,1,0,,u1\n";
    assert_int_equal(fq_trace_parse(&t, csv, strlen(csv), "t.csv", false, &err),
                     0);
    for (int on = 0; on <= 1; on++) {
        struct fq_sim_options o;
        fq_sim_options_init(&o);
        o.config = &docs;
        o.trace = &t;
        o.policy = fq_sim_policy_find("flexq");
        o.route_b_area_set = true;
        o.route_b_area = on ? 0.1 : 0;
        struct fq_sim_result r;
        if (fq_sim_run(&o, &r, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(r.routed_b, on ? 1 : 0);
        assert_true(r.jobs[0].pool >= 0 && !r.pools[r.jobs[0].pool].queued);
        assert_true(r.jobs[1].pool >= 0);
        assert_true(r.pools[r.jobs[1].pool].queued == (on == 1));
        if (on)
            assert_true(r.jobs[1].start_ms >= 5600000); /* the 600 s wait */
        /* e stays on Plan A: at once when b went to Plan B, else after
         * b's 100 s there. */
        assert_true(r.jobs[2].pool >= 0 && !r.pools[r.jobs[2].pool].queued);
        assert_int_equal(r.jobs[2].start_ms, on ? 5000000 : 5100000);
        fq_sim_result_release(&r);
    }
    fq_trace_release(&t);
    fq_docs_release(&docs);
}

/* --route-guess: u1's first run used a third of its 300 s limit (100 s;
 * that limit, 2,400 chip-s, is under the threshold of 0.1 x 8 chips x
 * 1 h = 2,880, so it stays on Plan A); its next job asks for 10,000 s.
 * The last runs guess 100 s (800 chip-s); the share guesses 3,333 s
 * (26,667 chip-s) and routes it. flexq's default is the share; Kueue's
 * policy never routes and leaves waitForPodsReady off. */
static void test_route_guess(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_yaml_parse(config_ab, strlen(config_ab), "c.yaml", &lim,
                                   &docs, &err),
                     0);
    struct fq_trace t;
    fq_trace_init(&t);
    const char *csv = "job_id,submit_s,duration_s,chips,hosts,priority,queue,"
                      "user,requested_s\n"
                      "a,0,100,8,1,0,,u1,300\nb,500,1000,8,1,0,,u1,10000\n";
    assert_int_equal(fq_trace_parse(&t, csv, strlen(csv), "t.csv", false, &err),
                     0);
    enum fq_sim_route_guess g;
    assert_int_equal(fq_sim_route_guess_parse("share", &g), 0);
    assert_int_equal(g, FQ_SIM_GUESS_SHARE);
    assert_int_equal(fq_sim_route_guess_parse("best", &g), FQ_EINVAL);
    assert_int_equal(fq_sim_policy_find("flexq")->route_guess,
                     FQ_SIM_GUESS_SHARE);
    assert_int_equal(fq_sim_policy_find("kueue")->pods_ready_ms, 0);
    assert_true(fq_sim_policy_find("flexq")->pods_ready_ms > 0);
    for (int share = 0; share <= 1; share++) {
        struct fq_sim_options o;
        fq_sim_options_init(&o);
        o.config = &docs;
        o.trace = &t;
        o.policy = fq_sim_policy_find("flexq");
        o.route_b_area_set = true;
        o.route_b_area = 0.1;
        o.route_guess_set = true;
        o.route_guess = share ? FQ_SIM_GUESS_SHARE : FQ_SIM_GUESS_LAST;
        struct fq_sim_result r;
        if (fq_sim_run(&o, &r, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(r.routed_b, share);
        assert_true(r.jobs[1].pool >= 0);
        assert_true(r.pools[r.jobs[1].pool].queued == (share == 1));
        assert_int_equal(r.jobs[1].outcome, FQ_SIM_FINISHED);
        assert_int_equal(r.jobs[0].start_ms, 0);
        assert_int_equal(r.jobs[1].start_ms, share ? 1100000 : 500000);
        fq_sim_result_release(&r);
    }
    fq_trace_release(&t);
    fq_docs_release(&docs);
}

/* --segment 1000 s: the 4,000 s job of test_split_on_a runs in four
 * segments of 1,000 s on Plan A instead of three of 1,500 s; a segment
 * longer than the default (Plan B's max run less its margin) changes
 * nothing. */
static void test_segment(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_yaml_parse(config_ab, strlen(config_ab), "c.yaml", &lim,
                                   &docs, &err),
                     0);
    struct fq_trace t;
    fq_trace_init(&t);
    const char *csv = HDR "a,0,4000,8,1,0,,u1\n";
    assert_int_equal(fq_trace_parse(&t, csv, strlen(csv), "t.csv", false, &err),
                     0);
    static const int64_t seg[] = {1000000, 86400000};
    static const int want[] = {4, 3};
    for (int i = 0; i < 2; i++) {
        struct fq_sim_options o;
        fq_sim_options_init(&o);
        o.config = &docs;
        o.trace = &t;
        o.policy = fq_sim_policy_find("flexq");
        assert_int_equal(fq_sim_long_rule_parse("split-a", &o.long_rule), 0);
        o.long_rule_set = true;
        o.segment_set = true;
        o.segment_ms = seg[i];
        struct fq_sim_result r;
        if (fq_sim_run(&o, &r, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(r.jobs[0].outcome, FQ_SIM_FINISHED);
        assert_int_equal(r.jobs[0].segments, want[i]);
        assert_int_equal(r.jobs[0].run_ms, 4000000);
        assert_true(r.jobs[0].pool >= 0 && !r.pools[r.jobs[0].pool].queued);
        fq_sim_result_release(&r);
    }
    fq_trace_release(&t);
    fq_docs_release(&docs);
}

static void test_switches(void **state)
{
    (void)state;
    struct fq_policy p = fq_policy_default();
    struct fq_err err = {0};
    assert_int_equal(fq_sim_switches_apply("migrate=off,admissions=1,"
                                           "cycle-ms=100,cooldown=off,"
                                           "stockout-fallback=off",
                                           &p, &err),
                     0);
    struct fq_policy k = fq_policy_kueue();
    assert_int_equal(p.max_admissions_per_cq_per_cycle,
                     k.max_admissions_per_cq_per_cycle);
    assert_true(p.migrate_to_preferred_flavor == k.migrate_to_preferred_flavor);
    assert_true(p.cycle_ms == k.cycle_ms);
    assert_false(p.flavor_failure_cooldown);
    assert_false(p.stockout_fallback);
    static const char *const bad[] = {"migrate", "migrate=maybe", "colour=red",
                                      "admissions=-1", "cycle-ms=x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (fq_sim_switches_apply(bad[i], &p, &err) != FQ_EINVAL)
            fail_msg("\"%s\" was accepted", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_holds),
        cmocka_unit_test(test_guess_misses),
        cmocka_unit_test(test_off),
        cmocka_unit_test(test_route_long_to_b),
        cmocka_unit_test(test_switches),
        cmocka_unit_test(test_split_on_a),
        cmocka_unit_test(test_route_by_area),
        cmocka_unit_test(test_segment),
        cmocka_unit_test(test_route_guess),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
