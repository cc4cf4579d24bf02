/*
 * process.c - bound Pods as real processes (flexqd's kubelet).
 *
 * What it is for: an admitted job's pods get bound to nodes by the core's
 * binder; on a flexqd whose nodes are this machine, each bound pod must
 * actually run. The runner turns the Pod's first container into a process
 * and reports its life back to the engine (fq_engine_pod_update), which the
 * job controllers turn into job status.
 *
 * How a pod starts (fq_runner_start_pod), everything prepared before fork:
 *   1. the pod directory <data>/pods/<ns>/<name>/ and its log file (opened
 *      O_APPEND, close-on-exec); the child's stdout and stderr are a pipe
 *      to the log pump (logpump.c: one process for all pods), which keeps
 *      the file under the cap on every write;
 *   2. volumes: ConfigMap keys written as files under volumes/<volume>/,
 *      emptyDir as an empty directory, hostPath as is; a missing ConfigMap
 *      leaves the pod waiting (retried by fq_runner_poll), as the kubelet
 *      waits with FailedMount;
 *   3. env: a small fixed base (PATH, HOME = the pod's directory, LANG;
 *      nothing of flexqd's own environment), the container's env with
 *      Kubernetes' $(VAR) expansion and fieldRef values, then flexq's own
 *      (PYTHONPATH with the training helper, PYTHONUNBUFFERED, FLEXQ_*,
 *      CUDA_VISIBLE_DEVICES when GPUs are handed out);
 *   4. argv: command + args (args alone when there is no command, as for an
 *      image without ENTRYPOINT; neither: `python3 -m flexq.node`, flexq's
 *      stand-in for a Ray node image), $(VAR)-expanded; never a shell;
 *   5. preflight: argv[0] is looked up the way execvp would (PATH of the
 *      pod's env, volume paths mapped to the host); not found or not
 *      executable -> Failed/ContainerCannotRun without forking;
 *   6. cgroups: a memory / cpu cgroup with the container's limits when the
 *      machine lets flexqd write them (v2 memory.max + cpu.max, else v1
 *      memory.limit_in_bytes + cpu.cfs_quota_us), else limits are recorded
 *      and reported as not enforced in the pod's log;
 *   7. the sandbox (sandbox.c, cgroup.c; docs/runtime.md "Isolation"): the
 *      pod's user (flexq-pod, or runAsUser/runAsGroup when --allow-run-
 *      as-user), its directory made sticky and world-writable, a cgroup
 *      v2 directory of its own for killing the whole tree;
 *   8. fork; the child makes its own process group, sets PDEATHSIG, joins
 *      the cgroups, redirects stdio and execs either bubblewrap (which
 *      makes the namespaces, loads the seccomp filter and runs setpriv to
 *      become the pod user with no capabilities) or, after its own
 *      namespace setup, fq_sandbox_enter (user, no capabilities,
 *      no_new_privs, seccomp, rlimits) and the command. An exec failure
 *      reaches the parent through a close-on-exec pipe and becomes
 *      ContainerCannotRun too.
 *
 * Mounts. As root flexqd makes each pod's namespaces itself (unshare
 * mode: mount, UTS and pid namespaces, pod_init.c as pid 1; ns_setup).
 * Otherwise, with bubblewrap (probed once at start, with the pod user and
 * a pid namespace) every pod gets a tmpfs root
 * with every top-level entry of the host's / bound back in place, /proc,
 * /dev and /sys, then each volume bound at its mountPath, then a tmpfs over
 * the data directory with only the pod's own directory bound back (a Ray
 * node's: its namespace's directory read-only too) and /dev/null over the
 * tokens and config files: the tutorial's
 * ConfigMap appears at /app/train.py while the host has no /app. The
 * unshare mode builds the same (in place, without the tmpfs root and
 * pivot_root, when every target exists on the host). A target whose parent
 * exists on the host but which does not itself exist cannot be created
 * without touching the host; such a mount and every mount on a machine
 * where neither works use the rewrite fallback: argv words, env
 * values and workingDir that start with the mountPath are rewritten to the
 * volume's host directory, FLEXQ_VOLUME_REWRITE lists the mapping, and the
 * pod's log says so on its first line. bwrap also gets a hosts file that
 * maps the pod's rendezvous names (TPU_WORKER_HOSTNAMES, MASTER_ADDR,
 * JAX_COORDINATOR_ADDRESS' host, the pod's hostname) to 127.0.0.1; the
 * rewrite fallback replaces those names by 127.0.0.1 in the env instead.
 *
 * A pod's process, as the runner tracks it:
 *
 *              start_pod                 exit (SIGCHLD, reaped)
 *   (bound) -------------> RUNNING -----------------------------> gone
 *      |                      |                  ^     reported Succeeded
 *      | preflight fails      | stop_pod:        |     (exit 0) or Failed
 *      v                      v SIGTERM to group | (Error / OOMKilled /
 *   reported Failed       TERMINATING ------------+  ContainerCannotRun)
 *   ContainerCannotRun        | grace over: SIGKILL to group
 *
 * Invariants:
 *   1. Every process the runner forks is in its own process group (pgid ==
 *      pid); stopping a pod signals the whole group; its end, or SIGKILL
 *      after the grace period, kills its cgroup (setsid children too).
 *   2. Only pids in the table are reaped (waitpid(pid, WNOHANG)), so the
 *      exec provider's and other children are never stolen.
 *   3. A pod with restartPolicy Never runs at most once, across flexqd
 *      restarts too: a bound pod without a process here and without an
 *      exit seen here whose log exists was started by an earlier flexqd
 *      (lost_pod); it is reported Failed (ControlPlaneRestarted), its
 *      process (containerID: boot id, pid, start time) killed if it still
 *      runs. OnFailure and Always pods are started again.
 *   4. Every descriptor the runner opens is O_CLOEXEC; the child keeps only
 *      0, 1, 2.
 *
 * What it does not do: pull images (the image is recorded, pods run on the
 * host's software), run more than the first container, restart containers
 * (restartPolicy is the job controllers' business: they create new pods),
 * readiness probes (a running process is ready), network namespaces (pods
 * share the host's network; ports must be free on this machine), re-adopt
 * processes of an earlier flexqd (they die with it).
 */
