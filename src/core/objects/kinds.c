/*
 * kinds.c - the registry of object kinds flexq knows (see kinds.h).
 *
 * One static table, indexed by enum fq_kind, names every kind: API group,
 * served versions, plural, singular and short names as kubectl / Kueue /
 * KubeRay spell them, scope and whether a status subresource exists. The
 * lookups are linear scans: the table has some twenty rows and is read on the
 * slow paths only (CLI argument parsing, API routing, manifest reading).
 *
 * Invariants:
 *   1. table[k].kind == k for every k in (FQ_KIND_NONE, FQ_KIND__COUNT).
 *   2. No plural, singular or short name is used by two kinds, so that
 *      fq_kind_lookup is unambiguous (test_objects checks this).
 *   3. api_version[k] is "group/version", or "version" for the core group.
 *
 * It does not know the fields of any kind: that is objects.h.
 */
#include "flexq/kinds.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#define KUEUE "kueue.x-k8s.io"

static const struct fq_kind_info table[FQ_KIND__COUNT] = {
    [FQ_KIND_NONE] =
        {FQ_KIND_NONE, "", "", "", NULL, "", "", {NULL}, false, false},
    [FQ_KIND_RESOURCEFLAVOR] = {FQ_KIND_RESOURCEFLAVOR,
                                "ResourceFlavor",
                                KUEUE,
                                "v1beta1",
                                "v1beta2",
                                "resourceflavors",
                                "resourceflavor",
                                {"rf", "flavor", "flavors"},
                                false,
                                false},
    [FQ_KIND_CLUSTERQUEUE] = {FQ_KIND_CLUSTERQUEUE,
                              "ClusterQueue",
                              KUEUE,
                              "v1beta1",
                              "v1beta2",
                              "clusterqueues",
                              "clusterqueue",
                              {"cq", NULL},
                              false,
                              true},
    [FQ_KIND_COHORT] = {FQ_KIND_COHORT,
                        "Cohort",
                        KUEUE,
                        "v1beta1",
                        "v1beta2",
                        "cohorts",
                        "cohort",
                        {"co", NULL},
                        false,
                        true},
    [FQ_KIND_LOCALQUEUE] = {FQ_KIND_LOCALQUEUE,
                            "LocalQueue",
                            KUEUE,
                            "v1beta1",
                            "v1beta2",
                            "localqueues",
                            "localqueue",
                            {"lq", "queue", "queues"},
                            true,
                            true},
    [FQ_KIND_WORKLOAD] = {FQ_KIND_WORKLOAD,
                          "Workload",
                          KUEUE,
                          "v1beta1",
                          "v1beta2",
                          "workloads",
                          "workload",
                          {"wl", "kwl"},
                          true,
                          true},
    [FQ_KIND_WORKLOADPRIORITYCLASS] = {FQ_KIND_WORKLOADPRIORITYCLASS,
                                       "WorkloadPriorityClass",
                                       KUEUE,
                                       "v1beta1",
                                       "v1beta2",
                                       "workloadpriorityclasses",
                                       "workloadpriorityclass",
                                       {"wpc", NULL},
                                       false,
                                       false},
    [FQ_KIND_ADMISSIONCHECK] = {FQ_KIND_ADMISSIONCHECK,
                                "AdmissionCheck",
                                KUEUE,
                                "v1beta1",
                                "v1beta2",
                                "admissionchecks",
                                "admissioncheck",
                                {"ac", NULL},
                                false,
                                true},
    [FQ_KIND_PROVISIONINGREQUESTCONFIG] = {FQ_KIND_PROVISIONINGREQUESTCONFIG,
                                           "ProvisioningRequestConfig",
                                           KUEUE,
                                           "v1beta1",
                                           "v1beta2",
                                           "provisioningrequestconfigs",
                                           "provisioningrequestconfig",
                                           {"prc", NULL},
                                           false,
                                           false},
    [FQ_KIND_PROVISIONINGREQUEST] = {FQ_KIND_PROVISIONINGREQUEST,
                                     "ProvisioningRequest",
                                     "autoscaling.x-k8s.io",
                                     "v1",
                                     "v1beta1",
                                     "provisioningrequests",
                                     "provisioningrequest",
                                     {"provreq", "provreqs", NULL},
                                     true,
                                     true},
    [FQ_KIND_RAYJOB] = {FQ_KIND_RAYJOB,
                        "RayJob",
                        "ray.io",
                        "v1",
                        NULL,
                        "rayjobs",
                        "rayjob",
                        {NULL},
                        true,
                        true},
    [FQ_KIND_RAYCLUSTER] = {FQ_KIND_RAYCLUSTER,
                            "RayCluster",
                            "ray.io",
                            "v1",
                            NULL,
                            "rayclusters",
                            "raycluster",
                            {NULL},
                            true,
                            true},
    [FQ_KIND_JOB] = {FQ_KIND_JOB,
                     "Job",
                     "batch",
                     "v1",
                     NULL,
                     "jobs",
                     "job",
                     {NULL},
                     true,
                     true},
    [FQ_KIND_CONFIGMAP] = {FQ_KIND_CONFIGMAP,
                           "ConfigMap",
                           "",
                           "v1",
                           NULL,
                           "configmaps",
                           "configmap",
                           {"cm", NULL},
                           true,
                           false},
    [FQ_KIND_POD] = {FQ_KIND_POD,
                     "Pod",
                     "",
                     "v1",
                     NULL,
                     "pods",
                     "pod",
                     {"po", NULL},
                     true,
                     true},
    [FQ_KIND_NODE] = {FQ_KIND_NODE,
                      "Node",
                      "",
                      "v1",
                      NULL,
                      "nodes",
                      "node",
                      {"no", NULL},
                      false,
                      true},
    [FQ_KIND_EVENT] = {FQ_KIND_EVENT,
                       "Event",
                       "",
                       "v1",
                       NULL,
                       "events",
                       "event",
                       {"ev", NULL},
                       true,
                       false},
    [FQ_KIND_NAMESPACE] = {FQ_KIND_NAMESPACE,
                           "Namespace",
                           "",
                           "v1",
                           NULL,
                           "namespaces",
                           "namespace",
                           {"ns", NULL},
                           false,
                           true},
    [FQ_KIND_NODEPOOL] = {FQ_KIND_NODEPOOL,
                          "NodePool",
                          "flexq.dev",
                          "v1alpha1",
                          NULL,
                          "nodepools",
                          "nodepool",
                          {"np", NULL},
                          false,
                          true},
    [FQ_KIND_CAPACITYMODEL] = {FQ_KIND_CAPACITYMODEL,
                               "CapacityModel",
                               "flexq.dev",
                               "v1alpha1",
                               NULL,
                               "capacitymodels",
                               "capacitymodel",
                               {"capm", NULL},
                               false,
                               true},
    [FQ_KIND_CLUSTER] = {FQ_KIND_CLUSTER,
                         "Cluster",
                         "flexq.dev",
                         "v1alpha1",
                         NULL,
                         "clusters",
                         "cluster",
                         {NULL},
                         false,
                         true},
    [FQ_KIND_PRIORITYCLASS] = {FQ_KIND_PRIORITYCLASS,
                               "PriorityClass",
                               "scheduling.k8s.io",
                               "v1",
                               NULL,
                               "priorityclasses",
                               "priorityclass",
                               {"pc", NULL},
                               false,
                               false},
    [FQ_KIND_JOBSET] = {FQ_KIND_JOBSET,
                        "JobSet",
                        "jobset.x-k8s.io",
                        "v1alpha2",
                        NULL,
                        "jobsets",
                        "jobset",
                        {NULL},
                        true,
                        true},
    [FQ_KIND_PYTORCHJOB] = {FQ_KIND_PYTORCHJOB,
                            "PyTorchJob",
                            "kubeflow.org",
                            "v1",
                            NULL,
                            "pytorchjobs",
                            "pytorchjob",
                            {NULL},
                            true,
                            true},
    [FQ_KIND_MPIJOB] = {FQ_KIND_MPIJOB,
                        "MPIJob",
                        "kubeflow.org",
                        "v2beta1",
                        NULL,
                        "mpijobs",
                        "mpijob",
                        {NULL},
                        true,
                        true},
    [FQ_KIND_LEADERWORKERSET] = {FQ_KIND_LEADERWORKERSET,
                                 "LeaderWorkerSet",
                                 "leaderworkerset.x-k8s.io",
                                 "v1",
                                 NULL,
                                 "leaderworkersets",
                                 "leaderworkerset",
                                 {"lws", NULL},
                                 true,
                                 true},
    [FQ_KIND_TRAINJOB] = {FQ_KIND_TRAINJOB,
                          "TrainJob",
                          "trainer.kubeflow.org",
                          "v1alpha1",
                          NULL,
                          "trainjobs",
                          "trainjob",
                          {NULL},
                          true,
                          true},
    [FQ_KIND_SERVICE] = {FQ_KIND_SERVICE,
                         "Service",
                         "",
                         "v1",
                         NULL,
                         "services",
                         "service",
                         {"svc", NULL},
                         true,
                         true},
    /* Kueue serves Topology in v1beta1 (and v1alpha1 before it). */
    [FQ_KIND_TOPOLOGY] = {FQ_KIND_TOPOLOGY,
                          "Topology",
                          KUEUE,
                          "v1beta1",
                          "v1alpha1",
                          "topologies",
                          "topology",
                          {NULL},
                          false,
                          false},
    /* Kubernetes gives Secret no short name and no category. */
    [FQ_KIND_SECRET] = {FQ_KIND_SECRET,
                        "Secret",
                        "",
                        "v1",
                        NULL,
                        "secrets",
                        "secret",
                        {NULL},
                        true,
                        false},
};

