/*
 * html.c - report.html: the numbers beside the plots (see html.h).
 *
 * One static page, no script: a table with one column per policy on the
 * left, the plots on the right (they wrap below on a narrow window). The
 * figures come from fq_sim_figures, so the page says what summary.txt
 * says; only its layout differs. Same runs, same bytes.
 *
 * It does not: embed the SVGs (they sit next to it), or style beyond a few
 * lines of CSS.
 */
#include "html.h"

#include <stdio.h>
#include <stdlib.h>

#include "flexq/alloc.h"

static void human(char *buf, size_t size, double s)
{
    if (s < 60)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, size, "%.1f min", s / 60);
    else if (s < 86400)
        snprintf(buf, size, "%.2f h", s / 3600);
    else
        snprintf(buf, size, "%.1f d", s / 86400);
}

static double share(size_t a, size_t n)
{
    return n ? 100.0 * (double)a / (double)n : 0;
}

/* Plan B's share of the chip-hours delivered. */
static double plan_b_share(const struct fq_sim_result *r)
{
    double b = 0, all = 0;
    for (size_t p = 0; p < r->npools; p++) {
        all += r->pools[p].busy_chip_ms;
        if (r->pools[p].queued)
            b += r->pools[p].busy_chip_ms;
    }
    return all > 0 ? 100.0 * b / all : 0;
}

void fq_sim_report_html(const struct fq_sim_result *const *rs, size_t n,
                        const char *title, struct fq_buf *out)
{
    struct fq_sim_figures *f = fq_xcalloc(n ? n : 1, sizeof(*f));
    for (size_t i = 0; i < n; i++)
        fq_sim_figures(rs[i], &f[i]);
    fq_buf_puts(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                     "<title>");
    fq_buf_put_xml(out, title);
    fq_buf_puts(out, "</title>\n<style>\n"
                     "body{font-family:sans-serif;margin:1em}\n"
                     ".wrap{display:flex;flex-wrap:wrap;gap:1em;"
                     "align-items:flex-start}\n"
                     "table{border-collapse:collapse;font-size:13px}\n"
                     "td,th{border:1px solid #ccc;padding:3px 8px;"
                     "text-align:right}\n"
                     "td:first-child,th:first-child{text-align:left}\n"
                     ".plots{display:flex;flex-wrap:wrap;gap:.5em;flex:1}\n"
                     "</style></head>\n<body>\n<h2>");
    fq_buf_put_xml(out, title);
    fq_buf_puts(out, "</h2>\n");
    if (n && ((rs[0]->arrival_scale > 0 && rs[0]->arrival_scale != 1.0) ||
              rs[0]->plan_a_quota))
        fq_buf_printf(out, "<p>arrivals x%.2f, Plan A quota %lld</p>\n",
                      rs[0]->arrival_scale > 0 ? rs[0]->arrival_scale : 1.0,
                      (long long)rs[0]->plan_a_quota);
    fq_buf_puts(out, "<div class=\"wrap\">\n<table>\n<tr><th></th>");
    for (size_t i = 0; i < n; i++) {
        fq_buf_puts(out, "<th>");
        fq_buf_put_xml(out, rs[i]->policy);
        fq_buf_puts(out, "</th>");
    }
    fq_buf_puts(out, "</tr>\n");
#define ROW(label, ...)                       \
 do {                                         \
  fq_buf_puts(out, "<tr><td>" label "</td>"); \
  for (size_t i = 0; i < n; i++) {            \
   fq_buf_puts(out, "<td>");                  \
   fq_buf_printf(out, __VA_ARGS__);           \
   fq_buf_puts(out, "</td>");                 \
  }                                           \
  fq_buf_puts(out, "</tr>\n");                \
 } while (0)
#define WAIT(label, field)                    \
 do {                                         \
  fq_buf_puts(out, "<tr><td>" label "</td>"); \
  for (size_t i = 0; i < n; i++) {            \
   char h[32];                                \
   human(h, sizeof(h), f[i].cls[0].field);    \
   fq_buf_printf(out, "<td>%s</td>", h);      \
  }                                           \
  fq_buf_puts(out, "</tr>\n");                \
 } while (0)
    ROW("jobs finished", "%zu", f[i].finished);
    ROW("unfinished / refused", "%zu / %zu", f[i].unfinished, f[i].refused);
    ROW("started at once", "%.1f%%", 100.0 * f[i].cls[0].at_once);
    ROW("waited over 1 h", "%.1f%%", 100.0 * f[i].cls[0].over_1h);
    WAIT("wait mean", mean_s);
    WAIT("wait p50", p50_s);
    WAIT("wait p90", p90_s);
    WAIT("wait p95", p95_s);
    WAIT("wait p99", p99_s);
    WAIT("wait max", max_s);
    ROW("bounded slowdown, mean", "%.1f", f[i].cls[0].slowdown_mean);
    ROW("cost (kUSD)", "%.1f", f[i].cost_total / 1000.0);
    ROW("cost per chip-hour (USD)", "%.2f", f[i].cost_per_chip_hour);
    ROW("chip-hours on Plan B", "%.0f%%", plan_b_share(rs[i]));
    if (n && (rs[0]->nfc || rs[0]->fc_skipped)) {
        ROW("forecasts within tolerance", "%.0f%% of %zu",
            share(f[i].fc.band, f[i].fc.n), f[i].fc.n);
        ROW("&nbsp; of jobs that waited &gt; 5 min", "%.0f%% of %zu",
            share(f[i].fc.waited_band, f[i].fc.waited), f[i].fc.waited);
    }
#undef ROW
#undef WAIT
    fq_buf_puts(out, "</table>\n<div class=\"plots\">\n"
                     "<img src=\"wait-cdf.svg\" alt=\"wait CDF\">\n"
                     "<img src=\"wait-cdf-tail.svg\" alt=\"wait CDF, "
                     "p90 to p100\">\n"
                     "<img src=\"queue.svg\" alt=\"jobs waiting\">\n");
    for (size_t i = 0; i < n; i++) {
        fq_buf_puts(out, "<img src=\"pools-");
        fq_buf_put_xml(out, rs[i]->policy);
        fq_buf_puts(out, ".svg\" alt=\"pools, ");
        fq_buf_put_xml(out, rs[i]->policy);
        fq_buf_puts(out, "\">\n");
    }
    fq_buf_puts(out, "</div>\n</div>\n</body></html>\n");
    free(f);
}
