/*
 * fairshare.c - Kueue's fair sharing: the dominant resource share (DRS)
 * of the nodes of the quota tree, the scheduler's tournament that orders
 * a cycle's heads by it, and preemption by it (fq_adm_fair_targets).
 *
 * The share (Kueue's pkg/cache/scheduler/fair_sharing.go)
 * --------------------------------------------------------
 * For a node n with a parent (a ClusterQueue in a cohort, or a Cohort
 * under another), per resource r:
 *
 *   borrowed(r) = sum over flavors f of max(0, usage(f,r) - subtree(f,r))
 *   lendable(r) = sum over flavors f of potential(parent(n), (f,r))
 *   ratio       = max over r with lendable(r) > 0 of
 *                 borrowed(r) * 1000 / lendable(r)
 *   share       = ratio / weight      (weight = fairSharing.weight, def. 1)
 *
 * A root has share 0; a node with weight 0 that borrows has an infinite
 * share (status shows INT64_MAX). status.fairSharing.weightedShare is the
 * share rounded up.
 *
 * Worked example: cohort C with CQs a and b, 10 cpu nominal each. a uses
 * 14 cpu: it borrows 4, lendable(cpu) = potential(C) = 20, ratio =
 * 4 * 1000 / 20 = 200; with weight 2 its share is 100. b, idle, has 0.
 *
 * The tournament (Kueue's fair_sharing_iterator.go)
 * --------------------------------------------------
 * With fair sharing on, a cycle's heads are not sorted by borrowing and
 * priority; each next head is the winner of a tournament in its cohort
 * tree: every head's usage is added to its ClusterQueue in turn and the
 * DRS of each node on its path to the root computed; at each Cohort the
 * child with the lowest DRS (with its nominee) wins, then the higher
 * priority, then the earlier queue-order time. The tournament runs again
 * before each head, on the quota as earlier heads of the cycle left it.
 *
 * Preemption (Kueue's fair_strategy.go and fairsharing/ordering.go)
 * -----------------------------------------------------------------
 * Candidates: workloads of the preemptor's ClusterQueue that
 * withinClusterQueue allows, and, with reclaimWithinCohort not Never,
 * workloads of other ClusterQueues of the cohort tree that borrow the
 * contested resources (LowerPriority: of lower priority only). With the
 * preemptor's usage added, target ClusterQueues are visited from the
 * root, each time into the child with the highest DRS (a Cohort wins a
 * tie; nodes not borrowing are pruned, except on the preemptor's path).
 * In the preemptor's own queue, candidates are taken by priority. In
 * another, with P = the DRS of the preemptor's side and T = the target
 * side's, both taken just below their least common ancestor:
 *
 *   LessThanOrEqualToFinalShare   P (with the workload) <= T without the
 *                                 candidate
 *   LessThanInitialShare          P (with the workload) < T as it is
 *
 * The first strategy is tried candidate by candidate (one taken, then
 * the target queue is chosen again); candidates it refused are tried
 * with the second, at most one per ClusterQueue. Once the preemptor fits,
 * targets are added back from the end while it still fits.
 *
 * Invariants: every function leaves the tree's usage as it found it
 * (charges are simulated and undone).
 *
 * Not done: Kueue's feature gates newer than v0.13 that change the
 * preemption (FairSharingPreemptWithinNominal, a second run of the first
 * strategy after in-queue targets). Admission fair sharing between the
 * LocalQueues of one ClusterQueue is afs.c.
 */
#include "kueue/fairshare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"

/* --- the share ---------------------------------------------------------- */

