/*
 * test_metrics.c - the Prometheus exposition (src/core/views/metrics.c) and the
 * visibility positions (src/core/views/visibility.c).
 *
 * A scenario on the real engine: the tutorial's queue config plus a small
 * second ClusterQueue; one 16-TPU workload lands on on-demand and is
 * admitted, a second one reserves dws quota and waits on its check, a
 * third cannot fit the small queue. The scrape must carry the right
 * families (# TYPE), gauges, counters and histogram counts. Hand-made
 * workload changes then check the wait-time buckets, eviction reasons and
 * that feeding one transition twice counts it once. With fair sharing,
 * a preemption counts under the preempting queue, the shares show as
 * gauges, and each scheduling cycle is one admission attempt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/metrics.h"
#include "flexq/value.h"
#include "flexq/visibility.h"

#define T0 1795968000000LL /* 2026-11-29T00:00:00Z */

static const char SMALL_QUEUE[] =
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ClusterQueue\n"
    "metadata: {name: small}\n"
    "spec:\n"
    "  namespaceSelector: {}\n"
    "  resourceGroups:\n"
    "  - coveredResources: [cpu]\n"
    "    flavors:\n"
    "    - name: default-cpu\n"
    "      resources: [{name: cpu, nominalQuota: 1}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: LocalQueue\n"
    "metadata: {namespace: default, name: small-queue}\n"
    "spec: {clusterQueue: small}\n";

static void apply_text(struct fq_engine *e, const char *text, int64_t now)
{
    struct fq_docs docs = {0};
    struct fq_limits lim = fq_limits_default();
    struct fq_err err = {0};
    int rc = fq_yaml_parse(text, strlen(text), "test", &lim, &docs, &err);
    if (rc)
        fail_msg("yaml: %s", err.msg);
    for (size_t i = 0; i < docs.n; i++) {
        struct fq_value *o = docs.items[i];
        docs.items[i] = NULL;
        rc = fq_engine_apply(e, o, now, NULL, NULL, &err);
        if (rc)
            fail_msg("apply: %s", err.msg);
    }
    fq_docs_release(&docs);
}

static void apply_file(struct fq_engine *e, const char *path, int64_t now)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    apply_text(e, buf, now);
}

static void workload(struct fq_engine *e, const char *name, const char *queue,
                     const char *requests, int count, int64_t now)
{
    char *y = fq_xasprintf(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
        "metadata: {namespace: default, name: %s}\n"
        "spec:\n  queueName: %s\n  podSets:\n  - name: main\n    count: %d\n"
        "    template:\n      spec:\n        containers:\n"
        "        - name: c\n          image: x\n"
        "          resources: {requests: %s, limits: %s}\n",
        name, queue, count, requests, requests);
    apply_text(e, y, now);
    free(y);
}

