/*
 * connguard.c - per-connection limits in front of evhttp: header deadline,
 * header and body caps answered as Kubernetes Status, and a cap on
 * connections per client address.
 *
 * Why: evhttp (libevent 2.1) resets its read timeout on every byte, so a
 * client that sends its headers one byte a second keeps a connection for
 * ever (slowloris); it answers oversized headers and bodies with its own
 * HTML page; and it has no per-client limit, so one client can take every
 * descriptor. libevent 2.1 has no hook before a request is parsed, so the
 * guard watches the bytes instead: evhttp asks http.c for each
 * connection's bufferevent (evhttp_set_bevcb), and the guard adds a
 * callback on its input buffer. An evbuffer runs its callbacks as soon as
 * bytes are appended, before the bufferevent's read callback (evhttp's
 * parser) runs, so the guard sees every byte first and can refuse a
 * request before evhttp acts on it.
 *
 * Per connection, reqscan.c follows the bytes read (in a request's head,
 * its body, or between requests) and says when a request passes a cap:
 *
 *   head over max_headers -> 431; Content-Length over max_body -> 413 as
 *   soon as the blank line arrives, before any body byte is read (a curl
 *   with Expect: 100-continue never sends it); a chunked body passing
 *   max_body -> 413.
 *
 * The guard adds the deadline: a request's head must be complete header_s
 * seconds after its first byte (after the accept for a connection's first
 * request), else 408. Between requests evhttp's idle timeout
 * (FQ_HTTP_IDLE_S) applies.
 *
 * A refusal writes the Status straight to the socket (plain HTTP: evhttp
 * has nothing queued while it reads a request), shuts the write side,
 * discards what the client still sends for LINGER_MS (so it can read the
 * answer rather than get a reset), then shuts the read side: evhttp reads
 * end-of-file and frees the connection as it does for any client that
 * left. Over TLS the guard cannot write into the stream and just closes.
 *
 * Lifetime: evhttp frees a connection's bufferevent without telling
 * anyone, so the guard never touches the bufferevent outside its input
 * callback (which cannot run after the free). Its timers act on the
 * descriptor only, after checking (fstat: device and inode) that the
 * descriptor is still the same socket; a record whose socket is gone is
 * freed on the next sweep (every SWEEP_MS), or at once when accept hands
 * out its descriptor number again. Records are indexed by descriptor.
 *
 * Invariants: (1) clients[addr] equals the number of live records from
 * addr; (2) a record is freed only once its socket is closed, so its
 * input callback (which holds it) can no longer run.
 *
 * What it does not do: limit the rate of requests on a connection, bodies
 * that dribble in slowly (evhttp's timeout, reset per byte, still governs
 * them), or pipelined requests beyond the first (counted as body).
 */
#include "api/connguard.h"
#include "api/reqscan.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "log.h"

#define SWEEP_MS   250
#define LINGER_MS  1000
#define WARN_EVERY 10 /* seconds between refusal warnings */

struct conn {
    struct fq_connguard *g;
    struct bufferevent *bev; /* valid only inside the input callback */
    bool tls;
    int fd;
    dev_t dev;
    ino_t ino;
    char addr[INET6_ADDRSTRLEN];
    struct fq_reqscan scan; /* where the byte stream stands */
    bool closing;           /* refused: lingering, then shut down */
    bool due;               /* a request head is awaited by deadline_ms */
    bool passthrough;       /* hijacked (port-forward): no longer HTTP */
    long long deadline_ms;  /* head due, or (closing) shut down */
    struct event *admit;    /* until on_admit ran */
};

struct fq_connguard {
    struct event_base *base;
    struct fq_connguard_limits lim;
    struct conn **byfd;
    size_t nfd;
    size_t live;

    /* Open connections per client address; few distinct addresses, so a
     * plain array searched in order. */
    struct client {
        char addr[INET6_ADDRSTRLEN];
        unsigned n;
    } * clients;

