/*
 * patch.c - the two patch formats Kubernetes accepts besides merge patch
 * (value.h): JSON patch (RFC 6902, application/json-patch+json) and
 * strategic merge patch (application/strategic-merge-patch+json) with the
 * patch strategies of the core kinds (Pod, Job, Node, Namespace,
 * ConfigMap, Event).
 *
 * How it works. JSON patch walks RFC 6901 pointers and applies add,
 * remove, replace, move, copy and test in order to the target, which the
 * caller passes as a copy (the API keeps the stored object until the
 * whole patch applied). Strategic merge patch is a merge patch in which
 * lists with a merge key (containers and env by name, ports by
 * containerPort, volumeMounts by mountPath, conditions by type, ...) are
 * merged item by item, primitive lists with strategy "merge" (finalizers)
 * are unions, and the directives kubectl writes are honoured:
 * `$patch: replace|delete|merge` on a map or a list item,
 * `$retainKeys`, `$setElementOrder/FIELD`, `$deleteFromPrimitiveList/FIELD`.
 * The merge keys are one table below, by path from the object's root
 * with list positions left out.
 *
 * Invariants: (1) on error *target is left as it was when the function
 * started only as far as the caller needs: both functions may have
 * changed *target, so callers patch a copy; (2) no directive key ("$...")
 * is ever left in the result.
 *
 * What it does not do: strategic merge patch on custom resources (as in
 * Kubernetes, the API refuses it with 415), patch strategies of kinds
 * flexq does not serve, JSON patch on more than FQ_PATCH_MAX_OPS
 * operations.
 */
#include "flexq/patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

/* --- JSON patch (RFC 6902) ------------------------------------------------ */

#define MAX_TOKENS 64
#define MAX_TOKEN  256

/* Splits an RFC 6901 pointer into unescaped tokens. Returns the count or
 * -1 (malformed, too deep, a token too long). */
static int pointer_split(const char *p, char tok[][MAX_TOKEN])
{
    if (!*p)
        return 0;
    if (*p != '/')
        return -1;
    int n = 0;
    while (*p == '/') {
        if (n == MAX_TOKENS)
            return -1;
        p++;
        size_t k = 0;
        while (*p && *p != '/') {
            char c = *p++;
            if (c == '~') {
                if (*p == '0')
                    c = '~';
                else if (*p == '1')
                    c = '/';
                else
                    return -1;
                p++;
            }
            if (k == MAX_TOKEN - 1)
                return -1;
            tok[n][k++] = c;
        }
        tok[n][k] = '\0';
        n++;
    }
    return n;
}

/* An array index token: digits without a leading zero, < n_max+1. */
static int index_of(const char *t, size_t n, bool allow_end, size_t *out)
{
    if (allow_end && !strcmp(t, "-")) {
        *out = n;
        return 0;
    }
    if (!*t || (t[0] == '0' && t[1]) || strspn(t, "0123456789") != strlen(t) ||
        strlen(t) > 9)
        return -1;
    size_t i = (size_t)strtoul(t, NULL, 10);
    if (i > n || (!allow_end && i == n))
        return -1;
    *out = i;
    return 0;
}

/* Walks tokens 0..n-2 and returns the container of the last one. */
static struct fq_value *walk(struct fq_value *root, char tok[][MAX_TOKEN],
                             int n)
{
    struct fq_value *v = root;
    for (int i = 0; i < n - 1 && v; i++) {
        if (v->type == FQ_V_MAP) {
            v = fq_map_get(v, tok[i]);
        } else if (v->type == FQ_V_SEQ) {
            size_t at;
            v = index_of(tok[i], fq_value_len(v), false, &at) == 0 ?
                    fq_seq_at(v, at) :
                    NULL;
        } else {
            v = NULL;
        }
    }
    return v;
}

static void seq_insert(struct fq_value *s, size_t at, struct fq_value *val)
{
    fq_seq_push(s, val);
    size_t n = s->u.seq.n;
    memmove(&s->u.seq.items[at + 1], &s->u.seq.items[at],
            (n - 1 - at) * sizeof(s->u.seq.items[0]));
    s->u.seq.items[at] = val;
}

