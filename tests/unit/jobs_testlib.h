/*
 * jobs_testlib.h - helpers shared by the jobs tests (test_job.c,
 * test_pods.c, test_binder.c, test_raycluster.c, test_rayjob.c).
 *
 * Each test builds an engine, applies objects written as YAML (users'
 * objects go through fq_engine_apply and its validation; Nodes, which a
 * provider makes, go straight into the store), settles it at an injected
 * time, and plays the runner with fq_engine_pod_update. Static functions
 * in a header so that each test stays one file and one executable.
 */
#ifndef FLEXQ_JOBS_TESTLIB_H
#define FLEXQ_JOBS_TESTLIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/engine.h"
#include "flexq/objstore.h"
#include "flexq/value.h"
#include "jobs/pods.h"
#include "yaml_testlib.h"

#define T0 1764431040000LL /* 2025-11-29T15:44:00Z */

static inline struct fq_engine *tl_engine(void)
{
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = 42;
    cfg.sim_provider = false; /* nodes come from the test, as from a provider */
    return fq_engine_new(&cfg);
}

static inline struct fq_value *tl_parse(const char *yaml)
{
    return testlib_yaml1(yaml);
}

/* Applies a user object (validated), asserting success. */
static inline void tl_apply(struct fq_engine *e, const char *yaml, int64_t now)
{
    struct fq_err err = {0};
    int rc = fq_engine_apply(e, tl_parse(yaml), now, NULL, NULL, &err);
    if (rc != 0)
        fprintf(stderr, "apply: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

/* Stores an object as a controller or provider would (no validation). */
static inline void tl_store(struct fq_engine *e, const char *yaml, int64_t now)
{
    struct fq_err err = {0};
    char uid[40];
    fq_pods_uid(e, uid);
    int rc = fq_objstore_create(fq_engine_store(e), tl_parse(yaml), now, uid,
                                NULL, &err);
    if (rc != 0)
        fprintf(stderr, "store: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

/* A Ready node with cpu / memory / TPU and optional extra YAML lines for
 * labels (under metadata.labels) and taints (under spec.taints). */
static inline void tl_node(struct fq_engine *e, const char *name,
                           const char *cpu, const char *mem, int tpu,
                           const char *labels, const char *taints)
{
    char *y = fq_xasprintf(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n"
        "  labels:\n    kubernetes.io/hostname: %s\n%s"
        "spec:\n  taints:%s"
        "status:\n  allocatable:\n    cpu: \"%s\"\n    memory: %s\n"
        "    google.com/tpu: \"%d\"\n    pods: \"110\"\n"
        "  conditions:\n  - type: Ready\n    status: \"True\"\n",
        name, name, labels ? labels : "", taints ? taints : " []\n", cpu, mem,
        tpu);
    tl_store(e, y, T0);
    free(y);
}

static inline const struct fq_value *tl_get(struct fq_engine *e,
                                            enum fq_kind kind, const char *ns,
                                            const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), kind, ns, name);
    return o ? o->obj : NULL;
}

/* Names of the pods (in name order) whose ownerReference is kind/name;
 * returns how many; names are borrowed until the next store change. */
static inline size_t tl_pods(struct fq_engine *e, const char *ns,
                             const char *owner_kind, const char *owner,
                             const char **names, size_t max)
{
    const struct fq_object **objs = NULL;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_POD, ns, &objs);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!fq_pods_owned_by(objs[i]->obj, owner_kind, owner, NULL))
            continue;
        if (m < max)
            names[m] = objs[i]->name;
        m++;
    }
    free(objs);
    return m;
}

static inline void tl_report(struct fq_engine *e, const char *ns,
                             const char *pod, const char *phase, bool ready,
                             int exit_code, const char *reason, int64_t now)
{
    struct fq_pod_report r = {phase, ready, exit_code, reason, NULL};
    struct fq_err err = {0};
    char *name = fq_xstrdup(pod);
    int rc = fq_engine_pod_update(e, ns, name, &r, now, &err);
    if (rc != 0)
        fprintf(stderr, "pod_update %s: %s\n", name, err.msg);
    assert_int_equal(rc, 0);
    free(name);
}

/* The value of env `name` in a pod's first container, or NULL. */
static inline const char *tl_env(const struct fq_value *pod, const char *name)
{
    const struct fq_value *env = fq_value_path(
        fq_seq_at(fq_value_path(pod, "spec.containers"), 0), "env");
    for (size_t i = 0; i < fq_value_len(env); i++) {
        const struct fq_value *ev = fq_seq_at(env, i);
        if (strcmp(fq_value_path_str(ev, "name", ""), name) == 0)
            return fq_value_path_str(ev, "value", NULL);
    }
    return NULL;
}

/* The status / reason of condition `type` of an object, "" when absent. */
static inline const char *tl_cond(const struct fq_value *obj, const char *type,
                                  const char *field)
{
    const struct fq_value *c = fq_pods_cond(fq_map_get(obj, "status"), type);
    return c ? fq_value_path_str(c, field, "") : "";
}

#endif
