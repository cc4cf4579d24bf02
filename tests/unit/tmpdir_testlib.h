/*
 * tmpdir_testlib.h - scratch directories for the tests that write files
 * (test_logs.c, test_provider.c, test_runner.c): make one under /tmp,
 * run a helper program (mkdir -p, rm -rf) without a shell, remove it.
 * Static inline functions in a header so that each test stays one file.
 */
#ifndef FLEXQ_TMPDIR_TESTLIB_H
#define FLEXQ_TMPDIR_TESTLIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs argv[0] with argv (no shell, no PATH search) and waits for it. */
static inline void testlib_run(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
}

static inline void testlib_rm_rf(const char *path)
{
    char *argv[] = {(char *)"/bin/rm", (char *)"-rf", (char *)path, NULL};
    testlib_run(argv);
}

/* Makes a fresh /tmp/PREFIX-XXXXXX into dir (size bytes); fails the test
 * when it cannot. */
static inline void testlib_mkdtemp(char *dir, size_t size, const char *prefix)
{
    snprintf(dir, size, "/tmp/%s-XXXXXX", prefix);
    assert_non_null(mkdtemp(dir));
}

#endif
