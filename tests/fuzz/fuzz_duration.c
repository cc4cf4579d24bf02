/*
 * fuzz_duration.c - libFuzzer target for run-time durations
 * (fq_duration_parse: the flexq.dev/expected-runtime annotation, read by
 * the preemption grace and the wait-time estimates).
 *
 * The input, as a string, is parsed. An accepted duration lies within
 * [0, FQ_DURATION_MAX_MS], comes from text no longer than
 * FQ_DURATION_TEXT_MAX, and its milliseconds written as "<n>ms" parse
 * back to the same value; a refused one leaves the output untouched.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/err.h"
#include "flexq/timefmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what, const char *text)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz_duration: %s: \"%s\"\n", what, text);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    int64_t ms = -7;
    int rc = fq_duration_parse(s, &ms);
    if (rc != 0) {
        check(rc == FQ_EINVAL, "error code", s);
        check(ms == -7, "output written on error", s);
    } else {
        check(strlen(s) <= FQ_DURATION_TEXT_MAX, "text over the cap", s);
        check(ms >= 0 && ms <= FQ_DURATION_MAX_MS, "out of range", s);
        char buf[40];
        snprintf(buf, sizeof(buf), "%lldms", (long long)ms);
        int64_t back = -1;
        check(fq_duration_parse(buf, &back) == 0 && back == ms,
              "milliseconds do not parse back", s);
    }
    free(s);
    return 0;
}
