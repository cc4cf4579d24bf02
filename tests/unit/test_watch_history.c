/*
 * test_watch_history.c - the API's watch history (src/daemon/api/watch.c)
 * lets go of changes older than its age when tidied, and only those:
 * fresh changes stay, the oldest go first, and the memory they held is
 * freed (ASan's leak check sees the rest).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "daemon.h"
#include "flexq/alloc.h"
#include "flexq/objstore.h"
#include "flexq/value.h"

static void feed_one(struct fq_api *a, uint64_t rev, const char *name)
{
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("v1"));
    fq_map_set(o, "kind", fq_value_str("ConfigMap"));
    struct fq_value *md = fq_map_ensure_map(o, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str("team-a"));
    struct fq_change c = {
        .rev = rev,
        .type = FQ_CHANGE_ADDED,
        .kind = FQ_KIND_CONFIGMAP,
        .ns = fq_xstrdup("team-a"),
        .name = fq_xstrdup(name),
        .obj = o,
    };
    fq_api_feed(a, &c, 1);
    fq_value_free(c.obj); /* NULL when the history took it */
    free(c.ns);
    free(c.name);
}

static void test_ages_out(void **state)
{
    (void)state;
    struct fq_daemon d;
    memset(&d, 0, sizeof(d));
    struct fq_api *a = fq_api_new(&d);
    char name[32];
    uint64_t rev = 0;
    int64_t ta = fq_daemon_now(&d);
    for (int i = 0; i < 400; i++) { /* a burst */
        snprintf(name, sizeof(name), "old-%d", i);
        feed_one(a, ++rev, name);
    }
    int64_t tb = fq_daemon_now(&d); /* the burst was fed in [ta, tb] */
    while (fq_daemon_now(&d) <= tb)
        ; /* the clock's next millisecond, so that what follows is newer */
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "new-%d", i);
        feed_one(a, ++rev, name);
    }
    /* Not older than 75 s yet: nothing goes, however often it is tidied. */
    assert_int_equal(fq_api_ring_expire(a, ta), 0);
    assert_int_equal(fq_api_ring_expire(a, ta + 75 * 1000), 0);
    /* Past the burst's age: it goes, oldest first; the newer 100 stay. */
    assert_int_equal(fq_api_ring_expire(a, tb + 75 * 1000 + 1), 400);
    assert_int_equal(fq_api_ring_expire(a, tb + 75 * 1000 + 1), 0);
    /* Then the rest, and an empty history stays empty. */
    assert_int_equal(fq_api_ring_expire(a, fq_daemon_now(&d) + 76 * 1000), 100);
    assert_int_equal(fq_api_ring_expire(a, fq_daemon_now(&d) + 200 * 1000), 0);
    /* New changes are kept again. */
    feed_one(a, ++rev, "newest");
    assert_int_equal(fq_api_ring_expire(a, fq_daemon_now(&d)), 0);
    fq_api_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ages_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
