/*
 * cmd_scale.c - `flexq scale rayjob NAME --group GROUP --replicas N` and
 * `flexq scale job NAME --replicas N`: resize an elastic job while it runs.
 *
 * How it works: a RayJob's workerGroupSpecs is a list, which a JSON merge
 * patch can only replace whole, so the command reads the RayJob, sets
 * workerGroupSpecs[i].replicas for the named group, and PUTs it back with
 * the resourceVersion it read; on 409 Conflict (someone else wrote in
 * between) it reads again and retries, a few times. A Job's
 * spec.parallelism is a plain field: one merge patch.
 *
 * What happens next is the server's business (docs/admission.md, "Elastic
 * jobs"): with kueue.x-k8s.io/elastic-job: "true", scaling up a running
 * job makes a Workload slice that is admitted for the delta, scaling down
 * releases quota in place.
 *
 * Refused here, with a clear error and nothing written: replicas outside
 * the group's minReplicas..maxReplicas, an unknown group, a RayJob with
 * several groups and no --group, negative counts. A job that is not
 * elastic gets a warning (its Workload keeps the counts it was admitted
 * with).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/objects.h"
#include "flexq/paths.h"

#define MAX_TRIES 5

static bool parse_count(const char *s, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !end || end == s || *end || v < 0 || v > 1000000)
        return false;
    *out = v;
    return true;
}

static void warn_not_elastic(const struct fq_value *obj)
{
    const char *v = fq_value_as_str(
        fq_map_get(fq_meta_annotations(obj), "kueue.x-k8s.io/elastic-job"));
    if (!v || strcmp(v, "true"))
        fprintf(stderr,
                "Warning: %s has no annotation kueue.x-k8s.io/elastic-job: "
                "\"true\"; its Workload keeps the counts it was admitted "
                "with\n",
                fq_meta_name(obj));
}

/* Finds the group to scale: named, or the only one. Prints why not. */
static struct fq_value *find_group(struct fq_value *rj, const char *group)
{
    struct fq_value *gs = fq_value_path(rj, FQ_RJ_WORKER_GROUPS);
    size_t n = fq_value_len(gs);
    if (!group) {
        if (n == 1)
            return fq_seq_at(gs, 0);
        fprintf(stderr,
                "error: rayjob %s has %zu worker groups: name one with "
                "--group\n",
                fq_meta_name(rj), n);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(gs, i), "groupName", ""),
                    group))
            return fq_seq_at(gs, i);
    struct fq_buf b = FQ_BUF_INIT;
    for (size_t i = 0; i < n; i++)
        fq_buf_printf(&b, "%s%s", i ? ", " : "",
                      fq_value_path_str(fq_seq_at(gs, i), "groupName", ""));
    fprintf(stderr,
            "error: rayjob %s has no worker group \"%s\" (groups: %s)\n",
            fq_meta_name(rj), group, b.len ? fq_buf_str(&b) : "none");
    fq_buf_release(&b);
    return NULL;
}

static int scale_rayjob(struct fq_client *c, const char *ns, const char *name,
                        const char *group, int64_t replicas)
{
    char *path = fq_client_path(FQ_KIND_RAYJOB, ns, name, NULL, NULL);
    int rc = FQ_CLI_FAIL;
    for (int attempt = 0; attempt < MAX_TRIES; attempt++) {
        struct fq_value *rj = NULL;
        struct fq_err err = {0};
        int r = fq_client_get(c, path, &rj, &err);
        if (r < 0) {
            rc = fq_cmd_fail(r, &err);
            break;
        }
        struct fq_value *g = find_group(rj, group);
        if (!g) {
            fq_value_free(rj);
            break;
        }
        int64_t min = fq_value_path_int(g, "minReplicas", 0);
        int64_t max = fq_value_path_int(g, "maxReplicas", INT32_MAX);
        const char *gname = fq_value_path_str(g, "groupName", "");
        if (replicas < min || replicas > max) {
            if (max == INT32_MAX)
                fprintf(stderr,
                        "error: --replicas %lld is outside worker group %s's "
                        "range: minReplicas %lld, no maxReplicas\n",
                        (long long)replicas, gname, (long long)min);
            else
                fprintf(stderr,
                        "error: --replicas %lld is outside worker group %s's "
                        "range %lld..%lld (minReplicas..maxReplicas)\n",
                        (long long)replicas, gname, (long long)min,
                        (long long)max);
            fq_value_free(rj);
            break;
        }
        if (attempt == 0)
            warn_not_elastic(rj);
        fq_map_set(g, "replicas", fq_value_int(replicas));
        /* The resourceVersion read stays in metadata: a write in between
         * is a 409, and we read again. */
        struct fq_err perr = {0};
        r = fq_client_put(c, path, rj, NULL, &perr);
        fq_value_free(rj);
        if (r == FQ_ECONFLICT)
            continue;
        if (r < 0) {
            rc = fq_cmd_fail(r, &perr);
            break;
        }
        printf("rayjob.ray.io/%s scaled\n", name);
        rc = FQ_CLI_OK;
        break;
    }
    free(path);
    return rc;
}

