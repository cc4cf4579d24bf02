/*
 * print.h - kubectl-style output for the CLI: tables with the printer
 * columns Kueue and KubeRay define, ages, names, -o json|yaml|name.
 */
#ifndef FLEXQ_CLI_PRINT_H
#define FLEXQ_CLI_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flexq/buf.h"
#include "flexq/kinds.h"
#include "flexq/value.h"

enum {
    FQ_PRINT_WIDE = 1 << 0,      /* -o wide: the extra columns */
    FQ_PRINT_NAMESPACE = 1 << 1, /* -A: a NAMESPACE column first */
    FQ_PRINT_KIND = 1 << 2,      /* several kinds: NAME is kind.group/name */
    FQ_PRINT_NO_HEADERS = 1 << 3,
    FQ_PRINT_LABELS = 1 << 4, /* --show-labels: a LABELS column last */
};

/* Columns fq_print_table_keep can carry widths for. */
#define FQ_PRINT_MAX_COLS 32

/* Wall-clock now in ms (the CLI is not the pure core). */
int64_t fq_print_now(void);

/* kubectl's short age: "45s", "3m20s", "5h", "2d3h", "400d", "2y30d". */
void fq_print_duration(int64_t ms, char *buf, size_t size);
/* Age of an RFC 3339 timestamp at `now`, or "<unknown>". */
void fq_print_age(const char *rfc3339, int64_t now, char *buf, size_t size);

/* "workload.kueue.x-k8s.io/NAME", "pod/NAME" (core group). */
void fq_print_name(enum fq_kind kind, const char *name, struct fq_buf *out);

/* The status ("True", "False", "Unknown") of condition `type` of an object,
 * or "" when absent. */
const char *fq_print_condition(const struct fq_value *obj, const char *type);

/* Prints objects of one kind as a table to `out`; "No resources found"
 * goes to stderr when n == 0 (with the namespace when `ns` is set). */
void fq_print_table(enum fq_kind kind, const struct fq_value *const *objs,
                    size_t n, int flags, const char *ns, int64_t now,
                    FILE *out);

/* fq_print_table that keeps column widths in keep[] (zeroed by the
 * caller, NULL for none) between calls: `get -w` prints one row per call
 * and its rows stay aligned with the header. */
void fq_print_table_keep(enum fq_kind kind, const struct fq_value *const *objs,
                         size_t n, int flags, const char *ns, int64_t now,
                         size_t keep[FQ_PRINT_MAX_COLS], FILE *out);

/* Prints the events of an object (or all given events) as
 * `LAST SEEN  TYPE  REASON  OBJECT  MESSAGE` (object column when
 * `with_object`). */
void fq_print_events(const struct fq_value *const *events, size_t n,
                     bool with_object, int64_t now, const char *indent,
                     FILE *out);

#endif
