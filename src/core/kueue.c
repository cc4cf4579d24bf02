/*
 * kueue.c - the "kueue" controller: Kueue's scheduler and workload
 * controller over stored objects.
 *
 * It watches ResourceFlavor, ClusterQueue, Cohort, LocalQueue, Workload,
 * WorkloadPriorityClass, AdmissionCheck and Namespace objects and writes
 * Workload status (conditions, admission, admissionChecks, requeueState)
 * and ClusterQueue / LocalQueue status, as Kueue does. The algorithm itself
 * (flavors, quota, preemption targets) is admission.c; this file turns
 * objects into its compact structs and decisions back into objects.
 *
 * The workload state machine (one function performs each transition):
 *
 *                 reserve()                      checks all Ready
 *   +---------+  (QuotaReserved=True) +----------+  (Admitted=True) +---------+
 *   | pending |---------------------->| reserved |----------------->|admitted |
 *   +---------+                       +----------+                  +---------+
 *     ^  ^  |                           |   |  check Retry / Evicted    |  |
 *     |  |  | active=false              |   +---------------+           |  |
 *     |  |  v                           | Rejected          v           |  |
 *     |  | +-------------+ deactivate() |            +-----------+ evict()| |
 *     |  | | deactivated |<-------------+------------|  evicted  |<-------+  |
 *     |  | +-------------+                           +-----------+          |
 *     |  |   active=true (Requeued=True Reactivated)  |  release_quota()    |
 *     |  +--------------------------------------------+  Requeued=True now, |
 *     |     backoff over (Requeued=True BackoffFinished)  or False+backoff   |
 *     |                                                                       |
 *     +-- finished (Finished=True, set by the job integration) <------------+
 *
 * How a run costs what changed. Each live workload has a record (struct
 * rec: the compact struct wl the scheduler reads), kept between runs and
 * derived again only when on_change saw its workload change, or when the
 * configuration did (then a new snapshot, and every record again). What
 * a record adds to the quota tree's usage and to the queue counts is
 * added and taken out by account() alone; its place in its ClusterQueue's
 * pending queue (struct pq, in Kueue's heap order), among the holders
 * (preemption candidates) and the migration candidates follows from it
 * (rec_attach / rec_detach). lifecycle() runs for workloads that changed
 * and those whose deadline (a min-heap) came. So a cycle looks at heads,
 * not at every workload, and a run between cycles at what changed.
 *
 * What a change costs. on_change reads a workload's conditions once
 * (cond_scan) and appends its key to the lists of records to derive and
 * lifecycles to run (struct keylist: read back sorted, each key once);
 * rec_refresh derives a record again only when its fingerprint (what
 * rec_derive reads) moved, and a new workload whose podSets match an
 * earlier one's takes that one's podset view instead of decoding its pod
 * templates (psviews: workloads of a job shape are alike), as a holder's
 * status write takes its admission's view (admviews). A cycle allocates nothing: its per-queue
 * scratch lives in the controller, and so do the heads' nominations,
 * which are their outcomes too unless an earlier head of the round
 * reserved or preempted. Callers that read only an assignment's outcome
 * (ff_quiet, try_migrate) ask fq_adm_assign for no message. A migration
 * pass looks at every candidate only after a release on a flavor one
 * may move to or the end of a cool-down, else at the candidates that
 * came since (mig_pass), and a holder derived again to the usage it had
 * releases nothing (held_restore); a requeue puts parked heads back where they
 * were taken from (pq_requeue); a plan of quiet cycles reads each queue
 * once, at a load per head of a shape already found quiet (ff_plan).
 *
 * Invariants
 *   1. Quota is held by exactly the workloads with status.admission set,
 *      QuotaReserved=True and not Finished: the snapshot's usage cells are
 *      the sum of account() over the records that hold, and a record is
 *      derived from its stored workload before any cycle that follows a
 *      change of it, so usage can never be counted twice (after a crash
 *      the records are derived from the store again).
 *   2. A workload with Evicted=True and status.admission set is being
 *      evicted; the next run releases its quota (release_quota) whoever
 *      set the condition (preemption, a check, capacity, jobs).
 *   3. Admitted=True implies QuotaReserved=True and every applicable
 *      check Ready.
 *   4. Scheduling cycles are at least policy.cycle_ms apart in engine
 *      time (Kueue: FQ_KUEUE_CYCLE_MS; flexq: 0, a cycle when kicked);
 *      in each, at most policy.max_admissions_per_cq_per_cycle heads
 *      per ClusterQueue are tried (0 = all that fit).
 *
 * Policy switches (struct fq_policy; docs/policies.md):
 *   max_admissions_per_cq_per_cycle  Kueue: 1
 *   migrate_to_preferred_flavor      a reserved workload waiting on a
 *                                    check moves to an earlier flavor that
 *                                    now fits (Kueue: off)
 *   flavor_failure_cooldown          flavors named in the avoid-flavors
 *                                    annotation (set here on a check
 *                                    Retry, or by capacity on a stockout)
 *                                    are tried last until their time
 *                                    (Kueue: off)
 *
 * What it does not do: create or read Pods, Jobs or ProvisioningRequests
 * (jobframework.c, provcheck.c), write check states (the check
 * controllers), fair sharing, TAS. Elastic slices: kueue_slices.c.
 */
#include "kueue.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/objects.h"
#include "flexq/quantity.h"
#include "kueue_policy.h"
#include "kueue_slices.h"
#include "smap.h"
#include "timescale.h"

/* --- controller state ---------------------------------------------------- */

struct snap;
struct rec;

/* A lifecycle deadline: the workload `key` has a transition due at `t`
 * (a backoff ending, a PodsReady timeout). Entries whose key holds
 * another time since are stale and skipped. */
struct timer {
    int64_t t;
    char *key; /* owned */
};

/*
 * One ClusterQueue's pending workloads in the order of Kueue's heap
 * (wl_cmp): `act` may give the next head, `park` holds the inadmissible
 * ones until capacity changes. Each is sorted; the live entries are
 * act[alo..nact) and park[plo..npark), so taking the head costs nothing.
 */
struct pq {
    struct rec **act, **park;
    size_t alo, nact, capact, plo, npark, cappark;
};

/*
 * Keys ("ns/name") to look at in the next pass: appended as changes come,
 * duplicates and all, into one buffer, and read back sorted in the
 * store's order, each once (kl_sorted). A change costs an append, not a
 * hash set's lookup, copy and later clearing; the memory is kept between
 * passes. Nothing adds to a list while a pass reads it (on_change is
 * never called during a run).
 */
struct keylist {
    struct fq_buf bytes;    /* the keys, each NUL-terminated */
    size_t *off, n, capoff; /* where each starts in bytes */
    const char **sorted;    /* kl_sorted's answer, into bytes */
    size_t capsorted;
};

/* A podset shape's outcome on a ClusterQueue (ff_quiet). */
struct memo {
    uint64_t ver;
    int8_t mode; /* enum fq_adm_mode */
};

struct kueue {
    bool need_cycle;         /* something changed: run a cycle when due */
    bool requeue;            /* capacity changed: retry inadmissible ones */
    int64_t last_cycle;      /* engine time of the last cycle */
    int64_t cycle_ms;        /* policy.cycle_ms */
    struct fq_smap seen_gen; /* "kind/ns/name@generation" of config */
    /* The configuration (flavors, queues, quota tree), rebuilt only when
     * configuration changes. Its usage cells hold exactly the charges of
     * the records that hold quota (account()). */
    struct snap *snap;
    bool config_dirty;
    /* Every workload not Finished that has been seen: "ns/name" -> struct
     * rec (owned). Kept between runs and derived again only when its
     * workload (or the configuration) changes, so a run costs what
     * changed, not what is stored. */
    struct fq_smap recs;
    bool seeded;             /* recs was filled from the store once */
    struct fq_smap live;     /* keys of workloads seen and not Finished */
    struct keylist dirty;    /* keys whose record must be derived again */
    struct keylist lc_dirty; /* keys whose lifecycle() must run */
    struct fq_smap slices;   /* keys of elastic slices: derived every full
                                run (they depend on their old slice) */
    /* lifecycle deadlines: key -> (int64_t *) time, and a min-heap */
    struct fq_smap timers;
    struct timer *tq;
    size_t ntq, captq;
    int64_t lc_timer;         /* the deadline lifecycle() asks for (one call) */
    bool lc_changed, lc_spec; /* what that call changed (anything; spec) */
    /* Pending queues, one per ClusterQueue of the snapshot. */
    struct pq *pq;
    /* A cycle's scratch, one entry per ClusterQueue of the snapshot
     * (sized by rebuild and kept, so that a cycle allocates nothing): the
     * cursor into each act array, the heads taken, whether the queue is
     * blocked, a round's heads and their nominations (fq_adm_assign's
     * results, indexed by queue). The heads a cycle handled and the
     * migration pass's copy of mig grow as needed and are kept too. */
    size_t *cq_cur;
    int *cq_taken;
    bool *cq_blocked;
    struct rec **heads;
    struct fq_adm_result *nom; /* a round's nomination of each queue's head */
    struct rec **handled, **mig_copy;
    size_t caphandled, capmig_copy;
    /* The records holding quota, sorted by key, and their holder views
     * (preemption candidates; hs[i] describes hw[i]). A cycle appends
     * the workloads it admits and sorts them in when it ends. */
    struct rec **hw;
    struct fq_adm_holder *hs;
    size_t nh, caph, nh_sorted;
    bool in_cycle;
    /* Reserved workloads waiting on a check, sorted by key: the ones the
     * migrate_to_preferred_flavor switch looks at. */
    struct rec **mig;
    size_t nmig, capmig;
    /* Whether a pass over them may move one: a candidate came (or was
     * derived again), quota was released, or a cool-down ends by
     * mig_retry; otherwise every one of them would find what it found. */
    bool mig_dirty;
    int64_t mig_retry;
    /* Which of them a pass must look at. One that tried before finds
     * what it found unless quota was released since on a flavor it may
     * move to, or its cool-down ended; so when no release since the
     * last pass (mig_rel, a bit per flavor) was on a flavor some
     * candidate may move to (mig_to counts them per flavor) and no
     * cool-down ended, a pass looks at the candidates that came since
     * (mig_new, unsorted) and not at every one. */
    struct rec **mig_new;
    size_t nmig_new, capmig_new;
    uint64_t mig_rel;
    int mig_to[FQ_ADM_MAX_FLAVORS];
    /* Queue counts: per ClusterQueue and LocalQueue of the snapshot,
     * [0] pending, [1] reserving, [2] admitted; usage of admitted
     * workloads per ClusterQueue and (flavor, resource). */
    int (*cqn)[3];
    int (*lqn)[3];
    int64_t *adm_use;
    bool counts_dirty;   /* the queues' status may differ from the stored */
    int64_t last_status; /* engine time of the last write of it */
    uint64_t cycle_no;   /* records handled in cycle n carry done = n */
    uint64_t park_gen;   /* a record is parked iff its parked == park_gen */
    /* Per flavor, bumped whenever held quota on it goes down. */
    uint64_t rel_flv[FQ_ADM_MAX_FLAVORS];
    bool quota_moved; /* the running cycle reserved, preempted or moved */
    /* Cycles ahead, with a cycle pace (ff_plan): podset shapes interned
     * ("shape key" -> id + 1), the outcome of a shape on a ClusterQueue
     * for the snapshot as it is (memo[shape * ncq + cq], valid while its
     * ver is snap_ver), and the quiet cycles planned after last_cycle. */
    struct fq_smap shapes;
    int nshapes;
    struct memo *memo;
    /* The podset view (struct psview) of each distinct spec.podSets seen
     * since the snapshot was built, by fp_value hash in hex: workloads
     * of one job shape share it, so a new one decodes no pod template. */
    struct fq_smap psviews;
    /* Likewise the usage view (struct admview) of each distinct
     * status.admission: workloads of a shape on a flavor share it, so a
     * holder's status write decodes no admission. */
    struct fq_smap admviews;
    size_t memo_cap;
    uint64_t snap_ver; /* bumped whenever usage or configuration moves */
    uint64_t q_ver;    /* bumped whenever a pending queue changes */
    int64_t ff_n;      /* quiet cycles planned after last_cycle */
    int64_t ff_at;     /* engine time the plan was made */
    bool ff_incl;      /* replay the cycle at the next run's own time too */
    bool ff_slept;     /* the plan ends with no head left: need_cycle off */
    int64_t ran_at;    /* engine time of the last run */
    uint64_t ff_snap_ver, ff_q_ver;
    int64_t ff_len; /* how many cycles the next plan may look ahead */
    struct fq_kueue_stats stats;
};

/* --- small helpers on object trees ------------------------------------- */

static void fmt_time(int64_t ms, char *buf, size_t n)
{
    fq_time_format(ms, buf, n);
}

static int64_t parse_time(const char *s, int64_t def)
{
    int64_t ms;
    if (!s || fq_time_parse(s, &ms) != 0)
        return def;
    return ms;
}

/* Member `key` of map m as a string, or def (fq_value_path_str for one
 * key, without parsing a path: these run for every change). */
static const char *str_at(const struct fq_value *m, const char *key,
                          const char *def)
{
    const char *s = fq_value_as_str(fq_map_get(m, key));
    return s ? s : def;
}

/* Member `key` of map m as an integer, or def (fq_value_path_int for
 * one key). */
static int64_t int_at(const struct fq_value *m, const char *key, int64_t def)
{
    const struct fq_value *n = fq_map_get(m, key);
    return n && n->type == FQ_V_NUM && n->u.num.is_int ? n->u.num.i : def;
}

/* Member `key` of an object's status (status.<key>), or NULL. */
static struct fq_value *status_get(const struct fq_value *obj, const char *key)
{
    return fq_map_get(fq_map_get(obj, "status"), key);
}

static const struct fq_value *conds_get(const struct fq_value *obj)
{
    return status_get(obj, "conditions");
}

/* A condition's type, or "" (str_at(x, "type", "")). Conditions are
 * read on every change of a workload, and flexq and Kubernetes write
 * the type first: there it is found without a call. */
static const char *cond_type(const struct fq_value *x)
{
    if (x && x->type == FQ_V_MAP && x->u.map.n > 0) {
        const struct fq_member *m = &x->u.map.items[0];
        if (m->klen == 4 && !memcmp(m->key, "type", 4)) {
            const char *t = fq_value_as_str(m->val);
            return t ? t : "";
        }
    }
    return str_at(x, "type", "");
}

/* The first condition of a type (status.conditions[].type), or NULL. */
static struct fq_value *cond_find(const struct fq_value *obj, const char *type)
{
    const struct fq_value *c = conds_get(obj);
    for (size_t i = 0; i < fq_value_len(c); i++) {
        struct fq_value *x = fq_seq_at(c, i);
        const char *t = cond_type(x);
        if (t[0] == type[0] && !strcmp(t, type))
            return x;
    }
    return NULL;
}

/* Is this condition (NULL: absent) True? */
static bool cond_is_true(const struct fq_value *c)
{
    return c && !strcmp(str_at(c, "status", ""), "True");
}

static bool cond_true(const struct fq_value *obj, const char *type)
{
    return cond_is_true(cond_find(obj, type));
}

/* The condition types the controller reads of a Workload, for cond_scan. */
enum cond_type {
    C_QUOTA_RESERVED,
    C_ADMITTED,
    C_EVICTED,
    C_REQUEUED,
    C_FINISHED,
    C_DEACTIVATION_TARGET,
    C_PODS_READY,
    NCOND
};

static const char *const cond_names[NCOND] = {
    "QuotaReserved", "Admitted",           "Evicted",  "Requeued",
    "Finished",      "DeactivationTarget", "PodsReady"};

/* The enum cond_type of a condition type, or -1. The names begin with
 * different letters: the first one picks the only name to compare. */
static int cond_index(const char *type)
{
    int t;
    switch (type[0]) {
    case 'Q':
        t = C_QUOTA_RESERVED;
        break;
    case 'A':
        t = C_ADMITTED;
        break;
    case 'E':
        t = C_EVICTED;
        break;
    case 'R':
        t = C_REQUEUED;
        break;
    case 'F':
        t = C_FINISHED;
        break;
    case 'D':
        t = C_DEACTIVATION_TARGET;
        break;
    case 'P':
        t = C_PODS_READY;
        break;
    default:
        return -1;
    }
    return strcmp(type, cond_names[t]) ? -1 : t;
}

/*
 * The first condition of each type of enum cond_type (as cond_find would
 * give it), in one pass over status.conditions: what is read of every
 * changed workload reads its conditions once, not once per type.
 */
static void cond_scan(const struct fq_value *obj,
                      const struct fq_value *found[NCOND])
{
    for (int t = 0; t < NCOND; t++)
        found[t] = NULL;
    const struct fq_value *c = conds_get(obj);
    for (size_t i = 0; i < fq_value_len(c); i++) {
        const struct fq_value *x = fq_seq_at(c, i);
        int t = cond_index(cond_type(x));
        if (t >= 0 && !found[t])
            found[t] = x;
    }
}

static const char *cond_reason(const struct fq_value *obj, const char *type)
{
    return str_at(cond_find(obj, type), "reason", "");
}

/*
 * The members of a condition cond_set reads and may replace (the first
 * of each key, as fq_map_get would find it), found in one pass over its
 * few members, so that each is read, compared and replaced without
 * another lookup.
 */
struct cond_members {
    struct fq_member *status, *time, *reason, *message, *gen;
};

/* Is x's key `key`? Inline, the literal's length is a constant: a
 * length compare rules out most members without reading a byte. */
static inline bool member_is(const struct fq_member *x, const char *key)
{
    size_t n = strlen(key);
    return x->klen == n && !memcmp(x->key, key, n);
}

static void cond_members(struct fq_value *c, struct cond_members *m)
{
    memset(m, 0, sizeof(*m));
    for (size_t i = 0; i < c->u.map.n; i++) {
        struct fq_member *x = &c->u.map.items[i];
        if (member_is(x, "status"))
            m->status = m->status ? m->status : x;
        else if (member_is(x, "lastTransitionTime"))
            m->time = m->time ? m->time : x;
        else if (member_is(x, "reason"))
            m->reason = m->reason ? m->reason : x;
        else if (member_is(x, "message"))
            m->message = m->message ? m->message : x;
        else if (member_is(x, "observedGeneration"))
            m->gen = m->gen ? m->gen : x;
    }
}

/* Sets member x of condition c (when NULL, a new member `key`, and then
 * m is found again: appending may move the members) to val (owned). */
static void cond_put(struct fq_value *c, struct cond_members *m,
                     struct fq_member *x, const char *key, struct fq_value *val)
{
    if (x) {
        fq_value_free(x->val);
        x->val = val;
        return;
    }
    fq_map_set(c, key, val);
    cond_members(c, m);
}

/* cond_put of the string v unless x holds it already; true when it
 * changed. */
static bool cond_put_str(struct fq_value *c, struct cond_members *m,
                         struct fq_member *x, const char *key, const char *v)
{
    const char *old = x ? fq_value_as_str(x->val) : NULL;
    if (old && !strcmp(old, v))
        return false;
    cond_put(c, m, x, key, fq_value_str(v));
    return true;
}

/*
 * Sets a condition as Kubernetes' meta.SetStatusCondition does: the
 * transition time changes only when the status does. Returns true when
 * anything changed (callers that edit in place say so to the store only
 * then).
 */
static bool cond_set(struct fq_value *obj, const char *type, const char *status,
                     const char *reason, const char *message, int64_t now)
{
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    struct fq_value *conds = fq_map_get(st, "conditions");
    bool changed = false;
    if (!conds || conds->type != FQ_V_SEQ) {
        conds = fq_value_seq();
        fq_map_set(st, "conditions", conds);
        changed = true;
    }
    struct fq_value *c = NULL; /* the last of its type */
    for (size_t i = 0; i < conds->u.seq.n; i++) {
        struct fq_value *x = conds->u.seq.items[i];
        const char *t = cond_type(x);
        if (t[0] == type[0] && !strcmp(t, type))
            c = x;
    }
    int64_t gen = int_at(fq_map_get(obj, "metadata"), "generation", 0);
    char ts[40];
    if (!c) { /* a new one, its members in the order an update gives */
        fmt_time(now, ts, sizeof(ts));
        c = fq_value_map();
        fq_map_set(c, "type", fq_value_str(type));
        fq_map_set(c, "status", fq_value_str(status));
        fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
        fq_map_set(c, "reason", fq_value_str(reason));
        fq_map_set(c, "message", fq_value_str(message));
        if (gen > 0)
            fq_map_set(c, "observedGeneration", fq_value_int(gen));
        fq_seq_push(conds, c);
        return true;
    }
    struct cond_members m;
    cond_members(c, &m);
    const char *old = m.status ? fq_value_as_str(m.status->val) : NULL;
    if (strcmp(old ? old : "", status) || !m.time || !m.time->val) {
        fmt_time(now, ts, sizeof(ts));
        cond_put(c, &m, m.status, "status", fq_value_str(status));
        cond_put(c, &m, m.time, "lastTransitionTime", fq_value_str(ts));
        changed = true;
    }
    changed |= cond_put_str(c, &m, m.reason, "reason", reason);
    changed |= cond_put_str(c, &m, m.message, "message", message);
    const struct fq_value *og = m.gen ? m.gen->val : NULL;
    if (gen > 0 && !(og && og->type == FQ_V_NUM && og->u.num.is_int &&
                     og->u.num.i == gen)) {
        cond_put(c, &m, m.gen, "observedGeneration", fq_value_int(gen));
        changed = true;
    }
    return changed;
}