/* The preferred apiVersion string of each kind (invariant 3). */
static const char *const api_versions[FQ_KIND__COUNT] = {
    [FQ_KIND_NONE] = "",
    [FQ_KIND_RESOURCEFLAVOR] = KUEUE "/v1beta1",
    [FQ_KIND_CLUSTERQUEUE] = KUEUE "/v1beta1",
    [FQ_KIND_COHORT] = KUEUE "/v1beta1",
    [FQ_KIND_LOCALQUEUE] = KUEUE "/v1beta1",
    [FQ_KIND_WORKLOAD] = KUEUE "/v1beta1",
    [FQ_KIND_WORKLOADPRIORITYCLASS] = KUEUE "/v1beta1",
    [FQ_KIND_ADMISSIONCHECK] = KUEUE "/v1beta1",
    [FQ_KIND_PROVISIONINGREQUESTCONFIG] = KUEUE "/v1beta1",
    [FQ_KIND_PROVISIONINGREQUEST] = "autoscaling.x-k8s.io/v1",
    [FQ_KIND_RAYJOB] = "ray.io/v1",
    [FQ_KIND_RAYCLUSTER] = "ray.io/v1",
    [FQ_KIND_JOB] = "batch/v1",
    [FQ_KIND_CONFIGMAP] = "v1",
    [FQ_KIND_POD] = "v1",
    [FQ_KIND_NODE] = "v1",
    [FQ_KIND_EVENT] = "v1",
    [FQ_KIND_NAMESPACE] = "v1",
    [FQ_KIND_NODEPOOL] = "flexq.dev/v1alpha1",
    [FQ_KIND_CAPACITYMODEL] = "flexq.dev/v1alpha1",
    [FQ_KIND_CLUSTER] = "flexq.dev/v1alpha1",
    [FQ_KIND_PRIORITYCLASS] = "scheduling.k8s.io/v1",
    [FQ_KIND_JOBSET] = "jobset.x-k8s.io/v1alpha2",
    [FQ_KIND_PYTORCHJOB] = "kubeflow.org/v1",
    [FQ_KIND_MPIJOB] = "kubeflow.org/v2beta1",
    [FQ_KIND_LEADERWORKERSET] = "leaderworkerset.x-k8s.io/v1",
    [FQ_KIND_TRAINJOB] = "trainer.kubeflow.org/v1alpha1",
    [FQ_KIND_SERVICE] = "v1",
    [FQ_KIND_TOPOLOGY] = KUEUE "/v1beta1",
    [FQ_KIND_SECRET] = "v1",
};

