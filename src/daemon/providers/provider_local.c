/*
 * provider_local.c - the `local` provider: this machine is the one node.
 *
 * How it works: at start it measures the machine (cpu count from
 * sysconf, memory from /proc/meminfo, GPUs from `nvidia-smi
 * --query-gpu=name --format=csv,noheader` run by argv with a timeout) and
 * registers one Node, named after the host, in the pool named by
 * FLEXQ_LOCAL_POOL (default "default-pool", the pool a new GKE cluster
 * has, so a fresh cluster's flavors find it). The Node carries the GKE
 * labels a pool's nodes carry (cloud.google.com/gke-nodepool,
 * kubernetes.io/hostname; with GPUs cloud.google.com/gke-accelerator and
 * the nvidia.com/gpu resource) and is Ready. The runner hands the GPUs to
 * pods through CUDA_VISIBLE_DEVICES (process.c).
 *
 * Invariants: exactly one Node for this machine while the daemon runs;
 * allocatable never exceeds what the machine has (1 cpu and 10% of the
 * memory, at most 4 GiB, are kept for flexqd and the system).
 *
 * What it does not do: scale (a machine is what it is: the autoscaler's
 * requests are refused, see local_sync), NUMA, MIG slices.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/kinds.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "flexq/quantity.h"
#include "providers/provider.h"

static int64_t meminfo_total(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f)
        return 0;
    char line[256];
    long long kb = 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemTotal: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return (int64_t)kb * 1024;
}

/* GPU names from nvidia-smi through the exec provider's runner (argv, no
 * shell, timeout). */
