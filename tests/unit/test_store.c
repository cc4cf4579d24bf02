/*
 * test_store.c - flexqd's SQLite store (store.c): group commits of change
 * logs, reload, last-write-wins within a commit, deletes, the Event
 * history, reopening (schema kept), thousands of objects created, updated,
 * deleted and re-created across reopenings (the key -> row index),
 * tidying (the history of deleted Events dropped, live ones kept), the
 * two-step write and sync the daemon uses, and
 * `--check`'s verdicts, including a ClusterQueue whose recorded usage does
 * not match its admitted workloads.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "flexq/alloc.h"
#include "flexq/objstore.h"
#include "store.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/flexq-test-store-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct fq_value *json(const char *s)
{
    struct fq_value *v = NULL;
    struct fq_err err = {0};
    if (fq_json_parse(s, strlen(s), "t", NULL, &v, &err))
        fail_msg("fixture: %s", err.msg);
    return v;
}

/* fq_changes_free frees the array too, so tests hand it a heap copy. */
static struct fq_change *heap(const struct fq_change *c, size_t n)
{
    struct fq_change *h = fq_xcalloc(n, sizeof(*h));
    memcpy(h, c, n * sizeof(*h));
    return h;
}

static struct fq_change change(uint64_t rev, enum fq_change_type t,
                               enum fq_kind k, const char *ns, const char *name,
                               const char *obj)
{
    struct fq_change c = {rev,
                          t,
                          k,
                          fq_xstrdup(ns),
                          fq_xstrdup(name),
                          obj ? json(obj) : NULL,
                          false,
                          NULL,
                          0,
                          0,
                          NULL,
                          0};
    return c;
}

struct loaded {
    char names[16][64];
    char bodies[16][512];
    int n;
};

static int collect(void *ctx, enum fq_kind kind, struct fq_value *obj)
{
    struct loaded *l = ctx;
    (void)kind;
    if (l->n < 16) {
        snprintf(l->names[l->n], 64, "%s",
                 fq_value_path_str(obj, "metadata.name", ""));
        char *s = fq_json_dumps(obj, FQ_JSON_COMPACT);
        snprintf(l->bodies[l->n], 512, "%s", s);
        free(s);
        l->n++;
    }
    fq_value_free(obj);
    return 0;
}

