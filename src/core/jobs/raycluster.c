/*
 * raycluster.c - KubeRay's RayCluster controller: a head pod and worker
 * pods, reconciled to the spec.
 *
 * For a RayCluster `c` the controller keeps:
 *   - one head pod `<c>-head-<5 chars>` from headGroupSpec.template;
 *   - per worker group g, replicas r = clamp(replicas, minReplicas,
 *     maxReplicas) (replicas absent: minReplicas; group suspended: 0), and
 *     r x numOfHosts pods `<c>-<g>-worker-<5 chars>`, each labelled with
 *     its replica and host index. With numOfHosts > 1 a replica is one
 *     multi-host slice: its pods carry the gang annotations, so the binder
 *     places them all-or-nothing on one slice, and scale up / down adds or
 *     removes whole replicas (the highest indexes go first).
 *
 * Status, as KubeRay writes it: state "ready" once the head and every
 * desired worker pod have been running and ready at the same time
 * (condition RayClusterProvisioned, reason AllPodRunningAndReadyFirstTime;
 * it stays ready afterwards, as in KubeRay >= 1.1), "suspended" while
 * spec.suspend is true; desired / min / max / ready / available worker
 * counts; head.podName, head.serviceName `<c>-head-svc`, endpoints.
 *
 *   (created) --pods made--> (no state) --all pods ready--> ready
 *        ^                                                    |
 *        '-------- spec.suspend=false ---- suspended <--------'
 *                                          (pods deleted)   spec.suspend
 *
 * flexq departures, on purpose:
 *  - Pods are processes of one run, so worker and head pods get
 *    restartPolicy Never, and a pod that finished (Succeeded) counts as
 *    having been ready; failed pods are not replaced (the RayJob that owns
 *    the cluster fails, as a Ray job would when a worker dies).
 *  - A container without `command` is left so: the runner then runs
 *    `python3 -m flexq.node`, flexq's stand-in for the Ray image (an idle
 *    Ray node that waits for SIGTERM). The RayJob controller fills the
 *    workers' command with the job's entrypoint before making the cluster.
 *  - Every worker pod gets the rendezvous env (pods.h): RANK is the pod's
 *    index over all groups (group order, then replica, then host),
 *    WORLD_SIZE the number of desired worker pods, TPU_WORKER_ID the
 *    host index in its slice; plus TPU_NAME `<g>-<replica>`,
 *    FLEXQ_RAY_ROLE (head | worker), FLEXQ_RAY_CLUSTER and FLEXQ_RAY_GROUP.
 *
 * Invariants:
 *  1. At most one live head pod; at most one live pod per (group,
 *     replica, host).
 *  2. A suspended cluster has no pods.
 *
 * Head services, as KubeRay makes them (before the pods, also while
 * suspended): `<c>-head-svc` owned by the cluster, and for a cluster of a
 * RayJob `<rayjob>-head-svc` owned by the RayJob, each selecting the head
 * pod (ray.io/cluster, ray.io/node-type=head, ray.io/identifier
 * `<c>-head`, app.kubernetes.io/name and created-by) with the head
 * container's ports (KubeRay's defaults when it declares none) plus
 * metrics 8080. The owner GC deletes them with their owner.
 *
 * What it does not do: serve or headless services, autoscaler sidecars, GCS fault tolerance,
 * scaleStrategy.workersToDelete, idle timeouts; nothing in `no_pods` mode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/objects.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"
#include "jobs/jobframework_slices.h"
#include "jobs/pods.h"

struct rcctl {
    struct fq_keyq q;
    struct fq_pods_owners *own; /* RayCluster -> its pods */
};

struct rpod {
    char *name;  /* owned */
    char *group; /* owned; NULL for the head */
    int64_t replica, host;
    bool terminal, up, ready, running;
};

static void rpods_free(struct rpod *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].name);
        free(p[i].group);
    }
    free(p);
}

