/*
 * jobframework.c - Kueue's job integration for RayJob and batch Job: the
 * "jobframework" controller.
 *
 * For every RayJob or Job with the label kueue.x-k8s.io/queue-name it
 * keeps one Workload, named as Kueue names it (`rayjob-<name>-<5 hex>`,
 * `job-<name>-<5 hex>`, the hex from the job's uid), owned by the job:
 *
 *   job seen, no Workload    create the Workload (podsets below), suspend
 *                            the job (spec.suspend=true) until admitted
 *   Workload Admitted=True   merge into the job's pod templates the
 *   and job suspended        assigned flavors' nodeLabels (nodeSelector)
 *                            and tolerations and the checks'
 *                            podSetUpdates, then spec.suspend=false
 *   Workload evicted / no    spec.suspend=true, templates restored from
 *   longer admitted          the Workload's podsets (nodeSelector,
 *                            tolerations, labels, annotations)
 *   job ready                Workload PodsReady=True (Started)
 *   job Complete / Failed    Workload Finished=True (Succeeded / Failed)
 *   job gone                 its Workloads are deleted (owner GC)
 *
 * RayJob podsets (reference/dws_rayjob.md §3.4): `head` (count 1; plus
 * the autoscaler sidecar, 500m / 512Mi, with enableInTreeAutoscaling),
 * one per worker group named after it with count = replicas (1 when
 * unset) x numOfHosts, and `submitter` (count 1, 500m / 200Mi requests,
 * 1 / 1Gi limits) in K8sJobMode. A batch Job has one podset `main` with
 * count = parallelism and minCount from the annotation
 * kueue.x-k8s.io/job-min-parallelism (partial admission).
 *
 * Invariants
 *   1. A queued job is not unsuspended unless its Workload is Admitted.
 *   2. The Workload's podsets are written once, at creation; the job's
 *      templates are only changed by merge (admit) and restore (evict).
 *
 * Elastic jobs (kueue.x-k8s.io/elastic-job: "true") run under a chain of
 * Workload slices: jobframework_slices.c picks the one reconciled here.
 *
 * RayClusters (Kueue's RayCluster integration) get a Workload
 * `raycluster-<name>-<5 hex>` with the RayJob's podsets less the
 * submitter; a RayCluster never finishes, so it holds its quota until it
 * is deleted. A RayCluster made by a RayJob is the RayJob's. Plain Pods
 * and pod groups are in jobframework_pods.c.
 *
 * JobSets, PyTorchJobs, MPIJobs and TrainJobs go through the same machine with their
 * kind's row of ops (integrations.h): Workload `<kind>-<name>-<5 hex>`,
 * one podset per replicated job or replica type, the suspend flag where
 * the kind keeps it (spec.suspend, spec.runPolicy.suspend). Without a
 * queue-name label they are queued in the namespace's LocalQueue
 * "default" when it exists, as Kueue's LocalQueue defaulting does.
 *
 * Priority: the WorkloadPriorityClass of the label
 * kueue.x-k8s.io/priority-class, else the PriorityClass of the pod
 * templates' priorityClassName (or the globalDefault one), as Kueue does.
 *
 * What it does not do: run jobs (rayjob.c, job.c).
 */
#include "engine/controllers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/keyq.h"
#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/objects.h"
#include "flexq/paths.h"
#include "jobs/integrations.h"
#include "jobs/jobframework_pods.h"
#include "jobs/jobframework_slices.h"
#include "jobs/pods.h"
#include "jobs/workload.h"

#define ANN_MIN_PAR "kueue.x-k8s.io/job-min-parallelism"

/*
 * The controller reconciles only the jobs that may have something to do:
 * a job is dirty when it changed or when its Workload (found through the
 * Workload's ownerReferences) changed, since reconcile_job() reads nothing
 * else that can change its outcome later. Orphan collection looks at the
 * Workloads that changed, and at every Workload only after a job was
 * deleted. `full` (the first run) reconciles everything, as a restart
 * must.
 */
struct jf {
    bool full;         /* reconcile every job and workload */
    bool orphans_full; /* a job was deleted: check every workload */
    /* The dirty keys ("ns/name") of each kind: the jobs' kinds and Pods
     * to reconcile, Workloads for orphan checks. */
    struct fq_keyq dirty[FQ_KIND__COUNT];
};

