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
 * A workload's run time, in this order (the answer counts each source
 * under "runtimes"):
 *   1. its flexq.dev/expected-runtime annotation, or its owner job's;
 *   2. its owner job's activeDeadlineSeconds (a RayJob's or Job's upper
 *      bound: forecasts from it lean late);
 *   3. the mean run time (PodsReady to Finished) of the finished
 *      workloads of the same LocalQueue still stored;
 *   4. one hour.
 * A running workload runs for that time minus what it has run already, at
 * least a minute (one that overran is assumed to end soon).
 *
 * Invariants: nothing is written to the store; the forecast runs inside
 * the request (it is bounded by the horizon and the number of seeds).
 *
 * It does not: stream, cache forecasts, or forecast a job that is not in
 * a queue (FQ_EINVAL from the core).
 */
#include "api/api_estimate.h"
#include "api/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/conditions.h"
#include "flexq/engine.h"
#include "flexq/estimate.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/timefmt.h"

#define DEFAULT_RUN_MS (3600 * 1000LL)
#define MIN_LEFT_MS    (60 * 1000LL)
#define MAX_SEEDS      20

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
    const char *s = fq_value_path_str(obj, "metadata.creationTimestamp", NULL);
    return s && fq_time_parse(s, &t) == 0 ? t : 0;
}

static const char *queue_of(const struct fq_value *wl)
{
    return fq_value_path_str(wl, "spec.queueName", "");
}

/* The job that owns a workload (first ownerReference), or NULL. */
static const struct fq_value *owner(const struct fq_objstore *s,
                                    const struct fq_value *wl)
{
    const struct fq_value *ref =
        fq_seq_at(fq_value_path(wl, "metadata.ownerReferences"), 0);
    if (!ref)
        return NULL;
    enum fq_kind k = fq_kind_from_gvk(fq_value_path_str(ref, "apiVersion", ""),
                                      fq_value_path_str(ref, "kind", ""));
    const struct fq_object *o =
        k == FQ_KIND_NONE ?
            NULL :
            fq_objstore_get(s, k,
                            fq_value_path_str(wl, "metadata.namespace", ""),
                            fq_value_path_str(ref, "name", ""));
    return o ? o->obj : NULL;
}

/* Is this workload the target itself (or the target's workload)? */
static bool is_target(const struct fq_value *wl, const struct fq_value *t,
                      const char *ns)
{
    const char *tk = fq_value_path_str(t, "kind", "");
    const char *tn = fq_value_path_str(t, "metadata.name", "");
    if (strcmp(fq_value_path_str(wl, "metadata.namespace", ""), ns))
        return false;
    if (!strcmp(tk, "Workload"))
        return !strcmp(fq_value_path_str(wl, "metadata.name", ""), tn);
    const struct fq_value *ref =
        fq_seq_at(fq_value_path(wl, "metadata.ownerReferences"), 0);
    return ref && !strcmp(fq_value_path_str(ref, "kind", ""), tk) &&
           !strcmp(fq_value_path_str(ref, "name", ""), tn);
}

struct qmean {
    const char *ns, *queue; /* borrowed from the store */
    double sum;
    int n;
};

