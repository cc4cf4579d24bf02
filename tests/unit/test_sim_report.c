/*
 * test_sim_report.c - the simulator's figures and writers, on hand-made
 * job records whose every figure can be worked out on paper.
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
#include "report.h"
#include "svg.h"

#define S(x) ((int64_t)(x)*1000)

/*
 * Four 1-chip jobs of 100 s that waited 0, 10, 20 and 30 s; one 16-chip job
 * of 2 h that waited 1 h; one refused 128-chip job; one expired 8-chip job;
 * one 2-chip job still pending. Pool "a" (Plan A, 8 chips/node, 10 USD an
 * hour) had 2 node-hours, 8 chip-hours busy; pool "b" (Plan B, 5 USD an
 * hour) had 4 node-hours, 8 chip-hours busy.
 */
static void make_result(struct fq_sim_result *r)
{
    fq_sim_result_init(r);
    snprintf(r->policy, sizeof(r->policy), "test");
    r->long_rule = "kept on Plan A";
    r->max_run_ms = S(604800);
    r->njobs = 8;
    r->jobs = fq_xcalloc(r->njobs, sizeof(*r->jobs));
    static const char *const ids[] = {"j0", "j1", "j2", "j,3",
                                      "j4", "j5", "j6", "j7"};
    for (int i = 0; i < 4; i++)
        r->jobs[i] = (struct fq_sim_jobrec){
            .id = ids[i],
            .submit_ms = S(100 * i),
            .duration_ms = S(100),
            .start_ms = S(100 * i + 10 * i),
            .finish_ms = S(100 * i + 10 * i + 100),
            .run_ms = S(100),
            .chips = 1,
            .hosts = 1,
            .pool = 0,
            .outcome = FQ_SIM_FINISHED,
            .segments = 1,
        };
    r->jobs[4] = (struct fq_sim_jobrec){
        .id = ids[4],
        .submit_ms = S(1000),
        .duration_ms = S(7200),
        .start_ms = S(4600),
        .finish_ms = S(11800),
        .run_ms = S(7200),
        .chips = 16,
        .hosts = 2,
        .pool = 1,
        .outcome = FQ_SIM_FINISHED,
        .segments = 1,
        .evictions = 1,
    };
    r->jobs[5] = (struct fq_sim_jobrec){.id = ids[5],
                                        .submit_ms = S(2000),
                                        .duration_ms = S(900000),
                                        .start_ms = -1,
                                        .finish_ms = -1,
                                        .chips = 128,
                                        .hosts = 16,
                                        .pool = -1,
                                        .outcome = FQ_SIM_REFUSED};
    r->jobs[6] = (struct fq_sim_jobrec){.id = ids[6],
                                        .submit_ms = S(3000),
                                        .duration_ms = S(700000),
                                        .start_ms = S(3100),
                                        .finish_ms = -1,
                                        .run_ms = S(604700),
                                        .chips = 8,
                                        .hosts = 1,
                                        .pool = 1,
                                        .outcome = FQ_SIM_EXPIRED,
                                        .segments = 1,
                                        .evictions = 1};
    r->jobs[7] = (struct fq_sim_jobrec){.id = ids[7],
                                        .submit_ms = S(4000),
                                        .duration_ms = S(50),
                                        .start_ms = -1,
                                        .finish_ms = -1,
                                        .chips = 2,
                                        .hosts = 1,
                                        .pool = -1,
                                        .outcome = FQ_SIM_UNFINISHED};
    r->npools = 2;
    r->pools = fq_xcalloc(2, sizeof(*r->pools));
    snprintf(r->pools[0].name, sizeof(r->pools[0].name), "on-demand-pool");
    snprintf(r->pools[0].flavor, sizeof(r->pools[0].flavor), "on-demand");
    r->pools[0].chips_per_node = 8;
    r->pools[0].price_per_node_hour = 10;
    r->pools[0].node_ms = S(7200);
    r->pools[0].chip_ms = S(7200) * 8.0;
    r->pools[0].busy_chip_ms = S(3600) * 8.0;
    r->pools[0].max_nodes = 2;
    snprintf(r->pools[1].name, sizeof(r->pools[1].name), "dws-pool");
    snprintf(r->pools[1].flavor, sizeof(r->pools[1].flavor), "dws");
    r->pools[1].queued = true;
    r->pools[1].chips_per_node = 8;
    r->pools[1].price_per_node_hour = 5;
    r->pools[1].node_ms = S(4 * 3600);
    r->pools[1].chip_ms = S(4 * 3600) * 8.0;
    r->pools[1].busy_chip_ms = S(3600) * 8.0;
    r->pools[1].max_nodes = 3;
    int32_t chips[2] = {16, 0}, used[2] = {8, 0};
    fq_sim_series_push(r, 0, 1, 0, chips, used);
    chips[1] = 24;
    used[1] = 16;
    fq_sim_series_push(r, S(86400), 3, 2, chips, used);
    r->end_ms = S(11800);
}

