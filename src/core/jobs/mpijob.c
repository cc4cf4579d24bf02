/*
 * mpijob.c - the MPIJob controller (kubeflow.org/v2beta1), as Kubeflow's
 * mpi-operator v2 runs it, and its row for Kueue's jobframework.
 *
 * spec.mpiReplicaSpecs has one Launcher and `replicas` Workers:
 *
 *   ConfigMap <job>-config   key `hostfile`: one line per worker,
 *                            `<job>-worker-<i>.<job>.<ns>.svc slots=<n>`
 *                            (OpenMPI) or `<host>:<n>` (Intel, MPICH),
 *                            n = spec.slotsPerWorker (default 1)
 *   Pods <job>-worker-<i>    hostname the pod name, subdomain <job> (the
 *                            operator's headless Service), env
 *                            K_MPI_JOB_ROLE=worker
 *   Job <job>-launcher       run by job.c; its pod has hostname
 *                            <job>-launcher, the ConfigMap mounted at
 *                            /etc/mpi (volume mpi-job-config) and, for
 *                            OpenMPI, OMPI_MCA_orte_keep_fqdn_hostnames,
 *                            OMPI_MCA_orte_default_hostfile
 *                            (/etc/mpi/hostfile), OMPI_MCA_plm_rsh_args
 *                            and OMPI_MCA_orte_set_default_slots; Intel:
 *                            I_MPI_HYDRA_HOST_FILE and
 *                            I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS; MPICH:
 *                            HYDRA_HOST_FILE and HYDRA_LAUNCH_EXTRA_ARGS;
 *                            K_MPI_JOB_ROLE=launcher
 *
 * All carry training.kubeflow.org/job-name, job-role (launcher, worker)
 * and operator-name (mpi-operator); workers replica-index. The runner
 * resolves every worker's and the launcher's Service name to this machine
 * (annotation flexq.dev/dns-names).
 *
 * Status (Kubeflow's conditions): Created (MPIJobCreated); Suspended
 * while runPolicy.suspend (the launcher Job and the workers deleted);
 * Running (MPIJobRunning) when the launcher and every worker run;
 * Succeeded (MPIJobSucceeded) when the launcher Job is Complete; Failed
 * (MPIJobFailed) when it Failed or a worker failed.
 * replicaStatuses.{Launcher,Worker}. cleanPodPolicy All or Running ends
 * the running workers of a finished job; None (the default) leaves them.
 *
 * What it does not do: ssh keys (sshAuthMountPath; the runtime has no
 * sshd), runLauncherAsWorker, launcherCreationPolicy WaitForWorkersReady,
 * Services.
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

#define KF          "training.kubeflow.org/"
#define CONFIG_DIR  "/etc/mpi"
#define CONFIG_VOL  "mpi-job-config"
#define MAX_WORKERS 4096

static const struct fq_value *role(const struct fq_value *job, const char *r)
{
    return fq_map_get(fq_value_path(job, FQ_MPI_REPLICA_SPECS), r);
}

static int64_t workers(const struct fq_value *job)
{
    const struct fq_value *w = role(job, "Worker");
    int64_t n = w ? fq_value_path_int(w, "replicas", 1) : 0;
    return n < MAX_WORKERS ? n : MAX_WORKERS;
}

/* --- the jobframework's row ---------------------------------------------- */

static struct fq_value *podset(const char *name, int64_t count,
                               const struct fq_value *rs)
{
    struct fq_value *ps = fq_value_map();
    fq_map_set(ps, "name", fq_value_str(name));
    fq_map_set(ps, "count", fq_value_int(count));
    const struct fq_value *t = fq_map_get(rs, "template");
    fq_map_set(ps, "template", t ? fq_value_clone(t) : fq_value_map());
    return ps;
}

static struct fq_value *mpi_podsets(const struct fq_value *job)
{
    struct fq_value *pss = fq_value_seq();
    fq_seq_push(pss, podset("launcher", 1, role(job, "Launcher")));
    if (role(job, "Worker") && workers(job) > 0)
        fq_seq_push(pss, podset("worker", workers(job), role(job, "Worker")));
    return pss;
}

static struct fq_value *mpi_template_of(struct fq_value *job, const char *ps)
{
    const char *r = !strcmp(ps, "launcher") ? "Launcher" :
                    !strcmp(ps, "worker")   ? "Worker" :
                                              NULL;
    if (!r)
        return NULL;
    return fq_map_get(fq_map_get(fq_value_path(job, FQ_MPI_REPLICA_SPECS), r),
                      "template");
}

