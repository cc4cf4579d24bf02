/*
 * test_gke.c - GKE's NodePool and Cluster JSON and flexq's objects
 * (src/core/capacity/gke.c): the tutorial's two pools as gcloud sends them become
 * NodePools with the same fields and come back in gcloud's shape; bad
 * shapes are refused naming the field; the protobuf SelfSubjectAccessReview
 * reader (src/core/objects/ssar_pb.c) reads what kubectl sends and refuses
 * truncated input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/buf.h"
#include "flexq/gke.h"
#include "flexq/nodepool.h"
#include "flexq/ssar_pb.h"
#include "flexq/value.h"

static struct fq_value *json(const char *s)
{
    struct fq_value *v = NULL;
    struct fq_err e = {0};
    if (fq_json_parse(s, strlen(s), "t", NULL, &v, &e) < 0)
        fail_msg("json: %s", e.msg);
    return v;
}

/* What gcloud sent for the tutorial's dws-pool (captured with
 * --log-http). */
static const char DWS[] =
    "{\"autoscaling\": {\"enabled\": true, \"maxNodeCount\": 4, "
    "\"minNodeCount\": 0}, \"config\": {\"flexStart\": true, \"machineType\": "
    "\"ct6e-standard-4t\", \"oauthScopes\": [\"x\"]}, \"initialNodeCount\": 0,"
    " \"management\": {\"autoRepair\": true}, \"name\": \"dws-pool\", "
    "\"placementPolicy\": {\"tpuTopology\": \"4x4\"}, \"queuedProvisioning\": "
    "{\"enabled\": true}, \"upgradeSettings\": {\"maxSurge\": 1}}";

static void test_dws_pool_round_trip(void **state)
{
    (void)state;
    struct fq_value *np = json(DWS);
    struct fq_value *pool = NULL;
    struct fq_err e = {0};
    assert_int_equal(
        fq_gke_pool_from_api(np, "tpu-cluster", "us-east5-b", &pool, &e), 0);
    assert_int_equal(fq_nodepool_validate(pool, &e), 0);
    assert_string_equal(fq_value_path_str(pool, "kind", ""), "NodePool");
    assert_string_equal(fq_value_path_str(pool, "metadata.name", ""),
                        "dws-pool");
    assert_string_equal(fq_value_path_str(pool, "spec.machineType", ""),
                        "ct6e-standard-4t");
    assert_string_equal(fq_value_path_str(pool, "spec.tpuTopology", ""), "4x4");
    assert_string_equal(fq_value_path_str(pool, "spec.cluster", ""),
                        "tpu-cluster");
    assert_string_equal(fq_value_path_str(pool, "spec.location", ""),
                        "us-east5-b");
    assert_true(fq_value_path_bool(pool, "spec.flexStart", false));
    assert_true(
        fq_value_path_bool(pool, "spec.queuedProvisioning.enabled", false));
    assert_int_equal(
        fq_value_path_int(pool, "spec.autoscaling.maxNodeCount", -1), 4);
    assert_null(fq_value_path(pool, "spec.oauthScopes"));

    struct fq_value *back = fq_gke_pool_to_api(pool, "http://h/v1/c");
    assert_true(fq_value_path_bool(back, "config.flexStart", false));
    assert_string_equal(fq_value_path_str(back, "config.machineType", ""),
                        "ct6e-standard-4t");
    assert_string_equal(
        fq_value_path_str(back, "placementPolicy.tpuTopology", ""), "4x4");
    assert_true(fq_value_path_bool(back, "queuedProvisioning.enabled", false));
    assert_string_equal(fq_value_path_str(back, "status", ""), "RUNNING");
    assert_string_equal(fq_value_path_str(back, "selfLink", ""),
                        "http://h/v1/c/nodePools/dws-pool");
    assert_null(fq_value_path(back, "config.spot")); /* false: left out */
    fq_value_free(back);
    fq_value_free(pool);
    fq_value_free(np);
}