#include "runner/internal.h"
#include "runner/logpump.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/fs.h> /* FS_IOC_GETFLAGS, FS_TOPDIR_FL */
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "runner/cgroup.h"
#include "runner/pod_init.h"
#include "runner/sandbox.h"

extern char **environ;

/* ------------------------------------------------------------------ */
/* the runner                                                           */

void fq_runner_config_init(struct fq_runner_config *c)
{
    memset(c, 0, sizeof(*c));
    c->log_max_bytes = 10u << 20;
    c->grace_ms = 30000;
}

char *fq_runner_pod_dir(const char *data_dir, const char *ns, const char *name)
{
    return fq_xasprintf("%s/pods/%s/%s", data_dir, ns && *ns ? ns : "_", name);
}

void rn_proc_release(struct proc *p)
{
    if (p->has_pump)
        close(p->pump_done);
    p->has_pump = false;
    free(p->mjob);
    free(p->ns);
    free(p->name);
    free(p->uid);
    free(p->dir);
    free(p->cg_mem);
    free(p->cg_cpu);
    free(p->cg_kill);
}

static struct proc *find_proc(const struct fq_runner *r, const char *ns,
                              const char *name)
{
    for (size_t i = 0; i < r->nprocs; i++)
        if (!strcmp(r->procs[i].ns, ns) && !strcmp(r->procs[i].name, name))
            return &r->procs[i];
    return NULL;
}

size_t fq_runner_running(const struct fq_runner *r)
{
    return r->nprocs;
}

pid_t fq_runner_pod_pid(const struct fq_runner *r, const char *ns,
                        const char *name)
{
    const struct proc *p = find_proc(r, ns ? ns : "", name);
    return p ? p->pid : -1;
}

enum fq_runner_mounts fq_runner_mount_mode(const struct fq_runner *r)
{
    return r->mounts;
}

enum fq_runner_cgroups fq_runner_cgroup_mode(const struct fq_runner *r)
{
    return r->cgroups;
}

void fq_runner_caps(const struct fq_runner *r, struct fq_buf *out)
{
    fq_buf_printf(out, "mounts: %s (%s)\n",
                  r->mounts == FQ_MOUNTS_BWRAP   ? "bubblewrap" :
                  r->mounts == FQ_MOUNTS_UNSHARE ? "unshare" :
                                                   "rewrite fallback",
                  r->bwrap_note ? r->bwrap_note : "");
    fq_buf_printf(out, "limits: %s (%s)\n",
                  r->cgroups == FQ_CGROUPS_V2 ? "cgroup v2" :
                  r->cgroups == FQ_CGROUPS_V1 ? "cgroup v1" :
                                                "not enforced",
                  r->cg_note ? r->cg_note : "");
    fq_buf_printf(out, "gpus: %d\n", r->cfg.gpus);
    fq_buf_printf(out,
                  "sandbox: %s; no capabilities, no_new_privs, seccomp %s, "
                  "RLIMIT_NPROC %ld, RLIMIT_NOFILE %ld; %s\n",
                  r->sb_note ? r->sb_note : "",
                  r->sb.filter_len ? "filter" : "not on this architecture",
                  r->sb.max_procs, r->sb.max_files,
                  r->mounts == FQ_MOUNTS_BWRAP ?
                      "own pid namespace (bubblewrap), data directory hidden" :
                  r->mounts == FQ_MOUNTS_UNSHARE && r->pidns_ok ?
                      "own pid namespace (pod_init), data directory hidden" :
                  r->mounts == FQ_MOUNTS_UNSHARE ?
                      "host pid namespace, data directory hidden" :
                      "no namespaces: the data directory is protected by "
                      "permissions only");
    bool own_pidns = r->mounts == FQ_MOUNTS_BWRAP ||
                     (r->mounts == FQ_MOUNTS_UNSHARE && r->pidns_ok);
    fq_buf_printf(out, "kill: %s\n",
                  own_pidns ? "whole process tree (the pod's pid namespace)" :
                  r->cg_kill_root ? "whole process tree (cgroup v2)" :
                                    "process group only (no pid namespace, no "
                                    "writable cgroup v2)");
    if (r->cg_kill_note && !own_pidns)
        fq_buf_printf(out, "  (%s)\n", r->cg_kill_note);
}

/* ------------------------------------------------------------------ */
/* reporting                                                            */

static void report(struct fq_runner *r, const char *ns, const char *name,
                   const char *phase, bool ready, int code, const char *reason,
                   const char *msg, int64_t now_ms)
{
    struct fq_pod_report rep = {phase, ready, code, reason, msg};
    /* A pod deleted meanwhile is ENOTFOUND: nothing left to tell. */
    fq_engine_pod_update(r->engine, ns, name, &rep, now_ms, NULL);
}

