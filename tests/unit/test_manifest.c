/*
 * test_manifest.c - reading manifests whole, against fixtures:
 *
 *   tests/fixtures/invalid/NAME.yaml + NAME.err: each manifest must be
 *   refused with exactly the errors in NAME.err (one message per line, the
 *   file named NAME.yaml), and must leave nothing behind;
 *   every .yaml in tests/fixtures/valid: the tutorial's manifests after envsubst
 *   must be accepted, and each document must re-encode to JSON that parses
 *   back to the same tree (every field kept, unknown ones included).
 *
 * Also `flexq validate` itself, called as a function with its output
 * streams, and the envsubst hint for an unexpanded variable.
 *
 * Fixture paths come from FLEXQ_SOURCE_DIR. To add a case: write the
 * manifest, run `flexq validate -f NAME.yaml 2>&1 | sed 's/^error: //'`
 * from the fixture directory, check every line, save it as NAME.err.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "flexq/buf.h"
#include "flexq/manifest.h"
#include "flexq/objects.h"
#include "flexq/value.h"
#include "tmpdir_testlib.h"

#define INVALID_DIR FLEXQ_SOURCE_DIR "/tests/fixtures/invalid"
#define VALID_DIR   FLEXQ_SOURCE_DIR "/tests/fixtures/valid"

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Names of the files in dir ending with suffix, sorted; returns count. */
static size_t list_dir(const char *dir, const char *suffix, char ***out)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!ends_with(de->d_name, suffix))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof(*names));
            assert_non_null(names);
        }
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    *out = names;
    return n;
}

static void free_list(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void test_invalid_fixtures(void **state)
{
    (void)state;
    char **names;
    size_t n = list_dir(INVALID_DIR, ".yaml", &names);
    assert_true(n >= 45);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        char path[1024], errpath[1024];
        snprintf(path, sizeof(path), "%s/%s", INVALID_DIR, names[i]);
        snprintf(errpath, sizeof(errpath), "%s/%.*s.err", INVALID_DIR,
                 (int)(strlen(names[i]) - 5), names[i]);
        size_t len = 0;
        char *text = testlib_slurp(path, &len);
        char *want = testlib_slurp(errpath, NULL);
        assert_non_null(text);
        if (!want) {
            print_error("%s: no .err file beside it\n", names[i]);
            failed++;
            free(text);
            continue;
        }
        size_t wl = strlen(want);
        while (wl && want[wl - 1] == '\n')
            want[--wl] = '\0';

        struct fq_docs docs = {NULL, 0, 0};
        struct fq_errlist errs;
        fq_errlist_init(&errs);
        int rc = fq_manifest_read(text, len, names[i], &docs, &errs);
        struct fq_buf got = FQ_BUF_INIT;
        for (size_t j = 0; j < errs.n; j++)
            fq_buf_printf(&got, "%s%s", j ? "\n" : "", errs.items[j].msg);
        if (rc >= 0 || docs.n != 0 || errs.n == 0 ||
            strcmp(fq_buf_str(&got), want) != 0) {
            print_error("%s: rc %d, %zu docs left\n got:\n%s\n want:\n%s\n",
                        names[i], rc, docs.n, fq_buf_str(&got), want);
            failed++;
        }
        for (size_t j = 0; j < errs.n; j++)
            assert_true(errs.items[j].code < 0);
        fq_buf_release(&got);
        fq_errlist_release(&errs);
        fq_docs_release(&docs);
        free(text);
        free(want);
    }
    free_list(names, n);
    assert_int_equal(failed, 0);
}

/* Every .err has its .yaml (a renamed fixture would otherwise rot). */
static void test_no_orphan_err_files(void **state)
{
    (void)state;
    char **names;
    size_t n = list_dir(INVALID_DIR, ".err", &names);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%.*s.yaml", INVALID_DIR,
                 (int)(strlen(names[i]) - 4), names[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            fail_msg("%s has no manifest beside it", names[i]);
        fclose(f);
    }
    free_list(names, n);
}

