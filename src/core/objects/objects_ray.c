/*
 * objects_ray.c - decoders (= validators) of KubeRay's RayJob and
 * RayCluster (ray.io/v1).
 *
 * KubeRay's own rules: a RayJob name is a DNS-1035 label of at most 47
 * characters (cluster and service names are derived from it); a RayJob
 * needs rayClusterSpec or clusterSelector, not both; an entrypoint unless
 * it is InteractiveMode; the head needs a pod template with a container;
 * worker groups need unique names, numOfHosts >= 1, minReplicas <=
 * maxReplicas; rayStartParams values are strings; runtimeEnvYAML must
 * parse as a YAML mapping.
 *
 * Kueue's rules for a RayJob it manages (label kueue.x-k8s.io/queue-name):
 * shutdownAfterJobFinishes must be true, no clusterSelector, at most 18
 * podSets in all (the head, one per worker group and, in K8sJobMode, the
 * submitter: 16 worker groups, or 17 without a submitter), no group named
 * "head", and
 * enableInTreeAutoscaling only for an elastic job (annotation
 * kueue.x-k8s.io/elastic-job: "true").
 *
 * Replicas outside [minReplicas, maxReplicas] are clamped by KubeRay, not
 * refused; fq_ray_worker_pods does the same.
 */
#include <string.h>

#include "flexq/names.h"
#include "objects/objects_internal.h"

#define KUEUE_ELASTIC_ANN "kueue.x-k8s.io/elastic-job"

/* rayStartParams is map[string]string: `num-cpus: 0` must be quoted. */
static const struct fq_value *want_start_params(struct dctx *c,
                                                const struct fq_value *m)
{
    struct fq_kvs kv;
    want_kvs(c, m, "rayStartParams", KVS_ANY, 0, &kv);
    return want_map(c, m, "rayStartParams", false);
}

static void decode_cluster_spec(struct dctx *c, const struct fq_value *cs,
                                size_t max_groups,
                                struct fq_raycluster_spec *out)
{
    static const char *const svc[] = {"ClusterIP", "NodePort", "LoadBalancer",
                                      NULL};
    memset(out, 0, sizeof(*out));
    const struct fq_value *head = want_map(c, cs, "headGroupSpec", true);
    if (head) {
        size_t old = path_key(c, "headGroupSpec");
        out->head_ray_start_params = want_start_params(c, head);
        int s = want_enum(c, head, "serviceType", svc, -1);
        out->head_service_type = s >= 0 ? svc[s] : NULL;
        want_podtemplate(c, head, "template", true, &out->head_template);
        path_pop(c, old);
    }
    const struct fq_value *ws =
        want_seq(c, cs, "workerGroupSpecs", false, 0, max_groups);
    if (ws) {
        out->workers = MEM_ARRAY(c, struct fq_ray_worker_group, ws->u.seq.n);
        size_t old = path_key(c, "workerGroupSpecs");
        for (size_t i = 0; i < ws->u.seq.n; i++) {
            const struct fq_value *w = ws->u.seq.items[i];
            size_t o2 = path_idx(c, i);
            if (!w || w->type != FQ_V_MAP) {
                derr(c, w, "must be a mapping, not %s", type_word(w));
                path_pop(c, o2);
                continue;
            }
            struct fq_ray_worker_group *g = &out->workers[out->n_workers++];
            g->group_name =
                want_name(c, w, "groupName", true, fq_check_dns1123_label);
            if (g->group_name && max_groups &&
                strcmp(g->group_name, "head") == 0)
                derr_key(c, field(w, "groupName"), "groupName",
                         "\"head\" is reserved for the head pod set under "
                         "Kueue");
            for (size_t j = 0; g->group_name && j + 1 < out->n_workers; j++)
                if (out->workers[j].group_name &&
                    strcmp(out->workers[j].group_name, g->group_name) == 0)
                    derr_key(c, field(w, "groupName"), "groupName",
                             "duplicate worker group \"%s\"", g->group_name);
            g->replicas = want_int(c, w, "replicas", 0, 0, FQ_INT32_MAX,
                                   &g->has_replicas);
            g->min_replicas =
                want_int(c, w, "minReplicas", 0, 0, FQ_INT32_MAX, NULL);
            g->max_replicas = want_int(c, w, "maxReplicas", FQ_INT32_MAX, 0,
                                       FQ_INT32_MAX, NULL);
            if (g->min_replicas > g->max_replicas)
                derr_key(c, field(w, "minReplicas"), "minReplicas",
                         "%lld must be less than or equal to maxReplicas "
                         "(%lld)",
                         (long long)g->min_replicas,
                         (long long)g->max_replicas);
            g->num_of_hosts =
                want_int(c, w, "numOfHosts", 1, 1, FQ_INT32_MAX, NULL);
            g->suspend = want_bool(c, w, "suspend", false);
            g->ray_start_params = want_start_params(c, w);
            want_podtemplate(c, w, "template", true, &g->template);
            path_pop(c, o2);
        }
        path_pop(c, old);
    }
    out->enable_in_tree_autoscaling =
        want_bool(c, cs, "enableInTreeAutoscaling", false);
    out->ray_version = want_str(c, cs, "rayVersion", false);
}

