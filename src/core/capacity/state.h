/*
 * capacity/state.h - the capacity controller's state: the types its
 * modules share (struct fq_capacity, pools, nodes, placements, watched
 * workloads), and nothing else.
 *
 * The "capacity" controller (capacity.c) plays the cloud and the cluster
 * autoscaler: node pools and their nodes (nodepool.c), the `sim` cloud
 * (cloud.c), scale-up and scale-down and, in no_pods mode, the placement of
 * admitted workloads (autoscaler.c), the ProvisioningRequest lifecycle
 * (provreq.c) and cost (cost.c).
 *
 * The controller keeps its view of pools and nodes between runs (struct
 * fq_capacity: pools[], the node table and its indices) and brings it up
 * to date at the start of each run from what on_change reported, so that
 * a run costs what changed, not what is stored. Each part keeps the
 * indices it needs to visit only the items that changed or whose deadline
 * came (capacity.c's top comment lists them with their invariants).
 *
 * Everything that must survive a restart is in stored objects: node boot
 * deadlines and idle times in Node annotations, placements in Node status,
 * request deadlines in ProvisioningRequest status, cost in status. Only the
 * autoscaler's per-pool backoff lives in memory (as in the real cluster
 * autoscaler, which also forgets it on restart); the indices are rebuilt
 * from the store by the first run.
 *
 * This header is the leaf of the capacity modules: it declares no
 * function and includes no other capacity header. The modules, each with
 * its own header, from the bottom up (a module includes only the headers
 * of those below it):
 *
 *   state.h          the types (this file)
 *   common.c/.h      small helpers: wake, time scale, pool lookup and
 *                    matching, "ns/name" keys, backoff entries, a
 *                    condition written in place
 *   watch.c/.h       the watched workloads (admitted or PodsReady)
 *   nodes.c/.h       the node table, its indices, first fit, the heap and
 *                    node sets, the live pods bound to nodes
 *   cost.c/.h        node-seconds x price into pools, workloads, queues
 *   provider_demand  the autoscaler's decisions for an outside provider
 *   slices.c/.h      making and deleting whole slices
 *   provreq.c/.h     the ProvisioningRequest lifecycle
 *   autoscaler.c/.h  placement (no_pods), scale-up, backoff, scale-down
 *   capacity.c/.h    the controller: on_change and the run's steps
 */
#ifndef FLEXQ_CAPACITY_STATE_H
#define FLEXQ_CAPACITY_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/smap.h"
#include "flexq/cloud.h"
#include "flexq/engine.h"
#include "flexq/heap.h"
#include "flexq/names.h"
#include "flexq/nodepool.h"

enum {
    FQ_R_CPU,
    FQ_R_MEM,
    FQ_R_TPU,
    FQ_R_GPU,
    FQ_R_PODS,
    FQ_R_N
};

struct fq_cap_node;

/* A set of borrowed node pointers (the table owns the nodes). */
struct fq_cap_nodes {
    struct fq_cap_node **v;
    size_t n, cap;
};

/* A min-heap of (time, key) entries; an entry is checked against the
 * thing it names when it reaches the top (a stale one is dropped), so
 * nothing has to be removed from the middle. */
struct fq_cap_hent {
    int64_t t;
    uint64_t stamp;
    char *key; /* owned */
};

struct fq_cap_heap {
    struct fq_heap h; /* of struct fq_cap_hent, by (t, key) */
};

struct fq_cap_pool {
    char *name;
    struct fq_value *obj; /* owned copy as decoded; `spec` borrows from it */
    int64_t generation;   /* metadata.generation of that copy */
    struct fq_nodepool_spec spec;
    bool ok;                 /* decoded without error */
    struct fq_value *labels; /* owned: the labels its nodes carry */
    /* owned: fq_nodepool_node_proto of the spec, made at the first node
     * created after a decode, or NULL */
    struct fq_value *node_proto;
    int64_t node_alloc[FQ_R_N]; /* its status.allocatable, with it */
    /* Kept by the node table: its nodes and Ready nodes (not gone). */
    int64_t nodes, ready;
    /* Nodes that were there when the run started, by name: Ready ones
     * and the others (booting). Gone ones stay until the next run. */
    struct fq_cap_nodes up, booting;
    /* First fit over `up` (fq_capacity_first_fit): a segment tree of the
     * free room of the nodes a group without a request may use, per
     * resource the largest below each tree node (slot FQ_R_N: 1 when any
     * such node is below); rebuilt when `up` changes (fit_stale), kept up
     * to date leaf by leaf when a node's room changes. */
    int64_t (*fit)[FQ_R_N + 1];
    size_t fit_size; /* leaves: a power of two >= up.n */
    size_t fit_cap;  /* leaves `fit` has room for (it only grows) */
    bool fit_stale;
    int64_t cost_as_of; /* status.cost.asOfMs, INT64_MIN when none */

