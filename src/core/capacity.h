/*
 * capacity.h - the capacity controller's state, shared by its files.
 *
 * The "capacity" controller (capacity.c) plays the cloud and the cluster
 * autoscaler: node pools and their nodes (nodepool.c), the `sim` cloud
 * (cloud.c), scale-up and scale-down and, in no_pods mode, the placement of
 * admitted workloads (autoscaler.c), the ProvisioningRequest lifecycle
 * (provreq.c) and cost (cost.c). Each run takes a snapshot of pools and
 * nodes (struct fq_capacity: pools[], nodes[]), lets each part act on it
 * and on the store, and gathers the earliest time it must run again.
 *
 * Everything that must survive a restart is in stored objects: node boot
 * deadlines and idle times in Node annotations, placements in Node status,
 * request deadlines in ProvisioningRequest status, cost in status. Only the
 * autoscaler's per-pool backoff lives in memory (as in the real cluster
 * autoscaler, which also forgets it on restart).
 */
#ifndef FLEXQ_CAPACITY_H
#define FLEXQ_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cloud.h"
#include "flexq/engine.h"
#include "nodepool.h"
#include "smap.h"

/* Node annotations flexq keeps for itself. */
#define FQ_ANN_READY_AT "flexq.dev/ready-at"
#define FQ_ANN_UNNEEDED "flexq.dev/unneeded-since"
/* Workload annotation read by the kueue controller (policy
 * flavor_failure_cooldown): "<flavor>=<until RFC 3339>[,...]". */
#define FQ_ANN_AVOID_FLAVORS "flexq.dev/avoid-flavors"
#define FQ_ANN_CONSUME_PROVREQ \
 "autoscaling.x-k8s.io/consume-provisioning-request"
#define FQ_ANN_PROVREQ_CLASS "autoscaling.x-k8s.io/provisioning-class-name"

enum {
    FQ_R_CPU,
    FQ_R_MEM,
    FQ_R_TPU,
    FQ_R_GPU,
    FQ_R_PODS,
    FQ_R_N
};

struct fq_cap_pool {
    char *name;
    struct fq_value *obj; /* owned copy; `spec` borrows from it */
    struct fq_nodepool_spec spec;
    bool ok;                 /* decoded without error */
    struct fq_value *labels; /* owned: the labels its nodes carry */
    int64_t nodes, ready;
    bool failed_scale_up;  /* the last scale-up attempt was refused */
    char fail_reason[256]; /* its message */
};

/* One no_pods placement on a node: `count` pods of `podset` of workload
 * `wl` ("ns/name"), each asking for `req`. */
struct fq_cap_place {
    char *wl, *podset;
    int64_t count;
    int64_t req[FQ_R_N];
};

struct fq_cap_node {
    char *name, *pool, *slice;
    uint64_t rv;   /* of the stored Node this was decoded from; 0 = stale */
    char *provreq; /* "ns/name" or NULL */
    bool ready;
    int64_t ready_at;       /* FQ_NEVER when ready */
    int64_t unneeded_since; /* FQ_NEVER when busy or unset */
    int64_t alloc[FQ_R_N], used[FQ_R_N];
    int busy;                /* placements (no_pods) or bound live pods */
    bool gone;               /* deleted during this run */
    struct fq_cap_place *pl; /* status.placements, decoded (no_pods) */
    size_t npl;
    int64_t charged_at; /* cost.c: placements charged up to here */
};

/* A live pod bound to a node: where, and what it asks for. */
struct fq_cap_pod {
    char *node;
    int64_t req[FQ_R_N];
};

/* A watched workload: whether it is active (admitted, not finished, not
 * evicted) and whether the autoscaler found nothing left to do for it
 * (placed, ready, PodsReady=True); any change of it clears `settled`. */
struct fq_cap_watch {
    bool active, settled;
};

struct fq_cap_backoff {
    char *pool;
    int fails;
    int64_t until, last_fail;
};

struct fq_capacity {
    struct fq_cloud *cloud;
    uint64_t model_rv; /* of the CapacityModel the cloud came from */
    bool model_seen, model_dirty;
    bool bootstrapped; /* default-pool decision taken */
    struct fq_cap_backoff *bo;
    size_t nbo, capbo;
    int64_t wake; /* earliest wanted run, FQ_NEVER when none */
    int64_t now;
    /* snapshot, rebuilt each run; a node whose resourceVersion did not
     * change keeps its decoded entry from the run before */
    struct fq_cap_pool *pools;
    size_t npools;
    struct fq_cap_node *nodes;
    size_t nnodes, capnodes;
    void *cost_state; /* cost.c's in-memory charges */
    /* Workloads the autoscaler must look at: those with an admission or
     * PodsReady=True that have not finished ("ns/name" -> struct
     * fq_cap_watch); kept by on_change so a run visits neither every
     * pending workload of a deep queue nor every finished one. */
    struct fq_smap watch;
    bool watch_seeded;
    /* Workloads that stopped being active since the last run ("ns/name"
     * set): their placements go; all placements are checked when
     * unplace_all (the first run). */
    struct fq_smap stopped;
    bool unplace_all;
    /* With pods: the live pods bound to a node ("ns/name" -> struct
     * fq_cap_pod) and the pending ones the binder found unschedulable
     * ("ns/name" set), kept by on_change so that a run does not walk
     * every pod, finished ones included. */
    struct fq_smap pods, unsched;
    bool pods_seeded;
    /* counters, for tests and the dashboard */
    uint64_t scale_ups, scale_up_failures, scale_downs, slices_created;
};

