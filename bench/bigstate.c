/*
 * bench/bigstate.c - flexqd with a big cluster's state: start-up, memory,
 * list pages and a watch from a resourceVersion.
 *
 * The fixture (written straight into a fresh data directory through the
 * daemon's store module, store.h, in transactions of 50,000 rows, the way
 * flexqd commits): at --scale 1, 100,000 Workloads (Finished, in one
 * LocalQueue), 300,000 Pods (Succeeded), 300,000 Events and 299,997
 * ConfigMaps, plus one ResourceFlavor, ClusterQueue and LocalQueue:
 * 1,000,000 objects. The default --scale 0.1 writes a tenth (100,000).
 *
 * Then, against build/flexqd (or $FLEXQD; --provider sim, --sync full):
 *   startup_s      exec until the first list is answered (the store read
 *                  back into the engine, the first settle, the listener);
 *                  startup_listen_s until its "listening" log line;
 *   rss            VmRSS of that daemon after the lists, less the VmRSS of
 *                  an empty daemon started the same way, per object;
 *   list pages     every Workload listed 500 at a time (limit=500, then
 *                  continue=TOKEN until none), one keep-alive connection:
 *                  p50 / p99 / max per page;
 *   watch          a watch of every ConfigMap from the first page's
 *                  resourceVersion after 1,000 more ConfigMaps were
 *                  created: time until their 1,000 lines arrived; then
 *                  100 creates one by one, each timed until its watch line.
 *
 * Admission with 1,000,000 pending is bench/admission's (`admission
 * 1000000`), not repeated here.
 *
 * Usage: bigstate [--scale S]   (0.001-1, default 0.1). Output: readable
 * figures, then one JSON object as the last line with objects, startup_s,
 * rss_bytes_per_object, list_page_p99_ms.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/stat.h>

#include "bench_http.h"
#include "flexq/objstore.h"
#include "flexq/value.h"
#include "store.h"

#define BATCH 50000

static long rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    long kb = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static struct fq_value *parse(const char *json)
{
    struct fq_limits lim = fq_limits_default();
    struct fq_value *v = NULL;
    if (fq_json_parse(json, strlen(json), "fixture", &lim, &v, NULL) != 0) {
        fprintf(stderr, "bigstate: bad fixture JSON: %s\n", json);
        exit(1);
    }
    return v;
}

struct fixture {
    struct fq_store *st;
    struct fq_objstore *os;
    uint64_t rev;
    long n, in_batch;
    int64_t now;
};

static void flush(struct fixture *f)
{
    struct fq_change *c = NULL;
    size_t n = fq_objstore_take_changes(f->os, &c);
    struct fq_err err = {0};
    if (n && fq_store_commit(f->st, c, n, &err) < 0) {
        fprintf(stderr, "bigstate: commit: %s\n", err.msg);
        exit(1);
    }
    f->rev = fq_objstore_revision(f->os);
    fq_changes_free(c, n);
    fq_objstore_free(f->os);
    f->os = fq_objstore_new();
    fq_objstore_set_revision(f->os, f->rev);
    f->in_batch = 0;
}

static void add(struct fixture *f, char *json)
{
    char uid[40];
    snprintf(uid, sizeof(uid), "00000000-bench-%016lx", f->n);
    struct fq_err err = {0};
    if (fq_objstore_create(f->os, parse(json), f->now, uid, NULL, &err) < 0) {
        fprintf(stderr, "bigstate: create: %s\n", err.msg);
        exit(1);
    }
    free(json);
    f->n++;
    if (++f->in_batch == BATCH)
        flush(f);
}

static long make_fixture(const char *dir, double scale)
{
    struct fixture f = {0};
    struct fq_err err = {0};
    if (fq_store_open(dir, FQ_STORE_SYNC_NORMAL, &f.st, &err) < 0) {
        fprintf(stderr, "bigstate: %s\n", err.msg);
        exit(1);
    }
    f.os = fq_objstore_new();
    f.now = (int64_t)(wall() * 1000.0);
    long nwl = (long)(100000 * scale), npod = 3 * nwl, nev = 3 * nwl;
    long ncm = (long)(1000000 * scale) - nwl - npod - nev - 3;
    add(&f, fq_xstrdup("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
                       "\"ResourceFlavor\",\"metadata\":{\"name\":"
                       "\"default\"}}"));
    add(&f,
        fq_xstrdup("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
                   "\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},\"spec\":{"
                   "\"namespaceSelector\":{},\"resourceGroups\":[{"
                   "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"
                   "\"default\",\"resources\":[{\"name\":\"cpu\","
                   "\"nominalQuota\":\"100\"}]}]}]}}"));
    add(&f, fq_xstrdup("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
                       "\"LocalQueue\",\"metadata\":{\"name\":\"lq\","
                       "\"namespace\":\"default\"},\"spec\":{"
                       "\"clusterQueue\":\"cq\"}}"));
    for (long i = 0; i < nwl; i++)
        add(&f,
            fq_xasprintf(
                "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
                "\"Workload\",\"metadata\":{\"name\":\"wl-%ld\",\"namespace\":"
                "\"default\",\"labels\":{\"app\":\"bench\"}},\"spec\":{"
                "\"queueName\":\"lq\",\"podSets\":[{\"name\":\"main\","
                "\"count\":3,\"template\":{\"spec\":{\"containers\":[{"
                "\"name\":\"c\",\"image\":\"busybox\",\"resources\":{"
                "\"requests\":{\"cpu\":\"1\"}}}]}}}]},\"status\":{"
                "\"conditions\":[{\"type\":\"Finished\",\"status\":\"True\","
                "\"reason\":\"Succeeded\",\"message\":\"done\","
                "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}",
                i));
    for (long i = 0; i < npod; i++)
        add(&f,
            fq_xasprintf(
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
                "\"name\":\"wl-%ld-%ld\",\"namespace\":\"default\","
                "\"labels\":{\"app\":\"bench\"}},\"spec\":{\"nodeName\":"
                "\"gone-%ld\",\"restartPolicy\":\"Never\",\"containers\":[{"
                "\"name\":\"c\",\"image\":\"busybox\",\"command\":[\"true\"],"
                "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{"
                "\"phase\":\"Succeeded\"}}",
                i / 3, i % 3, i % 100));
    for (long i = 0; i < nev; i++)
        add(&f, fq_xasprintf(
                    "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{"
                    "\"name\":\"wl-%ld.%ld\",\"namespace\":\"default\"},"
                    "\"involvedObject\":{\"kind\":\"Workload\",\"namespace\":"
                    "\"default\",\"name\":\"wl-%ld\"},\"reason\":\"Admitted\","
                    "\"message\":\"Admitted by ClusterQueue cq\",\"type\":"
                    "\"Normal\",\"count\":1}",
                    i / 3, i % 3, i / 3));
    for (long i = 0; i < ncm; i++)
        add(&f, fq_xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                             "\"metadata\":{\"name\":\"cm-%ld\",\"namespace\":"
                             "\"default\"},\"data\":{\"key\":\"value-%ld\"}}",
                             i, i));
    flush(&f);
    fq_objstore_free(f.os);
    fq_store_close(f.st);
    return f.n;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
    if (!n)
        return 0;
    double idx = p * (double)(n - 1);
    size_t lo = (size_t)floor(idx), hi = (size_t)ceil(idx);
    return v[lo] + (v[hi] - v[lo]) * (idx - (double)lo);
}

/* The value of "key":"..." in a JSON text (owned), or NULL. */
static char *json_str(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":\"", key);
    const char *p = strstr(text, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    const char *e = strchr(p, '"');
    return e ? fq_xasprintf("%.*s", (int)(e - p), p) : NULL;
}

