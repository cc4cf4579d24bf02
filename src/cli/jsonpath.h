/*
 * jsonpath.h - kubectl's `-o jsonpath=TEMPLATE` and
 * `-o custom-columns=SPEC` for `flexq get` (see jsonpath.c).
 */
#ifndef FLEXQ_CLI_JSONPATH_H
#define FLEXQ_CLI_JSONPATH_H

#include <stdbool.h>
#include <stddef.h>

#include "flexq/buf.h"
#include "flexq/err.h"
#include "flexq/value.h"

/* Longest template or column spec accepted, and deepest {range} nesting. */
#define FQ_JSONPATH_MAX_LEN   4096
#define FQ_JSONPATH_MAX_DEPTH 8
/* Most output one template may make (nested ranges multiply). */
#define FQ_JSONPATH_MAX_OUT (64u << 20)

/*
 * Renders `tmpl` over `root` into out: text outside braces is copied as
 * is, `{.a.b[0]['c.d'][*]}` prints the values found
 * (several separated by spaces; maps and lists as compact JSON),
 * `{range EXPR}...{end}` repeats its body for each value of EXPR (inside,
 * `.` is that value), `{"text\n"}` prints text (\n, \t escapes), `{@}` the current value. A
 * path that finds nothing prints nothing, as kubectl does. Returns 0, or
 * FQ_EINVAL with err naming the position of a syntax error.
 */
int fq_jsonpath_render(const char *tmpl, const struct fq_value *root,
                       struct fq_buf *out, struct fq_err *err);

/*
 * Prints `objs` as a table whose columns are `spec`:
 * "HEADER:EXPR[,HEADER:EXPR...]" with EXPR a path such as .metadata.name
 * (braces optional); a cell with no value is "<none>", several values are
 * joined by ",". Returns 0 or FQ_EINVAL (err says which column).
 */
int fq_jsonpath_columns(const char *spec, const struct fq_value *const *objs,
                        size_t n, bool headers, struct fq_buf *out,
                        struct fq_err *err);

#endif
