/*
 * test_kueue.c - the kueue controller through the engine: many workloads
 * come and go (the controller's records must follow), the queue counts in
 * ClusterQueue status stay right, the stats count what happened,
 * workloads with equal podSets share a view yet keep their own requests,
 * and with Kueue's pace a deep queue is tried one head per cycle, to the
 * millisecond, while the engine wakes far less often than once a cycle;
 * a deep queue's failed nominations are searched once and remembered
 * until their cohort's usage moves; with the preemption grace, a
 * preemptor that waits for a spared victim holds back neither another
 * preemptor of its cohort nor a head that fits beside it; a preemption message names
 * the preemptor's stored uid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/engine.h"
#include "flexq/value.h"
#include "kueue/kueue.h"
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

static void add_named(struct fq_engine *e, const char *name, int cpu,
                      int64_t now)
{
    char y[512];
    snprintf(y, sizeof(y),
             "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
             "metadata: {namespace: default, name: %s}\n"
             "spec:\n  queueName: lq\n  podSets:\n  - name: main\n"
             "    template: {spec: {containers: [{name: c, image: x, "
             "resources: {requests: {cpu: \"%d\"}}}]}}\n",
             name, cpu);
    apply(e, y, now);
}

static void add_workload(struct fq_engine *e, int i, int64_t now)
{
    char name[16];
    snprintf(name, sizeof(name), "w%d", i);
    add_named(e, name, 1, now);
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

static bool has_quota(struct fq_engine *e, const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, "default", name);
    assert_non_null(o);
    return fq_value_path(o->obj, "status.admission") != NULL;
}

/*
 * Workloads with equal podSets share one decoded view (psviews), which
 * must give each shape its own requests and follow a new snapshot.
 * Quota 10: a (6) fits, b (6, a's podSets) does not, c (4) does; with
 * the quota raised to 16 (a new snapshot) b fits too.
 */
static void test_shared_podset_views(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.policy = fq_policy_default();
    struct fq_engine *e = fq_engine_new(&cfg);
    int64_t t = 1767225600000; /* 2026-01-01 */
    for (size_t i = 0; i < sizeof(queue_yaml) / sizeof(*queue_yaml); i++)
        apply(e, queue_yaml[i], t);
    add_named(e, "a", 6, t);
    add_named(e, "b", 6, t);
    add_named(e, "c", 4, t);
    fq_engine_run(e, t);
    assert_true(has_quota(e, "a"));
    assert_false(has_quota(e, "b"));
    assert_true(has_quota(e, "c"));
    t += 1000;
    apply(e,
          "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
          "metadata: {name: cq}\nspec:\n  namespaceSelector: {}\n"
          "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
          "    - {name: default, resources: [{name: cpu, nominalQuota: 16}]}\n",
          t);
    add_named(e, "d", 6, t);
    fq_engine_run(e, t);
    assert_true(has_quota(e, "b"));
    assert_false(has_quota(e, "d"));
    fq_engine_free(e);
}

/* A Workload of `cpu` cpu in LocalQueue `lq`. */
static void add_in(struct fq_engine *e, const char *name, const char *lq,
                   int cpu, int64_t now)
{
    char y[512];
    snprintf(y, sizeof(y),
             "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
             "metadata: {namespace: default, name: %s}\n"
             "spec:\n  queueName: %s\n  podSets:\n  - name: main\n"
             "    template: {spec: {containers: [{name: c, image: x, "
             "resources: {requests: {cpu: \"%d\"}}}]}}\n",
             name, lq, cpu);
    apply(e, y, now);
}

static const char *qr_message(struct fq_engine *e, const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, "default", name);
    assert_non_null(o);
    const struct fq_value *cs = fq_value_path(o->obj, "status.conditions");
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        if (!strcmp(fq_value_path_str(c, "type", ""), "QuotaReserved"))
            return fq_value_path_str(c, "message", "");
    }
    fail_msg("%s has no QuotaReserved condition", name);
    return NULL;
}

/*
 * Failed nominations remembered (nommemo.c): cohort co of ClusterQueues
 * a and b (10 cpu each, preemption on), each full of 1-cpu workloads;
 * 100 workloads of 2 cpu wait in a, none can fit or preempt. A cycle
 * searches once and takes the other heads' outcome from the memo, with
 * the same message. A release in another cohort (cq c) leaves them
 * parked; quota freed in b (the same cohort: 1 cpu more to borrow)
 * changes every waiting head's message; quota freed in a lets the first
 * of them in at once.
 */
