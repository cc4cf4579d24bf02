/*
 * jobframework_slices.c - elastic jobs, the job side (Kueue's
 * ElasticJobsViaWorkloadSlices, reference/kueue.md §2.11): a RayJob or Job
 * with kueue.x-k8s.io/elastic-job: "true" may change its worker counts
 * (RayJob workerGroupSpecs[i].replicas, Job parallelism) while it runs.
 *
 * How: the job's Workloads form a chain of slices. Slice 0 is the Workload
 * jobframework.c makes (`rayjob-<name>-<5 hex>`); slice k >= 1 is named
 * `rayjob-<name>-<5 hex of (slice 0, k)>`, so the chain is found by name
 * lookups, without listing Workloads. The newest slice is `cur`, the one
 * before it `prev`. On each reconcile the podset counts the job asks for
 * (`want`) are compared with cur's:
 *
 *   cur holds quota, some count grows   create slice k+1 = want, annotated
 *                                       workload-slice-replacement-for: cur
 *                                       (the job keeps running on cur)
 *   cur holds quota, counts only shrink spec.podSets and status.admission
 *                                       counts and resourceUsage updated in
 *                                       place: the quota is released
 *   cur holds no quota                  counts updated in place
 *   cur is a pending slice, prev runs   the job runs under prev; cur is
 *                                       deleted when want <= prev (scaled
 *                                       back), else its counts follow want
 *   cur reserved, checks pending, prev  scaled back to <= prev: cur is
 *   Finished as replaced by cur         withdrawn (deleted, so its
 *                                       ProvisioningRequest goes) and prev
 *                                       takes its quota back, shrunk to
 *                                       want: pending slices go first
 *
 *      cur (holds N) --scale up--> cur + slice (pending, N+d)
 *           |                          | kueue_slices.c: reserved for d
 *           | scale down (in place)    v
 *           '-- cur (holds N-d)    cur Finished (WorkloadSliceReplaced),
 *                                  slice holds N+d and is the new cur
 *
 * Invariants
 *   1. At most one pending slice per job: a new one is made only from a
 *      cur that holds quota.
 *   2. A job is never suspended because of a scale up: it runs under prev
 *      until the slice reserves quota, and under the slice from then on
 *      (*keep_running while its checks are pending).
 *   3. Elastic podsets have no minCount: slices are not combinable with
 *      partial admission.
 *
 * Pods: rayjob.c copies the RayJob's replicas to its RayCluster at once,
 * and raycluster.c makes (or deletes) whole replicas. The worker pods of a
 * queued elastic RayJob are created with the scheduling gate
 * kueue.x-k8s.io/elastic-job (fq_jobslices_gate_pod, called there); the
 * binder leaves gated pods alone. fq_jobslices_ungate, run on each
 * reconcile of the job (also when a gated pod appears), lifts the gate
 * from the replicas the admitted slice covers, so a scale up's pods start
 * when its slice is admitted, and never before.
 *
 * What it does not do: admission (kueue_slices.c), validation of
 * minReplicas..maxReplicas (the CLI refuses, KubeRay clamps), pod gating
 * for batch Jobs (their new pods start at once; the quota follows).
 */
#include "jobs/jobframework_slices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/objects.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "jobs/pods.h"

#define MAX_SLICES 4096 /* name lookups per reconcile, at most */

/* Holds quota now: reserved, not being evicted, not finished. */
static bool holds(const struct fq_value *w)
{
    return w && fq_value_path(w, FQ_WL_STATUS_ADMISSION) &&
           fq_cond_true(w, "QuotaReserved") && !fq_cond_true(w, "Evicted") &&
           !fq_cond_true(w, "Finished");
}

bool fq_jobslices_elastic(const struct fq_value *job)
{
    const struct fq_value *ann = fq_meta_annotations(job);
    const char *v = fq_value_as_str(fq_map_get(ann, FQ_SLICE_ANN_ELASTIC));
    return v && !strcmp(v, "true");
}

