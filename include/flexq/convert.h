/*
 * convert.h - conversion between the served versions of Kueue's kinds
 * (kueue.x-k8s.io/v1beta1 and v1beta2), as Kueue's conversion webhook
 * does: an object written in one version is read in the other with the
 * other's field names. flexq stores objects as written and converts on
 * read.
 */
#ifndef FLEXQ_CONVERT_H
#define FLEXQ_CONVERT_H

#include "flexq/value.h"

/*
 * `obj` (borrowed) as apiVersion `group/version`: an owned converted copy,
 * or NULL when obj is already in that version or its kind has nothing to
 * convert (the caller then sends obj as is). Fields converted:
 *   ClusterQueue  spec.cohort <-> spec.cohortName; v1beta1
 *                 spec.admissionChecks [names] -> v1beta2
 *                 admissionChecksStrategy.admissionChecks [{name}];
 *                 flavorFungibility Borrow / Preempt <-> MayStopSearch
 *   Workload      spec.priorityClassName + priorityClassSource <->
 *                 spec.priorityClassRef {group, kind, name}
 *   AdmissionCheck retryDelayMinutes dropped in v1beta2
 * and apiVersion itself.
 */
struct fq_value *fq_convert_kueue(const struct fq_value *obj, const char *group,
                                  const char *version);

#endif
