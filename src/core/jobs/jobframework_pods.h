/*
 * jobframework_pods.h - Kueue's plain Pod and pod group integration, a
 * part of the jobframework controller (jobframework.c calls in here).
 * See jobframework_pods.c. Private to src/core.
 */
#ifndef FLEXQ_JOBFRAMEWORK_PODS_H
#define FLEXQ_JOBFRAMEWORK_PODS_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/engine.h"
#include "flexq/objstore.h"
#include "flexq/value.h"

/* Label, annotations and gate of Kueue's pod integration. */
#define FQ_LABEL_POD_GROUP     "kueue.x-k8s.io/pod-group-name"
#define FQ_ANN_POD_GROUP_TOTAL "kueue.x-k8s.io/pod-group-total-count"
#define FQ_ANN_POD_RETRIABLE   "kueue.x-k8s.io/retriable-in-group"
#define FQ_LABEL_POD_MANAGED   "kueue.x-k8s.io/managed"
#define FQ_GATE_ADMISSION      "kueue.x-k8s.io/admission"

/* Whether Kueue manages this Pod itself: it has the queue-name label and
 * no controlling owner (a pod of a Job, RayCluster... is its owner's). */
bool fq_jfpods_managed(const struct fq_value *pod);

/* Reconciles the managed Pod `po` and, when it is in a pod group, the
 * whole group: gate, Workload, ungate on admission, stop on eviction,
 * Finished / PodsReady from the pods' phases. */
void fq_jfpods_reconcile(struct fq_engine *e, const struct fq_object *po,
                         int64_t now);

/* Whether Workload `w`, owned by Pods, has lost every owner pod. */
bool fq_jfpods_orphaned(struct fq_engine *e, const struct fq_object *w);

#endif
