/*
 * jobframework_pods.c - Kueue's integration for plain Pods and pod groups,
 * a part of the jobframework controller.
 *
 * A Pod with the label kueue.x-k8s.io/queue-name and no controlling owner
 * is Kueue's to queue, alone or in a group:
 *
 *   single Pod   Workload `pod-<name>-<5 hex>`, one podset "main" of
 *                count 1, owned by the Pod.
 *   pod group    the pods labelled kueue.x-k8s.io/pod-group-name: G in a
 *                namespace, each annotated kueue.x-k8s.io/pod-group-total-
 *                count: N. Workload `G` is made once N of them exist, with
 *                one podset per role (pods of the same shape: containers'
 *                resources, nodeSelector, tolerations, affinity), named by
 *                8 hex of the shape's hash, owned by every member pod.
 *
 * As Kueue's webhook does, every such pod gets the scheduling gate
 * kueue.x-k8s.io/admission and the label kueue.x-k8s.io/managed=true
 * before the binder can see it (jobframework runs first in a round), so it
 * can never run outside quota:
 *
 *   Workload Admitted=True   each gated pod gets its podset's flavors'
 *                            nodeLabels and tolerations and the checks'
 *                            podSetUpdates, and loses the gate
 *   admitted, then evicted   bound pods that have not finished are deleted
 *                            (Kueue stops a pod workload by deleting its
 *                            pods); gated ones wait
 *   pods Succeeded           single: phase Succeeded / Failed ->
 *                            Finished=True; group: N pods Succeeded ->
 *                            Succeeded, a Failed pod annotated
 *                            retriable-in-group: "false" -> Failed
 *   pods ready               PodsReady=True once N are ready or done
 *   every owner pod gone     the Workload is deleted (jobframework's GC)
 *
 * What it does not do: pod finalizers, replacement of failed group
 * members (the user's), priority from a PriorityClass object, groups
 * larger than FQ_JFPODS_MAX_GROUP pods.
 */
#include "jobs/jobframework_pods.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "jobs/pods.h"
#include "jobs/workload.h"

#define LABEL_QUEUE         "kueue.x-k8s.io/queue-name"
#define FQ_JFPODS_MAX_GROUP 10000

bool fq_jfpods_managed(const struct fq_value *pod)
{
    if (!fq_value_as_str(fq_map_get(fq_meta_labels(pod), LABEL_QUEUE)))
        return false;
    const struct fq_value *ors = fq_meta_owners(pod);
    for (size_t i = 0; i < fq_value_len(ors); i++)
        if (fq_value_path_bool(fq_seq_at(ors, i), "controller", false))
            return false;
    return true;
}

static const char *group_of(const struct fq_value *pod)
{
    return fq_value_as_str(fq_map_get(fq_meta_labels(pod), FQ_LABEL_POD_GROUP));
}

static bool gated(const struct fq_value *pod)
{
    const struct fq_value *gs = fq_value_path(pod, FQ_POD_SCHEDULING_GATES);
    for (size_t i = 0; i < fq_value_len(gs); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(gs, i), "name", ""),
                    FQ_GATE_ADMISSION))
            return true;
    return false;
}

static bool bound(const struct fq_value *pod)
{
    return *fq_value_path_str(pod, FQ_POD_NODE_NAME, "") != '\0';
}