/* Sets an existing condition False (no-op when absent); true when it
 * changed. */
static bool cond_clear(struct fq_value *obj, const char *type,
                       const char *reason, const char *message, int64_t now)
{
    return cond_find(obj, type) &&
           cond_set(obj, type, "False", reason, message, now);
}

static void wl_key(const char *ns, const char *name, char *buf, size_t n)
{
    size_t a = strlen(ns), b = strlen(name);
    if (a + b + 2 > n) {
        snprintf(buf, n, "%s/%s", ns, name);
        return;
    }
    memcpy(buf, ns, a);
    buf[a] = '/';
    memcpy(buf + a + 1, name, b + 1);
}

/* The namespace of an "ns/name" key into ns (cut to n - 1 bytes, as
 * snprintf would); returns the name, or NULL when the key has no '/'. */
static const char *key_split(const char *key, char *ns, size_t n)
{
    size_t l = strcspn(key, "/");
    size_t c = l < n ? l : n - 1;
    memcpy(ns, key, c);
    ns[c] = '\0';
    return key[l] ? key + l + 1 : NULL;
}

static const struct fq_value *stored(struct fq_engine *e, enum fq_kind k,
                                     const char *ns, const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), k, ns, name);
    return o ? o->obj : NULL;
}

/* --- the configuration snapshot ---------------------------------------- */

struct check_info {
    char *name;
    uint64_t on_flv; /* bit per flavor; 0 = all flavors */
};

struct cq_info {
    char *name;
    char *reserved_msg; /* QuotaReserved=True's message, made once */
    int adm;            /* index in the fq_adm */
    bool active;
    char *inactive_reason;
    char *inactive_msg;
    struct fq_clusterqueue view; /* decoded; borrows from the store */
    uint64_t all_flv;
    int nchecks;
    struct check_info *checks;
    /* counts for status */
    int pending, reserving, admitted;
};

struct lq_info {
    char *ns, *name, *cq;
    enum fq_stop_policy stop;
    int pending, reserving, admitted;
};

struct flv_info {
    bool exists;
    struct fq_resourceflavor view;
};

struct snap {
    struct fq_adm adm;
    /* Some ClusterQueue may preempt: only then are the workloads holding
     * quota kept as candidates (with none, fq_adm_assign never looks at
     * them). */
    bool preempts;
    struct cq_info *cqs;
    int ncq;
    struct lq_info *lqs;
    int nlq;
    struct flv_info flv[FQ_ADM_MAX_FLAVORS];
    bool have_pods_res;
};

static int find_cq(const struct snap *s, const char *name)
{
    for (int i = 0; i < s->ncq; i++)
        if (!strcmp(s->cqs[i].name, name))
            return i;
    return -1;
}

static struct lq_info *find_lq(struct snap *s, const char *ns, const char *name)
{
    for (int i = 0; i < s->nlq; i++)
        if (!strcmp(s->lqs[i].ns, ns) && !strcmp(s->lqs[i].name, name))
            return &s->lqs[i];
    return NULL;
}

static void set_quota(struct fq_adm *a, int node,
                      const struct fq_flavor_quotas *fq, int flv)
{
    for (size_t r = 0; r < fq->n_resources; r++) {
        const struct fq_resource_quota *q = &fq->resources[r];
        int ri = fq_adm_find_resource(a, q->name);
        if (ri < 0)
            continue;
        struct fq_adm_cell *c = fq_adm_cell(a, node, flv, ri);
        c->nominal = q->nominal;
        c->borrow_limit =
            q->has_borrowing_limit ? q->borrowing_limit : FQ_ADM_UNLIMITED;
        c->lend_limit =
            q->has_lending_limit ? q->lending_limit : FQ_ADM_UNLIMITED;
    }
}

static enum fq_adm_policy map_policy(enum fq_preempt_policy p)
{
    switch (p) {
    case FQ_PREEMPT_LOWER_PRIORITY:
        return FQ_ADM_LOWER_PRIORITY;
    case FQ_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY:
        return FQ_ADM_LOWER_OR_NEWER_EQUAL_PRIORITY;
    case FQ_PREEMPT_ANY:
        return FQ_ADM_ANY;
    case FQ_PREEMPT_NEVER:
        break;
    }
    return FQ_ADM_NEVER;
}

struct cohort_ent {
    char *name;
    int node;
    struct fq_cohort view;
    bool has_view;
    char *parent;
};

static int cohort_node(struct fq_adm *a, struct cohort_ent **cs, size_t *n,
                       size_t *cap, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*cs)[i].name, name))
            return (*cs)[i].node;
    FQ_GROW(*cs, *cap, *n + 1);
    struct cohort_ent *c = &(*cs)[(*n)++];
    memset(c, 0, sizeof(*c));
    c->name = fq_xstrdup(name);
    c->node = fq_adm_add_node(a, false);
    return c->node;
}

static void snap_build(struct snap *s, struct fq_engine *e)
{
    struct fq_objstore *st = fq_engine_store(e);
    const struct fq_object **objs;
    memset(s, 0, sizeof(*s));
    fq_adm_init(&s->adm);

    /* Flavors. */
    size_t n = fq_objstore_list(st, FQ_KIND_RESOURCEFLAVOR, NULL, &objs);
    for (size_t i = 0; i < n; i++) {
        int f = fq_adm_flavor(&s->adm, objs[i]->name);
        if (f < 0)
            continue;
        if (fq_resourceflavor_decode(objs[i]->obj, NULL, &s->flv[f].view,
                                     NULL) == 0)
            s->flv[f].exists = true;
    }
    free(objs);

    /* ClusterQueues: decode, intern resources and referenced flavors. */
    const struct fq_object **cqo;
    size_t ncq = fq_objstore_list(st, FQ_KIND_CLUSTERQUEUE, NULL, &cqo);
    s->cqs = fq_xcalloc(ncq + 1, sizeof(*s->cqs));
    for (size_t i = 0; i < ncq; i++) {
        struct cq_info *c = &s->cqs[s->ncq];
        if (fq_clusterqueue_decode(cqo[i]->obj, NULL, &c->view, NULL) != 0)
            continue;
        c->name = fq_xstrdup(cqo[i]->name);
        struct fq_buf b = FQ_BUF_INIT;
        fq_buf_printf(&b, "Quota reserved in ClusterQueue %s", c->name);
        c->reserved_msg = fq_xstrdup(fq_buf_str(&b));
        fq_buf_release(&b);
        s->ncq++;
        for (size_t g = 0; g < c->view.n_groups; g++) {
            const struct fq_resource_group *rg = &c->view.groups[g];
            for (size_t r = 0; r < rg->n_covered; r++) {
                fq_adm_resource(&s->adm, rg->covered[r]);
                if (!strcmp(rg->covered[r], "pods"))
                    s->have_pods_res = true;
            }
            for (size_t f = 0; f < rg->n_flavors; f++)
                fq_adm_flavor(&s->adm, rg->flavors[f].name);
        }
    }
    free(cqo);
    const struct fq_object **coo;
    size_t nco = fq_objstore_list(st, FQ_KIND_COHORT, NULL, &coo);
    struct cohort_ent *cos = NULL;
    size_t ncos = 0, capcos = 0;
    /* Cohort quotas may name resources too. */
    struct fq_cohort *coviews = fq_xcalloc(nco + 1, sizeof(*coviews));
    bool *cook = fq_xcalloc(nco + 1, sizeof(bool));
    for (size_t i = 0; i < nco; i++) {
        if (fq_cohort_decode(coo[i]->obj, NULL, &coviews[i], NULL) != 0)
            continue;
        cook[i] = true;
        for (size_t g = 0; g < coviews[i].n_groups; g++) {
            const struct fq_resource_group *rg = &coviews[i].groups[g];
            for (size_t r = 0; r < rg->n_covered; r++)
                fq_adm_resource(&s->adm, rg->covered[r]);
            for (size_t f = 0; f < rg->n_flavors; f++)
                fq_adm_flavor(&s->adm, rg->flavors[f].name);
        }
    }

    /* Nodes: cohorts first (explicit), then CQs. */
    for (size_t i = 0; i < nco; i++) {
        if (!cook[i])
            continue;
        int node = cohort_node(&s->adm, &cos, &ncos, &capcos, coo[i]->name);
        for (size_t g = 0; g < coviews[i].n_groups; g++) {
            const struct fq_resource_group *rg = &coviews[i].groups[g];
            for (size_t f = 0; f < rg->n_flavors; f++) {
                int fi = fq_adm_find_flavor(&s->adm, rg->flavors[f].name);
                if (fi >= 0)
                    set_quota(&s->adm, node, &rg->flavors[f], fi);
            }
        }
    }
    for (size_t i = 0; i < nco; i++) {
        if (!cook[i] || !coviews[i].parent)
            continue;
        int node = cohort_node(&s->adm, &cos, &ncos, &capcos, coo[i]->name);
        int parent =
            cohort_node(&s->adm, &cos, &ncos, &capcos, coviews[i].parent);
        /* Refuse a cycle: walk up from the parent. */
        int p = parent, guard = 0;
        while (p >= 0 && p != node && guard++ < 1000)
            p = s->adm.nodes[p].parent;
        if (p != node)
            s->adm.nodes[node].parent = parent;
    }
    for (int i = 0; i < s->ncq; i++) {
        struct cq_info *c = &s->cqs[i];
        struct fq_clusterqueue *v = &c->view;
        c->adm = fq_adm_add_cq(&s->adm);
        struct fq_adm_cq *ac = &s->adm.cqs[c->adm];
        if (v->cohort)
            s->adm.nodes[ac->node].parent =
                cohort_node(&s->adm, &cos, &ncos, &capcos, v->cohort);
        c->active = true;
        ac->ngroups = (int)v->n_groups;
        ac->groups = fq_xcalloc(v->n_groups + 1, sizeof(*ac->groups));
        for (size_t g = 0; g < v->n_groups; g++) {
            const struct fq_resource_group *rg = &v->groups[g];
            struct fq_adm_group *ag = &ac->groups[g];
            for (size_t r = 0; r < rg->n_covered; r++) {
                int ri = fq_adm_find_resource(&s->adm, rg->covered[r]);
                if (ri >= 0)
                    ag->res_mask |= 1u << ri;
            }
            for (size_t f = 0; f < rg->n_flavors && f < FQ_ADM_MAX_FLAVORS;
                 f++) {
                int fi = fq_adm_find_flavor(&s->adm, rg->flavors[f].name);
                if (fi < 0)
                    continue;
                ag->flv[ag->nflv++] = (uint8_t)fi;
                c->all_flv |= 1ull << fi;
                set_quota(&s->adm, ac->node, &rg->flavors[f], fi);
                if (!s->flv[fi].exists && c->active) {
                    c->active = false;
                    c->inactive_reason = fq_xstrdup("FlavorNotFound");
                    c->inactive_msg = fq_xasprintf(
                        "Can't admit new workloads: references missing "
                        "ResourceFlavor(s): [%s]",
                        rg->flavors[f].name);
                }
            }
        }
        ac->strategy = v->queueing_strategy == FQ_STRICT_FIFO ?
                           FQ_ADM_STRICT_FIFO :
                           FQ_ADM_BEST_EFFORT_FIFO;
        ac->within_cq = map_policy(v->preemption.within_cluster_queue);
        ac->reclaim_within_cohort =
            map_policy(v->preemption.reclaim_within_cohort);
        ac->borrow_within_cohort =
            map_policy(v->preemption.borrow_within_cohort);
        s->preempts |= ac->within_cq != FQ_ADM_NEVER ||
                       ac->reclaim_within_cohort != FQ_ADM_NEVER ||
                       ac->borrow_within_cohort != FQ_ADM_NEVER;
        ac->has_borrow_threshold = v->preemption.has_max_priority_threshold;
        ac->borrow_threshold = (int32_t)v->preemption.max_priority_threshold;
        ac->can_borrow_try_next =
            v->fungibility.when_can_borrow == FQ_FUNG_TRY_NEXT_FLAVOR;
        ac->can_preempt_try_next =
            v->fungibility.when_can_preempt == FQ_FUNG_TRY_NEXT_FLAVOR;
        ac->preemption_over_borrowing =
            v->fungibility.preference == FQ_PREFER_PREEMPTION_OVER_BORROWING;
        c->nchecks = (int)v->n_checks;
        c->checks = fq_xcalloc(v->n_checks + 1, sizeof(*c->checks));
        for (size_t k = 0; k < v->n_checks; k++) {
            c->checks[k].name = fq_xstrdup(v->checks[k].name);
            for (size_t f = 0; f < v->checks[k].n_on_flavors; f++) {
                int fi =
                    fq_adm_find_flavor(&s->adm, v->checks[k].on_flavors[f]);
                if (fi >= 0)
                    c->checks[k].on_flv |= 1ull << fi;
            }
            if (c->active &&
                !stored(e, FQ_KIND_ADMISSIONCHECK, "", v->checks[k].name)) {
                c->active = false;
                c->inactive_reason = fq_xstrdup("AdmissionCheckNotFound");
                c->inactive_msg = fq_xasprintf(
                    "Can't admit new workloads: references missing "
                    "AdmissionCheck(s): [%s]",
                    v->checks[k].name);
            }
        }
        if (c->active && v->stop_policy != FQ_STOP_NONE) {
            c->active = false;
            c->inactive_reason = fq_xstrdup("Stopped");
            c->inactive_msg =
                fq_xstrdup("Can't admit new workloads: is stopped");
        }
    }
    fq_adm_finish(&s->adm);
    for (size_t i = 0; i < ncos; i++)
        free(cos[i].name);
    free(cos);
    for (size_t i = 0; i < nco; i++)
        if (cook[i])
            fq_cohort_release(&coviews[i]);
    free(coviews);
    free(cook);
    free(coo);

    /* LocalQueues. */
    size_t nlq = fq_objstore_list(st, FQ_KIND_LOCALQUEUE, NULL, &objs);
    s->lqs = fq_xcalloc(nlq + 1, sizeof(*s->lqs));
    for (size_t i = 0; i < nlq; i++) {
        const char *cq =
            fq_value_path_str(objs[i]->obj, "spec.clusterQueue", NULL);
        if (!cq)
            continue;
        struct lq_info *l = &s->lqs[s->nlq++];
        l->ns = fq_xstrdup(objs[i]->ns);
        l->name = fq_xstrdup(objs[i]->name);
        l->cq = fq_xstrdup(cq);
        l->stop = fq_kueue_lq_stop(objs[i]->obj);
    }
    free(objs);
}

static void snap_release(struct snap *s)
{
    for (int i = 0; i < s->ncq; i++) {
        struct cq_info *c = &s->cqs[i];
        free(c->name);
        free(c->reserved_msg);
        free(c->inactive_reason);
        free(c->inactive_msg);
        for (int k = 0; k < c->nchecks; k++)
            free(c->checks[k].name);
        free(c->checks);
        fq_clusterqueue_release(&c->view);
    }
    free(s->cqs);
    for (int i = 0; i < s->nlq; i++) {
        free(s->lqs[i].ns);
        free(s->lqs[i].name);
        free(s->lqs[i].cq);
    }
    free(s->lqs);
    for (int f = 0; f < FQ_ADM_MAX_FLAVORS; f++)
        if (s->flv[f].exists)
            fq_resourceflavor_release(&s->flv[f].view);
    fq_adm_release(&s->adm);
}

/* --- workloads, compact ------------------------------------------------- */

/* What the scheduler needs of a workload, derived from its stored object
 * and the snapshot (rec_derive). */
struct wl {
    char *ns, *name, *uid; /* owned */
    int cq;                /* snapshot index, or -1 */
    struct lq_info *lq;
    int32_t prio;
    int64_t created, qts, reserved_at;
    bool holds; /* holds quota */
    bool admitted;
    bool pending; /* may be scheduled now */
    bool evicting;
    int npodsets; /* built for pending and waiting_check workloads */
    struct fq_adm_podset *ps; /* owned, npodsets */
    char **psname;            /* owned, npodsets */
    int64_t *req;             /* owned, npodsets * nres */
    char *avoid_ann;          /* owned copy of the avoid-flavors annotation */
    uint64_t avoid;           /* its mask, computed at the time of use */
    char *why_msg;            /* the QuotaReserved=False message now stored */
    /* quota held: nuse (flavor * nres + resource, amount) pairs, owned */
    int nuse;
    uint16_t *use_fr;
    int64_t *use_amt;
    uint64_t assigned_flv; /* bit per flavor of the current admission */
    bool waiting_check;    /* reserved, a check applies, none Ready yet */
    bool nom_fit;          /* nominated this cycle as a Fit */
    bool nom_borrows;      /* ... and borrowing */
    /* Elastic slice (kueue_slices.c): the Workload it replaces (owned, or
     * NULL) and, while that one holds quota, its flavors and counts. */
    char *replaces;
    bool is_slice;
    int8_t slice_flv[FQ_ADM_MAX_PODSETS];
    int32_t slice_base[FQ_ADM_MAX_PODSETS];
};

/*
 * A live workload's record, kept between runs ("ns/name" in struct
 * kueue's recs). Its membership of the pending queues, the holders and
 * the migration candidates, and what it adds to usage and counts, follow
 * from `w` and are changed only by rec_detach / rec_attach and the
 * scheduler's own transitions (reserve, park), so they never disagree.
 */
struct rec {
    struct wl w;    /* first member: a struct wl * of a record is the record */
    char *key;      /* "ns/name", owned */
    bool ok;        /* its workload decodes: it takes part */
    bool accounted; /* w's usage and counts are in the snapshot */
    int qcq;        /* the ClusterQueue whose pending queue holds it, -1 */
    /* == park_gen: in that queue's park array, not act (a generation,
     * so that a requeue moves every parked record back without writing
     * to each one) */
    uint64_t in_park_gen;
    bool holder;      /* in hw / hs */
    bool in_mig;      /* in mig */
    bool in_mig_new;  /* in mig_new */
    uint64_t done;    /* == cycle_no: handled in the running cycle */
    uint64_t parked;  /* == park_gen: inadmissible until capacity changes */
    uint64_t own_rev; /* revision of our last QuotaReserved=False message */
    /* A migration that did not fit stays impossible until quota is
     * released on a flavor it may move to (the sum of their rel_flv
     * moves) or a flavor cool-down ends. */
    bool mig_valid;
    uint64_t mig_sum;
    int64_t mig_retry;
    /* While a candidate (mig_add): the flavors a move may not go to (at
     * or after the latest one assigned, per group), as try_migrate would
     * find them each time until the record is derived again. */
    uint64_t mig_skip;
    /* Interned shape of its podsets (shape_of), -1 when it has none, or
     * SHAPE_UNKNOWN until ff_quiet first asks (a replay at the flexq
     * policy's pace never does). */
    int shape;
    bool in_slices; /* its key is in struct kueue's slices */
    /* From the spec, kept while spec_ok and the generation is spec_gen
     * (rec_derive decodes only the status then). */
    bool spec_ok, active;
    int64_t spec_gen;
    char *queue_name; /* owned, or NULL */
    /* What it was derived from (fingerprint()), while fp_ok. */
    uint64_t fp;
    bool fp_ok;
};

static void wl_release(struct wl *w)
{
    free(w->ns);
    free(w->name);
    free(w->uid);
    for (int i = 0; i < w->npodsets; i++)
        free(w->psname[i]);
    free(w->psname);
    free(w->ps);
    free(w->req);
    free(w->use_fr);
    free(w->use_amt);
    free(w->avoid_ann);
    free(w->why_msg);
    free(w->replaces);
}

static bool tolerated(const struct fq_taint *t, const struct fq_podspec *ps,
                      const struct fq_resourceflavor *f)
{
    if (t->effect == FQ_EFFECT_PREFER_NO_SCHEDULE)
        return true;
    for (size_t i = 0; i < ps->n_tolerations; i++)
        if (fq_toleration_tolerates(&ps->tolerations[i], t))
            return true;
    for (size_t i = 0; i < f->n_tolerations; i++)
        if (fq_toleration_tolerates(&f->tolerations[i], t))
            return true;
    return false;
}

