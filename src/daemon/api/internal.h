/*
 * internal.h - what the files of the Kubernetes-style API share: the API's
 * state (struct fq_api: routes, subresources, the change ring that feeds
 * watches), a parsed object path (struct target), and the functions one
 * file calls in another (named api_*).
 *
 * Private to src/daemon/api/. The files:
 *
 *   resources.c  the entry point, discovery, object reads and list pages
 *   write.c      creates, updates, patches, deletes (dry-run, apply)
 *   watch.c      watch streams from a resourceVersion, bookmarks
 */
#ifndef FLEXQ_API_INTERNAL_H
#define FLEXQ_API_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "api/http.h"
#include "api/labelsel.h"
#include "api/reqgate.h"
#include "api/routes.h"
#include "api/table.h"
#include "daemon.h"
#include "flexq/buf.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/value.h"

#define RING_SIZE 8192
/* ...and at most this many bytes of them (objects and their encoded
 * lines, estimated): a churn of large objects evicts sooner. */
#define RING_BYTES (8u << 20)
/* ...and none older than this (Kubernetes' watch cache keeps its events
 * "fresh" for 75 s): a burst's history, which would otherwise stay until
 * as many new changes pushed it out, is let go once it is this old, so
 * that the memory of a churn comes back when the churn is over. */
#define RING_AGE_MS (75 * 1000)

/* A watch with allowWatchBookmarks gets a BOOKMARK this often (Kubernetes
 * sends one about every minute) and one as its timeoutSeconds ends. */
#define BOOKMARK_MS (60 * 1000)

struct route {
    char *prefix;
    struct fq_route_def def; /* def.prefix is `prefix` */
    fq_route_fn fn;
    void *ctx;
};

struct subres {
    char *name;
    fq_subresource_fn fn;
    void *ctx;
};

struct watch {
    struct fq_api *api;
    struct fq_http_req *r;
    enum fq_kind kind;
    char *ns; /* NULL: all namespaces */
    struct fq_labelsel *labels;
    struct fq_labelsel *fields;
    /* Without ?resourceVersion: the ADDED lines of the objects as of
     * start_rev, held until start_rev is durable (fq_api_landed), so a
     * watcher never sees what a crash could take back. */
    bool pending;
    uint64_t start_rev;
    struct fq_buf initial;
    int64_t deadline;  /* ?timeoutSeconds: end of the stream, or 0 */
    bool bookmarks;    /* ?allowWatchBookmarks=true */
    const char *table; /* Table version (Accept as=Table) or NULL */
    enum fq_table_include include;
    int64_t next_bookmark; /* when the next periodic BOOKMARK is due */
    char *group, *version; /* owned: of the path; Kueue's kinds convert */
    struct watch *next;
};

/* One committed change kept for watches that start from a revision. */
struct ringent {
    uint64_t rev;
    enum fq_change_type type;
    enum fq_kind kind;
    char *ns;
    struct fq_value *obj; /* owned */
    char *line;           /* owned JSON line, made on first use */
    size_t len;
    size_t bytes;  /* memory held, estimated (counted in ring_bytes) */
    int64_t at_ms; /* fq_daemon_now when it was fed */
};

struct fq_api {
    struct fq_daemon *d;
    struct fq_reqgate gate; /* Host, Origin, Content-Type (reqgate.h) */
    struct route *routes;
    size_t nroutes, caproutes;
    struct subres *subs;
    size_t nsubs, capsubs;
    struct watch *watches;
    struct ringent ring[RING_SIZE];
    size_t ring_head; /* next slot to write */
    size_t ring_n;
    size_t ring_bytes; /* sum of the entries' bytes, <= RING_BYTES */
    /* Every committed change with rev > kept_after is in the ring: a watch
     * from an older resourceVersion gets 410 (it would miss changes). */
    uint64_t kept_after;
    uint64_t fed_rev; /* every revision up to it is durable and fed */
};

/* "rayjobs.ray.io", "jobs.batch", "configmaps": how Kubernetes names a
 * resource in its messages (NotFound, AlreadyExists, Conflict). */
struct qname {
    char s[160];
};

/* What an object path names. */
struct target {
    enum fq_kind kind;
    const struct fq_kind_info *ki;
    const char *ns; /* from the path, NULL if none */
    const char *name;
    const char *sub;
    const char *group, *version; /* of the path: Kueue's kinds convert */
};

/* resources.c */
void api_reply_buf(struct fq_daemon *d, struct fq_http_req *r, int status,
                   struct fq_buf *b);
void api_reply_value(struct fq_daemon *d, struct fq_http_req *r, int status,
                     const struct fq_value *v);
void api_fail(struct fq_daemon *d, struct fq_http_req *r, int code,
              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void api_watch_free(struct watch *w);
void api_ring_clear(struct ringent *e);
struct qname api_qualified(const struct fq_kind_info *ki);
int api_parse_target(const char *group, const char *version, char **seg, int n,
                     struct target *t, struct fq_err *err);
const char *api_obj_ns(const struct target *t);
int api_query_count(struct fq_http_req *r, const char *key, long long max,
                    long long *out, struct fq_err *err);
bool api_query_true(struct fq_http_req *r, const char *key);
void api_list_objects(struct fq_daemon *d, struct fq_http_req *r,
                      const struct target *t, struct fq_labelsel *ls,
                      struct fq_labelsel *fs);

/* watch.c */
void api_start_watch(struct fq_daemon *d, struct fq_http_req *r,
                     const struct target *t, struct fq_labelsel *ls,
                     struct fq_labelsel *fs);

/* write.c */
void api_handle_objects(struct fq_daemon *d, struct fq_http_req *r,
                        const struct fq_principal *who, const char *group,
                        const char *version, char **seg, int n);

/* resources.c */
extern const char *const api_media_json;

#endif
