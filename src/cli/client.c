/*
 * client.c - libcurl under the CLI's API client (see client.h).
 *
 * How it works: one CURL easy handle per struct fq_client, reused so that
 * consecutive requests share a keep-alive connection. A request collects
 * the answer into a buffer (capped at MAX_ANSWER), parses it as JSON, and
 * turns a non-2xx answer into the FQ_E* code of its Status reason with the
 * server's message. Watches use the same handle with a write callback that
 * cuts the stream into lines and parses each one.
 *
 * Invariants: the token is sent only as an Authorization header, never in
 * a URL or an error message; every answer and every watch line has a size
 * cap, so a broken server cannot make the CLI use unbounded memory.
 *
 * What it does not do: retries (the caller decides), TLS options beyond
 * libcurl's defaults, proxies (libcurl's environment variables apply).
 */
#include "client.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"

#define MAX_ANSWER (256u << 20)
#define MAX_LINE   (64u << 20)

struct fq_client {
    CURL *curl;
    char *server;
    char *authz; /* "Authorization: Bearer ..." or NULL */
};

struct fq_client *fq_client_new(const char *server, const char *token)
{
    static int inited;
    if (!inited) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        inited = 1;
    }
    const struct fq_cli_global *g = fq_cli_global();
    struct fq_client *c = fq_xcalloc(1, sizeof(*c));
    c->curl = curl_easy_init();
    if (!c->curl) {
        free(c);
        return NULL;
    }
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
    return c;
}

void fq_client_free(struct fq_client *c)
{
    if (!c)
        return;
    curl_easy_cleanup(c->curl);
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

struct sink {
    struct fq_buf buf;
    bool too_big;
    char *result;
};

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg)
{
    struct sink *s = arg;
    size_t n = size * nmemb;
    if (s->buf.len + n > MAX_ANSWER) {
        s->too_big = true;
        return 0;
    }
    fq_buf_append(&s->buf, data, n);
    return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
    struct sink *s = arg;
    size_t n = size * nmemb;
    static const char name[] = "x-flexq-result:";
    if (n > sizeof(name) && strncasecmp(data, name, sizeof(name) - 1) == 0) {
        const char *v = data + sizeof(name) - 1;
        const char *e = data + n;
        while (v < e && (*v == ' ' || *v == '\t'))
            v++;
        while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
            e--;
        free(s->result);
        s->result = fq_xstrndup(v, (size_t)(e - v));
    }
    return n;
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

static struct curl_slist *setup(struct fq_client *c, const char *method,
                                const char *path, const char *ctype)
{
    CURL *h = c->curl;
    curl_easy_reset(h);
    char *url = fq_xasprintf("%s%s", c->server, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    free(url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    if (strcmp(method, "GET") != 0)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    struct curl_slist *hdrs = NULL;
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:");
    if (ctype) {
        char *ct = fq_xasprintf("Content-Type: %s", ctype);
        hdrs = curl_slist_append(hdrs, ct);
        free(ct);
    }
    if (c->authz)
        hdrs = curl_slist_append(hdrs, c->authz);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    return hdrs;
}

static int unreachable(struct fq_client *c, CURLcode cc, struct fq_err *err)
{
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return fq_err_set(err, FQ_ETIMEOUT, "timed out waiting for %s",
                          c->server);
    return fq_err_set(err, FQ_EIO,
                      "cannot reach flexqd at %s: %s (is flexqd running? "
                      "set --server or FLEXQ_SERVER)",
                      c->server, curl_easy_strerror(cc));
}

int fq_client_request(struct fq_client *c, const char *method, const char *path,
                      const char *ctype, const char *body, size_t len,
                      struct fq_value **out, int *status, char **result,
                      struct fq_err *err)
{
    if (out)
        *out = NULL;
    if (result)
        *result = NULL;
    struct curl_slist *hdrs = setup(c, method, path, ctype);
    struct sink s = {FQ_BUF_INIT, false, NULL};
    CURL *h = c->curl;
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
    CURLcode cc = curl_easy_perform(h);
    curl_slist_free_all(hdrs);
    int rc = 0;
    long code = 0;
    struct fq_value *v = NULL;
    if (cc != CURLE_OK) {
        rc = s.too_big ?
                 fq_err_set(err, FQ_ELIMIT, "the answer is larger than %u MiB",
                            MAX_ANSWER >> 20) :
                 unreachable(c, cc, err);
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
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

struct wsink {
    struct fq_buf line;
    fq_client_watch_fn fn;
    void *ctx;
    int rc;      /* from fn or a parse error */
    bool done;   /* fn asked to stop */
    long status; /* HTTP status, checked on the first byte */
    CURL *h;
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

static size_t on_stream(char *data, size_t size, size_t nmemb, void *arg)
{
    struct wsink *w = arg;
    size_t n = size * nmemb;
    if (!w->status)
        curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->status);
    if (w->status < 200 || w->status > 299) {
        if (w->errbody.len < 65536)
            fq_buf_append(&w->errbody, data, n);
        return n;
    }
    for (size_t i = 0; i < n; i++) {
        if (data[i] != '\n') {
            if (w->line.len >= MAX_LINE) {
                w->rc = FQ_ELIMIT;
                return 0;
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
            return 0;
        }
    }
    return n;
}

int fq_client_watch(struct fq_client *c, const char *path, int64_t timeout_ms,
                    fq_client_watch_fn fn, void *ctx, struct fq_err *err)
{
    struct curl_slist *hdrs = setup(c, "GET", path, NULL);
    struct wsink w = {FQ_BUF_INIT, fn, ctx, 0, false, 0, c->curl, FQ_BUF_INIT};
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_stream);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &w);
    if (timeout_ms > 0)
        curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    CURLcode cc = curl_easy_perform(c->curl);
    curl_slist_free_all(hdrs);
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
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        rc = fq_err_set(err, FQ_ETIMEOUT, "timed out");
    } else if (cc != CURLE_OK) {
        rc = unreachable(c, cc, err);
    } else {
        rc = fq_err_set(err, FQ_EIO, "the server ended the watch");
    }
    fq_buf_release(&w.line);
    fq_buf_release(&w.errbody);
    return rc;
}
