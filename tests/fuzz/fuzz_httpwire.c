/*
 * fuzz_httpwire.c - libFuzzer target for the CLI's HTTP/1.1 answer reader
 * (src/cli/httpwire.c), which reads whatever the server at --server sends.
 *
 * The input is written, as the server's whole answer, into one end of a
 * socketpair whose other end the connection reads; the request is a GET.
 * Invariants checked: reading never crashes, leaks or hangs (the peer is
 * shut down, so every read ends), the body handed on is never more than
 * the input, a result is 0 or a negative FQ_E* code with a message, and a
 * status is 0 or 100-599. The input is also split as a URL.
 *
 * httpwire.c lives in the CLI, not the core the fuzz targets link, so it
 * is compiled into this target directly.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../../src/cli/httpwire.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int body(void *ctx, int status, const char *d, size_t n)
{
    size_t *total = ctx;
    (void)status;
    (void)d;
    *total += n;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char url[512], host[256], port[16];
    size_t un = size < sizeof(url) - 1 ? size : sizeof(url) - 1;
    memcpy(url, data, un);
    url[un] = '\0';
    if (fq_wire_split_url(url, host, sizeof(host), port, sizeof(port)) == 0 &&
        (!*host || !*port))
        abort();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        abort();
    int big = 1 << 20;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    for (size_t off = 0; off < size;) {
        ssize_t k = write(sv[1], data + off, size - off);
        if (k <= 0)
            abort();
        off += (size_t)k;
    }
    shutdown(sv[1], SHUT_WR);
    struct fq_wire *w = fq_wire_new("fuzz", "80");
    w->fd = sv[0];
    size_t total = 0;
    int status = 0;
    struct fq_err err = {0};
    const char *hdrs[] = {"Accept: application/json"};
    int rc = fq_wire_request(w, "GET", "/x", hdrs, 1, NULL, 0, 0, NULL, body,
                             &total, &status, &err);
    if (total > size)
        abort();
    if (rc != 0 && rc != 1 && (rc >= 0 || !err.msg[0]))
        abort();
    if (status != 0 && (status < 100 || status > 599))
        abort();
    fq_wire_free(w);
    close(sv[1]);
    return 0;
}
