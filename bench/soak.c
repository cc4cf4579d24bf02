/*
 * bench/soak.c - does flexqd stay small and responsive under churn and
 * hostile clients?
 *
 * How it works: starts build/flexqd (next to this binary's directory, or
 * $FLEXQD) on 127.0.0.1 port 0 with a fresh data directory, measures its
 * resident memory (VmRSS), open descriptors (/proc/PID/fd) and database
 * size (the files of the data directory), then at the same time:
 *
 *   - CLIENTS threads create WORKLOADS Workloads, then delete them all,
 *     each over one keep-alive connection;
 *   - IDLE connections are opened and left silent, IDLE_PER_ADDR from
 *     each loopback address 127.0.0.2, .3, ... (under the per-client
 *     cap); flexqd closes them when their first request's headers are
 *     overdue (10 s);
 *   - one address (127.0.1.1) opens FLOOD connections at once: past the
 *     per-client cap (256) each must be answered 429 and closed;
 *   - one slow-header client sends a header line a second and never ends
 *     its request (it should be cut off by the header deadline, 10 s);
 *   - a probe client GETs /healthz every 20 ms and records the latency:
 *     what another user of the API sees during all this.
 *
 * When the churn is done the probe goes on until flexqd has closed every
 * idle connection and the slow client and EXPIRE_WAIT_S passed (flexqd
 * runs with --event-ttl 30 so that the Events of the churn expire
 * meanwhile), or HOLD_S passed. Then the figures are measured again (the
 * database: flexq.db and its WAL). A memory or database size much above the start, or
 * descriptors that stay open, point at a leak; a high probe p99 at work
 * done on the loop.
 *
 * Usage: soak [WORKLOADS [IDLE [CLIENTS [HOLD_S]]]]
 *        (default 20000, 1000, 8, 150)
 * flexqd runs with --sync normal (every commit written, not fsynced): the
 * soak is about growth, not the disk. Output: readable figures, then one
 * JSON object as the last line.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 64
/* Events expire this many seconds after they were last seen, so that the
 * hold phase shows them deleted (flexqd's default is an hour). */
#define EVENT_TTL "30"
/* The hold lasts at least this: the TTL, then sweeps (every 10 s) that
 * delete the expired Events, then the watch history's age (75 s) after
 * which the tidying lets the deletions' objects go. */
#define EXPIRE_WAIT_S 130
#define MAX_PROBES    (1 << 20)
/* A probe this slow is reported on stderr with the time it ended. */
#define STALL_MS 200
/* Idle connections per source address, under flexqd's cap (256). */
#define IDLE_PER_ADDR 200
/* The flood from one address, and flexqd's per-client cap. */
#define FLOOD     300
#define FLOOD_CAP 256
#define WL_PATH   "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* A connection to flexqd from 127.0.0.1, or from the loopback address
 * 127.0.`hi`.`lo` when hi or lo is nonzero (flexqd caps connections per
 * client address). */
static int connect_from(int port, int hi, int lo)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (hi || lo) {
        struct sockaddr_in src = {0};
        src.sin_family = AF_INET;
        src.sin_addr.s_addr =
            htonl((127u << 24) | ((unsigned)hi << 8) | (unsigned)lo);
        if (bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0) {
            close(fd);
            return -1;
        }
    }
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

