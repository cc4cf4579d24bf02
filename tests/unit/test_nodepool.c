/*
 * test_nodepool.c - NodePool validation (every refusal of issue 4 item 11),
 * the labels, taints and allocatable of its Nodes, and the gcloud-style
 * CLI helpers (flags -> object, describe view, --format=get(...)).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/buf.h"
#include "flexq/nodepool.h"
#include "flexq/value.h"
#include "yaml_testlib.h"

int fq_cli_nodepool_from_flags(const char *name, int argc, char **argv,
                               struct fq_value **out, struct fq_err *err);
struct fq_value *fq_cli_nodepool_view(const struct fq_value *pool);
int fq_cli_nodepool_get(const struct fq_value *view, const char *format,
                        struct fq_buf *out, struct fq_err *err);

#define POOL(spec)                                                       \
 "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n" \
 "spec: " spec "\n"

static const struct {
    const char *yaml;
    const char *err; /* NULL: valid */
} cases[] = {
    {POOL("{machineType: ct6e-standard-4t, tpuTopology: 4x4, "
          "initialNodeCount: 0, autoscaling: {enabled: true, minNodeCount: "
          "0, maxNodeCount: 4}}"),
     NULL},
    {POOL("{machineType: ct6e-standard-4t, tpuTopology: 4x4, "
          "initialNodeCount: 0, flexStart: true, queuedProvisioning: "
          "{enabled: true}, autoscaling: {enabled: true, minNodeCount: 0, "
          "maxNodeCount: 4}}"),
     NULL},
    {POOL("{machineType: n2-standard-16, initialNodeCount: 3}"), NULL},
    {POOL("{machineType: ct6e-standard-5t}"),
     "unknown machine type \"ct6e-standard-5t\"; closest: ct6e-standard-"},
    {POOL("{tpuTopology: 4x4}"), "spec.machineType: required"},
    {POOL("{machineType: ct6e-standard-4t, tpuTopology: 3x3}"),
     "does not fit machine type ct6e-standard-4t"},
    {POOL("{machineType: n2-standard-16, tpuTopology: 2x2}"),
     "has no TPU chips"},
    {POOL("{machineType: ct6e-standard-4t, tpuTopology: 4x4, autoscaling: "
          "{enabled: true, minNodeCount: 8, maxNodeCount: 4}}"),
     "--min-nodes=8 is above --max-nodes=4"},
    {POOL("{machineType: ct6e-standard-4t, tpuTopology: 4x4, "
          "queuedProvisioning: {enabled: true}, flexStart: true}"),
     "needs --enable-autoscaling"},
    {POOL("{machineType: ct6e-standard-4t, tpuTopology: 4x4, "
          "initialNodeCount: 4, queuedProvisioning: {enabled: true}, "
          "autoscaling: {enabled: true, maxNodeCount: 4}}"),
     "starts with --num-nodes=0"},
    {POOL("{machineType: ct6e-standard-4t, tpuTopology: 4x4, autoscaling: "
          "{enabled: true, minNodeCount: 0, maxNodeCount: 6}}"),
     "must be multiples of 4"},
    {POOL("{machineType: g2-standard-4, flexStart: true, spot: true}"),
     "exclude each other"},
    {POOL("{machineType: g2-standard-4, initialNodeCount: -1}"),
     "must not be negative"},
    {POOL("{machineType: g2-standard-4, initialNodeCount: x}"),
     "must be a whole number"},
};

static void test_validate(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fq_value *o = testlib_yaml1(cases[i].yaml);
        struct fq_err err = {0};
        int rc = fq_nodepool_validate(o, &err);
        if (!cases[i].err) {
            if (rc != 0)
                fail_msg("case %zu: %s", i, err.msg);
        } else {
            assert_int_equal(rc, FQ_EINVAL);
            if (!strstr(err.msg, cases[i].err))
                fail_msg("case %zu: got \"%s\", want \"%s\"", i, err.msg,
                         cases[i].err);
        }
        fq_value_free(o);
    }
}

static const char *label(const struct fq_value *node, const char *key)
{
    return fq_value_as_str(
        fq_map_get(fq_value_path(node, "metadata.labels"), key));
}

