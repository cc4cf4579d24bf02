/*
 * sandbox.h - what a pod's process may do: its user, capabilities,
 * no_new_privs, seccomp filter and rlimits (the runner's child-start path).
 *
 * The runner decides the pod's identity in the parent (fq_sandbox_ids:
 * the pod user, or the manifest's runAsUser / runAsGroup when the
 * administrator allows them) and calls fq_sandbox_enter in the child,
 * after the mounts and just before execve. bubblewrap pods get the same
 * through bubblewrap's own options plus setpriv (process.c builds the
 * argv); the filter travels to bubblewrap through a pipe
 * (fq_sandbox_filter_pipe).
 *
 * Nothing here allocates in the child: fq_sandbox_enter only makes
 * system calls, as a child of clone(CLONE_VM | CLONE_VFORK) must.
 */
#ifndef FLEXQ_SANDBOX_H
#define FLEXQ_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/filter.h>

#include "flexq/value.h"

#define FQ_SANDBOX_USER       "flexq-pod"
#define FQ_SANDBOX_FILTER_MAX 160

/* Who a pod runs as and what it may use (filled in the parent). */
struct fq_sandbox {
    bool change_ids; /* switch to uid/gid (flexqd is root) */
    uid_t uid;
    gid_t gid;
    long max_procs; /* RLIMIT_NPROC (per uid, as the kernel counts) */
    long max_files; /* RLIMIT_NOFILE */
    bool seccomp;   /* load the filter (fq_sandbox_enter) */
    struct sock_filter filter[FQ_SANDBOX_FILTER_MAX];
    unsigned short filter_len; /* 0: no filter for this architecture */
};

/* Builds sb->filter: system calls a pod has no business making (mount,
 * namespaces, modules, ptrace, kexec, keyrings, bpf, io_uring ...) fail
 * with EPERM; other architectures' calls kill the process. */
void fq_sandbox_filter_build(struct fq_sandbox *sb);

/*
 * Resolves the pods' default identity once at start: `spec` is a user
 * name or "UID:GID" (NULL: FQ_SANDBOX_USER). A name that does not exist
 * falls back to 65534:65534 (nobody) and says so in `note` (owned). Not
 * root: the pods run as flexqd's own user and `note` says that.
 * Returns whether ids can be changed.
 */
bool fq_sandbox_default_ids(const char *spec, uid_t *uid, gid_t *gid,
                            char **note);

/*
 * The identity of one pod: the default, or the pod's (or its first
 * container's) securityContext.runAsUser / runAsGroup when `allow` is
 * set. Returns 0, or -1 with `why` (size bytes) saying what is refused.
 */
int fq_sandbox_pod_ids(const struct fq_value *pod, bool allow, uid_t def_uid,
                       gid_t def_gid, uid_t *uid, gid_t *gid, char *why,
                       size_t size);

/*
 * In the child, after the mounts and before execve: rlimits, groups,
 * gid, uid, no capabilities, PR_SET_PDEATHSIG again (a change of
 * credentials clears it), no_new_privs, the seccomp filter. Returns 0, or
 * -1 with errno set and *step naming what failed.
 */
int fq_sandbox_enter(const struct fq_sandbox *sb, const char **step);

/* Only the rlimits and no_new_privs (a child that execs bubblewrap). */
int fq_sandbox_limits(const struct fq_sandbox *sb, const char **step);

/* A pipe's read end (O_CLOEXEC) holding the filter as bubblewrap's
 * --seccomp reads it; -1 on error. The caller closes it. */
int fq_sandbox_filter_pipe(const struct fq_sandbox *sb);

/*
 * Where the tmpfs that hides the data directory goes inside a pod: the
 * data directory itself, or its highest ancestor the pod's user may not
 * enter (a mkdtemp directory of mode 0700 around it): the pod could see
 * nothing there anyway, and its own directory must be reachable. Returns
 * owned.
 */
char *fq_sandbox_hide_root(const char *data_dir, bool change_ids, uid_t uid,
                           gid_t gid);

/*
 * Whether a hostPath volume would show flexqd's data directory or one of
 * the `hide` files (NULL-terminated) to the pod; then `why` (size bytes)
 * says so, naming the volume.
 */
bool fq_sandbox_path_refused(const char *src, const char *data_dir,
                             const char *const *hide, const char *vname,
                             char *why, size_t size);

/* Without namespaces: the data directory becomes 0711 (the pod user
 * reaches its own directory, lists nothing) and flexqd's own files
 * directly in it (the database) lose group and other access. */
void fq_sandbox_protect_dir(const char *data_dir);

/* containerID of a process just started: "flexq://<boot>/<pid>/<start
 * time>". Returns owned. */
char *fq_sandbox_container_id(const char *boot, pid_t pid);

/* The pid of a containerID when that very process still runs on this boot
 * (same pid and start time), else 0. */
pid_t fq_sandbox_container_pid(const char *cid, const char *boot);

/* Field 22 of /proc/PID/stat (start time in clock ticks since boot), or
 * 0 when the process does not exist. */
unsigned long long fq_proc_starttime(pid_t pid);

/* The first 8 characters of the kernel's boot id ("" when unknown);
 * `out` has at least 9 bytes. */
void fq_boot_id(char *out);

#endif
