/*
 * client.c - the CLI's API client (see client.h): plain HTTP through
 * httpwire.c, or libcurl.
 *
 * How it works: a struct fq_client talks to one server over one
 * keep-alive connection. For an http:// server with no proxy in the
 * environment (the local flexqd), requests go through httpwire.c, a small
 * HTTP/1.1 client over a socket. For https://, a proxy, or
 * FLEXQ_HTTP_CLIENT=curl, libcurl does the request; it is loaded with
 * dlopen on first use, not linked: linking it made every `flexq` process
 * load 32 more libraries (TLS, Kerberos, LDAP, ...), most of the CLI's
 * start-up CPU (5.7 ms of 6), for a feature the local case never uses.
 * (STYLE.md keeps dlopen out of variation points; this is a start-up
 * cost, not a plugin seam, and the two transports are fixed here.)
 *
 * Both transports feed the same sinks: a request collects the answer into
 * a buffer (capped at MAX_ANSWER), parses it as JSON, and turns a non-2xx
 * answer into the FQ_E* code of its Status reason with the server's
 * message. Watches cut the stream into lines and parse each one.
 *
 * Invariants: the token is sent only as an Authorization header, never in
 * a URL or an error message; every answer and every watch line has a size
 * cap, so a broken server cannot make the CLI use unbounded memory.
 *
 * What it does not do: retries beyond resending once on a kept connection
 * the server had closed (the caller decides), TLS options beyond
 * libcurl's defaults.
 */
#include "client.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "httpwire.h"

#define MAX_ANSWER (256u << 20)
#define MAX_LINE   (64u << 20)

/* The libcurl functions the client calls, resolved by dlopen. */
struct curl_api {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *h);
    void (*easy_reset)(CURL *h);
    CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *h);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    const char *(*easy_strerror)(CURLcode cc);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
};

/* Loads libcurl once per process; NULL (with the reason in err) when it
 * cannot be loaded. */
static const struct curl_api *curl_api(struct fq_err *err)
{
    static struct curl_api api;
    static int state; /* 0 untried, 1 loaded, -1 failed */
    static char why[256];
    if (state == 0) {
        state = -1;
        void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(why, sizeof(why), "%s", dlerror());
        } else {
            struct {
                const char *name;
                void **slot;
            } syms[] = {
                {"curl_global_init", (void **)&api.global_init},
                {"curl_easy_init", (void **)&api.easy_init},
                {"curl_easy_cleanup", (void **)&api.easy_cleanup},
                {"curl_easy_reset", (void **)&api.easy_reset},
                {"curl_easy_setopt", (void **)&api.easy_setopt},
                {"curl_easy_perform", (void **)&api.easy_perform},
                {"curl_easy_getinfo", (void **)&api.easy_getinfo},
                {"curl_easy_strerror", (void **)&api.easy_strerror},
                {"curl_slist_append", (void **)&api.slist_append},
                {"curl_slist_free_all", (void **)&api.slist_free_all},
            };

            state = 1;
            for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
                *syms[i].slot = dlsym(lib, syms[i].name);
                if (!*syms[i].slot) {
                    snprintf(why, sizeof(why), "libcurl lacks %s",
                             syms[i].name);
                    state = -1;
                }
            }
            if (state == 1)
                api.global_init(CURL_GLOBAL_DEFAULT);
        }
    }
    if (state < 0) {
        fq_err_set(err, FQ_EUNSUPPORTED,
                   "this server needs libcurl (https:// or a proxy), which "
                   "could not be loaded: %s",
                   why);
        return NULL;
    }
    return &api;
}

struct fq_client {
    struct fq_wire *wire; /* plain http://, or NULL: libcurl */
    CURL *curl;           /* made on the first libcurl request */
    const struct curl_api *cu;
    char *server;
    char *prefix; /* the server URL's path, before each request's ("" none) */
    char *authz;  /* "Authorization: Bearer ..." or NULL */
};

/* Does `list` (no_proxy's syntax: comma-separated hosts or domain
 * suffixes, "*" for all) exclude host? */
