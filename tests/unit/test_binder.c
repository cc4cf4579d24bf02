/*
 * test_binder.c - binding Pending pods to nodes (binder.c).
 *
 * nodeSelector, required node affinity, taints and tolerations,
 * allocatable minus bound pods (and room freed when a pod ends), Ready
 * nodes only, scheduling gates, kube-scheduler's Unschedulable message, and
 * all-or-nothing gangs on one TPU slice.
 */
#include "jobs_testlib.h"

/* A pod with `tpu` chips and the given extra spec lines. */
static void pod(struct fq_engine *e, const char *name, int tpu,
                const char *extra_spec, const char *annotations)
{
    char *y = fq_xasprintf(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n"
        "  namespace: default\n%s%s"
        "spec:\n  restartPolicy: Never\n%s  containers:\n"
        "  - name: main\n    image: x\n"
        "    resources:\n      requests:\n        cpu: \"1\"\n"
        "        google.com/tpu: \"%d\"\n"
        "status:\n  phase: Pending\n",
        name, annotations ? "  annotations:\n" : "",
        annotations ? annotations : "", extra_spec ? extra_spec : "", tpu);
    tl_store(e, y, T0);
    free(y);
}

static const char *node_of(struct fq_engine *e, const char *pod)
{
    return fq_value_path_str(tl_get(e, FQ_KIND_POD, "default", pod),
                             "spec.nodeName", NULL);
}

static const char *sched(struct fq_engine *e, const char *pod,
                         const char *field)
{
    return tl_cond(tl_get(e, FQ_KIND_POD, "default", pod), "PodScheduled",
                   field);
}

static const char *TPU_TAINT = "\n  - key: google.com/tpu\n    value: present\n"
                               "    effect: NoSchedule\n";
static const char *TPU_TOL = "  tolerations:\n  - key: google.com/tpu\n"
                             "    operator: Exists\n    effect: NoSchedule\n";

static void test_selector_and_taints(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    tl_node(e, "cpu-1", "16", "64Gi", 0, "    pool: cpu\n", NULL);
    tl_node(e, "tpu-1", "180", "720Gi", 4, "    pool: tpu\n", TPU_TAINT);
    /* Selects the TPU pool but does not tolerate its taint. */
    pod(e, "a", 4, "  nodeSelector:\n    pool: tpu\n", NULL);
    fq_engine_run(e, T0);
    assert_null(node_of(e, "a"));
    assert_string_equal(sched(e, "a", "status"), "False");
    assert_string_equal(sched(e, "a", "reason"), "Unschedulable");
    assert_string_equal(sched(e, "a", "message"),
                        "0/2 nodes are available: 1 node(s) didn't match "
                        "Pod's node affinity/selector, 1 node(s) had "
                        "untolerated taint {google.com/tpu: present}.");
    /* The same with the toleration binds. */
    char *spec = fq_xasprintf("  nodeSelector:\n    pool: tpu\n%s", TPU_TOL);
    pod(e, "b", 4, spec, NULL);
    free(spec);
    /* A plain pod goes to the untainted node. */
    pod(e, "c", 0, NULL, NULL);
    fq_engine_run(e, T0 + 1);
    assert_string_equal(node_of(e, "b"), "tpu-1");
    assert_string_equal(sched(e, "b", "status"), "True");
    assert_string_equal(node_of(e, "c"), "cpu-1");
    fq_engine_free(e);
}

static void test_resources_and_release(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    tl_node(e, "tpu-1", "180", "720Gi", 4, NULL, NULL);
    pod(e, "a", 4, NULL, NULL);
    pod(e, "b", 4, NULL, NULL);
    fq_engine_run(e, T0);
    assert_string_equal(node_of(e, "a"), "tpu-1");
    assert_null(node_of(e, "b"));
    assert_string_equal(sched(e, "b", "message"),
                        "0/1 nodes are available: 1 Insufficient "
                        "google.com/tpu.");
    /* When a ends, its chips are free again. */
    tl_report(e, "default", "a", "Succeeded", false, 0, NULL, T0 + 1000);
    fq_engine_run(e, T0 + 1000);
    assert_string_equal(node_of(e, "b"), "tpu-1");
    fq_engine_free(e);
}

