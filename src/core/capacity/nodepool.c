/*
 * nodepool.c - NodePool fields, validation, and the Nodes a pool is made of.
 *
 * A NodePool is GKE's node pool as an object (nodepool.h shows the shape).
 * This file decodes it into struct fq_nodepool_spec, refuses what GKE would
 * refuse (with a message a person can act on), and builds Node objects with
 * the labels, taints and allocatable resources GKE gives such nodes. The
 * capacity controller decides when nodes come and go; this file only says
 * what they look like.
 *
 * Node labels (dws_rayjob.md section 2.3):
 *   cloud.google.com/gke-nodepool=<pool>           every node
 *   node.kubernetes.io/instance-type=<machine>     every node
 *   topology.kubernetes.io/zone=<location>         every node
 *   kubernetes.io/hostname=<node>                  every node
 *   cloud.google.com/gke-tpu-accelerator=tpu-v6e-slice, and
 *   cloud.google.com/gke-tpu-topology=<topology>   TPU pools
 *   cloud.google.com/gke-accelerator=<gpu>         GPU pools
 *   cloud.google.com/gke-flex-start=true           flex-start pools
 *   cloud.google.com/gke-queued=true               queued pools
 *   cloud.google.com/gke-spot=true                 Spot pools
 *   flexq.dev/slice=<slice id>                     flexq: the slice a node
 *                                                  belongs to (atomicity)
 *   cloud.google.com/gce-topology-block,
 *   cloud.google.com/gce-topology-subblock,
 *   cloud.google.com/gce-topology-host             every node: its place in
 *                                                  the pool's blocks and racks
 *                                                  (capacity.c; for Kueue's
 *                                                  TAS Topology levels)
 * Taints: google.com/tpu=present:NoSchedule (TPU), nvidia.com/gpu=present:
 * NoSchedule (GPU), cloud.google.com/gke-queued=true:NoSchedule (queued),
 * plus the pool's config.taints.
 *
 * Validation follows gcloud and the GKE API: the machine type must exist
 * (the error lists the closest names); a topology needs a TPU type and one
 * of the shapes it forms; min <= max; the bounds of a multi-host slice
 * pool are whole slices (a slice is made and removed as one unit); queued
 * provisioning needs autoscaling and starts at zero nodes; flex-start and
 * Spot exclude each other.
 *
 * What it does not do: decide scaling, talk to a cloud, store anything.
 */
#include "flexq/nodepool.h"

#include <stdio.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "flexq/timefmt.h"

/* The first of two paths that is present. */
static const struct fq_value *path2(const struct fq_value *obj, const char *a,
                                    const char *b)
{
    const struct fq_value *v = fq_value_path(obj, a);
    return v ? v : fq_value_path(obj, b);
}

static const char *str2(const struct fq_value *obj, const char *a,
                        const char *b)
{
    const struct fq_value *v = path2(obj, a, b);
    return v ? fq_value_as_str(v) : NULL;
}

static bool bool2(const struct fq_value *obj, const char *a, const char *b,
                  bool def)
{
    const struct fq_value *v = path2(obj, a, b);
    if (!v)
        return def;
    if (v->type == FQ_V_BOOL)
        return v->u.b;
    if (v->type == FQ_V_STR)
        return strcmp(v->u.str.s, "true") == 0 ||
               strcmp(v->u.str.s, "True") == 0;
    return def;
}

/* An integer field; FQ_EINVAL when present but not a whole number. */
static int int2(const struct fq_value *obj, const char *a, const char *b,
                int64_t def, int64_t *out, struct fq_err *err)
{
    const struct fq_value *v = path2(obj, a, b);
    *out = def;
    if (!v)
        return 0;
    if (v->type == FQ_V_NUM && v->u.num.is_int) {
        *out = v->u.num.i;
        return 0;
    }
    return fq_err_set(err, FQ_EINVAL, "%s: must be a whole number",
                      fq_value_path(obj, a) ? a : b);
}

