/*
 * estimate.c - wait-time forecasts by simulating forward from now.
 *
 * What it is for. `flexq estimate -f job.yaml` and `flexq describe` answer
 * "when would this job start, on each flavor of its queue?" with a range,
 * using the same engine that runs the cluster: no separate queueing model
 * to drift from the real admission, checks, autoscaler and cloud.
 *
 * How it works. One forecast run (forward()):
 *
 *   1. A fresh engine in simulator mode (no_pods, the sim cloud provider),
 *      seeded with one cloud seed, clock at `now`.
 *   2. The configuration objects are applied as a user would (status and
 *      server fields dropped); Nodes are copied with their status but
 *      without placements, so idle and busy nodes exist from the start.
 *   3. Warm-up: the running workloads are submitted first (as est-N, in
 *      submit order) and the engine runs until each is running again (at
 *      most 6 h of virtual time). They find their quota free and mostly
 *      their nodes up; Plan B ones go through a new ProvisioningRequest.
 *      The end of the warm-up, t0, stands for "now" from here on, and each
 *      running workload runs for what it had left (run_ms).
 *   4. At t0 the pending workloads are submitted in their order, then the
 *      job (pinned to a flavor by a nodeSelector with the flavor's
 *      nodeLabels in every pod template: kueue's flavor assignment honours
 *      it). A replay (fq_estimate_replay) also has future arrivals.
 *   5. The loop jumps to the earliest of: next arrival, next expected end
 *      of a running workload (marked Finished, then deleted), the engine's
 *      next wakeup. The job's start is the moment its Workload is Admitted
 *      and PodsReady: start - t0 is the forecast.
 *
 * fq_estimate_run does this once unpinned and once per pinnable flavor of
 * the job's ClusterQueue, each for nseeds cloud seeds, and reports the
 * 10th / 50th / 90th percentiles (nearest rank) of the starts; a run that
 * did not start within the horizon counts as "later than the horizon".
 * Example: 2 seeds that start at 600 s and 900 s give p10 = 600 s,
 * p50 = 600 s, p90 = 900 s.
 *
 * Run times: the caller says how long each workload runs (the daemon
 * asks runguess.h: the flexq.dev/expected-runtime annotation, else a
 * guess from the history of finished runs within the job's limit; it
 * reports which).
 *
 * Invariants:
 *   1. Nothing here touches the caller's objects: all are copied.
 *   2. The same world, target and seeds give the same forecast.
 *   3. A forecast never reports a start before t0 (the job arrives there).
 *
 * It does not: know about jobs that will arrive later (a higher-priority
 * arrival can pass the job), carry over the progress of ProvisioningRequests
 * that are in flight (a pending Plan B workload starts its request again),
 * or model pods (no image pulls, no crashes).
 */
#include "flexq/estimate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/drive.h"
#include "flexq/engine.h"
#include "flexq/kinds.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

#define WARMUP_MS       (6 * 3600000LL)
#define DEFAULT_HORIZON (14 * 86400000LL)
/* A forecast gives up after this many steps (a guard: each step is an
 * instant where something was due, so real runs stay far below it). */
#define MAX_STEPS 2000000

enum {
    J_NEW = 0,
    J_WAITING,
    J_RUNNING,
    J_DONE
};

struct fj {
    int64_t arrive;  /* engine time of submission (after the warm-up shift) */
    int64_t left_ms; /* work left */
    int64_t run_start, first_start;
    uint32_t gen;
    uint8_t phase;
    bool marked; /* we set Finished */
    bool dirty;
};

struct fwd {
    const struct fq_estimate_world *w;
    struct fq_engine *e;
    struct fq_objstore *store;
    struct fj *js;
    size_t n;
    struct fq_drive_heap heap;
    uint32_t *dirty;
    size_t nd, dcap;
    uint32_t *dels;
    size_t ndel, delcap;
    char tname[256]; /* the target's Workload, once it exists */
    bool tdirty;
    int64_t t;
};

/* --- small helpers --------------------------------------------------------- */

