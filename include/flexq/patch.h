/*
 * patch.h - JSON patch (RFC 6902) and strategic merge patch with the
 * merge keys of the core kinds; merge patch (RFC 7386) is in value.h.
 */
#ifndef FLEXQ_PATCH_H
#define FLEXQ_PATCH_H

#include <stdbool.h>

#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/value.h"

/* Most operations one JSON patch may hold. */
#define FQ_PATCH_MAX_OPS 10000

/* Applies the operations of `ops` (a list) to *target in order. Returns 0,
 * FQ_EPARSE (malformed patch), FQ_ELIMIT, or FQ_EINVAL (a path that does
 * not exist, a failed test). *target may be changed on error: patch a
 * copy. */
int fq_patch_json(struct fq_value **target, const struct fq_value *ops,
                  struct fq_err *err);

/* True for the kinds with strategic merge patch (the core kinds). */
bool fq_patch_strategic_supported(enum fq_kind k);

/* Applies a strategic merge patch for an object of kind k. Returns 0,
 * FQ_EUNSUPPORTED (k has none), FQ_EPARSE, FQ_EINVAL or FQ_ELIMIT.
 * *target may be changed on error: patch a copy. */
int fq_patch_strategic(struct fq_value **target, const struct fq_value *patch,
                       enum fq_kind k, struct fq_err *err);

#endif
