/*
 * test_rayjob.c - the RayJob controller (rayjob.c), K8sJobMode.
 *
 * The tutorial's RayJob (without Kueue: no queue label) from New to
 * Complete: cluster, submitter Job and its env, job and deployment status,
 * shutdown of the cluster; a failing worker (AppFailed, the submitter
 * stopped); backoffLimit retries with a new cluster; activeDeadlineSeconds;
 * suspend before and while running; a stopped Ray job (STOPPED, Complete);
 * a submitter that fails before its driver ran (SubmissionFailed).
 */
#include "jobs_testlib.h"

static char *rayjob_yaml(const char *extra_spec)
{
    return fq_xasprintf(
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n"
        "  name: rayjob-tpu-v6e-dws-1\n  namespace: default\nspec:\n%s%s"
        "  entrypoint: python /app/train.py\n"
        "  rayClusterSpec:\n    headGroupSpec:\n      rayStartParams: {}\n"
        "      template:\n        spec:\n          nodeSelector:\n"
        "            cloud.google.com/gke-nodepool: default-pool\n"
        "          containers:\n          - name: ray-head\n"
        "            image: rayproject/ray:2.53.0-py311\n"
        "            volumeMounts:\n            - mountPath: /app\n"
        "              name: train-script-volume\n"
        "          volumes:\n          - name: train-script-volume\n"
        "            configMap:\n              name: jax-train-script\n"
        "    workerGroupSpecs:\n    - replicas: 1\n      minReplicas: 1\n"
        "      maxReplicas: 2\n      numOfHosts: 4\n"
        "      groupName: tpu-group\n      rayStartParams: {}\n"
        "      template:\n        spec:\n          containers:\n"
        "          - name: ray-worker\n"
        "            image: rayproject/ray:2.53.0-py311\n",
        extra_spec ? extra_spec : "",
        extra_spec && strstr(extra_spec, "shutdownAfterJobFinishes") ?
            "" :
            "  shutdownAfterJobFinishes: true\n");
}

#define RJ "rayjob-tpu-v6e-dws-1"

static void apply_rj(struct fq_engine *e, const char *extra, int64_t now)
{
    char *y = rayjob_yaml(extra);
    tl_apply(e, y, now);
    free(y);
    fq_engine_run(e, now);
}

static const struct fq_value *rj(struct fq_engine *e)
{
    return tl_get(e, FQ_KIND_RAYJOB, "default", RJ);
}

static const char *st(struct fq_engine *e, const char *field)
{
    return fq_value_path_str(rj(e), field, "");
}

/* Reports every live pod owned by kind/name as running and ready. */
static void all_ready(struct fq_engine *e, const char *kind, const char *name,
                      int64_t now)
{
    const char *p[32];
    size_t n = tl_pods(e, "default", kind, name, p, 32);
    char *names[32];
    for (size_t i = 0; i < n; i++)
        names[i] = fq_xstrdup(p[i]);
    for (size_t i = 0; i < n; i++) {
        tl_report(e, "default", names[i], "Running", true, 0, NULL, now);
        free(names[i]);
    }
    fq_engine_run(e, now);
}

/* The live submitter pod's name (owned) or NULL. */
static char *submitter_pod(struct fq_engine *e)
{
    const char *p[8];
    size_t n = tl_pods(e, "default", "Job", RJ, p, 8);
    for (size_t i = 0; i < n; i++)
        if (!fq_pods_terminal(tl_get(e, FQ_KIND_POD, "default", p[i])))
            return fq_xstrdup(p[i]);
    return NULL;
}

/* Brings a fresh RayJob to Running with its submitter pod running. */
static char *to_running(struct fq_engine *e, int64_t now)
{
    char *cluster = fq_xstrdup(st(e, "status.rayClusterName"));
    all_ready(e, "RayCluster", cluster, now);
    free(cluster);
    char *sub = submitter_pod(e);
    assert_non_null(sub);
    tl_report(e, "default", sub, "Running", true, 0, NULL, now);
    fq_engine_run(e, now);
    assert_string_equal(st(e, "status.jobStatus"), "RUNNING");
    return sub;
}