static size_t collect(struct fq_engine *e, const struct rcctl *ctl,
                      const char *ns, const struct fq_value *rc,
                      struct rpod **out)
{
    const char *name = fq_meta_name(rc);
    const char *uid = fq_meta_uid(rc);
    size_t n = 0;
    const char *const *names =
        fq_pods_owners_get(ctl->own, "RayCluster", ns, name, &n);
    struct rpod *v = fq_xcalloc(n + 1, sizeof(*v));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *o =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_POD, ns, names[i]);
        const struct fq_value *p = o ? o->obj : NULL;
        if (!p || !fq_pods_owned_by(p, "RayCluster", name, uid))
            continue;
        const struct fq_value *l = fq_meta_labels(p);
        struct rpod *r = &v[m++];
        r->name = fq_xstrdup(o->name);
        const char *type =
            fq_value_as_str(fq_map_get(l, FQ_LABEL_RAY_NODE_TYPE));
        if (!type || strcmp(type, "head") != 0) {
            const char *g = fq_value_as_str(fq_map_get(l, FQ_LABEL_RAY_GROUP));
            r->group = fq_xstrdup(g ? g : "");
        }
        const char *ri = fq_value_as_str(fq_map_get(l, FQ_LABEL_REPLICA));
        const char *hi = fq_value_as_str(fq_map_get(l, FQ_LABEL_HOST));
        r->replica = ri ? atoll(ri) : 0;
        r->host = hi ? atoll(hi) : 0;
        r->terminal = fq_pods_terminal(p);
        r->ready = fq_pods_ready(p);
        r->running = strcmp(fq_pods_phase(p), "Running") == 0;
        r->up = r->ready || strcmp(fq_pods_phase(p), "Succeeded") == 0;
    }
    *out = v;
    return m;
}

/* Desired replicas of a worker group, as KubeRay computes them. */
static int64_t group_replicas(const struct fq_value *g)
{
    if (fq_value_path_bool(g, "suspend", false))
        return 0;
    int64_t min = fq_value_path_int(g, "minReplicas", 0);
    int64_t max = fq_value_path_int(g, "maxReplicas", INT32_MAX);
    int64_t r = fq_value_path_int(g, "replicas", min);
    if (r < min)
        r = min;
    if (r > max)
        r = max;
    return r < 0 ? 0 : r;
}

static int64_t group_hosts(const struct fq_value *g)
{
    int64_t h = fq_value_path_int(g, "numOfHosts", 1);
    return h < 1 ? 1 : h;
}

/* Common labels / settings of a cluster's pods. */
static struct fq_value *make_pod(struct fq_engine *e, const char *ns,
                                 const struct fq_value *rc,
                                 const struct fq_value *tmpl, const char *pname,
                                 const char *group, const char *type)
{
    const char *cname = fq_meta_name(rc);
    struct fq_value *pod = fq_pods_from_template(tmpl, ns, pname, rc);
    (void)e;
    fq_pods_set_label(pod, FQ_LABEL_RAY_CLUSTER, cname);
    fq_pods_set_label(pod, FQ_LABEL_RAY_GROUP, group);
    fq_pods_set_label(pod, FQ_LABEL_RAY_NODE_TYPE, type);
    fq_pods_set_label(pod, "ray.io/is-ray-node", "yes");
    fq_pods_set_label(pod, FQ_LABEL_CREATED_BY, "kuberay-operator");
    fq_pods_set_label(pod, "app.kubernetes.io/name", "kuberay");
    char *ident = fq_xasprintf("%s-%s", cname, type);
    fq_pods_set_label(pod, "ray.io/identifier", ident);
    free(ident);
    const struct fq_value *cl = fq_meta_labels(rc);
    const char *on = fq_value_as_str(fq_map_get(cl, FQ_LABEL_RAY_ORIGIN_NAME));
    const char *oc = fq_value_as_str(fq_map_get(cl, FQ_LABEL_RAY_ORIGIN_CRD));
    if (on)
        fq_pods_set_label(pod, FQ_LABEL_RAY_ORIGIN_NAME, on);
    if (oc)
        fq_pods_set_label(pod, FQ_LABEL_RAY_ORIGIN_CRD, oc);
    struct fq_value *spec = fq_map_get(pod, "spec");
    fq_map_set(spec, "restartPolicy", fq_value_str("Never"));
    fq_pods_set_env(spec, "FLEXQ_RAY_ROLE", type);
    fq_pods_set_env(spec, "FLEXQ_RAY_CLUSTER", cname);
    fq_pods_set_env(spec, "FLEXQ_RAY_GROUP", group);
    return pod;
}

