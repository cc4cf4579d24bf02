/*
 * test_event_gc.c - Events expire (src/daemon/event_gc.c): by TTL after
 * they were last seen, then the oldest beyond the count cap; nothing but
 * Events is deleted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "event_gc.h"
#include "flexq/engine.h"
#include "flexq/objstore.h"
#include "flexq/timefmt.h"
#include "flexq/value.h"

#define T0 1764431040000LL /* 2025-11-29T15:44:00Z */

static void add(struct fq_objstore *s, const char *kind, const char *name,
                int64_t seen_ms)
{
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("v1"));
    fq_map_set(o, "kind", fq_value_str(kind));
    struct fq_value *md = fq_map_ensure_map(o, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str("team-a"));
    char ts[40];
    fq_time_format(seen_ms, ts, sizeof(ts));
    fq_map_set(o, "lastTimestamp", fq_value_str(ts));
    assert_int_equal(fq_objstore_create(s, o, seen_ms, NULL, NULL, NULL), 0);
}

static void test_ttl_then_cap(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    add(s, "Event", "old-1", T0);
    add(s, "Event", "old-2", T0 + 1000);
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof(name), "new-%d", i);
        add(s, "Event", name, T0 + 3000 * 1000LL + i * 1000);
    }
    add(s, "ConfigMap", "cm", T0);
    int64_t now = T0 + 3700 * 1000LL; /* old-* are past one hour */
    assert_int_equal(fq_event_gc_sweep(s, now, 3600 * 1000LL, 100, 1000), 2);
    assert_null(fq_objstore_get(s, FQ_KIND_EVENT, "team-a", "old-1"));
    assert_non_null(fq_objstore_get(s, FQ_KIND_EVENT, "team-a", "new-0"));
    assert_non_null(fq_objstore_get(s, FQ_KIND_CONFIGMAP, "team-a", "cm"));
    /* The cap keeps the newest; a sweep deletes at most `most`. */
    assert_int_equal(fq_event_gc_sweep(s, now, 3600 * 1000LL, 3, 1), 1);
    assert_null(fq_objstore_get(s, FQ_KIND_EVENT, "team-a", "new-0"));
    assert_int_equal(fq_event_gc_sweep(s, now, 3600 * 1000LL, 3, 1000), 1);
    assert_int_equal(fq_objstore_count(s, FQ_KIND_EVENT), 3);
    assert_null(fq_objstore_get(s, FQ_KIND_EVENT, "team-a", "new-1"));
    assert_non_null(fq_objstore_get(s, FQ_KIND_EVENT, "team-a", "new-4"));
    assert_int_equal(fq_event_gc_sweep(s, now, 3600 * 1000LL, 3, 1000), 0);
    fq_objstore_free(s);
}

/* A churn's Events expire: the store's index and the kind's list shrink
 * as they empty (objstore.c), and what stays is still found by key and
 * listed in order; the store grows again after. */
static void test_store_after_churn(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "ev-%05d", i);
        /* three of them seen late: they stay */
        add(s, "Event", name, i % 1700 == 0 ? T0 + 3000 * 1000LL : T0);
        if (i % 500 == 0) {
            snprintf(name, sizeof(name), "cm-%05d", i);
            add(s, "ConfigMap", name, T0);
        }
    }
    int64_t now = T0 + 3700 * 1000LL;
    assert_int_equal(fq_event_gc_sweep(s, now, 3600 * 1000LL, 100000, 100000),
                     4997);
    assert_int_equal(fq_objstore_count(s, FQ_KIND_EVENT), 3);
    const struct fq_object **v;
    assert_int_equal(fq_objstore_list(s, FQ_KIND_EVENT, NULL, &v), 3);
    assert_string_equal(v[0]->name, "ev-00000");
    assert_string_equal(v[1]->name, "ev-01700");
    assert_string_equal(v[2]->name, "ev-03400");
    free(v);
    assert_non_null(fq_objstore_get(s, FQ_KIND_EVENT, "team-a", "ev-03400"));
    assert_null(fq_objstore_get(s, FQ_KIND_EVENT, "team-a", "ev-03401"));
    assert_int_equal(fq_objstore_count(s, FQ_KIND_CONFIGMAP), 10);
    assert_non_null(
        fq_objstore_get(s, FQ_KIND_CONFIGMAP, "team-a", "cm-04500"));
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof(name), "again-%05d", i);
        add(s, "Event", name, now);
    }
    assert_int_equal(fq_objstore_count(s, FQ_KIND_EVENT), 2003);
    assert_non_null(fq_objstore_get(s, FQ_KIND_EVENT, "team-a", "again-01999"));
    assert_non_null(fq_objstore_get(s, FQ_KIND_EVENT, "team-a", "ev-01700"));
    fq_objstore_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ttl_then_cap),
        cmocka_unit_test(test_store_after_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
