/*
 * objstore.c - the core's in-memory object store (see objstore.h).
 *
 * How it works. Objects live in a chained hash table keyed by
 * (kind, namespace, name). Each kind also keeps an array of its entries
 * sorted by namespace and name (insertion and removal find their place by
 * binary search and move the tail), so listing is a copy: controllers
 * list on every run, objects are created and deleted far less often, and
 * output stays stable and deterministic.
 *
 * Every successful mutation:
 *   1. takes the next revision number (the store's resourceVersion),
 *   2. writes it into metadata.resourceVersion,
 *   3. calls the hook (the engine wakes its controllers), and
 *   4. appends a copy to the change log, unless logging is off.
 *
 * Invariants:
 *   (1) an entry's `pub.obj` is the only owner of its tree, and its
 *       metadata.name / metadata.namespace equal the key;
 *   (2) revisions are strictly increasing over the store's life;
 *   (3) an update that changes nothing takes no revision and logs nothing.
 *
 * What it does not do: validation (objects.c), defaulting beyond the
 * metadata the API server owns, persistence (the daemon's store.c), watch
 * filtering (the API layer).
 */
#include "flexq/objstore.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

/* One object. The fields a lookup reads come first, and the namespace and
 * name it compares are in the entry's own block (text), not two blocks of
 * their own: a lookup of a cold entry takes one or two cache misses, not
 * four. */
struct entry {
    uint64_t hash;
    struct entry *next;
    uint32_t nlen, nslen; /* strlen(pub.name), strlen(pub.ns) */
    struct fq_object pub; /* pub.name and pub.ns point into text */
    char text[];          /* the name, its NUL, the namespace, its NUL */
};

#define MIN_BUCKETS  256
#define MIN_KINDLIST 64

struct kindlist {
    struct entry **items;
    size_t n, cap;
};

struct fq_objstore {
    struct entry **buckets;
    size_t nbuckets; /* power of two */
    size_t count;
    struct kindlist kinds[FQ_KIND__COUNT];
    uint64_t rev;
    bool logging;
    struct fq_change *log;
    size_t nlog, caplog;
    unsigned window;    /* open log windows, nested (log_window) */
    size_t window_from; /* the outermost one's first change in log */
    fq_objstore_hook_fn hook;
    void *hook_ctx;
    struct entry *deleting; /* the entry being deleted, during its hook */
    bool namespaced[FQ_KIND__COUNT]; /* fq_kind_info's, at hand */
};

/* What a lookup looks for: (kind, ns, name), ns normalised, with the
 * lengths and the hash, each worked out once. */
struct key {
    enum fq_kind kind;
    const char *ns, *name;
    size_t nslen, nlen;
    uint64_t hash;
};

/* Mixes the n bytes at p into h, 8 at a time: a multiply per word where
 * FNV-1a took one per byte (a lookup of a workload hashes some 40 bytes,
 * and that was a third of its time). The chains are never walked in an
 * order anyone sees, so the function is free to change. */
static inline uint64_t hash_bytes(uint64_t h, const char *p, size_t n)
{
    for (;; p += 8, n -= 8) {
        uint64_t w;
        if (n >= 8)
            memcpy(&w, p, 8);
        else
            w = fq_key_prefix(p, n);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
        if (n <= 8)
            return h;
    }
}

static const char *norm_ns(const struct fq_objstore *s, enum fq_kind kind,
                           const char *ns)
{
    if (!s->namespaced[kind])
        return "";
    return ns && *ns ? ns : "default";
}

/* The key of (kind, ns, name), ns not yet normalised. */
static struct key key_of(const struct fq_objstore *s, enum fq_kind kind,
                         const char *ns, const char *name)
{
    struct key k = {.kind = kind, .ns = norm_ns(s, kind, ns), .name = name};
    k.nslen = strlen(k.ns);
    k.nlen = strlen(name);
    k.hash =
        hash_bytes(hash_bytes((uint64_t)kind, k.ns, k.nslen), name, k.nlen);
    return k;
}

/* Whether the n bytes at a and at b are the same, by inline loads (the
 * last 8 read at n - 8, inside both): a call to memcmp cost more than the
 * compare of a name of a few dozen bytes. */
