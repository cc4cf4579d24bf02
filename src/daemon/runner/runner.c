/*
 * runner.c - bound Pods as real processes (flexqd's kubelet).
 *
 * What it is for: an admitted job's pods get bound to nodes by the core's
 * binder; on a flexqd whose nodes are this machine, each bound pod must
 * actually run. The runner turns the Pod's first container into a process
 * and reports its life back to the engine (fq_engine_pod_update), which the
 * job controllers turn into job status.
 *
 * How a pod starts (fq_runner_start_pod), everything prepared before fork:
 *   1. the pod directory <data>/pods/<ns>/<name>/ and its log file (opened
 *      O_APPEND, close-on-exec; the child dup2s it onto stdout and stderr);
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
#define _GNU_SOURCE /* pipe2 */
#include "runner/runner.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/fs.h> /* FS_IOC_GETFLAGS, FS_TOPDIR_FL */
#include <netinet/in.h>
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
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/quantity.h"
#include "runner/cgroup.h"
#include "runner/pod_init.h"
#include "runner/sandbox.h"

extern char **environ;

#define DEFAULT_PATH \
 "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define MAX_ARGS 4096
#define MAX_ENV  4096
#define MAX_GPUS 64

/* ------------------------------------------------------------------ */
/* small string vectors                                                 */

struct strv {
    char **v; /* owned strings, NULL-terminated when n < cap */
    size_t n, cap;
};

static void strv_push(struct strv *s, char *owned)
{
    FQ_GROW(s->v, s->cap, s->n + 2);
    s->v[s->n++] = owned;
    s->v[s->n] = NULL;
}

static void strv_pushs(struct strv *s, const char *str)
{
    strv_push(s, fq_xstrdup(str));
}

static void strv_release(struct strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

/* env as "K=V" strings; set replaces in place so that order is kept. */
static const char *env_get(const struct strv *env, const char *k)
{
    size_t kl = strlen(k);
    for (size_t i = 0; i < env->n; i++)
        if (!strncmp(env->v[i], k, kl) && env->v[i][kl] == '=')
            return env->v[i] + kl + 1;
    return NULL;
}

static void env_set(struct strv *env, const char *k, const char *v)
{
    size_t kl = strlen(k);
    char *kv = fq_xasprintf("%s=%s", k, v);
    for (size_t i = 0; i < env->n; i++)
        if (!strncmp(env->v[i], k, kl) && env->v[i][kl] == '=') {
            free(env->v[i]);
            env->v[i] = kv;
            return;
        }
    strv_push(env, kv);
}

/*
 * Kubernetes' $(VAR) expansion: $(NAME) is replaced by NAME's value when
 * defined in env, kept literally otherwise; $$ is a literal $. Returns
 * owned.
 */
static char *expand(const char *s, const struct strv *env)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "");
    for (const char *p = s; *p;) {
        if (p[0] == '$' && p[1] == '$') {
            fq_buf_putc(&b, '$');
            p += 2;
            continue;
        }
        if (p[0] == '$' && p[1] == '(') {
            const char *end = strchr(p + 2, ')');
            if (end) {
                char *name = fq_xstrndup(p + 2, (size_t)(end - p - 2));
                const char *v = env_get(env, name);
                free(name);
                if (v) {
                    fq_buf_puts(&b, v);
                    p = end + 1;
                    continue;
                }
            }
        }
        fq_buf_putc(&b, *p++);
    }
    return fq_buf_detach(&b);
}

/* ------------------------------------------------------------------ */
/* files                                                                */

static int mkdir_p(const char *path, mode_t mode)
{
    /* the common case: only the last component is new */
    if (mkdir(path, mode) == 0 || errno == EEXIST)
        return 0;
    if (errno != ENOENT)
        return -1;
    char tmp[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(tmp))
        return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, mode) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, mode) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

/*
 * Marks a namespace's pods directory as the top of a hierarchy for ext4's
 * Orlov allocator (chattr +T), so that each pod directory, and the log
 * inside it, is placed in a block group of its own choosing instead of
 * the parent's. Why it matters: ext4 without a journal skips inodes
 * deleted in the last minutes one by one when it allocates, and the
 * parent's group is where every earlier pod (and every other temporary
 * file under the same parent) was deleted. On the development machines
 * that made a pod's directory and log cost about 1.2 ms; with the flag
 * 0.13 ms. Other file systems refuse the ioctl, which is fine.
 */
static void set_topdir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    int flags = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_TOPDIR_FL)) {
        flags |= FS_TOPDIR_FL;
        if (ioctl(fd, FS_IOC_SETFLAGS, &flags) != 0) {
            /* not ext2/3/4, or not ours: the default placement */
        }
    }
    close(fd);
}

/* <data>/pods/<ns>/<name>: one mkdir when the namespace's directory
 * exists; otherwise that is made first, marked with set_topdir. */
static int make_pod_dir(const char *dir)
{
    if (mkdir(dir, 0755) == 0 || errno == EEXIST)
        return 0;
    if (errno != ENOENT)
        return -1;
    char *parent = fq_xstrdup(dir);
    char *slash = strrchr(parent, '/');
    int rc = -1;
    if (slash && slash != parent) {
        *slash = '\0';
        if (mkdir_p(parent, 0755) == 0) {
            set_topdir(parent);
            rc = mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -1;
        }
    }
    free(parent);
    return rc;
}

/*
 * Writes a whole file. Readers of these files (the training helper, the
 * log endpoint) retry what they cannot parse, so the file is written in
 * place: one create instead of a create and a rename per pod, which is
 * what the file system charges most for when jobs are short.
 */
static int write_file(const char *path, const char *data, size_t len)
{
    /* never through a link or into a fifo a pod left in its directory */
    int fd =
        open(path,
             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
             0644);
    int rc = -1;
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        goto out;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            close(fd);
            goto out;
        }
        off += (size_t)w;
    }
    rc = close(fd);
out:
    return rc;
}

static int write_small(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, s, strlen(s));
    close(fd);
    return w == (ssize_t)strlen(s) ? 0 : -1;
}

/* Reads up to size-1 bytes of a small file into buf; -1 on error. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

static bool path_exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Searches `path` (colon list) for an executable `cmd`; returns owned or
 * NULL with *why set ("not found" or "permission denied"). */
static char *which(const char *cmd, const char *path, int *why)
{
    *why = ENOENT;
    char *dirs = fq_xstrdup(path ? path : DEFAULT_PATH);
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d;
         d = strtok_r(NULL, ":", &save)) {
        char *full = fq_xasprintf("%s/%s", *d ? d : ".", cmd);
        struct stat st;
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(full, X_OK) == 0) {
                free(dirs);
                return full;
            }
            *why = EACCES;
        }
        free(full);
    }
    free(dirs);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* the runner                                                           */

struct mount {
    char *src; /* host path */
    char *dst; /* path inside the pod */
    bool ro;
    bool rewrite;   /* served by the rewrite fallback */
    bool empty_dir; /* the pod's own directory: handed to its user */
};

struct proc {
    char *ns, *name, *uid;
    char *dir;
    pid_t pid; /* == pgid */
    bool terminating;
    bool killed;     /* SIGKILL sent by us */
    bool reported;   /* its end was already reported (exec failure) */
    bool remove_dir; /* the Pod was deleted: remove its files at exit */
    bool bwrap;      /* runs under bubblewrap (exit codes are bwrap's) */
    bool pidns;      /* pid 1 of its own pid namespace is pod_init.c */
    bool peer_files; /* a Ray node: pod.json and status.json are kept */
    int64_t started_ms;
    int64_t kill_at_ms;
    char *cg_mem, *cg_cpu; /* owned cgroup dirs or NULL */
    char *cg_kill;         /* owned v2 dir the whole tree is in, or NULL */
    uint64_t gpus;         /* bit mask of handed-out GPU indices */
    int64_t metrics_off;   /* bytes of metrics.jsonl already read */
    enum fq_kind mkind;    /* the job its rank-0 metrics go to, or NONE */
    char *mjob;
};

struct exited {
    char *ns, *name;
    int count;
    int64_t at_ms;
};

struct fq_runner {
    struct fq_runner_config cfg;
    char *data_dir;
    char *python_path;
    char *node_name;
    struct fq_engine *engine;

    enum fq_runner_mounts mounts;
    char *bwrap;      /* path of bwrap, when mounts == BWRAP */
    char *bwrap_note; /* why bwrap is not used, or its version */
    enum fq_runner_cgroups cgroups;
    char *cg_mem_root; /* our cgroup dirs, created at probe */
    char *cg_cpu_root;
    char *cg_note;

    struct proc *procs;
    size_t nprocs, cap;
    struct exited *exited; /* recent exits, for restart backoff */
    size_t nexited, excap;
    uint64_t gpus_used;
    bool scanned;      /* the first full scan ran */
    char *child_stack; /* spawn's clone stack, reused (or NULL) */

    struct fq_sandbox sb; /* the pods' default identity and limits */
    char *sb_note;
    char *setpriv;      /* path of setpriv (bwrap pods as root) or NULL */
    char *cg_kill_root; /* v2 directory of the pods' kill cgroups */
    char *cg_kill_note;
    char boot[9];         /* boot id prefix, part of containerID */
    struct strv stale_cg; /* killed cgroups rmdir refused (EBUSY) yet */
    char *hide[5];        /* absolute paths of cfg.hide, NULL-terminated */
    bool pidns_ok;        /* unshare mode can make a pid namespace */
    int self_fd;          /* O_PATH of our own binary (pod_init.c), or -1 */
};

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

