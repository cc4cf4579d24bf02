/*
 * test_value.c - the document tree: constructors, numbers, clone/equal,
 * mappings in insertion order, sequences, dotted paths, and RFC 7386 merge
 * patch with the RFC's appendix A examples.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/value.h"

static struct fq_value *J(const char *text)
{
    struct fq_value *v = NULL;
    struct fq_err err;
    if (fq_json_parse(text, strlen(text), NULL, NULL, &v, &err))
        fail_msg("bad JSON in test: %s: %s", text, err.msg);
    return v;
}

static void assert_json(const struct fq_value *v, const char *want)
{
    char *s = fq_json_dumps(v, FQ_JSON_COMPACT);
    if (strcmp(s, want))
        fail_msg("got %s, want %s", s, want);
    free(s);
}

static void test_constructors(void **state)
{
    (void)state;
    struct fq_value *v = fq_value_null();
    assert_int_equal(v->type, FQ_V_NULL);
    assert_int_equal(v->line, 0);
    fq_value_free(v);
    v = fq_value_bool(true);
    assert_true(v->u.b);
    fq_value_free(v);
    /* A string set in place, from short (in the node) to long and back. */
    v = fq_value_str("7");
    static const char *const texts[] = {"12", "a text longer than the node",
                                        "another long one, longer still", "",
                                        "99"};
    for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
        fq_value_set_str(v, texts[k], strlen(texts[k]));
        assert_string_equal(v->u.str.s, texts[k]);
        assert_int_equal(v->u.str.len, strlen(texts[k]));
    }
    fq_value_set_str(v, "ab\0cd", 5); /* cut at the NUL */
    assert_string_equal(v->u.str.s, "ab");
    fq_value_free(v);
    v = fq_value_int(INT64_MIN);
    fq_value_set_str(v, "x", 1); /* not a string: unchanged */
    assert_string_equal(v->u.num.raw, "-9223372036854775808");
    assert_true(v->u.num.is_int);
    fq_value_free(v);
    /* fq_value_int formats by hand: the same text as "%lld". Texts of up
     * to 6 bytes live in the node, longer ones apart; either way a clone
     * holds its own copy. */
    static const int64_t ints[] = {0,       7,          -1,       10,
                                   -100,    999999,     1000000,  -99999,
                                   -100000, 1234567890, INT64_MAX};
    for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
        char want[24];
        snprintf(want, sizeof(want), "%lld", (long long)ints[k]);
        v = fq_value_int(ints[k]);
        assert_string_equal(v->u.num.raw, want);
        assert_int_equal(v->u.num.i, ints[k]);
        assert_int_equal(v->u.num.raw == v->u.num.buf, strlen(want) <= 6);
        struct fq_value *c = fq_value_clone(v);
        assert_true(c->u.num.raw != v->u.num.raw);
        fq_value_free(v);
        assert_string_equal(c->u.num.raw, want);
        fq_value_free(c);
    }
    v = fq_value_double(0.1);
    assert_string_equal(v->u.num.raw, "0.1");
    assert_false(v->u.num.is_int);
    fq_value_free(v);
    v = fq_value_double(3.0);
    assert_string_equal(v->u.num.raw, "3");
    assert_true(v->u.num.is_int);
    assert_int_equal(v->u.num.i, 3);
    fq_value_free(v);
    v = fq_value_double(-1.0 / 0.0);
    assert_string_equal(v->u.num.raw, "-.inf");
    fq_value_free(v);
    v = fq_value_strf("%s-%d", "job", 7);
    assert_string_equal(v->u.str.s, "job-7");
    assert_int_equal(v->u.str.len, 5);
    fq_value_free(v);
    /* Past the stack line strf formats into first; cut at a NUL. */
    char big[301];
    memset(big, 'x', 300);
    big[300] = '\0';
    v = fq_value_strf("<%s>", big);
    assert_int_equal(v->u.str.len, 302);
    assert_int_equal(v->u.str.s[301], '>');
    fq_value_free(v);
    v = fq_value_strf("a%cb", 0);
    assert_string_equal(v->u.str.s, "a");
    assert_int_equal(v->u.str.len, 1);
    fq_value_free(v);
    v = fq_value_strf("%s", "");
    assert_string_equal(v->u.str.s, "");
    fq_value_free(v);
    v = fq_value_strn("abcdef", 3);
    assert_string_equal(fq_value_as_str(v), "abc");
    fq_value_free(v);
    v = fq_value_str(NULL);
    assert_string_equal(fq_value_as_str(v), "");
    fq_value_free(v);
    assert_null(fq_value_as_str(NULL));
    fq_value_free(NULL); /* allowed */
}

