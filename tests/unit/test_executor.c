/*
 * test_executor.c - the executor seam and the Slurm executor's own logic,
 * without Slurm: a fake helper script (FLEXQ_SLURM_HELPER) answers
 * submit / poll / cancel / adopt from files in a temporary directory and
 * logs every call, so that the tests can assert what flexqd asked Slurm
 * and what it reported for the pods.
 *
 *   - a gang is submitted once, only when all gang-size pods are bound;
 *   - task.json makes a pod Running, a job in NODE_FAIL without the task's
 *     status makes it Failed with NodeLost;
 *   - a deleted pod cancels its gang's job, and its directory goes once
 *     the job is over; directories of pods that no longer exist are
 *     swept after a restart;
 *   - a task killed by a signal while its job runs waits for the job's end
 *     state: NODE_FAIL makes it NodeLost, not an Error;
 *   - after a restart a running job is adopted by its pods' uids and
 *     nothing is submitted again;
 *   - the state -> reason table.
 *
 * The helper is a child with a timeout; the test polls the executor until
 * a condition holds, with a deadline (nothing sleeps for a state).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/kinds.h"
#include "flexq/value.h"
#include "runner/executor.h"
#include "runner/runner.h"
#include "tmpdir_testlib.h"
#include "yaml_testlib.h"

#define NOW 1764431040000LL

static const char helper[] =
    "#!/usr/bin/python3 -IS\n"
    "import json, os, sys\n"
    "d = os.path.dirname(os.path.abspath(__file__))\n"
    "req = json.load(sys.stdin)\n"
    "op = req['op']\n"
    "def rd(n, dflt):\n"
    "    try:\n"
    "        return open(os.path.join(d, n)).read().strip()\n"
    "    except OSError:\n"
    "        return dflt\n"
    "with open(os.path.join(d, 'calls.log'), 'a') as f:\n"
    "    f.write('%s %s\\n' % (op, req.get('gang') or req.get('jobid') or\n"
    "            ','.join(req.get('jobs') or [])))\n"
    "if op == 'submit':\n"
    "    json.dump(req, open(os.path.join(d, 'submit.json'), 'w'))\n"
    "    print(json.dumps({'jobid': '7'}))\n"
    "elif op == 'poll':\n"
    "    print(json.dumps({'jobs': {j: {'state': rd('state', 'RUNNING')}\n"
    "                               for j in req['jobs']}}))\n"
    "elif op == 'cancel':\n"
    "    print(json.dumps({'state': 'CANCELLED'}))\n"
    "else:\n"
    "    print(rd('adopt.json', '{\"jobs\": []}'))\n";

struct fixture {
    char dir[64];
    char data[96];
    struct fq_engine *e;
    struct fq_executor x;
    int64_t now;
};

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static struct fixture *setup_fx(void)
{
    struct fixture *f = fq_xcalloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/flexq-executor-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->data, sizeof(f->data), "%s/data", f->dir);
    mkdir(f->data, 0755);
    char *h = fq_xasprintf("%s/helper.py", f->dir);
    write_text(h, helper);
    chmod(h, 0755);
    setenv("FLEXQ_SLURM_HELPER", h, 1);
    free(h);
    struct fq_engine_config ec;
    fq_engine_config_init(&ec);
    f->e = fq_engine_new(&ec);
    f->now = NOW;
    f->x = (struct fq_executor){.ops = fq_executor_lookup("slurm"),
                                .engine = f->e,
                                .data_dir = f->data};
    struct fq_err err = {0};
    assert_int_equal(f->x.ops->start(&f->x, &err), 0);
    return f;
}

static void teardown_fx(struct fixture *f)
{
    f->x.ops->stop(&f->x);
    fq_engine_free(f->e);
    testlib_rm_rf(f->dir);
    free(f);
}

/* A worker pod of gang g (size n), bound to node, uid u. */
static void put_pod(struct fixture *f, const char *name, const char *uid,
                    const char *node, const char *phase)
{
    char *text = fq_xasprintf(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n"
        "  namespace: default\n  uid: %s\n  annotations:\n"
        "    flexq.dev/gang: g1\n    flexq.dev/gang-size: \"2\"\n"
        "spec:\n  nodeName: %s\n  restartPolicy: Never\n"
        "  containers:\n  - name: main\n    image: busybox\n"
        "    command: [\"true\"]\n%s%s\n",
        name, uid, node, phase ? "status:\n  phase: " : "", phase ? phase : "");
    struct fq_err err;
    int rc = fq_objstore_create(fq_engine_store(f->e), testlib_yaml1(text),
                                f->now, NULL, NULL, &err);
    if (rc != 0)
        fail_msg("create: %s", err.msg);
    free(text);
}

