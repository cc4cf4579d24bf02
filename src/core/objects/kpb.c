/*
 * kpb.c - a small, capped reader of Kubernetes' protobuf bodies
 * (application/vnd.kubernetes.protobuf), which kubectl 1.32+ sends for
 * core kinds (`kubectl create configmap --from-file`, `create namespace`,
 * `create secret`): the 4-byte "k8s\0" magic, the runtime.Unknown
 * envelope (typeMeta, raw), and the messages of ConfigMap, Namespace,
 * Secret and Service (`kubectl create service`) with their ObjectMeta, turned into the same tree a JSON body
 * gives.
 *
 * How it works: a reader over (pointer, end) decodes varints, fixed-width
 * fields and length-delimited fields; every message decoder loops over
 * its fields, keeps the ones it knows (by the field numbers of
 * k8s.io/api/core/v1 and apimachinery meta/v1) and skips the others.
 * Bytes fields (binaryData, Secret data) become base64 strings, as in
 * JSON.
 *
 * Invariants: (1) no read past `end` (every length is checked against
 * what is left); (2) nesting is bounded by the message structure (no
 * recursion on input); (3) at most FQ_KPB_MAX_ENTRIES map entries and
 * list items per body.
 *
 * What it does not do: Pod, Job and the other kinds' messages (their
 * bodies are refused with FQ_EUNSUPPORTED, which the API answers 415),
 * encoding, creationTimestamp and managedFields (set by the server).
 */
#include "flexq/kpb.h"

#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/buf.h"

struct rd {
    const unsigned char *base; /* the body, for offsets in messages */
    const unsigned char *p, *end;
    size_t entries; /* map entries and list items so far */
    struct fq_err *err;
    int rc;
};

static int bad(struct rd *r, const char *what)
{
    if (r->rc == 0)
        r->rc = fq_err_set(r->err, FQ_EPARSE, "protobuf body: %s at byte %zu",
                           what, (size_t)(r->p - r->base));
    return r->rc;
}

static bool varint(const unsigned char **p, const unsigned char *end,
                   uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return false;
        unsigned char c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* One field: its number, wire type, and for wire type 2 its bytes, for
 * 0 its value. False at the end of the message or on an error (r->rc). */
struct field {
    unsigned num, wt;
    uint64_t v;
    const unsigned char *data;
    size_t len;
};

static bool next(struct rd *r, struct field *f)
{
    if (r->rc || r->p >= r->end)
        return false;
    uint64_t tag;
    if (!varint(&r->p, r->end, &tag) || (tag >> 3) == 0 ||
        (tag >> 3) > 1u << 29)
        return bad(r, "a bad field tag"), false;
    f->num = (unsigned)(tag >> 3);
    f->wt = (unsigned)(tag & 7);
    f->data = NULL;
    f->len = 0;
    switch (f->wt) {
    case 0:
        if (!varint(&r->p, r->end, &f->v))
            return bad(r, "a truncated varint"), false;
        return true;
    case 1:
    case 5: {
        size_t n = f->wt == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            return bad(r, "a truncated fixed field"), false;
        r->p += n;
        return true;
    }
    case 2: {
        uint64_t n;
        if (!varint(&r->p, r->end, &n) || n > (uint64_t)(r->end - r->p))
            return bad(r, "a length past the end"), false;
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return true;
    }
    default:
        return bad(r, "an unsupported wire type"), false;
    }
}

/* A reader over a nested message's bytes, sharing counters and errors. */
static struct rd sub(const struct rd *r, const struct field *f)
{
    struct rd s = *r;
    s.p = f->data;
    s.end = f->data + f->len;
    return s;
}

static void join(struct rd *r, const struct rd *s)
{
    r->entries = s->entries;
    if (s->rc && !r->rc)
        r->rc = s->rc;
}

static bool count(struct rd *r)
{
    if (++r->entries > FQ_KPB_MAX_ENTRIES) {
        if (!r->rc)
            r->rc = fq_err_set(r->err, FQ_ELIMIT,
                               "protobuf body: more than %d map entries or "
                               "list items",
                               FQ_KPB_MAX_ENTRIES);
        return false;
    }
    return true;
}

/* True if p[0..n) is UTF-8 without NUL (what a JSON body can carry). */
static bool text_ok(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t len = c < 0x80           ? 1 :
                     (c & 0xe0) == 0xc0 ? 2 :
                     (c & 0xf0) == 0xe0 ? 3 :
                     (c & 0xf8) == 0xf0 ? 4 :
                                          0;
        if (!c || !len || i + len > n || (len == 2 && c < 0xc2) ||
            (len == 4 && c > 0xf4))
            return false;
        for (size_t k = 1; k < len; k++)
            if ((p[i + k] & 0xc0) != 0x80)
                return false;
        if (len == 3) {
            unsigned cp = (c & 0x0fu) << 12 | (p[i + 1] & 0x3fu) << 6 |
                          (p[i + 2] & 0x3fu);
            if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))
                return false;
        }
        if (len == 4) {
            unsigned cp = (c & 0x07u) << 18 | (p[i + 1] & 0x3fu) << 12 |
                          (p[i + 2] & 0x3fu) << 6 | (p[i + 3] & 0x3fu);
            if (cp < 0x10000 || cp > 0x10ffff)
                return false;
        }
        i += len;
    }
    return true;
}

