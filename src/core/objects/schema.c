/*
 * schema.c - the OpenAPI description of every kind flexq serves: field
 * names, types, limits and descriptions, as `kubectl explain` shows them
 * and as /openapi/v2 and /openapi/v3 publish them
 * (src/daemon/api/openapi.c).
 *
 * How it works: two sources, expanded into one nested OpenAPI v3 schema
 * per kind by fq_schema_kind.
 *   - The field tables of objects/fields.h, for Kueue's kinds,
 *     ProvisioningRequest, RayJob, RayCluster and the core kinds (Job,
 *     ConfigMap, Secret, Pod, Node, Event, Namespace): the very rows their
 *     decoders validate with, so type, `required`, minimum / maximum,
 *     minItems / maxItems / maxProperties, `enum` and `default` are the
 *     decoder's own rules; status rows the server sets are `readOnly`.
 *     tests/unit/test_fields.c probes every published field against the
 *     decoder, and lint.fields keeps the decoders from reading a field
 *     without a row.
 *   - For NodePool and CapacityModel (validated by the capacity module)
 *     and the training job kinds (JobSet, PyTorchJob, MPIJob,
 *     LeaderWorkerSet, TrainJob: objects_training.c), not converted yet,
 *     a short table of lines "path|type|description" in
 *     this file, kept in step with their decoders by hand: path is
 *     dotted from the object's root, a segment ending in "[]" is a list of
 *     objects, and type is one of string, integer, number, boolean, object
 *     (preserves unknown fields), map (string to string), quantity
 *     (int-or-string), []string or []object (a list kept as given).
 * Fields not described are still accepted
 * (x-kubernetes-preserve-unknown-fields on spec and status): unknown
 * fields are kept, as flexq promises.
 *
 * Invariants: (1) every kind of kinds.h has an entry (metadata, apiVersion
 * and kind at least); (2) the line tables describe the fields the decoders
 * read under the same names (a field renamed there is renamed here; for
 * the table-driven kinds this holds by construction).
 *
 * What it does not do: validation (objects_*.c does), the full PodSpec
 * (pod templates are described down to containers, the rest is kept).
 */
#include "flexq/schema.h"

#include <string.h>

#include "flexq/alloc.h"
#include "objects/fields.h"

#define META_LINES                                                        \
 "apiVersion|string|APIVersion defines the versioned schema of this "     \
 "representation of an object.",                                          \
     "kind|string|Kind is a string value representing the REST resource " \
     "this object represents."

/* Service: validated by objects_service.c, described by hand. */
static const char *const svc_lines[] = {
    META_LINES,
    "spec|object|Spec defines the behavior of a service.",
    "spec.type|string|ClusterIP, NodePort, LoadBalancer or ExternalName.",
    "spec.selector|object|Route service traffic to pods with label keys "
    "and values matching this selector.",
    "spec.clusterIP|string|The IP address of the service (None: headless).",
    "spec.clusterIPs|[]string|The IP addresses of the service.",
    "spec.ports|[]object|The list of ports that are exposed by this "
    "service.",
    "spec.ports[].name|string|The name of this port within the service.",
    "spec.ports[].port|integer|The port that will be exposed by this "
    "service.",
    "spec.ports[].targetPort|string|Number or name of the port to access "
    "on the pods targeted by the service.",
    "spec.ports[].protocol|string|TCP, UDP or SCTP.",
    "spec.ports[].appProtocol|string|The application protocol.",
    "spec.ports[].nodePort|integer|The port on each node (NodePort, "
    "LoadBalancer).",
    "spec.externalName|string|The DNS name an ExternalName service "
    "aliases.",
    "spec.sessionAffinity|string|None or ClientIP.",
    "status|object|Most recently observed status of the service.",
    "status.loadBalancer|object|The load balancer's status.",
    NULL};

static const char *const pool_lines[] = {
    META_LINES,
    "spec|object|A GKE node pool as flexq models it.",
    "spec.machineType|string|Machine type (ct6e-standard-4t, "
    "n2-standard-8 ...).",
    "spec.tpuTopology|string|TPU slice topology (2x4).",
    "spec.flexStart|boolean|Nodes come through flex-start (DWS).",
    "spec.queuedProvisioning|object|enabled: nodes come through "
    "ProvisioningRequests.",
    "spec.autoscaling|object|enabled, minNodeCount, maxNodeCount.",
    "spec.initialNodeCount|integer|Nodes at creation.",
    "status|object|Observed state of the pool.",
    "status.nodeCount|integer|Nodes in the pool.",
    NULL};