static void mark(struct jf *j, enum fq_kind kind, const char *ns,
                 const char *name)
{
    fq_keyq_add2(&j->dirty[kind], ns, name);
}

/* RayJobs, Jobs, RayClusters, Pods, the integrations' kinds, then
 * Workloads (run() needs them last). */
static int kind_rank(enum fq_kind k)
{
    return k == FQ_KIND_RAYJOB     ? 0 :
           k == FQ_KIND_JOB        ? 1 :
           k == FQ_KIND_RAYCLUSTER ? 2 :
           k == FQ_KIND_POD        ? 3 :
           k == FQ_KIND_WORKLOAD   ? 5 :
           fq_integration_of(k)    ? 4 :
                                     6;
}

/* Where the job's suspend flag lives. */
static const char *suspend_path(enum fq_kind kind)
{
    const struct fq_integration *in = fq_integration_of(kind);
    return in ? in->suspend_path : "spec.suspend";
}

static bool commit(struct fq_engine *e, struct fq_value *obj)
{
    bool changed = false;
    if (fq_objstore_update(fq_engine_store(e), obj, true, &changed, NULL,
                           NULL) != 0)
        return false;
    return changed;
}

static struct fq_value *podset(const char *name, int64_t count,
                               const struct fq_value *tmpl)
{
    struct fq_value *ps = fq_value_map();
    fq_map_set(ps, "name", fq_value_str(name));
    fq_map_set(ps, "count", fq_value_int(count));
    fq_map_set(ps, "template", tmpl ? fq_value_clone(tmpl) : fq_value_map());
    return ps;
}

static struct fq_value *container(const char *name, const char *image,
                                  const char *cpu, const char *mem,
                                  const char *lcpu, const char *lmem)
{
    struct fq_value *c = fq_value_map();
    fq_map_set(c, "name", fq_value_str(name));
    fq_map_set(c, "image", fq_value_str(image));
    struct fq_value *res = fq_value_map();
    struct fq_value *req = fq_value_map();
    fq_map_set(req, "cpu", fq_value_str(cpu));
    fq_map_set(req, "memory", fq_value_str(mem));
    fq_map_set(res, "requests", req);
    if (lcpu) {
        struct fq_value *lim = fq_value_map();
        fq_map_set(lim, "cpu", fq_value_str(lcpu));
        fq_map_set(lim, "memory", fq_value_str(lmem));
        fq_map_set(res, "limits", lim);
    }
    fq_map_set(c, "resources", res);
    return c;
}

/* The RayCluster spec of a RayJob (spec.rayClusterSpec) or RayCluster. */
static const struct fq_value *cluster_spec(const struct fq_value *job)
{
    if (!strcmp(fq_value_path_str(job, "kind", ""), "RayCluster"))
        return fq_value_path(job, "spec");
    return fq_value_path(job, FQ_RJ_CLUSTER_SPEC);
}

/* The podsets of a RayJob or RayCluster, as Kueue's RayJob and RayCluster
 * integrations compute them (a RayCluster has no submitter). */