/* A string field; invalid UTF-8 is an error (an empty string is given
 * back so the caller goes on; the error ends the decode). */
static struct fq_value *str_of(struct rd *r, const struct field *f)
{
    if (!text_ok(f->data, f->len)) {
        bad(r, "a string that is not UTF-8");
        return fq_value_str("");
    }
    return fq_value_strn((const char *)f->data, f->len);
}

static const char B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static struct fq_value *b64_of(const struct field *f)
{
    struct fq_buf b = FQ_BUF_INIT;
    const unsigned char *p = f->data;
    for (size_t i = 0; i < f->len; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < f->len)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < f->len)
            v |= p[i + 2];
        fq_buf_putc(&b, B64[v >> 18 & 63]);
        fq_buf_putc(&b, B64[v >> 12 & 63]);
        fq_buf_putc(&b, i + 1 < f->len ? B64[v >> 6 & 63] : '=');
        fq_buf_putc(&b, i + 2 < f->len ? B64[v & 63] : '=');
    }
    struct fq_value *s = fq_value_strn(b.data ? b.data : "", b.len);
    fq_buf_release(&b);
    return s;
}

/* A map<string, string|bytes> entry (key = 1, value = 2) into m. */
static void map_entry(struct rd *r, const struct field *f, struct fq_value *m,
                      bool bytes)
{
    if (f->wt != 2) {
        bad(r, "a map entry that is not a message");
        return;
    }
    if (!count(r))
        return;
    struct rd s = sub(r, f);
    struct field e;
    char *key = NULL;
    struct fq_value *val = NULL;
    while (next(&s, &e)) {
        if (e.wt != 2)
            continue;
        if (e.num == 1) {
            free(key);
            if (!text_ok(e.data, e.len))
                bad(&s, "a key that is not UTF-8");
            key = fq_xstrndup((const char *)e.data, e.len);
        } else if (e.num == 2) {
            fq_value_free(val);
            val = bytes ? b64_of(&e) : str_of(&s, &e);
        }
    }
    join(r, &s);
    if (!r->rc)
        fq_map_set(m, key ? key : "", val ? val : fq_value_str(""));
    else
        fq_value_free(val);
    free(key);
}

static void str_item(struct rd *r, const struct field *f, struct fq_value *seq)
{
    if (f->wt == 2 && count(r))
        fq_seq_push(seq, str_of(r, f));
}

/* ObjectMeta (apimachinery meta/v1). */
static struct fq_value *meta(struct rd *r, const struct field *f)
{
    struct fq_value *m = fq_value_map();
    struct rd s = sub(r, f);
    struct field e;
    static const char *const strs[] = {
        NULL, "name", "generateName",   "namespace",
        NULL, "uid",  "resourceVersion"};
    while (next(&s, &e)) {
        /* gogo protobuf writes every string, empty or not: an empty one
         * is an absent one, as in JSON with omitempty. */
        if (e.num <= 6 && strs[e.num] && e.wt == 2) {
            if (e.len)
                fq_map_set(m, strs[e.num], str_of(&s, &e));
        } else if (e.num == 7 && e.wt == 0) {
            if (e.v)
                fq_map_set(m, "generation", fq_value_int((int64_t)e.v));
        } else if ((e.num == 11 || e.num == 12)) {
            map_entry(
                &s, &e,
                fq_map_ensure_map(m, e.num == 11 ? "labels" : "annotations"),
                false);
        } else if (e.num == 14) {
            struct fq_value *fin = fq_map_get(m, "finalizers");
            if (!fin) {
                fq_map_set(m, "finalizers", fq_value_seq());
                fin = fq_map_get(m, "finalizers");
            }
            str_item(&s, &e, fin);
        }
    }
    join(r, &s);
    return m;
}

