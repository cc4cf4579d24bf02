/*
 * test_smap.c - the core's string-keyed hash map: put/get/has/add/del
 * through growth and deletion's backward shifts, owned values, clear and
 * reuse, sorted keys, an iteration order that is FNV-1a's (callers
 * walk the table, so it must not change from release to release), and
 * borrowed keys held by the values they name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/smap.h"

static int freed;

static void count_free(void *v)
{
    freed++;
    free(v);
}

static void test_ops(void **state)
{
    (void)state;
    struct fq_smap m = {0};
    char k[64];
    for (int i = 0; i < 1000; i++) {
        snprintf(k, sizeof(k), "default/job-%d", i);
        fq_smap_put(&m, k, (void *)(intptr_t)(i + 1));
    }
    assert_int_equal(m.n, 1000);
    for (int i = 0; i < 1000; i++) {
        snprintf(k, sizeof(k), "default/job-%d", i);
        assert_int_equal((intptr_t)fq_smap_get(&m, k), i + 1);
    }
    assert_null(fq_smap_get(&m, "default/job-1000"));
    assert_false(fq_smap_has(&m, ""));
    /* Deleting every other key keeps the rest reachable (the shifts). */
    for (int i = 0; i < 1000; i += 2) {
        snprintf(k, sizeof(k), "default/job-%d", i);
        fq_smap_del(&m, k);
    }
    fq_smap_del(&m, "absent");
    assert_int_equal(m.n, 500);
    for (int i = 0; i < 1000; i++) {
        snprintf(k, sizeof(k), "default/job-%d", i);
        assert_int_equal(fq_smap_has(&m, k), i % 2 == 1);
    }
    /* add keeps a present key's value; put replaces it. */
    fq_smap_add(&m, "default/job-1");
    assert_int_equal((intptr_t)fq_smap_get(&m, "default/job-1"), 2);
    fq_smap_add(&m, "new");
    assert_true(fq_smap_has(&m, "new"));
    assert_null(fq_smap_get(&m, "new"));
    fq_smap_put(&m, "new", (void *)7);
    assert_int_equal((intptr_t)fq_smap_get(&m, "new"), 7);
    fq_smap_put(&m, "", (void *)8);
    assert_int_equal((intptr_t)fq_smap_get(&m, ""), 8);
    size_t cap = m.cap;
    fq_smap_clear(&m);
    assert_int_equal(m.n, 0);
    assert_int_equal(m.cap, cap); /* the table stays */
    for (size_t i = 0; i < m.cap; i++)
        assert_null(m.t[i].key);
    fq_smap_put(&m, "again", (void *)9);
    assert_int_equal((intptr_t)fq_smap_get(&m, "again"), 9);
    fq_smap_free(&m);
    assert_int_equal(m.cap, 0);
    assert_null(fq_smap_get(&m, "again"));
}

static void test_owned_values(void **state)
{
    (void)state;
    struct fq_smap m = {.free_val = count_free};
    freed = 0;
    fq_smap_put(&m, "a", malloc(4));
    fq_smap_put(&m, "b", malloc(4));
    fq_smap_put(&m, "c", malloc(4));
    fq_smap_put(&m, "a", malloc(4)); /* the old value is freed */
    assert_int_equal(freed, 1);
    fq_smap_del(&m, "b");
    assert_int_equal(freed, 2);
    fq_smap_clear(&m);
    assert_int_equal(freed, 4);
    fq_smap_free(&m);
    assert_int_equal(freed, 4);
}

/* A value that holds its own key, as the kueue controller's records do. */
struct named {
    char key[16];
    int n;
};

static struct named *named(const char *key, int n)
{
    struct named *v = calloc(1, sizeof(*v));
    snprintf(v->key, sizeof(v->key), "%s", key);
    v->n = n;
    return v;
}

/* borrow_keys: the map keeps the pointer it was given; entries whose
 * values (and keys with them) are freed by free_val go through growth,
 * deletion's shifts, a replacement and clear, and every lookup finds
 * what was put (ASan runs this too: no key is read after its value is
 * freed, none is freed twice). */
