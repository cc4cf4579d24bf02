/*
 * test_quantity.c - table-driven tests of Kubernetes quantity parsing,
 * canonical formatting and the overflow-checked arithmetic helpers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/quantity.h"

#define U   FQ_Q_UNIT
#define M   FQ_Q_MILLI
#define DEC FQ_QF_DECIMAL_SI
#define BIN FQ_QF_BINARY_SI

struct pcase {
    const char *in;
    enum fq_qscale scale;
    int rc;
    int64_t want;        /* when rc == 0 */
    enum fq_qformat fmt; /* when rc == 0 */
    const char *canon;   /* canonical text of want, NULL to skip */
};

static const struct pcase parse_cases[] = {
    /* plain integers and decimals */
    {"0", U, 0, 0, DEC, "0"},
    {"1", U, 0, 1, DEC, "1"},
    {"16", U, 0, 16, DEC, "16"},
    {"+1", U, 0, 1, DEC, "1"},
    {"-1", U, 0, -1, DEC, "-1"},
    {"007", U, 0, 7, DEC, "7"},
    {"2", M, 0, 2000, DEC, "2"},
    {"0.5", M, 0, 500, DEC, "500m"},
    {".5", M, 0, 500, DEC, "500m"},
    {"+.5", M, 0, 500, DEC, "500m"},
    {"1.", U, 0, 1, DEC, "1"},
    {"1.5", M, 0, 1500, DEC, "1500m"},
    {"12.5", M, 0, 12500, DEC, "12500m"},
    {"10", M, 0, 10000, DEC, "10"},
    {"1000000000", M, 0, 1000000000000LL, DEC, "1G"},
    {"1000000000", U, 0, 1000000000, DEC, "1G"},
    {"0.0", U, 0, 0, DEC, "0"},
    {"-0", U, 0, 0, DEC, "0"},
    {"0000000000000000000000000000001", U, 0, 1, DEC, "1"},
    {"1.000000000000000000000000000000", U, 0, 1, DEC, "1"},
    /* milli and the decimal SI suffixes */
    {"500m", M, 0, 500, DEC, "500m"},
    {"1000m", M, 0, 1000, DEC, "1"},
    {"0m", M, 0, 0, DEC, "0"},
    {"1500m", M, 0, 1500, DEC, "1500m"},
    {"100m", U, 0, 1, DEC, "1"},
    {"1k", U, 0, 1000, DEC, "1k"},
    {"1k", M, 0, 1000000, DEC, "1k"},
    {"1M", U, 0, 1000000, DEC, "1M"},
    {"1G", U, 0, 1000000000, DEC, "1G"},
    {"1T", U, 0, 1000000000000LL, DEC, "1T"},
    {"1P", U, 0, 1000000000000000LL, DEC, "1P"},
    {"1E", U, 0, 1000000000000000000LL, DEC, "1E"},
    {"9E", U, 0, 9000000000000000000LL, DEC, "9E"},
    {"1500k", U, 0, 1500000, DEC, "1500k"},
    {"2.5k", U, 0, 2500, DEC, "2500"},
    {"100n", M, 0, 1, DEC, "1m"},
    {"1000000n", M, 0, 1, DEC, "1m"},
    {"1u", U, 0, 1, DEC, "1"},
    {"5000000u", U, 0, 5, DEC, "5"},
    /* binary SI */
    {"1Ki", U, 0, 1024, BIN, "1Ki"},
    {"1Mi", U, 0, 1048576, BIN, "1Mi"},
    {"4Gi", U, 0, 4294967296LL, BIN, "4Gi"},
    {"16Gi", U, 0, 17179869184LL, BIN, "16Gi"},
    {"20Gi", U, 0, 21474836480LL, BIN, "20Gi"},
    {"75Gi", U, 0, 80530636800LL, BIN, "75Gi"},
    {"1Ti", U, 0, 1099511627776LL, BIN, "1Ti"},
    {"1Pi", U, 0, 1125899906842624LL, BIN, "1Pi"},
    {"1Ei", U, 0, 1152921504606846976LL, BIN, "1Ei"},
    {"7Ei", U, 0, 8070450532247928832LL, BIN, "7Ei"},
    {"1000000000Gi", U, 0, 1073741824000000000LL, BIN, "1000000000Gi"},
    {"1.5Gi", U, 0, 1610612736LL, BIN, "1536Mi"},
    {"1.5Gi", M, 0, 1610612736000LL, BIN, "1536Mi"},
    {"0.5Ki", U, 0, 512, BIN, "512"},
    {"0.1Ki", U, 0, 103, BIN, "103"},
    {"1536Mi", U, 0, 1610612736LL, BIN, "1536Mi"},
    {"1024Ki", U, 0, 1048576, BIN, "1Mi"},
    {"-1Ki", U, 0, -1024, BIN, "-1Ki"},
    {"0Gi", U, 0, 0, BIN, "0"},
    /* exponents */
    {"1e3", U, 0, 1000, DEC, "1k"},
    {"1E3", U, 0, 1000, DEC, "1k"},
    {"1E9", U, 0, 1000000000, DEC, "1G"},
    {"1e+3", U, 0, 1000, DEC, "1k"},
    {"1e-3", M, 0, 1, DEC, "1m"},
    {"1.5e3", U, 0, 1500, DEC, "1500"},
    {".5e1", U, 0, 5, DEC, "5"},
    {"1e0", U, 0, 1, DEC, "1"},
    {"12e-1", U, 0, 2, DEC, "2"},
    {"0e1000", U, 0, 0, DEC, "0"},
    {"1e18", U, 0, 1000000000000000000LL, DEC, "1E"},
    {"1e-1000", U, 0, 1, DEC, "1"},
    {"-1e-1000", U, 0, -1, DEC, "-1"},
    /* rounding up, away from zero */
    {"0.1m", M, 0, 1, DEC, "1m"},
    {"0.5", U, 0, 1, DEC, "1"},
    {"1.0001", U, 0, 2, DEC, "2"},
    {"-0.5", U, 0, -1, DEC, "-1"},
    {"0.000000000000000000000000001", U, 0, 1, DEC, "1"},
    {"1.1m", M, 0, 2, DEC, "2m"},
    {"999.9999m", M, 0, 1000, DEC, "1"},
    /* long digit strings (past the parser's stack array) */
    {"0.0000000000000000000000000000000000000000000000000000000000000000000000"
     "00000000000000000000000001Ki",
     U, 0, 1, BIN, "1"},
    {"1000000000000000000000000000000000000000000000000000000000000000000000"
     "000000000000000000000e-90",
     U, 0, 1, DEC, "1"},
    {"0000000000000000000000000000000000000000000000000000000000000000000000"
     "000000000000000000001.5Mi",
     U, 0, 1572864, BIN, "1536Ki"},
    {"0.0000000000000000000000000000000000000000000000000000000000000000000000"
     "0000000000123456789e86",
     U, 0, 123457, DEC, "123457"},
    {"1234567890123456789012345678901234567890123456789012345678901234567890"
     "1234567890123456789.9e-80",
     M, 0, 123456789013LL, DEC, "123456789013m"},
    {"1.000000000000000000000000000000000000000000000000000000000000000000000"
     "0000000000000000000000000000001Ki",
     U, 0, 1025, BIN, "1025"},
    /* limits of int64 */
    {"9223372036854775807", U, 0, INT64_MAX, DEC, "9223372036854775807"},
    {"-9223372036854775808", U, 0, INT64_MIN, DEC, "-9223372036854775808"},
    {"9223372036854775807m", M, 0, INT64_MAX, DEC, "9223372036854775807m"},
    {"8Ei", U, FQ_EOVERFLOW, 0, BIN, NULL},
    {"-8Ei", U, 0, INT64_MIN, BIN, "-8Ei"},
    {"9223372036854775808", U, FQ_EOVERFLOW, 0, DEC, NULL},
    {"-9223372036854775809", U, FQ_EOVERFLOW, 0, DEC, NULL},
    {"9223372036854775807", M, FQ_EOVERFLOW, 0, DEC, NULL},
    {"10E", U, FQ_EOVERFLOW, 0, DEC, NULL},
    {"1e19", U, FQ_EOVERFLOW, 0, DEC, NULL},
    {"1e1000", U, FQ_EOVERFLOW, 0, DEC, NULL},
    {"1e99999999999999999999", U, FQ_EOVERFLOW, 0, DEC, NULL},
    {"100000000000000000000", U, FQ_EOVERFLOW, 0, DEC, NULL},
    {"1000000000000Gi", U, FQ_EOVERFLOW, 0, BIN, NULL},
    {"1000000000Ei", U, FQ_EOVERFLOW, 0, BIN, NULL},
    {"9223372036854775807.5", U, FQ_EOVERFLOW, 0, DEC, NULL},
    /* malformed */
    {"", U, FQ_EINVAL, 0, DEC, NULL},
    {".", U, FQ_EINVAL, 0, DEC, NULL},
    {"+", U, FQ_EINVAL, 0, DEC, NULL},
    {"-", U, FQ_EINVAL, 0, DEC, NULL},
    {"1x", U, FQ_EINVAL, 0, DEC, NULL},
    {"16x", U, FQ_EINVAL, 0, DEC, NULL},
    {"Ki", U, FQ_EINVAL, 0, DEC, NULL},
    {"1KiB", U, FQ_EINVAL, 0, DEC, NULL},
    {"1ki", U, FQ_EINVAL, 0, DEC, NULL},
    {"1K", U, FQ_EINVAL, 0, DEC, NULL},
    {"1i", U, FQ_EINVAL, 0, DEC, NULL},
    {"1mi", U, FQ_EINVAL, 0, DEC, NULL},
    {"--1", U, FQ_EINVAL, 0, DEC, NULL},
    {"+-1", U, FQ_EINVAL, 0, DEC, NULL},
    {"1e", U, FQ_EINVAL, 0, DEC, NULL},
    {"1e+", U, FQ_EINVAL, 0, DEC, NULL},
    {"1e3.5", U, FQ_EINVAL, 0, DEC, NULL},
    {"1e3Ki", U, FQ_EINVAL, 0, DEC, NULL},
    {"1Ki1", U, FQ_EINVAL, 0, DEC, NULL},
    {" 1", U, FQ_EINVAL, 0, DEC, NULL},
    {"1 ", U, FQ_EINVAL, 0, DEC, NULL},
    {"1 Gi", U, FQ_EINVAL, 0, DEC, NULL},
    {"1.1.1", U, FQ_EINVAL, 0, DEC, NULL},
    {"1,5", U, FQ_EINVAL, 0, DEC, NULL},
    {"0x10", U, FQ_EINVAL, 0, DEC, NULL},
    {"${TPU}", U, FQ_EINVAL, 0, DEC, NULL},
    {"abc", U, FQ_EINVAL, 0, DEC, NULL},
    {"e3", U, FQ_EINVAL, 0, DEC, NULL},
    {"Inf", U, FQ_EINVAL, 0, DEC, NULL},
    {"NaN", U, FQ_EINVAL, 0, DEC, NULL},
};

