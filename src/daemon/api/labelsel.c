/*
 * labelsel.c - parses and evaluates label and field selectors.
 *
 * How it works: the text is split at top-level commas (commas inside
 * `in (...)` do not split) into requirements; each is an operator, a key
 * and a value list. Matching reads metadata.labels (label selectors) or a
 * dotted path converted to its string form (field selectors; numbers and
 * bools compare as they print).
 *
 * Invariants: a selector is immutable once parsed; every requirement must
 * hold (AND); an empty selector matches everything.
 *
 * What it does not do: set-based field selectors, or `>`/`<` (Kubernetes
 * accepts them only for node affinity).
 */
#include "api/labelsel.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/paths.h"

enum op {
    OP_EQ,
    OP_NE,
    OP_EXISTS,
    OP_NOTEXISTS,
    OP_IN,
    OP_NOTIN
};

struct req {
    enum op op;
    char *key;
    char **vals;
    size_t nvals;
};

struct fq_labelsel {
    bool field;
    struct req *reqs;
    size_t n, cap;
};

void fq_labelsel_free(struct fq_labelsel *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->reqs[i].key);
        for (size_t j = 0; j < s->reqs[i].nvals; j++)
            free(s->reqs[i].vals[j]);
        free(s->reqs[i].vals);
    }
    free(s->reqs);
    free(s);
}

static char *trim(const char *b, const char *e)
{
    while (b < e && isspace((unsigned char)*b))
        b++;
    while (e > b && isspace((unsigned char)e[-1]))
        e--;
    return fq_xstrndup(b, (size_t)(e - b));
}

static void push_val(struct req *r, char *v)
{
    r->vals = fq_xrealloc(r->vals, (r->nvals + 1) * sizeof(*r->vals));
    r->vals[r->nvals++] = v;
}

static bool valid_key(const char *k)
{
    if (!*k)
        return false;
    for (const char *p = k; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-_./", *p))
            return false;
    return true;
}

/* Parses one requirement in [b, e). */
static int parse_req(struct fq_labelsel *s, const char *b, const char *e,
                     const char *text, struct fq_err *err)
{
    struct req r = {0};
    const char *p;
    char *tmp = trim(b, e);
    if (!*tmp) {
        free(tmp);
        return 0;
    }
    int rc = 0;
    if ((p = strstr(tmp, "!=")) != NULL) {
        r.op = OP_NE;
        r.key = trim(tmp, p);
        push_val(&r, trim(p + 2, tmp + strlen(tmp)));
    } else if ((p = strstr(tmp, "==")) != NULL) {
        r.op = OP_EQ;
        r.key = trim(tmp, p);
        push_val(&r, trim(p + 2, tmp + strlen(tmp)));
    } else if ((p = strchr(tmp, '=')) != NULL) {
        r.op = OP_EQ;
        r.key = trim(tmp, p);
        push_val(&r, trim(p + 1, tmp + strlen(tmp)));
    } else if (!s->field && (p = strchr(tmp, '(')) != NULL) {
        const char *close = strrchr(tmp, ')');
        char *head = trim(tmp, p);
        char *sp = strrchr(head, ' ');
        if (!close || close < p || !sp) {
            free(head);
            rc = -1;
            goto done;
        }
        char *opname = trim(sp, head + strlen(head));
        r.key = trim(head, sp);
        free(head);
        if (!strcmp(opname, "in"))
            r.op = OP_IN;
        else if (!strcmp(opname, "notin"))
            r.op = OP_NOTIN;
        else
            rc = -1;
        free(opname);
        const char *v = p + 1;
        while (rc == 0 && v < close) {
            const char *c = memchr(v, ',', (size_t)(close - v));
            if (!c)
                c = close;
            push_val(&r, trim(v, c));
            v = c + 1;
        }
    } else if (!s->field && tmp[0] == '!') {
        r.op = OP_NOTEXISTS;
        r.key = trim(tmp + 1, tmp + strlen(tmp));
    } else if (!s->field) {
        r.op = OP_EXISTS;
        r.key = fq_xstrdup(tmp);
    } else {
        rc = -1;
    }
done:
    if (rc == 0 && (!r.key || !valid_key(r.key)))
        rc = -1;
    free(tmp);
    if (rc < 0) {
        free(r.key);
        for (size_t j = 0; j < r.nvals; j++)
            free(r.vals[j]);
        free(r.vals);
        return fq_err_set(err, FQ_EPARSE, "invalid %s selector \"%s\"",
                          s->field ? "field" : "label", text);
    }
    FQ_GROW(s->reqs, s->cap, s->n + 1);
    s->reqs[s->n++] = r;
    return 0;
}

int fq_labelsel_parse(const char *text, bool field, struct fq_labelsel **out,
                      struct fq_err *err)
{
    struct fq_labelsel *s = fq_xcalloc(1, sizeof(*s));
    s->field = field;
    if (text && strlen(text) > 4096) {
        fq_labelsel_free(s);
        return fq_err_set(err, FQ_ELIMIT, "selector longer than 4096 bytes");
    }
    const char *b = text ? text : "";
    int depth = 0;
    for (const char *p = b;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if ((*p == ',' && depth == 0) || *p == '\0') {
            int rc = parse_req(s, b, p, text, err);
            if (rc < 0) {
                fq_labelsel_free(s);
                return rc;
            }
            b = p + 1;
        }
        if (!*p)
            break;
    }
    *out = s;
    return 0;
}

/* The string form of the value a requirement looks at, or NULL. */
static const char *lookup(const struct fq_labelsel *s,
                          const struct fq_value *obj, const char *key,
                          char *tmp, size_t tsize)
{
    const struct fq_value *v;
    if (s->field)
        v = fq_value_path(obj, key);
    else
        v = fq_map_get(fq_meta_labels(obj), key);
    if (!v)
        return NULL;
    switch (v->type) {
    case FQ_V_STR:
        return v->u.str.s;
    case FQ_V_NUM:
        return v->u.num.raw;
    case FQ_V_BOOL:
        return v->u.b ? "true" : "false";
    case FQ_V_NULL:
        (void)tmp;
        (void)tsize;
        return "";
    default:
        return NULL;
    }
}

bool fq_labelsel_empty(const struct fq_labelsel *s)
{
    return !s || s->n == 0;
}

bool fq_labelsel_match(const struct fq_labelsel *s, const struct fq_value *obj)
{
    if (!s)
        return true;
    char tmp[64];
    for (size_t i = 0; i < s->n; i++) {
        const struct req *r = &s->reqs[i];
        const char *v = lookup(s, obj, r->key, tmp, sizeof(tmp));
        bool in = false;
        for (size_t j = 0; v && j < r->nvals; j++)
            in |= !strcmp(v, r->vals[j]);
        switch (r->op) {
        case OP_EQ:
        case OP_IN:
            if (!in)
                return false;
            break;
        case OP_NE:
        case OP_NOTIN:
            if (in)
                return false;
            break;
        case OP_EXISTS:
            if (!v)
                return false;
            break;
        case OP_NOTEXISTS:
            if (v)
                return false;
            break;
        }
    }
    return true;
}

const char *fq_labelsel_equals(const struct fq_labelsel *s, const char *path)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (s->reqs[i].op == OP_EQ && !strcmp(s->reqs[i].key, path))
            return s->reqs[i].vals[0];
    return NULL;
}
