/*
 * httpwire.c - HTTP/1.1 over a plain TCP socket for the CLI (see
 * httpwire.h).
 *
 * Why it exists: a `flexq` process spent most of its 5.7 ms of start-up
 * CPU loading libcurl and the 32 libraries it brings (TLS, Kerberos,
 * LDAP, ...). For a plain http:// server (the local flexqd, the common
 * case) this file speaks the little HTTP the CLI needs, so libcurl is
 * loaded only for https:// or a proxy (client.c).
 *
 * How it works: the connection is opened lazily (non-blocking connect
 * with a 5 s limit), requests are written with one writev-like send, and
 * the answer is read through a 16 KiB buffer: status line and headers
 * (capped), then the body by Content-Length, chunked transfer coding, or
 * until the server closes. A connection reused from an earlier request
 * that turns out closed before any byte of the answer is reopened once
 * and the request sent again (the server had not seen it).
 *
 * What it does not do: TLS, proxies, redirects, compression, 1xx answers
 * other than skipping them, trailers beyond reading past them.
 */
#include "httpwire.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"

#define HEAD_MAX       (64u << 10)
#define CHUNK_LINE_MAX 1024u
#define RBUF           16384u
#define CONNECT_MS     5000

struct fq_wire {
    char *host;
    char *port;
    int fd;    /* -1 when not connected */
    bool used; /* the connection has carried an answer before */
    char rb[RBUF];
    size_t rlo, rhi;
    int64_t deadline; /* monotonic ms, 0: none */
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int fq_wire_split_url(const char *url, char *host, size_t hostcap, char *port,
                      size_t portcap)
{
    if (strncasecmp(url, "http://", 7) != 0)
        return FQ_EINVAL;
    const char *h = url + 7;
    const char *end = h + strcspn(h, "/?#");
    const char *hend, *p = NULL;
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(end - h));
        if (!rb)
            return FQ_EINVAL;
        h++;
        hend = rb;
        if (rb + 1 < end) {
            if (rb[1] != ':')
                return FQ_EINVAL;
            p = rb + 2;
        }
    } else {
        const char *colon = memchr(h, ':', (size_t)(end - h));
        hend = colon ? colon : end;
        if (colon)
            p = colon + 1;
    }
    if (memchr(h, '@', (size_t)(end - h)))
        return FQ_EINVAL; /* credentials in the URL: leave it to libcurl */
    size_t hn = (size_t)(hend - h), pn = p ? (size_t)(end - p) : 2;
    if (hn == 0 || hn >= hostcap || pn == 0 || pn >= portcap)
        return FQ_EINVAL;
    memcpy(host, h, hn);
    host[hn] = '\0';
    if (p) {
        for (const char *q = p; q < end; q++)
            if (*q < '0' || *q > '9')
                return FQ_EINVAL;
        memcpy(port, p, pn);
        port[pn] = '\0';
    } else {
        snprintf(port, portcap, "80");
    }
    return 0;
}

struct fq_wire *fq_wire_new(const char *host, const char *port)
{
    struct fq_wire *w = fq_xcalloc(1, sizeof(*w));
    w->host = fq_xstrdup(host);
    w->port = fq_xstrdup(port);
    w->fd = -1;
    return w;
}

static void hang_up(struct fq_wire *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    w->used = false;
    w->rlo = w->rhi = 0;
}

void fq_wire_free(struct fq_wire *w)
{
    if (!w)
        return;
    hang_up(w);
    free(w->host);
    free(w->port);
    free(w);
}

