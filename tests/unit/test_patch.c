/*
 * test_patch.c - JSON patch (RFC 6902, with the RFC's own appendix cases),
 * strategic merge patch with the core kinds' merge keys and kubectl's
 * directives (patch.c), and the Kubernetes protobuf body reader (kpb.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/kpb.h"
#include "flexq/patch.h"
#include "flexq/ssa.h"
#include "flexq/value.h"

static struct fq_value *J(const char *text)
{
    struct fq_limits lim = fq_limits_default();
    struct fq_value *v = NULL;
    assert_int_equal(fq_json_parse(text, strlen(text), NULL, &lim, &v, NULL),
                     0);
    return v;
}

/* Applies a JSON patch to doc; returns the rc and checks the result. */
static int jp(const char *doc, const char *patch, const char *want)
{
    struct fq_value *t = J(doc), *p = J(patch);
    struct fq_err e = {0};
    int rc = fq_patch_json(&t, p, &e);
    if (rc == 0 && want) {
        struct fq_value *w = J(want);
        char *got = fq_json_dumps(t, 0);
        if (!fq_value_equal(t, w))
            fail_msg("json patch %s on %s: got %s want %s", patch, doc, got,
                     want);
        free(got);
        fq_value_free(w);
    }
    fq_value_free(t);
    fq_value_free(p);
    return rc;
}

static void test_json_patch(void **state)
{
    (void)state;
    /* RFC 6902 appendix A */
    assert_int_equal(
        jp("{\"foo\":\"bar\"}",
           "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
           "{\"foo\":\"bar\",\"baz\":\"qux\"}"),
        0);
    assert_int_equal(
        jp("{\"foo\":[\"bar\",\"baz\"]}",
           "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
           "{\"foo\":[\"bar\",\"qux\",\"baz\"]}"),
        0);
    assert_int_equal(jp("{\"baz\":\"qux\",\"foo\":\"bar\"}",
                        "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
                        "{\"foo\":\"bar\"}"),
                     0);
    assert_int_equal(jp("{\"foo\":[\"bar\",\"qux\",\"baz\"]}",
                        "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
                        "{\"foo\":[\"bar\",\"baz\"]}"),
                     0);
    assert_int_equal(
        jp("{\"baz\":\"qux\",\"foo\":\"bar\"}",
           "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
           "{\"baz\":\"boo\",\"foo\":\"bar\"}"),
        0);
    assert_int_equal(
        jp("{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":"
           "\"grault\"}}",
           "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/"
           "thud\"}]",
           "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":"
           "\"fred\"}}"),
        0);
    assert_int_equal(
        jp("{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
           "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
           "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}"),
        0);
    assert_int_equal(jp("{\"foo\":[1,2]}",
                        "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":3}]",
                        "{\"foo\":[1,2,3]}"),
                     0);
    assert_int_equal(jp("{\"a/b\":1,\"m~n\":2}",
                        "[{\"op\":\"copy\",\"from\":\"/a~1b\",\"path\":\"/"
                        "m~0n\"}]",
                        "{\"a/b\":1,\"m~n\":1}"),
                     0);
    /* test passes, test fails */
    assert_int_equal(
        jp("{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
           "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},{\"op\":"
           "\"test\",\"path\":\"/foo/1\",\"value\":2}]",
           NULL),
        0);
    assert_int_equal(jp("{\"baz\":\"qux\"}",
                        "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}"
                        "]",
                        NULL),
                     FQ_EINVAL);
    /* errors: missing target, bad index, unknown op, bad pointer */
    assert_int_equal(jp("{\"foo\":\"bar\"}",
                        "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":1}]",
                        NULL),
                     FQ_EINVAL);
    assert_int_equal(jp("{\"foo\":[1]}",
                        "[{\"op\":\"add\",\"path\":\"/foo/01\",\"value\":1}]",
                        NULL),
                     FQ_EINVAL);
    assert_int_equal(jp("{}", "[{\"op\":\"frob\",\"path\":\"/x\"}]", NULL),
                     FQ_EPARSE);
    assert_int_equal(
        jp("{}", "[{\"op\":\"add\",\"path\":\"x\",\"value\":1}]", NULL),
        FQ_EPARSE);
    assert_int_equal(jp("{}", "{\"op\":\"add\"}", NULL), FQ_EPARSE);
    assert_int_equal(jp("{\"a\":{\"b\":1}}",
                        "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/c\"}]",
                        NULL),
                     FQ_EINVAL);
}

