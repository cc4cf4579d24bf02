/*
 * svg.c - draws line charts as SVG (see svg.h).
 *
 * How it works: the chart finds the data range of all series, widens it to
 * "nice" tick steps (1, 2 or 5 times a power of ten; decades on a log
 * axis; 1 s, 10 s, 1 min, ... 1 d, 10 d on a log axis of seconds), maps
 * data to a 760 x 400 canvas with a fixed plot area (the legend to its
 * right), and writes one <polyline> per series with a legend. Series with many points are
 * thinned to at most MAX_POINTS by keeping every k-th point (and the last),
 * so a 71,000-job CDF stays a small file. Numbers are printed with fixed
 * precision so the same data gives the same bytes.
 *
 * It does not: draw bars or scatter plots, embed fonts, or escape anything
 * but the XML specials in labels.
 */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"

#define W          760
#define H          400
#define L          70 /* plot area: left, right, top, bottom margins */
#define R          270
#define T          40
#define B          50
#define MAX_POINTS 1500

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                     "#ff7f0e", "#9467bd", "#8c564b",
                                     "#e377c2", "#7f7f7f"};

/* A tick step of 1, 2 or 5 x 10^k giving about 5 ticks over span. */
static double nice_step(double span)
{
    if (!(span > 0))
        return 1;
    double raw = span / 5;
    double p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void tick_label(char *buf, size_t size, double v)
{
    if (fabs(v) >= 1e6 || (fabs(v) < 1e-3 && v != 0))
        snprintf(buf, size, "%.0e", v);
    else if (v == floor(v))
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%g", v);
}

/*
 * Landmarks of a log axis of seconds: people read "10 min" or "1 d" more
 * easily than 600 or 1e+05, so such an axis is ticked there rather than at
 * decades.
 */
static const struct {
    double s;
    const char *label;
} time_ticks[] = {
    {1, "1 s"},       {10, "10 s"},       {60, "1 min"},
    {600, "10 min"},  {3600, "1 h"},      {86400, "1 d"},
    {864000, "10 d"}, {8640000, "100 d"}, {86400000, "1000 d"},
};

#define NTIME_TICKS (sizeof(time_ticks) / sizeof(time_ticks[0]))

/* Index of the last landmark at or below log10 value v (0 if none). */
static size_t time_tick_below(double v)
{
    size_t i = 0;
    while (i + 1 < NTIME_TICKS && log10(time_ticks[i + 1].s) <= v + 1e-9)
        i++;
    return i;
}

/* The log axis of y: log10(1 + y), so that 0 has a place. */
static double ylog(double y)
{
    return log10(1 + (y > 0 ? y : 0));
}

void fq_svg_chart(struct fq_buf *out, const char *title, const char *xlabel,
                  const char *ylabel, const struct fq_svg_series *s, size_t ns,
                  int flags)
{
    bool logt = flags & FQ_SVG_LOGX_SECONDS;
    bool logx = logt || (flags & FQ_SVG_LOGX);
    bool logy = flags & FQ_SVG_LOGY;
    double x0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    double y0 = flags & FQ_SVG_YDATA ? INFINITY : 0;
    for (size_t k = 0; k < ns; k++) {
        for (size_t i = 0; i < s[k].n; i++) {
            double x = s[k].x[i];
            if (logx)
                x = log10(x > 1e-3 ? x : 1e-3);
            if (x < x0)
                x0 = x;
            if (x > x1)
                x1 = x;
            double y = logy ? ylog(s[k].y[i]) : s[k].y[i];
            if (y < y0)
                y0 = y;
            if (y > y1)
                y1 = y;
        }
    }
    if (!isfinite(y0))
        y0 = 0;
    if (!isfinite(x0)) {
        x0 = 0;
        x1 = 1;
    }
    if (!isfinite(y1) || y1 <= y0)
        y1 = y0 + 1;
    double xs = logx ? 1 : nice_step(x1 - x0);
    double ys = logy ? 1 : nice_step(y1 - y0);
    int decades = 0; /* a log y axis is ticked 0, 1, 10 ... 10^decades */
    if (logy) {
        double ymax = pow(10, y1) - 1;
        decades = (int)ceil(log10(ymax > 1 ? ymax : 1) - 1e-9);
        if (decades < 1)
            decades = 1;
        y0 = 0;
        y1 = ylog(pow(10, decades));
    }
    size_t t0 = 0, t1 = 0; /* the landmarks an axis of seconds spans */
    if (logt) {
        t0 = time_tick_below(x0);
        t1 = time_tick_below(x1);
        if (t1 + 1 < NTIME_TICKS && log10(time_ticks[t1].s) < x1 - 1e-9)
            t1++;
        if (t1 <= t0 && t0 + 1 < NTIME_TICKS)
            t1 = t0 + 1;
        x0 = log10(time_ticks[t0].s);
        x1 = log10(time_ticks[t1].s);
    } else {
        x0 = floor(x0 / xs) * xs;
        x1 = ceil(x1 / xs) * xs;
        if (x1 <= x0)
            x1 = x0 + xs;
    }
    if (!logy) {
        y0 = floor(y0 / ys + 1e-9) * ys;
        y1 = ceil(y1 / ys - 1e-9) * ys;
        if (y1 <= y0)
            y1 = y0 + ys;
    }
    double pw = W - L - R, ph = H - T - B;
#define PX(x) (L + ((x)-x0) / (x1 - x0) * pw)
#define PY(y) (T + ph - ((y)-y0) / (y1 - y0) * ph)

    fq_buf_printf(out,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                  "height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "font-family=\"sans-serif\" font-size=\"11\">\n"
                  "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
                  "<text x=\"%d\" y=\"22\" font-size=\"14\">",
                  W, H, W, H, W, H, L);
    fq_buf_put_xml(out, title);
    fq_buf_puts(out, "</text>\n");
    /* Grid and ticks. */
    size_t ny =
        logy ? (size_t)decades + 2 : (size_t)floor((y1 - y0) / ys + 0.5) + 1;
    for (size_t i = 0; i < ny; i++) {
        char lab[32];
        double v = y0 + (double)i * ys;
        if (logy) {
            double tick = i == 0 ? 0 : pow(10, (double)(i - 1));
            v = ylog(tick);
            tick_label(lab, sizeof(lab), tick);
        } else {
            tick_label(lab, sizeof(lab), fabs(v) < ys / 1e6 ? 0 : v);
        }
        fq_buf_printf(out,
                      "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
                      "text-anchor=\"end\">%s</text>\n",
                      L, PY(v), L + pw, PY(v), L - 5, PY(v) + 4, lab);
    }
    size_t nx = logt ? t1 - t0 + 1 : (size_t)floor((x1 - x0) / xs + 0.5) + 1;
    for (size_t i = 0; i < nx; i++) {
        char lab[32];
        double v;
        if (logt) {
            v = log10(time_ticks[t0 + i].s);
            snprintf(lab, sizeof(lab), "%s", time_ticks[t0 + i].label);
        } else {
            v = x0 + (double)i * xs;
            if (logx)
                tick_label(lab, sizeof(lab), pow(10, v));
            else
                tick_label(lab, sizeof(lab), fabs(v) < xs / 1e6 ? 0 : v);
        }
        fq_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%.1f\" "
                      "text-anchor=\"middle\">%s</text>\n",
                      PX(v), T, PX(v), T + ph, PX(v), T + ph + 15, lab);
    }
    fq_buf_printf(out,
                  "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" "
                  "fill=\"none\" stroke=\"#333\"/>\n",
                  L, T, pw, ph);
    fq_buf_printf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
                  L + pw / 2, H - 12);
    fq_buf_put_xml(out, xlabel);
    fq_buf_printf(out,
                  "</text>\n<text transform=\"translate(16,%.1f) "
                  "rotate(-90)\" text-anchor=\"middle\">",
                  T + ph / 2);
    fq_buf_put_xml(out, ylabel);
    fq_buf_puts(out, "</text>\n");
    /* Series. */
    for (size_t k = 0; k < ns; k++) {
        const char *col = colors[k % (sizeof(colors) / sizeof(colors[0]))];
        size_t every = s[k].n > MAX_POINTS ? s[k].n / MAX_POINTS + 1 : 1;
        fq_buf_printf(out,
                      "<polyline fill=\"none\" stroke=\"%s\" "
                      "stroke-width=\"1.5\" points=\"",
                      col);
        double prev_y = 0;
        for (size_t i = 0; i < s[k].n; i++) {
            if (i % every && i != s[k].n - 1)
                continue;
            double x = s[k].x[i];
            if (logx)
                x = log10(x > 1e-3 ? x : 1e-3);
            double y = logy ? ylog(s[k].y[i]) : s[k].y[i];
            if (s[k].step && i > 0)
                fq_buf_printf(out, "%.1f,%.1f ", PX(x), PY(prev_y));
            fq_buf_printf(out, "%.1f,%.1f ", PX(x), PY(y));
            prev_y = y;
        }
        fq_buf_puts(out, "\"/>\n");
        double ly = T + 10 + 16.0 * (double)k;
        fq_buf_printf(out,
                      "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" "
                      "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
                      "<text x=\"%.0f\" y=\"%.1f\">",
                      L + pw + 10, ly, L + pw + 30, ly, col, L + pw + 35,
                      ly + 4);
        fq_buf_put_xml(out, s[k].name ? s[k].name : "");
        fq_buf_puts(out, "</text>\n");
    }
    fq_buf_puts(out, "</svg>\n");
