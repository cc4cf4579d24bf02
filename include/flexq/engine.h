/*
 * engine.h - the pure core: objects in, decisions out, time as an argument.
 *
 * struct fq_engine is a small, deterministic Kubernetes: an object store
 * (objstore.h) plus controllers that reconcile what is stored, each the
 * flexq counterpart of a real component:
 *
 *   jobs       RayJob / batch Job -> Workload; pods for admitted jobs
 *   kueue      queues, flavor assignment, preemption, admission checks,
 *              eviction and requeue (Kueue's scheduler + workload controller)
 *   provcheck  the ProvisioningRequest admission-check controller
 *   capacity   node pools, nodes, the cloud model, the cluster autoscaler,
 *              ProvisioningRequest lifecycle, cost
 *   binder     binds pending pods to nodes (kube-scheduler's filter part)
 *
 * Controllers never call each other: they talk through stored objects, as in
 * Kubernetes, and each may ask for a timer. The shells (flexqd, flexq sim,
 * tests) drive the engine:
 *
 *   fq_engine_apply / fq_engine_delete   user or API changes
 *   fq_engine_pod_update                 the runner reports a pod's state
 *   fq_engine_run(now)                   settle: dispatch changes, run
 *                                        controllers, fire due timers,
 *                                        until nothing is left to do at now
 *   fq_engine_next_wakeup                when to call fq_engine_run again
 *
 * Nothing here reads a clock, sleeps, does I/O or uses global state: the
 * same calls with the same times and seed give the same store, byte for
 * byte. That is the test oracle, the simulator and crash recovery.
 */
#ifndef FLEXQ_ENGINE_H
#define FLEXQ_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/err.h"
#include "flexq/objstore.h"
#include "flexq/value.h"

#define FQ_NEVER INT64_MAX

/*
 * Policy switches: where flexq does better than Kueue. Every switch has a
 * Kueue-exact position; fq_policy_kueue() sets them all to it and
 * fq_policy_default() gives flexq's defaults. docs/policies.md explains
 * each one.
 */
struct fq_policy {
    /* Admit as many heads per ClusterQueue per cycle as fit (Kueue: 1). */
    int max_admissions_per_cq_per_cycle; /* 0 = unlimited; Kueue: 1 */
    /* Move a workload waiting on a check of a later flavor to an earlier
     * flavor that now fits (Kueue: off, without ConcurrentAdmission). */
    bool migrate_to_preferred_flavor;
    /* Remember a flavor that failed (check Retry, stockout) for a cool-down
     * and start the next attempt after it (Kueue: off). */
    bool flavor_failure_cooldown;
    int64_t flavor_cooldown_ms;
    /* Evict and fall back to the next flavor when an admitted workload's
     * nodes cannot be provisioned (stockout) within a time (Kueue: off). */
    bool stockout_fallback;
    int64_t stockout_fallback_after_ms;
    /* Least engine time between two scheduling cycles (Kueue: 100, its
     * scheduler's pace, which gives one pop per ClusterQueue per 100 ms).
     * 0 = a cycle as soon as something changed (flexq's default: admits
     * as soon as kicked). */
    int64_t cycle_ms;
    /* Preemption grace (kueue/grace.c): a preemption candidate whose
     * user-stated run time (the flexq.dev/expected-runtime annotation or
     * activeDeadlineSeconds) ends within this time is not evicted; the
     * preemptor waits for it. 0 = off, Kueue's behaviour (the default in
     * both policies). Real time: the time scale does not apply. */
    int64_t preemption_grace_ms;
    /* A pending workload's QuotaReserved=False message whose text changes
     * only in its counts ("N more needed") is written at most once per
     * this much engine time (the newest text at the end of it, so none is
     * left stale); a new reason, flavor or resource is written at once
     * (kueue/pendmsg.c). 0 = every change at once, Kueue's behaviour;
     * flexq's default 60 s. */
    int64_t pending_message_refresh_ms;
    /* The first workload of a ClusterQueue's queue (Kueue's order) that
     * has waited at least this much engine time is not passed on the
     * flavors it may use: neither a move of migrate_to_preferred_flavor
     * nor a later head takes room there, so that a wide workload which
     * may only use Plan A is not starved (kueue/admit.c, docs/policies.md
     * (b)). < 0 = off, Kueue's BestEffortFIFO (the default in both
     * policies). */
    int64_t starved_after_ms;
};

/*
 * The virtual duration of one scheduling cycle. In Kueue a cycle takes the
 * time its API writes take; in virtual time several cycles at one instant
 * would hide the one-pop-per-ClusterQueue limit, so after a cycle the next
 * one runs no earlier than this much later.
 */
#define FQ_KUEUE_CYCLE_MS 100

struct fq_policy fq_policy_default(void);
struct fq_policy fq_policy_kueue(void);

/* Kueue's waitForPodsReady configuration. */
struct fq_pods_ready_config {
    bool enable;
    int64_t timeout_ms;          /* default 30 min */
    int64_t recovery_timeout_ms; /* default = timeout */
    bool block_admission;
    bool timestamp_eviction; /* requeuingStrategy.timestamp=Eviction */
    int backoff_limit_count; /* -1 = unlimited */
    int64_t backoff_base_ms; /* 60 s */
    int64_t backoff_max_ms;  /* 3600 s */
};

