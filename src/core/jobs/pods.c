/*
 * pods.c - Pod objects, the runner's reports, and the plumbing the job
 * controllers share (work queue, conditions, owner references, cascade
 * deletion). Also the small garbage collector controller ("gc").
 *
 * A Pod in flexq is what it is in Kubernetes: an object made by a
 * controller from a pod template, bound to a node by the binder
 * (binder.c), and run by whoever owns that node (flexqd's runner starts a
 * process for every bound pod that is not terminal). The pod's life:
 *
 *                 binder sets spec.nodeName
 *     Pending ---------------------------------> Pending (bound)
 *        |                                          | report Running
 *        |  (PodScheduled=False/Unschedulable       v
 *        |   while no node fits)                 Running --ready--> Running
 *        |                                          |               (Ready)
 *        |            report Failed, restartPolicy  |
 *        |            OnFailure/Always: restart++   |
 *        |            (stays Running, not ready) <--+
 *        |                                          | report Succeeded/Failed
 *        v                                          v
 *     (deleted by its controller)           Succeeded | Failed (final)
 *
 * Invariants:
 *  1. Succeeded and Failed are final: later reports are ignored.
 *  2. Only fq_pods_report moves a pod's phase; only the binder sets
 *     spec.nodeName and PodScheduled.
 *  3. lastTransitionTime of a condition moves only when its status does.
 *
 * The contract with the runner (flexqd, owned by the runtime engineer):
 *  - The runner keeps one process per Pod that is bound to one of its
 *    nodes (spec.nodeName) and is not Succeeded/Failed; a Pod whose
 *    process is gone but that is still Running (a restart was counted)
 *    is started again. The process group of a Pod that is deleted, or
 *    that the core marked Succeeded/Failed (fq_pods_kill: a deadline, a
 *    failed job), is killed; the log of a pod that still exists is kept.
 *  - It starts containers[0] by argv: command + args, env, workingDir; it
 *    adds FLEXQ_POD_NAME, FLEXQ_POD_NAMESPACE, FLEXQ_NODE_NAME and
 *    FLEXQ_POD_IP (its address, 127.0.0.1 on one machine) to the env.
 *  - It reports with fq_engine_pod_update: Running (ready when the process
 *    is up), then Succeeded (exit 0) or Failed with exit code and reason
 *    (Error, OOMKilled, ContainerCannotRun).
 *  - Rendezvous: every pod of a gang (a RayCluster's workers, an Indexed
 *    Job) gets MASTER_ADDR / JAX_COORDINATOR_ADDRESS = the coordinator host
 *    and two ports [p, p+1] that no other live gang holds, taken from
 *    29500..29999 (FQ_PODS_PORT_BASE/COUNT; PyTorch's customary 29500 is
 *    the first). The core cannot probe the machine: the daemon is to keep
 *    that range free (a config field for another range is a one-line
 *    change in fq_pods_alloc_port), and may fail a pod whose port turns
 *    out taken, with reason ContainerCannotRun. All pods of one flexqd share
 *    the machine's loopback, so the host is "127.0.0.1" and
 *    TPU_WORKER_HOSTNAMES lists that address once per host of the slice:
 *    names that resolve everywhere without a DNS trick.
 *
 * What this file does not do: decide where pods go (binder.c), create pods
 * for a job (job.c, raycluster.c), or run anything.
 */
#include "jobs/pods.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/smap.h"
#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

/* --- work queue ------------------------------------------------------- */

void fq_pods_queue_run(struct fq_keyq *q, struct fq_engine *e,
                       enum fq_kind kind, int64_t now,
                       void (*reconcile)(struct fq_engine *e, const char *ns,
                                         const char *name, int64_t now))
{
    if (fq_engine_config(e)->no_pods) {
        q->resync = false;
        return;
    }
    if (q->resync) {
        q->resync = false;
        const struct fq_object **objs = NULL;
        size_t n = fq_objstore_list(fq_engine_store(e), kind, NULL, &objs);
        for (size_t i = 0; i < n; i++)
            fq_keyq_add2(q, objs[i]->ns, objs[i]->name);
        free(objs);
    }
    const char *const *keys;
    size_t n = fq_keyq_take(q, &keys);
    for (size_t i = 0; i < n; i++) {
        char *key = fq_xstrdup(keys[i]);
        const char *ns, *name;
        fq_pods_key_split(key, &ns, &name);
        reconcile(e, ns, name, now);
        free(key);
    }
    fq_keyq_clear(q);
}

void *fq_owner_ctl_new(enum fq_kind kind, const char *owner_kind,
                       uint64_t children, fq_reconcile_fn *reconcile)
{
    struct fq_owner_ctl *c = fq_xcalloc(1, sizeof(*c));
    fq_keyq_init(&c->q);
    c->q.resync = true;
    c->kind = kind;
    c->owner_kind = owner_kind;
    c->children = children;
    c->reconcile = reconcile;
    return c;
}

void fq_owner_ctl_destroy(void *self)
{
    struct fq_owner_ctl *c = self;
    fq_keyq_release(&c->q);
    free(c);
}