static bool cond_true(const struct fq_value *obj, const char *type,
                      const char **ltt)
{
    const struct fq_value *cs = fq_value_path(obj, FQ_STATUS_CONDITIONS);
    for (size_t i = 0; i < fq_value_len(cs) && cs->type == FQ_V_SEQ; i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        if (!strcmp(fq_value_path_str(c, "type", ""), type)) {
            if (ltt)
                *ltt = fq_value_path_str(c, "lastTransitionTime", "");
            return !strcmp(fq_value_path_str(c, "status", ""), "True");
        }
    }
    return false;
}

/* Admitted and PodsReady (since the admission), not evicted or finished. */
static bool wl_running(const struct fq_value *wl)
{
    const char *adm = "", *ready = "";
    if (!fq_value_path_bool(wl, FQ_WL_ACTIVE, true) ||
        cond_true(wl, "Finished", NULL) || cond_true(wl, "Evicted", NULL) ||
        !cond_true(wl, "Admitted", &adm) || !cond_true(wl, "PodsReady", &ready))
        return false;
    int64_t a = 0, r = 0;
    fq_time_parse(adm, &a);
    fq_time_parse(ready, &r);
    return r >= a;
}

static void job_name(char *buf, size_t size, size_t i)
{
    snprintf(buf, size, "est-%zu", i);
}

static long est_index(const char *name)
{
    if (strncmp(name, "est-", 4) != 0)
        return -1;
    char *end;
    long v = strtol(name + 4, &end, 10);
    return *end == '\0' && end != name + 4 && v >= 0 ? v : -1;
}

static const char *ns_of(const struct fq_value *o)
{
    return fq_value_path_str(o, FQ_META_NAMESPACE, "default");
}

static enum fq_kind kind_of(const struct fq_value *o)
{
    return fq_kind_from_gvk(fq_value_path_str(o, "apiVersion", ""),
                            fq_value_path_str(o, "kind", ""));
}

/* A copy fit for fq_engine_apply: no status, no server-set metadata. */
static struct fq_value *user_copy(const struct fq_value *o)
{
    struct fq_value *c = fq_value_clone(o);
    fq_map_del(c, "status");
    struct fq_value *md = fq_map_get(c, "metadata");
    if (md && md->type == FQ_V_MAP) {
        static const char *const drop[] = {
            "uid",           "resourceVersion",  "generation",
            "managedFields", "ownerReferences",  "creationTimestamp",
            "finalizers",    "deletionTimestamp"};
        for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
            fq_map_del(md, drop[i]);
    }
    return c;
}

/* Whether a pod spec's containers request or limit one of `covered`. */
static bool asks_for(const struct fq_value *spec,
                     const struct fq_value *covered)
{
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < 2; l++) {
        const struct fq_value *cs = fq_map_get(spec, lists[l]);
        for (size_t i = 0; i < fq_value_len(cs); i++) {
            const struct fq_value *res =
                fq_map_get(fq_seq_at(cs, i), "resources");
            for (size_t r = 0; r < fq_value_len(covered); r++) {
                const char *name = fq_value_as_str(fq_seq_at(covered, r));
                if (name && (fq_map_get(fq_map_get(res, "requests"), name) ||
                             fq_map_get(fq_map_get(res, "limits"), name)))
                    return true;
            }
        }
    }
    return false;
}

/*
 * Pins to a flavor the pod templates under v that it serves: `pin` is
 * {nodeLabels: the flavor's, covered: the resources of the ClusterQueue's
 * groups that list it}; a template that asks for none of them (a RayJob's
 * head on the default flavor) is left alone, as Kueue would assign it
 * another flavor.
 */
void fq_estimate_pin_templates(struct fq_value *v, const struct fq_value *pin)
{
    if (!v)
        return;
    if (v->type == FQ_V_SEQ) {
        for (size_t i = 0; i < fq_value_len(v); i++)
            fq_estimate_pin_templates(fq_seq_at(v, i), pin);
        return;
    }
    if (v->type != FQ_V_MAP)
        return;
    const struct fq_value *labels = fq_map_get(pin, "nodeLabels");
    struct fq_value *spec = fq_value_path(v, FQ_TEMPLATE_SPEC);
    if (spec && spec->type == FQ_V_MAP && fq_map_get(spec, "containers") &&
        asks_for(spec, fq_map_get(pin, "covered"))) {
        struct fq_value *sel = fq_map_ensure_map(spec, "nodeSelector");
        for (size_t i = 0; i < labels->u.map.n; i++)
            fq_map_set(sel, labels->u.map.items[i].key,
                       fq_value_clone(labels->u.map.items[i].val));
    }
    for (size_t i = 0; i < v->u.map.n; i++)
        fq_estimate_pin_templates(v->u.map.items[i].val, pin);
}

