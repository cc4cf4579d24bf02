/*
 * capacity_testlib.h - helpers shared by the capacity tests
 * (test_provreq.c, test_provcheck.c, test_autoscaler.c).
 *
 * Each test builds an engine with the sim provider, applies objects written
 * as YAML (multi-document allowed) through fq_engine_apply, moves an
 * injected clock forward through every wakeup the engine asks for, and reads
 * fields of stored objects by path. Static functions in a header so each
 * test stays one file and one executable.
 */
#ifndef FLEXQ_CAPACITY_TESTLIB_H
#define FLEXQ_CAPACITY_TESTLIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/engine.h"
#include "flexq/objstore.h"
#include "flexq/value.h"

#define CT0 1767225600000LL /* 2026-01-01T00:00:00Z */
#define SEC 1000LL

static inline struct fq_engine *ct_engine(bool no_pods, bool kueue_policy)
{
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = 7;
    cfg.no_pods = no_pods;
    cfg.sim_provider = true;
    if (kueue_policy)
        cfg.policy = fq_policy_kueue();
    return fq_engine_new(&cfg);
}

/* Applies every document of a YAML stream, asserting success. */
static inline void ct_apply(struct fq_engine *e, const char *yaml, int64_t now)
{
    struct fq_docs docs = {0};
    struct fq_limits lim = fq_limits_default();
    struct fq_err err = {0};
    int rc = fq_yaml_parse(yaml, strlen(yaml), "test", &lim, &docs, &err);
    if (rc != 0)
        fail_msg("yaml: %s", err.msg);
    for (size_t i = 0; i < docs.n; i++) {
        rc = fq_engine_apply(e, docs.items[i], now, NULL, NULL, &err);
        docs.items[i] = NULL;
        if (rc != 0)
            fail_msg("apply: %s", err.msg);
    }
    docs.n = 0;
    fq_docs_release(&docs);
}

/* Runs the engine at every wakeup up to and including `to`. */
static inline void ct_run_to(struct fq_engine *e, int64_t to)
{
    for (int guard = 0; guard < 100000; guard++) {
        int64_t w = fq_engine_next_wakeup(e);
        if (w > to)
            break;
        fq_engine_run(e, w > fq_engine_now(e) ? w : fq_engine_now(e));
        if (w <= fq_engine_now(e) && fq_engine_next_wakeup(e) <= w)
            break; /* nothing moved: do not spin */
    }
    fq_engine_run(e, to);
}

static inline const struct fq_value *ct_get(struct fq_engine *e,
                                            enum fq_kind kind, const char *ns,
                                            const char *name)
{
    const struct fq_object *o =
        fq_objstore_get(fq_engine_store(e), kind, ns, name);
    return o ? o->obj : NULL;
}

/* The status.conditions[type] field `field`, or NULL. */
static inline const char *ct_cond(const struct fq_value *obj, const char *type,
                                  const char *field)
{
    const struct fq_value *cs = fq_value_path(obj, "status.conditions");
    for (size_t i = 0; i < fq_value_len(cs); i++)
        if (!strcmp(fq_value_path_str(fq_seq_at(cs, i), "type", ""), type))
            return fq_value_path_str(fq_seq_at(cs, i), field, NULL);
    return NULL;
}

/* Nodes carrying label key=value. */
static inline size_t ct_count_nodes(struct fq_engine *e, const char *pool)
{
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_NODE, NULL, &list);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = fq_value_as_str(
            fq_map_get(fq_value_path(list[i]->obj, "metadata.labels"),
                       "cloud.google.com/gke-nodepool"));
        k += p && !strcmp(p, pool);
    }
    free(list);
    return k;
}

/* Events with a reason (any object). */
static inline size_t ct_count_events(struct fq_engine *e, const char *reason)
{
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_EVENT, NULL, &list);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += !strcmp(fq_value_path_str(list[i]->obj, "reason", ""), reason);
    free(list);
    return k;
}

#endif
