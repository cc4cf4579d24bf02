/*
 * api_gke.c - gcloud's container v1 subset, project lookup and service
 * check, over flexq's Cluster and NodePool objects (api_gke.h has the
 * paths).
 *
 * How it works: one prefix route per API version takes /v1/... and
 * /v1beta1/...; the handler authenticates (auth.h, answering in Google's
 * error shape rather than Kubernetes'), splits the path into its
 * segments and a trailing ":verb", and dispatches. Writes go through the
 * engine (fq_engine_apply / fq_engine_delete), after checks that leave
 * nothing changed on error: a cluster create converts and validates every
 * pool before the first is stored. Answers are deferred until the turn's
 * commit, as the Kubernetes API's are. Every write makes an Operation,
 * DONE at once, kept in a ring of the last OPS_KEPT for operations get,
 * list and wait (they are not stored: a restart forgets them, and an
 * unknown operation is NotFound).
 *
 * What it does not do: clusters.update beyond a pool's autoscaling (400)
 * and the other cluster setters (501 UNIMPLEMENTED), zones/ paths (gcloud uses locations/), more than
 * one cluster per flexqd (400 FAILED_PRECONDITION naming the one there),
 * long-running operations (nothing to wait for: the objects are stored
 * when the answer leaves; nodes come later, as on GKE).
 */
#include "api/api_gke.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/tls.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/engine.h"
#include "flexq/gke.h"
#include "flexq/nodepool.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

#define OPS_KEPT 256
#define MAX_SEGS 12

struct fq_gke {
    struct fq_value *ops[OPS_KEPT]; /* owned Operation objects, a ring */
    size_t next;
    uint64_t seq;
};

/* One request, parsed. */
struct greq {
    struct fq_daemon *d;
    struct fq_http_req *r;
    struct fq_gke *g;
    struct fq_principal who;
    const char *method;
    char *seg[MAX_SEGS];
    int n;
    const char *verb;     /* the ":verb" of the last segment, or NULL */
    const char *project;  /* seg[2] */
    const char *location; /* after locations/ */
    char base[512];       /* "http://HOST/v1/projects/P/locations/L" */
    char rname[512];      /* "projects/P/locations/L" */
};

/* --- answers --------------------------------------------------------------- */

static void reply(struct greq *q, int status, const struct fq_value *v)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(v, FQ_JSON_PRETTY, &b);
    fq_daemon_defer_reply(q->d, q->r, status, "application/json", &b);
    fq_buf_release(&b);
}

static void gfail(struct greq *q, int http, const char *status, const char *fmt,
                  ...) __attribute__((format(printf, 4, 5)));

