/*
 * reqgate.c - Host, Origin and Content-Type checks before routing (see
 * reqgate.h for the rules).
 *
 * Why: without tokens (the default on 127.0.0.1) any web page the user
 * opens could otherwise POST a Job with `Content-Type: text/plain` (a
 * "simple" request the browser sends without asking), and a page whose
 * name the attacker rebinds to 127.0.0.1 could read the API as if it were
 * same-origin. Refusing every media type but the API's own closes the
 * first (the browser must then ask with a preflight, which flexqd never
 * grants); checking Host closes the second; checking Origin on writes
 * closes both for browsers that send it.
 *
 * Example: flexqd listens on 127.0.0.1:8265.
 *   Host: localhost:8265, POST, Content-Type: application/yaml   -> 0
 *   Host: evil.example:8265 (rebinding)                          -> 403
 *   Origin: http://evil.example, POST                            -> 403
 *   Content-Type: text/plain, POST                               -> 415
 *
 * What it does not do: authentication (auth.c), CORS (flexqd sends no
 * Access-Control-* header, so cross-origin reads stay blocked by the
 * browser), TLS.
 */
#include "api/reqgate.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const struct fq_media fq_reqgate_media[] = {
    {"application/json",
     FQ_MEDIA_POST | FQ_MEDIA_PUT | FQ_MEDIA_PATCH | FQ_MEDIA_DELETE},
    {"application/yaml", FQ_MEDIA_POST | FQ_MEDIA_PUT},
    {"application/x-yaml", FQ_MEDIA_POST | FQ_MEDIA_PUT},
    {"application/merge-patch+json", FQ_MEDIA_PATCH},
    {"application/strategic-merge-patch+json", FQ_MEDIA_PATCH},
    {"application/json-patch+json", FQ_MEDIA_PATCH},
    {"application/apply-patch+yaml", FQ_MEDIA_PATCH},
    {"application/apply-patch+json", FQ_MEDIA_PATCH}, /* flexq apply */
    /* kubectl 1.32+ for core kinds; objects/kpb.c reads the kinds it can
     * and answers 415 for the others. */
    {"application/vnd.kubernetes.protobuf", FQ_MEDIA_POST | FQ_MEDIA_PUT},
    {NULL, 0},
};

/* Copies at most n-1 bytes of [s, e) lower-cased; -1 if it does not fit. */
static int lower_copy(char *out, size_t n, const char *s, const char *e)
{
    if (e < s || (size_t)(e - s) >= n)
        return -1;
    size_t i = 0;
    for (; s < e; s++)
        out[i++] = (char)tolower((unsigned char)*s);
    out[i] = '\0';
    return 0;
}

/* "host", "host:port", "[v6]" or "[v6]:port" -> host (lower case, no
 * brackets); -1 when malformed. */
static int host_of(const char *hp, char *host, size_t n)
{
    const char *end;
    if (*hp == '[') {
        const char *close = strchr(hp, ']');
        if (!close || (close[1] && close[1] != ':'))
            return -1;
        return lower_copy(host, n, hp + 1, close);
    }
    const char *colon = strchr(hp, ':');
    if (colon && strchr(colon + 1, ':'))
        return -1; /* a bare IPv6 address is not a Host */
    end = colon ? colon : hp + strlen(hp);
    if (end == hp)
        return -1;
    for (const char *p = colon ? colon + 1 : end; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    return lower_copy(host, n, hp, end);
}

bool fq_reqgate_is_loopback(const char *host)
{
    if (!strcmp(host, "localhost"))
        return true;
    size_t l = strlen(host);
    if (l > 10 && !strcmp(host + l - 10, ".localhost"))
        return true;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1) {
        static const unsigned char lo[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                             0, 0, 0, 0, 0, 0, 0, 1};
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0,    0,
                                                 0, 0, 0, 0, 0xff, 0xff};
        return !memcmp(a6.s6_addr, lo, 16) ||
               (!memcmp(a6.s6_addr, mapped, 12) && a6.s6_addr[12] == 127);
    }
    return false;
}

