/*
 * table.h - meta.k8s.io Tables (server-side printing) from the printer
 * columns of printcols.h.
 */
#ifndef FLEXQ_DAEMON_TABLE_H
#define FLEXQ_DAEMON_TABLE_H

#include <stdint.h>

#include "flexq/kinds.h"
#include "flexq/value.h"

/* What each row carries (?includeObject=). */
enum fq_table_include {
    FQ_TABLE_METADATA, /* PartialObjectMetadata (the default) */
    FQ_TABLE_OBJECT,   /* the whole object */
    FQ_TABLE_NONE,
};

/* "v1" or "v1beta1" when Accept asks for a meta.k8s.io Table, else NULL
 * (static strings). */
const char *fq_table_accepts(const char *accept);

/* ?includeObject= value (NULL: absent) to its mode. */
enum fq_table_include fq_table_include_of(const char *param);

/* An empty Table of kind k (columnDefinitions set, no rows); owned. */
struct fq_value *fq_table_new(enum fq_kind k, const char *version);

/* Appends obj's row, ages taken at `now` (ms since the epoch). */
void fq_table_add_row(struct fq_value *table, enum fq_kind k,
                      const struct fq_value *obj, int64_t now,
                      enum fq_table_include inc);

#endif
