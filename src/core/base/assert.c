/*
 * assert.c - the failure path of FQ_ASSERT (flexq/assert.h).
 *
 * The one place the core writes to stderr: an invariant has failed, the
 * process is about to abort, and the message is all a person will have.
 */
#include "flexq/assert.h"

#include <stdio.h>
#include <stdlib.h>

void fq_assert_fail(const char *cond, const char *file, int line,
                    const char *func)
{
    fprintf(stderr, "flexq: invariant failed: %s (%s:%d, %s)\n", cond, file,
            line, func);
    fflush(stderr);
    abort();
}
