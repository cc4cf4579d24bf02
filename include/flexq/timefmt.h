/*
 * timefmt.h - RFC 3339 timestamps to and from milliseconds since the Unix
 * epoch, as Kubernetes writes them in objects.
 *
 * A primitive of the base layer: it knows nothing of objects or the
 * engine, and must not grow calls into higher layers.
 */
#ifndef FLEXQ_TIMEFMT_H
#define FLEXQ_TIMEFMT_H

#include <stdint.h>

/* "2026-11-29T15:44:00Z" (UTC, whole seconds) into buf. */
void fq_time_format(int64_t ms, char *buf, unsigned long size);
/* The same with milliseconds when the time is not a whole second
 * ("2026-11-29T15:44:00.250Z"), for flexq's own annotations that hold a
 * deadline: what is stored is then what was meant. */
void fq_time_format_ms(int64_t ms, char *buf, unsigned long size);
/* Parses RFC 3339 (fractional seconds and numeric offsets accepted) into
 * *ms. 0, or FQ_EINVAL for text that is not a timestamp. */
int fq_time_parse(const char *s, int64_t *ms);

/* The longest duration text fq_duration_parse reads. */
#define FQ_DURATION_TEXT_MAX 64
/* The longest duration it accepts: 100 years. */
#define FQ_DURATION_MAX_MS (100LL * 366 * 86400 * 1000)

/* Parses a duration as users write run times into *ms: a bare number of
 * seconds ("3600", "0.5") or Go-style components with units h, m, s, ms
 * ("1h30m", "90m", "1.5s", "200ms"); fractions below a millisecond are
 * dropped. 0, or FQ_EINVAL for text that is empty, longer than
 * FQ_DURATION_TEXT_MAX, negative, malformed or above FQ_DURATION_MAX_MS
 * (*ms unchanged then). */
int fq_duration_parse(const char *s, int64_t *ms);

#endif
