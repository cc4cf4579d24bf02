/*
 * fuzz_json.c - libFuzzer target for the JSON reader and writer.
 *
 * Any input may be refused, but never crash, leak or hang. An accepted
 * document must re-encode (compact and pretty) to text that parses back to
 * an equal tree, and compact encoding must be a fixed point: numbers keep
 * their text and keys their order. A document [T, P] also exercises merge
 * patch: applying P at once must equal applying its members one by one,
 * and applying P twice must change nothing more (RFC 7386 is idempotent).
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

static void merge_checks(const struct fq_value *doc)
{
    if (doc->type != FQ_V_SEQ || doc->u.seq.n != 2)
        return;
    const struct fq_value *t = doc->u.seq.items[0], *p = doc->u.seq.items[1];
    struct fq_value *once = fq_value_clone(t);
    fq_value_merge_patch(&once, p);
    struct fq_value *twice = fq_value_clone(once);
    fq_value_merge_patch(&twice, p);
    char *a = fq_json_dumps(once, 0), *b = fq_json_dumps(twice, 0);
    check(strcmp(a, b) == 0, "merge patch is not idempotent", b);
    free(b);
    if (p->type == FQ_V_MAP) {
        struct fq_value *ref = fq_value_clone(t);
        if (ref->type != FQ_V_MAP) {
            fq_value_free(ref);
            ref = fq_value_map();
        }
        for (size_t i = 0; i < p->u.map.n; i++) {
            struct fq_value *one = fq_value_map();
            fq_map_set(one, p->u.map.items[i].key,
                       fq_value_clone(p->u.map.items[i].val));
            fq_value_merge_patch(&ref, one);
            fq_value_free(one);
        }
        b = fq_json_dumps(ref, 0);
        check(strcmp(a, b) == 0, "merge patch differs from key by key", b);
        free(b);
        fq_value_free(ref);
    }
    free(a);
    fq_value_free(twice);
    fq_value_free(once);
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
    merge_checks(v);
    fq_value_free(v);
    return 0;
}