/* Kueue's fair-sharing preemption strategies (Configuration
 * fairSharing.preemptionStrategies), tried in the order given. */
enum fq_fs_strategy {
    FQ_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = 0,
    FQ_FS_LESS_THAN_INITIAL_SHARE,
};

/* Kueue's fairSharing configuration: off by default, as in Kueue; the
 * default strategies are [LessThanOrEqualToFinalShare,
 * LessThanInitialShare]. */
struct fq_fair_sharing_config {
    bool enable;
    int nstrategies; /* 1 or 2 */
    enum fq_fs_strategy strategies[2];
};

/* Reads a strategy's name; -1 when it is not one of Kueue's. */
int fq_fs_strategy_parse(const char *s);

struct fq_value;
struct fq_err;
/* Reads Kueue's Configuration `fairSharing` map ({enable,
 * preemptionStrategies}) into *c (`where` names it in errors). Kueue's
 * validation: the strategies are [LessThanOrEqualToFinalShare],
 * [LessThanInitialShare] or both in that order. 0 or FQ_EINVAL, *c
 * unchanged on error. */
int fq_fair_sharing_read(const struct fq_value *v, const char *where,
                         struct fq_fair_sharing_config *c, struct fq_err *err);

/* The most resourceWeights an admissionFairSharing map may list, and the
 * longest resource name in it. */
#define FQ_AFS_MAX_WEIGHTS 32
#define FQ_AFS_NAME_MAX    128

/*
 * Kueue's admissionFairSharing configuration (the AdmissionFairSharing
 * feature): present = on (Kueue needs its feature gate and the map; flexq
 * has no gates). Only ClusterQueues whose admissionScope.admissionMode is
 * UsageBasedAdmissionFairSharing use it. Off by default.
 */
struct fq_afs_config {
    bool enable;
    int64_t half_life_ms; /* usageHalfLifeTime; 0: usage is reset to 0 */
    int64_t sampling_ms;  /* usageSamplingInterval; default 5 min */
    int nweights;         /* resourceWeights; a resource not listed: 1 */
    char weight_names[FQ_AFS_MAX_WEIGHTS][FQ_AFS_NAME_MAX];
    double weights[FQ_AFS_MAX_WEIGHTS];
};

/* Reads Kueue's Configuration `admissionFairSharing` map
 * ({usageHalfLifeTime, usageSamplingInterval, resourceWeights}; durations
 * as Go writes them, "168h", "5m", "1h30m") into *c and turns it on
 * (`where` names it in errors). Kueue's validation: usageHalfLifeTime
 * >= 0, usageSamplingInterval > 0 (default 5m), weights >= 0. NULL v:
 * nothing changes. 0 or FQ_EINVAL, *c unchanged on error. */
int fq_afs_read(const struct fq_value *v, const char *where,
                struct fq_afs_config *c, struct fq_err *err);

/* The weight of resource `res` (1 when not listed). */
double fq_afs_weight(const struct fq_afs_config *c, const char *res);

struct fq_engine_config {
    uint64_t seed; /* PRNG seed: uids, name suffixes, the cloud */
    struct fq_policy policy;
    struct fq_pods_ready_config pods_ready;
    struct fq_fair_sharing_config fair_sharing;
    struct fq_afs_config afs;
    /* Scale for the control plane's built-in delays (CA scan interval,
     * backoffs, booking time...) in sim and demo runs: 1.0 = real. */
    double time_scale;
    /* When true the capacity controller creates Nodes itself from the cloud
     * model (provider "sim"); when false an outside provider reports them. */
    bool sim_provider;
    /* With sim_provider false: the capacity controller still decides
     * scale-ups and scale-downs but writes them as requests on the
     * NodePool's status.providerRequests for the daemon's provider to carry
     * out (src/core/capacity/provider_demand.h); false: it decides nothing. */
    bool provider_demand;
    /* When true (the simulator), pods are not created as objects: the
     * capacity and job controllers work at workload granularity. */
    bool no_pods;
    /* When false, fq_engine_event records nothing: a simulation has nobody
     * to read Events and would only make and purge them (default true). */
    bool record_events;
    /* Least engine time between two rewrites of aggregate status: the
     * queues' (ClusterQueue and LocalQueue counts and usage) and the
     * NodePools' (node counts, conditions and cost): 0 = whenever they
     * change (default). The simulator, which reads none of it, uses an
     * hour. */
    int64_t status_every_ms;
};

void fq_engine_config_init(struct fq_engine_config *c);

struct fq_engine;

struct fq_engine *fq_engine_new(const struct fq_engine_config *cfg);
void fq_engine_free(struct fq_engine *e);

struct fq_objstore *fq_engine_store(struct fq_engine *e);
const struct fq_engine_config *fq_engine_config(const struct fq_engine *e);

/*
 * Creates or updates an object from a user (kubectl apply semantics for
 * whole objects: spec and metadata replace, status is kept). Validates it
 * first (objects.h); nothing changes on error. Takes `obj`. *created says
 * whether it was new, *changed whether anything changed (both may be NULL).
 */
