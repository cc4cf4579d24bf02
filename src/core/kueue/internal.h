/*
 * internal.h - what the files of the kueue controller share: its state
 * (struct kueue), the configuration snapshot (struct snap), the compact
 * workload (struct wl) and its record (struct rec), and the functions one
 * file calls in another (named kq_*).
 *
 * Private to src/core/kueue/: the rest of the core and the shells talk to
 * the controller through stored objects, flexq/engine.h and kueue.h.
 *
 * The files, in the order a change travels through them:
 *
 *   controller.c the controller: on_change, run, deadlines, queue status
 *   snapshot.c   configuration objects -> struct snap (with admission.c)
 *   workload.c   a Workload -> struct wl; podset and admission views
 *   derive.c     records derived again only when their fingerprint moves
 *   queues.c     usage (account), pending queues, holders, candidates
 *   pqseq.c      a pending queue's storage: sorted, in chunks
 *   lifecycle.c  the state machine's transitions (diagram in controller.c)
 *   cycle.c      the scheduling cycle
 *   nommemo.c    failed nominations remembered; quiet cohorts kept parked
 *   admit.c      reserve, pending, preempt, migrate
 *   grace.c      preemption grace: victims about to finish are spared
 *   pace.c       Kueue-paced cycles planned ahead
 *   afs.c        admission fair sharing: LocalQueue usage and queue order
 *   tas_place.c  topology-aware placement of a fitting workload (tas.c)
 *   objtree.c    condition and key helpers (the smallest inline below)
 */
#ifndef FLEXQ_KUEUE_INTERNAL_H
#define FLEXQ_KUEUE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/keyq.h"
#include "base/smap.h"
#include "engine/timescale.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/engine.h"
#include "flexq/heap.h"
#include "flexq/names.h"
#include "flexq/objects.h"
#include "flexq/objstore.h"
#include "flexq/quantity.h"
#include "flexq/timefmt.h"
#include "kueue/admission.h"
#include "kueue/kueue.h"
#include "kueue/kueue_policy.h"
#include "kueue/kueue_slices.h"
#include "kueue/pqseq.h"

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
 * (kq_rec_cmp): `act` may give the next head, `park` holds the
 * inadmissible ones until capacity changes. Each is a sorted sequence in
 * chunks (pqseq.c: O(log n) to find a place, taking the head costs
 * nothing); read them through kq_pq_nact / kq_pq_act / kq_pq_npark /
 * kq_pq_park_head.
 */
