/*
 * fuzz_base64.c - libFuzzer target for the base64 decoder (base64.c), which
 * reads every Secret's data and a ConfigMap's binaryData.
 *
 * Any input may be refused, but never crash or read out of bounds. A
 * refusal names an offset inside the input; an accepted input decodes to
 * as many bytes as the checking pass (no buffer) counted, and those bytes
 * encode to text that decodes back to them (text to bytes is not
 * one-to-one: newlines and a padded group's unused low bits are lost).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/base64.h"
#include "flexq/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    size_t len = strlen(s), at = (size_t)-1;
    struct fq_buf b = FQ_BUF_INIT;
    long n = fq_base64_decode(&b, s, &at);
    long check = fq_base64_decode(NULL, s, NULL);
    if (n != check)
        abort();
    if (n < 0) {
        if (at > len)
            abort();
    } else {
        if ((size_t)n != b.len)
            abort();
        struct fq_buf e = FQ_BUF_INIT, back = FQ_BUF_INIT;
        fq_base64_encode(&e, b.data, b.len);
        if (fq_base64_decode(&back, fq_buf_str(&e), NULL) != n ||
            (n && memcmp(back.data, b.data, (size_t)n) != 0))
            abort();
        fq_buf_release(&e);
        fq_buf_release(&back);
    }
    fq_buf_release(&b);
    free(s);
    return 0;
}
