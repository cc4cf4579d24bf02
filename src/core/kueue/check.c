/*
 * check.c - fq_kueue_check: Kueue's invariants K1-K4 (flexq/check.h),
 * read back from the stored objects after a settle.
 *
 * It trusts nothing of the kueue controller's own tables: it decodes
 * every ClusterQueue, Cohort and Workload with the same typed decoders
 * the API validates with, sums what the workloads holding quota use per
 * (ClusterQueue, flavor, resource), and compares that with the quotas and
 * with the status the controller wrote. A controller cache that drifted
 * from the objects shows up here as a K3 or K4 finding.
 *
 * Cost: one decode of each of those objects and a few small tables, so
 * it is for the scenario runner and `flexq sim --check-invariants`, not
 * for flexqd's loop. It changes nothing.
 *
 * What it does not check: the order of admission (the scenarios do that),
 * borrowing and lending limits one by one (K3 bounds the whole cohort
 * tree), or workloads that hold no quota.
 */
#include "flexq/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/objects.h"
#include "flexq/objstore.h"
#include "flexq/quantity.h"

/* One (ClusterQueue, flavor, resource) cell: the quota and what the
 * workloads that hold quota there use. */
struct cell {
    char *cq, *flavor, *resource; /* owned */
    int64_t nominal;
    int64_t used;
    bool listed; /* in the queue's spec */
};

struct tally {
    struct cell *cells;
    size_t n, cap;
};

static struct cell *cell_of(struct tally *t, const char *cq, const char *flavor,
                            const char *resource)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->cells[i].cq, cq) &&
            !strcmp(t->cells[i].flavor, flavor) &&
            !strcmp(t->cells[i].resource, resource))
            return &t->cells[i];
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 32;
        t->cells = fq_xrealloc(t->cells, t->cap * sizeof(*t->cells));
    }
    struct cell *c = &t->cells[t->n++];
    *c = (struct cell){.cq = fq_xstrdup(cq),
                       .flavor = fq_xstrdup(flavor),
                       .resource = fq_xstrdup(resource)};
    return c;
}

static void tally_release(struct tally *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->cells[i].cq);
        free(t->cells[i].flavor);
        free(t->cells[i].resource);
    }
    free(t->cells);
}

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

/* The root of the cohort tree `name` belongs to (Cohort objects' parents,
 * followed at most 64 steps: a loop is the validator's to refuse). */
static const char *cohort_root(const struct fq_cohort *cohorts, size_t nco,
                               const char *name)
{
    for (int step = 0; name && step < 64; step++) {
        const char *parent = NULL;
        for (size_t i = 0; i < nco; i++)
            if (!strcmp(cohorts[i].meta.name, name))
                parent = cohorts[i].parent;
        if (!parent)
            return name;
        name = parent;
    }
    return name;
}

/* Quota of every flavor/resource of `groups` added to the cells of
 * `owner` (a ClusterQueue, or a cohort tree's root). */
static void add_quota(struct tally *t, const char *owner,
                      const struct fq_resource_group *groups, size_t ng)
{
    for (size_t g = 0; g < ng; g++)
        for (size_t f = 0; f < groups[g].n_flavors; f++) {
            const struct fq_flavor_quotas *fl = &groups[g].flavors[f];
            for (size_t r = 0; r < fl->n_resources; r++) {
                struct cell *c =
                    cell_of(t, owner, fl->name, fl->resources[r].name);
                c->nominal += fl->resources[r].nominal;
                c->listed = true;
            }
        }
}

/* K4: status.flavorsReservation[flavor].resources[resource].total of a
 * stored ClusterQueue, in the resource's units; -1 when absent. */