static void test_commit_and_load(void **state)
{
    (void)state;
    struct fq_store *s = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_FULL, &s, &err), 0);
    struct fq_change c[5];
    c[0] = change(1, FQ_CHANGE_ADDED, FQ_KIND_CONFIGMAP, "default", "a",
                  "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                  "{\"name\":\"a\",\"namespace\":\"default\"},\"data\":{\"v\":"
                  "\"1\"}}");
    c[1] = change(2, FQ_CHANGE_MODIFIED, FQ_KIND_CONFIGMAP, "default", "a",
                  "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                  "{\"name\":\"a\",\"namespace\":\"default\"},\"data\":{\"v\":"
                  "\"2\"}}");
    c[2] = change(3, FQ_CHANGE_ADDED, FQ_KIND_RESOURCEFLAVOR, "", "f",
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
                  "\"ResourceFlavor\",\"metadata\":{\"name\":\"f\"}}");
    c[3] = change(4, FQ_CHANGE_ADDED, FQ_KIND_CONFIGMAP, "default", "gone",
                  "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                  "{\"name\":\"gone\",\"namespace\":\"default\"}}");
    c[4] = change(5, FQ_CHANGE_DELETED, FQ_KIND_CONFIGMAP, "default", "gone",
                  "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                  "{\"name\":\"gone\",\"namespace\":\"default\"}}");
    struct fq_change *hc = heap(c, 5);
    assert_int_equal(fq_store_commit(s, hc, 5, &err), 0);
    uint64_t commits, rows;
    fq_store_stats(s, &commits, &rows);
    assert_int_equal(commits, 1);
    fq_changes_free(hc, 5);
    assert_int_equal(fq_store_commit(s, NULL, 0, &err), 0);
    fq_store_close(s);

    /* Reopen: the schema is there, the last state of each object too. */
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_NORMAL, &s, &err), 0);
    struct loaded l = {0};
    assert_int_equal(fq_store_load(s, collect, &l, &err), 0);
    /* Kind order: ResourceFlavor comes before ConfigMap in kinds.h. */
    assert_int_equal(l.n, 2);
    assert_string_equal(l.names[0], "f");
    assert_string_equal(l.names[1], "a");
    assert_non_null(strstr(l.bodies[1], "\"v\":\"2\""));
    fq_store_close(s);

    struct fq_buf report = FQ_BUF_INIT;
    assert_int_equal(fq_store_check(dir, &report, &err), 0);
    assert_non_null(strstr(fq_buf_str(&report), "configmaps: 1"));
    assert_non_null(strstr(fq_buf_str(&report), "ok: 0 problem(s)"));
    fq_buf_release(&report);
}

static void test_events_kept(void **state)
{
    (void)state;
    struct fq_store *s = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_FULL, &s, &err), 0);
    const char *ev = "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":"
                     "{\"name\":\"e1\",\"namespace\":\"default\"},"
                     "\"reason\":\"QuotaReserved\"}";
    struct fq_change c[2] = {
        change(1, FQ_CHANGE_ADDED, FQ_KIND_EVENT, "default", "e1", ev),
        change(2, FQ_CHANGE_DELETED, FQ_KIND_EVENT, "default", "e1", ev),
    };
    struct fq_change *hc = heap(c, 2);
    assert_int_equal(fq_store_commit(s, hc, 2, &err), 0);
    fq_changes_free(hc, 2);
    uint64_t commits, rows;
    fq_store_stats(s, &commits, &rows);
    assert_true(rows >= 2); /* the history row and the delete */
    struct loaded l = {0};
    assert_int_equal(fq_store_load(s, collect, &l, &err), 0);
    assert_int_equal(l.n, 0); /* the Event object is gone ... */
    fq_store_close(s);
    struct fq_buf report = FQ_BUF_INIT;
    assert_int_equal(fq_store_check(dir, &report, &err), 0);
    fq_buf_release(&report);
}

static void test_tidy(void **state)
{
    (void)state;
    struct fq_store *s = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_FULL, &s, &err), 0);
    assert_int_equal(fq_store_tidy(s, &err), 0); /* nothing to do */
    const char *e1 = "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":"
                     "{\"name\":\"e1\",\"namespace\":\"default\"},\"count\":1}";
    const char *e1b =
        "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":"
        "{\"name\":\"e1\",\"namespace\":\"default\"},\"count\":2}";
    const char *e2 = "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":"
                     "{\"name\":\"e2\",\"namespace\":\"default\"},\"count\":1}";
    struct fq_change c1[3] = {
        change(1, FQ_CHANGE_ADDED, FQ_KIND_EVENT, "default", "e1", e1),
        change(2, FQ_CHANGE_MODIFIED, FQ_KIND_EVENT, "default", "e1", e1b),
        change(3, FQ_CHANGE_ADDED, FQ_KIND_EVENT, "default", "e2", e2),
    };
    struct fq_change *hc = heap(c1, 3);
    assert_int_equal(fq_store_commit(s, hc, 3, &err), 0);
    fq_changes_free(hc, 3);
    /* No Event deleted yet: the history stays whole. */
    assert_int_equal(fq_store_tidy(s, &err), 0);
    struct fq_change c2[1] = {
        change(4, FQ_CHANGE_DELETED, FQ_KIND_EVENT, "default", "e2", e2),
    };
    hc = heap(c2, 1);
    assert_int_equal(fq_store_commit(s, hc, 1, &err), 0);
    fq_changes_free(hc, 1);
    /* e2's one history row goes; e1's two versions stay. */
    assert_int_equal(fq_store_tidy(s, &err), 1);
    assert_int_equal(fq_store_tidy(s, &err), 0);
    struct loaded l = {0};
    assert_int_equal(fq_store_load(s, collect, &l, &err), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.names[0], "e1");
    fq_store_close(s);
    struct fq_buf report = FQ_BUF_INIT;
    assert_int_equal(fq_store_check(dir, &report, &err), 0);
    assert_non_null(strstr(fq_buf_str(&report), "ok: 0 problem(s)"));
    fq_buf_release(&report);
}

