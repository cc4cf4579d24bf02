/*
 * names.h - the well-known names that more than one module reads or
 * writes: labels, annotations, taints and condition reasons of Kubernetes,
 * Kueue, KubeRay and GKE, and flexq's own (flexq.dev/...).
 *
 * One place, so that no controller includes another controller's header
 * to learn a string, and so that a name is spelled once. A name only one
 * module uses stays in that module.
 */
#ifndef FLEXQ_NAMES_H
#define FLEXQ_NAMES_H

/* --- Kueue ------------------------------------------------------------ */

/* The LocalQueue a job is submitted to (a label of the job). */
#define FQ_LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"
/* A job's WorkloadPriorityClass, and its maximumExecutionTimeSeconds. */
#define FQ_LABEL_PRIORITY_CLASS "kueue.x-k8s.io/priority-class"
#define FQ_LABEL_MAX_EXEC_TIME  "kueue.x-k8s.io/max-exec-time-seconds"
/* A job opts into workload slices with this annotation set to "true";
 * its pods then carry the scheduling gate of the same name. */
#define FQ_ANN_ELASTIC_JOB   "kueue.x-k8s.io/elastic-job"
#define FQ_SLICE_ANN_ELASTIC FQ_ANN_ELASTIC_JOB
#define FQ_SLICE_GATE        FQ_ANN_ELASTIC_JOB
/* A slice names the Workload it replaces with this annotation. */
#define FQ_SLICE_ANN_REPLACES "kueue.x-k8s.io/workload-slice-replacement-for"
/* The Finished reason of a replaced slice. */
#define FQ_SLICE_REASON_REPLACED "WorkloadSliceReplaced"

/* --- ProvisioningRequests (cluster autoscaler, GKE's DWS) -------------- */

#define FQ_ANN_CONSUME_PROVREQ \
 "autoscaling.x-k8s.io/consume-provisioning-request"
#define FQ_ANN_PROVREQ_CLASS "autoscaling.x-k8s.io/provisioning-class-name"

/* --- Jobs and pods (the batch Job controller, KubeRay) ----------------- */

#define FQ_LABEL_JOB_NAME              "batch.kubernetes.io/job-name"
#define FQ_LABEL_JOB_NAME_LEGACY       "job-name"
#define FQ_LABEL_CONTROLLER_UID        "batch.kubernetes.io/controller-uid"
#define FQ_LABEL_CONTROLLER_UID_LEGACY "controller-uid"
#define FQ_ANN_COMPLETION_INDEX        "batch.kubernetes.io/job-completion-index"
#define FQ_LABEL_RAY_CLUSTER           "ray.io/cluster"
#define FQ_LABEL_RAY_GROUP             "ray.io/group"
#define FQ_LABEL_RAY_NODE_TYPE         "ray.io/node-type"
#define FQ_LABEL_RAY_ORIGIN_NAME       "ray.io/originated-from-cr-name"
#define FQ_LABEL_RAY_ORIGIN_CRD        "ray.io/originated-from-crd"
#define FQ_LABEL_CREATED_BY            "app.kubernetes.io/created-by"
#define FQ_LABEL_REPLICA               "flexq.dev/replica-index"
#define FQ_LABEL_HOST                  "flexq.dev/host-index"
#define FQ_LABEL_GROUP_INDEX           "flexq.dev/group-index"
/* Pods that bind all-or-nothing carry the gang's name and size. */
#define FQ_ANN_GANG      "flexq.dev/gang"
#define FQ_ANN_GANG_SIZE "flexq.dev/gang-size"
/* The first of the two rendezvous ports a RayCluster / Job holds. */
#define FQ_ANN_RDV_PORT "flexq.dev/rendezvous-port"
/* A pod's peers' headless-service names, comma-separated; the runner
 * resolves each to this machine in the pod's /etc/hosts. */
#define FQ_ANN_DNS_NAMES "flexq.dev/dns-names"
/* A job's expected run time: seconds ("3600") or a Go duration ("90m",
 * "1h30m"). On a Workload or on the job that owns it. */
#define FQ_ANN_EXPECTED_RUNTIME "flexq.dev/expected-runtime"

/* --- Nodes and node pools (GKE's labels and taints, flexq's own) ------- */

#define FQ_LABEL_NODEPOOL     "cloud.google.com/gke-nodepool"
#define FQ_LABEL_TPU_ACCEL    "cloud.google.com/gke-tpu-accelerator"
#define FQ_LABEL_TPU_TOPOLOGY "cloud.google.com/gke-tpu-topology"
#define FQ_LABEL_GPU_ACCEL    "cloud.google.com/gke-accelerator"
#define FQ_LABEL_FLEX_START   "cloud.google.com/gke-flex-start"
#define FQ_LABEL_QUEUED       "cloud.google.com/gke-queued"
/* On a NodePool: the Slurm partition that backs it (--executor slurm),
 * when its name is not the pool's (flexq nodepool create
 * --slurm-partition). */
#define FQ_ANN_SLURM_PARTITION "flexq.dev/slurm-partition"
#define FQ_LABEL_SPOT          "cloud.google.com/gke-spot"
#define FQ_LABEL_SLICE         "flexq.dev/slice"
#define FQ_TAINT_QUEUED        "cloud.google.com/gke-queued"
#define FQ_TAINT_TPU           "google.com/tpu"
#define FQ_TAINT_GPU           "nvidia.com/gpu"
/* On nodes made for a ProvisioningRequest: "namespace/name". */
#define FQ_ANN_NODE_PROVREQ "flexq.dev/provisioning-request"
/* Node annotations flexq keeps for itself. */
#define FQ_ANN_READY_AT "flexq.dev/ready-at"
#define FQ_ANN_UNNEEDED "flexq.dev/unneeded-since"
/* Workload annotation read by the kueue controller (policy
 * flavor_failure_cooldown), set by the capacity controller and by kueue
 * itself on a check Retry: "<flavor>=<until RFC 3339>[,...]". */
#define FQ_ANN_AVOID_FLAVORS "flexq.dev/avoid-flavors"

#endif
