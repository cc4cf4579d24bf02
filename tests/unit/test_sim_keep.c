/*
 * test_sim_keep.c - a split job's segment boundary keeps its Workload when
 * nothing could take its place (src/sim/keep.c), and queues a new one
 * when something waits; either way every figure is the one the simulator
 * gives when every boundary queues a new Workload (requeue_segments).
 *
 * The config is planab_testlib.h's: Plan A one 8-GPU node, Plan B a
 * flex-start pool whose requests wait 600 s. Segments of 1,000 s.
 *
 *   kept       job a (8 GPUs, 4,000 s, split on Plan A) alone: its three
 *              boundaries keep workload sim-0-1; it runs 0-4,000 s in four
 *              segments.
 *   re-queued  job b (8 GPUs, 500 s) arrives at 500 s: Plan A is full, so
 *              it is admitted on Plan B and waits for its nodes (until
 *              1,100 s). At a's first boundary (1,000 s) b waits: a's
 *              workload ends, b moves to Plan A (flexq's migrate switch)
 *              and a's next segment is a new workload that waits until b
 *              is done at 1,500 s; a's two later boundaries are kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/buf.h"
#include "flexq/engine.h"
#include "flexq/value.h"
#include "report.h"
#include "simloop.h"
#include "trace.h"

#include "planab_testlib.h"

#define HDR "job_id,submit_s,duration_s,chips,hosts,priority,queue,user\n"

static bool engine_ready(void)
{
    struct fq_engine *e = fq_engine_new(NULL);
    bool ok =
        fq_engine_controller(e, "kueue") && fq_engine_controller(e, "capacity");
    fq_engine_free(e);
    return ok;
}

/* The ClusterQueue's line before which preempting() puts its
 * preemption policy. */
#define CQ_SPEC "  namespaceSelector: {}\n"

/* config_ab with its ClusterQueue preempting lower priorities, in the
 * first flavor that can (owned by the caller). */
static char *preempting(void)
{
    const char *at = strstr(config_ab, CQ_SPEC);
    assert_non_null(at);
    static const char add[] =
        "  preemption: {withinClusterQueue: LowerPriority}\n"
        "  flavorFungibility: {whenCanPreempt: Preempt}\n";
    size_t head = (size_t)(at - config_ab), n = strlen(config_ab);
    char *c = test_malloc(n + sizeof(add));
    memcpy(c, config_ab, head);
    memcpy(c + head, add, sizeof(add) - 1);
    memcpy(c + head + sizeof(add) - 1, at, n - head + 1);
    return c;
}

/* Whether the runs use preempting()'s config instead of config_ab. */
static bool use_preempting;

/* Runs t (borrowed: the jobs' ids in r point into it). */
static void run(const struct fq_trace *t, bool requeue, struct fq_sim_result *r)
{
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    struct fq_limits lim = fq_limits_default();
    char *cfg = use_preempting ? preempting() : NULL;
    const char *text = cfg ? cfg : config_ab;
    assert_int_equal(
        fq_yaml_parse(text, strlen(text), "c.yaml", &lim, &docs, &err), 0);
    if (cfg)
        test_free(cfg);
    struct fq_sim_options o;
    fq_sim_options_init(&o);
    o.config = &docs;
    o.trace = t;
    o.policy = fq_sim_policy_find("flexq");
    assert_int_equal(fq_sim_long_rule_parse("split-a", &o.long_rule), 0);
    o.long_rule_set = true;
    o.segment_set = true;
    o.segment_ms = 1000000;
    o.requeue_segments = requeue;
    o.check_invariants = true;
    if (fq_sim_run(&o, r, &err))
        fail_msg("%s", err.msg);
    fq_docs_release(&docs);
}

/* Whether the line p[0..len) holds `needle`. */
static bool line_has(const char *p, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(p + i, needle, n))
            return true;
    return false;
}

/* The reports with the lines that count engine work ("steps", "events")
 * left out: they are what keeping a boundary saves. */
static void reports(const struct fq_sim_result *r, struct fq_buf *out)
{
    struct fq_buf j = FQ_BUF_INIT;
    fq_sim_report_json(r, &j);
    for (const char *p = fq_buf_str(&j); *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        if (!line_has(p, len, "\"steps\":") && !line_has(p, len, "\"events\":"))
            fq_buf_append(out, p, len);
        p += len;
    }
    fq_buf_release(&j);
    fq_sim_report_table(r, out);
    fq_sim_report_jobs_csv(r, out);
}

