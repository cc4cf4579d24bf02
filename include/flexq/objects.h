/*
 * objects.h - typed views of every object kind, and their validation.
 *
 * The object IS its struct fq_value tree (value.h): that tree is what the
 * store keeps, what the API returns and what round-trips, unknown fields
 * included. The structs below are read-only *views* of the fields flexq
 * uses, decoded from a tree by one function per kind:
 *
 *   int fq_<kind>_decode(const struct fq_value *obj, const char *file,
 *                        struct fq_<kind> *out, struct fq_errlist *errs);
 *   void fq_<kind>_release(struct fq_<kind> *v);
 *
 * Decoding IS validation: it checks Kubernetes' rules (DNS-1123 names,
 * label keys and values, required fields, types, enums) and Kueue's /
 * KubeRay's webhook and CEL rules, and reports EVERY problem it finds, each
 * as one struct fq_err in `errs` (may be NULL) whose msg reads
 *   "FILE:LINE:COL: FIELD.PATH: what is wrong"
 * e.g. `q.yaml:31:17: spec.resourceGroups[0].flavors[1].resources[2].
 * nominalQuota: invalid quantity "16x"`. When `file` is NULL the msg has
 * no location prefix ("FIELD.PATH: what"); line, col and path are always
 * also in the struct fields. A string holding an unexpanded `${VAR}` is
 * reported with a hint to pipe the file through envsubst.
 *
 * Returns 0, or FQ_EINVAL when at least one error was found; then *out is
 * zeroed and needs no release. On success release the view with
 * fq_<kind>_release (safe on a zeroed struct, idempotent).
 *
 * Ownership, for every view:
 *   - strings (const char *) and `const struct fq_value *` members are
 *     BORROWED from the tree `obj`: the tree must outlive the view and must
 *     not be modified while the view is used;
 *   - arrays are owned by the view (one arena per view, `mem`), freed by
 *     release.
 * Absent optional strings are NULL. Quantities are exact int64 in the units
 * of quantity.h: fq_quantity_scale_for(resource name) (cpu in milli-units,
 * memory in bytes, everything else whole units). Durations are seconds.
 *
 * Defaults are those of the real APIs and are applied in the view only
 * (the tree is not modified); each default is noted beside its field.
 */
#ifndef FLEXQ_OBJECTS_H
#define FLEXQ_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/value.h"

struct fq_objmem; /* the arena behind a view's arrays (private) */

/* --- building blocks ------------------------------------------------------ */

/* A string map entry (labels, annotations, nodeSelector, data, ...). */
struct fq_kv {
    const char *key;
    const char *value;
};

struct fq_kvs {
    struct fq_kv *items; /* in source order */
    size_t n;
};

/* Value for `key`, or NULL. */
const char *fq_kvs_get(const struct fq_kvs *m, const char *key);

/* One (resource name, quantity) pair: requests, limits, capacity. */
struct fq_resource {
    const char *name;
    int64_t value; /* units of fq_quantity_scale_for(name) */
};

struct fq_resources {
    struct fq_resource *items; /* in source order, names unique */
    size_t n;
};

/* The quantity for `name`, or `def` when absent. */
int64_t fq_resources_get(const struct fq_resources *r, const char *name,
                         int64_t def);

struct fq_meta {
    const char *name;          /* required (unless generate_name is set) */
    const char *generate_name; /* or NULL */
    const char *ns;            /* metadata.namespace, or NULL when absent */
    const char *uid;           /* set by the store, or NULL */
    const char *resource_version;
    const char *creation_timestamp; /* RFC 3339, or NULL */
    int64_t generation;             /* 0 when absent */
    struct fq_kvs labels;
    struct fq_kvs annotations;
    const struct fq_value *owner_references; /* sequence, or NULL */
};

/* metav1.Condition (status.conditions[]). */
struct fq_condition {
    const char *type;
    const char *status; /* "True", "False", "Unknown" */
    const char *reason;
    const char *message;
    const char *last_transition_time;
    int64_t observed_generation;
};

struct fq_conditions {
    struct fq_condition *items;
    size_t n;
};

/* The condition of `type`, or NULL; and whether it is "True". */
const struct fq_condition *fq_conditions_get(const struct fq_conditions *c,
                                             const char *type);
