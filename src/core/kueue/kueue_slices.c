/*
 * kueue_slices.c - elastic workload slices, the admission side (Kueue's
 * ElasticJobsViaWorkloadSlices, reference/kueue.md §2.11).
 *
 * A job with the annotation kueue.x-k8s.io/elastic-job: "true" that scales
 * a worker group up while it runs gets a second Workload, a "slice", with
 * the larger counts and the annotation
 * kueue.x-k8s.io/workload-slice-replacement-for: <old slice> (made by
 * jobframework.c). The scheduler (controller.c) treats the slice as any pending
 * workload, except that:
 *
 *   - each podset is forced onto the flavor the old slice holds; every
 *     other flavor is NoFit with Kueue's "could not assign X flavor since
 *     the original workload is assigned: Y" (admission.c, forced_flv);
 *   - only the delta (new count - old count) is charged, since the old
 *     slice's usage is still in the snapshot (admission.c, base_count);
 *   - there is no partial admission, and the old slice is never one of
 *     its preemption targets (controller.c);
 *   - once the slice reserves quota, the old slice is marked
 *     Finished=True, reason WorkloadSliceReplaced (this file). The next
 *     run recomputes usage from the stored workloads: the new slice holds
 *     the whole, the old one nothing.
 *
 *   old slice (admitted, holds N) ----------------------------> Finished
 *        ^                                            (WorkloadSliceReplaced)
 *        | replacement-for                                 ^
 *   new slice (pending, asks N+d) --reserve(), charged d---'
 *
 * Invariants
 *   1. At any time the quota of a job is held by one slice, or for the
 *      rest of one cycle by the old slice (N) plus the new one's delta (d).
 *   2. A slice whose old slice holds no quota (gone, Finished, evicted) is
 *      admitted as a whole, like any workload.
 *
 * What it does not do: create slices or scale down (jobframework.c), gate
 * or ungate pods, MultiKueue, TAS.
 */
#include "kueue/kueue_slices.h"

#include <stdio.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"

bool fq_kueue_slice_prepare(const struct fq_adm *a, const struct fq_value *old,
                            int npodsets, char *const *psname, int8_t *forced,
                            int32_t *base)
{
    if (!old || fq_cond_true(old, "Finished") || fq_cond_true(old, "Evicted") ||
        !fq_cond_true(old, "QuotaReserved"))
        return false;
    const struct fq_value *psa = fq_value_path(old, FQ_WL_PODSET_ASSIGNMENTS);
    if (!psa)
        return false;
    for (int p = 0; p < npodsets; p++) {
        forced[p] = -1;
        base[p] = 0;
        for (size_t i = 0; i < fq_value_len(psa); i++) {
            const struct fq_value *pa = fq_seq_at(psa, i);
            if (strcmp(fq_value_path_str(pa, "name", ""), psname[p]))
                continue;
            base[p] = (int32_t)fq_value_path_int(pa, "count", 0);
            const struct fq_value *fl = fq_map_get(pa, "flavors");
            for (size_t j = 0; fl && fl->type == FQ_V_MAP && j < fl->u.map.n;
                 j++) {
                const char *f = fq_value_as_str(fl->u.map.items[j].val);
                int fi = f ? fq_adm_find_flavor(a, f) : -1;
                if (fi >= 0) {
                    forced[p] = (int8_t)fi;
                    break;
                }
            }
        }
    }
    return true;
}

void fq_kueue_slice_replaced(struct fq_engine *e, const char *ns,
                             const char *old_name, const char *new_name,
                             int64_t now)
{
    struct fq_objstore *st = fq_engine_store(e);
    const struct fq_object *o =
        fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, old_name);
    if (!o || fq_cond_true(o->obj, "Finished"))
        return;
    struct fq_value *obj = fq_objstore_edit(st, FQ_KIND_WORKLOAD, ns, old_name);
    if (!obj)
        return;
    char msg[700];
    snprintf(msg, sizeof(msg),
             "Replaced to accommodate a workload slice %.300s/%.300s due to "
             "workload slice aggregation",
             ns, new_name);
    fq_cond_put(obj, "Finished", "True", FQ_SLICE_REASON_REPLACED, msg, now);
    if (fq_objstore_update(st, obj, true, NULL, NULL, NULL) != 0)
        return;
    o = fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, old_name);
    if (o)
        fq_engine_event(e, o->obj, "Normal", FQ_SLICE_REASON_REPLACED, "%s",
                        msg);
}