#undef PX
#undef PY
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void wait_cdf(const struct fq_sim_result *const *rs, size_t n,
                     struct fq_buf *out, bool tail)
{
    struct fq_svg_series *s = fq_xcalloc(n ? n : 1, sizeof(*s));
    double **xs = fq_xcalloc(n ? n : 1, sizeof(*xs));
    double **ys = fq_xcalloc(n ? n : 1, sizeof(*ys));
    for (size_t k = 0; k < n; k++) {
        const struct fq_sim_result *r = rs[k];
        xs[k] = fq_xmalloc((r->njobs + 1) * sizeof(double));
        ys[k] = fq_xmalloc((r->njobs + 1) * sizeof(double));
        size_t m = 0;
        for (size_t i = 0; i < r->njobs; i++)
            if (r->jobs[i].outcome == FQ_SIM_FINISHED)
                xs[k][m++] =
                    (double)(r->jobs[i].start_ms - r->jobs[i].submit_ms) /
                    1000.0;
        qsort(xs[k], m, sizeof(double), cmp_double);
        size_t from = 0;
        for (size_t i = 0; i < m; i++) {
            if (xs[k][i] < 1)
                xs[k][i] = 1; /* the log axis starts at 1 s */
            ys[k][i] = (double)(i + 1) / (double)m;
            /* The tail starts at the last point at or below 0.9, so
             * that each curve begins on the 0.9 line. */
            if (tail && ys[k][i] <= 0.9)
                from = i;
        }
        if (tail && from < m && ys[k][from] < 0.9) {
            ys[k][from] = 0.9;
        }
        s[k] = (struct fq_svg_series){r->policy, xs[k] + from, ys[k] + from,
                                      m - from, true};
    }
    if (tail)
        fq_svg_chart(out, "Wait time CDF, the tail (90th percentile up)",
                     "wait until running (log scale; under 1 s shown at 1 s)",
                     "share of jobs", s, n, FQ_SVG_LOGX_SECONDS | FQ_SVG_YDATA);
    else
        fq_svg_chart(out, "Wait time CDF (finished jobs)",
                     "wait until running (log scale; under 1 s shown at 1 s)",
                     "share of jobs", s, n, FQ_SVG_LOGX_SECONDS);
    for (size_t k = 0; k < n; k++) {
        free(xs[k]);
        free(ys[k]);
    }
    free(xs);
    free(ys);
    free(s);
}