/* The flavor a workload got for its accelerator (first resource that is
 * not cpu / memory / pods), else its first flavor; "" if not admitted. */
static void admitted_flavor(const struct fq_value *wl, char *buf, size_t size)
{
    const struct fq_value *psa = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
    const char *first = NULL;
    for (size_t i = 0; i < fq_value_len(psa); i++) {
        const struct fq_value *fl = fq_map_get(fq_seq_at(psa, i), "flavors");
        if (!fl || fl->type != FQ_V_MAP)
            continue;
        for (size_t k = 0; k < fl->u.map.n; k++) {
            const char *r = fl->u.map.items[k].key;
            const char *f = fq_value_as_str(fl->u.map.items[k].val);
            if (!f)
                continue;
            if (!first)
                first = f;
            if (strcmp(r, "cpu") && strcmp(r, "memory") && strcmp(r, "pods")) {
                snprintf(buf, size, "%s", f);
                return;
            }
        }
    }
    snprintf(buf, size, "%s", first ? first : "");
}

/* --- the forward loop ----------------------------------------------------------- */

static bool fin_valid(const struct fwd *f, const struct fq_drive_fin *x)
{
    const struct fj *j = &f->js[x->job];
    return j->phase == J_RUNNING && j->gen == x->gen && !j->marked;
}

static void observe(void *ctx, const struct fq_change *c)
{
    struct fwd *f = ctx;
    if (c->kind != FQ_KIND_WORKLOAD)
        return;
    long i = est_index(c->name);
    if (i >= 0 && (size_t)i < f->n) {
        if (!f->js[i].dirty) {
            f->js[i].dirty = true;
            FQ_GROW(f->dirty, f->dcap, f->nd + 1);
            f->dirty[f->nd++] = (uint32_t)i;
        }
        return;
    }
    if (!f->tname[0] && c->obj)
        snprintf(f->tname, sizeof(f->tname), "%s/%s", c->ns, c->name);
    if (f->tname[0])
        f->tdirty = true;
}

static int submit(struct fwd *f, size_t i, struct fq_err *err)
{
    const struct fq_value *src = f->w->jobs[i].obj;
    struct fq_value *wl = user_copy(src);
    char name[64];
    job_name(name, sizeof(name), i);
    struct fq_value *md = fq_map_ensure_map(wl, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str(ns_of(src)));
    fq_map_set(fq_map_ensure_map(wl, "spec"), "active", fq_value_bool(true));
    struct fq_err e2 = {0};
    int rc = fq_engine_apply(f->e, wl, f->t, NULL, NULL, &e2);
    if (rc)
        return fq_err_set(err, FQ_EINVAL, "workload %s/%s: %s", ns_of(src),
                          fq_value_path_str(src, FQ_META_NAME, "?"), e2.msg);
    f->js[i].phase = J_WAITING;
    return 0;
}

static void mark_finished(struct fwd *f, size_t i)
{
    char name[64];
    job_name(name, sizeof(name), i);
    if (fq_drive_mark_finished(f->store, ns_of(f->w->jobs[i].obj), name, f->t,
                               "Expected end (estimate)"))
        f->js[i].marked = true;
}

/* Looks at one touched est-N workload after a settle. */
static void review(struct fwd *f, size_t i)
{
    struct fj *j = &f->js[i];
    if (j->phase != J_WAITING && j->phase != J_RUNNING)
        return;
    char name[64];
    job_name(name, sizeof(name), i);
    const struct fq_object *o = fq_objstore_get(f->store, FQ_KIND_WORKLOAD,
                                                ns_of(f->w->jobs[i].obj), name);
    if (!o)
        return;
    bool running = wl_running(o->obj);
    bool finished = cond_true(o->obj, "Finished", NULL);
    if (j->phase == J_RUNNING && (finished || !running)) {
        j->left_ms -= f->t - j->run_start;
        j->gen++;
        j->phase = J_WAITING;
    }
    if (finished || !fq_value_path_bool(o->obj, FQ_WL_ACTIVE, true)) {
        j->phase = J_DONE;
        FQ_GROW(f->dels, f->delcap, f->ndel + 1);
        f->dels[f->ndel++] = (uint32_t)i;
        return;
    }
    if (j->phase == J_WAITING && running) {
        j->phase = J_RUNNING;
        j->run_start = f->t;
        if (j->first_start < 0)
            j->first_start = f->t;
        if (j->left_ms < 1)
            j->left_ms = 1;
        fq_drive_heap_push(
            &f->heap,
            (struct fq_drive_fin){f->t + j->left_ms, (uint32_t)i, j->gen});
    }
}

