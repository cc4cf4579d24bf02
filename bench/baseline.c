/*
 * bench/baseline.c - Kueue's scheduler baseline (test/performance/
 * scheduler, configs/baseline) in real time through a real flexqd.
 *
 * The shape (reference/kueue.md §5.1, from Kueue's generator.yaml):
 * 5 cohorts x 6 ClusterQueues, each 20 cpu nominal, borrowingLimit 100,
 * preemption reclaimWithinCohort Any and withinClusterQueue LowerPriority,
 * one flavor; per ClusterQueue 350 small (1 cpu, 200 ms, priority 50, one
 * every 100 ms), 100 medium (5 cpu, 500 ms, priority 100, every 500 ms)
 * and 50 large (20 cpu, 1000 ms, priority 200, every 1200 ms): 15,000
 * Workloads. Ideal wall: the work, 30 x (350x1x0.2 + 100x5x0.5 + 50x20x1)
 * cpu-s = 39,600 cpu-s, over 600 cpu = 66 s.
 *
 * How it drives (as Kueue's runner does against minimalkueue): flexqd is
 * started with --provider sim, --sync full (every answer after the fsync)
 * and a fresh data directory; the queues are created through the API; the
 * Workloads (kueue.x-k8s.io Workloads with one podset of one pod, no Job:
 * Kueue's runner creates Workloads too) are POSTed at the baseline's pace
 * (at fixed times j x interval; --kueue-pacing: as Kueue's generator, one
 * interval after the last create of the same set was answered) by a pool
 * of sender threads, one keep-alive connection each; a watch on
 * Workloads sees each Admitted=True, and the workload "runs" its fake
 * duration: that long after its admission was seen, a sender PUTs its
 * status with Finished=True (reason Succeeded), which releases its quota.
 * A workload seen evicted (Admitted no longer True) has its pending finish
 * dropped and waits for its next admission, as in Kueue's runner.
 *
 * Measures, from the API: time to admission per class = the Admitted seen
 * on the watch minus the creation request's send time (mean, as Kueue's
 * wlClassesMaxAvgTimeToAdmissionMs); usage = cpu x (finish answered -
 * admission seen) summed over workloads (evicted spans included) / (600
 * cpu x wall); wall = first creation to the last finish answered. From
 * /metrics at the end: kueue_admitted_workloads_total,
 * kueue_evicted_workloads_total and the mean of
 * kueue_admission_wait_time_seconds (all classes), printed beside.
 *
 * Time scale: the baseline's pacing is in real milliseconds (100 ms between
 * small workloads, 200 ms runs), so the default is real time (--time-scale
 * 1, about 70 s). --time-scale S divides the bench's pacing and durations
 * by S and passes --time-scale S to flexqd; the figures are then given in
 * baseline time (multiplied back by S).
 *
 * Scheduling cycles: flexqd runs with its own default pace,
 * policy.cycleMilliseconds 0 (--cycle-ms): a cycle in every turn where
 * something changed, as Kueue's scheduler has no period
 * (pkg/util/wait/backoff.go, UntilWithBackoff: the next cycle at once
 * after one that admitted something, a backoff of 1, 2, 4 ... at most
 * 100 ms only while cycles admit nothing). flexqd runs its cycle inside
 * the turn that answers the API, so the pace was 100 ms until a cycle's
 * cost followed what changed rather than what is pending (failed
 * nominations remembered per cohort version, src/core/kueue/nommemo.c):
 * at full size 0 now gives 95-96% usage in 82 s against 87% in 83.5 s at
 * 100, where freed quota waits for the next cycle (issue 21's third
 * pass, docs/benchmarks.md: "the cycle's cost").
 *
 * Lower bound (printed beside the targets): whatever the scheduler, the
 * work admitted by time t in a ClusterQueue's share of its cohort is at
 * most nominal x t plus what is still running (nominal x the longest
 * runtime), so the work pending at t is at least what arrived minus that.
 * Its integral over the run is the sum over workloads of work x time to
 * admission: divided by the total work, a bound on the work-weighted mean
 * time to admission, which no class can all beat. It is computed from the
 * run's own create times (about 4.1 s at fixed times j x interval, 3.2 s
 * at Kueue's generator's (j + 1) x interval before its drift; 0 when the
 * drift spread the arrivals so that they no longer exceed the quota).
 *
 * Preemption grace (flexq's switch, docs/policies.md (f)): every
 * Workload states its run time in the flexq.dev/expected-runtime
 * annotation, as a user who knows it would (Slurm's --time), and flexqd
 * runs with policy.preemptionGraceSeconds 1 by default: a large workload
 * then waits for the mediums and smalls it would preempt, each within
 * 0.5 s of its end, instead of evicting them (Kueue throws about 4,500
 * cpu-s of their runs away). --preemption-grace 0 is Kueue's preemption,
 * every other setting unchanged.
 *
 * Usage: baseline [--cohorts N] [--time-scale S] [--senders K]
 *                 [--cycle-ms MS] [--kueue-pacing] [--preemption-grace S]
 *   --cohorts N   cohorts of 6 ClusterQueues (default 5, the full
 *                 baseline; 1 is a fifth of the load on the same 66 s
 *                 timeline)
 *   --senders K   keep-alive connections sending (default 64: with 16,
 *                 finishes waited for a free connection for seconds and
 *                 each came in a turn of its own)
 *   --cycle-ms MS flexqd's policy.cycleMilliseconds (default 0,
 *                 flexqd's own default; 100 is Kueue's longest backoff)
 *   --kueue-pacing as Kueue's generator paces its creates: a set's first
 *                 one interval after the start, each next one an interval
 *                 after the last was answered, so the arrivals drift by
 *                 the create latency (on a loaded machine the last came
 *                 at 83 s instead of 60); by default at fixed times j x
 *                 interval, the timeline the 66 s ideal assumes
 *   --preemption-grace S  flexqd's policy.preemptionGraceSeconds in
 *                 baseline seconds (default 1; 0: Kueue's preemption)
 * Output: readable figures, then one JSON object as the last line with
 * usage_pct, large_s, medium_s, small_s, wall_s.
 *
 * What it does not do: pods (Kueue's baseline has none either), fair
 * sharing, several flavors.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/resource.h>

#include "bench_http.h"
#include "flexq/value.h"

#define CQS_PER_COHORT 6
#define NOMINAL        20
#define MAX_SENDERS    256

struct cls {
    const char *name;
    int count;       /* per ClusterQueue */
    int interval_ms; /* between creations */
    int runtime_ms;
    int priority;
    int cpu;
};