const struct fq_kind_info *fq_kind_info(enum fq_kind k)
{
    if ((int)k <= FQ_KIND_NONE || k >= FQ_KIND__COUNT)
        return &table[FQ_KIND_NONE];
    return &table[k];
}

const char *fq_kind_api_version(enum fq_kind k)
{
    if ((int)k <= FQ_KIND_NONE || k >= FQ_KIND__COUNT)
        return "";
    return api_versions[k];
}

/* Does "group/version" (or "version" when group is "") name this entry? */
static bool serves(const struct fq_kind_info *ki, const char *group,
                   size_t glen, const char *version)
{
    if (strlen(ki->group) != glen || strncmp(ki->group, group, glen) != 0)
        return false;
    return strcmp(version, ki->version) == 0 ||
           (ki->alt_version && strcmp(version, ki->alt_version) == 0);
}

enum fq_kind fq_kind_from_gvk(const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return FQ_KIND_NONE;
    const char *slash = strchr(api_version, '/');
    const char *group = slash ? api_version : "";
    size_t glen = slash ? (size_t)(slash - api_version) : 0;
    const char *version = slash ? slash + 1 : api_version;
    for (int k = FQ_KIND_NONE + 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = &table[k];
        /* the first letter first: a call per kind was most of this */
        if (ki->name[0] == kind[0] && strcmp(ki->name, kind) == 0 &&
            serves(ki, group, glen, version))
            return (enum fq_kind)k;
    }
    return FQ_KIND_NONE;
}

