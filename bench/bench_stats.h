/*
 * bench_stats.h - what bench/jobs.c and bench/jobs_api.c measure alike:
 * summarize.py's percentiles and distribution JSON (the Slurm harness's
 * keys, so ratio.py compares), and the start/end stamps pods append to a
 * file ("<pod> s|e <epoch seconds>"), gathered per job.
 *
 * Header-only (static functions): each benchmark is one program.
 */
#ifndef FLEXQ_BENCH_STATS_H
#define FLEXQ_BENCH_STATS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Percentile p (0..1) of sorted v, linear interpolation (summarize.pct). */
static double pct(const double *v, size_t n, double p)
{
    if (!n)
        return 0;
    double idx = p * (double)(n - 1);
    size_t lo = (size_t)floor(idx), hi = (size_t)ceil(idx);
    return v[lo] + (v[hi] - v[lo]) * (idx - (double)lo);
}

/* summarize.dist_ms of v (seconds; sorted in place); "null" when empty. */
static char *dist_ms(double *v, size_t n)
{
    if (!n)
        return fq_xstrdup("null");
    qsort(v, n, sizeof(*v), cmp_d);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return fq_xasprintf(
        "{\"n\": %zu, \"p50_ms\": %.1f, \"p90_ms\": %.1f, \"p99_ms\": "
        "%.1f, \"max_ms\": %.1f, \"mean_ms\": %.1f}",
        n, pct(v, n, 0.5) * 1000.0, pct(v, n, 0.9) * 1000.0,
        pct(v, n, 0.99) * 1000.0, v[n - 1] * 1000.0, sum / (double)n * 1000.0);
}

/* Stamps "<pod> s|e <epoch>" -> per job (pod name less its suffix). */
struct stamp {
    char name[128];
    double s, e;
};

static size_t read_stamps(const char *path, struct stamp **out)
{
    FILE *f = fopen(path, "re");
    size_t n = 0, cap = 0;
    struct stamp *v = NULL;
    char line[256], name[128], kind[4];
    double t;
    while (f && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%127s %3s %lf", name, kind, &t) != 3)
            continue;
        /* pod "<job>-<5 chars>" -> job */
        char *dash = strrchr(name, '-');
        if (dash)
            *dash = '\0';
        size_t i = 0;
        while (i < n && strcmp(v[i].name, name))
            i++;
        if (i == n) {
            FQ_GROW(v, cap, n + 1);
            memset(&v[n], 0, sizeof(v[n]));
            snprintf(v[n].name, sizeof(v[n].name), "%s", name);
            n++;
        }
        if (kind[0] == 's')
            v[i].s = t;
        else
            v[i].e = t;
    }
    if (f)
        fclose(f);
    *out = v;
    return n;
}

#endif
