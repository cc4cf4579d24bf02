/*
 * test_raycluster.c - the RayCluster controller (raycluster.c).
 *
 * A head and a 4-host worker slice with the rendezvous env and gang
 * annotations; the ready state once every pod is ready; elastic scale up
 * and down by whole slices within minReplicas..maxReplicas; suspend;
 * KubeRay's head service (ports, selector matching the head, owner, the
 * GC deleting it with the cluster); v1 Service validation and defaults.
 */
#include "jobs_testlib.h"

#include "flexq/objects.h"

static void apply_cluster(struct fq_engine *e, int replicas, bool suspend,
                          int64_t now)
{
    char *y = fq_xasprintf(
        "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: rc\n"
        "  namespace: default\nspec:\n  suspend: %s\n  headGroupSpec:\n"
        "    rayStartParams: {}\n    template:\n      spec:\n"
        "        containers:\n        - name: ray-head\n"
        "          image: rayproject/ray:2.53.0-py311\n"
        "          ports:\n          - containerPort: 8265\n"
        "            name: dashboard\n"
        "  workerGroupSpecs:\n  - groupName: tpu-group\n"
        "    replicas: %d\n    minReplicas: 1\n    maxReplicas: 2\n"
        "    numOfHosts: 4\n    rayStartParams: {}\n    template:\n"
        "      spec:\n        containers:\n        - name: ray-worker\n"
        "          image: rayproject/ray:2.53.0-py311\n"
        "          resources:\n            limits:\n"
        "              google.com/tpu: \"4\"\n",
        suspend ? "true" : "false", replicas);
    tl_apply(e, y, now);
    free(y);
    fq_engine_run(e, now);
}

static const struct fq_value *pod(struct fq_engine *e, const char *name)
{
    return tl_get(e, FQ_KIND_POD, "default", name);
}

static const char *label(const struct fq_value *p, const char *key)
{
    return fq_value_as_str(
        fq_map_get(fq_value_path(p, "metadata.labels"), key));
}

static void test_head_and_slice(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_cluster(e, 1, false, T0);
    const char *p[16];
    size_t n = tl_pods(e, "default", "RayCluster", "rc", p, 16);
    assert_int_equal(n, 5);
    int heads = 0, ranks_seen = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *v = pod(e, p[i]);
        assert_string_equal(fq_value_path_str(v, "spec.restartPolicy", ""),
                            "Never");
        if (strcmp(label(v, "ray.io/node-type"), "head") == 0) {
            heads++;
            assert_true(strncmp(p[i], "rc-head-", 8) == 0);
            /* No command: the runner's Ray node stand-in runs. */
            assert_null(fq_value_path(
                fq_seq_at(fq_value_path(v, "spec.containers"), 0), "command"));
            continue;
        }
        assert_true(strncmp(p[i], "rc-tpu-group-worker-", 20) == 0);
        const char *host = label(v, "flexq.dev/host-index");
        assert_string_equal(tl_env(v, "TPU_WORKER_ID"), host);
        assert_string_equal(tl_env(v, "RANK"), host);
        assert_string_equal(tl_env(v, "WORLD_SIZE"), "4");
        assert_string_equal(tl_env(v, "LOCAL_RANK"), "0");
        assert_string_equal(tl_env(v, "TPU_NAME"), "tpu-group-0");
        assert_string_equal(tl_env(v, "TPU_WORKER_HOSTNAMES"),
                            "127.0.0.1,127.0.0.1,127.0.0.1,127.0.0.1");
        assert_string_equal(tl_env(v, "JAX_COORDINATOR_ADDRESS"),
                            "127.0.0.1:29500");
        assert_string_equal(tl_env(v, "MASTER_PORT"), "29501");
        assert_string_equal(
            fq_value_as_str(fq_map_get(fq_value_path(v, "metadata.annotations"),
                                       "flexq.dev/gang-size")),
            "4");
        ranks_seen |= 1 << atoi(host);
    }
    assert_int_equal(heads, 1);
    assert_int_equal(ranks_seen, 0xf);
    const struct fq_value *rc = tl_get(e, FQ_KIND_RAYCLUSTER, "default", "rc");
    assert_int_equal(fq_value_path_int(rc, "status.desiredWorkerReplicas", -1),
                     4);
    assert_string_equal(fq_value_path_str(rc, "status.state", ""), "");
    assert_string_equal(fq_value_path_str(rc, "status.head.serviceName", ""),
                        "rc-head-svc");
    assert_string_equal(fq_value_path_str(rc, "status.endpoints.dashboard", ""),
                        "8265");

    /* All pods ready: the cluster is ready. */
    char *names[16];
    for (size_t i = 0; i < n; i++)
        names[i] = fq_xstrdup(p[i]);
    for (size_t i = 0; i < n; i++) {
        tl_report(e, "default", names[i], "Running", true, 0, NULL, T0 + 1000);
        fq_engine_run(e, T0 + 1000);
        rc = tl_get(e, FQ_KIND_RAYCLUSTER, "default", "rc");
        assert_string_equal(fq_value_path_str(rc, "status.state", ""),
                            i + 1 == n ? "ready" : "");
        free(names[i]);
    }
    assert_string_equal(tl_cond(rc, "RayClusterProvisioned", "reason"),
                        "AllPodRunningAndReadyFirstTime");
    assert_int_equal(fq_value_path_int(rc, "status.readyWorkerReplicas", -1),
                     4);
    fq_engine_free(e);
}