bool fq_conditions_true(const struct fq_conditions *c, const char *type);

enum fq_taint_effect {
    FQ_EFFECT_ANY = 0, /* tolerations only: empty effect matches all */
    FQ_EFFECT_NO_SCHEDULE,
    FQ_EFFECT_PREFER_NO_SCHEDULE,
    FQ_EFFECT_NO_EXECUTE,
};

struct fq_taint {
    const char *key;
    const char *value;           /* or NULL */
    enum fq_taint_effect effect; /* required on taints */
};

struct fq_toleration {
    const char *key;   /* NULL with Exists: tolerates every taint */
    bool exists;       /* operator: Exists (true) or Equal (false, default) */
    const char *value; /* Equal only */
    enum fq_taint_effect effect;
    bool has_seconds;
    int64_t toleration_seconds; /* NoExecute only */
};

/* Does the toleration tolerate the taint (Kubernetes' ToleratesTaint)? */
bool fq_toleration_tolerates(const struct fq_toleration *t,
                             const struct fq_taint *taint);

struct fq_container_port {
    const char *name; /* or NULL */
    int64_t container_port;
    const char *protocol; /* TCP (default), UDP, SCTP */
};

struct fq_volume_mount {
    const char *name;
    const char *mount_path;
    const char *sub_path; /* or NULL */
    bool read_only;
};

struct fq_container {
    const char *name;
    const char *image;
    const struct fq_value *command; /* sequence of strings, or NULL */
    const struct fq_value *args;    /* sequence of strings, or NULL */
    const struct fq_value *env;     /* sequence of {name,value|valueFrom} */
    const char *working_dir;
    /* Requests default to the limits for resources with a limit and no
     * request, as the API server defaults them. */
    struct fq_resources requests;
    struct fq_resources limits;
    struct fq_container_port *ports;
    size_t n_ports;
    struct fq_volume_mount *volume_mounts;
    size_t n_volume_mounts;
};

struct fq_volume {
    const char *name;
    const char *config_map; /* configMap.name, or NULL for other sources */
    const struct fq_value *config_map_items; /* configMap.items, or NULL */
    bool empty_dir;
    const struct fq_value *raw; /* the whole volume entry */
};

struct fq_podspec {
    struct fq_container *containers; /* at least one */
    size_t n_containers;
    struct fq_container *init_containers;
    size_t n_init_containers;
    struct fq_kvs node_selector;
    struct fq_toleration *tolerations;
    size_t n_tolerations;
    struct fq_volume *volumes;
    size_t n_volumes;
    const char *restart_policy; /* "Always" (default), "OnFailure", "Never" */
    const char *node_name;
    const char *priority_class_name;
    const char *scheduler_name;
    const char *service_account_name;
    const struct fq_value *affinity; /* or NULL */
    bool has_termination_grace;
    int64_t termination_grace_seconds;
};

/*
 * The pod's effective requests as Kubernetes' scheduler and Kueue compute
 * them: for each resource, max(sum over containers, max over init
 * containers). Writes up to `cap` entries into `out` (names borrowed) and
 * returns how many there are in all (more than `cap` means truncated).
 */
size_t fq_podspec_requests(const struct fq_podspec *ps, struct fq_resource *out,
                           size_t cap);

/* A PodTemplateSpec: metadata (labels/annotations) + spec. */
struct fq_podtemplate {
    struct fq_kvs labels;
    struct fq_kvs annotations;
    struct fq_podspec spec;
};

/* metav1.LabelSelector. `present` is false when the field is absent (for a
 * ClusterQueue's namespaceSelector that means "no namespace"); an empty
 * selector ({}) matches everything. */
enum fq_selector_op {
    FQ_SEL_IN,
    FQ_SEL_NOT_IN,
    FQ_SEL_EXISTS,
    FQ_SEL_DOES_NOT_EXIST,
};

struct fq_selector_req {
    const char *key;
    enum fq_selector_op op;
    const char **values;
    size_t n_values;
};

struct fq_selector {
    bool present;
    struct fq_kvs match_labels;
    struct fq_selector_req *exprs;
    size_t n_exprs;
};

/* Does the selector match these labels? (A non-present selector matches
 * nothing.) */
