/*
 * api_ray.c - the Ray Jobs API for RayJobs (see api_ray.h).
 *
 * How it works: every answer is computed from stored objects at request
 * time; there is no separate job table. A RayJob is a Ray "submission" job
 * whose submission_id is status.jobId (KubeRay's `<rayjob>-<5 chars>`).
 * Its status is status.jobStatus (PENDING until the driver runs); the
 * message is Ray's default text for that status, or the RayJob's
 * status.message when it failed. start_time / end_time come from the
 * RayJob's startTime / endTime as Unix milliseconds, as Ray reports them.
 * The driver's log is the submitter pod's log (logs.c). Metrics come from
 * the pods' metrics.jsonl files the training helper appends: the driver's
 * "result" event when there is one, else the last rank-0 "report".
 *
 * Invariants: read-only but for stop; unknown ids answer 404 with Ray's
 * text body. With --tokens a developer sees (lists, gets, reads the logs
 * of, stops) only the RayJobs of its namespaces: the others answer 404
 * as if they did not exist, and the list leaves them out (routes.h).
 *
 * POST /api/jobs/ID/stop (what `ray job stop` sends) stops a running
 * RayJob's Ray job through fq_rayjob_stop (flexq/jobs.h) and answers
 * {"stopped": bool} after the change is committed.
 *
 * What it does not do: submit or delete jobs (a RayJob is the way in on
 * flexq), the logs WebSocket, DRIVER-type jobs.
 */
#include "api/api_ray.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/jobs.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"
#include "runner/logs.h"
#include "runner/runner.h"

#define RAY_VERSION "2.53.0"

static const char *default_message(const char *status)
{
    if (!strcmp(status, "PENDING"))
        return "Job has not started yet. It may be waiting for resources "
               "(the RayJob's workload is queued or its cluster is starting).";
    if (!strcmp(status, "RUNNING"))
        return "Job is currently running.";
    if (!strcmp(status, "STOPPED"))
        return "Job was intentionally stopped.";
    if (!strcmp(status, "SUCCEEDED"))
        return "Job finished successfully.";
    return "Job failed.";
}

static struct fq_value *ms_or_null(const char *rfc3339)
{
    int64_t ms;
    if (rfc3339 && *rfc3339 && fq_time_parse(rfc3339, &ms) == 0)
        return fq_value_int(ms);
    return fq_value_null();
}

/* The last "result" (or rank-0 "report") metrics in a metrics file;
 * returns owned or NULL. */
static struct fq_value *metrics_in(const char *path, bool want_result)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    struct fq_value *best = NULL;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    struct fq_limits lim = fq_limits_default();
    while ((n = getline(&line, &cap, f)) > 0) {
        struct fq_value *ev = NULL;
        if (fq_json_parse(line, (size_t)n, NULL, &lim, &ev, NULL) != 0)
            continue;
        const char *kind = fq_value_path_str(ev, "event", "");
        bool take = want_result ? !strcmp(kind, "result") :
                                  !strcmp(kind, "report") &&
                                      fq_value_path_int(ev, "rank", -1) == 0;
        const struct fq_value *m = fq_map_get(ev, "metrics");
        if (take && m && m->type == FQ_V_MAP) {
            fq_value_free(best);
            best = fq_value_clone(m);
        }
        fq_value_free(ev);
    }
    free(line);
    fclose(f);
    return best;
}

static struct fq_value *job_metrics(const struct fq_objstore *s,
                                    const char *data_dir, const char *ns,
                                    const char *rayjob, const char *cluster)
{
    if (!data_dir)
        return NULL;
    const struct fq_object **pods = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_POD, ns, &pods);
    struct fq_value *out = NULL;
    /* the driver's result first, then rank 0's last report */
    for (int pass = 0; pass < 2 && !out; pass++)
        for (size_t i = 0; i < n && !out; i++) {
            const struct fq_value *l = fq_meta_labels(pods[i]->obj);
            const char *job =
                fq_value_as_str(fq_map_get(l, "batch.kubernetes.io/job-name"));
            const char *cl = fq_value_as_str(fq_map_get(l, "ray.io/cluster"));
            bool mine = pass == 0 ? job && !strcmp(job, rayjob) :
                                    cl && *cluster && !strcmp(cl, cluster);
            if (!mine)
                continue;
            char *dir = fq_runner_pod_dir(data_dir, ns, pods[i]->name);
            char *path = fq_xasprintf("%s/metrics.jsonl", dir);
            out = metrics_in(path, pass == 0);
            free(path);
            free(dir);
        }
    free(pods);
    return out;
}

