/*
 * job.c - the batch/v1 Job controller, as kube-controller-manager runs it.
 *
 * A Job makes Pods from spec.template until enough of them succeed. Each
 * reconcile counts the Job's pods (by controller ownerReference) and moves
 * the Job through this machine; one function does each transition:
 *
 *                 spec.suspend=true              spec.suspend=false
 *   (new) -----> Suspended=True  <----------------------------+
 *     |          (active pods deleted)  ---resume---> Running |
 *     | suspend=false                                (startTime=now)
 *     v                                                  |
 *   Running: keep min(parallelism, completions - succeeded) pods active
 *     |            (Indexed: one pod per index not yet succeeded)
 *     |-- succeeded reach completions ---------> SuccessCriteriaMet,
 *     |                                          Complete (CompletionsReached)
 *     |-- failures > backoffLimit -------------> FailureTarget, Failed
 *     |                                          (BackoffLimitExceeded)
 *     |-- a failed pod matches a FailJob rule -> FailureTarget, Failed
 *     |   of spec.podFailurePolicy               (PodFailurePolicy)
 *     '-- now >= startTime + activeDeadline ---> FailureTarget, Failed
 *                                                (DeadlineExceeded)
 *
 * Failures are failed pods plus container restarts of restartPolicy
 * OnFailure pods (the kubelet restarts those in place, see pods.c), as the
 * Job controller counts them against backoffLimit (default 6).
 *
 * spec.podFailurePolicy (restartPolicy Never only, as Kubernetes demands):
 * each failed pod is matched against the rules in order; the first rule
 * whose onExitCodes (operator In / NotIn over the exit codes of the
 * containers, optionally only containerName's; exit code 0 never matches)
 * or onPodConditions (type and status among the pod's conditions) matches
 * decides: FailJob fails the Job at once (reason PodFailurePolicy, with
 * Kubernetes' message naming the container, the code and the rule's
 * index), Ignore neither counts the failure against backoffLimit nor in
 * status.failed (a replacement pod is made), Count is what happens when
 * no rule matches. FailIndex (backoffLimitPerIndex) is counted like Count.
 *
 * Invariants:
 *  1. Complete and Failed are final; a finished Job has no active pods
 *     (the ones still running are ended with fq_pods_kill; Kubernetes
 *     deletes them, flexq keeps them so their logs stay readable).
 *  2. Only a Job whose spec.suspend is false has active pods. Kueue's job
 *     integration owns spec.suspend of Jobs it queues.
 *  3. An Indexed Job never has two active pods for one index, and each
 *     index counts once toward completions.
 *
 * ttlSecondsAfterFinished deletes a finished Job and its pods that many
 * seconds after it finished (Complete or Failed lastTransitionTime).
 *
 * Indexed Jobs with more than one completion are gangs for rendezvous
 * (except a JobSet's, whose controller sets the JobSet's names):
 * every pod gets RANK = index, WORLD_SIZE = completions and the
 * coordinator env of pods.h (port pair recorded on the Job in the
 * annotation flexq.dev/rendezvous-port).
 *
 * What it does not do: backoffLimitPerIndex / FailIndex, successPolicy,
 * pod backoff delays
 * between retries, or anything in `no_pods` mode (the simulator has no
 * Jobs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"
#include "jobs/pods.h"

struct jobctl {
    struct fq_keyq q;
    struct fq_pods_owners *own; /* Job -> its pods */
};

/* What one reconcile knows about the Job's pods. */
struct jpod {
    char *name; /* owned */
    bool terminal, succeeded, failed, ready;
    bool ignored;   /* failed, but an Ignore rule matched */
    char *fail_job; /* failed and a FailJob rule matched: the message */
    int64_t index;  /* -1 when not Indexed */
    int64_t restarts;
};

struct jview {
    struct jpod *pods;
    size_t n, cap;
    int64_t active, ready, succeeded, failed, restarts;
    const char *fail_job; /* the first FailJob message (borrowed) or NULL */
};

