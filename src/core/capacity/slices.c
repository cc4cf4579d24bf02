/*
 * slices.c - making and deleting whole slices (capacity/slices.h): a
 * slice's Nodes are created in one call and deleted in one call
 * (capacity.c's invariant 1); with an outside provider a deletion is
 * handed to it.
 *
 * What it does not do: decide when (autoscaler.c, provreq.c).
 */
#include "capacity/slices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity/common.h"
#include "capacity/cost.h"
#include "capacity/nodes.h"
#include "capacity/provider_demand.h"
#include "capacity/watch.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

const char *fq_capacity_add_slice(struct fq_capacity *st, struct fq_engine *e,
                                  struct fq_cap_pool *pool, const char *provreq)
{
    if (!pool->ok)
        return NULL;
    fq_cost_pool_flush(st, e, pool);
    char sfx[8];
    fq_engine_rand_suffix_in(e, FQ_RAND_CLOUD, sfx, 5);
    /* The names are joined without a printf: a slice is made per
     * granted request. "%.200s-%s": */
    char slice[300];
    size_t pl = strnlen(pool->name, 200);
    memcpy(slice, pool->name, pl);
    slice[pl] = '-';
    fq_text_put(slice, sizeof(slice), pl + 1, sfx);
    int64_t boot = fq_cloud_boot_ms(st->cloud, pool->spec.machine->name,
                                    pool->spec.location);
    /* A fresh cluster's default pool comes with its (one) node Ready;
     * later nodes of that pool boot as any other. */
    if (st->default_pool_fresh && !strcmp(pool->name, FQ_NODEPOOL_DEFAULT)) {
        boot = 0;
        st->default_pool_fresh = false;
    }
    int64_t ready_at = st->now + boot;
    char ts[40];
    fq_time_format_ms(ready_at, ts, sizeof(ts));
    const char *id = NULL;
    /* Its place in the pool's racks: hosts fill racks of
     * FQ_TOPO_RACK_HOSTS (a larger slice has a rack of its own), racks
     * blocks of FQ_TOPO_BLOCK_RACKS, in the order the pool grows; all
     * hosts of a slice share a rack. */
    int64_t rack_hosts = pool->spec.slice_hosts > FQ_TOPO_RACK_HOSTS ?
                             pool->spec.slice_hosts :
                             FQ_TOPO_RACK_HOSTS;
    int64_t rack = pool->nodes / rack_hosts;
    char block_v[240], rack_v[280];
    snprintf(block_v, sizeof(block_v), "%.200s-b%lld", pool->name,
             (long long)(rack / FQ_TOPO_BLOCK_RACKS));
    snprintf(rack_v, sizeof(rack_v), "%s-r%lld", block_v, (long long)rack);
    for (int i = 0; i < pool->spec.slice_hosts; i++) {
        char name[320];
        if (pool->spec.slice_hosts > 1)
            snprintf(name, sizeof(name), "gke-%s-%d", slice, i);
        else
            fq_text_put(name, sizeof(name),
                        fq_text_put(name, sizeof(name), 0, "gke-"), slice);
        bool ready = boot <= 0;
        if (!pool->node_proto) {
            pool->node_proto = fq_nodepool_node_proto(&pool->spec);
            memset(pool->node_alloc, 0, sizeof(pool->node_alloc));
            fq_capacity_add_resources(
                fq_value_path(pool->node_proto, FQ_NODE_ALLOCATABLE),
                pool->node_alloc);
        }
        struct fq_value *node = fq_nodepool_node_from(
            pool->node_proto, &pool->spec, name, slice, i, ready, st->now);
        struct fq_value *nl =
            fq_map_ensure_map(fq_map_ensure_map(node, "metadata"), "labels");
        fq_map_set(nl, FQ_LABEL_TOPO_BLOCK, fq_value_str(block_v));
        fq_map_set(nl, FQ_LABEL_TOPO_SUBBLOCK, fq_value_str(rack_v));
        fq_map_set(nl, FQ_LABEL_TOPO_HOST, fq_value_str(name));
        struct fq_value *ann = fq_map_ensure_map(
            fq_map_ensure_map(node, "metadata"), "annotations");
        if (!ready)
            fq_map_set(ann, FQ_ANN_READY_AT, fq_value_str(ts));
        if (provreq)
            fq_map_set(ann, FQ_ANN_NODE_PROVREQ, fq_value_str(provreq));
        char uid[40]; /* "%016llx-node" */
        fq_hex_put(uid, fq_engine_rand_in(e, FQ_RAND_CLOUD), 16);
        fq_text_put(uid, sizeof(uid), 16, "-node");
        const struct fq_object *made = NULL;
        if (fq_objstore_create(fq_engine_store(e), node, st->now, uid, &made,
                               NULL) < 0)
            continue;
        struct fq_cap_node *nd = fq_capacity_node_made(
            st, made, pool, slice, provreq, ready, ready_at);
        nd->born = ++st->nborn;
        nd->p = fq_capacity_pool(st, nd->pool);
        fq_smap_put(&st->node_by_name, nd->name, nd);
        fq_capacity_nodes_add(&st->created, nd);
        fq_capacity_node_attach(st, nd);
        id = nd->slice;
    }
    if (boot > 0)
        fq_capacity_wake(st, ready_at);
    st->slices_created++;
    return id;
}

void fq_capacity_delete_slice(struct fq_capacity *st, struct fq_engine *e,
                              const char *slice, const char *why)
{
    if (fq_provider_demand_on(e)) { /* the provider deletes, then reports */
        fq_provider_demand_delete(st, e, slice, why);
        return;
    }
    struct fq_cap_node **v;
    size_t n = fq_capacity_slice_nodes(st, slice, &v);
    for (size_t i = 0; i < n; i++) {
        struct fq_cap_node *nd = v[i];
        if (nd->gone)
            continue;
        if (nd->p)
            fq_cost_pool_flush(st, e, nd->p);
        /* What ran here must be placed again. */
        for (size_t k = 0; k < nd->npl; k++)
            fq_capacity_unsettle(st, nd->pl[k].wl);
        const struct fq_object *o =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_NODE, "", nd->name);
        if (o && why)
            fq_engine_event(e, o->obj, "Normal", "ScaleDown", "%s", why);
        fq_objstore_delete(fq_engine_store(e), FQ_KIND_NODE, "", nd->name,
                           NULL);
        fq_capacity_node_gone(st, nd);
    }
    free(v);
}
