/*
 * ssa.c - server-side apply field ownership: metadata.managedFields,
 * field managers, conflicts and force, as `kubectl apply --server-side`
 * and client libraries expect them.
 *
 * How it works. An object's fields are its leaf paths (a scalar, a list,
 * or an empty map; lists are atomic: owned and replaced as a whole), not
 * counting what the server owns (apiVersion, kind, status, name,
 * namespace, uid, resourceVersion, generation, timestamps,
 * managedFields). Each manager entry of metadata.managedFields
 * (manager, operation Apply or Update, apiVersion, time, fieldsType
 * FieldsV1, fieldsV1) owns a set of them; fieldsV1 is the set as nested
 * "f:KEY" maps.
 *
 *   apply(live, config, M, force):
 *     new = leaves(config); for every other entry E, a field of new that E
 *     owns and whose value config changes is a conflict: without force
 *     the apply fails naming every one; with force E loses it. Fields M
 *     applied before and not now are removed unless another entry owns
 *     them; then every field of new is set from config. M's Apply entry
 *     becomes `new`.
 *   update(old, new, M): fields that changed or appeared are M's (Update
 *     entry) and no longer the others'; fields that disappeared are
 *     no one's.
 *
 * An object that exists without managedFields is taken as owned by
 * "before-first-apply" (Update), as the API server does.
 *
 * Invariants: (1) no entry with an empty set is kept; (2) a failed apply
 * changes nothing (the result is built on a copy); (3) at most
 * FQ_SSA_MAX_FIELDS fields per object.
 *
 * What it does not do: associative lists (x-kubernetes-list-type=map:
 * lists are atomic here), per-version field sets, managers by subresource.
 */
#include "flexq/ssa.h"
#include "flexq/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"

#define SEP '\x1f'

struct set {
    char **p; /* paths: keys joined by SEP */
    size_t n, cap;
};

struct entry {
    char *manager, *operation, *api_version, *time;
    struct set s;
};

struct entries {
    struct entry *e;
    size_t n, cap;
};

static void set_add(struct set *s, const char *p)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->p[i], p))
            return;
    FQ_GROW(s->p, s->cap, s->n + 1);
    s->p[s->n++] = fq_xstrdup(p);
}

static bool set_has(const struct set *s, const char *p)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->p[i], p))
            return true;
    return false;
}

static void set_del(struct set *s, const char *p)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->p[i], p)) {
            free(s->p[i]);
            s->p[i] = s->p[--s->n];
            return;
        }
}

static void set_free(struct set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->p[i]);
    free(s->p);
    memset(s, 0, sizeof(*s));
}

static void entries_free(struct entries *es)
{
    for (size_t i = 0; i < es->n; i++) {
        free(es->e[i].manager);
        free(es->e[i].operation);
        free(es->e[i].api_version);
        free(es->e[i].time);
        set_free(&es->e[i].s);
    }
    free(es->e);
    memset(es, 0, sizeof(*es));
}

static bool server_owned(const char *path)
{
    static const char *const top[] = {"apiVersion", "kind", "status", NULL};
    static const char *const meta[] = {"name",
                                       "namespace",
                                       "uid",
                                       "resourceVersion",
                                       "generation",
                                       "creationTimestamp",
                                       "deletionTimestamp",
                                       "managedFields",
                                       "selfLink",
                                       "deletionGracePeriodSeconds",
                                       NULL};
    for (const char *const *t = top; *t; t++)
        if (!strcmp(path, *t))
            return true;
    if (!strncmp(path, "metadata\x1f", 9)) {
        for (const char *const *m = meta; *m; m++)
            if (!strcmp(path + 9, *m))
                return true;
    }
    return false;
}