void fq_sim_plot_wait_cdf(const struct fq_sim_result *const *rs, size_t n,
                          struct fq_buf *out)
{
    wait_cdf(rs, n, out, false);
}

void fq_sim_plot_wait_tail(const struct fq_sim_result *const *rs, size_t n,
                           struct fq_buf *out)
{
    wait_cdf(rs, n, out, true);
}

void fq_sim_plot_pools(const struct fq_sim_result *r, struct fq_buf *out)
{
    size_t np = r->npools, n = r->series.n;
    struct fq_svg_series *s = fq_xcalloc(2 * np + 1, sizeof(*s));
    double *x = fq_xmalloc((n + 1) * sizeof(double));
    double *y = fq_xmalloc((2 * np + 1) * (n + 1) * sizeof(double));
    char(*names)[96] = fq_xcalloc(2 * np + 1, sizeof(*names));
    for (size_t i = 0; i < n; i++)
        x[i] = (double)r->series.t_ms[i] / 86400000.0;
    size_t ns = 0;
    for (size_t p = 0; p < np; p++) {
        double *yc = y + ns * (n + 1), *yu = y + (ns + 1) * (n + 1);
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            yc[i] = r->series.pool_chips[i * np + p];
            yu[i] = r->series.pool_used[i * np + p];
            any = any || yc[i] > 0;
        }
        if (!any)
            continue; /* a pool without accelerators, or never used */
        snprintf(names[ns], sizeof(names[0]), "%.40s provisioned",
                 r->pools[p].name);
        snprintf(names[ns + 1], sizeof(names[0]), "%.40s in use",
                 r->pools[p].name);
        s[ns] = (struct fq_svg_series){names[ns], x, yc, n, true};
        s[ns + 1] = (struct fq_svg_series){names[ns + 1], x, yu, n, true};
        ns += 2;
    }
    char title[128];
    snprintf(title, sizeof(title), "Chips per pool over time (%s)", r->policy);
    fq_svg_chart(out, title, "time (days)", "chips", s, ns, 0);
    free(names);
    free(y);
    free(x);
    free(s);
}

void fq_sim_plot_queue(const struct fq_sim_result *const *rs, size_t n,
                       struct fq_buf *out)
{
    struct fq_svg_series *s = fq_xcalloc(n ? n : 1, sizeof(*s));
    double **xs = fq_xcalloc(n ? n : 1, sizeof(*xs));
    double **ys = fq_xcalloc(n ? n : 1, sizeof(*ys));
    for (size_t k = 0; k < n; k++) {
        const struct fq_sim_series *se = &rs[k]->series;
        xs[k] = fq_xmalloc((se->n + 1) * sizeof(double));
        ys[k] = fq_xmalloc((se->n + 1) * sizeof(double));
        for (size_t i = 0; i < se->n; i++) {
            xs[k][i] = (double)se->t_ms[i] / 86400000.0;
            ys[k][i] = se->pending[i];
        }
        s[k] = (struct fq_svg_series){rs[k]->policy, xs[k], ys[k], se->n, true};
    }
    fq_svg_chart(out, "Jobs waiting over time", "time (days)",
                 "jobs submitted, not yet running (log scale)", s, n,
                 FQ_SVG_LOGY);
    for (size_t k = 0; k < n; k++) {
        free(xs[k]);
        free(ys[k]);
    }
    free(xs);
    free(ys);
    free(s);
}
