/*
 * tls.c - the CA and serving certificate of flexqd's HTTPS listener (see
 * tls.h), with OpenSSL 3.
 *
 * How it works: at start, DATA_DIR/tls/ca.{crt,key} are read; when either
 * is missing or unreadable both are made (a self-signed CA, key written
 * 0600 through a temporary file and rename, so a crash leaves the old
 * pair or none). Then a fresh serving key and certificate, signed by the
 * CA, with the listen address in subjectAltName, are written beside them
 * (for curl --cacert users and for debugging) and loaded into an SSL_CTX
 * that accepts TLS 1.2 and 1.3.
 *
 * What it does not do: client certificates (clients authenticate with
 * bearer tokens, auth.h), rotation while running, ACME.
 */
#include "api/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexq/alloc.h"

struct fq_tls {
    SSL_CTX *ctx;
    char *ca_pem;
    char *ca_b64;
    char endpoint[128];
};

static int ossl_fail(struct fq_err *err, const char *what, const char *file)
{
    char buf[256];
    unsigned long e = ERR_get_error();
    ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    return fq_err_set(err, FQ_EIO, "tls: %s%s%s: %s", what, file ? " " : "",
                      file ? file : "", e ? buf : strerror(errno));
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX c;
    X509V3_set_ctx_nodb(&c);
    X509V3_set_ctx(&c, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &c, nid, value);
    if (!ex)
        return -1;
    int ok = X509_add_ext(cert, ex, -1);
    X509_EXTENSION_free(ex);
    return ok ? 0 : -1;
}

/* A certificate for `key`, named `cn`, valid `days`, signed by
 * (issuer, ikey), or self-signed when issuer is NULL. */
static X509 *make_cert(EVP_PKEY *key, const char *cn, int days, X509 *issuer,
                       EVP_PKEY *ikey, const char *san)
{
    X509 *x = X509_new();
    if (!x)
        return NULL;
    unsigned char serial[16];
    RAND_bytes(serial, sizeof(serial));
    serial[0] &= 0x7f;
    BIGNUM *bn = BN_bin2bn(serial, sizeof(serial), NULL);
    int ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
    BN_free(bn);
    ok = ok && X509_set_version(x, 2) &&
         X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
         X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) &&
         X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    ok =
        ok &&
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                                   (const unsigned char *)"flexq", -1, -1, 0) &&
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   (const unsigned char *)cn, -1, -1, 0);
    ok = ok &&
         X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509 *is = issuer ? issuer : x;
    if (ok && !issuer)
        ok = add_ext(x, is, NID_basic_constraints, "critical,CA:TRUE") == 0 &&
             add_ext(x, is, NID_key_usage,
                     "critical,keyCertSign,cRLSign,digitalSignature") == 0 &&
             add_ext(x, is, NID_subject_key_identifier, "hash") == 0;
    else if (ok)
        ok =
            add_ext(x, is, NID_basic_constraints, "critical,CA:FALSE") == 0 &&
            add_ext(x, is, NID_key_usage,
                    "critical,digitalSignature,keyEncipherment") == 0 &&
            add_ext(x, is, NID_ext_key_usage, "serverAuth") == 0 &&
            add_ext(x, is, NID_authority_key_identifier, "keyid:always") == 0 &&
            add_ext(x, is, NID_subject_alt_name, san) == 0;
    ok = ok && X509_sign(x, issuer ? ikey : key, EVP_sha256()) > 0;
    if (!ok) {
        X509_free(x);
        return NULL;
    }
    return x;
}

/* Writes `pem` to `path` with `mode` through a temporary file. */
static int write_file(const char *path, const char *data, size_t len, int mode,
                      struct fq_err *err)
{
    char *tmp = fq_xasprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, mode);
    int rc = 0;
    if (fd < 0 || write(fd, data, len) != (ssize_t)len || fsync(fd) < 0)
        rc = fq_err_set(err, FQ_EIO, "tls: cannot write %s: %s", tmp,
                        strerror(errno));
    if (fd >= 0)
        close(fd);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = fq_err_set(err, FQ_EIO, "tls: cannot rename %s: %s", tmp,
                        strerror(errno));
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

static char *pem_of(int (*wr)(BIO *, void *), void *obj, size_t *len)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *out = NULL;
    if (b && wr(b, obj)) {
        char *p;
        long n = BIO_get_mem_data(b, &p);
        out = fq_xstrndup(p, (size_t)n);
        *len = (size_t)n;
    }
    BIO_free(b);
    return out;
}

static int wr_cert(BIO *b, void *x)
{
    return PEM_write_bio_X509(b, x);
}

static int wr_key(BIO *b, void *k)
{
    return PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
}

static int save(const char *path, int (*wr)(BIO *, void *), void *obj, int mode,
                struct fq_err *err)
{
    size_t len = 0;
    char *pem = pem_of(wr, obj, &len);
    if (!pem)
        return ossl_fail(err, "cannot encode", path);
    int rc = write_file(path, pem, len, mode, err);
    free(pem);
    return rc;
}

