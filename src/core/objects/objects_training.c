/*
 * objects_training.c - validation of the training job kinds Kueue queues:
 * JobSet (jobset.x-k8s.io/v1alpha2), PyTorchJob (kubeflow.org/v1) and
 * MPIJob (kubeflow.org/v2beta1).
 *
 * Each check is one the project's own webhook or CRD schema makes, with a
 * cap on every list so that a manifest cannot make the controllers build
 * an unbounded number of objects:
 *
 *   JobSet      1..64 replicatedJobs with unique DNS-label names, replicas
 *               1..10000, a Job template whose pods restart Never or
 *               OnFailure, names that still fit a 63-character hostname
 *               once the job and pod indexes are appended
 *               (<jobset>-<rjob>-<j>-<p>), successPolicy operator All|Any
 *               over replicated jobs that exist, failurePolicy
 *               maxRestarts >= 0, network.subdomain a DNS label.
 *   PyTorchJob  pytorchReplicaSpecs with Master and/or Worker only, one
 *               Master replica at most, a container named "pytorch" in
 *               every template (the training operator's rule), restart
 *               policies Always|OnFailure|Never|ExitCode, runPolicy.
 *   MPIJob      mpiReplicaSpecs Launcher (exactly 1) and Worker,
 *               slotsPerWorker 1..1024, mpiImplementation
 *               OpenMPI|Intel|MPICH.
 *   LeaderWorkerSet  replicas 0..10000 groups of size 1..10000, a
 *               workerTemplate (leaderTemplate optional), restartPolicy,
 *               startupPolicy and subdomainPolicy from their enums, and
 *               <lws>-<group>-<worker> within 63 characters.
 *   TrainJob    runtimeRef naming a torch runtime (the only ones flexq
 *               builds without ClusterTrainingRuntime objects), a trainer
 *               with an image, numNodes 1..10000, at most 256 env vars.
 *
 * It does not decode into typed views: the controllers (jobs/jobset.c,
 * jobs/pytorchjob.c, jobs/mpijob.c, jobs/lws.c, jobs/trainjob.c) read the checked value.
 */
#include <stdio.h>
#include <string.h>

#include "flexq/objects.h"
#include "flexq/paths.h"
#include "objects/objects_internal.h"

#define MAX_RJOBS     64    /* replicatedJobs of one JobSet */
#define MAX_REPLICAS  10000 /* replicas of one role or replicated job */
#define MAX_POD_NAMES 63    /* a hostname is a DNS label */

struct tj_view {
    struct fq_meta meta;
    struct fq_objmem *mem;
};

static void check_template(struct dctx *c, const struct fq_value *m,
                           const char *key, const char *must_container)
{
    struct fq_podtemplate t;
    memset(&t, 0, sizeof(t));
    want_podtemplate(c, m, key, true, &t);
    if (!must_container)
        return;
    const struct fq_value *cs = fq_value_path(field(m, key), FQ_POD_CONTAINERS);
    for (size_t i = 0; i < fq_value_len(cs); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(cs, i), "name", ""),
                    must_container))
            return;
    if (cs)
        derr_key(c, field(m, key), key,
                 "no container named \"%s\" (the operator runs and reads "
                 "that container)",
                 must_container);
}

static void check_run_policy(struct dctx *c, const struct fq_value *spec)
{
    static const char *const clean[] = {"All", "Running", "None", NULL};
    const struct fq_value *rp = want_map(c, spec, "runPolicy", false);
    if (!rp)
        return;
    size_t old = path_key(c, "runPolicy");
    (void)want_bool(c, rp, "suspend", false);
    (void)want_enum(c, rp, "cleanPodPolicy", clean, 2);
    (void)want_int(c, rp, "backoffLimit", 0, 0, FQ_INT32_MAX, NULL);
    (void)want_int(c, rp, "activeDeadlineSeconds", 0, 1, FQ_INT32_MAX, NULL);
    (void)want_int(c, rp, "ttlSecondsAfterFinished", 0, 0, FQ_INT32_MAX, NULL);
    path_pop(c, old);
}

/* --- JobSet -------------------------------------------------------------- */