static void test_nomination_memo(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.policy = fq_policy_default();
    /* The messages below are each cycle's own: every change written. */
    cfg.policy.pending_message_refresh_ms = 0;
    cfg.sim_provider = false;
    struct fq_engine *e = fq_engine_new(&cfg);
    int64_t t = 1767225600000; /* 2026-01-01 */
    apply(e, queue_yaml[0], t);
    const char *cqs[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        char y[768];
        snprintf(y, sizeof(y),
                 "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                 "metadata: {name: %s}\nspec:\n  namespaceSelector: {}\n"
                 "  cohort: %s\n"
                 "  preemption: {withinClusterQueue: LowerPriority, "
                 "reclaimWithinCohort: Any}\n"
                 "  resourceGroups:\n  - coveredResources: [cpu]\n"
                 "    flavors:\n    - {name: default, resources: "
                 "[{name: cpu, nominalQuota: 10}]}\n",
                 cqs[i], i < 2 ? "co" : "other");
        apply(e, y, t);
        snprintf(y, sizeof(y),
                 "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                 "metadata: {namespace: default, name: lq%s}\n"
                 "spec: {clusterQueue: %s}\n",
                 cqs[i], cqs[i]);
        apply(e, y, t);
    }
    char name[32], lq[8];
    for (int q = 0; q < 3; q++)
        for (int i = 0; i < 10; i++) {
            snprintf(name, sizeof(name), "%s-small%d", cqs[q], i);
            snprintf(lq, sizeof(lq), "lq%s", cqs[q]);
            add_in(e, name, lq, 1, t);
        }
    fq_engine_run(e, t);
    struct fq_kueue_stats st;
    fq_kueue_get_stats(fq_engine_controller(e, "kueue"), &st);
    uint64_t searches = st.nom_searches, hits = st.nom_memo_hits;
    t += 1000;
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "a-big%03d", i);
        add_in(e, name, "lqa", 2, t);
    }
    fq_engine_run(e, t);
    fq_kueue_get_stats(fq_engine_controller(e, "kueue"), &st);
    assert_true(st.nom_memo_hits >= hits + 99);
    assert_true(st.nom_searches <= searches + 1);
    assert_false(has_quota(e, "a-big000"));
    assert_string_equal(qr_message(e, "a-big099"),
                        "couldn't assign flavors to pod set main: "
                        "insufficient unused quota for cpu in flavor "
                        "default, 2 more needed");
    /* Quota freed in c's cohort: co is quiet, its parked heads stay
     * parked (nothing searched or looked up again); a cycle still
     * counts. */
    t += 1000;
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", "c-small0", t, NULL),
        0);
    searches = st.nom_searches;
    hits = st.nom_memo_hits;
    uint64_t kept = st.requeue_kept, cycles = st.cycles;
    fq_engine_run(e, t);
    fq_kueue_get_stats(fq_engine_controller(e, "kueue"), &st);
    assert_int_equal(st.requeue_kept, kept + 100);
    assert_int_equal(st.nom_memo_hits, hits);
    assert_int_equal(st.nom_searches, searches);
    assert_int_equal(st.cycles, cycles + 1);
    /* A new head in co: the kept ones are put back and tried after it,
     * as before. */
    t += 1000;
    add_in(e, "b-new", "lqb", 3, t);
    fq_engine_run(e, t);
    assert_false(has_quota(e, "b-new"));
    assert_string_equal(qr_message(e, "b-new"),
                        "couldn't assign flavors to pod set main: "
                        "insufficient unused quota for cpu in flavor "
                        "default, 3 more needed");
    assert_string_equal(qr_message(e, "a-big099"),
                        "couldn't assign flavors to pod set main: "
                        "insufficient unused quota for cpu in flavor "
                        "default, 2 more needed");
    /* 1 cpu freed in b: a may borrow it, each head is 1 cpu short. */
    t += 1000;
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", "b-small0", t, NULL),
        0);
    fq_engine_run(e, t);
    assert_false(has_quota(e, "a-big000"));
    assert_string_equal(qr_message(e, "a-big099"),
                        "couldn't assign flavors to pod set main: "
                        "insufficient unused quota for cpu in flavor "
                        "default, 1 more needed");
    /* Released in c again while a 1-cpu head comes to b: co is quiet,
     * but b-one may fit, so the heads the requeue kept are put back and
     * walked with it, and those tried after it say 2 cpu short again. */
    t += 1000;
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", "c-small1", t, NULL),
        0);
    add_in(e, "b-one", "lqb", 1, t);
    fq_engine_run(e, t);
    assert_true(has_quota(e, "b-one"));
    assert_string_equal(qr_message(e, "a-big099"),
                        "couldn't assign flavors to pod set main: "
                        "insufficient unused quota for cpu in flavor "
                        "default, 2 more needed");
    /* 2 cpu freed in a: the first waiting one fits. */
    t += 1000;
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", "a-small0", t, NULL),
        0);
    assert_int_equal(
        fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", "a-small1", t, NULL),
        0);
    fq_engine_run(e, t);
    assert_true(has_quota(e, "a-big000"));
    assert_false(has_quota(e, "a-big001"));
    assert_string_equal(qr_message(e, "a-big099"),
                        "couldn't assign flavors to pod set main: "
                        "insufficient unused quota for cpu in flavor "
                        "default, 2 more needed");
    fq_engine_free(e);
}