    /* When the engine rewrites aggregate status at most once per
     * status_every_ms (the simulator, which reads no pool's status): the
     * pool's charges since cost_as_of are added up here (held: taken
     * from the stored status once) and written with its counts at most
     * that often. Kept when the pools are decoded again. */
    struct {
        bool held;
        double usd, node_s;
        int64_t cost_written, status_written; /* INT64_MIN: not yet */
    } throttled;

    /* The price of a node-hour of the pool in the cloud of cloud_gen
     * `price_gen` (cost.c asks at every charge), when price_known. */
    double price;
    uint64_t price_gen;
    bool price_known;

    /* What pool_status last found stored (or wrote): the resourceVersion
     * and the counts and condition it held then. shown_held: no notice
     * of the pool came since, so the stored status is still what was
     * shown, but for the cost this run may have written (cost.c writes
     * status.cost alone). */
    uint64_t shown_rv;
    bool shown_held;
    int64_t shown_nodes, shown_ready;
    bool shown_failed;
    char shown_reason[256];
    bool failed_scale_up;  /* this run: the last scale-up was refused */
    char fail_reason[256]; /* its message */
};

/* One no_pods placement on a node: `count` pods of `podset` of workload
 * `wl` ("ns/name"), each asking for `req`. */
struct fq_cap_place {
    char *wl, *podset;
    uint64_t wl_hash; /* fq_smap_hash(wl): st->wls and st->stopped use it */
    int64_t count;
    int64_t req[FQ_R_N];
};

/* Scale-down classes of a node (autoscaler.c). */
enum {
    FQ_SD_NONE = 0, /* not Ready, or not looked at yet */
    FQ_SD_BUSY,     /* something placed or bound, or booked */
    FQ_SD_WAIT,     /* unneeded, its time not up: in the idle heap */
    FQ_SD_DUE,      /* unneeded long enough: in the due set */
};

struct fq_cap_node {
    char *name, *pool, *slice;
    uint64_t rv;   /* of the stored Node this was decoded from or agrees
                      with; a stored Node with another one is decoded again */
    char *provreq; /* "ns/name" or NULL */
    bool ready;
    int64_t ready_at;       /* FQ_NEVER when ready */
    int64_t unneeded_since; /* FQ_NEVER when busy or unset */
    int64_t alloc[FQ_R_N], used[FQ_R_N];
    int busy;                /* placements (no_pods) or bound live pods */
    bool gone;               /* deleted during this run */
    struct fq_cap_place *pl; /* status.placements, decoded (no_pods) */
    size_t npl;
    /* kept by capacity.c */
    struct fq_cap_pool *p; /* its pool, NULL when there is none */
    uint64_t born;         /* 0: there when the run started; else its
                              place in this run's creations (from 1) */
    bool sd_listed;        /* in st->sd_dirty */
    bool sd_in_due;        /* in st->sd_due */
    int sd;                /* FQ_SD_* */
    uint64_t cand_run;     /* autoscaler.c: scale-down candidate in run */
    int64_t room[FQ_R_N];  /* autoscaler.c: booting room of one pass */
    uint64_t room_pass;
    uint64_t seen; /* == fq_capacity.pass: listed in the current pass */
};

/* Where one workload is placed: node and index into its pl[] (no_pods). */
struct fq_cap_ref {
    struct fq_cap_node *node;
    size_t k;
};

/* A workload with placements, or with charges not yet written (no_pods):
 * "ns/name" -> this, in fq_capacity.wls. */
struct fq_cap_wl {
    char *key; /* owned: "ns/name" */
    struct fq_cap_ref *refs;
    size_t nrefs, caprefs;
    /* cost.c */
    double usd, node_s; /* accrued, not yet written */
    int64_t since;      /* accrued up to here */
    uint64_t seq;       /* order of its charge entry; 0 = none */
    bool listed;        /* in cost.c's list of changed workloads */
    char *cq;           /* its ClusterQueue when last written */
};

