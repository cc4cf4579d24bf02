/*
 * bench/jobs_api.c - bench/jobs' five phases through the front door: every
 * job submitted to a real flexqd over HTTP, each answer given only after
 * the durable commit (--sync full).
 *
 * What it measures: the phases of bench/jobs.c and of the Slurm harness in
 * ../shared/bench/slurm/bench.sh (idle, seq, array, gang, queued; see
 * bench/jobs.c for what each does), on the same shape (two ordered pools
 * "ondemand" then "flex" of 2 nodes x 16 cpus, every job a batch/v1 Job in
 * a LocalQueue whose ClusterQueue lists the two flavors in that order),
 * in two modes:
 *
 *   cli  one `flexq create -f FILE` process per submission, as bench.sh
 *        runs one `sbatch` per job: a new client process, a connection,
 *        HTTP, the commit, the answer; the array phase is one
 *        `flexq create -f` of a file holding the N Jobs (as one
 *        `sbatch --array=1-N` is one process); the blockers of the queued
 *        phase go with one `flexq delete job b0 b1` (scancel);
 *   api  one keep-alive HTTP/1.1 connection submitting as fast as the
 *        answers come (a workflow engine), each Job a JSON body as
 *        kubectl and the client libraries send it (converted from the
 *        same YAML before the phase starts); the array phase writes the N
 *        requests pipelined on that connection and reads the N answers.
 *
 * How it drives: each phase of each mode starts a fresh flexqd (bench.sh
 * starts a fresh cluster per phase): build/flexqd (or $FLEXQD) with
 * --provider local (pods are real processes started by flexqd's runner
 * and reaped on SIGCHLD), --sync full, a temporary data directory and a
 * free port (port 0; the port is read from its "listening" log line).
 * The four nodes b1..b4 are POSTed as Node objects labelled as the local
 * provider labels its node (the local node itself is in pool
 * default-pool, which no flavor here selects). A watch on Jobs (one more
 * connection, read by a thread) counts each Job whose Complete or Failed
 * condition turns True; watch lines leave flexqd once durable. bench.sh
 * polls squeue every 0.25 s instead.
 *
 * Stamped the same way as bench.sh: submit times are taken when the
 * submission returned (the CLI process exited / the 201 was read), job
 * start and end by the job itself (bash, $EPOCHREALTIME); statistics are
 * summarize.py's (as in bench/jobs.c). The idle phase also gives
 * submit -> start measured from before the call (submit_to_start_from_call)
 * since through flexqd a job may start before its submission's answer.
 * Where Slurm has several daemons flexq has one: "slurmctld" in
 * peak_rss_kb and ctld_cpu_s are flexqd's (VmHWM and utime+stime from
 * /proc, its pods not included).
 *
 * Usage: jobs_api [N]   (default 500; MODES=cli,api and
 * PHASES=idle,seq,array,gang,queued,conc pick what runs, conc being
 * the seq jobs from 8 clients at once; JOBS_DIR=/dev/shm puts
 * the data directories elsewhere than /tmp). Output: readable figures, a
 * line "FLEXQ_CLI_JSON {...}" and one "FLEXQ_API_JSON {...}", each with
 * bench/jobs' keys (for ratio.py: grep the line, cut the prefix), and as
 * the last line one JSON object holding both under "cli" and "api".
 *
 * What it does not do: TLS or tokens, more than one client, accounting.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "bench_http.h"
#include "bench_stats.h"
#include "flexq/value.h"

#define NODES       4
#define CPUS        16
#define IDLE_PROBES 6
#define QCPUS       4
#define QDUR        1

/* --- the watch: counts finished Jobs --------------------------------------- */

struct watcher {
    pthread_t th;
    int fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool ready, ended;
    const char *prefix;
    int want;
    bool *finished;
    int done, failed;
};

static int job_index(const char *prefix, int want, const char *name)
{
    size_t pl = strlen(prefix);
    if (strncmp(name, prefix, pl) || !name[pl])
        return -1;
    char *end = NULL;
    long i = strtol(name + pl, &end, 10);
    if (*end || i < 0 || i >= want)
        return -1;
    return (int)i;
}

