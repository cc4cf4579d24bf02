/*
 * integrations.c - the table of the job kinds of integrations.h, Kueue's
 * LocalQueue defaulting for them, and the status reading the Kubeflow
 * kinds share.
 *
 * What it does not do: run any kind (jobset.c, pytorchjob.c, mpijob.c, trainjob.c) or
 * keep Workloads (jobframework.c).
 */
#include "jobs/integrations.h"

#include <string.h>

#include "flexq/names.h"
#include "flexq/objstore.h"
#include "flexq/paths.h"
#include "jobs/pods.h"

const struct fq_integration *const fq_integrations[] = {
    &fq_jobset_integration, &fq_pytorchjob_integration, &fq_mpijob_integration,
    &fq_trainjob_integration, NULL};

const struct fq_integration *fq_integration_of(enum fq_kind k)
{
    for (size_t i = 0; fq_integrations[i]; i++)
        if (fq_integrations[i]->kind == k)
            return fq_integrations[i];
    return NULL;
}

const struct fq_integration *fq_integration_named(const char *kind)
{
    for (size_t i = 0; kind && fq_integrations[i]; i++)
        if (!strcmp(fq_kind_info(fq_integrations[i]->kind)->name, kind))
            return fq_integrations[i];
    return NULL;
}

bool fq_integration_default_queue(struct fq_engine *e, enum fq_kind kind,
                                  const char *ns, const char *name)
{
    struct fq_objstore *s = fq_engine_store(e);
    if (!fq_objstore_get(s, FQ_KIND_LOCALQUEUE, ns, "default"))
        return false;
    const struct fq_object *o = fq_objstore_get(s, kind, ns, name);
    if (!o || fq_value_as_str(
                  fq_map_get(fq_meta_labels(o->obj), FQ_LABEL_QUEUE_NAME)))
        return false;
    /* A child of another job is queued with its parent. */
    if (fq_value_len(fq_meta_owners(o->obj)))
        return false;
    struct fq_value *copy = fq_objstore_edit(s, kind, ns, name);
    fq_pods_set_label(copy, FQ_LABEL_QUEUE_NAME, "default");
    bool changed = false;
    fq_objstore_update(s, copy, true, &changed, NULL, NULL);
    return changed;
}

void fq_kubeflow_status(const struct fq_value *job, struct fq_jobstate *st)
{
    const struct fq_value *sts = fq_map_get(job, "status");
    memset(st, 0, sizeof(*st));
    st->msg = "";
    if (fq_pods_cond_true(sts, "Succeeded")) {
        st->finished = st->ok = true;
    } else if (fq_pods_cond_true(sts, "Failed")) {
        st->finished = true;
        st->msg = fq_value_path_str(fq_pods_cond(sts, "Failed"), "message", "");
    }
    st->ready = fq_pods_cond_true(sts, "Running");
}
