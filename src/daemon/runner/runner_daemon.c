/*
 * runner_daemon.c - plugs the runner, the logs endpoint and the Ray Jobs
 * API into flexqd through daemon.h's hooks (one call: fq_runtime_attach).
 *
 * How it works:
 *   - SIGCHLD (delivered in the loop by fq_daemon_add_signal) reaps pod
 *     processes; their reports change the store, so the loop is woken to
 *     settle and commit them. An executor's notify_fd (the slurm one's
 *     inotify) is watched the same way (fq_daemon_add_fd).
 *   - Every committed change goes to fq_runner_on_change: a Pod that got
 *     bound starts, a deleted one is stopped.
 *   - A one-second tick (a loop timer, fq_daemon_add_timer, armed only
 *     while pods run or logs are followed) drives fq_runner_poll (SIGKILL
 *     after the grace period, log rotation, pods waiting for a ConfigMap)
 *     and pumps the log followers. The daemon's loop owns libevent; the
 *     timer API is how a module gets a timer without including it.
 *   - GET .../pods|jobs|rayjobs/NAME/log answers the log (tailLines,
 *     limitBytes, previous, and flexq's offset cursor; the reply carries
 *     X-Flexq-Log-Offset); with follow=true it streams until the pod ends;
 *     with format=json (flexq's CLI) it answers {"pod", "log", "offset",
 *     "done"} so that a client can follow by polling with offset.
 *
 * Invariants: a follower is removed exactly once, either when its stream
 * ends here or when http.c reports the client gone (on_close).
 *
 * Pods run through the executor flexqd was started with (executor.h):
 * `local` is the runner (process.c), `slurm` submits each gang as a Slurm
 * job (executor_slurm.c); this file only routes changes and ticks to it.
 *
 * What it does not do: pick nodes (the binder), know about providers (the
 * GPU count comes from provider_local.c when --provider local).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_ray.h"
#include "api/status.h"
#include "daemon.h"
#include "flexq/alloc.h"
#include "flexq/kinds.h"
#include "flexq/paths.h"
#include "log.h"
#include "providers/provider.h"
#include "runner/executor.h"
#include "runner/logs.h"
#include "runner/runner.h"

struct follower {
    struct fq_http_req *req;
    char *ns, *what, *pod;
    int64_t offset;
    bool gone;
};

struct fq_runtime {
    struct fq_daemon *d;
    struct fq_executor x; /* local (the runner) or slurm: executor.h */
    struct follower *f;
    size_t nf, capf;
    bool ticking;
    struct fq_timer *tick; /* once a second while pods or followers live */
    struct fq_provider provider;
};

static void arm(struct fq_runtime *rt)
{
    bool want = rt->x.ops->busy(&rt->x) || rt->nf > 0 ||
                (rt->provider.ops && rt->provider.ops->sync);
    if (want == rt->ticking)
        return;
    fq_daemon_timer_arm(rt->tick, want ? 1000 : 0);
    rt->ticking = want;
}

static bool pod_done(struct fq_runtime *rt, const char *ns, const char *pod)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(rt->d->engine), FQ_KIND_POD, ns, pod);
    if (!o)
        return true;
    const char *ph = fq_value_path_str(o->obj, FQ_POD_PHASE, "");
    return (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")) &&
           !rt->x.ops->pod_live(&rt->x, ns, pod);
}

static void drop_follower(struct fq_runtime *rt, size_t i)
{
    free(rt->f[i].ns);
    free(rt->f[i].what);
    free(rt->f[i].pod);
    rt->f[i] = rt->f[--rt->nf];
}

static void pump(struct fq_runtime *rt)
{
    const struct fq_objstore *s = fq_engine_store(rt->d->engine);
    for (size_t i = 0; i < rt->nf;) {
        struct follower *f = &rt->f[i];
        bool done = pod_done(rt, f->ns, f->pod);
        struct fq_logs_opts o;
        fq_logs_opts_init(&o);
        o.offset = f->offset;
        struct fq_buf b = FQ_BUF_INIT;
        int64_t size = f->offset;
        if (fq_logs_pod(rt->d->opts.data_dir, f->ns, f->pod, &o, &b, &size,
                        NULL) == 0 &&
            b.len) {
            if (fq_http_stream_write(f->req, b.data, b.len) < 0) {
                fq_buf_release(&b);
                drop_follower(rt, i); /* the stream was ended by http.c */
                continue;
            }
        }
        f->offset = size;
        fq_buf_release(&b);
        if (done) {
            /* the banner a killed submitter never printed */
            struct fq_buf tail = FQ_BUF_INIT;
            struct fq_logs_opts t;
            fq_logs_opts_init(&t);
            t.tail_lines = 0;
            if (strchr(f->what, '/') &&
                fq_logs_target(s, rt->d->opts.data_dir, f->ns, f->what, &t,
                               &tail, NULL, NULL) == 0 &&
                tail.len)
                fq_http_stream_write(f->req, tail.data, tail.len);
            fq_buf_release(&tail);
            fq_http_stream_end(f->req);
            drop_follower(rt, i);
            continue;
        }
        i++;
    }
}

