/*
 * objects_core.c - decoders (= validators) of the Kubernetes kinds flexq
 * keeps: Job (batch/v1), ConfigMap, Pod, Node, Event, Namespace (v1).
 *
 * The rules are Kubernetes' own, reduced to what flexq reads: a Job's pod
 * template restarts Never or OnFailure; Indexed needs completions; a
 * ConfigMap's keys are config keys, never in both data and binaryData, the
 * whole at most 1 MiB; an Event names the object it is about; a Namespace
 * name is a DNS-1123 label. Status sections, written by controllers, are
 * decoded leniently (types only).
 */
#include <string.h>

#include "objects/objects_internal.h"

/* --- Job ------------------------------------------------------------------- */

int fq_job_decode(const struct fq_value *obj, const char *file,
                  struct fq_job *out, struct fq_errlist *errs)
{
    static const char *const modes[] = {"NonIndexed", "Indexed", NULL};
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_JOB, &out->mem, &out->meta) ==
        0) {
        check_kueue_labels(&c, &out->meta);
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        size_t old = path_key(&c, "spec");
        out->parallelism =
            want_int(&c, spec, "parallelism", 1, 0, FQ_INT32_MAX, NULL);
        bool has_completions = false;
        out->completions = want_int(&c, spec, "completions", 1, 0, FQ_INT32_MAX,
                                    &has_completions);
        out->backoff_limit =
            want_int(&c, spec, "backoffLimit", 6, 0, FQ_INT32_MAX, NULL);
        out->active_deadline_seconds =
            want_int(&c, spec, "activeDeadlineSeconds", 0, 1, INT64_MAX,
                     &out->has_active_deadline);
        out->suspend = want_bool(&c, spec, "suspend", false);
        out->indexed = want_enum(&c, spec, "completionMode", modes, 0) == 1;
        if (out->indexed && spec && !has_completions &&
            !field(spec, "completions"))
            derr_key(&c, field(spec, "completionMode"), "completionMode",
                     "Indexed needs spec.completions");
        out->ttl_seconds_after_finished =
            want_int(&c, spec, "ttlSecondsAfterFinished", 0, 0, FQ_INT32_MAX,
                     &out->has_ttl);
        if (spec)
            want_podtemplate(&c, spec, "template", true, &out->template);
        const struct fq_value *tspec =
            fq_value_path(field(spec, "template"), "spec");
        if (tspec && tspec->type == FQ_V_MAP) {
            const struct fq_value *rp = field(tspec, "restartPolicy");
            size_t o2 = path_key(&c, "template");
            path_key(&c, "spec");
            if (!rp)
                derr_key(&c, tspec, "restartPolicy",
                         "required field is missing (a Job's pods restart "
                         "Never or OnFailure)");
            else if (rp->type == FQ_V_STR && strcmp(rp->u.str.s, "Always") == 0)
                derr_key(&c, rp, "restartPolicy",
                         "unsupported value \"Always\": must be one of "
                         "OnFailure, Never");
            path_pop(&c, o2);
        }
        path_pop(&c, old);
        const struct fq_value *st = want_map(&c, obj, "status", false);
        if (st) {
            size_t o2 = path_key(&c, "status");
            out->active = want_int(&c, st, "active", 0, 0, INT64_MAX, NULL);
            out->succeeded =
                want_int(&c, st, "succeeded", 0, 0, INT64_MAX, NULL);
            out->failed = want_int(&c, st, "failed", 0, 0, INT64_MAX, NULL);
            want_conditions(&c, st, "conditions", &out->conditions);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_job_release(struct fq_job *v)
{
    objmem_free(&v->mem);
}

/* --- ConfigMap ------------------------------------------------------------- */

#define CONFIGMAP_MAX (1024 * 1024)

int fq_configmap_decode(const struct fq_value *obj, const char *file,
                        struct fq_configmap *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_CONFIGMAP, &out->mem,
                   &out->meta) == 0) {
        want_kvs(&c, obj, "data", KVS_CONFIG, 0, &out->data);
        want_kvs(&c, obj, "binaryData", KVS_CONFIG, 0, &out->binary_data);
        out->immutable = want_bool(&c, obj, "immutable", false);
        size_t total = 0;
        for (size_t i = 0; i < out->data.n; i++)
            total += strlen(out->data.items[i].key) +
                     strlen(out->data.items[i].value);
        for (size_t i = 0; i < out->binary_data.n; i++) {
            const char *k = out->binary_data.items[i].key;
            total += strlen(k) + strlen(out->binary_data.items[i].value);
            if (fq_kvs_get(&out->data, k)) {
                size_t old = path_key(&c, "binaryData");
                derr_key(&c, fq_map_get(field(obj, "binaryData"), k), k,
                         "key \"%s\" is also in data", k);
                path_pop(&c, old);
            }
        }
        if (total > CONFIGMAP_MAX)
            derr(&c, field(obj, "data"),
                 "data and binaryData hold %zu bytes; a ConfigMap holds at "
                 "most %d",
                 total, CONFIGMAP_MAX);
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_configmap_release(struct fq_configmap *v)
{
    objmem_free(&v->mem);
}

/* --- Pod -------------------------------------------------------------------- */

int fq_pod_decode(const struct fq_value *obj, const char *file,
                  struct fq_pod *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_POD, &out->mem, &out->meta) ==
        0) {
        check_kueue_labels(&c, &out->meta);
        const struct fq_value *spec = want_map(&c, obj, "spec", true);
        if (spec) {
            size_t old = path_key(&c, "spec");
            decode_podspec(&c, spec, &out->spec);
            path_pop(&c, old);
        }
        const struct fq_value *st = want_map(&c, obj, "status", false);
        if (st) {
            size_t o2 = path_key(&c, "status");
            out->phase = want_str(&c, st, "phase", false);
            out->pod_ip = want_str(&c, st, "podIP", false);
            out->host_ip = want_str(&c, st, "hostIP", false);
            want_conditions(&c, st, "conditions", &out->conditions);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_pod_release(struct fq_pod *v)
{
    objmem_free(&v->mem);
}

/* --- Node ------------------------------------------------------------------- */

int fq_node_decode(const struct fq_value *obj, const char *file,
                   struct fq_node *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_NODE, &out->mem, &out->meta) ==
        0) {
        const struct fq_value *spec = want_map(&c, obj, "spec", false);
        size_t old = path_key(&c, "spec");
        out->unschedulable = want_bool(&c, spec, "unschedulable", false);
        want_taints(&c, spec, "taints", 0, &out->taints, &out->n_taints);
        out->provider_id = want_str(&c, spec, "providerID", false);
        path_pop(&c, old);
        const struct fq_value *st = want_map(&c, obj, "status", false);
        if (st) {
            size_t o2 = path_key(&c, "status");
            want_resources(&c, st, "capacity", false, &out->capacity);
            want_resources(&c, st, "allocatable", false, &out->allocatable);
            want_conditions(&c, st, "conditions", &out->conditions);
            path_pop(&c, o2);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_node_release(struct fq_node *v)
{
    objmem_free(&v->mem);
}

/* --- Event ------------------------------------------------------------------ */

int fq_event_decode(const struct fq_value *obj, const char *file,
                    struct fq_event *out, struct fq_errlist *errs)
{
    static const char *const types[] = {"Normal", "Warning", NULL};
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_EVENT, &out->mem, &out->meta) ==
        0) {
        const struct fq_value *io = want_map(&c, obj, "involvedObject", true);
        if (io) {
            size_t old = path_key(&c, "involvedObject");
            out->involved_kind = want_str(&c, io, "kind", true);
            out->involved_name = want_str(&c, io, "name", true);
            out->involved_namespace = want_str(&c, io, "namespace", false);
            out->involved_uid = want_str(&c, io, "uid", false);
            path_pop(&c, old);
        }
        out->reason = want_str(&c, obj, "reason", false);
        out->message = want_str(&c, obj, "message", false);
        out->type = types[want_enum(&c, obj, "type", types, 0)];
        out->count = want_int(&c, obj, "count", 1, 0, FQ_INT32_MAX, NULL);
        out->first_timestamp = want_str(&c, obj, "firstTimestamp", false);
        out->last_timestamp = want_str(&c, obj, "lastTimestamp", false);
        const struct fq_value *src = want_map(&c, obj, "source", false);
        if (src) {
            size_t old = path_key(&c, "source");
            out->source_component = want_str(&c, src, "component", false);
            path_pop(&c, old);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_event_release(struct fq_event *v)
{
    objmem_free(&v->mem);
}

/* --- Namespace -------------------------------------------------------------- */

int fq_namespace_decode(const struct fq_value *obj, const char *file,
                        struct fq_namespace *out, struct fq_errlist *errs)
{
    struct dctx c;
    memset(out, 0, sizeof(*out));
    if (dctx_begin(&c, obj, file, errs, FQ_KIND_NAMESPACE, &out->mem,
                   &out->meta) == 0) {
        const struct fq_value *st = want_map(&c, obj, "status", false);
        if (st) {
            size_t old = path_key(&c, "status");
            out->phase = want_str(&c, st, "phase", false);
            path_pop(&c, old);
        }
    }
    return dctx_end(&c, out, sizeof(*out), &out->mem);
}

void fq_namespace_release(struct fq_namespace *v)
{
    objmem_free(&v->mem);
}