static void test_valid_fixtures_round_trip(void **state)
{
    (void)state;
    char **names;
    size_t n = list_dir(VALID_DIR, ".yaml", &names);
    assert_true(n >= 2);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", VALID_DIR, names[i]);
        size_t len = 0;
        char *text = testlib_slurp(path, &len);
        assert_non_null(text);
        struct fq_docs docs = {NULL, 0, 0};
        struct fq_errlist errs;
        fq_errlist_init(&errs);
        int rc = fq_manifest_read(text, len, names[i], &docs, &errs);
        if (rc != 0)
            fail_msg("%s: %s", names[i], errs.n ? errs.items[0].msg : "?");
        assert_int_equal(errs.n, 0);
        assert_true(docs.n >= 1);
        for (size_t j = 0; j < docs.n; j++) {
            char *json = fq_json_dumps(docs.items[j], FQ_JSON_PRETTY);
            struct fq_value *back = NULL;
            struct fq_err e;
            assert_int_equal(fq_json_parse(json, strlen(json), "re-encoded",
                                           NULL, &back, &e),
                             0);
            if (!fq_value_equal(docs.items[j], back))
                fail_msg("%s document %zu changed in the JSON round trip:\n%s",
                         names[i], j, json);
            fq_value_free(back);
            free(json);
        }
        fq_errlist_release(&errs);
        fq_docs_release(&docs);
        free(text);
    }
    free_list(names, n);
}

/* The seed's queue file decodes into the quotas the tutorial describes. */
static void test_seed_queue_decodes(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = testlib_slurp(VALID_DIR "/dws-tpu-queue.yaml", &len);
    assert_non_null(text);
    struct fq_docs docs = {NULL, 0, 0};
    assert_int_equal(fq_manifest_read(text, len, "q.yaml", &docs, NULL), 0);
    assert_int_equal(docs.n, 7);
    struct fq_clusterqueue cq;
    assert_int_equal(fq_clusterqueue_decode(docs.items[3], "q.yaml", &cq, NULL),
                     0);
    assert_string_equal(cq.meta.name, "cluster-queue");
    assert_true(cq.namespace_selector.present);
    assert_int_equal(cq.n_groups, 1);
    assert_int_equal(cq.groups[0].n_flavors, 3);
    assert_string_equal(cq.groups[0].flavors[1].name, "on-demand");
    const struct fq_resource_quota *q =
        fq_groups_quota(cq.groups, cq.n_groups, "on-demand", "memory");
    assert_non_null(q);
    assert_int_equal(q->nominal, 75LL * 1024 * 1024 * 1024);
    q = fq_groups_quota(cq.groups, cq.n_groups, "on-demand", "cpu");
    assert_int_equal(q->nominal, 40000);
    q = fq_groups_quota(cq.groups, cq.n_groups, "dws", "memory");
    assert_int_equal(q->nominal, 1000000000LL * 1024 * 1024 * 1024);
    q = fq_groups_quota(cq.groups, cq.n_groups, "dws", "google.com/tpu");
    assert_int_equal(q->nominal, 1000000000);
    assert_null(
        fq_groups_quota(cq.groups, cq.n_groups, "dws", "nvidia.com/gpu"));
    assert_int_equal(cq.n_checks, 1);
    assert_string_equal(cq.checks[0].name, "dws-prov");
    assert_int_equal(cq.checks[0].n_on_flavors, 1);
    assert_string_equal(cq.checks[0].on_flavors[0], "dws");
    assert_int_equal(cq.queueing_strategy, FQ_BEST_EFFORT_FIFO);
    assert_int_equal(cq.fungibility.when_can_preempt, FQ_FUNG_TRY_NEXT_FLAVOR);
    fq_clusterqueue_release(&cq);
    fq_clusterqueue_release(&cq); /* idempotent */
    fq_docs_release(&docs);
    free(text);
}