static void change(struct fixture *f, enum fq_change_type t, const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(f->e), FQ_KIND_POD, "default", name);
    struct fq_change c = {0,
                          t,
                          FQ_KIND_POD,
                          (char *)"default",
                          (char *)name,
                          o && t != FQ_CHANGE_DELETED ? o->obj : NULL,
                          false,
                          NULL,
                          0,
                          0,
                          NULL,
                          0};
    f->x.ops->on_change(&f->x, &c, f->now);
}

static char *calls(struct fixture *f)
{
    char *path = fq_xasprintf("%s/calls.log", f->dir);
    FILE *fp = fopen(path, "r");
    free(path);
    char *buf = fq_xcalloc(1, 8192);
    if (fp) {
        size_t n = fread(buf, 1, 8191, fp);
        buf[n] = '\0';
        fclose(fp);
    }
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void tick(struct fixture *f)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    f->now += 1100; /* past the executor's 1 s poll interval */
    f->x.ops->poll(&f->x, f->now);
}

/* Polls until `needle` has been logged `times` times (10 s deadline). */
static void until_called(struct fixture *f, const char *needle, int times)
{
    for (int i = 0; i < 500; i++) {
        char *c = calls(f);
        int n = count(c, needle);
        free(c);
        if (n >= times)
            return;
        tick(f);
    }
    char *c = calls(f);
    fail_msg("never called %s x%d; calls:\n%s", needle, times, c);
}

static const char *phase_of(struct fixture *f, const char *name,
                            const char *field)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(f->e), FQ_KIND_POD, "default", name);
    return o ? fq_value_path_str(o->obj, field, "") : "";
}

static void until_phase(struct fixture *f, const char *name, const char *ph)
{
    for (int i = 0; i < 500; i++) {
        if (!strcmp(phase_of(f, name, "status.phase"), ph))
            return;
        tick(f);
    }
    fail_msg("pod %s never %s (is %s)", name, ph,
             phase_of(f, name, "status.phase"));
}

static void task_file(struct fixture *f, const char *pod, const char *uid)
{
    char *dir = fq_runner_pod_dir(f->data, "default", pod);
    char *cmd = fq_xasprintf("mkdir -p %s", dir);
    assert_int_equal(system(cmd), 0);
    char *path = fq_xasprintf("%s/task.json", dir);
    char *text = fq_xasprintf("{\"uid\": \"%s\", \"node\": \"n\"}", uid);
    write_text(path, text);
    free(text);
    free(path);
    free(cmd);
    free(dir);
}

static bool dir_exists(struct fixture *f, const char *pod)
{
    char *dir = fq_runner_pod_dir(f->data, "default", pod);
    struct stat st;
    bool ok = stat(dir, &st) == 0;
    free(dir);
    return ok;
}

static void status_file(struct fixture *f, const char *pod, const char *uid,
                        const char *phase, int code)
{
    char *dir = fq_runner_pod_dir(f->data, "default", pod);
    char *path = fq_xasprintf("%s/status.json", dir);
    char *text = fq_xasprintf("{\"uid\": \"%s\", \"phase\": \"%s\", "
                              "\"exitCode\": %d, \"reason\": \"Error\"}",
                              uid, phase, code);
    write_text(path, text);
    free(text);
    free(path);
    free(dir);
}

