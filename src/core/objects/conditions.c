/*
 * conditions.c - status.conditions lookups and writes shared by the core's
 * controllers and readers (conditions.h).
 *
 * How: a linear scan of the conditions list; objects carry a handful.
 * These lookups run for nearly every stored change (hundreds of
 * thousands in a long simulation), so they read members with
 * fq_map_get rather than parse dotted paths.
 * Invariants: pure reads of the borrowed tree; a missing or malformed list
 * reads as "no such condition".
 * Writers: fq_cond_put stamps lastTransitionTime always (one-way
 * transitions), fq_cond_set only when the status changes.
 * Not done: the status-map variants in pods.c and capacity.c.
 */
#include "flexq/conditions.h"

#include <string.h>

#include "flexq/timefmt.h"

/* A member's string, or "" when it is missing or not a string (what
 * fq_value_path_str(v, key, "") reads, without parsing a path). */
static const char *member_str(const struct fq_value *v, const char *key)
{
    const char *s = fq_value_as_str(fq_map_get(v, key));
    return s ? s : "";
}

const struct fq_value *fq_cond_in_status(const struct fq_value *status,
                                         const char *type)
{
    const struct fq_value *cs = fq_map_get(status, "conditions");
    if (!cs || cs->type != FQ_V_SEQ)
        return NULL;
    for (size_t i = 0; i < cs->u.seq.n; i++) {
        const struct fq_value *c = cs->u.seq.items[i];
        if (!strcmp(member_str(c, "type"), type))
            return c;
    }
    return NULL;
}

void fq_conds_in_status(const struct fq_value *status, size_t n,
                        const char *const types[],
                        const struct fq_value *found[])
{
    for (size_t k = 0; k < n; k++)
        found[k] = NULL;
    const struct fq_value *cs = fq_map_get(status, "conditions");
    if (!cs || cs->type != FQ_V_SEQ)
        return;
    for (size_t i = 0; i < cs->u.seq.n; i++) {
        const struct fq_value *c = cs->u.seq.items[i];
        const char *t = member_str(c, "type");
        for (size_t k = 0; k < n; k++)
            if (!found[k] && t[0] == types[k][0] && !strcmp(t, types[k]))
                found[k] = c;
    }
}

bool fq_cond_status_is(const struct fq_value *c, const char *status)
{
    return c && !strcmp(member_str(c, "status"), status);
}

const struct fq_value *fq_cond_find(const struct fq_value *obj,
                                    const char *type)
{
    return fq_cond_in_status(fq_map_get(obj, "status"), type);
}

bool fq_cond_true(const struct fq_value *obj, const char *type)
{
    return fq_cond_status_is(fq_cond_find(obj, type), "True");
}

/* The entry of `type` in obj's status.conditions (the last one when there
 * are several), added with just its type when missing. */
static struct fq_value *entry(struct fq_value *obj, const char *type)
{
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    struct fq_value *conds = fq_map_get(st, "conditions");
    if (!conds || conds->type != FQ_V_SEQ) {
        conds = fq_value_seq();
        fq_map_set(st, "conditions", conds);
    }
    struct fq_value *c = NULL;
    for (size_t i = 0; i < fq_value_len(conds); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(conds, i), "type", ""), type))
            c = fq_seq_at(conds, i);
    if (!c) {
        c = fq_value_map();
        fq_map_set(c, "type", fq_value_str(type));
        fq_seq_push(conds, c);
    }
    return c;
}

/* Sets entry `type`; lastTransitionTime moves when `always` or when the
 * status changes. */
static void write_cond(struct fq_value *obj, const char *type,
                       const char *status, const char *reason,
                       const char *message, int64_t now, bool always)
{
    struct fq_value *c = entry(obj, type);
    if (always || strcmp(fq_value_path_str(c, "status", ""), status)) {
        char ts[40];
        fq_time_format(now, ts, sizeof(ts));
        fq_map_set(c, "status", fq_value_str(status));
        fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
    }
    fq_map_set(c, "reason", fq_value_str(reason));
    fq_map_set(c, "message", fq_value_str(message));
}

