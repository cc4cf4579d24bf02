/*
 * alloc.h - allocation that never returns NULL.
 *
 * flexq treats running out of memory as fatal: fq_xmalloc and friends print
 * a message and abort. Sizes that come from outside input are capped before
 * they get here (see the limits of each parser), so an abort means a bug or
 * a machine without memory, never a hostile request.
 *
 * A primitive of the base layer (src/core/base/): it knows nothing of
 * objects, Kubernetes or the engine, and must not grow calls into higher
 * layers. There is one of it; use it rather than writing another.
 */
#ifndef FLEXQ_ALLOC_H
#define FLEXQ_ALLOC_H

#include <stddef.h>

void *fq_xmalloc(size_t n);                 /* returns owned */
void *fq_xcalloc(size_t n, size_t size);    /* zeroed, returns owned */
void *fq_xrealloc(void *p, size_t n);       /* takes and returns owned */
char *fq_xstrdup(const char *s);            /* returns owned */
char *fq_xstrndup(const char *s, size_t n); /* returns owned, NUL-ended */
char *fq_xasprintf(const char *fmt, ...)    /* returns owned */
    __attribute__((format(printf, 1, 2)));

/*
 * Blocks freed with their size, for the many small, short-lived pieces of
 * the value tree (nodes, keys, short texts, member and item arrays): a
 * block of up to FQ_SMALL_MAX bytes is cut from a per-thread slab, with no
 * header, and recycled through a per-thread cache of free blocks (see
 * alloc.c; fq_small_trim gives their memory back), which costs a few instructions where
 * malloc and free cost about a hundred each. fq_small_free must be given
 * the size the block was allocated with (and frees NULL as a no-op).
 * Never mix with free: a block from one is not the other's.
 */
#define FQ_SMALL_MAX 512
void *fq_small_alloc(size_t n); /* returns owned, not zeroed */
void fq_small_free(void *p, size_t n);
/* After a mass delete, gives the memory of the calling thread's free
 * blocks back to the system: slabs wholly free are unmapped, wholly free
 * pages of the others advised away (alloc.c). Does nothing while the
 * free blocks are under 16 MiB or unchanged since the last trim. */
void fq_small_trim(void);
/* Bytes of slabs mapped now, every thread's (0 in sanitizer builds, where
 * small blocks are malloc's). */
size_t fq_small_mapped(void);

/* Grows *items (of *cap elements of `size` bytes) to hold at least `need`. */
void fq_grow(void **items, size_t *cap, size_t need, size_t size);
#define FQ_GROW(arr, cap, need) \
 fq_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))
/* fq_grow for an array of fq_small_alloc blocks (its size is cap * size).
 * The macro calls it only when the array is full (appends are mostly to
 * an array with room), so it evaluates cap and need twice. */
void fq_small_grow(void **items, size_t *cap, size_t need, size_t size);
#define FQ_SMALL_GROW(arr, cap, need)                                  \
 ((need) > (cap) ?                                                     \
      fq_small_grow((void **)&(arr), &(cap), (need), sizeof(*(arr))) : \
      (void)0)

#endif
