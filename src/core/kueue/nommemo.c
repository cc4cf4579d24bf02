/*
 * nommemo.c - failed nominations remembered: a head's flavor assignment
 * that found neither a Fit nor preemption targets is kept, and a later
 * head of the same kind on the same ClusterQueue gets it without a new
 * search while nothing it depends on has moved; and, on the same
 * versions, the parked heads of a root cohort where nothing moved are
 * kept parked through a requeue (quiet roots, at the end of the file).
 *
 * Why: with flexqd's own pace (policy.cycleMilliseconds 0, all that fit)
 * a cycle walks every pending head of every queue, and every release of
 * quota puts the parked ones back (Kueue's QueueInadmissibleWorkloads). A
 * deep queue's heads are mostly alike (a job's many workloads): in
 * issue 21's baseline (15,000 workloads, 30 queues, about 600 holders)
 * each turn with a finish assigned some 10,000 heads, each with a
 * preemption search over the holders, to find again and again that a
 * 1-cpu workload of priority 50 can neither fit nor preempt.
 *
 * What an assignment depends on (fq_adm_assign):
 *   - the workload: its ClusterQueue, podsets (counts, minimum counts,
 *     requests, flavors its selectors and taints allow: kq_shape_of) and
 *     their names (in the message), priority, the flavors in a cool-down
 *     (avoid_flv), its queue-order time only under a LowerOrNewerEqual
 *     policy; slices (forced flavors, base counts) are not remembered;
 *   - the quota tree under its ClusterQueue's root cohort: usage (quota
 *     and limits change only with the configuration, which drops the
 *     memo), and the holders of that tree with their priority, times,
 *     usage, eviction flag and relative order (preemption candidates
 *     come only from the same root, or the own queue).
 * So each root cohort has a version, bumped (kq_nm_touch) wherever its
 * usage or its holders move: a record accounted or not (kq_account), a
 * preemptor's quota set aside and given back (cycle.c), a victim marked
 * evicting, the holders a cycle appended sorted in at its end (their
 * relative order changes). An entry is valid while its root's version is
 * the one it was found on; with fair sharing nothing is remembered (its
 * targets weigh the whole tree's shares).
 *
 * Worked example: queue q of cohort C has 500 pending 1-cpu workloads of
 * priority 50 and C is full of priority-200 work. The first head's
 * assignment is NoCandidates at C's version 7; the next 499 heads of q
 * in the same cycle get that result (message included) by a lookup.
 * A finish in cohort D leaves C at 7, so the next cycle's walk of q costs
 * lookups again; a finish in C (version 8) costs one search, then
 * lookups.
 *
 * Invariants: a result returned from the memo is the one fq_adm_assign
 * would return for that workload now; a head kept parked would have been
 * parked again with the message it has (the scenario suite, the
 * simulator's event counts and test_kueue's test_nomination_memo, which
 * fails when either is served stale, are the oracle).
 *
 * What it does not do: remember Fits or preemptions (those move quota,
 * and so the version, at once), or outcomes across a configuration
 * change.
 */
#include "kueue/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Entries kept per ClusterQueue: its heads' distinct kinds in one
 * cycle (a queue mixes a few job shapes and priorities). */
#define NM_WAYS 8
/* Podset names longer than this (joined) are not remembered. */
#define NM_NAMES_MAX 256

struct nm_ent {
    bool used;
    int shape;
    int32_t prio;
    int64_t ts; /* compared only under a LowerOrNewerEqual policy */
    uint64_t avoid;
    uint64_t ver;             /* its root's version when found */
    char names[NM_NAMES_MAX]; /* podset names, each ended by '\n' */
    struct fq_adm_result res; /* no targets */
};

/* Per root cohort: whether every head parked under it since its queues
 * were last put back (requeued) failed on quota at one version, which. */
struct nm_root {
    bool quiet;
    bool has_ver;
    bool kept; /* its parked heads were kept parked by the last requeue */
    uint64_t ver;
};

struct nommemo {
    int ncq;
    struct nm_ent *ent; /* ncq * NM_WAYS */
    unsigned *next;     /* per queue: the entry replaced next */
    int nnodes;
    uint64_t *ver;        /* per fq_adm node (roots are used) */
    struct nm_root *root; /* per fq_adm node (roots are used) */
};