static int scale_job(struct fq_client *c, const char *ns, const char *name,
                     int64_t replicas)
{
    char *path = fq_client_path(FQ_KIND_JOB, ns, name, NULL, NULL);
    struct fq_value *job = NULL;
    struct fq_err err = {0};
    int r = fq_client_get(c, path, &job, &err);
    if (r < 0) {
        free(path);
        return fq_cmd_fail(r, &err);
    }
    warn_not_elastic(job);
    fq_value_free(job);
    struct fq_value *patch = fq_value_map();
    fq_map_set(fq_map_ensure_map(patch, "spec"), "parallelism",
               fq_value_int(replicas));
    r = fq_client_patch(c, path, NULL, patch, NULL, &err);
    fq_value_free(patch);
    free(path);
    if (r < 0)
        return fq_cmd_fail(r, &err);
    printf("job.batch/%s scaled\n", name);
    return FQ_CLI_OK;
}

static int run(int argc, char **argv)
{
    const char *ns = NULL, *group = NULL, *reps = NULL;
    const char *pos[3] = {NULL, NULL, NULL};
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        const char *val = NULL;
        if (!strcmp(a, "-n") || !strcmp(a, "--namespace"))
            slot = &ns;
        else if (!strcmp(a, "--group") || !strcmp(a, "-g"))
            slot = &group;
        else if (!strcmp(a, "--replicas"))
            slot = &reps;
        else if (!strncmp(a, "--namespace=", 12))
            ns = a + 12;
        else if (!strncmp(a, "--group=", 8))
            group = a + 8;
        else if (!strncmp(a, "--replicas=", 11))
            reps = a + 11;
        else if (a[0] == '-' && a[1])
            return fq_cli_usage_error("scale", "unknown flag %s", a);
        else if (npos < 3)
            pos[npos++] = a;
        else
            return fq_cli_usage_error("scale", "too many arguments");
        if (slot) {
            if (i + 1 >= argc)
                return fq_cli_usage_error("scale", "%s needs a value", a);
            val = argv[++i];
            *slot = val;
        }
    }
    /* rayjob NAME | rayjob/NAME */
    const char *kind_s = NULL, *name = NULL;
    char kbuf[64];
    if (npos == 1 && strchr(pos[0], '/')) {
        const char *sl = strchr(pos[0], '/');
        snprintf(kbuf, sizeof(kbuf), "%.*s", (int)(sl - pos[0]), pos[0]);
        kind_s = kbuf;
        name = sl + 1;
    } else if (npos == 2) {
        kind_s = pos[0];
        name = pos[1];
    } else {
        return fq_cli_usage_error("scale", "name a job: rayjob NAME or job "
                                           "NAME");
    }
    if (!*name)
        return fq_cli_usage_error("scale", "name a job: rayjob NAME");
    if (!reps)
        return fq_cli_usage_error("scale", "--replicas is required");
    int64_t n = 0;
    if (!parse_count(reps, &n))
        return fq_cli_usage_error("scale",
                                  "--replicas wants a whole number >= 0, "
                                  "not \"%s\"",
                                  reps);
    enum fq_kind kind = fq_cmd_kind("scale", kind_s);
    if (kind == FQ_KIND_NONE)
        return FQ_CLI_FAIL;
    if (kind != FQ_KIND_RAYJOB && kind != FQ_KIND_JOB)
        return fq_cli_usage_error("scale", "only rayjob and job scale, not %s",
                                  kind_s);
    if (kind == FQ_KIND_JOB && group)
        return fq_cli_usage_error("scale", "--group is for rayjobs");
    struct fq_cmd_flags f = {0};
    f.ns = ns;
    struct fq_client *c = fq_client_new(NULL, NULL);
    int rc = kind == FQ_KIND_RAYJOB ?
                 scale_rayjob(c, fq_cmd_namespace(&f), name, group, n) :
                 scale_job(c, fq_cmd_namespace(&f), name, n);
    fq_client_free(c);
    return rc;
}

const struct fq_cli_cmd fq_cli_cmd_scale = {
    "scale", run, "Resize an elastic job's workers while it runs",
    "Usage: flexq scale rayjob NAME [--group GROUP] --replicas N "
    "[-n NAMESPACE]\n"
    "       flexq scale job NAME --replicas N [-n NAMESPACE]\n"
    "\n"
    "  --group GROUP          the RayJob's worker group (optional when it "
    "has one)\n"
    "  --replicas N           the new replica count (RayJob: within the\n"
    "                         group's minReplicas..maxReplicas; Job: its\n"
    "                         parallelism)\n"
    "  -n, --namespace NS     namespace (default \"default\")\n"
    "\n"
    "A job with the annotation kueue.x-k8s.io/elastic-job: \"true\" that\n"
    "scales up gets a Workload slice admitted for the extra workers only,\n"
    "on the flavor it already runs on; scaling down releases quota.\n"};
