/*
 * bench/jobs.c - jobs through queueing, admission, binding and real
 * processes, mirroring the Slurm harness in ../shared/bench/slurm/.
 *
 * What it measures: the same five phases as bench.sh, on the same shape:
 * two ordered pools ("ondemand" then "flex") of 2 nodes x 16 cpus each
 * (4 x 16 cpus, nodes labelled as the local provider labels its node),
 * every job a batch/v1 Job in a LocalQueue whose ClusterQueue lists the
 * two flavors in that order (flexq's form of Slurm's `-p ondemand,flex`).
 * Each job's pod is started by flexqd's runner as a real process and
 * reaped on SIGCHLD.
 *
 *   idle    6 probes, each after 1 s of an idle cluster: submit -> start
 *           (start stamped by the job itself), and the submit call's time
 *   seq     N no-op jobs submitted one by one (each submission answered
 *           before the next, as sbatch is), then drained
 *   array   N no-op jobs as one submission (one multi-document apply, as
 *           one `sbatch --array=1-N`), then drained
 *   gang    N/40 jobs of 2 pods x 16 cpus (whole nodes, all or nothing),
 *           submitted one by one, then drained
 *   queued  one blocker job per pool holding all its cpus; N/5 jobs of
 *           4 cpus x 1 s submitted behind them; 1 s later (t0) the
 *           blockers are deleted: wait, start after t0, refill gap,
 *           makespan against the ideal
 *
 * Same as bench.sh, point by point:
 *   - a fresh "cluster" per phase (bench.sh's RESTART_PER_PHASE=1): each
 *     phase runs in a forked child with a new engine and runner, so peak
 *     RSS and CPU are per phase and no phase inherits another's records;
 *   - finished Jobs stay in the store for the phase (Slurm keeps finished
 *     jobs MinJobAge = 300 s, longer than a phase); JOBS_DELETE_FINISHED=1
 *     deletes each Job as it finishes instead;
 *   - no-op jobs run `/bin/sh -c true` (what `sbatch --wrap true` runs:
 *     one /bin/sh, `true` a builtin); stamped jobs run bash writing
 *     "<pod> s $EPOCHREALTIME" / "<pod> e $EPOCHREALTIME" around an
 *     optional `sleep 1`, as stamp_job.sh does;
 *   - submit times are taken when the submission returns (bench.sh: after
 *     sbatch prints the id), latencies are the job's own start stamp minus
 *     that;
 *   - the statistics are summarize.py's: percentiles by linear
 *     interpolation, refill gap = starts[slots + k] - ends[k] over the
 *     sorted starts and ends, efficiency = ideal / makespan;
 *   - the JSON has summarize.py's keys. Where Slurm has several daemons,
 *     flexq has one process: "slurmctld" in peak_rss_kb and "ctld_cpu_s"
 *     are that process's (engine + runner), "slurmd_*" and "munged" are 0.
 *
 * How it drives: in one process per phase, the way flexqd does (engine.h
 * + the runner), without HTTP and without the SQLite store (bench/api
 * measures the API): a submission is fq_engine_apply + one loop turn;
 * a turn settles the engine, hands every change to the runner (which
 * starts bound pods), polls the runner once a second as flexqd's tick
 * does, and waits for SIGCHLD with sigtimedwait until the next engine
 * wakeup.
 *
 * Usage: jobs [N]  (default 500; PHASES=idle,seq,array,gang,queued picks
 * phases as bench.sh's PHASES does; JOBS_DIR=/dev/shm puts the pods' files
 * on another file system than /tmp). Output: readable figures, then as the
 * last line one JSON object that ratio.py reads beside bench.sh's.
 *
 * What it does not do: a separate daemon process per node (flexq has
 * none), a client process per submission (sbatch is one; flexq's CLI and
 * HTTP are measured by bench/api), accounting.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"
#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/objstore.h"
#include "flexq/value.h"
#include "runner/runner.h"

#define NODES       4
#define CPUS        16
#define IDLE_PROBES 6
#define QCPUS       4
#define QDUR        1

struct bench {
    struct fq_engine *e;
    struct fq_runner *r;
    char dir[96];       /* the run's temporary directory */
    char data[160];     /* this phase's runner data directory */
    char stamps[160];   /* this phase's stamp file */
    const char *prefix; /* Jobs named <prefix><index> are counted */
    bool *finished;     /* per index: seen Complete or Failed */
    int nfinished;
    int want;
    int done;   /* Jobs finished in this phase */
    int failed; /* of which Failed */
    bool delete_finished;
    int64_t next_poll;
};

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t now_ms(void)
{
    return (int64_t)(wall() * 1000.0);
}

