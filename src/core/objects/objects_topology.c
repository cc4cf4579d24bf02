/*
 * objects_topology.c - the validator of Kueue's Topology
 * (kueue.x-k8s.io/v1beta1, also served as v1alpha1), the object a
 * ResourceFlavor's spec.topologyName names for topology-aware scheduling
 * (kueue/tas.c reads it).
 *
 * Rules, as Kueue's CRD and webhook: spec.levels is required, 1 to 16
 * entries, each {nodeLabel} a qualified label key, no key twice, and
 * kubernetes.io/hostname only as the last (lowest) level.
 */
#include <string.h>

#include "flexq/objects.h"
#include "objects/objects_internal.h"

#define TOPOLOGY_MAX_LEVELS 16

struct topo_view {
    struct fq_meta meta;
    struct fq_objmem *mem;
};

int fq_topology_validate(const struct fq_value *obj, const char *file,
                         struct fq_errlist *errs)
{
    struct dctx c;
    struct topo_view out;
    memset(&out, 0, sizeof(out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_TOPOLOGY, &out.mem,
                   &out.meta) == 0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        const struct fq_value *lv =
            want_seq(&c, spec, "levels", true, 1, TOPOLOGY_MAX_LEVELS);
        size_t n = fq_value_len(lv);
        size_t o2 = path_key(&c, "levels");
        for (size_t i = 0; lv && lv->type == FQ_V_SEQ && i < n; i++) {
            const struct fq_value *l = fq_seq_at(lv, i);
            size_t o3 = path_idx(&c, i);
            if (!l || l->type != FQ_V_MAP) {
                derr(&c, l, "must be a mapping with nodeLabel");
                path_pop(&c, o3);
                continue;
            }
            const char *key =
                want_name(&c, l, "nodeLabel", true, fq_check_qualified_name);
            if (key && !strcmp(key, "kubernetes.io/hostname") && i + 1 < n)
                derr_key(&c, field(l, "nodeLabel"), "nodeLabel",
                         "kubernetes.io/hostname may only be the last "
                         "(lowest) level");
            for (size_t j = 0; key && j < i; j++) {
                const char *prev =
                    fq_value_as_str(fq_map_get(fq_seq_at(lv, j), "nodeLabel"));
                if (prev && !strcmp(prev, key))
                    derr_key(&c, field(l, "nodeLabel"), "nodeLabel",
                             "duplicate level %s (also levels[%zu])", key, j);
            }
            path_pop(&c, o3);
        }
        path_pop(&c, o2);
        path_pop(&c, old);
    }
    int rc = dctx_end(&c, &out, sizeof(out), &out.mem);
    objmem_free(&out.mem);
    return rc;
}
