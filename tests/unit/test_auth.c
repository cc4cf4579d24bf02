/*
 * test_auth.c - flexqd's tokens (auth.c): the file format and its errors,
 * 401 for missing or unknown tokens, and the admin / developer rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/auth.h"

static char path[64];

static struct fq_auth *load(const char *text, int *rc, struct fq_err *err)
{
    snprintf(path, sizeof(path), "/tmp/flexq-test-auth-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct fq_auth *a = NULL;
    *rc = fq_auth_load(path, &a, err);
    unlink(path);
    return a;
}

static const char *const TOKENS =
    "# comment\n"
    "\n"
    "admin-secret-1   admin      alice\n"
    "dev-secret-22    developer  bob    team-a,team-b\n";

static void test_identify(void **state)
{
    (void)state;
    int rc;
    struct fq_err err = {0};
    struct fq_auth *a = load(TOKENS, &rc, &err);
    assert_int_equal(rc, 0);
    struct fq_principal who;
    assert_int_equal(fq_auth_identify(a, NULL, &who, &err), FQ_EUNAUTH);
    assert_non_null(strstr(err.msg, "FLEXQ_TOKEN"));
    assert_int_equal(fq_auth_identify(a, "Basic abc", &who, &err), FQ_EUNAUTH);
    assert_int_equal(fq_auth_identify(a, "Bearer admin-secret-", &who, &err),
                     FQ_EUNAUTH);
    assert_int_equal(fq_auth_identify(a, "Bearer admin-secret-12", &who, &err),
                     FQ_EUNAUTH);
    assert_int_equal(fq_auth_identify(a, "Bearer admin-secret-1", &who, &err),
                     0);
    assert_string_equal(who.user, "alice");
    assert_true(who.admin);
    assert_int_equal(fq_auth_identify(a, "Bearer dev-secret-22", &who, &err),
                     0);
    assert_string_equal(who.user, "bob");
    assert_false(who.admin);
    fq_auth_free(a);
}

static void test_rules(void **state)
{
    (void)state;
    int rc;
    struct fq_err err = {0};
    struct fq_auth *a = load(TOKENS, &rc, &err);
    struct fq_principal admin = {"alice", true}, dev = {"bob", false};
    assert_int_equal(fq_auth_allow(a, &admin, "create", FQ_KIND_CLUSTERQUEUE,
                                   "", NULL, &err),
                     0);

    static const struct {
        const char *verb;
        enum fq_kind kind;
        const char *ns;
        const char *sub;
        int want;
    } cases[] = {
        {"create", FQ_KIND_RAYJOB, "team-a", NULL, 0},
        {"delete", FQ_KIND_JOB, "team-b", NULL, 0},
        {"patch", FQ_KIND_WORKLOAD, "team-a", NULL, 0},
        {"create", FQ_KIND_CONFIGMAP, "team-a", NULL, 0},
        {"get", FQ_KIND_POD, "team-a", "log", 0},
        {"list", FQ_KIND_EVENT, "team-a", NULL, 0},
        {"watch", FQ_KIND_LOCALQUEUE, "team-b", NULL, 0},
        {"create", FQ_KIND_POD, "team-a", NULL, FQ_EFORBIDDEN},
        {"update", FQ_KIND_LOCALQUEUE, "team-a", NULL, FQ_EFORBIDDEN},
        {"patch", FQ_KIND_WORKLOAD, "team-a", "status", FQ_EFORBIDDEN},
        {"create", FQ_KIND_RAYJOB, "team-c", NULL, FQ_EFORBIDDEN},
        {"list", FQ_KIND_RAYJOB, NULL, NULL, FQ_EFORBIDDEN},
        {"get", FQ_KIND_CLUSTERQUEUE, "", NULL, FQ_EFORBIDDEN},
        {"create", FQ_KIND_RESOURCEFLAVOR, "", NULL, FQ_EFORBIDDEN},
        {"list", FQ_KIND_NODE, "", NULL, FQ_EFORBIDDEN},
        {"create", FQ_KIND_NODEPOOL, "", NULL, FQ_EFORBIDDEN},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int got = fq_auth_allow(a, &dev, cases[i].verb, cases[i].kind,
                                cases[i].ns, cases[i].sub, &err);
        if (got != cases[i].want)
            fail_msg("case %zu (%s %s in %s): got %d, want %d", i,
                     cases[i].verb, fq_kind_info(cases[i].kind)->plural,
                     cases[i].ns ? cases[i].ns : "(all)", got, cases[i].want);
        if (got)
            assert_non_null(strstr(err.msg, "bob"));
    }
    /* Without --tokens everything is allowed. */
    assert_int_equal(fq_auth_allow(NULL, &dev, "create", FQ_KIND_CLUSTERQUEUE,
                                   "", NULL, &err),
                     0);
    fq_auth_free(a);
}

static void test_bad_files(void **state)
{
    (void)state;

    static const struct {
        const char *text;
        const char *msg;
    } cases[] = {
        {"tok-123456 root carol\n", "neither admin nor developer"},
        {"tok-123456 developer dave\n", "needs namespaces"},
        {"tok-123456 admin\n", "expected `TOKEN ROLE USER"},
        {"short admin erin\n", "too short"},
        {"# nothing\n", "no tokens"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc;
        struct fq_err err = {0};
        struct fq_auth *a = load(cases[i].text, &rc, &err);
        assert_null(a);
        assert_true(rc < 0);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("\"%s\": message \"%s\" lacks \"%s\"", cases[i].text,
                     err.msg, cases[i].msg);
    }
    struct fq_auth *a = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_auth_load("/nonexistent/tokens", &a, &err), FQ_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identify),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_bad_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