int fq_engine_apply(struct fq_engine *e, struct fq_value *obj, int64_t now_ms,
                    bool *created, bool *changed, struct fq_err *err);

/*
 * Creates an object that the shell built itself from input it checked
 * (the simulator's Workloads, made from trace rows): like creating with
 * fq_engine_apply, without validating it again. Takes `obj`. FQ_EEXIST
 * if it exists.
 */
int fq_engine_create(struct fq_engine *e, struct fq_value *obj, int64_t now_ms,
                     struct fq_err *err);

int fq_engine_delete(struct fq_engine *e, enum fq_kind kind, const char *ns,
                     const char *name, int64_t now_ms, struct fq_err *err);

/* The runner's report on a pod: phase "Running"/"Succeeded"/"Failed",
 * ready flag, exit code, reason (e.g. "OOMKilled", "ContainerCannotRun")
 * and message; or "Pending" with the reason the container waits
 * ("ContainerCreating" for a missing volume source,
 * "CreateContainerConfigError" for a missing env source). */
struct fq_pod_report {
    const char *phase;
    bool ready;
    int exit_code;
    const char *reason;
    const char *message;
};

int fq_engine_pod_update(struct fq_engine *e, const char *ns, const char *name,
                         const struct fq_pod_report *r, int64_t now_ms,
                         struct fq_err *err);

/* Settles the engine at time now_ms (monotone non-decreasing). */
void fq_engine_run(struct fq_engine *e, int64_t now_ms);

/* The earliest time a controller wants to run again, or FQ_NEVER. */
int64_t fq_engine_next_wakeup(const struct fq_engine *e);

/* Current engine time (the last now_ms given). */
int64_t fq_engine_now(const struct fq_engine *e);

/*
 * A shell's observer of every stored change, called synchronously like the
 * store's hook (`c` is borrowed for the call; c->obj is NULL for DELETED).
 * The simulator uses it to see workloads start and end with the store's
 * change log turned off. One observer; fn NULL removes it.
 */
void fq_engine_set_observer(struct fq_engine *e, fq_objstore_hook_fn fn,
                            void *ctx);

/* --- for controllers -------------------------------------------------- */

/*
 * Deterministic PRNG (xoshiro256**), seeded from the config, in streams
 * that do not share draws: FQ_RAND_OBJECTS for uids and generated names
 * of objects, FQ_RAND_CLOUD for what the simulated cloud decides (how long
 * a flex-start request waits, the names of the nodes it hands out). So a
 * change in how many Events or uids a run makes leaves the cloud's
 * answers, and with them a simulation's results, as they were.
 */
enum fq_rand_stream {
    FQ_RAND_OBJECTS = 0,
    FQ_RAND_CLOUD,
    FQ_RAND__N
};

uint64_t fq_engine_rand_in(struct fq_engine *e, enum fq_rand_stream stream);
/* fq_engine_rand_in(e, FQ_RAND_OBJECTS). */
uint64_t fq_engine_rand(struct fq_engine *e);
/* A random lowercase suffix from Kubernetes' alphabet, n chars, into buf. */
void fq_engine_rand_suffix_in(struct fq_engine *e, enum fq_rand_stream stream,
                              char *buf, int n);
void fq_engine_rand_suffix(struct fq_engine *e, char *buf, int n);
/* A random version-4 UUID from the engine's PRNG, for metadata.uid
 * (37 bytes with the NUL). */
void fq_engine_new_uid(struct fq_engine *e, char *buf, size_t size);

/* Records a Kubernetes Event about an object (type "Normal"/"Warning"). */
void fq_engine_event(struct fq_engine *e, const struct fq_value *involved,
                     const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/*
 * A controller: a named set of callbacks with private state. The engine
 * calls on_change for every stored change of a kind in `watch` (a bit mask
 * of 1u << enum fq_kind), then `run` once per settle round while the
 * controller said it has work (fq_engine_kick) or its wakeup time is due.
 */
struct fq_controller_ops {
    const char *name;
    uint64_t watch;
    void *(*create)(struct fq_engine *e);
    void (*destroy)(void *self);
    void (*on_change)(void *self, struct fq_engine *e,
                      const struct fq_change *c);
    void (*run)(void *self, struct fq_engine *e, int64_t now_ms);
    int64_t (*next_wakeup)(const void *self);
};

/* Asks for `run` of controller `self` in the current settle. */
void fq_engine_kick(struct fq_engine *e, const void *self);
/*
 * Within on_change: whether the change being dispatched was made by the
 * run of the controller being told (its own write coming back). A
 * controller whose run never needs to see its own writes to go on skips
 * the kick for them (a run for them would change nothing); it still
 * keeps its own books. False outside on_change and for changes made by
 * the shell or in another controller's on_change or run.
 */
bool fq_engine_change_is_own(const struct fq_engine *e);
/* The private state of a named controller (for stats and tests), or NULL. */
void *fq_engine_controller(struct fq_engine *e, const char *name);

#define FQ_KIND_BIT(k) (1ull << (k))

#endif