/* Whole machine busy CPU seconds: user+nice+system+irq+softirq+steal, the
 * fields bench.sh's host_busy_ticks adds. */
static double busy_cpu_s(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return 0;
    unsigned long long v[10] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 8)
        return 0;
    double hz = (double)sysconf(_SC_CLK_TCK);
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / hz;
}

/* CPU seconds of this process (the engine and the runner). */
static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void apply(struct bench *b, const char *yaml)
{
    struct fq_docs d = {0};
    struct fq_limits lim = fq_limits_default();
    struct fq_err err = {0};
    /* one submission may hold a whole array phase */
    lim.max_docs = 1000000;
    lim.max_bytes = (size_t)1 << 30;
    lim.max_nodes = (size_t)1 << 30;
    if (fq_yaml_parse(yaml, strlen(yaml), "bench", &lim, &d, &err) != 0) {
        fprintf(stderr, "jobs: %s\n", err.msg);
        exit(2);
    }
    for (size_t i = 0; i < d.n; i++) {
        struct fq_value *o = d.items[i];
        d.items[i] = NULL;
        if (fq_engine_apply(b->e, o, now_ms(), NULL, NULL, &err) != 0) {
            fprintf(stderr, "jobs: apply: %s\n", err.msg);
            exit(2);
        }
    }
    fq_docs_release(&d);
}

/* Index of a Job named <prefix><digits>, or -1. */
static int job_index(const struct bench *b, const char *name)
{
    size_t pl = strlen(b->prefix);
    if (strncmp(name, b->prefix, pl) || !name[pl])
        return -1;
    char *end = NULL;
    long i = strtol(name + pl, &end, 10);
    if (*end || i < 0 || i >= b->want)
        return -1;
    return (int)i;
}

/* Counts a counted Job whose Complete or Failed condition is True. */
static void note_job(struct bench *b, const struct fq_change *c)
{
    int idx = job_index(b, c->name);
    if (idx < 0 || b->finished[idx])
        return;
    const struct fq_value *conds = fq_value_path(c->obj, "status.conditions");
    for (size_t k = 0; k < fq_value_len(conds); k++) {
        const struct fq_value *cd = fq_seq_at(conds, k);
        const char *t = fq_value_path_str(cd, "type", "");
        if ((!strcmp(t, "Complete") || !strcmp(t, "Failed")) &&
            !strcmp(fq_value_path_str(cd, "status", ""), "True")) {
            b->finished[idx] = true;
            b->done++;
            b->failed += !strcmp(t, "Failed");
            if (b->delete_finished)
                fq_engine_delete(b->e, FQ_KIND_JOB, c->ns, c->name, now_ms(),
                                 NULL);
            return;
        }
    }
}

/* Settles the engine and lets the runner act until nothing changes. */
static void settle(struct bench *b)
{
    for (int round = 0; round < 100; round++) {
        fq_engine_run(b->e, now_ms());
        struct fq_change *c = NULL;
        size_t n = fq_objstore_take_changes(fq_engine_store(b->e), &c);
        for (size_t i = 0; i < n; i++) {
            if (c[i].kind == FQ_KIND_POD)
                fq_runner_on_change(b->r, &c[i], now_ms());
            else if (c[i].kind == FQ_KIND_JOB && c[i].obj &&
                     c[i].type != FQ_CHANGE_DELETED)
                note_job(b, &c[i]);
        }
        fq_changes_free(c, n);
        if (n == 0)
            return;
    }
}

/* One turn of flexqd's loop: settle, the runner's 1 s tick when due, then
 * wait for a child's exit or the next engine wakeup (at most max_wait_ms). */
static void turn(struct bench *b, int64_t max_wait_ms)
{
    settle(b);
    int64_t now = now_ms();
    if (now >= b->next_poll) {
        fq_runner_poll(b->r, now);
        b->next_poll = now + 1000;
    }
    int64_t next = fq_engine_next_wakeup(b->e);
    int64_t wait = max_wait_ms;
    if (next != FQ_NEVER && next - now < wait)
        wait = next - now;
    if (b->next_poll - now < wait)
        wait = b->next_poll - now;
    if (wait < 0)
        wait = 0;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000};
    if (sigtimedwait(&set, NULL, &ts) == SIGCHLD || fq_runner_running(b->r))
        fq_runner_on_sigchld(b->r, now_ms());
}

