/*
 * catalog.h - the machine types flexq knows, as data.
 *
 * A NodePool names a machine type ("ct6e-standard-4t"); the catalog says
 * what one host of that type has (vCPU, memory, accelerators), which TPU
 * topologies it can form and how many hosts each takes, the labels and
 * taints GKE puts on such nodes, and what an hour of it costs on-demand,
 * with flex-start (DWS) and with Spot. Every number carries its source in
 * catalog.c.
 */
#ifndef FLEXQ_CATALOG_H
#define FLEXQ_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "flexq/err.h"

/* How a node is bought: changes the price, not the machine. */
enum fq_provisioning {
    FQ_PROV_ON_DEMAND = 0,
    FQ_PROV_FLEX_START, /* DWS flex-start (with or without queuing) */
    FQ_PROV_SPOT,
};

#define FQ_CATALOG_MAX_TOPOLOGIES 8

struct fq_machine {
    const char *name;           /* "ct6e-standard-4t" */
    int vcpu;                   /* per host */
    int64_t memory_gib;         /* per host, GiB */
    int accel_count;            /* chips / GPUs per host; 0 for none */
    const char *accel_resource; /* "google.com/tpu", "nvidia.com/gpu", NULL */
    const char *accel_label; /* gke-tpu-accelerator / gke-accelerator value */
    double price_per_hour;   /* on-demand USD per host-hour */
    double flex_discount;    /* fraction off the on-demand price */
    double spot_discount;    /* fraction off the on-demand price */
    /* For TPU types: the slice shapes it forms, NULL-terminated. */
    const char *topologies[FQ_CATALOG_MAX_TOPOLOGIES];
    const char *source; /* where the numbers above come from */
};

/* The entry for a machine type, or NULL. Borrowed (static data). */
const struct fq_machine *fq_catalog_find(const char *name);

/* The whole catalog, for `flexq nodepool machine-types` and docs. */
size_t fq_catalog_count(void);
const struct fq_machine *fq_catalog_at(size_t i);

/* True when the machine type carries TPU chips. */
int fq_catalog_is_tpu(const struct fq_machine *m);

/*
 * Up to `max` catalog names closest to `name` (edit distance, then name),
 * for "unknown machine type X; did you mean ...". Returns how many.
 */
size_t fq_catalog_closest(const char *name, const char **out, size_t max);

/*
 * Hosts (VMs, hence nodes) in one slice of `topology` on machine type `m`:
 * 4x4 on ct6e-standard-4t is 4. A NULL or empty topology is 1 host. A
 * topology on a type without TPUs, or a shape the type cannot form, is
 * FQ_EINVAL with the valid shapes in `err`.
 */
int fq_catalog_slice_hosts(const struct fq_machine *m, const char *topology,
                           int *hosts, struct fq_err *err);

/* USD per host-hour for a way of buying it. */
double fq_catalog_price(const struct fq_machine *m, enum fq_provisioning p);

/*
 * Allocatable cpu (milli) and memory (bytes) of one host: capacity minus
 * GKE's kube-reserved and the 100 MiB eviction threshold (the formula of
 * GKE's "node allocatable" documentation).
 */
void fq_catalog_allocatable(const struct fq_machine *m, int64_t *cpu_milli,
                            int64_t *memory_bytes);

#endif
