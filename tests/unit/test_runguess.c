/*
 * test_runguess.c - flexqd's run-time guesses from a store's own history:
 * what counts as a finished run, the order they are added in, each
 * source of a guess, the job's limit and what is left of a running one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/objstore.h"
#include "flexq/runguess.h"
#include "flexq/timefmt.h"
#include "flexq/value.h"

#define NOW 1767225600000LL /* 2026-01-01T00:00:00Z */

/* A Workload in ns, queue lq, with `gpus` GPUs in one pod; when ready_s
 * >= 0 it was PodsReady at NOW + ready_s, and when finished_s >= 0 it
 * Finished with `reason` at NOW + finished_s. */
static void add_wl(struct fq_objstore *s, const char *ns, const char *name,
                   const char *lq, int gpus, int ready_s, int finished_s,
                   const char *reason, const char *extra_spec)
{
    char ready[64], fin[64], buf[4096];
    fq_time_format(NOW + ready_s * 1000LL, ready, sizeof(ready));
    fq_time_format(NOW + finished_s * 1000LL, fin, sizeof(fin));
    char conds[512] = "";
    if (ready_s >= 0)
        snprintf(conds, sizeof(conds),
                 "{\"type\":\"PodsReady\",\"status\":\"True\","
                 "\"lastTransitionTime\":\"%s\"}",
                 ready);
    if (finished_s >= 0)
        snprintf(conds + strlen(conds), sizeof(conds) - strlen(conds),
                 "%s{\"type\":\"Finished\",\"status\":\"True\",\"reason\":"
                 "\"%s\",\"lastTransitionTime\":\"%s\"}",
                 *conds ? "," : "", reason, fin);
    snprintf(
        buf, sizeof(buf),
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
        "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
        "\"spec\":{\"queueName\":\"%s\"%s,\"podSets\":[{\"name\":\"main\","
        "\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
        "\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
        "\"nvidia.com/gpu\":%d},\"limits\":{\"nvidia.com/gpu\":%d}}}]}}}]},"
        "\"status\":{\"conditions\":[%s]}}",
        name, ns, lq, extra_spec ? extra_spec : "", gpus, gpus, conds);
    struct fq_value *v = NULL;
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_json_parse(buf, strlen(buf), name, &lim, &v, NULL), 0);
    assert_int_equal(fq_objstore_create(s, v, NOW, NULL, NULL, NULL), 0);
}

static const struct fq_value *get(struct fq_objstore *s, const char *ns,
                                  const char *name)
{
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_WORKLOAD, ns, name);
    assert_non_null(o);
    return o->obj;
}

static void test_empty_store_guesses_default(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    add_wl(s, "a", "p", "lq", 8, -1, -1, NULL, NULL);
    struct fq_runguess *g = fq_runguess_new(s);
    assert_int_equal(fq_runguess_runs(g), 0);
    struct fq_runguess_answer a;
    fq_runguess_of(g, s, get(s, "a", "p"), &a);
    assert_int_equal(a.src, FQ_RUNGUESS_DEFAULT);
    assert_int_equal(a.run_ms, 3600 * 1000LL);
    assert_int_equal(a.conf, FQ_RUNHIST_LOW);
    assert_int_equal(a.limit_ms, -1);
    fq_runguess_free(g);
    fq_objstore_free(s);
}

