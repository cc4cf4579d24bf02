/*
 * conditions.h - reading an object's status.conditions by type, the way
 * every Kubernetes controller does (metav1.Condition: type, status
 * "True"/"False"/"Unknown", reason, message, lastTransitionTime).
 *
 * One copy for every reader that takes the whole object (core
 * controllers, the daemon's store and web UI, the simulator, the CLI)
 * and, through the fq_cond_in_status / fq_cond_status_* family, for those
 * that hold the status map (the capacity controllers, provcheck). The job
 * controllers' fq_pods_cond_set (jobs/pods.h) differs on purpose: a NULL
 * reason or message removes the member, as the kubelet writes pods.
 */
#ifndef FLEXQ_CONDITIONS_H
#define FLEXQ_CONDITIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/value.h"

/* The first condition of `type` in obj's status.conditions (borrowed), or
 * NULL when obj is NULL, has no conditions or none of that type. */
const struct fq_value *fq_cond_find(const struct fq_value *obj,
                                    const char *type);

/* Does obj carry condition `type` with status "True"? */
bool fq_cond_true(const struct fq_value *obj, const char *type);

/* fq_cond_find over a status map (obj's "status") rather than the whole
 * object. */
const struct fq_value *fq_cond_in_status(const struct fq_value *status,
                                         const char *type);

/* fq_cond_in_status for several types in one pass over the list:
 * found[k] is the first condition of types[k], or NULL. For readers that
 * look at a few conditions of one object. */
void fq_conds_in_status(const struct fq_value *status, size_t n,
                        const char *const types[],
                        const struct fq_value *found[]);

/* Is condition c (NULL: none) there with this status ("True", ...)? */
bool fq_cond_status_is(const struct fq_value *c, const char *status);

/*
 * Sets condition `type` of obj (status.conditions made when missing; the
 * last entry of that type when there are several) to status, reason and
 * message, with lastTransitionTime `now` (ms since the epoch) whatever it
 * was: for one-way transitions such as Finished. The caller commits obj.
 */
void fq_cond_put(struct fq_value *obj, const char *type, const char *status,
                 const char *reason, const char *message, int64_t now);

/* Like fq_cond_put, but lastTransitionTime moves only when the status
 * changes (metav1.Condition's rule); reason and message are always set. */
void fq_cond_set(struct fq_value *obj, const char *type, const char *status,
                 const char *reason, const char *message, int64_t now);

/* fq_cond_in_status(status, type) has status "True". */
bool fq_cond_in_status_true(const struct fq_value *status, const char *type);

/* lastTransitionTime of condition `type` in ms since the epoch, or -1. */
int64_t fq_cond_in_status_time(const struct fq_value *status, const char *type);

/*
 * Sets condition `type` of a status map (the last entry of that type;
 * status.conditions made when missing): lastTransitionTime moves only
 * when the status flips; reason is set, message set to "" when NULL.
 * Returns true when anything changed.
 */
bool fq_cond_status_set(struct fq_value *status, const char *type,
                        const char *cstatus, const char *reason,
                        const char *message, int64_t now);

/* Would fq_cond_status_set change anything? (A writer that works on a
 * copy checks first, to copy only when something changes.) */
bool fq_cond_status_differs(const struct fq_value *status, const char *type,
                            const char *cstatus, const char *reason,
                            const char *message);

/* Is a ProvisioningRequest with this status in a terminal state (Failed,
 * BookingExpired or CapacityRevoked True)? Read by Kueue's check
 * controller and by the capacity controllers alike. */
bool fq_provreq_terminal(const struct fq_value *status);

#endif
