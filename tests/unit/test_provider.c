/*
 * test_provider.c - the exec provider's call (answers, errors, timeout),
 * the local provider's Node, the core's provider requests (no I/O: the
 * autoscaler's decisions as NodePool status.providerRequests, a Failed
 * answer turned into the stockout backoff, scale-down requests) and the
 * exec adapter carrying them out through a real child process
 * (tests/fixtures/providers/fake_provider.py).
 *
 * Provider scripts are small shell scripts written into a temporary
 * directory; each failure mode must come back as an error that names the
 * script and says what happened, and a script that hangs must be killed
 * at its timeout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capacity_testlib.h"
#include "flexq/alloc.h"
#include "flexq/quantity.h"
#include "flexq/value.h"
#include "providers/provider.h"
#include "tmpdir_testlib.h"

static char dir[64];

static char *script(const char *name, const char *body)
{
    char *path = fq_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
    return path;
}

static int setup(void **state)
{
    (void)state;
    testlib_mkdtemp(dir, sizeof(dir), "flexq-prov");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    testlib_rm_rf(dir);
    return 0;
}

static struct fq_value *request(void)
{
    struct fq_value *r = fq_value_map();
    fq_map_set(r, "op", fq_value_str("list-nodes"));
    return r;
}

static void test_exec_answers(void **state)
{
    (void)state;
    /* echoes the op it was asked, proving stdin carried the request */
    char *ok =
        script("ok", "read req; op=$(echo \"$req\" | sed "
                     "'s/.*\"op\":\"\\([^\"]*\\)\".*/\\1/'); "
                     "echo \"{\\\"nodes\\\": [], \\\"op\\\": \\\"$op\\\"}\"");
    struct fq_value *req = request(), *resp = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_provider_exec_call(ok, req, 5000, &resp, &err), 0);
    assert_string_equal(fq_value_path_str(resp, "op", ""), "list-nodes");
    assert_int_equal(fq_value_len(fq_map_get(resp, "nodes")), 0);
    fq_value_free(resp);
    free(ok);
    fq_value_free(req);
}

static void expect_error(const char *name, const char *body, int64_t timeout,
                         int code, const char *needle)
{
    char *s = script(name, body);
    struct fq_value *req = request(), *resp = NULL;
    struct fq_err err = {0};
    assert_int_equal(fq_provider_exec_call(s, req, timeout, &resp, &err), code);
    assert_null(resp);
    if (!strstr(err.msg, needle))
        fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
    assert_non_null(strstr(err.msg, s)); /* names the script */
    fq_value_free(req);
    free(s);
}

static void test_exec_errors(void **state)
{
    (void)state;
    expect_error("err", "cat >/dev/null; echo '{\"error\": \"no quota\"}'",
                 5000, FQ_EPROVIDER, "no quota");
    expect_error("notjson", "cat >/dev/null; echo hello", 5000, FQ_EPROVIDER,
                 "did not answer a JSON object");
    expect_error("array", "cat >/dev/null; echo '[1]'", 5000, FQ_EPROVIDER,
                 "not an object");
    expect_error("exit3", "cat >/dev/null; echo 'gcloud: denied' >&2; exit 3",
                 5000, FQ_EPROVIDER, "exited with status 3: gcloud: denied");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    expect_error("hang", "sleep 30", 300, FQ_ETIMEOUT, "timed out after 300");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 10); /* killed, not waited for */
    struct fq_value *req = request(), *resp = NULL;
    struct fq_err err = {0};
    char *missing = fq_xasprintf("%s/missing", dir);
    assert_int_equal(fq_provider_exec_call(missing, req, 1000, &resp, &err),
                     FQ_EPROVIDER);
    assert_non_null(strstr(err.msg, "cannot be executed"));
    free(missing);
    fq_value_free(req);
}