static int load_ca(const char *crt, const char *key, X509 **x, EVP_PKEY **k)
{
    FILE *f = fopen(crt, "r");
    *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
    if (f)
        fclose(f);
    f = fopen(key, "r");
    *k = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
    if (f)
        fclose(f);
    if (*x && *k && X509_check_private_key(*x, *k) == 1)
        return 0;
    X509_free(*x);
    EVP_PKEY_free(*k);
    *x = NULL;
    *k = NULL;
    ERR_clear_error();
    return -1;
}

static char *base64(const char *s, size_t n)
{
    size_t cap = 4 * ((n + 2) / 3) + 1;
    char *out = fq_xmalloc(cap);
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
    return out;
}

/* subjectAltName for the listen host. */
static char *san_for(const char *host)
{
    const char *base = "IP:127.0.0.1,IP:::1,DNS:localhost";
    unsigned char buf[16];
    if (!host || !*host || !strcmp(host, "0.0.0.0") || !strcmp(host, "::") ||
        !strcmp(host, "127.0.0.1") || !strcmp(host, "::1") ||
        !strcmp(host, "localhost"))
        return fq_xstrdup(base);
    if (inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf))
        return fq_xasprintf("%s,IP:%s", base, host);
    return fq_xasprintf("%s,DNS:%s", base, host);
}

int fq_tls_new(const char *data_dir, const char *host, struct fq_tls **out,
               struct fq_err *err)
{
    char *dir = fq_xasprintf("%s/tls", data_dir);
    char *ca_crt = fq_xasprintf("%s/ca.crt", dir);
    char *ca_key = fq_xasprintf("%s/ca.key", dir);
    char *crt = fq_xasprintf("%s/tls.crt", dir);
    char *key = fq_xasprintf("%s/tls.key", dir);
    char *san = san_for(host);
    X509 *ca = NULL, *cert = NULL;
    EVP_PKEY *cak = NULL, *k = NULL;
    struct fq_tls *t = NULL;
    int rc = 0;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        rc = fq_err_set(err, FQ_EIO, "tls: cannot create %s: %s", dir,
                        strerror(errno));
        goto out;
    }
    if (load_ca(ca_crt, ca_key, &ca, &cak) < 0) {
        cak = EVP_EC_gen("P-256");
        ca = cak ? make_cert(cak, "flexq-ca", 3650, NULL, NULL, NULL) : NULL;
        if (!ca) {
            rc = ossl_fail(err, "cannot make the CA", NULL);
            goto out;
        }
        if ((rc = save(ca_key, wr_key, cak, 0600, err)) < 0 ||
            (rc = save(ca_crt, wr_cert, ca, 0644, err)) < 0)
            goto out;
    }
    k = EVP_EC_gen("P-256");
    cert = k ? make_cert(k, "flexqd", 365, ca, cak, san) : NULL;
    if (!cert) {
        rc = ossl_fail(err, "cannot make the serving certificate", NULL);
        goto out;
    }
    if ((rc = save(key, wr_key, k, 0600, err)) < 0 ||
        (rc = save(crt, wr_cert, cert, 0644, err)) < 0)
        goto out;
    t = fq_xcalloc(1, sizeof(*t));
    t->ctx = SSL_CTX_new(TLS_server_method());
    if (!t->ctx || !SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION) ||
        SSL_CTX_use_certificate(t->ctx, cert) != 1 ||
        SSL_CTX_add1_chain_cert(t->ctx, ca) != 1 ||
        SSL_CTX_use_PrivateKey(t->ctx, k) != 1) {
        rc = ossl_fail(err, "cannot set up", crt);
        goto out;
    }
    /* No ALPN: clients that offer h2 fall back to HTTP/1.1. */
    size_t len = 0;
    t->ca_pem = pem_of(wr_cert, ca, &len);
    t->ca_b64 = base64(t->ca_pem, len);
out:
    if (rc < 0 && t) {
        fq_tls_free(t);
        t = NULL;
    }
    X509_free(ca);
    X509_free(cert);
    EVP_PKEY_free(cak);
    EVP_PKEY_free(k);
    free(dir);
    free(ca_crt);
    free(ca_key);
    free(crt);
    free(key);
    free(san);
    *out = t;
    return rc;
}

void fq_tls_free(struct fq_tls *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ctx);
    free(t->ca_pem);
    free(t->ca_b64);
    free(t);
}

void *fq_tls_ssl_ctx(struct fq_tls *t)
{
    return t->ctx;
}

const char *fq_tls_ca_pem(const struct fq_tls *t)
{
    return t->ca_pem;
}

const char *fq_tls_ca_b64(const struct fq_tls *t)
{
    return t->ca_b64;
}

void fq_tls_set_endpoint(struct fq_tls *t, const char *host, int port)
{
    if (!host || !*host || !strcmp(host, "0.0.0.0"))
        host = "127.0.0.1";
    else if (!strcmp(host, "::"))
        host = "::1";
    if (strchr(host, ':'))
        snprintf(t->endpoint, sizeof(t->endpoint), "[%s]:%d", host, port);
    else
        snprintf(t->endpoint, sizeof(t->endpoint), "%s:%d", host, port);
}

const char *fq_tls_endpoint(const struct fq_tls *t)
{
    return t && t->endpoint[0] ? t->endpoint : NULL;
}
