/*
 * test_autoscaler.c - the cluster autoscaler with pods as objects: scale-up
 * for Unschedulable pods (selector, taints, bounds), pods that consume a
 * ProvisioningRequest left to it, minimum sizes, scale-down of idle nodes
 * after the unneeded time, and the default-pool of a fresh cluster. Also
 * the deadline heap: filtering keeps the (time, key) order of what stays.
 */
#include "capacity_testlib.h"

#include "capacity/nodes.h"

static const char *pools =
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: "
    "tpu}\nspec: {machineType: ct6e-standard-4t, tpuTopology: 2x2, "
    "initialNodeCount: 0, autoscaling: {enabled: true, minNodeCount: 0, "
    "maxNodeCount: 2}}\n---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: "
    "cpu}\nspec: {machineType: n2-standard-8, initialNodeCount: 2, "
    "autoscaling: {enabled: true, minNodeCount: 2, maxNodeCount: 5}}\n";

static void pod(struct fq_engine *e, const char *name, bool tolerate,
                const char *annotations, int64_t now)
{
    char buf[1500];
    snprintf(buf, sizeof(buf),
             "apiVersion: v1\nkind: Pod\nmetadata: {namespace: default, "
             "name: %s, annotations: {%s}}\nspec:\n  nodeSelector: "
             "{cloud.google.com/gke-tpu-topology: 2x2}\n%s  containers:\n  - "
             "name: c\n    image: x\n    resources: {requests: {cpu: \"8\", "
             "google.com/tpu: \"4\"}, limits: {google.com/tpu: \"4\"}}\n",
             name, annotations,
             tolerate ? "  tolerations: [{key: google.com/tpu, operator: "
                        "Exists, effect: NoSchedule}]\n" :
                        "");
    ct_apply(e, buf, now);
}

static void test_scale_up_and_down(void **state)
{
    (void)state;
    struct fq_engine *e = ct_engine(false, true);
    ct_apply(e, pools, CT0);
    ct_run_to(e, CT0);
    /* minimum sizes and default-pool right away, booting */
    assert_int_equal(ct_count_nodes(e, "cpu"), 2);
    assert_int_equal(ct_count_nodes(e, "default-pool"), 1);
    assert_int_equal(ct_count_nodes(e, "tpu"), 0);

    pod(e, "a", true, "", CT0 + 1 * SEC);
    pod(e, "b", true, "", CT0 + 1 * SEC);
    pod(e, "c", true, "", CT0 + 1 * SEC);
    pod(e, "untolerated", false, "", CT0 + 1 * SEC);
    pod(e, "consumer", true,
        "autoscaling.x-k8s.io/consume-provisioning-request: pr-1",
        CT0 + 1 * SEC);
    ct_run_to(e, CT0 + 2 * SEC);
    /* three pods of 4 TPU want three hosts; the pool stops at 2 */
    assert_int_equal(ct_count_nodes(e, "tpu"), 2);
    assert_true(ct_count_events(e, "TriggeredScaleUp") >= 1);
    assert_true(ct_count_events(e, "NotTriggerScaleUp") >= 1);
    struct fq_capacity *st = fq_engine_controller(e, "capacity");
    assert_non_null(st);
    assert_int_equal(st->scale_ups, 3); /* cpu, default-pool, tpu */
    /* nodes boot in 60 s, then the binder places two of the pods */
    ct_run_to(e, CT0 + 62 * SEC);
    const struct fq_value *a = ct_get(e, FQ_KIND_POD, "default", "a");
    const struct fq_value *b = ct_get(e, FQ_KIND_POD, "default", "b");
    assert_non_null(
        strstr(fq_value_path_str(a, "spec.nodeName", ""), "gke-tpu-"));
    assert_non_null(
        strstr(fq_value_path_str(b, "spec.nodeName", ""), "gke-tpu-"));
    assert_string_equal(
        fq_value_path_str(ct_get(e, FQ_KIND_POD, "default", "untolerated"),
                          "spec.nodeName", ""),
        "");
    assert_int_equal(ct_count_nodes(e, "tpu"), 2);

    /* the pods end: idle nodes go after 10 minutes, down to the minimum */
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_POD, "default", "a", CT0 + 100 * SEC, NULL),
        0);
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_POD, "default", "b", CT0 + 100 * SEC, NULL),
        0);
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_POD, "default", "c", CT0 + 100 * SEC, NULL),
        0);
    assert_int_equal(fq_engine_delete(e, FQ_KIND_POD, "default", "consumer",
                                      CT0 + 100 * SEC, NULL),
                     0);
    ct_run_to(e, CT0 + 699 * SEC);
    assert_int_equal(ct_count_nodes(e, "tpu"), 2);
    ct_run_to(e, CT0 + 701 * SEC);
    assert_int_equal(ct_count_nodes(e, "tpu"), 0);
    assert_int_equal(ct_count_nodes(e, "cpu"), 2);
    assert_int_equal(ct_count_nodes(e, "default-pool"), 1);
    assert_int_equal(st->scale_downs, 2);
    /* cost was charged for the 2 TPU nodes from 1 s to 700 s */
    const struct fq_value *p = ct_get(e, FQ_KIND_NODEPOOL, "", "tpu");
    assert_int_equal(fq_value_path_int(p, "status.cost.nodeSeconds", 0),
                     2 * 699);
    assert_int_equal(fq_value_path_int(p, "status.nodeCount", -1), 0);
    fq_engine_free(e);
}