/* Slice k of the chain that starts at `base` (k >= 1). */
static void slice_name(const char *base, int k, char *buf, size_t n)
{
    uint32_t h = 2166136261u;
    for (const char *p = base; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    for (int i = 0; i < 4; i++)
        h = (h ^ (unsigned char)((unsigned)k >> (8 * i))) * 16777619u;
    size_t len = strlen(base);
    /* Kueue's shape: the job's prefix, then 5 hex. */
    if (len > 6 && base[len - 6] == '-')
        len -= 6;
    snprintf(buf, n, "%.*s-%05x", (int)(len > 240 ? 240 : len), base,
             (unsigned)(h & 0xfffff));
}

static const struct fq_value *podset_named(const struct fq_value *pss,
                                           const char *name)
{
    for (size_t i = 0; i < fq_value_len(pss); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(pss, i), "name", ""), name))
            return fq_seq_at(pss, i);
    return NULL;
}

/* Compares want with a Workload's podsets: *up when some count grows,
 * *down when some shrinks. */
static void compare(const struct fq_value *want, const struct fq_value *w,
                    bool *up, bool *down)
{
    const struct fq_value *have = fq_value_path(w, FQ_WL_PODSETS);
    *up = *down = false;
    for (size_t i = 0; i < fq_value_len(want); i++) {
        const struct fq_value *ps = fq_seq_at(want, i);
        const struct fq_value *h =
            podset_named(have, fq_value_path_str(ps, "name", ""));
        int64_t a = fq_value_path_int(ps, "count", 1);
        int64_t b = h ? fq_value_path_int(h, "count", 1) : 0;
        if (a > b)
            *up = true;
        else if (a < b)
            *down = true;
    }
}

static struct fq_value *qty_scaled(const char *res, const char *text,
                                   int64_t from, int64_t to)
{
    enum fq_qscale sc = fq_quantity_scale_for(res);
    int64_t v = 0;
    if (from <= 0 || fq_quantity_parse(text, sc, &v, NULL, NULL) != 0)
        return fq_value_str(text);
    enum fq_qformat f = FQ_QF_DECIMAL_SI;
    if (!strcmp(res, "memory") || strstr(res, "storage"))
        f = FQ_QF_BINARY_SI;
    char buf[48];
    fq_quantity_format(v / from * to, sc, f, buf, sizeof(buf));
    return fq_value_str(buf);
}

/* Sets the counts of Workload ns/name to want's, and its admission's when
 * it holds quota (shrinking only: what it holds is then still covered). */
static void set_counts(struct fq_engine *e, const char *ns, const char *name,
                       const struct fq_value *want)
{
    struct fq_objstore *st = fq_engine_store(e);
    struct fq_value *w = fq_objstore_edit(st, FQ_KIND_WORKLOAD, ns, name);
    if (!w)
        return;
    bool held = holds(w);
    struct fq_value *have = fq_value_path(w, FQ_WL_PODSETS);
    struct fq_value *psa = fq_value_path(w, FQ_WL_PODSET_ASSIGNMENTS);
    for (size_t i = 0; i < fq_value_len(want); i++) {
        const struct fq_value *ps = fq_seq_at(want, i);
        const char *pn = fq_value_path_str(ps, "name", "");
        int64_t cnt = fq_value_path_int(ps, "count", 1);
        struct fq_value *h = (struct fq_value *)podset_named(have, pn);
        if (h)
            fq_map_set(h, "count", fq_value_int(cnt));
        struct fq_value *a = (struct fq_value *)podset_named(psa, pn);
        if (!held || !a)
            continue;
        int64_t old = fq_value_path_int(a, "count", 0);
        struct fq_value *ru = fq_map_get(a, "resourceUsage");
        for (size_t r = 0; ru && ru->type == FQ_V_MAP && r < ru->u.map.n; r++) {
            const char *txt = fq_value_as_str(ru->u.map.items[r].val);
            if (!txt)
                continue;
            struct fq_value *nv =
                qty_scaled(ru->u.map.items[r].key, txt, old, cnt);
            fq_value_free(ru->u.map.items[r].val);
            ru->u.map.items[r].val = nv;
        }
        fq_map_set(a, "count", fq_value_int(cnt));
    }
    fq_objstore_update(st, w, true, NULL, NULL, NULL);
}

