/*
 * test_job.c - the batch/v1 Job controller (job.c).
 *
 * Drives Jobs through the engine with an injected clock and plays the
 * runner: completion, backoffLimit retries, activeDeadlineSeconds, an
 * Indexed Job with its rendezvous env, suspend / resume, OnFailure
 * restarts counted against backoffLimit, and podFailurePolicy (FailJob,
 * Ignore, Count, NotIn, onPodConditions); and the job framework's
 * collection of Workloads whose owning Job is gone.
 */
#include "jobs_testlib.h"

static char *job_yaml(const char *name, const char *extra_spec)
{
    return fq_xasprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n"
                        "  name: %s\n  namespace: default\nspec:\n%s"
                        "  template:\n    spec:\n      restartPolicy: Never\n"
                        "      containers:\n      - name: main\n"
                        "        image: busybox\n"
                        "        command: [\"true\"]\n",
                        name, extra_spec ? extra_spec : "");
}

static void apply_job(struct fq_engine *e, const char *name, const char *extra,
                      int64_t now)
{
    char *y = job_yaml(name, extra);
    tl_apply(e, y, now);
    free(y);
    fq_engine_run(e, now);
}

static const struct fq_value *job(struct fq_engine *e, const char *name)
{
    return tl_get(e, FQ_KIND_JOB, "default", name);
}

static void test_job_completes(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_job(e, "pi", NULL, T0);
    const char *p[4];
    assert_int_equal(tl_pods(e, "default", "Job", "pi", p, 4), 1);
    const struct fq_value *pod = tl_get(e, FQ_KIND_POD, "default", p[0]);
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(pod, "metadata.labels"),
                                   "batch.kubernetes.io/job-name")),
        "pi");
    assert_int_equal(fq_value_path_int(job(e, "pi"), "status.active", -1), 1);
    assert_non_null(fq_value_path(job(e, "pi"), "status.startTime"));

    char *name = fq_xstrdup(p[0]);
    tl_report(e, "default", name, "Running", true, 0, NULL, T0 + 1000);
    fq_engine_run(e, T0 + 1000);
    assert_int_equal(fq_value_path_int(job(e, "pi"), "status.ready", -1), 1);
    tl_report(e, "default", name, "Succeeded", false, 0, NULL, T0 + 2000);
    fq_engine_run(e, T0 + 2000);
    const struct fq_value *j = job(e, "pi");
    assert_string_equal(tl_cond(j, "Complete", "status"), "True");
    assert_string_equal(tl_cond(j, "Complete", "reason"), "CompletionsReached");
    assert_string_equal(tl_cond(j, "SuccessCriteriaMet", "status"), "True");
    assert_int_equal(fq_value_path_int(j, "status.succeeded", -1), 1);
    assert_int_equal(fq_value_path_int(j, "status.active", -1), 0);
    assert_string_equal(fq_value_path_str(j, "status.completionTime", ""),
                        "2025-11-29T15:44:02Z");
    /* No new pod after completion. */
    assert_int_equal(tl_pods(e, "default", "Job", "pi", p, 4), 1);
    free(name);
    fq_engine_free(e);
}

static void test_job_backoff_limit(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_job(e, "flaky", "  backoffLimit: 2\n", T0);
    int64_t now = T0;
    for (int attempt = 0; attempt < 3; attempt++) {
        const char *p[8];
        size_t n = tl_pods(e, "default", "Job", "flaky", p, 8);
        assert_int_equal(n, (size_t)attempt + 1);
        /* The newest live pod fails. */
        char *live = NULL;
        for (size_t i = 0; i < n; i++)
            if (!fq_pods_terminal(tl_get(e, FQ_KIND_POD, "default", p[i])))
                live = fq_xstrdup(p[i]);
        assert_non_null(live);
        now += 1000;
        tl_report(e, "default", live, "Failed", false, 1, "Error", now);
        fq_engine_run(e, now);
        free(live);
        const struct fq_value *j = job(e, "flaky");
        assert_int_equal(fq_value_path_int(j, "status.failed", -1),
                         attempt + 1);
        if (attempt < 2)
            assert_string_equal(tl_cond(j, "Failed", "status"), "");
    }
    const struct fq_value *j = job(e, "flaky");
    assert_string_equal(tl_cond(j, "Failed", "status"), "True");
    assert_string_equal(tl_cond(j, "Failed", "reason"), "BackoffLimitExceeded");
    assert_string_equal(tl_cond(j, "Failed", "message"),
                        "Job has reached the specified backoff limit");
    const char *p[8];
    assert_int_equal(tl_pods(e, "default", "Job", "flaky", p, 8), 3);
    /* Each failure was told on the Job, naming the pod and the reason. */
    const struct fq_object **ev = NULL;
    size_t nev = fq_objstore_list(fq_engine_store(e), FQ_KIND_EVENT, NULL, &ev);
    int told = 0;
    for (size_t i = 0; i < nev; i++) {
        const struct fq_value *v = ev[i]->obj;
        if (!strcmp(fq_value_path_str(v, "reason", ""), "PodFailed") &&
            !strcmp(fq_value_path_str(v, "involvedObject.name", ""), "flaky") &&
            strstr(fq_value_path_str(v, "message", ""), "(Error)"))
            told++;
    }
    free(ev);
    assert_int_equal(told, 3);
    fq_engine_free(e);
}