    size_t nclients, capclients;
    struct event *sweep;
    unsigned long refused, refused_since_warn;
    long long last_warn_ms;
};

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool same_socket(const struct conn *c)
{
    struct stat st;
    return fstat(c->fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
           st.st_dev == c->dev && st.st_ino == c->ino;
}

/* Adds d to addr's count; returns the new count. */
static unsigned client_add(struct fq_connguard *g, const char *addr, int d)
{
    size_t i = 0;
    while (i < g->nclients && strcmp(g->clients[i].addr, addr))
        i++;
    if (i == g->nclients) {
        if (d < 0)
            return 0;
        if (g->nclients == g->capclients) {
            g->capclients = g->capclients ? 2 * g->capclients : 16;
            g->clients =
                fq_xrealloc(g->clients, g->capclients * sizeof(*g->clients));
        }
        snprintf(g->clients[i].addr, sizeof(g->clients[i].addr), "%s", addr);
        g->clients[i].n = 0;
        g->nclients++;
    }
    g->clients[i].n = (unsigned)((int)g->clients[i].n + d);
    unsigned n = g->clients[i].n;
    if (!n)
        g->clients[i] = g->clients[--g->nclients];
    return n;
}

/* The record for descriptor `fd` is gone: forget it. */
static void conn_release(struct fq_connguard *g, int fd)
{
    struct conn *c = g->byfd[fd];
    g->byfd[fd] = NULL;
    if (c->addr[0])
        client_add(g, c->addr, -1);
    g->live--;
    free(c);
}

static void note_refusal(struct fq_connguard *g, const struct conn *c, int code,
                         const char *why)
{
    g->refused++;
    g->refused_since_warn++;
    long long now = mono_ms();
    if (g->last_warn_ms && now - g->last_warn_ms < WARN_EVERY * 1000)
        return;
    g->last_warn_ms = now;
    fq_log(FQ_LOG_WARN, "connection refused",
           "client=%s code=%d reason=\"%s\" refused_recently=%lu", c->addr,
           code, why, g->refused_since_warn);
    g->refused_since_warn = 0;
}

/*
 * Answers `code` with a Status and starts the close (see the top comment).
 * `reason` is the Kubernetes StatusReason; `msg` must hold no '"' or '\'.
 */
static void refuse(struct conn *c, int code, const char *text,
                   const char *reason, const char *msg)
{
    note_refusal(c->g, c, code, reason);
    if (!c->tls) {
        char body[512], resp[1024];
        int bn = snprintf(body, sizeof(body),
                          "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                          "\"metadata\":{},\"status\":\"Failure\","
                          "\"message\":\"%s\",\"reason\":\"%s\","
                          "\"code\":%d}",
                          msg, reason, code);
        if (bn < 0 || (size_t)bn >= sizeof(body))
            bn = 0;
        int n = snprintf(resp, sizeof(resp),
                         "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                         "Connection: close\r\n%sContent-Length: %d\r\n\r\n%s",
                         code, text, code == 429 ? "Retry-After: 1\r\n" : "",
                         bn, bn ? body : "");
        if (n > 0 && (size_t)n < sizeof(resp)) {
            ssize_t w =
                send(c->fd, resp, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
            (void)w;
        }
        shutdown(c->fd, SHUT_WR);
        c->deadline_ms = mono_ms() + LINGER_MS;
    } else {
        shutdown(c->fd, SHUT_RDWR);
        c->deadline_ms = 0;
    }
    c->closing = true;
    c->due = false;
}

/* The scanner refused the request: answer with the matching Status. */
static void refuse_scan(struct conn *c, int code)
{
    char msg[160];
    if (code == 431) {
        snprintf(msg, sizeof(msg),
                 "the request line and headers are over the limit of %zu "
                 "bytes",
                 c->g->lim.max_headers);
        refuse(c, 431, "Request Header Fields Too Large",
               "RequestHeaderFieldsTooLarge", msg);
    } else if (c->scan.chunked) {
        snprintf(msg, sizeof(msg),
                 "the chunked request body is over the limit of %zu bytes",
                 c->g->lim.max_body);
        refuse(c, 413, "Payload Too Large", "RequestEntityTooLarge", msg);
    } else {
        snprintf(msg, sizeof(msg),
                 "the request body of %lld bytes is over the limit of %zu "
                 "bytes",
                 c->scan.clen, c->g->lim.max_body);
        refuse(c, 413, "Payload Too Large", "RequestEntityTooLarge", msg);
    }
}

/* evbuffer callback on the connection's input: runs before evhttp reads. */
static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info,
                     void *arg)
{
    struct conn *c = arg;
    if (!info->n_added || c->passthrough)
        return;
    if (c->closing) {
        evbuffer_drain(buf, evbuffer_get_length(buf));
        return;
    }
    size_t len = evbuffer_get_length(buf);
    size_t added = info->n_added < len ? info->n_added : len;
    struct evbuffer_ptr pos;
    if (evbuffer_ptr_set(buf, &pos, len - added, EVBUFFER_PTR_SET) < 0)
        return;
    struct evbuffer_iovec vec[16];
    size_t left = added;
    int code = 0;
    while (left && !code) {
        int nv = evbuffer_peek(buf, (ev_ssize_t)left, &pos, vec, 16);
        if (nv <= 0)
            break;
        size_t done = 0;
        for (int i = 0; i < nv && i < 16 && done < left && !code; i++) {
            size_t k = vec[i].iov_len;
            if (k > left - done)
                k = left - done;
            code = fq_reqscan_feed(&c->scan, vec[i].iov_base, k);
            done += k;
        }
        left -= done;
        if (left && evbuffer_ptr_set(buf, &pos, done, EVBUFFER_PTR_ADD) < 0)
            break;
    }
    if (code) {
        refuse_scan(c, code);
        /* evhttp must not see the refused request. */
        evbuffer_drain(buf, evbuffer_get_length(buf));
        return;
    }
    if (c->scan.st != FQ_REQSCAN_HEAD) {
        c->due = false;
    } else if (!c->due) { /* a request began: its head is due */
        c->due = true;
        c->deadline_ms = mono_ms() + (long long)c->g->lim.header_s * 1000;
    }
}

/* Runs once, right after evhttp set the new connection's descriptor. */
static void on_admit(evutil_socket_t unused, short what, void *arg)
{
    struct conn *c = arg;
    struct fq_connguard *g = c->g;
    (void)unused;
    (void)what;
    event_free(c->admit);
    c->admit = NULL;
    c->fd = (int)bufferevent_getfd(c->bev);
    struct stat st;
    if (c->fd < 0 || fstat(c->fd, &st) < 0) {
        /* Not a connection we can follow (it failed at once). */
        evbuffer_remove_cb(bufferevent_get_input(c->bev), on_input, c);
        g->live--;
        free(c);
        return;
    }
    c->dev = st.st_dev;
    c->ino = st.st_ino;
    if ((size_t)c->fd >= g->nfd) {
        size_t n = g->nfd ? g->nfd : 256;
        while (n <= (size_t)c->fd)
            n *= 2;
        g->byfd = fq_xrealloc(g->byfd, n * sizeof(*g->byfd));
        memset(g->byfd + g->nfd, 0, (n - g->nfd) * sizeof(*g->byfd));
        g->nfd = n;
    }
    if (g->byfd[c->fd])
        /* accept reused the number: that socket is closed. */
        conn_release(g, c->fd);
    g->byfd[c->fd] = c;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, c->addr,
                      sizeof(c->addr));
        else if (ss.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
                      c->addr, sizeof(c->addr));
    }
    if (!c->addr[0])
        snprintf(c->addr, sizeof(c->addr), "unknown");
    unsigned n = client_add(g, c->addr, +1);
    if (g->lim.per_client && n > g->lim.per_client) {
        char msg[200];
        snprintf(msg, sizeof(msg),
                 "too many connections from %s: flexqd allows %u per client "
                 "address; close idle ones or reuse them",
                 c->addr, g->lim.per_client);
        refuse(c, 429, "Too Many Requests", "TooManyRequests", msg);
    }
}

