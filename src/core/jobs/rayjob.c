/*
 * rayjob.c - KubeRay's RayJob controller, K8sJobMode.
 *
 * A RayJob `r` that is not suspended gets a RayCluster `<r>-<5 chars>`
 * (raycluster.c makes its head and worker pods) and, once that cluster is
 * ready, a submitter batch Job named `r` (job.c makes its pod) whose
 * container `ray-job-submitter` runs the entrypoint as the Ray job
 * `<r>-<5 chars>`. status.jobDeploymentStatus follows KubeRay's machine;
 * one function performs each transition:
 *
 *          suspend                         suspend=false
 *   New ------------> Suspended <----------------------------.
 *    |                   ^     '--------- to_new ------------'--> New
 *    | to_initializing   | to_suspended (cluster, submitter deleted,
 *    v                   |               status reset)
 *   Initializing ----> Suspending <---- (suspend=true) ----.
 *    | cluster ready                                       |
 *    | + submitter Job created (to_running)                |
 *    |   (not by startTime+preRunningDeadlineSeconds:      |
 *    |    Failed, reason PreRunningDeadlineExceeded)       |
 *    v                                                     |
 *   Running -----------------------------------------------'
 *    |   submitter Job Complete      -> Complete  (jobStatus SUCCEEDED)
 *    |   Ray job stopped (fq_rayjob_
 *    |   stop: `ray job stop`)       -> Complete  (jobStatus STOPPED)
 *    |   submitter Job Failed after
 *    |   its driver ran, or a head /
 *    |   worker pod Failed           -> Failed    (jobStatus FAILED,
 *    |                                             reason AppFailed)
 *    |   submitter Job Failed before
 *    |   its driver ran              -> Failed    (reason SubmissionFailed)
 *    |   startTime+activeDeadline    -> Failed    (reason DeadlineExceeded)
 *    '-- Failed while status.failed <= backoffLimit (not on a deadline)
 *                                    -> Retrying -> New (a new cluster)
 *
 * jobStatus is what Ray's dashboard would answer for the job: "" until the
 * submitter exists, PENDING until its pod runs, RUNNING, then SUCCEEDED,
 * FAILED or STOPPED. STOPPED comes from a stop request for a running Ray
 * job (the Ray Jobs API's POST /api/jobs/ID/stop, which `ray job stop`
 * sends): the driver (the submitter's pod) is stopped and, as KubeRay
 * does once the Ray job is terminal and the submitter has finished, the
 * deployment becomes Complete, with no reason; Kueue counts it finished
 * but not succeeded. A suspended RayJob's jobStatus is reset to "", not
 * STOPPED: KubeRay does not stop the Ray job when it suspends, it deletes
 * the cluster and the submitter. Deleting a running RayJob stops its Ray
 * job too (KubeRay's finalizer calls StopJob): its dependents go through
 * the garbage collector, and the runner stops their processes.
 * Terminal deployment states are Complete and Failed.
 * With shutdownAfterJobFinishes the RayCluster (not the submitter Job, so
 * the driver log stays readable) is deleted ttlSecondsAfterFinished after
 * endTime. Kueue's job integration owns spec.suspend; when it suspends a
 * running RayJob the cluster and submitter go and the status is reset, as
 * in KubeRay, so that the next admission starts afresh.
 *
 * Invariants:
 *  1. A RayJob with spec.suspend=true has no RayCluster and no submitter
 *     Job once reconciled (deployment status Suspended).
 *  2. Complete and Failed are final (until the RayJob is re-created).
 *  3. The submitter Job exists only after the cluster was ready once.
 *
 * The submitter and the log (the contract with the runtime engineer, who
 * owns the runner, the logs endpoint and the Python helper):
 *  - The submitter pod runs `python3 -m flexq.submit` (unless the user's
 *    submitterPodTemplate gives a command) with env
 *      PYTHONUNBUFFERED=1, RAY_DASHBOARD_ADDRESS=<c>-head-svc.<ns>.svc.
 *      cluster.local:8265, RAY_JOB_SUBMISSION_ID=<jobId>,
 *      FLEXQ_RAYJOB=<r>, FLEXQ_RAY_CLUSTER=<c>, FLEXQ_RAY_ROLE=driver,
 *      FLEXQ_ENTRYPOINT=<spec.entrypoint, as written>,
 *      FLEXQ_HEAD_POD=<head pod>, FLEXQ_WORKER_PODS=<worker pod names,
 *      comma-separated, in RANK order>,
 *    and the head's volumes and volume mounts (the driver reads the same
 *    /app/train.py the head would). It runs the entrypoint as the Ray
 *    driver (FLEXQ_RAY_ROLE=driver), reads the worker pods' logs (the
 *    runner tells every pod where pod logs live), and writes the log that
 *    `flexq logs job/<r>` shows: the `ray job submit` lines, the driver's
 *    lines, worker lines prefixed `(RayTrainWorker pid=N, ip=HOST)` with
 *    `[repeated Nx across cluster]` folding, then the
 *    `Job '<jobId>' succeeded` banner (or `failed` with the status
 *    message). It exits 0 if the Ray job succeeded, non-zero otherwise.
 *  - Worker containers without a command run the entrypoint (split into
 *    argv like a shell would, quotes honoured) with FLEXQ_RAY_ROLE=worker
 *    and the rendezvous env (raycluster.c): SPMD, the same script on every
 *    worker; the helper's trainer knows its rank from the env. The head
 *    has no command: the runner runs `python3 -m flexq.node`, an idle Ray
 *    node.
 *  - The submitter Job's backoffLimit is submitterConfig.backoffLimit,
 *    default 0 (KubeRay: 2, to ride out a head that is not serving yet; a
 *    flexq driver does not race a dashboard, and a retried driver would
 *    re-run the training).
 *
 * preRunningDeadlineSeconds bounds Initializing (from startTime until the
 * submitter exists); like activeDeadlineSeconds its failure is not
 * retried under backoffLimit.
 *
 * What it does not do: HTTPMode / InteractiveMode / SidecarMode,
 * clusterSelector, deletionStrategy, schedule (cron), the 300 s
 * grace periods (the submitter's exit is the job's end here), anything in
 * `no_pods` mode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"
#include "jobs/pods.h"

struct rjctl {
    struct fq_keyq q;
    struct fq_pods_owners *own; /* RayCluster / Job -> their pods */
};

