/*
 * objects_kueue.c - decoders (= validators) of Kueue's kinds:
 * ResourceFlavor, ClusterQueue, Cohort, LocalQueue, Workload,
 * WorkloadPriorityClass, AdmissionCheck, ProvisioningRequestConfig.
 *
 * Rules come from Kueue's API types (v1beta1 and v1beta2 are both read;
 * where they differ, both spellings are accepted: cohort / cohortName,
 * admissionChecks / admissionChecksStrategy, Borrow / MayStopSearch,
 * priorityClassName / priorityClassRef) and from its CEL rules and
 * webhooks, e.g. for a ClusterQueue:
 *   - at most 16 resource groups, 64 covered resources and 64 flavors per
 *     group, 256 flavors in all;
 *   - a resource and a flavor each belong to one group only;
 *   - every flavor lists every covered resource of its group (flexq accepts
 *     any order, Kueue wants the coveredResources order);
 *   - borrowingLimit / lendingLimit need a cohort; lendingLimit <= nominal;
 *   - borrowWithinCohort needs reclaimWithinCohort != Never;
 *   - flavorFungibility.preference needs both policies TryNextFlavor;
 *   - admissionChecks and admissionChecksStrategy exclude each other, and
 *     onFlavors names flavors of this queue (stricter than Kueue, which
 *     finds the typo only when nothing gets checked).
 *
 * Every field is read through a row of fq_kueue_fields (below; fields.h):
 * the row holds the field's type, requiredness, limits, enum values,
 * default and description, the decoder adds the rules across fields
 * (like those above), and schema.c publishes the rows as OpenAPI.
 *
 * It does not check that referenced objects exist: that needs the store.
 */
#include <stdio.h>
#include <string.h>

#include "objects/fields.h"
#include "objects/objects_internal.h"

/* --- the field table ------------------------------------------------------
 *
 * Every field these decoders read, with its rules and description: the
 * decoders read each through its row (fields.h), and schema.c publishes
 * the same rows as OpenAPI. A rule changed here changes both.
 */
#define K_RF  FK(FQ_KIND_RESOURCEFLAVOR)
#define K_CQ  FK(FQ_KIND_CLUSTERQUEUE)
#define K_CO  FK(FQ_KIND_COHORT)
#define K_LQ  FK(FQ_KIND_LOCALQUEUE)
#define K_WL  FK(FQ_KIND_WORKLOAD)
#define K_WPC FK(FQ_KIND_WORKLOADPRIORITYCLASS)
#define K_AC  FK(FQ_KIND_ADMISSIONCHECK)
#define K_PRC FK(FQ_KIND_PROVISIONINGREQUESTCONFIG)
#define K_PR  FK(FQ_KIND_PROVISIONINGREQUEST)
#define MAXI  INT64_MAX
#define I32   FQ_INT32_MIN, FQ_INT32_MAX
#define RG    "spec.resourceGroups[]"
#define FLV   RG ".flavors[]"
#define ACS   "spec.admissionChecksStrategy.admissionChecks[]"
#define PSA   "status.admission.podSetAssignments[]"

static const char *const stop_names[] = {"None", "Hold", "HoldAndDrain", NULL};
static const char *const qs_names[] = {"BestEffortFIFO", "StrictFIFO", NULL};
static const char *const adm_mode_names[] = {
    "NoAdmissionFairSharing", "UsageBasedAdmissionFairSharing", NULL};
static const char *const within_names[] = {"Never", "LowerPriority",
                                           "LowerOrNewerEqualPriority", NULL};
static const char *const reclaim_names[] = {"Never", "LowerPriority", "Any",
                                            NULL};
static const char *const borrow_pol_names[] = {"Never", "LowerPriority", NULL};
/* v1beta1 spelled MayStopSearch "Borrow" / "Preempt". */
static const char *const when_borrow_names[] = {
    "MayStopSearch", "TryNextFlavor", "Borrow", NULL};
static const char *const when_preempt_names[] = {
    "MayStopSearch", "TryNextFlavor", "Preempt", NULL};
static const char *const pref_names[] = {"BorrowingOverPreemption",
                                         "PreemptionOverBorrowing", NULL};
static const char *const source_names[] = {
    "", "kueue.x-k8s.io/workloadpriorityclass",
    "scheduling.k8s.io/priorityclass", NULL};
static const char *const check_state_names[] = {"Pending", "Ready", "Retry",
                                                "Rejected", NULL};
static const char *const merge_names[] = {
    "IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements", NULL};

enum kueue_row {
    RF_SPEC,
    RF_NODE_LABELS,
    RF_NODE_TAINTS,
    RF_TOLERATIONS,
    RF_TOPOLOGY,
    Q_FAIR,
    Q_FAIR_WEIGHT,
    G_GROUPS,
    G_COVERED,
    G_FLAVORS,
    G_FL_NAME,
    G_FL_RES,
    G_RES_NAME,
    G_RES_NOMINAL,
    G_RES_BORROW,
    G_RES_LEND,
    CQ_SPEC,
    CQ_COHORT,
    CQ_COHORT_NAME,
    CQ_NS_SELECTOR,
    CQ_QS,
    CQ_PRE,
    CQ_PRE_WITHIN,
    CQ_PRE_RECLAIM,
    CQ_PRE_BORROW,
    CQ_PRE_BORROW_POLICY,
    CQ_PRE_BORROW_MAX,
    CQ_FUNG,
    CQ_FUNG_BORROW,
    CQ_FUNG_PREEMPT,
    CQ_FUNG_PREF,
    CQ_CHECKS,
    CQ_STRAT,
    CQ_STRAT_CHECKS,
    CQ_STRAT_NAME,
    CQ_STRAT_ON,
    Q_STOP,
    CQ_ADM_SCOPE,
    CQ_ADM_MODE,
    CQ_STATUS,
    CQ_ST_PENDING,
    CQ_ST_ADMITTED,
    CQ_ST_RESERVING,
    CQ_ST_COND,
    CO_SPEC,
    CO_PARENT_NAME,
    CO_PARENT,
    LQ_SPEC,
    LQ_CQ,
    LQ_STATUS,
    WL_SPEC,
    WL_PODSETS,
    WL_PS_NAME,
    WL_PS_COUNT,
    WL_PS_MIN,
    WL_PS_TEMPLATE,
    WL_QUEUE,
    WL_PCN,
    WL_PCS,
    WL_PCREF,
    WL_PCREF_GROUP,
    WL_PCREF_KIND,
    WL_PCREF_NAME,
    WL_PRIORITY,
    WL_ACTIVE,
    WL_MAXEXEC,
    WL_STATUS,
    WL_ST_COND,
    WL_ST_ADM,
    WL_ST_ADM_CQ,
    WL_ST_PSA,
    WL_ST_PSA_NAME,
    WL_ST_PSA_FLAVORS,
    WL_ST_PSA_USAGE,
    WL_ST_PSA_COUNT,
    WL_ST_CHECKS,
    WL_ST_CK_NAME,
    WL_ST_CK_STATE,
    WL_ST_CK_MESSAGE,
    WL_ST_CK_LTT,
    WL_ST_CK_RETRY,
    WL_ST_CK_REQUEUE,
    WL_ST_RQ,
    WL_ST_RQ_COUNT,
    WL_ST_RQ_AT,
    WPC_VALUE,
    WPC_DESCRIPTION,
    AC_SPEC,
    AC_CONTROLLER,
    AC_PARAMS,
    AC_PARAMS_GROUP,
    AC_PARAMS_KIND,
    AC_PARAMS_NAME,
    AC_RETRY,
    AC_STATUS,
    AC_ST_COND,
    P_PARAMS,
    PRC_SPEC,
    PRC_CLASS,
    PRC_MANAGED,
    PRC_RETRY,
    PRC_RETRY_LIMIT,
    PRC_RETRY_BASE,
    PRC_RETRY_MAX,
    PRC_PSU,
    PRC_PSU_NS,
    PRC_PSU_NS_KEY,
    PRC_PSU_NS_FROM,
    PRC_MERGE,
    PR_SPEC,
    PR_CLASS,
    PR_PODSETS,
    PR_PS_REF,
    PR_PS_REF_NAME,
    PR_PS_COUNT,
    PR_STATUS,
    PR_ST_COND,
    PR_ST_DETAILS,
    KUEUE_ROWS
};

#define F(row) (&fq_kueue_fields[row])