static const char *const topo_lines[] = {
    META_LINES,
    "spec|object|The levels of a topology for topology-aware scheduling.",
    "spec.levels|[]object|nodeLabel: node label keys, from the highest level to the "
    "lowest (at most 16; kubernetes.io/hostname only last).",
    NULL};

static const char *const capm_lines[] = {
    META_LINES, "spec|object|The simulated cloud's capacity model.", NULL};

/* Kinds whose other fields come from a field table (fields.h). */
static const char *const meta_lines[] = {META_LINES, NULL};

/* The training job kinds (objects_training.c checks them). */
static const char *const jobset_lines[] = {
    META_LINES,
    "spec|object|JobSetSpec defines the desired state of JobSet.",
    "spec.suspend|boolean|Suspend suspends all running child Jobs.",
    "spec.replicatedJobs[].name|string|Name of the replicated job.",
    "spec.replicatedJobs[].replicas|integer|Number of Jobs to create.",
    "spec.replicatedJobs[].template|object|The Job template.",
    "spec.successPolicy|object|When the JobSet is Completed.",
    "spec.failurePolicy|object|When the JobSet is Failed.",
    "spec.network|object|Headless-service hostnames of the pods.",
    "status|object|JobSetStatus defines the observed state of JobSet.",
    NULL};
static const char *const pytorchjob_lines[] = {
    META_LINES,
    "spec|object|PyTorchJobSpec is the desired state of the PyTorchJob.",
    "spec.pytorchReplicaSpecs|object|Master and Worker replica specs.",
    "spec.runPolicy|object|Policies of the job (suspend, cleanPodPolicy).",
    "spec.nprocPerNode|string|Processes per node.",
    "status|object|The observed state of the job.",
    NULL};

static const char *const mpijob_lines[] = {
    META_LINES,
    "spec|object|MPIJobSpec is the desired state of the MPIJob.",
    "spec.slotsPerWorker|integer|Slots of each worker in the hostfile.",
    "spec.mpiReplicaSpecs|object|Launcher and Worker replica specs.",
    "spec.mpiImplementation|string|OpenMPI, Intel or MPICH.",
    "spec.runPolicy|object|Policies of the job (suspend, cleanPodPolicy).",
    "status|object|The observed state of the job.",
    NULL};

static const char *const lws_lines[] = {
    META_LINES,
    "spec|object|Defines the desired state of LeaderWorkerSet.",
    "spec.replicas|integer|Number of leader-worker groups.",
    "spec.leaderWorkerTemplate.size|integer|Pods in a group, leader "
    "included.",
    "spec.leaderWorkerTemplate.leaderTemplate|object|The leader's pod "
    "template (default: workerTemplate).",
    "spec.leaderWorkerTemplate.workerTemplate|object|The workers' pod "
    "template.",
    "spec.leaderWorkerTemplate.restartPolicy|string|"
    "RecreateGroupOnPodRestart or None.",
    "spec.networkConfig.subdomainPolicy|string|Shared or UniquePerReplica.",
    "status|object|Defines the observed state of LeaderWorkerSet.",
    NULL};

static const char *const trainjob_lines[] = {
    META_LINES,
    "spec|object|TrainJobSpec represents specification of the desired "
    "TrainJob.",
    "spec.runtimeRef|object|Reference to the training runtime (flexq: the "
    "torch runtimes).",
    "spec.trainer|object|The trainer: image, command, args, env, numNodes, "
    "resourcesPerNode, numProcPerNode.",
    "spec.suspend|boolean|Whether the TrainJob is suspended.",
    "spec.podTemplateOverrides|[]object|Pod template changes per job.",
    "status|object|TrainJobStatus represents the current status of "
    "TrainJob.",
    NULL};

struct kind_doc {
    const char *desc;
    const char *const *lines;
};

