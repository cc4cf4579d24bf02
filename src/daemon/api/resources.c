/*
 * resources.c - the Kubernetes-style HTTP/JSON API of flexqd (see api.h and
 * docs/api.md).
 *
 * How it works. fq_api_handle receives every request from http.c:
 *
 *   1. prefix routes added by other modules (longest prefix first);
 *   2. /healthz, /version, discovery (/api, /apis, ...);
 *   3. object paths, parsed into (kind, namespace, name, subresource)
 *      through the kind registry (kinds.h), authorised (auth.h), then
 *      served from the engine's object store (reads) or applied through the
 *      engine (writes: fq_engine_apply validates and changes nothing on
 *      error).
 *
 * Answers go through fq_daemon_defer_reply, so they leave after the turn's
 * commit (a read never shows a client state that is not yet on disk).
 * Errors are Kubernetes Status objects carrying the reason of err.h's table
 * and, for invalid objects, the field path in details.causes[].field.
 *
 * Watches (?watch=true) become chunked streams of JSON lines
 * {"type":"ADDED|MODIFIED|DELETED","object":{...}}. Committed changes are
 * also kept in a ring of the last RING_SIZE (at most RING_BYTES of them),
 * so a watch that starts from a resourceVersion (what `flexq wait` does
 * after its GET) misses nothing in between; one older than what the ring holds (it wrapped, or flexqd
 * restarted since) gets 410 Gone with reason Expired, as from Kubernetes,
 * and the client lists again. Without a resourceVersion a watch starts
 * with an ADDED line per matching object. ?timeoutSeconds=N ends the
 * stream cleanly after N s; ?allowWatchBookmarks=true adds BOOKMARK lines
 * (the last committed revision, nothing else) every minute and at the
 * timeout, so a client can resume from there without a list.
 *
 *   GET ?watch=true&resourceVersion=R
 *        |--- R < kept_after -------------------> 410 Expired (list again)
 *        v
 *   replay: ring entries after R (or, without R, ADDED per object)
 *        v
 *   streaming --each commit--> matching change lines
 *        |----- every minute, with bookmarks ---> BOOKMARK
 *        |----- timeoutSeconds -----------------> [BOOKMARK], end, freed
 *        +----- client leaves / shutdown -------> freed
 *
 * Lists take ?limit=N and ?continue=TOKEN: pages in (namespace, name)
 * order, each read from the live store (see list_objects).
 *
 * Invariants:
 *   (1) a failed write changes nothing (validation and conflict checks run
 *       before the engine is touched, and the engine checks again);
 *   (2) every request is answered exactly once (deferred reply, stream, or
 *       a module's own answer);
 *   (3) watch lines are sent in revision order, each at most once;
 *   (4) a BOOKMARK names the last durable (landed) revision: every
 *       matching change up to it was sent before it;
 *   (5) no watch line shows state that is not yet durable: replays come
 *       from the ring (landed changes only), and a watch without a
 *       resourceVersion holds its ADDED lines, taken at revision
 *       start_rev, until start_rev has landed; changes up to start_rev are
 *       not sent to it again.
 *
 * Kubernetes clients: JSON patch and strategic merge patch come from
 * patch.h (strategic merge on custom resources is 415, as in Kubernetes),
 * ?dryRun=All from dryrun.h, Tables (Accept as=Table) from table.h,
 * aggregated discovery and /version from discovery.h, protobuf bodies
 * from kpb.h.
 *
 * What it does not do: server-side apply field ownership (apply replaces
 * the object as `kubectl apply` would after its three-way merge), snapshot
 * lists (a continue token resumes after a key, not at a revision).
 */
#include "api/internal.h"
#include "api/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/auth.h"
#include "api/discovery.h"
#include "api/dryrun.h"
#include "api/labelsel.h"
#include "api/reqgate.h"
#include "api/ssa_reply.h"
#include "api/table.h"
#include "flexq/alloc.h"
#include "flexq/convert.h"
#include "flexq/kpb.h"
#include "flexq/patch.h"
#include "flexq/ssa.h"
#include "flexq/timefmt.h"
#include "log.h"
#include "space.h"

#define MAX_SEGS 12
/* Most items one list page may ask for (?limit=). */
#define MAX_LIMIT 100000

/* --- small helpers ------------------------------------------------------ */

const char *const api_media_json = "application/json";

