/*
 * http.c - the daemon's HTTP server over libevent's evhttp.
 *
 * How it works. evhttp parses requests (with body and header size caps set
 * here) and calls `on_request`, which wraps the evhttp request in a struct
 * fq_http_req holding what handlers read: the decoded path, the parsed query,
 * a NUL-terminated copy of the body. The wrapper lives until the answer is
 * sent: at once, later (evhttp keeps a request whose client left until it is
 * answered, then drops the answer), or, for a stream, until
 * fq_http_stream_end or the client closing, whichever comes first.
 *
 *   request --on_request--> handler --+--> fq_http_reply ----------> freed
 *                                     +--> kept, reply later ------> freed
 *                                     +--> fq_http_stream_start
 *                                            | write, write, ...
 *                                            +--> fq_http_stream_end --> freed
 *                                            +--> client closes: on_close
 *                                                 --> freed
 *
 * A stream may have one timer (fq_http_stream_timer: watch deadlines and
 * bookmarks); it is freed with the wrapper, so it never fires for a
 * stream that ended or whose client left.
 *
 * Invariants: a wrapper is freed exactly once; after a stream's on_close
 * ran nobody touches it (the close callback is unhooked when a stream ends
 * normally, so a later keep-alive close does not run it).
 *
 * TLS (fq_http_new_tls): the same server over OpenSSL; evhttp asks for
 * each accepted connection's bufferevent, and gets an OpenSSL one in
 * accepting state (tls.c makes the SSL_CTX and its certificates).
 *
 * Limits evhttp does not keep (a deadline for a request's headers, caps
 * answered as Kubernetes Status, connections per client): connguard.c,
 * which sees each connection's bytes before evhttp does.
 *
 * What it does not do: HTTP/2, authentication (auth.c).
 */
#include "api/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "api/connguard.h"
#include "flexq/alloc.h"
#include "log.h"

/* How long the listener rests after an accept error it could not clear,
 * and how often the warning about refused connections may be logged. */
#define ACCEPT_PAUSE_MS 100
#define WARN_EVERY_S    10

struct fq_http {
    struct event_base *base;
    struct evhttp *http;
    struct evhttp_bound_socket *sock;
    int port;
    fq_http_handler_fn fn;
    void *ctx;
    /* Out of descriptors: one kept open (on /dev/null) to be closed so a
     * pending connection can be accepted and refused cleanly. */
    int spare_fd;
    struct event *resume;  /* re-enables the listener after a pause */
    unsigned long refused; /* connections refused since the last warning */
    time_t last_warn;
    SSL_CTX *ssl_ctx;           /* borrowed; NULL for plain HTTP */
    struct fq_connguard *guard; /* header deadline, caps (connguard.h) */
};

struct fq_http_req {
    struct fq_http *h;
    struct evhttp_request *req;
    struct evhttp_connection *evcon;
    char *path;
    struct evkeyvalq query;
    char *body;
    size_t body_len;
    char peer[64];
    bool streaming;
    fq_http_close_fn on_close;
    void *close_ctx;
    struct event *timer; /* fq_http_stream_timer, or NULL */
    fq_http_timer_fn timer_fn;
    void *timer_ctx;
    const void *user; /* fq_http_set_user */
};

static void req_free(struct fq_http_req *r)
{
    if (r->timer)
        event_free(r->timer);
    free(r->path);
    evhttp_clear_headers(&r->query);
    free(r->body);
    free(r);
}