static void watch_line(struct watcher *w, const char *line, size_t len)
{
    /* only lines that may show a finished Job are parsed */
    if (!memmem(line, len, "\"Complete\"", 10) &&
        !memmem(line, len, "\"Failed\"", 8))
        return;
    struct fq_limits lim = fq_limits_default();
    lim.max_bytes = 1 << 24;
    struct fq_value *ev = NULL;
    if (fq_json_parse(line, len, "watch", &lim, &ev, NULL) != 0)
        return;
    const struct fq_value *obj = fq_value_path(ev, "object");
    const char *name = fq_value_path_str(obj, "metadata.name", "");
    int idx = job_index(w->prefix, w->want, name);
    const struct fq_value *conds = fq_value_path(obj, "status.conditions");
    for (size_t k = 0; idx >= 0 && k < fq_value_len(conds); k++) {
        const struct fq_value *cd = fq_seq_at(conds, k);
        const char *t = fq_value_path_str(cd, "type", "");
        if ((!strcmp(t, "Complete") || !strcmp(t, "Failed")) &&
            !strcmp(fq_value_path_str(cd, "status", ""), "True")) {
            pthread_mutex_lock(&w->mu);
            if (!w->finished[idx]) {
                w->finished[idx] = true;
                w->done++;
                w->failed += !strcmp(t, "Failed");
                pthread_cond_broadcast(&w->cv);
            }
            pthread_mutex_unlock(&w->mu);
            break;
        }
    }
    fq_value_free(ev);
}

static void watch_head(void *ctx, int status)
{
    struct watcher *w = ctx;
    (void)status;
    pthread_mutex_lock(&w->mu);
    w->ready = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void watch_on_line(void *ctx, const char *line, size_t len)
{
    watch_line(ctx, line, len);
}

/* Reads the watch until the connection closes. */
static void *watch_main(void *arg)
{
    struct watcher *w = arg;
    read_stream(w->fd, watch_head, watch_on_line, w);
    pthread_mutex_lock(&w->mu);
    w->ended = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static int watch_start(struct watcher *w, int port, const char *prefix,
                       int want)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->prefix = prefix;
    w->want = want;
    w->finished = fq_xcalloc((size_t)want + 1, sizeof(bool));
    w->fd = connect_to(port);
    if (w->fd < 0)
        return -1;
    const char req[] = "GET /apis/batch/v1/namespaces/default/jobs?watch=true "
                       "HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (write_all(w->fd, req, sizeof(req) - 1) < 0)
        return -1;
    pthread_create(&w->th, NULL, watch_main, w);
    pthread_mutex_lock(&w->mu);
    while (!w->ready && !w->ended)
        pthread_cond_wait(&w->cv, &w->mu);
    bool ok = w->ready;
    pthread_mutex_unlock(&w->mu);
    return ok ? 0 : -1;
}

static void watch_stop(struct watcher *w)
{
    shutdown(w->fd, SHUT_RDWR);
    pthread_join(w->th, NULL);
    close(w->fd);
    free(w->finished);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}

/* Waits until `want` Jobs finished or `limit_s` passed; the count. */
static int watch_wait(struct watcher *w, int want, double limit_s)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)limit_s;
    pthread_mutex_lock(&w->mu);
    while (w->done < want && !w->ended)
        if (pthread_cond_timedwait(&w->cv, &w->mu, &dl) == ETIMEDOUT)
            break;
    int done = w->done;
    pthread_mutex_unlock(&w->mu);
    if (done < want)
        fprintf(stderr, "jobs_api: drain: %d of %d done%s\n", done, want,
                w->ended ? " (watch ended)" : " (timed out)");
    return done;
}

/* --- jobs ------------------------------------------------------------------ */

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

static const char NOOP_CMD[] = "[/bin/sh, -c, \"true\"]";

static char *stamp_cmd(const char *stamps, int dur)
{
    char sleep_cmd[32] = "";
    if (dur)
        snprintf(sleep_cmd, sizeof(sleep_cmd), "sleep %d; ", dur);
    return fq_xasprintf(
        "[/bin/bash, -c, 'echo \"$FLEXQ_POD_NAME s $EPOCHREALTIME\" >> %s; "
        "%secho \"$FLEXQ_POD_NAME e $EPOCHREALTIME\" >> %s']",
        stamps, sleep_cmd, stamps);
}

static const char *SETUP_DOCS[] = {
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
    "metadata: {name: ondemand}\n"
    "spec: {nodeLabels: {cloud.google.com/gke-nodepool: ondemand}}\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
    "metadata: {name: flex}\n"
    "spec: {nodeLabels: {cloud.google.com/gke-nodepool: flex}}\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
    "metadata: {name: bench}\nspec:\n  namespaceSelector: {}\n"
    "  resourceGroups:\n  - coveredResources: [cpu, memory]\n"
    "    flavors:\n"
    "    - name: ondemand\n      resources:\n"
    "      - {name: cpu, nominalQuota: 32}\n"
    "      - {name: memory, nominalQuota: 256Gi}\n"
    "    - name: flex\n      resources:\n"
    "      - {name: cpu, nominalQuota: 32}\n"
    "      - {name: memory, nominalQuota: 256Gi}\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {name: q, namespace: default}\nspec: {clusterQueue: bench}\n",
};