/* Removes and returns the value at the pointer, or NULL. */
static struct fq_value *take_at(struct fq_value *root, char tok[][MAX_TOKEN],
                                int n)
{
    struct fq_value *parent = walk(root, tok, n);
    if (!parent)
        return NULL;
    if (parent->type == FQ_V_MAP)
        return fq_map_take(parent, tok[n - 1]);
    size_t at;
    if (parent->type != FQ_V_SEQ ||
        index_of(tok[n - 1], fq_value_len(parent), false, &at) < 0)
        return NULL;
    struct fq_value *v = parent->u.seq.items[at];
    memmove(&parent->u.seq.items[at], &parent->u.seq.items[at + 1],
            (parent->u.seq.n - at - 1) * sizeof(parent->u.seq.items[0]));
    parent->u.seq.n--;
    return v;
}

static const struct fq_value *get_at(struct fq_value *root,
                                     char tok[][MAX_TOKEN], int n)
{
    if (n == 0)
        return root;
    struct fq_value *parent = walk(root, tok, n);
    if (!parent)
        return NULL;
    if (parent->type == FQ_V_MAP)
        return fq_map_get(parent, tok[n - 1]);
    size_t at;
    if (parent->type != FQ_V_SEQ ||
        index_of(tok[n - 1], fq_value_len(parent), false, &at) < 0)
        return NULL;
    return fq_seq_at(parent, at);
}

/* add (replace_only: replace) val (taken) at the pointer. */
static int put_at(struct fq_value **root, char tok[][MAX_TOKEN], int n,
                  struct fq_value *val, bool replace_only)
{
    if (n == 0) {
        fq_value_free(*root);
        *root = val;
        return 0;
    }
    struct fq_value *parent = walk(*root, tok, n);
    if (parent && parent->type == FQ_V_MAP) {
        if (replace_only && !fq_map_get(parent, tok[n - 1]))
            goto fail;
        fq_map_set(parent, tok[n - 1], val);
        return 0;
    }
    size_t at;
    if (parent && parent->type == FQ_V_SEQ &&
        index_of(tok[n - 1], fq_value_len(parent), !replace_only, &at) == 0) {
        if (replace_only) {
            fq_value_free(parent->u.seq.items[at]);
            parent->u.seq.items[at] = val;
        } else {
            seq_insert(parent, at, val);
        }
        return 0;
    }
fail:
    fq_value_free(val);
    return -1;
}

