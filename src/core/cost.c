/*
 * cost.c - what the nodes cost: node-seconds x price, per pool, per
 * workload and per ClusterQueue (skeleton; filled in below).
 */
#include "capacity.h"

void fq_cost_run(struct fq_capacity *st, struct fq_engine *e)
{
    (void)st;
    (void)e;
}

void fq_cost_pool_flush(struct fq_capacity *st, struct fq_engine *e,
                        struct fq_cap_pool *pool)
{
    (void)st;
    (void)e;
    (void)pool;
}
