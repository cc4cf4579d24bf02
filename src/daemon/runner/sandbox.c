/*
 * sandbox.c - a pod's identity, capabilities, no_new_privs, seccomp filter
 * and rlimits (see sandbox.h; docs/runtime.md says what this isolates).
 *
 * The seccomp filter is a raw BPF program, not libseccomp: a deny list of
 * system calls that only an administrator needs (mounts, namespaces,
 * modules, kexec, reboot, ptrace and cross-process memory, keyrings, bpf,
 * perf events, io_uring, clock setting, swap, accounting ...), answered
 * with EPERM so that programs that probe for them carry on; clone with a
 * namespace flag gets EPERM too and clone3 ENOSYS (its flags live in
 * memory a filter cannot read; libc falls back to clone). A call made
 * through another architecture's ABI (x32, i386 on x86_64) kills the
 * process. What it does not do: restrict the rest (sockets, files, exec):
 * the pod user's permissions and the mount namespace do that.
 *
 * fq_sandbox_enter runs in the child of clone(CLONE_VM | CLONE_VFORK):
 * raw system calls only (glibc's setuid family would try to broadcast to
 * threads it believes share the process), no allocation.
 */
#define _GNU_SOURCE
#include "runner/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/paths.h"

#if defined(__x86_64__)
# define FQ_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
# define FQ_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

bool fq_sandbox_default_ids(const char *spec, uid_t *uid, gid_t *gid,
                            char **note)
{
    *uid = getuid();
    *gid = getgid();
    if (geteuid() != 0) {
        *note = fq_xasprintf("pods run as flexqd's own uid %ld (flexqd is "
                             "not root and cannot switch users)",
                             (long)geteuid());
        return false;
    }
    const char *want = spec && *spec ? spec : FQ_SANDBOX_USER;
    unsigned long u, g;
    char end;
    if (sscanf(want, "%lu:%lu%c", &u, &g, &end) == 2) {
        *uid = (uid_t)u;
        *gid = (gid_t)g;
        *note = fq_xasprintf("pods run as uid %lu gid %lu", u, g);
        return true;
    }
    struct passwd *pw = getpwnam(want);
    if (pw) {
        *uid = pw->pw_uid;
        *gid = pw->pw_gid;
        *note = fq_xasprintf("pods run as %s (uid %ld gid %ld)", want,
                             (long)*uid, (long)*gid);
        return true;
    }
    *uid = 65534;
    *gid = 65534;
    *note = fq_xasprintf("pods run as uid 65534 gid 65534: no user %s on "
                         "this machine (scripts/install-deps.sh creates it)",
                         want);
    return true;
}

/* A non-negative integer at `path` of `obj`: 1 found, 0 absent, -1 bad. */
static int int_at(const struct fq_value *obj, const char *path, long long *out)
{
    const struct fq_value *v = fq_value_path(obj, path);
    if (!v)
        return 0;
    if (v->type != FQ_V_NUM || v->u.num.i < 0 || v->u.num.i > 0x7fffffffLL)
        return -1;
    *out = v->u.num.i;
    return 1;
}

