/*
 * test_pqueue.c - the Kueue controller's pending queues (queues.c) and
 * their storage (pqseq.c).
 *
 * The order is Kueue's heap order: higher priority first, then the
 * earlier queue-order timestamp, then namespace, then name (byte order).
 * Each case below is built so that one wrong tie-break (a key compared
 * in the wrong direction, left out, or taken before another) puts a
 * named workload in the wrong place. The storage is also held against a
 * plain sorted array through random inserts, removes, parks and merges,
 * deep enough to split, merge and rebalance its chunks, with its chunk
 * invariants checked (kq_seq_check) after each batch; the check itself
 * is shown to find each invariant broken.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kueue/internal.h"
#include "kueue/pqseq.h"

/* A controller state with `ncq` ClusterQueues and no configuration
 * beyond what the queues read. */
static struct kueue *mk_kueue(int ncq)
{
    struct kueue *k = fq_xcalloc(1, sizeof(*k));
    k->snap = fq_xcalloc(1, sizeof(*k->snap));
    k->snap->ncq = ncq;
    k->park_gen = 1;
    k->cycle_ms = 1000; /* no quiet-root memo: requeue puts all back */
    k->pq = fq_xcalloc((size_t)ncq, sizeof(*k->pq));
    k->cqn = fq_xcalloc((size_t)ncq, sizeof(*k->cqn));
    return k;
}

static void free_kueue(struct kueue *k)
{
    for (int c = 0; c < k->snap->ncq; c++)
        kq_pq_release(&k->pq[c]);
    free(k->pq);
    free(k->cqn);
    free(k->snap);
    free(k);
}

static void set_rec(struct rec *r, const char *ns, const char *name,
                    int32_t prio, int64_t qts)
{
    memset(r, 0, sizeof(*r));
    r->w.ns = (char *)ns;
    r->w.name = (char *)name;
    r->w.prio = prio;
    r->w.created = r->w.qts = qts;
    r->w.cq = 0;
    r->w.pending = true;
    r->ok = true;
    r->qcq = -1;
}

/* The names of queue 0's act entries in order, comma-separated. */
static void act_names(struct kueue *k, char *out, size_t cap)
{
    out[0] = 0;
    struct pq *q = &k->pq[0];
    for (size_t i = 0; i < kq_pq_nact(q); i++) {
        const struct rec *r = kq_pq_act(q, i);
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s/%s", i ? "," : "", r->w.ns,
                 r->w.name);
    }
}

/*
 * Kueue's order and each of its tie-breaks. The entries, listed in the
 * order expected, with the mistake each pair catches:
 *   hi/late    prio 100, qts 50: priority before time (late but high)
 *   b/x-2      prio 10, qts 10
 *   a/z-1      prio 10, qts 20: time before namespace and name
 *   a/job-1    prio 0, qts 5
 *   a/job-10   prio 0, qts 5: name in byte order ("job-1" < "job-10")
 *   a/job-2    prio 0, qts 5
 *   b/job-0    prio 0, qts 5: namespace before name ("a" < "b")
 *   a/early    prio -5, qts 1: negative priority last, time not first
 * Inserted in a scrambled order, and again in reverse, the queue reads
 * the same.
 */
static void test_queue_order_ties(void **state)
{
    (void)state;

    static const struct {
        const char *ns, *name;
        int32_t prio;
        int64_t qts;
    } want[] = {
        {"hi", "late", 100, 50}, {"b", "x-2", 10, 10},  {"a", "z-1", 10, 20},
        {"a", "job-1", 0, 5},    {"a", "job-10", 0, 5}, {"a", "job-2", 0, 5},
        {"b", "job-0", 0, 5},    {"a", "early", -5, 1},
    };

    enum {
        N = sizeof(want) / sizeof(want[0])
    };

    static const int scrambled[N] = {7, 3, 6, 0, 5, 2, 4, 1};
    const char *expect = "hi/late,b/x-2,a/z-1,a/job-1,a/job-10,a/job-2,"
                         "b/job-0,a/early";
    for (int pass = 0; pass < 2; pass++) {
        struct kueue *k = mk_kueue(1);
        struct rec recs[N];
        for (int i = 0; i < N; i++) {
            int j = pass == 0 ? scrambled[i] : N - 1 - i;
            set_rec(&recs[j], want[j].ns, want[j].name, want[j].prio,
                    want[j].qts);
            kq_rec_attach(k, &recs[j]);
        }
        char got[512];
        act_names(k, got, sizeof(got));
        assert_string_equal(got, expect);
        /* Each pair in order by the comparison itself, strictly. */
        for (int i = 0; i + 1 < N; i++) {
            assert_true(kq_rec_cmp(&recs[i], &recs[i + 1]) < 0);
            assert_true(kq_rec_cmp(&recs[i + 1], &recs[i]) > 0);
        }
        assert_int_equal(kq_rec_cmp(&recs[2], &recs[2]), 0);
        free_kueue(k);
    }
}