void fq_connguard_watch(struct fq_connguard *g, struct bufferevent *bev,
                        bool tls)
{
    struct conn *c = fq_xcalloc(1, sizeof(*c));
    c->g = g;
    c->bev = bev;
    c->tls = tls;
    c->fd = -1;
    g->live++;
    fq_reqscan_init(&c->scan, g->lim.max_headers, g->lim.max_body);
    /* The first request's head is due from the accept. */
    c->due = true;
    c->deadline_ms = mono_ms() + (long long)g->lim.header_s * 1000;
    evbuffer_add_cb(bufferevent_get_input(bev), on_input, c);
    /* evhttp sets the descriptor right after this returns; an event made
     * active now runs in this same pass of the loop, before the socket
     * can be read. */
    c->admit = event_new(g->base, -1, 0, on_admit, c);
    event_active(c->admit, EV_TIMEOUT, 1);
}

void fq_connguard_request_done(struct fq_connguard *g, int fd)
{
    if (fd < 0 || (size_t)fd >= g->nfd || !g->byfd[fd])
        return;
    fq_reqscan_done(&g->byfd[fd]->scan);
}

void fq_connguard_hijacked(struct fq_connguard *g, int fd)
{
    if (fd < 0 || (size_t)fd >= g->nfd || !g->byfd[fd])
        return;
    g->byfd[fd]->passthrough = true;
    g->byfd[fd]->due = false;
}