static void test_percentile(void **state)
{
    (void)state;
    const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assert_true(fq_sim_percentile(v, 10, 0.5) == 5);
    assert_true(fq_sim_percentile(v, 10, 0.95) == 10);
    assert_true(fq_sim_percentile(v, 10, 0.91) == 10);
    assert_true(fq_sim_percentile(v, 10, 0.90) == 9);
    assert_true(fq_sim_percentile(v, 10, 0) == 1);
    assert_true(fq_sim_percentile(v, 1, 0.99) == 1);
    assert_true(fq_sim_percentile(v, 0, 0.5) == 0);
    assert_int_equal(fq_sim_class_of(1), 1);
    assert_int_equal(fq_sim_class_of(8), 2);
    assert_int_equal(fq_sim_class_of(9), 3);
    assert_int_equal(fq_sim_class_of(64), 3);
    assert_int_equal(fq_sim_class_of(65), 4);
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void test_figures(void **state)
{
    (void)state;
    struct fq_sim_result r;
    make_result(&r);
    struct fq_sim_figures f;
    fq_sim_figures(&r, &f);
    assert_int_equal(f.jobs, 8);
    assert_int_equal(f.finished, 5);
    assert_int_equal(f.refused, 1);
    assert_int_equal(f.expired, 1);
    assert_int_equal(f.unfinished, 1);
    assert_int_equal(f.evictions, 2);
    /* all: waits 0, 10, 20, 30, 3600 */
    assert_int_equal(f.cls[0].n, 5);
    NEAR(f.cls[0].mean_s, 732);
    NEAR(f.cls[0].p50_s, 20);
    NEAR(f.cls[0].p90_s, 3600);
    NEAR(f.cls[0].p95_s, 3600);
    NEAR(f.cls[0].p99_s, 3600);
    NEAR(f.cls[0].max_s, 3600);
    /* 4 of 5 started within a minute; none waited over an hour */
    NEAR(f.cls[0].at_once, 0.8);
    NEAR(f.cls[0].over_1h, 0);
    /* slowdowns 1, 1.1, 1.2, 1.3 and (3600 + 7200) / 7200 = 1.5 */
    NEAR(f.cls[0].slowdown_mean, 6.1 / 5);
    assert_int_equal(f.cls[1].n, 4);
    NEAR(f.cls[1].mean_s, 15);
    NEAR(f.cls[1].p50_s, 10);
    NEAR(f.cls[1].p95_s, 30);
    NEAR(f.cls[1].slowdown_mean, 1.15);
    assert_int_equal(f.cls[2].n, 0);
    NEAR(f.cls[2].mean_s, 0);
    assert_int_equal(f.cls[3].n, 1);
    NEAR(f.cls[3].p50_s, 3600);
    assert_int_equal(f.cls[4].n, 0);
    NEAR(f.pool_cost[0], 20);
    NEAR(f.pool_cost[1], 20);
    NEAR(f.cost_total, 40);
    NEAR(f.pool_util[0], 0.5);
    NEAR(f.pool_util[1], 0.25);
    NEAR(f.chip_hours_delivered, 16);
    NEAR(f.cost_per_chip_hour, 2.5);
    fq_sim_result_release(&r);
}

static void test_writers(void **state)
{
    (void)state;
    struct fq_sim_result r;
    make_result(&r);
    struct fq_buf b = FQ_BUF_INIT;

    fq_sim_report_json(&r, &b);
    const char *js = fq_buf_str(&b);
    assert_non_null(strstr(js, "\"policy\": \"test\""));
    assert_non_null(strstr(js, "\"long_job_rule\": \"kept on Plan A\""));
    assert_non_null(strstr(js, "\"finished\": 5,"));
    assert_non_null(strstr(js, "\"expired_on_plan_b\": 1,"));
    assert_non_null(strstr(js, "\"all\": {\"jobs\": 5, \"mean\": 732, "
                               "\"p50\": 20, \"p90\": 3600, \"p95\": 3600, "
                               "\"p99\": 3600, \"max\": 3600, "
                               "\"slowdown_mean\": 1.22, \"at_once\": 0.8, "
                               "\"over_1h\": 0}"));
    assert_non_null(strstr(js, "\"utilisation\": 0.25, \"cost_usd\": 20}"));
    assert_non_null(strstr(js, "\"cost_per_chip_hour_usd\": 2.5\n}"));
    fq_buf_reset(&b);

    fq_sim_report_jobs_csv(&r, &b);
    const char *csv = fq_buf_str(&b);
    assert_non_null(strstr(csv, "job_id,submit_s,chips,hosts,duration_s,"
                                "start_s,finish_s,wait_s,slowdown,pool,"
                                "segments,evictions,outcome\n"
                                "j0,0.000,1,1,100.000,0.000,100.000,0.000,"
                                "1.000,on-demand-pool,1,0,finished\n"));
    assert_non_null(strstr(csv, "\"j,3\",300.000,1,1,100.000,330.000,"
                                "430.000,30.000,1.300,on-demand-pool,1,0,"
                                "finished\n"));
    assert_non_null(strstr(csv, "j5,2000.000,128,16,900000.000,,,,,,0,0,"
                                "refused\n"));
    assert_non_null(strstr(csv, "j6,3000.000,8,1,700000.000,3100.000,,,,"
                                "dws-pool,1,1,expired\n"));
    fq_buf_reset(&b);

    fq_sim_report_table(&r, &b);
    const char *tab = fq_buf_str(&b);
    assert_non_null(strstr(tab, "jobs 8  finished 5  refused 1  expired on "
                                "Plan B 1  unfinished 1  evictions 2"));
    assert_non_null(strstr(tab, "cost per chip-hour delivered: 2.5000 USD"));
    assert_non_null(strstr(tab, "dws-pool"));
    fq_buf_reset(&b);

    const struct fq_sim_result *rs[2] = {&r, &r};
    fq_sim_report_compare(rs, 2, &b);
    assert_non_null(strstr(fq_buf_str(&b), "jobs finished"));
    assert_non_null(strstr(fq_buf_str(&b), "util dws-pool (%)"));
    fq_buf_reset(&b);
    fq_sim_report_compare_json(rs, 2, &b);
    assert_non_null(strstr(fq_buf_str(&b), "{\"runs\": ["));
    fq_buf_reset(&b);

    fq_sim_plot_wait_cdf(rs, 2, &b);
    assert_memory_equal(fq_buf_str(&b), "<svg", 4);
    assert_non_null(strstr(fq_buf_str(&b), "<polyline"));
    assert_non_null(strstr(fq_buf_str(&b), "</svg>\n"));
    fq_buf_reset(&b);
    fq_sim_plot_pools(&r, &b);
    assert_non_null(strstr(fq_buf_str(&b), "dws-pool in use"));
    fq_buf_reset(&b);
    fq_sim_plot_queue(rs, 1, &b);
    assert_non_null(strstr(fq_buf_str(&b), "Jobs waiting over time"));
    fq_buf_release(&b);
    fq_sim_result_release(&r);
}

static void test_svg_escapes_and_empty(void **state)
{
    (void)state;
    struct fq_buf b = FQ_BUF_INIT;
    fq_svg_chart(&b, "a<b & \"c\"", "x", "y", NULL, 0, 0);
    assert_non_null(strstr(fq_buf_str(&b), "a&lt;b &amp; &quot;c&quot;"));
    assert_null(strstr(fq_buf_str(&b), "nan"));
    fq_buf_release(&b);
}

/* A log axis of seconds is ticked at landmarks that span the data. */
static void test_svg_time_axis(void **state)
{
    (void)state;
    struct fq_buf b = FQ_BUF_INIT;
    const double x[] = {30, 600, 7200}, y[] = {0.2, 0.5, 1};
    struct fq_svg_series s = {"w", x, y, 3, true};
    fq_svg_chart(&b, "t", "x", "y", &s, 1, FQ_SVG_LOGX_SECONDS);
    const char *svg = fq_buf_str(&b);
    assert_non_null(strstr(svg, ">10 s</text>"));
    assert_non_null(strstr(svg, ">1 min</text>"));
    assert_non_null(strstr(svg, ">1 h</text>"));
    assert_non_null(strstr(svg, ">1 d</text>"));
    assert_null(strstr(svg, ">1 s</text>"));  /* below the data's decade */
    assert_null(strstr(svg, ">10 d</text>")); /* above the axis end */
    assert_null(strstr(svg, "e+"));           /* no exponents */
    fq_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile),
        cmocka_unit_test(test_figures),
        cmocka_unit_test(test_writers),
        cmocka_unit_test(test_svg_escapes_and_empty),
        cmocka_unit_test(test_svg_time_axis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