static bool no_proxy_for(const char *list, const char *host)
{
    size_t hl = strlen(host);
    for (const char *p = list; *p;) {
        p += strspn(p, ", ");
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m > 0 && p[m - 1] == ' ')
            m--;
        const char *e = p;
        if (m > 0 && *e == '.') {
            e++;
            m--;
        }
        if (m == 1 && *e == '*')
            return true;
        if (m > 0 && m <= hl && strncasecmp(host + hl - m, e, m) == 0 &&
            (m == hl || host[hl - m - 1] == '.'))
            return true;
        p += n;
    }
    return false;
}

/* Would libcurl send a request for this http:// host through a proxy? It
 * reads http_proxy (lower case only, for http://), all_proxy / ALL_PROXY,
 * and no_proxy / NO_PROXY. */
static bool proxied(const char *host)
{
    const char *px = getenv("http_proxy");
    if (!px || !*px)
        px = getenv("all_proxy");
    if (!px || !*px)
        px = getenv("ALL_PROXY");
    if (!px || !*px)
        return false;
    const char *np = getenv("no_proxy");
    if (!np || !*np)
        np = getenv("NO_PROXY");
    return !(np && no_proxy_for(np, host));
}

struct fq_client *fq_client_new(const char *server, const char *token)
{
    const struct fq_cli_global *g = fq_cli_global();
    struct fq_client *c = fq_xcalloc(1, sizeof(*c));
    const char *s = server ? server : g->server;
    if (!s || !*s)
        s = FQ_CLI_DEFAULT_SERVER;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '/')
        n--;
    c->server = fq_xstrndup(s, n);
    const char *t = token ? token : g->token;
    if (t && *t)
        c->authz = fq_xasprintf("Authorization: Bearer %s", t);
    char host[256], port[16];
    const char *forced = getenv("FLEXQ_HTTP_CLIENT");
    bool want_curl = forced && !strcmp(forced, "curl");
    if (!want_curl &&
        fq_wire_split_url(c->server, host, sizeof(host), port, sizeof(port)) ==
            0 &&
        !proxied(host)) {
        const char *rest = c->server + 7 + strcspn(c->server + 7, "/?#");
        if (!strpbrk(rest, "?#")) {
            c->wire = fq_wire_new(host, port);
            c->prefix = fq_xstrdup(rest);
        }
    }
    return c;
}

void fq_client_free(struct fq_client *c)
{
    if (!c)
        return;
    if (c->curl)
        c->cu->easy_cleanup(c->curl);
    fq_wire_free(c->wire);
    free(c->prefix);
    free(c->server);
    free(c->authz);
    free(c);
}

char *fq_client_escape(const char *s)
{
    struct fq_buf b = FQ_BUF_INIT;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("-_.~", *p))
            fq_buf_putc(&b, (char)*p);
        else
            fq_buf_printf(&b, "%%%02X", *p);
    }
    return b.data ? fq_buf_detach(&b) : fq_xstrdup("");
}

char *fq_client_path(enum fq_kind kind, const char *ns, const char *name,
                     const char *sub, const char *query)
{
    const struct fq_kind_info *ki = fq_kind_info(kind);
    struct fq_buf b = FQ_BUF_INIT;
    if (*ki->group)
        fq_buf_printf(&b, "/apis/%s/%s", ki->group, ki->version);
    else
        fq_buf_printf(&b, "/api/%s", ki->version);
    if (ki->namespaced && ns && *ns)
        fq_buf_printf(&b, "/namespaces/%s", ns);
    fq_buf_printf(&b, "/%s", ki->plural);
    if (name)
        fq_buf_printf(&b, "/%s", name);
    if (sub)
        fq_buf_printf(&b, "/%s", sub);
    if (query && *query)
        fq_buf_printf(&b, "?%s", query);
    return fq_buf_detach(&b);
}