static const struct kind_doc docs[FQ_KIND__COUNT] = {
    [FQ_KIND_RESOURCEFLAVOR] = {"ResourceFlavor is the Schema for the "
                                "resourceflavors API.",
                                meta_lines},
    [FQ_KIND_CLUSTERQUEUE] = {"ClusterQueue is the Schema for the "
                              "clusterQueue API.",
                              meta_lines},
    [FQ_KIND_COHORT] = {"Cohort is the Schema for the cohorts API.",
                        meta_lines},
    [FQ_KIND_TOPOLOGY] = {"Topology is the Schema for the topology API.",
                          topo_lines},
    [FQ_KIND_LOCALQUEUE] = {"LocalQueue is the Schema for the localQueues "
                            "API.",
                            meta_lines},
    [FQ_KIND_WORKLOAD] = {"Workload is the Schema for the workloads API.",
                          meta_lines},
    [FQ_KIND_WORKLOADPRIORITYCLASS] = {"WorkloadPriorityClass is the Schema "
                                       "for the workloadPriorityClass API.",
                                       meta_lines},
    [FQ_KIND_ADMISSIONCHECK] = {"AdmissionCheck is the Schema for the "
                                "admissionchecks API.",
                                meta_lines},
    [FQ_KIND_PROVISIONINGREQUESTCONFIG] = {"ProvisioningRequestConfig is the "
                                           "Schema for the "
                                           "provisioningrequestconfig API.",
                                           meta_lines},
    [FQ_KIND_PROVISIONINGREQUEST] = {"ProvisioningRequest is a way to "
                                     "express additional capacity that we "
                                     "would like to provision in the "
                                     "cluster.",
                                     meta_lines},
    [FQ_KIND_RAYJOB] = {"RayJob is the Schema for the rayjobs API.",
                        meta_lines},
    [FQ_KIND_RAYCLUSTER] = {"RayCluster is the Schema for the RayClusters "
                            "API.",
                            meta_lines},
    [FQ_KIND_JOB] = {"Job represents the configuration of a single job.",
                     meta_lines},
    [FQ_KIND_CONFIGMAP] = {"ConfigMap holds configuration data for pods to "
                           "consume.",
                           meta_lines},
    [FQ_KIND_SECRET] = {"Secret holds secret data of a certain type. The "
                        "total bytes of the values in the Data field must "
                        "be less than MaxSecretSize bytes.",
                        meta_lines},
    [FQ_KIND_POD] = {"Pod is a collection of containers that can run on a "
                     "host.",
                     meta_lines},
    [FQ_KIND_NODE] = {"Node is a worker node in Kubernetes.", meta_lines},
    [FQ_KIND_EVENT] = {"Event is a report of an event somewhere in the "
                       "cluster.",
                       meta_lines},
    [FQ_KIND_NAMESPACE] = {"Namespace provides a scope for Names.", meta_lines},
    [FQ_KIND_SERVICE] = {"Service is a named abstraction of software "
                         "service (for example, mysql) consisting of local "
                         "port (for example 3306) that the proxy listens "
                         "on, and the selector that determines which pods "
                         "will answer requests sent through the proxy.",
                         svc_lines},
    [FQ_KIND_NODEPOOL] = {"NodePool is a pool of identical nodes (GKE's "
                          "node pools).",
                          pool_lines},
    [FQ_KIND_CAPACITYMODEL] = {"CapacityModel describes the simulated "
                               "cloud's capacity.",
                               capm_lines},
    [FQ_KIND_JOBSET] = {"JobSet is the Schema for the jobsets API",
                        jobset_lines},
    [FQ_KIND_PYTORCHJOB] = {"PyTorchJob Represents a PyTorchJob resource.",
                            pytorchjob_lines},
    [FQ_KIND_MPIJOB] = {"MPIJob is the Schema for the mpijobs API.",
                        mpijob_lines},
    [FQ_KIND_LEADERWORKERSET] = {"LeaderWorkerSet is the Schema for the "
                                 "leaderworkersets API",
                                 lws_lines},
    [FQ_KIND_TRAINJOB] = {"TrainJob represents configuration of a training "
                          "job.",
                          trainjob_lines},
};

