/*
 * test_provreq.c - the ProvisioningRequest lifecycle on the capacity side:
 * the three classes (queued-provisioning, check-capacity,
 * best-effort-atomic-scale-up), a schedule of flex-start arrivals, a pool
 * too small for the request, and unknown classes left alone.
 */
#include "capacity_testlib.h"

static const char *pools =
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: "
    "tpu-pool}\nspec: {machineType: ct6e-standard-4t, tpuTopology: 4x4, "
    "initialNodeCount: 0, autoscaling: {enabled: true, minNodeCount: 0, "
    "maxNodeCount: 8}}\n---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: "
    "q-pool}\nspec: {machineType: ct6e-standard-4t, tpuTopology: 4x4, "
    "initialNodeCount: 0, flexStart: true, queuedProvisioning: {enabled: "
    "true}, autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: "
    "4}}\n---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: CapacityModel\nmetadata: {name: "
    "sim}\nspec:\n  zones:\n  - name: us-east5-b\n    machineTypes:\n"
    "    - name: ct6e-standard-4t\n      bootSeconds: 30\n      onDemand: "
    "{hosts: 100}\n      flexStart:\n        schedule: [{at: 600, hosts: "
    "4}]\n";

static void request(struct fq_engine *e, const char *name, const char *klass,
                    const char *pool, int count, const char *cpu,
                    const char *extra, int64_t now)
{
    char buf[2048];
    snprintf(buf, sizeof(buf),
             "apiVersion: autoscaling.x-k8s.io/v1\nkind: "
             "ProvisioningRequest\nmetadata: {namespace: default, name: "
             "%s}\nspec:\n  provisioningClassName: %s\n%s  podSets:\n  - "
             "podTemplateRef: {name: t}\n    count: %d\n    template:\n      "
             "spec:\n        nodeSelector: {cloud.google.com/gke-nodepool: "
             "%s}\n        containers:\n        - name: c\n          "
             "resources: {requests: {cpu: \"%s\"}}\n",
             name, klass, extra, count, pool, cpu);
    ct_apply(e, buf, now);
}

static const struct fq_value *pr(struct fq_engine *e, const char *name)
{
    return ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", name);
}

static void test_check_capacity(void **state)
{
    (void)state;
    struct fq_engine *e = ct_engine(true, true);
    ct_apply(e, pools, CT0);
    ct_run_to(e, CT0 + 120 * SEC); /* default-pool's node is up */
    assert_int_equal(ct_count_nodes(e, "default-pool"), 1);
    request(e, "fits", "check-capacity.autoscaling.x-k8s.io", "default-pool", 2,
            "2", "", CT0 + 120 * SEC);
    request(e, "too-big", "check-capacity.autoscaling.x-k8s.io", "default-pool",
            100, "8", "", CT0 + 120 * SEC);
    request(e, "no-retry", "check-capacity.autoscaling.x-k8s.io",
            "default-pool", 100, "8", "  parameters: {noRetry: \"true\"}\n",
            CT0 + 120 * SEC);
    ct_run_to(e, CT0 + 121 * SEC);
    assert_string_equal(ct_cond(pr(e, "fits"), "Provisioned", "status"),
                        "True");
    assert_string_equal(ct_cond(pr(e, "fits"), "Provisioned", "reason"),
                        "CapacityIsFound");
    assert_string_equal(ct_cond(pr(e, "too-big"), "Provisioned", "status"),
                        "False");
    assert_string_equal(ct_cond(pr(e, "too-big"), "Provisioned", "reason"),
                        "CapacityIsNotFound");
    assert_null(ct_cond(pr(e, "too-big"), "Failed", "status"));
    assert_string_equal(ct_cond(pr(e, "no-retry"), "Failed", "reason"),
                        "CapacityIsNotFound");
    /* check-capacity never creates nodes */
    assert_int_equal(ct_count_nodes(e, "default-pool"), 1);
    /* booked for 10 minutes, then BookingExpired (nobody used it) */
    ct_run_to(e, CT0 + 719 * SEC);
    assert_null(ct_cond(pr(e, "fits"), "BookingExpired", "status"));
    ct_run_to(e, CT0 + 721 * SEC);
    assert_string_equal(ct_cond(pr(e, "fits"), "BookingExpired", "reason"),
                        "CapacityReservationTimeExpired");
    fq_engine_free(e);
}

static void test_best_effort_atomic(void **state)
{
    (void)state;
    struct fq_engine *e = ct_engine(true, true);
    ct_apply(e, pools, CT0);
    request(e, "atomic", "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
            "tpu-pool", 8, "100", "", CT0);
    ct_run_to(e, CT0 + 1 * SEC);
    /* 8 pods of 100 cpu: one per 180-vCPU host, two 4-host slices, made
     * at once and Provisioned before they boot */
    assert_int_equal(ct_count_nodes(e, "tpu-pool"), 8);
    assert_string_equal(ct_cond(pr(e, "atomic"), "Provisioned", "reason"),
                        "CapacityIsProvisioned");
    /* too big for the pool (max 8): CapacityIsNotFound, retried */
    request(e, "huge", "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
            "tpu-pool", 12, "100", "", CT0 + 2 * SEC);
    ct_run_to(e, CT0 + 3 * SEC);
    assert_string_equal(ct_cond(pr(e, "huge"), "Provisioned", "reason"),
                        "CapacityIsNotFound");
    assert_int_equal(ct_count_nodes(e, "tpu-pool"), 8);
    fq_engine_free(e);
}

static void test_queued_arrivals(void **state)
{
    (void)state;
    struct fq_engine *e = ct_engine(true, true);
    ct_apply(e, pools, CT0);
    request(e, "q", "queued-provisioning.gke.io", "q-pool", 4, "8", "", CT0);
    request(e, "q2", "queued-provisioning.gke.io", "q-pool", 4, "8", "",
            CT0 + 1 * SEC);
    request(e, "other", "unknown.example.com", "q-pool", 4, "8", "",
            CT0 + 1 * SEC);
    ct_run_to(e, CT0 + 599 * SEC);
    assert_string_equal(ct_cond(pr(e, "q"), "Accepted", "status"), "True");
    assert_string_equal(ct_cond(pr(e, "q"), "Provisioned", "reason"),
                        "NotProvisioned");
    assert_non_null(strstr(ct_cond(pr(e, "q"), "Provisioned", "message"),
                           "not available yet"));
    assert_int_equal(ct_count_nodes(e, "q-pool"), 0);
    assert_null(fq_map_get(pr(e, "other"), "status"));
    /* 4 hosts arrive at 600 s: the oldest request gets them, whole */
    ct_run_to(e, CT0 + 600 * SEC);
    assert_int_equal(ct_count_nodes(e, "q-pool"), 4);
    ct_run_to(e, CT0 + 630 * SEC);
    assert_string_equal(ct_cond(pr(e, "q"), "Provisioned", "status"), "True");
    assert_string_equal(ct_cond(pr(e, "q2"), "Provisioned", "status"), "False");
    /* the pool is full (max 4) */
    assert_non_null(strstr(ct_cond(pr(e, "q2"), "Provisioned", "message"),
                           "Max nodepool size reached"));
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_capacity),
        cmocka_unit_test(test_best_effort_atomic),
        cmocka_unit_test(test_queued_arrivals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
