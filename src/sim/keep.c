/*
 * keep.c - whether a split job's segment boundary can keep its workload.
 *
 * What it is for. Under `--long-jobs split-a` a long job runs in
 * checkpointed segments (6 hours under the flexq policy). A boundary ends
 * the segment's Workload (Finished) and submits the next segment's as a
 * new one, which the engine queues, admits and places like any other:
 * a dozen stored changes or more, a second settle, and one more Workload
 * per boundary (80,238 boundaries on Philly's dev split). When nothing
 * could take
 * the job's place, that new Workload is admitted again at once, on the same
 * flavor, on the same nodes, and the engine ends where it started. Then the
 * simulator can skip the round trip: the job goes on in the workload it
 * has, and only its clock and its segment counter move (simrun.c,
 * keep_segment). Every figure the run reports stays the same byte for byte;
 * only the count of stored changes and settles drops.
 *
 * The condition, and why each part is needed. At the instant T of the
 * boundary the loop (simrun.c) has submitted the arrivals due at T,
 * marked the runs due at T Finished, and then settles: the engine's first
 * pass sees all of it at once (it releases the finished workloads' quota
 * and placements and admits what waits into them), the review then
 * submits each next segment, and a second pass admits and places those.
 * The new workload of job J gets exactly J's old place when:
 *
 *   1. J's run is the only one ending at T: two segments that end together
 *      are admitted in queue order and placed first fit, so they could
 *      swap nodes; a job that ends frees room J's new workload could take
 *      instead of its own;
 *   2. no job is waiting (pending == 0, which counts the arrivals at T and
 *      workloads admitted but not yet placed): in the first pass a waiting
 *      workload would take J's released quota or nodes;
 *   3. no engine timer is due at T (the engine's next wakeup is later): a
 *      timer could evict a running workload (Plan B's max run, a booking,
 *      a revocation) into the queue during the first pass;
 *   4. the scheduling cycle is not paced (policy cycle_ms 0): with a pace,
 *      the second pass's cycle can come only cycle_ms after the first's,
 *      and J would wait;
 *   5. J runs on a flavor without admission checks, on an on-demand pool
 *      (not queued): a Plan B workload's nodes belong to its
 *      ProvisioningRequest, which ends with it; Kueue tries the flavors in
 *      order and J's released quota on its own flavor fits it again;
 *   6. the capacity controller's first fit (autoscaler.c: over the pool's
 *      Ready nodes in node order, as many pods on each as fit, the least
 *      over the accelerator and the pods a node takes), run with J's
 *      placements given back, puts on each node exactly the pods J has
 *      there: no node before J's last one in name order has room for one
 *      more of J's pods. When the whole pool has less free room than one
 *      pod, that holds without looking. Nodes still booting take no
 *      placements.
 *   7. no ClusterQueue of the config may preempt (sim_config_preempts):
 *      among a preemption's candidates of one priority Kueue takes the
 *      one admitted last, so a kept workload, still carrying its first
 *      admission, would be spared where its new workload would be the
 *      victim (test_sim_keep's preempting config). No config of
 *      examples/sim preempts.
 *
 * Under 2 and 3 nothing else moves at T, so the first pass only releases
 * J (its nodes become unneeded, which the second pass undoes before any
 * timer of the scale-down reads it) and the second puts it back. What
 * differs afterwards is invisible to every decision (under 7): the
 * workload's name, creation and admission times (the queue order of a
 * workload that is running), and a node's placement list order.
 *
 * Condition 6 reads node records: one per Node of an on-demand pool,
 * made and marked stale by the engine's observer (sim_keep_node on every
 * change of the Node), kept in name order per pool, and read again from
 * the stored Node only when a check comes to a stale one. A check walks
 * the pool's records and stops at the job's last node, and a Node that
 * changed many times between two checks is read once, instead of
 * decoding every Node at every check or every Node at every change. Runs
 * that cannot keep a boundary (no split rule, a paced cycle, or
 * fq_sim_options.requeue_segments) keep no records.
 *
 * What it does not do: keep boundaries that end together (1), or any
 * while something waits or under a config that preempts (7); decide
 * anything (simrun.c applies it).
 */
