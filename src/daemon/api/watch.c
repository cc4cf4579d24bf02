/*
 * watch.c - watch streams as Kubernetes serves them: from a
 * resourceVersion (older than the kept history: 410 Expired), the
 * initial ADDED events of a watch without one, then every change that
 * passes the selectors, as JSON lines or Tables, with BOOKMARKs and a
 * timeout. Changes come from one ring of encoded events, shared by all
 * watchers. A watch of Kueue's kinds gets every object, bookmark and
 * Table row in the version of its path (v1beta1 or v1beta2, converted as
 * reads are: convert.h); the ring's cached line serves only the watchers
 * that need no conversion.
 */
#include "api/status.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/auth.h"
#include "api/discovery.h"
#include "api/dryrun.h"
#include "api/internal.h"
#include "api/labelsel.h"
#include "api/reqgate.h"
#include "api/ssa_reply.h"
#include "api/table.h"
#include "flexq/alloc.h"
#include "flexq/convert.h"
#include "flexq/kpb.h"
#include "flexq/patch.h"
#include "flexq/paths.h"
#include "flexq/ssa.h"
#include "flexq/timefmt.h"
#include "log.h"

/* --- watches ------------------------------------------------------------ */

static void watch_closed(void *ctx, struct fq_http_req *r)
{
    struct watch *w = ctx;
    (void)r;
    struct watch **pp = &w->api->watches;
    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
    api_watch_free(w);
}

static const char *type_name(enum fq_change_type t)
{
    return t == FQ_CHANGE_ADDED    ? "ADDED" :
           t == FQ_CHANGE_MODIFIED ? "MODIFIED" :
                                     "DELETED";
}

static bool watch_wants(const struct watch *w, enum fq_kind kind,
                        const char *ns, const struct fq_value *obj)
{
    return w->kind == kind && (!w->ns || !strcmp(w->ns, ns)) && obj &&
           fq_labelsel_match(w->labels, obj) &&
           fq_labelsel_match(w->fields, obj);
}

static void line_of(struct fq_buf *b, enum fq_change_type type,
                    const struct fq_value *obj)
{
    fq_buf_printf(b, "{\"type\":\"%s\",\"object\":", type_name(type));
    fq_json_encode(obj, FQ_JSON_COMPACT, b);
    fq_buf_puts(b, "}\n");
}

/* line_of for a change the store has encoded (c->json): that encoding,
 * of the same tree, is reused. */
static void line_of_change(struct fq_buf *b, const struct fq_change *c,
                           const struct fq_value *obj)
{
    if (!c->json) {
        line_of(b, c->type, obj);
        return;
    }
    fq_buf_printf(b, "{\"type\":\"%s\",\"object\":", type_name(c->type));
    fq_buf_append(b, c->json, c->json_len);
    fq_buf_puts(b, "}\n");
}

/* obj in the version of w's path: an owned converted copy, or NULL when
 * obj is already in it (or its kind has one version). */
static struct fq_value *in_version(const struct watch *w,
                                   const struct fq_value *obj)
{
    return fq_convert_kueue(obj, w->group, w->version);
}

/* True if obj's apiVersion is that of w's path (or w's path has none):
 * the ring's cached line, made from the stored object, fits w. */
static bool same_version(const struct watch *w, const struct fq_value *obj)
{
    if (!w->group || !w->version)
        return true;
    const char *av = fq_value_path_str(obj, "apiVersion", "");
    size_t gl = strlen(w->group);
    if (!gl)
        return !strcmp(av, w->version);
    return !strncmp(av, w->group, gl) && av[gl] == '/' &&
           !strcmp(av + gl + 1, w->version);
}

/* A watch line for w: the object in w's version, or for a Table watch
 * (kubectl get -w) a Table holding the object's row. */
static void watch_line(const struct watch *w, struct fq_buf *b,
                       enum fq_change_type type, const struct fq_value *stored)
{
    struct fq_value *cv = in_version(w, stored);
    const struct fq_value *obj = cv ? cv : stored;
    if (!w->table) {
        line_of(b, type, obj);
        fq_value_free(cv);
        return;
    }
    struct fq_value *t = fq_table_new(w->kind, w->table);
    fq_map_set(fq_map_get(t, "metadata"), "resourceVersion",
               fq_value_str(fq_value_path_str(obj, FQ_META_RV, "")));
    fq_table_add_row(t, w->kind, obj, fq_daemon_now(w->api->d), w->include);
    line_of(b, type, t);
    fq_value_free(t);
    fq_value_free(cv);
}

/* Drops a watch whose client is too slow; true if it was dropped. */
static bool watch_send(struct watch *w, const char *data, size_t len)
{
    if (fq_http_stream_write(w->r, data, len) == 0)
        return false;
    /* The stream was ended by http.c; forget the watch. */
    struct watch **pp = &w->api->watches;
    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
    fq_log(FQ_LOG_WARN, "watch dropped", "reason=slow_client");
    api_watch_free(w);
    return true;
}