static void gfail(struct greq *q, int http, const char *status, const char *fmt,
                  ...)
{
    char msg[FQ_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    struct fq_value *e = fq_value_map();
    struct fq_value *in = fq_map_ensure_map(e, "error");
    fq_map_set(in, "code", fq_value_int(http));
    fq_map_set(in, "message", fq_value_str(msg));
    fq_map_set(in, "status", fq_value_str(status));
    reply(q, http, e);
    fq_value_free(e);
}

/* An fq error code in Google's terms. */
static void gfail_code(struct greq *q, int code, const char *msg)
{
    switch (code) {
    case FQ_EINVAL:
    case FQ_EPARSE:
    case FQ_ELIMIT:
    case FQ_EOVERFLOW:
        gfail(q, 400, "INVALID_ARGUMENT", "%s", msg);
        break;
    case FQ_ENOTFOUND:
        gfail(q, 404, "NOT_FOUND", "%s", msg);
        break;
    case FQ_EEXIST:
    case FQ_ECONFLICT:
        gfail(q, 409, "ALREADY_EXISTS", "%s", msg);
        break;
    case FQ_EUNAUTH:
        gfail(q, 401, "UNAUTHENTICATED", "%s", msg);
        break;
    case FQ_EFORBIDDEN:
        gfail(q, 403, "PERMISSION_DENIED", "%s", msg);
        break;
    default:
        gfail(q, 500, "INTERNAL", "%s", msg);
    }
}

static int64_t now(struct greq *q)
{
    return fq_daemon_now(q->d);
}

static struct fq_value *timestamp(int64_t ms)
{
    char ts[40];
    fq_time_format(ms, ts, sizeof(ts));
    return fq_value_str(ts);
}

/* Records a finished Operation and answers with it. */
static void reply_op(struct greq *q, const char *type, const char *target)
{
    struct fq_gke *g = q->g;
    struct fq_value *op = fq_value_map();
    int64_t t = now(q);
    char name[64];
    snprintf(name, sizeof(name), "operation-%lld-%08llx", (long long)t,
             (unsigned long long)(++g->seq * 2654435761u & 0xffffffffu));
    fq_map_set(op, "name", fq_value_str(name));
    fq_map_set(op, "zone", fq_value_str(q->location));
    fq_map_set(op, "location", fq_value_str(q->location));
    fq_map_set(op, "operationType", fq_value_str(type));
    fq_map_set(op, "status", fq_value_str("DONE"));
    fq_map_set(op, "selfLink",
               fq_value_strf("%s/operations/%s", q->base, name));
    fq_map_set(op, "targetLink", fq_value_strf("%s/%s", q->base, target));
    fq_map_set(op, "startTime", timestamp(t));
    fq_map_set(op, "endTime", timestamp(t));
    fq_map_set(op, "project", fq_value_str(q->project));
    fq_value_free(g->ops[g->next]);
    g->ops[g->next] = op;
    g->next = (g->next + 1) % OPS_KEPT;
    reply(q, 200, op);
}

/* --- auth ------------------------------------------------------------------ */

static int authorize(struct greq *q, const char *verb, enum fq_kind kind)
{
    if (!q->d->auth)
        return 0;
    struct fq_err e = {0};
    int rc = fq_auth_allow(q->d->auth, &q->who, verb, kind, "", NULL, &e);
    if (rc < 0)
        gfail_code(q, rc, e.msg);
    return rc;
}

/* --- lookups --------------------------------------------------------------- */

static struct fq_objstore *store(struct greq *q)
{
    return fq_engine_store(q->d->engine);
}

/* The Cluster object of this request's project and location, or NULL
 * (answered 404 when `answer`). */
static const struct fq_object *find_cluster(struct greq *q, const char *name,
                                            bool answer)
{
    const struct fq_object *o =
        fq_objstore_get(store(q), FQ_KIND_CLUSTER, "", name);
    if (o &&
        !strcmp(fq_value_path_str(o->obj, "spec.project", ""), q->project) &&
        (!strcmp(q->location, "-") ||
         !strcmp(fq_value_path_str(o->obj, FQ_POOL_LOCATION, ""), q->location)))
        return o;
    if (answer)
        gfail(q, 404, "NOT_FOUND", "Not found: %s/clusters/%s.", q->rname,
              name);
    return NULL;
}

static bool pool_in(const struct fq_value *pool, const char *cluster)
{
    const char *c = fq_value_path_str(pool, "spec.cluster", NULL);
    return !c || !strcmp(c, cluster);
}

static const struct fq_object *find_pool(struct greq *q, const char *cluster,
                                         const char *name, bool answer)
{
    const struct fq_object *o =
        fq_objstore_get(store(q), FQ_KIND_NODEPOOL, "", name);
    if (o && pool_in(o->obj, cluster))
        return o;
    if (answer)
        gfail(q, 404, "NOT_FOUND", "Not found: %s/clusters/%s/nodePools/%s.",
              q->rname, cluster, name);
    return NULL;
}

static struct fq_value *pool_view(struct greq *q, const struct fq_value *pool,
                                  const struct fq_value *cluster,
                                  const char *cname)
{
    char self[700];
    snprintf(self, sizeof(self), "%s/clusters/%s", q->base, cname);
    struct fq_value *v = fq_gke_pool_to_api(pool, self);
    struct fq_value *cv =
        fq_gke_cluster_to_api(cluster, NULL, NULL, NULL, NULL);
    fq_map_set(v, "version",
               fq_value_str(fq_value_path_str(cv, "currentNodeVersion", "")));
    fq_value_free(cv);
    return v;
}

static struct fq_value *pools_of(struct greq *q, const struct fq_value *cluster,
                                 const char *cname)
{
    const struct fq_object **list = NULL;
    size_t n = fq_objstore_list(store(q), FQ_KIND_NODEPOOL, NULL, &list);
    struct fq_value *seq = fq_value_seq();
    for (size_t i = 0; i < n; i++)
        if (pool_in(list[i]->obj, cname))
            fq_seq_push(seq, pool_view(q, list[i]->obj, cluster, cname));
    free(list);
    return seq;
}

static struct fq_value *cluster_view(struct greq *q, const struct fq_object *o)
{
    const char *name = o->name;
    const char *loc = fq_value_path_str(o->obj, FQ_POOL_LOCATION, "");
    char self[700];
    snprintf(self, sizeof(self), "%s/clusters/%s", q->base, name);
    if (!strcmp(q->location, "-")) {
        /* A list over all locations: links name the cluster's own. */
        const char *slash = strstr(q->base, "/locations/");
        snprintf(self, sizeof(self), "%.*s/locations/%s/clusters/%s",
                 slash ? (int)(slash - q->base) : 0, q->base, loc, name);
    }
    struct fq_tls *t = q->d->tls;
    return fq_gke_cluster_to_api(o->obj, pools_of(q, o->obj, name),
                                 t ? fq_tls_endpoint(t) : NULL,
                                 t ? fq_tls_ca_b64(t) : NULL, self);
}

/* --- bodies ---------------------------------------------------------------- */

static struct fq_value *body(struct greq *q)
{
    size_t len = 0;
    const char *b = fq_http_body(q->r, &len);
    struct fq_value *v = NULL;
    struct fq_err e = {0};
    struct fq_limits lim = fq_limits_default();
    if (fq_json_parse(b, len, "body", &lim, &v, &e) < 0 ||
        fq_value_refuse_nonfinite(v, "body", &e) < 0) {
        gfail(q, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. %s",
              e.msg);
        fq_value_free(v);
        return NULL;
    }
    if (v->type != FQ_V_MAP) {
        fq_value_free(v);
        gfail(q, 400, "INVALID_ARGUMENT",
              "Invalid JSON payload received. Expected an object.");
        return NULL;
    }
    return v;
}

/* Applies `obj` (taken); answers and returns < 0 on error. */
static int apply(struct greq *q, struct fq_value *obj)
{
    struct fq_err e = {0};
    int rc = fq_engine_apply(q->d->engine, obj, now(q), NULL, NULL, &e);
    if (rc < 0)
        gfail_code(q, rc, e.msg);
    return rc;
}

/* A copy of a stored object for a change: no status, metadata reduced to
 * what a user sets. */
static struct fq_value *for_update(const struct fq_value *stored)
{
    struct fq_value *o = fq_value_clone(stored);
    fq_map_del(o, "status");
    struct fq_value *md = fq_map_get(o, "metadata");
    struct fq_value *m = fq_value_map();
    const char *keep[] = {"name", "labels", "annotations"};
    for (size_t i = 0; i < 3; i++)
        if (fq_map_get(md, keep[i]))
            fq_map_set(m, keep[i], fq_value_clone(fq_map_get(md, keep[i])));
    fq_map_set(o, "metadata", m);
    return o;
}

/* --- projects and services ------------------------------------------------- */

static void get_project(struct greq *q)
{
    struct fq_value *p = fq_value_map();
    unsigned long long num = fq_gke_project_number(q->project);
    fq_map_set(p, "projectNumber", fq_value_strf("%llu", num));
    fq_map_set(p, "projectId", fq_value_str(q->project));
    fq_map_set(p, "lifecycleState", fq_value_str("ACTIVE"));
    fq_map_set(p, "name", fq_value_str(q->project));
    fq_map_set(p, "createTime", timestamp(q->d->started_ms));
    reply(q, 200, p);
    fq_value_free(p);
}

static void get_service(struct greq *q, const char *svc)
{
    unsigned long long num = fq_gke_project_number(q->project);
    struct fq_value *s = fq_value_map();
    fq_map_set(s, "name", fq_value_strf("projects/%llu/services/%s", num, svc));
    fq_map_set(s, "parent", fq_value_strf("projects/%llu", num));
    fq_map_set(fq_map_ensure_map(s, "config"), "name", fq_value_str(svc));
    fq_map_set(s, "state", fq_value_str("ENABLED"));
    reply(q, 200, s);
    fq_value_free(s);
}

/* --- clusters -------------------------------------------------------------- */

static void list_clusters(struct greq *q)
{
    const struct fq_object **list = NULL;
    size_t n = fq_objstore_list(store(q), FQ_KIND_CLUSTER, NULL, &list);
    struct fq_value *out = fq_value_map();
    struct fq_value *seq = fq_value_seq();
    for (size_t i = 0; i < n; i++)
        if (find_cluster(q, list[i]->name, false))
            fq_seq_push(seq, cluster_view(q, list[i]));
    free(list);
    if (fq_value_len(seq))
        fq_map_set(out, "clusters", seq);
    else
        fq_value_free(seq);
    reply(q, 200, out);
    fq_value_free(out);
}

static void get_cluster(struct greq *q, const char *name)
{
    const struct fq_object *o = find_cluster(q, name, true);
    if (!o)
        return;
    struct fq_value *v = cluster_view(q, o);
    reply(q, 200, v);
    fq_value_free(v);
}

/* The pools a cluster create asks for: nodePools[], or the legacy
 * nodeConfig + initialNodeCount, or GKE's default of three nodes. */
static int request_pools(const struct fq_value *c, const char *name,
                         const char *loc, struct fq_value *out,
                         struct fq_err *e)
{
    const struct fq_value *nps = fq_map_get(c, "nodePools");
    if (nps && nps->type != FQ_V_SEQ)
        return fq_err_set(e, FQ_EINVAL, "cluster.nodePools: must be a list");
    if (fq_value_len(nps) > FQ_GKE_MAX_ITEMS)
        return fq_err_set(e, FQ_EINVAL, "cluster.nodePools: more than %d",
                          FQ_GKE_MAX_ITEMS);
    struct fq_value *legacy = NULL;
    if (!fq_value_len(nps)) {
        legacy = fq_value_seq();
        struct fq_value *np = fq_value_map();
        fq_map_set(np, "name", fq_value_str(FQ_NODEPOOL_DEFAULT));
        if (fq_map_get(c, "nodeConfig"))
            fq_map_set(np, "config",
                       fq_value_clone(fq_map_get(c, "nodeConfig")));
        const struct fq_value *ic = fq_map_get(c, "initialNodeCount");
        fq_map_set(np, "initialNodeCount",
                   ic ? fq_value_clone(ic) : fq_value_int(3));
        fq_seq_push(legacy, np);
        nps = legacy;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < fq_value_len(nps); i++) {
        struct fq_value *pool = NULL;
        rc = fq_gke_pool_from_api(fq_seq_at(nps, i), name, loc, &pool, e);
        if (rc == 0 && (rc = fq_nodepool_validate(pool, e)) < 0)
            fq_value_free(pool);
        else if (rc == 0)
            fq_seq_push(out, pool);
    }
    fq_value_free(legacy);
    return rc;
}

static void create_cluster(struct greq *q)
{
    if (authorize(q, "create", FQ_KIND_NODEPOOL) < 0)
        return;
    struct fq_value *b = body(q);
    if (!b)
        return;
    const struct fq_value *c = fq_map_get(b, "cluster");
    struct fq_err e = {0};
    const char *name = fq_value_path_str(c, "name", NULL);
    struct fq_value *pools = fq_value_seq();
    int rc = !c || c->type != FQ_V_MAP ?
                 fq_err_set(&e, FQ_EINVAL, "cluster: required, an object") :
                 fq_gke_check_name("cluster.name", name, &e);
    if (rc == 0 && find_cluster(q, name, false)) {
        gfail(q, 409, "ALREADY_EXISTS", "Already exists: %s/clusters/%s.",
              q->rname, name);
        goto out;
    }
    if (rc == 0) {
        const struct fq_object **list = NULL;
        size_t n = fq_objstore_list(store(q), FQ_KIND_CLUSTER, NULL, &list);
        const char *other = n ? list[0]->name : NULL;
        free(list);
        if (other) {
            gfail(q, 400, "FAILED_PRECONDITION",
                  "flexqd serves one cluster and holds \"%s\" already; "
                  "delete it first",
                  other);
            goto out;
        }
    }
    if (rc == 0)
        rc = request_pools(c, name, q->location, pools, &e);
    if (rc < 0) {
        gfail_code(q, rc, e.msg);
        goto out;
    }
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("flexq.dev/v1alpha1"));
    fq_map_set(o, "kind", fq_value_str("Cluster"));
    fq_map_set(fq_map_ensure_map(o, "metadata"), "name", fq_value_str(name));
    struct fq_value *spec = fq_map_ensure_map(o, "spec");
    fq_map_set(spec, "project", fq_value_str(q->project));
    fq_map_set(spec, "location", fq_value_str(q->location));
    const char *keep[] = {"initialClusterVersion", "addonsConfig",
                          "nodePoolDefaults"};
    for (size_t i = 0; i < 3; i++)
        if (fq_map_get(c, keep[i]))
            fq_map_set(spec, keep[i], fq_value_clone(fq_map_get(c, keep[i])));
    char target[128];
    snprintf(target, sizeof(target), "clusters/%s", name);
    if (apply(q, o) < 0)
        goto out;
    /* Validated above: these replace any pool of the same name (the
     * default-pool a fresh flexqd starts with). */
    for (size_t i = 0; i < fq_value_len(pools); i++) {
        struct fq_value *p = fq_seq_at(pools, i);
        pools->u.seq.items[i] = NULL;
        if (apply(q, p) < 0)
            goto out;
    }
    reply_op(q, "CREATE_CLUSTER", target);
out:
    for (size_t i = 0; i < fq_value_len(pools); i++)
        if (!pools->u.seq.items[i])
            pools->u.seq.items[i] = fq_value_null();
    fq_value_free(pools);
    fq_value_free(b);
}

