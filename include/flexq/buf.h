/*
 * buf.h - a growable byte buffer, always NUL-terminated.
 *
 * Used for encoders (JSON, YAML, tables, HTTP bodies). It grows by doubling
 * and aborts on allocation failure like the rest of flexq. Also two helpers
 * for text built often in fixed buffers (names, keys, uids, messages),
 * where a printf costs more than the rest of the work.
 *
 * A primitive of the base layer (src/core/base/): it knows nothing of
 * objects, Kubernetes or the engine, and must not grow calls into higher
 * layers. There is one of it; use it rather than writing another.
 */
#ifndef FLEXQ_BUF_H
#define FLEXQ_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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
/* Makes room for n more bytes (and the NUL) without changing len: the
 * caller may then write up to n bytes at data + len itself. */
void fq_buf_reserve(struct fq_buf *b, size_t n);
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

/* Puts s at buf + at (at < n), cut as snprintf cuts at n - 1 bytes and
 * NUL-terminated; returns where it ends. */
size_t fq_text_put(char *buf, size_t n, size_t at, const char *s);
/* The low 4 * digits bits of v as that many lowercase hex digits at p (no
 * NUL); returns the end. */
char *fq_hex_put(char *p, uint64_t v, int digits);

#endif
