/*
 * quantity.h - Kubernetes resource quantities as exact integers.
 *
 * A quantity such as "500m", "75Gi", "1e3" or "1000000000Gi" is parsed into
 * an exact integer count of a base unit chosen by the caller's scale:
 *   FQ_Q_MILLI  - thousandths (cpu: "2" -> 2000, "500m" -> 500)
 *   FQ_Q_UNIT   - whole units (memory bytes, TPU/GPU counts, pods)
 * A value that is not a whole number of base units is rounded up, as the
 * Kubernetes scheduler does when it reads requests (e.g. "0.5" bytes -> 1).
 * A value that does not fit in int64 is FQ_EOVERFLOW, never wrapped.
 *
 * Formatting gives the canonical form Kubernetes prints: the largest suffix
 * of the input's family (binary Ki..Ei or decimal k..E, "m" for milli) that
 * keeps the number an integer, e.g. 2000 (milli) -> "2", 500 -> "500m",
 * 80530636800 bytes -> "75Gi", 1000 units -> "1k".
 */
#ifndef FLEXQ_QUANTITY_H
#define FLEXQ_QUANTITY_H

#include <stdint.h>

#include "flexq/err.h"

enum fq_qscale {
    FQ_Q_UNIT = 0,  /* count whole units */
    FQ_Q_MILLI = 3, /* count thousandths */
};

/* How the number was written, so formatting can answer in kind. */
enum fq_qformat {
    FQ_QF_DECIMAL_SI = 0, /* plain, m, k, M, G, T, P, E, and exponents */
    FQ_QF_BINARY_SI = 1,  /* Ki, Mi, Gi, Ti, Pi, Ei */
};

/*
 * Parses `s` (NUL-terminated) into *out in units of `scale`. On error
 * returns FQ_EINVAL ("invalid quantity \"16x\"") or FQ_EOVERFLOW, fills
 * `err` when not NULL, and leaves *out unchanged. `fmt` (may be NULL)
 * receives the suffix family.
 */
int fq_quantity_parse(const char *s, enum fq_qscale scale, int64_t *out,
                      enum fq_qformat *fmt, struct fq_err *err);

/* Scale used for a resource name: cpu -> MILLI, everything else -> UNIT. */
enum fq_qscale fq_quantity_scale_for(const char *resource);

/*
 * Writes the canonical text of `v` (in units of `scale`) in the given
 * family into buf (at least 32 bytes). Returns buf.
 */
char *fq_quantity_format(int64_t v, enum fq_qscale scale, enum fq_qformat fmt,
                         char *buf, unsigned long size);

/* Overflow-checked arithmetic: return 0 or FQ_EOVERFLOW (*out unchanged). */
int fq_add_overflow(int64_t a, int64_t b, int64_t *out);
int fq_mul_overflow(int64_t a, int64_t b, int64_t *out);

#endif
