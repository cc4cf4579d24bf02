/*
 * test_yaml.c - the YAML reader (core schema, positions, anchors, limits,
 * errors) and writer (quoting, literal blocks, round trips), plus the seed
 * manifests' YAML -> JSON -> tree round trip.
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
#include "tmpdir_testlib.h"

static int parse(const char *text, const struct fq_limits *lim,
                 struct fq_docs *d, struct fq_err *err)
{
    memset(d, 0, sizeof(*d));
    memset(err, 0, sizeof(*err));
    return fq_yaml_parse(text, strlen(text), "t.yaml", lim, d, err);
}

/* Parses a one-document stream and returns its root (caller frees). */
static struct fq_value *one(const char *text)
{
    struct fq_docs d;
    struct fq_err err;
    int rc = parse(text, NULL, &d, &err);
    if (rc)
        fail_msg("parse failed: %s", err.msg);
    assert_int_equal(d.n, 1);
    struct fq_value *v = d.items[0];
    free(d.items);
    return v;
}

static void expect_error(const char *text, const struct fq_limits *lim,
                         int code, const char *msg)
{
    struct fq_docs d;
    struct fq_err err;
    int rc = parse(text, lim, &d, &err);
    if (rc != code || strcmp(err.msg, msg))
        fail_msg("input %s\n got rc %d \"%s\"\nwant rc %d \"%s\"", text, rc,
                 err.msg, code, msg);
    assert_int_equal(d.n, 0);
    assert_null(d.items);
    assert_int_equal(err.code, code);
}

struct scase {
    const char *text;
    enum fq_vtype type;
    const char *str; /* string value, number raw, "true"/"false" */
    bool is_int;
    int64_t i;
};

static const struct scase schema_cases[] = {
    {"null", FQ_V_NULL, NULL, false, 0},
    {"Null", FQ_V_NULL, NULL, false, 0},
    {"NULL", FQ_V_NULL, NULL, false, 0},
    {"~", FQ_V_NULL, NULL, false, 0},
    {"", FQ_V_NULL, NULL, false, 0},
    {"true", FQ_V_BOOL, "true", false, 0},
    {"True", FQ_V_BOOL, "true", false, 0},
    {"TRUE", FQ_V_BOOL, "true", false, 0},
    {"false", FQ_V_BOOL, "false", false, 0},
    {"FALSE", FQ_V_BOOL, "false", false, 0},
    {"yes", FQ_V_STR, "yes", false, 0},
    {"no", FQ_V_STR, "no", false, 0},
    {"on", FQ_V_STR, "on", false, 0},
    {"tRUE", FQ_V_STR, "tRUE", false, 0},
    {"16", FQ_V_NUM, "16", true, 16},
    {"-16", FQ_V_NUM, "-16", true, -16},
    {"+16", FQ_V_NUM, "+16", true, 16},
    {"0777", FQ_V_NUM, "0777", true, 777},
    {"0x1F", FQ_V_NUM, "0x1F", true, 31},
    {"0o17", FQ_V_NUM, "0o17", true, 15},
    {"0x", FQ_V_STR, "0x", false, 0},
    {"0o8", FQ_V_STR, "0o8", false, 0},
    {"1e3", FQ_V_NUM, "1e3", true, 1000},
    {"1E9", FQ_V_NUM, "1E9", true, 1000000000},
    {"1.5", FQ_V_NUM, "1.5", false, 0},
    {".5", FQ_V_NUM, ".5", false, 0},
    {"1.", FQ_V_NUM, "1.", true, 1},
    {"-1.5e-3", FQ_V_NUM, "-1.5e-3", false, 0},
    {".inf", FQ_V_NUM, ".inf", false, 0},
    {"-.Inf", FQ_V_NUM, "-.Inf", false, 0},
    {".NaN", FQ_V_NUM, ".NaN", false, 0},
    {"-.nan", FQ_V_STR, "-.nan", false, 0},
    {"12345678901234567890123", FQ_V_NUM, "12345678901234567890123", false, 0},
    {"9223372036854775807", FQ_V_NUM, "9223372036854775807", true, INT64_MAX},
    {"1_000", FQ_V_STR, "1_000", false, 0},
    {"1e", FQ_V_STR, "1e", false, 0},
    {"16x", FQ_V_STR, "16x", false, 0},
    {"75Gi", FQ_V_STR, "75Gi", false, 0},
    {"1:20", FQ_V_STR, "1:20", false, 0},
    {"\"true\"", FQ_V_STR, "true", false, 0},
    {"'16'", FQ_V_STR, "16", false, 0},
    {"\"\"", FQ_V_STR, "", false, 0},
    {"'~'", FQ_V_STR, "~", false, 0},
    {"!!str 12", FQ_V_STR, "12", false, 0},
    {"! 12", FQ_V_STR, "12", false, 0},
    {"!!int 12", FQ_V_NUM, "12", true, 12},
    {"!!float 1.5", FQ_V_NUM, "1.5", false, 0},
    {"!!bool true", FQ_V_BOOL, "true", false, 0},
    {"!!null ~", FQ_V_NULL, NULL, false, 0},
    {"|\n  16\n", FQ_V_STR, "16\n", false, 0},
    {">-\n  a\n  b\n", FQ_V_STR, "a b", false, 0},
    {"${TPU}", FQ_V_STR, "${TPU}", false, 0},
};

