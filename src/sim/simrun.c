/*
 * simrun.c - the simulator's virtual clock around flexq's engine (the
 * run of simloop.h).
 *
 * How it works. The engine runs in simulator mode (no_pods: no Pod objects;
 * the capacity controller places admitted workloads on nodes itself and
 * sets PodsReady). The loop keeps three clocks and always jumps to the
 * earliest:
 *
 *   next arrival    the next trace row's submit time: submit a Workload
 *   next finish     a min-heap of (end of run, job, run generation): mark
 *                   that workload Finished=True (reason Succeeded)
 *   engine wakeup   fq_engine_next_wakeup: timers of the controllers
 *                   (backoffs, booking, boot, max run, scale-down...)
 *
 * then settles the engine at that instant. An observer on the engine (every
 * stored change) marks touched workloads dirty and counts nodes per pool;
 * after the settle the loop looks at each dirty workload once. Nothing is
 * polled, so a step costs what changed, not what exists.
 *
 * A job's life, as this file sees it:
 *
 *      arrival            Admitted & PodsReady            our finish mark
 *   ----------> WAITING ---------------------> RUNNING ------------------+
 *     (or REFUSED by     ^                        |                      |
 *      the long-job      |  evicted, preempted,   |                      v
 *      rule)             +--- revoked (restart) --+      more segments? --> next
 *                                                                 | no    segment
 *         spec.active=false (deactivated)                         v       (WAITING)
 *   WAITING/RUNNING ------------------------------------------> DONE
 *                                            (EXPIRED if it was revoked on Plan B,
 *                                             else REFUSED)
 *
 * A segment boundary that keep.c proves would be admitted again at once on
 * the same nodes skips the finish mark and the new segment: the job stays
 * RUNNING in the same workload (keep_segment), with the same accounting.
 *
 * Invariants:
 *   1. a job is RUNNING iff its current workload is Admitted, PodsReady
 *      (set after the admission) and not Evicted, Finished or inactive;
 *   2. exactly one heap entry per RUNNING job carries its current `gen`;
 *      entries with an older gen are stale and skipped;
 *   3. pending + running + done + (not yet submitted) = jobs;
 *   4. per pool, used chips = the sum of chips of jobs running there.
 *
 * Memory is flat in the number of finished jobs: a finished workload is
 * deleted from the engine once its figures are recorded (just before the
 * next settle, so that the deletion does not cost a settle of its own),
 * the engine records no Events (nobody would read them), and the store's
 * change log is off. What grows with the
 * trace is one compact record per job (report.h) and the state below.
 *
 * It does not: start processes, read clocks (progress reports get virtual
 * time; the caller adds wall time), or second-guess the controllers: if a
 * job never gets nodes, it stays pending and is reported unfinished.
 */
#include "simrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/check.h"
#include "flexq/cloud.h"
#include "flexq/conditions.h"
#include "flexq/drive.h"
#include "flexq/engine.h"
#include "flexq/estimate.h"
#include "flexq/kinds.h"
#include "flexq/names.h"
#include "flexq/nodepool.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "flexq/runhist.h"
#include "flexq/timefmt.h"
#include "sizing.h"

#define PROVREQ_CONTROLLER "kueue.x-k8s.io/provisioning-request"
#define DAY_MS             (86400LL * 1000)

static char tomb_mark;
#define TOMB (&tomb_mark)

/* --- small helpers ----------------------------------------------------- */

static int64_t cond_time(const struct fq_value *c)
{
    int64_t t = 0;
    const char *s = fq_value_path_str(c, "lastTransitionTime", NULL);
    if (!s || fq_time_parse(s, &t))
        return 0;
    return t;
}

static int64_t quantity_of(const struct fq_value *v)
{
    if (!v)
        return 0;
    if (v->type == FQ_V_NUM)
        return v->u.num.is_int ? v->u.num.i : (int64_t)v->u.num.d;
    const char *s = fq_value_as_str(v);
    int64_t q = 0;
    if (s && fq_quantity_parse(s, FQ_Q_UNIT, &q, NULL, NULL) == 0)
        return q;
    return 0;
}

int64_t sim_to_abs(int64_t rel)
{
    return FQ_SIM_EPOCH_MS + rel;
}

/* Writes v in decimal at p; returns the end. */
static char *put_dec(char *p, unsigned long long v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

/* "sim-<job>-<seg>". Built by hand: a name is made for every review,
 * submit, finish and delete, and snprintf cost as much as the review. */
void sim_wl_name(char buf[WL_NAME_SIZE], size_t job, unsigned seg)
{
    memcpy(buf, "sim-", 4);
    char *p = put_dec(buf + 4, job);
    *p++ = '-';
    p = put_dec(p, seg);
    *p = '\0';
}

/* The job index of a simulator workload name, or -1. */
static long wl_job(const char *name)
{
    if (strncmp(name, "sim-", 4) != 0)
        return -1;
    char *end;
    long v = strtol(name + 4, &end, 10);
    return *end == '-' && v >= 0 ? v : -1;
}

/* --- node map ------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void nodemap_grow(struct nodemap *m)
{
    struct nodemap old = *m;
    m->cap = old.cap ? old.cap * 2 : 256;
    m->slots = fq_xcalloc(m->cap, sizeof(*m->slots));
    m->used = 0;
    /* The live slots move as they are (their name and node record go
     * with them); tombstones stay behind. */
    for (size_t i = 0; i < old.cap; i++) {
        if (old.slots[i].name && old.slots[i].name != TOMB) {
            size_t j = hash_str(old.slots[i].name) & (m->cap - 1);
            while (m->slots[j].name)
                j = (j + 1) & (m->cap - 1);
            m->slots[j] = old.slots[i];
            m->used++;
        }
    }
    free(old.slots);
}

/* The slot of name, or NULL. */
static struct nslot *nodemap_find(struct nodemap *m, const char *name)
{
    if (!m->cap)
        return NULL;
    size_t j = hash_str(name) & (m->cap - 1);
    while (m->slots[j].name) {
        if (m->slots[j].name != TOMB && !strcmp(m->slots[j].name, name))
            return &m->slots[j];
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

/* Adds or updates name; returns its slot (valid until the next put). */
static struct nslot *nodemap_put(struct nodemap *m, const char *name, int pool,
                                 int64_t chips)
{
    struct nslot *have = nodemap_find(m, name);
    if (have) {
        have->pool = pool;
        have->chips = chips;
        return have;
    }
    if ((m->used + 1) * 2 > m->cap)
        nodemap_grow(m);
    size_t j = hash_str(name) & (m->cap - 1);
    while (m->slots[j].name)
        j = (j + 1) & (m->cap - 1);
    m->slots[j] = (struct nslot){fq_xstrdup(name), pool, chips, NULL};
    m->used++;
    return &m->slots[j];
}

/* Removes name; returns false if absent. Its node record goes to *k
 * (owned by the caller; NULL when it had none). */
static bool nodemap_take(struct nodemap *m, const char *name, int *pool,
                         int64_t *chips, struct sim_knode **k)
{
    struct nslot *n = nodemap_find(m, name);
    if (!n)
        return false;
    *pool = n->pool;
    *chips = n->chips;
    *k = n->k;
    free(n->name);
    n->name = TOMB;
    n->k = NULL;
    return true;
}

bool sim_nslot_live(const struct nslot *n)
{
    return n->name && n->name != TOMB;
}

static void nodemap_free(struct nodemap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].name != TOMB) {
            free(m->slots[i].name);
            sim_knode_free(m->slots[i].k);
        }
    free(m->slots);
}

