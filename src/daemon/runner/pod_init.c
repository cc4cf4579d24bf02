/*
 * pod_init.c - pid 1 of a pod's own pid namespace (process.c's unshare
 * mode), run by re-executing flexqd's own binary.
 *
 * Why: a pod in a new pid namespace needs an init. The pod's command
 * itself as pid 1 would ignore SIGTERM (the kernel drops signals from the
 * parent namespace to an init that has no handler) and would leave
 * orphans unreaped. This init forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT,
 * SIGUSR1 and SIGUSR2 to the command, reaps every child, and exits when
 * the command does, with its exit code (128 + N for a signal); the kernel
 * then kills whatever is left in the namespace, children that called
 * setsid included. That is how deleting a pod kills its whole tree
 * without a cgroup.
 *
 * How it runs: the runner's child, already in the pod's namespaces and
 * the pod's user (sandbox.c), execs the binary that holds this file
 * (flexqd, or a test linking the daemon library) with argv[0] ==
 * FQ_POD_INIT_ARGV0; a constructor sees that name before main and never
 * returns. argv[1] is the command's path, argv[1..] its argv; the
 * environment is the pod's. Nothing else of the binary runs.
 *
 * The same file is also built alone, as the small `flexq-pod-init`
 * beside flexqd (FQ_POD_INIT_STANDALONE: only libc): the runner execs
 * that one when it is there (probe.c), since loading flexqd again, with
 * its 10 libraries and their relocations, cost every pod start about
 * 2 ms of CPU.
 *
 * On x86-64 that small binary is built without libc at all
 * (FQ_POD_INIT_NOLIBC: its own _start and system calls): glibc's start-up
 * reads the CPU's cache layout with cpuid, which traps to the hypervisor
 * on a virtual machine, and with the loader's relocations this was about
 * a fifth of all the CPU a no-op pod cost (bench/jobs, perf). The libc
 * build is what the sanitizer and fuzz builds and other machines use.
 *
 * What it does not do: anything a pod could use: it has the pod's user,
 * no capabilities and the seccomp filter, like the command.
 */
#define _GNU_SOURCE
#include "runner/pod_init.h"

#include <sys/wait.h>

/* The init's exit status for its command's wait status, as a shell's. */
static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 255;
}

#ifdef FQ_POD_INIT_NOLIBC
/* The same init as below, on raw system calls (x86-64 only; the headers
 * give constants and types, nothing is linked). */
# include <asm/unistd.h>
# include <signal.h>
# include <sys/prctl.h>
# include <sys/wait.h>

static long sc(long n, long a, long b, long c, long d)
{
    long ret;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}

static _Noreturn void quit(int code)
{
    for (;;)
        sc(__NR_exit_group, code, 0, 0, 0);
}

_Noreturn void fq_pod_init_start(long *sp);

/* sp: the process's first stack word (argc, argv..., NULL, envp...) */
_Noreturn void fq_pod_init_start(long *sp)
{
    int argc = (int)sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    if (argc < 2)
        quit(127);
    unsigned long all = ~0UL, none = 0;
    sc(__NR_rt_sigprocmask, SIG_BLOCK, (long)&all, 0, sizeof(all));
    /* named before the fork (see run_init) */
    sc(__NR_prctl, PR_SET_NAME, (long)"flexq-pod-init", 0, 0);
    long child = sc(__NR_clone, SIGCHLD, 0, 0, 0); /* a fork */
    if (child < 0)
        quit(127);
    if (child == 0) {
        sc(__NR_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, sizeof(none));
        sc(__NR_execve, (long)argv[1], (long)(argv + 1), (long)envp, 0);
        quit(127); /* the runner's preflight found it: rare */
    }
    for (;;) {
        siginfo_t si;
        long sig =
            sc(__NR_rt_sigtimedwait, (long)&all, (long)&si, 0, sizeof(all));
        if (sig < 0)
            continue;
        if (sig == SIGCHLD) {
            int st;
            long w;
            while ((w = sc(__NR_wait4, -1, (long)&st, WNOHANG, 0)) > 0)
                if (w == child)
                    quit(status_code(st));
            continue;
        }
        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
            sig == SIGQUIT || sig == SIGUSR1 || sig == SIGUSR2)
            sc(__NR_kill, child, sig, 0, 0);
    }
}

__asm__(".text\n"
        ".global _start\n"
        ".type _start, @function\n"
        "_start:\n"
        "\txor %ebp, %ebp\n"
        "\tmov %rsp, %rdi\n"
        "\tand $-16, %rsp\n"
        "\tcall fq_pod_init_start\n"
        "\thlt\n");

#else

# include <errno.h>
# include <signal.h>
# include <string.h>
# include <sys/prctl.h>
# include <sys/wait.h>
# include <unistd.h>

const char fq_pod_init_argv0[] = FQ_POD_INIT_ARGV0;

static void run_init(int argc, char **argv, char **envp)
{
    if (argc < 2)
        _exit(127);
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    /* Named before the fork, so that the name is there by the time the
     * command runs: set after it, a loaded machine could run the command
     * (and its first output) while the init was still called after the
     * binary it was run from (flexqd, in the fallback). The child keeps
     * the name only until its execve. */
    prctl(PR_SET_NAME, "flexq-pod-init", 0, 0, 0);
    pid_t child = fork();
    if (child < 0)
        _exit(127);
    if (child == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(argv[1], argv + 1, envp);
        _exit(127); /* the runner's preflight found it: rare */
    }
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&all, &si);
        if (sig < 0)
            continue;
        if (sig == SIGCHLD) {
            int st;
            pid_t w;
            while ((w = waitpid(-1, &st, WNOHANG)) > 0)
                if (w == child)
                    _exit(status_code(st));
            continue;
        }
        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
            sig == SIGQUIT || sig == SIGUSR1 || sig == SIGUSR2)
            kill(child, sig);
    }
}

__attribute__((constructor)) static void fq_pod_init_ctor(int argc, char **argv,
                                                          char **envp)
{
    if (argc >= 1 && argv && argv[0] && !strcmp(argv[0], FQ_POD_INIT_ARGV0))
        run_init(argc, argv, envp);
}

# ifdef FQ_POD_INIT_STANDALONE
int main(int argc, char **argv, char **envp)
{
    /* The constructor ran run_init when argv[0] is FQ_POD_INIT_ARGV0,
     * which is how the runner starts it; any other name, too. */
    run_init(argc, argv, envp);
    return 127;
}
# endif
#endif /* FQ_POD_INIT_NOLIBC */