/* --- the watch ---------------------------------------------------------- */

struct watch {
    int fd;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int lines;
    int status;
    bool ended;
};

static void w_head(void *ctx, int status)
{
    struct watch *w = ctx;
    pthread_mutex_lock(&w->mu);
    w->status = status;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void w_line(void *ctx, const char *line, size_t len)
{
    struct watch *w = ctx;
    if (!memmem(line, len, "\"bench-w-", 9))
        return;
    pthread_mutex_lock(&w->mu);
    w->lines++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void *w_main(void *arg)
{
    struct watch *w = arg;
    read_stream(w->fd, w_head, w_line, w);
    pthread_mutex_lock(&w->mu);
    w->ended = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Waits until the watch has `n` lines (10 s at most); false on timeout. */
static bool w_wait(struct watch *w, int n)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 10;
    pthread_mutex_lock(&w->mu);
    while (w->lines < n && !w->ended)
        if (pthread_cond_timedwait(&w->cv, &w->mu, &dl) == ETIMEDOUT)
            break;
    bool ok = w->lines >= n;
    pthread_mutex_unlock(&w->mu);
    return ok;
}

static int create_cm(struct conn *c, int i)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
             "\"name\":\"bench-w-%d\",\"namespace\":\"default\"},\"data\":{"
             "\"k\":\"v\"}}",
             i);
    return call(c, "POST", "/api/v1/namespaces/default/configmaps",
                "application/json", body);
}