extern const struct fq_controller_ops fq_capacity_controller;

/* --- helpers shared by the capacity files (capacity.c) --------------- */

/* Asks for a run at `t` (kept if earlier than what is asked already). */
void fq_capacity_wake(struct fq_capacity *st, int64_t t);

/* Scales a control-plane delay by the engine's time_scale. */
int64_t fq_capacity_scaled(struct fq_engine *e, int64_t ms);

struct fq_cap_pool *fq_capacity_pool(struct fq_capacity *st, const char *name);

/* fq_nodepool_matches with the pool's labels computed once per run. */
bool fq_capacity_pool_matches(const struct fq_cap_pool *p,
                              const struct fq_value *selector);

/*
 * Creates one whole slice (slice_hosts nodes, booting) in `pool`, tagged
 * with `provreq` ("ns/name", may be NULL). Returns the slice id (owned by
 * the snapshot) or NULL when the pool is invalid.
 */
const char *fq_capacity_add_slice(struct fq_capacity *st, struct fq_engine *e,
                                  struct fq_cap_pool *pool,
                                  const char *provreq);

/* Deletes every node of a slice (all or nothing). */
void fq_capacity_delete_slice(struct fq_capacity *st, struct fq_engine *e,
                              const char *slice, const char *why);

/* Recomputes a node's used resources and busy count from a
 * status.placements sequence (no_pods mode). */
void fq_capacity_node_usage(struct fq_cap_node *n,
                            const struct fq_value *placements);

/* Per-pod requests of a pod template ({spec: {containers: ...}}). */
void fq_capacity_pod_requests(const struct fq_value *tmpl, int64_t req[FQ_R_N]);

/* How many pods with `req` fit in `free` (INT64_MAX when req is zero). */
int64_t fq_capacity_fits(const int64_t free_[FQ_R_N],
                         const int64_t req[FQ_R_N]);

/* Hosts of a machine type now in use by non-flex pools (on-demand stock)
 * or by flex pools (flex stock). */
int64_t fq_capacity_hosts_in_use(struct fq_capacity *st, const char *machine,
                                 bool flex);

/* Condition helpers over a status map: returns the condition or NULL. */
const struct fq_value *fq_capacity_cond(const struct fq_value *status,
                                        const char *type);
bool fq_capacity_cond_true(const struct fq_value *status, const char *type);
/* The stockout backoff of pool `pool`, added (no failures, until -1) when
 * the pool has none yet (autoscaler.c). */
struct fq_cap_backoff *fq_capacity_backoff(struct fq_capacity *st,
                                           const char *pool);
/* Sets a condition (lastTransitionTime moves only when status flips).
 * Returns true when anything changed. */
bool fq_capacity_cond_set(struct fq_value *status, const char *type,
                          const char *cstatus, const char *reason,
                          const char *message, int64_t now);
/* lastTransitionTime of a condition in ms, or -1. */
int64_t fq_capacity_cond_time(const struct fq_value *status, const char *type);

/*
 * The watched workloads (see struct fq_capacity) in key order, only those
 * not settled when `unsettled` is set. Returns the count; *out is an
 * owned array of borrowed objects.
 */
size_t fq_capacity_watched(struct fq_capacity *st, struct fq_engine *e,
                           bool unsettled, const struct fq_object ***out);

/* The unschedulable pending pods (see struct fq_capacity) in key order.
 * Returns the count; *out is an owned array of borrowed objects. */
size_t fq_capacity_unsched(struct fq_capacity *st, struct fq_engine *e,
                           const struct fq_object ***out);

/* Marks a watched workload settled (see struct fq_cap_watch). */
void fq_capacity_settled(struct fq_capacity *st, const char *ns,
                         const char *name);

/* Admitted, with an admission, not finished, not being evicted. */
bool fq_capacity_workload_active(const struct fq_value *wl);

/* --- the parts (one file each) ----------------------------------------- */

/* provreq.c: every ProvisioningRequest one step along its lifecycle. */
void fq_provreq_reconcile(struct fq_capacity *st, struct fq_engine *e);

/* autoscaler.c: placement (no_pods), scale-up, backoff, scale-down,
 * stockout fallback. */
void fq_autoscaler_run(struct fq_capacity *st, struct fq_engine *e);

/* cost.c: accrues node-seconds x price into pools, workloads, queues.
 * fq_cost_pool_flush is called before a pool's node count changes. */
void fq_cost_run(struct fq_capacity *st, struct fq_engine *e);
void fq_cost_pool_flush(struct fq_capacity *st, struct fq_engine *e,
                        struct fq_cap_pool *pool);
void fq_cost_release(struct fq_capacity *st);

#endif
