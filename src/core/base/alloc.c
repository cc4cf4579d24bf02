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
 * current slab (an anonymous mapping of 1 MiB, aligned to its size,
 * faulted in at once, cut front to back), not malloc'd on its own:
 * malloc puts a 16-byte header in front of every block of these sizes, a
 * third of a 48-byte value node, and a stored object is some 20 to 60
 * such blocks (at a million stored objects, about 500 bytes of each
 * object's 3 KB). A block freed goes to its class's stack on the thread
 * that frees it, to serve the next allocation of its class there.
 *
 * Giving memory back (fq_small_trim, run by flexqd's tidy after a mass
 * delete): a slab's first bytes hold its header, found from any of its
 * blocks by masking the address. A trim counts, per page of every slab
 * whose thread has moved on to another slab (retired), the bytes its
 * stacks hold free; a slab whose every carved byte is free is unmapped
 * and its blocks leave the stacks; a page wholly covered by free blocks
 * in a slab still in use is handed back with MADV_DONTNEED (its blocks
 * stay in the stacks: the page reads as zeros and faults in again when
 * a block of it is used). So flexqd's memory goes back down after a
 * churn, as with malloc, but for the pages that live blocks pin.
 * Only the trimming thread's stacks are counted, so a slab is unmapped
 * only when every one of its blocks is free on that thread. The slab
 * registry and the retirements are under one lock, taken once a slab and
 * once a trim; the hot paths take none.
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

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
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
# define SLAB_SHIFT    20
# define SLAB_BYTES    ((size_t)1 << SLAB_SHIFT)
# define SLAB_HEAD     64 /* struct slab, rounded to a cache line */
# define PAGE_BYTES    ((size_t)4096)
# define SLAB_PAGES    (SLAB_BYTES / PAGE_BYTES)
/* A trim runs when the stacks hold at least this much (bytes). */
# define TRIM_AT ((size_t)16 << 20)

/* A slab's header, in its first SLAB_HEAD bytes. `carved` is written by
 * the thread that cuts from the slab, and read by a trim only once the
 * slab is retired (under slab_lock, as the retirement is); `idx` is the
 * slab's place in the registry, kept under slab_lock. */
struct slab {
    size_t carved; /* bytes cut from the slab's start, the header included */
    size_t idx;
    bool retired; /* its thread cuts from another slab now */
};

_Static_assert(sizeof(struct slab) <= SLAB_HEAD, "slab header too big");

static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slab **slabs; /* every slab of every thread */
static size_t nslabs, capslabs;

static struct slab *slab_of(const void *p)
{
    return (struct slab *)((uintptr_t)p & ~(uintptr_t)(SLAB_BYTES - 1));
}

/* The free blocks of one class: a stack of pointers, the most recently
 * freed on top. */
struct small_stack {
    void **top; /* the next push goes here; pops take top[-1] */
    void **base, **end;
};

static _Thread_local struct {
    struct small_stack free[SMALL_CLASSES];
    struct slab *cur;      /* the slab being cut, or NULL */
    char *slab, *slab_end; /* its uncut rest */
    size_t last_trim;      /* bytes the stacks held after the last trim */
} cache;

/* malloc for a block past FQ_SMALL_MAX, kept out of line so that the hit
 * path of fq_small_alloc needs no stack frame. */
__attribute__((noinline)) static void *miss(size_t n)
{
    return fq_xmalloc(n);
}

/* A 1 MiB mapping aligned to 1 MiB, faulted in at once (MAP_POPULATE,
 * instead of a trap per page): twice the size is reserved, the ends
 * beyond the aligned megabyte given back, and the megabyte mapped again
 * in place with its pages. */
static void *slab_map(void)
{
    size_t twice = 2 * SLAB_BYTES;
    char *m = mmap(NULL, twice, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        oom(SLAB_BYTES);
    uintptr_t a =
        ((uintptr_t)m + SLAB_BYTES - 1) & ~(uintptr_t)(SLAB_BYTES - 1);
    char *al = (char *)a;
    if (al > m)
        munmap(m, (size_t)(al - m));
    if (al + SLAB_BYTES < m + twice)
        munmap(al + SLAB_BYTES, (size_t)(m + twice - (al + SLAB_BYTES)));
    void *r =
        mmap(al, SLAB_BYTES, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, -1, 0);
    if (r == MAP_FAILED)
        oom(SLAB_BYTES);
    return r;
}

/* A new block of `size` bytes (a class size) from the current slab, or
 * from a new one when the rest is too short (the rest, under
 * FQ_SMALL_MAX bytes, is left unused). The slab left behind is retired
 * and the new one registered, under the lock. */
__attribute__((noinline)) static void *carve(size_t size)
{
    if ((size_t)(cache.slab_end - cache.slab) < size) {
        struct slab *sl = slab_map();
        sl->carved = SLAB_HEAD;
        sl->retired = false;
        pthread_mutex_lock(&slab_lock);
        if (cache.cur)
            cache.cur->retired = true;
        if (nslabs == capslabs) {
            size_t cap = capslabs ? 2 * capslabs : 64;
            slabs = fq_xrealloc(slabs, cap * sizeof(*slabs));
            capslabs = cap;
        }
        sl->idx = nslabs;
        slabs[nslabs++] = sl;
        pthread_mutex_unlock(&slab_lock);
        cache.cur = sl;
        cache.slab = (char *)sl + SLAB_HEAD;
        cache.slab_end = (char *)sl + SLAB_BYTES;
    }
    void *p = cache.slab;
    cache.slab += size;
    cache.cur->carved += size;
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

/* The free bytes the calling thread's stacks hold. */
static size_t stacked_bytes(void)
{
    size_t b = 0;
    for (size_t c = 0; c < SMALL_CLASSES; c++)
        b += (size_t)(cache.free[c].top - cache.free[c].base) * (c + 1) *
             SMALL_STEP;
    return b;
}

/* Adds the bytes of the free block [p, p+z) to the counts of the pages
 * it lies on (cnt: SLAB_PAGES counts per registered slab). */
static void count_block(uint16_t *cnt, const char *p, size_t z)
{
    struct slab *sl = slab_of(p);
    uint16_t *pg = cnt + sl->idx * SLAB_PAGES;
    size_t off = (size_t)(p - (const char *)sl);
    while (z) {
        size_t k = off / PAGE_BYTES, in = PAGE_BYTES - off % PAGE_BYTES;
        size_t take = z < in ? z : in;
        pg[k] = (uint16_t)(pg[k] + take);
        off += take;
        z -= take;
    }
}

/* The bytes of page k of a slab that `carved` bytes were cut from. */
static size_t page_carved(size_t carved, size_t k)
{
    size_t lo = k * PAGE_BYTES;
    if (carved <= lo)
        return 0;
    return carved - lo < PAGE_BYTES ? carved - lo : PAGE_BYTES;
}

void fq_small_trim(void)
{
    size_t held = stacked_bytes();
    if (held < TRIM_AT || held == cache.last_trim)
        return;
    pthread_mutex_lock(&slab_lock);
    /* Page counts fit in 16 bits: a page is 4,096 bytes. */
    uint16_t *cnt = calloc(nslabs * SLAB_PAGES, sizeof(*cnt));
    bool *gone = calloc(nslabs, sizeof(*gone));
    if (!cnt || !gone) { /* no room to count: nothing is given back */
        free(cnt);
        free(gone);
        pthread_mutex_unlock(&slab_lock);
        return;
    }
    for (size_t c = 0; c < SMALL_CLASSES; c++)
        for (void **q = cache.free[c].base; q < cache.free[c].top; q++)
            count_block(cnt, *q, (c + 1) * SMALL_STEP);
    /* Decide per retired slab: all free -> unmapped, else its wholly free
     * pages advised away. The header's page is never free. */
    bool any_gone = false;
    for (size_t i = 0; i < nslabs; i++) {
        struct slab *sl = slabs[i];
        if (!sl->retired)
            continue;
        const uint16_t *pg = cnt + i * SLAB_PAGES;
        size_t free_b = 0;
        for (size_t k = 0; k < SLAB_PAGES; k++)
            free_b += pg[k];
        if (free_b == sl->carved - SLAB_HEAD) {
            gone[i] = any_gone = true;
            continue;
        }
        for (size_t k = 1; k < SLAB_PAGES;) {
            size_t pc = page_carved(sl->carved, k);
            if (!pc || pg[k] != pc) {
                k++;
                continue;
            }
            size_t k0 = k;
            while (k < SLAB_PAGES && page_carved(sl->carved, k) &&
                   pg[k] == page_carved(sl->carved, k))
                k++;
            madvise((char *)sl + k0 * PAGE_BYTES, (k - k0) * PAGE_BYTES,
                    MADV_DONTNEED);
        }
    }
    if (any_gone) {
        /* The unmapped slabs' blocks leave the stacks, which shrink. */
        for (size_t c = 0; c < SMALL_CLASSES; c++) {
            struct small_stack *st = &cache.free[c];
            void **w = st->base;
            for (void **q = st->base; q < st->top; q++)
                if (!gone[slab_of(*q)->idx])
                    *w++ = *q;
            size_t n = (size_t)(w - st->base);
            size_t cap = (size_t)(st->end - st->base);
            if (n == 0) {
                free(st->base);
                st->base = st->top = st->end = NULL;
            } else {
                if (n < cap / 4) {
                    st->base = fq_xrealloc(st->base, 2 * n * sizeof(void *));
                    cap = 2 * n;
                }
                st->top = st->base + n;
                st->end = st->base + cap;
            }
        }
        size_t w = 0;
        for (size_t i = 0; i < nslabs; i++) {
            if (gone[i]) {
                munmap(slabs[i], SLAB_BYTES);
                continue;
            }
            slabs[i]->idx = w;
            slabs[w++] = slabs[i];
        }
        nslabs = w;
    }
    pthread_mutex_unlock(&slab_lock);
    free(cnt);
    free(gone);
    cache.last_trim = stacked_bytes();
}

size_t fq_small_mapped(void)
{
    pthread_mutex_lock(&slab_lock);
    size_t b = nslabs * SLAB_BYTES;
    pthread_mutex_unlock(&slab_lock);
    return b;
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

size_t fq_small_mapped(void)
{
    return 0;
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
