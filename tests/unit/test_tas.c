/*
 * test_tas.c - the topology placement of kueue/tas.c on hand-made leaves
 * (the worked example of its top comment, a required level that does
 * not fit, a preferred level that falls back up, a spread over the whole
 * topology), the dominant resource share of kueue/fairshare.c on a
 * small quota tree (its worked example, with a weight), and the reading
 * of Kueue's fairSharing and admissionFairSharing configuration (Kueue's
 * validation and defaults).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "flexq/engine.h"
#include "flexq/err.h"
#include "flexq/value.h"
#include "kueue/admission.h"
#include "kueue/fairshare.h"
#include "kueue/tas.h"

/* Racks r1 (nodes a: 2 pods, b: 2) and r2 (c: 4, d: 1), one block. */
static void leaves(struct fq_tas_leaf *l)
{
    static const char *const names[4][3] = {{"blk", "r1", "a"},
                                            {"blk", "r1", "b"},
                                            {"blk", "r2", "c"},
                                            {"blk", "r2", "d"}};
    static const int64_t caps[4] = {2, 2, 4, 1};
    memset(l, 0, 4 * sizeof(*l));
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 3; k++)
            l[i].values[k] = names[i][k];
        l[i].capacity = caps[i];
    }
}

static void test_required_best_fit(void **state)
{
    (void)state;
    struct fq_tas_leaf l[4];
    leaves(l);
    int64_t out[4] = {0}, most = 0;
    /* 3 in a rack: r1 (4) is the best fit before r2 (5); a 2, b 1. */
    assert_true(fq_tas_place(l, 4, 3, FQ_TAS_REQUIRED, 1, 3, out, &most));
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2] + out[3], 0);
    /* 5 in a rack: r2 has exactly 5; c takes 4, d 1. */
    memset(out, 0, sizeof(out));
    assert_true(fq_tas_place(l, 4, 3, FQ_TAS_REQUIRED, 1, 5, out, &most));
    assert_int_equal(out[2], 4);
    assert_int_equal(out[3], 1);
    /* 6 in a rack: none; at most 5 fit in one. Nothing written. */
    memset(out, 0, sizeof(out));
    assert_false(fq_tas_place(l, 4, 3, FQ_TAS_REQUIRED, 1, 6, out, &most));
    assert_int_equal(most, 5);
    assert_int_equal(out[0] + out[1] + out[2] + out[3], 0);
    /* 3 on one host: only c (4) takes them. */
    assert_true(fq_tas_place(l, 4, 3, FQ_TAS_REQUIRED, 2, 3, out, &most));
    assert_int_equal(out[2], 3);
}

static void test_preferred_goes_up_then_spreads(void **state)
{
    (void)state;
    struct fq_tas_leaf l[4];
    leaves(l);
    int64_t out[4] = {0}, most = 0;
    /* 6 preferred in a rack: no rack, the block takes them; the largest
     * rack first (r2: 5), then the best fit for the last one. */
    assert_true(fq_tas_place(l, 4, 3, FQ_TAS_PREFERRED, 1, 6, out, &most));
    assert_int_equal(out[2] + out[3], 5);
    assert_int_equal(out[0] + out[1], 1);
    /* 10 do not fit anywhere (9 in all). */
    memset(out, 0, sizeof(out));
    assert_false(fq_tas_place(l, 4, 3, FQ_TAS_PREFERRED, 1, 10, out, &most));
    assert_int_equal(most, 9);
    /* A second block: 9 preferred in a block spread over both. */
    struct fq_tas_leaf m[5];
    memcpy(m, l, sizeof(l));
    memset(&m[4], 0, sizeof(m[4]));
    m[4].values[0] = "blk2";
    m[4].values[1] = "r9";
    m[4].values[2] = "e";
    m[4].capacity = 3;
    int64_t o5[5] = {0};
    assert_true(fq_tas_place(m, 5, 3, FQ_TAS_PREFERRED, 0, 11, o5, &most));
    assert_int_equal(o5[0] + o5[1] + o5[2] + o5[3] + o5[4], 11);
    assert_int_equal(o5[4], 2);
    /* Unconstrained packs into the smallest host that fits. */
    memset(o5, 0, sizeof(o5));
    assert_true(fq_tas_place(m, 5, 3, FQ_TAS_UNCONSTRAINED, 0, 1, o5, &most));
    assert_int_equal(o5[3], 1);
}

/* fairshare.c's worked example: a borrows 4 of the 20 its cohort can
 * lend: 200 per mille, 100 with weight 2; b, idle, 0. */
static void test_dominant_resource_share(void **state)
{
    (void)state;
    struct fq_adm a;
    fq_adm_init(&a);
    int cpu = fq_adm_resource(&a, "cpu");
    int f = fq_adm_flavor(&a, "default");
    int co = fq_adm_add_node(&a, false);
    int qa = fq_adm_add_cq(&a), qb = fq_adm_add_cq(&a);
    a.nodes[a.cqs[qa].node].parent = co;
    a.nodes[a.cqs[qb].node].parent = co;
    fq_adm_cell(&a, a.cqs[qa].node, f, cpu)->nominal = 10000;
    fq_adm_cell(&a, a.cqs[qb].node, f, cpu)->nominal = 10000;
    a.nodes[a.cqs[qa].node].fair_weight_milli = 2000;
    fq_adm_finish(&a);
    uint16_t fr = (uint16_t)(f * a.nres + cpu);
    int64_t amt = 14000;
    fq_adm_charge(&a, qa, 1, &fr, &amt, +1);
    struct fq_fs_drs da, db;
    fq_fs_drs(&a, a.cqs[qa].node, &da);
    fq_fs_drs(&a, a.cqs[qb].node, &db);
    assert_true(da.borrowing);
    assert_true(da.ratio == 200.0);
    assert_int_equal(fq_fs_weighted_share(&da), 100);
    assert_int_equal(fq_fs_weighted_share(&db), 0);
    assert_true(fq_fs_cmp(&db, &da) < 0);
    /* A zero weight that borrows is the largest share there is. */
    a.nodes[a.cqs[qa].node].fair_weight_milli = 0;
    fq_fs_drs(&a, a.cqs[qa].node, &da);
    assert_true(fq_fs_weighted_share(&da) == INT64_MAX);
    fq_adm_charge(&a, qa, 1, &fr, &amt, -1);
    fq_adm_release(&a);
}