/* A live pod bound to a node: where, and what it asks for. */
struct fq_cap_pod {
    char *node;
    int64_t req[FQ_R_N];
};

/* One podset of a workload's admission, decoded (autoscaler.c). */
struct fq_cap_wlpodset {
    char *name;               /* owned */
    int64_t want;             /* pods admitted */
    struct fq_cap_pool *pool; /* its flavor's pool, or NULL */
    int64_t req[FQ_R_N];      /* per pod */
    char *provreq;            /* owned: consumed request "ns/name", or NULL */
};

/* What the autoscaler reads of a watched workload (no_pods), decoded from
 * the object of resourceVersion `rv` (and spec generation spec_gen) with
 * pools and flavors of fq_capacity.decode_gen; decoded again when either
 * moved. */
struct fq_cap_wldec {
    uint64_t rv, gen;
    int64_t spec_gen;
    bool active, pods_ready, finished;
    struct fq_cap_wlpodset *ps;
    size_t nps;
};

/* A watched workload: whether it is active (admitted, not finished, not
 * evicted) and whether the autoscaler found nothing left to do for it
 * (placed, ready, PodsReady=True); any change of it clears `settled`. */
struct fq_cap_watch {
    bool active, settled;
    struct fq_cap_wldec *dec; /* owned, or NULL */
    bool listed;              /* its key is in fq_capacity.unsettled */
    uint64_t seen;            /* the last pass over that list that kept it */
    /* The revision of the autoscaler's PodsReady=True write, whose notice
     * changes nothing here: the workload stays watched and active. */
    uint64_t own_rev;
};

struct fq_cap_backoff {
    char *pool;
    int fails;
    int64_t until, last_fail;
};

/*
 * What the node table (nodes.c) tells the modules above it when what it
 * holds changes: cost must charge a workload's placements up to now
 * before they change (accrue), and the ProvisioningRequest lifecycle
 * must look again at a request whose nodes changed, at every request
 * waiting for room when pool sizes changed, or at all of them.
 *
 * Hooks rather than dirty marks kept here for the upper module to read on
 * its next step: a charge must be taken at the old share, at the moment
 * of the change, so it cannot wait; and the ProvisioningRequest marks
 * already live in provreq.c's own table (provreq_state), which a mark
 * here would have to duplicate. So nodes.c calls through these, at the
 * same moments it called cost.c and provreq.c before, and includes
 * neither. The controller (capacity.c, which includes every module) fills
 * them when it makes the state; all four are always set.
 */
struct fq_capacity;

struct fq_cap_hooks {
    void (*accrue)(struct fq_capacity *st, struct fq_cap_wl *w);
    void (*provreq_nodes_changed)(struct fq_capacity *st, const char *key);
    void (*provreq_counts_changed)(struct fq_capacity *st);
    void (*provreq_all_changed)(struct fq_capacity *st);
};

struct fq_capacity {
    struct fq_cap_hooks hooks; /* filled by capacity.c; see above */
    struct fq_cloud *cloud;
    uint64_t cloud_gen; /* moves each time `cloud` is made again */
    uint64_t model_rv;  /* of the CapacityModel the cloud came from */
    bool model_seen, model_dirty;
    bool bootstrapped; /* default-pool decision taken */
    /* The default-pool was just made by bootstrap: its first node is Ready
     * at once, as a new GKE cluster's is when `clusters create` returns
     * (cleared when that node is made). */
    bool default_pool_fresh;
    struct fq_cap_backoff *bo;
    size_t nbo, capbo;
    int64_t wake; /* earliest wanted run, FQ_NEVER when none */
    int64_t now;
    uint64_t run_id;     /* counts runs, from 1 */
    uint64_t pass;       /* counts passes that list nodes once (node.seen) */
    uint64_t decode_gen; /* moves when pools or ResourceFlavors change */
    bool no_pods;        /* the engine's config */

    /* The pool of each flavor with nodeLabels (autoscaler.c), good while
     * decode_gen is `gen`. */
    struct fq_cap_fmemo {
        struct {
            char flavor[128];
            struct fq_cap_pool *pool;
        } v[16];

