/*
 * api_estimate.c - POST .../namespaces/NS/estimates: when would this job
 * start? (api_estimate.h has the contract.)
 *
 * How it works: the handler gathers the state the forecast copies, from
 * the live store, and hands it to the core (src/core/views/estimate.c), which
 * runs copies of the cluster forward in virtual time:
 *
 *   objects   every NodePool, CapacityModel, ResourceFlavor, Cohort,
 *             ClusterQueue, LocalQueue, WorkloadPriorityClass,
 *             AdmissionCheck, ProvisioningRequestConfig, Namespace, Node
 *   jobs      every active, unfinished Workload with a queue: running
 *             (Admitted and PodsReady) or pending, ordered by creation
 *
 * A workload's run time is the one flexq sim's forecasts measure
 * (runguess.h): stated by its flexq.dev/expected-runtime annotation (or
 * its owner job's), else guessed from the runs of the workloads that
 * finished in this store (the namespace's last runs, the job's limit
 * scaled by how much of their limits past jobs used, its queue's runs of
 * its size, its queue's, all), else one hour; never over the job's own
 * limit. The answer counts each source and each confidence under
 * "runtimes". A running workload runs for what is left of that
 * (fq_runguess_left: at least a minute; one past its guess about as long
 * again as it has run, within its limit).
 *
 * Invariants: nothing is written to the store; the forecast runs on a
 * thread, on clones of what it reads, never on the loop (see "off the
 * loop" below), so /healthz and the API keep answering during it.
 *
 * It does not: stream, cache forecasts, or forecast a job that is not in
 * a queue (FQ_EINVAL from the core).
 */
#include "api/api_estimate.h"
#include "api/status.h"

#include <event2/event.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/conditions.h"
#include "flexq/engine.h"
#include "flexq/estimate.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/runguess.h"
#include "flexq/timefmt.h"

#define MAX_SEEDS 20
/* An estimate answers within DEADLINE_MS or gets 504; MAX_RUNNING run at
 * once. */
#define DEADLINE_MS 20000
#define MAX_RUNNING 2

static int64_t cond_time(const struct fq_value *obj, const char *type)
{
    int64_t t = 0;
    const char *s =
        fq_value_path_str(fq_cond_find(obj, type), "lastTransitionTime", NULL);
    return s && fq_time_parse(s, &t) == 0 ? t : -1;
}

static int64_t created(const struct fq_value *obj)
{
    int64_t t = 0;
    const char *s = fq_value_path_str(obj, FQ_META_CREATED, NULL);
    return s && fq_time_parse(s, &t) == 0 ? t : 0;
}

static const char *queue_of(const struct fq_value *wl)
{
    return fq_value_path_str(wl, FQ_WL_QUEUE_NAME, "");
}

/* Is this workload the target itself (or the target's workload)? */
static bool is_target(const struct fq_value *wl, const struct fq_value *t,
                      const char *ns)
{
    const char *tk = fq_value_path_str(t, "kind", "");
    const char *tn = fq_meta_name(t);
    if (strcmp(fq_meta_namespace(wl), ns))
        return false;
    if (!strcmp(tk, "Workload"))
        return !strcmp(fq_meta_name(wl), tn);
    const struct fq_value *ref = fq_seq_at(fq_meta_owners(wl), 0);
    return ref && !strcmp(fq_value_path_str(ref, "kind", ""), tk) &&
           !strcmp(fq_value_path_str(ref, "name", ""), tn);
}

static int cmp_job(const void *a, const void *b)
{
    const struct fq_estimate_job *x = a, *y = b;
    return x->submit_ms < y->submit_ms ? -1 : x->submit_ms > y->submit_ms;
}

/* --- off the loop ---------------------------------------------------------
 *
 * A forecast replays the cluster many times and can take seconds with
 * thousands of pending workloads, so it never runs on the loop: the
 * handler copies what it needs (clones of the objects and workloads) into
 * a struct est and starts a thread on it. The thread computes, then
 * reports through a pipe the loop watches; the loop answers. A deadline
 * timer answers 504 if the thread is late; the thread, finding itself
 * abandoned, frees its copy when done. At most MAX_RUNNING run at once;
 * more get 503 with Retry-After.
 *
 *   handler --copy--> RUNNING --thread done--> DONE --pipe--> loop answers,
 *                        |                                    joins, frees
 *                        +--deadline (loop)--> ABANDONED: 504 now; the
 *                                              thread frees it when done
 */
enum {
    EST_RUNNING,
    EST_DONE,
    EST_ABANDONED
};

