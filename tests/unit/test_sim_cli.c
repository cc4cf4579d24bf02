/*
 * test_sim_cli.c - `flexq sim` end to end through its command function:
 * flags, errors, and the files --out writes.
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <ftw.h>

#include "cli.h"

static char dir[64];

static void write_text(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static bool exists(const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &st) == 0 && st.st_size > 0;
}

static int sim(int argc, const char **argv)
{
    return fq_cli_cmd_sim.fn(argc, (char **)argv);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/flexq-sim-test-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char cfg[256];
    snprintf(cfg, sizeof(cfg), "%s/examples/sim/kth-100.yaml",
             FLEXQ_SOURCE_DIR);
    FILE *in = fopen(cfg, "r");
    if (!in)
        return -1;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, in);
    buf[n] = '\0';
    fclose(in);
    write_text("c.yaml", buf);
    write_text("t.csv", "job_id,submit_s,duration_s,chips,hosts\n"
                        "a,0,600,8,1\n"
                        "b,60,1200,16,2\n"
                        "c,120,300,1,1\n");
    write_text("bad.csv", "job_id,submit_s,duration_s,chips,hosts\n"
                          "a,0,600,8,1\n"
                          "b,60,-5,16,2\n");
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    (void)state;
    return nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void test_flags(void **state)
{
    (void)state;
    const char *no_trace[] = {"sim", "--config", "x.yaml"};
    assert_int_equal(sim(3, no_trace), FQ_CLI_FAIL);
    const char *both[] = {"sim", "--config=x", "--trace=y", "--policy=kueue",
                          "--compare=kueue,flexq"};
    assert_int_equal(sim(5, both), FQ_CLI_FAIL);
    const char *bad_policy[] = {"sim", "--config", "x",   "--trace",
                                "y",   "--policy", "fifo"};
    assert_int_equal(sim(7, bad_policy), FQ_CLI_FAIL);
    const char *bad_map[] = {"sim", "--config", "x",         "--trace",
                             "y",   "--map",    "colour=red"};
    assert_int_equal(sim(7, bad_map), FQ_CLI_FAIL);
    const char *bad_seed[] = {"sim", "--config", "x",   "--trace",
                              "y",   "--seed",   "12ab"};
    assert_int_equal(sim(7, bad_seed), FQ_CLI_FAIL);
    const char *bad_scale[] = {"sim", "--config",         "x", "--trace",
                               "y",   "--scale-arrivals", "0"};
    assert_int_equal(sim(7, bad_scale), FQ_CLI_FAIL);
    const char *bad_size[] = {"sim", "--config",      "x",   "--trace",
                              "y",   "--size-plan-a", "half"};
    assert_int_equal(sim(7, bad_size), FQ_CLI_FAIL);
    const char *bad_jobs[] = {"sim", "--config", "x", "--trace",
                              "y",   "--jobs",   "0"};
    assert_int_equal(sim(7, bad_jobs), FQ_CLI_FAIL);
    const char *bad_fc[] = {"sim", "--config",    "x",   "--trace",
                            "y",   "--forecasts", "some"};
    assert_int_equal(sim(7, bad_fc), FQ_CLI_FAIL);
    const char *bad_guess[] = {"sim", "--config",      "x",   "--trace",
                               "y",   "--route-guess", "true"};
    assert_int_equal(sim(7, bad_guess), FQ_CLI_FAIL);
    const char *bad_ready[] = {"sim", "--config",     "x", "--trace",
                               "y",   "--pods-ready", "8d"};
    assert_int_equal(sim(7, bad_ready), FQ_CLI_FAIL);
    const char *unknown[] = {"sim", "--frobnicate"};
    assert_int_equal(sim(2, unknown), FQ_CLI_FAIL);
}

static void test_bad_trace_and_skip(void **state)
{
    (void)state;
    char cfg[128], bad[128], out[128];
    snprintf(cfg, sizeof(cfg), "%s/c.yaml", dir);
    snprintf(bad, sizeof(bad), "%s/bad.csv", dir);
    snprintf(out, sizeof(out), "%s/out-skip", dir);
    const char *strict[] = {"sim", "--config", cfg, "--trace", bad, "-q"};
    assert_int_equal(sim(6, strict), FQ_CLI_FAIL);
    const char *skip[] = {"sim",        "--config", cfg, "--trace", bad,   "-q",
                          "--skip-bad", "--out",    out, "-o",      "json"};
    assert_int_equal(sim(11, skip), FQ_CLI_OK);
    assert_true(exists("out-skip/summary.json"));
}

static void test_compare_writes_outputs(void **state)
{
    (void)state;
    char cfg[128], tr[128], out[128];
    snprintf(cfg, sizeof(cfg), "%s/c.yaml", dir);
    snprintf(tr, sizeof(tr), "%s/t.csv", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    const char *argv[] = {"sim",
                          "--config",
                          cfg,
                          "--trace",
                          tr,
                          "--compare",
                          "plan-a-only,flexq",
                          "--out",
                          out,
                          "--seed",
                          "7",
                          "--quiet"};
    assert_int_equal(sim(12, argv), FQ_CLI_OK);
    static const char *const files[] = {
        "out/summary.json",          "out/summary.txt",
        "out/jobs-plan-a-only.csv",  "out/jobs-flexq.csv",
        "out/wait-cdf.svg",          "out/queue.svg",
        "out/wait-cdf-tail.svg",     "out/report.html",
        "out/pools-plan-a-only.svg", "out/pools-flexq.svg"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (!exists(files[i]))
            fail_msg("%s was not written", files[i]);
}

/* --scale-arrivals and --size-plan-a reach the run and its summary. */
static void test_load_knobs(void **state)
{
    (void)state;
    char cfg[128], tr[128], out[128], path[160];
    snprintf(cfg, sizeof(cfg), "%s/c.yaml", dir);
    snprintf(tr, sizeof(tr), "%s/t.csv", dir);
    snprintf(out, sizeof(out), "%s/out-knobs", dir);
    const char *argv[] = {
        "sim", "--config",      cfg,    "--trace", tr,  "--scale-arrivals",
        "1.5", "--size-plan-a", "auto", "--out",   out, "--quiet"};
    assert_int_equal(sim(12, argv), FQ_CLI_OK);
    snprintf(path, sizeof(path), "%s/summary.json", out);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_non_null(strstr(buf, "\"arrival_scale\": 1.5"));
    /* 8 x 600 + 16 x 1200 + 1 x 300 = 24,300 chip-s over the 80 s window
     * the arrivals span at 1.5x: 303.75 chips, rounded up. */
    assert_non_null(strstr(buf, "\"plan_a_quota\": 304"));
}