static void test_parse_table(void **state)
{
    (void)state;
    size_t n = sizeof(parse_cases) / sizeof(parse_cases[0]);
    assert_true(n >= 80);
    for (size_t i = 0; i < n; i++) {
        const struct pcase *c = &parse_cases[i];
        int64_t got = 12345;
        enum fq_qformat fmt = (enum fq_qformat)99;
        struct fq_err err;
        memset(&err, 0, sizeof(err));
        int rc = fq_quantity_parse(c->in, c->scale, &got, &fmt, &err);
        if (rc != c->rc || (rc == 0 && (got != c->want || fmt != c->fmt)))
            fail_msg("case %zu \"%s\": rc %d got %lld fmt %d; want rc %d "
                     "value %lld fmt %d (%s)",
                     i, c->in, rc, (long long)got, (int)fmt, c->rc,
                     (long long)c->want, (int)c->fmt, err.msg);
        if (rc != 0) {
            assert_int_equal(got, 12345); /* untouched on error */
            assert_int_equal(err.code, rc);
            continue;
        }
        if (c->canon) {
            char buf[64];
            fq_quantity_format(got, c->scale, fmt, buf, sizeof(buf));
            if (strcmp(buf, c->canon))
                fail_msg("case %zu \"%s\": canonical \"%s\", want \"%s\"", i,
                         c->in, buf, c->canon);
            /* The canonical text reads back as the same value. */
            int64_t again = 0;
            assert_int_equal(
                fq_quantity_parse(buf, c->scale, &again, NULL, NULL), 0);
            assert_int_equal(again, got);
        }
    }
}

