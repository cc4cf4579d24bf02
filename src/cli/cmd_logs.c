/*
 * cmd_logs.c - `flexq logs`: a pod's, a Job's or a RayJob's log.
 *
 *   flexq logs pod/NAME | job/NAME | rayjob/NAME | NAME
 *              [-n NS] [-f] [--tail N] [--previous]
 *
 * `job/NAME` is the newest pod of the Job, as `kubectl logs job/NAME`; for a
 * RayJob's submitter Job (same name as the RayJob) that log is Ray's
 * submitter log: submission lines, the driver's output with the workers'
 * lines prefixed `(RayTrainWorker pid=N, ip=HOST)`, and the closing
 * `Job '...' succeeded` banner.
 *
 * How: GET .../NAME/log?format=json, which answers the text, the byte
 * offset reached and whether the pod has ended. -f repeats the request
 * from that offset every half second until the pod has ended (a CLI may
 * poll; flexqd also streams with follow=true for plain HTTP clients).
 *
 * What it does not do: --timestamps, -c CONTAINER (one container per pod),
 * several pods at once (-l).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "client.h"
#include "flexq/alloc.h"
#include "flexq/kinds.h"

static int logs_main(int argc, char **argv)
{
    const char *ns = "default", *target = NULL;
    bool follow = false, previous = false;
    long long tail = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-f") || !strcmp(a, "--follow")) {
            follow = true;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--previous")) {
            previous = true;
        } else if ((!strcmp(a, "-n") || !strcmp(a, "--namespace")) &&
                   i + 1 < argc) {
            ns = argv[++i];
        } else if (!strncmp(a, "--namespace=", 12)) {
            ns = a + 12;
        } else if ((!strcmp(a, "--tail")) && i + 1 < argc) {
            tail = strtoll(argv[++i], NULL, 10);
        } else if (!strncmp(a, "--tail=", 7)) {
            tail = strtoll(a + 7, NULL, 10);
        } else if (a[0] == '-') {
            return fq_cli_usage_error("logs", "unknown flag %s", a);
        } else if (!target) {
            target = a;
        } else {
            return fq_cli_usage_error("logs", "one target only (got %s)", a);
        }
    }
    if (!target)
        return fq_cli_usage_error("logs", "which pod or job? e.g. job/NAME");
    const char *slash = strchr(target, '/');
    char *kname = slash ? fq_xstrndup(target, (size_t)(slash - target)) :
                          fq_xstrdup("pod");
    const char *name = slash ? slash + 1 : target;
    enum fq_kind k = fq_kind_lookup(kname);
    free(kname);
    if (k != FQ_KIND_POD && k != FQ_KIND_JOB && k != FQ_KIND_RAYJOB)
        return fq_cli_usage_error("logs",
                                  "%s: only pod/, job/ and rayjob/ "
                                  "have logs",
                                  target);
    if (!*name)
        return fq_cli_usage_error("logs", "%s: no name", target);

    struct fq_client *c = fq_client_new(NULL, NULL);
    long long offset = -1;
    int status = FQ_CLI_OK;
    for (bool first = true;; first = false) {
        char query[160];
        /* nul=replace: a NUL the pod printed comes as U+FFFD, which this
         * JSON reader (C strings) can hold; the rest is never cut. */
        int ql = snprintf(query, sizeof(query), "format=json&nul=replace");
        if (first && tail >= 0)
            ql += snprintf(query + ql, sizeof(query) - (size_t)ql,
                           "&tailLines=%lld", tail);
        if (offset >= 0)
            ql += snprintf(query + ql, sizeof(query) - (size_t)ql,
                           "&offset=%lld", offset);
        if (previous)
            snprintf(query + ql, sizeof(query) - (size_t)ql, "&previous=true");
        char *path = fq_client_path(k, ns, name, "log", query);
        struct fq_value *v = NULL;
        struct fq_err err = {0};
        int rc = fq_client_get(c, path, &v, &err);
        free(path);
        if (rc < 0) {
            fprintf(stderr, "flexq logs: %s\n", err.msg);
            status = FQ_CLI_FAIL;
            break;
        }
        const struct fq_value *log = fq_map_get(v, "log");
        if (log && log->type == FQ_V_STR && log->u.str.len) {
            fwrite(log->u.str.s, 1, log->u.str.len, stdout);
            fflush(stdout);
        }
        offset = fq_value_path_int(v, "offset", offset);
        bool done = fq_value_path_bool(v, "done", true);
        fq_value_free(v);
        if (!follow || previous || done)
            break;
        struct timespec ts = {0, 500 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fq_client_free(c);
    return status;
}

const struct fq_cli_cmd fq_cli_cmd_logs = {
    "logs", logs_main, "Print the log of a pod, a Job or a RayJob",
    "usage: flexq logs pod/NAME | job/NAME | rayjob/NAME | NAME\n"
    "                  [-n NAMESPACE] [-f] [--tail N] [--previous]\n"
    "\n"
    "  job/NAME     the newest pod of the Job (for a RayJob's submitter Job:\n"
    "               the driver's log with the workers' lines and Ray's\n"
    "               closing banner)\n"
    "  -f           keep printing what is appended until the pod ends\n"
    "  --tail N     only the last N lines\n"
    "  --previous   the rotated part of the log (log.1)\n"};
