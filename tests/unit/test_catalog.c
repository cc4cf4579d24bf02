/*
 * test_catalog.c - the machine catalog: shapes, TPU slices, closest names,
 * prices and GKE's allocatable formula.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flexq/catalog.h"

static void test_shapes(void **state)
{
    (void)state;
    const struct fq_machine *m = fq_catalog_find("ct6e-standard-4t");
    assert_non_null(m);
    assert_int_equal(m->accel_count, 4);
    assert_int_equal(m->vcpu, 180);
    assert_int_equal(m->memory_gib, 720);
    assert_string_equal(m->accel_resource, "google.com/tpu");
    assert_string_equal(m->accel_label, "tpu-v6e-slice");
    assert_int_equal(fq_catalog_find("ct6e-standard-1t")->vcpu, 44);
    assert_int_equal(fq_catalog_find("ct6e-standard-1t")->memory_gib, 448);
    assert_int_equal(fq_catalog_find("ct6e-standard-8t")->memory_gib, 1440);
    assert_int_equal(fq_catalog_find("ct6e-standard-8t")->accel_count, 8);
    const struct fq_machine *n2 = fq_catalog_find("n2-standard-16");
    assert_non_null(n2);
    assert_int_equal(n2->vcpu, 16);
    assert_int_equal(n2->accel_count, 0);
    assert_false(fq_catalog_is_tpu(n2));
    assert_non_null(fq_catalog_find("a2-highgpu-1g"));
    assert_non_null(fq_catalog_find("a3-highgpu-8g"));
    assert_non_null(fq_catalog_find("g2-standard-4"));
    assert_null(fq_catalog_find("ct6e-standard-5t"));
    assert_null(fq_catalog_find(NULL));
    /* Every row has a price and a source. */
    for (size_t i = 0; i < fq_catalog_count(); i++) {
        const struct fq_machine *x = fq_catalog_at(i);
        assert_true(x->price_per_hour > 0);
        assert_non_null(x->source);
        assert_true(strlen(x->source) > 5);
        assert_int_equal(x->topologies[0] != NULL, fq_catalog_is_tpu(x));
    }
    assert_null(fq_catalog_at(fq_catalog_count()));
}

static void test_slices(void **state)
{
    (void)state;
    const struct fq_machine *t4 = fq_catalog_find("ct6e-standard-4t");
    int h = 0;
    struct fq_err err = {0};
    assert_int_equal(fq_catalog_slice_hosts(t4, "4x4", &h, &err), 0);
    assert_int_equal(h, 4);
    assert_int_equal(fq_catalog_slice_hosts(t4, "2x2", &h, &err), 0);
    assert_int_equal(h, 1);
    assert_int_equal(fq_catalog_slice_hosts(t4, "2x4", &h, &err), 0);
    assert_int_equal(h, 2);
    assert_int_equal(fq_catalog_slice_hosts(t4, "16x16", &h, &err), 0);
    assert_int_equal(h, 64);
    assert_int_equal(fq_catalog_slice_hosts(t4, NULL, &h, &err), 0);
    assert_int_equal(h, 1);
    assert_int_equal(fq_catalog_slice_hosts(fq_catalog_find("ct6e-standard-8t"),
                                            "2x4", &h, &err),
                     0);
    assert_int_equal(h, 1);
    assert_int_equal(fq_catalog_slice_hosts(t4, "3x3", &h, &err), FQ_EINVAL);
    assert_non_null(strstr(err.msg, "valid topologies: 2x2, 2x4, 4x4"));
    assert_int_equal(fq_catalog_slice_hosts(t4, "4x4x", &h, &err), FQ_EINVAL);
    assert_int_equal(fq_catalog_slice_hosts(fq_catalog_find("n2-standard-16"),
                                            "4x4", &h, &err),
                     FQ_EINVAL);
    assert_non_null(strstr(err.msg, "has no TPU chips"));
    assert_int_equal(fq_catalog_slice_hosts(fq_catalog_find("ct6e-standard-1t"),
                                            "4x4", &h, &err),
                     FQ_EINVAL);
}

static void test_closest(void **state)
{
    (void)state;
    const char *near[3];
    size_t n = fq_catalog_closest("ct6e-standard-5t", near, 3);
    assert_int_equal(n, 3);
    assert_non_null(strstr(near[0], "ct6e-standard-"));
    assert_non_null(strstr(near[1], "ct6e-standard-"));
    n = fq_catalog_closest("n2-standard-61", near, 1);
    assert_int_equal(n, 1);
    assert_string_equal(near[0], "n2-standard-16");
    assert_int_equal(fq_catalog_closest(NULL, near, 0), 0);
}

static void test_prices(void **state)
{
    (void)state;
    const struct fq_machine *t4 = fq_catalog_find("ct6e-standard-4t");
    /* 4 chips at USD 2.70 per chip-hour. */
    assert_float_equal(fq_catalog_price(t4, FQ_PROV_ON_DEMAND), 10.80, 1e-9);
    assert_float_equal(fq_catalog_price(t4, FQ_PROV_FLEX_START), 10.80 * 0.47,
                       1e-9);
    assert_true(fq_catalog_price(t4, FQ_PROV_SPOT) <
                fq_catalog_price(t4, FQ_PROV_ON_DEMAND));
    assert_float_equal(fq_catalog_price(NULL, FQ_PROV_ON_DEMAND), 0, 0);
}

static void test_allocatable(void **state)
{
    (void)state;
    int64_t cpu, mem;
    fq_catalog_allocatable(fq_catalog_find("n2-standard-16"), &cpu, &mem);
    /* 60 + 10 + 2 x 5 + 12 x 2.5 = 110 m reserved */
    assert_int_equal(cpu, 15890);
    /* 25% of 4 + 20% of 4 + 10% of 8 + 6% of 48 GiB, then 100 MiB */
    const int64_t gib = 1024LL * 1024 * 1024, mib = 1024LL * 1024;
    int64_t reserved = 4 * gib / 100 * 25 + 4 * gib / 100 * 20 +
                       8 * gib / 100 * 10 + 48 * gib / 100 * 6;
    assert_int_equal(mem, 64 * gib - reserved - 100 * mib);
    fq_catalog_allocatable(fq_catalog_find("ct6e-standard-4t"), &cpu, &mem);
    assert_true(cpu > 8000 * 4 && cpu < 180000);
    assert_true(mem > 16 * gib * 4 && mem < 720 * gib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),      cmocka_unit_test(test_slices),
        cmocka_unit_test(test_closest),     cmocka_unit_test(test_prices),
        cmocka_unit_test(test_allocatable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