static struct fq_value *rayjob_podsets(const struct fq_value *rj)
{
    struct fq_value *pss = fq_value_seq();
    const struct fq_value *cs = cluster_spec(rj);
    const struct fq_value *head = fq_value_path(cs, FQ_RC_HEAD_TEMPLATE);
    struct fq_value *ht = fq_value_clone(head ? head : fq_value_path(rj, "x"));
    if (!ht)
        ht = fq_value_map();
    const char *image =
        fq_value_path_str(fq_seq_at(fq_value_path(ht, FQ_POD_CONTAINERS), 0),
                          "image", "rayproject/ray");
    if (fq_value_path_bool(cs, "enableInTreeAutoscaling", false)) {
        struct fq_value *spec = fq_map_ensure_map(ht, "spec");
        struct fq_value *cl = fq_map_get(spec, "containers");
        if (!cl || cl->type != FQ_V_SEQ) {
            cl = fq_value_seq();
            fq_map_set(spec, "containers", cl);
        }
        fq_seq_push(cl, container("autoscaler", image, "500m", "512Mi", "500m",
                                  "512Mi"));
    }
    struct fq_value *hp = podset("head", 1, NULL);
    fq_map_set(hp, "template", ht);
    fq_seq_push(pss, hp);
    const struct fq_value *wgs = fq_value_path(cs, "workerGroupSpecs");
    for (size_t i = 0; i < fq_value_len(wgs); i++) {
        const struct fq_value *g = fq_seq_at(wgs, i);
        int64_t replicas = fq_value_path_int(g, "replicas", 1);
        int64_t hosts = fq_value_path_int(g, "numOfHosts", 1);
        if (hosts < 1)
            hosts = 1;
        fq_seq_push(pss, podset(fq_value_path_str(g, "groupName", "workers"),
                                replicas * hosts, fq_map_get(g, "template")));
    }
    const char *mode =
        fq_value_path_str(rj, "spec.submissionMode", "K8sJobMode");
    if (!strcmp(mode, "K8sJobMode") &&
        strcmp(fq_value_path_str(rj, "kind", ""), "RayCluster")) {
        const struct fq_value *st = fq_value_path(rj, FQ_RJ_SUBMITTER_TEMPLATE);
        struct fq_value *t;
        if (st) {
            t = fq_value_clone(st);
        } else {
            t = fq_value_map();
            struct fq_value *spec = fq_map_ensure_map(t, "spec");
            struct fq_value *cl = fq_value_seq();
            fq_seq_push(cl, container("ray-job-submitter", image, "500m",
                                      "200Mi", "1", "1Gi"));
            fq_map_set(spec, "containers", cl);
            fq_map_set(spec, "restartPolicy", fq_value_str("Never"));
        }
        struct fq_value *sp = podset("submitter", 1, NULL);
        fq_map_set(sp, "template", t);
        fq_seq_push(pss, sp);
    }
    return pss;
}

static struct fq_value *job_podsets(const struct fq_value *job)
{
    struct fq_value *pss = fq_value_seq();
    int64_t par = fq_value_path_int(job, FQ_JOB_PARALLELISM, 1);
    int64_t comp = fq_value_path_int(job, FQ_JOB_COMPLETIONS, par);
    if (comp < par && comp > 0)
        par = comp;
    struct fq_value *ps =
        podset("main", par, fq_value_path(job, FQ_SPEC_TEMPLATE));
    const struct fq_value *ann = fq_meta_annotations(job);
    const char *minp = fq_value_as_str(fq_map_get(ann, ANN_MIN_PAR));
    if (minp) {
        long m = strtol(minp, NULL, 10);
        if (m > 0 && m < par)
            fq_map_set(ps, "minCount", fq_value_int(m));
    }
    fq_seq_push(pss, ps);
    return pss;
}

/* The pod template of a job's podset, for editing (borrowed from job). */
static struct fq_value *template_of(struct fq_value *job, enum fq_kind kind,
                                    const char *ps)
{
    const struct fq_integration *in = fq_integration_of(kind);
    if (in)
        return in->template_of(job, ps);
    if (kind == FQ_KIND_JOB)
        return fq_value_path(job, FQ_SPEC_TEMPLATE);
    struct fq_value *cs = kind == FQ_KIND_RAYCLUSTER ?
                              fq_value_path(job, "spec") :
                              fq_value_path(job, FQ_RJ_CLUSTER_SPEC);
    if (!strcmp(ps, "head"))
        return fq_value_path(cs, FQ_RC_HEAD_TEMPLATE);
    struct fq_value *wgs = fq_map_get(cs, "workerGroupSpecs");
    for (size_t i = 0; i < fq_value_len(wgs); i++) {
        struct fq_value *g = fq_seq_at(wgs, i);
        if (!strcmp(fq_value_path_str(g, "groupName", ""), ps))
            return fq_map_get(g, "template");
    }
    return NULL; /* the submitter: KubeRay builds it */
}

