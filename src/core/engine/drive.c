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
#include "flexq/assert.h"
#include "flexq/conditions.h"
#include "flexq/engine.h"
#include "flexq/kinds.h"

static bool fin_less(const void *x, const void *y)
{
    const struct fq_drive_fin *a = x, *b = y;
    return a->t < b->t || (a->t == b->t && a->job < b->job);
}

void fq_drive_heap_push(struct fq_drive_heap *h, struct fq_drive_fin x)
{
    if (!h->h.size)
        fq_heap_init(&h->h, sizeof(x), fin_less);
    fq_heap_push(&h->h, &x);
}

const struct fq_drive_fin *fq_drive_heap_top(const struct fq_drive_heap *h)
{
    return fq_heap_top(&h->h);
}

struct fq_drive_fin fq_drive_heap_pop(struct fq_drive_heap *h)
{
    struct fq_drive_fin top;
    bool had = fq_heap_pop(&h->h, &top);
    FQ_ASSERT(had);
    return top;
}

void fq_drive_heap_free(struct fq_drive_heap *h)
{
    fq_heap_release(&h->h);
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
