/*
 * logpump.c - every pod's output through a pipe to its log file, so the
 * log cap holds on the write path; one pump process for all the pods of a
 * flexqd.
 *
 * Why a pump: a pod used to write straight into its log file, and flexqd
 * rotated the file when its poll (about once a second) found it over the
 * cap. A fast writer (`yes`) puts hundreds of megabytes into the file
 * between two polls. Now the pod's stdout and stderr are a pipe, and the
 * pump copies the pipe into the file and counts: it writes up to the cap
 * exactly, then renames log to log.1 (replacing the older part), begins a
 * new log with a one-line note, and goes on. The pod is never stopped or
 * slowed beyond the pipe's own back-pressure.
 *
 *   pod --stdout/stderr--> pipe --> pump --write <= cap--> log
 *                                         `--at the cap: log -> log.1,
 *                                            new log + note
 *
 * Guarantee: log holds at most `cap` bytes and log.1 at most `cap` bytes;
 * a pod's logs never take more than 2 x cap on disk. Nothing the pod
 * writes is lost except what rotation drops by design (the part before
 * log.1) -- and what the pump cannot write (disk full, or another write
 * error), which is read and discarded so that the pod never blocks. That
 * loss is never silent: the pump counts the bytes, and before the next
 * bytes it can write it writes a line saying how many were dropped and
 * why (say_dropped), e.g.
 *
 *   [flexq: 1048576 bytes of output dropped: the log could not be
 *   written (No space left on device)]
 *
 * (one line), so a reader of the log sees where the gap is.
 *
 * Why a process, and one: the pump outlives a restart (or a crash) of
 * flexqd, so what a pod's tree writes meanwhile still reaches its log,
 * capped. It used to be one process per pod, double-forked from flexqd:
 * two forks of a large process per pod, about a quarter of a short pod's
 * cost. Now flexqd starts one pump (the small `flexq-logpump` beside it,
 * libc only, else its own binary under that name: a constructor runs the
 * pump before main), a grandchild reparented to init in its own session,
 * and hands it each pod over a socketpair: one message with the pipe's
 * read end, the log, the pod's directory and the write end of a "done"
 * pipe whose read end flexqd keeps. The pump closes a pod's done pipe
 * when every writer of the pod's pipe has closed it (the pod's whole
 * tree ended) and its last bytes are written, so flexqd can wait for the
 * log to be complete before it reports the pod ended (process.c). When
 * flexqd goes, its end of the socket closes; the pump serves the pods it
 * has until they end, then exits (a restarted flexqd starts a pump of its
 * own). Only flexqd holds the other end of the socket: a pod cannot reach
 * the pump. The pump reads the pipes without blocking (epoll), one buffer
 * per turn per pod, so a chatty pod does not starve the others.
 *
 * What it does not do: time-stamp lines, tell stdout from stderr (one
 * pipe, as the file was), or rotate by age.
 */
#define _GNU_SOURCE /* pipe2, close_range */
#include "runner/logpump.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define PUMP_BUF (64u << 10)
#define PUMP_FDS 4 /* pipe, log, directory, done */

/* ---- the pump process --------------------------------------------- */

struct pod {
    int in, log, dir, done;
    size_t size, cap;
    char note[160];
    size_t nlen;
    unsigned long long dropped; /* bytes not written, not yet said */
    int drop_errno;             /* why the last of them was not */
};

/* Writes what it can; returns the bytes written (fewer on an error, with
 * errno set: the caller counts the rest as dropped). */
static size_t write_all(int fd, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            break; /* disk full or gone: the pod must not block */
        }
        done += (size_t)w;
    }
    return done;
}

/* log -> log.1, a new log beginning with the note. */
static size_t rotate(struct pod *p)
{
    if (renameat(p->dir, "log", p->dir, "log.1") != 0)
        unlinkat(p->dir, "log", 0);
    int fd = -1;
    /* The pod sees its directory: whatever it put at "log" meanwhile is
     * removed (flexqd's, in a sticky directory), never written through. */
    for (int i = 0; i < 3 && fd < 0; i++) {
        fd = openat(p->dir, "log",
                    O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW |
                        O_CLOEXEC,
                    0644);
        if (fd < 0 && errno == EEXIST)
            unlinkat(p->dir, "log", 0);
        else if (fd < 0)
            break;
    }
    if (fd < 0) {
        /* No new file: empty the old one rather than pass the cap. */
        if (ftruncate(p->log, 0) != 0)
            return 0;
    } else {
        close(p->log);
        p->log = fd;
    }
    return write_all(p->log, p->note, p->nlen);
}

/* Bytes the pod wrote that the log did not get: counted, said later. */
static void drop(struct pod *p, size_t n, int err)
{
    p->dropped += n;
    p->drop_errno = err;
}

