/*
 * manifest.c - a manifest stream in, every document validated, all or
 * nothing out (see manifest.h).
 *
 * How it works:
 *   1. fq_yaml_parse splits the stream into documents under the limits
 *      (bytes, depth, documents, aliases, string length, nodes); a syntax
 *      error or a limit ends the read with that one error.
 *   2. A `kind: List` document (what `flexq get -o yaml` prints) is
 *      replaced by its items, so a listing can be applied back.
 *   3. Each document goes through fq_object_validate, which reports every
 *      problem of the document (including unexpanded ${VAR}s).
 *   4. A number JSON cannot carry (YAML's .inf, -.inf, .nan) is an error
 *      at its line and column: a stored object is JSON, which would write
 *      it as null (kubectl refuses such a manifest before sending it).
 *   5. Across documents: the same kind/namespace/name twice is an error at
 *      the second (apply would silently keep only the last).
 *   6. No errors: the documents move to `out`. Any error: they are freed.
 *
 * A namespaced object without metadata.namespace counts as "default" for
 * the duplicate check, which is where apply puts it.
 *
 * It does not check references between objects (a LocalQueue naming a
 * ClusterQueue in another file is fine): those are for the server.
 */
#include "flexq/manifest.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/kinds.h"
#include "flexq/objects.h"
#include "flexq/paths.h"

struct ident {
    enum fq_kind kind;
    const char *ns;
    const char *name;
    const struct fq_value *doc;
};

static void push(struct fq_errlist *errs, const struct fq_err *e)
{
    if (errs)
        fq_errlist_push(errs, e);
}

/* Step 2: replaces each v1 List by its items. Returns 0, or FQ_EINVAL /
 * FQ_ELIMIT with `e` set (then `docs` is left as it was). */
static int expand_lists(struct fq_docs *docs, const char *name,
                        const struct fq_limits *lim, struct fq_err *e)
{
    size_t total = 0;
    bool any = false;
    for (size_t i = 0; i < docs->n; i++) {
        const struct fq_value *d = docs->items[i];
        if (strcmp(fq_value_path_str(d, "kind", ""), "List") != 0 ||
            strcmp(fq_value_path_str(d, "apiVersion", ""), "v1") != 0) {
            total++;
            continue;
        }
        const struct fq_value *items = fq_map_get(d, "items");
        if (items && items->type != FQ_V_SEQ && items->type != FQ_V_NULL)
            return fq_err_at(e, FQ_EINVAL, name, (int)items->line,
                             (int)items->col, "items",
                             "a List's items must be a list");
        total += fq_value_len(items);
        any = true;
    }
    if (!any)
        return 0;
    if (total > lim->max_docs)
        return fq_err_at(e, FQ_ELIMIT, name, 0, 0, NULL,
                         "more than %zu objects in all", lim->max_docs);
    struct fq_value **out = fq_xcalloc(total ? total : 1, sizeof(*out));
    size_t n = 0;
    for (size_t i = 0; i < docs->n; i++) {
        struct fq_value *d = docs->items[i];
        if (strcmp(fq_value_path_str(d, "kind", ""), "List") != 0 ||
            strcmp(fq_value_path_str(d, "apiVersion", ""), "v1") != 0) {
            out[n++] = d;
            continue;
        }
        struct fq_value *items = fq_map_get(d, "items");
        for (size_t j = 0; j < fq_value_len(items); j++) {
            out[n++] = items->u.seq.items[j];
            items->u.seq.items[j] = NULL;
        }
        if (items)
            items->u.seq.n = 0;
        fq_value_free(d);
    }
    free(docs->items);
    docs->items = out;
    docs->n = n;
    docs->cap = total ? total : 1;
    return 0;
}

