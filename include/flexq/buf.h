/*
 * buf.h - a growable byte buffer, always NUL-terminated.
 *
 * Used for encoders (JSON, YAML, tables, HTTP bodies). It grows by doubling
 * and aborts on allocation failure like the rest of flexq.
 */
#ifndef FLEXQ_BUF_H
#define FLEXQ_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct fq_buf {
    char *data; /* owned; NUL-terminated; NULL until the first append */
    size_t len;
    size_t cap;
};

#define FQ_BUF_INIT \
 {                  \
  NULL, 0, 0        \
 }

void fq_buf_init(struct fq_buf *b);
void fq_buf_release(struct fq_buf *b);
void fq_buf_reset(struct fq_buf *b); /* len = 0, keeps memory */
void fq_buf_append(struct fq_buf *b, const void *data, size_t n);
void fq_buf_puts(struct fq_buf *b, const char *s);
void fq_buf_putc(struct fq_buf *b, char c);
/* Appends s (NULL reads as "") with & < > " ' escaped as HTML/XML
 * entities, for text and attribute values in the web UI and SVG charts. */
void fq_buf_put_xml(struct fq_buf *b, const char *s);
void fq_buf_printf(struct fq_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void fq_buf_vprintf(struct fq_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Returns the string (never NULL, "" when empty); the buffer keeps it. */
const char *fq_buf_str(const struct fq_buf *b);
/* Hands the string to the caller (owned) and resets the buffer. */
char *fq_buf_detach(struct fq_buf *b);

#endif
