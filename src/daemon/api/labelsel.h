/*
 * labelsel.h - Kubernetes label and field selectors for the API.
 *
 * Label selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`,
 * `a notin (x,y)`, joined by commas (all must hold). Field selectors:
 * `path=value` and `path!=value` where path is a dotted path into the
 * object (`metadata.name`, `involvedObject.name`, `status.phase`).
 */
#ifndef FLEXQ_DAEMON_LABELSEL_H
#define FLEXQ_DAEMON_LABELSEL_H

#include <stdbool.h>

#include "flexq/err.h"
#include "flexq/value.h"

struct fq_labelsel;

/* NULL or "" gives a selector that matches everything. FQ_EPARSE on bad
 * syntax. `field` selects field-selector syntax. */
int fq_labelsel_parse(const char *text, bool field, struct fq_labelsel **out,
                      struct fq_err *err);
void fq_labelsel_free(struct fq_labelsel *s);
/* Does `obj` (a whole object) match? A NULL selector matches. */
bool fq_labelsel_match(const struct fq_labelsel *s, const struct fq_value *obj);
/* Whether s (may be NULL) matches every object: no requirement. */
bool fq_labelsel_empty(const struct fq_labelsel *s);
/* The value a field selector requires for `path` with `=`, or NULL. */
const char *fq_labelsel_equals(const struct fq_labelsel *s, const char *path);

#endif
