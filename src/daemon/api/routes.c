/*
 * routes.c - the access check of flexqd's non-object routes (routes.h).
 *
 * How it works: a route's definition says which methods it serves and
 * which class of caller may use it; fq_route_gate answers for one request
 * before its handler runs:
 *
 *   method not in def->methods ............. 405 (FQ_EUNSUPPORTED)
 *   PUBLIC, or no --tokens ................. allowed
 *   TOKEN .................................. any identified token
 *   ADMIN (also a route that declared none)  admin tokens only
 *   NAMESPACED ............................. the verb of the method on
 *                                            def->kind is allowed in one
 *                                            namespace of the token at
 *                                            least (auth.c's rules); the
 *                                            handler then checks each
 *                                            object's namespace
 *
 * Invariants: the same rules as the object API (fq_auth_allow), so a
 * developer token reaches no object outside its namespaces by any path;
 * an unknown access class is treated as ADMIN.
 *
 * What it does not do: match paths (resources.c keeps the table and picks the
 * longest prefix), or identify the caller (auth.c).
 */
#include "api/routes.h"

#include <string.h>

static bool method_in(const char *list, const char *method)
{
    size_t ml = strlen(method);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        if (l == ml && !strncmp(p, method, l))
            return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

static const char *methods_of(const struct fq_route_def *def)
{
    return def->methods ? def->methods : "GET,HEAD";
}

const char *fq_route_verb(const struct fq_route_def *def, const char *method)
{
    bool read = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (read)
        return def->read_verb ? def->read_verb : "get";
    return def->write_verb ? def->write_verb : "update";
}

int fq_route_gate(const struct fq_auth *auth, const struct fq_principal *who,
                  const struct fq_route_def *def, const char *method,
                  struct fq_err *err)
{
    if (!method_in(methods_of(def), method))
        return fq_err_set(err, FQ_EUNSUPPORTED,
                          "method %s is not allowed on %s (it serves %s)",
                          method, def->prefix, methods_of(def));
    if (!auth || def->access == FQ_ROUTE_PUBLIC || who->admin)
        return 0;
    if (!who->id)
        return fq_err_set(err, FQ_EFORBIDDEN, "unknown token");
    switch (def->access) {
    case FQ_ROUTE_TOKEN:
        return 0;
    case FQ_ROUTE_NAMESPACED:
        return fq_auth_allow_somewhere(auth, who, fq_route_verb(def, method),
                                       def->kind, NULL, err);
    default:
        return fq_err_set(err, FQ_EFORBIDDEN,
                          "user \"%s\" (developer) cannot use %s: it shows "
                          "cluster-wide data and needs an admin token",
                          who->user, def->prefix);
    }
}

struct fq_value *fq_route_describe(const struct fq_route_def *def)
{
    static const char *const classes[] = {"admin", "public", "token",
                                          "namespaced"};
    int c = def->access == FQ_ROUTE_PUBLIC     ? 1 :
            def->access == FQ_ROUTE_TOKEN      ? 2 :
            def->access == FQ_ROUTE_NAMESPACED ? 3 :
                                                 0;
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "prefix", fq_value_str(def->prefix));
    fq_map_set(v, "access", fq_value_str(classes[c]));
    fq_map_set(v, "methods", fq_value_str(methods_of(def)));
    if (c == 3) {
        fq_map_set(v, "resource",
                   fq_value_str(fq_kind_info(def->kind)->plural));
        fq_map_set(v, "readVerb", fq_value_str(fq_route_verb(def, "GET")));
        fq_map_set(v, "writeVerb", fq_value_str(fq_route_verb(def, "POST")));
    }
    fq_map_set(v, "example",
               fq_value_str(def->example ? def->example : def->prefix));
    return v;
}