const struct fq_integration fq_mpijob_integration = {
    .kind = FQ_KIND_MPIJOB,
    .prefix = "mpijob",
    .suspend_path = "spec.runPolicy.suspend",
    .podsets = mpi_podsets,
    .template_of = mpi_template_of,
    .status = fq_kubeflow_status,
};

/* --- children ------------------------------------------------------------ */

static void kf_labels(struct fq_value *obj, const char *name, const char *r)
{
    fq_pods_set_label(obj, KF "job-name", name);
    fq_pods_set_label(obj, KF "job-role", r);
    fq_pods_set_label(obj, KF "operator-name", "mpi-operator");
}

static char *hostfile(const struct fq_value *job, const char *ns,
                      const char *name)
{
    const char *impl = fq_value_path_str(job, FQ_MPI_IMPLEMENTATION, "OpenMPI");
    int64_t slots = fq_value_path_int(job, FQ_MPI_SLOTS_PER_WORKER, 1);
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_puts(&b, "");
    for (int64_t i = 0; i < workers(job); i++) {
        if (!strcmp(impl, "OpenMPI"))
            fq_buf_printf(&b, "%s-worker-%lld.%s.%s.svc slots=%lld\n", name,
                          (long long)i, name, ns, (long long)slots);
        else
            fq_buf_printf(&b, "%s-worker-%lld.%s.%s.svc:%lld\n", name,
                          (long long)i, name, ns, (long long)slots);
    }
    return fq_buf_detach(&b);
}

/* The Service names of the job's pods, comma-separated. */
static char *dns_names(const struct fq_value *job, const char *ns,
                       const char *name)
{
    struct fq_buf b = FQ_BUF_INIT;
    fq_buf_printf(&b, "%s-launcher.%s,%s-launcher.%s.%s.svc", name, name, name,
                  name, ns);
    for (int64_t i = 0; i < workers(job); i++)
        fq_buf_printf(&b, ",%s-worker-%lld.%s,%s-worker-%lld.%s.%s.svc", name,
                      (long long)i, name, name, (long long)i, name, ns);
    return fq_buf_detach(&b);
}

static void ensure_config(struct fq_engine *e, const struct fq_value *job,
                          const char *ns, const char *name, int64_t now)
{
    char *cname = fq_xasprintf("%s-config", name);
    if (fq_objstore_get(fq_engine_store(e), FQ_KIND_CONFIGMAP, ns, cname)) {
        free(cname);
        return;
    }
    struct fq_value *cm = fq_value_map();
    fq_map_set(cm, "apiVersion", fq_value_str("v1"));
    fq_map_set(cm, "kind", fq_value_str("ConfigMap"));
    struct fq_value *md = fq_map_ensure_map(cm, "metadata");
    fq_map_set(md, "name", fq_value_str(cname));
    fq_map_set(md, "namespace", fq_value_str(ns));
    struct fq_value *ors = fq_value_seq();
    fq_seq_push(ors, fq_pods_owner_ref(job));
    fq_map_set(md, "ownerReferences", ors);
    fq_pods_set_label(cm, "app", name);
    char *hf = hostfile(job, ns, name);
    struct fq_value *data = fq_map_ensure_map(cm, "data");
    fq_map_set(data, "hostfile", fq_value_str(hf));
    free(hf);
    fq_pods_create(e, cm, now, NULL, NULL);
    free(cname);
}

static void create_worker(struct fq_engine *e, const struct fq_value *job,
                          const char *ns, const char *name, int64_t i,
                          const char *dns, int64_t now)
{
    const struct fq_value *rs = role(job, "Worker");
    char *pname = fq_xasprintf("%s-worker-%lld", name, (long long)i);
    char idx[32];
    snprintf(idx, sizeof(idx), "%lld", (long long)i);
    struct fq_value *pod =
        fq_pods_from_template(fq_map_get(rs, "template"), ns, pname, job);
    kf_labels(pod, name, "worker");
    fq_pods_set_label(pod, KF "replica-index", idx);
    fq_pods_set_annotation(pod, FQ_ANN_DNS_NAMES, dns);
    struct fq_value *spec = fq_map_ensure_map(pod, "spec");
    fq_map_set(spec, "hostname", fq_value_str(pname));
    fq_map_set(spec, "subdomain", fq_value_str(name));
    const char *rp = fq_value_path_str(rs, "restartPolicy", "Never");
    fq_map_set(spec, "restartPolicy",
               fq_value_str(!strcmp(rp, "ExitCode") ? "Never" : rp));
    fq_pods_set_env(spec, "K_MPI_JOB_ROLE", "worker");
    fq_pods_create(e, pod, now, job, "SuccessfulCreatePod");
    free(pname);
}

