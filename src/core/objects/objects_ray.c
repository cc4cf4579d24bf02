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
 *
 * Every field is read through a row of fq_ray_fields (below; fields.h),
 * which schema.c also publishes as OpenAPI; the rules across fields above
 * are the decoders' code.
 */
#include <string.h>

#include "flexq/names.h"
#include "objects/fields.h"
#include "objects/objects_internal.h"

/* --- the field table ------------------------------------------------------
 *
 * Every field these decoders read (fields.h): the decoders check each
 * through its row and schema.c publishes the rows as OpenAPI. The cluster
 * spec's rows come twice, under spec.rayClusterSpec of a RayJob and under
 * spec of a RayCluster, from one list (CLUSTER_ROWS).
 */
#define K_RJ FK(FQ_KIND_RAYJOB)
#define K_RC FK(FQ_KIND_RAYCLUSTER)
#define I32P 0, FQ_INT32_MAX
#define WG   "workerGroupSpecs[]."

static const char *const svc_names[] = {"ClusterIP", "NodePort", "LoadBalancer",
                                        NULL};
static const char *const mode_names[] = {
    "K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode", NULL};

/* The rows of a RayClusterSpec, in the order of enum cluster_row. */
enum cluster_row {
    CS_HEAD,
    CS_HEAD_PARAMS,
    CS_HEAD_SVC,
    CS_HEAD_TEMPLATE,
    CS_WORKERS,
    CS_W_NAME,
    CS_W_REPLICAS,
    CS_W_MIN,
    CS_W_MAX,
    CS_W_HOSTS,
    CS_W_SUSPEND,
    CS_W_PARAMS,
    CS_W_TEMPLATE,
    CS_AUTOSCALE,
    CS_VERSION,
    CLUSTER_ROWS
};

enum ray_row {
    RJ_SPEC,
    RJ_MODE,
    RJ_ENTRY,
    RJ_RUNTIME,
    RJ_JOBID,
    RJ_SHUTDOWN,
    RJ_TTL,
    RJ_DEADLINE,
    RJ_BACKOFF,
    RJ_SUSPEND,
    RJ_SELECTOR,
    RJ_SUBMITTER,
    RJ_SUBCONF,
    RJ_SUBCONF_BACKOFF,
    RJ_CS,
    RJ_CLUSTER, /* CLUSTER_ROWS rows */
    RJ_STATUS = RJ_CLUSTER + CLUSTER_ROWS,
    RJ_ST_JOB,
    RJ_ST_DEPLOY,
    RJ_ST_CLUSTER,
    RJ_ST_JOBID,
    RJ_ST_START,
    RJ_ST_END,
    RJ_ST_MESSAGE,
    RC_SPEC,
    RC_CLUSTER, /* CLUSTER_ROWS rows */
    RC_SUSPEND = RC_CLUSTER + CLUSTER_ROWS,
    RC_STATUS,
    RC_ST_STATE,
    RC_ST_DESIRED,
    RC_ST_AVAILABLE,
    RAY_ROWS
};

#define F(row) (&fq_ray_fields[row])

