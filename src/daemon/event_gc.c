/*
 * event_gc.c - Events expire: kept for a TTL (Kubernetes' --event-ttl, one
 * hour by default) and at most a number of them, then deleted from the
 * store, so that a busy cluster's Events do not grow memory and the
 * database without bound.
 *
 * How: a turn hook sweeps at most every SWEEP_MS, or at once when the
 * count passes the cap by an eighth; one sweep deletes at most SWEEP_MAX
 * (the oldest), and asks for another turn when there is more. A sweep deletes every Event whose
 * lastTimestamp is older than the TTL, then, if more than the cap remain,
 * the oldest ones down to the cap. Deletes go through the object store in
 * the turn, so they are committed with it and watchers see DELETED.
 *
 * Invariants: only Events are deleted; an Event touched within the TTL
 * stays unless the cap is exceeded; a sweep is bounded by the number of
 * Events.
 *
 * After expiring, each sweep tidies (see tidy()): the store drops the
 * history rows of deleted Events and gives free pages back, and the
 * allocator returns freed memory to the system.
 *
 * What it does not do: expire other kinds (finished workloads and pods
 * are their owners' business).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
# include <malloc.h>
#endif

#include "api/api.h"
#include "daemon.h"
#include "event_gc.h"
#include "flexq/alloc.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"
#include "log.h"
#include "store.h"

#define SWEEP_MS 10000
/* Most Events one sweep deletes: a sweep is one turn's work, and 20,000
 * deletes in one commit would stall the loop; the rest go in the next
 * turns. */
#define SWEEP_MAX 1000
/* A tidy that held the loop this long is logged, with its parts. */
#define TIDY_SLOW_MS 20

struct aged {
    int64_t at;
    char *ns, *name;
};

static int by_age(const void *x, const void *y)
{
    const struct aged *a = x, *b = y;
    return a->at < b->at ? -1 : a->at > b->at;
}

static int64_t last_seen(const struct fq_value *ev)
{
    int64_t t = 0;
    const char *s = fq_value_path_str(ev, "lastTimestamp", NULL);
    if (!s)
        s = fq_value_path_str(ev, FQ_META_CREATED, NULL);
    return s && fq_time_parse(s, &t) == 0 ? t : 0;
}

size_t fq_event_gc_sweep(struct fq_objstore *s, int64_t now_ms, int64_t ttl_ms,
                         size_t max, size_t most)
{
    const struct fq_object **objs = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_EVENT, NULL, &objs);
    struct aged *a = fq_xcalloc(n ? n : 1, sizeof(*a));
    for (size_t i = 0; i < n; i++)
        a[i] = (struct aged){last_seen(objs[i]->obj), fq_xstrdup(objs[i]->ns),
                             fq_xstrdup(objs[i]->name)};
    free(objs);
    qsort(a, n, sizeof(*a), by_age);
    size_t del = 0;
    while (del < n && a[del].at < now_ms - ttl_ms)
        del++;
    if (n - del > max)
        del = n - max;
    if (del > most)
        del = most; /* the oldest first */
    for (size_t i = 0; i < n; i++) {
        if (i < del)
            fq_objstore_delete(s, FQ_KIND_EVENT, a[i].ns, a[i].name, NULL);
        free(a[i].ns);
        free(a[i].name);
    }
    free(a);
    return del;
}

/*
 * What expiring leaves behind, at most once every SWEEP_MS: the watch
 * history lets go of changes older than its age (fq_api_ring_expire:
 * after a burst it holds thousands of objects, scattered over the heap),
 * the store drops the history of the Events deleted since (committed by
 * earlier turns) and
 * gives its free pages back; then glibc returns free pages (it keeps
 * them otherwise: a churn of 20,000 objects left over 200 MB resident).
 * The value trees' small blocks are cut from slabs: fq_small_trim
 * unmaps the slabs wholly free and gives back the wholly free pages of
 * the others (alloc.c).
 */
static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void tidy(struct fq_daemon *d, int64_t now_ms)
{
    double t0 = mono_ms();
    size_t forgot = d->api ? fq_api_ring_expire(d->api, now_ms) : 0;
    double t1 = mono_ms();
    struct fq_err err = {0};
    int rc = fq_store_tidy(d->store, &err);
    if (rc < 0)
        fq_log(FQ_LOG_WARN, "store tidy failed", "error=\"%s\"", err.msg);
    else if (rc > 0)
        fq_log(FQ_LOG_DEBUG, "event history dropped", "rows=%d", rc);
    double t2 = mono_ms();
    fq_small_trim();
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    double t3 = mono_ms();
    /* It runs on the loop: say so when it held the loop long. */
    if (t3 - t0 >= TIDY_SLOW_MS)
        fq_log(FQ_LOG_INFO, "tidy was slow",
               "ms=%.1f watch_history_ms=%.1f forgotten=%zu store_ms=%.1f "
               "trim_ms=%.1f",
               t3 - t0, t1 - t0, forgot, t2 - t1, t3 - t2);
}

static void on_turn(struct fq_daemon *d, int64_t now_ms, void *ctx)
{
    (void)ctx;
    struct fq_objstore *s = fq_engine_store(d->engine);
    size_t max = d->opts.max_events ? d->opts.max_events : FQ_EVENT_MAX;
    int64_t ttl = d->opts.event_ttl_s > 0 ? d->opts.event_ttl_s * 1000 :
                                            FQ_EVENT_TTL_S * 1000;
    bool over = fq_objstore_count(s, FQ_KIND_EVENT) > max + max / 8;
    if (!over && now_ms - d->events_swept_ms < SWEEP_MS)
        return;
    d->events_swept_ms = now_ms;
    /* Tidying is once a sweep interval, not once a turn while Events are
     * over the cap: a burst of Events (a churn of Workloads) made every
     * turn tidy and trim, and held the loop hundreds of ms at a time; and
     * each trim empties the small-block cache, which sent allocations back
     * through malloc (a fifth of the API's creates/s). */
    if (now_ms - d->tidied_ms >= SWEEP_MS) {
        d->tidied_ms = now_ms;
        tidy(d, now_ms);
    }
    double t0 = mono_ms();
    size_t n = fq_event_gc_sweep(s, now_ms, ttl, max, SWEEP_MAX);
    double ms = mono_ms() - t0;
    if (ms >= TIDY_SLOW_MS)
        fq_log(FQ_LOG_INFO, "event sweep was slow", "ms=%.1f deleted=%zu", ms,
               n);
    if (n)
        fq_log(FQ_LOG_DEBUG, "events expired", "count=%zu", n);
    if (n == SWEEP_MAX) { /* more to do: again next turn, soon */
        d->events_swept_ms = now_ms - SWEEP_MS;
        fq_daemon_wake(d);
    }
}

void fq_event_gc_attach(struct fq_daemon *d)
{
    fq_daemon_add_turn_hook(d, on_turn, NULL);
}