static const struct cls CLASSES[3] = {
    {"small", 350, 100, 200, 50, 1},
    {"medium", 100, 500, 500, 100, 5},
    {"large", 50, 1200, 1000, 200, 20},
};

enum {
    ST_NEW,
    ST_PENDING,
    ST_ADMITTED,
    ST_FINISHING,
    ST_DONE
};

struct wl {
    int cls, cq;
    int j; /* its place in its set (class, ClusterQueue) */
    int state;
    int gen;           /* bumped at every admission seen */
    double due;        /* creation due, wall s */
    double created;    /* create request sent */
    double admitted;   /* last Admitted=True seen */
    double finished;   /* finish answered */
    double used_cpu_s; /* cpu x admitted time, evictions included */
    double lost_cpu_s; /* of which in runs an eviction cut short */
    int evictions;
    char *status; /* JSON of the status at admission (owned) */
};

/* A task: create workload i, or finish it (if gen still matches). */
struct task {
    double at;
    int wl;
    int gen; /* -1: create */
};

struct bench {
    int port;
    double scale; /* time scale */
    struct wl *w;
    int n;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct task *heap;
    size_t nheap, capheap;
    int creates_left;
    int finished;
    int errors;
    int conflicts;   /* finish PUTs answered 409 (looked at again) */
    double late_max; /* the latest a create was sent after its due time */
    bool fixed;      /* creates at fixed times, not after the last answer */
    bool stop;
    double t0;
    /* watch */
    int wfd;
    bool ready;
};

/* This process's cpu seconds (user + system), all threads. */
static double self_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static bool task_before(const struct task *a, const struct task *b)
{
    if (a->at != b->at)
        return a->at < b->at;
    return a->wl < b->wl;
}

static void heap_push(struct bench *b, struct task t)
{
    FQ_GROW(b->heap, b->capheap, b->nheap + 1);
    size_t i = b->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!task_before(&t, &b->heap[p]))
            break;
        b->heap[i] = b->heap[p];
        i = p;
    }
    b->heap[i] = t;
}

static struct task heap_pop(struct bench *b)
{
    struct task top = b->heap[0];
    struct task last = b->heap[--b->nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct task *mv = &last;
        if (l < b->nheap && task_before(&b->heap[l], mv)) {
            m = l;
            mv = &b->heap[l];
        }
        if (r < b->nheap && task_before(&b->heap[r], mv))
            m = r;
        if (m == i)
            break;
        b->heap[i] = b->heap[m];
        i = m;
    }
    if (b->nheap)
        b->heap[i] = last;
    return top;
}

static void wl_name(int i, char *out, size_t size)
{
    snprintf(out, size, "wl-%d", i);
}

