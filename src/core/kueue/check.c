/*
 * check.c - fq_kueue_check: Kueue's invariants K1-K5 (flexq/check.h),
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
#include "flexq/paths.h"
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
    const struct fq_value *fr = fq_value_path(cq, FQ_WL_FLAVORS_RESERVATION);
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

/* The configuration and the tallies of one check. */
struct quotas {
    struct fq_objstore *store;
    const struct fq_object **cqo, **coo;
    size_t ncq, nco;
    struct fq_clusterqueue *cqs;
    struct fq_cohort *cos;
    bool *cq_ok, *co_ok; /* decoded */
    struct tally per_cq, per_tree;
};

static void quotas_load(struct quotas *q, struct fq_objstore *s)
{
    memset(q, 0, sizeof(*q));
    q->store = s;
    q->ncq = fq_objstore_list(s, FQ_KIND_CLUSTERQUEUE, NULL, &q->cqo);
    q->nco = fq_objstore_list(s, FQ_KIND_COHORT, NULL, &q->coo);
    q->cqs = fq_xcalloc(q->ncq + 1, sizeof(*q->cqs));
    q->cos = fq_xcalloc(q->nco + 1, sizeof(*q->cos));
    q->cq_ok = fq_xcalloc(q->ncq + 1, sizeof(*q->cq_ok));
    q->co_ok = fq_xcalloc(q->nco + 1, sizeof(*q->co_ok));
    for (size_t i = 0; i < q->ncq; i++)
        q->cq_ok[i] =
            fq_clusterqueue_decode(q->cqo[i]->obj, NULL, &q->cqs[i], NULL) == 0;
    for (size_t i = 0; i < q->nco; i++)
        q->co_ok[i] =
            fq_cohort_decode(q->coo[i]->obj, NULL, &q->cos[i], NULL) == 0;
    /* Quotas: per queue, and per cohort tree (queues and cohorts). */
    for (size_t i = 0; i < q->ncq; i++) {
        if (!q->cq_ok[i])
            continue;
        const struct fq_clusterqueue *cq = &q->cqs[i];
        add_quota(&q->per_cq, cq->meta.name, cq->groups, cq->n_groups);
        if (cq->cohort)
            add_quota(&q->per_tree, cohort_root(q->cos, q->nco, cq->cohort),
                      cq->groups, cq->n_groups);
    }
    for (size_t i = 0; i < q->nco; i++)
        if (q->co_ok[i])
            add_quota(&q->per_tree,
                      cohort_root(q->cos, q->nco, q->cos[i].meta.name),
                      q->cos[i].groups, q->cos[i].n_groups);
}

static void quotas_release(struct quotas *q)
{
    for (size_t i = 0; i < q->ncq; i++)
        if (q->cq_ok[i])
            fq_clusterqueue_release(&q->cqs[i]);
    for (size_t i = 0; i < q->nco; i++)
        if (q->co_ok[i])
            fq_cohort_release(&q->cos[i]);
    tally_release(&q->per_cq);
    tally_release(&q->per_tree);
    free(q->cq_ok);
    free(q->co_ok);
    free(q->cqs);
    free(q->cos);
    free(q->cqo);
    free(q->coo);
}

/* The decoded ClusterQueue `name` (and its stored object), or NULL. */
static const struct fq_clusterqueue *find_cq(const struct quotas *q,
                                             const char *name,
                                             const struct fq_value **obj)
{
    for (size_t i = 0; i < q->ncq && name; i++)
        if (q->cq_ok[i] && !strcmp(q->cqs[i].meta.name, name)) {
            if (obj)
                *obj = q->cqo[i]->obj;
            return &q->cqs[i];
        }
    return NULL;
}

/* K1 and K2 for one workload, and its usage added to the tallies when it
 * holds quota. Returns the findings. */