int fq_nodepool_decode(const struct fq_value *obj, struct fq_nodepool_spec *out,
                       struct fq_err *err)
{
    struct fq_nodepool_spec p;
    memset(&p, 0, sizeof(p));
    p.name = fq_meta_name(obj);
    p.machine_type = str2(obj, "spec.machineType", "spec.config.machineType");
    if (!p.machine_type || !*p.machine_type)
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: spec.machineType: required "
                          "(--machine-type)",
                          p.name);
    p.machine = fq_catalog_find(p.machine_type);
    if (!p.machine) {
        const char *near[3];
        size_t n = fq_catalog_closest(p.machine_type, near, 3);
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: spec.machineType: unknown "
                          "machine type \"%s\"; closest: %s%s%s%s%s",
                          p.name, p.machine_type, n > 0 ? near[0] : "",
                          n > 1 ? ", " : "", n > 1 ? near[1] : "",
                          n > 2 ? ", " : "", n > 2 ? near[2] : "");
    }
    p.topology =
        str2(obj, "spec.tpuTopology", "spec.placementPolicy.tpuTopology");
    if (p.topology && !*p.topology)
        p.topology = NULL;
    int rc = fq_catalog_slice_hosts(p.machine, p.topology, &p.slice_hosts, err);
    if (rc < 0) {
        char msg[FQ_ERR_MSG_MAX];
        if (err) {
            snprintf(msg, sizeof(msg), "%s", err->msg);
            fq_err_set(err, rc, "nodepool %s: spec.tpuTopology: %s", p.name,
                       msg);
        }
        return rc;
    }
    p.autoscaling =
        bool2(obj, "spec.autoscaling.enabled", "spec.enableAutoscaling", false);
    if ((rc = int2(obj, "spec.initialNodeCount", "spec.numNodes", 0,
                   &p.initial_nodes, err)) < 0 ||
        (rc = int2(obj, "spec.autoscaling.minNodeCount", "spec.minNodes", 0,
                   &p.min_nodes, err)) < 0 ||
        (rc = int2(obj, "spec.autoscaling.maxNodeCount", "spec.maxNodes",
                   p.autoscaling ? 0 : p.initial_nodes, &p.max_nodes, err)) < 0)
        return rc;
    if (!p.autoscaling) {
        /* A fixed-size pool: its bounds are its size. */
        p.min_nodes = p.initial_nodes;
        p.max_nodes = p.initial_nodes;
    }
    p.queued = bool2(obj, "spec.queuedProvisioning.enabled",
                     "spec.enableQueuedProvisioning", false);
    p.flex_start = bool2(obj, "spec.flexStart", "spec.config.flexStart", false);
    p.spot = bool2(obj, "spec.spot", "spec.config.spot", false);
    const struct fq_value *loc = fq_value_path(obj, "spec.locations");
    p.location = loc && loc->type == FQ_V_SEQ && fq_value_len(loc) > 0 ?
                     fq_value_as_str(fq_seq_at(loc, 0)) :
                     fq_value_path_str(obj, FQ_POOL_LOCATION, NULL);
    if (!p.location)
        p.location = FQ_NODEPOOL_DEFAULT_ZONE;
    p.labels = path2(obj, "spec.labels", "spec.config.labels");
    p.taints = path2(obj, "spec.taints", "spec.config.taints");

    if (p.min_nodes < 0 || p.max_nodes < 0 || p.initial_nodes < 0)
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: node counts must not be negative",
                          p.name);
    if (p.max_nodes > 10000)
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: --max-nodes=%lld is above the limit "
                          "of 10000",
                          p.name, (long long)p.max_nodes);
    if (p.autoscaling && p.min_nodes > p.max_nodes)
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: --min-nodes=%lld is above "
                          "--max-nodes=%lld",
                          p.name, (long long)p.min_nodes,
                          (long long)p.max_nodes);
    if (p.autoscaling && p.max_nodes == 0)
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: --max-nodes must be at least 1 with "
                          "--enable-autoscaling",
                          p.name);
    if (p.queued && !p.autoscaling)
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: --enable-queued-provisioning needs "
                          "--enable-autoscaling (queued pools get nodes only "
                          "through ProvisioningRequests)",
                          p.name);
    if (p.queued && p.initial_nodes != 0)
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: a queued-provisioning pool starts "
                          "with --num-nodes=0",
                          p.name);
    if (p.flex_start && p.spot)
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: --flex-start and --spot exclude each "
                          "other",
                          p.name);
    if (p.slice_hosts > 1) {
        int64_t h = p.slice_hosts;
        if (p.min_nodes % h || p.max_nodes % h || p.initial_nodes % h)
            return fq_err_set(err, FQ_EINVAL,
                              "nodepool %s: a %s slice of %s is %lld hosts "
                              "made and removed together; node counts must "
                              "be multiples of %lld (got min %lld, max %lld, "
                              "num %lld)",
                              p.name, p.topology, p.machine->name, (long long)h,
                              (long long)h, (long long)p.min_nodes,
                              (long long)p.max_nodes,
                              (long long)p.initial_nodes);
    }
    if (p.autoscaling &&
        (p.initial_nodes < p.min_nodes || p.initial_nodes > p.max_nodes) &&
        !p.queued && p.initial_nodes != 0)
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: --num-nodes=%lld is outside "
                          "--min-nodes..--max-nodes (%lld..%lld)",
                          p.name, (long long)p.initial_nodes,
                          (long long)p.min_nodes, (long long)p.max_nodes);
    const struct fq_value *part =
        fq_map_get(fq_meta_annotations(obj), FQ_ANN_SLURM_PARTITION);
    if (part && !fq_nodepool_slurm_partition_ok(fq_value_as_str(part)))
        return fq_err_set(err, FQ_EINVAL,
                          "nodepool %s: metadata.annotations[%s]: not a "
                          "Slurm partition name (1-63 of A-Z a-z 0-9 . _ -, "
                          "not starting with -)",
                          p.name, FQ_ANN_SLURM_PARTITION);
    if (out)
        *out = p;
    return 0;
}

