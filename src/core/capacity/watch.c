/*
 * watch.c - the workloads the capacity controller watches (capacity/
 * watch.h): capacity.c's on_change records each workload's state
 * (fq_capacity_watch_note); the autoscaler lists the unsettled ones.
 *
 * What it does not do: place workloads or decide anything about them.
 */
#include "capacity/watch.h"

#include <stdlib.h>
#include <string.h>

#include "capacity/common.h"
#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/objstore.h"

void fq_capacity_wlconds(const struct fq_value *wl, struct fq_cap_wlconds *out)
{
    static const char *const types[] = {"Admitted", "Finished", "Evicted",
                                        "PodsReady"};
    const struct fq_value *s = fq_map_get(wl, "status");
    const struct fq_value *c[4];
    fq_conds_in_status(s, 4, types, c);
    out->admission = fq_map_get(s, "admission") != NULL;
    out->admitted = fq_cond_status_is(c[0], "True");
    out->finished = fq_cond_status_is(c[1], "True");
    out->evicted = fq_cond_status_is(c[2], "True");
    out->pods_ready = fq_cond_status_is(c[3], "True");
}

bool fq_capacity_wlconds_active(const struct fq_cap_wlconds *c)
{
    return c->admission && c->admitted && !c->finished && !c->evicted;
}

bool fq_capacity_workload_active(const struct fq_value *wl)
{
    /* The cheap test first: most workloads of a deep queue are pending. */
    if (!fq_map_get(fq_map_get(wl, "status"), "admission"))
        return false;
    struct fq_cap_wlconds c;
    fq_capacity_wlconds(wl, &c);
    return fq_capacity_wlconds_active(&c);
}

static bool watch_wanted(const struct fq_cap_wlconds *c)
{
    return (c->admission || c->pods_ready) && !c->finished;
}

/* fq_capacity_unsettle for a watch entry in hand. */
static void unsettle(struct fq_capacity *st, const char *key,
                     struct fq_cap_watch *w)
{
    w->settled = false;
    if (w->listed)
        return;
    w->listed = true;
    FQ_GROW(st->unsettled, st->capunsettled, st->nunsettled + 1);
    st->unsettled[st->nunsettled++] = fq_xstrdup(key);
}

void fq_capacity_unsettle(struct fq_capacity *st, const char *key)
{
    struct fq_cap_watch *w = fq_smap_get(&st->watch, key);
    if (w)
        unsettle(st, key, w);
}

/* The workload's placements go at the next run. */
static void stop(struct fq_capacity *st, const char *key, uint64_t hash)
{
    size_t n = st->stopped.n;
    fq_smap_add_h(&st->stopped, key, hash);
    if (st->stopped.n == n)
        return; /* stopped already */
    FQ_GROW(st->stopped_keys, st->capstopped_keys, st->nstopped_keys + 1);
    st->stopped_keys[st->nstopped_keys++] = fq_xstrdup(key);
}

/* Records a workload's new state at revision `rev` (0: unknown). */
enum fq_cap_watch_news fq_capacity_watch_note(struct fq_capacity *st,
                                              const char *ns, const char *name,
                                              const struct fq_value *wl,
                                              uint64_t rev)
{
    char key[600];
    fq_capacity_key(ns, name, key, sizeof(key));
    return fq_capacity_watch_note_key(st, key, fq_smap_hash(key), wl, rev);
}

