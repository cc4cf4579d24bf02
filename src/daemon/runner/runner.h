/*
 * runner.h - flexqd's kubelet: bound Pods become real processes.
 *
 * The runner starts the first container of every Pod bound to one of the
 * daemon's nodes as a process (argv from command + args, never a shell),
 * in its own process group, with its stdout and stderr in the pod's own log
 * file under the data directory, and reports what happens to the engine
 * with fq_engine_pod_update (Running, Succeeded, Failed with exit code and
 * a reason such as "ContainerCannotRun", "OOMKilled" or "Error").
 *
 * The daemon's loop drives it; the runner never installs signal handlers
 * and never blocks for long:
 *
 *   fq_runner_on_sigchld  on SIGCHLD: reaps the pods' processes (only its
 *                         own pids, so other children are left alone)
 *   fq_runner_on_change   for each stored change the daemon drains: starts
 *                         pods that got bound, stops pods that were deleted
 *                         or reached a terminal phase
 *   fq_runner_poll        every turn (or once a second): retries pods
 *                         waiting for a ConfigMap, escalates SIGTERM to
 *                         SIGKILL after the grace period, rotates logs
 *
 * Files per pod, under <data_dir>/pods/<namespace>/<name>/:
 *   log           stdout+stderr (rotated to log.1 past log_max_bytes)
 *   pod.json      the Pod object as started (the training helper reads the
 *                 labels of its peers from here); Ray pods only
 *   status.json   written when the process ends: phase, exitCode, reason;
 *                 Ray pods only (the driver's way to see a worker crash)
 *   metrics.jsonl lines appended by the training helper's report()
 *   volumes/NAME/ materialized ConfigMap / emptyDir volumes
 * The directory is removed when the Pod object is deleted (after its
 * process has ended). A plain Job's pod costs two inodes (the directory
 * and its log): pod.json and status.json are written only for pods
 * labelled ray.io/cluster, the only ones whose peers read them.
 *
 * See docs/runtime.md for isolation (the pod user, bubblewrap, seccomp,
 * fallbacks), limits and what happens to pods when flexqd restarts.
 */
#ifndef FLEXQ_RUNNER_H
#define FLEXQ_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "flexq/buf.h"
#include "flexq/engine.h"
#include "flexq/err.h"
#include "flexq/value.h"

/* How a pod sees its volumes at the manifest's paths. */
enum fq_runner_mounts {
    FQ_MOUNTS_AUTO = 0, /* probe at start: bwrap, else unshare, else
                           rewrite */
    FQ_MOUNTS_BWRAP,    /* private mount namespace through bubblewrap */
    FQ_MOUNTS_UNSHARE,  /* the same, made by flexqd itself (needs root) */
    FQ_MOUNTS_REWRITE,  /* no namespace: paths in argv/env/workingDir that
                           start with a mountPath are rewritten to the
                           volume's directory on the host */
};

/* How resource limits are enforced. */
enum fq_runner_cgroups {
    FQ_CGROUPS_AUTO = 0, /* probe: v2, else v1, else none */
    FQ_CGROUPS_V2,       /* memory.max, cpu.max */
    FQ_CGROUPS_V1,       /* memory.limit_in_bytes, cpu.cfs_quota_us */
    FQ_CGROUPS_NONE,     /* limits are recorded, not enforced */
};

struct fq_runner_config {
    const char *data_dir;    /* borrowed; pods/ lives under it (required) */
    const char *python_path; /* borrowed; prepended to the pods' PYTHONPATH
                                (the directory holding flexq/); NULL = the
                                source tree's python/ */
    const char *node_name;   /* borrowed; run only pods bound to this node
                                (NULL: every bound pod) */
    size_t log_max_bytes;    /* rotate a pod's log past this (10 MiB) */
    int64_t grace_ms;        /* SIGTERM -> SIGKILL (30 s, Kubernetes') */
    int gpus;                /* GPUs of this machine handed out through
                                CUDA_VISIBLE_DEVICES (0: none) */
    enum fq_runner_mounts mounts;
    enum fq_runner_cgroups cgroups;
    /* The sandbox (sandbox.h, docs/runtime.md). */
    const char *pod_user;   /* borrowed; user name or "UID:GID" the pods
                                run as when flexqd is root (NULL:
                                flexq-pod, else 65534:65534) */
    bool allow_run_as_user; /* honour securityContext.runAsUser and
                                runAsGroup (else such a pod fails) */
    const char *hide[4];    /* borrowed; files that do not exist inside a
                                pod (the tokens file, the config file);
                                NULL-terminated. The data directory is
                                always hidden but for the pod's own. */
    long pod_max_procs;     /* RLIMIT_NPROC (0: 16384) */
    long pod_max_files;     /* RLIMIT_NOFILE (0: 65536) */
};

