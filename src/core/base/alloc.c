/*
 * alloc.c - allocation wrappers that abort instead of returning NULL, and
 * the small-block cache of the value tree.
 *
 * See alloc.h for the policy. fq_grow doubles capacity so that appending n
 * elements costs O(n) in total.
 *
 * The small-block cache. A replay builds and frees millions of value
 * nodes, keys and short arrays, often a whole tree at a time (a deleted
 * pod, a replaced status); glibc's per-thread cache holds only 7 blocks
 * of a size, so most of those went through malloc's slower paths, which
 * were a quarter of a Philly replay. fq_small_alloc rounds a request of up
 * to FQ_SMALL_MAX bytes up to a multiple of 8 (its class) and takes a
 * block of that class from the class's stack of free blocks, or from a
 * slab (below) when the stack is empty; fq_small_free, told the size,
 * pushes the block back. Every block of a class is made at the class's
 * size, so any of them serves any request of the class.
 *
 * Why stacks of pointers and not lists linked through the blocks: the
 * blocks are mostly cold. A tree that lived for days of simulated time
 * (a running workload, a node) is out of the CPU's caches when it is
 * freed, and a burst of deletions frees megabytes of them at once. A list
 * made each free write into its cold block and each allocation read the
 * next link out of one (a cache miss on every pop: fq_small_alloc was 9%
 * of a replay's time for 3% of its instructions). A stack is a dense
 * array whose top is in cache: a push or a pop touches no block at all,
 * and the block is first touched by whoever fills it. A stack costs a
 * pointer per block it holds (an eighth of a 64-byte block) and grows by
 * doubling, out of the hot path (push_grow).
 *
 * Slabs. A block the stacks cannot give is carved from the thread's
 * current slab (an anonymous mapping of 256 KiB to 4 MiB, faulted in at
 * once, cut front to back), not malloc'd on its own: malloc puts a
 * 16-byte header in front of every block of these sizes, a third of a
 * 48-byte value node, and a stored object is some 20 to 60 such blocks
 * (at a million stored objects, about 500 bytes of each object's 3 KB).
 * The price: a block is never given back to malloc,
 * only to its class's stack, to serve the next allocation of its class on
 * the thread that frees it; so the stacks have no bound, and memory freed
 * in small blocks stays with the process (flexqd's peak, not its current
 * use). fq_small_trim, which gave the cached blocks back so that malloc
 * could return their pages, has nothing to give.
 *
 * This cache is the allocator's own state, like malloc's, and the one
 * exception to the core's rule of no globals: it is per thread
 * (_Thread_local), so it needs no lock and no thread sees another's
 * blocks (a block made on one thread and freed on another joins the
 * other's stacks: flexqd parses its stored objects on loader threads and
 * frees them on the loop's). What a thread holds when it exits stays
 * allocated, unused.
 *
 * Sanitizer builds do without it: there every block is its own malloc,
 * so ASan still sees a use after free or an overrun past the n bytes
 * asked for, and carries its size in front of it, so that a free with
 * the wrong size (which would file a block under the wrong class in a
 * release build) aborts.
 */
#include "flexq/alloc.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MAP_POPULATE /* Linux's; elsewhere the pages fault in one by one */
# define MAP_POPULATE 0
#endif

