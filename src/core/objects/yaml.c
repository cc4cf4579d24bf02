/*
 * yaml.c - YAML stream to struct fq_value documents and back (value.h).
 *
 * The only file that includes <yaml.h>. libyaml does the scanning; this
 * file turns its event stream into trees, with the YAML 1.2 core schema and
 * the limits of struct fq_limits.
 *
 * How reading works. Events arrive in document order:
 *
 *   STREAM-START
 *     DOCUMENT-START                       docs++ (max_docs), anchors reset
 *       MAPPING-START  -> push a frame     depth++ (max_depth), nodes++
 *         SCALAR  (a key: kept as the frame's pending key)
 *         SCALAR  (a value: resolved, added under the pending key)
 *         ALIAS   -> clone of the anchored node (max_aliases; its node
 *                    count and depth are charged again: no billion laughs)
 *       MAPPING-END    -> pop; duplicate keys checked; added to the parent
 *     DOCUMENT-END                         root kept unless it is null
 *   STREAM-END
 *
 * Containers are built on an explicit stack of frames, so nesting costs no
 * C stack; they join their parent when they end. An anchored node is
 * recorded (borrowed, not copied) with its node count and height when it
 * ends, so an alias can be refused before the clone is made. An alias to a node still open (a
 * recursive alias) finds no anchor and is an error.
 *
 * Plain scalars resolve with the YAML 1.2 core schema:
 *   null   null Null NULL ~ (empty)
 *   bool   true True TRUE false False FALSE
 *   int    [-+]?[0-9]+  0o[0-7]+  0x[0-9a-fA-F]+
 *   float  [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
 *          [-+]?\.(inf|Inf|INF)  \.(nan|NaN|NAN)
 *   string everything else
 * Quoted and block scalars, and anything tagged !!str or !, are strings.
 * !!null, !!bool, !!int and !!float must resolve to their type. Other tags
 * are ignored. There are no merge keys ("<<" is an ordinary key).
 *
 * Errors are "name:line:col: what" (1-based, libyaml's columns count
 * characters); syntax errors are FQ_EPARSE, limits FQ_ELIMIT.
 *
 * How writing works: block style as kubectl -o yaml prints it (sequences
 * under a key are not indented, "- " entries hold compact maps). A string
 * is written plain when it reads back as the same string, in a literal
 * block "|" when it spans lines, and double-quoted otherwise. Numbers keep
 * their raw text.
 *
 * Invariants: after an error nothing is left in `out` and nothing leaks;
 * for every tree T, parse(encode(T)) equals T (checked by the fuzz target).
 *
 * What it does not do: no YAML 1.1 booleans (yes/no/on/off are strings,
 * though the writer quotes them for older readers), no merge keys, no
 * complex (non-scalar) keys, no flow style output, no comments.
 */
#include "flexq/value.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "flexq/alloc.h"
#include "objects/value_internal.h"

/* --- reading ------------------------------------------------------------ */

struct frame {
    struct fq_value *v; /* owned until it joins its parent */
    char *key;          /* pending key of a mapping, owned, or NULL */
    uint32_t kline, kcol;
    char *anchor; /* owned or NULL */
    size_t nodes_at_start;
    size_t child_height; /* greatest height among finished children */
};

/*
 * An anchored node is borrowed from the document being built: finished
 * nodes never change or move (containers hold pointers), and anchors are
 * dropped at the end of each document. Copying it here instead would let
 * nested anchors cost depth x size memory. Only an anchor on a mapping key
 * owns its node, as keys are kept as plain strings.
 */
struct anchor {
    char *name;               /* owned */
    const struct fq_value *v; /* borrowed, or == owned */
    struct fq_value *owned;   /* NULL, or the node of a key's anchor */
    size_t nodes, height;     /* what an alias to it costs */
};

struct reader {
    yaml_parser_t parser;
    const char *text;
    const char *name;
    struct fq_limits lim;
    struct fq_err *err;
    size_t nodes, aliases, docs;
    struct frame *stack;
    size_t depth, cap;
    struct anchor *anchors;
    size_t nanchors, acap;
    struct fq_value *root;
    struct fq_docs out;
};

