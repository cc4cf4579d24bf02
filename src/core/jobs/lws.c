/*
 * lws.c - the LeaderWorkerSet controller (leaderworkerset.x-k8s.io/v1) and
 * Kueue's LeaderWorkerSet integration, which admits each group on its own.
 *
 * A LeaderWorkerSet is `replicas` groups of `leaderWorkerTemplate.size`
 * pods: a leader (leaderTemplate, else workerTemplate) and size - 1
 * workers. The LWS project runs them through StatefulSets; flexq makes the
 * pods directly, with the names, labels and env those give them:
 *
 *   leader    <lws>-<g>          worker index 0
 *   worker    <lws>-<g>-<w>      w = 1 .. size-1
 *   every pod hostname = its name, subdomain <lws> (subdomainPolicy
 *             Shared, the default) or <lws>-<g> (UniquePerReplica);
 *             labels leaderworkerset.sigs.k8s.io/name, group-index,
 *             worker-index; annotations size and (workers) leader-name;
 *             env LWS_LEADER_ADDRESS (<lws>-<g>.<subdomain>.<namespace>),
 *             LWS_GROUP_SIZE, LWS_WORKER_INDEX; restartPolicy Always
 *
 * The group's names resolve to this machine in its pods (annotation
 * flexq.dev/dns-names). Queued (label kueue.x-k8s.io/queue-name, or a
 * LocalQueue "default" in the namespace), each group g gets its own
 * Workload `leaderworkerset-<lws>-<g>-<5 hex>` owned by the LWS, with
 * Kueue's podsets: `leader` (1) and `worker` (size - 1) when a
 * leaderTemplate is given, else `main` (size). The group's pods carry the
 * scheduling gate kueue.x-k8s.io/admission until that Workload is
 * admitted; then they get the flavors' nodeLabels and tolerations and
 * lose the gate. An evicted group's pods are deleted and made again
 * gated. A group never finishes: it holds its quota until the LWS scales
 * it away or is deleted (its Workload goes with it).
 *
 * restartPolicy RecreateGroupOnPodRestart (the default): a failed pod or
 * a restarted container recreates the whole group; None: only that pod.
 *
 * Status: replicas, readyReplicas (groups whose pods all run ready),
 * conditions Available (every group ready) and Progressing.
 *
 * What it does not do: rolling updates (a changed template applies to
 * groups made afterwards), startupPolicy LeaderReady, subGroupPolicy,
 * TPU env, StatefulSets and Services, scale subresource.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "jobs/integrations.h"
#include "jobs/jobframework_pods.h"
#include "jobs/pods.h"
#include "jobs/workload.h"

#define LWS_PREFIX "leaderworkerset.sigs.k8s.io/"
#define MAX_GROUPS 10000

static int64_t group_size(const struct fq_value *lws)
{
    return fq_value_path_int(lws, "spec.leaderWorkerTemplate.size", 1);
}

static int64_t groups(const struct fq_value *lws)
{
    int64_t n = fq_value_path_int(lws, "spec.replicas", 1);
    return n < MAX_GROUPS ? n : MAX_GROUPS;
}

static const struct fq_value *leader_template(const struct fq_value *lws)
{
    const struct fq_value *t = fq_value_path(lws, FQ_LWS_LEADER_TEMPLATE);
    return t ? t : fq_value_path(lws, FQ_LWS_WORKER_TEMPLATE);
}

/* The subdomain of group g's pods, into buf. */
static void subdomain(const struct fq_value *lws, int64_t g, char *buf,
                      size_t n)
{
    const char *name = fq_meta_name(lws);
    if (!strcmp(fq_value_path_str(lws, "spec.networkConfig.subdomainPolicy",
                                  "Shared"),
                "UniquePerReplica"))
        snprintf(buf, n, "%s-%lld", name, (long long)g);
    else
        snprintf(buf, n, "%s", name);
}

/* The pod name of worker w (0: the leader) of group g, owned. */
static char *pod_name(const char *name, int64_t g, int64_t w)
{
    return w ? fq_xasprintf("%s-%lld-%lld", name, (long long)g, (long long)w) :
               fq_xasprintf("%s-%lld", name, (long long)g);
}