static void launcher_env(struct fq_value *spec, const struct fq_value *job)
{
    const char *impl = fq_value_path_str(job, FQ_MPI_IMPLEMENTATION, "OpenMPI");
    const char *hf = CONFIG_DIR "/hostfile";
    fq_pods_set_env(spec, "K_MPI_JOB_ROLE", "launcher");
    if (!strcmp(impl, "Intel")) {
        fq_pods_set_env(spec, "I_MPI_HYDRA_HOST_FILE", hf);
        fq_pods_set_env(spec, "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS",
                        "-o ConnectionAttempts=10");
    } else if (!strcmp(impl, "MPICH")) {
        fq_pods_set_env(spec, "HYDRA_HOST_FILE", hf);
        fq_pods_set_env(spec, "HYDRA_LAUNCH_EXTRA_ARGS",
                        "-o ConnectionAttempts=10");
    } else {
        char slots[32];
        snprintf(slots, sizeof(slots), "%lld",
                 (long long)fq_value_path_int(job, FQ_MPI_SLOTS_PER_WORKER, 1));
        fq_pods_set_env(spec, "OMPI_MCA_orte_keep_fqdn_hostnames", "true");
        fq_pods_set_env(spec, "OMPI_MCA_orte_default_hostfile", hf);
        fq_pods_set_env(spec, "OMPI_MCA_plm_rsh_args",
                        "-o ConnectionAttempts=10");
        fq_pods_set_env(spec, "OMPI_MCA_orte_set_default_slots", slots);
    }
}

static void create_launcher(struct fq_engine *e, const struct fq_value *job,
                            const char *ns, const char *name, const char *dns,
                            int64_t now)
{
    const struct fq_value *rs = role(job, "Launcher");
    char *jname = fq_xasprintf("%s-launcher", name);
    struct fq_value *lj = fq_value_map();
    fq_map_set(lj, "apiVersion", fq_value_str("batch/v1"));
    fq_map_set(lj, "kind", fq_value_str("Job"));
    struct fq_value *md = fq_map_ensure_map(lj, "metadata");
    fq_map_set(md, "name", fq_value_str(jname));
    fq_map_set(md, "namespace", fq_value_str(ns));
    struct fq_value *ors = fq_value_seq();
    fq_seq_push(ors, fq_pods_owner_ref(job));
    fq_map_set(md, "ownerReferences", ors);
    kf_labels(lj, name, "launcher");
    struct fq_value *jspec = fq_map_ensure_map(lj, "spec");
    fq_map_set(
        jspec, "backoffLimit",
        fq_value_int(fq_value_path_int(job, "spec.runPolicy.backoffLimit", 6)));
    const struct fq_value *t = fq_map_get(rs, "template");
    struct fq_value *tmpl = t ? fq_value_clone(t) : fq_value_map();
    fq_map_set(jspec, "template", tmpl);
    kf_labels(tmpl, name, "launcher");
    fq_pods_set_annotation(tmpl, FQ_ANN_DNS_NAMES, dns);
    struct fq_value *spec = fq_map_ensure_map(tmpl, "spec");
    fq_map_set(spec, "hostname", fq_value_str(jname));
    fq_map_set(spec, "subdomain", fq_value_str(name));
    const char *rp = fq_value_path_str(rs, "restartPolicy", "OnFailure");
    fq_map_set(spec, "restartPolicy",
               fq_value_str(!strcmp(rp, "Never") ? "Never" : "OnFailure"));
    launcher_env(spec, job);
    /* The hostfile: the ConfigMap at /etc/mpi on every container. */
    struct fq_value *vols = fq_map_get(spec, "volumes");
    if (!vols || vols->type != FQ_V_SEQ) {
        vols = fq_value_seq();
        fq_map_set(spec, "volumes", vols);
    }
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "name", fq_value_str(CONFIG_VOL));
    char *cname = fq_xasprintf("%s-config", name);
    struct fq_value *cmv = fq_map_ensure_map(v, "configMap");
    fq_map_set(cmv, "name", fq_value_str(cname));
    free(cname);
    fq_seq_push(vols, v);
    struct fq_value *cs = fq_map_get(spec, "containers");
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        struct fq_value *c = fq_seq_at(cs, i);
        struct fq_value *vm = fq_map_get(c, "volumeMounts");
        if (!vm || vm->type != FQ_V_SEQ) {
            vm = fq_value_seq();
            fq_map_set(c, "volumeMounts", vm);
        }
        struct fq_value *m = fq_value_map();
        fq_map_set(m, "name", fq_value_str(CONFIG_VOL));
        fq_map_set(m, "mountPath", fq_value_str(CONFIG_DIR));
        fq_seq_push(vm, m);
    }
    fq_pods_create(e, lj, now, job, "SuccessfulCreate");
    free(jname);
}

