/*
 * test_secret.c - v1 Secret: base64 as Go's StdEncoding, the validator's
 * rules (objects_core.c) and what fq_secret_defaults does on write
 * (stringData merged, type Opaque, immutable type and data).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/base64.h"
#include "flexq/buf.h"
#include "flexq/err.h"
#include "flexq/objects.h"
#include "flexq/value.h"
#include "yaml_testlib.h"

static void test_base64(void **state)
{
    (void)state;

    static const struct {
        const char *plain, *b64;
    } ok[] = {{"", ""},
              {"f", "Zg=="},
              {"fo", "Zm8="},
              {"foo", "Zm9v"},
              {"foob", "Zm9vYg=="},
              {"fooba", "Zm9vYmE="},
              {"foobar", "Zm9vYmFy"},
              {"\xff\xfe", "//4="}};

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct fq_buf b = FQ_BUF_INIT;
        fq_base64_encode(&b, ok[i].plain, strlen(ok[i].plain));
        assert_string_equal(fq_buf_str(&b), ok[i].b64);
        fq_buf_reset(&b);
        long n = fq_base64_decode(&b, ok[i].b64, NULL);
        assert_int_equal(n, (long)strlen(ok[i].plain));
        assert_memory_equal(b.data, ok[i].plain, (size_t)n);
        fq_buf_release(&b);
    }
    /* newlines are skipped, as Go does */
    assert_int_equal(fq_base64_decode(NULL, "Zm9v\nYmFy\r\n", NULL), 6);

    /* refused, with the offset Go reports */
    static const struct {
        const char *in;
        size_t at;
    } bad[] = {{"Zm9*", 3},     {"Zg", 0},    {"Zg=", 3},  {"Z===", 1},
               {"Zg==Zg==", 4}, {"Zm9vY", 4}, {"=Zm9", 0}, {"Zm=v", 2},
               {"1", 0},        {"Z=", 1},    {"Z*", 1},   {"Zm9vYm*", 6}};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t at = 99;
        assert_int_equal(fq_base64_decode(NULL, bad[i].in, &at), -1);
        if (at != bad[i].at)
            print_error("%s: at %zu, want %zu\n", bad[i].in, at, bad[i].at);
        assert_int_equal(at, bad[i].at);
    }
}

#define HEAD "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"

static const struct {
    const char *name, *yaml, *path, *text;
} rules[] = {
    {"ok", HEAD "data: {a: YQ==, b.c_d-e: ''}\nstringData: {x: y}\n", NULL,
     NULL},
    {"empty", HEAD, NULL, NULL},
    {"bad base64", HEAD "data: {a: 'no*t'}\n", "data.a",
     "illegal base64 data at input byte 2"},
    {"bad key", HEAD "data: {'a/b': YQ==}\n", "data", "invalid key \"a/b\""},
    {"bad stringData key", HEAD "stringData: {'a b': x}\n", "stringData",
     "invalid key \"a b\""},
    {"stringData not a string", HEAD "stringData: {a: 5}\n", "stringData.a",
     "must be a string"},
    {"immutable not bool", HEAD "immutable: yes please\n", "immutable",
     "must be true or false"},
    {"tls needs both keys",
     HEAD "type: kubernetes.io/tls\ndata: {tls.crt: "
          "YQ==}\n",
     "data[tls.key]", "Required value"},
    {"tls ok by stringData",
     HEAD "type: kubernetes.io/tls\nstringData: {tls.crt: a, tls.key: b}\n",
     NULL, NULL},
    {"basic-auth needs one", HEAD "type: kubernetes.io/basic-auth\n",
     "data.username", "Required value"},
    {"basic-auth password alone",
     HEAD "type: kubernetes.io/basic-auth\nstringData: {password: p}\n", NULL,
     NULL},
    {"sa token needs the annotation",
     HEAD "type: kubernetes.io/service-account-token\n",
     "metadata.annotations[kubernetes.io/service-account.name]",
     "Required value"},
};