static void test_reservation_and_taints(void **state)
{
    (void)state;
    struct fq_value *np = json(
        "{\"name\": \"on-demand-pool\", \"config\": {\"machineType\": "
        "\"ct6e-standard-4t\", \"reservationAffinity\": "
        "{\"consumeReservationType\": \"NO_RESERVATION\"}, \"taints\": "
        "[{\"key\": \"a\", \"value\": \"b\", \"effect\": \"NO_EXECUTE\"}], "
        "\"labels\": {\"team\": \"ml\"}}, \"initialNodeCount\": \"0\", "
        "\"locations\": [\"us-east5-a\"]}");
    struct fq_value *pool = NULL;
    struct fq_err e = {0};
    assert_int_equal(fq_gke_pool_from_api(np, "c", "us-east5-b", &pool, &e), 0);
    assert_string_equal(fq_value_path_str(pool, "spec.reservationAffinity", ""),
                        "none");
    assert_string_equal(fq_value_path_str(pool, "spec.location", ""),
                        "us-east5-a");
    const struct fq_value *t = fq_seq_at(fq_value_path(pool, "spec.taints"), 0);
    assert_string_equal(fq_value_path_str(t, "effect", ""), "NoExecute");
    assert_string_equal(fq_value_path_str(pool, "spec.labels.team", ""), "ml");
    struct fq_value *back = fq_gke_pool_to_api(pool, NULL);
    assert_string_equal(
        fq_value_path_str(
            back, "config.reservationAffinity.consumeReservationType", ""),
        "NO_RESERVATION");
    t = fq_seq_at(fq_value_path(back, "config.taints"), 0);
    assert_string_equal(fq_value_path_str(t, "effect", ""), "NO_EXECUTE");
    fq_value_free(back);
    fq_value_free(pool);
    fq_value_free(np);
}

static void test_refusals_name_the_field(void **state)
{
    (void)state;

    static const struct {
        const char *in, *msg;
    } cases[] = {
        {"{\"config\": {}}", "nodePool.name: required"},
        {"{\"name\": \"Bad_Name\"}", "nodePool.name: \"Bad_Name\" must"},
        {"{\"name\": \"p\", \"config\": {\"machineType\": 3}}",
         "nodePool.config.machineType: must be a string"},
        {"{\"name\": \"p\", \"initialNodeCount\": -1}",
         "nodePool.initialNodeCount: must be a whole number"},
        {"{\"name\": \"p\", \"config\": {\"taints\": [{\"key\": \"k\", "
         "\"effect\": \"SOMETIMES\"}]}}",
         "nodePool.config.taints[0]: needs a key and an effect"},
        {"{\"name\": \"p\", \"config\": {\"reservationAffinity\": "
         "{\"consumeReservationType\": \"MAYBE\"}}}",
         "consumeReservationType: \"MAYBE\" is not"},
        {"{\"name\": \"p\", \"autoscaling\": {\"enabled\": \"yes\"}}",
         "nodePool.autoscaling.enabled: must be a boolean"},
        {"[1]", "nodePool: must be an object"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fq_value *np = json(cases[i].in);
        struct fq_value *pool = (struct fq_value *)1;
        struct fq_err e = {0};
        assert_int_equal(fq_gke_pool_from_api(np, "c", "z", &pool, &e),
                         FQ_EINVAL);
        assert_null(pool);
        if (!strstr(e.msg, cases[i].msg))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, e.msg, cases[i].msg);
        fq_value_free(np);
    }
}

