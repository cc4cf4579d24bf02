/*
 * trainjob.c - the TrainJob controller (trainer.kubeflow.org/v1alpha1), as
 * Kubeflow Trainer runs it with its torch runtime, and its row for Kueue's
 * jobframework.
 *
 * Kubeflow Trainer turns a TrainJob into a JobSet from the
 * ClusterTrainingRuntime that spec.runtimeRef names. flexq has no
 * ClusterTrainingRuntime objects; it honours the reference when it names
 * a torch runtime (`torch-distributed` and the other `torch*` runtimes
 * Trainer ships), whose JobSet it builds itself:
 *
 *   JobSet <trainjob>   owned by the TrainJob, one replicated job `node`
 *                       (1 Job, Indexed, parallelism = completions =
 *                       trainer.numNodes, default 1) whose container
 *                       `node` runs trainer.image / command / args / env
 *                       with resourcesPerNode, port 29500, and Trainer's
 *                       torch env: PET_NNODES (numNodes),
 *                       PET_NPROC_PER_NODE (numProcPerNode, default
 *                       "auto"), PET_NODE_RANK (the completion index),
 *                       PET_MASTER_ADDR (<trainjob>-node-0-0.<trainjob>)
 *                       and PET_MASTER_PORT (29500)
 *
 * jobset.c runs that JobSet (child Jobs, pods, headless names). Kueue
 * queues the TrainJob itself: Workload trainjob-<name>-<5 hex> with one
 * podset `node` (count numNodes), spec.suspend while queued; the admitted
 * flavors' nodeSelector and tolerations go into
 * spec.podTemplateOverrides (targetJobs [node]), which the JobSet's pod
 * template takes. Status: Suspended while suspended (the JobSet deleted),
 * Complete / Failed from the JobSet's Completed / Failed, jobsStatus.
 *
 * What it does not do: other runtimes (an unknown runtimeRef is refused
 * by validation), initializers (dataset / model), MPI runtimes,
 * TrainingRuntime objects, podTemplateOverrides other than the admitted
 * nodeSelector and tolerations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "jobs/integrations.h"
#include "jobs/pods.h"

#define NODE         "node"
#define TRAINER_PORT 29500

static int64_t num_nodes(const struct fq_value *tj)
{
    return fq_value_path_int(tj, "spec.trainer.numNodes", 1);
}

/* The podTemplateOverrides entry for `node`, made when `make`. */
static struct fq_value * override(struct fq_value *tj, bool make)
{
    struct fq_value *spec = fq_map_get(tj, "spec");
    struct fq_value *ovs = fq_map_get(spec, "podTemplateOverrides");
    for (size_t i = 0; i < fq_value_len(ovs); i++) {
        struct fq_value *o = fq_seq_at(ovs, i);
        const struct fq_value *tj_ = fq_map_get(o, "targetJobs");
        for (size_t k = 0; k < fq_value_len(tj_); k++)
            if (!strcmp(fq_value_path_str(fq_seq_at(tj_, k), "name", ""), NODE))
                return o;
    }
    if (!make || !spec)
        return NULL;
    if (!ovs || ovs->type != FQ_V_SEQ) {
        ovs = fq_value_seq();
        fq_map_set(spec, "podTemplateOverrides", ovs);
    }
    struct fq_value *o = fq_value_map();
    struct fq_value *targets = fq_value_seq();
    struct fq_value *t = fq_value_map();
    fq_map_set(t, "name", fq_value_str(NODE));
    fq_seq_push(targets, t);
    fq_map_set(o, "targetJobs", targets);
    fq_map_set(o, "spec", fq_value_map());
    fq_seq_push(ovs, o);
    return o;
}