static int fail(struct reader *r, int code, yaml_mark_t mark, const char *fmt,
                ...) __attribute__((format(printf, 4, 5)));

static int fail(struct reader *r, int code, yaml_mark_t mark, const char *fmt,
                ...)
{
    char what[FQ_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return fq_err_at(r->err, code, r->name, (int)mark.line + 1,
                     (int)mark.column + 1, NULL, "%s", what);
}

static void clear_anchors(struct reader *r)
{
    for (size_t i = 0; i < r->nanchors; i++) {
        free(r->anchors[i].name);
        fq_value_free(r->anchors[i].owned);
    }
    r->nanchors = 0;
}

static void clear_stack(struct reader *r)
{
    while (r->depth > 0) {
        struct frame *f = &r->stack[--r->depth];
        fq_value_free(f->v);
        free(f->key);
        free(f->anchor);
    }
}

/* Records an anchor; `owned` (may be NULL) passes to the anchor. */
static void add_anchor(struct reader *r, const char *name,
                       const struct fq_value *v, struct fq_value *owned,
                       size_t nodes, size_t height)
{
    FQ_GROW(r->anchors, r->acap, r->nanchors + 1);
    struct anchor *a = &r->anchors[r->nanchors++];
    a->name = fq_xstrdup(name);
    a->v = v;
    a->owned = owned;
    a->nodes = nodes;
    a->height = height;
}

static const struct anchor *find_anchor(const struct reader *r,
                                        const char *name)
{
    for (size_t i = r->nanchors; i-- > 0;) /* the latest definition wins */
        if (!strcmp(r->anchors[i].name, name))
            return &r->anchors[i];
    return NULL;
}

/* True when the top frame is a mapping waiting for a key. */
static bool wants_key(const struct reader *r)
{
    if (r->depth == 0)
        return false;
    const struct frame *f = &r->stack[r->depth - 1];
    return f->v->type == FQ_V_MAP && !f->key;
}

/* Adds a finished node (owned) of height `h` (0 for a scalar) to the top
 * frame, or makes it the root. */
static void attach(struct reader *r, struct fq_value *v, size_t h)
{
    if (r->depth == 0) {
        fq_value_free(r->root);
        r->root = v;
        return;
    }
    struct frame *f = &r->stack[r->depth - 1];
    if (h > f->child_height)
        f->child_height = h;
    if (f->v->type == FQ_V_SEQ) {
        fq_seq_push(f->v, v);
        return;
    }
    struct fq_value *m = f->v;
    struct fq_member *mem = fq_value_map_append(m, f->key, strlen(f->key), v);
    mem->line = f->kline;
    mem->col = f->kcol;
    free(f->key);
    f->key = NULL;
}

static int count_node(struct reader *r, yaml_mark_t mark, size_t n)
{
    if (n > r->lim.max_nodes || r->nodes > r->lim.max_nodes - n)
        return fail(r, FQ_ELIMIT, mark,
                    "more than %zu nodes (do aliases expand to too much?)",
                    r->lim.max_nodes);
    r->nodes += n;
    return 0;
}

static bool tag_is(const yaml_char_t *tag, const char *suffix)
{
    if (!tag)
        return false;
    const char *t = (const char *)tag;
    size_t pl = strlen(YAML_DEFAULT_SCALAR_TAG) - strlen("str");
    return !strncmp(t, YAML_DEFAULT_SCALAR_TAG, pl) && !strcmp(t + pl, suffix);
}

/* Resolves a plain scalar with the core schema; returns owned. */
static struct fq_value *resolve_plain(const char *s, size_t len)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    static const char *const trues[] = {"true", "True", "TRUE"};
    static const char *const falses[] = {"false", "False", "FALSE"};
    for (size_t i = 0; i < 5; i++)
        if (!strcmp(s, nulls[i]))
            return fq_value_null();
    for (size_t i = 0; i < 3; i++) {
        if (!strcmp(s, trues[i]))
            return fq_value_bool(true);
        if (!strcmp(s, falses[i]))
            return fq_value_bool(false);
    }
    struct fq_value *v = fq_value_num_raw(s);
    return v ? v : fq_value_strn(s, len);
}

