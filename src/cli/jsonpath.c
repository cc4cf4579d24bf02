/*
 * jsonpath.c - the subset of kubectl's JSONPath templates that
 * `flexq get -o jsonpath=...` and `-o custom-columns=...` accept.
 *
 * Paths: an optional leading `$` (the root) or `@` (the current value),
 * then steps `.name`, `.*`, `[N]` (negative counts from the end), `[*]`,
 * `['key.with.dots']` / `["key"]`. A step applies to every value found so
 * far, so `.items[*].metadata.name` finds one name per item. Templates:
 * literal text, `{PATH}`, `{"literal"}` (with \n, \t, \" and \\),
 * `{range PATH}...{end}` (nested up to FQ_JSONPATH_MAX_DEPTH).
 *
 * What it does not do: filters `[?(...)]`, slices `[a:b]`, unions,
 * recursive descent `..` (each is refused with its position), nor
 * kubectl's `{.x}` on a missing key as an error (it prints nothing).
 */
#include "jsonpath.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

struct vals {
    const struct fq_value **v;
    size_t n, cap;
};

static void vals_push(struct vals *s, const struct fq_value *v)
{
    if (!v)
        return;
    FQ_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n++] = v;
}

static int perr(struct fq_err *err, const char *what, size_t at,
                const char *expr, size_t len)
{
    return fq_err_set(err, FQ_EINVAL,
                      "jsonpath: %s at character %zu of \"%.*s\"", what, at + 1,
                      (int)(len > 200 ? 200 : len), expr);
}

/* Evaluates expr[0..len) from cur (root for `$`) into out. */
static int eval(const char *expr, size_t len, const struct fq_value *root,
                const struct fq_value *cur, struct vals *out,
                struct fq_err *err)
{
    struct vals a = {0}, b = {0};
    size_t i = 0;
    while (i < len && (expr[i] == ' ' || expr[i] == '\t'))
        i++;
    while (len > i && (expr[len - 1] == ' ' || expr[len - 1] == '\t'))
        len--;
    if (i < len && expr[i] == '$') {
        vals_push(&a, root);
        i++;
    } else {
        if (i < len && expr[i] == '@')
            i++;
        vals_push(&a, cur);
    }
    int rc = 0;
    while (i < len) {
        b.n = 0;
        char c = expr[i];
        if (c == '.') {
            i++;
            if (i < len && expr[i] == '.') {
                rc = perr(err, "recursive descent (..) is not supported", i,
                          expr, len);
                goto out;
            }
            size_t s = i;
            while (i < len && expr[i] != '.' && expr[i] != '[')
                i++;
            if (i == s) /* a trailing "." or ".[": the value itself */
                continue;
            bool star = i - s == 1 && expr[s] == '*';
            for (size_t k = 0; k < a.n; k++) {
                const struct fq_value *v = a.v[k];
                if (!v || v->type != FQ_V_MAP)
                    continue;
                for (size_t m = 0; m < v->u.map.n; m++)
                    if (star ||
                        (strlen(v->u.map.items[m].key) == i - s &&
                         !strncmp(v->u.map.items[m].key, expr + s, i - s)))
                        vals_push(&b, v->u.map.items[m].val);
            }
        } else if (c == '[') {
            size_t s = ++i;
            char q = i < len ? expr[i] : 0;
            if (q == '\'' || q == '"') {
                size_t e = s + 1;
                while (e < len && expr[e] != q)
                    e++;
                if (e + 1 >= len || expr[e + 1] != ']') {
                    rc = perr(err, "unterminated ['key']", s, expr, len);
                    goto out;
                }
                for (size_t k = 0; k < a.n; k++) {
                    const struct fq_value *v = a.v[k];
                    for (size_t m = 0;
                         v && v->type == FQ_V_MAP && m < v->u.map.n; m++)
                        if (strlen(v->u.map.items[m].key) == e - s - 1 &&
                            !strncmp(v->u.map.items[m].key, expr + s + 1,
                                     e - s - 1))
                            vals_push(&b, v->u.map.items[m].val);
                }
                i = e + 2;
            } else {
                size_t e = s;
                while (e < len && expr[e] != ']')
                    e++;
                if (e >= len) {
                    rc = perr(err, "missing ]", s, expr, len);
                    goto out;
                }
                if (e - s == 1 && expr[s] == '*') {
                    for (size_t k = 0; k < a.n; k++) {
                        const struct fq_value *v = a.v[k];
                        if (v && v->type == FQ_V_SEQ)
                            for (size_t m = 0; m < fq_value_len(v); m++)
                                vals_push(&b, fq_seq_at(v, m));
                        else if (v && v->type == FQ_V_MAP)
                            for (size_t m = 0; m < v->u.map.n; m++)
                                vals_push(&b, v->u.map.items[m].val);
                    }
                } else {
                    char *end = NULL;
                    char num[32];
                    size_t nl = e - s < sizeof(num) - 1 ? e - s : 0;
                    memcpy(num, expr + s, nl);
                    num[nl] = '\0';
                    long idx = nl ? strtol(num, &end, 10) : 0;
                    if (!nl || *end) {
                        rc = perr(err,
                                  "only [N], [*] and ['key'] are supported "
                                  "(no filters, slices or unions)",
                                  s, expr, len);
                        goto out;
                    }
                    for (size_t k = 0; k < a.n; k++) {
                        const struct fq_value *v = a.v[k];
                        if (!v || v->type != FQ_V_SEQ)
                            continue;
                        long n = (long)fq_value_len(v);
                        long j = idx < 0 ? n + idx : idx;
                        if (j >= 0 && j < n)
                            vals_push(&b, fq_seq_at(v, (size_t)j));
                    }
                }
                i = e + 1;
            }
        } else {
            rc = perr(err, "expected . or [", i, expr, len);
            goto out;
        }
        struct vals t = a;
        a = b;
        b = t;
    }
    for (size_t k = 0; k < a.n; k++)
        vals_push(out, a.v[k]);
out:
    free(a.v);
    free(b.v);
    return rc;
}