bool fq_owner_ctl_note(struct fq_owner_ctl *c, struct fq_engine *e,
                       const struct fq_change *ch)
{
    if (fq_engine_config(e)->no_pods)
        return false;
    if (ch->kind == c->kind) {
        if (ch->type == FQ_CHANGE_DELETED)
            return false;
        fq_keyq_add2(&c->q, ch->ns, ch->name);
        return true;
    }
    if (!(c->children & FQ_KIND_BIT(ch->kind)) || !ch->obj)
        return false;
    const char *owner = fq_pods_owner_name(ch->obj, c->owner_kind);
    if (!owner)
        return false;
    fq_keyq_add2(&c->q, ch->ns, owner);
    return true;
}

void fq_owner_ctl_on_change(void *self, struct fq_engine *e,
                            const struct fq_change *ch)
{
    if (fq_owner_ctl_note(self, e, ch))
        fq_engine_kick(e, self);
}

void fq_owner_ctl_run(void *self, struct fq_engine *e, int64_t now)
{
    struct fq_owner_ctl *c = self;
    fq_pods_queue_run(&c->q, e, c->kind, now, c->reconcile);
}

int64_t fq_owner_ctl_next_wakeup(const void *self)
{
    const struct fq_owner_ctl *c = self;
    return c->q.resync ? 0 : fq_keyq_next(&c->q);
}

void fq_pods_key_split(char *key, const char **ns, const char **name)
{
    char *slash = strchr(key, '/');
    if (!slash) {
        *ns = "";
        *name = key;
        return;
    }
    *slash = '\0';
    *ns = key;
    *name = slash + 1;
}

/* --- indexes ---------------------------------------------------------- */

struct names {
    char **v; /* owned */
    size_t n, cap;
};

static void names_free(void *p)
{
    struct names *l = p;
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    free(l);
}

struct fq_pods_owners {
    struct fq_smap by_owner; /* "Kind/ns/name" -> struct names */
};

struct fq_pods_owners *fq_pods_owners_new(void)
{
    struct fq_pods_owners *ix = fq_xcalloc(1, sizeof(*ix));
    ix->by_owner.free_val = names_free;
    return ix;
}

void fq_pods_owners_free(struct fq_pods_owners *ix)
{
    if (!ix)
        return;
    fq_smap_free(&ix->by_owner);
    free(ix);
}

/* "a/b/c", owned: as fq_xasprintf("%s/%s/%s"), without printf, as
 * every pod change makes one (the index below). */
static char *join3(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *k = fq_xmalloc(la + lb + lc + 3);
    memcpy(k, a, la);
    k[la] = '/';
    memcpy(k + la + 1, b, lb);
    k[la + 1 + lb] = '/';
    memcpy(k + la + lb + 2, c, lc + 1);
    return k;
}

/* "Kind/ns/name" of obj's controller owner (else its first owner). */
static char *owner_key(const struct fq_value *obj, const char *ns)
{
    const struct fq_value *refs = fq_meta_owners(obj);
    const struct fq_value *pick = NULL;
    for (size_t i = 0; i < fq_value_len(refs) && !pick; i++)
        if (fq_value_path_bool(fq_seq_at(refs, i), "controller", false))
            pick = fq_seq_at(refs, i);
    if (!pick)
        pick = fq_seq_at(refs, 0);
    if (!pick)
        return NULL;
    return join3(fq_value_path_str(pick, "kind", ""), ns,
                 fq_value_path_str(pick, "name", ""));
}

void fq_pods_owners_note(struct fq_pods_owners *ix, const struct fq_change *c)
{
    if (c->kind != FQ_KIND_POD || !c->obj)
        return;
    char *key = owner_key(c->obj, c->ns);
    if (!key)
        return;
    struct names *l = fq_smap_get(&ix->by_owner, key);
    size_t at = 0;
    while (l && at < l->n && strcmp(l->v[at], c->name) != 0)
        at++;
    if (c->type == FQ_CHANGE_DELETED) {
        if (l && at < l->n) {
            free(l->v[at]);
            memmove(&l->v[at], &l->v[at + 1], (l->n - at - 1) * sizeof(*l->v));
            if (--l->n == 0)
                fq_smap_del(&ix->by_owner, key);
        }
    } else if (!l || at == l->n) {
        if (!l) {
            l = fq_xcalloc(1, sizeof(*l));
            fq_smap_put(&ix->by_owner, key, l);
        }
        FQ_GROW(l->v, l->cap, l->n + 1);
        l->v[l->n++] = fq_xstrdup(c->name);
    }
    free(key);
}

const char *const *fq_pods_owners_get(const struct fq_pods_owners *ix,
                                      const char *kind, const char *ns,
                                      const char *name, size_t *n)
{
    char *key = join3(kind, ns, name);
    struct names *l = fq_smap_get(&ix->by_owner, key);
    free(key);
    *n = l ? l->n : 0;
    return l ? (const char *const *)l->v : NULL;
}

/* --- objects ---------------------------------------------------------- */

void fq_pods_uid(struct fq_engine *e, char *buf)
{
    uint64_t a = fq_engine_rand(e), b = fq_engine_rand(e);
    /* Version 4, variant 10xx, as uuid.NewUUID() gives them. */
    a = (a & ~0xf000ull) | 0x4000ull;
    b = (b & ~(0xc000ull << 48)) | (0x8000ull << 48);
    snprintf(buf, 37,
             "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64
             "-%012" PRIx64,
             a >> 32, (a >> 16) & 0xffff, a & 0xffff, b >> 48,
             b & (uint64_t)0xffffffffffffull);
}