bool fq_selector_matches(const struct fq_selector *s,
                         const struct fq_kvs *labels);

/* --- kueue.x-k8s.io -------------------------------------------------------- */

struct fq_resourceflavor {
    struct fq_meta meta;
    struct fq_kvs node_labels;    /* <= 8 */
    struct fq_taint *node_taints; /* <= 8 */
    size_t n_node_taints;
    struct fq_toleration *tolerations; /* <= 8 */
    size_t n_tolerations;
    const char *topology_name; /* or NULL; needs node_labels */
    struct fq_objmem *mem;
};

/* One (flavor, resource) quota. */
struct fq_resource_quota {
    const char *name; /* the resource */
    int64_t nominal;
    bool has_borrowing_limit; /* absent = unlimited */
    int64_t borrowing_limit;
    bool has_lending_limit; /* absent = lend all */
    int64_t lending_limit;
};

struct fq_flavor_quotas {
    const char *name; /* the ResourceFlavor */
    /* In coveredResources order (validation guarantees one entry per
     * covered resource, so resources[i].name == covered[i]). */
    struct fq_resource_quota *resources;
    size_t n_resources;
};

struct fq_resource_group {
    const char **covered; /* coveredResources, 1..64 */
    size_t n_covered;
    struct fq_flavor_quotas *flavors; /* 1..64, in preference order */
    size_t n_flavors;
};

enum fq_queueing_strategy {
    FQ_BEST_EFFORT_FIFO = 0, /* default */
    FQ_STRICT_FIFO,
};

enum fq_preempt_policy {
    FQ_PREEMPT_NEVER = 0, /* default everywhere */
    FQ_PREEMPT_LOWER_PRIORITY,
    FQ_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY, /* withinClusterQueue only */
    FQ_PREEMPT_ANY,                           /* reclaimWithinCohort only */
};

enum fq_fungibility {
    FQ_FUNG_MAY_STOP_SEARCH, /* default of whenCanBorrow; v1beta1 "Borrow" */
    FQ_FUNG_TRY_NEXT_FLAVOR, /* default of whenCanPreempt; v1beta1 "Preempt"
                                means MayStopSearch */
};

enum fq_fung_preference {
    FQ_PREFER_BORROWING_OVER_PREEMPTION = 0, /* default */
    FQ_PREFER_PREEMPTION_OVER_BORROWING,
};

enum fq_stop_policy {
    FQ_STOP_NONE = 0, /* default */
    FQ_STOP_HOLD,
    FQ_STOP_HOLD_AND_DRAIN,
};

/* An admission check a ClusterQueue runs, from
 * spec.admissionChecksStrategy.admissionChecks[] or (v1beta1) the plain
 * list spec.admissionChecks[] (then on_flavors is empty). */
struct fq_check_ref {
    const char *name;
    const char **on_flavors; /* empty = all flavors */
    size_t n_on_flavors;
};

struct fq_clusterqueue {
    struct fq_meta meta;
    const char *cohort; /* spec.cohort (v1beta1) or spec.cohortName; NULL */
    struct fq_selector namespace_selector; /* !present = no namespace */
    struct fq_resource_group *groups;      /* <= 16, <= 256 flavors */
    size_t n_groups;
    enum fq_queueing_strategy queueing_strategy;

    struct {
        enum fq_preempt_policy within_cluster_queue;
        enum fq_preempt_policy reclaim_within_cohort;
        enum fq_preempt_policy borrow_within_cohort; /* .policy */
        bool has_max_priority_threshold;
        int64_t max_priority_threshold;
    } preemption;

    struct {
        enum fq_fungibility when_can_borrow;  /* default MayStopSearch */
        enum fq_fungibility when_can_preempt; /* default TryNextFlavor */
        enum fq_fung_preference preference;
    } fungibility;
    struct fq_check_ref *checks; /* <= 64 */
    size_t n_checks;
    enum fq_stop_policy stop_policy;
    int64_t fair_weight_milli; /* fairSharing.weight; default 1 (1000) */
    /* spec.admissionScope.admissionMode is UsageBasedAdmissionFairSharing */
    bool usage_based_afs;
    struct fq_objmem *mem;
};

/* The quota of (flavor, resource) in a ClusterQueue or Cohort's groups, or
 * NULL when the pair is not declared. */
