/*
 * bench/api.c - creates per second and latency of flexqd's API.
 *
 * How it works: starts build/flexqd (next to this binary's directory, or
 * $FLEXQD) on 127.0.0.1 port 0 with a fresh data directory and durable
 * commits (--sync full), learns the port from its "listening" log line,
 * then runs CLIENTS threads, each with one keep-alive connection, that POST
 * Workloads as fast as the server answers. Each answer is a 201 only after
 * the server's group commit, so the figures include the fsync. Latency is
 * measured per request with CLOCK_MONOTONIC. At the end flexqd is stopped
 * with SIGTERM and its commit count read from its "stopped" log line.
 *
 * Usage: api [TOTAL_CREATES] [CLIENTS] [workload|configmap]
 *        (default 8000, 16, workload). `configmap` measures the API and
 *        store alone: no controller reacts to ConfigMaps.
 * Output: readable figures, then one JSON object as the last line.
 *
 * It runs twice: with --sync full (the WAL is fsynced after every commit,
 * on flexqd's syncer thread, before the commit's answers leave, which
 * survives a power cut; on a slow disk throughput is bounded by the fsync
 * time: with C clients each waiting for its own commit, at most about
 * C / (2 * fsync) creates/s) and with --sync normal (the WAL is written at
 * every commit without fsync, which survives kill -9, what the crash test
 * checks). docs/benchmarks.md has the figures.
 *
 * Clients speak HTTP/1.1 over plain sockets (not libcurl) so that the
 * client side costs little of the machine's CPU next to the server.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 256

struct client {
    pthread_t th;
    int id;
    int port;
    int n;          /* creates to do */
    double *lat_ms; /* one per create */
    int done;
    int errors;
    bool configmap;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
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

static int write_all(int fd, const char *p, size_t n)
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

/* Finds a header name, any case, in the NUL-terminated head `h`. */
static const char *find_header(const char *h, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = h; *p; p++)
        if (strncasecmp(p, name, n) == 0)
            return p;
    return NULL;
}

