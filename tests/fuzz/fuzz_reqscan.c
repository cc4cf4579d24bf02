/*
 * fuzz_reqscan.c - libFuzzer target for the request scanner in front of
 * evhttp (src/daemon/api/reqscan.c), which reads every byte a client
 * sends before anything else does.
 *
 * Input: two bytes choose the caps (small, so that both are reached),
 * one byte a chunk size, the rest is the byte stream. It is fed whole to
 * one scanner and in chunks to another. Invariants checked: the verdict
 * and the final state do not depend on the chunking; a verdict is 0, 413
 * or 431 and leaves the state OVER; the head never counts more than
 * max_headers + 1 bytes; after OVER, more bytes change nothing.
 *
 * reqscan.c lives in the daemon, not the core the fuzz targets link, so
 * it is compiled into this target directly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/daemon/api/reqscan.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_state(const struct fq_reqscan *s, int rc)
{
    if (rc != 0 && rc != 413 && rc != 431)
        abort();
    if (rc && (s->st != FQ_REQSCAN_OVER || s->refuse != rc))
        abort();
    if (s->hbytes > s->max_headers + 1)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    size_t max_headers = 1 + (size_t)data[0] * 4;
    size_t max_body = (size_t)data[1] * 16;
    size_t chunk = 1 + data[2] % 17;
    data += 3;
    size -= 3;

    struct fq_reqscan whole, parts;
    fq_reqscan_init(&whole, max_headers, max_body);
    fq_reqscan_init(&parts, max_headers, max_body);
    int rw = fq_reqscan_feed(&whole, data, size);
    check_state(&whole, rw);
    int rp = 0;
    for (size_t i = 0; i < size; i += chunk) {
        size_t k = size - i < chunk ? size - i : chunk;
        rp = fq_reqscan_feed(&parts, data + i, k);
        check_state(&parts, rp);
        if (rp)
            break;
        /* evhttp may finish a chunked request between any two reads */
    }
    /* The body count is the bytes fed so far: after a refusal it depends
     * on where the input was cut, before one it must not. */
    if (rw != rp || whole.st != parts.st || whole.clen != parts.clen ||
        whole.chunked != parts.chunked || (!rw && whole.body != parts.body))
        abort();
    if (rw) { /* refused: nothing changes any more */
        struct fq_reqscan before = whole;
        if (fq_reqscan_feed(&whole, data, size) != rw ||
            memcmp(&before, &whole, sizeof(before)) != 0)
            abort();
    }
    fq_reqscan_done(&whole);
    if (whole.st == FQ_REQSCAN_BODY && whole.chunked)
        abort();
    return 0;
}