int fq_patch_json(struct fq_value **target, const struct fq_value *ops,
                  struct fq_err *err)
{
    if (!ops || ops->type != FQ_V_SEQ)
        return fq_err_set(err, FQ_EPARSE,
                          "a JSON patch must be a list of operations");
    if (fq_value_len(ops) > FQ_PATCH_MAX_OPS)
        return fq_err_set(err, FQ_ELIMIT,
                          "a JSON patch may hold at most %d operations",
                          FQ_PATCH_MAX_OPS);
    char tok[MAX_TOKENS][MAX_TOKEN], from[MAX_TOKENS][MAX_TOKEN];
    for (size_t i = 0; i < fq_value_len(ops); i++) {
        const struct fq_value *o = fq_seq_at(ops, i);
        const char *op = fq_value_path_str(o, "op", NULL);
        const char *path = fq_value_path_str(o, "path", NULL);
        if (!op || !path)
            return fq_err_set(err, FQ_EPARSE,
                              "operation %zu: \"op\" and \"path\" are "
                              "required strings",
                              i);
        int n = pointer_split(path, tok);
        if (n < 0)
            return fq_err_set(err, FQ_EPARSE,
                              "operation %zu: \"%s\" is not a JSON pointer", i,
                              path);
        const struct fq_value *value = fq_map_get(o, "value");
        bool needs_value =
            !strcmp(op, "add") || !strcmp(op, "replace") || !strcmp(op, "test");
        if (needs_value && !value)
            return fq_err_set(err, FQ_EPARSE,
                              "operation %zu (%s): \"value\" is required", i,
                              op);
        if (!strcmp(op, "add") || !strcmp(op, "replace")) {
            if (put_at(target, tok, n, fq_value_clone(value),
                       !strcmp(op, "replace")) < 0)
                return fq_err_set(err, FQ_EINVAL,
                                  "operation %zu (%s): the path \"%s\" does "
                                  "not exist",
                                  i, op, path);
        } else if (!strcmp(op, "remove")) {
            struct fq_value *v = n ? take_at(*target, tok, n) : NULL;
            if (!v)
                return fq_err_set(err, FQ_EINVAL,
                                  "operation %zu (remove): the path \"%s\" "
                                  "does not exist",
                                  i, path);
            fq_value_free(v);
        } else if (!strcmp(op, "test")) {
            const struct fq_value *cur = get_at(*target, tok, n);
            if (!cur || !fq_value_equal(cur, value))
                return fq_err_set(err, FQ_EINVAL,
                                  "operation %zu (test): the value at \"%s\" "
                                  "is not the one expected",
                                  i, path);
        } else if (!strcmp(op, "move") || !strcmp(op, "copy")) {
            const char *fp = fq_value_path_str(o, "from", NULL);
            int fn = fp ? pointer_split(fp, from) : -1;
            if (fn < 0)
                return fq_err_set(err, FQ_EPARSE,
                                  "operation %zu (%s): \"from\" must be a "
                                  "JSON pointer",
                                  i, op);
            bool move = !strcmp(op, "move");
            size_t fl = strlen(fp);
            if (move && !strncmp(path, fp, fl) &&
                (path[fl] == '/' || path[fl] == '\0') && strcmp(path, fp))
                return fq_err_set(err, FQ_EINVAL,
                                  "operation %zu (move): cannot move \"%s\" "
                                  "into itself",
                                  i, fp);
            struct fq_value *v;
            if (move) {
                v = fn ? take_at(*target, from, fn) : NULL;
            } else {
                const struct fq_value *src = get_at(*target, from, fn);
                v = src ? fq_value_clone(src) : NULL;
            }
            if (!v)
                return fq_err_set(err, FQ_EINVAL,
                                  "operation %zu (%s): the path \"%s\" does "
                                  "not exist",
                                  i, op, fp);
            if (put_at(target, tok, n, v, false) < 0)
                return fq_err_set(err, FQ_EINVAL,
                                  "operation %zu (%s): the path \"%s\" does "
                                  "not exist",
                                  i, op, path);
        } else {
            return fq_err_set(err, FQ_EPARSE,
                              "operation %zu: unknown op \"%s\"", i, op);
        }
    }
    return 0;
}

/* --- strategic merge patch ------------------------------------------------ */

/* Lists merged by key ("" = a list of scalars merged as a set), by path
 * from the root with list positions left out. POD(P) is a PodSpec at P. */
struct mkey {
    const char *path;
    const char *key;
};

#define CONTAINER_KEYS(C)                                        \
 {C, "name"}, {C ".env", "name"}, {C ".ports", "containerPort"}, \
     {C ".volumeMounts", "mountPath"},                           \
 {                                                               \
  C ".volumeDevices", "devicePath"                               \
 }
#define POD(P)                                                         \
 CONTAINER_KEYS(P ".containers"), CONTAINER_KEYS(P ".initContainers"), \
     CONTAINER_KEYS(P ".ephemeralContainers"), {P ".volumes", "name"}, \
     {P ".imagePullSecrets", "name"}, {P ".hostAliases", "ip"},        \
     {P ".resourceClaims", "name"}, {P ".schedulingGates", "name"},    \
 {                                                                     \
  P ".topologySpreadConstraints", "topologyKey"                        \
 }

static const struct mkey meta_keys[] = {
    {"metadata.finalizers", ""}, {"metadata.ownerReferences", "uid"}, {NULL}};
static const struct mkey pod_keys[] = {POD("spec"),
                                       {"status.conditions", "type"},
                                       {"metadata.finalizers", ""},
                                       {"metadata.ownerReferences", "uid"},
                                       {NULL}};