static void proc_release(struct proc *p)
{
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

/*
 * The unshare mode: what bubblewrap does, done by flexqd itself in the
 * child (it needs CAP_SYS_ADMIN, i.e. flexqd running as root). The parent
 * prepares everything; the child only makes syscalls:
 *   unshare(NEWNS|NEWUTS), / made rprivate, a tmpfs on <pod>/root, every
 *   top-level entry of / bound (or symlinked) into it, /proc /dev /sys
 *   bound, each volume bound at its mountPath (read-only when asked), the
 *   hosts file over /etc/hosts, pivot_root into it, the old root detached,
 *   the pod's hostname set.
 */
struct topent {
    char *name;   /* "usr" */
    char *target; /* symlink target, or NULL */
    bool file;
};

struct nsplan {
    char *root; /* <pod dir>/root, an empty directory */
    struct topent *top;
    size_t ntop;
    const struct mount *m;
    size_t nm;
    char *hosts;             /* or NULL */
    const char *hostname;    /* borrowed */
    const char *data_dir;    /* borrowed; hidden by a tmpfs (or NULL) */
    const char *poddir;      /* borrowed; bound back inside data_dir */
    const char *nsdir;       /* borrowed; bound read-only first, or NULL */
    const char *const *hide; /* borrowed; /dev/null bound over each */
    bool new_proc;           /* a pid namespace of its own: a fresh /proc */
    bool in_place; /* every target exists: no tmpfs root, no pivot_root */
};

static void nsplan_release(struct nsplan *pl)
{
    for (size_t i = 0; i < pl->ntop; i++) {
        free(pl->top[i].name);
        free(pl->top[i].target);
    }
    free(pl->top);
    free(pl->root);
    free(pl->hosts);
    memset(pl, 0, sizeof(*pl));
}

static void nsplan_init(struct nsplan *pl, const char *poddir,
                        const struct mount *m, size_t nm, const char *hostname)
{
    memset(pl, 0, sizeof(*pl));
    pl->root = fq_xasprintf("%s/root", poddir);
    mkdir_p(pl->root, 0755);
    pl->m = m;
    pl->nm = nm;
    pl->hostname = hostname;
    char *hosts = fq_xasprintf("%s/hosts", poddir);
    if (path_exists(hosts) && path_exists("/etc/hosts"))
        pl->hosts = hosts;
    else
        free(hosts);
    size_t cap = 0;
    DIR *d = opendir("/");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        char *full = fq_xasprintf("/%s", n);
        struct stat st;
        if (lstat(full, &st) == 0) {
            FQ_GROW(pl->top, cap, pl->ntop + 1);
            struct topent *t = &pl->top[pl->ntop++];
            t->name = fq_xstrdup(n);
            t->target = NULL;
            t->file = S_ISREG(st.st_mode);
            if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t tl = readlink(full, target, sizeof(target) - 1);
                target[tl > 0 ? tl : 0] = '\0';
                t->target = fq_xstrdup(target);
            }
        }
        free(full);
    }
    if (d)
        closedir(d);
}

