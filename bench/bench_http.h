/*
 * bench/bench_http.h - what the benchmarks that drive a real flexqd share:
 * a small HTTP/1.1 client over plain sockets (keep-alive, pipelined
 * answers, Content-Length framed; chunked watch streams), starting and
 * stopping build/flexqd on a free port with a fresh data directory, and
 * reading a process's CPU time and peak RSS from /proc.
 *
 * Header-only (static inline): each bench/NAME.c is its own program.
 * Ownership: returned strings are the caller's to free.
 * What it does not do: TLS, tokens, chunked request bodies, redirects.
 */
#ifndef FLEXQ_BENCH_HTTP_H
#define FLEXQ_BENCH_HTTP_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"

static inline double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* --- HTTP/1.1 over a plain socket ----------------------------------------- */

static inline int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A connection's read buffer: answers may arrive back to back (pipelining). */
struct conn {
    int fd;
    char buf[1 << 16];
    size_t len;
};

static inline const char *find_header(const char *h, const char *end,
                                      const char *name)
{
    size_t n = strlen(name);
    for (const char *p = h; p + n <= end; p++)
        if (strncasecmp(p, name, n) == 0)
            return p;
    return NULL;
}

/* Reads one Content-Length framed answer; returns its status or -1. The
 * body is appended to `body` when not NULL, else dropped. */
static inline int read_response_body(struct conn *c, struct fq_buf *body_out)
{
    char *hend = NULL;
    for (;;) {
        hend = c->len >= 4 ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL;
        if (hend)
            break;
        if (c->len == sizeof(c->buf))
            return -1;
        ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c->len += (size_t)r;
    }
    int status = c->len > 12 ? atoi(c->buf + 9) : -1;
    const char *cl = find_header(c->buf, hend, "content-length:");
    size_t body = cl ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
    size_t head = (size_t)(hend + 4 - c->buf);
    size_t need = head + body;
    while (c->len < need) {
        /* a large body: keep or drop what is read of it */
        if (c->len == sizeof(c->buf)) {
            if (body_out)
                fq_buf_append(body_out, c->buf + head, c->len - head);
            need -= c->len - head;
            c->len = head;
        }
        ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c->len += (size_t)r;
    }
    if (body_out)
        fq_buf_append(body_out, c->buf + head, need - head);
    memmove(c->buf, c->buf + need, c->len - need);
    c->len -= need;
    return status;
}

static inline int read_response(struct conn *c)
{
    return read_response_body(c, NULL);
}

static inline char *request(const char *method, const char *path,
                            const char *ctype, const char *body)
{
    size_t bl = body ? strlen(body) : 0;
    return fq_xasprintf("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n%s",
                        method, path, ctype, bl, body ? body : "");
}

/* One request, one answer on `c`; the status or -1; the answer's body
 * appended to `out` when not NULL. */
static inline int call_body(struct conn *c, const char *method,
                            const char *path, const char *ctype,
                            const char *body, struct fq_buf *out)
{
    char *req = request(method, path, ctype, body);
    int st = write_all(c->fd, req, strlen(req)) < 0 ?
                 -1 :
                 read_response_body(c, out);
    free(req);
    return st;
}

static inline int call(struct conn *c, const char *method, const char *path,
                       const char *ctype, const char *body)
{
    return call_body(c, method, path, ctype, body, NULL);
}

/*
 * Reads a chunked answer (a watch) from `fd` until the connection closes:
 * on_head once the head is read, on_line for each complete line of the
 * body (without its newline). Returns the HTTP status of the head, or -1.
 */
