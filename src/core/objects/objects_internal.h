/*
 * objects_internal.h - what the objects_*.c decoders share (private to
 * src/core): the arena behind every view, the decode context that tracks
 * the field path and collects errors, and typed getters that check a field
 * and report what is wrong with it.
 *
 * Pattern of a decoder (see objects_kueue.c):
 *
 *   struct dctx c;
 *   if (dctx_begin(&c, obj, file, errs, FQ_KIND_LOCALQUEUE, &out->mem,
 *                  &out->meta) == 0) {
 *       const struct fq_value *spec = want_map(&c, obj, "spec", true);
 *       out->cluster_queue = want_name(&c, spec, "clusterQueue", true, ...);
 *   }
 *   return dctx_end(&c, out, sizeof(*out), &out->mem);
 *
 * Getters take the parent mapping and a key, push the key on the path
 * while they check, and return a neutral value (NULL, the default) after
 * reporting an error, so a decoder never stops at the first problem.
 */
#ifndef FLEXQ_OBJECTS_INTERNAL_H
#define FLEXQ_OBJECTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/objects.h"
#include "flexq/quantity.h"
#include "flexq/value.h"

/* --- arena ---------------------------------------------------------------- */

/* Zeroed memory that lives until objmem_free(*m). */
void *objmem_alloc(struct fq_objmem **m, size_t n);
void objmem_free(struct fq_objmem **m);
#define MEM_ARRAY(c, type, n) \
 ((type *)objmem_alloc((c)->mem, (n) * sizeof(type)))

/* --- context -------------------------------------------------------------- */

struct dctx {
    const char *file;
    struct fq_errlist *errs; /* may be NULL */
    size_t nerr;
    struct fq_objmem **mem;
    const struct fq_value *obj; /* the whole object */
    enum fq_kind kind;
    char path[FQ_ERR_PATH_MAX];
    size_t plen;
};

/*
 * Starts decoding `obj` as `kind`: zeroes nothing (the caller memsets
 * *out), checks that obj is a mapping whose apiVersion/kind name `kind`,
 * reports every unexpanded ${VAR} in the tree when there is a list to
 * report to (validation; a controller decoding a stored object, which was
 * validated when it was stored, passes none and skips the walk), and
 * decodes metadata into *meta. Returns 0 when the decoder should go on (errors may already have
 * been recorded), -1 when obj is not even a mapping.
 */
int dctx_begin(struct dctx *c, const struct fq_value *obj, const char *file,
               struct fq_errlist *errs, enum fq_kind kind,
               struct fq_objmem **mem, struct fq_meta *meta);
/* Ends: on errors frees the arena, zeroes `out` (of `size` bytes) and
 * returns FQ_EINVAL; else 0. */
int dctx_end(struct dctx *c, void *out, size_t size, struct fq_objmem **mem);

/* Path: push returns the old length to pop back to. */
size_t path_key(struct dctx *c, const char *key);
size_t path_idx(struct dctx *c, size_t i);
void path_pop(struct dctx *c, size_t old);

/* Records an error at node `at` (may be NULL: the object's position) with
 * the current path. Errors whose node is a string holding ${VAR} are
 * dropped: the variable was reported already. */