static int on_scalar(struct reader *r, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    yaml_mark_t mark = ev->start_mark;
    if (len > r->lim.max_string)
        return fail(r, FQ_ELIMIT, mark,
                    "scalar of %zu bytes is over the %zu-byte limit", len,
                    r->lim.max_string);
    if (strlen(s) != len)
        return fail(r, FQ_EPARSE, mark, "NUL character in a scalar");
    int rc = count_node(r, mark, 1);
    if (rc)
        return rc;

    if (wants_key(r)) {
        struct frame *f = &r->stack[r->depth - 1];
        f->key = fq_xstrndup(s, len);
        f->kline = (uint32_t)mark.line + 1;
        f->kcol = (uint32_t)mark.column + 1;
        if (ev->data.scalar.anchor) {
            struct fq_value *k = fq_value_strn(s, len);
            add_anchor(r, (const char *)ev->data.scalar.anchor, k, k, 1, 0);
        }
        return 0;
    }

    const yaml_char_t *tag = ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    struct fq_value *v;
    if (tag_is(tag, "str") || (tag && !strcmp((const char *)tag, "!")) ||
        (!plain && !tag)) {
        v = fq_value_strn(s, len);
    } else {
        v = resolve_plain(s, len);
        const char *want = NULL;
        enum fq_vtype wt = FQ_V_NULL;
        if (tag_is(tag, "null"))
            want = "null", wt = FQ_V_NULL;
        else if (tag_is(tag, "bool"))
            want = "bool", wt = FQ_V_BOOL;
        else if (tag_is(tag, "int"))
            want = "int", wt = FQ_V_NUM;
        else if (tag_is(tag, "float"))
            want = "float", wt = FQ_V_NUM;
        if (want && (v->type != wt || (wt == FQ_V_NUM && !strcmp(want, "int") &&
                                       !v->u.num.is_int))) {
            fq_value_free(v);
            return fail(r, FQ_EPARSE, mark, "\"%.100s\" is not a valid !!%s", s,
                        want);
        }
        if (!plain && !want) { /* quoted with an unknown tag */
            fq_value_free(v);
            v = fq_value_strn(s, len);
        }
    }
    v->line = (uint32_t)mark.line + 1;
    v->col = (uint32_t)mark.column + 1;
    if (ev->data.scalar.anchor)
        add_anchor(r, (const char *)ev->data.scalar.anchor, v, NULL, 1, 0);
    attach(r, v, 0);
    return 0;
}

static int on_start(struct reader *r, const yaml_event_t *ev, bool map)
{
    yaml_mark_t mark = ev->start_mark;
    if (wants_key(r))
        return fail(r, FQ_EPARSE, mark, "a mapping key must be a scalar");
    if (r->depth + 1 > r->lim.max_depth)
        return fail(r, FQ_ELIMIT, mark, "nesting deeper than the limit of %zu",
                    r->lim.max_depth);
    int rc = count_node(r, mark, 1);
    if (rc)
        return rc;
    const yaml_char_t *anchor =
        map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    FQ_GROW(r->stack, r->cap, r->depth + 1);
    struct frame *f = &r->stack[r->depth++];
    f->v = map ? fq_value_map() : fq_value_seq();
    f->v->line = (uint32_t)mark.line + 1;
    f->v->col = (uint32_t)mark.column + 1;
    f->key = NULL;
    f->anchor = anchor ? fq_xstrdup((const char *)anchor) : NULL;
    f->nodes_at_start = r->nodes - 1;
    f->child_height = 0;
    return 0;
}