/* The value of one exact series ("name{labels}"), or NAN if absent. */
static double series(const char *text, const char *s)
{
    size_t n = strlen(s);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
        if (!strncmp(p, s, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return NAN;
}

/* kueue_cluster_queue_<what>{...,flavor,resource="google.com/tpu"} */
static const char *cellq(char *buf, const char *what, const char *flavor)
{
    snprintf(buf, 400,
             "kueue_cluster_queue_%s%s{cluster_queue=\"cluster-queue\","
             "cohort=\"\",flavor=\"%s\",resource=\"google.com/tpu\"}",
             strcmp(what, "nominal_quota") ? "resource_" : "", what, flavor);
    return buf;
}

static void feed(struct fq_engine *e, struct fq_metrics *m)
{
    struct fq_change *c = NULL;
    size_t n = fq_objstore_take_changes(fq_engine_store(e), &c);
    for (size_t i = 0; i < n; i++)
        fq_metrics_observe(m, &c[i]);
    fq_changes_free(c, n);
}

static char *scrape(struct fq_engine *e, struct fq_metrics *m)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_metrics_render(m, fq_engine_store(e), &b);
    return fq_buf_detach(&b);
}

static struct fq_engine *tutorial(struct fq_metrics *m)
{
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = 7;
    cfg.policy = fq_policy_kueue();
    cfg.no_pods = true;
    struct fq_engine *e = fq_engine_new(&cfg);
    apply_file(e, FLEXQ_SOURCE_DIR "/tests/fixtures/valid/dws-tpu-queue.yaml",
               T0);
    apply_text(e, SMALL_QUEUE, T0);
    fq_engine_run(e, T0);
    feed(e, m);
    workload(e, "job1", "user-queue",
             "{cpu: \"8\", memory: 16Gi, google.com/tpu: \"4\"}", 4, T0 + 1000);
    fq_engine_run(e, T0 + 1000);
    feed(e, m);
    workload(e, "job2", "user-queue",
             "{cpu: \"8\", memory: 16Gi, google.com/tpu: \"4\"}", 4, T0 + 3000);
    fq_engine_run(e, T0 + 3000);
    feed(e, m);
    workload(e, "big", "small-queue", "{cpu: \"4\"}", 1, T0 + 4000);
    workload(e, "big2", "small-queue", "{cpu: \"2\"}", 1, T0 + 4500);
    fq_engine_run(e, T0 + 5000);
    feed(e, m);
    return e;
}

static void test_scrape_tutorial(void **state)
{
    (void)state;
    struct fq_metrics *m = fq_metrics_new();
    struct fq_engine *e = tutorial(m);
    char *t = scrape(e, m);

    /* families and their types */
    assert_non_null(strstr(t, "# TYPE kueue_pending_workloads gauge\n"));
    assert_non_null(
        strstr(t, "# TYPE kueue_admitted_workloads_total counter\n"));
    assert_non_null(
        strstr(t, "# TYPE kueue_quota_reserved_workloads_total counter\n"));
    assert_non_null(
        strstr(t, "# TYPE kueue_admission_wait_time_seconds histogram\n"));
    assert_non_null(strstr(
        t, "# TYPE kueue_admission_checks_wait_time_seconds histogram\n"));
    assert_non_null(
        strstr(t, "# TYPE kueue_cluster_queue_resource_usage gauge\n"));
    assert_non_null(strstr(t, "# TYPE flexq_provisioning_requests gauge\n"));
    assert_non_null(strstr(t, "# TYPE flexq_nodepool_nodes gauge\n"));

    /* both jobs hold quota; job1 admitted on on-demand, job2 waits */
    assert_true(series(t, "kueue_quota_reserved_workloads_total{cluster_queue="
                          "\"cluster-queue\"}") == 2);
    assert_true(series(t, "kueue_admitted_workloads_total{cluster_queue="
                          "\"cluster-queue\"}") == 1);
    assert_true(series(t, "kueue_reserving_active_workloads{cluster_queue="
                          "\"cluster-queue\"}") == 2);
    assert_true(series(t, "kueue_admitted_active_workloads{cluster_queue="
                          "\"cluster-queue\"}") == 1);
    char q[400];
    assert_true(series(t, cellq(q, "reservation", "on-demand")) == 16);
    assert_true(series(t, cellq(q, "reservation", "dws")) == 16);
    /* usage counts admitted workloads only: job2 is not admitted yet */
    assert_true(series(t, cellq(q, "usage", "on-demand")) == 16);
    assert_true(series(t, cellq(q, "usage", "dws")) == 0);
    assert_true(series(t, cellq(q, "nominal_quota", "on-demand")) == 16);
    /* memory in bytes, cpu in cores */
    assert_true(series(t, "kueue_cluster_queue_resource_usage{cluster_queue="
                          "\"cluster-queue\",cohort=\"\",flavor=\"on-demand\","
                          "resource=\"memory\"}") == 64.0 * (1 << 30));
    assert_true(series(t, "kueue_cluster_queue_nominal_quota{cluster_queue="
                          "\"small\",cohort=\"\",flavor=\"default-cpu\","
                          "resource=\"cpu\"}") == 1);

    /* the small queue: nothing fits, both tried and parked */
    assert_true(series(t, "kueue_pending_workloads{cluster_queue=\"small\","
                          "status=\"inadmissible\"}") +
                    series(t, "kueue_pending_workloads{cluster_queue="
                              "\"small\",status=\"active\"}") ==
                2);
    assert_true(series(t, "kueue_pending_workloads{cluster_queue="
                          "\"cluster-queue\",status=\"active\"}") == 0);

    /* the LocalQueue twins: the same counts per local queue */
    assert_non_null(
        strstr(t, "# TYPE kueue_local_queue_pending_workloads gauge\n"));
    assert_true(
        series(t, "kueue_local_queue_pending_workloads{name=\"small-queue\","
                  "namespace=\"default\",status=\"inadmissible\"}") +
            series(t,
                   "kueue_local_queue_pending_workloads{name=\"small-queue\","
                   "namespace=\"default\",status=\"active\"}") ==
        2);
    assert_true(series(t, "kueue_local_queue_reserving_active_workloads{name="
                          "\"user-queue\",namespace=\"default\"}") == 2);
    assert_true(series(t, "kueue_local_queue_admitted_active_workloads{name="
                          "\"user-queue\",namespace=\"default\"}") == 1);

    /* job1 was admitted at once: one observation in the first bucket */
    assert_true(series(t, "kueue_admission_wait_time_seconds_bucket{"
                          "cluster_queue=\"cluster-queue\",le=\"1\"}") == 1);
    assert_true(series(t, "kueue_admission_wait_time_seconds_count{"
                          "cluster_queue=\"cluster-queue\"}") == 1);
    /* job1 had no admission check: nothing in the check wait */
    assert_true(
        isnan(series(t, "kueue_admission_checks_wait_time_seconds_count{"
                        "cluster_queue=\"cluster-queue\"}")));
    assert_true(series(t, "kueue_admission_wait_time_seconds_bucket{"
                          "cluster_queue=\"cluster-queue\",le=\"+Inf\"}") == 1);

    /* job2's ProvisioningRequest exists and is not provisioned */
    double prs = 0;
    const char *states[] = {"Pending", "Accepted", "Provisioned", "Failed"};
    for (int i = 0; i < 4; i++) {
        snprintf(q, sizeof(q), "flexq_provisioning_requests{state=\"%s\"}",
                 states[i]);
        double v = series(t, q);
        assert_false(isnan(v));
        prs += v;
    }
    assert_true(prs == 1);
    assert_true(series(t, "flexq_provisioning_requests{state="
                          "\"Provisioned\"}") == 0);

    /* rendering twice gives the same text (no hidden state) */
    char *t2 = scrape(e, m);
    assert_string_equal(t, t2);
    free(t2);
    free(t);
    fq_engine_free(e);
    fq_metrics_free(m);
}

static void test_positions(void **state)
{
    (void)state;
    struct fq_metrics *m = fq_metrics_new();
    struct fq_engine *e = tutorial(m);
    struct fq_pending_wl *p = NULL;
    size_t n = fq_visibility_pending(e, &p);
    assert_int_equal(n, 2);
    /* same priority: earlier creation first */
    assert_string_equal(p[0].name, "big");
    assert_string_equal(p[0].cq, "small");
    assert_int_equal(p[0].pos_cq, 0);
    assert_int_equal(p[0].pos_lq, 0);
    assert_string_equal(p[1].name, "big2");
    assert_int_equal(p[1].pos_cq, 1);
    assert_int_equal(p[1].pos_lq, 1);
    free(p);

    struct fq_value *v =
        fq_visibility_summary(e, "small", NULL, NULL, 0, 0, NULL);
    assert_string_equal(fq_value_path_str(v, "kind", ""),
                        "PendingWorkloadsSummary");
    const struct fq_value *items = fq_map_get(v, "items");
    assert_int_equal(fq_value_len(items), 2);
    assert_int_equal(
        fq_value_path_int(fq_seq_at(items, 1), "positionInClusterQueue", -1),
        1);
    assert_string_equal(
        fq_value_path_str(fq_seq_at(items, 1), "localQueueName", ""),
        "small-queue");
    fq_value_free(v);
    /* offset and limit, and the LocalQueue form */
    v = fq_visibility_summary(e, NULL, "default", "small-queue", 1, 1, NULL);
    items = fq_map_get(v, "items");
    assert_int_equal(fq_value_len(items), 1);
    assert_string_equal(
        fq_value_path_str(fq_seq_at(items, 0), "metadata.name", ""), "big2");
    fq_value_free(v);
    v = fq_visibility_summary(e, "cluster-queue", NULL, NULL, 0, 0, NULL);
    assert_int_equal(fq_value_len(fq_map_get(v, "items")), 0);
    fq_value_free(v);
    fq_engine_free(e);
    fq_metrics_free(m);
}

/* A hand-made Workload with the given True conditions (type, time). */
static struct fq_value *wl_with(const char *name, const char *created,
                                const char *const *conds, const char *reason)
{
    char *y = fq_xasprintf(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
        "metadata: {namespace: ns, name: %s, creationTimestamp: \"%s\"}\n"
        "status:\n  admission: {clusterQueue: cq}\n"
        "  admissionChecks: [{name: prov, state: Ready}]\n  conditions:\n",
        name, created);
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, y);
    free(y);
    for (const char *const *c = conds; *c; c += 2)
        fq_buf_printf(&b,
                      "  - {type: %s, status: \"True\", reason: %s, "
                      "lastTransitionTime: \"%s\"}\n",
                      c[0], reason, c[1]);
    struct fq_docs docs = {0};
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_yaml_parse(b.data, b.len, "t", &lim, &docs, NULL), 0);
    fq_buf_release(&b);
    struct fq_value *v = docs.items[0];
    docs.items[0] = NULL;
    fq_docs_release(&docs);
    return v;
}