struct fq_value *fq_api_ray_job_details(const struct fq_objstore *s,
                                        const char *data_dir,
                                        const struct fq_value *rj)
{
    const char *ns = fq_value_path_str(rj, FQ_META_NAMESPACE, "default");
    const char *name = fq_meta_name(rj);
    const struct fq_value *st = fq_map_get(rj, "status");
    const char *id = fq_value_path_str(st, "jobId", name);
    const char *status = fq_value_path_str(st, "jobStatus", "");
    if (!*status)
        status = "PENDING";
    const char *dep = fq_value_path_str(st, "jobDeploymentStatus", "");
    struct fq_value *d = fq_value_map();
    fq_map_set(d, "type", fq_value_str("SUBMISSION"));
    fq_map_set(d, "job_id", fq_value_null());
    fq_map_set(d, "submission_id", fq_value_str(id));
    fq_map_set(d, "driver_info", fq_value_null());
    fq_map_set(d, "status", fq_value_str(status));
    fq_map_set(d, "entrypoint",
               fq_value_str(fq_value_path_str(rj, FQ_RJ_ENTRYPOINT, "")));
    const char *msg = fq_value_path_str(st, "message", "");
    fq_map_set(d, "message",
               fq_value_str(!strcmp(status, "FAILED") && *msg ?
                                msg :
                                default_message(status)));
    const char *reason = fq_value_path_str(st, "reason", "");
    fq_map_set(d, "error_type",
               !strcmp(status, "FAILED") && *reason ? fq_value_str(reason) :
                                                      fq_value_null());
    fq_map_set(d, "start_time",
               ms_or_null(fq_value_path_str(st, "startTime", NULL)));
    fq_map_set(d, "end_time",
               ms_or_null(fq_value_path_str(st, "endTime", NULL)));
    struct fq_value *meta = fq_value_map();
    fq_map_set(meta, "rayjob", fq_value_str(name));
    fq_map_set(meta, "namespace", fq_value_str(ns));
    if (*dep)
        fq_map_set(meta, "jobDeploymentStatus", fq_value_str(dep));
    fq_map_set(d, "metadata", meta);
    /* runtimeEnvYAML as an object, as `ray job submit --runtime-env-json`
     * passes it */
    const char *renv = fq_value_path_str(rj, "spec.runtimeEnvYAML", NULL);
    struct fq_value *env = NULL;
    if (renv) {
        struct fq_docs docs = {0};
        struct fq_limits lim = fq_limits_default();
        if (fq_yaml_parse(renv, strlen(renv), NULL, &lim, &docs, NULL) == 0 &&
            docs.n == 1) {
            env = docs.items[0];
            docs.items[0] = NULL;
            docs.n = 0;
        }
        fq_docs_release(&docs);
    }
    fq_map_set(d, "runtime_env", env ? env : fq_value_map());
    fq_map_set(d, "driver_agent_http_address", fq_value_null());
    fq_map_set(d, "driver_node_id", fq_value_null());
    fq_map_set(d, "driver_exit_code",
               !strcmp(status, "SUCCEEDED") ? fq_value_int(0) :
               !strcmp(status, "FAILED")    ? fq_value_int(1) :
                                              fq_value_null());
    struct fq_value *m = job_metrics(
        s, data_dir, ns, name, fq_value_path_str(st, "rayClusterName", ""));
    fq_map_set(d, "metrics", m ? m : fq_value_null());
    return d;
}

static void reply_json(struct fq_http_req *r, int status,
                       const struct fq_value *v)
{
    char *body = fq_json_dumps(v, FQ_JSON_COMPACT);
    fq_http_reply(r, status, "application/json", body, strlen(body));
    free(body);
}