static int root_node(const struct fq_adm *a, int node)
{
    for (int guard = 0; a->nodes[node].parent >= 0 && guard < a->nnodes;
         guard++)
        node = a->nodes[node].parent;
    return node;
}

static struct nommemo *nm_get(struct kueue *k)
{
    if (k->nm)
        return k->nm;
    struct nommemo *m = fq_xcalloc(1, sizeof(*m));
    m->ncq = k->snap->ncq;
    m->ent = fq_xcalloc((size_t)m->ncq * NM_WAYS + 1, sizeof(*m->ent));
    m->next = fq_xcalloc((size_t)m->ncq + 1, sizeof(*m->next));
    m->nnodes = k->snap->adm.nnodes;
    m->ver = fq_xcalloc((size_t)m->nnodes + 1, sizeof(*m->ver));
    /* A root is quiet while nothing is parked under it; heads parked
     * before the memo existed are unknown. */
    m->root = fq_xcalloc((size_t)m->nnodes + 1, sizeof(*m->root));
    for (int i = 0; i < m->nnodes; i++)
        m->root[i].quiet = true;
    for (int c = 0; c < m->ncq && k->pq; c++) {
        const struct fq_adm *a = &k->snap->adm;
        int root = root_node(a, a->cqs[k->snap->cqs[c].adm].node);
        if (kq_pq_npark(&k->pq[c]) > 0 && root < m->nnodes)
            m->root[root].quiet = false;
    }
    k->nm = m;
    return m;
}

void kq_nm_free(struct kueue *k)
{
    struct nommemo *m = k->nm;
    if (!m)
        return;
    free(m->ent);
    free(m->next);
    free(m->ver);
    free(m->root);
    free(m);
    k->nm = NULL;
}

void kq_nm_touch(struct kueue *k, int adm_cq)
{
    struct nommemo *m = k->nm;
    if (!m || adm_cq < 0 || !k->snap || adm_cq >= k->snap->adm.ncq)
        return;
    const struct fq_adm *a = &k->snap->adm;
    int root = root_node(a, a->cqs[adm_cq].node);
    if (root < m->nnodes)
        m->ver[root]++;
}

/* The podset names of aw joined, each ended by '\n', into buf; false
 * when they do not fit (then nothing is remembered). */
static bool join_names(const struct fq_adm_wl *aw, char *buf)
{
    size_t len = 0;
    for (int p = 0; p < aw->npodsets; p++) {
        const char *s = aw->ps[p].name ? aw->ps[p].name : "";
        size_t n = strlen(s);
        if (memchr(s, '\n', n) || len + n + 2 > NM_NAMES_MAX)
            return false;
        memcpy(buf + len, s, n);
        len += n;
        buf[len++] = '\n';
    }
    buf[len] = '\0';
    return true;
}

/* Are aw's podset names the ones joined in `names`? (Walked, not
 * joined: this is every head's cost.) */
static bool names_eq(const char *names, const struct fq_adm_wl *aw)
{
    for (int p = 0; p < aw->npodsets; p++) {
        const char *s = aw->ps[p].name ? aw->ps[p].name : "";
        while (*s && *s == *names) {
            s++;
            names++;
        }
        if (*s || *names != '\n')
            return false;
        names++;
    }
    return *names == '\0';
}

/* Whether aw may be remembered at all (its names are compared apart). */
static bool key_of(struct kueue *k, struct rec *rc, const struct fq_adm_wl *aw,
                   bool *use_ts)
{
    const struct snap *s = k->snap;
    const struct wl *w = &rc->w;
    if (s->adm.fair || aw->forced_flv || aw->base_count || aw->skip_flv ||
        aw->no_msg || w->replaces || w->cq < 0 || w->cq >= s->ncq)
        return false;
    if (rc->shape == SHAPE_UNKNOWN)
        rc->shape = kq_shape_of(k, w);
    if (rc->shape < 0)
        return false;
    const struct fq_adm_cq *ac = &s->adm.cqs[aw->cq];
    *use_ts =
        ac->within_cq == FQ_ADM_LOWER_OR_NEWER_EQUAL_PRIORITY ||
        ac->reclaim_within_cohort == FQ_ADM_LOWER_OR_NEWER_EQUAL_PRIORITY ||
        ac->borrow_within_cohort == FQ_ADM_LOWER_OR_NEWER_EQUAL_PRIORITY;
    return true;
}