/* The cluster spec's rows at index `base`, paths under prefix P. */
#define CLUSTER_TABLE(base, K, P)                                             \
 [base +                                                                      \
     CS_HEAD] = {K,                                                           \
                 P "headGroupSpec",                                           \
                 FT_MAP,                                                      \
                 FF_REQUIRED,                                                 \
                 0,                                                           \
                 0,                                                           \
                 0,                                                           \
                 0,                                                           \
                 NULL,                                                        \
                 NULL,                                                        \
                 "The head pod: rayStartParams and template."},               \
     [base + CS_HEAD_PARAMS] = {K,                                            \
                                P "headGroupSpec.rayStartParams",             \
                                FT_KVS,                                       \
                                0,                                            \
                                KVS_ANY,                                      \
                                0,                                            \
                                0,                                            \
                                0,                                            \
                                NULL,                                         \
                                NULL,                                         \
                                "ray start flags (string values: quote "      \
                                "numbers)."},                                 \
     [base + CS_HEAD_SVC] = {K,                                               \
                             P "headGroupSpec.serviceType",                   \
                             FT_ENUM,                                         \
                             0,                                               \
                             0,                                               \
                             -1,                                              \
                             0,                                               \
                             0,                                               \
                             svc_names,                                       \
                             NULL,                                            \
                             "The head Service's type."},                     \
     [base + CS_HEAD_TEMPLATE] = {K,                                          \
                                  P "headGroupSpec.template",                 \
                                  FT_OBJ,                                     \
                                  FF_REQUIRED,                                \
                                  0,                                          \
                                  0,                                          \
                                  0,                                          \
                                  0,                                          \
                                  NULL,                                       \
                                  NULL,                                       \
                                  "The head pod's template."},                \
     [base + CS_WORKERS] = {K,                                                \
                            P "workerGroupSpecs",                             \
                            FT_SEQ,                                           \
                            0,                                                \
                            0,                                                \
                            0,                                                \
                            0,                                                \
                            0,                                                \
                            NULL,                                             \
                            NULL,                                             \
                            "Worker groups (at most 16 under Kueue, 17 for "  \
                            "a RayCluster)."},                                \
     [base + CS_W_NAME] = {K,                                                 \
                           P WG "groupName",                                  \
                           FT_NAME,                                           \
                           FF_REQUIRED,                                       \
                           0,                                                 \
                           0,                                                 \
                           0,                                                 \
                           0,                                                 \
                           NULL,                                              \
                           fq_check_dns1123_label,                            \
                           "Name of the worker group, unique."},              \
     [base + CS_W_REPLICAS] = {K,      P WG "replicas",                       \
                               FT_INT, 0,                                     \
                               0,      0,                                     \
                               I32P,   NULL,                                  \
                               NULL,   "Workers wanted."},                    \
     [base +                                                                  \
         CS_W_MIN] = {K,    P WG "minReplicas", FT_INT, 0, 0, 0, I32P, NULL,  \
                      NULL, "Fewest workers."},                               \
     [base + CS_W_MAX] = {K,    P WG "maxReplicas", FT_INT, 0,                \
                          0,    FQ_INT32_MAX,       I32P,   NULL,             \
                          NULL, "Most workers."},                             \
     [base + CS_W_HOSTS] = {K,                                                \
                            P WG "numOfHosts",                                \
                            FT_INT,                                           \
                            0,                                                \
                            0,                                                \
                            1,                                                \
                            1,                                                \
                            FQ_INT32_MAX,                                     \
                            NULL,                                             \
                            NULL,                                             \
                            "Hosts per replica (multi-host TPU slices)."},    \
     [base + CS_W_SUSPEND] = {K,                                              \
                              P WG "suspend",                                 \
                              FT_BOOL,                                        \
                              0,                                              \
                              0,                                              \
                              0,                                              \
                              0,                                              \
                              0,                                              \
                              NULL,                                           \
                              NULL,                                           \
                              "Suspended groups run no pods."},               \
     [base + CS_W_PARAMS] = {K,                                               \
                             P WG "rayStartParams",                           \
                             FT_KVS,                                          \
                             0,                                               \
                             KVS_ANY,                                         \
                             0,                                               \
                             0,                                               \
                             0,                                               \
                             NULL,                                            \
                             NULL,                                            \
                             "ray start flags of the workers."},              \
     [base + CS_W_TEMPLATE] = {K,                                             \
                               P WG "template",                               \
                               FT_OBJ,                                        \
                               FF_REQUIRED,                                   \
                               0,                                             \
                               0,                                             \
                               0,                                             \
                               0,                                             \
                               NULL,                                          \
                               NULL,                                          \
                               "The worker pods' template."},                 \
     [base + CS_AUTOSCALE] = {K,                                              \
                              P "enableInTreeAutoscaling",                    \
                              FT_BOOL,                                        \
                              0,                                              \
                              0,                                              \
                              0,                                              \
                              0,                                              \
                              0,                                              \
                              NULL,                                           \
                              NULL,                                           \
                              "Ray's autoscaler scales worker groups "        \
                              "(elastic under Kueue)."},                      \
     [base +                                                                  \
         CS_VERSION] = {K,    P "rayVersion",    FT_STR, 0, 0, 0, 0, 0, NULL, \
                        NULL, "The Ray version."}