struct pq {
    struct kq_seq act, park; /* of struct rec *, borrowed */
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
    /* Every workload seen live (stored, not Finished), and those that
     * left until their record's next refresh (struct rec's gone):
     * "ns/name" -> struct rec (owned; the map borrows the record's own
     * key). Kept between runs and derived again only when its workload
     * (or the configuration) changes, so a run costs what changed, not
     * what is stored. */
    struct fq_smap recs;
    bool seeded;             /* recs was filled from the store once */
    struct fq_keyq dirty;    /* keys whose record must be derived again */
    struct fq_keyq lc_dirty; /* keys whose lifecycle() must run */
    struct fq_smap slices;   /* keys of elastic slices: derived every full
                                run (they depend on their old slice) */
    /* lifecycle deadlines: key -> (int64_t *) time, and a min-heap */
    struct fq_smap timers;
    struct fq_heap tq;        /* of struct timer, by t */
    int64_t lc_timer;         /* the deadline lifecycle() asks for (one call) */
    bool lc_changed, lc_spec; /* what that call changed (anything; spec) */
    /* Pending queues, one per ClusterQueue of the snapshot. */
    struct pq *pq;
    /* A cycle's scratch, one entry per ClusterQueue of the snapshot
     * (sized by rebuild and kept, so that a cycle allocates nothing): the
     * cursor (a rank) into each act, the heads taken, whether the queue is
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
    /* policy.starved_after_ms (admit.c, kq_starved_update at a cycle's
     * start): per queue of the snapshot, the workload that moves and later
     * heads yield to (NULL: none; valid during the cycle only), the
     * flavors it may use, and what it was (its key's hash and queue time,
     * 0: none) to tell a new one from the last cycle's. */
    struct rec **starved;
    uint64_t *starved_flv, *starved_fp;
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
    /* The LocalQueue names records name (spec.queueName), interned:
     * name -> struct qname; a few names for a million workloads. */
    struct fq_smap qnames;
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
    /* The topology assignment of each podset of the workload being
     * reserved (kq_tas_assign, taken by kq_reserve), owned, or NULL. */
    struct fq_value *tas_assign[FQ_ADM_MAX_PODSETS];
    /* Admission fair sharing (afs.c): on when the configuration has it;
     * the admitted usage of each LocalQueue of the snapshot per resource
     * (nlq * nres, owned), the next sampling time (INT64_MAX: none), and
     * whether an entry penalty waits to be folded in. */
    bool afs_on;
    int64_t *lq_use;
    int64_t afs_next;
    bool afs_dirty;
    /* Failed nominations remembered per root cohort version (nommemo.c),
     * owned, NULL until a cycle asks; dropped with the snapshot. */
    struct nommemo *nm;
    /* Preemption grace (grace.c): the earliest time a spared victim
     * stops being spared (its expected end, or its grace used up), when
     * a cycle must look at its preemptor again; FQ_NEVER: none. */
    int64_t grace_wake;
    /* Pending messages held back (pendmsg.c): the refresh interval
     * (policy.pending_message_refresh_ms, scaled; 0: off), "ns/name" ->
     * the held text (owned), and a timer per key at its due time. */
    int64_t msg_every;
    struct fq_smap held;
    struct fq_keyq held_q;
    /* policy.starved_after_ms, scaled (admit.c); < 0: off. */
    int64_t starved_after_ms;
};

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

/*
 * The members of a condition cond_set reads and may replace (the first
 * of each key, as fq_map_get would find it), found in one pass over its
 * few members, so that each is read, compared and replaced without
 * another lookup.
 */
struct cond_members {
    struct fq_member *status, *time, *reason, *message, *gen;
};

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
    /* Admission fair sharing (afs.c), with the configuration's
     * admissionFairSharing on: its decayed usage (consumedResources) and
     * the entry penalties not folded into it yet, per resource of the
     * snapshot (owned, NULL when off), lastUpdate, and the ordering key
     * (usage weighted by resourceWeights, divided by spec.fairSharing.
     * weight). `afs`: its ClusterQueue orders by that key. */
    bool afs;
    bool afs_penalty; /* a penalty waits to be folded in */
    int afs_cq;       /* its ClusterQueue's snapshot index, or -1 */
    int64_t weight_milli;
    double *afs_use, *afs_pen;
    int64_t afs_last;
    double afs_key;
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
    bool has_tas; /* some flavor has spec.topologyName */
    /* The Cohorts of the quota tree, named (explicit or implied by a
     * ClusterQueue's cohortName), for their status and the preemption
     * message's paths: name and fq_adm node, owned. */
    char **co_name;
    int *co_node;
    int nco;
};

struct cohort_ent {
    char *name;
    int node;
    struct fq_cohort view;
    bool has_view;
    char *parent;
};

/* What only a workload that holds quota uses, out of line (a pending
 * workload that never held quota carries a NULL pointer, not these 64
 * bytes): made the first time its record holds quota (derive_holding,
 * kq_reserve: kq_wl_hold) and kept with the record, so what it carries
 * across derivations (grace_*, the migration memo) stays as it was when
 * these fields lived in the record. */
struct wl_hold {
    int64_t reserved_at;   /* QuotaReserved's time, or 0 */
    uint64_t assigned_flv; /* bit per flavor of the current admission */
    /* A migration that did not fit stays impossible until quota is
     * released on a flavor it may move to (the sum of their rel_flv
     * moves) or a flavor cool-down ends. */
    uint64_t mig_sum;
    int64_t mig_retry;
    /* While a candidate (mig_add): the flavors a move may not go to (at
     * or after the latest one assigned, per group), as try_migrate would
     * find them each time until the record is derived again. */
    uint64_t mig_skip;
    /* Preemption grace (grace.c): when its quota was last reserved, to
     * the millisecond (conditions keep whole seconds), and when it was
     * first spared since (0: not yet). Set by kq_reserve. */
    int64_t grace_rsv, grace_since;
    bool mig_valid;
};

