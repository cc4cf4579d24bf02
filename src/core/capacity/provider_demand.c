/*
 * provider_demand.c - scale decisions written as requests for an outside
 * provider, and the provider's answers read back (capacity/provider_protocol.h has
 * the request format).
 *
 * Life of one request in NodePool status.providerRequests:
 *
 *             autoscaler decides           provider carries it out
 *   (none) ----------------------> Pending ----------------------> Done
 *                                     |                              |
 *                                     | provider fails               | next run:
 *                                     v                              v backoff reset
 *                                   Failed --- next run: backoff,  (dropped)
 *                                              ScaleUp=False, event; dropped
 *
 * How it works: the autoscaler's scale_up and scale_down call create /
 * delete here instead of the cloud model; reconcile runs first in each
 * autoscaler run. Pending creates count as coming nodes, so a scale-up is
 * asked once and not again on every run while the provider works.
 *
 * Invariants:
 *  1. Creates are whole slices and pending + existing nodes never pass
 *     maxNodeCount.
 *  2. At most one delete request per slice.
 *  3. Only this file and the provider write providerRequests; the core
 *     never creates or deletes Nodes for a provider_demand engine.
 *
 * Queued pools: provreq.c keeps the ProvisioningRequest lifecycle and its
 * grant calls fq_provider_demand_provision, which asks once for all the
 * request's slices (op "provision", templates annotated with the request);
 * the grant is done when the request's Nodes exist. A Failed provision
 * makes the ProvisioningRequest Failed=True (ProvisioningFailed).
 *
 * What it does not do: best-effort-atomic requests (provreq.c says they
 * need the sim), I/O of any kind (the daemon does it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity/common.h"
#include "capacity/nodes.h"
#include "capacity/provider_demand.h"
#include "capacity/provider_protocol.h"
#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/nodepool.h"
#include "flexq/objstore.h"
#include "flexq/timefmt.h"

bool fq_provider_demand_on(const struct fq_engine *e)
{
    const struct fq_engine_config *c = fq_engine_config(e);
    return c->provider_demand && !c->sim_provider;
}

/* The stored pool's requests (borrowed; NULL when none). */
static const struct fq_value *stored_requests(struct fq_engine *e,
                                              const char *pool)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", pool);
    return o ? fq_value_path(o->obj, "status." FQ_PROVREQS_KEY) : NULL;
}

/* A string of the stored pool's status ("" when none). */
static const char *stored_status_str(struct fq_engine *e, const char *pool,
                                     const char *key)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", pool);
    const char *v = fq_value_as_str(
        fq_map_get(o ? fq_map_get(o->obj, "status") : NULL, key));
    return v ? v : "";
}

static int64_t pending_hosts(const struct fq_value *reqs, int *deletes)
{
    int64_t n = 0;
    for (size_t i = 0; i < fq_value_len(reqs); i++) {
        const struct fq_value *r = fq_seq_at(reqs, i);
        if (strcmp(fq_value_path_str(r, "state", ""), "Pending"))
            continue;
        if (!strcmp(fq_value_path_str(r, "op", ""), "create-nodes"))
            n += fq_value_path_int(r, "count", 0);
        else if (deletes)
            *deletes += (int)fq_value_len(fq_map_get(r, "names"));
    }
    return n;
}

static void write_requests(struct fq_capacity *st, struct fq_engine *e,
                           struct fq_cap_pool *p, struct fq_value *reqs)
{
    int dels = 0;
    int64_t desired = p->nodes + pending_hosts(reqs, &dels) - dels;
    fq_objstore_set_status_key(fq_engine_store(e), FQ_KIND_NODEPOOL, "",
                               p->name, "desiredNodes", fq_value_int(desired),
                               NULL, NULL);
    fq_objstore_set_status_key(fq_engine_store(e), FQ_KIND_NODEPOOL, "",
                               p->name, FQ_PROVREQS_KEY, reqs, NULL, NULL);
    (void)st;
}