/* Unlinks a watch from the list (it stays allocated). */
static void watch_unlink(struct watch *w)
{
    struct watch **pp = &w->api->watches;
    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
}

/* {"type":"BOOKMARK","object":{kind, apiVersion, metadata.resourceVersion}}
 * at the last committed revision: the client has seen every change up to
 * it and may resume from it. False if the watch was dropped. */
static bool send_bookmark(struct watch *w)
{
    struct fq_buf b = FQ_BUF_INIT;
    bool path = w->group && w->version;
    fq_buf_printf(&b,
                  "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\","
                  "\"apiVersion\":\"%s%s%s\",\"metadata\":{"
                  "\"resourceVersion\":\"%llu\"}}}\n",
                  fq_kind_info(w->kind)->name, path ? w->group : "",
                  path && *w->group ? "/" : "",
                  path ? w->version : fq_kind_api_version(w->kind),
                  (unsigned long long)w->api->fed_rev);
    bool dropped = watch_send(w, b.data, b.len);
    fq_buf_release(&b);
    return !dropped;
}

/* Sends a pending watch's initial lines; false if the watch was dropped. */
static bool watch_go(struct watch *w)
{
    w->pending = false;
    bool dropped =
        w->initial.len && watch_send(w, w->initial.data, w->initial.len);
    if (!dropped)
        fq_buf_release(&w->initial);
    return !dropped;
}

static void on_watch_timer(void *ctx, struct fq_http_req *r);

/* Arms the stream's one timer for the next bookmark or the deadline. */
static void watch_arm(struct watch *w, int64_t now)
{
    int64_t at = INT64_MAX;
    if (w->deadline)
        at = w->deadline;
    if (w->bookmarks && w->next_bookmark < at)
        at = w->next_bookmark;
    if (at != INT64_MAX)
        fq_http_stream_timer(w->r, at - now, on_watch_timer, w);
}

static void on_watch_timer(void *ctx, struct fq_http_req *r)
{
    struct watch *w = ctx;
    (void)r;
    int64_t now = fq_daemon_now(w->api->d);
    if (w->deadline && now >= w->deadline) {
        /* timeoutSeconds is up: a last bookmark, then a clean end. */
        if (w->bookmarks && !w->pending && !send_bookmark(w))
            return;
        watch_unlink(w);
        fq_http_stream_end(w->r);
        api_watch_free(w);
        return;
    }
    if (w->bookmarks && now >= w->next_bookmark && !w->pending) {
        if (!send_bookmark(w))
            return;
        w->next_bookmark = now + BOOKMARK_MS;
    }
    watch_arm(w, now);
}

void api_start_watch(struct fq_daemon *d, struct fq_http_req *r,
                     const struct target *t, struct fq_labelsel *ls,
                     struct fq_labelsel *fs)
{
    struct fq_api *a = d->api;
    const char *rvs = fq_http_query(r, "resourceVersion");
    uint64_t since = rvs && *rvs ? strtoull(rvs, NULL, 10) : 0;
    struct fq_objstore *os = fq_engine_store(d->engine);
    struct fq_err e = {0};
    long long timeout_s;
    int rc =
        api_query_count(r, "timeoutSeconds", 365LL * 86400, &timeout_s, &e);
    if (rc == 0 && since && since < a->kept_after)
        /* Changes after `since` are no longer all kept (the ring wrapped,
         * or flexqd restarted since): the client must list again. */
        rc = fq_err_set(&e, FQ_EGONE, "too old resource version: %llu (%llu)",
                        (unsigned long long)since,
                        (unsigned long long)a->kept_after);
    if (rc < 0) {
        fq_api_error(d, r, rc, &e, t->ki->plural, t->name);
        fq_labelsel_free(ls);
        fq_labelsel_free(fs);
        return;
    }
    struct watch *w = fq_xcalloc(1, sizeof(*w));
    w->api = a;
    w->r = r;
    w->kind = t->kind;
    w->ns = t->ki->namespaced && t->ns ? fq_xstrdup(t->ns) : NULL;
    if (t->name) {
        /* /RESOURCE/NAME?watch=true watches one object. */
        char *sel = fq_xasprintf("metadata.name=%s", t->name);
        fq_labelsel_free(fs);
        fs = NULL;
        fq_labelsel_parse(sel, true, &fs, &e);
        free(sel);
    }
    w->labels = ls;
    w->fields = fs;
    int64_t now = fq_daemon_now(d);
    if (timeout_s > 0)
        w->deadline = now + timeout_s * 1000;
    w->bookmarks = api_query_true(r, "allowWatchBookmarks");
    w->table = fq_table_accepts(fq_http_header(r, "Accept"));
    w->include = fq_table_include_of(fq_http_query(r, "includeObject"));
    w->next_bookmark = now + BOOKMARK_MS;
    if (t->group && t->version) {
        w->group = fq_xstrdup(t->group);
        w->version = fq_xstrdup(t->version);
    }
    fq_http_stream_start(r, 200, api_media_json, watch_closed, w);
    w->next = a->watches;
    a->watches = w;
    if (!since) {
        const struct fq_object **objs = NULL;
        size_t n = fq_objstore_list(os, t->kind, w->ns, &objs);
        for (size_t i = 0; i < n; i++)
            if (watch_wants(w, t->kind, objs[i]->ns, objs[i]->obj))
                watch_line(w, &w->initial, FQ_CHANGE_ADDED, objs[i]->obj);
        free(objs);
        w->start_rev = fq_objstore_revision(os);
        w->pending = true;
        if (w->start_rev <= a->fed_rev && !watch_go(w))
            return;
        watch_arm(w, now);
        return;
    }
    struct fq_buf b = FQ_BUF_INIT;
    for (size_t k = 0; k < a->ring_n; k++) {
        size_t i = (a->ring_head + RING_SIZE - a->ring_n + k) % RING_SIZE;
        struct ringent *re = &a->ring[i];
        if (re->rev > since && watch_wants(w, re->kind, re->ns, re->obj))
            watch_line(w, &b, re->type, re->obj);
    }
    bool dropped = b.len && watch_send(w, b.data, b.len);
    fq_buf_release(&b);
    if (!dropped)
        watch_arm(w, now);
}