/* Admission: flavors and check updates into the job's templates. */
static void merge_admission(struct fq_engine *e, struct fq_value *job,
                            enum fq_kind kind, const struct fq_value *wl)
{
    const struct fq_value *psa = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
    for (size_t i = 0; i < fq_value_len(psa); i++) {
        const struct fq_value *a = fq_seq_at(psa, i);
        struct fq_value *t =
            template_of(job, kind, fq_value_path_str(a, "name", "main"));
        if (!t)
            continue;
        /* Partial admission: the Job runs with the admitted count. */
        if (kind == FQ_KIND_JOB && fq_map_get(a, "count"))
            fq_value_set_path(job, FQ_JOB_PARALLELISM,
                              fq_value_int(fq_value_path_int(a, "count", 1)));
        fq_jobframework_merge_podset(e, t, wl, a);
    }
}

static void restore_field(struct fq_value *dst, const struct fq_value *src,
                          const char *key)
{
    const struct fq_value *v = fq_map_get(src, key);
    if (v)
        fq_map_set(dst, key, fq_value_clone(v));
    else
        fq_map_del(dst, key);
}

/* Eviction: the templates as they were before admission. */
static void restore_templates(struct fq_value *job, enum fq_kind kind,
                              const struct fq_value *wl)
{
    const struct fq_value *pss = fq_value_path(wl, FQ_WL_PODSETS);
    for (size_t i = 0; i < fq_value_len(pss); i++) {
        const struct fq_value *ps = fq_seq_at(pss, i);
        struct fq_value *t =
            template_of(job, kind, fq_value_path_str(ps, "name", "main"));
        const struct fq_value *orig = fq_map_get(ps, "template");
        if (!t || !orig)
            continue;
        struct fq_value *spec = fq_map_ensure_map(t, "spec");
        const struct fq_value *ospec = fq_map_get(orig, "spec");
        if (kind == FQ_KIND_JOB && fq_map_get(ps, "count"))
            fq_value_set_path(job, FQ_JOB_PARALLELISM,
                              fq_value_int(fq_value_path_int(ps, "count", 1)));
        restore_field(spec, ospec, "nodeSelector");
        restore_field(spec, ospec, "tolerations");
        restore_field(spec, ospec, "schedulingGates");
        struct fq_value *md = fq_map_ensure_map(t, "metadata");
        const struct fq_value *omd = fq_map_get(orig, "metadata");
        restore_field(md, omd, "labels");
        restore_field(md, omd, "annotations");
    }
}

/* Job status -> Workload PodsReady / Finished. */
static void map_status(struct fq_engine *e, const struct fq_value *job,
                       enum fq_kind kind, const char *ns, const char *wname,
                       int64_t now)
{
    const struct fq_object *wo =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, ns, wname);
    if (!wo || fq_cond_true(wo->obj, "Finished"))
        return;
    bool finished = false, ok = false, ready = false;
    const char *fmsg = "";
    const struct fq_integration *in = fq_integration_of(kind);
    if (in) {
        struct fq_jobstate st;
        in->status(job, &st);
        finished = st.finished;
        ok = st.ok;
        ready = st.ready;
        fmsg = st.msg;
    } else if (kind == FQ_KIND_RAYJOB) {
        const char *ds = fq_value_path_str(job, FQ_RJ_DEPLOYMENT_STATUS, "");
        if (!strcmp(ds, "Complete") || !strcmp(ds, "Failed")) {
            finished = true;
            ok = !strcmp(fq_value_path_str(job, FQ_RJ_JOB_STATUS, ""),
                         "SUCCEEDED");
            fmsg = fq_value_path_str(job, FQ_STATUS_MESSAGE, "");
        }
        ready =
            !strcmp(fq_value_path_str(job, "status.rayClusterStatus.state", ""),
                    "ready");
    } else if (kind == FQ_KIND_RAYCLUSTER) {
        /* Kueue: a RayCluster never finishes; it holds its quota until it
         * is deleted or evicted. */
        ready = !strcmp(fq_value_path_str(job, "status.state", ""), "ready");
    } else {
        if (fq_cond_true(job, "Complete")) {
            finished = ok = true;
        } else if (fq_cond_true(job, "Failed")) {
            finished = true;
            fmsg =
                fq_value_path_str(fq_cond_find(job, "Failed"), "message", "");
        }
        int64_t par = fq_value_path_int(job, FQ_JOB_PARALLELISM, 1);
        int64_t rd = fq_value_path_int(job, "status.ready", 0);
        ready = rd >= par || fq_value_path_int(job, FQ_JOB_SUCCEEDED, 0) > 0;
    }
    /* Only status.conditions can change: edit a copy of them alone and
     * write that member back (no copy of the whole workload). */
    struct fq_value *w = fq_value_map();
    const struct fq_value *oc = fq_value_path(wo->obj, FQ_STATUS_CONDITIONS);
    if (oc)
        fq_map_set(fq_map_ensure_map(w, "status"), "conditions",
                   fq_value_clone(oc));
    if (finished) {
        fq_cond_set(w, "Finished", "True", ok ? "Succeeded" : "Failed",
                    ok ? "Job finished successfully" :
                         (*fmsg ? fmsg : "Job failed"),
                    now);
    } else if (fq_cond_true(w, "Admitted") && !fq_cond_true(w, "Evicted") &&
               !fq_engine_config(e)->no_pods) {
        /* (Without pods the capacity controller places the podsets and
         * owns PodsReady: the job's own readiness is never reported.) */
        if (ready)
            fq_cond_set(
                w, "PodsReady", "True", "Started",
                "All pods reached readiness and the workload is running", now);
        else if (fq_cond_true(w, "PodsReady"))
            fq_cond_set(w, "PodsReady", "False", "WaitForRecovery",
                        "At least one pod has failed, waiting for recovery",
                        now);
    }
    const struct fq_value *nc = fq_value_path(w, FQ_STATUS_CONDITIONS);
    if (nc)
        fq_objstore_set_status_key(fq_engine_store(e), FQ_KIND_WORKLOAD, ns,
                                   wname, "conditions", fq_value_clone(nc),
                                   NULL, NULL);
    fq_value_free(w);
}

