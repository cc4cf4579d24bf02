/*
 * api_authz.c - SelfSubjectAccessReview and SelfSubjectReview (see
 * api_authz.h).
 *
 * How it works: both routes are public to the router and authenticate
 * here (so an unknown token is the usual 401 Status). An access review
 * resolves spec.resourceAttributes' resource and group through the kind
 * registry and asks fq_auth_allow, the same check every request passes;
 * the answer is the request with status.allowed (and status.reason when
 * denied). A self review answers the token's user and its role as a
 * group.
 *
 * It does not: evaluate nonResourceAttributes beyond "any identified
 * user may" (flexq has no rules on paths), or serve SubjectAccessReview
 * for other users.
 */
#include "api/api_authz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/status.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/kinds.h"
#include "flexq/ssar_pb.h"

static void answer(struct fq_daemon *d, struct fq_http_req *r, int status,
                   const struct fq_value *v)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(v, FQ_JSON_COMPACT, &b);
    fq_daemon_defer_reply(d, r, status, "application/json", &b);
    fq_buf_release(&b);
}

/* Identifies the caller and parses the body; answers and returns NULL on
 * error. */
static struct fq_value *begin(struct fq_daemon *d, struct fq_http_req *r,
                              struct fq_principal *who, const char *kind)
{
    struct fq_err e = {0};
    who->user = "anonymous";
    who->admin = true;
    if (d->auth && fq_auth_identify(d->auth, fq_http_header(r, "Authorization"),
                                    who, &e) < 0) {
        fq_api_error(d, r, FQ_EUNAUTH, &e, NULL, NULL);
        return NULL;
    }
    if (strcmp(fq_http_method(r), "POST")) {
        fq_err_set(&e, FQ_EUNSUPPORTED, "%s: only POST (create) is served",
                   kind);
        fq_api_error(d, r, FQ_EUNSUPPORTED, &e, NULL, NULL);
        return NULL;
    }
    size_t len = 0;
    const char *body = fq_http_body(r, &len);
    struct fq_value *v = NULL;
    struct fq_limits lim = fq_limits_default();
    const char *ct = fq_http_header(r, "Content-Type");
    if (ct && strstr(ct, "protobuf")) {
        /* A self review carries nothing to read; an access review its
         * attributes (ssar_pb.h). */
        if (!strcmp(kind, "selfsubjectreviews"))
            return fq_value_map();
        if (fq_ssar_from_protobuf(body, len, &v, &e) == 0)
            return v;
        fq_api_error(d, r, e.code ? e.code : FQ_EPARSE, &e, NULL, NULL);
        return NULL;
    }
    if (fq_json_parse(body, len, "body", &lim, &v, &e) < 0 ||
        v->type != FQ_V_MAP) {
        if (v)
            fq_err_set(&e, FQ_EPARSE, "%s: the body must be a JSON object",
                       kind);
        fq_value_free(v);
        fq_api_error(d, r, FQ_EPARSE, &e, NULL, NULL);
        return NULL;
    }
    return v;
}