static int delete_obj(struct greq *q, enum fq_kind k, const char *name)
{
    struct fq_err e = {0};
    int rc = fq_engine_delete(q->d->engine, k, "", name, now(q), &e);
    if (rc < 0 && rc != FQ_ENOTFOUND) {
        gfail_code(q, rc, e.msg);
        return rc;
    }
    return 0;
}

static void delete_cluster(struct greq *q, const char *name)
{
    if (authorize(q, "delete", FQ_KIND_NODEPOOL) < 0)
        return;
    const struct fq_object *o = find_cluster(q, name, true);
    if (!o)
        return;
    char *cname = fq_xstrdup(name);
    const struct fq_object **list = NULL;
    size_t n = fq_objstore_list(store(q), FQ_KIND_NODEPOOL, NULL, &list);
    char **names = fq_xcalloc(n + 1, sizeof(*names));
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (pool_in(list[i]->obj, cname))
            names[m++] = fq_xstrdup(list[i]->name);
    free(list);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < m; i++)
        rc = delete_obj(q, FQ_KIND_NODEPOOL, names[i]);
    if (rc == 0)
        rc = delete_obj(q, FQ_KIND_CLUSTER, cname);
    if (rc == 0) {
        char target[128];
        snprintf(target, sizeof(target), "clusters/%s", cname);
        reply_op(q, "DELETE_CLUSTER", target);
    }
    for (size_t i = 0; i < m; i++)
        free(names[i]);
    free(names);
    free(cname);
}