static void reconcile_job(struct fq_engine *e, enum fq_kind kind,
                          const struct fq_object *jo, int64_t now)
{
    const struct fq_integration *in = fq_integration_of(kind);
    if (in && fq_integration_default_queue(e, kind, jo->ns, jo->name)) {
        jo = fq_objstore_get(fq_engine_store(e), kind, jo->ns, jo->name);
        if (!jo)
            return;
    }
    const struct fq_value *job = jo->obj;
    const struct fq_value *labels = fq_meta_labels(job);
    if (!fq_value_as_str(fq_map_get(labels, FQ_LABEL_QUEUE_NAME)))
        return;
    /* A Job or RayCluster created by a RayJob (or a Job of a JobSet or
     * MPIJob) belongs to its parent's workload. */
    const struct fq_value *ors = fq_meta_owners(job);
    for (size_t i = 0; i < fq_value_len(ors); i++) {
        const char *ok = fq_value_path_str(fq_seq_at(ors, i), "kind", "");
        if (!strcmp(ok, "RayJob") || fq_integration_named(ok))
            return;
    }
    char wname[300];
    fq_jobframework_workload_name(in                         ? in->prefix :
                                  kind == FQ_KIND_RAYJOB     ? "rayjob" :
                                  kind == FQ_KIND_RAYCLUSTER ? "raycluster" :
                                                               "job",
                                  jo->name, fq_meta_uid(job), wname,
                                  sizeof(wname));
    char *ns = fq_xstrdup(jo->ns), *name = fq_xstrdup(jo->name);
    const struct fq_object *wo =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, ns, wname);
    if (!wo) {
        fq_jobframework_create_workload(e, job,
                                        in ? in->podsets(job) :
                                        kind == FQ_KIND_JOB ?
                                             job_podsets(job) :
                                             rayjob_podsets(job),
                                        wname, now);
        wo = fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, ns, wname);
    }
    jo = fq_objstore_get(fq_engine_store(e), kind, ns, name);
    if (!wo || !jo)
        goto out;
    /* An elastic job runs under one of its slices (jobframework_slices.c). */
    bool keep = false;
    if ((kind == FQ_KIND_RAYJOB || kind == FQ_KIND_JOB) &&
        fq_jobslices_elastic(jo->obj)) {
        struct fq_value *want = kind == FQ_KIND_RAYJOB ?
                                    rayjob_podsets(jo->obj) :
                                    job_podsets(jo->obj);
        fq_jobslices_reconcile(e, jo->obj, want, wname, sizeof(wname), &keep,
                               now);
        fq_value_free(want);
        wo = fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, ns, wname);
        jo = fq_objstore_get(fq_engine_store(e), kind, ns, name);
        if (!wo || !jo)
            goto out;
    }
    bool suspended = fq_value_path_bool(jo->obj, suspend_path(kind), false);
    bool admitted =
        fq_cond_true(wo->obj, "Admitted") && !fq_cond_true(wo->obj, "Evicted");
    bool finished = fq_cond_true(wo->obj, "Finished");
    if (!finished && !admitted && !suspended && !keep) {
        struct fq_value *j =
            fq_objstore_edit(fq_engine_store(e), kind, ns, name);
        bool was_running =
            fq_value_path(wo->obj, FQ_WL_STATUS_ADMISSION) != NULL ||
            fq_cond_true(wo->obj, "Evicted");
        fq_value_set_path(j, suspend_path(kind), fq_value_bool(true));
        restore_templates(j, kind, wo->obj);
        if (commit(e, j) && was_running) {
            const struct fq_object *now_j =
                fq_objstore_get(fq_engine_store(e), kind, ns, name);
            const char *why = fq_value_path_str(
                fq_cond_find(wo->obj, "Evicted"), "message", "Not admitted");
            if (now_j)
                fq_engine_event(e, now_j->obj, "Normal", "Stopped", "%s", why);
        }
    } else if (admitted && suspended && !finished) {
        struct fq_value *j =
            fq_objstore_edit(fq_engine_store(e), kind, ns, name);
        merge_admission(e, j, kind, wo->obj);
        fq_value_set_path(j, suspend_path(kind), fq_value_bool(false));
        if (commit(e, j)) {
            const struct fq_object *now_j =
                fq_objstore_get(fq_engine_store(e), kind, ns, name);
            if (now_j)
                fq_engine_event(
                    e, now_j->obj, "Normal", "Started",
                    "Admitted by clusterQueue %s",
                    fq_value_path_str(wo->obj, FQ_WL_ADMITTED_CQ, ""));
        }
    }
    jo = fq_objstore_get(fq_engine_store(e), kind, ns, name);
    if (jo)
        map_status(e, jo->obj, kind, ns, wname, now);
    /* Elastic RayJobs: the admitted replicas' pods may start. */
    jo = fq_objstore_get(fq_engine_store(e), kind, ns, name);
    wo = fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, ns, wname);
    if (jo && wo && kind == FQ_KIND_RAYJOB && fq_jobslices_elastic(jo->obj))
        fq_jobslices_ungate(e, jo->obj, wo->obj);