static void test_rayjob_succeeds(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, NULL, T0);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Initializing");
    const char *id = st(e, "status.jobId");
    assert_true(strncmp(id, RJ "-", strlen(RJ) + 1) == 0);
    assert_int_equal(strlen(id), strlen(RJ) + 6);
    char *cluster = fq_xstrdup(st(e, "status.rayClusterName"));
    assert_true(strncmp(cluster, RJ "-", strlen(RJ) + 1) == 0);
    assert_string_equal(st(e, "status.startTime"), "2025-11-29T15:44:00Z");
    const struct fq_value *rc =
        tl_get(e, FQ_KIND_RAYCLUSTER, "default", cluster);
    assert_non_null(rc);
    assert_true(fq_pods_owned_by(rc, "RayJob", RJ, NULL));

    /* Workers run the entrypoint, split into argv. */
    const char *p[16];
    size_t n = tl_pods(e, "default", "RayCluster", cluster, p, 16);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *v = tl_get(e, FQ_KIND_POD, "default", p[i]);
        if (strstr(p[i], "-head-"))
            continue;
        const struct fq_value *cmd = fq_value_path(
            fq_seq_at(fq_value_path(v, "spec.containers"), 0), "command");
        assert_int_equal(fq_value_len(cmd), 2);
        assert_string_equal(fq_value_as_str(fq_seq_at(cmd, 0)), "python");
        assert_string_equal(fq_value_as_str(fq_seq_at(cmd, 1)),
                            "/app/train.py");
        assert_string_equal(tl_env(v, "FLEXQ_RAY_ROLE"), "worker");
    }
    /* No submitter before the cluster is ready. */
    assert_null(tl_get(e, FQ_KIND_JOB, "default", RJ));
    all_ready(e, "RayCluster", cluster, T0 + 1000);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Running");
    assert_string_equal(st(e, "status.jobStatus"), "PENDING");
    assert_string_equal(st(e, "status.rayClusterStatus.state"), "ready");
    const struct fq_value *job = tl_get(e, FQ_KIND_JOB, "default", RJ);
    assert_non_null(job);
    assert_int_equal(fq_value_path_int(job, "spec.backoffLimit", -1), 0);

    char *sub = submitter_pod(e);
    assert_non_null(sub);
    const struct fq_value *sp = tl_get(e, FQ_KIND_POD, "default", sub);
    const struct fq_value *c0 =
        fq_seq_at(fq_value_path(sp, "spec.containers"), 0);
    assert_string_equal(fq_value_path_str(c0, "name", ""), "ray-job-submitter");
    assert_string_equal(
        fq_value_as_str(fq_seq_at(fq_map_get(c0, "command"), 2)),
        "flexq.submit");
    assert_string_equal(tl_env(sp, "RAY_JOB_SUBMISSION_ID"),
                        st(e, "status.jobId"));
    assert_string_equal(tl_env(sp, "FLEXQ_ENTRYPOINT"), "python /app/train.py");
    /* Four workers in RANK order. */
    const char *wp = tl_env(sp, "FLEXQ_WORKER_PODS");
    assert_non_null(wp);
    char *list = fq_xstrdup(wp);
    int rank = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","), rank++) {
        char want[16];
        snprintf(want, sizeof(want), "%d", rank);
        assert_string_equal(
            tl_env(tl_get(e, FQ_KIND_POD, "default", tok), "RANK"), want);
    }
    free(list);
    assert_int_equal(rank, 4);
    /* The driver sees the head's ConfigMap volume where the head would. */
    assert_string_equal(
        fq_value_path_str(fq_seq_at(fq_map_get(c0, "volumeMounts"), 0),
                          "mountPath", ""),
        "/app");
    assert_string_equal(
        fq_value_path_str(fq_seq_at(fq_value_path(sp, "spec.volumes"), 0),
                          "configMap.name", ""),
        "jax-train-script");
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(sp, "spec.nodeSelector"),
                                   "cloud.google.com/gke-nodepool")),
        "default-pool");

    tl_report(e, "default", sub, "Running", true, 0, NULL, T0 + 2000);
    fq_engine_run(e, T0 + 2000);
    assert_string_equal(st(e, "status.jobStatus"), "RUNNING");
    tl_report(e, "default", sub, "Succeeded", false, 0, NULL, T0 + 30000);
    fq_engine_run(e, T0 + 30000);
    assert_string_equal(st(e, "status.jobStatus"), "SUCCEEDED");
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Complete");
    assert_string_equal(st(e, "status.endTime"), "2025-11-29T15:44:30Z");
    assert_int_equal(fq_value_path_int(rj(e), "status.succeeded", -1), 1);
    /* shutdownAfterJobFinishes, TTL 0: the cluster and its pods are gone,
     * the submitter Job stays for its log. */
    assert_null(tl_get(e, FQ_KIND_RAYCLUSTER, "default", cluster));
    assert_int_equal(tl_pods(e, "default", "RayCluster", cluster, p, 16), 0);
    assert_non_null(tl_get(e, FQ_KIND_JOB, "default", RJ));
    assert_int_equal(tl_pods(e, "default", "Job", RJ, p, 16), 1);
    free(sub);
    free(cluster);
    fq_engine_free(e);
}

