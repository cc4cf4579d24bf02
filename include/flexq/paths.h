/*
 * paths.h - the fields of objects that flexq reads by path, named once.
 *
 * Controllers, the runner and the shells read objects as value trees
 * (value.h). A path written as a string literal at each read is a typo
 * that compiles and reads the default; so every path read in more than
 * one place has its name here, grouped by the kind it belongs to, and
 * the commonest reads of ObjectMeta are typed accessors, which also skip
 * the walk of a dotted path (they look up two literal keys, whose
 * prefixes the compiler folds).
 *
 * Paths relative to an item (a container, a pod template) say so in
 * their group. A name here is a statement about the Kubernetes, Kueue or
 * KubeRay schema, not about flexq's code: add one when a second reader of
 * a path appears, never a second name for one path.
 *
 * What it does not do: decode or validate (objects_*.c do, on the way
 * in), or write (fq_value_set_path takes these names too).
 */
#ifndef FLEXQ_PATHS_H
#define FLEXQ_PATHS_H

#include "flexq/value.h"

/* --- ObjectMeta: every kind (typed accessors at the end) ---------------- */
#define FQ_META_NAME           "metadata.name"
#define FQ_META_NAMESPACE      "metadata.namespace"
#define FQ_META_UID            "metadata.uid"
#define FQ_META_LABELS         "metadata.labels"
#define FQ_META_ANNOTATIONS    "metadata.annotations"
#define FQ_META_OWNERS         "metadata.ownerReferences"
#define FQ_META_CREATED        "metadata.creationTimestamp"
#define FQ_META_DELETED        "metadata.deletionTimestamp"
#define FQ_META_GENERATION     "metadata.generation"
#define FQ_META_RV             "metadata.resourceVersion"
#define FQ_META_MANAGED_FIELDS "metadata.managedFields"
#define FQ_META_GENERATE_NAME  "metadata.generateName"

/* --- Fields several kinds share ----------------------------------------- */
#define FQ_STATUS_CONDITIONS   "status.conditions"
#define FQ_STATUS_MESSAGE      "status.message"
#define FQ_SPEC_SUSPEND        "spec.suspend"
#define FQ_SPEC_TEMPLATE       "spec.template"
#define FQ_SPEC_PRIORITY_CLASS "spec.priorityClassName"
#define FQ_STATUS_COST         "status.cost"
#define FQ_STATUS_COST_USD     "status.cost.usd"

/* --- Pod (core/v1), and a pod template's spec --------------------------- */
#define FQ_POD_PHASE              "status.phase"
#define FQ_POD_NODE_NAME          "spec.nodeName"
#define FQ_POD_CONTAINERS         "spec.containers"
#define FQ_POD_CONTAINER_STATUSES "status.containerStatuses"
#define FQ_POD_TOLERATIONS        "spec.tolerations"
#define FQ_POD_NODE_SELECTOR      "spec.nodeSelector"
#define FQ_POD_SCHEDULING_GATES   "spec.schedulingGates"
#define FQ_POD_RESTART_POLICY     "spec.restartPolicy"
#define FQ_POD_IP                 "status.podIP"
#define FQ_TEMPLATE_SPEC          "template.spec"
#define FQ_TEMPLATE_CONTAINERS    "template.spec.containers"
#define FQ_TEMPLATE_NODE_SELECTOR "template.spec.nodeSelector"
#define FQ_SVC_CLUSTER_IP         "spec.clusterIP"

/* --- A container, its status, env and volumes (relative to the item) ---- */
#define FQ_CTR_REQUESTS          "resources.requests"
#define FQ_CTR_LIMITS            "resources.limits"
#define FQ_CSTATE_RUNNING        "state.running"
#define FQ_CSTATE_TERMINATED     "state.terminated"
#define FQ_CSTATE_WAITING_REASON "state.waiting.reason"
#define FQ_ENV_FIELD_PATH        "valueFrom.fieldRef.fieldPath"
#define FQ_VOLUME_CONFIGMAP_NAME "configMap.name"
#define FQ_ENV_SECRET_KEY_REF    "valueFrom.secretKeyRef"
#define FQ_ENV_CONFIGMAP_KEY_REF "valueFrom.configMapKeyRef"

/* --- Job (batch/v1) ----------------------------------------------------- */
#define FQ_JOB_PARALLELISM "spec.parallelism"
#define FQ_JOB_COMPLETIONS "spec.completions"
#define FQ_JOB_SUCCEEDED   "status.succeeded"
#define FQ_JOB_END_TIME    "status.endTime"

/* --- Workload (kueue.x-k8s.io) ------------------------------------------ */
#define FQ_WL_PODSETS                "spec.podSets"
#define FQ_WL_ACTIVE                 "spec.active"
#define FQ_WL_QUEUE_NAME             "spec.queueName"
#define FQ_WL_PRIORITY               "spec.priority"
#define FQ_WL_MAX_EXEC_S             "spec.maximumExecutionTimeSeconds"
#define FQ_WL_STATUS_ADMISSION       "status.admission"
#define FQ_WL_PODSET_ASSIGNMENTS     "status.admission.podSetAssignments"
#define FQ_WL_ADMITTED_CQ            "status.admission.clusterQueue"
#define FQ_WL_ADMISSION_CHECKS       "status.admissionChecks"
#define FQ_WL_REQUEUE_AT             "status.requeueState.requeueAt"
#define FQ_WL_FLAVORS_RESERVATION    "status.flavorsReservation"
#define FQ_AC_PODSET_UPDATE_SELECTOR "spec.podSetUpdates.nodeSelector"