/* Runs the loop for `secs` seconds (bench.sh's `sleep` between steps,
 * while the cluster keeps working). */
static void idle_for(struct bench *b, double secs)
{
    double until = wall() + secs;
    for (double left = secs; left > 0; left = until - wall())
        turn(b, (int64_t)(left * 1000.0) + 1);
}

static void drain(struct bench *b, int want, double limit_s)
{
    double t0 = wall();
    while (b->done < want) {
        turn(b, 20);
        if (wall() - t0 > limit_s) {
            fprintf(stderr, "jobs: drain timed out: %d of %d done\n", b->done,
                    want);
            break;
        }
    }
}

static char *job_yaml(const char *name, int parallelism, int cpus,
                      const char *command)
{
    return fq_xasprintf(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n"
        "  namespace: default\n  labels: {kueue.x-k8s.io/queue-name: q}\n"
        "spec:\n  suspend: true\n  parallelism: %d\n  completions: %d\n"
        "  backoffLimit: 0\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n"
        "      - name: c\n        image: none\n        command: %s\n"
        "        resources: {requests: {cpu: \"%d\", memory: 64Mi}}\n",
        name, parallelism, parallelism, command, cpus);
}

/* What `sbatch --wrap true` runs: one /bin/sh, `true` its builtin. */
static const char NOOP_CMD[] = "[/bin/sh, -c, \"true\"]";

/* stamp_job.sh's body: bash stamps start and end around `sleep dur`. */
static char *stamp_cmd(const struct bench *b, int dur)
{
    char sleep_cmd[32] = "";
    if (dur)
        snprintf(sleep_cmd, sizeof(sleep_cmd), "sleep %d; ", dur);
    return fq_xasprintf(
        "[/bin/bash, -c, 'echo \"$FLEXQ_POD_NAME s $EPOCHREALTIME\" >> %s; "
        "%secho \"$FLEXQ_POD_NAME e $EPOCHREALTIME\" >> %s']",
        b->stamps, sleep_cmd, b->stamps);
}

/* Statistics and stamps: bench_stats.h. */

/* --- one fresh cluster per phase ---------------------------------------- */

static const char *SETUP =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
    "metadata: {name: ondemand}\n"
    "spec: {nodeLabels: {cloud.google.com/gke-nodepool: ondemand}}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
    "metadata: {name: flex}\n"
    "spec: {nodeLabels: {cloud.google.com/gke-nodepool: flex}}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
    "metadata: {name: bench}\nspec:\n  namespaceSelector: {}\n"
    "  resourceGroups:\n  - coveredResources: [cpu, memory]\n"
    "    flavors:\n"
    "    - name: ondemand\n      resources:\n"
    "      - {name: cpu, nominalQuota: 32}\n"
    "      - {name: memory, nominalQuota: 256Gi}\n"
    "    - name: flex\n      resources:\n"
    "      - {name: cpu, nominalQuota: 32}\n"
    "      - {name: memory, nominalQuota: 256Gi}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {name: q, namespace: default}\nspec: {clusterQueue: bench}\n";

/* Nodes b1..b4 as the local provider labels its node; b1-b2 in pool
 * ondemand, b3-b4 in pool flex (bench.sh's partitions). */
static void add_nodes(struct bench *b)
{
    for (int i = 0; i < NODES; i++) {
        char *y = fq_xasprintf(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: b%d\n"
            "  labels: {cloud.google.com/gke-nodepool: %s, "
            "kubernetes.io/hostname: b%d}\n"
            "status:\n  capacity: {cpu: \"%d\", memory: 64Gi, pods: \"110\"}\n"
            "  allocatable: {cpu: \"%d\", memory: 64Gi, pods: \"110\"}\n"
            "  conditions: [{type: Ready, status: \"True\"}]\n",
            i + 1, i < NODES / 2 ? "ondemand" : "flex", i + 1, CPUS, CPUS);
        struct fq_docs d = {0};
        struct fq_limits lim = fq_limits_default();
        fq_yaml_parse(y, strlen(y), "node", &lim, &d, NULL);
        fq_objstore_create(fq_engine_store(b->e), d.items[0], now_ms(), NULL,
                           NULL, NULL);
        d.items[0] = NULL;
        d.n = 0;
        fq_docs_release(&d);
        free(y);
    }
}

