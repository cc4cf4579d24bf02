/*
 * test_objects.c - the kind registry, the name rules, and the decoders as
 * validators: a table of small manifests, each either valid or refused
 * with an error that must contain a given text at a given field path;
 * then the views' values, defaults, the v1beta1/v1beta2 spellings, and the
 * helpers (tolerations, selectors, pod requests).
 *
 * The exact, whole messages are pinned by the fixture corpus
 * (test_manifest.c); this table pins the rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/kinds.h"
#include "flexq/objects.h"
#include "flexq/value.h"
#include "yaml_testlib.h"

/* --- kinds ------------------------------------------------------------------ */

static void test_kind_table(void **state)
{
    (void)state;
    for (int k = FQ_KIND_NONE + 1; k < FQ_KIND__COUNT; k++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)k);
        assert_int_equal(ki->kind, k);
        assert_true(strlen(ki->name) > 0);
        assert_int_equal(fq_kind_lookup(ki->name), k);
        assert_int_equal(fq_kind_lookup(ki->plural), k);
        assert_int_equal(fq_kind_lookup(ki->singular), k);
        for (int i = 0; i < 4 && ki->shortnames[i]; i++)
            assert_int_equal(fq_kind_lookup(ki->shortnames[i]), k);
        assert_int_equal(
            fq_kind_from_gvk(fq_kind_api_version((enum fq_kind)k), ki->name),
            k);
        /* No name is shared between kinds (invariant 2 of kinds.c). */
        for (int j = FQ_KIND_NONE + 1; j < k; j++) {
            const struct fq_kind_info *kj = fq_kind_info((enum fq_kind)j);
            assert_string_not_equal(ki->plural, kj->plural);
            for (int a = 0; a < 4 && ki->shortnames[a]; a++)
                for (int b = 0; b < 4 && kj->shortnames[b]; b++)
                    assert_string_not_equal(ki->shortnames[a],
                                            kj->shortnames[b]);
        }
    }
    assert_ptr_equal(fq_kind_info((enum fq_kind)999),
                     fq_kind_info(FQ_KIND_NONE));
}

static void test_kind_lookup(void **state)
{
    (void)state;
    assert_int_equal(fq_kind_lookup("cq"), FQ_KIND_CLUSTERQUEUE);
    assert_int_equal(fq_kind_lookup("CQ"), FQ_KIND_CLUSTERQUEUE);
    assert_int_equal(fq_kind_lookup("ClusterQueues"), FQ_KIND_CLUSTERQUEUE);
    assert_int_equal(fq_kind_lookup("workloads.kueue.x-k8s.io"),
                     FQ_KIND_WORKLOAD);
    assert_int_equal(fq_kind_lookup("workloads.v1beta2.kueue.x-k8s.io"),
                     FQ_KIND_WORKLOAD);
    assert_int_equal(fq_kind_lookup("workloads.ray.io"), FQ_KIND_NONE);
    assert_int_equal(fq_kind_lookup("wl"), FQ_KIND_WORKLOAD);
    assert_int_equal(fq_kind_lookup("kwl"), FQ_KIND_WORKLOAD);
    assert_int_equal(fq_kind_lookup("queue"), FQ_KIND_LOCALQUEUE);
    assert_int_equal(fq_kind_lookup("rf"), FQ_KIND_RESOURCEFLAVOR);
    assert_int_equal(fq_kind_lookup("flavor"), FQ_KIND_RESOURCEFLAVOR);
    assert_int_equal(fq_kind_lookup("provreq"), FQ_KIND_PROVISIONINGREQUEST);
    assert_int_equal(fq_kind_lookup("rayjobs"), FQ_KIND_RAYJOB);
    assert_int_equal(fq_kind_lookup("np"), FQ_KIND_NODEPOOL);
    assert_int_equal(fq_kind_lookup("capm"), FQ_KIND_CAPACITYMODEL);
    assert_int_equal(fq_kind_lookup("po"), FQ_KIND_POD);
    assert_int_equal(fq_kind_lookup("no"), FQ_KIND_NODE);
    assert_int_equal(fq_kind_lookup("cm"), FQ_KIND_CONFIGMAP);
    assert_int_equal(fq_kind_lookup("jobs.batch"), FQ_KIND_JOB);
    assert_int_equal(fq_kind_lookup(""), FQ_KIND_NONE);
    assert_int_equal(fq_kind_lookup("deployments"), FQ_KIND_NONE);

    assert_int_equal(fq_kind_from_gvk("kueue.x-k8s.io/v1beta2", "Workload"),
                     FQ_KIND_WORKLOAD);
    assert_int_equal(fq_kind_from_gvk("kueue.x-k8s.io/v1", "Workload"),
                     FQ_KIND_NONE);
    assert_int_equal(fq_kind_from_gvk("v1", "Pod"), FQ_KIND_POD);
    assert_int_equal(fq_kind_from_gvk("v1", "pod"), FQ_KIND_NONE);
    assert_int_equal(fq_kind_from_gvk("batch/v1", "Pod"), FQ_KIND_NONE);
    assert_int_equal(
        fq_kind_from_gvk("autoscaling.x-k8s.io/v1beta1", "ProvisioningRequest"),
        FQ_KIND_PROVISIONINGREQUEST);
    assert_int_equal(fq_kind_from_gvk(NULL, "Pod"), FQ_KIND_NONE);
    assert_string_equal(fq_kind_api_version(FQ_KIND_CLUSTERQUEUE),
                        "kueue.x-k8s.io/v1beta1");
    assert_string_equal(fq_kind_api_version(FQ_KIND_CONFIGMAP), "v1");
    assert_true(fq_kind_info(FQ_KIND_LOCALQUEUE)->namespaced);
    assert_false(fq_kind_info(FQ_KIND_CLUSTERQUEUE)->namespaced);
}

/* --- name rules --------------------------------------------------------------- */

