/*
 * pytorchjob.c - the PyTorchJob controller (kubeflow.org/v1), as
 * Kubeflow's training operator runs it, and its row for Kueue's
 * jobframework.
 *
 * spec.pytorchReplicaSpecs has a Master (one replica) and Workers. Each
 * replica is one Pod `<job>-<type>-<index>` (type lower-cased), owned by
 * the job, labelled training.kubeflow.org/job-name, replica-type,
 * replica-index, operator-name (pytorchjob-controller) and job-role
 * (master, on the master). The operator also makes one headless Service
 * per pod under the pod's name; flexq has no Services, so the runner
 * resolves those names to this machine instead (annotation
 * flexq.dev/dns-names, runner/podspec.c).
 *
 * Env of every container, as the operator sets it with a Master:
 *   MASTER_ADDR, PET_MASTER_ADDR   <job>-master-0
 *   MASTER_PORT, PET_MASTER_PORT   the master container's port named
 *                                  pytorchjob-port; without one the
 *                                  operator's default 23456 is replaced by
 *                                  a port of flexqd's rendezvous range, so
 *                                  that two jobs on one machine do not
 *                                  collide (annotation
 *                                  flexq.dev/rendezvous-port)
 *   WORLD_SIZE                     replicas x nprocPerNode (1 unless a
 *                                  number)
 *   RANK, PET_NODE_RANK            0 on the master, worker i is i + 1
 *   PET_NPROC_PER_NODE             spec.nprocPerNode (default "auto")
 *   PET_NNODES                     all replicas
 *   PYTHONUNBUFFERED               "0" (any value unbuffers Python)
 *
 * Status (status.conditions, Kubeflow's JobCondition types):
 *   Created (PyTorchJobCreated) when seen; Suspended while
 *   runPolicy.suspend (pods deleted, as the operator does); Running
 *   (PyTorchJobRunning) when every pod runs; Succeeded
 *   (PyTorchJobSucceeded) when the master succeeds (every worker, without
 *   a master); Failed (PyTorchJobFailed) when a pod of restartPolicy
 *   Never or ExitCode fails (OnFailure and Always pods restart in place,
 *   pods.c). status.replicaStatuses.<Type>.{active,succeeded,failed},
 *   startTime, completionTime. runPolicy.cleanPodPolicy All or Running
 *   ends the running pods of a finished job; None (the default) leaves
 *   them.
 *
 * What it does not do: elasticPolicy (PET_RDZV_*), backoffLimit counting,
 * activeDeadlineSeconds, ttlSecondsAfterFinished, Services.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"
#include "jobs/integrations.h"
#include "jobs/pods.h"

#define KF                "training.kubeflow.org/"
#define DEFAULT_PORT_NAME "pytorchjob-port"
#define MAX_PODS          1024 /* names written into one pod's dns-names */

/* Master first: ranks follow this order. */
static const char *const roles[] = {"Master", "Worker"};

static const struct fq_value *role_spec(const struct fq_value *job, int r)
{
    return fq_map_get(fq_value_path(job, FQ_PYTORCH_REPLICA_SPECS), roles[r]);
}

static int64_t role_replicas(const struct fq_value *job, int r)
{
    const struct fq_value *rs = role_spec(job, r);
    return rs ? fq_value_path_int(rs, "replicas", 1) : 0;
}

static void lower(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
    out[i] = '\0';
}

/* --- the jobframework's row ---------------------------------------------- */

static struct fq_value *pt_podsets(const struct fq_value *job)
{
    struct fq_value *pss = fq_value_seq();
    for (int r = 0; r < 2; r++) {
        const struct fq_value *rs = role_spec(job, r);
        if (!rs)
            continue;
        char lname[16];
        lower(roles[r], lname, sizeof(lname));
        struct fq_value *ps = fq_value_map();
        fq_map_set(ps, "name", fq_value_str(lname));
        fq_map_set(ps, "count", fq_value_int(role_replicas(job, r)));
        const struct fq_value *t = fq_map_get(rs, "template");
        fq_map_set(ps, "template", t ? fq_value_clone(t) : fq_value_map());
        fq_seq_push(pss, ps);
    }
    return pss;
}