void api_reply_buf(struct fq_daemon *d, struct fq_http_req *r, int status,
                   struct fq_buf *b)
{
    fq_daemon_defer_reply(d, r, status, api_media_json, b);
    fq_buf_release(b);
}

void api_reply_value(struct fq_daemon *d, struct fq_http_req *r, int status,
                     const struct fq_value *v)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(v, FQ_JSON_COMPACT, &b);
    api_reply_buf(d, r, status, &b);
}

void api_fail(struct fq_daemon *d, struct fq_http_req *r, int code,
              const char *fmt, ...)
{
    struct fq_err e = {0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
    va_end(ap);
    e.code = code;
    fq_api_error(d, r, code, &e, NULL, NULL);
}

/* --- the API object and extension points ------------------------------ */

static void list_routes(struct fq_daemon *d, struct fq_http_req *r, void *ctx);

struct fq_api *fq_api_new(struct fq_daemon *d)
{
    struct fq_api *a = fq_xcalloc(1, sizeof(*a));
    a->d = d;
    /* fq_http_new refuses a listen address this cannot parse either. */
    if (fq_reqgate_init(&a->gate,
                        d->opts.listen ? d->opts.listen : "127.0.0.1:0",
                        NULL) < 0)
        fq_reqgate_init(&a->gate, "127.0.0.1:0", NULL);
    fq_api_add_route_def(a,
                         &(struct fq_route_def){.prefix = "/debug/routes",
                                                .access = FQ_ROUTE_ADMIN},
                         list_routes, NULL);
    return a;
}

void api_watch_free(struct watch *w)
{
    fq_buf_release(&w->initial);
    free(w->ns);
    fq_labelsel_free(w->labels);
    fq_labelsel_free(w->fields);
    free(w->group);
    free(w->version);
    free(w);
}

void api_ring_clear(struct ringent *e)
{
    free(e->ns);
    fq_value_free(e->obj);
    free(e->line);
    memset(e, 0, sizeof(*e));
}

void fq_api_free(struct fq_api *a)
{
    if (!a)
        return;
    fq_api_close_watches(a);
    for (size_t i = 0; i < a->nroutes; i++)
        free(a->routes[i].prefix);
    free(a->routes);
    for (size_t i = 0; i < a->nsubs; i++)
        free(a->subs[i].name);
    free(a->subs);
    for (size_t i = 0; i < RING_SIZE; i++)
        api_ring_clear(&a->ring[i]);
    free(a);
}

void fq_api_add_route_def(struct fq_api *a, const struct fq_route_def *def,
                          fq_route_fn fn, void *ctx)
{
    FQ_GROW(a->routes, a->caproutes, a->nroutes + 1);
    struct route *rt = &a->routes[a->nroutes++];
    *rt = (struct route){fq_xstrdup(def->prefix), *def, fn, ctx};
    rt->def.prefix = rt->prefix;
}

void fq_api_add_route(struct fq_api *a, const char *prefix, int flags,
                      fq_route_fn fn, void *ctx)
{
    struct fq_route_def def = {
        .prefix = prefix,
        .access = flags & (FQ_ROUTE_PUBLIC | FQ_ROUTE_TOKEN),
        .methods = "GET,HEAD,POST,PUT,PATCH,DELETE,OPTIONS",
    };
    fq_api_add_route_def(a, &def, fn, ctx);
}

/* The principal a request was identified by (anonymous admin without
 * --tokens). */
static void principal_of(struct fq_daemon *d, struct fq_http_req *r,
                         struct fq_principal *who)
{
    if (!d->auth) {
        *who = (struct fq_principal){"anonymous", true, NULL};
        return;
    }
    fq_auth_principal(d->auth, fq_http_user(r), who);
}

int fq_api_allow(struct fq_daemon *d, struct fq_http_req *r, const char *verb,
                 enum fq_kind kind, const char *ns, const char *sub,
                 struct fq_err *err)
{
    if (!d->auth)
        return 0;
    struct fq_principal who;
    principal_of(d, r, &who);
    return fq_auth_allow(d->auth, &who, verb, kind, ns, sub, err);
}

bool fq_api_may(struct fq_daemon *d, struct fq_http_req *r, const char *verb,
                enum fq_kind kind, const char *ns)
{
    return fq_api_allow(d, r, verb, kind, ns, NULL, NULL) == 0;
}

/* GET /debug/routes: the route table, for the security test and for
 * operators (admin only: it names no object, but says what each route
 * may touch). */
static void list_routes(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    struct fq_value *items = fq_value_seq();
    for (size_t i = 0; i < d->api->nroutes; i++)
        fq_seq_push(items, fq_route_describe(&d->api->routes[i].def));
    struct fq_value *subs = fq_value_seq();
    for (size_t i = 0; i < d->api->nsubs; i++)
        fq_seq_push(subs, fq_value_str(d->api->subs[i].name));
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "kind", fq_value_str("RouteList"));
    fq_map_set(v, "items", items);
    fq_map_set(v, "subresources", subs);
    api_reply_value(d, r, 200, v);
    fq_value_free(v);
}