static void on_request(struct evhttp_request *req, void *arg)
{
    struct fq_http *h = arg;
    struct fq_http_req *r = fq_xcalloc(1, sizeof(*r));
    r->h = h;
    r->req = req;
    r->evcon = evhttp_request_get_connection(req);
    r->query.tqh_first = NULL;
    r->query.tqh_last = &r->query.tqh_first;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *p = uri ? evhttp_uri_get_path(uri) : NULL;
    r->path = p ? evhttp_uridecode(p, 0, NULL) : NULL;
    if (!r->path)
        r->path = fq_xstrdup("/");
    const char *q = uri ? evhttp_uri_get_query(uri) : NULL;
    if (q)
        evhttp_parse_query_str(q, &r->query);
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    r->body_len = evbuffer_get_length(in);
    r->body = fq_xmalloc(r->body_len + 1);
    evbuffer_remove(in, r->body, r->body_len);
    r->body[r->body_len] = '\0';
    if (r->evcon) {
        /* A large answer goes out in several writes: without NODELAY its
         * last segment waits for the client's delayed ACK (40 ms). */
        struct bufferevent *bev = evhttp_connection_get_bufferevent(r->evcon);
        int one = 1;
        if (bev && bufferevent_getfd(bev) >= 0)
            setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one,
                       sizeof(one));
        char *addr = NULL;
        ev_uint16_t port = 0;
        evhttp_connection_get_peer(r->evcon, &addr, &port);
        snprintf(r->peer, sizeof(r->peer), "%s:%u", addr ? addr : "?",
                 (unsigned)port);
    }
    if (r->evcon) {
        struct bufferevent *bev = evhttp_connection_get_bufferevent(r->evcon);
        if (bev)
            fq_connguard_request_done(h->guard, (int)bufferevent_getfd(bev));
    }
    h->fn(h->ctx, r);
}

static int split_addr(const char *addr, char *host, size_t hsize, int *port)
{
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return -1;
    const char *hs = addr, *he = colon;
    if (*hs == '[') {
        hs++;
        if (he == hs || he[-1] != ']')
            return -1;
        he--;
    }
    if ((size_t)(he - hs) >= hsize)
        return -1;
    memcpy(host, hs, (size_t)(he - hs));
    host[he - hs] = '\0';
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p < 0 || p > 65535 || end == colon + 1)
        return -1;
    *port = (int)p;
    return 0;
}

static void on_resume(evutil_socket_t fd, short what, void *arg);
static void on_accept_error(struct evconnlistener *lev, void *arg);

/*
 * libevent passes an accept error callback the listener's argument, which
 * evhttp has set to its own struct evhttp; this table finds our server
 * from it. A file-level table because nothing else links the two; a
 * process has one server (tests: a few), so it stays tiny.
 */
#define MAX_SERVERS 16

static struct {
    const struct evhttp *http;
    struct fq_http *h;
} servers[MAX_SERVERS];

static void server_link(struct fq_http *h, bool on)
{
    for (size_t i = 0; i < MAX_SERVERS; i++)
        if (on ? !servers[i].http : servers[i].h == h) {
            servers[i].http = on ? h->http : NULL;
            servers[i].h = on ? h : NULL;
            return;
        }
}

static struct fq_http *server_of(const void *http)
{
    for (size_t i = 0; i < MAX_SERVERS; i++)
        if (servers[i].http && servers[i].http == http)
            return servers[i].h;
    return NULL;
}