/* Appends a line to the pod's log, for the runner's own notes. */
static void log_note(int fd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void log_note(int fd, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
}

/*
 * pod.json and status.json are read only by the training helper, about
 * the pods of a Ray cluster (the driver finds the head's volumes and the
 * workers' labels in pod.json and a crashed worker's end in status.json).
 * Other pods get neither: each file is an inode created per pod, which is
 * what a short job costs most on the file system.
 */
static bool wants_peer_files(const struct fq_value *pod)
{
    return fq_map_get(fq_meta_labels(pod), "ray.io/cluster") != NULL;
}

/* status.json's text (returns owned). `whole`: the log pump has written
 * all the pod wrote ("logComplete"), so its log can be read to the end. */
static char *status_text(const char *phase, int code, const char *reason,
                         const char *msg, bool whole)
{
    struct fq_value *s = fq_value_map();
    fq_map_set(s, "phase", fq_value_str(phase));
    fq_map_set(s, "exitCode", fq_value_int(code));
    fq_map_set(s, "reason", fq_value_str(reason ? reason : ""));
    fq_map_set(s, "message", fq_value_str(msg ? msg : ""));
    fq_map_set(s, "logComplete", fq_value_bool(whole));
    char *text = fq_json_dumps(s, FQ_JSON_COMPACT);
    fq_value_free(s);
    return text;
}

static void put_status(const char *dir, const char *text)
{
    char *path = fq_xasprintf("%s/status.json", dir);
    rn_write_file(path, text, strlen(text));
    free(path);
}

static void write_status(const char *dir, const char *phase, int code,
                         const char *reason, const char *msg)
{
    char *text = status_text(phase, code, reason, msg, true);
    put_status(dir, text);
    free(text);
}

/*
 * Metrics to the job's status. The training helper appends JSON lines to
 * the pod's metrics.jsonl; the last rank-0 "report" (a worker's) or
 * "result" (the driver's) becomes status.metrics of the RayJob or Job the
 * pod runs for, so `flexq get -o yaml`, describe and the API show it.
 */
static void metrics_target(const struct fq_value *pod, struct proc *p)
{
    const struct fq_value *l = fq_meta_labels(pod);
    const char *crd =
        fq_value_as_str(fq_map_get(l, "ray.io/originated-from-crd"));
    const char *cr =
        fq_value_as_str(fq_map_get(l, "ray.io/originated-from-cr-name"));
    const char *job =
        fq_value_as_str(fq_map_get(l, "batch.kubernetes.io/job-name"));
    if (!job)
        job = fq_value_as_str(fq_map_get(l, "job-name"));
    p->mkind = FQ_KIND_NONE;
    if (crd && cr && !strcmp(crd, "RayJob")) {
        p->mkind = FQ_KIND_RAYJOB;
        p->mjob = fq_xstrdup(cr);
    } else if (job) {
        /* a RayJob's submitter Job carries the RayJob's name */
        const struct fq_value *env = fq_value_path(
            fq_seq_at(fq_value_path(pod, FQ_POD_CONTAINERS), 0), "env");
        bool submitter = false;
        for (size_t i = 0; i < fq_value_len(env); i++)
            submitter |=
                !strcmp(fq_value_path_str(fq_seq_at(env, i), "name", ""),
                        "FLEXQ_RAYJOB");
        p->mkind = submitter ? FQ_KIND_RAYJOB : FQ_KIND_JOB;
        p->mjob = fq_xstrdup(job);
    }
}

static void collect_metrics(struct fq_runner *r, struct proc *p)
{
    if (p->mkind == FQ_KIND_NONE)
        return;
    char *path = fq_xasprintf("%s/metrics.jsonl", p->dir);
    /* the pod's own file: never a link out of its directory */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    free(path);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size <= p->metrics_off ||
        st.st_size - p->metrics_off > (8 << 20)) {
        close(fd);
        return;
    }
    size_t want = (size_t)(st.st_size - p->metrics_off);
    char *buf = fq_xmalloc(want + 1);
    ssize_t n = pread(fd, buf, want, p->metrics_off);
    close(fd);
    if (n <= 0) {
        free(buf);
        return;
    }
    buf[n] = '\0';
    char *end = strrchr(buf, '\n');
    if (!end) {
        free(buf);
        return;
    }
    p->metrics_off += (end - buf) + 1;
    *end = '\0';
    struct fq_value *last = NULL;
    struct fq_limits lim = fq_limits_default();
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        struct fq_value *ev = NULL;
        if (fq_json_parse(line, strlen(line), NULL, &lim, &ev, NULL) != 0)
            continue;
        const char *kind = fq_value_path_str(ev, "event", "");
        const struct fq_value *m = fq_map_get(ev, "metrics");
        if (m && m->type == FQ_V_MAP &&
            (!strcmp(kind, "result") ||
             (!strcmp(kind, "report") &&
              fq_value_path_int(ev, "rank", -1) == 0))) {
            fq_value_free(last);
            last = fq_value_clone(m);
        }
        fq_value_free(ev);
    }
    free(buf);
    if (!last)
        return;
    struct fq_objstore *s = fq_engine_store(r->engine);
    struct fq_value *o = fq_objstore_edit(s, p->mkind, p->ns, p->mjob);
    if (!o) {
        fq_value_free(last);
        return;
    }
    fq_map_set(fq_map_ensure_map(o, "status"), "metrics", last);
    fq_objstore_update(s, o, true, NULL, NULL, NULL);
}

/*
 * Restart backoff, the kubelet's CrashLoopBackOff in small: a pod that the
 * job controller keeps Running after a failure (restartPolicy OnFailure)
 * is started again after 1 s, 2 s, 4 s ... at most 30 s.
 */
static struct exited *find_exited(struct fq_runner *r, const char *ns,
                                  const char *name)
{
    for (size_t i = 0; i < r->nexited; i++)
        if (!strcmp(r->exited[i].ns, ns) && !strcmp(r->exited[i].name, name))
            return &r->exited[i];
    return NULL;
}

static bool restart_due(struct fq_runner *r, const char *ns, const char *name,
                        int64_t now_ms)
{
    struct exited *x = find_exited(r, ns, name);
    if (!x)
        return true; /* never ran here: lost_pod decided it may run */
    int64_t delay = 1000;
    for (int i = 1; i < x->count && delay < 30000; i++)
        delay *= 2;
    if (delay > 30000)
        delay = 30000;
    return now_ms >= x->at_ms + delay;
}

static void note_exit(struct fq_runner *r, const char *ns, const char *name,
                      int64_t now_ms)
{
    struct exited *x = find_exited(r, ns, name);
    if (!x) {
        if (r->nexited >= 1024) { /* forget the oldest half */
            for (size_t i = 0; i < 512; i++) {
                free(r->exited[i].ns);
                free(r->exited[i].name);
            }
            memmove(r->exited, r->exited + 512,
                    (r->nexited - 512) * sizeof(*r->exited));
            r->nexited -= 512;
        }
        FQ_GROW(r->exited, r->excap, r->nexited + 1);
        x = &r->exited[r->nexited++];
        x->ns = fq_xstrdup(ns);
        x->name = fq_xstrdup(name);
        x->count = 0;
    }
    x->count++;
    x->at_ms = now_ms;
}

static bool terminal_phase(const char *ph)
{
    return ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"));
}

/*
 * A pod an earlier flexqd started: no process of this runner, no exit
 * seen here, but its log exists (the runner creates it just before it
 * forks, and nothing else does). Its process died with that flexqd
 * (PR_SET_PDEATHSIG; bubblewrap's pid namespace), or is killed now: the
 * pid and start time in status.containerStatuses[0].containerID say
 * which process it was, and the orphaned cgroups went at start. With
 * restartPolicy Never the pod is reported Failed and never started
 * again; OnFailure and Always start it again, as the kubelet restarts a
 * container. Returns true when the pod must not be started.
 */