/* Whether w was finished by a slice that replaced it, while it still had
 * its admission (so it can take its quota back). */
static bool replaced_by_slice(const struct fq_value *w)
{
    const struct fq_value *f = fq_cond_find(w, "Finished");
    return f && fq_cond_status_is(f, "True") &&
           !strcmp(fq_value_path_str(f, "reason", ""),
                   FQ_SLICE_REASON_REPLACED) &&
           fq_value_path(w, FQ_WL_STATUS_ADMISSION) &&
           fq_cond_true(w, "Admitted") && !fq_cond_true(w, "Evicted");
}

/* Withdraws pending slice `cur` (reserved, checks not Ready) in favour of
 * `prev`, which it had replaced: cur is deleted and prev's Finished
 * condition removed. Kueue finishes the old slice on the new one's
 * admission; flexq does so at its quota reservation, so until the slice
 * is admitted the replacement can be taken back. */
static void restore_prev(struct fq_engine *e, const char *ns, const char *prev)
{
    struct fq_objstore *st = fq_engine_store(e);
    struct fq_value *w = fq_objstore_edit(st, FQ_KIND_WORKLOAD, ns, prev);
    if (!w)
        return;
    struct fq_value *cs = fq_value_path(w, FQ_STATUS_CONDITIONS);
    struct fq_value *keep = fq_value_seq();
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        if (strcmp(fq_value_path_str(c, "type", ""), "Finished"))
            fq_seq_push(keep, fq_value_clone(c));
    }
    fq_map_set(fq_map_ensure_map(w, "status"), "conditions", keep);
    fq_objstore_update(st, w, true, NULL, NULL, NULL);
}

static void withdraw(struct fq_engine *e, const struct fq_value *job,
                     const char *ns, const char *cur, const char *prev)
{
    fq_objstore_delete(fq_engine_store(e), FQ_KIND_WORKLOAD, ns, cur, NULL);
    fq_engine_event(e, job, "Normal", "DeletedWorkload",
                    "Deleted Workload: %s/%s (scale-up withdrawn before "
                    "admission)",
                    ns, cur);
    restore_prev(e, ns, prev);
}

/* A new slice `name` like `from` (metadata, spec) with want's podsets. */
static void create_slice(struct fq_engine *e, const struct fq_value *job,
                         const struct fq_value *from, const char *name,
                         const struct fq_value *want, int64_t now)
{
    const char *ns = fq_value_path_str(from, FQ_META_NAMESPACE, "default");
    struct fq_value *w = fq_value_map();
    fq_map_set(w, "apiVersion", fq_value_str("kueue.x-k8s.io/v1beta1"));
    fq_map_set(w, "kind", fq_value_str("Workload"));
    struct fq_value *md = fq_map_ensure_map(w, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str(ns));
    static const char *const keep[] = {"labels", "annotations",
                                       "ownerReferences"};
    for (size_t i = 0; i < 3; i++) {
        const struct fq_value *v =
            fq_map_get(fq_map_get(from, "metadata"), keep[i]);
        if (v)
            fq_map_set(md, keep[i], fq_value_clone(v));
    }
    fq_map_set(fq_map_ensure_map(md, "annotations"), FQ_SLICE_ANN_REPLACES,
               fq_value_str(fq_meta_name(from)));
    struct fq_value *spec = fq_value_clone(fq_map_get(from, "spec"));
    if (!spec)
        spec = fq_value_map();
    /* The old slice's podsets (their templates may carry what admission
     * merged), with want's counts. */
    struct fq_value *pss = fq_map_get(spec, "podSets");
    for (size_t i = 0; i < fq_value_len(want); i++) {
        const struct fq_value *ps = fq_seq_at(want, i);
        struct fq_value *h = (struct fq_value *)podset_named(
            pss, fq_value_path_str(ps, "name", ""));
        if (h)
            fq_map_set(h, "count",
                       fq_value_int(fq_value_path_int(ps, "count", 1)));
    }
    if (!pss)
        fq_map_set(spec, "podSets", fq_value_clone(want));
    fq_map_set(spec, "active", fq_value_bool(true));
    fq_map_set(w, "spec", spec);
    char uid[48];
    fq_engine_new_uid(e, uid, sizeof(uid));
    if (fq_objstore_create(fq_engine_store(e), w, now, uid, NULL, NULL) == 0)
        fq_engine_event(e, job, "Normal", "CreatedWorkload",
                        "Created Workload: %s/%s", ns, name);
}

