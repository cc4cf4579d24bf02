/*
 * write.c - the API's writes: create, update (and the status
 * subresource), merge / JSON / strategic merge patch, server-side apply,
 * delete, each with dryRun=All, each checked by the engine's validation
 * and answered only once the store's commit is durable.
 *
 * What it does not do: authorisation (the route table checks it before
 * any handler runs) or media type checks (reqgate.c).
 */
#include "api/status.h"

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

/* --- writes ------------------------------------------------------------- */

static int parse_any(struct fq_http_req *r, struct fq_value **out,
                     struct fq_err *err)
{
    size_t len;
    const char *body = fq_http_body(r, &len);
    const char *ct = fq_http_header(r, "Content-Type");
    struct fq_limits lim = fq_limits_default();
    if (len == 0)
        return fq_err_set(err, FQ_EPARSE, "the request has no body");
    if (ct && strstr(ct, "application/vnd.kubernetes.protobuf"))
        return fq_kpb_decode(body, len, out, err);
    if (ct && strstr(ct, "yaml")) {
        struct fq_docs docs = {0};
        int rc = fq_yaml_parse(body, len, "body", &lim, &docs, err);
        if (rc < 0)
            return rc;
        if (docs.n != 1) {
            fq_docs_release(&docs);
            return fq_err_set(err, FQ_EPARSE,
                              "the body must hold exactly one document");
        }
        *out = docs.items[0];
        docs.items[0] = NULL;
        fq_docs_release(&docs);
        return 0;
    }
    return fq_json_parse(body, len, "body", &lim, out, err);
}

/* Parses the body by its media type. A number JSON cannot carry (YAML's
 * .nan or .inf, JSON's 1e999, a protobuf's NaN) is refused at its line
 * and column: the stored object, JSON, would say null. */
static int parse_body(struct fq_http_req *r, struct fq_value **out,
                      struct fq_err *err)
{
    int rc = parse_any(r, out, err);
    if (rc < 0)
        return rc;
    rc = fq_value_refuse_nonfinite(*out, "body", err);
    if (rc < 0) {
        fq_value_free(*out);
        *out = NULL;
    }
    return rc;
}

/* Checks and completes the identity of a body against the path. */
static int fix_identity(const struct target *t, struct fq_value *obj,
                        struct fq_err *err)
{
    if (!obj || obj->type != FQ_V_MAP)
        return fq_err_set(err, FQ_EPARSE, "the body must be a JSON object");
    const char *av = fq_value_path_str(obj, "apiVersion", NULL);
    const char *k = fq_value_path_str(obj, "kind", NULL);
    if (!av)
        fq_map_set(obj, "apiVersion",
                   fq_value_str(fq_kind_api_version(t->kind)));
    if (!k)
        fq_map_set(obj, "kind", fq_value_str(t->ki->name));
    av = fq_value_path_str(obj, "apiVersion", "");
    k = fq_value_path_str(obj, "kind", "");
    if (fq_kind_from_gvk(av, k) != t->kind)
        return fq_err_at(err, FQ_EINVAL, NULL, 0, 0, "kind",
                         "the body is a %s %s, the path is for %s", av, k,
                         t->ki->plural);
    struct fq_value *md = fq_map_ensure_map(obj, "metadata");
    if (md->type != FQ_V_MAP)
        return fq_err_at(err, FQ_EINVAL, NULL, 0, 0, "metadata",
                         "metadata must be a mapping");
    const char *name = fq_value_path_str(obj, FQ_META_NAME, NULL);
    if (t->name) {
        if (name && strcmp(name, t->name) != 0)
            return fq_err_at(err, FQ_EINVAL, NULL, 0, 0, "metadata.name",
                             "the name in the body (\"%s\") does not match "
                             "the path (\"%s\")",
                             name, t->name);
        fq_map_set(md, "name", fq_value_str(t->name));
    }
    if (t->ki->namespaced) {
        const char *ns = fq_value_path_str(obj, FQ_META_NAMESPACE, NULL);
        if (ns && t->ns && strcmp(ns, t->ns) != 0)
            return fq_err_at(err, FQ_EINVAL, NULL, 0, 0, "metadata.namespace",
                             "the namespace of the object (\"%s\") does not "
                             "match the path (\"%s\")",
                             ns, t->ns);
        if (!ns || !*ns)
            fq_map_set(md, "namespace", fq_value_str(api_obj_ns(t)));
    } else {
        fq_map_del(md, "namespace");
    }
    return 0;
}

