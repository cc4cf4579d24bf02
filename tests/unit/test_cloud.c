/*
 * test_cloud.c - the sim provider's cloud model: defaults and time_scale,
 * stock schedules (stockouts), flex-start waits and limits, prices,
 * autoscaler timings, and refusal of bad models.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/cloud.h"
#include "flexq/engine.h"
#include "flexq/value.h"
#include "yaml_testlib.h"

static const char *model =
    "apiVersion: flexq.dev/v1alpha1\n"
    "kind: CapacityModel\n"
    "metadata: {name: sim}\n"
    "spec:\n"
    "  autoscaler: {scaleDownUnneededSeconds: 120, initialBackoffSeconds: "
    "60, maxBackoffSeconds: 300}\n"
    "  zones:\n"
    "  - name: us-east5-b\n"
    "    machineTypes:\n"
    "    - name: ct6e-standard-4t\n"
    "      bootSeconds: 90\n"
    "      onDemand:\n"
    "        hosts: 8\n"
    "        schedule: [{at: 3600, hosts: 0}, {at: 2h, hosts: 8}]\n"
    "      flexStart:\n"
    "        hosts: 16\n"
    "        waitSeconds: {min: 100, max: 200}\n"
    "        maxWaitSeconds: 3600\n"
    "        maxRunSeconds: 1h30m\n"
    "        bookingSeconds: 300\n"
    "      prices: {onDemand: \"10.00\", flexStart: \"4.00\"}\n"
    "    - name: a3-highgpu-8g\n"
    "      flexStart:\n"
    "        schedule: [{at: 600, hosts: 2}, {at: 1200, hosts: 6}]\n"
    "  - name: us-central1-a\n"
    "    machineTypes:\n"
    "    - name: g2-standard-4\n"
    "      onDemand: {hosts: 2}\n"
    "      flexStart: {waitSeconds: {mean: 600}}\n";

static void test_model(void **state)
{
    (void)state;
    struct fq_value *m = testlib_yaml1(model);
    struct fq_err err = {0};
    const int64_t t0 = 1000000;
    struct fq_cloud *c = fq_cloud_new(m, 1.0, t0, &err);
    assert_non_null(c);
    const char *t4 = "ct6e-standard-4t", *z = "us-east5-b";
    assert_int_equal(fq_cloud_boot_ms(c, t4, z), 90000);
    assert_int_equal(fq_cloud_max_wait_ms(c, t4, z), 3600000);
    assert_int_equal(fq_cloud_max_run_ms(c, t4, z), 5400000);
    assert_int_equal(fq_cloud_booking_ms(c, t4, z), 300000);
    assert_int_equal(fq_cloud_unneeded_ms(c), 120000);
    assert_int_equal(fq_cloud_backoff_ms(c, 1), 60000);
    assert_int_equal(fq_cloud_backoff_ms(c, 2), 120000);
    assert_int_equal(fq_cloud_backoff_ms(c, 3), 240000);
    assert_int_equal(fq_cloud_backoff_ms(c, 4), 300000);
    /* stock: 8, a stockout from 1 h to 2 h after the model's origin */
    int64_t until;
    assert_true(fq_cloud_ondemand_ok(c, t4, z, t0, 4, 4, &until));
    assert_false(fq_cloud_ondemand_ok(c, t4, z, t0, 8, 4, &until));
    assert_int_equal(until, FQ_NEVER);
    assert_false(fq_cloud_ondemand_ok(c, t4, z, t0 + 3600000, 0, 4, &until));
    assert_int_equal(until, t0 + 7200000);
    assert_true(fq_cloud_ondemand_ok(c, t4, z, t0 + 7200000, 0, 4, &until));
    /* a machine type without a row: unlimited; a row without onDemand:
     * none at all */
    assert_true(
        fq_cloud_ondemand_ok(c, "n2-standard-16", z, t0, 1000, 1000, NULL));
    assert_false(fq_cloud_ondemand_ok(c, "a3-highgpu-8g", z, t0, 0, 1, NULL));
    /* zone match, then any zone with the type */
    assert_false(fq_cloud_ondemand_ok(c, "g2-standard-4", "europe-west4-a", t0,
                                      2, 1, NULL));
    /* flex-start: uniform waits in [100, 200] s, deterministic per draw */
    int64_t w0 = fq_cloud_flex_wait_ms(c, t4, z, 0);
    int64_t w1 = fq_cloud_flex_wait_ms(c, t4, z, UINT64_MAX);
    assert_int_equal(w0, 100000);
    assert_true(w1 >= 199000 && w1 <= 200000);
    assert_int_equal(fq_cloud_flex_wait_ms(c, t4, z, 12345),
                     fq_cloud_flex_wait_ms(c, t4, z, 12345));
    assert_int_equal(fq_cloud_flex_stock(c, t4, z, t0), 16);
    /* a schedule of arrivals */
    assert_int_equal(fq_cloud_flex_stock(c, "a3-highgpu-8g", z, t0), 0);
    assert_int_equal(fq_cloud_flex_stock(c, "a3-highgpu-8g", z, t0 + 600000),
                     2);
    assert_int_equal(
        fq_cloud_flex_next_arrival(c, "a3-highgpu-8g", z, t0 + 600000),
        t0 + 1200000);
    assert_int_equal(fq_cloud_flex_wait_ms(c, "a3-highgpu-8g", z, 7), 0);
    /* exponential: mean 600 s */
    assert_int_equal(
        fq_cloud_flex_wait_ms(c, "g2-standard-4", "us-central1-a", 0), 0);
    assert_true(fq_cloud_flex_wait_ms(c, "g2-standard-4", "us-central1-a",
                                      UINT64_MAX / 2) > 300000);
    /* prices: the model's, else the catalog's */
    assert_float_equal(fq_cloud_price(c, t4, z, FQ_PROV_ON_DEMAND), 10.0, 0);
    assert_float_equal(fq_cloud_price(c, t4, z, FQ_PROV_FLEX_START), 4.0, 0);
    assert_float_equal(fq_cloud_price(c, t4, z, FQ_PROV_SPOT), 10.80 * 0.30,
                       1e-9);
    fq_cloud_free(c);
    fq_value_free(m);
}

