/*
 * base64.c - standard base64 encoding and strict decoding (base64.h).
 *
 * The decoder follows Go's base64.StdEncoding, which is what the API
 * server applies to []byte fields: groups of four characters, "=" only as
 * padding of the last group (one or two), newlines ignored, any other
 * byte refused with its offset. A decoded byte string may hold NULs; the
 * caller's fq_buf keeps its length.
 *
 * What it does not do: the URL alphabet or unpadded input.
 */
#include "flexq/base64.h"

#include <stdbool.h>

#include "flexq/buf.h"

static const char ALPHA[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void fq_base64_encode(struct fq_buf *b, const void *p, size_t n)
{
    const unsigned char *s = p;
    char out[4];
    fq_buf_puts(b, ""); /* an empty input still yields "" */
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)s[i + 1] << 8;
        if (i + 2 < n)
            v |= s[i + 2];
        out[0] = ALPHA[(v >> 18) & 63];
        out[1] = ALPHA[(v >> 12) & 63];
        out[2] = i + 1 < n ? ALPHA[(v >> 6) & 63] : '=';
        out[3] = i + 2 < n ? ALPHA[v & 63] : '=';
        fq_buf_append(b, out, 4);
    }
}

static int sextet(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

long fq_base64_decode(struct fq_buf *b, const char *s, size_t *bad_at)
{
    long total = 0;
    int q[4], nq = 0;
    size_t at[4] = {0}, i = 0;
    bool ended = false; /* a padded group was read: nothing may follow */
    if (b)
        fq_buf_puts(b, "");
    for (; s[i]; i++) {
        if (s[i] == '\r' || s[i] == '\n')
            continue;
        if (ended)
            goto bad;
        at[nq] = i;
        q[nq++] = s[i] == '=' ? -2 : sextet(s[i]);
        if (nq < 4)
            continue;
        nq = 0;
        int n = 3;
        if (q[0] < 0 || q[1] < 0) {
            i = at[q[0] < 0 ? 0 : 1];
            goto bad;
        }
        if (q[2] == -2) {
            if (q[3] != -2) {
                i = at[2]; /* Go names the first '=' */
                goto bad;
            }
            n = 1;
        } else if (q[2] < 0) {
            i = at[2];
            goto bad;
        } else if (q[3] == -2) {
            n = 2;
        } else if (q[3] < 0) {
            i = at[3];
            goto bad;
        }
        ended = n < 3;
        unsigned v = (unsigned)q[0] << 18 | (unsigned)q[1] << 12 |
                     (unsigned)(q[2] < 0 ? 0 : q[2]) << 6 |
                     (unsigned)(q[3] < 0 ? 0 : q[3]);
        unsigned char o[3] = {(unsigned char)(v >> 16), (unsigned char)(v >> 8),
                              (unsigned char)v};
        if (b)
            fq_buf_append(b, o, (size_t)n);
        total += n;
    }
    if (nq == 0)
        return total;
    /* A last group cut short: a bad byte or an early '=' where it is,
     * "xx=" at the end of the input, else where the group began (as Go's
     * decoder counts, newlines included). */
    for (int k = 0; k < nq; k++)
        if (q[k] == -1 || (q[k] == -2 && k < 2)) {
            i = at[k];
            goto bad;
        }
    if (nq < 3 || q[2] != -2)
        i -= (size_t)nq;
bad:
    if (bad_at)
        *bad_at = i;
    return -1;
}