const struct fq_resource_quota *fq_groups_quota(
    const struct fq_resource_group *groups, size_t n_groups, const char *flavor,
    const char *resource);

struct fq_cohort {
    struct fq_meta meta;
    const char *parent; /* spec.parentName (v1beta1 `parent` too), or NULL */
    struct fq_resource_group *groups;
    size_t n_groups;
    int64_t fair_weight_milli; /* default 1000 */
    struct fq_objmem *mem;
};

struct fq_localqueue {
    struct fq_meta meta;
    const char *cluster_queue; /* required */
    enum fq_stop_policy stop_policy;
    int64_t fair_weight_milli; /* default 1000 */
    struct fq_objmem *mem;
};

struct fq_podset {
    const char *name; /* default "main" */
    int64_t count;    /* default 1 */
    bool has_min_count;
    int64_t min_count; /* partial admission; one podSet at most */
    struct fq_podtemplate template;
};

/* status.admission.podSetAssignments[] */
struct fq_podset_assignment {
    const char *name;
    struct fq_kvs flavors; /* resource -> flavor */
    struct fq_resources resource_usage;
    int64_t count;
};

enum fq_check_state {
    FQ_CHECK_PENDING = 0,
    FQ_CHECK_READY,
    FQ_CHECK_RETRY,
    FQ_CHECK_REJECTED,
};

/* status.admissionChecks[] */
struct fq_check_status {
    const char *name;
    enum fq_check_state state;
    const char *message;
    const char *last_transition_time;
    int64_t retry_count;
    int64_t requeue_after_seconds;
};

struct fq_workload {
    struct fq_meta meta;
    struct fq_podset *podsets; /* 1..18 */
    size_t n_podsets;
    const char *queue_name;
    const char *priority_class_name;   /* v1beta1, or priorityClassRef.name */
    const char *priority_class_source; /* kueue.x-k8s.io/workloadpriorityclass,
                                          scheduling.k8s.io/priorityclass */
    bool has_priority;
    int64_t priority; /* int32 */
    bool active;      /* default true */
    bool has_max_exec;
    int64_t max_exec_seconds; /* maximumExecutionTimeSeconds */
    /* status (written by controllers; decoded leniently) */
    struct fq_conditions conditions;
    bool has_admission; /* status.admission present */
    const char *admission_cluster_queue;
    struct fq_podset_assignment *assignments;
    size_t n_assignments;
    struct fq_check_status *check_states;
    size_t n_check_states;
    bool has_requeue_state;
    int64_t requeue_count;
    const char *requeue_at;
    struct fq_objmem *mem;
};

struct fq_workloadpriorityclass {
    struct fq_meta meta;
    int64_t value; /* int32, required */
    const char *description;
    struct fq_objmem *mem;
};

struct fq_admissioncheck {
    struct fq_meta meta;
    const char *controller_name; /* required */
    bool has_parameters;
    const char *param_api_group; /* all three required with parameters */
    const char *param_kind;
    const char *param_name;
    struct fq_conditions conditions;
    struct fq_objmem *mem;
};

/* podSetUpdates.nodeSelector[] */
struct fq_prc_node_selector {
    const char *key;
    const char *value_from_detail; /* valueFromProvisioningClassDetail */
};

struct fq_provisioningrequestconfig {
    struct fq_meta meta;
    const char *provisioning_class_name; /* required */
    struct fq_kvs parameters;            /* <= 100, values <= 255 chars */
    const char **managed_resources;      /* empty = all */
    size_t n_managed_resources;
    int64_t backoff_limit_count;  /* retryStrategy; default 3 */
    int64_t backoff_base_seconds; /* default 60 */
    int64_t backoff_max_seconds;  /* default 1800 */
    struct fq_prc_node_selector *node_selector_updates;
    size_t n_node_selector_updates;
    const char *podset_merge_policy; /* or NULL */
    struct fq_objmem *mem;
};

/* --- autoscaling.x-k8s.io -------------------------------------------------- */

struct fq_provreq_podset {
    const char *template_name; /* podTemplateRef.name */
    int64_t count;             /* >= 1 */
};

