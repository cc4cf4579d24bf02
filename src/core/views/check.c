/*
 * check.c - fq_engine_check: every invariant checker of flexq/check.h
 * over one engine, in a fixed order (Kueue's, then capacity's).
 */
#include "flexq/check.h"

size_t fq_engine_check(struct fq_engine *e, struct fq_errlist *out)
{
    return fq_kueue_check(e, out) + fq_capacity_check(e, out);
}
