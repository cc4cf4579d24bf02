/*
 * catalog.c - machine types as data: shape, TPU slices, price, source.
 *
 * One static table, one row per machine type. Each row names where its
 * numbers come from; prices are list prices in USD per host-hour as the
 * public pricing pages gave them (us-central1, or us-east5 for TPU v6e,
 * the tutorial's region), rounded to the cent where the page gives more.
 * They move: the catalog is a model for comparing plans, not a bill.
 *
 * Sources (the keys used in the rows):
 *   [T6E]  docs.cloud.google.com/tpu/docs/v6e (slice shapes, VMs per
 *          slice, machine type per shape) and the GKE plan-tpus table
 *          (chips, vCPU, memory per ct6e host)
 *   [TPUP] cloud.google.com/tpu/pricing: v6e on-demand USD 2.70 per
 *          chip-hour (us-east5); Spot about 70% lower
 *   [DWS]  cloud.google.com/kubernetes-engine/docs/concepts/dws: flex-start
 *          is billed at DWS prices, "up to 53%" below on-demand
 *   [VMP]  cloud.google.com/compute/vm-instance-pricing: n2 and g2 rows
 *   [GPUP] cloud.google.com/compute/gpus-pricing: a2 / a3 rows (GPU
 *          included in the machine price for accelerator-optimized types)
 *   [SPOT] cloud.google.com/compute/docs/instances/spot: Spot VMs are
 *          "60-91%" below on-demand; flexq takes 70% for VMs and GPUs
 *   [MT]   cloud.google.com/compute/docs/accelerator-optimized-machines and
 *          general-purpose-machines (vCPU, memory, GPUs per type)
 *
 * Topology -> hosts: a TPU topology "AxB" has A*B chips; hosts = chips /
 * chips-per-host, except the sub-host shape of a type (2x2 on a 4-chip
 * host, 1x1 on a 1-chip host), which is one host. Only the shapes listed in
 * [T6E] for a type are accepted: 4x4 on ct6e-standard-4t is 16 chips on 4
 * hosts, a multi-host slice that GKE creates and removes as one unit.
 *
 * Allocatable: GKE reserves for the kubelet and system 6% of the first
 * core, 1% of the second, 0.5% of the next two and 0.25% of the rest; and
 * 25% of the first 4 GiB of memory, 20% of the next 4, 10% of the next 8,
 * 6% of the next 112 and 2% above 128 GiB, plus a 100 MiB eviction
 * threshold (GKE docs, "Standard cluster architecture: node allocatable").
 *
 * Invariants: names are unique; every row has a source; topologies lists
 * are empty exactly for types without TPU chips.
 */
#include "flexq/catalog.h"

#include <string.h>

#define GIB (1024LL * 1024 * 1024)
#define MIB (1024LL * 1024)