/* --- node pools ------------------------------------------------------------ */

static void list_pools(struct greq *q, const char *cname)
{
    const struct fq_object *c = find_cluster(q, cname, true);
    if (!c)
        return;
    struct fq_value *out = fq_value_map();
    fq_map_set(out, "nodePools", pools_of(q, c->obj, cname));
    reply(q, 200, out);
    fq_value_free(out);
}

static void get_pool(struct greq *q, const char *cname, const char *pname)
{
    const struct fq_object *c = find_cluster(q, cname, true);
    const struct fq_object *p = c ? find_pool(q, cname, pname, true) : NULL;
    if (!p)
        return;
    struct fq_value *v = pool_view(q, p->obj, c->obj, cname);
    reply(q, 200, v);
    fq_value_free(v);
}

static void create_pool(struct greq *q, const char *cname)
{
    if (authorize(q, "create", FQ_KIND_NODEPOOL) < 0)
        return;
    if (!find_cluster(q, cname, true))
        return;
    struct fq_value *b = body(q);
    if (!b)
        return;
    const struct fq_value *np = fq_map_get(b, "nodePool");
    const char *pname = fq_value_path_str(np, "name", NULL);
    struct fq_err e = {0};
    struct fq_value *pool = NULL;
    if (pname && fq_objstore_get(store(q), FQ_KIND_NODEPOOL, "", pname)) {
        gfail(q, 409, "ALREADY_EXISTS",
              "Already exists: %s/clusters/%s/nodePools/%s.", q->rname, cname,
              pname);
        fq_value_free(b);
        return;
    }
    int rc = fq_gke_pool_from_api(np, cname, q->location, &pool, &e);
    if (rc == 0 && (rc = fq_nodepool_validate(pool, &e)) < 0)
        fq_value_free(pool);
    if (rc < 0) {
        gfail_code(q, rc, e.msg);
    } else {
        char target[256];
        snprintf(target, sizeof(target), "clusters/%s/nodePools/%s", cname,
                 pname);
        if (apply(q, pool) == 0)
            reply_op(q, "CREATE_NODE_POOL", target);
    }
    fq_value_free(b);
}