/* ServicePort: name 1, protocol 2, port 3, targetPort 4 (IntOrString:
 * type 1, intVal 2, strVal 3), nodePort 5, appProtocol 6. */
static struct fq_value *service_port(struct rd *r, const struct field *f)
{
    struct fq_value *p = fq_value_map();
    struct rd s = sub(r, f);
    struct field e;
    static const char *const strs[] = {NULL, "name", "protocol",   NULL,
                                       NULL, NULL,   "appProtocol"};
    while (next(&s, &e)) {
        if (e.num <= 6 && strs[e.num] && e.wt == 2) {
            if (e.len)
                fq_map_set(p, strs[e.num], str_of(&s, &e));
        } else if ((e.num == 3 || e.num == 5) && e.wt == 0) {
            if (e.v)
                fq_map_set(p, e.num == 3 ? "port" : "nodePort",
                           fq_value_int((int64_t)(int32_t)e.v));
        } else if (e.num == 4 && e.wt == 2) {
            struct rd t = sub(&s, &e);
            struct field g;
            uint64_t type = 0, iv = 0;
            struct fq_value *sv = NULL;
            while (next(&t, &g)) {
                if (g.num == 1 && g.wt == 0)
                    type = g.v;
                else if (g.num == 2 && g.wt == 0)
                    iv = g.v;
                else if (g.num == 3 && g.wt == 2) {
                    fq_value_free(sv);
                    sv = str_of(&t, &g);
                }
            }
            join(&s, &t);
            if (type == 1 && sv) {
                fq_map_set(p, "targetPort", sv);
                sv = NULL;
            } else if (type == 0 && iv) {
                fq_map_set(p, "targetPort", fq_value_int((int64_t)(int32_t)iv));
            }
            fq_value_free(sv);
        }
    }
    join(r, &s);
    return p;
}

/* ServiceSpec: ports 1, selector 2, clusterIP 3, type 4, externalIPs 5,
 * sessionAffinity 7, externalName 10; the rest the server defaults. */
static struct fq_value *service_spec(struct rd *r, const struct field *f)
{
    struct fq_value *sp = fq_value_map();
    struct rd s = sub(r, f);
    struct field e;
    while (next(&s, &e)) {
        if (e.wt != 2)
            continue;
        if (e.num == 1 && count(&s)) {
            struct fq_value *ports = fq_map_get(sp, "ports");
            if (!ports) {
                fq_map_set(sp, "ports", fq_value_seq());
                ports = fq_map_get(sp, "ports");
            }
            fq_seq_push(ports, service_port(&s, &e));
        } else if (e.num == 2) {
            map_entry(&s, &e, fq_map_ensure_map(sp, "selector"), false);
        } else if (e.num == 5) {
            struct fq_value *ips = fq_map_get(sp, "externalIPs");
            if (!ips) {
                fq_map_set(sp, "externalIPs", fq_value_seq());
                ips = fq_map_get(sp, "externalIPs");
            }
            str_item(&s, &e, ips);
        } else if ((e.num == 3 || e.num == 4 || e.num == 7 || e.num == 10) &&
                   e.len) {
            fq_map_set(sp,
                       e.num == 3 ? "clusterIP" :
                       e.num == 4 ? "type" :
                       e.num == 7 ? "sessionAffinity" :
                                    "externalName",
                       str_of(&s, &e));
        }
    }
    join(r, &s);
    return sp;
}

struct kind_msg {
    const char *api_version, *kind;
};

static const struct kind_msg KINDS[] = {{"v1", "ConfigMap"},
                                        {"v1", "Namespace"},
                                        {"v1", "Secret"},
                                        {"v1", "Service"},
                                        {NULL, NULL}};