/* The pods in `ns` that kind/name controls, from the controller's index:
 * an owned array of borrowed objects, like fq_objstore_list. */
static size_t owned_pods(struct fq_engine *e, const char *kind, const char *ns,
                         const char *name, const struct fq_object ***out)
{
    const struct rjctl *ctl = fq_engine_controller(e, "rayjob");
    size_t n = 0;
    const char *const *names =
        ctl ? fq_pods_owners_get(ctl->own, kind, ns, name, &n) : NULL;
    const struct fq_object **v = fq_xcalloc(n + 1, sizeof(*v));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *o =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_POD, ns, names[i]);
        if (o)
            v[m++] = o;
    }
    *out = v;
    return m;
}

/* --- helpers ---------------------------------------------------------- */

/* Splits a command line into argv the way a POSIX shell would for plain
 * words and quotes (no expansion). Returns an owned sequence. */
static struct fq_value *split_argv(const char *s)
{
    struct fq_value *argv = fq_value_seq();
    struct fq_buf w = FQ_BUF_INIT;
    bool in_word = false;
    char quote = 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        if (quote) {
            if (c == quote) {
                quote = 0;
            } else if (c == '\\' && quote == '"' && p[1]) {
                fq_buf_putc(&w, *++p);
            } else {
                fq_buf_putc(&w, c);
            }
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) {
                fq_seq_push(argv, fq_value_str(fq_buf_str(&w)));
                fq_buf_reset(&w);
                in_word = false;
            }
            continue;
        }
        in_word = true;
        if (c == '\'' || c == '"')
            quote = c;
        else if (c == '\\' && p[1])
            fq_buf_putc(&w, *++p);
        else
            fq_buf_putc(&w, c);
    }
    if (in_word)
        fq_seq_push(argv, fq_value_str(fq_buf_str(&w)));
    fq_buf_release(&w);
    return argv;
}

static const char *ds_of(const struct fq_value *st)
{
    const char *ds = fq_value_path_str(st, "jobDeploymentStatus", "");
    return *ds ? ds : "New";
}

static void set_ds(struct fq_value *st, const char *ds)
{
    fq_map_set(st, "jobDeploymentStatus", fq_value_str(ds));
}

/* Deletes the RayJob's cluster and submitter Job, with their pods. */
static void delete_children(struct fq_engine *e, const char *ns,
                            const struct fq_value *rj)
{
    struct fq_objstore *s = fq_engine_store(e);
    const char *name = fq_meta_name(rj);
    const struct fq_object **objs = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_RAYCLUSTER, ns, &objs);
    char **names = fq_xcalloc(n + 1, sizeof(*names));
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (fq_pods_owned_by(objs[i]->obj, "RayJob", name, NULL))
            names[m++] = fq_xstrdup(objs[i]->name);
    free(objs);
    for (size_t i = 0; i < m; i++) {
        fq_pods_delete_owned(e, ns, "RayCluster", names[i]);
        if (fq_objstore_delete(s, FQ_KIND_RAYCLUSTER, ns, names[i], NULL) == 0)
            fq_engine_event(e, rj, "Normal", "DeletedRayCluster",
                            "Deleted RayCluster %s", names[i]);
        free(names[i]);
    }
    free(names);
    const struct fq_object *job = fq_objstore_get(s, FQ_KIND_JOB, ns, name);
    if (job && fq_pods_owned_by(job->obj, "RayJob", name, NULL)) {
        fq_pods_delete_owned(e, ns, "Job", name);
        fq_objstore_delete(s, FQ_KIND_JOB, ns, name, NULL);
    }
}

