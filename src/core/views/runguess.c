/*
 * runguess.c - run-time guesses for the workloads of a store, from its
 * own history (see runguess.h for the order and what counts as history).
 *
 * How it works. fq_runguess_new lists the store's Workloads once, keeps
 * the finished-and-succeeded ones with their run (PodsReady to Finished)
 * and finish time, sorts them by finish time (then namespace and name, so
 * that equal times add in one order) and adds each to a runhist under
 * user = its namespace, queue = the ClusterQueue its LocalQueue feeds,
 * chips = its
 * accelerator count, limit = its own limit. fq_runguess_of then asks the
 * runhist for each workload that has no stated run time.
 *
 * Worked example: namespace team-a finished runs of 600 s and 1,000 s; a
 * new team-a job is guessed at 800 s, HIGH (runhist.h); a team-b job with
 * activeDeadlineSeconds 3600, when past jobs used a median 25% of their
 * limits, at 900 s, MEDIUM.
 *
 * A job's size (chips) is the sum over its podSets of count times the
 * accelerators (google.com/tpu, nvidia.com/gpu, amd.com/gpu) each pod
 * requests (objects.h's fq_podspec_requests); a job without accelerators
 * is size 0 and shares its queue's "size 0" runs.
 *
 * It does not: keep history across deletions (a Workload deleted with its
 * job, by a TTL or by hand, takes its run with it), weigh failed runs, or
 * see runs still going.
 */
#include "flexq/runguess.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/kinds.h"
#include "flexq/names.h"
#include "flexq/objects.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "flexq/runtime.h"
#include "flexq/timefmt.h"

#define QUEUE_KEY_MAX 320 /* a namespace (63), '/', a LocalQueue (253) */
/* Resources of one pod looked at for accelerators (a pod asks for a few). */
#define MAX_RES 32

/* fq_runguess_of maps runhist's sources onto ours by offset. */
_Static_assert(FQ_RUNGUESS_NAMESPACE + FQ_RUNHIST_DEFAULT ==
                       FQ_RUNGUESS_DEFAULT &&
                   FQ_RUNHIST_USER == 0 &&
                   FQ_RUNHIST_NSOURCES + 1 == FQ_RUNGUESS_NSOURCES,
               "runhist's sources follow the stated one in order");

struct fq_runguess {
    struct fq_runhist *h;
    uint64_t runs;
};

struct done {
    const struct fq_object *o;
    int64_t finished, run_ms;
};

static int64_t cond_time(const struct fq_value *obj, const char *type)
{
    int64_t t = 0;
    const char *s =
        fq_value_path_str(fq_cond_find(obj, type), "lastTransitionTime", NULL);
    return s && fq_time_parse(s, &t) == 0 ? t : -1;
}

/* The queue a workload's runs are kept under: the ClusterQueue its
 * LocalQueue feeds (shared by the namespaces of a team), else
 * "namespace/localqueue" for a LocalQueue not (yet) in the store. */
static void queue_key(const struct fq_objstore *s, const struct fq_value *wl,
                      char buf[QUEUE_KEY_MAX])
{
    const char *ns = fq_meta_namespace(wl);
    const char *lq = fq_value_path_str(wl, FQ_WL_QUEUE_NAME, "");
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_LOCALQUEUE, ns, lq);
    const char *cq =
        o ? fq_value_path_str(o->obj, "spec.clusterQueue", "") : "";
    if (*cq)
        snprintf(buf, QUEUE_KEY_MAX, "%s", cq);
    else
        snprintf(buf, QUEUE_KEY_MAX, "%s/%s", ns, lq);
}

static int64_t shorter(int64_t a, int64_t b)
{
    return a <= 0 ? b : b <= 0 ? a : a < b ? a : b;
}

static bool is_accelerator(const char *name)
{
    return !strcmp(name, "google.com/tpu") || !strcmp(name, "nvidia.com/gpu") ||
           !strcmp(name, "amd.com/gpu");
}

/*
 * What a workload's runs are kept under besides its queue, from one
 * decode: *chips, the accelerators it asks for in all (over its podSets,
 * count x each pod's effective request, fq_podspec_requests: the sum over
 * its containers, or an init container's if larger, as Kubernetes counts;
 * 0 for a workload that does not decode), and *limit_ms, the shortest of
 * Kueue's maximumExecutionTimeSeconds and its and its owner's
 * activeDeadlineSeconds (-1: none).
 */
static void job_of(const struct fq_value *wl, const struct fq_value *own,
                   int64_t *chips, int64_t *limit_ms)
{
    int64_t n = 0, lim = -1;
    struct fq_workload w;
    if (fq_workload_decode(wl, NULL, &w, NULL) == 0) {
        if (w.has_max_exec && w.max_exec_seconds > 0 &&
            w.max_exec_seconds <= FQ_DURATION_MAX_MS / 1000)
            lim = w.max_exec_seconds * 1000;
        for (size_t i = 0; i < w.n_podsets && n < INT64_MAX; i++) {
            struct fq_resource req[MAX_RES];
            size_t k =
                fq_podspec_requests(&w.podsets[i].template.spec, req, MAX_RES);
            for (size_t j = 0; j < k && j < MAX_RES; j++) {
                int64_t all = 0;
                if (is_accelerator(req[j].name) && req[j].value > 0 &&
                    (fq_mul_overflow(req[j].value, w.podsets[i].count, &all) ||
                     fq_add_overflow(n, all, &n))) {
                    n = INT64_MAX;
                    break;
                }
            }
        }
        fq_workload_release(&w);
    }
    lim = shorter(lim, fq_runtime_deadline(wl));
    *chips = n;
    *limit_ms = own ? shorter(lim, fq_runtime_deadline(own)) : lim;
}