/* --check-invariants holds every settle of every policy to flexq/check.h
 * and the run still succeeds (a broken invariant would end it with an
 * error naming it: test_check proves the checkers can fail). */
static void test_check_invariants(void **state)
{
    (void)state;
    char cfg[128], tr[128];
    snprintf(cfg, sizeof(cfg), "%s/c.yaml", dir);
    snprintf(tr, sizeof(tr), "%s/t.csv", dir);
    const char *argv[] = {"sim",
                          "--config",
                          cfg,
                          "--trace",
                          tr,
                          "--compare",
                          "plan-a-only,plan-b-only,kueue,flexq",
                          "--check-invariants",
                          "--quiet"};
    assert_int_equal(sim(9, argv), FQ_CLI_OK);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char bufs[2][65536];
    static int k;
    char *buf = bufs[k++ % 2];
    size_t n = fread(buf, 1, sizeof(bufs[0]) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A compare on one thread and on three gives the same bytes. */
static void test_parallel_same_bytes(void **state)
{
    (void)state;
    char cfg[128], tr[128], out[2][128], path[2][160];
    snprintf(cfg, sizeof(cfg), "%s/c.yaml", dir);
    snprintf(tr, sizeof(tr), "%s/t.csv", dir);
    const char *jobs[] = {"1", "3"};
    for (int k = 0; k < 2; k++) {
        snprintf(out[k], sizeof(out[k]), "%s/out-j%s", dir, jobs[k]);
        const char *argv[] = {"sim",
                              "--config",
                              cfg,
                              "--trace",
                              tr,
                              "--compare",
                              "plan-a-only,kueue,flexq",
                              "--jobs",
                              jobs[k],
                              "--out",
                              out[k],
                              "--quiet"};
        assert_int_equal(sim(12, argv), FQ_CLI_OK);
        snprintf(path[k], sizeof(path[k]), "%s/summary.json", out[k]);
    }
    const char *a = slurp(path[0]), *b = slurp(path[1]);
    assert_true(strlen(a) > 100);
    assert_string_equal(a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_bad_trace_and_skip),
        cmocka_unit_test(test_compare_writes_outputs),
        cmocka_unit_test(test_load_knobs),
        cmocka_unit_test(test_check_invariants),
        cmocka_unit_test(test_parallel_same_bytes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