static void test_schema(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(schema_cases) / sizeof(schema_cases[0]);
         i++) {
        const struct scase *c = &schema_cases[i];
        char *text = fq_xasprintf("v: %s\n", c->text);
        struct fq_value *root = one(text);
        struct fq_value *v = fq_map_get(root, "v");
        assert_non_null(v);
        if (v->type != c->type)
            fail_msg("case %zu %s: type %d want %d", i, c->text, v->type,
                     c->type);
        switch (c->type) {
        case FQ_V_STR:
            assert_string_equal(v->u.str.s, c->str);
            assert_int_equal(v->u.str.len, strlen(c->str));
            break;
        case FQ_V_NUM:
            assert_string_equal(v->u.num.raw, c->str);
            if (v->u.num.is_int != c->is_int)
                fail_msg("case %zu %s: is_int %d", i, c->text, v->u.num.is_int);
            if (c->is_int)
                assert_int_equal(v->u.num.i, c->i);
            break;
        case FQ_V_BOOL:
            assert_int_equal(v->u.b, !strcmp(c->str, "true"));
            break;
        default:
            break;
        }
        fq_value_free(root);
        free(text);
    }
}

static void test_positions(void **state)
{
    (void)state;
    struct fq_value *root = one("# comment\n"
                                "kind: Thing\n"
                                "spec:\n"
                                "  items:\n"
                                "    - name: a\n"
                                "      size: \"16x\"\n"
                                "  flow: {x: [1, 2]}\n");
    assert_int_equal(root->line, 2);
    assert_int_equal(root->col, 1);
    assert_int_equal(root->u.map.items[0].line, 2);
    assert_int_equal(root->u.map.items[0].col, 1);
    struct fq_value *spec = fq_map_get(root, "spec");
    assert_int_equal(root->u.map.items[1].line, 3);
    assert_int_equal(spec->line, 4);
    assert_int_equal(spec->col, 3);
    struct fq_value *item = fq_seq_at(fq_map_get(spec, "items"), 0);
    assert_int_equal(item->line, 5);
    assert_int_equal(item->col, 7);
    struct fq_value *size = fq_map_get(item, "size");
    assert_int_equal(size->line, 6);
    assert_int_equal(size->col, 13);
    assert_int_equal(item->u.map.items[1].line, 6); /* the key "size" */
    assert_int_equal(item->u.map.items[1].col, 7);
    struct fq_value *two = fq_seq_at(fq_value_path(spec, "flow.x"), 1);
    assert_int_equal(two->line, 7);
    assert_int_equal(two->col, 17);
    fq_value_free(root);
}

