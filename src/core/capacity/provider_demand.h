/*
 * capacity/provider_demand.h - the autoscaler's decisions for a provider
 * outside the core (provider_demand.c), written as requests on the
 * NodePool, and its answers read back (the protocol is
 * capacity/provider_protocol.h).
 *
 * What it does not do: make or delete Nodes itself (the provider does and
 * reports them), or move a ProvisioningRequest along its lifecycle
 * (provreq.c, which calls fq_provider_demand_provision for its grant).
 */
#ifndef FLEXQ_CAPACITY_PROVIDER_DEMAND_H
#define FLEXQ_CAPACITY_PROVIDER_DEMAND_H

#include "capacity/state.h"

/* True when the engine asks an outside provider (provider_demand and not
 * sim_provider). */
bool fq_provider_demand_on(const struct fq_engine *e);

/* Reads the providers' answers: Done and Failed requests (first step of
 * the autoscaler's run). */
void fq_provider_demand_reconcile(struct fq_capacity *st, struct fq_engine *e);

/*
 * A queued pool's ProvisioningRequest `key` ("ns/name") needs `need` nodes
 * of pool p: asks the provider once (op "provision", all slices in one
 * call). Returns true once the request's nodes exist (the grant is done),
 * false while the provider works. A Failed answer makes the
 * ProvisioningRequest Failed=True with the provider's message.
 */
bool fq_provider_demand_provision(struct fq_capacity *st, struct fq_engine *e,
                                  struct fq_cap_pool *p, int64_t need,
                                  const char *key,
                                  const struct fq_value *provreq);

/* Asks for `need` more nodes of pool p (whole slices, within maxNodeCount,
 * minus what pending requests already ask for). */
void fq_provider_demand_create(struct fq_capacity *st, struct fq_engine *e,
                               struct fq_cap_pool *p, int64_t need,
                               const struct fq_value *about);

/* Asks for the deletion of slice `slice` (once). */
void fq_provider_demand_delete(struct fq_capacity *st, struct fq_engine *e,
                               const char *slice, const char *why);

#endif