static int on_end(struct reader *r)
{
    struct frame f = r->stack[--r->depth];
    free(f.key); /* NULL unless libyaml ended a map mid-pair (it does not) */
    if (f.v->type == FQ_V_MAP) {
        size_t dup = fq_value_map_find_duplicate(f.v);
        if (dup < f.v->u.map.n) {
            const struct fq_member *d = &f.v->u.map.items[dup];
            int rc =
                fq_err_at(r->err, FQ_EPARSE, r->name, (int)d->line, (int)d->col,
                          NULL, "duplicate key \"%.200s\"", d->key);
            fq_value_free(f.v);
            free(f.anchor);
            return rc;
        }
    }
    size_t h = f.child_height + 1;
    if (f.anchor) {
        add_anchor(r, f.anchor, f.v, NULL, r->nodes - f.nodes_at_start, h);
        free(f.anchor);
    }
    attach(r, f.v, h);
    return 0;
}

/* An alias used as a mapping key stands for its scalar's text. */
static int alias_key(struct reader *r, const struct anchor *a, yaml_mark_t mark)
{
    const struct fq_value *v = a->v;
    const char *text = v->type == FQ_V_STR  ? v->u.str.s :
                       v->type == FQ_V_NUM  ? v->u.num.raw :
                       v->type == FQ_V_BOOL ? (v->u.b ? "true" : "false") :
                       v->type == FQ_V_NULL ? "null" :
                                              NULL;
    if (!text)
        return fail(r, FQ_EPARSE, mark, "a mapping key must be a scalar");
    struct frame *f = &r->stack[r->depth - 1];
    f->key = fq_xstrdup(text);
    f->kline = (uint32_t)mark.line + 1;
    f->kcol = (uint32_t)mark.column + 1;
    return 0;
}

static int on_alias(struct reader *r, const yaml_event_t *ev)
{
    yaml_mark_t mark = ev->start_mark;
    const char *name = (const char *)ev->data.alias.anchor;
    if (++r->aliases > r->lim.max_aliases)
        return fail(r, FQ_ELIMIT, mark, "more than %zu aliases",
                    r->lim.max_aliases);
    const struct anchor *a = find_anchor(r, name);
    if (!a)
        return fail(r, FQ_EPARSE, mark, "unknown anchor \"%.200s\"", name);
    int rc = count_node(r, mark, a->nodes);
    if (rc)
        return rc;
    if (r->depth + a->height > r->lim.max_depth)
        return fail(r, FQ_ELIMIT, mark, "nesting deeper than the limit of %zu",
                    r->lim.max_depth);
    if (wants_key(r))
        return alias_key(r, a, mark);
    attach(r, fq_value_clone(a->v), a->height);
    return 0;
}

/* Line and column (1-based, in characters) of a byte offset. */
static yaml_mark_t mark_of_offset(const char *text, size_t len, size_t off)
{
    yaml_mark_t m = {0, 0, 0};
    for (size_t i = 0; i < off && i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') {
            m.line++;
            m.column = 0;
        } else if ((c & 0xC0) != 0x80) {
            m.column++;
        }
    }
    m.index = off;
    return m;
}

static int syntax_error(struct reader *r, size_t len)
{
    yaml_parser_t *p = &r->parser;
    const char *problem = p->problem ? p->problem : "syntax error";
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return fail(r, FQ_EINTERNAL, p->mark, "out of memory reading YAML");
    case YAML_READER_ERROR:
        return fail(r, FQ_EPARSE,
                    mark_of_offset(r->text, len, p->problem_offset), "%s",
                    problem);
    default:
        break;
    }
    if (p->context && p->context_mark.line != p->problem_mark.line)
        return fail(r, FQ_EPARSE, p->problem_mark,
                    "%s %s that started at line %zu", problem, p->context,
                    (size_t)p->context_mark.line + 1);
    if (p->context)
        return fail(r, FQ_EPARSE, p->problem_mark, "%s %s", problem,
                    p->context);
    return fail(r, FQ_EPARSE, p->problem_mark, "%s", problem);
}

