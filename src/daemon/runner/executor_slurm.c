/*
 * executor_slurm.c - the `slurm` executor: each bound gang is one Slurm job
 * pinned to exactly the nodes flexq's binder chose; each of its tasks is
 * one pod.
 *
 * flexq keeps admission and placement; Slurm only executes. A gang (the
 * pods of one flexq.dev/gang, or a lone pod) is collected until all
 * flexq.dev/gang-size pods are bound, then submitted once:
 *
 *   sbatch --parsable --no-requeue --export=ALL -J flexq/<ns>/<gang>
 *          --comment=flexq:uids=<pod uids> -p <partition>
 *          [--reservation=<the pool's>] -w <bound nodes> -N <n>
 *          --ntasks-per-node=1 -c <cpu> --mem=<MiB> [--gres=tpu:4]
 *   with a batch script `srun --kill-on-bad-exit=1 flexq-slurm task TABLE`
 *   (a gang of one pod: `flexq-slurm task TABLE` is the batch script: no
 *   srun step, whose creation is one more round trip to slurmctld)
 *
 * Every Slurm command runs in the helper scripts/flexq-slurm (or
 * $FLEXQ_SLURM_HELPER), started as a child with one JSON request on stdin
 * and a timeout (provider_exec.c's fq_provider_child_*), so that a slurmctld
 * that is down or slow (client commands then block for 10-20 s) never
 * blocks flexqd's loop. The helper's ops: submit, poll (squeue), cancel
 * (scancel, then squeue until the job is over: scancel's exit status says
 * nothing) and adopt (every job whose comment starts with flexq:).
 *
 * A task's start and end are events, not polls: an inotify watch on each
 * running pod's directory (notify_fd, watched by the loop) reads task.json
 * or status.json the moment the task renames it into place. squeue is
 * asked once a second only about jobs older than a second with a pod that
 * has not reported (what the files cannot say: a node lost, a cancel), and
 * every five seconds about finished ones (to forget them); the one second
 * tick re-reads the files of running gangs, for shared file systems whose
 * writes from other hosts inotify does not see (NFS).
 *
 * The task side (`flexq-slurm task`, under slurmstepd on the node) makes
 * the task its pod: the pod's env with the rendezvous variables rewritten
 * to the gang's real node addresses, its ConfigMap volumes, its log at
 * <data>/pods/<ns>/<pod>/log where `flexq logs` reads it, task.json when it
 * starts and status.json (phase, exitCode, reason) when it ends. The data
 * directory must be shared between flexqd and the nodes (docs/runtime.md).
 *
 * A gang, as this file tracks it:
 *
 *        all bound          submit answered        job over (squeue)
 *   WAIT ---------> SUBMIT ------------------> RUN -----------------> OVER
 *                     | sbatch failed: retried       | pods reported from
 *                     | for 60 s, then the pods      | status.json, else by
 *                     v Failed (SlurmSubmitFailed)   | the job's state
 *                    OVER                            | (NODE_FAIL: NodeLost)
 *
 * A pod the core deleted or ended (evicted, RayJob done) while its task
 * runs cancels the whole job (a gang lives and dies as one), confirmed by
 * the job's state; a gang is forgotten once its job is over and every pod
 * object is gone or final. A deleted pod's directory is removed once its
 * job is over (no task can write there any more); the gang's table and
 * Slurm's batch log live in its first pod's directory and go with it.
 * After a restart, directories of pods that no longer exist are swept.
 *
 * A task killed by a signal while its job still runs is reported only
 * once squeue gives the job's end state (or after KILLED_WAIT_MS): Slurm
 * kills a gang's surviving tasks when a node dies, and NODE_FAIL, not the
 * signal, is the reason (NodeLost, the workload evicted).
 *
 * Invariants:
 *   1. Nothing is submitted before adoption answered: after a restart,
 *      every live flexq job is matched to its pods by uid first, so no
 *      gang runs twice.
 *   2. At most one child per gang (submit or cancel) and one squeue poll.
 *   3. A Slurm error (controller down, timeout) is "unknown": it changes no
 *      pod; only a job state or a task's own status.json does.
 *   4. A pod is reported final once; its later changes are the core's.
 *
 * What it does not do: decide placement or nodes (the binder and the
 * provider: scripts/flexq-slurm-provider mirrors the partitions), run pods
 * whose nodes share a gang (several pods of one gang on one node run as
 * separate jobs), or stream logs from hosts without the shared directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/kinds.h"
#include "flexq/paths.h"
#include "log.h"
#include "providers/provider.h"
#include "runner/executor.h"
#include "runner/runner.h"

#define SUBMIT_RETRY_MS  5000
#define SUBMIT_GIVEUP_MS 60000
#define POLL_MS          1000
#define POLL_IDLE_MS     5000
#define KILLED_WAIT_MS   30000
#define SCAN_MS          10000
#define MAX_GANG         1024

enum gang_state {
    G_WAIT,
    G_SUBMIT,
    G_RUN,
    G_OVER
};

struct spod {
    char *name;
    char *uid;
    char *node;
    bool running; /* reported Running */
    bool final;   /* reported Succeeded / Failed (invariant 4) */
    bool ended;   /* the core deleted it or made it terminal */
    bool deleted;
    int wd;       /* inotify watch on its directory, or -1 */
    bool removed; /* its directory, once deleted and the job over */
    /* its task reported death by a signal while the job still ran: the
     * job's end state (NODE_FAIL?) decides the reason; since when */
    int64_t killed_ms;
};

struct sgang {
    char *ns, *id;
    size_t size; /* flexq.dev/gang-size */
    struct spod *pods;
    size_t npods, cap;
    enum gang_state st;
    char *jobid;
    char *jstate; /* last squeue state */
    bool cancel;  /* wanted */
    bool cancel_sent;
    struct fq_provider_child *child; /* submit or cancel */
    bool child_cancel;
    int64_t first_try, next_try;
    int64_t submitted_ms;
    int64_t launched_ms; /* the submit child started */
};

struct slurm {
    char *helper;
    char *python_path;
    int64_t timeout_ms;
    struct sgang *g;
    size_t ng, capg;
    struct fq_provider_child *poll;
    int64_t poll_started; /* a job submitted later is not in its answer */
    /* inotify on the pod directories of running tasks: a task's
     * task.json (started) or status.json (ended), renamed into place, is
     * read the moment it lands; -1 without inotify (the tick reads them) */
    int ifd;
    struct fq_provider_child *adopt;
    bool adopted;
    int64_t next_poll, next_scan, next_adopt;
};

