/*
 * test_check.c - the invariant checkers of flexq/check.h find what they
 * promise: a settled engine holds every invariant, and each state a
 * checker names (an Admitted workload without quota, quota of a queue or
 * flavor that does not exist, usage over the nominal quota, a queue
 * status or fair share that disagrees with its workloads, a pod bound to a node that
 * does not exist) is reported with its number. The broken states are
 * written straight into the store, as a faulty controller would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/check.h"
#include "flexq/engine.h"
#include "flexq/objstore.h"
#include "flexq/value.h"
#include "yaml_testlib.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

static void apply(struct fq_engine *e, const char *yaml)
{
    struct fq_err err = {0};
    if (fq_engine_apply(e, testlib_yaml1(yaml), T0, NULL, NULL, &err) != 0)
        fail_msg("%s", err.msg);
}

static struct fq_engine *setup_engine(void)
{
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    struct fq_engine *e = fq_engine_new(&cfg);
    apply(e, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
             "metadata: {name: default}\n");
    apply(e, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
             "metadata: {name: cq}\nspec:\n  namespaceSelector: {}\n"
             "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
             "    - {name: default, resources: [{name: cpu, nominalQuota: "
             "10}]}\n");
    apply(e, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
             "metadata: {namespace: default, name: lq}\n"
             "spec: {clusterQueue: cq}\n");
    apply(e, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
             "metadata: {namespace: default, name: w}\n"
             "spec:\n  queueName: lq\n  podSets:\n  - name: main\n"
             "    template: {spec: {containers: [{name: c, image: x, "
             "resources: {requests: {cpu: \"4\"}}}]}}\n");
    fq_engine_run(e, T0);
    return e;
}

/* The findings of fq_engine_check, and whether one of them starts with
 * `prefix` ("K3:"). */
static bool found(struct fq_engine *e, const char *prefix)
{
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    size_t n = fq_engine_check(e, &errs);
    assert_int_equal(n, errs.n);
    bool hit = false;
    for (size_t i = 0; i < errs.n; i++)
        if (!strncmp(errs.items[i].msg, prefix, strlen(prefix)))
            hit = true;
    fq_errlist_release(&errs);
    return hit;
}

/* Replaces workload w's status with `yaml` (a status mapping). */
static void set_wl_status(struct fq_engine *e, const char *name,
                          const char *yaml)
{
    struct fq_value *st = testlib_yaml1(yaml);
    assert_int_equal(fq_objstore_set_status(fq_engine_store(e),
                                            FQ_KIND_WORKLOAD, "default", name,
                                            st, NULL),
                     0);
}

static void test_settled_engine_holds(void **state)
{
    (void)state;
    struct fq_engine *e = setup_engine();
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    assert_int_equal(fq_engine_check(e, &errs), 0);
    fq_errlist_release(&errs);
    /* The workload does hold quota: the checks looked at something. */
    const struct fq_object *w =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, "default", "w");
    assert_string_equal(fq_value_path_str(w->obj,
                                          "status.admission."
                                          "clusterQueue",
                                          ""),
                        "cq");
    fq_engine_free(e);
}

static void test_admitted_without_quota(void **state)
{
    (void)state;
    struct fq_engine *e = setup_engine();
    set_wl_status(e, "w",
                  "conditions: [{type: Admitted, status: \"True\", reason: "
                  "Admitted, message: x, lastTransitionTime: "
                  "\"2026-01-01T00:00:00Z\"}]\n");
    assert_true(found(e, "K1:"));
    fq_engine_free(e);
}

/* A status that holds `cpu` of `flavor` in ClusterQueue `cq`. */
static void hold(struct fq_engine *e, const char *cq, const char *flavor,
                 const char *cpu)
{
    char y[1024];
    snprintf(y, sizeof(y),
             "conditions: [{type: QuotaReserved, status: \"True\", reason: "
             "QuotaReserved, message: x, lastTransitionTime: "
             "\"2026-01-01T00:00:00Z\"}]\n"
             "admission:\n  clusterQueue: %s\n  podSetAssignments:\n"
             "  - name: main\n    flavors: {cpu: %s}\n"
             "    resourceUsage: {cpu: \"%s\"}\n    count: 1\n",
             cq, flavor, cpu);
    set_wl_status(e, "w", y);
}

static void test_unknown_queue_and_flavor(void **state)
{
    (void)state;
    struct fq_engine *e = setup_engine();
    hold(e, "ghost", "default", "4");
    assert_true(found(e, "K2:"));
    hold(e, "cq", "ghost-flavor", "4");
    assert_true(found(e, "K2:"));
    fq_engine_free(e);
}

static void test_over_nominal_quota(void **state)
{
    (void)state;
    struct fq_engine *e = setup_engine();
    assert_false(found(e, "K3:"));
    hold(e, "cq", "default", "12");
    assert_true(found(e, "K3:"));
    fq_engine_free(e);
}

static void test_status_disagrees(void **state)
{
    (void)state;
    struct fq_engine *e = setup_engine();
    assert_false(found(e, "K4:"));
    hold(e, "cq", "default", "3"); /* the status still says 4 */
    assert_true(found(e, "K4:"));
    fq_engine_free(e);
}

/* K5: a share above 0 on a queue that borrows nothing (and 0 on one
 * that does not hold more than its nominal quota is fine). */
static void test_share_disagrees(void **state)
{
    (void)state;
    struct fq_engine *e = setup_engine();
    const char *y[] = {"fairSharing: {weightedShare: 0}\n",
                       "fairSharing: {weightedShare: 250}\n"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fq_objstore_set_status(fq_engine_store(e),
                                                FQ_KIND_CLUSTERQUEUE, "", "cq",
                                                testlib_yaml1(y[i]), NULL),
                         0);
        if (i == 0)
            assert_false(found(e, "K5:"));
        else
            assert_true(found(e, "K5:"));
    }
    fq_engine_free(e);
}

static void test_pod_on_missing_node(void **state)
{
    (void)state;
    struct fq_engine *e = setup_engine();
    apply(e, "apiVersion: v1\nkind: Pod\nmetadata: {namespace: default, "
             "name: p}\nspec: {nodeName: nowhere, containers: [{name: c, "
             "image: x}]}\n");
    assert_true(found(e, "C1:"));
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settled_engine_holds),
        cmocka_unit_test(test_admitted_without_quota),
        cmocka_unit_test(test_unknown_queue_and_flavor),
        cmocka_unit_test(test_over_nominal_quota),
        cmocka_unit_test(test_status_disagrees),
        cmocka_unit_test(test_share_disagrees),
        cmocka_unit_test(test_pod_on_missing_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