/* Reads one HTTP response (Content-Length framed); returns the status. */
static int read_response(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    char *hend = NULL;
    while (!hend) {
        if (len == cap)
            return -1;
        ssize_t r = read(fd, buf + len, cap - len);
        if (r <= 0)
            return -1;
        len += (size_t)r;
        buf[len < cap ? len : cap - 1] = '\0';
        hend = strstr(buf, "\r\n\r\n");
    }
    int status = atoi(buf + 9);
    const char *cl = find_header(buf, "content-length:");
    size_t body = cl ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
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

static void *run_client(void *arg)
{
    struct client *c = arg;
    int fd = connect_to(c->port);
    char body[1024], req[2048];
    static char resp[1 << 16];
    char *rbuf = malloc(sizeof(resp));
    for (int i = 0; fd >= 0 && i < c->n; i++) {
        int bl;
        if (c->configmap)
            bl = snprintf(body, sizeof(body),
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                          "\"metadata\":{\"name\":\"bench-%d-%d\","
                          "\"namespace\":\"default\"},\"data\":{\"k\":"
                          "\"v\"}}",
                          c->id, i);
        else
            bl = snprintf(
                body, sizeof(body),
                "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
                "\"Workload\",\"metadata\":{\"name\":\"bench-%d-%d\","
                "\"namespace\":\"default\",\"labels\":{\"bench\":\"api\"}},"
                "\"spec\":{\"queueName\":\"bench\",\"podSets\":[{\"name\":"
                "\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{"
                "\"name\":\"c\",\"image\":\"busybox\",\"resources\":{"
                "\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}}]}}",
                c->id, i);
        int rl = snprintf(req, sizeof(req),
                          "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Content-Type: application/json\r\n"
                          "Content-Length: %d\r\n\r\n%s",
                          c->configmap ? "/api/v1/namespaces/default/"
                                         "configmaps" :
                                         "/apis/kueue.x-k8s.io/v1beta1/"
                                         "namespaces/default/workloads",
                          bl, body);
        double t0 = now_ms();
        if (write_all(fd, req, (size_t)rl) < 0) {
            c->errors++;
            break;
        }
        int st = read_response(fd, rbuf, sizeof(resp));
        double t1 = now_ms();
        if (st != 201) {
            c->errors++;
            if (st < 0)
                break;
            continue;
        }
        c->lat_ms[c->done++] = t1 - t0;
    }
    free(rbuf);
    if (fd >= 0)
        close(fd);
    return NULL;
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

struct result {
    const char *sync;
    int done, errors;
    double elapsed, rate, p50, p99, max;
    unsigned long long commits;
};

/* One run against a fresh flexqd with `--sync sync`; 0 or -1. */
static int run_one(const char *bin, const char *sync, int total, int nclients,
                   bool configmap, struct result *res)
{
    memset(res, 0, sizeof(*res));
    res->sync = sync;
    char dir[] = "/tmp/flexq-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return -1;
    }
    int errpipe[2];
    if (pipe(errpipe) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        /* flexqd goes when the bench goes, even if the bench crashes. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(errpipe[1], 2);
        close(errpipe[0]);
        close(errpipe[1]);
        execl(bin, bin, "--listen", "127.0.0.1:0", "--data-dir", dir, "--sync",
              sync, (char *)NULL);
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
        fprintf(stderr, "bench: flexqd (%s) did not start\n", bin);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fclose(err);
        return -1;
    }

    struct client *cl = calloc((size_t)nclients, sizeof(*cl));
    double t0 = now_ms();
    for (int i = 0; i < nclients; i++) {
        cl[i].id = i;
        cl[i].port = port;
        cl[i].configmap = configmap;
        cl[i].n = total / nclients + (i < total % nclients);
        cl[i].lat_ms = calloc((size_t)cl[i].n + 1, sizeof(double));
        pthread_create(&cl[i].th, NULL, run_client, &cl[i]);
    }
    for (int i = 0; i < nclients; i++) {
        pthread_join(cl[i].th, NULL);
        res->done += cl[i].done;
        res->errors += cl[i].errors;
    }
    res->elapsed = now_ms() - t0;
    double *all = calloc((size_t)res->done + 1, sizeof(double));
    int k = 0;
    for (int i = 0; i < nclients; i++) {
        memcpy(all + k, cl[i].lat_ms, (size_t)cl[i].done * sizeof(double));
        k += cl[i].done;
        free(cl[i].lat_ms);
    }
    int done = res->done;
    qsort(all, (size_t)done, sizeof(double), cmp_double);
    res->p50 = done ? all[done / 2] : 0;
    res->p99 = done ? all[(int)((double)done * 0.99)] : 0;
    res->max = done ? all[done - 1] : 0;
    res->rate = res->elapsed > 0 ? done * 1000.0 / res->elapsed : 0;
    free(all);
    free(cl);

    kill(pid, SIGTERM);
    while (fgets(line, sizeof(line), err)) {
        const char *p = strstr(line, "msg=\"stopped\" commits=");
        if (p)
            res->commits =
                strtoull(p + strlen("msg=\"stopped\" commits="), NULL, 10);
    }
    waitpid(pid, NULL, 0);
    fclose(err);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: could not remove %s\n", dir);
    return 0;
}

static void print_result(const struct result *r)
{
    printf("  --sync %s%s\n", r->sync,
           !strcmp(r->sync, "full") ? " (fsync per commit: survives power "
                                      "loss)" :
                                      " (WAL written per commit, no fsync: "
                                      "survives kill -9)");
    printf("    creates          %d ok, %d failed, in %.0f ms\n", r->done,
           r->errors, r->elapsed);
    printf("    throughput       %.0f creates/s\n", r->rate);
    printf("    latency          p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
           r->p50, r->p99, r->max);
    printf("    commits          %llu (%.1f writes per commit)\n", r->commits,
           r->commits ? (double)r->done / (double)r->commits : 0.0);
}

static void json_result(const struct result *r)
{
    printf("\"%s\":{\"creates\":%d,\"errors\":%d,\"elapsed_ms\":%.1f,"
           "\"creates_per_s\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
           "\"max_ms\":%.3f,\"commits\":%llu}",
           r->sync, r->done, r->errors, r->elapsed, r->rate, r->p50, r->p99,
           r->max, r->commits);
}

int main(int argc, char **argv)
{
    int total = argc > 1 ? atoi(argv[1]) : 8000;
    int nclients = argc > 2 ? atoi(argv[2]) : 16;
    bool configmap = argc > 3 && !strcmp(argv[3], "configmap");
    if (total <= 0 || nclients <= 0 || nclients > MAX_CLIENTS) {
        fprintf(stderr, "usage: api [TOTAL_CREATES] [CLIENTS<=256] "
                        "[workload|configmap]\n");
        return 1;
    }
    char *bin = flexqd_path(argv[0]);
    struct result full, normal;
    if (run_one(bin, "full", total, nclients, configmap, &full) < 0 ||
        run_one(bin, "normal", total, nclients, configmap, &normal) < 0) {
        free(bin);
        return 1;
    }
    free(bin);
    printf("flexqd API create benchmark: %d clients (one keep-alive "
           "connection each) creating %s\n",
           nclients, configmap ? "ConfigMaps" : "Workloads");
    print_result(&full);
    print_result(&normal);
    printf("{\"bench\":\"api\",\"kind\":\"%s\",\"clients\":%d,",
           configmap ? "ConfigMap" : "Workload", nclients);
    json_result(&full);
    putchar(',');
    json_result(&normal);
    printf("}\n");
    return full.errors || normal.errors ? 1 : 0;
}
