/*
 * quantity.c - Kubernetes quantities (skeleton; the real parser lands
 * shortly).
 */
#include "flexq/quantity.h"

#include <stdio.h>
#include <string.h>

int fq_quantity_parse(const char *s, enum fq_qscale scale, int64_t *out,
                      enum fq_qformat *fmt, struct fq_err *err)
{
    (void)scale, (void)out, (void)fmt;
    return fq_err_set(err, FQ_EINVAL, "invalid quantity \"%s\"", s);
}

enum fq_qscale fq_quantity_scale_for(const char *resource)
{
    return resource && !strcmp(resource, "cpu") ? FQ_Q_MILLI : FQ_Q_UNIT;
}

char *fq_quantity_format(int64_t v, enum fq_qscale scale, enum fq_qformat fmt,
                         char *buf, unsigned long size)
{
    (void)scale, (void)fmt;
    snprintf(buf, size, "%lld", (long long)v);
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
