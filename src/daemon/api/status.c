/*
 * status.c - the API's errors as Kubernetes Status objects: kind Status,
 * status Failure, the message, the reason and HTTP code of the error's
 * row in err.h, and details (kind, name, the field path as a cause).
 *
 * One writer for every route of the API, so that a client reads an error
 * the same way wherever it comes from. Like every API answer it is
 * deferred until the turn's commit is durable.
 */
#include "api/status.h"

#include "daemon.h"
#include "flexq/buf.h"
#include "flexq/value.h"

void fq_api_error(struct fq_daemon *d, struct fq_http_req *r, int code,
                  const struct fq_err *e, const char *kind_plural,
                  const char *name)
{
    int http = fq_err_http_status(code);
    struct fq_value *st = fq_value_map();
    fq_map_set(st, "kind", fq_value_str("Status"));
    fq_map_set(st, "apiVersion", fq_value_str("v1"));
    fq_map_set(st, "metadata", fq_value_map());
    fq_map_set(st, "status", fq_value_str("Failure"));
    fq_map_set(st, "message",
               fq_value_str(e && e->msg[0] ? e->msg : fq_strerror(code)));
    fq_map_set(st, "reason", fq_value_str(fq_err_reason(code)));
    if (kind_plural || name || (e && e->path[0])) {
        struct fq_value *det = fq_map_ensure_map(st, "details");
        if (name)
            fq_map_set(det, "name", fq_value_str(name));
        if (kind_plural)
            fq_map_set(det, "kind", fq_value_str(kind_plural));
        if (e && e->path[0]) {
            struct fq_value *causes = fq_value_seq();
            struct fq_value *c = fq_value_map();
            fq_map_set(c, "reason", fq_value_str("FieldValueInvalid"));
            fq_map_set(c, "message", fq_value_str(e->msg));
            fq_map_set(c, "field", fq_value_str(e->path));
            fq_seq_push(causes, c);
            fq_map_set(det, "causes", causes);
        }
    }
    fq_map_set(st, "code", fq_value_int(http));
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(st, FQ_JSON_COMPACT, &b);
    fq_daemon_defer_reply(d, r, http, "application/json", &b);
    fq_buf_release(&b);
    fq_value_free(st);
}
