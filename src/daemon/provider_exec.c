/*
 * provider_exec.c - the `exec` provider: an administrator's script is the
 * cloud.
 *
 * Protocol (docs/runtime.md): flexqd runs the script named by
 * FLEXQ_EXEC_PROVIDER by argv (no shell), in its own process group, writes
 * one JSON request to its stdin and closes it, and reads one JSON object
 * from its stdout:
 *
 *   {"op": "list-nodes", "pool": {NodePool spec + name}}
 *        -> {"nodes": [{"name", "labels", "taints", "allocatable",
 *                       "ready"}]}
 *   {"op": "create-nodes", "pool": {...}, "count": N}
 *        -> {"nodes": [...]}            (a multi-host slice: all or none)
 *   {"op": "delete-nodes", "pool": {...}, "names": [...]}
 *        -> {"deleted": [...]}
 *   any answer may be {"error": "message"} instead.
 *
 * A call that exceeds its timeout (FLEXQ_EXEC_TIMEOUT_S, default 60) has its
 * process group killed. Every failure is an FQ_EPROVIDER error that names
 * the script and says what happened: cannot execute, timed out, exited
 * with status N (with the last line it wrote to stderr), answered
 * something that is not a JSON object, answered {"error": ...}.
 *
 * How the nodes are kept: every FLEXQ_EXEC_SYNC_S (default 30) seconds,
 * sync asks list-nodes for each NodePool and mirrors the answer into Node
 * objects labelled with the pool (created, updated, deleted).
 *
 * What it does not do yet: decide scale-ups. The core's autoscaler acts
 * only with the sim provider; create-nodes / delete-nodes are offered by
 * the scripts and callable (fq_provider_exec_call) but nothing calls them
 * on pending pods. Calls are synchronous: a slow script holds the daemon's
 * loop up to the timeout.
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
#include "provider.h"

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

int fq_provider_exec_call(const char *script, const struct fq_value *request,
                          int64_t timeout_ms, struct fq_value **response,
                          struct fq_err *err)
{
    *response = NULL;
    if (access(script, X_OK) != 0)
        return fq_err_set(err, FQ_EPROVIDER,
                          "provider script %s cannot be executed: %s", script,
                          strerror(errno));
    int in[2], out[2], er[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return fq_err_set(err, FQ_EIO, "pipe: %s", strerror(errno));
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return fq_err_set(err, FQ_EIO, "pipe: %s", strerror(errno));
    }
    if (pipe2(er, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        return fq_err_set(err, FQ_EIO, "pipe: %s", strerror(errno));
    }
    char *req = fq_json_dumps(request, FQ_JSON_COMPACT);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(er[1], 2);
        char *argv[] = {(char *)script, NULL};
        execv(script, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(er[1]);
    if (pid < 0) {
        free(req);
        close(in[1]);
        close(out[0]);
        close(er[0]);
        return fq_err_set(err, FQ_EIO, "fork: %s", strerror(errno));
    }
    setpgid(pid, pid);
    /* the request is small: write it whole, then close stdin */
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

    struct fq_buf ob = FQ_BUF_INIT, eb = FQ_BUF_INIT;
    fq_buf_puts(&ob, "");
    fq_buf_puts(&eb, "");
    int64_t deadline = mono_ms() + timeout_ms;
    bool timed_out = false, too_big = false;
    int open_fds = 2;
    struct pollfd pf[2] = {{out[0], POLLIN, 0}, {er[0], POLLIN, 0}};
    while (open_fds > 0) {
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        int n = poll(pf, 2, (int)(left > 1000 ? 1000 : left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP)))
                continue;
            char buf[8192];
            ssize_t r = read(pf[i].fd, buf, sizeof(buf));
            if (r > 0) {
                struct fq_buf *b = i == 0 ? &ob : &eb;
                if (b->len + (size_t)r > MAX_OUT)
                    too_big = true;
                else
                    fq_buf_append(b, buf, (size_t)r);
            } else if (r == 0 || errno != EINTR) {
                close(pf[i].fd);
                pf[i].fd = -1;
                open_fds--;
            }
        }
        if (too_big)
            break;
    }
    if (timed_out || too_big)
        kill(-pid, SIGKILL);
    for (int i = 0; i < 2; i++)
        if (pf[i].fd >= 0)
            close(pf[i].fd);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    int rc = 0;
    char tail[512];
    last_line(eb.data, eb.len, tail, sizeof(tail));
    if (timed_out) {
        rc = fq_err_set(err, FQ_ETIMEOUT,
                        "provider script %s timed out after %lld ms (killed)",
                        script, (long long)timeout_ms);
    } else if (too_big) {
        rc = fq_err_set(err, FQ_EPROVIDER,
                        "provider script %s wrote more than %u bytes", script,
                        MAX_OUT);
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        rc = fq_err_set(
            err, FQ_EPROVIDER, "provider script %s %s %d%s%s", script,
            WIFEXITED(st) ? "exited with status" : "was killed by signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), *tail ? ": " : "",
            tail);
    } else {
        struct fq_limits lim = fq_limits_default();
        struct fq_err je = {0};
        struct fq_value *v = NULL;
        if (fq_json_parse(ob.data, ob.len, script, &lim, &v, &je) != 0 ||
            v->type != FQ_V_MAP) {
            char first[200];
            snprintf(first, sizeof(first), "%.120s", ob.data);
            first[strcspn(first, "\n")] = '\0';
            rc = fq_err_set(err, FQ_EPROVIDER,
                            "provider script %s did not answer a JSON "
                            "object: %s (output began \"%s\")",
                            script, v ? "not an object" : je.msg, first);
            fq_value_free(v);
        } else if (fq_value_as_str(fq_map_get(v, "error"))) {
            rc = fq_err_set(err, FQ_EPROVIDER, "provider script %s: %s", script,
                            fq_value_as_str(fq_map_get(v, "error")));
            fq_value_free(v);
        } else {
            *response = v;
        }
    }
    fq_buf_release(&ob);
    fq_buf_release(&eb);
    return rc;
}