/* The pod template of the `node` replicated job; returns owned. */
static struct fq_value *node_template(const struct fq_value *tj)
{
    const char *name = fq_meta_name(tj);
    const struct fq_value *tr = fq_value_path(tj, "spec.trainer");
    struct fq_value *t = fq_value_map();
    struct fq_value *spec = fq_map_ensure_map(t, "spec");
    fq_map_set(spec, "restartPolicy", fq_value_str("OnFailure"));
    struct fq_value *c = fq_value_map();
    fq_map_set(c, "name", fq_value_str(NODE));
    fq_map_set(c, "image", fq_value_str(fq_value_path_str(tr, "image", "")));
    if (fq_map_get(tr, "command"))
        fq_map_set(c, "command", fq_value_clone(fq_map_get(tr, "command")));
    if (fq_map_get(tr, "args"))
        fq_map_set(c, "args", fq_value_clone(fq_map_get(tr, "args")));
    if (fq_map_get(tr, "resourcesPerNode"))
        fq_map_set(c, "resources",
                   fq_value_clone(fq_map_get(tr, "resourcesPerNode")));
    struct fq_value *ports = fq_value_seq();
    struct fq_value *port = fq_value_map();
    fq_map_set(port, "containerPort", fq_value_int(TRAINER_PORT));
    fq_seq_push(ports, port);
    fq_map_set(c, "ports", ports);
    struct fq_value *env = fq_value_seq();
    const struct fq_value *uenv = fq_map_get(tr, "env");
    for (size_t i = 0; i < fq_value_len(uenv); i++)
        if (strcmp(fq_value_path_str(fq_seq_at(uenv, i), "name", ""),
                   "PET_NODE_RANK"))
            fq_seq_push(env, fq_value_clone(fq_seq_at(uenv, i)));
    fq_map_set(c, "env", env);
    struct fq_value *cs = fq_value_seq();
    fq_seq_push(cs, c);
    fq_map_set(spec, "containers", cs);
    /* Trainer's torch env wins over the user's of the same name. */
    char buf[300];
    snprintf(buf, sizeof(buf), "%lld", (long long)num_nodes(tj));
    fq_pods_set_env(spec, "PET_NNODES", buf);
    const struct fq_value *np = fq_value_path(tr, "numProcPerNode");
    const char *nps = fq_value_as_str(np);
    if (np && np->type == FQ_V_NUM)
        snprintf(buf, sizeof(buf), "%lld",
                 (long long)fq_value_path_int(tr, "numProcPerNode", 1));
    else
        snprintf(buf, sizeof(buf), "%s", nps ? nps : "auto");
    fq_pods_set_env(spec, "PET_NPROC_PER_NODE", buf);
    snprintf(buf, sizeof(buf), "%s-" NODE "-0-0.%s", name, name);
    fq_pods_set_env(spec, "PET_MASTER_ADDR", buf);
    snprintf(buf, sizeof(buf), "%d", TRAINER_PORT);
    fq_pods_set_env(spec, "PET_MASTER_PORT", buf);
    /* PET_NODE_RANK is the completion index (a downward-API value). */
    struct fq_value *rank = fq_value_map();
    fq_map_set(rank, "name", fq_value_str("PET_NODE_RANK"));
    struct fq_value *vf = fq_map_ensure_map(rank, "valueFrom");
    fq_map_set(
        fq_map_ensure_map(vf, "fieldRef"), "fieldPath",
        fq_value_str("metadata.annotations['" FQ_ANN_COMPLETION_INDEX "']"));
    fq_seq_push(fq_map_get(c, "env"), rank);
    return t;
}

/* --- the jobframework's row ---------------------------------------------- */

static struct fq_value *tj_podsets(const struct fq_value *tj)
{
    struct fq_value *pss = fq_value_seq();
    struct fq_value *ps = fq_value_map();
    fq_map_set(ps, "name", fq_value_str(NODE));
    fq_map_set(ps, "count", fq_value_int(num_nodes(tj)));
    fq_map_set(ps, "template", node_template(tj));
    fq_seq_push(pss, ps);
    return pss;
}

static struct fq_value *tj_template_of(struct fq_value *tj, const char *ps)
{
    if (strcmp(ps, NODE))
        return NULL;
    return override(tj, true);
}

static void tj_status(const struct fq_value *tj, struct fq_jobstate *st)
{
    const struct fq_value *s = fq_map_get(tj, "status");
    memset(st, 0, sizeof(*st));
    st->msg = "";
    if (fq_pods_cond_true(s, "Complete")) {
        st->finished = st->ok = true;
    } else if (fq_pods_cond_true(s, "Failed")) {
        st->finished = true;
        st->msg = fq_value_path_str(fq_pods_cond(s, "Failed"), "message", "");
    }
    const struct fq_value *js = fq_map_get(s, "jobsStatus");
    int64_t ready = 0;
    for (size_t i = 0; i < fq_value_len(js); i++)
        ready += fq_value_path_int(fq_seq_at(js, i), "ready", 0) +
                 fq_value_path_int(fq_seq_at(js, i), "succeeded", 0);
    st->ready = ready >= 1;
}

const struct fq_integration fq_trainjob_integration = {
    .kind = FQ_KIND_TRAINJOB,
    .prefix = "trainjob",
    .suspend_path = "spec.suspend",
    .podsets = tj_podsets,
    .template_of = tj_template_of,
    .status = tj_status,
};

/* --- the JobSet ---------------------------------------------------------- */

