/*
 * test_engine.c - the object store and the engine's settle loop.
 *
 * The store: metadata the server owns, conflicts, unchanged updates, the
 * change log, listing order. The engine: a toy controller that copies each
 * ConfigMap's data.value into a second ConfigMap shows that changes are
 * dispatched to watchers, that reactions settle within one run, that timers
 * fire at their time and not before, and that two engines with the same
 * seed produce the same uids.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/objstore.h"
#include "flexq/timefmt.h"
#include "flexq/value.h"

static struct fq_value *configmap(const char *ns, const char *name,
                                  const char *value)
{
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("v1"));
    fq_map_set(o, "kind", fq_value_str("ConfigMap"));
    struct fq_value *md = fq_map_ensure_map(o, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    if (ns)
        fq_map_set(md, "namespace", fq_value_str(ns));
    fq_map_set(fq_map_ensure_map(o, "data"), "value", fq_value_str(value));
    return o;
}

static void test_store_metadata_and_conflict(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    const struct fq_object *o = NULL;
    assert_int_equal(fq_objstore_create(s, configmap(NULL, "a", "1"),
                                        1764431040000, "uid-1", &o, NULL),
                     0);
    assert_string_equal(o->ns, "default");
    assert_string_equal(fq_value_path_str(o->obj, "metadata.uid", ""), "uid-1");
    assert_string_equal(
        fq_value_path_str(o->obj, "metadata.creationTimestamp", ""),
        "2025-11-29T15:44:00Z");
    assert_string_equal(
        fq_value_path_str(o->obj, "metadata.resourceVersion", ""), "1");

    struct fq_err err;
    assert_int_equal(fq_objstore_create(s, configmap("default", "a", "2"), 0,
                                        "uid-2", NULL, &err),
                     FQ_EEXIST);

    /* A stale resourceVersion is a conflict and changes nothing. */
    struct fq_value *stale = configmap("default", "a", "3");
    fq_value_set_path(stale, "metadata.resourceVersion", fq_value_str("7"));
    assert_int_equal(fq_objstore_update(s, stale, false, NULL, NULL, &err),
                     FQ_ECONFLICT);
    o = fq_objstore_get(s, FQ_KIND_CONFIGMAP, "default", "a");
    assert_string_equal(fq_value_path_str(o->obj, "data.value", ""), "1");

    /* Same content: no new revision. */
    bool changed = true;
    assert_int_equal(fq_objstore_update(s, configmap("default", "a", "1"),
                                        false, &changed, NULL, NULL),
                     0);
    assert_false(changed);
    assert_int_equal(fq_objstore_revision(s), 1);

    assert_int_equal(fq_objstore_update(s, configmap("default", "a", "4"),
                                        false, &changed, &o, NULL),
                     0);
    assert_true(changed);
    assert_int_equal(o->rv, 2);
    assert_string_equal(fq_value_path_str(o->obj, "metadata.uid", ""), "uid-1");

    struct fq_change *ch;
    size_t n = fq_objstore_take_changes(s, &ch);
    assert_int_equal(n, 2);
    assert_int_equal(ch[0].type, FQ_CHANGE_ADDED);
    assert_int_equal(ch[1].type, FQ_CHANGE_MODIFIED);
    assert_string_equal(fq_value_path_str(ch[1].obj, "data.value", ""), "4");
    fq_changes_free(ch, n);

    assert_int_equal(
        fq_objstore_delete(s, FQ_KIND_CONFIGMAP, "default", "a", NULL), 0);
    assert_null(fq_objstore_get(s, FQ_KIND_CONFIGMAP, "default", "a"));
    assert_int_equal(
        fq_objstore_delete(s, FQ_KIND_CONFIGMAP, "default", "a", &err),
        FQ_ENOTFOUND);
    fq_objstore_free(s);
}

