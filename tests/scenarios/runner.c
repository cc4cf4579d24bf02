/*
 * runner.c - replays a scenario file through fq_engine with an injected
 * clock and checks expectations on stored objects.
 *
 * Usage: scenario_runner FILE.yaml [-v]
 *
 * A scenario is one YAML document:
 *
 *   name: tutorial, two jobs         # free text
 *   config:                          # engine config (all optional)
 *     policy: kueue                  # kueue | default (fq_policy_*), default
 *                                    # is "default"; then per switch:
 *     max_admissions_per_cq_per_cycle: 1
 *     migrate_to_preferred_flavor: false
 *     flavor_failure_cooldown: false
 *     flavor_cooldown: 10m
 *     preemption_grace: 1s
 *     pending_message_refresh: 60s   # 0s: every change at once
 *     stockout_fallback: false
 *     stockout_fallback_after: 10m
 *     no_pods: true                  # default true (workload granularity)
 *     sim_provider: true
 *     time_scale: 1.0
 *     seed: 1
 *     pods_ready: {enable: true, timeout: 5m, recovery_timeout: 5m,
 *                  backoff_limit_count: -1, backoff_base: 60s,
 *                  backoff_max: 1h, timestamp_eviction: true}
 *     fair_sharing: {enable: true,   # Kueue's Configuration fairSharing
 *                    preemptionStrategies: [LessThanInitialShare]}
 *   start: "2026-01-01T00:00:00Z"    # engine time of t=0 (this default)
 *   vars: {ONDEMAND_NODEPOOL: on-demand-pool}   # ${VAR} in apply_file
 *   objects: [ ... ]                 # applied at t=0, before step 1
 *   files: [path.yaml]               # same, from files (relative to the
 *                                    # scenario; ${VAR} substituted)
 *   steps:
 *     - at: 2s                       # absolute offset from t=0, or
 *       after: 100ms                 # relative to the previous step;
 *                                    # neither: same time as before
 *       apply: {object} | [objects]
 *       apply_file: path.yaml        # (with vars; step `vars:` add more)
 *       delete: {kind: Workload, namespace: default, name: x}
 *       patch: {kind: RayJob, namespace: default, name: x,
 *               merge: {status: {...}}}   # JSON merge patch, incl. status
 *       set_check: {workload: "default/job-x-*", check: dws-prov,
 *                   state: Ready, message: "...", requeueAfterSeconds: 60,
 *                   podSetUpdates: [...]}   # plays a check controller
 *       pod: {namespace: default, name: p, phase: Running, ready: true,
 *             exit_code: 0, reason: .., message: ..}  # fq_engine_pod_update
 *       expect:
 *         - kind: Workload           # short names work (fq_kind_lookup)
 *           namespace: default       # default: any namespace
 *           name: "job-sample-*"     # glob; default "*"
 *           where: {spec.queueName: user-queue}  # more filters (paths)
 *           path: status.conditions[type=Admitted].status
 *           equals: "True"           # or: contains / not_equals /
 *                                    # absent: true / present: true
 *         - kind: ProvisioningRequest
 *           count: 1                 # number of matching objects
 *
 * Moving the clock to a step's time runs the engine at every wakeup in
 * between (fq_engine_next_wakeup), in order, then at the step's time; the
 * step's actions happen at that time, the engine settles, then the
 * expectations are checked. A path expectation needs exactly one matching
 * object. Paths: dotted keys, `[N]` for an index, `[key=value]` for the
 * first element of a list whose key has that value, `["a.b/c"]` for a key
 * with dots. Scalars compare by their text (`"True"`, `3`, `true`);
 * a mapping or list under `equals` compares structurally.
 *
 * On the first failed expectation it prints the file, step, what was
 * expected and what was found (with the object as YAML) and exits 1.
 * Files under a `fixtures/` directory are object files, not scenarios.
 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/check.h"
#include "flexq/engine.h"
#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/timefmt.h"
#include "flexq/value.h"

struct ctx {
    const char *file;
    char dir[1024];
    struct fq_engine *e;
    int64_t t0, now;
    const struct fq_value *vars;
    int step;
    int nexpect;
    long nchecks; /* settles held to the invariants */
    bool verbose;
};