enum fq_cap_watch_news fq_capacity_watch_note_key(struct fq_capacity *st,
                                                  const char *key,
                                                  uint64_t hash,
                                                  const struct fq_value *wl,
                                                  uint64_t rev)
{
    struct fq_cap_watch *w = fq_smap_get_h(&st->watch, key, hash);
    if (w && wl && rev && w->own_rev == rev)
        return FQ_CAP_WATCH_IN_STEP;
    if (!w && wl) {
        /* Not watched, and most such notices are of pending workloads
         * (no admission), which stay unwatched unless PodsReady is True:
         * one condition looked up instead of four. */
        const struct fq_value *s = fq_map_get(wl, "status");
        if (!fq_map_get(s, "admission") &&
            !fq_cond_status_is(fq_cond_in_status(s, "PodsReady"), "True"))
            return FQ_CAP_WATCH_NONE;
    }
    struct fq_cap_wlconds conds = {0};
    if (wl)
        fq_capacity_wlconds(wl, &conds);
    if (!wl || !watch_wanted(&conds)) {
        if (!w)
            return FQ_CAP_WATCH_NONE;
        fq_smap_del_h(&st->watch, key, hash);
        stop(st, key, hash);
        return FQ_CAP_WATCH_NOTED;
    }
    if (!w) {
        w = fq_xcalloc(1, sizeof(*w));
        fq_smap_put_h(&st->watch, key, hash, w);
    }
    w->active = fq_capacity_wlconds_active(&conds);
    unsettle(st, key, w);
    if (!w->active)
        stop(st, key, hash);
    return FQ_CAP_WATCH_NOTED;
}

/* A decode's blocks are small blocks (alloc.h), as autoscaler.c's
 * wl_decode makes them; its texts are fq_capacity_text's. */
void fq_capacity_wldec_free(struct fq_cap_wldec *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nps; i++) {
        fq_capacity_text_free(d->ps[i].name);
        fq_capacity_text_free(d->ps[i].provreq);
    }
    fq_small_free(d->ps, d->nps * sizeof(*d->ps));
    fq_small_free(d, sizeof(*d));
}

static void watch_free(void *v)
{
    struct fq_cap_watch *w = v;
    fq_capacity_wldec_free(w->dec);
    free(w);
}

void fq_capacity_watch_seed(struct fq_capacity *st, struct fq_engine *e)
{
    if (st->watch_seeded)
        return;
    st->watch_seeded = true;
    st->watch.free_val = watch_free;
    st->unplace_all = true;
    const struct fq_object **all;
    size_t n =
        fq_objstore_list(fq_engine_store(e), FQ_KIND_WORKLOAD, NULL, &all);
    for (size_t i = 0; i < n; i++)
        fq_capacity_watch_note(st, all[i]->ns, all[i]->name, all[i]->obj, 0);
    free(all);
}

static int unsettled_cmp(const void *a, const void *b)
{
    return strcmp(((const struct fq_cap_unsettled *)a)->key,
                  ((const struct fq_cap_unsettled *)b)->key);
}

/* The list drops those that settled or left (and repeats) on the way. */
size_t fq_capacity_unsettled(struct fq_capacity *st, struct fq_engine *e,
                             struct fq_cap_unsettled **out)
{
    fq_capacity_watch_seed(st, e);
    *out = NULL;
    if (st->nunsettled == 0)
        return 0;
    FQ_GROW(st->ulist, st->capulist, st->nunsettled);
    struct fq_cap_unsettled *v = st->ulist;
    size_t m = 0;
    uint64_t pass = ++st->unsettled_pass;
    for (size_t i = 0; i < st->nunsettled; i++) {
        char *k = st->unsettled[i];
        struct fq_cap_watch *w = fq_smap_get(&st->watch, k);
        if (!w || w->settled || w->seen == pass) {
            if (w && w->seen != pass)
                w->listed = false;
            free(k);
            continue;
        }
        /* A workload that left while listed and came back is there
         * twice: keep one. */
        w->seen = pass;
        w->listed = true;
        st->unsettled[m] = k;
        v[m++] = (struct fq_cap_unsettled){NULL, k, w};
    }
    st->nunsettled = m;
    if (m > 1)
        qsort(v, m, sizeof(*v), unsettled_cmp);
    size_t n = 0;
    for (size_t i = 0; i < m; i++) {
        v[i].obj = fq_capacity_keyed(e, FQ_KIND_WORKLOAD, v[i].key);
        if (v[i].obj)
            v[n++] = v[i];
    }
    *out = v;
    return n;
}

size_t fq_capacity_watched(struct fq_capacity *st, struct fq_engine *e,
                           const struct fq_object ***out)
{
    fq_capacity_watch_seed(st, e);
    const char **keys;
    size_t nk = fq_smap_sorted_keys(&st->watch, NULL, &keys);
    return fq_capacity_objects_of(e, FQ_KIND_WORKLOAD, keys, nk, out);
}
