/*
 * admission.c - Kueue's flavor assignment, quota arithmetic and preemption
 * target selection, over the compact structs of admission.h.
 *
 * How it works
 * ------------
 * Quota lives in a tree of nodes: ClusterQueues are leaves, Cohorts inner
 * nodes. Every node has one cell per (flavor, resource), "fr" for short,
 * numbered flv * nres + res. As in Kueue's resource_node.go:
 *
 *   guaranteed(n)  = lendingLimit set ? max(0, subtree(n) - lendingLimit) : 0
 *   subtree(n)     = nominal(n) + sum over children c of
 *                    (subtree(c) - guaranteed(c))
 *   usage(parent) += max(0, usage(c) - guaranteed(c))   for each child c
 *   available(n)   = root: subtree - usage
 *                    else: max(0, guaranteed - usage)
 *                          + min(available(parent),
 *                                subtree - guaranteed
 *                                - max(0, usage - guaranteed)
 *                                + borrowingLimit)   (min only when set)
 *   potential(n)   = available(n) computed as if all usage were zero
 *
 * Worked example: cohort C with CQs a and b, 10 cpu nominal each, b with
 * lendingLimit 4. guaranteed(b) = 6, subtree(C) = 10 + 4 = 14. With b
 * idle, a can use available(a) = 0 + (14 - 0) = 14 cpu: its own 10 plus the
 * 4 b lends.
 *
 * Flavor assignment (fq_adm_assign) follows Kueue's flavorassigner: for
 * each podset and each resource group it requests, flavors are tried in
 * the listed order; a flavor whose labels or taints do not suit the podset
 * is skipped (NoMatchingFlavor); each requested resource is checked with
 * val = what earlier podsets of this workload take from the flavor + this
 * podset's request:
 *
 *   val > potential          NoFit   "insufficient quota ... > maximum"
 *   val <= available         Fit     (borrowing when usage+val > nominal)
 *   otherwise                Preempt if the policies allow and targets
 *                            exist, else NoCandidates / NoFit
 *                            "insufficient unused quota ..., N more needed"
 *
 * The flavor's mode is its worst resource's. A Fit without borrowing stops
 * the search; whenCanBorrow / whenCanPreempt decide whether a borrowing or
 * preempting flavor stops it too; otherwise the best mode seen wins.
 * When the whole assignment is neither Fit nor Preempt with targets and a
 * podset allows fewer pods (minCount), counts are reduced proportionally
 * and binary-searched (Kueue's podset reducer).
 *
 * Preemption target selection is Kueue's classic one: candidates ordered
 * (being evicted first, other ClusterQueues before one's own, lower
 * priority first, most recently reserved first), removed greedily until
 * the workload fits, then added back from the end while it still fits.
 *
 * Invariants
 *   1. Usage of a node equals the sum of its charges (CQ) or of its
 *      children's above-guarantee usage (cohort); fq_adm_charge keeps it.
 *   2. fq_adm_assign leaves the tree as it found it (it simulates removals
 *      and puts them back).
 *
 * What it does not do: look at objects, time, admission checks or the
 * queues; controller.c does that and calls in here.
 */
#include "kueue/admission.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/assert.h"
#include "flexq/quantity.h"

#define NO_FLV (-1)

void fq_adm_init(struct fq_adm *a)
{
    memset(a, 0, sizeof(*a));
}

void fq_adm_release(struct fq_adm *a)
{
    for (int i = 0; i < a->nres; i++)
        free(a->res_names[i]);
    for (int i = 0; i < a->nflv; i++)
        free(a->flv_names[i]);
    for (int i = 0; i < a->nnodes; i++)
        free(a->nodes[i].cells);
    for (int i = 0; i < a->ncq; i++)
        free(a->cqs[i].groups);
    free(a->nodes);
    free(a->cqs);
    memset(a, 0, sizeof(*a));
}

static int intern(char **names, int *n, int max, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    if (*n >= max)
        return -1;
    names[*n] = fq_xstrdup(name);
    return (*n)++;
}

