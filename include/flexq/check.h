/*
 * check.h - invariant checkers over a settled engine.
 *
 * Each checker reads the stored objects (what users and the API see) and,
 * where it helps, the controller's own tables, and reports every broken
 * invariant as one fq_err in `out` (messages name the objects). They
 * change nothing and cost a pass over the objects they read, so they run
 * after every settle in the scenario runner and under `flexq sim
 * --check-invariants`, not in flexqd's loop.
 *
 * The invariants, numbered as the messages cite them:
 *
 *   Kueue (fq_kueue_check, kueue/check.c)
 *     K1  an Admitted workload has its quota reserved (QuotaReserved=True
 *         and status.admission);
 *     K2  a workload holding quota names a ClusterQueue that exists, and
 *         every flavor it was assigned exists and is one of that queue's;
 *     K3  no ClusterQueue outside a cohort holds more than its nominal
 *         quota of any flavor and resource, and no cohort tree more than
 *         the nominal quota of all its queues;
 *     K4  when queue status is written at once (status_every_ms 0) and
 *         cycles are not Kueue-paced (policy.cycle_ms 0, when a workload's
 *         change reaches the queues' tables at once), each
 *         ClusterQueue's status.flavorsReservation totals equal the sum of
 *         the usage of the workloads that hold its quota;
 *     K5  under the same condition, with fair sharing on (the queue shows
 *         status.fairSharing), a ClusterQueue's weightedShare is 0 exactly
 *         when its workloads hold no more than its nominal quota of every
 *         flavor and resource (Kueue's share counts borrowing only).
 *
 *   Capacity (fq_capacity_check, capacity/check.c)
 *     C1  a pod bound to a node (spec.nodeName) and not finished is on a
 *         Node that exists;
 *     C2  the nodes of one slice (flexq.dev/slice) are of one pool;
 *     C3  no node's bound, unfinished pods request more than its
 *         allocatable cpu, memory or accelerators;
 *     C4  the capacity controller's node table holds exactly the stored
 *         Nodes.
 */
#ifndef FLEXQ_CHECK_H
#define FLEXQ_CHECK_H

#include "flexq/engine.h"
#include "flexq/err.h"

/* Appends a finding per broken K invariant to `out`; returns how many. */
size_t fq_kueue_check(struct fq_engine *e, struct fq_errlist *out);

/* Appends a finding per broken C invariant to `out`; returns how many. */
size_t fq_capacity_check(struct fq_engine *e, struct fq_errlist *out);

/* Both, in that order. */
size_t fq_engine_check(struct fq_engine *e, struct fq_errlist *out);

#endif