/* mkdir -p for the child (no allocation). */
static int mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof(tmp))
        return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    return mkdir(tmp, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* A mount point of the right kind (directory or file) at `dst`. */
static int make_point(const char *dst, bool file)
{
    if (!file)
        return mkdirs(dst);
    char parent[PATH_MAX];
    snprintf(parent, sizeof(parent), "%s", dst);
    char *sl = strrchr(parent, '/');
    if (sl && sl != parent) {
        *sl = '\0';
        if (mkdirs(parent) != 0)
            return -1;
    }
    int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int bind_at(const char *src, const char *dst, bool ro)
{
    struct stat st;
    if (stat(src, &st) != 0)
        return -1;
    if (make_point(dst, !S_ISDIR(st.st_mode)) != 0)
        return -1;
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
        return -1;
    if (ro && mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL))
        return -1;
    return 0;
}

/* Returns 0, or -1 with errno set and *step naming what failed. */
static int ns_setup(const struct nsplan *pl, const char **step)
{
    char p[PATH_MAX];
    *step = "unshare";
    if (unshare(CLONE_NEWNS | CLONE_NEWUTS) != 0)
        return -1;
    *step = "making / private";
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return -1;
    /* in place: the host's tree as the root (every mount target exists,
     * nothing to create); else a tmpfs root with the host's top-level
     * entries bound in */
    const char *root = pl->in_place ? "" : pl->root;
    *step = "tmpfs root";
    if (!pl->in_place && mount("tmpfs", pl->root, "tmpfs", 0, "mode=0755"))
        return -1;
    *step = "binding the host's top-level directories";
    for (size_t i = 0; !pl->in_place && i < pl->ntop; i++) {
        const struct topent *t = &pl->top[i];
        if (pl->new_proc && !strcmp(t->name, "proc"))
            continue;
        snprintf(p, sizeof(p), "%s/%s", pl->root, t->name);
        char src[PATH_MAX];
        snprintf(src, sizeof(src), "/%s", t->name);
        if (t->target) {
            if (symlink(t->target, p) != 0)
                return -1;
        } else if (bind_at(src, p, false) != 0) {
            return -1;
        }
    }
    if (pl->new_proc) {
        *step = "mounting /proc of the pod's pid namespace";
        snprintf(p, sizeof(p), "%s/proc", root);
        if (mkdirs(p) != 0 ||
            mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
            return -1;
    }
    *step = "binding a volume";
    for (size_t i = 0; i < pl->nm; i++) {
        if (pl->m[i].rewrite)
            continue;
        snprintf(p, sizeof(p), "%s%s", root, pl->m[i].dst);
        if (bind_at(pl->m[i].src, p, pl->m[i].ro) != 0)
            return -1;
    }
    if (pl->data_dir) {
        /* flexqd's data directory is an empty tmpfs but for the pod's own
         * directory: no database, no other pod's log or volumes. In place
         * the tmpfs covers the sources too: they are bound through
         * descriptors opened before. */
        int podfd = -1, nsfd = -1;
        char podsrc[64], nssrc[64];
        if (pl->in_place) {
            podfd = open(pl->poddir, O_PATH | O_CLOEXEC);
            nsfd = pl->nsdir ? open(pl->nsdir, O_PATH | O_CLOEXEC) : -1;
        }
        snprintf(podsrc, sizeof(podsrc), "/proc/self/fd/%d", podfd);
        snprintf(nssrc, sizeof(nssrc), "/proc/self/fd/%d", nsfd);
        *step = "hiding the data directory";
        snprintf(p, sizeof(p), "%s%s", root, pl->data_dir);
        if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"))
            return -1;
        if (pl->nsdir) {
            snprintf(p, sizeof(p), "%s%s", root, pl->nsdir);
            if (bind_at(nsfd >= 0 ? nssrc : pl->nsdir, p, true) != 0)
                return -1;
        }
        snprintf(p, sizeof(p), "%s%s", root, pl->poddir);
        if (bind_at(podfd >= 0 ? podsrc : pl->poddir, p, false) != 0)
            return -1;
        if (podfd >= 0)
            close(podfd);
        if (nsfd >= 0)
            close(nsfd);
    }
    for (size_t i = 0; pl->hide && pl->hide[i]; i++) {
        *step = "hiding a file";
        struct stat st;
        snprintf(p, sizeof(p), "%s%s", root, pl->hide[i]);
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
            mount("/dev/null", p, NULL, MS_BIND, NULL) != 0)
            return -1;
    }
    if (pl->hosts) {
        *step = "binding /etc/hosts";
        snprintf(p, sizeof(p), "%s/etc/hosts", root);
        if (mount(pl->hosts, p, NULL, MS_BIND, NULL) != 0)
            return -1;
    }
    *step = "pivot_root";
    if (!pl->in_place &&
        (chdir(root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
         umount2(".", MNT_DETACH) != 0 || chdir("/") != 0))
        return -1;
    *step = "sethostname";
    if (pl->hostname && sethostname(pl->hostname, strlen(pl->hostname)))
        return -1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* probing                                                              */

/* Runs argv to completion with stdio on /dev/null; returns the exit code
 * or -1. Used only at start-up. */
static int run_quiet(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void bwrap_root_args(struct strv *a, const struct mount *m, size_t nm);

static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/*
 * What bubblewrap adds for every pod: its own pid namespace (bwrap is pid
 * 1 there; when the outer bwrap dies, --die-with-parent takes the whole
 * namespace with it), the data directory hidden under a tmpfs but for
 * the pod's own directory, the hidden files replaced by /dev/null, and
 * the seccomp filter (fd, or -1 for none).
 */
static void bwrap_sandbox_args(const struct fq_runner *r, struct strv *a,
                               const char *mask, const char *poddir,
                               const char *nsdir, int seccomp_fd)
{
    strv_pushs(a, "--unshare-pid");
    strv_pushs(a, "--tmpfs");
    strv_pushs(a, mask);
    /* the directories between, 0755 (bwrap would make them 0700 and
     * root's: the pod user could not reach its own directory) */
    size_t dl = strlen(mask);
    for (const char *sl = poddir + dl;
         under(poddir, mask) && (sl = strchr(sl + 1, '/'));) {
        strv_pushs(a, "--dir");
        strv_push(a, fq_xstrndup(poddir, (size_t)(sl - poddir)));
    }
    if (nsdir) { /* a Ray node follows its peers: read-only */
        strv_pushs(a, "--ro-bind");
        strv_pushs(a, nsdir);
        strv_pushs(a, nsdir);
    }
    strv_pushs(a, "--bind");
    strv_pushs(a, poddir);
    strv_pushs(a, poddir);
    for (size_t i = 0; i < 4 && r->hide[i]; i++) {
        struct stat st;
        if (under(r->hide[i], r->data_dir) || stat(r->hide[i], &st) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        strv_pushs(a, "--ro-bind");
        strv_pushs(a, "/dev/null");
        strv_pushs(a, r->hide[i]);
    }
    if (seccomp_fd >= 0) {
        strv_pushs(a, "--seccomp");
        strv_push(a, fq_xasprintf("%d", seccomp_fd));
    }
}

/* bubblewrap runs as root (it needs to, to mount without a user
 * namespace); setpriv, inside, becomes the pod's user with no
 * capabilities before it execs the command. Appends nothing when flexqd
 * cannot change users. */
static void setpriv_args(const struct fq_runner *r, struct strv *a, uid_t uid,
                         gid_t gid)
{
    if (!r->sb.change_ids || !r->setpriv)
        return;
    strv_pushs(a, r->setpriv);
    strv_push(a, fq_xasprintf("--reuid=%ld", (long)uid));
    strv_push(a, fq_xasprintf("--regid=%ld", (long)gid));
    strv_pushs(a, "--clear-groups");
    strv_pushs(a, "--inh-caps=-all");
    strv_pushs(a, "--bounding-set=-all");
    strv_pushs(a, "--no-new-privs");
    strv_pushs(a, "--");
}

static void probe_bwrap(struct fq_runner *r)
{
    int why;
    char *bw = which("bwrap", getenv("PATH"), &why);
    if (!bw) {
        r->bwrap_note = fq_xstrdup("bwrap not installed; apt-get install "
                                   "bubblewrap for private mounts");
        return;
    }
    /* The probe mounts a directory at a path that does not exist on the
     * host, as the tutorial's /app does, and runs true inside. */
    char *probe_dir = fq_xasprintf("%s/probe", r->data_dir);
    mkdir_p(probe_dir, 0755);
    struct mount m = {probe_dir, (char *)"/flexq-probe-mount", true, false,
                      false};
    struct strv a = {0};
    strv_pushs(&a, bw);
    bwrap_root_args(&a, &m, 1);
    /* the pods' own setup: pid namespace, data directory hidden, the
     * pod user through setpriv */
    char *mask = fq_sandbox_hide_root(r->data_dir, r->sb.change_ids, r->sb.uid,
                                      r->sb.gid);
    bwrap_sandbox_args(r, &a, mask, probe_dir, NULL, -1);
    free(mask);
    strv_pushs(&a, "--");
    if (r->sb.change_ids && !r->setpriv) {
        r->bwrap_note = fq_xstrdup("no setpriv to become the pod user under "
                                   "bubblewrap (util-linux)");
        strv_release(&a);
        rmdir(probe_dir);
        free(probe_dir);
        free(bw);
        return;
    }
    setpriv_args(r, &a, r->sb.uid, r->sb.gid);
    strv_pushs(&a, "/bin/sh");
    strv_pushs(&a, "-c");
    strv_pushs(&a, "test -d /flexq-probe-mount");
    int rc = run_quiet(a.v);
    strv_release(&a);
    rmdir(probe_dir);
    free(probe_dir);
    if (rc == 0) {
        r->mounts = FQ_MOUNTS_BWRAP;
        r->bwrap = bw;
        r->bwrap_note = fq_xasprintf("%s works here", bw);
    } else {
        r->bwrap_note =
            fq_xasprintf("%s cannot create namespaces here (exit %d): no user "
                         "namespaces or privileges",
                         bw, rc);
        free(bw);
    }
}

/*
 * Finds the mount point of a cgroup hierarchy in /proc/mounts: fstype
 * "cgroup2" (controller NULL) or "cgroup" with `controller` among the
 * options. Returns owned or NULL.
 */
static char *cgroup_mount(const char *controller)
{
    FILE *f = fopen("/proc/mounts", "re");
    if (!f)
        return NULL;
    char line[1024];
    char *found = NULL;
    while (!found && fgets(line, sizeof(line), f)) {
        char dev[256], dir[512], type[64], opts[512];
        if (sscanf(line, "%255s %511s %63s %511s", dev, dir, type, opts) != 4)
            continue;
        if (!controller && !strcmp(type, "cgroup2"))
            found = fq_xstrdup(dir);
        if (controller && !strcmp(type, "cgroup")) {
            char *save = NULL;
            for (char *o = strtok_r(opts, ",", &save); o;
                 o = strtok_r(NULL, ",", &save))
                if (!strcmp(o, controller))
                    found = fq_xstrdup(dir);
        }
    }
    fclose(f);
    return found;
}

/* Our own cgroup path within a hierarchy from /proc/self/cgroup: the line
 * "0::/p" (v2) or "N:...controller...:/p" (v1). Returns owned. */
static char *own_cgroup(const char *controller)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return fq_xstrdup("/");
    char line[1024];
    char *found = NULL;
    while (!found && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *ctrls = c1 + 1;
        if (!controller && !strcmp(line, "0") && !*ctrls)
            found = fq_xstrdup(c2 + 1);
        if (controller) {
            char *cp = fq_xstrdup(ctrls), *save = NULL;
            for (char *o = strtok_r(cp, ",", &save); o;
                 o = strtok_r(NULL, ",", &save))
                if (!strcmp(o, controller))
                    found = fq_xstrdup(c2 + 1);
            free(cp);
        }
    }
    fclose(f);
    return found ? found : fq_xstrdup("/");
}

/* Makes <mount><own path>/flexq-<pid> (or <mount>/flexq-<pid> when our own
 * path is not visible in this mount namespace). Returns owned or NULL. */
static char *make_root_cgroup(const char *mnt, const char *own)
{
    char *base = fq_xasprintf("%s%s", mnt, own);
    struct stat st;
    if (stat(base, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(base);
        base = fq_xstrdup(mnt);
    }
    fq_cgroup_clean_orphans(base); /* of flexqd processes killed -9 */
    char *dir = fq_xasprintf("%s/flexq-%ld", base, (long)getpid());
    free(base);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        free(dir);
        return NULL;
    }
    return dir;
}

static bool has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ') &&
            (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
            return true;
    return false;
}

static void probe_cgroups(struct fq_runner *r)
{
    char buf[512];
    enum fq_runner_cgroups want = r->cfg.cgroups;
    if (want == FQ_CGROUPS_NONE) {
        r->cg_note = fq_xstrdup("disabled by configuration");
        return;
    }
    if (want == FQ_CGROUPS_AUTO || want == FQ_CGROUPS_V2) {
        char *mnt = cgroup_mount(NULL);
        if (mnt) {
            char *ctl = fq_xasprintf("%s/cgroup.controllers", mnt);
            bool ok = read_small(ctl, buf, sizeof(buf)) > 0 &&
                      has_word(buf, "memory") && has_word(buf, "cpu");
            free(ctl);
            if (ok) {
                char *own = own_cgroup(NULL);
                char *root = make_root_cgroup(mnt, own);
                free(own);
                if (root) {
                    char *sub = fq_xasprintf("%s/cgroup.subtree_control", root);
                    ok = write_small(sub, "+memory +cpu") == 0;
                    free(sub);
                    if (ok) {
                        r->cgroups = FQ_CGROUPS_V2;
                        r->cg_mem_root = root;
                        r->cg_cpu_root = fq_xstrdup(root);
                        r->cg_note = fq_xasprintf("memory.max and cpu.max "
                                                  "under %s",
                                                  root);
                        free(mnt);
                        return;
                    }
                    rmdir(root);
                    free(root);
                }
            }
            free(mnt);
        }
    }
    if (want == FQ_CGROUPS_AUTO || want == FQ_CGROUPS_V1) {
        char *mm = cgroup_mount("memory"), *cm = cgroup_mount("cpu");
        if (mm && cm) {
            char *om = own_cgroup("memory"), *oc = own_cgroup("cpu");
            char *rm = make_root_cgroup(mm, om);
            char *rc = rm ? make_root_cgroup(cm, oc) : NULL;
            free(om);
            free(oc);
            if (rm && rc) {
                r->cgroups = FQ_CGROUPS_V1;
                r->cg_mem_root = rm;
                r->cg_cpu_root = rc;
                r->cg_note = fq_xasprintf("memory.limit_in_bytes under %s, "
                                          "cpu.cfs_quota_us under %s",
                                          rm, rc);
                free(mm);
                free(cm);
                return;
            }
            if (rm)
                rmdir(rm);
            free(rm);
            free(rc);
        }
        free(mm);
        free(cm);
    }
    r->cgroups = FQ_CGROUPS_NONE;
    r->cg_note = fq_xstrdup("no writable cgroup v2 or v1 memory+cpu "
                            "hierarchy; limits are recorded, not enforced");
}

/* Tries the unshare mode once: a child sets up a namespace with a volume
 * at a path the host does not have and checks it is there. */
/* A fork, in a new pid namespace when asked (the child is its pid 1). */
static pid_t fork_ns(bool pidns)
{
    if (!pidns)
        return fork();
    return (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL,
                          NULL);
}

static int probe_unshare_once(struct fq_runner *r, bool pidns, int *e)
{
    char *dir = fq_xasprintf("%s/probe", r->data_dir);
    char *vol = fq_xasprintf("%s/vol", dir);
    mkdir_p(vol, 0755);
    struct mount m = {vol, (char *)"/flexq-probe-mount", true, false, false};
    struct nsplan pl;
    nsplan_init(&pl, dir, &m, 1, "flexq-probe");
    pl.new_proc = pidns;
    int rc = -1;
    pid_t pid = fork_ns(pidns);
    if (pid == 0) {
        const char *step;
        if (ns_setup(&pl, &step) != 0)
            _exit(2);
        if (pidns && getpid() != 1)
            _exit(3);
        _exit(access("/flexq-probe-mount", F_OK) == 0 ? 0 : 1);
    }
    if (pid > 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    } else {
        *e = errno;
    }
    nsplan_release(&pl);
    char *root = fq_xasprintf("%s/root", dir);
    rmdir(root);
    free(root);
    rmdir(vol);
    rmdir(dir);
    free(vol);
    free(dir);
    return rc;
}

/* Tries the unshare mode, with a pid namespace first (pod_init.c is then
 * each pod's pid 1), else without. */
static void probe_unshare(struct fq_runner *r)
{
    int e = 0;
    int rc = r->self_fd >= 0 ? probe_unshare_once(r, true, &e) : -1;
    r->pidns_ok = rc == 0;
    if (rc != 0)
        rc = probe_unshare_once(r, false, &e);
    char *note = fq_xasprintf(
        "%s%sflexqd's own unshare %s%s", r->bwrap_note ? r->bwrap_note : "",
        r->bwrap_note ? "; " : "",
        rc == 0 ? "works here" :
        e       ? "could not fork" :
                  "is not allowed here (needs root / CAP_SYS_ADMIN)",
        r->pidns_ok ? ", with a pid namespace per pod" :
        rc == 0     ? ", without pid namespaces" :
                      "");
    free(r->bwrap_note);
    r->bwrap_note = note;
    if (rc == 0)
        r->mounts = FQ_MOUNTS_UNSHARE;
}

struct fq_runner *fq_runner_new(const struct fq_runner_config *cfg,
                                struct fq_engine *e, struct fq_err *err)
{
    if (!cfg->data_dir) {
        fq_err_set(err, FQ_EINVAL, "runner: no data directory");
        return NULL;
    }
    char *pods = fq_xasprintf("%s/pods", cfg->data_dir);
    if (mkdir_p(pods, 0755) != 0) {
        fq_err_set(err, FQ_EIO, "runner: cannot create %s: %s", pods,
                   strerror(errno));
        free(pods);
        return NULL;
    }
    /* namespaces' directories from an earlier run */
    DIR *pd = opendir(pods);
    struct dirent *de;
    while (pd && (de = readdir(pd)))
        if (de->d_name[0] != '.') {
            char *ns = fq_xasprintf("%s/%s", pods, de->d_name);
            set_topdir(ns);
            free(ns);
        }
    if (pd)
        closedir(pd);
    free(pods);
    struct fq_runner *r = fq_xcalloc(1, sizeof(*r));
    r->cfg = *cfg;
    if (!r->cfg.log_max_bytes)
        r->cfg.log_max_bytes = 10u << 20;
    if (r->cfg.gpus > MAX_GPUS)
        r->cfg.gpus = MAX_GPUS;
    /* absolute: it is a mount point inside the pods */
    char real[PATH_MAX];
    r->data_dir =
        fq_xstrdup(realpath(cfg->data_dir, real) ? real : cfg->data_dir);
    for (size_t i = 0, n = 0; i < 4 && cfg->hide[i]; i++)
        if (realpath(cfg->hide[i], real))
            r->hide[n++] = fq_xstrdup(real);
    r->python_path = fq_xstrdup(cfg->python_path ? cfg->python_path :
                                                   FLEXQ_SOURCE_DIR "/python");
    r->node_name = cfg->node_name ? fq_xstrdup(cfg->node_name) : NULL;
    r->engine = e;
    /* who the pods run as, and what they may use */
    r->sb.change_ids = fq_sandbox_default_ids(cfg->pod_user, &r->sb.uid,
                                              &r->sb.gid, &r->sb_note);
    r->sb.max_procs = cfg->pod_max_procs > 0 ? cfg->pod_max_procs : 16384;
    r->sb.max_files = cfg->pod_max_files > 0 ? cfg->pod_max_files : 65536;
    r->sb.seccomp = true;
    fq_sandbox_filter_build(&r->sb);
    fq_boot_id(r->boot);
    int why_sp;
    r->setpriv = which("setpriv", DEFAULT_PATH, &why_sp);
    r->mounts = FQ_MOUNTS_REWRITE;
    /* our own binary, exec'd as each pod's pid 1 (pod_init.c) */
    r->self_fd = fq_pod_init_argv0[0] && geteuid() == 0 ?
                     open("/proc/self/exe", O_PATH | O_CLOEXEC) :
                     -1;
    /* As root flexqd's own namespaces are preferred: a pod then costs a
     * clone and two execs (pod_init, the command) where bubblewrap costs
     * several processes; bubblewrap serves the machines where flexqd is
     * not root (user namespaces). */
    if (cfg->mounts == FQ_MOUNTS_AUTO && geteuid() == 0)
        probe_unshare(r);
    if (r->mounts == FQ_MOUNTS_REWRITE &&
        (cfg->mounts == FQ_MOUNTS_AUTO || cfg->mounts == FQ_MOUNTS_BWRAP)) {
        char *un = r->bwrap_note; /* why not unshare, kept before bwrap's */
        r->bwrap_note = NULL;
        probe_bwrap(r);
        if (un) {
            char *both =
                fq_xasprintf("%s; %s", un, r->bwrap_note ? r->bwrap_note : "");
            free(r->bwrap_note);
            free(un);
            r->bwrap_note = both;
        }
    }
    if (r->mounts == FQ_MOUNTS_REWRITE && cfg->mounts == FQ_MOUNTS_UNSHARE)
        probe_unshare(r);
    if (cfg->mounts == FQ_MOUNTS_REWRITE)
        r->bwrap_note = fq_xstrdup("rewrite chosen by configuration");
    /* without namespaces the pod user reaches its directory through the
     * data directory: traversable, never listable */
    if (r->mounts == FQ_MOUNTS_REWRITE && r->sb.change_ids)
        fq_sandbox_protect_dir(r->data_dir);
    probe_cgroups(r);
    /* one cgroup v2 directory per pod, for killing its whole tree: the
     * limits' own tree on a v2 machine, else a cgroup2 mount beside v1 */
    if (r->cgroups == FQ_CGROUPS_V2)
        r->cg_kill_root = fq_xstrdup(r->cg_mem_root);
    else
        r->cg_kill_root = fq_cgroup_v2_root(&r->cg_kill_note);
    return r;
}

static void cgroup_remove(const char *dir)
{
    if (dir)
        rmdir(dir);
}

void fq_runner_free(struct fq_runner *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nprocs; i++) {
        struct proc *p = &r->procs[i];
        kill(-p->pid, SIGKILL);
        fq_cgroup_kill(p->cg_kill);
        int st;
        while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
            ;
        cgroup_remove(p->cg_mem);
        cgroup_remove(p->cg_cpu);
        fq_cgroup_reap(p->cg_kill);
        proc_release(p);
    }
    free(r->procs);
    for (size_t i = 0; i < r->stale_cg.n; i++)
        fq_cgroup_reap(r->stale_cg.v[i]);
    strv_release(&r->stale_cg);
    if (r->cg_kill_root &&
        (!r->cg_mem_root || strcmp(r->cg_kill_root, r->cg_mem_root)))
        rmdir(r->cg_kill_root);
    free(r->cg_kill_root);
    free(r->cg_kill_note);
    free(r->sb_note);
    free(r->setpriv);
    for (size_t i = 0; i < 4; i++)
        free(r->hide[i]);
    for (size_t i = 0; i < r->nexited; i++) {
        free(r->exited[i].ns);
        free(r->exited[i].name);
    }
    free(r->exited);
    cgroup_remove(r->cg_mem_root);
    if (r->cg_cpu_root &&
        (!r->cg_mem_root || strcmp(r->cg_cpu_root, r->cg_mem_root)))
        cgroup_remove(r->cg_cpu_root);
    free(r->cg_mem_root);
    free(r->cg_cpu_root);
    free(r->cg_note);
    free(r->bwrap);
    free(r->bwrap_note);
    free(r->data_dir);
    free(r->python_path);
    free(r->node_name);
    free(r->child_stack);
    if (r->self_fd >= 0)
        close(r->self_fd);
    free(r);
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
    return fq_map_get(fq_value_path(pod, "metadata.labels"),
                      "ray.io/cluster") != NULL;
}

static void write_status(const char *dir, const char *phase, int code,
                         const char *reason, const char *msg)
{
    struct fq_value *s = fq_value_map();
    fq_map_set(s, "phase", fq_value_str(phase));
    fq_map_set(s, "exitCode", fq_value_int(code));
    fq_map_set(s, "reason", fq_value_str(reason ? reason : ""));
    fq_map_set(s, "message", fq_value_str(msg ? msg : ""));
    char *text = fq_json_dumps(s, FQ_JSON_COMPACT);
    char *path = fq_xasprintf("%s/status.json", dir);
    write_file(path, text, strlen(text));
    free(path);
    free(text);
    fq_value_free(s);
}

/* ------------------------------------------------------------------ */
/* building a pod's process                                             */

struct spec {
    struct strv argv;
    struct strv env;
    char *cwd;
    char *hostname;
    struct mount *mounts;
    size_t nmounts, mcap;
    int64_t mem_bytes; /* 0: no limit */
    int64_t cpu_milli; /* 0: no limit */
    int64_t gpus;
    bool waiting;  /* a ConfigMap is missing */
    char why[512]; /* why it waits / cannot run */
};

static void spec_release(struct spec *s)
{
    strv_release(&s->argv);
    strv_release(&s->env);
    free(s->cwd);
    free(s->hostname);
    for (size_t i = 0; i < s->nmounts; i++) {
        free(s->mounts[i].src);
        free(s->mounts[i].dst);
    }
    free(s->mounts);
}

static void add_mount(struct spec *s, const char *src, const char *dst, bool ro)
{
    FQ_GROW(s->mounts, s->mcap, s->nmounts + 1);
    struct mount *m = &s->mounts[s->nmounts++];
    m->src = fq_xstrdup(src);
    m->dst = fq_xstrdup(dst);
    m->ro = ro;
    m->rewrite = false;
    m->empty_dir = false;
}

static const struct fq_value *find_named(const struct fq_value *seq,
                                         const char *name)
{
    for (size_t i = 0; i < fq_value_len(seq); i++) {
        const struct fq_value *it = fq_seq_at(seq, i);
        if (!strcmp(fq_value_path_str(it, "name", ""), name))
            return it;
    }
    return NULL;
}

/* A file name from a ConfigMap key or item path: no "..", no leading /. */
static bool safe_rel(const char *p)
{
    if (!*p || *p == '/')
        return false;
    for (const char *s = p; *s; s++)
        if (s[0] == '.' && s[1] == '.' && (s == p || s[-1] == '/') &&
            (s[2] == '/' || s[2] == '\0'))
            return false;
    return true;
}

/* Materializes a ConfigMap volume into dir. Returns 0, or -1 when the
 * ConfigMap does not exist (the pod waits). */
static int materialize_configmap(struct fq_runner *r, const char *ns,
                                 const struct fq_value *vol, const char *dir,
                                 struct spec *s)
{
    const char *cm = fq_value_path_str(vol, "configMap.name", "");
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(r->engine), FQ_KIND_CONFIGMAP, ns, cm);
    if (!o) {
        if (fq_value_path_bool(vol, "configMap.optional", false))
            return mkdir_p(dir, 0755), 0;
        snprintf(s->why, sizeof(s->why),
                 "MountVolume.SetUp failed for volume \"%s\": configmap "
                 "\"%s\" not found",
                 fq_value_path_str(vol, "name", ""), cm);
        return -1;
    }
    mkdir_p(dir, 0755);
    const struct fq_value *data = fq_map_get(o->obj, "data");
    const struct fq_value *items = fq_value_path(vol, "configMap.items");
    if (items && items->type == FQ_V_SEQ && items->u.seq.n) {
        for (size_t i = 0; i < items->u.seq.n; i++) {
            const struct fq_value *it = items->u.seq.items[i];
            const char *key = fq_value_path_str(it, "key", "");
            const char *rel = fq_value_path_str(it, "path", key);
            const char *val = fq_value_as_str(fq_map_get(data, key));
            if (!val || !safe_rel(rel))
                continue;
            char *path = fq_xasprintf("%s/%s", dir, rel);
            char *slash = strrchr(path, '/');
            *slash = '\0';
            mkdir_p(path, 0755);
            *slash = '/';
            write_file(path, val, strlen(val));
            free(path);
        }
        return 0;
    }
    if (data && data->type == FQ_V_MAP)
        for (size_t i = 0; i < data->u.map.n; i++) {
            const struct fq_member *m = &data->u.map.items[i];
            const char *val = fq_value_as_str(m->val);
            if (!val || !safe_rel(m->key) || strchr(m->key, '/'))
                continue;
            char *path = fq_xasprintf("%s/%s", dir, m->key);
            write_file(path, val, strlen(val));
            free(path);
        }
    return 0;
}

/* Volume mounts of `ctr` using the volumes of `podspec`. Returns 0, -1
 * when a ConfigMap is missing (the pod waits), -2 when refused. */
static int add_volume_mounts(struct fq_runner *r, const char *ns,
                             const char *poddir, const struct fq_value *podspec,
                             const struct fq_value *ctr, struct spec *s)
{
    const struct fq_value *vols = fq_map_get(podspec, "volumes");
    const struct fq_value *vms = fq_map_get(ctr, "volumeMounts");
    for (size_t i = 0; i < fq_value_len(vms); i++) {
        const struct fq_value *vm = fq_seq_at(vms, i);
        const char *vname = fq_value_path_str(vm, "name", "");
        const char *mpath = fq_value_path_str(vm, "mountPath", "");
        const char *sub = fq_value_path_str(vm, "subPath", "");
        bool ro = fq_value_path_bool(vm, "readOnly", false);
        const struct fq_value *vol = find_named(vols, vname);
        if (!vol || mpath[0] != '/')
            continue;
        char *src = NULL;
        bool own = false;
        if (fq_map_get(vol, "configMap")) {
            src = fq_xasprintf("%s/volumes/%s", poddir, vname);
            if (materialize_configmap(r, ns, vol, src, s) != 0) {
                free(src);
                return -1;
            }
            ro = true;
        } else if (fq_map_get(vol, "hostPath")) {
            src = fq_xstrdup(fq_value_path_str(vol, "hostPath.path", "/"));
            if (fq_sandbox_path_refused(src, r->data_dir,
                                        (const char *const *)r->hide, vname,
                                        s->why, sizeof(s->why))) {
                free(src);
                return -2;
            }
        } else {
            /* emptyDir and anything flexq does not model: a fresh
             * directory of the pod's own. */
            src = fq_xasprintf("%s/volumes/%s", poddir, vname);
            mkdir_p(src, 0755);
            own = true;
        }
        if (*sub && safe_rel(sub)) {
            char *full = fq_xasprintf("%s/%s", src, sub);
            free(src);
            src = full;
        }
        add_mount(s, src, mpath, ro);
        s->mounts[s->nmounts - 1].empty_dir = own;
        free(src);
    }
    return 0;
}

/* The value of a fieldRef such as metadata.name or
 * metadata.labels['ray.io/cluster']; "" when unknown. */
static char *field_ref(const struct fq_value *pod, const char *path)
{
    if (!strcmp(path, "status.podIP") || !strcmp(path, "status.hostIP"))
        return fq_xstrdup(fq_value_path_str(pod, path, "127.0.0.1"));
    const char *br = strchr(path, '[');
    if (br && (!strncmp(path, "metadata.labels", 15) ||
               !strncmp(path, "metadata.annotations", 20))) {
        char *mapname = fq_xstrndup(path, (size_t)(br - path));
        char *key = fq_xstrdup(br + 1);
        size_t kl = strlen(key);
        if (kl >= 2 && key[kl - 1] == ']')
            key[--kl] = '\0';
        if (kl >= 2 && (key[0] == '\'' || key[0] == '"')) {
            memmove(key, key + 1, kl);
            key[kl - 2] = '\0';
        }
        const struct fq_value *m = fq_value_path(pod, mapname);
        char *out = fq_xstrdup(fq_value_as_str(fq_map_get(m, key)) ?
                                   fq_value_as_str(fq_map_get(m, key)) :
                                   "");
        free(mapname);
        free(key);
        return out;
    }
    return fq_xstrdup(fq_value_path_str(pod, path, ""));
}

static bool is_ip_literal(const char *h)
{
    if (!strcmp(h, "localhost"))
        return true;
    for (const char *p = h; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == ':'))
            return false;
    return *h != '\0';
}

/* Names the pod's rendezvous env refers to (owned strings into names). */
static void rendezvous_names(const struct strv *env, struct strv *names)
{
    const char *tw = env_get(env, "TPU_WORKER_HOSTNAMES");
    if (tw) {
        char *cp = fq_xstrdup(tw), *save = NULL;
        for (char *h = strtok_r(cp, ",", &save); h;
             h = strtok_r(NULL, ",", &save))
            if (!is_ip_literal(h))
                strv_pushs(names, h);
        free(cp);
    }
    const char *ma = env_get(env, "MASTER_ADDR");
    if (ma && *ma && !is_ip_literal(ma))
        strv_pushs(names, ma);
    const char *jc = env_get(env, "JAX_COORDINATOR_ADDRESS");
    if (jc && *jc) {
        char *h = fq_xstrdup(jc);
        char *colon = strrchr(h, ':');
        if (colon)
            *colon = '\0';
        if (*h && !is_ip_literal(h))
            strv_push(names, h);
        else
            free(h);
    }
}

/* Rewrite fallback for names: replaces each rendezvous name in the env by
 * 127.0.0.1, since without a mount namespace no hosts file can make them
 * resolve. */
static void rewrite_names(struct strv *env)
{
    static const char *const keys[] = {"TPU_WORKER_HOSTNAMES", "MASTER_ADDR",
                                       "JAX_COORDINATOR_ADDRESS"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        const char *v = env_get(env, keys[k]);
        if (!v)
            continue;
        struct fq_buf b = FQ_BUF_INIT;
        fq_buf_puts(&b, "");
        char *cp = fq_xstrdup(v), *save = NULL;
        bool first = true;
        for (char *h = strtok_r(cp, ",", &save); h;
             h = strtok_r(NULL, ",", &save)) {
            char *port = strrchr(h, ':');
            if (port)
                *port = '\0';
            fq_buf_printf(&b, "%s%s%s%s", first ? "" : ",",
                          is_ip_literal(h) ? h : "127.0.0.1", port ? ":" : "",
                          port ? port + 1 : "");
            first = false;
        }
        free(cp);
        env_set(env, keys[k], fq_buf_str(&b));
        fq_buf_release(&b);
    }
}

/* Replaces a leading mount path in s by the mount's host source; returns
 * owned, or NULL when s does not start with any rewritten mount. */
static char *rewrite_path(const struct spec *s, const char *str)
{
    for (size_t i = 0; i < s->nmounts; i++) {
        const struct mount *m = &s->mounts[i];
        if (!m->rewrite)
            continue;
        size_t n = strlen(m->dst);
        if (!strncmp(str, m->dst, n) && (str[n] == '/' || str[n] == '\0'))
            return fq_xasprintf("%s%s", m->src, str + n);
    }
    return NULL;
}

/* Host path of a path seen inside the pod (for preflight); owned. */
static char *host_path(const struct spec *s, const char *p)
{
    for (size_t i = 0; i < s->nmounts; i++) {
        const struct mount *m = &s->mounts[i];
        size_t n = strlen(m->dst);
        if (!strncmp(p, m->dst, n) && (p[n] == '/' || p[n] == '\0'))
            return fq_xasprintf("%s%s", m->src, p + n);
    }
    return fq_xstrdup(p);
}

/*
 * Decides which mounts bubblewrap can serve: a target whose first missing
 * path component lies directly under / (or under a directory bwrap itself
 * creates) can be made in the tmpfs root; a missing target inside an
 * existing host directory cannot without touching the host.
 */
static void plan_mounts(const struct fq_runner *r, struct spec *s)
{
    for (size_t i = 0; i < s->nmounts; i++) {
        struct mount *m = &s->mounts[i];
        if (r->mounts == FQ_MOUNTS_REWRITE) {
            m->rewrite = true;
            continue;
        }
        if (path_exists(m->dst))
            continue;
        /* Find the first missing component. */
        char *p = fq_xstrdup(m->dst);
        bool ok = false;
        for (char *sl = p + 1;; sl++) {
            sl = strchr(sl, '/');
            if (sl)
                *sl = '\0';
            if (!path_exists(p)) {
                char *parent_end = strrchr(p, '/');
                ok = parent_end == p; /* missing part starts at / */
                break;
            }
            if (!sl)
                break;
            *sl = '/';
        }
        free(p);
        if (!ok)
            m->rewrite = true;
    }
}

static void bwrap_root_args(struct strv *a, const struct mount *m, size_t nm)
{
    strv_pushs(a, "--die-with-parent");
    strv_pushs(a, "--tmpfs");
    strv_pushs(a, "/");
    DIR *d = opendir("/");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "proc") ||
            !strcmp(n, "dev") || !strcmp(n, "sys"))
            continue;
        char *full = fq_xasprintf("/%s", n);
        struct stat st;
        if (lstat(full, &st) == 0) {
            if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t tl = readlink(full, target, sizeof(target) - 1);
                if (tl > 0) {
                    target[tl] = '\0';
                    strv_pushs(a, "--symlink");
                    strv_pushs(a, target);
                    strv_pushs(a, full);
                }
            } else {
                strv_pushs(a, "--bind");
                strv_pushs(a, full);
                strv_pushs(a, full);
            }
        }
        free(full);
    }
    if (d)
        closedir(d);
    strv_pushs(a, "--proc");
    strv_pushs(a, "/proc");
    strv_pushs(a, "--dev-bind");
    strv_pushs(a, "/dev");
    strv_pushs(a, "/dev");
    if (path_exists("/sys")) {
        strv_pushs(a, "--ro-bind");
        strv_pushs(a, "/sys");
        strv_pushs(a, "/sys");
    }
    for (size_t i = 0; i < nm; i++) {
        if (m[i].rewrite)
            continue;
        strv_pushs(a, m[i].ro ? "--ro-bind" : "--bind");
        strv_pushs(a, m[i].src);
        strv_pushs(a, m[i].dst);
    }
}

