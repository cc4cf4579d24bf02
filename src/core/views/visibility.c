/*
 * visibility.c - positions of pending workloads, as Kueue's visibility
 * API reports them (visibility.h has the rules).
 *
 * How: list every Workload, keep the pending ones (not QuotaReserved,
 * not Finished, spec.active not false), find each one's ClusterQueue
 * through its LocalQueue, and sort by (ClusterQueue, priority desc,
 * queue time asc, namespace, name) - the kueue controller's wl_cmp, with
 * the queue time from fq_kueue_queue_order_ts so evictions by admission
 * checks queue by their eviction time there as here. Then one pass
 * numbers them per ClusterQueue and per LocalQueue.
 *
 * Invariants: positions in a ClusterQueue are 0..n-1 without gaps; the
 * same store gives the same positions. Pure: reads the store only.
 * Not done: StrictFIFO's blocking head is not marked; a workload whose
 * LocalQueue is missing is listed with cq "" and never in a summary.
 */
#include "flexq/visibility.h"
#include "flexq/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "kueue/kueue.h"

static int64_t priority_of(struct fq_objstore *s, const struct fq_value *wl)
{
    const struct fq_value *p = fq_value_path(wl, FQ_WL_PRIORITY);
    if (p && p->type == FQ_V_NUM)
        return p->u.num.i;
    const char *pc = fq_value_path_str(wl, FQ_SPEC_PRIORITY_CLASS, NULL);
    if (pc) {
        const struct fq_object *o =
            fq_objstore_get(s, FQ_KIND_WORKLOADPRIORITYCLASS, "", pc);
        if (o)
            return fq_value_path_int(o->obj, "value", 0);
    }
    return 0;
}

static int cmp(const void *x, const void *y)
{
    const struct fq_pending_wl *a = x, *b = y;
    int c = strcmp(a->cq, b->cq);
    if (c)
        return c;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->queued_ms != b->queued_ms)
        return a->queued_ms < b->queued_ms ? -1 : 1;
    c = strcmp(a->ns, b->ns);
    return c ? c : strcmp(a->name, b->name);
}

size_t fq_visibility_pending(struct fq_engine *e, struct fq_pending_wl **out)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_engine_config *cfg = fq_engine_config(e);
    const struct fq_object **ws = NULL;
    size_t nw = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &ws);
    struct fq_pending_wl *p = fq_xcalloc(nw + 1, sizeof(*p));
    size_t n = 0;
    for (size_t i = 0; i < nw; i++) {
        const struct fq_value *w = ws[i]->obj;
        if (fq_cond_true(w, "QuotaReserved") || fq_cond_true(w, "Finished") ||
            !fq_value_path_bool(w, FQ_WL_ACTIVE, true))
            continue;
        struct fq_pending_wl *x = &p[n++];
        x->wl = w;
        x->ns = ws[i]->ns;
        x->name = ws[i]->name;
        x->lq = fq_value_path_str(w, FQ_WL_QUEUE_NAME, "");
        const struct fq_object *lq =
            fq_objstore_get(s, FQ_KIND_LOCALQUEUE, x->ns, x->lq);
        x->cq = lq ? fq_value_path_str(lq->obj, FQ_LQ_CLUSTER_QUEUE, "") : "";
        x->priority = priority_of(s, w);
        x->queued_ms = fq_kueue_queue_order_ts(w, cfg);
    }
    free(ws);
    qsort(p, n, sizeof(*p), cmp);

    /* Number them: positions restart with each ClusterQueue; a
     * LocalQueue's are counted among the (few) queues seen in it. */
    struct lqpos {
        const char *ns, *lq;
        size_t next;
    } *lqs = fq_xcalloc(n + 1, sizeof(*lqs));

    size_t nlq = 0, pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(p[i - 1].cq, p[i].cq)) {
            pos = 0;
            nlq = 0;
        }
        size_t k = 0;
        while (k < nlq &&
               (strcmp(lqs[k].ns, p[i].ns) || strcmp(lqs[k].lq, p[i].lq)))
            k++;
        if (k == nlq)
            lqs[nlq++] = (struct lqpos){p[i].ns, p[i].lq, 0};
        p[i].pos_cq = pos++;
        p[i].pos_lq = lqs[k].next++;
    }
    free(lqs);
    *out = p;
    return n;
}

struct fq_value *fq_visibility_summary(struct fq_engine *e, const char *cq,
                                       const char *ns, const char *lq,
                                       size_t limit, size_t offset,
                                       const char *api_version)
{
    struct fq_pending_wl *p = NULL;
    size_t n = fq_visibility_pending(e, &p);
    if (!limit)
        limit = 1000;
    struct fq_value *out = fq_value_map();
    fq_map_set(out, "kind", fq_value_str("PendingWorkloadsSummary"));
    fq_map_set(out, "apiVersion",
               fq_value_str(api_version ? api_version :
                                          "visibility.kueue.x-k8s.io/v1beta1"));
    fq_map_ensure_map(out, "metadata");
    struct fq_value *items = fq_value_seq();
    size_t seen = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_pending_wl *x = &p[i];
        bool match = cq ? !strcmp(x->cq, cq) :
                          (ns && lq && !strcmp(x->ns, ns) &&
                           !strcmp(x->lq, lq) && *x->cq);
        if (!match)
            continue;
        if (seen++ < offset || fq_value_len(items) >= limit)
            continue;
        struct fq_value *it = fq_value_map();
        struct fq_value *md = fq_map_ensure_map(it, "metadata");
        fq_map_set(md, "name", fq_value_str(x->name));
        fq_map_set(md, "namespace", fq_value_str(x->ns));
        const char *ct = fq_value_path_str(x->wl, FQ_META_CREATED, NULL);
        if (ct)
            fq_map_set(md, "creationTimestamp", fq_value_str(ct));
        const struct fq_value *own = fq_meta_owners(x->wl);
        if (own)
            fq_map_set(md, "ownerReferences", fq_value_clone(own));
        fq_map_set(it, "priority", fq_value_int(x->priority));
        fq_map_set(it, "localQueueName", fq_value_str(x->lq));
        fq_map_set(it, "positionInClusterQueue",
                   fq_value_int((int64_t)x->pos_cq));
        fq_map_set(it, "positionInLocalQueue",
                   fq_value_int((int64_t)x->pos_lq));
        fq_seq_push(items, it);
    }
    fq_map_set(out, "items", items);
    free(p);
    return out;
}
