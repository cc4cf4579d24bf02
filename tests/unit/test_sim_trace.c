/*
 * test_sim_trace.c - the trace CSV reader and the --map column map.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "trace.h"

#define HDR                                                           \
 "job_id,submit_s,duration_s,chips,hosts,priority,queue,user,status," \
 "requested_s,orig_wait_s\n"

static int parse(struct fq_trace *t, const char *text, bool skip,
                 struct fq_err *err)
{
    fq_trace_init(t);
    return fq_trace_parse(t, text, strlen(text), "t.csv", skip, err);
}

static void test_good_rows(void **state)
{
    (void)state;
    struct fq_trace t;
    struct fq_err err = {0};
    const char *csv = HDR "a,0,60,8,1,2,LS,u1,completed,,0\r\n"
                          "b,1.5,3600,16,2,0,,,failed,7200,30.25\n"
                          "\n"
                          "\"c,x\",1.5,1,1,,,,,,,\n";
    assert_int_equal(parse(&t, csv, false, &err), 0);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.lines, 3);
    assert_string_equal(t.jobs[0].id, "a");
    assert_int_equal(t.jobs[0].submit_ms, 0);
    assert_int_equal(t.jobs[0].duration_ms, 60000);
    assert_int_equal(t.jobs[0].chips, 8);
    assert_int_equal(t.jobs[0].priority, 2);
    assert_string_equal(t.jobs[0].queue, "LS");
    assert_string_equal(t.jobs[0].user, "u1");
    assert_int_equal(t.jobs[0].requested_ms, -1);
    assert_int_equal(t.jobs[0].orig_wait_ms, 0);
    assert_int_equal(t.jobs[1].submit_ms, 1500);
    assert_int_equal(t.jobs[1].hosts, 2);
    assert_int_equal(t.jobs[1].requested_ms, 7200000);
    assert_int_equal(t.jobs[1].orig_wait_ms, 30250);
    assert_int_equal(t.jobs[1].line, 3);
    assert_string_equal(t.jobs[2].id, "c,x");
    assert_int_equal(t.jobs[2].hosts, 1);
    assert_int_equal(t.jobs[2].line, 5);
    fq_trace_release(&t);
}

static void test_columns_by_name(void **state)
{
    (void)state;
    struct fq_trace t;
    struct fq_err err = {0};
    assert_int_equal(
        parse(&t, "chips,duration_s,job_id,submit_s\n4,10,j,5\n", false, &err),
        0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.jobs[0].chips, 4);
    assert_int_equal(t.jobs[0].hosts, 1);
    assert_int_equal(t.jobs[0].submit_ms, 5000);
    fq_trace_release(&t);
}

struct bad_case {
    const char *row;
    const char *msg; /* expected error text */
};

static void test_bad_rows(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"a,0,0,1,1,0,,,,,\n", "t.csv:2:5: duration_s: must be a number of "
                               "seconds > 0, got \"0\""},
        {"a,-1,5,1,1,0,,,,,\n", "t.csv:2:3: submit_s: not a number"},
        {"a,0,5,x,1,0,,,,,\n", "t.csv:2:7: chips: must be a whole number"},
        {"a,0,5,2,3,0,,,,,\n", "t.csv:2:9: hosts: must be a whole number "
                               "from 1 to chips (2)"},
        {"a,0,5,2,1,0,,,,\n", "t.csv:2:1: expected 11 fields"},
        {",0,5,2,1,0,,,,,\n", "t.csv:2:1: job_id: must not be empty"},
        {"a,0,5,2,1,0.5,,,,,\n", "t.csv:2:11: priority"},
        {"\"a,0,5,2,1,0,,,,,\n", "t.csv:2:1: unterminated quoted field"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char csv[512];
        snprintf(csv, sizeof(csv), "%s%s", HDR, cases[i].row);
        struct fq_trace t;
        struct fq_err err = {0};
        assert_int_equal(parse(&t, csv, false, &err), FQ_EINVAL);
        if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s...\"", i, err.msg,
                     cases[i].msg);
        assert_int_equal(err.line, 2);
        fq_trace_release(&t);
    }
}

static void test_unsorted_and_duplicate(void **state)
{
    (void)state;
    struct fq_trace t;
    struct fq_err err = {0};
    assert_int_equal(
        parse(&t, HDR "a,10,5,1,1,0,,,,,\nb,9,5,1,1,0,,,,,\n", false, &err),
        FQ_EINVAL);
    assert_non_null(strstr(err.msg, "t.csv:3:3: submit_s: rows must be "
                                    "sorted"));
    fq_trace_release(&t);
    assert_int_equal(
        parse(&t, HDR "a,1,5,1,1,0,,,,,\na,2,5,1,1,0,,,,,\n", false, &err),
        FQ_EINVAL);
    assert_non_null(strstr(err.msg, "t.csv:3:1: job_id: duplicate job id"));
    fq_trace_release(&t);
}