/* Before more output: the line saying what was dropped, whole, under the
 * cap like any other line; the count is kept until the line is written. */
static void say_dropped(struct pod *p)
{
    if (!p->dropped)
        return;
    char line[200];
    int n = snprintf(line, sizeof(line),
                     "[flexq: %llu bytes of output dropped: the log could "
                     "not be written (%s)]\n",
                     p->dropped, strerror(p->drop_errno));
    if (n <= 0 || (size_t)n >= sizeof(line) || (size_t)n > p->cap)
        return; /* a cap smaller than the line: nothing to say it in */
    if (p->size + (size_t)n > p->cap)
        p->size = rotate(p);
    size_t w = write_all(p->log, line, (size_t)n);
    p->size += w;
    if (w == (size_t)n)
        p->dropped = 0;
}

/* One read of the pod's pipe into its log; false at end-of-file. */
static bool pump_once(struct pod *p, char *buf)
{
    ssize_t n = read(p->in, buf, PUMP_BUF);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN;
    if (n == 0) {
        say_dropped(p); /* a last try, should the disk have room again */
        return false;
    }
    say_dropped(p);
    size_t off = 0;
    while (off < (size_t)n) {
        if (p->size >= p->cap)
            p->size = rotate(p);
        size_t room = p->cap > p->size ? p->cap - p->size : 0;
        size_t k = (size_t)n - off;
        if (k > room)
            k = room;
        if (!k) /* a cap smaller than the note: drop the rest */
            break;
        size_t w = write_all(p->log, buf + off, k);
        p->size += w;
        if (w < k) {
            drop(p, (size_t)n - off - w, errno);
            break;
        }
        off += k;
    }
    return true;
}

static void pod_end(struct pod *p)
{
    close(p->in);
    close(p->log);
    close(p->dir);
    close(p->done); /* last: flexqd's end reads end-of-file now */
    free(p);
}

/* Takes the pods flexqd sent; false once flexqd's end is closed. */
static bool take(int ep, int ctl, size_t *npods)
{
    for (;;) {
        uint64_t cap;
        struct iovec iov = {&cap, sizeof(cap)};

        union {
            char buf[CMSG_SPACE(PUMP_FDS * sizeof(int))];
            struct cmsghdr align;
        } u;
        struct msghdr m = {0};
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = u.buf;
        m.msg_controllen = sizeof(u.buf);
        ssize_t n = recvmsg(ctl, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0)
            return errno == EINTR || errno == EAGAIN;
        if (n == 0)
            return false;
        int fds[PUMP_FDS];
        size_t nfds = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                    int fd;
                    memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
                    if (nfds < PUMP_FDS)
                        fds[nfds++] = fd;
                    else
                        close(fd);
                }
            }
        struct pod *p = NULL;
        if (n == (ssize_t)sizeof(cap) && nfds == PUMP_FDS &&
            !(m.msg_flags & MSG_CTRUNC))
            p = calloc(1, sizeof(*p));
        if (!p) {
            for (size_t i = 0; i < nfds; i++)
                close(fds[i]);
            continue;
        }
        p->in = fds[0];
        p->log = fds[1];
        p->dir = fds[2];
        p->done = fds[3];
        p->cap = cap > SIZE_MAX ? SIZE_MAX : (size_t)cap;
        int nl = snprintf(p->note, sizeof(p->note),
                          "flexq: log rotated at %zu bytes; the previous "
                          "part is in log.1\n",
                          p->cap);
        p->nlen = nl > 0 && (size_t)nl < sizeof(p->note) ? (size_t)nl : 0;
        struct stat st;
        p->size = fstat(p->log, &st) == 0 ? (size_t)st.st_size : 0;
        fcntl(p->in, F_SETFL, fcntl(p->in, F_GETFL) | O_NONBLOCK);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, p->in, &ev) != 0) {
            pod_end(p);
            continue;
        }
        (*npods)++;
    }
}