static const char *SETUP_PATHS[] = {
    "/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
    "/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
    "/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
    "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues",
};

static const char JOBS_PATH[] = "/apis/batch/v1/namespaces/default/jobs";

/* Nodes b1..b4 (b1-b2 pool ondemand, b3-b4 pool flex) and the queues. */
static int setup(struct conn *c)
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
        char path[64];
        snprintf(path, sizeof(path), "/api/v1/nodes/b%d/status", i + 1);
        int st = call(c, "POST", "/api/v1/nodes", "application/yaml", y);
        int st2 = st == 201 ? call(c, "PUT", path, "application/yaml", y) : 0;
        free(y);
        if (st != 201 || st2 != 200) {
            fprintf(stderr, "jobs_api: node b%d: HTTP %d / %d\n", i + 1, st,
                    st2);
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof(SETUP_DOCS) / sizeof(SETUP_DOCS[0]); i++) {
        int st =
            call(c, "POST", SETUP_PATHS[i], "application/yaml", SETUP_DOCS[i]);
        if (st != 201) {
            fprintf(stderr, "jobs_api: setup %zu: HTTP %d\n", i, st);
            return -1;
        }
    }
    return 0;
}

/* Statistics and stamps: bench_stats.h. */

/* --- one phase -------------------------------------------------------------- */

struct run {
    bool cli;        /* one flexq process per submission */
    const char *bin; /* flexqd */
    const char *cli_bin;
    char base[96]; /* the run's temporary directory */
    char dir[160]; /* this phase's */
    char stamps[200];
    struct daemon d;
    struct conn c; /* the keep-alive connection */
    struct watcher w;
    double t0, host0, cpu0;
    long rss_kb; /* peak over the phases */
    int failed_calls;
};

static int run_cli(struct run *r, const char *const argv[])
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0)
            dup2(nul, 1);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    r->failed_calls += !ok;
    return ok ? 0 : -1;
}

/* Submits one Job: a CLI process on a file, or a POST. */
static int submit(struct run *r, const char *name, const char *yaml)
{
    if (r->cli) {
        char *path = fq_xasprintf("%s/%s.yaml", r->dir, name);
        const char *argv[] = {r->cli_bin, "--server", r->d.url, "create",
                              "-f",       path,       NULL};
        int rc = run_cli(r, argv);
        free(path);
        return rc;
    }
    int st = call(&r->c, "POST", JOBS_PATH, "application/json", yaml);
    r->failed_calls += st != 201;
    return st == 201 ? 0 : -1;
}

/* The JSON text of a one-document YAML text (owned), as kubectl and the
 * client libraries send a body; the YAML itself if it does not parse
 * (flexqd's answer then says what is wrong). */
static char *to_json(char *yaml)
{
    struct fq_limits lim = fq_limits_default();
    struct fq_docs docs = {0};
    struct fq_err err = {0};
    if (fq_yaml_parse(yaml, strlen(yaml), "job", &lim, &docs, &err) < 0 ||
        docs.n != 1) {
        fq_docs_release(&docs);
        return yaml;
    }
    char *j = fq_json_dumps(docs.items[0], FQ_JSON_COMPACT);
    fq_docs_release(&docs);
    free(yaml);
    return j;
}

/* Writes a job's file beforehand in CLI mode (sbatch's script exists before
 * the call too) and returns its YAML; in API mode returns the Job as the
 * JSON body to POST (owned). */
static char *prepare(struct run *r, const char *name, int pods, int cpus,
                     const char *cmd)
{
    char *y = job_yaml(name, pods, cpus, cmd);
    if (!r->cli)
        return to_json(y);
    char *path = fq_xasprintf("%s/%s.yaml", r->dir, name);
    FILE *f = fopen(path, "we");
    if (f) {
        fputs(y, f);
        fclose(f);
    }
    free(path);
    return y;
}

