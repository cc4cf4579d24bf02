/*
 * routes.h - the table of flexqd's non-object routes and who may use them.
 *
 * Every path that is not a Kubernetes object path (the Ray Jobs API, the
 * dashboard, its event stream and pages, the visibility API, estimates,
 * /metrics) is registered with a struct fq_route_def that says what it
 * touches: the access class, the methods it serves and, for routes that
 * serve objects of several namespaces, the kind and the verbs. The API
 * checks the class before the handler runs (fq_route_gate), with the same
 * rules (auth.c) as the object API; a namespaced route then checks each
 * object it shows or changes (fq_api_allow). A route registered without a
 * class is admin-only, so a forgotten declaration fails closed.
 *
 * The table is served at GET /debug/routes (admin) so the security test
 * walks every registered route with a foreign developer token.
 */
#ifndef FLEXQ_DAEMON_ROUTES_H
#define FLEXQ_DAEMON_ROUTES_H

#include <stdbool.h>

#include "api/auth.h"
#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/value.h"

/* Access classes: exactly one per route. */
enum fq_route_access {
    /* Needs an admin token (cluster-wide data); what 0 means. */
    FQ_ROUTE_ADMIN = 0,
    /* No token needed even with --tokens: serves no data (assets,
     * health). */
    FQ_ROUTE_PUBLIC = 1 << 0,
    /* Any valid token: serves no object data (versions). */
    FQ_ROUTE_TOKEN = 1 << 1,
    /* Objects of `kind` in several namespaces: the caller must be allowed
     * the verb in one namespace at least, and the handler checks or
     * filters each object with fq_api_allow / fq_api_may. */
    FQ_ROUTE_NAMESPACED = 1 << 2,
};

struct fq_route_def {
    const char *prefix; /* "/api/jobs"; longest prefix wins */
    int access;         /* enum fq_route_access */
    /* Methods served, comma-separated ("GET,HEAD,POST"); others get 405
     * before the handler. NULL: GET and HEAD. */
    const char *methods;
    /* FQ_ROUTE_NAMESPACED: the kind and the verbs of a read (GET, HEAD)
     * and of a write (any other method) for the first check. */
    enum fq_kind kind;
    const char *read_verb;  /* NULL: "get" */
    const char *write_verb; /* NULL: "update" */
    /* One path the route-walking test requests, with {ns}, {name},
     * {id}, {lq} and {cq} standing for a foreign namespace's objects;
     * NULL: the prefix. */
    const char *example;
};

/*
 * May `who` (identified, or anonymous when `auth` is NULL) call the route
 * `def` with `method`? 0, FQ_EUNSUPPORTED (method not served),
 * FQ_EFORBIDDEN (class or verb refused), with a message in *err.
 */
int fq_route_gate(const struct fq_auth *auth, const struct fq_principal *who,
                  const struct fq_route_def *def, const char *method,
                  struct fq_err *err);

/* The verb a method is on a namespaced route ("get" or "update" unless the
 * route says otherwise). Borrowed. */
const char *fq_route_verb(const struct fq_route_def *def, const char *method);

/* One route as the /debug/routes list shows it; returns owned. */
struct fq_value *fq_route_describe(const struct fq_route_def *def);

#endif