static void die(struct ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void die(struct ctx *c, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s: step %d: ", c->file, c->step);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct fq_buf b = FQ_BUF_INIT;
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fq_buf_append(&b, chunk, n);
    fclose(f);
    *len = b.len;
    return b.data ? fq_buf_detach(&b) : fq_xstrdup("");
}

/* "100ms", "2s", "5m", "1h", "1d", or a number of ms. */
static int64_t duration(struct ctx *c, const struct fq_value *v)
{
    if (!v)
        return 0;
    if (v->type == FQ_V_NUM)
        return v->u.num.is_int ? v->u.num.i : (int64_t)v->u.num.d;
    const char *s = fq_value_as_str(v);
    if (!s)
        die(c, "bad duration");
    char *end;
    double x = strtod(s, &end);
    int64_t mul = 1;
    if (!strcmp(end, "ms") || !*end)
        mul = 1;
    else if (!strcmp(end, "s"))
        mul = 1000;
    else if (!strcmp(end, "m"))
        mul = 60000;
    else if (!strcmp(end, "h"))
        mul = 3600000;
    else if (!strcmp(end, "d"))
        mul = 86400000;
    else
        die(c, "bad duration \"%s\"", s);
    return (int64_t)(x * (double)mul);
}

static const char *scalar_text(const struct fq_value *v, char *buf, size_t n)
{
    if (!v)
        return "<absent>";
    switch (v->type) {
    case FQ_V_STR:
        return v->u.str.s;
    case FQ_V_NUM:
        return v->u.num.raw ? v->u.num.raw : "0";
    case FQ_V_BOOL:
        return v->u.b ? "true" : "false";
    case FQ_V_NULL:
        return "null";
    default:
        break;
    }
    char *j = fq_json_dumps(v, FQ_JSON_COMPACT);
    snprintf(buf, n, "%s", j);
    free(j);
    return buf;
}

/* ${VAR} substitution from the vars maps. */
static char *subst(const char *text, const struct fq_value *v1,
                   const struct fq_value *v2)
{
    struct fq_buf b = FQ_BUF_INIT;
    for (const char *p = text; *p;) {
        if (p[0] == '$' && p[1] == '{') {
            const char *end = strchr(p, '}');
            if (end) {
                char name[128];
                size_t n = (size_t)(end - p - 2);
                if (n < sizeof(name)) {
                    memcpy(name, p + 2, n);
                    name[n] = '\0';
                    const struct fq_value *x = fq_map_get(v2, name);
                    if (!x)
                        x = fq_map_get(v1, name);
                    if (x) {
                        char tmp[256];
                        fq_buf_puts(&b, scalar_text(x, tmp, sizeof(tmp)));
                        p = end + 1;
                        continue;
                    }
                }
            }
        }
        fq_buf_putc(&b, *p++);
    }
    return b.data ? fq_buf_detach(&b) : fq_xstrdup("");
}

static void apply_obj(struct ctx *c, const struct fq_value *o)
{
    struct fq_err err = {0};
    if (fq_engine_apply(c->e, fq_value_clone(o), c->now, NULL, NULL, &err) != 0)
        die(c, "apply %s/%s: %s", fq_value_path_str(o, "kind", "?"),
            fq_value_path_str(o, "metadata.name", "?"), err.msg);
}

static void apply_file(struct ctx *c, const char *rel,
                       const struct fq_value *stepvars)
{
    char path[2048];
    if (rel[0] == '/')
        snprintf(path, sizeof(path), "%s", rel);
    else
        snprintf(path, sizeof(path), "%s/%s", c->dir, rel);
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        die(c, "cannot read %s", path);
    char *s = subst(text, c->vars, stepvars);
    free(text);
    struct fq_limits lim = fq_limits_default();
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    if (fq_yaml_parse(s, strlen(s), path, &lim, &docs, &err) != 0)
        die(c, "%s", err.msg);
    for (size_t i = 0; i < docs.n; i++)
        apply_obj(c, docs.items[i]);
    fq_docs_release(&docs);
    free(s);
}

static void apply_value(struct ctx *c, const struct fq_value *v)
{
    if (!v)
        return;
    if (v->type == FQ_V_SEQ) {
        for (size_t i = 0; i < v->u.seq.n; i++)
            apply_obj(c, v->u.seq.items[i]);
    } else {
        apply_obj(c, v);
    }
}

static enum fq_kind kind_of(struct ctx *c, const struct fq_value *spec)
{
    const char *k = fq_value_path_str(spec, "kind", NULL);
    if (!k)
        die(c, "missing kind");
    enum fq_kind kind = fq_kind_lookup(k);
    if (kind == FQ_KIND_NONE)
        die(c, "unknown kind %s", k);
    return kind;
}

/* Walks an extended path (see the top of the file). */
static const struct fq_value *walk(const struct fq_value *v, const char *path)
{
    const char *p = path;
    while (v && *p) {
        if (*p == '.') {
            p++;
            continue;
        }
        if (*p == '[') {
            const char *end = strchr(p, ']');
            if (!end)
                return NULL;
            char in[512];
            size_t n = (size_t)(end - p - 1);
            if (n >= sizeof(in))
                return NULL;
            memcpy(in, p + 1, n);
            in[n] = '\0';
            p = end + 1;
            if (in[0] == '"') {
                size_t l = strlen(in);
                if (l >= 2 && in[l - 1] == '"')
                    in[l - 1] = '\0';
                v = fq_map_get(v, in + 1);
                continue;
            }
            char *eq = strchr(in, '=');
            if (eq) {
                *eq = '\0';
                const struct fq_value *found = NULL;
                for (size_t i = 0; i < fq_value_len(v) && v->type == FQ_V_SEQ;
                     i++) {
                    const struct fq_value *x = fq_seq_at(v, i);
                    char tmp[64];
                    const struct fq_value *kv = fq_map_get(x, in);
                    if (kv &&
                        !strcmp(scalar_text(kv, tmp, sizeof(tmp)), eq + 1)) {
                        found = x;
                        break;
                    }
                }
                v = found;
            } else {
                if (v->type != FQ_V_SEQ)
                    return NULL;
                v = fq_seq_at(v, (size_t)strtoul(in, NULL, 10));
            }
            continue;
        }
        char key[512];
        size_t n = 0;
        while (*p && *p != '.' && *p != '[' && n + 1 < sizeof(key))
            key[n++] = *p++;
        key[n] = '\0';
        v = fq_map_get(v, key);
    }
    return v;
}

static bool where_ok(const struct fq_value *obj, const struct fq_value *where)
{
    if (!where || where->type != FQ_V_MAP)
        return true;
    for (size_t i = 0; i < where->u.map.n; i++) {
        char a[256], b[256];
        const struct fq_value *got = walk(obj, where->u.map.items[i].key);
        if (!got ||
            strcmp(scalar_text(got, a, sizeof(a)),
                   scalar_text(where->u.map.items[i].val, b, sizeof(b))))
            return false;
    }
    return true;
}

/* Objects matching kind / namespace / name glob / where. */
static size_t select_objs(struct ctx *c, const struct fq_value *spec,
                          const struct fq_object ***out)
{
    enum fq_kind kind = kind_of(c, spec);
    const char *ns = fq_value_path_str(spec, "namespace", NULL);
    const char *name = fq_value_path_str(spec, "name", "*");
    const struct fq_value *where = fq_map_get(spec, "where");
    const struct fq_object **all;
    size_t n = fq_objstore_list(fq_engine_store(c->e), kind, ns, &all);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (fnmatch(name, all[i]->name, 0) == 0 && where_ok(all[i]->obj, where))
            all[m++] = all[i];
    *out = all;
    return m;
}

static const struct fq_object *select_one(struct ctx *c,
                                          const struct fq_value *spec)
{
    const struct fq_object **objs;
    size_t n = select_objs(c, spec, &objs);
    const struct fq_object *o = n == 1 ? objs[0] : NULL;
    free(objs);
    if (n != 1)
        die(c, "%s %s/%s: %zu objects match, want exactly 1",
            fq_value_path_str(spec, "kind", ""),
            fq_value_path_str(spec, "namespace", "*"),
            fq_value_path_str(spec, "name", "*"), n);
    return o;
}

static void fail_obj(struct ctx *c, const struct fq_object *o, const char *fmt,
                     ...) __attribute__((format(printf, 3, 4), noreturn));

static void fail_obj(struct ctx *c, const struct fq_object *o, const char *fmt,
                     ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s: step %d (t=%llds): ", c->file, c->step,
            (long long)((c->now - c->t0) / 1000));
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (o) {
        struct fq_buf b = FQ_BUF_INIT;
        fq_yaml_encode(o->obj, &b);
        fprintf(stderr, "--- %s/%s:\n%s", o->ns, o->name, fq_buf_str(&b));
        fq_buf_release(&b);
    }
    exit(1);
}