static const char *cq_with(const char *total)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
             "\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},\"status\":{"
             "\"flavorsReservation\":[{\"name\":\"f\",\"resources\":[{"
             "\"name\":\"cpu\",\"total\":\"%s\"}]}]}}",
             total);
    return buf;
}

static const char *const WL =
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
    "\"metadata\":{\"name\":\"w\",\"namespace\":\"default\"},\"status\":{"
    "\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\"}],"
    "\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{"
    "\"name\":\"main\",\"flavors\":{\"cpu\":\"f\"},\"resourceUsage\":{"
    "\"cpu\":\"1500m\"},\"count\":1}]}}}";

static void test_check_quota(void **state)
{
    (void)state;
    struct fq_store *s = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_FULL, &s, &err), 0);
    struct fq_change c[2] = {
        change(1, FQ_CHANGE_ADDED, FQ_KIND_CLUSTERQUEUE, "", "cq",
               cq_with("1500m")),
        change(2, FQ_CHANGE_ADDED, FQ_KIND_WORKLOAD, "default", "w", WL),
    };
    struct fq_change *hc = heap(c, 2);
    assert_int_equal(fq_store_commit(s, hc, 2, &err), 0);
    fq_changes_free(hc, 2);
    struct fq_buf report = FQ_BUF_INIT;
    assert_int_equal(fq_store_check(dir, &report, &err), 0);
    fq_buf_reset(&report);

    /* Counted twice: the ClusterQueue says 3 cpu for one 1.5 cpu workload. */
    struct fq_change c2[1] = {change(
        3, FQ_CHANGE_MODIFIED, FQ_KIND_CLUSTERQUEUE, "", "cq", cq_with("3"))};
    hc = heap(c2, 1);
    assert_int_equal(fq_store_commit(s, hc, 1, &err), 0);
    fq_changes_free(hc, 1);
    assert_int_equal(fq_store_check(dir, &report, &err), FQ_EINVAL);
    assert_non_null(strstr(fq_buf_str(&report), "f/cpu reserved 3000"));
    fq_buf_reset(&report);

    /* A workload holding quota in a ClusterQueue that does not exist. */
    struct fq_change c3[1] = {
        change(4, FQ_CHANGE_DELETED, FQ_KIND_CLUSTERQUEUE, "", "cq", NULL)};
    hc = heap(c3, 1);
    assert_int_equal(fq_store_commit(s, hc, 1, &err), 0);
    fq_changes_free(hc, 1);
    assert_int_equal(fq_store_check(dir, &report, &err), FQ_EINVAL);
    assert_non_null(strstr(fq_buf_str(&report), "missing clusterqueue"));
    fq_buf_release(&report);
    fq_store_close(s);
}

static int count_only(void *ctx, enum fq_kind kind, struct fq_value *obj)
{
    size_t *n = ctx;
    (void)kind;
    const char *v = fq_value_path_str(obj, "data.v", "");
    const char *name = fq_value_path_str(obj, "metadata.name", "");
    /* Every loaded object carries its last value: "v<i>-<round>". */
    int i = -1, round = -1;
    if (sscanf(name, "cm-%d", &i) != 1 || sscanf(v, "v%*d-%d", &round) != 1)
        fail_msg("unexpected object %s v=%s", name, v);
    if (i % 3 == 0 && round != 2)
        fail_msg("%s: re-created object should be round 2, is %d", name, round);
    if (i % 3 != 0 && round != 1)
        fail_msg("%s: updated object should be round 1, is %d", name, round);
    n[0]++;
    fq_value_free(obj);
    return 0;
}

static struct fq_change cm_change(uint64_t rev, enum fq_change_type t, int i,
                                  int round)
{
    char name[32], body[256];
    snprintf(name, sizeof(name), "cm-%d", i);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
             "\"name\":\"%s\",\"namespace\":\"default\"},\"data\":{\"v\":"
             "\"v%d-%d\"}}",
             name, i, round);
    return change(rev, t, FQ_KIND_CONFIGMAP, "default", name, body);
}