static bool expr_matches(const struct fq_value *ex, const char *val)
{
    const char *op = fq_value_path_str(ex, "operator", "");
    const struct fq_value *vals = fq_map_get(ex, "values");
    bool in = false;
    for (size_t i = 0; val && i < fq_value_len(vals); i++)
        if (!strcmp(fq_value_as_str(fq_seq_at(vals, i)) ?
                        fq_value_as_str(fq_seq_at(vals, i)) :
                        "",
                    val))
            in = true;
    if (!strcmp(op, "In"))
        return in;
    if (!strcmp(op, "NotIn"))
        return !in;
    if (!strcmp(op, "Exists"))
        return val != NULL;
    if (!strcmp(op, "DoesNotExist"))
        return val == NULL;
    return true;
}

/* nodeSelector and required node affinity, on this flavor's label keys. */
static bool selector_ok(const struct fq_podspec *ps,
                        const struct fq_resourceflavor *f)
{
    for (size_t i = 0; i < ps->node_selector.n; i++) {
        const char *v =
            fq_kvs_get(&f->node_labels, ps->node_selector.items[i].key);
        if (v && strcmp(v, ps->node_selector.items[i].value))
            return false;
    }
    const struct fq_value *terms = fq_value_path(
        ps->affinity, "nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                      "Execution.nodeSelectorTerms");
    if (fq_value_len(terms) == 0)
        return true;
    for (size_t t = 0; t < fq_value_len(terms); t++) {
        const struct fq_value *exs =
            fq_map_get(fq_seq_at(terms, t), "matchExpressions");
        bool ok = true;
        for (size_t i = 0; i < fq_value_len(exs) && ok; i++) {
            const struct fq_value *ex = fq_seq_at(exs, i);
            const char *key = fq_value_path_str(ex, "key", "");
            bool has = false;
            for (size_t l = 0; l < f->node_labels.n; l++)
                if (!strcmp(f->node_labels.items[l].key, key))
                    has = true;
            if (!has)
                continue; /* only this flavor's keys are considered */
            ok = expr_matches(ex, fq_kvs_get(&f->node_labels, key));
        }
        if (ok)
            return true;
    }
    return false;
}

/* Parses "f=until,g=until" into a bit mask of flavors still cooling. */
static uint64_t avoid_mask(const struct fq_adm *a, const char *ann, int64_t now,
                           int64_t *next)
{
    uint64_t m = 0;
    if (!ann)
        return 0;
    char *dup = fq_xstrdup(ann), *save = NULL;
    for (char *tok = strtok_r(dup, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        while (*tok == ' ')
            tok++;
        int64_t until = parse_time(eq + 1, 0);
        int f = fq_adm_find_flavor(a, tok);
        if (f >= 0 && until > now) {
            m |= 1ull << f;
            if (until < *next)
                *next = until;
        }
    }
    free(dup);
    return m;
}

/* The time a workload is queued by: its creation (`created`), or the
 * time it was evicted by a check or (timestampEviction) a PodsReady
 * timeout; `ev` is its Evicted condition, or NULL. */
static int64_t queue_order_ts(int64_t created, const struct fq_value *ev,
                              const struct fq_engine_config *cfg)
{
    if (cond_is_true(ev)) {
        const char *r = str_at(ev, "reason", "");
        if (!strcmp(r, "AdmissionCheck") ||
            (!strcmp(r, "PodsReadyTimeout") &&
             cfg->pods_ready.timestamp_eviction))
            return parse_time(str_at(ev, "lastTransitionTime", NULL), created);
    }
    return created;
}

/* Public for the visibility API (queue positions use the same order). */
int64_t fq_kueue_queue_order_ts(const struct fq_value *wl,
                                const struct fq_engine_config *cfg)
{
    int64_t created = parse_time(
        fq_value_path_str(wl, "metadata.creationTimestamp", NULL), 0);
    return queue_order_ts(created, cond_find(wl, "Evicted"), cfg);
}

static int32_t priority_of(struct fq_engine *e, const struct fq_workload *v)
{
    if (v->has_priority)
        return (int32_t)v->priority;
    if (v->priority_class_name) {
        const struct fq_value *p = stored(e, FQ_KIND_WORKLOADPRIORITYCLASS, "",
                                          v->priority_class_name);
        if (p)
            return (int32_t)fq_value_path_int(p, "value", 0);
    }
    return 0;
}

/* Fills w's podsets from the decoded view (requests per resource index). */
static void wl_podsets(struct snap *s, struct wl *w,
                       const struct fq_workload *v)
{
    int nres = s->adm.nres > 0 ? s->adm.nres : 1;
    w->npodsets = (int)(v->n_podsets < FQ_ADM_MAX_PODSETS ? v->n_podsets :
                                                            FQ_ADM_MAX_PODSETS);
    w->req = fq_xcalloc((size_t)w->npodsets * (size_t)nres, sizeof(int64_t));
    w->ps = fq_xcalloc((size_t)w->npodsets + 1, sizeof(*w->ps));
    w->psname = fq_xcalloc((size_t)w->npodsets + 1, sizeof(*w->psname));
    for (int p = 0; p < w->npodsets; p++) {
        const struct fq_podset *ps = &v->podsets[p];
        struct fq_adm_podset *ap = &w->ps[p];
        w->psname[p] = fq_xstrdup(ps->name ? ps->name : "main");
        ap->name = w->psname[p];
        ap->count = (int32_t)ps->count;
        ap->min_count =
            ps->has_min_count ? (int32_t)ps->min_count : (int32_t)ps->count;
        ap->req = &w->req[p * nres];
        struct fq_resource rs[64];
        size_t nr = fq_podspec_requests(&ps->template.spec, rs, 64);
        if (nr > 64)
            nr = 64;
        for (size_t r = 0; r < nr; r++) {
            int ri = fq_adm_find_resource(&s->adm, rs[r].name);
            if (ri >= 0)
                w->req[p * nres + ri] = rs[r].value;
            else if (rs[r].value > 0)
                w->req[p * nres] += 0; /* not covered: see below */
        }
        if (s->have_pods_res) {
            int ri = fq_adm_find_resource(&s->adm, "pods");
            if (ri >= 0)
                w->req[p * nres + ri] = 1;
        }
        for (int f = 0; f < s->adm.nflv; f++) {
            if (!s->flv[f].exists)
                continue;
            const struct fq_resourceflavor *fv = &s->flv[f].view;
            if (selector_ok(&ps->template.spec, fv))
                ap->selector_ok |= 1ull << f;
            bool ok = true;
            for (size_t t = 0; t < fv->n_node_taints && ok; t++)
                ok = tolerated(&fv->node_taints[t], &ps->template.spec, fv);
            if (ok)
                ap->taint_ok |= 1ull << f;
        }
    }
}

/* A podSets subtree's view in a struct wl (wl_podsets' answer), kept
 * in struct kueue's psviews. */
struct psview {
    int npodsets;
    struct fq_adm_podset *ps; /* owned, npodsets */
    char **psname;            /* owned, npodsets */
    int64_t *req;             /* owned, npodsets * nres */
};

/* Copies the podsets of `from` to the empty ones of `to` (both wl_podsets'
 * shape: nres requests per podset, ps[p] pointing into req and psname). */
static void podsets_copy(int nres, const struct psview *from, struct psview *to)
{
    int n = from->npodsets;
    to->npodsets = n;
    to->req = fq_xcalloc((size_t)n * (size_t)nres, sizeof(int64_t));
    to->ps = fq_xcalloc((size_t)n + 1, sizeof(*to->ps));
    to->psname = fq_xcalloc((size_t)n + 1, sizeof(*to->psname));
    memcpy(to->req, from->req, (size_t)n * (size_t)nres * sizeof(int64_t));
    for (int p = 0; p < n; p++) {
        to->psname[p] = fq_xstrdup(from->psname[p]);
        to->ps[p] = from->ps[p];
        to->ps[p].name = to->psname[p];
        to->ps[p].req = &to->req[p * nres];
    }
}

static void psview_free(void *p)
{
    struct psview *v = p;
    for (int i = 0; i < v->npodsets; i++)
        free(v->psname[i]);
    free(v->psname);
    free(v->ps);
    free(v->req);
    free(v);
}

/* Sets the usage w holds (copies n pairs). */
static void wl_set_use(struct wl *w, int n, const uint16_t *fr,
                       const int64_t *amt)
{
    free(w->use_fr);
    free(w->use_amt);
    w->nuse = n;
    w->use_fr = fq_xmalloc(((size_t)n + 1) * sizeof(*w->use_fr));
    w->use_amt = fq_xmalloc(((size_t)n + 1) * sizeof(*w->use_amt));
    memcpy(w->use_fr, fr, (size_t)n * sizeof(*fr));
    memcpy(w->use_amt, amt, (size_t)n * sizeof(*amt));
}

/* What rec_derive reads of a status.admission, kept in struct kueue's
 * admviews. */
struct admview {
    int cq; /* snapshot index, or -1 */
    uint64_t assigned_flv;
    int nuse;
    uint16_t use_fr[FQ_ADM_MAX_FLAVORS];
    int64_t use_amt[FQ_ADM_MAX_FLAVORS];
};

/* The ClusterQueue and the usage an admission holds, from the decoded
 * status.admission. */
static void adm_view(struct snap *s, const struct fq_workload *v,
                     struct admview *av)
{
    uint16_t *use_fr = av->use_fr;
    int64_t *use_amt = av->use_amt;
    int nuse = 0;
    av->cq = find_cq(
        s, v->admission_cluster_queue ? v->admission_cluster_queue : "");
    av->assigned_flv = 0;
    for (size_t p = 0; p < v->n_assignments; p++) {
        const struct fq_podset_assignment *pa = &v->assignments[p];
        for (size_t r = 0; r < pa->resource_usage.n; r++) {
            const char *res = pa->resource_usage.items[r].name;
            const char *flv = fq_kvs_get(&pa->flavors, res);
            int ri = fq_adm_find_resource(&s->adm, res);
            int fi = flv ? fq_adm_find_flavor(&s->adm, flv) : -1;
            if (ri < 0 || fi < 0)
                continue;
            av->assigned_flv |= 1ull << fi;
            uint16_t fr = (uint16_t)(fi * s->adm.nres + ri);
            int k = 0;
            while (k < nuse && use_fr[k] != fr)
                k++;
            if (k == nuse) {
                if (nuse >= FQ_ADM_MAX_FLAVORS)
                    continue;
                use_fr[nuse] = fr;
                use_amt[nuse++] = 0;
            }
            use_amt[k] += pa->resource_usage.items[r].value;
        }
    }
    av->nuse = nuse;
}

/* --- transitions --------------------------------------------------------- */

/* Does check k of cq apply to a workload assigned `flv` (0 = no admission)? */
static bool check_applies(const struct snap *s, const struct cq_info *c,
                          const struct check_info *k, uint64_t flv)
{
    if (k->on_flv == 0)
        return true;
    if (flv == 0)
        return (c->all_flv & ~k->on_flv) == 0;
    (void)s;
    return (k->on_flv & flv) != 0;
}

/*
 * Brings status.admissionChecks in line with the checks that apply: new
 * ones Pending, ones that no longer apply removed.
 */
static bool sync_checks(const struct snap *s, const struct cq_info *c,
                        struct fq_value *obj, uint64_t flv, int64_t now)
{
    const struct fq_value *old = status_get(obj, "admissionChecks");
    /* The entries it should have, in the ClusterQueue's order: the
     * (last) one of that name kept, or a new Pending one (NULL). */
    int n = c ? c->nchecks : 0, nwant = 0;
    const struct fq_value **want = fq_xcalloc((size_t)n + 1, sizeof(*want));
    bool same = true;
    for (int k = 0; k < n; k++) {
        if (!check_applies(s, c, &c->checks[k], flv))
            continue;
        const struct fq_value *found = NULL;
        for (size_t i = 0; i < fq_value_len(old); i++)
            if (!strcmp(str_at(fq_seq_at(old, i), "name", ""),
                        c->checks[k].name))
                found = fq_seq_at(old, i);
        same &= found && fq_seq_at(old, (size_t)nwant) == found;
        want[nwant++] = found;
    }
    same &= old && old->type == FQ_V_SEQ && fq_value_len(old) == (size_t)nwant;
    if ((nwant == 0 && !old) || same) {
        free(want);
        return false; /* as it is */
    }
    struct fq_value *nw = fq_value_seq();
    char ts[40];
    fmt_time(now, ts, sizeof(ts));
    for (int i = 0; i < nwant; i++) {
        if (want[i]) {
            fq_seq_push(nw, fq_value_clone(want[i]));
            continue;
        }
        int k = 0; /* the i-th applicable check */
        for (int seen = -1; k < n; k++)
            if (check_applies(s, c, &c->checks[k], flv) && ++seen == i)
                break;
        struct fq_value *ch = fq_value_map();
        fq_map_set(ch, "name", fq_value_str(c->checks[k].name));
        fq_map_set(ch, "state", fq_value_str("Pending"));
        fq_map_set(ch, "lastTransitionTime", fq_value_str(ts));
        fq_map_set(ch, "message", fq_value_str(""));
        fq_seq_push(nw, ch);
    }
    free(want);
    fq_map_set(fq_map_ensure_map(obj, "status"), "admissionChecks", nw);
    return true;
}

/* Resets every non-Pending check to Pending, as Kueue does on eviction. */
static bool reset_checks(struct fq_value *obj, int64_t now)
{
    struct fq_value *chs = fq_value_path(obj, "status.admissionChecks");
    char ts[40];
    fmt_time(now, ts, sizeof(ts));
    bool changed = false;
    for (size_t i = 0; i < fq_value_len(chs); i++) {
        struct fq_value *ch = fq_seq_at(chs, i);
        const char *state = fq_value_path_str(ch, "state", "Pending");
        if (!strcmp(state, "Pending"))
            continue;
        changed = true;
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "Reset to Pending after eviction. Previously: %s", state);
        if (!strcmp(state, "Retry"))
            fq_map_set(
                ch, "retryCount",
                fq_value_int(fq_value_path_int(ch, "retryCount", 0) + 1));
        fq_map_set(ch, "state", fq_value_str("Pending"));
        fq_map_set(ch, "lastTransitionTime", fq_value_str(ts));
        fq_map_set(ch, "message", fq_value_str(msg));
        fq_map_del(ch, "podSetUpdates");
    }
    return changed;
}

/*
 * Releases a workload's quota (the end of an eviction): admission cleared,
 * QuotaReserved/Admitted False, checks reset, Requeued set per the reason.
 */
static void release_quota(struct kueue *k, struct fq_engine *e,
                          const struct snap *s, struct fq_value *obj,
                          int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    const char *reason = cond_reason(obj, "Evicted");
    char *r = fq_xstrdup(reason);
    char *msg =
        fq_xstrdup(fq_value_path_str(cond_find(obj, "Evicted"), "message", ""));
    struct fq_value *st = fq_map_ensure_map(obj, "status");
    fq_map_del(st, "admission");
    cond_set(obj, "QuotaReserved", "False", "PendingEvaluation",
             "The workload has no reservation", now);
    cond_set(obj, "Admitted", "False", "NoReservation",
             "The workload has no reservation", now);
    reset_checks(obj, now);
    /* Scoped checks no longer apply without an admission. */
    const char *cqn = fq_value_path_str(obj, "spec.queueName", "");
    (void)cqn;
    bool deactivated = !fq_value_path_bool(obj, "spec.active", true);
    if (deactivated) {
        cond_set(obj, "Requeued", "False", r, msg, now);
    } else if (!strcmp(r, "PodsReadyTimeout") || !strcmp(r, "AdmissionCheck")) {
        int64_t at = parse_time(
            fq_value_path_str(obj, "status.requeueState.requeueAt", NULL), 0);
        if (at > now) {
            cond_set(obj, "Requeued", "False", r, msg, now);
            if (at < k->lc_timer)
                k->lc_timer = at;
        } else {
            cond_set(obj, "Requeued", "True", "BackoffFinished",
                     "The workload backoff was finished", now);
        }
    } else {
        cond_set(obj, "Requeued", "True", r, msg, now);
    }
    (void)s;
    (void)cfg;
    k->requeue = true;
    k->stats.evictions++;
    k->lc_changed = true; /* the admission went */
    free(r);
    free(msg);
}

/* Marks a workload for eviction (Evicted=True) with a reason; true when
 * it changed. */
static bool evict(struct fq_value *obj, const char *reason, const char *msg,
                  int64_t now)
{
    return cond_set(obj, "Evicted", "True", reason, msg, now);
}

/* Sets spec.active=false with the conditions that say why (lifecycle();
 * a change of spec). */
static void deactivate(struct kueue *k, struct fq_value *obj, const char *cause,
                       const char *msg, int64_t now)
{
    if (fq_value_path_bool(obj, "spec.active", true)) {
        fq_value_set_path(obj, "spec.active", fq_value_bool(false));
        k->lc_spec = true;
    }
    char reason[96];
    snprintf(reason, sizeof(reason), "DeactivatedDueTo%s", cause);
    cond_set(obj, "DeactivationTarget", "True", reason, msg, now);
    cond_set(obj, "Evicted", "True", reason, msg, now);
    k->lc_changed = true;
}

static int64_t backoff_ms(const struct fq_pods_ready_config *c, int64_t count)
{
    int64_t d = c->backoff_base_ms;
    for (int64_t i = 1; i < count && d < c->backoff_max_ms; i++)
        d *= 2;
    return d < c->backoff_max_ms ? d : c->backoff_max_ms;
}

/*
 * One workload's non-scheduling transitions (checks, eviction, backoff,
 * PodsReady timeout, deactivation). Edits obj, the stored tree, in place,
 * and says what it changed in k->lc_changed (anything) and k->lc_spec
 * (spec.active): the caller tells the store. Its conditions are read in
 * one pass (cd: the caller's cond_scan of obj, which this updates), and
 * again after a step that changed something.
 */
static void lifecycle(struct kueue *k, struct fq_engine *e, struct snap *s,
                      struct fq_value *obj, const struct fq_value *cd[NCOND],
                      int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    if (cond_is_true(cd[C_FINISHED]))
        return;
    bool active = fq_value_path_bool(obj, "spec.active", true);
    const struct fq_value *adm = status_get(obj, "admission");
    bool has_adm = adm != NULL;
    const char *cqname = str_at(adm, "clusterQueue", "");
    int ci = find_cq(s, cqname);
    struct cq_info *c = ci >= 0 ? &s->cqs[ci] : NULL;

    /* maximumExecutionTimeSeconds and stop policies (kueue_policy.c). */
    struct fq_kueue_policy pol;
    fq_kueue_policy_check(e, obj, c ? c->view.stop_policy : FQ_STOP_NONE,
                          has_adm && active, cond_is_true(cd[C_ADMITTED]),
                          cond_is_true(cd[C_EVICTED]), now, &pol);
    if (pol.deactivate_cause) {
        deactivate(k, obj, pol.deactivate_cause, pol.msg, now);
        active = false;
        cond_scan(obj, cd);
    } else if (pol.evict_reason) {
        k->lc_changed |= evict(obj, pol.evict_reason, pol.msg, now);
        cond_scan(obj, cd);
    } else if (pol.wake_at < k->lc_timer) {
        k->lc_timer = pol.wake_at;
    }

    const struct fq_value *dt = cd[C_DEACTIVATION_TARGET];
    if (!active && !cond_is_true(cd[C_EVICTED]) &&
        (has_adm || !cond_is_true(dt))) {
        if (!dt)
            k->lc_changed |= cond_set(obj, "Evicted", "True", "Deactivated",
                                      "The workload is deactivated", now);
        else
            k->lc_changed |=
                cond_set(obj, "Evicted", "True", str_at(dt, "reason", ""),
                         fq_value_path_str(dt, "message", ""), now);
    }
    if (k->lc_changed)
        cond_scan(obj, cd);
    if (active && cond_is_true(cd[C_DEACTIVATION_TARGET])) {
        /* A user set active=true again: Kueue's reactivation. */
        k->lc_changed |=
            cond_set(obj, "DeactivationTarget", "False", "Reactivated",
                     "The workload was reactivated", now);
        k->lc_changed |= cond_set(obj, "Requeued", "True", "Reactivated",
                                  "The workload was reactivated", now);
        k->lc_changed |= cond_clear(obj, "Evicted", "Reactivated",
                                    "The workload was reactivated", now);
        k->lc_changed |=
            fq_map_del(fq_map_ensure_map(obj, "status"), "requeueState");
        k->need_cycle = true;
    }
    if (k->lc_changed)
        cond_scan(obj, cd);

    if (has_adm && cond_is_true(cd[C_EVICTED])) {
        fq_kueue_policy_accumulate(obj, now);
        release_quota(k, e, s, obj, now);
        has_adm = false;
        cond_scan(obj, cd);
    }

    if (has_adm && cond_is_true(cd[C_QUOTA_RESERVED])) {
        uint64_t flv = 0;
        const struct fq_value *psa = fq_map_get(adm, "podSetAssignments");
        for (size_t i = 0; i < fq_value_len(psa); i++) {
            const struct fq_value *fl =
                fq_map_get(fq_seq_at(psa, i), "flavors");
            for (size_t j = 0; fl && fl->type == FQ_V_MAP && j < fl->u.map.n;
                 j++) {
                int f = fq_adm_find_flavor(
                    &s->adm, fq_value_as_str(fl->u.map.items[j].val) ?
                                 fq_value_as_str(fl->u.map.items[j].val) :
                                 "");
                if (f >= 0)
                    flv |= 1ull << f;
            }
        }
        k->lc_changed |= sync_checks(s, c, obj, flv, now);
        /* Read the states. */
        struct fq_value *chs = status_get(obj, "admissionChecks");
        bool all_ready = true, retry = false, rejected = false;
        const char *rname = NULL, *rmsg = NULL;
        int64_t requeue_at = 0;
        for (size_t i = 0; i < fq_value_len(chs); i++) {
            struct fq_value *ch = fq_seq_at(chs, i);
            const char *state = fq_value_path_str(ch, "state", "Pending");
            if (strcmp(state, "Ready"))
                all_ready = false;
            if (!strcmp(state, "Rejected")) {
                rejected = true;
                rname = fq_value_path_str(ch, "name", "");
                rmsg = fq_value_path_str(ch, "message", "");
            } else if (!strcmp(state, "Retry")) {
                retry = true;
                if (!rname) {
                    rname = fq_value_path_str(ch, "name", "");
                    rmsg = fq_value_path_str(ch, "message", "");
                }
                int64_t t = parse_time(
                    fq_value_path_str(ch, "lastTransitionTime", NULL), now);
                int64_t at =
                    t + fq_time_scaled(
                            e, fq_value_path_int(ch, "requeueAfterSeconds", 0) *
                                   1000);
                if (at > requeue_at)
                    requeue_at = at;
            }
        }
        if (rejected) {
            char msg[512];
            snprintf(msg, sizeof(msg),
                     "The workload is deactivated due to AdmissionCheck "
                     "rejected: \"%s\" (%s)",
                     rname, rmsg);
            char *m = fq_xstrdup(msg);
            char *n = fq_xstrdup(rname);
            deactivate(k, obj, "AdmissionCheck", m, now);
            fq_engine_event(e, obj, "Warning", "AdmissionCheckRejected",
                            "Deactivating workload because AdmissionCheck for "
                            "%s was Rejected: %s",
                            n, m);
            release_quota(k, e, s, obj, now);
            free(m);
            free(n);
            return;
        }
        if (retry) {
            char msg[512];
            snprintf(msg, sizeof(msg),
                     "Evicted due to AdmissionCheck in Retry state: \"%s\" "
                     "(%s)",
                     rname, rmsg);
            char *m = fq_xstrdup(msg);
            if (requeue_at > now) {
                char ts[40];
                fmt_time(requeue_at, ts, sizeof(ts));
                struct fq_value *rs = fq_map_ensure_map(
                    fq_map_ensure_map(obj, "status"), "requeueState");
                fq_map_set(rs, "requeueAt", fq_value_str(ts));
                k->lc_changed = true;
            }
            if (cfg->policy.flavor_failure_cooldown) {
                /* Remember the flavors the failed check was on. */
                struct fq_buf b = FQ_BUF_INIT;
                const char *oldann = fq_value_path_str(
                    fq_value_path(obj, "metadata.annotations"),
                    FQ_KUEUE_AVOID_FLAVORS, NULL);
                const struct fq_value *ann =
                    fq_value_path(obj, "metadata.annotations");
                oldann = NULL;
                if (ann)
                    oldann = fq_value_as_str(
                        fq_map_get(ann, FQ_KUEUE_AVOID_FLAVORS));
                if (oldann && *oldann)
                    fq_buf_puts(&b, oldann);
                char until[40];
                fmt_time(now +
                             fq_time_scaled(e, cfg->policy.flavor_cooldown_ms),
                         until, sizeof(until));
                for (int f = 0; f < s->adm.nflv; f++) {
                    bool on = (flv >> f) & 1;
                    bool checked = false;
                    for (int kk = 0; c && kk < c->nchecks; kk++)
                        if (!strcmp(c->checks[kk].name, rname) &&
                            (c->checks[kk].on_flv == 0 ||
                             ((c->checks[kk].on_flv >> f) & 1)))
                            checked = true;
                    if (on && checked)
                        fq_buf_printf(&b, "%s%s=%s", b.len ? "," : "",
                                      s->adm.flv_names[f], until);
                }
                fq_map_set(fq_map_ensure_map(fq_map_ensure_map(obj, "metadata"),
                                             "annotations"),
                           FQ_KUEUE_AVOID_FLAVORS,
                           fq_value_str(fq_buf_str(&b)));
                fq_buf_release(&b);
                k->lc_changed = true;
            }
            k->lc_changed |= evict(obj, "AdmissionCheck", m, now);
            fq_engine_event(e, obj, "Normal", "EvictedDueToAdmissionCheck",
                            "%s", m);
            release_quota(k, e, s, obj, now);
            free(m);
            return;
        }
        /* (sync_checks wrote no condition: cd holds) */
        if (all_ready && !cond_is_true(cd[C_ADMITTED])) {
            k->lc_changed |= cond_set(obj, "Admitted", "True", "Admitted",
                                      "The workload is admitted", now);
            int64_t rt =
                parse_time(fq_value_path_str(cd[C_QUOTA_RESERVED],
                                             "lastTransitionTime", NULL),
                           now);
            fq_engine_event(e, obj, "Normal", "Admitted",
                            "Admitted by ClusterQueue %s, wait time since "
                            "reservation was %llds",
                            cqname, (long long)((now - rt) / 1000));
            k->stats.admissions++;
        } else if (!all_ready) {
            k->lc_changed |= cond_set(
                obj, "Admitted", "False", "UnsatisfiedAdmissionChecks",
                "The workload has not all admission checks ready", now);
        }
    }

    if (k->lc_changed)
        cond_scan(obj, cd);

    /* waitForPodsReady: counts from Admitted. */
    if (cfg->pods_ready.enable && cond_is_true(cd[C_ADMITTED]) &&
        !cond_is_true(cd[C_PODS_READY]) && !cond_is_true(cd[C_EVICTED])) {
        int64_t at = parse_time(
            fq_value_path_str(cd[C_ADMITTED], "lastTransitionTime", NULL), now);
        const struct fq_value *pr = cd[C_PODS_READY];
        int64_t timeout = cfg->pods_ready.timeout_ms;
        if (pr &&
            !strcmp(fq_value_path_str(pr, "reason", ""), "WaitForRecovery")) {
            at = parse_time(fq_value_path_str(pr, "lastTransitionTime", NULL),
                            at);
            timeout = cfg->pods_ready.recovery_timeout_ms;
        }
        if (!pr)
            k->lc_changed |=
                cond_set(obj, "PodsReady", "False", "WaitForStart",
                         "Not all pods are ready or succeeded", now);
        if (now >= at + timeout) {
            int64_t count =
                fq_value_path_int(obj, "status.requeueState.count", 0) + 1;
            char msg[300];
            snprintf(msg, sizeof(msg), "Exceeded the PodsReady timeout %s/%s",
                     fq_value_path_str(obj, "metadata.namespace", ""),
                     fq_value_path_str(obj, "metadata.name", ""));
            struct fq_value *rs = fq_map_ensure_map(
                fq_map_ensure_map(obj, "status"), "requeueState");
            fq_map_set(rs, "count", fq_value_int(count));
            k->lc_changed = true;
            int lim = cfg->pods_ready.backoff_limit_count;
            if (lim >= 0 && count > lim) {
                fq_map_del(rs, "requeueAt");
                deactivate(k, obj, "RequeuingLimitExceeded",
                           "The workload is deactivated due to exceeding the "
                           "maximum number of re-queuing retries",
                           now);
            } else {
                char ts[40];
                fmt_time(now + backoff_ms(&cfg->pods_ready, count), ts,
                         sizeof(ts));
                fq_map_set(rs, "requeueAt", fq_value_str(ts));
                k->lc_changed |= evict(obj, "PodsReadyTimeout", msg, now);
            }
            fq_engine_event(e, obj, "Normal", "EvictedDueToPodsReadyTimeout",
                            "%s", msg);
            release_quota(k, e, s, obj, now);
            return;
        }
        if (at + timeout < k->lc_timer)
            k->lc_timer = at + timeout;
    }
    if (k->lc_changed)
        cond_scan(obj, cd);

    /* Backoff over: Requeued=True. */
    if (!status_get(obj, "admission") && active) {
        const struct fq_value *rq = cd[C_REQUEUED];
        if (rq && !strcmp(fq_value_path_str(rq, "status", ""), "False")) {
            int64_t at = parse_time(
                fq_value_path_str(obj, "status.requeueState.requeueAt", NULL),
                0);
            if (at <= now) {
                k->lc_changed |=
                    cond_set(obj, "Requeued", "True", "BackoffFinished",
                             "The workload backoff was finished", now);
                struct fq_value *rs = fq_value_path(obj, "status.requeueState");
                if (rs)
                    k->lc_changed |= fq_map_del(rs, "requeueAt");
                k->need_cycle = true;
            } else if (at < k->lc_timer) {
                k->lc_timer = at;
            }
        }
    }
}

/* --- the scheduling cycle --------------------------------------------- */

static int wl_cmp(const void *x, const void *y)
{
    const struct wl *a = *(struct wl *const *)x;
    const struct wl *b = *(struct wl *const *)y;
    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    if (a->qts != b->qts)
        return a->qts < b->qts ? -1 : 1;
    int c = strcmp(a->ns, b->ns);
    if (c)
        return c;
    return strcmp(a->name, b->name);
}

/* Kueue's entry order within a cycle (makeClassicalIterator). */
static int entry_cmp(const void *x, const void *y)
{
    const struct wl *a = *(struct wl *const *)x;
    const struct wl *b = *(struct wl *const *)y;
    if (a->nom_borrows != b->nom_borrows)
        return a->nom_borrows ? 1 : -1;
    return wl_cmp(x, y);
}

/* entry_cmp over an array of records. */
static int head_cmp(const void *x, const void *y)
{
    const struct wl *a = &(*(struct rec *const *)x)->w;
    const struct wl *b = &(*(struct rec *const *)y)->w;
    return entry_cmp(&a, &b);
}

/* --- records: usage, queues, holders ------------------------------------ */

/* Orders "ns/name" keys as the store lists objects: by namespace, then
 * name (a plain strcmp would put "a-b/x" before "a/x"). */
static int key_order(const char *a, const char *b)
{
    size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
    int c = strncmp(a, b, la < lb ? la : lb);
    if (c)
        return c;
    if (la != lb)
        return la < lb ? -1 : 1;
    return strcmp(a + la, b + lb);
}

static int key_cmp(const void *x, const void *y)
{
    return key_order(*(const char *const *)x, *(const char *const *)y);
}

static void kl_add(struct keylist *l, const char *key)
{
    FQ_GROW(l->off, l->capoff, l->n + 1);
    l->off[l->n++] = l->bytes.len;
    fq_buf_append(&l->bytes, key, strlen(key) + 1);
}

/* The keys of the list, sorted by key_order, each once (borrowed: valid
 * until kl_clear). */
static size_t kl_sorted(struct keylist *l, const char *const **out)
{
    FQ_GROW(l->sorted, l->capsorted, l->n + 1);
    for (size_t i = 0; i < l->n; i++)
        l->sorted[i] = l->bytes.data + l->off[i];
    if (l->n > 1)
        qsort(l->sorted, l->n, sizeof(*l->sorted), key_cmp);
    size_t m = 0;
    for (size_t i = 0; i < l->n; i++)
        if (m == 0 || strcmp(l->sorted[m - 1], l->sorted[i]))
            l->sorted[m++] = l->sorted[i];
    *out = l->sorted;
    return m;
}

static void kl_clear(struct keylist *l)
{
    fq_buf_reset(&l->bytes);
    l->n = 0;
}

static void kl_free(struct keylist *l)
{
    fq_buf_release(&l->bytes);
    free(l->off);
    free(l->sorted);
}

static int rec_cmp(const struct rec *a, const struct rec *b)
{
    const struct wl *x = &a->w, *y = &b->w;
    return wl_cmp(&x, &y);
}

static size_t ncell(const struct snap *s)
{
    return (size_t)(s->adm.nflv * s->adm.nres);
}

/*
 * Adds (sign +1) or removes (-1) what a record contributes: its charge in
 * the quota tree when it holds quota, and the pending / reserving /
 * admitted counts and admitted usage of its queues. Exact inverses, as
 * long as w does not change in between (callers detach first).
 */
static void account(struct kueue *k, struct rec *r, int sign)
{
    struct snap *s = k->snap;
    struct wl *w = &r->w;
    if (sign > 0 ? r->accounted : !r->accounted)
        return;
    r->accounted = sign > 0;
    k->counts_dirty = true;
    if (w->holds) {
        fq_adm_charge(&s->adm, s->cqs[w->cq].adm, w->nuse, w->use_fr,
                      w->use_amt, sign);
        k->snap_ver++;
        for (int u = 0; sign < 0 && u < w->nuse && s->adm.nres > 0; u++) {
            int f = (w->use_fr[u] / s->adm.nres) % FQ_ADM_MAX_FLAVORS;
            k->rel_flv[f]++;
            k->mig_rel |= 1ull << f;
        }
        if (sign < 0)
            k->mig_dirty = true;
    }
    if (w->cq < 0 || !(w->holds || w->pending))
        return;
    int kind = w->holds ? 1 : 0;
    int *lq = w->lq ? k->lqn[w->lq - s->lqs] : NULL;
    k->cqn[w->cq][kind] += sign;
    if (lq)
        lq[kind] += sign;
    if (!w->holds || !w->admitted)
        return;
    k->cqn[w->cq][2] += sign;
    if (lq)
        lq[2] += sign;
    size_t nc = ncell(s);
    for (int u = 0; u < w->nuse; u++)
        if (w->use_fr[u] < nc)
            k->adm_use[(size_t)w->cq * nc + w->use_fr[u]] +=
                sign * w->use_amt[u];
}

/* The first index of v[lo..n) whose entry does not sort before r. */
static size_t q_lower(struct rec *const *v, size_t lo, size_t n,
                      const struct rec *r)
{
    while (lo < n) {
        size_t mid = lo + (n - lo) / 2;
        if (rec_cmp(v[mid], r) < 0)
            lo = mid + 1;
        else
            n = mid;
    }
    return lo;
}

/* Moves the live entries v[lo..n) to the front when the dead prefix is
 * larger than they are; returns by how much they moved. */
static size_t q_compact(struct rec **v, size_t *lo, size_t *n)
{
    size_t by = *lo;
    if (by == 0 || by < *n - by)
        return 0;
    memmove(v, v + by, (*n - by) * sizeof(*v));
    *n -= by;
    *lo = 0;
    return by;
}

/* Inserts r in sorted v[lo..n); an entry that goes first reuses the slot
 * freed by taking the head, and a dead prefix larger than what lives is
 * reclaimed, so a queue worked from its head costs O(1) a step. */
static void q_insert(struct rec ***v, size_t *lo, size_t *n, size_t *cap,
                     struct rec *r)
{
    /* Heads are parked, and workloads arrive, mostly in order: try the
     * end first. */
    size_t at =
        *n > *lo && rec_cmp((*v)[*n - 1], r) < 0 ? *n : q_lower(*v, *lo, *n, r);
    if (at == *lo && *lo > 0) {
        (*v)[--*lo] = r;
        return;
    }
    at -= q_compact(*v, lo, n);
    FQ_GROW(*v, *cap, *n + 1);
    memmove(&(*v)[at + 1], &(*v)[at], (*n - at) * sizeof(**v));
    (*v)[at] = r;
    (*n)++;
}

static void q_remove(struct rec **v, size_t *lo, size_t *n, struct rec *r)
{
    /* Mostly the head goes. */
    size_t at = *n > *lo && v[*lo] == r ? *lo : q_lower(v, *lo, *n, r);
    if (at >= *n || v[at] != r)
        return; /* not there: rec_cmp is a total order, so never */
    if (at == *lo) {
        if (++*lo == *n)
            *lo = *n = 0;
        return;
    }
    memmove(&v[at], &v[at + 1], (*n - at - 1) * sizeof(*v));
    (*n)--;
}

static bool rec_parked(const struct kueue *k, const struct rec *r)
{
    return r->parked == k->park_gen;
}

/* Is r in its queue's park array (not act)? */
static bool in_park(const struct kueue *k, const struct rec *r)
{
    return r->in_park_gen == k->park_gen;
}

static void pq_insert(struct kueue *k, struct rec *r)
{
    struct pq *q = &k->pq[r->w.cq];
    k->q_ver++;
    r->qcq = r->w.cq;
    r->in_park_gen = rec_parked(k, r) ? k->park_gen : 0;
    if (in_park(k, r))
        q_insert(&q->park, &q->plo, &q->npark, &q->cappark, r);
    else
        q_insert(&q->act, &q->alo, &q->nact, &q->capact, r);
}

static void pq_remove(struct kueue *k, struct rec *r)
{
    if (r->qcq < 0)
        return;
    struct pq *q = &k->pq[r->qcq];
    k->q_ver++;
    if (in_park(k, r))
        q_remove(q->park, &q->plo, &q->npark, r);
    else
        q_remove(q->act, &q->alo, &q->nact, r);
    r->qcq = -1;
}

/* Parks r (inadmissible until capacity changes): act -> park. */
static void pq_park(struct kueue *k, struct rec *r)
{
    r->parked = k->park_gen;
    if (r->qcq < 0 || in_park(k, r))
        return;
    struct pq *q = &k->pq[r->qcq];
    k->q_ver++;
    q_remove(q->act, &q->alo, &q->nact, r);
    q_insert(&q->park, &q->plo, &q->npark, &q->cappark, r);
    r->in_park_gen = k->park_gen;
}

/* Parks the first m entries of queue c's act array at once, as m
 * pq_park calls on its head would (ff_replay). They sort after every
 * parked entry when heads were parked in order since the last requeue:
 * then the run is appended. */
static void pq_park_first(struct kueue *k, size_t c, size_t m)
{
    struct pq *q = &k->pq[c];
    struct rec **run = &q->act[q->alo];
    if (m == 0)
        return;
    k->q_ver++;
    for (size_t i = 0; i < m; i++) {
        run[i]->parked = k->park_gen;
        run[i]->in_park_gen = k->park_gen;
    }
    if (q->plo == q->npark || rec_cmp(q->park[q->npark - 1], run[0]) < 0) {
        q_compact(q->park, &q->plo, &q->npark);
        FQ_GROW(q->park, q->cappark, q->npark + m);
        memcpy(&q->park[q->npark], run, m * sizeof(*run));
        q->npark += m;
    } else {
        for (size_t i = 0; i < m; i++)
            q_insert(&q->park, &q->plo, &q->npark, &q->cappark, run[i]);
    }
    q->alo += m;
    if (q->alo == q->nact)
        q->alo = q->nact = 0;
}

/*
 * Capacity changed: every parked workload may be a head again (Kueue's
 * QueueInadmissibleWorkloads), in order: each park array is merged back
 * into its act array. A deep queue holds tens of thousands of parked
 * records and capacity changes with every workload that ends, so this
 * touches no record it need not: the new park_gen takes them all out of
 * park at once, and when the parked ones all sort before the others
 * (heads are parked in order) they go back into the slots their heads
 * left free at the front of act (or the two arrays trade places when
 * all were parked), or else the merge is two copies, not a comparison
 * per record.
 */
static void pq_requeue(struct kueue *k)
{
    k->park_gen++;
    k->q_ver++;
    for (int c = 0; k->snap && c < k->snap->ncq; c++) {
        struct pq *q = &k->pq[c];
        size_t na = q->nact - q->alo, np = q->npark - q->plo;
        if (np == 0)
            continue;
        if (na == 0) {
            /* Every one was parked: the arrays trade places. */
            struct rec **t = q->act;
            size_t cap = q->capact;
            q->act = q->park;
            q->capact = q->cappark;
            q->alo = q->plo;
            q->nact = q->npark;
            q->park = t;
            q->cappark = cap;
            q->plo = q->npark = 0;
            continue;
        }
        bool before = rec_cmp(q->park[q->npark - 1], q->act[q->alo]) < 0;
        if (before && q->alo >= np) {
            q->alo -= np;
            memcpy(&q->act[q->alo], &q->park[q->plo], np * sizeof(*q->act));
            q->plo = q->npark = 0;
            continue;
        }
        struct rec **m = fq_xmalloc((na + np) * sizeof(*m));
        if (before) {
            memcpy(m, &q->park[q->plo], np * sizeof(*m));
            memcpy(m + np, &q->act[q->alo], na * sizeof(*m));
        } else {
            size_t i = q->alo, j = q->plo, o = 0;
            while (i < q->nact || j < q->npark) {
                bool take_a =
                    j == q->npark ||
                    (i < q->nact && rec_cmp(q->act[i], q->park[j]) < 0);
                m[o++] = take_a ? q->act[i++] : q->park[j++];
            }
        }
        free(q->act);
        q->act = m;
        q->alo = 0;
        q->nact = q->capact = na + np;
        q->plo = q->npark = 0;
    }
}

/* Sorted-by-key arrays of records (holders, migration candidates). */
static size_t k_lower(struct rec *const *v, size_t n, const char *key)
{
    size_t lo = 0;
    while (lo < n) {
        size_t mid = lo + (n - lo) / 2;
        if (key_order(v[mid]->key, key) < 0)
            lo = mid + 1;
        else
            n = mid;
    }
    return lo;
}

static void holder_fill(struct kueue *k, size_t i)
{
    const struct wl *w = &k->hw[i]->w;
    struct fq_adm_holder *h = &k->hs[i];
    h->cq = k->snap->cqs[w->cq].adm;
    h->priority = w->prio;
    h->ts = w->qts;
    h->reserved_at = w->reserved_at;
    h->evicting = w->evicting;
    h->nuse = w->nuse;
    h->use_fr = w->use_fr;
    h->use_amt = w->use_amt;
}

/* The index of a holder, or nh. Holders admitted in the running cycle sit
 * unsorted after nh_sorted. */
static size_t holder_at(const struct kueue *k, const struct rec *r)
{
    size_t i = k_lower(k->hw, k->nh_sorted, r->key);
    if (i < k->nh_sorted && k->hw[i] == r)
        return i;
    for (i = k->nh_sorted; i < k->nh; i++)
        if (k->hw[i] == r)
            return i;
    return k->nh;
}

static void holder_put(struct kueue *k, size_t at, struct rec *r)
{
    if (k->nh + 1 > k->caph) {
        k->caph = k->caph ? 2 * k->caph : 64;
        k->hw = fq_xrealloc(k->hw, k->caph * sizeof(*k->hw));
        k->hs = fq_xrealloc(k->hs, k->caph * sizeof(*k->hs));
    }
    memmove(&k->hw[at + 1], &k->hw[at], (k->nh - at) * sizeof(*k->hw));
    memmove(&k->hs[at + 1], &k->hs[at], (k->nh - at) * sizeof(*k->hs));
    k->hw[at] = r;
    k->nh++;
    holder_fill(k, at);
}

/* A new holder: sorted in, or during a cycle appended (the cycle's later
 * heads see it as Kueue's snapshot does: after the holders it began
 * with) and sorted in by holders_settle. */
static void holders_add(struct kueue *k, struct rec *r)
{
    if (!k->snap->preempts)
        return; /* nobody can be a target: no list to keep */
    r->holder = true;
    if (k->in_cycle) {
        holder_put(k, k->nh, r);
        return;
    }
    holder_put(k, k_lower(k->hw, k->nh_sorted, r->key), r);
    k->nh_sorted++;
}

static void holders_del(struct kueue *k, struct rec *r)
{
    if (!r->holder)
        return;
    size_t at = holder_at(k, r);
    r->holder = false;
    if (at == k->nh)
        return;
    memmove(&k->hw[at], &k->hw[at + 1], (k->nh - at - 1) * sizeof(*k->hw));
    memmove(&k->hs[at], &k->hs[at + 1], (k->nh - at - 1) * sizeof(*k->hs));
    k->nh--;
    if (at < k->nh_sorted)
        k->nh_sorted--;
}

static void holders_settle(struct kueue *k)
{
    k->in_cycle = false;
    size_t n = k->nh - k->nh_sorted;
    if (n == 0)
        return;
    struct rec **tail = fq_xmalloc(n * sizeof(*tail));
    memcpy(tail, &k->hw[k->nh_sorted], n * sizeof(*tail));
    k->nh = k->nh_sorted;
    for (size_t i = 0; i < n; i++) {
        holder_put(k, k_lower(k->hw, k->nh_sorted, tail[i]->key), tail[i]);
        k->nh_sorted++;
    }
    free(tail);
}

/* The flavors a move of w may not go to: in each group, the latest one
 * assigned and every later one. */
static uint64_t mig_skip_of(const struct snap *s, const struct wl *w)
{
    const struct fq_adm_cq *ac = &s->adm.cqs[s->cqs[w->cq].adm];
    uint64_t skip = 0;
    for (int g = 0; g < ac->ngroups; g++) {
        const struct fq_adm_group *grp = &ac->groups[g];
        int last = -1;
        for (int i = 0; i < grp->nflv; i++)
            if ((w->assigned_flv >> grp->flv[i]) & 1)
                last = i;
        if (last < 0)
            continue;
        for (int i = last; i < grp->nflv; i++)
            skip |= 1ull << grp->flv[i];
    }
    return skip;
}

/* The flavors of the snapshot a candidate may move to, at most (those
 * in a cool-down are left out when it tries). */
static uint64_t mig_to_of(const struct kueue *k, const struct rec *r)
{
    int nflv = k->snap->adm.nflv;
    return ~r->mig_skip & (nflv < 64 ? (1ull << nflv) - 1 : ~0ull);
}

static void mig_add(struct kueue *k, struct rec *r)
{
    r->mig_skip = mig_skip_of(k->snap, &r->w);
    size_t at = k_lower(k->mig, k->nmig, r->key);
    FQ_GROW(k->mig, k->capmig, k->nmig + 1);
    memmove(&k->mig[at + 1], &k->mig[at], (k->nmig - at) * sizeof(*k->mig));
    k->mig[at] = r;
    k->nmig++;
    r->in_mig = true;
    k->mig_dirty = true;
    FQ_GROW(k->mig_new, k->capmig_new, k->nmig_new + 1);
    k->mig_new[k->nmig_new++] = r;
    r->in_mig_new = true;
    for (uint64_t m = mig_to_of(k, r); m; m &= m - 1)
        k->mig_to[__builtin_ctzll(m)]++;
}

static void mig_del(struct kueue *k, struct rec *r)
{
    if (!r->in_mig)
        return;
    r->in_mig = false;
    for (uint64_t m = mig_to_of(k, r); m; m &= m - 1)
        k->mig_to[__builtin_ctzll(m)]--;
    for (size_t i = 0; r->in_mig_new && i < k->nmig_new; i++)
        if (k->mig_new[i] == r) {
            k->mig_new[i] = k->mig_new[--k->nmig_new];
            r->in_mig_new = false;
        }
    size_t at = k_lower(k->mig, k->nmig, r->key);
    if (at < k->nmig && k->mig[at] == r) {
        memmove(&k->mig[at], &k->mig[at + 1],
                (k->nmig - at - 1) * sizeof(*k->mig));
        k->nmig--;
    }
}

/* Takes r out of usage, counts, queues, holders and candidates. */
static void rec_detach(struct kueue *k, struct rec *r)
{
    account(k, r, -1);
    pq_remove(k, r);
    holders_del(k, r);
    mig_del(k, r);
}

/* Puts r back where its w says it belongs. */
static void rec_attach(struct kueue *k, struct rec *r)
{
    if (!r->ok)
        return;
    account(k, r, +1);
    if (r->w.pending && r->w.cq >= 0)
        pq_insert(k, r);
    if (r->w.holds)
        holders_add(k, r);
    if (r->w.holds && r->w.waiting_check)
        mig_add(k, r);
}

static void rec_free(void *p)
{
    struct rec *r = p;
    wl_release(&r->w);
    free(r->queue_name);
    free(r->key);
    free(r);
}

static void fmt_qty(const char *res, int64_t v, char *buf, size_t n)
{
    enum fq_qformat f = FQ_QF_DECIMAL_SI;
    if (!strcmp(res, "memory") || strstr(res, "storage"))
        f = FQ_QF_BINARY_SI;
    fq_quantity_format(v, fq_quantity_scale_for(res), f, buf, n);
}

/* Writes status.admission and QuotaReserved (and Admitted without checks). */
static void reserve(struct kueue *k, struct fq_engine *e, struct snap *s,
                    struct wl *w, const struct fq_adm_result *r, int64_t now,
                    const char *how)
{
    struct rec *rc = (struct rec *)w; /* every wl here is a record's */
    k->quota_moved = true;
    account(k, rc, -1);
    struct cq_info *c = &s->cqs[w->cq];
    /* Only status changes, and it does: in place. */
    struct fq_value *obj = fq_objstore_edit_in_place(
        fq_engine_store(e), FQ_KIND_WORKLOAD, w->ns, w->name);
    if (!obj)
        return;
    struct fq_value *adm = fq_value_map();
    fq_map_set(adm, "clusterQueue", fq_value_str(c->name));
    struct fq_value *psa = fq_value_seq();
    uint64_t flv = 0;
    for (int p = 0; p < w->npodsets; p++) {
        struct fq_value *a = fq_value_map();
        fq_map_set(a, "name", fq_value_str(w->psname[p]));
        struct fq_value *fl = fq_value_map();
        struct fq_value *ru = fq_value_map();
        for (int res = 0; res < s->adm.nres; res++) {
            int f = r->flv[p][res];
            if (f < 0)
                continue;
            flv |= 1ull << f;
            fq_map_set(fl, s->adm.res_names[res],
                       fq_value_str(s->adm.flv_names[f]));
            char q[48];
            int64_t amt = w->ps[p].req[res] * r->count[p];
            fmt_qty(s->adm.res_names[res], amt, q, sizeof(q));
            fq_map_set(ru, s->adm.res_names[res], fq_value_str(q));
        }
        fq_map_set(a, "flavors", fl);
        fq_map_set(a, "resourceUsage", ru);
        fq_map_set(a, "count", fq_value_int(r->count[p]));
        fq_seq_push(psa, a);
    }
    fq_map_set(adm, "podSetAssignments", psa);
    fq_map_set(fq_map_ensure_map(obj, "status"), "admission", adm);
    cond_set(obj, "QuotaReserved", "True", "QuotaReserved", c->reserved_msg,
             now);
    cond_clear(obj, "Evicted", "QuotaReserved", "Previously: evicted", now);
    cond_clear(obj, "Preempted", "QuotaReserved", "Previously: preempted", now);
    /* Checks that apply to the assigned flavors. */
    sync_checks(s, c, obj, flv, now);
    const struct fq_value *cl = status_get(obj, "admissionChecks");
    bool checks = fq_value_len(cl) > 0;
    bool ready = true;
    for (size_t i = 0; i < fq_value_len(cl); i++)
        if (strcmp(str_at(fq_seq_at(cl, i), "state", ""), "Ready"))
            ready = false;
    if (!checks || ready)
        cond_set(obj, "Admitted", "True", "Admitted",
                 "The workload is admitted", now);
    else
        cond_set(obj, "Admitted", "False", "UnsatisfiedAdmissionChecks",
                 "The workload has not all admission checks ready", now);
    fq_objstore_edited(fq_engine_store(e), FQ_KIND_WORKLOAD, w->ns, w->name,
                       false);
    const struct fq_value *so = obj;
    /* The "Flavors considered" part of Kueue's event, shortened (made
     * only when Events are). */
    struct fq_buf b = FQ_BUF_INIT;
    bool events = fq_engine_config(e)->record_events;
    for (int p = 0; events && p < w->npodsets; p++) {
        fq_buf_printf(&b, "%s%s: ", p ? ", " : "", w->psname[p]);
        bool first = true;
        for (int res = 0; res < s->adm.nres; res++) {
            int f = r->flv[p][res];
            if (f < 0)
                continue;
            fq_buf_printf(&b, "%s%s=%s", first ? "" : " ",
                          s->adm.res_names[res], s->adm.flv_names[f]);
            first = false;
        }
    }
    fq_engine_event(e, so ? so : obj, "Normal", "QuotaReserved",
                    "Quota reserved in ClusterQueue %s, wait time since queued "
                    "was %llds; Flavors considered: %s%s",
                    c->name, (long long)((now - w->qts) / 1000), fq_buf_str(&b),
                    how ? how : "");
    w->admitted = !checks || ready;
    if (!checks || ready) {
        fq_engine_event(e, so ? so : obj, "Normal", "Admitted",
                        "Admitted by ClusterQueue %s, wait time since "
                        "reservation was 0s",
                        c->name);
        k->stats.admissions++;
    }
    fq_buf_release(&b);
    k->stats.reservations++;
    /* The snapshot follows: it holds the usage from now on. */
    bool new_holder = !w->holds; /* not a migration */
    w->holds = true;
    w->pending = false;
    wl_set_use(w, r->nuse, r->use_fr, r->use_amt);
    if (new_holder)
        w->reserved_at = now;
    account(k, rc, +1);
    if (!rc->holder)
        holders_add(k, rc);
    else
        holder_fill(k, holder_at(k, rc));
}

/* Writes QuotaReserved=False with a reason and message, when it changed. */
/*
 * cond_set() on a stored workload, in place (nothing copied); true when
 * it changed.
 */
static bool cond_write(struct fq_engine *e, const char *ns, const char *name,
                       const char *type, const char *status, const char *reason,
                       const char *msg, int64_t now)
{
    struct fq_objstore *st = fq_engine_store(e);
    struct fq_value *obj =
        fq_objstore_edit_in_place(st, FQ_KIND_WORKLOAD, ns, name);
    if (!obj || !cond_set(obj, type, status, reason, msg, now))
        return false;
    fq_objstore_edited(st, FQ_KIND_WORKLOAD, ns, name, false);
    return true;
}

static void set_pending(struct fq_engine *e, struct wl *w, const char *reason,
                        const char *msg, int64_t now)
{
    if (w->why_msg && !strcmp(w->why_msg, msg))
        return;
    if (cond_write(e, w->ns, w->name, "QuotaReserved", "False", reason, msg,
                   now)) {
        const struct fq_object *o = fq_objstore_get(
            fq_engine_store(e), FQ_KIND_WORKLOAD, w->ns, w->name);
        if (o) {
            fq_engine_event(e, o->obj, "Warning", reason, "%s", msg);
            /* Our own message: the record stays true (w is one). */
            ((struct rec *)w)->own_rev = o->rv;
        }
    }
    free(w->why_msg);
    w->why_msg = fq_xstrdup(msg);
}

static void preempt(struct kueue *k, struct fq_engine *e, struct wl *victim,
                    const struct wl *by, int reason, int64_t now)
{
    k->quota_moved = true;
    struct fq_value *obj = fq_objstore_edit_status(
        fq_engine_store(e), FQ_KIND_WORKLOAD, victim->ns, victim->name);
    if (!obj)
        return;
    const char *why = reason == FQ_ADM_IN_CLUSTER_QUEUE ?
                          "prioritization in the ClusterQueue" :
                      reason == FQ_ADM_IN_COHORT_RECLAMATION ?
                          "reclamation within the cohort" :
                          "reclamation within the cohort while borrowing";
    char msg[512];
    snprintf(msg, sizeof(msg),
             "Preempted to accommodate a workload (UID: %s) due to %s",
             by->uid ? by->uid : "", why);
    evict(obj, "Preempted", msg, now);
    cond_set(obj, "Preempted", "True", fq_adm_preempt_reason_str(reason), msg,
             now);
    fq_objstore_put_status(fq_engine_store(e), FQ_KIND_WORKLOAD, victim->ns,
                           victim->name, obj, NULL, NULL);
    const struct fq_value *so =
        stored(e, FQ_KIND_WORKLOAD, victim->ns, victim->name);
    if (so) {
        fq_engine_event(e, so, "Normal", "Preempted", "%s", msg);
        fq_engine_event(e, so, "Normal", "EvictedDueToPreempted", "%s", msg);
    }
    victim->evicting = true;
    k->stats.preemptions++;
}

static void adm_wl(const struct wl *w, struct fq_adm_wl *aw, bool cooldown)
{
    memset(aw, 0, sizeof(*aw));
    aw->cq = -1;
    aw->priority = w->prio;
    aw->ts = w->qts;
    aw->npodsets = w->npodsets;
    aw->ps = w->ps;
    aw->avoid_flv = cooldown ? w->avoid : 0;
    if (w->is_slice) {
        aw->forced_flv = w->slice_flv;
        aw->base_count = w->slice_base;
    }
}

/*
 * Can w fit at all, with the flavors in `skip` left out? A necessary
 * condition of a Fit, and cheap: each podset, at its smallest count, must
 * find in each resource group it asks of a flavor it may use with room
 * for each of those resources (the room fq_adm_assign compares with).
 */
static bool might_fit(const struct snap *s, int cq, const struct wl *w,
                      uint64_t skip)
{
    const struct fq_adm_cq *ac = &s->adm.cqs[cq];
    int nres = s->adm.nres;
    for (int p = 0; p < w->npodsets; p++) {
        const struct fq_adm_podset *ps = &w->ps[p];
        uint32_t asked = 0;
        for (int r = 0; r < nres; r++)
            if (ps->req[r] > 0)
                asked |= 1u << r;
        for (int g = 0; g < ac->ngroups; g++) {
            const struct fq_adm_group *grp = &ac->groups[g];
            uint32_t need = grp->res_mask & asked;
            if (!need)
                continue;
            bool room = false;
            for (int i = 0; i < grp->nflv && !room; i++) {
                int f = grp->flv[i];
                uint64_t bit = 1ull << f;
                if ((skip & bit) || !(ps->selector_ok & bit) ||
                    !(ps->taint_ok & bit))
                    continue;
                room = true;
                for (int r = 0; r < nres && room; r++)
                    if ((need >> r) & 1)
                        room = ps->req[r] * ps->min_count <=
                               fq_adm_available(&s->adm, cq, f * nres + r);
            }
            if (!room)
                return false;
        }
    }
    return true;
}

/* Policy (b): a reserved workload waiting on a check of a later flavor moves
 * to an earlier flavor that now fits. Returns true when it moved. An
 * attempt that does not fit cannot fit later while no quota is released
 * on a flavor it may move to and no flavor cool-down of it ends (a
 * flavor's room depends on that flavor's usage alone, and shrinks as it
 * grows), so until then the record says so and nothing is tried. */
static bool try_migrate(struct kueue *k, struct fq_engine *e, struct rec *rc,
                        int64_t now)
{
    struct snap *s = k->snap;
    struct wl *w = &rc->w;
    struct cq_info *c = &s->cqs[w->cq];
    /* The flavors where it is, and those after them, are skipped; so is
     * a flavor in its failure cool-down (no better than where it is). */
    uint64_t skip = rc->mig_skip;
    int64_t retry = FQ_NEVER;
    if (w->avoid_ann && fq_engine_config(e)->policy.flavor_failure_cooldown)
        skip |= avoid_mask(&s->adm, w->avoid_ann, now, &retry);
    uint64_t sum = 0;
    uint64_t to =
        ~skip & (s->adm.nflv < 64 ? (1ull << s->adm.nflv) - 1 : ~0ull);
    for (uint64_t m = to; m; m &= m - 1)
        sum += k->rel_flv[__builtin_ctzll(m)];
    if (rc->mig_valid && rc->mig_sum == sum && now < rc->mig_retry)
        return false;
    /* When its usage is on flavors it may not move to (always, unless
     * its podsets sit on different flavors of one group), whether it
     * might fit does not depend on that usage: a move that cannot fit is
     * known before the usage is taken out. */
    uint64_t own = 0;
    for (int u = 0; u < w->nuse && s->adm.nres > 0; u++)
        own |= 1ull << ((w->use_fr[u] / s->adm.nres) % FQ_ADM_MAX_FLAVORS);
    if (!w->is_slice && !(own & ~skip) && !might_fit(s, c->adm, w, skip)) {
        rc->mig_valid = true;
        rc->mig_sum = sum;
        rc->mig_retry = retry;
        return false;
    }
    struct fq_adm_wl aw;
    adm_wl(w, &aw, false);
    aw.cq = c->adm;
    aw.skip_flv = skip;
    aw.no_msg = true; /* a move is a Fit or nothing */
    /* Its own usage does not count against the move; taking it out and
     * putting it back is not a release (neither the release counts nor
     * mig_dirty keep a trace of it: otherwise every attempt would make
     * the next cycle look at every candidate again, for nothing). */
    uint64_t rel[FQ_ADM_MAX_FLAVORS];
    size_t nrel = (size_t)s->adm.nflv * sizeof(rel[0]);
    memcpy(rel, k->rel_flv, nrel);
    bool mig_dirty = k->mig_dirty;
    uint64_t mig_rel = k->mig_rel;
    account(k, rc, -1);
    struct fq_adm_result r;
    bool fits = w->is_slice || might_fit(s, c->adm, w, aw.skip_flv);
    if (fits)
        fq_adm_assign(&s->adm, &aw, NULL, 0, &r);
    bool moved = fits && r.mode == FQ_ADM_FIT;
    if (moved) {
        reserve(k, e, s, w, &r, now, " (moved to a preferred flavor)");
        k->stats.migrations++;
    } else {
        account(k, rc, +1);
        memcpy(k->rel_flv, rel, nrel);
        k->mig_dirty = mig_dirty;
        k->mig_rel = mig_rel;
        rc->mig_valid = true;
        rc->mig_sum = sum;
        rc->mig_retry = retry;
    }
    if (fits)
        fq_adm_result_release(&r);
    return moved;
}

static bool ns_matches(struct fq_engine *e, const struct cq_info *c,
                       const char *ns)
{
    if (!c->view.namespace_selector.present)
        return false;
    struct fq_kv kv[65];
    size_t n = 0;
    kv[n].key = "kubernetes.io/metadata.name";
    kv[n++].value = ns;
    const struct fq_value *o = stored(e, FQ_KIND_NAMESPACE, "", ns);
    const struct fq_value *labels = fq_value_path(o, "metadata.labels");
    for (size_t i = 0;
         labels && labels->type == FQ_V_MAP && i < labels->u.map.n && n < 65;
         i++) {
        const char *v = fq_value_as_str(labels->u.map.items[i].val);
        if (!v)
            continue;
        kv[n].key = labels->u.map.items[i].key;
        kv[n++].value = v;
    }
    struct fq_kvs kvs = {kv, n};
    return fq_selector_matches(&c->view.namespace_selector, &kvs);
}

#define SHAPE_UNKNOWN (-2)
/* The most views psviews and admviews keep (then they start again): a
 * bound for a daemon that sees ever new ones. */
#define VIEWS_MAX 4096
#define FP_SEED   1469598103934665603ull

static uint64_t fp_value(uint64_t h, const struct fq_value *v);

/* A hash (fp_value's) in hex: a key of psviews and admviews. */
static void hex_key(uint64_t h, char key[17])
{
    *fq_hex_put(key, h, 16) = 0;
}

/* A pending workload's podsets as the assigner sees them, interned: two
 * workloads of one shape get one outcome from fq_adm_assign on a queue
 * that cannot preempt (ff_quiet). */

static int shape_of(struct kueue *k, const struct wl *w)
{
    if (w->npodsets == 0)
        return -1;
    int nres = k->snap->adm.nres;
    struct fq_buf b = FQ_BUF_INIT;
    for (int p = 0; p < w->npodsets; p++) {
        const struct fq_adm_podset *ps = &w->ps[p];
        fq_buf_printf(&b, "%d,%d,%llx,%llx", (int)ps->count, (int)ps->min_count,
                      (unsigned long long)ps->selector_ok,
                      (unsigned long long)ps->taint_ok);
        for (int r = 0; r < nres; r++)
            fq_buf_printf(&b, ",%lld", (long long)ps->req[r]);
        fq_buf_puts(&b, ";");
    }
    uintptr_t id = (uintptr_t)fq_smap_get(&k->shapes, fq_buf_str(&b));
    if (!id) {
        id = (uintptr_t)++k->nshapes;
        fq_smap_put(&k->shapes, fq_buf_str(&b), (void *)id);
    }
    fq_buf_release(&b);
    return (int)id - 1;
}

/*
 * What a holder held before it is derived again, and the release signals
 * as they were: taking its usage out and putting the same back is no
 * release (as in try_migrate), else every status write to a holder (a
 * check's state, PodsReady) would make the next migration pass try every
 * candidate again, to find what each found.
 */
struct held {
    bool on; /* it held, and its usage fits here */
    int cq, nuse;
    uint16_t fr[FQ_ADM_MAX_FLAVORS];
    int64_t amt[FQ_ADM_MAX_FLAVORS];
    uint64_t rel[FQ_ADM_MAX_FLAVORS];
    uint64_t mig_rel;
    bool mig_dirty;
};

static void held_save(const struct kueue *k, const struct rec *r,
                      struct held *h)
{
    const struct wl *w = &r->w;
    h->on = r->accounted && w->holds && w->nuse <= FQ_ADM_MAX_FLAVORS;
    if (!h->on)
        return;
    h->cq = w->cq;
    h->nuse = w->nuse;
    for (int u = 0; u < w->nuse; u++) {
        h->fr[u] = w->use_fr[u];
        h->amt[u] = w->use_amt[u];
    }
    memcpy(h->rel, k->rel_flv, sizeof(h->rel));
    h->mig_rel = k->mig_rel;
    h->mig_dirty = k->mig_dirty;
}

/* After the record is attached again: when it holds what it held, the
 * release its detach signalled is taken back (a candidate attached again
 * is new to the migration pass all the same: mig_add). */
static void held_restore(struct kueue *k, const struct rec *r,
                         const struct held *h)
{
    const struct wl *w = &r->w;
    if (!h->on || !r->accounted || !w->holds || w->cq != h->cq ||
        w->nuse != h->nuse)
        return;
    for (int u = 0; u < h->nuse; u++)
        if (w->use_fr[u] != h->fr[u] || w->use_amt[u] != h->amt[u])
            return;
    memcpy(k->rel_flv, h->rel, sizeof(h->rel));
    k->mig_rel = h->mig_rel;
    k->mig_dirty = h->mig_dirty || r->in_mig;
}

/*
 * Derives a record again from its stored workload (decoded where it is
 * stored: the view is dropped before anything is written) and the
 * snapshot, and attaches it where it now belongs. What comes from the
 * spec (podsets, priority, queue, uid) is kept while the generation and
 * the snapshot hold (spec_ok): then only the status is decoded. A new
 * spec whose podSets equal some decoded before (k->psviews) decodes all
 * but them, and a status.admission decoded before (k->admviews, by its
 * hash adm_h) is not decoded again. A workload that cannot be queued (no
 * LocalQueue, its ClusterQueue missing or inactive, its namespace not
 * selected) gets Kueue's QuotaReserved=False message. `cond` is obj's
 * cond_scan.
 */
static void rec_derive(struct kueue *k, struct fq_engine *e, struct rec *r,
                       const struct fq_value *obj,
                       const struct fq_value *const cond[NCOND], uint64_t adm_h,
                       int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    struct snap *s = k->snap;
    struct wl *w = &r->w;
    struct held was;
    held_save(k, r, &was);
    rec_detach(k, r);
    const struct fq_value *md = fq_map_get(obj, "metadata");
    int64_t gen = int_at(md, "generation", 0);
    struct fq_workload v;
    /* An admission decoded before (so valid) is not decoded again. */
    char akey[17];
    hex_key(adm_h, akey);
    const struct admview *av = fq_smap_get(&k->admviews, akey);
    unsigned parts = FQ_WL_CHECKS | FQ_WL_REQUEUE;
    if (!av)
        parts |= FQ_WL_ADMISSION;
    bool light = r->spec_ok && r->spec_gen == gen &&
                 fq_workload_status_decode(obj, parts, &v) == 0;
    r->mig_valid = false;
    if (light) {
        /* The status-derived part goes; the spec's stays. */
        free(w->why_msg);
        free(w->avoid_ann);
        free(w->replaces);
        free(w->use_fr);
        free(w->use_amt);
        w->why_msg = w->avoid_ann = w->replaces = NULL;
        w->use_fr = NULL;
        w->use_amt = NULL;
        w->nuse = 0;
        w->cq = -1;
        w->lq = NULL;
        w->holds = w->admitted = w->pending = w->evicting = false;
        w->reserved_at = 0;
        w->assigned_flv = 0;
        w->waiting_check = w->is_slice = false;
    } else {
        char *ns = w->ns, *name = w->name;
        w->ns = w->name = NULL;
        wl_release(w);
        free(r->queue_name);
        r->queue_name = NULL;
        memset(w, 0, sizeof(*w));
        w->ns = ns;
        w->name = name;
        w->cq = -1;
        r->ok = r->spec_ok = false;
        r->shape = -1;
        /* A podSets subtree seen before decoded then (so it is valid) to
         * the view kept: only the rest is decoded. */
        char pkey[17];
        hex_key(
            fp_value(FP_SEED, fq_map_get(fq_map_get(obj, "spec"), "podSets")),
            pkey);
        const struct psview *pv = fq_smap_get(&k->psviews, pkey);
        if ((pv ? fq_workload_decode_no_podsets(obj, &v) :
                  fq_workload_decode(obj, NULL, &v, NULL)) != 0)
            return;
        r->ok = r->spec_ok = true;
        r->spec_gen = gen;
        w->uid = fq_xstrdup(v.meta.uid ? v.meta.uid : "");
        w->prio = priority_of(e, &v);
        w->created = parse_time(v.meta.creation_timestamp, 0);
        r->queue_name = v.queue_name ? fq_xstrdup(v.queue_name) : NULL;
        r->active = v.active;
        int nres = s->adm.nres > 0 ? s->adm.nres : 1;
        struct psview mine;
        if (pv) {
            podsets_copy(nres, pv, &mine);
            w->npodsets = mine.npodsets;
            w->ps = mine.ps;
            w->psname = mine.psname;
            w->req = mine.req;
        } else {
            wl_podsets(s, w, &v);
            mine = (struct psview){w->npodsets, w->ps, w->psname, w->req};
            if (k->psviews.n >= VIEWS_MAX)
                fq_smap_clear(&k->psviews);
            struct psview *keep = fq_xmalloc(sizeof(*keep));
            podsets_copy(nres, &mine, keep);
            fq_smap_put(&k->psviews, pkey, keep);
        }
        r->shape = SHAPE_UNKNOWN;
    }
    const char *ns = w->ns;
    const struct fq_value *ann = fq_map_get(md, "annotations");
    const struct fq_value *qr = cond[C_QUOTA_RESERVED];
    const char *qr_status = str_at(qr, "status", "");
    if (qr && !strcmp(qr_status, "False"))
        w->why_msg = fq_xstrdup(str_at(qr, "message", ""));
    const struct fq_value *rq = cond[C_REQUEUED];
    bool in_backoff = rq && !strcmp(str_at(rq, "status", ""), "False");
    /* w->created is the spec's view's: the store keeps creationTimestamp
     * as it was created (server-owned), so a status write leaves it. */
    w->qts = queue_order_ts(w->created, cond[C_EVICTED], cfg);
    const char *avoid =
        fq_value_as_str(fq_map_get(ann, FQ_KUEUE_AVOID_FLAVORS));
    w->avoid_ann = avoid ? fq_xstrdup(avoid) : NULL;
    const char *why = NULL; /* a message to write once the view is gone */
    char msg[512];
    const char *queue = r->queue_name;
    if ((av || v.has_admission) && !strcmp(qr_status, "True")) {
        struct admview made;
        if (!av) {
            adm_view(s, &v, &made);
            av = &made;
            if (k->admviews.n >= VIEWS_MAX)
                fq_smap_clear(&k->admviews);
            struct admview *keep = fq_xmalloc(sizeof(*keep));
            *keep = made;
            fq_smap_put(&k->admviews, akey, keep);
        }
        w->cq = av->cq;
        w->holds = w->cq >= 0;
        w->admitted = cond_is_true(cond[C_ADMITTED]);
        w->evicting = cond_is_true(cond[C_EVICTED]);
        w->reserved_at = parse_time(str_at(qr, "lastTransitionTime", NULL), 0);
        wl_set_use(w, av->nuse, av->use_fr, av->use_amt);
        w->assigned_flv = av->assigned_flv;
        /* Waiting on a check, none Ready: may migrate. */
        bool any = false, ready = false;
        for (size_t c = 0; c < v.n_check_states; c++) {
            any = true;
            if (v.check_states[c].state != FQ_CHECK_PENDING)
                ready = true;
        }
        w->waiting_check = any && !ready && !w->admitted;
        if (queue)
            w->lq = find_lq(s, ns, queue);
    } else if (r->active && !in_backoff && queue) {
        /* Pending: admissible now? */
        w->lq = find_lq(s, ns, queue);
        int ci = w->lq ? find_cq(s, w->lq->cq) : -1;
        if (!w->lq) {
            snprintf(msg, sizeof(msg), "LocalQueue %s doesn't exist", queue);
            why = msg;
        } else if (w->lq->stop != FQ_STOP_NONE) {
            snprintf(msg, sizeof(msg), "LocalQueue %s is stopped", queue);
            why = msg;
        } else if (ci < 0) {
            snprintf(msg, sizeof(msg), "ClusterQueue %s doesn't exist",
                     w->lq->cq);
            why = msg;
        } else if (!s->cqs[ci].active) {
            snprintf(msg, sizeof(msg), "ClusterQueue %s is inactive",
                     w->lq->cq);
            why = msg;
        } else if (!ns_matches(e, &s->cqs[ci], ns)) {
            why = "Workload namespace doesn't match ClusterQueue selector";
        } else {
            w->cq = ci;
            w->pending = true;
            const char *old =
                fq_value_as_str(fq_map_get(ann, FQ_SLICE_ANN_REPLACES));
            if (old) {
                w->replaces = fq_xstrdup(old);
                w->is_slice = fq_kueue_slice_prepare(
                    &s->adm, stored(e, FQ_KIND_WORKLOAD, ns, old), w->npodsets,
                    w->psname, w->slice_flv, w->slice_base);
            }
        }
    }
    fq_workload_release(&v);
    rec_attach(k, r);
    held_restore(k, r, &was);
    if (why)
        set_pending(e, w, "Inadmissible", why, now);
}

/*
 * A 64-bit hash of a subtree (its shape, scalars' text, maps' keys in
 * order), taken eight bytes a step: every change of a workload hashes
 * its conditions, whose messages are tens of bytes each. A step is a
 * multiply and a shift, each a bijection of the state, and every text
 * and container gives its length first, so two trees that differ in
 * what is hashed differ in the hash but by chance (2^-64).
 */
static uint64_t fp_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
}