static void test_num_raw(void **state)
{
    (void)state;

    static const struct {
        const char *raw;
        bool ok, is_int;
        int64_t i;
        double d;
    } cases[] = {
        {"0", true, true, 0, 0},
        {"-7", true, true, -7, -7},
        {"+7", true, true, 7, 7},
        {"0x10", true, true, 16, 16},
        {"0o10", true, true, 8, 8},
        {"1e3", true, true, 1000, 1000},
        {"2.50", true, false, 0, 2.5},
        {"1.", true, true, 1, 1},
        {".25", true, false, 0, 0.25},
        {"9223372036854775807", true, true, INT64_MAX, 9223372036854775807.0},
        {"9223372036854775808", true, false, 0, 9223372036854775808.0},
        {"1e300", true, false, 0, 1e300},
        {"", false, false, 0, 0},
        {"abc", false, false, 0, 0},
        {"1e", false, false, 0, 0},
        {"--1", false, false, 0, 0},
        {"0x", false, false, 0, 0},
        {"-0x1", false, false, 0, 0},
        {"1.2.3", false, false, 0, 0},
        {"16Gi", false, false, 0, 0},
        {" 1", false, false, 0, 0},
    };

    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct fq_value *v = fq_value_num_raw(cases[k].raw);
        if (!cases[k].ok) {
            if (v)
                fail_msg("\"%s\" read as a number", cases[k].raw);
            continue;
        }
        if (!v)
            fail_msg("\"%s\" not read as a number", cases[k].raw);
        assert_string_equal(v->u.num.raw, cases[k].raw);
        if (v->u.num.is_int != cases[k].is_int)
            fail_msg("\"%s\": is_int %d", cases[k].raw, v->u.num.is_int);
        if (cases[k].is_int)
            assert_int_equal(v->u.num.i, cases[k].i);
        assert_true(v->u.num.d == cases[k].d);
        fq_value_free(v);
    }
    struct fq_value *v = fq_value_num_raw(".nan");
    assert_true(isnan(v->u.num.d));
    fq_value_free(v);
    assert_null(fq_value_num_raw(NULL));
}

static void test_map_order_and_ops(void **state)
{
    (void)state;
    struct fq_value *m = fq_value_map();
    fq_map_set(m, "kind", fq_value_str("Job"));
    fq_map_set(m, "apiVersion", fq_value_str("batch/v1"));
    fq_map_set(m, "metadata", fq_value_map());
    assert_json(m, "{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\","
                   "\"metadata\":{}}");
    /* Replacing keeps the position. */
    fq_map_set(m, "kind", fq_value_str("RayJob"));
    assert_json(m, "{\"kind\":\"RayJob\",\"apiVersion\":\"batch/v1\","
                   "\"metadata\":{}}");
    assert_int_equal(fq_value_len(m), 3);
    assert_true(fq_map_del(m, "kind"));
    assert_false(fq_map_del(m, "kind"));
    assert_json(m, "{\"apiVersion\":\"batch/v1\",\"metadata\":{}}");
    struct fq_value *md = fq_map_get(m, "metadata");
    assert_ptr_equal(fq_map_ensure_map(m, "metadata"), md);
    struct fq_value *labels = fq_map_ensure_map(md, "labels");
    fq_map_set(labels, "a", fq_value_int(1));
    /* ensure_map replaces a non-map. */
    fq_map_set(m, "spec", fq_value_int(5));
    fq_map_set(fq_map_ensure_map(m, "spec"), "x", fq_value_bool(false));
    assert_json(m, "{\"apiVersion\":\"batch/v1\",\"metadata\":{\"labels\":"
                   "{\"a\":1}},\"spec\":{\"x\":false}}");
    /* Getters on the wrong type or NULL. */
    assert_null(fq_map_get(NULL, "a"));
    assert_null(fq_map_get(labels, NULL));
    assert_null(fq_map_get(fq_map_get(m, "apiVersion"), "a"));
    /* Many keys: lookups still find every one. */
    for (int i = 0; i < 500; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", i);
        fq_map_set(labels, k, fq_value_int(i));
    }
    assert_int_equal(fq_value_len(labels), 501);
    assert_int_equal(fq_value_path_int(labels, "k377", -1), 377);
    fq_value_free(m);
}

