/*
 * cmd_demo.c - `flexq demo`: the tutorial, end to end, with one command.
 *
 *   flexq demo [--keep] [--time-scale N] [--timeout SECONDS]
 *
 * What it does, as a user would by hand (the seed tutorial's steps):
 *   1. starts an embedded flexqd (the `flexqd` binary next to this one) in
 *      a fresh temporary directory on a free loopback port, with the sim
 *      provider and demo timings (control-plane delays sped up);
 *   2. creates the tutorial's node pools (with `flexq nodepool create`
 *      when this build has it, else by applying the equivalent NodePool
 *      objects), applies the queue config, stores train.py in the ConfigMap
 *      jax-train-script and submits the two RayJobs 2 s apart, each through
 *      the same command functions `flexq apply` / `flexq create` run;
 *   3. prints a live timeline read from the API: admissions and their
 *      flavors, the ProvisioningRequest's conditions, nodes coming up and
 *      going, the RayJobs' states and the training lines of their logs;
 *   4. ends, when both jobs are done and the TPU pools are back at zero,
 *      with the tail of each job's log (`flexq logs job/NAME --tail 8`) and
 *      a summary table (flavor, status, wait, run time, cost of its pool).
 * It exits 0 when both jobs succeeded. --keep leaves flexqd (API and
 * dashboard) running and says where; otherwise flexqd is stopped and the
 * directory removed.
 *
 * The demo's clock: flexqd's --time-scale N runs the control plane's delays
 * (boot, autoscaler scan, scale-down after 10 idle minutes, flex-start
 * queueing) N times faster; DEMO_TIME_SCALE below makes a ten-minute idle
 * period last 3 s, and brings the dws slice (2 min flex-start wait, 1 min
 * boot) up in under a second, well before job 1's training (a few seconds
 * of real processes) is over. At slower scales job 1 can finish first, and flexq's
 * default policy then rightly moves job 2 to the freed Plan A instead.
 *
 * What it does not do: talk to a real cloud, or keep anything after it
 * exits without --keep.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/conditions.h"
#include "flexq/engine.h"
#include "flexq/kinds.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"
#include "flexq/value.h"

extern char **environ;

#define DEMO_TIME_SCALE "200"
#define DEMO_TIMEOUT_S  170

/* The tutorial's queue config (reference: the guide's dws-tpu-queue.yaml,
 * with envsubst already applied), as the administrator applies it. */
static const char QUEUE_YAML[] =
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ResourceFlavor\n"
    "metadata:\n  name: default-cpu\n"
    "spec:\n  nodeLabels:\n"
    "    cloud.google.com/gke-nodepool: default-pool\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ResourceFlavor\n"
    "metadata:\n  name: on-demand\n"
    "spec:\n  nodeLabels:\n"
    "    cloud.google.com/gke-nodepool: on-demand-pool\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ResourceFlavor\n"
    "metadata:\n  name: dws\n"
    "spec:\n  nodeLabels:\n"
    "    cloud.google.com/gke-nodepool: dws-pool\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ClusterQueue\n"
    "metadata:\n  name: cluster-queue\n"
    "spec:\n"
    "  namespaceSelector: {}\n"
    "  resourceGroups:\n"
    "  - coveredResources: [cpu, memory, google.com/tpu]\n"
    "    flavors:\n"
    "    - name: default-cpu\n"
    "      resources:\n"
    "      - {name: cpu, nominalQuota: 10}\n"
    "      - {name: memory, nominalQuota: 20Gi}\n"
    "      - {name: google.com/tpu, nominalQuota: 0}\n"
    "    - name: on-demand\n"
    "      resources:\n"
    "      - {name: cpu, nominalQuota: 40}\n"
    "      - {name: memory, nominalQuota: 75Gi}\n"
    "      - {name: google.com/tpu, nominalQuota: 16}\n"
    "    - name: dws\n"
    "      resources:\n"
    "      - {name: cpu, nominalQuota: 1000000000}\n"
    "      - {name: memory, nominalQuota: 1000000000Gi}\n"
    "      - {name: google.com/tpu, nominalQuota: 1000000000}\n"
    "  admissionChecksStrategy:\n"
    "    admissionChecks:\n"
    "    - name: dws-prov\n"
    "      onFlavors: [dws]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: LocalQueue\n"
    "metadata:\n  namespace: default\n  name: user-queue\n"
    "spec:\n  clusterQueue: cluster-queue\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: AdmissionCheck\n"
    "metadata:\n  name: dws-prov\n"
    "spec:\n"
    "  controllerName: kueue.x-k8s.io/provisioning-request\n"
    "  parameters:\n"
    "    apiGroup: kueue.x-k8s.io\n"
    "    kind: ProvisioningRequestConfig\n"
    "    name: dws-config\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\n"
    "kind: ProvisioningRequestConfig\n"
    "metadata:\n  name: dws-config\n"
    "spec:\n"
    "  provisioningClassName: queued-provisioning.gke.io\n"
    "  managedResources: [google.com/tpu]\n";