void fq_api_add_subresource(struct fq_api *a, const char *sub,
                            fq_subresource_fn fn, void *ctx)
{
    FQ_GROW(a->subs, a->capsubs, a->nsubs + 1);
    a->subs[a->nsubs++] = (struct subres){fq_xstrdup(sub), fn, ctx};
}

/* --- discovery ---------------------------------------------------------- */

static bool serves(const struct fq_kind_info *ki, const char *group,
                   const char *version)
{
    return !strcmp(ki->group, group) &&
           (!strcmp(ki->version, version) ||
            (ki->alt_version && !strcmp(ki->alt_version, version)));
}

static struct fq_value *str_seq(const char *const *items, size_t n)
{
    struct fq_value *s = fq_value_seq();
    for (size_t i = 0; i < n && items[i]; i++)
        fq_seq_push(s, fq_value_str(items[i]));
    return s;
}

static struct fq_value *resource_list(const char *group, const char *version)
{
    static const char *const verbs[] = {"create", "delete", "get",  "list",
                                        "patch",  "update", "watch"};
    static const char *const sverbs[] = {"get", "patch", "update"};
    struct fq_value *out = fq_value_map();
    fq_map_set(out, "kind", fq_value_str("APIResourceList"));
    fq_map_set(out, "apiVersion", fq_value_str("v1"));
    fq_map_set(out, "groupVersion",
               *group ? fq_value_strf("%s/%s", group, version) :
                        fq_value_str(version));
    struct fq_value *res = fq_value_seq();
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        if (!serves(ki, group, version))
            continue;
        struct fq_value *e = fq_value_map();
        fq_map_set(e, "name", fq_value_str(ki->plural));
        fq_map_set(e, "singularName", fq_value_str(ki->singular));
        fq_map_set(e, "namespaced", fq_value_bool(ki->namespaced));
        fq_map_set(e, "kind", fq_value_str(ki->name));
        fq_map_set(e, "verbs", str_seq(verbs, 7));
        size_t ns = 0;
        while (ns < 4 && ki->shortnames[ns])
            ns++;
        if (ns)
            fq_map_set(e, "shortNames", str_seq(ki->shortnames, ns));
        const char *const *cats = fq_discovery_categories(ki->kind);
        if (cats)
            fq_map_set(e, "categories", str_seq(cats, 4));
        fq_seq_push(res, e);
        if (ki->has_status) {
            e = fq_value_map();
            fq_map_set(e, "name", fq_value_strf("%s/status", ki->plural));
            fq_map_set(e, "singularName", fq_value_str(""));
            fq_map_set(e, "namespaced", fq_value_bool(ki->namespaced));
            fq_map_set(e, "kind", fq_value_str(ki->name));
            fq_map_set(e, "verbs", str_seq(sverbs, 3));
            fq_seq_push(res, e);
        }
    }
    fq_map_set(out, "resources", res);
    return out;
}

static struct fq_value *group_entry(const char *group)
{
    struct fq_value *g = fq_value_map();
    fq_map_set(g, "name", fq_value_str(group));
    struct fq_value *vs = fq_value_seq();
    struct fq_value *pref = NULL;
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        if (strcmp(ki->group, group) != 0)
            continue;
        const char *vv[2] = {ki->version, ki->alt_version};
        for (int j = 0; j < 2; j++) {
            if (!vv[j])
                continue;
            bool seen = false;
            for (size_t i = 0; i < fq_value_len(vs); i++)
                seen |= !strcmp(
                    fq_value_path_str(fq_seq_at(vs, i), "version", ""), vv[j]);
            if (seen)
                continue;
            struct fq_value *v = fq_value_map();
            fq_map_set(v, "groupVersion", fq_value_strf("%s/%s", group, vv[j]));
            fq_map_set(v, "version", fq_value_str(vv[j]));
            if (!pref)
                pref = fq_value_clone(v);
            fq_seq_push(vs, v);
        }
    }
    fq_map_set(g, "versions", vs);
    if (pref)
        fq_map_set(g, "preferredVersion", pref);
    return g;
}