/* The role of a pod in its group: 8 hex of a hash of its shape. */
static void role_of(const struct fq_value *pod, char out[9])
{
    struct fq_value *shape = fq_value_map();
    const struct fq_value *spec = fq_value_path(pod, "spec");
    static const char *const keys[] = {"nodeSelector", "tolerations",
                                       "affinity"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (fq_map_get(spec, keys[i]))
            fq_map_set(shape, keys[i],
                       fq_value_clone(fq_map_get(spec, keys[i])));
    static const char *const lists[] = {"initContainers", "containers"};
    for (size_t l = 0; l < 2; l++) {
        const struct fq_value *cs = fq_map_get(spec, lists[l]);
        struct fq_value *out_cs = fq_value_seq();
        for (size_t i = 0; i < fq_value_len(cs); i++) {
            const struct fq_value *c = fq_seq_at(cs, i);
            struct fq_value *x = fq_value_map();
            fq_map_set(x, "name",
                       fq_value_str(fq_value_path_str(c, "name", "")));
            if (fq_map_get(c, "resources"))
                fq_map_set(x, "resources",
                           fq_value_clone(fq_map_get(c, "resources")));
            fq_seq_push(out_cs, x);
        }
        fq_map_set(shape, lists[l], out_cs);
    }
    char *js = fq_json_dumps(shape, 0);
    uint32_t h = 2166136261u;
    for (const char *p = js; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    snprintf(out, 9, "%08x", (unsigned)h);
    free(js);
    fq_value_free(shape);
}

/* The podset template of a pod: its labels, annotations and spec, less
 * the admission gate and the node it may be bound to. */
static struct fq_value *pod_template(const struct fq_value *pod)
{
    struct fq_value *t = fq_value_map();
    struct fq_value *md = fq_map_ensure_map(t, "metadata");
    const struct fq_value *l = fq_meta_labels(pod);
    const struct fq_value *a = fq_meta_annotations(pod);
    if (l)
        fq_map_set(md, "labels", fq_value_clone(l));
    if (a)
        fq_map_set(md, "annotations", fq_value_clone(a));
    const struct fq_value *spec = fq_value_path(pod, "spec");
    struct fq_value *s = spec ? fq_value_clone(spec) : fq_value_map();
    fq_map_del(s, "schedulingGates");
    fq_map_del(s, "nodeName");
    fq_map_set(t, "spec", s);
    return t;
}

static struct fq_value *podset(const char *name, int64_t count,
                               struct fq_value *tmpl)
{
    struct fq_value *ps = fq_value_map();
    fq_map_set(ps, "name", fq_value_str(name));
    fq_map_set(ps, "count", fq_value_int(count));
    fq_map_set(ps, "template", tmpl);
    return ps;
}

/* The members of a pod's unit, sorted by name: itself, or its group's
 * managed pods. Borrowed pointers in an owned array. */
static size_t members(struct fq_engine *e, const struct fq_object *po,
                      const struct fq_object ***out)
{
    const char *g = group_of(po->obj);
    if (!g) {
        *out = fq_xcalloc(1, sizeof(**out));
        (*out)[0] = po;
        return 1;
    }
    const struct fq_object **all;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_POD, po->ns, &all);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *gi = group_of(all[i]->obj);
        if (gi && !strcmp(gi, g) && fq_jfpods_managed(all[i]->obj))
            all[m++] = all[i];
    }
    *out = all;
    return m;
}

static void add_gate(struct fq_engine *e, const struct fq_object *po)
{
    struct fq_value *p =
        fq_objstore_edit(fq_engine_store(e), FQ_KIND_POD, po->ns, po->name);
    if (!p)
        return;
    struct fq_value *spec = fq_map_ensure_map(p, "spec");
    struct fq_value *gs = fq_map_get(spec, "schedulingGates");
    if (!gs || gs->type != FQ_V_SEQ) {
        gs = fq_value_seq();
        fq_map_set(spec, "schedulingGates", gs);
    }
    struct fq_value *g = fq_value_map();
    fq_map_set(g, "name", fq_value_str(FQ_GATE_ADMISSION));
    fq_seq_push(gs, g);
    fq_map_set(fq_map_ensure_map(fq_map_ensure_map(p, "metadata"), "labels"),
               FQ_LABEL_POD_MANAGED, fq_value_str("true"));
    fq_objstore_update(fq_engine_store(e), p, true, NULL, NULL, NULL);
}

/* Admitted: the podset's flavors and updates into the pod, gate lifted. */
static void ungate(struct fq_engine *e, const struct fq_object *po,
                   const struct fq_value *wl, const char *psname)
{
    const struct fq_value *psa = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
    const struct fq_value *a = NULL;
    for (size_t i = 0; i < fq_value_len(psa); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(psa, i), "name", ""), psname))
            a = fq_seq_at(psa, i);
    if (!a)
        return; /* not this workload's shape: stays gated */
    struct fq_value *p =
        fq_objstore_edit(fq_engine_store(e), FQ_KIND_POD, po->ns, po->name);
    if (!p)
        return;
    fq_jobframework_merge_podset(e, p, wl, a);
    struct fq_value *spec = fq_map_ensure_map(p, "spec");
    const struct fq_value *gs = fq_map_get(spec, "schedulingGates");
    struct fq_value *keep = fq_value_seq();
    for (size_t i = 0; i < fq_value_len(gs); i++)
        if (strcmp(fq_value_path_str(fq_seq_at(gs, i), "name", ""),
                   FQ_GATE_ADMISSION))
            fq_seq_push(keep, fq_value_clone(fq_seq_at(gs, i)));
    if (fq_value_len(keep))
        fq_map_set(spec, "schedulingGates", keep);
    else {
        fq_value_free(keep);
        fq_map_del(spec, "schedulingGates");
    }
    fq_objstore_update(fq_engine_store(e), p, true, NULL, NULL, NULL);
}

