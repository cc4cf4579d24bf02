/*
 * fields.c - the fld_* getters of fields.h: each takes a row of a field
 * table and calls the want_* check of its type with the row's key,
 * requiredness, limits, enum values and default, so that a rule lives in
 * the row alone and the message is the one want_* always gave.
 *
 * What it does not do: hold the rows (objects_kueue.c and objects_ray.c
 * hold them beside their decoders), or build schemas (schema.c).
 */
#include "objects/fields.h"

#include <assert.h>
#include <string.h>

const char *fld_key(const struct fq_field *f)
{
    const char *dot = strrchr(f->path, '.');
    return dot ? dot + 1 : f->path;
}

/* The key of row f, read by a decoder of c->kind: the row must be one of
 * that kind's, or the field would be missing from its OpenAPI schema. */
static const char *key_of(const struct dctx *c, const struct fq_field *f)
{
    assert(f->kinds & FK(c->kind));
    (void)c;
    return fld_key(f);
}

static bool req(const struct fq_field *f)
{
    return (f->flags & FF_REQUIRED) != 0;
}

const char *fld_str(struct dctx *c, const struct fq_value *m,
                    const struct fq_field *f)
{
    if (f->type == FT_NAME)
        return want_name(c, m, key_of(c, f), req(f), f->check);
    return want_str(c, m, key_of(c, f), req(f));
}

int64_t fld_int(struct dctx *c, const struct fq_value *m,
                const struct fq_field *f, bool *present)
{
    return want_int(c, m, key_of(c, f), f->def, f->min, f->max, present);
}

bool fld_bool(struct dctx *c, const struct fq_value *m,
              const struct fq_field *f)
{
    return want_bool(c, m, key_of(c, f), f->def != 0);
}

bool fld_qty(struct dctx *c, const struct fq_value *m, const struct fq_field *f,
             const char *res, int64_t *out)
{
    return want_qty(c, m, key_of(c, f), res, (f->flags & FF_NONNEG) != 0, out);
}

int fld_enum(struct dctx *c, const struct fq_value *m, const struct fq_field *f)
{
    return want_enum(c, m, key_of(c, f), f->names, (int)f->def);
}

const struct fq_value *fld_map(struct dctx *c, const struct fq_value *m,
                               const struct fq_field *f)
{
    return want_map(c, m, key_of(c, f), req(f));
}

const struct fq_value *fld_seq(struct dctx *c, const struct fq_value *m,
                               const struct fq_field *f)
{
    return want_seq(c, m, key_of(c, f), req(f), (size_t)f->min, (size_t)f->max);
}

const char **fld_strs(struct dctx *c, const struct fq_value *m,
                      const struct fq_field *f, size_t *n)
{
    return want_strs(c, m, key_of(c, f), req(f), (size_t)f->max, f->check, n);
}

void fld_kvs(struct dctx *c, const struct fq_value *m, const struct fq_field *f,
             struct fq_kvs *out)
{
    want_kvs(c, m, key_of(c, f), (enum kvs_rule)f->kvs, (size_t)f->max, out);
}