static int smp(enum fq_kind k, const char *doc, const char *patch,
               const char *want)
{
    struct fq_value *t = J(doc), *p = J(patch);
    struct fq_err e = {0};
    int rc = fq_patch_strategic(&t, p, k, &e);
    if (rc == 0 && want) {
        struct fq_value *w = J(want);
        char *got = fq_json_dumps(t, 0);
        if (!fq_value_equal(t, w))
            fail_msg("smp %s on %s: got %s want %s", patch, doc, got, want);
        free(got);
        fq_value_free(w);
    }
    fq_value_free(t);
    fq_value_free(p);
    return rc;
}

#define POD(c)                                                             \
 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"finalizers\":[\"a\"]}," \
 "\"spec\":{\"containers\":" c "}}"

static void test_strategic(void **state)
{
    (void)state;
    /* containers merged by name, env by name inside */
    assert_int_equal(
        smp(FQ_KIND_POD,
            POD("[{\"name\":\"a\",\"image\":\"x\",\"env\":[{\"name\":\"E\","
                "\"value\":\"1\"}]},{\"name\":\"b\",\"image\":\"y\"}]"),
            "{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":[{\"name\":"
            "\"F\",\"value\":\"2\"}]}]}}",
            POD("[{\"name\":\"a\",\"image\":\"x\",\"env\":[{\"name\":\"E\","
                "\"value\":\"1\"},{\"name\":\"F\",\"value\":\"2\"}]},{\"name\":"
                "\"b\",\"image\":\"y\"}]")),
        0);
    /* $patch: delete of a list item; a new item is appended */
    assert_int_equal(
        smp(FQ_KIND_POD, POD("[{\"name\":\"a\"},{\"name\":\"b\"}]"),
            "{\"spec\":{\"containers\":[{\"name\":\"a\",\"$patch\":\"delete\"}"
            ",{\"name\":\"c\",\"image\":\"z\"}]}}",
            POD("[{\"name\":\"b\"},{\"name\":\"c\",\"image\":\"z\"}]")),
        0);
    /* $setElementOrder */
    assert_int_equal(
        smp(FQ_KIND_POD, POD("[{\"name\":\"a\"},{\"name\":\"b\"}]"),
            "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"b\"},{"
            "\"name\":\"a\"}],\"containers\":[{\"name\":\"a\",\"image\":"
            "\"q\"}]}}",
            POD("[{\"name\":\"b\"},{\"name\":\"a\",\"image\":\"q\"}]")),
        0);
    /* $patch: replace on the list */
    assert_int_equal(
        smp(FQ_KIND_POD, POD("[{\"name\":\"a\"},{\"name\":\"b\"}]"),
            "{\"spec\":{\"containers\":[{\"$patch\":\"replace\"},{\"name\":"
            "\"c\"}]}}",
            POD("[{\"name\":\"c\"}]")),
        0);
    /* finalizers: a set; $deleteFromPrimitiveList removes */
    assert_int_equal(
        smp(FQ_KIND_CONFIGMAP,
            "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]},\"data\":{\"k\":"
            "\"v\"}}",
            "{\"metadata\":{\"finalizers\":[\"c\",\"a\"],\"$"
            "deleteFromPrimitiveList/finalizers\":[\"b\"]},\"data\":{\"k\":"
            "null,\"n\":\"1\"}}",
            "{\"metadata\":{\"finalizers\":[\"a\",\"c\"]},\"data\":{\"n\":"
            "\"1\"}}"),
        0);
    /* $retainKeys and $patch: replace on maps */
    assert_int_equal(
        smp(FQ_KIND_CONFIGMAP,
            "{\"data\":{\"a\":\"1\",\"b\":\"2\"},\"x\":{\"p\":1,"
            "\"q\":2}}",
            "{\"data\":{\"$retainKeys\":[\"b\",\"c\"],\"c\":"
            "\"3\"},\"x\":{\"$patch\":\"replace\",\"r\":3}}",
            "{\"data\":{\"b\":\"2\",\"c\":\"3\"},\"x\":{\"r\":3}}"),
        0);
    /* lists without a strategy are replaced (tolerations) */
    assert_int_equal(
        smp(FQ_KIND_JOB,
            "{\"spec\":{\"template\":{\"spec\":{\"tolerations\":[{\"key\":"
            "\"a\"}],\"containers\":[{\"name\":\"c\",\"ports\":[{"
            "\"containerPort\":80}]}]}}}}",
            "{\"spec\":{\"template\":{\"spec\":{\"tolerations\":[{\"key\":"
            "\"b\"}],\"containers\":[{\"name\":\"c\",\"ports\":[{"
            "\"containerPort\":81}]}]}}}}",
            "{\"spec\":{\"template\":{\"spec\":{\"tolerations\":[{\"key\":"
            "\"b\"}],\"containers\":[{\"name\":\"c\",\"ports\":[{"
            "\"containerPort\":80},{\"containerPort\":81}]}]}}}}"),
        0);
    /* directives never stay in new items */
    assert_int_equal(smp(FQ_KIND_CONFIGMAP, "{}",
                         "{\"data\":{\"$patch\":\"merge\",\"a\":\"1\"}}",
                         "{\"data\":{\"a\":\"1\"}}"),
                     0);
    /* custom resources have no strategies; malformed items are refused */
    assert_int_equal(smp(FQ_KIND_RAYJOB, "{}", "{}", NULL), FQ_EUNSUPPORTED);
    assert_false(fq_patch_strategic_supported(FQ_KIND_CLUSTERQUEUE));
    assert_int_equal(smp(FQ_KIND_POD, POD("[]"),
                         "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}",
                         NULL),
                     FQ_EINVAL);
    assert_int_equal(smp(FQ_KIND_POD, POD("[]"), "{\"$patch\":\"frob\"}", NULL),
                     FQ_EINVAL);
}

/* protobuf helpers for the reader's tests */
static size_t put_varint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        p[n++] = v ? c | 0x80 : c;
    } while (v);
    return n;
}

