/*
 * queues.c - the records' bookkeeping: the order of Kueue's queues, the
 * sorted key lists of what changed, quota usage (account: the only place
 * usage moves, invariant 1), each ClusterQueue's pending queue (struct
 * pq: active and parked, in heap order, each stored in chunks by
 * pqseq.c), the holders (preemption candidates) and the migration
 * candidates.
 *
 * These are indexes kept for speed: each follows from the records alone
 * (rec_attach / rec_detach put a record in or take it out of all of
 * them), so none can disagree with the records; the checker of K3/K4
 * compares the usage with the stored workloads after every scenario
 * settle.
 */
#include "kueue/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wl_cmp(const void *x, const void *y)
{
    const struct wl *a = *(struct wl *const *)x;
    const struct wl *b = *(struct wl *const *)y;
    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    if (a->qts != b->qts)
        return a->qts < b->qts ? -1 : 1;
    int c = strcmp(a->ns, b->ns);
    if (c)
        return c;
    return strcmp(a->name, b->name);
}

/* Kueue's entry order within a cycle (makeClassicalIterator). */
static int entry_cmp(const void *x, const void *y)
{
    const struct wl *a = *(struct wl *const *)x;
    const struct wl *b = *(struct wl *const *)y;
    if (a->nom_borrows != b->nom_borrows)
        return a->nom_borrows ? 1 : -1;
    return wl_cmp(x, y);
}

/* entry_cmp over an array of records. */
int kq_head_cmp(const void *x, const void *y)
{
    const struct wl *a = &(*(struct rec *const *)x)->w;
    const struct wl *b = &(*(struct rec *const *)y)->w;
    return entry_cmp(&a, &b);
}

/* --- records: usage, queues, holders ------------------------------------ */

int kq_rec_cmp(const struct rec *a, const struct rec *b)
{
    const struct wl *x = &a->w, *y = &b->w;
    /* Admission fair sharing (afs.c): in a ClusterQueue that uses it,
     * the LocalQueue with the lower weighted usage goes first. Every
     * pending record of a queue has a LocalQueue of that queue. */
    const struct lq_info *la = x->lq, *lb = y->lq;
    if (la != lb && la && lb && la->afs && lb->afs &&
        la->afs_key != lb->afs_key)
        return la->afs_key < lb->afs_key ? -1 : 1;
    return wl_cmp(&x, &y);
}

/* kq_rec_cmp as the queues' storage (pqseq.c) calls it. */
static int seq_cmp(const void *a, const void *b)
{
    return kq_rec_cmp(a, b);
}

/* Sorts queue cq again after its order moved (a LocalQueue's
 * fair-sharing usage changed): only admission fair sharing does this. */
void kq_pq_resort(struct kueue *k, int cq)
{
    struct pq *q = &k->pq[cq];
    k->q_ver++;
    kq_seq_resort(&q->act, seq_cmp);
    kq_seq_resort(&q->park, seq_cmp);
}

size_t kq_ncell(const struct snap *s)
{
    return (size_t)(s->adm.nflv * s->adm.nres);
}

/*
 * Adds (sign +1) or removes (-1) what a record contributes: its charge in
 * the quota tree when it holds quota, and the pending / reserving /
 * admitted counts and admitted usage of its queues. Exact inverses, as
 * long as w does not change in between (callers detach first).
 */
void kq_account(struct kueue *k, struct rec *r, int sign)
{
    struct snap *s = k->snap;
    struct wl *w = &r->w;
    if (sign > 0 ? r->accounted : !r->accounted)
        return;
    r->accounted = sign > 0;
    k->counts_dirty = true;
    if (w->holds) {
        fq_adm_charge(&s->adm, s->cqs[w->cq].adm, w->nuse, w->use_fr,
                      w->use_amt, sign);
        k->snap_ver++;
        kq_nm_touch(k, s->cqs[w->cq].adm);
        for (int u = 0; sign < 0 && u < w->nuse && s->adm.nres > 0; u++) {
            int f = (w->use_fr[u] / s->adm.nres) % FQ_ADM_MAX_FLAVORS;
            k->rel_flv[f]++;
            k->mig_rel |= 1ull << f;
        }
        if (sign < 0)
            k->mig_dirty = true;
    }
    if (w->cq < 0 || !(w->holds || w->pending))
        return;
    int kind = w->holds ? 1 : 0;
    int *lq = w->lq ? k->lqn[w->lq - s->lqs] : NULL;
    k->cqn[w->cq][kind] += sign;
    if (lq)
        lq[kind] += sign;
    if (!w->holds || !w->admitted)
        return;
    if (k->lq_use)
        kq_afs_charge(k, w, sign);
    k->cqn[w->cq][2] += sign;
    if (lq)
        lq[2] += sign;
    size_t nc = kq_ncell(s);
    for (int u = 0; u < w->nuse; u++)
        if (w->use_fr[u] < nc)
            k->adm_use[(size_t)w->cq * nc + w->use_fr[u]] +=
                sign * w->use_amt[u];
}