bool fq_nodepool_slurm_partition_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 63 || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

int fq_nodepool_validate(const struct fq_value *obj, struct fq_err *err)
{
    return fq_nodepool_decode(obj, NULL, err);
}

enum fq_provisioning fq_nodepool_provisioning(const struct fq_nodepool_spec *p)
{
    if (p->flex_start || p->queued)
        return FQ_PROV_FLEX_START;
    if (p->spot)
        return FQ_PROV_SPOT;
    return FQ_PROV_ON_DEMAND;
}

double fq_nodepool_price(const struct fq_nodepool_spec *p)
{
    return fq_catalog_price(p->machine, fq_nodepool_provisioning(p));
}

struct fq_value *fq_nodepool_node_labels(const struct fq_nodepool_spec *p)
{
    struct fq_value *l = fq_value_map();
    fq_map_set(l, FQ_LABEL_NODEPOOL, fq_value_str(p->name));
    fq_map_set(l, "node.kubernetes.io/instance-type",
               fq_value_str(p->machine ? p->machine->name : ""));
    fq_map_set(l, "topology.kubernetes.io/zone", fq_value_str(p->location));
    if (fq_catalog_is_tpu(p->machine)) {
        fq_map_set(l, FQ_LABEL_TPU_ACCEL,
                   fq_value_str(p->machine->accel_label));
        fq_map_set(l, FQ_LABEL_TPU_TOPOLOGY,
                   fq_value_str(p->topology ? p->topology :
                                              p->machine->topologies[0]));
    } else if (p->machine && p->machine->accel_count > 0) {
        fq_map_set(l, FQ_LABEL_GPU_ACCEL,
                   fq_value_str(p->machine->accel_label));
    }
    if (p->flex_start)
        fq_map_set(l, FQ_LABEL_FLEX_START, fq_value_str("true"));
    if (p->queued)
        fq_map_set(l, FQ_LABEL_QUEUED, fq_value_str("true"));
    if (p->spot)
        fq_map_set(l, FQ_LABEL_SPOT, fq_value_str("true"));
    if (p->labels && p->labels->type == FQ_V_MAP)
        for (size_t i = 0; i < p->labels->u.map.n; i++) {
            const struct fq_member *m = &p->labels->u.map.items[i];
            const char *s = fq_value_as_str(m->val);
            if (s)
                fq_map_set(l, m->key, fq_value_str(s));
        }
    return l;
}

static struct fq_value *taint(const char *key, const char *value,
                              const char *effect)
{
    struct fq_value *t = fq_value_map();
    fq_map_set(t, "key", fq_value_str(key));
    fq_map_set(t, "value", fq_value_str(value));
    fq_map_set(t, "effect", fq_value_str(effect));
    return t;
}