static void test_rules(void **state)
{
    (void)state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        struct fq_value *v = testlib_yaml1(rules[i].yaml);
        struct fq_errlist errs;
        fq_errlist_init(&errs);
        int r = fq_object_validate(v, "t.yaml", &errs);
        bool ok = rules[i].path ?
                      r == FQ_EINVAL && errs.n > 0 &&
                          strstr(errs.items[0].msg, rules[i].text) &&
                          !strcmp(errs.items[0].path, rules[i].path) :
                      r == 0 && errs.n == 0;
        if (!ok) {
            print_error("case \"%s\": rc %d\n", rules[i].name, r);
            for (size_t j = 0; j < errs.n; j++)
                print_error("   [%s] %s\n", errs.items[j].path,
                            errs.items[j].msg);
            failed++;
        }
        fq_errlist_release(&errs);
        fq_value_free(v);
    }
    assert_int_equal(failed, 0);
}

static void test_size_cap(void **state)
{
    (void)state;
    /* 1 MiB decoded is the most; counted after stringData wins */
    size_t n = 1024 * 1024;
    char *big = malloc(n + 2);
    memset(big, 'x', n + 1);
    big[n + 1] = '\0';
    struct fq_value *v = testlib_yaml1(HEAD "stringData: {a: ''}\n");
    fq_map_set(fq_map_get(v, "stringData"), "a", fq_value_str(big));
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    assert_int_equal(fq_object_validate(v, NULL, &errs), FQ_EINVAL);
    assert_non_null(strstr(errs.items[0].msg, "must have at most 1048576"));
    fq_errlist_release(&errs);
    big[n] = '\0';
    fq_map_set(fq_map_get(v, "stringData"), "a", fq_value_str(big));
    assert_int_equal(fq_object_validate(v, NULL, NULL), 0);
    fq_value_free(v);
    free(big);
}

static void test_defaults(void **state)
{
    (void)state;
    struct fq_err err = {0};
    struct fq_value *v =
        testlib_yaml1(HEAD "data: {a: YQ==, b: Yg==}\nstringData: {b: "
                           "two, c: three}\n");
    assert_int_equal(fq_secret_defaults(v, NULL, &err), 0);
    assert_string_equal(fq_value_path_str(v, "type", ""), "Opaque");
    assert_null(fq_map_get(v, "stringData"));
    assert_string_equal(fq_value_path_str(v, "data.a", ""), "YQ==");
    assert_string_equal(fq_value_path_str(v, "data.b", ""), "dHdv");
    assert_string_equal(fq_value_path_str(v, "data.c", ""), "dGhyZWU=");

    /* type cannot change */
    struct fq_value *nv = fq_value_clone(v);
    fq_map_set(nv, "type", fq_value_str("kubernetes.io/tls"));
    assert_int_equal(fq_secret_defaults(nv, v, &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "type: Invalid value"));
    fq_value_free(nv);

    /* an immutable Secret keeps its data and stays immutable */
    fq_map_set(v, "immutable", fq_value_bool(true));
    nv = fq_value_clone(v);
    fq_map_set(nv, "stringData", fq_value_map());
    fq_map_set(fq_map_get(nv, "stringData"), "a", fq_value_str("changed"));
    assert_int_equal(fq_secret_defaults(nv, v, &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "data: Forbidden"));
    fq_value_free(nv);
    nv = fq_value_clone(v);
    fq_map_set(nv, "immutable", fq_value_bool(false));
    assert_int_equal(fq_secret_defaults(nv, v, &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "immutable: Forbidden"));
    fq_value_free(nv);
    nv = fq_value_clone(v); /* unchanged: fine (labels may change) */
    assert_int_equal(fq_secret_defaults(nv, v, &err), 0);
    fq_value_free(nv);
    fq_value_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_size_cap),
        cmocka_unit_test(test_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
