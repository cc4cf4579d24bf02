/*
 * log.c - logfmt lines on stderr for flexqd.
 *
 * How it works: the line is built in a stack buffer and written with one
 * fputs call, so lines from the daemon never interleave halfway. The time
 * is the wall clock in UTC with milliseconds.
 *
 * Invariants: one event, one line; a message is never longer than 4 KiB
 * (the rest is cut, and the line still ends with a newline).
 *
 * What it does not do: rotation, files, syslog. Run flexqd under a
 * supervisor that keeps stderr.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The daemon's only mutable global: set once from the command line. */
static enum fq_log_level min_level = FQ_LOG_INFO;

void fq_log_set_level(enum fq_log_level level)
{
    min_level = level;
}

static const char *level_name(enum fq_log_level l)
{
    switch (l) {
    case FQ_LOG_DEBUG:
        return "debug";
    case FQ_LOG_INFO:
        return "info";
    case FQ_LOG_WARN:
        return "warn";
    case FQ_LOG_ERROR:
        return "error";
    }
    return "info";
}

void fq_log(enum fq_log_level level, const char *msg, const char *kvfmt, ...)
{
    if (level < min_level)
        return;
    char line[4096];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(line, sizeof(line), "time=%Y-%m-%dT%H:%M:%S", &tm);
    int w = snprintf(line + n, sizeof(line) - n, ".%03ldZ level=%s msg=\"%s\"",
                     ts.tv_nsec / 1000000, level_name(level), msg);
    if (w > 0)
        n += (size_t)w;
    if (n < sizeof(line) - 2 && kvfmt && *kvfmt) {
        line[n++] = ' ';
        va_list ap;
        va_start(ap, kvfmt);
        w = vsnprintf(line + n, sizeof(line) - n, kvfmt, ap);
        va_end(ap);
        if (w > 0)
            n += (size_t)w;
    }
    if (n > sizeof(line) - 2)
        n = sizeof(line) - 2;
    line[n++] = '\n';
    line[n] = '\0';
    fputs(line, stderr);
}
