/*
 * gke.h - GKE's container v1 shapes (Cluster, NodePool) and flexq's
 * objects, converted both ways.
 *
 * flexqd serves the subset of the container v1 REST API that gcloud uses
 * (src/core/capacity/gke.c); this file holds the pure part: a GKE NodePool as
 * gcloud sends it becomes a flexq NodePool object (fields one to one:
 * config.machineType -> spec.machineType, placementPolicy.tpuTopology ->
 * spec.tpuTopology, config.flexStart, queuedProvisioning, autoscaling,
 * config.reservationAffinity, config.spot, config.labels, config.taints,
 * initialNodeCount, locations[0]) and back; a flexq Cluster object (the
 * record of the one GKE cluster a flexqd is) becomes GKE's Cluster.
 *
 * A Cluster object (flexq.dev/v1alpha1, cluster-scoped):
 *
 *   metadata: {name: tpu-cluster}
 *   spec:
 *     project: my-project            # the URL's project
 *     location: us-east5-b           # the URL's location
 *     initialClusterVersion: "1.34"
 *     addonsConfig: {...}            # kept as gcloud sent them
 *     nodePoolDefaults: {...}
 *
 * Limits: names are GKE's (lowercase letters, digits and '-', starting
 * with a letter, at most 40 characters); labels and taints at most
 * FQ_GKE_MAX_ITEMS each.
 */
#ifndef FLEXQ_GKE_H
#define FLEXQ_GKE_H

#include <stdint.h>

#include "flexq/err.h"
#include "flexq/value.h"

#define FQ_GKE_MAX_NAME  40
#define FQ_GKE_MAX_ITEMS 64

/* Is `name` a valid GKE cluster / node pool name? 0 or FQ_EINVAL naming
 * `what` ("nodePool.name"). */
int fq_gke_check_name(const char *what, const char *name, struct fq_err *err);

/* Validates a Cluster object (objects.h calls it): name, spec.project and
 * spec.location. */
int fq_gke_cluster_validate(const struct fq_value *obj, struct fq_err *err);

/*
 * A flexq NodePool object (owned, in *out) from GKE's NodePool `np` as
 * gcloud sends it, for cluster `cluster` at `location` (used when np has
 * no locations). Checks the shape (names, types, enums, caps); the pool's
 * own rules (machine type, topology, bounds) are nodepool.c's, run when
 * it is stored. FQ_EINVAL with the field named ("nodePool.config.taints
 * [0].effect") and nothing in *out on error.
 */
int fq_gke_pool_from_api(const struct fq_value *np, const char *cluster,
                         const char *location, struct fq_value **out,
                         struct fq_err *err);

/* GKE's NodePool (owned) for a stored flexq NodePool object; `self` is
 * its selfLink prefix ("http://H/v1/projects/P/locations/L/clusters/C"),
 * may be NULL. Booleans that are false are left out, as the API does. */
struct fq_value *fq_gke_pool_to_api(const struct fq_value *pool,
                                    const char *self);

/* GKE's Cluster (owned) for a stored Cluster object, its pools (`pools`
 * a seq of GKE NodePools, taken), the HTTPS endpoint ("127.0.0.1:8443")
 * and the CA certificate (base64 of the PEM), each may be NULL. */
struct fq_value *fq_gke_cluster_to_api(const struct fq_value *cluster,
                                       struct fq_value *pools,
                                       const char *endpoint, const char *ca_b64,
                                       const char *self);

/* The project number flexq reports for a project id (stable, 12 digits). */
uint64_t fq_gke_project_number(const char *project);

#endif