static void test_seed_rayjob_decodes(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = testlib_slurp(VALID_DIR "/rayjob-tpu-v6e-dws.yaml", &len);
    assert_non_null(text);
    struct fq_docs docs = {NULL, 0, 0};
    assert_int_equal(fq_manifest_read(text, len, "rj.yaml", &docs, NULL), 0);
    struct fq_rayjob rj;
    assert_int_equal(fq_rayjob_decode(docs.items[0], NULL, &rj, NULL), 0);
    assert_string_equal(rj.meta.name, "rayjob-tpu-v6e-dws-1");
    assert_string_equal(
        fq_kvs_get(&rj.meta.labels, "kueue.x-k8s.io/queue-name"), "user-queue");
    assert_true(rj.shutdown_after_job_finishes);
    assert_string_equal(rj.entrypoint, "python /app/train.py");
    assert_true(rj.cluster.enable_in_tree_autoscaling);
    const struct fq_podspec *head = &rj.cluster.head_template.spec;
    assert_int_equal(head->n_containers, 1);
    assert_int_equal(fq_resources_get(&head->containers[0].requests, "cpu", 0),
                     2000);
    assert_int_equal(head->n_volumes, 1);
    assert_string_equal(head->volumes[0].config_map, "jax-train-script");
    assert_int_equal(rj.cluster.n_workers, 1);
    const struct fq_ray_worker_group *g = &rj.cluster.workers[0];
    assert_string_equal(g->group_name, "tpu-group");
    assert_int_equal(g->num_of_hosts, 4);
    assert_int_equal(fq_ray_worker_pods(g), 4);
    struct fq_resource req[8];
    size_t nreq = fq_podspec_requests(&g->template.spec, req, 8);
    assert_int_equal(nreq, 3);
    int64_t tpu = -1;
    for (size_t i = 0; i < nreq; i++)
        if (strcmp(req[i].name, "google.com/tpu") == 0)
            tpu = req[i].value;
    assert_int_equal(tpu, 4);
    assert_int_equal(g->template.spec.n_tolerations, 2);
    assert_true(g->template.spec.tolerations[1].exists);
    assert_string_equal(fq_kvs_get(&g->template.spec.node_selector,
                                   "cloud.google.com/gke-tpu-topology"),
                        "4x4");
    fq_rayjob_release(&rj);
    fq_docs_release(&docs);
    free(text);
}

/* All-or-nothing: a good document before a bad one is not handed out. */
static void test_all_or_nothing(void **state)
{
    (void)state;
    const char *text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
                       "---\napiVersion: v1\nkind: ConfigMap\n"
                       "metadata: {name: B}\n";
    struct fq_docs docs = {NULL, 0, 0};
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    assert_int_equal(
        fq_manifest_read(text, strlen(text), "m.yaml", &docs, &errs),
        FQ_EINVAL);
    assert_int_equal(docs.n, 0);
    assert_null(docs.items);
    assert_int_equal(errs.n, 1);
    assert_int_equal(errs.items[0].line, 7);
    assert_string_equal(errs.items[0].path, "metadata.name");
    fq_errlist_release(&errs);
}

/* A v1 List (what `flexq get -o yaml` prints) stands for its items. */
static void test_list_expands(void **state)
{
    (void)state;
    const char *text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
                       "---\napiVersion: v1\nkind: List\nitems:\n"
                       "- {apiVersion: v1, kind: Namespace, metadata: {name: "
                       "b}}\n"
                       "- {apiVersion: v1, kind: Namespace, metadata: {name: "
                       "c}}\n";
    struct fq_docs docs = {NULL, 0, 0};
    assert_int_equal(
        fq_manifest_read(text, strlen(text), "l.yaml", &docs, NULL), 0);
    assert_int_equal(docs.n, 3);
    assert_string_equal(fq_value_path_str(docs.items[2], "metadata.name", ""),
                        "c");
    fq_docs_release(&docs);
}

/* YAML's .inf and .nan are numbers JSON cannot carry: refused at their
 * line and column (the stored object would say null), quoted they are
 * strings. Found by fuzz_manifest's JSON round trip. */
