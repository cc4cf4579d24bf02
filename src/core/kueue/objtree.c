/*
 * objtree.c - the kueue controller's readers and writers of object trees:
 * conditions read in one pass (cond_scan) and written in place
 * (cond_set), workload keys.
 *
 * They exist for speed: they run for every change of every workload, so
 * they read a condition's members once and replace only what moved,
 * where flexq/conditions.h's general helpers would look each one up. The
 * smallest of them are inline in kueue/internal.h. They decide nothing.
 */
#include "kueue/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct fq_value *conds_get(const struct fq_value *obj)
{
    return status_get(obj, "conditions");
}

/* A condition's type, or "" (str_at(x, "type", "")). Conditions are
 * read on every change of a workload, and flexq and Kubernetes write
 * the type first: there it is found without a call. */
static const char *cond_type(const struct fq_value *x)
{
    if (x && x->type == FQ_V_MAP && x->u.map.n > 0) {
        const struct fq_member *m = &x->u.map.items[0];
        if (m->klen == 4 && !memcmp(m->key, "type", 4)) {
            const char *t = fq_value_as_str(m->val);
            return t ? t : "";
        }
    }
    return str_at(x, "type", "");
}

/* The first condition of a type (status.conditions[].type), or NULL. */
struct fq_value *kq_cond_find(const struct fq_value *obj, const char *type)
{
    const struct fq_value *c = conds_get(obj);
    for (size_t i = 0; i < fq_value_len(c); i++) {
        struct fq_value *x = fq_seq_at(c, i);
        const char *t = cond_type(x);
        if (t[0] == type[0] && !strcmp(t, type))
            return x;
    }
    return NULL;
}

static const char *const cond_names[NCOND] = {
    "QuotaReserved", "Admitted",           "Evicted",  "Requeued",
    "Finished",      "DeactivationTarget", "PodsReady"};

/* The enum cond_type of a condition type, or -1. The names begin with
 * different letters: the first one picks the only name to compare. */
static int cond_index(const char *type)
{
    int t;
    switch (type[0]) {
    case 'Q':
        t = C_QUOTA_RESERVED;
        break;
    case 'A':
        t = C_ADMITTED;
        break;
    case 'E':
        t = C_EVICTED;
        break;
    case 'R':
        t = C_REQUEUED;
        break;
    case 'F':
        t = C_FINISHED;
        break;
    case 'D':
        t = C_DEACTIVATION_TARGET;
        break;
    case 'P':
        t = C_PODS_READY;
        break;
    default:
        return -1;
    }
    return strcmp(type, cond_names[t]) ? -1 : t;
}

/*
 * The first condition of each type of enum cond_type (as cond_find would
 * give it), in one pass over status.conditions: what is read of every
 * changed workload reads its conditions once, not once per type.
 */
void kq_cond_scan(const struct fq_value *obj,
                  const struct fq_value *found[NCOND])
{
    for (int t = 0; t < NCOND; t++)
        found[t] = NULL;
    const struct fq_value *c = conds_get(obj);
    for (size_t i = 0; i < fq_value_len(c); i++) {
        const struct fq_value *x = fq_seq_at(c, i);
        int t = cond_index(cond_type(x));
        if (t >= 0 && !found[t])
            found[t] = x;
    }
}

static void cond_members(struct fq_value *c, struct cond_members *m)
{
    memset(m, 0, sizeof(*m));
    for (size_t i = 0; i < c->u.map.n; i++) {
        struct fq_member *x = &c->u.map.items[i];
        if (member_is(x, "status"))
            m->status = m->status ? m->status : x;
        else if (member_is(x, "lastTransitionTime"))
            m->time = m->time ? m->time : x;
        else if (member_is(x, "reason"))
            m->reason = m->reason ? m->reason : x;
        else if (member_is(x, "message"))
            m->message = m->message ? m->message : x;
        else if (member_is(x, "observedGeneration"))
            m->gen = m->gen ? m->gen : x;
    }
}

/* Sets member x of condition c (when NULL, a new member `key`, and then
 * m is found again: appending may move the members) to val (owned). */
static void cond_put(struct fq_value *c, struct cond_members *m,
                     struct fq_member *x, const char *key, struct fq_value *val)
{
    if (x) {
        fq_value_free(x->val);
        x->val = val;
        return;
    }
    fq_map_set(c, key, val);
    cond_members(c, m);
}

/* cond_put of the string v unless x holds it already; true when it
 * changed. */
static bool cond_put_str(struct fq_value *c, struct cond_members *m,
                         struct fq_member *x, const char *key, const char *v)
{
    const char *old = x ? fq_value_as_str(x->val) : NULL;
    if (old && !strcmp(old, v))
        return false;
    cond_put(c, m, x, key, fq_value_str(v));
    return true;
}

/*
 * Sets a condition as Kubernetes' meta.SetStatusCondition does: the
 * transition time changes only when the status does. Returns true when
 * anything changed (callers that edit in place say so to the store only
 * then).
 */
bool kq_cond_set(struct fq_value *obj, const char *type, const char *status,
                 const char *reason, const char *message, int64_t now)
{
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    struct fq_value *conds = fq_map_get(st, "conditions");
    bool changed = false;
    if (!conds || conds->type != FQ_V_SEQ) {
        conds = fq_value_seq();
        fq_map_set(st, "conditions", conds);
        changed = true;
    }
    struct fq_value *c = NULL; /* the last of its type */
    for (size_t i = 0; i < conds->u.seq.n; i++) {
        struct fq_value *x = conds->u.seq.items[i];
        const char *t = cond_type(x);
        if (t[0] == type[0] && !strcmp(t, type))
            c = x;
    }
    int64_t gen = int_at(fq_map_get(obj, "metadata"), "generation", 0);
    char ts[40];
    if (!c) { /* a new one, its members in the order an update gives */
        fmt_time(now, ts, sizeof(ts));
        c = fq_value_map();
        fq_map_set(c, "type", fq_value_str(type));
        fq_map_set(c, "status", fq_value_str(status));
        fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
        fq_map_set(c, "reason", fq_value_str(reason));
        fq_map_set(c, "message", fq_value_str(message));
        if (gen > 0)
            fq_map_set(c, "observedGeneration", fq_value_int(gen));
        fq_seq_push(conds, c);
        return true;
    }
    struct cond_members m;
    cond_members(c, &m);
    const char *old = m.status ? fq_value_as_str(m.status->val) : NULL;
    if (strcmp(old ? old : "", status) || !m.time || !m.time->val) {
        fmt_time(now, ts, sizeof(ts));
        cond_put(c, &m, m.status, "status", fq_value_str(status));
        cond_put(c, &m, m.time, "lastTransitionTime", fq_value_str(ts));
        changed = true;
    }
    changed |= cond_put_str(c, &m, m.reason, "reason", reason);
    changed |= cond_put_str(c, &m, m.message, "message", message);
    const struct fq_value *og = m.gen ? m.gen->val : NULL;
    if (gen > 0 && !(og && og->type == FQ_V_NUM && og->u.num.is_int &&
                     og->u.num.i == gen)) {
        cond_put(c, &m, m.gen, "observedGeneration", fq_value_int(gen));
        changed = true;
    }
    return changed;
}

void kq_wl_key(const char *ns, const char *name, char *buf, size_t n)
{
    size_t a = strlen(ns), b = strlen(name);
    if (a + b + 2 > n) {
        snprintf(buf, n, "%s/%s", ns, name);
        return;
    }
    memcpy(buf, ns, a);
    buf[a] = '/';
    memcpy(buf + a + 1, name, b + 1);
}