void derr(struct dctx *c, const struct fq_value *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same with `key` appended to the path for this error only. */
void derr_key(struct dctx *c, const struct fq_value *at, const char *key,
              const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A required `key` of map m is absent or null: "required field is
 * missing" at m, or, when given as null, "is null; a value is required
 * here" at the null's own line and column. */
void derr_missing(struct dctx *c, const struct fq_value *m, const char *key);

/* scheduling.k8s.io/v1 PriorityClass (objects_sched.c). */
int fq_priorityclass_validate(const struct fq_value *obj, const char *file,
                              struct fq_errlist *errs);
/* JobSet, PyTorchJob, MPIJob, LeaderWorkerSet and TrainJob
 * (objects_training.c). */
int fq_training_validate(const struct fq_value *obj, const char *file,
                         struct fq_errlist *errs, enum fq_kind kind);

/* v1 Service (objects_service.c). */
int fq_service_validate(const struct fq_value *obj, const char *file,
                        struct fq_errlist *errs);

/* v1 Secret (objects_core.c). */
int fq_secret_validate(const struct fq_value *obj, const char *file,
                       struct fq_errlist *errs);

/* kueue.x-k8s.io Topology (objects_topology.c). */
int fq_topology_validate(const struct fq_value *obj, const char *file,
                         struct fq_errlist *errs);

/* Does s hold an unexpanded ${VAR}? */
bool has_var(const char *s);

/* The printable text of a scalar (string, number raw, true/false, null). */
const char *scalar_text(const struct fq_value *v);
const char *type_word(const struct fq_value *v); /* "a string", ... */

/* --- getters on a parent mapping (NULL parent: everything is absent) ------ */

/* The child, or NULL when absent or null. */
const struct fq_value *field(const struct fq_value *m, const char *key);
/* field() of each of keys[0..n) (n <= FIELDS_MAX) into out[], in one
 * pass over m: a decoder that reads many members of a map it meets
 * often (a condition, a check state) looks it over once. */
#define FIELDS_MAX 8
void fields(const struct fq_value *m, const char *const *keys, size_t n,
            const struct fq_value **out);

const char *want_str(struct dctx *c, const struct fq_value *m, const char *key,
                     bool required);
/* The checks of want_str, want_int, want_qty and want_enum on a child v
 * found already (field(m, key), or fields()): m and key are for the
 * error messages. */
const char *str_of(struct dctx *c, const struct fq_value *m, const char *key,
                   const struct fq_value *v, bool required);
int64_t int_of(struct dctx *c, const char *key, const struct fq_value *v,
               int64_t def, int64_t min, int64_t max, bool *present);
bool qty_of(struct dctx *c, const char *key, const struct fq_value *v,
            const char *res, bool nonneg, int64_t *out);
int enum_of(struct dctx *c, const struct fq_value *m, const char *key,
            const struct fq_value *v, const char *const *names, int def);
/* A string that must pass `check` (fq_check_dns1123_subdomain, ...). */
const char *want_name(struct dctx *c, const struct fq_value *m, const char *key,
                      bool required, const char *(*check)(const char *));
bool want_bool(struct dctx *c, const struct fq_value *m, const char *key,
               bool def);
/* An integer in [min, max]; `def` when absent. *present (may be NULL). */
int64_t want_int(struct dctx *c, const struct fq_value *m, const char *key,
                 int64_t def, int64_t min, int64_t max, bool *present);
/* A quantity for resource `res` (scale from fq_quantity_scale_for). Returns
 * true and sets *out when present and valid. */
bool want_qty(struct dctx *c, const struct fq_value *m, const char *key,
              const char *res, bool nonneg, int64_t *out);
const struct fq_value *want_map(struct dctx *c, const struct fq_value *m,
                                const char *key, bool required);
/* A sequence of at most `max` items (0: no limit), at least `min` when
 * present or required. */
const struct fq_value *want_seq(struct dctx *c, const struct fq_value *m,
                                const char *key, bool required, size_t min,
                                size_t max);
/* One of names[0..n) (NULL-terminated list); returns its index, or `def`
 * when absent or invalid. */
int want_enum(struct dctx *c, const struct fq_value *m, const char *key,
              const char *const *names, int def);

/* Kinds of string maps. */
enum kvs_rule {
    KVS_LABELS,      /* keys qualified names, values label values */
    KVS_ANNOTATIONS, /* keys qualified names, any string values */
    KVS_CONFIG,      /* ConfigMap keys */
    KVS_ANY,         /* any keys, string values */
};

void want_kvs(struct dctx *c, const struct fq_value *m, const char *key,
              enum kvs_rule rule, size_t max, struct fq_kvs *out);
/* A list of strings (each passing `check` when not NULL), unique. */
const char **want_strs(struct dctx *c, const struct fq_value *m,
                       const char *key, bool required, size_t max,
                       const char *(*check)(const char *), size_t *n);

void want_resources(struct dctx *c, const struct fq_value *m, const char *key,
                    bool container, struct fq_resources *out);
void want_conditions(struct dctx *c, const struct fq_value *m, const char *key,
                     struct fq_conditions *out);
void want_taints(struct dctx *c, const struct fq_value *m, const char *key,
                 size_t max, struct fq_taint **out, size_t *n);
void want_tolerations(struct dctx *c, const struct fq_value *m, const char *key,
                      size_t max, struct fq_toleration **out, size_t *n);
void want_selector(struct dctx *c, const struct fq_value *m, const char *key,
                   struct fq_selector *out);
/* A PodTemplateSpec (metadata + spec) under m[key]. */
void want_podtemplate(struct dctx *c, const struct fq_value *m, const char *key,
                      bool required, struct fq_podtemplate *out);
/* A PodSpec (the map itself). */
void decode_podspec(struct dctx *c, const struct fq_value *spec,
                    struct fq_podspec *out);

/* Kueue's label checks on job-like objects (queue-name, priority-class). */
void check_kueue_labels(struct dctx *c, const struct fq_meta *meta);

/* A ConfigMap key's problem, or NULL (objects_common.c). */
const char *oc_check_config_key(const char *s);
/* Whether a resource's quantity must be a whole number (getters.c). */
bool oc_integral_resource(const char *res);

/* Names of the limits flexq shares with Kueue. */
#define FQ_INT32_MAX 2147483647LL
#define FQ_INT32_MIN (-2147483647LL - 1)

#endif