/* Starts the phase's cluster: engine, runner, nodes, queues. */
static void cluster_up(struct bench *b, const char *prefix, int want)
{
    b->prefix = prefix;
    b->want = want;
    b->finished = fq_xcalloc((size_t)want + 1, sizeof(bool));
    b->done = b->failed = 0;
    snprintf(b->data, sizeof(b->data), "%s/%s", b->dir, prefix);
    snprintf(b->stamps, sizeof(b->stamps), "%s/%s.stamps", b->dir, prefix);
    /* beside the data directory, writable by the pods' user (the runner
     * hides the data directory from pods and runs them unprivileged) */
    int sfd = open(b->stamps, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (sfd >= 0) {
        fchmod(sfd, 0666);
        close(sfd);
    }
    struct fq_engine_config ec;
    fq_engine_config_init(&ec);
    ec.seed = 42;
    ec.sim_provider = false; /* the nodes below are the machine's */
    b->e = fq_engine_new(&ec);
    struct fq_runner_config rc;
    fq_runner_config_init(&rc);
    rc.data_dir = b->data;
    rc.grace_ms = 1000;
    struct fq_err err = {0};
    b->r = fq_runner_new(&rc, b->e, &err);
    if (!b->r) {
        fprintf(stderr, "jobs: %s\n", err.msg);
        exit(1);
    }
    add_nodes(b);
    apply(b, SETUP);
    settle(b);
    b->next_poll = now_ms() + 1000;
}

/* bench.sh's phase_begin/phase_end figures, measured inside the phase's
 * process after its cluster is up. */
struct phase_meter {
    double t0, host0, self0;
};

static void meter_start(struct phase_meter *m)
{
    m->t0 = wall();
    m->host0 = busy_cpu_s();
    m->self0 = self_cpu_s();
}

static char *meter_json(const struct phase_meter *m)
{
    double w = wall() - m->t0, c = busy_cpu_s() - m->host0;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return fq_xasprintf(
        "\"ctld_cpu_s\": %.2f, \"slurmd_cpu_s\": 0.0, "
        "\"peak_rss_kb\": {\"slurmctld\": %ld, \"slurmd_sum\": 0, "
        "\"munged\": 0}, \"host_busy_cpu_s\": %.2f, \"phase_wall_s\": %.2f, "
        "\"host_cpu_utilisation\": %.3f",
        self_cpu_s() - m->self0, ru.ru_maxrss, c, w,
        w > 0 ? c / (w * (double)(nproc > 0 ? nproc : 1)) : 0.0);
}

/* --- phases ------------------------------------------------------------ */

static char *phase_idle(struct bench *b, int n)
{
    (void)n;
    cluster_up(b, "idle", IDLE_PROBES);
    struct phase_meter pm;
    meter_start(&pm);
    double before[IDLE_PROBES], after[IDLE_PROBES];
    char *cmd = stamp_cmd(b, 0);
    for (int k = 0; k < IDLE_PROBES; k++) {
        idle_for(b, 1.0);
        char name[32];
        snprintf(name, sizeof(name), "idle%d", k);
        char *y = job_yaml(name, 1, 1, cmd);
        before[k] = wall();
        apply(b, y);
        after[k] = wall();
        free(y);
        drain(b, k + 1, 60);
    }
    free(cmd);
    struct stamp *st = NULL;
    size_t n_st = read_stamps(b->stamps, &st);
    double lat[IDLE_PROBES], cli[IDLE_PROBES];
    size_t m = 0;
    for (int k = 0; k < IDLE_PROBES; k++) {
        char name[32];
        snprintf(name, sizeof(name), "idle%d", k);
        cli[k] = after[k] - before[k];
        for (size_t i = 0; i < n_st; i++)
            if (!strcmp(st[i].name, name) && st[i].s > 0)
                lat[m++] = st[i].s - after[k];
    }
    char *lat_j = dist_ms(lat, m);
    char *cli_j = dist_ms(cli, IDLE_PROBES);
    char *mt = meter_json(&pm);
    printf("idle   submit -> start p50 %.1f ms, p90 %.1f ms (%zu probes); "
           "submit call p50 %.3f ms\n",
           pct(lat, m, 0.5) * 1000.0, pct(lat, m, 0.9) * 1000.0, m,
           pct(cli, IDLE_PROBES, 0.5) * 1000.0);
    char *out = fq_xasprintf("\"idle\": {\"submit_to_start\": %s, "
                             "\"sbatch_cli_call\": %s, \"probes\": %d, %s}",
                             lat_j, cli_j, IDLE_PROBES, mt);
    free(lat_j);
    free(cli_j);
    free(mt);
    free(st);
    return out;
}

static char *phase_bulk(struct bench *b, const char *prefix, int n, int pods,
                        int cpus, bool one_batch)
{
    cluster_up(b, prefix, n);
    struct phase_meter pm;
    meter_start(&pm);
    double ta = wall();
    if (one_batch) {
        /* one submission holding every job, as one sbatch --array */
        struct fq_buf all = {0};
        for (int i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof(name), "%s%d", prefix, i);
            char *y = job_yaml(name, pods, cpus, NOOP_CMD);
            fq_buf_printf(&all, "%s---\n", y);
            free(y);
        }
        apply(b, fq_buf_str(&all));
        fq_buf_release(&all);
        turn(b, 0);
    } else {
        for (int i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof(name), "%s%d", prefix, i);
            char *y = job_yaml(name, pods, cpus, NOOP_CMD);
            apply(b, y);
            free(y);
            turn(b, 0); /* a client waits for its answer: one turn each */
        }
    }
    double tb = wall();
    drain(b, n, 600);
    double tc = wall();
    char *mt = meter_json(&pm);
    double sub = tb - ta, all_s = tc - ta;
    printf("%-6s %d jobs: submitted in %.3f s (%.1f/s), all done in %.3f s "
           "(%.2f jobs/s end to end)%s\n",
           prefix, n, sub, n / (sub > 0 ? sub : 1e-9), all_s,
           n / (all_s > 0 ? all_s : 1e-9), b->failed ? " (SOME FAILED)" : "");
    char *out = fq_xasprintf(
        "\"%s\": {\"jobs\": %d, \"accepted\": %d, \"finished\": %d, "
        "\"failed\": %d, \"submit_wall_s\": %.3f, \"submit_jobs_per_s\": "
        "%.1f, \"all_done_wall_s\": %.3f, \"end_to_end_jobs_per_s\": %.2f, "
        "\"drain_after_last_submit_s\": %.3f, %s%s%s}",
        prefix, n, n, b->done, b->failed, sub, n / (sub > 0 ? sub : 1e-9),
        all_s, n / (all_s > 0 ? all_s : 1e-9), tc - tb, mt,
        !strcmp(prefix, "seq") ? ", \"submitters\": 1" : "",
        !strcmp(prefix, "gang") ? ", \"nodes_per_job\": 2" : "");
    free(mt);
    return out;
}

