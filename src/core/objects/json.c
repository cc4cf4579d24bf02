/*
 * json.c - JSON text to struct fq_value and back (see value.h).
 *
 * Why not jansson: jansson turns numbers into json_int_t or double, so a
 * 30-digit integer is an error and "1e3" comes back as "1000.0"; flexq
 * keeps every number's source text (a quantity like 1e3 must survive a
 * round trip). This file is therefore a small recursive-descent parser of
 * RFC 8259 written for the purpose, and includes no third-party header.
 *
 * How it works. parse_value() dispatches on the first byte; containers
 * recurse with depth + 1, checked against fq_limits.max_depth before the
 * call (and a hard ceiling of 4096 whatever the caller asks, so hostile
 * input cannot exhaust the C stack). Every node counts against max_nodes,
 * every string and number against max_string, the whole text against
 * max_bytes. Positions are tracked as (line, byte column), 1-based: only
 * whitespace contains newlines, so the line counter lives in skip_ws().
 * Duplicate object keys are an error (sorted check when the object is
 * complete, so a hostile object with many keys costs n log n, not n^2).
 *
 * Strings must be valid UTF-8; escapes \uXXXX pair surrogates; a lone
 * surrogate and \u0000 are errors (flexq strings are C strings).
 *
 * The encoder writes numbers from their raw text when that text is a valid
 * JSON number, else from the integer or the double (YAML's 0x1F or +1 or
 * .inf are not JSON: 31, 1, and null for non-finite values). Strings are
 * escaped minimally ("\\", "\"", control characters); invalid UTF-8 bytes,
 * possible only in trees built in code, become U+FFFD so the output is
 * always valid JSON.
 *
 * Invariants: on error *out is NULL and nothing leaks; the encoder never
 * fails.
 *
 * What it does not do: no comments, no trailing commas, no NaN/Infinity
 * literals, no streaming.
 */
#include "flexq/value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "objects/value_internal.h"

#define HARD_MAX_DEPTH 4096

struct parser {
    const char *s, *end, *p;
    const char *name;
    struct fq_limits lim;
    size_t nodes;
    int line;
    const char *line_start;
    struct fq_err *err;
    struct fq_buf tmp; /* scratch for strings with escapes */
    const char *str;   /* the last string parsed (parse_string) */
    size_t slen;
};

static int col_of(const struct parser *ps, const char *at)
{
    return (int)(at - ps->line_start) + 1;
}

static int fail_at(struct parser *ps, int code, const char *at,
                   const char *what)
{
    return fq_err_at(ps->err, code, ps->name, ps->line, col_of(ps, at), NULL,
                     "%s", what);
}

static void skip_ws(struct parser *ps)
{
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == '\n') {
            ps->line++;
            ps->line_start = ps->p + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            break;
        }
        ps->p++;
    }
}

static int count_node(struct parser *ps)
{
    if (++ps->nodes > ps->lim.max_nodes)
        return fail_at(ps, FQ_ELIMIT, ps->p, "too many nodes");
    return 0;
}

static int parse_value(struct parser *ps, size_t depth, struct fq_value **out);

static void put_utf8(struct fq_buf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    fq_buf_append(b, u, n);
}