static void jview_release(struct jview *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free(v->pods[i].name);
        free(v->pods[i].fail_job);
    }
    free(v->pods);
}

/* --- podFailurePolicy -------------------------------------------------- */

enum pfp_action {
    PFP_COUNT,
    PFP_IGNORE,
    PFP_FAIL_JOB
};

static bool int_in(const struct fq_value *values, int64_t x)
{
    for (size_t i = 0; i < fq_value_len(values); i++) {
        const struct fq_value *v = fq_seq_at(values, i);
        if (v && v->type == FQ_V_NUM && v->u.num.i == x)
            return true;
    }
    return false;
}

/* onExitCodes: the first container status (of containerName, if given)
 * with a non-zero exit code that satisfies the operator; its name and code
 * go to *ctr / *code. */
static bool match_exit_codes(const struct fq_value *req,
                             const struct fq_value *pod, const char **ctr,
                             int64_t *code)
{
    const char *only = fq_value_path_str(req, "containerName", NULL);
    bool in = strcmp(fq_value_path_str(req, "operator", "In"), "NotIn") != 0;
    const struct fq_value *values = fq_map_get(req, "values");
    const struct fq_value *cs = fq_value_path(pod, FQ_POD_CONTAINER_STATUSES);
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *c = fq_seq_at(cs, i);
        const char *name = fq_value_path_str(c, "name", "");
        if (only && strcmp(only, name) != 0)
            continue;
        const struct fq_value *t = fq_value_path(c, FQ_CSTATE_TERMINATED);
        if (!t)
            continue;
        int64_t x = fq_value_path_int(t, "exitCode", 0);
        if (x != 0 && int_in(values, x) == in) {
            *ctr = name;
            *code = x;
            return true;
        }
    }
    return false;
}

/* onPodConditions: a pod condition of the rule's type and status (True
 * unless given). */
static const char *match_conditions(const struct fq_value *pats,
                                    const struct fq_value *pod)
{
    const struct fq_value *conds = fq_value_path(pod, FQ_STATUS_CONDITIONS);
    for (size_t i = 0; i < fq_value_len(pats); i++) {
        const struct fq_value *pat = fq_seq_at(pats, i);
        const char *type = fq_value_path_str(pat, "type", "");
        const char *want = fq_value_path_str(pat, "status", "True");
        for (size_t k = 0; k < fq_value_len(conds); k++) {
            const struct fq_value *c = fq_seq_at(conds, k);
            if (!strcmp(fq_value_path_str(c, "type", ""), type) &&
                !strcmp(fq_value_path_str(c, "status", ""), want))
                return type;
        }
    }
    return NULL;
}

/* The action of the first matching rule for a failed pod; for FailJob,
 * Kubernetes' message in *msg (owned). */
static enum pfp_action pfp_action(const struct fq_value *job,
                                  const struct fq_value *pod, const char *ns,
                                  char **msg)
{
    const struct fq_value *rules =
        fq_value_path(job, "spec.podFailurePolicy.rules");
    *msg = NULL;
    if (!fq_value_len(rules) ||
        strcmp(
            fq_value_path_str(job, "spec.template.spec.restartPolicy", "Never"),
            "Never") != 0)
        return PFP_COUNT;
    const char *pname = fq_meta_name(pod);
    for (size_t i = 0; i < fq_value_len(rules); i++) {
        const struct fq_value *r = fq_seq_at(rules, i);
        const char *action = fq_value_path_str(r, "action", "");
        const struct fq_value *ec = fq_map_get(r, "onExitCodes");
        const char *ctr = NULL, *cond = NULL;
        int64_t code = 0;
        if (ec ? !match_exit_codes(ec, pod, &ctr, &code) :
                 !(cond =
                       match_conditions(fq_map_get(r, "onPodConditions"), pod)))
            continue;
        if (!strcmp(action, "Ignore"))
            return PFP_IGNORE;
        if (strcmp(action, "FailJob") != 0)
            return PFP_COUNT; /* Count, and FailIndex without per-index
                                 backoff */
        *msg = ctr ? fq_xasprintf("Container %s for pod %s/%s failed with "
                                  "exit code %lld matching FailJob rule at "
                                  "index %zu",
                                  ctr, ns, pname, (long long)code, i) :
                     fq_xasprintf("Pod %s/%s has condition %s matching "
                                  "FailJob rule at index %zu",
                                  ns, pname, cond, i);
        return PFP_FAIL_JOB;
    }
    return PFP_COUNT;
}