/* clang-format off */
static const struct fq_machine machines[] = {
    /* TPU v6e (Trillium) */
    {"ct6e-standard-1t", 44, 448, 1, "google.com/tpu", "tpu-v6e-slice",
     2.70, 0.53, 0.70, {"1x1", NULL},
     "[T6E] shape; [TPUP] 1 chip x 2.70; [DWS] flex; [TPUP] spot"},
    {"ct6e-standard-4t", 180, 720, 4, "google.com/tpu", "tpu-v6e-slice",
     10.80, 0.53, 0.70,
     {"2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16", NULL},
     "[T6E] shape; [TPUP] 4 chips x 2.70; [DWS] flex; [TPUP] spot"},
    {"ct6e-standard-8t", 180, 1440, 8, "google.com/tpu", "tpu-v6e-slice",
     21.60, 0.53, 0.70, {"2x4", NULL},
     "[T6E] shape; [TPUP] 8 chips x 2.70; [DWS] flex; [TPUP] spot"},
    /* General purpose: GKE's default node pool in the tutorial */
    {"n2-standard-16", 16, 64, 0, NULL, NULL, 0.78, 0.53, 0.70, {NULL},
     "[MT] shape; [VMP] 0.776944/h us-central1; [DWS] flex; [SPOT]"},
    {"n2-standard-8", 8, 32, 0, NULL, NULL, 0.39, 0.53, 0.70, {NULL},
     "[MT] shape; [VMP] 0.388472/h us-central1; [DWS] flex; [SPOT]"},
    /* A100 40GB */
    {"a2-highgpu-1g", 12, 85, 1, "nvidia.com/gpu", "nvidia-tesla-a100",
     3.67, 0.53, 0.70, {NULL},
     "[MT] shape; [GPUP] 3.673385/h us-central1; [DWS] flex; [SPOT]"},
    {"a2-highgpu-8g", 96, 680, 8, "nvidia.com/gpu", "nvidia-tesla-a100",
     29.39, 0.53, 0.70, {NULL},
     "[MT] shape; [GPUP] 29.387081/h us-central1; [DWS] flex; [SPOT]"},
    /* A100 80GB */
    {"a2-ultragpu-8g", 96, 1360, 8, "nvidia.com/gpu", "nvidia-a100-80gb",
     40.55, 0.53, 0.70, {NULL},
     "[MT] shape; [GPUP] 40.5504/h us-central1; [DWS] flex; [SPOT]"},
    /* H100 80GB */
    {"a3-highgpu-8g", 208, 1872, 8, "nvidia.com/gpu", "nvidia-h100-80gb",
     88.25, 0.53, 0.70, {NULL},
     "[MT] shape; [GPUP] 88.2539/h us-central1; [DWS] flex; [SPOT]"},
    /* L4 */
    {"g2-standard-4", 4, 16, 1, "nvidia.com/gpu", "nvidia-l4",
     0.71, 0.53, 0.70, {NULL},
     "[MT] shape; [VMP] 0.706832/h us-central1; [DWS] flex; [SPOT]"},
    {"g2-standard-8", 8, 32, 1, "nvidia.com/gpu", "nvidia-l4",
     0.85, 0.53, 0.70, {NULL},
     "[MT] shape; [VMP] 0.853624/h us-central1; [DWS] flex; [SPOT]"},
    {"g2-standard-48", 48, 192, 4, "nvidia.com/gpu", "nvidia-l4",
     4.00, 0.53, 0.70, {NULL},
     "[MT] shape; [VMP] 3.998360/h us-central1; [DWS] flex; [SPOT]"},
};
/* clang-format on */

#define NMACHINES (sizeof(machines) / sizeof(machines[0]))

const struct fq_machine *fq_catalog_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < NMACHINES; i++)
        if (strcmp(machines[i].name, name) == 0)
            return &machines[i];
    return NULL;
}

size_t fq_catalog_count(void)
{
    return NMACHINES;
}

const struct fq_machine *fq_catalog_at(size_t i)
{
    return i < NMACHINES ? &machines[i] : NULL;
}

int fq_catalog_is_tpu(const struct fq_machine *m)
{
    return m && m->accel_resource &&
           strcmp(m->accel_resource, "google.com/tpu") == 0;
}