static bool group_known(const char *group)
{
    for (int k = 1; k < FQ_KIND__COUNT; k++)
        if (!strcmp(fq_kind_info((enum fq_kind)k)->group, group))
            return true;
    return false;
}

static struct fq_value *group_list(void)
{
    struct fq_value *out = fq_value_map();
    fq_map_set(out, "kind", fq_value_str("APIGroupList"));
    fq_map_set(out, "apiVersion", fq_value_str("v1"));
    struct fq_value *gs = fq_value_seq();
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const char *g = fq_kind_info((enum fq_kind)k)->group;
        if (!*g)
            continue;
        bool seen = false;
        for (size_t i = 0; i < fq_value_len(gs); i++)
            seen |= !strcmp(fq_value_path_str(fq_seq_at(gs, i), "name", ""), g);
        if (!seen)
            fq_seq_push(gs, group_entry(g));
    }
    fq_map_set(out, "groups", gs);
    return out;
}

/* --- object requests ---------------------------------------------------- */

struct qname api_qualified(const struct fq_kind_info *ki)
{
    struct qname q;
    snprintf(q.s, sizeof(q.s), "%s%s%s", ki->plural, *ki->group ? "." : "",
             ki->group);
    return q;
}

static enum fq_kind resolve(const char *group, const char *version,
                            const char *plural)
{
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        if (serves(ki, group, version) && !strcmp(ki->plural, plural))
            return (enum fq_kind)k;
    }
    return FQ_KIND_NONE;
}

/* Parses the segments after /api/v1 or /apis/G/V. Returns 0 or FQ_E*. */
int api_parse_target(const char *group, const char *version, char **seg, int n,
                     struct target *t, struct fq_err *err)
{
    memset(t, 0, sizeof(*t));
    t->group = group;
    t->version = version;
    const char *res;
    int i = 0;
    if (n >= 3 && !strcmp(seg[0], "namespaces")) {
        t->ns = seg[1];
        i = 2;
    }
    if (i >= n)
        return fq_err_set(err, FQ_ENOTFOUND, "no resource in the path");
    res = seg[i++];
    t->kind = resolve(group, version, res);
    if (t->kind == FQ_KIND_NONE)
        return fq_err_set(err, FQ_ENOTFOUND,
                          "the server could not find the requested "
                          "resource: %s%s%s/%s",
                          group, *group ? "/" : "", version, res);
    t->ki = fq_kind_info(t->kind);
    if (i < n)
        t->name = seg[i++];
    if (i < n)
        t->sub = seg[i++];
    if (i < n)
        return fq_err_set(err, FQ_ENOTFOUND, "path too long");
    if (t->ns && !t->ki->namespaced)
        return fq_err_set(err, FQ_ENOTFOUND,
                          "%s are cluster-scoped; use the path without "
                          "namespaces/NS",
                          t->ki->plural);
    if (t->sub && strcmp(t->sub, "status") != 0 && strcmp(t->sub, "log") != 0 &&
        strcmp(t->sub, "portforward") != 0)
        return fq_err_set(err, FQ_ENOTFOUND, "unknown subresource \"%s\"",
                          t->sub);
    if (t->sub && !strcmp(t->sub, "status") && !t->ki->has_status)
        return fq_err_set(err, FQ_ENOTFOUND, "%s have no status subresource",
                          t->ki->plural);
    return 0;
}

/* The namespace an object lives in for storage: "" for cluster-scoped. */
const char *api_obj_ns(const struct target *t)
{
    if (!t->ki->namespaced)
        return "";
    return t->ns ? t->ns : "default";
}

/* Reads an optional non-negative integer query parameter; -1 if absent. */
int api_query_count(struct fq_http_req *r, const char *key, long long max,
                    long long *out, struct fq_err *err)
{
    const char *v = fq_http_query(r, key);
    *out = -1;
    if (!v || !*v)
        return 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (*end || x < 0 || x > max)
        return fq_err_set(err, FQ_EPARSE,
                          "%s must be an integer from 0 to %lld, not \"%s\"",
                          key, max, v);
    *out = x;
    return 0;
}

/* A boolean query parameter as Kubernetes reads one: absent, "0" and
 * "false" (any case) are false, every other value is true ("True" from the
 * Python client, "1", even ""). */