/* Copies a result without targets as its readers read it (admission.c's
 * result_reset): the fields before the usage arrays, nuse usage pairs,
 * no targets, the message up to its end. A whole struct is 2.4 KB, most
 * of it the message buffer and usage room nobody reads: copied whole, a
 * hit cost 300 instructions in memcpy alone. */
static void result_copy(struct fq_adm_result *dst,
                        const struct fq_adm_result *src)
{
    memcpy(dst, src, offsetof(struct fq_adm_result, use_fr));
    size_t n = src->nuse > 0 ? (size_t)src->nuse : 0;
    if (n > FQ_ADM_MAX_FLAVORS)
        n = FQ_ADM_MAX_FLAVORS;
    memcpy(dst->use_fr, src->use_fr, n * sizeof(*dst->use_fr));
    memcpy(dst->use_amt, src->use_amt, n * sizeof(*dst->use_amt));
    dst->ntargets = 0;
    dst->targets = NULL;
    dst->target_reason = NULL;
    const char *end = memchr(src->msg, '\0', sizeof(src->msg));
    size_t m = end ? (size_t)(end - src->msg) : sizeof(src->msg) - 1;
    memcpy(dst->msg, src->msg, m);
    dst->msg[m] = '\0';
}

static uint64_t ver_of(const struct kueue *k, const struct nommemo *m,
                       int adm_cq)
{
    const struct fq_adm *a = &k->snap->adm;
    int root = root_node(a, a->cqs[adm_cq].node);
    return root < m->nnodes ? m->ver[root] : 0;
}

bool kq_nm_find(struct kueue *k, struct rec *rc, const struct fq_adm_wl *aw,
                struct fq_adm_result *r)
{
    bool use_ts;
    if (!key_of(k, rc, aw, &use_ts))
        return false;
    struct nommemo *m = nm_get(k);
    uint64_t ver = ver_of(k, m, aw->cq);
    struct nm_ent *e = &m->ent[(size_t)rc->w.cq * NM_WAYS];
    for (int i = 0; i < NM_WAYS; i++, e++) {
        if (!e->used || e->ver != ver || e->shape != rc->shape ||
            e->prio != aw->priority || e->avoid != aw->avoid_flv ||
            (use_ts && e->ts != aw->ts) || !names_eq(e->names, aw))
            continue;
        fq_adm_result_release(r);
        result_copy(r, &e->res);
        k->stats.nom_memo_hits++;
        return true;
    }
    return false;
}

void kq_nm_put(struct kueue *k, struct rec *rc, const struct fq_adm_wl *aw,
               const struct fq_adm_result *r)
{
    if (r->mode != FQ_ADM_NOFIT && r->mode != FQ_ADM_NO_CANDIDATES)
        return;
    if (r->ntargets > 0)
        return;
    bool use_ts;
    char names[NM_NAMES_MAX];
    if (!key_of(k, rc, aw, &use_ts) || !join_names(aw, names))
        return;
    struct nommemo *m = nm_get(k);
    uint64_t ver = ver_of(k, m, aw->cq);
    struct nm_ent *base = &m->ent[(size_t)rc->w.cq * NM_WAYS];
    /* The same key found at an older version, else a stale entry, else
     * the next in turn. */
    struct nm_ent *e = NULL;
    for (int i = 0; i < NM_WAYS && !e; i++)
        if (base[i].used && base[i].shape == rc->shape &&
            base[i].prio == aw->priority && base[i].avoid == aw->avoid_flv &&
            (!use_ts || base[i].ts == aw->ts) && !strcmp(base[i].names, names))
            e = &base[i];
    for (int i = 0; i < NM_WAYS && !e; i++)
        if (!base[i].used || base[i].ver != ver)
            e = &base[i];
    if (!e)
        e = &base[m->next[rc->w.cq]++ % NM_WAYS];
    e->used = true;
    e->shape = rc->shape;
    e->prio = aw->priority;
    e->ts = aw->ts;
    e->avoid = aw->avoid_flv;
    e->ver = ver;
    memcpy(e->names, names, strlen(names) + 1);
    result_copy(&e->res, r); /* (r has no targets: see above) */
}