/* Adds the leaf paths of v (under prefix b) to s. */
static int leaves(const struct fq_value *v, struct fq_buf *b, struct set *s,
                  int depth)
{
    if (depth > 64)
        return FQ_ELIMIT;
    if (b->len && server_owned(fq_buf_str(b)))
        return 0;
    if (v->type != FQ_V_MAP || (v->u.map.n == 0 && b->len)) {
        if (s->n >= FQ_SSA_MAX_FIELDS)
            return FQ_ELIMIT;
        set_add(s, fq_buf_str(b));
        return 0;
    }
    for (size_t i = 0; i < v->u.map.n; i++) {
        size_t old = b->len;
        if (b->len)
            fq_buf_putc(b, SEP);
        fq_buf_puts(b, v->u.map.items[i].key);
        int rc = leaves(v->u.map.items[i].val, b, s, depth + 1);
        b->len = old;
        b->data[old] = '\0';
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int leaves_of(const struct fq_value *obj, struct set *s)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "");
    int rc = obj ? leaves(obj, &b, s, 0) : 0;
    fq_buf_release(&b);
    return rc;
}

/* The value at path p, or NULL. */
static const struct fq_value *at(const struct fq_value *v, const char *p)
{
    char key[512];
    while (v && *p) {
        const char *e = strchr(p, SEP);
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n >= sizeof(key))
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        v = v->type == FQ_V_MAP ? fq_map_get(v, key) : NULL;
        p += n + (e ? 1 : 0);
    }
    return v;
}

/* Sets path p of obj to val (taken), making maps on the way. */
static void put(struct fq_value *obj, const char *p, struct fq_value *val)
{
    char key[512];
    struct fq_value *v = obj;
    for (;;) {
        const char *e = strchr(p, SEP);
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n >= sizeof(key))
            n = sizeof(key) - 1;
        memcpy(key, p, n);
        key[n] = '\0';
        if (!e) {
            fq_map_set(v, key, val);
            return;
        }
        v = fq_map_ensure_map(v, key);
        p = e + 1;
    }
}

/* Removes path p from obj (parents stay, as in Kubernetes). */
static void drop(struct fq_value *obj, const char *p)
{
    char key[512];
    const char *e = strchr(p, SEP);
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n >= sizeof(key) || !obj || obj->type != FQ_V_MAP)
        return;
    memcpy(key, p, n);
    key[n] = '\0';
    if (!e)
        fq_map_del(obj, key);
    else
        drop(fq_map_get(obj, key), e + 1);
}

/* --- managedFields <-> entries -------------------------------------------- */

static void fields_decode(const struct fq_value *f, struct fq_buf *b,
                          struct set *s, int depth)
{
    bool child = false;
    for (size_t i = 0; f && f->type == FQ_V_MAP && i < f->u.map.n; i++) {
        const char *k = f->u.map.items[i].key;
        if (strncmp(k, "f:", 2) != 0 || depth > 64)
            continue;
        child = true;
        size_t old = b->len;
        if (b->len)
            fq_buf_putc(b, SEP);
        fq_buf_puts(b, k + 2);
        fields_decode(f->u.map.items[i].val, b, s, depth + 1);
        b->len = old;
        b->data[old] = '\0';
    }
    if (!child && b->len && s->n < FQ_SSA_MAX_FIELDS)
        set_add(s, fq_buf_str(b));
}

static void entries_read(const struct fq_value *obj, struct entries *es)
{
    const struct fq_value *mf = fq_value_path(obj, FQ_META_MANAGED_FIELDS);
    for (size_t i = 0; i < fq_value_len(mf); i++) {
        const struct fq_value *m = fq_seq_at(mf, i);
        FQ_GROW(es->e, es->cap, es->n + 1);
        struct entry *e = &es->e[es->n++];
        memset(e, 0, sizeof(*e));
        e->manager = fq_xstrdup(fq_value_path_str(m, "manager", ""));
        e->operation = fq_xstrdup(fq_value_path_str(m, "operation", "Update"));
        e->api_version = fq_xstrdup(fq_value_path_str(m, "apiVersion", ""));
        e->time = fq_xstrdup(fq_value_path_str(m, "time", ""));
        struct fq_buf b = FQ_BUF_INIT;
        fq_buf_puts(&b, "");
        fields_decode(fq_map_get(m, "fieldsV1"), &b, &e->s, 0);
        fq_buf_release(&b);
    }
}

static struct entry *entry_for(struct entries *es, const char *manager,
                               const char *op)
{
    for (size_t i = 0; i < es->n; i++)
        if (!strcmp(es->e[i].manager, manager) &&
            !strcmp(es->e[i].operation, op))
            return &es->e[i];
    FQ_GROW(es->e, es->cap, es->n + 1);
    struct entry *e = &es->e[es->n++];
    memset(e, 0, sizeof(*e));
    e->manager = fq_xstrdup(manager);
    e->operation = fq_xstrdup(op);
    e->api_version = fq_xstrdup("");
    e->time = fq_xstrdup("");
    return e;
}