static void restart_unneeded(struct fq_capacity *st, struct fq_engine *e,
                             const struct fq_value *names)
{
    char ts[40];
    fq_time_format_ms(st->now, ts, sizeof(ts));
    for (size_t i = 0; i < fq_value_len(names); i++) {
        const char *n = fq_value_as_str(fq_seq_at(names, i));
        struct fq_value *o =
            n ? fq_objstore_edit(fq_engine_store(e), FQ_KIND_NODE, "", n) :
                NULL;
        if (!o)
            continue;
        struct fq_cap_node *nd = fq_capacity_node(st, n);
        if (nd) /* this run's view too */
            fq_capacity_node_unneeded(st, nd, st->now, true);
        fq_map_set(
            fq_map_ensure_map(fq_map_ensure_map(o, "metadata"), "annotations"),
            FQ_ANN_UNNEEDED, fq_value_str(ts));
        fq_objstore_update(fq_engine_store(e), o, true, NULL, NULL, NULL);
    }
}

/* The provider could not provision: the ProvisioningRequest fails (Kueue's
 * check retries per its strategy). */
static void provision_failed(struct fq_capacity *st, struct fq_engine *e,
                             const char *key, const char *msg)
{
    char ns[256], name[256];
    const char *slash = strchr(key, '/');
    if (!slash)
        return;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
    snprintf(name, sizeof(name), "%s", slash + 1);
    struct fq_value *o = fq_objstore_edit(
        fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST, ns, name);
    if (!o)
        return;
    struct fq_value *status = fq_map_ensure_map(o, "status");
    fq_cond_status_set(status, "Failed", "True", "ProvisioningFailed", msg,
                       st->now);
    fq_cond_status_set(status, "Provisioned", "False", "ProvisioningFailed",
                       msg, st->now);
    fq_engine_event(e, o, "Warning", "FailedToProvision", "%s", msg);
    fq_objstore_update(fq_engine_store(e), o, true, NULL, NULL, NULL);
    fq_capacity_provreq_written(st, key); /* this run's scale-down */
}

static void answered(struct fq_capacity *st, struct fq_engine *e,
                     struct fq_cap_pool *p, const struct fq_value *r)
{
    const char *state = fq_value_path_str(r, "state", "");
    const char *op = fq_value_path_str(r, "op", "");
    bool create = !strcmp(op, "create-nodes");
    const struct fq_object *po =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", p->name);
    struct fq_cap_backoff *b = fq_capacity_backoff(st, p->name);
    if (!strcmp(state, "Done")) {
        if (create) {
            b->fails = 0;
            b->until = -1;
        }
        return;
    }
    const char *msg = fq_value_path_str(r, "message", "provider failed");
    if (!strcmp(op, "provision")) {
        provision_failed(st, e, fq_value_path_str(r, "provisioningRequest", ""),
                         msg);
        return;
    }
    if (!create) {
        if (po)
            fq_engine_event(e, po->obj, "Warning", "ScaleDownFailed",
                            "Scale-down of slice %s failed: %s",
                            fq_value_path_str(r, "slice", "?"), msg);
        restart_unneeded(st, e, fq_map_get(r, "names"));
        return;
    }
    b->fails++;
    b->last_fail = st->now;
    b->until = st->now + fq_cloud_backoff_ms(st->cloud, b->fails);
    p->failed_scale_up = true;
    snprintf(p->fail_reason, sizeof(p->fail_reason), "%s", msg);
    /* kept for the later runs of the backoff (the snapshot forgets it) */
    fq_objstore_set_status_key(fq_engine_store(e), FQ_KIND_NODEPOOL, "",
                               p->name, FQ_LAST_FAILURE_KEY, fq_value_str(msg),
                               NULL, NULL);
    if (po)
        fq_engine_event(e, po->obj, "Warning", "FailedToScaleUpGroup",
                        "Scale-up failed for group %s: %s", p->name, msg);
    st->scale_up_failures++;
    fq_capacity_wake(st, b->until);
}