/* The object message of kind `kind` (one of KINDS). */
static struct fq_value *object(struct rd *r, const char *av, const char *kind)
{
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str(av));
    fq_map_set(o, "kind", fq_value_str(kind));
    struct field f;
    bool cm = !strcmp(kind, "ConfigMap"), ns = !strcmp(kind, "Namespace");
    bool svc = !strcmp(kind, "Service");
    while (next(r, &f)) {
        if (f.num == 1 && f.wt == 2) {
            fq_map_set(o, "metadata", meta(r, &f));
        } else if (svc) {
            if (f.num == 2 && f.wt == 2)
                fq_map_set(o, "spec", service_spec(r, &f));
            /* status (3) is the server's */
        } else if (cm && (f.num == 2 || f.num == 3)) {
            map_entry(r, &f,
                      fq_map_ensure_map(o, f.num == 2 ? "data" : "binaryData"),
                      f.num == 3);
        } else if (cm && f.num == 4 && f.wt == 0) {
            fq_map_set(o, "immutable", fq_value_bool(f.v != 0));
        } else if (ns && (f.num == 2 || f.num == 3) && f.wt == 2) {
            /* spec {finalizers = 1}, status {phase = 1} */
            struct rd s = sub(r, &f);
            struct field e;
            struct fq_value *part =
                fq_map_ensure_map(o, f.num == 2 ? "spec" : "status");
            while (next(&s, &e)) {
                if (e.num != 1 || e.wt != 2)
                    continue;
                if (f.num == 3) {
                    if (e.len)
                        fq_map_set(part, "phase", str_of(&s, &e));
                    continue;
                }
                struct fq_value *fin = fq_map_get(part, "finalizers");
                if (!fin) {
                    fq_map_set(part, "finalizers", fq_value_seq());
                    fin = fq_map_get(part, "finalizers");
                }
                str_item(&s, &e, fin);
            }
            join(r, &s);
        } else if (!cm && !ns) { /* Secret */
            if (f.num == 2 || f.num == 4)
                map_entry(
                    r, &f,
                    fq_map_ensure_map(o, f.num == 2 ? "data" : "stringData"),
                    f.num == 2);
            else if (f.num == 3 && f.wt == 2 && f.len)
                fq_map_set(o, "type", str_of(r, &f));
            else if (f.num == 5 && f.wt == 0)
                fq_map_set(o, "immutable", fq_value_bool(f.v != 0));
        }
    }
    return o;
}

int fq_kpb_decode(const void *data, size_t len, struct fq_value **out,
                  struct fq_err *err)
{
    *out = NULL;
    if (len > FQ_KPB_MAX_BYTES)
        return fq_err_set(err, FQ_ELIMIT, "protobuf body: more than %d bytes",
                          FQ_KPB_MAX_BYTES);
    if (len < 4 || memcmp(data, "k8s\0", 4) != 0)
        return fq_err_set(err, FQ_EPARSE,
                          "protobuf body: no \"k8s\\0\" magic prefix");
    const unsigned char *base = data;
    struct rd r = {base, base + 4, base + len, 0, err, 0};
    struct field f;
    char *av = NULL, *kind = NULL;
    const unsigned char *raw = NULL;
    size_t raw_len = 0;
    bool encoded = false;
    while (next(&r, &f)) {
        if (f.wt != 2)
            continue;
        if (f.num == 1) { /* typeMeta {apiVersion = 1, kind = 2} */
            struct rd s = sub(&r, &f);
            struct field e;
            while (next(&s, &e)) {
                if (e.wt != 2)
                    continue;
                char **dst = e.num == 1 ? &av : e.num == 2 ? &kind : NULL;
                if (dst) {
                    free(*dst);
                    *dst = fq_xstrndup((const char *)e.data, e.len);
                }
            }
            join(&r, &s);
        } else if (f.num == 2) {
            raw = f.data;
            raw_len = f.len;
        } else if (f.num == 3 && f.len) {
            encoded = true; /* contentEncoding (e.g. gzip): not read */
        }
    }
    int rc = r.rc;
    const struct kind_msg *k = KINDS;
    while (
        rc == 0 && k->kind &&
        !(av && kind && !strcmp(av, k->api_version) && !strcmp(kind, k->kind)))
        k++;
    if (rc == 0 && (encoded || !k->kind))
        rc = fq_err_set(err, FQ_EUNSUPPORTED,
                        "protobuf bodies of %s %s are not supported; send "
                        "application/json",
                        av ? av : "(no apiVersion)", kind ? kind : "(no kind)");
    if (rc == 0) {
        /* No raw field: an empty message (an offset from NULL is UB). */
        static const unsigned char empty[1];
        const unsigned char *rp = raw ? raw : empty;
        struct rd s = {base, rp, rp + raw_len, r.entries, err, 0};
        struct fq_value *o = object(&s, k->api_version, k->kind);
        if (s.rc) {
            rc = s.rc;
            fq_value_free(o);
        } else {
            *out = o;
        }
    }
    free(av);
    free(kind);
    return rc;
}
