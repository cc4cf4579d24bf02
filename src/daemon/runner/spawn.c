/*
 * spawn.c - a pod's process started: its cgroups and limits, its GPUs,
 * then the child (clone into its namespaces, its user, capabilities
 * dropped, no_new_privs, the seccomp filter, rlimits, exec), and a pod
 * directory removed when the pod is gone.
 *
 * What it does not do: build what the child runs (podspec.c) or follow
 * it once started (process.c).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
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

#include "flexq/objstore.h"
#include "flexq/quantity.h"
#include "runner/cgroup.h"
#include "runner/pod_init.h"

extern char **environ;
#include "runner/internal.h"

/* Makes the pod's cgroups and writes its limits. Returns a note for the
 * log when limits are not enforced (static string) or NULL. */
const char *rn_setup_cgroups(struct fq_runner *r, struct proc *p,
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
        int rc = rn_write_small(f, val);
        free(f);
        if (rc != 0)
            goto fail;
        if (r->cgroups == FQ_CGROUPS_V2) {
            /* no swap, so that the limit means an OOM kill */
            char *sw = fq_xasprintf("%s/memory.swap.max", p->cg_mem);
            rn_write_small(sw, "0");
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
            rc = rn_write_small(f, val);
            free(f);
        } else {
            char *f = fq_xasprintf("%s/cpu.cfs_period_us", p->cg_cpu);
            rn_write_small(f, "100000");
            free(f);
            snprintf(val, sizeof(val), "%lld", (long long)s->cpu_milli * 100);
            f = fq_xasprintf("%s/cpu.cfs_quota_us", p->cg_cpu);
            rc = rn_write_small(f, val);
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
long rn_oom_kills(const struct fq_runner *r, const struct proc *p)
{
    if (!p->cg_mem)
        return 0;
    char *f = fq_xasprintf("%s/%s", p->cg_mem,
                           r->cgroups == FQ_CGROUPS_V2 ? "memory.events" :
                                                         "memory.oom_control");
    char buf[1024];
    long n = 0;
    if (rn_read_small(f, buf, sizeof(buf)) > 0) {
        const char *k = strstr(buf, "oom_kill ");
        if (k)
            n = strtol(k + 9, NULL, 10);
    }
    free(f);
    return n;
}

int rn_gpu_take(struct fq_runner *r, int64_t n, uint64_t *mask,
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
    if (a->plan && rn_ns_setup(a->plan, &step) != 0)
        child_fail(a, "mount namespace setup", step);
    if (!a->bwrap && a->cwd && chdir(a->cwd) != 0)
        child_fail(a, "chdir", NULL);
    if (a->bwrap) {
        /* bubblewrap and setpriv do the rest (process.c's argv) */
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
pid_t rn_spawn(struct fq_runner *r, struct child_args *a)
{
#ifdef FQ_RUNNER_FORK
    (void)r;
    pid_t pid = rn_fork_ns(a->pidns);
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

static bool one_element(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, "..") && strcmp(s, ".");
}

void fq_runner_remove_pod_dir(const char *data_dir, const char *ns,
                              const char *name)
{
    if (!one_element(name) || (ns && *ns && !one_element(ns)))
        return;
    char *dir = fq_runner_pod_dir(data_dir, ns, name);
    rn_rm_tree(dir);
    free(dir);
}

/* Removes <data>/pods/<ns>/<name> (never following links out of it). */
void rn_remove_pod_dir(const struct fq_runner *r, const char *ns,
                       const char *name)
{
    fq_runner_remove_pod_dir(r->data_dir, ns, name);
}

size_t fq_runner_sweep_pod_dirs(
    const char *data_dir, const struct fq_objstore *st,
    bool (*live)(void *ctx, const char *ns, const char *name), void *ctx)
{
    char *root = fq_xasprintf("%s/pods", data_dir);
    DIR *d = opendir(root);
    size_t removed = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!one_element(de->d_name))
            continue;
        /* "_" holds the pods of the empty namespace (fq_runner_pod_dir) */
        const char *ns = strcmp(de->d_name, "_") ? de->d_name : "";
        char *nsdir = fq_xasprintf("%s/%s", root, de->d_name);
        DIR *nd = opendir(nsdir);
        struct dirent *pe;
        while (nd && (pe = readdir(nd))) {
            if (!one_element(pe->d_name) ||
                fq_objstore_get(st, FQ_KIND_POD, ns, pe->d_name) ||
                (live && live(ctx, ns, pe->d_name)))
                continue;
            fq_runner_remove_pod_dir(data_dir, ns, pe->d_name);
            removed++;
        }
        if (nd)
            closedir(nd);
        free(nsdir);
    }
    if (d)
        closedir(d);
    free(root);
    return removed;
}
