/*
 * bench/admission.c - admission decisions per second, memory per pending
 * workload, and Kueue's scheduler baseline replayed in virtual time.
 *
 * Part 1 (throughput): 100,000 pending workloads (or argv[1]) across 100
 * ClusterQueues in 10 cohorts, 3 flavors, 3 resources (cpu, memory,
 * nvidia.com/gpu).
 * Each queue is a 4-ary heap of 16-byte keys ordered as Kueue orders it
 * (priority, then queue-order time; the record's index breaks ties) over
 * records kept in one array; the bench pops heads round-robin, fills the
 * fq_adm_wl from the key and the record, and asks the admission module
 * (src/core/kueue/admission.c, the same code the kueue controller runs)
 * for a flavor assignment: Fit -> charge the quota tree, otherwise ->
 * park the workload. One call is one decision. Memory per pending
 * workload is measured with mallinfo2 around building the queues: the
 * record (requests, pod counts, flavor masks) plus the heap slot and the
 * heaps' spare capacity.
 *
 * Part 2 (Kueue's baseline, reference/kueue.md §5.1): 5 cohorts x 6 CQs,
 * 20 cpu nominal each, borrowingLimit 100, reclaimWithinCohort Any,
 * withinClusterQueue LowerPriority; per CQ 350 small (1 cpu, 200 ms, prio
 * 50, one every 100 ms), 100 medium (5 cpu, 500 ms, prio 100, every
 * 500 ms), 50 large (20 cpu, 1000 ms, prio 200, every 1200 ms). Replayed
 * in virtual time with the controller's rules: scheduling cycles
 * FQ_KUEUE_CYCLE_MS apart, heads nominated then processed non-borrowing
 * first, preemption with Kueue's target selection (victims requeue at
 * once), BestEffortFIFO parking until quota is released. It runs with
 * Kueue's one pop per CQ per cycle and with flexq's default (all that fit)
 * and prints usage (cpu in use / (nominal x elapsed)) and mean time from
 * creation to admission per class next to Kueue's published figures.
 *
 * Part 3 (--queues controller [--cqs N] [PENDING]): the same pending
 * workloads held in the Kueue controller's own queues (queues.c), driven
 * through the calls the controller makes; see ctl_queues. It runs alone
 * and prints its own figures and JSON line.
 *
 * The last line is one JSON object with every figure.
 */
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexq/alloc.h"
#include "kueue/admission.h"
#include "kueue/internal.h"
#include "kueue/kueue.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of this process: the controller-queues part reads this, as
 * the machine it runs on is shared (on an idle one it is wall time). */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- a pending workload, compact ---------------------------------------- */

struct pend {
    struct fq_adm_wl w;
    struct fq_adm_podset ps;
    int64_t req[3];
    int cls;          /* baseline: 0 small, 1 medium, 2 large */
    int64_t created;  /* ms */
    int64_t runtime;  /* ms */
    int64_t admitted; /* ms, -1 while pending */
    int holder;       /* index into holders while admitted, else -1 */
    uint16_t use_fr[FQ_ADM_MAX_FLAVORS];
    int64_t use_amt[FQ_ADM_MAX_FLAVORS];
    int nuse;
};

/*
 * The throughput part keeps, per pending workload, what varies between
 * workloads: a record (requests, pod counts, flavor masks) in one array,
 * and a key in its ClusterQueue's heap. The fq_adm_wl and podset the
 * admission module reads are filled from them for each decision, as the
 * controller fills them from its records.
 */
struct crec {
    int64_t req[3];
    int32_t count, min_count;
    uint64_t selector_ok, taint_ok;
};

/* A heap slot: Kueue's order (priority, then queue-order time) and the
 * record's index, so sifting compares keys without following pointers. */
struct ckey {
    int32_t priority;
    uint32_t idx;
    int64_t ts;
};

/* A 4-ary heap of keys: the four children of slot i (4i+1 .. 4i+4) share
 * one 64-byte line, so a pop misses the cache about once per level, and
 * there are half as many levels as in a binary heap. */
struct kheap {
    struct ckey *v; /* v[1] starts a 64-byte line */
    void *mem;      /* owned: the aligned block v points into */
    size_t n, cap;
};

static bool key_before(const struct ckey *a, const struct ckey *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    if (a->ts != b->ts)
        return a->ts < b->ts;
    return a->idx < b->idx;
}

static void kheap_grow(struct kheap *h)
{
    size_t cap = h->cap ? h->cap * 2 : 16;
    /* 3 slots of padding put v[1] at the start of a line. */
    size_t bytes = (cap + 3) * sizeof(struct ckey);
    bytes = (bytes + 63) / 64 * 64;
    void *mem = aligned_alloc(64, bytes);
    if (!mem) {
        fprintf(stderr, "admission: out of memory\n");
        exit(1);
    }
    struct ckey *v = (struct ckey *)mem + 3;
    if (h->n)
        memcpy(v, h->v, h->n * sizeof(*v));
    free(h->mem);
    h->mem = mem;
    h->v = v;
    h->cap = cap;
}