static void expect_one(struct ctx *c, const struct fq_value *x)
{
    c->nexpect++;
    const struct fq_value *count = fq_map_get(x, "count");
    if (count) {
        const struct fq_object **objs;
        size_t n = select_objs(c, x, &objs);
        free(objs);
        char tmp[64];
        long long want =
            strtoll(scalar_text(count, tmp, sizeof(tmp)), NULL, 10);
        if ((long long)n != want)
            fail_obj(c, NULL, "count of %s %s: got %zu, want %lld",
                     fq_value_path_str(x, "kind", ""),
                     fq_value_path_str(x, "name", "*"), n, want);
        return;
    }
    const char *path = fq_value_path_str(x, "path", NULL);
    if (!path)
        die(c, "an expectation needs `path` or `count`");
    const struct fq_object *o = select_one(c, x);
    const struct fq_value *got = walk(o->obj, path);
    char a[4096], b[4096];
    const struct fq_value *want;
    if ((want = fq_map_get(x, "equals"))) {
        bool ok = (want->type == FQ_V_MAP || want->type == FQ_V_SEQ) ?
                      got && fq_value_equal(got, want) :
                      got && !strcmp(scalar_text(got, a, sizeof(a)),
                                     scalar_text(want, b, sizeof(b)));
        if (!ok)
            fail_obj(c, o, "%s: got %s, want %s", path,
                     scalar_text(got, a, sizeof(a)),
                     scalar_text(want, b, sizeof(b)));
    } else if ((want = fq_map_get(x, "not_equals"))) {
        if (got && !strcmp(scalar_text(got, a, sizeof(a)),
                           scalar_text(want, b, sizeof(b))))
            fail_obj(c, o, "%s: got %s, want anything else", path,
                     scalar_text(got, a, sizeof(a)));
    } else if ((want = fq_map_get(x, "contains"))) {
        const char *w = scalar_text(want, b, sizeof(b));
        if (!got || !strstr(scalar_text(got, a, sizeof(a)), w))
            fail_obj(c, o, "%s: got %s, want it to contain \"%s\"", path,
                     scalar_text(got, a, sizeof(a)), w);
    } else if (fq_value_path_bool(x, "absent", false)) {
        if (got)
            fail_obj(c, o, "%s: got %s, want it absent", path,
                     scalar_text(got, a, sizeof(a)));
    } else if (fq_value_path_bool(x, "present", false)) {
        if (!got)
            fail_obj(c, o, "%s: absent, want it present", path);
    } else {
        die(c, "expectation on %s needs equals/contains/absent/present", path);
    }
    if (c->verbose)
        printf("  ok %s %s\n", path, scalar_text(got, a, sizeof(a)));
}

