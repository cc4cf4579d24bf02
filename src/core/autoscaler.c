/*
 * autoscaler.c - the cluster autoscaler (skeleton; filled in below).
 */
#include "capacity.h"

void fq_autoscaler_run(struct fq_capacity *st, struct fq_engine *e)
{
    (void)st;
    (void)e;
}