/* KubeRay clears these when a RayJob is suspended or retried. */
static void reset_status(struct fq_value *st)
{
    static const char *const keys[] = {
        "jobId",      "rayClusterName", "dashboardURL",
        "jobStatus",  "startTime",      "endTime",
        "message",    "reason",         "rayClusterStatus",
        "rayJobInfo",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
        fq_map_del(st, keys[i]);
}

/* --- transitions ------------------------------------------------------ */

static void to_initializing(struct fq_engine *e, const struct fq_value *rj,
                            struct fq_value *st, int64_t now)
{
    const char *name = fq_meta_name(rj);
    const char *ns = fq_value_path_str(rj, FQ_META_NAMESPACE, "default");
    char sfx[8], ts[40];
    const char *job_id = fq_value_path_str(rj, "spec.jobId", NULL);
    fq_engine_rand_suffix(e, sfx, 5);
    char *id = job_id && *job_id ? fq_xstrdup(job_id) :
                                   fq_xasprintf("%s-%s", name, sfx);
    fq_engine_rand_suffix(e, sfx, 5);
    char *cluster = fq_xasprintf("%s-%s", name, sfx);
    char *dash =
        fq_xasprintf("%s-head-svc.%s.svc.cluster.local:8265", cluster, ns);
    fq_time_format(now, ts, sizeof(ts));
    fq_map_set(st, "jobId", fq_value_str(id));
    fq_map_set(st, "rayClusterName", fq_value_str(cluster));
    fq_map_set(st, "dashboardURL", fq_value_str(dash));
    fq_map_set(st, "startTime", fq_value_str(ts));
    fq_map_set(st, "jobStatus", fq_value_str(""));
    set_ds(st, "Initializing");
    free(id);
    free(cluster);
    free(dash);
}

static void to_suspended(struct fq_engine *e, const char *ns,
                         const struct fq_value *rj, struct fq_value *st)
{
    delete_children(e, ns, rj);
    reset_status(st);
    set_ds(st, "Suspended");
    fq_map_set(st, "jobStatus", fq_value_str(""));
}

static void to_new(struct fq_value *st)
{
    reset_status(st);
    set_ds(st, "New");
}

/* A submitter still running when the job ends is stopped. */
static void stop_submitter(struct fq_engine *e, const char *ns,
                           const char *name, const char *reason,
                           const char *msg, int64_t now)
{
    const struct fq_object **objs = NULL;
    size_t n = owned_pods(e, "Job", ns, name, &objs);
    char **live = fq_xcalloc(n + 1, sizeof(*live));
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (fq_pods_owned_by(objs[i]->obj, "Job", name, NULL) &&
            !fq_pods_terminal(objs[i]->obj))
            live[m++] = fq_xstrdup(objs[i]->name);
    free(objs);
    for (size_t i = 0; i < m; i++) {
        fq_pods_kill(e, ns, live[i], reason, msg, now);
        free(live[i]);
    }
    free(live);
}

/* Running -> Complete with jobStatus STOPPED (a stop request). */
static void to_stopped(struct fq_engine *e, const char *ns,
                       const struct fq_value *rj, struct fq_value *st,
                       int64_t now)
{
    char ts[40];
    fq_time_format(now, ts, sizeof(ts));
    const char *name = fq_meta_name(rj);
    stop_submitter(e, ns, name, "Completed", "the Ray job was stopped", now);
    fq_map_set(st, "jobStatus", fq_value_str("STOPPED"));
    fq_map_set(st, "message", fq_value_str("Job was intentionally stopped."));
    fq_map_del(st, "reason");
    set_ds(st, "Complete");
    fq_map_set(st, "endTime", fq_value_str(ts));
    fq_engine_event(e, rj, "Normal", "Stopped", "Ray job %s was stopped",
                    fq_value_path_str(st, "jobId", name));
}

/* Running/Initializing -> Complete / Failed / Retrying. */
static void to_finished(struct fq_engine *e, const char *ns,
                        const struct fq_value *rj, struct fq_value *st, bool ok,
                        const char *reason, const char *msg, int64_t now)
{
    char ts[40];
    fq_time_format(now, ts, sizeof(ts));
    const char *name = fq_meta_name(rj);
    stop_submitter(e, ns, name, ok ? "Completed" : reason, msg, now);

    if (ok) {
        fq_map_set(st, "jobStatus", fq_value_str("SUCCEEDED"));
        fq_map_set(st, "message", fq_value_str("Job finished successfully."));
        fq_map_del(st, "reason");
        fq_map_set(st, "succeeded",
                   fq_value_int(fq_value_path_int(st, "succeeded", 0) + 1));
        set_ds(st, "Complete");
        fq_map_set(st, "endTime", fq_value_str(ts));
        fq_engine_event(e, rj, "Normal", "Completed", "RayJob %s has succeeded",
                        name);
        return;
    }
    int64_t failed = fq_value_path_int(st, "failed", 0) + 1;
    int64_t limit = fq_value_path_int(rj, "spec.backoffLimit", 0);
    fq_map_set(st, "failed", fq_value_int(failed));
    fq_map_set(st, "reason", fq_value_str(reason));
    fq_map_set(st, "message", fq_value_str(msg));
    if (strcmp(reason, "AppFailed") == 0)
        fq_map_set(st, "jobStatus", fq_value_str("FAILED"));
    fq_engine_event(e, rj, "Warning", reason, "%s", msg);
    if (failed <= limit && strcmp(reason, "DeadlineExceeded") != 0 &&
        strcmp(reason, "PreRunningDeadlineExceeded") != 0) {
        set_ds(st, "Retrying");
        return;
    }
    set_ds(st, "Failed");
    fq_map_set(st, "endTime", fq_value_str(ts));
}

/* --- children --------------------------------------------------------- */

/* The RayCluster a RayJob makes from spec.rayClusterSpec. */
static struct fq_value *make_cluster(const struct fq_value *rj, const char *ns,
                                     const char *cname, const char *job_id)
{
    const char *name = fq_meta_name(rj);
    struct fq_value *rc = fq_value_map();
    fq_map_set(rc, "apiVersion", fq_value_str("ray.io/v1"));
    fq_map_set(rc, "kind", fq_value_str("RayCluster"));
    struct fq_value *md = fq_map_ensure_map(rc, "metadata");
    fq_map_set(md, "name", fq_value_str(cname));
    fq_map_set(md, "namespace", fq_value_str(ns));
    struct fq_value *refs = fq_value_seq();
    fq_seq_push(refs, fq_pods_owner_ref(rj));
    fq_map_set(md, "ownerReferences", refs);
    fq_pods_set_label(rc, FQ_LABEL_RAY_ORIGIN_NAME, name);
    fq_pods_set_label(rc, FQ_LABEL_RAY_ORIGIN_CRD, "RayJob");
    fq_pods_set_label(rc, FQ_LABEL_CREATED_BY, "kuberay-operator");
    const struct fq_value *cs = fq_value_path(rj, FQ_RJ_CLUSTER_SPEC);
    struct fq_value *spec =
        cs && cs->type == FQ_V_MAP ? fq_value_clone(cs) : fq_value_map();
    fq_map_del(spec, "suspend");
    const char *entry = fq_value_path_str(rj, FQ_RJ_ENTRYPOINT, "");
    struct fq_value *groups = fq_map_get(spec, "workerGroupSpecs");
    for (size_t g = 0; g < fq_value_len(groups); g++) {
        struct fq_value *tspec =
            fq_value_path(fq_seq_at(groups, g), FQ_TEMPLATE_SPEC);
        struct fq_value *c0 = fq_seq_at(fq_map_get(tspec, "containers"), 0);
        if (c0 && !fq_map_get(c0, "command") && *entry)
            fq_map_set(c0, "command", split_argv(entry));
        if (tspec) {
            fq_pods_set_env(tspec, "FLEXQ_RAYJOB", name);
            fq_pods_set_env(tspec, "RAY_JOB_SUBMISSION_ID", job_id);
            fq_pods_set_env(tspec, "FLEXQ_ENTRYPOINT", entry);
        }
    }
    fq_map_set(rc, "spec", spec);
    return rc;
}

static int label_int(const struct fq_value *pod, const char *key)
{
    const char *v = fq_value_as_str(fq_map_get(fq_meta_labels(pod), key));
    return v ? atoi(v) : 0;
}

/* RANK order: group index, then replica, then host (raycluster.c). */
static int cmp_worker(const void *a, const void *b)
{
    const struct fq_value *x = *(const struct fq_value *const *)a;
    const struct fq_value *y = *(const struct fq_value *const *)b;
    static const char *const keys[] = {FQ_LABEL_GROUP_INDEX, FQ_LABEL_REPLICA,
                                       FQ_LABEL_HOST};
    for (int i = 0; i < 3; i++) {
        int c = label_int(x, keys[i]) - label_int(y, keys[i]);
        if (c)
            return c;
    }
    return 0;
}

/* "p0,p1,..." of the cluster's worker pods in RANK order; head into *head. */
static char *worker_pod_list(struct fq_engine *e, const char *ns,
                             const char *cname, char **head)
{
    const struct fq_object **objs = NULL;
    size_t n = owned_pods(e, "RayCluster", ns, cname, &objs);
    const struct fq_value **w = fq_xcalloc(n + 1, sizeof(*w));
    size_t m = 0;
    *head = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *p = objs[i]->obj;
        if (!fq_pods_owned_by(p, "RayCluster", cname, NULL) ||
            fq_pods_terminal(p))
            continue;
        const char *type = fq_value_as_str(
            fq_map_get(fq_meta_labels(p), FQ_LABEL_RAY_NODE_TYPE));
        if (type && strcmp(type, "head") == 0) {
            free(*head);
            *head = fq_xstrdup(objs[i]->name);
            continue;
        }
        w[m++] = p;
    }
    qsort(w, m, sizeof(*w), cmp_worker);
    struct fq_buf b = FQ_BUF_INIT;
    for (size_t i = 0; i < m; i++)
        fq_buf_printf(&b, "%s%s", i ? "," : "", fq_meta_name(w[i]));
    free(w);
    free(objs);
    return b.data ? fq_buf_detach(&b) : fq_xstrdup("");
}