static char *create_body(const struct bench *b, int i)
{
    const struct wl *w = &b->w[i];
    const struct cls *c = &CLASSES[w->cls];
    return fq_xasprintf(
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
        "\"metadata\":{\"name\":\"wl-%d\",\"namespace\":\"default\","
        "\"labels\":{\"class\":\"%s\"},\"annotations\":{"
        "\"flexq.dev/expected-runtime\":\"%.0fms\"}},\"spec\":{"
        "\"queueName\":\"lq-%d\","
        "\"priority\":%d,\"podSets\":[{\"name\":\"main\",\"count\":1,"
        "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
        "\"none\",\"resources\":{\"requests\":{\"cpu\":\"%d\"}}}]}}}]}}",
        i, c->name, ceil(c->runtime_ms / b->scale), w->cq, c->priority, c->cpu);
}

static bool cond_true(const struct fq_value *obj, const char *type)
{
    const struct fq_value *conds = fq_value_path(obj, "status.conditions");
    for (size_t k = 0; k < fq_value_len(conds); k++) {
        const struct fq_value *cd = fq_seq_at(conds, k);
        if (!strcmp(fq_value_path_str(cd, "type", ""), type))
            return !strcmp(fq_value_path_str(cd, "status", ""), "True");
    }
    return false;
}

/*
 * The body that finishes the Workload `obj_json` (as last seen): its status
 * plus Finished=True (what Kueue's runner sets), with its resourceVersion,
 * so that a status flexqd changed meanwhile (an eviction) is not
 * overwritten: that PUT gets 409. NULL when the workload is no longer
 * admitted.
 */
static char *finish_body(const char *obj_json)
{
    struct fq_limits lim = fq_limits_default();
    lim.max_bytes = 1 << 24;
    struct fq_value *o = NULL;
    if (!obj_json ||
        fq_json_parse(obj_json, strlen(obj_json), "wl", &lim, &o, NULL) != 0)
        return NULL;
    if (!cond_true(o, "Admitted") || cond_true(o, "Finished")) {
        fq_value_free(o);
        return NULL;
    }
    struct fq_value *conds = fq_value_path(o, "status.conditions");
    struct fq_value *c = fq_value_map();
    fq_map_set(c, "type", fq_value_str("Finished"));
    fq_map_set(c, "status", fq_value_str("True"));
    fq_map_set(c, "reason", fq_value_str("Succeeded"));
    fq_map_set(c, "message", fq_value_str("baseline: fake duration over"));
    char ts[40];
    time_t now = time(NULL);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
    fq_seq_push(conds, c);
    char *out = fq_json_dumps(o, 0);
    fq_value_free(o);
    return out;
}

/* --- the senders ------------------------------------------------------- */

static void *sender(void *arg)
{
    struct bench *b = arg;
    struct conn *c = fq_xcalloc(1, sizeof(*c));
    c->fd = connect_to(b->port);
    pthread_mutex_lock(&b->mu);
    for (;;) {
        if (b->stop)
            break;
        if (!b->nheap) {
            pthread_cond_wait(&b->cv, &b->mu);
            continue;
        }
        double now = wall();
        if (b->heap[0].at > now) {
            double at = b->heap[0].at;
            struct timespec dl = {(time_t)at, (long)((at - floor(at)) * 1e9)};
            pthread_cond_timedwait(&b->cv, &b->mu, &dl);
            continue;
        }
        struct task t = heap_pop(b);
        struct wl *w = &b->w[t.wl];
        char path[160], name[32];
        wl_name(t.wl, name, sizeof(name));
        if (t.gen < 0) {
            w->state = ST_PENDING;
            w->created = wall();
            if (w->created - t.at > b->late_max)
                b->late_max = w->created - t.at;
            b->creates_left--;
            pthread_mutex_unlock(&b->mu);
            char *body = create_body(b, t.wl);
            int st = call(c, "POST",
                          "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/"
                          "workloads",
                          "application/json", body);
            free(body);
            pthread_mutex_lock(&b->mu);
            /* Kueue's generator: the set's next create one interval
             * after this one was answered */
            const struct cls *cl = &CLASSES[w->cls];
            if (!b->fixed && w->j + 1 < cl->count) {
                double at = wall() + cl->interval_ms / 1000.0 / b->scale;
                b->w[t.wl + 1].due = at;
                heap_push(b, (struct task){at, t.wl + 1, -1});
                pthread_cond_broadcast(&b->cv);
            }
            if (st != 201) {
                b->errors++;
                fprintf(stderr, "baseline: create %s: HTTP %d\n", name, st);
                w->state = ST_DONE;
                b->finished++;
                pthread_cond_broadcast(&b->cv);
            }
            continue;
        }
        if (w->state != ST_ADMITTED || w->gen != t.gen)
            continue; /* evicted meanwhile: its next admission decides */
        w->state = ST_FINISHING;
        char *body = finish_body(w->status);
        pthread_mutex_unlock(&b->mu);
        snprintf(path, sizeof(path),
                 "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/"
                 "%s",
                 name);
        char *spath = fq_xasprintf("%s/status", path);
        int st = 0;
        /* 409: flexqd changed it since (an eviction?): look again */
        for (int tries = 0; body && tries < 5; tries++) {
            st = call(c, "PUT", spath, "application/json", body);
            free(body);
            body = NULL;
            if (st != 409)
                break;
            pthread_mutex_lock(&b->mu);
            b->conflicts++;
            pthread_mutex_unlock(&b->mu);
            struct fq_buf cur = FQ_BUF_INIT;
            if (call_body(c, "GET", path, "application/json", NULL, &cur) ==
                200)
                body = finish_body(fq_buf_str(&cur));
            fq_buf_release(&cur);
        }
        free(body);
        free(spath);
        if (st != 200) {
            /* evicted before its time was up: it waits for its next
             * admission, which the watch shows */
            pthread_mutex_lock(&b->mu);
            if (w->state == ST_FINISHING) {
                double span = (wall() - w->admitted) * CLASSES[w->cls].cpu;
                w->used_cpu_s += span;
                w->lost_cpu_s += span;
                w->evictions++;
                w->state = ST_PENDING;
            }
            continue;
        }
        double done = wall();
        pthread_mutex_lock(&b->mu);
        w->finished = done;
        w->used_cpu_s += (done - w->admitted) * CLASSES[w->cls].cpu;
        w->state = ST_DONE;
        b->finished++;
        pthread_cond_broadcast(&b->cv);
    }
    pthread_mutex_unlock(&b->mu);
    close(c->fd);
    free(c);
    return NULL;
}

