/*
 * provider_demand.h - the autoscaler's decisions as desired state, for a
 * provider outside the core (flexqd's `exec` and `local`).
 *
 * With engine config provider_demand (and sim_provider false) the
 * capacity controller keeps deciding as the cluster autoscaler does, but
 * instead of making Nodes from the cloud model it appends requests to the
 * NodePool's status.providerRequests:
 *
 *   {"id": "<pool>-<sfx>", "op": "create-nodes", "slice": "<pool>-<sfx>",
 *    "count": <hosts of one slice>, "state": "Pending"}
 *   {"id": "<slice>-delete", "op": "delete-nodes", "slice": "<slice>",
 *    "names": ["node", ...], "state": "Pending"}
 *   {"id": "<pool>-<sfx>", "op": "provision", "provisioningRequest":
 *    "ns/name", "count": <all its hosts>, ..., "state": "Pending"}
 *
 * Creates and provisions carry machineType, topology, location, labels,
 * taints and "nodes": the Node objects the sim would make (templates).
 *
 * and status.desiredNodes (nodes + pending creates - pending deletes). The
 * provider carries a request out and writes back state "Done" (having
 * created / deleted the Node objects) or "Failed" with "message"; the next
 * run turns Done into a reset backoff and Failed into the stockout path
 * (backoff, ScaleUp=False with the message, FailedToScaleUpGroup) and
 * drops both.
 */
#ifndef FLEXQ_PROVIDER_DEMAND_H
#define FLEXQ_PROVIDER_DEMAND_H

#include <stdbool.h>
#include <stdint.h>

#include "capacity/capacity.h"

#define FQ_PROVREQS_KEY "providerRequests"
/* The last Failed create's message (the ScaleUp=False condition's, kept
 * through the backoff). */
#define FQ_LAST_FAILURE_KEY "lastScaleUpFailure"

/* True when the engine asks an outside provider (provider_demand and not
 * sim_provider). */
bool fq_provider_demand_on(const struct fq_engine *e);

/* Reads the providers' answers: Done and Failed requests (first step of
 * the autoscaler's run). */
void fq_provider_demand_reconcile(struct fq_capacity *st, struct fq_engine *e);

/* ProvisioningRequests for queued pools, carried out by the provider's
 * `provision` call (capacity run, instead of provreq.c's sim lifecycle). */
void fq_provider_demand_provreqs(struct fq_capacity *st, struct fq_engine *e);

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