static void test_nodes(void **state)
{
    (void)state;
    struct fq_value *o = testlib_yaml1(POOL(
        "{machineType: ct6e-standard-4t, tpuTopology: 4x4, location: "
        "us-east5-b, initialNodeCount: 0, flexStart: true, "
        "queuedProvisioning: {enabled: true}, labels: {team: ml}, "
        "autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: 4}}"));
    struct fq_nodepool_spec p;
    assert_int_equal(fq_nodepool_decode(o, &p, NULL), 0);
    assert_int_equal(p.slice_hosts, 4);
    assert_true(p.queued);
    assert_int_equal(fq_nodepool_provisioning(&p), FQ_PROV_FLEX_START);
    assert_float_equal(fq_nodepool_price(&p), 10.80 * 0.47, 1e-9);
    struct fq_value *n =
        fq_nodepool_make_node(&p, "gke-p-abcde-0", "p-abcde", 0, false, 0);
    assert_string_equal(label(n, "cloud.google.com/gke-nodepool"), "p");
    assert_string_equal(label(n, "cloud.google.com/gke-tpu-accelerator"),
                        "tpu-v6e-slice");
    assert_string_equal(label(n, "cloud.google.com/gke-tpu-topology"), "4x4");
    assert_string_equal(label(n, "cloud.google.com/gke-flex-start"), "true");
    assert_string_equal(label(n, "cloud.google.com/gke-queued"), "true");
    assert_string_equal(label(n, "flexq.dev/slice"), "p-abcde");
    assert_string_equal(label(n, "team"), "ml");
    assert_string_equal(label(n, "node.kubernetes.io/instance-type"),
                        "ct6e-standard-4t");
    const struct fq_value *t = fq_value_path(n, "spec.taints");
    assert_int_equal(fq_value_len(t), 2);
    assert_string_equal(fq_value_path_str(fq_seq_at(t, 0), "key", ""),
                        "google.com/tpu");
    assert_string_equal(fq_value_path_str(fq_seq_at(t, 1), "key", ""),
                        "cloud.google.com/gke-queued");
    assert_string_equal(fq_value_path_str(fq_seq_at(t, 1), "effect", ""),
                        "NoSchedule");
    const struct fq_value *alloc = fq_value_path(n, "status.allocatable");
    assert_string_equal(fq_value_as_str(fq_map_get(alloc, "google.com/tpu")),
                        "4");
    assert_string_equal(fq_value_as_str(fq_map_get(
                            fq_value_path(n, "status.capacity"), "memory")),
                        "720Gi");
    const struct fq_value *ready =
        fq_seq_at(fq_value_path(n, "status.conditions"), 0);
    assert_string_equal(fq_value_path_str(ready, "status", ""), "False");
    assert_string_equal(fq_value_path_str(n, "spec.providerID", ""),
                        "sim://us-east5-b/gke-p-abcde-0");
    /* Nodes made from one prototype are copies: each has its own name,
     * host index and Ready condition, and the prototype stays as made. */
    struct fq_value *proto = fq_nodepool_node_proto(&p);
    struct fq_value *n1 = fq_nodepool_node_from(proto, &p, "gke-p-abcde-0",
                                                "p-abcde", 0, false, 0);
    struct fq_value *n2 = fq_nodepool_node_from(proto, &p, "gke-p-abcde-1",
                                                "p-abcde", 1, true, 0);
    assert_true(fq_value_equal(n1, n));
    assert_string_equal(label(n2, "kubernetes.io/hostname"), "gke-p-abcde-1");
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(n2, "metadata.annotations"),
                                   "flexq.dev/slice-index")),
        "1");
    assert_string_equal(
        fq_value_path_str(fq_seq_at(fq_value_path(n2, "status.conditions"), 0),
                          "status", ""),
        "True");
    assert_string_equal(fq_value_path_str(proto, "metadata.name", "-"), "");
    fq_value_free(n1);
    fq_value_free(n2);
    fq_value_free(proto);
    /* Selectors: the pool matches what its nodes carry. */
    struct fq_value *sel =
        testlib_yaml1("{cloud.google.com/gke-nodepool: p, "
                      "cloud.google.com/gke-tpu-topology: 4x4}");
    assert_true(fq_nodepool_matches(&p, sel));
    fq_map_set(sel, "cloud.google.com/gke-tpu-topology", fq_value_str("2x2"));
    assert_false(fq_nodepool_matches(&p, sel));
    assert_true(fq_nodepool_matches(&p, NULL));
    fq_value_free(sel);
    fq_value_free(n);
    fq_value_free(o);

    /* GPU and plain pools. */
    o = testlib_yaml1(POOL("{machineType: g2-standard-4, spot: true}"));
    assert_int_equal(fq_nodepool_decode(o, &p, NULL), 0);
    n = fq_nodepool_make_node(&p, "g", "g", 0, true, 0);
    assert_string_equal(label(n, "cloud.google.com/gke-accelerator"),
                        "nvidia-l4");
    assert_string_equal(label(n, "cloud.google.com/gke-spot"), "true");
    assert_string_equal(
        fq_value_path_str(fq_seq_at(fq_value_path(n, "spec.taints"), 0), "key",
                          ""),
        "nvidia.com/gpu");
    fq_value_free(n);
    fq_value_free(o);
    o = fq_nodepool_default_object();
    assert_int_equal(fq_nodepool_decode(o, &p, NULL), 0);
    assert_string_equal(p.name, "default-pool");
    assert_string_equal(p.machine->name, "n2-standard-16");
    assert_int_equal(p.min_nodes, 1);
    n = fq_nodepool_make_node(&p, "d", "d", 0, true, 0);
    assert_null(fq_value_path(n, "spec.taints"));
    fq_value_free(n);
    fq_value_free(o);
}

