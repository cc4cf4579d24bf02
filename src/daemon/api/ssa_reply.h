/*
 * ssa_reply.h - the 409 answer of a server-side apply with conflicts.
 */
#ifndef FLEXQ_DAEMON_SSA_REPLY_H
#define FLEXQ_DAEMON_SSA_REPLY_H

#include "daemon.h"
#include "flexq/value.h"

/* Answers 409 Conflict for `conflicts` (fq_ssa_apply's list). */
void fq_ssa_reply_conflict(struct fq_daemon *d, struct fq_http_req *r,
                           const char *plural, const char *name,
                           const struct fq_value *conflicts);

#endif