static bool has_named(const struct fq_value *seq, const char *name)
{
    for (size_t i = 0; i < fq_value_len(seq); i++)
        if (strcmp(fq_value_path_str(fq_seq_at(seq, i), "name", ""), name) == 0)
            return true;
    return false;
}

/* The submitter Job, as KubeRay makes it (with flexq's command). */
static struct fq_value *make_submitter(struct fq_engine *e, const char *ns,
                                       const struct fq_value *rj,
                                       const struct fq_value *st)
{
    const char *name = fq_meta_name(rj);
    const char *cname = fq_value_path_str(st, "rayClusterName", "");
    const struct fq_value *hspec =
        fq_value_path(rj, "spec.rayClusterSpec.headGroupSpec.template.spec");
    const struct fq_value *hc0 = fq_seq_at(fq_map_get(hspec, "containers"), 0);
    struct fq_value *job = fq_value_map();
    fq_map_set(job, "apiVersion", fq_value_str("batch/v1"));
    fq_map_set(job, "kind", fq_value_str("Job"));
    struct fq_value *md = fq_map_ensure_map(job, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str(ns));
    struct fq_value *refs = fq_value_seq();
    fq_seq_push(refs, fq_pods_owner_ref(rj));
    fq_map_set(md, "ownerReferences", refs);
    fq_pods_set_label(job, FQ_LABEL_RAY_ORIGIN_NAME, name);
    fq_pods_set_label(job, FQ_LABEL_RAY_ORIGIN_CRD, "RayJob");
    fq_pods_set_label(job, FQ_LABEL_CREATED_BY, "kuberay-operator");

    struct fq_value *spec = fq_map_ensure_map(job, "spec");
    fq_map_set(spec, "backoffLimit",
               fq_value_int(fq_value_path_int(
                   rj, "spec.submitterConfig.backoffLimit", 0)));
    const struct fq_value *ut = fq_value_path(rj, FQ_RJ_SUBMITTER_TEMPLATE);
    struct fq_value *tmpl =
        ut && ut->type == FQ_V_MAP ? fq_value_clone(ut) : fq_value_map();
    fq_map_set(spec, "template", tmpl);
    struct fq_value *ts = fq_map_ensure_map(tmpl, "spec");
    fq_map_set(ts, "restartPolicy", fq_value_str("Never"));
    if (!ut) {
        /* The driver runs where the head runs, as in Ray. */
        const struct fq_value *sel = fq_map_get(hspec, "nodeSelector");
        const struct fq_value *tol = fq_map_get(hspec, "tolerations");
        if (sel)
            fq_map_set(ts, "nodeSelector", fq_value_clone(sel));
        if (tol)
            fq_map_set(ts, "tolerations", fq_value_clone(tol));
    }
    struct fq_value *cs = fq_map_get(ts, "containers");
    if (!cs || cs->type != FQ_V_SEQ || fq_value_len(cs) == 0) {
        cs = fq_value_seq();
        struct fq_value *c = fq_value_map();
        fq_map_set(c, "name", fq_value_str("ray-job-submitter"));
        fq_map_set(c, "image",
                   fq_value_str(fq_value_path_str(hc0, "image", "")));
        struct fq_value *res = fq_map_ensure_map(c, "resources");
        struct fq_value *req = fq_map_ensure_map(res, "requests");
        fq_map_set(req, "cpu", fq_value_str("500m"));
        fq_map_set(req, "memory", fq_value_str("200Mi"));
        struct fq_value *lim = fq_map_ensure_map(res, "limits");
        fq_map_set(lim, "cpu", fq_value_str("1"));
        fq_map_set(lim, "memory", fq_value_str("1Gi"));
        fq_seq_push(cs, c);
        fq_map_set(ts, "containers", cs);
    }
    struct fq_value *c0 = fq_seq_at(cs, 0);
    if (!fq_map_get(c0, "command")) {
        struct fq_value *cmd = fq_value_seq();
        fq_seq_push(cmd, fq_value_str("python3"));
        fq_seq_push(cmd, fq_value_str("-m"));
        fq_seq_push(cmd, fq_value_str("flexq.submit"));
        fq_map_set(c0, "command", cmd);
    }
    /* The head's volumes: the driver reads what the head would. */
    const struct fq_value *hv = fq_map_get(hspec, "volumes");
    const struct fq_value *hm = fq_map_get(hc0, "volumeMounts");
    if (fq_value_len(hv)) {
        struct fq_value *vols = fq_map_get(ts, "volumes");
        if (!vols || vols->type != FQ_V_SEQ) {
            vols = fq_value_seq();
            fq_map_set(ts, "volumes", vols);
        }
        for (size_t i = 0; i < fq_value_len(hv); i++) {
            const struct fq_value *v = fq_seq_at(hv, i);
            if (!has_named(vols, fq_value_path_str(v, "name", "")))
                fq_seq_push(vols, fq_value_clone(v));
        }
        struct fq_value *mounts = fq_map_get(c0, "volumeMounts");
        if (!mounts || mounts->type != FQ_V_SEQ) {
            mounts = fq_value_seq();
            fq_map_set(c0, "volumeMounts", mounts);
        }
        for (size_t i = 0; i < fq_value_len(hm); i++) {
            const struct fq_value *v = fq_seq_at(hm, i);
            if (!has_named(mounts, fq_value_path_str(v, "name", "")))
                fq_seq_push(mounts, fq_value_clone(v));
        }
    }
    char *head = NULL;
    char *workers = worker_pod_list(e, ns, cname, &head);
    fq_pods_set_env(ts, "PYTHONUNBUFFERED", "1");
    fq_pods_set_env(ts, "RAY_DASHBOARD_ADDRESS",
                    fq_value_path_str(st, "dashboardURL", ""));
    fq_pods_set_env(ts, "RAY_JOB_SUBMISSION_ID",
                    fq_value_path_str(st, "jobId", ""));
    fq_pods_set_env(ts, "FLEXQ_RAYJOB", name);
    fq_pods_set_env(ts, "FLEXQ_RAY_CLUSTER", cname);
    fq_pods_set_env(ts, "FLEXQ_RAY_ROLE", "driver");
    fq_pods_set_env(ts, "FLEXQ_ENTRYPOINT",
                    fq_value_path_str(rj, FQ_RJ_ENTRYPOINT, ""));
    fq_pods_set_env(ts, "FLEXQ_HEAD_POD", head ? head : "");
    fq_pods_set_env(ts, "FLEXQ_WORKER_PODS", workers);
    free(head);
    free(workers);
    return job;
}