static void on_sweep(evutil_socket_t unused, short what, void *arg)
{
    struct fq_connguard *g = arg;
    (void)unused;
    (void)what;
    long long now = mono_ms();
    for (size_t fd = 0; fd < g->nfd; fd++) {
        struct conn *c = g->byfd[fd];
        if (!c)
            continue;
        if (!same_socket(c)) {
            conn_release(g, (int)fd);
            continue;
        }
        if (!c->closing && c->due && now >= c->deadline_ms) {
            char msg[120];
            snprintf(msg, sizeof(msg),
                     "the request headers did not arrive within %d seconds",
                     g->lim.header_s);
            refuse(c, 408, "Request Timeout", "Timeout", msg);
        } else if (c->closing && c->deadline_ms && now >= c->deadline_ms) {
            /* evhttp reads end-of-file and frees the connection. */
            shutdown(c->fd, SHUT_RDWR);
            c->deadline_ms = 0;
        }
    }
}

struct fq_connguard *fq_connguard_new(struct event_base *base,
                                      const struct fq_connguard_limits *lim)
{
    struct fq_connguard *g = fq_xcalloc(1, sizeof(*g));
    g->base = base;
    g->lim = *lim;
    g->sweep = event_new(base, -1, EV_PERSIST, on_sweep, g);
    struct timeval tv = {0, SWEEP_MS * 1000};
    event_add(g->sweep, &tv);
    return g;
}

void fq_connguard_free(struct fq_connguard *g)
{
    if (!g)
        return;
    event_free(g->sweep);
    for (size_t fd = 0; fd < g->nfd; fd++)
        if (g->byfd[fd])
            conn_release(g, (int)fd);
    free(g->byfd);
    free(g->clients);
    free(g);
}

void fq_connguard_set_limits(struct fq_connguard *g, int header_s,
                             unsigned per_client)
{
    if (header_s > 0)
        g->lim.header_s = header_s;
    if (per_client > 0)
        g->lim.per_client = per_client;
}
