/*
 * executor.h - what makes bound pods run, as an ops table.
 *
 * The core decides admission, flavors and bindings; an executor only makes
 * the pods the binder bound actually run, and reports what happens to
 * them with fq_engine_pod_update. Two implementations:
 *
 *   local  today's runner (process.c): every pod bound to one of flexqd's
 *          nodes is a process on this machine (the default)
 *   slurm  every gang (the pods of one flexq.dev/gang, or a lone pod) is
 *          one Slurm job pinned to exactly the bound nodes, on the cluster
 *          SLURM_CONF names; every Slurm command runs as a child with a
 *          timeout (scripts/flexq-slurm), so a slow or absent slurmctld
 *          never blocks the loop (executor_slurm.c)
 *
 * flexqd picks one with --executor local|slurm. runner_daemon.c drives the
 * chosen executor: stored pod changes go to on_change, SIGCHLD and the one
 * second tick to poll, a readable notify_fd to on_notify.
 *
 * Gangs. The binder binds a gang all-or-nothing (src/core/jobs/binder.c); an
 * executor that runs gangs as units (slurm) buffers a gang's pods until
 * flexq.dev/gang-size of them are bound, then launches them at once. A pod
 * without the annotation is a gang of one.
 */
#ifndef FLEXQ_EXECUTOR_H
#define FLEXQ_EXECUTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/buf.h"
#include "flexq/engine.h"
#include "flexq/err.h"
#include "flexq/objstore.h"
#include "flexq/value.h"

struct fq_executor;
struct fq_runner;

/* The unit an executor starts: 1..N bound pods, in worker-id order. */
struct fq_gang {
    const char *ns;               /* borrowed */
    const char *id;               /* flexq.dev/gang value, or the pod name */
    const struct fq_value **pods; /* borrowed Pod objects */
    size_t npods;
};

struct fq_executor_ops {
    const char *name; /* "local", "slurm" */
    /* Reads its configuration, probes what it needs. */
    int (*start)(struct fq_executor *x, struct fq_err *err);
    /* Starts a bound gang; never blocks (a child is queued). */
    int (*launch)(struct fq_executor *x, const struct fq_gang *g,
                  int64_t now_ms, struct fq_err *err);
    /* Stops the gang holding pod ns/name; idempotent. */
    int (*cancel)(struct fq_executor *x, const char *ns, const char *pod,
                  int64_t now_ms);
    /* One stored change of a Pod (borrowed): start what got bound, stop
     * what was deleted or made terminal. */
    void (*on_change)(struct fq_executor *x, const struct fq_change *c,
                      int64_t now_ms);
    /* The one second tick: read children, reconcile, report. */
    void (*poll)(struct fq_executor *x, int64_t now_ms);
    /* SIGCHLD: a child of the executor may have ended. */
    void (*on_sigchld)(struct fq_executor *x, int64_t now_ms);
    /* x->notify_fd became readable (NULL when the executor has none). */
    void (*on_notify)(struct fq_executor *x, int64_t now_ms);
    /* After a flexqd restart: re-attach to what still runs. */
    int (*adopt)(struct fq_executor *x, int64_t now_ms);
    /* True while something needs the one second tick. */
    bool (*busy)(const struct fq_executor *x);
    /* True while pod ns/name may still write to its log. */
    bool (*pod_live)(const struct fq_executor *x, const char *ns,
                     const char *name);
    /* One line per capability, appended to out. */
    void (*caps)(const struct fq_executor *x, struct fq_buf *out);
    void (*stop)(struct fq_executor *x);
};

struct fq_executor {
    const struct fq_executor_ops *ops;
    struct fq_engine *engine; /* borrowed */
    const char *data_dir;     /* borrowed; pods/ lives under it */
    struct fq_runner *runner; /* local only: the runner (owned) */
    void *state;              /* the executor's own */
    /* A descriptor start() opened for the loop to watch (readable: call
     * on_notify), or -1: the slurm executor's inotify on its running
     * tasks' pod directories, so that a task's start and end are news at
     * once, with no child and no polling. Owned by the executor. */
    int notify_fd;
};

extern const struct fq_executor_ops fq_executor_local_ops;
extern const struct fq_executor_ops fq_executor_slurm_ops;

/* The ops of "local" or "slurm"; NULL for another name. */
const struct fq_executor_ops *fq_executor_lookup(const char *name);

/*
 * The Slurm executor's pure helpers (executor_slurm.c), exposed for the
 * unit tests.
 *
 * Maps a Slurm job state ("NODE_FAIL", "CANCELLED", ...) of a job that
 * ended to the pod failure reason flexq reports for a task that wrote no
 * status of its own ("NodeLost", "Killed", "DeadlineExceeded",
 * "OOMKilled", "Error"). NULL for a state that is not an end
 * (PENDING, RUNNING, CONFIGURING, COMPLETING, ...).
 */
const char *fq_executor_slurm_reason(const char *state);

#endif