/* Runs the engine at every wakeup up to t, then at t. */
/* Settles the engine at `t`, then holds it to every invariant of
 * flexq/check.h: a scenario fails at the first settle that breaks one,
 * whatever its expectations say. */
static void settle(struct ctx *c, int64_t t)
{
    fq_engine_run(c->e, t);
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    c->nchecks++;
    if (fq_engine_check(c->e, &errs) > 0) {
        for (size_t i = 0; i < errs.n; i++)
            fprintf(stderr, "invariant: %s\n", errs.items[i].msg);
        die(c, "%zu invariant(s) broken after the settle at %+.3f s", errs.n,
            (double)(t - c->t0) / 1000.0);
    }
    fq_errlist_release(&errs);
}

static void advance(struct ctx *c, int64_t t)
{
    long guard = 0;
    for (;;) {
        int64_t w = fq_engine_next_wakeup(c->e);
        if (w <= c->now)
            w = c->now + 1; /* ran at c->now already: a step forward */
        if (w == FQ_NEVER || w > t)
            break;
        c->now = w;
        settle(c, w);
        if (++guard > 200000)
            die(c, "the engine keeps waking up (at %lld)", (long long)w);
    }
    if (t > c->now)
        c->now = t;
    settle(c, c->now);
}

static void do_delete(struct ctx *c, const struct fq_value *d)
{
    const struct fq_object *o = select_one(c, d);
    char *ns = fq_xstrdup(o->ns), *name = fq_xstrdup(o->name);
    struct fq_err err = {0};
    if (fq_engine_delete(c->e, o->kind, ns, name, c->now, &err) != 0)
        die(c, "delete %s: %s", name, err.msg);
    free(ns);
    free(name);
}

