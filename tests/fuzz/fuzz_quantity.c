/*
 * fuzz_quantity.c - libFuzzer target for Kubernetes quantities.
 *
 * The input, as a string, is parsed in both scales. An accepted quantity's
 * canonical text must parse back to the same value in the same scale. The
 * first 16 bytes also drive the overflow-checked helpers, compared with
 * 128-bit arithmetic.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what, const char *text)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz_quantity: %s: \"%s\"\n", what, text);
    abort();
}

static void arith(const uint8_t *data, size_t size)
{
    if (size < 16)
        return;
    int64_t a, b, r = 0;
    memcpy(&a, data, 8);
    memcpy(&b, data + 8, 8);
    __extension__ __int128 sum = (__int128)a + b, prod = (__int128)a * b;
    int rc = fq_add_overflow(a, b, &r);
    check((rc == 0) == (sum >= INT64_MIN && sum <= INT64_MAX), "add", "");
    check(rc != 0 || r == (int64_t)sum, "add value", "");
    rc = fq_mul_overflow(a, b, &r);
    check((rc == 0) == (prod >= INT64_MIN && prod <= INT64_MAX), "mul", "");
    check(rc != 0 || r == (int64_t)prod, "mul value", "");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arith(data, size);
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';

    static const enum fq_qscale scales[] = {FQ_Q_UNIT, FQ_Q_MILLI};

    for (size_t i = 0; i < 2; i++) {
        int64_t v = 0, back = 0;
        enum fq_qformat fmt;
        struct fq_err err;
        int rc = fq_quantity_parse(s, scales[i], &v, &fmt, &err);
        if (rc) {
            check(rc == FQ_EINVAL || rc == FQ_EOVERFLOW, "error code", s);
            continue;
        }
        char buf[64];
        fq_quantity_format(v, scales[i], fmt, buf, sizeof(buf));
        rc = fq_quantity_parse(buf, scales[i], &back, NULL, &err);
        check(rc == 0, "canonical text does not parse", buf);
        check(back == v, "canonical text changes the value", buf);
    }
    free(s);
    return 0;
}
