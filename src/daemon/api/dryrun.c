/*
 * dryrun.c - ?dryRun=All for the API's writes (kubectl --dry-run=server,
 * kubectl diff): the request is parsed, patched and validated as a real
 * one, and answered with the object as it would be stored, but nothing is
 * stored and nothing reaches the engine (no admission, no controller).
 *
 * How it works: write.c runs every check it runs for a real write, then,
 * when fq_dryrun_param said so, calls fq_dryrun_reply instead of the
 * engine. The preview keeps what the server owns from the stored object
 * (uid, creationTimestamp, resourceVersion, status) and bumps generation
 * when spec changes, as the real write would.
 *
 * What it does not do: run the controllers' defaulting (a dry-run create
 * shows the object as posted plus server metadata).
 */
#include "api/dryrun.h"
#include "api/http.h"
#include "api/status.h"
#include "daemon.h"

#include <stdio.h>
#include <string.h>

#include "flexq/objects.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

/* DELETE carries its options in the body (kubectl delete --dry-run=server
 * sends {"kind":"DeleteOptions","dryRun":["All"]}): the first dryRun
 * value there, or NULL. */
static const char *body_dry_run(struct fq_http_req *r, char *buf, size_t size)
{
    size_t len;
    const char *body = fq_http_body(r, &len);
    if (strcmp(fq_http_method(r), "DELETE") != 0 || !len)
        return NULL;
    struct fq_limits lim = fq_limits_default();
    struct fq_value *opts = NULL;
    if (fq_json_parse(body, len, "body", &lim, &opts, NULL) < 0)
        return NULL;
    const struct fq_value *dr = fq_map_get(opts, "dryRun");
    const char *v = fq_value_as_str(fq_seq_at(dr, 0));
    if (v)
        snprintf(buf, size, "%s", v);
    fq_value_free(opts);
    return v ? buf : NULL;
}

int fq_dryrun_param(struct fq_http_req *r, bool *dry, struct fq_err *err)
{
    char buf[64];
    const char *v = fq_http_query(r, "dryRun");
    *dry = false;
    if (!v)
        v = body_dry_run(r, buf, sizeof(buf));
    if (!v)
        return 0;
    if (strcmp(v, "All") != 0)
        return fq_err_at(err, FQ_EINVAL, NULL, 0, 0, "dryRun",
                         "dryRun: Unsupported value: \"%s\": supported "
                         "values: \"All\"",
                         v);
    *dry = true;
    return 0;
}

static void keep(struct fq_value *md, const struct fq_value *cur_md,
                 const char *key)
{
    const struct fq_value *v = fq_map_get(cur_md, key);
    if (v)
        fq_map_set(md, key, fq_value_clone(v));
}

void fq_dryrun_reply(struct fq_daemon *d, struct fq_http_req *r,
                     const char *plural, const struct fq_object *cur,
                     struct fq_value *obj, bool status_only)
{
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    int rc = fq_object_validate(obj, NULL, &errs);
    if (rc < 0 || errs.n > 0) {
        struct fq_err e = errs.n ? errs.items[0] : (struct fq_err){0};
        if (!errs.n)
            fq_err_set(&e, FQ_EINVAL, "invalid object");
        fq_api_error(d, r, e.code ? e.code : FQ_EINVAL, &e, plural,
                     fq_value_path_str(obj, FQ_META_NAME, NULL));
        fq_errlist_release(&errs);
        fq_value_free(obj);
        return;
    }
    fq_errlist_release(&errs);
    struct fq_err se = {0};
    if (fq_kind_from_gvk(fq_value_path_str(obj, "apiVersion", ""),
                         fq_value_path_str(obj, "kind", "")) ==
            FQ_KIND_SECRET &&
        fq_secret_defaults(obj, cur ? cur->obj : NULL, &se) < 0) {
        fq_api_error(d, r, se.code, &se, plural,
                     fq_value_path_str(obj, FQ_META_NAME, NULL));
        fq_value_free(obj);
        return;
    }
    struct fq_value *md = fq_map_ensure_map(obj, "metadata");
    if (cur) {
        const struct fq_value *cmd = fq_map_get(cur->obj, "metadata");
        keep(md, cmd, "uid");
        keep(md, cmd, "creationTimestamp");
        keep(md, cmd, "resourceVersion");
        keep(md, cmd, "generation");
        bool spec_changed = !fq_value_equal(fq_map_get(cur->obj, "spec"),
                                            fq_map_get(obj, "spec"));
        if (spec_changed && !status_only)
            fq_map_set(
                md, "generation",
                fq_value_int(
                    fq_value_path_int(cur->obj, FQ_META_GENERATION, 1) + 1));
        if (!status_only) {
            const struct fq_value *st = fq_map_get(cur->obj, "status");
            if (st)
                fq_map_set(obj, "status", fq_value_clone(st));
            else
                fq_map_del(obj, "status");
        }
    } else {
        char ts[40];
        fq_time_format(fq_daemon_now(d), ts, sizeof(ts));
        fq_map_set(md, "creationTimestamp", fq_value_str(ts));
        fq_map_set(md, "generation", fq_value_int(1));
        fq_map_del(md, "resourceVersion");
    }
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(obj, FQ_JSON_COMPACT, &b);
    fq_value_free(obj);
    fq_daemon_defer_reply(d, r, cur ? 200 : 201, "application/json", &b);
    fq_buf_release(&b);
}

void fq_dryrun_unsupported_media(struct fq_daemon *d, struct fq_http_req *r,
                                 const char *accepted)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_printf(&b,
                  "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                  "\"status\":\"Failure\",\"message\":\"the body of the "
                  "request was in an unknown format - accepted media types "
                  "include: %s\",\"reason\":\"UnsupportedMediaType\","
                  "\"code\":415}",
                  accepted);
    fq_daemon_defer_reply(d, r, 415, "application/json", &b);
    fq_buf_release(&b);
}