static uint64_t fp_load(const char *s, size_t n)
{
    uint64_t w = 0;
    memcpy(&w, s, n); /* n is 4 or 8: a load */
    return w;
}

/* The n bytes at s, after n: eight a step, and a text's last bytes
 * (which do not fill a step) read as the word or half-words that end
 * where it does, so that no byte is read one at a time, and none after
 * the text. Given n, every byte lands in some word: texts of one
 * length that differ give steps that differ. */
static uint64_t fp_text(uint64_t h, const char *s, size_t n)
{
    h = fp_word(h, n);
    if (n < 4) {
        if (n > 0)
            h = fp_word(h, (uint64_t)(unsigned char)s[0] << 16 |
                               (uint64_t)(unsigned char)s[n / 2] << 8 |
                               (unsigned char)s[n - 1]);
        return h;
    }
    if (n < 8)
        return fp_word(h, fp_load(s, 4) << 32 | fp_load(s + n - 4, 4));
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        h = fp_word(h, fp_load(s + i, 8));
    if (i < n)
        h = fp_word(h, fp_load(s + n - 8, 8));
    return h;
}

static uint64_t fp_value(uint64_t h, const struct fq_value *v)
{
    if (!v)
        return fp_word(h, 1);
    h = fp_word(h, (uint64_t)v->type + 2);
    switch (v->type) {
    case FQ_V_NULL:
        return h;
    case FQ_V_BOOL:
        return fp_word(h, v->u.b);
    case FQ_V_NUM:
        return fp_text(h, v->u.num.raw, strlen(v->u.num.raw));
    case FQ_V_STR:
        return fp_text(h, v->u.str.s, v->u.str.len);
    case FQ_V_SEQ:
        h = fp_word(h, v->u.seq.n);
        for (size_t i = 0; i < v->u.seq.n; i++)
            h = fp_value(h, v->u.seq.items[i]);
        return h;
    case FQ_V_MAP:
        h = fp_word(h, v->u.map.n);
        for (size_t i = 0; i < v->u.map.n; i++) {
            const struct fq_member *m = &v->u.map.items[i];
            h = fp_value(fp_text(h, m->key, m->klen), m->val);
        }
        return h;
    }
    return h;
}

