/*
 * yaml_testlib.h - one object from YAML text, for the tests that build
 * their objects from literals (test_cloud.c, test_kueue.c, test_logs.c,
 * test_nodepool.c, test_objects.c, test_runner.c, jobs_testlib.h).
 * A static inline function in a header so that each test stays one file.
 */
#ifndef FLEXQ_YAML_TESTLIB_H
#define FLEXQ_YAML_TESTLIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "flexq/value.h"

/* Parses text, which must hold exactly one document, and returns it
 * (owned); fails the test with the parser's message otherwise. */
static inline struct fq_value *testlib_yaml1(const char *text)
{
    struct fq_docs docs = {0};
    struct fq_limits lim = fq_limits_default();
    struct fq_err err = {0};
    if (fq_yaml_parse(text, strlen(text), "test", &lim, &docs, &err) != 0)
        fail_msg("yaml: %s\n%s", err.msg, text);
    assert_int_equal(docs.n, 1);
    struct fq_value *v = docs.items[0];
    docs.items[0] = NULL;
    docs.n = 0;
    fq_docs_release(&docs);
    return v;
}

#endif