static void delete_pool(struct greq *q, const char *cname, const char *pname)
{
    if (authorize(q, "delete", FQ_KIND_NODEPOOL) < 0)
        return;
    if (!find_cluster(q, cname, true) || !find_pool(q, cname, pname, true))
        return;
    char target[256];
    snprintf(target, sizeof(target), "clusters/%s/nodePools/%s", cname, pname);
    if (delete_obj(q, FQ_KIND_NODEPOOL, pname) == 0)
        reply_op(q, "DELETE_NODE_POOL", target);
}

/* PUT (update), :setSize, :setAutoscaling: a changed copy of the pool,
 * checked by fq_gke_pool_from_api on the fields the request sets. */
static void change_pool_with(struct greq *q, const char *cname,
                             const char *pname, const char *verb,
                             struct fq_value *b)
{
    const struct fq_object *c = find_cluster(q, cname, true);
    const struct fq_object *p = c ? find_pool(q, cname, pname, true) : NULL;
    if (!p) {
        fq_value_free(b);
        return;
    }
    /* The request's fields, as a GKE NodePool to convert. */
    struct fq_value *np = fq_value_map();
    fq_map_set(np, "name", fq_value_str(pname));
    const char *type = "UPDATE_CLUSTER";
    if (!verb) {
        type = "UPGRADE_NODES";
        struct fq_value *cfg = fq_map_ensure_map(np, "config");
        const struct fq_value *l = fq_value_path(b, "labels.labels");
        const struct fq_value *t = fq_value_path(b, "taints.taints");
        if (l)
            fq_map_set(cfg, "labels", fq_value_clone(l));
        if (t)
            fq_map_set(cfg, "taints", fq_value_clone(t));
        if (fq_map_get(b, "locations"))
            fq_map_set(np, "locations",
                       fq_value_clone(fq_map_get(b, "locations")));
    } else if (!strcmp(verb, "setSize")) {
        type = "SET_NODE_POOL_SIZE";
        const struct fq_value *nc = fq_map_get(b, "nodeCount");
        if (nc)
            fq_map_set(np, "initialNodeCount", fq_value_clone(nc));
    } else if (fq_map_get(b, "autoscaling")) {
        fq_map_set(np, "autoscaling",
                   fq_value_clone(fq_map_get(b, "autoscaling")));
    }
    struct fq_value *conv = NULL;
    struct fq_err e = {0};
    int rc = fq_gke_pool_from_api(np, cname, NULL, &conv, &e);
    if (rc == 0 && verb && !strcmp(verb, "setSize") &&
        !fq_map_get(b, "nodeCount"))
        rc = fq_err_set(&e, FQ_EINVAL, "nodeCount: required");
    struct fq_value *o = NULL;
    if (rc == 0) {
        o = for_update(p->obj);
        struct fq_value *spec = fq_map_ensure_map(o, "spec");
        const struct fq_value *cs = fq_map_get(conv, "spec");
        const char *take[] = {"labels", "taints", "location",
                              "initialNodeCount", "autoscaling"};
        for (size_t i = 0; i < 5; i++) {
            bool wanted = (!verb && i < 2 &&
                           fq_value_path(fq_map_get(np, "config"), take[i])) ||
                          (!verb && i == 2 && fq_map_get(np, "locations")) ||
                          (verb && !strcmp(verb, "setSize") && i == 3) ||
                          (verb && !strcmp(verb, "setAutoscaling") && i == 4);
            if (wanted && fq_map_get(cs, take[i]))
                fq_map_set(spec, take[i],
                           fq_value_clone(fq_map_get(cs, take[i])));
        }
        rc = fq_nodepool_validate(o, &e);
    }
    if (rc < 0) {
        gfail_code(q, rc, e.msg);
        fq_value_free(o);
    } else {
        char target[256];
        snprintf(target, sizeof(target), "clusters/%s/nodePools/%s", cname,
                 pname);
        if (apply(q, o) == 0)
            reply_op(q, type, target);
    }
    fq_value_free(conv);
    fq_value_free(np);
    fq_value_free(b);
}

