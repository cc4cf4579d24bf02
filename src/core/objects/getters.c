/*
 * getters.c - the typed readers every kind's decoder is written with:
 * a field of a mapping read as a string, integer, boolean, quantity,
 * mapping, sequence, selector, resource list or duration, each checked
 * against its type and limits, the error put at the field's path (and
 * the manifest line and column when there is one).
 *
 * What it does not do: know any kind (objects_*.c do) or keep what it
 * reads (the decoders' arenas do).
 */
#include "objects/objects_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/quantity.h"

/* --- getters ---------------------------------------------------------------- */

const char *want_str(struct dctx *c, const struct fq_value *m, const char *key,
                     bool required)
{
    return str_of(c, m, key, field(m, key), required);
}

const char *str_of(struct dctx *c, const struct fq_value *m, const char *key,
                   const struct fq_value *v, bool required)
{
    if (!v) {
        if (required && m)
            derr_missing(c, m, key);
        return NULL;
    }
    if (v->type != FQ_V_STR) {
        bool scalar = v->type == FQ_V_BOOL || v->type == FQ_V_NUM;
        derr_key(c, v, key, "must be a string, not %s%s%s%s", type_word(v),
                 scalar ? " " : "", scalar ? scalar_text(v) : "",
                 scalar ? " (quote it)" : "");
        return NULL;
    }
    if (required && v->u.str.len == 0) {
        derr_key(c, v, key, "must not be empty");
        return NULL;
    }
    return v->u.str.s;
}

const char *want_name(struct dctx *c, const struct fq_value *m, const char *key,
                      bool required, const char *(*check)(const char *))
{
    const char *s = want_str(c, m, key, required);
    if (s && !has_var(s)) {
        const char *why = check(s);
        if (why) {
            derr_key(c, field(m, key), key, "invalid name \"%s\": %s", s, why);
            return NULL;
        }
    }
    return s;
}

bool want_bool(struct dctx *c, const struct fq_value *m, const char *key,
               bool def)
{
    const struct fq_value *v = field(m, key);
    if (!v)
        return def;
    if (v->type != FQ_V_BOOL) {
        derr_key(c, v, key, "must be true or false, not %s \"%s\"",
                 type_word(v), scalar_text(v));
        return def;
    }
    return v->u.b;
}

int64_t want_int(struct dctx *c, const struct fq_value *m, const char *key,
                 int64_t def, int64_t min, int64_t max, bool *present)
{
    return int_of(c, key, field(m, key), def, min, max, present);
}

int64_t int_of(struct dctx *c, const char *key, const struct fq_value *v,
               int64_t def, int64_t min, int64_t max, bool *present)
{
    if (present)
        *present = false;
    if (!v)
        return def;
    if (v->type != FQ_V_NUM || !v->u.num.is_int) {
        derr_key(c, v, key, "must be an integer, not %s \"%s\"",
                 v->type == FQ_V_NUM ? "the number" : type_word(v),
                 scalar_text(v));
        return def;
    }
    int64_t i = v->u.num.i;
    if (i < min || i > max) {
        if (max == INT64_MAX || (max == FQ_INT32_MAX && i < min))
            derr_key(c, v, key,
                     "must be greater than or equal to %lld, not %lld",
                     (long long)min, (long long)i);
        else if (min == INT64_MIN || (min == FQ_INT32_MIN && i > max))
            derr_key(c, v, key, "must be less than or equal to %lld, not %lld",
                     (long long)max, (long long)i);
        else
            derr_key(c, v, key, "must be between %lld and %lld, not %lld",
                     (long long)min, (long long)max, (long long)i);
        return def;
    }
    if (present)
        *present = true;
    return i;
}

/* Extended resources (google.com/tpu, nvidia.com/gpu) are whole numbers. */
bool oc_integral_resource(const char *res)
{
    return res && strchr(res, '/') && strncmp(res, "kubernetes.io/", 14) != 0;
}

bool want_qty(struct dctx *c, const struct fq_value *m, const char *key,
              const char *res, bool nonneg, int64_t *out)
{
    return qty_of(c, key, field(m, key), res, nonneg, out);
}

