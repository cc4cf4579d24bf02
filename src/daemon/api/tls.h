/*
 * tls.h - flexqd's certificates: a CA made at first start and kept in the
 * data directory, and a serving certificate it signs, made at every start
 * for the address flexqd listens on.
 *
 *   DATA_DIR/tls/ca.crt  ca.key      the CA (kept; ca.key is 0600)
 *   DATA_DIR/tls/tls.crt tls.key     the serving pair (made again)
 *
 * The serving certificate names 127.0.0.1, ::1 and localhost, plus the
 * listen host when it is another address or name. Clients trust ca.crt
 * (kubeconfig's certificate-authority-data, GKE's
 * masterAuth.clusterCaCertificate).
 *
 * Keys are ECDSA P-256, signatures SHA-256; the CA is valid ten years, the
 * serving certificate one year (it is remade at each start anyway).
 */
#ifndef FLEXQ_DAEMON_TLS_H
#define FLEXQ_DAEMON_TLS_H

#include "flexq/err.h"

struct fq_tls;

/* Loads or makes the CA under data_dir, makes the serving certificate for
 * `host` (the listen host: "127.0.0.1", "0.0.0.0", "::1", a name) and the
 * SSL_CTX. FQ_EIO with the file named on error. */
int fq_tls_new(const char *data_dir, const char *host, struct fq_tls **out,
               struct fq_err *err);
void fq_tls_free(struct fq_tls *t);

/* The SSL_CTX * for fq_http_new_tls. */
void *fq_tls_ssl_ctx(struct fq_tls *t);
/* The CA certificate, PEM (borrowed). */
const char *fq_tls_ca_pem(const struct fq_tls *t);
/* The same, base64 of the PEM (kubeconfig's and GKE's encoding). */
const char *fq_tls_ca_b64(const struct fq_tls *t);

/* Records where the HTTPS listener is ("127.0.0.1:8266", what clients
 * dial: a wildcard host becomes 127.0.0.1); NULL before it is bound. */
void fq_tls_set_endpoint(struct fq_tls *t, const char *host, int port);
const char *fq_tls_endpoint(const struct fq_tls *t);

#endif