void fq_jobslices_reconcile(struct fq_engine *e, const struct fq_value *job,
                            const struct fq_value *want, char *wname, size_t n,
                            bool *keep_running, int64_t now)
{
    struct fq_objstore *st = fq_engine_store(e);
    *keep_running = false;
    const char *ns = fq_value_path_str(job, FQ_META_NAMESPACE, "default");
    char base[300], cur[300], prev[300] = "", next[300];
    snprintf(base, sizeof(base), "%s", wname);
    snprintf(cur, sizeof(cur), "%s", wname);
    int k = 0;
    for (;;) {
        slice_name(base, k + 1, next, sizeof(next));
        if (k + 1 >= MAX_SLICES ||
            !fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, next))
            break;
        snprintf(prev, sizeof(prev), "%s", cur);
        snprintf(cur, sizeof(cur), "%s", next);
        k++;
    }
    /* Elastic podsets have no minCount (no partial admission). */
    struct fq_value *w2 = fq_value_clone(want);
    for (size_t i = 0; i < fq_value_len(w2); i++)
        fq_map_del(fq_seq_at(w2, i), "minCount");
    const struct fq_object *co = fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, cur);
    const struct fq_object *po =
        k > 0 ? fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, prev) : NULL;
    snprintf(wname, n, "%s", cur);
    if (!co)
        goto out;
    bool up, down;
    if (po && !fq_cond_true(po->obj, "Finished") && !holds(co->obj) &&
        !fq_cond_true(co->obj, "Finished")) {
        /* A scale up waits for quota: the job runs under prev. */
        snprintf(wname, n, "%s", prev);
        compare(w2, po->obj, &up, &down);
        if (!up) {
            fq_objstore_delete(st, FQ_KIND_WORKLOAD, ns, cur, NULL);
            fq_engine_event(e, job, "Normal", "DeletedWorkload",
                            "Deleted Workload: %s/%s (scaled back)", ns, cur);
            /* Below prev's counts too: shrink it now (our own delete
             * does not come back to us as a change). */
            po = fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, prev);
            compare(w2, po ? po->obj : NULL, &up, &down);
            if (po && down)
                set_counts(e, ns, prev, w2);
        } else {
            compare(w2, co->obj, &up, &down);
            if (up || down)
                set_counts(e, ns, cur, w2);
        }
        goto out;
    }
    if (po && holds(co->obj) && !fq_cond_true(co->obj, "Admitted") &&
        replaced_by_slice(po->obj)) {
        compare(w2, po->obj, &up, &down);
        if (!up) {
            /* Scaled back while the slice waits on its checks (a flex
             * ProvisioningRequest for nodes the job does not need any
             * more): the slice is withdrawn, its requests go with it
             * (provcheck), and prev, which never stopped running, holds
             * the quota again, shrunk to want. */
            withdraw(e, job, ns, cur, prev);
            po = fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, prev);
            compare(w2, po ? po->obj : NULL, &up, &down);
            if (po && down)
                set_counts(e, ns, prev, w2);
            snprintf(wname, n, "%s", prev);
            goto out;
        }
    }
    if (po && !holds(co->obj) && !fq_cond_true(co->obj, "Finished") &&
        !fq_cond_true(co->obj, "Admitted") && replaced_by_slice(po->obj)) {
        /* The slice lost its reservation before admission (a check in
         * Retry): prev, still running, takes its quota back and the slice
         * waits as any scale up, forced onto prev's flavor again when it
         * reserves (kueue_slices.c) - the job's slices never straddle two
         * flavors, and the job is not stopped for a failed scale up. */
        restore_prev(e, ns, prev);
        fq_engine_event(e, job, "Normal", "ScaleUpRequeued",
                        "Workload slice %s/%s lost its reservation before "
                        "admission; %s holds the quota again",
                        ns, cur, prev);
        snprintf(wname, n, "%s", prev);
        goto out;
    }
    if (po && fq_cond_true(po->obj, "Finished") && holds(co->obj) &&
        !fq_cond_true(co->obj, "Admitted"))
        *keep_running = true; /* the slice waits on its checks */
    if (po && !fq_cond_true(po->obj, "Finished") &&
        fq_cond_true(co->obj, "Finished"))
        snprintf(wname, n, "%s", prev); /* not expected; be safe */
    if (fq_cond_true(co->obj, "Finished"))
        goto out;
    if (po && fq_cond_true(po->obj, "Finished") && !holds(co->obj) &&
        strcmp(
            fq_value_path_str(fq_cond_find(po->obj, "Finished"), "reason", ""),
            FQ_SLICE_REASON_REPLACED)) {
        /* The job ended while a scale up waited: the slice goes. */
        fq_objstore_delete(st, FQ_KIND_WORKLOAD, ns, cur, NULL);
        snprintf(wname, n, "%s", prev);
        goto out;
    }
    compare(w2, co->obj, &up, &down);
    if (!up && !down)
        goto out;
    if (up && holds(co->obj)) {
        slice_name(base, k + 1, next, sizeof(next));
        const struct fq_value *from = fq_value_clone(co->obj);
        create_slice(e, job, from, next, w2, now);
        fq_value_free((struct fq_value *)from);
    } else {
        set_counts(e, ns, cur, w2);
    }