static void settle(struct fwd *f)
{
    fq_engine_run(f->e, f->t);
    for (size_t k = 0; k < f->nd; k++) {
        f->js[f->dirty[k]].dirty = false;
        review(f, f->dirty[k]);
    }
    f->nd = 0;
}

static void flush_deletes(struct fwd *f)
{
    for (size_t k = 0; k < f->ndel; k++) {
        char name[64];
        job_name(name, sizeof(name), f->dels[k]);
        fq_engine_delete(f->e, FQ_KIND_WORKLOAD,
                         ns_of(f->w->jobs[f->dels[k]].obj), name, f->t, NULL);
    }
    f->ndel = 0;
}

static bool target_running(struct fwd *f, char *flavor, size_t size)
{
    if (!f->tname[0] || !f->tdirty)
        return false;
    f->tdirty = false;
    char ns[256];
    snprintf(ns, sizeof(ns), "%s", f->tname);
    char *slash = strchr(ns, '/');
    if (!slash)
        return false;
    *slash = '\0';
    const struct fq_object *o =
        fq_objstore_get(f->store, FQ_KIND_WORKLOAD, ns, slash + 1);
    if (!o || !wl_running(o->obj))
        return false;
    if (flavor)
        admitted_flavor(o->obj, flavor, size);
    return true;
}

static bool copied_kind(enum fq_kind k)
{
    switch (k) {
    case FQ_KIND_NAMESPACE:
    case FQ_KIND_NODEPOOL:
    case FQ_KIND_CAPACITYMODEL:
    case FQ_KIND_RESOURCEFLAVOR:
    case FQ_KIND_COHORT:
    case FQ_KIND_CLUSTERQUEUE:
    case FQ_KIND_LOCALQUEUE:
    case FQ_KIND_WORKLOADPRIORITYCLASS:
    case FQ_KIND_ADMISSIONCHECK:
    case FQ_KIND_PROVISIONINGREQUESTCONFIG:
        return true;
    default:
        return false;
    }
}

static int load_world(struct fwd *f, struct fq_err *err)
{
    const struct fq_estimate_world *w = f->w;
    for (size_t i = 0; i < w->nobjects; i++) {
        const struct fq_value *o = w->objects[i];
        if (!copied_kind(kind_of(o)))
            continue;
        struct fq_err e2 = {0};
        int rc = fq_engine_apply(f->e, user_copy(o), f->t, NULL, NULL, &e2);
        if (rc)
            return fq_err_set(err, FQ_EINVAL, "%s %s: %s",
                              fq_value_path_str(o, "kind", "?"),
                              fq_value_path_str(o, FQ_META_NAME, "?"), e2.msg);
    }
    /* Nodes after their pools, as they are, less what the old engine had
     * placed on them. */
    for (size_t i = 0; i < w->nobjects; i++) {
        const struct fq_value *o = w->objects[i];
        if (kind_of(o) != FQ_KIND_NODE)
            continue;
        struct fq_value *c = fq_value_clone(o);
        fq_map_del(fq_map_get(c, "status"), "placements");
        fq_map_del(fq_meta_annotations(c), FQ_ANN_UNNEEDED);
        fq_map_del(fq_map_get(c, "metadata"), "resourceVersion");
        fq_objstore_create(f->store, c, f->t, NULL, NULL, NULL);
    }
    return 0;
}