static void test_defaults_and_scale(void **state)
{
    (void)state;
    struct fq_cloud *c = fq_cloud_new(NULL, 0.01, 0, NULL);
    assert_non_null(c);
    assert_int_equal(fq_cloud_booking_ms(c, "ct6e-standard-4t", "z"), 6000);
    assert_int_equal(fq_cloud_max_wait_ms(c, NULL, NULL), 7LL * 24 * 3600 * 10);
    assert_int_equal(fq_cloud_max_run_ms(c, NULL, NULL), 7LL * 24 * 3600 * 10);
    assert_int_equal(fq_cloud_unneeded_ms(c), 6000);
    assert_int_equal(fq_cloud_backoff_ms(c, 1), 3000);
    assert_int_equal(fq_cloud_backoff_ms(c, 10), 18000);
    assert_int_equal(fq_cloud_boot_ms(c, "x", "y"), 600);
    assert_true(fq_cloud_ondemand_ok(c, "ct6e-standard-4t", "z", 0, 1 << 20,
                                     1 << 20, NULL));
    fq_cloud_free(c);
    /* timeScale in the model divides what it says */
    struct fq_value *m =
        testlib_yaml1("kind: CapacityModel\nspec:\n  timeScale: 60\n"
                      "  zones: [{name: z, machineTypes: [{name: "
                      "ct6e-standard-4t, bootSeconds: 120}]}]\n");
    c = fq_cloud_new(m, 1.0, 0, NULL);
    assert_int_equal(fq_cloud_boot_ms(c, "ct6e-standard-4t", "z"), 2000);
    fq_cloud_free(c);
    fq_value_free(m);
}

/* Issue 20: one rule for every duration. A value written in the model is
 * scaled by the engine's time_scale as the defaults are, so a configured
 * 1 h flex-start wait stays below the scaled 7-day maximum and Plan B
 * still provisions; a model that cannot provision is detected. */