static void set_state(struct fixture *f, const char *state)
{
    char *st = fq_xasprintf("%s/state", f->dir);
    write_text(st, state);
    free(st);
}

static void submitted_gang(struct fixture *f)
{
    f->x.ops->adopt(&f->x, f->now);
    until_called(f, "adopt", 1);
    put_pod(f, "w0", "u0", "t1", NULL);
    put_pod(f, "w1", "u1", "t2", NULL);
    change(f, FQ_CHANGE_ADDED, "w0");
    change(f, FQ_CHANGE_ADDED, "w1");
    until_called(f, "submit g1", 1);
    until_called(f, "poll 7", 1);
}

static void test_killed_task_waits_for_the_job(void **state)
{
    (void)state;
    struct fixture *f = setup_fx();
    submitted_gang(f);
    const char *u0 = phase_of(f, "w0", "metadata.uid");
    task_file(f, "w0", u0);
    until_phase(f, "w0", "Running");
    /* Slurm killed w0's task for its job's sake (SIGTERM: 143) while the
     * job still runs: not reported as a failure of its own */
    status_file(f, "w0", u0, "Failed", 143);
    for (int i = 0; i < 5; i++)
        tick(f);
    assert_string_equal(phase_of(f, "w0", "status.phase"), "Running");
    /* the job's end says why: a node died; w1 left nothing. The clock
     * moves 100 ms a step here, so that the squeue child (a real process,
     * slow on a loaded machine) answers well within the executor's wait
     * for a killed task's reason (30 s of this clock, 300 steps) */
    set_state(f, "NODE_FAIL\n");
    for (int i = 0;
         i < 2000 && strcmp(phase_of(f, "w0", "status.phase"), "Failed"); i++) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        f->now += 100;
        f->x.ops->poll(&f->x, f->now);
    }
    until_phase(f, "w0", "Failed");
    until_phase(f, "w1", "Failed");
    assert_string_equal(phase_of(f, "w0", "status.reason"), "NodeLost");
    assert_string_equal(phase_of(f, "w1", "status.reason"), "NodeLost");
    teardown_fx(f);
}

static void test_deleted_pod_dirs_go(void **state)
{
    (void)state;
    struct fixture *f = setup_fx();
    submitted_gang(f);
    task_file(f, "w0", phase_of(f, "w0", "metadata.uid"));
    task_file(f, "w1", phase_of(f, "w1", "metadata.uid"));
    until_phase(f, "w0", "Running");
    /* the job runs: a deleted pod's task may still write its files */
    set_state(f, "COMPLETING\n");
    fq_objstore_delete(fq_engine_store(f->e), FQ_KIND_POD, "default", "w0",
                       NULL);
    change(f, FQ_CHANGE_DELETED, "w0");
    until_called(f, "cancel 7", 1);
    /* the cancel confirmed the job's end: now both deleted pods' files go,
     * and a pod that still exists keeps its log */
    for (int i = 0; i < 500 && dir_exists(f, "w0"); i++)
        tick(f);
    assert_false(dir_exists(f, "w0"));
    assert_true(dir_exists(f, "w1"));
    fq_objstore_delete(fq_engine_store(f->e), FQ_KIND_POD, "default", "w1",
                       NULL);
    change(f, FQ_CHANGE_DELETED, "w1");
    assert_false(dir_exists(f, "w1"));
    teardown_fx(f);
}

