/*
 * test_alloc.c - the small-block allocator: blocks of every class and
 * beyond it hold what is written to them, freed blocks are handed out
 * again whole, fq_small_trim gives freed slabs back and keeps what live
 * blocks hold, and fq_small_grow keeps an array's elements. (In sanitizer
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

/* Enough 48-byte blocks to pass the trim's 16 MiB threshold. */
#define MANY 500000

static void test_trim_gives_back(void **state)
{
    (void)state;
    /* After a mass free the slabs go back: the mapped bytes return to
     * about where they were (the slab being cut stays). */
    size_t m0 = fq_small_mapped();
    char **b = malloc(MANY * sizeof(*b));
    assert_non_null(b);
    for (size_t i = 0; i < MANY; i++) {
        b[i] = fq_small_alloc(48);
        memset(b[i], 'a', 48);
    }
    size_t m1 = fq_small_mapped();
    if (m0 || m1) /* sanitizer builds map no slabs */
        assert_true(m1 >= m0 + (size_t)MANY * 48);
    for (size_t i = 0; i < MANY; i++)
        fq_small_free(b[i], 48);
    fq_small_trim();
    size_t m2 = fq_small_mapped();
    assert_true(m2 <= m0 + ((size_t)2 << 20));

    /* A few live blocks pin their pages: what they hold survives the
     * trim, and the freed blocks around them (whose pages may have been
     * given back) serve new allocations whole. */
    for (size_t i = 0; i < MANY; i++) {
        b[i] = fq_small_alloc(48);
        memset(b[i], (int)('a' + i % 26), 48);
    }
    for (size_t i = 0; i < MANY; i++)
        if (i % 5000)
            fq_small_free(b[i], 48);
    fq_small_trim();
    if (m0 || m1)
        assert_true(fq_small_mapped() > m2); /* pinned slabs stay */
    for (size_t i = 0; i < MANY; i += 5000) {
        assert_int_equal(b[i][0], 'a' + i % 26);
        assert_int_equal(b[i][47], 'a' + i % 26);
    }
    for (size_t i = 0; i < MANY; i++) {
        if (i % 5000 == 0)
            continue;
        b[i] = fq_small_alloc(48);
        memset(b[i], 'z', 48);
    }
    for (size_t i = 0; i < MANY; i++) {
        assert_int_equal(b[i][47], i % 5000 ? 'z' : 'a' + i % 26);
        fq_small_free(b[i], 48);
    }
    fq_small_trim();
    assert_true(fq_small_mapped() <= m0 + ((size_t)2 << 20));
    free(b);
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
        cmocka_unit_test(test_sizes), cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_trim),  cmocka_unit_test(test_trim_gives_back),
        cmocka_unit_test(test_grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