static bool lost_pod(struct fq_runner *r, const struct fq_value *pod,
                     const char *ns, const char *name, const char *dir,
                     int64_t now_ms)
{
    if (find_exited(r, ns, name))
        return false;
    char *logp = fq_xasprintf("%s/log", dir);
    struct stat st;
    bool started = lstat(logp, &st) == 0;
    free(logp);
    if (!started)
        return false;
    const char *cid = fq_value_as_str(fq_value_path(
        fq_seq_at(fq_value_path(pod, FQ_POD_CONTAINER_STATUSES), 0),
        "containerID"));
    pid_t pid = fq_sandbox_container_pid(cid, r->boot);
    if (pid > 1) {
        kill(-pid, SIGKILL); /* its process group, then itself */
        kill(pid, SIGKILL);
    }
    const char *policy =
        fq_value_path_str(pod, FQ_POD_RESTART_POLICY, "Always");
    if (strcmp(policy, "Never"))
        return false;
    report(r, ns, name, "Failed", false, 137, "ControlPlaneRestarted",
           "flexqd restarted while the pod ran; its process was lost and "
           "restartPolicy Never does not allow running it again",
           now_ms);
    return true;
}

/* Puts "flexq://<boot id>/<pid>/<start time>" of the process just
 * started into status.containerStatuses[0].containerID, where Kubernetes
 * keeps the runtime's id of a container. */
static void record_container_id(struct fq_runner *r, const char *ns,
                                const char *name, pid_t pid)
{
    struct fq_objstore *s = fq_engine_store(r->engine);
    struct fq_value *o = fq_objstore_edit_in_place(s, FQ_KIND_POD, ns, name);
    struct fq_value *c =
        fq_seq_at(fq_value_path(o, FQ_POD_CONTAINER_STATUSES), 0);
    if (!c || c->type != FQ_V_MAP)
        return;
    char *cid = fq_sandbox_container_id(r->boot, pid);
    fq_map_set(c, "containerID", fq_value_str(cid));
    free(cid);
    fq_objstore_edited(s, FQ_KIND_POD, ns, name, false);
}