static void test_restart_sweeps_dirs_of_gone_pods(void **state)
{
    (void)state;
    struct fixture *f = setup_fx();
    put_pod(f, "w0", "u0", "t1", NULL);
    task_file(f, "w0", "u0");
    task_file(f, "ghost", "u9"); /* deleted while flexqd was away */
    f->x.ops->adopt(&f->x, f->now);
    until_called(f, "adopt", 1);
    for (int i = 0; i < 500 && dir_exists(f, "ghost"); i++)
        tick(f);
    assert_false(dir_exists(f, "ghost"));
    assert_true(dir_exists(f, "w0"));
    teardown_fx(f);
}

/* The submit carries each node's address from its Node object (the
 * provider's NodeAddr), so the helper needs no scontrol call. */
static void test_submit_carries_node_addresses(void **state)
{
    (void)state;
    struct fixture *f = setup_fx();
    for (int i = 1; i <= 2; i++) {
        char *text = fq_xasprintf(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: t%d\n"
            "  labels: {flexq.dev/slurm-partition: p}\n"
            "status:\n  addresses:\n  - {type: InternalIP, address: "
            "10.0.0.%d}\n",
            i, i);
        struct fq_err err;
        assert_int_equal(fq_objstore_create(fq_engine_store(f->e),
                                            testlib_yaml1(text), f->now, NULL,
                                            NULL, &err),
                         0);
        free(text);
    }
    submitted_gang(f);
    char *path = fq_xasprintf("%s/submit.json", f->dir);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    free(path);
    struct fq_value *req = NULL;
    assert_int_equal(fq_json_parse(buf, n, "submit.json", NULL, &req, NULL), 0);
    const struct fq_value *nodes = fq_map_get(req, "nodes");
    for (int i = 1; i <= 2; i++) {
        char name[8], addr[16];
        snprintf(name, sizeof(name), "t%d", i);
        snprintf(addr, sizeof(addr), "10.0.0.%d", i);
        const struct fq_value *a =
            fq_seq_at(fq_map_get(fq_map_get(nodes, name), "addresses"), 0);
        assert_string_equal(fq_value_path_str(a, "address", ""), addr);
        assert_string_equal(fq_value_as_str(fq_map_get(
                                fq_map_get(fq_map_get(nodes, name), "labels"),
                                "flexq.dev/slurm-partition")),
                            "p");
    }
    fq_value_free(req);
    teardown_fx(f);
}

static void test_gang_submitted_once_when_bound(void **state)
{
    (void)state;
    struct fixture *f = setup_fx();
    f->x.ops->adopt(&f->x, f->now);
    until_called(f, "adopt", 1);
    put_pod(f, "w0", "u0", "t1", NULL);
    change(f, FQ_CHANGE_ADDED, "w0");
    for (int i = 0; i < 20; i++)
        tick(f);
    char *c = calls(f);
    assert_int_equal(count(c, "submit"), 0); /* half a gang waits */
    free(c);
    put_pod(f, "w1", "u1", "t2", NULL);
    change(f, FQ_CHANGE_ADDED, "w1");
    until_called(f, "submit g1", 1);
    until_called(f, "poll 7", 1);
    task_file(f, "w0", "u0");
    until_phase(f, "w0", "Running");
    /* a task file of an older pod by the same name is not this pod's */
    task_file(f, "w1", "older");
    for (int i = 0; i < 5; i++)
        tick(f);
    assert_string_equal(phase_of(f, "w1", "status.phase"), "");
    /* the job dies with a node: no status of its own -> NodeLost */
    char *st = fq_xasprintf("%s/state", f->dir);
    write_text(st, "NODE_FAIL\n");
    free(st);
    until_phase(f, "w1", "Failed");
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(f->e), FQ_KIND_POD, "default", "w1");
    char *json = fq_json_dumps(o->obj, FQ_JSON_COMPACT);
    assert_non_null(strstr(json, "NodeLost"));
    free(json);
    until_phase(f, "w0", "Failed");
    c = calls(f);
    assert_int_equal(count(c, "submit"), 1);
    free(c);
    teardown_fx(f);
}