/* Returns the stored object's current resourceVersion string or "". */
static bool rv_conflicts(const struct fq_object *cur,
                         const struct fq_value *obj)
{
    const char *want = fq_value_path_str(obj, FQ_META_RV, "");
    return *want && cur && strtoull(want, NULL, 10) != cur->rv;
}

static void conflict(struct fq_daemon *d, struct fq_http_req *r,
                     const struct target *t, const char *name)
{
    struct fq_err e = {0};
    fq_err_set(&e, FQ_ECONFLICT,
               "Operation cannot be fulfilled on %s \"%s\": the object has "
               "been modified; please apply your changes to the latest "
               "version and try again",
               api_qualified(t->ki).s, name);
    fq_api_error(d, r, FQ_ECONFLICT, &e, t->ki->plural, name);
}

static void reply_stored(struct fq_daemon *d, struct fq_http_req *r, int status,
                         const struct target *t, const char *ns,
                         const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(d->engine), t->kind, ns, name);
    if (!o) {
        /* Applied and removed within the same call (e.g. finalised). */
        struct fq_buf b = FQ_BUF_INIT;
        fq_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                        "\"status\":\"Success\"}");
        api_reply_buf(d, r, status, &b);
        return;
    }
    api_reply_value(d, r, status, o->obj);
}

static void give_name(struct fq_daemon *d, struct fq_value *obj)
{
    if (fq_value_path_str(obj, FQ_META_NAME, NULL))
        return;
    const char *gen = fq_value_path_str(obj, FQ_META_GENERATE_NAME, NULL);
    if (!gen || !*gen)
        return;
    char suffix[8];
    fq_engine_rand_suffix(d->engine, suffix, 5);
    fq_map_set(fq_map_get(obj, "metadata"), "name",
               fq_value_strf("%s%s", gen, suffix));
}

/* The field manager of a write: ?fieldManager=, else the client's name
 * from its User-Agent ("kubectl", "OpenAPI-Generator"), as Kubernetes
 * defaults it. */
static void field_manager(struct fq_http_req *r, char *buf, size_t size)
{
    const char *fm = fq_http_query(r, "fieldManager");
    const char *ua = fq_http_header(r, "User-Agent");
    if (fm && *fm) {
        snprintf(buf, size, "%s", fm);
        return;
    }
    size_t n = ua ? strcspn(ua, "/ ") : 0;
    snprintf(buf, size, "%.*s", (int)(n ? n : 7), n ? ua : "unknown");
}

/* Records who changed which fields (managedFields) for objects that
 * track them: those written with a fieldManager or applied server-side
 * before. Objects flexq's own CLI writes are not tracked. */
static void track_fields(struct fq_daemon *d, struct fq_http_req *r,
                         const struct fq_object *cur, struct fq_value *obj)
{
    if (!fq_http_query(r, "fieldManager") &&
        !(cur && fq_value_path(cur->obj, FQ_META_MANAGED_FIELDS)))
        return;
    char fm[128], now[40];
    field_manager(r, fm, sizeof(fm));
    fq_time_format(fq_daemon_now(d), now, sizeof(now));
    fq_ssa_update(cur ? cur->obj : NULL, obj, fm, now);
}

/* Applies `obj` (taken) through the engine and answers. */
static void apply_and_reply(struct fq_daemon *d, struct fq_http_req *r,
                            const struct target *t, struct fq_value *obj,
                            int ok_status, bool report)
{
    char *name = fq_xstrdup(fq_meta_name(obj));
    char *ns = fq_xstrdup(t->ki->namespaced ? fq_meta_namespace(obj) : "");
    bool created = false, changed = false;
    struct fq_err e = {0};
    int rc = fq_engine_apply(d->engine, obj, fq_daemon_now(d), &created,
                             &changed, &e);
    if (rc < 0) {
        fq_api_error(d, r, rc, &e, t->ki->plural, name);
    } else {
        if (report)
            fq_http_add_header(r, "X-Flexq-Result",
                               created ? "created" :
                               changed ? "configured" :
                                         "unchanged");
        reply_stored(d, r, created ? 201 : ok_status, t, ns, name);
    }
    free(name);
    free(ns);
}

/*
 * What a create takes from the client, as the API server does: the
 * metadata the server owns (uid, creationTimestamp, generation, a
 * deletion) is its own, and the status of a kind with a status
 * subresource starts empty (Nodes excepted, as in Kubernetes). Otherwise
 * a developer could create a Workload already admitted, a Job already
 * complete, a Workload dated years back to jump its ClusterQueue's FIFO,
 * or an object with another object's uid.
 */
