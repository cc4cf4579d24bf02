/*
 * pods.h - Pod objects and the plumbing the job controllers share.
 *
 * The jobs half of the core (rayjob.c, raycluster.c, job.c, binder.c) works
 * on Pod objects as kube-controller-manager, KubeRay and the kubelet do.
 * This header gives them:
 *
 *   - the split of a dirty key (the queue itself is base/keyq.h, the
 *     one every controller uses), and the controller the integrations
 *     share (struct fq_owner_ctl);
 *   - Pod construction from a pod template (owner references, labels, the
 *     distributed rendezvous env of JAX and PyTorch);
 *   - pod status predicates and the runner's report (fq_pods_report, which
 *     fq_engine_pod_update calls);
 *   - condition helpers and compare-before-write status updates;
 *   - cascade deletion of dependents (the garbage collector's job).
 *
 * Private to src/core: the shells talk to the engine (engine.h), not here.
 */
#ifndef FLEXQ_PODS_H
#define FLEXQ_PODS_H

#include "base/keyq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/controllers.h"
#include "flexq/engine.h"
#include "flexq/jobs.h"
#include "flexq/kinds.h"
#include "flexq/names.h"
#include "flexq/value.h"

/* The rendezvous port range (fixed; see fq_pods_alloc_port). */
#define FQ_PODS_PORT_BASE  29500
#define FQ_PODS_PORT_COUNT 500

/* --- work queue ------------------------------------------------------- */

/*
 * The run of a controller of one kind kept as a dirty-key queue: with
 * q->resync, every object of `kind` is marked first; then each marked
 * "ns/name" is reconciled once, in the store's order, and the queue is
 * emptied. Nothing runs, and the resync is dropped, when the engine has
 * no pods (the simulator).
 */
void fq_pods_queue_run(struct fq_keyq *q, struct fq_engine *e,
                       enum fq_kind kind, int64_t now,
                       void (*reconcile)(struct fq_engine *e, const char *ns,
                                         const char *name, int64_t now));

/*
 * The controller the integrations share (JobSet, PyTorchJob, MPIJob,
 * LeaderWorkerSet, TrainJob): a dirty-key queue of the objects of one
 * kind, every one of them marked at the first run, each marked one
 * reconciled once a run (fq_pods_queue_run). A change of the kind marks
 * its object (a deletion does not); a change of one of the `children`
 * kinds marks the object of the kind its owner references name. The
 * functions below fill a fq_controller_ops (self is the struct);
 * fq_owner_ctl_on_change is the whole on_change of a kind that watches
 * nothing else, and a kind that does calls fq_owner_ctl_note from its own.
 */
typedef void fq_reconcile_fn(struct fq_engine *e, const char *ns,
                             const char *name, int64_t now);

struct fq_owner_ctl {
    struct fq_keyq q;
    enum fq_kind kind;
    const char *owner_kind; /* the kind as owner references name it */
    uint64_t children;      /* FQ_KIND_BIT()s */
    fq_reconcile_fn *reconcile;
};

void *fq_owner_ctl_new(enum fq_kind kind, const char *owner_kind,
                       uint64_t children, fq_reconcile_fn *reconcile);
void fq_owner_ctl_destroy(void *self);
/* Marks what ch touches as above; true if it marked something. Nothing
 * when the engine has no pods. */
bool fq_owner_ctl_note(struct fq_owner_ctl *c, struct fq_engine *e,
                       const struct fq_change *ch);
void fq_owner_ctl_on_change(void *self, struct fq_engine *e,
                            const struct fq_change *ch);
void fq_owner_ctl_run(void *self, struct fq_engine *e, int64_t now);
int64_t fq_owner_ctl_next_wakeup(const void *self);

/* Splits "ns/name" in place into its two halves. */
void fq_pods_key_split(char *key, const char **ns, const char **name);

/* --- indexes kept from the change stream ------------------------------ */

/*
 * The pods each owner controls (by controller ownerReference), kept from
 * the Pod changes a controller sees, so that a reconcile costs the pods
 * of its object and not a scan of every pod in the store.
 */
struct fq_pods_owners;
struct fq_pods_owners *fq_pods_owners_new(void);
void fq_pods_owners_free(struct fq_pods_owners *ix);
/* Feeds one change; changes of other kinds are ignored. */
void fq_pods_owners_note(struct fq_pods_owners *ix, const struct fq_change *c);
/* Names of the pods in `ns` that `kind/name` controls, in the order they
 * appeared; borrowed until the next fq_pods_owners_note. */
const char *const *fq_pods_owners_get(const struct fq_pods_owners *ix,
                                      const char *kind, const char *ns,
                                      const char *name, size_t *n);

/* --- objects ---------------------------------------------------------- */