/* --- finish heap ------------------------------------------------------- */

static bool fin_valid(const struct sim *s, const struct fq_drive_fin *f)
{
    const struct jstate *j = &s->js[f->job];
    return j->phase == PH_RUNNING && j->gen == f->gen && !j->marked;
}

/* --- pools --------------------------------------------------------------- */

/* The pool index of a pool name, adding it (from its NodePool object when
 * the store has one) the first time; -1 when there are too many. */
static int pool_index(struct sim *s, const char *name)
{
    struct fq_sim_result *r = s->r;
    for (size_t i = 0; i < r->npools; i++)
        if (!strcmp(r->pools[i].name, name))
            return (int)i;
    if (r->npools == MAX_POOLS)
        return -1;
    r->pools = fq_xrealloc(r->pools, (r->npools + 1) * sizeof(*r->pools));
    struct fq_sim_pool *p = &r->pools[r->npools];
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", name);
    for (size_t i = 0; i < s->nflv; i++)
        if (s->flv[i].pool && !strcmp(s->flv[i].pool, name)) {
            snprintf(p->flavor, sizeof(p->flavor), "%s", s->flv[i].name);
            break;
        }
    const struct fq_object *o =
        fq_objstore_get(s->store, FQ_KIND_NODEPOOL, "", name);
    struct fq_nodepool_spec spec;
    if (o && fq_nodepool_decode(o->obj, &spec, NULL) == 0 && spec.machine) {
        p->queued = spec.queued;
        p->chips_per_node = spec.machine->accel_count;
        p->price_per_node_hour =
            s->cloud ? fq_cloud_price(s->cloud, spec.machine->name,
                                      spec.location ? spec.location : "",
                                      fq_nodepool_provisioning(&spec)) :
                       fq_nodepool_price(&spec);
    }
    /* The series keeps one column per pool: widen what it has so far. */
    struct fq_sim_series *se = &r->series;
    if (se->n) {
        size_t np = r->npools, cap = se->cap;
        int32_t *c = fq_xcalloc(cap * (np + 1), sizeof(*c));
        int32_t *u = fq_xcalloc(cap * (np + 1), sizeof(*u));
        for (size_t i = 0; i < se->n; i++)
            for (size_t q = 0; q < np; q++) {
                c[i * (np + 1) + q] = se->pool_chips[i * np + q];
                u[i * (np + 1) + q] = se->pool_used[i * np + q];
            }
        free(se->pool_chips);
        free(se->pool_used);
        se->pool_chips = c;
        se->pool_used = u;
    } else if (se->cap) {
        se->pool_chips = fq_xrealloc(se->pool_chips, se->cap * (r->npools + 1) *
                                                         sizeof(int32_t));
        se->pool_used = fq_xrealloc(se->pool_used, se->cap * (r->npools + 1) *
                                                       sizeof(int32_t));
    }
    return (int)r->npools++;
}

static const struct flavor *flavor_find(const struct sim *s, const char *name)
{
    for (size_t i = 0; i < s->nflv; i++)
        if (!strcmp(s->flv[i].name, name))
            return &s->flv[i];
    return NULL;
}

/* The pool a workload's accelerator podset was assigned to, or -1. */
static int pool_of(struct sim *s, const struct fq_value *wl)
{
    const struct fq_value *psa = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
    const struct fq_value *a = fq_seq_at(psa, 0);
    const struct fq_value *fl = fq_value_path(a, "flavors");
    const char *flavor = fq_value_as_str(fq_map_get(fl, s->res));
    if (!flavor && fl && fl->type == FQ_V_MAP && fl->u.map.n)
        flavor = fq_value_as_str(fl->u.map.items[0].val);
    const struct flavor *f = flavor ? flavor_find(s, flavor) : NULL;
    if (!f || !f->pool)
        return -1;
    return pool_index(s, f->pool);
}

/* --- observer ------------------------------------------------------------ */

static void mark_dirty(struct sim *s, size_t job)
{
    if (s->js[job].dirty)
        return;
    s->js[job].dirty = true;
    FQ_GROW(s->dirty, s->dcap, s->nd + 1);
    s->dirty[s->nd++] = (uint32_t)job;
}

static void observe(void *ctx, const struct fq_change *c)
{
    struct sim *s = ctx;
    s->r->events++;
    if (c->kind == FQ_KIND_WORKLOAD) {
        long j = wl_job(c->name);
        if (j >= 0 && (size_t)j < s->njobs)
            mark_dirty(s, (size_t)j);
        return;
    }
    if (c->kind != FQ_KIND_NODE)
        return;
    if (c->type == FQ_CHANGE_MODIFIED) {
        if (!s->keep_on)
            return;
        struct nslot *n = nodemap_find(&s->nodes, c->name);
        if (n)
            sim_keep_node(s, n);
        return;
    }
    if (c->type == FQ_CHANGE_ADDED && c->obj) {
        /* Label keys hold dots: read the labels map directly. */
        const char *pool = fq_value_as_str(
            fq_map_get(fq_meta_labels(c->obj), FQ_LABEL_NODEPOOL));
        if (!pool)
            return;
        int p = pool_index(s, pool);
        if (p < 0)
            return;
        int64_t chips = quantity_of(
            fq_map_get(fq_value_path(c->obj, FQ_NODE_ALLOCATABLE), s->res));
        if (!chips)
            chips = s->r->pools[p].chips_per_node;
        sim_keep_node(s, nodemap_put(&s->nodes, c->name, p, chips));
        s->pool_nodes[p]++;
        s->pool_chips[p] += chips;
        if (s->pool_nodes[p] > s->r->pools[p].max_nodes)
            s->r->pools[p].max_nodes = s->pool_nodes[p];
    } else if (c->type == FQ_CHANGE_DELETED) {
        int p;
        int64_t chips;
        struct sim_knode *k;
        if (nodemap_take(&s->nodes, c->name, &p, &chips, &k)) {
            s->pool_nodes[p]--;
            s->pool_chips[p] -= chips;
            sim_keep_forget(s, k);
        }
    }
}

/* --- config ------------------------------------------------------------ */

static const char *kind_of(const struct fq_value *doc)
{
    return fq_value_path_str(doc, "kind", "");
}

static const char *name_of(const struct fq_value *doc)
{
    return fq_meta_name(doc);
}

static const struct fq_value *find_doc(struct fq_value **docs, size_t n,
                                       const char *kind, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(kind_of(docs[i]), kind) &&
            (!name || !strcmp(name_of(docs[i]), name)))
            return docs[i];
    return NULL;
}

