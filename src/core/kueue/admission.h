/*
 * admission.h - Kueue's admission algorithm over compact structs.
 *
 * The kueue controller (controller.c) turns stored objects into the plain structs
 * below and asks this module three questions:
 *
 *   fq_adm_assign   which flavor would each podset of a workload get, and is
 *                   that a Fit, a Preempt, or a NoFit (with Kueue's reason)?
 *   fq_adm_targets  which workloads holding quota must go so that it fits?
 *   fq_adm_charge   add or remove a workload's usage in the quota tree.
 *
 * Nothing here knows about objects, strings of YAML or time: a quota tree is
 * an array of nodes (ClusterQueues and Cohorts), each with one cell per
 * (flavor, resource); flavors and resources are small integers. The bench
 * (bench/admission.c) drives this module directly.
 *
 * Ownership: struct fq_adm owns its nodes, cells, queues and names; a
 * workload struct is owned by the caller and borrowed for each call.
 */
#ifndef FLEXQ_ADMISSION_H
#define FLEXQ_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FQ_ADM_UNLIMITED   INT64_MAX /* a borrowing/lending limit not set */
#define FQ_ADM_MAX_FLAVORS 64        /* flavors in one fq_adm (bit masks) */
#define FQ_ADM_MAX_RES     32        /* resources in one fq_adm */
#define FQ_ADM_MAX_PODSETS 18        /* podsets of one workload (Kueue: 18) */
#define FQ_ADM_MSG_MAX     1024

/* Ordered worst to best, as Kueue's flavor assigner ranks them. */
enum fq_adm_mode {
    FQ_ADM_NOFIT = 0,
    FQ_ADM_NO_CANDIDATES = 1, /* preemption would be needed, none found */
    FQ_ADM_PREEMPT = 2,
    FQ_ADM_FIT = 3,
};

/* Why a workload did not fit, as the reason of QuotaReserved=False. */
enum fq_adm_why {
    FQ_ADM_WHY_NONE = 0,
    FQ_ADM_WHY_NO_MATCHING_FLAVOR, /* "NoMatchingFlavor" */
    FQ_ADM_WHY_WAITING_FOR_QUOTA,  /* "WaitingForQuota" */
    FQ_ADM_WHY_EXCEEDS_MAX_QUOTA,  /* "ExceedsMaxQuota" */
};

/* Preemption policies (ClusterQueue spec.preemption). */
enum fq_adm_policy {
    FQ_ADM_NEVER = 0,
    FQ_ADM_LOWER_PRIORITY,
    FQ_ADM_LOWER_OR_NEWER_EQUAL_PRIORITY, /* withinClusterQueue only */
    FQ_ADM_ANY,                           /* reclaimWithinCohort only */
};

enum fq_adm_strategy {
    FQ_ADM_BEST_EFFORT_FIFO = 0,
    FQ_ADM_STRICT_FIFO,
};

/* One (flavor, resource) of one node of the quota tree. */
struct fq_adm_cell {
    int64_t nominal;
    int64_t borrow_limit; /* FQ_ADM_UNLIMITED when unset */
    int64_t lend_limit;   /* FQ_ADM_UNLIMITED when unset */
    int64_t subtree;      /* derived: nominal + what children store here */
    int64_t usage;        /* CQ: its usage; cohort: what children use of
                             what they store in it */
};

/* A ClusterQueue or a Cohort. */
struct fq_adm_node {
    int parent; /* node index, or -1 for a root */
    bool is_cq;
    bool declared_any;         /* has quota cells of its own */
    int64_t fair_weight_milli; /* fairSharing.weight x 1000 (default 1000) */
    struct fq_adm_cell *cells; /* owned, nflv * nres, index flv * nres + r */
};

/* One resource group of a ClusterQueue: resources that share a flavor. */
struct fq_adm_group {
    uint32_t res_mask; /* bit per resource index */
    int nflv;
    uint8_t flv[FQ_ADM_MAX_FLAVORS]; /* flavor indices, in preference order */
};