static void observe(struct fq_metrics *m, struct fq_value *wl)
{
    struct fq_change c = {
        .rev = 1,
        .type = FQ_CHANGE_MODIFIED,
        .kind = FQ_KIND_WORKLOAD,
        .ns = (char *)"ns",
        .name = (char *)fq_value_path_str(wl, "metadata.name", ""),
        .obj = wl};
    fq_metrics_observe(m, &c);
    fq_value_free(wl);
}

static void test_transitions_and_buckets(void **state)
{
    (void)state;
    struct fq_metrics *m = fq_metrics_new();
    struct fq_objstore *s = fq_objstore_new();
    /* reserved after 10 s, admitted 60 s later (a check) */
    const char *a[] = {"QuotaReserved", "2026-11-29T00:00:10Z", "Admitted",
                       "2026-11-29T00:01:10Z", NULL};
    observe(m, wl_with("w", "2026-11-29T00:00:00Z", a, "X"));
    observe(m, wl_with("w", "2026-11-29T00:00:00Z", a, "X")); /* again */
    const char *ev[] = {"QuotaReserved",
                        "2026-11-29T00:00:10Z",
                        "Admitted",
                        "2026-11-29T00:01:10Z",
                        "Evicted",
                        "2026-11-29T00:05:00Z",
                        NULL};
    observe(m, wl_with("w", "2026-11-29T00:00:00Z", ev, "PodsReadyTimeout"));
    struct fq_buf b = FQ_BUF_INIT;
    fq_metrics_render(m, s, &b);
    const char *t = b.data;
    assert_true(series(t, "kueue_quota_reserved_workloads_total{cluster_queue="
                          "\"cq\"}") == 1);
    assert_true(series(t, "kueue_admitted_workloads_total{cluster_queue="
                          "\"cq\"}") == 1);
    assert_true(series(t, "kueue_evicted_workloads_total{cluster_queue="
                          "\"cq\",reason=\"PodsReadyTimeout\"}") == 1);
    /* 10 s to reservation: not in le=5, in le=10 */
    assert_true(series(t, "kueue_quota_reserved_wait_time_seconds_bucket{"
                          "cluster_queue=\"cq\",le=\"5\"}") == 0);
    assert_true(series(t, "kueue_quota_reserved_wait_time_seconds_bucket{"
                          "cluster_queue=\"cq\",le=\"10\"}") == 1);
    /* 70 s to admission; 60 s of it on checks: both in le=80, not le=40 */
    assert_true(series(t, "kueue_admission_wait_time_seconds_bucket{"
                          "cluster_queue=\"cq\",le=\"40\"}") == 0);
    assert_true(series(t, "kueue_admission_wait_time_seconds_bucket{"
                          "cluster_queue=\"cq\",le=\"80\"}") == 1);
    assert_true(series(t, "kueue_admission_wait_time_seconds_sum{"
                          "cluster_queue=\"cq\"}") == 70);
    assert_true(series(t, "kueue_admission_checks_wait_time_seconds_sum{"
                          "cluster_queue=\"cq\"}") == 60);
    /* the check wait has 16 buckets, the others 14 */
    assert_false(isnan(series(t, "kueue_admission_checks_wait_time_seconds_"
                                 "bucket{cluster_queue=\"cq\",le=\"40960\"}")));
    assert_true(isnan(series(t, "kueue_admission_wait_time_seconds_bucket{"
                                "cluster_queue=\"cq\",le=\"40960\"}")));
    fq_buf_release(&b);

    /* a deleted workload is forgotten: the same times count again */
    struct fq_change del = {.rev = 2,
                            .type = FQ_CHANGE_DELETED,
                            .kind = FQ_KIND_WORKLOAD,
                            .ns = (char *)"ns",
                            .name = (char *)"w",
                            .obj = NULL};
    fq_metrics_observe(m, &del);
    observe(m, wl_with("w", "2026-11-29T00:00:00Z", a, "X"));
    fq_metrics_render(m, s, &b);
    assert_true(series(b.data, "kueue_admitted_workloads_total{cluster_queue="
                               "\"cq\"}") == 2);
    fq_buf_release(&b);
    fq_objstore_free(s);
    fq_metrics_free(m);
}

