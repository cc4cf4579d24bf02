/*
 * web.c - the dashboard's server side: web/ assets, the no-JavaScript
 * pages, /metrics and Kueue's visibility API, plugged into flexqd's
 * router with fq_api_add_route.
 *
 * Routes:
 *   /                      -> /index.html (the single-page dashboard)
 *   /app.js, /style.css... the embedded files of web/ (web_assets.h)
 *   /ui/, /ui/PAGE         plain HTML tables, no script (web_ui.c)
 *   /ui/stream             server-sent events: the dashboard's objects,
 *                          then every committed change to them
 *   /metrics               Prometheus text (metrics_http.c)
 *   /apis/visibility.kueue.x-k8s.io/VERSION/clusterqueues/CQ/pendingworkloads
 *   /apis/visibility.kueue.x-k8s.io/VERSION/namespaces/NS/localqueues/LQ/
 *       pendingworkloads   PendingWorkloadsSummary (src/core/views/visibility.c)
 *
 * The dashboard's own data comes from the ordinary Kubernetes-style API
 * (lists, then ?watch=true streams), so this file serves no data of its
 * own except the visibility summaries and the /ui tables.
 *
 * Every page answer carries a Content-Security-Policy that allows only
 * the page's own origin ('self'), so the browser itself refuses any
 * request that would leave 127.0.0.1 (no CDN, no fonts, no beacons).
 *
 * Assets are public (they hold no data); /ui, /metrics and visibility go
 * through the API's token check when flexqd runs with --tokens.
 * Not done: compression, ETags (assets are small and local).
 */
#include "api/web.h"
#include "api/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/web_assets.h"
#include "flexq/alloc.h"
#include "flexq/visibility.h"

#define VIS_GROUP "/apis/visibility.kueue.x-k8s.io/"
#define CSP                                                                     \
 "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; " \
 "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; "              \
 "base-uri 'none'; form-action 'self'"

/* The kinds the dashboard's live stream carries. */
static const enum fq_kind stream_kinds[] = {
    FQ_KIND_RESOURCEFLAVOR,
    FQ_KIND_COHORT,
    FQ_KIND_CLUSTERQUEUE,
    FQ_KIND_LOCALQUEUE,
    FQ_KIND_WORKLOAD,
    FQ_KIND_RAYJOB,
    FQ_KIND_JOB,
    FQ_KIND_NODEPOOL,
    FQ_KIND_NODE,
    FQ_KIND_POD,
    FQ_KIND_PROVISIONINGREQUEST,
    FQ_KIND_EVENT,
};

#define STREAM_EVENTS 300 /* newest Events sent when a stream starts */

struct fq_web {
    struct fq_daemon *d;
    struct fq_metrics_http *metrics;
    struct fq_http_req **streams; /* live /ui/stream clients */
    size_t nstreams, capstreams;
};

static bool streamed(enum fq_kind k)
{
    for (size_t i = 0; i < sizeof(stream_kinds) / sizeof(stream_kinds[0]); i++)
        if (stream_kinds[i] == k)
            return true;
    return false;
}

static void drop_stream(struct fq_web *w, struct fq_http_req *r)
{
    for (size_t i = 0; i < w->nstreams; i++)
        if (w->streams[i] == r) {
            w->streams[i] = w->streams[--w->nstreams];
            return;
        }
}

static void on_stream_close(void *ctx, struct fq_http_req *r)
{
    drop_stream(ctx, r);
}

/* One server-sent event: "data: {"type":T,"kind":K,"object":O}". */
static void sse_change(struct fq_buf *b, const char *type, enum fq_kind k,
                       const struct fq_value *obj)
{
    fq_buf_printf(b, "data: {\"type\":\"%s\",\"kind\":\"%s\",\"object\":", type,
                  fq_kind_info(k)->name);
    fq_json_encode(obj, 0, b);
    fq_buf_puts(b, "}\n\n");
}

static int rv_cmp(const void *x, const void *y)
{
    const struct fq_object *a = *(const struct fq_object *const *)x;
    const struct fq_object *b = *(const struct fq_object *const *)y;
    return a->rv < b->rv ? -1 : a->rv > b->rv ? 1 : 0;
}

