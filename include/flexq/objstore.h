/*
 * objstore.h - the in-memory store of cluster objects, inside the core.
 *
 * The engine keeps every object (flavors, queues, workloads, jobs, pods,
 * nodes, events, ...) here as a struct fq_value tree, the way the Kubernetes
 * API server keeps them: keyed by kind, namespace and name, with
 * metadata.uid, resourceVersion, generation and creationTimestamp managed by
 * the store. Controllers read and write objects only through this API.
 *
 * Every change gets the next revision number and is appended to a change
 * log. The shells drain the log after each engine step: flexqd persists the
 * changed objects in one SQLite transaction and feeds watch streams; the
 * simulator and tests look at it or ignore it.
 *
 * The store is pure: time and uids come from the caller (the engine passes
 * its clock and PRNG).
 */
#ifndef FLEXQ_OBJSTORE_H
#define FLEXQ_OBJSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/err.h"
#include "flexq/kinds.h"
#include "flexq/value.h"

struct fq_objstore;

/* One stored object. `obj` is the whole tree (apiVersion, kind, metadata,
 * spec, status). Borrowed from the store: valid until the object changes
 * or is deleted; do not modify it except through fq_objstore_* calls. */
struct fq_object {
    enum fq_kind kind;
    const char *ns; /* "" for cluster-scoped kinds */
    const char *name;
    uint64_t rv; /* resourceVersion, the revision of its last change */
    struct fq_value *obj;
};

enum fq_change_type {
    FQ_CHANGE_ADDED,
    FQ_CHANGE_MODIFIED,
    FQ_CHANGE_DELETED,
};

struct fq_change {
    uint64_t rev;
    enum fq_change_type type;
    enum fq_kind kind;
    char *ns;             /* owned */
    char *name;           /* owned */
    struct fq_value *obj; /* owned copy of the object after (or, for
                               DELETED, just before) the change */
    /* For controllers' on_change: made by a controller while the engine
     * settled, not by the shell before (the store leaves it false). */
    bool by_controller;
    /* Owned, or NULL: obj as compact JSON, when the daemon's store has
     * encoded it (its watch lines reuse it); fq_changes_free frees it. */
    char *json;
    size_t json_len;
    /* fq_value_bytes(obj) when the log counted it while copying obj, or
     * 0 (not counted); whoever replaces obj sets it to 0. */
    size_t obj_bytes;
    /* For controllers' on_change: "ns/name" (ns as the change has it, ""
     * for cluster-scoped kinds, so "/name") and its smap hash
     * (fq_smap_hash, base/smap.h), worked out once per notice by the
     * engine for every watcher, which would otherwise format and hash
     * the key each for itself. Borrowed, valid during the call; NULL
     * (and 0) outside the engine's dispatch. */
    const char *key;
    uint64_t key_hash;
};

struct fq_objstore *fq_objstore_new(void);
void fq_objstore_free(struct fq_objstore *s);

/*
 * Creates an object. Takes ownership of `obj` in every case. Fills
 * metadata.uid (from `uid`, or kept if already set, e.g. on reload),
 * resourceVersion, generation (1) and creationTimestamp (from `now_ms`, or
 * kept). FQ_EEXIST if it exists. On success *out (may be NULL) points to
 * the stored object.
 */
int fq_objstore_create(struct fq_objstore *s, struct fq_value *obj,
                       int64_t now_ms, const char *uid,
                       const struct fq_object **out, struct fq_err *err);

/*
 * Puts back an object read from durable storage, as it was: uid,
 * creationTimestamp, generation and resourceVersion are kept, and the
 * store's revision rises to at least that resourceVersion so revisions keep
 * increasing across restarts. Takes ownership of `obj`. FQ_EEXIST if it
 * exists.
 */
int fq_objstore_restore(struct fq_objstore *s, struct fq_value *obj,
                        const struct fq_object **out, struct fq_err *err);

/* Raises the store's revision to at least `rev` (the last one committed
 * before a restart, deletions included). */
void fq_objstore_set_revision(struct fq_objstore *s, uint64_t rev);

/*
 * Replaces an object's spec/metadata (and status when `with_status`),
 * keeping uid and creationTimestamp. If obj carries a non-empty
 * metadata.resourceVersion that differs from the stored one: FQ_ECONFLICT.
 * generation is bumped when spec changes. An update that changes nothing
 * keeps the revision and sets *changed (may be NULL) to false. Takes
 * ownership of `obj`. FQ_ENOTFOUND if absent.
 */
int fq_objstore_update(struct fq_objstore *s, struct fq_value *obj,
                       bool with_status, bool *changed,
                       const struct fq_object **out, struct fq_err *err);

/* Replaces only .status (takes `status`), in place: the object is not
 * copied; an equal status changes nothing. For controllers. */
int fq_objstore_set_status(struct fq_objstore *s, enum fq_kind kind,
                           const char *ns, const char *name,
                           struct fq_value *status, struct fq_err *err);

/*
 * Replaces one member of an object's .status (status.<key> = `val`; takes
 * `val`), in place: the rest of the tree is neither copied nor compared,
 * which is what a controller's status write costs on a big object. A
 * value equal to the stored one changes nothing (no revision, *changed
 * false). .status is created when absent. Pointers into the old member
 * are invalid afterwards; the object itself stays where it was.
 * FQ_ENOTFOUND if absent.
 */
int fq_objstore_set_status_key(struct fq_objstore *s, enum fq_kind kind,
                               const char *ns, const char *name,
                               const char *key, struct fq_value *val,
                               bool *changed, struct fq_err *err);