static int phase_up(struct run *r, const char *prefix, int want)
{
    snprintf(r->dir, sizeof(r->dir), "%s/%s-%s", r->base,
             r->cli ? "cli" : "api", prefix);
    /* The stamps live beside the data directory, not in it: a pod sees
     * flexqd's data directory as an empty tmpfs (runner/mounts.c), and
     * it runs as flexqd's pod user, so the file is writable by all. */
    snprintf(r->stamps, sizeof(r->stamps), "%s/%s-%s.stamps", r->base,
             r->cli ? "cli" : "api", prefix);
    mkdir(r->dir, 0755);
    int sfd = open(r->stamps, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (sfd >= 0) {
        fchmod(sfd, 0666);
        close(sfd);
    }
    static const char *const args[] = {"--provider", "local", "--sync", "full",
                                       "--seed",     "42",    NULL};
    if (daemon_start(&r->d, r->bin, r->dir, args) < 0)
        return -1;
    r->c.fd = connect_to(r->d.port);
    r->c.len = 0;
    if (r->c.fd < 0 || setup(&r->c) < 0 ||
        watch_start(&r->w, r->d.port, prefix, want) < 0) {
        fprintf(stderr, "jobs_api: phase %s: set-up failed\n", prefix);
        daemon_stop(&r->d);
        return -1;
    }
    r->failed_calls = 0;
    r->t0 = wall();
    r->host0 = busy_cpu_s();
    r->cpu0 = proc_cpu_s(r->d.pid);
    return 0;
}

/* The store's commits, from flexqd's last log line ("stopped
 * commits=N"): each is one fsync with --sync full. -1 when not found. */
static long log_commits(const char *log)
{
    FILE *f = fopen(log, "re");
    if (!f)
        return -1;
    char line[1024];
    long n = -1;
    while (fgets(line, sizeof(line), f)) {
        const char *p = strstr(line, "commits=");
        if (p && strstr(line, "stopped"))
            n = strtol(p + 8, NULL, 10);
    }
    fclose(f);
    return n;
}

/* bench.sh's phase_end figures; stops the daemon. Returns them (owned). */
static char *phase_down(struct run *r)
{
    double w = wall() - r->t0, c = busy_cpu_s() - r->host0;
    double cpu = proc_cpu_s(r->d.pid) - r->cpu0;
    long hwm = proc_hwm_kb(r->d.pid);
    if (hwm > r->rss_kb)
        r->rss_kb = hwm;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    watch_stop(&r->w);
    close(r->c.fd);
    daemon_stop(&r->d);
    long commits = log_commits(r->d.log);
    if (commits >= 0)
        printf("%s phase: flexqd's store made %ld commits (one fsync each)\n",
               r->cli ? "cli" : "api", commits);
    return fq_xasprintf(
        "\"ctld_cpu_s\": %.2f, \"slurmd_cpu_s\": 0.0, "
        "\"peak_rss_kb\": {\"slurmctld\": %ld, \"slurmd_sum\": 0, "
        "\"munged\": 0}, \"host_busy_cpu_s\": %.2f, \"phase_wall_s\": %.2f, "
        "\"host_cpu_utilisation\": %.3f, \"failed_calls\": %d, "
        "\"store_commits\": %ld",
        cpu, hwm, c, w, w > 0 ? c / (w * (double)(nproc > 0 ? nproc : 1)) : 0.0,
        r->failed_calls, commits);
}

static const char *mode(const struct run *r)
{
    return r->cli ? "cli" : "api";
}

static char *phase_idle(struct run *r, int n)
{
    (void)n;
    if (phase_up(r, "idle", IDLE_PROBES) < 0)
        return NULL;
    double before[IDLE_PROBES], after[IDLE_PROBES];
    char *cmd = stamp_cmd(r->stamps, 0);
    for (int k = 0; k < IDLE_PROBES; k++) {
        char name[32];
        snprintf(name, sizeof(name), "idle%d", k);
        char *y = prepare(r, name, 1, 1, cmd);
        sleep_s(1.0);
        before[k] = wall();
        submit(r, name, y);
        after[k] = wall();
        free(y);
        watch_wait(&r->w, k + 1, 60);
    }
    free(cmd);
    struct stamp *st = NULL;
    size_t n_st = read_stamps(r->stamps, &st);
    double lat[IDLE_PROBES], from_call[IDLE_PROBES], cli[IDLE_PROBES];
    size_t m = 0;
    for (int k = 0; k < IDLE_PROBES; k++) {
        char name[32];
        snprintf(name, sizeof(name), "idle%d", k);
        cli[k] = after[k] - before[k];
        for (size_t i = 0; i < n_st; i++)
            if (!strcmp(st[i].name, name) && st[i].s > 0) {
                from_call[m] = st[i].s - before[k];
                lat[m++] = st[i].s - after[k];
            }
    }
    char *mt = phase_down(r);
    char *lat_j = dist_ms(lat, m);
    char *from_j = dist_ms(from_call, m);
    char *cli_j = dist_ms(cli, IDLE_PROBES);
    printf("%s idle   submit -> start p50 %.1f ms after the answer, %.1f ms "
           "from the call (%zu probes); submit call p50 %.2f ms\n",
           mode(r), pct(lat, m, 0.5) * 1000.0, pct(from_call, m, 0.5) * 1000.0,
           m, pct(cli, IDLE_PROBES, 0.5) * 1000.0);
    char *out = fq_xasprintf(
        "\"idle\": {\"submit_to_start\": %s, "
        "\"submit_to_start_from_call\": %s, \"sbatch_cli_call\": %s, "
        "\"probes\": %d, %s}",
        lat_j, from_j, cli_j, IDLE_PROBES, mt);
    free(lat_j);
    free(from_j);
    free(cli_j);
    free(mt);
    free(st);
    return out;
}

struct pipeline {
    struct conn *c;
    char **reqs;
    int n;
};

static void *pipe_writer(void *arg)
{
    struct pipeline *p = arg;
    for (int i = 0; i < p->n; i++)
        if (write_all(p->c->fd, p->reqs[i], strlen(p->reqs[i])) < 0)
            break;
    return NULL;
}

static char *phase_bulk(struct run *r, const char *prefix, int n, int pods,
                        int cpus, bool one_batch)
{
    if (phase_up(r, prefix, n) < 0)
        return NULL;
    char **ys = fq_xcalloc((size_t)n + 1, sizeof(char *));
    struct fq_buf all = FQ_BUF_INIT;
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%s%d", prefix, i);
        ys[i] = !one_batch ? prepare(r, name, pods, cpus, NOOP_CMD) :
                r->cli     ? job_yaml(name, pods, cpus, NOOP_CMD) :
                             to_json(job_yaml(name, pods, cpus, NOOP_CMD));
        if (one_batch && r->cli)
            fq_buf_printf(&all, "%s---\n", ys[i]);
    }
    char *batch =
        one_batch && r->cli ? fq_xasprintf("%s/%s.yaml", r->dir, prefix) : NULL;
    if (batch) {
        FILE *f = fopen(batch, "we");
        if (f) {
            fputs(fq_buf_str(&all), f);
            fclose(f);
        }
    }
    fq_buf_release(&all);
    int accepted = 0;
    double ta = wall();
    if (one_batch && r->cli) {
        const char *argv[] = {r->cli_bin, "--server", r->d.url, "create",
                              "-f",       batch,      NULL};
        accepted = run_cli(r, argv) == 0 ? n : 0;
    } else if (one_batch) {
        /* N requests pipelined on the connection, N answers read */
        struct pipeline p = {&r->c, fq_xcalloc((size_t)n, sizeof(char *)), n};
        for (int i = 0; i < n; i++)
            p.reqs[i] = request("POST", JOBS_PATH, "application/json", ys[i]);
        pthread_t th;
        pthread_create(&th, NULL, pipe_writer, &p);
        for (int i = 0; i < n; i++) {
            int st = read_response(&r->c);
            accepted += st == 201;
            r->failed_calls += st != 201;
            if (st < 0)
                break;
        }
        pthread_join(th, NULL);
        for (int i = 0; i < n; i++)
            free(p.reqs[i]);
        free(p.reqs);
    } else {
        for (int i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof(name), "%s%d", prefix, i);
            accepted += submit(r, name, ys[i]) == 0;
        }
    }
    double tb = wall();
    int done = watch_wait(&r->w, n, 600);
    double tc = wall();
    int failed = r->w.failed;
    char *mt = phase_down(r);
    for (int i = 0; i < n; i++)
        free(ys[i]);
    free(ys);
    free(batch);
    double sub = tb - ta, all_s = tc - ta;
    printf("%s %-6s %d jobs: submitted in %.3f s (%.1f/s), all done in "
           "%.3f s (%.2f jobs/s end to end)%s\n",
           mode(r), prefix, n, sub, n / (sub > 0 ? sub : 1e-9), all_s,
           n / (all_s > 0 ? all_s : 1e-9),
           failed || done < n ? " (SOME FAILED)" : "");
    char *out = fq_xasprintf(
        "\"%s\": {\"jobs\": %d, \"accepted\": %d, \"finished\": %d, "
        "\"failed\": %d, \"submit_wall_s\": %.3f, \"submit_jobs_per_s\": "
        "%.1f, \"all_done_wall_s\": %.3f, \"end_to_end_jobs_per_s\": %.2f, "
        "\"drain_after_last_submit_s\": %.3f, %s%s%s}",
        prefix, n, accepted, done, failed, sub, n / (sub > 0 ? sub : 1e-9),
        all_s, n / (all_s > 0 ? all_s : 1e-9), tc - tb, mt,
        !strcmp(prefix, "seq") ? ", \"submitters\": 1" : "",
        !strcmp(prefix, "gang") ? ", \"nodes_per_job\": 2" : "");
    free(mt);
    return out;
}