/* Advances to the next instant something is due; false when nothing is. */
static bool next_time(struct fwd *f, int64_t ta, int *stall)
{
    while (fq_drive_heap_top(&f->heap) &&
           !fin_valid(f, fq_drive_heap_top(&f->heap)))
        fq_drive_heap_pop(&f->heap);
    const struct fq_drive_fin *top = fq_drive_heap_top(&f->heap);
    int64_t tf = top ? top->t : FQ_NEVER;
    int64_t tw = fq_engine_next_wakeup(f->e);
    int64_t t = ta < tf ? ta : tf;
    if (tw < t)
        t = tw;
    if (t == FQ_NEVER)
        return false;
    if (t <= f->t && ta > f->t && tf > f->t) {
        /* The engine asks for now again after settling: give it a second. */
        if (++*stall > 3)
            t = f->t + 1000;
    } else {
        *stall = 0;
    }
    if (t > f->t)
        f->t = t;
    return true;
}

static void finish_due(struct fwd *f)
{
    while (fq_drive_heap_top(&f->heap) &&
           fq_drive_heap_top(&f->heap)->t <= f->t) {
        struct fq_drive_fin x = fq_drive_heap_pop(&f->heap);
        if (fin_valid(f, &x))
            mark_finished(f, x.job);
    }
}

/*
 * The warm-up re-places the running workloads and lasts as long as the
 * slowest needs (a Plan B one waits for a new ProvisioningRequest, half an
 * hour in the examples). Their run times are what each had left at now,
 * so every one of them starts counting at t0, the end of the warm-up, not
 * when it got its place again: otherwise a workload placed at once would
 * end the warm-up's length early, and the forecast would lean early by as
 * much (a Plan A slot forecast free at +2 min that really frees at +40).
 */
static void restart_clocks(struct fwd *f, int64_t t0)
{
    for (size_t i = 0; i < f->n; i++) {
        struct fj *j = &f->js[i];
        if (!f->w->jobs[i].running || j->phase != J_RUNNING || j->marked)
            continue;
        j->gen++; /* the entry pushed at its warm-up start is stale */
        j->run_start = t0;
        fq_drive_heap_push(&f->heap, (struct fq_drive_fin){
                                         t0 + j->left_ms, (uint32_t)i, j->gen});
    }
}

/*
 * One forecast run. target may be NULL (a replay); pin may be NULL. Fills
 * starts (n entries, may be NULL), *tstart (the target's start after t0,
 * or -1), tflavor, *warmup.
 */
