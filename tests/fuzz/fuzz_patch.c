/*
 * fuzz_patch.c - libFuzzer target for JSON patch and strategic merge
 * patch (patch.c).
 *
 * The input is JSON: [target, patch]. Either patch may refuse, but never
 * crash, leak or hang; a patched document must still encode to JSON that
 * parses back equal, and a strategic merge patch must leave no directive
 * key ("$patch", "$retainKeys" ...) in the result.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void roundtrip(const struct fq_value *v)
{
    char *text = fq_json_dumps(v, 0);
    struct fq_limits lim = fq_limits_default();
    struct fq_value *back = NULL;
    if (fq_json_parse(text, strlen(text), NULL, &lim, &back, NULL) < 0 ||
        !fq_value_equal(v, back)) {
        fprintf(stderr, "fuzz_patch: result does not round-trip:\n%s\n", text);
        abort();
    }
    fq_value_free(back);
    free(text);
}

static bool has_directive(const struct fq_value *v)
{
    if (!v)
        return false;
    if (v->type == FQ_V_MAP) {
        for (size_t i = 0; i < v->u.map.n; i++)
            if (v->u.map.items[i].key[0] == '$' ||
                has_directive(v->u.map.items[i].val))
                return true;
    } else if (v->type == FQ_V_SEQ) {
        for (size_t i = 0; i < v->u.seq.n; i++)
            if (has_directive(v->u.seq.items[i]))
                return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fq_limits lim = fq_limits_default();
    lim.max_bytes = 64 * 1024;
    struct fq_value *doc = NULL;
    if (fq_json_parse((const char *)data, size, NULL, &lim, &doc, NULL) < 0)
        return 0;
    if (doc->type == FQ_V_SEQ && doc->u.seq.n == 2) {
        const struct fq_value *t = doc->u.seq.items[0];
        const struct fq_value *p = doc->u.seq.items[1];
        struct fq_value *a = fq_value_clone(t);
        if (fq_patch_json(&a, p, NULL) == 0)
            roundtrip(a);
        fq_value_free(a);
        if (!has_directive(t)) {
            struct fq_value *b = fq_value_clone(t);
            if (fq_patch_strategic(&b, p, FQ_KIND_POD, NULL) == 0) {
                roundtrip(b);
                if (has_directive(b)) {
                    fprintf(stderr, "fuzz_patch: a directive stayed\n");
                    abort();
                }
            }
            fq_value_free(b);
        }
    }
    fq_value_free(doc);
    return 0;
}
