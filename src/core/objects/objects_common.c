/*
 * objects_common.c - the machinery every object decoder shares: the arena,
 * the decode context (field path + error list), typed getters, the
 * Kubernetes name rules, metadata, pod specs, taints, tolerations,
 * selectors, conditions, and the whole-object entry points
 * fq_object_validate / fq_object_meta.
 *
 * How it works. A decoder walks the fq_value tree once, field by field.
 * Each getter pushes its key on a path buffer ("spec.resourceGroups[0]"),
 * checks the node's type and format, and on a problem appends one
 * struct fq_err ("FILE:LINE:COL: PATH: what") and returns a neutral value,
 * so the walk goes on and every problem is reported. Arrays of the view
 * come from one arena per view, so a release is one call.
 *
 * Unexpanded variables: before the fields are read, the whole tree is
 * scanned for strings (and keys) holding `${NAME}`; each gets the envsubst
 * hint. Later format errors on such a string are dropped (derr), so the
 * user sees the cause, not its symptoms.
 *
 * Invariants:
 *   1. A getter reports at most one error per node it reads.
 *   2. Nothing here modifies the tree; views borrow its strings.
 *   3. Every error has the path of the field it is about; its line/col is
 *      the field's value when present, else the enclosing mapping.
 *
 * It does not check references between objects (a LocalQueue naming a
 * missing ClusterQueue): that needs the store, and the controllers report
 * it as Kueue does (inactive queues, pending workloads).
 */
#include "objects/objects_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/paths.h"

/* --- arena ---------------------------------------------------------------- */

/* Small enough for the allocator's per-thread cache (glibc serves up to
 * 1,032 bytes from it): a decode's first block then costs no trip into
 * its bins, which a 4 KiB block took, with consolidations on free. */
#define OBJMEM_BLOCK 992

struct fq_objmem {
    struct fq_objmem *next;
    size_t used, cap;
    max_align_t data[];
};

