/*
 * manifest.c - a manifest stream in, every document validated, all or
 * nothing out (see manifest.h).
 *
 * How it works:
 *   1. fq_yaml_parse splits the stream into documents under the limits
 *      (bytes, depth, documents, aliases, string length, nodes); a syntax
 *      error or a limit ends the read with that one error.
 *   2. Each document goes through fq_object_validate, which reports every
 *      problem of the document (including unexpanded ${VAR}s).
 *   3. Across documents: the same kind/namespace/name twice is an error at
 *      the second (apply would silently keep only the last).
 *   4. No errors: the documents move to `out`. Any error: they are freed.
 *
 * A namespaced object without metadata.namespace counts as "default" for
 * the duplicate check, which is where apply puts it.
 *
 * It does not check references between objects (a LocalQueue naming a
 * ClusterQueue in another file is fine): those are for the server.
 */
#include "flexq/manifest.h"

#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/kinds.h"
#include "flexq/objects.h"

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

/* Step 3: duplicates. Returns the number of errors added. */
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
            const struct fq_value *at = fq_value_path(id.doc, "metadata.name");
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
