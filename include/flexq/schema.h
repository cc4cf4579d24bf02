/*
 * schema.h - OpenAPI v3 schemas of the kinds flexq serves (field names,
 * types and descriptions), for /openapi/v2, /openapi/v3 and
 * `kubectl explain`. Validation is the decoders' (objects.h); these
 * schemas describe the same fields and keep unknown ones.
 */
#ifndef FLEXQ_SCHEMA_H
#define FLEXQ_SCHEMA_H

#include "flexq/kinds.h"
#include "flexq/value.h"

/* The schema of kind k (type object, properties apiVersion, kind,
 * metadata, spec, status ...). metadata refers to `metadata_ref` (a
 * "$ref" target) when given. Owned by the caller. */
struct fq_value *fq_schema_kind(enum fq_kind k, const char *metadata_ref);

/* One line saying what kind k is ("RayJob is the Schema for ..."). */
const char *fq_schema_description(enum fq_kind k);

#endif
