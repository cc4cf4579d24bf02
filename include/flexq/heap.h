/*
 * heap.h - a binary min-heap of fixed-size elements, ordered by a
 * caller's comparison.
 *
 * The one priority queue of the core: the engine's driver keeps run ends
 * in it (drive.c), the kueue controller its lifecycle deadlines, the
 * capacity controller its booting and idle nodes. Each wraps it with its
 * own element type. Elements are copied in and out by value (keep them
 * small: a time and a key or an index). Pops follow `less`; elements that
 * compare equal come out in an order that depends only on the pushes and
 * pops before, so a deterministic caller stays deterministic.
 *
 * A primitive of the base layer (src/core/base/): it knows nothing of
 * objects, Kubernetes or the engine, and must not grow calls into higher
 * layers. There is one of it; use it rather than writing another.
 */
#ifndef FLEXQ_HEAP_H
#define FLEXQ_HEAP_H

#include <stdbool.h>
#include <stddef.h>

/* Is element a (borrowed) strictly before b? */
typedef bool (*fq_heap_less_fn)(const void *a, const void *b);

struct fq_heap {
    unsigned char *v; /* n elements of `size` bytes; owned */
    size_t n, cap, size;
    fq_heap_less_fn less;
};

/* An empty heap of elements of `size` bytes (at most 64). */
void fq_heap_init(struct fq_heap *h, size_t size, fq_heap_less_fn less);
/* Frees the storage (not what elements point to); the heap is empty and
 * reusable. */
void fq_heap_release(struct fq_heap *h);

/* Copies *elem in. */
void fq_heap_push(struct fq_heap *h, const void *elem);
/* The first element (borrowed, valid until the next change), or NULL. */
void *fq_heap_top(const struct fq_heap *h);
/* Copies the first element to *out (may be NULL) and removes it; false
 * when the heap is empty. */
bool fq_heap_pop(struct fq_heap *h, void *out);
/* Keeps the elements `keep` says yes to, in heap order again after; the
 * others go to `drop` (may be NULL) first. O(n). */
void fq_heap_filter(struct fq_heap *h, bool (*keep)(void *ctx, void *elem),
                    void (*drop)(void *elem), void *ctx);

/* The i-th element in storage order (not sorted), for a caller that
 * frees what its elements own. */
static inline void *fq_heap_at(const struct fq_heap *h, size_t i)
{
    return h->v + i * h->size;
}

#endif
