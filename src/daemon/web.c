/*
 * web.c - the dashboard's server side: web/ assets, the no-JavaScript
 * pages, /metrics and Kueue's visibility API, plugged into flexqd's
 * router with fq_api_add_route.
 *
 * Routes:
 *   /                      -> /index.html (the single-page dashboard)
 *   /app.js, /style.css... the embedded files of web/ (web_assets.h)
 *   /ui/, /ui/PAGE         plain HTML tables, no script (web_ui.c)
 *   /metrics               Prometheus text (metrics_http.c)
 *   /apis/visibility.kueue.x-k8s.io/VERSION/clusterqueues/CQ/pendingworkloads
 *   /apis/visibility.kueue.x-k8s.io/VERSION/namespaces/NS/localqueues/LQ/
 *       pendingworkloads   PendingWorkloadsSummary (src/core/visibility.c)
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
#include "web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/visibility.h"
#include "api.h"
#include "flexq/alloc.h"
#include "web_assets.h"

#define VIS_GROUP "/apis/visibility.kueue.x-k8s.io/"
#define CSP                                                        \
 "default-src 'self'; img-src 'self' data:; style-src 'self'; "    \
 "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; " \
 "base-uri 'none'; form-action 'self'"

struct fq_web {
    struct fq_metrics_http *metrics;
};

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

static void reply_text(struct fq_daemon *d, struct fq_http_req *r, int status,
                       const char *ctype, const char *text)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, text);
    fq_daemon_defer_reply(d, r, status, ctype, &b);
    fq_buf_release(&b);
}

static void on_asset(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    const char *path = fq_http_path(r);
    if (strcmp(fq_http_method(r), "GET") && strcmp(fq_http_method(r), "HEAD")) {
        reply_text(d, r, 405, "text/plain", "method not allowed\n");
        return;
    }
    /* The single-page app's own routes (#/jobs...) are fragments, so
     * only "/" means the page itself. */
    if (!strcmp(path, "/"))
        path = "/index.html";
    for (const struct fq_web_asset *a = fq_web_assets; a->path; a++) {
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
    reply_text(d, r, 404, "text/plain", "not found\n");
}

static void on_ui(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    const char *page = fq_http_path(r) + strlen("/ui");
    while (*page == '/')
        page++;
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
    free(w);
}