static void test_name_rules(void **state)
{
    (void)state;

    static const struct {
        const char *s;
        bool label, subdomain, dns1035, qualified, value;
    } cases[] = {
        {"a", true, true, true, true, true},
        {"my-name", true, true, true, true, true},
        {"123-abc", true, true, false, true, true},
        {"a.b", false, true, false, true, true},
        {"-a", false, false, false, false, false},
        {"a-", false, false, false, false, false},
        {"A", false, false, false, true, true},
        {"a_b", false, false, false, true, true},
        {"", false, false, false, false, true},
        {"example.com/name", false, false, false, true, false},
        {"Example.com/name", false, false, false, false, false},
        {"example.com/", false, false, false, false, false},
        {"/name", false, false, false, false, false},
        {"a/b/c", false, false, false, false, false},
        {"a..b", false, false, false, true, true},
        {"kueue.x-k8s.io/queue-name", false, false, false, true, false},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *s = cases[i].s;
        if ((fq_check_dns1123_label(s) == NULL) != cases[i].label)
            fail_msg("label \"%s\"", s);
        if ((fq_check_dns1123_subdomain(s) == NULL) != cases[i].subdomain)
            fail_msg("subdomain \"%s\"", s);
        if ((fq_check_dns1035_label(s) == NULL) != cases[i].dns1035)
            fail_msg("dns1035 \"%s\"", s);
        if ((fq_check_qualified_name(s) == NULL) != cases[i].qualified)
            fail_msg("qualified \"%s\"", s);
        if ((fq_check_label_value(s) == NULL) != cases[i].value)
            fail_msg("label value \"%s\"", s);
    }
    char long_label[70];
    memset(long_label, 'a', 64);
    long_label[64] = '\0';
    assert_non_null(fq_check_dns1123_label(long_label));
    assert_null(fq_check_dns1123_subdomain(long_label) ? "x" : NULL);
    long_label[63] = '\0';
    assert_null(fq_check_dns1123_label(long_label));
}

/* --- the rule table ---------------------------------------------------------- */

#define CQ_HEAD                                             \
 "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n" \
 "metadata: {name: cq}\nspec:\n"
#define GROUP1                                      \
 "  resourceGroups:\n"                              \
 "  - coveredResources: [cpu, memory]\n"            \
 "    flavors:\n"                                   \
 "    - name: a\n"                                  \
 "      resources: [{name: cpu, nominalQuota: 4}, " \
 "{name: memory, nominalQuota: 8Gi}]\n"
#define POD_HEAD "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
#define RJ_HEAD                                                       \
 "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec:\n" \
 "  entrypoint: python x.py\n"
#define RJ_HEADGROUP    \
 "  rayClusterSpec:\n"  \
 "    headGroupSpec:\n" \
 "      template: {spec: {containers: [{name: h, image: ray}]}}\n"

struct rule_case {
    const char *name;
    const char *yaml;
    const char *path; /* NULL: the object is valid */
    const char *text; /* in the first error's message */
};