int fq_runner_start_pod(struct fq_runner *r, const struct fq_value *pod,
                        int64_t now_ms, struct fq_err *err)
{
    const char *ns = fq_meta_namespace(pod);
    const char *name = fq_meta_name(pod);
    const char *node = fq_value_path_str(pod, FQ_POD_NODE_NAME, "");
    const char *phase = fq_value_path_str(pod, FQ_POD_PHASE, "Pending");
    if (!*name || !*node || terminal_phase(phase))
        return 0;
    if (r->node_name && strcmp(node, r->node_name))
        return 0;
    if (fq_value_path(pod, FQ_META_DELETED))
        return 0;
    if (find_proc(r, ns, name))
        return 0;
    if (!strcmp(phase, "Running") && !restart_due(r, ns, name, now_ms))
        return 0; /* restarted by fq_runner_poll once the backoff is over */

    char *dir = fq_runner_pod_dir(r->data_dir, ns, name);
    if (lost_pod(r, pod, ns, name, dir, now_ms)) {
        free(dir);
        return 0;
    }
    struct spec s;
    memset(&s, 0, sizeof(s));
    int ret = 0, logfd = -1;
    char *exec_path = NULL;
    char *nsdir = NULL, *mask = NULL;
    struct strv bargv = {0}, iargv = {0};
    if (rn_make_pod_dir(dir) != 0) {
        ret = fq_err_set(err, FQ_EIO, "cannot create %s: %s", dir,
                         strerror(errno));
        goto out;
    }
    bool peer = wants_peer_files(pod);
    if (rn_build_spec(r, pod, ns, name, dir, &s) != 0) {
        if (!s.waiting) {
            if (peer)
                write_status(dir, "Failed", 128, "ContainerCannotRun", s.why);
            report(r, ns, name, "Failed", false, 128, "ContainerCannotRun",
                   s.why, now_ms);
        } else {
            report(r, ns, name, "Pending", false, 0,
                   s.wait_reason ? s.wait_reason : "ContainerCreating", s.why,
                   now_ms);
        }
        goto out; /* waiting: fq_runner_poll retries */
    }
    if (peer) {
        char *pj = fq_json_dumps(pod, FQ_JSON_COMPACT);
        char *pjp = fq_xasprintf("%s/pod.json", dir);
        rn_write_file(pjp, pj, strlen(pj));
        free(pjp);
        free(pj);
    }
    char *logp = fq_xasprintf("%s/log", dir);
    logfd = open(logp,
                 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
                     O_NONBLOCK,
                 0644);
    free(logp);
    struct stat lst;
    if (logfd >= 0 && (fstat(logfd, &lst) != 0 || !S_ISREG(lst.st_mode))) {
        close(logfd);
        logfd = -1;
        errno = EINVAL;
    }
    if (logfd < 0) {
        ret = fq_err_set(err, FQ_EIO, "cannot open the log of %s/%s: %s", ns,
                         name, strerror(errno));
        goto out;
    }
    exec_path = rn_preflight(&s);
    if (!exec_path && !strcmp(s.argv.v[0], "python")) {
        /* Images have `python`; many hosts only `python3`. */
        char why[sizeof(s.why)];
        memcpy(why, s.why, sizeof(why));
        free(s.argv.v[0]);
        s.argv.v[0] = fq_xstrdup("python3");
        exec_path = rn_preflight(&s);
        if (exec_path)
            log_note(logfd, "flexq: no `python` on this host's PATH; "
                            "running python3");
        else
            memcpy(s.why, why, sizeof(why));
    }
    if (!exec_path) {
        log_note(logfd, "flexq: %s", s.why);
        if (peer)
            write_status(dir, "Failed", 128, "ContainerCannotRun", s.why);
        report(r, ns, name, "Failed", false, 128, "ContainerCannotRun", s.why,
               now_ms);
        goto out;
    }

    if (rn_rendezvous_port_taken(&s)) {
        log_note(logfd, "flexq: %s", s.why);
        if (peer)
            write_status(dir, "Failed", 128, "ContainerCannotRun", s.why);
        report(r, ns, name, "Failed", false, 128, "ContainerCannotRun", s.why,
               now_ms);
        goto out;
    }

    /* who it runs as: flexqd's pod user, or runAsUser / runAsGroup when
     * the administrator allows them */
    struct fq_sandbox sbv = r->sb;

    struct fq_sandbox *sb = &sbv;
    {
        char why[300];
        if (fq_sandbox_pod_ids(pod, r->cfg.allow_run_as_user, r->sb.uid,
                               r->sb.gid, &sb->uid, &sb->gid, why,
                               sizeof(why)) != 0) {
            log_note(logfd, "flexq: %s", why);
            report(r, ns, name, "Failed", false, 128, "ContainerCannotRun", why,
                   now_ms);
            goto out;
        }
    }

    if (sb->change_ids) {
        /* The pod may create files in its own directory (sticky, like
         * /tmp) but not replace flexqd's there (log, volumes/, hosts):
         * flexqd, root, writes into it again when the pod restarts. Its
         * emptyDir volumes are its own. */
        if (chmod(dir, 01777) != 0)
            log_note(logfd, "flexq: cannot open %s to the pod's user: %s", dir,
                     strerror(errno));
        for (size_t i = 0; i < s.nmounts; i++)
            if (s.mounts[i].empty_dir &&
                chown(s.mounts[i].src, sb->uid, sb->gid) != 0)
                log_note(logfd, "flexq: cannot hand %s to uid %ld",
                         s.mounts[i].src, (long)sb->uid);
            else if (s.mounts[i].secret)
                rn_chown_tree(s.mounts[i].src, sb->uid, sb->gid);
    }

    struct proc p;
    memset(&p, 0, sizeof(p));
    p.ns = fq_xstrdup(ns);
    p.name = fq_xstrdup(name);
    p.uid = fq_xstrdup(fq_meta_uid(pod));
    p.dir = fq_xstrdup(dir);
    p.peer_files = peer;
    p.started_ms = now_ms;
    metrics_target(pod, &p);

    /* GPUs are handed out only when flexqd knows this machine's (the
     * local provider); with simulated nodes a GPU request is the model's
     * business and the process runs on whatever the host has. */
    if (r->cfg.gpus > 0) {
        struct fq_buf list = FQ_BUF_INIT;
        if (rn_gpu_take(r, s.gpus, &p.gpus, &list) != 0) {
            char msg[160];
            snprintf(msg, sizeof(msg),
                     "%lld GPUs requested, fewer are free on this machine",
                     (long long)s.gpus);
            log_note(logfd, "flexq: %s", msg);
            report(r, ns, name, "Failed", false, 128,
                   "UnexpectedAdmissionError", msg, now_ms);
            fq_buf_release(&list);
            rn_proc_release(&p);
            goto out;
        }
        rn_env_set(&s.env, "CUDA_VISIBLE_DEVICES", fq_buf_str(&list));
        fq_buf_release(&list);
    }
    const char *note = rn_setup_cgroups(r, &p, &s);
    if (note)
        log_note(logfd, "%s", note);
    /* pid 1 of the pod's own pid namespace is pod_init.c (unshare mode)
     * or bubblewrap: its end kills the whole tree. Otherwise a cgroup of
     * its own does (joining one costs a few ms: the kernel waits for an
     * RCU grace period, with flexqd suspended). */
    bool pidns =
        r->mounts == FQ_MOUNTS_UNSHARE && r->pidns_ok && r->self_fd >= 0;
    p.pidns = pidns;
    if (r->cg_kill_root && !pidns && r->mounts != FQ_MOUNTS_BWRAP) {
        char *leaf = fq_xasprintf("%s/%s_%s_%s", r->cg_kill_root, p.ns, p.name,
                                  p.uid ? p.uid : "");
        if (p.cg_mem && !strcmp(leaf, p.cg_mem))
            p.cg_kill = leaf;
        else if (mkdir(leaf, 0755) == 0 || errno == EEXIST)
            p.cg_kill = leaf;
        else
            free(leaf);
    }
    for (size_t i = 0; i < s.nmounts; i++)
        if (s.mounts[i].rewrite)
            log_note(logfd,
                     "flexq: no private mount namespace for %s (%s); the "
                     "volume is at %s and paths in argv, env and workingDir "
                     "are rewritten (FLEXQ_VOLUME_REWRITE)",
                     s.mounts[i].dst,
                     r->mounts != FQ_MOUNTS_REWRITE ?
                         "its parent exists on the host" :
                         "no bubblewrap and no unshare here",
                     s.mounts[i].src);

    char *const *argv = s.argv.v;
    const char *path_to_exec = exec_path;
    /* Every pod gets a namespace where the machine allows one: it is what
     * hides the data directory, other pods and the tokens file. */
    bool needs_ns = r->mounts != FQ_MOUNTS_REWRITE;
    bool bw = r->mounts == FQ_MOUNTS_BWRAP && needs_ns;
    p.bwrap = bw;
    int scfd = -1;
    /* The pods of a Ray cluster read each other's pod.json, metrics,
     * logs and status.json (python/flexq/train.py, submit.py): they see
     * their namespace's pods directory, read-only. Other pods see only
     * their own directory. */
    mask = fq_sandbox_hide_root(r->data_dir, sb->change_ids, sb->uid, sb->gid);
    if (peer || rn_env_get(&s.env, "FLEXQ_RAY_CLUSTER")) {
        nsdir = fq_xstrdup(dir);
        *strrchr(nsdir, '/') = '\0';
    }
    if (bw) {
        rn_write_hosts(dir, &s);
        scfd = fq_sandbox_filter_pipe(sb);
        if (scfd >= 0 && scfd < 3) { /* never one the child dup2s over */
            int hi = fcntl(scfd, F_DUPFD_CLOEXEC, 3);
            close(scfd);
            scfd = hi;
        }
        rn_strv_pushs(&bargv, r->bwrap);
        rn_bwrap_root_args(&bargv, s.mounts, s.nmounts);
        rn_bwrap_sandbox_args(r, &bargv, mask, dir, nsdir, scfd);
        if (rn_path_exists("/etc/hosts")) {
            char *hp = fq_xasprintf("%s/hosts", dir);
            rn_strv_pushs(&bargv, "--ro-bind");
            rn_strv_pushs(&bargv, hp);
            rn_strv_pushs(&bargv, "/etc/hosts");
            free(hp);
        }
        rn_strv_pushs(&bargv, "--unshare-uts");
        rn_strv_pushs(&bargv, "--hostname");
        rn_strv_pushs(&bargv, s.hostname);
        rn_strv_pushs(&bargv, "--chdir");
        rn_strv_pushs(&bargv, s.cwd);
        rn_strv_pushs(&bargv, "--");
        rn_setpriv_args(r, &bargv, sb->uid, sb->gid);
        rn_strv_pushs(&bargv, exec_path);
        for (size_t i = 1; i < s.argv.n; i++)
            rn_strv_pushs(&bargv, s.argv.v[i]);
        argv = bargv.v;
        path_to_exec = r->bwrap;
    }

    struct nsplan plan;
    bool use_ns = r->mounts == FQ_MOUNTS_UNSHARE && needs_ns;
    if (use_ns) {
        rn_write_hosts(dir, &s);
        /* the host's tree itself when every volume's target exists: no
         * tmpfs root and no bind of each top-level entry (the cost of a
         * pod's start is flexqd's: it waits for the child to exec) */
        bool in_place = true;
        for (size_t i = 0; i < s.nmounts; i++)
            if (!s.mounts[i].rewrite && !rn_path_exists(s.mounts[i].dst))
                in_place = false;
        rn_nsplan_init(&plan, dir, s.mounts, s.nmounts, s.hostname, in_place);
        plan.data_dir = mask;
        plan.poddir = dir;
        plan.nsdir = nsdir;
        plan.hide = (const char *const *)r->hide;
        plan.new_proc = pidns;
    }
    if (pidns) { /* pod_init.c, then the command */
        rn_strv_pushs(&iargv, FQ_POD_INIT_ARGV0);
        rn_strv_pushs(&iargv, exec_path);
        for (size_t i = 1; i < s.argv.n; i++)
            rn_strv_pushs(&iargv, s.argv.v[i]);
        argv = iargv.v;
    }

    int ep[2];
    if (pipe2(ep, O_CLOEXEC) != 0) {
        ret = fq_err_set(err, FQ_EIO, "pipe: %s", strerror(errno));
        if (scfd >= 0)
            close(scfd);
        if (use_ns)
            rn_nsplan_release(&plan);
        rn_proc_release(&p);
        goto out;
    }
    /* stdout and stderr through the log pump (logpump.c), which keeps
     * the log under its cap on every write; without one, the file. */
    int pump_done = -1;
    int outfd = fq_logpump_start(&r->pump_ctl, dir, logfd, r->cfg.log_max_bytes,
                                 &pump_done);
    if (outfd < 0)
        log_note(logfd,
                 "flexq: no log pump (%s); the log is capped only "
                 "once a second",
                 strerror(errno));
    int child_out = outfd >= 0 ? outfd : logfd;
    struct child_args ca = {path_to_exec, argv,     s.env.v,
                            child_out,    ep[1],    ep[0],
                            s.cwd,        p.cg_mem, p.cg_cpu,
                            p.cg_kill,    bw,       use_ns ? &plan : NULL,
                            sb,           scfd,     pidns ? r->self_fd : -1,
                            pidns};
    pid_t pid = rn_spawn(r, &ca);
    if (outfd >= 0)
        close(outfd); /* the pump ends when the pod's tree closed it */
    if (scfd >= 0)
        close(scfd);
    if (pid < 0) {
        ret = fq_err_set(err, FQ_EIO, "fork: %s", strerror(errno));
        if (pump_done >= 0)
            close(pump_done);
        close(ep[0]);
        close(ep[1]);
        r->gpus_used &= ~p.gpus;
        if (use_ns)
            rn_nsplan_release(&plan);
        rn_proc_release(&p);
        goto out;
    }
    close(ep[1]);
    if (use_ns)
        rn_nsplan_release(&plan);
    setpgid(pid, pid); /* both sides, so no signal races the child's own */
    int child_errno = 0;
    ssize_t n;
    while ((n = read(ep[0], &child_errno, sizeof(child_errno))) < 0 &&
           errno == EINTR)
        ;
    close(ep[0]);
    p.pid = pid;
    p.has_pump = outfd >= 0;
    p.pump_done = pump_done;
    FQ_GROW(r->procs, r->cap, r->nprocs + 1);
    r->procs[r->nprocs++] = p;
    if (n == (ssize_t)sizeof(child_errno)) {
        /* exec failed: the child exits 127; SIGCHLD reaps it. */
        char msg[600];
        snprintf(msg, sizeof(msg), "exec: \"%s\": %s", s.argv.v[0],
                 strerror(child_errno));
        log_note(logfd, "flexq: %s", msg);
        if (peer)
            write_status(dir, "Failed", 128, "ContainerCannotRun", msg);
        report(r, ns, name, "Failed", false, 128, "ContainerCannotRun", msg,
               now_ms);
        r->procs[r->nprocs - 1].reported = true;
        goto out;
    }
    /* Running, with the process's pid and start time: a restarted flexqd
     * tells the process apart from a later one with the same pid; one
     * change of the pod, as a kubelet's status update carries both */
    struct fq_objstore *store = fq_engine_store(r->engine);
    fq_objstore_log_window(store);
    report(r, ns, name, "Running", true, 0, NULL, NULL, now_ms);
    record_container_id(r, ns, name, pid);
    fq_objstore_log_window_end(store);
out:
    if (logfd >= 0)
        close(logfd);
    free(nsdir);
    free(mask);
    rn_strv_release(&bargv);
    rn_strv_release(&iargv);
    free(exec_path);
    rn_spec_release(&s);
    free(dir);
    return ret;
}

