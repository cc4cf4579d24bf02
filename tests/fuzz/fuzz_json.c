/*
 * fuzz_json.c - libFuzzer target for the JSON reader and writer.
 *
 * Any input may be refused, but never crash, leak or hang. An accepted
 * document must re-encode (compact and pretty) to text that parses back to
 * an equal tree, and compact encoding must be a fixed point: numbers keep
 * their text and keys their order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what, const char *text)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz_json: %s\n--- text ---\n%s\n", what, text);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fq_limits lim = fq_limits_default();
    struct fq_value *v = NULL;
    struct fq_err err;
    if (fq_json_parse((const char *)data, size, "fuzz", &lim, &v, &err)) {
        check(v == NULL, "a tree left after an error", "");
        check(err.msg[0] != '\0', "error without a message", "");
        return 0;
    }
    char *compact = fq_json_dumps(v, FQ_JSON_COMPACT);
    for (int flags = 0; flags <= FQ_JSON_PRETTY; flags++) {
        char *text = fq_json_dumps(v, flags);
        struct fq_value *back = NULL;
        int rc = fq_json_parse(text, strlen(text), "re", &lim, &back, &err);
        check(rc == 0, err.msg, text);
        check(fq_value_equal(back, v), "round trip: value", text);
        char *again = fq_json_dumps(back, FQ_JSON_COMPACT);
        check(strcmp(again, compact) == 0, "round trip: text", again);
        free(again);
        fq_value_free(back);
        free(text);
    }
    free(compact);
    fq_value_free(v);
    return 0;
}