/* The guide's rayjob-tpu-v6e-dws.yaml; %s is the JOB_ID. */
static const char RAYJOB_YAML[] =
    "apiVersion: ray.io/v1\n"
    "kind: RayJob\n"
    "metadata:\n"
    "  name: rayjob-tpu-v6e-dws-%s\n"
    "  labels:\n    kueue.x-k8s.io/queue-name: user-queue\n"
    "  annotations:\n    kueue.x-k8s.io/elastic-job: \"true\"\n"
    "spec:\n"
    "  shutdownAfterJobFinishes: true\n"
    "  entrypoint: python /app/train.py\n"
    "  runtimeEnvYAML: |\n    pip:\n      - jax[tpu]==0.8.2\n"
    "      - pandas==2.3.3\n"
    "  rayClusterSpec:\n"
    "    enableInTreeAutoscaling: true\n"
    "    headGroupSpec:\n"
    "      rayStartParams: {}\n"
    "      template:\n        spec:\n"
    "          nodeSelector:\n"
    "            cloud.google.com/gke-nodepool: default-pool\n"
    "          containers:\n"
    "            - name: ray-head\n"
    "              image: rayproject/ray:2.53.0-py311\n"
    "              ports:\n"
    "                - {containerPort: 6379, name: gcs-server}\n"
    "                - {containerPort: 8265, name: dashboard}\n"
    "                - {containerPort: 10001, name: client}\n"
    "              resources:\n"
    "                limits: {cpu: \"2\", memory: \"4Gi\"}\n"
    "                requests: {cpu: \"2\", memory: \"4Gi\"}\n"
    "              volumeMounts:\n"
    "                - {mountPath: /app, name: train-script-volume}\n"
    "          volumes:\n"
    "            - name: train-script-volume\n"
    "              configMap: {name: jax-train-script}\n"
    "    workerGroupSpecs:\n"
    "      - replicas: 1\n        minReplicas: 1\n        maxReplicas: 2\n"
    "        numOfHosts: 4\n        groupName: tpu-group\n"
    "        rayStartParams: {}\n"
    "        template:\n          spec:\n"
    "            tolerations:\n"
    "              - {key: google.com/tpu, operator: Exists, "
    "effect: NoSchedule}\n"
    "              - {key: cloud.google.com/gke-queued, operator: Exists, "
    "effect: NoSchedule}\n"
    "            containers:\n"
    "              - name: ray-worker\n"
    "                image: rayproject/ray:2.53.0-py311\n"
    "                resources:\n"
    "                  limits: {cpu: \"8\", google.com/tpu: \"4\", "
    "memory: \"16Gi\"}\n"
    "                  requests: {cpu: \"8\", google.com/tpu: \"4\", "
    "memory: \"16Gi\"}\n"
    "                volumeMounts:\n"
    "                  - {mountPath: /app, name: train-script-volume}\n"
    "            volumes:\n"
    "              - name: train-script-volume\n"
    "                configMap: {name: jax-train-script}\n"
    "            nodeSelector:\n"
    "              cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice\n"
    "              cloud.google.com/gke-tpu-topology: 4x4\n";

/* The pools, when this build has no `flexq nodepool create`. */
static const char POOLS_YAML[] =
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\n"
    "metadata:\n  name: default-pool\n"
    "spec:\n  machineType: n2-standard-16\n  location: us-east5-b\n"
    "  initialNodeCount: 1\n"
    "  autoscaling: {enabled: true, minNodeCount: 1, maxNodeCount: 3}\n"
    "---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\n"
    "metadata:\n  name: on-demand-pool\n"
    "spec:\n  machineType: ct6e-standard-4t\n  tpuTopology: 4x4\n"
    "  location: us-east5-b\n  reservationAffinity: none\n"
    "  initialNodeCount: 0\n"
    "  autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: 4}\n"
    "---\n"
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\n"
    "metadata:\n  name: dws-pool\n"
    "spec:\n  machineType: ct6e-standard-4t\n  tpuTopology: 4x4\n"
    "  location: us-east5-b\n  flexStart: true\n"
    "  queuedProvisioning: {enabled: true}\n  initialNodeCount: 0\n"
    "  autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: 4}\n";