static bool is_provreq_check(struct fq_value **docs, size_t n,
                             const char *check)
{
    const struct fq_value *ac = find_doc(docs, n, "AdmissionCheck", check);
    return ac && !strcmp(fq_value_path_str(ac, FQ_AC_CONTROLLER, ""),
                         PROVREQ_CONTROLLER);
}

static bool seq_has_str(const struct fq_value *seq, const char *s)
{
    size_t n = fq_value_len(seq);
    for (size_t i = 0; i < n && seq->type == FQ_V_SEQ; i++) {
        const char *v = fq_value_as_str(fq_seq_at(seq, i));
        if (v && !strcmp(v, s))
            return true;
    }
    return false;
}

static struct flavor *flavor_add(struct sim *s, struct fq_value **docs,
                                 size_t n, const char *name)
{
    for (size_t i = 0; i < s->nflv; i++)
        if (!strcmp(s->flv[i].name, name))
            return &s->flv[i];
    s->flv = fq_xrealloc(s->flv, (s->nflv + 1) * sizeof(*s->flv));
    struct flavor *f = &s->flv[s->nflv++];
    memset(f, 0, sizeof(*f));
    f->name = fq_xstrdup(name);
    const struct fq_value *rf = find_doc(docs, n, "ResourceFlavor", name);
    const struct fq_value *labels = fq_value_path(rf, FQ_RF_NODE_LABELS);
    if (labels && labels->type == FQ_V_MAP) {
        f->labels = fq_value_clone(labels);
        const char *pool =
            fq_value_as_str(fq_map_get(labels, FQ_LABEL_NODEPOOL));
        if (pool)
            f->pool = fq_xstrdup(pool);
    }
    if (f->pool) {
        for (size_t i = 0; i < n; i++) {
            struct fq_nodepool_spec spec;
            if (strcmp(kind_of(docs[i]), "NodePool") ||
                strcmp(name_of(docs[i]), f->pool))
                continue;
            if (fq_nodepool_decode(docs[i], &spec, NULL) == 0 && spec.queued)
                f->plan_b = true;
        }
    }
    return f;
}

/* The accelerator: the first covered resource not cpu / memory / pods. */
static void detect_resource(struct sim *s, struct fq_value **docs, size_t n)
{
    if (s->o->resource) {
        snprintf(s->res, sizeof(s->res), "%s", s->o->resource);
        return;
    }
    snprintf(s->res, sizeof(s->res), "nvidia.com/gpu");
    for (size_t i = 0; i < n; i++) {
        if (strcmp(kind_of(docs[i]), "ClusterQueue"))
            continue;
        const struct fq_value *rgs =
            fq_value_path(docs[i], FQ_CQ_RESOURCE_GROUPS);
        for (size_t g = 0; g < fq_value_len(rgs); g++) {
            const struct fq_value *cov =
                fq_value_path(fq_seq_at(rgs, g), "coveredResources");
            for (size_t k = 0; k < fq_value_len(cov); k++) {
                const char *r = fq_value_as_str(fq_seq_at(cov, k));
                if (r && strcmp(r, "cpu") && strcmp(r, "memory") &&
                    strcmp(r, "pods") && strcmp(r, "ephemeral-storage")) {
                    snprintf(s->res, sizeof(s->res), "%s", r);
                    return;
                }
            }
        }
    }
}

/* Does this flavor entry of a resource group give the accelerator? */
static bool entry_gives(const struct sim *s, const struct fq_value *fe)
{
    const struct fq_value *rs = fq_value_path(fe, "resources");
    for (size_t k = 0; k < fq_value_len(rs); k++) {
        const struct fq_value *rq = fq_seq_at(rs, k);
        if (!strcmp(fq_value_path_str(rq, "name", ""), s->res) &&
            quantity_of(fq_map_get(rq, "nominalQuota")) > 0)
            return true;
    }
    return false;
}

/*
 * Classifies the flavors of a ClusterQueue (Plan B: a provisioning check
 * applies to it, or its pool is queued) and removes the ones the policy's
 * plan choice excludes, with their admission-check scoping.
 */
static void edit_cluster_queue(struct sim *s, struct fq_value *cq,
                               struct fq_value **docs, size_t n)
{
    struct fq_value *checks =
        fq_value_path(cq, "spec.admissionChecksStrategy.admissionChecks");
    struct fq_value *rgs = fq_value_path(cq, FQ_CQ_RESOURCE_GROUPS);
    enum fq_sim_plans plans = s->o->policy->plans;
    for (size_t g = 0; g < fq_value_len(rgs); g++) {
        struct fq_value *rg = fq_seq_at(rgs, g);
        struct fq_value *fls = fq_map_get(rg, "flavors");
        struct fq_value *kept = fq_value_seq();
        for (size_t k = 0; k < fq_value_len(fls); k++) {
            struct fq_value *fe = fq_seq_at(fls, k);
            const char *fname = fq_value_path_str(fe, "name", "");
            struct flavor *f = flavor_add(s, docs, n, fname);
            for (size_t c = 0; c < fq_value_len(checks); c++) {
                const struct fq_value *ce = fq_seq_at(checks, c);
                if (seq_has_str(fq_map_get(ce, "onFlavors"), fname) &&
                    is_provreq_check(docs, n,
                                     fq_value_path_str(ce, "name", "")))
                    f->plan_b = true;
            }
            bool gives = entry_gives(s, fe);
            bool drop = (plans == FQ_SIM_PLAN_A_ONLY && f->plan_b) ||
                        (plans == FQ_SIM_PLAN_B_ONLY && !f->plan_b && gives);
            if (drop)
                continue;
            if (gives)
                f->gives = true;
            fq_seq_push(kept, fq_value_clone(fe));
        }
        fq_map_set(rg, "flavors", kept);
    }
    /* Checks scoped to flavors that are gone go too (an empty onFlavors
     * would mean "all flavors"). */
    if (checks && checks->type == FQ_V_SEQ) {
        struct fq_value *kept = fq_value_seq();
        for (size_t c = 0; c < fq_value_len(checks); c++) {
            const struct fq_value *ce = fq_seq_at(checks, c);
            const struct fq_value *on = fq_map_get(ce, "onFlavors");
            if (!on || fq_value_len(on) == 0) {
                fq_seq_push(kept, fq_value_clone(ce));
                continue;
            }
            struct fq_value *on2 = fq_value_seq();
            for (size_t k = 0; k < fq_value_len(on); k++) {
                const char *fname = fq_value_as_str(fq_seq_at(on, k));
                bool present = false;
                for (size_t g = 0; g < fq_value_len(rgs) && fname; g++) {
                    struct fq_value *fls =
                        fq_map_get(fq_seq_at(rgs, g), "flavors");
                    for (size_t j = 0; j < fq_value_len(fls); j++)
                        if (!strcmp(fq_value_path_str(fq_seq_at(fls, j), "name",
                                                      ""),
                                    fname))
                            present = true;
                }
                if (present)
                    fq_seq_push(on2, fq_value_str(fname));
            }
            if (fq_value_len(on2) == 0) {
                fq_value_free(on2);
                continue;
            }
            struct fq_value *ce2 = fq_value_clone(ce);
            fq_map_set(ce2, "onFlavors", on2);
            fq_seq_push(kept, ce2);
        }
        fq_map_set(fq_value_path(cq, "spec.admissionChecksStrategy"),
                   "admissionChecks", kept);
    }
    /* What is left: is there a Plan B, and what selects Plan A? */
    for (size_t g = 0; g < fq_value_len(rgs); g++) {
        struct fq_value *fls = fq_map_get(fq_seq_at(rgs, g), "flavors");
        for (size_t k = 0; k < fq_value_len(fls); k++) {
            struct fq_value *fe = fq_seq_at(fls, k);
            const struct flavor *f =
                flavor_find(s, fq_value_path_str(fe, "name", ""));
            if (!f || !entry_gives(s, fe))
                continue;
            if (f->plan_b) {
                s->has_plan_b = true;
                if (!s->plan_b_selector && f->labels)
                    s->plan_b_selector = fq_value_clone(f->labels);
            } else if (!s->plan_a_selector && f->labels)
                s->plan_a_selector = fq_value_clone(f->labels);
        }
    }
}

