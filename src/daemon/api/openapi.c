/*
 * openapi.c - /openapi/v2 and /openapi/v3 for every kind flexq serves, so
 * that kubectl validates `apply -f` and `create -f` (it looks for the
 * fieldValidation parameter on each kind's PATCH operation and then lets
 * the server validate) and `kubectl explain` finds the fields.
 *
 * How it works: the schemas come from the core (schema.h), one per kind;
 * the paths are derived from the kind registry (kinds.h). /openapi/v3 is
 * an index of group-versions, each pointing at
 * /openapi/v3/api/v1 or /openapi/v3/apis/GROUP/VERSION with a hash of the
 * document (clients cache by it); /openapi/v2 is one Swagger 2.0 document
 * with every kind, answered as JSON. A client that accepts only protobuf
 * for /openapi/v2 (kubectl's discovery does) gets 406 NotAcceptable, as
 * from an API server that cannot produce the asked form, and moves on.
 *
 * Core kinds' paths carry no response schema: kubectl then computes its
 * strategic merge patches from its compiled-in types, which know every
 * merge key, rather than from the short schemas here.
 *
 * What it does not do: protobuf answers, ETags, the full Kubernetes
 * ObjectMeta and PodSpec descriptions.
 */
#include "api/openapi.h"
#include "api/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/discovery.h"
#include "flexq/alloc.h"
#include "flexq/schema.h"

#define META_NAME "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

/* "io.ray.v1.RayJob", "io.k8s.api.core.v1.Pod", "io.k8s.api.batch.v1.Job",
 * "io.x-k8s.kueue.v1beta1.ClusterQueue": Kubernetes' reversed-group
 * names. */
static void schema_name(const struct fq_kind_info *ki, const char *version,
                        struct fq_buf *out)
{
    if (!*ki->group) {
        fq_buf_printf(out, "io.k8s.api.core.%s.%s", version, ki->name);
        return;
    }
    if (!strcmp(ki->group, "batch")) {
        fq_buf_printf(out, "io.k8s.api.batch.%s.%s", version, ki->name);
        return;
    }
    /* reverse the dotted group */
    const char *g = ki->group;
    const char *end = g + strlen(g);
    bool first = true;
    while (end > g) {
        const char *dot = end;
        while (dot > g && dot[-1] != '.')
            dot--;
        fq_buf_printf(out, "%s%.*s", first ? "" : ".", (int)(end - dot), dot);
        first = false;
        end = dot > g ? dot - 1 : g;
    }
    fq_buf_printf(out, ".%s.%s", version, ki->name);
}

static struct fq_value *gvk_list(const struct fq_kind_info *ki,
                                 const char *version)
{
    struct fq_value *l = fq_value_seq();
    struct fq_value *g = fq_value_map();
    fq_map_set(g, "group", fq_value_str(ki->group));
    fq_map_set(g, "kind", fq_value_str(ki->name));
    fq_map_set(g, "version", fq_value_str(version));
    fq_seq_push(l, g);
    return l;
}

static struct fq_value *object_meta(void)
{
    static const char *const str_fields[][2] = {
        {"name", "Name must be unique within a namespace."},
        {"generateName", "Prefix of a name the server generates."},
        {"namespace", "The namespace of the object."},
        {"uid", "Unique in time and space; set by the server."},
        {"resourceVersion", "Version of the object, for optimistic "
                            "concurrency; set by the server."},
        {"creationTimestamp", "When the object was created."},
        {"deletionTimestamp", "When the object will be deleted."},
    };
    struct fq_value *m = fq_value_map();
    fq_map_set(m, "description",
               fq_value_str("ObjectMeta is metadata that all persisted "
                            "resources must have."));
    fq_map_set(m, "type", fq_value_str("object"));
    struct fq_value *p = fq_map_ensure_map(m, "properties");
    for (size_t i = 0; i < sizeof(str_fields) / sizeof(str_fields[0]); i++) {
        struct fq_value *f = fq_value_map();
        fq_map_set(f, "type", fq_value_str("string"));
        fq_map_set(f, "description", fq_value_str(str_fields[i][1]));
        fq_map_set(p, str_fields[i][0], f);
    }
    const char *maps[] = {"labels", "annotations"};
    for (int i = 0; i < 2; i++) {
        struct fq_value *f = fq_value_map();
        fq_map_set(f, "type", fq_value_str("object"));
        struct fq_value *ap = fq_value_map();
        fq_map_set(ap, "type", fq_value_str("string"));
        fq_map_set(f, "additionalProperties", ap);
        fq_map_set(f, "description",
                   fq_value_str(i ? "Unstructured key value data." :
                                    "Labels to organize and select objects."));
        fq_map_set(p, maps[i], f);
    }
    struct fq_value *gen = fq_value_map();
    fq_map_set(gen, "type", fq_value_str("integer"));
    fq_map_set(gen, "format", fq_value_str("int64"));
    fq_map_set(gen, "description",
               fq_value_str("Sequence number of the desired state."));
    fq_map_set(p, "generation", gen);
    const char *lists[] = {"finalizers", "ownerReferences", "managedFields"};
    for (int i = 0; i < 3; i++) {
        struct fq_value *f = fq_value_map();
        fq_map_set(f, "type", fq_value_str("array"));
        struct fq_value *it = fq_value_map();
        fq_map_set(it, "type", fq_value_str(i ? "object" : "string"));
        if (i)
            fq_map_set(it, "x-kubernetes-preserve-unknown-fields",
                       fq_value_bool(true));
        fq_map_set(f, "items", it);
        fq_map_set(p, lists[i], f);
    }
    return m;
}