void *objmem_alloc(struct fq_objmem **m, size_t n)
{
    size_t align = sizeof(max_align_t);
    n = (n + align - 1) / align * align;
    if (n == 0)
        n = align;
    struct fq_objmem *b = *m;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > OBJMEM_BLOCK ? n : OBJMEM_BLOCK;
        b = fq_xmalloc(sizeof(*b) + cap);
        b->next = *m;
        b->used = 0;
        b->cap = cap;
        *m = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

void objmem_free(struct fq_objmem **m)
{
    struct fq_objmem *b = *m;
    while (b) {
        struct fq_objmem *next = b->next;
        free(b);
        b = next;
    }
    *m = NULL;
}

/* --- path and errors ------------------------------------------------------ */

/* Keys that read well after a dot; others ("cloud.google.com/x") go in
 * brackets: metadata.labels[cloud.google.com/x]. */
static bool plain_key(const char *k)
{
    if (!*k)
        return false;
    for (const char *p = k; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            return false;
    return true;
}

static void path_append(struct dctx *c, const char *s)
{
    size_t n = strlen(s);
    if (c->plen + n >= sizeof(c->path)) {
        n = sizeof(c->path) - 1 - c->plen;
    }
    memcpy(c->path + c->plen, s, n);
    c->plen += n;
    c->path[c->plen] = '\0';
}

/* The path only feeds error messages: without an error list (controllers
 * decoding stored objects) it is not built at all. */
size_t path_key(struct dctx *c, const char *key)
{
    size_t old = c->plen;
    if (!c->errs)
        return old;
    if (plain_key(key)) {
        if (c->plen)
            path_append(c, ".");
        path_append(c, key);
    } else {
        path_append(c, "[");
        path_append(c, key);
        path_append(c, "]");
    }
    return old;
}

size_t path_idx(struct dctx *c, size_t i)
{
    size_t old = c->plen;
    if (!c->errs)
        return old;
    char buf[32];
    snprintf(buf, sizeof(buf), "[%zu]", i);
    path_append(c, buf);
    return old;
}

void path_pop(struct dctx *c, size_t old)
{
    c->plen = old;
    c->path[old] = '\0';
}

/* Length of the `${NAME}` at p (NAME a shell identifier, as envsubst
 * reads it), or 0. */
static size_t var_len(const char *p)
{
    if (p[0] != '$' || p[1] != '{')
        return 0;
    size_t i = 2;
    if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' && p[i] <= 'z') ||
          p[i] == '_'))
        return 0;
    while ((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' && p[i] <= 'z') ||
           (p[i] >= '0' && p[i] <= '9') || p[i] == '_')
        i++;
    return p[i] == '}' ? i + 1 : 0;
}

bool has_var(const char *s)
{
    for (const char *p = s ? strchr(s, '$') : NULL; p; p = strchr(p + 1, '$'))
        if (var_len(p))
            return true;
    return false;
}

/* The common case (no '$' at all) costs one memchr. */
static bool var_str(const struct fq_value *v)
{
    return memchr(v->u.str.s, '$', v->u.str.len) && has_var(v->u.str.s);
}

static bool var_node(const struct fq_value *v)
{
    return v && v->type == FQ_V_STR && var_str(v);
}

/* Appends one error "FILE:LINE:COL: PATH: what" at node `at`. */
static void record(struct dctx *c, const struct fq_value *at, const char *what)
{
    c->nerr++;
    if (!c->errs)
        return;
    if (!at || at->line == 0)
        at = c->obj;
    int line = at ? (int)at->line : 0, col = at ? (int)at->col : 0;
    struct fq_err e;
    memset(&e, 0, sizeof(e));
    /* Without a file name the message carries no position (API bodies);
     * line and col stay in the struct for the Status details. */
    fq_err_at(&e, FQ_EINVAL, c->file, c->file ? line : 0, col, c->path, "%s",
              what);
    e.line = line;
    e.col = col;
    fq_errlist_push(c->errs, &e);
}

static void vrecord(struct dctx *c, const struct fq_value *at, const char *fmt,
                    va_list ap) __attribute__((format(printf, 3, 0)));

static void vrecord(struct dctx *c, const struct fq_value *at, const char *fmt,
                    va_list ap)
{
    char what[FQ_ERR_MSG_MAX];
    vsnprintf(what, sizeof(what), fmt, ap);
    record(c, at, what);
}

void derr(struct dctx *c, const struct fq_value *at, const char *fmt, ...)
{
    if (var_node(at))
        return;
    va_list ap;
    va_start(ap, fmt);
    vrecord(c, at, fmt, ap);
    va_end(ap);
}

void derr_key(struct dctx *c, const struct fq_value *at, const char *key,
              const char *fmt, ...)
{
    if (var_node(at))
        return;
    size_t old = path_key(c, key);
    va_list ap;
    va_start(ap, fmt);
    vrecord(c, at, fmt, ap);
    va_end(ap);
    path_pop(c, old);
}

void derr_missing(struct dctx *c, const struct fq_value *m, const char *key)
{
    const struct fq_value *v = fq_map_get(m, key);
    if (v && v->type == FQ_V_NULL)
        derr_key(c, v, key, "is null; a value is required here");
    else
        derr_key(c, m, key, "required field is missing");
}

static void var_error(struct dctx *c, const struct fq_value *at, const char *s)
{
    char vars[256] = "";
    size_t nv = 0, used = 0;
    for (const char *p = strchr(s, '$'); p; p = strchr(p + 1, '$')) {
        size_t len = var_len(p);
        if (!len)
            continue;
        int n = (int)len;
        int w = snprintf(vars + used, sizeof(vars) - used, "%s%.*s",
                         nv ? ", " : "", n, p);
        if (w > 0 && (size_t)w < sizeof(vars) - used)
            used += (size_t)w;
        nv++;
    }
    char what[FQ_ERR_MSG_MAX];
    snprintf(what, sizeof(what),
             "\"%.120s%s\" contains %s %s; pipe the file through envsubst "
             "first",
             s, strlen(s) > 120 ? "..." : "",
             nv > 1 ? "unexpanded variables" : "an unexpanded variable", vars);
    record(c, at, what);
}

static void scan_vars(struct dctx *c, const struct fq_value *v, size_t depth)
{
    if (!v || depth > 200)
        return;
    if (v->type == FQ_V_STR) {
        if (var_str(v))
            var_error(c, v, v->u.str.s);
    } else if (v->type == FQ_V_SEQ) {
        for (size_t i = 0; i < v->u.seq.n; i++) {
            size_t old = path_idx(c, i);
            scan_vars(c, v->u.seq.items[i], depth + 1);
            path_pop(c, old);
        }
    } else if (v->type == FQ_V_MAP) {
        for (size_t i = 0; i < v->u.map.n; i++) {
            const struct fq_member *m = &v->u.map.items[i];
            size_t old = path_key(c, m->key);
            if (strchr(m->key, '$') && has_var(m->key)) {
                struct fq_value at;
                memset(&at, 0, sizeof(at));
                at.type = FQ_V_NULL;
                at.line = m->line;
                at.col = m->col;
                var_error(c, &at, m->key);
            }
            scan_vars(c, m->val, depth + 1);
            path_pop(c, old);
        }
    }
}

/* --- scalars ---------------------------------------------------------------- */

const char *scalar_text(const struct fq_value *v)
{
    if (!v)
        return "null";
    switch (v->type) {
    case FQ_V_NULL:
        return "null";
    case FQ_V_BOOL:
        return v->u.b ? "true" : "false";
    case FQ_V_NUM:
        return v->u.num.raw ? v->u.num.raw : "?";
    case FQ_V_STR:
        return v->u.str.s;
    case FQ_V_SEQ:
        return "[...]";
    case FQ_V_MAP:
        return "{...}";
    }
    return "?";
}

const char *type_word(const struct fq_value *v)
{
    if (!v)
        return "null";
    switch (v->type) {
    case FQ_V_NULL:
        return "null";
    case FQ_V_BOOL:
        return "a boolean";
    case FQ_V_NUM:
        return "a number";
    case FQ_V_STR:
        return "a string";
    case FQ_V_SEQ:
        return "a list";
    case FQ_V_MAP:
        return "a mapping";
    }
    return "?";
}

const struct fq_value *field(const struct fq_value *m, const char *key)
{
    const struct fq_value *v = fq_map_get(m, key);
    return v && v->type != FQ_V_NULL ? v : NULL;
}

void fields(const struct fq_value *m, const char *const *keys, size_t n,
            const struct fq_value **out)
{
    size_t len[FIELDS_MAX];
    bool seen[FIELDS_MAX];
    for (size_t i = 0; i < n; i++) {
        out[i] = NULL;
        len[i] = strlen(keys[i]);
        seen[i] = false;
    }
    if (!m || m->type != FQ_V_MAP)
        return;
    size_t left = n;
    for (size_t j = 0; j < m->u.map.n && left > 0; j++) {
        const struct fq_member *x = &m->u.map.items[j];
        for (size_t i = 0; i < n; i++) {
            if (seen[i] || x->klen != len[i] || memcmp(x->key, keys[i], len[i]))
                continue;
            seen[i] = true; /* the first of the key, as fq_map_get */
            left--;
            out[i] = x->val && x->val->type != FQ_V_NULL ? x->val : NULL;
            break;
        }
    }
}

/* --- name rules ------------------------------------------------------------- */

static bool is_lower_alnum(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

static bool is_alnum(char ch)
{
    return is_lower_alnum(ch) || (ch >= 'A' && ch <= 'Z');
}

static const char *check_label_chars(const char *s, size_t n)
{
    if (n == 0)
        return "must not be empty";
    for (size_t i = 0; i < n; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return "must consist of lower case letters, digits and '-', "
                   "and start and end with a letter or digit";
    if (s[0] == '-' || s[n - 1] == '-')
        return "must consist of lower case letters, digits and '-', and "
               "start and end with a letter or digit";
    return NULL;
}

const char *fq_check_dns1123_label(const char *s)
{
    size_t n = strlen(s);
    if (n > 63)
        return "must be no more than 63 characters";
    return check_label_chars(s, n);
}

/* Are the n bytes at s dot-separated labels, each passing
 * check_label_chars (not empty; lower case letters, digits and '-'; a
 * letter or digit at each end)? One pass: resource names and label keys
 * of every decoded object come through here. */
static bool labels_ok(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (i == start || s[start] == '-' || s[i - 1] == '-')
                return false;
            start = i + 1;
        } else if (!is_lower_alnum(s[i]) && s[i] != '-') {
            return false;
        }
    }
    return true;
}

const char *fq_check_dns1123_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return "must not be empty";
    if (n > 253)
        return "must be no more than 253 characters";
    if (!labels_ok(s, n))
        return "must consist of lower case letters, digits, '-' and "
               "'.', and start and end with a letter or digit";
    return NULL;
}

