/*
 * pqseq.c - a sorted sequence of pointers in chunks of at most 256: the
 * storage of each ClusterQueue's pending queue (queues.c).
 *
 * Why chunks. The queues were one sorted array each, with memmove on
 * insert and remove. Kueue's order puts a new workload at the end of its
 * priority's run, so with mixed priorities a create lands in the middle
 * and moves a third of the queue: with 1,000,000 pending in one
 * ClusterQueue that is 2.7 MB a create, and bench/admission --queues
 * controller --cqs 1 measured 23,765 creates a CPU second. A heap takes the
 * head in O(log n) but loses what the controller relies on: reading the
 * queue in order by a cursor (the cycle's heads past those handled,
 * pace.c's planned cycles) and the merges of parked runs that cost two
 * copies. Chunks keep both: the sequence is an array of chunks, each a
 * small sorted array with a live window v[lo..hi).
 *
 *   ch:  [c0]      [c1]        [c2]
 *         |         |           |
 *        lo..hi    lo..hi      lo..hi       chunks in order; every entry
 *        a b c     d e f g     h i           of c0 sorts before c1's
 *
 * Insert: a binary search over the chunks' last entries (O(log(n/256))
 * comparisons), one inside the chunk (8), then a move of at most 255
 * pointers within it; a full chunk grows (4, 8, ... 256 entries, so a
 * short queue stays small) or, at 256, splits in two (an insert at the
 * very end or front of the sequence starts a new chunk instead, so
 * creates in order fill chunks to the brim). Remove: the same search, and the
 * shorter side of the chunk moves by one. Taking the head is lo++ (the
 * chunk array has a dead prefix too, ch[clo..nch)), so a queue worked
 * from its head costs O(1) a step. Moving chunk pointers when a chunk is
 * split or freed costs n/256 pointers, once per 128 changes or more.
 *
 * Invariants:
 *  1. Every chunk in ch[clo..nch) has lo < hi (no empty chunk is kept).
 *  2. The entries, chunk after chunk, are in strictly increasing order by
 *     the caller's comparison.
 *  3. n is the sum of hi - lo over the chunks.
 *  4. Every chunk but the first and the last holds at least 64 entries
 *     (a remove that leaves fewer merges the chunk with a neighbour or
 *     shares their entries), so memory stays under 32 bytes a pointer
 *     and two chunks in the worst case; chunks filled in order hold 8
 *     bytes and a little. The ends are left alone so that a queue
 *     worked from its head, or fed at its tail, moves no entry.
 * kq_seq_check verifies them (and the read cache's rank) in O(n);
 * test_pqueue's random test calls it after each batch of operations.
 *
 * Does not: own or free the entries, compare equal entries (the order
 * must be total), or keep the read cache across changes.
 */
#include "kueue/pqseq.h"

#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

#define CH     KQ_SEQ_CHUNK
#define CH_MIN (CH / 4)

static size_t cnt(const struct kq_seq_chunk *c)
{
    return c->hi - c->lo;
}

/* A chunk of cap entries, empty, its window starting at `at`. */
static struct kq_seq_chunk *chunk_new(uint32_t cap, uint32_t at)
{
    struct kq_seq_chunk *c =
        fq_xmalloc(sizeof(*c) + (size_t)cap * sizeof(c->v[0]));
    c->cap = cap;
    c->lo = c->hi = at;
    return c;
}

/* Chunk i of s grown to cap entries (cap >= its own); returns it. */
static struct kq_seq_chunk *chunk_grow(struct kq_seq *s, size_t i, uint32_t cap)
{
    struct kq_seq_chunk *c = s->ch[i];
    if (c->cap >= cap)
        return c;
    c = fq_xrealloc(c, sizeof(*c) + (size_t)cap * sizeof(c->v[0]));
    c->cap = cap;
    s->ch[i] = c;
    return c;
}

static void forget(struct kq_seq *s)
{
    s->at_c = SIZE_MAX;
    s->at_base = 0;
}