/* Step 4: duplicates. Returns the number of errors added. */
static size_t check_duplicates(const struct fq_docs *docs, const char *name,
                               struct fq_errlist *errs)
{
    size_t nerr = 0;
    struct ident *ids = fq_xcalloc(docs->n ? docs->n : 1, sizeof(*ids));
    size_t n = 0;
    for (size_t i = 0; i < docs->n; i++) {
        struct ident id;
        if (fq_object_meta(docs->items[i], &id.kind, &id.ns, &id.name) < 0)
            continue;
        if (!fq_kind_info(id.kind)->namespaced)
            id.ns = "";
        else if (!id.ns || !*id.ns)
            id.ns = "default";
        id.doc = docs->items[i];
        for (size_t j = 0; j < n; j++) {
            if (ids[j].kind != id.kind || strcmp(ids[j].ns, id.ns) != 0 ||
                strcmp(ids[j].name, id.name) != 0)
                continue;
            const struct fq_value *at = fq_value_path(id.doc, FQ_META_NAME);
            struct fq_err e;
            memset(&e, 0, sizeof(e));
            fq_err_at(&e, FQ_EINVAL, name, (int)at->line, (int)at->col,
                      "metadata.name",
                      "%s/%s%s%s is defined twice in this file (first at "
                      "line %u)",
                      fq_kind_info(id.kind)->name, id.name,
                      *id.ns ? " in namespace " : "", id.ns, ids[j].doc->line);
            push(errs, &e);
            nerr++;
            break;
        }
        ids[n++] = id;
    }
    free(ids);
    return nerr;
}

struct nonfinite_ctx {
    const char *name;
    struct fq_errlist *errs;
};

static void report_nonfinite(void *ctx, const struct fq_value *num)
{
    struct nonfinite_ctx *c = ctx;
    struct fq_err e;
    fq_err_at(&e, FQ_EINVAL, c->name, (int)num->line, (int)num->col, NULL,
              "%s is not a number JSON can carry (use a finite number, "
              "or quote it as a string)",
              num->u.num.raw ? num->u.num.raw : "this number");
    push(c->errs, &e);
}

/* Reports each number in v that JSON cannot carry (YAML's .inf, .nan),
 * at its line and column; returns how many. */
static size_t check_finite(const struct fq_value *v, const char *name,
                           struct fq_errlist *errs)
{
    struct nonfinite_ctx c = {name, errs};
    return fq_value_nonfinite(v, report_nonfinite, &c);
}

int fq_manifest_read_limits(const char *text, size_t len, const char *name,
                            const struct fq_limits *lim, struct fq_docs *out,
                            struct fq_errlist *errs)
{
    if (!name)
        name = "<input>";
    struct fq_docs docs;
    memset(&docs, 0, sizeof(docs));
    struct fq_err e;
    memset(&e, 0, sizeof(e));
    int rc = fq_yaml_parse(text, len, name, lim, &docs, &e);
    if (rc < 0) {
        push(errs, &e);
        fq_docs_release(&docs);
        return rc;
    }
    rc = expand_lists(&docs, name, lim, &e);
    if (rc < 0) {
        push(errs, &e);
        fq_docs_release(&docs);
        return rc;
    }
    if (docs.n == 0) {
        fq_err_at(&e, FQ_EINVAL, name, 0, 0, NULL, "no objects found");
        push(errs, &e);
        fq_docs_release(&docs);
        return FQ_EINVAL;
    }
    size_t nerr = 0;
    for (size_t i = 0; i < docs.n; i++) {
        struct fq_errlist one;
        fq_errlist_init(&one);
        if (fq_object_validate(docs.items[i], name, &one) < 0 && one.n == 0)
            nerr++; /* cannot happen: a failure always says why */
        for (size_t j = 0; j < one.n; j++)
            push(errs, &one.items[j]);
        nerr += one.n;
        fq_errlist_release(&one);
        nerr += check_finite(docs.items[i], name, errs);
    }
    nerr += check_duplicates(&docs, name, errs);
    if (nerr) {
        fq_docs_release(&docs);
        return FQ_EINVAL;
    }
    *out = docs;
    return 0;
}

int fq_manifest_read(const char *text, size_t len, const char *name,
                     struct fq_docs *out, struct fq_errlist *errs)
{
    struct fq_limits lim = fq_limits_default();
    return fq_manifest_read_limits(text, len, name, &lim, out, errs);
}