static struct fq_value *pt_template_of(struct fq_value *job, const char *ps)
{
    for (int r = 0; r < 2; r++) {
        char lname[16];
        lower(roles[r], lname, sizeof(lname));
        if (!strcmp(lname, ps))
            return fq_map_get(
                fq_map_get(fq_value_path(job, FQ_PYTORCH_REPLICA_SPECS),
                           roles[r]),
                "template");
    }
    return NULL;
}

const struct fq_integration fq_pytorchjob_integration = {
    .kind = FQ_KIND_PYTORCHJOB,
    .prefix = "pytorchjob",
    .suspend_path = "spec.runPolicy.suspend",
    .podsets = pt_podsets,
    .template_of = pt_template_of,
    .status = fq_kubeflow_status,
};

/* --- pods ---------------------------------------------------------------- */

/* The master's port: its pytorch container's pytorchjob-port, else one of
 * the rendezvous range, recorded on the job. */
static int master_port(struct fq_engine *e, const char *ns, const char *name)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_PYTORCHJOB, ns, name);
    const struct fq_value *cs = fq_value_path(
        fq_map_get(fq_value_path(o->obj, FQ_PYTORCH_REPLICA_SPECS), "Master"),
        FQ_TEMPLATE_CONTAINERS);
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        if (strcmp(fq_value_path_str(c, "name", ""), "pytorch"))
            continue;
        const struct fq_value *ports = fq_map_get(c, "ports");
        for (size_t k = 0; k < fq_value_len(ports); k++)
            if (!strcmp(fq_value_path_str(fq_seq_at(ports, k), "name", ""),
                        DEFAULT_PORT_NAME))
                return (int)fq_value_path_int(fq_seq_at(ports, k),
                                              "containerPort", 23456);
    }
    const char *p = fq_value_as_str(
        fq_map_get(fq_meta_annotations(o->obj), FQ_ANN_RDV_PORT));
    if (p)
        return atoi(p);
    int port = fq_pods_alloc_port(e);
    struct fq_value *copy = fq_objstore_edit(s, FQ_KIND_PYTORCHJOB, ns, name);
    char buf[16];
    snprintf(buf, sizeof(buf), "%d", port);
    fq_pods_set_annotation(copy, FQ_ANN_RDV_PORT, buf);
    fq_objstore_update(s, copy, true, NULL, NULL, NULL);
    return port;
}

static void put_env_int(struct fq_value *spec, const char *k, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    fq_pods_set_env(spec, k, buf);
}

static void create_pod(struct fq_engine *e, const char *ns, const char *name,
                       int r, int64_t i, int port, const char *dns, int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_PYTORCHJOB, ns, name);
    if (!o)
        return;
    const struct fq_value *job = o->obj;
    const struct fq_value *rs = role_spec(job, r);
    char lname[16], idx[32];
    lower(roles[r], lname, sizeof(lname));
    snprintf(idx, sizeof(idx), "%lld", (long long)i);
    char *pname = fq_xasprintf("%s-%s-%lld", name, lname, (long long)i);
    struct fq_value *pod =
        fq_pods_from_template(fq_map_get(rs, "template"), ns, pname, job);
    fq_pods_set_label(pod, KF "job-name", name);
    fq_pods_set_label(pod, KF "replica-type", lname);
    fq_pods_set_label(pod, KF "replica-index", idx);
    fq_pods_set_label(pod, KF "operator-name", "pytorchjob-controller");
    if (r == 0)
        fq_pods_set_label(pod, KF "job-role", "master");
    fq_pods_set_annotation(pod, FQ_ANN_DNS_NAMES, dns);
    struct fq_value *spec = fq_map_ensure_map(pod, "spec");
    fq_map_set(spec, "hostname", fq_value_str(pname));
    const char *rp = fq_value_path_str(rs, "restartPolicy", "OnFailure");
    fq_map_set(spec, "restartPolicy",
               fq_value_str(!strcmp(rp, "ExitCode") ? "Never" : rp));
    fq_pods_set_env(spec, "PYTHONUNBUFFERED", "0");
    if (role_spec(job, 0)) {
        char *maddr = fq_xasprintf("%s-master-0", name);
        int64_t total = role_replicas(job, 0) + role_replicas(job, 1);
        const char *nproc = fq_value_path_str(job, "spec.nprocPerNode", "auto");
        long np = strtol(nproc, NULL, 10);
        int64_t rank = r == 0 ? 0 : i + 1;
        fq_pods_set_env(spec, "MASTER_ADDR", maddr);
        fq_pods_set_env(spec, "PET_MASTER_ADDR", maddr);
        put_env_int(spec, "MASTER_PORT", port);
        put_env_int(spec, "PET_MASTER_PORT", port);
        put_env_int(spec, "WORLD_SIZE", total * (np > 0 ? np : 1));
        put_env_int(spec, "RANK", rank);
        fq_pods_set_env(spec, "PET_NPROC_PER_NODE", nproc);
        put_env_int(spec, "PET_NODE_RANK", rank);
        put_env_int(spec, "PET_NNODES", total);
        free(maddr);
    }
    fq_pods_create(e, pod, now, job, "SuccessfulCreatePod");
    free(pname);
}