static char *phase_seq(struct bench *b, int n)
{
    return phase_bulk(b, "seq", n, 1, 1, false);
}

static char *phase_array(struct bench *b, int n)
{
    return phase_bulk(b, "array", n, 1, 1, true);
}

static char *phase_gang(struct bench *b, int n)
{
    return phase_bulk(b, "gang", n / 40, 2, CPUS, false);
}

static char *phase_queued(struct bench *b, int n)
{
    int qn = n / 5;
    cluster_up(b, "queued", qn);
    struct phase_meter pm;
    meter_start(&pm);
    /* one blocker per pool: 2 pods x 16 cpus, running until deleted */
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof(name), "blocker%d", i);
        char *y = job_yaml(name, NODES / 2, CPUS, "[sleep, \"3600\"]");
        apply(b, y);
        free(y);
    }
    for (double lim = wall() + 60; fq_runner_running(b->r) < NODES;)
        if (wall() > lim) {
            fprintf(stderr, "jobs: blockers did not start\n");
            exit(3);
        } else
            turn(b, 20);
    char *cmd = stamp_cmd(b, QDUR);
    double *sub = fq_xcalloc((size_t)qn, sizeof(double));
    double ta = wall();
    for (int i = 0; i < qn; i++) {
        char name[32];
        snprintf(name, sizeof(name), "queued%d", i);
        char *y = job_yaml(name, 1, QCPUS, cmd);
        apply(b, y);
        sub[i] = wall();
        free(y);
        turn(b, 0);
    }
    double tb = wall();
    free(cmd);
    idle_for(b, 1.0);
    double t0 = wall();
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof(name), "blocker%d", i);
        fq_engine_delete(b->e, FQ_KIND_JOB, "default", name, now_ms(), NULL);
    }
    drain(b, qn, 600);
    struct stamp *st = NULL;
    size_t n_st = read_stamps(b->stamps, &st);
    double *wait = fq_xcalloc(n_st + 1, sizeof(double));
    double *after = fq_xcalloc(n_st + 1, sizeof(double));
    double *starts = fq_xcalloc(n_st + 1, sizeof(double));
    double *ends = fq_xcalloc(n_st + 1, sizeof(double));
    size_t ns = 0, ne = 0, nw = 0;
    for (size_t i = 0; i < n_st; i++) {
        int idx = job_index(b, st[i].name);
        if (idx < 0)
            continue;
        if (st[i].s > 0) {
            wait[nw++] = st[i].s - sub[idx];
            after[ns] = st[i].s - t0;
            starts[ns++] = st[i].s;
        }
        if (st[i].e > 0)
            ends[ne++] = st[i].e;
    }
    qsort(starts, ns, sizeof(double), cmp_d);
    qsort(ends, ne, sizeof(double), cmp_d);
    /* summarize.py: the k-th job beyond the first `slots` can only start
     * once the k-th job ended */
    int slots = NODES * CPUS / QCPUS;
    double *gaps = fq_xcalloc(ns + 1, sizeof(double));
    size_t ng = 0;
    for (size_t k = 0; k + (size_t)slots < ns && k < ne; k++)
        gaps[ng++] = starts[(size_t)slots + k] - ends[k];
    double ideal = ceil((double)qn / slots) * QDUR;
    double makespan = ne ? ends[ne - 1] - t0 : 0;
    double first = ns ? starts[0] - t0 : 0;
    char *wait_j = dist_ms(wait, nw);
    char *after_j = dist_ms(after, ns);
    char *gap_j = dist_ms(gaps, ng);
    char *mt = meter_json(&pm);
    printf("queued %d jobs of %d cpus x %d s: first start %.1f ms after the "
           "blockers went, wait p50 %.1f ms, refill gap p50 %.1f ms p99 "
           "%.1f ms, makespan %.2f s (ideal %.0f s)\n",
           qn, QCPUS, QDUR, first * 1000.0, pct(wait, nw, 0.5) * 1000.0,
           pct(gaps, ng, 0.5) * 1000.0, pct(gaps, ng, 0.99) * 1000.0, makespan,
           ideal);
    char *out = fq_xasprintf(
        "\"queued\": {\"jobs\": %d, \"job_duration_s\": %d, "
        "\"cpus_per_job\": %d, \"total_cpus\": %d, \"slots\": %d, "
        "\"started\": %zu, \"finished\": %zu, \"submit_jobs_per_s\": %.1f, "
        "\"wait_submit_to_start\": %s, \"start_after_release\": %s, "
        "\"first_start_after_release_ms\": %.1f, \"refill_gap\": %s, "
        "\"makespan_s\": %.3f, \"ideal_makespan_s\": %.0f, "
        "\"efficiency\": %.3f, %s}",
        qn, QDUR, QCPUS, NODES * CPUS, slots, ns, ne,
        qn / (tb - ta > 0 ? tb - ta : 1e-9), wait_j, after_j, first * 1000.0,
        gap_j, makespan, ideal, makespan > 0 ? ideal / makespan : 0.0, mt);
    free(wait_j);
    free(after_j);
    free(gap_j);
    free(mt);
    free(st);
    free(wait);
    free(after);
    free(starts);
    free(ends);
    free(gaps);
    free(sub);
    return out;
}

