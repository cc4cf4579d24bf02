/*
 * portforward.c - GET/POST /api/v1/namespaces/NS/pods/NAME/portforward, as
 * the kubelet serves it behind the API server: `kubectl port-forward`.
 *
 * How it works. The request is authorised as Kubernetes' RBAC checks it
 * (`create` on pods/portforward in the pod's namespace), the pod must be
 * Running, then the connection is taken over from evhttp
 * (fq_http_hijack) and answered 101 in one of two ways:
 *
 *   kubectl 1.27-1.30    POST, Upgrade: SPDY/3.1,
 *                        X-Stream-Protocol-Version: portforward.k8s.io
 *                        -> SPDY frames on the socket
 *   kubectl 1.31+        GET, Upgrade: websocket,
 *                        Sec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io
 *                        -> the same SPDY frames as the payload of binary
 *                           WebSocket messages (wslay frames them; message
 *                           boundaries mean nothing, the payloads are one
 *                           byte stream)
 *
 * Either way the session then speaks portforward.k8s.io: for each local
 * connection kubectl opens two streams with the same `requestid` header,
 * `streamtype: error` then `streamtype: data`, both with `port`. flexq
 * answers each SYN_STREAM with a SYN_REPLY; once a pair is complete it
 * connects to 127.0.0.1:PORT (pods are processes of this machine), only
 * when a process of the pod listens on PORT (podports.c: pods share the
 * host's network, so any other port is another pod's or the machine's),
 * and copies bytes both ways as DATA frames:
 *
 *   SYN_STREAM 1 (error) -> SYN_REPLY 1
 *   SYN_STREAM 3 (data)  -> SYN_REPLY 3, connect 127.0.0.1:PORT
 *   DATA 3 ..............-> written to the target
 *   target bytes ........-> DATA 3
 *   DATA 3 FIN ..........-> the target's write side shut
 *   target EOF ..........-> DATA 3 FIN, DATA 1 FIN (no error)
 *   connect refused .....-> DATA 1 "error forwarding port ...", FIN both
 *   RST_STREAM 1 or 3 ...-> the pair and its target closed
 *
 * The Ray dashboard. flexq's Ray head pods run a stand-in for Ray
 * (`python3 -m flexq.node`) and flexqd itself serves what a Ray head's
 * dashboard port does (the dashboard and the Ray Jobs API, api_ray.c). So
 * the head pod's dashboard port (its container port named `dashboard`, or
 * 8265 when the head declares none) is forwarded to flexqd's own plain
 * HTTP listener: `kubectl port-forward service/RAYJOB-head-svc 8265:8265`
 * then shows flexq's dashboard on localhost:8265. When flexqd itself
 * listens on 127.0.0.1:8265 (its default), kubectl cannot bind local port
 * 8265 (address in use) and says so; forward to another local port
 * (`8266:8265`) or open flexqd's address directly (docs/api.md).
 *
 * Everything runs on the daemon's libevent loop, never blocking it:
 * bufferevents for the client and every target, connects in the
 * background. Caps: FQ_SPDY_MAX_* on frames (spdy.h), MAX_STREAMS open
 * streams per session, a session idle IDLE_S without a byte from the
 * client is closed (kubectl pings every few seconds; the kubelet's own
 * default idle timeout is 4 hours), and flow between the two sides stops
 * while the other side has more than BACKLOG bytes queued.
 *
 * Invariants: a session frees its targets before its own connection; a
 * stream id is used once (new ones must grow, as SPDY requires); nothing
 * is written to a stream after its FIN or RST.
 *
 * What it does not do: UDP (Kubernetes does not either), the
 * `v4.channel.k8s.io`-style WebSocket port-forward protocol without SPDY
 * (kubectl never asks for it; such a request answers 400, upon which
 * kubectl falls back to SPDY), server-initiated pings.
 */
#include "api/portforward.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <wslay/wslay.h>

#include "api/internal.h"
#include "api/podports.h"
#include "api/spdy.h"
#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "log.h"

#define MAX_STREAMS  128
#define IDLE_S       (4 * 3600)
#define CLOSE_S      30          /* to write the last bytes once closing */
#define BACKLOG      (1u << 20)  /* bytes queued before a side is paused */
#define CHUNK        (32u << 10) /* most bytes of one DATA frame we send */
#define MAX_WS_MSG   (2u << 20)
#define TUNNEL_PROTO "SPDY/3.1+portforward.k8s.io"
#define PF_PROTO     "portforward.k8s.io"