static void test_job_active_deadline(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_job(e, "slow", "  activeDeadlineSeconds: 10\n", T0);
    const char *p[4];
    assert_int_equal(tl_pods(e, "default", "Job", "slow", p, 4), 1);
    char *name = fq_xstrdup(p[0]);
    tl_report(e, "default", name, "Running", true, 0, NULL, T0 + 500);
    fq_engine_run(e, T0 + 500);
    assert_int_equal(fq_engine_next_wakeup(e), T0 + 10000);
    fq_engine_run(e, T0 + 9999);
    assert_string_equal(tl_cond(job(e, "slow"), "Failed", "status"), "");
    fq_engine_run(e, T0 + 10000);
    const struct fq_value *j = job(e, "slow");
    assert_string_equal(tl_cond(j, "Failed", "reason"), "DeadlineExceeded");
    assert_string_equal(tl_cond(j, "Failed", "message"),
                        "Job was active longer than specified deadline");
    /* The running pod was ended (and keeps its object for the logs). */
    const struct fq_value *pod = tl_get(e, FQ_KIND_POD, "default", name);
    assert_non_null(pod);
    assert_string_equal(fq_pods_phase(pod), "Failed");
    assert_int_equal(fq_value_path_int(job(e, "slow"), "status.active", -1), 0);
    free(name);
    fq_engine_free(e);
}

/* A deadline any developer may write, whose milliseconds overflow an
 * int64: no deadline (it failed the Job at once, or trapped UBSan). */
static void test_job_deadline_beyond_range(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_job(e, "forever", "  activeDeadlineSeconds: 9223372036854775807\n",
              T0);
    const char *p[4];
    assert_int_equal(tl_pods(e, "default", "Job", "forever", p, 4), 1);
    char *name = fq_xstrdup(p[0]);
    tl_report(e, "default", name, "Running", true, 0, NULL, T0 + 500);
    fq_engine_run(e, T0 + 500);
    fq_engine_run(e, T0 + 86400000);
    const struct fq_value *j = job(e, "forever");
    assert_string_equal(tl_cond(j, "Failed", "status"), "");
    assert_int_equal(fq_value_path_int(j, "status.active", -1), 1);
    free(name);
    fq_engine_free(e);
}

static const char *pod_index(struct fq_engine *e, const char *name)
{
    return fq_value_as_str(
        fq_map_get(fq_value_path(tl_get(e, FQ_KIND_POD, "default", name),
                                 "metadata.annotations"),
                   "batch.kubernetes.io/job-completion-index"));
}

static void test_job_indexed(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_job(e, "idx",
              "  completions: 3\n  parallelism: 2\n"
              "  completionMode: Indexed\n",
              T0);
    const char *p[8];
    assert_int_equal(tl_pods(e, "default", "Job", "idx", p, 8), 2);
    char *first = NULL;
    for (int i = 0; i < 2; i++) {
        const struct fq_value *pod = tl_get(e, FQ_KIND_POD, "default", p[i]);
        const char *ix = pod_index(e, p[i]);
        assert_non_null(ix);
        assert_string_equal(tl_env(pod, "JOB_COMPLETION_INDEX"), ix);
        assert_string_equal(tl_env(pod, "RANK"), ix);
        assert_string_equal(tl_env(pod, "WORLD_SIZE"), "3");
        assert_string_equal(tl_env(pod, "MASTER_ADDR"), "127.0.0.1");
        assert_string_equal(tl_env(pod, "MASTER_PORT"), "29501");
        assert_string_equal(tl_env(pod, "JAX_COORDINATOR_ADDRESS"),
                            "127.0.0.1:29500");
        if (strcmp(ix, "0") == 0)
            first = fq_xstrdup(p[i]);
    }
    assert_non_null(first);
    tl_report(e, "default", first, "Succeeded", false, 0, NULL, T0 + 1000);
    fq_engine_run(e, T0 + 1000);
    size_t n = tl_pods(e, "default", "Job", "idx", p, 8);
    assert_int_equal(n, 3);
    bool have2 = false;
    char *rest[8];
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        const char *ix = pod_index(e, p[i]);
        have2 |= strcmp(ix, "2") == 0;
        if (strcmp(ix, "0") != 0)
            rest[nr++] = fq_xstrdup(p[i]);
    }
    assert_true(have2);
    assert_string_equal(
        fq_value_path_str(job(e, "idx"), "status.completedIndexes", ""), "0");
    for (size_t i = 0; i < nr; i++) {
        tl_report(e, "default", rest[i], "Succeeded", false, 0, NULL,
                  T0 + 2000);
        free(rest[i]);
    }
    fq_engine_run(e, T0 + 2000);
    const struct fq_value *j = job(e, "idx");
    assert_string_equal(tl_cond(j, "Complete", "status"), "True");
    assert_string_equal(fq_value_path_str(j, "status.completedIndexes", ""),
                        "0-2");
    assert_int_equal(tl_pods(e, "default", "Job", "idx", p, 8), 3);
    free(first);
    fq_engine_free(e);
}