/* Waits until fd is ready for `events` or the deadline (0: none; the
 * connect limit passes its own). Returns 0, FQ_ETIMEOUT or FQ_EIO. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int ms = -1;
        if (deadline) {
            int64_t left = deadline - now_ms();
            if (left <= 0)
                return FQ_ETIMEOUT;
            ms = left > 60000 ? 60000 : (int)left;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return FQ_EIO;
    }
}

static int try_connect(struct fq_wire *w, const struct addrinfo *ai,
                       struct fq_err *err)
{
    int fd =
        socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return fq_err_set(err, FQ_EIO, "socket: %s", strerror(errno));
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
        int64_t limit = now_ms() + CONNECT_MS;
        if (w->deadline && w->deadline < limit)
            limit = w->deadline;
        rc = wait_fd(fd, POLLOUT, limit);
        if (rc == FQ_ETIMEOUT) {
            close(fd);
            return fq_err_set(err, FQ_ETIMEOUT, "connect timed out");
        }
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        errno = soerr;
        rc = soerr ? -1 : 0;
    }
    if (rc < 0) {
        int e = errno;
        close(fd);
        return fq_err_set(err, FQ_EIO, "%s", strerror(e));
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    w->fd = fd;
    w->used = false;
    w->rlo = w->rhi = 0;
    return 0;
}

static int open_conn(struct fq_wire *w, struct fq_err *err)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    /* A numeric address needs no resolver (no NSS modules loaded). */
    int gai = getaddrinfo(w->host, w->port, &hints, &res);
    if (gai == EAI_NONAME) {
        hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
        gai = getaddrinfo(w->host, w->port, &hints, &res);
    }
    if (gai != 0)
        return fq_err_set(err, FQ_EIO, "cannot resolve %s: %s", w->host,
                          gai_strerror(gai));
    int rc = FQ_EIO;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        rc = try_connect(w, ai, err);
        if (rc == 0 || rc == FQ_ETIMEOUT)
            break;
    }
    freeaddrinfo(res);
    return rc;
}

static int send_all(struct fq_wire *w, const char *p, size_t n,
                    struct fq_err *err)
{
    while (n > 0) {
        ssize_t k = send(w->fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int rc = wait_fd(w->fd, POLLOUT, w->deadline);
            if (rc < 0)
                return fq_err_set(err, rc, "sending the request: %s",
                                  rc == FQ_ETIMEOUT ? "timed out" : "poll");
            continue;
        }
        return fq_err_set(err, FQ_EIO, "sending the request: %s",
                          strerror(errno));
    }
    return 0;
}

/* Reads more into the buffer (compacting it first). Returns the bytes
 * read, 0 at end of stream, or a negative code. */
static int fill(struct fq_wire *w, struct fq_err *err)
{
    if (w->rlo > 0) {
        memmove(w->rb, w->rb + w->rlo, w->rhi - w->rlo);
        w->rhi -= w->rlo;
        w->rlo = 0;
    }
    if (w->rhi == RBUF)
        return fq_err_set(err, FQ_ELIMIT, "answer line too long");
    for (;;) {
        ssize_t k = recv(w->fd, w->rb + w->rhi, RBUF - w->rhi, 0);
        if (k >= 0) {
            w->rhi += (size_t)k;
            return (int)k;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int rc = wait_fd(w->fd, POLLIN, w->deadline);
            if (rc < 0)
                return fq_err_set(err, rc, "reading the answer: %s",
                                  rc == FQ_ETIMEOUT ? "timed out" : "poll");
            continue;
        }
        if (errno == ECONNRESET)
            return 0;
        return fq_err_set(err, FQ_EIO, "reading the answer: %s",
                          strerror(errno));
    }
}

/* One CRLF- (or LF-) terminated line of at most `cap` bytes into *line /
 * *len (pointing into the buffer, valid until the next read). Returns 0,
 * FQ_EIO at an early end of stream, or another negative code. */
static int read_line(struct fq_wire *w, size_t cap, const char **line,
                     size_t *len, struct fq_err *err)
{
    size_t scanned = 0;
    for (;;) {
        char *nl =
            memchr(w->rb + w->rlo + scanned, '\n', w->rhi - w->rlo - scanned);
        if (nl) {
            size_t n = (size_t)(nl - (w->rb + w->rlo));
            *line = w->rb + w->rlo;
            *len = n > 0 && (*line)[n - 1] == '\r' ? n - 1 : n;
            w->rlo += n + 1;
            return 0;
        }
        scanned = w->rhi - w->rlo;
        if (scanned > cap)
            return fq_err_set(err, FQ_EPARSE, "answer line over %zu bytes",
                              cap);
        int k = fill(w, err);
        if (k < 0)
            return k;
        if (k == 0)
            return fq_err_set(err, FQ_EIO, "the server closed the connection");
    }
}

