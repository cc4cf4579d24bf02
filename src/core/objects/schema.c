/*
 * schema.c - the OpenAPI description of every kind flexq serves: field
 * names, types and descriptions, as `kubectl explain` shows them and as
 * /openapi/v2 and /openapi/v3 publish them (src/daemon/api/openapi.c).
 *
 * How it works: each kind has a short table of lines
 * "path|type|description", where path is dotted from the object's root,
 * a segment ending in "[]" is a list of objects, and type is one of
 * string, integer, number, boolean, object (preserves unknown fields),
 * map (string to string), quantity (int-or-string), []string or
 * []object (a list kept as given). fq_schema_kind expands the lines into
 * one nested OpenAPI v3 schema; fields not listed are still accepted
 * (x-kubernetes-preserve-unknown-fields on spec and status), because the
 * decoders in objects_*.c are what validates an object, and they accept
 * more than is described here.
 *
 * Invariants: (1) every kind of kinds.h has an entry (metadata, apiVersion
 * and kind at least); (2) the schemas describe the fields the decoders
 * read under the same names (a field renamed there is renamed here).
 *
 * What it does not do: validation (objects_*.c does), the full PodSpec
 * (pod templates are described down to containers, the rest is kept).
 */
#include "flexq/schema.h"

#include <string.h>

#include "flexq/alloc.h"

/* Fields of a pod template ("P" is replaced by the template's path). */
#define POD_SPEC(P)                                                         \
 P ".containers[].name|string|Name of the container (DNS label), unique "   \
   "in the pod.",                                                           \
     P ".containers[].image|string|Container image name.",                  \
     P ".containers[].command|[]string|Entrypoint array.",                  \
     P ".containers[].args|[]string|Arguments to the entrypoint.",          \
     P ".containers[].env|[]object|Environment variables (merged by "       \
       "name).",                                                            \
     P ".containers[].ports|[]object|Ports to expose (merged by "           \
       "containerPort).",                                                   \
     P ".containers[].resources.requests|object|Minimum compute resources " \
       "(cpu, memory, google.com/tpu, nvidia.com/gpu).",                    \
     P ".containers[].resources.limits|object|Maximum compute resources.",  \
     P ".containers[].volumeMounts|[]object|Volumes mounted into the "      \
       "container (merged by mountPath).",                                  \
     P ".volumes|[]object|Volumes the containers may mount (merged by "     \
       "name).",                                                            \
     P ".nodeSelector|map|Labels a node must have for the pod to fit.",     \
     P ".tolerations|[]object|Taints the pod tolerates.",                   \
     P ".restartPolicy|string|Always, OnFailure or Never.",                 \
     P ".priorityClassName|string|The pod's priority class."

#define META_LINES                                                        \
 "apiVersion|string|APIVersion defines the versioned schema of this "     \
 "representation of an object.",                                          \
     "kind|string|Kind is a string value representing the REST resource " \
     "this object represents."

static const char *const rf_lines[] = {
    META_LINES,
    "spec|object|ResourceFlavorSpec defines the desired state of the "
    "ResourceFlavor.",
    "spec.nodeLabels|map|Labels that associate the flavor with Nodes; "
    "injected into the node selector of admitted pods.",
    "spec.nodeTaints|[]object|Taints that the nodes of this flavor have.",
    "spec.tolerations|[]object|Tolerations added to admitted pods.",
    "spec.topologyName|string|The Topology this flavor belongs to.",
    NULL};

