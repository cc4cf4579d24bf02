/*
 * objects_core.c - decoders (= validators) of the Kubernetes kinds flexq
 * keeps: Job (batch/v1), ConfigMap, Secret, Pod, Node, Event, Namespace
 * (v1).
 *
 * The rules are Kubernetes' own, reduced to what flexq reads: a Job's pod
 * template restarts Never or OnFailure; Indexed needs completions; a
 * ConfigMap's keys are config keys, never in both data and binaryData, the
 * whole at most 1 MiB; a Secret's data values are base64 (Go's strict
 * StdEncoding), its keys config keys, at most 1 MiB decoded with
 * stringData, the keys its well-known type needs present (stringData is
 * merged into data by fq_secret_defaults on write, type defaults to
 * Opaque, and type and an immutable Secret's data cannot change); an
 * Event names the object it is about; a Namespace name is a DNS-1123
 * label. Status sections, written by controllers, are
 * decoded leniently (types only).
 *
 * Every field is read through a row of fq_core_fields (below; fields.h),
 * which schema.c also publishes as OpenAPI.
 */
#include <string.h>

#include "flexq/base64.h"
#include "flexq/buf.h"
#include "flexq/paths.h"
#include "objects/fields.h"
#include "objects/objects_internal.h"

/* --- the field table ------------------------------------------------------
 *
 * Every field these decoders read (fields.h), checked through its row and
 * published by schema.c. The PodSpec rows (POD_SPEC_TABLE, under a Pod's
 * spec and a Job's template) describe what decode_podspec in
 * objects_common.c checks with code of its own; tests/unit/test_fields.c
 * probes them like the others.
 */
#define K_JOB FK(FQ_KIND_JOB)
#define K_CM  FK(FQ_KIND_CONFIGMAP)
#define K_POD FK(FQ_KIND_POD)
#define K_NOD FK(FQ_KIND_NODE)
#define K_EV  FK(FQ_KIND_EVENT)
#define K_NS  FK(FQ_KIND_NAMESPACE)
#define K_SEC FK(FQ_KIND_SECRET)
#define I32P  0, FQ_INT32_MAX
#define CTR   "containers[]."

static const char *const job_mode_names[] = {"NonIndexed", "Indexed", NULL};
static const char *const event_type_names[] = {"Normal", "Warning", NULL};

enum podspec_row {
    PS_NAME,
    PS_IMAGE,
    PS_COMMAND,
    PS_ARGS,
    PS_ENV,
    PS_PORTS,
    PS_REQUESTS,
    PS_LIMITS,
    PS_MOUNTS,
    PS_VOLUMES,
    PS_NODE_SELECTOR,
    PS_TOLERATIONS,
    PS_RESTART,
    PS_PRIORITY_CLASS,
    PODSPEC_ROWS
};

enum core_row {
    J_SPEC,
    J_PARALLELISM,
    J_COMPLETIONS,
    J_BACKOFF,
    J_DEADLINE,
    J_SUSPEND,
    J_MODE,
    J_TTL,
    J_SELECTOR,
    J_TEMPLATE,
    J_TEMPLATE_META,
    J_PODSPEC, /* PODSPEC_ROWS rows */
    J_STATUS = J_PODSPEC + PODSPEC_ROWS,
    J_ST_ACTIVE,
    J_ST_SUCCEEDED,
    J_ST_FAILED,
    J_ST_COND,
    J_ST_START,
    J_ST_COMPLETION,
    CM_DATA,
    CM_BINARY,
    CM_IMMUTABLE,
    S_DATA,
    S_STRING_DATA,
    S_TYPE,
    S_IMMUTABLE,
    P_SPEC,
    P_PODSPEC, /* PODSPEC_ROWS rows */
    P_NODE_NAME = P_PODSPEC + PODSPEC_ROWS,
    P_STATUS,
    P_ST_PHASE,
    P_ST_POD_IP,
    P_ST_HOST_IP,
    P_ST_COND,
    P_ST_START,
    P_ST_CS,
    P_ST_CS_NAME,
    P_ST_CS_IMAGE,
    P_ST_CS_IMAGE_ID,
    P_ST_CS_ID,
    P_ST_CS_READY,
    P_ST_CS_STARTED,
    P_ST_CS_RESTARTS,
    P_ST_CS_STATE,
    P_ST_CS_LAST,
    N_SPEC,
    N_UNSCHEDULABLE,
    N_TAINTS,
    N_PROVIDER,
    N_STATUS,
    N_CAPACITY,
    N_ALLOCATABLE,
    N_COND,
    N_ADDRESSES,
    E_INVOLVED,
    E_INV_KIND,
    E_INV_NAME,
    E_INV_NS,
    E_INV_UID,
    E_REASON,
    E_MESSAGE,
    E_TYPE,
    E_COUNT,
    E_FIRST,
    E_LAST,
    E_SOURCE,
    E_SOURCE_COMP,
    NS_SPEC,
    NS_STATUS,
    NS_ST_PHASE,
    CORE_ROWS
};

