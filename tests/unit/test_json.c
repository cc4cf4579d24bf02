/*
 * test_json.c - the JSON reader (grammar, numbers' raw text, strings and
 * escapes, positions, limits, errors) and writer (compact, pretty, escaping,
 * numbers from YAML).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/alloc.h"
#include "flexq/value.h"

static int parse(const char *text, const struct fq_limits *lim,
                 struct fq_value **out, struct fq_err *err)
{
    memset(err, 0, sizeof(*err));
    return fq_json_parse(text, strlen(text), "t.json", lim, out, err);
}

static struct fq_value *ok(const char *text)
{
    struct fq_value *v = NULL;
    struct fq_err err;
    if (parse(text, NULL, &v, &err))
        fail_msg("parse of %s failed: %s", text, err.msg);
    assert_non_null(v);
    return v;
}

static void expect_error(const char *text, const struct fq_limits *lim,
                         int code, const char *msg)
{
    struct fq_value *v = (struct fq_value *)&v; /* must be reset to NULL */
    struct fq_err err;
    int rc = parse(text, lim, &v, &err);
    if (rc != code || strcmp(err.msg, msg))
        fail_msg("input %s\n got rc %d \"%s\"\nwant rc %d \"%s\"", text, rc,
                 err.msg, code, msg);
    assert_null(v);
}

/* Parses and re-encodes compactly; the caller frees. */
static char *recode(const char *text)
{
    struct fq_value *v = ok(text);
    char *s = fq_json_dumps(v, FQ_JSON_COMPACT);
    fq_value_free(v);
    return s;
}

static void expect_recode(const char *in, const char *out)
{
    char *s = recode(in);
    if (strcmp(s, out))
        fail_msg("%s re-encoded as %s, want %s", in, s, out);
    free(s);
}

static void test_values(void **state)
{
    (void)state;
    expect_recode("null", "null");
    expect_recode(" true ", "true");
    expect_recode("false", "false");
    expect_recode("\"hi\"", "\"hi\"");
    expect_recode("[]", "[]");
    expect_recode("{}", "{}");
    expect_recode("[1, [2, [3]], {\"a\": {}}]", "[1,[2,[3]],{\"a\":{}}]");
    /* Keys keep their order. */
    expect_recode("{\"z\": 1, \"a\": 2, \"m\": 3}",
                  "{\"z\":1,\"a\":2,\"m\":3}");
    /* A byte order mark is skipped. */
    expect_recode("\xEF\xBB\xBF{}", "{}");
}

static void test_numbers(void **state)
{
    (void)state;
    /* Raw text survives: exponents, big integers, negative zero. */
    expect_recode("[1e3, 1E9, -0.5e+2, 0, -0, 1.50]",
                  "[1e3,1E9,-0.5e+2,0,-0,1.50]");
    expect_recode("123456789012345678901234567890",
                  "123456789012345678901234567890");
    expect_recode("1e400", "1e400");

    struct fq_value *v = ok("[9223372036854775807, -9223372036854775808, "
                            "9223372036854775808, 1e3, 2.5, 2.0]");
    assert_true(fq_seq_at(v, 0)->u.num.is_int);
    assert_int_equal(fq_seq_at(v, 0)->u.num.i, INT64_MAX);
    assert_int_equal(fq_seq_at(v, 1)->u.num.i, INT64_MIN);
    assert_false(fq_seq_at(v, 2)->u.num.is_int); /* does not fit */
    assert_true(fq_seq_at(v, 3)->u.num.is_int);
    assert_int_equal(fq_seq_at(v, 3)->u.num.i, 1000);
    assert_false(fq_seq_at(v, 4)->u.num.is_int);
    assert_true(fq_seq_at(v, 4)->u.num.d == 2.5);
    assert_true(fq_seq_at(v, 5)->u.num.is_int);
    fq_value_free(v);

    expect_error("01", NULL, FQ_EPARSE,
                 "t.json:1:2: unexpected text after the JSON value");
    expect_error("1.", NULL, FQ_EPARSE, "t.json:1:1: invalid number");
    expect_error(".5", NULL, FQ_EPARSE, "t.json:1:1: unexpected character");
    expect_error("+1", NULL, FQ_EPARSE, "t.json:1:1: unexpected character");
    expect_error("-", NULL, FQ_EPARSE, "t.json:1:1: invalid number");
    expect_error("1e", NULL, FQ_EPARSE, "t.json:1:1: invalid number");
    expect_error("[1e+]", NULL, FQ_EPARSE, "t.json:1:2: invalid number");
    expect_error("NaN", NULL, FQ_EPARSE, "t.json:1:1: unexpected character");
    expect_error("[Infinity]", NULL, FQ_EPARSE,
                 "t.json:1:2: unexpected character");
}