static int64_t limit_of(const struct fq_value *ctr, const char *res,
                        enum fq_qscale scale)
{
    const struct fq_value *lim = fq_value_path(ctr, "resources.limits");
    const struct fq_value *v = fq_map_get(lim, res);
    const char *txt = NULL;
    char num[64];
    if (v && v->type == FQ_V_STR)
        txt = v->u.str.s;
    else if (v && v->type == FQ_V_NUM) {
        snprintf(num, sizeof(num), "%s", v->u.num.raw ? v->u.num.raw : "0");
        txt = num;
    }
    int64_t out = 0;
    if (!txt || fq_quantity_parse(txt, scale, &out, NULL, NULL) != 0)
        return 0;
    return out;
}

/* Builds env, argv, cwd and mounts of a pod. Returns 0, or -1 with
 * s->waiting (ConfigMap missing) or s->why (cannot run) set. */
static int build_spec(struct fq_runner *r, const struct fq_value *pod,
                      const char *ns, const char *name, const char *poddir,
                      struct spec *s)
{
    const struct fq_value *podspec = fq_map_get(pod, "spec");
    const struct fq_value *ctr =
        fq_seq_at(fq_map_get(podspec, "containers"), 0);
    if (!ctr) {
        snprintf(s->why, sizeof(s->why), "pod has no containers");
        return -1;
    }

