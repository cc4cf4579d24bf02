/*
 * executor_local.c - the `local` executor: bound pods are processes on this
 * machine, through the runner (process.c), exactly as before the executor
 * seam existed.
 *
 * Every op forwards to the runner: a change goes to fq_runner_on_change
 * (which starts, stops and cleans up pods one by one; a gang is its pods),
 * the tick to fq_runner_poll, SIGCHLD's reaping to fq_runner_on_sigchld.
 * Adoption is the runner's start-up scan: a pod found Running without a
 * process here is reported Failed (a local process cannot outlive flexqd),
 * and the directories of pods deleted while flexqd was away are removed.
 *
 * What it does not do: own the runner's configuration (runner_daemon.c
 * creates the runner and hands it over in x->runner).
 */
#include <string.h>

#include "runner/executor.h"
#include "runner/runner.h"

static int local_start(struct fq_executor *x, struct fq_err *err)
{
    if (!x->runner)
        return fq_err_set(err, FQ_EINVAL, "local executor without a runner");
    return 0;
}

static int local_launch(struct fq_executor *x, const struct fq_gang *g,
                        int64_t now_ms, struct fq_err *err)
{
    for (size_t i = 0; i < g->npods; i++) {
        int rc = fq_runner_start_pod(x->runner, g->pods[i], now_ms, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int local_cancel(struct fq_executor *x, const char *ns, const char *pod,
                        int64_t now_ms)
{
    int rc = fq_runner_stop_pod(x->runner, ns, pod, now_ms);
    return rc == FQ_ENOTFOUND ? 0 : rc;
}

static void local_on_change(struct fq_executor *x, const struct fq_change *c,
                            int64_t now_ms)
{
    fq_runner_on_change(x->runner, c, now_ms);
}

static void local_poll(struct fq_executor *x, int64_t now_ms)
{
    fq_runner_poll(x->runner, now_ms);
}

static void local_on_sigchld(struct fq_executor *x, int64_t now_ms)
{
    fq_runner_on_sigchld(x->runner, now_ms);
}

static bool has_process(void *ctx, const char *ns, const char *name)
{
    return fq_runner_pod_pid(ctx, ns, name) >= 0;
}

static int local_adopt(struct fq_executor *x, int64_t now_ms)
{
    fq_runner_poll(x->runner, now_ms);
    /* the directories of pods deleted while flexqd was not running */
    fq_runner_sweep_pod_dirs(x->data_dir, fq_engine_store(x->engine),
                             has_process, x->runner);
    return 0;
}

static bool local_busy(const struct fq_executor *x)
{
    return fq_runner_running(x->runner) > 0;
}

static bool local_pod_live(const struct fq_executor *x, const char *ns,
                           const char *name)
{
    return fq_runner_pod_pid(x->runner, ns, name) >= 0;
}

static void local_caps(const struct fq_executor *x, struct fq_buf *out)
{
    fq_buf_puts(out, "executor: local\n");
    fq_runner_caps(x->runner, out);
}

static void local_stop(struct fq_executor *x)
{
    fq_runner_free(x->runner);
    x->runner = NULL;
}

const struct fq_executor_ops fq_executor_local_ops = {
    .name = "local",
    .start = local_start,
    .launch = local_launch,
    .cancel = local_cancel,
    .on_change = local_on_change,
    .poll = local_poll,
    .on_sigchld = local_on_sigchld,
    .adopt = local_adopt,
    .busy = local_busy,
    .pod_live = local_pod_live,
    .caps = local_caps,
    .stop = local_stop,
};

const struct fq_executor_ops *fq_executor_lookup(const char *name)
{
    if (!name || !*name || !strcmp(name, "local"))
        return &fq_executor_local_ops;
    if (!strcmp(name, "slurm"))
        return &fq_executor_slurm_ops;
    return NULL;
}