static const char *const cq_lines[] = {
    META_LINES,
    "spec|object|ClusterQueueSpec defines the desired state of "
    "ClusterQueue.",
    "spec.cohort|string|The cohort this ClusterQueue borrows and lends "
    "quota in.",
    "spec.namespaceSelector|object|Which namespaces may submit workloads "
    "to this ClusterQueue.",
    "spec.queueingStrategy|string|StrictFIFO or BestEffortFIFO.",
    "spec.resourceGroups[].coveredResources|[]string|Resources covered by "
    "the flavors of this group.",
    "spec.resourceGroups[].flavors[].name|string|The ResourceFlavor.",
    "spec.resourceGroups[].flavors[].resources[].name|string|The resource "
    "name.",
    "spec.resourceGroups[].flavors[].resources[].nominalQuota|quantity|The "
    "quota of this resource for this flavor.",
    "spec.resourceGroups[].flavors[].resources[].borrowingLimit|quantity|"
    "How much may be borrowed from the cohort.",
    "spec.resourceGroups[].flavors[].resources[].lendingLimit|quantity|"
    "How much may be lent to the cohort.",
    "spec.admissionChecks|[]string|AdmissionChecks every workload must "
    "pass.",
    "spec.admissionChecksStrategy|object|AdmissionChecks per flavor.",
    "spec.preemption|object|How this ClusterQueue preempts workloads.",
    "spec.flavorFungibility|object|How flavors are tried: whenCanBorrow, "
    "whenCanPreempt.",
    "spec.stopPolicy|string|None, Hold or HoldAndDrain.",
    "status|object|ClusterQueueStatus defines the observed state of "
    "ClusterQueue.",
    "status.pendingWorkloads|integer|Workloads waiting for admission.",
    "status.admittedWorkloads|integer|Workloads admitted and not finished.",
    "status.reservingWorkloads|integer|Workloads holding quota.",
    "status.conditions|[]object|Latest observations (Active).",
    NULL};

static const char *const cohort_lines[] = {
    META_LINES, "spec|object|CohortSpec defines the desired state of Cohort.",
    "spec.parentName|string|The parent Cohort.",
    "spec.resourceGroups|[]object|Quota the cohort itself provides.", NULL};

static const char *const lq_lines[] = {
    META_LINES,
    "spec|object|LocalQueueSpec defines the desired state of LocalQueue.",
    "spec.clusterQueue|string|The ClusterQueue this queue submits to.",
    "spec.stopPolicy|string|None, Hold or HoldAndDrain.",
    "status|object|LocalQueueStatus defines the observed state of "
    "LocalQueue.",
    "status.pendingWorkloads|integer|Workloads waiting for admission.",
    "status.admittedWorkloads|integer|Workloads admitted and not finished.",
    "status.conditions|[]object|Latest observations (Active).",
    NULL};

static const char *const wl_lines[] = {
    META_LINES,
    "spec|object|WorkloadSpec defines the desired state of Workload.",
    "spec.queueName|string|The LocalQueue the workload is submitted to.",
    "spec.priority|integer|The workload's priority.",
    "spec.priorityClassName|string|The priority class.",
    "spec.priorityClassSource|string|Where the priority class is from.",
    "spec.active|boolean|False deactivates the workload (evicts it).",
    "spec.maximumExecutionTimeSeconds|integer|Longest time admitted before "
    "the workload is deactivated.",
    "spec.podSets[].name|string|Name of the pod set.",
    "spec.podSets[].count|integer|Number of pods in the set.",
    "spec.podSets[].minCount|integer|Fewest pods to run (partial "
    "admission).",
    "spec.podSets[].template|object|The pods' template.",
    "status|object|WorkloadStatus defines the observed state of Workload.",
    "status.admission|object|The ClusterQueue and flavors admitted with.",
    "status.admission.clusterQueue|string|The ClusterQueue that reserved "
    "quota.",
    "status.conditions|[]object|QuotaReserved, Admitted, Evicted, "
    "Finished, PodsReady ...",
    "status.admissionChecks|[]object|The state of each AdmissionCheck.",
    "status.requeueState|object|When the workload is queued again.",
    NULL};

static const char *const wpc_lines[] = {
    META_LINES, "value|integer|The priority of workloads of this class.",
    "description|string|What the class is for.", NULL};

static const char *const ac_lines[] = {
    META_LINES,
    "spec|object|AdmissionCheckSpec defines the desired state of "
    "AdmissionCheck.",
    "spec.controllerName|string|The controller that runs the check "
    "(kueue.x-k8s.io/provisioning-request).",
    "spec.parameters|object|The check's parameters object "
    "(apiGroup, kind, name).",
    "spec.retryDelayMinutes|integer|Delay before a failed check is retried.",
    "status|object|AdmissionCheckStatus defines the observed state.",
    "status.conditions|[]object|Latest observations (Active).",
    NULL};