static int hex4(const char *p, const char *end, unsigned *out)
{
    if (end - p < 4)
        return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/*
 * Parses the string at ps->p (a '"'): on success ps->str and ps->slen are
 * its text, which holds no NUL (a raw control character or \u0000 is an
 * error). A string without escapes, nearly every one, is not copied:
 * ps->str points into the input (and is not NUL-terminated there), and
 * the bytes are skipped a run at a time, the ASCII ones with one compare
 * each, where a decode and a one-byte append per character made the
 * parse of a stored object most of flexqd's start-up. A string with
 * escapes is built in ps->tmp, run by run.
 */
static int parse_string(struct parser *ps)
{
    const char *start = ps->p;
    const char *run = ++ps->p; /* the bytes not yet in tmp */
    bool copied = false;
    for (;;) {
        const char *p = ps->p, *end = ps->end;
        while (p < end && (unsigned char)*p >= 0x20 &&
               (unsigned char)*p < 0x80 && *p != '"' && *p != '\\')
            p++;
        ps->p = p;
        if (p >= end)
            return fail_at(ps, FQ_EPARSE, start, "unterminated string");
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            if (copied) {
                fq_buf_append(&ps->tmp, run, (size_t)(p - run));
                ps->str = ps->tmp.data;
                ps->slen = ps->tmp.len;
            } else {
                ps->str = run;
                ps->slen = (size_t)(p - run);
            }
            ps->p++;
            break;
        }
        if (c < 0x20)
            return fail_at(ps, FQ_EPARSE, ps->p, "control character in string");
        if (c != '\\') {
            size_t n = fq_utf8_decode((const unsigned char *)ps->p,
                                      (const unsigned char *)ps->end, NULL);
            if (!n)
                return fail_at(ps, FQ_EPARSE, ps->p, "invalid UTF-8");
            ps->p += n;
            continue;
        }
        if (!copied) {
            fq_buf_reset(&ps->tmp);
            copied = true;
        }
        fq_buf_append(&ps->tmp, run, (size_t)(p - run));
        if (ps->tmp.len > ps->lim.max_string)
            return fail_at(ps, FQ_ELIMIT, start,
                           "string longer than the limit");
        const char *esc = ps->p;
        if (ps->p + 1 >= ps->end)
            return fail_at(ps, FQ_EPARSE, start, "unterminated string");
        char e = ps->p[1];
        ps->p += 2;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            fq_buf_putc(&ps->tmp, e);
            break;
        case 'b':
            fq_buf_putc(&ps->tmp, '\b');
            break;
        case 'f':
            fq_buf_putc(&ps->tmp, '\f');
            break;
        case 'n':
            fq_buf_putc(&ps->tmp, '\n');
            break;
        case 'r':
            fq_buf_putc(&ps->tmp, '\r');
            break;
        case 't':
            fq_buf_putc(&ps->tmp, '\t');
            break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(ps->p, ps->end, &cp))
                return fail_at(ps, FQ_EPARSE, esc, "invalid \\u escape");
            ps->p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (ps->end - ps->p < 6 || ps->p[0] != '\\' ||
                    ps->p[1] != 'u' || hex4(ps->p + 2, ps->end, &lo) ||
                    lo < 0xDC00 || lo > 0xDFFF)
                    return fail_at(ps, FQ_EPARSE, esc,
                                   "unpaired surrogate in \\u escape");
                ps->p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail_at(ps, FQ_EPARSE, esc,
                               "unpaired surrogate in \\u escape");
            } else if (cp == 0) {
                return fail_at(ps, FQ_EPARSE, esc,
                               "\\u0000 is not allowed in strings");
            }
            put_utf8(&ps->tmp, cp);
            break;
        }
        default:
            return fail_at(ps, FQ_EPARSE, esc, "invalid escape in string");
        }
        run = ps->p;
    }
    if (ps->slen > ps->lim.max_string)
        return fail_at(ps, FQ_ELIMIT, start, "string longer than the limit");
    return 0;
}

static bool isdig(char c)
{
    return c >= '0' && c <= '9';
}