/* The cluster's rendezvous port, allocated and recorded on first use. */
static int cluster_port(struct fq_engine *e, const char *ns, const char *name)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_RAYCLUSTER, ns, name);
    const char *p = fq_value_as_str(
        fq_map_get(fq_meta_annotations(o->obj), FQ_ANN_RDV_PORT));
    if (p)
        return atoi(p);
    int port = fq_pods_alloc_port(e);
    struct fq_value *copy = fq_objstore_edit(s, FQ_KIND_RAYCLUSTER, ns, name);
    char buf[16];
    snprintf(buf, sizeof(buf), "%d", port);
    fq_pods_set_annotation(copy, FQ_ANN_RDV_PORT, buf);
    fq_objstore_update(s, copy, true, NULL, NULL, NULL);
    return port;
}

static void create_worker(struct fq_engine *e, const char *ns,
                          const struct fq_value *rc, const struct fq_value *g,
                          size_t gi, int64_t replica, int64_t host, int rank,
                          int world, int port, int64_t now)
{
    const char *cname = fq_meta_name(rc);
    const char *gname = fq_value_path_str(g, "groupName", "workers");
    int64_t hosts = group_hosts(g);
    char sfx[8], buf[64];
    fq_engine_rand_suffix(e, sfx, 5);
    char *pname = fq_xasprintf("%s-%s-worker-%s", cname, gname, sfx);
    struct fq_value *pod =
        make_pod(e, ns, rc, fq_map_get(g, "template"), pname, gname, "worker");
    snprintf(buf, sizeof(buf), "%zu", gi);
    fq_pods_set_label(pod, FQ_LABEL_GROUP_INDEX, buf);
    snprintf(buf, sizeof(buf), "%lld", (long long)replica);
    fq_pods_set_label(pod, FQ_LABEL_REPLICA, buf);
    snprintf(buf, sizeof(buf), "%lld", (long long)host);
    fq_pods_set_label(pod, FQ_LABEL_HOST, buf);
    char *tpu_name = fq_xasprintf("%s-%lld", gname, (long long)replica);
    struct fq_value *spec = fq_map_get(pod, "spec");
    fq_pods_set_env(spec, "TPU_NAME", tpu_name);
    if (hosts > 1) {
        char *gang = fq_xasprintf("%s-%s", cname, tpu_name);
        fq_pods_set_annotation(pod, FQ_ANN_GANG, gang);
        snprintf(buf, sizeof(buf), "%lld", (long long)hosts);
        fq_pods_set_annotation(pod, FQ_ANN_GANG_SIZE, buf);
        free(gang);
    }
    struct fq_buf hn = FQ_BUF_INIT;
    for (int64_t i = 0; i < hosts && i < 4096; i++)
        fq_buf_printf(&hn, "%s127.0.0.1", i ? "," : "");
    struct fq_rendezvous r = {
        .host = "127.0.0.1",
        .port = port,
        .rank = rank,
        .world = world,
        .worker_id = (int)host,
        .hostnames = fq_buf_str(&hn),
    };
    fq_pods_add_rendezvous(spec, &r);
    fq_buf_release(&hn);
    fq_jobslices_gate_pod(e, rc, pod); /* elastic: wait for the slice */
    fq_pods_create(e, pod, now, rc, "CreatedWorkerPod");
    free(tpu_name);
    free(pname);
}

static void delete_pod(struct fq_engine *e, const char *ns,
                       const struct fq_value *rc, const char *pname,
                       const char *reason)
{
    if (fq_objstore_delete(fq_engine_store(e), FQ_KIND_POD, ns, pname, NULL) ==
        0)
        fq_engine_event(e, rc, "Normal", reason, "Deleted pod %s", pname);
}