    /* volumes first: a missing ConfigMap makes the pod wait */
    int vrc = add_volume_mounts(r, ns, poddir, podspec, ctr, s);
    if (vrc != 0) {
        s->waiting = vrc == -1; /* -2: refused, s->why says why */
        return -1;
    }
    const struct fq_value *ann = fq_value_path(pod, "metadata.annotations");
    const char *from =
        fq_value_as_str(fq_map_get(ann, "flexq.dev/volumes-from"));
    if (from && *from) {
        const struct fq_object *other =
            fq_objstore_get(fq_engine_store(r->engine), FQ_KIND_POD, ns, from);
        if (other) {
            char *odir = fq_runner_pod_dir(r->data_dir, ns, from);
            const struct fq_value *ospec = fq_map_get(other->obj, "spec");
            int rc = add_volume_mounts(
                r, ns, odir, ospec,
                fq_seq_at(fq_map_get(ospec, "containers"), 0), s);
            free(odir);
            if (rc != 0) {
                s->waiting = rc == -1;
                return -1;
            }
        }
    }
    plan_mounts(r, s);

    /* env: nothing of flexqd's own (its environment may hold secrets);
     * HOME is the pod's directory, the one place it may write */
    env_set(&s->env, "PATH", DEFAULT_PATH);
    env_set(&s->env, "HOME", poddir);
    env_set(&s->env, "LANG", "C.UTF-8");
    const char *hn = fq_value_path_str(podspec, "hostname", name);
    s->hostname = fq_xstrdup(hn);
    env_set(&s->env, "HOSTNAME", hn);
    const struct fq_value *envs = fq_map_get(ctr, "env");
    for (size_t i = 0; i < fq_value_len(envs) && s->env.n < MAX_ENV; i++) {
        const struct fq_value *ev = fq_seq_at(envs, i);
        const char *k = fq_value_path_str(ev, "name", NULL);
        if (!k || !*k || strchr(k, '='))
            continue;
        const struct fq_value *val = fq_map_get(ev, "value");
        char *v;
        if (val && val->type == FQ_V_STR)
            v = expand(val->u.str.s, &s->env);
        else if (val && val->type == FQ_V_NUM)
            v = fq_xstrdup(val->u.num.raw ? val->u.num.raw : "");
        else if (fq_value_path(ev, "valueFrom.fieldRef.fieldPath"))
            v = field_ref(
                pod, fq_value_path_str(ev, "valueFrom.fieldRef.fieldPath", ""));
        else
            v = fq_xstrdup("");
        env_set(&s->env, k, v);
        free(v);
    }