static void test_local_node(void **state)
{
    (void)state;
    struct fq_local_machine m;
    fq_provider_local_probe(&m);
    assert_true(m.cpu_milli >= 1000);
    assert_true(m.memory_bytes > 0);
    assert_true(m.gpus >= 0);
    struct fq_value *n = fq_provider_local_node(&m, "default-pool");
    assert_string_equal(fq_value_path_str(n, "kind", ""), "Node");
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(n, "metadata.labels"),
                                   "cloud.google.com/gke-nodepool")),
        "default-pool");
    int64_t cap = 0, alloc = 0;
    assert_int_equal(
        fq_quantity_parse(fq_value_path_str(n, "status.capacity.cpu", ""),
                          FQ_Q_MILLI, &cap, NULL, NULL),
        0);
    assert_int_equal(
        fq_quantity_parse(fq_value_path_str(n, "status.allocatable.cpu", ""),
                          FQ_Q_MILLI, &alloc, NULL, NULL),
        0);
    assert_int_equal(cap, m.cpu_milli);
    assert_true(alloc <= cap && alloc > 0);
    const struct fq_value *c =
        fq_seq_at(fq_value_path(n, "status.conditions"), 0);
    assert_string_equal(fq_value_path_str(c, "status", ""), "True");
    fq_value_free(n);
}

/* --- provider requests: the core (no I/O) ------------------------------ */

static void pool_yaml(char *buf, size_t size, int min)
{
    snprintf(buf, size,
             "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: "
             "{name: cpu}\nspec: {machineType: n2-standard-8, "
             "initialNodeCount: 0, autoscaling: {enabled: true, "
             "minNodeCount: %d, maxNodeCount: 3}}\n",
             min);
}

static struct fq_engine *demand_engine(void)
{
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = 7;
    cfg.sim_provider = false;
    cfg.provider_demand = true;
    return fq_engine_new(&cfg);
}

static void apply_pool(struct fq_engine *e, int min, int64_t now)
{
    char buf[400];
    pool_yaml(buf, sizeof(buf), min);
    ct_apply(e, buf, now);
}

static const struct fq_value *preqs(struct fq_engine *e)
{
    return fq_value_path(ct_get(e, FQ_KIND_NODEPOOL, "", "cpu"),
                         "status.providerRequests");
}

static size_t pending(struct fq_engine *e)
{
    size_t n = 0;
    for (size_t i = 0; i < fq_value_len(preqs(e)); i++)
        n += !strcmp(fq_value_path_str(fq_seq_at(preqs(e), i), "state", ""),
                     "Pending");
    return n;
}

static const struct fq_value *scaleup_cond(struct fq_engine *e)
{
    const struct fq_value *cs = fq_value_path(
        ct_get(e, FQ_KIND_NODEPOOL, "", "cpu"), "status.conditions");
    for (size_t i = 0; i < fq_value_len(cs); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(cs, i), "type", ""), "ScaleUp"))
            return fq_seq_at(cs, i);
    return NULL;
}

