/*
 * auth.h - bearer tokens for flexqd (--tokens FILE).
 *
 * The file has one token per line, `#` starts a comment:
 *
 *   # token              role       user    namespaces
 *   4f9c...e1            admin      alice
 *   77ab...02            developer  bob     team-a,team-b
 *
 * An admin may do anything. A developer may read and write RayJobs, Jobs,
 * Workloads and ConfigMaps, and read logs, Pods, Events, LocalQueues and
 * RayClusters, in its namespaces only. Everyone with a token may read
 * discovery and /version; /healthz needs none.
 */
#ifndef FLEXQ_DAEMON_AUTH_H
#define FLEXQ_DAEMON_AUTH_H

#include <stdbool.h>

#include "flexq/err.h"
#include "flexq/kinds.h"

struct fq_auth;

int fq_auth_load(const char *file, struct fq_auth **out, struct fq_err *err);
void fq_auth_free(struct fq_auth *a);

/* Who a request is; NULL pointer fields when unknown. */
struct fq_principal {
    const char *user;
    bool admin;
};

/*
 * Checks the Authorization header value `authz` (may be NULL). Returns 0
 * and fills *who, or FQ_EUNAUTH with a message.
 */
int fq_auth_identify(const struct fq_auth *a, const char *authz,
                     struct fq_principal *who, struct fq_err *err);

/*
 * May `who` do `verb` ("get", "list", "watch", "create", "update", "patch",
 * "delete") on `kind` in namespace `ns` (NULL: all namespaces, "" for
 * cluster-scoped) and subresource `sub` (NULL or "status", "log")?
 * 0 or FQ_EFORBIDDEN with a message naming the rule.
 */
int fq_auth_allow(const struct fq_auth *a, const struct fq_principal *who,
                  const char *verb, enum fq_kind kind, const char *ns,
                  const char *sub, struct fq_err *err);

#endif
