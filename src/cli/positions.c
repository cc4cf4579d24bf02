/*
 * positions.c - pending workloads and their queue positions for
 * `flexq get workloads --pending -o wide` (positions.h).
 *
 * How: pending = not QuotaReserved, not Finished (what Kueue's visibility
 * API lists). For the positions, the ClusterQueues are listed and each
 * one's pendingworkloads summary fetched once; each workload copy gets
 * positionInClusterQueue / positionInLocalQueue + 1 (people count from 1;
 * the API counts from 0, as Kueue's does).
 * Not done: paging through summaries over 1000 items per queue.
 */
#include "positions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/paths.h"

static bool pending(const struct fq_value *w)
{
    return !fq_cond_true(w, "QuotaReserved") && !fq_cond_true(w, "Finished");
}

static void annotate_from(struct fq_value *items, const struct fq_value *sum)
{
    const struct fq_value *its = fq_map_get(sum, "items");
    for (size_t i = 0; i < fq_value_len(its); i++) {
        const struct fq_value *it = fq_seq_at(its, i);
        const char *ns = fq_meta_namespace(it);
        const char *name = fq_meta_name(it);
        for (size_t k = 0; k < fq_value_len(items); k++) {
            struct fq_value *w = fq_seq_at(items, k);
            if (strcmp(fq_meta_namespace(w), ns) ||
                strcmp(fq_meta_name(w), name))
                continue;
            fq_value_set_path(
                w, FQ_POSITION_CQ,
                fq_value_int(
                    fq_value_path_int(it, "positionInClusterQueue", 0) + 1));
            fq_value_set_path(
                w, FQ_POSITION_LQ,
                fq_value_int(fq_value_path_int(it, "positionInLocalQueue", 0) +
                             1));
        }
    }
}

int fq_cli_positions(struct fq_client *c, struct fq_value *items,
                     bool pending_only, bool annotate, struct fq_err *err)
{
    if (pending_only) {
        struct fq_value *keep = fq_value_seq();
        for (size_t k = 0; k < fq_value_len(items); k++)
            if (pending(fq_seq_at(items, k)))
                fq_seq_push(keep, fq_value_clone(fq_seq_at(items, k)));
        /* swap contents: items keeps its identity for the caller */
        struct fq_value tmp = *items;
        *items = *keep;
        *keep = tmp;
        fq_value_free(keep);
    }
    if (!annotate || !fq_value_len(items))
        return 0;
    char *path = fq_client_path(FQ_KIND_CLUSTERQUEUE, NULL, NULL, NULL, NULL);
    struct fq_value *cqs = NULL;
    int rc = fq_client_get(c, path, &cqs, err);
    free(path);
    if (rc < 0)
        return rc;
    const struct fq_value *li = fq_map_get(cqs, "items");
    for (size_t i = 0; i < fq_value_len(li) && rc == 0; i++) {
        char *esc = fq_client_escape(fq_meta_name(fq_seq_at(li, i)));
        char *p = fq_xasprintf("/apis/visibility.kueue.x-k8s.io/v1beta1/"
                               "clusterqueues/%s/pendingworkloads",
                               esc);
        struct fq_value *sum = NULL;
        rc = fq_client_get(c, p, &sum, err);
        if (rc == 0)
            annotate_from(items, sum);
        fq_value_free(sum);
        free(p);
        free(esc);
    }
    fq_value_free(cqs);
    return rc;
}
