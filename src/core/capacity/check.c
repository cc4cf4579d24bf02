/*
 * check.c - fq_capacity_check: the capacity invariants C1-C4
 * (flexq/check.h), from the stored Nodes and Pods and the capacity
 * controller's node table.
 *
 * C1 and C2 read only stored objects. C3 reads the table's per-node
 * allocatable and usage (what first fit places by) and, when the engine
 * makes pods, recomputes each node's usage from its bound pods, so a
 * table that drifted from the pods is a finding too. C4 holds the table
 * against the stored Nodes both ways.
 *
 * Cost: a pass over Nodes and Pods and a sort-free lookup per pod, for
 * the scenario runner and `flexq sim --check-invariants`; it changes
 * nothing. It does not judge scaling decisions (the scenarios do).
 */
#include "flexq/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity/nodes.h"
#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"

static const char *const res_names[FQ_R_N] = {[FQ_R_CPU] = "cpu",
                                              [FQ_R_MEM] = "memory",
                                              [FQ_R_TPU] = "google.com/tpu",
                                              [FQ_R_GPU] = "nvidia.com/gpu",
                                              [FQ_R_PODS] = "pods"};

static void finding(struct fq_errlist *out, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void finding(struct fq_errlist *out, size_t *n, const char *fmt, ...)
{
    struct fq_err e;
    memset(&e, 0, sizeof(e));
    e.code = FQ_EINVAL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
    va_end(ap);
    if (out)
        fq_errlist_push(out, &e);
    (*n)++;
}

static bool pod_finished(const struct fq_value *pod)
{
    const char *phase = fq_value_path_str(pod, FQ_POD_PHASE, "");
    return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

static const char *label(const struct fq_value *obj, const char *key)
{
    return fq_value_as_str(fq_map_get(fq_meta_labels(obj), key));
}

size_t fq_capacity_check(struct fq_engine *e, struct fq_errlist *out)
{
    struct fq_objstore *s = fq_engine_store(e);
    struct fq_capacity *st = fq_engine_controller(e, "capacity");
    size_t n = 0;
    const struct fq_object **nodes = NULL, **pods = NULL;
    size_t nn = fq_objstore_list(s, FQ_KIND_NODE, NULL, &nodes);
    size_t np = fq_objstore_list(s, FQ_KIND_POD, NULL, &pods);

    /* C1, and the pods' usage per node for C3. */
    int64_t(*use)[FQ_R_N] = fq_xcalloc(nn + 1, sizeof(*use));
    for (size_t i = 0; i < np; i++) {
        const struct fq_value *pod = pods[i]->obj;
        const char *node = fq_value_path_str(pod, FQ_POD_NODE_NAME, NULL);
        if (!node || !*node || pod_finished(pod))
            continue;
        const struct fq_object *no = fq_objstore_get(s, FQ_KIND_NODE, "", node);
        if (!no) {
            finding(out, &n,
                    "C1: pod %s/%s is bound to node \"%s\", which does not "
                    "exist",
                    pods[i]->ns, pods[i]->name, node);
            continue;
        }
        size_t k = 0;
        while (k < nn && nodes[k] != no)
            k++;
        if (k == nn)
            continue;
        int64_t req[FQ_R_N];
        fq_capacity_pod_requests(pod, req);
        for (int r = 0; r < FQ_R_N; r++)
            use[k][r] += r == FQ_R_PODS ? 1 : req[r];
    }

    /* C2: one pool per slice (nodes are listed sorted, so a slice's nodes
     * are compared with the first of the same slice seen). */
    for (size_t i = 0; i < nn; i++) {
        const char *slice = label(nodes[i]->obj, FQ_LABEL_SLICE);
        const char *pool = label(nodes[i]->obj, FQ_LABEL_NODEPOOL);
        if (!slice)
            continue;
        for (size_t j = 0; j < i; j++) {
            const char *s2 = label(nodes[j]->obj, FQ_LABEL_SLICE);
            if (!s2 || strcmp(s2, slice))
                continue;
            const char *p2 = label(nodes[j]->obj, FQ_LABEL_NODEPOOL);
            if (strcmp(pool ? pool : "", p2 ? p2 : ""))
                finding(out, &n,
                        "C2: slice \"%s\" has node \"%s\" of pool \"%s\" "
                        "and node \"%s\" of pool \"%s\"",
                        slice, nodes[j]->name, p2 ? p2 : "", nodes[i]->name,
                        pool ? pool : "");
            break;
        }
    }

    /* C3 and C4 against the controller's table. */
    if (st) {
        struct fq_cap_node **tab = NULL;
        size_t nt = fq_capacity_all_nodes(st, &tab);
        bool *seen = fq_xcalloc(nn + 1, sizeof(*seen));
        bool pods_mode = !fq_engine_config(e)->no_pods;
        for (size_t t = 0; t < nt; t++) {
            const struct fq_cap_node *cn = tab[t];
            size_t k = 0;
            while (k < nn && strcmp(nodes[k]->name, cn->name))
                k++;
            if (k == nn) {
                finding(out, &n,
                        "C4: the node table holds \"%s\", which is not "
                        "stored",
                        cn->name);
                continue;
            }
            seen[k] = true;
            for (int r = 0; r < FQ_R_N; r++) {
                if (cn->used[r] > cn->alloc[r])
                    finding(out, &n,
                            "C3: node \"%s\" has %lld of %s placed, over its "
                            "allocatable %lld",
                            cn->name, (long long)cn->used[r], res_names[r],
                            (long long)cn->alloc[r]);
                if (pods_mode && use[k][r] > cn->alloc[r])
                    finding(out, &n,
                            "C3: the pods bound to node \"%s\" request %lld "
                            "of %s, over its allocatable %lld",
                            cn->name, (long long)use[k][r], res_names[r],
                            (long long)cn->alloc[r]);
            }
        }
        for (size_t k = 0; k < nn; k++)
            if (!seen[k])
                finding(out, &n,
                        "C4: node \"%s\" is stored but not in the node table",
                        nodes[k]->name);
        free(seen);
        free(tab);
    }
    free(use);
    free(nodes);
    free(pods);
    return n;
}
