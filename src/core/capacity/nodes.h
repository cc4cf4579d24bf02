/*
 * capacity/nodes.h - the node table (nodes.c): every Node decoded once,
 * indexed by name, pool, slice and ProvisioningRequest, in node order;
 * first fit over a pool's nodes; the min-heap and node sets the run steps
 * share; the live pods bound to nodes (with pods).
 *
 * What it does not do: decide scaling (autoscaler.c), make or delete
 * slices (slices.c), charge cost or move ProvisioningRequests. When what
 * it holds changes in a way cost or the ProvisioningRequest lifecycle
 * must hear of, it tells them through the hooks in struct fq_capacity
 * (state.h), which those modules fill, so that it includes neither.
 */
#ifndef FLEXQ_CAPACITY_NODES_H
#define FLEXQ_CAPACITY_NODES_H

#include "capacity/state.h"

/* --- for capacity.c's run steps -------------------------------------- */

void fq_capacity_add_resources(const struct fq_value *m, int64_t v[FQ_R_N]);

void fq_capacity_fit_touch(struct fq_cap_node *n);

void fq_capacity_node_free(struct fq_cap_node *n);

void fq_capacity_pods_usage(struct fq_capacity *st, struct fq_cap_node *n);

struct fq_cap_node *fq_capacity_node_made(struct fq_capacity *st,
                                          const struct fq_object *obj,
                                          const struct fq_cap_pool *pool,
                                          const char *slice,
                                          const char *provreq, bool ready,
                                          int64_t ready_at);

void fq_capacity_provreq_touch(struct fq_capacity *st,
                               const struct fq_cap_node *n);

void fq_capacity_node_attach(struct fq_capacity *st, struct fq_cap_node *n);

void fq_capacity_node_gone(struct fq_capacity *st, struct fq_cap_node *n);

void fq_capacity_node_ready(struct fq_capacity *st, struct fq_cap_node *n);

void fq_capacity_pools_free(struct fq_capacity *st);

void fq_capacity_refresh(struct fq_capacity *st, struct fq_engine *e);

void fq_capacity_pods_seed(struct fq_capacity *st, struct fq_engine *e);

/* Records a pod's new state in the bound and unschedulable sets (from
 * on_change; `pod` is NULL when it was deleted). */
void fq_capacity_pod_note(struct fq_capacity *st, const char *ns,
                          const char *name, const struct fq_value *pod);

/* --- the node table ---------------------------------------------------- */

/* The node named `name` (gone ones included until the next run), or
 * NULL. Borrowed. */
struct fq_cap_node *fq_capacity_node(struct fq_capacity *st, const char *name);

/*
 * Nodes in the order a run sees them: those there when it started by
 * name, then those it created, in creation order. Negative, 0 or
 * positive like strcmp.
 */
int fq_capacity_node_order(const struct fq_cap_node *a,
                           const struct fq_cap_node *b);

/* The nodes (not gone) of a slice, of a ProvisioningRequest ("ns/name"),
 * or all of them, in node order. Returns the count; *out is an owned
 * array of borrowed nodes. */
size_t fq_capacity_slice_nodes(struct fq_capacity *st, const char *slice,
                               struct fq_cap_node ***out);

size_t fq_capacity_provreq_nodes(struct fq_capacity *st, const char *key,
                                 struct fq_cap_node ***out);

/* The nodes (not gone) of a slice as the index holds them, in no order
 * (borrowed), or NULL when it has none: for a question about all of
 * them, without the sorted copy. */
const struct fq_cap_nodes *fq_capacity_slice(struct fq_capacity *st,
                                             const char *slice);

size_t fq_capacity_all_nodes(struct fq_capacity *st, struct fq_cap_node ***out);

/* Whether a ProvisioningRequest has a node that is not gone. */
bool fq_capacity_provreq_has_nodes(struct fq_capacity *st, const char *key);

/*
 * Sets a node's placements from a status.placements sequence (no_pods
 * mode): pl, used, busy, the placement index, cost and the dirty marks
 * follow. `placements` is borrowed.
 */
void fq_capacity_node_usage(struct fq_capacity *st, struct fq_cap_node *n,
                            const struct fq_value *placements);