static void collect_pods(struct fq_engine *e, const struct jobctl *jc,
                         const char *ns, const struct fq_value *job,
                         struct jview *v)
{
    const char *name = fq_meta_name(job);
    const char *uid = fq_meta_uid(job);
    size_t n = 0;
    const char *const *names = fq_pods_owners_get(jc->own, "Job", ns, name, &n);
    memset(v, 0, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *o =
            fq_objstore_get(fq_engine_store(e), FQ_KIND_POD, ns, names[i]);
        const struct fq_value *p = o ? o->obj : NULL;
        if (!p || !fq_pods_owned_by(p, "Job", name, uid))
            continue;
        FQ_GROW(v->pods, v->cap, v->n + 1);
        struct jpod *jp = &v->pods[v->n++];
        memset(jp, 0, sizeof(*jp));
        jp->name = fq_xstrdup(o->name);
        const char *ph = fq_pods_phase(p);
        jp->succeeded = strcmp(ph, "Succeeded") == 0;
        jp->failed = strcmp(ph, "Failed") == 0;
        jp->terminal = jp->succeeded || jp->failed;
        jp->ready = fq_pods_ready(p);
        const char *idx = fq_value_as_str(
            fq_map_get(fq_meta_annotations(p), FQ_ANN_COMPLETION_INDEX));
        jp->index = idx ? atoll(idx) : -1;
        jp->restarts = strcmp(fq_value_path_str(p, FQ_POD_RESTART_POLICY, ""),
                              "OnFailure") == 0 ?
                           fq_pods_restarts(p) :
                           0;
        if (jp->failed) {
            enum pfp_action a = pfp_action(job, p, ns, &jp->fail_job);
            jp->ignored = a == PFP_IGNORE;
            if (jp->fail_job && !v->fail_job)
                v->fail_job = jp->fail_job;
        }
        v->active += !jp->terminal;
        v->ready += jp->ready;
        v->succeeded += jp->succeeded;
        v->failed += jp->failed && !jp->ignored;
        v->restarts += jp->restarts;
    }
}

static void delete_active(struct fq_engine *e, const char *ns,
                          const struct fq_value *job, struct jview *v)
{
    for (size_t i = 0; i < v->n; i++) {
        if (v->pods[i].terminal)
            continue;
        if (fq_objstore_delete(fq_engine_store(e), FQ_KIND_POD, ns,
                               v->pods[i].name, NULL) == 0)
            fq_engine_event(e, job, "Normal", "SuccessfulDelete",
                            "Deleted pod: %s", v->pods[i].name);
        v->pods[i].terminal = true;
    }
    v->active = 0;
    v->ready = 0;
}

/* Ends the active pods of a finished Job. Kubernetes deletes them; flexq
 * marks them Failed instead (the runner kills them), so that `flexq logs
 * job/NAME` still finds the pod and its log. */
static void kill_active(struct fq_engine *e, const char *ns, struct jview *v,
                        const char *reason, int64_t now)
{
    for (size_t i = 0; i < v->n; i++) {
        if (v->pods[i].terminal)
            continue;
        fq_pods_kill(e, ns, v->pods[i].name, reason,
                     "the Job finished while the pod was running", now);
        v->pods[i].terminal = v->pods[i].failed = true;
        v->failed++;
    }
    v->active = 0;
    v->ready = 0;
}