static void oom(size_t n)
{
    fprintf(stderr, "flexq: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *fq_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *fq_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *fq_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *fq_xstrdup(const char *s)
{
    return fq_xstrndup(s, strlen(s));
}

char *fq_xstrndup(const char *s, size_t n)
{
    char *p = fq_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *fq_xasprintf(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    char *p = fq_xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

/* The capacity fq_grow and fq_small_grow give an array of cap elements of
 * `size` bytes that must hold `need`: the first power-of-two multiple of
 * cap (or of 8) that does. */
static size_t grown_cap(size_t cap, size_t need, size_t size)
{
    size_t ncap = cap ? cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / size)
            oom(SIZE_MAX);
        ncap *= 2;
    }
    return ncap;
}

void fq_grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t ncap = grown_cap(*cap, need, size);
    *items = fq_xrealloc(*items, ncap * size);
    *cap = ncap;
}

#if defined(__SANITIZE_ADDRESS__)
# define SMALL_CACHE 0
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define SMALL_CACHE 0
# endif
#endif
#ifndef SMALL_CACHE
# define SMALL_CACHE 1
#endif

#if SMALL_CACHE

# define SMALL_STEP    8 /* slab blocks need only a pointer's alignment */
# define SMALL_CLASSES (FQ_SMALL_MAX / SMALL_STEP)
# define SLAB_BYTES    ((size_t)256 << 10)

/* The free blocks of one class: a stack of pointers, the most recently
 * freed on top. */
struct small_stack {
    void **top; /* the next push goes here; pops take top[-1] */
    void **base, **end;
};

static _Thread_local struct {
    struct small_stack free[SMALL_CLASSES];
    char *slab, *slab_end; /* the current slab's uncut rest */
    size_t slab_bytes;     /* the next slab's size */
} cache;

/* malloc for a block past FQ_SMALL_MAX, kept out of line so that the hit
 * path of fq_small_alloc needs no stack frame. */
__attribute__((noinline)) static void *miss(size_t n)
{
    return fq_xmalloc(n);
}

/* A new block of `size` bytes (a class size) from the current slab, or
 * from a new one when the rest is too short (the rest, under
 * FQ_SMALL_MAX bytes, is left unused). */
__attribute__((noinline)) static void *carve(size_t size)
{
    if ((size_t)(cache.slab_end - cache.slab) < size) {
        /* 256 KiB, doubling per slab up to 4 MiB, its pages faulted in
         * by one call (MAP_POPULATE) instead of a trap each. */
        size_t bytes = cache.slab_bytes ? cache.slab_bytes : SLAB_BYTES;
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (m == MAP_FAILED)
            oom(bytes);
        cache.slab = m;
        cache.slab_end = cache.slab + bytes;
        cache.slab_bytes = bytes < ((size_t)4 << 20) ? 2 * bytes : bytes;
    }
    void *p = cache.slab;
    cache.slab += size;
    return p;
}

void *fq_small_alloc(size_t n)
{
    if (n > FQ_SMALL_MAX)
        return miss(n);
    size_t c = n ? (n - 1) / SMALL_STEP : 0;
    struct small_stack *s = &cache.free[c];
    if (s->top == s->base)
        return carve((c + 1) * SMALL_STEP);
    return *--s->top;
}

/* fq_small_free's push onto a full stack: doubles the stack (its first
 * one holds 64 blocks). */
__attribute__((noinline)) static void push_grow(struct small_stack *s, void *p)
{
    size_t n = (size_t)(s->top - s->base), cap = n ? 2 * n : 64;
    s->base = fq_xrealloc(s->base, cap * sizeof(*s->base));
    s->top = s->base + n;
    s->end = s->base + cap;
    *s->top++ = p;
}

void fq_small_free(void *p, size_t n)
{
    if (!p)
        return;
    if (n > FQ_SMALL_MAX) {
        free(p);
        return;
    }
    size_t c = n ? (n - 1) / SMALL_STEP : 0;
    struct small_stack *s = &cache.free[c];
    if (s->top == s->end) {
        push_grow(s, p);
        return;
    }
    *s->top++ = p;
}

void fq_small_trim(void)
{
    /* Slab blocks go back to no one: see the top of the file. */
}

#else /* sanitizer builds: malloc, with the size in front */

# define SMALL_HEADER sizeof(max_align_t) /* keeps the block aligned */

void *fq_small_alloc(size_t n)
{
    if (n > SIZE_MAX - SMALL_HEADER)
        oom(n);
    char *p = fq_xmalloc(SMALL_HEADER + n);
    memcpy(p, &n, sizeof(n));
    return p + SMALL_HEADER;
}

void fq_small_free(void *p, size_t n)
{
    if (!p)
        return;
    char *h = (char *)p - SMALL_HEADER;
    size_t was;
    memcpy(&was, h, sizeof(was));
    if (was != n) {
        fprintf(stderr, "flexq: fq_small_free of %zu bytes, allocated %zu\n", n,
                was);
        abort();
    }
    free(h);
}

void fq_small_trim(void)
{
}

#endif

void fq_small_grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t ncap = grown_cap(*cap, need, size);
    void *n = fq_small_alloc(ncap * size);
    if (*cap)
        memcpy(n, *items, *cap * size);
    fq_small_free(*items, *cap * size);
    *items = n;
    *cap = ncap;
}
