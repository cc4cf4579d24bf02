/*
 * smap.c - the string-keyed hash map of smap.h (FNV-1a hashes, a table
 * at most half full, doubled when it would pass that).
 *
 * Invariant: every key sits in the probe run that starts at its hash's
 * home slot, with no empty slot in between (deletion shifts later entries
 * of the run back into the hole instead of leaving tombstones).
 */
#include "smap.h"

#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

static uint64_t hash_str(const char *k)
{
    uint64_t h = 1469598103934665603ull;
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211ull;
    return h;
}

static struct fq_smap_ent *find(const struct fq_smap *s, const char *k)
{
    if (!s->cap)
        return NULL;
    uint64_t h = hash_str(k);
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        struct fq_smap_ent *e = &s->t[i];
        if (!e->key)
            return NULL;
        if (e->hash == h && !strcmp(e->key, k))
            return e;
    }
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

void fq_smap_put(struct fq_smap *s, const char *k, void *val)
{
    struct fq_smap_ent *e = find(s, k);
    if (e) {
        if (s->free_val && e->val && e->val != val)
            s->free_val(e->val);
        e->val = val;
        return;
    }
    if ((s->n + 1) * 2 > s->cap) {
        size_t ocap = s->cap;
        struct fq_smap_ent *old = s->t;
        s->cap = ocap ? ocap * 2 : 64;
        s->t = fq_xcalloc(s->cap, sizeof(*s->t));
        s->n = 0;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].key)
                insert_raw(s, old[i].key, old[i].hash, old[i].val);
        free(old);
    }
    insert_raw(s, fq_xstrdup(k), hash_str(k), val);
}

void *fq_smap_get(const struct fq_smap *s, const char *k)
{
    struct fq_smap_ent *e = find(s, k);
    return e ? e->val : NULL;
}

bool fq_smap_has(const struct fq_smap *s, const char *k)
{
    return find(s, k) != NULL;
}

void fq_smap_add(struct fq_smap *s, const char *k)
{
    if (!fq_smap_has(s, k))
        fq_smap_put(s, k, NULL);
}

void fq_smap_del(struct fq_smap *s, const char *k)
{
    struct fq_smap_ent *e = find(s, k);
    if (!e)
        return;
    size_t mask = s->cap - 1, i = (size_t)(e - s->t);
    free(e->key);
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
    for (size_t i = 0; i < s->cap; i++)
        if (s->t[i].key) {
            free(s->t[i].key);
            if (s->free_val && s->t[i].val)
                s->free_val(s->t[i].val);
            s->t[i].key = NULL;
        }
    s->n = 0;
}

void fq_smap_free(struct fq_smap *s)
{
    fq_smap_clear(s);
    free(s->t);
    s->t = NULL;
    s->cap = 0;
}
