/*
 * test_sandbox.c - sandbox.c's decisions, without starting pods: which
 * identity a pod gets (runAsUser only when allowed), the seccomp filter
 * (built, and a child that loads it is refused unshare but may fork),
 * where the data directory is hidden from, refused hostPaths, and the
 * containerID a restarted flexqd checks.
 */
#define _GNU_SOURCE /* unshare */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "flexq/value.h"
#include "runner/sandbox.h"
#include "tmpdir_testlib.h"
#include "yaml_testlib.h"

static void test_pod_ids(void **state)
{
    (void)state;
    char why[300];
    uid_t u;
    gid_t g;
    struct fq_value *plain = testlib_yaml1(
        "kind: Pod\nspec:\n  containers:\n  - name: c\n    image: x\n");
    assert_int_equal(
        fq_sandbox_pod_ids(plain, false, 999, 995, &u, &g, why, sizeof(why)),
        0);
    assert_int_equal(u, 999);
    assert_int_equal(g, 995);
    struct fq_value *asked =
        testlib_yaml1("kind: Pod\nspec:\n  securityContext: {runAsUser: 0, "
                      "runAsGroup: 7}\n  containers:\n  - name: c\n"
                      "    image: x\n    securityContext: {runAsUser: 1234}\n");
    /* not allowed: refused, naming the field and the flag */
    assert_int_equal(
        fq_sandbox_pod_ids(asked, false, 999, 995, &u, &g, why, sizeof(why)),
        -1);
    assert_non_null(strstr(why, "runAsUser"));
    assert_non_null(strstr(why, "--allow-run-as-user"));
    /* allowed: the container's runAsUser wins over the pod's */
    assert_int_equal(
        fq_sandbox_pod_ids(asked, true, 999, 995, &u, &g, why, sizeof(why)), 0);
    assert_int_equal(u, 1234);
    assert_int_equal(g, 7);
    struct fq_value *bad =
        testlib_yaml1("kind: Pod\nspec:\n  securityContext: {runAsUser: -5}\n"
                      "  containers:\n  - name: c\n    image: x\n");
    assert_int_equal(
        fq_sandbox_pod_ids(bad, true, 999, 995, &u, &g, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "non-negative"));
    fq_value_free(plain);
    fq_value_free(asked);
    fq_value_free(bad);
}

static void test_filter_refuses_unshare(void **state)
{
    (void)state;
    struct fq_sandbox *sb = fq_xcalloc(1, sizeof(*sb));
    fq_sandbox_filter_build(sb);
#if defined(__x86_64__) || defined(__aarch64__)
    assert_true(sb->filter_len > 10);
#endif
    if (!sb->filter_len) {
        free(sb);
        skip();
    }
    sb->seccomp = true;
    pid_t pid = fork();
    if (pid == 0) {
        const char *step;
        if (fq_sandbox_enter(sb, &step) != 0)
            _exit(10);
        if (unshare(CLONE_NEWNS) == 0 || errno != EPERM)
            _exit(11);
        pid_t c = fork(); /* plain fork still works */
        if (c == 0)
            _exit(0);
        int st;
        if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st))
            _exit(12);
        _exit(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : 13);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    free(sb);
}

static void test_hide_root_and_host_paths(void **state)
{
    (void)state;
    char base[] = "/tmp/flexq-sandbox-XXXXXX";
    assert_non_null(mkdtemp(base)); /* 0700: the pod user cannot enter */
    char *data = fq_xasprintf("%s/data", base);
    assert_int_equal(mkdir(data, 0755), 0);
    char *root = fq_sandbox_hide_root(data, true, 999, 995);
    assert_string_equal(root, base);
    free(root);
    root = fq_sandbox_hide_root(data, false, 0, 0);
    assert_string_equal(root, data);
    free(root);
    assert_int_equal(chmod(base, 0755), 0);
    root = fq_sandbox_hide_root(data, true, 999, 995);
    assert_string_equal(root, data);
    free(root);

    char why[300];
    const char *hide[] = {"/etc/flexq/tokens", NULL};
    assert_true(
        fq_sandbox_path_refused(data, data, hide, "v", why, sizeof(why)));
    assert_non_null(strstr(why, "data directory"));
    assert_true(
        fq_sandbox_path_refused(base, data, hide, "v", why, sizeof(why)));
    assert_true(
        fq_sandbox_path_refused("/etc", data, hide, "v", why, sizeof(why)));
    assert_false(fq_sandbox_path_refused("/usr/share", data, hide, "v", why,
                                         sizeof(why)));
    /* "/" holds the data directory and the host's /proc; /proc/1 is on
     * it: another pod's environ and root, the same user's */
    assert_true(
        fq_sandbox_path_refused("/", data, NULL, "v", why, sizeof(why)));
    assert_true(fq_sandbox_path_refused("/proc", "/nowhere", NULL, "v", why,
                                        sizeof(why)));
    assert_non_null(strstr(why, "/proc"));
    assert_true(fq_sandbox_path_refused("/proc/1", "/nowhere", NULL, "v", why,
                                        sizeof(why)));
    free(data);
    testlib_rm_rf(base);
}

static void test_container_id(void **state)
{
    (void)state;
    char boot[9];
    fq_boot_id(boot);
    char *cid = fq_sandbox_container_id(boot, getpid());
    assert_true(!strncmp(cid, "flexq://", 8));
    assert_int_equal(fq_sandbox_container_pid(cid, boot), getpid());
    assert_int_equal(fq_sandbox_container_pid(cid, "otherbt"), 0);
    free(cid);
    /* the start time is field 22 of /proc/PID/stat (not the memory size
     * after it, which changes as the process allocates) */
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')') + 2;
    for (int field = 3; field < 22; field++)
        p = strchr(p, ' ') + 1;
    assert_true(fq_proc_starttime(getpid()) == strtoull(p, NULL, 10));
    /* another start time: a later process with the same pid */
    cid = fq_xasprintf("flexq://%s/%ld/1", boot, (long)getpid());
    assert_int_equal(fq_sandbox_container_pid(cid, boot), 0);
    free(cid);
    assert_int_equal(fq_sandbox_container_pid("docker://abc", boot), 0);
    assert_int_equal(fq_sandbox_container_pid(NULL, boot), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_ids),
        cmocka_unit_test(test_filter_refuses_unshare),
        cmocka_unit_test(test_hide_root_and_host_paths),
        cmocka_unit_test(test_container_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