static void put_value(const struct fq_value *v, struct fq_buf *out)
{
    if (v->type == FQ_V_STR) {
        fq_buf_puts(out, v->u.str.s);
    } else if (v->type == FQ_V_NULL) {
        return;
    } else {
        char *j = fq_json_dumps(v, FQ_JSON_COMPACT);
        fq_buf_puts(out, j);
        free(j);
    }
}

/* Index of the '}' closing the '{' at t[i], skipping quoted text. */
static size_t close_brace(const char *t, size_t i, size_t len)
{
    char q = 0;
    for (size_t k = i + 1; k < len; k++) {
        if (q) {
            if (t[k] == '\\' && k + 1 < len)
                k++;
            else if (t[k] == q)
                q = 0;
        } else if (t[k] == '"' || t[k] == '\'') {
            q = t[k];
        } else if (t[k] == '}') {
            return k;
        }
    }
    return len;
}

static bool is_word(const char *s, size_t n, const char *w)
{
    size_t l = strlen(w);
    return n >= l && !strncmp(s, w, l) &&
           (n == l || s[l] == ' ' || s[l] == '\t');
}

static int render(const char *t, size_t len, const struct fq_value *root,
                  const struct fq_value *cur, int depth, struct fq_buf *out,
                  struct fq_err *err)
{
    size_t i = 0;
    while (i < len) {
        if (out->len > FQ_JSONPATH_MAX_OUT)
            return fq_err_set(err, FQ_EINVAL,
                              "jsonpath: the output passed %u MiB (nested "
                              "{range}s?)",
                              FQ_JSONPATH_MAX_OUT >> 20);
        if (t[i] != '{') {
            fq_buf_putc(out, t[i++]);
            continue;
        }
        size_t e = close_brace(t, i, len);
        if (e >= len)
            return perr(err, "missing }", i, t, len);
        const char *in = t + i + 1;
        size_t n = e - i - 1;
        while (n && (*in == ' ' || *in == '\t')) {
            in++;
            n--;
        }
        if (n && (*in == '"' || *in == '\'')) {
            char q = *in;
            size_t k = 1;
            for (; k < n && in[k] != q; k++) {
                if (in[k] == '\\' && k + 1 < n) {
                    k++;
                    char c = in[k];
                    fq_buf_putc(out, c == 'n' ? '\n' : c == 't' ? '\t' : c);
                } else {
                    fq_buf_putc(out, in[k]);
                }
            }
            i = e + 1;
            continue;
        }
        if (is_word(in, n, "end"))
            return perr(err, "{end} without {range}", i, t, len);
        if (is_word(in, n, "range")) {
            if (depth >= FQ_JSONPATH_MAX_DEPTH)
                return perr(err, "{range} nested too deep", i, t, len);
            /* Find the matching {end}. */
            size_t k = e + 1, body = e + 1, nest = 1, end_at = len;
            while (k < len) {
                if (t[k] != '{') {
                    k++;
                    continue;
                }
                size_t ke = close_brace(t, k, len);
                if (ke >= len)
                    return perr(err, "missing }", k, t, len);
                const char *w = t + k + 1;
                size_t wn = ke - k - 1;
                while (wn && (*w == ' ' || *w == '\t')) {
                    w++;
                    wn--;
                }
                if (is_word(w, wn, "range"))
                    nest++;
                else if (is_word(w, wn, "end") && --nest == 0) {
                    end_at = k;
                    k = ke + 1;
                    break;
                }
                k = ke + 1;
            }
            if (end_at == len)
                return perr(err, "{range} without {end}", i, t, len);
            struct vals vs = {0};
            int rc = eval(in + 5, n - 5, root, cur, &vs, err);
            for (size_t v = 0; rc == 0 && v < vs.n; v++)
                rc = render(t + body, end_at - body, root, vs.v[v], depth + 1,
                            out, err);
            free(vs.v);
            if (rc)
                return rc;
            i = k;
            continue;
        }
        struct vals vs = {0};
        int rc = eval(in, n, root, cur, &vs, err);
        for (size_t v = 0; rc == 0 && v < vs.n; v++) {
            if (v)
                fq_buf_putc(out, ' ');
            put_value(vs.v[v], out);
        }
        free(vs.v);
        if (rc)
            return rc;
        i = e + 1;
    }
    return 0;
}