static int forward(const struct fq_estimate_world *w, uint64_t seed,
                   const struct fq_value *target, const struct fq_value *pin,
                   int64_t *starts, int64_t *tstart, char *tflavor,
                   size_t tfsize, int64_t *warmup, struct fq_err *err)
{
    struct fwd f;
    memset(&f, 0, sizeof(f));
    f.w = w;
    f.n = w->njobs;
    f.js = fq_xcalloc(f.n ? f.n : 1, sizeof(*f.js));
    f.t = w->now_ms;
    int64_t horizon = w->horizon_ms > 0 ? w->horizon_ms : DEFAULT_HORIZON;
    if (tstart)
        *tstart = -1;
    if (tflavor && tfsize)
        tflavor[0] = '\0';

    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = seed;
    cfg.policy = w->policy;
    cfg.time_scale = w->time_scale > 0 ? w->time_scale : 1.0;
    cfg.no_pods = true;
    cfg.sim_provider = true;
    cfg.record_events = false;
    cfg.status_every_ms = 3600 * 1000;
    f.e = fq_engine_new(&cfg);
    f.store = fq_engine_store(f.e);
    fq_objstore_set_logging(f.store, false);
    fq_engine_set_observer(f.e, observe, &f);
    for (size_t i = 0; i < f.n; i++) {
        f.js[i].first_start = -1;
        f.js[i].left_ms = w->jobs[i].run_ms > 0 ? w->jobs[i].run_ms : 1;
    }

    int rc = load_world(&f, err);
    if (rc)
        goto out;
    settle(&f);

    /* Warm-up: the running workloads take their places again. */
    size_t nrun = 0;
    for (size_t i = 0; i < f.n; i++) {
        if (!w->jobs[i].running)
            continue;
        rc = submit(&f, i, err);
        if (rc)
            goto out;
        nrun++;
    }
    int stall = 0;
    for (;;) {
        finish_due(&f); /* a short remainder can end within the warm-up */
        settle(&f);
        size_t up = 0;
        for (size_t i = 0; i < f.n; i++)
            up += w->jobs[i].running && f.js[i].first_start >= 0;
        if (up == nrun)
            break;
        int64_t before = f.t;
        if (!next_time(&f, FQ_NEVER, &stall) || f.t > w->now_ms + WARMUP_MS) {
            f.t = before;
            break;
        }
    }
    int64_t t0 = f.t;
    restart_clocks(&f, t0);
    if (warmup)
        *warmup = t0 - w->now_ms;
    for (size_t i = 0; i < f.n; i++) {
        int64_t sub = w->jobs[i].submit_ms;
        f.js[i].arrive = sub <= w->now_ms ? t0 : sub + (t0 - w->now_ms);
    }

    /* Arrivals in order; the target at t0 after those already waiting. */
    size_t next = 0;
    bool target_in = target == NULL;
    int64_t last_arrival = f.n ? f.js[f.n - 1].arrive : t0;
    if (last_arrival < t0)
        last_arrival = t0;
    stall = 0;
    uint64_t loops = 0;
    for (;;) {
        flush_deletes(&f);
        while (next < f.n &&
               (w->jobs[next].running || f.js[next].arrive <= f.t)) {
            if (!w->jobs[next].running) {
                rc = submit(&f, next, err);
                if (rc)
                    goto out;
            }
            next++;
            if (!target_in && (next == f.n || f.js[next].arrive > t0))
                break;
        }
        if (!target_in && (next == f.n || f.js[next].arrive > t0)) {
            struct fq_value *tc = user_copy(target);
            if (pin)
                fq_estimate_pin_templates(tc, pin);
            struct fq_err e2 = {0};
            rc = fq_engine_apply(f.e, tc, f.t, NULL, NULL, &e2);
            if (rc) {
                rc = fq_err_set(err, FQ_EINVAL, "the job: %s", e2.msg);
                goto out;
            }
            target_in = true;
        }
        finish_due(&f);
        settle(&f);
        if (target && target_running(&f, tflavor, tfsize)) {
            if (tstart)
                *tstart = f.t - t0;
            break;
        }
        if (!target) {
            bool all = next == f.n;
            for (size_t i = 0; all && i < f.n; i++)
                all = f.js[i].first_start >= 0;
            if (all)
                break;
        }
        if ((++loops & 255) == 0)
            fq_drive_purge_events(f.store);
        int64_t ta = next < f.n ? f.js[next].arrive : FQ_NEVER;
        if (!next_time(&f, ta, &stall))
            break;
        if (f.t > last_arrival + horizon || loops > MAX_STEPS)
            break;
    }
    if (starts)
        for (size_t i = 0; i < f.n; i++)
            starts[i] = w->jobs[i].running      ? 0 :
                        f.js[i].first_start < 0 ? -1 :
                                                  f.js[i].first_start - t0;
out:
    fq_engine_free(f.e);
    free(f.js);
    fq_drive_heap_free(&f.heap);
    free(f.dirty);
    free(f.dels);
    return rc;
}

int fq_estimate_replay(const struct fq_estimate_world *w, uint64_t seed,
                       int64_t *start_ms, int64_t *warmup_ms,
                       struct fq_err *err)
{
    return forward(w, seed, NULL, NULL, start_ms, NULL, NULL, 0, warmup_ms,
                   err);
}

/* --- forecasts --------------------------------------------------------------- */

void fq_estimate_options_init(struct fq_estimate_options *o)
{
    memset(o, 0, sizeof(*o));
    o->nseeds = FQ_ESTIMATE_SEEDS;
    o->seed = 1;
    o->pin = true;
}

