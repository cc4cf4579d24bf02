/*
 * test_keyq.c - the dirty-key queue: marked keys read back each once in
 * the store's order whatever order they came in, add2's "ns/name" keys,
 * clear and reuse, and timers: the earliest per key wins, a fired timer
 * marks its key once, a stale one is skipped, next says when.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/keyq.h"

static void test_take_sorted_once(void **state)
{
    (void)state;
    struct fq_keyq q;
    fq_keyq_init(&q);
    assert_true(fq_keyq_empty(&q));
    fq_keyq_add(&q, "a/x");
    fq_keyq_add2(&q, "a-b", "x");
    fq_keyq_add2(&q, "a", "x");
    fq_keyq_add(&q, "a/b");
    fq_keyq_add2(&q, NULL, "z");
    assert_false(fq_keyq_empty(&q));
    const char *const *keys;
    size_t n = fq_keyq_take(&q, &keys);
    /* by namespace first: "a" before "a-b" (strcmp would not say so) */
    assert_int_equal(n, 4);
    assert_string_equal(keys[0], "/z");
    assert_string_equal(keys[1], "a/b");
    assert_string_equal(keys[2], "a/x");
    assert_string_equal(keys[3], "a-b/x");
    fq_keyq_clear(&q);
    assert_true(fq_keyq_empty(&q));
    assert_int_equal(fq_keyq_take(&q, &keys), 0);
    fq_keyq_add(&q, "b/c");
    assert_int_equal(fq_keyq_take(&q, &keys), 1);
    assert_string_equal(keys[0], "b/c");
    fq_keyq_release(&q);
}

static void test_timers(void **state)
{
    (void)state;
    struct fq_keyq q;
    fq_keyq_init(&q);
    assert_int_equal(fq_keyq_next(&q), INT64_MAX);
    fq_keyq_timer2(&q, "ns", "b", 200);
    fq_keyq_timer2(&q, "ns", "c", 100);
    fq_keyq_timer2(&q, "ns", "c", 100); /* a repeat */
    fq_keyq_timer2(&q, "ns", "c", 300); /* later than c's: dropped */
    fq_keyq_timer2(&q, "ns", "b", 50);  /* earlier: b's first look */
    assert_int_equal(fq_keyq_next(&q), 50);

    fq_keyq_fire(&q, 49);
    assert_true(fq_keyq_empty(&q));
    fq_keyq_fire(&q, 150);
    const char *const *keys;
    size_t n = fq_keyq_take(&q, &keys);
    assert_int_equal(n, 2);
    assert_string_equal(keys[0], "ns/b");
    assert_string_equal(keys[1], "ns/c");
    fq_keyq_clear(&q);

    /* b's timer at 200 was stale once b was looked at 50: nothing due */
    fq_keyq_fire(&q, 1000);
    assert_true(fq_keyq_empty(&q));
    assert_int_equal(fq_keyq_next(&q), INT64_MAX);

    /* a look that arms again after its timer fired is kept */
    fq_keyq_timer(&q, "ns/b", 2000);
    assert_int_equal(fq_keyq_next(&q), 2000);
    fq_keyq_fire(&q, 2000);
    assert_int_equal(fq_keyq_take(&q, &keys), 1);
    assert_string_equal(keys[0], "ns/b");
    fq_keyq_release(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take_sorted_once),
        cmocka_unit_test(test_timers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
