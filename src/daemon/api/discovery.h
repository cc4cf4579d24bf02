/*
 * discovery.h - categories, aggregated discovery and /version in
 * Kubernetes' shapes, derived from the kind registry (kinds.h).
 */
#ifndef FLEXQ_DAEMON_DISCOVERY_H
#define FLEXQ_DAEMON_DISCOVERY_H

#include <stdbool.h>

#include "flexq/kinds.h"
#include "flexq/value.h"

/* The discovery categories of a kind ({"all", NULL} for pods, jobs,
 * rayjobs, rayclusters), or NULL. Static. */
const char *const *fq_discovery_categories(enum fq_kind k);

/* Which apidiscovery.k8s.io version an Accept header asks for ("v2",
 * "v2beta1"), or NULL for the legacy documents. */
const char *fq_discovery_accepts(const char *accept);

/* APIGroupDiscoveryList of the core group (core) or of every named group,
 * at apidiscovery.k8s.io/`av`. Owned by the caller. */
struct fq_value *fq_discovery_aggregated(bool core, const char *av);

/* /version: major, minor, gitVersion ... of the Kubernetes release whose
 * API flexqd serves, plus "flexq". Owned by the caller. */
struct fq_value *fq_discovery_version(const char *flexq_version);

#endif