/* Runs csv both ways and checks that the figures are the same. */
static void both(const char *csv, struct fq_sim_result *kept,
                 struct fq_sim_result *requeued)
{
    struct fq_trace t;
    struct fq_err err = {0};
    fq_trace_init(&t);
    assert_int_equal(fq_trace_parse(&t, csv, strlen(csv), "t.csv", false, &err),
                     0);
    run(&t, false, kept);
    run(&t, true, requeued);
    struct fq_buf a = FQ_BUF_INIT, b = FQ_BUF_INIT;
    reports(kept, &a);
    reports(requeued, &b);
    assert_string_equal(fq_buf_str(&a), fq_buf_str(&b));
    fq_trace_release(&t);
    fq_buf_release(&a);
    fq_buf_release(&b);
    assert_int_equal(requeued->seg_kept, 0);
    assert_int_equal(kept->seg_kept + kept->seg_requeued,
                     requeued->seg_requeued);
}

static void test_kept(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_sim_result r, q;
    both(HDR "a,0,4000,8,1,0,,u1\n", &r, &q);
    assert_int_equal(r.seg_kept, 3);
    assert_int_equal(r.seg_requeued, 0);
    assert_int_equal(q.seg_requeued, 3);
    const struct fq_sim_jobrec *a = &r.jobs[0];
    assert_int_equal(a->outcome, FQ_SIM_FINISHED);
    assert_int_equal(a->segments, 4); /* the checkpoints still count */
    assert_int_equal(a->start_ms, 0);
    assert_int_equal(a->finish_ms, 4000000);
    assert_int_equal(a->run_ms, 4000000);
    assert_int_equal(a->evictions, 0);
    assert_true(a->pool >= 0 && !r.pools[a->pool].queued);
    /* One workload through the engine instead of four. */
    assert_true(r.events < q.events);
    assert_true(r.steps < q.steps);
    fq_sim_result_release(&r);
    fq_sim_result_release(&q);
}

static void test_requeued(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_sim_result r, q;
    both(HDR "a,0,4000,8,1,0,,u1\nb,500,500,8,1,0,,u1\n", &r, &q);
    /* At 1,000 s b waits: that boundary queues a new workload. */
    assert_true(r.seg_requeued >= 1);
    const struct fq_sim_jobrec *a = &r.jobs[0], *b = &r.jobs[1];
    assert_int_equal(a->outcome, FQ_SIM_FINISHED);
    assert_int_equal(b->outcome, FQ_SIM_FINISHED);
    assert_int_equal(a->segments, 4);
    assert_int_equal(a->run_ms, 4000000);
    /* b took Plan A's node at a's checkpoint; a went on after it. */
    assert_int_equal(b->start_ms, 1000000);
    assert_true(b->pool >= 0 && !r.pools[b->pool].queued);
    assert_int_equal(a->finish_ms, 4500000);
    /* The later boundaries of a, with nothing waiting, are kept. */
    assert_int_equal(r.seg_kept, 2);
    assert_int_equal(r.seg_requeued, 1);
    fq_sim_result_release(&r);
    fq_sim_result_release(&q);
}

/*
 * A config that preempts: x and y (4 GPUs each, priority 0) share Plan
 * A's node; z (priority 10) arrives at 1,200 s and preempts the one
 * admitted last. Had x's boundary at 1,000 s been kept, x would still
 * carry its admission at 0 s and y would be the victim instead: the
 * figures would differ, so no boundary is kept under such a config.
 */
static void test_preempting_config(void **state)
{
    (void)state;
    if (!engine_ready())
        skip();
    struct fq_sim_result r, q;
    use_preempting = true;
    both(HDR "x,0,4000,4,1,0,,u1\ny,500,4000,4,1,0,,u1\n"
             "z,1200,100,4,1,10,,u1\n",
         &r, &q);
    use_preempting = false;
    assert_int_equal(r.seg_kept, 0);
    /* z preempted one of them (the figures above are the same either
     * way). */
    assert_true(r.jobs[0].evictions + r.jobs[1].evictions >= 1);
    fq_sim_result_release(&r);
    fq_sim_result_release(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept),
        cmocka_unit_test(test_requeued),
        cmocka_unit_test(test_preempting_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