struct fq_value *fq_pods_owner_ref(const struct fq_value *owner)
{
    struct fq_value *ref = fq_value_map();
    fq_map_set(ref, "apiVersion",
               fq_value_str(fq_value_path_str(owner, "apiVersion", "")));
    fq_map_set(ref, "kind", fq_value_str(fq_value_path_str(owner, "kind", "")));
    fq_map_set(ref, "name", fq_value_str(fq_meta_name(owner)));
    fq_map_set(ref, "uid", fq_value_str(fq_meta_uid(owner)));
    fq_map_set(ref, "controller", fq_value_bool(true));
    fq_map_set(ref, "blockOwnerDeletion", fq_value_bool(true));
    return ref;
}

bool fq_pods_owned_by(const struct fq_value *obj, const char *kind,
                      const char *name, const char *uid)
{
    const struct fq_value *refs = fq_meta_owners(obj);
    for (size_t i = 0; i < fq_value_len(refs); i++) {
        const struct fq_value *r = fq_seq_at(refs, i);
        if (strcmp(fq_value_path_str(r, "kind", ""), kind) != 0 ||
            strcmp(fq_value_path_str(r, "name", ""), name) != 0)
            continue;
        if (uid && strcmp(fq_value_path_str(r, "uid", ""), uid) != 0)
            continue;
        return true;
    }
    return false;
}

const char *fq_pods_owner_name(const struct fq_value *obj, const char *kind)
{
    const struct fq_value *refs = fq_meta_owners(obj);
    for (size_t i = 0; i < fq_value_len(refs); i++) {
        const struct fq_value *r = fq_seq_at(refs, i);
        if (strcmp(fq_value_path_str(r, "kind", ""), kind) == 0)
            return fq_value_path_str(r, "name", NULL);
    }
    return NULL;
}

void fq_job_default_selector(struct fq_value *job, const char *uid)
{
    struct fq_value *spec = fq_map_get(job, "spec");
    if (!spec || spec->type != FQ_V_MAP ||
        fq_value_path_bool(spec, "manualSelector", false))
        return;
    const char *name = fq_meta_name(job);
    if (!fq_map_get(spec, "selector")) {
        struct fq_value *sel = fq_value_map();
        fq_map_set(fq_map_ensure_map(sel, "matchLabels"),
                   FQ_LABEL_CONTROLLER_UID, fq_value_str(uid));
        fq_map_set(spec, "selector", sel);
    }
    struct fq_value *tmpl = fq_map_get(spec, "template");
    if (!tmpl || tmpl->type != FQ_V_MAP)
        return;
    struct fq_value *labels =
        fq_map_ensure_map(fq_map_ensure_map(tmpl, "metadata"), "labels");
    fq_map_set(labels, FQ_LABEL_CONTROLLER_UID, fq_value_str(uid));
    fq_map_set(labels, FQ_LABEL_JOB_NAME, fq_value_str(name));
    fq_map_set(labels, FQ_LABEL_CONTROLLER_UID_LEGACY, fq_value_str(uid));
    fq_map_set(labels, FQ_LABEL_JOB_NAME_LEGACY, fq_value_str(name));
}

int fq_pods_create(struct fq_engine *e, struct fq_value *obj, int64_t now,
                   const struct fq_value *parent, const char *reason)
{
    char uid[40];
    char *kind = fq_xstrdup(fq_value_path_str(obj, "kind", ""));
    char *name = fq_xstrdup(fq_meta_name(obj));
    struct fq_err err;
    fq_pods_uid(e, uid);
    if (!strcmp(kind, "Job"))
        fq_job_default_selector(obj, uid);
    int rc = fq_objstore_create(fq_engine_store(e), obj, now, uid, NULL, &err);
    if (rc == 0 && parent && reason)
        fq_engine_event(e, parent, "Normal", reason, "Created %s: %s",
                        strcmp(kind, "Pod") == 0 ? "pod" : kind, name);
    else if (rc < 0 && parent)
        fq_engine_event(e, parent, "Warning", "FailedCreate",
                        "Error creating %s %s: %s", kind, name, err.msg);
    free(kind);
    free(name);
    return rc;
}

/* Kinds that a job controller's objects can own, in deletion order. */
static const enum fq_kind dependent_kinds[] = {
    FQ_KIND_RAYCLUSTER, FQ_KIND_SERVICE,  FQ_KIND_JOB,
    FQ_KIND_POD,        FQ_KIND_WORKLOAD,
};