static struct fq_value *query_param(const char *name, const char *desc, bool v3)
{
    struct fq_value *p = fq_value_map();
    fq_map_set(p, "name", fq_value_str(name));
    fq_map_set(p, "in", fq_value_str("query"));
    fq_map_set(p, "description", fq_value_str(desc));
    if (v3) {
        struct fq_value *s = fq_value_map();
        fq_map_set(s, "type", fq_value_str("string"));
        fq_map_set(s, "uniqueItems", fq_value_bool(true));
        fq_map_set(p, "schema", s);
    } else {
        fq_map_set(p, "type", fq_value_str("string"));
        fq_map_set(p, "uniqueItems", fq_value_bool(true));
    }
    return p;
}

/* One operation: action, gvk, the write parameters, and (for CRD kinds)
 * the response schema. */
static struct fq_value *operation(const struct fq_kind_info *ki,
                                  const char *version, const char *action,
                                  const char *ref, bool v3)
{
    struct fq_value *op = fq_value_map();
    fq_map_set(op, "operationId", fq_value_strf("%s%s", action, ki->name));
    fq_map_set(op, "x-kubernetes-action", fq_value_str(action));
    struct fq_value *g = fq_value_map();
    fq_map_set(g, "group", fq_value_str(ki->group));
    fq_map_set(g, "kind", fq_value_str(ki->name));
    fq_map_set(g, "version", fq_value_str(version));
    fq_map_set(op, "x-kubernetes-group-version-kind", g);
    struct fq_value *params = fq_value_seq();
    bool write = !strcmp(action, "post") || !strcmp(action, "put") ||
                 !strcmp(action, "patch");
    if (write || !strcmp(action, "delete"))
        fq_seq_push(params, query_param("dryRun",
                                        "When present (All), the request is "
                                        "checked but nothing is stored.",
                                        v3));
    if (write) {
        fq_seq_push(params,
                    query_param("fieldManager",
                                "Name of the actor making the change.", v3));
        fq_seq_push(params,
                    query_param("fieldValidation",
                                "Ignore, Warn or Strict: what to do with "
                                "unknown or duplicate fields.",
                                v3));
    }
    if (!strcmp(action, "patch"))
        fq_seq_push(params, query_param("force",
                                        "Force an apply request over "
                                        "other managers' fields.",
                                        v3));
    fq_map_set(op, "parameters", params);
    struct fq_value *ok = fq_value_map();
    fq_map_set(ok, "description", fq_value_str("OK"));
    if (ref && *ki->group && strcmp(ki->group, "batch") != 0) {
        struct fq_value *sch = fq_value_map();
        fq_map_set(sch, "$ref", fq_value_str(ref));
        if (v3) {
            struct fq_value *ct = fq_value_map();
            struct fq_value *mt = fq_value_map();
            fq_map_set(mt, "schema", sch);
            fq_map_set(ct, "application/json", mt);
            fq_map_set(ok, "content", ct);
        } else {
            fq_map_set(ok, "schema", sch);
        }
    }
    struct fq_value *resp = fq_value_map();
    fq_map_set(resp, "200", ok);
    fq_map_set(op, "responses", resp);
    return op;
}