size_t kq_pq_nact(const struct pq *q)
{
    return q->act.n;
}

struct rec *kq_pq_act(struct pq *q, size_t i)
{
    return kq_seq_at(&q->act, i);
}

size_t kq_pq_npark(const struct pq *q)
{
    return q->park.n;
}

struct rec *kq_pq_park_head(const struct pq *q)
{
    return kq_seq_first(&q->park);
}

void kq_pq_release(struct pq *q)
{
    kq_seq_release(&q->act);
    kq_seq_release(&q->park);
}

bool kq_rec_parked(const struct kueue *k, const struct rec *r)
{
    return r->parked == k->park_gen;
}

/* Is r in its queue's park (not act)? */
static bool in_park(const struct kueue *k, const struct rec *r)
{
    return r->in_park_gen == k->park_gen;
}

static void pq_insert(struct kueue *k, struct rec *r)
{
    struct pq *q = &k->pq[r->w.cq];
    k->q_ver++;
    r->qcq = r->w.cq;
    r->in_park_gen = kq_rec_parked(k, r) ? k->park_gen : 0;
    if (in_park(k, r)) {
        kq_nm_unquiet(k, r->w.cq); /* parked without being tried */
        kq_seq_insert(&q->park, r, seq_cmp);
    } else
        kq_seq_insert(&q->act, r, seq_cmp);
}

void kq_pq_remove(struct kueue *k, struct rec *r)
{
    if (r->qcq < 0)
        return;
    struct pq *q = &k->pq[r->qcq];
    k->q_ver++;
    /* Not there cannot be: rec_cmp is a total order. */
    (void)kq_seq_remove(in_park(k, r) ? &q->park : &q->act, r, seq_cmp);
    r->qcq = -1;
}

/* Parks r (inadmissible until capacity changes): act -> park. */
void kq_pq_park(struct kueue *k, struct rec *r)
{
    r->parked = k->park_gen;
    if (r->qcq < 0 || in_park(k, r))
        return;
    struct pq *q = &k->pq[r->qcq];
    k->q_ver++;
    (void)kq_seq_remove(&q->act, r, seq_cmp);
    kq_seq_insert(&q->park, r, seq_cmp);
    r->in_park_gen = k->park_gen;
}

/* Parks the first m entries of queue c's act, as m pq_park calls on its
 * head would (ff_replay). They sort after every parked entry when heads
 * were parked in order since the last requeue: then the run is
 * appended. */
void kq_pq_park_first(struct kueue *k, size_t c, size_t m)
{
    struct pq *q = &k->pq[c];
    if (m == 0)
        return;
    kq_nm_unquiet(k, (int)c);
    k->q_ver++;
    for (size_t i = 0; i < m; i++) {
        struct rec *r = kq_seq_at(&q->act, i);
        r->parked = k->park_gen;
        r->in_park_gen = k->park_gen;
    }
    struct rec *last = kq_seq_last(&q->park);
    if (!last || kq_rec_cmp(last, kq_seq_first(&q->act)) < 0) {
        for (size_t i = 0; i < m; i++)
            kq_seq_append(&q->park, kq_seq_at(&q->act, i));
    } else {
        for (size_t i = 0; i < m; i++)
            kq_seq_insert(&q->park, kq_seq_at(&q->act, i), seq_cmp);
    }
    kq_seq_drop_first(&q->act, m);
}

/* Queue c's parked entries merged back into its act, in order (see
 * kq_pq_requeue). */
static void merge_back(struct pq *q)
{
    if (q->park.n == 0)
        return;
    if (q->act.n == 0) {
        /* Every one was parked: the two trade places. */
        kq_seq_swap(&q->act, &q->park);
        return;
    }
    if (kq_rec_cmp(kq_seq_last(&q->park), kq_seq_first(&q->act)) < 0)
        kq_seq_prepend(&q->act, &q->park);
    else
        kq_seq_merge(&q->act, &q->park, seq_cmp);
}

/* Sets a parked record's generations to *(uint64_t *)gen. */
static void set_park_gen(void *x, void *gen)
{
    struct rec *r = x;
    r->parked = r->in_park_gen = *(const uint64_t *)gen;
}

/*
 * Capacity changed: every parked workload may be a head again (Kueue's
 * QueueInadmissibleWorkloads), in order: each park is merged back into
 * its act. A deep queue holds tens of thousands of parked records and
 * capacity changes with every workload that ends, so this touches no
 * record it need not: the new park_gen takes them all out of park at
 * once, and when the parked ones all sort before the others (heads are
 * parked in order) their chunks go in front of act's (or the two trade
 * places when all were parked), or else the merge is one pass, not an
 * insert per record. The heads of a quiet root cohort (nommemo.c: each
 * would find what it found) stay parked under the new generation.
 */