/* One reconcile's view of a RayCluster: a copy to read (rc), the status
 * being written (st, stored at the end if it changed), and its pods. */
struct rcrun {
    struct fq_engine *e;
    const char *ns, *name;
    int64_t now;
    struct fq_value *rc, *st;
    const struct fq_value *spec;
    struct rpod *pods;
    size_t np;
};

/* suspend: every pod goes, state suspended. */
static void suspend_cluster(struct rcrun *c)
{
    for (size_t i = 0; i < c->np; i++)
        delete_pod(c->e, c->ns, c->rc, c->pods[i].name, "DeletedPod");
    fq_map_set(c->st, "state", fq_value_str("suspended"));
    fq_pods_cond_set(c->st, "RayClusterSuspended", "True", "Suspended", NULL,
                     c->now);
    fq_pods_cond_set(c->st, "RayClusterProvisioned", "False",
                     "RayClusterPodsProvisioning", NULL, c->now);
    fq_map_del(c->st, "head");
    fq_map_set(c->st, "readyWorkerReplicas", fq_value_int(0));
    fq_map_set(c->st, "availableWorkerReplicas", fq_value_int(0));
}

/* The head pod, made when there is none (status.head names it and the
 * head service). Returns the live head, or NULL when just made. */
static const struct rpod *ensure_head(struct rcrun *c)
{
    const struct rpod *head = NULL;
    for (size_t i = 0; i < c->np; i++)
        if (!c->pods[i].group && (!c->pods[i].terminal || !head))
            head = &c->pods[i];
    struct fq_value *hs = fq_map_ensure_map(c->st, "head");
    if (!head) {
        char sfx[8];
        fq_engine_rand_suffix(c->e, sfx, 5);
        char *pname = fq_xasprintf("%s-head-%s", c->name, sfx);
        struct fq_value *pod = make_pod(
            c->e, c->ns, c->rc, fq_value_path(c->spec, FQ_RC_HEAD_TEMPLATE),
            pname, "headgroup", "head");
        fq_pods_create(c->e, pod, c->now, c->rc, "CreatedHeadPod");
        hs = fq_map_ensure_map(c->st, "head");
        fq_map_set(hs, "podName", fq_value_str(pname));
        free(pname);
    } else {
        fq_map_set(hs, "podName", fq_value_str(head->name));
        if (head->running)
            fq_map_set(hs, "podIP", fq_value_str("127.0.0.1"));
    }
    char *svc = fq_xasprintf("%s-head-svc", c->name);
    fq_map_set(fq_map_get(c->st, "head"), "serviceName", fq_value_str(svc));
    free(svc);
    return head;
}

/* --- head services ---------------------------------------------------- */

/* One port of a head service. */
struct svcport {
    char name[64];
    int64_t port;
};

static int cmp_svcport(const void *a, const void *b)
{
    return strcmp(((const struct svcport *)a)->name,
                  ((const struct svcport *)b)->name);
}

/* The head service's ports as KubeRay picks them: the head container's
 * ports (an unnamed one as "<port>-port"), or, when it declares none,
 * client 10001, gcs-server 6379, dashboard 8265, serve 8000; then metrics
 * 8080 unless a port is named so; sorted by name. Returns the count. */