struct pf_sess;

/* One forwarded connection: an error and a data stream, one target. */
struct pf_pair {
    struct pf_sess *s;
    char request[32];
    uint32_t error_id, data_id; /* 0 until the stream came */
    int port;
    struct bufferevent *target; /* NULL until both streams came, after EOF */
    bool client_fin;            /* kubectl shut its side of the data */
    bool done;                  /* FINs sent or streams reset */
};

struct pf_sess {
    struct fq_portforward *pf;
    struct pf_sess *next;
    struct bufferevent *bev;    /* the client's, borrowed from evhttp */
    void *conn;                 /* fq_http_hijack_close's handle */
    wslay_event_context_ptr ws; /* NULL: SPDY right on the socket */
    struct evbuffer *spdy_in;   /* WebSocket mode: SPDY bytes received */
    struct fq_spdy *spdy;
    struct event *idle;
    struct pf_pair *pairs[MAX_STREAMS];
    size_t npairs;
    uint32_t last_id; /* highest stream id the client opened */
    char *ns, *pod, *uid;
    char *cid;          /* the pod's container id (podports.h) */
    int dashboard_port; /* the pod's port served by flexqd, or 0 */
    bool paused;        /* client reads stopped: a target is backed up */
    bool closing;
};

struct fq_portforward {
    struct fq_daemon *d;
    struct pf_sess *sessions;
};

/* --- output ------------------------------------------------------------- */

static size_t client_backlog(const struct pf_sess *s)
{
    return evbuffer_get_length(bufferevent_get_output(s->bev));
}

static void pump_ws(struct pf_sess *s)
{
    if (s->ws && wslay_event_want_write(s->ws))
        wslay_event_send(s->ws);
}

/* Sends SPDY bytes: on the socket, or as one binary WebSocket message. */
static void send_spdy(struct pf_sess *s, struct fq_buf *b)
{
    if (!b->len)
        return;
    if (!s->ws) {
        evbuffer_add(bufferevent_get_output(s->bev), b->data, b->len);
    } else {
        struct wslay_event_msg m = {WSLAY_BINARY_FRAME,
                                    (const uint8_t *)b->data, b->len};
        wslay_event_queue_msg(s->ws, &m);
        pump_ws(s);
    }
    fq_buf_reset(b);
}

static void send_data(struct pf_sess *s, uint32_t id, uint8_t flags,
                      const void *p, size_t n)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_spdy_put_data(id, flags, p, n, &b);
    send_spdy(s, &b);
    fq_buf_release(&b);
}

/* --- pairs ---------------------------------------------------------------- */

static void session_close(struct pf_sess *s);

static void pair_free(struct pf_pair *p)
{
    struct pf_sess *s = p->s;
    if (p->target)
        bufferevent_free(p->target);
    for (size_t i = 0; i < s->npairs; i++)
        if (s->pairs[i] == p) {
            s->pairs[i] = s->pairs[--s->npairs];
            break;
        }
    free(p);
    if (s->paused && !s->closing) {
        s->paused = false;
        bufferevent_enable(s->bev, EV_READ);
    }
}

/* The target is gone (EOF or error): its last bytes, then the FINs. */
static void pair_finish(struct pf_pair *p, const char *error)
{
    struct pf_sess *s = p->s;
    if (!p->done) {
        if (error && p->error_id)
            send_data(s, p->error_id, 0, error, strlen(error));
        if (p->data_id)
            send_data(s, p->data_id, FQ_SPDY_FLAG_FIN, NULL, 0);
        if (p->error_id)
            send_data(s, p->error_id, FQ_SPDY_FLAG_FIN, NULL, 0);
        p->done = true;
    }
    pair_free(p);
}

static void target_read(struct bufferevent *bev, void *arg)
{
    struct pf_pair *p = arg;
    struct pf_sess *s = p->s;
    struct evbuffer *in = bufferevent_get_input(bev);
    uint8_t buf[CHUNK];
    int n;
    while ((n = evbuffer_remove(in, buf, sizeof(buf))) > 0) {
        send_data(s, p->data_id, 0, buf, (size_t)n);
        if (client_backlog(s) > BACKLOG) {
            /* kubectl reads slower than the pod writes: wait for it */
            bufferevent_disable(bev, EV_READ);
            break;
        }
    }
}

