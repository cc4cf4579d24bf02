/*
 * quantity.c - Kubernetes resource quantities as exact int64 counts.
 *
 * The grammar is Kubernetes' (k8s.io/apimachinery resource.Quantity):
 *
 *   quantity  ::= sign? number suffix?
 *   number    ::= digits | digits "." digits? | "." digits
 *   suffix    ::= binary | decimal | ("e" | "E") sign? digits
 *   binary    ::= Ki | Mi | Gi | Ti | Pi | Ei          (2^10 .. 2^60)
 *   decimal   ::= n | u | m | k | M | G | T | P | E    (10^-9 .. 10^18)
 *
 * No spaces anywhere. "1." and ".5" are numbers, as in Kubernetes; "." and
 * "" are not.
 *
 * How it works, with "1.5Gi" in milli (cpu-style) scale as the example:
 *   1. Split into the digit string "15" with the decimal point after its
 *      first digit, a decimal exponent (0 for Gi, plus 3 for FQ_Q_MILLI)
 *      and a binary exponent (3 steps of 2^10 for Gi). Moving the point by
 *      the decimal exponent gives "1500." x 2^30.
 *   2. Leading and trailing zeros are stripped. If the integer part has 20
 *      or more digits the value is at least 10^19 > INT64_MAX: overflow. If
 *      the first significant digit sits 20 or more places after the point,
 *      the value times 2^60 is still below 1: it rounds to +-1.
 *   3. Otherwise the digits are multiplied by 1024 once per binary step on a
 *      small decimal digit array (exact), the integer part is accumulated in
 *      64 bits with a bound check, and a non-zero fraction rounds the
 *      magnitude up (away from zero, like Kubernetes' RoundUp).
 * Every step is exact; nothing goes through a double.
 *
 * Formatting (canonical form): milli values that are not whole print as
 * "<n>m"; whole values divide by 1000 (decimal family) or 1024 (binary
 * family) while the division is exact, up to E / Ei. Binary-family values
 * below 1024 in magnitude print in the decimal family, as Kubernetes does.
 *
 * Formatting writes the digits by hand rather than through snprintf (a
 * visible cost when every controller write formats quantities), with
 * snprintf's truncation: at most size - 1 bytes and a NUL.
 *
 * Invariants: parse never wraps and never writes *out on error; format
 * never overflows `buf`.
 *
 * What it does not do: no arithmetic on differently scaled values, no
 * DecimalExponent output form ("1e3" reads fine but prints as "1k").
 */
#include "flexq/quantity.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

/* Decimal-exponent suffixes, and binary ones in steps of 2^10. */
static const struct {
    const char *s;
    int exp10;
    int bin;
} suffixes[] = {
    {"", 0, 0},   {"n", -9, 0}, {"u", -6, 0}, {"m", -3, 0},
    {"k", 3, 0},  {"M", 6, 0},  {"G", 9, 0},  {"T", 12, 0},
    {"P", 15, 0}, {"E", 18, 0}, {"Ki", 0, 1}, {"Mi", 0, 2},
    {"Gi", 0, 3}, {"Ti", 0, 4}, {"Pi", 0, 5}, {"Ei", 0, 6},
};

/* Largest exponent magnitude looked at; beyond it the answer is decided. */
#define EXP_CAP 100000

static int invalid(struct fq_err *err, const char *s)
{
    return fq_err_set(err, FQ_EINVAL, "invalid quantity \"%s\"", s);
}

static int overflow(struct fq_err *err, const char *s)
{
    return fq_err_set(err, FQ_EOVERFLOW, "quantity \"%s\" is out of range", s);
}

static bool isdig(char c)
{
    return c >= '0' && c <= '9';
}

/* Multiplies the decimal digits d[0..*n) by 1024 in place; d has room. */
static void mul1024(unsigned char *d, size_t *n, long *point)
{
    unsigned carry = 0;
    for (size_t i = *n; i-- > 0;) {
        unsigned x = d[i] * 1024u + carry;
        d[i] = (unsigned char)(x % 10);
        carry = x / 10;
    }
    while (carry) {
        memmove(d + 1, d, *n);
        d[0] = (unsigned char)(carry % 10);
        carry /= 10;
        (*n)++;
        (*point)++;
    }
}

int fq_quantity_parse(const char *s, enum fq_qscale scale, int64_t *out,
                      enum fq_qformat *fmt, struct fq_err *err)
{
    if (!s)
        return invalid(err, "");
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';

    const char *ip = p;
    while (isdig(*p))
        p++;
    size_t ni = (size_t)(p - ip);
    const char *fp = p;
    size_t nf = 0;
    if (*p == '.') {
        fp = ++p;
        while (isdig(*p))
            p++;
        nf = (size_t)(p - fp);
    }
    if (ni == 0 && nf == 0)
        return invalid(err, s);

    /* Suffix: a named one, or an exponent. */
    long exp10 = 0;
    int bin = 0;
    enum fq_qformat family = FQ_QF_DECIMAL_SI;
    if ((*p == 'e' || *p == 'E') &&
        (isdig(p[1]) || ((p[1] == '+' || p[1] == '-') && isdig(p[2])))) {
        const char *e = p + 1;
        bool eneg = false;
        if (*e == '+' || *e == '-')
            eneg = *e++ == '-';
        long ev = 0;
        for (; isdig(*e); e++)
            if (ev < EXP_CAP)
                ev = ev * 10 + (*e - '0');
        if (*e)
            return invalid(err, s);
        exp10 = eneg ? -ev : ev;
    } else {
        size_t i;
        for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
            if (!strcmp(p, suffixes[i].s))
                break;
        if (i == sizeof(suffixes) / sizeof(suffixes[0]))
            return invalid(err, s);
        exp10 = suffixes[i].exp10;
        bin = suffixes[i].bin;
        if (bin)
            family = FQ_QF_BINARY_SI;
    }
    exp10 += (long)scale;

