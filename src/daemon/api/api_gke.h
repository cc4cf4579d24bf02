/*
 * api_gke.h - the part of Google's APIs that gcloud needs to run the
 * tutorial's `gcloud container ...` commands against flexqd, served on
 * flexqd's own address (plain HTTP; gcloud's api_endpoint_overrides for
 * container, serviceusage and cloudresourcemanager point at it):
 *
 *   GET    /v1/projects/P                                   project lookup
 *   GET    /v1/projects/P/services/S                        "ENABLED"
 *   GET    /v1/projects/P/locations/L/clusters              list (L may be -)
 *   POST   /v1/projects/P/locations/L/clusters              create
 *   GET    /v1/projects/P/locations/L/clusters/C            get
 *   DELETE /v1/projects/P/locations/L/clusters/C            delete
 *   GET    .../clusters/C/nodePools                         list
 *   POST   .../clusters/C/nodePools                         create
 *   GET    .../clusters/C/nodePools/N                       get
 *   PUT    .../clusters/C/nodePools/N                       update (labels,
 *                                                           taints,
 *                                                           locations)
 *   POST   .../clusters/C/nodePools/N:setSize               {nodeCount}
 *   POST   .../clusters/C/nodePools/N:setAutoscaling        {autoscaling}
 *   DELETE .../clusters/C/nodePools/N                       delete
 *   GET    /v1/projects/P/locations/L/operations[/O]        list, get
 *   POST   /v1/projects/P/locations/L/operations/O:wait     wait
 *
 * /v1beta1/ serves the same. A flexqd is one Kubernetes cluster, so it
 * holds at most one GKE cluster: a Cluster object (flexq.dev/v1alpha1,
 * flexq/gke.h) whose node pools are flexq's NodePool objects, field for
 * field. Every operation is done when it is answered (status DONE).
 * Errors are Google's JSON ({"error": {code, message, status}}), with the
 * messages the real API gives for what is missing or exists already.
 *
 * With --tokens, a request needs `Authorization: Bearer TOKEN` (gcloud's
 * auth/access_token_file); reads need get/list and writes create, update
 * or delete on nodepools (auth.h).
 */
#ifndef FLEXQ_API_GKE_H
#define FLEXQ_API_GKE_H

#include "daemon.h"

/* Registers /v1/ and /v1beta1/ on d's API. */
void fq_gke_attach(struct fq_daemon *d);
/* Frees what attach made (after the HTTP servers are gone). */
void fq_gke_detach(struct fq_daemon *d);

#endif