/* evhttp's per-connection bufferevent for a TLS server. */
static struct bufferevent *tls_bev(struct event_base *base, void *arg)
{
    struct fq_http *h = arg;
    SSL *ssl = SSL_new(h->ssl_ctx);
    if (!ssl)
        return NULL;
    struct bufferevent *bev = bufferevent_openssl_socket_new(
        base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
    if (bev) {
        /* Clients (curl, Go) often close without close_notify. */
        bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
        fq_connguard_watch(h->guard, bev, true);
    }
    return bev;
}

/* evhttp's per-connection bufferevent for plain HTTP: the one evhttp
 * would make, watched by the guard. */
static struct bufferevent *plain_bev(struct event_base *base, void *arg)
{
    struct fq_http *h = arg;
    struct bufferevent *bev =
        bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (bev)
        fq_connguard_watch(h->guard, bev, false);
    return bev;
}

int fq_http_new(void *base, const char *addr, fq_http_handler_fn fn, void *ctx,
                struct fq_http **out, struct fq_err *err)
{
    return fq_http_new_tls(base, addr, NULL, fn, ctx, out, err);
}

int fq_http_new_tls(void *base, const char *addr, void *ssl_ctx,
                    fq_http_handler_fn fn, void *ctx, struct fq_http **out,
                    struct fq_err *err)
{
    char host[128];
    int port;
    if (split_addr(addr, host, sizeof(host), &port) < 0)
        return fq_err_set(err, FQ_EINVAL, "--listen: \"%s\" is not HOST:PORT",
                          addr);
    struct fq_http *h = fq_xcalloc(1, sizeof(*h));
    h->base = base;
    h->http = evhttp_new(base);
    h->fn = fn;
    h->ctx = ctx;
    h->ssl_ctx = ssl_ctx;
    struct fq_connguard_limits lim = {
        .header_s = FQ_HTTP_HEADER_S,
        .max_headers = FQ_HTTP_MAX_HEADERS,
        .max_body = FQ_HTTP_MAX_BODY,
        .per_client = FQ_HTTP_PER_CLIENT,
    };
    h->guard = fq_connguard_new(base, &lim);
    evhttp_set_bevcb(h->http, ssl_ctx ? tls_bev : plain_bev, h);
    /* The guard refuses oversized requests first, with a Status; evhttp's
     * own caps (an HTML answer) stay behind it, higher, as a backstop. */
    evhttp_set_max_body_size(h->http, 2 * FQ_HTTP_MAX_BODY);
    evhttp_set_max_headers_size(h->http, 2 * FQ_HTTP_MAX_HEADERS);
    /* Idle keep-alive connections and slow clients (headers or body
     * dribbled in) are closed after FQ_HTTP_IDLE_S; streams get
     * FQ_HTTP_STREAM_S (fq_http_stream_start). */
    evhttp_set_timeout(h->http, FQ_HTTP_IDLE_S);
    evhttp_set_allowed_methods(
        h->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                     EVHTTP_REQ_PATCH | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
                     EVHTTP_REQ_OPTIONS);
    evhttp_set_gencb(h->http, on_request, h);
    /* Our own listener for a deeper accept queue than libevent's default
     * (128): a burst of connections (1,000 clients at once) would
     * otherwise drop SYNs, and every client connecting then, however
     * polite, waits a second for the retransmit. */
    struct evutil_addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    hints.ai_flags = EVUTIL_AI_PASSIVE;
    char ps[8];
    snprintf(ps, sizeof(ps), "%d", port);
    if (evutil_getaddrinfo(host, ps, &hints, &ai) == 0 && ai) {
        struct evconnlistener *lev = evconnlistener_new_bind(
            base, NULL, NULL,
            LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
            FQ_HTTP_BACKLOG, ai->ai_addr, (int)ai->ai_addrlen);
        evutil_freeaddrinfo(ai);
        if (lev)
            h->sock = evhttp_bind_listener(h->http, lev);
    }
    if (!h->sock) {
        evhttp_free(h->http);
        fq_connguard_free(h->guard);
        free(h);
        return fq_err_set(err, FQ_EIO,
                          "cannot listen on %s (address in use or not "
                          "local?)",
                          addr);
    }
    h->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    h->resume = evtimer_new(base, on_resume, h);
    server_link(h, true);
    evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(h->sock),
                                on_accept_error);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    evutil_socket_t fd = evhttp_bound_socket_get_fd(h->sock);
    h->port = port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            h->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            h->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    *out = h;
    return 0;
}

void fq_http_free(struct fq_http *h)
{
    if (!h)
        return;
    server_link(h, false);
    evhttp_free(h->http);
    fq_connguard_free(h->guard);
    if (h->resume)
        event_free(h->resume);
    if (h->spare_fd >= 0)
        close(h->spare_fd);
    free(h);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
    struct fq_http *h = arg;
    (void)fd;
    (void)what;
    evconnlistener_enable(evhttp_bound_socket_get_listener(h->sock));
}

static void warn_refused(struct fq_http *h, int e)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (h->last_warn && now.tv_sec - h->last_warn < WARN_EVERY_S)
        return;
    h->last_warn = now.tv_sec;
    fq_log(FQ_LOG_WARN, "connections refused",
           "count=%lu error=\"%s\" hint=\"raise the open-files limit "
           "(ulimit -n) or close idle clients\"",
           h->refused, strerror(e));
    h->refused = 0;
}