const char *fq_check_dns1035_label(const char *s)
{
    size_t n = strlen(s);
    if (n > 63)
        return "must be no more than 63 characters";
    if (check_label_chars(s, n) || !(s[0] >= 'a' && s[0] <= 'z'))
        return "must consist of lower case letters, digits and '-', start "
               "with a letter and end with a letter or digit";
    return NULL;
}

static const char *check_name_part(const char *s, size_t n)
{
    if (n == 0)
        return "name part must not be empty";
    if (n > 63)
        return "name part must be no more than 63 characters";
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return "name part must consist of letters, digits, '-', '_' or "
                   "'.', and start and end with a letter or digit";
    if (!is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return "name part must consist of letters, digits, '-', '_' or "
               "'.', and start and end with a letter or digit";
    return NULL;
}

const char *fq_check_qualified_name(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash)
        return check_name_part(s, strlen(s));
    if (strchr(slash + 1, '/'))
        return "must have at most one '/'";
    size_t pn = (size_t)(slash - s);
    if (pn == 0)
        return "prefix part must not be empty";
    if (pn >= 256)
        return "prefix part must be no more than 253 characters";
    if (pn > 253 || !labels_ok(s, pn)) /* fq_check_dns1123_subdomain */
        return "prefix part must be a lowercase DNS subdomain";
    return check_name_part(slash + 1, strlen(slash + 1));
}