static void target_write(struct bufferevent *bev, void *arg)
{
    struct pf_pair *p = arg;
    struct pf_sess *s = p->s;
    if (evbuffer_get_length(bufferevent_get_output(bev)) == 0 && p->client_fin)
        shutdown(bufferevent_getfd(bev), SHUT_WR);
    if (s->paused &&
        evbuffer_get_length(bufferevent_get_output(bev)) < BACKLOG / 2) {
        s->paused = false;
        bufferevent_enable(s->bev, EV_READ);
    }
}

static void target_event(struct bufferevent *bev, short what, void *arg)
{
    struct pf_pair *p = arg;
    (void)bev;
    if (what & BEV_EVENT_CONNECTED)
        return;
    if (what & BEV_EVENT_EOF) {
        target_read(bev, p);
        pair_finish(p, NULL);
        return;
    }
    if (what & BEV_EVENT_ERROR) {
        struct pf_sess *s = p->s;
        int e = EVUTIL_SOCKET_ERROR();
        char msg[512];
        snprintf(msg, sizeof(msg),
                 "error forwarding port %d to pod %s, uid %s: failed to "
                 "connect to localhost:%d inside namespace \"%s\": %s",
                 p->port, s->pod, s->uid, p->port, s->ns,
                 evutil_socket_error_to_string(e));
        pair_finish(p, msg);
    }
}

/* Both streams are here: connect to the pod's port. */
static void pair_connect(struct pf_pair *p)
{
    struct pf_sess *s = p->s;
    struct fq_daemon *d = s->pf->d;
    int port = p->port;
    if (s->dashboard_port && port == s->dashboard_port && fq_daemon_port(d) > 0)
        port = fq_daemon_port(d); /* flexqd serves the Ray dashboard */
    else if (!fq_podports_listens(s->cid, port)) {
        /* Pods share the host's network: any other port of 127.0.0.1 is
         * another pod's (another namespace's) or the machine's own. */
        char msg[512];
        snprintf(msg, sizeof(msg),
                 "error forwarding port %d to pod %s, uid %s: no process of "
                 "the pod listens on port %d (pods share the host's network: "
                 "flexq forwards only to the pod's own ports)",
                 p->port, s->pod, s->uid, p->port);
        pair_finish(p, msg);
        return;
    }
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    p->target = bufferevent_socket_new(fq_daemon_event_base(d), -1,
                                       BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(p->target, target_read, target_write, target_event, p);
    bufferevent_enable(p->target, EV_READ | EV_WRITE);
    if (bufferevent_socket_connect(p->target, (struct sockaddr *)&sin,
                                   sizeof(sin)) < 0)
        target_event(p->target, BEV_EVENT_ERROR, p);
}

static struct pf_pair *pair_of_stream(struct pf_sess *s, uint32_t id,
                                      bool *data)
{
    for (size_t i = 0; i < s->npairs; i++) {
        struct pf_pair *p = s->pairs[i];
        if (p->data_id == id || p->error_id == id) {
            if (data)
                *data = p->data_id == id;
            return p;
        }
    }
    return NULL;
}

/* --- SPDY frames from kubectl --------------------------------------------- */

static void goaway(struct pf_sess *s, const char *why)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_log(FQ_LOG_WARN, "port-forward closed", "pod=%s/%s reason=\"%s\"", s->ns,
           s->pod, why);
    fq_spdy_put_goaway(s->last_id, 1, &b);
    send_spdy(s, &b);
    fq_buf_release(&b);
    session_close(s);
}

static void reset(struct pf_sess *s, uint32_t id, uint32_t status)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_spdy_put_rst(id, status, &b);
    send_spdy(s, &b);
    fq_buf_release(&b);
}

