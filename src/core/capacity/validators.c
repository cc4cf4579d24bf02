/*
 * validators.c - the spec rules of the kinds the capacity module owns,
 * handed to the object validator through the kinds registry
 * (fq_kind_spec_validator, declared in flexq/kinds.h).
 *
 * NodePool (nodepool.c: machine types from the catalog, topologies,
 * autoscaling bounds in whole slices) and CapacityModel (cloud.c: zones,
 * stock, waits) are decoded next to the machine catalog; the object
 * validator checks their metadata and asks here for the rest. A new kind
 * owned above the objects layer adds one case.
 */
#include "flexq/cloud.h"
#include "flexq/gke.h"
#include "flexq/kinds.h"
#include "flexq/nodepool.h"

fq_spec_validate_fn fq_kind_spec_validator(enum fq_kind k)
{
    switch (k) {
    case FQ_KIND_NODEPOOL:
        return fq_nodepool_validate;
    case FQ_KIND_CAPACITYMODEL:
        return fq_cloud_validate;
    case FQ_KIND_CLUSTER:
        return fq_gke_cluster_validate;
    default:
        return NULL;
    }
}