/* Copies the RayJob's worker replicas to its live cluster (elastic
 * scale: the RayCluster controller adds or removes whole replicas). */
static void sync_replicas(struct fq_engine *e, const char *ns,
                          const struct fq_value *rj, const char *cname)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_RAYCLUSTER, ns, cname);
    if (!o)
        return;
    const struct fq_value *want = fq_value_path(rj, FQ_RJ_WORKER_GROUPS);
    const struct fq_value *have = fq_value_path(o->obj, FQ_RC_WORKER_GROUPS);
    bool differ = false;
    for (size_t i = 0; i < fq_value_len(want) && i < fq_value_len(have); i++)
        differ |= fq_value_path_int(fq_seq_at(want, i), "replicas", -1) !=
                  fq_value_path_int(fq_seq_at(have, i), "replicas", -1);
    if (!differ)
        return;
    struct fq_value *copy = fq_objstore_edit(s, FQ_KIND_RAYCLUSTER, ns, cname);
    struct fq_value *groups = fq_value_path(copy, FQ_RC_WORKER_GROUPS);
    for (size_t i = 0; i < fq_value_len(want) && i < fq_value_len(groups);
         i++) {
        const struct fq_value *r = fq_map_get(fq_seq_at(want, i), "replicas");
        if (r)
            fq_map_set(fq_seq_at(groups, i), "replicas", fq_value_clone(r));
    }
    fq_objstore_update(s, copy, true, NULL, NULL, NULL);
}

/* A failed head / worker pod of the cluster: its name and why, or NULL. */
static char *failed_cluster_pod(struct fq_engine *e, const char *ns,
                                const char *cname)
{
    const struct fq_object **objs = NULL;
    size_t n = owned_pods(e, "RayCluster", ns, cname, &objs);
    char *msg = NULL;
    for (size_t i = 0; i < n && !msg; i++) {
        const struct fq_value *p = objs[i]->obj;
        if (!fq_pods_owned_by(p, "RayCluster", cname, NULL) ||
            strcmp(fq_pods_phase(p), "Failed") != 0)
            continue;
        const struct fq_value *t = fq_value_path(
            fq_seq_at(fq_value_path(p, FQ_POD_CONTAINER_STATUSES), 0),
            FQ_CSTATE_TERMINATED);
        msg =
            fq_xasprintf("Job failed: pod %s failed: %s (exit code %lld)%s%s",
                         objs[i]->name, fq_value_path_str(t, "reason", "Error"),
                         (long long)fq_value_path_int(t, "exitCode", 1),
                         fq_value_path(t, "message") ? ": " : "",
                         fq_value_path_str(t, "message", ""));
    }
    free(objs);
    return msg;
}