static void reply_text(struct fq_http_req *r, int status, const char *text)
{
    fq_http_reply(r, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* The RayJob whose job id (or name) is `id`, among those the caller may
 * `verb` (a job of a namespace the token cannot see does not exist for
 * it, as in a namespaced list). */
static const struct fq_object *find_job(struct fq_daemon *d,
                                        struct fq_http_req *r, const char *verb,
                                        const char *id)
{
    const struct fq_objstore *s = fq_engine_store(d->engine);
    const struct fq_object **all = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_RAYJOB, NULL, &all);
    const struct fq_object *hit = NULL;
    for (int pass = 0; pass < 2 && !hit; pass++)
        for (size_t i = 0; i < n && !hit; i++) {
            const char *key =
                pass == 0 ? fq_value_path_str(all[i]->obj, FQ_RJ_JOB_ID, "") :
                            all[i]->name;
            if (!strcmp(key, id) &&
                fq_api_may(d, r, verb, FQ_KIND_RAYJOB, all[i]->ns))
                hit = all[i];
        }
    free(all);
    return hit;
}

void fq_api_ray_handle(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    const char *path = fq_http_path(r);
    const char *method = fq_http_method(r);
    const struct fq_objstore *s = fq_engine_store(d->engine);
    if (!strcmp(path, "/api/version")) {
        struct fq_value *v = fq_value_map();
        fq_map_set(v, "version", fq_value_str("5"));
        fq_map_set(v, "ray_version", fq_value_str(RAY_VERSION));
        fq_map_set(v, "ray_commit", fq_value_str("flexq-" FLEXQ_VERSION));
        fq_map_set(v, "session_name", fq_value_str("flexq"));
        reply_json(r, 200, v);
        fq_value_free(v);
        return;
    }
    if (!strcmp(path, "/api/gcs_healthz")) {
        reply_text(r, 200, "success");
        return;
    }
    size_t pl = strlen(path);
    if (!strcmp(method, "POST") && pl > strlen("/api/jobs//stop") &&
        !strncmp(path, "/api/jobs/", 10) && !strcmp(path + pl - 5, "/stop")) {
        char *id = fq_xstrndup(path + 10, pl - 15);
        const struct fq_object *o = find_job(d, r, "update", id);
        bool stopped = false;
        if (!o) {
            char *msg = fq_xasprintf("Job %s does not exist", id);
            reply_text(r, 404, msg);
            free(msg);
        } else if (fq_rayjob_stop(d->engine, o->ns, o->name, &stopped, NULL) ==
                   0) {
            struct fq_buf b = FQ_BUF_INIT;
            fq_buf_printf(&b, "{\"stopped\": %s}", stopped ? "true" : "false");
            fq_daemon_defer_reply(d, r, 200, "application/json", &b);
            fq_buf_release(&b);
            fq_daemon_wake(d);
        } else {
            reply_text(r, 500, "stop failed");
        }
        free(id);
        return;
    }
    if (strcmp(method, "GET") != 0) {
        reply_text(r, 405,
                   "flexq serves the Ray Jobs API read-only: submit a RayJob "
                   "(flexq apply -f rayjob.yaml) to run a job");
        return;
    }
    const char *rest = path + strlen("/api/jobs");
    while (*rest == '/')
        rest++;
    if (!*rest) {
        const struct fq_object **all = NULL;
        size_t n = fq_objstore_list(s, FQ_KIND_RAYJOB, NULL, &all);
        struct fq_value *list = fq_value_seq();
        for (size_t i = 0; i < n; i++)
            if (fq_api_may(d, r, "list", FQ_KIND_RAYJOB, all[i]->ns))
                fq_seq_push(list, fq_api_ray_job_details(s, d->opts.data_dir,
                                                         all[i]->obj));
        free(all);
        reply_json(r, 200, list);
        fq_value_free(list);
        return;
    }
    char *id = fq_xstrdup(rest);
    char *sub = strchr(id, '/');
    if (sub)
        *sub++ = '\0';
    const struct fq_object *o = find_job(d, r, "get", id);
    if (o && sub && !strcmp(sub, "logs") &&
        !fq_api_may(d, r, "get", FQ_KIND_POD, o->ns))
        o = NULL; /* its logs are the pods' */
    if (!o) {
        char *msg = fq_xasprintf("Job %s does not exist", id);
        reply_text(r, 404, msg);
        free(msg);
    } else if (!sub || !*sub) {
        struct fq_value *v =
            fq_api_ray_job_details(s, d->opts.data_dir, o->obj);
        reply_json(r, 200, v);
        fq_value_free(v);
    } else if (!strcmp(sub, "logs")) {
        struct fq_buf log = FQ_BUF_INIT;
        fq_buf_puts(&log, "");
        char *what = fq_xasprintf("rayjob/%s", o->name);
        fq_logs_target(s, d->opts.data_dir, o->ns, what, NULL, &log, NULL,
                       NULL); /* no pod yet: empty logs, as Ray answers */
        free(what);
        struct fq_value *v = fq_value_map();
        fq_map_set(v, "logs", fq_value_str(fq_buf_str(&log)));
        reply_json(r, 200, v);
        fq_value_free(v);
        fq_buf_release(&log);
    } else {
        reply_text(r, 404, "Not Found");
    }
    free(id);
}

void fq_api_ray_attach(struct fq_daemon *d)
{
    static const struct fq_route_def jobs = {
        .prefix = "/api/jobs",
        .access = FQ_ROUTE_NAMESPACED,
        .methods = "GET,HEAD,POST",
        .kind = FQ_KIND_RAYJOB,
        .read_verb = "get",
        .write_verb = "update",
        .example = "/api/jobs/{id}",
    };
    static const struct fq_route_def version = {
        .prefix = "/api/version",
        .access = FQ_ROUTE_TOKEN,
    };
    static const struct fq_route_def health = {
        .prefix = "/api/gcs_healthz",
        .access = FQ_ROUTE_PUBLIC,
    };
    fq_api_add_route_def(d->api, &jobs, fq_api_ray_handle, NULL);
    fq_api_add_route_def(d->api, &version, fq_api_ray_handle, NULL);
    fq_api_add_route_def(d->api, &health, fq_api_ray_handle, NULL);
}