struct est {
    struct fq_daemon *d;
    struct fq_http_req *r;
    pthread_t th;
    pthread_mutex_t mu;
    int state;   /* EST_*, under mu */
    int pipe[2]; /* the thread writes one byte when done */
    struct event *ready, *deadline;
    /* the copy: owned */
    struct fq_value **objects;
    struct fq_estimate_job *jobs;
    struct fq_value *target;
    struct fq_estimate_world world;
    struct fq_estimate_options opts;
    int counts[FQ_RUNGUESS_NSOURCES];
    int conf[FQ_RUNHIST_HIGH + 1];
    uint64_t history_runs;
    enum fq_runhist_confidence forecast_conf;
    size_t nrun;
    /* the answer */
    int rc;
    struct fq_err err;
    struct fq_estimate_result res;
};

/* Estimates in flight. File-level because the route has no context of its
 * own to free at exit; only the loop thread touches it. */
static int running_now;

static void est_free(struct est *e)
{
    for (size_t i = 0; i < e->world.nobjects; i++)
        fq_value_free(e->objects[i]);
    free(e->objects);
    for (size_t i = 0; i < e->world.njobs; i++)
        fq_value_free((struct fq_value *)e->jobs[i].obj);
    free(e->jobs);
    fq_value_free(e->target);
    if (e->rc == 0)
        fq_estimate_result_release(&e->res);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

static void *est_thread(void *arg)
{
    struct est *e = arg;
    e->rc = fq_estimate_run(&e->world, e->target, &e->opts, &e->res, &e->err);
    pthread_mutex_lock(&e->mu);
    bool abandoned = e->state == EST_ABANDONED;
    e->state = EST_DONE;
    if (!abandoned) {
        char c = 1;
        ssize_t w = write(e->pipe[1], &c, 1);
        (void)w;
    }
    pthread_mutex_unlock(&e->mu);
    if (abandoned) { /* detached: nobody else holds it */
        close(e->pipe[1]);
        est_free(e);
    }
    return NULL;
}

/* Loop side: events off, read end closed; the thread's end stays. */
static void est_unhook(struct est *e)
{
    event_free(e->ready);
    event_free(e->deadline);
    close(e->pipe[0]);
    running_now--;
}

static void est_answer(struct est *e)
{
    struct fq_daemon *d = e->d;
    if (e->rc) {
        fq_api_error(d, e->r, e->rc, &e->err, "estimates", NULL);
        return;
    }
    struct fq_value *v = fq_estimate_to_value(&e->res);
    struct fq_value *rt = fq_value_map();
    for (int k = 0; k < FQ_RUNGUESS_NSOURCES; k++)
        fq_map_set(rt, fq_runguess_source_key((enum fq_runguess_source)k),
                   fq_value_int(e->counts[k]));
    struct fq_value *conf = fq_value_map();
    fq_map_set(conf, "high", fq_value_int(e->conf[FQ_RUNHIST_HIGH]));
    fq_map_set(conf, "medium", fq_value_int(e->conf[FQ_RUNHIST_MEDIUM]));
    fq_map_set(conf, "low", fq_value_int(e->conf[FQ_RUNHIST_LOW]));
    fq_map_set(rt, "confidence", conf);
    fq_map_set(rt, "historyRuns", fq_value_int((int64_t)e->history_runs));
    static const char *const level[] = {"low", "medium", "high"};
    fq_map_set(rt, "forecastConfidence", fq_value_str(level[e->forecast_conf]));
    fq_map_set(v, "runtimes", rt);
    fq_map_set(v, "running", fq_value_int((int64_t)e->nrun));
    fq_map_set(v, "pending", fq_value_int((int64_t)(e->world.njobs - e->nrun)));
    struct fq_buf out;
    fq_buf_init(&out);
    fq_json_encode(v, FQ_JSON_PRETTY, &out);
    fq_buf_putc(&out, '\n');
    fq_value_free(v);
    fq_daemon_defer_reply(d, e->r, 200, "application/json", &out);
    fq_buf_release(&out);
    fq_daemon_wake(d);
}

static void on_ready(evutil_socket_t fd, short what, void *arg)
{
    struct est *e = arg;
    (void)fd;
    (void)what;
    est_unhook(e);
    pthread_join(e->th, NULL);
    close(e->pipe[1]);
    est_answer(e);
    est_free(e);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct est *e = arg;
    (void)fd;
    (void)what;
    pthread_mutex_lock(&e->mu);
    bool done = e->state == EST_DONE;
    if (!done)
        e->state = EST_ABANDONED;
    pthread_mutex_unlock(&e->mu);
    if (done) { /* finished just now: its byte is in the pipe */
        on_ready(-1, 0, e);
        return;
    }
    pthread_detach(e->th);
    est_unhook(e);
    struct fq_err err = {0};
    fq_err_set(&err, FQ_ETIMEOUT,
               "the estimate took longer than %d s (%zu workloads ahead); "
               "try fewer ?seeds",
               DEADLINE_MS / 1000, e->world.njobs);
    fq_api_error(e->d, e->r, FQ_ETIMEOUT, &err, "estimates", NULL);
    fq_daemon_wake(e->d);
    /* the thread frees e */
}

static void start(struct est *e)
{
    struct fq_err err = {0};
    if (running_now >= MAX_RUNNING || pipe(e->pipe) != 0) {
        fq_err_set(&err, FQ_EBUSY,
                   "%d estimates are running; try again in a moment",
                   running_now);
        fq_http_add_header(e->r, "Retry-After", "1");
        fq_api_error(e->d, e->r, FQ_EBUSY, &err, "estimates", NULL);
        e->rc = -1;
        pthread_mutex_init(&e->mu, NULL);
        est_free(e);
        return;
    }
    fcntl(e->pipe[0], F_SETFD, FD_CLOEXEC);
    fcntl(e->pipe[1], F_SETFD, FD_CLOEXEC);
    pthread_mutex_init(&e->mu, NULL);
    e->state = EST_RUNNING;
    struct event_base *base = fq_daemon_event_base(e->d);
    e->ready = event_new(base, e->pipe[0], EV_READ, on_ready, e);
    e->deadline = evtimer_new(base, on_deadline, e);
    event_add(e->ready, NULL);
    struct timeval tv = {DEADLINE_MS / 1000, DEADLINE_MS % 1000 * 1000};
    event_add(e->deadline, &tv);
    running_now++;
    if (pthread_create(&e->th, NULL, est_thread, e) != 0) {
        est_unhook(e);
        close(e->pipe[1]);
        fq_err_set(&err, FQ_EBUSY, "cannot start an estimate thread");
        fq_api_error(e->d, e->r, FQ_EBUSY, &err, "estimates", NULL);
        e->rc = -1;
        est_free(e);
    }
}

static void handle(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    struct fq_err err = {0};
    const char *path = fq_http_path(r) + strlen(FQ_API_ESTIMATE_PREFIX);
    char ns[254] = "";
    int used = 0;
    if (sscanf(path, "v1alpha1/namespaces/%253[^/]/estimates%n", ns, &used) !=
            1 ||
        path[used] != '\0') {
        fq_err_set(&err, FQ_ENOTFOUND,
                   "no such path (POST " FQ_API_ESTIMATE_PREFIX
                   "v1alpha1/namespaces/NS/estimates)");
        fq_api_error(d, r, FQ_ENOTFOUND, &err, NULL, NULL);
        return;
    }
    if (strcmp(fq_http_method(r), "POST")) {
        fq_err_set(&err, FQ_EUNSUPPORTED, "estimates are POSTed");
        fq_api_error(d, r, FQ_EUNSUPPORTED, &err, NULL, NULL);
        return;
    }
    int arc = fq_api_allow(d, r, "create", FQ_KIND_WORKLOAD, ns, NULL, &err);
    if (arc < 0) {
        fq_api_error(d, r, arc, &err, "estimates", NULL);
        return;
    }
    size_t len = 0;
    const char *body = fq_http_body(r, &len);
    struct fq_limits lim = fq_limits_default();
    struct fq_docs docs = {0};
    int rc = fq_yaml_parse(body ? body : "", body ? len : 0, "body", &lim,
                           &docs, &err);
    if (!rc && docs.n != 1)
        rc = fq_err_set(&err, FQ_EINVAL, "the body must hold one job, not %zu",
                        docs.n);
    if (!rc)
        rc = fq_value_refuse_nonfinite(docs.items[0], "body", &err);
    if (rc) {
        fq_docs_release(&docs);
        fq_api_error(d, r, rc, &err, NULL, NULL);
        return;
    }
    struct fq_value *target = docs.items[0];
    fq_map_set(fq_map_ensure_map(target, "metadata"), "namespace",
               fq_value_str(ns));

    struct fq_objstore *s = fq_engine_store(d->engine);
    int64_t now = fq_daemon_now(d);

    static const enum fq_kind kinds[] = {
        FQ_KIND_NAMESPACE,      FQ_KIND_NODEPOOL,
        FQ_KIND_CAPACITYMODEL,  FQ_KIND_RESOURCEFLAVOR,
        FQ_KIND_COHORT,         FQ_KIND_CLUSTERQUEUE,
        FQ_KIND_LOCALQUEUE,     FQ_KIND_WORKLOADPRIORITYCLASS,
        FQ_KIND_ADMISSIONCHECK, FQ_KIND_PROVISIONINGREQUESTCONFIG,
        FQ_KIND_NODE,
    };
    const struct fq_value **objs = NULL;
    size_t nobjs = 0, capobjs = 0;
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        const struct fq_object **list = NULL;
        size_t n = fq_objstore_list(s, kinds[k], NULL, &list);
        FQ_GROW(objs, capobjs, nobjs + n + 1);
        for (size_t i = 0; i < n; i++)
            objs[nobjs++] = list[i]->obj;
        free(list);
    }

    /* Workloads: the history of the finished ones first, then the jobs. */
    const struct fq_object **wls = NULL;
    size_t nw = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &wls);
    struct fq_runguess *hist = fq_runguess_new(s);
    struct fq_estimate_job *jobs = fq_xcalloc(nw ? nw : 1, sizeof(*jobs));
    size_t nj = 0;
    int counts[FQ_RUNGUESS_NSOURCES] = {0};
    int confs[FQ_RUNHIST_HIGH + 1] = {0};
    struct fq_runguess_tally tally = {0};
    for (size_t i = 0; i < nw; i++) {
        const struct fq_value *w = wls[i]->obj;
        if (fq_cond_true(w, "Finished") ||
            !fq_value_path_bool(w, FQ_WL_ACTIVE, true) || !*queue_of(w) ||
            is_target(w, target, ns))
            continue;
        struct fq_runguess_answer a;
        fq_runguess_of(hist, s, w, &a);
        counts[a.src]++;
        confs[a.conf]++;
        int64_t run = a.run_ms;
        bool running = fq_cond_true(w, "Admitted") &&
                       fq_cond_true(w, "PodsReady") &&
                       !fq_cond_true(w, "Evicted");
        if (running) {
            int64_t since = cond_time(w, "PodsReady");
            run = fq_runguess_left(&a,
                                   since > 0 && since < now ? now - since : 0);
        }
        fq_runguess_tally_add(&tally, a.conf, a.chips, run);
        jobs[nj++] = (struct fq_estimate_job){w, created(w), run, running};
    }
    qsort(jobs, nj, sizeof(*jobs), cmp_job);

    const struct fq_engine_config *cfg = fq_engine_config(d->engine);
    struct fq_estimate_world world = {
        .objects = objs,
        .nobjects = nobjs,
        .jobs = jobs,
        .njobs = nj,
        .now_ms = now,
        .policy = cfg->policy,
        .time_scale = cfg->time_scale,
    };
    struct fq_estimate_options o;
    fq_estimate_options_init(&o);
    const char *seeds = fq_http_query(r, "seeds");
    if (seeds) {
        int v = atoi(seeds);
        o.nseeds = v < 1 ? 1 : v > MAX_SEEDS ? MAX_SEEDS : v;
    }
    o.seed = (uint64_t)now;
    size_t nrun = 0;
    for (size_t i = 0; i < nj; i++)
        nrun += jobs[i].running;
    /* The forecast runs on a copy, off the loop (see the top comment). */
    struct est *e = fq_xcalloc(1, sizeof(*e));
    e->d = d;
    e->r = r;
    e->opts = o;
    e->world = world;
    e->nrun = nrun;
    memcpy(e->counts, counts, sizeof(counts));
    memcpy(e->conf, confs, sizeof(confs));
    e->history_runs = fq_runguess_runs(hist);
    e->forecast_conf = fq_runguess_tally_result(&tally);
    e->target = target;
    docs.items[0] = NULL;
    e->objects = fq_xcalloc(nobjs ? nobjs : 1, sizeof(*e->objects));
    for (size_t i = 0; i < nobjs; i++)
        e->objects[i] = fq_value_clone(objs[i]);
    e->jobs = fq_xcalloc(nj ? nj : 1, sizeof(*e->jobs));
    for (size_t i = 0; i < nj; i++) {
        e->jobs[i] = jobs[i];
        e->jobs[i].obj = fq_value_clone(jobs[i].obj);
    }
    e->world.objects = (const struct fq_value *const *)e->objects;
    e->world.jobs = e->jobs;
    start(e);
    free(jobs);
    fq_runguess_free(hist);
    free(wls);
    free(objs);
    fq_docs_release(&docs);
}

void fq_api_estimate_attach(struct fq_daemon *d)
{
    /* An estimate is a dry-run create of a job in NS: who may create
     * workloads there may ask. */
    static const struct fq_route_def def = {
        .prefix = FQ_API_ESTIMATE_PREFIX,
        .access = FQ_ROUTE_NAMESPACED,
        .methods = "POST",
        .kind = FQ_KIND_WORKLOAD,
        .write_verb = "create",
        .example = FQ_API_ESTIMATE_PREFIX "v1alpha1/namespaces/{ns}/estimates",
    };
    fq_api_add_route_def(d->api, &def, handle, NULL);
}
