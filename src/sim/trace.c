/*
 * trace.c - reads the normalized job-trace CSV (see trace.h for the schema).
 *
 * How it works: the header line names the columns; each later line is split
 * on commas (a field may be double-quoted, with "" for a quote inside) and
 * its fields are checked one by one. Numbers are decimal seconds that become
 * integer milliseconds (rounded to the nearest ms). Strings (job_id, queue,
 * user, status) are copied into an arena of large blocks, so a 71,000-row
 * trace costs a few allocations rather than 200,000.
 *
 * Invariants of a parsed trace:
 *   1. jobs are in file order, and submit_ms never decreases;
 *   2. duration_ms > 0, chips >= 1, 1 <= hosts <= chips;
 *   3. job ids are unique (a hash set checks them while reading).
 * A row that breaks one is a bad row: an error naming file, line, column and
 * field, or, under skip_bad, a count and (for the first few) a kept message.
 *
 * It does not: guess a delimiter, accept rows before the header, or sort an
 * unsorted trace (an out-of-order row is an error; the README promises
 * sorted rows, and silently sorting would hide a broken conversion).
 */
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"

/* --- arena --------------------------------------------------------------- */

#define ARENA_BLOCK 65536

struct arena_block {
    struct arena_block *next;
    size_t used, size;
    char data[];
};

struct fq_trace_arena {
    struct arena_block *head;
};

static const char *arena_strndup(struct fq_trace_arena *a, const char *s,
                                 size_t n)
{
    struct arena_block *b = a->head;
    if (!b || b->size - b->used < n + 1) {
        size_t size = n + 1 > ARENA_BLOCK ? n + 1 : ARENA_BLOCK;
        b = fq_xmalloc(sizeof(*b) + size);
        b->next = a->head;
        b->used = 0;
        b->size = size;
        a->head = b;
    }
    char *p = b->data + b->used;
    memcpy(p, s, n);
    p[n] = '\0';
    b->used += n + 1;
    return p;
}