static bool queued(const struct fq_value *lws)
{
    return fq_value_as_str(
               fq_map_get(fq_meta_labels(lws), FQ_LABEL_QUEUE_NAME)) != NULL;
}

static void wl_name(const struct fq_value *lws, int64_t g, char *buf, size_t n)
{
    char gname[300];
    snprintf(gname, sizeof(gname), "%s-%lld", fq_meta_name(lws), (long long)g);
    fq_jobframework_workload_name("leaderworkerset", gname, fq_meta_uid(lws),
                                  buf, n);
}

/* --- the group's Workload ------------------------------------------------ */

static struct fq_value *podset(const char *name, int64_t count,
                               const struct fq_value *t)
{
    struct fq_value *ps = fq_value_map();
    fq_map_set(ps, "name", fq_value_str(name));
    fq_map_set(ps, "count", fq_value_int(count));
    fq_map_set(ps, "template", t ? fq_value_clone(t) : fq_value_map());
    return ps;
}

static struct fq_value *lws_podsets(const struct fq_value *lws)
{
    struct fq_value *pss = fq_value_seq();
    const struct fq_value *wt = fq_value_path(lws, FQ_LWS_WORKER_TEMPLATE);
    const struct fq_value *lt = fq_value_path(lws, FQ_LWS_LEADER_TEMPLATE);
    if (lt) {
        fq_seq_push(pss, podset("leader", 1, lt));
        if (group_size(lws) > 1)
            fq_seq_push(pss, podset("worker", group_size(lws) - 1, wt));
    } else {
        fq_seq_push(pss, podset("main", group_size(lws), wt));
    }
    return pss;
}

/* The podset of worker index w. */
static const char *podset_of(const struct fq_value *lws, int64_t w)
{
    if (!fq_value_path(lws, FQ_LWS_LEADER_TEMPLATE))
        return "main";
    return w ? "worker" : "leader";
}

/* --- pods ---------------------------------------------------------------- */

static char *dns_names(const struct fq_value *lws, int64_t g)
{
    const char *name = fq_meta_name(lws);
    const char *ns = fq_value_path_str(lws, FQ_META_NAMESPACE, "default");
    char sub[300];
    subdomain(lws, g, sub, sizeof(sub));
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "");
    for (int64_t w = 0; w < group_size(lws) && w < 1024; w++) {
        char *pn = pod_name(name, g, w);
        fq_buf_printf(&b, "%s%s.%s,%s.%s.%s,%s.%s.%s.svc", w ? "," : "", pn,
                      sub, pn, sub, ns, pn, sub, ns);
        free(pn);
    }
    return fq_buf_detach(&b);
}