static int code_for(int http, const char *reason)
{
    switch (http) {
    case 400:
        return FQ_EPARSE;
    case 401:
        return FQ_EUNAUTH;
    case 403:
        return FQ_EFORBIDDEN;
    case 404:
        return FQ_ENOTFOUND;
    case 410:
        return FQ_EGONE; /* a watch from before the kept history */
    case 405:
    case 415:
        return FQ_EUNSUPPORTED;
    case 409:
        return reason && !strcmp(reason, "AlreadyExists") ? FQ_EEXIST :
                                                            FQ_ECONFLICT;
    case 413:
        return FQ_ELIMIT;
    case 422:
        return FQ_EINVAL;
    case 503:
        return FQ_EBUSY;
    case 504:
        return FQ_ETIMEOUT;
    default:
        return FQ_EINTERNAL;
    }
}

/* --- what both transports feed ------------------------------------------ */

struct sink {
    struct fq_buf buf;
    bool too_big;
    char *result;
};

static bool sink_data(struct sink *s, const char *data, size_t n)
{
    if (s->buf.len + n > MAX_ANSWER) {
        s->too_big = true;
        return false;
    }
    fq_buf_append(&s->buf, data, n);
    return true;
}

static void sink_header(struct sink *s, const char *name, size_t nlen,
                        const char *v, size_t vlen)
{
    static const char want[] = "x-flexq-result";
    if (nlen == sizeof(want) - 1 && strncasecmp(name, want, nlen) == 0) {
        free(s->result);
        s->result = fq_xstrndup(v, vlen);
    }
}

struct wsink {
    struct fq_buf line;
    fq_client_watch_fn fn;
    void *ctx;
    int rc;      /* from fn or a parse error */
    bool done;   /* fn asked to stop */
    long status; /* HTTP status, checked on the first byte */
    struct fq_buf errbody;
};

static int one_line(struct wsink *w, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    struct fq_limits lim = fq_limits_default();
    lim.max_bytes = MAX_LINE;
    lim.max_string = MAX_LINE;
    struct fq_value *v = NULL;
    struct fq_err perr = {0};
    if (fq_json_parse(s, n, "watch", &lim, &v, &perr) < 0)
        return FQ_EPARSE;
    int rc = w->fn(w->ctx, fq_value_path_str(v, "type", ""),
                   fq_map_get(v, "object"));
    fq_value_free(v);
    return rc;
}

/* A piece of a watch stream. Returns 0 to go on, else stop (w->done or
 * w->rc say why). */
static int wsink_data(struct wsink *w, const char *data, size_t n)
{
    if (w->status < 200 || w->status > 299) {
        if (w->errbody.len < 65536)
            fq_buf_append(&w->errbody, data, n);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (data[i] != '\n') {
            if (w->line.len >= MAX_LINE) {
                w->rc = FQ_ELIMIT;
                return 1;
            }
            fq_buf_putc(&w->line, data[i]);
            continue;
        }
        int rc = one_line(w, fq_buf_str(&w->line), w->line.len);
        fq_buf_reset(&w->line);
        if (rc != 0) {
            if (rc > 0)
                w->done = true;
            else
                w->rc = rc;
            return 1;
        }
    }
    return 0;
}

/* --- libcurl ------------------------------------------------------------- */

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg)
{
    size_t n = size * nmemb;
    return sink_data(arg, data, n) ? n : 0;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
    size_t n = size * nmemb;
    const char *colon = memchr(data, ':', n);
    if (colon) {
        const char *v = colon + 1;
        const char *e = data + n;
        while (v < e && (*v == ' ' || *v == '\t'))
            v++;
        while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
            e--;
        sink_header(arg, data, (size_t)(colon - data), v, (size_t)(e - v));
    }
    return n;
}

struct curl_watch {
    struct wsink *w;
    struct fq_client *c;
};

static size_t on_stream(char *data, size_t size, size_t nmemb, void *arg)
{
    struct curl_watch *cw = arg;
    size_t n = size * nmemb;
    if (!cw->w->status)
        cw->c->cu->easy_getinfo(cw->c->curl, CURLINFO_RESPONSE_CODE,
                                &cw->w->status);
    return wsink_data(cw->w, data, n) ? 0 : n;
}

/* The handle, reset and set up for one request; NULL when libcurl cannot
 * be loaded. *hdrs gets the header list to free after the request. */
