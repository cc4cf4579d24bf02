/*
 * fairshare.h - Kueue's fair sharing over the quota tree of admission.h:
 * the dominant resource share (DRS) of a ClusterQueue or Cohort, the
 * scheduler's tournament that orders a cycle's heads by DRS, and (in
 * admission.h, fq_adm_fair_targets) preemption by DRS.
 *
 * Pure arithmetic on struct fq_adm; nothing here reads objects or time.
 */
#ifndef FLEXQ_KUEUE_FAIRSHARE_H
#define FLEXQ_KUEUE_FAIRSHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "kueue/admission.h"

/* A node's dominant resource share, as Kueue's DRS struct holds it. */
struct fq_fs_drs {
    double ratio;         /* borrowed * 1000 / lendable, dominant resource */
    int64_t weight_milli; /* the node's fairSharing.weight x 1000 */
    bool borrowing;       /* usage above its subtree quota somewhere */
    int res;              /* the dominant resource's index, or -1 */
};

/* The DRS of node `node` with the usage now charged in the tree. A root
 * (no parent) has share 0. */
void fq_fs_drs(const struct fq_adm *a, int node, struct fq_fs_drs *out);

/* Kueue's CompareDRS: < 0 when x is preferred for scheduling (lower
 * share), > 0 when x is preferred for preemption. A zero weight that
 * borrows is an infinite share. */
int fq_fs_cmp(const struct fq_fs_drs *x, const struct fq_fs_drs *y);

/* status.fairSharing.weightedShare: the share rounded up, INT64_MAX for a
 * zero weight that borrows. */
int64_t fq_fs_weighted_share(const struct fq_fs_drs *d);

/* A head of a scheduling cycle, as the tournament sees it: its
 * ClusterQueue (fq_adm index), priority, queue-order time and the usage
 * its nomination would charge. Borrowed. */
struct fq_fs_entry {
    int cq;
    int32_t priority;
    int64_t ts;
    int nuse;
    const uint16_t *use_fr;
    const int64_t *use_amt;
};

/*
 * The next entry a fair-sharing cycle processes, as an index into e
 * (n > 0 entries, in the caller's base order). The first entry names the
 * cohort tree; in it, Kueue's tournament picks at each Cohort the child
 * whose DRS, with its nominee's usage added, is lowest (then higher
 * priority, then earlier queue-order time, then the base order). An
 * entry whose ClusterQueue has no cohort is returned as it comes. `a` is
 * used as scratch and left as it was.
 */
int fq_fs_next(struct fq_adm *a, const struct fq_fs_entry *e, int n);

#endif