static size_t head_ports(const struct fq_value *spec, struct svcport *out,
                         size_t cap)
{
    static const struct svcport defaults[] = {{"client", 10001},
                                              {"gcs-server", 6379},
                                              {"dashboard", 8265},
                                              {"serve", 8000}};
    const struct fq_value *ports = fq_value_path(
        fq_seq_at(fq_value_path(spec, "headGroupSpec.template.spec."
                                      "containers"),
                  0),
        "ports");
    size_t n = 0;
    bool metrics = false;
    for (size_t i = 0; i < fq_value_len(ports) && n + 1 < cap; i++) {
        const struct fq_value *p = fq_seq_at(ports, i);
        int64_t cp = fq_value_path_int(p, "containerPort", 0);
        const char *pn = fq_value_path_str(p, "name", NULL);
        if (cp <= 0)
            continue;
        if (pn && *pn)
            snprintf(out[n].name, sizeof(out[n].name), "%s", pn);
        else
            snprintf(out[n].name, sizeof(out[n].name), "%lld-port",
                     (long long)cp);
        bool dup = false;
        for (size_t j = 0; j < n && !dup; j++)
            dup = !strcmp(out[j].name, out[n].name);
        if (dup)
            continue;
        metrics = metrics || !strcmp(out[n].name, "metrics");
        out[n++].port = cp;
    }
    if (n == 0)
        for (size_t i = 0; i < sizeof(defaults) / sizeof(*defaults); i++)
            out[n++] = defaults[i];
    if (!metrics)
        out[n++] = (struct svcport){"metrics", 8080};
    qsort(out, n, sizeof(*out), cmp_svcport);
    return n;
}

/* The labels KubeRay's head service selects: the head pod's. */
static struct fq_value *head_selector(const char *cname)
{
    struct fq_value *sel = fq_value_map();
    fq_map_set(sel, FQ_LABEL_RAY_CLUSTER, fq_value_str(cname));
    fq_map_set(sel, FQ_LABEL_RAY_NODE_TYPE, fq_value_str("head"));
    fq_map_set(sel, "ray.io/identifier", fq_value_strf("%s-head", cname));
    fq_map_set(sel, "app.kubernetes.io/name", fq_value_str("kuberay"));
    fq_map_set(sel, FQ_LABEL_CREATED_BY, fq_value_str("kuberay-operator"));
    return sel;
}

/*
 * Makes Service `svc` (for the head of cluster c) unless it exists: owned
 * by `owner` (the RayCluster, or the RayJob that made it), labelled with
 * `labels` (taken), selecting the head pod, with KubeRay's ports.
 */
static void ensure_head_svc(struct rcrun *c, const char *svc,
                            const struct fq_value *owner,
                            struct fq_value *labels)
{
    struct fq_objstore *s = fq_engine_store(c->e);
    if (fq_objstore_get(s, FQ_KIND_SERVICE, c->ns, svc)) {
        fq_value_free(labels);
        return;
    }
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("v1"));
    fq_map_set(o, "kind", fq_value_str("Service"));
    struct fq_value *md = fq_map_ensure_map(o, "metadata");
    fq_map_set(md, "name", fq_value_str(svc));
    fq_map_set(md, "namespace", fq_value_str(c->ns));
    fq_map_set(md, "labels", labels);
    struct fq_value *refs = fq_value_seq();
    fq_seq_push(refs, fq_pods_owner_ref(owner));
    fq_map_set(md, "ownerReferences", refs);
    struct fq_value *spec = fq_map_ensure_map(o, "spec");
    const char *type =
        fq_value_path_str(c->spec, "headGroupSpec.serviceType", "ClusterIP");
    fq_map_set(spec, "type", fq_value_str(type));
    fq_map_set(spec, "selector", head_selector(c->name));
    struct svcport ports[40];
    size_t n = head_ports(c->spec, ports, sizeof(ports) / sizeof(*ports));
    struct fq_value *seq = fq_value_seq();
    for (size_t i = 0; i < n; i++) {
        struct fq_value *p = fq_value_map();
        fq_map_set(p, "name", fq_value_str(ports[i].name));
        fq_map_set(p, "port", fq_value_int(ports[i].port));
        fq_map_set(p, "appProtocol", fq_value_str("tcp"));
        fq_seq_push(seq, p);
    }
    fq_map_set(spec, "ports", seq);
    if (fq_service_defaults(o, s, NULL) < 0) {
        fq_value_free(o);
        return;
    }
    fq_pods_create(c->e, o, c->now, owner, "CreatedService");
}

/*
 * KubeRay's head services: `<cluster>-head-svc`, owned by the RayCluster;
 * and for a cluster a RayJob made, `<rayjob>-head-svc`, owned by the
 * RayJob, selecting the same head (the name the RayJob's dashboardURL and
 * `kubectl port-forward service/...` use).
 */