void fq_cond_put(struct fq_value *obj, const char *type, const char *status,
                 const char *reason, const char *message, int64_t now)
{
    write_cond(obj, type, status, reason, message, now, true);
}

void fq_cond_set(struct fq_value *obj, const char *type, const char *status,
                 const char *reason, const char *message, int64_t now)
{
    write_cond(obj, type, status, reason, message, now, false);
}

/* --- over a status map, as the capacity controllers write them -------- */

static bool set_str(struct fq_value *m, const char *key, const char *v)
{
    const char *old = fq_value_as_str(fq_map_get(m, key));
    if (old && !strcmp(old, v))
        return false;
    fq_map_set(m, key, fq_value_str(v));
    return true;
}

/* The last condition of `type` in a conditions sequence (the one
 * fq_cond_status_set writes), or NULL. */
static struct fq_value *cond_last(const struct fq_value *conds,
                                  const char *type)
{
    struct fq_value *c = NULL;
    for (size_t i = 0; i < conds->u.seq.n; i++) {
        const char *t =
            fq_value_as_str(fq_map_get(conds->u.seq.items[i], "type"));
        if (!strcmp(t ? t : "", type))
            c = conds->u.seq.items[i];
    }
    return c;
}

static bool str_is(const struct fq_value *m, const char *key, const char *v)
{
    const char *have = fq_value_as_str(fq_map_get(m, key));
    return have && !strcmp(have, v);
}

bool fq_cond_status_differs(const struct fq_value *status, const char *type,
                            const char *cstatus, const char *reason,
                            const char *message)
{
    const struct fq_value *conds = fq_map_get(status, "conditions");
    if (!conds || conds->type != FQ_V_SEQ)
        return true;
    const struct fq_value *c = cond_last(conds, type);
    return !c || !str_is(c, "status", cstatus) ||
           !str_is(c, "reason", reason) ||
           !str_is(c, "message", message ? message : "");
}

bool fq_cond_status_set(struct fq_value *status, const char *type,
                        const char *cstatus, const char *reason,
                        const char *message, int64_t now)
{
    struct fq_value *conds = fq_map_get(status, "conditions");
    if (!conds || conds->type != FQ_V_SEQ) {
        conds = fq_value_seq();
        fq_map_set(status, "conditions", conds);
    }
    struct fq_value *c = cond_last(conds, type);
    bool changed = false;
    if (!c) {
        c = fq_value_map();
        fq_map_set(c, "type", fq_value_str(type));
        fq_seq_push(conds, c);
        changed = true;
    }
    if (set_str(c, "status", cstatus) || changed) {
        char ts[40];
        fq_time_format(now, ts, sizeof(ts));
        fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
        changed = true;
    }
    changed |= set_str(c, "reason", reason);
    changed |= set_str(c, "message", message ? message : "");
    return changed;
}

int64_t fq_cond_in_status_time(const struct fq_value *status, const char *type)
{
    const struct fq_value *c = fq_cond_in_status(status, type);
    int64_t t;
    const char *s = fq_value_as_str(fq_map_get(c, "lastTransitionTime"));
    if (!s || fq_time_parse(s, &t) < 0)
        return -1;
    return t;
}

bool fq_cond_in_status_true(const struct fq_value *status, const char *type)
{
    return fq_cond_status_is(fq_cond_in_status(status, type), "True");
}

bool fq_provreq_terminal(const struct fq_value *status)
{
    static const char *const types[] = {"Failed", "BookingExpired",
                                        "CapacityRevoked"};
    const struct fq_value *c[3];
    fq_conds_in_status(status, 3, types, c);
    return fq_cond_status_is(c[0], "True") || fq_cond_status_is(c[1], "True") ||
           fq_cond_status_is(c[2], "True");
}