static const struct mkey job_keys[] = {POD("spec.template.spec"),
                                       {"status.conditions", "type"},
                                       {"metadata.finalizers", ""},
                                       {"metadata.ownerReferences", "uid"},
                                       {NULL}};
static const struct mkey node_keys[] = {{"spec.podCIDRs", ""},
                                        {"status.conditions", "type"},
                                        {"status.addresses", "type"},
                                        {"metadata.finalizers", ""},
                                        {"metadata.ownerReferences", "uid"},
                                        {NULL}};
static const struct mkey ns_keys[] = {{"status.conditions", "type"},
                                      {"metadata.finalizers", ""},
                                      {"metadata.ownerReferences", "uid"},
                                      {NULL}};

static const struct mkey svc_keys[] = {{"spec.ports", "port"},
                                       {"metadata.finalizers", ""},
                                       {"metadata.ownerReferences", "uid"},
                                       {NULL}};

static const struct mkey *keys_of(enum fq_kind k)
{
    switch (k) {
    case FQ_KIND_POD:
        return pod_keys;
    case FQ_KIND_JOB:
        return job_keys;
    case FQ_KIND_NODE:
        return node_keys;
    case FQ_KIND_NAMESPACE:
        return ns_keys;
    case FQ_KIND_SERVICE:
        return svc_keys;
    case FQ_KIND_CONFIGMAP:
    case FQ_KIND_SECRET:
    case FQ_KIND_EVENT:
        return meta_keys;
    default:
        return NULL;
    }
}

bool fq_patch_strategic_supported(enum fq_kind k)
{
    return keys_of(k) != NULL;
}

struct smp {
    const struct mkey *keys;
    char path[512];
    size_t len;
    struct fq_err *err;
    int depth;
};

#define MAX_DEPTH 64

static size_t path_push(struct smp *s, const char *key)
{
    size_t old = s->len;
    int n = snprintf(s->path + s->len, sizeof(s->path) - s->len, "%s%s",
                     s->len ? "." : "", key);
    if (n > 0 && (size_t)n < sizeof(s->path) - s->len)
        s->len += (size_t)n;
    return old;
}

static void path_pop(struct smp *s, size_t old)
{
    s->len = old;
    s->path[old] = '\0';
}

/* The merge key of the list at the current path: NULL (replace the list),
 * "" (a set of scalars) or the key. */
static const char *merge_key(const struct smp *s)
{
    for (const struct mkey *k = s->keys; k->path; k++)
        if (!strcmp(k->path, s->path))
            return k->key;
    return NULL;
}

static int smp_map(struct smp *s, struct fq_value *t, const struct fq_value *p,
                   bool *del);

/* A copy of patch value v with every directive processed against
 * nothing (what a new item or key gets). */
static struct fq_value *fresh(struct smp *s, const struct fq_value *v, int *rc)
{
    if (v->type == FQ_V_MAP) {
        struct fq_value *m = fq_value_map();
        bool del = false;
        *rc = smp_map(s, m, v, &del);
        return m;
    }
    if (v->type == FQ_V_SEQ) {
        struct fq_value *q = fq_value_seq();
        for (size_t i = 0; i < fq_value_len(v) && *rc == 0; i++) {
            const struct fq_value *it = fq_seq_at(v, i);
            if (it->type == FQ_V_MAP && fq_map_get(it, "$patch"))
                continue;
            fq_seq_push(q, fresh(s, it, rc));
        }
        return q;
    }
    return fq_value_clone(v);
}

static bool same_key(const struct fq_value *a, const struct fq_value *b,
                     const char *key)
{
    const struct fq_value *x = fq_map_get(a, key), *y = fq_map_get(b, key);
    return x && y && fq_value_equal(x, y);
}