void kq_pq_requeue(struct kueue *k)
{
    k->park_gen++;
    k->q_ver++;
    for (int c = 0; k->snap && c < k->snap->ncq; c++) {
        struct pq *q = &k->pq[c];
        if (q->park.n == 0)
            continue;
        if (kq_nm_keep(k, c)) {
            kq_seq_each(&q->park, set_park_gen, &k->park_gen);
            k->stats.requeue_kept += q->park.n;
            continue;
        }
        merge_back(q);
    }
}

/* Queue c's parked heads put back (a kept quiet root that moved). */
void kq_pq_unpark(struct kueue *k, int c)
{
    struct pq *q = &k->pq[c];
    if (q->park.n == 0)
        return;
    k->q_ver++;
    uint64_t zero = 0;
    kq_seq_each(&q->park, set_park_gen, &zero);
    merge_back(q);
}

/* Sorted-by-key arrays of records (holders, migration candidates). */
size_t kq_k_lower(struct rec *const *v, size_t n, const char *key)
{
    size_t lo = 0;
    while (lo < n) {
        size_t mid = lo + (n - lo) / 2;
        if (fq_keyq_order(v[mid]->key, key) < 0)
            lo = mid + 1;
        else
            n = mid;
    }
    return lo;
}

void kq_holder_fill(struct kueue *k, size_t i)
{
    const struct wl *w = &k->hw[i]->w;
    struct fq_adm_holder *h = &k->hs[i];
    h->cq = k->snap->cqs[w->cq].adm;
    h->priority = w->prio;
    h->ts = w->qts;
    h->reserved_at = w->hold->reserved_at; /* a holder has one */
    h->evicting = w->evicting;
    h->nuse = w->nuse;
    h->use_fr = w->use_fr;
    h->use_amt = w->use_amt;
}

/* The index of a holder, or nh. Holders admitted in the running cycle sit
 * unsorted after nh_sorted. */
size_t kq_holder_at(const struct kueue *k, const struct rec *r)
{
    size_t i = kq_k_lower(k->hw, k->nh_sorted, r->key);
    if (i < k->nh_sorted && k->hw[i] == r)
        return i;
    for (i = k->nh_sorted; i < k->nh; i++)
        if (k->hw[i] == r)
            return i;
    return k->nh;
}

static void holder_put(struct kueue *k, size_t at, struct rec *r)
{
    if (k->nh + 1 > k->caph) {
        k->caph = k->caph ? 2 * k->caph : 64;
        k->hw = fq_xrealloc(k->hw, k->caph * sizeof(*k->hw));
        k->hs = fq_xrealloc(k->hs, k->caph * sizeof(*k->hs));
    }
    memmove(&k->hw[at + 1], &k->hw[at], (k->nh - at) * sizeof(*k->hw));
    memmove(&k->hs[at + 1], &k->hs[at], (k->nh - at) * sizeof(*k->hs));
    k->hw[at] = r;
    k->nh++;
    kq_holder_fill(k, at);
}

/* A new holder: sorted in, or during a cycle appended (the cycle's later
 * heads see it as Kueue's snapshot does: after the holders it began
 * with) and sorted in by holders_settle. */
void kq_holders_add(struct kueue *k, struct rec *r)
{
    if (!k->snap->preempts)
        return; /* nobody can be a target: no list to keep */
    r->holder = true;
    if (k->in_cycle) {
        holder_put(k, k->nh, r);
        return;
    }
    holder_put(k, kq_k_lower(k->hw, k->nh_sorted, r->key), r);
    k->nh_sorted++;
}

static void holders_del(struct kueue *k, struct rec *r)
{
    if (!r->holder)
        return;
    size_t at = kq_holder_at(k, r);
    r->holder = false;
    if (at == k->nh)
        return;
    memmove(&k->hw[at], &k->hw[at + 1], (k->nh - at - 1) * sizeof(*k->hw));
    memmove(&k->hs[at], &k->hs[at + 1], (k->nh - at - 1) * sizeof(*k->hs));
    k->nh--;
    if (at < k->nh_sorted)
        k->nh_sorted--;
}