static void change_pool(struct greq *q, const char *cname, const char *pname,
                        const char *verb)
{
    if (authorize(q, "update", FQ_KIND_NODEPOOL) < 0)
        return;
    struct fq_value *b = body(q);
    if (b)
        change_pool_with(q, cname, pname, verb, b);
}

/* clusters.update: gcloud's `node-pools update --enable-autoscaling`
 * sends desiredNodePoolId with desiredNodePoolAutoscaling; that pair is
 * all flexqd serves of it. */
static void update_cluster(struct greq *q, const char *cname)
{
    if (authorize(q, "update", FQ_KIND_NODEPOOL) < 0)
        return;
    struct fq_value *b = body(q);
    if (!b)
        return;
    const struct fq_value *u = fq_map_get(b, "update");
    const char *pool = fq_value_path_str(u, "desiredNodePoolId", NULL);
    const struct fq_value *as = fq_map_get(u, "desiredNodePoolAutoscaling");
    if (!pool || !as || fq_value_len(u) != 2) {
        gfail(q, 400, "INVALID_ARGUMENT",
              "flexqd serves clusters.update for desiredNodePoolId with "
              "desiredNodePoolAutoscaling only");
        fq_value_free(b);
        return;
    }
    struct fq_value *nb = fq_value_map();
    fq_map_set(nb, "autoscaling", fq_value_clone(as));
    char *p = fq_xstrdup(pool);
    fq_value_free(b);
    change_pool_with(q, cname, p, "setAutoscaling", nb);
    free(p);
}

