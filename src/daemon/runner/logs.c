/*
 * logs.c - pod logs for the API and the CLI (see logs.h).
 *
 * How it reads: a pod's log is a plain file the pod's process appends to
 * (process.c). Reading takes the whole file (at most FQ_LOGS_MAX_READ, the
 * last bytes when larger), then applies the options in kubectl's order:
 * tailLines, then limitBytes. `offset` is flexq's follow cursor: the client
 * passes the size it got last time and receives what was appended since;
 * when the file is smaller than the cursor it was rotated, and reading
 * restarts at 0.
 *
 * Which pod `logs job/NAME` means: the newest pod (creationTimestamp, then
 * name) carrying the Job's name label, as the last attempt is the one a
 * user wants after retries. `rayjob/NAME` is the submitter Job NAME.
 *
 * Invariants: nothing here writes a pod's files; every read is bounded by
 * FQ_LOGS_MAX_READ; a log that does not exist is FQ_ENOTFOUND, never an
 * empty success, so that "not started yet" and "printed nothing" differ.
 *
 * What it does not do: timestamps per line (the runner does not stamp
 * lines), container selection (flexq runs one container per pod), the
 * streaming follow itself (runtime.c pumps followers with fq_logs_pod and
 * an offset).
 */
#include "runner/logs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/kinds.h"
#include "flexq/paths.h"
#include "runner/runner.h"

#define FQ_LOGS_MAX_READ (16u << 20)

void fq_logs_opts_init(struct fq_logs_opts *o)
{
    o->tail_lines = -1;
    o->limit_bytes = -1;
    o->offset = -1;
    o->previous = false;
}

size_t fq_logs_tail_start(const char *text, size_t len, int64_t n)
{
    if (n < 0)
        return 0;
    if (n == 0)
        return len;
    size_t i = len;
    /* a final newline ends the last line; it does not start a new one */
    if (i > 0 && text[i - 1] == '\n')
        i--;
    while (i > 0) {
        if (text[i - 1] == '\n' && --n == 0)
            return i;
        i--;
    }
    return 0;
}