static void test_error_text(void **state)
{
    (void)state;
    struct fq_err err;
    int64_t v;
    assert_int_equal(fq_quantity_parse("16x", U, &v, NULL, &err), FQ_EINVAL);
    assert_string_equal(err.msg, "invalid quantity \"16x\"");
    assert_int_equal(fq_quantity_parse("", U, &v, NULL, &err), FQ_EINVAL);
    assert_string_equal(err.msg, "invalid quantity \"\"");
    assert_int_equal(fq_quantity_parse("1e1000", U, &v, NULL, &err),
                     FQ_EOVERFLOW);
    assert_string_equal(err.msg, "quantity \"1e1000\" is out of range");
    /* A NULL err is allowed. */
    assert_int_equal(fq_quantity_parse("x", U, &v, NULL, NULL), FQ_EINVAL);
}

struct fcase {
    int64_t v;
    enum fq_qscale scale;
    enum fq_qformat fmt;
    const char *want;
};

static const struct fcase format_cases[] = {
    {0, U, DEC, "0"},
    {0, M, BIN, "0"},
    {2000, M, DEC, "2"},
    {500, M, DEC, "500m"},
    {1, M, DEC, "1m"},
    {-1500, M, DEC, "-1500m"},
    {80530636800LL, U, BIN, "75Gi"},
    {80530636800LL, U, DEC, "80530636800"},
    {1000, U, DEC, "1k"},
    {1000, U, BIN, "1k"},
    {1023, U, BIN, "1023"},
    {1024, U, BIN, "1Ki"},
    {1025, U, BIN, "1025"},
    {3000000, U, DEC, "3M"},
    {1000000000000000000LL, U, DEC, "1E"},
    {1152921504606846976LL, U, BIN, "1Ei"},
    {INT64_MAX, U, DEC, "9223372036854775807"},
    {INT64_MIN, U, BIN, "-8Ei"},
    {INT64_MIN, U, DEC, "-9223372036854775808"},
    {-2048, U, BIN, "-2Ki"},
    {4096000, M, BIN, "4Ki"},
};