static int64_t total_of(const struct fq_value *pod)
{
    const char *t = fq_value_as_str(
        fq_map_get(fq_meta_annotations(pod), FQ_ANN_POD_GROUP_TOTAL));
    if (!t)
        return -1;
    char *end;
    long long v = strtoll(t, &end, 10);
    if (*end || v < 1 || v > FQ_JFPODS_MAX_GROUP)
        return -1;
    return v;
}

/* Creates the unit's Workload from its members' roles. */
static void create(struct fq_engine *e, const struct fq_object *const *mem,
                   size_t n, const char *wname, bool group, int64_t now)
{
    struct fq_value *pss = fq_value_seq();
    if (!group) {
        fq_seq_push(pss, podset("main", 1, pod_template(mem[0]->obj)));
    } else {
        for (size_t i = 0; i < n; i++) {
            char r[9];
            role_of(mem[i]->obj, r);
            struct fq_value *ps = NULL;
            for (size_t j = 0; j < fq_value_len(pss); j++)
                if (!strcmp(fq_value_path_str(fq_seq_at(pss, j), "name", ""),
                            r))
                    ps = fq_seq_at(pss, j);
            if (ps)
                fq_map_set(ps, "count",
                           fq_value_int(fq_value_path_int(ps, "count", 0) + 1));
            else
                fq_seq_push(pss, podset(r, 1, pod_template(mem[i]->obj)));
        }
    }
    if (fq_jobframework_create_workload(e, mem[0]->obj, pss, wname, now) != 0 ||
        !group)
        return;
    /* Every member owns a group's Workload. */
    const char *ns = mem[0]->ns;
    struct fq_value *w =
        fq_objstore_edit(fq_engine_store(e), FQ_KIND_WORKLOAD, ns, wname);
    if (!w)
        return;
    struct fq_value *ors = fq_value_seq();
    for (size_t i = 0; i < n; i++) {
        struct fq_value *r = fq_pods_owner_ref(mem[i]->obj);
        fq_map_set(r, "controller", fq_value_bool(false));
        fq_seq_push(ors, r);
    }
    fq_map_set(fq_map_ensure_map(w, "metadata"), "ownerReferences", ors);
    fq_objstore_update(fq_engine_store(e), w, true, NULL, NULL, NULL);
}

/* Pod phases -> the Workload's Finished / PodsReady. */
static void map_status(struct fq_engine *e, const struct fq_object *const *mem,
                       size_t n, int64_t total, const char *ns,
                       const char *wname, int64_t now)
{
    const struct fq_object *wo =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, ns, wname);
    if (!wo || fq_cond_true(wo->obj, "Finished"))
        return;
    int64_t ok = 0, ready = 0;
    bool failed = false;
    const char *fmsg = "";
    for (size_t i = 0; i < n; i++) {
        const char *ph = fq_pods_phase(mem[i]->obj);
        if (!strcmp(ph, "Succeeded")) {
            ok++;
            ready++;
        } else if (!strcmp(ph, "Failed")) {
            const char *rt = fq_value_as_str(fq_map_get(
                fq_meta_annotations(mem[i]->obj), FQ_ANN_POD_RETRIABLE));
            if (total == 1 || (rt && !strcmp(rt, "false"))) {
                failed = true;
                fmsg = fq_value_path_str(mem[i]->obj, FQ_STATUS_MESSAGE, "");
            }
        } else if (fq_pods_ready(mem[i]->obj)) {
            ready++;
        }
    }
    struct fq_value *w = fq_value_map();
    const struct fq_value *oc = fq_value_path(wo->obj, FQ_STATUS_CONDITIONS);
    if (oc)
        fq_map_set(fq_map_ensure_map(w, "status"), "conditions",
                   fq_value_clone(oc));
    if (ok >= total)
        fq_cond_set(w, "Finished", "True", "Succeeded",
                    "Job finished successfully", now);
    else if (failed)
        fq_cond_set(w, "Finished", "True", "Failed",
                    *fmsg ? fmsg : "Pod failed", now);
    else if (fq_cond_true(w, "Admitted") && !fq_cond_true(w, "Evicted") &&
             !fq_engine_config(e)->no_pods) {
        if (ready >= total)
            fq_cond_set(
                w, "PodsReady", "True", "Started",
                "All pods reached readiness and the workload is running", now);
        else if (fq_cond_true(w, "PodsReady"))
            fq_cond_set(w, "PodsReady", "False", "WaitForRecovery",
                        "At least one pod has failed, waiting for recovery",
                        now);
    }
    const struct fq_value *nc = fq_value_path(w, FQ_STATUS_CONDITIONS);
    if (nc)
        fq_objstore_set_status_key(fq_engine_store(e), FQ_KIND_WORKLOAD, ns,
                                   wname, "conditions", fq_value_clone(nc),
                                   NULL, NULL);
    fq_value_free(w);
}