bool fq_api_query_bool(struct fq_http_req *r, const char *key)
{
    const char *v = fq_http_query(r, key);
    return v && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0;
}

bool api_query_true(struct fq_http_req *r, const char *key)
{
    return fq_api_query_bool(r, key);
}

/* --- list pages --------------------------------------------------------- */

static const char B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64url without padding, into b. */
static void b64_put(struct fq_buf *b, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        fq_buf_putc(b, B64[v >> 18 & 63]);
        fq_buf_putc(b, B64[v >> 12 & 63]);
        if (i + 1 < n)
            fq_buf_putc(b, B64[v >> 6 & 63]);
        if (i + 2 < n)
            fq_buf_putc(b, B64[v & 63]);
    }
}

/* Decodes base64url (no padding) into b; -1 on a bad character. */
static int b64_get(struct fq_buf *b, const char *s)
{
    unsigned v = 0;
    int bits = 0;
    for (; *s; s++) {
        const char *c = strchr(B64, *s);
        if (!c || !*c)
            return -1;
        v = (v << 6 | (unsigned)(c - B64)) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            fq_buf_putc(b, (char)(v >> bits & 0xff));
        }
    }
    return 0;
}

/* A continue token: base64url of "1\0NS\0NAME", the key of the last item
 * of the page. The next page starts after that key in (ns, name) order. */
static void continue_token(struct fq_buf *out, const struct fq_object *last)
{
    struct fq_buf raw = FQ_BUF_INIT;
    fq_buf_append(&raw, "1", 2);
    fq_buf_append(&raw, last->ns, strlen(last->ns) + 1);
    fq_buf_puts(&raw, last->name);
    b64_put(out, (const unsigned char *)raw.data, raw.len);
    fq_buf_release(&raw);
}

/* The key a continue token names: *ns and *name (owned) on success. */
static int continue_key(const char *tok, char **ns, char **name,
                        struct fq_err *err)
{
    struct fq_buf raw = FQ_BUF_INIT;
    int rc = 0;
    if (strlen(tok) > 2048 || b64_get(&raw, tok) < 0 || raw.len < 3 ||
        memcmp(raw.data, "1", 2) != 0 ||
        !memchr(raw.data + 2, '\0', raw.len - 2)) {
        rc = fq_err_set(err, FQ_EPARSE,
                        "the continue token is not valid; list from the "
                        "start again");
        goto out;
    }
    const char *n = raw.data + 2;
    *ns = fq_xstrdup(n);
    *name = fq_xstrndup(n + strlen(n) + 1, raw.len - 2 - strlen(n) - 1);
out:
    fq_buf_release(&raw);
    return rc;
}

/*
 * GET on a collection. With ?limit=N at most N matching items, and when
 * more may match, metadata.continue (a token for ?continue=); without a
 * selector also metadata.remainingItemCount (as Kubernetes, which leaves
 * it out when a selector is given). Pages are read from the live store in
 * (namespace, name) order, each at its own resourceVersion: an object is
 * never listed twice, and one created or deleted between two pages shows
 * up or not according to where its key falls, as in a Kubernetes list
 * whose continue token outlived its snapshot. A page costs a binary
 * search and its own items, however big the collection.
 */
