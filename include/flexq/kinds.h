/*
 * kinds.h - the registry of object kinds flexq knows.
 *
 * One static table names every kind: its API group and versions, plural and
 * short names (as kubectl and Kueue spell them), whether it is namespaced,
 * and whether it has a status subresource. The CLI resolves `cq`,
 * `clusterqueues` or `ClusterQueue` through it, the API routes
 * `/apis/GROUP/VERSION/RESOURCE` through it, and the manifest reader refuses
 * kinds that are not in it.
 */
#ifndef FLEXQ_KINDS_H
#define FLEXQ_KINDS_H

#include <stdbool.h>

enum fq_kind {
    FQ_KIND_NONE = 0,
    FQ_KIND_RESOURCEFLAVOR,
    FQ_KIND_CLUSTERQUEUE,
    FQ_KIND_COHORT,
    FQ_KIND_LOCALQUEUE,
    FQ_KIND_WORKLOAD,
    FQ_KIND_WORKLOADPRIORITYCLASS,
    FQ_KIND_ADMISSIONCHECK,
    FQ_KIND_PROVISIONINGREQUESTCONFIG,
    FQ_KIND_PROVISIONINGREQUEST,
    FQ_KIND_RAYJOB,
    FQ_KIND_RAYCLUSTER,
    FQ_KIND_JOB,
    FQ_KIND_CONFIGMAP,
    FQ_KIND_POD,
    FQ_KIND_NODE,
    FQ_KIND_EVENT,
    FQ_KIND_NAMESPACE,
    FQ_KIND_NODEPOOL,
    FQ_KIND_CAPACITYMODEL,
    FQ_KIND_CLUSTER, /* flexq.dev Cluster: the GKE cluster record (gke.h) */
    FQ_KIND_PRIORITYCLASS,   /* scheduling.k8s.io/v1: a pod's priority */
    FQ_KIND_JOBSET,          /* jobset.x-k8s.io/v1alpha2 (jobs/jobset.c) */
    FQ_KIND_PYTORCHJOB,      /* kubeflow.org/v1 (jobs/pytorchjob.c) */
    FQ_KIND_MPIJOB,          /* kubeflow.org/v2beta1 (jobs/mpijob.c) */
    FQ_KIND_LEADERWORKERSET, /* leaderworkerset.x-k8s.io/v1 (jobs/lws.c) */
    FQ_KIND_TRAINJOB, /* trainer.kubeflow.org/v1alpha1 (jobs/trainjob.c) */
    FQ_KIND_SERVICE,  /* v1 Service: KubeRay's head services */
    FQ_KIND_TOPOLOGY, /* kueue.x-k8s.io Topology (TAS levels) */
    FQ_KIND_SECRET,   /* v1 Secret: pod volumes and env (objects_core.c) */
    FQ_KIND__COUNT
};

struct fq_kind_info {
    enum fq_kind kind;
    const char *name;          /* "ClusterQueue" */
    const char *group;         /* "kueue.x-k8s.io"; "" for the core group */
    const char *version;       /* preferred version: "v1beta1" */
    const char *alt_version;   /* also accepted ("v1beta2"), or NULL */
    const char *plural;        /* "clusterqueues" */
    const char *singular;      /* "clusterqueue" */
    const char *shortnames[4]; /* "cq", NULL-terminated */
    bool namespaced;
    bool has_status;
};

/* The entry for a kind (never NULL for a valid enum value). */
const struct fq_kind_info *fq_kind_info(enum fq_kind k);

/* Resolves a kind from apiVersion + kind ("kueue.x-k8s.io/v1beta1",
 * "ClusterQueue"); FQ_KIND_NONE if unknown or the version is not served. */
enum fq_kind fq_kind_from_gvk(const char *api_version, const char *kind);

/* Resolves what a user types: plural, singular, short name or Kind, any
 * case, optionally with ".group" ("workloads.kueue.x-k8s.io"). */
enum fq_kind fq_kind_lookup(const char *name);

/* "apps/v1"-style apiVersion for a kind: "kueue.x-k8s.io/v1beta1", "v1". */
const char *fq_kind_api_version(enum fq_kind k);

struct fq_value;
struct fq_err;

/*
 * A kind's spec rules that live with the module owning the kind, above
 * the objects layer (NodePool and CapacityModel: the capacity module,
 * next to the machine catalog). fq_object_validate checks such an
 * object's metadata, then calls this. Returns 0 or a negative FQ_E* code
 * with `err` filled (may be NULL).
 */
typedef int (*fq_spec_validate_fn)(const struct fq_value *obj,
                                   struct fq_err *err);

/* The spec validator of kind k, or NULL when the objects layer checks the
 * whole kind itself. The seam is declared here and filled by the owning
 * layer (capacity/validators.c), so that the object validator includes
 * no header above its own layer. */
fq_spec_validate_fn fq_kind_spec_validator(enum fq_kind k);

#endif