/* An elastic slice's forced flavors and base counts per podset, while
 * the Workload it replaces holds quota (fq_kueue_slice_prepare): 90
 * bytes only a slice needs, out of line. */
struct wl_slice {
    int8_t flv[FQ_ADM_MAX_PODSETS];
    int32_t base[FQ_ADM_MAX_PODSETS];
};

/* What the scheduler needs of a workload, derived from its stored object
 * and the snapshot (rec_derive). Pointers first, then the 8-byte fields,
 * then the narrow ones, so that nothing pads between them. */
struct wl {
    /* Borrowed from the record's own allocation (kq_rec_new: "ns/name",
     * then ns; name is the key's tail): valid while the record lives. */
    char *ns, *name;
    struct lq_info *lq;
    /* Its podsets: a shared, read-only view (one reference, or NULL
     * before its spec is derived) and that view's ps, npodsets long (a
     * podset's name is ps[p].name). */
    struct psview *pv;
    struct fq_adm_podset *ps;
    char *avoid_ann; /* owned copy of the avoid-flavors annotation */
    char *why_msg;   /* the QuotaReserved=False message now stored */
    /* quota held: nuse (flavor * nres + resource, amount) pairs, owned */
    uint16_t *use_fr;
    int64_t *use_amt;
    /* Elastic slice (kueue_slices.c): the Workload it replaces (owned, or
     * NULL) and, while that one holds quota (is_slice), its flavors and
     * counts (owned, or NULL). */
    char *replaces;
    struct wl_slice *slice;
    struct wl_hold *hold; /* owned, NULL until it first holds quota */
    uint64_t avoid;       /* avoid_ann's mask, computed at the time of use */
    int64_t created, qts;
    int cq; /* snapshot index, or -1 */
    int32_t prio;
    /* At most FQ_ADM_MAX_FLAVORS * FQ_ADM_MAX_RES (2,048) pairs. */
    uint16_t nuse;
    /* Built for pending and waiting_check workloads; at most
     * FQ_ADM_MAX_PODSETS (18: kq_wl_podsets caps it). */
    uint8_t npodsets;
    bool holds:1; /* holds quota */
    bool admitted:1;
    bool pending:1; /* may be scheduled now */
    bool evicting:1;
    bool waiting_check:1; /* reserved, a check applies, none Ready yet */
    bool nom_fit:1;       /* nominated this cycle as a Fit */
    bool nom_borrows:1;   /* ... and borrowing */
    bool is_slice:1;      /* slice holds its flavors and counts */
};

/* w's out-of-line holder part, made (zeroed) when it has none. */
static inline struct wl_hold *kq_wl_hold(struct wl *w)
{
    if (!w->hold)
        w->hold = fq_xcalloc(1, sizeof(*w->hold));
    return w->hold;
}

/*
 * A live workload's record, kept between runs ("ns/name" in struct
 * kueue's recs). Its membership of the pending queues, the holders and
 * the migration candidates, and what it adds to usage and counts, follow
 * from `w` and are changed only by rec_detach / rec_attach and the
 * scheduler's own transitions (reserve, park), so they never disagree.
 *
 * One allocation holds the record, its key and its namespace
 * (kq_rec_new); what only holders and slices use hangs off w (hold,
 * slice). Ordered widest first: no padding but at the end.
 */