    /* Digits "ip..ip+ni" then "fp..fp+nf"; the point sits after ni. The
     * array has room for every later step at once: up to 19 zeros in front
     * (point > -20) or an integer part padded to point (< 20), and 4 more
     * digits for each multiplication by 1024. Quantities are short, so
     * it is almost always on the stack (this runs for every resource
     * request a controller reads). */
    size_t n = ni + nf;
    size_t room = n + 20 + 4 * 6;
    unsigned char stack[128];
    unsigned char *d = room <= sizeof(stack) ? stack : fq_xmalloc(room);
    for (size_t i = 0; i < ni; i++)
        d[i] = (unsigned char)(ip[i] - '0');
    for (size_t i = 0; i < nf; i++)
        d[ni + i] = (unsigned char)(fp[i] - '0');
    long point = (long)ni + exp10; /* digits before the decimal point */

    size_t lead = 0;
    while (lead < n && d[lead] == 0)
        lead++;
    while (n > lead && d[n - 1] == 0)
        n--;
    int rc = 0;
    int64_t result = 0;
    if (lead == n) {
        result = 0; /* zero, whatever the suffix */
        goto done;
    }
    memmove(d, d + lead, n - lead);
    n -= lead;
    point -= (long)lead;

    if (point >= 20) {
        rc = overflow(err, s);
        goto done;
    }
    if (point <= -20) {
        result = neg ? -1 : 1; /* below 10^-20 x 2^60 < 1: rounds up */
        goto done;
    }
    if (point < 0) { /* make the integer part explicit: 0.00ddd */
        size_t z = (size_t)-point;
        memmove(d + z, d, n);
        memset(d, 0, z);
        n += z;
        point = 0;
    }
    if ((long)n < point) { /* trailing zeros of the integer part */
        size_t z = (size_t)point - n;
        memset(d + n, 0, z);
        n = (size_t)point;
    }
    for (int i = 0; i < bin; i++)
        mul1024(d, &n, &point);

    uint64_t mag = 0;
    const uint64_t lim = (uint64_t)INT64_MAX + (neg ? 1 : 0);
    for (long i = 0; i < point; i++) {
        if (mag > (lim - d[i]) / 10) {
            rc = overflow(err, s);
            goto done;
        }
        mag = mag * 10 + d[i];
    }
    for (size_t i = (size_t)point; i < n; i++) {
        if (d[i]) {
            mag++; /* a fraction rounds away from zero */
            break;
        }
    }
    if (mag > lim) {
        rc = overflow(err, s);
        goto done;
    }
    result = neg ? (int64_t)(0 - mag) : (int64_t)mag;
done:
    if (d != stack)
        free(d);
    if (rc == 0) {
        *out = result;
        if (fmt)
            *fmt = family;
    }
    return rc;
}

enum fq_qscale fq_quantity_scale_for(const char *resource)
{
    return resource && !strcmp(resource, "cpu") ? FQ_Q_MILLI : FQ_Q_UNIT;
}

/* Writes "-"?, the digits of mag and sfx into buf as snprintf would (cut
 * to size - 1 bytes). By hand: the controllers format a quantity for every
 * resource they write, and snprintf cost about a thousand instructions a
 * call. */
static void put_text(char *buf, unsigned long size, bool neg, uint64_t mag,
                     const char *sfx)
{
    char t[32], *p = t + 24; /* 20 digits, a sign; sfx is at most 2 bytes */
    size_t ns = strlen(sfx);
    memcpy(p, sfx, ns + 1);
    do
        *--p = (char)('0' + mag % 10);
    while ((mag /= 10) > 0);
    if (neg)
        *--p = '-';
    if (size == 0)
        return;
    size_t n = (size_t)(t + 24 + ns - p);
    if (n > size - 1)
        n = size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

char *fq_quantity_format(int64_t v, enum fq_qscale scale, enum fq_qformat fmt,
                         char *buf, unsigned long size)
{
    static const char *const dec[] = {"", "k", "M", "G", "T", "P", "E"};
    static const char *const binsfx[] = {"",   "Ki", "Mi", "Gi",
                                         "Ti", "Pi", "Ei"};
    bool neg = v < 0;
    uint64_t mag = neg ? 0 - (uint64_t)v : (uint64_t)v;

    if (scale == FQ_Q_MILLI) {
        if (mag % 1000) {
            put_text(buf, size, neg, mag, "m");
            return buf;
        }
        mag /= 1000;
    }
    int step = 0;
    if (fmt == FQ_QF_BINARY_SI && mag >= 1024) {
        while (step < 6 && mag && mag % 1024 == 0) {
            mag /= 1024;
            step++;
        }
        put_text(buf, size, neg, mag, binsfx[step]);
        return buf;
    }
    while (step < 6 && mag && mag % 1000 == 0) {
        mag /= 1000;
        step++;
    }
    put_text(buf, size, neg, mag, dec[step]);
    return buf;
}

int fq_add_overflow(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return FQ_EOVERFLOW;
    *out = r;
    return 0;
}

int fq_mul_overflow(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return FQ_EOVERFLOW;
    *out = r;
    return 0;
}
