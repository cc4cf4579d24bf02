/*
 * simrun.h - what the simulator's run shares between its files: the run's
 * state (struct sim, a job's state) and the functions one file calls in
 * the other (named sim_*). Private to src/sim/; the run's API is
 * simloop.h.
 *
 *   simrun.c    the virtual clock, config, workloads, accounting
 *   forecast.c  start forecasts at submission, scored at the start
 *   keep.c      whether a segment boundary keeps its workload
 */
#ifndef FLEXQ_SIMRUN_H
#define FLEXQ_SIMRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/drive.h"
#include "flexq/engine.h"
#include "flexq/objstore.h"
#include "simloop.h"

#define MAX_POOLS 64

enum phase {
    PH_NEW = 0, /* not submitted yet */
    PH_WAITING,
    PH_RUNNING,
    PH_DONE,
};

struct jstate {
    int64_t run_start;    /* engine-relative ms, while RUNNING */
    int64_t run_len;      /* length of the current run when it completes */
    int64_t remaining_ms; /* work left, over all segments */
    uint32_t gen;         /* bumped when a run ends */
    uint16_t seg;         /* current segment number, from 1 */
    uint16_t wseg;        /* the segment its workload was made for (its name's);
                    * below seg when boundaries were kept (keep.c) */
    int16_t run_pool;
    uint8_t phase;
    bool dirty;
    bool marked;  /* we set Finished on the current workload */
    bool revoked; /* a run was cut short on a Plan B pool */
    bool split;   /* runs in segments of seg_ms */
};

/* A node of an on-demand pool as keep.c last read it from its Node:
 * readiness, room, and which jobs are placed on it. */
struct sim_kplace {
    uint32_t job;
    int64_t count;
};

struct sim_knode {
    const char *name; /* borrowed from its slot of the node map */
    int pool;
    bool stale; /* the Node changed since it was read */
    bool ready;
    int64_t alloc, pods_alloc; /* the accelerator and pods allocatable */
    int64_t used, pods_used;   /* what placements take of them */
    struct sim_kplace *pl;     /* owned */
    size_t npl, plcap;
};

/* A pool's node records, sorted by name when `sorted`. */
struct sim_kpool {
    struct sim_knode **v; /* owned array of borrowed records */
    size_t n, cap;
    bool sorted;
};

/* Node name -> (pool, chips), open addressing with tombstones. */
struct nslot {
    char *name; /* owned; NULL empty; TOMB deleted */
    int pool;
    int64_t chips;
    struct sim_knode *k; /* owned, or NULL (a queued pool's node) */
};

struct nodemap {
    struct nslot *slots;
    size_t cap, used; /* used counts live + tombstones */
};

struct flavor {
    char *name; /* owned */
    char *pool; /* owned, or NULL: its gke-nodepool label */
    bool plan_b;
    bool gives;              /* some ClusterQueue gives the accelerator on it */
    struct fq_value *labels; /* owned clone of spec.nodeLabels, or NULL */
};

struct del {
    uint32_t job;
    unsigned seg;
};

/* --route-b-area (route.c): the threshold in chip-ms, and Plan A's and
 * Plan B's chips per node and price per node-hour. */
struct sim_route {
    bool on;
    double min_chip_ms;
    int64_t a_cpn, b_cpn;
    double a_price, b_price;
};

struct sim {
    const struct fq_sim_options *o;
    struct fq_sim_result *r;
    struct fq_engine *e;
    struct fq_objstore *store;
    struct fq_cloud *cloud;
    char res[128];
    char ns[128];
    char defq[128];
    struct jstate *js;
    size_t njobs;
    struct fq_drive_heap heap;
    uint32_t *dirty;
    size_t nd, dcap;
    struct nodemap nodes;
    int64_t pool_nodes[MAX_POOLS], pool_chips[MAX_POOLS], pool_used[MAX_POOLS];
    struct flavor *flv;
    size_t nflv;
    bool has_plan_b;
    struct fq_value *plan_a_selector; /* owned, or NULL */
    struct fq_value *plan_b_selector; /* owned, or NULL */
    int64_t seg_ms;
    enum fq_sim_long_rule rule;
    size_t submitted, done, pending, running;
    size_t submitted_now; /* segments submitted by reviews, this settle */
    bool submitted_any;   /* a workload went through validation */
    struct del *dels;     /* workloads to delete before the next settle */
    size_t ndels, dels_cap;
    uint32_t *fins; /* the runs due at this instant (the loop's) */
    size_t fins_cap;
    struct sim_kpool knodes[MAX_POOLS]; /* keep.c's, per pool */
    bool keep_on; /* boundaries may be kept (and node records are kept) */
    int64_t now;  /* virtual ms */
    /* Forecasts: every fc_every-th job (0: none), the run-time history
     * they guess from, the config as applied, and the engine's policy. */
    size_t fc_every;
    struct fq_runhist *hist;
    struct fq_value **docs;
    size_t ndocs;
    struct fq_policy policy;
    size_t first_live; /* no job before it is waiting or running */
    struct sim_route route;
    int err_code;
    struct fq_err *err;
};

/* Room for a workload name: "sim-", two decimals and a dash. */
#define WL_NAME_SIZE 48

/* The conditions a review reads, each the first of its type (as
 * fq_cond_find finds it), from one pass over the list: every change of a
 * workload is reviewed, and a pass per condition read cost more than the
 * rest of the review. */
struct wl_conds {
    const struct fq_value *finished, *evicted, *admitted, *pods_ready;
};

/* simrun.c */
int64_t sim_to_abs(int64_t rel);
void sim_wl_name(char buf[WL_NAME_SIZE], size_t job, unsigned seg);
bool sim_nslot_live(const struct nslot *n); /* holds a node (not empty) */

/* keep.c: whether job idx's run, due to end now, is a segment boundary
 * whose next workload would be admitted again at once on the same nodes
 * (the proof is keep.c's top comment), so that it can go on in the same
 * workload. `ending`: how many runs end now; `wakeup`: the engine's next
 * wakeup (virtual ms) as it was before this instant's changes. */
bool sim_seg_keepable(struct sim *s, size_t idx, size_t ending, int64_t wakeup);
/* keep.c: whether a ClusterQueue of the config docs[0..n) may preempt
 * (any of Kueue's preemption policies other than Never): then no
 * boundary is kept (keep.c, condition 7). */
bool sim_config_preempts(struct fq_value *const *docs, size_t n);
/* keep.c's node records, kept from the observer: sim_keep_node marks the
 * record of a Node added or changed stale (made the first time; none for
 * a queued pool's node), sim_keep_forget drops the record of a deleted
 * one (`k` owned, or NULL); sim_knode_free frees one. */
void sim_keep_node(struct sim *s, struct nslot *n);
void sim_keep_forget(struct sim *s, struct sim_knode *k);
void sim_knode_free(struct sim_knode *k);

/* route.c: sim_route_setup reads the config as applied (after
 * edit_cluster_queue and --size-plan-a); sim_route_area says whether a
 * job's first segment goes to Plan B only, counting it in routed_b. */
void sim_route_setup(struct sim *s, struct fq_value **docs, size_t n);
bool sim_route_area(struct sim *s, size_t idx);

/* forecast.c */
const char *sim_history_queue(const struct sim *s,
                              const struct fq_trace_job *tj);
void sim_forecast(struct sim *s, size_t idx, const struct fq_value *w);

#endif