struct fq_value *fq_nodepool_node_taints(const struct fq_nodepool_spec *p)
{
    struct fq_value *t = fq_value_seq();
    if (fq_catalog_is_tpu(p->machine))
        fq_seq_push(t, taint(FQ_TAINT_TPU, "present", "NoSchedule"));
    else if (p->machine && p->machine->accel_count > 0)
        fq_seq_push(t, taint(FQ_TAINT_GPU, "present", "NoSchedule"));
    if (p->queued)
        fq_seq_push(t, taint(FQ_TAINT_QUEUED, "true", "NoSchedule"));
    for (size_t i = 0; p->taints && i < fq_value_len(p->taints); i++)
        fq_seq_push(t, fq_value_clone(fq_seq_at(p->taints, i)));
    return t;
}

bool fq_nodepool_matches(const struct fq_nodepool_spec *p,
                         const struct fq_value *selector)
{
    if (!selector || selector->type != FQ_V_MAP || selector->u.map.n == 0)
        return true;
    struct fq_value *labels = fq_nodepool_node_labels(p);
    bool ok = true;
    for (size_t i = 0; ok && i < selector->u.map.n; i++) {
        const struct fq_member *m = &selector->u.map.items[i];
        const char *want = fq_value_as_str(m->val);
        const char *have = fq_value_as_str(fq_map_get(labels, m->key));
        ok = want && have && strcmp(want, have) == 0;
    }
    fq_value_free(labels);
    return ok;
}

static struct fq_value *qty(int64_t v, enum fq_qscale scale,
                            enum fq_qformat fmt)
{
    char buf[40];
    fq_quantity_format(v, scale, fmt, buf, sizeof(buf));
    return fq_value_str(buf);
}

/*
 * A pool's nodes differ only in their name, slice, host index, Ready
 * condition and times: the rest (labels, taints, capacity, allocatable
 * from the catalog) is built once into a prototype, whose members of a
 * node's own are placeholders at the places a node has them; each node
 * is a copy with those set (fq_map_set keeps a member's place).
 */
struct fq_value *fq_nodepool_node_proto(const struct fq_nodepool_spec *p)
{
    const struct fq_machine *m = p->machine;
    struct fq_value *n = fq_value_map();
    fq_map_set(n, "apiVersion", fq_value_str("v1"));
    fq_map_set(n, "kind", fq_value_str("Node"));
    struct fq_value *md = fq_map_ensure_map(n, "metadata");
    fq_map_set(md, "name", fq_value_str(""));
    struct fq_value *labels = fq_nodepool_node_labels(p);
    fq_map_set(labels, "kubernetes.io/hostname", fq_value_str(""));
    fq_map_set(labels, FQ_LABEL_SLICE, fq_value_str(""));
    fq_map_set(md, "labels", labels);
    struct fq_value *ann = fq_map_ensure_map(md, "annotations");
    fq_map_set(ann, "flexq.dev/slice-index", fq_value_str(""));
    struct fq_value *spec = fq_map_ensure_map(n, "spec");
    fq_map_set(spec, "providerID", fq_value_str(""));
    struct fq_value *taints = fq_nodepool_node_taints(p);
    if (fq_value_len(taints))
        fq_map_set(spec, "taints", taints);
    else
        fq_value_free(taints);

    struct fq_value *st = fq_map_ensure_map(n, "status");
    struct fq_value *cap = fq_map_ensure_map(st, "capacity");
    fq_map_set(cap, "cpu",
               qty((int64_t)m->vcpu * 1000, FQ_Q_MILLI, FQ_QF_DECIMAL_SI));
    fq_map_set(
        cap, "memory",
        qty(m->memory_gib * 1024 * 1024 * 1024, FQ_Q_UNIT, FQ_QF_BINARY_SI));
    if (m->accel_resource)
        fq_map_set(cap, m->accel_resource,
                   qty(m->accel_count, FQ_Q_UNIT, FQ_QF_DECIMAL_SI));
    fq_map_set(cap, "pods", fq_value_str("110"));
    int64_t cpu, mem;
    fq_catalog_allocatable(m, &cpu, &mem);
    struct fq_value *alloc = fq_map_ensure_map(st, "allocatable");
    fq_map_set(alloc, "cpu", qty(cpu, FQ_Q_MILLI, FQ_QF_DECIMAL_SI));
    fq_map_set(alloc, "memory", qty(mem, FQ_Q_UNIT, FQ_QF_BINARY_SI));
    if (m->accel_resource)
        fq_map_set(alloc, m->accel_resource,
                   qty(m->accel_count, FQ_Q_UNIT, FQ_QF_DECIMAL_SI));
    fq_map_set(alloc, "pods", fq_value_str("110"));