#define F(row) (&fq_core_fields[row])

/* The PodSpec's rows at index `base`, paths under prefix P. */
#define POD_SPEC_TABLE(base, K, P)                                          \
 [base +                                                                    \
     PS_NAME] = {K,                                                         \
                 P CTR "name",                                              \
                 FT_STR,                                                    \
                 0,                                                         \
                 0,                                                         \
                 0,                                                         \
                 0,                                                         \
                 0,                                                         \
                 NULL,                                                      \
                 NULL,                                                      \
                 "Name of the container (DNS label), unique in the "        \
                 "pod."},                                                   \
     [base + PS_IMAGE] =                                                    \
         {K,    P CTR "image",          FT_STR, 0, 0, 0, 0, 0, NULL,        \
          NULL, "Container image name."},                                   \
     [base + PS_COMMAND] =                                                  \
         {K,    P CTR "command",    FT_STRS, 0, 0, 0, 0, 0, NULL,           \
          NULL, "Entrypoint array."},                                       \
     [base + PS_ARGS] = {K,                                                 \
                         P CTR "args",                                      \
                         FT_STRS,                                           \
                         0,                                                 \
                         0,                                                 \
                         0,                                                 \
                         0,                                                 \
                         0,                                                 \
                         NULL,                                              \
                         NULL,                                              \
                         "Arguments to the entrypoint."},                   \
     [base + PS_ENV] = {K,                                                  \
                        P CTR "env",                                        \
                        FT_OBJS,                                            \
                        0,                                                  \
                        0,                                                  \
                        0,                                                  \
                        0,                                                  \
                        0,                                                  \
                        NULL,                                               \
                        NULL,                                               \
                        "Environment variables (merged by name)."},         \
     [base + PS_PORTS] = {K,                                                \
                          P CTR "ports",                                    \
                          FT_OBJS,                                          \
                          0,                                                \
                          0,                                                \
                          0,                                                \
                          0,                                                \
                          0,                                                \
                          NULL,                                             \
                          NULL,                                             \
                          "Ports to expose (merged by containerPort)."},    \
     [base + PS_REQUESTS] = {K,                                             \
                             P CTR "resources.requests",                    \
                             FT_OBJ,                                        \
                             0,                                             \
                             0,                                             \
                             0,                                             \
                             0,                                             \
                             0,                                             \
                             NULL,                                          \
                             NULL,                                          \
                             "Minimum compute resources (cpu, memory, "     \
                             "google.com/tpu, nvidia.com/gpu)."},           \
     [base + PS_LIMITS] =                                                   \
         {K,    P CTR "resources.limits",    FT_OBJ, 0, 0, 0, 0, 0, NULL,   \
          NULL, "Maximum compute resources."},                              \
     [base + PS_MOUNTS] = {K,                                               \
                           P CTR "volumeMounts",                            \
                           FT_OBJS,                                         \
                           0,                                               \
                           0,                                               \
                           0,                                               \
                           0,                                               \
                           0,                                               \
                           NULL,                                            \
                           NULL,                                            \
                           "Volumes mounted into the container (merged by " \
                           "mountPath)."},                                  \
     [base + PS_VOLUMES] = {K,                                              \
                            P "volumes",                                    \
                            FT_OBJS,                                        \
                            0,                                              \
                            0,                                              \
                            0,                                              \
                            0,                                              \
                            0,                                              \
                            NULL,                                           \
                            NULL,                                           \
                            "Volumes the containers may mount (merged by "  \
                            "name)."},                                      \
     [base + PS_NODE_SELECTOR] = {K,                                        \
                                  P "nodeSelector",                         \
                                  FT_KVS,                                   \
                                  0,                                        \
                                  KVS_ANY,                                  \
                                  0,                                        \
                                  0,                                        \
                                  0,                                        \
                                  NULL,                                     \
                                  NULL,                                     \
                                  "Labels a node must have for the pod to " \
                                  "fit."},                                  \
     [base + PS_TOLERATIONS] = {K,                                          \
                                P "tolerations",                            \
                                FT_OBJS,                                    \
                                0,                                          \
                                0,                                          \
                                0,                                          \
                                0,                                          \
                                0,                                          \
                                NULL,                                       \
                                NULL,                                       \
                                "Taints the pod tolerates."},               \
     [base + PS_RESTART] = {K,                                              \
                            P "restartPolicy",                              \
                            FT_STR,                                         \
                            0,                                              \
                            0,                                              \
                            0,                                              \
                            0,                                              \
                            0,                                              \
                            NULL,                                           \
                            NULL,                                           \
                            "Always, OnFailure or Never."},                 \
     [base + PS_PRIORITY_CLASS] = {                                         \
         K,    P "priorityClassName",      FT_STR, 0, 0, 0, 0, 0, NULL,     \
         NULL, "The pod's priority class."}