static const struct rule_case rules[] = {
    /* ResourceFlavor */
    {"rf minimal",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
     "metadata: {name: default}\n",
     NULL, NULL},
    {"rf v1beta2",
     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
     "metadata: {name: default}\nspec: {nodeLabels: {a: b}}\n",
     NULL, NULL},
    {"rf unknown fields kept",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
     "metadata: {name: d, finalizers: [x]}\nspec: {futureField: 1}\n"
     "extra: {a: [1, 2]}\n",
     NULL, NULL},
    {"rf taint value",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
     "ResourceFlavor\nmetadata: {name: d}\nspec:\n"
     "  nodeTaints: [{key: k, value: 'a b', effect: "
     "NoSchedule}]\n",
     "spec.nodeTaints[0].value", "invalid value \"a b\""},
    {"rf toleration seconds",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
     "ResourceFlavor\nmetadata: {name: d}\nspec:\n"
     "  tolerations: [{key: k, operator: Exists, "
     "effect: NoSchedule, tolerationSeconds: 5}]\n",
     "spec.tolerations[0].tolerationSeconds", "needs effect NoExecute"},
    {"rf empty key toleration",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
     "ResourceFlavor\nmetadata: {name: d}\nspec:\n"
     "  tolerations: [{value: v}]\n",
     "spec.tolerations[0].operator", "must be Exists when key is empty"},
    {"missing metadata", "apiVersion: v1\nkind: ConfigMap\n", "metadata",
     "required field is missing"},
    {"generateName instead of name",
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: cm-}\n", NULL,
     NULL},
    {"labels must be a mapping",
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: [a]}\n",
     "metadata.labels", "must be a mapping, not a list"},
    {"label value too long",
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {a: "
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\n",
     "metadata.labels.a", "must be no more than 63 characters"},
    /* ClusterQueue */
    {"cq minimal", CQ_HEAD "  namespaceSelector: {}\n" GROUP1, NULL, NULL},
    {"cq no spec",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
     "metadata: {name: cq}\n",
     "spec", "required field is missing"},
    {"cq cohortName v1beta2 with limits",
     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
     "metadata: {name: cq}\nspec:\n  cohortName: all\n"
     "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
     "    - name: a\n      resources: [{name: cpu, nominalQuota: 4, "
     "borrowingLimit: 2, lendingLimit: 1}]\n",
     NULL, NULL},
    {"cq cohort and cohortName",
     CQ_HEAD "  cohort: a\n  cohortName: a\n" GROUP1, "spec.cohort",
     "not both"},
    {"cq bad cohort name", CQ_HEAD "  cohort: My_Cohort\n" GROUP1,
     "spec.cohort", "invalid name \"My_Cohort\""},
    {"cq empty covered",
     CQ_HEAD "  resourceGroups:\n  - coveredResources: []\n"
             "    flavors: [{name: a, resources: []}]\n",
     "spec.resourceGroups[0].coveredResources", "at least 1 item"},
    {"cq no flavors",
     CQ_HEAD "  resourceGroups:\n  - coveredResources: [cpu]\n"
             "    flavors: []\n",
     "spec.resourceGroups[0].flavors", "at least 1 item"},
    {"cq duplicate flavor in group",
     CQ_HEAD "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
             "    - {name: a, resources: [{name: cpu, nominalQuota: 1}]}\n"
             "    - {name: a, resources: [{name: cpu, nominalQuota: 1}]}\n",
     "spec.resourceGroups[0].flavors[1].name", "duplicate flavor \"a\""},
    {"cq duplicate resource in flavor",
     CQ_HEAD "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
             "    - {name: a, resources: [{name: cpu, nominalQuota: 1}, "
             "{name: cpu, nominalQuota: 2}]}\n",
     "spec.resourceGroups[0].flavors[0].resources[1].name",
     "duplicate resource \"cpu\""},
    {"cq resources any order",
     CQ_HEAD "  resourceGroups:\n  - coveredResources: [cpu, memory]\n"
             "    flavors:\n    - {name: a, resources: [{name: memory, "
             "nominalQuota: 1Gi}, {name: cpu, nominalQuota: 500m}]}\n",
     NULL, NULL},
    {"cq quota as string",
     CQ_HEAD "  resourceGroups:\n  - coveredResources: "
             "[cpu]\n    flavors:\n    - {name: a, "
             "resources: [{name: cpu, nominalQuota: "
             "\"1e3\"}]}\n",
     NULL, NULL},
    {"cq quota as list",
     CQ_HEAD "  resourceGroups:\n  - coveredResources: "
             "[cpu]\n    flavors:\n    - {name: a, "
             "resources: [{name: cpu, nominalQuota: "
             "[1]}]}\n",
     "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
     "must be a quantity"},
    {"cq strict fifo", CQ_HEAD "  queueingStrategy: StrictFIFO\n" GROUP1, NULL,
     NULL},
    {"cq preemption values",
     CQ_HEAD
     "  preemption:\n    withinClusterQueue: LowerOrNewerEqualPriority\n"
     "    reclaimWithinCohort: Any\n    borrowWithinCohort: {policy: "
     "LowerPriority, maxPriorityThreshold: 100}\n" GROUP1,
     NULL, NULL},
    {"cq within any",
     CQ_HEAD "  preemption: {withinClusterQueue: Any}\n" GROUP1,
     "spec.preemption.withinClusterQueue", "unsupported value \"Any\""},
    {"cq v1beta1 fungibility aliases",
     CQ_HEAD "  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: "
             "Preempt}\n" GROUP1,
     NULL, NULL},
    {"cq preference ok",
     CQ_HEAD "  flavorFungibility: {whenCanBorrow: TryNextFlavor, "
             "whenCanPreempt: TryNextFlavor, preference: "
             "PreemptionOverBorrowing}\n" GROUP1,
     NULL, NULL},
    {"cq plain admissionChecks", CQ_HEAD GROUP1 "  admissionChecks: [a, b]\n",
     NULL, NULL},
    {"cq duplicate check",
     CQ_HEAD GROUP1 "  admissionChecksStrategy:\n    admissionChecks: [{name: "
                    "x}, {name: x}]\n",
     "spec.admissionChecksStrategy.admissionChecks[1].name",
     "duplicate admission check"},
    {"cq stop policy", CQ_HEAD "  stopPolicy: HoldAndDrain\n" GROUP1, NULL,
     NULL},
    {"cq fair weight", CQ_HEAD "  fairSharing: {weight: x}\n" GROUP1,
     "spec.fairSharing.weight", "invalid quantity \"x\""},
    {"cq admission scope",
     CQ_HEAD "  admissionScope: {admissionMode: "
             "UsageBasedAdmissionFairSharing}\n" GROUP1,
     NULL, NULL},
    {"cq admission mode unknown",
     CQ_HEAD "  admissionScope: {admissionMode: Fairest}\n" GROUP1,
     "spec.admissionScope.admissionMode", "Fairest"},
    {"cq admission mode missing", CQ_HEAD "  admissionScope: {}\n" GROUP1,
     "spec.admissionScope.admissionMode", "required field is missing"},
    {"cq selector In without values",
     CQ_HEAD "  namespaceSelector:\n    matchExpressions: [{key: a, "
             "operator: In}]\n" GROUP1,
     "spec.namespaceSelector.matchExpressions[0].values",
     "must not be empty when operator is In"},
    {"cq selector Exists with values",
     CQ_HEAD "  namespaceSelector:\n    matchExpressions: [{key: a, "
             "operator: Exists, values: [b]}]\n" GROUP1,
     "spec.namespaceSelector.matchExpressions[0].values",
     "must be empty when operator is Exists"},
    {"cq 64 covered limit",
     CQ_HEAD "  resourceGroups:\n  - coveredResources: "
             "[r0,r1,r2,r3,r4,r5,r6,r7,r8,r9,r10,r11,r12,"
             "r13,r14,r15,r16,r17,r18,r19,r20,r21,r22,"
             "r23,r24,r25,r26,r27,r28,r29,r30,r31,r32,"
             "r33,r34,r35,r36,r37,r38,r39,r40,r41,r42,"
             "r43,r44,r45,r46,r47,r48,r49,r50,r51,r52,"
             "r53,r54,r55,r56,r57,r58,r59,r60,r61,r62,"
             "r63,r64]\n    flavors: []\n",
     "spec.resourceGroups[0].coveredResources", "at most 64 items"},
    /* Cohort */
    {"cohort with parent and limits",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: c}\n"
     "spec:\n  parentName: root\n  resourceGroups:\n  - coveredResources: "
     "[cpu]\n    flavors: [{name: a, resources: [{name: cpu, nominalQuota: 1, "
     "borrowingLimit: 0}]}]\n",
     NULL, NULL},
    /* LocalQueue */
    {"lq ok",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
     "metadata: {name: q, namespace: team-a}\nspec: {clusterQueue: cq}\n",
     NULL, NULL},
    {"lq empty clusterQueue",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
     "metadata: {name: q}\nspec: {clusterQueue: ''}\n",
     "spec.clusterQueue", "must not be empty"},
    /* Workload */
    {"wl ok",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
     "metadata: {name: w, namespace: default}\nspec:\n"
     "  queueName: q\n  priorityClassSource: "
     "kueue.x-k8s.io/workloadpriorityclass\n  priorityClassName: high\n"
     "  priority: 100\n  podSets:\n  - count: 2\n    template: {spec: "
     "{containers: [{name: c, image: i}]}}\n",
     NULL, NULL},
    {"wl v1beta2 priorityClassRef",
     "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
     "metadata: {name: w}\nspec:\n  priorityClassRef: {group: kueue.x-k8s.io, "
     "kind: WorkloadPriorityClass, name: high}\n  podSets:\n  - name: main\n"
     "    template: {spec: {containers: [{name: c, image: i}]}}\n",
     NULL, NULL},
    {"wl no podsets",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
     "metadata: {name: w}\nspec: {podSets: []}\n",
     "spec.podSets", "at least 1 item"},
    {"wl duplicate podset",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
     "Workload\nmetadata: {name: w}\nspec:\n  podSets:\n"
     "  - template: {spec: {containers: [{name: c, "
     "image: i}]}}\n  - template: {spec: {containers: "
     "[{name: c, image: i}]}}\n",
     "spec.podSets[1].name", "duplicate podSet name \"main\""},
    {"wl negative count",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
     "metadata: {name: w}\nspec:\n  podSets:\n  - count: "
     "-1\n    template: {spec: {containers: [{name: c, "
     "image: i}]}}\n",
     "spec.podSets[0].count", "greater than or equal to 0"},
    {"wl no template",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
     "metadata: {name: w}\nspec:\n  podSets: [{name: a}]\n",
     "spec.podSets[0].template", "required field is missing"},
    {"wl bad check state",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
     "metadata: {name: w}\nspec:\n  podSets:\n  - template: {spec: "
     "{containers: [{name: c, image: i}]}}\nstatus:\n  admissionChecks: "
     "[{name: a, state: Done}]\n",
     "status.admissionChecks[0].state", "unsupported value \"Done\""},
    /* AdmissionCheck / PRC / ProvReq */
    {"ac no parameters",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
     "AdmissionCheck\nmetadata: {name: a}\nspec: "
     "{controllerName: x}\n",
     NULL, NULL},
    {"prc merge policy",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
     "ProvisioningRequestConfig\nmetadata: {name: p}\n"
     "spec: {provisioningClassName: c.example.com, "
     "podSetMergePolicy: Merge}\n",
     "spec.podSetMergePolicy", "unsupported value \"Merge\""},
    {"prc podset updates",
     "apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
     "ProvisioningRequestConfig\nmetadata: {name: p}\n"
     "spec:\n  provisioningClassName: c.example.com\n"
     "  podSetUpdates:\n    nodeSelector: [{key: "
     "example.com/k}]\n",
     "spec.podSetUpdates.nodeSelector[0].valueFromProvisioningClassDetail",
     "required field is missing"},
    {"provreq ok",
     "apiVersion: autoscaling.x-k8s.io/v1\nkind: "
     "ProvisioningRequest\nmetadata: {name: pr, namespace: d}\n"
     "spec:\n  provisioningClassName: queued-provisioning.gke.io\n"
     "  parameters: {maxRunDurationSeconds: '600'}\n"
     "  podSets: [{podTemplateRef: {name: t}, count: 4}]\n",
     NULL, NULL},
    {"provreq no podsets",
     "apiVersion: autoscaling.x-k8s.io/v1\nkind: "
     "ProvisioningRequest\nmetadata: {name: pr}\nspec: "
     "{provisioningClassName: c}\n",
     "spec.podSets", "required field is missing"},
    /* RayJob / RayCluster */
    {"rayjob minimal", RJ_HEAD RJ_HEADGROUP, NULL, NULL},
    {"rayjob interactive without entrypoint",
     "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec:\n"
     "  submissionMode: InteractiveMode\n" RJ_HEADGROUP,
     NULL, NULL},
    {"rayjob no entrypoint",
     "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec:\n" RJ_HEADGROUP,
     "spec.entrypoint", "required field is missing"},
    {"rayjob bad mode", RJ_HEAD "  submissionMode: Batch\n" RJ_HEADGROUP,
     "spec.submissionMode", "unsupported value \"Batch\""},
    {"rayjob name starts with digit",
     "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: 1rj}\nspec:\n"
     "  entrypoint: x\n" RJ_HEADGROUP,
     "metadata.name", "start with a letter"},
    {"rayjob selector and spec",
     RJ_HEAD "  clusterSelector: {ray.io/cluster: c}\n" RJ_HEADGROUP,
     "spec.clusterSelector", "must not be set together"},
    {"rayjob cluster selector only",
     RJ_HEAD "  clusterSelector: {ray.io/cluster: c}\n", NULL, NULL},
    {"rayjob head without containers",
     RJ_HEAD "  rayClusterSpec:\n    headGroupSpec:\n      template: {spec: "
             "{containers: []}}\n",
     "spec.rayClusterSpec.headGroupSpec.template.spec.containers",
     "at least 1 item"},
    {"rayjob no head", RJ_HEAD "  rayClusterSpec: {workerGroupSpecs: []}\n",
     "spec.rayClusterSpec.headGroupSpec", "required field is missing"},
    {"rayjob zero hosts",
     RJ_HEAD RJ_HEADGROUP "    workerGroupSpecs:\n    - groupName: w\n"
                          "      numOfHosts: 0\n      template: {spec: "
                          "{containers: [{name: w, image: ray}]}}\n",
     "spec.rayClusterSpec.workerGroupSpecs[0].numOfHosts",
     "greater than or equal to 1"},
    {"rayjob duplicate groups",
     RJ_HEAD RJ_HEADGROUP "    workerGroupSpecs:\n"
                          "    - {groupName: w, template: {spec: {containers: "
                          "[{name: w, image: ray}]}}}\n"
                          "    - {groupName: w, template: {spec: {containers: "
                          "[{name: w, image: ray}]}}}\n",
     "spec.rayClusterSpec.workerGroupSpecs[1].groupName",
     "duplicate worker group"},
    {"rayjob runtime env not yaml",
     RJ_HEAD "  runtimeEnvYAML: \"pip: [a\"\n" RJ_HEADGROUP,
     "spec.runtimeEnvYAML", "is not valid YAML"},
    {"rayjob kueue clusterSelector",
     "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  name: rj\n  labels: "
     "{kueue.x-k8s.io/queue-name: q}\nspec:\n  entrypoint: x\n"
     "  shutdownAfterJobFinishes: true\n  clusterSelector: {a: b}\n",
     "spec.clusterSelector", "cannot run on an existing cluster"},
    {"raycluster ok",
     "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: "
     "{name: rc}\nspec:\n  headGroupSpec:\n    template: "
     "{spec: {containers: [{name: h, image: ray}]}}\n",
     NULL, NULL},
    /* Pods */
    {"pod no image", POD_HEAD "  containers: [{name: c}]\n",
     "spec.containers[0].image", "required field is missing"},
    {"pod bad container name", POD_HEAD "  containers: [{name: C, image: i}]\n",
     "spec.containers[0].name", "invalid name \"C\""},
    {"pod init container name clash",
     POD_HEAD "  containers: [{name: c, image: i}]\n  initContainers: [{name: "
              "c, image: i}]\n",
     "spec.initContainers[0].name", "duplicate container name"},
    {"pod gpu fraction",
     POD_HEAD "  containers:\n  - name: c\n    image: i\n"
              "    resources: {limits: {nvidia.com/gpu: "
              "500m}}\n",
     "spec.containers[0].resources.limits[nvidia.com/gpu]",
     "must be a whole number"},
    {"pod limits only",
     POD_HEAD "  containers:\n  - name: c\n    image: i\n"
              "    resources: {limits: {cpu: 1, "
              "nvidia.com/gpu: 1}}\n",
     NULL, NULL},
    {"pod restart policy",
     POD_HEAD "  restartPolicy: Sometimes\n  containers: "
              "[{name: c, image: i}]\n",
     "spec.restartPolicy", "unsupported value \"Sometimes\""},
    {"pod volume twice",
     POD_HEAD "  volumes: [{name: v, emptyDir: {}}, "
              "{name: v, emptyDir: {}}]\n  containers: "
              "[{name: c, image: i}]\n",
     "spec.volumes[1].name", "duplicate volume name"},
    {"pod mount twice",
     POD_HEAD
     "  volumes: [{name: v, emptyDir: {}}]\n  containers:\n  - name: c\n"
     "    image: i\n    volumeMounts: [{name: v, mountPath: /a}, "
     "{name: v, mountPath: /a}]\n",
     "spec.containers[0].volumeMounts[1].mountPath", "mounted twice"},
    {"pod configmap volume without name",
     POD_HEAD "  volumes: [{name: v, configMap: {}}]\n  containers: [{name: c, "
              "image: i}]\n",
     "spec.volumes[0].configMap.name", "required field is missing"},
    {"pod port name with no letter",
     POD_HEAD "  containers:\n  - name: c\n    image: i\n    ports: "
              "[{containerPort: 80, name: '8080'}]\n",
     "spec.containers[0].ports[0].name", "at least one letter"},
    {"pod node selector value",
     POD_HEAD "  nodeSelector: {a: 'b c'}\n  containers: [{name: c, image: "
              "i}]\n",
     "spec.nodeSelector.a", "invalid label value"},
    /* Job, ConfigMap, Node, Event, Namespace */
    {"job ok",
     "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
     "  completionMode: Indexed\n  completions: 3\n  template:\n"
     "    spec:\n      restartPolicy: OnFailure\n      containers: "
     "[{name: c, image: i}]\n",
     NULL, NULL},
    {"job no restart policy",
     "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
     "  template:\n    spec:\n      containers: [{name: c, image: i}]\n",
     "spec.template.spec.restartPolicy", "required field is missing"},
    {"configmap binary",
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
     "data: {a.txt: x}\nbinaryData: {b.bin: eA==}\n"
     "immutable: true\n",
     NULL, NULL},
    {"configmap value number",
     "apiVersion: v1\nkind: ConfigMap\nmetadata: "
     "{name: c}\ndata: {replicas: 3}\n",
     "data.replicas", "must be a string, not a number 3 (quote it)"},
    {"node ok",
     "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: "
     "{taints: [{key: google.com/tpu, value: present, effect: "
     "NoSchedule}]}\nstatus:\n  capacity: {cpu: 180, memory: 720Gi, "
     "google.com/tpu: 4}\n",
     NULL, NULL},
    {"node duplicate taint",
     "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
     "spec:\n  taints:\n  - {key: a, effect: "
     "NoSchedule}\n  - {key: a, value: b, effect: "
     "NoSchedule}\n",
     "spec.taints[1]", "duplicate taint a with effect NoSchedule"},
    {"event ok",
     "apiVersion: v1\nkind: Event\nmetadata: {name: e.1, "
     "namespace: d}\ninvolvedObject: {kind: Workload, name: w}\n"
     "reason: QuotaReserved\ntype: Normal\n",
     NULL, NULL},
    {"namespace ok",
     "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n", NULL, NULL},
    /* Only ${NAME} with a shell identifier is a variable (as in envsubst). */
    {"dollar text is not a variable",
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: 'cost "
     "$5 ${ not a var } ${1X} $HOME'}\n",
     NULL, NULL},
    {"variable in a key",
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "
     "c}\ndata: {'${KEY}': v}\n",
     "data[${KEY}]", "contains an unexpanded variable ${KEY}"},
    /* Whole-object checks */
    {"kind mismatch handled by dispatch",
     "apiVersion: v1\nkind: Deployment\nmetadata: {name: d}\n", "kind",
     "unknown kind \"Deployment\""},
    {"kind not a string", "apiVersion: v1\nkind: 3\nmetadata: {name: d}\n",
     "kind", "must be a string"},
    {"a Kueue integration flexq does not run",
     "apiVersion: kubeflow.org/v1\nkind: TFJob\n"
     "metadata: {name: tf}\n",
     "kind",
     "TFJob (apiVersion kubeflow.org/v1) is a Kueue "
     "integration flexq does not run; flexq runs Job (batch/v1), "
     "RayJob and RayCluster (ray.io/v1), Pod (v1), JobSet "
     "(jobset.x-k8s.io/v1alpha2), PyTorchJob (kubeflow.org/v1), MPIJob "
     "(kubeflow.org/v2beta1), TrainJob (trainer.kubeflow.org/v1alpha1) and "
     "LeaderWorkerSet"},
    {"TrainJob with another runtime",
     "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: "
     "{name: t}\nspec:\n  runtimeRef: {name: mpi-distributed}\n  trainer: "
     "{image: i}\n",
     "spec.runtimeRef.name", "flexq has no ClusterTrainingRuntime objects"},
    {"TrainJob without an image",
     "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: "
     "{name: t}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer: "
     "{numNodes: 2}\n",
     "spec.trainer.image", "required"},
    {"LeaderWorkerSet without a worker template",
     "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
     "metadata: {name: l}\nspec:\n  leaderWorkerTemplate: {size: 2}\n",
     "spec.leaderWorkerTemplate.workerTemplate", "required field is missing"},
    {"LeaderWorkerSet subdomain policy",
     "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
     "metadata: {name: l}\nspec:\n  networkConfig: {subdomainPolicy: x}\n"
     "  leaderWorkerTemplate:\n    workerTemplate: {spec: {containers: "
     "[{name: c, image: i}]}}\n",
     "spec.networkConfig.subdomainPolicy", "unsupported value"},
    {"MPIJob without a launcher",
     "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: m}\n"
     "spec:\n  mpiReplicaSpecs:\n    Worker:\n      template: {spec: "
     "{containers: [{name: w, image: i}]}}\n",
     "spec.mpiReplicaSpecs", "a Launcher replica spec is required"},
    {"MPIJob two launchers",
     "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: m}\n"
     "spec:\n  slotsPerWorker: 0\n  mpiReplicaSpecs:\n    Launcher:\n"
     "      template: {spec: {containers: [{name: l, image: i}]}}\n",
     "spec.slotsPerWorker", "must be"},
    {"JobSet without replicatedJobs",
     "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: "
     "js}\nspec: {}\n",
     "spec.replicatedJobs", "required field is missing"},
    {"JobSet duplicate replicated job",
     "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: "
     "js}\nspec:\n  replicatedJobs:\n  - name: w\n    template: {spec: "
     "{template: {spec: {restartPolicy: Never, containers: [{name: c, "
     "image: i}]}}}}\n  - name: w\n    template: {spec: {template: {spec: "
     "{restartPolicy: Never, containers: [{name: c, image: i}]}}}}\n",
     "spec.replicatedJobs[1].name", "duplicate replicated job name \"w\""},
    {"JobSet success policy target",
     "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: "
     "js}\nspec:\n  successPolicy: {operator: Any, targetReplicatedJobs: "
     "[x]}\n  replicatedJobs:\n  - name: w\n    template: {spec: "
     "{template: {spec: {restartPolicy: Never, containers: [{name: c, "
     "image: i}]}}}}\n",
     "spec.successPolicy.targetReplicatedJobs",
     "\"x\" is not a replicated job of this JobSet"},
    {"PyTorchJob two masters",
     "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\n"
     "spec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 2\n"
     "      template: {spec: {containers: [{name: pytorch, image: i}]}}\n",
     "spec.pytorchReplicaSpecs.Master.replicas", "must be"},
    {"PyTorchJob container name",
     "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\n"
     "spec:\n  pytorchReplicaSpecs:\n    Worker:\n      template: {spec: "
     "{containers: [{name: main, image: i}]}}\n",
     "spec.pytorchReplicaSpecs.Worker.template",
     "no container named \"pytorch\""},
    {"PyTorchJob unknown role",
     "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\n"
     "spec:\n  pytorchReplicaSpecs:\n    Chief: {}\n",
     "spec.pytorchReplicaSpecs.Chief",
     "unknown replica type \"Chief\": must be Master or Worker"},
    {"closest kind",
     "apiVersion: ray.io/v1\nkind: RayJobs\nmetadata: {name: "
     "d}\n",
     "kind", "did you mean RayJob (ray.io/v1)?"},
    {"unknown group",
     "apiVersion: example.com/v1\nkind: Widget\nmetadata: "
     "{name: d}\n",
     "kind", "unknown kind \"Widget\" (apiVersion example.com/v1)"},
    {"nodepool spec via capacity module",
     "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
     "spec: {machineType: ct6e-standard-4x}\n",
     "spec.machineType", "ct6e-standard-4x"},
    {"capacitymodel spec via capacity module",
     "apiVersion: flexq.dev/v1alpha1\nkind: CapacityModel\nmetadata: {name: "
     "m}\nspec:\n  zones:\n  - name: z\n    machineTypes:\n    - name: "
     "ct6e-standard-4t\n      bootSeconds: -3\n",
     "spec.zones[0].machineTypes[0].bootSeconds", ""},
    {"nodepool ok",
     "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\n"
     "metadata: {name: dws-pool}\nspec:\n  machineType: "
     "ct6e-standard-4t\n  tpuTopology: 4x4\n  flexStart: true\n"
     "  queuedProvisioning: {enabled: true}\n  autoscaling: "
     "{enabled: true, minNodeCount: 0, maxNodeCount: 4}\n",
     NULL, NULL},
    {"nodepool via capacity module",
     "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: "
     "Bad_Pool}\nspec: {machineType: n2-standard-16}\n",
     "metadata.name", "invalid name \"Bad_Pool\""},
};