static void access_review(struct fq_daemon *d, struct fq_http_req *r,
                          struct fq_principal *who, struct fq_value *v)
{
    const struct fq_value *ra = fq_value_path(v, "spec.resourceAttributes");
    bool allowed = true;
    char reason[FQ_ERR_MSG_MAX] = "";
    if (ra && d->auth && !who->admin) {
        const char *res = fq_value_path_str(ra, "resource", "");
        const char *group = fq_value_path_str(ra, "group", "");
        const char *verb = fq_value_path_str(ra, "verb", "get");
        const char *ns = fq_value_path_str(ra, "namespace", NULL);
        const char *sub = fq_value_path_str(ra, "subresource", NULL);
        char *full =
            *group ? fq_xasprintf("%s.%s", res, group) : fq_xstrdup(res);
        enum fq_kind k = fq_kind_lookup(full);
        free(full);
        struct fq_err e = {0};
        if (k == FQ_KIND_NONE) {
            allowed = false;
            snprintf(reason, sizeof(reason),
                     "flexq serves no resource \"%s\" in group \"%s\"", res,
                     group);
        } else {
            const struct fq_kind_info *ki = fq_kind_info(k);
            if (ki->namespaced && ns && !*ns)
                ns = NULL; /* all namespaces */
            if (!ki->namespaced)
                ns = "";
            if (sub && !*sub)
                sub = NULL;
            if (fq_auth_allow(d->auth, who, verb, k, ns, sub, &e) < 0) {
                allowed = false;
                snprintf(reason, sizeof(reason), "%s", e.msg);
            }
        }
    }
    fq_map_set(v, "kind", fq_value_str("SelfSubjectAccessReview"));
    fq_map_set(v, "apiVersion", fq_value_str("authorization.k8s.io/v1"));
    fq_map_ensure_map(v, "metadata");
    struct fq_value *st = fq_map_ensure_map(v, "status");
    fq_map_set(st, "allowed", fq_value_bool(allowed));
    if (!allowed) {
        fq_map_set(st, "denied", fq_value_bool(true));
        fq_map_set(st, "reason", fq_value_str(reason));
    } else if (d->auth) {
        fq_map_set(st, "reason",
                   fq_value_strf("allowed for %s by flexq's %s role", who->user,
                                 who->admin ? "admin" : "developer"));
    }
    answer(d, r, 201, v);
}

static void self_review(struct fq_daemon *d, struct fq_http_req *r,
                        struct fq_principal *who, struct fq_value *v,
                        const char *version)
{
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "kind", fq_value_str("SelfSubjectReview"));
    fq_map_set(o, "apiVersion",
               fq_value_strf("authentication.k8s.io/%s", version));
    fq_map_ensure_map(o, "metadata");
    struct fq_value *ui =
        fq_map_ensure_map(fq_map_ensure_map(o, "status"), "userInfo");
    fq_map_set(ui, "username", fq_value_str(who->user));
    struct fq_value *groups = fq_value_seq();
    fq_seq_push(groups,
                fq_value_str(who->admin ? "flexq:admins" : "flexq:developers"));
    fq_seq_push(groups, fq_value_str(d->auth ? "system:authenticated" :
                                               "system:unauthenticated"));
    fq_map_set(ui, "groups", groups);
    (void)v;
    answer(d, r, 201, o);
    fq_value_free(o);
}

static void handle(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    const char *path = fq_http_path(r);
    struct fq_principal who;
    static const char ssar[] =
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    const char *ver = NULL;
    if (!strcmp(path, "/apis/authentication.k8s.io/v1/selfsubjectreviews"))
        ver = "v1";
    else if (!strcmp(path,
                     "/apis/authentication.k8s.io/v1beta1/selfsubjectreviews"))
        ver = "v1beta1";
    if (strcmp(path, ssar) && !ver) {
        struct fq_err e = {0};
        fq_err_set(&e, FQ_ENOTFOUND,
                   "the server could not find the requested "
                   "resource");
        fq_api_error(d, r, FQ_ENOTFOUND, &e, NULL, NULL);
        return;
    }
    struct fq_value *v = begin(
        d, r, &who, ver ? "selfsubjectreviews" : "selfsubjectaccessreviews");
    if (!v)
        return;
    if (ver)
        self_review(d, r, &who, v, ver);
    else
        access_review(d, r, &who, v);
    fq_value_free(v);
}

void fq_authz_attach(struct fq_daemon *d)
{
    fq_api_add_route(d->api, "/apis/authorization.k8s.io/", FQ_ROUTE_PUBLIC,
                     handle, NULL);
    fq_api_add_route(d->api, "/apis/authentication.k8s.io/", FQ_ROUTE_PUBLIC,
                     handle, NULL);
}
