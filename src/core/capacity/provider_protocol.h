/*
 * provider_protocol.h - the protocol between the capacity controller and a
 * provider outside the core (flexqd's `exec` and `local`): the
 * autoscaler's decisions as desired state in NodePool status, and the
 * provider's answers. provider_demand.c carries the core's side.
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
#ifndef FLEXQ_PROVIDER_PROTOCOL_H
#define FLEXQ_PROVIDER_PROTOCOL_H

#include <stdbool.h>
#include <stdint.h>

#define FQ_PROVREQS_KEY "providerRequests"
/* The last Failed create's message (the ScaleUp=False condition's, kept
 * through the backoff). */
#define FQ_LAST_FAILURE_KEY "lastScaleUpFailure"

#endif