/* Merges list p into list t (both sequences) at the current path. */
static int smp_list(struct smp *s, struct fq_value *t, const struct fq_value *p)
{
    const char *key = merge_key(s);
    int rc = 0;
    if (!key) {
        /* No strategy: the patch's list replaces the target's. */
        struct fq_value *n = fresh(s, p, &rc);
        for (size_t i = fq_value_len(t); i-- > 0;)
            fq_seq_remove(t, i);
        for (size_t i = 0; i < fq_value_len(n); i++)
            fq_seq_push(t, fq_value_clone(fq_seq_at(n, i)));
        fq_value_free(n);
        return rc;
    }
    /* {"$patch": "replace"} as an item: the other items are the list. */
    for (size_t i = 0; i < fq_value_len(p); i++) {
        const struct fq_value *it = fq_seq_at(p, i);
        const char *d = fq_value_path_str(it, "$patch", NULL);
        if (it->type == FQ_V_MAP && d && !strcmp(d, "replace")) {
            for (size_t j = fq_value_len(t); j-- > 0;)
                fq_seq_remove(t, j);
            break;
        }
    }
    for (size_t i = 0; i < fq_value_len(p) && rc == 0; i++) {
        const struct fq_value *it = fq_seq_at(p, i);
        if (!*key) {
            /* a set of scalars: add what is missing */
            bool have = false;
            for (size_t j = 0; j < fq_value_len(t) && !have; j++)
                have = fq_value_equal(fq_seq_at(t, j), it);
            if (!have)
                fq_seq_push(t, fq_value_clone(it));
            continue;
        }
        if (it->type != FQ_V_MAP)
            return fq_err_set(s->err, FQ_EINVAL,
                              "%s: items must be objects with \"%s\"", s->path,
                              key);
        const char *d = fq_value_path_str(it, "$patch", NULL);
        if (d && !strcmp(d, "replace") && fq_value_len(it) == 1)
            continue;
        if (!fq_map_get(it, key))
            return fq_err_set(s->err, FQ_EINVAL,
                              "%s: an item has no merge key \"%s\"", s->path,
                              key);
        size_t j = 0;
        while (j < fq_value_len(t) && !same_key(fq_seq_at(t, j), it, key))
            j++;
        if (d && !strcmp(d, "delete")) {
            while (j < fq_value_len(t)) {
                fq_seq_remove(t, j);
                while (j < fq_value_len(t) &&
                       !same_key(fq_seq_at(t, j), it, key))
                    j++;
            }
            continue;
        }
        if (j < fq_value_len(t) && fq_seq_at(t, j)->type == FQ_V_MAP) {
            bool del = false;
            rc = smp_map(s, fq_seq_at(t, j), it, &del);
            if (del)
                fq_seq_remove(t, j);
        } else {
            fq_seq_push(t, fresh(s, it, &rc));
        }
    }
    return rc;
}

/* Reorders list t as `order` says (items it names first, in its order;
 * the others after, as they were). */
static void set_order(struct fq_value *t, const struct fq_value *order,
                      const char *key)
{
    size_t n = fq_value_len(t), placed = 0;
    struct fq_value **items = t->u.seq.items;
    for (size_t o = 0; o < fq_value_len(order); o++) {
        const struct fq_value *want = fq_seq_at(order, o);
        for (size_t j = placed; j < n; j++) {
            bool match = key && *key ? same_key(items[j], want, key) :
                                       fq_value_equal(items[j], want);
            if (!match)
                continue;
            struct fq_value *v = items[j];
            memmove(&items[placed + 1], &items[placed],
                    (j - placed) * sizeof(items[0]));
            items[placed++] = v;
            break;
        }
    }
}