const char *fq_check_label_value(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return NULL;
    if (n > 63)
        return "must be no more than 63 characters";
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return "must consist of letters, digits, '-', '_' or '.', and "
                   "start and end with a letter or digit";
    if (!is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return "must consist of letters, digits, '-', '_' or '.', and start "
               "and end with a letter or digit";
    return NULL;
}

const char *oc_check_config_key(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return "must not be empty";
    if (n > 253)
        return "must be no more than 253 characters";
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return "must not be '.' or '..'";
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return "must consist of letters, digits, '-', '_' or '.'";
    return NULL;
}

/* --- pods --------------------------------------------------------------------- */

static const char *check_port_name(const char *s)
{
    size_t n = strlen(s);
    bool letter = false;
    if (n == 0 || n > 15)
        return "must be 1 to 15 characters";
    for (size_t i = 0; i < n; i++) {
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return "must consist of lower case letters, digits and '-'";
        if (s[i] >= 'a' && s[i] <= 'z')
            letter = true;
        if (s[i] == '-' && i + 1 < n && s[i + 1] == '-')
            return "must not contain '--'";
    }
    if (s[0] == '-' || s[n - 1] == '-')
        return "must not start or end with '-'";
    if (!letter)
        return "must contain at least one letter";
    return NULL;
}

static bool volume_known(const struct fq_podspec *ps, const char *name)
{
    for (size_t i = 0; i < ps->n_volumes; i++)
        if (ps->volumes[i].name && strcmp(ps->volumes[i].name, name) == 0)
            return true;
    return false;
}

static void decode_container(struct dctx *c, const struct fq_value *it,
                             const struct fq_podspec *ps,
                             struct fq_container *ct)
{
    static const char *const protos[] = {"TCP", "UDP", "SCTP", NULL};
    ct->name = want_name(c, it, "name", true, fq_check_dns1123_label);
    ct->image = want_str(c, it, "image", true);
    const struct fq_value *cmd = want_seq(c, it, "command", false, 0, 0);
    const struct fq_value *args = want_seq(c, it, "args", false, 0, 0);
    ct->command = cmd;
    ct->args = args;
    ct->env = want_seq(c, it, "env", false, 0, 0);
    ct->working_dir = want_str(c, it, "workingDir", false);
    const struct fq_value *res = want_map(c, it, "resources", false);
    if (res) {
        size_t old = path_key(c, "resources");
        want_resources(c, res, "requests", true, &ct->requests);
        want_resources(c, res, "limits", true, &ct->limits);
        /* Requests default to limits; requests above limits are an error;
         * extended resources need requests == limits. */
        struct fq_resource *merged =
            MEM_ARRAY(c, struct fq_resource, ct->requests.n + ct->limits.n);
        size_t nm = 0;
        for (size_t i = 0; i < ct->requests.n; i++) {
            const struct fq_resource *r = &ct->requests.items[i];
            bool has_lim = false;
            int64_t lim = 0;
            for (size_t j = 0; j < ct->limits.n; j++)
                if (strcmp(ct->limits.items[j].name, r->name) == 0) {
                    has_lim = true;
                    lim = ct->limits.items[j].value;
                }
            const struct fq_value *rq =
                fq_map_get(field(res, "requests"), r->name);
            size_t o2 = path_key(c, "requests");
            if (has_lim && r->value > lim)
                derr_key(
                    c, rq, r->name,
                    "request %s must be less than or equal to the limit "
                    "%s",
                    scalar_text(rq),
                    scalar_text(fq_map_get(field(res, "limits"), r->name)));
            else if (oc_integral_resource(r->name) && !has_lim)
                derr_key(c, rq, r->name,
                         "%s needs a limit equal to its request (it cannot "
                         "be overcommitted)",
                         r->name);
            else if (oc_integral_resource(r->name) && r->value != lim)
                derr_key(c, rq, r->name,
                         "request must be equal to the limit for %s", r->name);
            path_pop(c, o2);
            merged[nm++] = *r;
        }
        for (size_t j = 0; j < ct->limits.n; j++) {
            bool found = false;
            for (size_t i = 0; i < ct->requests.n; i++)
                if (strcmp(ct->limits.items[j].name,
                           ct->requests.items[i].name) == 0)
                    found = true;
            if (!found)
                merged[nm++] = ct->limits.items[j];
        }
        ct->requests.items = merged;
        ct->requests.n = nm;
        path_pop(c, old);
    }
    const struct fq_value *ports = want_seq(c, it, "ports", false, 0, 0);
    if (ports) {
        ct->ports = MEM_ARRAY(c, struct fq_container_port, ports->u.seq.n);
        size_t old = path_key(c, "ports");
        for (size_t i = 0; i < ports->u.seq.n; i++) {
            const struct fq_value *p = ports->u.seq.items[i];
            size_t o2 = path_idx(c, i);
            if (!p || p->type != FQ_V_MAP) {
                derr(c, p, "must be a mapping, not %s", type_word(p));
                path_pop(c, o2);
                continue;
            }
            struct fq_container_port *cp = &ct->ports[ct->n_ports++];
            if (!field(p, "containerPort"))
                derr_missing(c, p, "containerPort");
            cp->container_port =
                want_int(c, p, "containerPort", 0, 1, 65535, NULL);
            cp->name = want_name(c, p, "name", false, check_port_name);
            for (size_t j = 0; cp->name && j + 1 < ct->n_ports; j++)
                if (ct->ports[j].name &&
                    strcmp(ct->ports[j].name, cp->name) == 0)
                    derr_key(c, field(p, "name"), "name",
                             "duplicate port name \"%s\"", cp->name);
            cp->protocol = protos[want_enum(c, p, "protocol", protos, 0)];
            path_pop(c, o2);
        }
        path_pop(c, old);
    }
    const struct fq_value *vms = want_seq(c, it, "volumeMounts", false, 0, 0);
    if (vms) {
        ct->volume_mounts = MEM_ARRAY(c, struct fq_volume_mount, vms->u.seq.n);
        size_t old = path_key(c, "volumeMounts");
        for (size_t i = 0; i < vms->u.seq.n; i++) {
            const struct fq_value *vm = vms->u.seq.items[i];
            size_t o2 = path_idx(c, i);
            if (!vm || vm->type != FQ_V_MAP) {
                derr(c, vm, "must be a mapping, not %s", type_word(vm));
                path_pop(c, o2);
                continue;
            }
            struct fq_volume_mount *m = &ct->volume_mounts[ct->n_volume_mounts];
            m->name = want_str(c, vm, "name", true);
            m->mount_path = want_str(c, vm, "mountPath", true);
            m->sub_path = want_str(c, vm, "subPath", false);
            m->read_only = want_bool(c, vm, "readOnly", false);
            if (m->name && !has_var(m->name) && !volume_known(ps, m->name))
                derr_key(c, field(vm, "name"), "name",
                         "no volume named \"%s\" in the pod's volumes",
                         m->name);
            for (size_t j = 0; m->mount_path && j < ct->n_volume_mounts; j++)
                if (ct->volume_mounts[j].mount_path &&
                    strcmp(ct->volume_mounts[j].mount_path, m->mount_path) == 0)
                    derr_key(c, field(vm, "mountPath"), "mountPath",
                             "\"%s\" is mounted twice", m->mount_path);
            ct->n_volume_mounts++;
            path_pop(c, o2);
        }
        path_pop(c, old);
    }
}

static void decode_containers(struct dctx *c, const struct fq_value *spec,
                              const char *key, bool required,
                              const struct fq_podspec *ps,
                              struct fq_container **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const struct fq_value *v = want_seq(c, spec, key, required, required, 0);
    if (!v)
        return;
    *out = MEM_ARRAY(c, struct fq_container, v->u.seq.n);
    size_t old = path_key(c, key);
    for (size_t i = 0; i < v->u.seq.n; i++) {
        const struct fq_value *it = v->u.seq.items[i];
        size_t o2 = path_idx(c, i);
        if (!it || it->type != FQ_V_MAP) {
            derr(c, it, "must be a mapping, not %s", type_word(it));
        } else {
            struct fq_container *ct = &(*out)[(*n)++];
            decode_container(c, it, ps, ct);
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}

void decode_podspec(struct dctx *c, const struct fq_value *spec,
                    struct fq_podspec *out)
{
    static const char *const restart[] = {"Always", "OnFailure", "Never", NULL};
    memset(out, 0, sizeof(*out));
    /* Volumes first: volume mounts refer to them. */
    const struct fq_value *vols = want_seq(c, spec, "volumes", false, 0, 0);
    if (vols) {
        out->volumes = MEM_ARRAY(c, struct fq_volume, vols->u.seq.n);
        size_t old = path_key(c, "volumes");
        for (size_t i = 0; i < vols->u.seq.n; i++) {
            const struct fq_value *it = vols->u.seq.items[i];
            size_t o2 = path_idx(c, i);
            if (!it || it->type != FQ_V_MAP) {
                derr(c, it, "must be a mapping, not %s", type_word(it));
                path_pop(c, o2);
                continue;
            }
            struct fq_volume *vo = &out->volumes[out->n_volumes];
            vo->raw = it;
            vo->name = want_name(c, it, "name", true, fq_check_dns1123_label);
            for (size_t j = 0; vo->name && j < out->n_volumes; j++)
                if (out->volumes[j].name &&
                    strcmp(out->volumes[j].name, vo->name) == 0)
                    derr_key(c, field(it, "name"), "name",
                             "duplicate volume name \"%s\"", vo->name);
            const struct fq_value *cm = want_map(c, it, "configMap", false);
            if (cm) {
                size_t o3 = path_key(c, "configMap");
                vo->config_map =
                    want_name(c, cm, "name", true, fq_check_dns1123_subdomain);
                vo->config_map_items = want_seq(c, cm, "items", false, 0, 0);
                path_pop(c, o3);
            }
            vo->empty_dir = field(it, "emptyDir") != NULL;
            out->n_volumes++;
            path_pop(c, o2);
        }
        path_pop(c, old);
    }
    decode_containers(c, spec, "containers", true, out, &out->containers,
                      &out->n_containers);
    decode_containers(c, spec, "initContainers", false, out,
                      &out->init_containers, &out->n_init_containers);
    /* Container names are unique across containers and init containers. */
    for (size_t i = 0; i < out->n_containers + out->n_init_containers; i++) {
        const struct fq_container *a =
            i < out->n_containers ?
                &out->containers[i] :
                &out->init_containers[i - out->n_containers];
        for (size_t j = 0; a->name && j < i; j++) {
            const struct fq_container *b =
                j < out->n_containers ?
                    &out->containers[j] :
                    &out->init_containers[j - out->n_containers];
            if (b->name && strcmp(a->name, b->name) == 0) {
                const char *key =
                    i < out->n_containers ? "containers" : "initContainers";
                size_t idx = i < out->n_containers ? i : i - out->n_containers;
                const struct fq_value *seq = field(spec, key);
                const struct fq_value *node =
                    fq_map_get(fq_seq_at(seq, idx), "name");
                size_t old = path_key(c, key);
                path_idx(c, idx);
                derr_key(c, node, "name", "duplicate container name \"%s\"",
                         a->name);
                path_pop(c, old);
                break;
            }
        }
    }
    want_kvs(c, spec, "nodeSelector", KVS_LABELS, 0, &out->node_selector);
    want_tolerations(c, spec, "tolerations", 0, &out->tolerations,
                     &out->n_tolerations);
    out->restart_policy =
        restart[want_enum(c, spec, "restartPolicy", restart, 0)];
    out->node_name =
        want_name(c, spec, "nodeName", false, fq_check_dns1123_subdomain);
    out->priority_class_name = want_name(c, spec, "priorityClassName", false,
                                         fq_check_dns1123_subdomain);
    out->scheduler_name = want_str(c, spec, "schedulerName", false);
    out->service_account_name = want_str(c, spec, "serviceAccountName", false);
    out->affinity = want_map(c, spec, "affinity", false);
    out->termination_grace_seconds =
        want_int(c, spec, "terminationGracePeriodSeconds", 30, 0, INT64_MAX,
                 &out->has_termination_grace);
}

void want_podtemplate(struct dctx *c, const struct fq_value *m, const char *key,
                      bool required, struct fq_podtemplate *out)
{
    memset(out, 0, sizeof(*out));
    const struct fq_value *t = want_map(c, m, key, required);
    if (!t)
        return;
    size_t old = path_key(c, key);
    const struct fq_value *md = want_map(c, t, "metadata", false);
    if (md) {
        size_t o2 = path_key(c, "metadata");
        want_kvs(c, md, "labels", KVS_LABELS, 0, &out->labels);
        want_kvs(c, md, "annotations", KVS_ANNOTATIONS, 0, &out->annotations);
        path_pop(c, o2);
    }
    const struct fq_value *spec = want_map(c, t, "spec", true);
    if (spec) {
        size_t o2 = path_key(c, "spec");
        decode_podspec(c, spec, &out->spec);
        path_pop(c, o2);
    }
    path_pop(c, old);
}

/* --- metadata ------------------------------------------------------------------ */

/* The rule a kind's names follow. */
static const char *check_object_name(enum fq_kind kind, const char *s)
{
    switch (kind) {
    case FQ_KIND_NAMESPACE:
        return fq_check_dns1123_label(s);
    case FQ_KIND_RAYJOB:
        /* KubeRay: RayJob names become RayCluster and Service names. */
        if (strlen(s) > 47)
            return "must be no more than 47 characters (KubeRay derives "
                   "cluster and service names from it)";
        return fq_check_dns1035_label(s);
    case FQ_KIND_RAYCLUSTER:
    case FQ_KIND_SERVICE: /* Service names are DNS-1035 labels */
        return fq_check_dns1035_label(s);
    case FQ_KIND_JOB:
        /* The name is also the job-name label of its pods. */
        if (strlen(s) > 63)
            return "must be no more than 63 characters";
        return fq_check_dns1123_subdomain(s);
    default:
        return fq_check_dns1123_subdomain(s);
    }
}

static void decode_meta(struct dctx *c, const struct fq_value *obj,
                        struct fq_meta *meta)
{
    const struct fq_value *md = want_map(c, obj, "metadata", true);
    if (!md)
        return;
    size_t old = path_key(c, "metadata");
    meta->generate_name = want_str(c, md, "generateName", false);
    meta->name = want_str(c, md, "name", meta->generate_name == NULL);
    if (meta->name && !has_var(meta->name)) {
        const char *why = check_object_name(c->kind, meta->name);
        if (why) {
            derr_key(c, field(md, "name"), "name", "invalid name \"%s\": %s",
                     meta->name, why);
        }
    }
    meta->ns = want_name(c, md, "namespace", false, fq_check_dns1123_label);
    meta->uid = want_str(c, md, "uid", false);
    const struct fq_value *rv = field(md, "resourceVersion");
    if (rv && rv->type == FQ_V_NUM)
        meta->resource_version = rv->u.num.raw;
    else
        meta->resource_version = want_str(c, md, "resourceVersion", false);
    meta->creation_timestamp = want_str(c, md, "creationTimestamp", false);
    meta->generation = want_int(c, md, "generation", 0, 0, INT64_MAX, NULL);
    want_kvs(c, md, "labels", KVS_LABELS, 0, &meta->labels);
    want_kvs(c, md, "annotations", KVS_ANNOTATIONS, 0, &meta->annotations);
    meta->owner_references = want_seq(c, md, "ownerReferences", false, 0, 0);
    path_pop(c, old);
}

void check_kueue_labels(struct dctx *c, const struct fq_meta *meta)
{
    static const char *const keys[] = {FQ_LABEL_QUEUE_NAME,
                                       "kueue.x-k8s.io/priority-class"};
    const struct fq_value *labels = fq_meta_labels(c->obj);
    for (size_t i = 0; i < 2; i++) {
        const char *v = fq_kvs_get(&meta->labels, keys[i]);
        if (!v || has_var(v))
            continue;
        const char *why = fq_check_dns1123_subdomain(v);
        if (why) {
            size_t old = path_key(c, "metadata");
            path_key(c, "labels");
            derr_key(c, fq_map_get(labels, keys[i]), keys[i],
                     "invalid %s \"%s\": %s",
                     i == 0 ? "LocalQueue name" : "WorkloadPriorityClass name",
                     v, why);
            path_pop(c, old);
        }
    }
}

/* --- begin / end ---------------------------------------------------------------- */

/* Levenshtein distance, case-insensitive, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t tmp = row[j];
            char ca = a[i - 1], cb = b[j - 1];
            if (ca >= 'A' && ca <= 'Z')
                ca = (char)(ca - 'A' + 'a');
            if (cb >= 'A' && cb <= 'Z')
                cb = (char)(cb - 'A' + 'a');
            size_t best = prev + (ca == cb ? 0 : 1);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = tmp;
        }
    }
    return row[lb];
}

static enum fq_kind closest_kind(const char *kind)
{
    enum fq_kind best = FQ_KIND_NONE;
    size_t bd = 99;
    for (int k = FQ_KIND_NONE + 1; k < FQ_KIND__COUNT; k++) {
        size_t d = distance(kind, fq_kind_info((enum fq_kind)k)->name);
        if (d < bd) {
            bd = d;
            best = (enum fq_kind)k;
        }
    }
    return bd <= 4 || bd * 2 <= strlen(kind) ? best : FQ_KIND_NONE;
}

/* Checks apiVersion and kind; returns the resolved kind or NONE after
 * reporting why. */
static enum fq_kind check_gvk(struct dctx *c, const struct fq_value *obj)
{
    const char *av = want_str(c, obj, "apiVersion", true);
    const char *kind = want_str(c, obj, "kind", true);
    if (!av || !kind)
        return FQ_KIND_NONE;
    enum fq_kind k = fq_kind_from_gvk(av, kind);
    if (k != FQ_KIND_NONE)
        return k;
    /* Known kind at another version or group? */
    for (int i = FQ_KIND_NONE + 1; i < FQ_KIND__COUNT; i++) {
        const struct fq_kind_info *ki = fq_kind_info((enum fq_kind)i);
        if (strcmp(ki->name, kind) != 0)
            continue;
        char alt[128] = "";
        if (ki->alt_version)
            snprintf(alt, sizeof(alt), " or %s%s%s", ki->group,
                     *ki->group ? "/" : "", ki->alt_version);
        derr_key(c, field(obj, "apiVersion"), "apiVersion",
                 "%s is not served as \"%s\"; use %s%s", kind, av,
                 fq_kind_api_version((enum fq_kind)i), alt);
        return FQ_KIND_NONE;
    }
    /* Kinds Kueue queues that flexq does not run (yet): said so, with
     * the job kinds it does run, rather than a near name. */
    static const char *const kueue_kinds[] = {
        "TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "AppWrapper"};
    for (size_t i = 0; i < sizeof(kueue_kinds) / sizeof(kueue_kinds[0]); i++)
        if (!strcmp(kind, kueue_kinds[i])) {
            derr_key(c, field(obj, "kind"), "kind",
                     "%s (apiVersion %s) is a Kueue integration flexq does "
                     "not run; flexq runs Job (batch/v1), RayJob and "
                     "RayCluster (ray.io/v1), Pod (v1), JobSet "
                     "(jobset.x-k8s.io/v1alpha2), PyTorchJob "
                     "(kubeflow.org/v1), MPIJob (kubeflow.org/v2beta1), "
                     "TrainJob (trainer.kubeflow.org/v1alpha1) and "
                     "LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), each "
                     "queued with the label kueue.x-k8s.io/queue-name",
                     kind, av);
            return FQ_KIND_NONE;
        }
    enum fq_kind near = closest_kind(kind);
    if (near != FQ_KIND_NONE)
        derr_key(c, field(obj, "kind"), "kind",
                 "unknown kind \"%s\" (apiVersion %s); did you mean %s (%s)?",
                 kind, av, fq_kind_info(near)->name, fq_kind_api_version(near));
    else {
        char known[512] = "";
        size_t used = 0;
        for (int i = FQ_KIND_NONE + 1; i < FQ_KIND__COUNT; i++) {
            int w =
                snprintf(known + used, sizeof(known) - used, "%s%s",
                         used ? ", " : "", fq_kind_info((enum fq_kind)i)->name);
            if (w < 0 || (size_t)w >= sizeof(known) - used)
                break;
            used += (size_t)w;
        }
        derr_key(c, field(obj, "kind"), "kind",
                 "unknown kind \"%s\" (apiVersion %s); flexq knows %s", kind,
                 av, known);
    }
    return FQ_KIND_NONE;
}

int dctx_begin(struct dctx *c, const struct fq_value *obj, const char *file,
               struct fq_errlist *errs, enum fq_kind kind,
               struct fq_objmem **mem, struct fq_meta *meta)
{
    memset(c, 0, sizeof(*c));
    c->file = file;
    c->errs = errs;
    c->mem = mem;
    c->obj = obj;
    c->kind = kind;
    if (!obj || obj->type != FQ_V_MAP) {
        derr(c, obj, "an object must be a mapping, not %s", type_word(obj));
        return -1;
    }
    if (errs)
        scan_vars(c, obj, 0);
    const char *av = want_str(c, obj, "apiVersion", true);
    const char *kn = want_str(c, obj, "kind", true);
    if (av && kn && fq_kind_from_gvk(av, kn) != kind)
        derr_key(c, field(obj, "kind"), "kind", "expected %s (%s), not %s (%s)",
                 fq_kind_info(kind)->name, fq_kind_api_version(kind), kn, av);
    decode_meta(c, obj, meta);
    return 0;
}

int dctx_end(struct dctx *c, void *out, size_t size, struct fq_objmem **mem)
{
    if (c->nerr == 0)
        return 0;
    objmem_free(mem);
    memset(out, 0, size);
    return FQ_EINVAL;
}

/* --- whole objects ---------------------------------------------------------------- */

/* Resolves "spec.zones[0].machineTypes[1].bootSeconds" in `v`; NULL when
 * some step is missing. */
static const struct fq_value *resolve(const struct fq_value *v, const char *p,
                                      size_t n)
{
    size_t i = 0;
    while (v && i < n) {
        if (p[i] == '.') {
            i++;
            continue;
        }
        if (p[i] == '[') {
            size_t idx = 0, j = i + 1;
            while (j < n && p[j] >= '0' && p[j] <= '9')
                idx = idx * 10 + (size_t)(p[j++] - '0');
            if (j >= n || p[j] != ']' || j == i + 1)
                return NULL;
            v = v->type == FQ_V_SEQ ? fq_seq_at(v, idx) : NULL;
            i = j + 1;
            continue;
        }
        size_t j = i;
        while (j < n && p[j] != '.' && p[j] != '[')
            j++;
        char key[128];
        if (j - i >= sizeof(key))
            return NULL;
        memcpy(key, p + i, j - i);
        key[j - i] = '\0';
        v = fq_map_get(v, key);
        i = j;
    }
    return v;
}

/* Turns the one error of a capacity-module validator into a located one:
 * its message names the field ("...spec.maxNodeCount: what"), which gives
 * the path and the position; the rest is the message. */
static void foreign_error(struct dctx *c, const struct fq_value *obj,
                          const struct fq_err *e)
{
    const char *msg = e->msg;
    const char *p = NULL;
    for (const char *q = strstr(msg, "spec"); q; q = strstr(q + 1, "spec"))
        if ((q == msg || q[-1] == ' ') && (q[4] == '.' || q[4] == ':')) {
            p = q;
            break;
        }
    const char *colon = p ? strstr(p, ": ") : NULL;
    const struct fq_value *at = NULL;
    if (colon && !memchr(p, ' ', (size_t)(colon - p)) &&
        (size_t)(colon - p) < FQ_ERR_PATH_MAX)
        at = resolve(obj, p, (size_t)(colon - p));
    if (!at) {
        derr(c, obj, "%s", msg);
        return;
    }
    size_t old = c->plen;
    size_t n = (size_t)(colon - p);
    if (c->errs) {
        memcpy(c->path, p, n);
        c->path[n] = '\0';
        c->plen = n;
    }
    derr(c, at, "%s", colon + 2);
    path_pop(c, old);
}

static int validate_foreign(const struct fq_value *obj, const char *file,
                            struct fq_errlist *errs, enum fq_kind kind)
{
    struct dctx c;
    struct fq_objmem *mem = NULL;
    struct fq_meta meta;
    memset(&meta, 0, sizeof(meta));
    if (dctx_begin(&c, obj, file, errs, kind, &mem, &meta) == 0) {
        struct fq_err e;
        memset(&e, 0, sizeof(e));
        fq_spec_validate_fn validate = fq_kind_spec_validator(kind);
        int rc = validate ? validate(obj, &e) : 0;
        if (rc < 0 && c.nerr == 0)
            foreign_error(&c, obj, &e);
    }
    objmem_free(&mem);
    return c.nerr ? FQ_EINVAL : 0;
}

static void sort_errors(struct fq_err *e, size_t n);
static int validate_kind(struct dctx *cp, const struct fq_value *obj,
                         const char *file, struct fq_errlist *errs);

int fq_object_validate(const struct fq_value *obj, const char *file,
                       struct fq_errlist *errs)
{
    struct dctx c;
    memset(&c, 0, sizeof(c));
    c.file = file;
    c.errs = errs;
    c.obj = obj;
    if (!obj || obj->type != FQ_V_MAP) {
        derr(&c, obj, "an object must be a mapping, not %s", type_word(obj));
        /* derr stays quiet on a node holding ${VAR}; say that instead. */
        if (obj)
            scan_vars(&c, obj, 0);
        return FQ_EINVAL;
    }
    /* Validation always looks for unexpanded variables, which the
     * decoders do only with a list to report to (dctx_begin). */
    struct fq_errlist local;
    fq_errlist_init(&local);
    bool mine = !errs;
    if (mine)
        errs = &local;
    c.errs = errs;
    size_t start = errs->n;
    int rc = validate_kind(&c, obj, file, errs);
    if (errs->n > start)
        sort_errors(errs->items + start, errs->n - start);
    if (mine)
        fq_errlist_release(&local);
    return rc;
}

/* Sorts errors by position (stable), so they read top to bottom. */
static void sort_errors(struct fq_err *e, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct fq_err tmp = e[i];
        size_t j = i;
        while (j > 0 &&
               (e[j - 1].line > tmp.line ||
                (e[j - 1].line == tmp.line && e[j - 1].col > tmp.col))) {
            e[j] = e[j - 1];
            j--;
        }
        e[j] = tmp;
    }
}

static int validate_kind(struct dctx *cp, const struct fq_value *obj,
                         const char *file, struct fq_errlist *errs)
{
    struct dctx c = *cp;
    enum fq_kind k = check_gvk(&c, obj);
    if (k == FQ_KIND_NONE) {
        /* Still point at unexpanded variables: they may be the cause. */
        scan_vars(&c, obj, 0);
        return FQ_EINVAL;
    }
    switch (k) {
#define CASE(K, k)                               \
 case K: {                                       \
  struct fq_##k v;                               \
  int rc = fq_##k##_decode(obj, file, &v, errs); \
  fq_##k##_release(&v);                          \
  return rc;                                     \
 }
        CASE(FQ_KIND_RESOURCEFLAVOR, resourceflavor)
        CASE(FQ_KIND_CLUSTERQUEUE, clusterqueue)
        CASE(FQ_KIND_COHORT, cohort)
        CASE(FQ_KIND_LOCALQUEUE, localqueue)
        CASE(FQ_KIND_WORKLOAD, workload)
        CASE(FQ_KIND_WORKLOADPRIORITYCLASS, workloadpriorityclass)
        CASE(FQ_KIND_ADMISSIONCHECK, admissioncheck)
        CASE(FQ_KIND_PROVISIONINGREQUESTCONFIG, provisioningrequestconfig)
        CASE(FQ_KIND_PROVISIONINGREQUEST, provisioningrequest)
        CASE(FQ_KIND_RAYJOB, rayjob)
        CASE(FQ_KIND_RAYCLUSTER, raycluster)
        CASE(FQ_KIND_JOB, job)
        CASE(FQ_KIND_CONFIGMAP, configmap)
        CASE(FQ_KIND_POD, pod)
        CASE(FQ_KIND_NODE, node)
        CASE(FQ_KIND_EVENT, event)
        CASE(FQ_KIND_NAMESPACE, namespace)
#undef CASE
    case FQ_KIND_NODEPOOL:
    case FQ_KIND_CAPACITYMODEL:
    case FQ_KIND_CLUSTER:
        return validate_foreign(obj, file, errs, k);
    case FQ_KIND_PRIORITYCLASS:
        return fq_priorityclass_validate(obj, file, errs);
    case FQ_KIND_JOBSET:
    case FQ_KIND_PYTORCHJOB:
    case FQ_KIND_MPIJOB:
    case FQ_KIND_LEADERWORKERSET:
    case FQ_KIND_TRAINJOB:
        return fq_training_validate(obj, file, errs, k);
    case FQ_KIND_SERVICE:
        return fq_service_validate(obj, file, errs);
    case FQ_KIND_TOPOLOGY:
        return fq_topology_validate(obj, file, errs);
    case FQ_KIND_SECRET:
        return fq_secret_validate(obj, file, errs);
    default:
        break;
    }
    derr(&c, obj, "kind %s has no validator", fq_kind_info(k)->name);
    return FQ_EINVAL;
}

int fq_object_meta(const struct fq_value *obj, enum fq_kind *kind,
                   const char **ns, const char **name)
{
    enum fq_kind k =
        fq_kind_from_gvk(fq_value_path_str(obj, "apiVersion", NULL),
                         fq_value_path_str(obj, "kind", NULL));
    const char *n = fq_value_path_str(obj, FQ_META_NAME, NULL);
    if (kind)
        *kind = k;
    if (ns)
        *ns = fq_value_path_str(obj, FQ_META_NAMESPACE, NULL);
    if (name)
        *name = n;
    return k == FQ_KIND_NONE || !n ? FQ_EINVAL : 0;
}

/* --- view helpers ------------------------------------------------------------------ */

const char *fq_kvs_get(const struct fq_kvs *m, const char *key)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (strcmp(m->items[i].key, key) == 0)
            return m->items[i].value;
    return NULL;
}

int64_t fq_resources_get(const struct fq_resources *r, const char *name,
                         int64_t def)
{
    for (size_t i = 0; r && i < r->n; i++)
        if (strcmp(r->items[i].name, name) == 0)
            return r->items[i].value;
    return def;
}

const struct fq_condition *fq_conditions_get(const struct fq_conditions *c,
                                             const char *type)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->items[i].type && strcmp(c->items[i].type, type) == 0)
            return &c->items[i];
    return NULL;
}