/* Why the submitter failed, from its Job and pods. */
static char *submitter_failure(struct fq_engine *e, const char *ns,
                               const char *name, const struct fq_value *job)
{
    const struct fq_value *c =
        fq_pods_cond(fq_map_get(job, "status"), "Failed");
    const struct fq_object **objs = NULL;
    size_t n = owned_pods(e, "Job", ns, name, &objs);
    char *pod_msg = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *p = objs[i]->obj;
        if (!fq_pods_owned_by(p, "Job", name, NULL) ||
            strcmp(fq_pods_phase(p), "Failed") != 0)
            continue;
        const struct fq_value *t = fq_value_path(
            fq_seq_at(fq_value_path(p, FQ_POD_CONTAINER_STATUSES), 0),
            FQ_CSTATE_TERMINATED);
        free(pod_msg);
        pod_msg = fq_xasprintf("pod %s: %s (exit code %lld)", objs[i]->name,
                               fq_value_path_str(t, "reason", "Error"),
                               (long long)fq_value_path_int(t, "exitCode", 1));
    }
    free(objs);
    char *msg = fq_xasprintf("Job failed. Reason: %s. Message: %s%s%s",
                             fq_value_path_str(c, "reason", "Failed"),
                             fq_value_path_str(c, "message", ""),
                             pod_msg ? "; " : "", pod_msg ? pod_msg : "");
    free(pod_msg);
    return msg;
}

/* --- reconcile -------------------------------------------------------- */

/* One reconcile's view of a RayJob: a copy to read (rj) and the status
 * being written (st, stored at the end if it changed). */
struct rjrun {
    struct fq_engine *e;
    struct fq_objstore *s;
    const char *ns, *name;
    int64_t now;
    struct rjctl *ctl;
    struct fq_value *rj, *st;
    const struct fq_value *spec;
    const char *ds; /* jobDeploymentStatus */
};

/* Complete or Failed: with shutdownAfterJobFinishes, the cluster goes
 * when ttlSecondsAfterFinished has passed since the end. */
static void step_finished(struct rjrun *r)
{
    if (!fq_value_path_bool(r->spec, "shutdownAfterJobFinishes", false))
        return;
    int64_t end = r->now;
    fq_time_parse(fq_value_path_str(r->st, "endTime", ""), &end);
    int64_t at =
        end + fq_value_path_int(r->spec, "ttlSecondsAfterFinished", 0) * 1000;
    const char *cname = fq_value_path_str(r->st, "rayClusterName", "");
    if (r->now < at) {
        fq_keyq_timer2(&r->ctl->q, r->ns, r->name, at);
        return;
    }
    if (fq_objstore_get(r->s, FQ_KIND_RAYCLUSTER, r->ns, cname)) {
        fq_pods_delete_owned(r->e, r->ns, "RayCluster", cname);
        fq_objstore_delete(r->s, FQ_KIND_RAYCLUSTER, r->ns, cname, NULL);
        fq_engine_event(r->e, r->rj, "Normal", "DeletedRayCluster",
                        "Deleted RayCluster %s", cname);
    }
}

/* A deadline of `seconds` from startTime: Failed with `reason` once it
 * has passed, else a timer for it. Returns true when it failed the job. */
static bool deadline(struct rjrun *r, int64_t seconds, const char *reason,
                     const char *lead, const char *field)
{
    int64_t start = r->now;
    fq_time_parse(fq_value_path_str(r->st, "startTime", ""), &start);
    if (r->now < start + seconds * 1000) {
        fq_keyq_timer2(&r->ctl->q, r->ns, r->name, start + seconds * 1000);
        return false;
    }
    char *msg = fq_xasprintf("%s StartTime: %s. %s: %lld", lead,
                             fq_value_path_str(r->st, "startTime", ""), field,
                             (long long)seconds);
    to_finished(r->e, r->ns, r->rj, r->st, false, reason, msg, r->now);
    free(msg);
    return true;
}

/* activeDeadlineSeconds, and preRunningDeadlineSeconds while
 * Initializing. Returns true when one failed the job. */
static bool deadlines(struct rjrun *r)
{
    int64_t ads = fq_value_path_int(r->spec, "activeDeadlineSeconds", -1);
    if (ads >= 0 && deadline(r, ads, "DeadlineExceeded",
                             "The RayJob has passed the activeDeadlineSeconds.",
                             "ActiveDeadlineSeconds"))
        return true;
    int64_t prds = fq_value_path_int(r->spec, "preRunningDeadlineSeconds", 0);
    return prds > 0 && strcmp(r->ds, "Initializing") == 0 &&
           deadline(r, prds, "PreRunningDeadlineExceeded",
                    "The RayJob did not reach Running within "
                    "preRunningDeadlineSeconds.",
                    "PreRunningDeadlineSeconds");
}

/* Initializing: once the cluster is ready, the submitter Job and
 * Running (jobStatus PENDING). */