/* count_only for after round 3 of test_many_objects. */
static int count_round3(void *ctx, enum fq_kind kind, struct fq_value *obj)
{
    size_t *n = ctx;
    (void)kind;
    const char *v = fq_value_path_str(obj, "data.v", "");
    const char *name = fq_value_path_str(obj, "metadata.name", "");
    int i = -1, round = -1;
    if (sscanf(name, "cm-%d", &i) != 1 || sscanf(v, "v%*d-%d", &round) != 1)
        fail_msg("unexpected object %s v=%s", name, v);
    if (round != (i % 5 == 0 ? 4 : 3))
        fail_msg("%s: round %d after round 3", name, round);
    n[0]++;
    fq_value_free(obj);
    return 0;
}

/* Thousands of creates, updates, deletes and re-creates over several
 * commits and reopenings: the store's key -> row index (grown, shifted on
 * delete, rebuilt at open) keeps one row per object with its last state. */
static void test_many_objects(void **state)
{
    (void)state;

    enum {
        N = 3000
    };
    struct fq_store *s = NULL;
    struct fq_err err = {0};
    uint64_t rev = 1;
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_NORMAL, &s, &err), 0);
    /* round 0: create all, 500 per commit */
    for (int base = 0; base < N; base += 500) {
        struct fq_change *hc = fq_xcalloc(500, sizeof(*hc));
        for (int i = 0; i < 500; i++)
            hc[i] = cm_change(rev++, FQ_CHANGE_ADDED, base + i, 0);
        assert_int_equal(fq_store_commit(s, hc, 500, &err), 0);
        fq_changes_free(hc, 500);
    }
    fq_store_close(s);
    /* round 1, after a reopen: update all, delete every third */
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_NORMAL, &s, &err), 0);
    for (int base = 0; base < N; base += 300) {
        struct fq_change *hc = fq_xcalloc(600, sizeof(*hc));
        size_t n = 0;
        for (int i = base; i < base + 300; i++) {
            hc[n++] = cm_change(rev++, FQ_CHANGE_MODIFIED, i, 1);
            if (i % 3 == 0)
                hc[n++] = cm_change(rev++, FQ_CHANGE_DELETED, i, 1);
        }
        assert_int_equal(fq_store_commit(s, hc, n, &err), 0);
        fq_changes_free(hc, n);
    }
    /* round 2, same session: re-create the deleted ones */
    struct fq_change *hc = fq_xcalloc(N, sizeof(*hc));
    size_t n = 0;
    for (int i = 0; i < N; i += 3)
        hc[n++] = cm_change(rev++, FQ_CHANGE_ADDED, i, 2);
    assert_int_equal(fq_store_commit(s, hc, n, &err), 0);
    fq_changes_free(hc, n);
    fq_store_close(s);

    /* round 3, after a reopen and a load (which reads the key index with
     * the objects): update all, delete every fifth and create it again
     * in the next commit; no row may be written twice or lost */
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_NORMAL, &s, &err), 0);
    size_t loaded = 0;
    assert_int_equal(fq_store_load(s, count_only, &loaded, &err), 0);
    assert_int_equal(loaded, N);
    hc = fq_xcalloc(N + N / 5, sizeof(*hc));
    n = 0;
    for (int i = 0; i < N; i++) {
        hc[n++] = cm_change(rev++, FQ_CHANGE_MODIFIED, i, 3);
        if (i % 5 == 0)
            hc[n++] = cm_change(rev++, FQ_CHANGE_DELETED, i, 3);
    }
    assert_int_equal(fq_store_commit(s, hc, n, &err), 0);
    fq_changes_free(hc, n);
    hc = fq_xcalloc(N / 5, sizeof(*hc));
    n = 0;
    for (int i = 0; i < N; i += 5)
        hc[n++] = cm_change(rev++, FQ_CHANGE_ADDED, i, 4);
    assert_int_equal(fq_store_commit(s, hc, n, &err), 0);
    fq_changes_free(hc, n);
    fq_store_close(s);

    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_NORMAL, &s, &err), 0);
    loaded = 0;
    assert_int_equal(fq_store_load(s, count_round3, &loaded, &err), 0);
    assert_int_equal(loaded, N);
    fq_store_close(s);
    struct fq_buf report = FQ_BUF_INIT;
    assert_int_equal(fq_store_check(dir, &report, &err), 0);
    assert_non_null(strstr(fq_buf_str(&report), "configmaps: 3000"));
    fq_buf_release(&report);
}