static size_t count_replica(struct fq_engine *e, const char *replica)
{
    const char *p[32];
    size_t n = tl_pods(e, "default", "RayCluster", "rc", p, 32), m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *r = label(pod(e, p[i]), "flexq.dev/replica-index");
        m += r && strcmp(r, replica) == 0;
    }
    return m;
}

static void test_elastic_scale(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_cluster(e, 1, false, T0);
    assert_int_equal(count_replica(e, "0"), 4);
    apply_cluster(e, 2, false, T0 + 1000);
    assert_int_equal(count_replica(e, "0"), 4);
    assert_int_equal(count_replica(e, "1"), 4);
    const struct fq_value *rc = tl_get(e, FQ_KIND_RAYCLUSTER, "default", "rc");
    assert_int_equal(fq_value_path_int(rc, "status.desiredWorkerReplicas", -1),
                     8);
    /* Above maxReplicas: clamped to 2 slices. */
    apply_cluster(e, 5, false, T0 + 2000);
    assert_int_equal(count_replica(e, "2"), 0);
    /* Scale down: the second slice goes as a whole. */
    apply_cluster(e, 1, false, T0 + 3000);
    assert_int_equal(count_replica(e, "0"), 4);
    assert_int_equal(count_replica(e, "1"), 0);
    fq_engine_free(e);
}

static void test_suspend(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_cluster(e, 1, false, T0);
    const char *p[16];
    assert_int_equal(tl_pods(e, "default", "RayCluster", "rc", p, 16), 5);
    apply_cluster(e, 1, true, T0 + 1000);
    assert_int_equal(tl_pods(e, "default", "RayCluster", "rc", p, 16), 0);
    const struct fq_value *rc = tl_get(e, FQ_KIND_RAYCLUSTER, "default", "rc");
    assert_string_equal(fq_value_path_str(rc, "status.state", ""), "suspended");
    apply_cluster(e, 1, false, T0 + 2000);
    assert_int_equal(tl_pods(e, "default", "RayCluster", "rc", p, 16), 5);
    fq_engine_free(e);
}

/* The port names of a Service, in order, joined by commas. */
static void port_names(const struct fq_value *svc, char *buf, size_t n)
{
    buf[0] = '\0';
    const struct fq_value *ps = fq_value_path(svc, "spec.ports");
    for (size_t i = 0; i < fq_value_len(ps); i++) {
        const struct fq_value *p = fq_seq_at(ps, i);
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s=%lld", i ? "," : "",
                 fq_value_path_str(p, "name", "?"),
                 (long long)fq_value_path_int(p, "port", 0));
    }
}

static void test_head_service(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_cluster(e, 1, true, T0); /* made also while suspended */
    const struct fq_value *svc =
        tl_get(e, FQ_KIND_SERVICE, "default", "rc-head-svc");
    assert_non_null(svc);
    char buf[256];
    port_names(svc, buf, sizeof(buf));
    /* the head's declared port, then metrics, sorted by name */
    assert_string_equal(buf, "dashboard=8265,metrics=8080");
    assert_string_equal(fq_value_path_str(svc, "spec.type", ""), "ClusterIP");
    assert_string_equal(fq_value_path_str(svc, "spec.clusterIP", ""),
                        "10.96.0.10");
    assert_int_equal(
        fq_value_path_int(fq_seq_at(fq_value_path(svc, "spec.ports"), 0),
                          "targetPort", 0),
        8265);
    assert_true(fq_pods_owned_by(svc, "RayCluster", "rc", NULL));
    /* The selector matches the head pod's labels, and only the head. */
    apply_cluster(e, 1, false, T0 + 1000);
    const struct fq_value *sel = fq_value_path(
        svc = tl_get(e, FQ_KIND_SERVICE, "default", "rc-head-svc"),
        "spec.selector");
    assert_true(fq_value_len(sel) >= 3);
    const char *p[16];
    size_t n = tl_pods(e, "default", "RayCluster", "rc", p, 16);
    assert_int_equal(n, 5);
    int matched = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *v = pod(e, p[i]);
        bool all = true;
        for (size_t k = 0; k < fq_value_len(sel); k++) {
            const char *key = sel->u.map.items[k].key;
            const char *want = fq_value_as_str(sel->u.map.items[k].val);
            const char *have = label(v, key);
            all = all && have && !strcmp(have, want);
        }
        if (all) {
            matched++;
            assert_string_equal(label(v, "ray.io/node-type"), "head");
        }
    }
    assert_int_equal(matched, 1);
    /* Deleted with its owner. */
    assert_int_equal(fq_engine_delete(e, FQ_KIND_RAYCLUSTER, "default", "rc",
                                      T0 + 2000, NULL),
                     0);
    fq_engine_run(e, T0 + 2000);
    assert_null(tl_get(e, FQ_KIND_SERVICE, "default", "rc-head-svc"));
    fq_engine_free(e);
}