out:
    free(ns);
    free(name);
}

/* Whether a Workload's owning job is gone (or replaced: another uid). */
static bool orphaned(struct fq_engine *e, const struct fq_object *w)
{
    const struct fq_value * or = fq_seq_at(fq_meta_owners(w->obj), 0);
    if (! or)
        return false;
    const char *k = fq_value_path_str(or, "kind", "");
    const struct fq_integration *in = fq_integration_named(k);
    enum fq_kind kind = in                       ? in->kind :
                        !strcmp(k, "RayJob")     ? FQ_KIND_RAYJOB :
                        !strcmp(k, "Job")        ? FQ_KIND_JOB :
                        !strcmp(k, "RayCluster") ? FQ_KIND_RAYCLUSTER :
                                                   FQ_KIND_NONE;
    if (!strcmp(k, "Pod"))
        return fq_jfpods_orphaned(e, w);
    if (kind == FQ_KIND_NONE)
        return false;
    const struct fq_object *owner = fq_objstore_get(
        fq_engine_store(e), kind, w->ns, fq_value_path_str(or, "name", ""));
    return !owner ||
           strcmp(fq_meta_uid(owner->obj), fq_value_path_str(or, "uid", ""));
}

/* Workloads whose owning job is gone are deleted, as the GC would: all of
 * them (`all`), or those of `ws` (sorted, kind WORKLOAD). */