/* The members of a condition rec_derive may read, for fp_cond. */
enum {
    F_STATUS = 1,
    F_REASON = 2,
    F_MESSAGE = 4,
    F_TIME = 8
};

/* What rec_derive reads of each condition type (0: nothing). */
static const unsigned cond_reads[NCOND] = {
    [C_QUOTA_RESERVED] = F_STATUS | F_MESSAGE | F_TIME,
    [C_ADMITTED] = F_STATUS,
    [C_EVICTED] = F_STATUS | F_REASON | F_TIME,
    [C_REQUEUED] = F_STATUS,
};

/* fp_value of condition c (or of its absence), but of only the members
 * in `want` (the first of each key, as str_at finds it): the others
 * (observedGeneration, most reasons and messages) are most of its bytes
 * and rec_derive does not read them. */
static uint64_t fp_cond(uint64_t h, const struct fq_value *c, unsigned want)
{
    if (!c || c->type != FQ_V_MAP)
        return fp_value(h, c);
    const struct fq_value *f[4] = {NULL, NULL, NULL, NULL};
    bool seen[4] = {false, false, false, false};
    for (size_t i = 0; i < c->u.map.n; i++) {
        const struct fq_member *x = &c->u.map.items[i];
        int at = member_is(x, "status")             ? 0 :
                 member_is(x, "reason")             ? 1 :
                 member_is(x, "message")            ? 2 :
                 member_is(x, "lastTransitionTime") ? 3 :
                                                      -1;
        if (at >= 0 && !seen[at]) {
            seen[at] = true;
            f[at] = x->val;
        }
    }
    h = fp_word(h, FQ_V_MAP + 2);
    for (int i = 0; i < 4; i++)
        if (want & (1u << i))
            h = fp_value(h, f[i]);
    return h;
}

