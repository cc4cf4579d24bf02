/*
 * internal.h - what the files of the pod runner share: the runner's state
 * (struct fq_runner, struct proc), a pod's process as it is built
 * (struct spec, struct mount), the namespace plan, and the functions one
 * file calls in another (named rn_*).
 *
 * Private to src/daemon/runner/. The files, in the order a pod goes
 * through them:
 *
 *   process.c  the pods' processes: start, follow, report, finish, poll
 *   podspec.c  a Pod object -> argv, env, mounts, limits (struct spec)
 *   spawn.c    the pod's cgroups and GPUs, the child's exec
 *   mounts.c   the pod's own mount, UTS and pid namespaces (unshare mode)
 *   probe.c    what this machine allows, found once at start
 *   podfs.c    string vectors, env lists, the pod's files
 */
#ifndef FLEXQ_RUNNER_INTERNAL_H
#define FLEXQ_RUNNER_INTERNAL_H

#define _GNU_SOURCE /* pipe2, clone */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/kinds.h"
#include "flexq/value.h"
#include "runner/runner.h"
#include "runner/sandbox.h"

#define DEFAULT_PATH \
 "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#define MAX_ARGS 4096

#define MAX_ENV 4096

#define MAX_GPUS 64

struct strv {
    char **v; /* owned strings, NULL-terminated when n < cap */
    size_t n, cap;
};

struct mount {
    char *src; /* host path */
    char *dst; /* path inside the pod */
    bool ro;
    bool rewrite;   /* served by the rewrite fallback */
    bool empty_dir; /* the pod's own directory: handed to its user */
    bool secret;    /* a Secret volume: its files handed to the pod's user,
                       who reads them as a root container would */
    int fd;         /* a hostPath's source, opened (O_PATH) when it was
                       checked, which the bind uses; -1 otherwise */
};

/* lchown of path and everything under it (at most 16 levels, links not
 * followed); failures are skipped. */
void rn_chown_tree(const char *path, uid_t uid, gid_t gid);

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
    bool has_pump; /* its output goes through a log pump (logpump.c) */
    int pump_done; /* read end, end-of-file once the pump has written all */
};

struct exited {
    char *ns, *name;
    int count;
    int64_t at_ms;
};

/* A pod's status.json to write again once its log is whole. */
struct rn_late_log {
    int done;  /* the pump's done descriptor (owned) */
    char *dir; /* the pod's directory (owned) ... */
    dev_t dev; /* ... as it was then */
    ino_t ino;
    char *status; /* the text with logComplete true (owned) */
};

void rn_late_log_release(struct rn_late_log *l);

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
    int pump_ctl;      /* socket to the log pump (logpump.c), or -1 */

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
    /* Ray pods reported ended before their log pump had written their
     * last bytes: status.json says "logComplete": false until the pump
     * lets go, then is written again (process.c, late_logs). */
    struct rn_late_log *late;
    size_t nlate, late_cap;
};

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

struct spec {
    struct strv argv;
    struct strv env;
    char *cwd;
    char *hostname;
    struct strv dns_names; /* more names of this machine for /etc/hosts:
                              the pod's FQDN under its subdomain and the
                              peers of annotation flexq.dev/dns-names */
    struct mount *mounts;
    size_t nmounts, mcap;
    int64_t mem_bytes; /* 0: no limit */
    int64_t cpu_milli; /* 0: no limit */
    int64_t gpus;
    bool waiting;            /* a ConfigMap or Secret is missing */
    const char *wait_reason; /* the kubelet's: ContainerCreating (a
                                volume), CreateContainerConfigError (env) */
    char why[512];           /* why it waits / cannot run */
};

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

/* podfs.c */
void rn_strv_push(struct strv *s, char *owned);
void rn_strv_pushs(struct strv *s, const char *str);
void rn_strv_release(struct strv *s);
const char *rn_env_get(const struct strv *env, const char *k);
void rn_env_set(struct strv *env, const char *k, const char *v);
char *rn_expand(const char *s, const struct strv *env);
int rn_mkdir_p(const char *path, mode_t mode);
/* Removes the tree at path, depth first, never following a link out of it
 * (a pod's files may hold links to anywhere). */
void rn_rm_tree(const char *path);
void rn_set_topdir(const char *dir);
int rn_make_pod_dir(const char *dir);
int rn_write_file(const char *path, const char *data, size_t len);
int rn_write_small(const char *path, const char *s);
ssize_t rn_read_small(const char *path, char *buf, size_t size);
bool rn_path_exists(const char *p);
char *rn_which(const char *cmd, const char *path, int *why);

/* process.c */
void rn_proc_release(struct proc *p);

/* mounts.c */
void rn_nsplan_release(struct nsplan *pl);
/* in_place: every volume's target exists on the host, so the pod's tree
 * is the host's (no tmpfs root, no scan of /, no root directory made). */
void rn_nsplan_init(struct nsplan *pl, const char *poddir,
                    const struct mount *m, size_t nm, const char *hostname,
                    bool in_place);
int rn_ns_setup(const struct nsplan *pl, const char **step);

/* probe.c */
void rn_bwrap_sandbox_args(const struct fq_runner *r, struct strv *a,
                           const char *mask, const char *poddir,
                           const char *nsdir, int seccomp_fd);
void rn_setpriv_args(const struct fq_runner *r, struct strv *a, uid_t uid,
                     gid_t gid);
pid_t rn_fork_ns(bool pidns);

/* podspec.c */
void rn_spec_release(struct spec *s);
void rn_bwrap_root_args(struct strv *a, const struct mount *m, size_t nm);
int rn_build_spec(struct fq_runner *r, const struct fq_value *pod,
                  const char *ns, const char *name, const char *poddir,
                  struct spec *s);
char *rn_preflight(struct spec *s);
bool rn_rendezvous_port_taken(struct spec *s);
void rn_write_hosts(const char *poddir, const struct spec *s);

/* spawn.c */
const char *rn_setup_cgroups(struct fq_runner *r, struct proc *p,
                             const struct spec *s);
long rn_oom_kills(const struct fq_runner *r, const struct proc *p);
int rn_gpu_take(struct fq_runner *r, int64_t n, uint64_t *mask,
                struct fq_buf *list);
pid_t rn_spawn(struct fq_runner *r, struct child_args *a);
void rn_remove_pod_dir(const struct fq_runner *r, const char *ns,
                       const char *name);

#endif