/* When each workload got its quota (engine ms), seen by an observer. */
struct seen {
    struct fq_engine *e;
    char name[32][16];
    int64_t at[32];
    int n;
};

static void observe(void *ctx, const struct fq_change *c)
{
    struct seen *s = ctx;
    if (c->kind != FQ_KIND_WORKLOAD || !c->obj ||
        !fq_value_path(c->obj, "status.admission"))
        return;
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->name[i], c->name))
            return;
    if (s->n < 32) {
        snprintf(s->name[s->n], sizeof(s->name[0]), "%s", c->name);
        s->at[s->n++] = fq_engine_now(s->e);
    }
}

static int64_t reserved_at(const struct seen *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->name[i], name))
            return s->at[i];
    return -1;
}

/*
 * Kueue's pace: one head per ClusterQueue per 100 ms cycle. Quota 11:
 * "q00-big" (6) is admitted first; then q01..q20 (6 each) cannot fit and
 * are tried one per cycle; "q21-b" (4) fits at the 22nd cycle, t + 2.1 s.
 * "q22-c" (1) arrives in the middle, at t + 1.05 s, and fits at the cycle
 * after b. (Created within one second, they queue by name.)
 * The engine is driven like the simulator, waking only when it asks to;
 * it must ask far less often than once a cycle (the quiet cycles are
 * planned and replayed), and still admit at the exact cycle.
 */
static void test_kueue_pace_deep_queue(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.policy = fq_policy_kueue();
    cfg.sim_provider = false;
    struct fq_engine *e = fq_engine_new(&cfg);
    struct seen seen = {.e = e};
    fq_engine_set_observer(e, observe, &seen);
    int64_t t = 1767225600000; /* 2026-01-01 */
    const char *cq11 =
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
        "metadata: {name: cq}\nspec:\n  namespaceSelector: {}\n"
        "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
        "    - {name: default, resources: [{name: cpu, nominalQuota: 11}]}\n";
    apply(e, queue_yaml[0], t);
    apply(e, cq11, t);
    apply(e, queue_yaml[2], t);
    add_named(e, "q00-big", 6, t);
    for (int i = 1; i <= 20; i++) {
        char name[16];
        snprintf(name, sizeof(name), "q%02d-a", i);
        add_named(e, name, 6, t + i);
    }
    add_named(e, "q21-b", 4, t + 30);
    int64_t now = t + 30, arrival = t + 1050;
    int runs = 0;
    fq_engine_run(e, now);
    while (runs < 1000) {
        int64_t w = fq_engine_next_wakeup(e);
        if (arrival > 0 && arrival <= w) {
            now = arrival;
            add_named(e, "q22-c", 1, now);
            arrival = -1;
        } else if (w == FQ_NEVER) {
            break;
        } else {
            now = w;
        }
        fq_engine_run(e, now);
        runs++;
    }
    assert_int_equal(reserved_at(&seen, "q00-big"), t + 30);
    assert_int_equal(reserved_at(&seen, "q21-b"), t + 30 + 2100);
    assert_int_equal(reserved_at(&seen, "q22-c"), t + 30 + 2200);
    assert_int_equal(seen.n, 3);
    struct fq_kueue_stats st;
    fq_kueue_get_stats(fq_engine_controller(e, "kueue"), &st);
    assert_int_equal(st.cycles, 23);
    assert_int_equal(st.admissions, 3);
    assert_true(runs < 15);
    assert_int_equal(cq_status(e, "pendingWorkloads"), 20);
    fq_engine_free(e);
}

