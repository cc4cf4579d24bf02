/*
 * test_logpump.c - the log pump (src/daemon/runner/logpump.c) driven
 * directly, as the runner drives it: a pod's pipe in, its log file out.
 *
 * What it checks: bytes the pump cannot write into the log are never lost
 * silently; once it can write again, the log says how many were dropped
 * and why, before the next bytes. The write failure is made by a
 * file-size limit the pump inherits (RLIMIT_FSIZE: writes past it fail
 * with EFBIG), and "room again" by emptying the log, as a freed disk.
 * No sleep waits for a state: each is polled with a deadline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexq/alloc.h"
#include "runner/logpump.h"
#include "tmpdir_testlib.h"

#define LIMIT       4096
#define DEADLINE_MS 10000

static void put(int fd, char c, size_t n)
{
    char buf[1024];
    assert_true(n <= sizeof(buf));
    memset(buf, c, n);
    assert_int_equal(write(fd, buf, n), (ssize_t)n);
}

/* Polls `ready` every millisecond for at most DEADLINE_MS. */
static bool until(bool (*ready)(const void *), const void *arg)
{
    for (int i = 0; i < DEADLINE_MS; i++) {
        if (ready(arg))
            return true;
        poll(NULL, 0, 1);
    }
    return ready(arg);
}

static bool log_full(const void *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size == LIMIT;
}

/* The pump has read everything written into the pipe. */
static bool pipe_read(const void *fd)
{
    int n = -1;
    return ioctl(*(const int *)fd, FIONREAD, &n) == 0 && n == 0;
}

static size_t count(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

static void test_dropped_bytes_are_said(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN); /* a pump that died fails a write, no more */
    char tmpl[] = "/tmp/flexq-logpump-XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *path = fq_xasprintf("%s/log", dir);
    int logfd =
        open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_EXCL, 0644);
    assert_true(logfd >= 0);

    /* The pump is started by the first pod, and keeps this limit. */
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = LIMIT;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int ctl = -1, done = -1;
    int out = fq_logpump_start(&ctl, dir, logfd, 1u << 20, &done);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    assert_true(out >= 0);
    close(logfd);

    for (int i = 0; i < 4; i++) /* the log up to the limit exactly */
        put(out, 'A', LIMIT / 4);
    assert_true(until(log_full, path));
    put(out, 'X', 1000); /* past the limit: EFBIG, dropped */
    put(out, 'Y', 1000);
    /* Once the pump has read Y it has tried X (Y may be tried or not). */
    assert_true(until(pipe_read, &out));
    assert_int_equal(truncate(path, 0), 0); /* room again */
    put(out, 'Z', 1000);
    close(out);
    struct pollfd pf = {done, POLLIN, 0};
    assert_int_equal(poll(&pf, 1, DEADLINE_MS), 1);
    char c;
    assert_int_equal(read(done, &c, 1), 0); /* the pump let go of the pod */
    close(done);
    close(ctl); /* the pump exits: its last pod has ended */

    char *log = NULL;
    size_t len = 0;
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(getdelim(&log, &len, '\0', f) > 0, 1);
    fclose(f);
    /* X never reached the log, and the log says so before Z: either Y
     * was written before the pump tried it (1000 dropped) or not (2000) */
    assert_int_equal(count(log, 'X'), 0);
    assert_int_equal(count(log, 'Z'), 1000);
    const char *said = strstr(log, "[flexq: ");
    assert_non_null(said);
    unsigned long long n = 0;
    assert_int_equal(sscanf(said, "[flexq: %llu bytes of output dropped", &n),
                     1);
    assert_int_equal(n + count(log, 'Y'), 2000);
    assert_non_null(strstr(said, " bytes of output dropped: the log could not "
                                 "be written (File too large)]\n"));
    assert_true(said < strchr(log, 'Z'));
    assert_null(strstr(said + 1, "[flexq: ")); /* said once */
    free(log);
    free(path);
    testlib_rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dropped_bytes_are_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