static void test_store_restore_keeps_revisions(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    struct fq_value *o = configmap("default", "kept", "1");
    fq_value_set_path(o, "metadata.resourceVersion", fq_value_str("41"));
    fq_value_set_path(o, "metadata.uid", fq_value_str("uid-kept"));
    const struct fq_object *got = NULL;
    assert_int_equal(fq_objstore_restore(s, o, &got, NULL), 0);
    assert_int_equal(got->rv, 41);
    assert_string_equal(
        fq_value_path_str(got->obj, "metadata.resourceVersion", ""), "41");
    assert_string_equal(fq_value_path_str(got->obj, "metadata.uid", ""),
                        "uid-kept");
    fq_objstore_set_revision(s, 50);
    assert_int_equal(fq_objstore_update(s, configmap("default", "kept", "2"),
                                        false, NULL, &got, NULL),
                     0);
    assert_int_equal(got->rv, 51);
    fq_objstore_free(s);
}

static void test_store_list_sorted(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    const char *names[] = {"c", "a", "b"};
    for (int i = 0; i < 3; i++)
        fq_objstore_create(s, configmap("ns2", names[i], "x"), 0, NULL, NULL,
                           NULL);
    fq_objstore_create(s, configmap("ns1", "z", "x"), 0, NULL, NULL, NULL);
    /* Enough objects to make the table grow. */
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "many-%04d", i);
        fq_objstore_create(s, configmap("ns3", name, "x"), 0, NULL, NULL, NULL);
    }
    const struct fq_object **v;
    size_t n = fq_objstore_list(s, FQ_KIND_CONFIGMAP, "ns2", &v);
    assert_int_equal(n, 3);
    assert_string_equal(v[0]->name, "a");
    assert_string_equal(v[2]->name, "c");
    free(v);
    n = fq_objstore_list(s, FQ_KIND_CONFIGMAP, NULL, &v);
    assert_int_equal(n, 1004);
    assert_string_equal(v[0]->ns, "ns1");
    free(v);
    assert_non_null(fq_objstore_get(s, FQ_KIND_CONFIGMAP, "ns3", "many-0999"));
    fq_objstore_free(s);
}

/* The kind's array stays sorted through creates and deletes in any order
 * (listing copies it without sorting). */
static void test_store_list_sorted_after_deletes(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    char name[32];
    /* Names in a scrambled order, every third one deleted again. */
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "o-%03d", (i * 97) % 300);
        fq_objstore_create(s, configmap(i % 2 ? "b" : "a", name, "x"), 0, NULL,
                           NULL, NULL);
        if (i % 3 == 0)
            assert_int_equal(fq_objstore_delete(s, FQ_KIND_CONFIGMAP,
                                                i % 2 ? "b" : "a", name, NULL),
                             0);
    }
    const struct fq_object **v;
    size_t n = fq_objstore_list(s, FQ_KIND_CONFIGMAP, NULL, &v);
    assert_int_equal(n, 200);
    for (size_t i = 1; i < n; i++) {
        int c = strcmp(v[i - 1]->ns, v[i]->ns);
        assert_true(c < 0 ||
                    (c == 0 && strcmp(v[i - 1]->name, v[i]->name) < 0));
    }
    free(v);
    n = fq_objstore_list(s, FQ_KIND_CONFIGMAP, "b", &v);
    assert_int_equal(n, 100);
    assert_string_equal(v[0]->ns, "b");
    free(v);
    /* Every remaining object is still found, and deleting them all works. */
    n = fq_objstore_list(s, FQ_KIND_CONFIGMAP, NULL, &v);
    for (size_t i = 0; i < n; i++) {
        char ns[8], nm[32];
        snprintf(ns, sizeof(ns), "%s", v[i]->ns);
        snprintf(nm, sizeof(nm), "%s", v[i]->name);
        v[i] = NULL;
        assert_int_equal(fq_objstore_delete(s, FQ_KIND_CONFIGMAP, ns, nm, NULL),
                         0);
    }
    free(v);
    assert_int_equal(fq_objstore_count(s, FQ_KIND_CONFIGMAP), 0);
    fq_objstore_free(s);
}

/* A log window: an object's changes in it reach the log as one (its
 * last state, ADDED if it was created there); a deletion and the change
 * before it stay; changes before the window are kept; revisions go on. */
