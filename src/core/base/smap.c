/*
 * smap.c - the string-keyed hash map of smap.h (FNV-1a hashes, a table
 * at most half full, doubled when it would pass that, and halved when a
 * deletion leaves it under an eighth full).
 *
 * Hashing a key is most of what an operation costs (keys are "ns/name",
 * a few dozen bytes at a few instructions each), so each operation hashes
 * its key once, and the hash is kept in the slot for growing and for
 * deletion's shifts. The hash function stays FNV-1a: iteration follows
 * it, and callers that walk the table (smap.h) must see the same order
 * run after run and release after release. Keys are small blocks
 * (alloc.h) of strlen + 1 bytes.
 *
 * Invariant: every key sits in the probe run that starts at its hash's
 * home slot, with no empty slot in between (deletion shifts later entries
 * of the run back into the hole instead of leaving tombstones).
 */
#include "base/smap.h"

#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

/* FNV-1a of k. Measured first (strlen reads a word at a time), so that
 * the byte loop has a known count and is unrolled: a step per byte is
 * then a load, a xor and a multiply, without the test for the NUL and
 * the branch, which were half of it. */
static uint64_t hash_str(const char *k)
{
    const unsigned char *p = (const unsigned char *)k;
    size_t n = strlen(k);
    uint64_t h = 1469598103934665603ull;
#pragma GCC unroll 8
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* The entry of k, whose hash is h, or NULL. */
static struct fq_smap_ent *find_h(const struct fq_smap *s, const char *k,
                                  uint64_t h)
{
    if (!s->cap)
        return NULL;
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        struct fq_smap_ent *e = &s->t[i];
        if (!e->key)
            return NULL;
        if (e->hash == h && !strcmp(e->key, k))
            return e;
    }
}

static struct fq_smap_ent *find(const struct fq_smap *s, const char *k)
{
    return s->cap ? find_h(s, k, hash_str(k)) : NULL;
}

static char *key_dup(const char *k)
{
    size_t n = strlen(k) + 1;
    return memcpy(fq_small_alloc(n), k, n);
}

static void key_free(char *k)
{
    fq_small_free(k, strlen(k) + 1);
}

static void insert_raw(struct fq_smap *s, char *key, uint64_t h, void *val)
{
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1))
        if (!s->t[i].key) {
            s->t[i].key = key;
            s->t[i].hash = h;
            s->t[i].val = val;
            s->n++;
            return;
        }
}

/* Moves the entries to a table of ncap slots (a power of two, > n). */
static void resize(struct fq_smap *s, size_t ncap)
{
    size_t ocap = s->cap;
    struct fq_smap_ent *old = s->t;
    s->cap = ncap;
    s->t = fq_xcalloc(s->cap, sizeof(*s->t));
    s->n = 0;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].key)
            insert_raw(s, old[i].key, old[i].hash, old[i].val);
    free(old);
}

/* Adds k (absent; its hash is h), doubling the table first when it would
 * be more than half full. */
static void put_new(struct fq_smap *s, const char *k, uint64_t h, void *val)
{
    if ((s->n + 1) * 2 > s->cap)
        resize(s, s->cap ? s->cap * 2 : 64);
    insert_raw(s, s->borrow_keys ? (char *)k : key_dup(k), h, val);
}

uint64_t fq_smap_hash(const char *k)
{
    return hash_str(k);
}

void fq_smap_put(struct fq_smap *s, const char *k, void *val)
{
    fq_smap_put_h(s, k, hash_str(k), val);
}

void fq_smap_put_h(struct fq_smap *s, const char *k, uint64_t h, void *val)
{
    struct fq_smap_ent *e = find_h(s, k, h);
    if (e) {
        if (s->free_val && e->val && e->val != val)
            s->free_val(e->val);
        if (s->borrow_keys)
            e->key = (char *)k; /* the old one may have gone with its value */
        e->val = val;
        return;
    }
    put_new(s, k, h, val);
}

void *fq_smap_get(const struct fq_smap *s, const char *k)
{
    struct fq_smap_ent *e = find(s, k);
    return e ? e->val : NULL;
}

void *fq_smap_get_h(const struct fq_smap *s, const char *k, uint64_t h)
{
    struct fq_smap_ent *e = find_h(s, k, h);
    return e ? e->val : NULL;
}

bool fq_smap_has(const struct fq_smap *s, const char *k)
{
    return find(s, k) != NULL;
}

bool fq_smap_has_h(const struct fq_smap *s, const char *k, uint64_t h)
{
    return find_h(s, k, h) != NULL;
}

void fq_smap_add(struct fq_smap *s, const char *k)
{
    fq_smap_add_h(s, k, hash_str(k));
}

void fq_smap_add_h(struct fq_smap *s, const char *k, uint64_t h)
{
    if (!find_h(s, k, h))
        put_new(s, k, h, NULL);
}

void fq_smap_del(struct fq_smap *s, const char *k)
{
    if (s->cap)
        fq_smap_del_h(s, k, hash_str(k));
}

void fq_smap_del_h(struct fq_smap *s, const char *k, uint64_t h)
{
    struct fq_smap_ent *e = find_h(s, k, h);
    if (!e)
        return;
    size_t mask = s->cap - 1, i = (size_t)(e - s->t);
    if (!s->borrow_keys)
        key_free(e->key);
    if (s->free_val && e->val)
        s->free_val(e->val);
    e->key = NULL;
    s->n--;
    for (size_t j = (i + 1) & mask; s->t[j].key; j = (j + 1) & mask) {
        size_t home = s->t[j].hash & mask;
        bool move = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (move) {
            s->t[i] = s->t[j];
            s->t[j].key = NULL;
            i = j;
        }
    }
    /* Under an eighth full: halved (to under a quarter full), so that a
     * map emptied after a burst gives its table back, while a map that
     * shrank must double its entries before it grows again and halve
     * them before it shrinks again: amortised, never per operation. */
    if (s->cap > 64 && s->n * 8 < s->cap)
        resize(s, s->cap / 2);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t fq_smap_sorted_keys(const struct fq_smap *s,
                           bool (*keep)(const void *val), const char ***out)
{
    const char **v = fq_xcalloc(s->n + 1, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < s->cap; i++)
        if (s->t[i].key && (!keep || keep(s->t[i].val)))
            v[n++] = s->t[i].key;
    if (n > 1)
        qsort(v, n, sizeof(*v), key_cmp);
    *out = v;
    return n;
}

void fq_smap_clear(struct fq_smap *s)
{
    /* Stops at the last entry: the sets cleared after each run hold a few
     * keys in a table sized for their busiest run. */
    for (size_t i = 0; i < s->cap && s->n; i++)
        if (s->t[i].key) {
            if (!s->borrow_keys)
                key_free(s->t[i].key);
            if (s->free_val && s->t[i].val)
                s->free_val(s->t[i].val);
            s->t[i].key = NULL;
            s->n--;
        }
}

void fq_smap_free(struct fq_smap *s)
{
    fq_smap_clear(s);
    free(s->t);
    s->t = NULL;
    s->cap = 0;
}