static int64_t status_total(const struct fq_value *cq, const char *flavor,
                            const char *resource)
{
    const struct fq_value *fr = fq_value_path(cq, "status.flavorsReservation");
    for (size_t i = 0; i < fq_value_len(fr); i++) {
        const struct fq_value *fe = fq_seq_at(fr, i);
        if (strcmp(fq_value_path_str(fe, "name", ""), flavor))
            continue;
        const struct fq_value *rs = fq_map_get(fe, "resources");
        for (size_t j = 0; j < fq_value_len(rs); j++) {
            const struct fq_value *re = fq_seq_at(rs, j);
            if (strcmp(fq_value_path_str(re, "name", ""), resource))
                continue;
            int64_t v;
            if (fq_quantity_parse(fq_value_path_str(re, "total", ""),
                                  fq_quantity_scale_for(resource), &v, NULL,
                                  NULL) == 0)
                return v;
        }
    }
    return -1;
}

size_t fq_kueue_check(struct fq_engine *e, struct fq_errlist *out)
{
    struct fq_objstore *s = fq_engine_store(e);
    size_t n = 0;
    const struct fq_object **cqo = NULL, **coo = NULL, **wlo = NULL;
    size_t ncq = fq_objstore_list(s, FQ_KIND_CLUSTERQUEUE, NULL, &cqo);
    size_t nco = fq_objstore_list(s, FQ_KIND_COHORT, NULL, &coo);
    size_t nwl = fq_objstore_list(s, FQ_KIND_WORKLOAD, NULL, &wlo);
    struct fq_clusterqueue *cqs = fq_xcalloc(ncq + 1, sizeof(*cqs));
    struct fq_cohort *cos = fq_xcalloc(nco + 1, sizeof(*cos));
    bool *cq_ok = fq_xcalloc(ncq + 1, sizeof(*cq_ok));
    bool *co_ok = fq_xcalloc(nco + 1, sizeof(*co_ok));
    for (size_t i = 0; i < ncq; i++)
        cq_ok[i] =
            fq_clusterqueue_decode(cqo[i]->obj, NULL, &cqs[i], NULL) == 0;
    for (size_t i = 0; i < nco; i++)
        co_ok[i] = fq_cohort_decode(coo[i]->obj, NULL, &cos[i], NULL) == 0;

    /* Quotas: per queue, and per cohort tree (queues and cohorts). */
    struct tally per_cq = {0}, per_tree = {0};
    for (size_t i = 0; i < ncq; i++) {
        if (!cq_ok[i])
            continue;
        add_quota(&per_cq, cqs[i].meta.name, cqs[i].groups, cqs[i].n_groups);
        if (cqs[i].cohort)
            add_quota(&per_tree, cohort_root(cos, nco, cqs[i].cohort),
                      cqs[i].groups, cqs[i].n_groups);
    }
    for (size_t i = 0; i < nco; i++)
        if (co_ok[i])
            add_quota(&per_tree, cohort_root(cos, nco, cos[i].meta.name),
                      cos[i].groups, cos[i].n_groups);

    /* Usage of the workloads that hold quota. */
    for (size_t w = 0; w < nwl; w++) {
        struct fq_workload wl;
        if (fq_workload_status_decode(
                wlo[w]->obj, FQ_WL_CONDITIONS | FQ_WL_ADMISSION, &wl) != 0)
            continue;
        const char *ns = wlo[w]->ns, *name = wlo[w]->name;
        bool reserved = fq_conditions_true(&wl.conditions, "QuotaReserved");
        bool admitted = fq_conditions_true(&wl.conditions, "Admitted");
        bool finished = fq_conditions_true(&wl.conditions, "Finished");
        if (admitted && (!reserved || !wl.has_admission))
            finding(out, &n,
                    "K1: workload %s/%s is Admitted without its quota "
                    "reserved",
                    ns, name);
        if (!reserved || finished || !wl.has_admission) {
            fq_workload_release(&wl);
            continue;
        }
        const char *cqn = wl.admission_cluster_queue;
        const struct fq_clusterqueue *cq = NULL;
        for (size_t i = 0; i < ncq && cqn; i++)
            if (cq_ok[i] && !strcmp(cqs[i].meta.name, cqn))
                cq = &cqs[i];
        if (!cq) {
            finding(out, &n,
                    "K2: workload %s/%s holds quota of ClusterQueue \"%s\", "
                    "which does not exist",
                    ns, name, cqn ? cqn : "");
            fq_workload_release(&wl);
            continue;
        }
        for (size_t a = 0; a < wl.n_assignments; a++) {
            const struct fq_podset_assignment *pa = &wl.assignments[a];
            for (size_t r = 0; r < pa->resource_usage.n; r++) {
                const char *res = pa->resource_usage.items[r].name;
                const char *flv = fq_kvs_get(&pa->flavors, res);
                int64_t v = pa->resource_usage.items[r].value;
                if (!flv)
                    continue;
                if (!fq_objstore_get(s, FQ_KIND_RESOURCEFLAVOR, "", flv))
                    finding(out, &n,
                            "K2: workload %s/%s was assigned flavor \"%s\", "
                            "which does not exist",
                            ns, name, flv);
                struct cell *c = cell_of(&per_cq, cq->meta.name, flv, res);
                if (!c->listed)
                    finding(out, &n,
                            "K2: workload %s/%s uses %s of flavor \"%s\", "
                            "which ClusterQueue \"%s\" does not have",
                            ns, name, res, flv, cq->meta.name);
                c->used += v;
                if (cq->cohort)
                    cell_of(&per_tree, cohort_root(cos, nco, cq->cohort), flv,
                            res)
                        ->used += v;
            }
        }
        fq_workload_release(&wl);
    }

    /* K3: within quota, alone or as a cohort tree. K4: the status agrees. */
    /* Kueue-paced cycles (cycle_ms) take a workload's change into the
     * queues' tables at the next cycle, as Kueue's cache does, and the
     * status follows the tables: K4 holds between cycles only unpaced. */
    const struct fq_engine_config *cfg = fq_engine_config(e);
    bool fresh = cfg->status_every_ms == 0 && cfg->policy.cycle_ms == 0;
    for (size_t i = 0; i < per_cq.n; i++) {
        const struct cell *c = &per_cq.cells[i];
        const struct fq_clusterqueue *cq = NULL;
        const struct fq_value *stored_cq = NULL;
        for (size_t j = 0; j < ncq; j++)
            if (cq_ok[j] && !strcmp(cqs[j].meta.name, c->cq)) {
                cq = &cqs[j];
                stored_cq = cqo[j]->obj;
            }
        if (cq && !cq->cohort && c->used > c->nominal)
            finding(out, &n,
                    "K3: ClusterQueue \"%s\" holds %lld of %s in flavor "
                    "\"%s\", over its nominal quota %lld",
                    c->cq, (long long)c->used, c->resource, c->flavor,
                    (long long)c->nominal);
        if (fresh && stored_cq && c->listed) {
            int64_t st = status_total(stored_cq, c->flavor, c->resource);
            if (st >= 0 && st != c->used)
                finding(out, &n,
                        "K4: ClusterQueue \"%s\" reports %lld of %s in "
                        "flavor \"%s\" reserved; its workloads hold %lld",
                        c->cq, (long long)st, c->resource, c->flavor,
                        (long long)c->used);
        }
    }
    for (size_t i = 0; i < per_tree.n; i++) {
        const struct cell *c = &per_tree.cells[i];
        if (c->used > c->nominal)
            finding(out, &n,
                    "K3: cohort tree \"%s\" holds %lld of %s in flavor "
                    "\"%s\", over the nominal quota of all its queues %lld",
                    c->cq, (long long)c->used, c->resource, c->flavor,
                    (long long)c->nominal);
    }

    for (size_t i = 0; i < ncq; i++)
        if (cq_ok[i])
            fq_clusterqueue_release(&cqs[i]);
    for (size_t i = 0; i < nco; i++)
        if (co_ok[i])
            fq_cohort_release(&cos[i]);
    tally_release(&per_cq);
    tally_release(&per_tree);
    free(cq_ok);
    free(co_ok);
    free(cqs);
    free(cos);
    free(cqo);
    free(coo);
    free(wlo);
    return n;
}
