/*
 * runtime.c - the run time a job's user stated (runtime.h): the
 * expected-runtime annotation, else activeDeadlineSeconds, on a Workload
 * or on the object that owns it.
 *
 * How: two member reads per object; the owner is looked up by its
 * ownerReference's apiVersion, kind and name in the Workload's
 * namespace. Pure reads of borrowed trees; no allocation.
 * Not done: owners beyond the first reference, or the owner's owner (a
 * JobSet's Job): the Workload's direct owner is where users annotate.
 */
#include "flexq/runtime.h"

#include "flexq/kinds.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

int64_t fq_runtime_deadline(const struct fq_value *obj)
{
    /* Up to the longest duration a run time may state: a Job's deadline
     * may be any int64, and its milliseconds would overflow. */
    int64_t s = fq_value_path_int(obj, "spec.activeDeadlineSeconds", -1);
    return s > 0 && s <= FQ_DURATION_MAX_MS / 1000 ? s * 1000 : -1;
}

int64_t fq_runtime_stated(const struct fq_value *obj,
                          enum fq_runtime_source *src)
{
    int64_t ms = 0;
    const char *a = fq_value_as_str(
        fq_map_get(fq_meta_annotations(obj), FQ_ANN_EXPECTED_RUNTIME));
    if (a && fq_duration_parse(a, &ms) == 0 && ms > 0) {
        if (src)
            *src = FQ_RUNTIME_ANNOTATION;
        return ms;
    }
    ms = fq_runtime_deadline(obj);
    if (ms > 0) {
        if (src)
            *src = FQ_RUNTIME_DEADLINE;
        return ms;
    }
    if (src)
        *src = FQ_RUNTIME_NONE;
    return -1;
}

int64_t fq_runtime_stated_wl(const struct fq_objstore *s,
                             const struct fq_value *wl,
                             enum fq_runtime_source *src)
{
    int64_t ms = fq_runtime_stated(wl, src);
    if (ms > 0)
        return ms;
    const struct fq_value *own = fq_objstore_owner(s, wl);
    return own ? fq_runtime_stated(own, src) : -1;
}