int fq_jsonpath_render(const char *tmpl, const struct fq_value *root,
                       struct fq_buf *out, struct fq_err *err)
{
    size_t len = strlen(tmpl);
    if (len > FQ_JSONPATH_MAX_LEN)
        return fq_err_set(err, FQ_EINVAL,
                          "jsonpath: template longer than %d characters",
                          FQ_JSONPATH_MAX_LEN);
    return render(tmpl, len, root, root, 0, out, err);
}

int fq_jsonpath_columns(const char *spec, const struct fq_value *const *objs,
                        size_t n, bool headers, struct fq_buf *out,
                        struct fq_err *err)
{
    size_t slen = strlen(spec);
    if (slen > FQ_JSONPATH_MAX_LEN || slen == 0)
        return fq_err_set(err, FQ_EINVAL,
                          "custom-columns: give HEADER:PATH[,HEADER:PATH...] "
                          "(at most %d characters)",
                          FQ_JSONPATH_MAX_LEN);
    /* Split into columns. */
    char *copy = fq_xstrdup(spec);
    char *hdr[64], *path[64];
    size_t nc = 0;
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (!colon || colon == tok || !colon[1] || nc == 64) {
            rc = fq_err_set(err, FQ_EINVAL,
                            "custom-columns: column %zu \"%s\" is not "
                            "HEADER:PATH (at most 64 columns)",
                            nc + 1, tok);
            goto out;
        }
        *colon = '\0';
        hdr[nc] = tok;
        path[nc] = colon + 1;
        size_t pl = strlen(path[nc]);
        if (path[nc][0] == '{' && pl > 1 && path[nc][pl - 1] == '}') {
            path[nc][pl - 1] = '\0';
            path[nc]++;
        }
        nc++;
    }
    /* Cells, then widths, then rows. */
    size_t rows = n + (headers ? 1 : 0);
    char **cells = fq_xcalloc(rows * nc + 1, sizeof(char *));
    size_t *w = fq_xcalloc(nc + 1, sizeof(size_t));
    for (size_t c = 0; c < nc && headers; c++)
        cells[c] = fq_xstrdup(hdr[c]);
    for (size_t r = 0; r < n && rc == 0; r++) {
        for (size_t c = 0; c < nc && rc == 0; c++) {
            struct vals vs = {0};
            rc = eval(path[c], strlen(path[c]), objs[r], objs[r], &vs, err);
            struct fq_buf b = FQ_BUF_INIT;
            for (size_t v = 0; v < vs.n; v++) {
                if (v)
                    fq_buf_putc(&b, ',');
                put_value(vs.v[v], &b);
            }
            free(vs.v);
            cells[(r + (headers ? 1 : 0)) * nc + c] =
                fq_xstrdup(b.len ? fq_buf_str(&b) : "<none>");
            fq_buf_release(&b);
        }
    }
    if (rc == 0) {
        for (size_t i = 0; i < rows * nc; i++) {
            size_t l = cells[i] ? strlen(cells[i]) : 0;
            if (l > w[i % nc])
                w[i % nc] = l;
        }
        for (size_t r = 0; r < rows; r++) {
            for (size_t c = 0; c < nc; c++) {
                const char *s = cells[r * nc + c] ? cells[r * nc + c] : "";
                if (c + 1 == nc)
                    fq_buf_puts(out, s);
                else
                    fq_buf_printf(out, "%-*s   ", (int)w[c], s);
            }
            fq_buf_putc(out, '\n');
        }
    }
    for (size_t i = 0; i < rows * nc; i++)
        free(cells[i]);
    free(cells);
    free(w);
out:
    free(copy);
    return rc;
}