static void do_patch(struct ctx *c, const struct fq_value *p)
{
    const struct fq_object *o = select_one(c, p);
    struct fq_value *obj =
        fq_objstore_edit(fq_engine_store(c->e), o->kind, o->ns, o->name);
    fq_value_merge_patch(&obj, fq_map_get(p, "merge"));
    struct fq_err err = {0};
    if (fq_objstore_update(fq_engine_store(c->e), obj, true, NULL, NULL,
                           &err) != 0)
        die(c, "patch: %s", err.msg);
}

static void do_set_check(struct ctx *c, const struct fq_value *s)
{
    const char *wl = fq_value_path_str(s, "workload", NULL);
    const char *check = fq_value_path_str(s, "check", NULL);
    if (!wl || !check)
        die(c, "set_check needs workload and check");
    char ns[256] = "default";
    const char *name = wl;
    const char *slash = strchr(wl, '/');
    if (slash) {
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - wl), wl);
        name = slash + 1;
    }
    struct fq_value *spec = fq_value_map();
    fq_map_set(spec, "kind", fq_value_str("Workload"));
    fq_map_set(spec, "namespace", fq_value_str(ns));
    fq_map_set(spec, "name", fq_value_str(name));
    const struct fq_object *o = select_one(c, spec);
    fq_value_free(spec);
    struct fq_value *obj = fq_objstore_edit(fq_engine_store(c->e),
                                            FQ_KIND_WORKLOAD, o->ns, o->name);
    struct fq_value *chs = fq_value_path(obj, "status.admissionChecks");
    struct fq_value *ch = NULL;
    for (size_t i = 0; i < fq_value_len(chs); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(chs, i), "name", ""), check))
            ch = fq_seq_at(chs, i);
    if (!ch)
        die(c, "workload %s has no admission check %s", o->name, check);
    const char *state = fq_value_path_str(s, "state", "Pending");
    char ts[40];
    fq_time_format(c->now, ts, sizeof(ts));
    if (strcmp(fq_value_path_str(ch, "state", ""), state))
        fq_map_set(ch, "lastTransitionTime", fq_value_str(ts));
    fq_map_set(ch, "state", fq_value_str(state));
    fq_map_set(ch, "message",
               fq_value_str(fq_value_path_str(s, "message", "")));
    const struct fq_value *ra = fq_map_get(s, "requeueAfterSeconds");
    if (ra)
        fq_map_set(ch, "requeueAfterSeconds", fq_value_clone(ra));
    const struct fq_value *psu = fq_map_get(s, "podSetUpdates");
    if (psu)
        fq_map_set(ch, "podSetUpdates", fq_value_clone(psu));
    struct fq_err err = {0};
    if (fq_objstore_update(fq_engine_store(c->e), obj, true, NULL, NULL,
                           &err) != 0)
        die(c, "set_check: %s", err.msg);
}