/* Plan B's max run: the provisioning config's maxRunDurationSeconds, else
 * the cloud model's for a Plan B pool's machine, else 7 days. */
static int64_t plan_b_max_run(struct sim *s, struct fq_value **docs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(kind_of(docs[i]), "AdmissionCheck") ||
            strcmp(fq_value_path_str(docs[i], FQ_AC_CONTROLLER, ""),
                   PROVREQ_CONTROLLER))
            continue;
        const struct fq_value *prc =
            find_doc(docs, n, "ProvisioningRequestConfig",
                     fq_value_path_str(docs[i], FQ_AC_PARAMETERS_NAME, ""));
        const struct fq_value *v = fq_map_get(
            fq_value_path(prc, FQ_AC_PARAMETERS), "maxRunDurationSeconds");
        int64_t sec = quantity_of(v);
        if (sec > 0)
            return sec * 1000;
    }
    for (size_t i = 0; i < s->nflv && s->cloud; i++) {
        if (!s->flv[i].plan_b || !s->flv[i].pool)
            continue;
        const struct fq_value *np =
            find_doc(docs, n, "NodePool", s->flv[i].pool);
        struct fq_nodepool_spec spec;
        if (np && fq_nodepool_decode(np, &spec, NULL) == 0 && spec.machine)
            return fq_cloud_max_run_ms(s->cloud, spec.machine->name,
                                       spec.location ? spec.location : "");
    }
    return 7 * DAY_MS;
}

/*
 * --size-plan-a: every Plan A flavor entry that gives the accelerator gets
 * `quota` as its nominal quota; the pool behind it may grow to
 * fq_sim_plan_a_nodes(quota) nodes, and the cloud model stocks as many
 * on-demand hosts of its machine type. Runs after edit_cluster_queue,
 * which classified the flavors.
 */
static void resize_plan_a(struct sim *s, struct fq_value **docs, size_t n,
                          int64_t quota)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(kind_of(docs[i]), "ClusterQueue"))
            continue;
        struct fq_value *rgs = fq_value_path(docs[i], FQ_CQ_RESOURCE_GROUPS);
        for (size_t g = 0; g < fq_value_len(rgs); g++) {
            struct fq_value *fls = fq_map_get(fq_seq_at(rgs, g), "flavors");
            for (size_t k = 0; k < fq_value_len(fls); k++) {
                struct fq_value *fe = fq_seq_at(fls, k);
                const struct flavor *f =
                    flavor_find(s, fq_value_path_str(fe, "name", ""));
                if (!f || f->plan_b || !entry_gives(s, fe))
                    continue;
                struct fq_value *rs = fq_value_path(fe, "resources");
                for (size_t r = 0; r < fq_value_len(rs); r++) {
                    struct fq_value *rq = fq_seq_at(rs, r);
                    if (!strcmp(fq_value_path_str(rq, "name", ""), s->res))
                        fq_map_set(rq, "nominalQuota", fq_value_int(quota));
                }
            }
        }
    }
    struct fq_value *model = NULL;
    for (size_t i = 0; i < n && !model; i++)
        if (!strcmp(kind_of(docs[i]), "CapacityModel"))
            model = docs[i];
    for (size_t v = 0; v < s->nflv; v++) {
        const struct flavor *f = &s->flv[v];
        if (f->plan_b || !f->gives || !f->pool)
            continue;
        for (size_t i = 0; i < n; i++) {
            struct fq_nodepool_spec spec;
            if (strcmp(kind_of(docs[i]), "NodePool") ||
                strcmp(name_of(docs[i]), f->pool) ||
                fq_nodepool_decode(docs[i], &spec, NULL) || !spec.machine ||
                spec.queued || spec.flex_start)
                continue;
            int64_t nodes =
                fq_sim_plan_a_nodes(quota, spec.machine->accel_count);
            const char *machine = spec.machine->name;
            struct fq_value *as = fq_value_path(docs[i], FQ_POOL_AUTOSCALING);
            if (as && as->type == FQ_V_MAP)
                fq_map_set(as, "maxNodeCount", fq_value_int(nodes));
            struct fq_value *zones = fq_value_path(model, "spec.zones");
            for (size_t z = 0; z < fq_value_len(zones); z++) {
                struct fq_value *mts =
                    fq_map_get(fq_seq_at(zones, z), "machineTypes");
                for (size_t m = 0; m < fq_value_len(mts); m++) {
                    struct fq_value *mt = fq_seq_at(mts, m);
                    struct fq_value *od = fq_map_get(mt, "onDemand");
                    if (strcmp(fq_value_path_str(mt, "name", ""), machine) ||
                        !od || od->type != FQ_V_MAP)
                        continue;
                    fq_map_set(od, "hosts", fq_value_int(nodes));
                }
            }
        }
    }
}

static bool local_queue_exists(struct fq_value **docs, size_t n,
                               const char *name, const char **ns)
{
    const struct fq_value *lq = find_doc(docs, n, "LocalQueue", name);
    if (!lq)
        return false;
    if (ns)
        *ns = fq_value_path_str(lq, FQ_META_NAMESPACE, "default");
    return true;
}

/* --- workloads ------------------------------------------------------------ */