/* Deletes the launcher Job (with its pods), the workers and the
 * ConfigMap; or only ends the running workers (`running_only`). Not
 * fq_pods_delete_owned: the MPIJob also owns its Workload. */
static void stop(struct fq_engine *e, const struct fq_value *job,
                 const char *ns, const char *name, bool running_only,
                 int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    for (int64_t i = 0; i < workers(job); i++) {
        char *pn = fq_xasprintf("%s-worker-%lld", name, (long long)i);
        const struct fq_object *p = fq_objstore_get(s, FQ_KIND_POD, ns, pn);
        if (p && fq_pods_owned_by(p->obj, "MPIJob", name, NULL)) {
            if (!running_only)
                fq_objstore_delete(s, FQ_KIND_POD, ns, pn, NULL);
            else if (!fq_pods_terminal(p->obj))
                fq_pods_kill(e, ns, pn, "Terminated",
                             "the job finished (cleanPodPolicy)", now);
        }
        free(pn);
    }
    if (running_only)
        return;
    char *jn = fq_xasprintf("%s-launcher", name);
    const struct fq_object *lj = fq_objstore_get(s, FQ_KIND_JOB, ns, jn);
    if (lj && fq_pods_owned_by(lj->obj, "MPIJob", name, NULL)) {
        fq_pods_delete_owned(e, ns, "Job", jn);
        fq_objstore_delete(s, FQ_KIND_JOB, ns, jn, NULL);
    }
    free(jn);
}

/* --- reconcile ----------------------------------------------------------- */

static void finish(struct fq_engine *e, const char *ns, const char *name,
                   const struct fq_value *job, struct fq_value *st, bool ok,
                   const char *msg, int64_t now)
{
    char ts[40];
    const char *reason = ok ? "MPIJobSucceeded" : "MPIJobFailed";
    fq_pods_cond_set(st, ok ? "Succeeded" : "Failed", "True", reason, msg, now);
    fq_pods_cond_set(st, "Running", "False", reason, msg, now);
    fq_time_format(now, ts, sizeof(ts));
    fq_map_set(st, "completionTime", fq_value_str(ts));
    fq_engine_event(e, job, ok ? "Normal" : "Warning", reason, "%s", msg);
    if (strcmp(fq_value_path_str(job, FQ_KF_CLEAN_POD_POLICY, "None"), "None"))
        stop(e, job, ns, name, true, now);
}

static struct fq_value *counts(int64_t active, int64_t ok, int64_t failed)
{
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "active", fq_value_int(active));
    fq_map_set(v, "succeeded", fq_value_int(ok));
    fq_map_set(v, "failed", fq_value_int(failed));
    return v;
}