static int smp_map(struct smp *s, struct fq_value *t, const struct fq_value *p,
                   bool *del)
{
    if (++s->depth > MAX_DEPTH) {
        s->depth--;
        return fq_err_set(s->err, FQ_ELIMIT, "the patch nests too deep");
    }
    int rc = 0;
    const char *d = fq_value_path_str(p, "$patch", NULL);
    if (d && !strcmp(d, "delete")) {
        *del = true;
        goto out;
    }
    if (d && !strcmp(d, "replace")) {
        /* The patch (without its directives) is the whole map. */
        while (fq_value_len(t)) {
            char *k0 = fq_xstrdup(t->u.map.items[0].key);
            fq_map_del(t, k0);
            free(k0);
        }
    } else if (d && strcmp(d, "merge") != 0) {
        rc = fq_err_set(s->err, FQ_EINVAL, "%s: unknown $patch \"%s\"",
                        s->len ? s->path : "(root)", d);
        goto out;
    }
    for (size_t i = 0; i < p->u.map.n && rc == 0; i++) {
        const char *k = p->u.map.items[i].key;
        const struct fq_value *v = p->u.map.items[i].val;
        if (k[0] == '$') {
            const char *field = strchr(k, '/');
            if (!strncmp(k, "$deleteFromPrimitiveList/", 25) && field) {
                struct fq_value *l = fq_map_get(t, field + 1);
                for (size_t j = 0; j < fq_value_len(v); j++)
                    for (size_t m = fq_value_len(l); m-- > 0;)
                        if (fq_value_equal(fq_seq_at(l, m), fq_seq_at(v, j)))
                            fq_seq_remove(l, m);
            }
            continue; /* $patch, $retainKeys, $setElementOrder: below */
        }
        size_t old = path_push(s, k);
        struct fq_value *cur = fq_map_get(t, k);
        if (v->type == FQ_V_NULL) {
            fq_map_del(t, k);
        } else if (v->type == FQ_V_MAP && cur && cur->type == FQ_V_MAP) {
            bool gone = false;
            rc = smp_map(s, cur, v, &gone);
            if (gone)
                fq_map_del(t, k);
        } else if (v->type == FQ_V_SEQ && cur && cur->type == FQ_V_SEQ) {
            rc = smp_list(s, cur, v);
        } else if (v->type == FQ_V_MAP) {
            const char *vd = fq_value_path_str(v, "$patch", NULL);
            if (!(vd && !strcmp(vd, "delete")))
                fq_map_set(t, k, fresh(s, v, &rc));
        } else {
            fq_map_set(t, k, fresh(s, v, &rc));
        }
        path_pop(s, old);
    }
    /* $setElementOrder/FIELD after the lists are merged. */
    for (size_t i = 0; i < p->u.map.n && rc == 0; i++) {
        const char *k = p->u.map.items[i].key;
        if (strncmp(k, "$setElementOrder/", 17) != 0)
            continue;
        struct fq_value *l = fq_map_get(t, k + 17);
        if (!l || l->type != FQ_V_SEQ)
            continue;
        size_t old = path_push(s, k + 17);
        set_order(l, p->u.map.items[i].val, merge_key(s));
        path_pop(s, old);
    }
    const struct fq_value *retain = fq_map_get(p, "$retainKeys");
    if (rc == 0 && retain && retain->type == FQ_V_SEQ) {
        for (size_t i = t->u.map.n; i-- > 0;) {
            bool keep = false;
            for (size_t j = 0; j < fq_value_len(retain) && !keep; j++) {
                const char *rk = fq_value_as_str(fq_seq_at(retain, j));
                keep = rk && !strcmp(rk, t->u.map.items[i].key);
            }
            if (!keep) {
                char *dk = fq_xstrdup(t->u.map.items[i].key);
                fq_map_del(t, dk);
                free(dk);
            }
        }
    }
out:
    s->depth--;
    return rc;
}

int fq_patch_strategic(struct fq_value **target, const struct fq_value *patch,
                       enum fq_kind kind, struct fq_err *err)
{
    const struct mkey *keys = keys_of(kind);
    if (!keys)
        return fq_err_set(err, FQ_EUNSUPPORTED,
                          "strategic merge patch is not supported for %s",
                          fq_kind_info(kind)->plural);
    if (!patch || patch->type != FQ_V_MAP)
        return fq_err_set(err, FQ_EPARSE,
                          "a strategic merge patch must be a JSON object");
    if (!*target || (*target)->type != FQ_V_MAP) {
        fq_value_free(*target);
        *target = fq_value_map();
    }
    struct smp s = {.keys = keys, .err = err};
    bool del = false;
    int rc = smp_map(&s, *target, patch, &del);
    if (rc == 0 && del)
        rc = fq_err_set(err, FQ_EINVAL,
                        "$patch: delete cannot remove the whole object");
    return rc;
}