/* The daemon's two-step commit: fq_store_write returns with the sync
 * started; the notify fd says when it ended; fq_store_synced then says
 * none runs. With NORMAL nothing runs and there is no fd. */
static void test_write_then_sync(void **state)
{
    (void)state;
    struct fq_store *s = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_FULL, &s, &err), 0);
    int fd = fq_store_notify_fd(s);
    assert_true(fd >= 0);
    assert_false(fq_store_syncing(s));
    for (int round = 0; round < 3; round++) {
        struct fq_change *hc = fq_xcalloc(1, sizeof(*hc));
        hc[0] = cm_change((uint64_t)round + 1, FQ_CHANGE_ADDED, round, 0);
        assert_int_equal(fq_store_write(s, hc, 1, &err), 0);
        fq_changes_free(hc, 1);
        /* Wait for the event "sync ended", with a deadline. */
        struct pollfd p = {fd, POLLIN, 0};
        assert_int_equal(poll(&p, 1, 10000), 1);
        assert_int_equal(fq_store_synced(s, &err), 0);
        assert_false(fq_store_syncing(s));
    }
    /* A direct second write while a sync may run waits for it. */
    struct fq_change *hc = fq_xcalloc(2, sizeof(*hc));
    hc[0] = cm_change(10, FQ_CHANGE_ADDED, 10, 0);
    hc[1] = cm_change(11, FQ_CHANGE_ADDED, 11, 0);
    assert_int_equal(fq_store_write(s, hc, 1, &err), 0);
    assert_int_equal(fq_store_write(s, hc + 1, 1, &err), 0);
    fq_changes_free(hc, 2);
    assert_int_equal(fq_store_wait(s, &err), 0);
    assert_false(fq_store_syncing(s));
    fq_store_close(s);

    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_NORMAL, &s, &err), 0);
    assert_int_equal(fq_store_notify_fd(s), -1);
    struct fq_change *hc2 = fq_xcalloc(1, sizeof(*hc2));
    hc2[0] = cm_change(12, FQ_CHANGE_MODIFIED, 0, 1);
    assert_int_equal(fq_store_write(s, hc2, 1, &err), 0);
    fq_changes_free(hc2, 1);
    assert_false(fq_store_syncing(s));
    assert_int_equal(fq_store_synced(s, &err), 0);
    struct loaded l = {0};
    assert_int_equal(fq_store_load(s, collect, &l, &err), 0);
    assert_int_equal(l.n, 5);
    fq_store_close(s);
}

static void test_one_daemon_per_dir(void **state)
{
    (void)state;
    struct fq_store *s = NULL, *s2 = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_FULL, &s, &err), 0);
    /* flock locks belong to the open file description, so a second open
     * in the same process is refused like another process would be. */
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_FULL, &s2, &err),
                     FQ_EBUSY);
    assert_non_null(strstr(err.msg, "another flexqd"));
    fq_store_close(s);
    assert_int_equal(fq_store_open(dir, FQ_STORE_SYNC_FULL, &s2, &err), 0);
    fq_store_close(s2);
}

static void test_open_errors(void **state)
{
    (void)state;
    struct fq_store *s = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_store_open("/proc/flexq-cannot-be-here",
                                   FQ_STORE_SYNC_FULL, &s, &err),
                     FQ_EIO);
    assert_non_null(strstr(err.msg, "cannot"));
    struct fq_buf report = FQ_BUF_INIT;
    assert_int_equal(fq_store_check("/nonexistent/flexq", &report, &err),
                     FQ_EIO);
    fq_buf_release(&report);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_commit_and_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tidy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_then_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_daemon_per_dir, setup,
                                        teardown),
        cmocka_unit_test(test_open_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