static void test_rules(void **state)
{
    (void)state;
    size_t failed = 0;
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        const struct rule_case *rc = &rules[i];
        struct fq_value *v = testlib_yaml1(rc->yaml);
        struct fq_errlist errs;
        fq_errlist_init(&errs);
        int r = fq_object_validate(v, "t.yaml", &errs);
        bool ok;
        if (!rc->path) {
            ok = r == 0 && errs.n == 0;
        } else {
            ok = r == FQ_EINVAL && errs.n > 0 &&
                 strcmp(errs.items[0].path, rc->path) == 0 &&
                 strstr(errs.items[0].msg, rc->text) != NULL;
            /* Same verdict without an error list (controllers' way). */
            if (fq_object_validate(v, NULL, NULL) != FQ_EINVAL)
                ok = false;
        }
        if (!ok) {
            print_error("case \"%s\": rc %d, want %s\n", rc->name, r,
                        rc->path ? rc->path : "valid");
            for (size_t j = 0; j < errs.n; j++)
                print_error("   [%s] %s\n", errs.items[j].path,
                            errs.items[j].msg);
            failed++;
        }
        fq_errlist_release(&errs);
        fq_value_free(v);
    }
    assert_int_equal(failed, 0);
}

/* --- views -------------------------------------------------------------------- */