static void test_written_durations_scale(void **state)
{
    (void)state;
    struct fq_value *m = testlib_yaml1(
        "kind: CapacityModel\nspec:\n"
        "  autoscaler: {scaleDownUnneededSeconds: 600}\n"
        "  zones: [{name: z, machineTypes: [{name: ct6e-standard-4t, "
        "bootSeconds: 60, onDemand: {hosts: 0, schedule: [{at: 1000, "
        "hosts: 4}]}, flexStart: {hosts: 8, waitSeconds: 3600, "
        "bookingSeconds: 600, maxRunSeconds: 86400}}]}]\n");
    struct fq_cloud *c = fq_cloud_new(m, 0.001, 0, NULL);
    assert_non_null(c);
    const char *mt = "ct6e-standard-4t";
    assert_int_equal(fq_cloud_boot_ms(c, mt, "z"), 60);
    assert_int_equal(fq_cloud_flex_wait_ms(c, mt, "z", 1), 3600);
    assert_int_equal(fq_cloud_booking_ms(c, mt, "z"), 600);
    assert_int_equal(fq_cloud_max_run_ms(c, mt, "z"), 86400);
    assert_int_equal(fq_cloud_max_wait_ms(c, mt, "z"), 7LL * 24 * 3600);
    assert_int_equal(fq_cloud_unneeded_ms(c), 600);
    /* the schedule's `at` is a duration from the model's origin too */
    assert_false(fq_cloud_ondemand_ok(c, mt, "z", 999, 0, 1, NULL));
    assert_true(fq_cloud_ondemand_ok(c, mt, "z", 1000, 0, 1, NULL));
    char why[512];
    assert_false(fq_cloud_never_provisions(c, why, sizeof(why)));
    fq_cloud_free(c);
    fq_value_free(m);

    /* A wait longer than the maximum wait never provisions. */
    m = testlib_yaml1("kind: CapacityModel\nspec:\n"
                      "  zones: [{name: z, machineTypes: [{name: "
                      "ct6e-standard-4t, flexStart: {waitSeconds: 7200, "
                      "maxWaitSeconds: 3600}}]}]\n");
    c = fq_cloud_new(m, 0.01, 0, NULL);
    assert_true(fq_cloud_never_provisions(c, why, sizeof(why)));
    assert_non_null(strstr(why, "can never provision"));
    assert_non_null(strstr(why, "ct6e-standard-4t"));
    fq_cloud_free(c);
    fq_value_free(m);
}

static void test_bad_models(void **state)
{
    (void)state;

    static const struct {
        const char *spec, *want;
    } bad[] = {
        {"{zones: [{name: z, machineTypes: [{name: ct6e-standard-9t}]}]}",
         "unknown machine type \"ct6e-standard-9t\"; closest: ct6e-"},
        {"{zones: [{machineTypes: []}]}", "spec.zones[0].name: required"},
        {"{zones: [{name: z, machineTypes: [{name: g2-standard-4, "
         "bootSeconds: -5}]}]}",
         "bootSeconds: must be a duration"},
        {"{zones: [{name: z, machineTypes: [{name: g2-standard-4, onDemand: "
         "{hosts: -1}}]}]}",
         "hosts: must be a whole number >= 0"},
        {"{zones: [{name: z, machineTypes: [{name: g2-standard-4, onDemand: "
         "{schedule: [{at: 100, hosts: 1}, {at: 50, hosts: 2}]}}]}]}",
         "steps must be in time order"},
        {"{zones: [{name: z, machineTypes: [{name: g2-standard-4, flexStart: "
         "{waitSeconds: {min: 10, max: 5}}}]}]}",
         "max is below min"},
        {"{zones: [{name: z, machineTypes: [{name: g2-standard-4, flexStart: "
         "{waitSeconds: {distribution: gamma}}}]}]}",
         "\"gamma\" is not one of"},
        {"{zones: [{name: z, machineTypes: [{name: g2-standard-4, prices: "
         "{onDemand: \"ten\"}}]}]}",
         "prices.onDemand"},
        {"{timeScale: 0}", "timeScale: must be a number > 0"},
        {"{zones: [{name: z, machineTypes: [{name: g2-standard-4, onDemand: "
         "{schedule: [{at: 1h}]}}]}]}",
         "needs `at` and `hosts`"},
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char buf[1024];
        snprintf(buf, sizeof(buf), "kind: CapacityModel\nspec: %s\n",
                 bad[i].spec);
        struct fq_value *m = testlib_yaml1(buf);
        struct fq_err err = {0};
        assert_true(fq_cloud_validate(m, &err) < 0);
        if (!strstr(err.msg, bad[i].want))
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, err.msg,
                     bad[i].want);
        fq_value_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_defaults_and_scale),
        cmocka_unit_test(test_written_durations_scale),
        cmocka_unit_test(test_bad_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