void api_list_objects(struct fq_daemon *d, struct fq_http_req *r,
                      const struct target *t, struct fq_labelsel *ls,
                      struct fq_labelsel *fs)
{
    struct fq_objstore *os = fq_engine_store(d->engine);
    struct fq_err e = {0};
    long long limit;
    int rc = api_query_count(r, "limit", MAX_LIMIT, &limit, &e);
    char *after_ns = NULL, *after_name = NULL;
    const char *tok = fq_http_query(r, "continue");
    if (rc == 0 && tok && *tok)
        rc = continue_key(tok, &after_ns, &after_name, &e);
    if (rc < 0) {
        fq_api_error(d, r, rc, &e, t->ki->plural, NULL);
        return;
    }
    size_t lo, hi;
    fq_objstore_span(os, t->kind, t->ki->namespaced ? t->ns : NULL, after_ns,
                     after_name, &lo, &hi);
    free(after_ns);
    free(after_name);
    bool selected = !fq_labelsel_empty(ls) || !fq_labelsel_empty(fs);
    /* kubectl get asks for a Table: the kind's printer columns. */
    const char *tv = fq_table_accepts(fq_http_header(r, "Accept"));
    struct fq_value *table = tv ? fq_table_new(t->kind, tv) : NULL;
    enum fq_table_include inc =
        fq_table_include_of(fq_http_query(r, "includeObject"));
    int64_t now = fq_daemon_now(d);
    struct fq_buf items = FQ_BUF_INIT;
    size_t taken = 0, remaining = 0;
    bool more = false;
    const struct fq_object *last = NULL;
    for (size_t i = lo; i < hi; i++) {
        const struct fq_object *o = fq_objstore_at(os, t->kind, i);
        if (limit > 0 && taken == (size_t)limit && !selected) {
            remaining = hi - i; /* every one left matches */
            more = true;
            break;
        }
        if (!fq_labelsel_match(ls, o->obj) || !fq_labelsel_match(fs, o->obj))
            continue;
        if (limit > 0 && taken == (size_t)limit) {
            more = true; /* one more matches: enough to say so */
            break;
        }
        last = o;
        struct fq_value *cv = fq_convert_kueue(o->obj, t->group, t->version);
        if (table) {
            taken++;
            fq_table_add_row(table, t->kind, cv ? cv : o->obj, now, inc);
            fq_value_free(cv);
            continue;
        }
        if (taken++)
            fq_buf_putc(&items, ',');
        fq_json_encode(cv ? cv : o->obj, FQ_JSON_COMPACT, &items);
        fq_value_free(cv);
    }
    struct fq_buf b = FQ_BUF_INIT;
    if (table) {
        struct fq_value *md = fq_map_get(table, "metadata");
        fq_map_set(md, "resourceVersion",
                   fq_value_strf("%llu",
                                 (unsigned long long)fq_objstore_revision(os)));
        if (more && last) {
            continue_token(&b, last);
            fq_map_set(md, "continue", fq_value_str(fq_buf_str(&b)));
            if (remaining)
                fq_map_set(md, "remainingItemCount",
                           fq_value_int((int64_t)remaining));
            fq_buf_reset(&b);
        }
        fq_json_encode(table, FQ_JSON_COMPACT, &b);
        fq_value_free(table);
        fq_buf_release(&items);
        api_reply_buf(d, r, 200, &b);
        return;
    }
    /* The list is in the path's version (v1beta1 or v1beta2 for Kueue). */
    bool pv = t->group && t->version;
    fq_buf_printf(&b,
                  "{\"apiVersion\":\"%s%s%s\",\"kind\":\"%sList\","
                  "\"metadata\":{\"resourceVersion\":\"%llu\"",
                  pv ? t->group : "", pv && *t->group ? "/" : "",
                  pv ? t->version : fq_kind_api_version(t->kind), t->ki->name,
                  (unsigned long long)fq_objstore_revision(os));
    if (more && last) {
        fq_buf_puts(&b, ",\"continue\":\"");
        continue_token(&b, last);
        fq_buf_putc(&b, '"');
        if (remaining)
            fq_buf_printf(&b, ",\"remainingItemCount\":%zu", remaining);
    }
    fq_buf_puts(&b, "},\"items\":[");
    fq_buf_append(&b, items.data ? items.data : "", items.len);
    fq_buf_puts(&b, "]}");
    fq_buf_release(&items);
    api_reply_buf(d, r, 200, &b);
}

/* --- entry point -------------------------------------------------------- */

static int split(char *path, char **seg)
{
    int n = 0;
    for (char *s = strtok(path, "/"); s; s = strtok(NULL, "/")) {
        if (n == MAX_SEGS)
            return -1;
        seg[n++] = s;
    }
    return n;
}

static void version_info(struct fq_daemon *d, struct fq_http_req *r)
{
    struct fq_value *v = fq_discovery_version(FLEXQ_VERSION);
    api_reply_value(d, r, 200, v);
    fq_value_free(v);
}

static void health(struct fq_daemon *d, struct fq_http_req *r)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "ok");
    fq_daemon_defer_reply(d, r, 200, "text/plain", &b);
    fq_buf_release(&b);
}

static const struct route *find_route(const struct fq_api *a, const char *path)
{
    const struct route *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < a->nroutes; i++) {
        size_t l = strlen(a->routes[i].prefix);
        if (strncmp(path, a->routes[i].prefix, l) == 0 && l >= best_len) {
            best = &a->routes[i];
            best_len = l;
        }
    }
    return best;
}