static void test_format_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(format_cases) / sizeof(format_cases[0]);
         i++) {
        const struct fcase *c = &format_cases[i];
        char buf[64];
        char *r = fq_quantity_format(c->v, c->scale, c->fmt, buf, sizeof(buf));
        assert_ptr_equal(r, buf);
        if (strcmp(buf, c->want))
            fail_msg("format case %zu: got \"%s\" want \"%s\"", i, buf,
                     c->want);
    }
    /* A short buffer cuts the text as snprintf does. */
    char small[4] = "xxx";
    fq_quantity_format(-1500, M, DEC, small, sizeof(small));
    assert_string_equal(small, "-15");
    fq_quantity_format(2048, U, BIN, small, 3);
    assert_string_equal(small, "2K");
    fq_quantity_format(5, U, DEC, small, 0);
    assert_string_equal(small, "2K"); /* size 0: nothing written */
}

static void test_scale_for(void **state)
{
    (void)state;
    assert_int_equal(fq_quantity_scale_for("cpu"), FQ_Q_MILLI);
    assert_int_equal(fq_quantity_scale_for("memory"), FQ_Q_UNIT);
    assert_int_equal(fq_quantity_scale_for("google.com/tpu"), FQ_Q_UNIT);
    assert_int_equal(fq_quantity_scale_for("nvidia.com/gpu"), FQ_Q_UNIT);
    assert_int_equal(fq_quantity_scale_for(NULL), FQ_Q_UNIT);
}

static void test_arith(void **state)
{
    (void)state;
    int64_t r = 7;
    assert_int_equal(fq_add_overflow(1, 2, &r), 0);
    assert_int_equal(r, 3);
    assert_int_equal(fq_add_overflow(INT64_MAX, 1, &r), FQ_EOVERFLOW);
    assert_int_equal(r, 3);
    assert_int_equal(fq_add_overflow(INT64_MIN, -1, &r), FQ_EOVERFLOW);
    assert_int_equal(fq_add_overflow(INT64_MAX, INT64_MIN, &r), 0);
    assert_int_equal(r, -1);
    assert_int_equal(fq_mul_overflow(1LL << 31, 1LL << 31, &r), 0);
    assert_int_equal(r, 1LL << 62);
    assert_int_equal(fq_mul_overflow(1LL << 32, 1LL << 31, &r), FQ_EOVERFLOW);
    assert_int_equal(r, 1LL << 62);
    assert_int_equal(fq_mul_overflow(INT64_MIN, -1, &r), FQ_EOVERFLOW);
    assert_int_equal(fq_mul_overflow(-3, 4, &r), 0);
    assert_int_equal(r, -12);
}

/* Long inputs go through the exact digit-array path, not a double. */
static void test_long_inputs(void **state)
{
    (void)state;
    char buf[4096];
    int64_t v = 0;
    /* "." 4000 zeros "1Ei": 10^-4001 x 2^60 is tiny but not zero: 1 */
    memset(buf, '0', sizeof(buf));
    buf[0] = '.';
    memcpy(buf + 4001, "1Ei", 4);
    assert_int_equal(fq_quantity_parse(buf, U, &v, NULL, NULL), 0);
    assert_int_equal(v, 1);
    /* "1" then 3000 zeros "e-2999": exactly 10 */
    memset(buf, '0', sizeof(buf));
    buf[0] = '1';
    memcpy(buf + 3001, "e-2999", 7);
    assert_int_equal(fq_quantity_parse(buf, U, &v, NULL, NULL), 0);
    assert_int_equal(v, 10);
    /* "0.5" followed by 3000 zeros and "Ki": exactly 512 */
    memset(buf, '0', sizeof(buf));
    memcpy(buf, "0.5", 3);
    memcpy(buf + 3003, "Ki", 3);
    assert_int_equal(fq_quantity_parse(buf, U, &v, NULL, NULL), 0);
    assert_int_equal(v, 512);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),  cmocka_unit_test(test_error_text),
        cmocka_unit_test(test_format_table), cmocka_unit_test(test_scale_for),
        cmocka_unit_test(test_arith),        cmocka_unit_test(test_long_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