static void test_seq(void **state)
{
    (void)state;
    struct fq_value *s = fq_value_seq();
    for (int i = 0; i < 100; i++)
        fq_seq_push(s, fq_value_int(i));
    assert_int_equal(fq_value_len(s), 100);
    assert_int_equal(fq_seq_at(s, 42)->u.num.i, 42);
    assert_null(fq_seq_at(s, 100));
    assert_null(fq_seq_at(NULL, 0));
    assert_int_equal(fq_value_len(NULL), 0);
    struct fq_value *str = fq_value_str("x");
    assert_int_equal(fq_value_len(str), 0);
    fq_value_free(str);
    fq_value_free(s);
}

static void test_paths(void **state)
{
    (void)state;
    struct fq_value *v = J("{\"metadata\":{\"name\":\"q\",\"labels\":{"
                           "\"kueue.x-k8s.io/queue-name\":\"user\"}},"
                           "\"spec\":{\"replicas\":3,\"suspend\":true,"
                           "\"big\":99999999999999999999,\"half\":1.5}}");
    assert_string_equal(fq_value_path_str(v, "metadata.name", "-"), "q");
    assert_string_equal(fq_value_path_str(v, "metadata.nope", "-"), "-");
    assert_string_equal(fq_value_path_str(v, "spec.replicas", "-"), "-");
    assert_int_equal(fq_value_path_int(v, "spec.replicas", -1), 3);
    assert_int_equal(fq_value_path_int(v, "spec.big", -1), -1);
    assert_int_equal(fq_value_path_int(v, "spec.half", -1), -1);
    assert_int_equal(fq_value_path_int(v, "metadata.name", -1), -1);
    assert_true(fq_value_path_bool(v, "spec.suspend", false));
    assert_false(fq_value_path_bool(v, "spec.replicas", false));
    assert_null(fq_value_path(v, "spec.replicas.x"));
    assert_null(fq_value_path(NULL, "a"));
    assert_ptr_equal(fq_value_path(v, "spec"), fq_map_get(v, "spec"));
    /* Keys containing dots are reached through fq_map_get. */
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(v, "metadata.labels"),
                                   "kueue.x-k8s.io/queue-name")),
        "user");

    fq_value_set_path(v, "status.conditions.ready", fq_value_bool(true));
    fq_value_set_path(v, "spec.replicas", fq_value_int(4));
    fq_value_set_path(v, "metadata.name.sub", fq_value_str("x"));
    assert_true(fq_value_path_bool(v, "status.conditions.ready", false));
    assert_int_equal(fq_value_path_int(v, "spec.replicas", -1), 4);
    assert_string_equal(fq_value_path_str(v, "metadata.name.sub", ""), "x");
    /* A long key on the path. */
    char path[400];
    memset(path, 'a', 300);
    strcpy(path + 300, ".b");
    fq_value_set_path(v, path, fq_value_int(1));
    assert_int_equal(fq_value_path_int(v, path, 0), 1);
    fq_value_free(v);

    /* Empty segments name the empty key; keys that share a prefix, a
     * first byte or a length with a segment do not match it. */
    v = J("{\"\":{\"x\":1},\"a\":{\"\":{\"b\":2}},\"ab\":3,\"ba\":4,"
          "\"abc\":{\"d\":5}}");
    assert_int_equal(fq_value_path_int(v, ".x", 0), 1);
    assert_int_equal(fq_value_path_int(v, "a..b", 0), 2);
    assert_ptr_equal(fq_value_path(v, ""), fq_map_get(v, ""));
    assert_int_equal(fq_value_path_int(v, "ab", 0), 3);
    assert_int_equal(fq_value_path_int(v, "ba", 0), 4);
    assert_int_equal(fq_value_path_int(v, "abc.d", 0), 5);
    assert_null(fq_value_path(v, "ab."));
    assert_null(fq_value_path(v, "abcd"));
    assert_null(fq_value_path(v, "ab."));
    assert_null(fq_value_path(v, "ab.c"));
    fq_value_set_path(v, "a..c", fq_value_int(6));
    assert_int_equal(fq_value_path_int(v, "a..c", 0), 6);
    assert_int_equal(fq_value_len(fq_value_path(v, "a.")), 2);
    /* A dotted path never reaches a key with a dot, even one that spells
     * the path out: its dots separate keys. */
    fq_map_set(v, "x.y", fq_value_int(7));
    fq_map_set(v, ".y", fq_value_int(8));
    assert_null(fq_value_path(v, "x.y"));
    assert_null(fq_value_path(v, ".y"));
    fq_value_set_path(v, "x.y", fq_value_int(9));
    assert_int_equal(fq_value_path_int(v, "x.y", 0), 9);
    assert_int_equal(fq_map_get(v, "x.y")->u.num.i, 7);
    assert_int_equal(fq_map_get(v, ".y")->u.num.i, 8);
    /* A member's klen and kpre are its key's length and prefix, whoever
     * made it. */
    struct fq_value *c = fq_value_clone(v);
    fq_map_set(c, "new", fq_value_null());
    for (size_t i = 0; i < c->u.map.n; i++) {
        const struct fq_member *mem = &c->u.map.items[i];
        assert_int_equal(mem->klen, strlen(mem->key));
        assert_true(mem->kpre == (uint32_t)fq_key_prefix(mem->key, mem->klen));
    }
    assert_true(fq_value_equal(fq_map_get(c, "a"), fq_map_get(v, "a")));
    fq_value_free(c);
    fq_value_free(v);
}

