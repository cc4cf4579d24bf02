/*
 * test_pods.c - Pod plumbing (pods.c): the runner's reports, ending a pod
 * from the control plane, templates and owner references, uids, the
 * rendezvous port allocation, the work queue's timers, and the garbage
 * collector's cascade.
 */
#include "jobs_testlib.h"

static void bare_pod(struct fq_engine *e, const char *name, const char *policy)
{
    char *y = fq_xasprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n"
                           "  namespace: default\nspec:\n  restartPolicy: %s\n"
                           "  containers:\n  - name: main\n    image: x\n"
                           "status:\n  phase: Pending\n",
                           name, policy);
    tl_store(e, y, T0);
    free(y);
}

static const struct fq_value *pod(struct fq_engine *e, const char *name)
{
    return tl_get(e, FQ_KIND_POD, "default", name);
}

static const struct fq_value *cstatus(struct fq_engine *e, const char *name)
{
    return fq_seq_at(fq_value_path(pod(e, name), "status.containerStatuses"),
                     0);
}

static void test_report_lifecycle(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    bare_pod(e, "p", "Never");
    struct fq_pod_report run = {"Running", true, 0, NULL, NULL};
    assert_int_equal(fq_pods_report(e, "default", "p", &run, T0 + 1000, NULL),
                     0);
    assert_string_equal(fq_pods_phase(pod(e, "p")), "Running");
    assert_true(fq_pods_ready(pod(e, "p")));
    assert_string_equal(tl_cond(pod(e, "p"), "ContainersReady", "status"),
                        "True");
    assert_string_equal(fq_value_path_str(pod(e, "p"), "status.startTime", ""),
                        "2025-11-29T15:44:01Z");
    assert_string_equal(
        fq_value_path_str(cstatus(e, "p"), "state.running.startedAt", ""),
        "2025-11-29T15:44:01Z");

    struct fq_pod_report oom = {"Failed", false, 137, "OOMKilled", "limit 1Gi"};
    assert_int_equal(fq_pods_report(e, "default", "p", &oom, T0 + 5000, NULL),
                     0);
    const struct fq_value *t =
        fq_value_path(cstatus(e, "p"), "state.terminated");
    assert_string_equal(fq_pods_phase(pod(e, "p")), "Failed");
    assert_int_equal(fq_value_path_int(t, "exitCode", 0), 137);
    assert_string_equal(fq_value_path_str(t, "reason", ""), "OOMKilled");
    assert_string_equal(fq_value_path_str(t, "startedAt", ""),
                        "2025-11-29T15:44:01Z");
    assert_non_null(strstr(fq_value_path_str(pod(e, "p"), "status.message", ""),
                           "OOMKilled"));
    assert_false(fq_pods_ready(pod(e, "p")));

    /* Terminal is final: a late report changes nothing. */
    uint64_t rev = fq_objstore_revision(fq_engine_store(e));
    struct fq_pod_report ok = {"Succeeded", false, 0, NULL, NULL};
    assert_int_equal(fq_pods_report(e, "default", "p", &ok, T0 + 6000, NULL),
                     0);
    assert_int_equal(fq_objstore_revision(fq_engine_store(e)), rev);
    assert_string_equal(fq_pods_phase(pod(e, "p")), "Failed");

    struct fq_err err;
    struct fq_pod_report bad = {"Sleeping", false, 0, NULL, NULL};
    bare_pod(e, "q", "Never");
    assert_int_equal(fq_pods_report(e, "default", "q", &bad, T0, &err),
                     FQ_EINVAL);
    assert_int_equal(fq_pods_report(e, "default", "nope", &ok, T0, &err),
                     FQ_ENOTFOUND);
    fq_engine_free(e);
}

static void test_restart_policies(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    bare_pod(e, "always", "Always");
    bare_pod(e, "onf", "OnFailure");
    struct fq_pod_report ok = {"Succeeded", false, 0, NULL, NULL};
    struct fq_pod_report fail = {"Failed", false, 2, NULL, NULL};
    /* Always restarts even a success; OnFailure keeps a success. */
    assert_int_equal(fq_pods_report(e, "default", "always", &ok, T0, NULL), 0);
    assert_string_equal(fq_pods_phase(pod(e, "always")), "Running");
    assert_int_equal(fq_pods_restarts(pod(e, "always")), 1);
    assert_int_equal(fq_pods_report(e, "default", "onf", &fail, T0, NULL), 0);
    assert_int_equal(fq_pods_report(e, "default", "onf", &fail, T0, NULL), 0);
    assert_string_equal(fq_pods_phase(pod(e, "onf")), "Running");
    assert_int_equal(fq_pods_restarts(pod(e, "onf")), 2);
    assert_string_equal(
        fq_value_path_str(cstatus(e, "onf"), "lastState.terminated.reason", ""),
        "Error");
    assert_int_equal(fq_pods_report(e, "default", "onf", &ok, T0, NULL), 0);
    assert_string_equal(fq_pods_phase(pod(e, "onf")), "Succeeded");
    fq_engine_free(e);
}

static void test_kill(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    bare_pod(e, "k", "Always");
    fq_pods_kill(e, "default", "k", "DeadlineExceeded", "too long", T0);
    assert_string_equal(fq_pods_phase(pod(e, "k")), "Failed");
    assert_int_equal(
        fq_value_path_int(cstatus(e, "k"), "state.terminated.exitCode", 0),
        137);
    assert_string_equal(fq_value_path_str(pod(e, "k"), "status.reason", ""),
                        "DeadlineExceeded");
    /* Absent or already terminal: nothing happens. */
    fq_pods_kill(e, "default", "none", "X", NULL, T0);
    uint64_t rev = fq_objstore_revision(fq_engine_store(e));
    fq_pods_kill(e, "default", "k", "Other", NULL, T0);
    assert_int_equal(fq_objstore_revision(fq_engine_store(e)), rev);
    fq_engine_free(e);
}