static void test_rayjob_worker_fails(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, "  shutdownAfterJobFinishes: false\n", T0);
    char *sub = to_running(e, T0 + 1000);
    char *cluster = fq_xstrdup(st(e, "status.rayClusterName"));
    const char *p[16];
    size_t n = tl_pods(e, "default", "RayCluster", cluster, p, 16);
    char *worker = NULL;
    for (size_t i = 0; i < n && !worker; i++)
        if (strstr(p[i], "-worker-"))
            worker = fq_xstrdup(p[i]);
    tl_report(e, "default", worker, "Failed", false, 137, "OOMKilled",
              T0 + 5000);
    fq_engine_run(e, T0 + 5000);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Failed");
    assert_string_equal(st(e, "status.jobStatus"), "FAILED");
    assert_string_equal(st(e, "status.reason"), "AppFailed");
    assert_non_null(strstr(st(e, "status.message"), worker));
    assert_non_null(strstr(st(e, "status.message"), "OOMKilled"));
    /* The submitter was stopped; its pod stays for the log. */
    const struct fq_value *sp = tl_get(e, FQ_KIND_POD, "default", sub);
    assert_non_null(sp);
    assert_string_equal(fq_pods_phase(sp), "Failed");
    free(worker);
    free(cluster);
    free(sub);
    fq_engine_free(e);
}

static void test_rayjob_backoff_retry(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, "  backoffLimit: 1\n", T0);
    char *first = fq_xstrdup(st(e, "status.rayClusterName"));
    char *sub = to_running(e, T0 + 1000);
    tl_report(e, "default", sub, "Failed", false, 1, "Error", T0 + 2000);
    fq_engine_run(e, T0 + 2000);
    free(sub);
    /* Retried: a new cluster, a new attempt. */
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Initializing");
    assert_int_equal(fq_value_path_int(rj(e), "status.failed", -1), 1);
    assert_string_not_equal(st(e, "status.rayClusterName"), first);
    assert_null(tl_get(e, FQ_KIND_RAYCLUSTER, "default", first));
    sub = to_running(e, T0 + 3000);
    tl_report(e, "default", sub, "Failed", false, 1, "Error", T0 + 4000);
    fq_engine_run(e, T0 + 4000);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Failed");
    assert_int_equal(fq_value_path_int(rj(e), "status.failed", -1), 2);
    assert_non_null(strstr(st(e, "status.message"), "BackoffLimitExceeded"));
    free(sub);
    free(first);
    fq_engine_free(e);
}