    struct fq_value *conds = fq_value_seq();
    struct fq_value *c = fq_value_map();
    fq_map_set(c, "type", fq_value_str("Ready"));
    fq_map_set(c, "status", fq_value_str(""));
    fq_map_set(c, "reason", fq_value_str(""));
    fq_map_set(c, "message", fq_value_str(""));
    fq_map_set(c, "lastHeartbeatTime", fq_value_str(""));
    fq_map_set(c, "lastTransitionTime", fq_value_str(""));
    fq_seq_push(conds, c);
    fq_map_set(st, "conditions", conds);
    return n;
}

struct fq_value *fq_nodepool_node_from(const struct fq_value *proto,
                                       const struct fq_nodepool_spec *p,
                                       const char *node_name, const char *slice,
                                       int index, bool ready, int64_t now_ms)
{
    struct fq_value *n = fq_value_clone(proto);
    struct fq_value *md = fq_map_get(n, "metadata");
    fq_map_set(md, "name", fq_value_str(node_name));
    struct fq_value *labels = fq_map_get(md, "labels");
    fq_map_set(labels, "kubernetes.io/hostname", fq_value_str(node_name));
    fq_map_set(labels, FQ_LABEL_SLICE, fq_value_str(slice));
    fq_map_set(fq_map_get(md, "annotations"), "flexq.dev/slice-index",
               fq_value_strf("%d", index));
    fq_map_set(fq_map_get(n, "spec"), "providerID",
               fq_value_strf("sim://%s/%s", p->location, node_name));
    char ts[40];
    fq_time_format(now_ms, ts, sizeof(ts));
    struct fq_value *c =
        fq_seq_at(fq_map_get(fq_map_get(n, "status"), "conditions"), 0);
    fq_map_set(c, "status", fq_value_str(ready ? "True" : "False"));
    fq_map_set(c, "reason",
               fq_value_str(ready ? "KubeletReady" : "KubeletNotReady"));
    fq_map_set(c, "message",
               fq_value_str(ready ? "kubelet is posting ready status" :
                                    "node is booting"));
    fq_map_set(c, "lastHeartbeatTime", fq_value_str(ts));
    fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
    return n;
}

struct fq_value *fq_nodepool_make_node(const struct fq_nodepool_spec *p,
                                       const char *node_name, const char *slice,
                                       int index, bool ready, int64_t now_ms)
{
    struct fq_value *proto = fq_nodepool_node_proto(p);
    struct fq_value *n =
        fq_nodepool_node_from(proto, p, node_name, slice, index, ready, now_ms);
    fq_value_free(proto);
    return n;
}

struct fq_value *fq_nodepool_default_object(void)
{
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("flexq.dev/v1alpha1"));
    fq_map_set(o, "kind", fq_value_str("NodePool"));
    fq_map_set(fq_map_ensure_map(o, "metadata"), "name",
               fq_value_str(FQ_NODEPOOL_DEFAULT));
    struct fq_value *spec = fq_map_ensure_map(o, "spec");
    fq_map_set(spec, "machineType", fq_value_str(FQ_NODEPOOL_DEFAULT_MACHINE));
    fq_map_set(spec, "initialNodeCount", fq_value_int(1));
    struct fq_value *as = fq_map_ensure_map(spec, "autoscaling");
    fq_map_set(as, "enabled", fq_value_bool(true));
    fq_map_set(as, "minNodeCount", fq_value_int(1));
    fq_map_set(as, "maxNodeCount", fq_value_int(3));
    fq_map_set(spec, "location", fq_value_str(FQ_NODEPOOL_DEFAULT_ZONE));
    return o;
}