bool qty_of(struct dctx *c, const char *key, const struct fq_value *v,
            const char *res, bool nonneg, int64_t *out)
{
    if (!v)
        return false;
    const char *text;
    char buf[64];
    if (v->type == FQ_V_STR) {
        text = v->u.str.s;
    } else if (v->type == FQ_V_NUM && v->u.num.raw) {
        text = v->u.num.raw;
    } else if (v->type == FQ_V_NUM) {
        snprintf(buf, sizeof(buf), "%lld", (long long)v->u.num.i);
        text = buf;
    } else {
        derr_key(c, v, key,
                 "must be a quantity (a number or a string like "
                 "\"500m\" or \"16Gi\"), not %s",
                 type_word(v));
        return false;
    }
    enum fq_qscale scale = fq_quantity_scale_for(res ? res : "");
    bool whole = oc_integral_resource(res);
    int64_t q = 0;
    int rc =
        fq_quantity_parse(text, whole ? FQ_Q_MILLI : scale, &q, NULL, NULL);
    if (rc == FQ_EOVERFLOW) {
        derr_key(c, v, key, "quantity \"%s\" is too large", text);
        return false;
    }
    if (rc < 0) {
        derr_key(c, v, key, "invalid quantity \"%s\"", text);
        return false;
    }
    if (whole) {
        if (q % 1000 != 0) {
            derr_key(c, v, key, "%s must be a whole number, not \"%s\"", res,
                     text);
            return false;
        }
        q /= 1000;
    }
    if (nonneg && q < 0) {
        derr_key(c, v, key, "must be greater than or equal to 0, not \"%s\"",
                 text);
        return false;
    }
    *out = q;
    return true;
}

const struct fq_value *want_map(struct dctx *c, const struct fq_value *m,
                                const char *key, bool required)
{
    const struct fq_value *v = field(m, key);
    if (!v) {
        if (required && m)
            derr_missing(c, m, key);
        return NULL;
    }
    if (v->type != FQ_V_MAP) {
        derr_key(c, v, key, "must be a mapping, not %s", type_word(v));
        return NULL;
    }
    return v;
}

const struct fq_value *want_seq(struct dctx *c, const struct fq_value *m,
                                const char *key, bool required, size_t min,
                                size_t max)
{
    const struct fq_value *v = field(m, key);
    if (!v) {
        if (required && m)
            derr_missing(c, m, key);
        return NULL;
    }
    if (v->type != FQ_V_SEQ) {
        derr_key(c, v, key, "must be a list, not %s", type_word(v));
        return NULL;
    }
    if (max && v->u.seq.n > max) {
        derr_key(c, v, key, "must have at most %zu items, not %zu", max,
                 v->u.seq.n);
        return NULL;
    }
    if (v->u.seq.n < min) {
        derr_key(c, v, key, "must have at least %zu item%s", min,
                 min == 1 ? "" : "s");
        return NULL;
    }
    return v;
}

int want_enum(struct dctx *c, const struct fq_value *m, const char *key,
              const char *const *names, int def)
{
    return enum_of(c, m, key, field(m, key), names, def);
}

int enum_of(struct dctx *c, const struct fq_value *m, const char *key,
            const struct fq_value *v, const char *const *names, int def)
{
    const char *s = str_of(c, m, key, v, false);
    if (!s)
        return def;
    for (int i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; names[i]; i++) {
        if (!*names[i])
            continue;
        int w = snprintf(list + used, sizeof(list) - used, "%s%s",
                         used ? ", " : "", names[i]);
        if (w < 0 || (size_t)w >= sizeof(list) - used)
            break;
        used += (size_t)w;
    }
    derr_key(c, v, key, "unsupported value \"%s\": must be one of %s", s, list);
    return def;
}