static CURL *setup(struct fq_client *c, const char *method, const char *path,
                   const char *ctype, struct curl_slist **hdrs,
                   struct fq_err *err)
{
    if (!c->cu && !(c->cu = curl_api(err)))
        return NULL;
    const struct curl_api *cu = c->cu;
    if (!c->curl && !(c->curl = cu->easy_init())) {
        fq_err_set(err, FQ_EIO, "libcurl could not make a handle");
        return NULL;
    }
    CURL *h = c->curl;
    cu->easy_reset(h);
    char *url = fq_xasprintf("%s%s", c->server, path);
    cu->easy_setopt(h, CURLOPT_URL, url);
    free(url);
    cu->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    cu->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    if (strcmp(method, "GET") != 0)
        cu->easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    struct curl_slist *l = NULL;
    l = cu->slist_append(l, "Accept: application/json");
    l = cu->slist_append(l, "Expect:");
    if (ctype) {
        char *ct = fq_xasprintf("Content-Type: %s", ctype);
        l = cu->slist_append(l, ct);
        free(ct);
    }
    if (c->authz)
        l = cu->slist_append(l, c->authz);
    cu->easy_setopt(h, CURLOPT_HTTPHEADER, l);
    *hdrs = l;
    return h;
}

static int unreachable(struct fq_client *c, const char *why, struct fq_err *err)
{
    return fq_err_set(err, FQ_EIO,
                      "cannot reach flexqd at %s: %s (is flexqd running? "
                      "set --server or FLEXQ_SERVER)",
                      c->server, why);
}

static int curl_failed(struct fq_client *c, CURLcode cc, struct fq_err *err)
{
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return fq_err_set(err, FQ_ETIMEOUT, "timed out waiting for %s",
                          c->server);
    return unreachable(c, c->cu->easy_strerror(cc), err);
}