static void drop_server_owned(const struct target *t, struct fq_value *obj)
{
    static const char *const owned[] = {"uid",
                                        "creationTimestamp",
                                        "generation",
                                        "deletionTimestamp",
                                        "deletionGracePeriodSeconds",
                                        "resourceVersion"};
    struct fq_value *md = fq_map_get(obj, "metadata");
    for (size_t i = 0; md && i < sizeof(owned) / sizeof(owned[0]); i++)
        fq_map_del(md, owned[i]);
    if (t->ki->has_status && t->kind != FQ_KIND_NODE)
        fq_map_del(obj, "status");
}

/*
 * A Workload's spec.priority is a number only those who may make priority
 * classes (admins) choose; from anyone else it is the value of the class
 * it names (spec.priorityClassName: a PriorityClass when
 * spec.priorityClassSource says scheduling.k8s.io/priorityclass, else a
 * WorkloadPriorityClass), or 0 without one, as the job framework would
 * set it. Otherwise a developer could create a Workload of priority 2^31
 * and preempt every other namespace's workloads in its cohort.
 */
static void class_priority(struct fq_daemon *d, struct fq_http_req *r,
                           const struct target *t, struct fq_value *obj)
{
    if (t->kind != FQ_KIND_WORKLOAD ||
        fq_api_may(d, r, "create", FQ_KIND_WORKLOADPRIORITYCLASS, ""))
        return;
    struct fq_value *spec = fq_map_get(obj, "spec");
    if (!spec || spec->type != FQ_V_MAP)
        return;
    const char *pc = fq_value_as_str(fq_map_get(spec, "priorityClassName"));
    const char *src = fq_value_as_str(fq_map_get(spec, "priorityClassSource"));
    const struct fq_object *c =
        !pc ? NULL :
              fq_objstore_get(fq_engine_store(d->engine),
                              src && !strcmp(src, "scheduling.k8s.io/"
                                                  "priorityclass") ?
                                  FQ_KIND_PRIORITYCLASS :
                                  FQ_KIND_WORKLOADPRIORITYCLASS,
                              "", pc);
    fq_map_set(spec, "priority",
               fq_value_int(c ? fq_value_path_int(c->obj, "value", 0) : 0));
}

static void do_create(struct fq_daemon *d, struct fq_http_req *r,
                      const struct target *t)
{
    struct fq_value *obj = NULL;
    struct fq_err e = {0};
    int rc = parse_body(r, &obj, &e);
    if (rc == FQ_EUNSUPPORTED) {
        fq_dryrun_unsupported_media(d, r, "application/json, application/yaml");
        return;
    }
    if (rc == 0)
        rc = fix_identity(t, obj, &e);
    if (rc < 0) {
        fq_api_error(d, r, rc, &e, t->ki->plural, NULL);
        fq_value_free(obj);
        return;
    }
    give_name(d, obj);
    const char *name = fq_value_path_str(obj, FQ_META_NAME, NULL);
    if (!name || !*name) {
        fq_err_at(&e, FQ_EINVAL, NULL, 0, 0, "metadata.name",
                  "metadata.name: Required value: name or generateName is "
                  "required");
        fq_api_error(d, r, FQ_EINVAL, &e, t->ki->plural, NULL);
        fq_value_free(obj);
        return;
    }
    const char *ns = t->ki->namespaced ? fq_meta_namespace(obj) : "";
    if (fq_objstore_get(fq_engine_store(d->engine), t->kind, ns, name)) {
        fq_err_set(&e, FQ_EEXIST, "%s \"%s\" already exists",
                   api_qualified(t->ki).s, name);
        fq_api_error(d, r, FQ_EEXIST, &e, t->ki->plural, name);
        fq_value_free(obj);
        return;
    }
    drop_server_owned(t, obj);
    class_priority(d, r, t, obj);
    track_fields(d, r, NULL, obj);
    bool dry = false;
    rc = fq_dryrun_param(r, &dry, &e);
    if (rc < 0) {
        fq_api_error(d, r, rc, &e, t->ki->plural, name);
        fq_value_free(obj);
    } else if (dry) {
        fq_dryrun_reply(d, r, t->ki->plural, NULL, obj, false);
    } else {
        apply_and_reply(d, r, t, obj, 201, false);
    }
}