static void entry_touch(struct entry *e, const char *api_version,
                        const char *now)
{
    free(e->api_version);
    free(e->time);
    e->api_version = fq_xstrdup(api_version);
    e->time = fq_xstrdup(now);
}

static struct fq_value *fields_encode(const struct set *s)
{
    struct fq_value *root = fq_value_map();
    struct fq_buf k = FQ_BUF_INIT;
    for (size_t i = 0; i < s->n; i++) {
        struct fq_value *v = root;
        const char *p = s->p[i];
        for (;;) {
            const char *e = strchr(p, SEP);
            size_t n = e ? (size_t)(e - p) : strlen(p);
            fq_buf_reset(&k);
            fq_buf_puts(&k, "f:");
            fq_buf_append(&k, p, n);
            v = fq_map_ensure_map(v, fq_buf_str(&k));
            if (!e)
                break;
            p = e + 1;
        }
    }
    fq_buf_release(&k);
    return root;
}

static void entries_write(struct fq_value *obj, const struct entries *es)
{
    struct fq_value *mf = fq_value_seq();
    for (size_t i = 0; i < es->n; i++) {
        const struct entry *e = &es->e[i];
        if (!e->s.n)
            continue;
        struct fq_value *m = fq_value_map();
        fq_map_set(m, "manager", fq_value_str(e->manager));
        fq_map_set(m, "operation", fq_value_str(e->operation));
        fq_map_set(m, "apiVersion", fq_value_str(e->api_version));
        fq_map_set(m, "time", fq_value_str(e->time));
        fq_map_set(m, "fieldsType", fq_value_str("FieldsV1"));
        fq_map_set(m, "fieldsV1", fields_encode(&e->s));
        fq_seq_push(mf, m);
    }
    struct fq_value *md = fq_map_ensure_map(obj, "metadata");
    if (fq_value_len(mf))
        fq_map_set(md, "managedFields", mf);
    else {
        fq_value_free(mf);
        fq_map_del(md, "managedFields");
    }
}

/* Entries of `live`; "before-first-apply" owns everything of an object
 * that has none. */
static int entries_of(const struct fq_value *live, struct entries *es,
                      const char *now)
{
    entries_read(live, es);
    if (!live || es->n)
        return 0;
    struct entry *e = entry_for(es, "before-first-apply", "Update");
    entry_touch(e, fq_value_path_str(live, "apiVersion", ""), now);
    return leaves_of(live, &e->s);
}

/* ".spec.x.y" from an internal path. */
static struct fq_value *field_name(const char *p)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_putc(&b, '.');
    for (; *p; p++)
        fq_buf_putc(&b, *p == SEP ? '.' : *p);
    struct fq_value *v = fq_value_str(fq_buf_str(&b));
    fq_buf_release(&b);
    return v;
}