/* A request through libcurl into s; returns 0 or a transport error. */
static int curl_request(struct fq_client *c, const char *method,
                        const char *path, const char *ctype, const char *body,
                        size_t len, struct sink *s, long *code,
                        struct fq_err *err)
{
    struct curl_slist *hdrs = NULL;
    CURL *h = setup(c, method, path, ctype, &hdrs, err);
    if (!h)
        return err ? err->code : FQ_EUNSUPPORTED;
    const struct curl_api *cu = c->cu;
    if (body) {
        cu->easy_setopt(h, CURLOPT_POSTFIELDS, body);
        cu->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    cu->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    cu->easy_setopt(h, CURLOPT_WRITEDATA, s);
    cu->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    cu->easy_setopt(h, CURLOPT_HEADERDATA, s);
    CURLcode cc = cu->easy_perform(h);
    cu->slist_free_all(hdrs);
    if (cc != CURLE_OK)
        return s->too_big ? FQ_ELIMIT : curl_failed(c, cc, err);
    cu->easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
    return 0;
}

/* --- plain HTTP ---------------------------------------------------------- */

/* The request's header lines (borrowed from c and ctline). */
static size_t wire_headers(const struct fq_client *c, const char *ctline,
                           const char *hdrs[4])
{
    size_t n = 0;
    hdrs[n++] = "Accept: application/json";
    if (ctline)
        hdrs[n++] = ctline;
    if (c->authz)
        hdrs[n++] = c->authz;
    return n;
}

static void wire_on_header(void *ctx, const char *name, size_t nlen,
                           const char *v, size_t vlen)
{
    sink_header(ctx, name, nlen, v, vlen);
}

static int wire_on_body(void *ctx, int status, const char *data, size_t n)
{
    (void)status;
    return sink_data(ctx, data, n) ? 0 : FQ_ELIMIT;
}

static int wire_request(struct fq_client *c, const char *method,
                        const char *path, const char *ctype, const char *body,
                        size_t len, struct sink *s, long *code,
                        struct fq_err *err)
{
    char *ctline = ctype ? fq_xasprintf("Content-Type: %s", ctype) : NULL;
    const char *hdrs[4];
    size_t nh = wire_headers(c, ctline, hdrs);
    int status = 0;
    struct fq_err werr = {0};
    char *full = *c->prefix ? fq_xasprintf("%s%s", c->prefix, path) : NULL;
    int rc = fq_wire_request(c->wire, method, full ? full : path, hdrs, nh,
                             body, len, 0, wire_on_header, wire_on_body, s,
                             &status, &werr);
    free(full);
    free(ctline);
    *code = status;
    if (rc == FQ_ELIMIT && s->too_big)
        return FQ_ELIMIT;
    if (rc == FQ_ETIMEOUT)
        return fq_err_set(err, FQ_ETIMEOUT, "timed out waiting for %s",
                          c->server);
    if (rc < 0)
        return unreachable(c, werr.msg, err);
    return 0;
}

/* --- requests ------------------------------------------------------------ */

int fq_client_request(struct fq_client *c, const char *method, const char *path,
                      const char *ctype, const char *body, size_t len,
                      struct fq_value **out, int *status, char **result,
                      struct fq_err *err)
{
    if (out)
        *out = NULL;
    if (result)
        *result = NULL;
    struct sink s = {FQ_BUF_INIT, false, NULL};
    long code = 0;
    struct fq_value *v = NULL;
    int rc =
        c->wire ?
            wire_request(c, method, path, ctype, body, len, &s, &code, err) :
            curl_request(c, method, path, ctype, body, len, &s, &code, err);
    if (rc == FQ_ELIMIT) {
        rc = fq_err_set(err, FQ_ELIMIT, "the answer is larger than %u MiB",
                        MAX_ANSWER >> 20);
        goto out;
    }
    if (rc < 0)
        goto out;
    if (status)
        *status = (int)code;
    if (s.buf.len) {
        struct fq_limits lim = fq_limits_default();
        lim.max_bytes = MAX_ANSWER;
        lim.max_string = MAX_ANSWER;
        lim.max_nodes = 100u << 20;
        struct fq_err perr = {0};
        if (fq_json_parse(s.buf.data, s.buf.len, "answer", &lim, &v, &perr) < 0)
            v = NULL; /* plain text answers (healthz) stay unparsed */
    }
    if (code < 200 || code > 299) {
        const char *reason = fq_value_path_str(v, "reason", NULL);
        const char *msg = fq_value_path_str(v, "message", NULL);
        rc = code_for((int)code, reason);
        if (msg)
            fq_err_set(err, rc, "%s", msg);
        else
            fq_err_set(err, rc, "server answered %ld: %.200s", code,
                       fq_buf_str(&s.buf));
        const char *field = fq_value_as_str(fq_value_path(
            fq_seq_at(fq_value_path(v, "details.causes"), 0), "field"));
        if (err && field)
            snprintf(err->path, sizeof(err->path), "%s", field);
        goto out;
    }
    if (out) {
        *out = v;
        v = NULL;
    }
    if (result) {
        *result = s.result;
        s.result = NULL;
    }
out:
    fq_value_free(v);
    fq_buf_release(&s.buf);
    free(s.result);
    return rc;
}

static int send_value(struct fq_client *c, const char *method, const char *path,
                      const char *ctype, const struct fq_value *obj,
                      struct fq_value **out, struct fq_err *err)
{
    char *body = fq_json_dumps(obj, FQ_JSON_COMPACT);
    int rc = fq_client_request(c, method, path, ctype, body, strlen(body), out,
                               NULL, NULL, err);
    free(body);
    return rc;
}

int fq_client_get(struct fq_client *c, const char *path, struct fq_value **out,
                  struct fq_err *err)
{
    return fq_client_request(c, "GET", path, NULL, NULL, 0, out, NULL, NULL,
                             err);
}

int fq_client_post(struct fq_client *c, const char *path,
                   const struct fq_value *obj, struct fq_value **out,
                   struct fq_err *err)
{
    return send_value(c, "POST", path, "application/json", obj, out, err);
}

int fq_client_put(struct fq_client *c, const char *path,
                  const struct fq_value *obj, struct fq_value **out,
                  struct fq_err *err)
{
    return send_value(c, "PUT", path, "application/json", obj, out, err);
}

int fq_client_patch(struct fq_client *c, const char *path, const char *ctype,
                    const struct fq_value *patch, struct fq_value **out,
                    struct fq_err *err)
{
    return send_value(c, "PATCH", path,
                      ctype ? ctype : "application/merge-patch+json", patch,
                      out, err);
}

int fq_client_delete(struct fq_client *c, const char *path,
                     struct fq_value **out, struct fq_err *err)
{
    return fq_client_request(c, "DELETE", path, NULL, NULL, 0, out, NULL, NULL,
                             err);
}

/* --- watches ------------------------------------------------------------ */

static int wire_on_stream(void *ctx, int status, const char *data, size_t n)
{
    struct wsink *w = ctx;
    w->status = status;
    return wsink_data(w, data, n) ? 1 : 0;
}

int fq_client_watch(struct fq_client *c, const char *path, int64_t timeout_ms,
                    fq_client_watch_fn fn, void *ctx, struct fq_err *err)
{
    struct wsink w = {FQ_BUF_INIT, fn, ctx, 0, false, 0, FQ_BUF_INIT};
    int trc = 0; /* transport: 0, FQ_ETIMEOUT, or another failure */
    const char *why = NULL;
    struct fq_err werr = {0};
    bool ended = false; /* the server ended the stream */
    if (c->wire) {
        const char *hdrs[4];
        size_t nh = wire_headers(c, NULL, hdrs);
        int status = 0;
        char *full = *c->prefix ? fq_xasprintf("%s%s", c->prefix, path) : NULL;
        int rc = fq_wire_request(c->wire, "GET", full ? full : path, hdrs, nh,
                                 NULL, 0, timeout_ms, NULL, wire_on_stream, &w,
                                 &status, &werr);
        free(full);
        if (!w.status)
            w.status = status;
        if (rc == FQ_ETIMEOUT)
            trc = FQ_ETIMEOUT;
        else if (rc < 0)
            trc = rc, why = werr.msg;
        else if (rc == 0)
            ended = true;
    } else {
        struct curl_slist *hdrs = NULL;
        CURL *h = setup(c, "GET", path, NULL, &hdrs, err);
        if (!h)
            return err ? err->code : FQ_EUNSUPPORTED;
        struct curl_watch cw = {&w, c};
        c->cu->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream);
        c->cu->easy_setopt(h, CURLOPT_WRITEDATA, &cw);
        if (timeout_ms > 0)
            c->cu->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
        CURLcode cc = c->cu->easy_perform(h);
        c->cu->slist_free_all(hdrs);
        if (cc == CURLE_OPERATION_TIMEDOUT)
            trc = FQ_ETIMEOUT;
        else if (cc != CURLE_OK)
            trc = FQ_EIO, why = c->cu->easy_strerror(cc);
        else
            ended = true;
    }
    int rc = 0;
    if (w.done) {
        rc = 0;
    } else if (w.rc < 0) {
        rc = fq_err_set(err, w.rc, "watch: %s", fq_strerror(w.rc));
    } else if (w.status && (w.status < 200 || w.status > 299)) {
        struct fq_value *v = NULL;
        struct fq_limits lim = fq_limits_default();
        fq_json_parse(fq_buf_str(&w.errbody), w.errbody.len, "answer", &lim, &v,
                      NULL);
        rc = code_for((int)w.status, fq_value_path_str(v, "reason", NULL));
        fq_err_set(err, rc, "%s",
                   fq_value_path_str(v, "message", "watch refused"));
        fq_value_free(v);
    } else if (trc == FQ_ETIMEOUT) {
        rc = fq_err_set(err, FQ_ETIMEOUT, "timed out");
    } else if (trc < 0 || !ended) {
        rc = unreachable(c, why ? why : "the connection failed", err);
    } else {
        rc = fq_err_set(err, FQ_EIO, "the server ended the watch");
    }
    fq_buf_release(&w.line);
    fq_buf_release(&w.errbody);
    return rc;
}