static void test_cluster_view(void **state)
{
    (void)state;
    struct fq_value *c = json(
        "{\"apiVersion\": \"flexq.dev/v1alpha1\", \"kind\": \"Cluster\", "
        "\"metadata\": {\"name\": \"tpu-cluster\"}, \"spec\": {\"project\": "
        "\"p\", \"location\": \"us-east5-b\", \"initialClusterVersion\": "
        "\"1.34\"}}");
    struct fq_err e = {0};
    assert_int_equal(fq_gke_cluster_validate(c, &e), 0);
    struct fq_value *pools = json("[{\"name\": \"default-pool\", \"config\": "
                                  "{\"machineType\": \"n2-standard-16\"}, "
                                  "\"currentNodeCount\": 3}]");
    struct fq_value *v =
        fq_gke_cluster_to_api(c, pools, "127.0.0.1:8266", "Q0E=", "http://s");
    assert_string_equal(fq_value_path_str(v, "endpoint", ""), "127.0.0.1:8266");
    assert_string_equal(
        fq_value_path_str(v, "masterAuth.clusterCaCertificate", ""), "Q0E=");
    assert_string_equal(fq_value_path_str(v, "zone", ""), "us-east5-b");
    assert_string_equal(fq_value_path_str(v, "currentMasterVersion", ""),
                        "1.34.1-gke.1000");
    assert_int_equal(fq_value_path_int(v, "currentNodeCount", 0), 3);
    assert_string_equal(fq_value_path_str(v, "nodeConfig.machineType", ""),
                        "n2-standard-16");
    fq_value_free(v);
    fq_map_del(fq_map_get(c, "spec"), "project");
    assert_int_equal(fq_gke_cluster_validate(c, &e), FQ_EINVAL);
    assert_non_null(strstr(e.msg, "spec.project"));
    fq_value_free(c);
    assert_true(fq_gke_project_number("flexq-local") >= 100000000000ULL);
    assert_true(fq_gke_project_number("flexq-local") ==
                fq_gke_project_number("flexq-local"));
}

/* `auth can-i create pods` as kubectl 1.32 encodes it: the envelope,
 * TypeMeta, and the review (group "" and subresource "" present). */
static const unsigned char SSAR[] = {
    'k',  '8',  's',  0x00, 0x0a, '2',  0x0a, 0x17, 'a',  'u',  't',  'h',
    'o',  'r',  'i',  'z',  'a',  't',  'i',  'o',  'n',  '.',  'k',  '8',
    's',  '.',  'i',  'o',  '/',  'v',  '1',  0x12, 0x17, 'S',  'e',  'l',
    'f',  'S',  'u',  'b',  'j',  'e',  'c',  't',  'A',  'c',  'c',  'e',
    's',  's',  'R',  'e',  'v',  'i',  'e',  'w',  0x12, '!',  0x0a, 0x00,
    0x12, 0x1d, 0x0a, 0x1b, 0x0a, 0x07, 'd',  'e',  'f',  'a',  'u',  'l',
    't',  0x12, 0x06, 'c',  'r',  'e',  'a',  't',  'e',  0x1a, 0x00, '*',
    0x04, 'p',  'o',  'd',  's',  '2',  0x00, 0x1a, 0x00, '"',  0x00};

static void test_ssar_protobuf(void **state)
{
    (void)state;
    struct fq_value *v = NULL;
    struct fq_err e = {0};
    assert_int_equal(
        fq_ssar_from_protobuf((const char *)SSAR, sizeof(SSAR), &v, &e), 0);
    const struct fq_value *ra = fq_value_path(v, "spec.resourceAttributes");
    assert_string_equal(fq_value_path_str(ra, "namespace", ""), "default");
    assert_string_equal(fq_value_path_str(ra, "verb", ""), "create");
    assert_string_equal(fq_value_path_str(ra, "resource", ""), "pods");
    fq_value_free(v);
    /* Every truncation is refused or read as less, never past the end. */
    for (size_t n = 0; n < sizeof(SSAR); n++) {
        int rc = fq_ssar_from_protobuf((const char *)SSAR, n, &v, &e);
        if (rc == 0)
            fq_value_free(v);
        else
            assert_null(v);
    }
    assert_int_equal(fq_ssar_from_protobuf("{\"a\":1}", 7, &v, &e), FQ_EPARSE);
    assert_non_null(strstr(e.msg, "envelope"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dws_pool_round_trip),
        cmocka_unit_test(test_reservation_and_taints),
        cmocka_unit_test(test_refusals_name_the_field),
        cmocka_unit_test(test_cluster_view),
        cmocka_unit_test(test_ssar_protobuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