static size_t delete_owned(struct fq_engine *e, const char *ns,
                           const char *owner_kind, const char *owner_name,
                           const char *keep_uid, int depth)
{
    struct fq_objstore *s = fq_engine_store(e);
    size_t deleted = 0;
    if (depth > 4)
        return 0;
    for (size_t k = 0; k < sizeof(dependent_kinds) / sizeof(*dependent_kinds);
         k++) {
        enum fq_kind kind = dependent_kinds[k];
        const struct fq_object **objs = NULL;
        size_t n = fq_objstore_list(s, kind, ns, &objs);
        char **names = fq_xcalloc(n + 1, sizeof(*names));
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (!fq_pods_owned_by(objs[i]->obj, owner_kind, owner_name, NULL))
                continue;
            if (keep_uid && fq_pods_owned_by(objs[i]->obj, owner_kind,
                                             owner_name, keep_uid))
                continue;
            names[m++] = fq_xstrdup(objs[i]->name);
        }
        free(objs);
        for (size_t i = 0; i < m; i++) {
            if (fq_objstore_delete(s, kind, ns, names[i], NULL) == 0)
                deleted++;
            if (kind == FQ_KIND_RAYCLUSTER || kind == FQ_KIND_JOB)
                deleted += delete_owned(e, ns, fq_kind_info(kind)->name,
                                        names[i], NULL, depth + 1);
            free(names[i]);
        }
        free(names);
    }
    return deleted;
}

size_t fq_pods_delete_owned(struct fq_engine *e, const char *ns,
                            const char *owner_kind, const char *owner_name)
{
    return delete_owned(e, ns, owner_kind, owner_name, NULL, 0);
}

bool fq_pods_put_status(struct fq_engine *e, enum fq_kind kind, const char *ns,
                        const char *name, struct fq_value *status)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(s, kind, ns, name);
    if (!o) {
        fq_value_free(status);
        return false;
    }
    const struct fq_value *old = fq_map_get(o->obj, "status");
    if (old && fq_value_equal(old, status)) {
        fq_value_free(status);
        return false;
    }
    return fq_objstore_set_status(s, kind, ns, name, status, NULL) == 0;
}

/* --- conditions ------------------------------------------------------- */

struct fq_value *fq_pods_cond(const struct fq_value *status, const char *type)
{
    const struct fq_value *conds = fq_map_get(status, "conditions");
    for (size_t i = 0; i < fq_value_len(conds); i++) {
        struct fq_value *c = fq_seq_at(conds, i);
        if (strcmp(fq_value_path_str(c, "type", ""), type) == 0)
            return c;
    }
    return NULL;
}

bool fq_pods_cond_true(const struct fq_value *status, const char *type)
{
    const struct fq_value *c = fq_pods_cond(status, type);
    return c && strcmp(fq_value_path_str(c, "status", ""), "True") == 0;
}

void fq_pods_cond_set(struct fq_value *status, const char *type,
                      const char *cstatus, const char *reason,
                      const char *message, int64_t now)
{
    struct fq_value *c = fq_pods_cond(status, type);
    if (!c) {
        struct fq_value *conds = fq_map_get(status, "conditions");
        if (!conds || conds->type != FQ_V_SEQ) {
            conds = fq_value_seq();
            fq_map_set(status, "conditions", conds);
        }
        c = fq_value_map();
        fq_map_set(c, "type", fq_value_str(type));
        fq_seq_push(conds, c);
    }
    if (strcmp(fq_value_path_str(c, "status", ""), cstatus) != 0 ||
        !fq_map_get(c, "lastTransitionTime")) {
        char ts[40];
        fq_time_format(now, ts, sizeof(ts));
        fq_map_set(c, "status", fq_value_str(cstatus));
        fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
    }
    if (reason)
        fq_map_set(c, "reason", fq_value_str(reason));
    else
        fq_map_del(c, "reason");
    if (message)
        fq_map_set(c, "message", fq_value_str(message));
    else
        fq_map_del(c, "message");
}

/* --- pods ------------------------------------------------------------- */

const char *fq_pods_phase(const struct fq_value *pod)
{
    return fq_value_path_str(pod, FQ_POD_PHASE, "Pending");
}

bool fq_pods_terminal(const struct fq_value *pod)
{
    const char *p = fq_pods_phase(pod);
    return strcmp(p, "Succeeded") == 0 || strcmp(p, "Failed") == 0;
}

bool fq_pods_ready(const struct fq_value *pod)
{
    return strcmp(fq_pods_phase(pod), "Running") == 0 &&
           fq_pods_cond_true(fq_map_get(pod, "status"), "Ready");
}

int64_t fq_pods_restarts(const struct fq_value *pod)
{
    const struct fq_value *cs = fq_value_path(pod, FQ_POD_CONTAINER_STATUSES);
    int64_t n = 0;
    for (size_t i = 0; i < fq_value_len(cs); i++)
        n += fq_value_path_int(fq_seq_at(cs, i), "restartCount", 0);
    return n;
}

struct fq_value *fq_pods_from_template(const struct fq_value *tmpl,
                                       const char *ns, const char *name,
                                       const struct fq_value *owner)
{
    struct fq_value *pod = fq_value_map();
    fq_map_set(pod, "apiVersion", fq_value_str("v1"));
    fq_map_set(pod, "kind", fq_value_str("Pod"));
    struct fq_value *md = fq_map_ensure_map(pod, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str(ns));
    const struct fq_value *tl = fq_meta_labels(tmpl);
    if (tl && tl->type == FQ_V_MAP)
        fq_map_set(md, "labels", fq_value_clone(tl));
    const struct fq_value *ta = fq_meta_annotations(tmpl);
    if (ta && ta->type == FQ_V_MAP)
        fq_map_set(md, "annotations", fq_value_clone(ta));
    if (owner) {
        struct fq_value *refs = fq_value_seq();
        fq_seq_push(refs, fq_pods_owner_ref(owner));
        fq_map_set(md, "ownerReferences", refs);
    }
    const struct fq_value *spec = fq_map_get(tmpl, "spec");
    fq_map_set(pod, "spec",
               spec && spec->type == FQ_V_MAP ? fq_value_clone(spec) :
                                                fq_value_map());
    struct fq_value *st = fq_value_map();
    fq_map_set(st, "phase", fq_value_str("Pending"));
    fq_map_set(pod, "status", st);
    return pod;
}