/* PUT and PATCH of the status subresource: replaces only .status. */
static void write_status(struct fq_daemon *d, struct fq_http_req *r,
                         const struct target *t, const struct fq_object *cur,
                         struct fq_value *body, bool patch)
{
    struct fq_value *obj = fq_value_clone(cur->obj);
    struct fq_err e = {0};
    if (rv_conflicts(cur, body)) {
        conflict(d, r, t, t->name);
        fq_value_free(obj);
        return;
    }
    const struct fq_value *st = fq_map_get(body, "status");
    if (patch) {
        struct fq_value *cst = fq_map_get(obj, "status");
        struct fq_value *merged = cst ? fq_value_clone(cst) : fq_value_map();
        if (st)
            fq_value_merge_patch(&merged, st);
        fq_map_set(obj, "status", merged);
    } else {
        fq_map_set(obj, "status", st ? fq_value_clone(st) : fq_value_map());
    }
    fq_map_del(fq_map_get(obj, "metadata"), "resourceVersion");
    bool dry = false;
    if (fq_dryrun_param(r, &dry, &e) < 0) {
        fq_api_error(d, r, e.code, &e, t->ki->plural, t->name);
        fq_value_free(obj);
        return;
    }
    if (dry) {
        fq_dryrun_reply(d, r, t->ki->plural, cur, obj, true);
        return;
    }
    int rc = fq_objstore_update(fq_engine_store(d->engine), obj, true, NULL,
                                NULL, &e);
    if (rc < 0) {
        fq_api_error(d, r, rc, &e, t->ki->plural, t->name);
        return;
    }
    reply_stored(d, r, 200, t, api_obj_ns(t), t->name);
}

static void do_update(struct fq_daemon *d, struct fq_http_req *r,
                      const struct target *t, bool patch)
{
    struct fq_objstore *os = fq_engine_store(d->engine);
    const char *ct = fq_http_header(r, "Content-Type");
    bool apply = patch && ct && strstr(ct, "apply-patch");
    bool json_patch = patch && ct && strstr(ct, "json-patch+json");
    bool strategic = patch && ct && strstr(ct, "strategic-merge-patch");
    if (strategic && !fq_patch_strategic_supported(t->kind)) {
        /* As for custom resources in Kubernetes: no patch strategies. */
        fq_dryrun_unsupported_media(d, r,
                                    "application/json-patch+json, "
                                    "application/merge-patch+json, "
                                    "application/apply-patch+yaml");
        return;
    }
    bool dry = false;
    struct fq_err de = {0};
    if (fq_dryrun_param(r, &dry, &de) < 0) {
        fq_api_error(d, r, de.code, &de, t->ki->plural, t->name);
        return;
    }
    struct fq_value *body = NULL;
    struct fq_err e = {0};
    int rc = parse_body(r, &body, &e);
    if (rc == FQ_EUNSUPPORTED) {
        fq_dryrun_unsupported_media(d, r, "application/json, application/yaml");
        return;
    }
    if (rc < 0) {
        fq_api_error(d, r, rc, &e, t->ki->plural, t->name);
        return;
    }
    if (!body || body->type != (json_patch ? FQ_V_SEQ : FQ_V_MAP)) {
        api_fail(d, r, FQ_EPARSE,
                 json_patch ? "a JSON patch must be a list of operations" :
                              "the body must be a JSON object");
        fq_value_free(body);
        return;
    }
    const struct fq_object *cur =
        fq_objstore_get(os, t->kind, api_obj_ns(t), t->name);
    if (apply) {
        /* Server-side apply: create or replace, report which. */
        rc = fix_identity(t, body, &e);
        if (rc < 0) {
            fq_api_error(d, r, rc, &e, t->ki->plural, t->name);
            fq_value_free(body);
            return;
        }
        if (rv_conflicts(cur, body)) {
            conflict(d, r, t, t->name);
            fq_value_free(body);
            return;
        }
        if (fq_http_query(r, "fieldManager")) {
            /* kubectl apply --server-side: field ownership, conflicts. */
            char now[40];
            fq_time_format(fq_daemon_now(d), now, sizeof(now));
            struct fq_value *out = NULL, *clash = NULL;
            rc = fq_ssa_apply(
                cur ? cur->obj : NULL, body, fq_http_query(r, "fieldManager"),
                fq_api_query_bool(r, "force"), now, &out, &clash, &e);
            fq_value_free(body);
            if (rc == FQ_ECONFLICT)
                fq_ssa_reply_conflict(d, r, t->ki->plural, t->name, clash);
            else if (rc < 0)
                fq_api_error(d, r, rc, &e, t->ki->plural, t->name);
            fq_value_free(clash);
            if (rc < 0)
                return;
            body = out;
        }
        fq_map_del(fq_map_get(body, "metadata"), "resourceVersion");
        if (!cur) /* a create */
            drop_server_owned(t, body);
        class_priority(d, r, t, body);
        if (dry)
            fq_dryrun_reply(d, r, t->ki->plural, cur, body, false);
        else
            apply_and_reply(d, r, t, body, 200, true);
        return;
    }
    if (!cur) {
        fq_err_set(&e, FQ_ENOTFOUND, "%s \"%s\" not found",
                   api_qualified(t->ki).s, t->name);
        fq_api_error(d, r, FQ_ENOTFOUND, &e, t->ki->plural, t->name);
        fq_value_free(body);
        return;
    }
    if (t->sub) {
        write_status(d, r, t, cur, body, patch);
        fq_value_free(body);
        return;
    }
    struct fq_value *obj;
    if (json_patch || strategic) {
        /* Patched on a copy: a failed patch changes nothing. */
        obj = fq_value_clone(cur->obj);
        rc = json_patch ? fq_patch_json(&obj, body, &e) :
                          fq_patch_strategic(&obj, body, t->kind, &e);
        fq_value_free(body);
        body = NULL;
        if (rc < 0) {
            fq_api_error(d, r, rc, &e, t->ki->plural, t->name);
            fq_value_free(obj);
            return;
        }
    } else if (patch) {
        obj = fq_value_clone(cur->obj);
        fq_value_merge_patch(&obj, body);
    } else {
        obj = body;
        body = NULL;
    }
    bool conflicted = rv_conflicts(cur, body ? body : obj);
    fq_value_free(body);
    if (conflicted) {
        conflict(d, r, t, t->name);
        fq_value_free(obj);
        return;
    }
    rc = fix_identity(t, obj, &e);
    if (rc < 0) {
        fq_api_error(d, r, rc, &e, t->ki->plural, t->name);
        fq_value_free(obj);
        return;
    }
    fq_map_del(fq_map_get(obj, "metadata"), "resourceVersion");
    class_priority(d, r, t, obj);
    track_fields(d, r, cur, obj);
    if (dry)
        fq_dryrun_reply(d, r, t->ki->plural, cur, obj, false);
    else
        apply_and_reply(d, r, t, obj, 200, false);
}