int fq_logs_pod(const char *data_dir, const char *ns, const char *name,
                const struct fq_logs_opts *o, struct fq_buf *out, int64_t *size,
                struct fq_err *err)
{
    struct fq_logs_opts def;
    if (!o) {
        fq_logs_opts_init(&def);
        o = &def;
    }
    char *dir = fq_runner_pod_dir(data_dir, ns, name);
    char *path = fq_xasprintf("%s/%s", dir, o->previous ? "log.1" : "log");
    free(dir);
    /* never through a link (or into a fifo) a pod made in its directory */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        int rc = fq_err_set(err, FQ_ENOTFOUND,
                            errno == ENOENT ?
                                "%s log of pod \"%s\" not found (the pod "
                                "has not started on this flexqd)" :
                                "cannot read the %s log of pod \"%s\"",
                            o->previous ? "previous" : "current", name);
        free(path);
        return rc;
    }
    free(path);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fq_err_set(err, FQ_EIO, "cannot stat the log of %s", name);
    }
    int64_t fsize = st.st_size;
    if (size)
        *size = fsize;
    int64_t from = 0;
    if (o->offset >= 0 && o->offset <= fsize)
        from = o->offset; /* else rotated: start again at 0 */
    if (fsize - from > (int64_t)FQ_LOGS_MAX_READ)
        from = fsize - (int64_t)FQ_LOGS_MAX_READ;
    size_t want = (size_t)(fsize - from);
    char *buf = fq_xmalloc(want + 1);
    size_t got = 0;
    while (got < want) {
        ssize_t n = pread(fd, buf + got, want - got, (off_t)from + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    size_t start = fq_logs_tail_start(buf, got, o->tail_lines);
    if (o->limit_bytes >= 0 && got - start > (size_t)o->limit_bytes)
        start = got - (size_t)o->limit_bytes;
    fq_buf_append(out, buf + start, got - start);
    free(buf);
    return 0;
}

static const char *label(const struct fq_value *obj, const char *key)
{
    return fq_value_as_str(fq_map_get(fq_meta_labels(obj), key));
}

/* The newest pod of Job ns/job, or NULL. Borrowed. */
static const struct fq_object *job_pod(const struct fq_objstore *s,
                                       const char *ns, const char *job)
{
    const struct fq_object **pods = NULL;
    size_t n = fq_objstore_list(s, FQ_KIND_POD, ns, &pods);
    const struct fq_object *best = NULL;
    const char *best_ts = "";
    for (size_t i = 0; i < n; i++) {
        const char *j = label(pods[i]->obj, "batch.kubernetes.io/job-name");
        if (!j)
            j = label(pods[i]->obj, "job-name");
        if (!j || strcmp(j, job))
            continue;
        const char *ts = fq_value_path_str(pods[i]->obj, FQ_META_CREATED, "");
        if (!best || strcmp(ts, best_ts) >= 0) {
            best = pods[i];
            best_ts = ts;
        }
    }
    free(pods);
    return best;
}

int fq_logs_resolve(const struct fq_objstore *s, const char *ns,
                    const char *what, char **pod, struct fq_err *err)
{
    const char *slash = strchr(what, '/');
    char *kind =
        slash ? fq_xstrndup(what, (size_t)(slash - what)) : fq_xstrdup("pod");
    const char *name = slash ? slash + 1 : what;
    enum fq_kind k = fq_kind_lookup(kind);
    int rc = 0;
    *pod = NULL;
    if (!*name) {
        rc = fq_err_set(err, FQ_EINVAL, "\"%s\": no name", what);
    } else if (k == FQ_KIND_POD) {
        *pod = fq_xstrdup(name);
    } else if (k == FQ_KIND_JOB || k == FQ_KIND_RAYJOB) {
        /* a RayJob's submitter Job has the RayJob's name */
        const struct fq_object *p = job_pod(s, ns, name);
        if (p)
            *pod = fq_xstrdup(p->name);
        else if (!fq_objstore_get(s, k, ns, name))
            rc = fq_err_set(err, FQ_ENOTFOUND, "%s \"%s\" not found",
                            fq_kind_info(k)->plural, name);
        else
            rc = fq_err_set(err, FQ_ENOTFOUND,
                            "%s \"%s\" has no pod yet (is it still queued? "
                            "see `flexq describe %s %s`)",
                            fq_kind_info(k)->singular, name,
                            fq_kind_info(k)->singular, name);
    } else {
        rc = fq_err_set(err, FQ_EINVAL,
                        "logs of \"%s\": only pod/, job/ and rayjob/ have "
                        "logs",
                        what);
    }
    free(kind);
    return rc;
}

void fq_logs_ray_banner(struct fq_buf *out, const char *ts, const char *job_id,
                        const char *job_status, const char *message)
{
    char msg[512];
    bool ok = !strcmp(job_status, "SUCCEEDED");
    bool stopped = !strcmp(job_status, "STOPPED");
    if (stopped) {
        fq_buf_printf(out, "%s\tWARN cli.py:66 -- Job '%s' was stopped\n", ts,
                      job_id);
        return;
    }
    snprintf(msg, sizeof(msg), "Job '%s' %s", job_id,
             ok ? "succeeded" : "failed");
    size_t n = strlen(msg);
    const char *lvl = ok ? "SUCC" : "ERR";
    for (int line = 0; line < 3; line++) {
        fq_buf_printf(out, "%s\t%s cli.py:%d -- ", ts, lvl, 65 + line);
        if (line == 1) {
            fq_buf_puts(out, msg);
        } else {
            for (size_t i = 0; i < n; i++)
                fq_buf_putc(out, '-');
        }
        fq_buf_putc(out, '\n');
    }
    if (!ok)
        fq_buf_printf(out, "%s\tINFO cli.py:68 -- Status message: %s\n", ts,
                      message && *message ? message : "Job failed.");
}

/* "2026-03-20T03:59:51Z" -> "2026-03-20 03:59:51,000" */
static void ray_ts(const char *rfc3339, char *out, size_t size)
{
    char d[11] = "", t[9] = "";
    if (strlen(rfc3339) >= 19) {
        memcpy(d, rfc3339, 10);
        memcpy(t, rfc3339 + 11, 8);
    }
    snprintf(out, size, "%s %s,000", *d ? d : "1970-01-01",
             *t ? t : "00:00:00");
}

int fq_logs_target(const struct fq_objstore *s, const char *data_dir,
                   const char *ns, const char *what,
                   const struct fq_logs_opts *o, struct fq_buf *out,
                   int64_t *size, struct fq_err *err)
{
    char *pod = NULL;
    int rc = fq_logs_resolve(s, ns, what, &pod, err);
    if (rc != 0)
        return rc;
    size_t before = out->len;
    rc = fq_logs_pod(data_dir, ns, pod, o, out, size, err);
    free(pod);
    if (rc != 0)
        return rc;
    /* A terminal RayJob whose submitter log lacks Ray's banner. */
    const char *slash = strchr(what, '/');
    if (!slash || (o && (o->offset > 0 || o->previous)))
        return 0;
    char *kind = fq_xstrndup(what, (size_t)(slash - what));
    enum fq_kind k = fq_kind_lookup(kind);
    free(kind);
    if (k != FQ_KIND_JOB && k != FQ_KIND_RAYJOB)
        return 0;
    const struct fq_object *rj =
        fq_objstore_get(s, FQ_KIND_RAYJOB, ns, slash + 1);
    if (!rj)
        return 0;
    const char *js = fq_value_path_str(rj->obj, FQ_RJ_JOB_STATUS, "");
    const char *id = fq_value_path_str(rj->obj, FQ_RJ_JOB_ID, slash + 1);
    if (strcmp(js, "SUCCEEDED") && strcmp(js, "FAILED") &&
        strcmp(js, "STOPPED"))
        return 0;
    char *needle = fq_xasprintf("-- Job '%s' ", id);
    bool has = strstr(out->data ? out->data + before : "", needle) != NULL;
    free(needle);
    if (!has) {
        char ts[40];
        ray_ts(fq_value_path_str(rj->obj, FQ_JOB_END_TIME, ""), ts, sizeof(ts));
        fq_logs_ray_banner(out, ts, id, js,
                           fq_value_path_str(rj->obj, FQ_STATUS_MESSAGE, ""));
    }
    return 0;
}
