/*
 * cmd_wait.c - `flexq wait KIND/NAME --for=condition=X | --for=jsonpath=...
 * | --for=delete --timeout=D`.
 *
 * How it works: one GET; if the object already satisfies the condition we
 * are done. Otherwise a watch starts from the object's resourceVersion for
 * that one name (fieldSelector=metadata.name=NAME), so no change between
 * the GET and the watch is missed, and every event is tested until one
 * matches or the timeout passes. There is no polling and no sleep.
 *
 * Conditions: `condition=Admitted` (status True), `condition=Admitted=false`
 * (any status, case-insensitive), `jsonpath={.status.jobStatus}=SUCCEEDED`
 * (dotted path with [N] indexes; quotes around the value are optional),
 * `delete`.
 *
 * Exit status: 0 when met (prints `kind.group/name condition met`), 1 on
 * timeout (`error: timed out waiting for the condition on KIND/NAME`) or
 * an error.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cmdutil.h"
#include "flexq/alloc.h"
#include "flexq/paths.h"
#include "print.h"

enum want {
    W_CONDITION,
    W_JSONPATH,
    W_DELETE
};

struct cond {
    enum want want;
    char *name;  /* condition type, or the jsonpath */
    char *value; /* wanted status / value; NULL = "True" / present */
};

static void strip_quotes(char *s)
{
    size_t n = strlen(s);
    if (n >= 2 && ((s[0] == '"' && s[n - 1] == '"') ||
                   (s[0] == '\'' && s[n - 1] == '\''))) {
        memmove(s, s + 1, n - 2);
        s[n - 2] = '\0';
    }
}

static int parse_for(const char *spec, struct cond *c)
{
    memset(c, 0, sizeof(*c));
    if (!strcmp(spec, "delete")) {
        c->want = W_DELETE;
        return 0;
    }
    if (!strncmp(spec, "condition=", 10)) {
        c->want = W_CONDITION;
        const char *p = spec + 10;
        const char *eq = strchr(p, '=');
        c->name = eq ? fq_xstrndup(p, (size_t)(eq - p)) : fq_xstrdup(p);
        c->value = fq_xstrdup(eq ? eq + 1 : "True");
        return *c->name ? 0 : -1;
    }
    if (!strncmp(spec, "jsonpath=", 9)) {
        c->want = W_JSONPATH;
        const char *p = spec + 9;
        char *copy = fq_xstrdup(p);
        strip_quotes(copy);
        char *close = strchr(copy, '}');
        if (copy[0] != '{' || !close) {
            free(copy);
            return -1;
        }
        c->name = fq_xstrndup(copy + 1, (size_t)(close - copy - 1));
        if (close[1] == '=') {
            c->value = fq_xstrdup(close + 2);
            strip_quotes(c->value);
        } else if (close[1] != '\0') {
            free(copy);
            return -1;
        }
        free(copy);
        return 0;
    }
    return -1;
}

/* Follows ".a.b[0].c" through maps and sequences. */
static const struct fq_value *jsonpath(const struct fq_value *v,
                                       const char *path)
{
    const char *p = path;
    if (*p == '.')
        p++;
    char key[256];
    while (v && *p) {
        size_t k = 0;
        while (*p && *p != '.' && *p != '[' && k < sizeof(key) - 1)
            key[k++] = *p++;
        key[k] = '\0';
        if (k)
            v = fq_map_get(v, key);
        while (v && *p == '[') {
            char *end;
            long i = strtol(p + 1, &end, 10);
            if (*end != ']' || i < 0)
                return NULL;
            v = fq_seq_at(v, (size_t)i);
            p = end + 1;
        }
        if (*p == '.')
            p++;
    }
    return v;
}

static bool scalar_eq(const struct fq_value *v, const char *want)
{
    char buf[64];
    const char *s = NULL;
    if (!v)
        return false;
    if (v->type == FQ_V_STR)
        s = v->u.str.s;
    else if (v->type == FQ_V_NUM)
        s = v->u.num.raw;
    else if (v->type == FQ_V_BOOL)
        s = v->u.b ? "true" : "false";
    else if (v->type == FQ_V_NULL)
        s = "";
    else {
        snprintf(buf, sizeof(buf), "<complex>");
        s = buf;
    }
    return !strcmp(s, want);
}

static bool met(const struct cond *c, const struct fq_value *obj)
{
    if (c->want == W_CONDITION) {
        const char *st = fq_print_condition(obj, c->name);
        return *st && !strcasecmp(st, c->value);
    }
    if (c->want == W_JSONPATH) {
        const struct fq_value *v = jsonpath(obj, c->name);
        return c->value ? scalar_eq(v, c->value) : v != NULL;
    }
    return false;
}

struct wctx {
    const struct cond *c;
    bool done;
};

static int on_event(void *ctx, const char *type, const struct fq_value *obj)
{
    struct wctx *w = ctx;
    if (w->c->want == W_DELETE) {
        w->done = !strcmp(type, "DELETED");
        return w->done;
    }
    if (!strcmp(type, "DELETED"))
        return FQ_ENOTFOUND;
    w->done = met(w->c, obj);
    return w->done;
}