out:
    fq_value_free(w2);
}

/* --- pod gates ---------------------------------------------------------- */

void fq_jobslices_gate_pod(struct fq_engine *e, const struct fq_value *rc,
                           struct fq_value *pod)
{
    const struct fq_value *l = fq_meta_labels(rc);
    const char *crd = fq_value_as_str(fq_map_get(l, FQ_LABEL_RAY_ORIGIN_CRD));
    const char *rj = fq_value_as_str(fq_map_get(l, FQ_LABEL_RAY_ORIGIN_NAME));
    if (!crd || strcmp(crd, "RayJob") || !rj)
        return;
    const struct fq_object *o = fq_objstore_get(
        fq_engine_store(e), FQ_KIND_RAYJOB,
        fq_value_path_str(rc, FQ_META_NAMESPACE, "default"), rj);
    if (!o || !fq_jobslices_elastic(o->obj) || !fq_meta_labels(o->obj) ||
        !fq_map_get(fq_meta_labels(o->obj), FQ_LABEL_QUEUE_NAME))
        return;
    struct fq_value *spec = fq_map_ensure_map(pod, "spec");
    struct fq_value *gates = fq_map_get(spec, "schedulingGates");
    if (!gates || gates->type != FQ_V_SEQ) {
        gates = fq_value_seq();
        fq_map_set(spec, "schedulingGates", gates);
    }
    struct fq_value *g = fq_value_map();
    fq_map_set(g, "name", fq_value_str(FQ_SLICE_GATE));
    fq_seq_push(gates, g);
}