/* --- pure helpers -------------------------------------------------------- */

const char *fq_executor_slurm_reason(const char *state)
{
    static const struct {
        const char *state, *reason;
    } map[] = {
        {"COMPLETED", "Error"}, /* ended without its task's status */
        {"FAILED", "Error"},
        {"NODE_FAIL", "NodeLost"},
        {"CANCELLED", "Killed"},
        {"PREEMPTED", "Preempted"},
        {"TIMEOUT", "DeadlineExceeded"},
        {"DEADLINE", "DeadlineExceeded"},
        {"OUT_OF_MEMORY", "OOMKilled"},
        {"BOOT_FAIL", "NodeLost"},
        {"REVOKED", "Killed"},
        {"SPECIAL_EXIT", "Error"},
        {"GONE", "Lost"}, /* no longer known to Slurm, no status */
    };

    if (!state)
        return NULL;
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strncmp(state, map[i].state, strlen(map[i].state)) &&
            (state[strlen(map[i].state)] == '\0' ||
             state[strlen(map[i].state)] == ' '))
            return map[i].reason;
    return NULL;
}

/* --- gangs ---------------------------------------------------------------- */

static void pod_release(struct spod *p)
{
    free(p->name);
    free(p->uid);
    free(p->node);
}

static void unwatch(struct slurm *s, struct spod *p)
{
    if (p->wd >= 0 && s->ifd >= 0)
        inotify_rm_watch(s->ifd, p->wd);
    p->wd = -1;
}

static void gang_release(struct slurm *s, struct sgang *g)
{
    for (size_t i = 0; i < g->npods; i++) {
        unwatch(s, &g->pods[i]);
        pod_release(&g->pods[i]);
    }
    free(g->pods);
    free(g->ns);
    free(g->id);
    free(g->jobid);
    free(g->jstate);
    fq_provider_child_free(g->child);
}

static struct sgang *find_gang(struct slurm *s, const char *ns, const char *id)
{
    for (size_t i = 0; i < s->ng; i++)
        if (!strcmp(s->g[i].ns, ns) && !strcmp(s->g[i].id, id))
            return &s->g[i];
    return NULL;
}

static struct sgang *gang_of_pod(struct slurm *s, const char *ns,
                                 const char *name, struct spod **pp)
{
    for (size_t i = 0; i < s->ng; i++) {
        if (strcmp(s->g[i].ns, ns))
            continue;
        for (size_t k = 0; k < s->g[i].npods; k++)
            if (!strcmp(s->g[i].pods[k].name, name)) {
                if (pp)
                    *pp = &s->g[i].pods[k];
                return &s->g[i];
            }
    }
    return NULL;
}

static const char *annotation(const struct fq_value *pod, const char *k)
{
    return fq_value_as_str(fq_map_get(fq_meta_annotations(pod), k));
}

static bool terminal(const struct fq_value *pod)
{
    const char *ph = fq_value_path_str(pod, FQ_POD_PHASE, "");
    return !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed");
}

static void report(struct fq_executor *x, const char *ns, struct spod *p,
                   const char *phase, int code, const char *reason,
                   const char *msg, int64_t now_ms)
{
    if (p->final || p->deleted)
        return;
    bool fin = strcmp(phase, "Running") != 0;
    if (!fin && p->running)
        return;
    if (fin && !p->running && code != 137 && !strcmp(phase, "Succeeded"))
        /* a task that ended between two polls ran all the same: say so
         * first, as a kubelet does (a RayCluster counts ready workers) */
        report(x, ns, p, "Running", 0, NULL, NULL, now_ms);
    struct fq_pod_report r = {.phase = phase,
                              .ready = !fin,
                              .exit_code = code,
                              .reason = reason,
                              .message = msg};
    struct fq_err err = {0};
    if (fq_engine_pod_update(x->engine, ns, p->name, &r, now_ms, &err) != 0 &&
        err.msg[0])
        fprintf(stderr, "flexqd: slurm executor: pod %s/%s: %s\n", ns, p->name,
                err.msg);
    if (fin) {
        p->final = true;
        unwatch(x->state, p);
    } else
        p->running = true;
    fq_log(FQ_LOG_INFO, "slurm pod", "pod=%s/%s phase=%s", ns, p->name, phase);
}

/* True if (kind, name) is an owner of pod, its owner, or theirs. */
static bool owned_by(const struct fq_objstore *st, const char *ns,
                     const struct fq_value *obj, const char *kind,
                     const char *name, int depth)
{
    const struct fq_value *ors = fq_meta_owners(obj);
    for (size_t i = 0; i < fq_value_len(ors); i++) {
        const struct fq_value *o = fq_seq_at(ors, i);
        const char *ok = fq_value_path_str(o, "kind", "");
        const char *on = fq_value_path_str(o, "name", "");
        if (!strcmp(ok, kind) && !strcmp(on, name))
            return true;
        enum fq_kind k = FQ_KIND_POD;
        if (!strcmp(ok, "RayCluster"))
            k = FQ_KIND_RAYCLUSTER;
        else if (!strcmp(ok, "Job"))
            k = FQ_KIND_JOB;
        else if (!strcmp(ok, "RayJob"))
            k = FQ_KIND_RAYJOB;
        const struct fq_object *up =
            k == FQ_KIND_POD ? NULL : fq_objstore_get(st, k, ns, on);
        if (up && depth < 4 && owned_by(st, ns, up->obj, kind, name, depth + 1))
            return true;
    }
    return false;
}

/*
 * A node died under pod `name`: its admitted Workload is evicted (the
 * Evicted condition, reason NodeLost), so that Kueue's controller releases
 * its quota and requeues it, as after a PodsReady recovery timeout. The
 * Workload is the one whose owner is the pod's Job / RayJob.
 */