static void test_anchors(void **state)
{
    (void)state;
    struct fq_value *root = one("base: &res {cpu: \"2\", memory: 4Gi}\n"
                                "limits: *res\n"
                                "name: &n head\n"
                                "again: *n\n"
                                "*n : keyed\n");
    struct fq_value *base = fq_map_get(root, "base");
    struct fq_value *lim = fq_map_get(root, "limits");
    assert_true(fq_value_equal(base, lim));
    assert_ptr_not_equal(base, lim); /* expanded, not shared */
    assert_string_equal(fq_value_path_str(root, "again", ""), "head");
    assert_string_equal(fq_value_path_str(root, "head", ""), "keyed");
    fq_value_free(root);

    /* A redefined anchor: the latest definition wins. */
    root = one("a: &x 1\nb: &x 2\nc: *x\n");
    assert_int_equal(fq_value_path_int(root, "c", 0), 2);
    fq_value_free(root);

    /* Anchors do not cross documents. */
    expect_error("a: &x 1\n---\nb: *x\n", NULL, FQ_EPARSE,
                 "t.yaml:3:4: unknown anchor \"x\"");
    /* A node cannot contain an alias to itself. */
    expect_error("a: &x [1, *x]\n", NULL, FQ_EPARSE,
                 "t.yaml:1:11: unknown anchor \"x\"");
}