const struct fq_field fq_kueue_fields[KUEUE_ROWS + 1] = {
    /* ResourceFlavor */
    [RF_SPEC] = {K_RF, "spec", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                 "ResourceFlavorSpec defines the desired state of the "
                 "ResourceFlavor."},
    [RF_NODE_LABELS] = {K_RF, "spec.nodeLabels", FT_KVS, 0, KVS_LABELS, 0, 0, 8,
                        NULL, NULL,
                        "Labels that associate the flavor with Nodes; "
                        "injected into the node selector of admitted pods."},
    [RF_NODE_TAINTS] = {K_RF, "spec.nodeTaints", FT_OBJS, 0, 0, 0, 0, 8, NULL,
                        NULL, "Taints that the nodes of this flavor have."},
    [RF_TOLERATIONS] = {K_RF, "spec.tolerations", FT_OBJS, 0, 0, 0, 0, 8, NULL,
                        NULL, "Tolerations added to admitted pods."},
    [RF_TOPOLOGY] = {K_RF, "spec.topologyName", FT_NAME, 0, 0, 0, 0, 0, NULL,
                     fq_check_dns1123_subdomain,
                     "The Topology this flavor belongs to (needs "
                     "nodeLabels)."},
    /* fair sharing: ClusterQueue, Cohort, LocalQueue */
    [Q_FAIR] = {K_CQ | K_CO | K_LQ, "spec.fairSharing", FT_MAP, 0, 0, 0, 0, 0,
                NULL, NULL, "Fair sharing: this queue's weight."},
    [Q_FAIR_WEIGHT] = {K_CQ | K_CO | K_LQ, "spec.fairSharing.weight", FT_QTY,
                       FF_NONNEG, 0, 0, 0, 0, NULL, NULL,
                       "Share of the cohort's unused quota relative to its "
                       "siblings (default 1)."},
    /* resource groups: ClusterQueue and Cohort */
    [G_GROUPS] = {K_CQ | K_CO, "spec.resourceGroups", FT_SEQ, 0, 0, 0, 0, 16,
                  NULL, NULL,
                  "Quota per flavor and resource; at most 16 groups."},
    [G_COVERED] = {K_CQ | K_CO, RG ".coveredResources", FT_STRS, FF_REQUIRED, 0,
                   0, 0, 64, NULL, fq_check_qualified_name,
                   "Resources covered by the flavors of this group."},
    [G_FLAVORS] = {K_CQ | K_CO, RG ".flavors", FT_SEQ, FF_REQUIRED, 0, 0, 1, 64,
                   NULL, NULL, "The flavors of this group, in order."},
    [G_FL_NAME] = {K_CQ | K_CO, FLV ".name", FT_NAME, FF_REQUIRED, 0, 0, 0, 0,
                   NULL, fq_check_dns1123_subdomain, "The ResourceFlavor."},
    [G_FL_RES] = {K_CQ | K_CO, FLV ".resources", FT_SEQ, FF_REQUIRED, 0, 0, 1,
                  64, NULL, NULL,
                  "Quota of each covered resource for this flavor."},
    [G_RES_NAME] = {K_CQ | K_CO, FLV ".resources[].name", FT_NAME, FF_REQUIRED,
                    0, 0, 0, 0, NULL, fq_check_qualified_name,
                    "The resource name."},
    [G_RES_NOMINAL] = {K_CQ | K_CO, FLV ".resources[].nominalQuota", FT_QTY,
                       FF_REQUIRED | FF_NONNEG, 0, 0, 0, 0, NULL, NULL,
                       "The quota of this resource for this flavor."},
    [G_RES_BORROW] = {K_CQ | K_CO, FLV ".resources[].borrowingLimit", FT_QTY,
                      FF_NONNEG, 0, 0, 0, 0, NULL, NULL,
                      "How much may be borrowed from the cohort."},
    [G_RES_LEND] = {K_CQ | K_CO, FLV ".resources[].lendingLimit", FT_QTY,
                    FF_NONNEG, 0, 0, 0, 0, NULL, NULL,
                    "How much may be lent to the cohort (<= nominalQuota)."},
    /* ClusterQueue */
    [CQ_SPEC] = {K_CQ, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                 "ClusterQueueSpec defines the desired state of "
                 "ClusterQueue."},
    [CQ_COHORT] = {K_CQ, "spec.cohort", FT_NAME, 0, 0, 0, 0, 0, NULL,
                   fq_check_dns1123_subdomain,
                   "The cohort this ClusterQueue borrows and lends quota in "
                   "(v1beta1)."},
    [CQ_COHORT_NAME] = {K_CQ, "spec.cohortName", FT_NAME, 0, 0, 0, 0, 0, NULL,
                        fq_check_dns1123_subdomain,
                        "The cohort this ClusterQueue borrows and lends "
                        "quota in (v1beta2)."},
    [CQ_NS_SELECTOR] = {K_CQ, "spec.namespaceSelector", FT_OBJ, 0, 0, 0, 0, 0,
                        NULL, NULL,
                        "Which namespaces may submit workloads to this "
                        "ClusterQueue."},
    [CQ_QS] = {K_CQ, "spec.queueingStrategy", FT_ENUM, 0, 0, 0, 0, 0, qs_names,
               NULL, "StrictFIFO or BestEffortFIFO."},
    [CQ_PRE] = {K_CQ, "spec.preemption", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                "How this ClusterQueue preempts workloads."},
    [CQ_PRE_WITHIN] = {K_CQ, "spec.preemption.withinClusterQueue", FT_ENUM, 0,
                       0, 0, 0, 0, within_names, NULL,
                       "Preemption of this queue's own workloads."},
    [CQ_PRE_RECLAIM] = {K_CQ, "spec.preemption.reclaimWithinCohort", FT_ENUM, 0,
                        0, 0, 0, 0, reclaim_names, NULL,
                        "Preemption in the cohort to reclaim lent quota."},
    [CQ_PRE_BORROW] = {K_CQ, "spec.preemption.borrowWithinCohort", FT_MAP, 0, 0,
                       0, 0, 0, NULL, NULL,
                       "Preemption in the cohort while borrowing."},
    [CQ_PRE_BORROW_POLICY] = {K_CQ, "spec.preemption.borrowWithinCohort.policy",
                              FT_ENUM, 0, 0, 0, 0, 0, borrow_pol_names, NULL,
                              "Never or LowerPriority."},
    [CQ_PRE_BORROW_MAX] = {K_CQ,
                           "spec.preemption.borrowWithinCohort."
                           "maxPriorityThreshold",
                           FT_INT, 0, 0, 0, I32, NULL, NULL,
                           "Only workloads up to this priority are "
                           "preempted."},
    [CQ_FUNG] = {K_CQ, "spec.flavorFungibility", FT_MAP, 0, 0, 0, 0, 0, NULL,
                 NULL, "How flavors are tried: whenCanBorrow, whenCanPreempt."},
    [CQ_FUNG_BORROW] = {K_CQ, "spec.flavorFungibility.whenCanBorrow", FT_ENUM,
                        0, 0, 0, 0, 0, when_borrow_names, NULL,
                        "Stop at a flavor that fits by borrowing, or try the "
                        "next."},
    [CQ_FUNG_PREEMPT] = {K_CQ, "spec.flavorFungibility.whenCanPreempt", FT_ENUM,
                         0, 0, 1, 0, 0, when_preempt_names, NULL,
                         "Stop at a flavor that fits by preempting, or try "
                         "the next."},
    [CQ_FUNG_PREF] = {K_CQ, "spec.flavorFungibility.preference", FT_ENUM, 0, 0,
                      0, 0, 0, pref_names, NULL,
                      "Borrowing over preemption or the reverse (both "
                      "policies TryNextFlavor)."},
    [CQ_CHECKS] = {K_CQ, "spec.admissionChecks", FT_STRS, 0, 0, 0, 0, 64, NULL,
                   fq_check_dns1123_subdomain,
                   "AdmissionChecks every workload must pass (v1beta1)."},
    [CQ_STRAT] = {K_CQ, "spec.admissionChecksStrategy", FT_MAP, 0, 0, 0, 0, 0,
                  NULL, NULL, "AdmissionChecks per flavor."},
    [CQ_STRAT_CHECKS] = {K_CQ, "spec.admissionChecksStrategy.admissionChecks",
                         FT_SEQ, 0, 0, 0, 0, 64, NULL, NULL,
                         "The checks and the flavors they apply to."},
    [CQ_STRAT_NAME] = {K_CQ, ACS ".name", FT_NAME, FF_REQUIRED, 0, 0, 0, 0,
                       NULL, fq_check_dns1123_subdomain, "The AdmissionCheck."},
    [CQ_STRAT_ON] = {K_CQ, ACS ".onFlavors", FT_STRS, 0, 0, 0, 0, 64, NULL,
                     fq_check_dns1123_subdomain,
                     "Flavors of this queue the check applies to (all when "
                     "empty)."},
    [Q_STOP] = {K_CQ | K_LQ, "spec.stopPolicy", FT_ENUM, 0, 0, 0, 0, 0,
                stop_names, NULL, "None, Hold or HoldAndDrain."},
    [CQ_ADM_SCOPE] = {K_CQ, "spec.admissionScope", FT_MAP, 0, 0, 0, 0, 0, NULL,
                      NULL,
                      "Admission fair sharing between this queue's "
                      "LocalQueues."},
    [CQ_ADM_MODE] = {K_CQ, "spec.admissionScope.admissionMode", FT_ENUM,
                     FF_REQUIRED, 0, 0, 0, 0, adm_mode_names, NULL,
                     "UsageBasedAdmissionFairSharing (order pending "
                     "workloads by their LocalQueue's decayed usage) or "
                     "NoAdmissionFairSharing."},
    [CQ_STATUS] = {K_CQ, "status", FT_MAP, FF_SERVER, 0, 0, 0, 0, NULL, NULL,
                   "ClusterQueueStatus defines the observed state of "
                   "ClusterQueue."},
    [CQ_ST_PENDING] = {K_CQ | K_LQ, "status.pendingWorkloads", FT_INT,
                       FF_SERVER, 0, 0, 0, MAXI, NULL, NULL,
                       "Workloads waiting for admission."},
    [CQ_ST_ADMITTED] = {K_CQ | K_LQ, "status.admittedWorkloads", FT_INT,
                        FF_SERVER, 0, 0, 0, MAXI, NULL, NULL,
                        "Workloads admitted and not finished."},
    [CQ_ST_RESERVING] = {K_CQ, "status.reservingWorkloads", FT_INT, FF_SERVER,
                         0, 0, 0, MAXI, NULL, NULL, "Workloads holding quota."},
    [CQ_ST_COND] = {K_CQ | K_LQ, "status.conditions", FT_OBJS, FF_SERVER, 0, 0,
                    0, 0, NULL, NULL, "Latest observations (Active)."},
    /* Cohort */
    [CO_SPEC] = {K_CO, "spec", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                 "CohortSpec defines the desired state of Cohort."},
    [CO_PARENT_NAME] = {K_CO, "spec.parentName", FT_NAME, 0, 0, 0, 0, 0, NULL,
                        fq_check_dns1123_subdomain, "The parent Cohort."},
    [CO_PARENT] = {K_CO, "spec.parent", FT_NAME, 0, 0, 0, 0, 0, NULL,
                   fq_check_dns1123_subdomain,
                   "The parent Cohort (an older spelling of parentName)."},
    /* LocalQueue */
    [LQ_SPEC] = {K_LQ, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                 "LocalQueueSpec defines the desired state of LocalQueue."},
    [LQ_CQ] = {K_LQ, "spec.clusterQueue", FT_NAME, FF_REQUIRED, 0, 0, 0, 0,
               NULL, fq_check_dns1123_subdomain,
               "The ClusterQueue this queue submits to."},
    [LQ_STATUS] = {K_LQ, "status", FT_MAP, FF_SERVER, 0, 0, 0, 0, NULL, NULL,
                   "LocalQueueStatus defines the observed state of "
                   "LocalQueue."},
    /* Workload */
    [WL_SPEC] = {K_WL, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                 "WorkloadSpec defines the desired state of Workload."},
    [WL_PODSETS] = {K_WL, "spec.podSets", FT_SEQ, FF_REQUIRED, 0, 0, 1, 18,
                    NULL, NULL, "The workload's pod sets, 1 to 18."},
    [WL_PS_NAME] = {K_WL, "spec.podSets[].name", FT_NAME, 0, 0, 0, 0, 0, NULL,
                    fq_check_dns1123_label,
                    "Name of the pod set (default main), unique."},
    [WL_PS_COUNT] = {K_WL, "spec.podSets[].count", FT_INT, 0, 0, 1, 0,
                     FQ_INT32_MAX, NULL, NULL, "Number of pods in the set."},
    [WL_PS_MIN] = {K_WL, "spec.podSets[].minCount", FT_INT, 0, 0, 0, 1,
                   FQ_INT32_MAX, NULL, NULL,
                   "Fewest pods to run (partial admission; one pod set "
                   "only)."},
    [WL_PS_TEMPLATE] = {K_WL, "spec.podSets[].template", FT_OBJ, FF_REQUIRED, 0,
                        0, 0, 0, NULL, NULL, "The pods' template."},
    [WL_QUEUE] = {K_WL, "spec.queueName", FT_NAME, 0, 0, 0, 0, 0, NULL,
                  fq_check_dns1123_subdomain,
                  "The LocalQueue the workload is submitted to."},
    [WL_PCN] = {K_WL, "spec.priorityClassName", FT_NAME, 0, 0, 0, 0, 0, NULL,
                fq_check_dns1123_subdomain, "The priority class (v1beta1)."},
    [WL_PCS] = {K_WL, "spec.priorityClassSource", FT_ENUM, 0, 0, 0, 0, 0,
                source_names, NULL,
                "Where the priority class is from (v1beta1)."},
    [WL_PCREF] = {K_WL, "spec.priorityClassRef", FT_MAP, 0, 0, 0, 0, 0, NULL,
                  NULL, "The priority class (v1beta2): group, kind, name."},
    [WL_PCREF_GROUP] = {K_WL, "spec.priorityClassRef.group", FT_STR, 0, 0, 0, 0,
                        0, NULL, NULL, "The class's API group."},
    [WL_PCREF_KIND] = {K_WL, "spec.priorityClassRef.kind", FT_STR, 0, 0, 0, 0,
                       0, NULL, NULL,
                       "WorkloadPriorityClass or PriorityClass."},
    [WL_PCREF_NAME] = {K_WL, "spec.priorityClassRef.name", FT_NAME, FF_REQUIRED,
                       0, 0, 0, 0, NULL, fq_check_dns1123_subdomain,
                       "The class's name."},
    [WL_PRIORITY] = {K_WL, "spec.priority", FT_INT, 0, 0, 0, I32, NULL, NULL,
                     "The workload's priority."},
    [WL_ACTIVE] = {K_WL, "spec.active", FT_BOOL, 0, 0, 1, 0, 0, NULL, NULL,
                   "False deactivates the workload (evicts it)."},
    [WL_MAXEXEC] = {K_WL, "spec.maximumExecutionTimeSeconds", FT_INT, 0, 0, 0,
                    1, FQ_INT32_MAX, NULL, NULL,
                    "Longest time admitted before the workload is "
                    "deactivated."},
    [WL_STATUS] = {K_WL, "status", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                   "WorkloadStatus defines the observed state of Workload."},
    [WL_ST_COND] = {K_WL, "status.conditions", FT_OBJS, 0, 0, 0, 0, 0, NULL,
                    NULL,
                    "QuotaReserved, Admitted, Evicted, Finished, PodsReady "
                    "..."},
    [WL_ST_ADM] = {K_WL, "status.admission", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                   "The ClusterQueue and flavors admitted with."},
    [WL_ST_ADM_CQ] = {K_WL, "status.admission.clusterQueue", FT_STR,
                      FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                      "The ClusterQueue that reserved quota."},
    [WL_ST_PSA] = {K_WL, "status.admission.podSetAssignments", FT_SEQ, 0, 0, 0,
                   0, 0, NULL, NULL, "The flavors of each pod set."},
    [WL_ST_PSA_NAME] = {K_WL, PSA ".name", FT_STR, FF_REQUIRED, 0, 0, 0, 0,
                        NULL, NULL, "The pod set."},
    [WL_ST_PSA_FLAVORS] = {K_WL, PSA ".flavors", FT_KVS, 0, KVS_ANY, 0, 0, 0,
                           NULL, NULL, "The flavor of each resource."},
    [WL_ST_PSA_USAGE] = {K_WL, PSA ".resourceUsage", FT_OBJ, 0, 0, 0, 0, 0,
                         NULL, NULL, "The quota charged, per resource."},
    [WL_ST_PSA_COUNT] = {K_WL, PSA ".count", FT_INT, 0, 0, 1, 0, MAXI, NULL,
                         NULL, "Pods admitted."},
    [WL_ST_CHECKS] = {K_WL, "status.admissionChecks", FT_SEQ, 0, 0, 0, 0, 0,
                      NULL, NULL, "The state of each AdmissionCheck."},
    [WL_ST_CK_NAME] = {K_WL, "status.admissionChecks[].name", FT_STR,
                       FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                       "The AdmissionCheck."},
    [WL_ST_CK_STATE] = {K_WL, "status.admissionChecks[].state", FT_ENUM, 0, 0,
                        0, 0, 0, check_state_names, NULL,
                        "Pending, Ready, Retry or Rejected."},
    [WL_ST_CK_MESSAGE] = {K_WL, "status.admissionChecks[].message", FT_STR, 0,
                          0, 0, 0, 0, NULL, NULL, "Why the check is here."},
    [WL_ST_CK_LTT] = {K_WL, "status.admissionChecks[].lastTransitionTime",
                      FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                      "When the state last changed."},
    [WL_ST_CK_RETRY] = {K_WL, "status.admissionChecks[].retryCount", FT_INT, 0,
                        0, 0, 0, MAXI, NULL, NULL, "Retries so far."},
    [WL_ST_CK_REQUEUE] = {K_WL, "status.admissionChecks[].requeueAfterSeconds",
                          FT_INT, 0, 0, 0, 0, MAXI, NULL, NULL,
                          "Delay before the workload is queued again."},
    [WL_ST_RQ] = {K_WL, "status.requeueState", FT_MAP, 0, 0, 0, 0, 0, NULL,
                  NULL, "When the workload is queued again."},
    [WL_ST_RQ_COUNT] = {K_WL, "status.requeueState.count", FT_INT, 0, 0, 0, 0,
                        MAXI, NULL, NULL, "Times queued again."},
    [WL_ST_RQ_AT] = {K_WL, "status.requeueState.requeueAt", FT_STR, 0, 0, 0, 0,
                     0, NULL, NULL, "When it is queued again."},
    /* WorkloadPriorityClass */
    [WPC_VALUE] = {K_WPC, "value", FT_INT, FF_REQUIRED, 0, 0, I32, NULL, NULL,
                   "The priority of workloads of this class."},
    [WPC_DESCRIPTION] = {K_WPC, "description", FT_STR, 0, 0, 0, 0, 0, NULL,
                         NULL, "What the class is for."},
    /* AdmissionCheck */
    [AC_SPEC] = {K_AC, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                 "AdmissionCheckSpec defines the desired state of "
                 "AdmissionCheck."},
    [AC_CONTROLLER] = {K_AC, "spec.controllerName", FT_STR, FF_REQUIRED, 0, 0,
                       0, 0, NULL, NULL,
                       "The controller that runs the check "
                       "(kueue.x-k8s.io/provisioning-request)."},
    [AC_PARAMS] = {K_AC, "spec.parameters", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                   "The check's parameters object."},
    [AC_PARAMS_GROUP] = {K_AC, "spec.parameters.apiGroup", FT_NAME, FF_REQUIRED,
                         0, 0, 0, 0, NULL, fq_check_dns1123_subdomain,
                         "The parameters object's API group."},
    [AC_PARAMS_KIND] = {K_AC, "spec.parameters.kind", FT_STR, FF_REQUIRED, 0, 0,
                        0, 0, NULL, NULL, "The parameters object's kind."},
    [AC_PARAMS_NAME] = {K_AC, "spec.parameters.name", FT_NAME, FF_REQUIRED, 0,
                        0, 0, 0, NULL, fq_check_dns1123_subdomain,
                        "The parameters object's name."},
    [AC_RETRY] = {K_AC, "spec.retryDelayMinutes", FT_INT, 0, 0, 15, 0, MAXI,
                  NULL, NULL,
                  "Delay before a failed check is retried (v1beta1)."},
    [AC_STATUS] = {K_AC, "status", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                   "AdmissionCheckStatus defines the observed state."},
    [AC_ST_COND] = {K_AC, "status.conditions", FT_OBJS, 0, 0, 0, 0, 0, NULL,
                    NULL, "Latest observations (Active)."},
    /* ProvisioningRequestConfig and ProvisioningRequest */
    [P_PARAMS] = {K_PRC | K_PR, "spec.parameters", FT_KVS, 0, KVS_ANY, 0, 0,
                  100, NULL, NULL,
                  "Parameters passed to the provisioning class (values <= "
                  "255 characters)."},
    [PRC_SPEC] = {K_PRC, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                  "ProvisioningRequestConfigSpec defines the desired state."},
    [PRC_CLASS] = {K_PRC, "spec.provisioningClassName", FT_NAME, FF_REQUIRED, 0,
                   0, 0, 0, NULL, fq_check_dns1123_subdomain,
                   "The ProvisioningRequest class "
                   "(queued-provisioning.gke.io)."},
    [PRC_MANAGED] = {K_PRC, "spec.managedResources", FT_STRS, 0, 0, 0, 0, 100,
                     NULL, fq_check_qualified_name,
                     "Resources the requests are made for."},
    [PRC_RETRY] = {K_PRC, "spec.retryStrategy", FT_MAP, 0, 0, 0, 0, 0, NULL,
                   NULL, "Backoff of failed requests."},
    [PRC_RETRY_LIMIT] = {K_PRC, "spec.retryStrategy.backoffLimitCount", FT_INT,
                         0, 0, 3, 0, FQ_INT32_MAX, NULL, NULL,
                         "Retries before the check is Rejected."},
    [PRC_RETRY_BASE] = {K_PRC, "spec.retryStrategy.backoffBaseSeconds", FT_INT,
                        0, 0, 60, 0, FQ_INT32_MAX, NULL, NULL,
                        "First backoff, doubled each retry."},
    [PRC_RETRY_MAX] = {K_PRC, "spec.retryStrategy.backoffMaxSeconds", FT_INT, 0,
                       0, 1800, 0, FQ_INT32_MAX, NULL, NULL,
                       "Longest backoff."},
    [PRC_PSU] = {K_PRC, "spec.podSetUpdates", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                 "Updates to admitted pod sets from the request."},
    [PRC_PSU_NS] = {K_PRC, "spec.podSetUpdates.nodeSelector", FT_SEQ, 0, 0, 0,
                    0, 8, NULL, NULL,
                    "Node selector entries taken from the class details."},
    [PRC_PSU_NS_KEY] = {K_PRC, "spec.podSetUpdates.nodeSelector[].key", FT_NAME,
                        FF_REQUIRED, 0, 0, 0, 0, NULL, fq_check_qualified_name,
                        "The node label."},
    [PRC_PSU_NS_FROM] = {K_PRC,
                         "spec.podSetUpdates.nodeSelector[]."
                         "valueFromProvisioningClassDetail",
                         FT_STR, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                         "The class detail that holds the value."},
    [PRC_MERGE] = {K_PRC, "spec.podSetMergePolicy", FT_ENUM, 0, 0, -1, 0, 0,
                   merge_names, NULL, "How pod sets are merged."},
    [PR_SPEC] = {K_PR, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                 "ProvisioningRequestSpec defines the desired state."},
    [PR_CLASS] = {K_PR, "spec.provisioningClassName", FT_NAME, FF_REQUIRED, 0,
                  0, 0, 0, NULL, fq_check_dns1123_subdomain,
                  "The class that provisions the capacity."},
    [PR_PODSETS] = {K_PR, "spec.podSets", FT_SEQ, FF_REQUIRED, 0, 0, 1, 32,
                    NULL, NULL, "The pods to provision capacity for."},
    [PR_PS_REF] = {K_PR, "spec.podSets[].podTemplateRef", FT_MAP, FF_REQUIRED,
                   0, 0, 0, 0, NULL, NULL, "The PodTemplate of these pods."},
    [PR_PS_REF_NAME] = {K_PR, "spec.podSets[].podTemplateRef.name", FT_NAME,
                        FF_REQUIRED, 0, 0, 0, 0, NULL,
                        fq_check_dns1123_subdomain, "The PodTemplate."},
    [PR_PS_COUNT] = {K_PR, "spec.podSets[].count", FT_INT, FF_REQUIRED, 0, 1, 1,
                     FQ_INT32_MAX, NULL, NULL, "Number of pods."},
    [PR_STATUS] = {K_PR, "status", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                   "ProvisioningRequestStatus defines the observed state."},
    [PR_ST_COND] = {K_PR, "status.conditions", FT_OBJS, 0, 0, 0, 0, 0, NULL,
                    NULL,
                    "Accepted, Provisioned, Failed, CapacityRevoked, "
                    "BookingExpired."},
    [PR_ST_DETAILS] = {K_PR, "status.provisioningClassDetails", FT_KVS, 0,
                       KVS_ANY, 0, 0, 64, NULL, NULL,
                       "Details the class gives back."},
};