/* tj: the reconcile's own copy (override() finds its entry in it). */
static void create_jobset(struct fq_engine *e, struct fq_value *tj, int64_t now)
{
    const char *ns = fq_value_path_str(tj, FQ_META_NAMESPACE, "default");
    const char *name = fq_meta_name(tj);
    struct fq_value *js = fq_value_map();
    fq_map_set(js, "apiVersion", fq_value_str("jobset.x-k8s.io/v1alpha2"));
    fq_map_set(js, "kind", fq_value_str("JobSet"));
    struct fq_value *md = fq_map_ensure_map(js, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str(ns));
    struct fq_value *ors = fq_value_seq();
    fq_seq_push(ors, fq_pods_owner_ref(tj));
    fq_map_set(md, "ownerReferences", ors);
    fq_pods_set_label(js, "trainer.kubeflow.org/trainjob-ancestor-step",
                      "trainer");
    struct fq_value *t = node_template(tj);
    fq_pods_set_label(t, "trainer.kubeflow.org/trainjob-ancestor-step",
                      "trainer");
    const struct fq_value *ov = override(tj, false);
    const struct fq_value *ovs = fq_map_get(ov, "spec");
    struct fq_value *pspec = fq_map_get(t, "spec");
    if (fq_map_get(ovs, "nodeSelector"))
        fq_map_set(pspec, "nodeSelector",
                   fq_value_clone(fq_map_get(ovs, "nodeSelector")));
    if (fq_map_get(ovs, "tolerations"))
        fq_map_set(pspec, "tolerations",
                   fq_value_clone(fq_map_get(ovs, "tolerations")));
    struct fq_value *job = fq_value_map();
    struct fq_value *jspec = fq_map_ensure_map(job, "spec");
    fq_map_set(jspec, "parallelism", fq_value_int(num_nodes(tj)));
    fq_map_set(jspec, "completions", fq_value_int(num_nodes(tj)));
    fq_map_set(jspec, "completionMode", fq_value_str("Indexed"));
    fq_map_set(jspec, "template", t);
    struct fq_value *rj = fq_value_map();
    fq_map_set(rj, "name", fq_value_str(NODE));
    fq_map_set(rj, "replicas", fq_value_int(1));
    fq_map_set(rj, "template", job);
    struct fq_value *rjs = fq_value_seq();
    fq_seq_push(rjs, rj);
    fq_map_set(fq_map_ensure_map(js, "spec"), "replicatedJobs", rjs);
    fq_pods_create(e, js, now, tj, "SuccessfulCreate");
}

static void delete_jobset(struct fq_engine *e, const char *ns, const char *name)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_JOBSET, ns, name);
    if (!o || !fq_pods_owned_by(o->obj, "TrainJob", name, NULL))
        return;
    /* The JobSet's Jobs and their pods (it owns no Workload: it is not
     * queued), then the JobSet. */
    fq_pods_delete_owned(e, ns, "JobSet", name);
    fq_objstore_delete(s, FQ_KIND_JOBSET, ns, name, NULL);
}

static void reconcile(struct fq_engine *e, const char *ns, const char *name,
                      int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_TRAINJOB, ns, name);
    if (!o)
        return;
    struct fq_value *tj = fq_value_clone(o->obj);
    struct fq_value *st = fq_value_clone(fq_map_get(tj, "status"));
    if (!st)
        st = fq_value_map();
    if (fq_pods_cond_true(st, "Complete") || fq_pods_cond_true(st, "Failed"))
        goto out;
    if (fq_value_path_bool(tj, FQ_SPEC_SUSPEND, false)) {
        delete_jobset(e, ns, name);
        fq_pods_cond_set(st, "Suspended", "True", "Suspended",
                         "TrainJob is suspended", now);
        fq_map_del(st, "jobsStatus");
        goto put;
    }
    if (fq_pods_cond(st, "Suspended"))
        fq_pods_cond_set(st, "Suspended", "False", "Resumed",
                         "TrainJob is resumed", now);
    const struct fq_object *js = fq_objstore_get(s, FQ_KIND_JOBSET, ns, name);
    if (!js) {
        create_jobset(e, tj, now);
        js = fq_objstore_get(s, FQ_KIND_JOBSET, ns, name);
    }
    if (!js || !fq_pods_owned_by(js->obj, "TrainJob", name, NULL))
        goto put;
    const struct fq_value *jst = fq_map_get(js->obj, "status");
    if (fq_map_get(jst, "replicatedJobsStatus"))
        fq_map_set(st, "jobsStatus",
                   fq_value_clone(fq_map_get(jst, "replicatedJobsStatus")));
    if (fq_pods_cond_true(jst, "Completed")) {
        fq_pods_cond_set(st, "Complete", "True", "JobsCompleted",
                         "TrainJob is completed", now);
        fq_engine_event(e, tj, "Normal", "JobsCompleted",
                        "TrainJob is completed");
    } else if (fq_pods_cond_true(jst, "Failed")) {
        fq_pods_cond_set(st, "Failed", "True", "JobsFailed",
                         fq_value_path_str(fq_pods_cond(jst, "Failed"),
                                           "message", "TrainJob failed"),
                         now);
        fq_engine_event(e, tj, "Warning", "JobsFailed", "TrainJob failed");
    }
put:
    fq_pods_put_status(e, FQ_KIND_TRAINJOB, ns, name, st);
    st = NULL;
out:
    fq_value_free(st);
    fq_value_free(tj);
}

/* --- controller ---------------------------------------------------------- */

static void *tc_create(struct fq_engine *e)
{
    (void)e;
    return fq_owner_ctl_new(FQ_KIND_TRAINJOB, "TrainJob",
                            FQ_KIND_BIT(FQ_KIND_JOBSET), reconcile);
}

const struct fq_controller_ops fq_trainjob_controller = {
    .name = "trainjob",
    .watch = FQ_KIND_BIT(FQ_KIND_TRAINJOB) | FQ_KIND_BIT(FQ_KIND_JOBSET),
    .create = tc_create,
    .destroy = fq_owner_ctl_destroy,
    .on_change = fq_owner_ctl_on_change,
    .run = fq_owner_ctl_run,
    .next_wakeup = fq_owner_ctl_next_wakeup,
};