static void test_errors_carry_positions(void **state)
{
    (void)state;
    struct fq_value *v = testlib_yaml1("apiVersion: kueue.x-k8s.io/v1beta1\n"
                                       "kind: LocalQueue\n"
                                       "metadata:\n"
                                       "  name: q\n"
                                       "spec:\n"
                                       "  clusterQueue: Bad_CQ\n");
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    struct fq_localqueue lq;
    lq.cluster_queue = "garbage";
    assert_int_equal(fq_localqueue_decode(v, NULL, &lq, &errs), FQ_EINVAL);
    assert_null(lq.cluster_queue); /* zeroed on failure */
    assert_null(lq.mem);
    assert_int_equal(errs.n, 1);
    assert_int_equal(errs.items[0].line, 6);
    assert_int_equal(errs.items[0].col, 17);
    assert_int_equal(errs.items[0].code, FQ_EINVAL);
    assert_string_equal(errs.items[0].path, "spec.clusterQueue");
    /* Without a file name the message has no position prefix. */
    assert_string_equal(errs.items[0].msg,
                        "spec.clusterQueue: invalid name \"Bad_CQ\": must "
                        "consist of lower case letters, digits, '-' and '.', "
                        "and start and end with a letter or digit");
    fq_errlist_release(&errs);
    fq_localqueue_release(&lq);
    fq_value_free(v);

    /* The wrong decoder for a kind says so. */
    v = testlib_yaml1("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
    assert_int_equal(fq_localqueue_decode(v, NULL, &lq, NULL), FQ_EINVAL);
    fq_value_free(v);
    assert_int_equal(fq_object_validate(NULL, NULL, NULL), FQ_EINVAL);
}

/* Issue 20: a quantity given as null names its key and the null's own
 * line, for a required quota and for a container's requests. */
static void test_null_quantity(void **state)
{
    (void)state;
    struct fq_value *v = testlib_yaml1("apiVersion: kueue.x-k8s.io/v1beta1\n"
                                       "kind: ClusterQueue\n"
                                       "metadata: {name: cq}\n"
                                       "spec:\n"
                                       "  resourceGroups:\n"
                                       "  - coveredResources: [cpu]\n"
                                       "    flavors:\n"
                                       "    - name: default\n"
                                       "      resources:\n"
                                       "      - name: cpu\n"
                                       "        nominalQuota: null\n");
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    assert_int_equal(fq_object_validate(v, "t.yaml", &errs), FQ_EINVAL);
    assert_int_equal(errs.n, 1);
    assert_int_equal(errs.items[0].line, 11);
    assert_string_equal(
        errs.items[0].path,
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota");
    assert_non_null(strstr(errs.items[0].msg, "is null"));
    fq_errlist_release(&errs);
    fq_value_free(v);

    v = testlib_yaml1("apiVersion: batch/v1\n"
                      "kind: Job\n"
                      "metadata: {name: j}\n"
                      "spec:\n"
                      "  template:\n"
                      "    spec:\n"
                      "      restartPolicy: Never\n"
                      "      containers:\n"
                      "      - name: c\n"
                      "        image: busybox\n"
                      "        resources:\n"
                      "          requests:\n"
                      "            memory: 1Gi\n"
                      "            cpu: ~\n");
    fq_errlist_init(&errs);
    assert_int_equal(fq_object_validate(v, "t.yaml", &errs), FQ_EINVAL);
    assert_int_equal(errs.n, 1);
    assert_int_equal(errs.items[0].line, 14);
    assert_string_equal(errs.items[0].path,
                        "spec.template.spec.containers[0].resources.requests."
                        "cpu");
    assert_non_null(strstr(errs.items[0].msg, "is null"));
    fq_errlist_release(&errs);
    fq_value_free(v);
}

static void test_view_defaults(void **state)
{
    (void)state;
    struct fq_value *v = testlib_yaml1(
        RJ_HEAD RJ_HEADGROUP "    workerGroupSpecs:\n"
                             "    - groupName: w\n"
                             "      replicas: 9\n"
                             "      maxReplicas: 3\n"
                             "      template: {spec: {containers: [{name: w, "
                             "image: ray}]}}\n");
    struct fq_rayjob rj;
    assert_int_equal(fq_rayjob_decode(v, NULL, &rj, NULL), 0);
    assert_int_equal(rj.submission_mode, FQ_SUBMIT_K8S_JOB);
    assert_int_equal(rj.backoff_limit, 0);
    assert_int_equal(rj.submitter_backoff_limit, 2);
    assert_false(rj.shutdown_after_job_finishes);
    assert_int_equal(rj.cluster.workers[0].num_of_hosts, 1);
    assert_int_equal(rj.cluster.workers[0].min_replicas, 0);
    /* Replicas beyond max are clamped, as KubeRay does. */
    assert_int_equal(fq_ray_worker_pods(&rj.cluster.workers[0]), 3);
    assert_string_equal(rj.cluster.head_template.spec.restart_policy, "Always");
    fq_rayjob_release(&rj);
    fq_value_free(v);

    v = testlib_yaml1("apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
                      "ProvisioningRequestConfig\nmetadata: {name: p}\nspec: "
                      "{provisioningClassName: queued-provisioning.gke.io}\n");
    struct fq_provisioningrequestconfig prc;
    assert_int_equal(fq_provisioningrequestconfig_decode(v, NULL, &prc, NULL),
                     0);
    assert_int_equal(prc.backoff_limit_count, 3);
    assert_int_equal(prc.backoff_base_seconds, 60);
    assert_int_equal(prc.backoff_max_seconds, 1800);
    assert_int_equal(prc.n_managed_resources, 0);
    fq_provisioningrequestconfig_release(&prc);
    fq_value_free(v);

    v = testlib_yaml1(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
        "metadata: {name: w}\nspec:\n  podSets:\n  - template: {spec: "
        "{containers: [{name: c, image: i, resources: {limits: {cpu: 2}}}]}}\n"
        "status:\n  admission:\n    clusterQueue: cq\n"
        "    podSetAssignments: [{name: main, flavors: {cpu: on-demand}, "
        "resourceUsage: {cpu: 2}, count: 1}]\n"
        "  admissionChecks: [{name: dws-prov, state: Retry, retryCount: 2}]\n"
        "  conditions: [{type: QuotaReserved, status: 'True', reason: "
        "QuotaReserved}]\n");
    struct fq_workload wl;
    assert_int_equal(fq_workload_decode(v, NULL, &wl, NULL), 0);
    assert_true(wl.active);
    assert_string_equal(wl.podsets[0].name, "main");
    assert_int_equal(wl.podsets[0].count, 1);
    /* Requests default to limits. */
    assert_int_equal(
        fq_resources_get(&wl.podsets[0].template.spec.containers[0].requests,
                         "cpu", -1),
        2000);
    assert_true(wl.has_admission);
    assert_string_equal(wl.admission_cluster_queue, "cq");
    assert_string_equal(fq_kvs_get(&wl.assignments[0].flavors, "cpu"),
                        "on-demand");
    assert_int_equal(wl.check_states[0].state, FQ_CHECK_RETRY);
    assert_int_equal(wl.check_states[0].retry_count, 2);
    assert_true(fq_conditions_true(&wl.conditions, "QuotaReserved"));
    assert_false(fq_conditions_true(&wl.conditions, "Admitted"));
    assert_null(fq_conditions_get(&wl.conditions, "Admitted"));
    fq_workload_release(&wl);
    /* Parts of the status alone: what is asked for, as decoded above. */
    assert_int_equal(
        fq_workload_status_decode(v, FQ_WL_ADMISSION | FQ_WL_CHECKS, &wl), 0);
    assert_null(wl.podsets);
    assert_true(wl.has_admission);
    assert_string_equal(wl.admission_cluster_queue, "cq");
    assert_int_equal(wl.check_states[0].state, FQ_CHECK_RETRY);
    assert_int_equal(wl.conditions.n, 0);
    fq_workload_release(&wl);
    assert_int_equal(fq_workload_status_decode(v, FQ_WL_CHECKS, &wl), 0);
    assert_false(wl.has_admission);
    assert_int_equal(wl.n_check_states, 1);
    fq_workload_release(&wl);
    /* All but the podsets. */
    assert_int_equal(fq_workload_decode_no_podsets(v, &wl), 0);
    assert_null(wl.podsets);
    assert_int_equal(wl.n_podsets, 0);
    assert_true(wl.active);
    assert_string_equal(wl.admission_cluster_queue, "cq");
    fq_workload_release(&wl);
    fq_value_free(v);
}

static void test_object_meta(void **state)
{
    (void)state;
    struct fq_value *v =
        testlib_yaml1("apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
                      "LocalQueue\nmetadata: {name: q, namespace: ns1}\n");
    enum fq_kind k;
    const char *ns, *name;
    assert_int_equal(fq_object_meta(v, &k, &ns, &name), 0);
    assert_int_equal(k, FQ_KIND_LOCALQUEUE);
    assert_string_equal(ns, "ns1");
    assert_string_equal(name, "q");
    fq_value_free(v);
    v = testlib_yaml1("apiVersion: v1\nkind: Widget\nmetadata: {name: w}\n");
    assert_int_equal(fq_object_meta(v, &k, NULL, &name), FQ_EINVAL);
    assert_int_equal(k, FQ_KIND_NONE);
    fq_value_free(v);
}

static void test_tolerations_and_selectors(void **state)
{
    (void)state;
    struct fq_taint queued = {"cloud.google.com/gke-queued", "true",
                              FQ_EFFECT_NO_SCHEDULE};
    struct fq_toleration exists = {"cloud.google.com/gke-queued", true,  NULL,
                                   FQ_EFFECT_NO_SCHEDULE,         false, 0};
    struct fq_toleration equal_wrong = {
        "cloud.google.com/gke-queued", false, "false", FQ_EFFECT_ANY, false, 0};
    struct fq_toleration all = {NULL, true, NULL, FQ_EFFECT_ANY, false, 0};
    struct fq_toleration other_effect = {
        "cloud.google.com/gke-queued", true,  NULL,
        FQ_EFFECT_NO_EXECUTE,          false, 0};
    assert_true(fq_toleration_tolerates(&exists, &queued));
    assert_false(fq_toleration_tolerates(&equal_wrong, &queued));
    assert_true(fq_toleration_tolerates(&all, &queued));
    assert_false(fq_toleration_tolerates(&other_effect, &queued));

    struct fq_value *v = testlib_yaml1(
        CQ_HEAD "  namespaceSelector:\n"
                "    matchLabels: {team: ml}\n"
                "    matchExpressions:\n"
                "    - {key: env, operator: NotIn, values: [prod]}\n"
                "    - {key: tier, operator: Exists}\n" GROUP1);
    struct fq_clusterqueue cq;
    assert_int_equal(fq_clusterqueue_decode(v, NULL, &cq, NULL), 0);
    struct fq_kv l1[] = {{"team", "ml"}, {"tier", "gold"}, {"env", "dev"}};
    struct fq_kv l2[] = {{"team", "ml"}, {"tier", "gold"}, {"env", "prod"}};
    struct fq_kv l3[] = {{"team", "ml"}};
    struct fq_kvs a = {l1, 3}, b = {l2, 3}, c = {l3, 1};
    assert_true(fq_selector_matches(&cq.namespace_selector, &a));
    assert_false(fq_selector_matches(&cq.namespace_selector, &b));
    assert_false(fq_selector_matches(&cq.namespace_selector, &c));
    fq_clusterqueue_release(&cq);
    fq_value_free(v);

    /* No namespaceSelector: no namespace may use the queue (Kueue). */
    v = testlib_yaml1(CQ_HEAD GROUP1);
    assert_int_equal(fq_clusterqueue_decode(v, NULL, &cq, NULL), 0);
    assert_false(cq.namespace_selector.present);
    assert_false(fq_selector_matches(&cq.namespace_selector, &a));
    fq_clusterqueue_release(&cq);
    fq_value_free(v);
    v = testlib_yaml1(CQ_HEAD "  namespaceSelector: {}\n" GROUP1);
    assert_int_equal(fq_clusterqueue_decode(v, NULL, &cq, NULL), 0);
    assert_true(fq_selector_matches(&cq.namespace_selector, &c));
    fq_clusterqueue_release(&cq);
    fq_value_free(v);
}

static void test_pod_requests(void **state)
{
    (void)state;
    struct fq_value *v = testlib_yaml1(
        POD_HEAD "  initContainers:\n"
                 "  - {name: init, image: i, resources: {requests: "
                 "{cpu: 3, memory: 1Gi}}}\n"
                 "  containers:\n"
                 "  - {name: a, image: i, resources: {requests: {cpu: "
                 "500m, memory: 2Gi}}}\n"
                 "  - {name: b, image: i, resources: {requests: {cpu: "
                 "1}}}\n");
    struct fq_pod pod;
    assert_int_equal(fq_pod_decode(v, NULL, &pod, NULL), 0);
    struct fq_resource r[4];
    size_t n = fq_podspec_requests(&pod.spec, r, 4);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i].name, "cpu") == 0)
            assert_int_equal(r[i].value, 3000); /* init container wins */
        else
            assert_int_equal(r[i].value, 2LL << 30); /* the sum wins */
    }
    /* Truncation reports the full count. */
    assert_int_equal(fq_podspec_requests(&pod.spec, r, 1), 2);
    fq_pod_release(&pod);
    fq_value_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_table),
        cmocka_unit_test(test_null_quantity),
        cmocka_unit_test(test_kind_lookup),
        cmocka_unit_test(test_name_rules),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_errors_carry_positions),
        cmocka_unit_test(test_view_defaults),
        cmocka_unit_test(test_object_meta),
        cmocka_unit_test(test_tolerations_and_selectors),
        cmocka_unit_test(test_pod_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