/* --- quiet roots ---------------------------------------------------------
 *
 * Every release of quota puts every parked head back (kq_pq_requeue), and
 * the next cycle walks them all again, though under a root cohort whose
 * version has not moved since they were parked each would find exactly
 * what it found: the same failure, the same message (kq_set_pending then
 * writes nothing), parked again. So, with cycles at flexqd's own pace
 * (cycleMilliseconds 0, all that fit), a requeue keeps parked the heads
 * of a root that is quiet at its current version, and the cycle checks
 * before its rounds that nothing else can be tried under that root: if
 * its version moved meanwhile (a finish derived, the migration pass) or
 * one of its queues has a head in its active list (a new or changed
 * workload, which may be admitted and move the version while the kept
 * heads would have been tried after it), the kept heads are put back
 * then and walked as before. A cycle that kept heads of an active queue
 * counts as one that tried heads, as walking them would have.
 */

static struct nm_root *root_of_cq(struct kueue *k, int cq, uint64_t *ver)
{
    struct nommemo *m = nm_get(k);
    const struct fq_adm *a = &k->snap->adm;
    int root = root_node(a, a->cqs[k->snap->cqs[cq].adm].node);
    if (root >= m->nnodes)
        return NULL;
    if (ver)
        *ver = m->ver[root];
    return &m->root[root];
}

void kq_nm_parked(struct kueue *k, const struct rec *rc, bool quota,
                  bool limit0)
{
    const struct wl *w = &rc->w;
    if (!k->snap || w->cq < 0 || w->cq >= k->snap->ncq)
        return;
    uint64_t ver;
    struct nm_root *r = root_of_cq(k, w->cq, &ver);
    if (!r)
        return;
    bool ok = quota && limit0 && k->cycle_ms == 0 && !k->snap->adm.fair &&
              !k->afs_on && !w->is_slice && !w->replaces && !w->avoid_ann;
    if (!ok)
        r->quiet = false;
    else if (!r->has_ver) {
        r->has_ver = true;
        r->ver = ver;
    } else if (r->ver != ver) {
        r->quiet = false;
    }
}

void kq_nm_unquiet(struct kueue *k, int cq)
{
    if (!k->nm || !k->snap || cq < 0 || cq >= k->snap->ncq)
        return;
    struct nm_root *r = root_of_cq(k, cq, NULL);
    if (r)
        r->quiet = false;
}

bool kq_nm_keep(struct kueue *k, int cq)
{
    if (!k->snap || cq < 0 || cq >= k->snap->ncq || k->cycle_ms != 0)
        return false;
    uint64_t ver;
    struct nm_root *r = root_of_cq(k, cq, &ver);
    if (!r)
        return false;
    if (r->kept)
        return true;
    if (r->quiet && r->has_ver && r->ver == ver) {
        r->kept = true;
        return true;
    }
    /* Its heads are all put back: none parked, quiet again. */
    r->quiet = true;
    r->has_ver = false;
    return false;
}

bool kq_nm_kept(struct kueue *k, int cq, bool *put_back)
{
    *put_back = false;
    if (!k->nm || !k->snap || cq < 0 || cq >= k->snap->ncq)
        return false;
    uint64_t ver;
    struct nm_root *r = root_of_cq(k, cq, &ver);
    if (!r || !r->kept)
        return false;
    if (r->ver != ver || !r->quiet) {
        *put_back = true;
        return false;
    }
    return true;
}

void kq_nm_put_back_root(struct kueue *k, int cq)
{
    struct nm_root *r = root_of_cq(k, cq, NULL);
    if (!r)
        return;
    r->kept = false;
    r->quiet = true;
    r->has_ver = false;
}

void kq_nm_cycle_end(struct kueue *k)
{
    struct nommemo *m = k->nm;
    for (int i = 0; m && i < m->nnodes; i++)
        m->root[i].kept = false;
}
