/*
 * tas.c - Kueue's topology assignment for one podset: which domains of a
 * Topology its pods go to, and how many in each.
 *
 * How it works
 * ------------
 * The leaves (domains of the lowest level, e.g. nodes by
 * kubernetes.io/hostname) come sorted by their label values, highest
 * level first, so every domain of every level is a contiguous range of
 * leaves, and its capacity the sum of theirs. Then, as Kueue's
 * tas_flavor_snapshot.go does it:
 *
 *   required at level L   the domain of level L with the least capacity
 *                         that still takes all pods (best fit); none:
 *                         the podset does not fit (it waits);
 *   preferred at level L  the same at L, else at L-1, ... up to level 0;
 *                         if no single domain takes them, spread over the
 *                         domains of level 0, largest first;
 *   unconstrained         preferred at the lowest level.
 *
 * Inside the chosen domain the pods go down level by level into as few
 * children as possible: children largest first, and the last one the
 * smallest that takes what is left (best fit), so whole domains stay free
 * for the next podset.
 *
 * Worked example: racks r1 (nodes a: 2 pods, b: 2) and r2 (c: 4, d: 1),
 * 3 pods required in a rack: r1 has 4, r2 5; r1 is the best fit. Inside
 * it, a takes 2 and b the last one: {a: 2, b: 1}.
 *
 * Ties go to the domain first in label order, so the answer is the same
 * for the same nodes. It does not look at nodes, objects or quota.
 */
#include "kueue/tas.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

/* Do leaves i and j share their values of levels 0..level? */
static bool same_domain(const struct fq_tas_leaf *l, int i, int j, int level)
{
    for (int k = 0; k <= level; k++)
        if (strcmp(l[i].values[k], l[j].values[k]))
            return false;
    return true;
}

/* A domain: leaves [lo, hi), with the sum of their capacities. */
struct dom {
    int lo, hi;
    int64_t cap;
};

/* The domains of `level` within leaves [lo, hi), in order; returns how
 * many (out holds up to hi - lo). */
static int domains(const struct fq_tas_leaf *l, int lo, int hi, int level,
                   struct dom *out)
{
    int n = 0;
    for (int i = lo; i < hi;) {
        int j = i;
        int64_t cap = 0;
        while (j < hi && same_domain(l, i, j, level)) {
            cap += l[j].capacity;
            j++;
        }
        out[n++] = (struct dom){i, j, cap};
        i = j;
    }
    return n;
}

/* Puts count pods (<= the domain's capacity) into domain d of `level`:
 * into as few children as it can, the last one a best fit. */
static void fill(const struct fq_tas_leaf *l, int nlevels, struct dom d,
                 int level, int64_t count, int64_t *out)
{
    if (count <= 0)
        return;
    if (level >= nlevels - 1) {
        out[d.lo] += count;
        return;
    }
    int span = d.hi - d.lo;
    struct dom *ch = fq_xmalloc(sizeof(*ch) * (size_t)span);
    bool *used = fq_xcalloc((size_t)span, sizeof(bool));
    int nc = domains(l, d.lo, d.hi, level + 1, ch);
    int64_t left = count;
    while (left > 0) {
        int fit = -1, big = -1;
        for (int i = 0; i < nc; i++) {
            if (used[i] || ch[i].cap <= 0)
                continue;
            if (ch[i].cap >= left && (fit < 0 || ch[i].cap < ch[fit].cap))
                fit = i;
            if (big < 0 || ch[i].cap > ch[big].cap)
                big = i;
        }
        if (fit >= 0) {
            fill(l, nlevels, ch[fit], level + 1, left, out);
            break;
        }
        if (big < 0)
            break; /* cannot be: the domain's capacity covers count */
        used[big] = true;
        fill(l, nlevels, ch[big], level + 1, ch[big].cap, out);
        left -= ch[big].cap;
    }
    free(used);
    free(ch);
}

/* The best-fit domain of `level` for count pods: its index in ds, or -1.
 * *most gets the largest capacity seen. */
static int best_fit(const struct dom *ds, int n, int64_t count, int64_t *most)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (ds[i].cap > *most)
            *most = ds[i].cap;
        if (ds[i].cap >= count && (best < 0 || ds[i].cap < ds[best].cap))
            best = i;
    }
    return best;
}

bool fq_tas_place(const struct fq_tas_leaf *leaves, int nleaves, int nlevels,
                  enum fq_tas_mode mode, int level, int64_t count, int64_t *out,
                  int64_t *most_out)
{
    *most_out = 0;
    if (nlevels < 1 || nlevels > FQ_TAS_MAX_LEVELS || nleaves <= 0)
        return false;
    if (mode == FQ_TAS_UNCONSTRAINED || level < 0 || level >= nlevels)
        level = nlevels - 1;
    struct dom *ds = fq_xmalloc(sizeof(*ds) * (size_t)nleaves);
    int64_t *res = fq_xcalloc((size_t)nleaves, sizeof(int64_t));
    int64_t most = 0;
    bool done = false;
    int lowest = mode == FQ_TAS_REQUIRED ? level : 0;
    for (int lv = level; lv >= lowest && !done; lv--) {
        int n = domains(leaves, 0, nleaves, lv, ds);
        int64_t m = 0;
        int b = best_fit(ds, n, count, &m);
        if (lv == level)
            most = m;
        if (b >= 0) {
            fill(leaves, nlevels, ds[b], lv, count, res);
            done = true;
        }
    }
    if (!done && mode != FQ_TAS_REQUIRED) {
        /* Spread over the whole topology, largest domains first. */
        struct dom all = {0, nleaves, 0};
        for (int i = 0; i < nleaves; i++)
            all.cap += leaves[i].capacity;
        if (all.cap >= count) {
            fill(leaves, nlevels, all, -1, count, res);
            done = true;
        } else {
            most = all.cap;
        }
    }
    if (done)
        memcpy(out, res, sizeof(int64_t) * (size_t)nleaves);
    else
        *most_out = most;
    free(res);
    free(ds);
    return done;
}