static struct fq_value *leaf(const char *type, const char *desc)
{
    struct fq_value *s = fq_value_map();
    if (desc)
        fq_map_set(s, "description", fq_value_str(desc));
    if (!strcmp(type, "object")) {
        fq_map_set(s, "type", fq_value_str("object"));
        fq_map_set(s, "x-kubernetes-preserve-unknown-fields",
                   fq_value_bool(true));
    } else if (!strcmp(type, "map")) {
        fq_map_set(s, "type", fq_value_str("object"));
        struct fq_value *ap = fq_value_map();
        fq_map_set(ap, "type", fq_value_str("string"));
        fq_map_set(s, "additionalProperties", ap);
    } else if (!strcmp(type, "quantity")) {
        fq_map_set(s, "x-kubernetes-int-or-string", fq_value_bool(true));
        struct fq_value *any = fq_value_seq();
        struct fq_value *a = fq_value_map(), *b = fq_value_map();
        fq_map_set(a, "type", fq_value_str("integer"));
        fq_map_set(b, "type", fq_value_str("string"));
        fq_seq_push(any, a);
        fq_seq_push(any, b);
        fq_map_set(s, "anyOf", any);
    } else if (!strncmp(type, "[]", 2)) {
        fq_map_set(s, "type", fq_value_str("array"));
        fq_map_set(s, "items", leaf(type + 2, NULL));
    } else {
        fq_map_set(s, "type", fq_value_str(type));
    }
    return s;
}

/* The schema at `seg` inside `parent` (an object schema), made an object
 * (or a list of objects when `list`) with properties if it is not one. */
static struct fq_value *child(struct fq_value *parent, const char *seg,
                              bool list)
{
    struct fq_value *props = fq_map_ensure_map(parent, "properties");
    struct fq_value *s = fq_map_get(props, seg);
    if (!s) {
        s = fq_value_map();
        fq_map_set(props, seg, s);
        s = fq_map_get(props, seg);
    }
    if (list) {
        fq_map_set(s, "type", fq_value_str("array"));
        struct fq_value *it = fq_map_get(s, "items");
        if (!it) {
            fq_map_set(s, "items", fq_value_map());
            it = fq_map_get(s, "items");
            fq_map_set(it, "type", fq_value_str("object"));
        }
        return it;
    }
    if (!fq_map_get(s, "type"))
        fq_map_set(s, "type", fq_value_str("object"));
    return s;
}

/* Puts the schema l (owned) at the dotted `path` under root; its key
 * goes into the parent's `required` when `required`. */
static void add_at(struct fq_value *root, const char *path_in,
                   struct fq_value *l, bool required)
{
    char path[256];
    if (strlen(path_in) >= sizeof(path)) {
        fq_value_free(l);
        return;
    }
    strcpy(path, path_in);
    struct fq_value *at = root;
    char *seg = path;
    for (;;) {
        char *dot = strchr(seg, '.');
        if (!dot)
            break;
        *dot = '\0';
        size_t sl = strlen(seg);
        bool list = sl > 2 && !strcmp(seg + sl - 2, "[]");
        if (list)
            seg[sl - 2] = '\0';
        at = child(at, seg, list);
        seg = dot + 1;
    }
    struct fq_value *props = fq_map_ensure_map(at, "properties");
    struct fq_value *old = fq_map_get(props, seg);
    if (old && fq_map_get(old, "properties"))
        /* A parent line after its children: keep the children. */
        fq_map_set(l, "properties",
                   fq_value_clone(fq_map_get(old, "properties")));
    if (old && fq_map_get(old, "required"))
        fq_map_set(l, "required", fq_value_clone(fq_map_get(old, "required")));
    fq_map_set(props, seg, l);
    if (required) {
        struct fq_value *req = fq_map_get(at, "required");
        if (!req) {
            fq_map_set(at, "required", fq_value_seq());
            req = fq_map_get(at, "required");
        }
        fq_seq_push(req, fq_value_str(seg));
    }
}

/* Adds one "path|type|description" line under root. */
static void add_line(struct fq_value *root, const char *line)
{
    const char *bar1 = strchr(line, '|');
    const char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
    if (!bar2)
        return;
    char path[256], type[32];
    size_t pl = (size_t)(bar1 - line), tl = (size_t)(bar2 - bar1 - 1);
    if (pl >= sizeof(path) || tl >= sizeof(type))
        return;
    memcpy(path, line, pl);
    path[pl] = '\0';
    memcpy(type, bar1 + 1, tl);
    type[tl] = '\0';
    add_at(root, path, leaf(type, bar2 + 1), false);
}

/* The schema of one row of a field table (fields.h): its type with the
 * limits, enum values and default the decoder checks. */