void fq_pods_set_label(struct fq_value *obj, const char *key, const char *val)
{
    struct fq_value *md = fq_map_ensure_map(obj, "metadata");
    fq_map_set(fq_map_ensure_map(md, "labels"), key, fq_value_str(val));
}

void fq_pods_set_annotation(struct fq_value *obj, const char *key,
                            const char *val)
{
    struct fq_value *md = fq_map_ensure_map(obj, "metadata");
    fq_map_set(fq_map_ensure_map(md, "annotations"), key, fq_value_str(val));
}

static void container_set_env(struct fq_value *c, const char *name,
                              const char *value)
{
    struct fq_value *env = fq_map_get(c, "env");
    if (!env || env->type != FQ_V_SEQ) {
        env = fq_value_seq();
        fq_map_set(c, "env", env);
    }
    for (size_t i = 0; i < fq_value_len(env); i++) {
        struct fq_value *ev = fq_seq_at(env, i);
        if (strcmp(fq_value_path_str(ev, "name", ""), name) == 0) {
            fq_map_del(ev, "valueFrom");
            fq_map_set(ev, "value", fq_value_str(value));
            return;
        }
    }
    struct fq_value *ev = fq_value_map();
    fq_map_set(ev, "name", fq_value_str(name));
    fq_map_set(ev, "value", fq_value_str(value));
    fq_seq_push(env, ev);
}

void fq_pods_set_env(struct fq_value *spec, const char *name, const char *value)
{
    struct fq_value *cs = fq_map_get(spec, "containers");
    for (size_t i = 0; i < fq_value_len(cs); i++)
        container_set_env(fq_seq_at(cs, i), name, value);
}

void fq_pods_add_rendezvous(struct fq_value *spec,
                            const struct fq_rendezvous *r)
{
    char buf[300];
    snprintf(buf, sizeof(buf), "%s:%d", r->host, r->port);
    fq_pods_set_env(spec, "JAX_COORDINATOR_ADDRESS", buf);
    fq_pods_set_env(spec, "MASTER_ADDR", r->host);
    snprintf(buf, sizeof(buf), "%d", r->port + 1);
    fq_pods_set_env(spec, "MASTER_PORT", buf);
    snprintf(buf, sizeof(buf), "%d", r->rank);
    fq_pods_set_env(spec, "RANK", buf);
    fq_pods_set_env(spec, "JAX_PROCESS_ID", buf);
    snprintf(buf, sizeof(buf), "%d", r->world);
    fq_pods_set_env(spec, "WORLD_SIZE", buf);
    fq_pods_set_env(spec, "JAX_NUM_PROCESSES", buf);
    fq_pods_set_env(spec, "LOCAL_RANK", "0");
    snprintf(buf, sizeof(buf), "%d", r->worker_id);
    fq_pods_set_env(spec, "TPU_WORKER_ID", buf);
    fq_pods_set_env(spec, "TPU_WORKER_HOSTNAMES",
                    r->hostnames ? r->hostnames : r->host);
}

static bool job_finished(const struct fq_value *job)
{
    const struct fq_value *st = fq_map_get(job, "status");
    return fq_pods_cond_true(st, "Complete") || fq_pods_cond_true(st, "Failed");
}

static bool port_taken(const struct fq_objstore *s, enum fq_kind kind, int port)
{
    const struct fq_object **objs = NULL;
    size_t n = fq_objstore_list(s, kind, NULL, &objs);
    bool taken = false;
    for (size_t i = 0; i < n && !taken; i++) {
        const char *p = fq_value_as_str(
            fq_map_get(fq_meta_annotations(objs[i]->obj), FQ_ANN_RDV_PORT));
        if (!p || atoi(p) != port)
            continue;
        if (kind == FQ_KIND_JOB && job_finished(objs[i]->obj))
            continue;
        if (kind == FQ_KIND_PYTORCHJOB &&
            (fq_pods_cond_true(fq_map_get(objs[i]->obj, "status"),
                               "Succeeded") ||
             fq_pods_cond_true(fq_map_get(objs[i]->obj, "status"), "Failed")))
            continue;
        taken = true;
    }
    free(objs);
    return taken;
}

int fq_pods_alloc_port(struct fq_engine *e)
{
    /* The range is fixed for now; the engine config has no field for it
     * (the daemon would set one after checking the range is free). */
    int base = FQ_PODS_PORT_BASE, count = FQ_PODS_PORT_COUNT;
    struct fq_objstore *s = fq_engine_store(e);
    for (int p = base; p + 1 < base + count; p += 2)
        if (!port_taken(s, FQ_KIND_RAYCLUSTER, p) &&
            !port_taken(s, FQ_KIND_JOB, p) &&
            !port_taken(s, FQ_KIND_PYTORCHJOB, p))
            return p;
    return base;
}