static struct fq_value *make_workload(struct sim *s, size_t idx,
                                      const char *queue,
                                      const struct fq_value *pin)
{
    const struct fq_trace_job *tj = &s->o->trace->jobs[idx];
    struct jstate *j = &s->js[idx];
    int64_t hosts, per;
    fq_trace_shape(&s->o->map, tj, &hosts, &per);
    char name[WL_NAME_SIZE];
    sim_wl_name(name, idx, j->wseg);

    struct fq_value *w = fq_value_map();
    fq_map_set(w, "apiVersion", fq_value_str("kueue.x-k8s.io/v1beta1"));
    fq_map_set(w, "kind", fq_value_str("Workload"));
    struct fq_value *md = fq_map_ensure_map(w, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str(s->ns));
    fq_map_set(fq_map_ensure_map(md, "labels"), FQ_LABEL_QUEUE_NAME,
               fq_value_str(queue));
    fq_map_set(fq_map_ensure_map(md, "annotations"), "flexq.dev/trace-job",
               fq_value_str(tj->id));
    struct fq_value *spec = fq_map_ensure_map(w, "spec");
    fq_map_set(spec, "queueName", fq_value_str(queue));
    fq_map_set(spec, "priority",
               fq_value_int(fq_trace_priority(&s->o->map, tj)));
    fq_map_set(spec, "active", fq_value_bool(true));
    struct fq_value *pss = fq_value_seq();
    struct fq_value *ps = fq_value_map();
    fq_map_set(ps, "name", fq_value_str("main"));
    fq_map_set(ps, "count", fq_value_int(hosts));
    struct fq_value *pod =
        fq_map_ensure_map(fq_map_ensure_map(ps, "template"), "spec");
    struct fq_value *ctrs = fq_value_seq();
    struct fq_value *c = fq_value_map();
    fq_map_set(c, "name", fq_value_str("main"));
    fq_map_set(c, "image", fq_value_str("flexq/sim"));
    /* Extended resources (GPUs, TPUs) need limits equal to requests. */
    struct fq_value *rsrc = fq_map_ensure_map(c, "resources");
    char per_s[24];
    snprintf(per_s, sizeof(per_s), "%lld", (long long)per);
    fq_map_set(fq_map_ensure_map(rsrc, "requests"), s->res,
               fq_value_str(per_s));
    fq_map_set(fq_map_ensure_map(rsrc, "limits"), s->res, fq_value_str(per_s));
    fq_seq_push(ctrs, c);
    fq_map_set(pod, "containers", ctrs);
    /* Tolerate every taint (accelerator and queued-pool taints), as the
     * tutorial's RayJob tolerates google.com/tpu and gke-queued. */
    struct fq_value *tols = fq_value_seq();
    struct fq_value *tol = fq_value_map();
    fq_map_set(tol, "operator", fq_value_str("Exists"));
    fq_seq_push(tols, tol);
    fq_map_set(pod, "tolerations", tols);
    if (pin)
        fq_map_set(pod, "nodeSelector", fq_value_clone(pin));
    fq_seq_push(pss, ps);
    fq_map_set(spec, "podSets", pss);
    return w;
}

/*
 * --route-b-over: a job whose guessed run time (the history's, never the
 * trace's truth) is at least the threshold goes to Plan B only, keeping
 * Plan A for short jobs: a flex-start request's wait (half an hour in the
 * examples) is a small share of a long run and a large one of a short
 * run. Only the first segment is routed, at its submission.
 */
static bool routed_to_b(struct sim *s, size_t idx)
{
    const struct jstate *j = &s->js[idx];
    if (s->o->route_b_ms <= 0 || !s->plan_b_selector || !s->hist || j->seg != 1)
        return false;
    const struct fq_trace_job *tj = &s->o->trace->jobs[idx];
    struct fq_runhist_guess g;
    fq_runhist_guess(s->hist, tj->user, sim_history_queue(s, tj),
                     s->r->jobs[idx].chips, tj->requested_ms, &g);
    if (g.src == FQ_RUNHIST_DEFAULT || g.run_ms < s->o->route_b_ms)
        return false;
    s->r->routed_b++;
    return true;
}

static int submit(struct sim *s, size_t idx)
{
    const struct fq_trace_job *tj = &s->o->trace->jobs[idx];
    struct jstate *j = &s->js[idx];
    const char *queue = fq_trace_queue(&s->o->map, tj, s->defq);
    bool is_long = s->has_plan_b && tj->duration_ms > s->r->max_run_ms;
    j->wseg = j->seg;
    const struct fq_value *pin = is_long && (s->rule == FQ_SIM_LONG_KEEP_A ||
                                             s->rule == FQ_SIM_LONG_SPLIT_A) ?
                                     s->plan_a_selector :
                                     NULL;
    if (!pin && !is_long && (routed_to_b(s, idx) || sim_route_area(s, idx)))
        pin = s->plan_b_selector;
    struct fq_value *w = make_workload(s, idx, queue, pin);
    if (s->fc_every && j->seg == 1 && s->r->jobs[idx].evictions == 0 &&
        idx % s->fc_every == s->fc_every / 2)
        sim_forecast(s, idx, w);
    struct fq_err e2 = {0};
    /* The first workload is validated like any apply, which proves
     * make_workload's shape; the rest differ from it only in checked
     * trace values (a defined LocalQueue, positive counts, an integer
     * priority) and skip the second decode. */
    int rc = s->submitted_any ?
                 fq_engine_create(s->e, w, sim_to_abs(s->now), &e2) :
                 fq_engine_apply(s->e, w, sim_to_abs(s->now), NULL, NULL, &e2);
    s->submitted_any = true;
    if (rc)
        return fq_err_set(s->err, rc,
                          "trace line %u: job %s: the engine refused its "
                          "workload: %s",
                          (unsigned)tj->line, tj->id, e2.msg);
    j->phase = PH_WAITING;
    j->marked = false;
    s->pending++;
    s->r->jobs[idx].segments = (uint8_t)(j->seg > 255 ? 255 : j->seg);
    return 0;
}

static int arrive(struct sim *s, size_t idx)
{
    const struct fq_trace_job *tj = &s->o->trace->jobs[idx];
    struct jstate *j = &s->js[idx];
    struct fq_sim_jobrec *rec = &s->r->jobs[idx];
    s->submitted++;
    const char *queue = fq_trace_queue(&s->o->map, tj, s->defq);
    if (strcmp(queue, s->defq) != 0 &&
        !local_queue_exists(s->o->config->items, s->o->config->n, queue, NULL))
        return fq_err_set(s->err, FQ_EINVAL,
                          "trace line %u: job %s goes to LocalQueue \"%s\", "
                          "which the config does not define",
                          (unsigned)tj->line, tj->id, queue);
    j->remaining_ms = tj->duration_ms;
    j->seg = 1;
    bool is_long = s->has_plan_b && tj->duration_ms > s->r->max_run_ms;
    if (is_long && s->rule == FQ_SIM_LONG_REFUSE) {
        j->phase = PH_DONE;
        rec->outcome = FQ_SIM_REFUSED;
        s->done++;
        return 0;
    }
    j->split = is_long &&
               (s->rule == FQ_SIM_LONG_SPLIT || s->rule == FQ_SIM_LONG_SPLIT_A);
    return submit(s, idx);
}

/* Finished workloads are deleted just before the next settle, which has
 * to happen anyway: deleting them now would make the engine settle once
 * more at this instant for nothing. */
static void delete_workload(struct sim *s, size_t idx, unsigned seg)
{
    FQ_GROW(s->dels, s->dels_cap, s->ndels + 1);
    s->dels[s->ndels++] = (struct del){(uint32_t)idx, seg};
}