static size_t tally_workload(struct quotas *q, const struct fq_object *o,
                             struct fq_errlist *out)
{
    size_t n = 0;
    struct fq_workload wl;
    if (fq_workload_status_decode(o->obj, FQ_WL_CONDITIONS | FQ_WL_ADMISSION,
                                  &wl) != 0)
        return 0;
    const char *ns = o->ns, *name = o->name;
    bool reserved = fq_conditions_true(&wl.conditions, "QuotaReserved");
    bool admitted = fq_conditions_true(&wl.conditions, "Admitted");
    bool finished = fq_conditions_true(&wl.conditions, "Finished");
    if (admitted && (!reserved || !wl.has_admission))
        finding(out, &n,
                "K1: workload %s/%s is Admitted without its quota reserved", ns,
                name);
    const struct fq_clusterqueue *cq =
        find_cq(q, wl.admission_cluster_queue, NULL);
    if (reserved && !finished && wl.has_admission && !cq)
        finding(out, &n,
                "K2: workload %s/%s holds quota of ClusterQueue \"%s\", "
                "which does not exist",
                ns, name,
                wl.admission_cluster_queue ? wl.admission_cluster_queue : "");
    for (size_t a = 0; cq && reserved && !finished && a < wl.n_assignments;
         a++) {
        const struct fq_podset_assignment *pa = &wl.assignments[a];
        for (size_t r = 0; r < pa->resource_usage.n; r++) {
            const char *res = pa->resource_usage.items[r].name;
            const char *flv = fq_kvs_get(&pa->flavors, res);
            int64_t v = pa->resource_usage.items[r].value;
            if (!flv)
                continue;
            if (!fq_objstore_get(q->store, FQ_KIND_RESOURCEFLAVOR, "", flv))
                finding(out, &n,
                        "K2: workload %s/%s was assigned flavor \"%s\", "
                        "which does not exist",
                        ns, name, flv);
            struct cell *c = cell_of(&q->per_cq, cq->meta.name, flv, res);
            if (!c->listed)
                finding(out, &n,
                        "K2: workload %s/%s uses %s of flavor \"%s\", "
                        "which ClusterQueue \"%s\" does not have",
                        ns, name, res, flv, cq->meta.name);
            c->used += v;
            if (cq->cohort)
                cell_of(&q->per_tree, cohort_root(q->cos, q->nco, cq->cohort),
                        flv, res)
                    ->used += v;
        }
    }
    fq_workload_release(&wl);
    return n;
}

/* K5: a ClusterQueue's fair share is 0 exactly when it borrows nothing. */
static size_t check_shares(struct quotas *q, struct fq_errlist *out)
{
    size_t n = 0;
    const struct fq_object **cqs = NULL;
    size_t ncq = fq_objstore_list(q->store, FQ_KIND_CLUSTERQUEUE, NULL, &cqs);
    for (size_t i = 0; i < ncq; i++) {
        const struct fq_value *ws =
            fq_value_path(cqs[i]->obj, FQ_FAIR_WEIGHTED_SHARE);
        if (!ws || ws->type != FQ_V_NUM || !ws->u.num.is_int)
            continue;
        const struct cell *over = NULL;
        for (size_t k = 0; k < q->per_cq.n && !over; k++) {
            const struct cell *c = &q->per_cq.cells[k];
            if (!strcmp(c->cq, cqs[i]->name) && c->used > c->nominal)
                over = c;
        }
        if ((ws->u.num.i == 0) != (over == NULL))
            finding(out, &n,
                    "K5: ClusterQueue \"%s\" shows weightedShare %lld, but "
                    "%s",
                    cqs[i]->name, (long long)ws->u.num.i,
                    over ? "its workloads hold more than its nominal quota" :
                           "its workloads borrow nothing");
    }
    free(cqs);
    return n;
}

size_t fq_kueue_check(struct fq_engine *e, struct fq_errlist *out)
{
    size_t n = 0;
    struct quotas q;
    quotas_load(&q, fq_engine_store(e));
    const struct fq_object **wlo = NULL;
    size_t nwl = fq_objstore_list(q.store, FQ_KIND_WORKLOAD, NULL, &wlo);
    for (size_t w = 0; w < nwl; w++)
        n += tally_workload(&q, wlo[w], out);
    free(wlo);

    /* Kueue-paced cycles (cycle_ms) take a workload's change into the
     * queues' tables at the next cycle, as Kueue's cache does, and the
     * status follows the tables: K4 holds between cycles only unpaced. */
    const struct fq_engine_config *cfg = fq_engine_config(e);
    bool fresh = cfg->status_every_ms == 0 && cfg->policy.cycle_ms == 0;
    for (size_t i = 0; i < q.per_cq.n; i++) {
        const struct cell *c = &q.per_cq.cells[i];
        const struct fq_value *stored_cq = NULL;
        const struct fq_clusterqueue *cq = find_cq(&q, c->cq, &stored_cq);
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
    if (fresh)
        n += check_shares(&q, out);
    for (size_t i = 0; i < q.per_tree.n; i++) {
        const struct cell *c = &q.per_tree.cells[i];
        if (c->used > c->nominal)
            finding(out, &n,
                    "K3: cohort tree \"%s\" holds %lld of %s in flavor "
                    "\"%s\", over the nominal quota of all its queues %lld",
                    c->cq, (long long)c->used, c->resource, c->flavor,
                    (long long)c->nominal);
    }
    quotas_release(&q);
    return n;
}