static int parse_number(struct parser *ps, struct fq_value **out)
{
    const char *start = ps->p, *p = ps->p, *end = ps->end;
    if (p < end && *p == '-')
        p++;
    if (p < end && *p == '0') {
        p++;
    } else if (p < end && isdig(*p)) {
        while (p < end && isdig(*p))
            p++;
    } else {
        return fail_at(ps, FQ_EPARSE, start, "invalid number");
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !isdig(*p))
            return fail_at(ps, FQ_EPARSE, start, "invalid number");
        while (p < end && isdig(*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !isdig(*p))
            return fail_at(ps, FQ_EPARSE, start, "invalid number");
        while (p < end && isdig(*p))
            p++;
    }
    size_t n = (size_t)(p - start);
    if (n > ps->lim.max_string)
        return fail_at(ps, FQ_ELIMIT, start, "number longer than the limit");
    /* The text NUL-terminated for fq_value_num_raw: on the stack when
     * short (nearly always), not in a block of its own. */
    char small[64];
    char *raw = n < sizeof(small) ? small : fq_xmalloc(n + 1);
    memcpy(raw, start, n);
    raw[n] = '\0';
    *out = fq_value_num_raw(raw);
    if (raw != small)
        free(raw);
    if (!*out) /* cannot happen: JSON numbers are YAML core numbers */
        return fail_at(ps, FQ_EPARSE, start, "invalid number");
    ps->p = p;
    return 0;
}

static bool match_word(struct parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n))
        return false;
    ps->p += n;
    return true;
}

static int parse_object(struct parser *ps, size_t depth, struct fq_value **out)
{
    struct fq_value *m = fq_value_map();
    m->line = (uint32_t)ps->line;
    m->col = (uint32_t)col_of(ps, ps->p);
    *out = m;
    ps->p++; /* '{' */
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        return 0;
    }
    for (;;) {
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != '"')
            return fail_at(ps, FQ_EPARSE, ps->p, "expected a string key");
        int kline = ps->line, kcol = col_of(ps, ps->p);
        int rc = count_node(ps);
        if (!rc)
            rc = parse_string(ps);
        if (rc)
            return rc;
        struct fq_member *mem = fq_value_map_append(m, ps->str, ps->slen, NULL);
        mem->line = (uint32_t)kline;
        mem->col = (uint32_t)kcol;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':')
            return fail_at(ps, FQ_EPARSE, ps->p, "expected ':' after key");
        ps->p++;
        rc = parse_value(ps, depth, &mem->val);
        if (rc)
            return rc;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            break;
        }
        return fail_at(ps, FQ_EPARSE, ps->p, "expected ',' or '}'");
    }
    size_t dup = fq_value_map_find_duplicate(m);
    if (dup < m->u.map.n) {
        const struct fq_member *d = &m->u.map.items[dup];
        char what[FQ_ERR_MSG_MAX / 2];
        snprintf(what, sizeof(what), "duplicate key \"%.200s\"", d->key);
        return fq_err_at(ps->err, FQ_EPARSE, ps->name, (int)d->line,
                         (int)d->col, NULL, "%s", what);
    }
    fq_value_fit(m);
    return 0;
}

static int parse_array(struct parser *ps, size_t depth, struct fq_value **out)
{
    struct fq_value *s = fq_value_seq();
    s->line = (uint32_t)ps->line;
    s->col = (uint32_t)col_of(ps, ps->p);
    *out = s;
    ps->p++; /* '[' */
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        return 0;
    }
    for (;;) {
        fq_seq_push(s, NULL); /* the slot parse_value fills */
        struct fq_value **slot = &s->u.seq.items[s->u.seq.n - 1];
        int rc = parse_value(ps, depth, slot);
        if (rc) {
            if (!*slot)
                s->u.seq.n--;
            return rc;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            ps->p++;
            fq_value_fit(s);
            return 0;
        }
        return fail_at(ps, FQ_EPARSE, ps->p, "expected ',' or ']'");
    }
}