static void test_demand_core(void **state)
{
    (void)state;
    struct fq_engine *e = demand_engine();
    apply_pool(e, 1, CT0);
    ct_run_to(e, CT0 + SEC);
    /* the minimum is asked for as one create request, with what a
     * provider needs, and nothing is created by the core */
    assert_int_equal(fq_value_len(preqs(e)), 1);
    const struct fq_value *r = fq_seq_at(preqs(e), 0);
    assert_string_equal(fq_value_path_str(r, "op", ""), "create-nodes");
    assert_int_equal(fq_value_path_int(r, "count", 0), 1);
    assert_string_equal(fq_value_path_str(r, "state", ""), "Pending");
    assert_string_equal(fq_value_path_str(r, "machineType", ""),
                        "n2-standard-8");
    assert_string_equal(
        fq_value_path_str(fq_seq_at(fq_map_get(r, "nodes"), 0), "kind", ""),
        "Node");
    assert_int_equal(fq_value_path_int(ct_get(e, FQ_KIND_NODEPOOL, "", "cpu"),
                                       "status.desiredNodes", -1),
                     1);
    assert_int_equal(fq_objstore_count(fq_engine_store(e), FQ_KIND_NODE), 0);
    char *id = fq_xstrdup(fq_value_path_str(r, "id", ""));
    /* a pending request is not asked again */
    ct_run_to(e, CT0 + 30 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 1);

    /* the provider fails: the stockout path (condition, backoff) */
    assert_int_equal(fq_provider_request_answer(e, "cpu", id, "Failed",
                                                "GCE_STOCKOUT: no n2 left"),
                     0);
    free(id);
    ct_run_to(e, CT0 + 31 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    assert_non_null(scaleup_cond(e));
    assert_string_equal(fq_value_path_str(scaleup_cond(e), "status", ""),
                        "False");
    assert_non_null(strstr(fq_value_path_str(scaleup_cond(e), "message", ""),
                           "GCE_STOCKOUT: no n2 left"));
    ct_run_to(e, CT0 + 4 * 60 * SEC); /* backing off (5 min): no ask */
    assert_int_equal(fq_value_len(preqs(e)), 0);
    ct_run_to(e, CT0 + 6 * 60 * SEC); /* after it: asked again */
    assert_int_equal(pending(e), 1);

    /* the provider succeeds: Nodes appear, the request goes */
    r = fq_seq_at(preqs(e), 0);
    id = fq_xstrdup(fq_value_path_str(r, "id", ""));
    struct fq_value *nodes = fq_value_seq(), *n = fq_value_map();
    fq_map_set(n, "name", fq_value_str("cloud-node-1"));
    fq_seq_push(nodes, n);
    fq_provider_nodes_put(e, "cpu", "exec", fq_value_path_str(r, "slice", ""),
                          fq_map_get(r, "nodes"), nodes, CT0 + 6 * 60 * SEC);
    fq_value_free(nodes);
    assert_int_equal(fq_provider_request_answer(e, "cpu", id, "Done", NULL), 0);
    free(id);
    ct_run_to(e, CT0 + 7 * 60 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    const struct fq_value *node = ct_get(e, FQ_KIND_NODE, "", "cloud-node-1");
    assert_non_null(node);
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(node, "metadata.labels"),
                                   "cloud.google.com/gke-nodepool")),
        "cpu");
    assert_non_null(fq_value_path(node, "status.allocatable.cpu"));
    assert_int_equal(fq_value_path_int(ct_get(e, FQ_KIND_NODEPOOL, "", "cpu"),
                                       "status.nodeCount", -1),
                     1);
    assert_string_equal(fq_value_path_str(scaleup_cond(e), "status", ""),
                        "True");

    /* minimum 0: after the unneeded time (10 min) a delete request */
    apply_pool(e, 0, CT0 + 7 * 60 * SEC);
    ct_run_to(e, CT0 + 15 * 60 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    ct_run_to(e, CT0 + 18 * 60 * SEC);
    assert_int_equal(pending(e), 1);
    r = fq_seq_at(preqs(e), 0);
    assert_string_equal(fq_value_path_str(r, "op", ""), "delete-nodes");
    assert_string_equal(fq_value_as_str(fq_seq_at(fq_map_get(r, "names"), 0)),
                        "cloud-node-1");
    /* refused (as the local provider does): asked again only after
     * another unneeded time */
    id = fq_xstrdup(fq_value_path_str(r, "id", ""));
    fq_provider_request_answer(e, "cpu", id, "Failed", "kept");
    free(id);
    ct_run_to(e, CT0 + 19 * 60 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    ct_run_to(e, CT0 + 27 * 60 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    ct_run_to(e, CT0 + 30 * 60 * SEC);
    assert_int_equal(pending(e), 1);
    fq_engine_free(e);
}

/* A queued pool's ProvisioningRequest: one provision request for all its
 * nodes; Done -> Provisioned=True; a second request's Failed answer ->
 * Failed=True with the provider's message. */
static const char *QPOOL =
    "apiVersion: flexq.dev/v1alpha1\nkind: NodePool\nmetadata: {name: "
    "q}\nspec: {machineType: ct6e-standard-4t, tpuTopology: 4x4, "
    "initialNodeCount: 0, flexStart: true, queuedProvisioning: {enabled: "
    "true}, autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: "
    "8}}\n";

static void provreq(struct fq_engine *e, const char *name, int64_t now)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "apiVersion: autoscaling.x-k8s.io/v1\nkind: "
             "ProvisioningRequest\nmetadata: {namespace: default, name: "
             "%s}\nspec:\n  provisioningClassName: "
             "queued-provisioning.gke.io\n  podSets:\n  - podTemplateRef: "
             "{name: t}\n    count: 4\n    template:\n      spec:\n        "
             "nodeSelector: {cloud.google.com/gke-nodepool: q}\n        "
             "containers:\n        - name: c\n          resources: "
             "{requests: {cpu: \"1\"}}\n",
             name);
    ct_apply(e, buf, now);
}