static void head_services(struct rcrun *c)
{
    char *svc = fq_xasprintf("%s-head-svc", c->name);
    struct fq_value *l = head_selector(c->name);
    ensure_head_svc(c, svc, c->rc, l);
    free(svc);
    const char *job = fq_pods_owner_name(c->rc, "RayJob");
    const struct fq_object *rj =
        job ?
            fq_objstore_get(fq_engine_store(c->e), FQ_KIND_RAYJOB, c->ns, job) :
            NULL;
    if (!rj)
        return;
    svc = fq_xasprintf("%s-head-svc", job);
    l = fq_value_map();
    fq_map_set(l, FQ_LABEL_RAY_ORIGIN_NAME, fq_value_str(job));
    fq_map_set(l, FQ_LABEL_RAY_ORIGIN_CRD, fq_value_str("RayJob"));
    fq_map_set(l, FQ_LABEL_RAY_NODE_TYPE, fq_value_str("head"));
    fq_map_set(l, "ray.io/identifier", fq_value_strf("%s-head", job));
    ensure_head_svc(c, svc, rj->obj, l);
    free(svc);
}

/* What the worker groups add up to. */
struct workers {
    int world;                /* hosts over all groups */
    int64_t min, max;         /* min/maxReplicas x hosts */
    int64_t ready, available; /* of the pods kept */
    bool all_up;              /* every pod up (and the head) */
};

/* One worker group: missing pods made (rank `offset` on), pods of
 * replicas above the desired count deleted, counts added to w. */
static void sync_group(struct rcrun *c, const struct fq_value *gs, size_t g,
                       int offset, int port, struct workers *w)
{
    const char *gname = fq_value_path_str(gs, "groupName", "workers");
    int64_t r = group_replicas(gs), hosts = group_hosts(gs);
    w->min += fq_value_path_int(gs, "minReplicas", 0) * hosts;
    w->max += fq_value_path_int(gs, "maxReplicas", INT32_MAX) * hosts;
    for (int64_t rep = 0; rep < r; rep++)
        for (int64_t h = 0; h < hosts; h++) {
            const struct rpod *have = NULL;
            for (size_t i = 0; i < c->np && !have; i++)
                if (c->pods[i].group && strcmp(c->pods[i].group, gname) == 0 &&
                    c->pods[i].replica == rep && c->pods[i].host == h)
                    have = &c->pods[i];
            if (!have) {
                create_worker(c->e, c->ns, c->rc, gs, g, rep, h,
                              offset + (int)(rep * hosts + h), w->world, port,
                              c->now);
                w->all_up = false;
                continue;
            }
            w->all_up = w->all_up && have->up;
        }
    for (size_t i = 0; i < c->np; i++) {
        struct rpod *p = &c->pods[i];
        if (!p->group || strcmp(p->group, gname) != 0)
            continue;
        if (p->replica >= r) { /* scale down: whole replicas go */
            delete_pod(c->e, c->ns, c->rc, p->name, "DeletedWorkerPod");
            p->terminal = true;
            p->ready = p->running = false;
            continue;
        }
        w->ready += p->ready;
        w->available += p->running;
    }
}

/* Every worker group in turn (world size and rank offsets over all of
 * them), then the pods of groups no longer in the spec deleted. */
static void sync_workers(struct rcrun *c, struct workers *w)
{
    const struct fq_value *groups = fq_map_get(c->spec, "workerGroupSpecs");
    for (size_t g = 0; g < fq_value_len(groups); g++) {
        const struct fq_value *gs = fq_seq_at(groups, g);
        w->world += (int)(group_replicas(gs) * group_hosts(gs));
    }
    int port = w->world > 0 ? cluster_port(c->e, c->ns, c->name) : 0;
    int offset = 0;
    for (size_t g = 0; g < fq_value_len(groups); g++) {
        const struct fq_value *gs = fq_seq_at(groups, g);
        sync_group(c, gs, g, offset, port, w);
        offset += (int)(group_replicas(gs) * group_hosts(gs));
    }
    for (size_t i = 0; i < c->np; i++) {
        if (!c->pods[i].group || c->pods[i].terminal)
            continue;
        bool known = false;
        for (size_t g = 0; g < fq_value_len(groups) && !known; g++)
            known = strcmp(fq_value_path_str(fq_seq_at(groups, g), "groupName",
                                             "workers"),
                           c->pods[i].group) == 0;
        if (!known)
            delete_pod(c->e, c->ns, c->rc, c->pods[i].name, "DeletedWorkerPod");
    }
}

