/*
 * buf.c - growable NUL-terminated byte buffer (see buf.h).
 */
#include "flexq/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

void fq_buf_init(struct fq_buf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void fq_buf_release(struct fq_buf *b)
{
    free(b->data);
    fq_buf_init(b);
}

void fq_buf_reset(struct fq_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static void reserve(struct fq_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need > b->cap) {
        size_t ncap = b->cap ? b->cap : 64;
        while (ncap < need)
            ncap *= 2;
        b->data = fq_xrealloc(b->data, ncap);
        b->cap = ncap;
    }
}

void fq_buf_append(struct fq_buf *b, const void *data, size_t n)
{
    reserve(b, n);
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void fq_buf_puts(struct fq_buf *b, const char *s)
{
    fq_buf_append(b, s, strlen(s));
}

void fq_buf_putc(struct fq_buf *b, char c)
{
    fq_buf_append(b, &c, 1);
}

void fq_buf_reserve(struct fq_buf *b, size_t n)
{
    reserve(b, n);
}

void fq_buf_vprintf(struct fq_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n <= 0)
        return;
    reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void fq_buf_printf(struct fq_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fq_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *fq_buf_str(const struct fq_buf *b)
{
    return b->data ? b->data : "";
}

char *fq_buf_detach(struct fq_buf *b)
{
    char *s = b->data ? b->data : fq_xstrdup("");
    fq_buf_init(b);
    return s;
}

void fq_buf_put_xml(struct fq_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            fq_buf_puts(b, "&lt;");
            break;
        case '>':
            fq_buf_puts(b, "&gt;");
            break;
        case '&':
            fq_buf_puts(b, "&amp;");
            break;
        case '"':
            fq_buf_puts(b, "&quot;");
            break;
        case '\'':
            fq_buf_puts(b, "&#39;");
            break;
        default:
            fq_buf_putc(b, *s);
        }
    }
}

size_t fq_text_put(char *buf, size_t n, size_t at, const char *s)
{
    size_t l = strlen(s);
    if (l > n - 1 - at)
        l = n - 1 - at;
    memcpy(buf + at, s, l);
    buf[at + l] = 0;
    return at + l;
}

char *fq_hex_put(char *p, uint64_t v, int digits)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = digits - 1; i >= 0; i--) {
        p[i] = hex[v & 15];
        v >>= 4;
    }
    return p + digits;
}