/* Last line of a pod's log that starts with "bwrap:" within the tail. */
static bool bwrap_failure(const char *dir, char *out, size_t size)
{
    char *path = fq_xasprintf("%s/log", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return false;
    char buf[1024];
    off_t end = lseek(fd, 0, SEEK_END);
    off_t start =
        end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0;
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, start);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    char *hit = NULL;
    for (char *p = buf; (p = strstr(p, "bwrap: ")); p++)
        if (p == buf || p[-1] == '\n')
            hit = p;
    if (!hit)
        return false;
    size_t len = strcspn(hit, "\n");
    if (len >= size)
        len = size - 1; /* the message is cut, as a log line may be */
    memcpy(out, hit, len);
    out[len] = '\0';
    return true;
}

/* Kills what is left in a pod's cgroup and removes it; one whose
 * processes are still dying is retried by fq_runner_poll. */
static void drop_cgroup(struct fq_runner *r, const char *dir)
{
    if (dir && fq_cgroup_reap(dir) != 0 && r->stale_cg.n < 4096)
        rn_strv_pushs(&r->stale_cg, dir);
}

/* How long a pod's end waits for its log pump to write the last bytes. */
#define PUMP_DRAIN_MS 500

/*
 * The pod's processes are gone: wait (at most PUMP_DRAIN_MS) until its log
 * pump has written what was left in the pipe and let go of the pod, so
 * that the log is complete when the pod is reported ended. It takes
 * microseconds unless something outside the pod's tree still holds the
 * pipe (or the pump is slow to run). Returns -1 when the log is whole,
 * else the pump's done descriptor (owned by the caller), which reads
 * end-of-file once it is.
 */