static void flush_deletes(struct sim *s)
{
    for (size_t i = 0; i < s->ndels; i++) {
        char name[WL_NAME_SIZE];
        sim_wl_name(name, s->dels[i].job, s->dels[i].seg);
        fq_engine_delete(s->e, FQ_KIND_WORKLOAD, s->ns, name,
                         sim_to_abs(s->now), NULL);
    }
    s->ndels = 0;
}

static void end_job(struct sim *s, size_t idx, enum fq_sim_outcome out)
{
    struct jstate *j = &s->js[idx];
    if (j->phase == PH_WAITING)
        s->pending--;
    j->phase = PH_DONE;
    s->r->jobs[idx].outcome = (uint8_t)out;
    if (out == FQ_SIM_FINISHED) {
        s->r->jobs[idx].finish_ms = s->now;
        if (s->hist) {
            const struct fq_trace_job *tj = &s->o->trace->jobs[idx];
            fq_runhist_add(s->hist, tj->user, sim_history_queue(s, tj),
                           s->r->jobs[idx].chips, tj->duration_ms,
                           tj->requested_ms);
        }
    }
    s->done++;
}

/* Ends the current run at now (completed or cut short). */
static void stop_run(struct sim *s, size_t idx)
{
    struct jstate *j = &s->js[idx];
    struct fq_sim_jobrec *rec = &s->r->jobs[idx];
    int64_t ran = s->now - j->run_start;
    rec->run_ms += ran;
    if (j->run_pool >= 0) {
        s->r->pools[j->run_pool].busy_chip_ms += (double)ran * rec->chips;
        s->pool_used[j->run_pool] -= rec->chips;
    }
    s->running--;
    j->gen++;
}

/* Starts a run of a waiting job at now on pool `pool` (or -1). */
static void run_on(struct sim *s, size_t idx, int pool)
{
    struct jstate *j = &s->js[idx];
    struct fq_sim_jobrec *rec = &s->r->jobs[idx];
    j->phase = PH_RUNNING;
    j->run_start = s->now;
    if (rec->start_ms < 0)
        rec->start_ms = s->now;
    s->pending--;
    s->running++;
    j->run_pool = (int16_t)pool;
    rec->pool = j->run_pool;
    if (j->run_pool >= 0)
        s->pool_used[j->run_pool] += rec->chips;
    int64_t len = j->remaining_ms;
    if (j->split && len > s->seg_ms)
        len = s->seg_ms;
    j->run_len = len;
    fq_drive_heap_push(
        &s->heap, (struct fq_drive_fin){s->now + len, (uint32_t)idx, j->gen});
}

static void start_run(struct sim *s, size_t idx, const struct fq_value *wl)
{
    run_on(s, idx, pool_of(s, wl));
}

/*
 * A segment boundary kept in the same workload (keep.c says when): the
 * accounting of review()'s boundary (the run ends, the next segment is
 * counted and waits) and of the new workload's start at once on the same
 * pool, in the same order, without the workload's round trip through the
 * engine.
 */
static void keep_segment(struct sim *s, size_t idx)
{
    struct jstate *j = &s->js[idx];
    int pool = j->run_pool;
    stop_run(s, idx);
    j->remaining_ms -= j->run_len;
    j->seg++;
    s->r->jobs[idx].segments = (uint8_t)(j->seg > 255 ? 255 : j->seg);
    j->phase = PH_WAITING;
    s->pending++;
    run_on(s, idx, pool);
    s->r->seg_kept++;
}

static void wl_conds_of(const struct fq_value *wl, struct wl_conds *out)
{
    static const char *const types[] = {"Finished", "Evicted", "Admitted",
                                        "PodsReady"};
    const struct fq_value *c[4];
    fq_conds_in_status(fq_map_get(wl, "status"), 4, types, c);
    *out = (struct wl_conds){c[0], c[1], c[2], c[3]};
}

/* Running per invariant 1 (active: spec.active). */
static bool wl_running(bool active, const struct wl_conds *c)
{
    if (!active || fq_cond_status_is(c->finished, "True") ||
        fq_cond_status_is(c->evicted, "True") ||
        !fq_cond_status_is(c->admitted, "True") ||
        !fq_cond_status_is(c->pods_ready, "True"))
        return false;
    return cond_time(c->pods_ready) >= cond_time(c->admitted);
}

/* Looks at one touched workload after a settle. */
static int review(struct sim *s, size_t idx)
{
    struct jstate *j = &s->js[idx];
    if (j->phase != PH_WAITING && j->phase != PH_RUNNING)
        return 0;
    char name[WL_NAME_SIZE];
    sim_wl_name(name, idx, j->wseg);
    const struct fq_object *o =
        fq_objstore_get(s->store, FQ_KIND_WORKLOAD, s->ns, name);
    if (!o)
        return 0;
    const struct fq_value *wl = o->obj;
    struct wl_conds conds;
    wl_conds_of(wl, &conds);
    bool finished = fq_cond_status_is(conds.finished, "True");
    bool active = fq_value_path_bool(wl, FQ_WL_ACTIVE, true);
    bool running = wl_running(active, &conds);

    if (j->phase == PH_RUNNING && finished && j->marked) {
        /* The run we ended: the work of this segment is done. */
        stop_run(s, idx);
        j->remaining_ms -= j->run_len;
        unsigned seg = j->wseg;
        if (j->remaining_ms > 0) {
            j->phase = PH_WAITING; /* submit() counts it pending again */
            j->seg++;
            delete_workload(s, idx, seg);
            s->submitted_now++;
            s->r->seg_requeued++;
            return submit(s, idx);
        }
        end_job(s, idx, FQ_SIM_FINISHED);
        delete_workload(s, idx, seg);
        return 0;
    }
    if (j->phase == PH_RUNNING && !running) {
        if (j->run_pool >= 0 && s->r->pools[j->run_pool].queued)
            j->revoked = true;
        stop_run(s, idx);
        s->r->jobs[idx].evictions++;
        j->phase = PH_WAITING;
        s->pending++;
    }
    if (finished || !active) {
        /* Someone else ended it: the check was Rejected (deactivated), or
         * it failed. Revoked on Plan B first means it expired there. */
        end_job(s, idx, j->revoked ? FQ_SIM_EXPIRED : FQ_SIM_REFUSED);
        delete_workload(s, idx, j->wseg);
        return 0;
    }
    if (j->phase == PH_WAITING && running)
        start_run(s, idx, wl);
    return 0;
}

/* Sets Finished=True (Succeeded) on a running job's workload. */
static void mark_finished(struct sim *s, size_t idx)
{
    struct jstate *j = &s->js[idx];
    char name[WL_NAME_SIZE];
    sim_wl_name(name, idx, j->wseg);
    if (fq_drive_mark_finished(s->store, s->ns, name, sim_to_abs(s->now),
                               "Job finished successfully"))
        j->marked = true;
}