/* A fresh RFC 4122 v4 uid from the engine's PRNG into buf (>= 37 bytes). */
void fq_pods_uid(struct fq_engine *e, char *buf);

/* An ownerReference (controller: true) pointing at `owner`; returns owned. */
struct fq_value *fq_pods_owner_ref(const struct fq_value *owner);
/* Whether obj lists an ownerReference of that kind and name (and uid, when
 * uid is not NULL). */
bool fq_pods_owned_by(const struct fq_value *obj, const char *kind,
                      const char *name, const char *uid);
/* The name of obj's controller owner of `kind`, or NULL (borrowed). */
const char *fq_pods_owner_name(const struct fq_value *obj, const char *kind);

/* Creates `obj` (taken) in the store with a fresh uid; records a Normal
 * event `reason` on `parent` (may be NULL) saying "Created <kind>: name". */
int fq_pods_create(struct fq_engine *e, struct fq_value *obj, int64_t now,
                   const struct fq_value *parent, const char *reason);

/*
 * Deletes every RayCluster, Job and Pod in `ns` that `owner_kind/owner_name`
 * controls, and (recursively) their dependents. Returns how many objects
 * were deleted.
 */
size_t fq_pods_delete_owned(struct fq_engine *e, const char *ns,
                            const char *owner_kind, const char *owner_name);

/* Replaces obj's status by `status` (taken) unless they are equal. Returns
 * true when it wrote. */
bool fq_pods_put_status(struct fq_engine *e, enum fq_kind kind, const char *ns,
                        const char *name, struct fq_value *status);

/* --- conditions (metav1.Condition lists in status.conditions) --------- */

/* The condition of `type` in status.conditions, or NULL (borrowed). */
struct fq_value *fq_pods_cond(const struct fq_value *status, const char *type);
/* Whether the condition `type` has status "True". */
bool fq_pods_cond_true(const struct fq_value *status, const char *type);
/*
 * Sets a condition; lastTransitionTime moves only when the status value
 * changes (as in Kubernetes). reason/message may be NULL.
 */
void fq_pods_cond_set(struct fq_value *status, const char *type,
                      const char *cstatus, const char *reason,
                      const char *message, int64_t now);

/* --- pods ------------------------------------------------------------- */

/* status.phase, "Pending" when absent. */
const char *fq_pods_phase(const struct fq_value *pod);
/* Succeeded or Failed. */
bool fq_pods_terminal(const struct fq_value *pod);
/* Running with condition Ready=True. */
bool fq_pods_ready(const struct fq_value *pod);
/* Sum of container restarts (status.containerStatuses[].restartCount). */
int64_t fq_pods_restarts(const struct fq_value *pod);

/*
 * A Pod object made from a pod template ({metadata, spec}): name and
 * namespace set, template labels and annotations kept, `owner` as
 * controller reference, status.phase Pending. Returns owned.
 */
struct fq_value *fq_pods_from_template(const struct fq_value *tmpl,
                                       const char *ns, const char *name,
                                       const struct fq_value *owner);

/* Sets a label / annotation on an object's metadata. */
void fq_pods_set_label(struct fq_value *obj, const char *key, const char *val);
void fq_pods_set_annotation(struct fq_value *obj, const char *key,
                            const char *val);
/* Sets (replacing) env `name` on every container of pod spec `spec`. */
void fq_pods_set_env(struct fq_value *spec, const char *name,
                     const char *value);

/* The distributed rendezvous of one pod (JAX and PyTorch variables). */
struct fq_rendezvous {
    const char *host;      /* coordinator / master address */
    int port;              /* JAX coordinator; MASTER_PORT is port + 1 */
    int rank;              /* global rank among the gang's pods */
    int world;             /* pods in the gang */
    int worker_id;         /* index inside its TPU slice */
    const char *hostnames; /* comma list of the slice's hosts */
};

/* Adds TPU_WORKER_ID, TPU_WORKER_HOSTNAMES, JAX_COORDINATOR_ADDRESS,
 * MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK (0) and
 * JAX_NUM_PROCESSES / JAX_PROCESS_ID to every container of `spec`. */
void fq_pods_add_rendezvous(struct fq_value *spec,
                            const struct fq_rendezvous *r);
/*
 * Picks the first rendezvous port pair [p, p+1] of the range
 * that no live RayCluster or Job holds (annotation FQ_ANN_RDV_PORT).
 * Returns the port, or the range's base when all are taken.
 */
int fq_pods_alloc_port(struct fq_engine *e);

/*
 * Ends a live pod from the control plane (a deadline passed, its job
 * failed): phase Failed, container terminated with exit code 137 and
 * `reason`. The runner kills the process of a pod that is terminal.
 * Does nothing to a pod that is already terminal or absent.
 */
void fq_pods_kill(struct fq_engine *e, const char *ns, const char *name,
                  const char *reason, const char *message, int64_t now);

#endif