/*
 * Parked heads, a StrictFIFO blocker, and the requeue's three merges:
 * every one parked (the two trade places), the parked all before the
 * others (prepended), and interleaved (merged). After each, the queue
 * reads in Kueue's order with nothing lost or doubled.
 */
static void test_park_and_requeue(void **state)
{
    (void)state;

    enum {
        N = 700
    };

    static char names[N][16];
    struct rec *recs = fq_xcalloc(N, sizeof(*recs));
    for (int i = 0; i < N; i++)
        snprintf(names[i], sizeof(names[i]), "w-%04d", i);
    for (int mode = 0; mode < 3; mode++) {
        struct kueue *k = mk_kueue(1);
        struct pq *q = &k->pq[0];
        /* Two priorities, three creates a second. */
        for (int i = 0; i < N; i++) {
            set_rec(&recs[i], "ns", names[i], (i % 3 == 0) ? 10 : 0, i / 3);
            kq_rec_attach(k, &recs[i]);
        }
        assert_int_equal(kq_pq_nact(q), N);
        assert_null(kq_pq_park_head(q));
        /* Park heads as cycles do: all of them, the first 300, or every
         * other head of the first 400. */
        size_t parked = 0;
        struct rec *first_parked = NULL;
        if (mode == 2) {
            for (int i = 0; i < 400; i += 2) {
                struct rec *r = kq_pq_act(q, (size_t)i / 2);
                if (!first_parked)
                    first_parked = r;
                kq_pq_park(k, r);
                parked++;
            }
        } else {
            size_t m = mode == 0 ? N : 300;
            first_parked = kq_pq_act(q, 0);
            for (size_t i = 0; i < m; i++)
                kq_pq_park(k, kq_pq_act(q, 0));
            parked = m;
        }
        assert_int_equal(kq_pq_npark(q), parked);
        assert_int_equal(kq_pq_nact(q), N - parked);
        assert_ptr_equal(kq_pq_park_head(q), first_parked);
        assert_true(kq_rec_parked(k, first_parked));
        /* A late low-priority create goes to act, after the others
         * (when every one is parked, after the requeue: then the two
         * trade places). */
        struct rec late;
        set_rec(&late, "ns", "zz-late", 0, 100000);
        if (mode != 0) {
            kq_rec_attach(k, &late);
            assert_ptr_equal(kq_pq_act(q, kq_pq_nact(q) - 1), &late);
        }
        kq_pq_requeue(k);
        if (mode == 0)
            kq_rec_attach(k, &late);
        assert_ptr_equal(kq_pq_act(q, kq_pq_nact(q) - 1), &late);
        assert_int_equal(kq_pq_npark(q), 0);
        assert_int_equal(kq_pq_nact(q), N + 1);
        assert_false(kq_rec_parked(k, first_parked));
        for (size_t i = 1; i < kq_pq_nact(q); i++)
            assert_true(kq_rec_cmp(kq_pq_act(q, i - 1), kq_pq_act(q, i)) < 0);
        assert_ptr_equal(kq_pq_act(q, 0), first_parked);
        /* Removing from the middle and the head keeps the rest. */
        struct rec *mid = kq_pq_act(q, 350);
        struct rec *next = kq_pq_act(q, 351);
        kq_pq_remove(k, mid);
        assert_ptr_equal(kq_pq_act(q, 350), next);
        kq_pq_remove(k, kq_pq_act(q, 0));
        assert_int_equal(kq_pq_nact(q), N - 1);
        free_kueue(k);
    }
    free(recs);
}

