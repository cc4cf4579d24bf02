/*
 * manifest.h - reading a manifest: a YAML (or JSON) stream of objects,
 * checked whole before anything uses it.
 *
 * `flexq apply -f`, `flexq validate -f` and the API's bulk paths all read
 * files the same way: parse the stream within flexq's input limits, run
 * every document (a v1 List counts as its items) through
 * fq_object_validate (objects.h), check what one
 * file can show on its own (the same object twice, an empty stream), and
 * hand back either all the documents or none.
 */
#ifndef FLEXQ_MANIFEST_H
#define FLEXQ_MANIFEST_H

#include <stddef.h>

#include "flexq/err.h"
#include "flexq/value.h"

/*
 * Reads `text` (`len` bytes; need not be NUL-terminated) named `name` (a
 * file name for messages, e.g. "dws-tpu-queue.yaml" or "<stdin>"; NULL
 * gives "<input>"). On success returns 0 and fills `out` (initialize it
 * with {0}; release with fq_docs_release) with every document, in order.
 * On any problem returns a negative code (FQ_EPARSE for malformed YAML,
 * FQ_ELIMIT for an input over a limit, FQ_EINVAL for invalid objects),
 * appends EVERY error found to `errs` (may be NULL), and leaves `out`
 * empty: a manifest is used whole or not at all.
 *
 * Errors read "NAME:LINE:COL: FIELD.PATH: what", e.g.
 *   rayjob.yaml:4:9: metadata.name: "rayjob-tpu-v6e-dws-${JOB_ID}"
 *   contains an unexpanded variable ${JOB_ID}; pipe the file through
 *   envsubst first
 */
int fq_manifest_read(const char *text, size_t len, const char *name,
                     struct fq_docs *out, struct fq_errlist *errs);

/* Same with explicit limits (tests, the fuzzer). */
int fq_manifest_read_limits(const char *text, size_t len, const char *name,
                            const struct fq_limits *lim, struct fq_docs *out,
                            struct fq_errlist *errs);

#endif