static char *phase_seq(struct run *r, int n)
{
    return phase_bulk(r, "seq", n, 1, 1, false);
}

static char *phase_array(struct run *r, int n)
{
    return phase_bulk(r, "array", n, 1, 1, true);
}

static char *phase_gang(struct run *r, int n)
{
    return phase_bulk(r, "gang", n / 40, 2, CPUS, false);
}

/* --- conc: several clients at once (group commit) ------------------------- */

#define CONC_CLIENTS 8

struct conc_client {
    struct run *r;
    int first; /* submits jobs first, first + CONC_CLIENTS, ... */
    int n;
    char **ys;
    int accepted, failed;
};

static void *conc_client(void *arg)
{
    struct conc_client *cc = arg;
    struct run *r = cc->r;
    struct conn *c = NULL;
    if (!r->cli) {
        c = fq_xcalloc(1, sizeof(*c));
        c->fd = connect_to(r->d.port);
    }
    for (int i = cc->first; i < cc->n; i += CONC_CLIENTS) {
        bool ok;
        if (r->cli) {
            char *path = fq_xasprintf("%s/conc%d.yaml", r->dir, i);
            const char *argv[] = {r->cli_bin, "--server", r->d.url, "create",
                                  "-f",       path,       NULL};
            pid_t pid = fork();
            if (pid == 0) {
                int nul = open("/dev/null", O_WRONLY);
                if (nul >= 0)
                    dup2(nul, 1);
                execv(argv[0], (char *const *)argv);
                _exit(127);
            }
            int st = 0;
            while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            ok = pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
            free(path);
        } else {
            ok = c->fd >= 0 && call(c, "POST", JOBS_PATH, "application/json",
                                    cc->ys[i]) == 201;
        }
        cc->accepted += ok;
        cc->failed += !ok;
    }
    if (c) {
        if (c->fd >= 0)
            close(c->fd);
        free(c);
    }
    return NULL;
}

