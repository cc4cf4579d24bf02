/*
 * log.h - flexqd's structured logs on stderr (logfmt).
 *
 * One line per event: `time=2026-11-29T15:44:00.123Z level=info
 * msg="listening" addr=127.0.0.1:8265`. The message is a fixed phrase; the
 * details go into key=value pairs written by the caller's format, so logs
 * can be grepped and parsed. Only the daemon logs; the core never does.
 */
#ifndef FLEXQ_DAEMON_LOG_H
#define FLEXQ_DAEMON_LOG_H

enum fq_log_level {
    FQ_LOG_DEBUG,
    FQ_LOG_INFO,
    FQ_LOG_WARN,
    FQ_LOG_ERROR,
};

/* Lines below `level` are dropped (default FQ_LOG_INFO). */
void fq_log_set_level(enum fq_log_level level);

/*
 * Writes one line: `msg` is quoted, then the pairs formatted from `kvfmt`
 * (may be NULL), e.g. fq_log(FQ_LOG_INFO, "request", "method=%s code=%d",
 * "GET", 200).
 */
void fq_log(enum fq_log_level level, const char *msg, const char *kvfmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
