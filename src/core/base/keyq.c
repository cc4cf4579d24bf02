/*
 * keyq.c - the dirty-key queue of base/keyq.h.
 *
 * Marked keys are appended to one buffer with their offsets; take sorts
 * the offsets' strings and squeezes out repeats. Timers are (time, key)
 * pairs on the one min-heap, the key copied; `due` remembers each key's
 * earliest pending time, so a later timer for a key is dropped and a
 * popped timer that is no longer the key's earliest is stale and skipped.
 */
#include "base/keyq.h"

#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

struct fq_keyq_timer {
    int64_t at;
    char *key; /* owned */
};

static bool timer_less(const void *a, const void *b)
{
    const struct fq_keyq_timer *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at;
    return fq_keyq_order(x->key, y->key) < 0;
}

void fq_keyq_init(struct fq_keyq *q)
{
    memset(q, 0, sizeof(*q));
    fq_heap_init(&q->timers, sizeof(struct fq_keyq_timer), timer_less);
    q->due.free_val = free;
}

void fq_keyq_release(struct fq_keyq *q)
{
    fq_buf_release(&q->bytes);
    free(q->off);
    free(q->sorted);
    for (size_t i = 0; i < q->timers.n; i++)
        free(((struct fq_keyq_timer *)fq_heap_at(&q->timers, i))->key);
    fq_heap_release(&q->timers);
    fq_smap_free(&q->due);
    memset(q, 0, sizeof(*q));
}

void fq_keyq_add(struct fq_keyq *q, const char *key)
{
    FQ_GROW(q->off, q->capoff, q->n + 1);
    q->off[q->n++] = q->bytes.len;
    fq_buf_append(&q->bytes, key, strlen(key) + 1);
}

void fq_keyq_add2(struct fq_keyq *q, const char *ns, const char *name)
{
    FQ_GROW(q->off, q->capoff, q->n + 1);
    q->off[q->n++] = q->bytes.len;
    if (ns)
        fq_buf_puts(&q->bytes, ns);
    fq_buf_putc(&q->bytes, '/');
    fq_buf_append(&q->bytes, name, strlen(name) + 1);
}

int fq_keyq_order(const char *a, const char *b)
{
    size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
    int c = strncmp(a, b, la < lb ? la : lb);
    if (c)
        return c;
    if (la != lb)
        return la < lb ? -1 : 1;
    return strcmp(a + la, b + lb);
}

static int key_cmp(const void *x, const void *y)
{
    return fq_keyq_order(*(const char *const *)x, *(const char *const *)y);
}

size_t fq_keyq_take(struct fq_keyq *q, const char *const **out)
{
    FQ_GROW(q->sorted, q->capsorted, q->n + 1);
    for (size_t i = 0; i < q->n; i++)
        q->sorted[i] = q->bytes.data + q->off[i];
    if (q->n > 1)
        qsort(q->sorted, q->n, sizeof(*q->sorted), key_cmp);
    size_t m = 0;
    for (size_t i = 0; i < q->n; i++)
        if (m == 0 || strcmp(q->sorted[m - 1], q->sorted[i]))
            q->sorted[m++] = q->sorted[i];
    *out = q->sorted;
    return m;
}

void fq_keyq_clear(struct fq_keyq *q)
{
    fq_buf_reset(&q->bytes);
    q->n = 0;
}

void fq_keyq_timer(struct fq_keyq *q, const char *key, int64_t at)
{
    int64_t *have = fq_smap_get(&q->due, key);
    if (have && *have <= at)
        return;
    int64_t *t = fq_xmalloc(sizeof(*t));
    *t = at;
    fq_smap_put(&q->due, key, t);
    struct fq_keyq_timer e = {at, fq_xstrdup(key)};
    fq_heap_push(&q->timers, &e);
}

void fq_keyq_timer2(struct fq_keyq *q, const char *ns, const char *name,
                    int64_t at)
{
    char *key = fq_xasprintf("%s/%s", ns ? ns : "", name);
    fq_keyq_timer(q, key, at);
    free(key);
}

void fq_keyq_fire(struct fq_keyq *q, int64_t now)
{
    const struct fq_keyq_timer *top;
    while ((top = fq_heap_top(&q->timers)) && top->at <= now) {
        struct fq_keyq_timer e;
        fq_heap_pop(&q->timers, &e);
        int64_t *have = fq_smap_get(&q->due, e.key);
        if (have && *have == e.at) { /* else stale: an earlier one fired */
            fq_smap_del(&q->due, e.key);
            fq_keyq_add(q, e.key);
        }
        free(e.key);
    }
}

int64_t fq_keyq_next(const struct fq_keyq *q)
{
    const struct fq_keyq_timer *top = fq_heap_top(&q->timers);
    return top ? top->at : INT64_MAX;
}
