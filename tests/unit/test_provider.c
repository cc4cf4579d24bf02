/*
 * test_provider.c - the exec provider's call (answers, errors, timeout) and
 * the local provider's Node.
 *
 * Provider scripts are small shell scripts written into a temporary
 * directory; each failure mode must come back as an error that names the
 * script and says what happened, and a script that hangs must be killed
 * at its timeout.
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
#include <time.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/quantity.h"
#include "flexq/value.h"
#include "provider.h"

static char dir[64];

static char *script(const char *name, const char *body)
{
    char *path = fq_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
    return path;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/flexq-prov-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char *cmd[] = {(char *)"/bin/rm", (char *)"-rf", dir, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        execv(cmd[0], cmd);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    return 0;
}

static struct fq_value *request(void)
{
    struct fq_value *r = fq_value_map();
    fq_map_set(r, "op", fq_value_str("list-nodes"));
    return r;
}

static void test_exec_answers(void **state)
{
    (void)state;
    /* echoes the op it was asked, proving stdin carried the request */
    char *ok =
        script("ok", "read req; op=$(echo \"$req\" | sed "
                     "'s/.*\"op\":\"\\([^\"]*\\)\".*/\\1/'); "
                     "echo \"{\\\"nodes\\\": [], \\\"op\\\": \\\"$op\\\"}\"");
    struct fq_value *req = request(), *resp = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_provider_exec_call(ok, req, 5000, &resp, &err), 0);
    assert_string_equal(fq_value_path_str(resp, "op", ""), "list-nodes");
    assert_int_equal(fq_value_len(fq_map_get(resp, "nodes")), 0);
    fq_value_free(resp);
    free(ok);
    fq_value_free(req);
}

static void expect_error(const char *name, const char *body, int64_t timeout,
                         int code, const char *needle)
{
    char *s = script(name, body);
    struct fq_value *req = request(), *resp = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_provider_exec_call(s, req, timeout, &resp, &err), code);
    assert_null(resp);
    if (!strstr(err.msg, needle))
        fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
    assert_non_null(strstr(err.msg, s)); /* names the script */
    fq_value_free(req);
    free(s);
}

static void test_exec_errors(void **state)
{
    (void)state;
    expect_error("err", "cat >/dev/null; echo '{\"error\": \"no quota\"}'",
                 5000, FQ_EPROVIDER, "no quota");
    expect_error("notjson", "cat >/dev/null; echo hello", 5000, FQ_EPROVIDER,
                 "did not answer a JSON object");
    expect_error("array", "cat >/dev/null; echo '[1]'", 5000, FQ_EPROVIDER,
                 "not an object");
    expect_error("exit3", "cat >/dev/null; echo 'gcloud: denied' >&2; exit 3",
                 5000, FQ_EPROVIDER, "exited with status 3: gcloud: denied");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    expect_error("hang", "sleep 30", 300, FQ_ETIMEOUT, "timed out after 300");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 10); /* killed, not waited for */
    struct fq_value *req = request(), *resp = NULL;
    struct fq_err err = {0};
    char *missing = fq_xasprintf("%s/missing", dir);
    assert_int_equal(fq_provider_exec_call(missing, req, 1000, &resp, &err),
                     FQ_EPROVIDER);
    assert_non_null(strstr(err.msg, "cannot be executed"));
    free(missing);
    fq_value_free(req);
}

static void test_local_node(void **state)
{
    (void)state;
    struct fq_local_machine m;
    fq_provider_local_probe(&m);
    assert_true(m.cpu_milli >= 1000);
    assert_true(m.memory_bytes > 0);
    assert_true(m.gpus >= 0);
    struct fq_value *n = fq_provider_local_node(&m, "default-pool");
    assert_string_equal(fq_value_path_str(n, "kind", ""), "Node");
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(n, "metadata.labels"),
                                   "cloud.google.com/gke-nodepool")),
        "default-pool");
    int64_t cap = 0, alloc = 0;
    assert_int_equal(
        fq_quantity_parse(fq_value_path_str(n, "status.capacity.cpu", ""),
                          FQ_Q_MILLI, &cap, NULL, NULL),
        0);
    assert_int_equal(
        fq_quantity_parse(fq_value_path_str(n, "status.allocatable.cpu", ""),
                          FQ_Q_MILLI, &alloc, NULL, NULL),
        0);
    assert_int_equal(cap, m.cpu_milli);
    assert_true(alloc <= cap && alloc > 0);
    const struct fq_value *c =
        fq_seq_at(fq_value_path(n, "status.conditions"), 0);
    assert_string_equal(fq_value_path_str(c, "status", ""), "True");
    fq_value_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exec_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_errors, setup, teardown),
        cmocka_unit_test(test_local_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
