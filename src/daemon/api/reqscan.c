/*
 * reqscan.c - an HTTP/1.1 request stream's position, byte by byte (see
 * reqscan.h).
 *
 * The states and what moves them:
 *
 *   IDLE --any byte--> HEAD --blank line--> BODY --Content-Length bytes,
 *    ^                  |  \                 |     or fq_reqscan_done
 *    |                  |   `-no body--------+---------------> IDLE
 *    |                  `--over max_headers--> OVER (431)
 *    `---------------------------------------' blank line with a
 *                                               Content-Length over
 *                                               max_body, or a chunked
 *                                               body passing it: OVER (413)
 *
 * A line ends at LF; CR is dropped wherever it is (evhttp accepts bare LF
 * too). Blank lines before the request line are skipped, as evhttp does,
 * and leave the stream between requests.
 * Only the first FQ_REQSCAN_LINE bytes of a line are kept: enough to read
 * "content-length:" and its number, or "transfer-encoding:" and "chunked"
 * within; a Content-Length line longer than that counts as huge.
 *
 * Invariants: hbytes <= max_headers + 1 and the state is OVER when it is
 * max_headers + 1; once OVER nothing changes; the verdict does not depend
 * on how the bytes are split between calls (fuzz_reqscan checks this).
 *
 * What it does not do: parse chunk framing, validate the request line or
 * header syntax (evhttp does), or find a pipelined request inside a
 * chunked body.
 */
#include "api/reqscan.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void fq_reqscan_init(struct fq_reqscan *s, size_t max_headers, size_t max_body)
{
    memset(s, 0, sizeof(*s));
    s->max_headers = max_headers;
    s->max_body = max_body;
    s->st = FQ_REQSCAN_IDLE;
    s->clen = -1;
}

static void start(struct fq_reqscan *s)
{
    s->st = FQ_REQSCAN_HEAD;
    s->hbytes = 0;
    s->lines = 0;
    s->linelen = 0;
    s->clen = -1;
    s->chunked = false;
    s->body = 0;
}

static int over(struct fq_reqscan *s, int code)
{
    s->st = FQ_REQSCAN_OVER;
    s->refuse = code;
    return code;
}

/* A complete header line (not the request line), its start in s->line. */
static void header_line(struct fq_reqscan *s)
{
    static const char cl[] = "content-length:", te[] = "transfer-encoding:";
    size_t kept =
        s->linelen < FQ_REQSCAN_LINE ? s->linelen : FQ_REQSCAN_LINE - 1;
    s->line[kept] = '\0';
    if (!strncmp(s->line, cl, sizeof(cl) - 1)) {
        const char *p = s->line + sizeof(cl) - 1;
        while (*p == ' ' || *p == '\t')
            p++;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0)
            return; /* evhttp refuses it (400) */
        if (errno == ERANGE || s->linelen >= FQ_REQSCAN_LINE - 1)
            v = LLONG_MAX;
        s->clen = v;
    } else if (!strncmp(s->line, te, sizeof(te) - 1)) {
        if (strstr(s->line + sizeof(te) - 1, "chunked"))
            s->chunked = true;
    }
}

/* The blank line after the head. */
static int head_done(struct fq_reqscan *s)
{
    if (s->clen > (long long)s->max_body)
        return over(s, 413);
    s->body = 0;
    s->st = s->chunked || s->clen > 0 ? FQ_REQSCAN_BODY : FQ_REQSCAN_IDLE;
    return 0;
}

int fq_reqscan_feed(struct fq_reqscan *s, const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s->st == FQ_REQSCAN_OVER)
            return s->refuse;
        if (s->st == FQ_REQSCAN_IDLE)
            start(s);
        if (s->st == FQ_REQSCAN_BODY) {
            size_t take = n - i;
            if (!s->chunked &&
                (unsigned long long)take >
                    (unsigned long long)(s->clen - (long long)s->body))
                take = (size_t)(s->clen - (long long)s->body);
            s->body += take;
            i += take;
            if (s->chunked && s->body > s->max_body)
                return over(s, 413);
            if (!s->chunked && (long long)s->body >= s->clen)
                s->st = FQ_REQSCAN_IDLE;
            continue;
        }
        unsigned char ch = p[i++];
        if (++s->hbytes > s->max_headers)
            return over(s, 431);
        if (ch == '\r')
            continue;
        if (ch == '\n') {
            if (s->linelen == 0 && s->lines > 0) {
                int rc = head_done(s);
                if (rc)
                    return rc;
            } else if (s->linelen == 0) {
                /* A blank line before a request (some clients send CRLF
                 * after a body): still between requests. */
                s->st = FQ_REQSCAN_IDLE;
            } else {
                if (s->lines > 0)
                    header_line(s);
                s->lines++;
            }
            s->linelen = 0;
            continue;
        }
        if (s->linelen < FQ_REQSCAN_LINE - 1)
            s->line[s->linelen] = (char)tolower(ch);
        s->linelen++;
    }
    return s->st == FQ_REQSCAN_OVER ? s->refuse : 0;
}

void fq_reqscan_done(struct fq_reqscan *s)
{
    if (s->st == FQ_REQSCAN_BODY && s->chunked)
        s->st = FQ_REQSCAN_IDLE;
}
