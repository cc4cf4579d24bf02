/*
 * logpump.h - every pod's stdout and stderr through a pipe to its log
 * file, with the size cap enforced on every write, by one pump process
 * per flexqd (see logpump.c).
 */
#ifndef FLEXQ_DAEMON_LOGPUMP_H
#define FLEXQ_DAEMON_LOGPUMP_H

#include <stddef.h>

/* The pump's program name (built beside flexqd; flexqd's own binary run
 * under this name runs the pump too). */
#define FQ_LOGPUMP_ARGV0 "flexq-logpump"

/*
 * Hands the pod whose directory is `dir` (borrowed) and whose log is open
 * as `logfd` (borrowed; the pump keeps its own copy) to the pump, started
 * first when *ctl is -1 (*ctl: the caller's end of the pump's socket,
 * owned by the caller, -1 before the first pod; it is replaced when the
 * pump had gone). The log file `dir`/log never grows past `cap` bytes: at
 * the cap it becomes log.1 and a new log is begun. Returns the pipe's
 * write end (owned, close-on-exec) for the pod's stdout and stderr, or -1
 * with errno set (the caller then gives the pod `logfd` itself and the
 * cap is only checked by fq_runner_poll). *done_fd gets a descriptor
 * (owned, close-on-exec) that reads end-of-file once the pump has written
 * everything the pod's tree wrote and let go of the pod.
 */
int fq_logpump_start(int *ctl, const char *dir, int logfd, size_t cap,
                     int *done_fd);

#endif