static void test_delete_cancels_the_job(void **state)
{
    (void)state;
    struct fixture *f = setup_fx();
    f->x.ops->adopt(&f->x, f->now);
    until_called(f, "adopt", 1);
    put_pod(f, "w0", "u0", "t1", NULL);
    put_pod(f, "w1", "u1", "t2", NULL);
    change(f, FQ_CHANGE_ADDED, "w0");
    change(f, FQ_CHANGE_ADDED, "w1");
    until_called(f, "submit g1", 1);
    until_called(f, "poll 7", 1);
    fq_objstore_delete(fq_engine_store(f->e), FQ_KIND_POD, "default", "w0",
                       NULL);
    change(f, FQ_CHANGE_DELETED, "w0");
    until_called(f, "cancel 7", 1);
    for (int i = 0; i < 10; i++)
        tick(f);
    char *c = calls(f);
    assert_int_equal(count(c, "cancel 7"), 1); /* confirmed: asked once */
    free(c);
    teardown_fx(f);
}

static void test_restart_adopts_and_resubmits_nothing(void **state)
{
    (void)state;
    struct fixture *f = setup_fx();
    put_pod(f, "w0", "u0", "t1", "Running");
    put_pod(f, "w1", "u1", "t2", "Running");
    /* the store gives pods their own uids: the job names those */
    char *aj = fq_xasprintf("%s/adopt.json", f->dir);
    char *text = fq_xasprintf(
        "{\"jobs\": [{\"jobid\": \"9\", \"state\": \"RUNNING\", "
        "\"uids\": [\"%s\", \"%s\"]}]}",
        phase_of(f, "w0", "metadata.uid"), phase_of(f, "w1", "metadata.uid"));
    write_text(aj, text);
    free(text);
    free(aj);
    f->x.ops->adopt(&f->x, f->now);
    until_called(f, "adopt", 1);
    until_called(f, "poll 9", 2);
    assert_true(f->x.ops->pod_live(&f->x, "default", "w0"));
    assert_string_equal(phase_of(f, "w0", "status.phase"), "Running");
    assert_string_equal(phase_of(f, "w1", "status.phase"), "Running");
    char *c = calls(f);
    assert_int_equal(count(c, "submit"), 0);
    free(c);
    teardown_fx(f);
}

static void test_reasons(void **state)
{
    (void)state;
    assert_string_equal(fq_executor_slurm_reason("NODE_FAIL"), "NodeLost");
    assert_string_equal(fq_executor_slurm_reason("CANCELLED"), "Killed");
    assert_string_equal(fq_executor_slurm_reason("CANCELLED by 0"), "Killed");
    assert_string_equal(fq_executor_slurm_reason("TIMEOUT"),
                        "DeadlineExceeded");
    assert_string_equal(fq_executor_slurm_reason("OUT_OF_MEMORY"), "OOMKilled");
    assert_string_equal(fq_executor_slurm_reason("FAILED"), "Error");
    assert_null(fq_executor_slurm_reason("RUNNING"));
    assert_null(fq_executor_slurm_reason("PENDING"));
    assert_null(fq_executor_slurm_reason("COMPLETING"));
    assert_null(fq_executor_slurm_reason("CONFIGURING"));
    assert_null(fq_executor_slurm_reason(NULL));
    assert_ptr_equal(fq_executor_lookup(NULL), &fq_executor_local_ops);
    assert_ptr_equal(fq_executor_lookup("slurm"), &fq_executor_slurm_ops);
    assert_null(fq_executor_lookup("k8s"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_gang_submitted_once_when_bound),
        cmocka_unit_test(test_delete_cancels_the_job),
        cmocka_unit_test(test_restart_adopts_and_resubmits_nothing),
        cmocka_unit_test(test_killed_task_waits_for_the_job),
        cmocka_unit_test(test_submit_carries_node_addresses),
        cmocka_unit_test(test_deleted_pod_dirs_go),
        cmocka_unit_test(test_restart_sweeps_dirs_of_gone_pods),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