/*
 * StrictFIFO with Kueue's pace: a head that cannot fit blocks its queue,
 * so a planned quiet cycle parks that one head and the queue sleeps
 * until capacity changes. Quota 11: "s00-big" (6) at the first cycle;
 * "s01" (6) is tried at the second (t + 130, a quiet cycle replayed
 * later) and blocks "s02" (1), which would fit. When s00-big goes, at
 * t + 1000, s01 and then s02 are admitted at the next cycles.
 */
static void test_kueue_pace_strict_fifo(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.policy = fq_policy_kueue();
    cfg.sim_provider = false;
    struct fq_engine *e = fq_engine_new(&cfg);
    struct seen seen = {.e = e};
    fq_engine_set_observer(e, observe, &seen);
    int64_t t = 1767225600000; /* 2026-01-01 */
    const char *cq11 =
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
        "metadata: {name: cq}\nspec:\n  namespaceSelector: {}\n"
        "  queueingStrategy: StrictFIFO\n"
        "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
        "    - {name: default, resources: [{name: cpu, nominalQuota: 11}]}\n";
    apply(e, queue_yaml[0], t);
    apply(e, cq11, t);
    apply(e, queue_yaml[2], t);
    add_named(e, "s00-big", 6, t);
    add_named(e, "s01", 6, t + 1);
    add_named(e, "s02", 1, t + 2);
    int64_t now = t + 30, gone = t + 1000;
    int runs = 0;
    fq_engine_run(e, now);
    while (runs < 1000) {
        int64_t w = fq_engine_next_wakeup(e);
        if (gone > 0 && gone <= w) {
            now = gone;
            assert_int_equal(fq_engine_delete(e, FQ_KIND_WORKLOAD, "default",
                                              "s00-big", now, NULL),
                             0);
            gone = -1;
        } else if (w == FQ_NEVER) {
            break;
        } else {
            now = w;
        }
        fq_engine_run(e, now);
        runs++;
    }
    assert_int_equal(reserved_at(&seen, "s00-big"), t + 30);
    assert_int_equal(reserved_at(&seen, "s01"), t + 1000);
    assert_int_equal(reserved_at(&seen, "s02"), t + 1100);
    assert_int_equal(seen.n, 3);
    struct fq_kueue_stats st;
    fq_kueue_get_stats(fq_engine_controller(e, "kueue"), &st);
    assert_int_equal(st.cycles, 4); /* t + 30, 130, 1000, 1100 */
    assert_int_equal(cq_status(e, "pendingWorkloads"), 0);
    fq_engine_free(e);
}

/* The status of condition `type` of Workload name, or NULL. */
static const char *cond_status(struct fq_engine *e, const char *name,
                               const char *type)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, "default", name);
    assert_non_null(o);
    const struct fq_value *cs = fq_value_path(o->obj, "status.conditions");
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        if (!strcmp(fq_value_path_str(c, "type", ""), type))
            return fq_value_path_str(c, "status", "");
    }
    return NULL;
}

/* A Workload of `cpu` cpu in LocalQueue lq at priority class prio, with
 * the run time its user stated (NULL: none). */
static void add_prio(struct fq_engine *e, const char *name, const char *lq,
                     int cpu, const char *prio, const char *runtime,
                     int64_t now)
{
    char ann[96] = "";
    if (runtime)
        snprintf(ann, sizeof(ann),
                 ", annotations: {flexq.dev/expected-runtime: \"%s\"}",
                 runtime);
    char y[640];
    snprintf(y, sizeof(y),
             "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
             "metadata: {namespace: default, name: %s%s}\n"
             "spec:\n  queueName: %s\n  priorityClassName: %s\n"
             "  podSets:\n  - name: main\n"
             "    template: {spec: {containers: [{name: c, image: x, "
             "resources: {requests: {cpu: \"%d\"}}}]}}\n",
             name, ann, lq, prio, cpu);
    apply(e, y, now);
}

/* A Workload of 10 cpu in lq at priority prio (a number). */
static void add_prio_cpu10(struct fq_engine *e, const char *name, int prio,
                           int64_t now)
{
    char y[512];
    snprintf(y, sizeof(y),
             "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
             "metadata: {namespace: default, name: %s}\n"
             "spec:\n  queueName: lq\n  priority: %d\n"
             "  podSets:\n  - name: main\n    template: {spec: "
             "{containers: [{name: c, image: x, resources: "
             "{requests: {cpu: \"10\"}}}]}}\n",
             name, prio);
    apply(e, y, now);
}

