/*
 * test_runhist.c - run-time guesses from history (src/core/views/runhist.c):
 * which level answers, the cap by a job's own limit, confidence, and what
 * is left of a running job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "flexq/runhist.h"

static void test_levels(void **state)
{
    (void)state;
    struct fq_runhist *h = fq_runhist_new();
    struct fq_runhist_guess g;
    /* Nothing known: the default, low. */
    fq_runhist_guess(h, "u7", "q", 8, -1, &g);
    assert_int_equal(g.src, FQ_RUNHIST_DEFAULT);
    assert_int_equal(g.run_ms, FQ_RUNHIST_DEFAULT_MS);
    assert_int_equal(g.conf, FQ_RUNHIST_LOW);
    /* The user's last two runs: 600 s and 1,000 s -> 800 s, high. */
    fq_runhist_add(h, "u7", "q", 8, 100000, -1);
    fq_runhist_add(h, "u7", "q", 8, 600000, -1);
    fq_runhist_add(h, "u7", "q", 8, 1000000, -1);
    fq_runhist_guess(h, "u7", "q", 8, -1, &g);
    assert_int_equal(g.src, FQ_RUNHIST_USER);
    assert_int_equal(g.run_ms, 800000);
    assert_int_equal(g.conf, FQ_RUNHIST_HIGH);
    /* ... capped by the job's own limit. */
    fq_runhist_guess(h, "u7", "q", 8, 500000, &g);
    assert_int_equal(g.run_ms, 500000);
    /* Another user, same queue and size: the mean of the size's runs. */
    fq_runhist_guess(h, "u8", "q", 8, -1, &g);
    assert_int_equal(g.src, FQ_RUNHIST_SHAPE);
    assert_int_equal(g.run_ms, (100000 + 600000 + 1000000) / 3);
    assert_int_equal(g.conf, FQ_RUNHIST_MEDIUM); /* within a factor of 10 */
    /* Another size: the queue's; another queue: all runs. */
    fq_runhist_guess(h, "", "q", 1, -1, &g);
    assert_int_equal(g.src, FQ_RUNHIST_QUEUE);
    fq_runhist_guess(h, "", "other", 1, -1, &g);
    assert_int_equal(g.src, FQ_RUNHIST_ALL);
    fq_runhist_free(h);
}

/* A new user's job with a 3,600 s limit, when past jobs used a median 25%
 * of their limits: 900 s, medium. */
static void test_limit(void **state)
{
    (void)state;
    struct fq_runhist *h = fq_runhist_new();
    struct fq_runhist_guess g;
    fq_runhist_guess(h, "new", "", 1, 3600000, &g);
    assert_int_equal(g.src, FQ_RUNHIST_LIMIT);
    assert_int_equal(g.run_ms, 3600000);
    assert_int_equal(g.conf, FQ_RUNHIST_LOW);
    fq_runhist_add(h, "a", "", 1, 250000, 1000000);
    fq_runhist_add(h, "b", "", 1, 100000, 1000000);
    fq_runhist_add(h, "c", "", 1, 900000, 1000000);
    fq_runhist_guess(h, "new", "", 1, 3600000, &g);
    assert_int_equal(g.src, FQ_RUNHIST_LIMIT);
    assert_int_equal(g.run_ms, 900000);
    assert_int_equal(g.conf, FQ_RUNHIST_MEDIUM);
    fq_runhist_free(h);
}

static void test_left(void **state)
{
    (void)state;
    /* Before its guess: the rest of it. */
    assert_int_equal(fq_runhist_left(3600000, 600000, -1), 3000000);
    /* Past it: about as long again as it has run. */
    assert_int_equal(fq_runhist_left(3600000, 7200000, -1), 7200000);
    /* ... but not past its limit, and never under a minute. */
    assert_int_equal(fq_runhist_left(3600000, 7200000, 8000000), 800000);
    assert_int_equal(fq_runhist_left(1000, 0, -1), 60000);
    assert_int_equal(fq_runhist_left(3600000, 3600000, 3600000), 60000);
}

/* Many users: the table grows and keeps every one. */
static void test_many_keys(void **state)
{
    (void)state;
    struct fq_runhist *h = fq_runhist_new();
    char user[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(user, sizeof(user), "user%d", i);
        fq_runhist_add(h, user, "q", 1, 1000 * (i + 1), -1);
    }
    struct fq_runhist_guess g;
    fq_runhist_guess(h, "user4321", "q", 1, -1, &g);
    assert_int_equal(g.src, FQ_RUNHIST_USER);
    assert_int_equal(g.run_ms, 4322000);
    assert_int_equal(g.conf, FQ_RUNHIST_MEDIUM); /* one run */
    fq_runhist_free(h);
}

/* Share guesses: the job's limit x the mean share of their limits the
 * user's runs used; without a limit, or without such runs, the plain
 * guess. */
static void test_share(void **state)
{
    (void)state;
    struct fq_runhist *h = fq_runhist_new();
    fq_runhist_add(h, "u7", "q", 8, 600000, 3000000);   /* 20% */
    fq_runhist_add(h, "u7", "q", 8, 4000000, 10000000); /* 40% */
    fq_runhist_add(h, "u8", "q", 8, 5000000, -1);       /* no limit */
    struct fq_runhist_guess g, plain;
    fq_runhist_guess_share(h, "u7", "q", 8, 36000000, &g);
    assert_int_equal(g.run_ms, 10800000); /* 30% of 10 h */
    assert_int_equal(g.src, FQ_RUNHIST_USER);
    assert_int_equal(g.conf, FQ_RUNHIST_HIGH);
    /* The plain guess would say the mean of the last two runs. */
    fq_runhist_guess(h, "u7", "q", 8, 36000000, &plain);
    assert_int_equal(plain.run_ms, 2300000);
    /* A run over its limit counts as all of it: never over the limit. */
    fq_runhist_add(h, "u9", "q", 1, 9000000, 1000000);
    fq_runhist_guess_share(h, "u9", "q", 1, 2000000, &g);
    assert_int_equal(g.run_ms, 2000000);

    /* No limit, or no runs with one: the plain guess. */
    static const struct {
        const char *user;
        int64_t limit;
    } same[] = {{"u7", -1}, {"u8", 7200000}, {"nobody", 7200000}};

    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        fq_runhist_guess_share(h, same[i].user, "q", 8, same[i].limit, &g);
        fq_runhist_guess(h, same[i].user, "q", 8, same[i].limit, &plain);
        assert_int_equal(g.run_ms, plain.run_ms);
        assert_int_equal(g.src, plain.src);
        assert_int_equal(g.conf, plain.conf);
    }
    fq_runhist_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels), cmocka_unit_test(test_limit),
        cmocka_unit_test(test_left),   cmocka_unit_test(test_many_keys),
        cmocka_unit_test(test_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