static void test_borrowed_keys(void **state)
{
    (void)state;
    struct fq_smap m = {.free_val = count_free, .borrow_keys = true};
    freed = 0;

    enum {
        N = 1000
    };

    for (int i = 0; i < N; i++) {
        char k[16];
        snprintf(k, sizeof(k), "ns/w%d", i);
        struct named *v = named(k, i);
        fq_smap_put(&m, v->key, v);
    }
    assert_int_equal(m.n, N);
    for (int i = 0; i < N; i += 2) {
        char k[16];
        snprintf(k, sizeof(k), "ns/w%d", i);
        fq_smap_del(&m, k); /* frees the value, and its key with it */
    }
    assert_int_equal(freed, N / 2);
    /* A replacement: the old value (and the key the slot held) goes,
     * the slot takes the new value's key. */
    struct named *r = named("ns/w1", -1);
    fq_smap_put(&m, r->key, r);
    assert_int_equal(freed, N / 2 + 1);
    for (int i = 0; i < N; i++) {
        char k[16];
        snprintf(k, sizeof(k), "ns/w%d", i);
        struct named *v = fq_smap_get(&m, k);
        if (i % 2 == 0) {
            assert_null(v);
        } else {
            assert_non_null(v);
            assert_string_equal(v->key, k);
            assert_int_equal(v->n, i == 1 ? -1 : i);
        }
    }
    size_t found = 0;
    for (size_t i = 0; i < m.cap; i++)
        if (m.t[i].key) {
            struct named *v = m.t[i].val;
            assert_ptr_equal(m.t[i].key, v->key); /* borrowed, not copied */
            found++;
        }
    assert_int_equal(found, N / 2);
    fq_smap_free(&m);
    assert_int_equal(freed, N + 1);
}

static bool odd(const void *val)
{
    return (intptr_t)val % 2 == 1;
}

