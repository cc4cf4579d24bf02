/*
 * test_cliprint.c - the CLI's printing and parsing helpers: kubectl's age
 * format (print.c), Go durations for --timeout (cmdutil.c), object names,
 * condition lookups, API paths (client.c) and the Workload table's columns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client.h"
#include "cmdutil.h"
#include "flexq/engine.h"
#include "print.h"

static void test_duration(void **state)
{
    (void)state;

    static const struct {
        int64_t s;
        const char *want;
    } cases[] = {
        {0, "0s"},
        {5, "5s"},
        {119, "119s"},
        {120, "2m"},
        {150, "2m30s"},
        {600, "10m"},
        {3599, "59m"},
        {3600 * 2 + 60, "121m"},
        {3600 * 3 + 60, "3h1m"},
        {3600 * 9, "9h"},
        {86400 * 2, "2d"},
        {86400 * 3 + 3600 * 5, "3d5h"},
        {86400 * 100, "100d"},
        {86400 * 365 * 3, "3y"},
        {86400 * (365 * 3 + 10), "3y10d"},
    };

    char buf[32];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fq_print_duration(cases[i].s * 1000, buf, sizeof(buf));
        if (strcmp(buf, cases[i].want))
            fail_msg("%lld s: got %s, want %s", (long long)cases[i].s, buf,
                     cases[i].want);
    }
    fq_print_duration(-5000, buf, sizeof(buf));
    assert_string_equal(buf, "<invalid>");
    fq_print_age("2026-01-01T00:00:00Z", 1767225600000 + 61000, buf,
                 sizeof(buf));
    assert_string_equal(buf, "61s");
    fq_print_age("not a time", 0, buf, sizeof(buf));
    assert_string_equal(buf, "<unknown>");
}

static void test_cmd_duration(void **state)
{
    (void)state;
    assert_int_equal(fq_cmd_duration("30s"), 30000);
    assert_int_equal(fq_cmd_duration("5m"), 300000);
    assert_int_equal(fq_cmd_duration("1h30m"), 5400000);
    assert_int_equal(fq_cmd_duration("500ms"), 500);
    assert_int_equal(fq_cmd_duration("2"), 2000);
    assert_int_equal(fq_cmd_duration("0"), 0);
    assert_int_equal(fq_cmd_duration("1.5s"), 1500);
    assert_int_equal(fq_cmd_duration("5x"), -1);
    assert_int_equal(fq_cmd_duration(""), -1);
    assert_int_equal(fq_cmd_duration("-3s"), -1);
}

static void test_names_and_paths(void **state)
{
    (void)state;
    struct fq_buf b = FQ_BUF_INIT;
    fq_print_name(FQ_KIND_WORKLOAD, "w1", &b);
    assert_string_equal(fq_buf_str(&b), "workload.kueue.x-k8s.io/w1");
    fq_buf_reset(&b);
    fq_print_name(FQ_KIND_CONFIGMAP, "c", &b);
    assert_string_equal(fq_buf_str(&b), "configmap/c");
    fq_buf_release(&b);
    char *p = fq_client_path(FQ_KIND_WORKLOAD, "default", "w1", "status", NULL);
    assert_string_equal(p, "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/"
                           "workloads/w1/status");
    free(p);
    p = fq_client_path(FQ_KIND_CLUSTERQUEUE, "default", NULL, NULL, "a=b");
    assert_string_equal(p, "/apis/kueue.x-k8s.io/v1beta1/clusterqueues?a=b");
    free(p);
    p = fq_client_path(FQ_KIND_POD, NULL, NULL, NULL, NULL);
    assert_string_equal(p, "/api/v1/pods");
    free(p);
    p = fq_client_escape("a=b,c in (d)");
    assert_string_equal(p, "a%3Db%2Cc%20in%20%28d%29");
    free(p);
}

static void test_workload_table(void **state)
{
    (void)state;
    const char *js =
        "{\"metadata\":{\"name\":\"w1\",\"namespace\":\"default\","
        "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{"
        "\"queueName\":\"user-queue\"},\"status\":{\"admission\":{"
        "\"clusterQueue\":\"cluster-queue\"},\"conditions\":[{\"type\":"
        "\"QuotaReserved\",\"status\":\"True\"},{\"type\":\"Admitted\","
        "\"status\":\"True\"}]}}";
    struct fq_value *o = NULL;
    assert_int_equal(fq_json_parse(js, strlen(js), "t", NULL, &o, NULL), 0);
    assert_string_equal(fq_print_condition(o, "Admitted"), "True");
    assert_string_equal(fq_print_condition(o, "Finished"), "");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    const struct fq_value *objs[1] = {o};
    fq_print_table(FQ_KIND_WORKLOAD, objs, 1, 0, "default",
                   1767225600000 + 300000, f);
    fclose(f);
    assert_string_equal(text,
                        "NAME      QUEUE        RESERVED IN     ADMITTED   "
                        "FINISHED   AGE\n"
                        "w1        user-queue   cluster-queue   True       "
                        "           5m\n");
    free(text);
    fq_value_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_cmd_duration),
        cmocka_unit_test(test_names_and_paths),
        cmocka_unit_test(test_workload_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
