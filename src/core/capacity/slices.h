/*
 * capacity/slices.h - making and deleting whole slices (slices.c): the
 * Node objects of a slice in the `sim` cloud, or, with an outside
 * provider, a deletion handed to it (provider_demand.h).
 *
 * What it does not do: decide when (autoscaler.c, provreq.c) or keep the
 * node table's indices (nodes.c, which it calls).
 */
#ifndef FLEXQ_CAPACITY_SLICES_H
#define FLEXQ_CAPACITY_SLICES_H

#include "capacity/state.h"

/*
 * Creates one whole slice (slice_hosts nodes, booting) in `pool`, tagged
 * with `provreq` ("ns/name", may be NULL). Returns the slice id (owned by
 * the node table, valid during the run) or NULL when the pool is invalid.
 */
const char *fq_capacity_add_slice(struct fq_capacity *st, struct fq_engine *e,
                                  struct fq_cap_pool *pool,
                                  const char *provreq);

/* Deletes every node of a slice (all or nothing). */
void fq_capacity_delete_slice(struct fq_capacity *st, struct fq_engine *e,
                              const char *slice, const char *why);

#endif