static void test_non_finite_refused(void **state)
{
    (void)state;
    const char *text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                       "  name: x\ndata:\n  a: \"1\"\nextra: [1, -.inf]\n"
                       "more: .nan\n";
    struct fq_docs docs = {NULL, 0, 0};
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    assert_int_equal(
        fq_manifest_read(text, strlen(text), "n.yaml", &docs, &errs),
        FQ_EINVAL);
    assert_int_equal(docs.n, 0);
    assert_int_equal(errs.n, 2);
    assert_non_null(strstr(errs.items[0].msg, "-.inf is not a number JSON"));
    assert_int_equal(errs.items[0].line, 7);
    assert_non_null(strstr(errs.items[1].msg, ".nan is not a number JSON"));
    assert_int_equal(errs.items[1].line, 8);
    fq_errlist_release(&errs);
    const char *quoted = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                         "  name: x\nmore: \".nan\"\n";
    assert_int_equal(
        fq_manifest_read(quoted, strlen(quoted), "n.yaml", &docs, NULL), 0);
    assert_int_equal(docs.n, 1);
    fq_docs_release(&docs);
}

static void test_limits_refused(void **state)
{
    (void)state;
    struct fq_limits lim = fq_limits_default();
    lim.max_docs = 2;
    const char *text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
                       "---\napiVersion: v1\nkind: Namespace\n"
                       "metadata: {name: b}\n---\napiVersion: v1\n"
                       "kind: Namespace\nmetadata: {name: c}\n";
    struct fq_docs docs = {NULL, 0, 0};
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    assert_int_equal(fq_manifest_read_limits(text, strlen(text), "n.yaml", &lim,
                                             &docs, &errs),
                     FQ_ELIMIT);
    assert_int_equal(docs.n, 0);
    assert_int_equal(errs.n, 1);
    fq_errlist_release(&errs);
    /* Within the limits the same stream is fine. */
    lim.max_docs = 3;
    assert_int_equal(fq_manifest_read_limits(text, strlen(text), "n.yaml", &lim,
                                             &docs, NULL),
                     0);
    assert_int_equal(docs.n, 3);
    fq_docs_release(&docs);
}

/* Runs `flexq validate ARGS...` (args NULL-terminated); returns the exit
 * status and fills out/err (owned). */
static int run_validate(const char *const *args, int argc, char **out,
                        char **err)
{
    FILE *o = tmpfile(), *e = tmpfile();
    assert_non_null(o);
    assert_non_null(e);
    char **argv = calloc((size_t)argc + 1, sizeof(*argv));
    assert_non_null(argv);
    for (int i = 0; i < argc; i++)
        argv[i] = strdup(args[i]);
    int rc = fq_cli_validate(argc, argv, o, e);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
    FILE *fs[2] = {o, e};
    char **dst[2] = {out, err};
    for (int i = 0; i < 2; i++) {
        long n = ftell(fs[i]);
        rewind(fs[i]);
        *dst[i] = calloc(1, (size_t)n + 1);
        assert_int_equal(fread(*dst[i], 1, (size_t)n, fs[i]), (size_t)n);
        fclose(fs[i]);
    }
    return rc;
}

