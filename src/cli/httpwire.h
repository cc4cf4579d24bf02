/*
 * httpwire.h - a small HTTP/1.1 client over a plain TCP socket, for the
 * CLI's http:// servers (see client.c for when it is used instead of
 * libcurl).
 *
 * One struct fq_wire is one keep-alive connection to one host:port,
 * opened on the first request and again when the server closed it. A
 * request sends the method, path, the given header lines and the body,
 * then reads the answer: the status line, headers (each passed to
 * `on_header`), and the body (Content-Length, chunked, or until close),
 * passed to `on_body` in pieces as it arrives.
 *
 * Caps: the status line and headers together at most 64 KiB, a chunk-size
 * line at most 1 KiB; the body is capped by the caller's callback.
 */
#ifndef FLEXQ_CLI_HTTPWIRE_H
#define FLEXQ_CLI_HTTPWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "flexq/err.h"

struct fq_wire;

/* Called once per header line of the answer (name and value trimmed, not
 * NUL-terminated). */
typedef void (*fq_wire_header_fn)(void *ctx, const char *name, size_t nlen,
                                  const char *val, size_t vlen);
/* Called with each piece of the body as it arrives; `status` is the HTTP
 * status. Returns 0 to go on, 1 to stop reading (the connection is then
 * closed), a negative FQ_E* code to fail the request with it. */
typedef int (*fq_wire_body_fn)(void *ctx, int status, const char *data,
                               size_t n);

/*
 * Splits "http://HOST[:PORT][/...]" into host and port (80 when absent).
 * Bracketed IPv6 hosts are accepted. Returns 0, or FQ_EINVAL when the URL
 * is not plain http:// or a part is too long.
 */
int fq_wire_split_url(const char *url, char *host, size_t hostcap, char *port,
                      size_t portcap);

/* A connection to host:port (both copied); connects lazily. Returns owned. */
struct fq_wire *fq_wire_new(const char *host, const char *port);
void fq_wire_free(struct fq_wire *w);

/*
 * One request. `headers` are complete "Name: value" lines without CRLF
 * (borrowed); Host, Content-Length and Connection are added here. `body`
 * may be NULL. timeout_ms 0: no limit on the whole request (connecting
 * is always limited to 5 s). Returns 0 when the answer was read whole, 1
 * when on_body stopped it, or a negative code: FQ_ETIMEOUT, FQ_EIO (with
 * the reason in err), FQ_EPARSE for a malformed answer, or on_body's code.
 * *status gets the HTTP status (0 when none arrived).
 */
int fq_wire_request(struct fq_wire *w, const char *method, const char *path,
                    const char *const *headers, size_t nheaders,
                    const char *body, size_t len, int64_t timeout_ms,
                    fq_wire_header_fn on_header, fq_wire_body_fn on_body,
                    void *ctx, int *status, struct fq_err *err);

#endif
