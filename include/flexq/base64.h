/*
 * base64.h - standard base64 (RFC 4648, "+/" alphabet, "=" padding), as
 * Kubernetes' JSON carries []byte fields: a Secret's data, a ConfigMap's
 * binaryData.
 *
 * A base primitive: no allocation of its own beyond the caller's buffer.
 */
#ifndef FLEXQ_BASE64_H
#define FLEXQ_BASE64_H

#include <stddef.h>

struct fq_buf;

/* Appends the base64 text of p[0..n) to b. */
void fq_base64_encode(struct fq_buf *b, const void *p, size_t n);

/*
 * Appends the bytes s encodes to b (may be NULL: check only). Accepts what
 * Go's base64.StdEncoding accepts: padded groups of four, with '\r' and
 * '\n' skipped. Returns the decoded length, or -1 with *bad_at (may be
 * NULL) the offset of the first illegal byte, as Go reports
 * "illegal base64 data at input byte N".
 */
long fq_base64_decode(struct fq_buf *b, const char *s, size_t *bad_at);

#endif
