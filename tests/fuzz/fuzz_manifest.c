/*
 * fuzz_manifest.c - libFuzzer target for the manifest reader
 * (fq_manifest_read: YAML stream -> every document validated -> all or
 * nothing) and, through it, every object decoder.
 *
 * Any input may be refused, but never crash, leak or hang, and the reader
 * keeps its contract, checked here (a violation aborts so libFuzzer records
 * the input):
 *   - refused: a negative code, at least one error, every error with a
 *     negative code and a message, and no documents handed out;
 *   - accepted: no errors, at least one document, and each document passes
 *     fq_object_validate again on its own (with and without an error list)
 *     and keeps its identity (fq_object_meta succeeds).
 * Besides, each accepted document's JSON encoding must read back as an
 * equal tree, which is what "unknown fields are kept" rests on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/manifest.h"
#include "flexq/objects.h"
#include "flexq/value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz_manifest: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fq_limits lim = fq_limits_default();
    lim.max_nodes = 100000; /* keeps each run fast; the logic is the same */
    struct fq_docs docs = {0};
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    int rc = fq_manifest_read_limits((const char *)data, size, "fuzz.yaml",
                                     &lim, &docs, &errs);
    if (rc < 0) {
        check(docs.n == 0 && docs.items == NULL,
              "documents left after an error");
        check(errs.n > 0, "refused without an error");
        for (size_t i = 0; i < errs.n; i++)
            check(errs.items[i].code < 0 && errs.items[i].msg[0] != '\0',
                  "error without a code or message");
        fq_errlist_release(&errs);
        return 0;
    }
    check(errs.n == 0, "accepted with errors");
    check(docs.n > 0, "accepted without documents");
    for (size_t i = 0; i < docs.n; i++) {
        const struct fq_value *v = docs.items[i];
        check(fq_object_validate(v, NULL, NULL) == 0, "valid only in a stream");
        check(fq_object_validate(v, "again", &errs) == 0 && errs.n == 0,
              "valid only without an error list");
        check(fq_object_meta(v, NULL, NULL, NULL) == 0, "no identity");
        char *json = fq_json_dumps(v, FQ_JSON_COMPACT);
        struct fq_value *back = NULL;
        struct fq_err err;
        struct fq_limits again = fq_limits_default();
        again.max_bytes = SIZE_MAX;
        if (fq_json_parse(json, strlen(json), "re", &again, &back, &err) == 0) {
            check(fq_value_equal(back, v),
                  "JSON round trip changed the object");
            fq_value_free(back);
        }
        free(json);
    }
    fq_errlist_release(&errs);
    fq_docs_release(&docs);
    return 0;
}