static void do_delete(struct fq_daemon *d, struct fq_http_req *r,
                      const struct target *t)
{
    struct fq_objstore *os = fq_engine_store(d->engine);
    const struct fq_object *cur =
        fq_objstore_get(os, t->kind, api_obj_ns(t), t->name);
    struct fq_err e = {0};
    if (!cur) {
        fq_err_set(&e, FQ_ENOTFOUND, "%s \"%s\" not found",
                   api_qualified(t->ki).s, t->name);
        fq_api_error(d, r, FQ_ENOTFOUND, &e, t->ki->plural, t->name);
        return;
    }
    bool dry = false;
    int rc = fq_dryrun_param(r, &dry, &e);
    if (rc < 0 || dry) {
        /* A dry-run delete answers with the object and keeps it. */
        if (rc < 0)
            fq_api_error(d, r, rc, &e, t->ki->plural, t->name);
        else
            api_reply_value(d, r, 200, cur->obj);
        return;
    }
    struct fq_value *last = fq_value_clone(cur->obj);
    rc = fq_engine_delete(d->engine, t->kind, api_obj_ns(t), t->name,
                          fq_daemon_now(d), &e);
    if (rc < 0)
        fq_api_error(d, r, rc, &e, t->ki->plural, t->name);
    else
        api_reply_value(d, r, 200, last);
    fq_value_free(last);
}

static const char *verb_of(const char *method, const struct target *t,
                           bool watch)
{
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD"))
        return watch ? "watch" : t->name ? "get" : "list";
    if (!strcmp(method, "POST"))
        return "create";
    if (!strcmp(method, "PUT"))
        return "update";
    if (!strcmp(method, "PATCH"))
        return "patch";
    if (!strcmp(method, "DELETE"))
        return "delete";
    return NULL;
}