static const struct fq_value *find_obj(const struct fq_estimate_world *w,
                                       enum fq_kind k, const char *ns,
                                       const char *name)
{
    for (size_t i = 0; i < w->nobjects; i++) {
        const struct fq_value *o = w->objects[i];
        if (kind_of(o) != k || strcmp(fq_meta_name(o), name))
            continue;
        if (ns && strcmp(ns_of(o), ns))
            continue;
        return o;
    }
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    /* -1 (did not start) sorts last */
    if (x < 0)
        x = INT64_MAX;
    if (y < 0)
        y = INT64_MAX;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least q of the runs at or
 * below it. */
static int64_t pct(const int64_t *sorted, int n, int q)
{
    int k = (q * n + 99) / 100;
    if (k < 1)
        k = 1;
    return sorted[k - 1];
}

static int one_row(const struct fq_estimate_world *w,
                   const struct fq_value *target, const struct fq_value *pin,
                   const struct fq_estimate_options *o,
                   struct fq_estimate_range *row, int64_t *warmup,
                   struct fq_err *err)
{
    int n = o->nseeds > 0 ? o->nseeds : FQ_ESTIMATE_SEEDS;
    int64_t *st = fq_xcalloc((size_t)n, sizeof(*st));
    char(*fl)[64] = fq_xcalloc((size_t)n, sizeof(*fl));
    int rc = 0;
    for (int k = 0; k < n && !rc; k++) {
        int64_t wu = 0;
        rc = forward(w, o->seed + (uint64_t)k, target, pin, NULL, &st[k], fl[k],
                     sizeof(fl[k]), &wu, err);
        if (wu > *warmup)
            *warmup = wu;
    }
    if (!rc) {
        row->runs = n;
        int best = 0;
        for (int k = 0; k < n; k++) {
            row->started += st[k] >= 0;
            int c = 0, cb = 0;
            for (int m = 0; m < n; m++) {
                c += fl[k][0] && !strcmp(fl[k], fl[m]);
                cb += fl[best][0] && !strcmp(fl[best], fl[m]);
            }
            if (c > cb)
                best = k;
        }
        snprintf(row->admitted, sizeof(row->admitted), "%s", fl[best]);
        qsort(st, (size_t)n, sizeof(*st), cmp_i64);
        row->p10_ms = pct(st, n, 10);
        row->p50_ms = pct(st, n, 50);
        row->p90_ms = pct(st, n, 90);
    }
    free(st);
    free(fl);
    return rc;
}

int fq_estimate_run(const struct fq_estimate_world *w,
                    const struct fq_value *target,
                    const struct fq_estimate_options *o,
                    struct fq_estimate_result *out, struct fq_err *err)
{
    memset(out, 0, sizeof(*out));
    struct fq_estimate_options def;
    if (!o) {
        fq_estimate_options_init(&def);
        o = &def;
    }
    out->now_ms = w->now_ms;
    out->horizon_ms = w->horizon_ms > 0 ? w->horizon_ms : DEFAULT_HORIZON;
    const char *ns = ns_of(target);
    const char *lq = fq_value_as_str(
        fq_map_get(fq_meta_labels(target), FQ_LABEL_QUEUE_NAME));
    if (!lq)
        lq = fq_value_path_str(target, FQ_WL_QUEUE_NAME, NULL);
    if (!lq)
        return fq_err_set(err, FQ_EINVAL,
                          "the job has no " FQ_LABEL_QUEUE_NAME
                          " label: it would "
                          "not be queued");
    const struct fq_value *lqo = find_obj(w, FQ_KIND_LOCALQUEUE, ns, lq);
    if (!lqo)
        return fq_err_set(err, FQ_EINVAL, "no LocalQueue %s/%s", ns, lq);
    const char *cqn = fq_value_path_str(lqo, FQ_LQ_CLUSTER_QUEUE, "");
    const struct fq_value *cq = find_obj(w, FQ_KIND_CLUSTERQUEUE, NULL, cqn);
    if (!cq)
        return fq_err_set(err, FQ_EINVAL,
                          "LocalQueue %s/%s: no ClusterQueue %s", ns, lq, cqn);
    snprintf(out->local_queue, sizeof(out->local_queue), "%s/%s", ns, lq);
    snprintf(out->cluster_queue, sizeof(out->cluster_queue), "%s", cqn);

    /* Rows: unpinned, then each flavor of the ClusterQueue once. */
    out->rows = fq_xcalloc(1, sizeof(*out->rows));
    out->n = 1;
    const struct fq_value *rgs = fq_value_path(cq, FQ_CQ_RESOURCE_GROUPS);
    for (size_t g = 0; o->pin && g < fq_value_len(rgs); g++) {
        const struct fq_value *fls = fq_map_get(fq_seq_at(rgs, g), "flavors");
        for (size_t k = 0; k < fq_value_len(fls); k++) {
            const char *name = fq_value_path_str(fq_seq_at(fls, k), "name", "");
            bool seen = false;
            for (size_t r = 1; r < out->n; r++)
                seen |= !strcmp(out->rows[r].flavor, name);
            if (seen || !*name)
                continue;
            out->rows =
                fq_xrealloc(out->rows, (out->n + 1) * sizeof(*out->rows));
            struct fq_estimate_range *row = &out->rows[out->n++];
            memset(row, 0, sizeof(*row));
            snprintf(row->flavor, sizeof(row->flavor), "%s", name);
        }
    }
    int rc = one_row(w, target, NULL, o, &out->rows[0], &out->warmup_ms, err);
    for (size_t r = 1; r < out->n && !rc; r++) {
        struct fq_estimate_range *row = &out->rows[r];
        const struct fq_value *rf =
            find_obj(w, FQ_KIND_RESOURCEFLAVOR, NULL, row->flavor);
        const struct fq_value *labels = fq_value_path(rf, FQ_RF_NODE_LABELS);
        row->p10_ms = row->p50_ms = row->p90_ms = -1;
        if (!labels || labels->type != FQ_V_MAP || labels->u.map.n == 0)
            continue;
        row->pinnable = true;
        struct fq_value *pin = fq_value_map();
        fq_map_set(pin, "nodeLabels", fq_value_clone(labels));
        struct fq_value *covered = fq_value_seq();
        for (size_t g = 0; g < fq_value_len(rgs); g++) {
            const struct fq_value *grp = fq_seq_at(rgs, g);
            const struct fq_value *fls = fq_map_get(grp, "flavors");
            bool lists = false;
            for (size_t k = 0; k < fq_value_len(fls); k++)
                lists |=
                    !strcmp(fq_value_path_str(fq_seq_at(fls, k), "name", ""),
                            row->flavor);
            const struct fq_value *cr = fq_map_get(grp, "coveredResources");
            for (size_t k = 0; lists && k < fq_value_len(cr); k++)
                fq_seq_push(covered, fq_value_clone(fq_seq_at(cr, k)));
        }
        fq_map_set(pin, "covered", covered);
        rc = one_row(w, target, pin, o, row, &out->warmup_ms, err);
        fq_value_free(pin);
    }
    if (rc)
        fq_estimate_result_release(out);
    return rc;
}

void fq_estimate_result_release(struct fq_estimate_result *r)
{
    free(r->rows);
    r->rows = NULL;
    r->n = 0;
}

static struct fq_value *secs(int64_t ms)
{
    return fq_value_int(ms < 0 ? -1 : (ms + 999) / 1000);
}

struct fq_value *fq_estimate_to_value(const struct fq_estimate_result *r)
{
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "apiVersion", fq_value_str("flexq.dev/v1alpha1"));
    fq_map_set(v, "kind", fq_value_str("Estimate"));
    char ts[40];
    fq_time_format(r->now_ms, ts, sizeof(ts));
    fq_map_set(v, "now", fq_value_str(ts));
    fq_map_set(v, "localQueue", fq_value_str(r->local_queue));
    fq_map_set(v, "clusterQueue", fq_value_str(r->cluster_queue));
    fq_map_set(v, "horizonSeconds", secs(r->horizon_ms));
    fq_map_set(v, "warmupSeconds", secs(r->warmup_ms));
    struct fq_value *rows = fq_value_seq();
    for (size_t i = 0; i < r->n; i++) {
        const struct fq_estimate_range *x = &r->rows[i];
        struct fq_value *m = fq_value_map();
        fq_map_set(m, "flavor", fq_value_str(i == 0 ? "*" : x->flavor));
        fq_map_set(m, "pinnable", fq_value_bool(i == 0 || x->pinnable));
        fq_map_set(m, "admittedOn", fq_value_str(x->admitted));
        fq_map_set(m, "runs", fq_value_int(x->runs));
        fq_map_set(m, "started", fq_value_int(x->started));
        fq_map_set(m, "p10Seconds", secs(x->p10_ms));
        fq_map_set(m, "p50Seconds", secs(x->p50_ms));
        fq_map_set(m, "p90Seconds", secs(x->p90_ms));
        fq_seq_push(rows, m);
    }
    fq_map_set(v, "flavors", rows);
    return v;
}
