/*
 * test_convert.c - Kueue's v1beta1 <-> v1beta2 conversion on read
 * (src/core/objects/convert.c): field names, round trips, what is left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/convert.h"
#include "flexq/value.h"
#include "yaml_testlib.h"

static void test_clusterqueue(void **state)
{
    (void)state;
    struct fq_value *v1 = testlib_yaml1(
        "apiVersion: kueue.x-k8s.io/v1beta1\n"
        "kind: ClusterQueue\n"
        "metadata: {name: cq}\n"
        "spec:\n"
        "  cohort: team\n"
        "  admissionChecks: [dws-prov]\n"
        "  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: "
        "Preempt}\n");
    struct fq_value *v2 = fq_convert_kueue(v1, "kueue.x-k8s.io", "v1beta2");
    assert_non_null(v2);
    assert_string_equal(fq_value_path_str(v2, "apiVersion", ""),
                        "kueue.x-k8s.io/v1beta2");
    assert_string_equal(fq_value_path_str(v2, "spec.cohortName", ""), "team");
    assert_null(fq_value_path(v2, "spec.cohort"));
    assert_null(fq_value_path(v2, "spec.admissionChecks"));
    assert_string_equal(
        fq_value_path_str(
            fq_seq_at(fq_value_path(
                          v2, "spec.admissionChecksStrategy.admissionChecks"),
                      0),
            "name", ""),
        "dws-prov");
    assert_string_equal(
        fq_value_path_str(v2, "spec.flavorFungibility.whenCanBorrow", ""),
        "MayStopSearch");
    /* Back to v1beta1: the v1beta1 names again (the strategy stays, which
     * both versions accept). */
    struct fq_value *back = fq_convert_kueue(v2, "kueue.x-k8s.io", "v1beta1");
    assert_non_null(back);
    assert_string_equal(fq_value_path_str(back, "spec.cohort", ""), "team");
    assert_null(fq_value_path(back, "spec.cohortName"));
    assert_string_equal(
        fq_value_path_str(back, "spec.flavorFungibility.whenCanPreempt", ""),
        "Preempt");
    /* Same version, other groups, unknown versions: nothing to do. */
    assert_null(fq_convert_kueue(v1, "kueue.x-k8s.io", "v1beta1"));
    assert_null(fq_convert_kueue(v1, "ray.io", "v1"));
    assert_null(fq_convert_kueue(v1, "kueue.x-k8s.io", "v9"));
    fq_value_free(back);
    fq_value_free(v2);
    fq_value_free(v1);
}

static void test_workload_priority(void **state)
{
    (void)state;
    struct fq_value *v1 = testlib_yaml1(
        "apiVersion: kueue.x-k8s.io/v1beta1\n"
        "kind: Workload\n"
        "metadata: {name: w, namespace: default}\n"
        "spec:\n"
        "  priorityClassName: high\n"
        "  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass\n"
        "  priority: 1000\n");
    struct fq_value *v2 = fq_convert_kueue(v1, "kueue.x-k8s.io", "v1beta2");
    assert_string_equal(fq_value_path_str(v2, "spec.priorityClassRef.kind", ""),
                        "WorkloadPriorityClass");
    assert_string_equal(
        fq_value_path_str(v2, "spec.priorityClassRef.group", ""),
        "kueue.x-k8s.io");
    assert_string_equal(fq_value_path_str(v2, "spec.priorityClassRef.name", ""),
                        "high");
    assert_null(fq_value_path(v2, "spec.priorityClassName"));
    assert_int_equal(fq_value_path_int(v2, "spec.priority", 0), 1000);
    struct fq_value *back = fq_convert_kueue(v2, "kueue.x-k8s.io", "v1beta1");
    assert_string_equal(fq_value_path_str(back, "spec.priorityClassName", ""),
                        "high");
    assert_string_equal(fq_value_path_str(back, "spec.priorityClassSource", ""),
                        "kueue.x-k8s.io/workloadpriorityclass");
    assert_null(fq_value_path(back, "spec.priorityClassRef"));
    fq_value_free(back);
    fq_value_free(v2);
    fq_value_free(v1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clusterqueue),
        cmocka_unit_test(test_workload_priority),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