void fq_provider_demand_reconcile(struct fq_capacity *st, struct fq_engine *e)
{
    for (size_t i = 0; i < st->npools; i++) {
        struct fq_cap_pool *p = &st->pools[i];
        if (fq_capacity_backoff(st, p->name)->until > st->now &&
            !p->fail_reason[0])
            snprintf(p->fail_reason, sizeof(p->fail_reason), "%s",
                     stored_status_str(e, p->name, FQ_LAST_FAILURE_KEY));
        const struct fq_value *reqs = stored_requests(e, p->name);
        bool any = false;
        for (size_t k = 0; k < fq_value_len(reqs) && !any; k++)
            any = strcmp(fq_value_path_str(fq_seq_at(reqs, k), "state", ""),
                         "Pending") != 0;
        if (!any)
            continue;
        struct fq_value *keep = fq_value_seq();
        struct fq_value *copy = fq_value_clone(reqs);
        for (size_t k = 0; k < fq_value_len(copy); k++) {
            const struct fq_value *r = fq_seq_at(copy, k);
            if (!strcmp(fq_value_path_str(r, "state", ""), "Pending"))
                fq_seq_push(keep, fq_value_clone(r));
            else
                answered(st, e, p, r);
        }
        fq_value_free(copy);
        write_requests(st, e, p, keep);
    }
}

/* One request for `hosts` nodes of pool p (whole slices of it), with the
 * Node templates; provision requests carry the ProvisioningRequest key. */
static struct fq_value *new_request(struct fq_capacity *st, struct fq_engine *e,
                                    struct fq_cap_pool *p, const char *op,
                                    int64_t hosts, const char *provreq)
{
    int64_t h = p->spec.slice_hosts > 0 ? p->spec.slice_hosts : 1;
    struct fq_value *r = fq_value_map();
    struct fq_value *tmpl = fq_value_seq();
    char first[300] = "";
    for (int64_t n = 0; n < hosts; n += h) {
        char sfx[8], id[300];
        fq_engine_rand_suffix_in(e, FQ_RAND_CLOUD, sfx, 5);
        snprintf(id, sizeof(id), "%.200s-%s", p->name, sfx);
        if (!first[0])
            snprintf(first, sizeof(first), "%s", id);
        /* The Nodes the sim would make: the provider names them as its
         * cloud does and keeps the rest (labels, taints, allocatable). */
        for (int64_t i = 0; i < h; i++) {
            char name[320];
            if (h > 1)
                snprintf(name, sizeof(name), "gke-%s-%lld", id, (long long)i);
            else
                snprintf(name, sizeof(name), "gke-%s", id);
            struct fq_value *node = fq_nodepool_make_node(
                &p->spec, name, id, (int)i, true, st->now);
            if (provreq)
                fq_map_set(
                    fq_map_ensure_map(fq_map_ensure_map(node, "metadata"),
                                      "annotations"),
                    FQ_ANN_NODE_PROVREQ, fq_value_str(provreq));
            fq_seq_push(tmpl, node);
        }
    }
    fq_map_set(r, "id", fq_value_str(first));
    fq_map_set(r, "op", fq_value_str(op));
    if (provreq)
        fq_map_set(r, "provisioningRequest", fq_value_str(provreq));
    else
        fq_map_set(r, "slice", fq_value_str(first));
    fq_map_set(r, "count", fq_value_int(hosts));
    fq_map_set(r, "machineType", fq_value_str(p->spec.machine_type));
    if (p->spec.topology)
        fq_map_set(r, "topology", fq_value_str(p->spec.topology));
    if (p->spec.location)
        fq_map_set(r, "location", fq_value_str(p->spec.location));
    fq_map_set(r, "labels", fq_nodepool_node_labels(&p->spec));
    fq_map_set(r, "taints", fq_nodepool_node_taints(&p->spec));
    fq_map_set(r, "nodes", tmpl);
    fq_map_set(r, "state", fq_value_str("Pending"));
    return r;
}

