/*
 * logs.h - pod logs: reading, tailing, following, and `logs job/NAME`.
 *
 * The runner writes each pod's stdout+stderr to
 * <data_dir>/pods/<ns>/<name>/log (rotated to log.1). This module reads
 * them for the API (GET .../pods/NAME/log, and flexq's extension
 * GET .../jobs/NAME/log and .../rayjobs/NAME/log) and for `flexq logs`.
 *
 * `logs job/NAME` is the log of the Job's newest pod, as kubectl shows
 * `logs job/NAME`. For a RayJob's submitter Job that pod runs
 * `python3 -m flexq.submit`, whose output already holds the submission
 * lines, the driver's lines, the workers' forwarded lines and Ray's closing
 * banner; when that banner is missing (the submitter was killed) and the
 * RayJob is terminal, the banner is appended from the RayJob's status so
 * that the log still ends the way Ray's does.
 */
#ifndef FLEXQ_LOGS_H
#define FLEXQ_LOGS_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/buf.h"
#include "flexq/err.h"
#include "flexq/objstore.h"

struct fq_logs_opts {
    int64_t tail_lines;  /* last N lines; -1: all */
    int64_t limit_bytes; /* at most N bytes (the last ones); -1: no limit */
    int64_t offset;      /* start at this byte of the current file; -1:
                            from the start (flexq's follow cursor) */
    bool previous;       /* the rotated part (log.1) instead */
};

void fq_logs_opts_init(struct fq_logs_opts *o);

/*
 * Appends pod ns/name's log (per `o`) to `out`. FQ_ENOTFOUND when the pod
 * never ran here (no log file). *size (may be NULL) gets the file's size,
 * the next follow offset.
 */
int fq_logs_pod(const char *data_dir, const char *ns, const char *name,
                const struct fq_logs_opts *o, struct fq_buf *out, int64_t *size,
                struct fq_err *err);

/*
 * Resolves "pod/NAME", "job/NAME", "rayjob/NAME" or a bare pod name to the
 * pod whose log is meant: for a Job the newest pod labelled with its name,
 * for a RayJob its submitter Job's. Returns an owned name in *pod.
 */
int fq_logs_resolve(const struct fq_objstore *s, const char *ns,
                    const char *what, char **pod, struct fq_err *err);

/* fq_logs_pod for whatever fq_logs_resolve names, plus the Ray banner
 * for a terminal RayJob whose submitter log lacks it. */
int fq_logs_target(const struct fq_objstore *s, const char *data_dir,
                   const char *ns, const char *what,
                   const struct fq_logs_opts *o, struct fq_buf *out,
                   int64_t *size, struct fq_err *err);

/* The index in text[0..len) where its last n lines start (n < 0: 0). */
size_t fq_logs_tail_start(const char *text, size_t len, int64_t n);

/* Ray's banner for a finished job, e.g. three "SUCC cli.py:6x --" lines
 * around "Job 'ID' succeeded"; `ts` is "2026-03-20 03:59:51,008". */
void fq_logs_ray_banner(struct fq_buf *out, const char *ts, const char *job_id,
                        const char *job_status, const char *message);

#endif