/* Puts chunk c at index i of ch (clo <= i <= nch). */
static void ch_put(struct kq_seq *s, size_t i, struct kq_seq_chunk *c)
{
    if (i == s->clo && s->clo > 0) {
        s->ch[--s->clo] = c;
        return;
    }
    if (s->nch == s->capch && s->clo > 0) {
        /* Reclaim the dead prefix before growing. */
        memmove(s->ch, s->ch + s->clo, (s->nch - s->clo) * sizeof(*s->ch));
        s->nch -= s->clo;
        i -= s->clo;
        s->clo = 0;
    }
    FQ_GROW(s->ch, s->capch, s->nch + 1);
    memmove(&s->ch[i + 1], &s->ch[i], (s->nch - i) * sizeof(*s->ch));
    s->ch[i] = c;
    s->nch++;
}

/* Takes chunk i out of ch (not freed). */
static void ch_del(struct kq_seq *s, size_t i)
{
    if (i == s->clo)
        s->clo++;
    else {
        memmove(&s->ch[i], &s->ch[i + 1], (s->nch - i - 1) * sizeof(*s->ch));
        s->nch--;
    }
    if (s->clo == s->nch)
        s->clo = s->nch = 0;
}

/* The first chunk whose last entry does not sort before x, or the last
 * chunk when every entry does (s not empty). */
