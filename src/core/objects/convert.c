/*
 * convert.c - Kueue's v1beta1 <-> v1beta2 conversion on read (see
 * include/flexq/convert.h for the fields).
 *
 * Both directions are lossless for what flexq reads: a v1beta1 object read
 * as v1beta2 and written back as v1beta1 gives the same spec. What has no
 * counterpart is kept as written (Kueue's webhook keeps it in an
 * annotation; flexq keeps the field, which the decoders of both versions
 * accept).
 *
 * What it does not do: other groups, status fields other than apiVersion.
 */
#include "flexq/convert.h"

#include <string.h>

#define KUEUE_GROUP "kueue.x-k8s.io"
#define SRC_WPC     "kueue.x-k8s.io/workloadpriorityclass"
#define SRC_PC      "scheduling.k8s.io/priorityclass"

static void rename_key(struct fq_value *m, const char *from, const char *to)
{
    struct fq_value *v = fq_map_get(m, from);
    if (!v || fq_map_get(m, to))
        return;
    fq_map_set(m, to, fq_value_clone(v));
    fq_map_del(m, from);
}

static void swap_value(struct fq_value *m, const char *key, const char *from,
                       const char *to)
{
    const char *v = fq_value_as_str(fq_map_get(m, key));
    if (v && !strcmp(v, from))
        fq_map_set(m, key, fq_value_str(to));
}

static void cq_to(struct fq_value *spec, bool v2)
{
    struct fq_value *ff = fq_map_get(spec, "flavorFungibility");
    if (v2) {
        rename_key(spec, "cohort", "cohortName");
        const struct fq_value *acs = fq_map_get(spec, "admissionChecks");
        if (acs && acs->type == FQ_V_SEQ &&
            !fq_map_get(spec, "admissionChecksStrategy")) {
            struct fq_value *list = fq_value_seq();
            for (size_t i = 0; i < fq_value_len(acs); i++) {
                const char *n = fq_value_as_str(fq_seq_at(acs, i));
                if (!n)
                    continue;
                struct fq_value *e = fq_value_map();
                fq_map_set(e, "name", fq_value_str(n));
                fq_seq_push(list, e);
            }
            struct fq_value *st = fq_value_map();
            fq_map_set(st, "admissionChecks", list);
            fq_map_set(spec, "admissionChecksStrategy", st);
            fq_map_del(spec, "admissionChecks");
        }
        swap_value(ff, "whenCanBorrow", "Borrow", "MayStopSearch");
        swap_value(ff, "whenCanPreempt", "Preempt", "MayStopSearch");
    } else {
        rename_key(spec, "cohortName", "cohort");
        swap_value(ff, "whenCanBorrow", "MayStopSearch", "Borrow");
        swap_value(ff, "whenCanPreempt", "MayStopSearch", "Preempt");
    }
}

static void wl_to(struct fq_value *spec, bool v2)
{
    if (v2) {
        const char *pcn =
            fq_value_as_str(fq_map_get(spec, "priorityClassName"));
        if (!pcn || fq_map_get(spec, "priorityClassRef"))
            return;
        const char *src =
            fq_value_as_str(fq_map_get(spec, "priorityClassSource"));
        bool pc = src && !strcmp(src, SRC_PC);
        struct fq_value *ref = fq_value_map();
        fq_map_set(ref, "group",
                   fq_value_str(pc ? "scheduling.k8s.io" : KUEUE_GROUP));
        fq_map_set(
            ref, "kind",
            fq_value_str(pc ? "PriorityClass" : "WorkloadPriorityClass"));
        fq_map_set(ref, "name", fq_value_str(pcn));
        fq_map_set(spec, "priorityClassRef", ref);
        fq_map_del(spec, "priorityClassName");
        fq_map_del(spec, "priorityClassSource");
    } else {
        const struct fq_value *ref = fq_map_get(spec, "priorityClassRef");
        const char *n = fq_value_path_str(ref, "name", NULL);
        if (!n || fq_map_get(spec, "priorityClassName"))
            return;
        bool pc = !strcmp(fq_value_path_str(ref, "kind", ""), "PriorityClass");
        fq_map_set(spec, "priorityClassName", fq_value_str(n));
        fq_map_set(spec, "priorityClassSource",
                   fq_value_str(pc ? SRC_PC : SRC_WPC));
        fq_map_del(spec, "priorityClassRef");
    }
}

struct fq_value *fq_convert_kueue(const struct fq_value *obj, const char *group,
                                  const char *version)
{
    if (!obj || !group || !version || strcmp(group, KUEUE_GROUP))
        return NULL;
    bool v2 = !strcmp(version, "v1beta2");
    if (!v2 && strcmp(version, "v1beta1"))
        return NULL;
    const char *av = fq_value_path_str(obj, "apiVersion", "");
    size_t gl = strlen(KUEUE_GROUP);
    if (strncmp(av, KUEUE_GROUP "/", gl + 1) || !strcmp(av + gl + 1, version))
        return NULL;
    struct fq_value *c = fq_value_clone(obj);
    fq_map_set(c, "apiVersion", fq_value_strf("%s/%s", KUEUE_GROUP, version));
    const char *kind = fq_value_path_str(obj, "kind", "");
    struct fq_value *spec = fq_map_get(c, "spec");
    if (spec && spec->type == FQ_V_MAP) {
        if (!strcmp(kind, "ClusterQueue"))
            cq_to(spec, v2);
        else if (!strcmp(kind, "Workload"))
            wl_to(spec, v2);
        else if (!strcmp(kind, "AdmissionCheck") && v2)
            fq_map_del(spec, "retryDelayMinutes");
    }
    return c;
}
