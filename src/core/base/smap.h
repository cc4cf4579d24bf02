/*
 * smap.h - the string-keyed hash map of the core's controllers (the
 * object store keeps its own index, tuned to its kinds).
 *
 * Open addressing with linear probing and deletion by backward shift;
 * keys are copied, values are borrowed unless free_val is set (then the
 * map frees a value when it is replaced or removed). Used as a set (value
 * NULL) and as a cache from "ns/name" to decoded state.
 *
 * Iteration: slots 0..cap-1 of `t`, skipping those whose key is NULL;
 * the order is the hash order, so code that must be deterministic in
 * what it writes sorts what it collects. Not thread-safe (nothing in the
 * core is).
 *
 * A primitive of the base layer (src/core/base/): it knows nothing of
 * objects, Kubernetes or the engine, and must not grow calls into higher
 * layers. There is one of it; use it rather than writing another.
 */
#ifndef FLEXQ_SMAP_H
#define FLEXQ_SMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fq_smap_ent {
    char *key; /* owned; NULL = empty slot */
    uint64_t hash;
    void *val;
};

struct fq_smap {
    struct fq_smap_ent *t;
    size_t cap, n; /* cap is 0 or a power of two */
    void (*free_val)(void *);
    /* Set before the first put: keys are borrowed, not copied. Each key
     * put must stay valid and unchanged while its entry is in the map
     * (a value that holds its own key and is freed by free_val: a
     * million-entry map then keeps no second copy of each key). */
    bool borrow_keys;
};

/*
 * The hash the map files k under (FNV-1a of its bytes). A caller that
 * looks one key up in several maps, or the same key again and again (the
 * engine hands each change notice's "ns/name" key and its hash to every
 * watcher, struct fq_change), works it out once and calls the _h
 * variants below, which take it instead of hashing k again: hashing a key
 * of a few dozen bytes costs more than the rest of a lookup. h must be
 * fq_smap_hash(k).
 */
uint64_t fq_smap_hash(const char *k);
void *fq_smap_get_h(const struct fq_smap *s, const char *k, uint64_t h);
bool fq_smap_has_h(const struct fq_smap *s, const char *k, uint64_t h);
void fq_smap_put_h(struct fq_smap *s, const char *k, uint64_t h, void *val);
void fq_smap_add_h(struct fq_smap *s, const char *k, uint64_t h);
void fq_smap_del_h(struct fq_smap *s, const char *k, uint64_t h);

/* Sets k to val (replacing, and freeing when owned, an old value). */
void fq_smap_put(struct fq_smap *s, const char *k, void *val);
void *fq_smap_get(const struct fq_smap *s, const char *k);
bool fq_smap_has(const struct fq_smap *s, const char *k);
/* Adds k with no value unless present. */
void fq_smap_add(struct fq_smap *s, const char *k);
/* Removes k; may move the table (smaller) when it is under an eighth
 * full, so no caller deletes while it walks `t`. */
void fq_smap_del(struct fq_smap *s, const char *k);
/* The keys in strcmp order: an owned array of borrowed keys (valid until
 * the map changes), for callers that must act in a deterministic order.
 * Only entries whose value passes `keep` (NULL: all) are listed. */
size_t fq_smap_sorted_keys(const struct fq_smap *s,
                           bool (*keep)(const void *val), const char ***out);
/* Removes every entry; keeps the table (a set refilled each run keeps
 * its size). */
void fq_smap_clear(struct fq_smap *s);
/* Removes every entry and frees the table (the map is empty and reusable). */
void fq_smap_free(struct fq_smap *s);

#endif