static void evict_for_node(struct fq_executor *x, const char *ns,
                           const char *name, const char *msg, int64_t now_ms)
{
    struct fq_objstore *st = fq_engine_store(x->engine);
    const struct fq_object *pod = fq_objstore_get(st, FQ_KIND_POD, ns, name);
    if (!pod)
        return;
    const struct fq_object **wls = NULL;
    size_t n = fq_objstore_list(st, FQ_KIND_WORKLOAD, ns, &wls);
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *w = wls[i]->obj;
        const struct fq_value *o = fq_seq_at(fq_meta_owners(w), 0);
        if (!o || !fq_value_path(w, FQ_WL_STATUS_ADMISSION) ||
            !owned_by(st, ns, pod->obj, fq_value_path_str(o, "kind", ""),
                      fq_value_path_str(o, "name", ""), 0))
            continue;
        struct fq_value *e =
            fq_objstore_edit(st, FQ_KIND_WORKLOAD, ns, wls[i]->name);
        struct fq_value *conds =
            fq_map_get(fq_map_ensure_map(e, "status"), "conditions");
        if (!conds || conds->type != FQ_V_SEQ) {
            conds = fq_value_seq();
            fq_map_set(fq_map_ensure_map(e, "status"), "conditions", conds);
        }
        struct fq_value *c = NULL;
        for (size_t k = 0; k < fq_value_len(conds); k++)
            if (!strcmp(fq_value_path_str(fq_seq_at(conds, k), "type", ""),
                        "Evicted"))
                c = fq_seq_at(conds, k);
        if (c && !strcmp(fq_value_path_str(c, "status", ""), "True")) {
            fq_value_free(e); /* evicted already */
            break;
        }
        if (!c) {
            c = fq_value_map();
            fq_seq_push(conds, c);
        }
        time_t secs = (time_t)(now_ms / 1000);
        struct tm tm;
        gmtime_r(&secs, &tm);
        char ts[32];
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
        fq_map_set(c, "type", fq_value_str("Evicted"));
        fq_map_set(c, "status", fq_value_str("True"));
        fq_map_set(c, "reason", fq_value_str("NodeLost"));
        fq_map_set(c, "message", fq_value_str(msg));
        fq_map_set(c, "lastTransitionTime", fq_value_str(ts));
        fq_engine_event(x->engine, e, "Warning", "NodeLost", "%s", msg);
        fq_objstore_update(st, e, true, NULL, NULL, NULL);
        fprintf(stderr, "flexqd: slurm executor: workload %s/%s evicted: %s\n",
                ns, wls[i]->name, msg);
        break;
    }
    free(wls);
}

/* Worker-id order: TPU_WORKER_ID, else RANK, else the name. */
static long worker_id(const struct fq_value *pod)
{
    const struct fq_value *env =
        fq_map_get(fq_seq_at(fq_value_path(pod, FQ_POD_CONTAINERS), 0), "env");
    long rank = -1;
    for (size_t i = 0; i < fq_value_len(env); i++) {
        const struct fq_value *e = fq_seq_at(env, i);
        const char *k = fq_value_path_str(e, "name", "");
        const char *v = fq_value_path_str(e, "value", NULL);
        if (!v)
            continue;
        if (!strcmp(k, "TPU_WORKER_ID"))
            return strtol(v, NULL, 10);
        if (!strcmp(k, "RANK"))
            rank = strtol(v, NULL, 10);
    }
    return rank;
}

/* Adds bound pod `pod` to its gang (made on first sight). */
static struct sgang *add_pod(struct slurm *s, const char *ns,
                             const struct fq_value *pod)
{
    const char *name = fq_meta_name(pod);
    const char *uid = fq_meta_uid(pod);
    const char *node = fq_value_path_str(pod, FQ_POD_NODE_NAME, "");
    struct spod *have = NULL;
    struct sgang *g = gang_of_pod(s, ns, name, &have);
    if (g && have && !strcmp(have->uid, uid))
        return g;
    if (g && have && g->st == G_WAIT) { /* a new pod by the same name */
        pod_release(have);
        *have = g->pods[--g->npods];
    }
    const char *gid = annotation(pod, "flexq.dev/gang");
    const char *gs = annotation(pod, "flexq.dev/gang-size");
    long size = gs ? strtol(gs, NULL, 10) : 1;
    if (!gid || !*gid) {
        gid = name;
        size = 1;
    }
    if (size < 1 || size > MAX_GANG)
        size = 1;
    g = find_gang(s, ns, gid);
    if (g && g->st != G_WAIT) {
        /* the same gang id again after the old job: a new attempt (the
         * workload was requeued and its pods made anew) */
        bool known = false;
        for (size_t i = 0; i < g->npods; i++)
            known |= !strcmp(g->pods[i].uid, uid);
        if (known)
            return g;
        return NULL; /* wait until the old gang is forgotten */
    }
    if (!g) {
        FQ_GROW(s->g, s->capg, s->ng + 1);
        g = &s->g[s->ng++];
        memset(g, 0, sizeof(*g));
        g->ns = fq_xstrdup(ns);
        g->id = fq_xstrdup(gid);
        g->st = G_WAIT;
    }
    g->size = (size_t)size;
    FQ_GROW(g->pods, g->cap, g->npods + 1);
    g->pods[g->npods++] = (struct spod){.name = fq_xstrdup(name),
                                        .uid = fq_xstrdup(uid),
                                        .node = fq_xstrdup(node),
                                        .wd = -1};
    return g;
}

/* --- requests to the helper ---------------------------------------------- */

static struct fq_value *configmap_data(struct fq_executor *x, const char *ns,
                                       const struct fq_value *pod)
{
    struct fq_value *out = fq_value_map();
    const struct fq_value *vols = fq_value_path(pod, "spec.volumes");
    for (size_t i = 0; i < fq_value_len(vols); i++) {
        const char *cm = fq_value_path_str(fq_seq_at(vols, i),
                                           FQ_VOLUME_CONFIGMAP_NAME, NULL);
        if (!cm || fq_map_get(out, cm))
            continue;
        const struct fq_object *o = fq_objstore_get(fq_engine_store(x->engine),
                                                    FQ_KIND_CONFIGMAP, ns, cm);
        if (o)
            fq_map_set(out, cm,
                       fq_value_clone(fq_map_get(o->obj, "data") ?
                                          fq_map_get(o->obj, "data") :
                                          fq_value_path(o->obj, "data")));
    }
    return out;
}

static int start_child(struct slurm *s, struct fq_value *req,
                       struct fq_provider_child **out, struct fq_err *err)
{
    int rc = fq_provider_child_start(s->helper, req, s->timeout_ms, out, err);
    fq_value_free(req);
    return rc;
}

