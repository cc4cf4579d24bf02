/*
 * pqseq.h - a sorted sequence of pointers kept in chunks: the storage of
 * a ClusterQueue's pending queue (queues.c).
 *
 * Entries are borrowed pointers (the records stay owned by struct
 * kueue's recs); the order is the caller's comparison, passed to each
 * call that must find a place, and must be a total order (no two entries
 * compare equal). Reading by rank (kq_seq_at) walks from the chunk of
 * the last read, so a scan in order costs O(1) a step; any change
 * forgets that place.
 */
#ifndef FLEXQ_KUEUE_PQSEQ_H
#define FLEXQ_KUEUE_PQSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Entries a chunk holds at most: 256 pointers, 2 KiB. */
#define KQ_SEQ_CHUNK 256

/* One chunk: its live entries are v[lo..hi), of cap (4, 8, ... up to
 * KQ_SEQ_CHUNK: a short queue holds a small chunk). */
struct kq_seq_chunk {
    uint32_t lo, hi, cap;
    void *v[];
};

typedef int (*kq_seq_cmp_fn)(const void *a, const void *b);

struct kq_seq {
    struct kq_seq_chunk **ch; /* owned, chunks in order, ch[clo..nch) */
    size_t clo, nch, capch;
    size_t n; /* entries in all */
    /* The chunk of the last read by rank and the rank of its first
     * entry: a cache, reset by every change. */
    size_t at_c, at_base;
};

/* Inserts x (not in s) at its place by cmp. */
void kq_seq_insert(struct kq_seq *s, void *x, kq_seq_cmp_fn cmp);
/* Appends x, which sorts after every entry of s (the caller knows). */
void kq_seq_append(struct kq_seq *s, void *x);
/* Removes x, found by cmp; false when it is not there. */
bool kq_seq_remove(struct kq_seq *s, const void *x, kq_seq_cmp_fn cmp);
/* The entry of rank i (i < s->n), borrowed. */
void *kq_seq_at(struct kq_seq *s, size_t i);
/* The first / last entry, or NULL when s is empty. */
void *kq_seq_first(const struct kq_seq *s);
void *kq_seq_last(const struct kq_seq *s);
/* Drops the first m entries (m <= s->n). */
void kq_seq_drop_first(struct kq_seq *s, size_t m);
/* Moves every entry of `from` before those of `to` (each of `from`
 * sorts before each of `to`: the caller knows), leaving `from` empty;
 * moves chunks, not entries. */
void kq_seq_prepend(struct kq_seq *to, struct kq_seq *from);
/* Merges `from` into `to` by cmp, leaving `from` empty. */
void kq_seq_merge(struct kq_seq *to, struct kq_seq *from, kq_seq_cmp_fn cmp);
/* Sorts s again by cmp (its order moved). */
void kq_seq_resort(struct kq_seq *s, kq_seq_cmp_fn cmp);
/* Calls fn on each entry in order. */
void kq_seq_each(const struct kq_seq *s, void (*fn)(void *x, void *arg),
                 void *arg);
/* Exchanges the contents of a and b. */
void kq_seq_swap(struct kq_seq *a, struct kq_seq *b);
/* Frees the chunks and empties s. */
void kq_seq_release(struct kq_seq *s);
/* The bytes s holds (chunks and the chunk array). */
size_t kq_seq_bytes(const struct kq_seq *s);
/* Checks s against the invariants pqseq.c's top comment states, in
 * O(n): 0 when all hold, else the number of the first one broken (1-4
 * as numbered there; 5: a chunk's window or capacity, or the chunk
 * array's bounds; 6: the read cache's rank of its chunk). For tests. */
int kq_seq_check(const struct kq_seq *s, kq_seq_cmp_fn cmp);

#endif