void fq_fs_drs(const struct fq_adm *a, int node, struct fq_fs_drs *out)
{
    const struct fq_adm_node *n = &a->nodes[node];
    out->ratio = 0;
    out->weight_milli = n->fair_weight_milli;
    out->borrowing = false;
    out->res = -1;
    if (n->parent < 0)
        return;
    int64_t borrowed[FQ_ADM_MAX_RES] = {0};
    for (int f = 0; f < a->nflv; f++)
        for (int r = 0; r < a->nres; r++) {
            const struct fq_adm_cell *c = &n->cells[f * a->nres + r];
            if (c->usage > c->subtree) {
                borrowed[r] += c->usage - c->subtree;
                out->borrowing = true;
            }
        }
    if (!out->borrowing)
        return;
    for (int r = 0; r < a->nres; r++) {
        if (borrowed[r] == 0)
            continue;
        int64_t lend = 0;
        for (int f = 0; f < a->nflv; f++) {
            int64_t p = fq_adm_node_potential(a, n->parent, f * a->nres + r);
            if (p > 0)
                lend = lend > INT64_MAX - p ? INT64_MAX : lend + p;
        }
        if (lend <= 0)
            continue;
        double ratio = (double)borrowed[r] * 1000.0 / (double)lend;
        /* Ties go to the resource first by name, as Kueue's. */
        if (ratio > out->ratio ||
            (ratio == out->ratio &&
             (out->res < 0 ||
              strcmp(a->res_names[r], a->res_names[out->res]) < 0))) {
            out->ratio = ratio;
            out->res = r;
        }
    }
}

static bool zero_weight_borrows(const struct fq_fs_drs *d)
{
    return d->weight_milli == 0 && d->borrowing;
}

static double precise(const struct fq_fs_drs *d)
{
    if (zero_weight_borrows(d))
        return INFINITY;
    if (d->ratio == 0)
        return 0;
    return d->ratio * 1000.0 / (double)d->weight_milli;
}

/* Kueue prunes a node whose share is zero. */
static bool is_zero(const struct fq_fs_drs *d)
{
    return !zero_weight_borrows(d) && d->ratio == 0;
}

int fq_fs_cmp(const struct fq_fs_drs *x, const struct fq_fs_drs *y)
{
    bool zx = zero_weight_borrows(x), zy = zero_weight_borrows(y);
    double px, py;
    if (zx && zy) {
        px = x->ratio;
        py = y->ratio;
    } else if (zx || zy) {
        return zx ? 1 : -1;
    } else {
        px = precise(x);
        py = precise(y);
    }
    return px < py ? -1 : px > py ? 1 : 0;
}

int64_t fq_fs_weighted_share(const struct fq_fs_drs *d)
{
    if (zero_weight_borrows(d))
        return INT64_MAX;
    double p = ceil(precise(d));
    return p >= 9.2e18 ? INT64_MAX : (int64_t)p;
}

/* --- tree helpers ------------------------------------------------------- */

static int root_of(const struct fq_adm *a, int node)
{
    for (int guard = 0; a->nodes[node].parent >= 0 && guard < a->nnodes;
         guard++)
        node = a->nodes[node].parent;
    return node;
}

/* The path from node up to its root: path[0] = node. Returns its length. */
static int path_up(const struct fq_adm *a, int node, int *path)
{
    int n = 0;
    while (node >= 0 && n < a->nnodes) {
        path[n++] = node;
        node = a->nodes[node].parent;
    }
    return n;
}

/* --- the tournament ----------------------------------------------------- */

struct tour {
    const struct fq_adm *a;
    const struct fq_fs_entry *e;
    int n, len;            /* entries, path slots per entry */
    bool *in;              /* entry takes part (same root) */
    int *path, *plen;      /* path[i * len + j] */
    struct fq_fs_drs *drs; /* drs[i * len + j]: of path[j], with entry i */
    int *seen;             /* scratch: cohorts already played at one level */
};

/* Where node P is on entry i's path, or -1. */
static int pos_of(const struct tour *t, int i, int P)
{
    for (int j = 0; j < t->plen[i]; j++)
        if (t->path[i * t->len + j] == P)
            return j;
    return -1;
}

/* Kueue's entryComparer.less at cohort P: is entry x better than y? */
static bool less_at(const struct tour *t, int x, int y, int P)
{
    int jx = pos_of(t, x, P) - 1, jy = pos_of(t, y, P) - 1;
    int c = fq_fs_cmp(&t->drs[x * t->len + jx], &t->drs[y * t->len + jy]);
    if (c != 0)
        return c < 0;
    if (t->e[x].priority != t->e[y].priority)
        return t->e[x].priority > t->e[y].priority;
    if (t->e[x].ts != t->e[y].ts)
        return t->e[x].ts < t->e[y].ts;
    return x < y;
}