#define SERVER_STR(K, path, desc)                          \
 {                                                         \
  K, path, FT_STR, FF_SERVER, 0, 0, 0, 0, NULL, NULL, desc \
 }

const struct fq_field fq_core_fields[CORE_ROWS + 1] = {
    /* Job */
    [J_SPEC] = {K_JOB, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                "Specification of the desired behavior of a job."},
    [J_PARALLELISM] = {K_JOB, "spec.parallelism", FT_INT, 0, 0, 1, I32P, NULL,
                       NULL, "Most pods running at once."},
    [J_COMPLETIONS] = {K_JOB, "spec.completions", FT_INT, 0, 0, 1, I32P, NULL,
                       NULL, "Successful pods needed."},
    [J_BACKOFF] = {K_JOB, "spec.backoffLimit", FT_INT, 0, 0, 6, I32P, NULL,
                   NULL, "Retries before the job fails."},
    [J_DEADLINE] = {K_JOB, "spec.activeDeadlineSeconds", FT_INT, 0, 0, 0, 1,
                    INT64_MAX, NULL, NULL, "Longest run before the job fails."},
    [J_SUSPEND] = {K_JOB, "spec.suspend", FT_BOOL, 0, 0, 0, 0, 0, NULL, NULL,
                   "Suspended jobs create no pods."},
    [J_MODE] = {K_JOB, "spec.completionMode", FT_ENUM, 0, 0, 0, 0, 0,
                job_mode_names, NULL,
                "NonIndexed or Indexed (Indexed needs completions)."},
    [J_TTL] = {K_JOB, "spec.ttlSecondsAfterFinished", FT_INT, 0, 0, 0, I32P,
               NULL, NULL, "Seconds before a finished job is deleted."},
    [J_SELECTOR] = {K_JOB, "spec.selector", FT_OBJ, FF_SERVER, 0, 0, 0, 0, NULL,
                    NULL,
                    "Label query over the job's pods (controller-uid, set "
                    "by the server)."},
    [J_TEMPLATE] = {K_JOB, "spec.template", FT_OBJ, FF_REQUIRED, 0, 0, 0, 0,
                    NULL, NULL,
                    "The pods the job creates (restartPolicy Never or "
                    "OnFailure)."},
    [J_TEMPLATE_META] = {K_JOB, "spec.template.metadata", FT_OBJ, 0, 0, 0, 0, 0,
                         NULL, NULL, "The pods' labels and annotations."},
    POD_SPEC_TABLE(J_PODSPEC, K_JOB, "spec.template.spec."),
    [J_STATUS] = {K_JOB, "status", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                  "Current status of a job."},
    [J_ST_ACTIVE] = {K_JOB, "status.active", FT_INT, 0, 0, 0, 0, INT64_MAX,
                     NULL, NULL, "Running pods."},
    [J_ST_SUCCEEDED] = {K_JOB, "status.succeeded", FT_INT, 0, 0, 0, 0,
                        INT64_MAX, NULL, NULL, "Pods that succeeded."},
    [J_ST_FAILED] = {K_JOB, "status.failed", FT_INT, 0, 0, 0, 0, INT64_MAX,
                     NULL, NULL, "Pods that failed."},
    [J_ST_COND] = {K_JOB, "status.conditions", FT_OBJS, 0, 0, 0, 0, 0, NULL,
                   NULL, "Complete, Failed, Suspended ..."},
    [J_ST_START] =
        SERVER_STR(K_JOB, "status.startTime", "When the job started."),
    [J_ST_COMPLETION] =
        SERVER_STR(K_JOB, "status.completionTime", "When the job completed."),
    /* ConfigMap */
    [CM_DATA] = {K_CM, "data", FT_KVS, 0, KVS_CONFIG, 0, 0, 0, NULL, NULL,
                 "Configuration data (UTF-8 strings); with binaryData at "
                 "most 1 MiB."},
    [CM_BINARY] = {K_CM, "binaryData", FT_KVS, 0, KVS_CONFIG, 0, 0, 0, NULL,
                   NULL, "Binary data, base64-encoded; keys not in data."},
    [CM_IMMUTABLE] = {K_CM, "immutable", FT_BOOL, 0, 0, 0, 0, 0, NULL, NULL,
                      "If true, data cannot be changed."},
    /* Secret */
    [S_DATA] = {K_SEC, "data", FT_KVS, 0, KVS_CONFIG, 0, 0, 0, NULL, NULL,
                "Secret data, each value base64-encoded; at most 1 MiB "
                "decoded."},
    [S_STRING_DATA] = {K_SEC, "stringData", FT_KVS, 0, KVS_CONFIG, 0, 0, 0,
                       NULL, NULL,
                       "Write-only plain-text data, merged into data (its "
                       "values win) when stored; never read back."},
    [S_TYPE] = {K_SEC, "type", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                "Used to facilitate programmatic handling of secret data "
                "(default Opaque)."},
    [S_IMMUTABLE] = {K_SEC, "immutable", FT_BOOL, 0, 0, 0, 0, 0, NULL, NULL,
                     "If true, data cannot be changed."},
    /* Pod */
    [P_SPEC] = {K_POD, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                "Specification of the desired behavior of the pod."},
    POD_SPEC_TABLE(P_PODSPEC, K_POD, "spec."),
    [P_NODE_NAME] =
        SERVER_STR(K_POD, "spec.nodeName", "The node the pod is bound to."),
    [P_STATUS] = {K_POD, "status", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                  "Most recently observed status of the pod."},
    [P_ST_PHASE] = {K_POD, "status.phase", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                    "Pending, Running, Succeeded, Failed or Unknown."},
    [P_ST_POD_IP] = {K_POD, "status.podIP", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                     "IP of the pod."},
    [P_ST_HOST_IP] = {K_POD, "status.hostIP", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                      "IP of the pod's node."},
    [P_ST_COND] = {K_POD, "status.conditions", FT_OBJS, 0, 0, 0, 0, 0, NULL,
                   NULL, "PodScheduled, Initialized, ContainersReady, Ready."},
    [P_ST_START] = SERVER_STR(K_POD, "status.startTime",
                              "When the kubelet acknowledged the pod."),
    [P_ST_CS] = {K_POD, "status.containerStatuses", FT_OBJS, FF_SERVER, 0, 0, 0,
                 0, NULL, NULL, "The state of each container."},
    [P_ST_CS_NAME] =
        SERVER_STR(K_POD, "status.containerStatuses[].name", "The container."),
    [P_ST_CS_IMAGE] = SERVER_STR(K_POD, "status.containerStatuses[].image",
                                 "The image it runs."),
    [P_ST_CS_IMAGE_ID] = SERVER_STR(K_POD, "status.containerStatuses[].imageID",
                                    "The image's ID."),
    [P_ST_CS_ID] = SERVER_STR(K_POD, "status.containerStatuses[].containerID",
                              "The container's ID."),
    [P_ST_CS_READY] = {K_POD, "status.containerStatuses[].ready", FT_BOOL,
                       FF_SERVER, 0, 0, 0, 0, NULL, NULL,
                       "Passed its readiness probe."},
    [P_ST_CS_STARTED] = {K_POD, "status.containerStatuses[].started", FT_BOOL,
                         FF_SERVER, 0, 0, 0, 0, NULL, NULL, "Started."},
    [P_ST_CS_RESTARTS] = {K_POD, "status.containerStatuses[].restartCount",
                          FT_INT, FF_SERVER, 0, 0, 0, INT64_MAX, NULL, NULL,
                          "Restarts."},
    [P_ST_CS_STATE] = {K_POD, "status.containerStatuses[].state", FT_OBJ,
                       FF_SERVER, 0, 0, 0, 0, NULL, NULL,
                       "waiting, running or terminated."},
    [P_ST_CS_LAST] = {K_POD, "status.containerStatuses[].lastState", FT_OBJ,
                      FF_SERVER, 0, 0, 0, 0, NULL, NULL,
                      "The previous termination."},
    /* Node */
    [N_SPEC] = {K_NOD, "spec", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                "Spec defines the behavior of a node."},
    [N_UNSCHEDULABLE] = {K_NOD, "spec.unschedulable", FT_BOOL, 0, 0, 0, 0, 0,
                         NULL, NULL, "Cordoned: no new pods."},
    [N_TAINTS] = {K_NOD, "spec.taints", FT_OBJS, 0, 0, 0, 0, 0, NULL, NULL,
                  "Taints of the node."},
    [N_PROVIDER] = {K_NOD, "spec.providerID", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                    "The cloud's ID of the node."},
    [N_STATUS] = {K_NOD, "status", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                  "Most recently observed status of the node."},
    [N_CAPACITY] = {K_NOD, "status.capacity", FT_OBJ, 0, 0, 0, 0, 0, NULL, NULL,
                    "Total resources of the node."},
    [N_ALLOCATABLE] = {K_NOD, "status.allocatable", FT_OBJ, 0, 0, 0, 0, 0, NULL,
                       NULL, "Resources available to pods."},
    [N_COND] = {K_NOD, "status.conditions", FT_OBJS, 0, 0, 0, 0, 0, NULL, NULL,
                "Ready ..."},
    [N_ADDRESSES] = {K_NOD, "status.addresses", FT_OBJS, FF_SERVER, 0, 0, 0, 0,
                     NULL, NULL, "The node's addresses."},
    /* Event */
    [E_INVOLVED] = {K_EV, "involvedObject", FT_MAP, FF_REQUIRED, 0, 0, 0, 0,
                    NULL, NULL, "The object this event is about."},
    [E_INV_KIND] = {K_EV, "involvedObject.kind", FT_STR, FF_REQUIRED, 0, 0, 0,
                    0, NULL, NULL, "Kind of the object."},
    [E_INV_NAME] = {K_EV, "involvedObject.name", FT_STR, FF_REQUIRED, 0, 0, 0,
                    0, NULL, NULL, "Name of the object."},
    [E_INV_NS] = {K_EV, "involvedObject.namespace", FT_STR, 0, 0, 0, 0, 0, NULL,
                  NULL, "Namespace of the object."},
    [E_INV_UID] = {K_EV, "involvedObject.uid", FT_STR, 0, 0, 0, 0, 0, NULL,
                   NULL, "UID of the object."},
    [E_REASON] = {K_EV, "reason", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                  "Short, machine-readable reason."},
    [E_MESSAGE] = {K_EV, "message", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                   "Human-readable description."},
    [E_TYPE] = {K_EV, "type", FT_ENUM, 0, 0, 0, 0, 0, event_type_names, NULL,
                "Normal or Warning."},
    [E_COUNT] = {K_EV, "count", FT_INT, 0, 0, 1, I32P, NULL, NULL,
                 "Times this event occurred."},
    [E_FIRST] = {K_EV, "firstTimestamp", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                 "First time recorded."},
    [E_LAST] = {K_EV, "lastTimestamp", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                "Last time recorded."},
    [E_SOURCE] = {K_EV, "source", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                  "The component reporting the event."},
    [E_SOURCE_COMP] = {K_EV, "source.component", FT_STR, 0, 0, 0, 0, 0, NULL,
                       NULL, "The component."},
    /* Namespace */
    [NS_SPEC] = {K_NS, "spec", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                 "Spec defines the behavior of the Namespace."},
    [NS_STATUS] = {K_NS, "status", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                   "Status describes the current status of a Namespace."},
    [NS_ST_PHASE] = {K_NS, "status.phase", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                     "Active or Terminating."},
};