void fq_provider_demand_create(struct fq_capacity *st, struct fq_engine *e,
                               struct fq_cap_pool *p, int64_t need,
                               const struct fq_value *about)
{
    if (!p->ok)
        return;
    int64_t h = p->spec.slice_hosts > 0 ? p->spec.slice_hosts : 1;
    const struct fq_value *cur = stored_requests(e, p->name);
    int64_t pending = pending_hosts(cur, NULL);
    need -= pending;
    if (need <= 0)
        return;
    need = (need + h - 1) / h * h;
    int64_t room = (p->spec.max_nodes - p->nodes - pending) / h * h;
    if (need > room)
        need = room;
    if (need <= 0)
        return;
    struct fq_value *reqs = cur ? fq_value_clone(cur) : fq_value_seq();
    for (int64_t n = 0; n < need; n += h)
        fq_seq_push(reqs, new_request(st, e, p, "create-nodes", h, NULL));
    write_requests(st, e, p, reqs);
    st->scale_ups++;
    int64_t before = p->nodes + pending;
    const struct fq_object *po =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", p->name);
    if (po)
        fq_engine_event(e, po->obj, "Normal", "ScaledUpGroup",
                        "Scale-up: setting group %s size to %lld instead of "
                        "%lld (max: %lld)",
                        p->name, (long long)(before + need), (long long)before,
                        (long long)p->spec.max_nodes);
    if (about)
        fq_engine_event(e, about, "Normal", "TriggeredScaleUp",
                        "pod triggered scale-up: [{%s %lld->%lld (max: %lld)}]",
                        p->name, (long long)before, (long long)(before + need),
                        (long long)p->spec.max_nodes);
}

void fq_provider_demand_delete(struct fq_capacity *st, struct fq_engine *e,
                               const char *slice, const char *why)
{
    struct fq_cap_pool *p = NULL;
    struct fq_value *names = fq_value_seq();
    struct fq_cap_node **v;
    size_t n = fq_capacity_slice_nodes(st, slice, &v);
    for (size_t i = 0; i < n; i++) {
        p = fq_capacity_pool(st, v[i]->pool);
        fq_seq_push(names, fq_value_str(v[i]->name));
    }
    free(v);
    const struct fq_value *cur = p ? stored_requests(e, p->name) : NULL;
    for (size_t i = 0; p && i < fq_value_len(cur); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(cur, i), "slice", ""), slice) &&
            !strcmp(fq_value_path_str(fq_seq_at(cur, i), "op", ""),
                    "delete-nodes"))
            p = NULL;
    if (!p || fq_value_len(names) == 0) {
        fq_value_free(names);
        return;
    }
    struct fq_value *reqs = cur ? fq_value_clone(cur) : fq_value_seq();
    char id[320];
    snprintf(id, sizeof(id), "%.200s-delete", slice);
    struct fq_value *r = fq_value_map();
    fq_map_set(r, "id", fq_value_str(id));
    fq_map_set(r, "op", fq_value_str("delete-nodes"));
    fq_map_set(r, "slice", fq_value_str(slice));
    fq_map_set(r, "names", names);
    fq_map_set(r, "state", fq_value_str("Pending"));
    fq_seq_push(reqs, r);
    const struct fq_object *po =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_NODEPOOL, "", p->name);
    if (po && why)
        fq_engine_event(e, po->obj, "Normal", "ScaleDown", "%s", why);
    write_requests(st, e, p, reqs);
}

bool fq_provider_demand_provision(struct fq_capacity *st, struct fq_engine *e,
                                  struct fq_cap_pool *p, int64_t need,
                                  const char *key,
                                  const struct fq_value *provreq)
{
    if (fq_capacity_provreq_has_nodes(st, key))
        return true;
    const struct fq_value *cur = stored_requests(e, p->name);
    for (size_t i = 0; i < fq_value_len(cur); i++)
        if (!strcmp(
                fq_value_path_str(fq_seq_at(cur, i), "provisioningRequest", ""),
                key))
            return false; /* asked already */
    if (!p->ok || need <= 0)
        return false;
    struct fq_value *reqs = cur ? fq_value_clone(cur) : fq_value_seq();
    fq_seq_push(reqs, new_request(st, e, p, "provision", need, key));
    write_requests(st, e, p, reqs);
    if (provreq)
        fq_engine_event(e, provreq, "Normal", "TriggeredScaleUp",
                        "provision of %lld node(s) of %s requested from the "
                        "provider",
                        (long long)need, p->name);
    return false;
}