static void test_job_suspend_resume(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_job(e, "held", "  suspend: true\n", T0);
    const char *p[4];
    assert_int_equal(tl_pods(e, "default", "Job", "held", p, 4), 0);
    assert_string_equal(tl_cond(job(e, "held"), "Suspended", "status"), "True");
    assert_null(fq_value_path(job(e, "held"), "status.startTime"));
    apply_job(e, "held", "  suspend: false\n", T0 + 5000);
    assert_int_equal(tl_pods(e, "default", "Job", "held", p, 4), 1);
    const struct fq_value *j = job(e, "held");
    assert_string_equal(tl_cond(j, "Suspended", "status"), "False");
    assert_string_equal(tl_cond(j, "Suspended", "reason"), "JobResumed");
    assert_string_equal(fq_value_path_str(j, "status.startTime", ""),
                        "2025-11-29T15:44:05Z");
    /* Suspending again deletes the active pod. */
    apply_job(e, "held", "  suspend: true\n", T0 + 6000);
    assert_int_equal(tl_pods(e, "default", "Job", "held", p, 4), 0);
    assert_int_equal(fq_value_path_int(job(e, "held"), "status.active", -1), 0);
    fq_engine_free(e);
}

static void test_job_onfailure_restarts(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    char *y = fq_xasprintf(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: rs\n"
        "  namespace: default\nspec:\n  backoffLimit: 1\n  template:\n"
        "    spec:\n      restartPolicy: OnFailure\n      containers:\n"
        "      - name: main\n        image: busybox\n"
        "        command: [\"false\"]\n");
    tl_apply(e, y, T0);
    free(y);
    fq_engine_run(e, T0);
    const char *p[4];
    assert_int_equal(tl_pods(e, "default", "Job", "rs", p, 4), 1);
    char *name = fq_xstrdup(p[0]);
    struct fq_pod_report r = {"Failed", false, 1, "Error", NULL};
    assert_int_equal(fq_pods_report(e, "default", name, &r, T0 + 1000, NULL),
                     0);
    fq_engine_run(e, T0 + 1000);
    const struct fq_value *pod = tl_get(e, FQ_KIND_POD, "default", name);
    /* Restarted in place: still Running, one restart, not ready. */
    assert_string_equal(fq_pods_phase(pod), "Running");
    assert_int_equal(fq_pods_restarts(pod), 1);
    assert_string_equal(tl_cond(job(e, "rs"), "Failed", "status"), "");
    assert_int_equal(fq_pods_report(e, "default", name, &r, T0 + 2000, NULL),
                     0);
    fq_engine_run(e, T0 + 2000);
    assert_string_equal(tl_cond(job(e, "rs"), "Failed", "reason"),
                        "BackoffLimitExceeded");
    assert_int_equal(tl_pods(e, "default", "Job", "rs", p, 4), 1);
    free(name);
    fq_engine_free(e);
}

static void test_job_ttl_after_finished(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_job(e, "tmp", "  ttlSecondsAfterFinished: 30\n", T0);
    const char *p[4];
    assert_int_equal(tl_pods(e, "default", "Job", "tmp", p, 4), 1);
    char *name = fq_xstrdup(p[0]);
    tl_report(e, "default", name, "Succeeded", false, 0, NULL, T0 + 1000);
    fq_engine_run(e, T0 + 1000);
    assert_string_equal(tl_cond(job(e, "tmp"), "Complete", "status"), "True");
    assert_int_equal(fq_engine_next_wakeup(e), T0 + 31000);
    fq_engine_run(e, T0 + 30999);
    assert_non_null(job(e, "tmp"));
    fq_engine_run(e, T0 + 31000);
    assert_null(job(e, "tmp"));
    assert_null(tl_get(e, FQ_KIND_POD, "default", name));
    free(name);
    fq_engine_free(e);
}

