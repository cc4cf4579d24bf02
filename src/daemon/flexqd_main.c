/*
 * flexqd_main.c - the flexqd command line.
 *
 * Parses the flags, then either checks a data directory (--check DIR) or
 * runs the daemon (loop.c) until SIGTERM / SIGINT. Exit status: 0 after a
 * clean shutdown or a clean check, 1 on a start-up error, a failed commit
 * or a check that found problems.
 *
 * What it does not do: daemonise or write a pid file (run it under a
 * supervisor, or in the foreground).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "flexq/alloc.h"
#include "flexq/nodepool.h"
#include "log.h"

static const char usage[] =
    "Usage: flexqd [OPTIONS]\n"
    "\n"
    "Runs the flexq control plane: the Kueue-style queues, the autoscaler,\n"
    "the job controllers and the HTTP/JSON API, with a durable store.\n"
    "\n"
    "  --listen HOST:PORT   address of the API (default 127.0.0.1:8265)\n"
    "  --tls-listen ADDR    HTTPS address of the same API: HOST:PORT, off,\n"
    "                       or auto (default: --listen's port + 1; the CA\n"
    "                       is made at first start in DIR/tls)\n"
    "  --data-dir DIR       store directory (default $XDG_DATA_HOME/flexq\n"
    "                       or ~/.local/share/flexq)\n"
    "  --provider NAME      sim (default), local or exec\n"
    "  --executor NAME      local (default: pods are processes here) or\n"
    "                       slurm (each gang is a Slurm job on the cluster\n"
    "                       SLURM_CONF names; docs/runtime.md)\n"
    "  --slurm-partition POOL=PARTITION\n"
    "                       with --executor slurm, node pool POOL is backed\n"
    "                       by Slurm partition PARTITION (default: the\n"
    "                       pool's name; repeatable; a pool's own\n"
    "                       flexq.dev/slurm-partition annotation wins)\n"
    "  --config FILE        YAML: a FlexqdConfig document (policy,\n"
    "                       waitForPodsReady, seed) and objects to apply at\n"
    "                       start (CapacityModel, NodePools, ...)\n"
    "  --time-scale N       run the control plane's timers N times faster\n"
    "                       (boot, autoscaler scan, backoffs, flex-start\n"
    "                       queueing): 25 turns 10 minutes into 24 s\n"
    "                       (default 1, real time)\n"
    "  --tokens FILE        require bearer tokens (see docs/api.md)\n"
    "  --event-ttl SECONDS  keep Events this long after last seen (3600)\n"
    "  --max-events N       keep at most N Events, oldest go first (10000)\n"
    "  --header-timeout S   close a connection whose request headers take\n"
    "                       longer (408; default 10)\n"
    "  --max-client-connections N\n"
    "                       open connections per client address; more get\n"
    "                       429 (default 256; raise it behind a proxy)\n"
    "  --insecure-listen    allow a non-loopback --listen without --tokens\n"
    "                       (refused otherwise; anyone reaching it is admin)\n"
    "  --pod-user USER      user name or UID:GID pods run as when flexqd is\n"
    "                       root (default flexq-pod; docs/runtime.md)\n"
    "  --allow-run-as-user  honour securityContext.runAsUser/runAsGroup\n"
    "                       (default: such a pod fails)\n"
    "  --sync full|normal   fsync every commit (full, default) or not\n"
    "  --seed N             seed of the engine's PRNG (default: random)\n"
    "  --log-level LEVEL    debug, info (default), warn, error\n"
    "  --check DIR          verify a data directory and exit\n"
    "  --version            print the version\n";

static char *default_data_dir(void)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    if (xdg && *xdg)
        return fq_xasprintf("%s/flexq", xdg);
    const char *home = getenv("HOME");
    return fq_xasprintf("%s/.local/share/flexq", home && *home ? home : ".");
}

static int check(const char *dir)
{
    struct fq_buf report = FQ_BUF_INIT;
    struct fq_err err = {0};
    int rc = fq_store_check(dir, &report, &err);
    fputs(fq_buf_str(&report), stdout);
    fq_buf_release(&report);
    if (rc < 0) {
        fprintf(stderr, "flexqd: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct fq_daemon_opts o = {
        .listen = "127.0.0.1:8265",
        .provider = "sim",
        .time_scale = 1.0,
        .sync = FQ_STORE_SYNC_FULL,
    };
    char *data_dir = NULL;
    char partitions[4096] = ""; /* --slurm-partition POOL=PART,... */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        const char *eq = strchr(a, '=');
        char name[64];
        if (!strncmp(a, "--", 2) && eq && (size_t)(eq - a) < sizeof(name)) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            v = eq + 1;
        } else {
            snprintf(name, sizeof(name), "%s", a);
        }
        if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(name, "--insecure-listen")) {
            o.insecure_listen = true;
            continue;
        }
        if (!strcmp(name, "--version")) {
            printf("flexqd v%s\n", FLEXQ_VERSION);
            return 0;
        }
        if (!strcmp(name, "--allow-run-as-user")) {
            o.allow_run_as_user = true;
            continue;
        }
        if (!v) {
            if (i + 1 >= argc || strncmp(name, "--", 2) != 0) {
                fprintf(stderr, "flexqd: %s: %s\n%s", a,
                        strncmp(name, "--", 2) ? "unknown argument" :
                                                 "needs a value",
                        usage);
                return 1;
            }
            v = argv[++i];
        }
        if (!strcmp(name, "--listen")) {
            o.listen = v;
        } else if (!strcmp(name, "--tls-listen")) {
            o.tls_listen = v;
        } else if (!strcmp(name, "--data-dir")) {
            o.data_dir = v;
        } else if (!strcmp(name, "--provider")) {
            if (strcmp(v, "sim") && strcmp(v, "local") && strcmp(v, "exec")) {
                fprintf(stderr,
                        "flexqd: --provider: \"%s\" is not sim, local or "
                        "exec\n",
                        v);
                return 1;
            }
            o.provider = v;
        } else if (!strcmp(name, "--executor")) {
            if (strcmp(v, "local") && strcmp(v, "slurm")) {
                fprintf(stderr,
                        "flexqd: --executor: \"%s\" is not local or slurm\n",
                        v);
                return 1;
            }
            o.executor = v;
        } else if (!strcmp(name, "--slurm-partition")) {
            /* for the Slurm provider and helper, flexqd's children */
            const char *eq2 = strchr(v, '=');
            char pool[256];
            if (!eq2 || eq2 == v || (size_t)(eq2 - v) >= sizeof(pool) ||
                !fq_nodepool_slurm_partition_ok(eq2 + 1)) {
                fprintf(stderr,
                        "flexqd: --slurm-partition: \"%s\" is not "
                        "POOL=PARTITION (a partition is 1-63 of A-Z a-z 0-9 "
                        ". _ -)\n",
                        v);
                return 1;
            }
            memcpy(pool, v, (size_t)(eq2 - v));
            pool[eq2 - v] = '\0';
            if (strchr(pool, ',') || strchr(pool, ' ')) {
                fprintf(stderr,
                        "flexqd: --slurm-partition: pool \"%s\" is not a "
                        "node pool name\n",
                        pool);
                return 1;
            }
            size_t used = strlen(partitions);
            if ((size_t)snprintf(partitions + used, sizeof(partitions) - used,
                                 "%s%s", used ? "," : "",
                                 v) >= sizeof(partitions) - used) {
                fprintf(stderr,
                        "flexqd: --slurm-partition: more than %zu "
                        "bytes of mappings\n",
                        sizeof(partitions) - 1);
                return 1;
            }
        } else if (!strcmp(name, "--config")) {
            o.config_file = v;
        } else if (!strcmp(name, "--time-scale")) {
            char *end;
            o.time_scale = strtod(v, &end);
            if (*end || o.time_scale <= 0 || o.time_scale > 1e6) {
                fprintf(stderr,
                        "flexqd: --time-scale: \"%s\" is not a "
                        "number in (0, 1e6]\n",
                        v);
                return 1;
            }
        } else if (!strcmp(name, "--event-ttl") ||
                   !strcmp(name, "--max-events")) {
            char *end;
            long long n = strtoll(v, &end, 10);
            if (*end || n < 1 || n > 100000000) {
                fprintf(stderr,
                        "flexqd: %s: \"%s\" is not a number in "
                        "[1, 100000000]\n",
                        name, v);
                return 1;
            }
            if (!strcmp(name, "--event-ttl"))
                o.event_ttl_s = n;
            else
                o.max_events = (size_t)n;
        } else if (!strcmp(name, "--header-timeout") ||
                   !strcmp(name, "--max-client-connections")) {
            char *end;
            long long n = strtoll(v, &end, 10);
            if (*end || n < 1 || n > 1000000) {
                fprintf(stderr,
                        "flexqd: %s: \"%s\" is not a number in "
                        "[1, 1000000]\n",
                        name, v);
                return 1;
            }
            if (!strcmp(name, "--header-timeout"))
                o.header_timeout_s = (int)n;
            else
                o.max_client_conns = (unsigned)n;
        } else if (!strcmp(name, "--tokens")) {
            o.tokens_file = v;
        } else if (!strcmp(name, "--pod-user")) {
            o.pod_user = v;
        } else if (!strcmp(name, "--sync")) {
            if (!strcmp(v, "full"))
                o.sync = FQ_STORE_SYNC_FULL;
            else if (!strcmp(v, "normal"))
                o.sync = FQ_STORE_SYNC_NORMAL;
            else {
                fprintf(stderr, "flexqd: --sync: full or normal\n");
                return 1;
            }
        } else if (!strcmp(name, "--seed")) {
            o.seed = strtoull(v, NULL, 10);
        } else if (!strcmp(name, "--log-level")) {
            if (!strcmp(v, "debug"))
                fq_log_set_level(FQ_LOG_DEBUG);
            else if (!strcmp(v, "warn"))
                fq_log_set_level(FQ_LOG_WARN);
            else if (!strcmp(v, "error"))
                fq_log_set_level(FQ_LOG_ERROR);
        } else if (!strcmp(name, "--check")) {
            return check(v);
        } else {
            fprintf(stderr, "flexqd: unknown option %s\n%s", name, usage);
            return 1;
        }
    }
    if (!o.data_dir)
        o.data_dir = data_dir = default_data_dir();
    /* read by scripts/flexq-slurm-provider, a child like every Slurm call */
    if (partitions[0])
        setenv("FLEXQ_SLURM_PARTITIONS", partitions, 1);
    signal(SIGPIPE, SIG_IGN);
    struct fq_daemon d;
    struct fq_err err = {0};
    if (fq_daemon_init(&d, &o, &err) < 0) {
        fprintf(stderr, "flexqd: %s\n", err.msg);
        free(data_dir);
        return 1;
    }
    int rc = fq_daemon_run(&d);
    fq_daemon_release(&d);
    free(data_dir);
    return rc < 0 ? 1 : 0;
}
