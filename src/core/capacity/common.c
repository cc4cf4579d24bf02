/*
 * common.c - small helpers every capacity module uses (capacity/common.h):
 * asking for a run, the time scale, pools by name and selector, "ns/name"
 * keys, a pool's backoff entry, a condition written in place: what the
 * modules below the controller share, so that none of them includes
 * capacity.h.
 *
 * What it does not do: decide or write anything on its own.
 */
#include "capacity/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/objstore.h"

void fq_capacity_wake(struct fq_capacity *st, int64_t t)
{
    if (t < st->wake)
        st->wake = t;
}

int64_t fq_capacity_scaled(struct fq_engine *e, int64_t ms)
{
    double s = fq_engine_config(e)->time_scale;
    if (!(s > 0))
        s = 1.0;
    return (int64_t)llround((double)ms * s);
}

struct fq_cap_pool *fq_capacity_pool(struct fq_capacity *st, const char *name)
{
    for (size_t i = 0; name && i < st->npools; i++)
        if (!strcmp(st->pools[i].name, name))
            return &st->pools[i];
    return NULL;
}

bool fq_capacity_pool_matches(const struct fq_cap_pool *p,
                              const struct fq_value *selector)
{
    if (!selector || selector->type != FQ_V_MAP || selector->u.map.n == 0)
        return true;
    for (size_t i = 0; i < selector->u.map.n; i++) {
        const struct fq_member *m = &selector->u.map.items[i];
        const char *want = fq_value_as_str(m->val);
        const char *have = fq_value_as_str(fq_map_get(p->labels, m->key));
        if (!want || !have || strcmp(want, have))
            return false;
    }
    return true;
}

void fq_capacity_set_cond_stored(struct fq_engine *e, enum fq_kind kind,
                                 const char *ns, const char *name,
                                 const char *type, const char *cstatus,
                                 const char *reason, const char *message,
                                 int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    /* Only the condition changes, in place (nothing copied or compared). */
    struct fq_value *obj = fq_objstore_edit_in_place(s, kind, ns, name);
    if (!obj)
        return;
    bool made = !fq_map_get(obj, "status");
    if (fq_cond_status_set(fq_map_ensure_map(obj, "status"), type, cstatus,
                           reason, message, now) ||
        made)
        fq_objstore_edited(s, kind, ns, name, false);
}

void fq_capacity_key(const char *ns, const char *name, char *buf, size_t n)
{
    size_t a = strlen(ns), b = strlen(name);
    if (n == 0)
        return;
    if (a > n - 1)
        a = n - 1;
    memcpy(buf, ns, a);
    size_t at = a;
    if (at < n - 1)
        buf[at++] = '/';
    if (b > n - 1 - at)
        b = n - 1 - at;
    memcpy(buf + at, name, b);
    buf[at + b] = 0;
}

char *fq_capacity_text(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    return memcpy(fq_small_alloc(n), s, n);
}

void fq_capacity_text_free(char *s)
{
    if (s)
        fq_small_free(s, strlen(s) + 1);
}

const char *fq_capacity_change_key(const struct fq_change *c, char *buf,
                                   size_t n, uint64_t *hash)
{
    if (c->key) {
        *hash = c->key_hash;
        return c->key;
    }
    fq_capacity_key(c->ns, c->name, buf, n);
    *hash = fq_smap_hash(buf);
    return buf;
}

const struct fq_object *fq_capacity_keyed(struct fq_engine *e,
                                          enum fq_kind kind, const char *key)
{
    const char *slash = strchr(key, '/');
    size_t l = slash ? (size_t)(slash - key) : 0;
    char ns[300];
    if (!slash || l >= sizeof(ns))
        return NULL;
    memcpy(ns, key, l);
    ns[l] = 0;
    return fq_objstore_get(fq_engine_store(e), kind, ns, slash + 1);
}

size_t fq_capacity_objects_of(struct fq_engine *e, enum fq_kind kind,
                              const char **keys, size_t nk,
                              const struct fq_object ***out)
{
    const struct fq_object **v = fq_xcalloc(nk + 1, sizeof(*v));
    size_t m = 0;
    for (size_t i = 0; i < nk; i++) {
        const struct fq_object *o = fq_capacity_keyed(e, kind, keys[i]);
        if (o)
            v[m++] = o;
    }
    free(keys);
    *out = v;
    return m;
}

struct fq_cap_backoff *fq_capacity_backoff(struct fq_capacity *st,
                                           const char *pool)
{
    for (size_t i = 0; i < st->nbo; i++)
        if (!strcmp(st->bo[i].pool, pool))
            return &st->bo[i];
    FQ_GROW(st->bo, st->capbo, st->nbo + 1);
    struct fq_cap_backoff *b = &st->bo[st->nbo++];
    memset(b, 0, sizeof(*b));
    b->pool = fq_xstrdup(pool);
    b->until = -1;
    return b;
}
