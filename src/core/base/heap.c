/*
 * heap.c - the binary min-heap of flexq/heap.h.
 *
 * Array layout (children of i at 2i+1 and 2i+2), sift up on push, the
 * last element sifted down from the root on pop, Floyd's bottom-up build
 * after a filter. Elements move by memcpy through a scratch slot at the
 * end of the array, so no element type is known here.
 */
#include "flexq/heap.h"

#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/assert.h"

#define MAX_ELEM 64

void fq_heap_init(struct fq_heap *h, size_t size, fq_heap_less_fn less)
{
    FQ_ASSERT(size > 0 && size <= MAX_ELEM);
    memset(h, 0, sizeof(*h));
    h->size = size;
    h->less = less;
}

void fq_heap_release(struct fq_heap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

static void *at(const struct fq_heap *h, size_t i)
{
    return h->v + i * h->size;
}

static void swap(struct fq_heap *h, size_t i, size_t j)
{
    unsigned char tmp[MAX_ELEM];
    memcpy(tmp, at(h, i), h->size);
    memcpy(at(h, i), at(h, j), h->size);
    memcpy(at(h, j), tmp, h->size);
}

static void sift_down(struct fq_heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->less(at(h, l), at(h, m)))
            m = l;
        if (r < h->n && h->less(at(h, r), at(h, m)))
            m = r;
        if (m == i)
            return;
        swap(h, i, m);
        i = m;
    }
}

void fq_heap_push(struct fq_heap *h, const void *elem)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 16;
        h->v = fq_xrealloc(h->v, h->cap * h->size);
    }
    size_t i = h->n++;
    memcpy(at(h, i), elem, h->size);
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!h->less(at(h, i), at(h, up)))
            return;
        swap(h, i, up);
        i = up;
    }
}

void *fq_heap_top(const struct fq_heap *h)
{
    return h->n ? h->v : NULL;
}

bool fq_heap_pop(struct fq_heap *h, void *out)
{
    if (!h->n)
        return false;
    if (out)
        memcpy(out, at(h, 0), h->size);
    if (--h->n > 0) {
        memcpy(at(h, 0), at(h, h->n), h->size);
        sift_down(h, 0);
    }
    return true;
}

void fq_heap_filter(struct fq_heap *h, bool (*keep)(void *ctx, void *elem),
                    void (*drop)(void *elem), void *ctx)
{
    size_t m = 0;
    for (size_t i = 0; i < h->n; i++) {
        if (keep(ctx, at(h, i))) {
            if (m != i)
                memcpy(at(h, m), at(h, i), h->size);
            m++;
        } else if (drop) {
            drop(at(h, i));
        }
    }
    h->n = m;
    for (size_t i = m / 2; i-- > 0;)
        sift_down(h, i);
}