/* Parses one value at depth `depth` (the container it sits in). */
static int parse_value(struct parser *ps, size_t depth, struct fq_value **out)
{
    *out = NULL;
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail_at(ps, FQ_EPARSE, ps->p, "unexpected end of input");
    int rc = count_node(ps);
    if (rc)
        return rc;
    int line = ps->line, col = col_of(ps, ps->p);
    char c = *ps->p;
    if (c == '{' || c == '[') {
        if (depth + 1 > ps->lim.max_depth || depth + 1 > HARD_MAX_DEPTH)
            return fail_at(ps, FQ_ELIMIT, ps->p,
                           "nesting deeper than the limit");
        return c == '{' ? parse_object(ps, depth + 1, out) :
                          parse_array(ps, depth + 1, out);
    }
    if (c == '"') {
        rc = parse_string(ps);
        if (rc)
            return rc;
        *out = fq_value_strn(ps->str, ps->slen);
    } else if (c == '-' || isdig(c)) {
        rc = parse_number(ps, out);
        if (rc)
            return rc;
    } else if (match_word(ps, "true")) {
        *out = fq_value_bool(true);
    } else if (match_word(ps, "false")) {
        *out = fq_value_bool(false);
    } else if (match_word(ps, "null")) {
        *out = fq_value_null();
    } else {
        return fail_at(ps, FQ_EPARSE, ps->p, "unexpected character");
    }
    (*out)->line = (uint32_t)line;
    (*out)->col = (uint32_t)col;
    return 0;
}

int fq_json_parse(const char *text, size_t len, const char *name,
                  const struct fq_limits *lim, struct fq_value **out,
                  struct fq_err *err)
{
    struct parser ps = {0};
    ps.s = ps.p = text ? text : "";
    ps.end = ps.s + (text ? len : 0);
    ps.name = name;
    ps.lim = lim ? *lim : fq_limits_default();
    ps.line = 1;
    ps.line_start = ps.s;
    ps.err = err;
    fq_buf_init(&ps.tmp);
    *out = NULL;

    if (len > ps.lim.max_bytes) {
        char what[128];
        snprintf(what, sizeof(what), "input is %zu bytes, over the %zu limit",
                 len, ps.lim.max_bytes);
        return fq_err_at(err, FQ_ELIMIT, name, 0, 0, NULL, "%s", what);
    }
    if (ps.end - ps.p >= 3 && !memcmp(ps.p, "\xEF\xBB\xBF", 3))
        ps.p += 3, ps.line_start = ps.p; /* a UTF-8 byte order mark */

    struct fq_value *v = NULL;
    int rc = parse_value(&ps, 0, &v);
    if (!rc) {
        skip_ws(&ps);
        if (ps.p < ps.end)
            rc = fail_at(&ps, FQ_EPARSE, ps.p,
                         "unexpected text after the JSON value");
    }
    fq_buf_release(&ps.tmp);
    if (rc) {
        fq_value_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* --- encoder ------------------------------------------------------------ */

/* True when `s` matches the JSON number grammar exactly. */
static bool json_number_text(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (isdig(*s))
        while (isdig(*s))
            s++;
    else
        return false;
    if (*s == '.') {
        s++;
        if (!isdig(*s))
            return false;
        while (isdig(*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!isdig(*s))
            return false;
        while (isdig(*s))
            s++;
    }
    return *s == '\0';
}

static void encode_number(const struct fq_value *v, struct fq_buf *out)
{
    const char *raw = v->u.num.raw ? v->u.num.raw : "";
    if (json_number_text(raw)) {
        fq_buf_puts(out, raw);
    } else if (v->u.num.is_int) {
        fq_buf_printf(out, "%lld", (long long)v->u.num.i);
    } else if (isfinite(v->u.num.d)) {
        char tmp[64];
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(tmp, sizeof(tmp), "%.*g", prec, v->u.num.d);
            if (strtod(tmp, NULL) == v->u.num.d)
                break;
        }
        fq_buf_puts(out, tmp);
    } else {
        fq_buf_puts(out, "null");
    }
}

/* The bytes a JSON string holds as they are: printable ASCII but for
 * '"' and '\\' (control characters are escaped, bytes >= 0x80 checked as
 * UTF-8). One load per byte instead of four comparisons. */
static const unsigned char PLAIN[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static void encode_string(const char *s, size_t len, struct fq_buf *out)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end && PLAIN[*p])
        p++;
    if (p == end) { /* nothing to escape, as most keys and values */
        fq_buf_reserve(out, len + 2);
        char *d = out->data + out->len;
        d[0] = '"';
        if (len)
            memcpy(d + 1, s, len);
        d[len + 1] = '"';
        out->len += len + 2;
        out->data[out->len] = '\0';
        return;
    }
    fq_buf_putc(out, '"');
    fq_buf_append(out, s, (size_t)(p - (const unsigned char *)s));
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && PLAIN[*p])
            p++;
        fq_buf_append(out, run, (size_t)(p - run));
        if (p >= end)
            break;
        unsigned char c = *p;
        if (c >= 0x80) {
            size_t n = fq_utf8_decode(p, end, NULL);
            if (n) {
                fq_buf_append(out, p, n);
                p += n;
            } else {
                fq_buf_puts(out, "\xEF\xBF\xBD"); /* U+FFFD */
                p++;
            }
            continue;
        }
        p++;
        switch (c) {
        case '"':
            fq_buf_puts(out, "\\\"");
            break;
        case '\\':
            fq_buf_puts(out, "\\\\");
            break;
        case '\n':
            fq_buf_puts(out, "\\n");
            break;
        case '\r':
            fq_buf_puts(out, "\\r");
            break;
        case '\t':
            fq_buf_puts(out, "\\t");
            break;
        case '\b':
            fq_buf_puts(out, "\\b");
            break;
        case '\f':
            fq_buf_puts(out, "\\f");
            break;
        default:
            fq_buf_printf(out, "\\u%04x", c);
        }
    }
    fq_buf_putc(out, '"');
}