void want_kvs(struct dctx *c, const struct fq_value *m, const char *key,
              enum kvs_rule rule, size_t max, struct fq_kvs *out)
{
    out->items = NULL;
    out->n = 0;
    const struct fq_value *v = want_map(c, m, key, false);
    if (!v)
        return;
    if (max && v->u.map.n > max) {
        derr_key(c, v, key, "must have at most %zu entries, not %zu", max,
                 v->u.map.n);
        return;
    }
    out->items = MEM_ARRAY(c, struct fq_kv, v->u.map.n);
    size_t old = path_key(c, key);
    size_t total = 0;
    for (size_t i = 0; i < v->u.map.n; i++) {
        const struct fq_member *mb = &v->u.map.items[i];
        struct fq_value keyat;
        memset(&keyat, 0, sizeof(keyat));
        keyat.line = mb->line;
        keyat.col = mb->col;
        const char *why = NULL;
        if (!has_var(mb->key)) {
            if (rule == KVS_LABELS || rule == KVS_ANNOTATIONS)
                why = fq_check_qualified_name(mb->key);
            else if (rule == KVS_CONFIG)
                why = oc_check_config_key(mb->key);
        }
        if (why) {
            derr(c, &keyat, "invalid key \"%s\": %s", mb->key, why);
            continue;
        }
        const struct fq_value *val = mb->val;
        if (!val || val->type != FQ_V_STR) {
            derr_key(c, val && val->line ? val : &keyat, mb->key,
                     "must be a string, not %s%s%s%s", type_word(val),
                     val && val->type != FQ_V_NULL ? " " : "",
                     val && val->type != FQ_V_NULL ? scalar_text(val) : "",
                     val && (val->type == FQ_V_BOOL || val->type == FQ_V_NUM) ?
                         " (quote it)" :
                         "");
            continue;
        }
        if (rule == KVS_LABELS && !has_var(val->u.str.s)) {
            why = fq_check_label_value(val->u.str.s);
            if (why) {
                derr_key(c, val, mb->key, "invalid label value \"%s\": %s",
                         val->u.str.s, why);
                continue;
            }
        }
        total += strlen(mb->key) + val->u.str.len;
        out->items[out->n].key = mb->key;
        out->items[out->n].value = val->u.str.s;
        out->n++;
    }
    path_pop(c, old);
    if (rule == KVS_ANNOTATIONS && total > 256 * 1024)
        derr_key(c, v, key, "total size must be no more than 262144 bytes");
}

