/*
 * test_logs.c - reading pod logs: tail, limits, the follow cursor, which
 * pod `logs job/NAME` means, and Ray's closing banner for a RayJob whose
 * submitter never printed it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/objstore.h"
#include "flexq/value.h"
#include "runner/logs.h"
#include "runner/runner.h"
#include "tmpdir_testlib.h"
#include "yaml_testlib.h"

static char dir[64];

static void write_log(const char *pod, const char *file, const char *text)
{
    char *d = fq_runner_pod_dir(dir, "default", pod);
    char *cmd[] = {(char *)"/bin/mkdir", (char *)"-p", d, NULL};
    testlib_run(cmd);
    char *path = fq_xasprintf("%s/%s", d, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(path);
    free(d);
}

static int setup(void **state)
{
    (void)state;
    testlib_mkdtemp(dir, sizeof(dir), "flexq-logs");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    testlib_rm_rf(dir);
    return 0;
}

static void test_tail_start(void **state)
{
    (void)state;
    const char *t = "a\nb\nc\n";
    size_t n = strlen(t);
    assert_string_equal(t + fq_logs_tail_start(t, n, 2), "b\nc\n");
    assert_string_equal(t + fq_logs_tail_start(t, n, 1), "c\n");
    assert_string_equal(t + fq_logs_tail_start(t, n, 0), "");
    assert_string_equal(t + fq_logs_tail_start(t, n, 9), t);
    assert_string_equal(t + fq_logs_tail_start(t, n, -1), t);
    const char *u = "a\nb";
    assert_string_equal(u + fq_logs_tail_start(u, 3, 1), "b");
}

static void test_pod_log_options(void **state)
{
    (void)state;
    write_log("p1", "log", "one\ntwo\nthree\n");
    write_log("p1", "log.1", "old\n");
    struct fq_logs_opts o;
    fq_logs_opts_init(&o);
    struct fq_buf b = FQ_BUF_INIT;
    int64_t size = 0;
    assert_int_equal(fq_logs_pod(dir, "default", "p1", &o, &b, &size, NULL), 0);
    assert_string_equal(fq_buf_str(&b), "one\ntwo\nthree\n");
    assert_int_equal(size, 14);
    fq_buf_reset(&b);
    o.tail_lines = 2;
    o.limit_bytes = 4;
    fq_logs_pod(dir, "default", "p1", &o, &b, NULL, NULL);
    assert_string_equal(fq_buf_str(&b), "ree\n");
    fq_buf_reset(&b);
    fq_logs_opts_init(&o);
    o.offset = 8; /* the follow cursor */
    fq_logs_pod(dir, "default", "p1", &o, &b, NULL, NULL);
    assert_string_equal(fq_buf_str(&b), "three\n");
    fq_buf_reset(&b);
    o.offset = 100; /* past the end: rotated, start again */
    fq_logs_pod(dir, "default", "p1", &o, &b, NULL, NULL);
    assert_string_equal(fq_buf_str(&b), "one\ntwo\nthree\n");
    fq_buf_reset(&b);
    fq_logs_opts_init(&o);
    o.previous = true;
    fq_logs_pod(dir, "default", "p1", &o, &b, NULL, NULL);
    assert_string_equal(fq_buf_str(&b), "old\n");
    struct fq_err err;
    assert_int_equal(fq_logs_pod(dir, "default", "nope", NULL, &b, NULL, &err),
                     FQ_ENOTFOUND);
    assert_non_null(strstr(err.msg, "has not started"));
    fq_buf_release(&b);
}

static void put(struct fq_objstore *s, const char *yaml, int64_t now)
{
    assert_int_equal(
        fq_objstore_create(s, testlib_yaml1(yaml), now, NULL, NULL, NULL), 0);
}

static void test_resolve_job_and_banner(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    put(s,
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: rj, "
        "namespace: default}\n",
        1000);
    put(s,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: rj-aaaaa, "
        "namespace: default, labels: {batch.kubernetes.io/job-name: rj}}\n",
        1764431040000);
    put(s,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: rj-bbbbb, "
        "namespace: default, labels: {batch.kubernetes.io/job-name: rj}}\n",
        1764431100000);
    put(s,
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj, "
        "namespace: default}\nstatus: {jobId: rayjob-tpu-v6e-dws-1-498t6, "
        "jobStatus: SUCCEEDED, endTime: '2026-03-20T03:59:51Z'}\n",
        1000);
    char *pod = NULL;
    assert_int_equal(fq_logs_resolve(s, "default", "job/rj", &pod, NULL), 0);
    assert_string_equal(pod, "rj-bbbbb"); /* the newest attempt */
    free(pod);
    assert_int_equal(fq_logs_resolve(s, "default", "rayjob/rj", &pod, NULL), 0);
    free(pod);
    struct fq_err err;
    assert_int_equal(fq_logs_resolve(s, "default", "job/ghost", &pod, &err),
                     FQ_ENOTFOUND);
    assert_int_equal(fq_logs_resolve(s, "default", "node/x", &pod, &err),
                     FQ_EINVAL);

    /* the submitter was killed before its banner: flexq adds Ray's */
    write_log("rj-bbbbb", "log", "Run Result: {}\n");
    struct fq_buf b = FQ_BUF_INIT;
    assert_int_equal(
        fq_logs_target(s, dir, "default", "job/rj", NULL, &b, NULL, NULL), 0);
    const char *want = "Run Result: {}\n"
                       "2026-03-20 03:59:51,000\tSUCC cli.py:65 -- "
                       "------------------------------------------\n"
                       "2026-03-20 03:59:51,000\tSUCC cli.py:66 -- "
                       "Job 'rayjob-tpu-v6e-dws-1-498t6' succeeded\n"
                       "2026-03-20 03:59:51,000\tSUCC cli.py:67 -- "
                       "------------------------------------------\n";
    assert_string_equal(fq_buf_str(&b), want);
    /* a log that has it already is left alone */
    write_log("rj-bbbbb", "log",
              "x\nT\tSUCC cli.py:66 -- Job 'rayjob-tpu-v6e-dws-1-498t6' "
              "succeeded\n");
    fq_buf_reset(&b);
    fq_logs_target(s, dir, "default", "job/rj", NULL, &b, NULL, NULL);
    assert_null(strstr(fq_buf_str(&b), "cli.py:65"));
    fq_buf_reset(&b);
    fq_logs_ray_banner(&b, "T", "j-1", "FAILED", "AppFailed: worker died");
    assert_non_null(strstr(fq_buf_str(&b), "T\tERR cli.py:66 -- Job 'j-1' "
                                           "failed\n"));
    assert_non_null(strstr(fq_buf_str(&b), "Status message: AppFailed: "
                                           "worker died"));
    fq_buf_release(&b);
    fq_objstore_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tail_start),
        cmocka_unit_test_setup_teardown(test_pod_log_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_job_and_banner, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