static const char *const prc_lines[] = {
    META_LINES,
    "spec|object|ProvisioningRequestConfigSpec defines the desired state.",
    "spec.provisioningClassName|string|The ProvisioningRequest class "
    "(queued-provisioning.gke.io).",
    "spec.parameters|map|Parameters passed to the provisioning class.",
    "spec.managedResources|[]string|Resources the requests are made for.",
    "spec.retryStrategy|object|Backoff of failed requests.",
    "spec.podSetMergePolicy|string|How pod sets are merged.",
    NULL};

static const char *const prq_lines[] = {
    META_LINES,
    "spec|object|ProvisioningRequestSpec defines the desired state.",
    "spec.provisioningClassName|string|The class that provisions the "
    "capacity.",
    "spec.podSets|[]object|The pods to provision capacity for.",
    "spec.parameters|map|Class parameters.",
    "status|object|ProvisioningRequestStatus defines the observed state.",
    "status.conditions|[]object|Accepted, Provisioned, Failed, "
    "CapacityRevoked, BookingExpired.",
    NULL};

static const char *const rayjob_lines[] = {
    META_LINES,
    "spec|object|RayJobSpec defines the desired state of RayJob.",
    "spec.entrypoint|string|The command the submitter runs on the Ray "
    "cluster.",
    "spec.runtimeEnvYAML|string|The Ray runtime environment, as YAML.",
    "spec.jobId|string|The Ray job id (default: generated).",
    "spec.shutdownAfterJobFinishes|boolean|Delete the RayCluster when the "
    "job finishes.",
    "spec.ttlSecondsAfterFinished|integer|Seconds to keep the RayCluster "
    "after the job finished.",
    "spec.activeDeadlineSeconds|integer|Longest run before the job fails.",
    "spec.backoffLimit|integer|Retries of the whole job.",
    "spec.suspend|boolean|Suspended jobs create no cluster (Kueue resumes "
    "them on admission).",
    "spec.submissionMode|string|K8sJobMode, HTTPMode or "
    "InteractiveMode.",
    "spec.clusterSelector|map|Run on an existing RayCluster with these "
    "labels.",
    "spec.submitterPodTemplate|object|The submitter Job's pod template.",
    "spec.rayClusterSpec|object|The RayCluster to create for the job.",
    "spec.rayClusterSpec.rayVersion|string|The Ray version.",
    "spec.rayClusterSpec.headGroupSpec|object|The head pod: "
    "rayStartParams and template.",
    "spec.rayClusterSpec.workerGroupSpecs[].groupName|string|Name of the "
    "worker group.",
    "spec.rayClusterSpec.workerGroupSpecs[].replicas|integer|Workers "
    "wanted.",
    "spec.rayClusterSpec.workerGroupSpecs[].minReplicas|integer|Fewest "
    "workers.",
    "spec.rayClusterSpec.workerGroupSpecs[].maxReplicas|integer|Most "
    "workers.",
    "spec.rayClusterSpec.workerGroupSpecs[].numOfHosts|integer|Hosts per "
    "replica (multi-host TPU slices).",
    "spec.rayClusterSpec.workerGroupSpecs[].template|object|The worker "
    "pods' template.",
    "status|object|RayJobStatus defines the observed state of RayJob.",
    "status.jobStatus|string|PENDING, RUNNING, SUCCEEDED, FAILED, "
    "STOPPED.",
    "status.jobDeploymentStatus|string|Initializing, Running, Complete, "
    "Failed, Suspended ...",
    "status.rayClusterName|string|The RayCluster running the job.",
    "status.startTime|string|When the job started.",
    "status.endTime|string|When the job ended.",
    "status.message|string|Details of the status.",
    NULL};