/* --- ResourceFlavor ------------------------------------------------------ */

int fq_resourceflavor_decode(const struct fq_value *obj, const char *file,
                             struct fq_resourceflavor *out,
                             struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_RESOURCEFLAVOR, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = fld_map(&c, obj, F(RF_SPEC));
        size_t old = path_key(&c, "spec");
        fld_kvs(&c, spec, F(RF_NODE_LABELS), &out->node_labels);
        want_taints(&c, spec, fld_key(F(RF_NODE_TAINTS)),
                    (size_t)F(RF_NODE_TAINTS)->max, &out->node_taints,
                    &out->n_node_taints);
        want_tolerations(&c, spec, fld_key(F(RF_TOLERATIONS)),
                         (size_t)F(RF_TOLERATIONS)->max, &out->tolerations,
                         &out->n_tolerations);
        out->topology_name = fld_str(&c, spec, F(RF_TOPOLOGY));
        if (out->topology_name && out->node_labels.n == 0)
            derr_key(&c, field(spec, "topologyName"), "topologyName",
                     "needs at least one entry in nodeLabels");
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_resourceflavor_release(struct fq_resourceflavor *v)
{
    objmem_free(&v->mem);
}

/* --- resource groups (ClusterQueue and Cohort) --------------------------- */

struct seen_flavor {
    const char *name;
    size_t group;
};

static void decode_flavor(struct dctx *c, const struct fq_value *fl,
                          const struct fq_resource_group *g, bool can_limit,
                          const char *limit_needs, struct fq_flavor_quotas *fq)
{
    fq->name = fld_str(c, fl, F(G_FL_NAME));
    const struct fq_value *rs = fld_seq(c, fl, F(G_FL_RES));
    fq->resources = MEM_ARRAY(c, struct fq_resource_quota, g->n_covered);
    if (!rs)
        return;
    bool *have = MEM_ARRAY(c, bool, g->n_covered + 1);
    size_t old = path_key(c, "resources");
    for (size_t i = 0; i < rs->u.seq.n; i++) {
        const struct fq_value *r = rs->u.seq.items[i];
        size_t o2 = path_idx(c, i);
        if (!r || r->type != FQ_V_MAP) {
            derr(c, r, "must be a mapping, not %s", type_word(r));
            path_pop(c, o2);
            continue;
        }
        const char *name = fld_str(c, r, F(G_RES_NAME));
        size_t slot = g->n_covered;
        for (size_t j = 0; name && j < g->n_covered; j++)
            if (strcmp(g->covered[j], name) == 0)
                slot = j;
        if (name && slot == g->n_covered && g->n_covered > 0)
            derr_key(c, field(r, "name"), "name",
                     "resource \"%s\" is not in this group's "
                     "coveredResources",
                     name);
        else if (name && slot < g->n_covered && have[slot])
            derr_key(c, field(r, "name"), "name", "duplicate resource \"%s\"",
                     name);
        struct fq_resource_quota q;
        memset(&q, 0, sizeof(q));
        q.name = name;
        if (!field(r, "nominalQuota"))
            derr_missing(c, r, "nominalQuota");
        fld_qty(c, r, F(G_RES_NOMINAL), name, &q.nominal);
        q.has_borrowing_limit =
            fld_qty(c, r, F(G_RES_BORROW), name, &q.borrowing_limit);
        q.has_lending_limit =
            fld_qty(c, r, F(G_RES_LEND), name, &q.lending_limit);
        if (field(r, "borrowingLimit") && !can_limit)
            derr_key(c, field(r, "borrowingLimit"), "borrowingLimit",
                     "must not be set without %s", limit_needs);
        if (field(r, "lendingLimit") && !can_limit)
            derr_key(c, field(r, "lendingLimit"), "lendingLimit",
                     "must not be set without %s", limit_needs);
        else if (q.has_lending_limit && q.lending_limit > q.nominal)
            derr_key(c, field(r, "lendingLimit"), "lendingLimit",
                     "must be less than or equal to nominalQuota (%s)",
                     scalar_text(field(r, "nominalQuota")));
        if (name && slot < g->n_covered && !have[slot]) {
            have[slot] = true;
            fq->resources[slot] = q;
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
    char missing[512] = "";
    size_t used = 0, nmiss = 0;
    for (size_t j = 0; j < g->n_covered; j++) {
        if (have[j])
            continue;
        int w = snprintf(missing + used, sizeof(missing) - used, "%s\"%s\"",
                         nmiss ? ", " : "", g->covered[j]);
        if (w > 0 && (size_t)w < sizeof(missing) - used)
            used += (size_t)w;
        nmiss++;
    }
    if (nmiss)
        derr_key(c, rs, "resources",
                 "must list every covered resource of the group; missing %s",
                 missing);
    else
        fq->n_resources = g->n_covered;
}

/* Decodes spec.resourceGroups. `can_limit` says whether borrowing/lending
 * limits are allowed (a cohort / a parent exists). */
static void decode_groups(struct dctx *c, const struct fq_value *spec,
                          bool can_limit, const char *limit_needs,
                          struct fq_resource_group **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const struct fq_value *gs = fld_seq(c, spec, F(G_GROUPS));
    if (!gs)
        return;
    *out = MEM_ARRAY(c, struct fq_resource_group, gs->u.seq.n);
    size_t total_flavors = 0;
    for (size_t i = 0; i < gs->u.seq.n; i++) {
        const struct fq_value *g = gs->u.seq.items[i];
        if (g && g->type == FQ_V_MAP)
            total_flavors += fq_value_len(field(g, "flavors"));
    }
    if (total_flavors > 256)
        derr_key(c, gs, "resourceGroups",
                 "must have at most 256 flavors in all, not %zu",
                 total_flavors);
    struct seen_flavor *seen = MEM_ARRAY(c, struct seen_flavor, total_flavors);
    size_t nseen = 0;
    size_t old = path_key(c, "resourceGroups");
    for (size_t i = 0; i < gs->u.seq.n; i++) {
        const struct fq_value *g = gs->u.seq.items[i];
        size_t o2 = path_idx(c, i);
        if (!g || g->type != FQ_V_MAP) {
            derr(c, g, "must be a mapping, not %s", type_word(g));
            path_pop(c, o2);
            continue;
        }
        struct fq_resource_group *rg = &(*out)[(*n)++];
        rg->covered = fld_strs(c, g, F(G_COVERED), &rg->n_covered);
        if (field(g, "coveredResources") && rg->n_covered == 0 &&
            fq_value_len(field(g, "coveredResources")) == 0)
            derr_key(c, field(g, "coveredResources"), "coveredResources",
                     "must have at least 1 item");
        /* A resource belongs to one group only. */
        const struct fq_value *cov = field(g, "coveredResources");
        for (size_t j = 0; j < rg->n_covered; j++) {
            for (size_t k = 0; k + 1 < *n; k++) {
                const struct fq_resource_group *og = &(*out)[k];
                for (size_t l = 0; l < og->n_covered; l++) {
                    if (strcmp(og->covered[l], rg->covered[j]) != 0)
                        continue;
                    size_t o3 = path_key(c, "coveredResources");
                    path_idx(c, j);
                    const struct fq_value *at = NULL;
                    for (size_t m = 0; m < fq_value_len(cov); m++)
                        if (strcmp(scalar_text(fq_seq_at(cov, m)),
                                   rg->covered[j]) == 0)
                            at = fq_seq_at(cov, m);
                    derr(c, at,
                         "resource \"%s\" is already covered by "
                         "resourceGroups[%zu]",
                         rg->covered[j], k);
                    path_pop(c, o3);
                }
            }
        }
        const struct fq_value *fls = fld_seq(c, g, F(G_FLAVORS));
        if (fls) {
            rg->flavors = MEM_ARRAY(c, struct fq_flavor_quotas, fls->u.seq.n);
            size_t o3 = path_key(c, "flavors");
            for (size_t j = 0; j < fls->u.seq.n; j++) {
                const struct fq_value *fl = fls->u.seq.items[j];
                size_t o4 = path_idx(c, j);
                if (!fl || fl->type != FQ_V_MAP) {
                    derr(c, fl, "must be a mapping, not %s", type_word(fl));
                    path_pop(c, o4);
                    continue;
                }
                struct fq_flavor_quotas *fq = &rg->flavors[rg->n_flavors++];
                decode_flavor(c, fl, rg, can_limit, limit_needs, fq);
                if (fq->name) {
                    for (size_t k = 0; k < nseen; k++)
                        if (strcmp(seen[k].name, fq->name) == 0) {
                            if (seen[k].group == i)
                                derr_key(c, field(fl, "name"), "name",
                                         "duplicate flavor \"%s\"", fq->name);
                            else
                                derr_key(c, field(fl, "name"), "name",
                                         "flavor \"%s\" already appears in "
                                         "resourceGroups[%zu]",
                                         fq->name, seen[k].group);
                            break;
                        }
                    if (nseen < total_flavors) {
                        seen[nseen].name = fq->name;
                        seen[nseen].group = i;
                        nseen++;
                    }
                }
                path_pop(c, o4);
            }
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}

const struct fq_resource_quota *fq_groups_quota(
    const struct fq_resource_group *groups, size_t n_groups, const char *flavor,
    const char *resource)
{
    for (size_t i = 0; i < n_groups; i++)
        for (size_t j = 0; j < groups[i].n_flavors; j++) {
            const struct fq_flavor_quotas *f = &groups[i].flavors[j];
            if (!f->name || strcmp(f->name, flavor) != 0)
                continue;
            for (size_t k = 0; k < f->n_resources; k++)
                if (f->resources[k].name &&
                    strcmp(f->resources[k].name, resource) == 0)
                    return &f->resources[k];
        }
    return NULL;
}

static int64_t fair_weight(struct dctx *c, const struct fq_value *spec)
{
    const struct fq_value *fs = fld_map(c, spec, F(Q_FAIR));
    int64_t w = 1000;
    if (fs) {
        size_t old = path_key(c, "fairSharing");
        int64_t q;
        if (fld_qty(c, fs, F(Q_FAIR_WEIGHT), "cpu", &q))
            w = q;
        path_pop(c, old);
    }
    return w;
}

/* --- ClusterQueue ---------------------------------------------------------- */

static bool flavor_in_groups(const struct fq_clusterqueue *cq, const char *f)
{
    for (size_t i = 0; i < cq->n_groups; i++)
        for (size_t j = 0; j < cq->groups[i].n_flavors; j++)
            if (cq->groups[i].flavors[j].name &&
                strcmp(cq->groups[i].flavors[j].name, f) == 0)
                return true;
    return false;
}

static void decode_checks(struct dctx *c, const struct fq_value *spec,
                          struct fq_clusterqueue *out)
{
    const struct fq_value *plain = field(spec, "admissionChecks");
    const struct fq_value *strat = fld_map(c, spec, F(CQ_STRAT));
    if (plain && strat) {
        derr_key(c, plain, "admissionChecks",
                 "either admissionChecks or admissionChecksStrategy can be "
                 "set, not both");
        return;
    }
    if (plain) {
        size_t n;
        const char **names = fld_strs(c, spec, F(CQ_CHECKS), &n);
        out->checks = MEM_ARRAY(c, struct fq_check_ref, n);
        for (size_t i = 0; i < n; i++)
            out->checks[out->n_checks++].name = names[i];
        return;
    }
    if (!strat)
        return;
    size_t old = path_key(c, "admissionChecksStrategy");
    const struct fq_value *acs = fld_seq(c, strat, F(CQ_STRAT_CHECKS));
    if (acs) {
        out->checks = MEM_ARRAY(c, struct fq_check_ref, acs->u.seq.n);
        size_t o2 = path_key(c, "admissionChecks");
        for (size_t i = 0; i < acs->u.seq.n; i++) {
            const struct fq_value *a = acs->u.seq.items[i];
            size_t o3 = path_idx(c, i);
            if (!a || a->type != FQ_V_MAP) {
                derr(c, a, "must be a mapping, not %s", type_word(a));
                path_pop(c, o3);
                continue;
            }
            struct fq_check_ref r;
            memset(&r, 0, sizeof(r));
            r.name = fld_str(c, a, F(CQ_STRAT_NAME));
            r.on_flavors = fld_strs(c, a, F(CQ_STRAT_ON), &r.n_on_flavors);
            const struct fq_value *of = field(a, "onFlavors");
            for (size_t j = 0; j < r.n_on_flavors; j++) {
                if (flavor_in_groups(out, r.on_flavors[j]))
                    continue;
                size_t o4 = path_key(c, "onFlavors");
                path_idx(c, j);
                const struct fq_value *at = NULL;
                for (size_t k = 0; k < fq_value_len(of); k++)
                    if (strcmp(scalar_text(fq_seq_at(of, k)),
                               r.on_flavors[j]) == 0)
                        at = fq_seq_at(of, k);
                derr(c, at,
                     "flavor \"%s\" is not in this ClusterQueue's "
                     "resourceGroups",
                     r.on_flavors[j]);
                path_pop(c, o4);
            }
            for (size_t j = 0; r.name && j < out->n_checks; j++)
                if (strcmp(out->checks[j].name, r.name) == 0)
                    derr_key(c, field(a, "name"), "name",
                             "duplicate admission check \"%s\"", r.name);
            if (r.name)
                out->checks[out->n_checks++] = r;
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}

static void decode_preemption(struct dctx *c, const struct fq_value *spec,
                              struct fq_clusterqueue *out)
{
    const struct fq_value *p = fld_map(c, spec, F(CQ_PRE));
    if (!p)
        return;
    size_t old = path_key(c, "preemption");
    out->preemption.within_cluster_queue =
        (enum fq_preempt_policy)fld_enum(c, p, F(CQ_PRE_WITHIN));
    int r = fld_enum(c, p, F(CQ_PRE_RECLAIM));
    out->preemption.reclaim_within_cohort =
        r == 2 ? FQ_PREEMPT_ANY : (enum fq_preempt_policy)r;
    const struct fq_value *b = fld_map(c, p, F(CQ_PRE_BORROW));
    if (b) {
        size_t o2 = path_key(c, "borrowWithinCohort");
        out->preemption.borrow_within_cohort =
            (enum fq_preempt_policy)fld_enum(c, b, F(CQ_PRE_BORROW_POLICY));
        out->preemption.max_priority_threshold =
            fld_int(c, b, F(CQ_PRE_BORROW_MAX),
                    &out->preemption.has_max_priority_threshold);
        path_pop(c, o2);
        if (out->preemption.borrow_within_cohort != FQ_PREEMPT_NEVER &&
            out->preemption.reclaim_within_cohort == FQ_PREEMPT_NEVER)
            derr_key(c, b, "borrowWithinCohort",
                     "policy %s needs reclaimWithinCohort other than Never",
                     borrow_pol_names[out->preemption.borrow_within_cohort]);
    }
    path_pop(c, old);
}

static void decode_fungibility(struct dctx *c, const struct fq_value *spec,
                               struct fq_clusterqueue *out)
{
    out->fungibility.when_can_borrow = FQ_FUNG_MAY_STOP_SEARCH;
    out->fungibility.when_can_preempt = FQ_FUNG_TRY_NEXT_FLAVOR;
    const struct fq_value *f = fld_map(c, spec, F(CQ_FUNG));
    if (!f)
        return;
    size_t old = path_key(c, "flavorFungibility");
    int b = fld_enum(c, f, F(CQ_FUNG_BORROW));
    int p = fld_enum(c, f, F(CQ_FUNG_PREEMPT));
    out->fungibility.when_can_borrow =
        b == 1 ? FQ_FUNG_TRY_NEXT_FLAVOR : FQ_FUNG_MAY_STOP_SEARCH;
    out->fungibility.when_can_preempt =
        p == 1 ? FQ_FUNG_TRY_NEXT_FLAVOR : FQ_FUNG_MAY_STOP_SEARCH;
    out->fungibility.preference =
        (enum fq_fung_preference)fld_enum(c, f, F(CQ_FUNG_PREF));
    if (field(f, "preference") &&
        (out->fungibility.when_can_borrow != FQ_FUNG_TRY_NEXT_FLAVOR ||
         out->fungibility.when_can_preempt != FQ_FUNG_TRY_NEXT_FLAVOR))
        derr_key(c, field(f, "preference"), "preference",
                 "may only be set when whenCanBorrow and whenCanPreempt are "
                 "both TryNextFlavor");
    path_pop(c, old);
}

int fq_clusterqueue_decode(const struct fq_value *obj, const char *file,
                           struct fq_clusterqueue *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_CLUSTERQUEUE, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = fld_map(&c, obj, F(CQ_SPEC));
        size_t old = path_key(&c, "spec");
        const struct fq_field *cof =
            field(spec, "cohortName") ? F(CQ_COHORT_NAME) : F(CQ_COHORT);
        const char *co = fld_key(cof);
        if (field(spec, "cohortName") && field(spec, "cohort"))
            derr_key(&c, field(spec, "cohort"), "cohort",
                     "set cohort (v1beta1) or cohortName (v1beta2), not both");
        out->cohort = fld_str(&c, spec, cof);
        if (out->cohort && !*out->cohort)
            out->cohort = NULL;
        bool has_cohort = field(spec, co) != NULL;
        want_selector(&c, spec, fld_key(F(CQ_NS_SELECTOR)),
                      &out->namespace_selector);
        decode_groups(&c, spec, has_cohort, "a cohort", &out->groups,
                      &out->n_groups);
        out->queueing_strategy =
            (enum fq_queueing_strategy)fld_enum(&c, spec, F(CQ_QS));
        decode_preemption(&c, spec, out);
        decode_fungibility(&c, spec, out);
        decode_checks(&c, spec, out);
        out->stop_policy = (enum fq_stop_policy)fld_enum(&c, spec, F(Q_STOP));
        out->fair_weight_milli = fair_weight(&c, spec);
        const struct fq_value *as = fld_map(&c, spec, F(CQ_ADM_SCOPE));
        if (as) {
            size_t o2 = path_key(&c, "admissionScope");
            if (!field(as, "admissionMode") ||
                field(as, "admissionMode")->type == FQ_V_NULL)
                derr_missing(&c, as, "admissionMode");
            out->usage_based_afs = fld_enum(&c, as, F(CQ_ADM_MODE)) == 1;
            path_pop(&c, o2);
        }
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_clusterqueue_release(struct fq_clusterqueue *v)
{
    objmem_free(&v->mem);
}

/* --- Cohort --------------------------------------------------------------------- */

int fq_cohort_decode(const struct fq_value *obj, const char *file,
                     struct fq_cohort *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_COHORT, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = fld_map(&c, obj, F(CO_SPEC));
        size_t old = path_key(&c, "spec");
        const struct fq_field *pf =
            field(spec, "parentName") ? F(CO_PARENT_NAME) : F(CO_PARENT);
        const char *pk = fld_key(pf);
        out->parent = fld_str(&c, spec, pf);
        if (out->parent && out->meta.name &&
            strcmp(out->parent, out->meta.name) == 0)
            derr_key(&c, field(spec, pk), pk,
                     "a cohort cannot be its own parent");
        decode_groups(&c, spec, out->parent != NULL, "a parentName",
                      &out->groups, &out->n_groups);
        out->fair_weight_milli = fair_weight(&c, spec);
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_cohort_release(struct fq_cohort *v)
{
    objmem_free(&v->mem);
}

/* --- LocalQueue ------------------------------------------------------------------ */

int fq_localqueue_decode(const struct fq_value *obj, const char *file,
                         struct fq_localqueue *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_LOCALQUEUE, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = fld_map(&c, obj, F(LQ_SPEC));
        size_t old = path_key(&c, "spec");
        if (spec)
            out->cluster_queue = fld_str(&c, spec, F(LQ_CQ));
        out->stop_policy = (enum fq_stop_policy)fld_enum(&c, spec, F(Q_STOP));
        out->fair_weight_milli = fair_weight(&c, spec);
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_localqueue_release(struct fq_localqueue *v)
{
    objmem_free(&v->mem);
}

/* --- Workload ----------------------------------------------------------------------- */

/* The `parts` (enum fq_wl_status_part) of status into out. */
static void decode_workload_status(struct dctx *c, const struct fq_value *st,
                                   unsigned parts, struct fq_workload *out)
{
    size_t old = path_key(c, "status");
    if (parts & FQ_WL_CONDITIONS)
        want_conditions(c, st, fld_key(F(WL_ST_COND)), &out->conditions);
    const struct fq_value *adm =
        parts & FQ_WL_ADMISSION ? fld_map(c, st, F(WL_ST_ADM)) : NULL;
    if (adm) {
        out->has_admission = true;
        size_t o2 = path_key(c, "admission");
        out->admission_cluster_queue = fld_str(c, adm, F(WL_ST_ADM_CQ));
        const struct fq_value *psa = fld_seq(c, adm, F(WL_ST_PSA));
        if (psa) {
            out->assignments =
                MEM_ARRAY(c, struct fq_podset_assignment, psa->u.seq.n);
            size_t o3 = path_key(c, "podSetAssignments");
            for (size_t i = 0; i < psa->u.seq.n; i++) {
                const struct fq_value *a = psa->u.seq.items[i];
                size_t o4 = path_idx(c, i);
                if (!a || a->type != FQ_V_MAP) {
                    derr(c, a, "must be a mapping, not %s", type_word(a));
                } else {
                    struct fq_podset_assignment *pa =
                        &out->assignments[out->n_assignments++];
                    pa->name = fld_str(c, a, F(WL_ST_PSA_NAME));
                    fld_kvs(c, a, F(WL_ST_PSA_FLAVORS), &pa->flavors);
                    want_resources(c, a, fld_key(F(WL_ST_PSA_USAGE)), false,
                                   &pa->resource_usage);
                    pa->count = fld_int(c, a, F(WL_ST_PSA_COUNT), NULL);
                }
                path_pop(c, o4);
            }
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    const struct fq_value *acs =
        parts & FQ_WL_CHECKS ? fld_seq(c, st, F(WL_ST_CHECKS)) : NULL;
    if (acs) {
        out->check_states = MEM_ARRAY(c, struct fq_check_status, acs->u.seq.n);
        size_t o2 = path_key(c, "admissionChecks");
        for (size_t i = 0; i < acs->u.seq.n; i++) {
            const struct fq_value *a = acs->u.seq.items[i];
            size_t o3 = path_idx(c, i);
            if (!a || a->type != FQ_V_MAP) {
                derr(c, a, "must be a mapping, not %s", type_word(a));
            } else {
                /* One pass over the entry (fields()), then each row's
                 * check on the value found. */
                static const enum kueue_row rows[] = {
                    WL_ST_CK_NAME, WL_ST_CK_STATE, WL_ST_CK_MESSAGE,
                    WL_ST_CK_LTT,  WL_ST_CK_RETRY, WL_ST_CK_REQUEUE};

                const char *keys[6];
                for (size_t k = 0; k < 6; k++)
                    keys[k] = fld_key(F(rows[k]));
                const struct fq_value *f[6];
                fields(a, keys, 6, f);
                struct fq_check_status *cs =
                    &out->check_states[out->n_check_states++];
                cs->name = str_of(c, a, keys[0], f[0], true);
                cs->state = (enum fq_check_state)enum_of(
                    c, a, keys[1], f[1], F(WL_ST_CK_STATE)->names,
                    (int)F(WL_ST_CK_STATE)->def);
                cs->message = str_of(c, a, keys[2], f[2], false);
                cs->last_transition_time = str_of(c, a, keys[3], f[3], false);
                cs->retry_count = int_of(
                    c, keys[4], f[4], F(WL_ST_CK_RETRY)->def,
                    F(WL_ST_CK_RETRY)->min, F(WL_ST_CK_RETRY)->max, NULL);
                cs->requeue_after_seconds = int_of(
                    c, keys[5], f[5], F(WL_ST_CK_REQUEUE)->def,
                    F(WL_ST_CK_REQUEUE)->min, F(WL_ST_CK_REQUEUE)->max, NULL);
            }
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    const struct fq_value *rq =
        parts & FQ_WL_REQUEUE ? fld_map(c, st, F(WL_ST_RQ)) : NULL;
    if (rq) {
        out->has_requeue_state = true;
        size_t o2 = path_key(c, "requeueState");
        out->requeue_count = fld_int(c, rq, F(WL_ST_RQ_COUNT), NULL);
        out->requeue_at = fld_str(c, rq, F(WL_ST_RQ_AT));
        path_pop(c, o2);
    }
    path_pop(c, old);
}

/* A Workload, spec.podSets too when `podsets`. */
static int decode_workload(const struct fq_value *obj, const char *file,
                           bool podsets, struct fq_workload *out,
                           struct fq_errlist *errs)
{
    const char *const *sources = source_names;
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_WORKLOAD, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = fld_map(&c, obj, F(WL_SPEC));
        size_t old = path_key(&c, "spec");
        const struct fq_value *ps =
            podsets ? fld_seq(&c, spec, F(WL_PODSETS)) : NULL;
        if (ps) {
            out->podsets = MEM_ARRAY(&c, struct fq_podset, ps->u.seq.n);
            size_t o2 = path_key(&c, "podSets");
            size_t with_min = 0;
            for (size_t i = 0; i < ps->u.seq.n; i++) {
                const struct fq_value *p = ps->u.seq.items[i];
                size_t o3 = path_idx(&c, i);
                if (!p || p->type != FQ_V_MAP) {
                    derr(&c, p, "must be a mapping, not %s", type_word(p));
                    path_pop(&c, o3);
                    continue;
                }
                struct fq_podset *s = &out->podsets[out->n_podsets++];
                s->name = fld_str(&c, p, F(WL_PS_NAME));
                if (!s->name)
                    s->name = "main";
                for (size_t j = 0; j + 1 < out->n_podsets; j++)
                    if (strcmp(out->podsets[j].name, s->name) == 0)
                        derr_key(&c, field(p, "name"), "name",
                                 "duplicate podSet name \"%s\"", s->name);
                s->count = fld_int(&c, p, F(WL_PS_COUNT), NULL);
                s->min_count = fld_int(&c, p, F(WL_PS_MIN), &s->has_min_count);
                if (s->has_min_count) {
                    if (++with_min == 2)
                        derr_key(&c, field(p, "minCount"), "minCount",
                                 "only one podSet may set minCount");
                    if (s->min_count > s->count)
                        derr_key(&c, field(p, "minCount"), "minCount",
                                 "must be less than or equal to count (%lld)",
                                 (long long)s->count);
                }
                want_podtemplate(&c, p, fld_key(F(WL_PS_TEMPLATE)), true,
                                 &s->template);
                path_pop(&c, o3);
            }
            path_pop(&c, o2);
        }
        out->queue_name = fld_str(&c, spec, F(WL_QUEUE));
        out->priority_class_name = fld_str(&c, spec, F(WL_PCN));
        int src = fld_enum(&c, spec, F(WL_PCS));
        out->priority_class_source = src > 0 ? sources[src] : NULL;
        const struct fq_value *ref = fld_map(&c, spec, F(WL_PCREF));
        if (ref) {
            size_t o2 = path_key(&c, "priorityClassRef");
            const char *grp = fld_str(&c, ref, F(WL_PCREF_GROUP));
            const char *kind = fld_str(&c, ref, F(WL_PCREF_KIND));
            out->priority_class_name = fld_str(&c, ref, F(WL_PCREF_NAME));
            if (kind && strcmp(kind, "WorkloadPriorityClass") == 0)
                out->priority_class_source = sources[1];
            else if (kind && strcmp(kind, "PriorityClass") == 0)
                out->priority_class_source = sources[2];
            else if (kind)
                derr_key(&c, field(ref, "kind"), "kind",
                         "unsupported value \"%s\": must be one of "
                         "WorkloadPriorityClass, PriorityClass",
                         kind);
            (void)grp;
            path_pop(&c, o2);
        }
        out->priority = fld_int(&c, spec, F(WL_PRIORITY), &out->has_priority);
        out->active = fld_bool(&c, spec, F(WL_ACTIVE));
        out->max_exec_seconds =
            fld_int(&c, spec, F(WL_MAXEXEC), &out->has_max_exec);
        path_pop(&c, old);
        const struct fq_value *st = fld_map(&c, obj, F(WL_STATUS));
        if (st)
            decode_workload_status(&c, st, FQ_WL_STATUS_ALL, out);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

int fq_workload_decode(const struct fq_value *obj, const char *file,
                       struct fq_workload *out, struct fq_errlist *errs)
{
    return decode_workload(obj, file, true, out, errs);
}

int fq_workload_decode_no_podsets(const struct fq_value *obj,
                                  struct fq_workload *out)
{
    return decode_workload(obj, NULL, false, out, NULL);
}

int fq_workload_status_decode(const struct fq_value *obj, unsigned parts,
                              struct fq_workload *out)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    memset(&c, 0, sizeof(c));
    c.mem = &out->mem;
    c.obj = obj;
    c.kind = FQ_KIND_WORKLOAD;
    const struct fq_value *st = fq_map_get(obj, "status");
    if (st && st->type == FQ_V_MAP)
        decode_workload_status(&c, st, parts, out);
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_workload_release(struct fq_workload *v)
{
    objmem_free(&v->mem);
}

/* --- WorkloadPriorityClass ----------------------------------------------------------- */

int fq_workloadpriorityclass_decode(const struct fq_value *obj,
                                    const char *file,
                                    struct fq_workloadpriorityclass *out,
                                    struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_WORKLOADPRIORITYCLASS,
                   &out->mem, &out->meta) == 0) {
        if (!field(obj, "value"))
            derr_missing(&c, obj, "value");
        out->value = fld_int(&c, obj, F(WPC_VALUE), NULL);
        out->description = fld_str(&c, obj, F(WPC_DESCRIPTION));
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_workloadpriorityclass_release(struct fq_workloadpriorityclass *v)
{
    objmem_free(&v->mem);
}

/* --- AdmissionCheck ------------------------------------------------------------------ */

int fq_admissioncheck_decode(const struct fq_value *obj, const char *file,
                             struct fq_admissioncheck *out,
                             struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_ADMISSIONCHECK, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = fld_map(&c, obj, F(AC_SPEC));
        size_t old = path_key(&c, "spec");
        if (spec)
            out->controller_name = fld_str(&c, spec, F(AC_CONTROLLER));
        const struct fq_value *p = fld_map(&c, spec, F(AC_PARAMS));
        if (p) {
            out->has_parameters = true;
            size_t o2 = path_key(&c, "parameters");
            out->param_api_group = fld_str(&c, p, F(AC_PARAMS_GROUP));
            out->param_kind = fld_str(&c, p, F(AC_PARAMS_KIND));
            out->param_name = fld_str(&c, p, F(AC_PARAMS_NAME));
            path_pop(&c, o2);
        }
        fld_int(&c, spec, F(AC_RETRY), NULL);
        path_pop(&c, old);
        const struct fq_value *st = fld_map(&c, obj, F(AC_STATUS));
        if (st) {
            size_t o2 = path_key(&c, "status");
            want_conditions(&c, st, fld_key(F(AC_ST_COND)), &out->conditions);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_admissioncheck_release(struct fq_admissioncheck *v)
{
    objmem_free(&v->mem);
}

/* --- ProvisioningRequestConfig ------------------------------------------------------- */

/* Parameters of a ProvisioningRequest(Config): <= 100, values <= 255. */
static void want_params(struct dctx *c, const struct fq_value *spec,
                        struct fq_kvs *out)
{
    fld_kvs(c, spec, F(P_PARAMS), out);
    const struct fq_value *p = field(spec, "parameters");
    for (size_t i = 0; i < out->n; i++)
        if (strlen(out->items[i].value) > 255) {
            size_t old = path_key(c, "parameters");
            derr_key(c, fq_map_get(p, out->items[i].key), out->items[i].key,
                     "must be no more than 255 characters");
            path_pop(c, old);
        }
}

int fq_provisioningrequestconfig_decode(
    const struct fq_value *obj, const char *file,
    struct fq_provisioningrequestconfig *out, struct fq_errlist *errs)
{
    const char *const *merge = merge_names;
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_PROVISIONINGREQUESTCONFIG,
                   &out->mem, &out->meta) == 0) {
        const struct fq_value *spec = fld_map(&c, obj, F(PRC_SPEC));
        size_t old = path_key(&c, "spec");
        if (spec)
            out->provisioning_class_name = fld_str(&c, spec, F(PRC_CLASS));
        want_params(&c, spec, &out->parameters);
        out->managed_resources =
            fld_strs(&c, spec, F(PRC_MANAGED), &out->n_managed_resources);
        out->backoff_limit_count = F(PRC_RETRY_LIMIT)->def;
        out->backoff_base_seconds = F(PRC_RETRY_BASE)->def;
        out->backoff_max_seconds = F(PRC_RETRY_MAX)->def;
        const struct fq_value *rs = fld_map(&c, spec, F(PRC_RETRY));
        if (rs) {
            size_t o2 = path_key(&c, "retryStrategy");
            out->backoff_limit_count =
                fld_int(&c, rs, F(PRC_RETRY_LIMIT), NULL);
            out->backoff_base_seconds =
                fld_int(&c, rs, F(PRC_RETRY_BASE), NULL);
            out->backoff_max_seconds = fld_int(&c, rs, F(PRC_RETRY_MAX), NULL);
            path_pop(&c, o2);
        }
        const struct fq_value *pu = fld_map(&c, spec, F(PRC_PSU));
        if (pu) {
            size_t o2 = path_key(&c, "podSetUpdates");
            const struct fq_value *ns = fld_seq(&c, pu, F(PRC_PSU_NS));
            if (ns) {
                out->node_selector_updates =
                    MEM_ARRAY(&c, struct fq_prc_node_selector, ns->u.seq.n);
                size_t o3 = path_key(&c, "nodeSelector");
                for (size_t i = 0; i < ns->u.seq.n; i++) {
                    const struct fq_value *e = ns->u.seq.items[i];
                    size_t o4 = path_idx(&c, i);
                    if (!e || e->type != FQ_V_MAP) {
                        derr(&c, e, "must be a mapping, not %s", type_word(e));
                    } else {
                        struct fq_prc_node_selector *u =
                            &out->node_selector_updates
                                 [out->n_node_selector_updates++];
                        u->key = fld_str(&c, e, F(PRC_PSU_NS_KEY));
                        u->value_from_detail =
                            fld_str(&c, e, F(PRC_PSU_NS_FROM));
                    }
                    path_pop(&c, o4);
                }
                path_pop(&c, o3);
            }
            path_pop(&c, o2);
        }
        int m = fld_enum(&c, spec, F(PRC_MERGE));
        out->podset_merge_policy = m >= 0 ? merge[m] : NULL;
        path_pop(&c, old);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_provisioningrequestconfig_release(
    struct fq_provisioningrequestconfig *v)
{
    objmem_free(&v->mem);
}

/* --- ProvisioningRequest (autoscaling.x-k8s.io) ------------------------------------- */

int fq_provisioningrequest_decode(const struct fq_value *obj, const char *file,
                                  struct fq_provisioningrequest *out,
                                  struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_PROVISIONINGREQUEST, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *spec = fld_map(&c, obj, F(PR_SPEC));
        size_t old = path_key(&c, "spec");
        if (spec)
            out->provisioning_class_name = fld_str(&c, spec, F(PR_CLASS));
        const struct fq_value *ps =
            spec ? fld_seq(&c, spec, F(PR_PODSETS)) : NULL;
        if (ps) {
            out->podsets = MEM_ARRAY(&c, struct fq_provreq_podset, ps->u.seq.n);
            size_t o2 = path_key(&c, "podSets");
            for (size_t i = 0; i < ps->u.seq.n; i++) {
                const struct fq_value *p = ps->u.seq.items[i];
                size_t o3 = path_idx(&c, i);
                if (!p || p->type != FQ_V_MAP) {
                    derr(&c, p, "must be a mapping, not %s", type_word(p));
                } else {
                    struct fq_provreq_podset *s =
                        &out->podsets[out->n_podsets++];
                    const struct fq_value *ref = fld_map(&c, p, F(PR_PS_REF));
                    if (ref) {
                        size_t o4 = path_key(&c, "podTemplateRef");
                        s->template_name = fld_str(&c, ref, F(PR_PS_REF_NAME));
                        path_pop(&c, o4);
                    }
                    if (!field(p, "count"))
                        derr_missing(&c, p, "count");
                    s->count = fld_int(&c, p, F(PR_PS_COUNT), NULL);
                }
                path_pop(&c, o3);
            }
            path_pop(&c, o2);
        }
        want_params(&c, spec, &out->parameters);
        path_pop(&c, old);
        const struct fq_value *st = fld_map(&c, obj, F(PR_STATUS));
        if (st) {
            size_t o2 = path_key(&c, "status");
            want_conditions(&c, st, fld_key(F(PR_ST_COND)), &out->conditions);
            fld_kvs(&c, st, F(PR_ST_DETAILS), &out->class_details);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_provisioningrequest_release(struct fq_provisioningrequest *v)
{
    objmem_free(&v->mem);
}
