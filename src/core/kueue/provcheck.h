/*
 * provcheck.h - what the files of Kueue's ProvisioningRequest admission
 * check share (provcheck.c, the controller; provcheck_request.c, the
 * request it makes for a workload): the controller's state and the
 * functions one calls in the other (named pc_*). Private to
 * src/core/kueue/; the controller's ops table is declared in
 * engine/controllers.h.
 */
#ifndef FLEXQ_PROVCHECK_H
#define FLEXQ_PROVCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/smap.h"
#include "flexq/engine.h"
#include "flexq/objects.h"
#include "flexq/value.h"

#define CONTROLLER_NAME "kueue.x-k8s.io/provisioning-request"

#define ANN_WORKLOAD "flexq.dev/workload"

#define ANN_CHECK "flexq.dev/check"

#define ANN_ATTEMPT "flexq.dev/attempt"

#define PARAM_PREFIX "provreq.kueue.x-k8s.io/"

/* One request of ours (it carries flexq.dev/workload), as the index
 * keeps it. */
struct preq {
    char *check, *name; /* owned */
    int64_t attempt;
    bool live; /* not Failed, BookingExpired or CapacityRevoked */
    bool gone; /* deleted by the current run */
};

/* The requests that name one workload, sorted by check, attempt and
 * name. */
struct wlreqs {
    char *ns, *wl; /* owned */
    struct preq *v;
    size_t n, cap;
};

struct provcheck {
    uint64_t created, deleted; /* counters for tests */
    /* The index of our requests (invariant 4): "ns/workload" -> struct
     * wlreqs (owned), and each request's "ns/name" -> the struct wlreqs
     * it is in (borrowed). `indexed` once the first run built it. */
    struct fq_smap by_wl, by_name;
    bool indexed;
    /* Workloads ("ns/name") whose requests may have lost them: those
     * deleted and those a request names while absent (invariant 5). */
    struct fq_smap orphans;
    /* The request each Node is annotated with (node -> "ns/request",
     * owned) and how many nodes carry each ("ns/request" -> count), kept
     * from the Nodes' notices like the index: free_attempt asks one
     * question per attempt instead of reading every Node. */
    struct fq_smap node_req, req_nodes;
    /* Workloads ("ns/name", owned) to reconcile at the next run: those
     * that changed and those whose requests changed, in the order they
     * were marked, repeats and all: a run sorts them and skips repeats,
     * which costs less than a set kept to refuse them (most are marked
     * once). Every workload is looked at when `all` is set (the first
     * run, a check or config changed). */
    char **marked;
    size_t nmarked, capmarked;
    /* The run's workloads (run_keys), kept for the next run's. */
    char **keys;
    size_t capkeys;
    bool all;
    /* The revisions of this controller's own changes that call for no
     * reconcile (a workload's status write, a request's deletion), in
     * order; [ownhead, nown) are those whose notices are still to come
     * (see pc_on_change). */
    uint64_t *own;
    size_t ownhead, nown, capown;
    /* The checks resolved since an AdmissionCheck or a
     * ProvisioningRequestConfig last changed (their notices empty the
     * list): every reconcile and every workload's notice asks, and the
     * answers borrow from stored objects that only those notices move. */
    struct resolved *res;
    size_t nres, capres;
};

struct prc {
    const struct fq_value *obj;
    const char *klass;
    const struct fq_value *managed;
    int64_t limit, base_s, max_s;
};

/* What resolve() found for one check. */
struct resolved {
    char *check; /* owned */
    bool ours;   /* the check exists and its controllerName is ours */
    struct prc prc;
};

/* A podset assignment that goes into a request: the assignment, its
 * podset and its admitted count. */
struct need {
    const struct fq_value *psa, *ps;
    int64_t count;
};

/*
 * One entry of a workload's status.admissionChecks under reconcile. It is
 * read from the stored list, and the list (what gets written back) is
 * copied only when the entry is about to change: most reconciles change
 * nothing, and the copy cost more than the rest of them. The stored list
 * stays put meanwhile (a run changes other objects, and this workload
 * only by the write after its reconcile).
 */
struct check_edit {
    const struct fq_value *stored; /* status.admissionChecks, borrowed */
    struct fq_value *copy;         /* owned; NULL until the first change */
    size_t i;                      /* the entry */
};

/* A live request that a listed check still uses: (check, attempt). */
struct keep {
    const char *check; /* borrowed from the workload's check list */
    int64_t attempt;
};

/* provcheck_request.c */
bool pc_resolve(struct provcheck *pc, struct fq_engine *e, const char *check,
                struct prc *out);
void pc_forget_resolved(struct provcheck *pc);
size_t pc_needs_of(const struct fq_value *wl, const struct prc *prc,
                   struct need *few, size_t nfew, struct need **out);
void pc_request_name(const char *wl, const char *check, int64_t attempt,
                     char *buf, size_t n);
const struct fq_value *pc_assigned_flavor(struct fq_engine *e,
                                          const struct fq_value *psa);
void pc_create_request(struct provcheck *pc, struct fq_engine *e,
                       const struct fq_object *wl, const char *check,
                       const struct prc *prc, const struct need *needs,
                       size_t nneeds, int64_t attempt, int64_t now);

#endif
