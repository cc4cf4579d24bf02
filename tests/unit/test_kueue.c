/*
 * test_kueue.c - the kueue controller through the engine: many workloads
 * come and go (the controller's hash sets and decode cache must follow),
 * the queue counts in ClusterQueue status stay right, and the stats count
 * what happened.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/core/kueue.h"
#include "flexq/engine.h"
#include "flexq/value.h"
#include "yaml_testlib.h"

static void apply(struct fq_engine *e, const char *yaml, int64_t now)
{
    struct fq_err err = {0};
    if (fq_engine_apply(e, testlib_yaml1(yaml), now, NULL, NULL, &err) != 0)
        fail_msg("%s", err.msg);
}

static const char *queue_yaml[] = {
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
    "metadata: {name: default}\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
    "metadata: {name: cq}\nspec:\n  namespaceSelector: {}\n"
    "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
    "    - {name: default, resources: [{name: cpu, nominalQuota: 10}]}\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {namespace: default, name: lq}\nspec: {clusterQueue: cq}\n",
};

static void add_workload(struct fq_engine *e, int i, int64_t now)
{
    char y[512];
    snprintf(y, sizeof(y),
             "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
             "metadata: {namespace: default, name: w%d}\n"
             "spec:\n  queueName: lq\n  podSets:\n  - name: main\n"
             "    template: {spec: {containers: [{name: c, image: x, "
             "resources: {requests: {cpu: \"1\"}}}]}}\n",
             i);
    apply(e, y, now);
}

static int64_t cq_status(struct fq_engine *e, const char *field)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_CLUSTERQUEUE, "", "cq");
    assert_non_null(o);
    char path[64];
    snprintf(path, sizeof(path), "status.%s", field);
    return fq_value_path_int(o->obj, path, -1);
}

static void test_many_come_and_go(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.policy = fq_policy_default();
    cfg.no_pods = false;
    cfg.sim_provider = false;
    struct fq_engine *e = fq_engine_new(&cfg);
    int64_t t = 1767225600000; /* 2026-01-01 */
    for (size_t i = 0; i < sizeof(queue_yaml) / sizeof(*queue_yaml); i++)
        apply(e, queue_yaml[i], t);
    for (int i = 0; i < 300; i++)
        add_workload(e, i, t);
    fq_engine_run(e, t);
    assert_int_equal(cq_status(e, "admittedWorkloads"), 10);
    assert_int_equal(cq_status(e, "pendingWorkloads"), 290);
    /* Delete most of them, admitted ones included: the quota comes back
     * and the next ones in line are admitted. */
    t += 1000;
    for (int i = 0; i < 250; i++) {
        char name[16];
        snprintf(name, sizeof(name), "w%d", i);
        assert_int_equal(
            fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", name, t, NULL), 0);
    }
    fq_engine_run(e, t);
    assert_int_equal(cq_status(e, "admittedWorkloads"), 10);
    assert_int_equal(cq_status(e, "pendingWorkloads"), 40);
    const struct fq_object *w250 = fq_objstore_get(
        fq_engine_store(e), FQ_KIND_WORKLOAD, "default", "w250");
    assert_non_null(fq_value_path(w250->obj, "status.admission"));
    /* Add them back under the same names: the cache must not serve the
     * old ones. */
    t += 1000;
    for (int i = 0; i < 250; i++)
        add_workload(e, i, t);
    fq_engine_run(e, t);
    assert_int_equal(cq_status(e, "pendingWorkloads"), 290);
    struct fq_kueue_stats st;
    fq_kueue_get_stats(fq_engine_controller(e, "kueue"), &st);
    assert_int_equal(st.admissions, 20);
    assert_int_equal(st.reservations, 20);
    assert_int_equal(st.preemptions, 0);
    assert_true(st.cycles >= 2);
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_come_and_go),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