/*
 * The same for the usual changes, without decoding the other placements:
 * `entry` (borrowed) is status.placements[k] after the caller added pods
 * to it (k == n->npl: a new last entry); `drop` says which placements
 * the caller removed (n->npl flags). Each falls back to decoding
 * `placements` (the whole sequence after the change) when the node held
 * nothing before or the shapes disagree.
 */
void fq_capacity_node_place(struct fq_capacity *st, struct fq_cap_node *n,
                            size_t k, const struct fq_value *entry,
                            const struct fq_value *placements);

void fq_capacity_node_drop(struct fq_capacity *st, struct fq_cap_node *n,
                           const bool *drop, const struct fq_value *placements);

/* Sets a node's unneeded-since time (the stored annotation is the
 * caller's); `look_again` marks it for scale-down. */
void fq_capacity_node_unneeded(struct fq_capacity *st, struct fq_cap_node *n,
                               int64_t t, bool look_again);

/* After the caller wrote node `n` to the store so that it decodes to what
 * `n` holds: takes the stored resourceVersion, so that the next run does
 * not decode it again. */
void fq_capacity_node_stored(struct fq_capacity *st, struct fq_engine *e,
                             struct fq_cap_node *n);

/*
 * First fit: the first index >= `from` in p->up of a node a group with
 * per-pod requests `req` and no ProvisioningRequest may use (Ready, not
 * gone, not a request's node of a queued pool) with room for at least one
 * pod, or p->up.n when there is none.
 */
size_t fq_capacity_first_fit(struct fq_cap_pool *p, size_t from,
                             const int64_t req[FQ_R_N]);

/* Marks a node for the scale-down step of this run or the next. */
void fq_capacity_sd_mark(struct fq_capacity *st, struct fq_cap_node *n);

/* A ProvisioningRequest ("ns/name") changed in the store (by anyone, now
 * or since the last run): whether its nodes are booked may have too. */
void fq_capacity_provreq_written(struct fq_capacity *st, const char *key);
/* The same, for a key whose fq_smap_hash is `hash`. */
void fq_capacity_provreq_written_h(struct fq_capacity *st, const char *key,
                                   uint64_t hash);

/* --- the heap and node sets -------------------------------------------- */

/* The heap (nodes.c). push copies key. top returns NULL when empty. */
void fq_capacity_heap_push(struct fq_cap_heap *h, int64_t t, const char *key,
                           uint64_t stamp);

const struct fq_cap_hent *fq_capacity_heap_top(const struct fq_cap_heap *h);

void fq_capacity_heap_pop(struct fq_cap_heap *h);

/* Drops (and frees) the entries `keep` says no to, in one pass: for a
 * heap whose stale entries pile up faster than they reach the top. */
void fq_capacity_heap_filter(struct fq_cap_heap *h,
                             bool (*keep)(void *ctx,
                                          const struct fq_cap_hent *ent),
                             void *ctx);

void fq_capacity_heap_free(struct fq_cap_heap *h);

/* Node sets (nodes.c): add at the end, remove one (order not kept),
 * sort in node order. */
void fq_capacity_nodes_add(struct fq_cap_nodes *s, struct fq_cap_node *n);

void fq_capacity_nodes_remove(struct fq_cap_nodes *s,
                              const struct fq_cap_node *n);

void fq_capacity_nodes_sort(struct fq_cap_nodes *s);

/* --- resources and pods ------------------------------------------------ */

/* Per-pod requests of a pod template ({spec: {containers: ...}}). */
void fq_capacity_pod_requests(const struct fq_value *tmpl, int64_t req[FQ_R_N]);

/* How many pods with `req` fit in `free` (INT64_MAX when req is zero). */
int64_t fq_capacity_fits(const int64_t free_[FQ_R_N],
                         const int64_t req[FQ_R_N]);

/* Hosts of a machine type now in use by non-flex pools (on-demand stock)
 * or by flex pools (flex stock). */
int64_t fq_capacity_hosts_in_use(struct fq_capacity *st, const char *machine,
                                 bool flex);

/* The unschedulable pending pods (see struct fq_capacity) in key order.
 * Returns the count; *out is an owned array of borrowed objects. */
size_t fq_capacity_unsched(struct fq_capacity *st, struct fq_engine *e,
                           const struct fq_object ***out);

#endif