static void step_initializing(struct rjrun *r, const struct fq_value *rcs)
{
    if (strcmp(fq_value_path_str(rcs, "state", ""), "ready") != 0)
        return;
    if (!fq_objstore_get(r->s, FQ_KIND_JOB, r->ns, r->name)) {
        struct fq_value *job = make_submitter(r->e, r->ns, r->rj, r->st);
        fq_pods_create(r->e, job, r->now, NULL, NULL);
        fq_engine_event(r->e, r->rj, "Normal", "CreatedRayJobSubmitter",
                        "Created Kubernetes Job %s/%s", r->ns, r->name);
    }
    set_ds(r->st, "Running");
    fq_map_set(r->st, "jobStatus", fq_value_str("PENDING"));
    fq_map_set(r->st, "message", fq_value_str("Job has not started yet."));
}

/* Running: the submitter Job's outcome is the RayJob's; RUNNING once its
 * pod has started. */
static void follow_submitter(struct rjrun *r)
{
    const struct fq_object *jo =
        fq_objstore_get(r->s, FQ_KIND_JOB, r->ns, r->name);
    if (!jo)
        return;
    const struct fq_value *jst = fq_map_get(jo->obj, "status");
    if (fq_pods_cond_true(jst, "Complete")) {
        to_finished(r->e, r->ns, r->rj, r->st, true, NULL, NULL, r->now);
        return;
    }
    if (fq_pods_cond_true(jst, "Failed")) {
        /* KubeRay: AppFailed when the Ray job itself failed, else the
         * submission failed. flexq's driver is the submitter's process, so
         * the Ray job ran iff that pod ran (jobStatus RUNNING). */
        char *msg;
        const char *reason;
        if (strcmp(fq_value_path_str(r->st, "jobStatus", ""), "RUNNING") == 0) {
            msg = submitter_failure(r->e, r->ns, r->name, jo->obj);
            reason = "AppFailed";
        } else {
            const struct fq_value *c = fq_pods_cond(jst, "Failed");
            msg = fq_xasprintf(
                "Job submission has failed. Reason: %s. Message: %s",
                fq_value_path_str(c, "reason", "Failed"),
                fq_value_path_str(c, "message", ""));
            reason = "SubmissionFailed";
        }
        to_finished(r->e, r->ns, r->rj, r->st, false, reason, msg, r->now);
        free(msg);
        return;
    }
    if (fq_value_path_int(jst, "active", 0) <= 0)
        return;
    const struct fq_object **objs = NULL;
    size_t n = owned_pods(r->e, "Job", r->ns, r->name, &objs);
    bool running = false;
    for (size_t i = 0; i < n && !running; i++)
        running = fq_pods_owned_by(objs[i]->obj, "Job", r->name, NULL) &&
                  strcmp(fq_pods_phase(objs[i]->obj), "Running") == 0;
    free(objs);
    if (running) {
        fq_map_set(r->st, "jobStatus", fq_value_str("RUNNING"));
        fq_map_set(r->st, "message", fq_value_str("Job is currently running."));
    }
}

/* Initializing or Running: suspension, deadlines, the RayCluster (made
 * when missing, replicas kept in sync, its status mirrored), a stop, a
 * failed cluster pod, then the step of the state. */
static void step_active(struct rjrun *r)
{
    if (fq_value_path_bool(r->spec, "suspend", false)) {
        set_ds(r->st, "Suspending");
        to_suspended(r->e, r->ns, r->rj, r->st);
        return;
    }
    if (deadlines(r))
        return;
    const char *cname = fq_value_path_str(r->st, "rayClusterName", "");
    if (!fq_objstore_get(r->s, FQ_KIND_RAYCLUSTER, r->ns, cname)) {
        struct fq_value *rc = make_cluster(
            r->rj, r->ns, cname, fq_value_path_str(r->st, "jobId", ""));
        fq_pods_create(r->e, rc, r->now, NULL, NULL);
        fq_engine_event(r->e, r->rj, "Normal", "CreatedRayCluster",
                        "Created RayCluster %s/%s", r->ns, cname);
        return;
    }
    sync_replicas(r->e, r->ns, r->rj, cname);
    /* A copy: what follows may write the store. */
    struct fq_value *rc = fq_value_clone(
        fq_objstore_get(r->s, FQ_KIND_RAYCLUSTER, r->ns, cname)->obj);
    const struct fq_value *rcs = fq_map_get(rc, "status");
    if (rcs)
        fq_map_set(r->st, "rayClusterStatus", fq_value_clone(rcs));
    char *pod_failure = NULL;
    if (strcmp(r->ds, "Running") == 0 &&
        strcmp(fq_value_path_str(r->st, "jobStatus", ""), "STOPPED") == 0)
        to_stopped(r->e, r->ns, r->rj, r->st, r->now);
    else if ((pod_failure = failed_cluster_pod(r->e, r->ns, cname)))
        to_finished(r->e, r->ns, r->rj, r->st, false, "AppFailed", pod_failure,
                    r->now);
    else if (strcmp(r->ds, "Initializing") == 0)
        step_initializing(r, rcs);
    else
        follow_submitter(r);
    free(pod_failure);
    fq_value_free(rc);
}

/*
 * One step of a RayJob along KubeRay's jobDeploymentStatus: New ->
 * Initializing (or Suspended) -> Running -> Complete | Failed, with
 * Suspending / Suspended / Retrying between; each state's step is a
 * function above. The status is written once, at the end, if it changed.
 */
