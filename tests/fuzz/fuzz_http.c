/*
 * fuzz_http.c - libFuzzer target for what flexqd does with a request
 * before a handler runs: the Host / Origin / Content-Type gate
 * (src/daemon/api/reqgate.c), the route table's access check
 * (src/daemon/api/routes.c, with auth.c's rules) and the body parsers the
 * Content-Type selects (JSON, YAML).
 *
 * The input is a raw HTTP/1.1 request: "METHOD PATH VERSION", header lines
 * up to an empty line (at most MAX_HEADERS; evhttp caps their size before
 * flexqd sees them), then the body. Each request is checked against a
 * loopback and a wildcard listener, with an admin, a developer and an
 * anonymous caller. Invariants checked: nothing crashes or leaks; every
 * refusal has a message and one of the expected codes; a write whose
 * media type is not in fq_reqgate_media never passes; a cross-origin
 * write never passes; a developer never passes an admin route; a parse
 * error always carries a message.
 *
 * The daemon files live outside the core the fuzz targets link, so they
 * are compiled into this target directly.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../src/daemon/api/auth.c"
#include "../../src/daemon/api/reqgate.c"
#include "../../src/daemon/api/routes.c"
#include "../../src/daemon/log.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_HEADERS 32
#define MAX_LINE    1024

struct hdr {
    char name[64];
    char value[MAX_LINE];
};

static const char *find_header(const struct hdr *h, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(h[i].name, name))
            return h[i].value;
    return NULL;
}

static const struct fq_route_def routes[] = {
    {.prefix = "/", .access = FQ_ROUTE_PUBLIC},
    {.prefix = "/api/version", .access = FQ_ROUTE_TOKEN},
    {.prefix = "/metrics", .access = FQ_ROUTE_ADMIN},
    {.prefix = "/api/jobs",
     .access = FQ_ROUTE_NAMESPACED,
     .methods = "GET,HEAD,POST",
     .kind = FQ_KIND_RAYJOB},
    {.prefix = "/apis/estimates.flexq.dev/",
     .access = FQ_ROUTE_NAMESPACED,
     .methods = "POST",
     .kind = FQ_KIND_WORKLOAD,
     .write_verb = "create"},
};

static const struct fq_route_def *find_route(const char *path)
{
    const struct fq_route_def *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        size_t l = strlen(routes[i].prefix);
        if (!strncmp(path, routes[i].prefix, l) && l >= best_len) {
            best = &routes[i];
            best_len = l;
        }
    }
    return best;
}

static bool media_listed(const char *method, const char *ct)
{
    if (!ct)
        return false;
    size_t l = strcspn(ct, ";");
    while (l && isspace((unsigned char)ct[l - 1]))
        l--;
    while (l && isspace((unsigned char)*ct))
        ct++, l--;
    for (const struct fq_media *m = fq_reqgate_media; m->type; m++)
        if (strlen(m->type) == l && !strncasecmp(m->type, ct, l))
            return true;
    (void)method;
    return false;
}

static void check_body(const char *ct, const char *body, size_t len)
{
    struct fq_limits lim = fq_limits_default();
    lim.max_bytes = 1 << 16;
    struct fq_err err = {0};
    if (ct && strstr(ct, "yaml")) {
        struct fq_docs docs = {0};
        int rc = fq_yaml_parse(body, len, "body", &lim, &docs, &err);
        if (rc < 0 && !err.msg[0])
            abort();
        fq_docs_release(&docs);
    } else {
        struct fq_value *v = NULL;
        int rc = fq_json_parse(body, len, "body", &lim, &v, &err);
        if (rc < 0 && !err.msg[0])
            abort();
        fq_value_free(v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fq_auth *auth;
    static struct fq_principal admin, dev, anon;
    if (!auth) {
        static const char tokens[] = "admin-token-1 admin alice\n"
                                     "dev-token-22 developer bob team-a\n";
        fq_log_set_level(FQ_LOG_ERROR);
        if (fq_auth_parse(tokens, sizeof(tokens) - 1, "t", &auth, NULL) < 0)
            abort();
        fq_auth_identify(auth, "Bearer admin-token-1", &admin, NULL);
        fq_auth_identify(auth, "Bearer dev-token-22", &dev, NULL);
        anon = (struct fq_principal){"anonymous", false, NULL};
    }
    if (size > (1 << 16))
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';

    /* Request line and headers, one line at a time. */
    char method[16] = "", path[MAX_LINE] = "";
    struct hdr h[MAX_HEADERS];
    int nh = 0;
    size_t pos = 0;
    bool first = true, ok = true;
    while (pos < size) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t l = nl ? (size_t)(nl - (text + pos)) : size - pos;
        size_t next = pos + l + (nl ? 1 : 0);
        if (l && text[pos + l - 1] == '\r')
            l--;
        if (l >= MAX_LINE || memchr(text + pos, '\0', l)) {
            ok = false;
            break;
        }
        char line[MAX_LINE];
        memcpy(line, text + pos, l);
        line[l] = '\0';
        pos = next;
        if (first) {
            first = false;
            if (sscanf(line, "%15s %1023s", method, path) != 2) {
                ok = false;
                break;
            }
            continue;
        }
        if (!l)
            break; /* end of headers */
        char *colon = strchr(line, ':');
        if (!colon || colon == line || nh == MAX_HEADERS ||
            (size_t)(colon - line) >= sizeof(h[nh].name)) {
            ok = false;
            break;
        }
        memcpy(h[nh].name, line, (size_t)(colon - line));
        h[nh].name[colon - line] = '\0';
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(h[nh].value, sizeof(h[nh].value), "%s", v);
        nh++;
    }
    if (!ok || !method[0]) {
        free(text);
        return 0;
    }
    const char *body = text + pos;
    size_t body_len = size - pos;
    struct fq_reqgate_in in = {
        .method = method,
        .host = find_header(h, nh, "Host"),
        .origin = find_header(h, nh, "Origin"),
        .sec_fetch_site = find_header(h, nh, "Sec-Fetch-Site"),
        .content_type = find_header(h, nh, "Content-Type"),
        .body_len = body_len,
    };
    bool write = !strcmp(method, "POST") || !strcmp(method, "PUT") ||
                 !strcmp(method, "PATCH") || !strcmp(method, "DELETE");
    static const char *const listens[] = {"127.0.0.1:8265", "0.0.0.0:80",
                                          "[::1]:0"};
    for (size_t i = 0; i < sizeof(listens) / sizeof(listens[0]); i++) {
        struct fq_reqgate g;
        if (fq_reqgate_init(&g, listens[i], NULL) < 0)
            abort();
        struct fq_err err = {0};
        int rc = fq_reqgate_check(&g, &in, &err);
        if (rc < 0 &&
            (!err.msg[0] || (rc != FQ_EFORBIDDEN && rc != FQ_EMEDIATYPE)))
            abort();
        if (rc == 0 && write && in.content_type &&
            !media_listed(method, in.content_type))
            abort(); /* an unlisted media type got through */
        if (rc == 0 && write && in.origin && in.host &&
            strcasecmp(strstr(in.origin, "://") ? strstr(in.origin, "://") + 3 :
                                                  "",
                       in.host) != 0)
            abort(); /* a cross-origin write got through */
    }

    const struct fq_route_def *rt = find_route(path);
    if (rt) {
        const struct fq_principal *who[] = {&admin, &dev, &anon};
        for (size_t i = 0; i < 3; i++) {
            struct fq_err err = {0};
            int rc = fq_route_gate(auth, who[i], rt, method, &err);
            if (rc < 0 && !err.msg[0])
                abort();
            if (rc == 0 && who[i] != &admin && rt->access == FQ_ROUTE_ADMIN)
                abort(); /* only admins pass admin routes */
            if (rc == 0 && who[i] == &anon && rt->access != FQ_ROUTE_PUBLIC)
                abort();
        }
        fq_value_free(fq_route_describe(rt));
    }
    check_body(in.content_type, body, body_len);
    free(text);
    return 0;
}
