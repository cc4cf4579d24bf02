/*
 * https.c - starts flexqd's HTTPS listener (https.h has the address
 * rules): makes the certificates (tls.c) in the data directory, binds a
 * second evhttp server with an OpenSSL bufferevent per connection
 * (http.c's fq_http_new_tls) and records the endpoint clients dial.
 *
 * It also serves GET /flexq/v1/tls (public: a CA certificate is no
 * secret) on both listeners: {"endpoint": "127.0.0.1:8266",
 * "caCertificate": PEM, "caData": base64 of the PEM}, what
 * `flexq config kubeconfig` writes into a kubeconfig; 404 without HTTPS.
 *
 * It does not: redirect plain HTTP, or listen without certificates.
 */
#include "api/https.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/status.h"
#include "api/tls.h"
#include "flexq/alloc.h"
#include "log.h"

/* Splits "host:port" / "[v6]:port"; -1 when malformed. */
static int split(const char *addr, char *host, size_t hsize, int *port)
{
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return -1;
    const char *hs = addr, *he = colon;
    if (*hs == '[') {
        hs++;
        if (he == hs || he[-1] != ']')
            return -1;
        he--;
    }
    if ((size_t)(he - hs) >= hsize)
        return -1;
    memcpy(host, hs, (size_t)(he - hs));
    host[he - hs] = '\0';
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1 || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

static void tls_info(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    (void)ctx;
    if (!d->tls || !fq_tls_endpoint(d->tls)) {
        struct fq_err e = {0};
        fq_err_set(&e, FQ_ENOTFOUND,
                   "flexqd serves no HTTPS (started with --tls-listen off, "
                   "or its port was taken)");
        fq_api_error(d, r, FQ_ENOTFOUND, &e, NULL, NULL);
        return;
    }
    struct fq_value *v = fq_value_map();
    fq_map_set(v, "endpoint", fq_value_str(fq_tls_endpoint(d->tls)));
    fq_map_set(v, "caCertificate", fq_value_str(fq_tls_ca_pem(d->tls)));
    fq_map_set(v, "caData", fq_value_str(fq_tls_ca_b64(d->tls)));
    struct fq_buf b = FQ_BUF_INIT;
    fq_json_encode(v, FQ_JSON_COMPACT, &b);
    fq_value_free(v);
    fq_daemon_defer_reply(d, r, 200, "application/json", &b);
    fq_buf_release(&b);
}

int fq_https_attach(struct fq_daemon *d, struct fq_err *err)
{
    /* The CA is public (a client needs it to trust the server); only a
     * read is served. */
    static const struct fq_route_def tls = {.prefix = "/flexq/v1/tls",
                                            .access = FQ_ROUTE_PUBLIC,
                                            .methods = "GET,HEAD"};
    fq_api_add_route_def(d->api, &tls, tls_info, NULL);
    const char *want = d->opts.tls_listen;
    if (want && !strcmp(want, "off"))
        return 0;
    bool autom = !want || !strcmp(want, "auto");
    char host[128];
    int port = 0;
    char *addr = NULL;
    if (autom) {
        if (split(d->opts.listen, host, sizeof(host), &port) < 0)
            return 0; /* fq_http_new refused it already */
        if (port > 0)
            port = port == 65535 ? 0 : port + 1;
        addr = strchr(host, ':') ? fq_xasprintf("[%s]:%d", host, port) :
                                   fq_xasprintf("%s:%d", host, port);
    } else {
        if (split(want, host, sizeof(host), &port) < 0)
            return fq_err_set(err, FQ_EINVAL,
                              "--tls-listen: \"%s\" is not HOST:PORT, auto "
                              "or off",
                              want);
        addr = fq_xstrdup(want);
    }
    int rc = fq_tls_new(d->opts.data_dir, host, &d->tls, err);
    if (rc == 0)
        rc = fq_http_new_tls(fq_daemon_event_base(d), addr,
                             fq_tls_ssl_ctx(d->tls), fq_api_handle, d,
                             &d->https, err);
    if (rc == 0)
        fq_http_set_limits(d->https, d->opts.header_timeout_s,
                           d->opts.max_client_conns);
    if (rc < 0 && autom) {
        fq_log(FQ_LOG_WARN, "no https", "addr=%s reason=\"%s\"", addr,
               err ? err->msg : "");
        fq_tls_free(d->tls);
        d->tls = NULL;
        if (err)
            memset(err, 0, sizeof(*err));
        rc = 0;
    } else if (rc == 0) {
        fq_tls_set_endpoint(d->tls, host, fq_http_port(d->https));
        fq_log(FQ_LOG_INFO, "https", "endpoint=%s", fq_tls_endpoint(d->tls));
    }
    free(addr);
    return rc;
}

void fq_https_detach(struct fq_daemon *d)
{
    fq_http_free(d->https);
    d->https = NULL;
    fq_tls_free(d->tls);
    d->tls = NULL;
}
