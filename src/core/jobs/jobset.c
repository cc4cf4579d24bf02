/*
 * jobset.c - the JobSet controller (jobset.x-k8s.io/v1alpha2), as the
 * JobSet project runs it, and its row for Kueue's jobframework.
 *
 * A JobSet is a list of replicated jobs, each `replicas` copies of one
 * batch Job template. The controller makes the child Jobs, which the Job
 * controller (job.c) runs:
 *
 *   child Job   <jobset>-<rjob>-<jobIndex>, owned by the JobSet, with the
 *               labels and annotations jobset.sigs.k8s.io/jobset-name,
 *               jobset-uid, replicatedjob-name, replicatedjob-replicas,
 *               global-replicas, job-index, job-global-index and
 *               restart-attempt on the Job and its pod template
 *   pods        hostname <job>-<completionIndex> (Indexed Jobs) under
 *               subdomain spec.network.subdomain (default: the JobSet's
 *               name), so that `<jobset>-<rjob>-<j>-<p>.<subdomain>` is
 *               the headless-service name JAX and torchrun use; the
 *               runner resolves such names to this machine (annotation
 *               flexq.dev/dns-names, runner/podspec.c): the pod's own
 *               Job's pods, pod 0 of every Job, then the rest, at most
 *               MAX_DNS of them
 *   TPU pods    (requesting google.com/tpu) get what GKE's TPU webhook
 *               sets: TPU_WORKER_HOSTNAMES (the hostnames of their Job's
 *               pods) and TPU_WORKER_ID (job.c: the completion index),
 *               and for multi-slice MEGASCALE_COORDINATOR_ADDRESS (pod 0
 *               of job 0 of the replicated job), MEGASCALE_NUM_SLICES
 *               (replicas) and MEGASCALE_SLICE_ID (the job index)
 *
 * The machine, one function per transition:
 *
 *   spec.suspend=true ----> Suspended=True, child Jobs deleted
 *   spec.suspend=false ---> child Jobs made from the (admitted) templates
 *   a child Job Failed ---> restarts < failurePolicy.maxRestarts: every
 *                           child Job deleted, restarts+1, made again
 *                           with restart-attempt=restarts; else Failed
 *                           (FailedJobs), terminalState Failed
 *   successPolicy met ----> Completed (AllJobsCompleted), terminalState
 *                           Completed: operator All (default) wants every
 *                           Job of the target replicated jobs (default:
 *                           all) Complete, Any wants one
 *
 * Invariants
 *   1. Completed and Failed are final; a finished JobSet's unfinished
 *      child Jobs are suspended (their pods end).
 *   2. A suspended JobSet has no child Jobs, so a Kueue eviction frees
 *      everything and the next admission starts from the templates the
 *      jobframework restored and merged again.
 *
 * What it does not do: the job-key label (a SHA-256 of the Job's key),
 * startupPolicy, coordinator, failurePolicy rules (only maxRestarts),
 * exclusive placement, or a Service object (flexq has no Services; the
 * names resolve through /etc/hosts instead).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"
#include "jobs/integrations.h"
#include "jobs/pods.h"

#define JS_PREFIX "jobset.sigs.k8s.io/"
#define MAX_DNS   1024 /* peer names written into one pod template */

/* --- reading the spec ---------------------------------------------------- */

static int64_t rjob_replicas(const struct fq_value *rj)
{
    return fq_value_path_int(rj, "replicas", 1);
}

/* Pods of one child Job running at once: parallelism, at most
 * completions. */
static int64_t rjob_pods(const struct fq_value *rj)
{
    int64_t par = fq_value_path_int(rj, FQ_RJOB_PARALLELISM, 1);
    int64_t comp = fq_value_path_int(rj, "template.spec.completions", par);
    return comp > 0 && comp < par ? comp : par;
}

static const char *subdomain(const struct fq_value *js)
{
    return fq_value_path_str(js, "spec.network.subdomain", fq_meta_name(js));
}