const struct fq_field fq_ray_fields[RAY_ROWS + 1] = {
    /* RayJob */
    [RJ_SPEC] = {K_RJ, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                 "RayJobSpec defines the desired state of RayJob."},
    [RJ_MODE] = {K_RJ, "spec.submissionMode", FT_ENUM, 0, 0, 0, 0, 0,
                 mode_names, NULL, "How the job is submitted to Ray."},
    [RJ_ENTRY] = {K_RJ, "spec.entrypoint", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                  "The command the submitter runs on the Ray cluster "
                  "(required but in InteractiveMode)."},
    [RJ_RUNTIME] = {K_RJ, "spec.runtimeEnvYAML", FT_STR, 0, 0, 0, 0, 0, NULL,
                    NULL, "The Ray runtime environment, as a YAML mapping."},
    [RJ_JOBID] = {K_RJ, "spec.jobId", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                  "The Ray job id (default: generated)."},
    [RJ_SHUTDOWN] = {K_RJ, "spec.shutdownAfterJobFinishes", FT_BOOL, 0, 0, 0, 0,
                     0, NULL, NULL,
                     "Delete the RayCluster when the job finishes (true "
                     "under Kueue)."},
    [RJ_TTL] = {K_RJ, "spec.ttlSecondsAfterFinished", FT_INT, 0, 0, 0, I32P,
                NULL, NULL,
                "Seconds to keep the RayCluster after the job finished."},
    [RJ_DEADLINE] = {K_RJ, "spec.activeDeadlineSeconds", FT_INT, 0, 0, 0, 1,
                     FQ_INT32_MAX, NULL, NULL,
                     "Longest run before the job fails."},
    [RJ_BACKOFF] = {K_RJ, "spec.backoffLimit", FT_INT, 0, 0, 0, I32P, NULL,
                    NULL, "Retries of the whole job."},
    [RJ_SUSPEND] = {K_RJ, "spec.suspend", FT_BOOL, 0, 0, 0, 0, 0, NULL, NULL,
                    "Suspended jobs create no cluster (Kueue resumes them "
                    "on admission)."},
    [RJ_SELECTOR] = {K_RJ, "spec.clusterSelector", FT_KVS, 0, KVS_LABELS, 0, 0,
                     0, NULL, NULL,
                     "Run on an existing RayCluster with these labels."},
    [RJ_SUBMITTER] = {K_RJ, "spec.submitterPodTemplate", FT_OBJ, 0, 0, 0, 0, 0,
                      NULL, NULL, "The submitter Job's pod template."},
    [RJ_SUBCONF] = {K_RJ, "spec.submitterConfig", FT_MAP, 0, 0, 0, 0, 0, NULL,
                    NULL, "The submitter Job's settings."},
    [RJ_SUBCONF_BACKOFF] = {K_RJ, "spec.submitterConfig.backoffLimit", FT_INT,
                            0, 0, 2, I32P, NULL, NULL,
                            "Retries of the submitter."},
    [RJ_CS] = {K_RJ, "spec.rayClusterSpec", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
               "The RayCluster to create for the job (or set "
               "clusterSelector)."},
    CLUSTER_TABLE(RJ_CLUSTER, K_RJ, "spec.rayClusterSpec."),
    [RJ_STATUS] = {K_RJ, "status", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                   "RayJobStatus defines the observed state of RayJob."},
    [RJ_ST_JOB] = {K_RJ, "status.jobStatus", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                   "PENDING, RUNNING, SUCCEEDED, FAILED, STOPPED."},
    [RJ_ST_DEPLOY] = {K_RJ, "status.jobDeploymentStatus", FT_STR, 0, 0, 0, 0, 0,
                      NULL, NULL,
                      "Initializing, Running, Complete, Failed, Suspended "
                      "..."},
    [RJ_ST_CLUSTER] = {K_RJ, "status.rayClusterName", FT_STR, 0, 0, 0, 0, 0,
                       NULL, NULL, "The RayCluster running the job."},
    [RJ_ST_JOBID] = {K_RJ, "status.jobId", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                     "The Ray job id."},
    [RJ_ST_START] = {K_RJ, "status.startTime", FT_STR, FF_SERVER, 0, 0, 0, 0,
                     NULL, NULL, "When the job started."},
    [RJ_ST_END] = {K_RJ, "status.endTime", FT_STR, FF_SERVER, 0, 0, 0, 0, NULL,
                   NULL, "When the job ended."},
    [RJ_ST_MESSAGE] = {K_RJ, "status.message", FT_STR, FF_SERVER, 0, 0, 0, 0,
                       NULL, NULL, "Details of the status."},
    /* RayCluster */
    [RC_SPEC] = {K_RC, "spec", FT_MAP, FF_REQUIRED, 0, 0, 0, 0, NULL, NULL,
                 "RayClusterSpec defines the desired state of RayCluster."},
    CLUSTER_TABLE(RC_CLUSTER, K_RC, "spec."),
    [RC_SUSPEND] = {K_RC, "spec.suspend", FT_BOOL, 0, 0, 0, 0, 0, NULL, NULL,
                    "Suspended clusters run no pods."},
    [RC_STATUS] = {K_RC, "status", FT_MAP, 0, 0, 0, 0, 0, NULL, NULL,
                   "RayClusterStatus defines the observed state."},
    [RC_ST_STATE] = {K_RC, "status.state", FT_STR, 0, 0, 0, 0, 0, NULL, NULL,
                     "ready, suspended ..."},
    [RC_ST_DESIRED] = {K_RC, "status.desiredWorkerReplicas", FT_INT, FF_SERVER,
                       0, 0, I32P, NULL, NULL, "Workers wanted."},
    [RC_ST_AVAILABLE] = {K_RC, "status.availableWorkerReplicas", FT_INT,
                         FF_SERVER, 0, 0, I32P, NULL, NULL, "Workers running."},
};