static const char *pr_cond(struct fq_engine *e, const char *name,
                           const char *type, const char *field)
{
    const struct fq_value *cs =
        fq_value_path(ct_get(e, FQ_KIND_PROVISIONINGREQUEST, "default", name),
                      "status.conditions");
    for (size_t i = 0; i < fq_value_len(cs); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(cs, i), "type", ""), type))
            return fq_value_path_str(fq_seq_at(cs, i), field, "");
    return "";
}

static const struct fq_value *qreqs(struct fq_engine *e)
{
    return fq_value_path(ct_get(e, FQ_KIND_NODEPOOL, "", "q"),
                         "status.providerRequests");
}

static void test_demand_provision(void **state)
{
    (void)state;
    struct fq_engine *e = demand_engine();
    ct_apply(e, QPOOL, CT0);
    provreq(e, "pr1", CT0);
    ct_run_to(e, CT0 + SEC);
    assert_string_equal(pr_cond(e, "pr1", "Accepted", "status"), "True");
    assert_string_equal(pr_cond(e, "pr1", "Provisioned", "status"), "False");
    assert_int_equal(fq_value_len(qreqs(e)), 1);
    const struct fq_value *r = fq_seq_at(qreqs(e), 0);
    assert_string_equal(fq_value_path_str(r, "op", ""), "provision");
    assert_string_equal(fq_value_path_str(r, "provisioningRequest", ""),
                        "default/pr1");
    assert_int_equal(fq_value_path_int(r, "count", 0), 4); /* one 4x4 slice */
    assert_int_equal(fq_value_len(fq_map_get(r, "nodes")), 4);
    ct_run_to(e, CT0 + 60 * SEC); /* asked once */
    assert_int_equal(fq_value_len(qreqs(e)), 1);
    assert_int_equal(fq_objstore_count(fq_engine_store(e), FQ_KIND_NODE), 0);

    /* the provider makes the 4 hosts */
    r = fq_seq_at(qreqs(e), 0);
    char *id = fq_xstrdup(fq_value_path_str(r, "id", ""));
    struct fq_value *nodes = fq_value_seq();
    for (int i = 0; i < 4; i++) {
        struct fq_value *n = fq_value_map();
        char name[32];
        snprintf(name, sizeof(name), "tpu-host-%d", i);
        fq_map_set(n, "name", fq_value_str(name));
        fq_seq_push(nodes, n);
    }
    /* a list-nodes answer mirrored host 0 before the provision answer */
    struct fq_value *first = fq_value_seq();
    fq_seq_push(first, fq_value_clone(fq_seq_at(nodes, 0)));
    fq_provider_nodes_put(e, "q", "exec", NULL, NULL, first, CT0 + 59 * SEC);
    fq_value_free(first);
    fq_provider_nodes_put(e, "q", "exec", NULL, fq_map_get(r, "nodes"), nodes,
                          CT0 + 60 * SEC);
    fq_value_free(nodes);
    fq_provider_request_answer(e, "q", id, "Done", NULL);
    free(id);
    ct_run_to(e, CT0 + 61 * SEC);
    assert_string_equal(pr_cond(e, "pr1", "Provisioned", "status"), "True");
    assert_int_equal(fq_value_len(qreqs(e)), 0);
    const struct fq_value *h = ct_get(e, FQ_KIND_NODE, "", "tpu-host-0");
    assert_non_null(h);
    assert_string_equal(
        fq_value_as_str(fq_map_get(fq_value_path(h, "metadata.annotations"),
                                   "flexq.dev/provisioning-request")),
        "default/pr1");

    /* a second request the provider cannot serve */
    provreq(e, "pr2", CT0 + 62 * SEC);
    ct_run_to(e, CT0 + 63 * SEC);
    assert_int_equal(fq_value_len(qreqs(e)), 1);
    id = fq_xstrdup(fq_value_path_str(fq_seq_at(qreqs(e), 0), "id", ""));
    fq_provider_request_answer(e, "q", id, "Failed",
                               "GCE_STOCKOUT: no ct6e in us-east5-b");
    free(id);
    ct_run_to(e, CT0 + 64 * SEC);
    assert_string_equal(pr_cond(e, "pr2", "Failed", "status"), "True");
    assert_non_null(
        strstr(pr_cond(e, "pr2", "Failed", "message"), "GCE_STOCKOUT"));
    assert_int_equal(fq_value_len(qreqs(e)), 0);
    assert_string_equal(pr_cond(e, "pr1", "Provisioned", "status"), "True");
    fq_engine_free(e);
}

