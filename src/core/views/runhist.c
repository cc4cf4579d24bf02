/*
 * runhist.c - run-time guesses from the history of finished runs (see
 * runhist.h).
 *
 * How it works. Every finished run is added to four levels, each a small
 * ring of the last RING runs under one key:
 *
 *   U user                 "the user's last two runs" (Tsafrir, Etsion and
 *                          Feitelson, 2007: users resubmit similar jobs)
 *   S queue + chips        same queue, same size
 *   Q queue
 *   * every run
 *
 * plus a ring of (run / limit) for runs that had a limit. A guess takes
 * the first level that has runs, in that order, except that a job with a
 * limit and no user history gets limit x median(run / limit) before the
 * coarser levels, and a guess is never over the job's own limit.
 *
 * Worked example: user u7 finished runs of 600 s and 1,000 s; a new job of
 * u7 with a 3,600 s limit is guessed at 800 s, HIGH (the two runs are
 * within a factor of two). A new user's job with the same limit, when past
 * jobs used a median 25% of their limits, is guessed at 900 s, MEDIUM.
 *
 * Confidence: HIGH when the runs the guess comes from are within a factor
 * of two of each other (max <= 2 min), MEDIUM for a limit-based guess or
 * spreads up to a factor of ten, LOW otherwise and for the default.
 *
 * Invariants: 1. a guess is > 0; 2. with limit_ms > 0 it is <= limit_ms;
 * 3. the same adds in the same order give the same guesses.
 *
 * A share guess (fq_runhist_guess_share) keeps, per user, a ring of the
 * shares of their limits that their runs used ('P' user, in parts per
 * million) and guesses a job with a limit at that limit x the mean of the
 * user's last SHARE_RING shares: a user who asks for 10 hours and runs 2
 * is told apart from one who asks for 10 and runs 9, and a job asking for
 * more than the user's last runs is guessed longer than they were. Worked
 * example: u7's runs used 20% and 40% of their limits; u7's next job with
 * a 10 h limit is guessed at 3 h, HIGH (the shares are within a factor
 * of two).
 *
 * It does not: weigh runs by age beyond the ring, learn from runs that
 * were cut short, or see jobs that are still running.
 */
#include "flexq/runhist.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

#define RING       16
#define RATIO_RING 64
#define SHARE_RING 8       /* the user's runs a share guess averages */
#define SHARE_ONE  1000000 /* shares of a limit, in parts per million */

struct ring {
    int64_t v[RING];
    uint32_t n; /* runs seen (the ring holds the last min(n, RING)) */
};

struct slot {
    char *key; /* owned; NULL: empty */
    struct ring r;
};

struct fq_runhist {
    struct slot *slots;
    size_t cap, used;
    struct ring all;
    double ratio[RATIO_RING];
    uint32_t nratio;
};

static uint64_t hash_key(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

struct fq_runhist *fq_runhist_new(void)
{
    struct fq_runhist *h = fq_xcalloc(1, sizeof(*h));
    h->cap = 256;
    h->slots = fq_xcalloc(h->cap, sizeof(*h->slots));
    return h;
}

void fq_runhist_free(struct fq_runhist *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->cap; i++)
        free(h->slots[i].key);
    free(h->slots);
    free(h);
}

/* The slot of key (a NUL-free string), or NULL; with add, created. */
static struct ring *find(struct fq_runhist *h, const char *key, bool add)
{
    size_t n = strlen(key);
    size_t j = hash_key(key, n) & (h->cap - 1);
    while (h->slots[j].key) {
        if (!strcmp(h->slots[j].key, key))
            return &h->slots[j].r;
        j = (j + 1) & (h->cap - 1);
    }
    if (!add || h->used >= FQ_RUNHIST_MAX_KEYS)
        return NULL;
    if ((h->used + 1) * 2 > h->cap) {
        struct slot *old = h->slots;
        size_t ocap = h->cap;
        h->cap *= 2;
        h->slots = fq_xcalloc(h->cap, sizeof(*h->slots));
        for (size_t i = 0; i < ocap; i++) {
            if (!old[i].key)
                continue;
            size_t k = hash_key(old[i].key, strlen(old[i].key)) & (h->cap - 1);
            while (h->slots[k].key)
                k = (k + 1) & (h->cap - 1);
            h->slots[k] = old[i];
        }
        free(old);
        j = hash_key(key, n) & (h->cap - 1);
        while (h->slots[j].key)
            j = (j + 1) & (h->cap - 1);
    }
    h->slots[j].key = fq_xstrdup(key);
    h->used++;
    return &h->slots[j].r;
}