    char *pdir = fq_xstrdup(poddir);
    env_set(&s->env, "FLEXQ_POD_NAME", name);
    env_set(&s->env, "FLEXQ_NODE_NAME",
            fq_value_path_str(pod, "spec.nodeName", ""));
    env_set(&s->env, "FLEXQ_POD_IP",
            fq_value_path_str(pod, "status.podIP", "127.0.0.1"));
    env_set(&s->env, "FLEXQ_POD_NAMESPACE", ns);
    env_set(&s->env, "FLEXQ_POD_DIR", pdir);
    env_set(&s->env, "FLEXQ_DATA_DIR", r->data_dir);
    char *mf = fq_xasprintf("%s/metrics.jsonl", poddir);
    env_set(&s->env, "FLEXQ_METRICS_FILE", mf);
    free(mf);
    free(pdir);
    const struct fq_value *labels = fq_value_path(pod, "metadata.labels");
    const char *cl = fq_value_as_str(fq_map_get(labels, "ray.io/cluster"));
    if (cl)
        env_set(&s->env, "FLEXQ_RAY_CLUSTER", cl);
    const char *nt = fq_value_as_str(fq_map_get(labels, "ray.io/node-type"));
    if (nt)
        env_set(&s->env, "FLEXQ_RAY_NODE_TYPE", nt);
    if (!env_get(&s->env, "POD_IP"))
        env_set(&s->env, "POD_IP",
                fq_value_path_str(pod, "status.podIP", "127.0.0.1"));
    const char *pp = env_get(&s->env, "PYTHONPATH");
    char *npp = pp && *pp ? fq_xasprintf("%s:%s", r->python_path, pp) :
                            fq_xstrdup(r->python_path);
    env_set(&s->env, "PYTHONPATH", npp);
    free(npp);
    if (!env_get(&s->env, "PYTHONUNBUFFERED"))
        env_set(&s->env, "PYTHONUNBUFFERED", "1");

    s->mem_bytes = limit_of(ctr, "memory", FQ_Q_UNIT);
    s->cpu_milli = limit_of(ctr, "cpu", FQ_Q_MILLI);
    s->gpus = limit_of(ctr, "nvidia.com/gpu", FQ_Q_UNIT);

    /* argv */
    const struct fq_value *cmd = fq_map_get(ctr, "command");
    const struct fq_value *args = fq_map_get(ctr, "args");
    const struct fq_value *lists[2] = {cmd, args};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < fq_value_len(lists[l]) && s->argv.n < MAX_ARGS;
             i++) {
            const char *w = fq_value_as_str(fq_seq_at(lists[l], i));
            if (w)
                strv_push(&s->argv, expand(w, &s->env));
        }
    if (s->argv.n == 0) {
        strv_pushs(&s->argv, "python3");
        strv_pushs(&s->argv, "-m");
        strv_pushs(&s->argv, "flexq.node");
    }

    const char *wd = fq_value_path_str(ctr, "workingDir", NULL);
    s->cwd = fq_xstrdup(wd && *wd ? wd : poddir);

    /* rewrite fallback for mounts bubblewrap cannot serve */
    bool any_rewrite = false;
    for (size_t i = 0; i < s->nmounts; i++)
        any_rewrite |= s->mounts[i].rewrite;
    if (any_rewrite) {
        struct fq_buf map = FQ_BUF_INIT;
        fq_buf_puts(&map, "");
        for (size_t i = 0; i < s->nmounts; i++)
            if (s->mounts[i].rewrite)
                fq_buf_printf(&map, "%s%s=%s", map.len ? ";" : "",
                              s->mounts[i].dst, s->mounts[i].src);
        env_set(&s->env, "FLEXQ_VOLUME_REWRITE", fq_buf_str(&map));
        fq_buf_release(&map);
        for (size_t i = 0; i < s->argv.n; i++) {
            char *nw = rewrite_path(s, s->argv.v[i]);
            if (nw) {
                free(s->argv.v[i]);
                s->argv.v[i] = nw;
            }
        }
        for (size_t i = 0; i < s->env.n; i++) {
            char *eq = strchr(s->env.v[i], '=');
            char *nw = rewrite_path(s, eq + 1);
            if (nw) {
                char *kv = fq_xasprintf("%.*s=%s", (int)(eq - s->env.v[i]),
                                        s->env.v[i], nw);
                free(nw);
                free(s->env.v[i]);
                s->env.v[i] = kv;
            }
        }
        char *nw = rewrite_path(s, s->cwd);
        if (nw) {
            free(s->cwd);
            s->cwd = nw;
        }
    }
    if (r->mounts == FQ_MOUNTS_REWRITE)
        rewrite_names(&s->env);
    return 0;
}

/*
 * execvp's lookup, done before fork with volume paths mapped to the host,
 * so that a missing command is reported as Kubernetes reports it. Returns
 * the path to exec (owned; the path inside the pod under bwrap) or NULL
 * with s->why set.
 */
static char *preflight(struct spec *s)
{
    const char *cmd = s->argv.v[0];
    if (strchr(cmd, '/')) {
        char *hp = host_path(s, cmd);
        struct stat st;
        int rc = stat(hp, &st);
        free(hp);
        if (rc != 0) {
            snprintf(s->why, sizeof(s->why),
                     "exec: \"%s\": stat %s: no such file or directory", cmd,
                     cmd);
            return NULL;
        }
        hp = host_path(s, cmd);
        rc = S_ISREG(st.st_mode) ? access(hp, X_OK) : -1;
        free(hp);
        if (rc != 0) {
            snprintf(s->why, sizeof(s->why), "exec: \"%s\": permission denied",
                     cmd);
            return NULL;
        }
        return fq_xstrdup(cmd);
    }
    /* PATH entries inside the pod, each mapped to the host for the test */
    const char *path = env_get(&s->env, "PATH");
    char *dirs = fq_xstrdup(path ? path : DEFAULT_PATH);
    char *save = NULL;
    int why = ENOENT;
    char *found = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d && !found;
         d = strtok_r(NULL, ":", &save)) {
        char *inside = fq_xasprintf("%s/%s", *d ? d : ".", cmd);
        char *hp = host_path(s, inside);
        struct stat st;
        if (stat(hp, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(hp, X_OK) == 0)
                found = inside, inside = NULL;
            else
                why = EACCES;
        }
        free(hp);
        free(inside);
    }
    free(dirs);
    if (!found)
        snprintf(s->why, sizeof(s->why),
                 why == EACCES ? "exec: \"%s\": permission denied" :
                                 "exec: \"%s\": executable file not found in "
                                 "$PATH",
                 cmd);
    return found;
}

/* Whether `port` can be bound on 127.0.0.1 right now. */
static bool port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return true; /* cannot tell; let the program find out */
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/*
 * The rendezvous ports come from a range the core hands out (pods.c);
 * the core cannot see the machine, so the runner checks them before the
 * coordinator (rank 0) starts and fails the pod clearly when another
 * program holds one, instead of letting JAX time out.
 */
static bool rendezvous_port_taken(struct spec *s)
{
    const char *rank = env_get(&s->env, "RANK");
    if (!rank)
        rank = env_get(&s->env, "TPU_WORKER_ID");
    if (!rank || strcmp(rank, "0") != 0)
        return false;
    const char *ports[2] = {NULL, env_get(&s->env, "MASTER_PORT")};
    const char *jc = env_get(&s->env, "JAX_COORDINATOR_ADDRESS");
    if (jc && strrchr(jc, ':'))
        ports[0] = strrchr(jc, ':') + 1;
    for (int i = 0; i < 2; i++) {
        int port = ports[i] ? atoi(ports[i]) : 0;
        if (port > 0 && port < 65536 && !port_free(port)) {
            snprintf(s->why, sizeof(s->why),
                     "rendezvous port %d (%s) is in use on this machine; "
                     "choose a free rendezvous port range for flexqd",
                     port, i == 0 ? "JAX_COORDINATOR_ADDRESS" : "MASTER_PORT");
            return true;
        }
    }
    return false;
}