static int count_gpus(char *model, size_t size)
{
    static const char *const paths[] = {"/usr/bin/nvidia-smi",
                                        "/usr/local/bin/nvidia-smi", NULL};
    const char *smi = NULL;
    for (int i = 0; paths[i]; i++)
        if (access(paths[i], X_OK) == 0)
            smi = paths[i];
    if (!smi)
        return 0;
    int p[2];
    if (pipe(p) != 0)
        return 0;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return 0;
    }
    if (pid == 0) {
        dup2(p[1], 1);
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 2);
        }
        execl(smi, smi, "--query-gpu=name", "--format=csv,noheader",
              (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char buf[8192];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(buf) - 1 &&
           (n = read(p[0], buf + got, sizeof(buf) - 1 - got)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 0;
    int count = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (!*line)
            continue;
        if (count == 0)
            snprintf(model, size, "%s", line);
        count++;
    }
    return count;
}

void fq_provider_local_probe(struct fq_local_machine *m)
{
    memset(m, 0, sizeof(*m));
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    m->cpu_milli = (cpus > 0 ? cpus : 1) * 1000;
    m->memory_bytes = meminfo_total();
    m->gpus = count_gpus(m->gpu_model, sizeof(m->gpu_model));
    if (gethostname(m->hostname, sizeof(m->hostname) - 1) != 0 ||
        !m->hostname[0])
        snprintf(m->hostname, sizeof(m->hostname), "localhost");
    for (char *c = m->hostname; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
}

int fq_provider_local_gpus(void)
{
    static int gpus = -1;
    if (gpus < 0) {
        char model[128];
        gpus = count_gpus(model, sizeof(model));
    }
    return gpus;
}

static struct fq_value *qty(int64_t v, enum fq_qscale scale,
                            enum fq_qformat fmt)
{
    char buf[48];
    fq_quantity_format(v, scale, fmt, buf, sizeof(buf));
    return fq_value_str(buf);
}

/* "NVIDIA H200" -> "nvidia-h200", GKE's accelerator label style */
static void accel_label(const char *model, char *out, size_t size)
{
    size_t j = 0;
    for (size_t i = 0; model[i] && j + 1 < size; i++) {
        char c = model[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            c = '-';
        if (c == '-' && (j == 0 || out[j - 1] == '-'))
            continue;
        out[j++] = c;
    }
    while (j > 0 && out[j - 1] == '-')
        j--;
    out[j] = '\0';
}

struct fq_value *fq_provider_local_node(const struct fq_local_machine *m,
                                        const char *pool)
{
    struct fq_value *n = fq_value_map();
    fq_map_set(n, "apiVersion", fq_value_str("v1"));
    fq_map_set(n, "kind", fq_value_str("Node"));
    struct fq_value *md = fq_map_ensure_map(n, "metadata");
    fq_map_set(md, "name", fq_value_str(m->hostname));
    struct fq_value *l = fq_map_ensure_map(md, "labels");
    fq_map_set(l, "cloud.google.com/gke-nodepool", fq_value_str(pool));
    fq_map_set(l, "kubernetes.io/hostname", fq_value_str(m->hostname));
    fq_map_set(l, "kubernetes.io/os", fq_value_str("linux"));
    fq_map_set(l, "flexq.dev/provider", fq_value_str("local"));
    if (m->gpus > 0) {
        char acc[128];
        accel_label(m->gpu_model, acc, sizeof(acc));
        fq_map_set(l, "cloud.google.com/gke-accelerator", fq_value_str(acc));
    }
    fq_map_set(fq_map_ensure_map(n, "spec"), "providerID",
               fq_value_strf("local://%s", m->hostname));
    struct fq_value *st = fq_map_ensure_map(n, "status");
    struct fq_value *cap = fq_map_ensure_map(st, "capacity");
    fq_map_set(cap, "cpu", qty(m->cpu_milli, FQ_Q_MILLI, FQ_QF_DECIMAL_SI));
    fq_map_set(cap, "memory", qty(m->memory_bytes, FQ_Q_UNIT, FQ_QF_BINARY_SI));
    fq_map_set(cap, "pods", fq_value_str("110"));
    /* keep one cpu and some memory for flexqd and the system */
    int64_t cpu = m->cpu_milli > 2000 ? m->cpu_milli - 1000 : m->cpu_milli;
    int64_t keep = m->memory_bytes / 10;
    if (keep > (4ll << 30))
        keep = 4ll << 30;
    struct fq_value *al = fq_map_ensure_map(st, "allocatable");
    fq_map_set(al, "cpu", qty(cpu, FQ_Q_MILLI, FQ_QF_DECIMAL_SI));
    fq_map_set(al, "memory",
               qty(m->memory_bytes - keep, FQ_Q_UNIT, FQ_QF_BINARY_SI));
    fq_map_set(al, "pods", fq_value_str("110"));
    if (m->gpus > 0) {
        fq_map_set(cap, "nvidia.com/gpu", fq_value_int(m->gpus));
        fq_map_set(al, "nvidia.com/gpu", fq_value_int(m->gpus));
    }
    struct fq_value *c = fq_value_map();
    fq_map_set(c, "type", fq_value_str("Ready"));
    fq_map_set(c, "status", fq_value_str("True"));
    fq_map_set(c, "reason", fq_value_str("KubeletReady"));
    fq_map_set(c, "message", fq_value_str("flexqd is running on this host"));
    struct fq_value *conds = fq_value_seq();
    fq_seq_push(conds, c);
    fq_map_set(st, "conditions", conds);
    return n;
}

static int local_start(struct fq_provider *p, struct fq_err *err)
{
    struct fq_local_machine m;
    fq_provider_local_probe(&m);
    const char *pool = getenv("FLEXQ_LOCAL_POOL");
    if (!pool || !*pool)
        pool = "default-pool";
    struct fq_objstore *s = fq_engine_store(p->engine);
    if (fq_objstore_get(s, FQ_KIND_NODE, "", m.hostname)) {
        struct fq_value *n = fq_provider_local_node(&m, pool);
        return fq_objstore_update(s, n, true, NULL, NULL, err);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return fq_objstore_create(s, fq_provider_local_node(&m, pool),
                              (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
                              NULL, NULL, err);
}

/* This machine is what it is: every request of the core's autoscaler
 * (capacity/provider_protocol.h) is refused with a message that says why; the core
 * turns a refused scale-up into its backoff and a ScaleUp=False
 * condition, and a refused scale-down into a restarted unneeded clock. */
static void local_sync(struct fq_provider *p, int64_t now_ms)
{
    (void)now_ms;
    struct fq_objstore *s = fq_engine_store(p->engine);
    const struct fq_object **pools = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_NODEPOOL, NULL, &pools);
    char **names = fq_xcalloc(n + 1, sizeof(*names)), **ids = NULL;
    char **ops = NULL;
    size_t nid = 0, capid = 0, capops = 0;
    size_t *owner = NULL, capown = 0;
    for (size_t i = 0; i < n; i++) {
        names[i] = fq_xstrdup(pools[i]->name);
        const struct fq_value *reqs =
            fq_value_path(pools[i]->obj, FQ_PR_PROVIDER_REQUESTS);
        for (size_t k = 0; k < fq_value_len(reqs); k++) {
            const struct fq_value *r = fq_seq_at(reqs, k);
            if (strcmp(fq_value_path_str(r, "state", ""), "Pending") ||
                !fq_value_path_str(r, "id", NULL))
                continue;
            FQ_GROW(ids, capid, nid + 1);
            FQ_GROW(ops, capops, nid + 1);
            FQ_GROW(owner, capown, nid + 1);
            ids[nid] = fq_xstrdup(fq_value_path_str(r, "id", ""));
            ops[nid] = fq_xstrdup(fq_value_path_str(r, "op", ""));
            owner[nid++] = i;
        }
    }
    free(pools);
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    for (size_t i = 0; i < nid; i++) {
        char msg[600];
        if (!strcmp(ops[i], "create-nodes"))
            snprintf(msg, sizeof(msg),
                     "local provider: this machine (%s) is the only node; it "
                     "cannot add nodes to pool %s (use --provider exec or "
                     "sim to scale)",
                     host, names[owner[i]]);
        else
            snprintf(msg, sizeof(msg),
                     "local provider: this machine (%s) is kept; its node "
                     "is not deleted",
                     host);
        fq_provider_request_answer(p->engine, names[owner[i]], ids[i], "Failed",
                                   msg);
        free(ids[i]);
        free(ops[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(ids);
    free(ops);
    free(owner);
}

static void local_stop(struct fq_provider *p)
{
    (void)p;
}

static const struct fq_provider_ops local_ops = {"local", local_start,
                                                 local_sync, local_stop};

const struct fq_provider_ops *fq_provider_lookup(const char *name)
{
    static const struct fq_provider_ops sim_ops = {"sim", NULL, NULL, NULL};
    if (!name || !strcmp(name, "sim"))
        return &sim_ops;
    if (!strcmp(name, "local"))
        return &local_ops;
    if (!strcmp(name, "exec"))
        return &fq_provider_exec_ops;
    return NULL;
}