/* --- ClusterQueue, LocalQueue, ResourceFlavor, AdmissionCheck ----------- */
#define FQ_CQ_RESOURCE_GROUPS  "spec.resourceGroups"
#define FQ_CQ_COHORT           "spec.cohort"
#define FQ_CQ_COHORT_NAME      "spec.cohortName"
#define FQ_LQ_CLUSTER_QUEUE    "spec.clusterQueue"
#define FQ_RF_NODE_LABELS      "spec.nodeLabels"
#define FQ_AC_CONTROLLER       "spec.controllerName"
#define FQ_AC_PARAMETERS       "spec.parameters"
#define FQ_AC_PARAMETERS_NAME  "spec.parameters.name"
#define FQ_FAIR_WEIGHTED_SHARE "status.fairSharing.weightedShare"

/* --- ProvisioningRequest (autoscaling.x-k8s.io) ------------------------- */
#define FQ_PR_CLASS             "spec.provisioningClassName"
#define FQ_PR_CLASS_DETAILS     "status.provisioningClassDetails"
#define FQ_PR_PROVIDER_REQUESTS "status.providerRequests"

/* --- RayJob and RayCluster (ray.io) ------------------------------------- */
#define FQ_RJ_JOB_STATUS         "status.jobStatus"
#define FQ_RJ_DEPLOYMENT_STATUS  "status.jobDeploymentStatus"
#define FQ_RJ_JOB_ID             "status.jobId"
#define FQ_RJ_ENTRYPOINT         "spec.entrypoint"
#define FQ_RJ_CLUSTER_SPEC       "spec.rayClusterSpec"
#define FQ_RJ_WORKER_GROUPS      "spec.rayClusterSpec.workerGroupSpecs"
#define FQ_RJ_SUBMITTER_TEMPLATE "spec.submitterPodTemplate"
#define FQ_RC_WORKER_GROUPS      "spec.workerGroupSpecs"
#define FQ_RC_HEAD_TEMPLATE      "headGroupSpec.template"

/* --- JobSet, PyTorchJob, MPIJob, LeaderWorkerSet (template.*: per item) --- */
#define FQ_JOBSET_REPLICATED_JOBS "spec.replicatedJobs"
#define FQ_RJOB_POD_TEMPLATE      "template.spec.template"
#define FQ_RJOB_PARALLELISM       "template.spec.parallelism"
#define FQ_PYTORCH_REPLICA_SPECS  "spec.pytorchReplicaSpecs"
#define FQ_MPI_REPLICA_SPECS      "spec.mpiReplicaSpecs"
#define FQ_MPI_IMPLEMENTATION     "spec.mpiImplementation"
#define FQ_MPI_SLOTS_PER_WORKER   "spec.slotsPerWorker"
#define FQ_KF_RUN_POLICY_SUSPEND  "spec.runPolicy.suspend"
#define FQ_KF_CLEAN_POD_POLICY    "spec.runPolicy.cleanPodPolicy"
#define FQ_LWS_LEADER_TEMPLATE    "spec.leaderWorkerTemplate.leaderTemplate"
#define FQ_LWS_WORKER_TEMPLATE    "spec.leaderWorkerTemplate.workerTemplate"

/* --- Node, and flexq's NodePool ----------------------------------------- */
#define FQ_NODE_ALLOCATABLE         "status.allocatable"
#define FQ_NODE_UNSCHEDULABLE       "spec.unschedulable"
#define FQ_NODE_TAINTS              "spec.taints"
#define FQ_NODE_PLACEMENTS          "status.placements"
#define FQ_POOL_NODE_COUNT          "status.nodeCount"
#define FQ_POOL_AUTOSCALING         "spec.autoscaling"
#define FQ_POOL_MACHINE_TYPE        "spec.machineType"
#define FQ_POOL_LOCATION            "spec.location"
#define FQ_POOL_QUEUED_PROVISIONING "queuedProvisioning.enabled"

/* --- Event (core/v1) ---------------------------------------------------- */
#define FQ_EVENT_OBJECT_NAME "involvedObject.name"
#define FQ_EVENT_OBJECT_KIND "involvedObject.kind"

/* --- typed accessors ---------------------------------------------------- */

/* The object's metadata mapping (borrowed), or NULL. Like fq_map_get,
 * the value accessors take a const tree and return a mutable node. */
static inline struct fq_value *fq_meta(const struct fq_value *o)
{
    return fq_map_get(o, "metadata");
}

/* metadata.name, or "" when absent. */
static inline const char *fq_meta_name(const struct fq_value *o)
{
    const char *s = fq_value_as_str(fq_map_get(fq_meta(o), "name"));
    return s ? s : "";
}

/* metadata.namespace, or "" when absent. */
static inline const char *fq_meta_namespace(const struct fq_value *o)
{
    const char *s = fq_value_as_str(fq_map_get(fq_meta(o), "namespace"));
    return s ? s : "";
}

/* metadata.uid, or "" when absent. */
static inline const char *fq_meta_uid(const struct fq_value *o)
{
    const char *s = fq_value_as_str(fq_map_get(fq_meta(o), "uid"));
    return s ? s : "";
}

/* metadata.labels (borrowed), or NULL. */
static inline struct fq_value *fq_meta_labels(const struct fq_value *o)
{
    return fq_map_get(fq_meta(o), "labels");
}

/* metadata.annotations (borrowed), or NULL. */
static inline struct fq_value *fq_meta_annotations(const struct fq_value *o)
{
    return fq_map_get(fq_meta(o), "annotations");
}

/* metadata.ownerReferences (borrowed), or NULL. */
static inline struct fq_value *fq_meta_owners(const struct fq_value *o)
{
    return fq_map_get(fq_meta(o), "ownerReferences");
}

#endif