static void test_streams(void **state)
{
    (void)state;
    struct fq_docs d;
    struct fq_err err;
    assert_int_equal(parse("a: 1\n---\n---\n# only a comment\n---\nb: 2\n"
                           "...\n---\n~\n--- [3]\n",
                           NULL, &d, &err),
                     0);
    assert_int_equal(d.n, 3); /* empty and null documents are skipped */
    assert_int_equal(fq_value_path_int(d.items[0], "a", 0), 1);
    assert_int_equal(fq_value_path_int(d.items[1], "b", 0), 2);
    assert_int_equal(d.items[2]->type, FQ_V_SEQ);
    fq_docs_release(&d);
    assert_int_equal(d.n, 0);

    assert_int_equal(parse("", NULL, &d, &err), 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(parse("# nothing\n", NULL, &d, &err), 0);
    assert_int_equal(d.n, 0);

    /* A scalar document, and JSON read as YAML. */
    assert_int_equal(
        parse("hello\n--- {\"a\": [1, {\"b\": null}]}\n", NULL, &d, &err), 0);
    assert_int_equal(d.n, 2);
    assert_string_equal(fq_value_as_str(d.items[0]), "hello");
    assert_int_equal(fq_seq_at(fq_map_get(d.items[1], "a"), 1)->type, FQ_V_MAP);
    fq_docs_release(&d);

    /* Parsing appends to what `out` already holds. */
    struct fq_docs acc = {0};
    assert_int_equal(fq_yaml_parse("a: 1", 4, NULL, NULL, &acc, &err), 0);
    assert_int_equal(fq_yaml_parse("b: 1", 4, NULL, NULL, &acc, &err), 0);
    assert_int_equal(acc.n, 2);
    fq_docs_release(&acc);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    expect_error("a: 1\nb: [1, 2\n", NULL, FQ_EPARSE,
                 "t.yaml:3:1: did not find expected ',' or ']' while "
                 "parsing a flow sequence that started at line 2");
    expect_error("a:\n  b: 1\n c: 2\n", NULL, FQ_EPARSE,
                 "t.yaml:3:2: did not find expected key while parsing a "
                 "block mapping that started at line 1");
    expect_error("key: \"unterminated\n", NULL, FQ_EPARSE,
                 "t.yaml:2:1: found unexpected end of stream while "
                 "scanning a quoted scalar that started at line 1");
    expect_error("a: b: c\n", NULL, FQ_EPARSE,
                 "t.yaml:1:5: mapping values are not allowed in this "
                 "context");
    expect_error("a: \x01\n", NULL, FQ_EPARSE,
                 "t.yaml:1:4: control characters are not allowed");
    expect_error("a: 1\nb:\n\t- x\n", NULL, FQ_EPARSE,
                 "t.yaml:3:1: found character that cannot start any token "
                 "while scanning for the next token");
    expect_error("a: \"x\\0y\"\n", NULL, FQ_EPARSE,
                 "t.yaml:1:4: NUL character in a scalar");
    expect_error("? [a]\n: 1\n", NULL, FQ_EPARSE,
                 "t.yaml:1:3: a mapping key must be a scalar");
    expect_error("x: !!int abc\n", NULL, FQ_EPARSE,
                 "t.yaml:1:4: \"abc\" is not a valid !!int");
    expect_error("x: !!int 1.5\n", NULL, FQ_EPARSE,
                 "t.yaml:1:4: \"1.5\" is not a valid !!int");
    expect_error("x: !!bool yes\n", NULL, FQ_EPARSE,
                 "t.yaml:1:4: \"yes\" is not a valid !!bool");

    /* Without a name the message starts at the line. */
    struct fq_docs d = {0};
    struct fq_err err;
    assert_int_equal(fq_yaml_parse("a: b: c", 7, NULL, NULL, &d, &err),
                     FQ_EPARSE);
    assert_string_equal(err.msg,
                        "1:5: mapping values are not allowed in this context");
    assert_int_equal(err.line, 1);
    assert_int_equal(err.col, 5);
    /* A NULL err is allowed. */
    assert_int_equal(fq_yaml_parse("a: b: c", 7, NULL, NULL, &d, NULL),
                     FQ_EPARSE);
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    expect_error("a: 1\nb: 2\na: 3\n", NULL, FQ_EPARSE,
                 "t.yaml:3:1: duplicate key \"a\"");
    expect_error("spec:\n  x: 1\n  y: {z: 1, z: 2}\n", NULL, FQ_EPARSE,
                 "t.yaml:3:13: duplicate key \"z\"");
    /* Many keys take the sorted path; the first repeat is reported. */
    struct fq_buf b = FQ_BUF_INIT;
    for (int i = 0; i < 50; i++)
        fq_buf_printf(&b, "k%d: %d\n", i, i);
    fq_buf_puts(&b, "k7: again\nk3: again\n");
    expect_error(b.data, NULL, FQ_EPARSE, "t.yaml:51:1: duplicate key \"k7\"");
    fq_buf_release(&b);
    /* The same text in different maps is fine; so are "1" and 1. */
    struct fq_value *v = one("a: {x: 1}\nb: {x: 1}\n\"1\": a\n");
    fq_value_free(v);
}

static struct fq_limits small_limits(void)
{
    struct fq_limits l = fq_limits_default();
    l.max_bytes = 200;
    l.max_depth = 3;
    l.max_docs = 2;
    l.max_aliases = 3;
    l.max_string = 10;
    l.max_nodes = 20;
    return l;
}

static void test_limits(void **state)
{
    (void)state;
    struct fq_limits def = fq_limits_default();
    assert_int_equal(def.max_bytes, 4u << 20);
    assert_int_equal(def.max_depth, 64);
    assert_int_equal(def.max_docs, 1000);
    assert_int_equal(def.max_aliases, 100);
    assert_int_equal(def.max_string, 1u << 20);
    assert_int_equal(def.max_nodes, 1000000);

    struct fq_limits l = small_limits();
    char big[256];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    expect_error(big, &l, FQ_ELIMIT,
                 "t.yaml: input is 255 bytes, over the 200-byte limit");
    expect_error("a: {b: {c: {d: 1}}}\n", &l, FQ_ELIMIT,
                 "t.yaml:1:12: nesting deeper than the limit of 3");
    expect_error("a:\n  b:\n    - - 1\n", &l, FQ_ELIMIT,
                 "t.yaml:3:7: nesting deeper than the limit of 3");
    expect_error("a: 1\n---\nb: 1\n---\nc: 1\n", &l, FQ_ELIMIT,
                 "t.yaml:4:1: more than 2 documents");
    expect_error("a: 0123456789x\n", &l, FQ_ELIMIT,
                 "t.yaml:1:4: scalar of 11 bytes is over the 10-byte limit");
    expect_error("0123456789x: 1\n", &l, FQ_ELIMIT,
                 "t.yaml:1:1: scalar of 11 bytes is over the 10-byte limit");
    expect_error("a: &a 1\nb: [*a, *a, *a, *a]\n", &l, FQ_ELIMIT,
                 "t.yaml:2:17: more than 3 aliases");
    expect_error("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, "
                 "17, 18, 19, 20]\n",
                 &l, FQ_ELIMIT,
                 "t.yaml:1:69: more than 20 nodes (do aliases expand to "
                 "too much?)");
    /* Depth through an alias counts where the alias is used. */
    expect_error("a: &a [[1]]\nb: {c: *a}\n", &l, FQ_ELIMIT,
                 "t.yaml:2:8: nesting deeper than the limit of 3");
    /* Exactly at each limit is fine. */
    struct fq_docs d;
    struct fq_err err;
    assert_int_equal(
        parse("a: {b: {c: 1}}\n---\nx: 0123456789\n", &l, &d, &err), 0);
    assert_int_equal(d.n, 2);
    fq_docs_release(&d);
}

/* The classic "billion laughs": 9 levels of 10 aliases each. */
static void test_billion_laughs(void **state)
{
    (void)state;
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, "
                    "lol]\n");
    for (int i = 1; i < 9; i++) {
        fq_buf_printf(&b, "l%d: &l%d [", i, i);
        for (int j = 0; j < 10; j++)
            fq_buf_printf(&b, "%s*l%d", j ? ", " : "", i - 1);
        fq_buf_puts(&b, "]\n");
    }
    struct fq_docs d;
    struct fq_err err;
    /* Default limits: 80 aliases pass the alias cap, but the expansion
     * (10^8 nodes) is refused by the cap on what aliases add. */
    assert_int_equal(parse(b.data, NULL, &d, &err), FQ_ELIMIT);
    assert_non_null(strstr(err.msg, "aliases expand to more than 100000 "
                                    "nodes"));
    assert_int_equal(d.n, 0);
    /* With a tighter alias cap the alias count stops it first. */
    struct fq_limits l = fq_limits_default();
    l.max_aliases = 20;
    assert_int_equal(parse(b.data, &l, &d, &err), FQ_ELIMIT);
    assert_string_equal(err.msg, "t.yaml:4:10: more than 20 aliases");
    assert_int_equal(d.n, 0);
    fq_buf_release(&b);
}