/*
 * GET /ui/stream: one text/event-stream with every object of the
 * dashboard's kinds (event "reset", the objects, event "synced"), then
 * each committed change. One connection instead of a watch per kind
 * keeps the browser under its six connections per host.
 */
static void start_stream(struct fq_web *w, struct fq_http_req *r)
{
    struct fq_daemon *d = w->d;
    struct fq_objstore *s = fq_engine_store(d->engine);
    fq_http_stream_start(r, 200, "text/event-stream", on_stream_close, w);
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "retry: 2000\nevent: reset\ndata: {}\n\n");
    for (size_t i = 0; i < sizeof(stream_kinds) / sizeof(stream_kinds[0]);
         i++) {
        const struct fq_object **os = NULL;
        size_t n = fq_objstore_list(s, stream_kinds[i], NULL, &os);
        size_t from = 0;
        if (stream_kinds[i] == FQ_KIND_EVENT && n > STREAM_EVENTS) {
            qsort(os, n, sizeof(*os), rv_cmp);
            from = n - STREAM_EVENTS;
        }
        for (size_t k = from; k < n; k++)
            sse_change(&b, "ADDED", stream_kinds[i], os[k]->obj);
        free(os);
    }
    fq_buf_puts(&b, "event: synced\ndata: {}\n\n");
    if (fq_http_stream_write(r, b.data, b.len) == 0) {
        FQ_GROW(w->streams, w->capstreams, w->nstreams + 1);
        w->streams[w->nstreams++] = r;
    }
    fq_buf_release(&b);
}

static void on_changes(struct fq_daemon *d, const struct fq_change *c, size_t n,
                       void *ctx)
{
    (void)d;
    struct fq_web *w = ctx;
    if (!w->nstreams)
        return;
    struct fq_buf b = FQ_BUF_INIT;
    static const char *const types[] = {"ADDED", "MODIFIED", "DELETED"};
    for (size_t i = 0; i < n; i++)
        if (c[i].obj && streamed(c[i].kind))
            sse_change(&b, types[c[i].type], c[i].kind, c[i].obj);
    for (size_t i = 0; b.len && i < w->nstreams;)
        if (fq_http_stream_write(w->streams[i], b.data, b.len) < 0)
            w->streams[i] = w->streams[--w->nstreams]; /* ended by http */
        else
            i++;
    fq_buf_release(&b);
}

static const char *ctype_of(const char *path)
{
    static const struct {
        const char *ext, *type;
    } t[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".json", "application/json"},
        {".ico", "image/x-icon"},
    };

    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof(t) / sizeof(t[0]); i++)
        if (!strcmp(dot, t[i].ext))
            return t[i].type;
    return "application/octet-stream";
}

static void on_asset(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    const char *path = fq_http_path(r);
    bool get =
        !strcmp(fq_http_method(r), "GET") || !strcmp(fq_http_method(r), "HEAD");
    /* The single-page app's own routes (#/jobs...) are fragments, so
     * only "/" means the page itself. */
    if (!strcmp(path, "/"))
        path = "/index.html";
    for (const struct fq_web_asset *a = fq_web_assets; get && a->path; a++) {
        if (strcmp(a->path, path))
            continue;
        struct fq_buf b = FQ_BUF_INIT;
        fq_buf_append(&b, a->data, a->len);
        fq_http_add_header(r, "Cache-Control", "no-cache");
        fq_http_add_header(r, "Content-Security-Policy", CSP);
        fq_http_add_header(r, "X-Content-Type-Options", "nosniff");
        fq_daemon_defer_reply(d, r, 200, ctype_of(path), &b);
        fq_buf_release(&b);
        return;
    }
    /* Anything else is answered as the API answers unknown paths. */
    struct fq_err e = {0};
    fq_err_set(&e, FQ_ENOTFOUND, "no such path: %s", fq_http_path(r));
    fq_api_error(d, r, FQ_ENOTFOUND, &e, NULL, NULL);
}

