/*
 * test_buf.c - the growable buffer's appends, and the fixed-buffer text
 * helpers (fq_text_put cuts where snprintf would; fq_hex_put writes
 * exactly the digits asked for).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/buf.h"

static void test_buf_appends(void **state)
{
    (void)state;
    struct fq_buf b = FQ_BUF_INIT;
    assert_string_equal(fq_buf_str(&b), "");
    for (int i = 0; i < 1000; i++)
        fq_buf_putc(&b, 'a' + i % 26);
    fq_buf_printf(&b, "-%d-", 42);
    fq_buf_put_xml(&b, "<&\">");
    assert_int_equal(b.len, 1000 + 4 + 19);
    assert_string_equal(fq_buf_str(&b) + 1000, "-42-&lt;&amp;&quot;&gt;");
    fq_buf_release(&b);
}

static void test_text_put(void **state)
{
    (void)state;
    char buf[12];
    size_t at = fq_text_put(buf, sizeof(buf), 0, "gke-");
    at = fq_text_put(buf, sizeof(buf), at, "pool");
    assert_int_equal(at, 8);
    assert_string_equal(buf, "gke-pool");
    /* Cut at n - 1 bytes, as snprintf(buf, 12, ...) cuts. */
    at = fq_text_put(buf, sizeof(buf), at, "-abcdef");
    assert_string_equal(buf, "gke-pool-ab");
    assert_int_equal(at, sizeof(buf) - 1);
    /* Nothing more fits: the text stays as it is. */
    assert_int_equal(fq_text_put(buf, sizeof(buf), at, "xyz"), at);
    assert_string_equal(buf, "gke-pool-ab");
}

static void test_hex_put(void **state)
{
    (void)state;
    char buf[20];
    memset(buf, '#', sizeof(buf));
    char *end = fq_hex_put(buf, 0x0123456789abcdefull, 16);
    assert_ptr_equal(end, buf + 16);
    assert_int_equal(buf[16], '#'); /* no NUL written */
    *end = 0;
    assert_string_equal(buf, "0123456789abcdef");
    *fq_hex_put(buf, 0xfffff2a5, 3) = 0; /* the low digits only */
    assert_string_equal(buf, "2a5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_appends),
        cmocka_unit_test(test_text_put),
        cmocka_unit_test(test_hex_put),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