static int cmp_wid(const void *a, const void *b)
{
    const struct fq_value *pa = *(const struct fq_value *const *)a;
    const struct fq_value *pb = *(const struct fq_value *const *)b;
    long wa = worker_id(pa), wb = worker_id(pb);
    if (wa != wb)
        return wa < wb ? -1 : 1;
    return strcmp(fq_meta_name(pa), fq_meta_name(pb));
}

static struct fq_value *submit_request(struct fq_executor *x,
                                       const struct fq_gang *gg, bool retry)
{
    struct slurm *s = x->state;
    struct fq_value *req = fq_value_map();
    fq_map_set(req, "op", fq_value_str("submit"));
    fq_map_set(req, "namespace", fq_value_str(gg->ns));
    fq_map_set(req, "gang", fq_value_str(gg->id));
    fq_map_set(req, "dataDir", fq_value_str(x->data_dir));
    fq_map_set(req, "pythonPath", fq_value_str(s->python_path));
    fq_map_set(req, "retry", fq_value_bool(retry));
    struct fq_value *pods = fq_value_seq();
    struct fq_value *cms = fq_value_map();
    struct fq_value *nodes = fq_value_map();
    for (size_t i = 0; i < gg->npods; i++) {
        const struct fq_value *p = gg->pods[i];
        fq_seq_push(pods, fq_value_clone(p));
        struct fq_value *d = configmap_data(x, gg->ns, p);
        for (size_t k = 0; k < fq_value_len(d); k++)
            fq_map_set(cms, d->u.map.items[k].key,
                       fq_value_clone(d->u.map.items[k].val));
        fq_value_free(d);
        const char *from = annotation(p, "flexq.dev/volumes-from");
        if (from && *from) {
            const struct fq_object *o = fq_objstore_get(
                fq_engine_store(x->engine), FQ_KIND_POD, gg->ns, from);
            if (o) {
                struct fq_value *od = configmap_data(x, gg->ns, o->obj);
                for (size_t k = 0; k < fq_value_len(od); k++)
                    fq_map_set(cms, od->u.map.items[k].key,
                               fq_value_clone(od->u.map.items[k].val));
                fq_value_free(od);
                fq_map_set(req, "volumesFrom", fq_value_clone(o->obj));
            }
        }
        /* the Node object's labels say which partition / reservation, its
         * addresses (Slurm's NodeAddr, from the provider) where the gang
         * meets: no scontrol call on the way to sbatch */
        const char *nn = fq_value_path_str(p, FQ_POD_NODE_NAME, "");
        const struct fq_object *no =
            fq_objstore_get(fq_engine_store(x->engine), FQ_KIND_NODE, "", nn);
        if (no && !fq_map_get(nodes, nn)) {
            struct fq_value *md =
                fq_value_clone(fq_value_path(no->obj, "metadata"));
            const struct fq_value *ad =
                fq_value_path(no->obj, "status.addresses");
            if (md && md->type == FQ_V_MAP && ad)
                fq_map_set(md, "addresses", fq_value_clone(ad));
            fq_map_set(nodes, nn, md ? md : fq_value_map());
        }
    }
    fq_map_set(req, "pods", pods);
    fq_map_set(req, "configMaps", cms);
    fq_map_set(req, "nodes", nodes);
    return req;
}

/* Launches gang g (all pods bound): one submit child. */
static void launch_gang(struct fq_executor *x, struct sgang *g, int64_t now_ms)
{
    const struct fq_objstore *st = fq_engine_store(x->engine);
    const struct fq_value **pods = fq_xcalloc(g->npods, sizeof(*pods));
    size_t n = 0;
    for (size_t i = 0; i < g->npods; i++) {
        const struct fq_object *o =
            fq_objstore_get(st, FQ_KIND_POD, g->ns, g->pods[i].name);
        if (o)
            pods[n++] = o->obj;
    }
    qsort(pods, n, sizeof(*pods), cmp_wid);
    struct fq_gang gg = {.ns = g->ns, .id = g->id, .pods = pods, .npods = n};
    struct fq_err err = {0};
    int rc = x->ops->launch(x, &gg, now_ms, &err);
    free(pods);
    if (rc != 0)
        fprintf(stderr, "flexqd: slurm executor: gang %s/%s: %s\n", g->ns,
                g->id, err.msg);
}

static int slurm_launch(struct fq_executor *x, const struct fq_gang *gg,
                        int64_t now_ms, struct fq_err *err)
{
    struct slurm *s = x->state;
    struct sgang *g = find_gang(s, gg->ns, gg->id);
    if (!g || g->child)
        return 0;
    if (!g->first_try)
        g->first_try = now_ms;
    struct fq_value *req = submit_request(x, gg, g->next_try > 0);
    g->st = G_SUBMIT;
    g->child_cancel = false;
    g->launched_ms = now_ms;
    int rc = start_child(s, req, &g->child, err);
    g->next_try = now_ms + SUBMIT_RETRY_MS;
    return rc;
}

static int slurm_cancel(struct fq_executor *x, const char *ns, const char *pod,
                        int64_t now_ms)
{
    (void)now_ms;
    struct sgang *g = gang_of_pod(x->state, ns, pod, NULL);
    if (g && g->st != G_OVER)
        g->cancel = true;
    return 0;
}

/* --- answers --------------------------------------------------------------- */