static const char *const POOLS[] = {"default-pool", "on-demand-pool",
                                    "dws-pool"};
#define NJOBS 2

struct demo {
    char dir[PATH_MAX];
    char server[64];
    pid_t daemon;
    bool keep;
    struct timespec t0;
    struct fq_client *c;
    char **seen; /* keys of what the timeline already said */
    size_t nseen, cap;
    int64_t log_off[NJOBS];
    char *pool_state[3];
};

/* --- small helpers ---------------------------------------------------- */

static double elapsed(const struct demo *d)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - d->t0.tv_sec) +
           (double)(t.tv_nsec - d->t0.tv_nsec) / 1e9;
}

static void say(const struct demo *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(const struct demo *d, const char *fmt, ...)
{
    va_list ap;
    printf("[%5.1fs] ", elapsed(d));
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* True the first time `key` is seen. */
static bool first(struct demo *d, const char *key)
{
    for (size_t i = 0; i < d->nseen; i++)
        if (strcmp(d->seen[i], key) == 0)
            return false;
    FQ_GROW(d->seen, d->cap, d->nseen + 1);
    d->seen[d->nseen++] = fq_xstrdup(key);
    return true;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(text, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

/* Runs a flexq command in this process, as `flexq ARGS...` would. */
/*
 * Interrupted (Ctrl-C, `flexq demo | head` closing the pipe, kill): the
 * embedded flexqd runs in its own process group, so the terminal's signal
 * does not reach it; stop it at once (unless --keep) and let the main loop
 * end, clean up and exit non-zero.
 */
static volatile sig_atomic_t g_interrupted;
static volatile pid_t g_daemon;
static volatile sig_atomic_t g_keep;

static void on_interrupt(int sig)
{
    g_interrupted = sig;
    if (!g_keep && g_daemon > 0)
        kill(g_daemon, SIGTERM);
}

static int run_cmd(const char *const *args)
{
    if (g_interrupted)
        return -1;
    int argc = 0;
    while (args[argc])
        argc++;
    const struct fq_cli_cmd *cmd = fq_cli_find(args[0]);
    if (!cmd)
        return -1;
    printf("$ flexq");
    for (int i = 0; i < argc; i++)
        printf(" %s", args[i]);
    putchar('\n');
    fflush(stdout);
    char **argv = fq_xcalloc((size_t)argc + 1, sizeof(*argv));
    for (int i = 0; i < argc; i++)
        argv[i] = fq_xstrdup(args[i]);
    int rc = cmd->fn(argc, argv);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
    fflush(stdout);
    return rc;
}

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    int port = -1;
    if (bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(s);
    return port;
}

/* The flexqd binary beside this flexq, else "flexqd" on PATH. */
static char *flexqd_path(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            char *p = fq_xasprintf("%s/flexqd", self);
            if (access(p, X_OK) == 0)
                return p;
            free(p);
        }
    }
    return fq_xstrdup("flexqd");
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* --- the daemon ------------------------------------------------------- */

static int start_daemon(struct demo *d, const char *time_scale)
{
    int port = free_port();
    if (port <= 0) {
        fprintf(stderr, "flexq demo: no free port on 127.0.0.1\n");
        return -1;
    }
    char listen[32], data[PATH_MAX + 8], logp[PATH_MAX + 16];
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
    snprintf(data, sizeof(data), "%s/data", d->dir);
    snprintf(logp, sizeof(logp), "%s/flexqd.log", d->dir);
    snprintf(d->server, sizeof(d->server), "http://127.0.0.1:%d", port);
    char *bin = flexqd_path();
    char *argv[] = {bin,
                    (char *)"--listen",
                    listen,
                    (char *)"--data-dir",
                    data,
                    (char *)"--provider",
                    (char *)"sim",
                    (char *)"--time-scale",
                    (char *)time_scale,
                    (char *)"--seed",
                    (char *)"1",
                    (char *)"--sync",
                    (char *)"normal",
                    (char *)"--log-level",
                    (char *)"warn",
                    NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, logp,
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    int rc = posix_spawnp(&d->daemon, bin, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        fprintf(stderr, "flexq demo: cannot start %s: %s\n", bin, strerror(rc));
        free(bin);
        d->daemon = 0;
        return -1;
    }
    free(bin);
    d->c = fq_client_new(d->server, NULL);
    /* Wait for /healthz, at most 15 s. */
    for (int i = 0; i < 150; i++) {
        int status = 0;
        char *text = NULL;
        struct fq_err err;
        int r = fq_client_request(d->c, "GET", "/healthz", NULL, NULL, 0, NULL,
                                  &status, &text, &err);
        free(text);
        if (r == 0 && status == 200)
            return 0;
        int ws;
        if (waitpid(d->daemon, &ws, WNOHANG) == d->daemon) {
            d->daemon = 0;
            break;
        }
        pause_ms(100);
    }
    fprintf(stderr, "flexq demo: flexqd did not start; see %s\n", logp);
    return -1;
}

static void stop_daemon(struct demo *d)
{
    if (d->daemon <= 0)
        return;
    kill(d->daemon, SIGTERM);
    for (int i = 0; i < 50; i++) {
        int ws;
        if (waitpid(d->daemon, &ws, WNOHANG) == d->daemon) {
            d->daemon = 0;
            return;
        }
        pause_ms(100);
    }
    kill(d->daemon, SIGKILL);
    waitpid(d->daemon, NULL, 0);
    d->daemon = 0;
}

/* --- reading the cluster ---------------------------------------------- */

/* GET a list; returns its items (owned list object, items inside). */
static struct fq_value *list(struct demo *d, enum fq_kind k, const char *ns,
                             const char *query)
{
    char *path = fq_client_path(k, ns, NULL, NULL, query);
    struct fq_value *v = NULL;
    struct fq_err err;
    if (fq_client_get(d->c, path, &v, &err) != 0)
        v = NULL;
    free(path);
    return v;
}

/* "job 1" for rayjob-tpu-v6e-dws-1 (or the name itself). */
static const char *short_job(const char *name, char *buf, size_t n)
{
    const char *dash = strrchr(name ? name : "", '-');
    snprintf(buf, n, "job %s", dash ? dash + 1 : "?");
    return buf;
}

/* The TPU flavor of a workload's worker podset, or NULL. */
static const char *tpu_flavor(const struct fq_value *wl)
{
    const struct fq_value *psa = fq_value_path(wl, FQ_WL_PODSET_ASSIGNMENTS);
    for (size_t i = 0; i < fq_value_len(psa); i++) {
        const struct fq_value *f = fq_map_get(
            fq_map_get(fq_seq_at(psa, i), "flavors"), "google.com/tpu");
        if (fq_value_as_str(f))
            return fq_value_as_str(f);
    }
    return NULL;
}

static void watch_workloads(struct demo *d)
{
    struct fq_value *l = list(d, FQ_KIND_WORKLOAD, "default", NULL);
    const struct fq_value *items = fq_map_get(l, "items");
    char key[512], jb[64];
    for (size_t i = 0; i < fq_value_len(items); i++) {
        const struct fq_value *w = fq_seq_at(items, i);
        const char *name = fq_meta_name(w);
        const char *owner =
            fq_value_path_str(fq_seq_at(fq_meta_owners(w), 0), "name", name);
        const char *job = short_job(owner, jb, sizeof(jb));
        const char *fl = tpu_flavor(w);
        if (fq_cond_true(w, "QuotaReserved") && fl) {
            snprintf(key, sizeof(key), "wl/%s/reserved/%s", name, fl);
            if (first(d, key) && !fq_cond_true(w, "Admitted"))
                say(d,
                    "%s: quota reserved on flavor %s, waiting for its "
                    "admission check",
                    job, fl);
        }
        const struct fq_value *acs = fq_value_path(w, FQ_WL_ADMISSION_CHECKS);
        for (size_t k = 0; k < fq_value_len(acs); k++) {
            const struct fq_value *ac = fq_seq_at(acs, k);
            snprintf(key, sizeof(key), "wl/%s/check/%s/%s", name,
                     fq_value_path_str(ac, "name", ""),
                     fq_value_path_str(ac, "state", ""));
            if (first(d, key))
                say(d, "%s: admission check %s is %s%s%s", job,
                    fq_value_path_str(ac, "name", ""),
                    fq_value_path_str(ac, "state", ""),
                    *fq_value_path_str(ac, "message", "") ? ": " : "",
                    fq_value_path_str(ac, "message", ""));
        }
        if (fq_cond_true(w, "Admitted")) {
            snprintf(key, sizeof(key), "wl/%s/admitted", name);
            if (first(d, key))
                say(d, "%s: admitted by cluster-queue on flavor %s%s", job,
                    fl ? fl : "?",
                    fl && !strcmp(fl, "dws") ? " (Plan B, flex-start)" :
                                               " (Plan A, on-demand)");
        }
        if (fq_cond_true(w, "Finished")) {
            snprintf(key, sizeof(key), "wl/%s/finished", name);
            if (first(d, key))
                say(d, "%s: workload finished (%s), quota released", job,
                    fq_value_path_str(fq_cond_find(w, "Finished"), "reason",
                                      ""));
        }
    }
    fq_value_free(l);
}

static void watch_provreqs(struct demo *d)
{
    struct fq_value *l = list(d, FQ_KIND_PROVISIONINGREQUEST, "default", NULL);
    const struct fq_value *items = fq_map_get(l, "items");
    static const char *const types[] = {"Accepted", "Provisioned", "Failed",
                                        "BookingExpired", "CapacityRevoked"};
    char key[512];
    for (size_t i = 0; i < fq_value_len(items); i++) {
        const struct fq_value *p = fq_seq_at(items, i);
        const char *name = fq_meta_name(p);
        snprintf(key, sizeof(key), "pr/%s", name);
        if (first(d, key))
            say(d, "ProvisioningRequest %s created (class %s)", name,
                fq_value_path_str(p, FQ_PR_CLASS, ""));
        for (size_t k = 0; k < sizeof(types) / sizeof(*types); k++) {
            if (!fq_cond_true(p, types[k]))
                continue;
            snprintf(key, sizeof(key), "pr/%s/%s", name, types[k]);
            if (first(d, key))
                say(d, "ProvisioningRequest %s: %s (%s)", name, types[k],
                    fq_value_path_str(fq_cond_find(p, types[k]), "reason", ""));
        }
    }
    fq_value_free(l);
}

/* Returns the number of nodes in the TPU pools. */
static int watch_nodes(struct demo *d)
{
    struct fq_value *l = list(d, FQ_KIND_NODE, NULL, NULL);
    const struct fq_value *items = fq_map_get(l, "items");
    int tpu_nodes = 0;
    for (size_t p = 0; p < 3; p++) {
        int total = 0, ready = 0;
        for (size_t i = 0; i < fq_value_len(items); i++) {
            const struct fq_value *n = fq_seq_at(items, i);
            const char *pool = fq_value_as_str(
                fq_map_get(fq_meta_labels(n), "cloud.google.com/gke-nodepool"));
            if (!pool || strcmp(pool, POOLS[p]) != 0)
                continue;
            total++;
            ready += fq_cond_true(n, "Ready");
        }
        if (p > 0)
            tpu_nodes += total;
        char *st = fq_xasprintf("%d/%d", ready, total);
        if (!d->pool_state[p] || strcmp(d->pool_state[p], st) != 0) {
            if (d->pool_state[p] || total > 0)
                say(d, "node pool %s: %d node%s, %d ready", POOLS[p], total,
                    total == 1 ? "" : "s", ready);
            free(d->pool_state[p]);
            d->pool_state[p] = st;
        } else {
            free(st);
        }
    }
    fq_value_free(l);
    return tpu_nodes;
}

/* Prints the new training lines of a RayJob's submitter log. */
static void watch_log(struct demo *d, int j, const char *rj)
{
    char *sel =
        fq_xasprintf("labelSelector=batch.kubernetes.io%%2Fjob-name%%3D%s", rj);
    struct fq_value *l = list(d, FQ_KIND_POD, "default", sel);
    free(sel);
    const struct fq_value *items = fq_map_get(l, "items");
    const struct fq_value *pod = fq_seq_at(items, fq_value_len(items) - 1);
    if (!pod) {
        fq_value_free(l);
        return;
    }
    char q[64];
    snprintf(q, sizeof(q), "format=json&offset=%lld", (long long)d->log_off[j]);
    char *path =
        fq_client_path(FQ_KIND_POD, "default", fq_meta_name(pod), "log", q);
    struct fq_value *v = NULL;
    struct fq_err err;
    if (fq_client_get(d->c, path, &v, &err) == 0) {
        const char *text = fq_value_path_str(v, "log", "");
        int64_t off = fq_value_path_int(v, "offset", d->log_off[j]);
        /* Only whole lines; the rest comes with the next poll. */
        const char *end = strrchr(text, '\n');
        if (end) {
            char jb[64];
            short_job(rj, jb, sizeof(jb));
            size_t used = (size_t)(end - text) + 1;
            char *chunk = fq_xstrndup(text, used);
            for (char *line = strtok(chunk, "\n"); line;
                 line = strtok(NULL, "\n")) {
                if (strstr(line, "[repeated "))
                    continue; /* the same line from the other workers */
                if (strstr(line, "Epoch") ||
                    strstr(line, "Training Complete") ||
                    strstr(line, "Run Result") || strstr(line, "succeeded") ||
                    strstr(line, "failed"))
                    say(d, "%s | %s", jb, line);
            }
            free(chunk);
            d->log_off[j] = off - (int64_t)(strlen(text) - used);
        }
    }
    fq_value_free(v);
    free(path);
    fq_value_free(l);
}

/* Returns how many RayJobs are in a terminal deployment state. */
static int watch_rayjobs(struct demo *d)
{
    struct fq_value *l = list(d, FQ_KIND_RAYJOB, "default", NULL);
    const struct fq_value *items = fq_map_get(l, "items");
    int done = 0;
    char key[512], jb[64];
    for (size_t i = 0; i < fq_value_len(items) && i < NJOBS; i++) {
        const struct fq_value *r = fq_seq_at(items, i);
        const char *name = fq_meta_name(r);
        const char *ds = fq_value_path_str(r, FQ_RJ_DEPLOYMENT_STATUS, "");
        const char *js = fq_value_path_str(r, FQ_RJ_JOB_STATUS, "");
        snprintf(key, sizeof(key), "rj/%s/%s/%s", name, ds, js);
        if (*ds && first(d, key))
            say(d, "%s: RayJob %s is %s%s%s", short_job(name, jb, sizeof(jb)),
                name, ds, *js ? ", Ray job " : "", js);
        if (!strcmp(ds, "Running") || !strcmp(ds, "Complete") ||
            !strcmp(ds, "Failed"))
            watch_log(d, (int)i, name);
        done += !strcmp(ds, "Complete") || !strcmp(ds, "Failed");
    }
    fq_value_free(l);
    return done;
}

/* --- the story -------------------------------------------------------- */

static int setup(struct demo *d)
{
    char path[PATH_MAX + 32];
    int rc = 0;
    puts("\n== Administrator: node pools (Plan A on-demand, Plan B DWS "
         "flex-start)");
    if (fq_cli_find("nodepool")) {
        const char *a[] = {"nodepool",
                           "create",
                           "on-demand-pool",
                           "--machine-type=ct6e-standard-4t",
                           "--tpu-topology=4x4",
                           "--reservation-affinity=none",
                           "--enable-autoscaling",
                           "--num-nodes=0",
                           "--min-nodes=0",
                           "--max-nodes=4",
                           NULL};
        const char *b[] = {
            "nodepool",           "create",
            "dws-pool",           "--machine-type=ct6e-standard-4t",
            "--tpu-topology=4x4", "--enable-autoscaling",
            "--num-nodes=0",      "--min-nodes=0",
            "--max-nodes=4",      "--enable-queued-provisioning",
            "--flex-start",       NULL};
        const char *c[] = {"nodepool", "describe", "dws-pool",
                           "--format=get(config.flexStart)", NULL};
        rc |= run_cmd(a);
        rc |= run_cmd(b);
        rc |= run_cmd(c); /* the tutorial's check: prints True */
    } else {
        snprintf(path, sizeof(path), "%s/pools.yaml", d->dir);
        write_file(path, POOLS_YAML, sizeof(POOLS_YAML) - 1);
        const char *a[] = {"apply", "-f", path, NULL};
        rc |= run_cmd(a);
    }
    puts("\n== Administrator: the queue config (dws-tpu-queue.yaml)");
    snprintf(path, sizeof(path), "%s/dws-tpu-queue.yaml", d->dir);
    write_file(path, QUEUE_YAML, sizeof(QUEUE_YAML) - 1);
    const char *q[] = {"apply", "-f", path, NULL};
    rc |= run_cmd(q);

    puts("\n== Developer: the training script and two RayJobs");
    const char *train = FLEXQ_SOURCE_DIR "/examples/train.py";
    char *cm = fq_xasprintf("--from-file=%s", train);
    const char *c[] = {"create", "configmap", "jax-train-script", cm, NULL};
    rc |= run_cmd(c);
    free(cm);
    for (int j = 1; j <= NJOBS && rc == 0; j++) {
        char id[8];
        snprintf(id, sizeof(id), "%d", j);
        char *y = fq_xasprintf(RAYJOB_YAML, id);
        snprintf(path, sizeof(path), "%s/rayjob-%d.yaml", d->dir, j);
        write_file(path, y, strlen(y));
        free(y);
        const char *a[] = {"apply", "-f", path, NULL};
        rc |= run_cmd(a);
        if (j < NJOBS)
            pause_ms(2000);
    }
    return rc;
}

static void summary(struct demo *d)
{
    char jb[64];
    puts("\n== Logs (flexq logs job/NAME --tail 8)");
    for (int j = 1; j <= NJOBS; j++) {
        char target[64];
        snprintf(target, sizeof(target), "job/rayjob-tpu-v6e-dws-%d", j);
        const char *a[] = {"logs", target, "--tail", "8", NULL};
        run_cmd(a);
        putchar('\n');
    }
    struct fq_value *rjl = list(d, FQ_KIND_RAYJOB, "default", NULL);
    struct fq_value *wll = list(d, FQ_KIND_WORKLOAD, "default", NULL);
    struct fq_value *npl = list(d, FQ_KIND_NODEPOOL, NULL, NULL);
    puts("== Summary");
    printf("%-6s %-22s %-10s %-10s %-9s %-9s %s\n", "JOB", "NAME", "FLAVOR",
           "STATUS", "WAITED", "RAN", "COST OF ITS POOL (USD)");
    const struct fq_value *rjs = fq_map_get(rjl, "items");
    for (size_t i = 0; i < fq_value_len(rjs); i++) {
        const struct fq_value *r = fq_seq_at(rjs, i);
        const char *name = fq_meta_name(r);
        const char *flavor = "-";
        const struct fq_value *wls = fq_map_get(wll, "items");
        for (size_t k = 0; k < fq_value_len(wls); k++) {
            const struct fq_value *w = fq_seq_at(wls, k);
            const char *owner =
                fq_value_path_str(fq_seq_at(fq_meta_owners(w), 0), "name", "");
            if (!strcmp(owner, name) && tpu_flavor(w))
                flavor = tpu_flavor(w);
        }
        int64_t created = 0, start = 0, end = 0;
        fq_time_parse(fq_value_path_str(r, FQ_META_CREATED, ""), &created);
        fq_time_parse(fq_value_path_str(r, "status.startTime", ""), &start);
        fq_time_parse(fq_value_path_str(r, FQ_JOB_END_TIME, ""), &end);
        char waited[32] = "-", ran[32] = "-", cost[64] = "-";
        if (start && created)
            snprintf(waited, sizeof(waited), "%llds",
                     (long long)((start - created) / 1000));
        if (start && end)
            snprintf(ran, sizeof(ran), "%llds",
                     (long long)((end - start) / 1000));
        const char *pool = !strcmp(flavor, "dws")       ? "dws-pool" :
                           !strcmp(flavor, "on-demand") ? "on-demand-pool" :
                                                          NULL;
        const struct fq_value *pools = fq_map_get(npl, "items");
        for (size_t k = 0; pool && k < fq_value_len(pools); k++) {
            const struct fq_value *p = fq_seq_at(pools, k);
            const struct fq_value *usd = fq_value_path(p, FQ_STATUS_COST_USD);
            if (strcmp(fq_meta_name(p), pool) || !usd)
                continue;
            /* A decimal string ("0.5027"), or a number. */
            double v =
                usd->type == FQ_V_NUM ? usd->u.num.d :
                fq_value_as_str(usd)  ? strtod(fq_value_as_str(usd), NULL) :
                                        0;
            snprintf(cost, sizeof(cost), "%.2f (%s)", v, pool);
        }
        printf("%-6s %-22s %-10s %-10s %-9s %-9s %s\n",
               short_job(name, jb, sizeof(jb)) + 4, name, flavor,
               fq_value_path_str(r, FQ_RJ_JOB_STATUS, "-"), waited, ran, cost);
    }
    fq_value_free(rjl);
    fq_value_free(wll);
    fq_value_free(npl);
}

static int count_succeeded(struct demo *d)
{
    struct fq_value *l = list(d, FQ_KIND_RAYJOB, "default", NULL);
    const struct fq_value *items = fq_map_get(l, "items");
    int ok = 0;
    for (size_t i = 0; i < fq_value_len(items); i++)
        ok += !strcmp(
            fq_value_path_str(fq_seq_at(items, i), FQ_RJ_JOB_STATUS, ""),
            "SUCCEEDED");
    fq_value_free(l);
    return ok;
}

static void catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);
}

static int demo_main(int argc, char **argv)
{
    struct demo d;
    memset(&d, 0, sizeof(d));
    const char *scale = DEMO_TIME_SCALE;
    long timeout = DEMO_TIMEOUT_S;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keep"))
            d.keep = true;
        else if (!strcmp(argv[i], "--time-scale") && i + 1 < argc)
            scale = argv[++i];
        else if (!strncmp(argv[i], "--time-scale=", 13))
            scale = argv[i] + 13;
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = strtol(argv[++i], NULL, 10);
        else
            return fq_cli_usage_error("demo", "unknown argument %s", argv[i]);
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(d.dir, sizeof(d.dir), "%s/flexq-demo-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d.dir)) {
        fprintf(stderr, "flexq demo: mkdtemp: %s\n", strerror(errno));
        return FQ_CLI_FAIL;
    }
    clock_gettime(CLOCK_MONOTONIC, &d.t0);
    printf("flexq demo: the GKE tutorial \"Optimize AI training on TPUs with "
           "DWS and Kueue\", on this machine.\n");
    int rc = FQ_CLI_FAIL;
    g_keep = d.keep;
    catch_interrupts();
    if (start_daemon(&d, scale) != 0)
        goto out;
    g_daemon = d.daemon;
    if (g_interrupted) /* before the daemon's pid was known */
        on_interrupt(g_interrupted);
    struct fq_cli_global g = {d.server, NULL};
    fq_cli_global_set(&g);
    printf("flexqd is up at %s (data in %s)\n", d.server, d.dir);
    if (setup(&d) != 0) {
        if (!g_interrupted)
            fprintf(stderr, "flexq demo: setting up the tutorial failed\n");
        goto out;
    }
    puts("\n== Timeline");
    bool jobs_done = false;
    while (!g_interrupted && elapsed(&d) < (double)timeout) {
        watch_workloads(&d);
        watch_provreqs(&d);
        int done = watch_rayjobs(&d);
        int tpu_nodes = watch_nodes(&d);
        if (done == NJOBS && !jobs_done) {
            jobs_done = true;
            say(&d, "both jobs are done; waiting for the TPU pools to scale "
                    "back to zero");
        }
        if (jobs_done && tpu_nodes == 0) {
            say(&d, "TPU pools are back at zero nodes");
            break;
        }
        pause_ms(250);
    }
    if (g_interrupted)
        goto out;
    if (!jobs_done)
        say(&d, "timed out after %ld s", timeout);
    summary(&d);
    rc = count_succeeded(&d) == NJOBS && jobs_done ? FQ_CLI_OK : FQ_CLI_FAIL;
out:
    if (g_interrupted && g_interrupted != SIGPIPE)
        fprintf(stderr, "\nflexq demo: interrupted\n");
    g_daemon = 0;
    if (d.keep && d.daemon > 0) {
        printf("\n--keep: flexqd (pid %d) keeps running.\n"
               "  API and dashboard: %s\n  data: %s\n"
               "  try: FLEXQ_SERVER=%s flexq get rayjobs,workloads\n"
               "  stop it with: kill %d\n",
               (int)d.daemon, d.server, d.dir, d.server, (int)d.daemon);
    } else {
        stop_daemon(&d);
        if (rc != FQ_CLI_OK && !g_interrupted)
            fprintf(stderr,
                    "flexq demo: failed; the daemon's log was %s/"
                    "flexqd.log (removed)\n",
                    d.dir);
        nftw(d.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    fq_client_free(d.c);
    for (size_t i = 0; i < d.nseen; i++)
        free(d.seen[i]);
    free(d.seen);
    for (int p = 0; p < 3; p++)
        free(d.pool_state[p]);
    return rc;
}

const struct fq_cli_cmd fq_cli_cmd_demo = {
    "demo", demo_main,
    "Run the DWS + Kueue tutorial end to end on this machine",
    "Usage: flexq demo [--keep] [--time-scale N] [--timeout SECONDS]\n\n"
    "Starts flexqd in a temporary directory (sim provider, demo timings),\n"
    "creates the tutorial's node pools, applies its queue config and two\n"
    "RayJobs, prints a live timeline, the jobs' log tails and a summary.\n"
    "Exits 0 when both jobs succeeded.\n\n"
    "  --keep           leave flexqd running (API + dashboard) afterwards\n"
    "  --time-scale N   run the control plane N times faster\n"
    "                   (default " DEMO_TIME_SCALE ")\n"
    "  --timeout S      give up after S seconds (default 170)\n"};
