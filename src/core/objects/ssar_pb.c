/*
 * ssar_pb.c - reads a SelfSubjectAccessReview sent as Kubernetes protobuf
 * (ssar_pb.h has the fields).
 *
 * How it works: a reader over the bytes yields (field, wire type, value)
 * triples; each message level keeps the fields it knows and skips the
 * rest. Lengths are checked against what is left before anything is
 * read, so no input reads past its end.
 *
 * What it does not do: encode, or read any other kind (a maintained
 * protobuf library belongs here once more kinds need it).
 */
#include "flexq/ssar_pb.h"

#include <stdint.h>
#include <string.h>

struct rd {
    const unsigned char *p, *end, *start;
    struct fq_err *err;
};

static int bad(struct rd *r, const char *what)
{
    return fq_err_set(r->err, FQ_EPARSE, "protobuf body: %s at byte %ld", what,
                      (long)(r->p - r->start));
}

static int varint(struct rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return bad(r, "truncated varint");
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return bad(r, "varint longer than 10 bytes");
}

/* The next field: number, wire type, and for wire type 2 the bytes. */
static int field(struct rd *r, uint32_t *num, int *wt, const unsigned char **b,
                 size_t *blen)
{
    uint64_t key, v;
    int rc = varint(r, &key);
    if (rc < 0)
        return rc;
    *num = (uint32_t)(key >> 3);
    *wt = (int)(key & 7);
    *b = NULL;
    *blen = 0;
    switch (*wt) {
    case 0:
        return varint(r, &v);
    case 1:
    case 5: {
        size_t n = *wt == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            return bad(r, "truncated fixed-width field");
        r->p += n;
        return 0;
    }
    case 2:
        if ((rc = varint(r, &v)) < 0)
            return rc;
        if (v > (uint64_t)(r->end - r->p))
            return bad(r, "length past the end");
        *b = r->p;
        *blen = (size_t)v;
        r->p += v;
        return 0;
    default:
        return bad(r, "unsupported wire type");
    }
}

static struct rd sub(const struct rd *r, const unsigned char *b, size_t n)
{
    struct rd s = {b, b + n, r->start, r->err};
    return s;
}

/* A message of strings only: names[i] is field i+1's JSON key. */
static int strings(struct rd *r, const char *const *names, size_t nnames,
                   struct fq_value *out)
{
    while (r->p < r->end) {
        uint32_t num;
        int wt;
        const unsigned char *b;
        size_t n;
        int rc = field(r, &num, &wt, &b, &n);
        if (rc < 0)
            return rc;
        if (wt != 2 || num < 1 || num > nnames)
            continue;
        if (n > FQ_PB_MAX_STR)
            return bad(r, "string too long");
        fq_map_set(out, names[num - 1], fq_value_strn((const char *)b, n));
    }
    return 0;
}

static int spec(struct rd *r, struct fq_value *out)
{
    static const char *const ra[] = {"namespace", "verb",     "group",
                                     "version",   "resource", "subresource",
                                     "name"};
    static const char *const nra[] = {"path", "verb"};
    while (r->p < r->end) {
        uint32_t num;
        int wt;
        const unsigned char *b;
        size_t n;
        int rc = field(r, &num, &wt, &b, &n);
        if (rc < 0)
            return rc;
        if (wt != 2 || (num != 1 && num != 2))
            continue;
        struct rd s = sub(r, b, n);
        rc = num == 1 ?
                 strings(&s, ra, 7,
                         fq_map_ensure_map(out, "resourceAttributes")) :
                 strings(&s, nra, 2,
                         fq_map_ensure_map(out, "nonResourceAttributes"));
        if (rc < 0)
            return rc;
    }
    return 0;
}

int fq_ssar_from_protobuf(const char *buf, size_t len, struct fq_value **out,
                          struct fq_err *err)
{
    *out = NULL;
    if (len > FQ_PB_MAX_INPUT)
        return fq_err_set(err, FQ_ELIMIT, "protobuf body: over %u bytes",
                          FQ_PB_MAX_INPUT);
    if (len < 4 || memcmp(buf, "k8s\0", 4) != 0)
        return fq_err_set(err, FQ_EPARSE,
                          "protobuf body: no \"k8s\\0\" envelope");
    const unsigned char *u = (const unsigned char *)buf;
    struct rd r = {u + 4, u + len, u, err};
    const unsigned char *raw = NULL;
    size_t rawlen = 0;
    while (r.p < r.end) {
        uint32_t num;
        int wt;
        const unsigned char *b;
        size_t n;
        int rc = field(&r, &num, &wt, &b, &n);
        if (rc < 0)
            return rc;
        if (num == 2 && wt == 2) {
            raw = b;
            rawlen = n;
        }
    }
    struct fq_value *v = fq_value_map();
    struct fq_value *sp = fq_map_ensure_map(v, "spec");
    struct rd m = sub(&r, raw ? raw : r.end, raw ? rawlen : 0);
    while (m.p < m.end) {
        uint32_t num;
        int wt;
        const unsigned char *b;
        size_t n;
        int rc = field(&m, &num, &wt, &b, &n);
        if (rc == 0 && num == 2 && wt == 2) {
            struct rd s = sub(&m, b, n);
            rc = spec(&s, sp);
        }
        if (rc < 0) {
            fq_value_free(v);
            return rc;
        }
    }
    *out = v;
    return 0;
}