/*
 * A hash of what rec_derive reads of a stored workload: generation (the
 * spec moves it), uid, creation, annotations, status.admission, the
 * members it reads of the conditions it looks at, and the check states.
 * Writes it does not read (PodsReady, cost, podSetUpdates, a condition's
 * message it does not show) leave it, so they cost no decode. What a
 * record reads from elsewhere (the snapshot, Namespaces, priority
 * classes, an old slice) clears fp_ok instead. *adm_h is the hash of
 * status.admission alone (its key in admviews).
 */
static uint64_t fingerprint(const struct fq_value *obj,
                            const struct fq_value *const found[NCOND],
                            uint64_t *adm_h)
{
    const struct fq_value *md = fq_map_get(obj, "metadata");
    uint64_t h = FP_SEED;
    h = fp_value(h, fq_map_get(md, "generation"));
    h = fp_value(h, fq_map_get(md, "uid"));
    h = fp_value(h, fq_map_get(md, "creationTimestamp"));
    h = fp_value(h, fq_map_get(md, "annotations"));
    const struct fq_value *st = fq_map_get(obj, "status");
    *adm_h = fp_value(FP_SEED, fq_map_get(st, "admission"));
    h = fp_word(h, *adm_h);

    /* The first entry of each type, as cond_find reads them. */
    for (int t = 0; t < NCOND; t++)
        if (cond_reads[t])
            h = fp_cond(h, found[t], cond_reads[t]);
    const struct fq_value *chs = fq_map_get(st, "admissionChecks");
    for (size_t i = 0; i < fq_value_len(chs); i++) {
        const struct fq_value *ch = fq_seq_at(chs, i);
        h = fp_value(h, fq_map_get(ch, "name"));
        h = fp_value(h, fq_map_get(ch, "state"));
    }
    return h;
}

/* Brings the record of workload `key` in line with the store: derived
 * again (unless nothing it reads moved), made, or dropped when the
 * workload is gone or Finished. */
static void rec_refresh(struct kueue *k, struct fq_engine *e, const char *key,
                        int64_t now)
{
    struct rec *r = fq_smap_get(&k->recs, key);
    char ns[300];
    const char *name = key_split(key, ns, sizeof(ns));
    const struct fq_value *obj =
        name ? stored(e, FQ_KIND_WORKLOAD, ns, name) : NULL;
    const struct fq_value *cond[NCOND];
    cond_scan(obj, cond);
    if (!obj || cond_is_true(cond[C_FINISHED])) {
        if (r) {
            rec_detach(k, r);
            if (r->in_slices)
                fq_smap_del(&k->slices, key);
            fq_smap_del(&k->recs, key); /* frees r */
        }
        return;
    }
    if (!r) {
        r = fq_xcalloc(1, sizeof(*r));
        r->key = fq_xstrdup(key);
        r->w.ns = fq_xstrdup(ns);
        r->w.name = fq_xstrdup(name);
        r->qcq = -1;
        fq_smap_put(&k->recs, key, r);
    }
    uint64_t adm_h;
    uint64_t fp = fingerprint(obj, cond, &adm_h);
    if (r->fp_ok && r->fp == fp && !r->w.replaces)
        return;
    rec_derive(k, e, r, obj, cond, adm_h, now);
    r->fp = fp;
    r->fp_ok = true;
    if (r->w.replaces && !r->in_slices)
        fq_smap_add(&k->slices, key);
    else if (!r->w.replaces && r->in_slices)
        fq_smap_del(&k->slices, key);
    r->in_slices = r->w.replaces != NULL;
}

/* A candidate of a migration pass: tried (try_migrate) when it may
 * move now, its cool-down's end kept for the next pass. True when it
 * moved. */
static bool mig_visit(struct kueue *k, struct fq_engine *e, struct rec *r,
                      int64_t now)
{
    const struct wl *w = &r->w;
    if (!(w->holds && w->waiting_check && w->cq >= 0 && !w->evicting &&
          k->snap->cqs[w->cq].active))
        return false;
    if (try_migrate(k, e, r, now))
        return true;
    if (r->mig_valid && r->mig_retry < k->mig_retry)
        k->mig_retry = r->mig_retry;
    return false;
}