static void test_deleted_pool_and_bad_pool(void **state)
{
    (void)state;
    struct fq_engine *e = ct_engine(false, true);
    ct_apply(e, pools, CT0);
    ct_run_to(e, CT0 + 100 * SEC);
    assert_int_equal(ct_count_nodes(e, "cpu"), 2);
    /* deleting a pool deletes its nodes */
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_NODEPOOL, "", "cpu", CT0 + 101 * SEC, NULL),
        0);
    ct_run_to(e, CT0 + 102 * SEC);
    assert_int_equal(ct_count_nodes(e, "cpu"), 0);
    /* a bad pool is refused at apply and changes nothing */
    struct fq_docs docs = {0};
    struct fq_limits lim = fq_limits_default();
    const char *bad = "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\n"
                      "metadata: {name: bad}\nspec: {machineType: "
                      "ct6e-standard-4t, tpuTopology: 3x3}\n";
    assert_int_equal(fq_yaml_parse(bad, strlen(bad), "t", &lim, &docs, NULL),
                     0);
    struct fq_err err = {0};
    assert_true(fq_engine_apply(e, docs.items[0], CT0 + 103 * SEC, NULL, NULL,
                                &err) < 0);
    docs.items[0] = NULL;
    docs.n = 0;
    fq_docs_release(&docs);
    assert_non_null(strstr(err.msg, "does not fit"));
    assert_null(ct_get(e, FQ_KIND_NODEPOOL, "", "bad"));
    fq_engine_free(e);
}

/* With status rewrites throttled (the simulator's status_every_ms), a
 * pool's counts and cost are written at most once per period, and the
 * cost written then is the exact sum of every interval in between. */
static void test_pool_status_throttled(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = 7;
    cfg.sim_provider = true;
    cfg.policy = fq_policy_kueue();
    cfg.status_every_ms = 3600 * SEC;
    struct fq_engine *e = fq_engine_new(&cfg);
    ct_apply(e, pools, CT0);
    ct_run_to(e, CT0);
    const struct fq_value *p = ct_get(e, FQ_KIND_NODEPOOL, "", "tpu");
    assert_int_equal(fq_value_path_int(p, "status.nodeCount", -1), 0);
    assert_int_equal(fq_value_path_int(p, "status.cost.asOfMs", -1), CT0);

    pod(e, "a", true, "", CT0 + 1 * SEC);
    pod(e, "b", true, "", CT0 + 1 * SEC);
    ct_run_to(e, CT0 + 62 * SEC);
    assert_int_equal(ct_count_nodes(e, "tpu"), 2);
    /* not rewritten within the hour */
    p = ct_get(e, FQ_KIND_NODEPOOL, "", "tpu");
    assert_int_equal(fq_value_path_int(p, "status.nodeCount", -1), 0);
    assert_int_equal(fq_value_path_int(p, "status.cost.asOfMs", -1), CT0);

    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_POD, "default", "a", CT0 + 100 * SEC, NULL),
        0);
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_POD, "default", "b", CT0 + 100 * SEC, NULL),
        0);
    ct_run_to(e, CT0 + 701 * SEC);
    assert_int_equal(ct_count_nodes(e, "tpu"), 0);
    /* the first run an hour on (a new pod starts one) writes them: 2
     * nodes from 1 s to 700 s */
    pod(e, "c", false, "", CT0 + 3700 * SEC);
    ct_run_to(e, CT0 + 3700 * SEC);
    p = ct_get(e, FQ_KIND_NODEPOOL, "", "tpu");
    assert_int_equal(fq_value_path_int(p, "status.cost.nodeSeconds", 0),
                     2 * 699);
    assert_true(fq_value_path_int(p, "status.cost.asOfMs", -1) >=
                CT0 + 3600 * SEC);
    assert_int_equal(fq_value_path_int(p, "status.nodeCount", -1), 0);
    fq_engine_free(e);
}

static bool even_stamp(void *ctx, const struct fq_cap_hent *h)
{
    (void)ctx;
    return h->stamp % 2 == 0;
}

static void test_heap_filter(void **state)
{
    (void)state;
    struct fq_cap_heap h = {0};
    static const char *const keys[] = {"d", "b", "a", "c", "e", "b"};
    static const int64_t ts[] = {5, 3, 3, 9, 1, 7};
    for (int i = 0; i < 6; i++)
        fq_capacity_heap_push(&h, ts[i], keys[i], (uint64_t)i);
    /* stamps 0, 2, 4 stay: d@5, a@3, e@1 */
    fq_capacity_heap_filter(&h, even_stamp, NULL);
    assert_int_equal(h.h.n, 3);
    static const char *const want[] = {"e", "a", "d"};
    for (int i = 0; i < 3; i++) {
        assert_string_equal(fq_capacity_heap_top(&h)->key, want[i]);
        fq_capacity_heap_pop(&h);
    }
    assert_null(fq_capacity_heap_top(&h));
    fq_capacity_heap_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale_up_and_down),
        cmocka_unit_test(test_pool_status_throttled),
        cmocka_unit_test(test_deleted_pool_and_bad_pool),
        cmocka_unit_test(test_heap_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