/* --- operations ------------------------------------------------------------ */

static const struct fq_value *find_op(struct greq *q, const char *name)
{
    for (size_t i = 0; i < OPS_KEPT; i++) {
        const struct fq_value *op = q->g->ops[i];
        if (op && !strcmp(fq_value_path_str(op, "name", ""), name) &&
            !strcmp(fq_value_path_str(op, "project", ""), q->project))
            return op;
    }
    return NULL;
}

static void get_op(struct greq *q, const char *name)
{
    const struct fq_value *op = find_op(q, name);
    if (!op) {
        gfail(q, 404, "NOT_FOUND", "Not found: %s/operations/%s.", q->rname,
              name);
        return;
    }
    reply(q, 200, op);
}

static void list_ops(struct greq *q)
{
    struct fq_value *out = fq_value_map();
    struct fq_value *seq = fq_value_seq();
    for (size_t k = 0; k < OPS_KEPT; k++) {
        const struct fq_value *op = q->g->ops[(q->g->next + k) % OPS_KEPT];
        if (op && !strcmp(fq_value_path_str(op, "project", ""), q->project) &&
            (!strcmp(q->location, "-") ||
             !strcmp(fq_value_path_str(op, "zone", ""), q->location)))
            fq_seq_push(seq, fq_value_clone(op));
    }
    fq_map_set(out, "operations", seq);
    reply(q, 200, out);
    fq_value_free(out);
}

/* --- routing --------------------------------------------------------------- */

static int split(char *s, char **seg)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(s, "/", &save); t;
         t = strtok_r(NULL, "/", &save)) {
        if (n == MAX_SEGS)
            return -1;
        seg[n++] = t;
    }
    return n;
}

static bool is(const struct greq *q, int i, const char *s)
{
    return i < q->n && !strcmp(q->seg[i], s);
}