/* --- the runner's report ---------------------------------------------- */

static struct fq_value *container_status(struct fq_value *status,
                                         const struct fq_value *spec)
{
    struct fq_value *cs = fq_map_get(status, "containerStatuses");
    if (!cs || cs->type != FQ_V_SEQ) {
        cs = fq_value_seq();
        fq_map_set(status, "containerStatuses", cs);
    }
    if (fq_value_len(cs) == 0) {
        const struct fq_value *c0 =
            fq_seq_at(fq_map_get(spec, "containers"), 0);
        struct fq_value *c = fq_value_map();
        fq_map_set(c, "name",
                   fq_value_str(fq_value_path_str(c0, "name", "main")));
        fq_map_set(c, "image",
                   fq_value_str(fq_value_path_str(c0, "image", "")));
        fq_map_set(c, "imageID", fq_value_str(""));
        fq_map_set(c, "ready", fq_value_bool(false));
        fq_map_set(c, "restartCount", fq_value_int(0));
        fq_map_set(c, "started", fq_value_bool(false));
        fq_seq_push(cs, c);
    }
    return fq_seq_at(cs, 0);
}

static void set_ready(struct fq_value *st, bool ready, const char *reason,
                      int64_t now)
{
    const char *v = ready ? "True" : "False";
    fq_pods_cond_set(st, "Initialized", "True", NULL, NULL, now);
    fq_pods_cond_set(st, "Ready", v, ready ? NULL : reason, NULL, now);
    fq_pods_cond_set(st, "ContainersReady", v, ready ? NULL : reason, NULL,
                     now);
}

/* A failed container is never silent: a Warning event on the pod
 * ("BackOff" when it restarts, "Failed" when it ends) and one on the object
 * that controls it ("PodFailed"), so `describe` of a Job or RayCluster
 * says which pod failed and why. */
static void tell_failure(struct fq_engine *e, const char *ns, const char *name,
                         const struct fq_pod_report *r, bool restart)
{
    struct fq_objstore *s = fq_engine_store(e);
    const char *why = r->reason && *r->reason ? r->reason : "Error";
    char *msg = fq_xasprintf(
        "container exited with code %d (%s)%s%s", r->exit_code, why,
        r->message && *r->message ? ": " : "", r->message ? r->message : "");
    const struct fq_object *po = fq_objstore_get(s, FQ_KIND_POD, ns, name);
    if (po)
        fq_engine_event(e, po->obj, "Warning", restart ? "BackOff" : "Failed",
                        "%s%s", msg,
                        restart ? "; restarting (restartPolicy)" : "");
    po = fq_objstore_get(s, FQ_KIND_POD, ns, name);
    const struct fq_value *ref =
        po ? fq_seq_at(fq_meta_owners(po->obj), 0) : NULL;
    enum fq_kind ok =
        ref ? fq_kind_lookup(fq_value_path_str(ref, "kind", "")) : FQ_KIND_NONE;
    const struct fq_object *owner =
        ok != FQ_KIND_NONE ?
            fq_objstore_get(s, ok, ns, fq_value_path_str(ref, "name", "")) :
            NULL;
    if (owner)
        fq_engine_event(e, owner->obj, "Warning", "PodFailed",
                        "Pod %s failed: %s", name, msg);
    free(msg);
}

/*
 * A container the kubelet cannot start yet: state.waiting with the
 * kubelet's reason (ContainerCreating while a volume's source is missing,
 * CreateContainerConfigError while an env source is), the pod Pending,
 * and a Warning event (FailedMount, Failed) once per new message. A
 * report equal to the state the pod shows writes nothing.
 */
static int report_waiting(struct fq_engine *e, const struct fq_object *o,
                          const struct fq_pod_report *r, int64_t now)
{
    const char *reason = r->reason && *r->reason ? r->reason : "Pending";
    const char *msg = r->message ? r->message : "";
    const struct fq_value *cur =
        fq_seq_at(fq_value_path(o->obj, FQ_POD_CONTAINER_STATUSES), 0);
    if (!strcmp(fq_value_path_str(cur, FQ_CSTATE_WAITING_REASON, ""), reason) &&
        !strcmp(fq_value_path_str(cur, "state.waiting.message", ""), msg))
        return 0;
    const struct fq_value *spec = fq_map_get(o->obj, "spec");
    struct fq_value *st = fq_value_clone(fq_map_get(o->obj, "status"));
    if (!st || st->type != FQ_V_MAP) {
        fq_value_free(st);
        st = fq_value_map();
    }
    char ts[40];
    fq_time_format(now, ts, sizeof(ts));
    if (!fq_map_get(st, "startTime"))
        fq_map_set(st, "startTime", fq_value_str(ts));
    struct fq_value *c = container_status(st, spec);
    struct fq_value *w = fq_value_map();
    fq_map_set(w, "reason", fq_value_str(reason));
    if (*msg)
        fq_map_set(w, "message", fq_value_str(msg));
    struct fq_value *state = fq_value_map();
    fq_map_set(state, "waiting", w);
    fq_map_set(c, "state", state);
    fq_map_set(c, "ready", fq_value_bool(false));
    fq_map_set(c, "started", fq_value_bool(false));
    /* A restarting container waits in a Running pod, as the kubelet's. */
    if (strcmp(fq_value_path_str(st, "phase", "Pending"), "Running") != 0)
        fq_map_set(st, "phase", fq_value_str("Pending"));
    set_ready(st, false, "ContainersNotReady", now);
    bool mount = !strcmp(reason, "ContainerCreating");
    if (*msg)
        fq_engine_event(e, o->obj, "Warning", mount ? "FailedMount" : "Failed",
                        "%s", msg);
    char *ns = fq_xstrdup(o->ns), *name = fq_xstrdup(o->name);
    fq_pods_put_status(e, FQ_KIND_POD, ns, name, st);
    free(ns);
    free(name);
    return 0;
}