/*
 * Appends ,"log":"..." holding `len` bytes of a log. flexq's values are C
 * strings (no NUL), and a pod may print NUL bytes: each run between NULs
 * is quoted by the JSON writer (escapes, invalid UTF-8) and the NULs are
 * put back as \u0000, so a NUL never cuts what follows it. With
 * `replace` (nul=replace: flexq's CLI, whose JSON reader keeps C strings)
 * a NUL becomes U+FFFD instead.
 */
static void json_log_field(struct fq_buf *out, const char *data, size_t len,
                           bool replace)
{
    fq_buf_puts(out, ",\"log\":\"");
    size_t i = 0;
    for (;;) {
        const char *nul = memchr(data + i, '\0', len - i);
        size_t n = nul ? (size_t)(nul - (data + i)) : len - i;
        if (n) {
            struct fq_value *seg = fq_value_strn(data + i, n);
            char *q = fq_json_dumps(seg, FQ_JSON_COMPACT);
            size_t ql = strlen(q);
            if (ql >= 2)
                fq_buf_append(out, q + 1, ql - 2); /* without the quotes */
            free(q);
            fq_value_free(seg);
        }
        i += n;
        if (!nul)
            break;
        fq_buf_puts(out, replace ? "\\ufffd" : "\\u0000");
        i++;
    }
    fq_buf_puts(out, "\"");
}

static void on_stream_close(void *ctx, struct fq_http_req *r)
{
    struct fq_runtime *rt = ctx;
    for (size_t i = 0; i < rt->nf; i++)
        if (rt->f[i].req == r) {
            drop_follower(rt, i);
            return;
        }
}

static int64_t query_int(struct fq_http_req *r, const char *k, int64_t def)
{
    const char *v = fq_http_query(r, k);
    if (!v || !*v)
        return def;
    char *end;
    long long n = strtoll(v, &end, 10);
    return *end ? def : (int64_t)n;
}

/* A pod whose container has not started has no log yet: 400 with
 * Kubernetes' message (kubectl prints it as is). True if answered. */
static bool waiting_to_start(struct fq_daemon *d, struct fq_http_req *r,
                             const struct fq_objstore *s,
                             const struct fq_api_target *t)
{
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_POD, t->ns, t->name);
    const char *fmt = fq_http_query(r, "format");
    if (!o || fq_http_query(r, "previous") || (fmt && !strcmp(fmt, "json")))
        return false; /* flexq's CLI polls with format=json and waits */
    const struct fq_value *cs =
        fq_seq_at(fq_value_path(o->obj, FQ_POD_CONTAINER_STATUSES), 0);
    if (cs && (fq_value_path(cs, FQ_CSTATE_RUNNING) ||
               fq_value_path(cs, FQ_CSTATE_TERMINATED) ||
               fq_value_path_int(cs, "restartCount", 0) > 0))
        return false;
    const char *phase = fq_value_path_str(o->obj, FQ_POD_PHASE, "Pending");
    if (strcmp(phase, "Pending") != 0)
        return false;
    const char *c = fq_http_query(r, "container");
    if (!c)
        c = fq_value_path_str(
            fq_seq_at(fq_value_path(o->obj, FQ_POD_CONTAINERS), 0), "name",
            "main");
    const char *why = fq_value_path_str(cs, FQ_CSTATE_WAITING_REASON, NULL);
    struct fq_err e = {0};
    fq_err_set(&e, FQ_EPARSE,
               "container \"%s\" in pod \"%s\" is waiting to start: %s", c,
               t->name, why ? why : "ContainerCreating");
    fq_api_error(d, r, FQ_EPARSE, &e, "pods", t->name);
    return true;
}