static void do_pod(struct ctx *c, const struct fq_value *p)
{
    struct fq_pod_report r = {
        .phase = fq_value_path_str(p, "phase", NULL),
        .ready = fq_value_path_bool(p, "ready", false),
        .exit_code = (int)fq_value_path_int(p, "exit_code", 0),
        .reason = fq_value_path_str(p, "reason", NULL),
        .message = fq_value_path_str(p, "message", NULL),
    };
    struct fq_value *spec = fq_value_clone(p);
    fq_map_set(spec, "kind", fq_value_str("Pod"));
    const struct fq_object *o = select_one(c, spec);
    fq_value_free(spec);
    char *ns = fq_xstrdup(o->ns), *name = fq_xstrdup(o->name);
    struct fq_err err = {0};
    if (fq_engine_pod_update(c->e, ns, name, &r, c->now, &err) != 0)
        die(c, "pod %s: %s", name, err.msg);
    free(ns);
    free(name);
}

static void config(struct ctx *c, const struct fq_value *cfgv,
                   struct fq_engine_config *cfg)
{
    fq_engine_config_init(cfg);
    cfg->no_pods = true;
    if (!cfgv)
        return;
    const char *pol = fq_value_path_str(cfgv, "policy", "default");
    cfg->policy =
        !strcmp(pol, "kueue") ? fq_policy_kueue() : fq_policy_default();
    struct fq_policy *p = &cfg->policy;
    p->max_admissions_per_cq_per_cycle =
        (int)fq_value_path_int(cfgv, "max_admissions_per_cq_per_cycle",
                               p->max_admissions_per_cq_per_cycle);
    p->migrate_to_preferred_flavor = fq_value_path_bool(
        cfgv, "migrate_to_preferred_flavor", p->migrate_to_preferred_flavor);
    p->flavor_failure_cooldown = fq_value_path_bool(
        cfgv, "flavor_failure_cooldown", p->flavor_failure_cooldown);
    if (fq_map_get(cfgv, "flavor_cooldown"))
        p->flavor_cooldown_ms =
            duration(c, fq_map_get(cfgv, "flavor_cooldown"));
    p->stockout_fallback =
        fq_value_path_bool(cfgv, "stockout_fallback", p->stockout_fallback);
    if (fq_map_get(cfgv, "stockout_fallback_after"))
        p->stockout_fallback_after_ms =
            duration(c, fq_map_get(cfgv, "stockout_fallback_after"));
    if (fq_map_get(cfgv, "preemption_grace"))
        p->preemption_grace_ms =
            duration(c, fq_map_get(cfgv, "preemption_grace"));
    if (fq_map_get(cfgv, "starved_after"))
        p->starved_after_ms = duration(c, fq_map_get(cfgv, "starved_after"));
    if (fq_map_get(cfgv, "pending_message_refresh"))
        p->pending_message_refresh_ms =
            duration(c, fq_map_get(cfgv, "pending_message_refresh"));
    cfg->no_pods = fq_value_path_bool(cfgv, "no_pods", cfg->no_pods);
    cfg->sim_provider =
        fq_value_path_bool(cfgv, "sim_provider", cfg->sim_provider);
    const struct fq_value *ts = fq_map_get(cfgv, "time_scale");
    if (ts && ts->type == FQ_V_NUM)
        cfg->time_scale = ts->u.num.d;
    cfg->seed = (uint64_t)fq_value_path_int(cfgv, "seed", (int64_t)cfg->seed);
    struct fq_err ferr = {0};
    if (fq_fair_sharing_read(fq_map_get(cfgv, "fair_sharing"), c->file,
                             &cfg->fair_sharing, &ferr) < 0)
        die(c, "%s", ferr.msg);
    if (fq_afs_read(fq_map_get(cfgv, "admission_fair_sharing"), c->file,
                    &cfg->afs, &ferr) < 0)
        die(c, "%s", ferr.msg);
    const struct fq_value *pr = fq_map_get(cfgv, "pods_ready");
    if (pr) {
        struct fq_pods_ready_config *r = &cfg->pods_ready;
        r->enable = fq_value_path_bool(pr, "enable", true);
        if (fq_map_get(pr, "timeout"))
            r->timeout_ms = r->recovery_timeout_ms =
                duration(c, fq_map_get(pr, "timeout"));
        if (fq_map_get(pr, "recovery_timeout"))
            r->recovery_timeout_ms =
                duration(c, fq_map_get(pr, "recovery_timeout"));
        r->block_admission =
            fq_value_path_bool(pr, "block_admission", r->block_admission);
        r->timestamp_eviction =
            fq_value_path_bool(pr, "timestamp_eviction", r->timestamp_eviction);
        r->backoff_limit_count = (int)fq_value_path_int(
            pr, "backoff_limit_count", r->backoff_limit_count);
        if (fq_map_get(pr, "backoff_base"))
            r->backoff_base_ms = duration(c, fq_map_get(pr, "backoff_base"));
        if (fq_map_get(pr, "backoff_max"))
            r->backoff_max_ms = duration(c, fq_map_get(pr, "backoff_max"));
    }
}

