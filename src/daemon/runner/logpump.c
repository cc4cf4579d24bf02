/*
 * logpump.c - a pod's output through a pipe to its log file, so the log
 * cap holds on the write path.
 *
 * Why: a pod used to write straight into its log file, and flexqd rotated
 * the file when its poll (about once a second) found it over the cap. A
 * fast writer (`yes`) puts hundreds of megabytes into the file between two
 * polls. Now the pod's stdout and stderr are a pipe, and a small process
 * of flexqd's, the pump, copies the pipe into the file and counts: it
 * writes up to the cap exactly, then renames log to log.1 (replacing the
 * older part), begins a new log with a one-line note, and goes on. The
 * pod is never stopped or slowed beyond the pipe's own back-pressure.
 *
 *   pod --stdout/stderr--> pipe --> pump --write <= cap--> log
 *                                         `--at the cap: log -> log.1,
 *                                            new log + note
 *
 * Guarantee: log holds at most `cap` bytes and log.1 at most `cap` bytes;
 * a pod's logs never take more than 2 x cap on disk. Nothing the pod
 * writes is lost except what rotation drops by design (the part before
 * log.1) -- and what is written after the pump could no longer write
 * (disk full), which is read and discarded so that the pod never blocks.
 *
 * Lifetime: the pump is a grandchild (double fork), reparented to init,
 * in its own session: flexqd never has to reap it, and it outlives a
 * restart of flexqd along with the pod's processes, which then keep
 * writing into a pipe somebody reads. It exits when every writer of the
 * pipe has closed it (the pod's whole tree ended); flexqd holds the read
 * end of a second pipe whose only writer is the pump, so it can wait for
 * the log to be complete before it reports the pod ended (process.c). It holds only the
 * pipe, the log and the pod's directory (descriptors 0, 1, 2) and uses
 * only async-signal-safe calls: flexqd has threads when it forks.
 *
 * What it does not do: time-stamp lines, tell stdout from stderr (one
 * pipe, as the file was), or rotate by age.
 */
#define _GNU_SOURCE /* pipe2 */
#include "runner/logpump.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PUMP_BUF (64u << 10)

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* disk full or gone: drop, the pod must not block */
        p += w;
        n -= (size_t)w;
    }
}

/* log -> log.1, a new log on descriptor 1 beginning with `note`. */
static size_t rotate(const char *note, size_t nlen)
{
    if (renameat(2, "log", 2, "log.1") != 0)
        unlinkat(2, "log", 0);
    int fd = -1;
    /* The pod sees its directory: whatever it put at "log" meanwhile is
     * removed (flexqd's, in a sticky directory), never written through. */
    for (int i = 0; i < 3 && fd < 0; i++) {
        fd = openat(2, "log",
                    O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW |
                        O_CLOEXEC,
                    0644);
        if (fd < 0 && errno == EEXIST)
            unlinkat(2, "log", 0);
        else if (fd < 0)
            break;
    }
    if (fd < 0) {
        /* No new file: empty the old one rather than pass the cap. */
        if (ftruncate(1, 0) != 0)
            return 0;
        write_all(1, note, nlen);
        return nlen;
    }
    dup2(fd, 1);
    close(fd);
    write_all(1, note, nlen);
    return nlen;
}

static void pump(size_t cap, const char *note, size_t nlen)
{
    static char buf[PUMP_BUF];
    struct stat st;
    size_t size = fstat(1, &st) == 0 ? (size_t)st.st_size : 0;
    for (;;) {
        ssize_t n = read(0, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        size_t off = 0;
        while (off < (size_t)n) {
            if (size >= cap)
                size = rotate(note, nlen);
            size_t room = cap > size ? cap - size : 0;
            size_t k = (size_t)n - off;
            if (k > room)
                k = room;
            if (!k) { /* a cap smaller than the note: drop the rest */
                off = (size_t)n;
                break;
            }
            write_all(1, buf + off, k);
            size += k;
            off += k;
        }
    }
}

int fq_logpump_start(const char *dir, int logfd, size_t cap, int *done_fd)
{
    *done_fd = -1;
    char note[160];
    int nlen = snprintf(note, sizeof(note),
                        "flexq: log rotated at %zu bytes; the previous part "
                        "is in log.1\n",
                        cap);
    if (nlen < 0 || (size_t)nlen >= sizeof(note))
        nlen = 0;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int p[2], dp[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        close(dfd);
        return -1;
    }
    if (pipe2(dp, O_CLOEXEC) != 0) {
        close(dfd);
        close(p[0]);
        close(p[1]);
        return -1;
    }
    pid_t mid = fork();
    if (mid < 0) {
        int e = errno;
        close(dfd);
        close(p[0]);
        close(p[1]);
        close(dp[0]);
        close(dp[1]);
        errno = e;
        return -1;
    }
    if (mid == 0) {
        /* The middle child: fork the pump and leave at once, so the pump
         * is init's child, not flexqd's. */
        if (fork() != 0)
            _exit(0);
        setsid();
        /* ps, pgrep and pkill (which match this name) tell it from
         * flexqd, whose command line it shares. */
        prctl(PR_SET_NAME, "flexq-logpump", 0, 0, 0);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGPIPE, SIG_IGN);
        signal(SIGTERM, SIG_IGN); /* ends with the pod, at end-of-file */
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        close(p[1]);
        close(dp[0]);
        /* 0: the pipe, 1: the log, 2: the pod's directory, 3: held until
         * exit (flexqd's end reads end-of-file then). */
        int lfd = fcntl(logfd, F_DUPFD, 4);
        int d2 = fcntl(dfd, F_DUPFD, 4);
        int r0 = fcntl(p[0], F_DUPFD, 4);
        int w3 = fcntl(dp[1], F_DUPFD, 4);
        if (lfd < 0 || d2 < 0 || r0 < 0 || w3 < 0)
            _exit(1);
        dup2(r0, 0);
        dup2(lfd, 1);
        dup2(d2, 2);
        dup2(w3, 3);
#ifdef SYS_close_range
        if (syscall(SYS_close_range, 4U, ~0U, 0) != 0)
#endif
            for (int fd = 4; fd < 65536; fd++)
                close(fd);
        pump(cap, note, (size_t)nlen);
        _exit(0);
    }
    close(dfd);
    close(p[0]);
    close(dp[1]);
    *done_fd = dp[0];
    int st;
    while (waitpid(mid, &st, 0) < 0 && errno == EINTR)
        ;
    return p[1];
}
