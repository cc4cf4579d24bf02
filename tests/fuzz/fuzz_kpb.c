/*
 * fuzz_kpb.c - libFuzzer target for the Kubernetes protobuf body reader
 * (kpb.c).
 *
 * Any input may be refused, but never crash, leak, hang or read out of
 * bounds. An accepted body must give a mapping with apiVersion and kind
 * that encodes to JSON which parses back to an equal tree, and that the
 * kind's validator (the API's next step) reads without crashing. Inputs are
 * tried as given and with the "k8s\0" magic put in front, so the fuzzer
 * need not find the magic to reach the messages.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/kpb.h"
#include "flexq/objects.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const uint8_t *data, size_t size)
{
    struct fq_value *v = NULL;
    struct fq_err e = {0};
    if (fq_kpb_decode(data, size, &v, &e) < 0) {
        if (v)
            abort(); /* nothing is returned on error */
        return;
    }
    if (!v || v->type != FQ_V_MAP || !fq_value_path_str(v, "kind", NULL))
        abort();
    char *text = fq_json_dumps(v, 0);
    struct fq_limits lim = fq_limits_default();
    struct fq_value *back = NULL;
    if (fq_json_parse(text, strlen(text), NULL, &lim, &back, NULL) < 0 ||
        !fq_value_equal(v, back)) {
        fprintf(stderr,
                "fuzz_kpb: JSON of a decoded body does not parse "
                "back equal:\n%s\n",
                text);
        abort();
    }
    fq_value_free(back);
    free(text);
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    fq_object_validate(v, NULL, &errs);
    fq_errlist_release(&errs);
    fq_value_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one(data, size);
    uint8_t *with = malloc(size + 4);
    memcpy(with, "k8s", 4);
    if (size)
        memcpy(with + 4, data, size);
    one(with, size + 4);
    free(with);
    return 0;
}