static void test_store_log_window(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    bool changed;
    assert_int_equal(
        fq_objstore_create(s, configmap("d", "a", "1"), 0, "u1", NULL, NULL),
        0);
    fq_objstore_log_window(s);
    assert_int_equal(fq_objstore_update(s, configmap("d", "a", "2"), false,
                                        &changed, NULL, NULL),
                     0);
    assert_int_equal(
        fq_objstore_create(s, configmap("d", "b", "1"), 0, "u2", NULL, NULL),
        0);
    fq_objstore_log_window(s); /* nested: the outer one decides */
    assert_int_equal(fq_objstore_update(s, configmap("d", "a", "3"), false,
                                        &changed, NULL, NULL),
                     0);
    fq_objstore_log_window_end(s);
    assert_int_equal(fq_objstore_update(s, configmap("d", "b", "2"), false,
                                        &changed, NULL, NULL),
                     0);
    assert_int_equal(
        fq_objstore_create(s, configmap("d", "c", "1"), 0, "u3", NULL, NULL),
        0);
    assert_int_equal(fq_objstore_update(s, configmap("d", "c", "2"), false,
                                        &changed, NULL, NULL),
                     0);
    assert_int_equal(fq_objstore_delete(s, FQ_KIND_CONFIGMAP, "d", "c", NULL),
                     0);
    assert_int_equal(fq_objstore_update(s, configmap("d", "a", "4"), false,
                                        &changed, NULL, NULL),
                     0);
    fq_objstore_log_window_end(s);
    assert_int_equal(fq_objstore_revision(s), 9);

    struct fq_change *ch;
    size_t n = fq_objstore_take_changes(s, &ch);
    assert_int_equal(n, 5);
    /* before the window */
    assert_int_equal(ch[0].rev, 1);
    assert_int_equal(ch[0].type, FQ_CHANGE_ADDED);
    assert_string_equal(fq_value_path_str(ch[0].obj, "data.value", ""), "1");
    /* b: created and changed in the window, one ADDED in its last state */
    assert_int_equal(ch[1].rev, 5);
    assert_string_equal(ch[1].name, "b");
    assert_int_equal(ch[1].type, FQ_CHANGE_ADDED);
    assert_string_equal(fq_value_path_str(ch[1].obj, "data.value", ""), "2");
    assert_string_equal(
        fq_value_path_str(ch[1].obj, "metadata.resourceVersion", ""), "5");
    /* c: its last state before the deletion, then the deletion */
    assert_int_equal(ch[2].rev, 7);
    assert_int_equal(ch[2].type, FQ_CHANGE_ADDED);
    assert_string_equal(fq_value_path_str(ch[2].obj, "data.value", ""), "2");
    assert_int_equal(ch[3].rev, 8);
    assert_int_equal(ch[3].type, FQ_CHANGE_DELETED);
    /* a: three updates in the window, one MODIFIED, the last */
    assert_int_equal(ch[4].rev, 9);
    assert_int_equal(ch[4].type, FQ_CHANGE_MODIFIED);
    assert_string_equal(ch[4].name, "a");
    assert_string_equal(fq_value_path_str(ch[4].obj, "data.value", ""), "4");
    fq_changes_free(ch, n);

    /* Taking the log inside a window hands out every copy. */
    fq_objstore_log_window(s);
    assert_int_equal(fq_objstore_update(s, configmap("d", "a", "5"), false,
                                        &changed, NULL, NULL),
                     0);
    n = fq_objstore_take_changes(s, &ch);
    assert_int_equal(n, 1);
    assert_string_equal(fq_value_path_str(ch[0].obj, "data.value", ""), "5");
    fq_changes_free(ch, n);
    assert_int_equal(fq_objstore_update(s, configmap("d", "a", "6"), false,
                                        &changed, NULL, NULL),
                     0);
    fq_objstore_log_window_end(s);
    n = fq_objstore_take_changes(s, &ch);
    assert_int_equal(n, 1);
    assert_int_equal(ch[0].type, FQ_CHANGE_MODIFIED);
    assert_string_equal(fq_value_path_str(ch[0].obj, "data.value", ""), "6");
    fq_changes_free(ch, n);
    fq_objstore_free(s);
}

/* A status member write: in place, a new revision only when it changes,
 * logged like any update, the rest of the object kept. */