static void test_template_owner_uid(void **state)
{
    (void)state;
    struct fq_value *owner = tl_parse("apiVersion: batch/v1\nkind: Job\n"
                                      "metadata:\n  name: j\n  uid: u-1\n");
    struct fq_value *tmpl =
        tl_parse("metadata:\n  labels:\n    app: a\nspec:\n  containers:\n"
                 "  - name: c\n    env:\n    - name: A\n      value: '1'\n");
    struct fq_value *p = fq_pods_from_template(tmpl, "ns1", "j-abcde", owner);
    assert_string_equal(fq_value_path_str(p, "metadata.namespace", ""), "ns1");
    assert_string_equal(fq_value_path_str(p, "metadata.labels.app", ""), "a");
    assert_string_equal(fq_value_path_str(p, "status.phase", ""), "Pending");
    assert_true(fq_pods_owned_by(p, "Job", "j", "u-1"));
    assert_false(fq_pods_owned_by(p, "Job", "j", "u-2"));
    assert_string_equal(fq_pods_owner_name(p, "Job"), "j");
    /* Env: replaced in place, added at the end. */
    struct fq_value *spec = fq_map_get(p, "spec");
    fq_pods_set_env(spec, "A", "2");
    fq_pods_set_env(spec, "B", "3");
    assert_string_equal(tl_env(p, "A"), "2");
    assert_string_equal(tl_env(p, "B"), "3");
    assert_int_equal(
        fq_value_len(fq_value_path(
            fq_seq_at(fq_value_path(p, "spec.containers"), 0), "env")),
        2);
    fq_value_free(p);
    fq_value_free(tmpl);
    fq_value_free(owner);

    struct fq_engine *e = tl_engine();
    char a[40], b[40];
    fq_pods_uid(e, a);
    fq_pods_uid(e, b);
    assert_int_equal(strlen(a), 36);
    assert_int_equal(a[14], '4');
    assert_true(strchr("89ab", a[19]) != NULL);
    assert_string_not_equal(a, b);
    fq_engine_free(e);
}

static void indexed_job(struct fq_engine *e, const char *name, int64_t now)
{
    char *y = fq_xasprintf(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n"
        "  namespace: default\nspec:\n  completions: 2\n  parallelism: 2\n"
        "  completionMode: Indexed\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n"
        "      - name: m\n        image: x\n        command: [\"true\"]\n",
        name);
    tl_apply(e, y, now);
    free(y);
    fq_engine_run(e, now);
}

static const char *job_port(struct fq_engine *e, const char *name)
{
    return fq_value_as_str(
        fq_map_get(fq_value_path(tl_get(e, FQ_KIND_JOB, "default", name),
                                 "metadata.annotations"),
                   "flexq.dev/rendezvous-port"));
}

static void test_port_allocation(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    indexed_job(e, "a", T0);
    indexed_job(e, "b", T0);
    assert_string_equal(job_port(e, "a"), "29500");
    assert_string_equal(job_port(e, "b"), "29502");
    /* a finishes: its pair is free for the next gang. */
    const char *p[4];
    size_t n = tl_pods(e, "default", "Job", "a", p, 4);
    char *names[4];
    for (size_t i = 0; i < n; i++)
        names[i] = fq_xstrdup(p[i]);
    for (size_t i = 0; i < n; i++) {
        tl_report(e, "default", names[i], "Succeeded", false, 0, NULL, T0 + 1);
        free(names[i]);
    }
    fq_engine_run(e, T0 + 1);
    assert_string_equal(
        tl_cond(tl_get(e, FQ_KIND_JOB, "default", "a"), "Complete", "status"),
        "True");
    indexed_job(e, "c", T0 + 2);
    assert_string_equal(job_port(e, "c"), "29500");
    fq_engine_free(e);
}

static void test_gc_cascade(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    tl_apply(e,
             "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  name: r\n"
             "  namespace: default\nspec:\n  shutdownAfterJobFinishes: true\n"
             "  entrypoint: python x.py\n  rayClusterSpec:\n"
             "    headGroupSpec:\n      rayStartParams: {}\n"
             "      template:\n        spec:\n          containers:\n"
             "          - name: h\n            image: x\n"
             "    workerGroupSpecs:\n    - groupName: g\n      replicas: 1\n"
             "      rayStartParams: {}\n      template:\n        spec:\n"
             "          containers:\n          - name: w\n"
             "            image: x\n",
             T0);
    fq_engine_run(e, T0);
    struct fq_objstore *s = fq_engine_store(e);
    assert_int_equal(fq_objstore_count(s, FQ_KIND_RAYCLUSTER), 1);
    assert_int_equal(fq_objstore_count(s, FQ_KIND_POD), 2);
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_RAYJOB, "default", "r", T0 + 1, NULL), 0);
    fq_engine_run(e, T0 + 1);
    assert_int_equal(fq_objstore_count(s, FQ_KIND_RAYCLUSTER), 0);
    assert_int_equal(fq_objstore_count(s, FQ_KIND_POD), 0);
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_lifecycle),
        cmocka_unit_test(test_restart_policies),
        cmocka_unit_test(test_kill),
        cmocka_unit_test(test_template_owner_uid),
        cmocka_unit_test(test_port_allocation),
        cmocka_unit_test(test_gc_cascade),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