#include "simrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/kinds.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"

/* An integer quantity of a resource map (allocatable, requests). */
static int64_t res_of(const struct fq_value *m, const char *res)
{
    const struct fq_value *v = fq_map_get(m, res);
    int64_t q = 0;
    const char *str = fq_value_as_str(v);
    if (v && v->type == FQ_V_NUM)
        return v->u.num.is_int ? v->u.num.i : (int64_t)v->u.num.d;
    if (!str || fq_quantity_parse(str, FQ_Q_UNIT, &q, NULL, NULL))
        return 0;
    return q;
}

/* The job index of a placement's workload ("namespace/sim-J-S"), or -1. */
static long placed_job(const char *key)
{
    const char *slash = strchr(key, '/');
    const char *name = slash ? slash + 1 : key;
    if (strncmp(name, "sim-", 4) != 0)
        return -1;
    char *end;
    long v = strtol(name + 4, &end, 10);
    return *end == '-' && v >= 0 ? v : -1;
}

void sim_keep_node(struct sim *s, struct nslot *n)
{
    if (!s->keep_on || n->pool < 0 || (size_t)n->pool >= s->r->npools ||
        s->r->pools[n->pool].queued)
        return; /* no boundary is kept on a queued pool's nodes */
    struct sim_knode *k = n->k;
    if (!k) {
        k = n->k = fq_xcalloc(1, sizeof(*k));
        k->pool = n->pool;
        struct sim_kpool *kp = &s->knodes[n->pool];
        FQ_GROW(kp->v, kp->cap, kp->n + 1);
        kp->v[kp->n++] = k;
        kp->sorted = false;
    }
    k->name = n->name;
    k->stale = true;
}

/* Reads a stale record again from its stored Node. */
static void refresh(struct sim *s, struct sim_knode *k)
{
    k->stale = false;
    const struct fq_object *o =
        fq_objstore_get(s->store, FQ_KIND_NODE, "", k->name);
    k->ready = false;
    k->used = k->pods_used = k->alloc = k->pods_alloc = 0;
    k->npl = 0;
    if (!o)
        return;
    const struct fq_value *obj = o->obj;
    k->ready = fq_cond_status_is(fq_cond_find(obj, "Ready"), "True");
    const struct fq_value *alloc = fq_value_path(obj, FQ_NODE_ALLOCATABLE);
    k->alloc = res_of(alloc, s->res);
    k->pods_alloc = res_of(alloc, "pods");
    const struct fq_value *pl = fq_value_path(obj, FQ_NODE_PLACEMENTS);
    for (size_t i = 0; i < fq_value_len(pl); i++) {
        const struct fq_value *p = fq_seq_at(pl, i);
        int64_t count = fq_value_path_int(p, "count", 0);
        k->used += res_of(fq_map_get(p, "requests"), s->res) * count;
        k->pods_used += count;
        long job = placed_job(fq_value_path_str(p, "workload", ""));
        if (job < 0)
            continue;
        FQ_GROW(k->pl, k->plcap, k->npl + 1);
        k->pl[k->npl++] = (struct sim_kplace){(uint32_t)job, count};
    }
}

void sim_knode_free(struct sim_knode *k)
{
    if (!k)
        return;
    free(k->pl);
    free(k);
}

void sim_keep_forget(struct sim *s, struct sim_knode *k)
{
    if (!k)
        return;
    struct sim_kpool *kp = &s->knodes[k->pool];
    for (size_t i = 0; i < kp->n; i++)
        if (kp->v[i] == k) {
            kp->v[i] = kp->v[--kp->n];
            kp->sorted = false;
            break;
        }
    sim_knode_free(k);
}