static void test_validate_command(void **state)
{
    (void)state;
    char *out, *err;
    const char *const ok[] = {
        "validate", "-f", VALID_DIR "/dws-tpu-queue.yaml",
        "--filename=" VALID_DIR "/rayjob-tpu-v6e-dws.yaml", NULL};
    assert_int_equal(run_validate(ok, 4, &out, &err), 0);
    assert_string_equal(out, "ResourceFlavor/default-cpu\n"
                             "ResourceFlavor/on-demand\n"
                             "ResourceFlavor/dws\n"
                             "ClusterQueue/cluster-queue\n"
                             "LocalQueue/user-queue -n default\n"
                             "AdmissionCheck/dws-prov\n"
                             "ProvisioningRequestConfig/dws-config\n"
                             "RayJob/rayjob-tpu-v6e-dws-1\n");
    assert_string_equal(err, "");
    free(out);
    free(err);

    /* A bad file among good ones: exit 1, the good ones still listed. */
    const char *const bad[] = {"validate",
                               "-f",
                               INVALID_DIR "/cq-bad-quantity.yaml",
                               "-f",
                               VALID_DIR "/rayjob-tpu-v6e-dws.yaml",
                               NULL};
    assert_int_equal(run_validate(bad, 5, &out, &err), 1);
    assert_string_equal(out, "RayJob/rayjob-tpu-v6e-dws-1\n");
    assert_non_null(strstr(err, "cq-bad-quantity.yaml:16:29: spec."
                                "resourceGroups[0].flavors[0].resources[2]."
                                "nominalQuota: invalid quantity \"16x\"\n"));
    free(out);
    free(err);

    const char *const missing[] = {"validate", "-f", "/nonexistent/q.yaml",
                                   NULL};
    assert_int_equal(run_validate(missing, 3, &out, &err), 1);
    assert_non_null(strstr(err, "/nonexistent/q.yaml"));
    free(out);
    free(err);

    const char *const none[] = {"validate", NULL};
    assert_int_equal(run_validate(none, 1, &out, &err), 1);
    assert_non_null(strstr(err, "-f FILE"));
    free(out);
    free(err);

    const char *const stray[] = {"validate", "q.yaml", NULL};
    assert_int_equal(run_validate(stray, 2, &out, &err), 1);
    assert_non_null(strstr(err, "unknown argument \"q.yaml\""));
    free(out);
    free(err);
}

static void test_command_table(void **state)
{
    (void)state;
    size_t n;
    const struct fq_cli_cmd *const *cmds = fq_cli_commands(&n);
    assert_true(n >= 2);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(cmds[i]->fn);
        assert_true(strlen(cmds[i]->summary) > 0);
        assert_true(strlen(cmds[i]->usage) > 0); /* `CMD --help` text */
        assert_ptr_equal(fq_cli_find(cmds[i]->name), cmds[i]);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(cmds[i]->name, cmds[j]->name);
    }
    assert_null(fq_cli_find("no-such-command"));
    assert_non_null(fq_cli_find("validate"));
}

/* The unexpanded-variable hint names every variable, and hides the format
 * errors the variable causes. */
static void test_envsubst_hint(void **state)
{
    (void)state;
    const char *text = "apiVersion: kueue.x-k8s.io/v1beta1\n"
                       "kind: LocalQueue\n"
                       "metadata:\n"
                       "  name: q-${TEAM}-${ENV}\n"
                       "  namespace: ${NS}\n"
                       "spec:\n"
                       "  clusterQueue: cq\n";
    struct fq_docs docs = {NULL, 0, 0};
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    assert_int_equal(
        fq_manifest_read(text, strlen(text), "lq.yaml", &docs, &errs),
        FQ_EINVAL);
    assert_int_equal(errs.n, 2);
    assert_string_equal(errs.items[0].msg,
                        "lq.yaml:4:9: metadata.name: \"q-${TEAM}-${ENV}\" "
                        "contains unexpanded variables ${TEAM}, ${ENV}; pipe "
                        "the file through envsubst first");
    assert_string_equal(errs.items[1].msg,
                        "lq.yaml:5:14: metadata.namespace: \"${NS}\" contains "
                        "an unexpanded variable ${NS}; pipe the file through "
                        "envsubst first");
    fq_errlist_release(&errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invalid_fixtures),
        cmocka_unit_test(test_no_orphan_err_files),
        cmocka_unit_test(test_valid_fixtures_round_trip),
        cmocka_unit_test(test_seed_queue_decodes),
        cmocka_unit_test(test_seed_rayjob_decodes),
        cmocka_unit_test(test_all_or_nothing),
        cmocka_unit_test(test_list_expands),
        cmocka_unit_test(test_limits_refused),
        cmocka_unit_test(test_non_finite_refused),
        cmocka_unit_test(test_validate_command),
        cmocka_unit_test(test_command_table),
        cmocka_unit_test(test_envsubst_hint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
