/*
 * timefmt.c - RFC 3339 timestamps from and to milliseconds since the epoch.
 *
 * Kubernetes writes timestamps in UTC with second precision
 * ("2026-11-29T15:44:00Z"); flexq does the same so that objects look like
 * the ones kubectl shows, but for its own deadlines in annotations, which
 * keep milliseconds when they have them. Parsing also accepts fractional seconds and
 * numeric offsets. Pure arithmetic (days-from-civil), no libc time zone
 * state, so the core stays free of globals.
 */
#include <stdio.h>
#include <string.h>

#include "flexq/err.h"
#include "flexq/timefmt.h"

/* Days since 1970-01-01 for a proleptic Gregorian date (Hinnant's method). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void fq_time_format(int64_t ms, char *buf, unsigned long size)
{
    int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t rem = secs - days * 86400;
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999 || size < 21) {
        snprintf(buf, size, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, m,
                 d, (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
        return;
    }
    /* By hand: every condition and annotation write formats a time, and
     * snprintf was a visible share of a replay. */
    int f[6] = {
        (int)y,         (int)m, (int)d, (int)(rem / 3600), (int)(rem / 60 % 60),
        (int)(rem % 60)};
    char *p = buf;
    *p++ = (char)('0' + f[0] / 1000);
    *p++ = (char)('0' + f[0] / 100 % 10);
    *p++ = (char)('0' + f[0] / 10 % 10);
    *p++ = (char)('0' + f[0] % 10);
    for (int i = 1; i < 6; i++) {
        *p++ = "--T::"[i - 1];
        *p++ = (char)('0' + f[i] / 10);
        *p++ = (char)('0' + f[i] % 10);
    }
    *p++ = 'Z';
    *p = '\0';
}

void fq_time_format_ms(int64_t ms, char *buf, unsigned long size)
{
    int64_t frac = ((ms % 1000) + 1000) % 1000;
    fq_time_format(ms, buf, size);
    size_t n = strlen(buf);
    if (frac == 0 || n < 1 || n + 5 > size)
        return;
    snprintf(buf + n - 1, size - (n - 1), ".%03dZ", (int)frac);
}

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9')
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

int fq_time_parse(const char *s, int64_t *ms)
{
    int y, mo, d, h, mi, se, frac_ms = 0;
    const char *p = s;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d) || (*p != 'T' && *p != 't'))
        return FQ_EINVAL;
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
        digits(&p, 2, &se))
        return FQ_EINVAL;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return FQ_EINVAL;
    if (*p == '.') {
        p++;
        int scale = 100, any = 0;
        while (*p >= '0' && *p <= '9') {
            frac_ms += (*p - '0') * scale;
            scale /= 10;
            p++;
            any = 1;
        }
        if (!any)
            return FQ_EINVAL;
    }
    int64_t off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
            return FQ_EINVAL;
        off = sign * (int64_t)(oh * 3600 + om * 60);
    } else {
        return FQ_EINVAL;
    }
    if (*p)
        return FQ_EINVAL;
    int64_t secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 +
                   h * 3600 + mi * 60 + se - off;
    *ms = secs * 1000 + frac_ms;
    return 0;
}

/*
 * Durations. Each component is digits with an optional fraction and a
 * unit; a text with no unit at all is seconds. Worked example: "1h2.5m"
 * is 3,600,000 + 150,000 = 3,750,000 ms. The integer part is capped
 * before it is multiplied, so no input can overflow.
 */
int fq_duration_parse(const char *s, int64_t *ms)
{
    if (!s || !*s || strlen(s) > FQ_DURATION_TEXT_MAX)
        return FQ_EINVAL;
    int64_t total = 0;
    const char *p = s;
    while (*p) {
        int64_t whole = 0, frac = 0, scale = 1;
        const char *d = p;
        while (*p >= '0' && *p <= '9') {
            if (whole > FQ_DURATION_MAX_MS)
                return FQ_EINVAL;
            whole = whole * 10 + (*p++ - '0');
        }
        if (*p == '.') {
            p++;
            while (*p >= '0' && *p <= '9') {
                if (scale < 1000000000) {
                    frac = frac * 10 + (*p - '0');
                    scale *= 10;
                }
                p++;
            }
        }
        if (p == d || (p == d + 1 && *d == '.'))
            return FQ_EINVAL; /* no digits */
        int64_t unit;
        if (!*p && d == s)
            unit = 1000; /* a bare number: seconds */
        else if (p[0] == 'm' && p[1] == 's')
            unit = 1, p += 2;
        else if (*p == 'h')
            unit = 3600000, p++;
        else if (*p == 'm')
            unit = 60000, p++;
        else if (*p == 's')
            unit = 1000, p++;
        else
            return FQ_EINVAL;
        if (whole > FQ_DURATION_MAX_MS / unit)
            return FQ_EINVAL;
        total += whole * unit + frac * unit / scale;
        if (total > FQ_DURATION_MAX_MS)
            return FQ_EINVAL;
    }
    *ms = total;
    return 0;
}