static size_t put_bytes(unsigned char *p, unsigned f, const void *d, size_t len)
{
    size_t n = put_varint(p, (uint64_t)f << 3 | 2);
    n += put_varint(p + n, len);
    memcpy(p + n, d, len);
    return n + len;
}

static size_t put_str(unsigned char *p, unsigned f, const char *s)
{
    return put_bytes(p, f, s, strlen(s));
}

static void test_kpb(void **state)
{
    (void)state;
    unsigned char meta[64], entry[64], raw[256], tm[64], body[512];
    size_t m = put_str(meta, 1, "cfg");
    m += put_str(meta + m, 3, ""); /* empty namespace: absent */
    size_t r = put_bytes(raw, 1, meta, m);
    size_t e = put_str(entry, 1, "train.py");
    e += put_str(entry + e, 2, "print(1)\n");
    r += put_bytes(raw + r, 2, entry, e);
    e = put_str(entry, 1, "bin");
    e += put_bytes(entry + e, 2, "\x00\x01\x02", 3);
    r += put_bytes(raw + r, 3, entry, e);
    size_t t = put_str(tm, 1, "v1");
    t += put_str(tm + t, 2, "ConfigMap");
    memcpy(body, "k8s", 4);
    size_t b = 4 + put_bytes(body + 4, 1, tm, t);
    b += put_bytes(body + b, 2, raw, r);
    struct fq_value *v = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_kpb_decode(body, b, &v, &err), 0);
    struct fq_value *want =
        J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
          "\"name\":\"cfg\"},\"data\":{\"train.py\":\"print(1)\\n\"},"
          "\"binaryData\":{\"bin\":\"AAEC\"}}");
    assert_true(fq_value_equal(v, want));
    fq_value_free(v);
    fq_value_free(want);
    /* every truncation is refused without reading past the end */
    for (size_t cut = 0; cut < b; cut++) {
        v = NULL;
        int rc = fq_kpb_decode(body, cut, &v, &err);
        if (rc == 0)
            fq_value_free(v);
        else
            assert_null(v);
    }
    /* a kind it does not read: FQ_EUNSUPPORTED (the API answers 415) */
    t = put_str(tm, 1, "apps/v1");
    t += put_str(tm + t, 2, "Deployment");
    b = 4 + put_bytes(body + 4, 1, tm, t);
    assert_int_equal(fq_kpb_decode(body, b, &v, &err), FQ_EUNSUPPORTED);
    assert_int_equal(fq_kpb_decode("{}", 2, &v, &err), FQ_EPARSE);
}