/* "0-2,4" from a sorted list of distinct indexes. */
static char *format_indexes(const int64_t *idx, size_t n)
{
    struct fq_buf b = FQ_BUF_INIT;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && idx[j + 1] == idx[j] + 1)
            j++;
        if (b.len)
            fq_buf_putc(&b, ',');
        if (j > i)
            fq_buf_printf(&b, "%lld-%lld", (long long)idx[i],
                          (long long)idx[j]);
        else
            fq_buf_printf(&b, "%lld", (long long)idx[i]);
        i = j + 1;
    }
    if (!b.data)
        return fq_xstrdup("");
    return fq_buf_detach(&b);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Finishes the Job as failed (transition Running -> Failed). */
static void job_fail(struct fq_engine *e, const char *ns,
                     const struct fq_value *job, struct jview *v,
                     struct fq_value *st, const char *reason, const char *msg,
                     int64_t now)
{
    kill_active(e, ns, v, reason, now);
    fq_pods_cond_set(st, "FailureTarget", "True", reason, msg, now);
    fq_pods_cond_set(st, "Failed", "True", reason, msg, now);
    fq_engine_event(e, job, "Warning", reason, "%s", msg);
}

/* Finishes the Job as complete (transition Running -> Complete). */
static void job_complete(struct fq_engine *e, const char *ns,
                         const struct fq_value *job, struct jview *v,
                         struct fq_value *st, int64_t now)
{
    const char *msg = "Reached expected number of succeeded pods";
    char ts[40];
    kill_active(e, ns, v, "Completed", now);
    fq_pods_cond_set(st, "SuccessCriteriaMet", "True", "CompletionsReached",
                     msg, now);
    fq_pods_cond_set(st, "Complete", "True", "CompletionsReached", msg, now);
    fq_time_format(now, ts, sizeof(ts));
    fq_map_set(st, "completionTime", fq_value_str(ts));
    fq_engine_event(e, job, "Normal", "Completed", "Job completed");
}

/* Returns the Job's rendezvous port, allocating and recording it. */
static int job_port(struct fq_engine *e, const char *ns, const char *name)
{
    struct fq_objstore *s = fq_engine_store(e);
    const struct fq_object *o = fq_objstore_get(s, FQ_KIND_JOB, ns, name);
    const char *p = fq_value_as_str(
        fq_map_get(fq_meta_annotations(o->obj), FQ_ANN_RDV_PORT));
    if (p)
        return atoi(p);
    int port = fq_pods_alloc_port(e);
    struct fq_value *copy = fq_objstore_edit(s, FQ_KIND_JOB, ns, name);
    char buf[16];
    snprintf(buf, sizeof(buf), "%d", port);
    fq_pods_set_annotation(copy, FQ_ANN_RDV_PORT, buf);
    fq_objstore_update(s, copy, true, NULL, NULL, NULL);
    return port;
}

/* Whether the first container of pod spec `spec` has env `name`. */
static bool tmpl_has_env(const struct fq_value *spec, const char *name)
{
    const struct fq_value *env =
        fq_value_path(fq_seq_at(fq_value_path(spec, "containers"), 0), "env");
    for (size_t i = 0; i < fq_value_len(env); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(env, i), "name", ""), name))
            return true;
    return false;
}