static char *read_small(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *buf = fq_xmalloc(65536);
    size_t n = fread(buf, 1, 65535, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The task's own file (task.json / status.json) if it is this pod's. */
static struct fq_value *pod_file(struct fq_executor *x, const char *ns,
                                 const struct spod *p, const char *file)
{
    char *dir = fq_runner_pod_dir(x->data_dir, ns, p->name);
    char *path = fq_xasprintf("%s/%s", dir, file);
    char *text = read_small(path);
    free(dir);
    free(path);
    if (!text)
        return NULL;
    struct fq_value *v = NULL;
    if (fq_json_parse(text, strlen(text), file, NULL, &v, NULL) != 0)
        v = NULL;
    free(text);
    const char *uid = fq_value_path_str(v, "uid", "");
    if (v && *uid && strcmp(uid, p->uid)) {
        fq_value_free(v);
        return NULL; /* an older pod of the same name */
    }
    return v;
}

/* Reads the gang's task files; with `over` (the job ended in state
 * jstate) a pod without a status fails by the job's state. */
static bool node_death(const char *state)
{
    return state && (!strcmp(state, "NODE_FAIL") || !strcmp(state, "FAILED") ||
                     !strcmp(state, "BOOT_FAIL"));
}

static void reconcile(struct fq_executor *x, struct sgang *g, bool over,
                      int64_t now_ms)
{
    /* The task writes its status whatever its process does, and srun stops
     * a gang's tasks with a signal the task forwards: a task that left
     * none died with its node (slurmd and steps gone). Slurm says
     * NODE_FAIL when it noticed first, FAILED when srun did. Then the
     * whole gang failed for the node, and its Workload is evicted (Kueue
     * requeues it) before any pod is reported. */
    bool lost = false;
    const char *lost_node = "";
    for (size_t i = 0; over && node_death(g->jstate) && i < g->npods; i++) {
        struct spod *p = &g->pods[i];
        if (p->final || p->deleted || p->ended)
            continue;
        struct fq_value *stv = pod_file(x, g->ns, p, "status.json");
        if (!stv) {
            lost = true;
            lost_node = p->node;
        }
        fq_value_free(stv);
    }
    /* Slurm itself says a node failed under the job: lost, even when the
     * dead node's task had left a status (it cannot have ended well) */
    bool nodefail =
        over && g->jstate &&
        (!strcmp(g->jstate, "NODE_FAIL") || !strcmp(g->jstate, "BOOT_FAIL"));
    for (size_t i = 0; nodefail && !lost && i < g->npods; i++)
        if (!g->pods[i].final && !g->pods[i].deleted && !g->pods[i].ended)
            lost = true;
    if (lost) {
        char msg[256];
        snprintf(msg, sizeof(msg), "Slurm job %s: node %s was lost (%s)",
                 g->jobid ? g->jobid : "?", lost_node, g->jstate);
        for (size_t i = 0; i < g->npods; i++)
            if (!g->pods[i].final && !g->pods[i].deleted) {
                evict_for_node(x, g->ns, g->pods[i].name, msg, now_ms);
                break;
            }
    }
    for (size_t i = 0; i < g->npods; i++) {
        struct spod *p = &g->pods[i];
        if (p->final || p->deleted)
            continue;
        struct fq_value *stv = pod_file(x, g->ns, p, "status.json");
        if (stv) {
            const char *ph = fq_value_path_str(stv, "phase", "Failed");
            int code = (int)fq_value_path_int(stv, "exitCode", 1);
            const char *reason = fq_value_path_str(stv, "reason", "");
            const char *msg = fq_value_path_str(stv, "message", "");
            bool ok = !strcmp(ph, "Succeeded");
            /* A task killed by a signal while its job still runs was most
             * likely stopped by Slurm for the job's sake (a node died, the
             * job was cancelled, a peer failed): its reason is the job's
             * end state, which squeue tells within a second or two. Wait
             * for it, but not forever (slurmctld may be away). */
            if (!ok && code >= 128 && !over && g->st == G_RUN) {
                if (!p->killed_ms)
                    p->killed_ms = now_ms;
                if (now_ms - p->killed_ms < KILLED_WAIT_MS) {
                    fq_value_free(stv);
                    continue;
                }
            }
            if (!ok && (lost || (g->jstate && !strcmp(g->jstate, "NODE_FAIL"))))
                reason = "NodeLost"; /* killed because a peer node died */
            report(x, g->ns, p, ok ? "Succeeded" : "Failed", code,
                   *reason ? reason : NULL, *msg ? msg : NULL, now_ms);
            fq_value_free(stv);
            continue;
        }
        if (over) {
            if (p->ended)
                continue; /* the core already ended it; we cancelled */
            const char *reason =
                lost ? "NodeLost" : fq_executor_slurm_reason(g->jstate);
            char msg[256];
            snprintf(msg, sizeof(msg), "Slurm job %s ended %s on node %s",
                     g->jobid ? g->jobid : "?", g->jstate ? g->jstate : "?",
                     p->node);
            report(x, g->ns, p, "Failed", 137, reason ? reason : "Error", msg,
                   now_ms);
            continue;
        }
        struct fq_value *tv = pod_file(x, g->ns, p, "task.json");
        if (tv) {
            report(x, g->ns, p, "Running", 0, NULL, NULL, now_ms);
            fq_value_free(tv);
        }
    }
}

static double num(const struct fq_value *m, const char *k)
{
    const struct fq_value *n = fq_map_get(m, k);
    return n && n->type == FQ_V_NUM ? n->u.num.d : 0;
}

/* g's job runs: watch its pods' directories for task.json and
 * status.json, then read what may have landed before the watches. */
static void watch_gang(struct fq_executor *x, struct sgang *g, int64_t now_ms)
{
    struct slurm *s = x->state;
    for (size_t i = 0; s->ifd >= 0 && i < g->npods; i++) {
        struct spod *p = &g->pods[i];
        if (p->final || p->deleted || p->wd >= 0)
            continue;
        char *dir = fq_runner_pod_dir(x->data_dir, g->ns, p->name);
        p->wd = inotify_add_watch(s->ifd, dir, IN_MOVED_TO | IN_CLOSE_WRITE);
        free(dir);
    }
    reconcile(x, g, false, now_ms);
}

static void submit_answer(struct fq_executor *x, struct sgang *g,
                          struct fq_value *resp, int rc,
                          const struct fq_err *err, int64_t now_ms)
{
    const char *id = fq_value_as_str(fq_map_get(resp, "jobid"));
    if (rc == 0 && id && *id) {
        free(g->jobid);
        g->jobid = fq_xstrdup(id);
        g->st = G_RUN;
        g->submitted_ms = now_ms;
        /* where the submit's time went: the helper's start, sbatch's
         * start and end (wall clock, s), as bench/slurm_executor reads */
        const struct fq_value *t = fq_map_get(resp, "timing");
        fq_log(FQ_LOG_INFO, "slurm gang submitted",
               "gang=%s/%s job=%s launch_ms=%lld helper_start=%.3f "
               "sbatch_start=%.3f sbatch_end=%.3f",
               g->ns, g->id, id, (long long)g->launched_ms, num(t, "start"),
               num(t, "sbatch"), num(t, "done"));
        watch_gang(x, g, now_ms);
        return;
    }
    const char *msg = rc ? err->msg : "helper answered no job id";
    fprintf(stderr, "flexqd: slurm executor: submit %s/%s: %s\n", g->ns, g->id,
            msg);
    if (now_ms - g->first_try < SUBMIT_GIVEUP_MS && !g->cancel) {
        g->st = G_WAIT; /* retried from poll */
        return;
    }
    g->st = G_OVER;
    for (size_t i = 0; i < g->npods; i++)
        report(x, g->ns, &g->pods[i], "Failed", 1, "SlurmSubmitFailed", msg,
               now_ms);
}

static void cancel_answer(struct sgang *g, struct fq_value *resp, int rc)
{
    const char *state = fq_value_as_str(fq_map_get(resp, "state"));
    if (rc == 0 && state) {
        free(g->jstate);
        g->jstate = fq_xstrdup(state);
        if (fq_executor_slurm_reason(state) || !strcmp(state, "GONE")) {
            g->st = G_OVER;
            fprintf(stderr,
                    "flexqd: slurm executor: job %s cancelled, now %s\n",
                    g->jobid, state);
        }
    }
    g->cancel_sent = g->st == G_OVER;
}

static void poll_answer(struct fq_executor *x, struct fq_value *resp,
                        int64_t now_ms)
{
    struct slurm *s = x->state;
    const struct fq_value *jobs = fq_map_get(resp, "jobs");
    if (!jobs || jobs->type != FQ_V_MAP)
        return;
    for (size_t i = 0; i < s->ng; i++) {
        struct sgang *g = &s->g[i];
        if (g->st != G_RUN || !g->jobid || g->submitted_ms >= s->poll_started)
            continue;
        const struct fq_value *j = fq_map_get(jobs, g->jobid);
        const char *state = j ? fq_value_path_str(j, "state", "") : "GONE";
        free(g->jstate);
        g->jstate = fq_xstrdup(state);
        bool over = fq_executor_slurm_reason(state) != NULL;
        reconcile(x, g, over, now_ms);
        if (over)
            g->st = G_OVER;
    }
}

static void adopt_answer(struct fq_executor *x, struct fq_value *resp,
                         int64_t now_ms)
{
    struct slurm *s = x->state;
    const struct fq_objstore *st = fq_engine_store(x->engine);
    const struct fq_value *jobs = fq_map_get(resp, "jobs");
    size_t adopted = 0;
    for (size_t i = 0; i < fq_value_len(jobs); i++) {
        const struct fq_value *j = fq_seq_at(jobs, i);
        const char *id = fq_value_path_str(j, "jobid", NULL);
        const char *state = fq_value_path_str(j, "state", "");
        const struct fq_value *uids = fq_map_get(j, "uids");
        if (!id || fq_executor_slurm_reason(state))
            continue; /* over: status files tell the rest (scan) */
        const struct fq_object **pods = NULL;
        size_t np = fq_objstore_list(st, FQ_KIND_POD, NULL, &pods);
        struct sgang *g = NULL;
        for (size_t k = 0; k < np; k++) {
            const char *uid = fq_meta_uid(pods[k]->obj);
            bool match = false;
            for (size_t u = 0; u < fq_value_len(uids); u++)
                match |= !strcmp(fq_value_as_str(fq_seq_at(uids, u)) ?
                                     fq_value_as_str(fq_seq_at(uids, u)) :
                                     "",
                                 uid);
            if (!match)
                continue;
            struct sgang *pg = add_pod(s, pods[k]->ns, pods[k]->obj);
            if (pg) {
                g = pg; /* G_RUN once all its pods are in (below) */
                free(g->jobid);
                g->jobid = fq_xstrdup(id);
                struct spod *p = NULL;
                gang_of_pod(s, pods[k]->ns, pods[k]->name, &p);
                if (p &&
                    !strcmp(fq_value_path_str(pods[k]->obj, FQ_POD_PHASE, ""),
                            "Running"))
                    p->running = true;
            }
        }
        free(pods);
        if (g) {
            g->st = G_RUN;
            watch_gang(x, g, now_ms);
            adopted++;
        } else /* no pod of ours any more: nobody wants it */
            fprintf(stderr, "flexqd: slurm executor: job %s has no pods here\n",
                    id);
    }
    if (adopted)
        fprintf(stderr, "flexqd: slurm executor: adopted %zu job(s)\n",
                adopted);
}

/* --- the loop's side ------------------------------------------------------- */

static bool in_gang(void *ctx, const char *ns, const char *name)
{
    return gang_of_pod(ctx, ns, name, NULL) != NULL;
}

/* Every bound, non-terminal pod the store holds (start-up, safety net). */
static void scan(struct fq_executor *x, int64_t now_ms)
{
    struct slurm *s = x->state;
    const struct fq_object **pods = NULL;
    size_t n =
        fq_objstore_list(fq_engine_store(x->engine), FQ_KIND_POD, NULL, &pods);
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *o = pods[i]->obj;
        if (!*fq_value_path_str(o, FQ_POD_NODE_NAME, "") || terminal(o) ||
            fq_value_path(o, FQ_META_DELETED))
            continue;
        const char *name = pods[i]->name;
        if (gang_of_pod(s, pods[i]->ns, name, NULL))
            continue;
        const char *ph = fq_value_path_str(o, FQ_POD_PHASE, "");
        struct spod one = {
            .name = (char *)name,
            .uid = (char *)fq_meta_uid(o),
            .node = (char *)fq_value_path_str(o, FQ_POD_NODE_NAME, ""),
            .running = !strcmp(ph, "Running"),
            .wd = -1};
        struct fq_value *tj = pod_file(x, pods[i]->ns, &one, "task.json");
        if (one.running || tj) {
            /* it ran before a restart and no live job has it (adoption
             * came first): its job ended while flexqd was away, and its
             * own files say how; never started again (invariant 1) */
            struct sgang tmp = {.ns = (char *)pods[i]->ns,
                                .id = (char *)name,
                                .pods = &one,
                                .npods = 1,
                                .st = G_RUN,
                                .jstate = (char *)"GONE"};
            reconcile(x, &tmp, true, now_ms);
            fq_value_free(tj);
            continue;
        }
        add_pod(s, pods[i]->ns, o);
    }
    free(pods);
}

static void slurm_on_change(struct fq_executor *x, const struct fq_change *c,
                            int64_t now_ms)
{
    struct slurm *s = x->state;
    if (c->kind != FQ_KIND_POD)
        return;
    struct spod *p = NULL;
    struct sgang *g = gang_of_pod(s, c->ns, c->name, &p);
    bool gone = c->type == FQ_CHANGE_DELETED || !c->obj ||
                fq_value_path(c->obj, FQ_META_DELETED) || terminal(c->obj);
    if (g && p && c->obj && c->type != FQ_CHANGE_DELETED &&
        strcmp(fq_meta_uid(c->obj), p->uid))
        gone = true; /* an older pod of the same name */
    if (gone) {
        if (!g) {
            /* no task of ours can still write there */
            if (c->type == FQ_CHANGE_DELETED)
                fq_runner_remove_pod_dir(x->data_dir, c->ns, c->name);
            return;
        }
        if (c->type == FQ_CHANGE_DELETED) {
            p->deleted = true;
            unwatch(s, p);
            /* now if its job is over or was never submitted, else once
             * it is (forget_done): the task may still write its files */
            if (g->st == G_OVER || (g->st == G_WAIT && !g->child)) {
                fq_runner_remove_pod_dir(x->data_dir, c->ns, c->name);
                p->removed = true;
            }
        }
        if (!p->final) {
            p->ended = true;
            p->final = true;
            if (g->st != G_OVER)
                x->ops->cancel(x, c->ns, c->name, now_ms);
        }
        return;
    }
    if (!*fq_value_path_str(c->obj, FQ_POD_NODE_NAME, ""))
        return;
    g = add_pod(s, c->ns, c->obj);
    /* the last pod of a gang bound: submit now, not at the next tick */
    if (g && s->adopted && g->st == G_WAIT && !g->child &&
        g->npods >= g->size && now_ms >= g->next_try)
        launch_gang(x, g, now_ms);
}

/* The directories of g's deleted pods: its job is over. */
static void remove_deleted(struct fq_executor *x, struct sgang *g)
{
    for (size_t k = 0; k < g->npods; k++)
        if (g->pods[k].deleted && !g->pods[k].removed) {
            fq_runner_remove_pod_dir(x->data_dir, g->ns, g->pods[k].name);
            g->pods[k].removed = true;
        }
}

static void forget_done(struct fq_executor *x)
{
    struct slurm *s = x->state;
    for (size_t i = 0; i < s->ng;) {
        struct sgang *g = &s->g[i];
        bool all = true;
        for (size_t k = 0; k < g->npods; k++)
            all &= g->pods[k].final || g->pods[k].deleted;
        if (g->st == G_OVER && !g->child)
            remove_deleted(x, g);
        if (g->st == G_OVER && !g->child && all) {
            gang_release(s, g);
            s->g[i] = s->g[--s->ng];
            continue;
        }
        if (g->st == G_WAIT && g->npods > 0) {
            bool dead = true;
            for (size_t k = 0; k < g->npods; k++)
                dead &= g->pods[k].deleted || g->pods[k].ended;
            if (dead) {
                remove_deleted(x, g);
                gang_release(s, g);
                s->g[i] = s->g[--s->ng];
                continue;
            }
        }
        i++;
    }
}

static void slurm_poll(struct fq_executor *x, int64_t now_ms)
{
    struct slurm *s = x->state;
    struct fq_value *resp = NULL;
    int rc = 0;
    struct fq_err err = {0};

    /* 1. adoption first (invariant 1) */
    if (!s->adopted) {
        if (s->adopt) {
            if (!fq_provider_child_poll(s->adopt, 0, &resp, &rc, &err))
                return;
            fq_provider_child_free(s->adopt);
            s->adopt = NULL;
            if (rc == 0) {
                adopt_answer(x, resp, now_ms);
                s->adopted = true;
                scan(x, now_ms);
                /* directories of pods deleted while flexqd was away (no
                 * live job writes there: adoption answered) */
                fq_runner_sweep_pod_dirs(
                    x->data_dir, fq_engine_store(x->engine), in_gang, s);
            } else {
                fprintf(stderr, "flexqd: slurm executor: adopt: %s\n", err.msg);
                s->next_adopt = now_ms + SUBMIT_RETRY_MS;
            }
            fq_value_free(resp);
            resp = NULL;
        } else if (now_ms >= s->next_adopt) {
            struct fq_value *req = fq_value_map();
            fq_map_set(req, "op", fq_value_str("adopt"));
            if (start_child(s, req, &s->adopt, &err) != 0) {
                fprintf(stderr, "flexqd: slurm executor: adopt: %s\n", err.msg);
                s->next_adopt = now_ms + SUBMIT_RETRY_MS;
            }
            return;
        }
        if (!s->adopted)
            return;
    }

    /* 2. gangs' children */
    for (size_t i = 0; i < s->ng; i++) {
        struct sgang *g = &s->g[i];
        if (!g->child)
            continue;
        if (!fq_provider_child_poll(g->child, 0, &resp, &rc, &err))
            continue;
        fq_provider_child_free(g->child);
        g->child = NULL;
        if (g->child_cancel)
            cancel_answer(g, resp, rc);
        else
            submit_answer(x, g, resp, rc, &err, now_ms);
        fq_value_free(resp);
        resp = NULL;
        memset(&err, 0, sizeof(err));
    }
    if (s->poll && fq_provider_child_poll(s->poll, 0, &resp, &rc, &err)) {
        fq_provider_child_free(s->poll);
        s->poll = NULL;
        if (rc == 0)
            poll_answer(x, resp, now_ms);
        else /* invariant 3: unknown, try again */
            fprintf(stderr, "flexqd: slurm executor: squeue: %s\n", err.msg);
        fq_value_free(resp);
        resp = NULL;
    }

    if (now_ms >= s->next_scan) {
        scan(x, now_ms);
        s->next_scan = now_ms + SCAN_MS;
    }

    /* 3. launch complete gangs, cancel, read task files */
    bool live = false;
    for (size_t i = 0; i < s->ng; i++) {
        struct sgang *g = &s->g[i];
        if (g->st == G_WAIT && !g->child && g->npods >= g->size &&
            now_ms >= g->next_try) {
            bool dead = false;
            for (size_t k = 0; k < g->npods; k++)
                dead |= g->pods[k].ended || g->pods[k].deleted;
            if (!dead)
                launch_gang(x, g, now_ms);
        }
        if (g->cancel && g->st == G_RUN && !g->child && g->jobid) {
            struct fq_value *req = fq_value_map();
            fq_map_set(req, "op", fq_value_str("cancel"));
            fq_map_set(req, "jobid", fq_value_str(g->jobid));
            g->child_cancel = true;
            g->cancel_sent = true;
            if (start_child(s, req, &g->child, &err) != 0)
                fprintf(stderr, "flexqd: slurm executor: cancel: %s\n",
                        err.msg);
        }
        if (g->st == G_RUN) {
            /* the safety net for a shared file system whose writes from
             * other hosts inotify does not see */
            reconcile(x, g, false, now_ms);
            /* squeue only tells what the tasks' files do not: a job that
             * ended without them (node lost, cancelled). A task that
             * ends within POLL_MS costs no squeue; a gang whose pods all
             * reported needs its end only to be forgotten. */
            bool open = false;
            for (size_t k = 0; k < g->npods; k++)
                open |= !g->pods[k].final && !g->pods[k].deleted;
            if (now_ms - g->submitted_ms >= POLL_MS &&
                (open || now_ms - g->submitted_ms >= POLL_IDLE_MS))
                live = true;
        }
    }
    if (live && !s->poll && now_ms >= s->next_poll) {
        struct fq_value *req = fq_value_map();
        fq_map_set(req, "op", fq_value_str("poll"));
        struct fq_value *ids = fq_value_seq();
        for (size_t i = 0; i < s->ng; i++)
            if (s->g[i].st == G_RUN && s->g[i].jobid)
                fq_seq_push(ids, fq_value_str(s->g[i].jobid));
        fq_map_set(req, "jobs", ids);
        if (start_child(s, req, &s->poll, &err) != 0)
            fprintf(stderr, "flexqd: slurm executor: squeue: %s\n", err.msg);
        s->poll_started = now_ms;
        s->next_poll = now_ms + POLL_MS;
    }
    forget_done(x);
}

/* A task wrote task.json or status.json: read its gang's files now. */
static void slurm_on_notify(struct fq_executor *x, int64_t now_ms)
{
    struct slurm *s = x->state;
    _Alignas(struct inotify_event) char buf[8192];
    for (;;) {
        ssize_t n = read(s->ifd, buf, sizeof(buf));
        if (n <= 0)
            break;
        for (char *q = buf; q < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)q;
            q += sizeof(*ev) + ev->len;
            if (ev->mask & (IN_IGNORED | IN_Q_OVERFLOW)) {
                if (ev->mask & IN_Q_OVERFLOW) /* lost some: read all */
                    for (size_t i = 0; i < s->ng; i++)
                        if (s->g[i].st == G_RUN)
                            reconcile(x, &s->g[i], false, now_ms);
                continue;
            }
            if (!ev->len || (strcmp(ev->name, "task.json") &&
                             strcmp(ev->name, "status.json")))
                continue;
            for (size_t i = 0; i < s->ng; i++) {
                struct sgang *g = &s->g[i];
                bool mine = false;
                for (size_t k = 0; k < g->npods; k++)
                    mine |= g->pods[k].wd == ev->wd;
                if (mine && g->st == G_RUN)
                    reconcile(x, g, false, now_ms);
            }
        }
    }
}