static int on_event(struct reader *r, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++r->docs > r->lim.max_docs)
            return fail(r, FQ_ELIMIT, ev->start_mark, "more than %zu documents",
                        r->lim.max_docs);
        clear_anchors(r);
        return 0;
    case YAML_DOCUMENT_END_EVENT:
        if (r->root && r->root->type != FQ_V_NULL) {
            FQ_GROW(r->out.items, r->out.cap, r->out.n + 1);
            r->out.items[r->out.n++] = r->root;
        } else {
            fq_value_free(r->root);
        }
        r->root = NULL;
        clear_anchors(r);
        return 0;
    case YAML_SCALAR_EVENT:
        return on_scalar(r, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(r, ev, false);
    case YAML_MAPPING_START_EVENT:
        return on_start(r, ev, true);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_end(r);
    case YAML_ALIAS_EVENT:
        return on_alias(r, ev);
    default:
        return 0;
    }
}

void fq_docs_release(struct fq_docs *d)
{
    for (size_t i = 0; i < d->n; i++)
        fq_value_free(d->items[i]);
    free(d->items);
    d->items = NULL;
    d->n = d->cap = 0;
}

int fq_yaml_parse(const char *text, size_t len, const char *name,
                  const struct fq_limits *lim, struct fq_docs *out,
                  struct fq_err *err)
{
    struct reader r;
    memset(&r, 0, sizeof(r));
    r.text = text ? text : "";
    if (!text)
        len = 0;
    r.name = name;
    r.lim = lim ? *lim : fq_limits_default();
    r.err = err;
    if (len > r.lim.max_bytes)
        return fq_err_at(err, FQ_ELIMIT, name, 0, 0, NULL,
                         "input is %zu bytes, over the %zu-byte limit", len,
                         r.lim.max_bytes);
    if (!yaml_parser_initialize(&r.parser))
        return fq_err_set(err, FQ_EINTERNAL, "cannot start the YAML reader");
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)r.text, len);
    int rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&r.parser, &ev)) {
            rc = syntax_error(&r, len);
            break;
        }
        rc = on_event(&r, &ev);
        bool end = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        if (rc || end)
            break;
    }
    yaml_parser_delete(&r.parser);
    clear_stack(&r);
    clear_anchors(&r);
    free(r.stack);
    free(r.anchors);
    fq_value_free(r.root);
    if (rc) {
        fq_docs_release(&r.out);
        return rc;
    }
    for (size_t i = 0; i < r.out.n; i++) {
        FQ_GROW(out->items, out->cap, out->n + 1);
        out->items[out->n++] = r.out.items[i];
    }
    free(r.out.items);
    return 0;
}

/* --- writing ------------------------------------------------------------ */