static void create_pod(struct fq_engine *e, const char *ns,
                       const struct fq_value *job, int64_t index,
                       int64_t completions, int64_t now)
{
    const char *jname = fq_meta_name(job);
    const char *uid = fq_meta_uid(job);
    char sfx[8], *pname;
    fq_engine_rand_suffix(e, sfx, 5);
    if (index >= 0)
        pname = fq_xasprintf("%s-%lld-%s", jname, (long long)index, sfx);
    else
        pname = fq_xasprintf("%s-%s", jname, sfx);
    struct fq_value *pod = fq_pods_from_template(
        fq_value_path(job, FQ_SPEC_TEMPLATE), ns, pname, job);
    fq_pods_set_label(pod, FQ_LABEL_JOB_NAME, jname);
    fq_pods_set_label(pod, FQ_LABEL_JOB_NAME_LEGACY, jname);
    fq_pods_set_label(pod, FQ_LABEL_CONTROLLER_UID, uid);
    fq_pods_set_label(pod, FQ_LABEL_CONTROLLER_UID_LEGACY, uid);
    struct fq_value *spec = fq_map_get(pod, "spec");
    if (!fq_map_get(spec, "restartPolicy"))
        fq_map_set(spec, "restartPolicy", fq_value_str("Never"));
    if (index >= 0) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%lld", (long long)index);
        fq_pods_set_label(pod, FQ_ANN_COMPLETION_INDEX, buf);
        fq_pods_set_annotation(pod, FQ_ANN_COMPLETION_INDEX, buf);
        fq_pods_set_env(spec, "JOB_COMPLETION_INDEX", buf);
        char *host = fq_xasprintf("%s-%lld", jname, (long long)index);
        fq_map_set(spec, "hostname", fq_value_str(host));
        free(host);
        if (fq_pods_owner_name(job, "JobSet")) {
            /* A JobSet's Job: its controller set the JobSet's own
             * rendezvous env (jobset.c); GKE numbers TPU hosts by the
             * completion index. */
            if (fq_value_path(spec, "containers") &&
                tmpl_has_env(spec, "TPU_WORKER_HOSTNAMES"))
                fq_pods_set_env(spec, "TPU_WORKER_ID", buf);
        } else if (completions > 1) {
            struct fq_buf hosts = FQ_BUF_INIT;
            for (int64_t i = 0; i < completions && i < 4096; i++)
                fq_buf_printf(&hosts, "%s127.0.0.1", i ? "," : "");
            struct fq_rendezvous r = {
                .host = "127.0.0.1",
                .port = job_port(e, ns, jname),
                .rank = (int)index,
                .world = (int)completions,
                .worker_id = (int)index,
                .hostnames = fq_buf_str(&hosts),
            };
            fq_pods_add_rendezvous(spec, &r);
            fq_buf_release(&hosts);
        }
    }
    fq_pods_create(e, pod, now, job, "SuccessfulCreate");
    free(pname);
}

/*
 * ttlSecondsAfterFinished: a finished Job (and its pods) is deleted that
 * long after it finished. Returns true when it was deleted now.
 */
static bool ttl_expired(struct fq_engine *e, struct jobctl *jc, const char *ns,
                        const char *name, const struct fq_value *spec,
                        const struct fq_value *st, int64_t now)
{
    int64_t ttl = fq_value_path_int(spec, "ttlSecondsAfterFinished", -1);
    if (ttl < 0)
        return false;
    const struct fq_value *c = fq_pods_cond(st, "Complete");
    if (!c || strcmp(fq_value_path_str(c, "status", ""), "True") != 0)
        c = fq_pods_cond(st, "Failed");
    int64_t done = now;
    fq_time_parse(fq_value_path_str(c, "lastTransitionTime", ""), &done);
    if (now < done + ttl * 1000) {
        fq_keyq_timer2(&jc->q, ns, name, done + ttl * 1000);
        return false;
    }
    fq_pods_delete_owned(e, ns, "Job", name);
    fq_objstore_delete(fq_engine_store(e), FQ_KIND_JOB, ns, name, NULL);
    return true;
}