static struct fq_value *row_leaf(const struct fq_field *f)
{
    static const char *const types[] = {
        [FT_STR] = "string",   [FT_NAME] = "string",  [FT_INT] = "integer",
        [FT_BOOL] = "boolean", [FT_QTY] = "quantity", [FT_ENUM] = "string",
        [FT_MAP] = "object",   [FT_SEQ] = "[]object", [FT_STRS] = "[]string",
        [FT_KVS] = "map",      [FT_OBJ] = "object",   [FT_OBJS] = "[]object"};
    struct fq_value *s = leaf(types[f->type], f->desc);
    switch (f->type) {
    case FT_INT:
        if (f->min != INT64_MIN)
            fq_map_set(s, "minimum", fq_value_int(f->min));
        if (f->max != INT64_MAX)
            fq_map_set(s, "maximum", fq_value_int(f->max));
        if (f->def)
            fq_map_set(s, "default", fq_value_int(f->def));
        break;
    case FT_BOOL:
        fq_map_set(s, "default", fq_value_bool(f->def != 0));
        break;
    case FT_ENUM: {
        struct fq_value *e = fq_value_seq();
        for (const char *const *n = f->names; *n; n++)
            if (**n)
                fq_seq_push(e, fq_value_str(*n));
        fq_map_set(s, "enum", e);
        if (f->def >= 0 && *f->names[f->def])
            fq_map_set(s, "default", fq_value_str(f->names[f->def]));
        break;
    }
    case FT_SEQ:
    case FT_STRS:
    case FT_OBJS:
        if (f->min > 0)
            fq_map_set(s, "minItems", fq_value_int(f->min));
        if (f->max > 0)
            fq_map_set(s, "maxItems", fq_value_int(f->max));
        break;
    case FT_KVS:
        if (f->max > 0)
            fq_map_set(s, "maxProperties", fq_value_int(f->max));
        break;
    default:
        break;
    }
    if (f->flags & FF_SERVER)
        fq_map_set(s, "readOnly", fq_value_bool(true));
    return s;
}

/* Adds the rows of `table` that kind k has. */
static void add_rows(struct fq_value *root, const struct fq_field *table,
                     enum fq_kind k)
{
    for (const struct fq_field *f = table; f->path; f++)
        if (f->kinds & FK(k))
            add_at(root, f->path, row_leaf(f), (f->flags & FF_REQUIRED) != 0);
}

/* Objects that got properties from deeper lines also keep unknown fields:
 * the decoders accept more than is described. */
static void open_objects(struct fq_value *s)
{
    if (!s || s->type != FQ_V_MAP)
        return;
    struct fq_value *props = fq_map_get(s, "properties");
    if (props && props->type == FQ_V_MAP) {
        if (!fq_map_get(s, "x-kubernetes-preserve-unknown-fields") &&
            fq_map_get(s, "description"))
            fq_map_set(s, "x-kubernetes-preserve-unknown-fields",
                       fq_value_bool(true));
        for (size_t i = 0; i < props->u.map.n; i++)
            open_objects(props->u.map.items[i].val);
    }
    open_objects(fq_map_get(s, "items"));
}

const char *fq_schema_description(enum fq_kind k)
{
    if ((int)k <= FQ_KIND_NONE || k >= FQ_KIND__COUNT || !docs[k].desc)
        return "";
    return docs[k].desc;
}

struct fq_value *fq_schema_kind(enum fq_kind k, const char *metadata_ref)
{
    struct fq_value *s = fq_value_map();
    fq_map_set(s, "description", fq_value_str(fq_schema_description(k)));
    fq_map_set(s, "type", fq_value_str("object"));
    if ((int)k > FQ_KIND_NONE && k < FQ_KIND__COUNT) {
        add_rows(s, fq_kueue_fields, k);
        add_rows(s, fq_ray_fields, k);
        add_rows(s, fq_core_fields, k);
        if (docs[k].lines)
            for (const char *const *l = docs[k].lines; *l; l++)
                add_line(s, *l);
    }
    struct fq_value *props = fq_map_ensure_map(s, "properties");
    open_objects(fq_map_get(props, "spec"));
    open_objects(fq_map_get(props, "status"));
    struct fq_value *md = fq_value_map();
    if (metadata_ref) {
        struct fq_value *all = fq_value_seq();
        struct fq_value *ref = fq_value_map();
        fq_map_set(ref, "$ref", fq_value_str(metadata_ref));
        fq_seq_push(all, ref);
        fq_map_set(md, "allOf", all);
    } else {
        fq_map_set(md, "type", fq_value_str("object"));
    }
    fq_map_set(md, "description", fq_value_str("Standard object's metadata."));
    fq_map_set(props, "metadata", md);
    return s;
}