bool fq_conditions_true(const struct fq_conditions *c, const char *type)
{
    const struct fq_condition *cd = fq_conditions_get(c, type);
    return cd && cd->status && strcmp(cd->status, "True") == 0;
}

bool fq_toleration_tolerates(const struct fq_toleration *t,
                             const struct fq_taint *taint)
{
    if (t->effect != FQ_EFFECT_ANY && t->effect != taint->effect)
        return false;
    if (t->key && (!taint->key || strcmp(t->key, taint->key) != 0))
        return false;
    if (t->exists)
        return true;
    const char *a = t->value ? t->value : "";
    const char *b = taint->value ? taint->value : "";
    return strcmp(a, b) == 0;
}

bool fq_selector_matches(const struct fq_selector *s,
                         const struct fq_kvs *labels)
{
    if (!s->present)
        return false;
    for (size_t i = 0; i < s->match_labels.n; i++) {
        const char *v = fq_kvs_get(labels, s->match_labels.items[i].key);
        if (!v || strcmp(v, s->match_labels.items[i].value) != 0)
            return false;
    }
    for (size_t i = 0; i < s->n_exprs; i++) {
        const struct fq_selector_req *r = &s->exprs[i];
        const char *v = fq_kvs_get(labels, r->key);
        bool in = false;
        for (size_t j = 0; v && j < r->n_values; j++)
            if (strcmp(v, r->values[j]) == 0)
                in = true;
        switch (r->op) {
        case FQ_SEL_IN:
            if (!in)
                return false;
            break;
        case FQ_SEL_NOT_IN:
            if (in)
                return false;
            break;
        case FQ_SEL_EXISTS:
            if (!v)
                return false;
            break;
        case FQ_SEL_DOES_NOT_EXIST:
            if (v)
                return false;
            break;
        }
    }
    return true;
}

