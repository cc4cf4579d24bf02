/*
 * objects_sched.c - the validator of scheduling.k8s.io/v1 PriorityClass,
 * the object a pod's spec.priorityClassName names. Kueue uses its value as
 * a Workload's priority when the job has no kueue.x-k8s.io/priority-class
 * label (jobframework.c); nothing else in flexq reads it.
 *
 * Rules, as the API server's: `value` (int32) required and at most one
 * billion for a user's class (larger values are the system classes');
 * `globalDefault` a boolean; `preemptionPolicy` Never or
 * PreemptLowerPriority; `description` a string.
 */
#include <string.h>

#include "objects/objects_internal.h"

struct pc_view {
    struct fq_meta meta;
    int64_t value;
    struct fq_objmem *mem;
};

int fq_priorityclass_validate(const struct fq_value *obj, const char *file,
                              struct fq_errlist *errs)
{
    static const char *const policies[] = {"PreemptLowerPriority", "Never",
                                           NULL};
    struct dctx c;
    struct pc_view out;
    memset(&out, 0, sizeof(out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_PRIORITYCLASS, &out.mem,
                   &out.meta) == 0) {
        if (!field(obj, "value"))
            derr_missing(&c, obj, "value");
        out.value =
            want_int(&c, obj, "value", 0, FQ_INT32_MIN, 1000000000, NULL);
        (void)want_bool(&c, obj, "globalDefault", false);
        (void)want_enum(&c, obj, "preemptionPolicy", policies, 0);
        (void)want_str(&c, obj, "description", false);
    }
    int rc = dctx_end(&c, &out, sizeof(out), &out.mem);
    objmem_free(&out.mem);
    return rc;
}