/* A key the compiler cannot see through, so that a lookup measures it and
 * takes its prefix at run time. */
static const char *opaque(const char *s)
{
    static char buf[128];
    snprintf(buf, sizeof(buf), "%s", s);
    return buf;
}

static void test_key_prefix(void **state)
{
    (void)state;
    /* Keys alike in their first 8 bytes, or in their first bytes and not
     * their lengths, or only past a dot, are told apart whether a lookup's
     * key is a literal or not. */
    static const char *const keys[] = {
        "",
        "a",
        "ab",
        "name",
        "names",
        "metadata",
        "metadatA",
        "metadata1",
        "metadata2",
        "creationTimestamp",
        "creationTimestamq",
        "\xc3\xa9t\xc3\xa9",
    };
    size_t nk = sizeof(keys) / sizeof(keys[0]);
    assert_true(fq_key_prefix("name", 4) != fq_key_prefix("names", 5));
    assert_true(fq_key_prefix("metadata1", 9) == fq_key_prefix("metadata2", 9));
    assert_true(fq_key_prefix("ab", 2) == ('a' | 'b' << 8));
    assert_true(fq_key_prefix("x", 0) == 0);
    /* At run time (loads, overlapping for 4 to 7 bytes), every length
     * gives the bytes one by one would: k[i] at bits 8i, zero above. */
    static const char bytes[] = "\x01\x82\x03\xf4\x05\x06\x87\x08\x09\x0a";
    for (size_t n = 0; n <= 10; n++) {
        uint64_t want = 0;
        for (size_t i = 0; i < n && i < 8; i++)
            want |= (uint64_t)(unsigned char)bytes[i] << (8 * i);
        assert_true(fq_key_prefix(opaque(bytes), n) == want);
    }
    /* Keys of 9 to 26 bytes alike but for one byte past the eighth, at
     * each place: each finds only itself. */
    for (size_t n = 9; n <= 26; n++) {
        struct fq_value *alike = fq_value_map();
        char key[32];
        for (size_t at = 8; at < n; at++) {
            memset(key, 'k', n);
            key[n] = '\0';
            key[at] = 'X';
            fq_map_set(alike, key, fq_value_int((int64_t)at));
        }
        for (size_t at = 8; at < n; at++) {
            memset(key, 'k', n);
            key[n] = '\0';
            key[at] = 'X';
            assert_int_equal(fq_map_get(alike, opaque(key))->u.num.i, at);
        }
        memset(key, 'k', n);
        key[n] = '\0';
        assert_null(fq_map_get(alike, opaque(key)));
        fq_value_free(alike);
    }
    struct fq_value *m = fq_value_map(), *deep = fq_value_map();
    for (size_t i = 0; i < nk; i++) {
        fq_map_set(m, keys[i], fq_value_int((int64_t)i));
        fq_map_set(fq_map_ensure_map(deep, keys[i]), keys[i],
                   fq_value_int((int64_t)i));
    }
    for (size_t i = 0; i < nk; i++) {
        assert_int_equal(fq_map_get(m, opaque(keys[i]))->u.num.i, i);
        char path[80];
        snprintf(path, sizeof(path), "%s.%s", keys[i], keys[i]);
        assert_int_equal(fq_value_path_int(deep, opaque(path), -1), i);
    }
    assert_int_equal(fq_map_get(m, "metadata2")->u.num.i, 8);
    assert_int_equal(fq_map_get(m, "creationTimestamq")->u.num.i, 10);
    assert_int_equal(fq_value_path_int(deep, "metadata1.metadata1", -1), 7);
    assert_int_equal(fq_value_path_int(deep, "metadata1.metadata2", -1), -1);
    assert_null(fq_map_get(m, "metadata3"));
    assert_null(fq_map_get(m, "creationTimestam"));
    assert_null(fq_map_get(m, opaque("nam")));
    assert_true(fq_map_del(m, "metadata1"));
    assert_null(fq_map_get(m, "metadata1"));
    assert_int_equal(fq_map_get(m, "metadata2")->u.num.i, 8);
    fq_value_free(m);
    fq_value_free(deep);
}

