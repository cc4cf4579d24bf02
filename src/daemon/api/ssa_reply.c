/*
 * ssa_reply.c - the 409 Conflict of a server-side apply, as the API server
 * words it: "Apply failed with N conflict(s): conflict with "MANAGER"
 * using VERSION: .field" and one FieldManagerConflict cause per field,
 * which kubectl prints with its advice on --force-conflicts.
 *
 * What it does not do: decide conflicts (ssa.c does).
 */
#include "api/ssa_reply.h"

#include <string.h>

#include "flexq/buf.h"

void fq_ssa_reply_conflict(struct fq_daemon *d, struct fq_http_req *r,
                           const char *plural, const char *name,
                           const struct fq_value *conflicts)
{
    size_t n = fq_value_len(conflicts);
    struct fq_value *st = fq_value_map();
    fq_map_set(st, "kind", fq_value_str("Status"));
    fq_map_set(st, "apiVersion", fq_value_str("v1"));
    fq_map_set(st, "metadata", fq_value_map());
    fq_map_set(st, "status", fq_value_str("Failure"));
    struct fq_buf msg = FQ_BUF_INIT;
    fq_buf_printf(&msg, "Apply failed with %zu conflict%s: ", n,
                  n == 1 ? "" : "s");
    struct fq_value *causes = fq_value_seq();
    const char *last = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *c = fq_seq_at(conflicts, i);
        const char *m = fq_value_path_str(c, "manager", "");
        const char *v = fq_value_path_str(c, "apiVersion", "");
        const char *f = fq_value_path_str(c, "field", "");
        if (n == 1) {
            fq_buf_printf(&msg, "conflict with \"%s\" using %s: %s", m, v, f);
        } else {
            if (!last || strcmp(last, m) != 0)
                fq_buf_printf(&msg, "%sconflicts with \"%s\" using %s:",
                              last ? "\n" : "", m, v);
            fq_buf_printf(&msg, "\n- %s", f);
        }
        last = m;
        struct fq_value *cause = fq_value_map();
        fq_map_set(cause, "reason", fq_value_str("FieldManagerConflict"));
        fq_map_set(cause, "message",
                   fq_value_strf("conflict with \"%s\" using %s", m, v));
        fq_map_set(cause, "field", fq_value_str(f));
        fq_seq_push(causes, cause);
    }
    fq_map_set(st, "message", fq_value_str(fq_buf_str(&msg)));
    fq_buf_release(&msg);
    fq_map_set(st, "reason", fq_value_str("Conflict"));
    struct fq_value *det = fq_map_ensure_map(st, "details");
    if (name)
        fq_map_set(det, "name", fq_value_str(name));
    if (plural)
        fq_map_set(det, "kind", fq_value_str(plural));
    fq_map_set(det, "causes", causes);
    fq_map_set(st, "code", fq_value_int(409));
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(st, FQ_JSON_COMPACT, &b);
    fq_value_free(st);
    fq_daemon_defer_reply(d, r, 409, "application/json", &b);
    fq_buf_release(&b);
}