static int knode_cmp(const void *a, const void *b)
{
    return strcmp((*(struct sim_knode *const *)a)->name,
                  (*(struct sim_knode *const *)b)->name);
}

/*
 * Condition 6: first fit of job idx's `want` pods of `per` chips over the
 * Ready nodes of pool p in node order (by name: every node was made in an
 * earlier run of the capacity controller), with the job's placements
 * given back, puts on each node what the job has there now.
 */
static bool same_nodes(struct sim *s, size_t idx, int p, int64_t per,
                       int64_t want)
{
    if (s->pool_chips[p] - s->pool_used[p] < per)
        return true; /* no node has room beyond the job's own */
    struct sim_kpool *kp = &s->knodes[p];
    if (!kp->sorted) {
        qsort(kp->v, kp->n, sizeof(*kp->v), knode_cmp);
        kp->sorted = true;
    }
    int64_t placed = 0;
    for (size_t i = 0; i < kp->n; i++) {
        struct sim_knode *k = kp->v[i];
        if (k->stale)
            refresh(s, k);
        if (!k->ready)
            continue; /* placements skip it */
        int64_t mine = 0;
        for (size_t e = 0; e < k->npl; e++)
            if (k->pl[e].job == idx)
                mine += k->pl[e].count;
        /* As fq_capacity_fits: the least over what a pod asks for (the
         * accelerator and one pod), the job's own room given back. */
        int64_t free_res = k->alloc - k->used + mine * per;
        int64_t free_pods = k->pods_alloc - k->pods_used + mine;
        int64_t fit = free_res > 0 ? free_res / per : 0;
        if (free_pods < fit)
            fit = free_pods > 0 ? free_pods : 0;
        int64_t n = fit < want - placed ? fit : want - placed;
        if (n != mine)
            return false;
        placed += n;
        if (placed == want)
            return true;
    }
    return false;
}

bool sim_seg_keepable(struct sim *s, size_t idx, size_t ending, int64_t wakeup)
{
    const struct jstate *j = &s->js[idx];
    const struct fq_sim_jobrec *rec = &s->r->jobs[idx];
    if (!s->keep_on || !j->split || j->phase != PH_RUNNING ||
        j->remaining_ms <= j->run_len)
        return false; /* not a boundary (the job ends), or not asked */
    if (ending != 1 || s->pending != 0 || wakeup <= s->now ||
        s->policy.cycle_ms != 0)
        return false; /* conditions 1 to 4 */
    if (j->run_pool < 0 || (size_t)j->run_pool >= s->r->npools)
        return false;
    const struct fq_sim_pool *pool = &s->r->pools[j->run_pool];
    if (pool->queued)
        return false;
    for (size_t i = 0; i < s->nflv; i++)
        if (!strcmp(s->flv[i].name, pool->flavor) && s->flv[i].plan_b)
            return false; /* condition 5 */
    int64_t per = rec->hosts > 0 ? rec->chips / rec->hosts : rec->chips;
    if (per <= 0)
        return false;
    return same_nodes(s, idx, j->run_pool, per, rec->hosts);
}

/* Whether Kueue's policy `p` (a preemption field's text) preempts: Never
 * is Kueue's default when the field is absent. */
static bool policy_preempts(const char *p)
{
    return p && *p && strcmp(p, "Never") != 0;
}

bool sim_config_preempts(struct fq_value *const *docs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(fq_value_path_str(docs[i], "kind", ""), "ClusterQueue"))
            continue;
        const struct fq_value *p = fq_value_path(docs[i], "spec.preemption");
        if (policy_preempts(fq_value_path_str(p, "withinClusterQueue", "")) ||
            policy_preempts(fq_value_path_str(p, "reclaimWithinCohort", "")) ||
            policy_preempts(
                fq_value_path_str(p, "borrowWithinCohort.policy", "")))
            return true;
    }
    return false;
}
