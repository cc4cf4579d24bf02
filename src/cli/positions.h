/*
 * positions.h - `flexq get workloads --pending [-o wide]`: keep only the
 * pending workloads and, for the wide table, add their positions in their
 * ClusterQueue and LocalQueue from flexqd's visibility API (as Kueue's
 * visibility API and `kueuectl list workload` show them).
 */
#ifndef FLEXQ_CLI_POSITIONS_H
#define FLEXQ_CLI_POSITIONS_H

#include <stdbool.h>

#include "client.h"
#include "flexq/value.h"

/* Where the wide table's columns read a workload's positions (1-based,
 * set only on the CLI's local copies). */
#define FQ_POSITION_CQ "flexqCLI.positionInClusterQueue"
#define FQ_POSITION_LQ "flexqCLI.positionInLocalQueue"

/*
 * Filters the sequence `items` (Workloads) to the pending ones when
 * `pending_only`; when `annotate`, sets FQ_POSITION_CQ/LQ on each pending
 * one from GET /apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/CQ/
 * pendingworkloads. Returns 0, or a negative FQ_E* from the client.
 */
int fq_cli_positions(struct fq_client *c, struct fq_value *items,
                     bool pending_only, bool annotate, struct fq_err *err);

#endif