/* --- provider requests: the exec adapter with a real child -------------- */

/* Syncs until no request is Pending; between syncs, waits for a child to
 * exit (waitid without reaping: the adapter reaps it). */
static void sync_until_answered(struct fq_provider *p, struct fq_engine *e)
{
    for (int i = 0; i < 200 && pending(e) > 0; i++) {
        p->ops->sync(p, fq_engine_now(e));
        if (pending(e) == 0)
            break;
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        waitid(P_ALL, 0, &si, WEXITED | WNOWAIT);
    }
    p->ops->sync(p, fq_engine_now(e)); /* the lists, if any */
}

static void test_exec_adapter(void **state)
{
    (void)state;
    setenv("FLEXQ_EXEC_PROVIDER",
           FLEXQ_SOURCE_DIR "/tests/fixtures/providers/fake_provider.py", 1);
    setenv("FAKE_PROVIDER_DIR", dir, 1);
    setenv("FAKE_PROVIDER_DELAY_S", "0.3", 1);
    setenv("FLEXQ_EXEC_SYNC_S", "3600", 1);
    struct fq_engine *e = demand_engine();
    apply_pool(e, 2, CT0);
    ct_run_to(e, CT0 + SEC);
    assert_int_equal(pending(e), 2);
    struct fq_provider p = {&fq_provider_exec_ops, e, NULL};
    struct fq_err err = {0};
    assert_int_equal(p.ops->start(&p, &err), 0);
    /* sync starts the calls and returns without waiting for them */
    p.ops->sync(&p, fq_engine_now(e));
    assert_int_equal(pending(e), 2);
    sync_until_answered(&p, e);
    ct_run_to(e, CT0 + 2 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    assert_int_equal(fq_objstore_count(fq_engine_store(e), FQ_KIND_NODE), 2);
    assert_int_equal(fq_value_path_int(ct_get(e, FQ_KIND_NODEPOOL, "", "cpu"),
                                       "status.readyNodeCount", -1),
                     2);
    const struct fq_object **all = NULL;
    assert_int_equal(
        fq_objstore_list(fq_engine_store(e), FQ_KIND_NODE, NULL, &all), 2);
    const struct fq_value *l = fq_value_path(all[0]->obj, "metadata.labels");
    assert_string_equal(
        fq_value_as_str(fq_map_get(l, "fake.flexq.dev/made-by")),
        "fake_provider");
    assert_non_null(fq_map_get(l, "flexq.dev/slice"));
    assert_string_equal(
        fq_value_as_str(fq_map_get(l, "cloud.google.com/gke-nodepool")), "cpu");
    free(all);

    /* a stockout answer becomes the core's backoff with the message */
    setenv("FAKE_PROVIDER_DELAY_S", "0", 1);
    char *so = fq_xasprintf("%s/stockout", dir);
    FILE *f = fopen(so, "w");
    assert_non_null(f);
    fclose(f);
    free(so);
    apply_pool(e, 3, CT0 + 3 * SEC);
    ct_run_to(e, CT0 + 4 * SEC);
    assert_int_equal(pending(e), 1);
    sync_until_answered(&p, e);
    ct_run_to(e, CT0 + 5 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    assert_string_equal(fq_value_path_str(scaleup_cond(e), "status", ""),
                        "False");
    assert_non_null(strstr(fq_value_path_str(scaleup_cond(e), "message", ""),
                           "GCE_STOCKOUT"));
    assert_int_equal(fq_objstore_count(fq_engine_store(e), FQ_KIND_NODE), 2);

    /* scale-down: minimum 0, the unneeded time, delete-nodes */
    apply_pool(e, 0, CT0 + 6 * SEC);
    ct_run_to(e, CT0 + 12 * 60 * SEC);
    assert_int_equal(pending(e), 2);
    sync_until_answered(&p, e);
    ct_run_to(e, CT0 + 13 * 60 * SEC);
    assert_int_equal(fq_objstore_count(fq_engine_store(e), FQ_KIND_NODE), 0);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    p.ops->stop(&p);
    fq_engine_free(e);
    unsetenv("FAKE_PROVIDER_DELAY_S");
}

/* {"waiting": ...}: the request stays Pending and is asked again, with
 * the same id, after FLEXQ_EXEC_SYNC_S. */
static void test_exec_waiting(void **state)
{
    (void)state;
    setenv("FLEXQ_EXEC_PROVIDER",
           FLEXQ_SOURCE_DIR "/tests/fixtures/providers/fake_provider.py", 1);
    setenv("FAKE_PROVIDER_DIR", dir, 1);
    setenv("FLEXQ_EXEC_SYNC_S", "3600", 1);
    char *wf = fq_xasprintf("%s/waiting", dir);
    FILE *f = fopen(wf, "w");
    assert_non_null(f);
    fclose(f);
    free(wf);
    struct fq_engine *e = demand_engine();
    apply_pool(e, 1, CT0);
    ct_run_to(e, CT0 + SEC);
    assert_int_equal(pending(e), 1);
    char *id = fq_xstrdup(fq_value_path_str(fq_seq_at(preqs(e), 0), "id", ""));
    struct fq_provider p = {&fq_provider_exec_ops, e, NULL};
    struct fq_err err = {0};
    assert_int_equal(p.ops->start(&p, &err), 0);
    /* the first call answers waiting; until every child is reaped */
    for (int i = 0; i < 100; i++) {
        p.ops->sync(&p, CT0 + SEC);
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) != 0)
            break; /* no child left */
    }
    assert_int_equal(pending(e), 1);
    p.ops->sync(&p, CT0 + 2 * SEC); /* not asked again yet */
    char *log = fq_xasprintf("%s/calls.log", dir);
    f = fopen(log, "r");
    assert_non_null(f);
    char line[512];
    int creates = 0;
    bool waited = false;
    while (fgets(line, sizeof(line), f)) {
        creates += !strncmp(line, "create-nodes", 12);
        waited |= strstr(line, "waiting") && strstr(line, id);
    }
    fclose(f);
    assert_int_equal(creates, 1);
    assert_true(waited);
    /* after the sync period: asked again, answered with the node */
    ct_run_to(e, CT0 + 3601 * SEC);
    sync_until_answered(&p, e);
    ct_run_to(e, CT0 + 3602 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    assert_int_equal(fq_objstore_count(fq_engine_store(e), FQ_KIND_NODE), 1);
    free(log);
    free(id);
    p.ops->stop(&p);
    fq_engine_free(e);
}

/* local keeps its one node: a scale-up is refused with a message that
 * says so, and the pool shows it (ScaleUp=False) while backing off. */
static void test_local_refuses(void **state)
{
    (void)state;
    setenv("FLEXQ_LOCAL_POOL", "cpu", 1);
    struct fq_engine *e = demand_engine();
    apply_pool(e, 2, CT0);
    struct fq_provider p = {fq_provider_lookup("local"), e, NULL};
    assert_non_null(p.ops);
    struct fq_err err = {0};
    assert_int_equal(p.ops->start(&p, &err), 0);
    ct_run_to(e, CT0 + SEC);
    assert_int_equal(fq_objstore_count(fq_engine_store(e), FQ_KIND_NODE), 1);
    assert_int_equal(pending(e), 1); /* the minimum wants one more */
    p.ops->sync(&p, CT0 + SEC);
    ct_run_to(e, CT0 + 2 * SEC);
    assert_int_equal(fq_value_len(preqs(e)), 0);
    assert_string_equal(fq_value_path_str(scaleup_cond(e), "status", ""),
                        "False");
    assert_non_null(strstr(fq_value_path_str(scaleup_cond(e), "message", ""),
                           "local provider"));
    assert_int_equal(fq_objstore_count(fq_engine_store(e), FQ_KIND_NODE), 1);
    if (p.ops->stop)
        p.ops->stop(&p);
    fq_engine_free(e);
    unsetenv("FLEXQ_LOCAL_POOL");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exec_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_errors, setup, teardown),
        cmocka_unit_test(test_local_node),
        cmocka_unit_test(test_demand_core),
        cmocka_unit_test(test_demand_provision),
        cmocka_unit_test(test_local_refuses),
        cmocka_unit_test_setup_teardown(test_exec_adapter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_waiting, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
