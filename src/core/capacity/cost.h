/*
 * capacity/cost.h - cost (cost.c): accrues node-seconds x price into
 * pools, workloads and queues and writes them to status.
 *
 * What it does not do: price machines (the cloud model, flexq/cloud.h) or
 * change nodes; it reads the node table and the pools.
 */
#ifndef FLEXQ_CAPACITY_COST_H
#define FLEXQ_CAPACITY_COST_H

#include "capacity/state.h"

/* cost.c: accrues node-seconds x price into pools, workloads, queues.
 * fq_cost_pool_flush is called before a pool's node count changes;
 * fq_cost_accrue before anything that changes what a workload's
 * placements are charged (no_pods), fq_cost_accrue_all before prices or
 * pools change. */
void fq_cost_run(struct fq_capacity *st, struct fq_engine *e);

void fq_cost_pool_flush(struct fq_capacity *st, struct fq_engine *e,
                        struct fq_cap_pool *pool);

/* True when a status rewrite of pool p made at time `last` (INT64_MIN:
 * none yet) may be made again now: always, unless the engine's
 * status_every_ms throttles it. */
bool fq_capacity_pool_rewrite_due(const struct fq_capacity *st,
                                  const struct fq_engine *e, int64_t last);

void fq_cost_accrue(struct fq_capacity *st, struct fq_cap_wl *w);

void fq_cost_accrue_all(struct fq_capacity *st);

void fq_cost_release(struct fq_capacity *st);

#endif