static size_t find_chunk(const struct kq_seq *s, const void *x,
                         kq_seq_cmp_fn cmp)
{
    size_t lo = s->clo, hi = s->nch - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct kq_seq_chunk *c = s->ch[mid];
        if (cmp(c->v[c->hi - 1], x) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first index of c->v[lo..hi) whose entry does not sort before x. */
static uint32_t find_in(const struct kq_seq_chunk *c, const void *x,
                        kq_seq_cmp_fn cmp)
{
    uint32_t lo = c->lo, hi = c->hi;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cmp(c->v[mid], x) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Puts x at index p of chunk c (lo <= p <= hi), which has room. */
static void chunk_put(struct kq_seq_chunk *c, uint32_t p, void *x)
{
    if (p == c->hi && c->hi < c->cap) { /* mostly: at the end */
        c->v[c->hi++] = x;
    } else if (p == c->lo && c->lo > 0) {
        c->v[--c->lo] = x;
    } else if (c->hi < c->cap) {
        memmove(&c->v[p + 1], &c->v[p], (c->hi - p) * sizeof(*c->v));
        c->v[p] = x;
        c->hi++;
    } else {
        memmove(&c->v[c->lo - 1], &c->v[c->lo], (p - c->lo) * sizeof(*c->v));
        c->lo--;
        c->v[p - 1] = x;
    }
}

void kq_seq_insert(struct kq_seq *s, void *x, kq_seq_cmp_fn cmp)
{
    forget(s);
    s->n++;
    if (s->nch == s->clo) {
        struct kq_seq_chunk *c = chunk_new(4, 0);
        c->v[c->hi++] = x;
        ch_put(s, s->clo, c);
        return;
    }
    /* Creates arrive mostly in order, and parked heads too: the end
     * first. */
    size_t ci = s->nch - 1;
    struct kq_seq_chunk *c = s->ch[ci];
    uint32_t p = c->hi;
    if (cmp(c->v[c->hi - 1], x) > 0) {
        ci = find_chunk(s, x, cmp);
        c = s->ch[ci];
        p = find_in(c, x, cmp);
    }
    if (cnt(c) < c->cap) {
        chunk_put(c, p, x);
        return;
    }
    if (c->cap < CH) {
        chunk_put(chunk_grow(s, ci, 2 * c->cap), p, x);
        return;
    }
    if (p == c->hi && ci == s->nch - 1) {
        /* After the last entry: a new chunk, filled from its front. */
        struct kq_seq_chunk *d = chunk_new(CH, 0);
        d->v[d->hi++] = x;
        ch_put(s, ci + 1, d);
        return;
    }
    if (p == c->lo && ci == s->clo) {
        /* Before the first entry: a new chunk, filled from its back. */
        struct kq_seq_chunk *d = chunk_new(CH, CH);
        d->v[--d->lo] = x;
        ch_put(s, ci, d);
        return;
    }
    /* Full (lo == 0, hi == CH): split in halves, then put x in its half. */
    struct kq_seq_chunk *d = chunk_new(CH, 0);
    uint32_t half = CH / 2;
    memcpy(d->v, &c->v[half], (CH - half) * sizeof(*c->v));
    d->hi = CH - half;
    c->hi = half;
    ch_put(s, ci + 1, d);
    if (p <= half)
        chunk_put(c, p, x);
    else
        chunk_put(d, p - half, x);
}

void kq_seq_append(struct kq_seq *s, void *x)
{
    forget(s);
    s->n++;
    if (s->nch > s->clo) {
        size_t i = s->nch - 1;
        struct kq_seq_chunk *c = s->ch[i];
        if (c->hi == c->cap && c->lo > 0) {
            /* Room at the front: close the gap (invariant 4). */
            memmove(c->v, &c->v[c->lo], cnt(c) * sizeof(*c->v));
            c->hi -= c->lo;
            c->lo = 0;
        }
        if (c->hi == c->cap && c->cap < CH)
            c = chunk_grow(s, i, 2 * c->cap);
        if (c->hi < c->cap) {
            c->v[c->hi++] = x;
            return;
        }
    }
    struct kq_seq_chunk *c = chunk_new(s->nch > s->clo ? CH : 4, 0);
    c->v[c->hi++] = x;
    ch_put(s, s->nch, c);
}

/* Chunk i, not at an end, fell under CH_MIN entries: merged with a
 * neighbour when the two fit in one chunk, else the two shared evenly
 * (invariant 4). */
static void rebalance(struct kq_seq *s, size_t i)
{
    if (i <= s->clo || i + 1 >= s->nch || cnt(s->ch[i]) >= CH_MIN)
        return;
    size_t l = i; /* the pair is l, l + 1 */
    struct kq_seq_chunk *a = chunk_grow(s, l, CH);
    struct kq_seq_chunk *b = chunk_grow(s, l + 1, CH);
    size_t na = cnt(a), nb = cnt(b);
    if (na + nb <= CH) {
        memmove(a->v, &a->v[a->lo], na * sizeof(*a->v));
        memcpy(&a->v[na], &b->v[b->lo], nb * sizeof(*b->v));
        a->lo = 0;
        a->hi = (uint32_t)(na + nb);
        ch_del(s, l + 1);
        free(b);
        return;
    }
    void *tmp[2 * CH];
    memcpy(tmp, &a->v[a->lo], na * sizeof(*tmp));
    memcpy(&tmp[na], &b->v[b->lo], nb * sizeof(*tmp));
    size_t ta = (na + nb) / 2;
    memcpy(a->v, tmp, ta * sizeof(*tmp));
    a->lo = 0;
    a->hi = (uint32_t)ta;
    memcpy(b->v, &tmp[ta], (na + nb - ta) * sizeof(*tmp));
    b->lo = 0;
    b->hi = (uint32_t)(na + nb - ta);
}

/* Takes index p out of chunk i; frees the chunk when it empties. */
static void take(struct kq_seq *s, size_t i, uint32_t p)
{
    struct kq_seq_chunk *c = s->ch[i];
    forget(s);
    s->n--;
    if (p == c->lo)
        c->lo++;
    else if (p == c->hi - 1)
        c->hi--;
    else if (p - c->lo < c->hi - 1 - p) {
        memmove(&c->v[c->lo + 1], &c->v[c->lo], (p - c->lo) * sizeof(*c->v));
        c->lo++;
    } else {
        memmove(&c->v[p], &c->v[p + 1], (c->hi - 1 - p) * sizeof(*c->v));
        c->hi--;
    }
    if (c->lo == c->hi) {
        ch_del(s, i);
        free(c);
        return;
    }
    rebalance(s, i);
}

bool kq_seq_remove(struct kq_seq *s, const void *x, kq_seq_cmp_fn cmp)
{
    if (s->n == 0)
        return false;
    struct kq_seq_chunk *c = s->ch[s->clo];
    if (c->v[c->lo] == x) { /* mostly the head goes */
        take(s, s->clo, c->lo);
        return true;
    }
    size_t ci = find_chunk(s, x, cmp);
    c = s->ch[ci];
    uint32_t p = find_in(c, x, cmp);
    if (p >= c->hi || c->v[p] != x)
        return false;
    take(s, ci, p);
    return true;
}

void *kq_seq_at(struct kq_seq *s, size_t i)
{
    if (i == 0) /* the head: the most read */
        return kq_seq_first(s);
    size_t c = s->at_c, base = s->at_base;
    if (c < s->clo || c >= s->nch || i < base / 2) {
        c = s->clo;
        base = 0;
    }
    while (i < base) {
        c--;
        base -= cnt(s->ch[c]);
    }
    while (i >= base + cnt(s->ch[c])) {
        base += cnt(s->ch[c]);
        c++;
    }
    s->at_c = c;
    s->at_base = base;
    return s->ch[c]->v[s->ch[c]->lo + (i - base)];
}

void *kq_seq_first(const struct kq_seq *s)
{
    if (s->n == 0)
        return NULL;
    const struct kq_seq_chunk *c = s->ch[s->clo];
    return c->v[c->lo];
}

void *kq_seq_last(const struct kq_seq *s)
{
    if (s->n == 0)
        return NULL;
    const struct kq_seq_chunk *c = s->ch[s->nch - 1];
    return c->v[c->hi - 1];
}

void kq_seq_drop_first(struct kq_seq *s, size_t m)
{
    forget(s);
    s->n -= m;
    while (m > 0) {
        struct kq_seq_chunk *c = s->ch[s->clo];
        size_t k = cnt(c);
        if (k > m) {
            c->lo += (uint32_t)m;
            return;
        }
        ch_del(s, s->clo);
        free(c);
        m -= k;
    }
}

void kq_seq_swap(struct kq_seq *a, struct kq_seq *b)
{
    struct kq_seq t = *a;
    *a = *b;
    *b = t;
}

void kq_seq_prepend(struct kq_seq *to, struct kq_seq *from)
{
    if (from->n == 0)
        return;
    if (to->n == 0) {
        kq_seq_swap(to, from);
        kq_seq_release(from);
        return;
    }
    forget(to);
    size_t k = from->nch - from->clo;
    if (to->clo < k) {
        size_t live = to->nch - to->clo;
        struct kq_seq_chunk **v = fq_xmalloc((k + live) * sizeof(*v));
        memcpy(v + k, to->ch + to->clo, live * sizeof(*v));
        free(to->ch);
        to->ch = v;
        to->clo = k;
        to->nch = to->capch = k + live;
    }
    to->clo -= k;
    memcpy(to->ch + to->clo, from->ch + from->clo, k * sizeof(*to->ch));
    to->n += from->n;
    free(from->ch);
    memset(from, 0, sizeof(*from));
    forget(from);
    /* The two chunks where the sequences meet. */
    size_t j = to->clo + k;
    rebalance(to, j);
    rebalance(to, j - 1);
}

/* The output of a merge: full chunks, filled in order. */
struct filler {
    struct kq_seq *s;
    struct kq_seq_chunk *c; /* the chunk being filled, in s already */
};

static void fill(struct filler *f, void *x)
{
    if (!f->c || f->c->hi == CH) {
        f->c = chunk_new(CH, 0);
        ch_put(f->s, f->s->nch, f->c);
    }
    f->c->v[f->c->hi++] = x;
    f->s->n++;
}

/* Inserts every entry of `small` into `big`, leaving `small` empty. */
static void insert_all(struct kq_seq *big, struct kq_seq *small,
                       kq_seq_cmp_fn cmp)
{
    for (size_t i = small->clo; i < small->nch; i++) {
        const struct kq_seq_chunk *c = small->ch[i];
        for (uint32_t p = c->lo; p < c->hi; p++)
            kq_seq_insert(big, c->v[p], cmp);
    }
    kq_seq_release(small);
}

/*
 * Merges by inserting the shorter sequence into the longer when it is
 * under a sixteenth of it (a deep parked backlog meeting a few new
 * workloads: m log n, not a pass over n), else in one pass that fills
 * new chunks.
 */
void kq_seq_merge(struct kq_seq *to, struct kq_seq *from, kq_seq_cmp_fn cmp)
{
    if (from->n == 0)
        return;
    if (from->n < to->n / 16) {
        insert_all(to, from, cmp);
        return;
    }
    if (to->n < from->n / 16) {
        insert_all(from, to, cmp);
        kq_seq_swap(to, from);
        return;
    }
    struct kq_seq m = {0};
    struct filler f = {&m, NULL};
    size_t ia = to->clo, ib = from->clo;
    uint32_t pa = ia < to->nch ? to->ch[ia]->lo : 0;
    uint32_t pb = ib < from->nch ? from->ch[ib]->lo : 0;
    while (ia < to->nch && ib < from->nch) {
        void *a = to->ch[ia]->v[pa], *b = from->ch[ib]->v[pb];
        if (cmp(a, b) < 0) {
            fill(&f, a);
            if (++pa == to->ch[ia]->hi && ++ia < to->nch)
                pa = to->ch[ia]->lo;
        } else {
            fill(&f, b);
            if (++pb == from->ch[ib]->hi && ++ib < from->nch)
                pb = from->ch[ib]->lo;
        }
    }
    for (; ia < to->nch; pa = ++ia < to->nch ? to->ch[ia]->lo : 0)
        for (; pa < to->ch[ia]->hi; pa++)
            fill(&f, to->ch[ia]->v[pa]);
    for (; ib < from->nch; pb = ++ib < from->nch ? from->ch[ib]->lo : 0)
        for (; pb < from->ch[ib]->hi; pb++)
            fill(&f, from->ch[ib]->v[pb]);
    kq_seq_release(to);
    kq_seq_release(from);
    forget(&m);
    *to = m;
}

void kq_seq_resort(struct kq_seq *s, kq_seq_cmp_fn cmp)
{
    struct kq_seq m = {0};
    forget(&m);
    for (size_t i = s->clo; i < s->nch; i++) {
        const struct kq_seq_chunk *c = s->ch[i];
        for (uint32_t p = c->lo; p < c->hi; p++)
            kq_seq_insert(&m, c->v[p], cmp);
    }
    kq_seq_release(s);
    *s = m;
}

void kq_seq_each(const struct kq_seq *s, void (*fn)(void *x, void *arg),
                 void *arg)
{
    for (size_t i = s->clo; i < s->nch; i++) {
        const struct kq_seq_chunk *c = s->ch[i];
        for (uint32_t p = c->lo; p < c->hi; p++)
            fn(c->v[p], arg);
    }
}

void kq_seq_release(struct kq_seq *s)
{
    for (size_t i = s->clo; i < s->nch; i++)
        free(s->ch[i]);
    free(s->ch);
    memset(s, 0, sizeof(*s));
    forget(s);
}

size_t kq_seq_bytes(const struct kq_seq *s)
{
    size_t b = s->capch * sizeof(*s->ch);
    for (size_t i = s->clo; i < s->nch; i++)
        b += sizeof(struct kq_seq_chunk) + s->ch[i]->cap * sizeof(void *);
    return b;
}

int kq_seq_check(const struct kq_seq *s, kq_seq_cmp_fn cmp)
{
    if (s->clo > s->nch || s->nch > s->capch || (s->nch > 0 && !s->ch))
        return 5;
    size_t n = 0;
    const void *prev = NULL;
    for (size_t i = s->clo; i < s->nch; i++) {
        const struct kq_seq_chunk *c = s->ch[i];
        if (!c || c->cap == 0 || c->cap > CH || c->hi > c->cap)
            return 5;
        if (c->lo >= c->hi) /* 1 */
            return 1;
        for (uint32_t p = c->lo; p < c->hi; p++) { /* 2 */
            if (prev && cmp(prev, c->v[p]) >= 0)
                return 2;
            prev = c->v[p];
        }
        if (i > s->clo && i + 1 < s->nch && cnt(c) < CH_MIN) /* 4 */
            return 4;
        if (i == s->at_c && s->at_base != n) /* a stale read cache */
            return 6;
        n += cnt(c);
    }
    return n == s->n ? 0 : 3; /* 3 */
}
