/*
 * fields.h - the declarative field tables that are the one source of both
 * validation and OpenAPI for the kinds converted to them (Kueue's eight
 * kinds and ProvisioningRequest, RayJob and RayCluster, and the core
 * kinds Job, ConfigMap, Pod, Node, Event, Namespace): each row names a
 * field by its path from the object's root, with its type, whether it is
 * required, its limits, its enum values, its default and its description.
 * The decoders in objects_kueue.c, objects_ray.c and objects_core.c read
 * every field through a row (the fld_* getters below hand the row's rules
 * to the want_* checks of objects_internal.h, so the error messages are
 * theirs), and schema.c turns the same rows into the kinds' OpenAPI
 * schemas. The PodSpec inside a Pod and a Job's template is checked by
 * decode_podspec's own code (objects_common.c); its rows describe it, and
 * tests/unit/test_fields.c holds the two together.
 *
 * Private to src/core/objects.
 */
#ifndef FLEXQ_OBJECTS_FIELDS_H
#define FLEXQ_OBJECTS_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/kinds.h"
#include "objects/objects_internal.h"

enum fq_ftype {
    FT_STR,  /* a string */
    FT_NAME, /* a string passing `check` (DNS subdomain, label, ...) */
    FT_INT,  /* an integer in [min, max], `def` when absent */
    FT_BOOL, /* true / false, `def` when absent */
    FT_QTY,  /* a Kubernetes quantity (int or string) */
    FT_ENUM, /* one of `names`; `def` (an index, -1: none) when absent */
    FT_MAP,  /* a mapping whose fields have rows of their own */
    FT_SEQ,  /* a list of mappings, [min, max] items (max 0: any) */
    FT_STRS, /* a list of unique strings (each passing `check`), <= max */
    FT_KVS,  /* a string-to-string map (`kvs` says the key rules), <= max */
    FT_OBJ,  /* a mapping decoded by a helper of its own (pod template,
              * selector, ...): described here, not field by field */
    FT_OBJS, /* a list decoded by a helper (taints, conditions, ...) */
};

enum {
    FF_REQUIRED = 1 << 0,
    FF_NONNEG = 1 << 1, /* quantities: not negative */
    FF_SERVER = 1 << 2, /* set by flexq (status): described, read only */
};

struct fq_field {
    uint64_t kinds;   /* FK(kind) | ...: the kinds that have this field */
    const char *path; /* from the root; "[]" after a list's segment */
    unsigned char type, flags, kvs;
    int64_t def, min, max;
    const char *const *names;           /* FT_ENUM */
    const char *(*check)(const char *); /* FT_NAME, FT_STRS */
    const char *desc;
};

#define FK(kind) ((uint64_t)1 << (kind))

/* The rows, each table ended by a row whose path is NULL. */
extern const struct fq_field fq_kueue_fields[];
extern const struct fq_field fq_ray_fields[];
extern const struct fq_field fq_core_fields[];

/* The field's key in its parent (the path's last segment). */
const char *fld_key(const struct fq_field *f);

/* The want_* getter of the row's type, with the row's rules. */
const char *fld_str(struct dctx *c, const struct fq_value *m,
                    const struct fq_field *f);
int64_t fld_int(struct dctx *c, const struct fq_value *m,
                const struct fq_field *f, bool *present);
bool fld_bool(struct dctx *c, const struct fq_value *m,
              const struct fq_field *f);
/* `res` is the resource whose scale the quantity takes. */
bool fld_qty(struct dctx *c, const struct fq_value *m, const struct fq_field *f,
             const char *res, int64_t *out);
int fld_enum(struct dctx *c, const struct fq_value *m,
             const struct fq_field *f);
const struct fq_value *fld_map(struct dctx *c, const struct fq_value *m,
                               const struct fq_field *f);
const struct fq_value *fld_seq(struct dctx *c, const struct fq_value *m,
                               const struct fq_field *f);
const char **fld_strs(struct dctx *c, const struct fq_value *m,
                      const struct fq_field *f, size_t *n);
void fld_kvs(struct dctx *c, const struct fq_value *m, const struct fq_field *f,
             struct fq_kvs *out);

#endif