static void test_store_set_status_key(void **state)
{
    (void)state;
    struct fq_objstore *s = fq_objstore_new();
    const struct fq_object *o = NULL;
    fq_objstore_create(s, configmap("ns", "cm", "v"), 0, NULL, &o, NULL);
    struct fq_change *ch;
    fq_changes_free(ch, fq_objstore_take_changes(s, &ch));
    const struct fq_value *root = o->obj;
    uint64_t rv = o->rv;
    bool changed = false;
    assert_int_equal(fq_objstore_set_status_key(s, FQ_KIND_CONFIGMAP, "ns",
                                                "cm", "cost", fq_value_int(3),
                                                &changed, NULL),
                     0);
    assert_true(changed);
    o = fq_objstore_get(s, FQ_KIND_CONFIGMAP, "ns", "cm");
    assert_ptr_equal(o->obj, root);
    assert_int_equal(o->rv, rv + 1);
    assert_int_equal(fq_value_path_int(o->obj, "status.cost", 0), 3);
    assert_string_equal(fq_value_path_str(o->obj, "data.value", ""), "v");
    char want[32];
    snprintf(want, sizeof(want), "%llu", (unsigned long long)(rv + 1));
    assert_string_equal(
        fq_value_path_str(o->obj, "metadata.resourceVersion", ""), want);
    size_t n = fq_objstore_take_changes(s, &ch);
    assert_int_equal(n, 1);
    assert_int_equal(ch[0].type, FQ_CHANGE_MODIFIED);
    assert_int_equal(fq_value_path_int(ch[0].obj, "status.cost", 0), 3);
    fq_changes_free(ch, n);
    /* The same value again: nothing happens. */
    assert_int_equal(fq_objstore_set_status_key(s, FQ_KIND_CONFIGMAP, "ns",
                                                "cm", "cost", fq_value_int(3),
                                                &changed, NULL),
                     0);
    assert_false(changed);
    assert_int_equal(fq_objstore_get(s, FQ_KIND_CONFIGMAP, "ns", "cm")->rv,
                     rv + 1);
    assert_int_equal(fq_objstore_take_changes(s, &ch), 0);
    free(ch);
    /* A second member is added beside the first. */
    fq_objstore_set_status_key(s, FQ_KIND_CONFIGMAP, "ns", "cm", "other",
                               fq_value_str("x"), NULL, NULL);
    o = fq_objstore_get(s, FQ_KIND_CONFIGMAP, "ns", "cm");
    assert_int_equal(fq_value_path_int(o->obj, "status.cost", 0), 3);
    assert_string_equal(fq_value_path_str(o->obj, "status.other", ""), "x");
    /* The whole status, in place too. */
    struct fq_value *whole = fq_value_map();
    fq_map_set(whole, "phase", fq_value_str("Done"));
    assert_int_equal(
        fq_objstore_set_status(s, FQ_KIND_CONFIGMAP, "ns", "cm", whole, NULL),
        0);
    o = fq_objstore_get(s, FQ_KIND_CONFIGMAP, "ns", "cm");
    assert_ptr_equal(o->obj, root);
    assert_int_equal(o->rv, rv + 3);
    assert_string_equal(fq_value_path_str(o->obj, "status.phase", ""), "Done");
    assert_null(fq_value_path(o->obj, "status.cost"));
    assert_string_equal(fq_value_path_str(o->obj, "data.value", ""), "v");
    struct fq_err err;
    assert_int_equal(fq_objstore_set_status_key(s, FQ_KIND_CONFIGMAP, "ns",
                                                "nope", "cost", fq_value_int(1),
                                                NULL, &err),
                     FQ_ENOTFOUND);
    fq_objstore_free(s);
}

static void test_engine_events_aggregate(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    struct fq_engine *e = fq_engine_new(&cfg);
    assert_int_equal(
        fq_engine_apply(e, configmap(NULL, "cm", "v"), 1000, NULL, NULL, NULL),
        0);
    const struct fq_object *cm =
        fq_objstore_get(fq_engine_store(e), FQ_KIND_CONFIGMAP, "", "cm");
    assert_non_null(cm);
    fq_engine_event(e, cm->obj, "Normal", "Tested", "hello %d", 1);
    fq_engine_event(e, cm->obj, "Normal", "Tested", "hello %d", 1);
    fq_engine_event(e, cm->obj, "Warning", "Other", "bye");
    const struct fq_object **v;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_EVENT, NULL, &v);
    assert_int_equal(n, 2);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += fq_value_path_int(v[i]->obj, "count", 0);
    assert_int_equal(total, 3);
    free(v);
    fq_engine_free(e);
}