static void rm_rf(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/rm", "rm", "-rf", path, (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
}

typedef char *(*phase_fn)(struct bench *b, int n);

static const struct {
    const char *name;
    phase_fn fn;
} PHASES[] = {
    {"idle", phase_idle}, {"seq", phase_seq},       {"array", phase_array},
    {"gang", phase_gang}, {"queued", phase_queued},
};

/*
 * Runs one phase in a child process (a fresh cluster, as bench.sh starts
 * one per phase); the child writes its JSON fragment, with its peak RSS on
 * the first line, to <dir>/<phase>.json. Returns the fragment (owned) or
 * NULL, and raises *rss_kb to the phase's peak.
 */
static char *run_phase(struct bench *b, size_t i, int n, long *rss_kb)
{
    char path[200];
    snprintf(path, sizeof(path), "%s/%s.json", b->dir, PHASES[i].name);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return NULL;
    }
    if (pid == 0) {
        char *frag = PHASES[i].fn(b, n);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        FILE *f = fopen(path, "we");
        if (!f)
            _exit(1);
        fprintf(f, "%ld\n%s\n", ru.ru_maxrss, frag);
        fclose(f);
        fflush(stdout);
        fq_runner_free(b->r);
        fq_engine_free(b->e);
        _exit(0);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "jobs: phase %s failed\n", PHASES[i].name);
        return NULL;
    }
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    struct fq_buf frag = {0};
    long rss = 0;
    char line[4096];
    if (fscanf(f, "%ld\n", &rss) != 1)
        rss = 0;
    while (fgets(line, sizeof(line), f))
        fq_buf_append(&frag, line, strlen(line));
    fclose(f);
    if (rss > *rss_kb)
        *rss_kb = rss;
    /* drop the trailing newline */
    char *s = fq_buf_detach(&frag);
    size_t l = strlen(s);
    while (l && s[l - 1] == '\n')
        s[--l] = '\0';
    return s;
}

