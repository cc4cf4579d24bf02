/*
 * test_admission.c - the admission module on small hand-made quota trees:
 * cohort arithmetic with borrowing and lending limits, flavor order and
 * fungibility, NoFit reasons and messages, preemption targets, partial
 * admission.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/alloc.h"
#include "kueue/admission.h"

/* A tree: cohort with CQs a and b; flavors f0, f1; resource cpu. */
struct fix {
    struct fq_adm a;
    int cpu, f0, f1, coh, qa, qb;
};

static void group(struct fq_adm *a, int cq, int nflv, const int *flv)
{
    struct fq_adm_cq *x = &a->cqs[cq];
    x->ngroups = 1;
    x->groups = fq_xcalloc(1, sizeof(*x->groups));
    x->groups[0].res_mask = 1;
    x->groups[0].nflv = nflv;
    for (int i = 0; i < nflv; i++)
        x->groups[0].flv[i] = (uint8_t)flv[i];
}

static void setup_fix(struct fix *f, int64_t a_nom, int64_t b_nom,
                      int64_t a_borrow, int64_t b_lend)
{
    fq_adm_init(&f->a);
    f->cpu = fq_adm_resource(&f->a, "cpu");
    f->f0 = fq_adm_flavor(&f->a, "f0");
    f->f1 = fq_adm_flavor(&f->a, "f1");
    f->coh = fq_adm_add_node(&f->a, false);
    f->qa = fq_adm_add_cq(&f->a);
    f->qb = fq_adm_add_cq(&f->a);
    int flv[2] = {f->f0, f->f1};
    group(&f->a, f->qa, 2, flv);
    group(&f->a, f->qb, 1, flv);
    f->a.nodes[f->a.cqs[f->qa].node].parent = f->coh;
    f->a.nodes[f->a.cqs[f->qb].node].parent = f->coh;
    struct fq_adm_cell *c = fq_adm_cell(&f->a, f->a.cqs[f->qa].node, f->f0, 0);
    c->nominal = a_nom;
    c->borrow_limit = a_borrow;
    fq_adm_cell(&f->a, f->a.cqs[f->qa].node, f->f1, 0)->nominal = 100;
    c = fq_adm_cell(&f->a, f->a.cqs[f->qb].node, f->f0, 0);
    c->nominal = b_nom;
    c->lend_limit = b_lend;
    fq_adm_finish(&f->a);
}

struct wlbuf {
    struct fq_adm_wl w;
    struct fq_adm_podset ps;
    int64_t req[1];
};

static void mkwl(struct wlbuf *b, int cq, int32_t count, int64_t cpu,
                 int32_t prio)
{
    memset(b, 0, sizeof(*b));
    b->req[0] = cpu;
    b->ps.name = "main";
    b->ps.count = b->ps.min_count = count;
    b->ps.selector_ok = b->ps.taint_ok = ~0ull;
    b->ps.req = b->req;
    b->w.cq = cq;
    b->w.priority = prio;
    b->w.npodsets = 1;
    b->w.ps = &b->ps;
}

static void test_cohort_arithmetic(void **state)
{
    (void)state;
    struct fix f;
    /* a: 10 nominal; b: 10 nominal lending at most 4. */
    setup_fix(&f, 10, 10, FQ_ADM_UNLIMITED, 4);
    assert_int_equal(fq_adm_available(&f.a, f.qa, f.f0), 14);
    assert_int_equal(fq_adm_available(&f.a, f.qb, f.f0), 20);
    uint16_t fr = (uint16_t)f.f0;
    int64_t amt = 12;
    fq_adm_charge(&f.a, f.qa, 1, &fr, &amt, +1);
    assert_int_equal(fq_adm_available(&f.a, f.qa, f.f0), 2);
    /* b keeps its guaranteed 6 plus the 2 still unused in the cohort. */
    assert_int_equal(fq_adm_available(&f.a, f.qb, f.f0), 8);
    assert_int_equal(fq_adm_potential(&f.a, f.qa, f.f0), 14);
    fq_adm_charge(&f.a, f.qa, 1, &fr, &amt, -1);
    assert_int_equal(fq_adm_available(&f.a, f.qa, f.f0), 14);
    fq_adm_release(&f.a);

    /* A borrowingLimit caps what a takes from the cohort. */
    setup_fix(&f, 10, 10, 3, FQ_ADM_UNLIMITED);
    assert_int_equal(fq_adm_available(&f.a, f.qa, f.f0), 13);
    fq_adm_release(&f.a);
}

