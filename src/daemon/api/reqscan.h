/*
 * reqscan.h - where an HTTP/1.1 request stream stands, read byte by byte
 * as it arrives: in a request's headers, in its body, or between
 * requests, and whether a request is over the header or body cap.
 * connguard.c feeds it each connection's bytes before evhttp parses them
 * (see there); it has no I/O and no libevent, so it is fuzzed alone.
 */
#ifndef FLEXQ_DAEMON_REQSCAN_H
#define FLEXQ_DAEMON_REQSCAN_H

#include <stdbool.h>
#include <stddef.h>

#define FQ_REQSCAN_LINE 64 /* bytes of a header line kept to read its name */

enum fq_reqscan_state {
    FQ_REQSCAN_IDLE, /* between requests (or before the first) */
    FQ_REQSCAN_HEAD, /* request line and headers */
    FQ_REQSCAN_BODY, /* a body: Content-Length bytes, or chunked */
    FQ_REQSCAN_OVER, /* refused: over a cap (sticky) */
};

struct fq_reqscan {
    size_t max_headers, max_body;
    enum fq_reqscan_state st;
    int refuse;                 /* 431 or 413 once OVER */
    long long clen;             /* Content-Length, -1 none, LLONG_MAX huge */
    bool chunked;               /* Transfer-Encoding: chunked */
    size_t hbytes;              /* bytes of this request's head so far */
    size_t body;                /* body bytes seen */
    unsigned lines;             /* lines of this head so far */
    size_t linelen;             /* length of the current line (may pass LINE) */
    char line[FQ_REQSCAN_LINE]; /* its first bytes, lower-cased */
};

void fq_reqscan_init(struct fq_reqscan *s, size_t max_headers, size_t max_body);

/*
 * Feeds `n` bytes (borrowed). Returns 0, or the HTTP status to refuse the
 * request with (431: head over max_headers; 413: a Content-Length or a
 * chunked body over max_body), after which the state is OVER and further
 * bytes change nothing. A body with Content-Length ends by its length; a
 * chunked body ends only by fq_reqscan_done (the guard cannot tell its
 * end without parsing chunks; evhttp can).
 */
int fq_reqscan_feed(struct fq_reqscan *s, const unsigned char *p, size_t n);

/* evhttp read a whole request: a chunked body is over. */
void fq_reqscan_done(struct fq_reqscan *s);

#endif