static void collect_orphans(struct fq_engine *e, bool all,
                            const char *const *ws, size_t nws)
{
    const struct fq_object **objs = NULL;
    size_t n = nws;
    if (all)
        n = fq_objstore_list(fq_engine_store(e), FQ_KIND_WORKLOAD, NULL, &objs);
    char **ns = fq_xcalloc(n + 1, sizeof(char *));
    char **names = fq_xcalloc(n + 1, sizeof(char *));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *w = all ? objs[i] : NULL;
        if (!all) {
            char *key = fq_xstrdup(ws[i]);
            const char *wns, *wname;
            fq_pods_key_split(key, &wns, &wname);
            w = fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, wns,
                                wname);
            free(key);
        }
        if (!w || !orphaned(e, w))
            continue;
        ns[m] = fq_xstrdup(w->ns);
        names[m++] = fq_xstrdup(w->name);
    }
    free(objs);
    for (size_t i = 0; i < m; i++) {
        fq_objstore_delete(fq_engine_store(e), FQ_KIND_WORKLOAD, ns[i],
                           names[i], NULL);
        free(ns[i]);
        free(names[i]);
    }
    free(ns);
    free(names);
}

static void *create(struct fq_engine *e)
{
    (void)e;
    struct jf *j = fq_xcalloc(1, sizeof(struct jf));
    for (int k = 0; k < FQ_KIND__COUNT; k++)
        fq_keyq_init(&j->dirty[k]);
    j->full = true;
    return j;
}

static void destroy(void *self)
{
    struct jf *j = self;
    for (int k = 0; k < FQ_KIND__COUNT; k++)
        fq_keyq_release(&j->dirty[k]);
    free(j);
}

static void on_change(void *self, struct fq_engine *e,
                      const struct fq_change *c)
{
    struct jf *j = self;
    if (c->kind == FQ_KIND_POD) {
        /* A gated pod of an elastic RayJob concerns us (its job lifts the
         * gate once the slice is admitted), and a plain Pod with a
         * queue-name label (Kueue's pod integration). */
        const char *rj = c->type != FQ_CHANGE_DELETED ?
                             fq_jobslices_gated_job(c->obj) :
                             NULL;
        if (rj) {
            mark(j, FQ_KIND_RAYJOB, c->ns, rj);
            fq_engine_kick(e, self);
        }
        if (fq_jfpods_managed(c->obj)) {
            mark(j, FQ_KIND_POD, c->ns, c->name);
            if (c->type == FQ_CHANGE_DELETED)
                j->orphans_full = true;
            fq_engine_kick(e, self);
        }
        return;
    }
    if (c->kind == FQ_KIND_LOCALQUEUE) {
        /* A new LocalQueue "default" queues the namespace's unlabelled
         * JobSets, PyTorchJobs, MPIJobs and TrainJobs. */
        if (c->type == FQ_CHANGE_DELETED || strcmp(c->name, "default"))
            return;
        for (size_t i = 0; fq_integrations[i]; i++) {
            const struct fq_object **objs;
            size_t n = fq_objstore_list(fq_engine_store(e),
                                        fq_integrations[i]->kind, c->ns, &objs);
            for (size_t k = 0; k < n; k++)
                mark(j, objs[k]->kind, objs[k]->ns, objs[k]->name);
            free(objs);
        }
        fq_engine_kick(e, self);
        return;
    }
    if (c->kind == FQ_KIND_WORKLOAD) {
        /* Its owner job may have something to do, and it may be an
         * orphan. A workload no job of ours owns (a plain Workload, as
         * the simulator submits) can be neither (orphaned() is false for
         * it): no mark, no run. Should an owner be added later, that is a
         * change of its own, looked at then. */
        const struct fq_value * or = fq_seq_at(fq_meta_owners(c->obj), 0);
        if (! or)
            return; /* the test below, without its nine string compares */
        const char *k = fq_value_path_str(or, "kind", "");
        const struct fq_integration *in = fq_integration_named(k);
        if (in)
            mark(j, in->kind, c->ns, fq_value_path_str(or, "name", ""));
        else if (!strcmp(k, "RayJob") || !strcmp(k, "Job") ||
                 !strcmp(k, "RayCluster") || !strcmp(k, "Pod"))
            mark(j,
                 !strcmp(k, "RayJob")     ? FQ_KIND_RAYJOB :
                 !strcmp(k, "Job")        ? FQ_KIND_JOB :
                 !strcmp(k, "RayCluster") ? FQ_KIND_RAYCLUSTER :
                                            FQ_KIND_POD,
                 c->ns, fq_value_path_str(or, "name", ""));
        else
            return;
        if (c->type != FQ_CHANGE_DELETED)
            mark(j, FQ_KIND_WORKLOAD, c->ns, c->name);
    } else {
        mark(j, c->kind, c->ns, c->name);
        if (c->type == FQ_CHANGE_DELETED)
            j->orphans_full = true;
    }
    fq_engine_kick(e, self);
}