static void test_sorted_and_order(void **state)
{
    (void)state;
    struct fq_smap m = {0};
    const char *words[] = {"pear", "apple", "fig", "kiwi", "date", "lime"};
    for (int i = 0; i < 6; i++)
        fq_smap_put(&m, words[i], (void *)(intptr_t)i);
    const char **keys;
    size_t n = fq_smap_sorted_keys(&m, NULL, &keys);
    assert_int_equal(n, 6);
    const char *want[] = {"apple", "date", "fig", "kiwi", "lime", "pear"};
    for (size_t i = 0; i < n; i++)
        assert_string_equal(keys[i], want[i]);
    free(keys);
    n = fq_smap_sorted_keys(&m, odd, &keys);
    assert_int_equal(n, 3); /* apple 1, kiwi 3, lime 5 */
    assert_string_equal(keys[0], "apple");
    assert_string_equal(keys[2], "lime");
    free(keys);
    /* Each key sits at (or just after) its FNV-1a home slot in a table of
     * 64: the order in which callers walk it. */
    for (int i = 0; i < 6; i++) {
        uint64_t h = 1469598103934665603ull;
        for (const char *p = words[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        size_t home = h & 63, at = home;
        while (strcmp(m.t[at].key ? m.t[at].key : "", words[i]))
            at = (at + 1) & 63;
        assert_true(at == home || m.t[home].key);
        assert_int_equal(m.t[at].hash, h);
    }
    fq_smap_free(&m);
}

/* A map emptied after a burst gives its table back, halving at each
 * eighth; what stays is still found, and refilling grows it again. */
static void test_shrinks_when_emptied(void **state)
{
    (void)state;
    struct fq_smap m = {0};
    char k[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(k, sizeof(k), "ns/wl-%d", i);
        fq_smap_put(&m, k, (void *)(intptr_t)(i + 1));
    }
    size_t peak = m.cap;
    assert_true(peak >= 40000);
    for (int i = 10; i < 20000; i++) {
        snprintf(k, sizeof(k), "ns/wl-%d", i);
        fq_smap_del(&m, k);
        /* never more than half full, never (above the minimum) under an
         * eighth: the table follows the count both ways */
        assert_true(m.n * 2 <= m.cap);
        assert_true(m.cap == 64 || m.n * 8 >= m.cap);
    }
    assert_int_equal(m.n, 10);
    assert_int_equal(m.cap, 64);
    for (int i = 0; i < 10; i++) {
        snprintf(k, sizeof(k), "ns/wl-%d", i);
        assert_int_equal((intptr_t)fq_smap_get(&m, k), i + 1);
    }
    snprintf(k, sizeof(k), "ns/wl-%d", 10);
    assert_false(fq_smap_has(&m, k));
    for (int i = 10; i < 5000; i++) {
        snprintf(k, sizeof(k), "ns/wl-%d", i);
        fq_smap_add(&m, k);
    }
    assert_int_equal(m.n, 5000);
    assert_true(m.cap >= 10000 && m.cap < peak);
    fq_smap_free(&m);
}

/* The _h variants, given fq_smap_hash of the key, build and read the
 * same table as the plain calls (a key hashed once by the engine is
 * filed where a controller's own lookup finds it), and that hash is the
 * FNV-1a the table walks in. */
static void test_prehashed(void **state)
{
    (void)state;
    struct fq_smap a = {0}, b = {0};
    char k[32];
    for (int i = 0; i < 300; i++) {
        snprintf(k, sizeof(k), "team-%d/job-%d", i % 7, i);
        uint64_t h = fq_smap_hash(k);
        uint64_t fnv = 1469598103934665603ull;
        for (const char *p = k; *p; p++)
            fnv = (fnv ^ (unsigned char)*p) * 1099511628211ull;
        assert_int_equal(h, fnv);
        fq_smap_put(&a, k, (void *)(intptr_t)(i + 1));
        if (i % 2)
            fq_smap_put_h(&b, k, h, (void *)(intptr_t)(i + 1));
        else {
            fq_smap_add_h(&b, k, h); /* then set, as a set becomes a map */
            fq_smap_put(&b, k, (void *)(intptr_t)(i + 1));
        }
    }
    assert_int_equal(a.cap, b.cap);
    for (size_t i = 0; i < a.cap; i++) {
        assert_int_equal(a.t[i].key == NULL, b.t[i].key == NULL);
        if (a.t[i].key)
            assert_string_equal(a.t[i].key, b.t[i].key);
    }
    for (int i = 0; i < 300; i += 3) {
        snprintf(k, sizeof(k), "team-%d/job-%d", i % 7, i);
        uint64_t h = fq_smap_hash(k);
        assert_int_equal((intptr_t)fq_smap_get_h(&b, k, h), i + 1);
        assert_true(fq_smap_has_h(&b, k, h));
        fq_smap_del_h(&b, k, h);
        assert_false(fq_smap_has_h(&b, k, h));
        assert_null(fq_smap_get(&b, k));
        /* a second add of a present key adds nothing */
        snprintf(k, sizeof(k), "team-%d/job-%d", (i + 1) % 7, i + 1);
        size_t n = b.n;
        fq_smap_add_h(&b, k, fq_smap_hash(k));
        assert_int_equal(b.n, n);
    }
    assert_int_equal(b.n, 200);
    assert_null(fq_smap_get_h(&b, "none/such", fq_smap_hash("none/such")));
    fq_smap_free(&a);
    fq_smap_free(&b);
    /* an empty map answers without a table */
    assert_null(fq_smap_get_h(&a, "x", fq_smap_hash("x")));
    fq_smap_del_h(&a, "x", fq_smap_hash("x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_owned_values),
        cmocka_unit_test(test_borrowed_keys),
        cmocka_unit_test(test_sorted_and_order),
        cmocka_unit_test(test_shrinks_when_emptied),
        cmocka_unit_test(test_prehashed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