int fq_ssa_apply(const struct fq_value *live, const struct fq_value *config,
                 const char *manager, bool force, const char *now,
                 struct fq_value **out, struct fq_value **conflicts,
                 struct fq_err *err)
{
    *out = NULL;
    *conflicts = NULL;
    if (!config || config->type != FQ_V_MAP)
        return fq_err_set(err, FQ_EPARSE, "an apply body must be an object");
    if (!manager || !*manager)
        return fq_err_set(err, FQ_EPARSE,
                          "PatchOptions.meta.k8s.io \"\" is invalid: "
                          "fieldManager: Required value: is required for "
                          "apply requests");
    struct entries es = {0};
    struct set now_set = {0};
    int rc = entries_of(live, &es, now);
    if (rc == 0)
        rc = leaves_of(config, &now_set);
    if (rc < 0) {
        entries_free(&es);
        set_free(&now_set);
        return fq_err_set(err, FQ_ELIMIT,
                          "the object has more than %d fields or nests too "
                          "deep",
                          FQ_SSA_MAX_FIELDS);
    }
    struct fq_value *found = fq_value_seq();
    for (size_t i = 0; i < es.n; i++) {
        struct entry *e = &es.e[i];
        if (!strcmp(e->manager, manager) && !strcmp(e->operation, "Apply"))
            continue;
        for (size_t j = 0; j < now_set.n; j++) {
            const char *p = now_set.p[j];
            if (!set_has(&e->s, p))
                continue;
            const struct fq_value *want = at(config, p);
            const struct fq_value *have = at(live, p);
            if (have && fq_value_equal(want, have))
                continue; /* same value: shared ownership */
            if (force) {
                set_del(&e->s, p);
                continue;
            }
            struct fq_value *c = fq_value_map();
            fq_map_set(c, "manager", fq_value_str(e->manager));
            fq_map_set(c, "apiVersion", fq_value_str(e->api_version));
            fq_map_set(c, "field", field_name(p));
            fq_seq_push(found, c);
        }
    }
    if (fq_value_len(found)) {
        *conflicts = found;
        entries_free(&es);
        set_free(&now_set);
        return fq_err_set(err, FQ_ECONFLICT,
                          "Apply failed with %zu "
                          "conflict%s",
                          fq_value_len(found),
                          fq_value_len(found) > 1 ? "s" : "");
    }
    fq_value_free(found);
    struct fq_value *r = live ? fq_value_clone(live) : fq_value_map();
    struct entry *mine = entry_for(&es, manager, "Apply");
    for (size_t i = 0; i < mine->s.n; i++) {
        const char *p = mine->s.p[i];
        if (set_has(&now_set, p))
            continue;
        bool other = false;
        for (size_t k = 0; k < es.n && !other; k++)
            other = &es.e[k] != mine && set_has(&es.e[k].s, p);
        if (!other)
            drop(r, p);
    }
    for (size_t j = 0; j < now_set.n; j++)
        put(r, now_set.p[j], fq_value_clone(at(config, now_set.p[j])));
    const char *identity[] = {"apiVersion", "kind"};
    for (int i = 0; i < 2; i++) {
        const struct fq_value *v = fq_map_get(config, identity[i]);
        if (v)
            fq_map_set(r, identity[i], fq_value_clone(v));
    }
    const char *mid[] = {"name", "namespace"};
    for (int i = 0; i < 2; i++) {
        const struct fq_value *v =
            fq_map_get(fq_map_get(config, "metadata"), mid[i]);
        if (v)
            fq_map_set(fq_map_ensure_map(r, "metadata"), mid[i],
                       fq_value_clone(v));
    }
    set_free(&mine->s);
    for (size_t j = 0; j < now_set.n; j++)
        set_add(&mine->s, now_set.p[j]);
    entry_touch(mine, fq_value_path_str(config, "apiVersion", ""), now);
    entries_write(r, &es);
    entries_free(&es);
    set_free(&now_set);
    *out = r;
    return 0;
}

int fq_ssa_update(const struct fq_value *old, struct fq_value *obj,
                  const char *manager, const char *now)
{
    struct entries es = {0};
    struct set before = {0}, after = {0};
    int rc = entries_of(old, &es, now);
    if (rc == 0)
        rc = leaves_of(old, &before);
    if (rc == 0)
        rc = leaves_of(obj, &after);
    if (rc == 0) {
        struct entry *mine = entry_for(&es, manager, "Update");
        bool changed = false;
        for (size_t j = 0; j < after.n; j++) {
            const char *p = after.p[j];
            const struct fq_value *was = at(old, p);
            if (was && fq_value_equal(was, at(obj, p)))
                continue;
            changed = true;
            for (size_t k = 0; k < es.n; k++)
                if (&es.e[k] != mine)
                    set_del(&es.e[k].s, p);
            set_add(&mine->s, p);
        }
        for (size_t j = 0; j < before.n; j++) {
            if (set_has(&after, before.p[j]))
                continue;
            for (size_t k = 0; k < es.n; k++)
                set_del(&es.e[k].s, before.p[j]);
        }
        if (changed)
            entry_touch(mine, fq_value_path_str(obj, "apiVersion", ""), now);
        entries_write(obj, &es);
    }
    entries_free(&es);
    set_free(&before);
    set_free(&after);
    return rc < 0 ? FQ_ELIMIT : 0;
}