/* Passes `n` body bytes (SIZE_MAX: until the server closes) to on_body.
 * Returns 0, 1 (stopped) or a negative code. */
static int read_body(struct fq_wire *w, size_t n, int status,
                     fq_wire_body_fn on_body, void *ctx, struct fq_err *err)
{
    while (n > 0) {
        if (w->rlo == w->rhi) {
            int k = fill(w, err);
            if (k < 0)
                return k;
            if (k == 0)
                return n == SIZE_MAX ?
                           0 :
                           fq_err_set(err, FQ_EIO, "the answer ended early");
        }
        size_t take = w->rhi - w->rlo;
        if (take > n)
            take = n;
        int rc = on_body ? on_body(ctx, status, w->rb + w->rlo, take) : 0;
        w->rlo += take;
        if (n != SIZE_MAX)
            n -= take;
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int read_chunked(struct fq_wire *w, int status, fq_wire_body_fn on_body,
                        void *ctx, struct fq_err *err)
{
    for (;;) {
        const char *line;
        size_t len;
        int rc = read_line(w, CHUNK_LINE_MAX, &line, &len, err);
        if (rc < 0)
            return rc;
        size_t size = 0, i = 0;
        for (; i < len; i++) {
            char c = line[i];
            int d = c >= '0' && c <= '9' ? c - '0' :
                    c >= 'a' && c <= 'f' ? c - 'a' + 10 :
                    c >= 'A' && c <= 'F' ? c - 'A' + 10 :
                                           -1;
            if (d < 0)
                break;
            if (size > (SIZE_MAX >> 5))
                return fq_err_set(err, FQ_EPARSE, "chunk size too large");
            size = size * 16 + (size_t)d;
        }
        if (i == 0 || (i < len && line[i] != ';' && line[i] != ' '))
            return fq_err_set(err, FQ_EPARSE, "bad chunk size line");
        if (size == 0)
            break;
        rc = read_body(w, size, status, on_body, ctx, err);
        if (rc != 0)
            return rc;
        rc = read_line(w, CHUNK_LINE_MAX, &line, &len, err);
        if (rc < 0)
            return rc;
        if (len != 0)
            return fq_err_set(err, FQ_EPARSE, "chunk not followed by CRLF");
    }
    /* Trailers, up to the empty line. */
    for (size_t total = 0;;) {
        const char *line;
        size_t len;
        int rc = read_line(w, CHUNK_LINE_MAX, &line, &len, err);
        if (rc < 0)
            return rc;
        if (len == 0)
            return 0;
        total += len;
        if (total > HEAD_MAX)
            return fq_err_set(err, FQ_EPARSE, "trailers too long");
    }
}

static bool token_eq(const char *p, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(p, lit, n) == 0;
}

/* The answer after the request was sent. *fresh_eof tells the caller that
 * the connection was found closed before any byte of the answer. */
static int read_answer(struct fq_wire *w, bool head,
                       fq_wire_header_fn on_header, fq_wire_body_fn on_body,
                       void *ctx, int *status, bool *fresh_eof,
                       struct fq_err *err)
{
    const char *line;
    size_t len;
    int code;
    bool http10;
    for (;;) {
        if (w->rlo == w->rhi) {
            int k = fill(w, err);
            if (k < 0)
                return k;
            if (k == 0) {
                *fresh_eof = true;
                return fq_err_set(err, FQ_EIO,
                                  "the server closed the connection");
            }
        }
        int rc = read_line(w, HEAD_MAX, &line, &len, err);
        if (rc < 0)
            return rc;
        if (len < 12 || strncmp(line, "HTTP/1.", 7) != 0 || line[8] != ' ' ||
            line[9] < '1' || line[9] > '5' || line[10] < '0' ||
            line[10] > '9' || line[11] < '0' || line[11] > '9')
            return fq_err_set(err, FQ_EPARSE, "not an HTTP answer");
        code = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
        http10 = line[7] == '0';
        if (code >= 200 || code == 101)
            break;
        /* 1xx: skip its headers. */
        for (;;) {
            rc = read_line(w, HEAD_MAX, &line, &len, err);
            if (rc < 0)
                return rc;
            if (len == 0)
                break;
        }
    }
    *status = code;
    bool chunked = false, close_after = http10, have_len = false;
    size_t clen = 0, head_total = 0;
    for (;;) {
        int rc = read_line(w, HEAD_MAX, &line, &len, err);
        if (rc < 0)
            return rc;
        if (len == 0)
            break;
        head_total += len;
        if (head_total > HEAD_MAX)
            return fq_err_set(err, FQ_EPARSE, "answer headers over %u bytes",
                              HEAD_MAX);
        const char *colon = memchr(line, ':', len);
        if (!colon)
            return fq_err_set(err, FQ_EPARSE, "bad header line in the answer");
        size_t nlen = (size_t)(colon - line);
        const char *v = colon + 1, *e = line + len;
        while (v < e && (*v == ' ' || *v == '\t'))
            v++;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        size_t vlen = (size_t)(e - v);
        if (token_eq(line, nlen, "content-length")) {
            clen = 0;
            if (vlen == 0 || vlen > 18)
                return fq_err_set(err, FQ_EPARSE, "bad Content-Length");
            for (size_t i = 0; i < vlen; i++) {
                if (v[i] < '0' || v[i] > '9')
                    return fq_err_set(err, FQ_EPARSE, "bad Content-Length");
                clen = clen * 10 + (size_t)(v[i] - '0');
            }
            have_len = true;
        } else if (token_eq(line, nlen, "transfer-encoding")) {
            chunked = vlen >= 7 && strncasecmp(e - 7, "chunked", 7) == 0;
        } else if (token_eq(line, nlen, "connection")) {
            if (token_eq(v, vlen, "close"))
                close_after = true;
            else if (token_eq(v, vlen, "keep-alive"))
                close_after = false;
        }
        if (on_header)
            on_header(ctx, line, nlen, v, vlen);
    }
    int rc;
    if (head || code == 204 || code == 304)
        rc = 0;
    else if (chunked)
        rc = read_chunked(w, code, on_body, ctx, err);
    else if (have_len)
        rc = read_body(w, clen, code, on_body, ctx, err);
    else {
        close_after = true;
        rc = read_body(w, SIZE_MAX, code, on_body, ctx, err);
    }
    if (rc != 0 || close_after)
        hang_up(w);
    else
        w->used = true;
    return rc;
}

int fq_wire_request(struct fq_wire *w, const char *method, const char *path,
                    const char *const *headers, size_t nheaders,
                    const char *body, size_t len, int64_t timeout_ms,
                    fq_wire_header_fn on_header, fq_wire_body_fn on_body,
                    void *ctx, int *status, struct fq_err *err)
{
    *status = 0;
    w->deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
    struct fq_buf req = FQ_BUF_INIT;
    bool v6 = strchr(w->host, ':') != NULL;
    fq_buf_printf(&req, "%s %s HTTP/1.1\r\nHost: %s%s%s:%s\r\n", method, path,
                  v6 ? "[" : "", w->host, v6 ? "]" : "", w->port);
    for (size_t i = 0; i < nheaders; i++)
        fq_buf_printf(&req, "%s\r\n", headers[i]);
    if (body || strcmp(method, "GET") != 0)
        fq_buf_printf(&req, "Content-Length: %zu\r\n", body ? len : 0);
    fq_buf_puts(&req, "\r\n");
    if (body)
        fq_buf_append(&req, body, len);
    int rc = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        bool reused = w->fd >= 0 && w->used;
        if (w->fd < 0 && (rc = open_conn(w, err)) < 0)
            break;
        rc = send_all(w, req.data, req.len, err);
        bool fresh_eof = false;
        if (rc == 0)
            rc = read_answer(w, !strcmp(method, "HEAD"), on_header, on_body,
                             ctx, status, &fresh_eof, err);
        else
            fresh_eof = rc == FQ_EIO;
        if (rc < 0)
            hang_up(w);
        /* A kept connection the server had closed: send it again once. */
        if (rc == FQ_EIO && fresh_eof && reused && attempt == 0) {
            if (err)
                memset(err, 0, sizeof(*err));
            continue;
        }
        break;
    }
    fq_buf_release(&req);
    return rc;
}