struct fq_adm_cq {
    int node; /* index of its node */
    int ngroups;
    struct fq_adm_group *groups; /* owned */
    enum fq_adm_strategy strategy;
    enum fq_adm_policy within_cq;
    enum fq_adm_policy reclaim_within_cohort;
    enum fq_adm_policy borrow_within_cohort;
    bool has_borrow_threshold;
    int32_t borrow_threshold;  /* maxPriorityThreshold */
    bool can_borrow_try_next;  /* whenCanBorrow: TryNextFlavor */
    bool can_preempt_try_next; /* whenCanPreempt: TryNextFlavor (default) */
    bool preemption_over_borrowing;
};

/*
 * The quota tree: resources and flavors by index, nodes, ClusterQueues.
 * Build it with fq_adm_init, fq_adm_add_* and fq_adm_finish.
 */
struct fq_adm {
    int nres, nflv;
    char *res_names[FQ_ADM_MAX_RES]; /* owned */
    /* How messages print each resource's quantities (enum fq_qscale and
     * enum fq_qformat of flexq/quantity.h), set when it is interned. */
    uint8_t res_scale[FQ_ADM_MAX_RES];
    uint8_t res_fmt[FQ_ADM_MAX_RES];
    char *flv_names[FQ_ADM_MAX_FLAVORS]; /* owned */
    struct fq_adm_node *nodes;           /* owned */
    int nnodes;
    size_t cap_nodes;
    struct fq_adm_cq *cqs; /* owned */
    int ncq;
    size_t cap_cq;
    /* Kueue's fair sharing (Configuration fairSharing): preemption in a
     * cohort by dominant resource share (fairshare.c) instead of the
     * classic reclaim rules. Off unless the configuration enables it. */
    bool fair;
    int nfs_strategies;
    uint8_t fs_strategies[2]; /* enum fq_fs_strategy (flexq/engine.h) */
};

/* A podset as the assigner sees it. */
struct fq_adm_podset {
    const char *name; /* borrowed, for messages */
    int32_t count;
    int32_t min_count;    /* == count unless partial admission is allowed */
    uint64_t selector_ok; /* bit per flavor: nodeSelector/affinity match */
    uint64_t taint_ok;    /* bit per flavor: taints tolerated */
    const int64_t *req;   /* borrowed: per pod, nres entries by index */
};

/* A workload asking for quota. Borrowed by every call. */
struct fq_adm_wl {
    int cq;
    int32_t priority;
    int64_t ts; /* queue-order timestamp */
    int npodsets;
    const struct fq_adm_podset *ps; /* borrowed, npodsets entries */
    /* Flavors in a failure cool-down (policy flavor_failure_cooldown):
     * tried only after every other flavor of their group. */
    uint64_t avoid_flv;
    /* Flavors to skip entirely (migration: flavors at or after the current
     * one), bit per flavor; 0 = none. */
    uint64_t skip_flv;
    /* Elastic slice: per podset, the flavor of the old slice (-1 = free)
     * and the count the old slice holds already; NULL when not a slice. */
    const int8_t *forced_flv;
    const int32_t *base_count;
    /* The caller reads the mode and the assignment only: the result's
     * msg stays empty (making it is most of the cost of a NoFit). */
    bool no_msg;
};

/* A workload holding quota, a possible preemption target. */
struct fq_adm_holder {
    int cq;
    int32_t priority;
    int64_t ts;          /* queue-order timestamp (for LowerOrNewerEqual) */
    int64_t reserved_at; /* most recently reserved is preempted first */
    bool evicting;       /* already being evicted: taken first, free */
    int nuse;
    const uint16_t *use_fr; /* borrowed: flv * nres + r */
    const int64_t *use_amt;
};

/* Preemption reasons, as the Preempted condition writes them. */
enum fq_adm_preempt_reason {
    FQ_ADM_IN_CLUSTER_QUEUE = 0,              /* "InClusterQueue" */
    FQ_ADM_IN_COHORT_RECLAMATION,             /* "InCohortReclamation" */
    FQ_ADM_IN_COHORT_RECLAIM_WHILE_BORROWING, /* "InCohortReclaimWhileBorrowing" */
    FQ_ADM_IN_COHORT_FAIR_SHARING,            /* "InCohortFairSharing" */
};