int main(int argc, char **argv)
{
    struct ctx c = {0};
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCENARIO.yaml [-v]\n", argv[0]);
        return 2;
    }
    c.file = argv[1];
    c.verbose = argc > 2 && !strcmp(argv[2], "-v");
    snprintf(c.dir, sizeof(c.dir), "%s", c.file);
    char *slash = strrchr(c.dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(c.dir, sizeof(c.dir), ".");
    size_t len;
    char *text = read_file(c.file, &len);
    if (!text)
        die(&c, "cannot read the file");
    struct fq_limits lim = fq_limits_default();
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    if (fq_yaml_parse(text, len, c.file, &lim, &docs, &err) != 0 || docs.n != 1)
        die(&c, "%s", docs.n != 1 ? "want one YAML document" : err.msg);
    free(text);
    const struct fq_value *sc = docs.items[0];

    struct fq_engine_config cfg;
    config(&c, fq_map_get(sc, "config"), &cfg);
    c.e = fq_engine_new(&cfg);
    c.t0 = 0;
    if (fq_time_parse(fq_value_path_str(sc, "start", "2026-01-01T00:00:00Z"),
                      &c.t0) != 0)
        die(&c, "bad start time");
    c.now = c.t0;
    c.vars = fq_map_get(sc, "vars");

    apply_value(&c, fq_map_get(sc, "objects"));
    const struct fq_value *files = fq_map_get(sc, "files");
    for (size_t i = 0; i < fq_value_len(files); i++)
        apply_file(&c, fq_value_as_str(fq_seq_at(files, i)), NULL);
    advance(&c, c.now);

    const struct fq_value *steps = fq_map_get(sc, "steps");
    for (size_t i = 0; i < fq_value_len(steps); i++) {
        const struct fq_value *st = fq_seq_at(steps, i);
        c.step = (int)i + 1;
        int64_t t = c.now;
        if (fq_map_get(st, "at"))
            t = c.t0 + duration(&c, fq_map_get(st, "at"));
        else if (fq_map_get(st, "after"))
            t = c.now + duration(&c, fq_map_get(st, "after"));
        if (t < c.now)
            die(&c, "time goes backwards");
        advance(&c, t);
        apply_value(&c, fq_map_get(st, "apply"));
        const char *af = fq_value_path_str(st, "apply_file", NULL);
        if (af)
            apply_file(&c, af, fq_map_get(st, "vars"));
        if (fq_map_get(st, "delete"))
            do_delete(&c, fq_map_get(st, "delete"));
        if (fq_map_get(st, "patch"))
            do_patch(&c, fq_map_get(st, "patch"));
        if (fq_map_get(st, "set_check"))
            do_set_check(&c, fq_map_get(st, "set_check"));
        if (fq_map_get(st, "pod"))
            do_pod(&c, fq_map_get(st, "pod"));
        settle(&c, c.now);
        const struct fq_value *ex = fq_map_get(st, "expect");
        for (size_t j = 0; j < fq_value_len(ex); j++)
            expect_one(&c, fq_seq_at(ex, j));
    }
    printf("ok %s: %zu steps, %d expectations, invariants held at %ld "
           "settles\n",
           fq_value_path_str(sc, "name", c.file), fq_value_len(steps),
           c.nexpect, c.nchecks);
    fq_engine_free(c.e);
    fq_docs_release(&docs);
    return 0;
}