static void arena_free(struct fq_trace_arena *a)
{
    if (!a)
        return;
    struct arena_block *b = a->head;
    while (b) {
        struct arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(a);
}

/* --- id set (open addressing, for the uniqueness check) ------------------ */

struct idset {
    const char **slots;
    size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Adds s; returns false if it was already there. */
static bool idset_add(struct idset *set, const char *s)
{
    if ((set->n + 1) * 2 > set->cap) {
        size_t ncap = set->cap ? set->cap * 2 : 1024;
        const char **ns = fq_xcalloc(ncap, sizeof(*ns));
        for (size_t i = 0; i < set->cap; i++) {
            if (!set->slots[i])
                continue;
            size_t j = hash_str(set->slots[i]) & (ncap - 1);
            while (ns[j])
                j = (j + 1) & (ncap - 1);
            ns[j] = set->slots[i];
        }
        free(set->slots);
        set->slots = ns;
        set->cap = ncap;
    }
    size_t j = hash_str(s) & (set->cap - 1);
    while (set->slots[j]) {
        if (strcmp(set->slots[j], s) == 0)
            return false;
        j = (j + 1) & (set->cap - 1);
    }
    set->slots[j] = s;
    set->n++;
    return true;
}

/* --- columns ------------------------------------------------------------- */

enum col {
    COL_ID,
    COL_SUBMIT,
    COL_DURATION,
    COL_CHIPS,
    COL_HOSTS,
    COL_PRIORITY,
    COL_QUEUE,
    COL_USER,
    COL_STATUS,
    COL_REQUESTED,
    COL_ORIG_WAIT,
    COL__COUNT
};

static const struct {
    const char *name;
    bool required;
} columns[COL__COUNT] = {
    [COL_ID] = {"job_id", true},
    [COL_SUBMIT] = {"submit_s", true},
    [COL_DURATION] = {"duration_s", true},
    [COL_CHIPS] = {"chips", true},
    [COL_HOSTS] = {"hosts", false},
    [COL_PRIORITY] = {"priority", false},
    [COL_QUEUE] = {"queue", false},
    [COL_USER] = {"user", false},
    [COL_STATUS] = {"status", false},
    [COL_REQUESTED] = {"requested_s", false},
    [COL_ORIG_WAIT] = {"orig_wait_s", false},
};

#define MAX_FIELDS 64

struct field {
    const char *s; /* points into the line buffer, NUL-terminated */
    size_t len;
    int col; /* 1-based column of its first character */
};

/*
 * Splits one line (without its newline) into fields, unquoting in place
 * into `scratch` (at least len + MAX_FIELDS bytes). Returns the field count,
 * or -1 with *bad_col set for an unterminated quote, -2 for too many fields.
 */
static int split_line(const char *line, size_t len, char *scratch,
                      struct field *f, int *bad_col)
{
    int n = 0;
    size_t i = 0;
    char *out = scratch;
    for (;;) {
        if (n == MAX_FIELDS)
            return -2;
        f[n].s = out;
        f[n].col = (int)i + 1;
        if (i < len && line[i] == '"') {
            i++;
            for (;;) {
                if (i >= len) {
                    *bad_col = f[n].col;
                    return -1;
                }
                if (line[i] == '"') {
                    if (i + 1 < len && line[i + 1] == '"') {
                        *out++ = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                *out++ = line[i++];
            }
            /* Anything between the closing quote and the comma is kept. */
            while (i < len && line[i] != ',')
                *out++ = line[i++];
        } else {
            while (i < len && line[i] != ',')
                *out++ = line[i++];
        }
        f[n].len = (size_t)(out - f[n].s);
        *out++ = '\0';
        n++;
        if (i >= len)
            break;
        i++; /* the comma */
    }
    return n;
}

static void trim(struct field *f)
{
    while (f->len && (f->s[0] == ' ' || f->s[0] == '\t')) {
        f->s++;
        f->len--;
        f->col++;
    }
    while (f->len && (f->s[f->len - 1] == ' ' || f->s[f->len - 1] == '\t'))
        ((char *)f->s)[--f->len] = '\0';
}

/* Seconds as written ("12", "12.5", "1e3") -> ms; false if not a number in
 * [0, 1e12 s]. */
static bool parse_seconds(const char *s, int64_t *ms)
{
    if (!*s)
        return false;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (*end || errno || !isfinite(d) || d < 0 || d > 1e12)
        return false;
    *ms = (int64_t)llround(d * 1000.0);
    return true;
}

/* A whole number in [lo, hi]. */
static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!*s)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

struct reader {
    struct fq_trace *t;
    const char *name;
    bool skip_bad;
    int idx[COL__COUNT]; /* field index of each column, -1 if absent */
    int ncols;
    struct idset ids;
    int64_t last_submit;
};

/* Records a bad row: returns the error (no skip) or 0 after counting it. */
static int bad_row(struct reader *r, struct fq_err *err, int line, int col,
                   const char *path, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int bad_row(struct reader *r, struct fq_err *err, int line, int col,
                   const char *path, const char *fmt, ...)
{
    char detail[FQ_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    struct fq_err local;
    fq_err_at(&local, FQ_EINVAL, r->name, line, col, path, "%s", detail);
    if (!r->skip_bad) {
        if (err)
            *err = local;
        return FQ_EINVAL;
    }
    struct fq_trace *t = r->t;
    t->skipped++;
    if (t->n_skip_errors < FQ_TRACE_KEEP_ERRORS) {
        if (!t->skip_errors)
            t->skip_errors =
                fq_xcalloc(FQ_TRACE_KEEP_ERRORS, sizeof(*t->skip_errors));
        t->skip_errors[t->n_skip_errors++] = local;
    }
    return 0;
}

static int read_header(struct reader *r, struct field *f, int n, int line,
                       struct fq_err *err)
{
    for (int c = 0; c < COL__COUNT; c++)
        r->idx[c] = -1;
    for (int i = 0; i < n; i++) {
        trim(&f[i]);
        for (int c = 0; c < COL__COUNT; c++) {
            if (strcmp(f[i].s, columns[c].name) != 0)
                continue;
            if (r->idx[c] >= 0)
                return fq_err_at(err, FQ_EPARSE, r->name, line, f[i].col, NULL,
                                 "header: column \"%s\" appears twice",
                                 columns[c].name);
            r->idx[c] = i;
        }
    }
    for (int c = 0; c < COL__COUNT; c++)
        if (columns[c].required && r->idx[c] < 0)
            return fq_err_at(err, FQ_EPARSE, r->name, line, 1, NULL,
                             "header: required column \"%s\" is missing "
                             "(expected job_id,submit_s,duration_s,chips,"
                             "hosts,...)",
                             columns[c].name);
    r->ncols = n;
    return 0;
}

static const char *fieldv(struct field *f, const struct reader *r, int c)
{
    return r->idx[c] >= 0 ? f[r->idx[c]].s : "";
}

static int fcol(struct field *f, const struct reader *r, int c)
{
    return r->idx[c] >= 0 ? f[r->idx[c]].col : 1;
}

static int read_row(struct reader *r, struct field *f, int n, int line,
                    struct fq_err *err)
{
    if (n != r->ncols)
        return bad_row(r, err, line, 1, NULL,
                       "expected %d fields as in the header, found %d",
                       r->ncols, n);
    for (int i = 0; i < n; i++)
        trim(&f[i]);

    struct fq_trace_job j = {0};
    j.line = (uint32_t)line;
    const char *id = fieldv(f, r, COL_ID);
    if (!*id)
        return bad_row(r, err, line, fcol(f, r, COL_ID), "job_id",
                       "must not be empty");
    if (!parse_seconds(fieldv(f, r, COL_SUBMIT), &j.submit_ms))
        return bad_row(r, err, line, fcol(f, r, COL_SUBMIT), "submit_s",
                       "not a number of seconds >= 0: \"%s\"",
                       fieldv(f, r, COL_SUBMIT));
    if (j.submit_ms < r->last_submit)
        return bad_row(r, err, line, fcol(f, r, COL_SUBMIT), "submit_s",
                       "rows must be sorted by submit_s: %s comes after "
                       "%.3f",
                       fieldv(f, r, COL_SUBMIT),
                       (double)r->last_submit / 1000.0);
    if (!parse_seconds(fieldv(f, r, COL_DURATION), &j.duration_ms) ||
        j.duration_ms <= 0)
        return bad_row(r, err, line, fcol(f, r, COL_DURATION), "duration_s",
                       "must be a number of seconds > 0, got \"%s\"",
                       fieldv(f, r, COL_DURATION));
    if (!parse_int(fieldv(f, r, COL_CHIPS), 1, 1000000, &j.chips))
        return bad_row(r, err, line, fcol(f, r, COL_CHIPS), "chips",
                       "must be a whole number from 1 to 1000000, got \"%s\"",
                       fieldv(f, r, COL_CHIPS));
    j.hosts = 1;
    if (r->idx[COL_HOSTS] >= 0 && *fieldv(f, r, COL_HOSTS) &&
        !parse_int(fieldv(f, r, COL_HOSTS), 1, j.chips, &j.hosts))
        return bad_row(r, err, line, fcol(f, r, COL_HOSTS), "hosts",
                       "must be a whole number from 1 to chips (%lld), got "
                       "\"%s\"",
                       (long long)j.chips, fieldv(f, r, COL_HOSTS));
    if (*fieldv(f, r, COL_PRIORITY) &&
        !parse_int(fieldv(f, r, COL_PRIORITY), -1000000000, 1000000000,
                   &j.priority))
        return bad_row(r, err, line, fcol(f, r, COL_PRIORITY), "priority",
                       "must be a whole number, got \"%s\"",
                       fieldv(f, r, COL_PRIORITY));
    j.requested_ms = -1;
    if (*fieldv(f, r, COL_REQUESTED) &&
        !parse_seconds(fieldv(f, r, COL_REQUESTED), &j.requested_ms))
        return bad_row(r, err, line, fcol(f, r, COL_REQUESTED), "requested_s",
                       "not a number of seconds >= 0: \"%s\"",
                       fieldv(f, r, COL_REQUESTED));
    j.orig_wait_ms = -1;
    if (*fieldv(f, r, COL_ORIG_WAIT) &&
        !parse_seconds(fieldv(f, r, COL_ORIG_WAIT), &j.orig_wait_ms))
        return bad_row(r, err, line, fcol(f, r, COL_ORIG_WAIT), "orig_wait_s",
                       "not a number of seconds >= 0: \"%s\"",
                       fieldv(f, r, COL_ORIG_WAIT));

    struct fq_trace *t = r->t;
    j.id = arena_strndup(t->arena, id, strlen(id));
    if (!idset_add(&r->ids, j.id))
        return bad_row(r, err, line, fcol(f, r, COL_ID), "job_id",
                       "duplicate job id \"%s\"", id);
    j.queue = arena_strndup(t->arena, fieldv(f, r, COL_QUEUE),
                            strlen(fieldv(f, r, COL_QUEUE)));
    j.user = arena_strndup(t->arena, fieldv(f, r, COL_USER),
                           strlen(fieldv(f, r, COL_USER)));
    j.status = arena_strndup(t->arena, fieldv(f, r, COL_STATUS),
                             strlen(fieldv(f, r, COL_STATUS)));
    if (t->n >= FQ_TRACE_MAX_ROWS)
        return fq_err_at(err, FQ_ELIMIT, r->name, line, 1, NULL,
                         "more than %d jobs", FQ_TRACE_MAX_ROWS);
    FQ_GROW(t->jobs, t->cap, t->n + 1);
    t->jobs[t->n++] = j;
    r->last_submit = j.submit_ms;
    return 0;
}

void fq_trace_init(struct fq_trace *t)
{
    memset(t, 0, sizeof(*t));
    t->arena = fq_xcalloc(1, sizeof(*t->arena));
}

void fq_trace_release(struct fq_trace *t)
{
    free(t->jobs);
    free(t->skip_errors);
    arena_free(t->arena);
    memset(t, 0, sizeof(*t));
}

int fq_trace_parse(struct fq_trace *t, const char *text, size_t len,
                   const char *name, bool skip_bad, struct fq_err *err)
{
    struct reader r = {
        .t = t, .name = name ? name : "trace", .skip_bad = skip_bad};
    char *scratch = fq_xmalloc(FQ_TRACE_MAX_LINE + MAX_FIELDS + 1);
    struct field f[MAX_FIELDS];
    bool header = false;
    int rc = 0;
    int line = 0;
    size_t pos = 0;
    while (pos < len) {
        line++;
        const char *start = text + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - start) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n && start[n - 1] == '\r')
            n--;
        if (n > FQ_TRACE_MAX_LINE) {
            rc = fq_err_at(err, FQ_ELIMIT, r.name, line, 1, NULL,
                           "line longer than %d bytes", FQ_TRACE_MAX_LINE);
            goto out;
        }
        if (n == 0 || (n > 0 && start[0] == '#'))
            continue; /* blank lines and comments */
        if (memchr(start, '\0', n)) {
            rc = fq_err_at(err, FQ_EPARSE, r.name, line, 1, NULL,
                           "NUL byte: not a text file");
            goto out;
        }
        int bad_col = 0;
        int nf = split_line(start, n, scratch, f, &bad_col);
        if (nf == -2) {
            rc = header ? bad_row(&r, err, line, 1, NULL, "more than %d fields",
                                  MAX_FIELDS) :
                          fq_err_at(err, FQ_EPARSE, r.name, line, 1, NULL,
                                    "header: more than %d fields", MAX_FIELDS);
            if (rc)
                goto out;
            continue;
        }
        if (nf == -1) {
            rc = header ? bad_row(&r, err, line, bad_col, NULL,
                                  "unterminated quoted field") :
                          fq_err_at(err, FQ_EPARSE, r.name, line, bad_col, NULL,
                                    "header: unterminated quote");
            if (rc)
                goto out;
            continue;
        }
        if (!header) {
            rc = read_header(&r, f, nf, line, err);
            if (rc)
                goto out;
            header = true;
            continue;
        }
        t->lines++;
        rc = read_row(&r, f, nf, line, err);
        if (rc)
            goto out;
    }
    if (!header)
        rc = fq_err_at(err, FQ_EPARSE, r.name, 0, 0, NULL,
                       "empty trace: no header line");
out:
    free(scratch);
    free(r.ids.slots);
    return rc;
}

int fq_trace_load(struct fq_trace *t, const char *path, bool skip_bad,
                  struct fq_err *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return fq_err_set(err, FQ_EIO, "%s: %s", path, strerror(errno));
    struct fq_buf b = FQ_BUF_INIT;
    char chunk[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
        if (b.len + n > (size_t)4 << 30) {
            rc = fq_err_set(err, FQ_ELIMIT, "%s: larger than 4 GiB", path);
            break;
        }
        fq_buf_append(&b, chunk, n);
    }
    if (!rc && ferror(fp))
        rc = fq_err_set(err, FQ_EIO, "%s: read error", path);
    fclose(fp);
    if (!rc)
        rc =
            fq_trace_parse(t, b.data ? b.data : "", b.len, path, skip_bad, err);
    fq_buf_release(&b);
    return rc;
}

/* --- column map ---------------------------------------------------------- */

void fq_trace_map_init(struct fq_trace_map *m)
{
    memset(m, 0, sizeof(*m));
    m->queue_from = FQ_TRACE_QUEUE_FIXED;
}

int fq_trace_map_parse(struct fq_trace_map *m, const char *spec,
                       struct fq_err *err)
{
    char *copy = fq_xstrdup(spec);
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            rc = fq_err_set(err, FQ_EINVAL,
                            "--map: \"%s\" is not key=value (keys: "
                            "chips-per-host, queue, priority)",
                            item);
            break;
        }
        *eq = '\0';
        const char *key = item, *val = eq + 1;
        if (strcmp(key, "chips-per-host") == 0) {
            int64_t v;
            if (!parse_int(val, 1, 1000000, &v)) {
                rc = fq_err_set(err, FQ_EINVAL,
                                "--map: chips-per-host must be a whole "
                                "number >= 1, got \"%s\"",
                                val);
                break;
            }
            m->chips_per_host = v;
        } else if (strcmp(key, "queue") == 0) {
            if (strcmp(val, "@queue") == 0) {
                m->queue_from = FQ_TRACE_QUEUE_COLUMN;
            } else if (strcmp(val, "@user") == 0) {
                m->queue_from = FQ_TRACE_QUEUE_USER;
            } else if (*val && *val != '@' && strlen(val) < sizeof(m->queue)) {
                m->queue_from = FQ_TRACE_QUEUE_FIXED;
                snprintf(m->queue, sizeof(m->queue), "%s", val);
            } else {
                rc = fq_err_set(err, FQ_EINVAL,
                                "--map: queue must be a LocalQueue name, "
                                "@queue or @user, got \"%s\"",
                                val);
                break;
            }
        } else if (strcmp(key, "priority") == 0) {
            if (strcmp(val, "@priority") == 0) {
                m->priority_fixed = false;
            } else if (parse_int(val, -1000000000, 1000000000, &m->priority)) {
                m->priority_fixed = true;
            } else {
                rc = fq_err_set(err, FQ_EINVAL,
                                "--map: priority must be @priority or a "
                                "whole number, got \"%s\"",
                                val);
                break;
            }
        } else {
            rc = fq_err_set(err, FQ_EINVAL,
                            "--map: unknown key \"%s\" (keys: "
                            "chips-per-host, queue, priority)",
                            key);
            break;
        }
    }
    free(copy);
    return rc;
}

void fq_trace_shape(const struct fq_trace_map *m, const struct fq_trace_job *j,
                    int64_t *hosts, int64_t *per_host)
{
    int64_t h = j->hosts > 0 ? j->hosts : 1;
    if (m && m->chips_per_host > 0)
        h = (j->chips + m->chips_per_host - 1) / m->chips_per_host;
    *hosts = h;
    *per_host = (j->chips + h - 1) / h;
}

const char *fq_trace_queue(const struct fq_trace_map *m,
                           const struct fq_trace_job *j, const char *def)
{
    if (!m)
        return def;
    switch (m->queue_from) {
    case FQ_TRACE_QUEUE_COLUMN:
        return *j->queue ? j->queue : def;
    case FQ_TRACE_QUEUE_USER:
        return *j->user ? j->user : def;
    case FQ_TRACE_QUEUE_FIXED:
        break;
    }
    return m->queue[0] ? m->queue : def;
}

int64_t fq_trace_priority(const struct fq_trace_map *m,
                          const struct fq_trace_job *j)
{
    return m && m->priority_fixed ? m->priority : j->priority;
}