struct rec {
    struct wl w; /* first member: a struct wl * of a record is the record */
    char *key;   /* "ns/name", in the record's allocation */
    char *queue_name; /* a reference to an interned name, or NULL */
    /* == park_gen: in that queue's park array, not act (a generation,
     * so that a requeue moves every parked record back without writing
     * to each one) */
    uint64_t in_park_gen;
    uint64_t done;    /* == cycle_no: handled in the running cycle */
    uint64_t parked;  /* == park_gen: inadmissible until capacity changes */
    uint64_t own_rev; /* revision of our last QuotaReserved=False message */
    int64_t msg_at;   /* engine time of that write (pendmsg.c) */
    /* From the spec, kept while spec_ok and the generation is spec_gen
     * (rec_derive decodes only the status then). */
    int64_t spec_gen;
    /* What it was derived from (fingerprint()), while fp_ok. */
    uint64_t fp;
    int qcq; /* the ClusterQueue whose pending queue holds it, -1 */
    /* Interned shape of its podsets (shape_of), -1 when it has none, or
     * SHAPE_UNKNOWN until ff_quiet first asks (a replay at the flexq
     * policy's pace never does). */
    int shape;
    uint8_t why_rsn;   /* the stored message's reason (pendmsg.c), 0: other */
    bool ok:1;         /* its workload decodes: it takes part */
    bool accounted:1;  /* w's usage and counts are in the snapshot */
    bool holder:1;     /* in hw / hs */
    bool in_mig:1;     /* in mig */
    bool in_mig_new:1; /* in mig_new */
    bool in_slices:1;  /* its key is in struct kueue's slices */
    bool spec_ok:1;
    bool active:1;
    bool fp_ok:1;
    /* Not live: the last notice of its workload said it left (deleted
     * or Finished), or none has said it is there yet. A live workload
     * always has a record (made by the notice that sees it, derived at
     * the next full run), so a workload that leaves releases what it
     * held (requeue) exactly when its record is there and not gone. A
     * gone record is dropped by its next refresh; one whose workload
     * left before its notice came stays, empty, until that notice. */
    bool gone:1;
};

/* A podSets subtree's view (kq_wl_podsets' answer), shared: struct
 * kueue's psviews holds a reference and so does every record whose wl
 * points into it (kq_wl_share_podsets), and the last one dropped
 * (kq_psview_free) frees it, so dropping the cache (VIEWS_MAX, a new
 * snapshot) leaves the records' views as they were. Nothing writes
 * through it once made: the workloads of one job shape carry one copy of
 * their podsets, not one each. */
struct psview {
    int npodsets;
    struct fq_adm_podset *ps; /* owned, npodsets */
    char **psname;            /* owned, npodsets */
    int64_t *req;             /* owned, npodsets * nres */
    int refs;
};

/* An interned LocalQueue name (kq_qname_take): qnames holds a reference
 * and so does every record whose queue_name is s; the last one dropped
 * (kq_qname_drop) frees it, so dropping the cache (VIEWS_MAX) leaves
 * the records' names as they were. */
struct qname {
    int refs;
    char s[];
};

/* What rec_derive reads of a status.admission, kept in struct kueue's
 * admviews. */
struct admview {
    int cq; /* snapshot index, or -1 */
    uint64_t assigned_flv;
    int nuse;
    uint16_t use_fr[FQ_ADM_MAX_FLAVORS];
    int64_t use_amt[FQ_ADM_MAX_FLAVORS];
};

#define SHAPE_UNKNOWN (-2)

/* The most views psviews and admviews keep (then they start again): a
 * bound for a daemon that sees ever new ones. */
#define VIEWS_MAX 4096

#define FP_SEED 1469598103934665603ull

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

/* The members of a condition rec_derive may read, for fp_cond. */
enum {
    F_STATUS = 1,
    F_REASON = 2,
    F_MESSAGE = 4,
    F_TIME = 8
};

#define FF_MAX_AHEAD (1 << 20)

/* --- shared between the files --------------------------------------- */

/* objtree.c */
struct fq_value *kq_cond_find(const struct fq_value *obj, const char *type);
void kq_cond_scan(const struct fq_value *obj,
                  const struct fq_value *found[NCOND]);
bool kq_cond_set(struct fq_value *obj, const char *type, const char *status,
                 const char *reason, const char *message, int64_t now);