static void test_rayjob_deadline(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, "  activeDeadlineSeconds: 60\n", T0);
    char *sub = to_running(e, T0 + 1000);
    assert_int_equal(fq_engine_next_wakeup(e), T0 + 60000);
    fq_engine_run(e, T0 + 60000);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Failed");
    assert_string_equal(st(e, "status.reason"), "DeadlineExceeded");
    assert_string_equal(fq_pods_phase(tl_get(e, FQ_KIND_POD, "default", sub)),
                        "Failed");
    free(sub);
    fq_engine_free(e);
}

static void test_rayjob_pre_running_deadline(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, "  preRunningDeadlineSeconds: 30\n  backoffLimit: 2\n", T0);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Initializing");
    char *cluster = fq_xstrdup(st(e, "status.rayClusterName"));
    /* The cluster never becomes ready (say, a worker stays Pending). */
    assert_int_equal(fq_engine_next_wakeup(e), T0 + 30000);
    fq_engine_run(e, T0 + 29999);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Initializing");
    fq_engine_run(e, T0 + 30000);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Failed");
    assert_string_equal(st(e, "status.reason"), "PreRunningDeadlineExceeded");
    /* A deadline is not retried, whatever backoffLimit says. */
    assert_int_equal(fq_value_path_int(rj(e), "status.failed", -1), 1);
    assert_null(tl_get(e, FQ_KIND_RAYCLUSTER, "default", cluster));
    free(cluster);
    fq_engine_free(e);
}

static void test_rayjob_pre_running_deadline_met(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, "  preRunningDeadlineSeconds: 30\n", T0);
    char *sub = to_running(e, T0 + 1000);
    fq_engine_run(e, T0 + 60000); /* Running: the deadline no longer applies */
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Running");
    free(sub);
    fq_engine_free(e);
}

static void test_rayjob_suspend(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, "  suspend: true\n", T0);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Suspended");
    assert_int_equal(fq_objstore_count(fq_engine_store(e), FQ_KIND_RAYCLUSTER),
                     0);
    apply_rj(e, "  suspend: false\n", T0 + 1000);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Initializing");
    char *sub = to_running(e, T0 + 2000);
    char *cluster = fq_xstrdup(st(e, "status.rayClusterName"));
    /* Kueue takes the admission away: everything goes, status resets. */
    apply_rj(e, "  suspend: true\n", T0 + 3000);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Suspended");
    assert_string_equal(st(e, "status.jobStatus"), "");
    assert_null(fq_value_path(rj(e), "status.jobId"));
    assert_null(tl_get(e, FQ_KIND_RAYCLUSTER, "default", cluster));
    assert_null(tl_get(e, FQ_KIND_JOB, "default", RJ));
    assert_null(tl_get(e, FQ_KIND_POD, "default", sub));
    const char *p[16];
    assert_int_equal(tl_pods(e, "default", "RayCluster", cluster, p, 16), 0);
    free(cluster);
    free(sub);
    fq_engine_free(e);
}

static void test_rayjob_stop(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, NULL, T0);
    bool stopped = true;
    /* Not submitted yet: nothing to stop, as Ray answers. */
    assert_int_equal(fq_rayjob_stop(e, "default", RJ, &stopped, NULL), 0);
    assert_false(stopped);
    assert_int_equal(fq_rayjob_stop(e, "default", "nope", &stopped, NULL),
                     FQ_ENOTFOUND);
    char *sub = to_running(e, T0 + 1000);
    char *cluster = fq_xstrdup(st(e, "status.rayClusterName"));
    assert_int_equal(fq_rayjob_stop(e, "default", RJ, &stopped, NULL), 0);
    assert_true(stopped);
    fq_engine_run(e, T0 + 5000);
    /* KubeRay: a terminal Ray job and a finished submitter -> Complete,
     * with the dashboard's STOPPED and no failure reason. */
    assert_string_equal(st(e, "status.jobStatus"), "STOPPED");
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Complete");
    assert_string_equal(st(e, "status.message"),
                        "Job was intentionally stopped.");
    assert_null(fq_value_path(rj(e), "status.reason"));
    assert_string_equal(st(e, "status.endTime"), "2025-11-29T15:44:05Z");
    assert_int_equal(fq_value_path_int(rj(e), "status.succeeded", 0), 0);
    /* The driver was stopped; shutdownAfterJobFinishes took the cluster. */
    assert_true(fq_pods_terminal(tl_get(e, FQ_KIND_POD, "default", sub)));
    assert_null(tl_get(e, FQ_KIND_RAYCLUSTER, "default", cluster));
    /* Over: a second stop stops nothing and changes nothing. */
    assert_int_equal(fq_rayjob_stop(e, "default", RJ, &stopped, NULL), 0);
    assert_false(stopped);
    fq_engine_run(e, T0 + 6000);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Complete");
    free(cluster);
    free(sub);
    fq_engine_free(e);
}

