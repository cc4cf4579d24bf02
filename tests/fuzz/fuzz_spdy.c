/*
 * fuzz_spdy.c - libFuzzer target for the SPDY/3.1 codec of kubectl
 * port-forward (src/daemon/api/spdy.c), whose frames come straight from
 * the network.
 *
 * Byte 0 picks the mode. Mode 0: the rest is a stream of frames, parsed
 * one after another by one codec as a session would (stopping at the
 * first error or an incomplete frame). Mode 1: the rest is an
 * uncompressed header block, deflated here with SPDY/3's dictionary into
 * a SYN_STREAM, so the fuzzer reaches the block's pairs past zlib.
 * Invariants checked: parsing never crashes or leaks; a frame taken is
 * never longer than the input; an error is FQ_EPARSE or FQ_ELIMIT with a
 * message; a SYN_REPLY written after any input still parses on a fresh
 * peer.
 *
 * spdy.c lives in the daemon, not the core the fuzz targets link, so it
 * is compiled into this target directly.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/daemon/api/spdy.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(long rc, const struct fq_err *e)
{
    if (rc < 0 && ((rc != FQ_EPARSE && rc != FQ_ELIMIT) || !e->msg[0]))
        abort();
}

static void frames(const uint8_t *p, size_t n)
{
    struct fq_spdy *s = fq_spdy_new();
    for (;;) {
        struct fq_spdy_frame f;
        struct fq_err e = {0};
        long rc = fq_spdy_parse(s, p, n, &f, &e);
        check_error(rc, &e);
        if (rc <= 0)
            break;
        if ((size_t)rc > n)
            abort();
        for (size_t i = 0; i < f.nheaders; i++)
            if (!f.headers[i].name[0] ||
                strlen(f.headers[i].value) > f.headers[i].value_len)
                abort();
        p += rc;
        n -= (size_t)rc;
    }
    /* the codec still writes frames a fresh peer reads */
    struct fq_buf b = FQ_BUF_INIT;
    struct fq_spdy_header h = {"port", "80", 0};
    fq_spdy_put_syn_reply(s, 1, 0, &h, 1, &b);
    struct fq_spdy *peer = fq_spdy_new();
    struct fq_spdy_frame f;
    struct fq_err e = {0};
    if (fq_spdy_parse(peer, (const uint8_t *)b.data, b.len, &f, &e) !=
            (long)b.len ||
        f.nheaders != 1)
        abort();
    fq_spdy_free(peer);
    fq_buf_release(&b);
    fq_spdy_free(s);
}

static void raw_block(const uint8_t *p, size_t n)
{
    if (n > FQ_SPDY_MAX_CONTROL / 2)
        return;
    z_stream z = {0};
    if (deflateInit(&z, Z_BEST_COMPRESSION) != Z_OK)
        abort();
    deflateSetDictionary(&z, dictionary, sizeof(dictionary));
    uint8_t *out = malloc(18 + deflateBound(&z, n) + 64);
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    z.next_out = out + 18;
    z.avail_out = (uInt)(deflateBound(&z, n) + 64);
    deflate(&z, Z_SYNC_FLUSH);
    size_t clen = (size_t)(z.next_out - (out + 18));
    deflateEnd(&z);
    size_t plen = 10 + clen;
    uint8_t head[18] = {
        0x80,          3, 0, 1, 0, (uint8_t)(plen >> 16), (uint8_t)(plen >> 8),
        (uint8_t)plen, 0, 0, 0, 1};
    memcpy(out, head, sizeof(head));
    frames(out, 8 + plen);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        raw_block(data + 1, size - 1);
    else
        frames(data + 1, size - 1);
    return 0;
}