/* --- life cycle -------------------------------------------------------------- */

static int slurm_start(struct fq_executor *x, struct fq_err *err)
{
    struct slurm *s = fq_xcalloc(1, sizeof(*s));
    const char *h = getenv("FLEXQ_SLURM_HELPER");
    s->helper =
        fq_xstrdup(h && *h ? h : FLEXQ_SOURCE_DIR "/scripts/flexq-slurm");
    const char *pp = getenv("FLEXQ_PYTHONPATH");
    s->python_path = fq_xstrdup(pp && *pp ? pp : FLEXQ_SOURCE_DIR "/python");
    const char *t = getenv("FLEXQ_SLURM_TIMEOUT_S");
    long ts = t && *t ? strtol(t, NULL, 10) : 30;
    s->timeout_ms = (ts > 0 && ts < 3600 ? ts : 30) * 1000;
    x->state = s;
    s->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    x->notify_fd = s->ifd;
    if (s->ifd < 0)
        fprintf(stderr,
                "flexqd: slurm executor: inotify: %s; task files "
                "are read once a second\n",
                strerror(errno));
    if (access(s->helper, X_OK) != 0)
        return fq_err_set(err, FQ_EINVAL,
                          "slurm executor: helper %s cannot be executed "
                          "(set FLEXQ_SLURM_HELPER)",
                          s->helper);
    if (!getenv("SLURM_CONF"))
        fprintf(stderr, "flexqd: slurm executor: SLURM_CONF is not set; "
                        "Slurm's default configuration is used\n");
    return 0;
}

