/*
 * test_labelsel.c - label and field selectors of the API (labelsel.c):
 * every operator, combinations, syntax errors, and field paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/labelsel.h"
#include "flexq/value.h"

static struct fq_value *obj(const char *json)
{
    struct fq_value *v = NULL;
    struct fq_err err = {0};
    if (fq_json_parse(json, strlen(json), "t", NULL, &v, &err))
        fail_msg("bad fixture: %s", err.msg);
    return v;
}

static bool match(const char *sel, bool field, const struct fq_value *o)
{
    struct fq_labelsel *s = NULL;
    struct fq_err err = {0};
    if (fq_labelsel_parse(sel, field, &s, &err))
        fail_msg("parse \"%s\": %s", sel, err.msg);
    bool m = fq_labelsel_match(s, o);
    fq_labelsel_free(s);
    return m;
}

static void test_labels(void **state)
{
    (void)state;
    struct fq_value *o = obj("{\"metadata\":{\"name\":\"a\",\"labels\":"
                             "{\"team\":\"x\",\"tier\":\"gold\","
                             "\"kueue.x-k8s.io/queue-name\":\"user-queue\"}}}");

    static const struct {
        const char *sel;
        bool want;
    } cases[] = {
        {"", true},
        {"team=x", true},
        {"team==x", true},
        {"team=y", false},
        {"team!=y", true},
        {"team!=x", false},
        {"missing!=x", true},
        {"tier", true},
        {"missing", false},
        {"!missing", true},
        {"!tier", false},
        {"team in (x,y)", true},
        {"team in (y, z)", false},
        {"team notin (y,z)", true},
        {"team notin (x)", false},
        {"team=x,tier=gold", true},
        {"team=x,tier=silver", false},
        {"team in (x,y),!missing,tier", true},
        {"kueue.x-k8s.io/queue-name=user-queue", true},
        {" team = x ", true},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (match(cases[i].sel, false, o) != cases[i].want)
            fail_msg("\"%s\" should %smatch", cases[i].sel,
                     cases[i].want ? "" : "not ");
    struct fq_value *bare = obj("{\"metadata\":{\"name\":\"b\"}}");
    assert_false(match("team=x", false, bare));
    assert_true(match("!team", false, bare));
    assert_true(fq_labelsel_match(NULL, bare));
    fq_value_free(bare);
    fq_value_free(o);
}

static void test_fields(void **state)
{
    (void)state;
    struct fq_value *o =
        obj("{\"metadata\":{\"name\":\"ev1\",\"namespace\":\"default\"},"
            "\"involvedObject\":{\"kind\":\"Workload\",\"name\":\"wl\"},"
            "\"count\":3,\"spec\":{\"suspend\":true}}");
    assert_true(match("metadata.name=ev1", true, o));
    assert_false(match("metadata.name=ev2", true, o));
    assert_true(
        match("involvedObject.name=wl,involvedObject.kind=Workload", true, o));
    assert_false(
        match("involvedObject.name=wl,involvedObject.kind=Pod", true, o));
    assert_true(match("count=3", true, o));
    assert_true(match("spec.suspend=true", true, o));
    assert_true(match("metadata.namespace!=kube-system", true, o));
    struct fq_labelsel *s = NULL;
    assert_int_equal(fq_labelsel_parse("metadata.name=x,a!=b", true, &s, NULL),
                     0);
    assert_string_equal(fq_labelsel_equals(s, "metadata.name"), "x");
    assert_null(fq_labelsel_equals(s, "a"));
    fq_labelsel_free(s);
    fq_value_free(o);
}

static void test_errors(void **state)
{
    (void)state;
    static const char *const bad_labels[] = {
        "=x", "team in (x", "team foo (x)", "a b", "!", "team=x,,=y",
    };
    for (size_t i = 0; i < sizeof(bad_labels) / sizeof(bad_labels[0]); i++) {
        struct fq_labelsel *s = (struct fq_labelsel *)&s;
        struct fq_err err = {0};
        int rc = fq_labelsel_parse(bad_labels[i], false, &s, &err);
        if (rc != FQ_EPARSE)
            fail_msg("\"%s\" should not parse", bad_labels[i]);
        assert_non_null(strstr(err.msg, "invalid label selector"));
    }
    struct fq_labelsel *s = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_labelsel_parse("metadata.name", true, &s, &err),
                     FQ_EPARSE);
    assert_non_null(strstr(err.msg, "invalid field selector"));
    char big[5000];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(fq_labelsel_parse(big, false, &s, &err), FQ_ELIMIT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