static void test_namespace_history_in_finish_order(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    /* Finish order: f3 (at 100 s), f1 (700 s), f2 (1200 s); the last two
     * runs of namespace a are f1's 600 s and f2's 1000 s. */
    add_wl(s, "a", "f1", "lq", 8, 100, 700, "Succeeded", NULL);
    add_wl(s, "a", "f2", "lq", 8, 200, 1200, "Succeeded", NULL);
    add_wl(s, "a", "f3", "lq", 8, 10, 100, "Succeeded", NULL);
    /* A failed run and one without PodsReady say nothing. */
    add_wl(s, "a", "f4", "lq", 8, 0, 9000, "Failed", NULL);
    add_wl(s, "a", "f5", "lq", 8, -1, 50, "Succeeded", NULL);
    add_wl(s, "a", "p", "lq", 8, -1, -1, NULL, NULL);
    add_wl(s, "b", "q", "other", 8, -1, -1, NULL, NULL);
    struct fq_runguess *g = fq_runguess_new(s);
    assert_int_equal(fq_runguess_runs(g), 3);
    struct fq_runguess_answer a;
    fq_runguess_of(g, s, get(s, "a", "p"), &a);
    assert_int_equal(a.src, FQ_RUNGUESS_NAMESPACE);
    assert_int_equal(a.run_ms, 800 * 1000LL); /* (600 + 1000) / 2 */
    assert_int_equal(a.conf, FQ_RUNHIST_HIGH);
    /* Another namespace and queue: only all queues' runs know something. */
    fq_runguess_of(g, s, get(s, "b", "q"), &a);
    assert_int_equal(a.src, FQ_RUNGUESS_ALL);
    fq_runguess_free(g);
    fq_objstore_free(s);
}

static void test_stated_and_limits(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    add_wl(s, "a", "f1", "lq", 8, 0, 500, "Succeeded", NULL);
    /* Stated wins over history. */
    add_wl(s, "a", "stated", "lq", 8, -1, -1, NULL, NULL);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_WORKLOAD, "a", "stated");
    struct fq_value *edit = fq_value_clone(o->obj);
    fq_map_set(
        fq_map_ensure_map(fq_map_ensure_map(edit, "metadata"), "annotations"),
        "flexq.dev/expected-runtime", fq_value_str("2h"));
    assert_int_equal(fq_objstore_update(s, edit, true, NULL, NULL, NULL), 0);
    /* A limit caps the namespace's 500 s runs. */
    add_wl(s, "a", "capped", "lq", 8, -1, -1, NULL,
           ",\"maximumExecutionTimeSeconds\":120");
    struct fq_runguess *g = fq_runguess_new(s);
    struct fq_runguess_answer a;
    fq_runguess_of(g, s, get(s, "a", "stated"), &a);
    assert_int_equal(a.src, FQ_RUNGUESS_STATED);
    assert_int_equal(a.run_ms, 7200 * 1000LL);
    assert_int_equal(a.conf, FQ_RUNHIST_HIGH);
    fq_runguess_of(g, s, get(s, "a", "capped"), &a);
    assert_int_equal(a.limit_ms, 120 * 1000LL);
    assert_int_equal(a.run_ms, 120 * 1000LL);
    assert_int_equal(a.src, FQ_RUNGUESS_NAMESPACE);
    /* What is left of a running one: the guess less what it ran, at
     * least a minute, and within its limit. */
    assert_int_equal(fq_runguess_left(&a, 30 * 1000LL), 90 * 1000LL);
    assert_int_equal(fq_runguess_left(&a, 100 * 1000LL), 60 * 1000LL);
    fq_runguess_free(g);
    fq_objstore_free(s);
}

static void add_lq(struct fq_objstore *s, const char *ns, const char *name,
                   const char *cq)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
             "\"LocalQueue\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
             "\"%s\"},\"spec\":{\"clusterQueue\":\"%s\"}}",
             name, ns, cq);
    struct fq_value *v = NULL;
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_json_parse(buf, strlen(buf), name, &lim, &v, NULL), 0);
    assert_int_equal(fq_objstore_create(s, v, NOW, NULL, NULL, NULL), 0);
}

