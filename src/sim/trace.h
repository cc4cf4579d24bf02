/*
 * trace.h - the normalized job-trace CSV that `flexq sim` replays.
 *
 * Schema (the normalized trace format): one header line naming the columns,
 * then one job per line:
 *
 *   job_id,submit_s,duration_s,chips,hosts,priority,queue,user,status,
 *   requested_s,orig_wait_s
 *
 * Columns are found by name in the header, so their order does not matter;
 * job_id, submit_s, duration_s and chips are required, the rest optional.
 * Rows must be sorted by submit_s. Every bad row gets an error naming its
 * line; with skip_bad the reader skips and counts bad rows instead.
 *
 * A column map (fq_trace_map) turns a trace row into what the simulator
 * submits: the shape of its pods (chips per host), the LocalQueue it goes to
 * and its priority.
 */
#ifndef FLEXQ_SIM_TRACE_H
#define FLEXQ_SIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/err.h"

/* One job of the trace. Strings are borrowed from the trace's arena. */
struct fq_trace_job {
    const char *id;
    int64_t submit_ms;   /* since the first job of the trace */
    int64_t duration_ms; /* > 0 */
    int64_t chips;       /* >= 1 */
    int64_t hosts;       /* >= 1, <= chips */
    int64_t priority;
    const char *queue; /* "" when unknown */
    const char *user;  /* "" when unknown */
    const char *status;
    int64_t requested_ms; /* -1 when empty */
    int64_t orig_wait_ms; /* -1 when empty */
    uint32_t line;        /* 1-based line in the file */
};

struct fq_trace_arena; /* private */

struct fq_trace {
    struct fq_trace_job *jobs; /* owned, sorted by submit_ms */
    size_t n, cap;
    size_t lines;   /* data lines read (not counting the header) */
    size_t skipped; /* bad rows skipped under skip_bad */
    /* The first few skip messages (at most FQ_TRACE_KEEP_ERRORS). */
    struct fq_err *skip_errors; /* owned */
    size_t n_skip_errors;
    struct fq_trace_arena *arena; /* owned */
};

#define FQ_TRACE_KEEP_ERRORS 10
#define FQ_TRACE_MAX_LINE    65536
#define FQ_TRACE_MAX_ROWS    20000000

void fq_trace_init(struct fq_trace *t);
void fq_trace_release(struct fq_trace *t);

/*
 * Parses `len` bytes of CSV text into `t` (initialised). `name` labels
 * errors ("philly.csv:17:3: duration_s: must be > 0, got \"0\""). Without
 * skip_bad the first bad row fails the whole read with FQ_EINVAL (or
 * FQ_EPARSE for a malformed header, FQ_ELIMIT for a line or file over a
 * limit); with it bad rows are counted in t->skipped. On error `t` holds
 * nothing useful but can be released.
 */
int fq_trace_parse(struct fq_trace *t, const char *text, size_t len,
                   const char *name, bool skip_bad, struct fq_err *err);

/* Reads and parses a file. FQ_EIO when it cannot be read. */
int fq_trace_load(struct fq_trace *t, const char *path, bool skip_bad,
                  struct fq_err *err);

/*
 * How trace columns become workloads (the --map flag).
 *
 *   chips-per-host=N      pods of at most N chips: hosts = ceil(chips / N)
 *                         (default: the trace's own hosts column)
 *   queue=NAME            every job goes to LocalQueue NAME
 *   queue=@queue|@user    the LocalQueue is named by that column (jobs
 *                         with an empty one go to the default queue)
 *   priority=@priority    the trace's priority (default)
 *   priority=N            every job gets priority N
 */
struct fq_trace_map {
    int64_t chips_per_host; /* 0 = from the trace */
    char queue[128];        /* a fixed LocalQueue name, or "" */

    enum {
        FQ_TRACE_QUEUE_FIXED,
        FQ_TRACE_QUEUE_COLUMN,
        FQ_TRACE_QUEUE_USER,
    } queue_from;

    bool priority_fixed;
    int64_t priority;
};

void fq_trace_map_init(struct fq_trace_map *m);

/* Parses "key=value[,key=value...]" into `m` (adding to what is there). */
int fq_trace_map_parse(struct fq_trace_map *m, const char *spec,
                       struct fq_err *err);

/* The pod shape of a job under the map: *hosts pods of *per_host chips. */
void fq_trace_shape(const struct fq_trace_map *m, const struct fq_trace_job *j,
                    int64_t *hosts, int64_t *per_host);

/* The LocalQueue a job goes to: the map's, or `def` when it names none. */
const char *fq_trace_queue(const struct fq_trace_map *m,
                           const struct fq_trace_job *j, const char *def);

int64_t fq_trace_priority(const struct fq_trace_map *m,
                          const struct fq_trace_job *j);

#endif
