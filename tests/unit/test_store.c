/*
 * test_store.c - flexqd's SQLite store (store.c): group commits of change
 * logs, reload, last-write-wins within a commit, deletes, the Event
 * history, reopening (schema kept), and `--check`'s verdicts, including a
 * ClusterQueue whose recorded usage does not match its admitted workloads.
 */
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
    struct fq_change c = {
        rev, t, k, fq_xstrdup(ns), fq_xstrdup(name), obj ? json(obj) : NULL};
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
        cmocka_unit_test_setup_teardown(test_check_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_daemon_per_dir, setup,
                                        teardown),
        cmocka_unit_test(test_open_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
