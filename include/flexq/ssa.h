/*
 * ssa.h - server-side apply: field ownership in metadata.managedFields,
 * field managers, conflicts and force (Kubernetes' semantics, lists
 * atomic).
 */
#ifndef FLEXQ_SSA_H
#define FLEXQ_SSA_H

#include <stdbool.h>

#include "flexq/err.h"
#include "flexq/value.h"

/* Most fields (leaf paths) tracked per object. */
#define FQ_SSA_MAX_FIELDS 20000

/*
 * Applies `config` as `manager` over `live` (NULL: the object is new).
 * On success *out is the object to store (owned), with managedFields.
 * On conflicts (fields another manager owns with another value, and not
 * `force`) returns FQ_ECONFLICT with *conflicts a list of {manager,
 * apiVersion, field: ".spec.x"} (owned) and nothing else changed.
 * FQ_EPARSE without a manager, FQ_ELIMIT past FQ_SSA_MAX_FIELDS.
 * `now` is the RFC 3339 time recorded in the manager's entry.
 */
int fq_ssa_apply(const struct fq_value *live, const struct fq_value *config,
                 const char *manager, bool force, const char *now,
                 struct fq_value **out, struct fq_value **conflicts,
                 struct fq_err *err);

/* Records a non-apply write of `obj` over `old` (NULL: a create) by
 * `manager`: the fields it changed become its own (operation Update).
 * Writes obj's managedFields. 0 or FQ_ELIMIT (obj then unchanged). */
int fq_ssa_update(const struct fq_value *old, struct fq_value *obj,
                  const char *manager, const char *now);

#endif