/* YAML's printable set, less the characters libyaml takes as line breaks. */
static bool printable(unsigned cp)
{
    if (cp == 0x85 || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF)
        return false;
    return cp == '\t' || (cp >= 0x20 && cp <= 0x7E) ||
           (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
           (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* True when every character is valid UTF-8 and printable (\n allowed). */
static bool all_printable(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        unsigned cp;
        size_t n = fq_utf8_decode(p, end, &cp);
        if (!n || (cp != '\n' && !printable(cp)))
            return false;
        p += n;
    }
    return true;
}

/*
 * True for text that YAML 1.1 readers (kubectl's go-yaml among them) take
 * as a number though the core schema does not: digit groups ("1_000"),
 * base 60 ("1:20") and binary ("0b101"). Quoting them costs nothing and
 * keeps them strings everywhere; "4x4" or "10.0.0.1" stay plain.
 */
static bool yaml11_number(const char *s)
{
    const char *p = s + (*s == '+' || *s == '-');
    if (!strchr("0123456789.", *p))
        return false;
    if (strspn(s, "0123456789abcdefABCDEFxob_:.+-") != strlen(s))
        return false;
    return strchr(s, '_') || strchr(s, ':') || !strncmp(p, "0b", 2);
}

/* True when `s` can be written as a plain scalar and read back as itself. */
static bool plain_ok(const char *s, size_t len)
{
    static const char *const words[] = {
        "y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no", "No",
        "NO", "on", "On",  "ON",  "off", "Off", "OFF", "=",  "<<",
    };
    if (len == 0 || strlen(s) != len)
        return false;
    if (strchr("-?:,[]{}#&*!|>'\"%@` \t", s[0]) || s[len - 1] == ' ' ||
        s[len - 1] == ':')
        return false;
    if (strstr(s, ": ") || strstr(s, " #") || strchr(s, '\n') ||
        strchr(s, '\t') || strchr(s, '\r') || !strncmp(s, "...", 3))
        return false;
    if (!all_printable(s, len))
        return false;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (!strcmp(s, words[i]))
            return false;
    if (yaml11_number(s))
        return false;
    struct fq_value *v = resolve_plain(s, len);
    bool same = v->type == FQ_V_STR;
    fq_value_free(v);
    return same;
}

static void put_indent(struct fq_buf *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fq_buf_putc(out, ' ');
}

static void put_quoted(struct fq_buf *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    fq_buf_putc(out, '"');
    while (p < end) {
        unsigned cp;
        size_t n = fq_utf8_decode(p, end, &cp);
        if (!n) {
            fq_buf_puts(out, "\\uFFFD"); /* invalid UTF-8 from code */
            p++;
            continue;
        }
        if (cp == '"')
            fq_buf_puts(out, "\\\"");
        else if (cp == '\\')
            fq_buf_puts(out, "\\\\");
        else if (cp == '\n')
            fq_buf_puts(out, "\\n");
        else if (cp == '\t')
            fq_buf_puts(out, "\\t");
        else if (cp == '\r')
            fq_buf_puts(out, "\\r");
        else if (cp == 0x85)
            fq_buf_puts(out, "\\N");
        else if (cp == 0x2028)
            fq_buf_puts(out, "\\L");
        else if (cp == 0x2029)
            fq_buf_puts(out, "\\P");
        else if (cp < 0x20 || cp == 0x7F)
            fq_buf_printf(out, "\\x%02X", cp);
        else if (!printable(cp))
            fq_buf_printf(out, "\\u%04X", cp);
        else
            fq_buf_append(out, p, n);
        p += n;
    }
    fq_buf_putc(out, '"');
}

/* A literal block fits strings with line breaks and printable text. */
static bool literal_ok(const char *s, size_t len)
{
    if (!strchr(s, '\n') || strlen(s) != len || strchr(s, '\r'))
        return false;
    size_t body = len;
    while (body > 0 && s[body - 1] == '\n')
        body--;
    if (body == 0 || !all_printable(s, len))
        return false;
    /* A body line of only "---" or "..." is harmless: it is indented. */
    return true;
}

static bool has_indented_line(const char *s, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == '\n' && (s[i + 1] == ' ' || s[i + 1] == '\t'))
            return true;
    return false;
}

/* Writes "|..." and the lines, each indented by `indent`. */
static void put_literal(struct fq_buf *out, const char *s, size_t len,
                        size_t indent)
{
    size_t body = len;
    while (body > 0 && s[body - 1] == '\n')
        body--;
    size_t trailing = len - body;
    fq_buf_putc(out, '|');
    /* Without an indentation indicator libyaml guesses the indentation
     * from the first line, and refuses a leading tab. */
    if (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' ||
        has_indented_line(s, body))
        fq_buf_putc(out, '2');
    fq_buf_puts(out, trailing == 0 ? "-" : trailing == 1 ? "" : "+");
    fq_buf_putc(out, '\n');
    size_t i = 0;
    while (i < body) {
        const char *nl = memchr(s + i, '\n', body - i);
        size_t n = nl ? (size_t)(nl - (s + i)) : body - i;
        if (n) {
            put_indent(out, indent);
            fq_buf_append(out, s + i, n);
        }
        fq_buf_putc(out, '\n');
        i += n + 1;
    }
    for (size_t k = 1; k < trailing; k++)
        fq_buf_putc(out, '\n');
}

static bool number_text_ok(const char *raw)
{
    struct fq_value *v = fq_value_num_raw(raw);
    fq_value_free(v);
    return v != NULL;
}

/* Writes a scalar or an empty container, then the line's end. */
static void put_scalar(struct fq_buf *out, const struct fq_value *v,
                       size_t indent)
{
    switch (v ? v->type : FQ_V_NULL) {
    case FQ_V_NULL:
        fq_buf_puts(out, "null");
        break;
    case FQ_V_BOOL:
        fq_buf_puts(out, v->u.b ? "true" : "false");
        break;
    case FQ_V_NUM:
        if (v->u.num.raw && number_text_ok(v->u.num.raw))
            fq_buf_puts(out, v->u.num.raw);
        else if (v->u.num.is_int)
            fq_buf_printf(out, "%lld", (long long)v->u.num.i);
        else
            fq_buf_printf(out, "%.17g", v->u.num.d);
        break;
    case FQ_V_STR: {
        const char *s = v->u.str.s ? v->u.str.s : "";
        if (plain_ok(s, v->u.str.len)) {
            fq_buf_append(out, s, v->u.str.len);
        } else if (literal_ok(s, v->u.str.len)) {
            put_literal(out, s, v->u.str.len, indent);
            return; /* put_literal ends its own lines */
        } else {
            put_quoted(out, s, v->u.str.len);
        }
        break;
    }
    case FQ_V_SEQ:
        fq_buf_puts(out, "[]");
        break;
    case FQ_V_MAP:
        fq_buf_puts(out, "{}");
        break;
    }
    fq_buf_putc(out, '\n');
}

static bool is_block(const struct fq_value *v)
{
    return v && ((v->type == FQ_V_MAP && v->u.map.n) ||
                 (v->type == FQ_V_SEQ && v->u.seq.n));
}

static void put_seq(struct fq_buf *out, const struct fq_value *s, size_t indent,
                    bool inline_first);

/* A mapping at `indent`; the first key goes on the current line when
 * inline_first (after "- "). */
static void put_map(struct fq_buf *out, const struct fq_value *m, size_t indent,
                    bool inline_first)
{
    for (size_t i = 0; i < m->u.map.n; i++) {
        const struct fq_member *mem = &m->u.map.items[i];
        if (i > 0 || !inline_first)
            put_indent(out, indent);
        size_t klen = strlen(mem->key);
        size_t mark = out->len;
        if (plain_ok(mem->key, klen))
            fq_buf_append(out, mem->key, klen);
        else
            put_quoted(out, mem->key, klen);
        if (out->len - mark > 1000) {
            /* libyaml refuses implicit keys over 1024 characters. */
            struct fq_buf key = FQ_BUF_INIT;
            fq_buf_append(&key, out->data + mark, out->len - mark);
            out->len = mark;
            fq_buf_puts(out, "? ");
            fq_buf_append(out, key.data, key.len);
            fq_buf_putc(out, '\n');
            put_indent(out, indent);
            fq_buf_release(&key);
        }
        fq_buf_putc(out, ':');
        const struct fq_value *v = mem->val;
        if (!is_block(v)) {
            fq_buf_putc(out, ' ');
            put_scalar(out, v, indent + 2);
        } else if (v->type == FQ_V_MAP) {
            fq_buf_putc(out, '\n');
            put_map(out, v, indent + 2, false);
        } else {
            fq_buf_putc(out, '\n');
            put_seq(out, v, indent, false);
        }
    }
}

static void put_seq(struct fq_buf *out, const struct fq_value *s, size_t indent,
                    bool inline_first)
{
    for (size_t i = 0; i < s->u.seq.n; i++) {
        const struct fq_value *v = s->u.seq.items[i];
        if (i > 0 || !inline_first)
            put_indent(out, indent);
        fq_buf_puts(out, "- ");
        if (!is_block(v))
            put_scalar(out, v, indent + 2);
        else if (v->type == FQ_V_MAP)
            put_map(out, v, indent + 2, true);
        else
            put_seq(out, v, indent + 2, true);
    }
}

void fq_yaml_encode(const struct fq_value *v, struct fq_buf *out)
{
    if (!is_block(v))
        put_scalar(out, v, 2);
    else if (v->type == FQ_V_MAP)
        put_map(out, v, 0, false);
    else
        put_seq(out, v, 0, false);
}