static void test_rayjob_submission_failed(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, NULL, T0);
    char *cluster = fq_xstrdup(st(e, "status.rayClusterName"));
    all_ready(e, "RayCluster", cluster, T0 + 1000);
    char *sub = submitter_pod(e);
    assert_non_null(sub);
    assert_string_equal(st(e, "status.jobStatus"), "PENDING");
    /* The driver never ran: its command could not be started. */
    tl_report(e, "default", sub, "Failed", false, 128, "ContainerCannotRun",
              T0 + 2000);
    fq_engine_run(e, T0 + 2000);
    assert_string_equal(st(e, "status.jobDeploymentStatus"), "Failed");
    assert_string_equal(st(e, "status.reason"), "SubmissionFailed");
    assert_string_equal(st(e, "status.jobStatus"), "PENDING");
    assert_true(strncmp(st(e, "status.message"),
                        "Job submission has failed. Reason: "
                        "BackoffLimitExceeded. Message: ",
                        strlen("Job submission has failed. Reason: "
                               "BackoffLimitExceeded. Message: ")) == 0);
    free(sub);
    free(cluster);
    fq_engine_free(e);
}

static size_t live_workers(struct fq_engine *e, const char *cluster)
{
    const char *p[32];
    size_t n = tl_pods(e, "default", "RayCluster", cluster, p, 32), m = 0;
    for (size_t i = 0; i < n; i++)
        m += strstr(p[i], "-worker-") != NULL;
    return m;
}

static void test_rayjob_elastic_scale(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_rj(e, NULL, T0);
    char *cluster = fq_xstrdup(st(e, "status.rayClusterName"));
    assert_int_equal(live_workers(e, cluster), 4);
    /* `flexq scale rayjob ... --replicas 2`: a second 4-host slice. */
    char *y = rayjob_yaml(NULL);
    char *two = fq_xstrdup(y);
    char *at = strstr(two, "replicas: 1\n");
    assert_non_null(at);
    at[10] = '2';
    tl_apply(e, two, T0 + 1000);
    fq_engine_run(e, T0 + 1000);
    assert_int_equal(live_workers(e, cluster), 8);
    const struct fq_value *rc =
        tl_get(e, FQ_KIND_RAYCLUSTER, "default", cluster);
    assert_int_equal(fq_value_path_int(rc, "status.desiredWorkerReplicas", -1),
                     8);
    /* And back down: the second slice goes. */
    tl_apply(e, y, T0 + 2000);
    fq_engine_run(e, T0 + 2000);
    assert_int_equal(live_workers(e, cluster), 4);
    free(two);
    free(y);
    free(cluster);
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rayjob_succeeds),
        cmocka_unit_test(test_rayjob_worker_fails),
        cmocka_unit_test(test_rayjob_backoff_retry),
        cmocka_unit_test(test_rayjob_deadline),
        cmocka_unit_test(test_rayjob_pre_running_deadline),
        cmocka_unit_test(test_rayjob_pre_running_deadline_met),
        cmocka_unit_test(test_rayjob_suspend),
        cmocka_unit_test(test_rayjob_elastic_scale),
        cmocka_unit_test(test_rayjob_stop),
        cmocka_unit_test(test_rayjob_submission_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