/* Few aliases of one long string: a small body must not become a large
 * object (the text aliases add is capped at 1 MiB). */
static void test_alias_bytes(void **state)
{
    (void)state;
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "a: &big \"");
    for (int i = 0; i < 600 * 1024; i++)
        fq_buf_putc(&b, 'x');
    fq_buf_puts(&b, "\"\nb: *big\n");
    struct fq_docs d;
    struct fq_err err;
    assert_int_equal(parse(b.data, NULL, &d, &err), 0);
    fq_docs_release(&d);
    fq_buf_puts(&b, "c: *big\n");
    assert_int_equal(parse(b.data, NULL, &d, &err), FQ_ELIMIT);
    assert_non_null(strstr(err.msg, "aliases expand to more than 1048576 "
                                    "bytes"));
    assert_int_equal(d.n, 0);
    fq_buf_release(&b);
}

/* Anchors on every level of a deep, wide node: an anchor must not copy
 * its node (that would cost depth x size memory, here 60 x 200k nodes). */
static void test_nested_anchors(void **state)
{
    (void)state;
    struct fq_buf b = FQ_BUF_INIT;
    for (int i = 0; i < 60; i++)
        fq_buf_printf(&b, "&a%d [", i);
    for (int i = 0; i < 200000; i++)
        fq_buf_puts(&b, i ? ",1" : "1");
    for (int i = 0; i < 60; i++)
        fq_buf_putc(&b, ']');
    struct fq_docs d;
    struct fq_err err;
    assert_int_equal(parse(b.data, NULL, &d, &err), 0);
    const struct fq_value *v = d.items[0];
    for (int i = 0; i < 59; i++)
        v = fq_seq_at(v, 0);
    assert_int_equal(fq_value_len(v), 200000);
    fq_docs_release(&d);
    fq_buf_release(&b);
}

/* --- writing --------------------------------------------------------- */

