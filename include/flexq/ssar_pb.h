/*
 * ssar_pb.h - the protobuf encoding of the two self reviews kubectl sends
 * (kubectl 1.32+ sends built-in kinds as application/vnd.kubernetes.
 * protobuf), decoded into the JSON shape the API handles.
 *
 * Input: Kubernetes' envelope ("k8s\0" then runtime.Unknown{typeMeta=1,
 * raw=2, contentEncoding=3, contentType=4}) around a
 * SelfSubjectAccessReview{metadata=1, spec=2{resourceAttributes=1{
 * namespace=1, verb=2, group=3, version=4, resource=5, subresource=6,
 * name=7}, nonResourceAttributes=2{path=1, verb=2}}}.
 * Output: {"spec": {"resourceAttributes": {...}}} with the string fields
 * present. Unknown fields are skipped; malformed input (truncated
 * varints or lengths, wire types 3/4, nesting past what is above, a
 * string over FQ_PB_MAX_STR bytes, input over FQ_PB_MAX_INPUT bytes) is
 * FQ_EPARSE naming the byte offset.
 */
#ifndef FLEXQ_SSAR_PB_H
#define FLEXQ_SSAR_PB_H

#include <stddef.h>

#include "flexq/err.h"
#include "flexq/value.h"

#define FQ_PB_MAX_INPUT (64u << 10)
#define FQ_PB_MAX_STR   4096

int fq_ssar_from_protobuf(const char *buf, size_t len, struct fq_value **out,
                          struct fq_err *err);

#endif