static int pump_drained(struct proc *p)
{
    if (!p->has_pump)
        return -1;
    bool drained = false;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long long spent = (long long)(t.tv_sec - t0.tv_sec) * 1000 +
                          (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (spent >= PUMP_DRAIN_MS)
            break;
        struct pollfd pf = {p->pump_done, POLLIN, 0};
        int n = poll(&pf, 1, (int)(PUMP_DRAIN_MS - spent));
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            break; /* timed out */
        char c;
        if (n < 0 || read(p->pump_done, &c, 1) <= 0) {
            drained = true; /* end-of-file: the pump is done */
            break;
        }
    }
    int fd = p->pump_done;
    p->has_pump = false;
    if (drained) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Ray pods reported ended before their log was whole (most that wait). */
#define LATE_LOGS_MAX 1024

/* Keeps `done` (owned) and rewrites the pod's status.json with
 * logComplete true once it reads end-of-file (late_logs). */
static void late_add(struct fq_runner *r, int done, const char *dir,
                     const char *phase, int code, const char *reason,
                     const char *msg)
{
    struct stat st;
    if (r->nlate >= LATE_LOGS_MAX || stat(dir, &st) != 0) {
        close(done); /* the driver's own deadline covers it (train.py) */
        return;
    }
    if (r->nlate == r->late_cap) {
        r->late_cap = r->late_cap ? 2 * r->late_cap : 8;
        r->late = fq_xrealloc(r->late, r->late_cap * sizeof(*r->late));
    }
    struct rn_late_log *l = &r->late[r->nlate++];
    l->done = done;
    l->dir = fq_xstrdup(dir);
    l->dev = st.st_dev;
    l->ino = st.st_ino;
    l->status = status_text(phase, code, reason, msg, true);
}

void rn_late_log_release(struct rn_late_log *l)
{
    close(l->done);
    free(l->dir);
    free(l->status);
}

/* The pumps that have let go since: their pods' status.json says the log
 * is whole now (the same directory only: a pod of the same name made
 * since has its own). */
static void late_logs(struct fq_runner *r)
{
    for (size_t i = 0; i < r->nlate;) {
        struct rn_late_log *l = &r->late[i];
        struct pollfd pf = {l->done, POLLIN, 0};
        char c;
        if (poll(&pf, 1, 0) != 1 || read(l->done, &c, 1) > 0) {
            i++;
            continue;
        }
        struct stat st;
        if (stat(l->dir, &st) == 0 && st.st_dev == l->dev &&
            st.st_ino == l->ino)
            put_status(l->dir, l->status);
        rn_late_log_release(l);
        r->late[i] = r->late[--r->nlate];
    }
}

static void finish(struct fq_runner *r, size_t idx, int st, int64_t now_ms)
{
    collect_metrics(r, &r->procs[idx]);
    struct proc *p = &r->procs[idx];
    int code = WIFEXITED(st)   ? WEXITSTATUS(st) :
               WIFSIGNALED(st) ? 128 + WTERMSIG(st) :
                                 255;
    const char *phase = code == 0 ? "Succeeded" : "Failed";
    const char *reason = code == 0 ? "Completed" : "Error";
    char msg[600] = "";
    long ooms = rn_oom_kills(r, p);
    bool sigkill = (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) ||
                   ((p->bwrap || p->pidns) && code == 137);
    if (ooms > 0) {
        reason = "OOMKilled";
        snprintf(msg, sizeof(msg),
                 "the container exceeded its memory limit and was killed "
                 "(%ld OOM kill%s)",
                 ooms, ooms == 1 ? "" : "s");
    } else if (sigkill && !p->killed && !p->terminating) {
        /* No cgroup counter to ask: a SIGKILL flexq did not send is almost
         * always the kernel's OOM killer. */
        reason = p->cg_mem ? "Error" : "OOMKilled";
        snprintf(msg, sizeof(msg), "killed by SIGKILL not sent by flexq%s",
                 p->cg_mem ? "" : " (most likely the kernel's OOM killer)");
    } else if (p->bwrap && code == 1 &&
               bwrap_failure(p->dir, msg, sizeof(msg))) {
        reason = "ContainerCannotRun";
    } else if (p->terminating) {
        snprintf(msg, sizeof(msg), "stopped by flexq (exit code %d)", code);
    }
    /* the pod ends with its main process, as a container ends with its
     * pid 1: whatever it left behind (setsid or not) is killed */
    drop_cgroup(r, p->cg_kill);
    drop_cgroup(r, p->cg_mem);
    if (p->cg_cpu && (!p->cg_mem || strcmp(p->cg_cpu, p->cg_mem)))
        drop_cgroup(r, p->cg_cpu);
    r->gpus_used &= ~p->gpus;
    int late = pump_drained(p);
    /* After the drain: the training helper's driver reads a worker's log
     * to its end once status.json says the log is whole (written before,
     * a worker's last lines could still be in the pump's pipe when the
     * driver read them). A log not whole yet is said so, and said whole
     * once the pump lets go (late_logs). */
    if (!p->reported && p->peer_files) {
        char *text = status_text(phase, code, reason, msg, late < 0);
        put_status(p->dir, text);
        free(text);
        if (late >= 0)
            late_add(r, late, p->dir, phase, code, reason, msg);
        late = -1;
    }
    if (late >= 0)
        close(late);
    char *ns = p->ns, *name = p->name;
    bool reported = p->reported;
    bool remove = p->remove_dir;
    p->ns = p->name = NULL;
    rn_proc_release(p);
    r->procs[idx] = r->procs[--r->nprocs];
    note_exit(r, ns, name, now_ms);
    if (remove)
        rn_remove_pod_dir(r, ns, name);
    if (!reported)
        report(r, ns, name, phase, false, code, reason, *msg ? msg : NULL,
               now_ms);
    free(ns);
    free(name);
}

void fq_runner_on_sigchld(struct fq_runner *r, int64_t now_ms)
{
    for (size_t i = 0; i < r->nprocs;) {
        int st;
        pid_t w = waitpid(r->procs[i].pid, &st, WNOHANG);
        if (w == r->procs[i].pid || (w < 0 && errno == ECHILD)) {
            if (w < 0)
                st = 255 << 8;
            finish(r, i, st, now_ms);
            continue; /* finish moved the last entry into i */
        }
        i++;
    }
}

int fq_runner_stop_pod(struct fq_runner *r, const char *ns, const char *name,
                       int64_t now_ms)
{
    struct proc *p = find_proc(r, ns ? ns : "", name);
    if (!p)
        return FQ_ENOTFOUND;
    if (!p->terminating) {
        p->terminating = true;
        p->kill_at_ms = now_ms + r->cfg.grace_ms;
        kill(-p->pid, SIGTERM);
    }
    return 0;
}

void fq_runner_on_change(struct fq_runner *r, const struct fq_change *c,
                         int64_t now_ms)
{
    if (c->kind != FQ_KIND_POD)
        return;
    if (c->type == FQ_CHANGE_DELETED) {
        /* A deleted pod's files go with it, as the kubelet removes a
         * pod's logs and volumes: now, or once its process has ended. */
        struct proc *p = find_proc(r, c->ns, c->name);
        if (p) {
            p->remove_dir = true;
            fq_runner_stop_pod(r, c->ns, c->name, now_ms);
        } else {
            rn_remove_pod_dir(r, c->ns, c->name);
        }
        return;
    }
    if (!c->obj)
        return;
    if (fq_value_path(c->obj, FQ_META_DELETED)) {
        fq_runner_stop_pod(r, c->ns, c->name, now_ms);
        return;
    }
    /* A pod the core ended while its process runs (an activeDeadline, a
     * RayJob that finished or was stopped, a Job that failed): the process
     * goes too, as the kubelet kills the containers of a pod that was made
     * terminal. Its own exit reports nothing new: a terminal pod keeps the
     * status the core gave it. */
    if (terminal_phase(fq_value_path_str(c->obj, FQ_POD_PHASE, ""))) {
        fq_runner_stop_pod(r, c->ns, c->name, now_ms);
        return;
    }
    fq_runner_start_pod(r, c->obj, now_ms, NULL);
}

/* copytruncate: the child keeps writing through O_APPEND into the emptied
 * file; lines written between the copy and the truncate are lost, which
 * the note at the top of the new file admits. */
static void rotate_log(const struct fq_runner *r, const struct proc *p)
{
    char *path = fq_xasprintf("%s/log", p->dir);
    struct stat st;
    if (stat(path, &st) != 0 || (size_t)st.st_size <= r->cfg.log_max_bytes) {
        free(path);
        return;
    }
    char *old = fq_xasprintf("%s/log.1", p->dir);
    int in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    unlink(old); /* whatever the pod may have put there */
    int out =
        open(old, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (in >= 0 && out >= 0) {
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof(buf))) > 0)
            if (write(out, buf, (size_t)n) != n)
                break;
        if (truncate(path, 0) == 0) {
            int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
            if (fd >= 0) {
                log_note(fd,
                         "flexq: log rotated at %zu bytes; the previous part "
                         "is in log.1",
                         r->cfg.log_max_bytes);
                close(fd);
            }
        }
    }
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    free(old);
    free(path);
}