/* --- Job ------------------------------------------------------------------- */

int fq_job_decode(const struct fq_value *obj, const char *file,
                  struct fq_job *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_JOB, &out->mem, &out->meta) ==
        0) {
        check_kueue_labels(&c, &out->meta);
        const struct fq_value *spec = fld_map(&c, obj, F(J_SPEC));
        size_t old = path_key(&c, "spec");
        out->parallelism = fld_int(&c, spec, F(J_PARALLELISM), NULL);
        bool has_completions = false;
        out->completions =
            fld_int(&c, spec, F(J_COMPLETIONS), &has_completions);
        out->backoff_limit = fld_int(&c, spec, F(J_BACKOFF), NULL);
        out->active_deadline_seconds =
            fld_int(&c, spec, F(J_DEADLINE), &out->has_active_deadline);
        out->suspend = fld_bool(&c, spec, F(J_SUSPEND));
        out->indexed = fld_enum(&c, spec, F(J_MODE)) == 1;
        if (out->indexed && spec && !has_completions &&
            !field(spec, "completions"))
            derr_key(&c, field(spec, "completionMode"), "completionMode",
                     "Indexed needs spec.completions");
        out->ttl_seconds_after_finished =
            fld_int(&c, spec, F(J_TTL), &out->has_ttl);
        if (spec)
            want_podtemplate(&c, spec, fld_key(F(J_TEMPLATE)), true,
                             &out->template);
        const struct fq_value *tspec =
            fq_value_path(field(spec, "template"), "spec");
        if (tspec && tspec->type == FQ_V_MAP) {
            const struct fq_value *rp = field(tspec, "restartPolicy");
            size_t o2 = path_key(&c, "template");
            path_key(&c, "spec");
            if (!rp)
                derr_key(&c, tspec, "restartPolicy",
                         "required field is missing (a Job's pods restart "
                         "Never or OnFailure)");
            else if (rp->type == FQ_V_STR && strcmp(rp->u.str.s, "Always") == 0)
                derr_key(&c, rp, "restartPolicy",
                         "unsupported value \"Always\": must be one of "
                         "OnFailure, Never");
            path_pop(&c, o2);
        }
        path_pop(&c, old);
        const struct fq_value *st = fld_map(&c, obj, F(J_STATUS));
        if (st) {
            size_t o2 = path_key(&c, "status");
            out->active = fld_int(&c, st, F(J_ST_ACTIVE), NULL);
            out->succeeded = fld_int(&c, st, F(J_ST_SUCCEEDED), NULL);
            out->failed = fld_int(&c, st, F(J_ST_FAILED), NULL);
            want_conditions(&c, st, fld_key(F(J_ST_COND)), &out->conditions);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_job_release(struct fq_job *v)
{
    objmem_free(&v->mem);
}

/* --- ConfigMap ------------------------------------------------------------- */

#define CONFIGMAP_MAX (1024 * 1024)

int fq_configmap_decode(const struct fq_value *obj, const char *file,
                        struct fq_configmap *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_CONFIGMAP, &out->mem,
                   &out->meta) == 0) {
        fld_kvs(&c, obj, F(CM_DATA), &out->data);
        fld_kvs(&c, obj, F(CM_BINARY), &out->binary_data);
        out->immutable = fld_bool(&c, obj, F(CM_IMMUTABLE));
        size_t total = 0;
        for (size_t i = 0; i < out->data.n; i++)
            total += strlen(out->data.items[i].key) +
                     strlen(out->data.items[i].value);
        for (size_t i = 0; i < out->binary_data.n; i++) {
            const char *k = out->binary_data.items[i].key;
            total += strlen(k) + strlen(out->binary_data.items[i].value);
            if (fq_kvs_get(&out->data, k)) {
                size_t old = path_key(&c, "binaryData");
                derr_key(&c, fq_map_get(field(obj, "binaryData"), k), k,
                         "key \"%s\" is also in data", k);
                path_pop(&c, old);
            }
        }
        if (total > CONFIGMAP_MAX)
            derr(&c, field(obj, "data"),
                 "data and binaryData hold %zu bytes; a ConfigMap holds at "
                 "most %d",
                 total, CONFIGMAP_MAX);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_configmap_release(struct fq_configmap *v)
{
    objmem_free(&v->mem);
}

/* --- Secret ---------------------------------------------------------------- */

#define SECRET_MAX      (1024 * 1024) /* decoded bytes, as the API server */
#define SECRET_TYPE_MAX 253
#define SA_NAME_ANN     "kubernetes.io/service-account.name"

struct secret_view {
    struct fq_meta meta;
    struct fq_objmem *mem;
};

/* The types the API server checks the keys of: each needs all its keys,
 * or (any) one of them. */
static const struct {
    const char *type;
    const char *keys[2];
    bool any;
} secret_types[] = {
    {"kubernetes.io/dockercfg", {".dockercfg", NULL}, false},
    {"kubernetes.io/dockerconfigjson", {".dockerconfigjson", NULL}, false},
    {"kubernetes.io/basic-auth", {"username", "password"}, true},
    {"kubernetes.io/ssh-auth", {"ssh-privatekey", NULL}, false},
    {"kubernetes.io/tls", {"tls.crt", "tls.key"}, false},
};

/* Is key in data or stringData? */
static bool secret_has(const struct fq_kvs *data, const struct fq_kvs *sd,
                       const char *key)
{
    return fq_kvs_get(data, key) || fq_kvs_get(sd, key);
}

static void secret_type_keys(struct dctx *c, const struct fq_value *obj,
                             const char *type, const struct fq_kvs *data,
                             const struct fq_kvs *sd)
{
    if (!strcmp(type, "kubernetes.io/service-account-token")) {
        if (!fq_value_as_str(
                fq_map_get(fq_meta_annotations(obj), SA_NAME_ANN))) {
            size_t old = path_key(c, "metadata");
            size_t o2 = path_key(c, "annotations");
            derr_key(c, field(obj, "metadata"), SA_NAME_ANN,
                     "Required value (a Secret of type %s needs it)", type);
            path_pop(c, o2);
            path_pop(c, old);
        }
        return;
    }
    for (size_t t = 0; t < sizeof(secret_types) / sizeof(secret_types[0]);
         t++) {
        if (strcmp(type, secret_types[t].type) != 0)
            continue;
        const char *const *k = secret_types[t].keys;
        bool one =
            secret_has(data, sd, k[0]) || (k[1] && secret_has(data, sd, k[1]));
        size_t old = path_key(c, "data");
        for (int i = 0; i < 2 && k[i]; i++)
            if (secret_types[t].any ? !one : !secret_has(data, sd, k[i]))
                derr_key(c, field(obj, "data") ? field(obj, "data") : obj, k[i],
                         "Required value (a Secret of type %s needs it)", type);
        path_pop(c, old);
    }
}

int fq_secret_validate(const struct fq_value *obj, const char *file,
                       struct fq_errlist *errs)
{
    struct dctx c;
    struct secret_view out;
    memset(&out, 0, sizeof(out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_SECRET, &out.mem, &out.meta) ==
        0) {
        struct fq_kvs data = {0}, sd = {0};
        fld_kvs(&c, obj, F(S_DATA), &data);
        fld_kvs(&c, obj, F(S_STRING_DATA), &sd);
        const char *type = fld_str(&c, obj, F(S_TYPE));
        (void)fld_bool(&c, obj, F(S_IMMUTABLE));
        size_t total = 0;
        size_t old = path_key(&c, "data");
        for (size_t i = 0; i < data.n; i++) {
            size_t bad = 0;
            long n = fq_base64_decode(NULL, data.items[i].value, &bad);
            if (n < 0)
                derr_key(&c, fq_map_get(field(obj, "data"), data.items[i].key),
                         data.items[i].key,
                         "illegal base64 data at input byte %zu", bad);
            else if (!fq_kvs_get(&sd, data.items[i].key))
                total += (size_t)n; /* stringData's value wins */
        }
        path_pop(&c, old);
        for (size_t i = 0; i < sd.n; i++)
            total += strlen(sd.items[i].value);
        if (total > SECRET_MAX)
            derr(&c, field(obj, "data") ? field(obj, "data") : obj,
                 "data: Too long: must have at most %d bytes (data and "
                 "stringData hold %zu)",
                 SECRET_MAX, total);
        if (type && strlen(type) > SECRET_TYPE_MAX)
            derr(&c, field(obj, "type"),
                 "type: must be no more than %d characters", SECRET_TYPE_MAX);
        else if (type && *type)
            secret_type_keys(&c, obj, type, &data, &sd);
    }
    int rc = dctx_end(&c, &out, sizeof(out), &out.mem);
    objmem_free(&out.mem);
    return rc;
}

int fq_secret_defaults(struct fq_value *obj, const struct fq_value *old,
                       struct fq_err *err)
{
    const char *type = fq_value_as_str(fq_map_get(obj, "type"));
    if (!type || !*type)
        fq_map_set(obj, "type", fq_value_str("Opaque"));
    struct fq_value *sd = fq_map_take(obj, "stringData");
    if (sd && sd->type == FQ_V_MAP && sd->u.map.n) {
        struct fq_value *data = fq_map_get(obj, "data");
        if (!data || data->type != FQ_V_MAP) {
            fq_map_set(obj, "data", fq_value_map());
            data = fq_map_get(obj, "data");
        }
        for (size_t i = 0; i < sd->u.map.n; i++) {
            const char *v = fq_value_as_str(sd->u.map.items[i].val);
            struct fq_buf b = FQ_BUF_INIT;
            fq_base64_encode(&b, v ? v : "", v ? strlen(v) : 0);
            fq_map_set(data, sd->u.map.items[i].key,
                       fq_value_str(fq_buf_str(&b)));
            fq_buf_release(&b);
        }
    }
    fq_value_free(sd);
    if (!old)
        return 0;
    const char *was = fq_value_path_str(old, "type", "Opaque");
    const char *now = fq_value_path_str(obj, "type", "Opaque");
    if (strcmp(was, now) != 0)
        return fq_err_set(err, FQ_EINVAL,
                          "Secret \"%s\" is invalid: type: Invalid value: "
                          "\"%s\": field is immutable",
                          fq_meta_name(obj), now);
    if (!fq_value_path_bool(old, "immutable", false))
        return 0;
    if (!fq_value_path_bool(obj, "immutable", false))
        return fq_err_set(err, FQ_EINVAL,
                          "Secret \"%s\" is invalid: immutable: Forbidden: "
                          "field is immutable when `immutable` is set",
                          fq_meta_name(obj));
    const struct fq_value *od = fq_map_get(old, "data");
    const struct fq_value *nd = fq_map_get(obj, "data");
    if (fq_value_len(od) + fq_value_len(nd) > 0 && !fq_value_equal(od, nd))
        return fq_err_set(err, FQ_EINVAL,
                          "Secret \"%s\" is invalid: data: Forbidden: field "
                          "is immutable when `immutable` is set",
                          fq_meta_name(obj));
    return 0;
}

/* --- Pod -------------------------------------------------------------------- */

int fq_pod_decode(const struct fq_value *obj, const char *file,
                  struct fq_pod *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_POD, &out->mem, &out->meta) ==
        0) {
        check_kueue_labels(&c, &out->meta);
        const struct fq_value *spec = fld_map(&c, obj, F(P_SPEC));
        if (spec) {
            size_t old = path_key(&c, "spec");
            decode_podspec(&c, spec, &out->spec);
            path_pop(&c, old);
        }
        const struct fq_value *st = fld_map(&c, obj, F(P_STATUS));
        if (st) {
            size_t o2 = path_key(&c, "status");
            out->phase = fld_str(&c, st, F(P_ST_PHASE));
            out->pod_ip = fld_str(&c, st, F(P_ST_POD_IP));
            out->host_ip = fld_str(&c, st, F(P_ST_HOST_IP));
            want_conditions(&c, st, fld_key(F(P_ST_COND)), &out->conditions);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_pod_release(struct fq_pod *v)
{
    objmem_free(&v->mem);
}

/* --- Node ------------------------------------------------------------------- */

int fq_node_decode(const struct fq_value *obj, const char *file,
                   struct fq_node *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_NODE, &out->mem, &out->meta) ==
        0) {
        const struct fq_value *spec = fld_map(&c, obj, F(N_SPEC));
        size_t old = path_key(&c, "spec");
        out->unschedulable = fld_bool(&c, spec, F(N_UNSCHEDULABLE));
        want_taints(&c, spec, fld_key(F(N_TAINTS)), (size_t)F(N_TAINTS)->max,
                    &out->taints, &out->n_taints);
        out->provider_id = fld_str(&c, spec, F(N_PROVIDER));
        path_pop(&c, old);
        const struct fq_value *st = fld_map(&c, obj, F(N_STATUS));
        if (st) {
            size_t o2 = path_key(&c, "status");
            want_resources(&c, st, fld_key(F(N_CAPACITY)), false,
                           &out->capacity);
            want_resources(&c, st, fld_key(F(N_ALLOCATABLE)), false,
                           &out->allocatable);
            want_conditions(&c, st, fld_key(F(N_COND)), &out->conditions);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_node_release(struct fq_node *v)
{
    objmem_free(&v->mem);
}

/* --- Event ------------------------------------------------------------------ */

int fq_event_decode(const struct fq_value *obj, const char *file,
                    struct fq_event *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_EVENT, &out->mem, &out->meta) ==
        0) {
        const struct fq_value *io = fld_map(&c, obj, F(E_INVOLVED));
        if (io) {
            size_t old = path_key(&c, "involvedObject");
            out->involved_kind = fld_str(&c, io, F(E_INV_KIND));
            out->involved_name = fld_str(&c, io, F(E_INV_NAME));
            out->involved_namespace = fld_str(&c, io, F(E_INV_NS));
            out->involved_uid = fld_str(&c, io, F(E_INV_UID));
            path_pop(&c, old);
        }
        out->reason = fld_str(&c, obj, F(E_REASON));
        out->message = fld_str(&c, obj, F(E_MESSAGE));
        out->type = event_type_names[fld_enum(&c, obj, F(E_TYPE))];
        out->count = fld_int(&c, obj, F(E_COUNT), NULL);
        out->first_timestamp = fld_str(&c, obj, F(E_FIRST));
        out->last_timestamp = fld_str(&c, obj, F(E_LAST));
        const struct fq_value *src = fld_map(&c, obj, F(E_SOURCE));
        if (src) {
            size_t old = path_key(&c, "source");
            out->source_component = fld_str(&c, src, F(E_SOURCE_COMP));
            path_pop(&c, old);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_event_release(struct fq_event *v)
{
    objmem_free(&v->mem);
}

/* --- Namespace -------------------------------------------------------------- */

int fq_namespace_decode(const struct fq_value *obj, const char *file,
                        struct fq_namespace *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_NAMESPACE, &out->mem,
                   &out->meta) == 0) {
        fld_map(&c, obj, F(NS_SPEC));
        const struct fq_value *st = fld_map(&c, obj, F(NS_STATUS));
        if (st) {
            size_t old = path_key(&c, "status");
            out->phase = fld_str(&c, st, F(NS_ST_PHASE));
            path_pop(&c, old);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_namespace_release(struct fq_namespace *v)
{
    objmem_free(&v->mem);
}
