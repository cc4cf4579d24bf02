/*
 * capacity/autoscaler.h - the cluster autoscaler (autoscaler.c).
 *
 * What it does not do: the ProvisioningRequest lifecycle (provreq.c) or
 * cost (cost.c).
 */
#ifndef FLEXQ_CAPACITY_AUTOSCALER_H
#define FLEXQ_CAPACITY_AUTOSCALER_H

#include "capacity/state.h"

/* autoscaler.c: placement (no_pods), scale-up, backoff, scale-down,
 * stockout fallback. */
void fq_autoscaler_run(struct fq_capacity *st, struct fq_engine *e);

#endif