void kq_holders_settle(struct kueue *k)
{
    k->in_cycle = false;
    size_t n = k->nh - k->nh_sorted;
    if (n == 0)
        return;
    struct rec **tail = fq_xmalloc(n * sizeof(*tail));
    memcpy(tail, &k->hw[k->nh_sorted], n * sizeof(*tail));
    k->nh = k->nh_sorted;
    for (size_t i = 0; i < n; i++) {
        holder_put(k, kq_k_lower(k->hw, k->nh_sorted, tail[i]->key), tail[i]);
        k->nh_sorted++;
        /* Its place among its cohort's holders moved (a remembered
         * nomination's candidates came in the old order). */
        kq_nm_touch(k, k->snap->cqs[tail[i]->w.cq].adm);
    }
    free(tail);
}

/* The flavors a move of w may not go to: in each group, the latest one
 * assigned and every later one. */
static uint64_t mig_skip_of(const struct snap *s, const struct wl *w)
{
    const struct fq_adm_cq *ac = &s->adm.cqs[s->cqs[w->cq].adm];
    uint64_t skip = 0;
    for (int g = 0; g < ac->ngroups; g++) {
        const struct fq_adm_group *grp = &ac->groups[g];
        int last = -1;
        for (int i = 0; i < grp->nflv; i++)
            if ((w->hold->assigned_flv >> grp->flv[i]) & 1)
                last = i;
        if (last < 0)
            continue;
        for (int i = last; i < grp->nflv; i++)
            skip |= 1ull << grp->flv[i];
    }
    return skip;
}

/* The flavors of the snapshot a candidate may move to, at most (those
 * in a cool-down are left out when it tries). */
static uint64_t mig_to_of(const struct kueue *k, const struct rec *r)
{
    int nflv = k->snap->adm.nflv;
    return ~r->w.hold->mig_skip & (nflv < 64 ? (1ull << nflv) - 1 : ~0ull);
}

static void mig_add(struct kueue *k, struct rec *r)
{
    r->w.hold->mig_skip = mig_skip_of(k->snap, &r->w);
    size_t at = kq_k_lower(k->mig, k->nmig, r->key);
    FQ_GROW(k->mig, k->capmig, k->nmig + 1);
    memmove(&k->mig[at + 1], &k->mig[at], (k->nmig - at) * sizeof(*k->mig));
    k->mig[at] = r;
    k->nmig++;
    r->in_mig = true;
    k->mig_dirty = true;
    FQ_GROW(k->mig_new, k->capmig_new, k->nmig_new + 1);
    k->mig_new[k->nmig_new++] = r;
    r->in_mig_new = true;
    for (uint64_t m = mig_to_of(k, r); m; m &= m - 1)
        k->mig_to[__builtin_ctzll(m)]++;
}

static void mig_del(struct kueue *k, struct rec *r)
{
    if (!r->in_mig)
        return;
    r->in_mig = false;
    for (uint64_t m = mig_to_of(k, r); m; m &= m - 1)
        k->mig_to[__builtin_ctzll(m)]--;
    for (size_t i = 0; r->in_mig_new && i < k->nmig_new; i++)
        if (k->mig_new[i] == r) {
            k->mig_new[i] = k->mig_new[--k->nmig_new];
            r->in_mig_new = false;
        }
    size_t at = kq_k_lower(k->mig, k->nmig, r->key);
    if (at < k->nmig && k->mig[at] == r) {
        memmove(&k->mig[at], &k->mig[at + 1],
                (k->nmig - at - 1) * sizeof(*k->mig));
        k->nmig--;
    }
}

/* Takes r out of usage, counts, queues, holders and candidates. */
void kq_rec_detach(struct kueue *k, struct rec *r)
{
    kq_account(k, r, -1);
    kq_pq_remove(k, r);
    holders_del(k, r);
    mig_del(k, r);
}

/* Puts r back where its w says it belongs. */
void kq_rec_attach(struct kueue *k, struct rec *r)
{
    if (!r->ok)
        return;
    kq_account(k, r, +1);
    if (r->w.pending && r->w.cq >= 0)
        pq_insert(k, r);
    if (r->w.holds)
        kq_holders_add(k, r);
    if (r->w.holds && r->w.waiting_check)
        mig_add(k, r);
}

struct rec *kq_rec_new(struct kueue *k, const char *key)
{
    size_t nk = strlen(key) + 1, nns = strcspn(key, "/");
    struct rec *r = fq_xcalloc(1, sizeof(*r) + nk + nns + 1);
    r->key = (char *)(r + 1);
    memcpy(r->key, key, nk);
    r->w.ns = r->key + nk;
    memcpy(r->w.ns, key, nns);
    r->w.ns[nns] = '\0';
    r->w.name = key[nns] ? r->key + nns + 1 : r->key + nk - 1;
    r->qcq = -1;
    fq_smap_put(&k->recs, r->key, r); /* recs borrows r's key */
    return r;
}

void kq_rec_free(void *p)
{
    struct rec *r = p;
    kq_wl_release(&r->w);
    free(r->w.hold);
    kq_qname_drop(r->queue_name);
    free(r);
}
