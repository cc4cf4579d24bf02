/*
 * event_gc.h - expiry of Events in flexqd (event_gc.c).
 *
 * Events live FQ_EVENT_TTL_S after they were last seen (--event-ttl) and
 * at most FQ_EVENT_MAX are kept (--max-events); older ones are deleted.
 */
#ifndef FLEXQ_DAEMON_EVENT_GC_H
#define FLEXQ_DAEMON_EVENT_GC_H

#include <stddef.h>
#include <stdint.h>

#define FQ_EVENT_TTL_S 3600
#define FQ_EVENT_MAX   10000

struct fq_daemon;
struct fq_objstore;

/* Registers the sweep as a turn hook of d. */
void fq_event_gc_attach(struct fq_daemon *d);

/* Deletes the Events of `s` last seen before now_ms - ttl_ms, then the
 * oldest beyond `max`, at most `most` of them, oldest first; returns how
 * many were deleted. */
size_t fq_event_gc_sweep(struct fq_objstore *s, int64_t now_ms, int64_t ttl_ms,
                         size_t max, size_t most);

#endif