void kq_wl_key(const char *ns, const char *name, char *buf, size_t n);

/* snapshot.c */
int kq_find_cq(const struct snap *s, const char *name);
struct lq_info *kq_find_lq(struct snap *s, const char *ns, const char *name);
void kq_snap_build(struct snap *s, struct fq_engine *e);
void kq_snap_release(struct snap *s);

/* workload.c */
/* Frees what w owns, but hold (kept across derivations: kq_rec_free
 * frees it); ns and name are the record's. */
void kq_wl_release(struct wl *w);
uint64_t kq_avoid_mask(const struct fq_adm *a, const char *ann, int64_t now,
                       int64_t *next);
int64_t kq_queue_order_ts(int64_t created, const struct fq_value *ev,
                          const struct fq_engine_config *cfg);
int32_t kq_priority_of(struct fq_engine *e, const struct fq_workload *v);
/* Makes w's podsets from the decoded v: a new view, w's reference its
 * only one. */
void kq_wl_podsets(struct snap *s, struct wl *w, const struct fq_workload *v);
/* Points w (whose podsets are released) at view pv, taking a reference. */
void kq_wl_share_podsets(struct wl *w, struct psview *pv);
/* Drops a reference to a struct psview (psviews' free_val); frees it
 * with the last one. */
void kq_psview_free(void *p);
/* The interned copy of LocalQueue name `name`, a reference taken
 * (returns a reference owned by the caller, for kq_qname_drop). */
char *kq_qname_take(struct kueue *k, const char *name);
/* Drops a reference kq_qname_take gave (NULL: nothing). */
void kq_qname_drop(char *s);
/* qnames' free_val: drops the map's reference to a struct qname. */
void kq_qname_free(void *p);
void kq_wl_set_use(struct wl *w, int n, const uint16_t *fr, const int64_t *amt);
void kq_adm_view(struct snap *s, const struct fq_workload *v,
                 struct admview *av);

/* lifecycle.c */
bool kq_sync_checks(const struct snap *s, const struct cq_info *c,
                    struct fq_value *obj, uint64_t flv, int64_t now);
bool kq_evict(struct fq_value *obj, const char *reason, const char *msg,
              int64_t now);
void kq_lifecycle(struct kueue *k, struct fq_engine *e, struct snap *s,
                  struct fq_value *obj, const struct fq_value *cd[NCOND],
                  int64_t now);

/* queues.c */
int kq_head_cmp(const void *x, const void *y);
int kq_rec_cmp(const struct rec *a, const struct rec *b);
size_t kq_ncell(const struct snap *s);
void kq_account(struct kueue *k, struct rec *r, int sign);
bool kq_rec_parked(const struct kueue *k, const struct rec *r);
void kq_pq_remove(struct kueue *k, struct rec *r);
void kq_pq_park(struct kueue *k, struct rec *r);
void kq_pq_park_first(struct kueue *k, size_t c, size_t m);
void kq_pq_requeue(struct kueue *k);
void kq_pq_unpark(struct kueue *k, int c);
void kq_pq_resort(struct kueue *k, int cq);
/* Queue q's live entries, in order: how many may give a head (act), the
 * i-th of them (i < kq_pq_nact), how many are parked, the first parked
 * one or NULL. Reading walks from where the last read ended, so a scan
 * in order costs O(1) a step. */
size_t kq_pq_nact(const struct pq *q);
struct rec *kq_pq_act(struct pq *q, size_t i);
size_t kq_pq_npark(const struct pq *q);
struct rec *kq_pq_park_head(const struct pq *q);
/* Frees what queue q holds (not the records) and empties it. */
void kq_pq_release(struct pq *q);
size_t kq_k_lower(struct rec *const *v, size_t n, const char *key);
void kq_holder_fill(struct kueue *k, size_t i);
size_t kq_holder_at(const struct kueue *k, const struct rec *r);
void kq_holders_add(struct kueue *k, struct rec *r);
void kq_holders_settle(struct kueue *k);
void kq_rec_detach(struct kueue *k, struct rec *r);
void kq_rec_attach(struct kueue *k, struct rec *r);
/* A new record of workload `key` ("ns/name"), not derived yet (not ok,
 * in no queue), filed in k->recs, which owns it; one allocation holds
 * it, its key and its namespace. */
