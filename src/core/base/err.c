/*
 * err.c - the error table and struct fq_err helpers.
 *
 * The X-macro table in err.h is expanded here into lookup arrays, so a code's
 * CLI message, HTTP status and Kubernetes reason can never drift apart.
 * Nothing here allocates except fq_errlist_push.
 */
#include "flexq/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

struct errinfo {
    const char *name;
    const char *msg;
    int http;
    const char *reason;
};

static const struct errinfo table[FQ_ERR__COUNT] = {
    [FQ_OK] = {"OK", "success", 200, ""},
#define FQ_ERR_ROW(name, msg, http, reason) \
 [FQ_ERR_##name] = {#name, msg, http, reason},
    FQ_ERRORS(FQ_ERR_ROW)
#undef FQ_ERR_ROW
};

static const struct errinfo *lookup(int code)
{
    int i = code < 0 ? -code : code;
    if (i >= FQ_ERR__COUNT)
        i = FQ_ERR_EINTERNAL;
    return &table[i];
}

const char *fq_strerror(int code)
{
    return lookup(code)->msg;
}

int fq_err_http_status(int code)
{
    return lookup(code)->http;
}

const char *fq_err_reason(int code)
{
    return lookup(code)->reason;
}

__attribute__((format(printf, 3, 0))) static void vset(struct fq_err *err,
                                                       int code,
                                                       const char *fmt,
                                                       va_list ap)
{
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

int fq_err_set(struct fq_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    err->line = err->col = 0;
    err->path[0] = '\0';
    vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int fq_err_at(struct fq_err *err, int code, const char *file, int line, int col,
              const char *path, const char *fmt, ...)
{
    if (!err)
        return code;
    char detail[FQ_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);

    err->code = code;
    err->line = line;
    err->col = col;
    snprintf(err->path, sizeof(err->path), "%s", path ? path : "");

    /* "file:line:col: path: detail", leaving out the parts we do not know. */
    size_t off = 0;
    err->msg[0] = '\0';
    if (file && *file)
        off += (size_t)snprintf(err->msg + off, sizeof(err->msg) - off,
                                "%s:", file);
    if (line > 0 && off < sizeof(err->msg))
        off += (size_t)snprintf(err->msg + off, sizeof(err->msg) - off,
                                "%d:%d:", line, col);
    if (off > 0 && off < sizeof(err->msg))
        off += (size_t)snprintf(err->msg + off, sizeof(err->msg) - off, " ");
    if (path && *path && off < sizeof(err->msg))
        off += (size_t)snprintf(err->msg + off, sizeof(err->msg) - off,
                                "%s: ", path);
    if (off < sizeof(err->msg))
        snprintf(err->msg + off, sizeof(err->msg) - off, "%s", detail);
    return code;
}

void fq_errlist_init(struct fq_errlist *l)
{
    memset(l, 0, sizeof(*l));
}

void fq_errlist_release(struct fq_errlist *l)
{
    free(l->items);
    memset(l, 0, sizeof(*l));
}

void fq_errlist_push(struct fq_errlist *l, const struct fq_err *e)
{
    FQ_GROW(l->items, l->cap, l->n + 1);
    l->items[l->n++] = *e;
}