static char *encode(const struct fq_value *v)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_yaml_encode(v, &b);
    return fq_buf_detach(&b);
}

static void assert_roundtrip(const struct fq_value *v)
{
    char *text = encode(v);
    struct fq_docs d;
    struct fq_err err;
    int rc = parse(text, NULL, &d, &err);
    if (rc)
        fail_msg("re-reading failed: %s\n%s", err.msg, text);
    if (v->type == FQ_V_NULL) {
        assert_int_equal(d.n, 0);
    } else {
        assert_int_equal(d.n, 1);
        if (!fq_value_equal(d.items[0], v))
            fail_msg("round trip changed the value:\n%s", text);
    }
    fq_docs_release(&d);
    free(text);
}

static const char *const tricky[] = {
    "",
    "true",
    "False",
    "null",
    "~",
    "16",
    "1e3",
    "0x1F",
    ".inf",
    "yes",
    "no",
    "on",
    "1_000",
    "4x4",
    "a: b",
    "a #b",
    "#x",
    "- x",
    "-x",
    "?",
    ":",
    "a:",
    " lead",
    "trail ",
    "[a]",
    "{a}",
    "*ref",
    "&anc",
    "!tag",
    "|",
    ">",
    "'q'",
    "\"q\"",
    "%dir",
    "@at",
    "`bt`",
    "...",
    "---",
    "a\tb",
    "a\rb",
    "\x01",
    "caf\xc3\xa9",
    "\xe2\x80\xa8",
    "\xc2\x85",
    "line1\nline2",
    "line1\nline2\n",
    "x\n\n",
    "\n",
    "\n\nx",
    "  indented\nnext",
    "a\n  b\n",
    "a\n \nb",
    "<<",
    "${JOB_ID}",
    "http://x.y/z",
    "a, b",
    "python /app/train.py",
    "a\n\tb",
    "\tx\ny",
    "x\n\t",
    "x \ny",
    "- a\n- b",
    "#c\nd",
    "a\n...\nb",
    "---\nb",
    "a\n---\n",
    "\xef\xbb\xbf\x62om", /* a byte order mark, then "bom" */
    "tab\t",
    " \n ",
    "a\n\n\n",
    "\xe2\x80\xa8x\ny",
    "rayproject/ray:2.53.0-py311",
};

static void test_encode_strings(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++) {
        struct fq_value *m = fq_value_map();
        fq_map_set(m, "k", fq_value_str(tricky[i]));
        fq_map_set(m, tricky[i], fq_value_int(1));
        struct fq_value *s = fq_value_seq();
        fq_seq_push(s, fq_value_str(tricky[i]));
        fq_map_set(m, "seq", s);
        assert_roundtrip(m);
        fq_value_free(m);
        struct fq_value *top = fq_value_str(tricky[i]);
        assert_roundtrip(top);
        fq_value_free(top);
    }
}

static void test_encode_shape(void **state)
{
    (void)state;
    struct fq_value *v = one("apiVersion: v1\n"
                             "kind: ConfigMap\n"
                             "data:\n"
                             "  n: \"16\"\n"
                             "  t: 'true'\n"
                             "  script: |\n"
                             "    print(1)\n"
                             "    print(2)\n"
                             "  empty: \"\"\n"
                             "list: [a, {b: 1, c: [x]}, [1, 2], [], {}]\n"
                             "nothing: ~\n"
                             "num: 1e3\n"
                             "plain: [4x4, 10.0.0.1, 2.53.0, v1.2]\n"
                             "quoted: [\"1_000\", \"1:20\", \"0b101\", "
                             "\"-0b1\"]\n");
    char *text = encode(v);
    /* "n" is a boolean to YAML 1.1 readers: quoted for their sake. */
    assert_string_equal(text, "apiVersion: v1\n"
                              "kind: ConfigMap\n"
                              "data:\n"
                              "  \"n\": \"16\"\n"
                              "  t: \"true\"\n"
                              "  script: |\n"
                              "    print(1)\n"
                              "    print(2)\n"
                              "  empty: \"\"\n"
                              "list:\n"
                              "- a\n"
                              "- b: 1\n"
                              "  c:\n"
                              "  - x\n"
                              "- - 1\n"
                              "  - 2\n"
                              "- []\n"
                              "- {}\n"
                              "nothing: null\n"
                              "num: 1e3\n"
                              "plain:\n"
                              "- 4x4\n"
                              "- 10.0.0.1\n"
                              "- 2.53.0\n"
                              "- v1.2\n"
                              "quoted:\n"
                              "- \"1_000\"\n"
                              "- \"1:20\"\n"
                              "- \"0b101\"\n"
                              "- \"-0b1\"\n");
    free(text);
    assert_roundtrip(v);
    fq_value_free(v);

    /* Numbers built in code, a long key, and scalars at the top. */
    struct fq_value *m = fq_value_map();
    fq_map_set(m, "d", fq_value_double(0.1));
    fq_map_set(m, "inf", fq_value_double(1.0 / 0.0));
    char longkey[1500];
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    fq_map_set(m, longkey, fq_value_bool(false));
    assert_roundtrip(m);
    fq_value_free(m);
    struct fq_value *n = fq_value_null();
    char *t = encode(n);
    assert_string_equal(t, "null\n");
    free(t);
    fq_value_free(n);
}