static void on_syn_stream(struct pf_sess *s, const struct fq_spdy_frame *f)
{
    uint32_t id = f->stream_id;
    if (id == 0 || !(id & 1) || id <= s->last_id) {
        goaway(s, "stream id not odd and increasing");
        return;
    }
    s->last_id = id;
    const char *type = fq_spdy_header(f, "streamtype");
    const char *port = fq_spdy_header(f, "port");
    const char *req = fq_spdy_header(f, "requestid");
    bool data = type && !strcmp(type, "data");
    char *end = NULL;
    long pn = port ? strtol(port, &end, 10) : 0;
    if (!type || (!data && strcmp(type, "error")) || !port || *end || pn < 1 ||
        pn > 65535) {
        reset(s, id, FQ_SPDY_PROTOCOL_ERROR);
        return;
    }
    char rid[32];
    if (req && *req)
        snprintf(rid, sizeof(rid), "%.31s", req);
    else /* old clients: error stream first, data stream 2 ids later */
        snprintf(rid, sizeof(rid), "%lu", (unsigned long)(data ? id - 2 : id));
    struct pf_pair *p = NULL;
    for (size_t i = 0; i < s->npairs && !p; i++)
        if (!strcmp(s->pairs[i]->request, rid))
            p = s->pairs[i];
    if (!p) {
        if (s->npairs >= MAX_STREAMS) {
            reset(s, id, FQ_SPDY_REFUSED_STREAM);
            return;
        }
        p = fq_xcalloc(1, sizeof(*p));
        p->s = s;
        snprintf(p->request, sizeof(p->request), "%s", rid);
        p->port = (int)pn;
        s->pairs[s->npairs++] = p;
    }
    if ((data ? p->data_id : p->error_id) || p->port != pn) {
        reset(s, id, FQ_SPDY_PROTOCOL_ERROR);
        return;
    }
    if (data)
        p->data_id = id;
    else
        p->error_id = id;
    struct fq_buf b = FQ_BUF_INIT;
    fq_spdy_put_syn_reply(s->spdy, id, 0, NULL, 0, &b);
    send_spdy(s, &b);
    fq_buf_release(&b);
    if (p->data_id && p->error_id && !p->target)
        pair_connect(p);
}

static void on_data(struct pf_sess *s, const struct fq_spdy_frame *f)
{
    bool data = false;
    struct pf_pair *p = pair_of_stream(s, f->stream_id, &data);
    if (!p) {
        if (f->stream_id > s->last_id)
            reset(s, f->stream_id, FQ_SPDY_INVALID_STREAM);
        return; /* a stream closed already: late bytes are dropped */
    }
    if (!data || !p->target)
        return; /* kubectl writes nothing on the error stream */
    struct evbuffer *out = bufferevent_get_output(p->target);
    if (f->len)
        evbuffer_add(out, f->data, f->len);
    if (f->flags & FQ_SPDY_FLAG_FIN) {
        p->client_fin = true;
        if (evbuffer_get_length(out) == 0)
            shutdown(bufferevent_getfd(p->target), SHUT_WR);
    }
    if (evbuffer_get_length(out) > BACKLOG && !s->paused) {
        s->paused = true;
        bufferevent_disable(s->bev, EV_READ);
    }
}

static void on_frame(struct pf_sess *s, const struct fq_spdy_frame *f)
{
    switch (f->type) {
    case FQ_SPDY_SYN_STREAM:
        on_syn_stream(s, f);
        break;
    case FQ_SPDY_DATA:
        on_data(s, f);
        break;
    case FQ_SPDY_RST_STREAM: {
        struct pf_pair *p = pair_of_stream(s, f->stream_id, NULL);
        if (p) {
            p->done = true; /* nothing more on a reset pair */
            pair_free(p);
        }
        break;
    }
    case FQ_SPDY_PING:
        if (f->id & 1) { /* the client's: answered with the same id */
            struct fq_buf b = FQ_BUF_INIT;
            fq_spdy_put_ping(f->id, &b);
            send_spdy(s, &b);
            fq_buf_release(&b);
        }
        break;
    case FQ_SPDY_GOAWAY:
        session_close(s);
        break;
    default:
        break; /* SETTINGS, WINDOW_UPDATE, HEADERS, SYN_REPLY: nothing */
    }
}

/* Reads every whole frame of `in`. */
static void read_frames(struct pf_sess *s, struct evbuffer *in)
{
    while (!s->closing) {
        uint8_t head[8];
        size_t have = evbuffer_get_length(in);
        if (evbuffer_copyout(in, head, sizeof(head)) < (ssize_t)sizeof(head))
            return;
        size_t size = fq_spdy_frame_size(head, sizeof(head));
        bool control = head[0] & 0x80;
        if (size - 8 > (control ? FQ_SPDY_MAX_CONTROL : FQ_SPDY_MAX_DATA)) {
            goaway(s, "frame over the size cap");
            return;
        }
        if (have < size)
            return;
        const uint8_t *buf = evbuffer_pullup(in, (ssize_t)size);
        struct fq_spdy_frame f;
        struct fq_err e = {0};
        long used = fq_spdy_parse(s->spdy, buf, size, &f, &e);
        if (used <= 0) {
            goaway(s, used < 0 ? e.msg : "short frame");
            return;
        }
        on_frame(s, &f);
        if (!s->closing)
            evbuffer_drain(in, (size_t)used);
    }
}