static void test_cluster_queue_history(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    /* Namespaces c and d feed ClusterQueue "shared"; c's 8-GPU jobs ran
     * 100 s and 300 s, its 1-GPU job 5,000 s. */
    add_lq(s, "c", "lq", "shared");
    add_lq(s, "d", "lq", "shared");
    add_lq(s, "e", "lq", "elsewhere");
    add_wl(s, "c", "big1", "lq", 8, 0, 100, "Succeeded", NULL);
    add_wl(s, "c", "big2", "lq", 8, 0, 300, "Succeeded", NULL);
    add_wl(s, "c", "small1", "lq", 1, 0, 5000, "Succeeded", NULL);
    add_wl(s, "d", "big", "lq", 8, -1, -1, NULL, NULL);
    add_wl(s, "d", "mid", "lq", 4, -1, -1, NULL, NULL);
    add_wl(s, "e", "other", "lq", 8, -1, -1, NULL, NULL);
    struct fq_runguess *g = fq_runguess_new(s);
    struct fq_runguess_answer a;
    /* d has no runs: the ClusterQueue's 8-GPU runs, mean 200 s, MEDIUM
     * (within a factor of 2 and 10, but not the namespace's own). */
    fq_runguess_of(g, s, get(s, "d", "big"), &a);
    assert_int_equal(a.src, FQ_RUNGUESS_SHAPE);
    assert_int_equal(a.run_ms, 200 * 1000LL);
    assert_int_equal(a.conf, FQ_RUNHIST_MEDIUM);
    /* No 4-GPU runs: all of the ClusterQueue's, (100+300+5000)/3. */
    fq_runguess_of(g, s, get(s, "d", "mid"), &a);
    assert_int_equal(a.src, FQ_RUNGUESS_QUEUE);
    assert_int_equal(a.run_ms, 1800 * 1000LL);
    assert_int_equal(a.conf, FQ_RUNHIST_LOW);
    /* Another ClusterQueue: every queue's runs. */
    fq_runguess_of(g, s, get(s, "e", "other"), &a);
    assert_int_equal(a.src, FQ_RUNGUESS_ALL);
    fq_runguess_free(g);
    fq_objstore_free(s);
}

/* The tally over n workloads ahead. */
static enum fq_runhist_confidence rate(const struct fq_runguess_answer *a,
                                       const int64_t *left, size_t n)
{
    struct fq_runguess_tally t = {0};
    for (size_t i = 0; i < n; i++)
        fq_runguess_tally_add(&t, a[i].conf, a[i].chips, left[i]);
    return fq_runguess_tally_result(&t);
}

static void test_forecast_confidence(void **state)
{
    (void)state;
    assert_int_equal(rate(NULL, NULL, 0), FQ_RUNHIST_HIGH);
    struct fq_runguess_answer a[3] = {
        {.chips = 8, .conf = FQ_RUNHIST_HIGH},
        {.chips = 8, .conf = FQ_RUNHIST_LOW},
        {.chips = 0, .conf = FQ_RUNHIST_LOW}, /* counts as one chip */
    };
    /* 8 x 1000 high against 8 x 100 + 1 x 100 low: high. */
    int64_t left[3] = {1000, 100, 100};
    assert_int_equal(rate(a, left, 3), FQ_RUNHIST_HIGH);
    /* Equal work high and low: the mean, 1, is medium. */
    int64_t even[3] = {1000, 1000, 0};
    assert_int_equal(rate(a, even, 3), FQ_RUNHIST_MEDIUM);
    /* Mostly low. */
    int64_t low[3] = {10, 1000, 5000};
    assert_int_equal(rate(a, low, 3), FQ_RUNHIST_LOW);
}

static void test_source_names(void **state)
{
    (void)state;
    assert_string_equal(fq_runguess_source_key(FQ_RUNGUESS_STATED), "stated");
    assert_string_equal(fq_runguess_source_key(FQ_RUNGUESS_SHAPE), "queueSize");
    assert_string_equal(fq_runguess_source_key(FQ_RUNGUESS_NSOURCES), "?");
    assert_non_null(
        strstr(fq_runguess_source_words(FQ_RUNGUESS_DEFAULT), "1h"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_store_guesses_default),
        cmocka_unit_test(test_namespace_history_in_finish_order),
        cmocka_unit_test(test_stated_and_limits),
        cmocka_unit_test(test_cluster_queue_history),
        cmocka_unit_test(test_forecast_confidence),
        cmocka_unit_test(test_source_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