/* Adds r into out[0..*n) (n <= cap) with sum or max; false when full. */
static bool res_combine(struct fq_resource *out, size_t cap, size_t *n,
                        const struct fq_resource *r, bool max)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(out[i].name, r->name) == 0) {
            if (max) {
                if (r->value > out[i].value)
                    out[i].value = r->value;
            } else if (fq_add_overflow(out[i].value, r->value, &out[i].value) <
                       0) {
                out[i].value = INT64_MAX;
            }
            return true;
        }
    }
    if (*n == cap)
        return false;
    out[(*n)++] = *r;
    return true;
}

/* The i-th resource request of the pod, containers first. */
static const struct fq_resource *nth_request(const struct fq_podspec *ps,
                                             size_t i, bool *init)
{
    for (size_t k = 0; k < ps->n_containers + ps->n_init_containers; k++) {
        const struct fq_container *c =
            k < ps->n_containers ? &ps->containers[k] :
                                   &ps->init_containers[k - ps->n_containers];
        if (i < c->requests.n) {
            *init = k >= ps->n_containers;
            return &c->requests.items[i];
        }
        i -= c->requests.n;
    }
    return NULL;
}

size_t fq_podspec_requests(const struct fq_podspec *ps, struct fq_resource *out,
                           size_t cap)
{
    size_t n = 0, distinct = 0;
    bool init;
    const struct fq_resource *r;
    for (size_t i = 0; (r = nth_request(ps, i, &init)) != NULL; i++) {
        res_combine(out, cap, &n, r, init);
        /* Count names seen for the first time (also beyond cap). */
        bool seen = false;
        bool init2;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(nth_request(ps, j, &init2)->name, r->name) == 0;
        if (!seen)
            distinct++;
    }
    return distinct;
}