static bool requests_tpu(const struct fq_value *tmpl)
{
    const struct fq_value *cs = fq_value_path(tmpl, FQ_POD_CONTAINERS);
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        if (fq_map_get(fq_value_path(c, FQ_CTR_REQUESTS), "google.com/tpu") ||
            fq_map_get(fq_value_path(c, FQ_CTR_LIMITS), "google.com/tpu"))
            return true;
    }
    return false;
}

/* --- the jobframework's row ---------------------------------------------- */

static struct fq_value *js_podsets(const struct fq_value *js)
{
    struct fq_value *pss = fq_value_seq();
    const struct fq_value *rjs = fq_value_path(js, FQ_JOBSET_REPLICATED_JOBS);
    for (size_t i = 0; i < fq_value_len(rjs); i++) {
        const struct fq_value *rj = fq_seq_at(rjs, i);
        struct fq_value *ps = fq_value_map();
        fq_map_set(ps, "name",
                   fq_value_str(fq_value_path_str(rj, "name", "main")));
        fq_map_set(ps, "count",
                   fq_value_int(rjob_replicas(rj) * rjob_pods(rj)));
        const struct fq_value *t = fq_value_path(rj, FQ_RJOB_POD_TEMPLATE);
        fq_map_set(ps, "template", t ? fq_value_clone(t) : fq_value_map());
        fq_seq_push(pss, ps);
    }
    return pss;
}

static struct fq_value *js_template_of(struct fq_value *js, const char *ps)
{
    struct fq_value *rjs = fq_value_path(js, FQ_JOBSET_REPLICATED_JOBS);
    for (size_t i = 0; i < fq_value_len(rjs); i++) {
        struct fq_value *rj = fq_seq_at(rjs, i);
        if (!strcmp(fq_value_path_str(rj, "name", ""), ps))
            return fq_value_path(rj, FQ_RJOB_POD_TEMPLATE);
    }
    return NULL;
}

static void js_status(const struct fq_value *js, struct fq_jobstate *st)
{
    const struct fq_value *s = fq_map_get(js, "status");
    memset(st, 0, sizeof(*st));
    st->msg = "";
    if (fq_pods_cond_true(s, "Completed")) {
        st->finished = st->ok = true;
    } else if (fq_pods_cond_true(s, "Failed")) {
        st->finished = true;
        st->msg = fq_value_path_str(fq_pods_cond(s, "Failed"), "message", "");
    }
    /* Ready: every child Job of every replicated job is ready or done. */
    const struct fq_value *rjs = fq_value_path(js, FQ_JOBSET_REPLICATED_JOBS);
    const struct fq_value *rst = fq_map_get(s, "replicatedJobsStatus");
    int64_t want = 0, have = 0;
    for (size_t i = 0; i < fq_value_len(rjs); i++)
        want += rjob_replicas(fq_seq_at(rjs, i));
    for (size_t i = 0; i < fq_value_len(rst); i++) {
        const struct fq_value *r = fq_seq_at(rst, i);
        have += fq_value_path_int(r, "ready", 0) +
                fq_value_path_int(r, "succeeded", 0);
    }
    st->ready = want > 0 && have >= want;
}

const struct fq_integration fq_jobset_integration = {
    .kind = FQ_KIND_JOBSET,
    .prefix = "jobset",
    .suspend_path = "spec.suspend",
    .podsets = js_podsets,
    .template_of = js_template_of,
    .status = js_status,
};

/* --- child Jobs ---------------------------------------------------------- */

static void set_meta(struct fq_value *obj, const char *key, const char *val)
{
    fq_pods_set_label(obj, key, val);
    fq_pods_set_annotation(obj, key, val);
}

