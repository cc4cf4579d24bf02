/*
 * keyq.h - the dirty-key queue: keys ("ns/name", or any string) that a
 * controller must look at again, read back in a fixed order, each once,
 * and timers that put a key back in the queue at a later time.
 *
 * Marking a key costs an append to one buffer (duplicates and all): no
 * hash lookup, copy or later clearing per change. fq_keyq_take sorts and
 * de-duplicates what was marked, in the store's order (namespace, then
 * name: see fq_keyq_order), so a controller's pass is deterministic
 * whatever order the changes came in. Memory is kept between passes.
 *
 * A timer asks for a look at the key no later than `at`. A key keeps
 * only its earliest timer: controllers are level-based, so the look at
 * the earlier time arms again whatever is still due after it.
 *
 * A primitive of the base layer (src/core/base/): it knows nothing of
 * objects, Kubernetes or the engine, and must not grow calls into higher
 * layers. There is one of it; use it rather than writing another.
 */
#ifndef FLEXQ_KEYQ_H
#define FLEXQ_KEYQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/smap.h"
#include "flexq/buf.h"
#include "flexq/heap.h"

struct fq_keyq {
    struct fq_buf bytes;    /* the marked keys, each NUL-terminated */
    size_t *off, n, capoff; /* where each starts in bytes */
    const char **sorted;    /* take's answer, into bytes */
    size_t capsorted;
    struct fq_heap timers; /* struct fq_keyq_timer, by time then key */
    struct fq_smap due;    /* key -> its earliest pending time (owned) */
    bool resync;           /* everything must be looked at (callers set it) */
};

/* An empty queue (a zeroed struct is not one: the timer heap needs its
 * order). */
void fq_keyq_init(struct fq_keyq *q);
/* Frees everything; the queue is empty and reusable after fq_keyq_init. */
void fq_keyq_release(struct fq_keyq *q);

/* Marks key (copied). */
void fq_keyq_add(struct fq_keyq *q, const char *key);
/* Marks "ns/name" (a NULL ns reads as ""). */
void fq_keyq_add2(struct fq_keyq *q, const char *ns, const char *name);

/* Whether nothing is marked. */
static inline bool fq_keyq_empty(const struct fq_keyq *q)
{
    return q->n == 0;
}

/* The marked keys, sorted by fq_keyq_order, each once (borrowed: valid
 * until fq_keyq_clear or the next add). */
size_t fq_keyq_take(struct fq_keyq *q, const char *const **out);
/* Forgets the marked keys (not the timers). */
void fq_keyq_clear(struct fq_keyq *q);

/* Marks key at `at` unless it already has a timer no later. */
void fq_keyq_timer(struct fq_keyq *q, const char *key, int64_t at);
void fq_keyq_timer2(struct fq_keyq *q, const char *ns, const char *name,
                    int64_t at);
/* Marks the keys whose timers are due at `now`. */
void fq_keyq_fire(struct fq_keyq *q, int64_t now);
/* The earliest pending timer, or INT64_MAX when none. */
int64_t fq_keyq_next(const struct fq_keyq *q);

/* The store's order of "ns/name" keys: by the part before the first
 * '/', then the rest (a plain strcmp would put "a-b/x" before "a/x"). */
int fq_keyq_order(const char *a, const char *b);

#endif