int fq_pods_report(struct fq_engine *e, const char *ns, const char *name,
                   const struct fq_pod_report *r, int64_t now,
                   struct fq_err *err)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_POD, ns, name);
    if (!o)
        return fq_err_set(err, FQ_ENOTFOUND, "pod %s/%s not found", ns, name);
    if (!r || !r->phase)
        return fq_err_set(err, FQ_EINVAL, "pod report without a phase");
    bool running = strcmp(r->phase, "Running") == 0;
    bool succeeded = strcmp(r->phase, "Succeeded") == 0;
    bool failed = strcmp(r->phase, "Failed") == 0;
    bool pending = strcmp(r->phase, "Pending") == 0;
    if (!running && !succeeded && !failed && !pending)
        return fq_err_set(err, FQ_EINVAL,
                          "pod phase \"%s\" is not Pending, Running, "
                          "Succeeded or Failed",
                          r->phase);
    if (fq_pods_terminal(o->obj))
        return 0; /* invariant 1 */
    if (pending)
        return report_waiting(e, o, r, now);

    const struct fq_value *spec = fq_map_get(o->obj, "spec");
    const char *policy = fq_value_path_str(spec, "restartPolicy", "Always");
    struct fq_value *st = fq_value_clone(fq_map_get(o->obj, "status"));
    if (!st || st->type != FQ_V_MAP) {
        fq_value_free(st);
        st = fq_value_map();
    }
    char ts[40];
    fq_time_format(now, ts, sizeof(ts));
    if (!fq_map_get(st, "startTime"))
        fq_map_set(st, "startTime", fq_value_str(ts));
    struct fq_value *c = container_status(st, spec);
    if (!fq_map_get(c, "containerID")) {
        /* Kubernetes' clients read these (the Python client requires
         * imageID): the runner has no registry digest nor runtime id, so
         * the image name and the pod's uid stand for them. */
        fq_map_set(c, "imageID",
                   fq_value_str(fq_value_path_str(c, "image", "")));
        fq_map_set(c, "containerID",
                   fq_value_strf("flexq://%s/%s", fq_meta_uid(o->obj),
                                 fq_value_path_str(c, "name", "")));
    }
    bool restart = (failed && strcmp(policy, "Never") != 0) ||
                   (succeeded && strcmp(policy, "Always") == 0);

    if (running) {
        fq_map_set(st, "phase", fq_value_str("Running"));
        set_ready(st, r->ready, "ContainersNotReady", now);
        fq_map_set(c, "ready", fq_value_bool(r->ready));
        fq_map_set(c, "started", fq_value_bool(true));
        const struct fq_value *run = fq_value_path(c, FQ_CSTATE_RUNNING);
        if (!run) {
            struct fq_value *state = fq_value_map();
            struct fq_value *rs = fq_value_map();
            fq_map_set(rs, "startedAt", fq_value_str(ts));
            fq_map_set(state, "running", rs);
            fq_map_set(c, "state", state);
        }
    } else {
        struct fq_value *term = fq_value_map();
        fq_map_set(term, "exitCode", fq_value_int(r->exit_code));
        const char *reason = r->reason && *r->reason ?
                                 r->reason :
                                 (succeeded ? "Completed" : "Error");
        fq_map_set(term, "reason", fq_value_str(reason));
        if (r->message && *r->message)
            fq_map_set(term, "message", fq_value_str(r->message));
        const char *started =
            fq_value_path_str(c, "state.running.startedAt", NULL);
        fq_map_set(term, "startedAt", fq_value_str(started ? started : ts));
        fq_map_set(term, "finishedAt", fq_value_str(ts));
        struct fq_value *state = fq_value_map();
        fq_map_set(c, "ready", fq_value_bool(false));
        fq_map_set(c, "started", fq_value_bool(false));
        if (restart) {
            /* The kubelet restarts the container in place: the pod stays
             * Running, the last termination is kept, the runner starts
             * the process again. */
            fq_map_set(c, "lastState", fq_value_map());
            fq_map_set(fq_map_get(c, "lastState"), "terminated", term);
            struct fq_value *w = fq_value_map();
            fq_map_set(w, "reason", fq_value_str("CrashLoopBackOff"));
            fq_map_set(state, "waiting", w);
            fq_map_set(c, "state", state);
            fq_map_set(
                c, "restartCount",
                fq_value_int(fq_value_path_int(c, "restartCount", 0) + 1));
            fq_map_set(st, "phase", fq_value_str("Running"));
            set_ready(st, false, "ContainersNotReady", now);
        } else {
            fq_map_set(state, "terminated", term);
            fq_map_set(c, "state", state);
            fq_map_set(st, "phase",
                       fq_value_str(succeeded ? "Succeeded" : "Failed"));
            set_ready(st, false, succeeded ? "PodCompleted" : "PodFailed", now);
            if (failed) {
                char *msg = fq_xasprintf(
                    "container %s exited with code %d (%s)%s%s",
                    fq_value_path_str(c, "name", "main"), r->exit_code, reason,
                    r->message && *r->message ? ": " : "",
                    r->message ? r->message : "");
                fq_map_set(st, "message", fq_value_str(msg));
                fq_map_set(st, "reason", fq_value_str(reason));
                free(msg);
            }
        }
    }
    fq_pods_put_status(e, FQ_KIND_POD, ns, name, st);
    if (failed)
        tell_failure(e, ns, name, r, restart);
    return 0;
}