static int read_cfg(const char *json, struct fq_fair_sharing_config *c,
                    struct fq_err *err)
{
    struct fq_value *v = NULL;
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_json_parse(json, strlen(json), NULL, &lim, &v, NULL),
                     0);
    int rc = fq_fair_sharing_read(v, "config.yaml", c, err);
    fq_value_free(v);
    return rc;
}

static void test_fair_sharing_config(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    struct fq_fair_sharing_config *c = &cfg.fair_sharing;
    assert_false(c->enable); /* off by default, as in Kueue */
    assert_int_equal(c->nstrategies, 2);
    struct fq_err err = {0};
    assert_int_equal(read_cfg("{\"enable\": true, \"preemptionStrategies\": "
                              "[\"LessThanInitialShare\"]}",
                              c, &err),
                     0);
    assert_true(c->enable);
    assert_int_equal(c->nstrategies, 1);
    assert_int_equal(c->strategies[0], FQ_FS_LESS_THAN_INITIAL_SHARE);
    /* Unknown names and the wrong order are refused, nothing changed. */
    assert_int_equal(read_cfg("{\"enable\": false, \"preemptionStrategies\": "
                              "[\"Fairest\"]}",
                              c, &err),
                     FQ_EINVAL);
    assert_non_null(strstr(err.msg, "unknown strategy \"Fairest\""));
    assert_true(c->enable);
    assert_int_equal(
        read_cfg("{\"preemptionStrategies\": [\"LessThanInitialShare\", "
                 "\"LessThanOrEqualToFinalShare\"]}",
                 c, &err),
        FQ_EINVAL);
    assert_int_equal(c->nstrategies, 1);
}

static int read_afs(const char *json, struct fq_afs_config *c,
                    struct fq_err *err)
{
    struct fq_value *v = NULL;
    struct fq_limits lim = fq_limits_default();
    assert_int_equal(fq_json_parse(json, strlen(json), NULL, &lim, &v, NULL),
                     0);
    int rc = fq_afs_read(v, "config.yaml", c, err);
    fq_value_free(v);
    return rc;
}

static void test_admission_fair_sharing_config(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    struct fq_afs_config *c = &cfg.afs;
    assert_false(c->enable); /* off by default */
    struct fq_err err = {0};
    assert_int_equal(fq_afs_read(NULL, "x", c, &err), 0);
    assert_false(c->enable);
    /* Kueue's example configuration; the sampling interval defaults to
     * 5 minutes, a resource not listed weighs 1. */
    assert_int_equal(read_afs("{\"usageHalfLifeTime\": \"168h\", "
                              "\"resourceWeights\": {\"cpu\": 0, "
                              "\"example.com/gpu\": 100}}",
                              c, &err),
                     0);
    assert_true(c->enable);
    assert_true(c->half_life_ms == 168LL * 3600 * 1000);
    assert_true(c->sampling_ms == 5 * 60 * 1000);
    assert_true(fq_afs_weight(c, "cpu") == 0.0);
    assert_true(fq_afs_weight(c, "example.com/gpu") == 100.0);
    assert_true(fq_afs_weight(c, "memory") == 1.0);
    assert_int_equal(read_afs("{\"usageHalfLifeTime\": \"1h30m\", "
                              "\"usageSamplingInterval\": \"1.5s\"}",
                              c, &err),
                     0);
    assert_true(c->half_life_ms == 90 * 60 * 1000);
    assert_true(c->sampling_ms == 1500);
    assert_int_equal(c->nweights, 0);
    /* Kueue's validation: half-life >= 0, interval > 0, weights >= 0;
     * nothing changes on error. */
    assert_int_equal(read_afs("{\"usageHalfLifeTime\": \"-1m\"}", c, &err),
                     FQ_EINVAL);
    assert_non_null(strstr(err.msg, "usageHalfLifeTime"));
    assert_int_equal(read_afs("{\"usageSamplingInterval\": \"0s\"}", c, &err),
                     FQ_EINVAL);
    assert_non_null(strstr(err.msg, "usageSamplingInterval"));
    assert_int_equal(
        read_afs("{\"usageSamplingInterval\": \"5 min\"}", c, &err), FQ_EINVAL);
    assert_int_equal(read_afs("{\"resourceWeights\": {\"cpu\": -1}}", c, &err),
                     FQ_EINVAL);
    assert_non_null(strstr(err.msg, "resourceWeights.cpu"));
    assert_int_equal(read_afs("{\"usageHalfLife\": \"1h\"}", c, &err),
                     FQ_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key"));
    assert_true(c->half_life_ms == 90 * 60 * 1000);
    assert_true(c->sampling_ms == 1500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_required_best_fit),
        cmocka_unit_test(test_preferred_goes_up_then_spreads),
        cmocka_unit_test(test_dominant_resource_share),
        cmocka_unit_test(test_fair_sharing_config),
        cmocka_unit_test(test_admission_fair_sharing_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