static int rec_key_cmp(const void *x, const void *y)
{
    return key_order((*(struct rec *const *)x)->key,
                     (*(struct rec *const *)y)->key);
}

/*
 * A pass of the migrate_to_preferred_flavor switch over the candidates,
 * in key order. When no candidate may have a reason to move but the new
 * ones (see mig_new), those alone are looked at, in that order, and the
 * others, which would only find what they found, are not; a move frees
 * quota, so after one every candidate after it is looked at, as a pass
 * over all of them does. mig_retry only needs to be no later than the
 * earliest cool-down end: a pass it brings early finds nothing to do.
 */
static void mig_pass(struct kueue *k, struct fq_engine *e, int64_t now)
{
    size_t n = k->nmig;
    FQ_GROW(k->mig_copy, k->capmig_copy, n);
    struct rec **v = k->mig_copy;
    memcpy(v, k->mig, n * sizeof(*v));
    uint64_t to = 0; /* flavors some candidate may move to */
    for (int f = 0; f < k->snap->adm.nflv; f++)
        if (k->mig_to[f] > 0)
            to |= 1ull << f;
    bool all = now >= k->mig_retry || (k->mig_rel & to);
    k->mig_dirty = false; /* a release during the pass sets both again */
    k->mig_rel = 0;
    size_t from = 0; /* the first candidate to look at in key order */
    if (all) {
        k->mig_retry = FQ_NEVER;
    } else {
        from = n;
        qsort(k->mig_new, k->nmig_new, sizeof(*k->mig_new), rec_key_cmp);
        for (size_t i = 0; i < k->nmig_new; i++)
            if (mig_visit(k, e, k->mig_new[i], now)) {
                from = k_lower(v, n, k->mig_new[i]->key) + 1;
                break;
            }
    }
    for (size_t i = 0; i < k->nmig_new; i++)
        k->mig_new[i]->in_mig_new = false;
    k->nmig_new = 0;
    for (size_t i = from; i < n; i++)
        mig_visit(k, e, v[i], now);
}

static void cycle(struct kueue *k, struct fq_engine *e, int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    struct snap *s = k->snap;
    int limit = cfg->policy.max_admissions_per_cq_per_cycle;
    bool cooldown = cfg->policy.flavor_failure_cooldown;
    k->need_cycle = false;
    k->cycle_no++;
    k->in_cycle = true;

    /* Policy (b) first: moves free the later flavor for others. */
    if (cfg->policy.migrate_to_preferred_flavor && k->nmig > 0 &&
        (k->mig_dirty || now >= k->mig_retry))
        mig_pass(k, e, now);

    /* Heads come from each queue's act array, in Kueue's heap order; a
     * cursor per queue skips those handled in this cycle. The arrays do
     * not change during the cycle: what a head's outcome moves (admitted:
     * out of the queue; inadmissible: to park) is applied at the end. */
    size_t ncq = (size_t)s->ncq;
    size_t *cur = k->cq_cur;
    int *taken = k->cq_taken;
    bool *blocked = k->cq_blocked;
    struct rec **heads = k->heads;
    for (size_t c = 0; c < ncq; c++) {
        cur[c] = k->pq[c].alo;
        taken[c] = 0;
        blocked[c] = false;
    }
    size_t nhandled = 0;
    bool progress = true;
    while (progress) {
        progress = false;
        /* One head per CQ per round; heads ordered as Kueue's iterator
         * does (non-borrowing first, then priority, then FIFO). */
        int nheads = 0;
        for (size_t c = 0; c < ncq; c++) {
            if (blocked[c] || !s->cqs[c].active)
                continue;
            if (limit > 0 && taken[c] >= limit)
                continue;
            struct pq *q = &k->pq[c];
            bool strict =
                s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO;
            for (; cur[c] < q->nact; cur[c]++) {
                struct rec *r = q->act[cur[c]];
                if (r->done == k->cycle_no)
                    continue;
                /* A parked workload ahead of it blocks a StrictFIFO
                 * queue. */
                if (strict && q->plo < q->npark &&
                    rec_cmp(q->park[q->plo], r) < 0) {
                    blocked[c] = true;
                    break;
                }
                heads[nheads++] = r;
                break;
            }
        }
        /* Nominate every head against the snapshot, then process them
         * in Kueue's order: non-borrowing first, priority, FIFO. A head
         * is assigned again when it is processed only if an earlier one
         * reserved or preempted (fq_adm_assign reads nothing else that
         * processing moves): until then its nomination is its outcome. */
        for (int h = 0; h < nheads; h++) {
            struct wl *w = &heads[h]->w;
            int64_t next = FQ_NEVER;
            w->avoid = avoid_mask(&s->adm, w->avoid_ann, now, &next);
            struct fq_adm_wl aw;
            adm_wl(w, &aw, cooldown);
            aw.cq = s->cqs[w->cq].adm;
            struct fq_adm_result *r = &k->nom[w->cq];
            fq_adm_assign(&s->adm, &aw, k->hs, (int)k->nh, r);
            w->nom_fit = r->mode == FQ_ADM_FIT;
            w->nom_borrows = r->borrows;
        }
        qsort(heads, (size_t)nheads, sizeof(*heads), head_cmp);
        bool moved = false; /* quota or holders moved since nominating */
        for (int h = 0; h < nheads; h++) {
            struct rec *rc = heads[h];
            struct wl *w = &rc->w;
            struct cq_info *c = &s->cqs[w->cq];
            bool strict = s->adm.cqs[c->adm].strategy == FQ_ADM_STRICT_FIFO;
            rc->done = k->cycle_no;
            FQ_GROW(k->handled, k->caphandled, nhandled + 1);
            k->handled[nhandled++] = rc;
            taken[w->cq]++;
            progress = true;
            struct fq_adm_result *r = &k->nom[w->cq];
            if (moved) {
                struct fq_adm_wl aw;
                adm_wl(w, &aw, cooldown);
                aw.cq = c->adm;
                fq_adm_result_release(r);
                fq_adm_assign(&s->adm, &aw, k->hs, (int)k->nh, r);
            }
            /* A slice never preempts the slice it replaces. */
            for (int t = 0;
                 w->replaces && r->mode == FQ_ADM_PREEMPT && t < r->ntargets;
                 t++)
                if (!strcmp(k->hw[r->targets[t]]->w.name, w->replaces) &&
                    !strcmp(k->hw[r->targets[t]]->w.ns, w->ns))
                    r->mode = FQ_ADM_NO_CANDIDATES;
            if (r->mode == FQ_ADM_FIT) {
                reserve(k, e, s, w, r, now, NULL);
                if (w->replaces)
                    fq_kueue_slice_replaced(e, w->ns, w->replaces, w->name,
                                            now);
                rc->parked = 0;
                moved = true;
            } else if (r->mode == FQ_ADM_PREEMPT && r->ntargets > 0) {
                for (int t = 0; t < r->ntargets; t++) {
                    struct rec *v = k->hw[r->targets[t]];
                    if (!v->w.evicting) {
                        preempt(k, e, &v->w, w, r->target_reason[t], now);
                        k->hs[r->targets[t]].evicting = true;
                    }
                }
                moved = true;
                char msg[FQ_ADM_MSG_MAX + 64];
                snprintf(msg, sizeof(msg),
                         "%s%sPending the preemption of %d workload(s)", r->msg,
                         r->msg[0] ? ". " : "", r->ntargets);
                set_pending(e, w, "WaitingForPreemptedWorkloads", msg, now);
                /* Stays at the head: retried next cycle. */
                k->need_cycle = true;
                blocked[w->cq] = true;
            } else if (w->nom_fit) {
                /* Another head took the room first: retry next cycle. */
                set_pending(e, w, "Pending",
                            "Workload no longer fits after processing "
                            "another workload",
                            now);
                k->need_cycle = true;
            } else {
                set_pending(e, w, fq_adm_why_reason(r->why), r->msg, now);
                rc->parked = k->park_gen;
                if (strict)
                    blocked[w->cq] = true;
            }
            fq_adm_result_release(r);
        }
        /* Kueue: one pop per CQ per cycle. */
        if (limit == 1)
            break;
    }
    /* A cycle that tried no head took no time (Kueue's scheduler sleeps
     * until a queue has a head). */
    if (nhandled > 0) {
        k->stats.cycles++;
        k->last_cycle = now;
        /* Another cycle if some queue still has a head to try. */
        for (size_t c = 0; c < ncq && !k->need_cycle; c++) {
            if (blocked[c] || !s->cqs[c].active)
                continue;
            const struct pq *q = &k->pq[c];
            for (size_t i = cur[c]; i < q->nact; i++)
                if (q->act[i]->done != k->cycle_no) {
                    k->need_cycle = true;
                    break;
                }
        }
    }
    /* What the heads' outcomes moved. */
    for (size_t i = 0; i < nhandled; i++) {
        struct rec *rc = k->handled[i];
        if (!rc->w.pending)
            pq_remove(k, rc);
        else if (rec_parked(k, rc))
            pq_park(k, rc);
    }
    holders_settle(k);
}

/* --- Kueue-paced cycles, ahead ----------------------------------------- */

/*
 * With a cycle pace (cycle_ms > 0: Kueue's one pop per ClusterQueue per
 * cycle), a deep queue is tried one head per cycle after every requeue,
 * and most of those cycles only find their head inadmissible and park it:
 * in a replay, hundreds of millions of settles that decide nothing. So at
 * the end of a run, ff_plan looks ahead over the next cycles, each taking
 * the next head of each queue as cycle() would, while every such head is
 * certainly inadmissible against the snapshot as it is now (its podset
 * shape's outcome, ff_quiet). The controller then wakes only for the
 * first cycle that may do more, and the next run, whenever it comes,
 * first replays the quiet cycles that came before its own time (ff_replay:
 * park those heads, count the cycles, move last_cycle). Nothing can change
 * the snapshot or the queues in between without a run, and a run replays
 * only the cycles before it, so every admission happens when it would
 * have, cycle by cycle. What differs: a replayed cycle does not rewrite
 * its head's QuotaReserved=False message (the head keeps its last one
 * until a real cycle tries it again). A plan looks 1, 2, 4, ... cycles
 * ahead, doubling while nothing else happens, so the work ahead is never
 * more than the cycles it replaces.
 */

#define FF_MAX_AHEAD (1 << 20)

/* Is this head certainly inadmissible now (NoFit or NoCandidates on a
 * queue whose outcome depends on nothing but its podsets and usage)? */
static bool ff_quiet(struct kueue *k, struct rec *r)
{
    struct snap *s = k->snap;
    struct wl *w = &r->w;
    if (r->shape == SHAPE_UNKNOWN)
        r->shape = shape_of(k, w);
    if (r->shape < 0 || w->replaces || w->avoid_ann || w->cq < 0)
        return false;
    const struct fq_adm_cq *ac = &s->adm.cqs[s->cqs[w->cq].adm];
    if (ac->within_cq != FQ_ADM_NEVER ||
        ac->reclaim_within_cohort != FQ_ADM_NEVER ||
        ac->borrow_within_cohort != FQ_ADM_NEVER)
        return false; /* preemption: the holders matter */
    size_t at = (size_t)r->shape * (size_t)s->ncq + (size_t)w->cq;
    if (at >= k->memo_cap) {
        size_t cap = k->memo_cap ? k->memo_cap : 64;
        while (cap <= at)
            cap *= 2;
        k->memo = fq_xrealloc(k->memo, cap * sizeof(*k->memo));
        memset(&k->memo[k->memo_cap], 0,
               (cap - k->memo_cap) * sizeof(*k->memo));
        k->memo_cap = cap;
    }
    struct memo *m = &k->memo[at];
    if (m->ver != k->snap_ver) {
        struct fq_adm_wl aw;
        adm_wl(w, &aw, false);
        aw.cq = s->cqs[w->cq].adm;
        aw.no_msg = true;
        struct fq_adm_result res;
        fq_adm_assign(&s->adm, &aw, k->hs, (int)k->nh, &res);
        m->ver = k->snap_ver;
        m->mode = (int8_t)res.mode;
        fq_adm_result_release(&res);
    }
    return m->mode == FQ_ADM_NOFIT || m->mode == FQ_ADM_NO_CANDIDATES;
}

/* The head queue c gives the next cycle when its first `skip` act
 * entries are taken (parked) already, or NULL; a StrictFIFO queue with a
 * parked workload ahead gives none. */
static struct rec *ff_head(struct kueue *k, size_t c, size_t skip)
{
    const struct snap *s = k->snap;
    const struct pq *q = &k->pq[c];
    if (!s->cqs[c].active || q->alo + skip >= q->nact)
        return NULL;
    struct rec *r = q->act[q->alo + skip];
    if (s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO &&
        (skip > 0 || (q->plo < q->npark && rec_cmp(q->park[q->plo], r) < 0)))
        return NULL;
    return r;
}

/* Replays the planned quiet cycles whose time is before now. */
static void ff_replay(struct kueue *k, int64_t now)
{
    if (k->ff_n == 0)
        return;
    if (k->ff_snap_ver != k->snap_ver || k->ff_q_ver != k->q_ver) {
        k->ff_n = 0; /* cannot be: both move only in runs */
        return;
    }
    int64_t due = (now - (k->ff_incl ? 0 : 1) - k->last_cycle) / k->cycle_ms;
    k->ff_incl = false;
    if (due <= 0)
        return;
    if (due > k->ff_n)
        due = k->ff_n;
    /* Each of the `due` cycles parks the head of each queue: the first
     * `due` act entries of a queue, or one of a StrictFIFO queue (that
     * head, parked, blocks it from then on). */
    size_t ncq = (size_t)k->snap->ncq;
    for (size_t c = 0; c < ncq; c++) {
        if (!ff_head(k, c, 0))
            continue;
        const struct pq *q = &k->pq[c];
        const struct snap *s = k->snap;
        size_t live = q->nact - q->alo;
        size_t m = (uint64_t)due < live ? (size_t)due : live;
        if (s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO)
            m = 1;
        pq_park_first(k, c, m);
    }
    k->stats.cycles += (uint64_t)due;
    k->last_cycle += due * k->cycle_ms;
    k->ff_n -= due;
    if (k->ff_n == 0)
        k->ff_slept = false;
    k->ff_snap_ver = k->snap_ver;
    k->ff_q_ver = k->q_ver;
}

/* Forgets the plan (a change came before its first cycle). */
static void ff_drop(struct kueue *k)
{
    k->ff_n = 0;
    if (k->ff_slept)
        k->need_cycle = true; /* the plan had put it off */
    k->ff_slept = false;
}

/*
 * A change the controller sees. One at the instant of the plan comes
 * before every planned cycle. One later comes after those before its
 * time (ff_replay), and after the one at its time too when a controller
 * made it in a settle before this controller ran: a cycle due then would
 * have run first.
 */
static void ff_note(struct kueue *k, struct fq_engine *e,
                    const struct fq_change *c)
{
    if (k->ff_n == 0)
        return;
    int64_t now = fq_engine_now(e);
    if (now <= k->ff_at) {
        ff_drop(k);
        return;
    }
    if (c->by_controller && k->ran_at < now &&
        (now - k->last_cycle) % k->cycle_ms == 0 &&
        (now - k->last_cycle) / k->cycle_ms <= k->ff_n)
        k->ff_incl = true;
}

/* How many heads queue c gives the next cycles, one a cycle, until it
 * has none left (a StrictFIFO queue gives one: that head, parked, blocks
 * it). */
static size_t ff_heads(struct kueue *k, size_t c)
{
    const struct pq *q = &k->pq[c];
    if (!ff_head(k, c, 0))
        return 0;
    const struct snap *s = k->snap;
    if (s->adm.cqs[s->cqs[c].adm].strategy == FQ_ADM_STRICT_FIFO)
        return 1;
    return q->nact - q->alo;
}

/* How many of the first n heads of queue c are quiet before the first
 * that is not. Heads of one shape get one outcome (ff_quiet's memo), so
 * a head of the shape of the quiet one before it is quiet too: a deep
 * queue is read at the cost of a load per head. */
static size_t ff_quiet_run(struct kueue *k, size_t c, size_t n)
{
    const struct pq *q = &k->pq[c];
    int quiet_shape = -1; /* the shape of a quiet head before, or -1 */
    size_t i = 0;
    for (; i < n; i++) {
        struct rec *r = q->act[q->alo + i];
        if (r->shape >= 0 && r->shape == quiet_shape && !r->w.replaces &&
            !r->w.avoid_ann)
            continue;
        if (!ff_quiet(k, r))
            break;
        quiet_shape = r->shape;
    }
    return i;
}

/*
 * Plans the quiet cycles after last_cycle (see above). The j-th cycle
 * ahead takes the j-th head of each queue that has one: it is quiet
 * when every one of those heads is, and the plan ends at the first that
 * is not, at the first with no head at all, or `ahead` cycles on. So
 * each queue is read on its own, up to the nearest end found so far.
 */
static void ff_plan(struct kueue *k, int64_t now)
{
    if (k->cycle_ms <= 0 || !k->snap || !k->need_cycle)
        return;
    /* What the next full run takes in first (records to derive, a
     * requeue, new configuration, slices) would change the queues
     * before the first cycle: no plan then. */
    if (k->dirty.n > 0 || k->requeue || k->config_dirty || k->slices.n > 0) {
        k->ff_n = 0;
        k->ff_slept = false;
        return;
    }
    if (k->ff_n > 0 && k->ff_snap_ver == k->snap_ver && k->ff_q_ver == k->q_ver)
        return; /* still true */
    k->ff_slept = false;
    size_t ncq = (size_t)k->snap->ncq;
    int64_t ahead = k->ff_len > 0 ? k->ff_len : 1;
    k->ff_len = ahead * 2 < FF_MAX_AHEAD ? ahead * 2 : FF_MAX_AHEAD;
    size_t n = (size_t)ahead; /* cycles planned so far */
    size_t most = 0;          /* the most heads a queue gives */
    for (size_t c = 0; c < ncq; c++) {
        size_t nh = ff_heads(k, c);
        if (nh > most)
            most = nh;
        size_t look = nh < n ? nh : n;
        size_t quiet = ff_quiet_run(k, c, look);
        if (quiet < look)
            n = quiet; /* cycle `quiet` takes a head that is not */
    }
    /* After the last quiet cycle no queue has a head: Kueue's scheduler
     * would sleep until something changes. */
    bool exhausted = most < n;
    k->ff_n = exhausted ? (int64_t)most : (int64_t)n;
    if (exhausted) {
        k->need_cycle = false;
        k->ff_slept = k->ff_n > 0;
    }
    k->ff_at = now;
    k->ff_snap_ver = k->snap_ver;
    k->ff_q_ver = k->q_ver;
}

/* --- ClusterQueue / LocalQueue status ---------------------------------- */

/* Writes each queue's status from the counts the records keep (only when
 * some count or the configuration moved since the last write). */