static void create_pod(struct fq_engine *e, const struct fq_value *lws,
                       int64_t g, int64_t w, const char *dns, int64_t now)
{
    const char *name = fq_meta_name(lws);
    const char *ns = fq_value_path_str(lws, FQ_META_NAMESPACE, "default");
    char *pn = pod_name(name, g, w);
    char *leader = pod_name(name, g, 0);
    const struct fq_value *t =
        w ? fq_value_path(lws, FQ_LWS_WORKER_TEMPLATE) : leader_template(lws);
    struct fq_value *pod = fq_pods_from_template(t, ns, pn, lws);
    char buf[300], sub[300];
    fq_pods_set_label(pod, LWS_PREFIX "name", name);
    snprintf(buf, sizeof(buf), "%lld", (long long)g);
    fq_pods_set_label(pod, LWS_PREFIX "group-index", buf);
    snprintf(buf, sizeof(buf), "%lld", (long long)w);
    fq_pods_set_label(pod, LWS_PREFIX "worker-index", buf);
    snprintf(buf, sizeof(buf), "%lld", (long long)group_size(lws));
    fq_pods_set_annotation(pod, LWS_PREFIX "size", buf);
    if (w)
        fq_pods_set_annotation(pod, LWS_PREFIX "leader-name", leader);
    fq_pods_set_annotation(pod, FQ_ANN_DNS_NAMES, dns);
    struct fq_value *spec = fq_map_ensure_map(pod, "spec");
    subdomain(lws, g, sub, sizeof(sub));
    fq_map_set(spec, "hostname", fq_value_str(pn));
    fq_map_set(spec, "subdomain", fq_value_str(sub));
    fq_map_set(spec, "restartPolicy", fq_value_str("Always"));
    char *addr = fq_xasprintf("%s.%s.%s", leader, sub, ns);
    fq_pods_set_env(spec, "LWS_LEADER_ADDRESS", addr);
    free(addr);
    snprintf(buf, sizeof(buf), "%lld", (long long)group_size(lws));
    fq_pods_set_env(spec, "LWS_GROUP_SIZE", buf);
    snprintf(buf, sizeof(buf), "%lld", (long long)w);
    fq_pods_set_env(spec, "LWS_WORKER_INDEX", buf);
    if (queued(lws)) {
        struct fq_value *gates = fq_value_seq();
        struct fq_value *gate = fq_value_map();
        fq_map_set(gate, "name", fq_value_str(FQ_GATE_ADMISSION));
        fq_seq_push(gates, gate);
        fq_map_set(spec, "schedulingGates", gates);
        fq_pods_set_label(pod, "kueue.x-k8s.io/managed", "true");
        char wn[300];
        wl_name(lws, g, wn, sizeof(wn));
        fq_pods_set_label(pod, FQ_LABEL_POD_GROUP, wn);
    }
    fq_pods_create(e, pod, now, lws, "SuccessfulCreate");
    free(pn);
    free(leader);
}

static bool has_gate(const struct fq_value *pod)
{
    const struct fq_value *gs = fq_value_path(pod, FQ_POD_SCHEDULING_GATES);
    for (size_t i = 0; i < fq_value_len(gs); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(gs, i), "name", ""),
                    FQ_GATE_ADMISSION))
            return true;
    return false;
}

/* Admitted: the podset's flavors into the pod, the gate lifted. */
static void ungate(struct fq_engine *e, const char *ns, const char *pn,
                   const struct fq_value *wl, const char *ps)
{
    const struct fq_value *psa = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
    const struct fq_value *a = NULL;
    for (size_t i = 0; i < fq_value_len(psa); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(psa, i), "name", ""), ps))
            a = fq_seq_at(psa, i);
    if (!a)
        return;
    struct fq_objstore *s = fq_engine_store(e);
    struct fq_value *p = fq_objstore_edit(s, FQ_KIND_POD, ns, pn);
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
    fq_objstore_update(s, p, true, NULL, NULL, NULL);
}

static void delete_group(struct fq_engine *e, const char *ns, const char *name,
                         int64_t g, int64_t size)
{
    struct fq_objstore *s = fq_engine_store(e);
    for (int64_t w = 0; w < size; w++) {
        char *pn = pod_name(name, g, w);
        const struct fq_object *p = fq_objstore_get(s, FQ_KIND_POD, ns, pn);
        if (p && fq_pods_owned_by(p->obj, "LeaderWorkerSet", name, NULL))
            fq_objstore_delete(s, FQ_KIND_POD, ns, pn, NULL);
        free(pn);
    }
}

/* --- reconcile ----------------------------------------------------------- */

/* Workload PodsReady from the group's readiness (never Finished). */
static void map_group(struct fq_engine *e, const char *ns, const char *wname,
                      bool ready, int64_t now)
{
    const struct fq_object *wo =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, ns, wname);
    if (!wo || !fq_cond_true(wo->obj, "Admitted") ||
        fq_cond_true(wo->obj, "Evicted") ||
        fq_cond_true(wo->obj, "PodsReady") == ready)
        return;
    struct fq_value *w = fq_value_map();
    const struct fq_value *oc = fq_value_path(wo->obj, FQ_STATUS_CONDITIONS);
    if (oc)
        fq_map_set(fq_map_ensure_map(w, "status"), "conditions",
                   fq_value_clone(oc));
    if (ready)
        fq_cond_set(w, "PodsReady", "True", "Started",
                    "All pods reached readiness and the workload is running",
                    now);
    else
        fq_cond_set(w, "PodsReady", "False", "WaitForRecovery",
                    "At least one pod has failed, waiting for recovery", now);
    fq_objstore_set_status_key(
        fq_engine_store(e), FQ_KIND_WORKLOAD, ns, wname, "conditions",
        fq_value_clone(fq_value_path(w, FQ_STATUS_CONDITIONS)), NULL, NULL);
    fq_value_free(w);
}