static void on_ui(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    const char *page = fq_http_path(r) + strlen("/ui");
    while (*page == '/')
        page++;
    if (!strcmp(page, "stream")) {
        start_stream(ctx, r);
        return;
    }
    fq_http_add_header(r, "Content-Security-Policy", CSP);
    fq_web_ui_page(d, r, *page ? page : "overview");
}

/* The visibility API: two paths, any served version. */
static void on_visibility(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    char *copy = fq_xstrdup(fq_http_path(r) + strlen(VIS_GROUP));
    char *seg[8];
    int n = 0;
    char *save = NULL;
    for (char *s = strtok_r(copy, "/", &save); s && n < 8;
         s = strtok_r(NULL, "/", &save))
        seg[n++] = s;
    bool version_ok =
        n >= 1 && (!strcmp(seg[0], "v1beta1") || !strcmp(seg[0], "v1beta2"));
    const char *cq = NULL, *ns = NULL, *lq = NULL;
    if (version_ok && n == 4 && !strcmp(seg[1], "clusterqueues") &&
        !strcmp(seg[3], "pendingworkloads"))
        cq = seg[2];
    else if (version_ok && n == 6 && !strcmp(seg[1], "namespaces") &&
             !strcmp(seg[3], "localqueues") &&
             !strcmp(seg[5], "pendingworkloads")) {
        ns = seg[2];
        lq = seg[4];
    }
    if (strcmp(fq_http_method(r), "GET") || (!cq && !lq)) {
        struct fq_err e = {0};
        fq_err_set(&e, FQ_ENOTFOUND,
                   "the server could not find the requested resource");
        fq_api_error(d, r, FQ_ENOTFOUND, &e, NULL, NULL);
        free(copy);
        return;
    }
    const struct fq_object *o =
        cq ? fq_objstore_get(fq_engine_store(d->engine), FQ_KIND_CLUSTERQUEUE,
                             "", cq) :
             fq_objstore_get(fq_engine_store(d->engine), FQ_KIND_LOCALQUEUE, ns,
                             lq);
    if (!o) {
        struct fq_err e = {0};
        fq_err_set(&e, FQ_ENOTFOUND, "%s \"%s\" not found",
                   cq ? "clusterqueues.kueue.x-k8s.io" :
                        "localqueues.kueue.x-k8s.io",
                   cq ? cq : lq);
        fq_api_error(d, r, FQ_ENOTFOUND, &e, NULL, NULL);
        free(copy);
        return;
    }
    const char *ls = fq_http_query(r, "limit");
    const char *os = fq_http_query(r, "offset");
    size_t limit = ls ? strtoul(ls, NULL, 10) : 0;
    size_t offset = os ? strtoul(os, NULL, 10) : 0;
    char apiv[64];
    snprintf(apiv, sizeof(apiv), "visibility.kueue.x-k8s.io/%s", seg[0]);
    struct fq_value *v =
        fq_visibility_summary(d->engine, cq, ns, lq, limit, offset, apiv);
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(v, 0, &b);
    fq_value_free(v);
    fq_daemon_defer_reply(d, r, 200, "application/json", &b);
    fq_buf_release(&b);
    free(copy);
}

struct fq_web *fq_web_attach(struct fq_daemon *d)
{
    struct fq_web *w = fq_xcalloc(1, sizeof(*w));
    w->d = d;
    fq_daemon_add_change_listener(d, on_changes, w);
    fq_api_add_route(d->api, "/", FQ_ROUTE_PUBLIC, on_asset, w);
    fq_api_add_route(d->api, "/ui", 0, on_ui, w);
    fq_api_add_route(d->api, VIS_GROUP, 0, on_visibility, w);
    w->metrics = fq_metrics_http_attach(d);
    return w;
}

void fq_web_detach(struct fq_web *w)
{
    if (!w)
        return;
    fq_metrics_http_detach(w->metrics);
    for (size_t i = 0; i < w->nstreams; i++)
        fq_http_stream_end(w->streams[i]);
    free(w->streams);
    free(w);
}