/* Every pod name of the job (its Services' names), comma-separated. */
static char *pod_names(const struct fq_value *job, const char *name)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "");
    size_t n = 0;
    for (int r = 0; r < 2; r++) {
        char lname[16];
        lower(roles[r], lname, sizeof(lname));
        for (int64_t i = 0; i < role_replicas(job, r) && n < MAX_PODS; i++, n++)
            fq_buf_printf(&b, "%s%s-%s-%lld", n ? "," : "", name, lname,
                          (long long)i);
    }
    return fq_buf_detach(&b);
}

/* --- reconcile ----------------------------------------------------------- */

struct counts {
    int64_t active, succeeded, failed, running;
};

static void delete_pods(struct fq_engine *e, const char *ns, const char *name,
                        const struct fq_value *job, bool running_only,
                        int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    for (int r = 0; r < 2; r++) {
        char lname[16];
        lower(roles[r], lname, sizeof(lname));
        for (int64_t i = 0; i < role_replicas(job, r); i++) {
            char *pn = fq_xasprintf("%s-%s-%lld", name, lname, (long long)i);
            const struct fq_object *p = fq_objstore_get(s, FQ_KIND_POD, ns, pn);
            if (p && fq_pods_owned_by(p->obj, "PyTorchJob", name, NULL)) {
                if (!running_only)
                    fq_objstore_delete(s, FQ_KIND_POD, ns, pn, NULL);
                else if (!fq_pods_terminal(p->obj))
                    fq_pods_kill(e, ns, pn, "Terminated",
                                 "the job finished (cleanPodPolicy)", now);
            }
            free(pn);
        }
    }
}

static void finish(struct fq_engine *e, const char *ns, const char *name,
                   const struct fq_value *job, struct fq_value *st, bool ok,
                   const char *msg, int64_t now)
{
    char ts[40];
    fq_pods_cond_set(st, ok ? "Succeeded" : "Failed", "True",
                     ok ? "PyTorchJobSucceeded" : "PyTorchJobFailed", msg, now);
    fq_pods_cond_set(st, "Running", "False",
                     ok ? "PyTorchJobSucceeded" : "PyTorchJobFailed", msg, now);
    fq_time_format(now, ts, sizeof(ts));
    fq_map_set(st, "completionTime", fq_value_str(ts));
    fq_engine_event(e, job, ok ? "Normal" : "Warning",
                    ok ? "PyTorchJobSucceeded" : "PyTorchJobFailed", "%s", msg);
    const char *clean = fq_value_path_str(job, FQ_KF_CLEAN_POD_POLICY, "None");
    if (strcmp(clean, "None"))
        delete_pods(e, ns, name, job, true, now);
}