static const struct ring *lookup(const struct fq_runhist *h, const char *key)
{
    return find((struct fq_runhist *)h, key, false);
}

static void ring_add(struct ring *r, int64_t v)
{
    if (!r)
        return;
    r->v[r->n % RING] = v;
    r->n++;
}

/* Mean of the last k runs of r (k <= RING), with their min and max. */
static int64_t ring_mean(const struct ring *r, uint32_t k, int64_t *lo,
                         int64_t *hi)
{
    uint32_t have = r->n < RING ? r->n : RING;
    if (k > have)
        k = have;
    double sum = 0;
    *lo = INT64_MAX;
    *hi = 0;
    for (uint32_t i = 0; i < k; i++) {
        int64_t v = r->v[(r->n - 1 - i) % RING];
        sum += (double)v;
        if (v < *lo)
            *lo = v;
        if (v > *hi)
            *hi = v;
    }
    return k ? (int64_t)(sum / k) : 0;
}

/* Keys: a tag letter, then the parts separated by a byte no name holds. */
static void make_key(char *buf, size_t size, char tag, const char *a,
                     const char *b, long long chips)
{
    size_t n = 0;
    buf[n++] = tag;
    for (const char *p = a; p && *p && n + 1 < size; p++)
        buf[n++] = *p;
    if (b && n + 1 < size)
        buf[n++] = '\x1f';
    for (const char *p = b; p && *p && n + 1 < size; p++)
        buf[n++] = *p;
    buf[n] = '\0';
    if (chips >= 0 && n + 24 < size) {
        char num[24];
        int k = 0;
        unsigned long long v = (unsigned long long)chips;
        do {
            num[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        buf[n++] = '\x1f';
        while (k > 0)
            buf[n++] = num[--k];
        buf[n] = '\0';
    }
}

#define KEY_SIZE 320

void fq_runhist_add(struct fq_runhist *h, const char *user, const char *queue,
                    int64_t chips, int64_t run_ms, int64_t limit_ms)
{
    if (run_ms <= 0)
        return;
    char key[KEY_SIZE];
    if (user && *user) {
        make_key(key, sizeof(key), 'U', user, NULL, -1);
        ring_add(find(h, key, true), run_ms);
        if (limit_ms > 0) {
            int64_t ppm = run_ms >= limit_ms ?
                              SHARE_ONE :
                              (int64_t)((double)run_ms * SHARE_ONE / limit_ms);
            make_key(key, sizeof(key), 'P', user, NULL, -1);
            ring_add(find(h, key, true), ppm > 0 ? ppm : 1);
        }
    }
    const char *q = queue ? queue : "";
    make_key(key, sizeof(key), 'S', q, "", chips);
    ring_add(find(h, key, true), run_ms);
    make_key(key, sizeof(key), 'Q', q, NULL, -1);
    ring_add(find(h, key, true), run_ms);
    ring_add(&h->all, run_ms);
    if (limit_ms > 0) {
        double r = (double)run_ms / (double)limit_ms;
        h->ratio[h->nratio % RATIO_RING] = r > 1 ? 1 : r;
        h->nratio++;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static enum fq_runhist_confidence spread(int64_t lo, int64_t hi)
{
    if (lo <= 0)
        return FQ_RUNHIST_LOW;
    if (hi <= 2 * lo)
        return FQ_RUNHIST_HIGH;
    return hi <= 10 * lo ? FQ_RUNHIST_MEDIUM : FQ_RUNHIST_LOW;
}

void fq_runhist_guess(const struct fq_runhist *h, const char *user,
                      const char *queue, int64_t chips, int64_t limit_ms,
                      struct fq_runhist_guess *out)
{
    char key[KEY_SIZE];
    const char *q = queue ? queue : "";
    const struct ring *r = NULL;
    int64_t lo = 0, hi = 0;
    *out = (struct fq_runhist_guess){FQ_RUNHIST_DEFAULT_MS, FQ_RUNHIST_DEFAULT,
                                     FQ_RUNHIST_LOW};
    if (user && *user) {
        make_key(key, sizeof(key), 'U', user, NULL, -1);
        r = lookup(h, key);
    }
    if (r && r->n) {
        out->run_ms = ring_mean(r, 2, &lo, &hi);
        out->src = FQ_RUNHIST_USER;
        out->conf = r->n >= 2 ? spread(lo, hi) : FQ_RUNHIST_MEDIUM;
    } else if (limit_ms > 0 && h->nratio) {
        uint32_t k = h->nratio < RATIO_RING ? h->nratio : RATIO_RING;
        double tmp[RATIO_RING];
        memcpy(tmp, h->ratio, k * sizeof(double));
        qsort(tmp, k, sizeof(double), cmp_double);
        out->run_ms = (int64_t)((double)limit_ms * tmp[(k - 1) / 2]);
        out->src = FQ_RUNHIST_LIMIT;
        out->conf = FQ_RUNHIST_MEDIUM;
    } else if (limit_ms > 0) {
        out->run_ms = limit_ms;
        out->src = FQ_RUNHIST_LIMIT;
        out->conf = FQ_RUNHIST_LOW;
    } else {
        static const char tags[] = {'S', 'Q'};
        for (int t = 0; t < 2 && out->src == FQ_RUNHIST_DEFAULT; t++) {
            make_key(key, sizeof(key), tags[t], q, t == 0 ? "" : NULL,
                     t == 0 ? chips : -1);
            r = lookup(h, key);
            if (r && r->n) {
                out->run_ms = ring_mean(r, RING, &lo, &hi);
                out->src = t == 0 ? FQ_RUNHIST_SHAPE : FQ_RUNHIST_QUEUE;
                out->conf = spread(lo, hi);
            }
        }
        if (out->src == FQ_RUNHIST_DEFAULT && h->all.n) {
            out->run_ms = ring_mean(&h->all, RING, &lo, &hi);
            out->src = FQ_RUNHIST_ALL;
            out->conf = spread(lo, hi);
        }
    }
    if (out->conf == FQ_RUNHIST_HIGH && out->src != FQ_RUNHIST_USER)
        out->conf = FQ_RUNHIST_MEDIUM;
    if (limit_ms > 0 && out->run_ms > limit_ms)
        out->run_ms = limit_ms;
    if (out->run_ms <= 0)
        out->run_ms = 1000;
}

void fq_runhist_guess_share(const struct fq_runhist *h, const char *user,
                            const char *queue, int64_t chips, int64_t limit_ms,
                            struct fq_runhist_guess *out)
{
    fq_runhist_guess(h, user, queue, chips, limit_ms, out);
    if (limit_ms <= 0 || !user || !*user)
        return;
    char key[KEY_SIZE];
    make_key(key, sizeof(key), 'P', user, NULL, -1);
    const struct ring *r = lookup(h, key);
    if (!r || !r->n)
        return;
    int64_t lo, hi;
    int64_t ppm = ring_mean(r, SHARE_RING, &lo, &hi);
    out->run_ms = (int64_t)((double)limit_ms * (double)ppm / SHARE_ONE);
    if (out->run_ms <= 0)
        out->run_ms = 1000;
    out->src = FQ_RUNHIST_USER;
    out->conf = r->n >= 2 ? spread(lo, hi) : FQ_RUNHIST_MEDIUM;
}

int64_t fq_runhist_left(int64_t guess_ms, int64_t elapsed_ms, int64_t limit_ms)
{
    const int64_t minute = 60000;
    int64_t left = guess_ms - elapsed_ms;
    if (left < minute)
        left = elapsed_ms > minute ? elapsed_ms : minute;
    if (limit_ms > 0 && elapsed_ms + left > limit_ms)
        left = limit_ms - elapsed_ms;
    return left < minute ? minute : left;
}