static void write_queue_status(struct kueue *k, struct fq_engine *e)
{
    struct snap *s = k->snap;
    k->counts_dirty = false;
    size_t nc = ncell(s);
    for (int i = 0; i < s->ncq; i++) {
        struct cq_info *c = &s->cqs[i];
        const struct fq_value *cur =
            stored(e, FQ_KIND_CLUSTERQUEUE, "", c->name);
        if (!cur)
            continue;
        struct fq_value *st = fq_value_map();
        struct fq_value *conds = fq_value_seq();
        const struct fq_value *old = cond_find(cur, "Active");
        struct fq_value *cd = fq_value_map();
        const char *status = c->active ? "True" : "False";
        fq_map_set(cd, "type", fq_value_str("Active"));
        fq_map_set(cd, "status", fq_value_str(status));
        char ts[40];
        fmt_time(fq_engine_now(e), ts, sizeof(ts));
        if (old && !strcmp(fq_value_path_str(old, "status", ""), status))
            fq_map_set(
                cd, "lastTransitionTime",
                fq_value_str(fq_value_path_str(old, "lastTransitionTime", ts)));
        else
            fq_map_set(cd, "lastTransitionTime", fq_value_str(ts));
        fq_map_set(cd, "reason",
                   fq_value_str(c->active ? "Ready" : c->inactive_reason));
        fq_map_set(cd, "message",
                   fq_value_str(c->active ? "Can admit new workloads" :
                                            c->inactive_msg));
        fq_seq_push(conds, cd);
        fq_map_set(st, "conditions", conds);
        fq_map_set(st, "pendingWorkloads", fq_value_int(k->cqn[i][0]));
        fq_map_set(st, "reservingWorkloads", fq_value_int(k->cqn[i][1]));
        fq_map_set(st, "admittedWorkloads", fq_value_int(k->cqn[i][2]));
        /* flavorsReservation (reserved) and flavorsUsage (admitted):
         * total and borrowed per flavor/resource. */
        const struct fq_adm_cq *ac = &s->adm.cqs[c->adm];
        const struct fq_adm_node *node = &s->adm.nodes[ac->node];
        for (int kind = 0; kind < 2; kind++) {
            struct fq_value *fr = fq_value_seq();
            for (int g = 0; g < ac->ngroups; g++) {
                for (int fi = 0; fi < ac->groups[g].nflv; fi++) {
                    int f = ac->groups[g].flv[fi];
                    struct fq_value *fe = fq_value_map();
                    fq_map_set(fe, "name", fq_value_str(s->adm.flv_names[f]));
                    struct fq_value *rs = fq_value_seq();
                    for (int r = 0; r < s->adm.nres; r++) {
                        if (!(ac->groups[g].res_mask & (1u << r)))
                            continue;
                        const struct fq_adm_cell *cell =
                            &node->cells[f * s->adm.nres + r];
                        struct fq_value *re = fq_value_map();
                        char q[48];
                        fq_map_set(re, "name",
                                   fq_value_str(s->adm.res_names[r]));
                        int64_t used =
                            kind == 0 ?
                                cell->usage :
                                k->adm_use[(size_t)i * nc +
                                           (size_t)(f * s->adm.nres + r)];
                        fmt_qty(s->adm.res_names[r], used, q, sizeof(q));
                        fq_map_set(re, "total", fq_value_str(q));
                        int64_t b = used - cell->nominal;
                        fmt_qty(s->adm.res_names[r], b > 0 ? b : 0, q,
                                sizeof(q));
                        fq_map_set(re, "borrowed", fq_value_str(q));
                        fq_seq_push(rs, re);
                    }
                    fq_map_set(fe, "resources", rs);
                    fq_seq_push(fr, fe);
                }
            }
            fq_map_set(st, kind == 0 ? "flavorsReservation" : "flavorsUsage",
                       fr);
        }
        /* Keep what the capacity controller writes here (cost.c). */
        const struct fq_value *cost = fq_value_path(cur, "status.cost");
        if (cost)
            fq_map_set(st, "cost", fq_value_clone(cost));
        if (!fq_value_equal(st, fq_map_get(cur, "status")))
            fq_objstore_set_status(fq_engine_store(e), FQ_KIND_CLUSTERQUEUE, "",
                                   c->name, st, NULL);
        else
            fq_value_free(st);
    }
    for (int i = 0; i < s->nlq; i++) {
        struct lq_info *l = &s->lqs[i];
        const struct fq_value *cur =
            stored(e, FQ_KIND_LOCALQUEUE, l->ns, l->name);
        if (!cur)
            continue;
        struct fq_value *st = fq_value_map();
        fq_map_set(st, "pendingWorkloads", fq_value_int(k->lqn[i][0]));
        fq_map_set(st, "reservingWorkloads", fq_value_int(k->lqn[i][1]));
        fq_map_set(st, "admittedWorkloads", fq_value_int(k->lqn[i][2]));
        if (!fq_value_equal(st, fq_map_get(cur, "status")))
            fq_objstore_set_status(fq_engine_store(e), FQ_KIND_LOCALQUEUE,
                                   l->ns, l->name, st, NULL);
        else
            fq_value_free(st);
    }
}

/* --- the controller ------------------------------------------------------ */

static void *create(struct fq_engine *e)
{
    struct kueue *k = fq_xcalloc(1, sizeof(*k));
    k->cycle_ms = fq_engine_config(e)->policy.cycle_ms;
    if (k->cycle_ms < 0)
        k->cycle_ms = 0;
    k->last_cycle = INT64_MIN / 2;
    k->need_cycle = true;
    k->config_dirty = true;
    k->recs.free_val = rec_free;
    k->timers.free_val = free;
    k->psviews.free_val = psview_free;
    k->admviews.free_val = free;
    k->park_gen = 1;
    k->snap_ver = 1;
    k->ff_len = 1;
    k->last_status = INT64_MIN / 2;
    k->ran_at = INT64_MIN / 2;
    return k;
}

/* --- lifecycle deadlines ---------------------------------------------- */

static bool tq_less(const struct timer *a, const struct timer *b)
{
    return a->t < b->t;
}

static bool tq_valid(const struct kueue *k, const struct timer *t)
{
    const int64_t *at = fq_smap_get(&k->timers, t->key);
    return at && *at == t->t;
}

static void tq_push(struct kueue *k, int64_t t, const char *key)
{
    FQ_GROW(k->tq, k->captq, k->ntq + 1);
    struct timer x = {t, fq_xstrdup(key)};
    size_t i = k->ntq++;
    while (i > 0 && tq_less(&x, &k->tq[(i - 1) / 2])) {
        k->tq[i] = k->tq[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    k->tq[i] = x;
}

static struct timer tq_pop(struct kueue *k)
{
    struct timer top = k->tq[0], last = k->tq[--k->ntq];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= k->ntq)
            break;
        if (c + 1 < k->ntq && tq_less(&k->tq[c + 1], &k->tq[c]))
            c++;
        if (!tq_less(&k->tq[c], &last))
            break;
        k->tq[i] = k->tq[c];
        i = c;
    }
    if (k->ntq)
        k->tq[i] = last;
    return top;
}

/* Drops stale entries from the top, so the top is the next deadline. */
static void tq_clean(struct kueue *k)
{
    while (k->ntq && !tq_valid(k, &k->tq[0]))
        free(tq_pop(k).key);
}

static int64_t tq_next(const struct kueue *k)
{
    return k->ntq ? k->tq[0].t : FQ_NEVER;
}

/* The workload `key` wants lifecycle() again at t (FQ_NEVER: not). */
static void timer_set(struct kueue *k, const char *key, int64_t t)
{
    int64_t *at = fq_smap_get(&k->timers, key);
    if (t == FQ_NEVER) {
        if (at)
            fq_smap_del(&k->timers, key);
        return;
    }
    if (at && *at == t)
        return;
    at = fq_xmalloc(sizeof(*at));
    *at = t;
    fq_smap_put(&k->timers, key, at);
    tq_push(k, t, key);
}

/* --- configuration and seeding --------------------------------------- */

static void recs_mark_all(struct kueue *k)
{
    for (size_t i = 0; i < k->recs.cap; i++)
        if (k->recs.t[i].key) {
            kl_add(&k->dirty, k->recs.t[i].key);
            kl_add(&k->lc_dirty, k->recs.t[i].key);
        }
}

static void queues_free(struct kueue *k)
{
    for (int c = 0; k->snap && c < k->snap->ncq; c++) {
        free(k->pq[c].act);
        free(k->pq[c].park);
    }
    free(k->pq);
    free(k->cqn);
    free(k->lqn);
    free(k->adm_use);
    free(k->hw);
    free(k->hs);
    free(k->mig);
    free(k->mig_new);
    k->mig_new = NULL;
    k->nmig_new = k->capmig_new = 0;
    memset(k->mig_to, 0, sizeof(k->mig_to));
    free(k->cq_cur);
    free(k->cq_taken);
    free(k->cq_blocked);
    free(k->heads);
    free(k->nom);
    k->nom = NULL;
    k->cq_cur = NULL;
    k->cq_taken = NULL;
    k->cq_blocked = NULL;
    k->heads = NULL;
    free(k->memo);
    fq_smap_clear(&k->shapes);
    fq_smap_clear(&k->psviews); /* they hold the snapshot's indexes */
    fq_smap_clear(&k->admviews);
    k->nshapes = 0;
    k->memo = NULL;
    k->memo_cap = 0;
    k->ff_n = 0;
    k->pq = NULL;
    k->cqn = k->lqn = NULL;
    k->adm_use = NULL;
    k->hw = NULL;
    k->hs = NULL;
    k->mig = NULL;
    k->nh = k->caph = k->nh_sorted = 0;
    k->nmig = k->capmig = 0;
}

/*
 * The configuration changed: a new snapshot, empty queues and counts,
 * and every record derived again (by the next full run) and its
 * lifecycle looked at (checks may apply differently). O(workloads), but
 * only when the configuration moves.
 */
static void rebuild(struct kueue *k, struct fq_engine *e)
{
    k->config_dirty = false;
    queues_free(k);
    if (k->snap) {
        snap_release(k->snap);
        free(k->snap);
    }
    for (size_t i = 0; i < k->recs.cap; i++) {
        struct rec *r = k->recs.t[i].val;
        if (!k->recs.t[i].key)
            continue;
        r->accounted = r->holder = r->in_mig = r->in_mig_new = false;
        r->in_park_gen = 0;
        r->fp_ok = r->spec_ok = false;
        r->qcq = -1;
        r->shape = SHAPE_UNKNOWN; /* queues_free forgot the shapes */
    }
    recs_mark_all(k);
    k->snap = fq_xmalloc(sizeof(*k->snap));
    snap_build(k->snap, e);
    struct snap *s = k->snap;
    k->pq = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->pq));
    k->cqn = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->cqn));
    k->lqn = fq_xcalloc((size_t)s->nlq + 1, sizeof(*k->lqn));
    k->adm_use = fq_xcalloc((size_t)s->ncq * ncell(s) + 1, sizeof(*k->adm_use));
    k->cq_cur = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->cq_cur));
    k->cq_taken = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->cq_taken));
    k->cq_blocked = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->cq_blocked));
    k->heads = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->heads));
    k->nom = fq_xcalloc((size_t)s->ncq + 1, sizeof(*k->nom));
    k->snap_ver++;
    k->counts_dirty = true;
    k->mig_dirty = true;
}

/* The first run: workloads stored before the controller watched (a
 * restart) are looked at like changed ones. */
static void seed(struct kueue *k, struct fq_engine *e)
{
    k->seeded = true;
    const struct fq_object **objs;
    size_t n =
        fq_objstore_list(fq_engine_store(e), FQ_KIND_WORKLOAD, NULL, &objs);
    for (size_t i = 0; i < n; i++) {
        if (cond_true(objs[i]->obj, "Finished"))
            continue;
        char key[600];
        wl_key(objs[i]->ns, objs[i]->name, key, sizeof(key));
        fq_smap_add(&k->live, key);
        kl_add(&k->dirty, key);
        kl_add(&k->lc_dirty, key);
    }
    free(objs);
}

static void destroy(void *self)
{
    struct kueue *k = self;
    queues_free(k);
    if (k->snap) {
        snap_release(k->snap);
        free(k->snap);
    }
    fq_smap_free(&k->seen_gen);
    fq_smap_free(&k->recs);
    kl_free(&k->dirty);
    kl_free(&k->lc_dirty);
    fq_smap_free(&k->slices);
    fq_smap_free(&k->live);
    fq_smap_free(&k->timers);
    fq_smap_free(&k->shapes);
    fq_smap_free(&k->psviews);
    fq_smap_free(&k->admviews);
    for (size_t i = 0; i < k->ntq; i++)
        free(k->tq[i].key);
    free(k->tq);
    free(k->handled);
    free(k->mig_copy);
    free(k);
}

static void on_change(void *self, struct fq_engine *e,
                      const struct fq_change *c)
{
    struct kueue *k = self;
    if (c->kind != FQ_KIND_WORKLOAD) {
        if (c->obj) {
            /* Status-only writes (ours) keep the generation: not a change
             * of capacity or configuration. */
            char key[700];
            snprintf(
                key, sizeof(key), "%d/%s/%s@%lld", (int)c->kind, c->ns, c->name,
                (long long)fq_value_path_int(c->obj, "metadata.generation", 0));
            if (fq_smap_has(&k->seen_gen, key)) {
                /* Labels of a Namespace and a priority class's value are
                 * no spec: records read them, so derive them again. */
                if (c->kind == FQ_KIND_NAMESPACE ||
                    c->kind == FQ_KIND_WORKLOADPRIORITYCLASS)
                    ff_note(k, e, c);
                if (c->kind == FQ_KIND_NAMESPACE ||
                    c->kind == FQ_KIND_WORKLOADPRIORITYCLASS)
                    for (size_t i = 0; i < k->recs.cap; i++)
                        if (k->recs.t[i].key) {
                            struct rec *r = k->recs.t[i].val;
                            r->fp_ok = r->spec_ok = false;
                            kl_add(&k->dirty, k->recs.t[i].key);
                        }
                return;
            }
            fq_smap_add(&k->seen_gen, key);
        }
        ff_note(k, e, c);
        k->config_dirty = true;
        k->requeue = true;
        k->need_cycle = true;
        k->ff_len = 1;
        fq_engine_kick(e, self);
        return;
    }
    ff_note(k, e, c);
    char key[600];
    wl_key(c->ns, c->name, key, sizeof(key));
    struct rec *r = fq_smap_get(&k->recs, key);
    const struct fq_value *cond[NCOND];
    cond_scan(c->obj, cond);
    if (c->type == FQ_CHANGE_DELETED || cond_is_true(cond[C_FINISHED])) {
        /* Leaving the live set frees what it held; a finished workload
         * being deleted, or written again, frees nothing more. */
        if (fq_smap_has(&k->live, key)) {
            fq_smap_del(&k->live, key);
            k->requeue = true;
        }
        kl_add(&k->dirty, key);    /* its record goes */
        kl_add(&k->lc_dirty, key); /* and its deadlines */
        k->ff_len = 1;
    } else if (c->obj) {
        fq_smap_add(&k->live, key);
        /* Our own QuotaReserved=False message leaves the record true. */
        if (!(r && c->type == FQ_CHANGE_MODIFIED && r->own_rev == c->rev)) {
            kl_add(&k->dirty, key);
            kl_add(&k->lc_dirty, key);
            k->ff_len = 1;
        }
        /* A changed workload gets a fresh chance. */
        if (r && rec_parked(k, r) && !cond[C_QUOTA_RESERVED])
            r->parked = 0;
    }
    k->need_cycle = true;
    fq_engine_kick(e, self);
}

/*
 * Whether lifecycle() may have something to do for this workload: most
 * workloads (pending without backoff, admitted and running) have nothing,
 * and skipping them spares a deep copy per workload per run. cond gets
 * obj's cond_scan, which lifecycle() reads instead of scanning again.
 */
static bool needs_lifecycle(const struct fq_value *obj,
                            const struct fq_engine_config *cfg,
                            const struct fq_value *cond[NCOND],
                            bool k_stops_any)
{
    cond_scan(obj, cond);
    if (cond_is_true(cond[C_FINISHED]))
        return false;
    const struct fq_value *st = fq_map_get(obj, "status");
    bool active = fq_value_path_bool(obj, "spec.active", true);
    bool has_adm = fq_map_get(st, "admission") != NULL;
    bool evicted = cond_is_true(cond[C_EVICTED]);
    if (!active)
        return has_adm || !evicted;
    if (cond_is_true(cond[C_DEACTIVATION_TARGET]))
        return true;
    if (has_adm) {
        if (evicted || !cond_is_true(cond[C_ADMITTED]))
            return true;
        if (cfg->pods_ready.enable && !cond_is_true(cond[C_PODS_READY]))
            return true;
        const struct fq_value *chs = fq_map_get(st, "admissionChecks");
        for (size_t i = 0; i < fq_value_len(chs); i++)
            if (strcmp(str_at(fq_seq_at(chs, i), "state", ""), "Ready"))
                return true;
        /* kueue_policy.c: a deadline, or a stopped queue to drain. */
        return fq_value_path(obj, "spec.maximumExecutionTimeSeconds") ||
               k_stops_any;
    }
    const struct fq_value *rq = cond[C_REQUEUED];
    return rq && !strcmp(str_at(rq, "status", ""), "False");
}

/* Whether some LocalQueue or ClusterQueue has a stop policy (then admitted
 * workloads may have to be drained: kueue_policy.c). */
static bool stops_any(const struct kueue *k)
{
    const struct snap *s = k->snap;
    for (int i = 0; s && i < s->nlq; i++)
        if (s->lqs[i].stop != FQ_STOP_NONE)
            return true;
    for (int i = 0; s && i < s->ncq; i++)
        if (s->cqs[i].view.stop_policy != FQ_STOP_NONE)
            return true;
    return false;
}

/* lifecycle() for the workloads that changed and those whose deadline
 * came, in the store's order. */
static void lifecycle_pass(struct kueue *k, struct fq_engine *e, int64_t now)
{
    const struct fq_engine_config *cfg = fq_engine_config(e);
    struct fq_objstore *st = fq_engine_store(e);
    while (k->ntq && k->tq[0].t <= now) {
        struct timer t = tq_pop(k);
        if (tq_valid(k, &t))
            kl_add(&k->lc_dirty, t.key);
        free(t.key);
    }
    if (k->lc_dirty.n == 0)
        return;
    const char *const *keys;
    size_t n = kl_sorted(&k->lc_dirty, &keys);
    bool stops = stops_any(k); /* once a pass, not per workload */
    for (size_t i = 0; i < n; i++) {
        char ns[300];
        const char *name = key_split(keys[i], ns, sizeof(ns));
        if (!name)
            name = "";
        /* The stored tree, to read and, if lifecycle() changes it, to
         * change in place (fq_objstore_edited tells the store). */
        struct fq_value *obj =
            fq_objstore_edit_in_place(st, FQ_KIND_WORKLOAD, ns, name);
        const struct fq_value *cond[NCOND];
        if (!obj || !needs_lifecycle(obj, cfg, cond, stops)) {
            timer_set(k, keys[i], FQ_NEVER);
            continue;
        }
        k->lc_timer = FQ_NEVER;
        k->lc_changed = k->lc_spec = false;
        lifecycle(k, e, k->snap, obj, cond, now);
        if (k->lc_changed)
            fq_objstore_edited(st, FQ_KIND_WORKLOAD, ns, name, k->lc_spec);
        timer_set(k, keys[i], k->lc_timer);
    }
    kl_clear(&k->lc_dirty);
}

/* Records of the workloads that changed (and of every elastic slice),
 * derived again in the store's order. */
static void refresh_pass(struct kueue *k, struct fq_engine *e, int64_t now)
{
    for (size_t i = 0; i < k->slices.cap; i++)
        if (k->slices.t[i].key)
            kl_add(&k->dirty, k->slices.t[i].key);
    if (k->dirty.n == 0)
        return;
    const char *const *keys;
    size_t n = kl_sorted(&k->dirty, &keys);
    for (size_t i = 0; i < n; i++)
        rec_refresh(k, e, keys[i], now);
    kl_clear(&k->dirty);
}

/*
 * A run. Every run gives lifecycle() to what changed or came due. A full
 * run (a cycle is due, or a deadline came) also derives the changed
 * records, runs the scheduling cycle when its time has come, and writes
 * the queues' status; between Kueue-paced cycles the records wait, as
 * Kueue's queues see changes at its next cycle.
 */
static void run(void *self, struct fq_engine *e, int64_t now)
{
    struct kueue *k = self;
    ff_replay(k, now);
    k->ff_incl = false;
    k->ran_at = now;
    bool full =
        ((k->need_cycle || k->requeue) && now >= k->last_cycle + k->cycle_ms) ||
        now >= tq_next(k);
    if (k->config_dirty)
        rebuild(k, e);
    if (!k->seeded)
        seed(k, e);
    lifecycle_pass(k, e, now);
    tq_clean(k);
    if (!full) {
        ff_plan(k, now);
        return;
    }
    if (k->requeue) {
        pq_requeue(k);
        k->requeue = false;
        k->need_cycle = true;
    }
    refresh_pass(k, e, now);
    k->quota_moved = false;
    if (k->need_cycle && now >= k->last_cycle + k->cycle_ms)
        cycle(k, e, now);
    if (k->counts_dirty &&
        now >= k->last_status + fq_engine_config(e)->status_every_ms) {
        write_queue_status(k, e);
        k->last_status = now;
    }
    ff_plan(k, now);
}

static int64_t next_wakeup(const void *self)
{
    const struct kueue *k = self;
    int64_t t = tq_next(k);
    if (k->need_cycle) {
        /* After the quiet cycles planned (ff_plan), if any. */
        int64_t c = k->last_cycle + (k->ff_n + 1) * k->cycle_ms;
        if (c < t)
            t = c;
    }
    return t;
}

void fq_kueue_get_stats(const void *self, struct fq_kueue_stats *out)
{
    const struct kueue *k = self;
    *out = k->stats;
}

const struct fq_controller_ops fq_kueue_controller = {
    .name = "kueue",
    .watch = FQ_KIND_BIT(FQ_KIND_RESOURCEFLAVOR) |
             FQ_KIND_BIT(FQ_KIND_CLUSTERQUEUE) | FQ_KIND_BIT(FQ_KIND_COHORT) |
             FQ_KIND_BIT(FQ_KIND_LOCALQUEUE) | FQ_KIND_BIT(FQ_KIND_WORKLOAD) |
             FQ_KIND_BIT(FQ_KIND_WORKLOADPRIORITYCLASS) |
             FQ_KIND_BIT(FQ_KIND_ADMISSIONCHECK) |
             FQ_KIND_BIT(FQ_KIND_NAMESPACE),
    .create = create,
    .destroy = destroy,
    .on_change = on_change,
    .run = run,
    .next_wakeup = next_wakeup,
};
