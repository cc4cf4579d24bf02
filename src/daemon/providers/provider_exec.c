/*
 * provider_exec.c - the `exec` provider: an administrator's script is the
 * cloud; and the asynchronous script call the providers share.
 *
 * Protocol (docs/capacity.md "Providers", examples/providers/README.md):
 * flexqd runs the script named by FLEXQ_EXEC_PROVIDER by argv (no shell),
 * in its own process group, writes one JSON request to its stdin and
 * closes it, and reads one JSON object from its stdout:
 *
 *   {"op": "list-nodes", "pool": {NodePool spec + name + annotations}}
 *        -> {"nodes": [{"name", "labels", "taints", "allocatable",
 *                       "ready", "addresses"}]}
 *   {"op": "create-nodes", "pool": {...}, "count": N, "slice": ID,
 *    "machineType", "topology", "location", "labels", "taints",
 *    "nodes": [the Node objects flexq would make, as templates]}
 *        -> {"nodes": [{"name", ...}]}   (a multi-host slice: all or none)
 *   {"op": "delete-nodes", "pool": {...}, "slice": ID, "names": [...]}
 *        -> {"deleted": [...]}
 *   {"op": "provision", "provisioningRequest": "ns/name", "count": N,
 *    ...as create-nodes, templates for every slice}
 *        -> {"nodes": [...]}   (a queued pool's request: all or none)
 *   any answer may be {"error": "message"} instead, and a create or
 *   provision may answer {"waiting": "message"}: accepted, not there yet
 *   (asked again, same "id", after FLEXQ_EXEC_SYNC_S).
 *
 * Who asks: the core's autoscaler writes create / delete requests on the
 * NodePool's status.providerRequests (src/core/capacity/provider_protocol.h); sync
 * starts one child per Pending request and, when it answers, creates or
 * deletes the Node objects and marks the request Done, or Failed with the
 * script's message (the core then backs off, as after a stockout). Every
 * FLEXQ_EXEC_SYNC_S (default 30) seconds a list-nodes call per pool
 * mirrors the cloud (nodes created or deleted behind flexq's back).
 *
 *   request:  Pending --child started--> (in flight, kept in memory)
 *                  --answer--> Done | Failed   (written on the NodePool)
 *
 * Children never block the loop: pipes are non-blocking and sync (called
 * on each tick and each SIGCHLD) reads what is there. A call that exceeds
 * its timeout (FLEXQ_EXEC_TIMEOUT_S, default 60) has its process group
 * killed. Every failure is an FQ_EPROVIDER (or FQ_ETIMEOUT) error that
 * names the script and says what happened: cannot execute, timed out,
 * exited with status N (with the last line it wrote to stderr), answered
 * something that is not a JSON object, answered {"error": ...}.
 *
 * Invariants: at most one child per request id and one list per pool; a
 * child is always reaped (waitpid on its pid only, never on -1: the pod
 * runner's children are not ours).
 *
 * What it does not do: ProvisioningRequests (queued pools), retry a
 * request itself (the core asks again after its backoff).
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "providers/provider.h"

#define MAX_OUT (4u << 20)

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The last non-empty line of s (copied into out). */
static void last_line(const char *s, size_t len, char *out, size_t size)
{
    size_t end = len;
    while (end > 0 && (s[end - 1] == '\n' || s[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start > 0 && s[start - 1] != '\n')
        start--;
    snprintf(out, size, "%.*s", (int)(end - start), s + start);
}

struct fq_provider_child {
    pid_t pid;
    int out, er; /* -1 once closed */
    struct fq_buf ob, eb;
    int64_t deadline;
    int64_t timeout_ms;
    bool too_big;
    char *script;
};

int fq_provider_child_start(const char *script, const struct fq_value *request,
                            int64_t timeout_ms, struct fq_provider_child **out,
                            struct fq_err *err)
{
    *out = NULL;
    if (access(script, X_OK) != 0)
        return fq_err_set(err, FQ_EPROVIDER,
                          "provider script %s cannot be executed: %s", script,
                          strerror(errno));
    int in[2], po[2], pe[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return fq_err_set(err, FQ_EIO, "pipe: %s", strerror(errno));
    if (pipe2(po, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return fq_err_set(err, FQ_EIO, "pipe: %s", strerror(errno));
    }
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        close(po[0]);
        close(po[1]);
        return fq_err_set(err, FQ_EIO, "pipe: %s", strerror(errno));
    }
    char *req = fq_json_dumps(request, FQ_JSON_COMPACT);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        dup2(in[0], 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        char *argv[] = {(char *)script, NULL};
        execv(script, argv);
        _exit(127);
    }
    close(in[0]);
    close(po[1]);
    close(pe[1]);
    if (pid < 0) {
        free(req);
        close(in[1]);
        close(po[0]);
        close(pe[0]);
        return fq_err_set(err, FQ_EIO, "fork: %s", strerror(errno));
    }
    setpgid(pid, pid);
    /* The request is small (well under a pipe's buffer): write it whole,
     * then close stdin. A script that exits without reading gets EPIPE. */
    signal(SIGPIPE, SIG_IGN);
    size_t rl = strlen(req), off = 0;
    while (off < rl) {
        ssize_t w = write(in[1], req + off, rl - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(in[1]);
    free(req);
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    struct fq_provider_child *c = fq_xcalloc(1, sizeof(*c));
    c->pid = pid;
    c->out = po[0];
    c->er = pe[0];
    fq_buf_puts(&c->ob, "");
    fq_buf_puts(&c->eb, "");
    c->timeout_ms = timeout_ms;
    c->deadline = mono_ms() + timeout_ms;
    c->script = fq_xstrdup(script);
    *out = c;
    return 0;
}

/* Drains fd into b; closes it at EOF. */
static void drain(struct fq_provider_child *c, int *fd, struct fq_buf *b)
{
    for (;;) {
        char buf[8192];
        ssize_t r = read(*fd, buf, sizeof(buf));
        if (r > 0) {
            if (b->len + (size_t)r > MAX_OUT) {
                c->too_big = true;
                return;
            }
            fq_buf_append(b, buf, (size_t)r);
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        close(*fd);
        *fd = -1;
        return;
    }
}

/* The answer of a child that exited with status st. */
static int judge(struct fq_provider_child *c, int st, bool timed_out,
                 struct fq_value **response, struct fq_err *err)
{
    const char *script = c->script;
    char tail[512];
    last_line(c->eb.data, c->eb.len, tail, sizeof(tail));
    if (timed_out)
        return fq_err_set(err, FQ_ETIMEOUT,
                          "provider script %s timed out after %lld ms (killed)",
                          script, (long long)c->timeout_ms);
    if (c->too_big)
        return fq_err_set(err, FQ_EPROVIDER,
                          "provider script %s wrote more than %u bytes", script,
                          MAX_OUT);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return fq_err_set(
            err, FQ_EPROVIDER, "provider script %s %s %d%s%s", script,
            WIFEXITED(st) ? "exited with status" : "was killed by signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), *tail ? ": " : "",
            tail);
    struct fq_limits lim = fq_limits_default();
    struct fq_err je = {0};
    struct fq_value *v = NULL;
    if (fq_json_parse(c->ob.data, c->ob.len, script, &lim, &v, &je) != 0 ||
        v->type != FQ_V_MAP) {
        char first[200];
        snprintf(first, sizeof(first), "%.120s", c->ob.data);
        first[strcspn(first, "\n")] = '\0';
        int rc = fq_err_set(err, FQ_EPROVIDER,
                            "provider script %s did not answer a JSON "
                            "object: %s (output began \"%s\")",
                            script, v ? "not an object" : je.msg, first);
        fq_value_free(v);
        return rc;
    }
    if (fq_value_as_str(fq_map_get(v, "error"))) {
        int rc = fq_err_set(err, FQ_EPROVIDER, "provider script %s: %s", script,
                            fq_value_as_str(fq_map_get(v, "error")));
        fq_value_free(v);
        return rc;
    }
    *response = v;
    return 0;
}

bool fq_provider_child_poll(struct fq_provider_child *c, int wait_ms,
                            struct fq_value **response, int *rc,
                            struct fq_err *err)
{
    *response = NULL;
    *rc = 0;
    if (c->pid <= 0)
        return true;
    bool timed_out = false;
    if (wait_ms > 0 && (c->out >= 0 || c->er >= 0)) {
        struct pollfd pf[2] = {{c->out, POLLIN, 0}, {c->er, POLLIN, 0}};
        int64_t left = c->deadline - mono_ms();
        if (left < wait_ms)
            wait_ms = left > 0 ? (int)left : 0;
        poll(pf, 2, wait_ms);
    }
    if (c->out >= 0)
        drain(c, &c->out, &c->ob);
    if (c->er >= 0 && !c->too_big)
        drain(c, &c->er, &c->eb);
    int st = 0;
    if (!c->too_big && mono_ms() < c->deadline) {
        if (c->out >= 0 || c->er >= 0)
            return false; /* still writing */
        pid_t w;
        while ((w = waitpid(c->pid, &st, WNOHANG)) < 0 && errno == EINTR)
            ;
        if (w == 0) {
            if (wait_ms > 0) /* pipes closed, exit near: a short nap */
                poll(NULL, 0, 10);
            return false;
        }
    } else {
        timed_out = !c->too_big;
        kill(-c->pid, SIGKILL);
        while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    c->pid = 0;
    *rc = judge(c, st, timed_out, response, err);
    return true;
}

void fq_provider_child_free(struct fq_provider_child *c)
{
    if (!c)
        return;
    if (c->pid > 0) {
        int st;
        kill(-c->pid, SIGKILL);
        while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    if (c->out >= 0)
        close(c->out);
    if (c->er >= 0)
        close(c->er);
    fq_buf_release(&c->ob);
    fq_buf_release(&c->eb);
    free(c->script);
    free(c);
}

int fq_provider_exec_call(const char *script, const struct fq_value *request,
                          int64_t timeout_ms, struct fq_value **response,
                          struct fq_err *err)
{
    *response = NULL;
    struct fq_provider_child *c = NULL;
    int rc = fq_provider_child_start(script, request, timeout_ms, &c, err);
    if (rc != 0)
        return rc;
    while (!fq_provider_child_poll(c, 1000, response, &rc, err))
        ;
    fq_provider_child_free(c);
    return rc;
}

/* --- answers written back (shared with provider_local.c) ------------- */

int fq_provider_request_answer(struct fq_engine *e, const char *pool,
                               const char *id, const char *state,
                               const char *message)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_NODEPOOL, "", pool);
    const struct fq_value *reqs =
        o ? fq_value_path(o->obj, FQ_PR_PROVIDER_REQUESTS) : NULL;
    struct fq_value *copy = fq_value_clone(reqs);
    bool found = false;
    for (size_t i = 0; i < fq_value_len(copy); i++) {
        struct fq_value *r = fq_seq_at(copy, i);
        if (strcmp(fq_value_path_str(r, "id", ""), id))
            continue;
        fq_map_set(r, "state", fq_value_str(state));
        if (message)
            fq_map_set(r, "message", fq_value_str(message));
        found = true;
    }
    if (!found) {
        fq_value_free(copy);
        return FQ_ENOTFOUND;
    }
    return fq_objstore_set_status_key(s, FQ_KIND_NODEPOOL, "", pool,
                                      "providerRequests", copy, NULL, NULL);
}

/* A Node object from an answered node `n` of pool `pool`: the template
 * (one the core made, or NULL) with the answer's name, labels, taints,
 * allocatable and readiness on top. */
static struct fq_value *node_object(const char *pool, const char *provider,
                                    const char *slice,
                                    const struct fq_value *tmpl,
                                    const struct fq_value *n)
{
    const char *name = fq_value_path_str(n, "name", NULL);
    struct fq_value *o = tmpl ? fq_value_clone(tmpl) : fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("v1"));
    fq_map_set(o, "kind", fq_value_str("Node"));
    struct fq_value *md = fq_map_ensure_map(o, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    struct fq_value *labels = fq_map_ensure_map(md, "labels");
    const struct fq_value *l = fq_map_get(n, "labels");
    for (size_t i = 0; l && l->type == FQ_V_MAP && i < l->u.map.n; i++)
        fq_map_set(labels, l->u.map.items[i].key,
                   fq_value_clone(l->u.map.items[i].val));
    fq_map_set(labels, "cloud.google.com/gke-nodepool", fq_value_str(pool));
    fq_map_set(labels, "kubernetes.io/hostname", fq_value_str(name));
    fq_map_set(labels, "flexq.dev/provider", fq_value_str(provider));
    if (slice)
        fq_map_set(labels, "flexq.dev/slice", fq_value_str(slice));
    const struct fq_value *taints = fq_map_get(n, "taints");
    if (taints)
        fq_map_set(fq_map_ensure_map(o, "spec"), "taints",
                   fq_value_clone(taints));
    struct fq_value *st = fq_map_ensure_map(o, "status");
    const struct fq_value *al = fq_map_get(n, "allocatable");
    if (al || !fq_map_get(st, "allocatable")) {
        fq_map_set(st, "allocatable", al ? fq_value_clone(al) : fq_value_map());
        fq_map_set(st, "capacity", al ? fq_value_clone(al) : fq_value_map());
    }
    /* Kubernetes' shape, [{"type": "InternalIP", "address": ...}]: what a
     * Slurm node's NodeAddr says (the slurm executor's rendezvous hosts) */
    const struct fq_value *ad = fq_map_get(n, "addresses");
    if (ad && ad->type == FQ_V_SEQ)
        fq_map_set(st, "addresses", fq_value_clone(ad));
    struct fq_value *c = fq_value_map();
    bool ready = fq_value_path_bool(n, "ready", true);
    fq_map_set(c, "type", fq_value_str("Ready"));
    fq_map_set(c, "status", fq_value_str(ready ? "True" : "False"));
    fq_map_set(c, "reason",
               fq_value_str(ready ? "KubeletReady" : "KubeletNotReady"));
    struct fq_value *conds = fq_value_seq();
    fq_seq_push(conds, c);
    fq_map_set(st, "conditions", conds);
    return o;
}

#define FROM_TEMPLATE "flexq.dev/from-template"

static void mark(struct fq_value *o)
{
    fq_map_set(
        fq_map_ensure_map(fq_map_ensure_map(o, "metadata"), "annotations"),
        FROM_TEMPLATE, fq_value_str("true"));
}

void fq_provider_nodes_put(struct fq_engine *e, const char *pool,
                           const char *provider, const char *slice,
                           const struct fq_value *templates,
                           const struct fq_value *nodes, int64_t now_ms)
{
    struct fq_objstore *s = fq_engine_store(e);
    size_t ti = 0; /* next template: for nodes flexq does not know yet */
    for (size_t i = 0; i < fq_value_len(nodes); i++) {
        const struct fq_value *n = fq_seq_at(nodes, i);
        const char *name = fq_value_path_str(n, "name", NULL);
        if (!name || !*name)
            continue;
        const struct fq_object *cur =
            fq_objstore_get(s, FQ_KIND_NODE, "", name);
        /* known: made from a template already (a list may have mirrored
         * a new node before its create answer came: not known) */
        bool known =
            cur && fq_map_get(fq_meta_annotations(cur->obj), FROM_TEMPLATE);
        const struct fq_value *t = !known && ti < fq_value_len(templates) ?
                                       fq_seq_at(templates, ti++) :
                                       NULL;
        if (cur) {
            struct fq_value *o = node_object(pool, provider, t ? slice : NULL,
                                             t ? t : cur->obj, n);
            const struct fq_value *ann = fq_meta_annotations(cur->obj);
            struct fq_value *oa = fq_map_ensure_map(
                fq_map_ensure_map(o, "metadata"), "annotations");
            for (size_t k = 0;
                 t && ann && ann->type == FQ_V_MAP && k < ann->u.map.n;
                 k++) /* the template's and what was written since */
                fq_map_set(oa, ann->u.map.items[k].key,
                           fq_value_clone(ann->u.map.items[k].val));
            if (t)
                mark(o);
            fq_objstore_update(s, o, true, NULL, NULL, NULL);
            continue;
        }
        struct fq_value *o =
            node_object(pool, provider, t ? slice : NULL, t, n);
        if (t)
            mark(o);
        fq_objstore_create(s, o, now_ms, NULL, NULL, NULL);
    }
}

/* --- the exec provider ------------------------------------------------- */

enum job_kind {
    JOB_LIST,
    JOB_REQUEST
};

struct job {
    enum job_kind kind;
    char *pool, *id, *op, *slice;
    struct fq_value *templates; /* create: the core's Node templates */
    struct fq_value *names;     /* delete: the nodes */
    struct fq_provider_child *child;
    uint64_t seq; /* list: exec_state.answers when it started */
};

struct exec_state {
    char *script;
    int64_t timeout_ms;
    int64_t every_ms;
    int64_t next_ms;
    struct job *jobs;
    size_t njobs, capjobs;
    uint64_t answers; /* requests answered so far */

    /* requests answered {"waiting": ...}: asked again after every_ms */
    struct waiting {
        char *id;
        int64_t until;
    } * waits;

    size_t nwaits, capwaits;
};

/* True while request id waits for its next call; forgets it when due. */
static bool waiting(struct exec_state *s, const char *id, int64_t now_ms)
{
    for (size_t i = 0; i < s->nwaits; i++) {
        if (strcmp(s->waits[i].id, id))
            continue;
        if (now_ms < s->waits[i].until)
            return true;
        free(s->waits[i].id);
        s->waits[i] = s->waits[--s->nwaits];
        return false;
    }
    return false;
}

static int exec_start(struct fq_provider *p, struct fq_err *err)
{
    const char *script = getenv("FLEXQ_EXEC_PROVIDER");
    if (!script || !*script)
        return fq_err_set(err, FQ_EINVAL,
                          "--provider exec needs FLEXQ_EXEC_PROVIDER=PATH of "
                          "the provider script (see examples/providers/)");
    struct exec_state *s = fq_xcalloc(1, sizeof(*s));
    s->script = fq_xstrdup(script);
    const char *t = getenv("FLEXQ_EXEC_TIMEOUT_S");
    s->timeout_ms = (t && atoi(t) > 0 ? atoi(t) : 60) * 1000ll;
    const char *ev = getenv("FLEXQ_EXEC_SYNC_S");
    s->every_ms = (ev && atoi(ev) > 0 ? atoi(ev) : 30) * 1000ll;
    p->state = s;
    return 0;
}

/* Deletes this pool's nodes of `provider` that `nodes` does not list. */
static void forget_unlisted(struct fq_engine *e, const char *pool,
                            const struct fq_value *nodes)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object **all = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_NODE, NULL, &all);
    char **gone = fq_xcalloc(n + 1, sizeof(*gone));
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *l = fq_meta_labels(all[i]->obj);
        const char *pp =
            fq_value_as_str(fq_map_get(l, "cloud.google.com/gke-nodepool"));
        const char *pr = fq_value_as_str(fq_map_get(l, "flexq.dev/provider"));
        if (!pp || strcmp(pp, pool) || !pr || strcmp(pr, "exec"))
            continue;
        bool listed = false;
        for (size_t j = 0; j < fq_value_len(nodes) && !listed; j++)
            listed = !strcmp(fq_value_path_str(fq_seq_at(nodes, j), "name", ""),
                             all[i]->name);
        if (!listed)
            gone[ng++] = fq_xstrdup(all[i]->name);
    }
    free(all);
    for (size_t i = 0; i < ng; i++) {
        fq_objstore_delete(s, FQ_KIND_NODE, "", gone[i], NULL);
        free(gone[i]);
    }
    free(gone);
}

static struct fq_value *pool_value(const struct fq_object *po)
{
    struct fq_value *pool = fq_value_clone(fq_map_get(po->obj, "spec"));
    if (!pool || pool->type != FQ_V_MAP) {
        fq_value_free(pool);
        pool = fq_value_map();
    }
    fq_map_set(pool, "name", fq_value_str(po->name));
    /* the administrator's notes to the script (the Slurm provider's
     * flexq.dev/slurm-partition) */
    const struct fq_value *ann = fq_meta_annotations(po->obj);
    if (ann && ann->type == FQ_V_MAP)
        fq_map_set(pool, "annotations", fq_value_clone(ann));
    return pool;
}

static bool busy(const struct exec_state *s, enum job_kind k, const char *pool,
                 const char *id)
{
    for (size_t i = 0; i < s->njobs; i++)
        if (s->jobs[i].kind == k && !strcmp(s->jobs[i].pool, pool) &&
            (!id || (s->jobs[i].id && !strcmp(s->jobs[i].id, id))))
            return true;
    return false;
}

static void job_release(struct job *j)
{
    fq_provider_child_free(j->child);
    free(j->pool);
    free(j->id);
    free(j->op);
    free(j->slice);
    fq_value_free(j->templates);
    fq_value_free(j->names);
}

/* A finished job's answer (resp owned) or error. */
static void finish(struct fq_provider *p, struct job *j, struct fq_value *resp,
                   int rc, const struct fq_err *err, int64_t now_ms)
{
    struct fq_engine *e = p->engine;
    struct exec_state *s = p->state;
    if (j->kind == JOB_LIST) {
        /* A list that overlapped a create or delete may miss or still
         * show its nodes: the next list will be right. */
        bool stale =
            j->seq != s->answers || busy(s, JOB_REQUEST, j->pool, NULL);
        if (rc == 0 && !stale) {
            const struct fq_value *nodes = fq_map_get(resp, "nodes");
            fq_provider_nodes_put(e, j->pool, "exec", NULL, NULL, nodes,
                                  now_ms);
            forget_unlisted(e, j->pool, nodes);
        } else if (rc != 0) {
            fprintf(stderr, "flexqd: exec provider: pool %s: %s\n", j->pool,
                    err->msg);
        }
        fq_value_free(resp);
        return;
    }
    s->answers++;
    if (rc != 0) {
        fprintf(stderr, "flexqd: exec provider: %s %s: %s\n", j->op, j->id,
                err->msg);
        fq_provider_request_answer(e, j->pool, j->id, "Failed", err->msg);
        fq_value_free(resp);
        return;
    }
    if (fq_value_as_str(fq_map_get(resp, "waiting"))) {
        /* accepted by the cloud, not there yet (a queued resource) */
        FQ_GROW(s->waits, s->capwaits, s->nwaits + 1);
        s->waits[s->nwaits].id = fq_xstrdup(j->id);
        s->waits[s->nwaits++].until = now_ms + s->every_ms;
        fq_value_free(resp);
        return;
    }
    bool provision = !strcmp(j->op, "provision");
    if (!strcmp(j->op, "create-nodes") || provision) {
        const struct fq_value *nodes = fq_map_get(resp, "nodes");
        if (fq_value_len(nodes) == 0) {
            fq_provider_request_answer(e, j->pool, j->id, "Failed",
                                       "provider script answered with no "
                                       "nodes");
        } else {
            /* provision: several slices, labelled by their templates */
            fq_provider_nodes_put(e, j->pool, "exec",
                                  provision ? NULL : j->slice, j->templates,
                                  nodes, now_ms);
            fq_provider_request_answer(e, j->pool, j->id, "Done", NULL);
        }
    } else {
        for (size_t i = 0; i < fq_value_len(j->names); i++) {
            const char *n = fq_value_as_str(fq_seq_at(j->names, i));
            if (n)
                fq_objstore_delete(fq_engine_store(e), FQ_KIND_NODE, "", n,
                                   NULL);
        }
        fq_provider_request_answer(e, j->pool, j->id, "Done", NULL);
    }
    fq_value_free(resp);
}

static void start_job(struct exec_state *s, struct fq_provider *p,
                      struct job *j, struct fq_value *req)
{
    struct fq_err err = {0};
    int rc =
        fq_provider_child_start(s->script, req, s->timeout_ms, &j->child, &err);
    fq_value_free(req);
    if (rc != 0) {
        finish(p, j, NULL, rc, &err, 0);
        job_release(j);
        return;
    }
    FQ_GROW(s->jobs, s->capjobs, s->njobs + 1);
    s->jobs[s->njobs++] = *j;
}

static void start_requests(struct exec_state *s, struct fq_provider *p,
                           const struct fq_object *po, int64_t now_ms)
{
    const struct fq_value *reqs =
        fq_value_path(po->obj, FQ_PR_PROVIDER_REQUESTS);
    for (size_t i = 0; i < fq_value_len(reqs); i++) {
        const struct fq_value *r = fq_seq_at(reqs, i);
        const char *id = fq_value_path_str(r, "id", NULL);
        const char *op = fq_value_path_str(r, "op", "");
        if (!id || strcmp(fq_value_path_str(r, "state", ""), "Pending") ||
            busy(s, JOB_REQUEST, po->name, id) || waiting(s, id, now_ms))
            continue;
        if (strcmp(op, "create-nodes") && strcmp(op, "delete-nodes") &&
            strcmp(op, "provision"))
            continue;
        struct job j = {0};
        j.kind = JOB_REQUEST;
        j.pool = fq_xstrdup(po->name);
        j.id = fq_xstrdup(id);
        j.op = fq_xstrdup(op);
        j.slice = fq_xstrdup(fq_value_path_str(r, "slice", id));
        j.templates = fq_value_clone(fq_map_get(r, "nodes"));
        j.names = fq_value_clone(fq_map_get(r, "names"));
        /* the request as stored, minus flexq's bookkeeping, plus the pool */
        struct fq_value *req = fq_value_clone(r);
        fq_map_del(req, "state"); /* id stays: a script may key on it */
        fq_map_set(req, "pool", pool_value(po));
        start_job(s, p, &j, req);
    }
}

static void exec_sync(struct fq_provider *p, int64_t now_ms)
{
    struct exec_state *s = p->state;
    if (!s)
        return;
    /* answers first: they may unblock new requests */
    for (size_t i = 0; i < s->njobs;) {
        struct fq_value *resp = NULL;
        struct fq_err err = {0};
        int rc = 0;
        if (!fq_provider_child_poll(s->jobs[i].child, 0, &resp, &rc, &err)) {
            i++;
            continue;
        }
        struct job j = s->jobs[i];
        memmove(&s->jobs[i], &s->jobs[i + 1],
                (s->njobs - i - 1) * sizeof(*s->jobs));
        s->njobs--;
        finish(p, &j, resp, rc, &err, now_ms);
        job_release(&j);
    }
    bool list = now_ms >= s->next_ms;
    if (list)
        s->next_ms = now_ms + s->every_ms;
    struct fq_objstore *store = fq_engine_store(p->engine);
    const struct fq_object **pools = NULL;
    size_t n = fq_objstore_list(store, FQ_KIND_NODEPOOL, NULL, &pools);
    /* copies: starting a job writes to the store */
    struct fq_value **objs = fq_xcalloc(n + 1, sizeof(*objs));
    for (size_t i = 0; i < n; i++)
        objs[i] = fq_value_clone(pools[i]->obj);
    free(pools);
    for (size_t i = 0; i < n; i++) {
        struct fq_object po = {0};
        po.obj = objs[i];
        po.name = (char *)fq_meta_name(objs[i]);
        if (list && !busy(s, JOB_LIST, po.name, NULL)) {
            struct job j = {0};
            j.kind = JOB_LIST;
            j.pool = fq_xstrdup(po.name);
            j.seq = s->answers;
            struct fq_value *req = fq_value_map();
            fq_map_set(req, "op", fq_value_str("list-nodes"));
            fq_map_set(req, "pool", pool_value(&po));
            start_job(s, p, &j, req);
        }
        start_requests(s, p, &po, now_ms);
        fq_value_free(objs[i]);
    }
    free(objs);
}

static void exec_stop(struct fq_provider *p)
{
    struct exec_state *s = p->state;
    if (!s)
        return;
    for (size_t i = 0; i < s->njobs; i++)
        job_release(&s->jobs[i]);
    free(s->jobs);
    for (size_t i = 0; i < s->nwaits; i++)
        free(s->waits[i].id);
    free(s->waits);
    free(s->script);
    free(s);
    p->state = NULL;
}

const struct fq_provider_ops fq_provider_exec_ops = {"exec", exec_start,
                                                     exec_sync, exec_stop};