/* Adds the paths of kind ki at version to `paths`. */
static void add_paths(struct fq_value *paths, const struct fq_kind_info *ki,
                      const char *version, const char *ref, bool v3)
{
    struct fq_buf base = FQ_BUF_INIT;
    if (*ki->group)
        fq_buf_printf(&base, "/apis/%s/%s", ki->group, version);
    else
        fq_buf_printf(&base, "/api/%s", version);
    const char *nsp = ki->namespaced ? "/namespaces/{namespace}" : "";
    char *coll = fq_xasprintf("%s%s/%s", fq_buf_str(&base), nsp, ki->plural);
    char *one = fq_xasprintf("%s/{name}", coll);
    char *status = fq_xasprintf("%s/status", one);
    struct fq_value *c = fq_value_map();
    fq_map_set(c, "get", operation(ki, version, "list", NULL, v3));
    fq_map_set(c, "post", operation(ki, version, "post", ref, v3));
    fq_map_set(paths, coll, c);
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "get", operation(ki, version, "get", ref, v3));
    fq_map_set(o, "put", operation(ki, version, "put", ref, v3));
    fq_map_set(o, "patch", operation(ki, version, "patch", ref, v3));
    fq_map_set(o, "delete", operation(ki, version, "delete", NULL, v3));
    fq_map_set(paths, one, o);
    if (ki->has_status) {
        struct fq_value *s = fq_value_map();
        fq_map_set(s, "get", operation(ki, version, "get", ref, v3));
        fq_map_set(s, "put", operation(ki, version, "put", ref, v3));
        fq_map_set(s, "patch", operation(ki, version, "patch", ref, v3));
        fq_map_set(paths, status, s);
    }
    free(coll);
    free(one);
    free(status);
    fq_buf_release(&base);
}

static bool serves(const struct fq_kind_info *ki, const char *group,
                   const char *version)
{
    return !strcmp(ki->group, group) &&
           (!strcmp(ki->version, version) ||
            (ki->alt_version && !strcmp(ki->alt_version, version)));
}

/* The kind's schema with its gvk, under `schemas` as `name`. */
static void add_schema(struct fq_value *schemas, const struct fq_kind_info *ki,
                       const char *version, const char *name,
                       const char *meta_ref)
{
    struct fq_value *s = fq_schema_kind(ki->kind, meta_ref);
    fq_map_set(s, "x-kubernetes-group-version-kind", gvk_list(ki, version));
    fq_map_set(schemas, name, s);
}

struct fq_value *fq_openapi_v3(const char *group, const char *version)
{
    struct fq_value *doc = fq_value_map();
    fq_map_set(doc, "openapi", fq_value_str("3.0.0"));
    struct fq_value *info = fq_map_ensure_map(doc, "info");
    fq_map_set(info, "title", fq_value_str("Kubernetes"));
    fq_map_set(info, "version", fq_value_str("v1.32.0"));
    struct fq_value *paths = fq_map_ensure_map(doc, "paths");
    struct fq_value *comp = fq_map_ensure_map(doc, "components");
    struct fq_value *schemas = fq_map_ensure_map(comp, "schemas");
    size_t n = 0;
    struct fq_buf name = FQ_BUF_INIT, ref = FQ_BUF_INIT;
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        if (!serves(ki, group, version))
            continue;
        fq_buf_reset(&name);
        fq_buf_reset(&ref);
        schema_name(ki, version, &name);
        fq_buf_printf(&ref, "#/components/schemas/%s", fq_buf_str(&name));
        add_schema(schemas, ki, version, fq_buf_str(&name),
                   "#/components/schemas/" META_NAME);
        add_paths(paths, ki, version, fq_buf_str(&ref), true);
        n++;
    }
    fq_buf_release(&name);
    fq_buf_release(&ref);
    if (!n) {
        fq_value_free(doc);
        return NULL;
    }
    fq_map_set(schemas, META_NAME, object_meta());
    return doc;
}

struct fq_value *fq_openapi_v2(void)
{
    struct fq_value *doc = fq_value_map();
    fq_map_set(doc, "swagger", fq_value_str("2.0"));
    struct fq_value *info = fq_map_ensure_map(doc, "info");
    fq_map_set(info, "title", fq_value_str("Kubernetes"));
    fq_map_set(info, "version", fq_value_str("v1.32.0"));
    struct fq_value *paths = fq_map_ensure_map(doc, "paths");
    struct fq_value *defs = fq_map_ensure_map(doc, "definitions");
    struct fq_buf name = FQ_BUF_INIT, ref = FQ_BUF_INIT;
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        const char *vv[2] = {ki->version, ki->alt_version};
        for (int j = 0; j < 2 && vv[j]; j++) {
            fq_buf_reset(&name);
            fq_buf_reset(&ref);
            schema_name(ki, vv[j], &name);
            fq_buf_printf(&ref, "#/definitions/%s", fq_buf_str(&name));
            add_schema(defs, ki, vv[j], fq_buf_str(&name),
                       "#/definitions/" META_NAME);
            add_paths(paths, ki, vv[j], fq_buf_str(&ref), false);
        }
    }
    fq_buf_release(&name);
    fq_buf_release(&ref);
    fq_map_set(defs, META_NAME, object_meta());
    return doc;
}