int fq_sandbox_pod_ids(const struct fq_value *pod, bool allow, uid_t def_uid,
                       gid_t def_gid, uid_t *uid, gid_t *gid, char *why,
                       size_t size)
{
    *uid = def_uid;
    *gid = def_gid;
    const struct fq_value *ctr =
        fq_seq_at(fq_value_path(pod, FQ_POD_CONTAINERS), 0);
    static const char *const keys[2] = {"runAsUser", "runAsGroup"};
    for (int k = 0; k < 2; k++) {
        char cpath[64], ppath[64];
        snprintf(cpath, sizeof(cpath), "securityContext.%s", keys[k]);
        snprintf(ppath, sizeof(ppath), "spec.securityContext.%s", keys[k]);
        long long v = 0;
        int rc = int_at(ctr, cpath, &v);
        const char *where = "spec.containers[0].securityContext";
        if (rc == 0) {
            rc = int_at(pod, ppath, &v);
            where = "spec.securityContext";
        }
        if (rc < 0) {
            snprintf(why, size, "%s.%s: not a non-negative integer", where,
                     keys[k]);
            return -1;
        }
        if (rc == 0)
            continue;
        if (!allow) {
            snprintf(why, size,
                     "%s.%s is not allowed by this flexqd (its administrator "
                     "can start it with --allow-run-as-user)",
                     where, keys[k]);
            return -1;
        }
        if (k == 0)
            *uid = (uid_t)v;
        else
            *gid = (gid_t)v;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* the filter                                                           */

#define ADD(code, k, jt, jf)                                       \
 do {                                                              \
  if (n < FQ_SANDBOX_FILTER_MAX)                                   \
   f[n++] = (struct sock_filter)BPF_JUMP((code), (k), (jt), (jf)); \
 } while (0)

void fq_sandbox_filter_build(struct fq_sandbox *sb)
{
    sb->filter_len = 0;
#ifdef FQ_AUDIT_ARCH
    static const int denied[] = {
    /* file systems and namespaces */
# ifdef SYS_mount
        SYS_mount,
# endif
        SYS_umount2,
        SYS_pivot_root,
        SYS_unshare,
        SYS_setns,
# ifdef SYS_open_tree
        SYS_open_tree,
        SYS_move_mount,
        SYS_fsopen,
        SYS_fsconfig,
        SYS_fsmount,
        SYS_fspick,
# endif
# ifdef SYS_mount_setattr
        SYS_mount_setattr,
# endif
        SYS_open_by_handle_at,
        SYS_name_to_handle_at,
        SYS_swapon,
        SYS_swapoff,
        SYS_quotactl,
        SYS_acct,
        /* the kernel itself */
        SYS_init_module,
        SYS_finit_module,
        SYS_delete_module,
        SYS_kexec_load,
# ifdef SYS_kexec_file_load
        SYS_kexec_file_load,
# endif
        SYS_reboot,
        SYS_syslog,
        SYS_bpf,
        SYS_perf_event_open,
        SYS_userfaultfd,
        SYS_settimeofday,
        SYS_clock_settime,
        SYS_clock_adjtime,
        SYS_adjtimex,
        SYS_vhangup,
# ifdef SYS_iopl
        SYS_iopl,
        SYS_ioperm,
# endif
# ifdef SYS_uselib
        SYS_uselib,
# endif
# ifdef SYS_lookup_dcookie
        SYS_lookup_dcookie,
# endif
        /* other processes */
        SYS_ptrace,
        SYS_process_vm_readv,
        SYS_process_vm_writev,
        SYS_kcmp,
# ifdef SYS_pidfd_getfd
        SYS_pidfd_getfd,
# endif
        /* keyrings, io_uring (its operations bypass this filter) */
        SYS_keyctl,
        SYS_add_key,
        SYS_request_key,
# ifdef SYS_io_uring_setup
        SYS_io_uring_setup,
        SYS_io_uring_enter,
        SYS_io_uring_register,
# endif
    };
    struct sock_filter *f = sb->filter;
    size_t n = 0;
    const unsigned nd = sizeof(denied) / sizeof(denied[0]);
    /* 0: the architecture */
    ADD(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
    ADD(BPF_JMP | BPF_JEQ | BPF_K, FQ_AUDIT_ARCH, 1, 0);
    ADD(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS, 0, 0);
    ADD(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
# if defined(__x86_64__)
    /* the x32 ABI shares the architecture number */
    ADD(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
    ADD(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS, 0, 0);
# endif
    /* the deny list: each a jump to the EPERM return at the end */
    for (unsigned i = 0; i < nd; i++)
        ADD(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)denied[i],
            (unsigned char)(nd - i - 1 + 6), 0);
    /* clone with a namespace flag (the flags are its first argument) */
    ADD(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 2);
    ADD(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]), 0, 0);
    ADD(BPF_JMP | BPF_JSET | BPF_K,
        CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |
            CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP,
        3, 2);
# ifdef SYS_clone3
    ADD(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
    ADD(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS, 0, 0);
# else
    ADD(BPF_JMP | BPF_JA, 0, 0, 0);
    ADD(BPF_JMP | BPF_JA, 0, 0, 0);
# endif
    ADD(BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
    ADD(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM, 0, 0);
    if (n < FQ_SANDBOX_FILTER_MAX)
        sb->filter_len = (unsigned short)n;
#endif
}

int fq_sandbox_filter_pipe(const struct fq_sandbox *sb)
{
    int p[2];
    size_t len = sb->filter_len * sizeof(struct sock_filter);
    if (!sb->filter_len || pipe2(p, O_CLOEXEC) != 0)
        return -1;
    /* a few hundred bytes: always fits the pipe's buffer */
    ssize_t w = write(p[1], sb->filter, len);
    close(p[1]);
    if (w != (ssize_t)len) {
        close(p[0]);
        return -1;
    }
    return p[0];
}

/* ------------------------------------------------------------------ */
/* the child                                                            */

int fq_sandbox_limits(const struct fq_sandbox *sb, const char **step)
{
    struct rlimit rl;
    *step = "RLIMIT_NOFILE";
    if (sb->max_files > 0) {
        rl.rlim_cur = rl.rlim_max = (rlim_t)sb->max_files;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            /* not root: only lower what we have */
            struct rlimit cur;
            if (getrlimit(RLIMIT_NOFILE, &cur) != 0)
                return -1;
            if (cur.rlim_max < rl.rlim_max)
                rl.rlim_cur = rl.rlim_max = cur.rlim_max;
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
                return -1;
        }
    }
    *step = "RLIMIT_NPROC";
    if (sb->max_procs > 0) {
        rl.rlim_cur = rl.rlim_max = (rlim_t)sb->max_procs;
        if (setrlimit(RLIMIT_NPROC, &rl) != 0) {
            struct rlimit cur;
            if (getrlimit(RLIMIT_NPROC, &cur) != 0)
                return -1;
            if (cur.rlim_max < rl.rlim_max)
                rl.rlim_cur = rl.rlim_max = cur.rlim_max;
            if (setrlimit(RLIMIT_NPROC, &rl) != 0)
                return -1;
        }
    }
    *step = "no_new_privs";
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

int fq_sandbox_enter(const struct fq_sandbox *sb, const char **step)
{
    pid_t parent = getppid();
    if (fq_sandbox_limits(sb, step) != 0)
        return -1;
    if (sb->change_ids) {
        *step = "dropping the capability bounding set";
        for (int cap = 0; cap <= 63; cap++)
            if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
                return -1;
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        *step = "setgroups";
        if (syscall(SYS_setgroups, 0, NULL) != 0)
            return -1;
        *step = "setresgid";
        if (syscall(SYS_setresgid, sb->gid, sb->gid, sb->gid) != 0)
            return -1;
        *step = "setresuid";
        if (syscall(SYS_setresuid, sb->uid, sb->uid, sb->uid) != 0)
            return -1;
    }
    /* no capabilities left, even for runAsUser 0 */
    *step = "capset";
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof(d));
    if (syscall(SYS_capset, &h, d) != 0)
        return -1;
    /* a change of credentials cleared the parent-death signal */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent)
        _exit(137);
    if (sb->seccomp && sb->filter_len) {
        *step = "seccomp";
        struct sock_fprog prog = {sb->filter_len,
                                  (struct sock_filter *)sb->filter};
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* processes                                                            */

unsigned long long fq_proc_starttime(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* after the command name "(...)", which may hold spaces */
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    /* field 3 (state) is the first after ") "; starttime is field 22
     * (one more step read field 23, the virtual memory size, which
     * changes as the process allocates) */
    for (int field = 2; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

void fq_boot_id(char *out)
{
    out[0] = '\0';
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, 8);
    close(fd);
    out[n == 8 ? 8 : 0] = '\0';
}

/* ------------------------------------------------------------------ */
/* the file system                                                      */

/* Whether path is dir or inside it ("/" holds every absolute path). */
static bool under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

char *fq_sandbox_hide_root(const char *data_dir, bool change_ids, uid_t uid,
                           gid_t gid)
{
    char *p = fq_xstrdup(data_dir);
    if (!change_ids)
        return p;
    for (char *sl = p; (sl = strchr(sl + 1, '/'));) {
        *sl = '\0';
        struct stat st;
        bool x = stat(p, &st) == 0 &&
                 ((st.st_mode & S_IXOTH) ||
                  (st.st_uid == uid && (st.st_mode & S_IXUSR)) ||
                  (st.st_gid == gid && (st.st_mode & S_IXGRP)));
        if (!x)
            return p;
        *sl = '/';
    }
    return p;
}

/* Whether path is on a proc file system or one is mounted at or under
 * it: the host's /proc shows every pod's processes, and all pods run as
 * one user, so /proc/PID/environ and /proc/PID/root of another
 * namespace's pod would be open to it. */
static bool holds_procfs(const char *path)
{
    struct statfs sf;
    if (statfs(path, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC)
        return true;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[4096], mp[PATH_MAX];
    bool hit = false;
    while (f && !hit && fgets(line, sizeof(line), f)) {
        const char *sep = strstr(line, " - ");
        if (sep && !strncmp(sep + 3, "proc ", 5) &&
            sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1)
            hit = under(mp, path);
    }
    if (f)
        fclose(f);
    return hit;
}

bool fq_sandbox_path_refused(const char *src, const char *data_dir,
                             const char *const *hide, const char *vname,
                             char *why, size_t size)
{
    char real[PATH_MAX];
    const char *p = realpath(src, real) ? real : src;
    const char *hit = NULL;
    if (under(p, data_dir) || under(data_dir, p))
        hit = "flexqd's data directory";
    else if (holds_procfs(p))
        hit = "the host's /proc (every pod's processes)";
    for (size_t i = 0; !hit && hide && hide[i]; i++)
        if (under(hide[i], p))
            hit = "a file flexqd keeps from pods";
    if (!hit)
        return false;
    snprintf(why, size, "volume \"%s\": hostPath %s is refused: it holds %s",
             vname, src, hit);
    return true;
}

void fq_sandbox_protect_dir(const char *data_dir)
{
    chmod(data_dir, 0711);
    DIR *d = opendir(data_dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        struct stat st;
        char *f = fq_xasprintf("%s/%s", data_dir, de->d_name);
        if (lstat(f, &st) == 0 && S_ISREG(st.st_mode))
            chmod(f, st.st_mode & 0700);
        free(f);
    }
    if (d)
        closedir(d);
}

char *fq_sandbox_container_id(const char *boot, pid_t pid)
{
    return fq_xasprintf("flexq://%s/%ld/%llu", boot, (long)pid,
                        fq_proc_starttime(pid));
}

pid_t fq_sandbox_container_pid(const char *cid, const char *boot)
{
    char b[16];
    long pid = 0;
    unsigned long long t0 = 0;
    if (!cid || sscanf(cid, "flexq://%15[^/]/%ld/%llu", b, &pid, &t0) != 3 ||
        strcmp(b, boot) || pid <= 1 || pid > INT_MAX ||
        fq_proc_starttime((pid_t)pid) != t0)
        return 0;
    return (pid_t)pid;
}