        size_t n;
        uint64_t gen;
    } fmemo;
    /* Pools by name, decoded again only when one is added, deleted or
     * its spec changes (pools_dirty). */
    struct fq_cap_pool *pools;
    size_t npools;
    bool pools_dirty, pools_seen;
    /* The node table: every stored Node, decoded ("name" -> node, owned),
     * and in name order (nodes there when the run started); nodes
     * created during the run follow in `created`; deleted ones are
     * marked gone and leave at the next run. */
    struct fq_smap node_by_name;
    struct fq_cap_nodes sorted, created, gone;
    uint64_t nborn;
    /* Nodes named by on_change since the last run, to compare with the
     * store (owned names, repeats allowed). */
    char **node_dirty;
    size_t nnode_dirty, capnode_dirty;
    bool nodes_seeded;
    /* Indices: "slice" -> struct fq_cap_nodes, "ns/name" of a
     * ProvisioningRequest -> struct fq_cap_nodes (not gone, any order). */
    struct fq_smap by_slice, by_provreq;
    /* Nodes whose pool does not exist (not gone). */
    struct fq_cap_nodes orphans;
    /* Booting nodes by ready-at (key: node name, stamp: unused). */
    struct fq_cap_heap boot_heap;
    /* Scale-down (autoscaler.c): nodes to look at again, nodes unneeded
     * long enough, unneeded nodes by the end of their unneeded time. */
    struct fq_cap_nodes sd_dirty, sd_due;
    struct fq_cap_heap idle_heap;
    /* What scale-down's choice among the due nodes depends on moves
     * sd_gen: a node joins or leaves sd_due, a node comes or goes (its
     * slice and its pool's size change), the pools are decoded again.
     * sd_idle_gen is the sd_gen of the last choice that deleted nothing
     * (UINT64_MAX: none), which the next one would repeat. */
    uint64_t sd_gen, sd_idle_gen;
    /* Placements by workload ("ns/name" -> struct fq_cap_wl, no_pods). */
    struct fq_smap wls;
    void *cost_state;    /* cost.c's in-memory charges */
    void *provreq_state; /* provreq.c's request table */
    /* Workloads the autoscaler must look at: those with an admission or
     * PodsReady=True that have not finished ("ns/name" -> struct
     * fq_cap_watch); kept by on_change so a run visits neither every
     * pending workload of a deep queue nor every finished one. The keys
     * of those not settled are also in `unsettled` (owned strings; it may
     * hold keys that have settled since, dropped when listed). */
    struct fq_smap watch;
    bool watch_seeded;
    char **unsettled;
    size_t nunsettled, capunsettled;
    uint64_t unsettled_pass;
    /* What fq_capacity_unsettled returns, kept for its next call: most
     * runs list a few workloads, twice. */
    struct fq_cap_unsettled *ulist;
    size_t capulist;
    /* Workloads that stopped being active since the last run ("ns/name"
     * set): their placements go; all placements are checked when
     * unplace_all (the first run). The same keys (owned) in a list, as a
     * run walks and empties them: the set's table keeps the size of the
     * busiest run. */
    struct fq_smap stopped;
    char **stopped_keys;
    size_t nstopped_keys, capstopped_keys;
    bool unplace_all;
    /* With pods: the live pods bound to a node ("ns/name" -> struct
     * fq_cap_pod), what they take per node ("node" -> struct
     * fq_cap_podsum) and the pending ones the binder found unschedulable
     * ("ns/name" set), kept by on_change so that a run does not walk
     * every pod, finished ones included. */
    struct fq_smap pods, podsum, unsched;
    bool pods_seeded;
    /* counters, for tests and the dashboard */
    uint64_t scale_ups, scale_up_failures, scale_downs, slices_created;
};

/* What the bound live pods take on a node (with pods). */
struct fq_cap_podsum {
    int64_t used[FQ_R_N];
    int busy;
};

/* What the controller reads of a workload's status, its conditions found
 * in one pass over the list (each flag: that condition is "True"): a
 * workload changes a dozen times in its life, and each change is looked
 * at here. */
struct fq_cap_wlconds {
    bool admission; /* status.admission is set */
    bool admitted, finished, evicted, pods_ready;
};

/* A watched workload not settled, with what its caller looks up next. */
struct fq_cap_unsettled {
    const struct fq_object *obj; /* the stored workload */
    const char *key;             /* "ns/name" */
    struct fq_cap_watch *w;      /* its watch entry */
};

#endif
