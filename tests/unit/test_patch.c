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
    t = put_str(tm, 1, "v1");
    t += put_str(tm + t, 2, "Pod");
    b = 4 + put_bytes(body + 4, 1, tm, t);
    assert_int_equal(fq_kpb_decode(body, b, &v, &err), FQ_EUNSUPPORTED);
    assert_int_equal(fq_kpb_decode("{}", 2, &v, &err), FQ_EPARSE);
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
        cmocka_unit_test(test_json_patch),
        cmocka_unit_test(test_strategic),
        cmocka_unit_test(test_kpb),
        cmocka_unit_test(test_ssa),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
