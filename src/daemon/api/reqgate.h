/*
 * reqgate.h - the checks every request passes before it is routed, so a
 * web page in the user's browser cannot use flexqd's API (CSRF, DNS
 * rebinding), whether or not tokens are required.
 *
 *   Host      names this server: the listen address, or a loopback name
 *             when it listens on loopback (any host when it listens on
 *             0.0.0.0 / ::, which needs tokens); the port is not compared,
 *             so tunnels (ssh -L) keep working.
 *   Origin    on POST, PUT, PATCH and DELETE: absent (curl, kubectl, the
 *             CLI) or the same origin as Host; Sec-Fetch-Site, when sent,
 *             is same-origin or none.
 *   Content-Type  on methods with a body: one of fq_reqgate_media (JSON,
 *             YAML, the patch types); others answer 415 and nothing is
 *             created. A body without a Content-Type is refused too.
 *
 * Pure: no I/O, no globals; fuzzed by tests/fuzz/fuzz_http.c.
 */
#ifndef FLEXQ_DAEMON_REQGATE_H
#define FLEXQ_DAEMON_REQGATE_H

#include <stdbool.h>
#include <stddef.h>

#include "flexq/err.h"

/* Methods a media type is accepted with. */
enum {
    FQ_MEDIA_POST = 1 << 0,
    FQ_MEDIA_PUT = 1 << 1,
    FQ_MEDIA_PATCH = 1 << 2,
    FQ_MEDIA_DELETE = 1 << 3,
};

struct fq_media {
    const char *type; /* lower case, without parameters */
    int methods;      /* FQ_MEDIA_* */
};

/* The accepted request media types, ending with {NULL, 0}. To accept a new
 * body format, add a line here (and teach the parser that reads it). */
extern const struct fq_media fq_reqgate_media[];

/* What the gate knows of the server (from --listen). */
struct fq_reqgate {
    char host[128]; /* the listen host, lower case, without brackets */
    bool loopback;  /* 127.0.0.0/8, ::1 or localhost */
    bool wildcard;  /* 0.0.0.0 or :: */
};

/* Fills *g from a listen address "HOST:PORT" ("[::1]:0"). FQ_EINVAL if it
 * is not one. */
int fq_reqgate_init(struct fq_reqgate *g, const char *listen,
                    struct fq_err *err);

/* One request's headers (NULL when absent) and body length. */
struct fq_reqgate_in {
    const char *method;
    const char *host;
    const char *origin;
    const char *sec_fetch_site;
    const char *content_type;
    size_t body_len;
};

/*
 * 0 when the request may go on; FQ_EFORBIDDEN (Host or Origin refused) or
 * FQ_EMEDIATYPE (415) with a message naming the header.
 */
int fq_reqgate_check(const struct fq_reqgate *g, const struct fq_reqgate_in *in,
                     struct fq_err *err);

/* Is `host` (a host name or address, no port or brackets) a loopback
 * name? */
bool fq_reqgate_is_loopback(const char *host);

#endif