/*
 * The preemption grace across a cohort: ClusterQueues a and b (10 cpu
 * each, withinClusterQueue LowerPriority) in cohort co, each full with
 * one low-priority workload; a-low's user said 30 s, b-low's said
 * nothing. At 25-26 s a-high and b-high (priority high) come: a-high
 * waits for a-low (its end 4 s away, within the 10 s grace), and b-high,
 * whose victim states no run time, preempts it in the same cycle as
 * Kueue would and is admitted, instead of being skipped because a-high
 * waits in the cohort. When a-low ends, a-high is admitted.
 */
/* An engine with the preemption grace at 10 s, priority classes high
 * (1000) and low (10), and ClusterQueues cqs[0..n) of 10 cpu each
 * (withinClusterQueue LowerPriority) in cohort co, each with LocalQueue
 * lqNAME. */
static struct fq_engine *grace_engine(const char *const *cqs, int n, int64_t t)
{
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.policy = fq_policy_default();
    cfg.policy.preemption_grace_ms = 10000;
    cfg.policy.pending_message_refresh_ms = 0;
    cfg.sim_provider = false;
    struct fq_engine *e = fq_engine_new(&cfg);
    apply(e, queue_yaml[0], t);
    const char *prios[][2] = {{"high", "1000"}, {"low", "10"}};
    for (int i = 0; i < 2; i++) {
        char y[256];
        snprintf(y, sizeof(y),
                 "apiVersion: kueue.x-k8s.io/v1beta1\n"
                 "kind: WorkloadPriorityClass\nmetadata: {name: %s}\n"
                 "value: %s\n",
                 prios[i][0], prios[i][1]);
        apply(e, y, t);
    }
    for (int i = 0; i < n; i++) {
        char y[768];
        snprintf(y, sizeof(y),
                 "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                 "metadata: {name: %s}\nspec:\n  namespaceSelector: {}\n"
                 "  cohort: co\n"
                 "  preemption: {withinClusterQueue: LowerPriority}\n"
                 "  resourceGroups:\n  - coveredResources: [cpu]\n"
                 "    flavors:\n    - {name: default, resources: "
                 "[{name: cpu, nominalQuota: 10}]}\n",
                 cqs[i]);
        apply(e, y, t);
        snprintf(y, sizeof(y),
                 "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                 "metadata: {namespace: default, name: lq%s}\n"
                 "spec: {clusterQueue: %s}\n",
                 cqs[i], cqs[i]);
        apply(e, y, t);
    }
    return e;
}

static void test_grace_wait_holds_no_other_preemptor(void **state)
{
    (void)state;
    int64_t t = 1767225600000; /* 2026-01-01 */
    const char *cqs[] = {"a", "b"};
    struct fq_engine *e = grace_engine(cqs, 2, t);
    add_prio(e, "a-low", "lqa", 10, "low", "30s", t);
    add_prio(e, "b-low", "lqb", 10, "low", NULL, t);
    fq_engine_run(e, t);
    assert_true(has_quota(e, "a-low"));
    assert_true(has_quota(e, "b-low"));
    add_prio(e, "a-high", "lqa", 10, "high", NULL, t + 25000);
    add_prio(e, "b-high", "lqb", 10, "high", NULL, t + 26000);
    fq_engine_run(e, t + 26000);
    assert_false(has_quota(e, "a-high"));
    assert_non_null(strstr(qr_message(e, "a-high"),
                           "Waiting for 1 workload(s) expected to finish "
                           "within the preemption grace"));
    assert_true(has_quota(e, "a-low"));
    assert_null(cond_status(e, "a-low", "Evicted"));
    const char *ev = cond_status(e, "b-low", "Evicted");
    assert_non_null(ev);
    assert_string_equal(ev, "True");
    assert_string_equal(qr_message(e, "b-high"),
                        "Quota reserved in ClusterQueue b");
    assert_false(has_quota(e, "b-low"));
    assert_true(has_quota(e, "b-high"));
    /* a-low ends: a-high gets its room. */
    assert_int_equal(fq_engine_delete(e, FQ_KIND_WORKLOAD, "default", "a-low",
                                      t + 28000, NULL),
                     0);
    fq_engine_run(e, t + 28000);
    assert_true(has_quota(e, "a-high"));
    assert_false(has_quota(e, "b-low"));
    fq_engine_free(e);
}