static void kheap_push(struct kheap *h, struct ckey k)
{
    if (h->n == h->cap)
        kheap_grow(h);
    size_t i = h->n++;
    while (i > 0 && key_before(&k, &h->v[(i - 1) / 4])) {
        h->v[i] = h->v[(i - 1) / 4];
        i = (i - 1) / 4;
    }
    h->v[i] = k;
}

/* Removes the first key into *out; false when the heap is empty. */
static bool kheap_pop(struct kheap *h, struct ckey *out)
{
    if (h->n == 0)
        return false;
    *out = h->v[0];
    struct ckey last = h->v[--h->n];
    size_t n = h->n, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t end = c + 4 < n ? c + 4 : n, m = c;
        for (size_t j = c + 1; j < end; j++)
            if (key_before(&h->v[j], &h->v[m]))
                m = j;
        if (!key_before(&h->v[m], &last))
            break;
        h->v[i] = h->v[m];
        i = m;
    }
    if (n > 0)
        h->v[i] = last;
    return true;
}

struct heap {
    struct fq_adm_wl **v; /* points at the fq_adm_wl inside a record */
    size_t n, cap;
};

static bool before(const struct fq_adm_wl *a, const struct fq_adm_wl *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->ts < b->ts;
}

static void heap_push(struct heap *h, struct fq_adm_wl *w)
{
    FQ_GROW(h->v, h->cap, h->n + 1);
    size_t i = h->n++;
    while (i > 0 && before(w, h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = w;
}

static struct fq_adm_wl *heap_pop(struct heap *h)
{
    if (h->n == 0)
        return NULL;
    struct fq_adm_wl *top = h->v[0], *last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(h->v[c + 1], h->v[c]))
            c++;
        if (!before(h->v[c], last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n > 0)
        h->v[i] = last;
    return top;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t xorshift(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* --- part 1 ------------------------------------------------------------ */

struct tp_result {
    double decisions_per_s, bytes_per_pending;
    long decisions, admitted;
};

static void throughput(struct tp_result *out, int NWL)
{
    enum {
        NCOH = 10,
        NCQ = 100
    };
    struct fq_adm a;
    fq_adm_init(&a);
    int rc = fq_adm_resource(&a, "cpu");
    int rm = fq_adm_resource(&a, "memory");
    int rg = fq_adm_resource(&a, "nvidia.com/gpu");
    int f0 = fq_adm_flavor(&a, "reserved");
    int f1 = fq_adm_flavor(&a, "on-demand");
    int f2 = fq_adm_flavor(&a, "spot");
    int coh[NCOH];
    for (int c = 0; c < NCOH; c++)
        coh[c] = fq_adm_add_node(&a, false);
    for (int q = 0; q < NCQ; q++) {
        int cq = fq_adm_add_cq(&a);
        struct fq_adm_cq *x = &a.cqs[cq];
        a.nodes[x->node].parent = coh[q % NCOH];
        x->ngroups = 1;
        x->groups = fq_xcalloc(1, sizeof(*x->groups));
        x->groups[0].res_mask = 7;
        x->groups[0].nflv = 3;
        x->groups[0].flv[0] = (uint8_t)f0;
        x->groups[0].flv[1] = (uint8_t)f1;
        x->groups[0].flv[2] = (uint8_t)f2;
        int flv[3] = {f0, f1, f2};
        for (int f = 0; f < 3; f++) {
            fq_adm_cell(&a, x->node, flv[f], rc)->nominal = 200 * 1000;
            fq_adm_cell(&a, x->node, flv[f], rm)->nominal = 800ll << 30;
            fq_adm_cell(&a, x->node, flv[f], rg)->nominal = 16;
            fq_adm_cell(&a, x->node, flv[f], rg)->borrow_limit = 8;
        }
    }
    fq_adm_finish(&a);

    struct mallinfo2 m0 = mallinfo2();
    struct crec *recs = fq_xcalloc((size_t)NWL, sizeof(*recs));
    struct kheap *heaps = calloc(NCQ, sizeof(*heaps));
    for (int i = 0; i < NWL; i++) {
        struct crec *p = &recs[i];
        p->req[rc] = (int64_t)(1 + xorshift() % 8) * 1000;
        p->req[rm] = (int64_t)(1 + xorshift() % 32) << 30;
        p->req[rg] = (int64_t)(xorshift() % 3);
        p->count = (int32_t)(1 + xorshift() % 4);
        p->min_count = p->count;
        p->selector_ok = p->taint_ok = ~0ull;
        struct ckey k = {.priority = (int32_t)(xorshift() % 3) * 100,
                         .idx = (uint32_t)i,
                         .ts = i};
        kheap_push(&heaps[i % NCQ], k); /* queue q is ClusterQueue q */
    }
    struct mallinfo2 m1 = mallinfo2();
    /* Big blocks are mapped on their own: hblkhd counts them. */
    out->bytes_per_pending =
        (double)(m1.uordblks + m1.hblkhd - m0.uordblks - m0.hblkhd) / NWL;

    double t0 = now_s();
    long decisions = 0, admitted = 0;
    bool more = true;
    struct fq_adm_result r;
    while (more) {
        more = false;
        for (int q = 0; q < NCQ; q++) {
            struct kheap *h = &heaps[q];
            struct ckey k;
            if (!kheap_pop(h, &k))
                continue;
            more = true;
            /* The queue's next head is decided on a round later: fetch
             * its record now (a record may straddle two lines). */
            if (h->n) {
                const char *nx = (const char *)&recs[h->v[0].idx];
                __builtin_prefetch(nx);
                __builtin_prefetch(nx + sizeof(struct crec) - 1);
            }
            const struct crec *p = &recs[k.idx];
            struct fq_adm_podset ps = {.name = "main",
                                       .count = p->count,
                                       .min_count = p->min_count,
                                       .selector_ok = p->selector_ok,
                                       .taint_ok = p->taint_ok,
                                       .req = p->req};
            struct fq_adm_wl w = {.cq = q,
                                  .priority = k.priority,
                                  .ts = k.ts,
                                  .npodsets = 1,
                                  .ps = &ps};
            fq_adm_assign(&a, &w, NULL, 0, &r);
            decisions++;
            if (r.mode == FQ_ADM_FIT) {
                fq_adm_charge(&a, w.cq, r.nuse, r.use_fr, r.use_amt, +1);
                admitted++;
            }
            fq_adm_result_release(&r);
        }
    }
    double dt = now_s() - t0;
    out->decisions = decisions;
    out->admitted = admitted;
    out->decisions_per_s = (double)decisions / dt;
    free(recs);
    for (int q = 0; q < NCQ; q++)
        free(heaps[q].mem);
    free(heaps);
    fq_adm_release(&a);
}

/* --- part 3: the Kueue controller's own pending queues ---------------- */

struct cq_result {
    double inserts_per_s, moves_per_s, decisions_per_s, requeue_ms;
    double queue_bytes, record_bytes; /* per pending workload */
    /* record_bytes in parts: the record with its key and namespace (one
     * allocation) and its slot in k->recs, its LocalQueue's name, its
     * podsets */
    double rec_part, str_part, ps_part;
    long decisions, admitted, moves;
    bool order_ok;
};

/* The bytes the process holds: malloc's (in use and mapped) and the
 * small-block slabs' (alloc.h: the maps' key copies live there, which
 * mallinfo2 does not see). */
static double held_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return (double)(m.uordblks + m.hblkhd) + (double)fq_small_mapped();
}

/* Queue c of k in order? (kq_rec_cmp is a total order: strictly.) */
static bool queues_sorted(struct kueue *k, int ncq)
{
    for (int c = 0; c < ncq; c++) {
        struct pq *q = &k->pq[c];
        size_t n = kq_pq_nact(q);
        for (size_t i = 1; i < n; i++)
            if (kq_rec_cmp(kq_pq_act(q, i - 1), kq_pq_act(q, i)) >= 0)
                return false;
    }
    return true;
}

/*
 * The controller's own queues (src/core/kueue/queues.c) holding NWL
 * pending workloads in NCQ ClusterQueues (the quota tree of part 1),
 * driven through the calls the controller makes:
 *   inserts    kq_rec_attach of each workload as it is created, in
 *              creation order; priorities mixed (0, 100, 200), so a
 *              create lands at the end of its priority's run, in the
 *              middle of the queue; queue-order times in whole seconds,
 *              1,000 creates a second, so the generated names break ties;
 *   moves      1% of them, at random, get another priority (the
 *              controller detaches the record, derives it again, and
 *              attaches it: a remove and an insert in the middle);
 *   decisions  rounds of one head per queue, as kq_cycle takes them
 *              with one pop per ClusterQueue per cycle: the head read
 *              from the queue, fq_adm_assign, then at the round's end the
 *              admitted ones removed and the others parked (kq_pq_remove,
 *              kq_pq_park), until every queue is empty;
 *   requeue    1% more workloads are created while the others wait
 *              parked, then capacity changes: kq_pq_requeue merges every
 *              parked one back among them.
 * Rates are per CPU second of the bench (it runs alone in its process,
 * one thread), so a busy machine slows them less than wall time would.
 * Bytes per pending workload (held_bytes: malloc's and the small-block
 * slabs'): the queues' own (around the inserts) and what the controller
 * holds per workload besides, made the way kq_rec_refresh and derive_spec
 * make it (around making them all): the record (kq_rec_new: struct rec,
 * its key and namespace), its slot in k->recs (which borrows the
 * record's key), its LocalQueue's name (interned, kq_qname_take), and
 * its podsets (a reference to a shared podset view, as derive_spec
 * takes one for a shape seen before: nothing a record). A freshly created
 * workload has no QuotaReserved=False message yet; a parked one also
 * holds that text.
 */
static void ctl_queues(struct cq_result *out, int NWL, int NCQ)
{
    int ncoh = NCQ < 10 ? NCQ : 10;
    struct snap *s = fq_xcalloc(1, sizeof(*s));
    struct fq_adm *a = &s->adm;
    fq_adm_init(a);
    int rc = fq_adm_resource(a, "cpu");
    int rm = fq_adm_resource(a, "memory");
    int rg = fq_adm_resource(a, "nvidia.com/gpu");
    int flv[3] = {fq_adm_flavor(a, "reserved"), fq_adm_flavor(a, "on-demand"),
                  fq_adm_flavor(a, "spot")};
    int *coh = fq_xcalloc((size_t)ncoh, sizeof(*coh));
    for (int c = 0; c < ncoh; c++)
        coh[c] = fq_adm_add_node(a, false);
    s->ncq = NCQ;
    s->cqs = fq_xcalloc((size_t)NCQ, sizeof(*s->cqs));
    for (int q = 0; q < NCQ; q++) {
        int cq = fq_adm_add_cq(a);
        struct fq_adm_cq *x = &a->cqs[cq];
        a->nodes[x->node].parent = coh[q % ncoh];
        x->ngroups = 1;
        x->groups = fq_xcalloc(1, sizeof(*x->groups));
        x->groups[0].res_mask = 7;
        x->groups[0].nflv = 3;
        for (int f = 0; f < 3; f++) {
            x->groups[0].flv[f] = (uint8_t)flv[f];
            fq_adm_cell(a, x->node, flv[f], rc)->nominal = 200 * 1000;
            fq_adm_cell(a, x->node, flv[f], rm)->nominal = 800ll << 30;
            fq_adm_cell(a, x->node, flv[f], rg)->nominal = 16;
            fq_adm_cell(a, x->node, flv[f], rg)->borrow_limit = 8;
        }
        s->cqs[q].adm = cq;
        s->cqs[q].active = true;
    }
    fq_adm_finish(a);

    /* 64 podset shapes, shared by the records (r->shape picks one). */
    enum {
        NSHAPE = 64
    };

    static int64_t sreq[NSHAPE][3];
    static struct fq_adm_podset sps[NSHAPE];
    for (int i = 0; i < NSHAPE; i++) {
        sreq[i][rc] = (int64_t)(1 + xorshift() % 8) * 1000;
        sreq[i][rm] = (int64_t)(1 + xorshift() % 32) << 30;
        sreq[i][rg] = (int64_t)(xorshift() % 3);
        sps[i] = (struct fq_adm_podset){.name = "main",
                                        .count = (int)(1 + xorshift() % 4),
                                        .selector_ok = ~0ull,
                                        .taint_ok = ~0ull,
                                        .req = sreq[i]};
        sps[i].min_count = sps[i].count;
    }

    struct kueue *k = fq_xcalloc(1, sizeof(*k));
    k->snap = s;
    k->park_gen = 1;
    k->cycle_ms = FQ_KUEUE_CYCLE_MS;
    k->pq = fq_xcalloc((size_t)NCQ + 1, sizeof(*k->pq));
    k->cqn = fq_xcalloc((size_t)NCQ + 1, sizeof(*k->cqn));

    /* The podset views the records copy, one per shape. */
    static char *sname[NSHAPE];
    static struct psview views[NSHAPE];
    for (int i = 0; i < NSHAPE; i++) {
        sname[i] = (char *)sps[i].name; /* copied, never written */
        /* the bench's own reference: never freed by the records */
        views[i] = (struct psview){1, &sps[i], &sname[i], sreq[i], 1};
    }
    k->recs.free_val = kq_rec_free;
    k->recs.borrow_keys = true;
    k->qnames.free_val = kq_qname_free;
    int nall = NWL + NWL / 100; /* 1% more arrive while the rest wait */
    struct rec **recs = fq_xcalloc((size_t)nall, sizeof(*recs));
    double m0 = held_bytes(), mr, ms;
    char key[64];
    for (int i = 0; i < nall; i++) {
        snprintf(key, sizeof(key), "team-a/job-%08x",
                 (unsigned)(xorshift() & 0xffffffffu));
        if (fq_smap_has(&k->recs, key)) { /* a name drawn twice */
            i--;
            continue;
        }
        struct rec *r = recs[i] = kq_rec_new(k, key);
        r->w.cq = (int)(xorshift() % (uint64_t)NCQ);
        r->w.prio = (int32_t)(xorshift() % 3) * 100;
        r->w.created = r->w.qts = (int64_t)(i / 1000) * 1000;
        r->w.pending = true;
        r->ok = r->spec_ok = r->active = true;
        r->shape = (int)(xorshift() % NSHAPE);
    }
    mr = held_bytes();
    for (int i = 0; i < nall; i++)
        recs[i]->queue_name = kq_qname_take(k, "user-queue");
    ms = held_bytes();
    for (int i = 0; i < nall; i++) {
        struct rec *r = recs[i];
        kq_wl_share_podsets(&r->w, &views[r->shape]);
    }
    double m1 = held_bytes();
    out->rec_part = (mr - m0) / nall; /* with its slot in k->recs */
    out->str_part = (ms - mr) / nall;
    out->ps_part = (m1 - ms) / nall;
    out->record_bytes = (m1 - m0) / nall;

    double t0 = cpu_s();
    for (int i = 0; i < NWL; i++)
        kq_rec_attach(k, recs[i]);
    double t1 = cpu_s();
    double m2 = held_bytes();
    out->inserts_per_s = NWL / (t1 - t0);
    out->queue_bytes = (m2 - m1) / NWL;

    long moves = NWL / 100;
    t0 = cpu_s();
    for (long i = 0; i < moves; i++) {
        struct rec *r = recs[xorshift() % (uint64_t)NWL];
        kq_rec_detach(k, r);
        r->w.prio = (int32_t)(xorshift() % 3) * 100;
        kq_rec_attach(k, r);
    }
    t1 = cpu_s();
    out->moves = moves;
    out->moves_per_s = (double)moves / (t1 - t0);
    out->order_ok = queues_sorted(k, NCQ);

    struct rec **heads = fq_xcalloc((size_t)NCQ, sizeof(*heads));
    bool *fit = fq_xcalloc((size_t)NCQ, sizeof(*fit));
    long decisions = 0, admitted = 0;
    struct fq_adm_result res;
    t0 = cpu_s();
    for (;;) {
        int nheads = 0;
        for (int c = 0; c < NCQ; c++)
            if (kq_pq_nact(&k->pq[c]) > 0)
                heads[nheads++] = kq_pq_act(&k->pq[c], 0);
        if (nheads == 0)
            break;
        for (int h = 0; h < nheads; h++) {
            struct wl *w = &heads[h]->w;
            struct fq_adm_wl aw = {.cq = s->cqs[w->cq].adm,
                                   .priority = w->prio,
                                   .ts = w->qts,
                                   .npodsets = w->npodsets,
                                   .ps = w->ps,
                                   .no_msg = true};
            fq_adm_assign(a, &aw, NULL, 0, &res);
            decisions++;
            fit[h] = res.mode == FQ_ADM_FIT;
            if (fit[h]) {
                fq_adm_charge(a, aw.cq, res.nuse, res.use_fr, res.use_amt, +1);
                w->pending = false;
                admitted++;
            }
            fq_adm_result_release(&res);
        }
        for (int h = 0; h < nheads; h++)
            if (fit[h])
                kq_pq_remove(k, heads[h]);
            else
                kq_pq_park(k, heads[h]);
    }
    t1 = cpu_s();
    out->decisions = decisions;
    out->admitted = admitted;
    out->decisions_per_s = (double)decisions / (t1 - t0);

    for (int i = NWL; i < nall; i++)
        kq_rec_attach(k, recs[i]);
    t0 = cpu_s();
    kq_pq_requeue(k);
    out->requeue_ms = (cpu_s() - t0) * 1000;
    out->order_ok = out->order_ok && queues_sorted(k, NCQ);
    size_t back = 0;
    for (int c = 0; c < NCQ; c++)
        back += kq_pq_nact(&k->pq[c]);
    if (back != (size_t)(nall - admitted))
        out->order_ok = false;

    for (int c = 0; c < NCQ; c++)
        kq_pq_release(&k->pq[c]);
    free(k->pq);
    free(k->cqn);
    fq_smap_free(&k->recs); /* frees the records */
    fq_smap_free(&k->qnames);
    free(k);
    free(heads);
    free(fit);
    free(recs);
    free(coh);
    free(s->cqs);
    fq_adm_release(a);
    free(s);
}

static int run_controller_queues(int pending, int ncq)
{
    struct cq_result r;
    ctl_queues(&r, pending, ncq);
    printf("Kueue controller's pending queues (src/core/kueue/queues.c): "
           "%d pending in %d ClusterQueue%s\n",
           pending, ncq, ncq == 1 ? "" : "s");
    printf("  inserts/s          %.0f   (creates in creation order, mixed "
           "priorities)\n",
           r.inserts_per_s);
    printf("  moves/s            %.0f   (%ld priority changes: remove + "
           "insert)\n",
           r.moves_per_s, r.moves);
    printf("  decisions/s        %.0f   (%ld decisions, %ld admitted; "
           "target >= 1000000)\n",
           r.decisions_per_s, r.decisions, r.admitted);
    printf("  requeue            %.1f ms (every parked workload merged back "
           "among 1%% new ones)\n",
           r.requeue_ms);
    printf("  bytes per pending  %.1f in the queues + %.0f held = %.0f   "
           "(target <= 150)\n",
           r.queue_bytes, r.record_bytes, r.queue_bytes + r.record_bytes);
    printf("    held: %.0f record (struct rec %zu B, key, namespace; its "
           "recs slot) + %.0f queue name + %.0f podsets\n",
           r.rec_part, sizeof(struct rec), r.str_part, r.ps_part);
    printf("  order              %s\n", r.order_ok ? "ok" : "BROKEN");
    printf("{\"bench\":\"admission\",\"queues\":\"controller\",\"pending\":%d,"
           "\"cqs\":%d,\"inserts_per_s\":%.0f,\"moves_per_s\":%.0f,"
           "\"decisions_per_s\":%.0f,\"requeue_ms\":%.1f,"
           "\"queue_bytes_per_pending\":%.1f,\"record_bytes_per_pending\":%.0f,"
           "\"struct_rec_bytes\":%zu,\"order_ok\":%s}\n",
           pending, ncq, r.inserts_per_s, r.moves_per_s, r.decisions_per_s,
           r.requeue_ms, r.queue_bytes, r.record_bytes, sizeof(struct rec),
           r.order_ok ? "true" : "false");
    return r.order_ok ? 0 : 1;
}

/* --- part 2: Kueue's baseline in virtual time ------------------------- */

struct base_result {
    double usage_pct;
    double mean_ms[3];
    double wall_s;
    long preemptions, cycles;
};

/* The record that holds a queued fq_adm_wl (container-of). */
static struct pend *owner_of(struct fq_adm_wl *w)
{
    return (struct pend *)(void *)((char *)w - offsetof(struct pend, w));
}

static void baseline(int per_cycle, struct base_result *out)
{
    enum {
        NCOH = 5,
        PER = 6,
        NCQ = NCOH * PER
    };

    const int counts[3] = {350, 100, 50};
    const int64_t cpu[3] = {1000, 5000, 20000};
    const int64_t run[3] = {200, 500, 1000};
    const int32_t prio[3] = {50, 100, 200};
    const int64_t every[3] = {100, 500, 1200};
    struct fq_adm a;
    fq_adm_init(&a);
    int rc = fq_adm_resource(&a, "cpu");
    int f = fq_adm_flavor(&a, "default");
    int coh[NCOH];
    for (int c = 0; c < NCOH; c++)
        coh[c] = fq_adm_add_node(&a, false);
    for (int q = 0; q < NCQ; q++) {
        int cq = fq_adm_add_cq(&a);
        struct fq_adm_cq *x = &a.cqs[cq];
        a.nodes[x->node].parent = coh[q / PER];
        x->ngroups = 1;
        x->groups = fq_xcalloc(1, sizeof(*x->groups));
        x->groups[0].res_mask = 1;
        x->groups[0].nflv = 1;
        x->groups[0].flv[0] = (uint8_t)f;
        x->within_cq = FQ_ADM_LOWER_PRIORITY;
        x->reclaim_within_cohort = FQ_ADM_ANY;
        struct fq_adm_cell *cell = fq_adm_cell(&a, x->node, f, rc);
        cell->nominal = 20000;
        cell->borrow_limit = 100000;
    }
    fq_adm_finish(&a);

    int n = NCQ * (counts[0] + counts[1] + counts[2]);
    struct pend *recs = fq_xcalloc((size_t)n, sizeof(*recs));
    int k = 0;
    for (int q = 0; q < NCQ; q++)
        for (int c = 0; c < 3; c++)
            for (int i = 0; i < counts[c]; i++) {
                struct pend *p = &recs[k++];
                p->req[rc] = cpu[c];
                p->ps.count = p->ps.min_count = 1;
                p->ps.selector_ok = p->ps.taint_ok = ~0ull;
                p->ps.req = p->req;
                p->w.cq = q;
                p->w.priority = prio[c];
                p->created = i * every[c];
                p->w.ts = p->created * 1000 + q; /* ties by queue */
                p->w.npodsets = 1;
                p->w.ps = &p->ps;
                p->cls = c;
                p->runtime = run[c];
                p->admitted = -1;
                p->holder = -1;
            }
    /* Arrivals in time order. */
    struct pend **arr = fq_xcalloc((size_t)n, sizeof(*arr));
    for (int i = 0; i < n; i++)
        arr[i] = &recs[i];
    for (int i = 1; i < n; i++) { /* insertion by created (nearly sorted) */
        struct pend *x = arr[i];
        int j = i - 1;
        while (j >= 0 && arr[j]->created > x->created) {
            arr[j + 1] = arr[j];
            j--;
        }
        arr[j + 1] = x;
    }
    struct heap *heaps = fq_xcalloc(NCQ, sizeof(*heaps));
    struct pend **parked = fq_xcalloc((size_t)n, sizeof(*parked));
    int nparked = 0;
    struct pend **running = fq_xcalloc((size_t)n, sizeof(*running));
    int nrun = 0;
    /* Holders: every running workload plus those admitted this cycle
     * (a victim re-admitted in the same cycle appears twice). */
    struct fq_adm_holder *hs = fq_xcalloc((size_t)n * 2, sizeof(*hs));
    struct pend **hp = fq_xcalloc((size_t)n * 2, sizeof(*hp));
    struct pend **sticky = fq_xcalloc((size_t)n, sizeof(*sticky));
    int nsticky = 0;
    int next_arr = 0, done = 0;
    int64_t t = 0;
    double used_ms = 0; /* integral of cpu in use (milli-cpu * ms) */
    int64_t in_use = 0;
    long preemptions = 0, cycles = 0;
    int64_t last_t = 0;
    struct pend **heads = fq_xcalloc(NCQ, sizeof(*heads));
    while (done < n) {
        used_ms += (double)in_use * (double)(t - last_t);
        last_t = t;
        /* Completions up to t release quota and requeue the parked. */
        bool released = false;
        int w = 0;
        for (int i = 0; i < nrun; i++) {
            struct pend *p = running[i];
            if (p->admitted + p->runtime <= t) {
                fq_adm_charge(&a, p->w.cq, p->nuse, p->use_fr, p->use_amt, -1);
                in_use -= p->req[rc];
                done++;
                released = true;
            } else {
                running[w++] = p;
            }
        }
        nrun = w;
        if (released) {
            for (int i = 0; i < nparked; i++)
                heap_push(&heaps[parked[i]->w.cq], &parked[i]->w);
            nparked = 0;
        }
        while (next_arr < n && arr[next_arr]->created <= t) {
            struct pend *p = arr[next_arr++];
            heap_push(&heaps[p->w.cq], &p->w);
        }
        /* One cycle. */
        int nh = 0;
        for (int i = 0; i < nrun; i++) {
            struct pend *p = running[i];
            hs[nh].cq = p->w.cq;
            hs[nh].priority = p->w.priority;
            hs[nh].ts = p->w.ts;
            hs[nh].reserved_at = p->admitted;
            hs[nh].nuse = p->nuse;
            hs[nh].use_fr = p->use_fr;
            hs[nh].use_amt = p->use_amt;
            hp[nh++] = p;
        }
        bool tried = false;
        for (int round = 0; per_cycle == 0 || round < per_cycle; round++) {
            int nheads = 0;
            for (int q = 0; q < NCQ; q++) {
                struct fq_adm_wl *x = heap_pop(&heaps[q]);
                if (x)
                    heads[nheads++] = owner_of(x);
            }
            if (nheads == 0)
                break;
            tried = true;
            for (int h = 0; h < nheads; h++) {
                struct pend *p = heads[h];
                struct fq_adm_result r;
                fq_adm_assign(&a, &p->w, hs, nh, &r);
                if (r.mode == FQ_ADM_FIT) {
                    fq_adm_charge(&a, p->w.cq, r.nuse, r.use_fr, r.use_amt, +1);
                    p->nuse = r.nuse;
                    memcpy(p->use_fr, r.use_fr, sizeof(p->use_fr));
                    memcpy(p->use_amt, r.use_amt, sizeof(p->use_amt));
                    p->admitted = t;
                    in_use += p->req[rc];
                    running[nrun++] = p;
                    hs[nh].cq = p->w.cq;
                    hs[nh].priority = p->w.priority;
                    hs[nh].ts = p->w.ts;
                    hs[nh].reserved_at = t;
                    hs[nh].nuse = p->nuse;
                    hs[nh].use_fr = p->use_fr;
                    hs[nh].use_amt = p->use_amt;
                    hp[nh++] = p;
                } else if (r.mode == FQ_ADM_PREEMPT && r.ntargets > 0) {
                    for (int i = 0; i < r.ntargets; i++) {
                        struct pend *v = hp[r.targets[i]];
                        if (v->admitted < 0 || hs[r.targets[i]].evicting)
                            continue;
                        hs[r.targets[i]].evicting = true;
                        /* Evict: release, requeue at once (Preempted). */
                        fq_adm_charge(&a, v->w.cq, v->nuse, v->use_fr,
                                      v->use_amt, -1);
                        hs[r.targets[i]].nuse = 0;
                        in_use -= v->req[rc];
                        for (int j = 0; j < nrun; j++)
                            if (running[j] == v) {
                                running[j] = running[--nrun];
                                break;
                            }
                        v->admitted = -1;
                        heap_push(&heaps[v->w.cq], &v->w);
                        preemptions++;
                    }
                    sticky[nsticky++] = p; /* head again next cycle */
                } else {
                    parked[nparked++] = p;
                }
                fq_adm_result_release(&r);
            }
        }
        for (int i = 0; i < nsticky; i++)
            heap_push(&heaps[sticky[i]->w.cq], &sticky[i]->w);
        nsticky = 0;
        if (tried)
            cycles++;
        /* Next time: a cycle later if a queue has a head, else the next
         * arrival or completion. */
        int64_t next = INT64_MAX;
        bool heads_left = false;
        for (int q = 0; q < NCQ; q++)
            if (heaps[q].n)
                heads_left = true;
        if (heads_left || tried)
            next = t + FQ_KUEUE_CYCLE_MS;
        if (next_arr < n && arr[next_arr]->created < next)
            next = arr[next_arr]->created > t ? arr[next_arr]->created :
                                                t + FQ_KUEUE_CYCLE_MS;
        for (int i = 0; i < nrun; i++) {
            int64_t fin = running[i]->admitted + running[i]->runtime;
            if (fin < next)
                next = fin > t ? fin : t + 1;
        }
        if (next == INT64_MAX)
            break;
        t = next;
    }
    double sum[3] = {0}, cnt[3] = {0};
    for (int i = 0; i < n; i++) {
        sum[recs[i].cls] += (double)(recs[i].admitted - recs[i].created);
        cnt[recs[i].cls] += 1;
    }
    for (int c = 0; c < 3; c++)
        out->mean_ms[c] = cnt[c] ? sum[c] / cnt[c] : 0;
    out->wall_s = (double)t / 1000.0;
    out->usage_pct = 100.0 * used_ms / ((double)NCQ * 20000.0 * (double)t);
    out->preemptions = preemptions;
    out->cycles = cycles;
    free(heads);
    free(sticky);
    free(hs);
    free(hp);
    free(running);
    free(parked);
    for (int q = 0; q < NCQ; q++)
        free(heaps[q].v);
    free(heaps);
    free(arr);
    free(recs);
    fq_adm_release(&a);
}

int main(int argc, char **argv)
{
    /* admission [--queues heaps|controller] [--cqs N] [PENDING]:
     * 100,000 pending by default; issue 21 asks 1,000,000 */
    int pending = 100000, ncq = 100;
    bool controller = false, bad = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--queues") == 0 && i + 1 < argc) {
            i++;
            controller = strcmp(argv[i], "controller") == 0;
            bad = !controller && strcmp(argv[i], "heaps") != 0;
        } else if (strcmp(argv[i], "--cqs") == 0 && i + 1 < argc) {
            ncq = atoi(argv[++i]);
            bad = ncq < 1 || ncq > 10000;
        } else {
            pending = atoi(argv[i]);
            bad = pending < 1000 || pending > 10000000;
        }
    }
    if (bad || (ncq != 100 && !controller)) {
        fprintf(stderr, "usage: admission [--queues heaps|controller] "
                        "[--cqs N (1-10000, controller only)] "
                        "[PENDING (1000-10000000)]\n");
        return 2;
    }
    if (controller)
        return run_controller_queues(pending, ncq);
    struct tp_result tp;
    throughput(&tp, pending);
    printf("admission throughput: %d pending workloads, 100 "
           "ClusterQueues, 10 cohorts, 3 flavors, 3 resources\n",
           pending);
    printf("  decisions          %ld (%ld admitted)\n", tp.decisions,
           tp.admitted);
    /* Issue 21's targets, set for 1,000,000 pending. */
    printf("  decisions/s        %.0f   (target >= 1000000)\n",
           tp.decisions_per_s);
    printf("  bytes per pending  %.0f   (target <= 150)\n",
           tp.bytes_per_pending);

    struct base_result k1, k0;
    baseline(1, &k1);
    baseline(0, &k0);
    printf("\nKueue scheduler baseline (kueue.md 5.1), virtual time, cycle "
           "%d ms:\n",
           FQ_KUEUE_CYCLE_MS);
    printf("  %-28s %8s %10s %10s %10s %8s\n", "", "usage%", "large s",
           "medium s", "small s", "wall s");
    printf("  %-28s %8.1f %10.1f %10.1f %10.1f %8s\n",
           "Kueue published (envtest)", 55.9, 16.5, 76.8, 215.5, "351.1");
    printf("  %-28s %8.1f %10.1f %10.1f %10.1f %8.1f\n",
           "flexq, 1 pop/CQ/cycle", k1.usage_pct, k1.mean_ms[2] / 1000,
           k1.mean_ms[1] / 1000, k1.mean_ms[0] / 1000, k1.wall_s);
    printf("  %-28s %8.1f %10.1f %10.1f %10.1f %8.1f\n", "flexq, all that fit",
           k0.usage_pct, k0.mean_ms[2] / 1000, k0.mean_ms[1] / 1000,
           k0.mean_ms[0] / 1000, k0.wall_s);
    printf("  (preemptions %ld / %ld, cycles %ld / %ld)\n", k1.preemptions,
           k0.preemptions, k1.cycles, k0.cycles);
    printf("{\"bench\":\"admission\",\"pending\":%d,\"decisions_per_s\":%."
           "0f,\"bytes_per_pending\":%.0f,\"baseline_kueue_policy\":{"
           "\"usage_pct\":%.1f,\"large_s\":%.2f,\"medium_s\":%.2f,"
           "\"small_s\":%.2f,\"wall_s\":%.1f},\"baseline_flexq_policy\":{"
           "\"usage_pct\":%.1f,\"large_s\":%.2f,\"medium_s\":%.2f,"
           "\"small_s\":%.2f,\"wall_s\":%.1f},\"kueue_published\":{"
           "\"usage_pct\":55.9,\"large_s\":16.5,\"medium_s\":76.8,"
           "\"small_s\":215.5}}\n",
           pending, tp.decisions_per_s, tp.bytes_per_pending, k1.usage_pct,
           k1.mean_ms[2] / 1000, k1.mean_ms[1] / 1000, k1.mean_ms[0] / 1000,
           k1.wall_s, k0.usage_pct, k0.mean_ms[2] / 1000, k0.mean_ms[1] / 1000,
           k0.mean_ms[0] / 1000, k0.wall_s);
    return 0;
}