/* Levenshtein distance, capped input so the table stays small. */
static size_t distance(const char *a, const char *b)
{
    enum {
        CAP = 64
    };

    size_t la = strlen(a), lb = strlen(b);
    size_t row[CAP + 1];
    if (la > CAP)
        la = CAP;
    if (lb > CAP)
        lb = CAP;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = diag + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

size_t fq_catalog_closest(const char *name, const char **out, size_t max)
{
    size_t dist[NMACHINES];
    size_t order[NMACHINES];
    size_t n = 0;
    if (!name)
        name = "";
    for (size_t i = 0; i < NMACHINES; i++) {
        dist[i] = distance(name, machines[i].name);
        order[i] = i;
    }
    /* Insertion sort by (distance, table order): a dozen rows. */
    for (size_t i = 1; i < NMACHINES; i++) {
        size_t k = order[i], j = i;
        while (j > 0 && dist[order[j - 1]] > dist[k]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    for (size_t i = 0; i < NMACHINES && n < max; i++)
        out[n++] = machines[order[i]].name;
    return n;
}

/* Parses "AxB" or "AxBxC" into a chip count; 0 when malformed. */
static long topology_chips(const char *t)
{
    long chips = 1;
    int dims = 0;
    const char *p = t;
    while (*p) {
        long d = 0;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9') {
            d = d * 10 + (*p - '0');
            if (d > 4096)
                return 0;
            p++;
        }
        if (d == 0)
            return 0;
        chips *= d;
        dims++;
        if (*p == 'x')
            p++;
        else if (*p)
            return 0;
    }
    return dims >= 2 ? chips : 0;
}

int fq_catalog_slice_hosts(const struct fq_machine *m, const char *topology,
                           int *hosts, struct fq_err *err)
{
    if (!topology || !*topology) {
        *hosts = 1;
        return 0;
    }
    if (!m || !fq_catalog_is_tpu(m))
        return fq_err_set(err, FQ_EINVAL,
                          "--tpu-topology=%s needs a TPU machine type; %s "
                          "has no TPU chips",
                          topology, m ? m->name : "(none)");
    for (int i = 0; m->topologies[i]; i++) {
        if (strcmp(m->topologies[i], topology) != 0)
            continue;
        long chips = topology_chips(topology);
        long h = chips / m->accel_count;
        *hosts = h < 1 ? 1 : (int)h;
        return 0;
    }
    char list[256] = "";
    for (int i = 0; m->topologies[i]; i++) {
        if (i)
            strncat(list, ", ", sizeof(list) - strlen(list) - 1);
        strncat(list, m->topologies[i], sizeof(list) - strlen(list) - 1);
    }
    return fq_err_set(err, FQ_EINVAL,
                      "TPU topology %s does not fit machine type %s "
                      "(%d chips per host); valid topologies: %s",
                      topology, m->name, m->accel_count, list);
}

double fq_catalog_price(const struct fq_machine *m, enum fq_provisioning p)
{
    if (!m)
        return 0;
    switch (p) {
    case FQ_PROV_FLEX_START:
        return m->price_per_hour * (1.0 - m->flex_discount);
    case FQ_PROV_SPOT:
        return m->price_per_hour * (1.0 - m->spot_discount);
    case FQ_PROV_ON_DEMAND:
    default:
        return m->price_per_hour;
    }
}

/* Reserved memory by GKE's tiers, in bytes. */
static int64_t reserved_memory(int64_t total)
{
    static const struct {
        int64_t upto; /* tier ends at this many GiB */
        int pct;
    } tiers[] = {{4, 25}, {8, 20}, {16, 10}, {128, 6}, {INT64_MAX / GIB, 2}};

    int64_t reserved = 0, lo = 0;
    if (total < GIB)
        return 255 * MIB;
    for (size_t i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++) {
        int64_t hi = tiers[i].upto * GIB;
        if (total <= lo)
            break;
        int64_t part = (total < hi ? total : hi) - lo;
        reserved += part / 100 * tiers[i].pct;
        lo = hi;
    }
    return reserved;
}

void fq_catalog_allocatable(const struct fq_machine *m, int64_t *cpu_milli,
                            int64_t *memory_bytes)
{
    int64_t cores = m ? m->vcpu : 0;
    int64_t mem = m ? m->memory_gib * GIB : 0;
    /* Reserved cpu in tenths of a millicore: 6% of the first core is
     * 600, 1% of the second 100, 0.5% of each of the next two 50, and
     * 0.25% of each further core 25. */
    int64_t tenths = 0;
    if (cores >= 1)
        tenths += 600;
    if (cores >= 2)
        tenths += 100;
    if (cores >= 3)
        tenths += 50 * (cores >= 4 ? 2 : 1);
    if (cores > 4)
        tenths += 25 * (cores - 4);
    *cpu_milli = cores * 1000 - (tenths + 9) / 10;
    *memory_bytes = mem - reserved_memory(mem) - 100 * MIB;
    if (*memory_bytes < 0)
        *memory_bytes = 0;
}