/* Well-known keys are static text shared by every tree; a key that only
 * looks like one (same length and first 8 bytes, or a prefix of one) is
 * a copy of its own. Either kind clones, compares, deletes and frees
 * alike (the sanitizer build catches a free of the static text). */
static void test_well_known_keys(void **state)
{
    (void)state;
    static const char *const keys[] = {
        "name",
        "status",
        "flexq.dev/slice",
        "flexq.dev/slicX",
        "flexq.dev/sli",
        "nvidia.com/gpu",
        "nvidia.com/gpX",
        "nam",
        "lastTransitionTime",
    };
    static const bool known[] = {true, true,  true,  false, false,
                                 true, false, false, true};
    size_t nk = sizeof(keys) / sizeof(keys[0]);
    struct fq_value *a = fq_value_map(), *b = fq_value_map();
    for (size_t i = 0; i < nk; i++) {
        fq_map_set(a, keys[i], fq_value_int((int64_t)i));
        fq_map_set(b, opaque(keys[i]), fq_value_int((int64_t)i));
    }
    struct fq_value *c = fq_value_clone(a);
    for (size_t i = 0; i < nk; i++) {
        const struct fq_member *ma = &a->u.map.items[i];
        const struct fq_member *mb = &b->u.map.items[i];
        const struct fq_member *mc = &c->u.map.items[i];
        assert_string_equal(ma->key, keys[i]);
        assert_int_equal(ma->well_known, known[i]);
        assert_int_equal(mb->well_known, known[i]);
        assert_int_equal(mc->well_known, known[i]);
        /* shared text, or a copy of each */
        assert_int_equal(ma->key == mb->key, known[i]);
        assert_int_equal(ma->key == mc->key, known[i]);
        assert_int_equal(fq_map_get(c, opaque(keys[i]))->u.num.i, i);
    }
    assert_true(fq_value_equal(a, b));
    assert_true(fq_value_equal(a, c));
    for (size_t i = 0; i < nk; i += 2)
        assert_true(fq_map_del(c, keys[i]));
    assert_int_equal(c->u.map.n, nk / 2);
    fq_value_free(c);
    fq_value_free(b);
    fq_value_free(a);
}

/* Paths split at every position around the 8 bytes a segment is first
 * read in: segments of 0 to 11 bytes, some with bytes next to '.' (0x2e)
 * in value ('-' 0x2d, '/' 0x2f) or above 0x7f, 2 and 3 deep, each found
 * under its own keys and no other. */
static void test_path_segments(void **state)
{
    (void)state;
    static const char *const keys[] = {
        "",
        "x",
        "ab/",
        "abcdefg",
        "abcdefgh",
        "abcdefgh/",
        "-/-/-/-/-/",
        "\xc3\xa9t\xc3\xa9s",
        "abcdefghijk",
    };
    size_t nk = sizeof(keys) / sizeof(keys[0]);
    struct fq_value *root = fq_value_map();
    for (size_t i = 0; i < nk; i++)
        for (size_t j = 0; j < nk; j++) {
            struct fq_value *m = fq_map_ensure_map(root, keys[i]);
            fq_map_set(m, keys[j], fq_value_int((int64_t)(i * nk + j)));
            struct fq_value *deep = fq_map_ensure_map(
                fq_map_ensure_map(fq_map_ensure_map(root, "d"), keys[i]),
                keys[j]);
            fq_map_set(deep, keys[i], fq_value_int((int64_t)(i * nk + j)));
        }
    char path[80];
    for (size_t i = 0; i < nk; i++)
        for (size_t j = 0; j < nk; j++) {
            int64_t want = (int64_t)(i * nk + j);
            snprintf(path, sizeof(path), "%s.%s", keys[i], keys[j]);
            assert_int_equal(fq_value_path_int(root, opaque(path), -1), want);
            snprintf(path, sizeof(path), "d.%s.%s.%s", keys[i], keys[j],
                     keys[i]);
            assert_int_equal(fq_value_path_int(root, opaque(path), -1), want);
            /* one byte more or less in a segment finds nothing */
            snprintf(path, sizeof(path), "%s.%sz", keys[i], keys[j]);
            assert_int_equal(fq_value_path_int(root, opaque(path), -1), -1);
            snprintf(path, sizeof(path), "%s~.%s", keys[i], keys[j]);
            assert_int_equal(fq_value_path_int(root, opaque(path), -1), -1);
        }
    fq_value_free(root);
}