/* HeadPodReady, and RayClusterProvisioned (state ready) the first time
 * every pod is up. */
static void provisioned(struct rcrun *c, const struct rpod *head, bool all_up)
{
    struct fq_value *st = c->st;
    if (head && head->up)
        fq_pods_cond_set(st, "HeadPodReady", "True", "HeadPodRunningAndReady",
                         NULL, c->now);
    else
        fq_pods_cond_set(st, "HeadPodReady", "False", "HeadPodNotFound", NULL,
                         c->now);
    if (all_up && !fq_pods_cond_true(st, "RayClusterProvisioned")) {
        char ts[40];
        fq_time_format(c->now, ts, sizeof(ts));
        fq_pods_cond_set(st, "RayClusterProvisioned", "True",
                         "AllPodRunningAndReadyFirstTime",
                         "All Ray Pods are ready for the first time", c->now);
        fq_map_set(st, "state", fq_value_str("ready"));
        fq_map_set(fq_map_ensure_map(st, "stateTransitionTimes"), "ready",
                   fq_value_str(ts));
        fq_engine_event(c->e, c->rc, "Normal", "RayClusterReady",
                        "All Ray pods of %s are running and ready", c->name);
    } else if (!fq_pods_cond(st, "RayClusterProvisioned")) {
        fq_pods_cond_set(st, "RayClusterProvisioned", "False",
                         "RayClusterPodsProvisioning",
                         "RayCluster Pods are being provisioned for first "
                         "time",
                         c->now);
    }
}

/* status.endpoints: the head container's named ports. */
static void endpoints(struct rcrun *c)
{
    struct fq_value *ep = fq_value_map();
    const struct fq_value *ports = fq_value_path(
        fq_seq_at(fq_value_path(c->spec, "headGroupSpec.template.spec."
                                         "containers"),
                  0),
        "ports");
    for (size_t i = 0; i < fq_value_len(ports); i++) {
        const struct fq_value *p = fq_seq_at(ports, i);
        const char *pn = fq_value_path_str(p, "name", NULL);
        int64_t cp = fq_value_path_int(p, "containerPort", 0);
        if (pn && cp > 0)
            fq_map_set(ep, pn, fq_value_strf("%lld", (long long)cp));
    }
    if (fq_value_len(ep))
        fq_map_set(c->st, "endpoints", ep);
    else
        fq_value_free(ep);
}

/*
 * One step of a RayCluster as KubeRay's controller takes it: suspended
 * (no pods), or the head and every worker group's pods made or deleted
 * to match the spec, then the status (replica counts, conditions, state,
 * endpoints) written once at the end if it changed.
 */
