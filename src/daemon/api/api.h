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

#include "api/routes.h"
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

/* Forgets the changes fed more than RING_AGE_MS before now_ms (a watch
 * from before them gets 410, as after any eviction; `flexq wait` then
 * lists for the current revision), and frees what they held. Returns how many were forgotten. Called from idle-time tidying:
 * its cost is that of the frees. */
size_t fq_api_ring_expire(struct fq_api *a, int64_t now_ms);

/* Says that the watch history starts at revision `rev` (the store's
 * revision once loaded): a watch from an older resourceVersion gets 410
 * Gone (reason Expired), as one from a revision the ring has forgotten. */
void fq_api_history_start(struct fq_api *a, uint64_t rev);

/* Ends every watch stream (shutdown). */
void fq_api_close_watches(struct fq_api *a);

/* A handler for a path prefix; it answers the request itself (reply,
 * defer or stream). Longest prefix wins; K8s paths are tried after. */
typedef void (*fq_route_fn)(struct fq_daemon *d, struct fq_http_req *r,
                            void *ctx);
/* Registers a route with what it touches (routes.h): the API checks the
 * method and the caller's access before `fn` runs. def's strings are
 * borrowed for the API's life (string literals). */
void fq_api_add_route_def(struct fq_api *a, const struct fq_route_def *def,
                          fq_route_fn fn, void *ctx);
/* The same with only an access class in `flags` (FQ_ROUTE_*; 0 is
 * admin-only) and every method. */
void fq_api_add_route(struct fq_api *a, const char *prefix, int flags,
                      fq_route_fn fn, void *ctx);

/*
 * May the caller of `r` do `verb` on `kind` in namespace `ns` (NULL: all,
 * "" cluster-scoped), subresource `sub` (may be NULL)? The object API's
 * check (auth.h) for the token the request was identified by; always 0
 * without --tokens. FQ_EFORBIDDEN with a message otherwise.
 * fq_api_may is the same as a yes/no, for filtering lists.
 */
int fq_api_allow(struct fq_daemon *d, struct fq_http_req *r, const char *verb,
                 enum fq_kind kind, const char *ns, const char *sub,
                 struct fq_err *err);
bool fq_api_may(struct fq_daemon *d, struct fq_http_req *r, const char *verb,
                enum fq_kind kind, const char *ns);

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