static inline int read_stream(int fd, void (*on_head)(void *ctx, int status),
                              void (*on_line)(void *ctx, const char *line,
                                              size_t len),
                              void *ctx)
{
    struct fq_buf in = FQ_BUF_INIT, lines = FQ_BUF_INIT;
    char tmp[65536];
    bool head = true;
    int status = -1;
    size_t pos = 0; /* parsed up to here in `in` */
    for (;;) {
        ssize_t r = read(fd, tmp, sizeof(tmp));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        fq_buf_append(&in, tmp, (size_t)r);
        if (head) {
            const char *e = memmem(in.data, in.len, "\r\n\r\n", 4);
            if (!e)
                continue;
            head = false;
            status = in.len > 12 ? atoi(in.data + 9) : -1;
            pos = (size_t)(e + 4 - in.data);
            if (on_head)
                on_head(ctx, status);
        }
        /* chunks: HEX\r\nDATA\r\n */
        for (;;) {
            const char *crlf = memmem(in.data + pos, in.len - pos, "\r\n", 2);
            if (!crlf)
                break;
            size_t sz = (size_t)strtoul(in.data + pos, NULL, 16);
            size_t start = (size_t)(crlf + 2 - in.data);
            if (in.len < start + sz + 2)
                break;
            fq_buf_append(&lines, in.data + start, sz);
            pos = start + sz + 2;
        }
        size_t from = 0;
        for (char *nl;
             lines.len > from && (nl = memchr(lines.data + from, '\n',
                                              lines.len - from)) != NULL;) {
            on_line(ctx, lines.data + from, (size_t)(nl - lines.data) - from);
            from = (size_t)(nl - lines.data) + 1;
        }
        memmove(lines.data, lines.data + from, lines.len - from);
        lines.len -= from;
        memmove(in.data, in.data + pos, in.len - pos);
        in.len -= pos;
        pos = 0;
    }
    fq_buf_release(&in);
    fq_buf_release(&lines);
    return status;
}

/* --- the daemon ------------------------------------------------------------ */

struct daemon {
    pid_t pid;
    int port;
    char url[64];
    char log[200];
};

static inline char *bin_path(const char *argv0, const char *env,
                             const char *name)
{
    const char *e = getenv(env);
    if (e && *e)
        return fq_xstrdup(e);
    const char *slash = strrchr(argv0, '/');
    if (!slash)
        return fq_xasprintf("../%s", name);
    return fq_xasprintf("%.*s/../%s", (int)(slash - argv0), argv0, name);
}

/* Starts `bin` --listen 127.0.0.1:0 --data-dir DIR/data ARGS..., its log
 * in DIR/flexqd.log; waits (wait_s at most) for its "listening" line. */
static inline int daemon_start_wait(struct daemon *d, const char *bin,
                                    const char *dir, const char *const args[],
                                    double wait_s)
{
    memset(d, 0, sizeof(*d));
    char data[200];
    snprintf(data, sizeof(data), "%s/data", dir);
    snprintf(d->log, sizeof(d->log), "%s/flexqd.log", dir);
    int lfd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (lfd < 0)
        return -1;
    fflush(stdout);
    d->pid = fork();
    if (d->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(lfd, 1);
        dup2(lfd, 2);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        const char *argv[32] = {bin, "--listen", "127.0.0.1:0", "--data-dir",
                                data};
        int k = 5;
        for (int i = 0; args && args[i] && k < 31; i++)
            argv[k++] = args[i];
        argv[k] = NULL;
        execv(bin, (char *const *)argv);
        perror("exec flexqd");
        _exit(127);
    }
    close(lfd);
    for (double lim = wall() + wait_s; !d->port && wall() < lim;) {
        FILE *f = fopen(d->log, "re");
        char line[4096];
        while (f && fgets(line, sizeof(line), f)) {
            const char *p = strstr(line, "msg=\"listening\" port=");
            if (p)
                d->port = atoi(p + strlen("msg=\"listening\" port="));
        }
        if (f)
            fclose(f);
        if (!d->port) {
            if (waitpid(d->pid, NULL, WNOHANG) == d->pid)
                break;
            sleep_s(0.005);
        }
    }
    if (!d->port) {
        fprintf(stderr, "bench: flexqd (%s) did not start; see %s\n", bin,
                d->log);
        kill(d->pid, SIGKILL);
        waitpid(d->pid, NULL, 0);
        return -1;
    }
    snprintf(d->url, sizeof(d->url), "http://127.0.0.1:%d", d->port);
    return 0;
}

static inline int daemon_start(struct daemon *d, const char *bin,
                               const char *dir, const char *const args[])
{
    return daemon_start_wait(d, bin, dir, args, 30);
}

static inline void daemon_stop(struct daemon *d)
{
    if (d->pid <= 0)
        return;
    kill(d->pid, SIGTERM);
    int st;
    while (waitpid(d->pid, &st, 0) < 0 && errno == EINTR)
        ;
    d->pid = 0;
}

/* utime + stime of a process, seconds. */
static inline double proc_cpu_s(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long long ut = 0, stt = 0;
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
               &ut, &stt) != 2)
        return 0;
    return (double)(ut + stt) / (double)sysconf(_SC_CLK_TCK);
}

static inline long proc_hwm_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    long kb = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static inline double busy_cpu_s(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return 0;
    unsigned long long v[10] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 8)
        return 0;
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) /
           (double)sysconf(_SC_CLK_TCK);
}

#endif