static int cmp_job(const void *a, const void *b)
{
    const struct fq_estimate_job *x = a, *y = b;
    return x->submit_ms < y->submit_ms ? -1 : x->submit_ms > y->submit_ms;
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
    size_t len = 0;
    const char *body = fq_http_body(r, &len);
    struct fq_limits lim = fq_limits_default();
    struct fq_docs docs = {0};
    int rc = fq_yaml_parse(body ? body : "", body ? len : 0, "body", &lim,
                           &docs, &err);
    if (!rc && docs.n != 1)
        rc = fq_err_set(&err, FQ_EINVAL, "the body must hold one job, not %zu",
                        docs.n);
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

    /* Workloads: queue means first, then the jobs. */
    const struct fq_object **wls = NULL;
    size_t nw = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &wls);
    struct qmean *qm = fq_xcalloc(nw ? nw : 1, sizeof(*qm));
    size_t nq = 0;
    for (size_t i = 0; i < nw; i++) {
        const struct fq_value *w = wls[i]->obj;
        int64_t a = cond_time(w, "PodsReady"), b = cond_time(w, "Finished");
        if (!fq_cond_true(w, "Finished") || a < 0 || b < a)
            continue;
        size_t q = 0;
        while (q < nq && (strcmp(qm[q].ns, wls[i]->ns) ||
                          strcmp(qm[q].queue, queue_of(w))))
            q++;
        if (q == nq)
            qm[nq++] = (struct qmean){wls[i]->ns, queue_of(w), 0, 0};
        qm[q].sum += (double)(b - a);
        qm[q].n++;
    }
    struct fq_estimate_job *jobs = fq_xcalloc(nw ? nw : 1, sizeof(*jobs));
    size_t nj = 0;
    int counts[FQ_EST_SRC_DEFAULT + 1] = {0};
    for (size_t i = 0; i < nw; i++) {
        const struct fq_value *w = wls[i]->obj;
        if (fq_cond_true(w, "Finished") ||
            !fq_value_path_bool(w, "spec.active", true) || !*queue_of(w) ||
            is_target(w, target, ns))
            continue;
        enum fq_estimate_source src = FQ_EST_SRC_NONE;
        int64_t run = fq_estimate_runtime(w, &src);
        const struct fq_value *own = run < 0 ? owner(s, w) : NULL;
        if (own)
            run = fq_estimate_runtime(own, &src);
        if (run < 0) {
            for (size_t q = 0; q < nq; q++)
                if (!strcmp(qm[q].ns, wls[i]->ns) &&
                    !strcmp(qm[q].queue, queue_of(w))) {
                    run = (int64_t)(qm[q].sum / qm[q].n);
                    src = FQ_EST_SRC_QUEUE_MEAN;
                }
        }
        if (run <= 0) {
            run = DEFAULT_RUN_MS;
            src = FQ_EST_SRC_DEFAULT;
        }
        counts[src]++;
        bool running = fq_cond_true(w, "Admitted") &&
                       fq_cond_true(w, "PodsReady") &&
                       !fq_cond_true(w, "Evicted");
        if (running) {
            int64_t since = cond_time(w, "PodsReady");
            run -= since > 0 && since < now ? now - since : 0;
            if (run < MIN_LEFT_MS)
                run = MIN_LEFT_MS;
        }
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
    struct fq_estimate_result res;
    rc = fq_estimate_run(&world, target, &o, &res, &err);
    if (rc) {
        fq_api_error(d, r, rc, &err, "estimates", NULL);
    } else {
        struct fq_value *v = fq_estimate_to_value(&res);
        struct fq_value *rt = fq_value_map();
        fq_map_set(rt, "annotation",
                   fq_value_int(counts[FQ_EST_SRC_ANNOTATION]));
        fq_map_set(rt, "activeDeadlineSeconds",
                   fq_value_int(counts[FQ_EST_SRC_DEADLINE]));
        fq_map_set(rt, "queueMean",
                   fq_value_int(counts[FQ_EST_SRC_QUEUE_MEAN]));
        fq_map_set(rt, "default", fq_value_int(counts[FQ_EST_SRC_DEFAULT]));
        fq_map_set(v, "runtimes", rt);
        fq_map_set(v, "running", fq_value_int(0));
        size_t nrun = 0;
        for (size_t i = 0; i < nj; i++)
            nrun += jobs[i].running;
        fq_map_set(v, "running", fq_value_int((int64_t)nrun));
        fq_map_set(v, "pending", fq_value_int((int64_t)(nj - nrun)));
        struct fq_buf out;
        fq_buf_init(&out);
        fq_json_encode(v, FQ_JSON_PRETTY, &out);
        fq_buf_putc(&out, '\n');
        fq_value_free(v);
        fq_estimate_result_release(&res);
        fq_daemon_defer_reply(d, r, 200, "application/json", &out);
        fq_buf_release(&out);
    }
    free(jobs);
    free(qm);
    free(wls);
    free(objs);
    fq_docs_release(&docs);
}

void fq_api_estimate_attach(struct fq_daemon *d)
{
    fq_api_add_route(d->api, FQ_API_ESTIMATE_PREFIX, 0, handle, NULL);
}
