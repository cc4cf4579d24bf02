/*
 * http.h - flexqd's HTTP server, a thin layer over libevent's evhttp.
 *
 * The rest of the daemon sees requests through this API only, so only
 * http.c and loop.c include <event2/...>. A handler receives a request,
 * reads its method, path, query and body, and either answers at once
 * (fq_http_reply), keeps it to answer later (any time before the loop ends;
 * the daemon does this to answer writes after their commit), or turns it
 * into a long-lived chunked stream (fq_http_stream_*) for watches and log
 * follows.
 *
 * Limits (connguard.c, before any handler runs; each refusal a Kubernetes
 * Status and a close): a request body above FQ_HTTP_MAX_BODY gets 413,
 * request line and headers above FQ_HTTP_MAX_HEADERS get 431, headers not
 * complete FQ_HTTP_HEADER_S seconds after they began (or after the
 * connection opened) get 408, and a client address holding
 * FQ_HTTP_PER_CLIENT connections gets 429 for the next one. A stream
 * whose client does not read is closed when FQ_HTTP_MAX_BACKLOG bytes wait.
 * Out of descriptors, a new connection is answered 503 and closed (one
 * spare descriptor is kept for that) and the warning is rate-limited.
 */
#ifndef FLEXQ_DAEMON_HTTP_H
#define FLEXQ_DAEMON_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "flexq/err.h"

#define FQ_HTTP_MAX_BODY    (4u << 20)
#define FQ_HTTP_MAX_HEADERS (64u << 10)
#define FQ_HTTP_MAX_BACKLOG (16u << 20)
/* Seconds an idle keep-alive connection, or a client slow to send its
 * request, is kept; and the same for a stream (watch, log follow). */
/* Connections the kernel queues before flexqd accepts them. */
#define FQ_HTTP_BACKLOG  1024
#define FQ_HTTP_IDLE_S   60
#define FQ_HTTP_STREAM_S 3600
/* Seconds a request's headers may take to arrive (slow-header clients). */
#define FQ_HTTP_HEADER_S 10
/* Open connections one client address may hold. */
#define FQ_HTTP_PER_CLIENT 256

struct fq_http;
struct fq_http_req;

/* Called for every request; the handler owns the answer. */
typedef void (*fq_http_handler_fn)(void *ctx, struct fq_http_req *r);
/* Called once when a stream's client goes away (r is gone after it). */
typedef void (*fq_http_close_fn)(void *ctx, struct fq_http_req *r);

/*
 * Binds `addr` ("127.0.0.1:8265", "[::1]:0"; port 0 picks a free port) on
 * the event base `base` (a struct event_base *). *out gets the server.
 */
int fq_http_new(void *base, const char *addr, fq_http_handler_fn fn, void *ctx,
                struct fq_http **out, struct fq_err *err);
/* The same over TLS: `ssl_ctx` (an SSL_CTX *, borrowed, outliving the
 * server) holds the certificate (tls.h). */
int fq_http_new_tls(void *base, const char *addr, void *ssl_ctx,
                    fq_http_handler_fn fn, void *ctx, struct fq_http **out,
                    struct fq_err *err);
void fq_http_free(struct fq_http *h);
/* Overrides FQ_HTTP_HEADER_S and FQ_HTTP_PER_CLIENT for connections
 * accepted from now on (0 keeps the default). */
void fq_http_set_limits(struct fq_http *h, int header_s, unsigned per_client);
/* The bound port (useful with port 0). */
int fq_http_port(const struct fq_http *h);

/* Request accessors; returned strings are borrowed from the request. */
const char *fq_http_method(const struct fq_http_req *r); /* "GET" */
const char *fq_http_path(const struct fq_http_req *r);   /* decoded */
/* The decoded value of a query parameter, or NULL. */
const char *fq_http_query(const struct fq_http_req *r, const char *key);
const char *fq_http_header(const struct fq_http_req *r, const char *name);
/* The body; always NUL-terminated (the NUL is not counted in *len). */
const char *fq_http_body(const struct fq_http_req *r, size_t *len);
const char *fq_http_peer(const struct fq_http_req *r);
/* One borrowed pointer the handler attaches to the request (the API: the
 * token it was identified by), NULL until set. */
void fq_http_set_user(struct fq_http_req *r, const void *user);
const void *fq_http_user(const struct fq_http_req *r);

/* Adds a response header (before reply or stream_start). */
void fq_http_add_header(struct fq_http_req *r, const char *name,
                        const char *value);
/* Sends the whole answer and releases the request. */
void fq_http_reply(struct fq_http_req *r, int status, const char *ctype,
                   const char *body, size_t len);

/* Starts a chunked answer; `on_close` (may be NULL) runs if the client
 * leaves first. */
void fq_http_stream_start(struct fq_http_req *r, int status, const char *ctype,
                          fq_http_close_fn on_close, void *ctx);
/* Queues data; returns -1 (and ends the stream) when the client has more
 * than FQ_HTTP_MAX_BACKLOG unread, else 0. */
int fq_http_stream_write(struct fq_http_req *r, const char *data, size_t len);
/* Ends the stream and releases the request (not after on_close ran). */
void fq_http_stream_end(struct fq_http_req *r);

/* Runs fn(ctx, r) once, `ms` milliseconds from now, unless the stream ends
 * or its client leaves first. One timer per stream: calling again (from fn
 * too) re-arms it. fn may end the stream. For watch deadlines and
 * bookmarks. */
typedef void (*fq_http_timer_fn)(void *ctx, struct fq_http_req *r);
void fq_http_stream_timer(struct fq_http_req *r, long long ms,
                          fq_http_timer_fn fn, void *ctx);

/*
 * Takes the connection of `r` over for another protocol (port-forward's
 * SPDY or WebSocket, portforward.c): writes `head` (the whole 101 answer)
 * to it and returns its bufferevent (a struct bufferevent *) with evhttp's
 * callbacks and timeouts removed, and in *conn the handle to close it with
 * fq_http_hijack_close. r is freed in every case; NULL when the request
 * has no connection any more.
 */
void *fq_http_hijack(struct fq_http_req *r, const char *head, size_t len,
                     void **conn);
void fq_http_hijack_close(void *conn);

#endif
