/*
 * test_alloc.c - the small-block allocator: blocks of every class and
 * beyond it hold what is written to them, freed blocks are handed out
 * again whole, and fq_small_grow keeps an array's elements. (In sanitizer
 * builds the same calls go to malloc and check each free's size.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/alloc.h"

static void test_sizes(void **state)
{
    (void)state;
    /* Every size up to past FQ_SMALL_MAX, each block filled to its end. */
    static unsigned char *blocks[FQ_SMALL_MAX + 40];
    size_t nb = sizeof(blocks) / sizeof(blocks[0]);
    for (size_t n = 0; n < nb; n++) {
        blocks[n] = fq_small_alloc(n);
        assert_non_null(blocks[n]);
        assert_int_equal((uintptr_t)blocks[n] % sizeof(void *), 0);
        memset(blocks[n], (int)(n & 0xff), n);
    }
    for (size_t n = 0; n < nb; n++)
        for (size_t i = 0; i < n; i++)
            assert_int_equal(blocks[n][i], n & 0xff);
    for (size_t n = 0; n < nb; n++)
        fq_small_free(blocks[n], n);
    fq_small_free(NULL, 48); /* a no-op, like free(NULL) */
}

static void test_reuse(void **state)
{
    (void)state;
    /* Freed blocks come back (from the cache, or from malloc) usable to
     * their full size, however often they go round. */
    for (int round = 0; round < 3; round++) {
        char *p[200];
        for (int i = 0; i < 200; i++) {
            size_t n = 1 + (size_t)(i * 7) % 300;
            p[i] = fq_small_alloc(n);
            memset(p[i], 'a' + round, n);
        }
        for (int i = 0; i < 200; i += 2)
            fq_small_free(p[i], 1 + (size_t)(i * 7) % 300);
        for (int i = 1; i < 200; i += 2) {
            size_t n = 1 + (size_t)(i * 7) % 300;
            assert_int_equal(p[i][0], 'a' + round);
            assert_int_equal(p[i][n - 1], 'a' + round);
            fq_small_free(p[i], n);
        }
    }
}

static void test_trim(void **state)
{
    (void)state;
    /* Emptying the cache (fq_small_trim) mid-use: blocks still held stay
     * intact and can be freed afterwards; allocation goes on. */
    char *held[64], *freed[64];
    for (int i = 0; i < 64; i++) {
        held[i] = fq_small_alloc(40);
        memset(held[i], 'h', 40);
        freed[i] = fq_small_alloc(40);
    }
    for (int i = 0; i < 64; i++)
        fq_small_free(freed[i], 40);
    fq_small_trim();
    fq_small_trim(); /* twice is harmless */
    for (int i = 0; i < 64; i++) {
        assert_int_equal(held[i][0], 'h');
        assert_int_equal(held[i][39], 'h');
        fq_small_free(held[i], 40);
    }
    char *p = fq_small_alloc(40);
    memset(p, 'x', 40);
    fq_small_free(p, 40);
}

static void test_grow(void **state)
{
    (void)state;
    uint64_t *a = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < 1000; i++) {
        FQ_SMALL_GROW(a, cap, i + 1);
        assert_true(cap >= i + 1);
        a[i] = i * 3;
    }
    for (size_t i = 0; i < 1000; i++)
        assert_int_equal(a[i], i * 3);
    FQ_SMALL_GROW(a, cap, 10); /* already big enough: nothing moves */
    assert_int_equal(a[999], 999 * 3);
    fq_small_free(a, cap * sizeof(*a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_trim),
        cmocka_unit_test(test_grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
