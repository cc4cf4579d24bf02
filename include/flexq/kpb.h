/*
 * kpb.h - reads Kubernetes protobuf bodies ("k8s\0" + runtime.Unknown)
 * of the core kinds kubectl sends that way (ConfigMap, Namespace,
 * Secret, Pod, Service, batch/v1 Job) into the tree a JSON body would give.
 */
#ifndef FLEXQ_KPB_H
#define FLEXQ_KPB_H

#include <stddef.h>

#include "flexq/err.h"
#include "flexq/value.h"

#define FQ_KPB_MAX_BYTES   (4 * 1024 * 1024)
#define FQ_KPB_MAX_ENTRIES 100000

/* Decodes a body. Returns 0 with *out owned by the caller; FQ_EPARSE for
 * malformed bytes, FQ_ELIMIT past the caps, FQ_EUNSUPPORTED for a kind
 * (or a content encoding) it does not read. */
int fq_kpb_decode(const void *data, size_t len, struct fq_value **out,
                  struct fq_err *err);

#endif