void fq_api_history_start(struct fq_api *a, uint64_t rev)
{
    a->kept_after = rev;
    a->fed_rev = rev;
}

/* Forgets the oldest changes while the ring holds more than RING_BYTES
 * (the newest always stays); watches from before them get 410. */
static void ring_forget_oldest(struct fq_api *a)
{
    size_t i = (a->ring_head + RING_SIZE - a->ring_n) % RING_SIZE;
    struct ringent *old = &a->ring[i];
    if (old->rev > a->kept_after)
        a->kept_after = old->rev;
    a->ring_bytes -= old->bytes;
    api_ring_clear(old);
    a->ring_n--;
}

static void ring_trim(struct fq_api *a)
{
    while (a->ring_n > 1 && a->ring_bytes > RING_BYTES)
        ring_forget_oldest(a);
}

size_t fq_api_ring_expire(struct fq_api *a, int64_t now_ms)
{
    size_t n = 0;
    while (a->ring_n > 0) {
        size_t i = (a->ring_head + RING_SIZE - a->ring_n) % RING_SIZE;
        if (now_ms - a->ring[i].at_ms <= RING_AGE_MS)
            break;
        ring_forget_oldest(a);
        n++;
    }
    return n;
}

void fq_api_feed(struct fq_api *a, struct fq_change *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct ringent *e = &a->ring[a->ring_head];
        if (a->ring_n == RING_SIZE && e->rev > a->kept_after)
            a->kept_after = e->rev; /* about to be forgotten */
        a->ring_bytes -= e->bytes;
        api_ring_clear(e);
        e->rev = c[i].rev;
        e->type = c[i].type;
        e->kind = c[i].kind;
        e->ns = fq_xstrdup(c[i].ns ? c[i].ns : "");
        e->at_ms = fq_daemon_now(a->d);
        e->obj = c[i].obj; /* taken */
        c[i].obj = NULL;
        a->ring_head = (a->ring_head + 1) % RING_SIZE;
        if (a->ring_n < RING_SIZE)
            a->ring_n++;
        for (struct watch *w = a->watches, *next; w; w = next) {
            next = w->next;
            if (w->pending) {
                /* Its initial lines show the objects as of start_rev. */
                if (e->rev <= w->start_rev || !watch_go(w))
                    continue;
            }
            if (!watch_wants(w, e->kind, e->ns, e->obj))
                continue;
            if (w->table || !same_version(w, e->obj)) {
                struct fq_buf b = FQ_BUF_INIT;
                watch_line(w, &b, e->type, e->obj);
                watch_send(w, b.data, b.len);
                fq_buf_release(&b);
                continue;
            }
            if (!e->line) {
                struct fq_buf b = FQ_BUF_INIT;
                line_of_change(&b, &c[i], e->obj);
                e->len = b.len;
                e->line = fq_buf_detach(&b);
            }
            watch_send(w, e->line, e->len);
        }
        /* The log counted its copy's bytes while making it: no second
         * walk of the tree (fq_value_bytes only for uncounted ones). */
        assert(!c[i].obj_bytes || c[i].obj_bytes == fq_value_bytes(e->obj));
        size_t ob = c[i].obj_bytes ? c[i].obj_bytes : fq_value_bytes(e->obj);
        e->bytes = ob + e->len + strlen(e->ns) + 1;
        a->ring_bytes += e->bytes;
        ring_trim(a);
    }
}

void fq_api_landed(struct fq_api *a, uint64_t rev)
{
    if (rev > a->fed_rev)
        a->fed_rev = rev;
    for (struct watch *w = a->watches, *next; w; w = next) {
        next = w->next;
        if (w->pending && w->start_rev <= a->fed_rev)
            watch_go(w);
    }
}

void fq_api_close_watches(struct fq_api *a)
{
    while (a->watches) {
        struct watch *w = a->watches;
        a->watches = w->next;
        fq_http_stream_end(w->r);
        api_watch_free(w);
    }
}