static void test_flavor_order_and_messages(void **state)
{
    (void)state;
    struct fix f;
    setup_fix(&f, 10, 0, 0, FQ_ADM_UNLIMITED);
    struct wlbuf b;
    struct fq_adm_result r;
    mkwl(&b, f.qa, 1, 8, 0);
    fq_adm_assign(&f.a, &b.w, NULL, 0, &r);
    assert_int_equal(r.mode, FQ_ADM_FIT);
    assert_int_equal(r.flv[0][0], f.f0);
    fq_adm_charge(&f.a, f.qa, r.nuse, r.use_fr, r.use_amt, +1);
    fq_adm_result_release(&r);
    /* f0 is full now: the next one goes to f1. */
    fq_adm_assign(&f.a, &b.w, NULL, 0, &r);
    assert_int_equal(r.mode, FQ_ADM_FIT);
    assert_int_equal(r.flv[0][0], f.f1);
    fq_adm_result_release(&r);
    /* Too big for either: the message names both flavors. */
    mkwl(&b, f.qa, 1, 200, 0);
    fq_adm_assign(&f.a, &b.w, NULL, 0, &r);
    assert_int_equal(r.mode, FQ_ADM_NOFIT);
    assert_int_equal(r.why, FQ_ADM_WHY_EXCEEDS_MAX_QUOTA);
    assert_non_null(strstr(r.msg, "couldn't assign flavors to pod set main"));
    assert_non_null(strstr(r.msg, "in flavor f1, request > maximum capacity"));
    fq_adm_result_release(&r);
    /* Cool-down puts f0 last. */
    mkwl(&b, f.qa, 1, 1, 0);
    b.w.avoid_flv = 1ull << f.f0;
    fq_adm_assign(&f.a, &b.w, NULL, 0, &r);
    assert_int_equal(r.flv[0][0], f.f1);
    fq_adm_result_release(&r);
    /* A taint not tolerated: NoMatchingFlavor when nothing else fits. */
    b.w.avoid_flv = 0;
    b.ps.taint_ok = 0;
    fq_adm_assign(&f.a, &b.w, NULL, 0, &r);
    assert_int_equal(r.mode, FQ_ADM_NOFIT);
    assert_int_equal(r.why, FQ_ADM_WHY_NO_MATCHING_FLAVOR);
    assert_non_null(strstr(r.msg, "untolerated taint in flavor f0"));
    fq_adm_result_release(&r);
    fq_adm_release(&f.a);
}

/* no_msg: the same outcome, no message. */
static void test_no_msg(void **state)
{
    (void)state;
    struct fix f;
    setup_fix(&f, 10, 0, 0, FQ_ADM_UNLIMITED);
    struct wlbuf b;
    struct fq_adm_result with, without;
    int64_t cpus[] = {8, 150, 200};
    for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
        mkwl(&b, f.qa, 1, cpus[i], 0);
        fq_adm_assign(&f.a, &b.w, NULL, 0, &with);
        b.w.no_msg = true;
        fq_adm_assign(&f.a, &b.w, NULL, 0, &without);
        assert_int_equal(without.mode, with.mode);
        assert_int_equal(without.why, with.why);
        assert_int_equal(without.borrows, with.borrows);
        assert_int_equal(without.flv[0][0], with.flv[0][0]);
        assert_int_equal(without.nuse, with.nuse);
        assert_string_equal(without.msg, "");
        if (with.mode != FQ_ADM_FIT)
            assert_true(with.msg[0] != '\0');
        fq_adm_result_release(&with);
        fq_adm_result_release(&without);
    }
    fq_adm_release(&f.a);
}

static void test_preemption_targets(void **state)
{
    (void)state;
    struct fix f;
    setup_fix(&f, 10, 0, 0, FQ_ADM_UNLIMITED);
    f.a.cqs[f.qa].within_cq = FQ_ADM_LOWER_PRIORITY;
    f.a.cqs[f.qa].can_preempt_try_next = false; /* MayStopSearch */
    /* Two low-priority holders of 4 and 5 cpu. */
    uint16_t fr = (uint16_t)f.f0;
    int64_t a4 = 4, a5 = 5;
    struct fq_adm_holder h[2] = {
        {.cq = f.qa,
         .priority = 1,
         .reserved_at = 1,
         .nuse = 1,
         .use_fr = &fr,
         .use_amt = &a4},
        {.cq = f.qa,
         .priority = 1,
         .reserved_at = 2,
         .nuse = 1,
         .use_fr = &fr,
         .use_amt = &a5},
    };
    fq_adm_charge(&f.a, f.qa, 1, &fr, &a4, +1);
    fq_adm_charge(&f.a, f.qa, 1, &fr, &a5, +1);
    struct wlbuf b;
    struct fq_adm_result r;
    mkwl(&b, f.qa, 1, 5, 10);
    fq_adm_assign(&f.a, &b.w, h, 2, &r);
    assert_int_equal(r.mode, FQ_ADM_PREEMPT);
    /* Most recently reserved first, and one is enough. */
    assert_int_equal(r.ntargets, 1);
    assert_int_equal(r.targets[0], 1);
    assert_int_equal(r.target_reason[0], FQ_ADM_IN_CLUSTER_QUEUE);
    fq_adm_result_release(&r);
    /* The tree is as it was. */
    assert_int_equal(fq_adm_available(&f.a, f.qa, f.f0), 1);
    /* Equal priority is not a target under LowerPriority. */
    mkwl(&b, f.qa, 1, 5, 1);
    fq_adm_assign(&f.a, &b.w, h, 2, &r);
    assert_int_not_equal(r.mode, FQ_ADM_PREEMPT);
    fq_adm_result_release(&r);
    fq_adm_release(&f.a);
}

static void test_partial_admission(void **state)
{
    (void)state;
    struct fix f;
    setup_fix(&f, 10, 0, 0, FQ_ADM_UNLIMITED);
    f.a.cqs[f.qa].groups[0].nflv = 1; /* f0 only */
    struct wlbuf b;
    struct fq_adm_result r;
    mkwl(&b, f.qa, 8, 2, 0); /* 16 cpu wanted, 10 there */
    b.ps.min_count = 2;
    fq_adm_assign(&f.a, &b.w, NULL, 0, &r);
    assert_int_equal(r.mode, FQ_ADM_FIT);
    assert_int_equal(r.count[0], 5);
    assert_int_equal(r.use_amt[0], 10);
    fq_adm_result_release(&r);
    fq_adm_release(&f.a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cohort_arithmetic),
        cmocka_unit_test(test_flavor_order_and_messages),
        cmocka_unit_test(test_no_msg),
        cmocka_unit_test(test_preemption_targets),
        cmocka_unit_test(test_partial_admission),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