/* The Job's one live pod (owned), failing it with `code`. */
static char *fail_live(struct fq_engine *e, const char *jname, int code,
                       int64_t now)
{
    const char *p[8];
    size_t n = tl_pods(e, "default", "Job", jname, p, 8);
    char *live = NULL;
    for (size_t i = 0; i < n; i++)
        if (!fq_pods_terminal(tl_get(e, FQ_KIND_POD, "default", p[i]))) {
            free(live);
            live = fq_xstrdup(p[i]);
        }
    assert_non_null(live);
    tl_report(e, "default", live, "Failed", false, code, "Error", now);
    fq_engine_run(e, now);
    return live;
}

static void test_job_pod_failure_policy_fail_job(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_job(e, "pfp",
              "  backoffLimit: 6\n  podFailurePolicy:\n"
              "    rules:\n    - action: FailJob\n"
              "      onExitCodes:\n        containerName: main\n"
              "        operator: In\n        values: [42]\n",
              T0);
    char *pod = fail_live(e, "pfp", 42, T0 + 1000);
    const struct fq_value *j = job(e, "pfp");
    assert_string_equal(tl_cond(j, "Failed", "status"), "True");
    assert_string_equal(tl_cond(j, "Failed", "reason"), "PodFailurePolicy");
    assert_string_equal(tl_cond(j, "FailureTarget", "reason"),
                        "PodFailurePolicy");
    char *want = fq_xasprintf("Container main for pod default/%s failed with "
                              "exit code 42 matching FailJob rule at index 0",
                              pod);
    assert_string_equal(tl_cond(j, "Failed", "message"), want);
    assert_int_equal(fq_value_path_int(j, "status.failed", -1), 1);
    const char *p[8];
    assert_int_equal(tl_pods(e, "default", "Job", "pfp", p, 8), 1);
    free(want);
    free(pod);
    fq_engine_free(e);
}

static void test_job_pod_failure_policy_ignore_count(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    /* 143 (a SIGTERM'd pod) is ignored, 1 is counted, anything else but
     * 1 fails the Job: rules apply in order, the first match decides. */
    apply_job(e, "pfp",
              "  backoffLimit: 1\n  podFailurePolicy:\n"
              "    rules:\n    - action: Ignore\n"
              "      onExitCodes: {operator: In, values: [143]}\n"
              "    - action: Count\n"
              "      onExitCodes: {operator: In, values: [1]}\n"
              "    - action: FailJob\n"
              "      onExitCodes: {operator: NotIn, values: [1]}\n",
              T0);
    free(fail_live(e, "pfp", 143, T0 + 1000));
    const struct fq_value *j = job(e, "pfp");
    assert_string_equal(tl_cond(j, "Failed", "status"), "");
    assert_int_equal(fq_value_path_int(j, "status.failed", -1), 0);
    assert_int_equal(fq_value_path_int(j, "status.active", -1), 1);
    free(fail_live(e, "pfp", 1, T0 + 2000));
    j = job(e, "pfp");
    assert_string_equal(tl_cond(j, "Failed", "status"), "");
    assert_int_equal(fq_value_path_int(j, "status.failed", -1), 1);
    char *pod = fail_live(e, "pfp", 7, T0 + 3000);
    j = job(e, "pfp");
    assert_string_equal(tl_cond(j, "Failed", "reason"), "PodFailurePolicy");
    assert_non_null(
        strstr(tl_cond(j, "Failed", "message"), "FailJob rule at index 2"));
    const char *p[8];
    assert_int_equal(tl_pods(e, "default", "Job", "pfp", p, 8), 3);
    free(pod);
    fq_engine_free(e);
}