/* Does `s` (of length n) name entry `ki` by kind, plural, singular or short
 * name, ignoring case? */
static bool names(const struct fq_kind_info *ki, const char *s, size_t n)
{
    const char *cands[3] = {ki->name, ki->plural, ki->singular};
    for (size_t i = 0; i < 3; i++)
        if (strlen(cands[i]) == n && strncasecmp(cands[i], s, n) == 0)
            return true;
    for (size_t i = 0; i < 4 && ki->shortnames[i]; i++)
        if (strlen(ki->shortnames[i]) == n &&
            strncasecmp(ki->shortnames[i], s, n) == 0)
            return true;
    return false;
}

/* Does the suffix after "name." fit the entry: "group" or "version.group"? */
static bool suffix_fits(const struct fq_kind_info *ki, const char *sfx)
{
    if (strcasecmp(sfx, ki->group) == 0)
        return true;
    const char *dot = strchr(sfx, '.');
    if (!dot || strcasecmp(dot + 1, ki->group) != 0)
        return false;
    size_t vlen = (size_t)(dot - sfx);
    if (strlen(ki->version) == vlen && strncmp(sfx, ki->version, vlen) == 0)
        return true;
    return ki->alt_version && strlen(ki->alt_version) == vlen &&
           strncmp(sfx, ki->alt_version, vlen) == 0;
}

enum fq_kind fq_kind_lookup(const char *name)
{
    if (!name || !*name)
        return FQ_KIND_NONE;
    const char *dot = strchr(name, '.');
    size_t n = dot ? (size_t)(dot - name) : strlen(name);
    for (int k = FQ_KIND_NONE + 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = &table[k];
        if (!names(ki, name, n))
            continue;
        if (!dot || suffix_fits(ki, dot + 1))
            return (enum fq_kind)k;
    }
    return FQ_KIND_NONE;
}