struct fq_provisioningrequest {
    struct fq_meta meta;
    const char *provisioning_class_name; /* required */
    struct fq_provreq_podset *podsets;   /* 1..32 */
    size_t n_podsets;
    struct fq_kvs parameters;
    /* status */
    struct fq_conditions conditions;
    struct fq_kvs class_details; /* status.provisioningClassDetails */
    struct fq_objmem *mem;
};

/* --- ray.io ---------------------------------------------------------------- */

struct fq_ray_worker_group {
    const char *group_name; /* required, unique, not "head" under Kueue */
    bool has_replicas;
    int64_t replicas;     /* KubeRay default 0; Kueue counts nil as 1 */
    int64_t min_replicas; /* default 0 */
    int64_t max_replicas; /* default 2147483647 */
    int64_t num_of_hosts; /* default 1 */
    bool suspend;
    const struct fq_value *ray_start_params; /* map or NULL */
    struct fq_podtemplate template;
};

struct fq_raycluster_spec {
    const struct fq_value *head_ray_start_params;
    const char *head_service_type;
    struct fq_podtemplate head_template;
    struct fq_ray_worker_group *workers; /* <= 17 under Kueue */
    size_t n_workers;
    bool enable_in_tree_autoscaling;
    const char *ray_version;
};

/* Desired worker pods of a group: clamp(replicas, min, max) * numOfHosts,
 * 0 when suspended (KubeRay). */
int64_t fq_ray_worker_pods(const struct fq_ray_worker_group *g);

enum fq_submission_mode {
    FQ_SUBMIT_K8S_JOB = 0, /* K8sJobMode, default */
    FQ_SUBMIT_HTTP,
    FQ_SUBMIT_INTERACTIVE,
    FQ_SUBMIT_SIDECAR,
};

struct fq_rayjob {
    struct fq_meta meta;
    const char *entrypoint;
    const char *runtime_env_yaml;
    const char *job_id; /* spec.jobId, or NULL */
    enum fq_submission_mode submission_mode;
    bool shutdown_after_job_finishes;
    int64_t ttl_seconds_after_finished; /* default 0 */
    bool has_active_deadline;
    int64_t active_deadline_seconds;
    int64_t backoff_limit; /* default 0 */
    bool suspend;
    struct fq_kvs cluster_selector;
    bool has_submitter_template;
    struct fq_podtemplate submitter_template;
    int64_t submitter_backoff_limit; /* submitterConfig.backoffLimit, 2 */
    bool has_cluster_spec;
    struct fq_raycluster_spec cluster; /* rayClusterSpec */
    /* status */
    const char *job_status;            /* "", PENDING, RUNNING, ... */
    const char *job_deployment_status; /* "", Initializing, Running, ... */
    const char *ray_cluster_name;
    const char *status_job_id;
    struct fq_objmem *mem;
};

struct fq_raycluster {
    struct fq_meta meta;
    struct fq_raycluster_spec spec;
    bool suspend;
    const char *state; /* status.state: "ready", "suspended", ... */
    struct fq_objmem *mem;
};

/* --- batch/v1, v1 ----------------------------------------------------------- */

struct fq_job {
    struct fq_meta meta;
    int64_t parallelism;   /* default 1 */
    int64_t completions;   /* default 1 (0 allowed) */
    int64_t backoff_limit; /* default 6 */
    bool has_active_deadline;
    int64_t active_deadline_seconds;
    bool suspend;
    bool indexed; /* completionMode Indexed */
    bool has_ttl;
    int64_t ttl_seconds_after_finished;
    struct fq_podtemplate template; /* restartPolicy Never or OnFailure */
    /* status */
    int64_t active, succeeded, failed;
    struct fq_conditions conditions;
    struct fq_objmem *mem;
};

struct fq_configmap {
    struct fq_meta meta;
    struct fq_kvs data;
    struct fq_kvs binary_data; /* base64 text */
    bool immutable;
    struct fq_objmem *mem;
};

struct fq_pod {
    struct fq_meta meta;
    struct fq_podspec spec;
    const char *phase; /* status.phase: Pending, Running, Succeeded, ... */
    const char *pod_ip;
    const char *host_ip;
    struct fq_conditions conditions;
    struct fq_objmem *mem;
};