static const char FAIR_QUEUES[] =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
    "metadata: {name: default}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
    "metadata: {name: a}\nspec:\n  namespaceSelector: {}\n  cohort: team\n"
    "  preemption: {reclaimWithinCohort: Any}\n"
    "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
    "    - {name: default, resources: [{name: cpu, nominalQuota: 0}]}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
    "metadata: {name: b}\nspec:\n  namespaceSelector: {}\n  cohort: team\n"
    "  preemption: {reclaimWithinCohort: Any}\n"
    "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
    "    - {name: default, resources: [{name: cpu, nominalQuota: 0}]}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
    "metadata: {name: c}\nspec:\n  namespaceSelector: {}\n  cohort: team\n"
    "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
    "    - {name: default, resources: [{name: cpu, nominalQuota: 10}]}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {namespace: default, name: qa}\nspec: {clusterQueue: a}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {namespace: default, name: qb}\nspec: {clusterQueue: b}\n";

/* Runs the engine at t, then feeds its changes and attempts to m. */
static void step(struct fq_engine *e, struct fq_metrics *m, int64_t t)
{
    fq_engine_run(e, t);
    feed(e, m);
    fq_metrics_observe_attempts(m, e, 0.004);
}

/* Fair sharing: b preempts a's workload (LessThanInitialShare); the
 * preemption counts under b, the eviction under a, the shares show, and
 * each scheduling cycle is an admission attempt. */