struct rec *kq_rec_new(struct kueue *k, const char *key);
void kq_rec_free(void *p);

/* admit.c */
void kq_fmt_qty(const char *res, int64_t v, char *buf, size_t n);
void kq_reserve(struct kueue *k, struct fq_engine *e, struct snap *s,
                struct wl *w, const struct fq_adm_result *r, int64_t now,
                const char *how);
/* Writes QuotaReserved=False with reason and msg when the text changed,
 * or holds a count-only change back (pendmsg.c). */
void kq_set_pending(struct kueue *k, struct fq_engine *e, struct wl *w,
                    const char *reason, const char *msg, int64_t now);
/* The write itself, whatever the refresh interval says. */
void kq_pendmsg_write(struct kueue *k, struct fq_engine *e, struct wl *w,
                      const char *reason, const char *msg, int64_t now);
/* pendmsg.c: the pending-message refresh. */
void kq_pendmsg_init(struct kueue *k, int64_t every_ms);
/* policy.starved_after_ms: finds each queue's starved workload (the
 * first in Kueue's order that has waited that long and may use some
 * flavor), at a cycle's start; the flavors a move or a head behind it
 * must leave to it (0: none). */
void kq_starved_update(struct kueue *k, int64_t now);
uint64_t kq_yield_mask(const struct kueue *k, const struct rec *rc);
void kq_pendmsg_release(struct kueue *k);
uint8_t kq_pendmsg_reason_code(const char *reason);
/* Holds msg back when only its counts changed within the interval since
 * the last write; true when held (nothing written). */
bool kq_pendmsg_hold(struct kueue *k, struct wl *w, const char *reason,
                     const char *msg, int64_t now);
/* Forgets w's held text (the stored one is current). */
void kq_pendmsg_drop(struct kueue *k, struct wl *w);
/* The earliest held text's due time, FQ_NEVER when none. */
int64_t kq_pendmsg_next(const struct kueue *k);
/* Writes the held texts that are due and still apply. */
void kq_pendmsg_flush(struct kueue *k, struct fq_engine *e, int64_t now);
void kq_preempt(struct kueue *k, struct fq_engine *e, struct wl *victim,
                const struct wl *by, int reason, int64_t now);
void kq_adm_wl(const struct wl *w, struct fq_adm_wl *aw, bool cooldown);
bool kq_try_migrate(struct kueue *k, struct fq_engine *e, struct rec *rc,
                    int64_t now);
bool kq_ns_matches(struct fq_engine *e, const struct cq_info *c,
                   const char *ns);

/* grace.c */
bool kq_grace_spares(struct fq_engine *e, struct rec *v, int64_t now,
                     int64_t *until);

/* derive.c */
int kq_shape_of(struct kueue *k, const struct wl *w);
void kq_rec_refresh(struct kueue *k, struct fq_engine *e, const char *key,
                    int64_t now);
void kq_mig_pass(struct kueue *k, struct fq_engine *e, int64_t now);

/* cycle.c */
void kq_cycle(struct kueue *k, struct fq_engine *e, int64_t now);

/* nommemo.c */
bool kq_nm_find(struct kueue *k, struct rec *rc, const struct fq_adm_wl *aw,
                struct fq_adm_result *r);
void kq_nm_put(struct kueue *k, struct rec *rc, const struct fq_adm_wl *aw,
               const struct fq_adm_result *r);
void kq_nm_touch(struct kueue *k, int adm_cq);
void kq_nm_free(struct kueue *k);
void kq_nm_parked(struct kueue *k, const struct rec *rc, bool quota,
                  bool limit0);
void kq_nm_unquiet(struct kueue *k, int cq);
bool kq_nm_keep(struct kueue *k, int cq);
bool kq_nm_kept(struct kueue *k, int cq, bool *put_back);
void kq_nm_put_back_root(struct kueue *k, int cq);
void kq_nm_cycle_end(struct kueue *k);