/* The winner among the entries under cohort P, or -1. */
static int play(struct tour *t, int P, int depth)
{
    int best = -1;
    int *seen = t->seen + (size_t)depth * (size_t)t->n;
    int nseen = 0;
    for (int i = 0; i < t->n; i++) {
        if (!t->in[i])
            continue;
        int j = pos_of(t, i, P);
        if (j < 1)
            continue;
        int child = t->path[i * t->len + j - 1];
        int cand = i;
        if (j - 1 > 0) {
            bool done = false;
            for (int s = 0; s < nseen; s++)
                done |= seen[s] == child;
            if (done)
                continue;
            seen[nseen++] = child;
            cand = play(t, child, depth + 1);
            if (cand < 0)
                continue;
        }
        if (best < 0 || less_at(t, cand, best, P))
            best = cand;
    }
    return best;
}

int fq_fs_next(struct fq_adm *a, const struct fq_fs_entry *e, int n)
{
    int node0 = a->cqs[e[0].cq].node;
    if (n <= 1 || a->nodes[node0].parent < 0)
        return 0;
    int root = root_of(a, node0);
    struct tour t = {.a = a, .e = e, .n = n, .len = a->nnodes};
    t.in = fq_xcalloc((size_t)n, sizeof(bool));
    t.path = fq_xcalloc((size_t)n * (size_t)t.len, sizeof(int));
    t.plen = fq_xcalloc((size_t)n, sizeof(int));
    t.drs = fq_xcalloc((size_t)n * (size_t)t.len, sizeof(struct fq_fs_drs));
    t.seen = fq_xcalloc((size_t)t.len * (size_t)n + 1, sizeof(int));
    for (int i = 0; i < n; i++) {
        int node = a->cqs[e[i].cq].node;
        if (a->nodes[node].parent < 0 || root_of(a, node) != root)
            continue;
        t.in[i] = true;
        t.plen[i] = path_up(a, node, &t.path[i * t.len]);
        fq_adm_charge(a, e[i].cq, e[i].nuse, e[i].use_fr, e[i].use_amt, +1);
        for (int j = 0; j < t.plen[i]; j++)
            fq_fs_drs(a, t.path[i * t.len + j], &t.drs[i * t.len + j]);
        fq_adm_charge(a, e[i].cq, e[i].nuse, e[i].use_fr, e[i].use_amt, -1);
    }
    int w = play(&t, root, 0);
    free(t.in);
    free(t.path);
    free(t.plen);
    free(t.drs);
    free(t.seen);
    return w < 0 ? 0 : w;
}

/* --- preemption ----------------------------------------------------------- */

struct pre {
    struct fq_adm *a;
    const struct fq_adm_wl *w;
    int own; /* the preemptor's ClusterQueue (fq_adm index) */
    int nneed;
    const uint16_t *fr;
    const int64_t *amt;
    const struct fq_adm_holder *h;
    /* candidates per ClusterQueue, in Kueue's candidate order */
    int **list;
    int *lo, *cnt;
    bool *cq_pruned, *node_pruned, *on_path;
    int *out, nout;
};

static void charge_holder(struct fq_adm *a, const struct fq_adm_holder *c,
                          int sign)
{
    fq_adm_charge(a, c->cq, c->nuse, c->use_fr, c->use_amt, sign);
}

static void charge_self(struct pre *p, int sign)
{
    fq_adm_charge(p->a, p->own, p->nneed, p->fr, p->amt, sign);
}

/* Does the preemptor fit now (its own usage not charged)? Borrowing is
 * allowed, as in Kueue's fair preemption. */
static bool fits_now(const struct pre *p)
{
    for (int i = 0; i < p->nneed; i++)
        if (p->amt[i] > fq_adm_available(p->a, p->own, p->fr[i]))
            return false;
    return true;
}