static int connect_to(int port)
{
    return connect_from(port, 0, 0);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads one Content-Length framed response; returns the status or -1. */
static int read_response(int fd)
{
    char buf[16384];
    size_t len = 0;
    char *hend = NULL;
    while (!hend) {
        if (len == sizeof(buf) - 1)
            return -1;
        ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (r <= 0)
            return -1;
        len += (size_t)r;
        buf[len] = '\0';
        hend = strstr(buf, "\r\n\r\n");
    }
    int status = atoi(buf + 9);
    size_t body = 0;
    for (const char *p = buf; p < hend; p++)
        if (!strncasecmp(p, "\r\ncontent-length:", 17)) {
            body = (size_t)strtoul(p + 17, NULL, 10);
            break;
        }
    size_t have = len - (size_t)(hend + 4 - buf);
    while (have < body) {
        char tmp[65536];
        size_t want = body - have < sizeof(tmp) ? body - have : sizeof(tmp);
        ssize_t r = read(fd, tmp, want);
        if (r <= 0)
            return -1;
        have += (size_t)r;
    }
    return status;
}

/* One request on a keep-alive connection (reconnecting once if the server
 * closed it); returns the status or -1. */
static int call(int *fd, int port, const char *method, const char *path,
                const char *body)
{
    char req[2048];
    int n =
        snprintf(req, sizeof(req),
                 "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 "%sContent-Length: %zu\r\n\r\n%s",
                 method, path, body ? "Content-Type: application/json\r\n" : "",
                 body ? strlen(body) : 0, body ? body : "");
    for (int attempt = 0; attempt < 2; attempt++) {
        if (*fd < 0)
            *fd = connect_to(port);
        if (*fd < 0)
            return -1;
        if (write_all(*fd, req, (size_t)n) == 0) {
            int st = read_response(*fd);
            if (st > 0)
                return st;
        }
        close(*fd);
        *fd = -1;
    }
    return -1;
}

struct worker {
    pthread_t th;
    int id, port, n;
    int created, deleted, errors;
};

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    int fd = -1;
    char body[1024], path[256];
    for (int i = 0; i < w->n; i++) {
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
                 "\"Workload\",\"metadata\":{\"name\":\"soak-%d-%d\","
                 "\"namespace\":\"default\"},\"spec\":{\"queueName\":"
                 "\"soak\",\"podSets\":[{\"name\":\"main\",\"count\":1,"
                 "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
                 "\"image\":\"busybox\",\"resources\":{\"requests\":{"
                 "\"cpu\":\"1\"}}}]}}}]}}",
                 w->id, i);
        if (call(&fd, w->port, "POST", WL_PATH, body) == 201)
            w->created++;
        else
            w->errors++;
    }
    for (int i = 0; i < w->n; i++) {
        snprintf(path, sizeof(path), WL_PATH "/soak-%d-%d", w->id, i);
        int st = call(&fd, w->port, "DELETE", path, NULL);
        if (st == 200 || st == 202)
            w->deleted++;
        else
            w->errors++;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static atomic_bool stop;

struct probe {
    pthread_t th;
    int port;
    double *lat;
    int n, errors;
};

static void *run_probe(void *arg)
{
    struct probe *p = arg;
    int fd = -1;
    while (!atomic_load(&stop) && p->n < MAX_PROBES) {
        double t0 = now_ms();
        int st = call(&fd, p->port, "GET", "/healthz", NULL);
        if (st == 200) {
            double ms = now_ms() - t0;
            p->lat[p->n++] = ms;
            if (ms >= STALL_MS) { /* when, to find it in flexqd's log */
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                struct tm tm;
                gmtime_r(&ts.tv_sec, &tm);
                fprintf(stderr,
                        "soak: /healthz took %.0f ms, answered at "
                        "%02d:%02d:%02d.%03ldZ\n",
                        ms, tm.tm_hour, tm.tm_min, tm.tm_sec,
                        ts.tv_nsec / 1000000);
            }
        } else
            p->errors++;
        pause_ms(20);
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

struct slow {
    pthread_t th;
    int port;
    double cut_after_s; /* -1: still open at the end */
    bool got_408;       /* answered 408 Timeout before the close */
};

static void *run_slow(void *arg)
{
    struct slow *s = arg;
    s->cut_after_s = -1;
    int fd = connect_to(s->port);
    if (fd < 0)
        return NULL;
    double t0 = now_ms();
    const char *head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    bool ok = write_all(fd, head, strlen(head)) == 0;
    for (int i = 0; ok && !atomic_load(&stop); i++) {
        char line[64];
        int n = snprintf(line, sizeof(line), "X-Slow-%d: x\r\n", i);
        if (write_all(fd, line, (size_t)n) < 0)
            break;
        /* the server closing shows as EOF or an error on the socket */
        for (int k = 0; k < 10 && !atomic_load(&stop); k++) {
            char ans[32] = {0};
            ssize_t r = recv(fd, ans, sizeof(ans) - 1, MSG_DONTWAIT);
            if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
                s->got_408 = r > 0 && !strncmp(ans, "HTTP/1.1 408", 12);
                ok = false;
                break;
            }
            pause_ms(100);
        }
    }
    if (!ok)
        s->cut_after_s = (now_ms() - t0) / 1000.0;
    close(fd);
    return NULL;
}

struct usage {
    long rss_kb;
    int fds;
    long long db_bytes;
};

static void measure(pid_t pid, const char *dir, struct usage *u)
{
    char path[128], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    u->rss_kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6))
            u->rss_kb = atol(line + 6);
    if (f)
        fclose(f);
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    u->fds = 0;
    DIR *dd = opendir(path);
    for (struct dirent *e; dd && (e = readdir(dd));)
        u->fds += e->d_name[0] != '.';
    if (dd)
        closedir(dd);
    u->db_bytes = 0;
    dd = opendir(dir);
    for (struct dirent *e; dd && (e = readdir(dd));) {
        char p[4096];
        struct stat st;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        /* The database and its WAL; not flexq.reserve, the fixed 4 MiB
         * flexqd keeps for a full disk. */
        if (!strncmp(e->d_name, "flexq.db", 8) && stat(p, &st) == 0 &&
            S_ISREG(st.st_mode))
            u->db_bytes += (long long)st.st_size;
    }
    if (dd)
        closedir(dd);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static char *flexqd_path(const char *argv0)
{
    const char *env = getenv("FLEXQD");
    if (env && *env)
        return strdup(env);
    char *p = malloc(strlen(argv0) + 32);
    strcpy(p, argv0);
    char *slash = strrchr(p, '/');
    if (slash)
        strcpy(slash, "/../flexqd");
    else
        strcpy(p, "../flexqd");
    return p;
}

int main(int argc, char **argv)
{
    int nwl = argc > 1 ? atoi(argv[1]) : 20000;
    int nidle = argc > 2 ? atoi(argv[2]) : 1000;
    int nclients = argc > 3 ? atoi(argv[3]) : 8;
    int hold_s = argc > 4 ? atoi(argv[4]) : 150;
    if (nwl < 0 || nidle < 0 || nclients < 1 || nclients > MAX_CLIENTS) {
        fprintf(stderr,
                "usage: soak [WORKLOADS [IDLE [CLIENTS<=64 [HOLD_S]]]]\n");
        return 1;
    }
    /* The idle connections need descriptors here and in flexqd. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rlim_t want = (rlim_t)nidle + 256;
        if (rl.rlim_cur < want)
            rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char *bin = flexqd_path(argv[0]);
    char dir[] = "/tmp/flexq-soak-XXXXXX";
    int errpipe[2];
    if (!mkdtemp(dir) || pipe(errpipe) < 0) {
        perror("soak");
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(errpipe[1], 2);
        close(errpipe[0]);
        close(errpipe[1]);
        execl(bin, bin, "--listen", "127.0.0.1:0", "--data-dir", dir, "--sync",
              "normal", "--event-ttl", EVENT_TTL, (char *)NULL);
        perror("exec flexqd");
        _exit(127);
    }
    close(errpipe[1]);
    FILE *err = fdopen(errpipe[0], "r");
    char line[4096];
    int port = 0;
    while (!port && fgets(line, sizeof(line), err)) {
        const char *p = strstr(line, "msg=\"listening\" port=");
        if (p)
            port = atoi(p + strlen("msg=\"listening\" port="));
    }
    if (!port) {
        fprintf(stderr, "soak: flexqd (%s) did not start\n", bin);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return 1;
    }
    /* Drain flexqd's log so it never blocks on the pipe. */
    pid_t drainer = fork();
    if (drainer == 0) {
        while (fgets(line, sizeof(line), err))
            ;
        _exit(0);
    }
    fclose(err);

    int fd0 = -1;
    call(&fd0, port, "GET", "/healthz", NULL);
    close(fd0);
    struct usage before, after;
    measure(pid, dir, &before);

    struct probe probe = {.port = port};
    probe.lat = calloc(MAX_PROBES, sizeof(double));
    pthread_create(&probe.th, NULL, run_probe, &probe);
    struct slow slow = {.port = port, .cut_after_s = -1};
    pthread_create(&slow.th, NULL, run_slow, &slow);
    int *idle = calloc((size_t)nidle + 1, sizeof(int));
    int opened = 0;
    /* From 127.0.0.2 on, IDLE_PER_ADDR per address: under flexqd's
     * per-client cap, so all are accepted. */
    for (int i = 0; i < nidle; i++) {
        idle[i] = connect_from(port, 0, 2 + i / IDLE_PER_ADDR);
        opened += idle[i] >= 0;
    }
    /* One address opening FLOOD connections: past the cap the rest must
     * be refused (429 Status) and closed. */
    int flood[FLOOD];
    for (int i = 0; i < FLOOD; i++)
        flood[i] = connect_from(port, 1, 1);
    int flood_429 = 0, flood_open = 0;
    double fdeadline = now_ms() + 5000;
    for (int i = 0; i < FLOOD; i++) {
        if (flood[i] < 0)
            continue;
        char buf[64] = {0};
        ssize_t r;
        for (;;) {
            r = recv(flood[i], buf, sizeof(buf) - 1, MSG_DONTWAIT);
            if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) ||
                now_ms() >= fdeadline)
                break;
            if (i >= FLOOD_CAP)
                pause_ms(10); /* refused ones are answered at accept */
            else
                break;
        }
        if (r > 0 && !strncmp(buf, "HTTP/1.1 429", 12))
            flood_429++;
        else if (r < 0)
            flood_open++;
    }
    for (int i = 0; i < FLOOD; i++)
        if (flood[i] >= 0)
            close(flood[i]);
    struct usage busy;
    measure(pid, dir, &busy);

    struct worker *w = calloc((size_t)nclients, sizeof(*w));
    double t0 = now_ms();
    for (int i = 0; i < nclients; i++) {
        w[i].id = i;
        w[i].port = port;
        w[i].n = nwl / nclients + (i < nwl % nclients);
        pthread_create(&w[i].th, NULL, run_worker, &w[i]);
    }
    int created = 0, deleted = 0, errors = 0;
    for (int i = 0; i < nclients; i++) {
        pthread_join(w[i].th, NULL);
        created += w[i].created;
        deleted += w[i].deleted;
        errors += w[i].errors;
    }
    double churn_ms = now_ms() - t0;
    /* Hold: the probe goes on while flexqd should cut the idle and the
     * slow clients off (its idle timeout) and expire the Events; until
     * every idle connection is closed or HOLD_S have passed. */
    int cut = 0;
    double hold_until = now_ms() + hold_s * 1000.0;
    for (;;) {
        cut = 0;
        for (int i = 0; i < nidle; i++) {
            char c;
            if (idle[i] < 0) {
                cut++;
                continue;
            }
            /* An answer (408: its headers are overdue) or the close. */
            ssize_t r = recv(idle[i], &c, 1, MSG_DONTWAIT);
            if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
                close(idle[i]);
                idle[i] = -1;
                cut++;
            }
        }
        cut -= nidle - opened; /* never opened */
        /* Until the idle and slow clients are cut off and the churn's
         * Events had time to expire (TTL, then a sweep), or HOLD_S. */
        bool expired = now_ms() - t0 - churn_ms >= EXPIRE_WAIT_S * 1000.0;
        if ((cut >= opened && slow.cut_after_s >= 0 && expired) ||
            now_ms() >= hold_until)
            break;
        pause_ms(500);
    }
    for (int i = 0; i < nidle; i++)
        if (idle[i] >= 0)
            close(idle[i]);
    double held_s = (now_ms() - t0 - churn_ms) / 1000.0;
    atomic_store(&stop, true);
    pthread_join(probe.th, NULL);
    pthread_join(slow.th, NULL);
    /* Let flexqd notice the closed connections: poll its descriptor count
     * for a few seconds (a deadline, not a fixed wait). */
    double until = now_ms() + 5000;
    do {
        pause_ms(100);
        measure(pid, dir, &after);
    } while (after.fds > before.fds + 2 && now_ms() < until);
    fd0 = -1;
    call(&fd0, port, "GET", "/healthz", NULL);
    close(fd0);
    measure(pid, dir, &after);

    qsort(probe.lat, (size_t)probe.n, sizeof(double), cmp_double);
    double p50 = probe.n ? probe.lat[probe.n / 2] : 0;
    double p99 = probe.n ? probe.lat[(int)((double)probe.n * 0.99)] : 0;
    double pmax = probe.n ? probe.lat[probe.n - 1] : 0;

    printf("flexqd soak: %d workloads created and deleted by %d clients, "
           "%d idle connections, one slow-header client\n",
           nwl, nclients, nidle);
    printf("  churn            %d created, %d deleted, %d errors, in %.1f s\n",
           created, deleted, errors, churn_ms / 1000);
    printf("  idle             %d opened, %d closed by flexqd within %.0f s "
           "after the churn\n",
           opened, cut, held_s);
    printf("  per-client cap   %d connections from one address: %d kept, "
           "%d refused with 429\n",
           FLOOD, flood_open, flood_429);
    if (slow.cut_after_s >= 0)
        printf("  slow header      cut off after %.1f s%s\n", slow.cut_after_s,
               slow.got_408 ? " (408 Status)" : "");
    else
        printf("  slow header      still open at the end (%.1f s)\n",
               churn_ms / 1000);
    printf("  probe /healthz   %d answers, %d errors: p50 %.2f ms, "
           "p99 %.2f ms, max %.2f ms\n",
           probe.n, probe.errors, p50, p99, pmax);
    printf("  RSS              %ld KiB before, %ld KiB after\n", before.rss_kb,
           after.rss_kb);
    printf("  database         %lld bytes before, %lld bytes after\n",
           before.db_bytes, after.db_bytes);
    printf("  descriptors      %d before, %d with the idle clients, %d "
           "after\n",
           before.fds, busy.fds, after.fds);
    printf(
        "{\"workloads\":%d,\"clients\":%d,\"created\":%d,\"deleted\":%d,"
        "\"errors\":%d,\"churn_s\":%.2f,\"idle_opened\":%d,"
        "\"idle_closed_by_server\":%d,\"held_s\":%.1f,\"slow_header_cut_s\":%.1f,"
        "\"probe_n\":%d,\"probe_errors\":%d,\"probe_p50_ms\":%.3f,"
        "\"probe_p99_ms\":%.3f,\"probe_max_ms\":%.3f,"
        "\"rss_kb_before\":%ld,\"rss_kb_after\":%ld,"
        "\"db_bytes_before\":%lld,\"db_bytes_after\":%lld,"
        "\"fds_before\":%d,\"fds_busy\":%d,\"fds_after\":%d,"
        "\"flood\":%d,\"flood_kept\":%d,\"flood_429\":%d}\n",
        nwl, nclients, created, deleted, errors, churn_ms / 1000, opened, cut,
        held_s, slow.cut_after_s, probe.n, probe.errors, p50, p99, pmax,
        before.rss_kb, after.rss_kb, before.db_bytes, after.db_bytes,
        before.fds, busy.fds, after.fds, FLOOD, flood_open, flood_429);

    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    waitpid(drainer, NULL, 0);
    free(probe.lat);
    free(idle);
    free(w);
    free(bin);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "soak: could not remove %s\n", dir);
    return errors ? 1 : 0;
}