/* Appends `<js>-<rjob>-<j>-<p>.<sub>` unless the cap is reached. */
static void add_name(struct fq_buf *b, size_t *n, const char *js,
                     const char *rjob, int64_t j, int64_t p, const char *sub)
{
    if (*n >= MAX_DNS)
        return;
    fq_buf_printf(b, "%s%s-%s-%lld-%lld.%s", *n ? "," : "", js, rjob,
                  (long long)j, (long long)p, sub);
    (*n)++;
}

/*
 * The headless-service names the pods of child Job `self_j` of
 * `self_rj` resolve, comma-separated, at most MAX_DNS (a pod's /etc/hosts
 * and annotation stay small however big the JobSet): first its own Job's
 * pods (its TPU slice, its torchrun peers), then pod 0 of every Job (the
 * coordinators JAX and MEGASCALE name), then the rest.
 */
static char *peer_names(const struct fq_value *js, const char *self_rj,
                        int64_t self_j)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "");
    const char *name = fq_meta_name(js);
    const char *sub = subdomain(js);
    const struct fq_value *rjs = fq_value_path(js, FQ_JOBSET_REPLICATED_JOBS);
    size_t n = 0;
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < fq_value_len(rjs) && n < MAX_DNS; i++) {
            const struct fq_value *rj = fq_seq_at(rjs, i);
            const char *rn = fq_value_path_str(rj, "name", "");
            for (int64_t j = 0; j < rjob_replicas(rj) && n < MAX_DNS; j++) {
                bool self = !strcmp(rn, self_rj) && j == self_j;
                if (self != (pass == 0))
                    continue;
                for (int64_t p = pass == 2 ? 1 : 0;
                     p < (pass == 1 ? 1 : rjob_pods(rj)) && n < MAX_DNS; p++)
                    add_name(&b, &n, name, rn, j, p, sub);
            }
        }
    return fq_buf_detach(&b);
}

/* GKE's TPU env for the pods of child Job `jname` (index j of rj). */
static void tpu_env(struct fq_value *pspec, const struct fq_value *js,
                    const struct fq_value *rj, const char *jname, int64_t j)
{
    const char *sub = subdomain(js);
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "");
    for (int64_t p = 0; p < rjob_pods(rj) && p < MAX_DNS; p++)
        fq_buf_printf(&b, "%s%s-%lld.%s", p ? "," : "", jname, (long long)p,
                      sub);
    fq_pods_set_env(pspec, "TPU_WORKER_HOSTNAMES", fq_buf_str(&b));
    fq_buf_release(&b);
    int64_t slices = rjob_replicas(rj);
    if (slices < 2)
        return;
    char buf[300];
    snprintf(buf, sizeof(buf), "%s-%s-0-0.%s", fq_meta_name(js),
             fq_value_path_str(rj, "name", ""), sub);
    fq_pods_set_env(pspec, "MEGASCALE_COORDINATOR_ADDRESS", buf);
    snprintf(buf, sizeof(buf), "%lld", (long long)slices);
    fq_pods_set_env(pspec, "MEGASCALE_NUM_SLICES", buf);
    snprintf(buf, sizeof(buf), "%lld", (long long)j);
    fq_pods_set_env(pspec, "MEGASCALE_SLICE_ID", buf);
}

