/*
 * status.h - Kubernetes Status replies for the API's errors (status.c).
 */
#ifndef FLEXQ_DAEMON_STATUS_H
#define FLEXQ_DAEMON_STATUS_H

#include "flexq/err.h"

struct fq_daemon;
struct fq_http_req;

/*
 * Answers with a Kubernetes Status object for error `code` with `e`'s
 * message and field path (e may be NULL), deferred until the commit.
 */
void fq_api_error(struct fq_daemon *d, struct fq_http_req *r, int code,
                  const struct fq_err *e, const char *kind_plural,
                  const char *name);

#endif