static void reconcile(struct fq_engine *e, const char *ns, const char *name,
                      int64_t now)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_MPIJOB, ns, name);
    if (!o)
        return;
    struct fq_value *job = fq_value_clone(o->obj);
    struct fq_value *st = fq_value_clone(fq_map_get(job, "status"));
    if (!st)
        st = fq_value_map();
    if (fq_pods_cond_true(st, "Succeeded") || fq_pods_cond_true(st, "Failed"))
        goto out;
    char msg[400];
    snprintf(msg, sizeof(msg), "MPIJob %s/%s is created.", ns, name);
    if (!fq_pods_cond(st, "Created"))
        fq_pods_cond_set(st, "Created", "True", "MPIJobCreated", msg, now);
    if (fq_value_path_bool(job, FQ_KF_RUN_POLICY_SUSPEND, false)) {
        stop(e, job, ns, name, false, now);
        snprintf(msg, sizeof(msg), "MPIJob %s/%s is suspended.", ns, name);
        fq_pods_cond_set(st, "Suspended", "True", "MPIJobSuspended", msg, now);
        fq_pods_cond_set(st, "Running", "False", "MPIJobSuspended", msg, now);
        fq_map_del(st, "startTime");
        goto put;
    }
    if (fq_pods_cond(st, "Suspended")) {
        snprintf(msg, sizeof(msg), "MPIJob %s/%s is resumed.", ns, name);
        fq_pods_cond_set(st, "Suspended", "False", "MPIJobResumed", msg, now);
    }
    if (!fq_map_get(st, "startTime")) {
        char ts[40];
        fq_time_format(now, ts, sizeof(ts));
        fq_map_set(st, "startTime", fq_value_str(ts));
    }
    ensure_config(e, job, ns, name, now);
    char *dns = dns_names(job, ns, name);
    int64_t wa = 0, wok = 0, wf = 0, wrun = 0;
    for (int64_t i = 0; i < workers(job); i++) {
        char *pn = fq_xasprintf("%s-worker-%lld", name, (long long)i);
        const struct fq_object *p = fq_objstore_get(s, FQ_KIND_POD, ns, pn);
        if (!p) {
            create_worker(e, job, ns, name, i, dns, now);
            wa++;
        } else if (!strcmp(fq_pods_phase(p->obj), "Succeeded")) {
            wok++;
        } else if (!strcmp(fq_pods_phase(p->obj), "Failed")) {
            wf++;
        } else {
            wa++;
            wrun += !strcmp(fq_pods_phase(p->obj), "Running");
        }
        free(pn);
    }
    char *jn = fq_xasprintf("%s-launcher", name);
    const struct fq_object *lj = fq_objstore_get(s, FQ_KIND_JOB, ns, jn);
    if (!lj)
        create_launcher(e, job, ns, name, dns, now);
    lj = fq_objstore_get(s, FQ_KIND_JOB, ns, jn);
    free(jn);
    free(dns);
    const struct fq_value *ls = lj ? fq_map_get(lj->obj, "status") : NULL;
    bool l_ok = fq_pods_cond_true(ls, "Complete");
    bool l_failed = fq_pods_cond_true(ls, "Failed");
    int64_t l_active = fq_value_path_int(ls, "active", 0);
    struct fq_value *rst = fq_value_map();
    fq_map_set(
        rst, "Launcher",
        counts(l_ok || l_failed ? 0 : 1, l_ok ? 1 : 0, l_failed ? 1 : 0));
    fq_map_set(rst, "Worker", counts(wa, wok, wf));
    fq_map_set(st, "replicaStatuses", rst);
    if (l_ok) {
        snprintf(msg, sizeof(msg), "MPIJob %s/%s successfully completed.", ns,
                 name);
        finish(e, ns, name, job, st, true, msg, now);
    } else if (l_failed || wf > 0) {
        snprintf(msg, sizeof(msg), "MPIJob %s/%s has failed: %s", ns, name,
                 l_failed ? "the launcher failed" : "a worker failed");
        finish(e, ns, name, job, st, false, msg, now);
    } else if (l_active > 0 && wrun == workers(job) &&
               fq_value_path_int(ls, "ready", 0) > 0) {
        snprintf(msg, sizeof(msg), "MPIJob %s/%s is running.", ns, name);
        fq_pods_cond_set(st, "Running", "True", "MPIJobRunning", msg, now);
    }
put:
    fq_pods_put_status(e, FQ_KIND_MPIJOB, ns, name, st);
    st = NULL;
out:
    fq_value_free(st);
    fq_value_free(job);
}

/* --- controller ---------------------------------------------------------- */

static void *mc_create(struct fq_engine *e)
{
    (void)e;
    return fq_owner_ctl_new(FQ_KIND_MPIJOB, "MPIJob",
                            FQ_KIND_BIT(FQ_KIND_POD) | FQ_KIND_BIT(FQ_KIND_JOB),
                            reconcile);
}

const struct fq_controller_ops fq_mpijob_controller = {
    .name = "mpijob",
    .watch = FQ_KIND_BIT(FQ_KIND_MPIJOB) | FQ_KIND_BIT(FQ_KIND_POD) |
             FQ_KIND_BIT(FQ_KIND_JOB),
    .create = mc_create,
    .destroy = fq_owner_ctl_destroy,
    .on_change = fq_owner_ctl_on_change,
    .run = fq_owner_ctl_run,
    .next_wakeup = fq_owner_ctl_next_wakeup,
};