/* Reviews dirty workloads, settling again while reviews change things. */
static int settle(struct sim *s)
{
    for (int round = 0; round < 64; round++) {
        fq_engine_run(s->e, sim_to_abs(s->now));
        s->r->steps++;
        if (s->o->check_invariants) {
            struct fq_errlist errs;
            fq_errlist_init(&errs);
            int rc = 0;
            if (fq_engine_check(s->e, &errs) > 0)
                rc = fq_err_set(s->err, FQ_EINVAL,
                                "invariant broken at %.3f s of the trace: %s",
                                (double)s->now / 1000.0, errs.items[0].msg);
            fq_errlist_release(&errs);
            if (rc)
                return rc;
        }
        if (s->nd == 0)
            return 0;
        for (size_t i = 0; i < s->nd; i++) {
            size_t idx = s->dirty[i];
            s->js[idx].dirty = false;
            int rc = review(s, idx);
            if (rc)
                return rc;
        }
        /* Reviews may have dirtied more (deletes, submits): they were
         * appended and handled above; start a fresh list. Only a new
         * segment needs the engine again at this instant; deletes of
         * finished workloads can wait for the next settle. */
        s->nd = 0;
        if (s->submitted_now == 0)
            return 0;
        s->submitted_now = 0;
    }
    return 0;
}

/* --- accounting --------------------------------------------------------- */

static void advance(struct sim *s, int64_t t)
{
    int64_t dt = t - s->now;
    if (dt <= 0)
        return;
    for (size_t p = 0; p < s->r->npools; p++) {
        s->r->pools[p].node_ms += (double)s->pool_nodes[p] * (double)dt;
        s->r->pools[p].chip_ms += (double)s->pool_chips[p] * (double)dt;
    }
    s->now = t;
}

static void sample(struct sim *s)
{
    int32_t c[MAX_POOLS], u[MAX_POOLS];
    for (size_t p = 0; p < s->r->npools; p++) {
        c[p] = (int32_t)s->pool_chips[p];
        u[p] = (int32_t)s->pool_used[p];
    }
    fq_sim_series_push(s->r, s->now, (int32_t)s->pending, (int32_t)s->running,
                       c, u);
}

/* --- the run --------------------------------------------------------------- */

void fq_sim_options_init(struct fq_sim_options *o)
{
    memset(o, 0, sizeof(*o));
    fq_trace_map_init(&o->map);
    o->policy = fq_sim_policy_find("flexq");
    o->seed = 1;
    o->horizon_ms = 365 * DAY_MS;
}

static int apply_config(struct sim *s, struct fq_value **docs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct fq_err e2 = {0};
        bool created = false;
        int rc = fq_engine_apply(s->e, fq_value_clone(docs[i]), sim_to_abs(0),
                                 &created, NULL, &e2);
        if (rc)
            return fq_err_set(s->err, rc, "%s: %s %s: %s",
                              s->o->config_name ? s->o->config_name : "config",
                              kind_of(docs[i]), name_of(docs[i]), e2.msg);
    }
    return 0;
}

static void sim_free(struct sim *s)
{
    fq_engine_free(s->e);
    fq_cloud_free(s->cloud);
    free(s->js);
    fq_drive_heap_free(&s->heap);
    free(s->dirty);
    free(s->dels);
    free(s->fins);
    nodemap_free(&s->nodes);
    for (size_t p = 0; p < MAX_POOLS; p++)
        free(s->knodes[p].v);
    for (size_t i = 0; i < s->nflv; i++) {
        free(s->flv[i].name);
        free(s->flv[i].pool);
        fq_value_free(s->flv[i].labels);
    }
    free(s->flv);
    fq_value_free(s->plan_a_selector);
    fq_value_free(s->plan_b_selector);
    fq_runhist_free(s->hist);
}

int fq_sim_run(const struct fq_sim_options *o, struct fq_sim_result *out,
               struct fq_err *err)
{
    struct sim s;
    memset(&s, 0, sizeof(s));
    s.o = o;
    s.r = out;
    s.err = err;
    fq_sim_result_init(out);
    const struct fq_trace *tr = o->trace;
    const struct fq_sim_policy *pol =
        o->policy ? o->policy : fq_sim_policy_find("flexq");
    struct fq_sim_options oo = *o;
    oo.policy = pol;
    s.o = &oo;
    snprintf(out->policy, sizeof(out->policy), "%s", pol->name);
    s.rule = o->long_rule_set ? o->long_rule : pol->long_rule;
    if (!o->route_b_area_set)
        oo.route_b_area = pol->route_b_area;
    if (!o->segment_set)
        oo.segment_ms = pol->segment_ms;
    if (!o->route_guess_set)
        oo.route_guess = pol->route_guess;
    if (!o->pods_ready_set)
        oo.pods_ready_ms = pol->pods_ready_ms;
    out->long_rule = fq_sim_long_rule_text(s.rule);
    out->skipped_rows = tr->skipped;
    s.njobs = tr->n;
    out->njobs = tr->n;
    out->jobs = fq_xcalloc(tr->n ? tr->n : 1, sizeof(*out->jobs));
    s.js = fq_xcalloc(tr->n ? tr->n : 1, sizeof(*s.js));
    for (size_t i = 0; i < tr->n; i++) {
        int64_t hosts, per;
        fq_trace_shape(&o->map, &tr->jobs[i], &hosts, &per);
        out->jobs[i] = (struct fq_sim_jobrec){
            .id = tr->jobs[i].id,
            .submit_ms = tr->jobs[i].submit_ms,
            .duration_ms = tr->jobs[i].duration_ms,
            .start_ms = -1,
            .finish_ms = -1,
            .chips = (int32_t)(hosts * per),
            .hosts = (int32_t)hosts,
            .pool = -1,
        };
        s.js[i].run_pool = -1;
    }

    /* The config, edited for the policy. */
    size_t n = o->config->n;
    struct fq_value **docs = fq_xcalloc(n ? n : 1, sizeof(*docs));
    for (size_t i = 0; i < n; i++)
        docs[i] = fq_value_clone(o->config->items[i]);
    int rc = 0;
    detect_resource(&s, docs, n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(kind_of(docs[i]), "ClusterQueue"))
            edit_cluster_queue(&s, docs[i], docs, n);
    if (o->plan_a_quota > 0) {
        resize_plan_a(&s, docs, n, o->plan_a_quota);
        out->plan_a_quota = o->plan_a_quota;
    }
    out->arrival_scale = o->arrival_scale > 0 ? o->arrival_scale : 1.0;
    const struct fq_value *model = find_doc(docs, n, "CapacityModel", NULL);
    if (model) {
        struct fq_err e2 = {0};
        s.cloud = fq_cloud_new(model, 1.0, sim_to_abs(0), &e2);
        if (!s.cloud) {
            rc = fq_err_set(err, FQ_EINVAL, "%s: CapacityModel: %s",
                            o->config_name ? o->config_name : "config", e2.msg);
            goto out;
        }
    }
    out->max_run_ms = plan_b_max_run(&s, docs, n);
    s.seg_ms = out->max_run_ms > 2 * 3600000LL ? out->max_run_ms - 3600000LL :
                                                 out->max_run_ms / 2;
    if (oo.segment_ms > 0 && oo.segment_ms < s.seg_ms)
        s.seg_ms = oo.segment_ms;
    if (s.seg_ms <= 0)
        s.seg_ms = 1;