int64_t fq_ray_worker_pods(const struct fq_ray_worker_group *g)
{
    if (g->suspend)
        return 0;
    int64_t r = g->replicas;
    if (r < g->min_replicas)
        r = g->min_replicas;
    if (r > g->max_replicas)
        r = g->max_replicas;
    int64_t n;
    if (fq_mul_overflow(r, g->num_of_hosts, &n) < 0)
        return INT64_MAX;
    return n;
}

/* runtimeEnvYAML is handed to Ray as JSON: it must be a YAML mapping. */
static void check_runtime_env(struct dctx *c, const struct fq_value *spec,
                              const char *text)
{
    if (!text || has_var(text))
        return;
    struct fq_limits lim = fq_limits_default();
    lim.max_bytes = 64 * 1024;
    struct fq_docs docs = {NULL, 0, 0};
    struct fq_err e;
    memset(&e, 0, sizeof(e));
    int rc =
        fq_yaml_parse(text, strlen(text), "runtimeEnvYAML", &lim, &docs, &e);
    const struct fq_value *at = field(spec, "runtimeEnvYAML");
    if (rc < 0)
        derr_key(c, at, "runtimeEnvYAML", "is not valid YAML: %s", e.msg);
    else if (docs.n > 1 || (docs.n == 1 && docs.items[0]->type != FQ_V_MAP))
        derr_key(c, at, "runtimeEnvYAML",
                 "must be one YAML mapping (pip:, env_vars:, ...)");
    fq_docs_release(&docs);
}