static inline bool same_text(const char *a, const char *b, size_t n)
{
    if (n < 8)
        return fq_key_prefix(a, n) == fq_key_prefix(b, n);
    for (size_t j = 0; j + 8 < n; j += 8)
        if (fq_key_load64(a + j) != fq_key_load64(b + j))
            return false;
    return fq_key_load64(a + n - 8) == fq_key_load64(b + n - 8);
}

/* Whether entry e is the one of key k. The hashes are compared first:
 * they differ for nearly every other entry in the chain. */
static inline bool entry_is(const struct entry *e, const struct key *k)
{
    return e->hash == k->hash && e->pub.kind == k->kind && e->nlen == k->nlen &&
           e->nslen == k->nslen && same_text(e->pub.name, k->name, k->nlen) &&
           same_text(e->pub.ns, k->ns, k->nslen);
}

struct fq_objstore *fq_objstore_new(void)
{
    struct fq_objstore *s = fq_xcalloc(1, sizeof(*s));
    s->nbuckets = MIN_BUCKETS;
    s->buckets = fq_xcalloc(s->nbuckets, sizeof(*s->buckets));
    s->logging = true;
    for (int k = 0; k < FQ_KIND__COUNT; k++)
        s->namespaced[k] = fq_kind_info((enum fq_kind)k)->namespaced;
    return s;
}

/* An entry's size: the struct, then its name and namespace. */
static size_t entry_size(size_t nlen, size_t nslen)
{
    return sizeof(struct entry) + nlen + 1 + nslen + 1;
}

/* A new entry for key k, its object not yet set. A small block
 * (alloc.h): no malloc header, 16 bytes per stored object. */
static struct entry *entry_new(const struct key *k)
{
    size_t nn = k->nlen + 1, ns_n = k->nslen + 1;
    size_t size = entry_size(k->nlen, k->nslen);
    struct entry *e = fq_small_alloc(size);
    memset(e, 0, size);
    memcpy(e->text, k->name, nn);
    memcpy(e->text + nn, k->ns, ns_n);
    e->hash = k->hash;
    e->nlen = (uint32_t)k->nlen;
    e->nslen = (uint32_t)k->nslen;
    e->pub.kind = k->kind;
    e->pub.name = e->text;
    e->pub.ns = e->text + nn;
    return e;
}

static void entry_free(struct entry *e)
{
    fq_value_free(e->pub.obj);
    fq_small_free(e, entry_size(e->nlen, e->nslen));
}

void fq_objstore_free(struct fq_objstore *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct entry *e = s->buckets[i];
        while (e) {
            struct entry *next = e->next;
            entry_free(e);
            e = next;
        }
    }
    for (int k = 0; k < FQ_KIND__COUNT; k++)
        free(s->kinds[k].items);
    fq_changes_free(s->log, s->nlog);
    free(s->buckets);
    free(s);
}

/* The entry of key k, or NULL. */
static struct entry *find_k(const struct fq_objstore *s, const struct key *k)
{
    for (struct entry *e = s->buckets[k->hash & (s->nbuckets - 1)]; e;
         e = e->next)
        if (entry_is(e, k))
            return e;
    return NULL;
}

static struct entry *find(const struct fq_objstore *s, enum fq_kind kind,
                          const char *ns, const char *name)
{
    struct key k = key_of(s, kind, ns, name);
    return find_k(s, &k);
}

/* The index of (ns, name) in the kind's sorted array, or where it would
 * go. */