static void test_skip_bad_counts(void **state)
{
    (void)state;
    struct fq_trace t;
    struct fq_err err = {0};
    const char *csv = HDR "a,0,5,1,1,0,,,,,\n"
                          "b,1,0,1,1,0,,,,,\n" /* bad duration */
                          "c,2,5,1,1,0,,,,,\n"
                          "a,3,5,1,1,0,,,,,\n" /* duplicate */
                          "d,1,5,1,1,0,,,,,\n" /* goes backwards */
                          "e,4,5,1,1,0,,,\n";  /* too few fields */
    assert_int_equal(parse(&t, csv, true, &err), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.lines, 6);
    assert_int_equal(t.skipped, 4);
    assert_int_equal(t.n_skip_errors, 4);
    assert_int_equal(t.skip_errors[0].line, 3);
    assert_int_equal(t.skip_errors[3].line, 7);
    assert_string_equal(t.jobs[1].id, "c");
    fq_trace_release(&t);
}

static void test_bad_header(void **state)
{
    (void)state;
    struct fq_trace t;
    struct fq_err err = {0};
    assert_int_equal(parse(&t, "job_id,submit_s,chips\n", false, &err),
                     FQ_EPARSE);
    assert_non_null(strstr(err.msg, "\"duration_s\" is missing"));
    fq_trace_release(&t);
    assert_int_equal(parse(&t, "", false, &err), FQ_EPARSE);
    assert_non_null(strstr(err.msg, "empty trace"));
    fq_trace_release(&t);
    assert_int_equal(
        parse(&t, "job_id,job_id,submit_s,duration_s,chips\n", true, &err),
        FQ_EPARSE);
    fq_trace_release(&t);
}

static void test_map(void **state)
{
    (void)state;
    struct fq_trace_map m;
    struct fq_err err = {0};
    fq_trace_map_init(&m);
    struct fq_trace_job j = {.id = "x",
                             .chips = 12,
                             .hosts = 3,
                             .queue = "q1",
                             .user = "",
                             .priority = 2};
    int64_t hosts, per;
    fq_trace_shape(&m, &j, &hosts, &per);
    assert_int_equal(hosts, 3);
    assert_int_equal(per, 4);
    assert_string_equal(fq_trace_queue(&m, &j, "user-queue"), "user-queue");
    assert_int_equal(fq_trace_priority(&m, &j), 2);

    assert_int_equal(fq_trace_map_parse(&m,
                                        "chips-per-host=8,queue=@queue,"
                                        "priority=0",
                                        &err),
                     0);
    fq_trace_shape(&m, &j, &hosts, &per);
    assert_int_equal(hosts, 2);
    assert_int_equal(per, 6);
    assert_string_equal(fq_trace_queue(&m, &j, "d"), "q1");
    assert_int_equal(fq_trace_priority(&m, &j), 0);
    assert_int_equal(fq_trace_map_parse(&m, "queue=@user", &err), 0);
    assert_string_equal(fq_trace_queue(&m, &j, "d"), "d");
    assert_int_equal(fq_trace_map_parse(&m, "queue=team-a", &err), 0);
    assert_string_equal(fq_trace_queue(&m, &j, "d"), "team-a");

    assert_int_equal(fq_trace_map_parse(&m, "chips-per-host=0", &err),
                     FQ_EINVAL);
    assert_int_equal(fq_trace_map_parse(&m, "colour=red", &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key \"colour\""));
    assert_int_equal(fq_trace_map_parse(&m, "queue", &err), FQ_EINVAL);
}

static void test_dev_trace_if_present(void **state)
{
    (void)state;
    struct fq_trace t;
    struct fq_err err = {0};
    fq_trace_init(&t);
    int rc = fq_trace_load(&t, "/work/shared/traces/kth_sp2_1996/dev.csv",
                           false, &err);
    if (rc == FQ_EIO) {
        fq_trace_release(&t);
        skip();
    }
    assert_int_equal(rc, 0);
    assert_int_equal(t.n, 16214);
    assert_int_equal(t.skipped, 0);
    fq_trace_release(&t);
    fq_trace_init(&t);
    assert_int_equal(fq_trace_load(&t, "/nonexistent/x.csv", false, &err),
                     FQ_EIO);
    fq_trace_release(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_rows),
        cmocka_unit_test(test_columns_by_name),
        cmocka_unit_test(test_bad_rows),
        cmocka_unit_test(test_unsorted_and_duplicate),
        cmocka_unit_test(test_skip_bad_counts),
        cmocka_unit_test(test_bad_header),
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_dev_trace_if_present),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