static int wait_one(struct fq_client *c, enum fq_kind kind, const char *ns,
                    const char *name, const struct cond *cond,
                    int64_t timeout_ms)
{
    const struct fq_kind_info *ki = fq_kind_info(kind);
    struct fq_buf label = FQ_BUF_INIT;
    fq_print_name(kind, name, &label);
    char *path = fq_client_path(kind, ns, name, NULL, NULL);
    struct fq_value *obj = NULL;
    struct fq_err err = {0};
    int r = fq_client_get(c, path, &obj, &err);
    free(path);
    int rc = FQ_CLI_OK;
    if (r == FQ_ENOTFOUND && cond->want == W_DELETE) {
        printf("%s condition met\n", fq_buf_str(&label));
        goto out;
    }
    if (r < 0) {
        rc = fq_cmd_fail(r, &err);
        goto out;
    }
    if (met(cond, obj)) {
        printf("%s condition met\n", fq_buf_str(&label));
        goto out;
    }
    if (timeout_ms == 0) {
        fprintf(stderr, "error: timed out waiting for the condition on %s/%s\n",
                ki->plural, name);
        rc = FQ_CLI_FAIL;
        goto out;
    }
    char *esc = fq_client_escape(name);
    char *rv = fq_xstrdup(fq_value_path_str(obj, FQ_META_RV, "0"));
    struct wctx w = {cond, false};
    for (int tries = 0;; tries++) {
        char *q = fq_xasprintf("watch=true&resourceVersion=%s&fieldSelector="
                               "metadata.name%%3D%s",
                               rv, esc);
        path = fq_client_path(kind, ns, NULL, NULL, q);
        free(q);
        r = fq_client_watch(c, path, timeout_ms, on_event, &w, &err);
        free(path);
        if (r != FQ_EGONE || tries >= 2)
            break;
        /* 410: the server's watch history no longer reaches back to the
         * object's revision (it last changed long ago and much changed
         * since). As Kubernetes' clients do: list it, for the current
         * revision, look at it again, and watch from there. */
        memset(&err, 0, sizeof(err));
        q = fq_xasprintf("fieldSelector=metadata.name%%3D%s", esc);
        path = fq_client_path(kind, ns, NULL, NULL, q);
        free(q);
        struct fq_value *list = NULL;
        r = fq_client_get(c, path, &list, &err);
        free(path);
        if (r < 0)
            break;
        const struct fq_value *cur = fq_seq_at(fq_map_get(list, "items"), 0);
        if (!cur || met(cond, cur)) {
            w.done = cond->want == W_DELETE || cur;
            r = w.done ? 0 : FQ_ENOTFOUND; /* deleted while waiting */
            fq_value_free(list);
            break;
        }
        free(rv);
        rv = fq_xstrdup(fq_value_path_str(list, FQ_META_RV, "0"));
        fq_value_free(list);
    }
    free(rv);
    free(esc);
    if (r == 0 && w.done) {
        printf("%s condition met\n", fq_buf_str(&label));
    } else if (r == FQ_ETIMEOUT || (r == 0 && !w.done)) {
        fprintf(stderr, "error: timed out waiting for the condition on %s/%s\n",
                ki->plural, name);
        rc = FQ_CLI_FAIL;
    } else if (r == FQ_ENOTFOUND && !err.msg[0]) {
        fprintf(stderr, "error: %s/%s was deleted while waiting\n", ki->plural,
                name);
        rc = FQ_CLI_FAIL;
    } else {
        rc = fq_cmd_fail(r, &err);
    }
out:
    fflush(stdout);
    fq_value_free(obj);
    fq_buf_release(&label);
    return rc;
}

static int run(int argc, char **argv)
{
    struct fq_cmd_flags f;
    if (fq_cmd_parse("wait", argc, argv, "namespace,for,timeout", &f) < 0)
        return FQ_CLI_FAIL;
    if (!f.for_)
        return fq_cli_usage_error("wait", "--for is required");
    struct cond cond;
    if (parse_for(f.for_, &cond) < 0)
        return fq_cli_usage_error("wait",
                                  "--for=%s: use condition=TYPE[=STATUS], "
                                  "jsonpath='{.path}'=VALUE or delete",
                                  f.for_);
    int64_t timeout = f.timeout ? fq_cmd_duration(f.timeout) : 30000;
    int rc = FQ_CLI_OK;
    if (timeout < 0) {
        rc = fq_cli_usage_error("wait", "--timeout=%s: not a duration",
                                f.timeout);
        goto out;
    }
    struct fq_cmd_target t[FQ_CMD_MAX_ARGS];
    int nt = fq_cmd_targets("wait", &f, t);
    if (nt < 0) {
        rc = FQ_CLI_FAIL;
        goto out;
    }
    struct fq_client *c = fq_client_new(NULL, NULL);
    for (int i = 0; i < nt && rc == FQ_CLI_OK; i++) {
        if (!t[i].name) {
            rc = fq_cli_usage_error("wait", "name the object: KIND/NAME");
            break;
        }
        rc = wait_one(c, t[i].kind, fq_cmd_namespace(&f), t[i].name, &cond,
                      timeout);
    }
    fq_client_free(c);
out:
    free(cond.name);
    free(cond.value);
    return rc;
}

const struct fq_cli_cmd fq_cli_cmd_wait = {
    "wait", run, "Wait for a condition on objects (watch-based)",
    "Usage: flexq wait KIND/NAME... --for=CONDITION [--timeout=30s]\n"
    "\n"
    "  --for=condition=TYPE[=STATUS]   e.g. condition=Admitted,\n"
    "                                  condition=Finished=True\n"
    "  --for=jsonpath='{.PATH}'=VALUE  e.g. jsonpath='{.status.jobStatus}'"
    "=SUCCEEDED\n"
    "  --for=delete                    until the object is gone\n"
    "  --timeout=D                     30s, 5m, 1h; 0 checks once\n"
    "                                  (default 30s)\n"
    "  -n, --namespace NS              namespace (default \"default\")\n"};