#define KUEUE_ELASTIC_ANN "kueue.x-k8s.io/elastic-job"

/* rayStartParams is map[string]string: `num-cpus: 0` must be quoted. */
static const struct fq_value *want_start_params(struct dctx *c,
                                                const struct fq_value *m,
                                                const struct fq_field *f)
{
    struct fq_kvs kv;
    fld_kvs(c, m, f, &kv);
    return want_map(c, m, fld_key(f), false);
}

/* `r` is the first of the CLUSTER_ROWS rows of the spec's kind. */
static void decode_cluster_spec(struct dctx *c, const struct fq_value *cs,
                                const struct fq_field *r, size_t max_groups,
                                struct fq_raycluster_spec *out)
{
    memset(out, 0, sizeof(*out));
    const struct fq_value *head = fld_map(c, cs, &r[CS_HEAD]);
    if (head) {
        size_t old = path_key(c, "headGroupSpec");
        out->head_ray_start_params =
            want_start_params(c, head, &r[CS_HEAD_PARAMS]);
        int s = fld_enum(c, head, &r[CS_HEAD_SVC]);
        out->head_service_type = s >= 0 ? svc_names[s] : NULL;
        want_podtemplate(c, head, fld_key(&r[CS_HEAD_TEMPLATE]), true,
                         &out->head_template);
        path_pop(c, old);
    }
    /* The most groups depends on Kueue (the row says so). */
    const struct fq_value *ws =
        want_seq(c, cs, fld_key(&r[CS_WORKERS]), false, 0, max_groups);
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
            g->group_name = fld_str(c, w, &r[CS_W_NAME]);
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
            g->replicas = fld_int(c, w, &r[CS_W_REPLICAS], &g->has_replicas);
            g->min_replicas = fld_int(c, w, &r[CS_W_MIN], NULL);
            g->max_replicas = fld_int(c, w, &r[CS_W_MAX], NULL);
            if (g->min_replicas > g->max_replicas)
                derr_key(c, field(w, "minReplicas"), "minReplicas",
                         "%lld must be less than or equal to maxReplicas "
                         "(%lld)",
                         (long long)g->min_replicas,
                         (long long)g->max_replicas);
            g->num_of_hosts = fld_int(c, w, &r[CS_W_HOSTS], NULL);
            g->suspend = fld_bool(c, w, &r[CS_W_SUSPEND]);
            g->ray_start_params = want_start_params(c, w, &r[CS_W_PARAMS]);
            want_podtemplate(c, w, fld_key(&r[CS_W_TEMPLATE]), true,
                             &g->template);
            path_pop(c, o2);
        }
        path_pop(c, old);
    }
    out->enable_in_tree_autoscaling = fld_bool(c, cs, &r[CS_AUTOSCALE]);
    out->ray_version = fld_str(c, cs, &r[CS_VERSION]);
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
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_RAYJOB, &out->mem,
                   &out->meta) == 0) {
        check_kueue_labels(&c, &out->meta);
        bool kueue = fq_kvs_get(&out->meta.labels, FQ_LABEL_QUEUE_NAME) != NULL;
        const struct fq_value *spec = fld_map(&c, obj, F(RJ_SPEC));
        size_t old = path_key(&c, "spec");
        out->submission_mode =
            (enum fq_submission_mode)fld_enum(&c, spec, F(RJ_MODE));
        out->entrypoint = fld_str(&c, spec, F(RJ_ENTRY));
        if (spec && (!out->entrypoint || !*out->entrypoint) &&
            out->submission_mode != FQ_SUBMIT_INTERACTIVE &&
            !field(spec, "entrypoint"))
            derr_key(&c, spec, "entrypoint",
                     "required field is missing (the command the job runs)");
        out->runtime_env_yaml = fld_str(&c, spec, F(RJ_RUNTIME));
        check_runtime_env(&c, spec, out->runtime_env_yaml);
        out->job_id = fld_str(&c, spec, F(RJ_JOBID));
        out->shutdown_after_job_finishes = fld_bool(&c, spec, F(RJ_SHUTDOWN));
        out->ttl_seconds_after_finished = fld_int(&c, spec, F(RJ_TTL), NULL);
        out->active_deadline_seconds =
            fld_int(&c, spec, F(RJ_DEADLINE), &out->has_active_deadline);
        out->backoff_limit = fld_int(&c, spec, F(RJ_BACKOFF), NULL);
        out->suspend = fld_bool(&c, spec, F(RJ_SUSPEND));
        fld_kvs(&c, spec, F(RJ_SELECTOR), &out->cluster_selector);
        const struct fq_value *sub = fld_map(&c, spec, F(RJ_SUBMITTER));
        if (sub) {
            out->has_submitter_template = true;
            want_podtemplate(&c, spec, fld_key(F(RJ_SUBMITTER)), false,
                             &out->submitter_template);
        }
        out->submitter_backoff_limit = F(RJ_SUBCONF_BACKOFF)->def;
        const struct fq_value *sc = fld_map(&c, spec, F(RJ_SUBCONF));
        if (sc) {
            size_t o2 = path_key(&c, "submitterConfig");
            out->submitter_backoff_limit =
                fld_int(&c, sc, F(RJ_SUBCONF_BACKOFF), NULL);
            path_pop(&c, o2);
        }
        const struct fq_value *cs = fld_map(&c, spec, F(RJ_CS));
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
            decode_cluster_spec(&c, cs, F(RJ_CLUSTER), max_groups,
                                &out->cluster);
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
        const struct fq_value *st = fld_map(&c, obj, F(RJ_STATUS));
        if (st) {
            size_t o2 = path_key(&c, "status");
            out->job_status = fld_str(&c, st, F(RJ_ST_JOB));
            out->job_deployment_status = fld_str(&c, st, F(RJ_ST_DEPLOY));
            out->ray_cluster_name = fld_str(&c, st, F(RJ_ST_CLUSTER));
            out->status_job_id = fld_str(&c, st, F(RJ_ST_JOBID));
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
        const struct fq_value *spec = fld_map(&c, obj, F(RC_SPEC));
        size_t old = path_key(&c, "spec");
        if (spec)
            decode_cluster_spec(&c, spec, F(RC_CLUSTER), kueue ? 17 : 0,
                                &out->spec);
        out->suspend = fld_bool(&c, spec, F(RC_SUSPEND));
        path_pop(&c, old);
        const struct fq_value *st = fld_map(&c, obj, F(RC_STATUS));
        if (st) {
            size_t o2 = path_key(&c, "status");
            out->state = fld_str(&c, st, F(RC_ST_STATE));
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_raycluster_release(struct fq_raycluster *v)
{
    objmem_free(&v->mem);
}