static void create_child(struct fq_engine *e, const struct fq_value *js,
                         const struct fq_value *rj, int64_t j, int64_t global,
                         int64_t now)
{
    const char *ns = fq_value_path_str(js, FQ_META_NAMESPACE, "default");
    const char *name = fq_meta_name(js);
    const char *rname = fq_value_path_str(rj, "name", "");
    char *jname = fq_xasprintf("%s-%s-%lld", name, rname, (long long)j);
    struct fq_value *job = fq_value_map();
    fq_map_set(job, "apiVersion", fq_value_str("batch/v1"));
    fq_map_set(job, "kind", fq_value_str("Job"));
    struct fq_value *md = fq_map_ensure_map(job, "metadata");
    const struct fq_value *tmd = fq_value_path(rj, "template.metadata");
    if (fq_map_get(tmd, "labels"))
        fq_map_set(md, "labels", fq_value_clone(fq_map_get(tmd, "labels")));
    if (fq_map_get(tmd, "annotations"))
        fq_map_set(md, "annotations",
                   fq_value_clone(fq_map_get(tmd, "annotations")));
    fq_map_set(md, "name", fq_value_str(jname));
    fq_map_set(md, "namespace", fq_value_str(ns));
    struct fq_value *ors = fq_value_seq();
    fq_seq_push(ors, fq_pods_owner_ref(js));
    fq_map_set(md, "ownerReferences", ors);
    const struct fq_value *spec = fq_value_path(rj, FQ_TEMPLATE_SPEC);
    fq_map_set(job, "spec", spec ? fq_value_clone(spec) : fq_value_map());
    struct fq_value *tmpl =
        fq_map_ensure_map(fq_map_get(job, "spec"), "template");
    char idx[32], reps[32], glob[32], restarts[32], greps[32];
    int64_t all = 0;
    const struct fq_value *rjs = fq_value_path(js, FQ_JOBSET_REPLICATED_JOBS);
    for (size_t i = 0; i < fq_value_len(rjs); i++)
        all += rjob_replicas(fq_seq_at(rjs, i));
    snprintf(greps, sizeof(greps), "%lld", (long long)all);
    snprintf(idx, sizeof(idx), "%lld", (long long)j);
    snprintf(reps, sizeof(reps), "%lld", (long long)rjob_replicas(rj));
    snprintf(glob, sizeof(glob), "%lld", (long long)global);
    snprintf(restarts, sizeof(restarts), "%lld",
             (long long)fq_value_path_int(js, "status.restarts", 0));
    for (int k = 0; k < 2; k++) {
        struct fq_value *o = k ? tmpl : job;
        set_meta(o, JS_PREFIX "jobset-name", name);
        set_meta(o, JS_PREFIX "jobset-uid", fq_meta_uid(js));
        set_meta(o, JS_PREFIX "global-replicas", greps);
        set_meta(o, JS_PREFIX "replicatedjob-name", rname);
        set_meta(o, JS_PREFIX "replicatedjob-replicas", reps);
        set_meta(o, JS_PREFIX "job-index", idx);
        set_meta(o, JS_PREFIX "job-global-index", glob);
        set_meta(o, JS_PREFIX "restart-attempt", restarts);
    }
    struct fq_value *pspec = fq_map_ensure_map(tmpl, "spec");
    if (fq_value_path_bool(js, "spec.network.enableDNSHostnames", true)) {
        fq_map_set(pspec, "subdomain", fq_value_str(subdomain(js)));
        char *dns = peer_names(js, rname, j);
        fq_pods_set_annotation(tmpl, FQ_ANN_DNS_NAMES, dns);
        free(dns);
    }
    if (requests_tpu(tmpl))
        tpu_env(pspec, js, rj, jname, j);
    fq_map_set(fq_map_get(job, "spec"), "suspend", fq_value_bool(false));
    fq_pods_create(e, job, now, js, "SuccessfulCreate");
    free(jname);
}

/* --- status -------------------------------------------------------------- */

struct tally {
    int64_t ready, succeeded, failed, active, suspended;
};

static bool job_done(const struct fq_value *job, const char *cond)
{
    return fq_pods_cond_true(fq_map_get(job, "status"), cond);
}

/* A child Job of the JobSet `uid`, or NULL. */
static const struct fq_value *child(struct fq_engine *e, const char *ns,
                                    const char *jname, const char *jsname,
                                    const char *uid)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_JOB, ns, jname);
    if (!o || !fq_pods_owned_by(o->obj, "JobSet", jsname, uid))
        return NULL;
    return o->obj;
}

static void count_child(const struct fq_value *job, const struct fq_value *rj,
                        struct tally *t)
{
    if (job_done(job, "Complete"))
        t->succeeded++;
    else if (job_done(job, "Failed"))
        t->failed++;
    else if (fq_value_path_bool(job, FQ_SPEC_SUSPEND, false))
        t->suspended++;
    else {
        t->active++;
        if (fq_value_path_int(job, "status.ready", 0) >= rjob_pods(rj))
            t->ready++;
    }
}