static bool gated(const struct fq_value *pod)
{
    const struct fq_value *gs = fq_value_path(pod, FQ_POD_SCHEDULING_GATES);
    for (size_t i = 0; i < fq_value_len(gs); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(gs, i), "name", ""),
                    FQ_SLICE_GATE))
            return true;
    return false;
}

const char *fq_jobslices_gated_job(const struct fq_value *pod)
{
    if (!pod || !gated(pod))
        return NULL;
    const struct fq_value *l = fq_meta_labels(pod);
    const char *crd = fq_value_as_str(fq_map_get(l, FQ_LABEL_RAY_ORIGIN_CRD));
    if (!crd || strcmp(crd, "RayJob"))
        return NULL;
    return fq_value_as_str(fq_map_get(l, FQ_LABEL_RAY_ORIGIN_NAME));
}

void fq_jobslices_ungate(struct fq_engine *e, const struct fq_value *job,
                         const struct fq_value *wl)
{
    if (!wl || !fq_cond_true(wl, "Admitted") || fq_cond_true(wl, "Evicted") ||
        fq_cond_true(wl, "Finished"))
        return;
    const char *cname = fq_value_path_str(job, "status.rayClusterName", NULL);
    if (!cname || !*cname)
        return;
    struct fq_objstore *st = fq_engine_store(e);
    char *ns = fq_xstrdup(fq_value_path_str(job, FQ_META_NAMESPACE, "default"));
    const struct fq_value *psa = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
    const struct fq_value *groups = fq_value_path(job, FQ_RJ_WORKER_GROUPS);
    const struct fq_object **pods = NULL;
    size_t n = fq_objstore_list(st, FQ_KIND_POD, ns, &pods);
    char **todo = fq_xcalloc(n + 1, sizeof(char *));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *p = pods[i]->obj;
        if (!gated(p))
            continue;
        const struct fq_value *l = fq_meta_labels(p);
        const char *c = fq_value_as_str(fq_map_get(l, FQ_LABEL_RAY_CLUSTER));
        const char *g = fq_value_as_str(fq_map_get(l, FQ_LABEL_RAY_GROUP));
        const char *r = fq_value_as_str(fq_map_get(l, FQ_LABEL_REPLICA));
        if (!c || strcmp(c, cname) || !g || !r)
            continue;
        int64_t hosts = 1;
        for (size_t k = 0; k < fq_value_len(groups); k++)
            if (!strcmp(fq_value_path_str(fq_seq_at(groups, k), "groupName",
                                          "workers"),
                        g))
                hosts =
                    fq_value_path_int(fq_seq_at(groups, k), "numOfHosts", 1);
        if (hosts < 1)
            hosts = 1;
        const struct fq_value *a = podset_named(psa, g);
        int64_t admitted = a ? fq_value_path_int(a, "count", 0) : 0;
        if ((strtoll(r, NULL, 10) + 1) * hosts <= admitted)
            todo[m++] = fq_xstrdup(pods[i]->name);
    }
    free(pods);
    for (size_t i = 0; i < m; i++) {
        struct fq_value *p = fq_objstore_edit(st, FQ_KIND_POD, ns, todo[i]);
        if (p) {
            struct fq_value *spec = fq_map_get(p, "spec");
            struct fq_value *gs = fq_map_get(spec, "schedulingGates");
            struct fq_value *keep = fq_value_seq();
            for (size_t k = 0; k < fq_value_len(gs); k++)
                if (strcmp(fq_value_path_str(fq_seq_at(gs, k), "name", ""),
                           FQ_SLICE_GATE))
                    fq_seq_push(keep, fq_value_clone(fq_seq_at(gs, k)));
            if (fq_value_len(keep))
                fq_map_set(spec, "schedulingGates", keep);
            else {
                fq_value_free(keep);
                fq_map_del(spec, "schedulingGates");
            }
            fq_objstore_update(st, p, true, NULL, NULL, NULL);
        }
        free(todo[i]);
    }
    free(todo);
    free(ns);
}