int main(int argc, char **argv)
{
    double scale = 0.1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--scale") && i + 1 < argc) {
            scale = strtod(argv[++i], NULL);
        } else {
            fprintf(stderr, "usage: bigstate [--scale S (0.001-1)]\n");
            return 2;
        }
    }
    if (!(scale >= 0.001 && scale <= 1)) {
        fprintf(stderr, "bigstate: --scale is 0.001 to 1\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    char *bin = bin_path(argv[0], "FLEXQD", "flexqd");
    char dir[] = "/tmp/flexq-bench-bigstate-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char empty[128], big[128];
    snprintf(empty, sizeof(empty), "%s/empty", dir);
    snprintf(big, sizeof(big), "%s/big", dir);
    mkdir(empty, 0755);
    mkdir(big, 0755);
    /* --max-events: the fixture's Events are over the default cap of
     * 10,000, and expiring them at start would measure a smaller state
     * (and the sweeps would wrap the watch history the watch below
     * replays). */
    const char *const args[] = {"--provider",   "sim",     "--sync",
                                "full",         "--seed",  "42",
                                "--max-events", "1000000", NULL};

    /* an empty daemon: the RSS to subtract */
    struct daemon d;
    if (daemon_start(&d, bin, empty, args) < 0)
        return 1;
    struct conn *c = fq_xcalloc(1, sizeof(*c));
    c->fd = connect_to(d.port);
    call(c, "GET", "/api/v1/namespaces/default/configmaps?limit=1",
         "application/json", NULL);
    long rss_empty = rss_kb(d.pid);
    close(c->fd);
    daemon_stop(&d);

    double t = wall();
    char data[160];
    snprintf(data, sizeof(data), "%s/data", big);
    long objects = make_fixture(data, scale);
    double fixture_s = wall() - t;
    struct stat sb;
    char db[200];
    snprintf(db, sizeof(db), "%s/flexq.db", data);
    long long db_bytes = stat(db, &sb) == 0 ? (long long)sb.st_size : 0;
    printf("flexqd with a big state: %ld objects (fixture written in %.1f s, "
           "%.0f MB of SQLite)\n",
           objects, fixture_s, (double)db_bytes / 1e6);
    fflush(stdout);

    double t0 = wall();
    if (daemon_start_wait(&d, bin, big, args, 600) < 0)
        return 1;
    double t_listen = wall() - t0;
    c->fd = connect_to(d.port);
    c->len = 0;
    struct fq_buf page = FQ_BUF_INIT;
    int st =
        call_body(c, "GET",
                  "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads"
                  "?limit=500",
                  "application/json", NULL, &page);
    double startup = wall() - t0;
    if (st != 200) {
        fprintf(stderr, "bigstate: first list: HTTP %d\n", st);
        daemon_stop(&d);
        return 1;
    }
    char *rv = json_str(fq_buf_str(&page), "resourceVersion");

    /* every Workload, 500 a page */
    size_t npages = 0, cap = 0, items = 0;
    double *lat = NULL;
    char *cont = json_str(fq_buf_str(&page), "continue");
    double tl = wall();
    while (cont && *cont) {
        char *path = fq_xasprintf("/apis/kueue.x-k8s.io/v1beta1/namespaces/"
                                  "default/workloads?limit=500&continue=%s",
                                  cont);
        free(cont);
        fq_buf_reset(&page);
        double a = wall();
        st = call_body(c, "GET", path, "application/json", NULL, &page);
        double e = wall() - a;
        free(path);
        if (st != 200) {
            fprintf(stderr, "bigstate: page %zu: HTTP %d\n", npages + 1, st);
            break;
        }
        FQ_GROW(lat, cap, npages + 1);
        lat[npages++] = e * 1000.0;
        for (const char *p = fq_buf_str(&page);
             (p = strstr(p, "\"kind\":\"Workload\"")) != NULL; p++)
            items++;
        cont = json_str(fq_buf_str(&page), "continue");
    }
    free(cont);
    double list_s = wall() - tl;
    long rss_big = rss_kb(d.pid);
    qsort(lat, npages, sizeof(double), cmp_d);

    /* a watch of every ConfigMap from the first page's resourceVersion */
    for (int i = 0; i < 1000; i++)
        create_cm(c, i);
    struct watch w = {0};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    w.fd = connect_to(d.port);
    char *wreq =
        fq_xasprintf("GET /api/v1/configmaps?watch=true&"
                     "resourceVersion=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                     rv ? rv : "0");
    double tw = wall();
    write_all(w.fd, wreq, strlen(wreq));
    free(wreq);
    pthread_create(&w.th, NULL, w_main, &w);
    bool replay_ok = w_wait(&w, 1000);
    double replay_ms = (wall() - tw) * 1000.0;
    if (!replay_ok)
        fprintf(
            stderr,
            "bigstate: the watch from %s got %d of 1000 lines (HTTP %d%s)\n",
            rv ? rv : "0", w.lines, w.status, w.ended ? ", ended" : "");
    double live[100];
    int nlive = 0;
    for (int i = 0; replay_ok && i < 100; i++) {
        double a = wall();
        create_cm(c, 1000 + i);
        if (!w_wait(&w, 1001 + i))
            break;
        live[nlive++] = (wall() - a) * 1000.0;
    }
    qsort(live, (size_t)nlive, sizeof(double), cmp_d);
    shutdown(w.fd, SHUT_RDWR);
    pthread_join(w.th, NULL);
    close(w.fd);
    close(c->fd);
    daemon_stop(&d);
    fq_buf_release(&page);

    double per_obj =
        objects ? (double)(rss_big - rss_empty) * 1024.0 / (double)objects : 0;
    printf("  start-up          %.2f s until the first list was answered "
           "(%.2f s until listening)\n",
           startup, t_listen);
    printf("  RSS               %.0f MB (empty daemon %.1f MB): %.0f bytes "
           "per object\n",
           rss_big / 1024.0, rss_empty / 1024.0, per_obj);
    printf("  list pages        %zu pages of 500 (%zu Workloads) in %.2f s: "
           "p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
           npages, items, list_s, pct(lat, npages, 0.5), pct(lat, npages, 0.99),
           npages ? lat[npages - 1] : 0.0);
    printf("  watch             from resourceVersion %s: 1000 changes "
           "replayed in %.1f ms%s; live create -> watch line p50 %.2f ms, "
           "p99 %.2f ms (%d)\n",
           rv ? rv : "?", replay_ms, replay_ok ? "" : " (INCOMPLETE)",
           pct(live, (size_t)nlive, 0.5), pct(live, (size_t)nlive, 0.99),
           nlive);
    printf("{\"bench\":\"bigstate\",\"scale\":%g,\"objects\":%ld,"
           "\"fixture_s\":%.1f,\"db_bytes\":%lld,\"startup_s\":%.2f,"
           "\"startup_listen_s\":%.2f,\"rss_kb\":%ld,\"rss_empty_kb\":%ld,"
           "\"rss_bytes_per_object\":%.0f,\"list_pages\":%zu,"
           "\"list_page_p50_ms\":%.2f,\"list_page_p99_ms\":%.2f,"
           "\"list_page_max_ms\":%.2f,\"watch_replay_1000_ms\":%.1f,"
           "\"watch_live_p50_ms\":%.2f,\"watch_live_p99_ms\":%.2f}\n",
           scale, objects, fixture_s, db_bytes, startup, t_listen, rss_big,
           rss_empty, per_obj, npages, pct(lat, npages, 0.5),
           pct(lat, npages, 0.99), npages ? lat[npages - 1] : 0.0, replay_ms,
           pct(live, (size_t)nlive, 0.5), pct(live, (size_t)nlive, 0.99));
    free(lat);
    free(rv);
    free(c);
    free(bin);
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (getenv("BIGSTATE_KEEP"))
        printf("bigstate: kept %s\n", dir);
    else if (system(cmd) != 0)
        fprintf(stderr, "bigstate: could not remove %s\n", dir);
    return replay_ok ? 0 : 1;
}