void api_handle_objects(struct fq_daemon *d, struct fq_http_req *r,
                        const struct fq_principal *who, const char *group,
                        const char *version, char **seg, int n)
{
    struct target t;
    struct fq_err e = {0};
    int rc = api_parse_target(group, version, seg, n, &t, &e);
    if (rc < 0) {
        fq_api_error(d, r, rc, &e, NULL, NULL);
        return;
    }
    const char *method = fq_http_method(r);
    bool watch = fq_api_query_bool(r, "watch");
    const char *verb = verb_of(method, &t, watch);
    if (!verb) {
        api_fail(d, r, FQ_EUNSUPPORTED, "method %s is not allowed here",
                 method);
        return;
    }
    /* A namespaced object path without /namespaces/NS/ means "default"
     * for everything but lists and watches (which then span all
     * namespaces), so a body cannot name another namespace than the one
     * authorised (fix_identity refuses a mismatch). */
    if (t.ki->namespaced && !t.ns && strcmp(verb, "list") != 0 &&
        strcmp(verb, "watch") != 0)
        t.ns = "default";
    const char *authz_ns = t.ki->namespaced ? t.ns : "";
    if (d->auth) {
        rc = fq_auth_allow(d->auth, who, verb, t.kind, authz_ns, t.sub, &e);
        if (rc < 0) {
            fq_api_error(d, r, rc, &e, t.ki->plural, t.name);
            return;
        }
    }
    if (t.sub && strcmp(t.sub, "status") != 0) {
        for (size_t i = 0; i < d->api->nsubs; i++) {
            if (strcmp(d->api->subs[i].name, t.sub) != 0)
                continue;
            struct fq_api_target at = {t.kind, api_obj_ns(&t), t.name, t.sub};
            d->api->subs[i].fn(d, r, &at, d->api->subs[i].ctx);
            return;
        }
        api_fail(d, r, FQ_ENOTFOUND, "the %s subresource is not served here",
                 t.sub);
        return;
    }
    bool one = t.name != NULL;
    if (!strcmp(verb, "create")) {
        if (one) {
            api_fail(d, r, FQ_EUNSUPPORTED,
                     "POST goes to the collection, without a name");
            return;
        }
        do_create(d, r, &t);
        return;
    }
    if (!strcmp(verb, "list") || !strcmp(verb, "watch") ||
        !strcmp(verb, "get")) {
        struct fq_labelsel *ls = NULL, *fs = NULL;
        rc = fq_labelsel_parse(fq_http_query(r, "labelSelector"), false, &ls,
                               &e);
        if (rc == 0)
            rc = fq_labelsel_parse(fq_http_query(r, "fieldSelector"), true, &fs,
                                   &e);
        if (rc < 0) {
            fq_labelsel_free(ls);
            fq_api_error(d, r, rc, &e, t.ki->plural, NULL);
            return;
        }
        if (watch) {
            api_start_watch(d, r, &t, ls, fs);
            return;
        }
        if (!one) {
            api_list_objects(d, r, &t, ls, fs);
        } else {
            const struct fq_object *o = fq_objstore_get(
                fq_engine_store(d->engine), t.kind, api_obj_ns(&t), t.name);
            const char *tv = fq_table_accepts(fq_http_header(r, "Accept"));
            if (o && tv) {
                struct fq_value *tab = fq_table_new(t.kind, tv);
                struct fq_value *cv =
                    fq_convert_kueue(o->obj, t.group, t.version);
                fq_table_add_row(
                    tab, t.kind, cv ? cv : o->obj, fq_daemon_now(d),
                    fq_table_include_of(fq_http_query(r, "includeObject")));
                api_reply_value(d, r, 200, tab);
                fq_value_free(tab);
                fq_value_free(cv);
            } else if (o) {
                struct fq_value *cv =
                    fq_convert_kueue(o->obj, t.group, t.version);
                api_reply_value(d, r, 200, cv ? cv : o->obj);
                fq_value_free(cv);
            } else {
                fq_err_set(&e, FQ_ENOTFOUND, "%s \"%s\" not found",
                           api_qualified(t.ki).s, t.name);
                fq_api_error(d, r, FQ_ENOTFOUND, &e, t.ki->plural, t.name);
            }
        }
        fq_labelsel_free(ls);
        fq_labelsel_free(fs);
        return;
    }
    if (!one) {
        api_fail(d, r, FQ_EUNSUPPORTED, "%s needs an object name in the path",
                 method);
        return;
    }
    if (!strcmp(verb, "delete")) {
        if (t.sub) {
            api_fail(d, r, FQ_EUNSUPPORTED, "cannot delete a subresource");
            return;
        }
        do_delete(d, r, &t);
        return;
    }
    do_update(d, r, &t, !strcmp(verb, "patch"));
}