/* --- pqseq against a sorted array --------------------------------------- */

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* The reference: sorted pointers. */
struct ref {
    int **v;
    size_t n;
};

static void ref_insert(struct ref *r, int *x)
{
    size_t i = 0;
    while (i < r->n && *r->v[i] < *x)
        i++;
    memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof(*r->v));
    r->v[i] = x;
    r->n++;
}

static void ref_remove_at(struct ref *r, size_t i)
{
    memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(*r->v));
    r->n--;
}

static void check_same(struct kq_seq *s, const struct ref *r)
{
    assert_int_equal(s->n, r->n);
    for (size_t i = 0; i < r->n; i++)
        assert_ptr_equal(kq_seq_at(s, i), r->v[i]);
    /* Backwards and at random too (the read cache walks both ways). */
    for (size_t i = r->n; i-- > 0;)
        assert_ptr_equal(kq_seq_at(s, i), r->v[i]);
    for (int t = 0; t < 50 && r->n; t++) {
        size_t i = rnd() % r->n;
        assert_ptr_equal(kq_seq_at(s, i), r->v[i]);
    }
    assert_ptr_equal(kq_seq_first(s), r->n ? r->v[0] : NULL);
    assert_ptr_equal(kq_seq_last(s), r->n ? r->v[r->n - 1] : NULL);
    /* The chunk invariants (pqseq.c), the read cache as the reads above
     * left it. */
    assert_int_equal(kq_seq_check(s, int_cmp), 0);
}

static void test_seq_random(void **state)
{
    (void)state;

    enum {
        KEYS = 6000
    };

    int *keys = fq_xcalloc(KEYS, sizeof(*keys));
    bool *in = fq_xcalloc(KEYS, sizeof(*in));
    for (int i = 0; i < KEYS; i++)
        keys[i] = i * 7 % KEYS; /* a permutation: distinct keys */
    struct ref ref = {fq_xcalloc(KEYS, sizeof(int *)), 0};
    struct kq_seq s = {0};
    for (int step = 0; step < 40000; step++) {
        uint64_t op = rnd() % 100;
        int i = (int)(rnd() % KEYS);
        if (op < 55) { /* insert (mostly), anywhere */
            if (!in[i]) {
                kq_seq_insert(&s, &keys[i], int_cmp);
                ref_insert(&ref, &keys[i]);
                in[i] = true;
            }
        } else if (op < 85) { /* remove a present one */
            if (ref.n) {
                size_t at = rnd() % ref.n;
                int *x = ref.v[at];
                assert_true(kq_seq_remove(&s, x, int_cmp));
                ref_remove_at(&ref, at);
                in[x - keys] = false;
            }
        } else if (op < 90) { /* remove one that is not there */
            if (!in[i])
                assert_false(kq_seq_remove(&s, &keys[i], int_cmp));
        } else if (op < 95) { /* take heads */
            size_t m = ref.n ? rnd() % (ref.n < 300 ? ref.n + 1 : 300) : 0;
            for (size_t j = 0; j < m; j++)
                in[ref.v[j] - keys] = false;
            kq_seq_drop_first(&s, m);
            memmove(ref.v, ref.v + m, (ref.n - m) * sizeof(*ref.v));
            ref.n -= m;
        } else { /* a run parked apart, then merged or prepended back */
            struct kq_seq park = {0};
            size_t m = ref.n ? rnd() % (ref.n < 600 ? ref.n + 1 : 600) : 0;
            bool inter = rnd() % 2;
            /* the first m, or every other one of the first 2m */
            size_t taken = 0;
            for (size_t j = 0; j < ref.n && taken < m;) {
                int *x = ref.v[j];
                kq_seq_append(&park, x);
                assert_true(kq_seq_remove(&s, x, int_cmp));
                taken++;
                j += inter ? 2 : 1; /* interleaved: skip the next */
            }
            if (inter || rnd() % 2)
                kq_seq_merge(&s, &park, int_cmp);
            else if (park.n && s.n &&
                     int_cmp(kq_seq_last(&park), kq_seq_first(&s)) < 0)
                kq_seq_prepend(&s, &park);
            else
                kq_seq_merge(&s, &park, int_cmp);
            assert_int_equal(park.n, 0);
            assert_int_equal(kq_seq_check(&park, int_cmp), 0);
            kq_seq_release(&park);
        }
        /* The chunk invariants after each batch of operations (and each
         * merge above: it rebuilds chunks); the whole contents less
         * often. */
        if (op >= 95 || step % 50 == 0)
            assert_int_equal(kq_seq_check(&s, int_cmp), 0);
        if (step % 997 == 0)
            check_same(&s, &ref);
    }
    check_same(&s, &ref);
    /* Resort of an order that did not move changes nothing. */
    kq_seq_resort(&s, int_cmp);
    check_same(&s, &ref);
    kq_seq_release(&s);
    free(ref.v);
    free(keys);
    free(in);
}