void fq_pods_kill(struct fq_engine *e, const char *ns, const char *name,
                  const char *reason, const char *message, int64_t now)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_POD, ns, name);
    if (!o || fq_pods_terminal(o->obj))
        return;
    /* Never restarted: the pod is over whatever its restartPolicy. */
    struct fq_value *copy = fq_value_clone(o->obj);
    fq_map_set(fq_map_ensure_map(copy, "spec"), "restartPolicy",
               fq_value_str("Never"));
    struct fq_value *st = fq_map_ensure_map(copy, "status");
    struct fq_value *c = container_status(st, fq_map_get(copy, "spec"));
    char ts[40];
    fq_time_format(now, ts, sizeof(ts));
    struct fq_value *term = fq_value_map();
    fq_map_set(term, "exitCode", fq_value_int(137));
    fq_map_set(term, "reason", fq_value_str(reason));
    if (message)
        fq_map_set(term, "message", fq_value_str(message));
    fq_map_set(term, "finishedAt", fq_value_str(ts));
    struct fq_value *state = fq_value_map();
    fq_map_set(state, "terminated", term);
    fq_map_set(c, "state", state);
    fq_map_set(c, "ready", fq_value_bool(false));
    fq_map_set(st, "phase", fq_value_str("Failed"));
    fq_map_set(st, "reason", fq_value_str(reason));
    if (message)
        fq_map_set(st, "message", fq_value_str(message));
    set_ready(st, false, "PodFailed", now);
    fq_objstore_update(fq_engine_store(e), copy, true, NULL, NULL, NULL);
}

/* --- the garbage collector -------------------------------------------- */

/*
 * Kubernetes' garbage collector, for what the job controllers make: when a
 * RayJob, RayCluster or Job is deleted, its dependents (by controller
 * ownerReference) go too: RayClusters, Jobs, Pods, and the Workload that
 * Kueue's job integration made for it. A dependent whose owner has been
 * re-created under the same name (another uid) is deleted as well.
 */
struct gc {
    struct fq_keyq q; /* keys "Kind:ns/name" of deleted owners */
};

static void *gc_create(struct fq_engine *e)
{
    (void)e;
    struct gc *g = fq_xcalloc(1, sizeof(*g));
    fq_keyq_init(&g->q);
    g->q.resync = false;
    return g;
}

static void gc_destroy(void *self)
{
    struct gc *g = self;
    fq_keyq_release(&g->q);
    free(g);
}

static void gc_on_change(void *self, struct fq_engine *e,
                         const struct fq_change *c)
{
    struct gc *g = self;
    if (c->type != FQ_CHANGE_DELETED)
        return;
    char *k = fq_xasprintf("%s:%s", fq_kind_info(c->kind)->name, c->ns);
    fq_keyq_add2(&g->q, k, c->name);
    free(k);
    fq_engine_kick(e, self);
}

static void gc_run(void *self, struct fq_engine *e, int64_t now)
{
    struct gc *g = self;
    const char *const *keys;
    size_t n = fq_keyq_take(&g->q, &keys);
    (void)now;
    for (size_t i = 0; i < n; i++) {
        char *key = fq_xstrdup(keys[i]);
        const char *kns, *name;
        fq_pods_key_split(key, &kns, &name);
        char *colon = strchr(kns, ':');
        if (colon) {
            *colon = '\0';
            const char *kind = kns, *ns = colon + 1;
            enum fq_kind k = fq_kind_lookup(kind);
            const struct fq_object *o =
                fq_objstore_get(fq_engine_store(e), k, ns, name);
            char *uid = o ? fq_xstrdup(fq_meta_uid(o->obj)) : NULL;
            delete_owned(e, ns, kind, name, uid, 0);
            free(uid);
        }
        free(key);
    }
    fq_keyq_clear(&g->q);
}

static int64_t gc_next_wakeup(const void *self)
{
    (void)self;
    return FQ_NEVER;
}

const struct fq_controller_ops fq_gc_controller = {
    .name = "gc",
    .watch = FQ_KIND_BIT(FQ_KIND_RAYJOB) | FQ_KIND_BIT(FQ_KIND_RAYCLUSTER) |
             FQ_KIND_BIT(FQ_KIND_JOB),
    .create = gc_create,
    .destroy = gc_destroy,
    .on_change = gc_on_change,
    .run = gc_run,
    .next_wakeup = gc_next_wakeup,
};
