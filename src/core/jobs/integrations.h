/*
 * integrations.h - the job kinds Kueue's jobframework queues beyond
 * RayJob, RayCluster, batch Job and plain Pods: JobSet, PyTorchJob,
 * MPIJob and TrainJob (LeaderWorkerSet, admitted per group, is lws.c's).
 *
 * Each kind gives jobframework.c one row of ops (struct fq_integration):
 * the Workload's name prefix, where the job's suspend flag lives, its
 * podsets, the pod template behind each podset (for merging the admitted
 * flavors in and restoring them on eviction) and how to read its status.
 * The controller that runs the kind (jobset.c, pytorchjob.c, mpijob.c, trainjob.c)
 * is a separate fq_controller_ops in engine/controllers.h.
 *
 * Private to src/core/jobs.
 */
#ifndef FLEXQ_JOBS_INTEGRATIONS_H
#define FLEXQ_JOBS_INTEGRATIONS_H

#include <stdbool.h>

#include "flexq/kinds.h"
#include "flexq/value.h"

/* What the jobframework reads of a job's status. */
struct fq_jobstate {
    bool finished, ok; /* finished: Succeeded (ok) or Failed */
    bool ready;        /* every pod is running (Workload PodsReady) */
    const char *msg;   /* borrowed from the job; "" when none */
};

struct fq_integration {
    enum fq_kind kind;
    const char *prefix;       /* Workload name prefix: "jobset" */
    const char *suspend_path; /* "spec.suspend", "spec.runPolicy.suspend" */
    /* Kueue's podsets of the job; returns owned (a sequence). */
    struct fq_value *(*podsets)(const struct fq_value *job);
    /* The pod template of podset `ps`, borrowed from job; NULL if none. */
    struct fq_value *(*template_of)(struct fq_value *job, const char *ps);
    void (*status)(const struct fq_value *job, struct fq_jobstate *st);
};

extern const struct fq_integration fq_jobset_integration;
extern const struct fq_integration fq_pytorchjob_integration;
extern const struct fq_integration fq_mpijob_integration;
extern const struct fq_integration fq_trainjob_integration;

/* The row of kind k, or NULL when k is not one of these kinds. */
const struct fq_integration *fq_integration_of(enum fq_kind k);
/* The row whose kind is named `kind` ("JobSet"), or NULL. */
const struct fq_integration *fq_integration_named(const char *kind);
/* Every row, NULL-terminated. */
extern const struct fq_integration *const fq_integrations[];

/*
 * Kueue's LocalQueue defaulting: a job of these kinds without the
 * queue-name label, in a namespace that has a LocalQueue named "default",
 * is queued there (the label is written on the job, as Kueue's webhook
 * writes it). Returns true when it wrote the label.
 */
struct fq_engine;
bool fq_integration_default_queue(struct fq_engine *e, enum fq_kind kind,
                                  const char *ns, const char *name);

/* --- helpers the integration controllers share ------------------------ */

/* Whether a Kubeflow job (PyTorchJob, MPIJob) has condition Succeeded or
 * Failed, and the last condition's message. */
void fq_kubeflow_status(const struct fq_value *job, struct fq_jobstate *st);

#endif