/* --- the client connection -------------------------------------------------- */

static void idle_arm(struct pf_sess *s)
{
    struct timeval tv = {IDLE_S, 0};
    evtimer_add(s->idle, &tv);
}

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
                       int flags, void *user)
{
    struct pf_sess *s = user;
    (void)flags;
    int n = evbuffer_remove(bufferevent_get_input(s->bev), buf, len);
    if (n <= 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    return n;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data,
                       size_t len, int flags, void *user)
{
    struct pf_sess *s = user;
    (void)ctx;
    (void)flags;
    evbuffer_add(bufferevent_get_output(s->bev), data, len);
    return (ssize_t)len;
}

static void ws_msg(wslay_event_context_ptr ctx,
                   const struct wslay_event_on_msg_recv_arg *m, void *user)
{
    struct pf_sess *s = user;
    (void)ctx;
    if (m->opcode == WSLAY_BINARY_FRAME)
        evbuffer_add(s->spdy_in, m->msg, m->msg_length);
    else if (m->opcode == WSLAY_TEXT_FRAME)
        wslay_event_queue_close(s->ws, WSLAY_CODE_UNSUPPORTED_DATA, NULL, 0);
}

static void client_read(struct bufferevent *bev, void *arg)
{
    struct pf_sess *s = arg;
    idle_arm(s);
    if (!s->ws) {
        read_frames(s, bufferevent_get_input(bev));
        return;
    }
    if (wslay_event_recv(s->ws) != 0) {
        session_close(s);
        return;
    }
    read_frames(s, s->spdy_in);
    if (s->closing)
        return;
    pump_ws(s);
    if (!wslay_event_want_read(s->ws) && !wslay_event_want_write(s->ws))
        session_close(s); /* the close handshake is over */
}

static void client_write(struct bufferevent *bev, void *arg)
{
    struct pf_sess *s = arg;
    (void)bev;
    pump_ws(s);
    if (client_backlog(s) < BACKLOG / 2)
        for (size_t i = 0; i < s->npairs; i++)
            if (s->pairs[i]->target)
                bufferevent_enable(s->pairs[i]->target, EV_READ);
}

static void client_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        session_close(arg);
}

static void on_idle(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    goaway(arg, "idle");
}

static void session_free(struct pf_sess *s)
{
    struct pf_sess **pp = &s->pf->sessions;
    while (*pp && *pp != s)
        pp = &(*pp)->next;
    if (*pp)
        *pp = s->next;
    while (s->npairs) {
        s->pairs[0]->done = true;
        pair_free(s->pairs[0]);
    }
    if (s->ws)
        wslay_event_context_free(s->ws);
    evbuffer_free(s->spdy_in);
    fq_spdy_free(s->spdy);
    event_free(s->idle);
    fq_http_hijack_close(s->conn);
    free(s->ns);
    free(s->pod);
    free(s->uid);
    free(s->cid);
    free(s);
}

/* After the last bytes (a GOAWAY, a close frame) are written. */
static void closed_write(struct bufferevent *bev, void *arg)
{
    (void)bev;
    session_free(arg);
}

static void closed_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    (void)what;
    session_free(arg);
}

static void session_close(struct pf_sess *s)
{
    if (s->closing)
        return;
    s->closing = true;
    if (s->ws)
        wslay_event_queue_close(s->ws, WSLAY_CODE_NORMAL_CLOSURE, NULL, 0);
    pump_ws(s);
    /* Targets go now; the client's connection once its output is out. */
    while (s->npairs) {
        s->pairs[0]->done = true;
        pair_free(s->pairs[0]);
    }
    event_del(s->idle);
    bufferevent_disable(s->bev, EV_READ);
    /* a client that stops reading cannot hold the session */
    struct timeval tv = {CLOSE_S, 0};
    bufferevent_set_timeouts(s->bev, NULL, &tv);
    if (client_backlog(s) == 0) {
        /* freed from the loop, not from inside a callback of s */
        bufferevent_setcb(s->bev, NULL, closed_write, closed_event, s);
        bufferevent_trigger(s->bev, EV_WRITE,
                            BEV_TRIG_IGNORE_WATERMARKS |
                                BEV_TRIG_DEFER_CALLBACKS);
    } else {
        bufferevent_setcb(s->bev, NULL, closed_write, closed_event, s);
        bufferevent_enable(s->bev, EV_WRITE);
    }
}