static void reconcile(struct fq_engine *e, const char *ns, const char *name,
                      int64_t now, struct jobctl *jc)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_JOB, ns, name);
    if (!o)
        return;
    struct fq_value *job = fq_value_clone(o->obj);
    struct fq_value *st = fq_value_clone(fq_map_get(job, "status"));
    if (!st || st->type != FQ_V_MAP) {
        fq_value_free(st);
        st = fq_value_map();
    }
    const struct fq_value *spec = fq_map_get(job, "spec");
    struct jview v;
    collect_pods(e, jc, ns, job, &v);
    char ts[40];
    fq_time_format(now, ts, sizeof(ts));

    bool finished =
        fq_pods_cond_true(st, "Complete") || fq_pods_cond_true(st, "Failed");
    if (finished) {
        kill_active(e, ns, &v, "Completed", now); /* invariant 1 */
        if (ttl_expired(e, jc, ns, name, spec, st, now)) {
            jview_release(&v);
            fq_value_free(st);
            fq_value_free(job);
            return;
        }
        goto counts;
    }
    if (fq_value_path_bool(spec, "suspend", false)) {
        if (v.active)
            delete_active(e, ns, job, &v);
        if (!fq_pods_cond_true(st, "Suspended")) {
            fq_pods_cond_set(st, "Suspended", "True", "JobSuspended",
                             "Job suspended", now);
            if (fq_map_get(st, "startTime"))
                fq_engine_event(e, job, "Normal", "Suspended", "Job suspended");
        }
        fq_map_del(st, "startTime");
        goto counts;
    }
    if (fq_pods_cond_true(st, "Suspended")) {
        fq_pods_cond_set(st, "Suspended", "False", "JobResumed", "Job resumed",
                         now);
        fq_engine_event(e, job, "Normal", "Resumed", "Job resumed");
    }
    if (!fq_map_get(st, "startTime"))
        fq_map_set(st, "startTime", fq_value_str(ts));

    int64_t parallelism = fq_value_path_int(spec, "parallelism", 1);
    int64_t completions = fq_value_path_int(spec, "completions", -1);
    int64_t backoff = fq_value_path_int(spec, "backoffLimit", 6);
    bool indexed =
        strcmp(fq_value_path_str(spec, "completionMode", ""), "Indexed") == 0 &&
        completions > 0;

    /* Deadline, from startTime. The API takes any int64 of seconds; one
     * beyond the longest duration flexq reads (100 years, timefmt.h) is
     * none, where ads * 1000 would overflow. */
    int64_t ads = fq_value_path_int(spec, "activeDeadlineSeconds", -1);
    int64_t start = now;
    fq_time_parse(fq_value_path_str(st, "startTime", ts), &start);
    if (ads >= 0 && ads <= FQ_DURATION_MAX_MS / 1000) {
        int64_t deadline = start + ads * 1000;
        if (now >= deadline) {
            job_fail(e, ns, job, &v, st, "DeadlineExceeded",
                     "Job was active longer than specified deadline", now);
            goto counts;
        }
        fq_keyq_timer2(&jc->q, ns, name, deadline);
    }
    if (v.fail_job) {
        job_fail(e, ns, job, &v, st, "PodFailurePolicy", v.fail_job, now);
        goto counts;
    }
    if (v.failed + v.restarts > backoff) {
        job_fail(e, ns, job, &v, st, "BackoffLimitExceeded",
                 "Job has reached the specified backoff limit", now);
        goto counts;
    }

    if (indexed) {
        bool *done = fq_xcalloc((size_t)completions, sizeof(bool));
        bool *busy = fq_xcalloc((size_t)completions, sizeof(bool));
        int64_t ndone = 0;
        for (size_t i = 0; i < v.n; i++) {
            int64_t ix = v.pods[i].index;
            if (ix < 0 || ix >= completions)
                continue;
            if (v.pods[i].succeeded && !done[ix]) {
                done[ix] = true;
                ndone++;
            }
            if (!v.pods[i].terminal)
                busy[ix] = true;
        }
        if (ndone >= completions) {
            job_complete(e, ns, job, &v, st, now);
        } else {
            int64_t active = v.active;
            for (int64_t ix = 0; ix < completions && active < parallelism;
                 ix++) {
                if (done[ix] || busy[ix])
                    continue;
                create_pod(e, ns, job, ix, completions, now);
                active++;
            }
            v.active = active;
        }
        int64_t *list = fq_xcalloc((size_t)completions + 1, sizeof(int64_t));
        size_t nl = 0;
        for (int64_t ix = 0; ix < completions; ix++)
            if (done[ix])
                list[nl++] = ix;
        qsort(list, nl, sizeof(*list), cmp_i64);
        char *ci = format_indexes(list, nl);
        if (*ci)
            fq_map_set(st, "completedIndexes", fq_value_str(ci));
        free(ci);
        free(list);
        free(done);
        free(busy);
    } else {
        bool complete = completions >= 0 ? v.succeeded >= completions :
                                           v.succeeded > 0 && v.active == 0;
        if (complete) {
            job_complete(e, ns, job, &v, st, now);
        } else {
            int64_t want;
            if (completions >= 0)
                want = completions - v.succeeded < parallelism ?
                           completions - v.succeeded :
                           parallelism;
            else
                want = v.succeeded > 0 ? 0 : parallelism;
            for (int64_t i = v.active; i < want; i++)
                create_pod(e, ns, job, -1, completions, now);
            if (want > v.active)
                v.active = want;
        }
    }