static void reconcile(struct fq_engine *e, const char *ns, const char *name,
                      int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o =
        fq_objstore_get(s, FQ_KIND_PYTORCHJOB, ns, name);
    if (!o)
        return;
    struct fq_value *job = fq_value_clone(o->obj);
    struct fq_value *st = fq_value_clone(fq_map_get(job, "status"));
    if (!st)
        st = fq_value_map();
    if (fq_pods_cond_true(st, "Succeeded") || fq_pods_cond_true(st, "Failed"))
        goto out;
    char msg[400];
    snprintf(msg, sizeof(msg), "PyTorchJob %s is created.", name);
    if (!fq_pods_cond(st, "Created"))
        fq_pods_cond_set(st, "Created", "True", "PyTorchJobCreated", msg, now);
    if (fq_value_path_bool(job, FQ_KF_RUN_POLICY_SUSPEND, false)) {
        delete_pods(e, ns, name, job, false, now);
        snprintf(msg, sizeof(msg), "PyTorchJob %s is suspended.", name);
        fq_pods_cond_set(st, "Suspended", "True", "PyTorchJobSuspended", msg,
                         now);
        fq_pods_cond_set(st, "Running", "False", "PyTorchJobSuspended", msg,
                         now);
        fq_map_del(st, "startTime");
        goto put;
    }
    if (fq_pods_cond(st, "Suspended")) {
        snprintf(msg, sizeof(msg), "PyTorchJob %s is resumed.", name);
        fq_pods_cond_set(st, "Suspended", "False", "PyTorchJobResumed", msg,
                         now);
    }
    if (!fq_map_get(st, "startTime")) {
        char ts[40];
        fq_time_format(now, ts, sizeof(ts));
        fq_map_set(st, "startTime", fq_value_str(ts));
    }
    int port = role_spec(job, 0) ? master_port(e, ns, name) : 0;
    char *dns = pod_names(job, name);
    struct counts c[2] = {{0}, {0}};
    struct fq_value *rst = fq_value_map();
    const char *failed_pod = NULL;
    char *fp = NULL;
    int64_t pods = 0;
    for (int r = 0; r < 2; r++) {
        if (!role_spec(job, r))
            continue;
        char lname[16];
        lower(roles[r], lname, sizeof(lname));
        for (int64_t i = 0; i < role_replicas(job, r); i++, pods++) {
            char *pn = fq_xasprintf("%s-%s-%lld", name, lname, (long long)i);
            const struct fq_object *p = fq_objstore_get(s, FQ_KIND_POD, ns, pn);
            if (!p) {
                create_pod(e, ns, name, r, i, port, dns, now);
                c[r].active++;
            } else if (!strcmp(fq_pods_phase(p->obj), "Succeeded")) {
                c[r].succeeded++;
            } else if (!strcmp(fq_pods_phase(p->obj), "Failed")) {
                c[r].failed++;
                if (!fp)
                    failed_pod = fp = fq_xstrdup(pn);
            } else {
                c[r].active++;
                if (!strcmp(fq_pods_phase(p->obj), "Running"))
                    c[r].running++;
            }
            free(pn);
        }
        struct fq_value *rv = fq_value_map();
        fq_map_set(rv, "active", fq_value_int(c[r].active));
        fq_map_set(rv, "succeeded", fq_value_int(c[r].succeeded));
        fq_map_set(rv, "failed", fq_value_int(c[r].failed));
        fq_map_set(rst, roles[r], rv);
    }
    free(dns);
    fq_map_set(st, "replicaStatuses", rst);
    bool has_master = role_spec(job, 0) != NULL;
    bool ok = has_master ? c[0].succeeded > 0 :
                           c[1].succeeded == role_replicas(job, 1);
    if (failed_pod) {
        snprintf(msg, sizeof(msg),
                 "PyTorchJob %s is failed because pod %s failed.", name,
                 failed_pod);
        finish(e, ns, name, job, st, false, msg, now);
    } else if (ok) {
        snprintf(msg, sizeof(msg), "PyTorchJob %s is successfully completed.",
                 name);
        finish(e, ns, name, job, st, true, msg, now);
    } else if (c[0].running + c[1].running == pods) {
        snprintf(msg, sizeof(msg), "PyTorchJob %s is running.", name);
        fq_pods_cond_set(st, "Running", "True", "PyTorchJobRunning", msg, now);
    }
    free(fp);
put:
    fq_pods_put_status(e, FQ_KIND_PYTORCHJOB, ns, name, st);
    st = NULL;
out:
    fq_value_free(st);
    fq_value_free(job);
}

/* --- controller ---------------------------------------------------------- */

static void *ptc_create(struct fq_engine *e)
{
    (void)e;
    return fq_owner_ctl_new(FQ_KIND_PYTORCHJOB, "PyTorchJob",
                            FQ_KIND_BIT(FQ_KIND_POD), reconcile);
}

const struct fq_controller_ops fq_pytorchjob_controller = {
    .name = "pytorchjob",
    .watch = FQ_KIND_BIT(FQ_KIND_PYTORCHJOB) | FQ_KIND_BIT(FQ_KIND_POD),
    .create = ptc_create,
    .destroy = fq_owner_ctl_destroy,
    .on_change = fq_owner_ctl_on_change,
    .run = fq_owner_ctl_run,
    .next_wakeup = fq_owner_ctl_next_wakeup,
};
