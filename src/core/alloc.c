/*
 * alloc.c - allocation wrappers that abort instead of returning NULL.
 *
 * See alloc.h for the policy. fq_grow doubles capacity so that appending n
 * elements costs O(n) in total.
 */
#include "flexq/alloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
    fprintf(stderr, "flexq: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *fq_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *fq_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *fq_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *fq_xstrdup(const char *s)
{
    return fq_xstrndup(s, strlen(s));
}

char *fq_xstrndup(const char *s, size_t n)
{
    char *p = fq_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *fq_xasprintf(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    char *p = fq_xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void fq_grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / size)
            oom(SIZE_MAX);
        ncap *= 2;
    }
    *items = fq_xrealloc(*items, ncap * size);
    *cap = ncap;
}
