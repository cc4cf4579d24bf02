/*
 * workload.c - what Kueue's job integrations share (jobframework.c for
 * RayJob, batch Job and RayCluster; jobframework_pods.c for plain Pods and
 * pod groups): Kueue's Workload name for a job, the Workload made for a
 * job (queue, priority class or the pods' PriorityClass, maximum
 * execution time, the job as controlling owner), and an admission merged
 * into a pod template (the flavors' node labels and tolerations, the
 * checks' podSetUpdates).
 *
 * What it does not do: decide when a job needs a Workload, suspend or
 * unsuspend jobs (the integrations do).
 */
#include "jobs/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/objects.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "jobs/pods.h"

/* Kueue's name: <prefix>-<job name>-<5 hex of a hash of the uid>. */
void fq_jobframework_workload_name(const char *prefix, const char *name,
                                   const char *uid, char *buf, size_t n)
{
    uint32_t h = 2166136261u;
    for (const char *p = uid; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    char full[400];
    snprintf(full, sizeof(full), "%s-%.200s", prefix, name);
    if (strlen(full) > 247)
        full[247] = '\0';
    snprintf(buf, n, "%s-%05x", full, (unsigned)(h & 0xfffff));
}

/*
 * Kueue's priority without a WorkloadPriorityClass label: the
 * PriorityClass named by the first podset template's priorityClassName,
 * else the PriorityClass marked globalDefault; its value becomes
 * spec.priority (source scheduling.k8s.io/priorityclass). A class that does
 * not exist gives priority 0 and a Warning event on the job.
 */
static void pod_priority(struct fq_engine *e, const struct fq_value *job,
                         struct fq_value *spec)
{
    struct fq_objstore *st = fq_engine_store(e);
    const struct fq_value *pss = fq_map_get(spec, "podSets");
    const char *name = NULL;
    for (size_t i = 0; i < fq_value_len(pss) && !name; i++)
        name = fq_value_as_str(fq_value_path(
            fq_seq_at(pss, i), "template.spec.priorityClassName"));
    const struct fq_object *p = NULL;
    if (name) {
        p = fq_objstore_get(st, FQ_KIND_PRIORITYCLASS, "", name);
        if (!p)
            fq_engine_event(e, job, "Warning", "PriorityClassNotFound",
                            "PriorityClass %s not found: priority 0", name);
    } else {
        const struct fq_object **all;
        size_t n = fq_objstore_list(st, FQ_KIND_PRIORITYCLASS, NULL, &all);
        for (size_t i = 0; i < n && !p; i++)
            if (fq_value_path_bool(all[i]->obj, "globalDefault", false))
                p = all[i];
        free(all);
        if (p)
            name = p->name;
    }
    if (!name)
        return;
    fq_map_set(spec, "priorityClassName", fq_value_str(name));
    fq_map_set(spec, "priorityClassSource",
               fq_value_str("scheduling.k8s.io/priorityclass"));
    fq_map_set(spec, "priority",
               fq_value_int(p ? fq_value_path_int(p->obj, "value", 0) : 0));
}

int fq_jobframework_create_workload(struct fq_engine *e,
                                    const struct fq_value *job,
                                    struct fq_value *podsets, const char *wname,
                                    int64_t now)
{
    const char *ns = fq_value_path_str(job, FQ_META_NAMESPACE, "default");
    struct fq_value *w = fq_value_map();
    fq_map_set(w, "apiVersion", fq_value_str("kueue.x-k8s.io/v1beta1"));
    fq_map_set(w, "kind", fq_value_str("Workload"));
    struct fq_value *md = fq_map_ensure_map(w, "metadata");
    fq_map_set(md, "name", fq_value_str(wname));
    fq_map_set(md, "namespace", fq_value_str(ns));
    const struct fq_value *labels = fq_meta_labels(job);
    struct fq_value *wl = fq_map_ensure_map(md, "labels");
    fq_map_set(wl, "kueue.x-k8s.io/job-uid", fq_value_str(fq_meta_uid(job)));
    const char *pc =
        fq_value_as_str(fq_map_get(labels, FQ_LABEL_PRIORITY_CLASS));
    struct fq_value *ors = fq_value_seq();
    struct fq_value * or = fq_value_map();
    fq_map_set(or, "apiVersion",
               fq_value_str(fq_value_path_str(job, "apiVersion", "")));
    fq_map_set(or, "kind", fq_value_str(fq_value_path_str(job, "kind", "")));
    fq_map_set(or, "name", fq_value_str(fq_meta_name(job)));
    fq_map_set(or, "uid", fq_value_str(fq_meta_uid(job)));
    fq_map_set(or, "controller", fq_value_bool(true));
    fq_map_set(or, "blockOwnerDeletion", fq_value_bool(true));
    fq_seq_push(ors, or);
    fq_map_set(md, "ownerReferences", ors);
    struct fq_value *spec = fq_map_ensure_map(w, "spec");
    fq_map_set(
        spec, "queueName",
        fq_value_str(fq_value_as_str(fq_map_get(labels, FQ_LABEL_QUEUE_NAME))));
    fq_map_set(spec, "podSets", podsets);
    if (!pc)
        pod_priority(e, job, spec);
    if (pc) {
        fq_map_set(spec, "priorityClassName", fq_value_str(pc));
        fq_map_set(spec, "priorityClassSource",
                   fq_value_str("kueue.x-k8s.io/workloadpriorityclass"));
        const struct fq_object *p = fq_objstore_get(
            fq_engine_store(e), FQ_KIND_WORKLOADPRIORITYCLASS, "", pc);
        fq_map_set(spec, "priority",
                   fq_value_int(p ? fq_value_path_int(p->obj, "value", 0) : 0));
    }
    fq_map_set(spec, "active", fq_value_bool(true));
    /* Kueue's job label for maximumExecutionTimeSeconds. */
    const char *mx =
        fq_value_as_str(fq_map_get(labels, FQ_LABEL_MAX_EXEC_TIME));
    if (mx) {
        char *end;
        long long v = strtoll(mx, &end, 10);
        if (!*end && v > 0 && v <= 2147483647LL)
            fq_map_set(spec, "maximumExecutionTimeSeconds", fq_value_int(v));
    }
    char uid[48];
    fq_engine_new_uid(e, uid, sizeof(uid));
    struct fq_err err;
    int rc = fq_objstore_create(fq_engine_store(e), w, now, uid, NULL, &err);
    if (rc == 0)
        fq_engine_event(e, job, "Normal", "CreatedWorkload",
                        "Created Workload: %s/%s", ns, wname);
    return rc;
}

static void merge_map(struct fq_value *dst, const struct fq_value *src)
{
    for (size_t i = 0; src && src->type == FQ_V_MAP && i < src->u.map.n; i++)
        fq_map_set(dst, src->u.map.items[i].key,
                   fq_value_clone(src->u.map.items[i].val));
}

static void push_all(struct fq_value *seq, const struct fq_value *src)
{
    for (size_t i = 0; i < fq_value_len(src); i++) {
        const struct fq_value *x = fq_seq_at(src, i);
        bool dup = false;
        for (size_t j = 0; j < fq_value_len(seq); j++)
            if (fq_value_equal(fq_seq_at(seq, j), x))
                dup = true;
        if (!dup)
            fq_seq_push(seq, fq_value_clone(x));
    }
}

static struct fq_value *ensure_seq(struct fq_value *m, const char *key)
{
    struct fq_value *s = fq_map_get(m, key);
    if (!s || s->type != FQ_V_SEQ) {
        s = fq_value_seq();
        fq_map_set(m, key, s);
    }
    return s;
}

void fq_jobframework_merge_podset(struct fq_engine *e, struct fq_value *t,
                                  const struct fq_value *wl,
                                  const struct fq_value *a)
{
    const char *name = fq_value_path_str(a, "name", "main");
    struct fq_value *spec = fq_map_ensure_map(t, "spec");
    const struct fq_value *fl = fq_map_get(a, "flavors");
    for (size_t j = 0; fl && fl->type == FQ_V_MAP && j < fl->u.map.n; j++) {
        const char *f = fq_value_as_str(fl->u.map.items[j].val);
        const struct fq_object *rf =
            f ? fq_objstore_get(fq_engine_store(e), FQ_KIND_RESOURCEFLAVOR, "",
                                f) :
                NULL;
        if (!rf)
            continue;
        const struct fq_value *nl = fq_value_path(rf->obj, FQ_RF_NODE_LABELS);
        if (fq_value_len(nl))
            merge_map(fq_map_ensure_map(spec, "nodeSelector"), nl);
        const struct fq_value *tol = fq_value_path(rf->obj, FQ_POD_TOLERATIONS);
        if (fq_value_len(tol))
            push_all(ensure_seq(spec, "tolerations"), tol);
    }
    if (fq_map_get(a, "topologyAssignment")) {
        /* TAS: the pods wait for their domain (kueue/tas_ungater.c). */
        struct fq_value *md = fq_map_ensure_map(t, "metadata");
        struct fq_value *lb = fq_map_ensure_map(md, "labels");
        fq_map_set(lb, FQ_LABEL_PODSET, fq_value_str(name));
        fq_map_set(lb, FQ_LABEL_TAS, fq_value_str("true"));
        fq_map_set(fq_map_ensure_map(md, "annotations"), FQ_ANN_WORKLOAD,
                   fq_value_str(fq_meta_name(wl)));
        struct fq_value *gs = ensure_seq(spec, "schedulingGates");
        bool have = false;
        for (size_t i = 0; i < fq_value_len(gs); i++)
            have |= !strcmp(fq_value_path_str(fq_seq_at(gs, i), "name", ""),
                            FQ_GATE_TOPOLOGY);
        if (!have) {
            struct fq_value *g = fq_value_map();
            fq_map_set(g, "name", fq_value_str(FQ_GATE_TOPOLOGY));
            fq_seq_push(gs, g);
        }
    }
    const struct fq_value *chs = fq_value_path(wl, FQ_WL_ADMISSION_CHECKS);
    for (size_t c = 0; c < fq_value_len(chs); c++) {
        const struct fq_value *ups =
            fq_map_get(fq_seq_at(chs, c), "podSetUpdates");
        for (size_t u = 0; u < fq_value_len(ups); u++) {
            const struct fq_value *up = fq_seq_at(ups, u);
            if (strcmp(fq_value_path_str(up, "name", ""), name))
                continue;
            struct fq_value *md = fq_map_ensure_map(t, "metadata");
            if (fq_map_get(up, "labels"))
                merge_map(fq_map_ensure_map(md, "labels"),
                          fq_map_get(up, "labels"));
            if (fq_map_get(up, "annotations"))
                merge_map(fq_map_ensure_map(md, "annotations"),
                          fq_map_get(up, "annotations"));
            if (fq_map_get(up, "nodeSelector"))
                merge_map(fq_map_ensure_map(spec, "nodeSelector"),
                          fq_map_get(up, "nodeSelector"));
            if (fq_map_get(up, "tolerations"))
                push_all(ensure_seq(spec, "tolerations"),
                         fq_map_get(up, "tolerations"));
        }
    }
}
