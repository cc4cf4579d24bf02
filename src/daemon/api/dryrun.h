/*
 * dryrun.h - ?dryRun=All for API writes: checked like a real write,
 * answered with the object as it would be stored, nothing stored.
 */
#ifndef FLEXQ_DAEMON_DRYRUN_H
#define FLEXQ_DAEMON_DRYRUN_H

#include <stdbool.h>

#include "flexq/err.h"
#include "flexq/objstore.h"

struct fq_daemon;
struct fq_http_req;

/* Reads ?dryRun: absent -> false, "All" -> true, anything else is
 * FQ_EINVAL (as Kubernetes answers). */
int fq_dryrun_param(struct fq_http_req *r, bool *dry, struct fq_err *err);

/* Validates obj (taken) and answers with the preview of storing it over
 * `cur` (NULL: a create, 201). status_only: a write of the status
 * subresource (spec and generation as stored). */
void fq_dryrun_reply(struct fq_daemon *d, struct fq_http_req *r,
                     const char *plural, const struct fq_object *cur,
                     struct fq_value *obj, bool status_only);

/* 415 UnsupportedMediaType with the media types that are accepted. */
void fq_dryrun_unsupported_media(struct fq_daemon *d, struct fq_http_req *r,
                                 const char *accepted);

#endif