static size_t put_int(unsigned char *p, unsigned f, uint64_t v)
{
    size_t n = put_varint(p, (uint64_t)f << 3);
    return n + put_varint(p + n, v);
}

/* body = "k8s\0" + Unknown{typeMeta{av, kind}, raw}; returns its size */
static size_t envelope(unsigned char *body, const char *av, const char *kind,
                       const unsigned char *raw, size_t r)
{
    unsigned char tm[64];
    size_t t = put_str(tm, 1, av);
    t += put_str(tm + t, 2, kind);
    memcpy(body, "k8s", 4);
    size_t b = 4 + put_bytes(body + 4, 1, tm, t);
    return b + put_bytes(body + b, 2, raw, r);
}

/* A Job as `kubectl create job` and a typical client send it: pointer
 * fields set to zero kept, non-pointer zeros absent, inlined structs,
 * quantities, maps, unknown fields skipped. */
static void test_kpb_job(void **state)
{
    (void)state;
    unsigned char x[256], env[256], ctr[1024], vol[128], spec[2048], tmpl[2048],
        js[4096], raw[4096], body[4200], meta[256];
    /* env {name: CM, valueFrom {configMapKeyRef {name: cfg, key: k}}} */
    size_t n = put_str(x, 1, "cfg"); /* LocalObjectReference */
    unsigned char sel[128], src[128];
    size_t s = put_bytes(sel, 1, x, n);
    s += put_str(sel + s, 2, "k");
    size_t sr = put_bytes(src, 3, sel, s);
    size_t e = put_str(env, 1, "CM");
    e += put_bytes(env + e, 3, src, sr);
    /* container */
    size_t c = put_str(ctr, 1, "main");
    c += put_str(ctr + c, 2, "busybox");
    c += put_str(ctr + c, 3, "sh");
    c += put_str(ctr + c, 3, "-c");
    c += put_str(ctr + c, 4, "echo hi");
    c += put_bytes(ctr + c, 7, env, e);
    unsigned char q[32], ent[64], res[128];
    size_t qn = put_str(q, 1, "500m");
    size_t en = put_str(ent, 1, "cpu");
    en += put_bytes(ent + en, 2, q, qn);
    size_t rn = put_bytes(res, 2, ent, en); /* requests */
    c += put_bytes(ctr + c, 8, res, rn);
    c += put_int(ctr + c, 16, 0);         /* stdin false: absent */
    c += put_str(ctr + c, 999, "future"); /* unknown: skipped */
    c += put_str(ctr + c, 13, "");        /* empty string: absent */
    /* volume {name: script, configMap {name: cfg}} */
    unsigned char cmv[64], vs[64];
    size_t cv = put_bytes(cmv, 1, x, n);
    size_t vn = put_str(vol, 1, "script");
    size_t vsn = put_bytes(vs, 19, cmv, cv);
    unsigned char ed[8];
    vsn += put_bytes(vs + vsn, 2, ed, 0); /* emptyDir: {} */
    vn += put_bytes(vol + vn, 2, vs, vsn);
    size_t p = put_bytes(spec, 1, vol, vn);
    p += put_bytes(spec + p, 2, ctr, c);
    p += put_str(spec + p, 3, "Never");
    unsigned char ns[64];
    size_t nsn = put_str(ns, 1, "pool");
    nsn += put_str(ns + nsn, 2, "a");
    p += put_bytes(spec + p, 7, ns, nsn);
    size_t tn = put_bytes(tmpl, 2, spec, p);
    size_t j = put_int(js, 1, 1);
    j += put_int(js + j, 7, 0);  /* backoffLimit 0: kept */
    j += put_int(js + j, 10, 0); /* suspend false: kept */
    j += put_bytes(js + j, 6, tmpl, tn);
    j += put_int(js + j, 3, (uint64_t)-5); /* negative int64 */
    size_t m = put_str(meta, 1, "pi");
    unsigned char lab[64];
    size_t ln = put_str(lab, 1, "kueue.x-k8s.io/queue-name");
    ln += put_str(lab + ln, 2, "lq");
    m += put_bytes(meta + m, 11, lab, ln);
    unsigned char own[128];
    size_t on = put_str(own, 5, "ray.io/v1");
    on += put_str(own + on, 1, "RayJob");
    on += put_str(own + on, 3, "rj");
    on += put_str(own + on, 4, "u-1");
    on += put_int(own + on, 6, 1);
    m += put_bytes(meta + m, 13, own, on);
    size_t r = put_bytes(raw, 1, meta, m);
    r += put_bytes(raw + r, 2, js, j);
    r += put_bytes(raw + r, 3, x, 0); /* status: {} */
    size_t b = envelope(body, "batch/v1", "Job", raw, r);
    struct fq_value *v = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_kpb_decode(body, b, &v, &err), 0);
    struct fq_value *want =
        J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
          "\"name\":\"pi\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"},"
          "\"ownerReferences\":[{\"apiVersion\":\"ray.io/v1\",\"kind\":"
          "\"RayJob\",\"name\":\"rj\",\"uid\":\"u-1\",\"controller\":true}]},"
          "\"spec\":{\"parallelism\":1,\"backoffLimit\":0,\"suspend\":false,"
          "\"activeDeadlineSeconds\":-5,\"template\":{\"spec\":{"
          "\"volumes\":[{\"name\":\"script\",\"configMap\":{\"name\":\"cfg\"},"
          "\"emptyDir\":{}}],\"containers\":[{\"name\":\"main\",\"image\":"
          "\"busybox\",\"command\":[\"sh\",\"-c\"],\"args\":[\"echo hi\"],"
          "\"env\":[{\"name\":\"CM\",\"valueFrom\":{\"configMapKeyRef\":{"
          "\"name\":\"cfg\",\"key\":\"k\"}}}],\"resources\":{\"requests\":{"
          "\"cpu\":\"500m\"}}}],\"restartPolicy\":\"Never\",\"nodeSelector\":{"
          "\"pool\":\"a\"}}}},\"status\":{}}");
    if (!fq_value_equal(v, want)) {
        char *got = fq_json_dumps(v, 0);
        fprintf(stderr, "got %s\n", got);
        free(got);
    }
    assert_true(fq_value_equal(v, want));
    fq_value_free(v);
    fq_value_free(want);
    for (size_t cut = 0; cut < b; cut++) {
        v = NULL;
        int rc = fq_kpb_decode(body, cut, &v, &err);
        if (rc == 0)
            fq_value_free(v);
        else
            assert_null(v);
    }
    /* a Pod with a packed repeated int64 and a bad string */
    unsigned char psc[32], pk[8] = {1, 2, 0x80, 0x01};
    size_t pn = put_bytes(psc, 4, pk, 4);
    p = put_bytes(spec, 14, psc, pn);
    r = put_bytes(raw, 2, spec, p);
    b = envelope(body, "v1", "Pod", raw, r);
    assert_int_equal(fq_kpb_decode(body, b, &v, &err), 0);
    want = J("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{"
             "\"securityContext\":{\"supplementalGroups\":[1,2,128]}}}");
    assert_true(fq_value_equal(v, want));
    fq_value_free(v);
    fq_value_free(want);
    /* probes: the inlined handler, IntOrString ports (int and string) */
    unsigned char ios[16], hg[64], ph[64], pr[96], tcp[32], c2[256];
    size_t in = put_int(ios, 2, 8080);
    size_t hn = put_str(hg, 1, "/healthz");
    hn += put_bytes(hg + hn, 2, ios, in);
    size_t phn = put_bytes(ph, 2, hg, hn);
    size_t prn = put_bytes(pr, 1, ph, phn);
    prn += put_int(pr + prn, 4, 10);
    size_t c2n = put_str(c2, 1, "web");
    c2n += put_bytes(c2 + c2n, 10, pr, prn);
    in = put_int(ios, 1, 1);
    in += put_str(ios + in, 3, "http");
    size_t tn2 = put_bytes(tcp, 1, ios, in);
    phn = put_bytes(ph, 3, tcp, tn2);
    prn = put_bytes(pr, 1, ph, phn);
    c2n += put_bytes(c2 + c2n, 11, pr, prn);
    p = put_bytes(spec, 2, c2, c2n);
    r = put_bytes(raw, 2, spec, p);
    b = envelope(body, "v1", "Pod", raw, r);
    assert_int_equal(fq_kpb_decode(body, b, &v, &err), 0);
    want = J("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{"
             "\"containers\":[{\"name\":\"web\",\"livenessProbe\":{"
             "\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},"
             "\"periodSeconds\":10},\"readinessProbe\":{\"tcpSocket\":{"
             "\"port\":\"http\"}}}]}}");
    assert_true(fq_value_equal(v, want));
    fq_value_free(v);
    fq_value_free(want);
    /* a Service: targetPort 0 absent (the server defaults it), a named one
     * kept, the selector map */
    unsigned char sp1[64], sp2[64], svc[256], tp[32], ssel[32];
    size_t tpn = put_int(tp, 1, 0);
    size_t s1 = put_str(sp1, 1, "a");
    s1 += put_int(sp1 + s1, 3, 80);
    s1 += put_bytes(sp1 + s1, 4, tp, tpn);
    tpn = put_int(tp, 1, 1);
    tpn += put_str(tp + tpn, 3, "http");
    size_t s2 = put_str(sp2, 1, "b");
    s2 += put_int(sp2 + s2, 3, 81);
    s2 += put_bytes(sp2 + s2, 4, tp, tpn);
    size_t sn = put_bytes(svc, 1, sp1, s1);
    sn += put_bytes(svc + sn, 1, sp2, s2);
    size_t seln = put_str(ssel, 1, "app");
    seln += put_str(ssel + seln, 2, "web");
    sn += put_bytes(svc + sn, 2, ssel, seln);
    sn += put_str(svc + sn, 4, "ClusterIP");
    r = put_bytes(raw, 2, svc, sn);
    b = envelope(body, "v1", "Service", raw, r);
    assert_int_equal(fq_kpb_decode(body, b, &v, &err), 0);
    want = J("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"spec\":{"
             "\"ports\":[{\"name\":\"a\",\"port\":80},{\"name\":\"b\","
             "\"port\":81,\"targetPort\":\"http\"}],\"selector\":{\"app\":"
             "\"web\"},\"type\":\"ClusterIP\"}}");
    assert_true(fq_value_equal(v, want));
    fq_value_free(v);
    fq_value_free(want);
    p = put_str(spec, 3, "\xff");
    r = put_bytes(raw, 2, spec, p);
    b = envelope(body, "v1", "Pod", raw, r);
    v = NULL;
    assert_int_equal(fq_kpb_decode(body, b, &v, &err), FQ_EPARSE);
    assert_null(v);
}