static void reconcile(struct fq_engine *e, const char *ns, const char *name,
                      int64_t now, struct rjctl *ctl)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_RAYJOB, ns, name);
    if (!o)
        return;
    struct rjrun r = {
        .e = e, .s = s, .ns = ns, .name = name, .now = now, .ctl = ctl};
    r.rj = fq_value_clone(o->obj);
    r.st = fq_value_clone(fq_map_get(r.rj, "status"));
    if (!r.st || r.st->type != FQ_V_MAP) {
        fq_value_free(r.st);
        r.st = fq_value_map();
    }
    r.spec = fq_map_get(r.rj, "spec");
    bool suspend = fq_value_path_bool(r.spec, "suspend", false);
    r.ds = ds_of(r.st);
    fq_map_set(r.st, "observedGeneration",
               fq_value_int(fq_value_path_int(r.rj, FQ_META_GENERATION, 1)));

    if (strcmp(r.ds, "New") == 0) {
        if (suspend) {
            set_ds(r.st, "Suspended");
            fq_map_set(r.st, "jobStatus", fq_value_str(""));
        } else {
            to_initializing(e, r.rj, r.st, now);
        }
    } else if (strcmp(r.ds, "Suspended") == 0) {
        if (!suspend)
            to_new(r.st);
    } else if (strcmp(r.ds, "Suspending") == 0) {
        to_suspended(e, ns, r.rj, r.st);
    } else if (strcmp(r.ds, "Retrying") == 0) {
        delete_children(e, ns, r.rj);
        to_new(r.st);
    } else if (strcmp(r.ds, "Complete") == 0 || strcmp(r.ds, "Failed") == 0) {
        step_finished(&r);
    } else {
        step_active(&r);
    }
    fq_pods_put_status(e, FQ_KIND_RAYJOB, ns, name, r.st);
    fq_value_free(r.rj);
}

/* --- stop ------------------------------------------------------------- */

static bool job_status_terminal(const char *js)
{
    return !strcmp(js, "STOPPED") || !strcmp(js, "SUCCEEDED") ||
           !strcmp(js, "FAILED");
}

int fq_rayjob_stop(struct fq_engine *e, const char *ns, const char *name,
                   bool *stopped, struct fq_err *err)
{
    *stopped = false;
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_RAYJOB, ns, name);
    if (!o)
        return fq_err_set(err, FQ_ENOTFOUND, "rayjob %s/%s not found", ns,
                          name);
    const struct fq_value *st = fq_map_get(o->obj, "status");
    /* Only a submitted Ray job that has not ended can be stopped; Ray
     * answers {"stopped": false} for the others. */
    if (strcmp(ds_of(st), "Running") != 0 ||
        job_status_terminal(fq_value_path_str(st, "jobStatus", "")))
        return 0;
    struct fq_value *nst = fq_value_clone(st);
    fq_map_set(nst, "jobStatus", fq_value_str("STOPPED"));
    fq_pods_put_status(e, FQ_KIND_RAYJOB, ns, name, nst);
    *stopped = true;
    return 0;
}

/* --- controller ------------------------------------------------------- */

static void *rj_create(struct fq_engine *e)
{
    (void)e;
    struct rjctl *c = fq_xcalloc(1, sizeof(*c));
    fq_keyq_init(&c->q);
    c->own = fq_pods_owners_new();
    return c;
}

static void rj_destroy(void *self)
{
    struct rjctl *c = self;
    fq_keyq_release(&c->q);
    fq_pods_owners_free(c->own);
    free(c);
}

static void rj_on_change(void *self, struct fq_engine *e,
                         const struct fq_change *c)
{
    struct rjctl *ctl = self;
    if (fq_engine_config(e)->no_pods || !c->obj)
        return;
    const char *key = NULL;
    if (c->kind == FQ_KIND_RAYJOB) {
        if (c->type == FQ_CHANGE_DELETED)
            return;
        key = c->name;
    } else if (c->kind == FQ_KIND_RAYCLUSTER || c->kind == FQ_KIND_JOB) {
        key = fq_pods_owner_name(c->obj, "RayJob");
    } else if (c->kind == FQ_KIND_POD) {
        fq_pods_owners_note(ctl->own, c);
        const struct fq_value *l = fq_meta_labels(c->obj);
        key = fq_value_as_str(fq_map_get(l, FQ_LABEL_RAY_ORIGIN_NAME));
        if (!key)
            key = fq_value_as_str(fq_map_get(l, FQ_LABEL_JOB_NAME));
    }
    if (!key)
        return;
    fq_keyq_add2(&ctl->q, c->ns, key);
    fq_engine_kick(e, self);
}

static void rj_run(void *self, struct fq_engine *e, int64_t now)
{
    struct rjctl *ctl = self;
    if (fq_engine_config(e)->no_pods) {
        ctl->q.resync = false;
        return;
    }
    fq_keyq_fire(&ctl->q, now);
    if (ctl->q.resync) {
        ctl->q.resync = false;
        const struct fq_object **objs = NULL;
        size_t n =
            fq_objstore_list(fq_engine_store(e), FQ_KIND_RAYJOB, NULL, &objs);
        for (size_t i = 0; i < n; i++)
            fq_keyq_add2(&ctl->q, objs[i]->ns, objs[i]->name);
        free(objs);
    }
    const char *const *keys;
    size_t n = fq_keyq_take(&ctl->q, &keys);
    for (size_t i = 0; i < n; i++) {
        char *key = fq_xstrdup(keys[i]);
        const char *ns, *name;
        fq_pods_key_split(key, &ns, &name);
        reconcile(e, ns, name, now, ctl);
        free(key);
    }
    fq_keyq_clear(&ctl->q);
}

static int64_t rj_next_wakeup(const void *self)
{
    const struct rjctl *ctl = self;
    return ctl->q.resync ? 0 : fq_keyq_next(&ctl->q);
}

const struct fq_controller_ops fq_rayjob_controller = {
    .name = "rayjob",
    .watch = FQ_KIND_BIT(FQ_KIND_RAYJOB) | FQ_KIND_BIT(FQ_KIND_RAYCLUSTER) |
             FQ_KIND_BIT(FQ_KIND_JOB) | FQ_KIND_BIT(FQ_KIND_POD),
    .create = rj_create,
    .destroy = rj_destroy,
    .on_change = rj_on_change,
    .run = rj_run,
    .next_wakeup = rj_next_wakeup,
};
