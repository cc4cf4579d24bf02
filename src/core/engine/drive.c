/*
 * drive.c - helpers for running an engine forward on a virtual clock
 * (drive.h), one copy for the estimator and the simulator.
 *
 * How: the run-end heap is a binary min-heap ordered by (t, job), so equal
 * times pop in job order and runs are reproducible. mark_finished writes
 * Finished into the stored Workload's status in place and tells the store,
 * as a controller would.
 *
 * Invariants: pure core code (no clock, no I/O): time comes in as an
 * argument. The heap never holds more than it was given.
 * Not done: deciding which entries are stale (the caller knows its jobs'
 * generations), deleting finished Workloads.
 */
#include "flexq/drive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/engine.h"
#include "flexq/kinds.h"

static bool fin_less(const struct fq_drive_fin *a, const struct fq_drive_fin *b)
{
    return a->t < b->t || (a->t == b->t && a->job < b->job);
}

void fq_drive_heap_push(struct fq_drive_heap *h, struct fq_drive_fin x)
{
    FQ_GROW(h->v, h->cap, h->n + 1);
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!fin_less(&x, &h->v[p]))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = x;
}

struct fq_drive_fin fq_drive_heap_pop(struct fq_drive_heap *h)
{
    struct fq_drive_fin top = h->v[0];
    struct fq_drive_fin last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && fin_less(&h->v[c + 1], &h->v[c]))
            c++;
        if (!fin_less(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

void fq_drive_heap_free(struct fq_drive_heap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

bool fq_drive_mark_finished(struct fq_objstore *s, const char *ns,
                            const char *name, int64_t now, const char *message)
{
    struct fq_value *w =
        fq_objstore_edit_in_place(s, FQ_KIND_WORKLOAD, ns, name);
    if (!w)
        return false;
    fq_cond_put(w, "Finished", "True", "Succeeded", message, now);
    fq_objstore_edited(s, FQ_KIND_WORKLOAD, ns, name, false);
    return true;
}

void fq_drive_purge_events(struct fq_objstore *s)
{
    if (fq_objstore_count(s, FQ_KIND_EVENT) < 1024)
        return;
    const struct fq_object **objs = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_EVENT, NULL, &objs);
    char(*names)[2][256] = fq_xmalloc((n ? n : 1) * sizeof(*names));
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i][0], sizeof(names[i][0]), "%s", objs[i]->ns);
        snprintf(names[i][1], sizeof(names[i][1]), "%s", objs[i]->name);
    }
    free(objs);
    for (size_t i = 0; i < n; i++)
        fq_objstore_delete(s, FQ_KIND_EVENT, names[i][0], names[i][1], NULL);
    free(names);
}