static void test_strings(void **state)
{
    (void)state;
    struct fq_value *v = ok("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\u20ac"
                            "\\ud83d\\ude00\"");
    assert_string_equal(v->u.str.s, "a\"b\\c/d\b\f\n\r\t\xc3\xa9\xe2\x82\xac"
                                    "\xf0\x9f\x98\x80");
    assert_int_equal(v->u.str.len, strlen(v->u.str.s));
    fq_value_free(v);
    /* Raw UTF-8 passes through both ways. */
    expect_recode("\"caf\xc3\xa9 \xe2\x82\xac\"",
                  "\"caf\xc3\xa9 \xe2\x82\xac\"");
    /* The writer escapes what it must and nothing else. */
    expect_recode("\"\\u0001\\u001f \\\"q\\\" \\\\ \\/ \\n\"",
                  "\"\\u0001\\u001f \\\"q\\\" \\\\ / \\n\"");

    expect_error("\"abc", NULL, FQ_EPARSE, "t.json:1:1: unterminated string");
    expect_error("\"a\nb\"", NULL, FQ_EPARSE,
                 "t.json:1:3: control character in string");
    expect_error("\"\\x\"", NULL, FQ_EPARSE,
                 "t.json:1:2: invalid escape in string");
    expect_error("\"\\u12g4\"", NULL, FQ_EPARSE,
                 "t.json:1:2: invalid \\u escape");
    expect_error("\"\\ud800\"", NULL, FQ_EPARSE,
                 "t.json:1:2: unpaired surrogate in \\u escape");
    expect_error("\"\\udc00\"", NULL, FQ_EPARSE,
                 "t.json:1:2: unpaired surrogate in \\u escape");
    expect_error("\"\\u0000\"", NULL, FQ_EPARSE,
                 "t.json:1:2: \\u0000 is not allowed in strings");
    expect_error("\"\xc3\"", NULL, FQ_EPARSE, "t.json:1:2: invalid UTF-8");
    expect_error("\"\xed\xa0\x80\"", NULL, FQ_EPARSE,
                 "t.json:1:2: invalid UTF-8"); /* an encoded surrogate */
    expect_error("\"\xc0\xaf\"", NULL, FQ_EPARSE,
                 "t.json:1:2: invalid UTF-8"); /* overlong */
}