/* Discovery and object paths under /api and /apis. */
/* True when Accept names protobuf and nothing flexqd can produce (JSON,
 * a wildcard): kubectl and client-go always add application/json, so
 * only a client that can read nothing else gets 406, as from a
 * Kubernetes API server for a form it cannot encode. */
static bool accepts_only_protobuf(const char *accept)
{
    return accept && strstr(accept, "protobuf") && !strstr(accept, "json") &&
           !strstr(accept, "*/*") && !strstr(accept, "application/*");
}

/* The objects under a group-version, unless Accept rules JSON out. */
static void objects_or_406(struct fq_daemon *d, struct fq_http_req *r,
                           const struct fq_principal *who, const char *group,
                           const char *version, char **seg, int n)
{
    if (accepts_only_protobuf(fq_http_header(r, "Accept"))) {
        struct fq_buf b = FQ_BUF_INIT;
        fq_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                        "\"metadata\":{},\"status\":\"Failure\","
                        "\"message\":\"only the following media types are "
                        "accepted: application/json (flexqd reads protobuf "
                        "bodies but answers in JSON)\",\"reason\":"
                        "\"NotAcceptable\",\"code\":406}");
        fq_daemon_defer_reply(d, r, 406, "application/json", &b);
        fq_buf_release(&b);
        return;
    }
    api_handle_objects(d, r, who, group, version, seg, n);
}

static void handle_api(struct fq_daemon *d, struct fq_http_req *r,
                       const struct fq_principal *who, char **seg, int n)
{
    bool get = !strcmp(fq_http_method(r), "GET");
    struct fq_value *out = NULL;
    const char *agg = fq_discovery_accepts(fq_http_header(r, "Accept"));
    if (get && agg && n == 1) {
        /* Aggregated discovery: every group and resource in one answer. */
        out = fq_discovery_aggregated(!strcmp(seg[0], "api"), agg);
        struct fq_buf b = FQ_BUF_INIT;
        fq_json_encode(out, FQ_JSON_COMPACT, &b);
        fq_value_free(out);
        /* The content type is kept by pointer until the reply leaves. */
        const char *ct = !strcmp(agg, "v2") ?
                             "application/json;g=apidiscovery.k8s.io;v=v2;"
                             "as=APIGroupDiscoveryList" :
                             "application/json;g=apidiscovery.k8s.io;"
                             "v=v2beta1;as=APIGroupDiscoveryList";
        fq_daemon_defer_reply(d, r, 200, ct, &b);
        fq_buf_release(&b);
        return;
    }
    if (!strcmp(seg[0], "api")) {
        if (n == 1 && get) {
            out = fq_value_map();
            fq_map_set(out, "kind", fq_value_str("APIVersions"));
            const char *v1[] = {"v1"};
            fq_map_set(out, "versions", str_seq(v1, 1));
        } else if (n == 2 && get && !strcmp(seg[1], "v1")) {
            out = resource_list("", "v1");
        } else if (n >= 3 && !strcmp(seg[1], "v1")) {
            objects_or_406(d, r, who, "", "v1", seg + 2, n - 2);
            return;
        }
    } else {
        if (n == 1 && get) {
            out = group_list();
        } else if (n == 2 && get && group_known(seg[1])) {
            out = group_entry(seg[1]);
            fq_map_set(out, "kind", fq_value_str("APIGroup"));
            fq_map_set(out, "apiVersion", fq_value_str("v1"));
        } else if (n == 3 && get) {
            out = resource_list(seg[1], seg[2]);
            if (fq_value_len(fq_map_get(out, "resources")) == 0) {
                fq_value_free(out);
                out = NULL;
            }
        } else if (n >= 4) {
            objects_or_406(d, r, who, seg[1], seg[2], seg + 3, n - 3);
            return;
        }
    }
    if (!out) {
        api_fail(d, r, FQ_ENOTFOUND,
                 "the server could not find the requested "
                 "resource");
        return;
    }
    api_reply_value(d, r, 200, out);
    fq_value_free(out);
}

/*
 * The disk is full (space.c): a write that would store something is
 * answered 507 before it is applied, so nothing changes. Reads, watches,
 * deletes (they make room), dry runs and the access reviews (POSTs that
 * store nothing) go on.
 */
