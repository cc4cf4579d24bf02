/*
 * tmpdir_testlib.h - files for the tests: scratch directories for those
 * that write files (test_logs.c, test_provider.c, test_runner.c: make one
 * under /tmp, run a helper program such as mkdir -p without a shell,
 * remove it) and reading a whole fixture (test_manifest.c, test_yaml.c).
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

#include "flexq/buf.h"

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

/* All of file `path` (owned, NUL-terminated; *len without the NUL when len
 * is not NULL), or NULL when it cannot be opened. */
static inline char *testlib_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct fq_buf b = FQ_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fq_buf_append(&b, chunk, n);
    fclose(f);
    if (len)
        *len = b.len;
    return fq_buf_detach(&b);
}

#endif