static void test_structure_errors(void **state)
{
    (void)state;
    expect_error("", NULL, FQ_EPARSE, "t.json:1:1: unexpected end of input");
    expect_error("  \n ", NULL, FQ_EPARSE,
                 "t.json:2:2: unexpected end of input");
    expect_error("[1, 2,]", NULL, FQ_EPARSE,
                 "t.json:1:7: unexpected character");
    expect_error("[1 2]", NULL, FQ_EPARSE, "t.json:1:4: expected ',' or ']'");
    expect_error("{\"a\" 1}", NULL, FQ_EPARSE,
                 "t.json:1:6: expected ':' after key");
    expect_error("{\"a\": 1,}", NULL, FQ_EPARSE,
                 "t.json:1:9: expected a string key");
    expect_error("{a: 1}", NULL, FQ_EPARSE,
                 "t.json:1:2: expected a string key");
    expect_error("{\"a\": 1\n \"b\": 2}", NULL, FQ_EPARSE,
                 "t.json:2:2: expected ',' or '}'");
    expect_error("{\"a\": 1, \"b\": 2, \"a\": 3}", NULL, FQ_EPARSE,
                 "t.json:1:18: duplicate key \"a\"");
    expect_error("{} {}", NULL, FQ_EPARSE,
                 "t.json:1:4: unexpected text after the JSON value");
    expect_error("tru", NULL, FQ_EPARSE, "t.json:1:1: unexpected character");
    expect_error("nul", NULL, FQ_EPARSE, "t.json:1:1: unexpected character");
    expect_error("// c\n{}", NULL, FQ_EPARSE,
                 "t.json:1:1: unexpected character");

    /* Without a name, and with a NULL err. */
    struct fq_value *v;
    struct fq_err err;
    assert_int_equal(fq_json_parse("[", 1, NULL, NULL, &v, &err), FQ_EPARSE);
    assert_string_equal(err.msg, "1:2: unexpected end of input");
    assert_int_equal(err.line, 1);
    assert_int_equal(err.col, 2);
    assert_int_equal(fq_json_parse("[", 1, NULL, NULL, &v, NULL), FQ_EPARSE);
    assert_null(v);
}

static void test_positions(void **state)
{
    (void)state;
    struct fq_value *v = ok("{\n  \"kind\": \"X\",\n  \"spec\": {\"n\": [1,\n"
                            "    2]}\n}");
    assert_int_equal(v->line, 1);
    assert_int_equal(v->col, 1);
    assert_int_equal(v->u.map.items[0].line, 2);
    assert_int_equal(v->u.map.items[0].col, 3);
    struct fq_value *kind = fq_map_get(v, "kind");
    assert_int_equal(kind->line, 2);
    assert_int_equal(kind->col, 11);
    struct fq_value *n = fq_value_path(v, "spec.n");
    assert_int_equal(n->line, 3);
    assert_int_equal(n->col, 17);
    assert_int_equal(fq_seq_at(n, 1)->line, 4);
    assert_int_equal(fq_seq_at(n, 1)->col, 5);
    fq_value_free(v);
}

/* Strings are read a run at a time and taken from the input when they
 * have no escapes: keys and values around, between and after escapes,
 * and raw UTF-8 inside runs, come out whole; and the containers a parse
 * builds hold no room past their items. */
static void test_string_runs_and_fitted_containers(void **state)
{
    (void)state;
    struct fq_value *v =
        ok("{\"plain key\": \"x\", \"k\\\"ey\": \"ab\\ncd\\\\\","
           " \"caf\xc3\xa9\": \"\xe2\x82\xac run \\u00e9 tail\","
           " \"list\": [\"a\", \"\", \"b\\tc\"]}");
    assert_int_equal(v->u.map.n, 4);
    assert_int_equal(v->u.map.cap, 4);
    assert_string_equal(v->u.map.items[0].key, "plain key");
    assert_string_equal(fq_map_get(v, "plain key")->u.str.s, "x");
    assert_string_equal(v->u.map.items[1].key, "k\"ey");
    assert_int_equal(v->u.map.items[1].klen, 4);
    assert_string_equal(fq_map_get(v, "k\"ey")->u.str.s, "ab\ncd\\");
    assert_string_equal(fq_map_get(v, "caf\xc3\xa9")->u.str.s,
                        "\xe2\x82\xac run \xc3\xa9 tail");
    const struct fq_value *list = fq_map_get(v, "list");
    assert_int_equal(list->u.seq.n, 3);
    assert_int_equal(list->u.seq.cap, 3);
    assert_string_equal(list->u.seq.items[1]->u.str.s, "");
    assert_string_equal(list->u.seq.items[2]->u.str.s, "b\tc");
    /* A fitted map still grows. */
    fq_map_set(v, "more", fq_value_int(1));
    assert_int_equal(v->u.map.n, 5);
    assert_int_equal(fq_value_path_int(v, "more", 0), 1);
    fq_value_free(v);
    /* The string limit counts the decoded bytes, escapes included. */
    struct fq_limits l = fq_limits_default();
    l.max_string = 5;
    expect_error("\"ab\\ncdef\"", &l, FQ_ELIMIT,
                 "t.json:1:1: string longer than the limit");
    expect_error("\"abc\\n\\n\\n\"", &l, FQ_ELIMIT,
                 "t.json:1:1: string longer than the limit");
    v = NULL;
    struct fq_err err;
    assert_int_equal(parse("\"a\\nb\\nc\"", &l, &v, &err), 0);
    assert_string_equal(v->u.str.s, "a\nb\nc");
    fq_value_free(v);
}