static const char *const raycluster_lines[] = {
    META_LINES,
    "spec|object|RayClusterSpec defines the desired state of RayCluster.",
    "spec.rayVersion|string|The Ray version.",
    "spec.suspend|boolean|Suspended clusters run no pods.",
    "spec.headGroupSpec|object|The head pod: rayStartParams and template.",
    "spec.workerGroupSpecs[].groupName|string|Name of the worker group.",
    "spec.workerGroupSpecs[].replicas|integer|Workers wanted.",
    "spec.workerGroupSpecs[].minReplicas|integer|Fewest workers.",
    "spec.workerGroupSpecs[].maxReplicas|integer|Most workers.",
    "spec.workerGroupSpecs[].numOfHosts|integer|Hosts per replica.",
    "spec.workerGroupSpecs[].template|object|The worker pods' template.",
    "status|object|RayClusterStatus defines the observed state.",
    "status.state|string|ready, suspended ...",
    "status.desiredWorkerReplicas|integer|Workers wanted.",
    "status.availableWorkerReplicas|integer|Workers running.",
    NULL};

static const char *const job_lines[] = {
    META_LINES,
    "spec|object|Specification of the desired behavior of a job.",
    "spec.parallelism|integer|Most pods running at once.",
    "spec.completions|integer|Successful pods needed.",
    "spec.completionMode|string|NonIndexed or Indexed.",
    "spec.backoffLimit|integer|Retries before the job fails.",
    "spec.activeDeadlineSeconds|integer|Longest run before the job fails.",
    "spec.suspend|boolean|Suspended jobs create no pods.",
    "spec.ttlSecondsAfterFinished|integer|Seconds before a finished job "
    "is deleted.",
    "spec.selector|object|Label query over the job's pods "
    "(controller-uid, set by the server).",
    "spec.template|object|The pods the job creates.",
    "spec.template.metadata|object|The pods' labels and annotations.",
    POD_SPEC("spec.template.spec"),
    "status|object|Current status of a job.",
    "status.active|integer|Running pods.",
    "status.succeeded|integer|Pods that succeeded.",
    "status.failed|integer|Pods that failed.",
    "status.startTime|string|When the job started.",
    "status.completionTime|string|When the job completed.",
    "status.conditions|[]object|Complete, Failed, Suspended ...",
    NULL};

static const char *const cm_lines[] = {
    META_LINES, "data|map|Configuration data (UTF-8 strings).",
    "binaryData|object|Binary data, base64-encoded.",
    "immutable|boolean|If true, data cannot be changed.", NULL};

static const char *const pod_lines[] = {
    META_LINES,
    "spec|object|Specification of the desired behavior of the pod.",
    POD_SPEC("spec"),
    "spec.nodeName|string|The node the pod is bound to.",
    "status|object|Most recently observed status of the pod.",
    "status.phase|string|Pending, Running, Succeeded, Failed or Unknown.",
    "status.conditions|[]object|PodScheduled, Initialized, "
    "ContainersReady, Ready.",
    "status.hostIP|string|IP of the pod's node.",
    "status.podIP|string|IP of the pod.",
    "status.startTime|string|When the kubelet acknowledged the pod.",
    "status.containerStatuses[].name|string|The container.",
    "status.containerStatuses[].image|string|The image it runs.",
    "status.containerStatuses[].imageID|string|The image's ID.",
    "status.containerStatuses[].containerID|string|The container's ID.",
    "status.containerStatuses[].ready|boolean|Passed its readiness probe.",
    "status.containerStatuses[].started|boolean|Started.",
    "status.containerStatuses[].restartCount|integer|Restarts.",
    "status.containerStatuses[].state|object|waiting, running or "
    "terminated.",
    "status.containerStatuses[].lastState|object|The previous "
    "termination.",
    NULL};

static const char *const node_lines[] = {
    META_LINES,
    "spec|object|Spec defines the behavior of a node.",
    "spec.unschedulable|boolean|Cordoned: no new pods.",
    "spec.taints|[]object|Taints of the node.",
    "spec.providerID|string|The cloud's ID of the node.",
    "status|object|Most recently observed status of the node.",
    "status.capacity|object|Total resources of the node.",
    "status.allocatable|object|Resources available to pods.",
    "status.conditions|[]object|Ready ...",
    "status.addresses|[]object|The node's addresses.",
    NULL};

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