/* The outcome of fq_adm_assign. */
struct fq_adm_result {
    enum fq_adm_mode mode;
    enum fq_adm_why why;
    bool borrows;
    int npodsets;
    int32_t count[FQ_ADM_MAX_PODSETS]; /* admitted count (partial) */
    int8_t flv[FQ_ADM_MAX_PODSETS][FQ_ADM_MAX_RES]; /* -1 = not requested */
    /* Usage the assignment charges, per (flavor * nres + resource). */
    int nuse;
    uint16_t use_fr[FQ_ADM_MAX_FLAVORS];
    int64_t use_amt[FQ_ADM_MAX_FLAVORS];
    /* For Preempt: indices into the holders array, and reasons. */
    int ntargets;
    int *targets; /* owned; free with fq_adm_result_release */
    uint8_t *target_reason;
    char msg[FQ_ADM_MSG_MAX]; /* Kueue's message when not Fit (unless
                                 the workload asked for no_msg) */
};

void fq_adm_init(struct fq_adm *a);
void fq_adm_release(struct fq_adm *a);

/* Interns a resource / flavor name: its index, or -1 when the table is full. */
int fq_adm_resource(struct fq_adm *a, const char *name);
int fq_adm_flavor(struct fq_adm *a, const char *name);
int fq_adm_find_resource(const struct fq_adm *a, const char *name);
int fq_adm_find_flavor(const struct fq_adm *a, const char *name);

/*
 * Adds a node (cohort or CQ) and returns its index. Its cells start with
 * nominal 0 and no limits. Call after all resources and flavors are
 * interned (cells are sized then).
 */
int fq_adm_add_node(struct fq_adm *a, bool is_cq);
struct fq_adm_cell *fq_adm_cell(struct fq_adm *a, int node, int flv, int res);
/* Adds a ClusterQueue (and its node); returns the CQ index. */
int fq_adm_add_cq(struct fq_adm *a);

/* Derives subtree quotas. Call after the tree is built, before charging. */
void fq_adm_finish(struct fq_adm *a);

/* Adds (sign +1) or removes (-1) usage of a CQ, up the cohort tree. */
void fq_adm_charge(struct fq_adm *a, int cq, int nuse, const uint16_t *fr,
                   const int64_t *amt, int sign);

/* Available and potentially available quota of a CQ for (flv, res). */
int64_t fq_adm_available(const struct fq_adm *a, int cq, int fr);
int64_t fq_adm_potential(const struct fq_adm *a, int cq, int fr);
int64_t fq_adm_node_potential(const struct fq_adm *a, int node, int fr);

/*
 * Fair sharing's preemption targets (fairshare.c), used instead of the
 * classic ones when a->fair is set: the workload of `w` needs nneed
 * (flavor * nres + resource, amount) pairs in its ClusterQueue. Writes
 * up to nh indices into holders to out; returns how many (0: it cannot
 * fit). A target in w's own ClusterQueue is preempted InClusterQueue,
 * any other InCohortFairSharing. Leaves the tree as it found it.
 */
int fq_adm_fair_targets(struct fq_adm *a, const struct fq_adm_wl *w, int nneed,
                        const uint16_t *need_fr, const int64_t *need_amt,
                        const struct fq_adm_holder *h, int nh, int *out);

/*
 * Finds flavors for every podset of `w` (the whole of Kueue's flavor
 * assigner, with fungibility and partial admission), and for a Preempt the
 * targets among `holders` (which may be NULL when nholders is 0). Always
 * fills *r; release it with fq_adm_result_release. `a` is used as scratch
 * while preemptions are simulated and is left as it was.
 */
void fq_adm_assign(struct fq_adm *a, const struct fq_adm_wl *w,
                   const struct fq_adm_holder *holders, int nholders,
                   struct fq_adm_result *r);
void fq_adm_result_release(struct fq_adm_result *r);

const char *fq_adm_why_reason(enum fq_adm_why w);
const char *fq_adm_preempt_reason_str(int reason);

#endif