static void test_preemption_shares_attempts(void **state)
{
    (void)state;
    struct fq_metrics *m = fq_metrics_new();
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.no_pods = true;
    cfg.fair_sharing.enable = true;
    struct fq_engine *e = fq_engine_new(&cfg);
    apply_text(e, FAIR_QUEUES, T0);
    step(e, m, T0);
    workload(e, "a6", "qa", "{cpu: \"1\"}", 6, T0 + 1000);
    step(e, m, T0 + 1000);
    char *t = scrape(e, m);
    assert_true(series(t, "kueue_cluster_queue_weighted_share{cluster_queue="
                          "\"a\"}") == 600);
    assert_true(series(t, "kueue_admission_attempts_total{result="
                          "\"success\"}") == 1);
    free(t);
    workload(e, "b5", "qb", "{cpu: \"1\"}", 5, T0 + 2000);
    for (int i = 0; i < 5; i++)
        step(e, m, T0 + 2000 + 100 * i);
    t = scrape(e, m);
    assert_true(series(t, "kueue_preempted_workloads_total{preempting_cluster_"
                          "queue=\"b\",reason=\"InCohortFairSharing\"}") == 1);
    assert_true(series(t, "kueue_evicted_workloads_total{cluster_queue=\"a\","
                          "reason=\"Preempted\"}") == 1);
    assert_true(series(t, "kueue_cluster_queue_weighted_share{cluster_queue="
                          "\"b\"}") == 500);
    double ok = series(t, "kueue_admission_attempts_total{result=\"success\"}");
    double no =
        series(t, "kueue_admission_attempts_total{result=\"inadmissible\"}");
    /* a6, then b5 once its preemption freed the quota; the cycle that
     * preempted reserved nothing. */
    assert_true(ok == 2);
    assert_true(no >= 1);
    assert_true(series(t, "kueue_admission_attempt_duration_seconds_count{"
                          "result=\"success\"}") == ok);
    assert_false(isnan(series(t, "kueue_admission_attempt_duration_seconds_"
                                 "bucket{result=\"success\",le=\"0.005\"}")));
    free(t);
    fq_engine_free(e);
    fq_metrics_free(m);
}

static void test_label_escaping_and_many(void **state)
{
    (void)state;
    struct fq_metrics *m = fq_metrics_new();
    struct fq_objstore *s = fq_objstore_new();
    /* enough workloads to grow and shrink the table */
    const char *a[] = {"QuotaReserved", "2026-11-29T00:00:01Z", NULL};
    char name[32];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "w%d", i);
        observe(m, wl_with(name, "2026-11-29T00:00:00Z", a, "X"));
    }
    for (int i = 0; i < 300; i += 2) {
        snprintf(name, sizeof(name), "w%d", i);
        struct fq_change del = {.type = FQ_CHANGE_DELETED,
                                .kind = FQ_KIND_WORKLOAD,
                                .ns = (char *)"ns",
                                .name = name};
        fq_metrics_observe(m, &del);
    }
    for (int i = 0; i < 300; i++) { /* odd ones are remembered */
        snprintf(name, sizeof(name), "w%d", i);
        observe(m, wl_with(name, "2026-11-29T00:00:00Z", a, "X"));
    }
    struct fq_buf b = FQ_BUF_INIT;
    fq_metrics_render(m, s, &b);
    assert_true(series(b.data, "kueue_quota_reserved_workloads_total{"
                               "cluster_queue=\"cq\"}") == 450);
    fq_buf_release(&b);
    fq_objstore_free(s);
    fq_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scrape_tutorial),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_transitions_and_buckets),
        cmocka_unit_test(test_label_escaping_and_many),
        cmocka_unit_test(test_preemption_shares_attempts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