static void reconcile(struct fq_engine *e, const struct rcctl *ctl,
                      const char *ns, const char *name, int64_t now)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_RAYCLUSTER, ns, name);
    if (!o)
        return;
    struct rcrun c = {.e = e, .ns = ns, .name = name, .now = now};
    c.rc = fq_value_clone(o->obj);
    c.spec = fq_map_get(c.rc, "spec");
    c.st = fq_value_clone(fq_map_get(c.rc, "status"));
    if (!c.st || c.st->type != FQ_V_MAP) {
        fq_value_free(c.st);
        c.st = fq_value_map();
    }
    c.np = collect(e, ctl, ns, c.rc, &c.pods);
    head_services(&c);
    if (fq_value_path_bool(c.spec, "suspend", false)) {
        suspend_cluster(&c);
    } else {
        if (fq_pods_cond(c.st, "RayClusterSuspended"))
            fq_pods_cond_set(c.st, "RayClusterSuspended", "False", "Resumed",
                             NULL, now);
        if (strcmp(fq_value_path_str(c.st, "state", ""), "suspended") == 0)
            fq_map_del(c.st, "state");
        const struct rpod *head = ensure_head(&c);
        struct workers w = {.all_up = head && head->up};
        sync_workers(&c, &w);
        fq_map_set(c.st, "desiredWorkerReplicas", fq_value_int(w.world));
        fq_map_set(c.st, "minWorkerReplicas", fq_value_int(w.min));
        fq_map_set(c.st, "maxWorkerReplicas", fq_value_int(w.max));
        fq_map_set(c.st, "readyWorkerReplicas", fq_value_int(w.ready));
        fq_map_set(c.st, "availableWorkerReplicas", fq_value_int(w.available));
        provisioned(&c, head, w.all_up);
        endpoints(&c);
        fq_map_set(
            c.st, "observedGeneration",
            fq_value_int(fq_value_path_int(c.rc, FQ_META_GENERATION, 1)));
    }
    fq_pods_put_status(e, FQ_KIND_RAYCLUSTER, ns, name, c.st);
    rpods_free(c.pods, c.np);
    fq_value_free(c.rc);
}

/* --- controller ------------------------------------------------------- */

static void *rc_create(struct fq_engine *e)
{
    (void)e;
    struct rcctl *c = fq_xcalloc(1, sizeof(*c));
    fq_keyq_init(&c->q);
    c->own = fq_pods_owners_new();
    return c;
}

static void rc_destroy(void *self)
{
    struct rcctl *c = self;
    fq_keyq_release(&c->q);
    fq_pods_owners_free(c->own);
    free(c);
}

static void rc_on_change(void *self, struct fq_engine *e,
                         const struct fq_change *c)
{
    struct rcctl *rc = self;
    if (fq_engine_config(e)->no_pods)
        return;
    if (c->kind == FQ_KIND_RAYCLUSTER) {
        if (c->type == FQ_CHANGE_DELETED)
            return;
        fq_keyq_add2(&rc->q, c->ns, c->name);
    } else if (c->kind == FQ_KIND_POD && c->obj) {
        fq_pods_owners_note(rc->own, c);
        const char *owner = fq_pods_owner_name(c->obj, "RayCluster");
        if (!owner)
            return;
        fq_keyq_add2(&rc->q, c->ns, owner);
    } else {
        return;
    }
    fq_engine_kick(e, self);
}

static void rc_run(void *self, struct fq_engine *e, int64_t now)
{
    struct rcctl *rc = self;
    if (fq_engine_config(e)->no_pods) {
        rc->q.resync = false;
        return;
    }
    if (rc->q.resync) {
        rc->q.resync = false;
        const struct fq_object **objs = NULL;
        size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_RAYCLUSTER,
                                    NULL, &objs);
        for (size_t i = 0; i < n; i++)
            fq_keyq_add2(&rc->q, objs[i]->ns, objs[i]->name);
        free(objs);
    }
    const char *const *keys;
    size_t n = fq_keyq_take(&rc->q, &keys);
    for (size_t i = 0; i < n; i++) {
        char *key = fq_xstrdup(keys[i]);
        const char *ns, *name;
        fq_pods_key_split(key, &ns, &name);
        reconcile(e, rc, ns, name, now);
        free(key);
    }
    fq_keyq_clear(&rc->q);
}

static int64_t rc_next_wakeup(const void *self)
{
    const struct rcctl *rc = self;
    return rc->q.resync ? 0 : FQ_NEVER;
}

const struct fq_controller_ops fq_raycluster_controller = {
    .name = "raycluster",
    .watch = FQ_KIND_BIT(FQ_KIND_RAYCLUSTER) | FQ_KIND_BIT(FQ_KIND_POD),
    .create = rc_create,
    .destroy = rc_destroy,
    .on_change = rc_on_change,
    .run = rc_run,
    .next_wakeup = rc_next_wakeup,
};