/*
 * A preemptor that waits sets aside only the room free now: its spared
 * victim holds the rest. Cohort co of a and c (10 cpu each); a is full
 * with a-low (30 s stated, spared at 25 s). At 25 s a-high (10 cpu)
 * waits for it, and c1 and c2 (5 cpu each, low) come to c: c1 in the
 * first round, c2 in the second, after a-high's set-aside. Had a-high
 * set aside all it asked (Kueue's reservation while the victim is
 * evicted, borrowing as a's usage is counted), the cohort would look
 * full and c2 would wait as long as the grace, in room that is c's own.
 */
static void test_grace_wait_sets_aside_free_room_only(void **state)
{
    (void)state;
    int64_t t = 1767225600000; /* 2026-01-01 */
    const char *cqs[] = {"a", "c"};
    struct fq_engine *e = grace_engine(cqs, 2, t);
    add_prio(e, "a-low", "lqa", 10, "low", "30s", t);
    fq_engine_run(e, t);
    assert_true(has_quota(e, "a-low"));
    add_prio(e, "a-high", "lqa", 10, "high", NULL, t + 25000);
    add_prio(e, "c1", "lqc", 5, "low", NULL, t + 25000);
    add_prio(e, "c2", "lqc", 5, "low", NULL, t + 25000);
    fq_engine_run(e, t + 25000);
    assert_false(has_quota(e, "a-high"));
    assert_non_null(strstr(qr_message(e, "a-high"),
                           "Waiting for 1 workload(s) expected to finish "
                           "within the preemption grace"));
    assert_true(has_quota(e, "a-low"));
    assert_true(has_quota(e, "c1"));
    assert_true(has_quota(e, "c2"));
    fq_engine_free(e);
}

/*
 * A preempted workload's message names its preemptor by the uid of the
 * preemptor as stored (the controller reads it there, keeping no copy
 * in its record): "low" (priority 0) holds all of cq, "high" (priority
 * 100) preempts it.
 */
static void test_preempt_message_uid(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.policy = fq_policy_default();
    cfg.sim_provider = false;
    struct fq_engine *e = fq_engine_new(&cfg);
    int64_t t = 1767225600000; /* 2026-01-01 */
    apply(e, queue_yaml[0], t);
    apply(e,
          "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
          "metadata: {name: cq}\nspec:\n  namespaceSelector: {}\n"
          "  preemption: {withinClusterQueue: LowerPriority}\n"
          "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
          "    - {name: default, resources: [{name: cpu, nominalQuota: 10}]}\n",
          t);
    apply(e, queue_yaml[2], t);
    add_prio_cpu10(e, "low", 0, t);
    fq_engine_run(e, t);
    assert_true(has_quota(e, "low"));
    t += 1000;
    add_prio_cpu10(e, "high", 100, t);
    fq_engine_run(e, t);
    const struct fq_object *hi = fq_objstore_get(
        fq_engine_store(e), FQ_KIND_WORKLOAD, "default", "high");
    const struct fq_object *lo =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, "default", "low");
    assert_non_null(hi);
    assert_non_null(lo);
    const char *uid = fq_value_path_str(hi->obj, "metadata.uid", "");
    assert_true(strlen(uid) > 0);
    const struct fq_value *conds = fq_value_path(lo->obj, "status.conditions");
    const char *msg = NULL;
    for (size_t i = 0; i < fq_value_len(conds); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(conds, i), "type", ""),
                    "Preempted"))
            msg = fq_value_path_str(fq_seq_at(conds, i), "message", "");
    assert_non_null(msg);
    char want[160];
    snprintf(want, sizeof(want),
             "Preempted to accommodate a workload (UID: %s, JobUID: UNKNOWN)",
             uid);
    assert_non_null(strstr(msg, want));
    fq_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_come_and_go),
        cmocka_unit_test(test_shared_podset_views),
        cmocka_unit_test(test_kueue_pace_deep_queue),
        cmocka_unit_test(test_kueue_pace_strict_fifo),
        cmocka_unit_test(test_nomination_memo),
        cmocka_unit_test(test_grace_wait_holds_no_other_preemptor),
        cmocka_unit_test(test_grace_wait_sets_aside_free_room_only),
        cmocka_unit_test(test_preempt_message_uid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