/*
 * conc: the seq phase's N no-op jobs from CONC_CLIENTS clients at once,
 * each one by one (a keep-alive connection each, or a CLI process after
 * another): what group commit gives when several clients wait on the
 * disk together (their requests share a commit and its fsync). Not in
 * bench.sh.
 */
static char *phase_conc(struct run *r, int n)
{
    if (phase_up(r, "conc", n) < 0)
        return NULL;
    char **ys = fq_xcalloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "conc%d", i);
        ys[i] = prepare(r, name, 1, 1, NOOP_CMD);
    }
    struct conc_client cc[CONC_CLIENTS];
    pthread_t th[CONC_CLIENTS];
    fflush(stdout);
    double ta = wall();
    for (int k = 0; k < CONC_CLIENTS; k++) {
        cc[k] = (struct conc_client){r, k, n, ys, 0, 0};
        pthread_create(&th[k], NULL, conc_client, &cc[k]);
    }
    int accepted = 0;
    for (int k = 0; k < CONC_CLIENTS; k++) {
        pthread_join(th[k], NULL);
        accepted += cc[k].accepted;
        r->failed_calls += cc[k].failed;
    }
    double tb = wall();
    int done = watch_wait(&r->w, n, 600);
    double tc = wall();
    int failed = r->w.failed;
    char *mt = phase_down(r);
    for (int i = 0; i < n; i++)
        free(ys[i]);
    free(ys);
    double sub = tb - ta, all_s = tc - ta;
    printf("%s %-6s %d jobs from %d clients: submitted in %.3f s (%.1f/s), "
           "all done in %.3f s (%.2f jobs/s end to end)%s\n",
           mode(r), "conc", n, CONC_CLIENTS, sub, n / (sub > 0 ? sub : 1e-9),
           all_s, n / (all_s > 0 ? all_s : 1e-9),
           failed || done < n ? " (SOME FAILED)" : "");
    char *out = fq_xasprintf(
        "\"conc\": {\"jobs\": %d, \"accepted\": %d, \"finished\": %d, "
        "\"failed\": %d, \"submit_wall_s\": %.3f, \"submit_jobs_per_s\": "
        "%.1f, \"all_done_wall_s\": %.3f, \"end_to_end_jobs_per_s\": %.2f, "
        "\"drain_after_last_submit_s\": %.3f, %s, \"submitters\": %d}",
        n, accepted, done, failed, sub, n / (sub > 0 ? sub : 1e-9), all_s,
        n / (all_s > 0 ? all_s : 1e-9), tc - tb, mt, CONC_CLIENTS);
    free(mt);
    return out;
}