void fq_jfpods_reconcile(struct fq_engine *e, const struct fq_object *po,
                         int64_t now)
{
    if (!fq_jfpods_managed(po->obj))
        return;
    struct fq_objstore *st = fq_engine_store(e);
    const char *g = group_of(po->obj);
    int64_t total = g ? total_of(po->obj) : 1;
    char *ns = fq_xstrdup(po->ns);
    char wname[300];
    if (g)
        snprintf(wname, sizeof(wname), "%.253s", g);
    else
        fq_jobframework_workload_name("pod", po->name, fq_meta_uid(po->obj),
                                      wname, sizeof(wname));

    /* Names, not pointers: the writes below move the stored objects. */
    const struct fq_object **mem;
    size_t n = members(e, po, &mem);
    char **names = fq_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        names[i] = fq_xstrdup(mem[i]->name);
    free(mem);

    const struct fq_object *wo =
        fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, wname);
    bool admitted = wo && fq_cond_true(wo->obj, "Admitted") &&
                    !fq_cond_true(wo->obj, "Evicted");
    bool finished = wo && fq_cond_true(wo->obj, "Finished");

    /* 1. No pod of the unit may be scheduled outside its quota. */
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *p =
            fq_objstore_get(st, FQ_KIND_POD, ns, names[i]);
        if (p && !admitted && !finished && !bound(p->obj) &&
            !fq_pods_terminal(p->obj) && !gated(p->obj))
            add_gate(e, p);
    }
    if (g && total < 0) {
        const struct fq_object *p =
            fq_objstore_get(st, FQ_KIND_POD, ns, po->name);
        if (p && !wo)
            fq_engine_event(e, p->obj, "Warning", "ErrorValidatingGroup",
                            "pod group %s: annotation %s must be an integer "
                            "from 1 to %d",
                            g, FQ_ANN_POD_GROUP_TOTAL, FQ_JFPODS_MAX_GROUP);
        goto out;
    }

    /* 2. The Workload, once the whole unit exists. */
    if (!wo && (int64_t)n >= total) {
        const struct fq_object **m = fq_xcalloc(n, sizeof(*m));
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const struct fq_object *p =
                fq_objstore_get(st, FQ_KIND_POD, ns, names[i]);
            if (p)
                m[k++] = p;
        }
        if (k)
            create(e, m, k, wname, g != NULL, now);
        free(m);
        wo = fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, wname);
    }
    if (!wo)
        goto out;

    /* 3. Admitted: lift the gates; evicted: stop what runs. */
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *p =
            fq_objstore_get(st, FQ_KIND_POD, ns, names[i]);
        wo = fq_objstore_get(st, FQ_KIND_WORKLOAD, ns, wname);
        if (!p || !wo)
            continue;
        if (admitted && !finished && gated(p->obj)) {
            char r[9];
            if (g)
                role_of(p->obj, r);
            ungate(e, p, wo->obj, g ? r : "main");
        } else if (!admitted && !finished && bound(p->obj) &&
                   !fq_pods_terminal(p->obj) &&
                   fq_value_path(wo->obj, FQ_STATUS_CONDITIONS) &&
                   fq_cond_true(wo->obj, "Evicted")) {
            const char *why = fq_value_path_str(
                fq_cond_find(wo->obj, "Evicted"), "message", "Evicted");
            fq_engine_event(e, p->obj, "Normal", "Stopped", "%s", why);
            fq_objstore_delete(st, FQ_KIND_POD, ns, names[i], NULL);
        }
    }

    /* 4. Status. */
    {
        const struct fq_object **m = fq_xcalloc(n + 1, sizeof(*m));
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const struct fq_object *p =
                fq_objstore_get(st, FQ_KIND_POD, ns, names[i]);
            if (p)
                m[k++] = p;
        }
        map_status(e, m, k, total, ns, wname, now);
        free(m);
    }
out:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(ns);
}

bool fq_jfpods_orphaned(struct fq_engine *e, const struct fq_object *w)
{
    const struct fq_value *ors = fq_meta_owners(w->obj);
    size_t pods = 0;
    for (size_t i = 0; i < fq_value_len(ors); i++) {
        const struct fq_value *r = fq_seq_at(ors, i);
        if (strcmp(fq_value_path_str(r, "kind", ""), "Pod"))
            continue;
        pods++;
        const struct fq_object *p =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_POD, w->ns,
                            fq_value_path_str(r, "name", ""));
        if (p && !strcmp(fq_meta_uid(p->obj), fq_value_path_str(r, "uid", "")))
            return false;
    }
    return pods > 0;
}