int fq_rayjob_decode(const struct fq_value *obj, const char *file,
                     struct fq_rayjob *out, struct fq_errlist *errs)
{
    static const char *const modes[] = {"K8sJobMode", "HTTPMode",
                                        "InteractiveMode", "SidecarMode", NULL};
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_RAYJOB, &out->mem,
                   &out->meta) == 0) {
        check_kueue_labels(&c, &out->meta);
        bool kueue = fq_kvs_get(&out->meta.labels, FQ_LABEL_QUEUE_NAME) != NULL;
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        out->submission_mode = (enum fq_submission_mode)want_enum(
            &c, spec, "submissionMode", modes, 0);
        out->entrypoint = want_str(&c, spec, "entrypoint", false);
        if (spec && (!out->entrypoint || !*out->entrypoint) &&
            out->submission_mode != FQ_SUBMIT_INTERACTIVE &&
            !field(spec, "entrypoint"))
            derr_key(&c, spec, "entrypoint",
                     "required field is missing (the command the job runs)");
        out->runtime_env_yaml = want_str(&c, spec, "runtimeEnvYAML", false);
        check_runtime_env(&c, spec, out->runtime_env_yaml);
        out->job_id = want_str(&c, spec, "jobId", false);
        out->shutdown_after_job_finishes =
            want_bool(&c, spec, "shutdownAfterJobFinishes", false);
        out->ttl_seconds_after_finished = want_int(
            &c, spec, "ttlSecondsAfterFinished", 0, 0, FQ_INT32_MAX, NULL);
        out->active_deadline_seconds =
            want_int(&c, spec, "activeDeadlineSeconds", 0, 1, FQ_INT32_MAX,
                     &out->has_active_deadline);
        out->backoff_limit =
            want_int(&c, spec, "backoffLimit", 0, 0, FQ_INT32_MAX, NULL);
        out->suspend = want_bool(&c, spec, "suspend", false);
        want_kvs(&c, spec, "clusterSelector", KVS_LABELS, 0,
                 &out->cluster_selector);
        const struct fq_value *sub =
            want_map(&c, spec, "submitterPodTemplate", false);
        if (sub) {
            out->has_submitter_template = true;
            want_podtemplate(&c, spec, "submitterPodTemplate", false,
                             &out->submitter_template);
        }
        out->submitter_backoff_limit = 2;
        const struct fq_value *sc =
            want_map(&c, spec, "submitterConfig", false);
        if (sc) {
            size_t o2 = path_key(&c, "submitterConfig");
            out->submitter_backoff_limit =
                want_int(&c, sc, "backoffLimit", 2, 0, FQ_INT32_MAX, NULL);
            path_pop(&c, o2);
        }
        const struct fq_value *cs = want_map(&c, spec, "rayClusterSpec", false);
        bool has_sel = field(spec, "clusterSelector") != NULL;
        if (spec && !cs && !has_sel)
            derr_key(&c, spec, "rayClusterSpec",
                     "required field is missing (or set clusterSelector to "
                     "use an existing RayCluster)");
        if (cs && has_sel && out->cluster_selector.n > 0)
            derr_key(&c, field(spec, "clusterSelector"), "clusterSelector",
                     "must not be set together with rayClusterSpec");
        if (cs) {
            out->has_cluster_spec = true;
            size_t o2 = path_key(&c, "rayClusterSpec");
            /* Under Kueue every group is a podSet of its Workload. */
            size_t max_groups = 0;
            if (kueue)
                max_groups =
                    out->submission_mode == FQ_SUBMIT_K8S_JOB ? 16 : 17;
            decode_cluster_spec(&c, cs, max_groups, &out->cluster);
            path_pop(&c, o2);
        }
        if (kueue && spec) {
            const struct fq_value *sd = field(spec, "shutdownAfterJobFinishes");
            if (!out->shutdown_after_job_finishes &&
                (!sd || sd->type == FQ_V_BOOL))
                derr_key(&c,
                         field(spec, "shutdownAfterJobFinishes") ?
                             field(spec, "shutdownAfterJobFinishes") :
                             spec,
                         "shutdownAfterJobFinishes",
                         "must be true for a job queued by Kueue (label %s)",
                         FQ_LABEL_QUEUE_NAME);
            if (has_sel)
                derr_key(&c, field(spec, "clusterSelector"), "clusterSelector",
                         "a job queued by Kueue cannot run on an existing "
                         "cluster");
            const char *el =
                fq_kvs_get(&out->meta.annotations, KUEUE_ELASTIC_ANN);
            if (out->cluster.enable_in_tree_autoscaling &&
                !(el && strcmp(el, "true") == 0)) {
                size_t o2 = path_key(&c, "rayClusterSpec");
                derr_key(&c, field(cs, "enableInTreeAutoscaling"),
                         "enableInTreeAutoscaling",
                         "needs the annotation %s: \"true\" on a job queued "
                         "by Kueue",
                         KUEUE_ELASTIC_ANN);
                path_pop(&c, o2);
            }
        }
        path_pop(&c, old);
        const struct fq_value *st = want_map(&c, obj, "status", false);
        if (st) {
            size_t o2 = path_key(&c, "status");
            out->job_status = want_str(&c, st, "jobStatus", false);
            out->job_deployment_status =
                want_str(&c, st, "jobDeploymentStatus", false);
            out->ray_cluster_name = want_str(&c, st, "rayClusterName", false);
            out->status_job_id = want_str(&c, st, "jobId", false);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_rayjob_release(struct fq_rayjob *v)
{
    objmem_free(&v->mem);
}

int fq_raycluster_decode(const struct fq_value *obj, const char *file,
                         struct fq_raycluster *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_RAYCLUSTER, &out->mem,
                   &out->meta) == 0) {
        check_kueue_labels(&c, &out->meta);
        bool kueue = fq_kvs_get(&out->meta.labels, FQ_LABEL_QUEUE_NAME) != NULL;
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        if (spec)
            decode_cluster_spec(&c, spec, kueue ? 17 : 0, &out->spec);
        out->suspend = want_bool(&c, spec, "suspend", false);
        path_pop(&c, old);
        const struct fq_value *st = want_map(&c, obj, "status", false);
        if (st) {
            size_t o2 = path_key(&c, "status");
            out->state = want_str(&c, st, "state", false);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_raycluster_release(struct fq_raycluster *v)
{
    objmem_free(&v->mem);
}