static void write_hosts(const char *poddir, const struct spec *s)
{
    struct strv names = {0};
    rendezvous_names(&s->env, &names);
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_printf(&b, "127.0.0.1\tlocalhost %s", s->hostname);
    for (size_t i = 0; i < names.n; i++)
        fq_buf_printf(&b, " %s", names.v[i]);
    fq_buf_puts(&b, "\n::1\tlocalhost ip6-localhost ip6-loopback\n");
    char *path = fq_xasprintf("%s/hosts", poddir);
    write_file(path, b.data, b.len);
    free(path);
    fq_buf_release(&b);
    strv_release(&names);
}

/* Makes the pod's cgroups and writes its limits. Returns a note for the
 * log when limits are not enforced (static string) or NULL. */
static const char *setup_cgroups(struct fq_runner *r, struct proc *p,
                                 const struct spec *s)
{
    if (!s->mem_bytes && !s->cpu_milli)
        return NULL;
    if (r->cgroups == FQ_CGROUPS_NONE)
        return "flexq: resource limits are not enforced on this machine (no "
               "writable cgroup v2 or v1 hierarchy)";
    char leaf[512];
    snprintf(leaf, sizeof(leaf), "%s_%s_%s", p->ns, p->name,
             p->uid ? p->uid : "");
    char val[64];
    if (s->mem_bytes) {
        p->cg_mem = fq_xasprintf("%s/%s", r->cg_mem_root, leaf);
        if (mkdir(p->cg_mem, 0755) != 0 && errno != EEXIST)
            goto fail;
        snprintf(val, sizeof(val), "%lld", (long long)s->mem_bytes);
        char *f =
            fq_xasprintf("%s/%s", p->cg_mem,
                         r->cgroups == FQ_CGROUPS_V2 ? "memory.max" :
                                                       "memory.limit_in_bytes");
        int rc = write_small(f, val);
        free(f);
        if (rc != 0)
            goto fail;
        if (r->cgroups == FQ_CGROUPS_V2) {
            /* no swap, so that the limit means an OOM kill */
            char *sw = fq_xasprintf("%s/memory.swap.max", p->cg_mem);
            write_small(sw, "0");
            free(sw);
        }
    }
    if (s->cpu_milli) {
        if (r->cgroups == FQ_CGROUPS_V2 && p->cg_mem) {
            p->cg_cpu = fq_xstrdup(p->cg_mem);
        } else {
            p->cg_cpu = fq_xasprintf("%s/%s", r->cg_cpu_root, leaf);
            if (mkdir(p->cg_cpu, 0755) != 0 && errno != EEXIST)
                goto fail;
        }
        int rc;
        if (r->cgroups == FQ_CGROUPS_V2) {
            snprintf(val, sizeof(val), "%lld 100000",
                     (long long)s->cpu_milli * 100);
            char *f = fq_xasprintf("%s/cpu.max", p->cg_cpu);
            rc = write_small(f, val);
            free(f);
        } else {
            char *f = fq_xasprintf("%s/cpu.cfs_period_us", p->cg_cpu);
            write_small(f, "100000");
            free(f);
            snprintf(val, sizeof(val), "%lld", (long long)s->cpu_milli * 100);
            f = fq_xasprintf("%s/cpu.cfs_quota_us", p->cg_cpu);
            rc = write_small(f, val);
            free(f);
        }
        if (rc != 0)
            goto fail;
    }
    return NULL;
fail:
    if (p->cg_cpu && (!p->cg_mem || strcmp(p->cg_cpu, p->cg_mem)))
        rmdir(p->cg_cpu);
    if (p->cg_mem)
        rmdir(p->cg_mem);
    free(p->cg_mem);
    free(p->cg_cpu);
    p->cg_mem = p->cg_cpu = NULL;
    return "flexq: resource limits could not be written to the cgroup; "
           "they are not enforced for this pod";
}

/* The OOM-kill count of a pod's memory cgroup (0 when unknown). */
static long oom_kills(const struct fq_runner *r, const struct proc *p)
{
    if (!p->cg_mem)
        return 0;
    char *f = fq_xasprintf("%s/%s", p->cg_mem,
                           r->cgroups == FQ_CGROUPS_V2 ? "memory.events" :
                                                         "memory.oom_control");
    char buf[1024];
    long n = 0;
    if (read_small(f, buf, sizeof(buf)) > 0) {
        const char *k = strstr(buf, "oom_kill ");
        if (k)
            n = strtol(k + 9, NULL, 10);
    }
    free(f);
    return n;
}

static int gpu_take(struct fq_runner *r, int64_t n, uint64_t *mask,
                    struct fq_buf *list)
{
    *mask = 0;
    fq_buf_puts(list, "");
    for (int i = 0; i < r->cfg.gpus && n > 0; i++)
        if (!(r->gpus_used & (1ull << i))) {
            *mask |= 1ull << i;
            fq_buf_printf(list, "%s%d", list->len ? "," : "", i);
            n--;
        }
    if (n > 0) {
        *mask = 0;
        return -1;
    }
    r->gpus_used |= *mask;
    return 0;
}

struct child_args {
    const char *exec_path;
    char *const *argv;
    char *const *envp;
    int logfd, errfd, closefd;
    const char *cwd, *cg_mem, *cg_cpu, *cg_kill;
    bool bwrap;
    const struct nsplan *plan;
    const struct fq_sandbox *sb; /* the pod's identity and limits */
    int keepfd;                  /* bwrap's --seccomp pipe, or -1 */
    int exec_fd; /* exec this (pod_init.c's binary) instead, or -1 */
    bool pidns;  /* the child is pid 1 of a new pid namespace */
};

/* Tells the parent why the child could not run (errno through the
 * close-on-exec pipe) and ends; the step goes to the pod's log. */
static void child_fail(const struct child_args *a, const char *what,
                       const char *step)
{
    int e = errno;
    if (step) {
        char line[256];
        int n = snprintf(line, sizeof(line), "flexq: %s failed at %s: %s\n",
                         what, step, strerror(e));
        ssize_t w = write(2, line, (size_t)n);
        (void)w;
    }
    ssize_t w = write(a->errfd, &e, sizeof(e));
    (void)w;
    _exit(127);
}

/* In the child after fork: only async-signal-safe calls plus the writes
 * the single-threaded daemon allows. Never returns. */
static void child_exec(const struct child_args *a)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    char pid[32];
    int pl = snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    const char *cgs[3] = {a->cg_mem, a->cg_cpu, a->cg_kill};
    for (int i = 0; i < 3; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup |= cgs[i] && cgs[j] && !strcmp(cgs[i], cgs[j]);
        if (!cgs[i] || dup)
            continue;
        char f[PATH_MAX];
        snprintf(f, sizeof(f), "%s/cgroup.procs", cgs[i]);
        int fd = open(f, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t w = write(fd, pid, (size_t)pl);
            (void)w;
            close(fd);
        }
    }
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) {
        dup2(nul, 0);
        if (nul != 0)
            close(nul);
    }
    dup2(a->logfd, 1);
    dup2(a->logfd, 2);
    const char *step = NULL;
    if (a->plan && ns_setup(a->plan, &step) != 0)
        child_fail(a, "mount namespace setup", step);
    if (!a->bwrap && a->cwd && chdir(a->cwd) != 0)
        child_fail(a, "chdir", NULL);
    if (a->bwrap) {
        /* bubblewrap and setpriv do the rest (runner.c's argv) */
        if (a->keepfd >= 0)
            fcntl(a->keepfd, F_SETFD, 0);
        if (fq_sandbox_limits(a->sb, &step) != 0)
            child_fail(a, "the pod's sandbox", step);
    } else if (fq_sandbox_enter(a->sb, &step) != 0) {
        child_fail(a, "the pod's sandbox", step);
    }
    if (a->exec_fd >= 0) {
        /* pod_init.c starts with every signal blocked, so that a SIGTERM
         * sent before it is ready stays pending: one that reaches a pid 1
         * without a handler and unblocked is dropped by the kernel */
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        syscall(SYS_execveat, a->exec_fd, "", a->argv, a->envp, AT_EMPTY_PATH);
    } else
        execve(a->exec_path, a->argv, a->envp);
    child_fail(a, "exec", NULL);
}

static int child_main(void *arg)
{
    const struct child_args *a = arg;
    close(a->closefd);
    child_exec(a);
    return 127;
}

#if defined(__SANITIZE_ADDRESS__)
# define FQ_RUNNER_FORK 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define FQ_RUNNER_FORK 1
# endif
#endif

#define CHILD_STACK (256 * 1024)

/*
 * Starts the child. fork() copies the daemon's page tables, which costs in
 * proportion to flexqd's memory (the largest cost of starting a short job
 * in bench/jobs); clone(CLONE_VM | CLONE_VFORK), as posix_spawn does,
 * shares the memory and suspends flexqd until the child has exec'd or
 * exited. The child only makes system calls on its own stack, which is
 * what makes sharing safe. The stack is the runner's, allocated once:
 * only one child uses it at a time (flexqd is suspended meanwhile), and a
 * 256 KiB malloc and free per pod made glibc consolidate its heap on every
 * start. Under AddressSanitizer plain fork is used.
 */