/* --- the seed manifests ------------------------------------------------ */

static void roundtrip_seed(const char *file, size_t want_docs)
{
    char *path = fq_xasprintf("%s/../shared/seed/%s", FLEXQ_SOURCE_DIR, file);
    size_t len = 0;
    char *text = testlib_slurp(path, &len);
    free(path);
    if (!text) {
        print_message("seed %s absent: skipped\n", file);
        return;
    }
    struct fq_docs d = {0};
    struct fq_err err;
    int rc = fq_yaml_parse(text, len, file, NULL, &d, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(d.n, want_docs);
    for (size_t i = 0; i < d.n; i++) {
        for (int flags = 0; flags <= FQ_JSON_PRETTY; flags++) {
            char *json = fq_json_dumps(d.items[i], flags);
            struct fq_value *back = NULL;
            rc = fq_json_parse(json, strlen(json), "json", NULL, &back, &err);
            if (rc)
                fail_msg("%s", err.msg);
            assert_true(fq_value_equal(back, d.items[i]));
            char *again = fq_json_dumps(back, flags);
            assert_string_equal(again, json); /* order and text kept */
            free(again);
            fq_value_free(back);
            free(json);
        }
        assert_roundtrip(d.items[i]);
    }
    fq_docs_release(&d);
    free(text);
}

static void test_seed_roundtrip(void **state)
{
    (void)state;
    roundtrip_seed("dws-tpu-queue.yaml", 7);
    roundtrip_seed("rayjob-tpu-v6e-dws.yaml", 1);
}

static void test_seed_values(void **state)
{
    (void)state;
    struct fq_value *v = one("spec:\n"
                             "  resources:\n"
                             "    - name: \"memory\"\n"
                             "      nominalQuota: 1000000000Gi\n"
                             "    - name: \"google.com/tpu\"\n"
                             "      nominalQuota: 1000000000 # Infinite\n"
                             "  annotations:\n"
                             "    kueue.x-k8s.io/elastic-job: \"true\"\n");
    struct fq_value *r = fq_value_path(v, "spec.resources");
    assert_string_equal(fq_value_path_str(fq_seq_at(r, 0), "nominalQuota", ""),
                        "1000000000Gi");
    assert_int_equal(fq_value_path_int(fq_seq_at(r, 1), "nominalQuota", 0),
                     1000000000);
    struct fq_value *ann = fq_value_path(v, "spec.annotations");
    assert_string_equal(
        fq_value_as_str(fq_map_get(ann, "kueue.x-k8s.io/elastic-job")), "true");
    fq_value_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_anchors),
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_alias_bytes),
        cmocka_unit_test(test_nested_anchors),
        cmocka_unit_test(test_encode_strings),
        cmocka_unit_test(test_encode_shape),
        cmocka_unit_test(test_seed_roundtrip),
        cmocka_unit_test(test_seed_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