static void run_pump(void)
{
    int ctl = 0; /* the socket, as flexqd starts us */
    setsid();
    /* it may outlive flexqd: hold no directory but the pods' */
    if (chdir("/") != 0)
        _exit(1);
    prctl(PR_SET_NAME, FQ_LOGPUMP_ARGV0, 0, 0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, SIG_IGN); /* ends with its pods, at end-of-file */
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    /* a file-size limit fails the write (EFBIG, said as dropped) */
    signal(SIGXFSZ, SIG_IGN);
    /* four descriptors per running pod */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        _exit(1);
    struct epoll_event cev = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, ctl, &cev) != 0)
        _exit(1);
    static char buf[PUMP_BUF];
    size_t npods = 0;
    bool open_ctl = true;
    struct epoll_event evs[64];
    while (open_ctl || npods) {
        int n = epoll_wait(ep, evs, 64, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            _exit(1);
        for (int i = 0; i < n; i++) {
            struct pod *p = evs[i].data.ptr;
            if (!p) {
                if (open_ctl && !take(ep, ctl, &npods)) {
                    epoll_ctl(ep, EPOLL_CTL_DEL, ctl, NULL);
                    close(ctl);
                    open_ctl = false;
                }
                continue;
            }
            if (!pump_once(p, buf)) {
                epoll_ctl(ep, EPOLL_CTL_DEL, p->in, NULL);
                pod_end(p);
                npods--;
            }
        }
    }
    _exit(0);
}

__attribute__((constructor)) static void fq_logpump_ctor(int argc, char **argv)
{
    if (argc >= 1 && argv && argv[0] && !strcmp(argv[0], FQ_LOGPUMP_ARGV0))
        run_pump();
}

#ifdef FQ_LOGPUMP_STANDALONE
int main(void)
{
    run_pump(); /* the constructor ran it under our own name already */
    return 1;
}
#else

/* ---- flexqd's side ------------------------------------------------- */

/* The pump's program: flexq-logpump beside our own binary, else our own
 * binary (whose constructor runs the pump under that name). */
static void pump_path(char *out, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash &&
            snprintf(out, size, "%.*s/%s", (int)(slash - self), self,
                     FQ_LOGPUMP_ARGV0) < (int)size &&
            access(out, X_OK) == 0)
            return;
    }
    snprintf(out, size, "/proc/self/exe");
}

/* Starts the pump; returns flexqd's end of its socket (owned, close-on-
 * exec) or -1 with errno set. */
static int pump_spawn(void)
{
    char path[PATH_MAX + 32];
    pump_path(path, sizeof(path));
    char *const argv[] = {(char *)FQ_LOGPUMP_ARGV0, NULL};
    char *const envp[] = {NULL};
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    /* Once per flexqd: a plain fork. The middle child forks the pump and
     * leaves at once, so the pump is init's child, not flexqd's. Between
     * fork and exec only async-signal-safe calls: flexqd has threads. */
    pid_t mid = fork();
    if (mid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        errno = e;
        return -1;
    }
    if (mid == 0) {
        if (fork() != 0)
            _exit(0);
        if (dup2(sv[1], 0) != 0) /* clears close-on-exec */
            _exit(1);
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 1);
            dup2(nul, 2);
        }
# ifdef SYS_close_range
        if (syscall(SYS_close_range, 3U, ~0U, 0) != 0)
# endif
            for (int fd = 3; fd < 65536; fd++)
                close(fd);
        execve(path, argv, envp);
        _exit(127);
    }
    close(sv[1]);
    int st;
    while (waitpid(mid, &st, 0) < 0 && errno == EINTR)
        ;
    /* the pump answers at once; a stuck one never stalls flexqd long */
    struct timeval tv = {1, 0};
    setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    return sv[0];
}

static int send_pod(int ctl, uint64_t cap, const int fds[PUMP_FDS])
{
    struct iovec iov = {&cap, sizeof(cap)};

    union {
        char buf[CMSG_SPACE(PUMP_FDS * sizeof(int))];
        struct cmsghdr align;
    } u;

    memset(&u, 0, sizeof(u));
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = u.buf;
    m.msg_controllen = sizeof(u.buf);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(PUMP_FDS * sizeof(int));
    memcpy(CMSG_DATA(c), fds, PUMP_FDS * sizeof(int));
    ssize_t n;
    while ((n = sendmsg(ctl, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)sizeof(cap) ? 0 : -1;
}

int fq_logpump_start(int *ctl, const char *dir, int logfd, size_t cap,
                     int *done_fd)
{
    *done_fd = -1;
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
    int fds[PUMP_FDS] = {p[0], logfd, dfd, dp[1]};
    int rc = -1, e = 0;
    /* a pump that is gone (it never should) is started again, once */
    for (int attempt = 0; attempt < 2 && rc != 0; attempt++) {
        if (*ctl < 0 && (*ctl = pump_spawn()) < 0) {
            e = errno;
            break;
        }
        rc = send_pod(*ctl, cap, fds);
        if (rc != 0) {
            e = errno;
            close(*ctl);
            *ctl = -1;
        }
    }
    close(dfd);
    close(p[0]);
    close(dp[1]);
    if (rc != 0) {
        close(p[1]);
        close(dp[0]);
        errno = e ? e : EPIPE;
        return -1;
    }
    *done_fd = dp[0];
    return p[1];
}
#endif
