/*
 * openapi.h - /openapi/v2 and /openapi/v3 (index and per group-version
 * documents) for the kinds of kinds.h, with the schemas of schema.h.
 */
#ifndef FLEXQ_DAEMON_OPENAPI_H
#define FLEXQ_DAEMON_OPENAPI_H

#include "daemon.h"
#include "flexq/value.h"

/* Serves /openapi/ on d's API (token needed when --tokens is set). */
void fq_openapi_attach(struct fq_daemon *d);

/* The OpenAPI 3 document of group/version ("" for core), or NULL when no
 * kind is served there. Owned by the caller. */
struct fq_value *fq_openapi_v3(const char *group, const char *version);
/* {"paths": {"apis/G/V": {"serverRelativeURL": ".../apis/G/V?hash=H"}}}. */
struct fq_value *fq_openapi_v3_index(void);
/* One Swagger 2.0 document of every kind and version. */
struct fq_value *fq_openapi_v2(void);

#endif