const char **want_strs(struct dctx *c, const struct fq_value *m,
                       const char *key, bool required, size_t max,
                       const char *(*check)(const char *), size_t *n)
{
    *n = 0;
    const struct fq_value *v = want_seq(c, m, key, required, 0, max);
    if (!v)
        return NULL;
    const char **out = MEM_ARRAY(c, const char *, v->u.seq.n);
    size_t old = path_key(c, key);
    for (size_t i = 0; i < v->u.seq.n; i++) {
        const struct fq_value *it = v->u.seq.items[i];
        size_t o2 = path_idx(c, i);
        if (!it || it->type != FQ_V_STR) {
            derr(c, it, "must be a string, not %s", type_word(it));
        } else if (check && !has_var(it->u.str.s) && check(it->u.str.s)) {
            derr(c, it, "invalid name \"%s\": %s", it->u.str.s,
                 check(it->u.str.s));
        } else {
            bool dup = false;
            for (size_t j = 0; j < *n; j++)
                if (strcmp(out[j], it->u.str.s) == 0)
                    dup = true;
            if (dup)
                derr(c, it, "duplicate value \"%s\"", it->u.str.s);
            else
                out[(*n)++] = it->u.str.s;
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
    return out;
}

static bool standard_resource(const char *r)
{
    return strcmp(r, "cpu") == 0 || strcmp(r, "memory") == 0 ||
           strcmp(r, "ephemeral-storage") == 0 ||
           strncmp(r, "hugepages-", 10) == 0 || strcmp(r, "pods") == 0;
}

void want_resources(struct dctx *c, const struct fq_value *m, const char *key,
                    bool container, struct fq_resources *out)
{
    out->items = NULL;
    out->n = 0;
    const struct fq_value *v = want_map(c, m, key, false);
    if (!v)
        return;
    out->items = MEM_ARRAY(c, struct fq_resource, v->u.map.n);
    size_t old = path_key(c, key);
    for (size_t i = 0; i < v->u.map.n; i++) {
        const struct fq_member *mb = &v->u.map.items[i];
        const char *why = fq_check_qualified_name(mb->key);
        if (!why && container && !strchr(mb->key, '/') &&
            !standard_resource(mb->key))
            why = "must be cpu, memory, ephemeral-storage, hugepages-<size> "
                  "or a name with a domain, like google.com/tpu";
        if (why && !has_var(mb->key)) {
            derr_key(c, mb->val, mb->key, "invalid resource name \"%s\": %s",
                     mb->key, why);
            continue;
        }
        int64_t q;
        const struct fq_value *qv =
            mb->val && mb->val->type != FQ_V_NULL ? mb->val : NULL;
        if (!qv && mb->val) {
            derr_key(c, mb->val, mb->key,
                     "is null; give a quantity (like \"1\", \"500m\" or "
                     "\"16Gi\") or remove the key");
            continue;
        }
        if (qty_of(c, mb->key, qv, mb->key, true, &q)) {
            out->items[out->n].name = mb->key;
            out->items[out->n].value = q;
            out->n++;
        }
    }
    path_pop(c, old);
}

void want_conditions(struct dctx *c, const struct fq_value *m, const char *key,
                     struct fq_conditions *out)
{
    out->items = NULL;
    out->n = 0;
    const struct fq_value *v = want_seq(c, m, key, false, 0, 0);
    if (!v)
        return;
    out->items = MEM_ARRAY(c, struct fq_condition, v->u.seq.n);
    size_t old = path_key(c, key);
    for (size_t i = 0; i < v->u.seq.n; i++) {
        const struct fq_value *it = v->u.seq.items[i];
        size_t o2 = path_idx(c, i);
        if (!it || it->type != FQ_V_MAP) {
            derr(c, it, "must be a mapping, not %s", type_word(it));
        } else {
            static const char *const keys[] = {"type",
                                               "status",
                                               "reason",
                                               "message",
                                               "lastTransitionTime",
                                               "observedGeneration"};
            const struct fq_value *f[6];
            fields(it, keys, 6, f);
            struct fq_condition *cd = &out->items[out->n];
            cd->type = str_of(c, it, "type", f[0], true);
            cd->status = str_of(c, it, "status", f[1], false);
            cd->reason = str_of(c, it, "reason", f[2], false);
            cd->message = str_of(c, it, "message", f[3], false);
            cd->last_transition_time =
                str_of(c, it, "lastTransitionTime", f[4], false);
            cd->observed_generation =
                int_of(c, "observedGeneration", f[5], 0, 0, INT64_MAX, NULL);
            if (cd->type)
                out->n++;
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}

static const char *const effect_names[] = {"", "NoSchedule", "PreferNoSchedule",
                                           "NoExecute", NULL};

void want_taints(struct dctx *c, const struct fq_value *m, const char *key,
                 size_t max, struct fq_taint **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const struct fq_value *v = want_seq(c, m, key, false, 0, max);
    if (!v)
        return;
    *out = MEM_ARRAY(c, struct fq_taint, v->u.seq.n);
    size_t old = path_key(c, key);
    for (size_t i = 0; i < v->u.seq.n; i++) {
        const struct fq_value *it = v->u.seq.items[i];
        size_t o2 = path_idx(c, i);
        if (!it || it->type != FQ_V_MAP) {
            derr(c, it, "must be a mapping, not %s", type_word(it));
            path_pop(c, o2);
            continue;
        }
        struct fq_taint t;
        t.key = want_name(c, it, "key", true, fq_check_qualified_name);
        t.value = want_str(c, it, "value", false);
        if (t.value && !has_var(t.value) && fq_check_label_value(t.value))
            derr_key(c, field(it, "value"), "value", "invalid value \"%s\": %s",
                     t.value, fq_check_label_value(t.value));
        if (!field(it, "effect"))
            derr_key(c, it, "effect",
                     "required field is missing (NoSchedule, "
                     "PreferNoSchedule or NoExecute)");
        t.effect =
            (enum fq_taint_effect)want_enum(c, it, "effect", effect_names, 0);
        if (field(it, "effect") && t.effect == FQ_EFFECT_ANY &&
            fq_value_as_str(field(it, "effect")) &&
            !*fq_value_as_str(field(it, "effect")))
            derr_key(c, field(it, "effect"), "effect",
                     "must be NoSchedule, PreferNoSchedule or NoExecute");
        if (t.key) {
            for (size_t j = 0; j < *n; j++)
                if (strcmp((*out)[j].key, t.key) == 0 &&
                    (*out)[j].effect == t.effect)
                    derr(c, it, "duplicate taint %s with effect %s", t.key,
                         effect_names[t.effect]);
            (*out)[(*n)++] = t;
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}

void want_tolerations(struct dctx *c, const struct fq_value *m, const char *key,
                      size_t max, struct fq_toleration **out, size_t *n)
{
    static const char *const ops[] = {"Equal", "Exists", "", NULL};
    *out = NULL;
    *n = 0;
    const struct fq_value *v = want_seq(c, m, key, false, 0, max);
    if (!v)
        return;
    *out = MEM_ARRAY(c, struct fq_toleration, v->u.seq.n);
    size_t old = path_key(c, key);
    for (size_t i = 0; i < v->u.seq.n; i++) {
        const struct fq_value *it = v->u.seq.items[i];
        size_t o2 = path_idx(c, i);
        if (!it || it->type != FQ_V_MAP) {
            derr(c, it, "must be a mapping, not %s", type_word(it));
            path_pop(c, o2);
            continue;
        }
        struct fq_toleration t;
        memset(&t, 0, sizeof(t));
        t.key = want_str(c, it, "key", false);
        if (t.key && !*t.key)
            t.key = NULL;
        if (t.key && !has_var(t.key) && fq_check_qualified_name(t.key))
            derr_key(c, field(it, "key"), "key", "invalid name \"%s\": %s",
                     t.key, fq_check_qualified_name(t.key));
        t.exists = want_enum(c, it, "operator", ops, 0) == 1;
        t.value = want_str(c, it, "value", false);
        if (t.value && !*t.value)
            t.value = NULL;
        if (t.exists && t.value)
            derr_key(c, field(it, "value"), "value",
                     "must be empty when operator is Exists");
        if (!t.key && !t.exists)
            derr_key(c, it, "operator",
                     "must be Exists when key is empty (a toleration of "
                     "every taint)");
        t.effect =
            (enum fq_taint_effect)want_enum(c, it, "effect", effect_names, 0);
        t.toleration_seconds = want_int(c, it, "tolerationSeconds", 0,
                                        INT64_MIN, INT64_MAX, &t.has_seconds);
        if (t.has_seconds && t.effect != FQ_EFFECT_NO_EXECUTE)
            derr_key(c, field(it, "tolerationSeconds"), "tolerationSeconds",
                     "needs effect NoExecute");
        (*out)[(*n)++] = t;
        path_pop(c, o2);
    }
    path_pop(c, old);
}

void want_selector(struct dctx *c, const struct fq_value *m, const char *key,
                   struct fq_selector *out)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist",
                                      NULL};
    memset(out, 0, sizeof(*out));
    const struct fq_value *v = want_map(c, m, key, false);
    if (!v)
        return;
    out->present = true;
    size_t old = path_key(c, key);
    want_kvs(c, v, "matchLabels", KVS_LABELS, 0, &out->match_labels);
    const struct fq_value *ex = want_seq(c, v, "matchExpressions", false, 0, 0);
    if (ex) {
        out->exprs = MEM_ARRAY(c, struct fq_selector_req, ex->u.seq.n);
        size_t o2 = path_key(c, "matchExpressions");
        for (size_t i = 0; i < ex->u.seq.n; i++) {
            const struct fq_value *it = ex->u.seq.items[i];
            size_t o3 = path_idx(c, i);
            if (!it || it->type != FQ_V_MAP) {
                derr(c, it, "must be a mapping, not %s", type_word(it));
                path_pop(c, o3);
                continue;
            }
            struct fq_selector_req r;
            memset(&r, 0, sizeof(r));
            r.key = want_name(c, it, "key", true, fq_check_qualified_name);
            if (!field(it, "operator"))
                derr_key(c, it, "operator",
                         "required field is missing (In, NotIn, Exists or "
                         "DoesNotExist)");
            int op = want_enum(c, it, "operator", ops, -1);
            r.values = want_strs(c, it, "values", false, 0, NULL, &r.n_values);
            if (op == FQ_SEL_IN || op == FQ_SEL_NOT_IN) {
                if (r.n_values == 0)
                    derr_key(c, it, "values",
                             "must not be empty when operator is In or "
                             "NotIn");
            } else if (op >= 0 && r.n_values > 0) {
                derr_key(c, field(it, "values"), "values",
                         "must be empty when operator is Exists or "
                         "DoesNotExist");
            }
            if (r.key && op >= 0) {
                r.op = (enum fq_selector_op)op;
                out->exprs[out->n_exprs++] = r;
            }
            path_pop(c, o3);
        }
        path_pop(c, o2);
    }
    path_pop(c, old);
}
