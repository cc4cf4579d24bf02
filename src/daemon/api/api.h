/*
 * api.h - the Kubernetes-style HTTP/JSON API of flexqd (docs/api.md).
 *
 * fq_api_handle is the HTTP server's handler. It authenticates the request
 * (auth.h), routes it, and answers through fq_daemon_defer_reply so the
 * answer leaves after the turn's commit. Paths:
 *
 *   /healthz /readyz /livez /version
 *   /api  /api/v1  /apis  /apis/GROUP  /apis/GROUP/VERSION     discovery
 *   /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]]              core group
 *   /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE[/NAME[/SUB]]
 *
 * with GET (one, list with labelSelector / fieldSelector, limit and
 * continue; ?watch=true with resourceVersion, timeoutSeconds and
 * allowWatchBookmarks),
 * POST, PUT, PATCH (merge patch; apply patch = create or replace) and
 * DELETE. Other modules add routes of their own with fq_api_add_route
 * (a path prefix: "/api/jobs/", "/metrics", "/") and handlers for
 * subresources (fq_api_add_subresource: "log").
 */
#ifndef FLEXQ_DAEMON_API_H
#define FLEXQ_DAEMON_API_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon.h"
#include "flexq/kinds.h"

struct fq_api *fq_api_new(struct fq_daemon *d);
void fq_api_free(struct fq_api *a);

/* The http.h handler; ctx is the struct fq_daemon. */
void fq_api_handle(void *ctx, struct fq_http_req *r);

/* Feeds a committed batch to the watch streams. May take the changes'
 * objects (sets c[i].obj to NULL) to keep them for late watchers. */
void fq_api_feed(struct fq_api *a, struct fq_change *c, size_t n);

/* Says that every change up to revision `rev` (the store's revision when
 * the landed turn was committed) is durable and fed: watches started
 * since wait for it to send their initial lines, bookmarks name it. */
void fq_api_landed(struct fq_api *a, uint64_t rev);

/* Says that the watch history starts at revision `rev` (the store's
 * revision once loaded): a watch from an older resourceVersion gets 410
 * Gone (reason Expired), as one from a revision the ring has forgotten. */
void fq_api_history_start(struct fq_api *a, uint64_t rev);

/* Ends every watch stream (shutdown). */
void fq_api_close_watches(struct fq_api *a);

enum {
    FQ_ROUTE_PUBLIC = 1 << 0, /* no token needed even with --tokens */
};

/* A handler for a path prefix; it answers the request itself (reply,
 * defer or stream). Longest prefix wins; K8s paths are tried after. */
typedef void (*fq_route_fn)(struct fq_daemon *d, struct fq_http_req *r,
                            void *ctx);
void fq_api_add_route(struct fq_api *a, const char *prefix, int flags,
                      fq_route_fn fn, void *ctx);

/* The object a subresource request names (authorised as a "get" of the
 * subresource before the handler runs). */
struct fq_api_target {
    enum fq_kind kind;
    const char *ns; /* "" for cluster-scoped kinds */
    const char *name;
    const char *sub; /* "log" */
};

typedef void (*fq_subresource_fn)(struct fq_daemon *d, struct fq_http_req *r,
                                  const struct fq_api_target *t, void *ctx);
void fq_api_add_subresource(struct fq_api *a, const char *sub,
                            fq_subresource_fn fn, void *ctx);

/* A boolean query parameter as Kubernetes parses it: absent, "0" and
 * "false" (any case) are false, anything else is true. */
bool fq_api_query_bool(struct fq_http_req *r, const char *key);

#endif