static int find(char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

int fq_adm_resource(struct fq_adm *a, const char *name)
{
    int r = intern(a->res_names, &a->nres, FQ_ADM_MAX_RES, name);
    if (r >= 0) {
        a->res_scale[r] = (uint8_t)fq_quantity_scale_for(name);
        a->res_fmt[r] = (uint8_t)(strcmp(name, "memory") == 0 ||
                                          strstr(name, "storage") != NULL ?
                                      FQ_QF_BINARY_SI :
                                      FQ_QF_DECIMAL_SI);
    }
    return r;
}

int fq_adm_flavor(struct fq_adm *a, const char *name)
{
    return intern(a->flv_names, &a->nflv, FQ_ADM_MAX_FLAVORS, name);
}

int fq_adm_find_resource(const struct fq_adm *a, const char *name)
{
    return find(a->res_names, a->nres, name);
}

int fq_adm_find_flavor(const struct fq_adm *a, const char *name)
{
    return find(a->flv_names, a->nflv, name);
}

int fq_adm_add_node(struct fq_adm *a, bool is_cq)
{
    FQ_GROW(a->nodes, a->cap_nodes, (size_t)a->nnodes + 1);
    struct fq_adm_node *n = &a->nodes[a->nnodes];
    size_t ncell = (size_t)(a->nflv > 0 ? a->nflv : 1) *
                   (size_t)(a->nres > 0 ? a->nres : 1);
    n->parent = -1;
    n->is_cq = is_cq;
    n->declared_any = false;
    n->fair_weight_milli = 1000;
    n->cells = fq_xcalloc(ncell, sizeof(*n->cells));
    for (size_t i = 0; i < ncell; i++) {
        n->cells[i].borrow_limit = FQ_ADM_UNLIMITED;
        n->cells[i].lend_limit = FQ_ADM_UNLIMITED;
    }
    return a->nnodes++;
}

struct fq_adm_cell *fq_adm_cell(struct fq_adm *a, int node, int flv, int res)
{
    return &a->nodes[node].cells[flv * a->nres + res];
}

int fq_adm_add_cq(struct fq_adm *a)
{
    int node = fq_adm_add_node(a, true);
    FQ_GROW(a->cqs, a->cap_cq, (size_t)a->ncq + 1);
    struct fq_adm_cq *cq = &a->cqs[a->ncq];
    memset(cq, 0, sizeof(*cq));
    cq->node = node;
    cq->can_preempt_try_next = true;
    return a->ncq++;
}

static int64_t guaranteed(const struct fq_adm_cell *c)
{
    if (c->lend_limit == FQ_ADM_UNLIMITED)
        return 0;
    int64_t g = c->subtree - c->lend_limit;
    return g > 0 ? g : 0;
}

static int depth(const struct fq_adm *a, int n)
{
    int d = 0;
    while (a->nodes[n].parent >= 0 && d < a->nnodes) {
        n = a->nodes[n].parent;
        d++;
    }
    return d;
}

static int64_t sat_add(int64_t x, int64_t y)
{
    int64_t r;
    if (fq_add_overflow(x, y, &r) != 0)
        return y > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

void fq_adm_finish(struct fq_adm *a)
{
    int ncell = a->nflv * a->nres;
    int maxd = 0;
    int *d = fq_xcalloc((size_t)a->nnodes + 1, sizeof(int));
    for (int i = 0; i < a->nnodes; i++) {
        d[i] = depth(a, i);
        if (d[i] > maxd)
            maxd = d[i];
        for (int f = 0; f < ncell; f++) {
            a->nodes[i].cells[f].subtree = a->nodes[i].cells[f].nominal;
            a->nodes[i].cells[f].usage = 0;
        }
    }
    /* Deepest first, so children are complete before their parents. */
    for (int level = maxd; level > 0; level--) {
        for (int i = 0; i < a->nnodes; i++) {
            if (d[i] != level)
                continue;
            struct fq_adm_node *p = &a->nodes[a->nodes[i].parent];
            for (int f = 0; f < ncell; f++) {
                const struct fq_adm_cell *c = &a->nodes[i].cells[f];
                p->cells[f].subtree =
                    sat_add(p->cells[f].subtree, c->subtree - guaranteed(c));
            }
        }
    }
    free(d);
}

static void charge_fr(struct fq_adm *a, int node, int fr, int64_t delta)
{
    while (delta != 0) {
        struct fq_adm_cell *c = &a->nodes[node].cells[fr];
        int64_t old = c->usage;
        c->usage += delta;
        /* Charges and releases are exact inverses (a workload is charged
         * once and released once): usage below zero is a double release. */
        FQ_ASSERT(c->usage >= 0);
        int parent = a->nodes[node].parent;
        if (parent < 0)
            return;
        int64_t g = guaranteed(c);
        int64_t before = old > g ? old - g : 0;
        int64_t after = c->usage > g ? c->usage - g : 0;
        delta = after - before;
        node = parent;
    }
}

void fq_adm_charge(struct fq_adm *a, int cq, int nuse, const uint16_t *fr,
                   const int64_t *amt, int sign)
{
    int node = a->cqs[cq].node;
    for (int i = 0; i < nuse; i++)
        charge_fr(a, node, fr[i], sign * amt[i]);
}

static int64_t avail_node(const struct fq_adm *a, int node, int fr,
                          bool potential)
{
    const struct fq_adm_cell *c = &a->nodes[node].cells[fr];
    int64_t usage = potential ? 0 : c->usage;
    int parent = a->nodes[node].parent;
    if (parent < 0)
        return c->subtree - usage;
    int64_t g = guaranteed(c);
    int64_t local = g - usage > 0 ? g - usage : 0;
    int64_t pa = avail_node(a, parent, fr, potential);
    if (c->borrow_limit != FQ_ADM_UNLIMITED) {
        int64_t used_in_parent = usage - g > 0 ? usage - g : 0;
        int64_t cap = sat_add(c->subtree - g - used_in_parent, c->borrow_limit);
        if (cap < pa)
            pa = cap;
    }
    return sat_add(local, pa);
}

int64_t fq_adm_available(const struct fq_adm *a, int cq, int fr)
{
    return avail_node(a, a->cqs[cq].node, fr, false);
}

int64_t fq_adm_potential(const struct fq_adm *a, int cq, int fr)
{
    return avail_node(a, a->cqs[cq].node, fr, true);
}

int64_t fq_adm_node_potential(const struct fq_adm *a, int node, int fr)
{
    return avail_node(a, node, fr, true);
}

const char *fq_adm_why_reason(enum fq_adm_why w)
{
    switch (w) {
    case FQ_ADM_WHY_NO_MATCHING_FLAVOR:
        return "NoMatchingFlavor";
    case FQ_ADM_WHY_WAITING_FOR_QUOTA:
        return "WaitingForQuota";
    case FQ_ADM_WHY_EXCEEDS_MAX_QUOTA:
        return "ExceedsMaxQuota";
    case FQ_ADM_WHY_NONE:
        break;
    }
    return "Pending";
}

const char *fq_adm_preempt_reason_str(int reason)
{
    switch (reason) {
    case FQ_ADM_IN_COHORT_RECLAMATION:
        return "InCohortReclamation";
    case FQ_ADM_IN_COHORT_RECLAIM_WHILE_BORROWING:
        return "InCohortReclaimWhileBorrowing";
    case FQ_ADM_IN_COHORT_FAIR_SHARING:
        return "InCohortFairSharing";
    default:
        return "InClusterQueue";
    }
}

/* --- preemption -------------------------------------------------------- */

/* What a workload needs, per fr, while targets are chosen. */
struct need {
    int n;
    uint16_t fr[FQ_ADM_MAX_FLAVORS];
    int64_t amt[FQ_ADM_MAX_FLAVORS];
};

static int root_of(const struct fq_adm *a, int node)
{
    int guard = 0;
    while (a->nodes[node].parent >= 0 && guard++ < a->nnodes)
        node = a->nodes[node].parent;
    return node;
}

static bool fits_need(const struct fq_adm *a, int cq, const struct need *nd,
                      bool allow_borrow)
{
    const struct fq_adm_node *n = &a->nodes[a->cqs[cq].node];
    for (int i = 0; i < nd->n; i++) {
        if (nd->amt[i] > fq_adm_available(a, cq, nd->fr[i]))
            return false;
        if (!allow_borrow && n->cells[nd->fr[i]].usage + nd->amt[i] >
                                 n->cells[nd->fr[i]].nominal)
            return false;
    }
    return true;
}

static bool cq_borrowing(const struct fq_adm *a, int cq, const struct need *nd)
{
    const struct fq_adm_node *n = &a->nodes[a->cqs[cq].node];
    for (int i = 0; i < nd->n; i++)
        if (n->cells[nd->fr[i]].usage > n->cells[nd->fr[i]].nominal)
            return true;
    return false;
}

static bool under_nominal(const struct fq_adm *a, int cq, const struct need *nd)
{
    const struct fq_adm_node *n = &a->nodes[a->cqs[cq].node];
    for (int i = 0; i < nd->n; i++)
        if (n->cells[nd->fr[i]].usage >= n->cells[nd->fr[i]].nominal)
            return false;
    return true;
}

static bool uses_need(const struct fq_adm_holder *h, const struct need *nd)
{
    for (int i = 0; i < h->nuse; i++)
        for (int j = 0; j < nd->n; j++)
            if (h->use_fr[i] == nd->fr[j] && h->use_amt[i] > 0)
                return true;
    return false;
}

struct cand_ctx {
    const struct fq_adm_holder *h;
    int own_cq;
};

static int cand_cmp(const void *x, const void *y, const struct cand_ctx *c)
{
    const struct fq_adm_holder *p = &c->h[*(const int *)x];
    const struct fq_adm_holder *q = &c->h[*(const int *)y];
    if (p->evicting != q->evicting)
        return p->evicting ? -1 : 1;
    bool po = p->cq != c->own_cq, qo = q->cq != c->own_cq;
    if (po != qo)
        return po ? -1 : 1;
    if (p->priority != q->priority)
        return p->priority < q->priority ? -1 : 1;
    if (p->reserved_at != q->reserved_at)
        return p->reserved_at > q->reserved_at ? -1 : 1;
    return *(const int *)x - *(const int *)y;
}

/* Insertion sort: candidate lists are short, and qsort has no context. */
static void sort_cands(int *v, int n, const struct cand_ctx *c)
{
    for (int i = 1; i < n; i++) {
        int x = v[i], j = i - 1;
        while (j >= 0 && cand_cmp(&v[j], &x, c) > 0) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

static void holder_charge(struct fq_adm *a, const struct fq_adm_holder *h,
                          int sign)
{
    fq_adm_charge(a, h->cq, h->nuse, h->use_fr, h->use_amt, sign);
}

/* Kueue's minimalPreemptions; returns the number of targets in out. */
static int minimal(struct fq_adm *a, int cq, const struct need *nd,
                   const struct fq_adm_holder *h, const int *cands, int ncand,
                   bool allow_borrow, int *out)
{
    int n = 0;
    bool fit = false;
    for (int i = 0; i < ncand; i++) {
        const struct fq_adm_holder *c = &h[cands[i]];
        if (c->cq != cq && !cq_borrowing(a, c->cq, nd))
            continue;
        holder_charge(a, c, -1);
        out[n++] = cands[i];
        if (fits_need(a, cq, nd, allow_borrow)) {
            fit = true;
            break;
        }
    }
    if (!fit) {
        for (int i = 0; i < n; i++)
            holder_charge(a, &h[out[i]], +1);
        return 0;
    }
    /* Add back from the end (all but the last taken) while it still fits. */
    for (int i = n - 2; i >= 0; i--) {
        holder_charge(a, &h[out[i]], +1);
        if (fits_need(a, cq, nd, allow_borrow)) {
            memmove(&out[i], &out[i + 1], sizeof(int) * (size_t)(n - i - 1));
            n--;
        } else {
            holder_charge(a, &h[out[i]], -1);
        }
    }
    for (int i = 0; i < n; i++)
        holder_charge(a, &h[out[i]], +1);
    return n;
}

static bool policy_allows(enum fq_adm_policy p, int32_t cand_prio,
                          int64_t cand_ts, int32_t prio, int64_t ts)
{
    switch (p) {
    case FQ_ADM_NEVER:
        return false;
    case FQ_ADM_LOWER_PRIORITY:
        return cand_prio < prio;
    case FQ_ADM_LOWER_OR_NEWER_EQUAL_PRIORITY:
        return cand_prio < prio || (cand_prio == prio && cand_ts > ts);
    case FQ_ADM_ANY:
        return true;
    }
    return false;
}

/*
 * Kueue's classic GetTargets for a need. Returns the count, targets in
 * *out (owned by the caller, sized nholders).
 */
static int select_targets(struct fq_adm *a, const struct fq_adm_wl *w,
                          const struct need *nd, const struct fq_adm_holder *h,
                          int nh, int *out)
{
    if (nh == 0 || nd->n == 0)
        return 0;
    if (a->fair)
        return fq_adm_fair_targets(a, w, nd->n, nd->fr, nd->amt, h, nh, out);
    const struct fq_adm_cq *cq = &a->cqs[w->cq];
    int root = root_of(a, cq->node);
    bool in_cohort = a->nodes[cq->node].parent >= 0;
    int *cands = fq_xmalloc(sizeof(int) * (size_t)nh);
    int *same = fq_xmalloc(sizeof(int) * (size_t)nh);
    /* Per ClusterQueue of a holder, whether its holders may be taken
     * from the cohort (1) or not (0), found once per call (-1: not yet):
     * the same test per holder was most of a busy cycle's time with
     * hundreds of holders in other cohorts (issue 21's baseline). */
    int8_t *reclaim = fq_xmalloc((size_t)a->ncq + 1);
    memset(reclaim, -1, (size_t)a->ncq + 1);
    int nc = 0, ns = 0, n = 0;
    bool borrow_ok = cq->borrow_within_cohort != FQ_ADM_NEVER;
    bool under = under_nominal(a, w->cq, nd);
    bool may_reclaim = in_cohort && cq->reclaim_within_cohort != FQ_ADM_NEVER;
    for (int i = 0; i < nh; i++) {
        const struct fq_adm_holder *c = &h[i];
        if (c->cq != w->cq) {
            if (!may_reclaim)
                continue;
            if (reclaim[c->cq] < 0)
                reclaim[c->cq] = root_of(a, a->cqs[c->cq].node) == root &&
                                 cq_borrowing(a, c->cq, nd);
            if (!reclaim[c->cq])
                continue;
        }
        if (!uses_need(c, nd))
            continue;
        if (c->cq == w->cq) {
            if (policy_allows(cq->within_cq, c->priority, c->ts, w->priority,
                              w->ts))
                cands[nc++] = i;
        } else {
            bool ok = policy_allows(cq->reclaim_within_cohort, c->priority,
                                    c->ts, w->priority, w->ts);
            /* While borrowing, only what borrowWithinCohort allows. */
            if (ok && borrow_ok && !under) {
                ok = c->priority < w->priority &&
                     (!cq->has_borrow_threshold ||
                      c->priority <= cq->borrow_threshold);
            }
            if (ok)
                cands[nc++] = i;
        }
    }
    struct cand_ctx ctx = {h, w->cq};
    sort_cands(cands, nc, &ctx);
    for (int i = 0; i < nc; i++)
        if (h[cands[i]].cq == w->cq)
            same[ns++] = cands[i];
    if (nc == 0) {
        n = 0;
    } else if (ns == nc || borrow_ok) {
        n = minimal(a, w->cq, nd, h, cands, nc, true, out);
    } else {
        if (under)
            n = minimal(a, w->cq, nd, h, cands, nc, false, out);
        if (n == 0 && ns > 0)
            n = minimal(a, w->cq, nd, h, same, ns, true, out);
    }
    free(reclaim);
    free(cands);
    free(same);
    return n;
}

/* --- flavor assignment ------------------------------------------------ */

/*
 * Messages are pieced together from strings only (names and formatted
 * quantities), so they are concatenated rather than printed: printf's
 * set-up was most of a NoFit's cost. A podset's reasons are written
 * straight into the result's message after its "couldn't assign flavors
 * to pod set" prefix, and taken back if the podset fits; the builder
 * keeps the length, so no append measures the text so far. The text is
 * the whole message cut at size - 1 bytes, as snprintf would cut it.
 */
struct msgb {
    char *buf;    /* NULL: no message is made */
    size_t size;  /* of buf */
    size_t len;   /* strlen(buf) */
    size_t start; /* where this podset's reasons begin */
};

/* Appends s, cut at m->size - 1 bytes. */
static void msg_put(struct msgb *m, const char *s)
{
    size_t n = strlen(s);
    if (n > m->size - 1 - m->len)
        n = m->size - 1 - m->len;
    memcpy(m->buf + m->len, s, n);
    m->len += n;
    m->buf[m->len] = '\0';
}

static void msg_add(struct msgb *m, ...) __attribute__((sentinel));

/* Appends a reason (strings up to a NULL) to the podset's reasons, after
 * ", " unless it is the first. */
static void msg_add(struct msgb *m, ...)
{
    if (!m->buf || m->len + 1 >= m->size)
        return;
    if (m->len > m->start)
        msg_put(m, ", ");
    va_list ap;
    va_start(ap, m);
    for (const char *s = va_arg(ap, const char *); s;
         s = va_arg(ap, const char *))
        msg_put(m, s);
    va_end(ap);
}

static char *qfmt(const struct fq_adm *a, int res, int64_t v, char *buf,
                  size_t size)
{
    return fq_quantity_format(v, (enum fq_qscale)a->res_scale[res],
                              (enum fq_qformat)a->res_fmt[res], buf, size);
}

/* Rank of a (mode, borrow) pair; higher is preferred (Kueue isPreferred). */
static int rank(const struct fq_adm_cq *cq, enum fq_adm_mode m, bool borrow)
{
    if (m <= FQ_ADM_NO_CANDIDATES)
        return (int)m;
    if (cq->preemption_over_borrowing)
        return 10 + (borrow ? 0 : 10) + (int)m;
    return 10 + (int)m * 2 + (borrow ? 0 : 1);
}

/* Usage this workload already takes per fr (earlier podsets). */
struct acc {
    int n;
    uint16_t fr[FQ_ADM_MAX_FLAVORS];
    int64_t amt[FQ_ADM_MAX_FLAVORS];
};

static int64_t acc_get(const struct acc *c, int fr)
{
    for (int i = 0; i < c->n; i++)
        if (c->fr[i] == fr)
            return c->amt[i];
    return 0;
}

static void acc_add(struct acc *c, int fr, int64_t v)
{
    for (int i = 0; i < c->n; i++)
        if (c->fr[i] == fr) {
            c->amt[i] = sat_add(c->amt[i], v);
            return;
        }
    if (c->n < FQ_ADM_MAX_FLAVORS) {
        c->fr[c->n] = (uint16_t)fr;
        c->amt[c->n++] = v;
    }
}

static int64_t mul_sat(int64_t x, int64_t y)
{
    int64_t r;
    if (fq_mul_overflow(x, y, &r) != 0)
        return INT64_MAX;
    return r;
}

/*
 * Tries flavor f for podset ps (count pods) and group g: the mode, whether
 * it borrows, and reasons appended to msg (unless msg is NULL).
 */
static enum fq_adm_mode try_flavor(struct fq_adm *a, const struct fq_adm_wl *w,
                                   const struct fq_adm_podset *ps,
                                   int32_t count, uint32_t rmask, int f,
                                   const struct acc *acc,
                                   const struct fq_adm_holder *h, int nh,
                                   bool *borrow, enum fq_adm_why *why,
                                   struct msgb *msg)
{
    const struct fq_adm_cq *cq = &a->cqs[w->cq];
    const struct fq_adm_node *node = &a->nodes[cq->node];
    enum fq_adm_mode mode = FQ_ADM_FIT;
    char b1[40], b2[40];
    *borrow = false;
    for (int r = 0; r < a->nres; r++) {
        if (!(rmask & (1u << r)))
            continue;
        int fr = f * a->nres + r;
        int64_t val = sat_add(acc_get(acc, fr), mul_sat(ps->req[r], count));
        int64_t pot = fq_adm_potential(a, w->cq, fr);
        if (val > pot) {
            if (msg->buf)
                msg_add(msg, "insufficient quota for ", a->res_names[r],
                        " in flavor ", a->flv_names[f],
                        ", request > maximum capacity (",
                        qfmt(a, r, val, b1, sizeof(b1)), " > ",
                        qfmt(a, r, pot, b2, sizeof(b2)), ")", NULL);
            if (*why == FQ_ADM_WHY_NONE ||
                *why == FQ_ADM_WHY_NO_MATCHING_FLAVOR)
                *why = FQ_ADM_WHY_EXCEEDS_MAX_QUOTA;
            return FQ_ADM_NOFIT;
        }
        int64_t av = fq_adm_available(a, w->cq, fr);
        if (val <= av) {
            if (node->cells[fr].usage + val > node->cells[fr].nominal)
                *borrow = true;
            continue;
        }
        if (msg->buf)
            msg_add(msg, "insufficient unused quota for ", a->res_names[r],
                    " in flavor ", a->flv_names[f], ", ",
                    qfmt(a, r, val - (av > 0 ? av : 0), b1, sizeof(b1)),
                    " more needed", NULL);
        *why = FQ_ADM_WHY_WAITING_FOR_QUOTA;
        bool in_cohort = node->parent >= 0;
        bool possible =
            (val <= node->cells[fr].nominal && cq->within_cq != FQ_ADM_NEVER) ||
            (in_cohort && cq->reclaim_within_cohort != FQ_ADM_NEVER) ||
            (in_cohort && cq->borrow_within_cohort != FQ_ADM_NEVER);
        enum fq_adm_mode rm = FQ_ADM_NOFIT;
        if (possible) {
            struct need nd = {.n = 1};
            nd.fr[0] = (uint16_t)fr;
            nd.amt[0] = val;
            int *tmp = nh > 0 ? fq_xmalloc(sizeof(int) * (size_t)nh) : NULL;
            int nt = select_targets(a, w, &nd, h, nh, tmp);
            free(tmp);
            rm = nt > 0 ? FQ_ADM_PREEMPT : FQ_ADM_NO_CANDIDATES;
            if (node->cells[fr].usage + val > node->cells[fr].nominal)
                *borrow = true;
        }
        if (rm < mode)
            mode = rm;
        if (mode == FQ_ADM_NOFIT)
            return mode;
    }
    return mode;
}

/* One full assignment at the given counts; fills r (no targets). */
static void assign_counts(struct fq_adm *a, const struct fq_adm_wl *w,
                          const int32_t *counts, const struct fq_adm_holder *h,
                          int nh, struct fq_adm_result *r)
{
    const struct fq_adm_cq *cq = &a->cqs[w->cq];
    struct acc acc;
    acc.n = 0; /* read up to n only: no 640-byte clear per call */
    r->mode = FQ_ADM_FIT;
    r->why = FQ_ADM_WHY_NONE;
    r->borrows = false;
    r->npodsets = w->npodsets;
    r->msg[0] = '\0';
    memset(r->flv, -1, sizeof(r->flv));
    for (int p = 0; p < w->npodsets; p++) {
        const struct fq_adm_podset *ps = &w->ps[p];
        int32_t count = counts[p];
        r->count[p] = count;
        if (w->base_count)
            count -= w->base_count[p];
        if (count < 0)
            count = 0;
        /* This podset's reasons, after its prefix in r->msg. */
        struct msgb psmsg = {.buf = w->no_msg ? NULL : r->msg,
                             .size = sizeof(r->msg),
                             .len = strlen(r->msg)};
        size_t msg_was = psmsg.len;
        if (psmsg.buf) {
            if (psmsg.len)
                msg_put(&psmsg, "; ");
            msg_put(&psmsg, "couldn't assign flavors to pod set ");
            msg_put(&psmsg, ps->name ? ps->name : "main");
            msg_put(&psmsg, ": ");
        }
        psmsg.start = psmsg.len;
        enum fq_adm_mode psmode = FQ_ADM_FIT;
        uint32_t wanted = 0;
        for (int res = 0; res < a->nres; res++)
            if (ps->req[res] > 0)
                wanted |= 1u << res;
        uint32_t covered = 0;
        for (int g = 0; g < cq->ngroups; g++)
            covered |= cq->groups[g].res_mask;
        for (int res = 0; res < a->nres; res++)
            if ((wanted & (1u << res)) && !(covered & (1u << res))) {
                msg_add(&psmsg, "resource ", a->res_names[res],
                        " unavailable in ClusterQueue", NULL);
                psmode = FQ_ADM_NOFIT;
                if (r->why == FQ_ADM_WHY_NONE)
                    r->why = FQ_ADM_WHY_NO_MATCHING_FLAVOR;
            }
        for (int g = 0; g < cq->ngroups && psmode != FQ_ADM_NOFIT; g++) {
            const struct fq_adm_group *grp = &cq->groups[g];
            uint32_t rmask = grp->res_mask & wanted;
            if (rmask == 0)
                continue;
            /* Preference order, flavors in cool-down last. */
            int order[FQ_ADM_MAX_FLAVORS], no = 0;
            for (int pass = 0; pass < 2; pass++)
                for (int i = 0; i < grp->nflv; i++) {
                    uint64_t bit = 1ull << grp->flv[i];
                    bool avoid = (w->avoid_flv & bit) != 0;
                    if ((pass == 0) == !avoid)
                        order[no++] = grp->flv[i];
                }
            int best = NO_FLV, bestrank = -1;
            bool bestborrow = false;
            enum fq_adm_mode bestmode = FQ_ADM_NOFIT;
            for (int i = 0; i < no; i++) {
                int f = order[i];
                uint64_t bit = 1ull << f;
                if (w->skip_flv & bit)
                    continue;
                if (w->forced_flv && w->forced_flv[p] >= 0 &&
                    w->forced_flv[p] != f) {
                    msg_add(&psmsg, "could not assign ", a->flv_names[f],
                            " flavor since the original workload is "
                            "assigned: ",
                            a->flv_names[w->forced_flv[p]], NULL);
                    continue;
                }
                if (!(ps->selector_ok & bit)) {
                    msg_add(&psmsg, "flavor ", a->flv_names[f],
                            " doesn't match node affinity", NULL);
                    if (r->why == FQ_ADM_WHY_NONE)
                        r->why = FQ_ADM_WHY_NO_MATCHING_FLAVOR;
                    continue;
                }
                if (!(ps->taint_ok & bit)) {
                    msg_add(&psmsg, "untolerated taint in flavor ",
                            a->flv_names[f], NULL);
                    if (r->why == FQ_ADM_WHY_NONE)
                        r->why = FQ_ADM_WHY_NO_MATCHING_FLAVOR;
                    continue;
                }
                bool borrow = false;
                enum fq_adm_mode m =
                    try_flavor(a, w, ps, count, rmask, f, &acc, h, nh, &borrow,
                               &r->why, &psmsg);
                int rk = rank(cq, m, borrow);
                if (rk > bestrank) {
                    bestrank = rk;
                    best = f;
                    bestmode = m;
                    bestborrow = borrow;
                }
                if (m <= FQ_ADM_NO_CANDIDATES)
                    continue;
                if (m == FQ_ADM_PREEMPT && cq->can_preempt_try_next)
                    continue;
                if (borrow && cq->can_borrow_try_next)
                    continue;
                best = f;
                bestmode = m;
                bestborrow = borrow;
                break;
            }
            if (best == NO_FLV || bestmode == FQ_ADM_NOFIT) {
                psmode = FQ_ADM_NOFIT;
                if (r->why == FQ_ADM_WHY_NONE)
                    r->why = FQ_ADM_WHY_NO_MATCHING_FLAVOR;
                break;
            }
            if (bestmode < psmode)
                psmode = bestmode;
            if (bestborrow)
                r->borrows = true;
            for (int res = 0; res < a->nres; res++)
                if (rmask & (1u << res)) {
                    r->flv[p][res] = (int8_t)best;
                    acc_add(&acc, best * a->nres + res,
                            mul_sat(ps->req[res], count));
                }
        }
        if (psmode < r->mode)
            r->mode = psmode;
        if (psmode == FQ_ADM_FIT && psmsg.buf)
            r->msg[msg_was] = '\0'; /* a podset that fits says nothing */
    }
    r->nuse = 0;
    for (int i = 0; i < acc.n; i++) {
        if (acc.amt[i] == 0)
            continue;
        r->use_fr[r->nuse] = acc.fr[i];
        r->use_amt[r->nuse++] = acc.amt[i];
    }
    if (r->mode == FQ_ADM_FIT)
        r->why = FQ_ADM_WHY_NONE;
    else if (r->why == FQ_ADM_WHY_NONE)
        r->why = FQ_ADM_WHY_WAITING_FOR_QUOTA;
}

/* Fills targets for a Preempt result; returns true when some were found. */
static bool find_targets(struct fq_adm *a, const struct fq_adm_wl *w,
                         const struct fq_adm_holder *h, int nh,
                         struct fq_adm_result *r)
{
    struct need nd = {0};
    for (int i = 0; i < r->nuse && i < FQ_ADM_MAX_FLAVORS; i++) {
        nd.fr[nd.n] = r->use_fr[i];
        nd.amt[nd.n++] = r->use_amt[i];
    }
    if (nh == 0)
        return false;
    int *out = fq_xmalloc(sizeof(int) * (size_t)nh);
    int n = select_targets(a, w, &nd, h, nh, out);
    if (n == 0) {
        free(out);
        return false;
    }
    free(r->targets);
    free(r->target_reason);
    r->targets = out;
    r->ntargets = n;
    r->target_reason = fq_xmalloc((size_t)n);
    /* Borrowing: the preemptor's usage after admission above nominal. */
    bool borrowing = false;
    const struct fq_adm_node *own = &a->nodes[a->cqs[w->cq].node];
    for (int i = 0; i < nd.n; i++)
        if (own->cells[nd.fr[i]].usage + nd.amt[i] >
            own->cells[nd.fr[i]].nominal)
            borrowing = true;
    for (int i = 0; i < n; i++) {
        if (h[out[i]].cq == w->cq)
            r->target_reason[i] = FQ_ADM_IN_CLUSTER_QUEUE;
        else if (a->fair)
            r->target_reason[i] = FQ_ADM_IN_COHORT_FAIR_SHARING;
        else if (borrowing)
            r->target_reason[i] = FQ_ADM_IN_COHORT_RECLAIM_WHILE_BORROWING;
        else
            r->target_reason[i] = FQ_ADM_IN_COHORT_RECLAMATION;
    }
    r->borrows = borrowing;
    return true;
}

/* Clears what a result's readers read: the fields before the usage
 * arrays, the targets and the message (the usage arrays are read up to
 * nuse only, the message up to its end). A whole memset was 2.3 KB a
 * decision. */
static void result_reset(struct fq_adm_result *r)
{
    memset(r, 0, offsetof(struct fq_adm_result, use_fr));
    r->ntargets = 0;
    r->targets = NULL;
    r->target_reason = NULL;
    r->msg[0] = '\0';
}

void fq_adm_assign(struct fq_adm *a, const struct fq_adm_wl *w,
                   const struct fq_adm_holder *holders, int nholders,
                   struct fq_adm_result *r)
{
    int32_t counts[FQ_ADM_MAX_PODSETS];
    result_reset(r);
    for (int p = 0; p < w->npodsets; p++)
        counts[p] = w->ps[p].count;
    assign_counts(a, w, counts, holders, nholders, r);
    if (r->mode == FQ_ADM_FIT)
        return;
    if (r->mode == FQ_ADM_PREEMPT && find_targets(a, w, holders, nholders, r))
        return;
    if (r->mode == FQ_ADM_PREEMPT)
        r->mode = FQ_ADM_NO_CANDIDATES;

    /* Partial admission: reduce counts proportionally, binary search. */
    int64_t total = 0;
    for (int p = 0; p < w->npodsets; p++)
        if (w->ps[p].min_count < w->ps[p].count)
            total += w->ps[p].count - w->ps[p].min_count;
    if (total == 0 || w->forced_flv)
        return;
    struct fq_adm_result *try = fq_xcalloc(1, sizeof(*try));
    int64_t lo = 1, hi = total, found = -1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        for (int p = 0; p < w->npodsets; p++) {
            int64_t d = w->ps[p].count - w->ps[p].min_count;
            counts[p] =
                w->ps[p].count - (int32_t)((d * mid + total - 1) / total);
        }
        memset(try, 0, sizeof(*try));
        assign_counts(a, w, counts, holders, nholders, try);
        bool ok = try->mode == FQ_ADM_FIT;
        if (!ok && try->mode == FQ_ADM_PREEMPT)
            ok = find_targets(a, w, holders, nholders, try);
        if (ok) {
            found = mid;
            hi = mid - 1;
        } else {
            lo = mid + 1;
        }
        fq_adm_result_release(try);
    }
    if (found > 0) {
        for (int p = 0; p < w->npodsets; p++) {
            int64_t d = w->ps[p].count - w->ps[p].min_count;
            counts[p] =
                w->ps[p].count - (int32_t)((d * found + total - 1) / total);
        }
        fq_adm_result_release(r);
        memset(r, 0, sizeof(*r));
        assign_counts(a, w, counts, holders, nholders, r);
        if (r->mode == FQ_ADM_PREEMPT)
            find_targets(a, w, holders, nholders, r);
    }
    free(try);
}

void fq_adm_result_release(struct fq_adm_result *r)
{
    free(r->targets);
    free(r->target_reason);
    r->targets = NULL;
    r->target_reason = NULL;
    r->ntargets = 0;
}