static void test_engine_same_seed_same_uids(void **state)
{
    (void)state;
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = 42;
    struct fq_engine *a = fq_engine_new(&cfg), *b = fq_engine_new(&cfg);
    fq_engine_apply(a, configmap(NULL, "x", "1"), 5, NULL, NULL, NULL);
    fq_engine_apply(b, configmap(NULL, "x", "1"), 5, NULL, NULL, NULL);
    const char *ua = fq_value_path_str(
        fq_objstore_get(fq_engine_store(a), FQ_KIND_CONFIGMAP, "", "x")->obj,
        "metadata.uid", "");
    const char *ub = fq_value_path_str(
        fq_objstore_get(fq_engine_store(b), FQ_KIND_CONFIGMAP, "", "x")->obj,
        "metadata.uid", "");
    assert_string_equal(ua, ub);
    assert_int_equal(strlen(ua), 36);
    char s1[8], s2[8];
    fq_engine_rand_suffix(a, s1, 5);
    fq_engine_rand_suffix(b, s2, 5);
    assert_string_equal(s1, s2);
    fq_engine_free(a);
    fq_engine_free(b);
}

static void test_time_format_parse(void **state)
{
    (void)state;
    char buf[40];
    fq_time_format(0, buf, sizeof(buf));
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    fq_time_format(951782400000, buf, sizeof(buf)); /* leap day 2000 */
    assert_string_equal(buf, "2000-02-29T00:00:00Z");
    int64_t ms;
    assert_int_equal(fq_time_parse("2026-11-29T15:44:00Z", &ms), 0);
    fq_time_format(ms, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-29T15:44:00Z");
    assert_int_equal(fq_time_parse("2026-11-29T16:44:00.250+01:00", &ms), 0);
    fq_time_format(ms, buf, sizeof(buf));
    assert_string_equal(buf, "2026-11-29T15:44:00Z");
    assert_int_equal(ms % 1000, 250);
    assert_int_equal(fq_time_parse("2026-13-01T00:00:00Z", &ms), FQ_EINVAL);
    assert_int_equal(fq_time_parse("yesterday", &ms), FQ_EINVAL);
}

/* Run times as users write them (flexq.dev/expected-runtime). */
static void test_duration_parse(void **state)
{
    (void)state;

    static const struct {
        const char *s;
        int64_t ms;
    } ok[] = {{"3600", 3600000}, {"0.5", 500},
              {"90m", 5400000},  {"1h30m", 5400000},
              {"45s", 45000},    {"200ms", 200},
              {"1.5s", 1500},    {"1h2.5m", 3750000},
              {"2m30s", 150000}, {"0", 0}};

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int64_t ms = -1;
        assert_int_equal(fq_duration_parse(ok[i].s, &ms), 0);
        assert_int_equal(ms, ok[i].ms);
    }
    static const char *const bad[] = {
        "",
        "-5",
        "1h30",
        "5x",
        "s",
        ".s",
        "1..2s",
        "h1",
        "999999999999999999999h",
        "876000000h",
        "1111111111111111111111111111111111111111111111111111111111111111111"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ms = 7;
        assert_int_equal(fq_duration_parse(bad[i], &ms), FQ_EINVAL);
        assert_int_equal(ms, 7);
    }
    int64_t ms = 7;
    assert_int_equal(fq_duration_parse(NULL, &ms), FQ_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_metadata_and_conflict),
        cmocka_unit_test(test_store_restore_keeps_revisions),
        cmocka_unit_test(test_store_list_sorted),
        cmocka_unit_test(test_store_list_sorted_after_deletes),
        cmocka_unit_test(test_store_set_status_key),
        cmocka_unit_test(test_store_log_window),
        cmocka_unit_test(test_engine_events_aggregate),
        cmocka_unit_test(test_engine_same_seed_same_uids),
        cmocka_unit_test(test_time_format_parse),
        cmocka_unit_test(test_duration_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