static void check_rjob(struct dctx *c, const struct fq_value *rj,
                       const char *jsname, const char **names, size_t i)
{
    static const char *const rps[] = {"Never", "OnFailure", NULL};
    names[i] = want_name(c, rj, "name", true, fq_check_dns1123_label);
    for (size_t k = 0; names[i] && k < i; k++)
        if (names[k] && !strcmp(names[k], names[i]))
            derr_key(c, field(rj, "name"), "name",
                     "duplicate replicated job name \"%s\"", names[i]);
    int64_t replicas = want_int(c, rj, "replicas", 1, 0, MAX_REPLICAS, NULL);
    int64_t par = fq_value_path_int(rj, FQ_RJOB_PARALLELISM, 1);
    char tail[64];
    snprintf(tail, sizeof(tail), "-%lld-%lld",
             (long long)(replicas > 0 ? replicas - 1 : 0),
             (long long)(par > 0 ? par - 1 : 0));
    if (names[i] && jsname && !has_var(jsname) &&
        strlen(jsname) + 1 + strlen(names[i]) + strlen(tail) > MAX_POD_NAMES)
        derr_key(c, field(rj, "name"), "name",
                 "the pod hostname \"%s-%s%s\" is longer than 63 "
                 "characters; shorten the JobSet or replicated job name",
                 jsname, names[i], tail);
    const struct fq_value *jt = want_map(c, rj, "template", true);
    if (!jt)
        return;
    size_t old = path_key(c, "template");
    const struct fq_value *js = want_map(c, jt, "spec", true);
    if (js) {
        size_t o2 = path_key(c, "spec");
        (void)want_int(c, js, "parallelism", 1, 0, MAX_REPLICAS, NULL);
        (void)want_int(c, js, "completions", 1, 0, MAX_REPLICAS, NULL);
        (void)want_int(c, js, "backoffLimit", 6, 0, FQ_INT32_MAX, NULL);
        check_template(c, js, "template", NULL);
        const struct fq_value *ps =
            fq_value_path(field(js, "template"), "spec");
        if (ps && ps->type == FQ_V_MAP) {
            size_t o3 = path_key(c, "template");
            path_key(c, "spec");
            if (!field(ps, "restartPolicy"))
                derr_key(c, ps, "restartPolicy",
                         "required field is missing (a Job's pods restart "
                         "Never or OnFailure)");
            else
                (void)want_enum(c, ps, "restartPolicy", rps, 0);
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}

static void check_jobset(struct dctx *c, const struct fq_value *obj,
                         const struct fq_meta *meta)
{
    static const char *const ops[] = {"All", "Any", NULL};
    const struct fq_value *spec = want_map(c, obj, "spec", true);
    if (!spec)
        return;
    size_t old = path_key(c, "spec");
    (void)want_bool(c, spec, "suspend", false);
    const struct fq_value *rjs =
        want_seq(c, spec, "replicatedJobs", true, 1, MAX_RJOBS);
    const char *names[MAX_RJOBS] = {0};
    size_t n = fq_value_len(rjs) < MAX_RJOBS ? fq_value_len(rjs) : MAX_RJOBS;
    if (rjs) {
        size_t o2 = path_key(c, "replicatedJobs");
        for (size_t i = 0; i < n; i++) {
            size_t o3 = path_idx(c, i);
            const struct fq_value *rj = fq_seq_at(rjs, i);
            if (rj->type != FQ_V_MAP)
                derr(c, rj, "a replicated job must be a mapping, not %s",
                     type_word(rj));
            else
                check_rjob(c, rj, meta->name, names, i);
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    const struct fq_value *sp = want_map(c, spec, "successPolicy", false);
    if (sp) {
        size_t o2 = path_key(c, "successPolicy");
        (void)want_enum(c, sp, "operator", ops, 0);
        size_t nt = 0;
        const char **t = want_strs(c, sp, "targetReplicatedJobs", false,
                                   MAX_RJOBS, NULL, &nt);
        for (size_t i = 0; t && i < nt; i++) {
            bool found = false;
            for (size_t k = 0; k < n; k++)
                found = found || (names[k] && !strcmp(names[k], t[i]));
            if (!found)
                derr_key(c, field(sp, "targetReplicatedJobs"),
                         "targetReplicatedJobs",
                         "\"%s\" is not a replicated job of this JobSet", t[i]);
        }
        path_pop(c, o2);
    }
    const struct fq_value *fp = want_map(c, spec, "failurePolicy", false);
    if (fp) {
        size_t o2 = path_key(c, "failurePolicy");
        (void)want_int(c, fp, "maxRestarts", 0, 0, FQ_INT32_MAX, NULL);
        path_pop(c, o2);
    }
    const struct fq_value *nw = want_map(c, spec, "network", false);
    if (nw) {
        size_t o2 = path_key(c, "network");
        (void)want_bool(c, nw, "enableDNSHostnames", true);
        (void)want_name(c, nw, "subdomain", false, fq_check_dns1123_label);
        path_pop(c, o2);
    }
    path_pop(c, old);
}

/* --- Kubeflow replica specs ---------------------------------------------- */

/* The replica specs map `key` of spec: only the roles in `roles`, the
 * first of them (Master, Launcher) with at most `max_first` replicas. */
static void check_replica_specs(struct dctx *c, const struct fq_value *spec,
                                const char *key, const char *const *roles,
                                int64_t max_first, const char *container)
{
    static const char *const rps[] = {"Always", "OnFailure", "Never",
                                      "ExitCode", NULL};
    const struct fq_value *m = want_map(c, spec, key, true);
    if (!m)
        return;
    size_t old = path_key(c, key);
    if (m->u.map.n == 0)
        derr(c, m, "at least one replica spec is needed (%s or %s)", roles[0],
             roles[1]);
    for (size_t i = 0; i < m->u.map.n; i++) {
        const char *role = m->u.map.items[i].key;
        const struct fq_value *rs = m->u.map.items[i].val;
        int r = -1;
        for (int k = 0; roles[k]; k++)
            if (!strcmp(role, roles[k]))
                r = k;
        if (r < 0) {
            derr_key(c, rs, role,
                     "unknown replica type \"%s\": must be %s or %s", role,
                     roles[0], roles[1]);
            continue;
        }
        if (!rs || rs->type != FQ_V_MAP) {
            derr_key(c, rs, role, "a replica spec must be a mapping, not %s",
                     type_word(rs));
            continue;
        }
        size_t o2 = path_key(c, role);
        (void)want_int(c, rs, "replicas", 1, r == 0 ? 1 : 0,
                       r == 0 ? max_first : MAX_REPLICAS, NULL);
        (void)want_enum(c, rs, "restartPolicy", rps, 0);
        check_template(c, rs, "template", container);
        path_pop(c, o2);
    }
    path_pop(c, old);
}

static void check_pytorchjob(struct dctx *c, const struct fq_value *obj)
{
    static const char *const roles[] = {"Master", "Worker", NULL};
    const struct fq_value *spec = want_map(c, obj, "spec", true);
    if (!spec)
        return;
    size_t old = path_key(c, "spec");
    check_replica_specs(c, spec, "pytorchReplicaSpecs", roles, 1, "pytorch");
    check_run_policy(c, spec);
    const struct fq_value *np = field(spec, "nprocPerNode");
    if (np && np->type != FQ_V_STR && np->type != FQ_V_NUM)
        derr_key(c, np, "nprocPerNode",
                 "must be a number or auto, cpu, gpu; not %s", type_word(np));
    path_pop(c, old);
}

static void check_mpijob(struct dctx *c, const struct fq_value *obj)
{
    static const char *const roles[] = {"Launcher", "Worker", NULL};
    static const char *const impls[] = {"OpenMPI", "Intel", "MPICH", NULL};
    const struct fq_value *spec = want_map(c, obj, "spec", true);
    if (!spec)
        return;
    size_t old = path_key(c, "spec");
    check_replica_specs(c, spec, "mpiReplicaSpecs", roles, 1, NULL);
    if (!fq_value_path(spec, "mpiReplicaSpecs.Launcher") &&
        field(spec, "mpiReplicaSpecs"))
        derr_key(c, field(spec, "mpiReplicaSpecs"), "mpiReplicaSpecs",
                 "a Launcher replica spec is required");
    (void)want_int(c, spec, "slotsPerWorker", 1, 1, 1024, NULL);
    (void)want_enum(c, spec, "mpiImplementation", impls, 0);
    (void)want_str(c, spec, "sshAuthMountPath", false);
    check_run_policy(c, spec);
    path_pop(c, old);
}

/* --- LeaderWorkerSet ---------------------------------------------------- */

static void check_lws(struct dctx *c, const struct fq_value *obj,
                      const struct fq_meta *meta)
{
    static const char *const rps[] = {"RecreateGroupOnPodRestart", "None",
                                      "Default", NULL};
    static const char *const sps[] = {"LeaderCreated", "LeaderReady", NULL};
    static const char *const subs[] = {"Shared", "UniquePerReplica", NULL};
    const struct fq_value *spec = want_map(c, obj, "spec", true);
    if (!spec)
        return;
    size_t old = path_key(c, "spec");
    int64_t groups = want_int(c, spec, "replicas", 1, 0, MAX_REPLICAS, NULL);
    (void)want_enum(c, spec, "startupPolicy", sps, 0);
    const struct fq_value *nc = want_map(c, spec, "networkConfig", false);
    if (nc) {
        size_t o2 = path_key(c, "networkConfig");
        (void)want_enum(c, nc, "subdomainPolicy", subs, 0);
        path_pop(c, o2);
    }
    const struct fq_value *lwt =
        want_map(c, spec, "leaderWorkerTemplate", true);
    if (lwt) {
        size_t o2 = path_key(c, "leaderWorkerTemplate");
        int64_t size = want_int(c, lwt, "size", 1, 1, MAX_REPLICAS, NULL);
        (void)want_enum(c, lwt, "restartPolicy", rps, 0);
        if (field(lwt, "leaderTemplate"))
            check_template(c, lwt, "leaderTemplate", NULL);
        check_template(c, lwt, "workerTemplate", NULL);
        /* <lws>-<group>-<worker> is a hostname */
        char tail[64];
        snprintf(tail, sizeof(tail), "-%lld-%lld",
                 (long long)(groups > 0 ? groups - 1 : 0),
                 (long long)(size > 0 ? size - 1 : 0));
        if (meta->name && !has_var(meta->name) &&
            strlen(meta->name) + strlen(tail) > MAX_POD_NAMES)
            derr_key(c, field(c->obj, "metadata"), "name",
                     "the pod hostname \"%s%s\" is longer than 63 "
                     "characters; shorten the LeaderWorkerSet's name",
                     meta->name, tail);
        path_pop(c, o2);
    }
    path_pop(c, old);
}

/* --- TrainJob ------------------------------------------------------------ */

static void check_trainjob(struct dctx *c, const struct fq_value *obj)
{
    static const char *const kinds[] = {"ClusterTrainingRuntime",
                                        "TrainingRuntime", NULL};
    const struct fq_value *spec = want_map(c, obj, "spec", true);
    if (!spec)
        return;
    size_t old = path_key(c, "spec");
    (void)want_bool(c, spec, "suspend", false);
    const struct fq_value *rr = want_map(c, spec, "runtimeRef", true);
    if (rr) {
        size_t o2 = path_key(c, "runtimeRef");
        const char *name = want_str(c, rr, "name", true);
        (void)want_enum(c, rr, "kind", kinds, 0);
        (void)want_str(c, rr, "apiGroup", false);
        if (name && !has_var(name) && strncmp(name, "torch", 5))
            derr_key(c, field(rr, "name"), "name",
                     "runtime \"%s\": flexq has no ClusterTrainingRuntime "
                     "objects and builds only the torch runtimes "
                     "(torch-distributed, torch*)",
                     name);
        path_pop(c, o2);
    }
    const struct fq_value *tr = want_map(c, spec, "trainer", true);
    if (tr) {
        size_t o2 = path_key(c, "trainer");
        if (!field(tr, "image"))
            derr_key(c, tr, "image",
                     "required field is missing (flexq has no runtime to "
                     "take the image from)");
        (void)want_str(c, tr, "image", false);
        (void)want_int(c, tr, "numNodes", 1, 1, MAX_REPLICAS, NULL);
        size_t n = 0;
        (void)want_strs(c, tr, "command", false, 256, NULL, &n);
        const struct fq_value *np = field(tr, "numProcPerNode");
        if (np && np->type != FQ_V_STR && np->type != FQ_V_NUM)
            derr_key(c, np, "numProcPerNode",
                     "must be a number or auto, cpu, gpu; not %s",
                     type_word(np));
        const struct fq_value *env = want_seq(c, tr, "env", false, 0, 256);
        for (size_t i = 0; i < fq_value_len(env); i++) {
            size_t o3 = path_key(c, "env");
            path_idx(c, i);
            (void)want_str(c, fq_seq_at(env, i), "name", true);
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}

int fq_training_validate(const struct fq_value *obj, const char *file,
                         struct fq_errlist *errs, enum fq_kind kind)
{
    struct dctx c;
    struct tj_view out;
    memset(&out, 0, sizeof(out));
    if (dctx_begin(&c, obj, file, errs, kind, &out.mem, &out.meta) == 0) {
        check_kueue_labels(&c, &out.meta);
        if (kind == FQ_KIND_JOBSET)
            check_jobset(&c, obj, &out.meta);
        else if (kind == FQ_KIND_PYTORCHJOB)
            check_pytorchjob(&c, obj);
        else if (kind == FQ_KIND_LEADERWORKERSET)
            check_lws(&c, obj, &out.meta);
        else if (kind == FQ_KIND_TRAINJOB)
            check_trainjob(&c, obj);
        else
            check_mpijob(&c, obj);
        (void)want_map(&c, obj, "status", false);
    }
    int rc = dctx_end(&c, &out, sizeof(out), &out.mem);
    objmem_free(&out.mem);
    return rc;
}
