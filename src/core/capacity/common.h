/*
 * capacity/common.h - small helpers every capacity module uses: asking
 * for a run, the time scale, a pool by name and by selector, "ns/name"
 * keys and the objects they name, a pool's backoff entry, a condition
 * written in place.
 *
 * It sits just above state.h, below every other capacity module, so that
 * the node table, the ProvisioningRequest lifecycle and cost can use these
 * without including the controller (capacity.h) that includes them.
 * What it does not do: decide or write anything on its own.
 */
#ifndef FLEXQ_CAPACITY_COMMON_H
#define FLEXQ_CAPACITY_COMMON_H

#include "capacity/state.h"

/* Asks for a run at `t` (kept if earlier than what is asked already). */
void fq_capacity_wake(struct fq_capacity *st, int64_t t);

/* Scales a control-plane delay by the engine's time_scale. */
int64_t fq_capacity_scaled(struct fq_engine *e, int64_t ms);

struct fq_cap_pool *fq_capacity_pool(struct fq_capacity *st, const char *name);

/* fq_nodepool_matches with the pool's labels computed once per decode. */
bool fq_capacity_pool_matches(const struct fq_cap_pool *p,
                              const struct fq_value *selector);

/* Sets one condition of a stored object's status in place (only
 * status.conditions is copied and written), as fq_cond_status_set
 * would on a copy of the whole object. */
void fq_capacity_set_cond_stored(struct fq_engine *e, enum fq_kind kind,
                                 const char *ns, const char *name,
                                 const char *type, const char *cstatus,
                                 const char *reason, const char *message,
                                 int64_t now);

/* "ns/name" into buf (cut at n - 1 bytes). */
void fq_capacity_key(const char *ns, const char *name, char *buf, size_t n);

/* A copy of s (NULL for NULL) in a small block (alloc.h), for the texts
 * the controller makes and drops at every run or change (placements,
 * groups, decodes): malloc and free cost more than the rest of it.
 * Freed only by fq_capacity_text_free. */
char *fq_capacity_text(const char *s);
void fq_capacity_text_free(char *s);

/* A change's "ns/name" key and, in *hash, its fq_smap_hash: the ones the
 * engine worked out for every watcher (struct fq_change), or, for a
 * change made by hand without them, formatted into buf (n bytes). The
 * key returned is borrowed from c or is buf. */
const char *fq_capacity_change_key(const struct fq_change *c, char *buf,
                                   size_t n, uint64_t *hash);

/* The stored object of `kind` named by key "ns/name", or NULL. */
const struct fq_object *fq_capacity_keyed(struct fq_engine *e,
                                          enum fq_kind kind, const char *key);

/* The stockout backoff of pool `pool`, added (no failures, until -1) when
 * the pool has none yet (the autoscaler's, read by provider_demand.c
 * too). */
struct fq_cap_backoff *fq_capacity_backoff(struct fq_capacity *st,
                                           const char *pool);

/* The objects of kind `kind` named by "ns/name" keys, in their order;
 * takes (and frees) the keys array, whose strings are borrowed. Returns
 * the count; *out is an owned array of borrowed objects. */
size_t fq_capacity_objects_of(struct fq_engine *e, enum fq_kind kind,
                              const char **keys, size_t nk,
                              const struct fq_object ***out);

#endif