int fq_reqgate_init(struct fq_reqgate *g, const char *listen,
                    struct fq_err *err)
{
    memset(g, 0, sizeof(*g));
    const char *colon = strrchr(listen, ':');
    char hp[160];
    if (!colon || (size_t)(colon - listen) >= sizeof(hp))
        return fq_err_set(err, FQ_EINVAL, "--listen: \"%s\" is not HOST:PORT",
                          listen);
    memcpy(hp, listen, (size_t)(colon - listen));
    hp[colon - listen] = '\0';
    if (host_of(hp, g->host, sizeof(g->host)) < 0 || !g->host[0])
        return fq_err_set(err, FQ_EINVAL, "--listen: \"%s\" is not HOST:PORT",
                          listen);
    g->wildcard = !strcmp(g->host, "0.0.0.0") || !strcmp(g->host, "::") ||
                  !strcmp(g->host, "*");
    g->loopback = fq_reqgate_is_loopback(g->host);
    return 0;
}

static bool host_allowed(const struct fq_reqgate *g, const char *host)
{
    return g->wildcard || !strcmp(host, g->host) ||
           (g->loopback && fq_reqgate_is_loopback(host));
}

static bool method_is(const char *m, const char *want)
{
    return m && !strcmp(m, want);
}

static int media_check(const struct fq_reqgate_in *in, struct fq_err *err)
{
    int bit = method_is(in->method, "POST")   ? FQ_MEDIA_POST :
              method_is(in->method, "PUT")    ? FQ_MEDIA_PUT :
              method_is(in->method, "PATCH")  ? FQ_MEDIA_PATCH :
              method_is(in->method, "DELETE") ? FQ_MEDIA_DELETE :
                                                0;
    if (!bit)
        return 0;
    if (!in->content_type) {
        if (in->body_len == 0)
            return 0;
        return fq_err_set(err, FQ_EMEDIATYPE,
                          "a %s body needs a Content-Type: application/json, "
                          "application/yaml or a patch type",
                          in->method);
    }
    const char *s = in->content_type, *e = strchr(s, ';');
    if (!e)
        e = s + strlen(s);
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    char type[96];
    if (lower_copy(type, sizeof(type), s, e) == 0)
        for (const struct fq_media *m = fq_reqgate_media; m->type; m++)
            if (!strcmp(m->type, type) && (m->methods & bit))
                return 0;
    return fq_err_set(err, FQ_EMEDIATYPE,
                      "Content-Type \"%.80s\" is not accepted for %s: send "
                      "application/json or application/yaml (PATCH: "
                      "merge-patch+json, strategic-merge-patch+json, "
                      "json-patch+json or apply-patch+yaml)",
                      in->content_type, in->method);
}

int fq_reqgate_check(const struct fq_reqgate *g, const struct fq_reqgate_in *in,
                     struct fq_err *err)
{
    char host[256] = "";
    if (in->host) {
        if (host_of(in->host, host, sizeof(host)) < 0)
            return fq_err_set(err, FQ_EFORBIDDEN, "Host \"%.80s\" is malformed",
                              in->host);
        if (!host_allowed(g, host))
            return fq_err_set(err, FQ_EFORBIDDEN,
                              "Host \"%.80s\" does not name this server "
                              "(listening on %s); requests for other names "
                              "are refused (DNS rebinding)",
                              in->host, g->host);
    }
    bool write =
        method_is(in->method, "POST") || method_is(in->method, "PUT") ||
        method_is(in->method, "PATCH") || method_is(in->method, "DELETE");
    if (write && in->sec_fetch_site &&
        strcmp(in->sec_fetch_site, "same-origin") != 0 &&
        strcmp(in->sec_fetch_site, "none") != 0)
        return fq_err_set(err, FQ_EFORBIDDEN,
                          "a %s from a %.40s page is refused (cross-site "
                          "request forgery)",
                          in->method, in->sec_fetch_site);
    if (write && in->origin) {
        const char *o = in->origin;
        const char *rest = !strncmp(o, "http://", 7)  ? o + 7 :
                           !strncmp(o, "https://", 8) ? o + 8 :
                                                        NULL;
        char ohost[256];
        bool ok = rest && !strchr(rest, '/') &&
                  host_of(rest, ohost, sizeof(ohost)) == 0 &&
                  host_allowed(g, ohost) &&
                  (!in->host || !strcasecmp(rest, in->host));
        if (!ok)
            return fq_err_set(err, FQ_EFORBIDDEN,
                              "a %s from origin \"%.80s\" is refused: only "
                              "pages served by this server may write "
                              "(cross-site request forgery)",
                              in->method, o);
    }
    return media_check(in, err);
}