static void route(struct greq *q)
{
    const char *m = q->method;
    bool get = !strcmp(m, "GET"), post = !strcmp(m, "POST");
    bool del = !strcmp(m, "DELETE"), put = !strcmp(m, "PUT");
    const char *v = q->verb;
    /* /v1/projects/P */
    if (q->n == 3 && get && !v) {
        get_project(q);
        return;
    }
    if (q->n == 5 && is(q, 3, "services") && get && !v) {
        get_service(q, q->seg[4]);
        return;
    }
    if (q->n < 6 || !is(q, 3, "locations")) {
        gfail(q, 404, "NOT_FOUND", "flexqd does not serve %s %s", m,
              fq_http_path(q->r));
        return;
    }
    /* segments from 5 on: clusters[/C[/nodePools[/N]]] | operations[/O] */
    int k = q->n - 5;
    const char *c = k >= 2 ? q->seg[6] : NULL;
    if (is(q, 5, "operations")) {
        /* an operation names the clusters and pools it changed: read as
         * they are (nodepools' verbs), not by any token */
        if ((get || post) &&
            authorize(q, k == 1 ? "list" : "get", FQ_KIND_NODEPOOL) < 0)
            return;
        if (k == 1 && get && !v)
            list_ops(q);
        else if (k == 2 && ((get && !v) || (post && v && !strcmp(v, "wait"))))
            get_op(q, q->seg[6]);
        else
            gfail(q, 501, "UNIMPLEMENTED", "flexqd does not serve %s %s", m,
                  fq_http_path(q->r));
        return;
    }
    if (!is(q, 5, "clusters")) {
        gfail(q, 404, "NOT_FOUND", "flexqd does not serve %s %s", m,
              fq_http_path(q->r));
        return;
    }
    if (get &&
        authorize(q, k == 1 || k == 3 ? "list" : "get", FQ_KIND_NODEPOOL) < 0)
        return;
    if (k == 1 && get && !v)
        list_clusters(q);
    else if (k == 1 && post && !v)
        create_cluster(q);
    else if (k == 2 && get && !v)
        get_cluster(q, c);
    else if (k == 2 && del && !v)
        delete_cluster(q, c);
    else if (k == 2 && put && !v)
        update_cluster(q, c);
    else if (k == 3 && is(q, 7, "nodePools") && get && !v)
        list_pools(q, c);
    else if (k == 3 && is(q, 7, "nodePools") && post && !v)
        create_pool(q, c);
    else if (k == 4 && is(q, 7, "nodePools") && get && !v)
        get_pool(q, c, q->seg[8]);
    else if (k == 4 && is(q, 7, "nodePools") && del && !v)
        delete_pool(q, c, q->seg[8]);
    else if (k == 4 && is(q, 7, "nodePools") &&
             ((put && !v) ||
              (post && v &&
               (!strcmp(v, "setSize") || !strcmp(v, "setAutoscaling")))))
        change_pool(q, c, q->seg[8], v);
    else
        gfail(q, 501, "UNIMPLEMENTED", "flexqd does not serve %s %s", m,
              fq_http_path(q->r));
}

static void handle(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    struct greq q;
    memset(&q, 0, sizeof(q));
    q.d = d;
    q.r = r;
    q.g = ctx;
    q.method = fq_http_method(r);
    q.who.user = "anonymous";
    q.who.admin = true;
    if (d->auth) {
        struct fq_err e = {0};
        int rc = fq_auth_identify(d->auth, fq_http_header(r, "Authorization"),
                                  &q.who, &e);
        if (rc < 0) {
            gfail(&q, 401, "UNAUTHENTICATED",
                  "Request had invalid authentication credentials. %s", e.msg);
            return;
        }
    }
    char *copy = fq_xstrdup(fq_http_path(r));
    q.n = split(copy, q.seg);
    /* The verb of a custom method: ".../nodePools/N:setSize". */
    if (q.n > 0) {
        char *colon = strchr(q.seg[q.n - 1], ':');
        if (colon) {
            *colon = '\0';
            q.verb = colon + 1;
        }
    }
    if (q.n < 3 || !is(&q, 1, "projects")) {
        gfail(&q, 404, "NOT_FOUND", "flexqd does not serve %s %s", q.method,
              fq_http_path(r));
        free(copy);
        return;
    }
    q.project = q.seg[2];
    q.location = is(&q, 3, "locations") && q.n > 4 ? q.seg[4] : "-";
    const char *host = fq_http_header(r, "Host");
    snprintf(q.base, sizeof(q.base), "http://%s/%s/projects/%s/locations/%s",
             host ? host : "localhost", q.seg[0], q.project, q.location);
    snprintf(q.rname, sizeof(q.rname), "projects/%s/locations/%s", q.project,
             q.location);
    route(&q);
    free(copy);
}

void fq_gke_attach(struct fq_daemon *d)
{
    struct fq_gke *g = fq_xcalloc(1, sizeof(*g));
    d->gke = g;
    fq_api_add_route(d->api, "/v1/", FQ_ROUTE_PUBLIC, handle, g);
    fq_api_add_route(d->api, "/v1beta1/", FQ_ROUTE_PUBLIC, handle, g);
}

void fq_gke_detach(struct fq_daemon *d)
{
    struct fq_gke *g = d->gke;
    if (!g)
        return;
    for (size_t i = 0; i < OPS_KEPT; i++)
        fq_value_free(g->ops[i]);
    free(g);
    d->gke = NULL;
}