static void test_job_pod_failure_policy_conditions(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    apply_job(e, "pfp",
              "  backoffLimit: 0\n  podFailurePolicy:\n"
              "    rules:\n    - action: Ignore\n"
              "      onPodConditions:\n"
              "      - type: DisruptionTarget\n",
              T0);
    /* A pod failed by a disruption (preemption, a node that went) is
     * replaced without counting. */
    const char *p[8];
    assert_int_equal(tl_pods(e, "default", "Job", "pfp", p, 8), 1);
    char *name = fq_xstrdup(p[0]);
    struct fq_objstore *s = fq_engine_store(e);
    struct fq_value *copy = fq_objstore_edit(s, FQ_KIND_POD, "default", name);
    struct fq_value *st = fq_map_ensure_map(copy, "status");
    struct fq_value *conds = fq_value_seq();
    struct fq_value *c = fq_value_map();
    fq_map_set(c, "type", fq_value_str("DisruptionTarget"));
    fq_map_set(c, "status", fq_value_str("True"));
    fq_seq_push(conds, c);
    fq_map_set(st, "conditions", conds);
    fq_map_set(st, "phase", fq_value_str("Failed"));
    assert_int_equal(fq_objstore_update(s, copy, true, NULL, NULL, NULL), 0);
    fq_engine_run(e, T0 + 1000);
    const struct fq_value *j = job(e, "pfp");
    assert_string_equal(tl_cond(j, "Failed", "status"), "");
    assert_int_equal(fq_value_path_int(j, "status.failed", -1), 0);
    assert_int_equal(tl_pods(e, "default", "Job", "pfp", p, 8), 2);
    /* Without the condition the same failure fails the Job. */
    free(fail_live(e, "pfp", 1, T0 + 2000));
    assert_string_equal(tl_cond(job(e, "pfp"), "Failed", "reason"),
                        "BackoffLimitExceeded");
    free(name);
    fq_engine_free(e);
}

/* A Workload as a user or the simulator writes it: no owner, or one
 * (`owner`, a Job's name) given in ownerReferences. */
static char *workload_yaml(const char *name, const char *owner)
{
    char *refs =
        owner ? fq_xasprintf("  ownerReferences:\n  - apiVersion: batch/v1\n"
                             "    kind: Job\n    name: %s\n    uid: u-%s\n",
                             owner, owner) :
                fq_xstrdup("");
    char *y = fq_xasprintf(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata:\n"
        "  name: %s\n  namespace: default\n%sspec:\n  queueName: q\n"
        "  podSets:\n  - name: main\n    count: 1\n    template:\n"
        "      spec:\n        containers:\n        - name: main\n"
        "          image: busybox\n",
        name, refs);
    free(refs);
    return y;
}

/* The job framework deletes a Workload whose owning Job is gone, and
 * leaves one that no job owns: it is not even woken for the latter (the
 * simulator's Workloads are all such), so an owner added later must be
 * seen by that change alone. */
static void test_workload_orphans(void **state)
{
    (void)state;
    struct fq_engine *e = tl_engine();
    char *plain = workload_yaml("plain", NULL);
    char *owned = workload_yaml("owned", "gone");
    tl_apply(e, plain, T0);
    tl_apply(e, owned, T0);
    fq_engine_run(e, T0);
    assert_non_null(tl_get(e, FQ_KIND_WORKLOAD, "default", "plain"));
    assert_null(tl_get(e, FQ_KIND_WORKLOAD, "default", "owned"));
    /* Written again with a label: still no owner, still kept. */
    const char *ns_line = "  namespace: default\n";
    const char *at = strstr(plain, ns_line) + strlen(ns_line);
    char *labelled = fq_xasprintf("%.*s  labels:\n    team: a\n%s",
                                  (int)(at - plain), plain, at);
    tl_apply(e, labelled, T0 + 1000);
    fq_engine_run(e, T0 + 1000);
    assert_non_null(tl_get(e, FQ_KIND_WORKLOAD, "default", "plain"));
    /* Given an owner that does not exist: collected. */
    char *adopted = workload_yaml("plain", "missing");
    tl_apply(e, adopted, T0 + 2000);
    fq_engine_run(e, T0 + 2000);
    assert_null(tl_get(e, FQ_KIND_WORKLOAD, "default", "plain"));
    free(plain);
    free(owned);
    free(labelled);
    free(adopted);
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_completes),
        cmocka_unit_test(test_job_backoff_limit),
        cmocka_unit_test(test_job_active_deadline),
        cmocka_unit_test(test_job_deadline_beyond_range),
        cmocka_unit_test(test_job_indexed),
        cmocka_unit_test(test_job_suspend_resume),
        cmocka_unit_test(test_job_onfailure_restarts),
        cmocka_unit_test(test_job_ttl_after_finished),
        cmocka_unit_test(test_job_pod_failure_policy_fail_job),
        cmocka_unit_test(test_job_pod_failure_policy_ignore_count),
        cmocka_unit_test(test_job_pod_failure_policy_conditions),
        cmocka_unit_test(test_workload_orphans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