counts:
    fq_map_set(st, "active", fq_value_int(v.active));
    fq_map_set(st, "ready", fq_value_int(v.ready));
    fq_map_set(st, "succeeded", fq_value_int(v.succeeded));
    fq_map_set(st, "failed", fq_value_int(v.failed));
    fq_pods_put_status(e, FQ_KIND_JOB, ns, name, st);
    jview_release(&v);
    fq_value_free(job);
}

/* --- controller ------------------------------------------------------- */

static void *jc_create(struct fq_engine *e)
{
    (void)e;
    struct jobctl *jc = fq_xcalloc(1, sizeof(*jc));
    fq_keyq_init(&jc->q);
    jc->own = fq_pods_owners_new();
    return jc;
}

static void jc_destroy(void *self)
{
    struct jobctl *jc = self;
    fq_keyq_release(&jc->q);
    fq_pods_owners_free(jc->own);
    free(jc);
}

static void jc_on_change(void *self, struct fq_engine *e,
                         const struct fq_change *c)
{
    struct jobctl *jc = self;
    if (fq_engine_config(e)->no_pods)
        return;
    if (c->kind == FQ_KIND_JOB) {
        if (c->type != FQ_CHANGE_DELETED)
            fq_keyq_add2(&jc->q, c->ns, c->name);
    } else if (c->kind == FQ_KIND_POD && c->obj) {
        fq_pods_owners_note(jc->own, c);
        const char *owner = fq_pods_owner_name(c->obj, "Job");
        if (!owner)
            return;
        fq_keyq_add2(&jc->q, c->ns, owner);
    } else {
        return;
    }
    fq_engine_kick(e, self);
}

static void jc_run(void *self, struct fq_engine *e, int64_t now)
{
    struct jobctl *jc = self;
    if (fq_engine_config(e)->no_pods) {
        jc->q.resync = false;
        return;
    }
    fq_keyq_fire(&jc->q, now);
    if (jc->q.resync) {
        jc->q.resync = false;
        const struct fq_object **objs = NULL;
        size_t n =
            fq_objstore_list(fq_engine_store(e), FQ_KIND_JOB, NULL, &objs);
        for (size_t i = 0; i < n; i++)
            fq_keyq_add2(&jc->q, objs[i]->ns, objs[i]->name);
        free(objs);
    }
    const char *const *keys;
    size_t n = fq_keyq_take(&jc->q, &keys);
    for (size_t i = 0; i < n; i++) {
        char *key = fq_xstrdup(keys[i]);
        const char *ns, *name;
        fq_pods_key_split(key, &ns, &name);
        reconcile(e, ns, name, now, jc);
        free(key);
    }
    fq_keyq_clear(&jc->q);
}

static int64_t jc_next_wakeup(const void *self)
{
    const struct jobctl *jc = self;
    return jc->q.resync ? 0 : fq_keyq_next(&jc->q);
}

const struct fq_controller_ops fq_job_controller = {
    .name = "job",
    .watch = FQ_KIND_BIT(FQ_KIND_JOB) | FQ_KIND_BIT(FQ_KIND_POD),
    .create = jc_create,
    .destroy = jc_destroy,
    .on_change = jc_on_change,
    .run = jc_run,
    .next_wakeup = jc_next_wakeup,
};