void fq_runner_config_init(struct fq_runner_config *c);

struct fq_runner;

/*
 * Creates a runner for engine `e` (borrowed; must outlive the runner).
 * Probes bubblewrap and cgroups once (a short child process) and says what
 * it found in fq_runner_caps. Returns NULL with `err` set when data_dir
 * cannot be created.
 */
struct fq_runner *fq_runner_new(const struct fq_runner_config *cfg,
                                struct fq_engine *e, struct fq_err *err);
/* Kills every running pod's process group (SIGKILL) and frees. */
void fq_runner_free(struct fq_runner *r);

/* One line per capability, e.g. "mounts: bubblewrap 0.8.0" and
 * "limits: cgroup v1 memory+cpu". Appended to `out`. */
void fq_runner_caps(const struct fq_runner *r, struct fq_buf *out);
enum fq_runner_mounts fq_runner_mount_mode(const struct fq_runner *r);
enum fq_runner_cgroups fq_runner_cgroup_mode(const struct fq_runner *r);

/*
 * Starts a bound pod (borrowed Pod object). Does nothing (returns 0) when
 * the pod already runs, is terminal, is bound to another node, or waits for
 * a ConfigMap (retried by fq_runner_poll). A command that cannot be found
 * or executed is not an error of this call: the pod is reported Failed with
 * reason ContainerCannotRun. Returns FQ_EIO only when fork itself fails.
 */
int fq_runner_start_pod(struct fq_runner *r, const struct fq_value *pod,
                        int64_t now_ms, struct fq_err *err);

/* Sends SIGTERM to the pod's process group; SIGKILL follows after the
 * grace period (from fq_runner_poll). FQ_ENOTFOUND if it does not run. */
int fq_runner_stop_pod(struct fq_runner *r, const char *ns, const char *name,
                       int64_t now_ms);

/* Reaps exited pod processes and reports them. */
void fq_runner_on_sigchld(struct fq_runner *r, int64_t now_ms);

/* Reacts to one stored change (Pod bound -> start, deleted/terminal ->
 * stop). `c` is borrowed. */
void fq_runner_on_change(struct fq_runner *r, const struct fq_change *c,
                         int64_t now_ms);

/* Periodic work; also starts bound pods it has not seen (a full scan of
 * the store's Pods, used at start-up and as a safety net). */
void fq_runner_poll(struct fq_runner *r, int64_t now_ms);

/* Number of pod processes alive. */
size_t fq_runner_running(const struct fq_runner *r);

/* pid of a running pod's process (its process group id), or -1. */
pid_t fq_runner_pod_pid(const struct fq_runner *r, const char *ns,
                        const char *name);

/* --- flexqd glue (runner_daemon.c) ---------------------------------- */

struct fq_daemon;
struct fq_runtime;

/*
 * Creates the daemon's runner (pods under d's data dir; GPUs from
 * nvidia-smi with --provider local) and plugs it in: SIGCHLD and a 1 s
 * loop timer, a change listener that starts / stops pods, the "log"
 * subresource of pods, jobs and rayjobs, and the Ray Jobs API routes. Call
 * once after the API exists; NULL with `err` set on failure.
 */
struct fq_runtime *fq_runtime_attach(struct fq_daemon *d, struct fq_err *err);
/* Stops every pod, ends log streams, frees. */
void fq_runtime_detach(struct fq_runtime *rt);

struct fq_objstore;

/* The pod's directory, "<data_dir>/pods/<ns>/<name>" (returns owned). */
char *fq_runner_pod_dir(const char *data_dir, const char *ns, const char *name);

/* Removes the pod's directory with its log, files and volumes (never
 * following links out of it); nothing for a name that is not one path
 * element. A deleted pod's files go with it, as the kubelet's do. */
void fq_runner_remove_pod_dir(const char *data_dir, const char *ns,
                              const char *name);

/*
 * Removes every pod directory under <data_dir>/pods whose Pod is not in
 * `st` (borrowed) and for which live(ctx, ns, name) is false (live may be
 * NULL): the pods deleted while flexqd was not running. Returns how many.
 */
size_t fq_runner_sweep_pod_dirs(
    const char *data_dir, const struct fq_objstore *st,
    bool (*live)(void *ctx, const char *ns, const char *name), void *ctx);

#endif