static void test_limits(void **state)
{
    (void)state;
    struct fq_limits l = fq_limits_default();
    l.max_bytes = 50;
    l.max_depth = 3;
    l.max_string = 5;
    l.max_nodes = 6;
    char big[60];
    memset(big, ' ', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    expect_error(big, &l, FQ_ELIMIT,
                 "t.json: input is 59 bytes, over the 50 limit");
    expect_error("[[[[1]]]]", &l, FQ_ELIMIT,
                 "t.json:1:4: nesting deeper than the limit");
    expect_error("\"abcdef\"", &l, FQ_ELIMIT,
                 "t.json:1:1: string longer than the limit");
    expect_error("{\"abcdef\": 1}", &l, FQ_ELIMIT,
                 "t.json:1:2: string longer than the limit");
    expect_error("123456", &l, FQ_ELIMIT,
                 "t.json:1:1: number longer than the limit");
    expect_error("[1, 2, 3, 4, 5, 6]", &l, FQ_ELIMIT,
                 "t.json:1:17: too many nodes");
    expect_error("{\"a\": 1, \"b\": 2, \"c\": 3}", &l, FQ_ELIMIT,
                 "t.json:1:23: too many nodes"); /* keys count */
    /* At the limits exactly: fine. */
    struct fq_value *v = NULL;
    struct fq_err err;
    assert_int_equal(parse("[[\"abcde\"]]", &l, &v, &err), 0);
    fq_value_free(v);

    /* The default depth limit stops a deep document quickly. */
    struct fq_buf b = FQ_BUF_INIT;
    for (int i = 0; i < 100000; i++)
        fq_buf_putc(&b, '[');
    assert_int_equal(fq_json_parse(b.data, b.len, NULL, NULL, &v, &err),
                     FQ_ELIMIT);
    assert_string_equal(err.msg, "1:65: nesting deeper than the limit");
    fq_buf_release(&b);
}

static void test_pretty(void **state)
{
    (void)state;
    struct fq_value *v = ok("{\"a\":1,\"b\":[true,null,{}],\"c\":{\"d\":[]},"
                            "\"e\":{\"f\":\"g\"}}");
    char *s = fq_json_dumps(v, FQ_JSON_PRETTY);
    assert_string_equal(s, "{\n"
                           "  \"a\": 1,\n"
                           "  \"b\": [\n"
                           "    true,\n"
                           "    null,\n"
                           "    {}\n"
                           "  ],\n"
                           "  \"c\": {\n"
                           "    \"d\": []\n"
                           "  },\n"
                           "  \"e\": {\n"
                           "    \"f\": \"g\"\n"
                           "  }\n"
                           "}");
    free(s);
    /* fq_json_encode appends. */
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "x=");
    fq_json_encode(fq_map_get(v, "e"), FQ_JSON_COMPACT, &b);
    assert_string_equal(b.data, "x={\"f\":\"g\"}");
    fq_buf_release(&b);
    fq_value_free(v);
}