/* One group: pods made, admitted or evicted, restarted. Returns whether
 * every pod of it runs ready. */
static bool reconcile_group(struct fq_engine *e, const struct fq_value *lws,
                            int64_t g, int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    const char *name = fq_meta_name(lws);
    const char *ns = fq_value_path_str(lws, FQ_META_NAMESPACE, "default");
    int64_t size = group_size(lws);
    char wname[300];
    const struct fq_object *wo = NULL;
    if (queued(lws)) {
        wl_name(lws, g, wname, sizeof(wname));
        if (!fq_objstore_get(s, FQ_KIND_WORKLOAD, ns, wname))
            fq_jobframework_create_workload(e, lws, lws_podsets(lws), wname,
                                            now);
        wo = fq_objstore_get(s, FQ_KIND_WORKLOAD, ns, wname);
        if (!wo)
            return false;
    }
    bool admitted = !wo || (fq_cond_true(wo->obj, "Admitted") &&
                            !fq_cond_true(wo->obj, "Evicted"));
    bool recreate = false;
    for (int64_t w = 0; w < size; w++) {
        char *pn = pod_name(name, g, w);
        const struct fq_object *p = fq_objstore_get(s, FQ_KIND_POD, ns, pn);
        if (p && (fq_pods_terminal(p->obj) || fq_pods_restarts(p->obj) > 0))
            recreate = true;
        if (p && wo && !admitted && !has_gate(p->obj))
            recreate = true; /* evicted: the running group goes */
        free(pn);
    }
    if (recreate) {
        bool group = strcmp(fq_value_path_str(
                                lws, "spec.leaderWorkerTemplate.restartPolicy",
                                "RecreateGroupOnPodRestart"),
                            "None") != 0;
        if (group || (wo && !admitted)) {
            delete_group(e, ns, name, g, size);
        } else {
            for (int64_t w = 0; w < size; w++) {
                char *pn = pod_name(name, g, w);
                const struct fq_object *p =
                    fq_objstore_get(s, FQ_KIND_POD, ns, pn);
                if (p && fq_pods_terminal(p->obj))
                    fq_objstore_delete(s, FQ_KIND_POD, ns, pn, NULL);
                free(pn);
            }
        }
    }
    char *dns = dns_names(lws, g);
    int64_t ready = 0;
    wo = wo ? fq_objstore_get(s, FQ_KIND_WORKLOAD, ns, wname) : NULL;
    for (int64_t w = 0; w < size; w++) {
        char *pn = pod_name(name, g, w);
        const struct fq_object *p = fq_objstore_get(s, FQ_KIND_POD, ns, pn);
        if (!p)
            create_pod(e, lws, g, w, dns, now);
        p = fq_objstore_get(s, FQ_KIND_POD, ns, pn);
        if (p && wo && admitted && has_gate(p->obj))
            ungate(e, ns, pn, wo->obj, podset_of(lws, w));
        p = fq_objstore_get(s, FQ_KIND_POD, ns, pn);
        if (p && fq_pods_ready(p->obj))
            ready++;
        free(pn);
    }
    free(dns);
    if (wo)
        map_group(e, ns, wname, ready == size, now);
    return ready == size;
}

/* Groups past spec.replicas (a scale-down) go with their Workloads. */
static void scale_down(struct fq_engine *e, const struct fq_value *lws)
{
    struct fq_objstore *s = fq_engine_store(e);
    const char *name = fq_meta_name(lws);
    const char *ns = fq_value_path_str(lws, FQ_META_NAMESPACE, "default");
    for (int64_t g = groups(lws); g < MAX_GROUPS; g++) {
        char *leader = pod_name(name, g, 0);
        bool any = fq_objstore_get(s, FQ_KIND_POD, ns, leader) != NULL;
        free(leader);
        char wname[300];
        wl_name(lws, g, wname, sizeof(wname));
        if (fq_objstore_get(s, FQ_KIND_WORKLOAD, ns, wname)) {
            fq_objstore_delete(s, FQ_KIND_WORKLOAD, ns, wname, NULL);
            any = true;
        }
        if (!any)
            break;
        delete_group(e, ns, name, g, group_size(lws));
    }
}