static void on_log(struct fq_daemon *d, struct fq_http_req *r,
                   const struct fq_api_target *t, void *ctx)
{
    struct fq_runtime *rt = ctx;
    const char *kind = t->kind == FQ_KIND_POD    ? "pod" :
                       t->kind == FQ_KIND_JOB    ? "job" :
                       t->kind == FQ_KIND_RAYJOB ? "rayjob" :
                                                   NULL;
    struct fq_err e = {0};
    if (!kind) {
        fq_api_error(d, r, FQ_ENOTFOUND,
                     &(struct fq_err){.msg = "only pods, jobs and rayjobs "
                                             "have logs"},
                     fq_kind_info(t->kind)->plural, t->name);
        return;
    }
    const struct fq_objstore *s = fq_engine_store(d->engine);
    if (t->kind == FQ_KIND_POD && waiting_to_start(d, r, s, t))
        return;
    char *what = fq_xasprintf("%s/%s", kind, t->name);
    struct fq_logs_opts o;
    fq_logs_opts_init(&o);
    o.tail_lines = query_int(r, "tailLines", -1);
    o.limit_bytes = query_int(r, "limitBytes", -1);
    o.offset = query_int(r, "offset", -1);
    const char *prev = fq_http_query(r, "previous");
    o.previous = prev && !strcmp(prev, "true");
    const char *follow = fq_http_query(r, "follow");
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "");
    int64_t size = 0;
    int rc =
        fq_logs_target(s, d->opts.data_dir, t->ns, what, &o, &b, &size, &e);
    if (rc != 0) {
        fq_api_error(d, r, rc, &e, fq_kind_info(t->kind)->plural, t->name);
        fq_buf_release(&b);
        free(what);
        return;
    }
    char off[32];
    snprintf(off, sizeof(off), "%lld", (long long)size);
    fq_http_add_header(r, "X-Flexq-Log-Offset", off);
    if (follow && !strcmp(follow, "true") && !o.previous) {
        char *pod = NULL;
        fq_logs_resolve(s, t->ns, what, &pod, NULL);
        fq_http_stream_start(r, 200, "text/plain; charset=utf-8",
                             on_stream_close, rt);
        if (b.len)
            fq_http_stream_write(r, b.data, b.len);
        FQ_GROW(rt->f, rt->capf, rt->nf + 1);
        rt->f[rt->nf++] =
            (struct follower){r,    fq_xstrdup(t->ns),
                              what, pod ? pod : fq_xstrdup(t->name),
                              size, false};
        fq_buf_release(&b);
        arm(rt);
        return;
    }
    const char *fmt = fq_http_query(r, "format");
    if (fmt && !strcmp(fmt, "json")) {
        /* flexq's CLI: the text plus the follow cursor and whether more
         * can come, in one parseable answer */
        char *pod = NULL;
        fq_logs_resolve(s, t->ns, what, &pod, NULL);
        struct fq_value *v = fq_value_map();
        fq_map_set(v, "pod", fq_value_str(pod ? pod : t->name));
        fq_map_set(v, "offset", fq_value_int(size));
        fq_map_set(v, "done",
                   fq_value_bool(pod_done(rt, t->ns, pod ? pod : t->name)));
        char *body = fq_json_dumps(v, FQ_JSON_COMPACT);
        struct fq_buf j = FQ_BUF_INIT;
        fq_buf_append(&j, body, strlen(body) - 1); /* without the last } */
        const char *nul = fq_http_query(r, "nul");
        json_log_field(&j, b.data, b.len, nul && !strcmp(nul, "replace"));
        fq_buf_puts(&j, "}");
        fq_http_reply(r, 200, "application/json", j.data, j.len);
        fq_buf_release(&j);
        free(body);
        fq_value_free(v);
        free(pod);
    } else {
        fq_http_reply(r, 200, "text/plain; charset=utf-8", b.data, b.len);
    }
    fq_buf_release(&b);
    free(what);
}

static void on_sigchld(struct fq_daemon *d, int signo, void *ctx)
{
    (void)signo;
    struct fq_runtime *rt = ctx;
    rt->x.ops->on_sigchld(&rt->x, fq_daemon_now(d));
    if (rt->provider.ops && rt->provider.ops->sync) /* a script answered? */
        rt->provider.ops->sync(&rt->provider, fq_daemon_now(d));
    pump(rt);
    arm(rt);
    fq_daemon_wake(d);
}

static void on_tick(struct fq_daemon *d, void *ctx)
{
    struct fq_runtime *rt = ctx;
    rt->x.ops->poll(&rt->x, fq_daemon_now(d));
    if (rt->provider.ops && rt->provider.ops->sync)
        rt->provider.ops->sync(&rt->provider, fq_daemon_now(d));
    pump(rt);
    arm(rt);
    fq_daemon_wake(d);
}

static void on_notify(struct fq_daemon *d, void *ctx)
{
    struct fq_runtime *rt = ctx;
    rt->x.ops->on_notify(&rt->x, fq_daemon_now(d));
    pump(rt);
    arm(rt);
    fq_daemon_wake(d);
}

