/*
 * printcols.h - the printer columns of each kind (Kueue's, KubeRay's and
 * Kubernetes' additionalPrinterColumns and printers), one definition for
 * the CLI's tables and the API's server-side Tables.
 */
#ifndef FLEXQ_PRINTCOLS_H
#define FLEXQ_PRINTCOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flexq/buf.h"
#include "flexq/kinds.h"
#include "flexq/value.h"

enum fq_printcol_type {
    FQ_COL_PATH, /* a dotted path ("\." escapes a dot inside a key) */
    FQ_COL_COND, /* the status of condition `arg` */
    FQ_COL_AGE,  /* the age of the timestamp at path `arg` */
    FQ_COL_FN    /* fn computes the cell */
};

typedef void (*fq_printcol_fn)(const struct fq_value *obj, int64_t now,
                               struct fq_buf *out);

struct fq_printcol {
    const char *header; /* "RESERVED IN"; NULL ends a list */
    enum fq_printcol_type type;
    const char *arg; /* path or condition type */
    fq_printcol_fn fn;
    bool wide; /* only with -o wide (priority 1 in a Table) */
};

/* The columns of kind k after NAME (Events have no NAME column), ended by
 * an entry whose header is NULL. Static. */
const struct fq_printcol *fq_printcols(enum fq_kind k);

/* Appends the cell of column c for obj to out, ages taken at `now` (ms). */
void fq_printcol_cell(const struct fq_printcol *c, const struct fq_value *obj,
                      int64_t now, struct fq_buf *out);

/* kubectl's short age: "45s", "3m20s", "5h", "2d3h", "400d", "2y30d". */
void fq_printcols_duration(int64_t ms, char *buf, size_t size);
/* Age of an RFC 3339 timestamp at `now`, or "<unknown>". */
void fq_printcols_age(const char *rfc3339, int64_t now, char *buf, size_t size);
/* The status of condition `type` of an object, or "". */
const char *fq_printcols_condition(const struct fq_value *obj,
                                   const char *type);
/* Event cells: OBJECT ("pod/NAME") and LAST SEEN. */
void fq_printcols_event_object(const struct fq_value *obj, int64_t now,
                               struct fq_buf *out);
void fq_printcols_event_seen(const struct fq_value *obj, int64_t now,
                             struct fq_buf *out);

#endif
