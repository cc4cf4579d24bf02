/*
 * visibility.h - Kueue's visibility API (on demand): the pending
 * workloads of a ClusterQueue or LocalQueue with their positions.
 *
 * A position is the index in the ClusterQueue's whole pending set (the
 * active heap and the inadmissible ones together), in the order the kueue
 * controller pops them: higher priority first, then earlier queue time
 * (fq_kueue_queue_order_ts), then namespace and name. positionInLocalQueue
 * is the index among those of the same LocalQueue. Positions start at 0,
 * as Kueue's do.
 */
#ifndef FLEXQ_CORE_VISIBILITY_H
#define FLEXQ_CORE_VISIBILITY_H

#include <stddef.h>
#include <stdint.h>

#include "flexq/engine.h"

struct fq_pending_wl {
    const struct fq_value *wl; /* borrowed from the store */
    const char *ns, *name;     /* borrowed */
    const char *lq, *cq;       /* borrowed; cq "" when its queue is unknown */
    int64_t priority;
    int64_t queued_ms; /* the time it queues by */
    size_t pos_cq, pos_lq;
};

/*
 * The pending workloads (no quota reserved, not finished, active) of every
 * ClusterQueue, sorted by ClusterQueue then position. Returns the count;
 * *out is owned (free() it), its pointers borrowed until the store
 * changes.
 */
size_t fq_visibility_pending(struct fq_engine *e, struct fq_pending_wl **out);

/*
 * Kueue's PendingWorkloadsSummary (visibility.kueue.x-k8s.io) for
 * ClusterQueue `cq`, or, when cq is NULL, for LocalQueue ns/lq; items from
 * `offset`, at most `limit` (0: Kueue's default 1000). Returns owned.
 */
struct fq_value *fq_visibility_summary(struct fq_engine *e, const char *cq,
                                       const char *ns, const char *lq,
                                       size_t limit, size_t offset,
                                       const char *api_version);

#endif