static void on_changes(struct fq_daemon *d, const struct fq_change *c, size_t n,
                       void *ctx)
{
    struct fq_runtime *rt = ctx;
    bool pods = false;
    for (size_t i = 0; i < n; i++)
        if (c[i].kind == FQ_KIND_POD) {
            rt->x.ops->on_change(&rt->x, &c[i], fq_daemon_now(d));
            pods = true;
        }
    if (pods) {
        arm(rt);
        fq_daemon_wake(d); /* the reports need a settle and a commit */
    }
}

struct fq_runtime *fq_runtime_attach(struct fq_daemon *d, struct fq_err *err)
{
    const struct fq_executor_ops *xops = fq_executor_lookup(d->opts.executor);
    if (!xops) {
        fq_err_set(err, FQ_EINVAL, "unknown executor \"%s\"", d->opts.executor);
        return NULL;
    }
    struct fq_runner *r = NULL;
    if (xops == &fq_executor_local_ops) {
        struct fq_runner_config cfg;
        fq_runner_config_init(&cfg);
        cfg.data_dir = d->opts.data_dir;
        if (d->opts.provider && !strcmp(d->opts.provider, "local"))
            cfg.gpus = fq_provider_local_gpus();
        const char *pp = getenv("FLEXQ_PYTHONPATH");
        if (pp && *pp)
            cfg.python_path = pp;
        /* the sandbox: who pods run as, what they never see */
        cfg.pod_user = d->opts.pod_user;
        cfg.allow_run_as_user = d->opts.allow_run_as_user;
        size_t nh = 0;
        if (d->opts.tokens_file)
            cfg.hide[nh++] = d->opts.tokens_file;
        if (d->opts.config_file)
            cfg.hide[nh++] = d->opts.config_file;
        r = fq_runner_new(&cfg, d->engine, err);
        if (!r)
            return NULL;
        /* what isolation is in force on this machine, once at start */
        struct fq_buf caps = FQ_BUF_INIT;
        fq_runner_caps(r, &caps);
        char *save = NULL;
        for (char *line =
                 strtok_r(caps.data ? caps.data : (char *)"", "\n", &save);
             line; line = strtok_r(NULL, "\n", &save))
            fq_log(FQ_LOG_INFO, "pods", "what=\"%s\"", line);
        fq_buf_release(&caps);
    }
    struct fq_runtime *rt = fq_xcalloc(1, sizeof(*rt));
    rt->d = d;
    rt->x = (struct fq_executor){.ops = xops,
                                 .engine = d->engine,
                                 .data_dir = d->opts.data_dir,
                                 .runner = r,
                                 .notify_fd = -1};
    if (xops->start(&rt->x, err) != 0) {
        xops->stop(&rt->x);
        free(rt);
        return NULL;
    }
    const struct fq_provider_ops *ops = fq_provider_lookup(d->opts.provider);
    if (ops && ops->start) {
        rt->provider.ops = ops;
        rt->provider.engine = d->engine;
        if (ops->start(&rt->provider, err) != 0) {
            xops->stop(&rt->x);
            free(rt);
            return NULL;
        }
    }
    fq_daemon_add_signal(d, SIGCHLD, on_sigchld, rt);
    if (rt->x.notify_fd >= 0 && xops->on_notify &&
        fq_daemon_add_fd(d, rt->x.notify_fd, on_notify, rt) != 0)
        fq_log(FQ_LOG_WARN, "executor notifications off", NULL);
    rt->tick = fq_daemon_add_timer(d, on_tick, rt);
    fq_daemon_add_change_listener(d, on_changes, rt);
    fq_api_add_subresource(d->api, "log", on_log, rt);
    fq_api_ray_attach(d);
    /* pods bound before a restart, or while no runner listened; jobs
     * that outlived flexqd (slurm) */
    xops->adopt(&rt->x, fq_daemon_now(d));
    arm(rt);
    return rt;
}

void fq_runtime_detach(struct fq_runtime *rt)
{
    if (!rt)
        return;
    fq_daemon_timer_arm(rt->tick, 0);
    for (size_t i = 0; i < rt->nf; i++) {
        fq_http_stream_end(rt->f[i].req);
        free(rt->f[i].ns);
        free(rt->f[i].what);
        free(rt->f[i].pod);
    }
    free(rt->f);
    if (rt->provider.ops && rt->provider.ops->stop)
        rt->provider.ops->stop(&rt->provider);
    rt->x.ops->stop(&rt->x);
    free(rt);
}