static int validate(const char *yaml, const char *words)
{
    struct fq_value *v = tl_parse(yaml);
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    int rc = fq_object_validate(v, NULL, &errs);
    if (words) {
        bool found = false;
        for (size_t i = 0; i < errs.n; i++)
            found = found || strstr(errs.items[i].msg, words);
        if (!found)
            fail_msg("no error saying \"%s\" (%zu errors, first: %s)", words,
                     errs.n, errs.n ? errs.items[0].msg : "-");
    }
    size_t n = errs.n;
    fq_errlist_release(&errs);
    fq_value_free(v);
    return rc < 0 ? rc : (int)n;
}

#define SVC(spec)                                          \
 "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n" \
 "  namespace: default\nspec:\n" spec

static void test_service_rules(void **state)
{
    (void)state;
    assert_int_equal(validate(SVC("  selector: {app: web}\n  ports:\n"
                                  "  - {name: http, port: 80, targetPort: "
                                  "http-alt}\n  - {name: tls, port: 443, "
                                  "protocol: TCP}\n"),
                              NULL),
                     0);
    assert_true(validate(SVC("  ports:\n  - {port: 80}\n  - {port: 81}\n"),
                         "more than one port") != 0);
    assert_true(validate(SVC("  ports:\n  - {port: 70000}\n"), "") != 0);
    assert_true(
        validate(SVC("  type: Magic\n  ports:\n  - {port: 80}\n"), "") != 0);
    assert_true(validate(SVC("  ports:\n  - {name: a, port: 80}\n"
                             "  - {name: a, port: 81}\n"),
                         "duplicate port name") != 0);
    assert_true(validate(SVC("  ports:\n  - {port: 80, nodePort: 30080}\n"),
                         "may not be used") != 0);
    assert_true(
        validate(SVC("  ports:\n  - {port: 80, protocol: ICMP}\n"), "") != 0);
    assert_true(validate(SVC("  clusterIP: 10.1.2\n  ports:\n"
                             "  - {port: 80}\n"),
                         "IPv4") != 0);
    assert_true(
        validate(SVC("  selector: {app: web}\n"), "at least one port") != 0);
    /* headless and ExternalName services need no port */
    assert_int_equal(validate(SVC("  clusterIP: None\n"), NULL), 0);
    assert_int_equal(
        validate(SVC("  type: ExternalName\n  externalName: db.example.com\n"),
                 NULL),
        0);
    assert_true(validate("apiVersion: v1\nkind: Service\nmetadata:\n"
                         "  name: 9web\nspec:\n  ports:\n  - {port: 80}\n",
                         "") != 0);
}

/* Defaults: distinct cluster IPs, kept across an update; targetPort. */
static void test_service_defaults(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    tl_apply(e, SVC("  ports:\n  - {port: 80}\n"), T0);
    tl_apply(e,
             "apiVersion: v1\nkind: Service\nmetadata:\n  name: other\n"
             "  namespace: default\nspec:\n  ports:\n  - {port: 81}\n",
             T0);
    const struct fq_value *a = tl_get(e, FQ_KIND_SERVICE, "default", "web");
    const struct fq_value *b = tl_get(e, FQ_KIND_SERVICE, "default", "other");
    assert_string_equal(fq_value_path_str(a, "spec.clusterIP", ""),
                        "10.96.0.10");
    assert_string_equal(fq_value_path_str(b, "spec.clusterIP", ""),
                        "10.96.0.11");
    const struct fq_value *p = fq_seq_at(fq_value_path(a, "spec.ports"), 0);
    assert_string_equal(fq_value_path_str(p, "protocol", ""), "TCP");
    assert_int_equal(fq_value_path_int(p, "targetPort", 0), 80);
    assert_string_equal(fq_value_path_str(a, "spec.sessionAffinity", ""),
                        "None");
    tl_apply(e, SVC("  ports:\n  - {port: 8080}\n"), T0 + 1000);
    a = tl_get(e, FQ_KIND_SERVICE, "default", "web");
    assert_string_equal(fq_value_path_str(a, "spec.clusterIP", ""),
                        "10.96.0.10");
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_service),
        cmocka_unit_test(test_service_rules),
        cmocka_unit_test(test_service_defaults),
        cmocka_unit_test(test_head_and_slice),
        cmocka_unit_test(test_elastic_scale),
        cmocka_unit_test(test_suspend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