/* FNV-1a of a document, as the hash clients cache it by. */
static void doc_hash(const struct fq_value *doc, char out[33])
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(doc, FQ_JSON_COMPACT, &b);
    uint64_t h1 = 1469598103934665603ull, h2 = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < b.len; i++) {
        h1 = (h1 ^ (unsigned char)b.data[i]) * 1099511628211ull;
        h2 = (h2 ^ (unsigned char)b.data[i]) * 0x100000001b3ull + i;
    }
    snprintf(out, 33, "%016llX%016llX", (unsigned long long)h1,
             (unsigned long long)h2);
    fq_buf_release(&b);
}

struct fq_value *fq_openapi_v3_index(void)
{
    struct fq_value *out = fq_value_map();
    struct fq_value *paths = fq_map_ensure_map(out, "paths");
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        const char *vv[2] = {ki->version, ki->alt_version};
        for (int j = 0; j < 2 && vv[j]; j++) {
            char *key = *ki->group ?
                            fq_xasprintf("apis/%s/%s", ki->group, vv[j]) :
                            fq_xasprintf("api/%s", vv[j]);
            if (!fq_map_get(paths, key)) {
                struct fq_value *doc = fq_openapi_v3(ki->group, vv[j]);
                char h[33];
                doc_hash(doc, h);
                fq_value_free(doc);
                struct fq_value *e = fq_value_map();
                fq_map_set(e, "serverRelativeURL",
                           fq_value_strf("/openapi/v3/%s?hash=%s", key, h));
                fq_map_set(paths, key, e);
            }
            free(key);
        }
    }
    return out;
}

/* --- /openapi/v2 as protobuf ------------------------------------------------
 *
 * kubectl 1.27 and 1.28 read /openapi/v2 only as gnostic's openapi_v2
 * Document in protobuf, to learn whether the server validates fields
 * (the fieldValidation parameter of each kind's PATCH). The answer
 * carries just that: per path, a PATCH operation with its
 * x-kubernetes-group-version-kind extension and its query parameters.
 * Without definitions kubectl computes strategic merge patches from its
 * compiled-in types, and merge patches for custom resources. */

static void pb_varint(struct fq_buf *b, uint64_t v)
{
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        fq_buf_putc(b, (char)(v ? c | 0x80 : c));
    } while (v);
}

/* Field `f` of wire type 2 (bytes, strings, messages). */
static void pb_bytes(struct fq_buf *b, unsigned f, const char *p, size_t n)
{
    pb_varint(b, (uint64_t)f << 3 | 2);
    pb_varint(b, n);
    fq_buf_append(b, p, n);
}

static void pb_str(struct fq_buf *b, unsigned f, const char *s)
{
    pb_bytes(b, f, s, strlen(s));
}

static void pb_msg(struct fq_buf *b, unsigned f, struct fq_buf *m)
{
    pb_bytes(b, f, m->data ? m->data : "", m->len);
    fq_buf_release(m);
}

/* A QueryParameterSubSchema wrapped in NonBodyParameter, Parameter and
 * ParametersItem. */
static void pb_query_param(struct fq_buf *op, const char *name)
{
    struct fq_buf q = FQ_BUF_INIT, nb = FQ_BUF_INIT, p = FQ_BUF_INIT,
                  it = FQ_BUF_INIT;
    pb_str(&q, 2, "query");
    pb_str(&q, 4, name);
    pb_str(&q, 6, "string");
    pb_varint(&q, 20 << 3 | 0); /* unique_items */
    pb_varint(&q, 1);
    pb_msg(&nb, 3, &q);
    pb_msg(&p, 2, &nb);
    pb_msg(&it, 1, &p);
    pb_msg(op, 8, &it);
}

static void pb_patch_path(struct fq_buf *paths, const char *path,
                          const struct fq_kind_info *ki, const char *version)
{
    struct fq_buf op = FQ_BUF_INIT, ext = FQ_BUF_INIT, any = FQ_BUF_INIT,
                  item = FQ_BUF_INIT, named = FQ_BUF_INIT;
    char *id = fq_xasprintf("patch%s", ki->name);
    pb_str(&op, 5, id);
    free(id);
    pb_query_param(&op, "dryRun");
    pb_query_param(&op, "fieldManager");
    pb_query_param(&op, "fieldValidation");
    pb_query_param(&op, "force");
    char *yaml = fq_xasprintf("group: \"%s\"\nkind: %s\nversion: %s\n",
                              ki->group, ki->name, version);
    pb_str(&any, 2, yaml);
    free(yaml);
    pb_str(&ext, 1, "x-kubernetes-group-version-kind");
    pb_msg(&ext, 2, &any);
    pb_msg(&op, 13, &ext);
    pb_msg(&item, 8, &op);
    pb_str(&named, 1, path);
    pb_msg(&named, 2, &item);
    pb_msg(paths, 2, &named);
}