static pid_t spawn(struct fq_runner *r, struct child_args *a)
{
#ifdef FQ_RUNNER_FORK
    (void)r;
    pid_t pid = fork_ns(a->pidns);
    if (pid == 0)
        _exit(child_main(a));
    return pid;
#else
    if (!r->child_stack)
        r->child_stack = fq_xmalloc(CHILD_STACK);
    return clone(
        child_main, r->child_stack + CHILD_STACK,
        CLONE_VM | CLONE_VFORK | SIGCHLD | (a->pidns ? CLONE_NEWPID : 0), a);
#endif
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

/* Removes <data>/pods/<ns>/<name> (never following links out of it). */
static void remove_pod_dir(const struct fq_runner *r, const char *ns,
                           const char *name)
{
    if (!name || !*name || strchr(name, '/') || !strcmp(name, "..") ||
        (ns && (strchr(ns, '/') || !strcmp(ns, ".."))))
        return;
    char *dir = fq_runner_pod_dir(r->data_dir, ns, name);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/*
 * Metrics to the job's status. The training helper appends JSON lines to
 * the pod's metrics.jsonl; the last rank-0 "report" (a worker's) or
 * "result" (the driver's) becomes status.metrics of the RayJob or Job the
 * pod runs for, so `flexq get -o yaml`, describe and the API show it.
 */
static void metrics_target(const struct fq_value *pod, struct proc *p)
{
    const struct fq_value *l = fq_value_path(pod, "metadata.labels");
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
            fq_seq_at(fq_value_path(pod, "spec.containers"), 0), "env");
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
        fq_seq_at(fq_value_path(pod, "status.containerStatuses"), 0),
        "containerID"));
    pid_t pid = fq_sandbox_container_pid(cid, r->boot);
    if (pid > 1) {
        kill(-pid, SIGKILL); /* its process group, then itself */
        kill(pid, SIGKILL);
    }
    const char *policy = fq_value_path_str(pod, "spec.restartPolicy", "Always");
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
        fq_seq_at(fq_value_path(o, "status.containerStatuses"), 0);
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
    const char *ns = fq_value_path_str(pod, "metadata.namespace", "");
    const char *name = fq_value_path_str(pod, "metadata.name", "");
    const char *node = fq_value_path_str(pod, "spec.nodeName", "");
    const char *phase = fq_value_path_str(pod, "status.phase", "Pending");
    if (!*name || !*node || terminal_phase(phase))
        return 0;
    if (r->node_name && strcmp(node, r->node_name))
        return 0;
    if (fq_value_path(pod, "metadata.deletionTimestamp"))
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
    if (make_pod_dir(dir) != 0) {
        ret = fq_err_set(err, FQ_EIO, "cannot create %s: %s", dir,
                         strerror(errno));
        goto out;
    }
    bool peer = wants_peer_files(pod);
    if (build_spec(r, pod, ns, name, dir, &s) != 0) {
        if (!s.waiting) {
            if (peer)
                write_status(dir, "Failed", 128, "ContainerCannotRun", s.why);
            report(r, ns, name, "Failed", false, 128, "ContainerCannotRun",
                   s.why, now_ms);
        }
        goto out; /* waiting: fq_runner_poll retries */
    }
    if (peer) {
        char *pj = fq_json_dumps(pod, FQ_JSON_COMPACT);
        char *pjp = fq_xasprintf("%s/pod.json", dir);
        write_file(pjp, pj, strlen(pj));
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
    exec_path = preflight(&s);
    if (!exec_path && !strcmp(s.argv.v[0], "python")) {
        /* Images have `python`; many hosts only `python3`. */
        char why[sizeof(s.why)];
        memcpy(why, s.why, sizeof(why));
        free(s.argv.v[0]);
        s.argv.v[0] = fq_xstrdup("python3");
        exec_path = preflight(&s);
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

    if (rendezvous_port_taken(&s)) {
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
    }

    struct proc p;
    memset(&p, 0, sizeof(p));
    p.ns = fq_xstrdup(ns);
    p.name = fq_xstrdup(name);
    p.uid = fq_xstrdup(fq_value_path_str(pod, "metadata.uid", ""));
    p.dir = fq_xstrdup(dir);
    p.peer_files = peer;
    p.started_ms = now_ms;
    metrics_target(pod, &p);

    /* GPUs are handed out only when flexqd knows this machine's (the
     * local provider); with simulated nodes a GPU request is the model's
     * business and the process runs on whatever the host has. */
    if (r->cfg.gpus > 0) {
        struct fq_buf list = FQ_BUF_INIT;
        if (gpu_take(r, s.gpus, &p.gpus, &list) != 0) {
            char msg[160];
            snprintf(msg, sizeof(msg),
                     "%lld GPUs requested, fewer are free on this machine",
                     (long long)s.gpus);
            log_note(logfd, "flexq: %s", msg);
            report(r, ns, name, "Failed", false, 128,
                   "UnexpectedAdmissionError", msg, now_ms);
            fq_buf_release(&list);
            proc_release(&p);
            goto out;
        }
        env_set(&s.env, "CUDA_VISIBLE_DEVICES", fq_buf_str(&list));
        fq_buf_release(&list);
    }
    const char *note = setup_cgroups(r, &p, &s);
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
    if (peer || env_get(&s.env, "FLEXQ_RAY_CLUSTER")) {
        nsdir = fq_xstrdup(dir);
        *strrchr(nsdir, '/') = '\0';
    }
    if (bw) {
        write_hosts(dir, &s);
        scfd = fq_sandbox_filter_pipe(sb);
        if (scfd >= 0 && scfd < 3) { /* never one the child dup2s over */
            int hi = fcntl(scfd, F_DUPFD_CLOEXEC, 3);
            close(scfd);
            scfd = hi;
        }
        strv_pushs(&bargv, r->bwrap);
        bwrap_root_args(&bargv, s.mounts, s.nmounts);
        bwrap_sandbox_args(r, &bargv, mask, dir, nsdir, scfd);
        if (path_exists("/etc/hosts")) {
            char *hp = fq_xasprintf("%s/hosts", dir);
            strv_pushs(&bargv, "--ro-bind");
            strv_pushs(&bargv, hp);
            strv_pushs(&bargv, "/etc/hosts");
            free(hp);
        }
        strv_pushs(&bargv, "--unshare-uts");
        strv_pushs(&bargv, "--hostname");
        strv_pushs(&bargv, s.hostname);
        strv_pushs(&bargv, "--chdir");
        strv_pushs(&bargv, s.cwd);
        strv_pushs(&bargv, "--");
        setpriv_args(r, &bargv, sb->uid, sb->gid);
        strv_pushs(&bargv, exec_path);
        for (size_t i = 1; i < s.argv.n; i++)
            strv_pushs(&bargv, s.argv.v[i]);
        argv = bargv.v;
        path_to_exec = r->bwrap;
    }

    struct nsplan plan;
    bool use_ns = r->mounts == FQ_MOUNTS_UNSHARE && needs_ns;
    if (use_ns) {
        write_hosts(dir, &s);
        nsplan_init(&plan, dir, s.mounts, s.nmounts, s.hostname);
        plan.data_dir = mask;
        plan.poddir = dir;
        plan.nsdir = nsdir;
        plan.hide = (const char *const *)r->hide;
        plan.new_proc = pidns;
        /* the host's tree itself when every volume's target exists: no
         * tmpfs root and no bind of each top-level entry (the cost of a
         * pod's start is flexqd's: it waits for the child to exec) */
        plan.in_place = true;
        for (size_t i = 0; i < s.nmounts; i++)
            if (!s.mounts[i].rewrite && !path_exists(s.mounts[i].dst))
                plan.in_place = false;
    }
    if (pidns) { /* pod_init.c, then the command */
        strv_pushs(&iargv, FQ_POD_INIT_ARGV0);
        strv_pushs(&iargv, exec_path);
        for (size_t i = 1; i < s.argv.n; i++)
            strv_pushs(&iargv, s.argv.v[i]);
        argv = iargv.v;
    }

    int ep[2];
    if (pipe2(ep, O_CLOEXEC) != 0) {
        ret = fq_err_set(err, FQ_EIO, "pipe: %s", strerror(errno));
        if (scfd >= 0)
            close(scfd);
        if (use_ns)
            nsplan_release(&plan);
        proc_release(&p);
        goto out;
    }
    struct child_args ca = {path_to_exec, argv,     s.env.v,
                            logfd,        ep[1],    ep[0],
                            s.cwd,        p.cg_mem, p.cg_cpu,
                            p.cg_kill,    bw,       use_ns ? &plan : NULL,
                            sb,           scfd,     pidns ? r->self_fd : -1,
                            pidns};
    pid_t pid = spawn(r, &ca);
    if (scfd >= 0)
        close(scfd);
    if (pid < 0) {
        ret = fq_err_set(err, FQ_EIO, "fork: %s", strerror(errno));
        close(ep[0]);
        close(ep[1]);
        r->gpus_used &= ~p.gpus;
        if (use_ns)
            nsplan_release(&plan);
        proc_release(&p);
        goto out;
    }
    close(ep[1]);
    if (use_ns)
        nsplan_release(&plan);
    setpgid(pid, pid); /* both sides, so no signal races the child's own */
    int child_errno = 0;
    ssize_t n;
    while ((n = read(ep[0], &child_errno, sizeof(child_errno))) < 0 &&
           errno == EINTR)
        ;
    close(ep[0]);
    p.pid = pid;
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
     * tells the process apart from a later one with the same pid */
    report(r, ns, name, "Running", true, 0, NULL, NULL, now_ms);
    record_container_id(r, ns, name, pid);
out:
    if (logfd >= 0)
        close(logfd);
    free(nsdir);
    free(mask);
    strv_release(&bargv);
    strv_release(&iargv);
    free(exec_path);
    spec_release(&s);
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
        strv_pushs(&r->stale_cg, dir);
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
    long ooms = oom_kills(r, p);
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
    if (!p->reported && p->peer_files)
        write_status(p->dir, phase, code, reason, msg);
    /* the pod ends with its main process, as a container ends with its
     * pid 1: whatever it left behind (setsid or not) is killed */
    drop_cgroup(r, p->cg_kill);
    drop_cgroup(r, p->cg_mem);
    if (p->cg_cpu && (!p->cg_mem || strcmp(p->cg_cpu, p->cg_mem)))
        drop_cgroup(r, p->cg_cpu);
    r->gpus_used &= ~p->gpus;
    char *ns = p->ns, *name = p->name;
    bool reported = p->reported;
    bool remove = p->remove_dir;
    p->ns = p->name = NULL;
    proc_release(p);
    r->procs[idx] = r->procs[--r->nprocs];
    note_exit(r, ns, name, now_ms);
    if (remove)
        remove_pod_dir(r, ns, name);
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
            remove_pod_dir(r, c->ns, c->name);
        }
        return;
    }
    if (!c->obj)
        return;
    if (fq_value_path(c->obj, "metadata.deletionTimestamp")) {
        fq_runner_stop_pod(r, c->ns, c->name, now_ms);
        return;
    }
    /* A pod the core ended while its process runs (an activeDeadline, a
     * RayJob that finished or was stopped, a Job that failed): the process
     * goes too, as the kubelet kills the containers of a pod that was made
     * terminal. Its own exit reports nothing new: a terminal pod keeps the
     * status the core gave it. */
    if (terminal_phase(fq_value_path_str(c->obj, "status.phase", ""))) {
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
        if (*fq_value_path_str(pods[i]->obj, "spec.nodeName", "") &&
            !terminal_phase(
                fq_value_path_str(pods[i]->obj, "status.phase", "")) &&
            !find_proc(r, pods[i]->ns, pods[i]->name)) {
            strv_pushs(&keys, pods[i]->ns);
            strv_pushs(&keys, pods[i]->name);
        }
    free(pods);
    for (size_t i = 0; i + 1 < keys.n; i += 2) {
        const struct fq_object *o =
            fq_objstore_get(store, FQ_KIND_POD, keys.v[i], keys.v[i + 1]);
        if (o)
            fq_runner_start_pod(r, o->obj, now_ms, NULL);
    }
    strv_release(&keys);
    r->scanned = true;
}