/* --- the upgrade ---------------------------------------------------------- */

/* Whether comma-separated `list` holds `tok` (case-insensitive). */
static bool has_token(const char *list, const char *tok)
{
    size_t tl = strlen(tok);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if ((size_t)(t - p) == tl && !strncasecmp(p, tok, tl))
            return true;
        p = e;
    }
    return false;
}

/* Sec-WebSocket-Accept for key (RFC 6455 4.2.2). */
static void ws_accept(const char *key, char out[64])
{
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    char buf[256];
    unsigned char md[SHA_DIGEST_LENGTH];
    int n = snprintf(buf, sizeof(buf), "%.100s%s", key, guid);
    SHA1((const unsigned char *)buf, (size_t)n, md);
    EVP_EncodeBlock((unsigned char *)out, md, SHA_DIGEST_LENGTH);
}

/* The pod's port that flexqd's own dashboard stands for: a Ray head's
 * container port named `dashboard`, else 8265; 0 for any other pod. */
static int dashboard_port(const struct fq_value *pod)
{
    const char *type = fq_value_as_str(
        fq_map_get(fq_meta_labels(pod), FQ_LABEL_RAY_NODE_TYPE));
    if (!type || strcmp(type, "head"))
        return 0;
    const struct fq_value *cs = fq_value_path(pod, FQ_POD_CONTAINERS);
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *ports = fq_value_path(fq_seq_at(cs, i), "ports");
        for (size_t j = 0; j < fq_value_len(ports); j++) {
            const struct fq_value *p = fq_seq_at(ports, j);
            if (!strcmp(fq_value_path_str(p, "name", ""), "dashboard"))
                return (int)fq_value_path_int(p, "containerPort", 8265);
        }
    }
    return 8265;
}