static size_t kl_find(const struct kindlist *kl, const char *ns,
                      const char *name)
{
    size_t lo = 0, hi = kl->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct entry *m = kl->items[mid];
        int c = strcmp(m->pub.ns, ns);
        if (!c)
            c = strcmp(m->pub.name, name);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether e comes after the last entry of kl (or kl is empty): a load
 * from the store comes in list order, and each object is appended after
 * one compare instead of a binary search whose every step read a cold
 * entry. */
static bool kl_after_last(const struct kindlist *kl, const struct entry *e)
{
    if (!kl->n)
        return true;
    const struct entry *last = kl->items[kl->n - 1];
    int c = strcmp(last->pub.ns, e->pub.ns);
    return c < 0 || (c == 0 && strcmp(last->pub.name, e->pub.name) < 0);
}

/* Moves the entries to nb buckets (a power of two). */
static void rehash(struct fq_objstore *s, size_t nb)
{
    struct entry **b = fq_xcalloc(nb, sizeof(*b));
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct entry *e = s->buckets[i];
        while (e) {
            struct entry *next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
            e = next;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = nb;
}

/* Writes rv into obj's metadata.resourceVersion: in the string node
 * already there when there is one (every write but an object's first),
 * rather than a new node for the old one. */
static void set_rv(struct fq_value *obj, uint64_t rv)
{
    char d[24], *p = d + sizeof(d);
    do
        *--p = (char)('0' + rv % 10);
    while ((rv /= 10) > 0);
    size_t n = (size_t)(d + sizeof(d) - p);
    struct fq_value *md = fq_map_ensure_map(obj, "metadata");
    struct fq_value *cur = fq_map_get(md, "resourceVersion");
    if (cur && cur->type == FQ_V_STR)
        fq_value_set_str(cur, p, n);
    else
        fq_map_set(md, "resourceVersion", fq_value_strn(p, n));
}

/* --- a settle's window on the change log ------------------------------
 * Between fq_objstore_log_window and _end nobody reads the store but the
 * engine's controllers, so of several changes to one object there only
 * the last state can be seen from outside: the earlier ones are dropped
 * at the end (an ADDED keeps its type on the change that replaces it),
 * and an object's tree is copied once, at the end or before its
 * deletion. A deletion and what precedes it are always kept. */

enum {
    WINDOW_MAX = 512
}; /* changes per window; longer ones are split */

static bool change_is(const struct fq_change *c, enum fq_kind kind,
                      const char *ns, const char *name)
{
    return c->kind == kind && strcmp(c->name, name) == 0 &&
           strcmp(c->ns, ns) == 0;
}

/* Before c (a deletion) is logged: the object's last change in the
 * window, if its copy waits, takes the tree as it was. */
static void window_fill(struct fq_objstore *s, const struct fq_change *c,
                        const struct fq_value *tree)
{
    for (size_t i = s->nlog; i-- > s->window_from;) {
        struct fq_change *l = &s->log[i];
        if (!change_is(l, c->kind, c->ns, c->name))
            continue;
        if (l->type != FQ_CHANGE_DELETED && !l->obj)
            l->obj = fq_value_clone_sized(tree, &l->obj_bytes);
        return;
    }
}

void fq_objstore_log_window(struct fq_objstore *s)
{
    if (s->logging && s->window++ == 0)
        s->window_from = s->nlog;
}

static uint64_t change_hash(const struct fq_change *c)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)c->kind;
    for (const char *p = c->ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    h = (h ^ '/') * 1099511628211ULL;
    for (const char *p = c->name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
}

/* Coalesces the window's changes; the window stays open, from the end
 * of the log. */
static void window_close(struct fq_objstore *s)
{
    size_t from = s->window_from, n = s->nlog - from;
    if (n == 0)
        return;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = fq_xcalloc(cap, sizeof(*slot)); /* index + 1, 0 = none */
    struct fq_change *c = s->log;
    /* Newest first: slot holds the object's next kept change. */
    for (size_t i = s->nlog; i-- > from;) {
        size_t h = (size_t)change_hash(&c[i]) & (cap - 1);
        while (slot[h] &&
               !change_is(&c[slot[h] - 1], c[i].kind, c[i].ns, c[i].name))
            h = (h + 1) & (cap - 1);
        struct fq_change *next = slot[h] ? &c[slot[h] - 1] : NULL;
        if (c[i].type != FQ_CHANGE_DELETED && next &&
            next->type == FQ_CHANGE_MODIFIED) {
            if (c[i].type == FQ_CHANGE_ADDED)
                next->type = FQ_CHANGE_ADDED;
            free(c[i].ns);
            free(c[i].name);
            fq_value_free(c[i].obj);
            free(c[i].json);
            c[i].ns = NULL; /* dropped */
            continue;
        }
        if (c[i].type != FQ_CHANGE_DELETED && !c[i].obj) {
            /* The last change of an object still there: its state now. */
            const struct fq_object *o =
                fq_objstore_get(s, c[i].kind, c[i].ns, c[i].name);
            c[i].obj = o ? fq_value_clone_sized(o->obj, &c[i].obj_bytes) : NULL;
        }
        slot[h] = i + 1;
    }
    free(slot);
    size_t k = from;
    for (size_t i = from; i < s->nlog; i++)
        if (c[i].ns)
            c[k++] = c[i];
    s->nlog = k;
    s->window_from = k;
}

void fq_objstore_log_window_end(struct fq_objstore *s)
{
    if (s->window > 0 && --s->window == 0)
        window_close(s);
}

static void record(struct fq_objstore *s, enum fq_change_type type,
                   struct entry *e, const struct fq_value *obj)
{
    struct fq_change c = {
        .rev = s->rev,
        .type = type,
        .kind = e->pub.kind,
        .ns = (char *)e->pub.ns, /* borrowed, for the hook */
        .name = (char *)e->pub.name,
        .obj = type == FQ_CHANGE_DELETED ? NULL : e->pub.obj,
    };
    /* The log copies first: the hook of a deletion may take the tree
     * (fq_objstore_take_deleted). */
    if (s->logging) {
        if (s->window && s->nlog - s->window_from >= WINDOW_MAX)
            window_close(s); /* bounds the scans below */
        if (s->window && type == FQ_CHANGE_DELETED)
            window_fill(s, &c, obj);
        FQ_GROW(s->log, s->caplog, s->nlog + 1);
        struct fq_change *l = &s->log[s->nlog++];
        *l = c;
        l->ns = fq_xstrdup(e->pub.ns);
        l->name = fq_xstrdup(e->pub.name);
        /* In a window, the copy waits for the window's end (or the
         * object's deletion): a later change there may supersede it. */
        l->obj = s->window && type != FQ_CHANGE_DELETED ?
                     NULL :
                     fq_value_clone_sized(obj, &l->obj_bytes);
    }
    if (s->hook)
        s->hook(s->hook_ctx, &c);
}

/* Reads kind, namespace and name from obj into *key (its texts
 * borrowed from obj). */
static int identify(const struct fq_objstore *s, const struct fq_value *obj,
                    struct key *key, struct fq_err *err)
{
    const char *av = fq_value_path_str(obj, "apiVersion", NULL);
    const char *k = fq_value_path_str(obj, "kind", NULL);
    if (!av || !k)
        return fq_err_set(err, FQ_EINVAL,
                          "object has no apiVersion or no kind");
    enum fq_kind kind = fq_kind_from_gvk(av, k);
    if (kind == FQ_KIND_NONE)
        return fq_err_set(err, FQ_EINVAL, "unknown kind %s/%s", av, k);
    const char *name = fq_value_path_str(obj, FQ_META_NAME, NULL);
    if (!name || !*name)
        return fq_err_set(err, FQ_EINVAL, "metadata.name: required");
    *key =
        key_of(s, kind, fq_value_path_str(obj, FQ_META_NAMESPACE, NULL), name);
    return 0;
}

int fq_objstore_restore(struct fq_objstore *s, struct fq_value *obj,
                        const struct fq_object **out, struct fq_err *err)
{
    uint64_t rv = strtoull(fq_value_path_str(obj, FQ_META_RV, "0"), NULL, 10);
    const struct fq_object *o = NULL;
    int rc = fq_objstore_create(s, obj, 0, NULL, &o, err);
    if (rc < 0 || rv == 0) {
        if (out)
            *out = o;
        return rc;
    }
    /* create took the next revision; give the object its stored one. */
    struct entry *e =
        (struct entry *)(void *)((char *)o - offsetof(struct entry, pub));
    e->pub.rv = rv;
    set_rv(e->pub.obj, rv);
    if (rv > s->rev)
        s->rev = rv;
    if (out)
        *out = &e->pub;
    return 0;
}

void fq_objstore_set_revision(struct fq_objstore *s, uint64_t rev)
{
    if (rev > s->rev)
        s->rev = rev;
}

int fq_objstore_create(struct fq_objstore *s, struct fq_value *obj,
                       int64_t now_ms, const char *uid,
                       const struct fq_object **out, struct fq_err *err)
{
    struct key k;
    int rc = identify(s, obj, &k, err);
    if (rc < 0) {
        fq_value_free(obj);
        return rc;
    }
    enum fq_kind kind = k.kind;
    if (find_k(s, &k)) {
        rc = fq_err_set(err, FQ_EEXIST, "%s \"%s\" already exists",
                        fq_kind_info(kind)->plural, k.name);
        fq_value_free(obj);
        return rc;
    }
    /* From here on k's ns and name (borrowed from obj) may go: the
     * entry's copies are used. */
    struct entry *e = entry_new(&k);

    struct fq_value *md = fq_map_ensure_map(obj, "metadata");
    /* (Left alone when it says so already, as a stored object does.) */
    const char *had_ns = fq_value_as_str(fq_map_get(md, "namespace"));
    if (s->namespaced[kind] && !(had_ns && !strcmp(had_ns, e->pub.ns)))
        fq_map_set(md, "namespace", fq_value_str(e->pub.ns));
    if (!fq_value_as_str(fq_map_get(md, "uid")) && uid)
        fq_map_set(md, "uid", fq_value_str(uid));
    if (!fq_value_as_str(fq_map_get(md, "creationTimestamp"))) {
        char ts[40];
        fq_time_format(now_ms, ts, sizeof(ts));
        fq_map_set(md, "creationTimestamp", fq_value_str(ts));
    }
    if (!fq_map_get(md, "generation"))
        fq_map_set(md, "generation", fq_value_int(1));
    s->rev++;
    set_rv(obj, s->rev);

    e->pub.rv = s->rev;
    e->pub.obj = obj;
    size_t b = e->hash & (s->nbuckets - 1);
    e->next = s->buckets[b];
    s->buckets[b] = e;
    struct kindlist *kl = &s->kinds[kind];
    FQ_GROW(kl->items, kl->cap, kl->n + 1);
    size_t at =
        kl_after_last(kl, e) ? kl->n : kl_find(kl, e->pub.ns, e->pub.name);
    memmove(&kl->items[at + 1], &kl->items[at],
            (kl->n - at) * sizeof(*kl->items));
    kl->items[at] = e;
    kl->n++;
    if (++s->count > s->nbuckets)
        rehash(s, s->nbuckets * 2);

    record(s, FQ_CHANGE_ADDED, e, obj);
    if (out)
        *out = &e->pub;
    return 0;
}

/* Copies the fields the API server owns from the stored object to `obj`. */
static void keep_server_fields(struct fq_value *obj, const struct fq_value *old)
{
    static const char *const keep[] = {"uid", "creationTimestamp", "generation",
                                       "namespace"};
    struct fq_value *md = fq_map_ensure_map(obj, "metadata");
    const struct fq_value *omd = fq_map_get(old, "metadata");
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
        const struct fq_value *v = fq_map_get(omd, keep[i]);
        if (v)
            fq_map_set(md, keep[i], fq_value_clone(v));
        else
            fq_map_del(md, keep[i]);
    }
    const struct fq_value *rv = fq_map_get(omd, "resourceVersion");
    if (rv)
        fq_map_set(md, "resourceVersion", fq_value_clone(rv));
}

static void commit_update(struct fq_objstore *s, struct entry *e,
                          struct fq_value *obj)
{
    s->rev++;
    set_rv(obj, s->rev);
    fq_value_free(e->pub.obj);
    e->pub.obj = obj;
    e->pub.rv = s->rev;
    record(s, FQ_CHANGE_MODIFIED, e, obj);
}

int fq_objstore_update(struct fq_objstore *s, struct fq_value *obj,
                       bool with_status, bool *changed,
                       const struct fq_object **out, struct fq_err *err)
{
    struct key k;
    if (changed)
        *changed = false;
    int rc = identify(s, obj, &k, err);
    if (rc < 0) {
        fq_value_free(obj);
        return rc;
    }
    enum fq_kind kind = k.kind;
    const char *name = k.name;
    struct entry *e = find_k(s, &k);
    if (!e) {
        rc = fq_err_set(err, FQ_ENOTFOUND, "%s \"%s\" not found",
                        fq_kind_info(kind)->plural, name);
        fq_value_free(obj);
        return rc;
    }
    const char *want = fq_value_path_str(obj, FQ_META_RV, "");
    if (*want && e->pub.rv != strtoull(want, NULL, 10)) {
        rc = fq_err_set(err, FQ_ECONFLICT,
                        "Operation cannot be fulfilled on %s \"%s\": the "
                        "object has been modified; please apply your "
                        "changes to the latest version and try again",
                        fq_kind_info(kind)->plural, name);
        fq_value_free(obj);
        return rc;
    }
    const struct fq_value *old = e->pub.obj;
    if (!with_status) {
        const struct fq_value *st = fq_map_get(old, "status");
        if (st)
            fq_map_set(obj, "status", fq_value_clone(st));
        else
            fq_map_del(obj, "status");
    }
    keep_server_fields(obj, old);
    if (fq_value_equal(obj, old)) {
        fq_value_free(obj);
        if (out)
            *out = &e->pub;
        return 0;
    }
    if (!fq_value_equal(fq_map_get(obj, "spec"), fq_map_get(old, "spec"))) {
        int64_t gen = fq_value_path_int(old, FQ_META_GENERATION, 1);
        fq_map_set(fq_map_get(obj, "metadata"), "generation",
                   fq_value_int(gen + 1));
    }
    commit_update(s, e, obj);
    if (changed)
        *changed = true;
    if (out)
        *out = &e->pub;
    return 0;
}

int fq_objstore_set_status(struct fq_objstore *s, enum fq_kind kind,
                           const char *ns, const char *name,
                           struct fq_value *status, struct fq_err *err)
{
    struct entry *e = find(s, kind, ns, name);
    if (!e) {
        fq_value_free(status);
        return fq_err_set(err, FQ_ENOTFOUND, "%s \"%s\" not found",
                          fq_kind_info(kind)->plural, name);
    }
    if (fq_value_equal(fq_map_get(e->pub.obj, "status"), status)) {
        fq_value_free(status);
        return 0;
    }
    /* In place: the rest of the object is neither copied nor freed. */
    fq_map_set(e->pub.obj, "status", status);
    s->rev++;
    set_rv(e->pub.obj, s->rev);
    e->pub.rv = s->rev;
    record(s, FQ_CHANGE_MODIFIED, e, e->pub.obj);
    return 0;
}

int fq_objstore_set_status_key(struct fq_objstore *s, enum fq_kind kind,
                               const char *ns, const char *name,
                               const char *key, struct fq_value *val,
                               bool *changed, struct fq_err *err)
{
    if (changed)
        *changed = false;
    if (!val || !key)
        return fq_err_set(err, FQ_EINVAL, "no status member to set");
    struct entry *e = find(s, kind, ns, name);
    if (!e) {
        fq_value_free(val);
        return fq_err_set(err, FQ_ENOTFOUND, "%s \"%s\" not found",
                          fq_kind_info(kind)->plural, name);
    }
    struct fq_value *st = fq_map_ensure_map(e->pub.obj, "status");
    if (fq_value_equal(fq_map_get(st, key), val)) {
        fq_value_free(val);
        return 0;
    }
    fq_map_set(st, key, val);
    s->rev++;
    set_rv(e->pub.obj, s->rev);
    e->pub.rv = s->rev;
    record(s, FQ_CHANGE_MODIFIED, e, e->pub.obj);
    if (changed)
        *changed = true;
    return 0;
}

struct fq_value *fq_objstore_edit_in_place(struct fq_objstore *s,
                                           enum fq_kind kind, const char *ns,
                                           const char *name)
{
    struct entry *e = find(s, kind, ns, name);
    return e ? e->pub.obj : NULL;
}

void fq_objstore_edited(struct fq_objstore *s, enum fq_kind kind,
                        const char *ns, const char *name, bool spec)
{
    struct entry *e = find(s, kind, ns, name);
    if (!e)
        return;
    if (spec) {
        int64_t gen = fq_value_path_int(e->pub.obj, FQ_META_GENERATION, 1);
        fq_map_set(fq_map_ensure_map(e->pub.obj, "metadata"), "generation",
                   fq_value_int(gen + 1));
    }
    s->rev++;
    set_rv(e->pub.obj, s->rev);
    e->pub.rv = s->rev;
    record(s, FQ_CHANGE_MODIFIED, e, e->pub.obj);
}

struct fq_value *fq_objstore_edit_status(struct fq_objstore *s,
                                         enum fq_kind kind, const char *ns,
                                         const char *name)
{
    struct entry *e = find(s, kind, ns, name);
    if (!e)
        return NULL;
    struct fq_value *shell = fq_value_map();
    const struct fq_value *gen = fq_value_path(e->pub.obj, FQ_META_GENERATION);
    if (gen)
        fq_map_set(fq_map_ensure_map(shell, "metadata"), "generation",
                   fq_value_clone(gen));
    const struct fq_value *st = fq_map_get(e->pub.obj, "status");
    fq_map_set(shell, "status",
               st && st->type == FQ_V_MAP ? fq_value_clone(st) :
                                            fq_value_map());
    return shell;
}

int fq_objstore_put_status(struct fq_objstore *s, enum fq_kind kind,
                           const char *ns, const char *name,
                           struct fq_value *shell, bool *changed,
                           struct fq_err *err)
{
    if (changed)
        *changed = false;
    struct fq_value *st = fq_map_take(shell, "status");
    fq_value_free(shell);
    if (!st)
        return fq_err_set(err, FQ_EINVAL, "no status to write");
    uint64_t rev = s->rev;
    int rc = fq_objstore_set_status(s, kind, ns, name, st, err);
    if (changed)
        *changed = rc == 0 && s->rev != rev;
    return rc;
}

struct fq_value *fq_objstore_edit(struct fq_objstore *s, enum fq_kind kind,
                                  const char *ns, const char *name)
{
    struct entry *e = find(s, kind, ns, name);
    return e ? fq_value_clone(e->pub.obj) : NULL;
}

/*
 * After a deletion: the index and a kind's list give back memory once
 * they are under a quarter full (a churn of 20,000 objects would keep
 * their high-water tables forever). They halve, to under half full, so
 * that they grow only after the count doubles and shrink again only after
 * it halves: amortised, never per operation. Lookups and the lists' order
 * do not depend on the sizes.
 */
static void shrink(struct fq_objstore *s, struct kindlist *kl)
{
    if (s->nbuckets > MIN_BUCKETS && s->count < s->nbuckets / 4)
        rehash(s, s->nbuckets / 2);
    if (kl->cap > MIN_KINDLIST && kl->n < kl->cap / 4) {
        kl->cap /= 2;
        kl->items = fq_xrealloc(kl->items, kl->cap * sizeof(*kl->items));
    }
}

int fq_objstore_delete(struct fq_objstore *s, enum fq_kind kind, const char *ns,
                       const char *name, struct fq_err *err)
{
    struct key k = key_of(s, kind, ns, name);
    struct entry **pp = &s->buckets[k.hash & (s->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        struct entry *e = *pp;
        if (!entry_is(e, &k))
            continue;
        *pp = e->next;
        struct kindlist *kl = &s->kinds[kind];
        size_t at = kl_find(kl, e->pub.ns, e->pub.name);
        memmove(&kl->items[at], &kl->items[at + 1],
                (kl->n - at - 1) * sizeof(*kl->items));
        kl->n--;
        s->count--;
        shrink(s, kl);
        s->rev++;
        s->deleting = e;
        record(s, FQ_CHANGE_DELETED, e, e->pub.obj);
        s->deleting = NULL;
        entry_free(e);
        return 0;
    }
    return fq_err_set(err, FQ_ENOTFOUND, "%s \"%s\" not found",
                      fq_kind_info(kind)->plural, name);
}

struct fq_value *fq_objstore_take_deleted(struct fq_objstore *s)
{
    if (!s->deleting)
        return NULL;
    struct fq_value *v = s->deleting->pub.obj;
    s->deleting->pub.obj = NULL;
    return v;
}

const struct fq_object *fq_objstore_get(const struct fq_objstore *s,
                                        enum fq_kind kind, const char *ns,
                                        const char *name)
{
    struct entry *e = find(s, kind, ns, name);
    return e ? &e->pub : NULL;
}

const struct fq_value *fq_objstore_owner(const struct fq_objstore *s,
                                         const struct fq_value *obj)
{
    const struct fq_value *ref = fq_seq_at(fq_meta_owners(obj), 0);
    if (!ref)
        return NULL;
    enum fq_kind k = fq_kind_from_gvk(fq_value_path_str(ref, "apiVersion", ""),
                                      fq_value_path_str(ref, "kind", ""));
    const struct fq_object *o =
        k == FQ_KIND_NONE ? NULL :
                            fq_objstore_get(s, k, fq_meta_namespace(obj),
                                            fq_value_path_str(ref, "name", ""));
    return o ? o->obj : NULL;
}

/* The first index whose namespace sorts after ns. */
static size_t kl_ns_end(const struct kindlist *kl, const char *ns)
{
    size_t lo = 0, hi = kl->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(kl->items[mid]->pub.ns, ns) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void fq_objstore_span(const struct fq_objstore *s, enum fq_kind kind,
                      const char *ns, const char *after_ns,
                      const char *after_name, size_t *lo, size_t *hi)
{
    const struct kindlist *kl = &s->kinds[kind];
    *lo = 0;
    *hi = kl->n;
    if (ns) {
        const char *n = norm_ns(s, kind, ns);
        *lo = kl_find(kl, n, "");
        *hi = kl_ns_end(kl, n);
    }
    if (after_name) {
        const char *an = s->namespaced[kind] && after_ns ? after_ns : "";
        size_t at = kl_find(kl, an, after_name);
        if (at < kl->n && !strcmp(kl->items[at]->pub.ns, an) &&
            !strcmp(kl->items[at]->pub.name, after_name))
            at++;
        if (at > *lo)
            *lo = at < *hi ? at : *hi;
    }
}

const struct fq_object *fq_objstore_at(const struct fq_objstore *s,
                                       enum fq_kind kind, size_t i)
{
    const struct kindlist *kl = &s->kinds[kind];
    return i < kl->n ? &kl->items[i]->pub : NULL;
}

size_t fq_objstore_list(const struct fq_objstore *s, enum fq_kind kind,
                        const char *ns, const struct fq_object ***out)
{
    const struct kindlist *kl = &s->kinds[kind];
    size_t lo, hi;
    fq_objstore_span(s, kind, ns, NULL, NULL, &lo, &hi);
    const struct fq_object **v = fq_xmalloc((hi - lo + 1) * sizeof(*v));
    for (size_t i = lo; i < hi; i++)
        v[i - lo] = &kl->items[i]->pub;
    *out = v;
    return hi - lo;
}

size_t fq_objstore_count(const struct fq_objstore *s, enum fq_kind kind)
{
    return s->kinds[kind].n;
}

uint64_t fq_objstore_revision(const struct fq_objstore *s)
{
    return s->rev;
}

size_t fq_objstore_take_changes(struct fq_objstore *s, struct fq_change **out)
{
    if (s->window)
        window_close(s); /* no copy left waiting */
    size_t n = s->nlog;
    *out = s->log;
    s->log = NULL;
    s->nlog = s->caplog = s->window_from = 0;
    return n;
}

void fq_changes_free(struct fq_change *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].ns);
        free(c[i].name);
        fq_value_free(c[i].obj);
        free(c[i].json);
    }
    free(c);
}

void fq_objstore_set_hook(struct fq_objstore *s, fq_objstore_hook_fn fn,
                          void *ctx)
{
    s->hook = fn;
    s->hook_ctx = ctx;
}

void fq_objstore_set_logging(struct fq_objstore *s, bool on)
{
    s->logging = on;
}