/* The protobuf Document; appended to out. */
static void openapi_v2_pb(struct fq_buf *out)
{
    struct fq_buf info = FQ_BUF_INIT, paths = FQ_BUF_INIT;
    pb_str(out, 1, "2.0");
    pb_str(&info, 1, "Kubernetes");
    pb_str(&info, 2, "v1.32.0");
    pb_msg(out, 2, &info);
    for (int k = 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        const char *vv[2] = {ki->version, ki->alt_version};
        for (int j = 0; j < 2 && vv[j]; j++) {
            char *p = *ki->group ?
                          fq_xasprintf(
                              "/apis/%s/%s%s/%s/{name}", ki->group, vv[j],
                              ki->namespaced ? "/namespaces/{namespace}" : "",
                              ki->plural) :
                          fq_xasprintf(
                              "/api/%s%s/%s/{name}", vv[j],
                              ki->namespaced ? "/namespaces/{namespace}" : "",
                              ki->plural);
            pb_patch_path(&paths, p, ki, vv[j]);
            free(p);
        }
    }
    pb_msg(out, 8, &paths);
}

/* True if Accept allows JSON (absent, * / *, application/json ...). */
static bool accepts_json(const char *accept)
{
    return !accept || !*accept || strstr(accept, "json") ||
           strstr(accept, "*/*");
}

static void serve(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    const char *path = fq_http_path(r);
    struct fq_err e = {0};
    if (strcmp(fq_http_method(r), "GET") != 0 &&
        strcmp(fq_http_method(r), "HEAD") != 0) {
        fq_err_set(&e, FQ_EUNSUPPORTED,
                   "the server does not allow this "
                   "method on the requested resource");
        fq_api_error(d, r, FQ_EUNSUPPORTED, &e, NULL, NULL);
        return;
    }
    struct fq_value *doc = NULL;
    if (!strcmp(path, "/openapi/v2") || !strcmp(path, "/openapi/v2/")) {
        const char *accept = fq_http_header(r, "Accept");
        if (accept && strstr(accept, "application/com.github.proto-openapi."
                                     "spec.v2")) {
            struct fq_buf b = FQ_BUF_INIT;
            openapi_v2_pb(&b);
            fq_daemon_defer_reply(
                d, r, 200,
                "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                &b);
            fq_buf_release(&b);
            return;
        }
        if (!accepts_json(accept)) {
            fq_err_set(&e, FQ_EUNSUPPORTED,
                       "only application/json is served for /openapi/v2");
            struct fq_buf b = FQ_BUF_INIT;
            fq_buf_printf(&b,
                          "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                          "\"metadata\":{},\"status\":\"Failure\","
                          "\"message\":\"%s\",\"reason\":\"NotAcceptable\","
                          "\"code\":406}",
                          e.msg);
            fq_daemon_defer_reply(d, r, 406, "application/json", &b);
            fq_buf_release(&b);
            return;
        }
        doc = fq_openapi_v2();
    } else if (!strcmp(path, "/openapi/v3") || !strcmp(path, "/openapi/v3/")) {
        doc = fq_openapi_v3_index();
    } else if (!strncmp(path, "/openapi/v3/api/", 16)) {
        doc = fq_openapi_v3("", path + 16);
    } else if (!strncmp(path, "/openapi/v3/apis/", 17)) {
        const char *gv = path + 17;
        const char *slash = strchr(gv, '/');
        if (slash && strlen(gv) < 256) {
            char group[256];
            memcpy(group, gv, (size_t)(slash - gv));
            group[slash - gv] = '\0';
            doc = fq_openapi_v3(group, slash + 1);
        }
    }
    if (!doc) {
        fq_err_set(&e, FQ_ENOTFOUND,
                   "the server could not find the requested resource");
        fq_api_error(d, r, FQ_ENOTFOUND, &e, NULL, NULL);
        return;
    }
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(doc, FQ_JSON_COMPACT, &b);
    fq_value_free(doc);
    fq_daemon_defer_reply(d, r, 200, "application/json", &b);
    fq_buf_release(&b);
}

void fq_openapi_attach(struct fq_daemon *d)
{
    fq_api_add_route(d->api, "/openapi/", 0, serve, NULL);
}
