/*
 * html.h - the report page `flexq sim --out` writes: a per-policy summary
 * table beside the plots (report.html).
 */
#ifndef FLEXQ_SIM_HTML_H
#define FLEXQ_SIM_HTML_H

#include <stddef.h>

#include "flexq/buf.h"
#include "report.h"

/*
 * Appends a complete HTML page for the runs of one trace: a table with a
 * column per policy (jobs, shares started at once and waiting over an
 * hour, wait percentiles, slowdown, cost, Plan B's share of the work,
 * forecast accuracy) beside the SVG files write_outputs puts in the same
 * folder (wait-cdf.svg, wait-cdf-tail.svg, queue.svg, pools-POLICY.svg).
 * `title` (borrowed) heads the page.
 */
void fq_sim_report_html(const struct fq_sim_result *const *rs, size_t n,
                        const char *title, struct fq_buf *out);

#endif