static void test_cli_flags(void **state)
{
    (void)state;
    const char *argv[] = {"--cluster=tpu-cluster",
                          "--location=us-east5-b",
                          "--machine-type=ct6e-standard-4t",
                          "--tpu-topology",
                          "4x4",
                          "--enable-autoscaling",
                          "--num-nodes=0",
                          "--min-nodes=0",
                          "--max-nodes=4",
                          "--enable-queued-provisioning",
                          "--flex-start",
                          "--node-labels=team=ml,tier=b",
                          "--node-taints=dedicated=ml:NoSchedule"};
    struct fq_value *o = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_cli_nodepool_from_flags(
                         "dws-pool", (int)(sizeof(argv) / sizeof(argv[0])),
                         (char **)argv, &o, &err),
                     0);
    assert_string_equal(fq_value_path_str(o, "spec.machineType", ""),
                        "ct6e-standard-4t");
    assert_string_equal(fq_value_path_str(o, "spec.tpuTopology", ""), "4x4");
    assert_int_equal(fq_value_path_int(o, "spec.autoscaling.maxNodeCount", 0),
                     4);
    assert_true(fq_value_path_bool(o, "spec.queuedProvisioning.enabled", 0));
    assert_string_equal(fq_value_path_str(o, "spec.labels.tier", ""), "b");
    struct fq_value *view = fq_cli_nodepool_view(o);
    struct fq_buf b = FQ_BUF_INIT;
    assert_int_equal(
        fq_cli_nodepool_get(view, "get(config.flexStart)", &b, &err), 0);
    assert_string_equal(fq_buf_str(&b), "True\n");
    fq_buf_reset(&b);
    assert_int_equal(
        fq_cli_nodepool_get(view, "value(config.machineType,config.spot)", &b,
                            &err),
        0);
    assert_string_equal(fq_buf_str(&b), "ct6e-standard-4t\tFalse\n");
    fq_buf_reset(&b);
    assert_int_equal(fq_cli_nodepool_get(view, "table[x]", &b, &err),
                     FQ_EINVAL);
    fq_buf_release(&b);
    fq_value_free(view);
    fq_value_free(o);

    /* Bad flags are refused before anything is sent. */
    const char *bad1[] = {"--machine-type=ct6e-standard-4t",
                          "--tpu-topology=4x4", "--enable-autoscaling",
                          "--min-nodes=8", "--max-nodes=4"};
    assert_int_equal(
        fq_cli_nodepool_from_flags("p", 5, (char **)bad1, &o, &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "--min-nodes=8 is above"));
    const char *bad2[] = {"--machine-type=ct6e-standard-4t",
                          "--tpu-topology=4x4", "--num-nodes=0",
                          "--enable-queued-provisioning"};
    assert_int_equal(
        fq_cli_nodepool_from_flags("p", 4, (char **)bad2, &o, &err), FQ_EINVAL);
    const char *bad3[] = {"--machine-type=ct6e-standard-4t", "--frobnicate"};
    assert_int_equal(
        fq_cli_nodepool_from_flags("p", 2, (char **)bad3, &o, &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "--frobnicate"));
    const char *bad4[] = {"--machine-type=g2-standard-4",
                          "--node-taints=a=b:Sometimes"};
    assert_int_equal(
        fq_cli_nodepool_from_flags("p", 2, (char **)bad4, &o, &err), FQ_EINVAL);
}

/* --slurm-partition: the pool's annotation, checked by the validator the
 * API runs too. */
static void test_slurm_partition(void **state)
{
    (void)state;
    const char *argv[] = {"--machine-type=n2-standard-16", "--num-nodes=1",
                          "--slurm-partition", "batch.gpu_2-x"};
    struct fq_value *o = NULL;
    struct fq_err err = {0};
    assert_int_equal(
        fq_cli_nodepool_from_flags("cpu", 4, (char **)argv, &o, &err), 0);
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(o, "metadata.annotations"),
                                   FQ_ANN_SLURM_PARTITION)),
        "batch.gpu_2-x");
    fq_value_free(o);

    const char *bad[][3] = {{"--machine-type=n2-standard-16", "--num-nodes=1",
                             "--slurm-partition=two words"},
                            {"--machine-type=n2-standard-16", "--num-nodes=1",
                             "--slurm-partition=-p"},
                            {"--machine-type=n2-standard-16", "--num-nodes=1",
                             "--slurm-partition="}};
    for (size_t i = 0; i < 3; i++) {
        o = NULL;
        assert_int_equal(
            fq_cli_nodepool_from_flags("cpu", 3, (char **)bad[i], &o, &err),
            FQ_EINVAL);
        assert_null(o);
        assert_non_null(strstr(err.msg, "not a Slurm partition name"));
    }
    char longname[80];
    memset(longname, 'p', 64);
    longname[64] = '\0';
    assert_false(fq_nodepool_slurm_partition_ok(longname));
    longname[63] = '\0';
    assert_true(fq_nodepool_slurm_partition_ok(longname));
    assert_false(fq_nodepool_slurm_partition_ok(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_cli_flags),
        cmocka_unit_test(test_slurm_partition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