static void test_clone_equal(void **state)
{
    (void)state;
    struct fq_value *a = J("{\"a\":[1,\"x\",null,true,{\"b\":1e3}],"
                           "\"c\":{},\"d\":123456789012345678901}");
    a->line = 3;
    struct fq_value *b = fq_value_clone(a);
    assert_true(fq_value_equal(a, b));
    assert_int_equal(b->line, 3);
    assert_ptr_not_equal(fq_map_get(a, "a"), fq_map_get(b, "a"));
    /* Maps compare as unordered; sequences as ordered. */
    struct fq_value *c = J("{\"d\":123456789012345678901,\"c\":{},"
                           "\"a\":[1,\"x\",null,true,{\"b\":1000}]}");
    assert_true(fq_value_equal(a, c));
    fq_value_set_path(b, "c.x", fq_value_null());
    assert_false(fq_value_equal(a, b));
    fq_value_free(b);
    fq_value_free(c);
    c = J("{\"d\":123456789012345678902,\"c\":{},"
          "\"a\":[1,\"x\",null,true,{\"b\":1000}]}");
    assert_false(fq_value_equal(a, c)); /* big integers by their digits */
    fq_value_free(c);
    c = J("{\"d\":123456789012345678901,\"c\":{},"
          "\"a\":[\"x\",1,null,true,{\"b\":1000}]}");
    assert_false(fq_value_equal(a, c));
    fq_value_free(c);

    struct fq_value *one = fq_value_int(1), *uno = fq_value_num_raw("1.0"),
                    *s1 = fq_value_str("1"), *two = fq_value_int(2);
    assert_true(fq_value_equal(one, uno));
    assert_false(fq_value_equal(one, s1));
    assert_false(fq_value_equal(one, two));
    assert_true(fq_value_equal(NULL, NULL));
    assert_false(fq_value_equal(one, NULL));
    assert_null(fq_value_clone(NULL));
    fq_value_free(one);
    fq_value_free(uno);
    fq_value_free(s1);
    fq_value_free(two);
    fq_value_free(a);
}

/* fq_value_free walks a ring of 256 pending nodes and frees children that
 * find it full by a call of their own: a tree far wider and deeper than
 * the ring, with every kind of node, survives a clone and frees whole
 * (under `make asan`, a node missed or freed twice fails the test). */
static void test_free_wide_tree(void **state)
{
    (void)state;
    struct fq_value *root = fq_value_map();
    struct fq_value *wide = fq_value_seq();
    for (int i = 0; i < 1000; i++) {
        struct fq_value *m = fq_value_map();
        fq_map_set(m, "name", fq_value_strf("item-%d-with-a-long-name", i));
        fq_map_set(m, "count", fq_value_num_raw("123456789.25"));
        fq_map_set(m, "ok", fq_value_bool(i % 2));
        fq_map_set(m, "none", fq_value_null());
        struct fq_value *inner = fq_value_seq();
        for (int j = 0; j < 300 * (i == 500); j++)
            fq_seq_push(inner, fq_value_int(j));
        fq_map_set(m, "inner", inner);
        fq_seq_push(wide, m);
    }
    fq_map_set(root, "wide", wide);
    struct fq_value *deep = fq_value_str("leaf");
    for (int d = 0; d < 60; d++) {
        struct fq_value *m = fq_value_map();
        fq_map_set(m, "a-key-longer-than-eight-bytes", deep);
        deep = m;
    }
    fq_map_set(root, "deep", deep);
    struct fq_value *copy = fq_value_clone(root);
    assert_true(fq_value_equal(root, copy));
    assert_int_equal(fq_value_len(fq_value_path(copy, "wide")), 1000);
    assert_int_equal(fq_value_len(fq_map_get(
                         fq_seq_at(fq_value_path(copy, "wide"), 500), "inner")),
                     300);
    fq_value_free(root);
    fq_value_free(copy);
}