/*
 * A controller's copy of just the status to edit, with what status
 * writers read beside it: returns an owned tree {metadata: {generation},
 * status: <copy of .status, or {}>}, or NULL when absent. Hand it back
 * with fq_objstore_put_status, which takes it. Cheaper than a whole edit
 * when the spec is big (a Workload's pod templates).
 */
struct fq_value *fq_objstore_edit_status(struct fq_objstore *s,
                                         enum fq_kind kind, const char *ns,
                                         const char *name);
/* Writes back the status of a fq_objstore_edit_status copy (takes it), as
 * fq_objstore_set_status does: in place, nothing when equal. *changed
 * (may be NULL) says whether it changed. */
int fq_objstore_put_status(struct fq_objstore *s, enum fq_kind kind,
                           const char *ns, const char *name,
                           struct fq_value *shell, bool *changed,
                           struct fq_err *err);

/*
 * For a controller that changes a few members of an object and knows
 * whether it did: returns the stored tree itself (borrowed) to change in
 * place (status, annotations, spec; never what the store owns: name,
 * namespace, uid, resourceVersion, generation, creationTimestamp), or
 * NULL when absent. When it changed something it calls fq_objstore_edited,
 * which gives the object the next revision (and generation when `spec`
 * says the spec changed) and records the change (hook, log). Nothing is
 * copied or compared; a caller that changed nothing calls nothing.
 */
struct fq_value *fq_objstore_edit_in_place(struct fq_objstore *s,
                                           enum fq_kind kind, const char *ns,
                                           const char *name);
void fq_objstore_edited(struct fq_objstore *s, enum fq_kind kind,
                        const char *ns, const char *name, bool spec);

/*
 * Gives a controller a private copy to edit: returns an owned deep copy of
 * the stored tree; hand it back with fq_objstore_update(..., true, ...).
 */
struct fq_value *fq_objstore_edit(struct fq_objstore *s, enum fq_kind kind,
                                  const char *ns, const char *name);

int fq_objstore_delete(struct fq_objstore *s, enum fq_kind kind, const char *ns,
                       const char *name, struct fq_err *err);

/* Borrowed, or NULL. ns is ignored ("" is fine) for cluster-scoped kinds. */
const struct fq_object *fq_objstore_get(const struct fq_objstore *s,
                                        enum fq_kind kind, const char *ns,
                                        const char *name);

/* The object that owns obj (its first ownerReference, looked up in obj's
 * namespace, as Kubernetes' garbage collector does), or NULL. Borrowed. */
const struct fq_value *fq_objstore_owner(const struct fq_objstore *s,
                                         const struct fq_value *obj);

/*
 * Lists objects of a kind, sorted by namespace then name. `ns` NULL means
 * all namespaces. Returns the count; *out is an owned array of borrowed
 * pointers (free the array only).
 */
size_t fq_objstore_list(const struct fq_objstore *s, enum fq_kind kind,
                        const char *ns, const struct fq_object ***out);

/*
 * The positions [*lo, *hi) of a kind's objects in list order (namespace,
 * then name) that are in namespace ns (NULL: all) and come after the key
 * (after_ns, after_name) (after_name NULL: from the first), found by
 * binary search, nothing copied: a page of a big list costs its own
 * items. Read them with fq_objstore_at; valid until the store changes.
 */
void fq_objstore_span(const struct fq_objstore *s, enum fq_kind kind,
                      const char *ns, const char *after_ns,
                      const char *after_name, size_t *lo, size_t *hi);
/* The kind's object at list position i (borrowed), or NULL. */
const struct fq_object *fq_objstore_at(const struct fq_objstore *s,
                                       enum fq_kind kind, size_t i);

size_t fq_objstore_count(const struct fq_objstore *s, enum fq_kind kind);

/* The latest revision (0 when empty). */
uint64_t fq_objstore_revision(const struct fq_objstore *s);

/*
 * Takes the changes logged since the last call (oldest first). The caller
 * owns the array and must release it with fq_changes_free.
 */
size_t fq_objstore_take_changes(struct fq_objstore *s, struct fq_change **out);
void fq_changes_free(struct fq_change *c, size_t n);

/*
 * A hook called synchronously for every change (the engine uses it to wake
 * controllers). `c` and its strings are borrowed for the call only; c->obj
 * is the stored tree after the change (NULL for DELETED).
 */
typedef void (*fq_objstore_hook_fn)(void *ctx, const struct fq_change *c);
void fq_objstore_set_hook(struct fq_objstore *s, fq_objstore_hook_fn fn,
                          void *ctx);
/* Inside the hook of a DELETED change: takes the deleted object's tree
 * (owned by the caller now) instead of copying it; NULL elsewhere. The
 * change log, when on, has its copy already. */
struct fq_value *fq_objstore_take_deleted(struct fq_objstore *s);

/* When false (the default is true), changes are not logged: the simulator
 * turns the log off to keep memory flat. */
void fq_objstore_set_logging(struct fq_objstore *s, bool on);

/*
 * A settle's window on the change log: from _window to _window_end the
 * caller promises that nothing outside reads the store (the engine's
 * settle: only its controllers do), so of an object's several changes
 * there only the last can be observed. _window_end drops the earlier
 * ones from the log (an ADDED passes its type to the change that
 * replaces it; a DELETED and the change before it stay), and the log
 * copies each object's tree once. Revisions and the hook are unchanged:
 * the log then skips the dropped revisions. A no-op with logging off;
 * fq_objstore_take_changes ends a window and opens a new one.
 */
void fq_objstore_log_window(struct fq_objstore *s);
void fq_objstore_log_window_end(struct fq_objstore *s);

#endif