static void reconcile(struct fq_engine *e, const char *ns, const char *name,
                      int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    if (!fq_objstore_get(s, FQ_KIND_LEADERWORKERSET, ns, name)) {
        /* deleted: its pods and Workloads go (the garbage collector) */
        fq_pods_delete_owned(e, ns, "LeaderWorkerSet", name);
        return;
    }
    fq_integration_default_queue(e, FQ_KIND_LEADERWORKERSET, ns, name);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_LEADERWORKERSET, ns, name);
    struct fq_value *lws = fq_value_clone(o->obj);
    int64_t ready = 0;
    for (int64_t g = 0; g < groups(lws); g++)
        ready += reconcile_group(e, lws, g, now);
    scale_down(e, lws);
    struct fq_value *st = fq_value_clone(fq_map_get(lws, "status"));
    if (!st)
        st = fq_value_map();
    fq_map_set(st, "replicas", fq_value_int(groups(lws)));
    fq_map_set(st, "readyReplicas", fq_value_int(ready));
    bool avail = ready == groups(lws);
    fq_pods_cond_set(
        st, "Available", avail ? "True" : "False",
        avail ? "AllGroupsReady" : "GroupsNotReady",
        avail ? "All replicas are ready" : "Replicas are not all ready", now);
    fq_pods_cond_set(
        st, "Progressing", avail ? "False" : "True",
        avail ? "AllGroupsReady" : "GroupsProgressing",
        avail ? "All replicas are ready" : "Replicas are progressing", now);
    fq_pods_put_status(e, FQ_KIND_LEADERWORKERSET, ns, name, st);
    fq_value_free(lws);
}

/* --- controller ---------------------------------------------------------- */

static void *lc_create(struct fq_engine *e)
{
    (void)e;
    return fq_owner_ctl_new(
        FQ_KIND_LEADERWORKERSET, "LeaderWorkerSet",
        FQ_KIND_BIT(FQ_KIND_POD) | FQ_KIND_BIT(FQ_KIND_WORKLOAD), reconcile);
}

/* fq_owner_ctl_on_change, but a deleted LeaderWorkerSet is marked too
 * (its pods and Workloads go), and a namespace's LocalQueue `default`
 * appearing marks its LeaderWorkerSets (they may now be queued). */
static void lc_on_change(void *self, struct fq_engine *e,
                         const struct fq_change *ch)
{
    struct fq_owner_ctl *c = self;
    if (fq_engine_config(e)->no_pods)
        return;
    if (ch->kind == FQ_KIND_LEADERWORKERSET) {
        fq_keyq_add2(&c->q, ch->ns, ch->name);
    } else if (ch->kind == FQ_KIND_LOCALQUEUE &&
               ch->type != FQ_CHANGE_DELETED && !strcmp(ch->name, "default")) {
        const struct fq_object **objs = NULL;
        size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_LEADERWORKERSET,
                                    ch->ns, &objs);
        for (size_t i = 0; i < n; i++)
            fq_keyq_add2(&c->q, objs[i]->ns, objs[i]->name);
        free(objs);
    } else if (!fq_owner_ctl_note(c, e, ch)) {
        return;
    }
    fq_engine_kick(e, self);
}

const struct fq_controller_ops fq_lws_controller = {
    .name = "leaderworkerset",
    .watch = FQ_KIND_BIT(FQ_KIND_LEADERWORKERSET) | FQ_KIND_BIT(FQ_KIND_POD) |
             FQ_KIND_BIT(FQ_KIND_WORKLOAD) | FQ_KIND_BIT(FQ_KIND_LOCALQUEUE),
    .create = lc_create,
    .destroy = fq_owner_ctl_destroy,
    .on_change = lc_on_change,
    .run = fq_owner_ctl_run,
    .next_wakeup = fq_owner_ctl_next_wakeup,
};