/* RFC 7386, appendix A, plus patches applied to an absent target. */
static void test_merge_patch(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        {"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
        {"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
        {"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
        {"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}",
         "{\"a\":{\"b\":\"d\"}}"},
        {"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
        {"[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]"},
        {"{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]"},
        {"{\"a\":\"foo\"}", "null", "null"},
        {"{\"a\":\"foo\"}", "\"bar\"", "\"bar\""},
        {"{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}"},
        {"[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}"},
        {"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
        /* flexq's own uses: status updates keep order and other fields */
        {"{\"spec\":{\"suspend\":true,\"x\":1},\"status\":{}}",
         "{\"spec\":{\"suspend\":false},\"status\":{\"phase\":\"Running\"}}",
         "{\"spec\":{\"suspend\":false,\"x\":1},\"status\":{\"phase\":"
         "\"Running\"}}"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fq_value *target = J(cases[i][0]);
        struct fq_value *patch = J(cases[i][1]);
        fq_value_merge_patch(&target, patch);
        char *got = fq_json_dumps(target, 0);
        if (strcmp(got, cases[i][2]))
            fail_msg("case %zu: got %s want %s", i, got, cases[i][2]);
        free(got);
        /* The patch is not consumed or changed. */
        char *p = fq_json_dumps(patch, 0);
        assert_string_equal(p, cases[i][1]);
        free(p);
        fq_value_free(patch);
        fq_value_free(target);
    }
    struct fq_value *target = NULL;
    struct fq_value *patch = J("{\"a\":{\"b\":null,\"c\":1}}");
    fq_value_merge_patch(&target, patch);
    assert_json(target, "{\"a\":{\"c\":1}}");
    fq_value_merge_patch(&target, NULL); /* no patch: no change */
    assert_json(target, "{\"a\":{\"c\":1}}");
    fq_value_free(patch);
    fq_value_free(target);
}

/* Big maps take the sorted paths of equal and merge patch: they must give
 * what key-by-key application gives, in the same order. */
/* fq_value_clone_sized counts, while copying, what fq_value_bytes counts
 * of the copy: strings and numbers inline and apart, tables, nesting. */
static void test_nonfinite(void **state)
{
    (void)state;
    struct fq_limits lim = fq_limits_default();
    struct fq_docs docs = {0};
    const char *y = "a: 1.5\nb: [2, -.inf]\nc: {d: .nan, e: \".nan\"}\n";
    assert_int_equal(fq_yaml_parse(y, strlen(y), "y", &lim, &docs, NULL), 0);
    assert_int_equal(fq_value_nonfinite(docs.items[0], NULL, NULL), 2);
    struct fq_err e = {0};
    assert_int_equal(fq_value_refuse_nonfinite(docs.items[0], "f.yaml", &e),
                     FQ_EPARSE);
    assert_non_null(strstr(e.msg, "f.yaml:2:8"));
    assert_non_null(strstr(e.msg, "-.inf is not a number JSON can carry"));
    fq_docs_release(&docs);
    struct fq_value *v = NULL;
    const char *j = "{\"n\": [1, 2.5, 1e999]}";
    assert_int_equal(fq_json_parse(j, strlen(j), "j", &lim, &v, NULL), 0);
    assert_int_equal(fq_value_refuse_nonfinite(v, "j", &e), FQ_EPARSE);
    assert_non_null(strstr(e.msg, "1e999"));
    fq_value_free(v);
    const char *ok = "{\"n\": [1, 2.5, -3e10, \"nan\"]}";
    assert_int_equal(fq_json_parse(ok, strlen(ok), "j", &lim, &v, NULL), 0);
    assert_int_equal(fq_value_refuse_nonfinite(v, "j", &e), 0);
    fq_value_free(v);
}

static void test_clone_sized(void **state)
{
    (void)state;
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "s", fq_value_str("ab"));
    fq_map_set(v, "long", fq_value_str("a string too long to sit inline"));
    fq_map_set(v, "n", fq_value_int(7));
    fq_map_set(v, "big", fq_value_int(1234567890));
    fq_map_set(v, "b", fq_value_bool(true));
    fq_map_set(v, "z", fq_value_null());
    struct fq_value *seq = fq_value_seq();
    for (int i = 0; i < 5; i++)
        fq_seq_push(seq, fq_value_strf("item-%d-with-some-length", i));
    fq_seq_push(seq, fq_value_map());
    fq_map_set(v, "seq", seq);
    fq_map_set(v, "empty", fq_value_seq());
    size_t bytes = 1;
    struct fq_value *c = fq_value_clone_sized(v, &bytes);
    assert_true(fq_value_equal(v, c));
    assert_int_equal(bytes, fq_value_bytes(c));
    /* More than the nodes alone: the long texts and the tables count. */
    assert_true(bytes > 12 * sizeof(struct fq_value) + 31);
    fq_value_free(c);
    c = fq_value_clone_sized(NULL, &bytes);
    assert_null(c);
    assert_int_equal(bytes, 0);
    fq_value_free(v);
}

static void test_big_maps(void **state)
{
    (void)state;
    struct fq_value *t = fq_value_map(), *patch = fq_value_map();
    for (int i = 0; i < 40; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%02d", i);
        if (i % 5 == 0) {
            struct fq_value *sub = fq_value_map();
            fq_map_set(sub, "x", fq_value_int(i));
            fq_map_set(sub, "y", fq_value_int(i));
            fq_map_set(t, k, sub);
        } else {
            fq_map_set(t, k, fq_value_int(i));
        }
    }
    /* Patch keys in a scrambled order: deletes, replacements, nested
     * merges, new keys, and deletes of keys that are not there. */
    for (int j = 0; j < 45; j++) {
        int i = (j * 17) % 45;
        char k[16];
        snprintf(k, sizeof(k), "k%02d", i);
        if (i >= 40 && i % 2)
            fq_map_set(patch, k, fq_value_null());
        else if (i >= 40)
            fq_map_set(patch, k, fq_value_strf("new%d", i));
        else if (i % 5 == 0)
            fq_map_set(patch, k, J("{\"x\":null,\"z\":{\"a\":null}}"));
        else if (i % 3 == 0)
            fq_map_set(patch, k, fq_value_null());
        else
            fq_map_set(patch, k, fq_value_int(-i));
    }
    struct fq_value *ref = fq_value_clone(t);
    for (size_t i = 0; i < patch->u.map.n; i++) {
        struct fq_value *one = fq_value_map();
        fq_map_set(one, patch->u.map.items[i].key,
                   fq_value_clone(patch->u.map.items[i].val));
        fq_value_merge_patch(&ref, one);
        fq_value_free(one);
    }
    struct fq_value *got = fq_value_clone(t);
    fq_value_merge_patch(&got, patch);
    char *a = fq_json_dumps(got, 0), *b = fq_json_dumps(ref, 0);
    assert_string_equal(a, b);
    assert_null(strstr(a, "\"k03\"")); /* deleted */
    assert_non_null(strstr(a, "\"k05\":{\"y\":5,\"z\":{}}"));
    assert_non_null(strstr(a, "\"k42\":\"new42\""));
    free(a);
    free(b);
    assert_true(fq_value_equal(got, ref));

    /* Equality of big maps in different orders, and a difference. */
    struct fq_value *rev = fq_value_map();
    for (size_t i = got->u.map.n; i-- > 0;)
        fq_map_set(rev, got->u.map.items[i].key,
                   fq_value_clone(got->u.map.items[i].val));
    assert_true(fq_value_equal(got, rev));
    fq_map_set(rev, "k01", fq_value_int(99));
    assert_false(fq_value_equal(got, rev));
    fq_map_del(rev, "k01");
    fq_map_set(rev, "zz", fq_value_int(-1));
    assert_false(fq_value_equal(got, rev));

    fq_value_free(rev);
    fq_value_free(got);
    fq_value_free(ref);
    fq_value_free(patch);
    fq_value_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constructors),
        cmocka_unit_test(test_num_raw),
        cmocka_unit_test(test_map_order_and_ops),
        cmocka_unit_test(test_seq),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_key_prefix),
        cmocka_unit_test(test_well_known_keys),
        cmocka_unit_test(test_path_segments),
        cmocka_unit_test(test_clone_equal),
        cmocka_unit_test(test_free_wide_tree),
        cmocka_unit_test(test_merge_patch),
        cmocka_unit_test(test_big_maps),
        cmocka_unit_test(test_clone_sized),
        cmocka_unit_test(test_nonfinite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