static int by_finish(const void *a, const void *b)
{
    const struct done *x = a, *y = b;
    if (x->finished != y->finished)
        return x->finished < y->finished ? -1 : 1;
    int c = strcmp(x->o->ns, y->o->ns);
    return c ? c : strcmp(x->o->name, y->o->name);
}

struct fq_runguess *fq_runguess_new(const struct fq_objstore *s)
{
    struct fq_runguess *g = fq_xcalloc(1, sizeof(*g));
    g->h = fq_runhist_new();
    const struct fq_object **wls = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &wls);
    struct done *d = fq_xcalloc(n ? n : 1, sizeof(*d));
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *w = wls[i]->obj;
        const struct fq_value *fin = fq_cond_find(w, "Finished");
        if (!fq_cond_status_is(fin, "True") ||
            strcmp(fq_value_path_str(fin, "reason", ""), "Succeeded"))
            continue;
        int64_t a = cond_time(w, "PodsReady"), b = cond_time(w, "Finished");
        if (a < 0 || b <= a)
            continue;
        d[nd++] = (struct done){wls[i], b, b - a};
    }
    qsort(d, nd, sizeof(*d), by_finish);
    for (size_t i = 0; i < nd; i++) {
        const struct fq_value *w = d[i].o->obj;
        char q[QUEUE_KEY_MAX];
        queue_key(s, w, q);
        int64_t chips, limit;
        job_of(w, fq_objstore_owner(s, w), &chips, &limit);
        fq_runhist_add(g->h, d[i].o->ns, q, chips, d[i].run_ms, limit);
    }
    g->runs = nd;
    free(d);
    free(wls);
    return g;
}

void fq_runguess_free(struct fq_runguess *g)
{
    if (!g)
        return;
    fq_runhist_free(g->h);
    free(g);
}

uint64_t fq_runguess_runs(const struct fq_runguess *g)
{
    return g->runs;
}

void fq_runguess_of(const struct fq_runguess *g, const struct fq_objstore *s,
                    const struct fq_value *wl, struct fq_runguess_answer *out)
{
    const struct fq_value *own = fq_objstore_owner(s, wl);
    job_of(wl, own, &out->chips, &out->limit_ms);
    /* Only the annotation is a run time; a deadline is a limit. */
    enum fq_runtime_source rs = FQ_RUNTIME_NONE;
    int64_t stated = fq_runtime_stated(wl, &rs);
    if (rs != FQ_RUNTIME_ANNOTATION && own)
        stated = fq_runtime_stated(own, &rs);
    if (rs == FQ_RUNTIME_ANNOTATION && stated > 0) {
        out->run_ms = stated;
        out->src = FQ_RUNGUESS_STATED;
        out->conf = FQ_RUNHIST_HIGH;
        return;
    }
    char q[QUEUE_KEY_MAX];
    queue_key(s, wl, q);
    struct fq_runhist_guess h;
    fq_runhist_guess(g->h, fq_meta_namespace(wl), q, out->chips, out->limit_ms,
                     &h);
    out->run_ms = h.run_ms;
    out->src = (enum fq_runguess_source)(FQ_RUNGUESS_NAMESPACE + h.src);
    out->conf = h.conf;
}

int64_t fq_runguess_left(const struct fq_runguess_answer *a, int64_t elapsed_ms)
{
    return fq_runhist_left(a->run_ms, elapsed_ms > 0 ? elapsed_ms : 0,
                           a->limit_ms);
}

void fq_runguess_tally_add(struct fq_runguess_tally *t,
                           enum fq_runhist_confidence conf, int64_t chips,
                           int64_t left_ms)
{
    double wt =
        (double)(left_ms > 0 ? left_ms : 0) * (double)(chips > 0 ? chips : 1);
    t->weight += wt;
    t->score += wt * (double)conf;
}

enum fq_runhist_confidence fq_runguess_tally_result(
    const struct fq_runguess_tally *t)
{
    if (t->weight <= 0)
        return FQ_RUNHIST_HIGH;
    int c = (int)(t->score / t->weight + 0.5);
    return c <= FQ_RUNHIST_LOW  ? FQ_RUNHIST_LOW :
           c >= FQ_RUNHIST_HIGH ? FQ_RUNHIST_HIGH :
                                  FQ_RUNHIST_MEDIUM;
}

static const char *const keys[FQ_RUNGUESS_NSOURCES] = {
    "stated", "namespace", "limit", "queueSize", "queue", "all", "default",
};

static const char *const words[FQ_RUNGUESS_NSOURCES] = {
    "their flexq.dev/expected-runtime",
    "the namespace's last runs",
    "their limit and past jobs' share of theirs",
    "their ClusterQueue's runs of their size",
    "their ClusterQueue's runs",
    "all queues' runs",
    "the default 1h",
};

const char *fq_runguess_source_key(enum fq_runguess_source s)
{
    return (unsigned)s < FQ_RUNGUESS_NSOURCES ? keys[s] : "?";
}

const char *fq_runguess_source_words(enum fq_runguess_source s)
{
    return (unsigned)s < FQ_RUNGUESS_NSOURCES ? words[s] : "?";
}