static bool wanted(const char *list, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == nl && !strncmp(p, name, l))
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 500;
    if (n < 40)
        n = 40;
    const char *phases = getenv("PHASES");
    if (!phases || !*phases)
        phases = "idle,seq,array,gang,queued";
    /* the runner reaps on SIGCHLD through sigtimedwait: keep it blocked
     * (children inherit the mask) */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);

    struct bench b;
    memset(&b, 0, sizeof(b));
    const char *del = getenv("JOBS_DELETE_FINISHED");
    b.delete_finished = del && *del && strcmp(del, "0");
    /* JOBS_DIR puts the pods' files on another file system (default
     * /tmp, where bench.sh's Slurm writes its spool and job output) */
    const char *base = getenv("JOBS_DIR");
    if (!base || !*base)
        base = "/tmp";
    if ((size_t)snprintf(b.dir, sizeof(b.dir), "%s/flexq-bench-jobs-XXXXXX",
                         base) >= sizeof(b.dir)) {
        fprintf(stderr, "jobs: JOBS_DIR too long\n");
        return 1;
    }
    if (!mkdtemp(b.dir)) {
        perror("mkdtemp");
        return 1;
    }
    chmod(b.dir, 0755); /* the pods' user reaches the stamp files */
    printf("flexq jobs benchmark: N=%d, 2 ordered pools x 2 nodes x %d cpus, "
           "real processes, a fresh cluster per phase, finished jobs %s\n",
           n, CPUS, b.delete_finished ? "deleted" : "kept");

    struct fq_buf ph = {0};
    long rss = 0;
    int failed = 0;
    for (size_t i = 0; i < sizeof(PHASES) / sizeof(PHASES[0]); i++) {
        if (!wanted(phases, PHASES[i].name))
            continue;
        char *frag = run_phase(&b, i, n, &rss);
        if (!frag) {
            failed = 1;
            continue;
        }
        fq_buf_printf(&ph, "%s%s", ph.len ? ", " : "", frag);
        free(frag);
    }
    printf("{\"bench\": \"flexq\", \"result_dir\": \"%s\", \"profile\": "
           "\"default\", \"n\": %d, \"host_cpus\": %ld, "
           "\"scheduler_parameters\": \"(defaults)\", "
           "\"partitions_per_job\": \"ondemand,flex\", \"min_job_age_s\": "
           "%s, \"restart_per_phase\": 1, \"finished_jobs\": \"%s\", "
           "\"peak_rss_kb\": {\"slurmctld\": %ld, \"slurmd_sum\": 0, "
           "\"slurmd_count\": 0, \"munged\": 0}, \"phases\": {%s}}\n",
           b.dir, n, sysconf(_SC_NPROCESSORS_ONLN),
           b.delete_finished ? "0" : "null",
           b.delete_finished ? "deleted" : "kept", rss, fq_buf_str(&ph));
    fq_buf_release(&ph);
    rm_rf(b.dir);
    return failed;
}