static int count_prefix(const char *path, const char *prefix)
{
    FILE *f = fopen(path, "re");
    char line[256];
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        n += !strncmp(line, prefix, strlen(prefix));
    if (f)
        fclose(f);
    return n;
}

static char *phase_queued(struct run *r, int n)
{
    int qn = n / 5;
    if (phase_up(r, "queued", qn) < 0)
        return NULL;
    /* one blocker per pool: 2 pods x 16 cpus, stamping their start and
     * then sleeping until deleted (exec: SIGTERM reaches the sleep) */
    char *bcmd = fq_xasprintf("[/bin/bash, -c, 'echo \"$FLEXQ_POD_NAME s "
                              "$EPOCHREALTIME\" >> %s; exec sleep 3600']",
                              r->stamps);
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof(name), "blocker%d", i);
        char *y = prepare(r, name, NODES / 2, CPUS, bcmd);
        submit(r, name, y);
        free(y);
    }
    free(bcmd);
    for (double lim = wall() + 60; count_prefix(r->stamps, "blocker") < NODES;)
        if (wall() > lim) {
            fprintf(stderr, "jobs_api: blockers did not start\n");
            free(phase_down(r));
            return NULL;
        } else
            sleep_s(0.005);
    char *cmd = stamp_cmd(r->stamps, QDUR);
    char **ys = fq_xcalloc((size_t)qn + 1, sizeof(char *));
    for (int i = 0; i < qn; i++) {
        char name[32];
        snprintf(name, sizeof(name), "queued%d", i);
        ys[i] = prepare(r, name, 1, QCPUS, cmd);
    }
    free(cmd);
    double *sub = fq_xcalloc((size_t)qn, sizeof(double));
    double ta = wall();
    for (int i = 0; i < qn; i++) {
        char name[32];
        snprintf(name, sizeof(name), "queued%d", i);
        submit(r, name, ys[i]);
        sub[i] = wall();
        free(ys[i]);
    }
    free(ys);
    double tb = wall();
    sleep_s(1.0);
    double t0 = wall();
    if (r->cli) {
        const char *argv[] = {r->cli_bin, "--server", r->d.url,   "delete",
                              "job",      "blocker0", "blocker1", NULL};
        run_cli(r, argv);
    } else {
        for (int i = 0; i < 2; i++) {
            char path[128];
            snprintf(path, sizeof(path), "%s/blocker%d", JOBS_PATH, i);
            int st = call(&r->c, "DELETE", path, "application/json", NULL);
            r->failed_calls += st != 200;
        }
    }
    watch_wait(&r->w, qn, 600);
    struct stamp *st = NULL;
    size_t n_st = read_stamps(r->stamps, &st);
    double *wait = fq_xcalloc(n_st + 1, sizeof(double));
    double *after = fq_xcalloc(n_st + 1, sizeof(double));
    double *starts = fq_xcalloc(n_st + 1, sizeof(double));
    double *ends = fq_xcalloc(n_st + 1, sizeof(double));
    size_t ns = 0, ne = 0, nw = 0;
    for (size_t i = 0; i < n_st; i++) {
        int idx = job_index("queued", qn, st[i].name);
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
    char *mt = phase_down(r);
    qsort(starts, ns, sizeof(double), cmp_d);
    qsort(ends, ne, sizeof(double), cmp_d);
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
    printf("%s queued %d jobs of %d cpus x %d s: first start %.1f ms after "
           "the blockers went, wait p50 %.1f ms, refill gap p50 %.1f ms p99 "
           "%.1f ms, makespan %.2f s (ideal %.0f s)\n",
           mode(r), qn, QCPUS, QDUR, first * 1000.0,
           pct(wait, nw, 0.5) * 1000.0, pct(gaps, ng, 0.5) * 1000.0,
           pct(gaps, ng, 0.99) * 1000.0, makespan, ideal);
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

typedef char *(*phase_fn)(struct run *r, int n);

static const struct {
    const char *name;
    phase_fn fn;
} PHASES[] = {
    {"idle", phase_idle}, {"seq", phase_seq},       {"array", phase_array},
    {"gang", phase_gang}, {"queued", phase_queued}, {"conc", phase_conc},
};

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

/* One mode's phases; the bench/jobs-shaped JSON object (owned), or NULL. */
static char *run_mode(struct run *r, int n, const char *phases, int *failed)
{
    struct fq_buf ph = FQ_BUF_INIT;
    r->rss_kb = 0;
    for (size_t i = 0; i < sizeof(PHASES) / sizeof(PHASES[0]); i++) {
        if (!wanted(phases, PHASES[i].name))
            continue;
        char *frag = PHASES[i].fn(r, n);
        if (!frag) {
            *failed = 1;
            continue;
        }
        fq_buf_printf(&ph, "%s%s", ph.len ? ", " : "", frag);
        free(frag);
    }
    char *out = fq_xasprintf(
        "{\"bench\": \"flexq-%s\", \"result_dir\": \"%s\", \"profile\": "
        "\"default\", \"n\": %d, \"host_cpus\": %ld, "
        "\"scheduler_parameters\": \"(defaults)\", "
        "\"partitions_per_job\": \"ondemand,flex\", \"min_job_age_s\": null, "
        "\"restart_per_phase\": 1, \"finished_jobs\": \"kept\", "
        "\"submission\": \"%s\", \"sync\": \"full\", "
        "\"peak_rss_kb\": {\"slurmctld\": %ld, \"slurmd_sum\": 0, "
        "\"slurmd_count\": 0, \"munged\": 0}, \"phases\": {%s}}",
        mode(r), r->base, n, sysconf(_SC_NPROCESSORS_ONLN),
        r->cli ? "one flexq create process per job" :
                 "one keep-alive HTTP connection",
        r->rss_kb, fq_buf_str(&ph));
    fq_buf_release(&ph);
    return out;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 500;
    if (n < 40)
        n = 40;
    const char *phases = getenv("PHASES");
    if (!phases || !*phases)
        phases = "idle,seq,array,gang,queued,conc";
    const char *modes = getenv("MODES");
    if (!modes || !*modes)
        modes = "cli,api";
    signal(SIGPIPE, SIG_IGN);
    struct run r;
    memset(&r, 0, sizeof(r));
    char *bin = bin_path(argv[0], "FLEXQD", "flexqd");
    char *cli = bin_path(argv[0], "FLEXQ", "flexq");
    r.bin = bin;
    r.cli_bin = cli;
    if (access(bin, X_OK) || access(cli, X_OK)) {
        fprintf(stderr, "jobs_api: %s or %s is missing (build them first)\n",
                bin, cli);
        return 1;
    }
    const char *base = getenv("JOBS_DIR");
    if (!base || !*base)
        base = "/tmp";
    if ((size_t)snprintf(r.base, sizeof(r.base), "%s/flexq-bench-api-XXXXXX",
                         base) >= sizeof(r.base) ||
        !mkdtemp(r.base)) {
        fprintf(stderr, "jobs_api: cannot make a directory under %s\n", base);
        return 1;
    }
    chmod(r.base, 0755); /* the pods, run as flexqd's pod user, stamp here */
    printf("flexq jobs benchmark through flexqd (--sync full, --provider "
           "local): N=%d, 2 ordered pools x 2 nodes x %d cpus, real "
           "processes, a fresh flexqd per phase, modes %s\n",
           n, CPUS, modes);
    int failed = 0;
    char *js[2] = {NULL, NULL};
    for (int m = 0; m < 2; m++) {
        r.cli = m == 0;
        if (!wanted(modes, mode(&r)))
            continue;
        js[m] = run_mode(&r, n, phases, &failed);
        printf("FLEXQ_%s_JSON %s\n", r.cli ? "CLI" : "API", js[m]);
    }
    printf("{\"bench\": \"jobs_api\", \"n\": %d, \"cli\": %s, \"api\": %s}\n",
           n, js[0] ? js[0] : "null", js[1] ? js[1] : "null");
    free(js[0]);
    free(js[1]);
    free(bin);
    free(cli);
    rm_rf(r.base);
    return failed;
}