    /* The default LocalQueue: the map's, else the config's first. */
    const char *defq = o->map.queue[0] ? o->map.queue : NULL;
    const char *ns = "default";
    if (!defq) {
        const struct fq_value *lq = find_doc(docs, n, "LocalQueue", NULL);
        defq = lq ? name_of(lq) : NULL;
    }
    if (!defq || !local_queue_exists(docs, n, defq, &ns)) {
        rc = fq_err_set(err, FQ_EINVAL,
                        defq ? "%s: no LocalQueue \"%s\" (--map queue=NAME "
                               "names one the config defines)" :
                               "%s: the config defines no LocalQueue%s",
                        o->config_name ? o->config_name : "config",
                        defq ? defq : "");
        goto out;
    }
    snprintf(s.defq, sizeof(s.defq), "%s", defq);
    snprintf(s.ns, sizeof(s.ns), "%s", ns);

    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = o->seed;
    cfg.policy = fq_sim_policy_engine(pol);
    if (o->switches &&
        (rc = fq_sim_switches_apply(o->switches, &cfg.policy, err)) != 0)
        goto out;
    cfg.no_pods = true;
    cfg.sim_provider = true;
    cfg.record_events = false;
    cfg.status_every_ms = 3600 * 1000;
    if (oo.pods_ready_ms > 0) {
        /* waitForPodsReady: a workload admitted where its pods cannot be
         * placed (Plan A's quota free but its nodes too fragmented, the
         * pool at its maximum) goes back to the queue after the timeout
         * instead of holding the quota until whole nodes free up. */
        cfg.pods_ready.enable = true;
        cfg.pods_ready.timeout_ms = oo.pods_ready_ms;
        cfg.pods_ready.recovery_timeout_ms = oo.pods_ready_ms;
    }
    s.e = fq_engine_new(&cfg);
    s.store = fq_engine_store(s.e);
    s.policy = cfg.policy;
    /* Boundaries can be kept only where jobs are split, the cycle is
     * not paced and nothing preempts (keep.c): otherwise no node records
     * are kept either. */
    s.keep_on =
        (s.rule == FQ_SIM_LONG_SPLIT || s.rule == FQ_SIM_LONG_SPLIT_A) &&
        !o->requeue_segments && s.policy.cycle_ms == 0 &&
        !sim_config_preempts(docs, n);
    s.docs = docs;
    s.ndocs = n;
    if (o->route_b_ms > 0 || oo.route_b_area > 0)
        s.hist = fq_runhist_new();
    sim_route_setup(&s, docs, n);
    if (o->forecasts && tr->n) {
        if (!s.hist)
            s.hist = fq_runhist_new();
        s.fc_every =
            o->forecasts == FQ_SIM_FORECAST_ALL || o->forecasts >= tr->n ?
                1 :
                tr->n / o->forecasts;
    }
    fq_objstore_set_logging(s.store, false);
    fq_engine_set_observer(s.e, observe, &s);
    rc = apply_config(&s, docs, n);
    if (rc)
        goto out;
    rc = settle(&s);
    if (rc)
        goto out;

    int64_t last_submit = tr->n ? tr->jobs[tr->n - 1].submit_ms : 0;
    int64_t every = o->sample_ms > 0 ? o->sample_ms : last_submit / 1000;
    if (every < 60000)
        every = 60000;
    /* Samples lie on a fixed grid (0, every, 2 every, ...), taken between
     * settles: the state then is the state the last settle left, so the
     * series does not depend on when the engine happened to settle. */
    int64_t next_sample = every;
    size_t next = 0;
    int stall = 0;
    uint64_t loops = 0;
    sample(&s);
    while (s.done < s.njobs) {
        int64_t ta = next < tr->n ? tr->jobs[next].submit_ms : FQ_NEVER;
        while (fq_drive_heap_top(&s.heap) &&
               !fin_valid(&s, fq_drive_heap_top(&s.heap)))
            fq_drive_heap_pop(&s.heap);
        const struct fq_drive_fin *top = fq_drive_heap_top(&s.heap);
        int64_t tf = top ? top->t : FQ_NEVER;
        int64_t tw = fq_engine_next_wakeup(s.e);
        tw = tw == FQ_NEVER ? FQ_NEVER : tw - FQ_SIM_EPOCH_MS;
        int64_t t = ta < tf ? ta : tf;
        if (tw < t)
            t = tw;
        if (t == FQ_NEVER)
            break; /* nothing will ever happen again */
        if (next_sample <= t && next_sample > s.now &&
            !(next == tr->n && next_sample > last_submit + o->horizon_ms)) {
            advance(&s, next_sample);
            sample(&s);
            next_sample += every;
            continue;
        }
        if (t <= s.now && ta > s.now && tf > s.now) {
            /* The engine asks for `now` again after settling: do not spin,
             * give it a second. */
            if (++stall > 3)
                t = s.now + 1000;
        } else {
            stall = 0;
        }
        if (t < s.now)
            t = s.now;
        if (next == tr->n && t > last_submit + o->horizon_ms)
            break;
        advance(&s, t);
        flush_deletes(&s);
        while (next < tr->n && tr->jobs[next].submit_ms <= s.now) {
            rc = arrive(&s, next++);
            if (rc)
                goto out;
        }
        /* The runs due now: one alone at a boundary may keep its
         * workload (keep.c); the others are marked Finished. */
        size_t nfin = 0;
        while (fq_drive_heap_top(&s.heap) &&
               fq_drive_heap_top(&s.heap)->t <= s.now) {
            struct fq_drive_fin f = fq_drive_heap_pop(&s.heap);
            if (!fin_valid(&s, &f))
                continue;
            FQ_GROW(s.fins, s.fins_cap, nfin + 1);
            s.fins[nfin++] = f.job;
        }
        if (nfin == 1 && sim_seg_keepable(&s, s.fins[0], nfin, tw))
            keep_segment(&s, s.fins[0]);
        else
            for (size_t i = 0; i < nfin; i++)
                mark_finished(&s, s.fins[i]);
        rc = settle(&s);
        if (rc)
            goto out;
        while (next_sample <= s.now)
            next_sample += every;
        if ((++loops & 255) == 0) {
            if (o->progress) {
                struct fq_sim_progress p = {s.now,     s.njobs,   s.submitted,
                                            s.done,    s.pending, s.running,
                                            s.r->steps};
                o->progress(o->progress_ctx, &p);
            }
        }
    }
    /* Jobs still running when the run ends: count their work so far. */
    for (size_t i = 0; i < s.njobs; i++)
        if (s.js[i].phase == PH_RUNNING)
            stop_run(&s, i);
    sample(&s);
    out->end_ms = s.now;
    if (o->progress) {
        struct fq_sim_progress p = {s.now,     s.njobs,   s.submitted, s.done,
                                    s.pending, s.running, s.r->steps};
        o->progress(o->progress_ctx, &p);
    }
out:
    for (size_t i = 0; i < n; i++)
        fq_value_free(docs[i]);
    free(docs);
    sim_free(&s);
    return rc;
}
