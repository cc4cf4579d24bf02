/*
 * test_jsonpath.c - `flexq get -o jsonpath=` and `-o custom-columns=`
 * (src/cli/jsonpath.c): paths, ranges, literals, columns, errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/value.h"
#include "jsonpath.h"
#include "yaml_testlib.h"

static const char *list_yaml = "kind: List\n"
                               "items:\n"
                               "- metadata: {name: a, labels: {k.io/q: v}}\n"
                               "  spec: {nodeName: n1, n: 3}\n"
                               "- metadata: {name: b}\n"
                               "  spec: {list: [x, y]}\n";

static char *render(const struct fq_value *v, const char *t, int *rc)
{
    struct fq_buf b = FQ_BUF_INIT;
    struct fq_err err = {0};
    *rc = fq_jsonpath_render(t, v, &b, &err);
    char *s = strdup(*rc ? err.msg : fq_buf_str(&b));
    fq_buf_release(&b);
    return s;
}

static void expect(const struct fq_value *v, const char *t, const char *want)
{
    int rc;
    char *got = render(v, t, &rc);
    if (rc || strcmp(got, want))
        fail_msg("template %s: got \"%s\" (rc %d), want \"%s\"", t, got, rc,
                 want);
    free(got);
}

static void test_render(void **state)
{
    (void)state;
    struct fq_value *v = testlib_yaml1(list_yaml);
    expect(v, "{.items[0].metadata.name}", "a");
    expect(v, "{.items[*].metadata.name}", "a b");
    expect(v, "{.items[-1].metadata.name}", "b");
    expect(v, "{.items[0].metadata.labels['k.io/q']}", "v");
    expect(v, "{$.items[0].spec.n}", "3");
    expect(v, "{.items[1].spec.list}", "[\"x\",\"y\"]");
    expect(v, "{.items[5].metadata.name}", "");
    expect(v, "name={.items[0].metadata.name}", "name=a");
    expect(v,
           "{range .items[*]}{.metadata.name}{\"\\t\"}{.spec.nodeName}"
           "{\"\\n\"}{end}",
           "a\tn1\nb\t\n");
    expect(v, "{range .items[*]}[{range .spec.list[*]}{@}{end}]{end}",
           "[][xy]");
    int rc;
    const char *bad[] = {"{.items[0", "{range .items[*]}x",
                         "{end}",     "{.items[?(@.x)]}",
                         "{..name}",  "{.items[1:2]}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *msg = render(v, bad[i], &rc);
        if (rc != FQ_EINVAL || !strstr(msg, "jsonpath"))
            fail_msg("template %s: rc %d, msg %s", bad[i], rc, msg);
        free(msg);
    }
    fq_value_free(v);
}

static void test_columns(void **state)
{
    (void)state;
    struct fq_value *v = testlib_yaml1(list_yaml);
    const struct fq_value *items = fq_map_get(v, "items");
    const struct fq_value *objs[2] = {fq_seq_at(items, 0), fq_seq_at(items, 1)};
    struct fq_buf b = FQ_BUF_INIT;
    struct fq_err err = {0};
    assert_int_equal(
        fq_jsonpath_columns("NAME:.metadata.name,NODE:{.spec.nodeName},"
                            "L:.spec.list[*]",
                            objs, 2, true, &b, &err),
        0);
    assert_string_equal(fq_buf_str(&b), "NAME   NODE     L\n"
                                        "a      n1       <none>\n"
                                        "b      <none>   x,y\n");
    fq_buf_reset(&b);
    assert_int_equal(fq_jsonpath_columns("NAME", objs, 2, true, &b, &err),
                     FQ_EINVAL);
    assert_non_null(strstr(err.msg, "HEADER:PATH"));
    fq_buf_release(&b);
    fq_value_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