/* afs.c */
void kq_afs_setup(struct kueue *k, struct fq_engine *e, struct snap *old,
                  int64_t now);
void kq_afs_release(struct snap *s);
void kq_afs_charge(struct kueue *k, const struct wl *w, int sign);
void kq_afs_penalty(struct kueue *k, struct fq_engine *e, const struct wl *w);
void kq_afs_run(struct kueue *k, struct fq_engine *e, int64_t now);
struct fq_value *kq_afs_status(const struct kueue *k, const struct lq_info *l);

/* tas_place.c */
bool kq_tas_assign(struct kueue *k, struct fq_engine *e, const struct wl *w,
                   const struct fq_adm_result *r, char *msg, size_t n);

/* pace.c */
void kq_ff_replay(struct kueue *k, int64_t now);
void kq_ff_note(struct kueue *k, struct fq_engine *e,
                const struct fq_change *c);
void kq_ff_plan(struct kueue *k, int64_t now);

/* --- small helpers, inline for the hot paths ------------------------- */

static inline void fmt_time(int64_t ms, char *buf, size_t n)
{
    fq_time_format(ms, buf, n);
}

static inline int64_t parse_time(const char *s, int64_t def)
{
    int64_t ms;
    if (!s || fq_time_parse(s, &ms) != 0)
        return def;
    return ms;
}

/* Member `key` of map m as a string, or def (fq_value_path_str for one
 * key, without parsing a path: these run for every change). */
static inline const char *str_at(const struct fq_value *m, const char *key,
                                 const char *def)
{
    const char *s = fq_value_as_str(fq_map_get(m, key));
    return s ? s : def;
}

/* Member `key` of map m as an integer, or def (fq_value_path_int for
 * one key). */
static inline int64_t int_at(const struct fq_value *m, const char *key,
                             int64_t def)
{
    const struct fq_value *n = fq_map_get(m, key);
    return n && n->type == FQ_V_NUM && n->u.num.is_int ? n->u.num.i : def;
}

/* Member `key` of an object's status (status.<key>), or NULL. */
static inline struct fq_value *status_get(const struct fq_value *obj,
                                          const char *key)
{
    return fq_map_get(fq_map_get(obj, "status"), key);
}

/* Is this condition (NULL: absent) True? */
static inline bool cond_is_true(const struct fq_value *c)
{
    return c && !strcmp(str_at(c, "status", ""), "True");
}

static inline bool cond_true(const struct fq_value *obj, const char *type)
{
    return cond_is_true(kq_cond_find(obj, type));
}

static inline const char *cond_reason(const struct fq_value *obj,
                                      const char *type)
{
    return str_at(kq_cond_find(obj, type), "reason", "");
}

/* Is x's key `key`? Inline, the literal's length is a constant: a
 * length compare rules out most members without reading a byte. */
static inline bool member_is(const struct fq_member *x, const char *key)
{
    size_t n = strlen(key);
    return x->klen == n && !memcmp(x->key, key, n);
}

/* Sets an existing condition False (no-op when absent); true when it
 * changed. */
static inline bool cond_clear(struct fq_value *obj, const char *type,
                              const char *reason, const char *message,
                              int64_t now)
{
    return kq_cond_find(obj, type) &&
           kq_cond_set(obj, type, "False", reason, message, now);
}

/* The namespace of an "ns/name" key into ns (cut to n - 1 bytes, as
 * snprintf would); returns the name, or NULL when the key has no '/'. */
static inline const char *key_split(const char *key, char *ns, size_t n)
{
    size_t l = strcspn(key, "/");
    size_t c = l < n ? l : n - 1;
    memcpy(ns, key, c);
    ns[c] = '\0';
    return key[l] ? key + l + 1 : NULL;
}

static inline const struct fq_value *stored(struct fq_engine *e, enum fq_kind k,
                                            const char *ns, const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), k, ns, name);
    return o ? o->obj : NULL;
}

#endif