struct fq_node {
    struct fq_meta meta;
    bool unschedulable;
    struct fq_taint *taints;
    size_t n_taints;
    const char *provider_id;
    struct fq_resources capacity;    /* status.capacity */
    struct fq_resources allocatable; /* status.allocatable */
    struct fq_conditions conditions;
    struct fq_objmem *mem;
};

struct fq_event {
    struct fq_meta meta;
    const char *involved_kind; /* involvedObject.* (required) */
    const char *involved_name;
    const char *involved_namespace;
    const char *involved_uid;
    const char *reason;
    const char *message;
    const char *type; /* "Normal" (default) or "Warning" */
    int64_t count;    /* default 1 */
    const char *first_timestamp;
    const char *last_timestamp;
    const char *source_component;
    struct fq_objmem *mem;
};

struct fq_namespace {
    struct fq_meta meta;
    const char *phase; /* status.phase */
    struct fq_objmem *mem;
};

/* --- flexq.dev/v1alpha1 ------------------------------------------------------ */

/*
 * NodePool and CapacityModel belong to the capacity module, which decodes
 * them next to the machine catalog: include/flexq/nodepool.h
 * (fq_nodepool_decode, fq_nodepool_validate) and include/flexq/cloud.h
 * (fq_cloud_validate). fq_object_validate checks their metadata here and
 * finds those validators for the spec through the kinds registry
 * (fq_kind_spec_validator). Their shapes:
 *
 * NodePool: a GKE node pool, fields named after the gcloud flags of
 * `gcloud container node-pools create`:
 *
 *   spec:
 *     cluster: tpu-cluster              # --cluster (informational)
 *     location: us-east5-b              # --location / --zone
 *     machineType: ct6e-standard-4t     # --machine-type (required)
 *     tpuTopology: 4x4                  # --tpu-topology
 *     initialNodeCount: 0               # --num-nodes
 *     autoscaling:                      # --enable-autoscaling
 *       enabled: true
 *       minNodeCount: 0                 # --min-nodes
 *       maxNodeCount: 4                 # --max-nodes
 *     reservationAffinity: none         # --reservation-affinity
 *     flexStart: true                   # --flex-start
 *     queuedProvisioning: {enabled: true}  # --enable-queued-provisioning
 *     spot: false                       # --spot
 *     labels: {k: v}                    # --node-labels
 *     taints: [{key, value, effect}]    # --node-taints
 *
 * CapacityModel: the simulated cloud behind the `sim` provider.
 *
 *   spec:
 *     timeScale: 1                 # divide every duration (demos: 60)
 *     zones:
 *     - name: us-east5-b
 *       machineTypes:
 *       - name: ct6e-standard-4t
 *         bootSeconds: 90          # node boot latency (default 60)
 *         onDemand:
 *           hosts: 8               # stock of hosts available on demand
 *           schedule:              # stock changes (stockouts), in order
 *           - {at: 3600, hosts: 0} # at: seconds since start, or "1h30m"
 *           - {at: 7200, hosts: 8}
 *         flexStart:
 *           hosts: 64                 # stock for flex-start
 *           waitSeconds: 600          # or {min, max}, {mean}, ...
 *           schedule: [{at, hosts}]   # capacity arrivals instead of waits
 *           maxWaitSeconds: 604800    # request expires (Failed/Expired)
 *           maxRunSeconds: 604800     # nodes revoked after this
 *           bookingSeconds: 600       # Provisioned -> BookingExpired
 *         prices: {onDemand: "10.50", flexStart: "4.94", spot: "3.15"}
 *
 * cloud.h is the authority on the CapacityModel's details.
 */

/* --- per-kind decode / release -------------------------------------------- */

/* clang-format off */
#define FQ_OBJECT_KINDS(X) \
    X(resourceflavor) \
    X(clusterqueue) \
    X(cohort) \
    X(localqueue) \
    X(workload) \
    X(workloadpriorityclass) \
    X(admissioncheck) \
    X(provisioningrequestconfig) \
    X(provisioningrequest) \
    X(rayjob) \
    X(raycluster) \
    X(job) \
    X(configmap) \
    X(pod) \
    X(node) \
    X(event) \
    X(namespace)

#define FQ_OBJECT_DECLARE(k) \
    int fq_##k##_decode(const struct fq_value *obj, const char *file, \
                        struct fq_##k *out, struct fq_errlist *errs); \
    void fq_##k##_release(struct fq_##k *v);