static bool refuse_when_full(struct fq_daemon *d, struct fq_http_req *r,
                             const char *method, const char *path)
{
    if (strcmp(method, "POST") && strcmp(method, "PUT") &&
        strcmp(method, "PATCH"))
        return false;
    const char *dry = fq_http_query(r, "dryRun");
    if ((dry && *dry) || strstr(path, "/selfsubject") ||
        strstr(path, "/tokenreviews") || strstr(path, "/subjectaccessreviews"))
        return false;
    int64_t free_bytes = 0;
    if (!d->space || !fq_space_low(d->space, fq_daemon_now(d), &free_bytes))
        return false;
    struct fq_err e = {0};
    fq_err_set(&e, FQ_ENOSPACE,
               "flexqd's disk is full (%lld bytes free in the data "
               "directory): writes are refused until there is room; reads, "
               "watches and deletes still work",
               (long long)free_bytes);
    fq_api_error(d, r, FQ_ENOSPACE, &e, NULL, NULL);
    return true;
}

void fq_api_handle(void *ctx, struct fq_http_req *r)
{
    struct fq_daemon *d = ctx;
    const char *path = fq_http_path(r);
    /* Anonymous is an admin only without --tokens; with them it is
     * replaced by the identified token, or stays powerless on a public
     * route. */
    struct fq_principal who = {"anonymous", !d->auth, NULL};
    fq_log(FQ_LOG_DEBUG, "request", "method=%s path=\"%s\" peer=%s",
           fq_http_method(r), path, fq_http_peer(r));
    struct fq_err e = {0};
    size_t body_len = 0;
    fq_http_body(r, &body_len);
    struct fq_reqgate_in gin = {
        .method = fq_http_method(r),
        .host = fq_http_header(r, "Host"),
        .origin = fq_http_header(r, "Origin"),
        .sec_fetch_site = fq_http_header(r, "Sec-Fetch-Site"),
        .content_type = fq_http_header(r, "Content-Type"),
        .body_len = body_len,
    };
    int grc = fq_reqgate_check(&d->api->gate, &gin, &e);
    if (grc < 0) {
        fq_log(FQ_LOG_WARN, "request refused",
               "method=%s path=\"%s\" peer=%s why=\"%s\"", gin.method, path,
               fq_http_peer(r), e.msg);
        fq_api_error(d, r, grc, &e, NULL, NULL);
        return;
    }
    if (!strcmp(path, "/healthz") || !strcmp(path, "/readyz") ||
        !strcmp(path, "/livez")) {
        health(d, r);
        return;
    }
    if (refuse_when_full(d, r, gin.method, path))
        return;
    char *copy = fq_xstrdup(path);
    char *seg[MAX_SEGS];
    int n = split(copy, seg);
    /* Kubernetes paths (/api, /api/v1/..., /apis/...) and /version are
     * served here; other paths go to the module whose prefix is longest
     * ("/api/jobs/" is the Ray Jobs API, "/" the dashboard). */
    bool k8s = n >= 1 &&
               (!strcmp(seg[0], "apis") ||
                (!strcmp(seg[0], "api") && (n == 1 || !strcmp(seg[1], "v1"))));
    bool version = n == 1 && !strcmp(seg[0], "version");
    const struct route *rt =
        k8s || version || n < 0 ? NULL : find_route(d->api, path);
    /* A module may serve a whole API group of its own (the visibility
     * API, web.c) by routing a "/apis/GROUP/" prefix. */
    if (k8s && n >= 2 && !strcmp(seg[0], "apis")) {
        rt = find_route(d->api, path);
        if (rt && strncmp(rt->prefix, "/apis/", 6) != 0)
            rt = NULL;
    }
    if (d->auth && !(rt && rt->def.access == FQ_ROUTE_PUBLIC)) {
        int rc = fq_auth_identify(d->auth, fq_http_header(r, "Authorization"),
                                  &who, &e);
        if (rc < 0) {
            free(copy);
            fq_api_error(d, r, rc, &e, NULL, NULL);
            return;
        }
        fq_http_set_user(r, who.id);
    }
    /* Every route passes the same check before its handler (routes.h). */
    int arc =
        rt ? fq_route_gate(d->auth, &who, &rt->def, fq_http_method(r), &e) : 0;
    if (arc < 0)
        fq_api_error(d, r, arc, &e, NULL, NULL);
    else if (rt)
        rt->fn(d, r, rt->ctx);
    else if (n < 0)
        api_fail(d, r, FQ_ENOTFOUND, "path too long");
    else if (version)
        version_info(d, r);
    else if (k8s)
        handle_api(d, r, &who, seg, n);
    else
        api_fail(d, r, FQ_ENOTFOUND, "no such path: %s", path);
    free(copy);
}