/* Numbers and strings that came from YAML or from code are valid JSON. */
static void test_encode_non_json_sources(void **state)
{
    (void)state;
    struct fq_docs d = {0};
    struct fq_err err;
    const char *y = "[0x1F, 0o17, +1, .5, 1., .inf, -.inf, .nan, 0777, "
                    "99999999999999999999]";
    assert_int_equal(fq_yaml_parse(y, strlen(y), NULL, NULL, &d, &err), 0);
    char *s = fq_json_dumps(d.items[0], 0);
    assert_string_equal(s, "[31,15,1,0.5,1,null,null,null,777,"
                           "99999999999999999999]");
    free(s);
    fq_docs_release(&d);

    struct fq_value *m = fq_value_map();
    fq_map_set(m, "bad",
               fq_value_str("a\xff"
                            "b"));
    fq_map_set(m, "d", fq_value_double(0.1));
    fq_map_set(m, "i", fq_value_int(-42));
    fq_map_set(m, "ctl", fq_value_str("\x7f\x1b"));
    s = fq_json_dumps(m, 0);
    assert_string_equal(s, "{\"bad\":\"a\xef\xbf\xbd"
                           "b\",\"d\":0.1,"
                           "\"i\":-42,\"ctl\":\"\x7f\\u001b\"}");
    struct fq_value *back = NULL;
    assert_int_equal(fq_json_parse(s, strlen(s), NULL, NULL, &back, &err), 0);
    free(s);
    fq_value_free(back);
    fq_value_free(m);
}

/* Every ASCII byte, alone and inside a longer string, is written as
 * JSON wants: as it is, or escaped (the encoder's fast path for strings
 * with nothing to escape and its escaping path agree). */
static void test_encode_every_ascii_byte(void **state)
{
    (void)state;
    for (int c = 1; c < 0x80; c++) {
        char want[16];
        if (c == '"' || c == '\\')
            snprintf(want, sizeof(want), "\\%c", c);
        else if (c == '\n')
            snprintf(want, sizeof(want), "\\n");
        else if (c == '\r')
            snprintf(want, sizeof(want), "\\r");
        else if (c == '\t')
            snprintf(want, sizeof(want), "\\t");
        else if (c == '\b')
            snprintf(want, sizeof(want), "\\b");
        else if (c == '\f')
            snprintf(want, sizeof(want), "\\f");
        else if (c < 0x20)
            snprintf(want, sizeof(want), "\\u%04x", c);
        else
            snprintf(want, sizeof(want), "%c", c);
        char in[8] = {'a', 'b', (char)c, 'z', 0};
        for (int whole = 0; whole < 2; whole++) {
            if (whole)
                in[3] = 0; /* the byte alone */
            struct fq_value *v = fq_value_str(whole ? in + 2 : in);
            char *got = fq_json_dumps(v, 0);
            char exp[32];
            snprintf(exp, sizeof(exp), whole ? "\"%s\"" : "\"ab%sz\"", want);
            assert_string_equal(got, exp);
            free(got);
            fq_value_free(v);
        }
        /* At every place of a longer string (a run before and after
         * the byte). */
        for (int at = 0; at < 20; at++) {
            char in2[24], exp2[48];
            memset(in2, 'x', 20);
            in2[20] = 0;
            in2[at] = (char)c;
            snprintf(exp2, sizeof(exp2), "\"%.*s%s%s\"", at, in2, want,
                     in2 + at + 1);
            struct fq_value *v = fq_value_str(in2);
            char *got = fq_json_dumps(v, 0);
            assert_string_equal(got, exp2);
            free(got);
            fq_value_free(v);
        }
    }
    /* Bytes >= 0x80 inside longer runs: UTF-8 kept, a stray
     * byte replaced by U+FFFD. */
    struct fq_value *u = fq_value_str("abcdefgh\xc3\xa9ijklmnop\xffqrstuvwx");
    char *got = fq_json_dumps(u, 0);
    assert_string_equal(got,
                        "\"abcdefgh\xc3\xa9ijklmnop\xef\xbf\xbdqrstuvwx\"");
    free(got);
    fq_value_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_structure_errors),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_string_runs_and_fitted_containers),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_pretty),
        cmocka_unit_test(test_encode_non_json_sources),
        cmocka_unit_test(test_encode_every_ascii_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