static bool cq_borrows(const struct pre *p, int cq)
{
    const struct fq_adm_node *n = &p->a->nodes[p->a->cqs[cq].node];
    for (int i = 0; i < p->nneed; i++)
        if (n->cells[p->fr[i]].usage > n->cells[p->fr[i]].nominal)
            return true;
    return false;
}

static bool uses_need(const struct pre *p, const struct fq_adm_holder *c)
{
    for (int i = 0; i < c->nuse; i++)
        for (int j = 0; j < p->nneed; j++)
            if (c->use_fr[i] == p->fr[j] && c->use_amt[i] > 0)
                return true;
    return false;
}

static bool allows(enum fq_adm_policy pol, const struct fq_adm_holder *c,
                   const struct fq_adm_wl *w)
{
    switch (pol) {
    case FQ_ADM_NEVER:
        return false;
    case FQ_ADM_LOWER_PRIORITY:
        return c->priority < w->priority;
    case FQ_ADM_LOWER_OR_NEWER_EQUAL_PRIORITY:
        return c->priority < w->priority ||
               (c->priority == w->priority && c->ts > w->ts);
    case FQ_ADM_ANY:
        return true;
    }
    return false;
}

/* Kueue's CandidatesOrdering: being evicted first, other ClusterQueues
 * before one's own, lower priority, most recently reserved. */
static int cand_before(const struct pre *p, int x, int y)
{
    const struct fq_adm_holder *a = &p->h[x], *b = &p->h[y];
    if (a->evicting != b->evicting)
        return a->evicting ? -1 : 1;
    bool ao = a->cq != p->own, bo = b->cq != p->own;
    if (ao != bo)
        return ao ? -1 : 1;
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    if (a->reserved_at != b->reserved_at)
        return a->reserved_at > b->reserved_at ? -1 : 1;
    return x - y;
}

