/*
 * connguard.h - per-connection limits evhttp does not enforce itself, or
 * enforces with an HTML answer: request headers that take too long
 * (slowloris), headers or bodies over the caps, and too many connections
 * from one client address. Every refusal is a Kubernetes Status.
 *
 * Used by http.c only: it hands each connection's bufferevent to
 * fq_connguard_watch when evhttp creates it, and tells the guard when a
 * request was read whole (fq_connguard_request_done).
 */
#ifndef FLEXQ_DAEMON_CONNGUARD_H
#define FLEXQ_DAEMON_CONNGUARD_H

#include <stdbool.h>
#include <stddef.h>

struct bufferevent;
struct event_base;
struct fq_connguard;

struct fq_connguard_limits {
    int header_s;        /* a request's headers must arrive within this */
    size_t max_headers;  /* bytes of request line + headers */
    size_t max_body;     /* bytes of a request body */
    unsigned per_client; /* open connections from one source address */
};

/* A guard on `base` (borrowed, outlives it). Returns owned. */
struct fq_connguard *fq_connguard_new(struct event_base *base,
                                      const struct fq_connguard_limits *lim);
void fq_connguard_free(struct fq_connguard *g);

/*
 * Starts guarding the connection whose bufferevent evhttp just asked for
 * (`bev`, borrowed: evhttp owns and frees it). Its descriptor is not set
 * yet; the guard reads it just after, before any byte is read. `tls`: the
 * bufferevent is an OpenSSL one (refusals then close without an answer,
 * since the guard cannot write into the TLS stream).
 */
void fq_connguard_watch(struct fq_connguard *g, struct bufferevent *bev,
                        bool tls);

/* evhttp read a whole request on descriptor `fd` (a chunked body ends
 * there; other bodies end by their Content-Length). */
void fq_connguard_request_done(struct fq_connguard *g, int fd);
/* The connection on fd left HTTP (fq_http_hijack: a port-forward
 * stream): its bytes are no longer scanned nor its head timed; it still
 * counts against its client's cap until it closes. */
void fq_connguard_hijacked(struct fq_connguard *g, int fd);

/* Sets the header deadline and the per-client cap (0 keeps each). */
void fq_connguard_set_limits(struct fq_connguard *g, int header_s,
                             unsigned per_client);

#endif