/* --- the watch ------------------------------------------------------------ */

static void on_head(void *ctx, int status)
{
    struct bench *b = ctx;
    pthread_mutex_lock(&b->mu);
    b->ready = status == 200;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static void on_line(void *ctx, const char *line, size_t len)
{
    struct bench *b = ctx;
    if (!memmem(line, len, "\"Admitted\"", 10))
        return;
    double now = wall();
    struct fq_limits lim = fq_limits_default();
    struct fq_value *ev = NULL;
    if (fq_json_parse(line, len, "watch", &lim, &ev, NULL) != 0)
        return;
    const struct fq_value *obj = fq_value_path(ev, "object");
    const char *name = fq_value_path_str(obj, "metadata.name", "");
    int i = !strncmp(name, "wl-", 3) ? atoi(name + 3) : -1;
    if (i < 0 || i >= b->n ||
        !strcmp(fq_value_path_str(ev, "type", ""), "DELETED")) {
        fq_value_free(ev);
        return;
    }
    bool admitted = cond_true(obj, "Admitted");
    bool finished = cond_true(obj, "Finished");
    pthread_mutex_lock(&b->mu);
    struct wl *w = &b->w[i];
    if (admitted && !finished && w->state == ST_PENDING) {
        w->state = ST_ADMITTED;
        w->admitted = now;
        w->gen++;
        free(w->status);
        w->status = fq_json_dumps(obj, 0);
        heap_push(b, (struct task){now + CLASSES[w->cls].runtime_ms / 1000.0 /
                                             b->scale,
                                   i, w->gen});
        pthread_cond_broadcast(&b->cv);
    } else if (!admitted && !finished && w->state == ST_ADMITTED) {
        /* evicted (preempted): the time it held its quota counts */
        double span = (now - w->admitted) * CLASSES[w->cls].cpu;
        w->used_cpu_s += span;
        w->lost_cpu_s += span;
        w->evictions++;
        w->state = ST_PENDING;
    }
    pthread_mutex_unlock(&b->mu);
    fq_value_free(ev);
}

static void *watcher(void *arg)
{
    struct bench *b = arg;
    read_stream(b->wfd, on_head, on_line, b);
    pthread_mutex_lock(&b->mu);
    if (!b->ready) {
        b->ready = false;
        b->stop = true;
    }
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* --- set-up and /metrics ---------------------------------------------------- */

static int setup(struct conn *c, int cohorts)
{
    int st = call(c, "POST", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
                  "application/yaml",
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                  "metadata: {name: default}\n");
    if (st != 201) {
        fprintf(stderr, "baseline: ResourceFlavor: HTTP %d\n", st);
        return -1;
    }
    for (int q = 0; q < cohorts * CQS_PER_COHORT; q++) {
        char *cq = fq_xasprintf(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
            "metadata: {name: cq-%d}\nspec:\n  cohort: cohort-%d\n"
            "  namespaceSelector: {}\n"
            "  preemption: {reclaimWithinCohort: Any, withinClusterQueue: "
            "LowerPriority}\n"
            "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
            "    - name: default\n      resources:\n"
            "      - {name: cpu, nominalQuota: %d, borrowingLimit: 100}\n",
            q, q / CQS_PER_COHORT, NOMINAL);
        char *lq = fq_xasprintf(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
            "metadata: {name: lq-%d, namespace: default}\n"
            "spec: {clusterQueue: cq-%d}\n",
            q, q);
        int a = call(c, "POST", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
                     "application/yaml", cq);
        int l = call(c, "POST",
                     "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/"
                     "localqueues",
                     "application/yaml", lq);
        free(cq);
        free(lq);
        if (a != 201 || l != 201) {
            fprintf(stderr, "baseline: cq-%d: HTTP %d / %d\n", q, a, l);
            return -1;
        }
    }
    return 0;
}

/*
 * The lower bound of the top comment, in baseline seconds, for the
 * arrivals this run had (each workload's create sent): the integral over
 * the run of max(0, work arrived - quota x (t + longest runtime)) over
 * the total work, stepped by 1 ms. The quota is pooled over the
 * cohorts, which can only lower the bound.
 */
static double wait_lower_bound(const struct bench *b, int ncq)
{
    double total = 0, longest = 0, last = 0, integral = 0;
    for (int k = 0; k < 3; k++)
        if (CLASSES[k].runtime_ms / 1000.0 > longest)
            longest = CLASSES[k].runtime_ms / 1000.0;
    for (int i = 0; i < b->n; i++)
        if (b->w[i].created - b->t0 > last)
            last = b->w[i].created - b->t0;
    size_t nms = (size_t)(last * b->scale * 1000.0) + 2;
    double *at = fq_xcalloc(nms, sizeof(*at));
    for (int i = 0; i < b->n; i++) {
        const struct cls *c = &CLASSES[b->w[i].cls];
        double t = (b->w[i].created - b->t0) * b->scale;
        size_t ms = t > 0 ? (size_t)(t * 1000.0) : 0;
        if (!b->w[i].created || ms >= nms)
            continue; /* never sent */
        at[ms] += c->cpu * c->runtime_ms / 1000.0;
        total += c->cpu * c->runtime_ms / 1000.0;
    }
    double arrived = 0, quota = (double)ncq * NOMINAL;
    for (size_t ms = 0;; ms++) {
        if (ms < nms)
            arrived += at[ms];
        double pending = arrived - quota * ((double)ms / 1000.0 + longest);
        if (pending > 0)
            integral += pending / 1000.0;
        else if (ms >= nms)
            break;
    }
    free(at);
    return total > 0 ? integral / total : 0;
}

/* Sum over all label sets of metric `name` (exact name, then '{' or ' '). */
static double metric_sum(const char *text, const char *name)
{
    double sum = 0;
    size_t nl = strlen(name);
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        if (!strncmp(p, name, nl) && (p[nl] == '{' || p[nl] == ' ')) {
            const char *sp = eol ? eol : p + strlen(p);
            while (sp > p && sp[-1] != ' ')
                sp--;
            sum += strtod(sp, NULL);
        }
        p = eol ? eol + 1 : NULL;
    }
    return sum;
}

int main(int argc, char **argv)
{
    int cohorts = 5, senders = 64, cycle_ms = 0;
    double grace = 1.0;
    bool fixed = true;
    double scale = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--cohorts") && v) {
            cohorts = atoi(v);
            i++;
        } else if (!strcmp(a, "--senders") && v) {
            senders = atoi(v);
            i++;
        } else if (!strcmp(a, "--kueue-pacing")) {
            fixed = false;
        } else if (!strcmp(a, "--cycle-ms") && v) {
            cycle_ms = atoi(v);
            i++;
        } else if (!strcmp(a, "--time-scale") && v) {
            scale = strtod(v, NULL);
            i++;
        } else if (!strcmp(a, "--preemption-grace") && v) {
            grace = strtod(v, NULL);
            i++;
        } else {
            fprintf(stderr, "usage: baseline [--cohorts N (1-50)] "
                            "[--time-scale S (1-100)] [--senders K "
                            "(1-256)] [--cycle-ms MS] [--kueue-pacing] "
                            "[--preemption-grace S (0: Kueue's)]\n");
            return 2;
        }
    }
    if (cohorts < 1 || cohorts > 50 || senders < 1 || cycle_ms < 0 ||
        cycle_ms > 10000 || senders > MAX_SENDERS ||
        !(scale >= 1 && scale <= 100) || !(grace >= 0 && grace <= 3600)) {
        fprintf(stderr, "baseline: --cohorts 1-50, --senders 1-256, "
                        "--time-scale 1-100, --preemption-grace 0-3600\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    char *bin = bin_path(argv[0], "FLEXQD", "flexqd");
    char dir[] = "/tmp/flexq-bench-baseline-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char ts[32];
    snprintf(ts, sizeof(ts), "%g", scale);
    /* --cycle-ms: flexqd's policy.cycleMilliseconds (0 by default: a
     * scheduling cycle whenever something changed; see the top
     * comment) */
    char cfg[96];
    snprintf(cfg, sizeof(cfg), "%s/config.yaml", dir);
    FILE *cf = fopen(cfg, "we");
    if (!cf) {
        perror(cfg);
        return 1;
    }
    fprintf(cf,
            "apiVersion: flexq.dev/v1alpha1\nkind: FlexqdConfig\nspec:\n"
            "  policy: {cycleMilliseconds: %d, preemptionGraceSeconds: %g}\n",
            cycle_ms, grace / scale);
    fclose(cf);
    const char *const args[] = {
        "--provider",   "sim", "--sync",   "full", "--seed", "42",
        "--time-scale", ts,    "--config", cfg,    NULL};
    struct daemon d;
    if (daemon_start(&d, bin, dir, args) < 0)
        return 1;
    struct conn *c = fq_xcalloc(1, sizeof(*c));
    c->fd = connect_to(d.port);
    if (c->fd < 0 || setup(c, cohorts) < 0) {
        daemon_stop(&d);
        return 1;
    }
    int ncq = cohorts * CQS_PER_COHORT;
    struct bench b;
    memset(&b, 0, sizeof(b));
    b.fixed = fixed;
    b.port = d.port;
    b.scale = scale;
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    for (int k = 0; k < 3; k++)
        b.n += CLASSES[k].count * ncq;
    b.w = fq_xcalloc((size_t)b.n, sizeof(*b.w));
    /* the watch first, so that no admission is missed */
    b.wfd = connect_to(d.port);
    const char wreq[] =
        "GET /apis/kueue.x-k8s.io/v1beta1/namespaces/default/"
        "workloads?watch=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    pthread_t wth;
    if (b.wfd < 0 || write_all(b.wfd, wreq, sizeof(wreq) - 1) < 0) {
        fprintf(stderr, "baseline: watch failed\n");
        return 1;
    }
    pthread_create(&wth, NULL, watcher, &b);
    pthread_mutex_lock(&b.mu);
    while (!b.ready && !b.stop)
        pthread_cond_wait(&b.cv, &b.mu);
    pthread_mutex_unlock(&b.mu);
    if (!b.ready) {
        fprintf(stderr, "baseline: watch refused\n");
        return 1;
    }
    double t0 = wall() + 0.5;
    b.t0 = t0;
    int i = 0;
    for (int q = 0; q < ncq; q++)
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < CLASSES[k].count; j++, i++) {
                b.w[i].cls = k;
                b.w[i].cq = q;
                b.w[i].j = j;
                /* fixed: j intervals from the start; else (Kueue's
                 * generator) the first after one interval, each next
                 * one interval after the last create was answered */
                double iv = CLASSES[k].interval_ms / 1000.0 / scale;
                b.w[i].due = fixed ? t0 + j * iv : t0 + iv;
                if (fixed || j == 0)
                    heap_push(&b, (struct task){b.w[i].due, i, -1});
            }
    b.creates_left = b.n;
    printf("Kueue scheduler baseline through flexqd (--provider sim, --sync "
           "full, --time-scale %g): %d cohorts x %d ClusterQueues, %d "
           "workloads, %d senders, preemption grace %g s%s\n",
           scale, cohorts, CQS_PER_COHORT, b.n, senders, grace,
           grace > 0 ? "" : " (Kueue's preemption)");
    fflush(stdout);
    double cpu0 = proc_cpu_s(d.pid), host0 = busy_cpu_s(), self0 = self_cpu_s();
    pthread_t th[MAX_SENDERS];
    for (int s = 0; s < senders; s++)
        pthread_create(&th[s], NULL, sender, &b);
    /* wait for every workload to finish (or 10 x the ideal) */
    double limit = t0 + 660.0 / scale;
    pthread_mutex_lock(&b.mu);
    double next_progress = wall() + 5, last_change = wall();
    int last_finished = 0;
    while (b.finished < b.n && wall() < limit) {
        if (b.finished != last_finished) {
            last_finished = b.finished;
            last_change = wall();
        } else if (!b.creates_left && wall() - last_change > 20.0 / scale) {
            fprintf(stderr,
                    "baseline: nothing finished for %.0f s: %d "
                    "workloads left unfinished\n",
                    20.0 / scale, b.n - b.finished);
            break;
        }
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 1;
        pthread_cond_timedwait(&b.cv, &b.mu, &dl);
        double now = wall();
        if (now >= next_progress) {
            /* progress on stderr: created, admitted now, finished, and
             * how late the senders run */
            int adm = 0;
            for (int k = 0; k < b.n; k++)
                adm += b.w[k].state == ST_ADMITTED;
            fprintf(stderr,
                    "baseline: %.0f s: %d created, %d admitted, %d "
                    "finished, %zu tasks queued, next %.2f s late\n",
                    now - t0, b.n - b.creates_left, adm, b.finished, b.nheap,
                    b.nheap ? now - b.heap[0].at : 0.0);
            next_progress = now + 5;
        }
    }
    b.stop = true;
    pthread_cond_broadcast(&b.cv);
    pthread_mutex_unlock(&b.mu);
    for (int s = 0; s < senders; s++)
        pthread_join(th[s], NULL);
    /* the set-up connection sat idle through the run, past flexqd's idle
     * timeout (60 s): a fresh one for the questions below (/metrics read
     * nothing before) */
    close(c->fd);
    c->fd = connect_to(d.port);
    c->len = 0;
    /* name the unfinished (at most 10) with their conditions, so that a
     * workload left out of its queue can be looked into */
    for (int k = 0, shown = 0; k < b.n && shown < 10; k++) {
        if (b.w[k].state == ST_DONE)
            continue;
        char name[32], path[160];
        wl_name(k, name, sizeof(name));
        snprintf(path, sizeof(path),
                 "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/"
                 "workloads/%s",
                 name);
        struct fq_buf wb = FQ_BUF_INIT;
        call_body(c, "GET", path, "application/json", NULL, &wb);
        struct fq_value *v = NULL;
        struct fq_limits lim = fq_limits_default();
        fq_json_parse(fq_buf_str(&wb), wb.len, "workload", &lim, &v, NULL);
        fprintf(stderr, "baseline: unfinished %s (state %d):", name,
                b.w[k].state);
        const struct fq_value *cs = fq_value_path(v, "status.conditions");
        for (size_t j = 0; j < fq_value_len(cs); j++) {
            const struct fq_value *cd = fq_seq_at(cs, j);
            fprintf(stderr, " %s=%s/%s", fq_value_path_str(cd, "type", "?"),
                    fq_value_path_str(cd, "status", "?"),
                    fq_value_path_str(cd, "reason", "?"));
        }
        fprintf(stderr, "\n");
        fq_value_free(v);
        fq_buf_release(&wb);
        shown++;
    }
    double cpu = proc_cpu_s(d.pid) - cpu0, host = busy_cpu_s() - host0;
    double self = self_cpu_s() - self0;
    long hwm = proc_hwm_kb(d.pid);
    struct fq_buf met = FQ_BUF_INIT;
    int mst = call_body(c, "GET", "/metrics", "text/plain", NULL, &met);
    double m_adm = 0, m_evi = 0, m_wsum = 0, m_wcnt = 0;
    if (mst == 200) {
        m_adm = metric_sum(fq_buf_str(&met), "kueue_admitted_workloads_total");
        m_evi = metric_sum(fq_buf_str(&met), "kueue_evicted_workloads_total");
        m_wsum = metric_sum(fq_buf_str(&met),
                            "kueue_admission_wait_time_seconds_sum");
        m_wcnt = metric_sum(fq_buf_str(&met),
                            "kueue_admission_wait_time_seconds_count");
    }
    fq_buf_release(&met);
    shutdown(b.wfd, SHUT_RDWR);
    pthread_join(wth, NULL);
    close(b.wfd);
    close(c->fd);
    free(c);
    daemon_stop(&d);

    /* figures, in baseline time */
    double sum[3] = {0}, hold[3] = {0}, used = 0, lost = 0, last = t0;
    double last_create = t0;
    int cnt[3] = {0}, done = 0, evictions = 0;
    for (int k = 0; k < b.n; k++) {
        struct wl *w = &b.w[k];
        used += w->used_cpu_s;
        lost += w->lost_cpu_s;
        if (w->created > last_create)
            last_create = w->created;
        evictions += w->evictions;
        if (w->state != ST_DONE || !w->finished)
            continue;
        done++;
        sum[w->cls] += w->admitted - w->created;
        /* the last run's quota held past its runtime: the finish's
         * lateness and round trip */
        hold[w->cls] += w->finished - w->admitted -
                        CLASSES[w->cls].runtime_ms / 1000.0 / scale;
        cnt[w->cls]++;
        if (w->finished > last)
            last = w->finished;
        free(w->status);
    }
    double wall_s = (last - t0) * scale;
    double usage = wall_s > 0 ?
                       100.0 * used * scale / ((double)ncq * NOMINAL * wall_s) :
                       0;
    double mean[3], over[3];
    for (int k = 0; k < 3; k++) {
        mean[k] = cnt[k] ? sum[k] / cnt[k] * scale : 0;
        over[k] = cnt[k] ? hold[k] / cnt[k] * scale : 0;
    }
    double ideal = 0;
    for (int k = 0; k < 3; k++)
        ideal += (double)CLASSES[k].count * CLASSES[k].cpu *
                 CLASSES[k].runtime_ms / 1000.0;
    ideal /= NOMINAL; /* per CQ; the same for any number of CQs */
    double bound = wait_lower_bound(&b, ncq);
    /* the work done, evicted runs included, over the capacity: the wall
     * a perfectly packed run of the same evictions would take */
    double packed = used * scale / ((double)ncq * NOMINAL);
    printf("  workloads finished   %d of %d (%d errors), %d evictions seen "
           "(/metrics: %.0f admitted, %.0f evicted)\n",
           done, b.n, b.errors, evictions, m_adm, m_evi);
    printf("  wall                 %.1f s (ideal %.0f s, %.1f%% over)\n",
           wall_s, ideal, 100.0 * (wall_s - ideal) / ideal);
    printf("  usage                %.1f %% of %d cpu; %.0f cpu-s of %.0f in "
           "runs cut short by evictions (packed, they take %.1f s)\n",
           usage, ncq * NOMINAL, lost * scale, used * scale, packed);
    printf("  finishes             %d answered 409 Conflict and were sent "
           "again\n",
           b.conflicts);
    printf("  creates              sent up to %.2f s after their due time; the "
           "last at %.1f s\n",
           b.late_max * scale, (last_create - t0) * scale);
    printf("  quota held past its  large %.3f s, medium %.3f s, small %.3f s "
           "(mean over the\n  runtime             last runs: the finish's "
           "lateness and round trip)\n",
           over[2], over[1], over[0]);
    printf("  time to admission    large %.2f s, medium %.2f s, small %.2f s "
           "(mean; /metrics, all classes: %.2f s)\n",
           mean[2], mean[1], mean[0], m_wcnt ? m_wsum / m_wcnt * scale : 0);
    double wmean = 0, work = 0;
    for (int k = 0; k < 3; k++) {
        double wk = (double)CLASSES[k].count * CLASSES[k].cpu *
                    CLASSES[k].runtime_ms / 1000.0;
        wmean += wk * mean[k];
        work += wk;
    }
    wmean /= work;
    printf("  work-weighted mean   %.2f s; no scheduler can go below %.2f s "
           "with these arrivals\n",
           wmean, bound);
    printf("  Kueue's published    wall 351 s, usage 55.9 %%, large 16.5 s, "
           "medium 76.8 s, small 215.5 s\n");
    printf(
        "  flexqd               %.1f cpu s, peak RSS %ld kB; this bench %.1f "
        "cpu s; machine busy %.1f cpu s\n",
        cpu, hwm, self, host);
    printf(
        "{\"bench\":\"baseline\",\"cohorts\":%d,\"cluster_queues\":%d,"
        "\"workloads\":%d,\"finished\":%d,\"errors\":%d,\"time_scale\":%g,"
        "\"usage_pct\":%.1f,\"large_s\":%.2f,\"medium_s\":%.2f,"
        "\"small_s\":%.2f,\"wall_s\":%.1f,\"ideal_wall_s\":%.0f,"
        "\"evictions\":%d,\"evicted_cpu_s\":%.0f,\"packed_wall_s\":%.1f,"
        "\"finish_conflicts\":%d,\"create_late_max_s\":%.2f,\"last_create_s\":%.1f,\"held_past_runtime_s\":{\"large\":%.3f,"
        "\"medium\":%.3f,\"small\":%.3f},\"weighted_wait_s\":%.2f,"
        "\"weighted_wait_bound_s\":%.2f,\"cycle_ms\":%d,"
        "\"preemption_grace_s\":%g,\"kueue_pacing\":%s,\"metrics\":{\"admitted\":%.0f,\"evicted\":%.0f,"
        "\"mean_admission_wait_s\":%.3f},\"flexqd_cpu_s\":%.1f,"
        "\"flexqd_peak_rss_kb\":%ld,\"bench_cpu_s\":%.1f,\"host_busy_cpu_s\":%.1f,"
        "\"kueue_published\":{\"usage_pct\":55.9,\"large_s\":16.5,"
        "\"medium_s\":76.8,\"small_s\":215.5,\"wall_s\":351}}\n",
        cohorts, ncq, b.n, done, b.errors, scale, usage, mean[2], mean[1],
        mean[0], wall_s, ideal, evictions, lost * scale, packed, b.conflicts,
        b.late_max * scale, (last_create - t0) * scale, over[2], over[1],
        over[0], wmean, bound, cycle_ms, grace, fixed ? "false" : "true", m_adm,
        m_evi, m_wcnt ? m_wsum / m_wcnt * scale : 0, cpu, hwm, self, host);
    free(b.w);
    free(b.heap);
    free(bin);
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "baseline: could not remove %s\n", dir);
    return done == b.n && !b.errors ? 0 : 1;
}
