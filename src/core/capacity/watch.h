/*
 * capacity/watch.h - the workloads the capacity controller watches: those
 * with an admission or PodsReady=True that have not finished, kept by
 * on_change (fq_capacity_watch_note) so that a run visits neither every
 * pending workload of a deep queue nor every finished one, and the list
 * of those the autoscaler has not settled.
 *
 * What it does not do: place workloads or decide anything about them
 * (autoscaler.c); it only records their state and lists them.
 */
#ifndef FLEXQ_CAPACITY_WATCH_H
#define FLEXQ_CAPACITY_WATCH_H

#include "capacity/state.h"

void fq_capacity_wlconds(const struct fq_value *wl, struct fq_cap_wlconds *out);

/* fq_capacity_workload_active from what fq_capacity_wlconds read. */
bool fq_capacity_wlconds_active(const struct fq_cap_wlconds *c);

/* Admitted, with an admission, not finished, not being evicted. */
bool fq_capacity_workload_active(const struct fq_value *wl);

/* The watched workloads (see struct fq_capacity) in key order. Returns
 * the count; *out is an owned array of borrowed objects. */
size_t fq_capacity_watched(struct fq_capacity *st, struct fq_engine *e,
                           const struct fq_object ***out);

/* The watched workloads not settled, in key order. Returns the count;
 * *out (NULL when none is listed) is borrowed, as are its members: good
 * during the run, until the next call. */
size_t fq_capacity_unsettled(struct fq_capacity *st, struct fq_engine *e,
                             struct fq_cap_unsettled **out);

/* Marks a watched workload not settled (see struct fq_cap_watch); `key`
 * is "ns/name". */
void fq_capacity_unsettle(struct fq_capacity *st, const char *key);

void fq_capacity_wldec_free(struct fq_cap_wldec *d);

/* What fq_capacity_watch_note found. */
enum fq_cap_watch_news {
    FQ_CAP_WATCH_NONE,    /* neither watched nor was */
    FQ_CAP_WATCH_NOTED,   /* watched or was: recorded, for the next run */
    FQ_CAP_WATCH_IN_STEP, /* our own write of it, already in step */
};

/* Records a workload's new state at revision `rev` (0: unknown), from
 * on_change; `wl` is NULL when it was deleted. */
enum fq_cap_watch_news fq_capacity_watch_note(struct fq_capacity *st,
                                              const char *ns, const char *name,
                                              const struct fq_value *wl,
                                              uint64_t rev);
/* The same for the workload of "ns/name" key `key`, whose fq_smap_hash is
 * `hash` (the change notice's, struct fq_change). */
enum fq_cap_watch_news fq_capacity_watch_note_key(struct fq_capacity *st,
                                                  const char *key,
                                                  uint64_t hash,
                                                  const struct fq_value *wl,
                                                  uint64_t rev);

/* Fills the watch table from the store, once (the first run). */
void fq_capacity_watch_seed(struct fq_capacity *st, struct fq_engine *e);

#endif