static void sort_list(const struct pre *p, int *v, int n)
{
    for (int i = 1; i < n; i++) {
        int x = v[i], j = i - 1;
        while (j >= 0 && cand_before(p, v[j], x) > 0) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

static bool has_work(const struct pre *p, int cq)
{
    return p->lo[cq] < p->cnt[cq];
}

/* Kueue's nextTarget: descends from cohort P into the child with the
 * highest DRS; returns a ClusterQueue, or -1 after only pruning. */
static int next_target(struct pre *p, int P)
{
    struct fq_adm *a = p->a;
    int best_cq = -1, best_co = -1;
    struct fq_fs_drs dcq = {0}, dco = {0}, d;
    for (int c = 0; c < a->ncq; c++) {
        int node = a->cqs[c].node;
        if (a->nodes[node].parent != P || p->cq_pruned[c])
            continue;
        fq_fs_drs(a, node, &d);
        if ((is_zero(&d) && c != p->own) || !has_work(p, c)) {
            p->cq_pruned[c] = true;
        } else if (best_cq < 0 || fq_fs_cmp(&d, &dcq) >= 0) {
            best_cq = c;
            dcq = d;
        }
    }
    for (int node = 0; node < a->nnodes; node++) {
        if (a->nodes[node].is_cq || a->nodes[node].parent != P ||
            p->node_pruned[node])
            continue;
        fq_fs_drs(a, node, &d);
        if (is_zero(&d) && !p->on_path[node]) {
            p->node_pruned[node] = true;
        } else if (best_co < 0 || fq_fs_cmp(&d, &dco) >= 0) {
            best_co = node;
            dco = d;
        }
    }
    if (best_cq < 0 && best_co < 0) {
        p->node_pruned[P] = true;
        return -1;
    }
    if (best_co >= 0 && (best_cq < 0 || fq_fs_cmp(&dco, &dcq) >= 0))
        return next_target(p, best_co);
    return best_cq;
}

/* The children of the least common ancestor of the preemptor's and the
 * target's ClusterQueues on each side (Kueue's almost-LCAs). */
static void almost_lcas(const struct pre *p, int target, int *mine, int *theirs)
{
    const struct fq_adm *a = p->a;
    int pa[64], pb[64];
    int na = path_up(a, a->cqs[p->own].node, pa);
    int nb = path_up(a, a->cqs[target].node, pb);
    if (na > 64)
        na = 64;
    if (nb > 64)
        nb = 64;
    *mine = pa[0];
    *theirs = pb[0];
    for (int i = 1; i < na; i++)
        for (int j = 1; j < nb; j++)
            if (pa[i] == pb[j]) {
                *mine = pa[i - 1];
                *theirs = pb[j - 1];
                return;
            }
}

/* Takes candidate x as a target; true when the preemptor fits now. */
static bool take(struct pre *p, int x)
{
    charge_holder(p->a, &p->h[x], -1);
    p->out[p->nout++] = x;
    charge_self(p, -1);
    bool ok = fits_now(p);
    charge_self(p, +1);
    return ok;
}

static bool pass(int strategy, const struct fq_fs_drs *pnew,
                 const struct fq_fs_drs *told, const struct fq_fs_drs *tnew)
{
    if (strategy == FQ_FS_LESS_THAN_INITIAL_SHARE)
        return fq_fs_cmp(pnew, told) < 0;
    return fq_fs_cmp(pnew, tnew) <= 0;
}

static void reset_order(struct pre *p)
{
    memset(p->cq_pruned, 0, sizeof(bool) * (size_t)p->a->ncq);
    memset(p->node_pruned, 0, sizeof(bool) * (size_t)p->a->nnodes);
}

/* The first strategy over every candidate; refused ones go to retry.
 * Returns true once the preemptor fits. */
static bool first_strategy(struct pre *p, int strategy, int *retry, int *nretry)
{
    struct fq_adm *a = p->a;
    int own_node = a->cqs[p->own].node;
    if (a->nodes[own_node].parent < 0) {
        while (has_work(p, p->own))
            if (take(p, p->list[p->own][p->lo[p->own]++]))
                return true;
        return false;
    }
    int root = root_of(a, own_node);
    reset_order(p);
    while (!p->node_pruned[root]) {
        int t = next_target(p, root);
        if (t < 0)
            continue;
        if (t == p->own) {
            if (take(p, p->list[t][p->lo[t]++]))
                return true;
            continue;
        }
        int mine, theirs;
        almost_lcas(p, t, &mine, &theirs);
        struct fq_fs_drs pnew, told, tnew;
        fq_fs_drs(a, mine, &pnew);
        fq_fs_drs(a, theirs, &told);
        while (has_work(p, t)) {
            int x = p->list[t][p->lo[t]++];
            charge_holder(a, &p->h[x], -1);
            fq_fs_drs(a, theirs, &tnew);
            charge_holder(a, &p->h[x], +1);
            if (pass(strategy, &pnew, &told, &tnew)) {
                if (take(p, x))
                    return true;
                break; /* the shares moved: choose the target again */
            }
            retry[(*nretry)++] = x;
        }
    }
    return false;
}

/* Rule S2-b over the refused candidates: at most one per queue. */
static bool second_strategy(struct pre *p, const int *retry, int nretry)
{
    struct fq_adm *a = p->a;
    for (int c = 0; c < a->ncq; c++)
        p->lo[c] = p->cnt[c] = 0;
    for (int i = 0; i < nretry; i++) {
        int c = p->h[retry[i]].cq;
        p->list[c][p->cnt[c]++] = retry[i];
    }
    int own_node = a->cqs[p->own].node;
    if (a->nodes[own_node].parent < 0)
        return false;
    int root = root_of(a, own_node);
    reset_order(p);
    while (!p->node_pruned[root]) {
        int t = next_target(p, root);
        if (t < 0)
            continue;
        int mine, theirs;
        almost_lcas(p, t, &mine, &theirs);
        struct fq_fs_drs pnew, told;
        fq_fs_drs(a, mine, &pnew);
        fq_fs_drs(a, theirs, &told);
        int x = p->list[t][p->lo[t]++];
        if (t != p->own &&
            pass(FQ_FS_LESS_THAN_INITIAL_SHARE, &pnew, &told, &told) &&
            take(p, x))
            return true;
        p->cq_pruned[t] = true;
    }
    return false;
}

/* Candidates grouped per ClusterQueue, each list in candidate order. */
static void collect(struct pre *p, int nh)
{
    struct fq_adm *a = p->a;
    const struct fq_adm_cq *cq = &a->cqs[p->own];
    int own_node = cq->node;
    bool in_cohort = a->nodes[own_node].parent >= 0;
    int root = root_of(a, own_node);
    for (int i = 0; i < nh; i++) {
        const struct fq_adm_holder *c = &p->h[i];
        if (!uses_need(p, c))
            continue;
        bool ok;
        if (c->cq == p->own)
            ok = allows(cq->within_cq, c, p->w);
        else
            ok = in_cohort && cq->reclaim_within_cohort != FQ_ADM_NEVER &&
                 root_of(a, a->cqs[c->cq].node) == root &&
                 cq_borrows(p, c->cq) &&
                 allows(cq->reclaim_within_cohort, c, p->w);
        if (ok)
            p->list[c->cq][p->cnt[c->cq]++] = i;
    }
    for (int c = 0; c < a->ncq; c++)
        sort_list(p, p->list[c], p->cnt[c]);
}

int fq_adm_fair_targets(struct fq_adm *a, const struct fq_adm_wl *w, int nneed,
                        const uint16_t *need_fr, const int64_t *need_amt,
                        const struct fq_adm_holder *h, int nh, int *out)
{
    if (nh <= 0 || nneed <= 0)
        return 0;
    struct pre p = {.a = a,
                    .w = w,
                    .own = w->cq,
                    .nneed = nneed,
                    .fr = need_fr,
                    .amt = need_amt,
                    .h = h,
                    .out = out};
    p.list = fq_xcalloc((size_t)a->ncq, sizeof(int *));
    for (int c = 0; c < a->ncq; c++)
        p.list[c] = fq_xmalloc(sizeof(int) * (size_t)nh);
    p.lo = fq_xcalloc((size_t)a->ncq, sizeof(int));
    p.cnt = fq_xcalloc((size_t)a->ncq, sizeof(int));
    p.cq_pruned = fq_xcalloc((size_t)a->ncq, sizeof(bool));
    p.node_pruned = fq_xcalloc((size_t)a->nnodes, sizeof(bool));
    p.on_path = fq_xcalloc((size_t)a->nnodes, sizeof(bool));
    for (int n = a->nodes[a->cqs[p.own].node].parent, g = 0;
         n >= 0 && g < a->nnodes; n = a->nodes[n].parent, g++)
        p.on_path[n] = true;
    int *retry = fq_xmalloc(sizeof(int) * (size_t)nh);
    int nretry = 0;
    collect(&p, nh);

    charge_self(&p, +1);
    int s0 = a->nfs_strategies > 0 ? a->fs_strategies[0] :
                                     FQ_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
    bool fit = first_strategy(&p, s0, retry, &nretry);
    if (!fit && a->nfs_strategies > 1 &&
        a->fs_strategies[1] == FQ_FS_LESS_THAN_INITIAL_SHARE)
        fit = second_strategy(&p, retry, nretry);
    charge_self(&p, -1);

    int n = p.nout;
    if (fit) {
        /* Add back from the end (all but the last taken) while it fits. */
        for (int i = n - 2; i >= 0; i--) {
            charge_holder(a, &h[out[i]], +1);
            if (fits_now(&p)) {
                memmove(&out[i], &out[i + 1],
                        sizeof(int) * (size_t)(n - i - 1));
                n--;
            } else {
                charge_holder(a, &h[out[i]], -1);
            }
        }
    }
    for (int i = 0; i < n; i++)
        charge_holder(a, &h[out[i]], +1);
    if (!fit)
        n = 0;
    for (int c = 0; c < a->ncq; c++)
        free(p.list[c]);
    free(p.list);
    free(p.lo);
    free(p.cnt);
    free(p.cq_pruned);
    free(p.node_pruned);
    free(p.on_path);
    free(retry);
    return n;
}