static void newline(struct fq_buf *out, int flags, size_t level)
{
    if (!(flags & FQ_JSON_PRETTY))
        return;
    fq_buf_putc(out, '\n');
    for (size_t i = 0; i < level; i++)
        fq_buf_puts(out, "  ");
}

/* One byte without a call while the buffer has room: the encoder's
 * punctuation is most of its appends. */
static inline void put1(struct fq_buf *out, char c)
{
    if (out->len + 1 < out->cap) { /* room for c and the NUL */
        out->data[out->len++] = c;
        out->data[out->len] = '\0';
    } else {
        fq_buf_putc(out, c);
    }
}

static void encode(const struct fq_value *v, int flags, size_t level,
                   struct fq_buf *out)
{
    if (!v) {
        fq_buf_puts(out, "null");
        return;
    }
    switch (v->type) {
    case FQ_V_NULL:
        fq_buf_puts(out, "null");
        break;
    case FQ_V_BOOL:
        fq_buf_puts(out, v->u.b ? "true" : "false");
        break;
    case FQ_V_NUM:
        encode_number(v, out);
        break;
    case FQ_V_STR:
        encode_string(v->u.str.s ? v->u.str.s : "", v->u.str.len, out);
        break;
    case FQ_V_SEQ:
        if (!v->u.seq.n) {
            fq_buf_puts(out, "[]");
            break;
        }
        put1(out, '[');
        for (size_t i = 0; i < v->u.seq.n; i++) {
            if (i)
                put1(out, ',');
            newline(out, flags, level + 1);
            encode(v->u.seq.items[i], flags, level + 1, out);
        }
        newline(out, flags, level);
        put1(out, ']');
        break;
    case FQ_V_MAP:
        if (!v->u.map.n) {
            fq_buf_puts(out, "{}");
            break;
        }
        put1(out, '{');
        for (size_t i = 0; i < v->u.map.n; i++) {
            const struct fq_member *m = &v->u.map.items[i];
            if (i)
                put1(out, ',');
            newline(out, flags, level + 1);
            encode_string(m->key, strlen(m->key), out);
            if (flags & FQ_JSON_PRETTY)
                fq_buf_puts(out, ": ");
            else
                put1(out, ':');
            encode(m->val, flags, level + 1, out);
        }
        newline(out, flags, level);
        put1(out, '}');
        break;
    }
}

void fq_json_encode(const struct fq_value *v, int flags, struct fq_buf *out)
{
    encode(v, flags, 0, out);
}

char *fq_json_dumps(const struct fq_value *v, int flags)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(v, flags, &b);
    return fq_buf_detach(&b);
}