/*
 * accept() failed. Out of descriptors, libevent would retry at once,
 * forever (the pending connection keeps the socket readable): flexqd would
 * spin and log without end. Instead the spare descriptor is given up for
 * a moment, the pending connection accepted, told 503 and closed, and the
 * warning is logged at most every WARN_EVERY_S seconds with a count. If
 * that does not clear it, the listener rests ACCEPT_PAUSE_MS.
 */
static void on_accept_error(struct evconnlistener *lev, void *arg)
{
    int e = errno;
    struct fq_http *h = server_of(arg);
    if (!h) { /* not ours: rest, as libevent would not */
        evconnlistener_disable(lev);
        return;
    }
    bool nofd = e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
    bool cleared = false;
    if (nofd && h->spare_fd >= 0) {
        close(h->spare_fd);
        int fd = accept(evconnlistener_get_fd(lev), NULL, NULL);
        if (fd >= 0) {
            static const char body[] =
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                "\"status\":\"Failure\",\"message\":\"flexqd has no "
                "descriptor left for this connection\",\"reason\":"
                "\"ServiceUnavailable\",\"code\":503}";
            char busy[512];
            int n = snprintf(busy, sizeof(busy),
                             "HTTP/1.1 503 Service Unavailable\r\n"
                             "Content-Type: application/json\r\n"
                             "Connection: close\r\nRetry-After: 1\r\n"
                             "Content-Length: %zu\r\n\r\n%s",
                             sizeof(body) - 1, body);
            ssize_t w = send(fd, busy, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
            (void)w;
            close(fd);
            cleared = true;
        }
        h->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    h->refused++;
    warn_refused(h, e);
    if (!cleared || h->spare_fd < 0) {
        evconnlistener_disable(lev);
        struct timeval tv = {0, ACCEPT_PAUSE_MS * 1000};
        evtimer_add(h->resume, &tv);
    }
}

void fq_http_set_limits(struct fq_http *h, int header_s, unsigned per_client)
{
    fq_connguard_set_limits(h->guard, header_s, per_client);
}

int fq_http_port(const struct fq_http *h)
{
    return h->port;
}

const char *fq_http_method(const struct fq_http_req *r)
{
    switch (evhttp_request_get_command(r->req)) {
    case EVHTTP_REQ_GET:
        return "GET";
    case EVHTTP_REQ_POST:
        return "POST";
    case EVHTTP_REQ_PUT:
        return "PUT";
    case EVHTTP_REQ_PATCH:
        return "PATCH";
    case EVHTTP_REQ_DELETE:
        return "DELETE";
    case EVHTTP_REQ_HEAD:
        return "HEAD";
    case EVHTTP_REQ_OPTIONS:
        return "OPTIONS";
    default:
        return "OTHER";
    }
}

const char *fq_http_path(const struct fq_http_req *r)
{
    return r->path;
}

const char *fq_http_query(const struct fq_http_req *r, const char *key)
{
    return evhttp_find_header(&r->query, key);
}

const char *fq_http_header(const struct fq_http_req *r, const char *name)
{
    return evhttp_find_header(evhttp_request_get_input_headers(r->req), name);
}

const char *fq_http_body(const struct fq_http_req *r, size_t *len)
{
    if (len)
        *len = r->body_len;
    return r->body;
}

const char *fq_http_peer(const struct fq_http_req *r)
{
    return r->peer;
}

void fq_http_set_user(struct fq_http_req *r, const void *user)
{
    r->user = user;
}

const void *fq_http_user(const struct fq_http_req *r)
{
    return r->user;
}

void fq_http_add_header(struct fq_http_req *r, const char *name,
                        const char *value)
{
    evhttp_add_header(evhttp_request_get_output_headers(r->req), name, value);
}

void fq_http_reply(struct fq_http_req *r, int status, const char *ctype,
                   const char *body, size_t len)
{
    struct evbuffer *out = evbuffer_new();
    if (ctype)
        fq_http_add_header(r, "Content-Type", ctype);
    if (body && len)
        evbuffer_add(out, body, len);
    evhttp_send_reply(r->req, status, NULL, out);
    evbuffer_free(out);
    req_free(r);
}

static void on_conn_close(struct evhttp_connection *evcon, void *arg)
{
    struct fq_http_req *r = arg;
    (void)evcon;
    if (r->on_close)
        r->on_close(r->close_ctx, r);
    /* When the client left mid-stream, evhttp has detached the request
     * from the connection and leaves it to us (it would be freed by the
     * end of the reply we will never send); a request still attached is
     * freed with the connection. */
    if (!evhttp_request_get_connection(r->req))
        evhttp_request_free(r->req);
    req_free(r);
}

void fq_http_stream_start(struct fq_http_req *r, int status, const char *ctype,
                          fq_http_close_fn on_close, void *ctx)
{
    if (ctype)
        fq_http_add_header(r, "Content-Type", ctype);
    fq_http_add_header(r, "Cache-Control", "no-cache");
    r->streaming = true;
    r->on_close = on_close;
    r->close_ctx = ctx;
    evhttp_send_reply_start(r->req, status, NULL);
    if (r->evcon) {
        evhttp_connection_set_timeout(r->evcon, FQ_HTTP_STREAM_S);
        evhttp_connection_set_closecb(r->evcon, on_conn_close, r);
        /* Watch the socket for EOF so a client that leaves is noticed
         * even when nothing is being written to it. */
        struct bufferevent *bev = evhttp_connection_get_bufferevent(r->evcon);
        if (bev)
            bufferevent_enable(bev, EV_READ);
    }
}

int fq_http_stream_write(struct fq_http_req *r, const char *data, size_t len)
{
    if (r->evcon) {
        struct bufferevent *bev = evhttp_connection_get_bufferevent(r->evcon);
        if (bev && evbuffer_get_length(bufferevent_get_output(bev)) >
                       FQ_HTTP_MAX_BACKLOG) {
            fq_http_stream_end(r);
            return -1;
        }
    }
    struct evbuffer *out = evbuffer_new();
    evbuffer_add(out, data, len);
    evhttp_send_reply_chunk(r->req, out);
    evbuffer_free(out);
    return 0;
}

void fq_http_stream_end(struct fq_http_req *r)
{
    if (r->evcon)
        evhttp_connection_set_closecb(r->evcon, NULL, NULL);
    evhttp_send_reply_end(r->req);
    req_free(r);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct fq_http_req *r = arg;
    (void)fd;
    (void)what;
    /* The callback may end the stream, which frees r and this (inactive,
     * non-persistent) event; nothing touches either afterwards. */
    r->timer_fn(r->timer_ctx, r);
}

void fq_http_stream_timer(struct fq_http_req *r, long long ms,
                          fq_http_timer_fn fn, void *ctx)
{
    if (!r->timer)
        r->timer = evtimer_new(r->h->base, on_timer, r);
    r->timer_fn = fn;
    r->timer_ctx = ctx;
    if (ms < 0)
        ms = 0;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000 * 1000)};
    evtimer_add(r->timer, &tv);
}

void *fq_http_hijack(struct fq_http_req *r, const char *head, size_t len,
                     void **conn)
{
    struct evhttp_connection *evcon = r->evcon;
    struct bufferevent *bev =
        evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    *conn = NULL;
    if (!bev) {
        fq_http_reply(r, 400, NULL, NULL, 0);
        return NULL;
    }
    /* evhttp keeps the request (freed with the connection) and never hears
     * of this connection again: its callbacks and timeouts are replaced. */
    evhttp_connection_set_closecb(evcon, NULL, NULL);
    if (r->h->guard)
        fq_connguard_hijacked(r->h->guard, (int)bufferevent_getfd(bev));
    bufferevent_setcb(bev, NULL, NULL, NULL, NULL);
    bufferevent_set_timeouts(bev, NULL, NULL);
    evbuffer_add(bufferevent_get_output(bev), head, len);
    req_free(r);
    *conn = evcon;
    return bev;
}

void fq_http_hijack_close(void *conn)
{
    if (conn)
        evhttp_connection_free(conn);
}