static void test_ssa(void **state)
{
    (void)state;
    struct fq_value *cfg = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                             "\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":"
                             "\"1\",\"b\":\"2\"}}");
    struct fq_value *o1 = NULL, *o2 = NULL, *o3 = NULL, *clash = NULL;
    struct fq_err e = {0};
    assert_int_equal(
        fq_ssa_apply(NULL, cfg, "m1", false, "T1", &o1, &clash, &e), 0);
    assert_string_equal(
        fq_value_path_str(
            fq_seq_at(fq_value_path(o1, "metadata.managedFields"), 0),
            "manager", ""),
        "m1");
    /* m2 sets c: a and b stay (m1 owns them) */
    struct fq_value *cfg2 = J("{\"apiVersion\":\"v1\",\"kind\":"
                              "\"ConfigMap\",\"metadata\":{\"name\":\"c\"},"
                              "\"data\":{\"c\":\"3\",\"a\":\"1\"}}");
    assert_int_equal(fq_ssa_apply(o1, cfg2, "m2", false, "T2", &o2, &clash, &e),
                     0);
    assert_string_equal(fq_value_path_str(o2, "data.b", ""), "2");
    assert_string_equal(fq_value_path_str(o2, "data.c", ""), "3");
    /* m2 changes a, which m1 owns: a conflict naming both */
    struct fq_value *cfg3 = J("{\"apiVersion\":\"v1\",\"kind\":"
                              "\"ConfigMap\",\"metadata\":{\"name\":\"c\"},"
                              "\"data\":{\"a\":\"9\"}}");
    assert_int_equal(fq_ssa_apply(o2, cfg3, "m2", false, "T3", &o3, &clash, &e),
                     FQ_ECONFLICT);
    assert_null(o3);
    assert_int_equal(fq_value_len(clash), 1);
    assert_string_equal(fq_value_path_str(fq_seq_at(clash, 0), "field", ""),
                        ".data.a");
    assert_string_equal(fq_value_path_str(fq_seq_at(clash, 0), "manager", ""),
                        "m1");
    fq_value_free(clash);
    /* forced: a moves to m2; c, which m2 no longer applies, goes */
    assert_int_equal(fq_ssa_apply(o2, cfg3, "m2", true, "T3", &o3, &clash, &e),
                     0);
    assert_string_equal(fq_value_path_str(o3, "data.a", ""), "9");
    assert_null(fq_value_path(o3, "data.c"));
    assert_string_equal(fq_value_path_str(o3, "data.b", ""), "2");
    /* an update by m3 takes b from m1 */
    struct fq_value *upd = fq_value_clone(o3);
    fq_value_set_path(upd, "data.b", fq_value_str("7"));
    assert_int_equal(fq_ssa_update(o3, upd, "m3", "T4"), 0);
    const struct fq_value *mf = fq_value_path(upd, "metadata.managedFields");
    bool m3 = false;
    for (size_t i = 0; i < fq_value_len(mf); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(mf, i), "manager", ""), "m3"))
            m3 = fq_value_path(fq_seq_at(mf, i), "fieldsV1.f:data.f:b") != NULL;
    assert_true(m3);
    fq_value_free(o3);
    /* no manager: refused */
    assert_int_equal(fq_ssa_apply(NULL, cfg, "", false, "T", &o3, &clash, &e),
                     FQ_EPARSE);
    fq_value_free(upd);
    fq_value_free(o1);
    fq_value_free(o2);
    fq_value_free(cfg);
    fq_value_free(cfg2);
    fq_value_free(cfg3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_patch), cmocka_unit_test(test_strategic),
        cmocka_unit_test(test_kpb),        cmocka_unit_test(test_kpb_job),
        cmocka_unit_test(test_ssa),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