/* Creates in order fill chunks to the brim: about 8 bytes a pending
 * workload, and a queue worked from its head frees them again. */
static void test_seq_in_order_is_compact(void **state)
{
    (void)state;

    enum {
        N = 100000
    };

    int *keys = fq_xmalloc(N * sizeof(*keys));
    struct kq_seq s = {0};
    for (int i = 0; i < N; i++) {
        keys[i] = i;
        kq_seq_insert(&s, &keys[i], int_cmp);
    }
    assert_true(kq_seq_bytes(&s) < (size_t)N * 9);
    for (int i = 0; i < N; i++) {
        assert_ptr_equal(kq_seq_first(&s), &keys[i]);
        assert_true(kq_seq_remove(&s, &keys[i], int_cmp));
    }
    assert_int_equal(s.n, 0);
    assert_null(kq_seq_first(&s));
    kq_seq_release(&s);
    free(keys);
}

/* kq_seq_check finds each broken invariant, by its number. */
static void test_seq_check_finds(void **state)
{
    (void)state;

    enum {
        N = 2000
    };

    int *keys = fq_xmalloc(N * sizeof(*keys));
    struct kq_seq s = {0};
    for (int i = 0; i < N; i++) {
        keys[i] = i * 7 % N;
        kq_seq_insert(&s, &keys[i], int_cmp);
    }
    assert_int_equal(kq_seq_check(&s, int_cmp), 0);
    assert_true(s.nch - s.clo >= 3);
    struct kq_seq_chunk *mid = s.ch[s.clo + 1];
    uint32_t hi = mid->hi;
    mid->hi = mid->lo; /* 1: an empty chunk kept */
    assert_int_equal(kq_seq_check(&s, int_cmp), 1);
    mid->hi = hi;
    void *t = mid->v[mid->lo]; /* 2: two entries out of order */
    mid->v[mid->lo] = mid->v[mid->lo + 1];
    mid->v[mid->lo + 1] = t;
    assert_int_equal(kq_seq_check(&s, int_cmp), 2);
    mid->v[mid->lo + 1] = mid->v[mid->lo];
    mid->v[mid->lo] = t;
    s.n++; /* 3: a count that is not the chunks' sum */
    assert_int_equal(kq_seq_check(&s, int_cmp), 3);
    s.n--;
    mid->hi = mid->lo + 10; /* 4: a chunk inside under a quarter full */
    assert_int_equal(kq_seq_check(&s, int_cmp), 4);
    mid->hi = hi;
    mid->hi = mid->cap + 1; /* 5: a window past the chunk's end */
    assert_int_equal(kq_seq_check(&s, int_cmp), 5);
    mid->hi = hi;
    s.at_c = s.clo + 1; /* 6: the read cache's rank wrong */
    s.at_base = 0;
    assert_int_equal(kq_seq_check(&s, int_cmp), 6);
    s.at_c = SIZE_MAX; /* forgotten, then a read sets it right */
    assert_int_equal(*(int *)kq_seq_at(&s, N / 2), N / 2);
    assert_int_equal(kq_seq_check(&s, int_cmp), 0);
    kq_seq_release(&s);
    free(keys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_order_ties),
        cmocka_unit_test(test_park_and_requeue),
        cmocka_unit_test(test_seq_random),
        cmocka_unit_test(test_seq_in_order_is_compact),
        cmocka_unit_test(test_seq_check_finds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