static bool targeted(const struct fq_value *js, const char *rname)
{
    const struct fq_value *t =
        fq_value_path(js, "spec.successPolicy.targetReplicatedJobs");
    if (!fq_value_len(t))
        return true;
    for (size_t i = 0; i < fq_value_len(t); i++)
        if (!strcmp(fq_value_as_str(fq_seq_at(t, i)) ?
                        fq_value_as_str(fq_seq_at(t, i)) :
                        "",
                    rname))
            return true;
    return false;
}

/* Suspends every unfinished child Job (job.c then ends their pods), or
 * deletes every child Job with its pods (`del`). Not
 * fq_pods_delete_owned: the JobSet also owns its Workload. */
static void stop_children(struct fq_engine *e, const struct fq_value *js,
                          bool del)
{
    struct fq_objstore *s = fq_engine_store(e);
    const char *ns = fq_value_path_str(js, FQ_META_NAMESPACE, "default");
    const char *name = fq_meta_name(js);
    const char *uid = fq_meta_uid(js);
    const struct fq_value *rjs = fq_value_path(js, FQ_JOBSET_REPLICATED_JOBS);
    for (size_t i = 0; i < fq_value_len(rjs); i++) {
        const struct fq_value *rj = fq_seq_at(rjs, i);
        for (int64_t j = 0; j < rjob_replicas(rj); j++) {
            char *jn =
                fq_xasprintf("%s-%s-%lld", name,
                             fq_value_path_str(rj, "name", ""), (long long)j);
            const struct fq_value *c = child(e, ns, jn, name, uid);
            if (c && del) {
                fq_pods_delete_owned(e, ns, "Job", jn);
                fq_objstore_delete(s, FQ_KIND_JOB, ns, jn, NULL);
            } else if (c && !job_done(c, "Complete") &&
                       !job_done(c, "Failed") &&
                       !fq_value_path_bool(c, FQ_SPEC_SUSPEND, false)) {
                struct fq_value *copy =
                    fq_objstore_edit(s, FQ_KIND_JOB, ns, jn);
                fq_value_set_path(copy, FQ_SPEC_SUSPEND, fq_value_bool(true));
                fq_objstore_update(s, copy, true, NULL, NULL, NULL);
            }
            free(jn);
        }
    }
}

/* --- reconcile ----------------------------------------------------------- */

static void finish(struct fq_engine *e, const struct fq_value *js,
                   struct fq_value *st, bool ok, int64_t now)
{
    if (ok)
        fq_pods_cond_set(st, "Completed", "True", "AllJobsCompleted",
                         "jobset completed successfully", now);
    else
        fq_pods_cond_set(st, "Failed", "True", "FailedJobs",
                         "jobset failed due to one or more job failures", now);
    fq_map_set(st, "terminalState", fq_value_str(ok ? "Completed" : "Failed"));
    fq_engine_event(e, js, ok ? "Normal" : "Warning",
                    ok ? "AllJobsCompleted" : "FailedJobs", "%s",
                    ok ? "jobset completed successfully" :
                         "jobset failed due to one or more job failures");
    stop_children(e, js, false);
}

/* Deletes every child Job for a restart; returns true when it did. */
static bool restart(struct fq_engine *e, const struct fq_value *js,
                    struct fq_value *st)
{
    int64_t max = fq_value_path_int(js, "spec.failurePolicy.maxRestarts", 0);
    int64_t done = fq_value_path_int(st, "restarts", 0);
    if (done >= max)
        return false;
    fq_map_set(st, "restarts", fq_value_int(done + 1));
    stop_children(e, js, true);
    return true;
}