static void on_portforward(struct fq_daemon *d, struct fq_http_req *r,
                           const struct fq_api_target *t, void *ctx)
{
    struct fq_portforward *pf = ctx;
    struct fq_err e = {0};
    if (t->kind != FQ_KIND_POD) {
        api_fail(d, r, FQ_ENOTFOUND, "portforward is a subresource of pods");
        return;
    }
    const char *method = fq_http_method(r);
    if (strcmp(method, "GET") && strcmp(method, "POST")) {
        api_fail(d, r, FQ_EUNSUPPORTED,
                 "method %s is not allowed on pods/portforward (GET or "
                 "POST)",
                 method);
        return;
    }
    int rc =
        fq_api_allow(d, r, "create", FQ_KIND_POD, t->ns, "portforward", &e);
    if (rc < 0) {
        api_fail(d, r, rc, "%s", e.msg);
        return;
    }
    const struct fq_object *o = fq_objstore_get(fq_engine_store(d->engine),
                                                FQ_KIND_POD, t->ns, t->name);
    if (!o) {
        api_fail(d, r, FQ_ENOTFOUND, "pods \"%s\" not found", t->name);
        return;
    }
    const char *phase = fq_value_path_str(o->obj, FQ_POD_PHASE, "Pending");
    if (strcmp(phase, "Running")) {
        api_fail(d, r, FQ_EPARSE,
                 "unable to upgrade connection: pod %s is not running "
                 "(phase %s)",
                 t->name, phase);
        return;
    }
    const char *up = fq_http_header(r, "Upgrade");
    const char *origin = fq_http_header(r, "Origin");
    if (origin && *origin) {
        /* A web page may open a WebSocket anywhere (no CORS): no page may
         * open a tunnel to a pod. kubectl sends no Origin. */
        api_fail(d, r, FQ_EFORBIDDEN,
                 "port-forward from a browser (Origin %.80s) is refused",
                 origin);
        return;
    }
    char head[512];
    int hn;
    bool ws = false;
    if (up && !strcasecmp(up, "websocket")) {
        const char *key = fq_http_header(r, "Sec-WebSocket-Key");
        const char *ver = fq_http_header(r, "Sec-WebSocket-Version");
        const char *proto = fq_http_header(r, "Sec-WebSocket-Protocol");
        if (!key || strlen(key) > 64 || !ver || strcmp(ver, "13")) {
            api_fail(d, r, FQ_EPARSE,
                     "a WebSocket upgrade needs Sec-WebSocket-Key and "
                     "Sec-WebSocket-Version 13");
            return;
        }
        if (!proto || !has_token(proto, TUNNEL_PROTO)) {
            api_fail(d, r, FQ_EPARSE,
                     "unable to upgrade connection: port-forward over "
                     "WebSocket is served with subprotocol " TUNNEL_PROTO
                     " only (asked: %.100s)",
                     proto ? proto : "none");
            return;
        }
        char acc[64];
        ws_accept(key, acc);
        hn = snprintf(head, sizeof(head),
                      "HTTP/1.1 101 Switching Protocols\r\n"
                      "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Accept: %s\r\n"
                      "Sec-WebSocket-Protocol: " TUNNEL_PROTO "\r\n\r\n",
                      acc);
        ws = true;
    } else if (up && !strcasecmp(up, "SPDY/3.1")) {
        const char *v = fq_http_header(r, "X-Stream-Protocol-Version");
        if (v && !has_token(v, PF_PROTO)) {
            api_fail(d, r, FQ_EPARSE,
                     "unable to upgrade connection: protocol %.100s is not "
                     "served (flexq serves " PF_PROTO ")",
                     v);
            return;
        }
        hn = snprintf(head, sizeof(head),
                      "HTTP/1.1 101 Switching Protocols\r\n"
                      "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
                      "X-Stream-Protocol-Version: " PF_PROTO "\r\n\r\n");
    } else {
        api_fail(d, r, FQ_EPARSE,
                 "Upgrade request required (SPDY/3.1, or websocket with "
                 "subprotocol " TUNNEL_PROTO ")");
        return;
    }
    struct pf_sess *s = fq_xcalloc(1, sizeof(*s));
    s->pf = pf;
    s->ns = fq_xstrdup(t->ns);
    s->pod = fq_xstrdup(t->name);
    s->uid = fq_xstrdup(fq_meta_uid(o->obj));
    s->cid = fq_xstrdup(fq_value_path_str(
        fq_seq_at(fq_value_path(o->obj, FQ_POD_CONTAINER_STATUSES), 0),
        "containerID", ""));
    s->dashboard_port = dashboard_port(o->obj);
    fq_log(FQ_LOG_INFO, "port-forward", "pod=%s/%s transport=%s peer=%s", s->ns,
           s->pod, ws ? "websocket" : "spdy", fq_http_peer(r));
    s->bev = fq_http_hijack(r, head, (size_t)hn, &s->conn);
    if (!s->bev) {
        free(s->ns);
        free(s->pod);
        free(s->uid);
        free(s->cid);
        free(s);
        return;
    }
    s->spdy = fq_spdy_new();
    s->spdy_in = evbuffer_new();
    s->idle = evtimer_new(fq_daemon_event_base(d), on_idle, s);
    if (ws) {
        static const struct wslay_event_callbacks cbs = {
            ws_recv, ws_send, NULL, NULL, NULL, NULL, ws_msg};
        wslay_event_context_server_init(&s->ws, &cbs, s);
        wslay_event_config_set_max_recv_msg_length(s->ws, MAX_WS_MSG);
    }
    s->next = pf->sessions;
    pf->sessions = s;
    bufferevent_setcb(s->bev, client_read, client_write, client_event, s);
    bufferevent_enable(s->bev, EV_READ | EV_WRITE);
    idle_arm(s);
    /* bytes that came with the request (none from kubectl, which waits
     * for the 101) */
    if (evbuffer_get_length(bufferevent_get_input(s->bev)))
        client_read(s->bev, s);
}

void fq_portforward_attach(struct fq_daemon *d)
{
    struct fq_portforward *pf = fq_xcalloc(1, sizeof(*pf));
    pf->d = d;
    d->pf = pf;
    fq_api_add_subresource(d->api, "portforward", on_portforward, pf);
}

void fq_portforward_detach(struct fq_daemon *d)
{
    struct fq_portforward *pf = d->pf;
    if (!pf)
        return;
    while (pf->sessions)
        session_free(pf->sessions);
    free(pf);
    d->pf = NULL;
}
