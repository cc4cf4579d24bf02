/*
 * nodepool.h - NodePool objects: their fields, their validation, and the
 * Node objects a pool is made of.
 *
 * A NodePool (flexq.dev/v1alpha1) carries the gcloud node-pool flags, in
 * the shape include/flexq/objects.h documents:
 *
 *   spec:
 *     machineType: ct6e-standard-4t     # --machine-type
 *     tpuTopology: 4x4                  # --tpu-topology
 *     location: us-east5-b              # --location
 *     initialNodeCount: 0               # --num-nodes
 *     autoscaling: {enabled, minNodeCount, maxNodeCount}
 *     reservationAffinity: none         # --reservation-affinity
 *     flexStart: true                   # --flex-start
 *     queuedProvisioning: {enabled: true}  # --enable-queued-provisioning
 *     spot: false                       # --spot
 *     labels: {}  taints: []            # --node-labels, --node-taints
 *
 * GKE's API spelling (spec.config.machineType, spec.config.flexStart,
 * spec.placementPolicy.tpuTopology, spec.config.labels/taints,
 * spec.locations[0]) is read too, so `describe --format='get(config.
 * flexStart)'` can map config.X to spec.X.
 *
 * The capacity controller writes status: nodeCount, readyNodeCount,
 * conditions (e.g. GCE_STOCKOUT-style ScaleUpFailed), cost.
 */
#ifndef FLEXQ_NODEPOOL_H
#define FLEXQ_NODEPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/catalog.h"
#include "flexq/err.h"
#include "flexq/names.h"
#include "flexq/value.h"

#define FQ_NODEPOOL_DEFAULT         "default-pool"
#define FQ_NODEPOOL_DEFAULT_MACHINE "n2-standard-16"
#define FQ_NODEPOOL_DEFAULT_ZONE    "us-east5-b"

/* A pool's fields, decoded. Strings and values borrow from the object. */
struct fq_nodepool_spec {
    const char *name;
    const struct fq_machine *machine;
    const char *machine_type; /* as written, even when unknown */
    const char *topology;     /* NULL when not a TPU slice pool */
    int slice_hosts;          /* nodes per slice: 1, or 4 for 4x4 on 4t */
    bool autoscaling;
    int64_t min_nodes, max_nodes, initial_nodes;
    bool queued;     /* queuedProvisioning.enabled */
    bool flex_start; /* config.flexStart */
    bool spot;       /* config.spot */
    const char *location;
    const struct fq_value *labels; /* config.labels map, or NULL */
    const struct fq_value *taints; /* config.taints seq, or NULL */
};

/*
 * Decodes and checks a NodePool object: unknown machine type (with the
 * closest names), a topology the type cannot form, min above max, bounds
 * that are not whole slices, a queued pool without autoscaling or with
 * initial nodes, flex-start with spot. 0 or FQ_EINVAL with `err` naming
 * the field. `out` may be NULL (validation only).
 */
int fq_nodepool_decode(const struct fq_value *obj, struct fq_nodepool_spec *out,
                       struct fq_err *err);

/*
 * True if `name` can name a Slurm partition: 1..63 of [A-Za-z0-9._-], not
 * starting with '-' (what flexq passes to sbatch -p and matches against
 * sinfo; Slurm itself allows more, but nothing else is needed here).
 */
bool fq_nodepool_slurm_partition_ok(const char *name);

/* Validation only; the API and the CLI call this before a pool is stored. */
int fq_nodepool_validate(const struct fq_value *obj, struct fq_err *err);

/* How the pool's nodes are bought (prices). */
enum fq_provisioning fq_nodepool_provisioning(const struct fq_nodepool_spec *p);

/* USD per node-hour for this pool. */
double fq_nodepool_price(const struct fq_nodepool_spec *p);

/* The labels every node of the pool carries (owned map). */
struct fq_value *fq_nodepool_node_labels(const struct fq_nodepool_spec *p);

/* The taints every node of the pool carries (owned seq). */
struct fq_value *fq_nodepool_node_taints(const struct fq_nodepool_spec *p);

/* True when every key=value of `selector` (a map) is among the pool's node
 * labels; a NULL or empty selector matches every pool. */
bool fq_nodepool_matches(const struct fq_nodepool_spec *p,
                         const struct fq_value *selector);

/*
 * A Node object (owned) for host `index` of slice `slice` of the pool:
 * labels, taints, capacity and allocatable from the catalog, and a Ready
 * condition (False "KubeletNotReady" while booting).
 */
struct fq_value *fq_nodepool_make_node(const struct fq_nodepool_spec *p,
                                       const char *node_name, const char *slice,
                                       int index, bool ready, int64_t now_ms);

/* The same in two parts, for many nodes of a pool: a prototype (owned)
 * of what the pool's nodes share, and a node (owned) made from it. */
struct fq_value *fq_nodepool_node_proto(const struct fq_nodepool_spec *p);
struct fq_value *fq_nodepool_node_from(const struct fq_value *proto,
                                       const struct fq_nodepool_spec *p,
                                       const char *node_name, const char *slice,
                                       int index, bool ready, int64_t now_ms);

/* The NodePool object (owned) of a new cluster's default pool:
 * default-pool of n2-standard-16, autoscaling 1..3, one node. */
struct fq_value *fq_nodepool_default_object(void);

#endif