static int slurm_adopt(struct fq_executor *x, int64_t now_ms)
{
    struct slurm *s = x->state;
    s->adopted = false;
    s->next_adopt = now_ms;
    slurm_poll(x, now_ms);
    return 0;
}

static bool slurm_busy(const struct fq_executor *x)
{
    const struct slurm *s = x->state;
    return !s->adopted || s->ng > 0 || s->poll;
}

static bool slurm_pod_live(const struct fq_executor *x, const char *ns,
                           const char *name)
{
    struct spod *p = NULL;
    struct sgang *g = gang_of_pod(x->state, ns, name, &p);
    return g && g->st != G_OVER && p && !p->final;
}

static void slurm_caps(const struct fq_executor *x, struct fq_buf *out)
{
    const struct slurm *s = x->state;
    const char *conf = getenv("SLURM_CONF");
    fq_buf_printf(out, "executor: slurm (helper %s, SLURM_CONF %s)\n",
                  s->helper, conf ? conf : "default");
}

static void slurm_stop(struct fq_executor *x)
{
    struct slurm *s = x->state;
    if (!s)
        return;
    /* Jobs keep running: a restarted flexqd adopts them. */
    for (size_t i = 0; i < s->ng; i++)
        gang_release(s, &s->g[i]);
    free(s->g);
    fq_provider_child_free(s->poll);
    fq_provider_child_free(s->adopt);
    if (s->ifd >= 0)
        close(s->ifd);
    free(s->helper);
    free(s->python_path);
    free(s);
    x->state = NULL;
}

const struct fq_executor_ops fq_executor_slurm_ops = {
    .name = "slurm",
    .start = slurm_start,
    .launch = slurm_launch,
    .cancel = slurm_cancel,
    .on_change = slurm_on_change,
    .poll = slurm_poll,
    .on_sigchld = slurm_poll,
    .on_notify = slurm_on_notify,
    .adopt = slurm_adopt,
    .busy = slurm_busy,
    .pod_live = slurm_pod_live,
    .caps = slurm_caps,
    .stop = slurm_stop,
};