/* Every job of a kind, as dirty entries. */
static void mark_all(struct jf *j, struct fq_engine *e, enum fq_kind kind)
{
    const struct fq_object **objs;
    size_t n = fq_objstore_list(fq_engine_store(e), kind, NULL, &objs);
    for (size_t i = 0; i < n; i++)
        mark(j, kind, objs[i]->ns, objs[i]->name);
    free(objs);
}

static void run(void *self, struct fq_engine *e, int64_t now)
{
    struct jf *j = self;
    bool all_orphans = j->full || j->orphans_full;
    if (j->full) {
        mark_all(j, e, FQ_KIND_RAYJOB);
        mark_all(j, e, FQ_KIND_JOB);
        mark_all(j, e, FQ_KIND_RAYCLUSTER);
        mark_all(j, e, FQ_KIND_POD);
        for (size_t i = 0; fq_integrations[i]; i++)
            mark_all(j, e, fq_integrations[i]->kind);
        j->full = false;
    }
    j->orphans_full = false;
    /* RayJobs, Jobs, RayClusters, Pods, the integrations' kinds, then
     * Workloads, each by namespace and name: the order of a full pass, so
     * uids are drawn in the same order. The writes below queue notices
     * for the next run, not marks in this one. */
    for (int rank = 0; rank < 5; rank++) {
        for (int k = 1; k < FQ_KIND__COUNT; k++) {
            if (kind_rank((enum fq_kind)k) != rank)
                continue;
            const char *const *keys;
            size_t n = fq_keyq_take(&j->dirty[k], &keys);
            for (size_t i = 0; i < n; i++) {
                char *key = fq_xstrdup(keys[i]);
                const char *ns, *name;
                fq_pods_key_split(key, &ns, &name);
                const struct fq_object *o = fq_objstore_get(
                    fq_engine_store(e), (enum fq_kind)k, ns, name);
                if (o && k == FQ_KIND_POD)
                    fq_jfpods_reconcile(e, o, now);
                else if (o)
                    reconcile_job(e, (enum fq_kind)k, o, now);
                free(key);
            }
            fq_keyq_clear(&j->dirty[k]);
        }
    }
    const char *const *ws;
    size_t nws = fq_keyq_take(&j->dirty[FQ_KIND_WORKLOAD], &ws);
    collect_orphans(e, all_orphans, ws, nws);
    for (int k = 1; k < FQ_KIND__COUNT; k++)
        fq_keyq_clear(&j->dirty[k]); /* and any kind not ranked */
}

const struct fq_controller_ops fq_jobframework_controller = {
    .name = "jobframework",
    .watch = FQ_KIND_BIT(FQ_KIND_RAYJOB) | FQ_KIND_BIT(FQ_KIND_JOB) |
             FQ_KIND_BIT(FQ_KIND_RAYCLUSTER) | FQ_KIND_BIT(FQ_KIND_WORKLOAD) |
             FQ_KIND_BIT(FQ_KIND_POD) | FQ_KIND_BIT(FQ_KIND_JOBSET) |
             FQ_KIND_BIT(FQ_KIND_PYTORCHJOB) | FQ_KIND_BIT(FQ_KIND_MPIJOB) |
             FQ_KIND_BIT(FQ_KIND_TRAINJOB) | FQ_KIND_BIT(FQ_KIND_LOCALQUEUE),
    .create = create,
    .destroy = destroy,
    .on_change = on_change,
    .run = run,
    .next_wakeup = NULL,
};