static void test_affinity_ready_and_gates(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    tl_node(e, "n1", "8", "8Gi", 0, "    zone: a\n", NULL);
    tl_node(e, "n2", "8", "8Gi", 0, "    zone: b\n", NULL);
    pod(e, "aff", 0,
        "  affinity:\n    nodeAffinity:\n"
        "      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        "          - key: zone\n            operator: In\n"
        "            values: [b, c]\n",
        NULL);
    pod(e, "gated", 0, "  schedulingGates:\n  - name: kueue.x-k8s.io/x\n",
        NULL);
    fq_engine_run(e, T0);
    assert_string_equal(node_of(e, "aff"), "n2");
    assert_null(node_of(e, "gated"));
    assert_string_equal(sched(e, "gated", "reason"), "SchedulingGated");

    /* A node that is not Ready takes nothing. */
    tl_store(e,
             "apiVersion: v1\nkind: Node\nmetadata:\n  name: n0\n"
             "  labels:\n    zone: z\nstatus:\n  allocatable:\n"
             "    cpu: \"8\"\n    pods: \"10\"\n  conditions:\n"
             "  - type: Ready\n    status: \"False\"\n",
             T0);
    pod(e, "z", 0, "  nodeSelector:\n    zone: z\n", NULL);
    fq_engine_run(e, T0 + 1);
    assert_null(node_of(e, "z"));
    assert_non_null(
        strstr(sched(e, "z", "message"), "1 node(s) were not ready"));
    fq_engine_free(e);
}

static void gang_pods(struct fq_engine *e, const char *prefix, int n)
{
    char *spec = fq_xasprintf("%s", TPU_TOL);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%s-%d", prefix, i);
        pod(e, name, 4, spec,
            "    flexq.dev/gang: g1\n    flexq.dev/gang-size: \"4\"\n");
    }
    free(spec);
}

static void test_gang_one_slice(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    /* Slice a has 3 hosts, slice b has 4: the gang of 4 takes b. */
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "a-%d", i);
        tl_node(e, name, "180", "720Gi", 4, "    flexq.dev/slice: a\n",
                TPU_TAINT);
    }
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "b-%d", i);
        tl_node(e, name, "180", "720Gi", 4, "    flexq.dev/slice: b\n",
                TPU_TAINT);
    }
    /* Only 3 of the 4 pods exist: nothing binds yet. */
    gang_pods(e, "w", 3);
    fq_engine_run(e, T0);
    assert_null(node_of(e, "w-0"));
    assert_non_null(strstr(sched(e, "w-0", "message"), "waiting for gang"));
    char *spec = fq_xasprintf("%s", TPU_TOL);
    pod(e, "w-3", 4, spec,
        "    flexq.dev/gang: g1\n    flexq.dev/gang-size: \"4\"\n");
    free(spec);
    fq_engine_run(e, T0 + 1);
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "w-%d", i);
        const char *n = node_of(e, name);
        assert_non_null(n);
        assert_int_equal(n[0], 'b');
    }
    fq_engine_free(e);
}

static void test_gang_all_or_nothing(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "a-%d", i);
        tl_node(e, name, "180", "720Gi", 4, "    flexq.dev/slice: a\n",
                TPU_TAINT);
    }
    gang_pods(e, "w", 4);
    fq_engine_run(e, T0);
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "w-%d", i);
        assert_null(node_of(e, name));
        assert_string_equal(sched(e, name, "reason"), "Unschedulable");
    }
    assert_non_null(
        strstr(sched(e, "w-0", "message"), "do not fit together on one slice"));
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selector_and_taints),
        cmocka_unit_test(test_resources_and_release),
        cmocka_unit_test(test_affinity_ready_and_gates),
        cmocka_unit_test(test_gang_one_slice),
        cmocka_unit_test(test_gang_all_or_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
