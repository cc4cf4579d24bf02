/*
 * kueue_slices.h - elastic workload slices (Kueue's
 * ElasticJobsViaWorkloadSlices), the admission side: what the scheduler
 * needs to admit a slice for its delta on the old slice's flavors, and the
 * transition that retires the old slice. See kueue_slices.c.
 */
#ifndef FLEXQ_KUEUE_SLICES_H
#define FLEXQ_KUEUE_SLICES_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/engine.h"
#include "flexq/names.h"
#include "kueue/admission.h"

/*
 * Is `old` (a stored Workload, borrowed; may be NULL) an old slice that
 * still holds quota? When it is, fills forced[p] with the flavor index the
 * old slice has for podset psname[p] (-1 when the old slice has no such
 * podset) and base[p] with the count it holds, for the npodsets podsets of
 * the new slice, and returns true. Returns false (arrays untouched) when
 * the old slice is gone, Finished or holds no quota: the new slice is then
 * admitted as a whole.
 */
bool fq_kueue_slice_prepare(const struct fq_adm *a, const struct fq_value *old,
                            int npodsets, char *const *psname, int8_t *forced,
                            int32_t *base);

/*
 * The new slice `new_name` got its quota: marks the old slice `old_name`
 * (namespace ns) Finished=True, reason WorkloadSliceReplaced, with an
 * event on it. Nothing when it is gone or already Finished. Its quota is
 * released by the next run (controller.c invariant 1), while the new slice's
 * delta charge covers the cycle in between.
 */
void fq_kueue_slice_replaced(struct fq_engine *e, const char *ns,
                             const char *old_name, const char *new_name,
                             int64_t now);

#endif