void fq_runner_poll(struct fq_runner *r, int64_t now_ms)
{
    fq_runner_on_sigchld(r, now_ms);
    late_logs(r);
    for (size_t i = 0; i < r->stale_cg.n;) {
        if (fq_cgroup_reap(r->stale_cg.v[i]) == 0) {
            free(r->stale_cg.v[i]);
            r->stale_cg.v[i] = r->stale_cg.v[--r->stale_cg.n];
            r->stale_cg.v[r->stale_cg.n] = NULL;
            continue;
        }
        i++;
    }
    for (size_t i = 0; i < r->nprocs; i++) {
        struct proc *p = &r->procs[i];
        if (p->terminating && !p->killed && now_ms >= p->kill_at_ms) {
            kill(-p->pid, SIGKILL);
            fq_cgroup_kill(p->cg_kill); /* setsid children too */
            p->killed = true;
        }
        rotate_log(r, p);
        collect_metrics(r, p);
    }
    /* Start bound pods not seen through changes (start-up, ConfigMaps that
     * appeared since). */
    struct fq_objstore *store = fq_engine_store(r->engine);
    const struct fq_object **pods = NULL;
    size_t n = fq_objstore_list(store, FQ_KIND_POD, NULL, &pods);
    /* Reports change the store (and may add Events), so borrowed pointers
     * do not survive a start: keep the keys and look each pod up again. */
    struct strv keys = {0};
    for (size_t i = 0; i < n; i++)
        if (*fq_value_path_str(pods[i]->obj, FQ_POD_NODE_NAME, "") &&
            !terminal_phase(
                fq_value_path_str(pods[i]->obj, FQ_POD_PHASE, "")) &&
            !find_proc(r, pods[i]->ns, pods[i]->name)) {
            rn_strv_pushs(&keys, pods[i]->ns);
            rn_strv_pushs(&keys, pods[i]->name);
        }
    free(pods);
    for (size_t i = 0; i + 1 < keys.n; i += 2) {
        const struct fq_object *o =
            fq_objstore_get(store, FQ_KIND_POD, keys.v[i], keys.v[i + 1]);
        if (o)
            fq_runner_start_pod(r, o->obj, now_ms, NULL);
    }
    rn_strv_release(&keys);
    r->scanned = true;
}