static void reconcile(struct fq_engine *e, const char *ns, const char *name,
                      int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_JOBSET, ns, name);
    if (!o)
        return;
    struct fq_value *js = fq_value_clone(o->obj);
    struct fq_value *st = fq_value_clone(fq_map_get(js, "status"));
    if (!st)
        st = fq_value_map();
    if (fq_pods_cond_true(st, "Completed") || fq_pods_cond_true(st, "Failed"))
        goto out;
    const char *uid = fq_meta_uid(js);
    if (fq_value_path_bool(js, FQ_SPEC_SUSPEND, false)) {
        stop_children(e, js, true);
        fq_pods_cond_set(st, "Suspended", "True", "SuspendedJobs",
                         "jobset is suspended", now);
        fq_map_del(st, "replicatedJobsStatus");
        goto put;
    }
    if (fq_pods_cond(st, "Suspended"))
        fq_pods_cond_set(st, "Suspended", "False", "ResumeJobs",
                         "jobset is resumed", now);
    const struct fq_value *rjs = fq_value_path(js, FQ_JOBSET_REPLICATED_JOBS);
    struct fq_value *rst = fq_value_seq();
    bool any_failed = false, all_ok = true, any_ok = false;
    int64_t global = 0;
    for (size_t i = 0; i < fq_value_len(rjs); i++) {
        const struct fq_value *rj = fq_seq_at(rjs, i);
        const char *rname = fq_value_path_str(rj, "name", "");
        struct tally t = {0};
        for (int64_t j = 0; j < rjob_replicas(rj); j++, global++) {
            char *jn = fq_xasprintf("%s-%s-%lld", name, rname, (long long)j);
            const struct fq_value *c = child(e, ns, jn, name, uid);
            if (!c && !fq_objstore_get(s, FQ_KIND_JOB, ns, jn))
                create_child(e, js, rj, j, global, now);
            else if (c)
                count_child(c, rj, &t);
            free(jn);
        }
        any_failed = any_failed || t.failed > 0;
        if (targeted(js, rname)) {
            all_ok = all_ok && t.succeeded == rjob_replicas(rj);
            any_ok = any_ok || t.succeeded > 0;
        }
        struct fq_value *r = fq_value_map();
        fq_map_set(r, "name", fq_value_str(rname));
        fq_map_set(r, "ready", fq_value_int(t.ready));
        fq_map_set(r, "succeeded", fq_value_int(t.succeeded));
        fq_map_set(r, "failed", fq_value_int(t.failed));
        fq_map_set(r, "active", fq_value_int(t.active));
        fq_map_set(r, "suspended", fq_value_int(t.suspended));
        fq_seq_push(rst, r);
    }
    fq_map_set(st, "replicatedJobsStatus", rst);
    bool any_op = !strcmp(
        fq_value_path_str(js, "spec.successPolicy.operator", "All"), "Any");
    if (any_failed) {
        if (!restart(e, js, st))
            finish(e, js, st, false, now);
    } else if (any_op ? any_ok : all_ok) {
        finish(e, js, st, true, now);
    }
put:
    fq_pods_put_status(e, FQ_KIND_JOBSET, ns, name, st);
    st = NULL;
out:
    fq_value_free(st);
    fq_value_free(js);
}

/* --- controller ---------------------------------------------------------- */

static void *jsc_create(struct fq_engine *e)
{
    (void)e;
    return fq_owner_ctl_new(FQ_KIND_JOBSET, "JobSet", FQ_KIND_BIT(FQ_KIND_JOB),
                            reconcile);
}

const struct fq_controller_ops fq_jobset_controller = {
    .name = "jobset",
    .watch = FQ_KIND_BIT(FQ_KIND_JOBSET) | FQ_KIND_BIT(FQ_KIND_JOB),
    .create = jsc_create,
    .destroy = fq_owner_ctl_destroy,
    .on_change = fq_owner_ctl_on_change,
    .run = fq_owner_ctl_run,
    .next_wakeup = fq_owner_ctl_next_wakeup,
};