static const char *const event_lines[] = {
    META_LINES,
    "involvedObject|object|The object this event is about.",
    "involvedObject.kind|string|Kind of the object.",
    "involvedObject.name|string|Name of the object.",
    "involvedObject.namespace|string|Namespace of the object.",
    "reason|string|Short, machine-readable reason.",
    "message|string|Human-readable description.",
    "type|string|Normal or Warning.",
    "count|integer|Times this event occurred.",
    "firstTimestamp|string|First time recorded.",
    "lastTimestamp|string|Last time recorded.",
    "source|object|The component reporting the event.",
    NULL};

static const char *const ns_lines[] = {
    META_LINES, "spec|object|Spec defines the behavior of the Namespace.",
    "status|object|Status describes the current status of a Namespace.",
    "status.phase|string|Active or Terminating.", NULL};

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
                                rf_lines},
    [FQ_KIND_CLUSTERQUEUE] = {"ClusterQueue is the Schema for the "
                              "clusterQueue API.",
                              cq_lines},
    [FQ_KIND_COHORT] = {"Cohort is the Schema for the cohorts API.",
                        cohort_lines},
    [FQ_KIND_TOPOLOGY] = {"Topology is the Schema for the topology API.",
                          topo_lines},
    [FQ_KIND_LOCALQUEUE] = {"LocalQueue is the Schema for the localQueues "
                            "API.",
                            lq_lines},
    [FQ_KIND_WORKLOAD] = {"Workload is the Schema for the workloads API.",
                          wl_lines},
    [FQ_KIND_WORKLOADPRIORITYCLASS] = {"WorkloadPriorityClass is the Schema "
                                       "for the workloadPriorityClass API.",
                                       wpc_lines},
    [FQ_KIND_ADMISSIONCHECK] = {"AdmissionCheck is the Schema for the "
                                "admissionchecks API.",
                                ac_lines},
    [FQ_KIND_PROVISIONINGREQUESTCONFIG] = {"ProvisioningRequestConfig is the "
                                           "Schema for the "
                                           "provisioningrequestconfig API.",
                                           prc_lines},
    [FQ_KIND_PROVISIONINGREQUEST] = {"ProvisioningRequest is a way to "
                                     "express additional capacity that we "
                                     "would like to provision in the "
                                     "cluster.",
                                     prq_lines},
    [FQ_KIND_RAYJOB] = {"RayJob is the Schema for the rayjobs API.",
                        rayjob_lines},
    [FQ_KIND_RAYCLUSTER] = {"RayCluster is the Schema for the RayClusters "
                            "API.",
                            raycluster_lines},
    [FQ_KIND_JOB] = {"Job represents the configuration of a single job.",
                     job_lines},
    [FQ_KIND_CONFIGMAP] = {"ConfigMap holds configuration data for pods to "
                           "consume.",
                           cm_lines},
    [FQ_KIND_POD] = {"Pod is a collection of containers that can run on a "
                     "host.",
                     pod_lines},
    [FQ_KIND_NODE] = {"Node is a worker node in Kubernetes.", node_lines},
    [FQ_KIND_EVENT] = {"Event is a report of an event somewhere in the "
                       "cluster.",
                       event_lines},
    [FQ_KIND_NAMESPACE] = {"Namespace provides a scope for Names.", ns_lines},
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
    struct fq_value *l = leaf(type, bar2 + 1);
    if (old && fq_map_get(old, "properties"))
        /* A parent line after its children: keep the children. */
        fq_map_set(l, "properties",
                   fq_value_clone(fq_map_get(old, "properties")));
    fq_map_set(props, seg, l);
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
    if ((int)k > FQ_KIND_NONE && k < FQ_KIND__COUNT && docs[k].lines)
        for (const char *const *l = docs[k].lines; *l; l++)
            add_line(s, *l);
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