FQ_OBJECT_KINDS(FQ_OBJECT_DECLARE)
#undef FQ_OBJECT_DECLARE

/* clang-format on */

/* The parts of a Workload's status, for fq_workload_status_decode. */
enum fq_wl_status_part {
    FQ_WL_CONDITIONS = 1 << 0,
    FQ_WL_ADMISSION = 1 << 1, /* has_admission, ..., assignments */
    FQ_WL_CHECKS = 1 << 2,    /* check_states */
    FQ_WL_REQUEUE = 1 << 3,   /* has_requeue_state, ... */
    FQ_WL_STATUS_ALL = (1 << 4) - 1
};

/*
 * Some `parts` (enum fq_wl_status_part) of a Workload's status alone,
 * decoded and checked as fq_workload_decode does; everything else in *out
 * is zero. For a controller that has the spec's view already, sees only
 * the status move, and reads the rest another way (kueue reads the
 * conditions from the tree, and keeps a view of each distinct admission).
 * Release with fq_workload_release.
 */
int fq_workload_status_decode(const struct fq_value *obj, unsigned parts,
                              struct fq_workload *out);

/*
 * A Workload decoded as fq_workload_decode does, but for spec.podSets,
 * which is neither read nor checked (podsets is NULL, n_podsets 0): for a
 * controller that keeps its own view of each distinct podSets subtree it
 * has decoded before, templates being most of a Workload's decode.
 * Release with fq_workload_release.
 */
int fq_workload_decode_no_podsets(const struct fq_value *obj,
                                  struct fq_workload *out);

/* --- whole objects ---------------------------------------------------------- */

/*
 * Validates any object: resolves apiVersion/kind (an unknown kind is an
 * error naming the closest known kind; a known kind at a version flexq does
 * not serve names the versions it does), then runs that kind's decoder.
 * Returns 0 or FQ_EINVAL; every problem is appended to `errs` (may be
 * NULL). `file` labels the messages (NULL: no location prefix).
 */
int fq_object_validate(const struct fq_value *obj, const char *file,
                       struct fq_errlist *errs);

/*
 * Fills in what the API server defaults on a v1 Service being stored
 * (objects_service.c): type ClusterIP, sessionAffinity, each port's
 * protocol and targetPort, the IP family fields, and spec.clusterIP: the
 * one `old` (the stored version, may be NULL) has, else the lowest free
 * address of 10.96.0.0/12 among the Services in `s` (borrowed). Returns 0,
 * or FQ_EBUSY when the range is full.
 */
struct fq_objstore;
int fq_service_defaults(struct fq_value *svc, const struct fq_objstore *s,
                        const struct fq_value *old);

/*
 * What the API server does to a v1 Secret it stores: `type` defaults to
 * Opaque, stringData is merged into data (base64-encoded, its values
 * winning) and dropped. With old (the stored Secret, or NULL) it refuses,
 * FQ_EINVAL with err set, a change of type and, once old is immutable,
 * any change of data or unsetting immutable. Returns 0.
 */
int fq_secret_defaults(struct fq_value *obj, const struct fq_value *old,
                       struct fq_err *err);

/*
 * Reads an object's identity without validating the rest: *kind from
 * apiVersion/kind (FQ_KIND_NONE if unknown), *ns from metadata.namespace
 * (NULL when absent), *name from metadata.name (NULL when absent). Any out
 * pointer may be NULL. Strings are borrowed from `obj`. Returns 0, or
 * FQ_EINVAL when the kind is unknown or the name is missing.
 */
int fq_object_meta(const struct fq_value *obj, enum fq_kind *kind,
                   const char **ns, const char **name);

/* --- name rules, for other modules (CLI flags, API paths) ----------------- */

/* Each returns NULL when `s` is valid, else a static reason ("must be no
 * more than 63 characters", ...). */
const char *fq_check_dns1123_label(const char *s);     /* <= 63 */
const char *fq_check_dns1123_subdomain(const char *s); /* <= 253 */
const char *fq_check_dns1035_label(const char *s);     /* starts alpha */
const char *fq_check_qualified_name(const char *s);    /* label keys */
const char *fq_check_label_value(const char *s);

#endif
