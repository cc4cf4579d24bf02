/*
 * fuzz_yaml.c - libFuzzer target for the YAML reader and writer.
 *
 * Any input may be refused, but never crash, leak or hang. Every document
 * that is accepted must survive two round trips:
 *   tree -> fq_yaml_encode -> fq_yaml_parse -> an equal tree
 *   tree -> fq_json_encode -> fq_json_parse -> an equal tree
 * (the JSON one is skipped for trees holding .inf/.nan, which JSON cannot
 * say). The input is also used as one string, as a value and as a key, to
 * drive the writer's quoting with any text (when it is valid UTF-8 without
 * NUL, which is what a string can hold). A failed round trip aborts, so
 * libFuzzer records the input.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool has_nonfinite(const struct fq_value *v)
{
    switch (v->type) {
    case FQ_V_NUM:
        return !isfinite(v->u.num.d);
    case FQ_V_SEQ:
        for (size_t i = 0; i < v->u.seq.n; i++)
            if (has_nonfinite(v->u.seq.items[i]))
                return true;
        return false;
    case FQ_V_MAP:
        for (size_t i = 0; i < v->u.map.n; i++)
            if (has_nonfinite(v->u.map.items[i].val))
                return true;
        return false;
    default:
        return false;
    }
}

static void check(bool ok, const char *what, const char *text)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz_yaml: %s\n--- text ---\n%s\n", what, text);
    abort();
}

/* Valid UTF-8, no NUL, no surrogates: a string a tree may hold. */
static bool utf8_ok(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        size_t len;
        uint32_t cp, min;
        if (c == 0)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF)
            len = 2, min = 0x80, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF)
            len = 3, min = 0x800, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4)
            len = 4, min = 0x10000, cp = c & 0x07;
        else
            return false;
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

static void string_roundtrip(const uint8_t *data, size_t size)
{
    if (!utf8_ok(data, size))
        return;
    struct fq_value *m = fq_value_map();
    struct fq_value *s = fq_value_strn((const char *)data, size);
    fq_map_set(m, "v", fq_value_clone(s));
    fq_map_set(m, s->u.str.s, fq_value_clone(s));
    struct fq_value *seq = fq_value_seq();
    fq_seq_push(seq, s);
    fq_map_set(m, "seq", seq);
    struct fq_buf y = FQ_BUF_INIT;
    fq_yaml_encode(m, &y);
    struct fq_limits lim = fq_limits_default();
    struct fq_docs back = {0};
    struct fq_err err;
    int rc = fq_yaml_parse(y.data, y.len, "re", &lim, &back, &err);
    check(rc == 0, err.msg, fq_buf_str(&y));
    check(back.n == 1 && fq_value_equal(back.items[0], m), "string round trip",
          fq_buf_str(&y));
    fq_docs_release(&back);
    fq_buf_release(&y);
    fq_value_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    string_roundtrip(data, size);
    struct fq_limits lim = fq_limits_default();
    lim.max_nodes = 20000; /* keeps each run fast; the logic is the same */
    struct fq_docs docs = {0};
    struct fq_err err;
    if (fq_yaml_parse((const char *)data, size, "fuzz", &lim, &docs, &err)) {
        check(docs.n == 0, "documents left after an error", "");
        check(err.msg[0] != '\0', "error without a message", "");
        return 0;
    }
    struct fq_limits again = lim;
    again.max_bytes = SIZE_MAX; /* an expanded alias may grow the text */
    for (size_t i = 0; i < docs.n; i++) {
        const struct fq_value *v = docs.items[i];
        struct fq_buf y = FQ_BUF_INIT;
        fq_yaml_encode(v, &y);
        struct fq_docs back = {0};
        int rc = fq_yaml_parse(y.data, y.len, "re", &again, &back, &err);
        check(rc == 0, err.msg, fq_buf_str(&y));
        check(back.n == 1, "YAML round trip: document count", fq_buf_str(&y));
        check(fq_value_equal(back.items[0], v), "YAML round trip: value",
              fq_buf_str(&y));
        fq_docs_release(&back);
        fq_buf_release(&y);

        if (has_nonfinite(v))
            continue;
        char *json = fq_json_dumps(v, FQ_JSON_COMPACT);
        struct fq_value *jv = NULL;
        rc = fq_json_parse(json, strlen(json), "re", &again, &jv, &err);
        check(rc == 0, err.msg, json);
        check(fq_value_equal(jv, v), "JSON round trip: value", json);
        fq_value_free(jv);
        free(json);
    }
    fq_docs_release(&docs);
    return 0;
}