struct exec_state {
    char *script;
    int64_t timeout_ms;
    int64_t every_ms;
    int64_t next_ms;
};

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
    const char *e = getenv("FLEXQ_EXEC_SYNC_S");
    s->every_ms = (e && atoi(e) > 0 ? atoi(e) : 30) * 1000ll;
    p->state = s;
    return 0;
}

static void mirror(struct fq_provider *p, const char *pool,
                   const struct fq_value *nodes, int64_t now_ms)
{
    struct fq_objstore *s = fq_engine_store(p->engine);
    /* create / update what the script lists */
    for (size_t i = 0; i < fq_value_len(nodes); i++) {
        const struct fq_value *n = fq_seq_at(nodes, i);
        const char *name = fq_value_path_str(n, "name", NULL);
        if (!name)
            continue;
        struct fq_value *o = fq_value_map();
        fq_map_set(o, "apiVersion", fq_value_str("v1"));
        fq_map_set(o, "kind", fq_value_str("Node"));
        struct fq_value *md = fq_map_ensure_map(o, "metadata");
        fq_map_set(md, "name", fq_value_str(name));
        const struct fq_value *l = fq_map_get(n, "labels");
        struct fq_value *labels = l ? fq_value_clone(l) : fq_value_map();
        fq_map_set(labels, "cloud.google.com/gke-nodepool", fq_value_str(pool));
        fq_map_set(labels, "flexq.dev/provider", fq_value_str("exec"));
        fq_map_set(md, "labels", labels);
        const struct fq_value *taints = fq_map_get(n, "taints");
        if (taints)
            fq_map_set(fq_map_ensure_map(o, "spec"), "taints",
                       fq_value_clone(taints));
        struct fq_value *st = fq_map_ensure_map(o, "status");
        const struct fq_value *al = fq_map_get(n, "allocatable");
        fq_map_set(st, "allocatable", al ? fq_value_clone(al) : fq_value_map());
        fq_map_set(st, "capacity", al ? fq_value_clone(al) : fq_value_map());
        struct fq_value *c = fq_value_map();
        bool ready = fq_value_path_bool(n, "ready", true);
        fq_map_set(c, "type", fq_value_str("Ready"));
        fq_map_set(c, "status", fq_value_str(ready ? "True" : "False"));
        struct fq_value *conds = fq_value_seq();
        fq_seq_push(conds, c);
        fq_map_set(st, "conditions", conds);
        if (fq_objstore_get(s, FQ_KIND_NODE, "", name))
            fq_objstore_update(s, o, true, NULL, NULL, NULL);
        else
            fq_objstore_create(s, o, now_ms, NULL, NULL, NULL);
    }
    /* delete this pool's exec nodes the script no longer lists */
    const struct fq_object **all = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_NODE, NULL, &all);
    char **gone = fq_xcalloc(n + 1, sizeof(*gone));
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *l =
            fq_value_path(all[i]->obj, "metadata.labels");
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

static void exec_sync(struct fq_provider *p, int64_t now_ms)
{
    struct exec_state *s = p->state;
    if (!s || now_ms < s->next_ms)
        return;
    s->next_ms = now_ms + s->every_ms;
    struct fq_objstore *store = fq_engine_store(p->engine);
    const struct fq_object **pools = NULL;
    size_t n = fq_objstore_list(store, FQ_KIND_NODEPOOL, NULL, &pools);
    char **names = fq_xcalloc(n + 1, sizeof(*names));
    struct fq_value **reqs = fq_xcalloc(n + 1, sizeof(*reqs));
    for (size_t i = 0; i < n; i++) {
        names[i] = fq_xstrdup(pools[i]->name);
        struct fq_value *req = fq_value_map();
        fq_map_set(req, "op", fq_value_str("list-nodes"));
        struct fq_value *pool =
            fq_value_clone(fq_map_get(pools[i]->obj, "spec"));
        if (!pool || pool->type != FQ_V_MAP) {
            fq_value_free(pool);
            pool = fq_value_map();
        }
        fq_map_set(pool, "name", fq_value_str(pools[i]->name));
        fq_map_set(req, "pool", pool);
        reqs[i] = req;
    }
    free(pools);
    for (size_t i = 0; i < n; i++) {
        struct fq_value *resp = NULL;
        struct fq_err e = {0};
        if (fq_provider_exec_call(s->script, reqs[i], s->timeout_ms, &resp,
                                  &e) == 0)
            mirror(p, names[i], fq_map_get(resp, "nodes"), now_ms);
        else
            fprintf(stderr, "flexqd: exec provider: pool %s: %s\n", names[i],
                    e.msg);
        fq_value_free(resp);
        fq_value_free(reqs[i]);
        free(names[i]);
    }
    free(names);
    free(reqs);
}

static void exec_stop(struct fq_provider *p)
{
    struct exec_state *s = p->state;
    if (!s)
        return;
    free(s->script);
    free(s);
    p->state = NULL;
}

const struct fq_provider_ops fq_provider_exec_ops = {"exec", exec_start,
                                                     exec_sync, exec_stop};
