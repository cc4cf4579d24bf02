/*
 * workload.c - a Workload as the scheduler reads it (struct wl): its
 * podsets and requests, priority, queue order time, node selectors and
 * tolerations against flavors, and the usage of its admission.
 *
 * Two caches live here, both for speed: psviews (the podset view of each
 * distinct spec.podSets, so that a new workload of a known job shape
 * decodes no pod template) and admviews (the usage of each distinct
 * status.admission). Each is keyed by a hash of the very subtree it
 * describes, so a changed subtree is a new key and cannot be served a
 * stale view; both are dropped with the snapshot and capped at
 * VIEWS_MAX. test_kueue's test_shared_podset_views proves a shared view
 * changes no decision. A podset view is also the podsets of every record
 * of its shape (counted references, struct psview): a million pending
 * workloads of a few job shapes hold a few copies, not a million.
 */
#include "flexq/paths.h"
#include "kueue/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kq_wl_release(struct wl *w)
{
    if (w->pv)
        kq_psview_free(w->pv);
    free(w->use_fr);
    free(w->use_amt);
    free(w->avoid_ann);
    free(w->why_msg);
    free(w->replaces);
    free(w->slice);
}

static bool tolerated(const struct fq_taint *t, const struct fq_podspec *ps,
                      const struct fq_resourceflavor *f)
{
    if (t->effect == FQ_EFFECT_PREFER_NO_SCHEDULE)
        return true;
    for (size_t i = 0; i < ps->n_tolerations; i++)
        if (fq_toleration_tolerates(&ps->tolerations[i], t))
            return true;
    for (size_t i = 0; i < f->n_tolerations; i++)
        if (fq_toleration_tolerates(&f->tolerations[i], t))
            return true;
    return false;
}

static bool expr_matches(const struct fq_value *ex, const char *val)
{
    const char *op = fq_value_path_str(ex, "operator", "");
    const struct fq_value *vals = fq_map_get(ex, "values");
    bool in = false;
    for (size_t i = 0; val && i < fq_value_len(vals); i++)
        if (!strcmp(fq_value_as_str(fq_seq_at(vals, i)) ?
                        fq_value_as_str(fq_seq_at(vals, i)) :
                        "",
                    val))
            in = true;
    if (!strcmp(op, "In"))
        return in;
    if (!strcmp(op, "NotIn"))
        return !in;
    if (!strcmp(op, "Exists"))
        return val != NULL;
    if (!strcmp(op, "DoesNotExist"))
        return val == NULL;
    return true;
}

/* nodeSelector and required node affinity, on this flavor's label keys. */
static bool selector_ok(const struct fq_podspec *ps,
                        const struct fq_resourceflavor *f)
{
    for (size_t i = 0; i < ps->node_selector.n; i++) {
        const char *v =
            fq_kvs_get(&f->node_labels, ps->node_selector.items[i].key);
        if (v && strcmp(v, ps->node_selector.items[i].value))
            return false;
    }
    const struct fq_value *terms = fq_value_path(
        ps->affinity, "nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                      "Execution.nodeSelectorTerms");
    if (fq_value_len(terms) == 0)
        return true;
    for (size_t t = 0; t < fq_value_len(terms); t++) {
        const struct fq_value *exs =
            fq_map_get(fq_seq_at(terms, t), "matchExpressions");
        bool ok = true;
        for (size_t i = 0; i < fq_value_len(exs) && ok; i++) {
            const struct fq_value *ex = fq_seq_at(exs, i);
            const char *key = fq_value_path_str(ex, "key", "");
            bool has = false;
            for (size_t l = 0; l < f->node_labels.n; l++)
                if (!strcmp(f->node_labels.items[l].key, key))
                    has = true;
            if (!has)
                continue; /* only this flavor's keys are considered */
            ok = expr_matches(ex, fq_kvs_get(&f->node_labels, key));
        }
        if (ok)
            return true;
    }
    return false;
}

/* Parses "f=until,g=until" into a bit mask of flavors still cooling. */
uint64_t kq_avoid_mask(const struct fq_adm *a, const char *ann, int64_t now,
                       int64_t *next)
{
    uint64_t m = 0;
    if (!ann)
        return 0;
    char *dup = fq_xstrdup(ann), *save = NULL;
    for (char *tok = strtok_r(dup, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        while (*tok == ' ')
            tok++;
        int64_t until = parse_time(eq + 1, 0);
        int f = fq_adm_find_flavor(a, tok);
        if (f >= 0 && until > now) {
            m |= 1ull << f;
            if (until < *next)
                *next = until;
        }
    }
    free(dup);
    return m;
}

/* The time a workload is queued by: its creation (`created`), or the
 * time it was evicted by a check or (timestampEviction) a PodsReady
 * timeout; `ev` is its Evicted condition, or NULL. */
int64_t kq_queue_order_ts(int64_t created, const struct fq_value *ev,
                          const struct fq_engine_config *cfg)
{
    if (cond_is_true(ev)) {
        const char *r = str_at(ev, "reason", "");
        if (!strcmp(r, "AdmissionCheck") ||
            (!strcmp(r, "PodsReadyTimeout") &&
             cfg->pods_ready.timestamp_eviction))
            return parse_time(str_at(ev, "lastTransitionTime", NULL), created);
    }
    return created;
}

/* Public for the visibility API (queue positions use the same order). */
int64_t fq_kueue_queue_order_ts(const struct fq_value *wl,
                                const struct fq_engine_config *cfg)
{
    int64_t created =
        parse_time(fq_value_path_str(wl, FQ_META_CREATED, NULL), 0);
    return kq_queue_order_ts(created, kq_cond_find(wl, "Evicted"), cfg);
}

int32_t kq_priority_of(struct fq_engine *e, const struct fq_workload *v)
{
    if (v->has_priority)
        return (int32_t)v->priority;
    if (v->priority_class_name) {
        const struct fq_value *p = stored(e, FQ_KIND_WORKLOADPRIORITYCLASS, "",
                                          v->priority_class_name);
        if (p)
            return (int32_t)fq_value_path_int(p, "value", 0);
    }
    return 0;
}

/* Fills w's podsets from the decoded view (requests per resource index). */
void kq_wl_podsets(struct snap *s, struct wl *w, const struct fq_workload *v)
{
    int nres = s->adm.nres > 0 ? s->adm.nres : 1;
    struct psview *pv = fq_xcalloc(1, sizeof(*pv));
    pv->refs = 1;
    pv->npodsets =
        (int)(v->n_podsets < FQ_ADM_MAX_PODSETS ? v->n_podsets :
                                                  FQ_ADM_MAX_PODSETS);
    pv->req = fq_xcalloc((size_t)pv->npodsets * (size_t)nres, sizeof(int64_t));
    pv->ps = fq_xcalloc((size_t)pv->npodsets + 1, sizeof(*pv->ps));
    pv->psname = fq_xcalloc((size_t)pv->npodsets + 1, sizeof(*pv->psname));
    w->pv = pv;
    w->ps = pv->ps;
    w->npodsets = (uint8_t)pv->npodsets;
    int64_t *req = pv->req;
    for (int p = 0; p < w->npodsets; p++) {
        const struct fq_podset *ps = &v->podsets[p];
        struct fq_adm_podset *ap = &pv->ps[p];
        pv->psname[p] = fq_xstrdup(ps->name ? ps->name : "main");
        ap->name = pv->psname[p];
        ap->count = (int32_t)ps->count;
        ap->min_count =
            ps->has_min_count ? (int32_t)ps->min_count : (int32_t)ps->count;
        ap->req = &req[p * nres];
        struct fq_resource rs[64];
        size_t nr = fq_podspec_requests(&ps->template.spec, rs, 64);
        if (nr > 64)
            nr = 64;
        for (size_t r = 0; r < nr; r++) {
            int ri = fq_adm_find_resource(&s->adm, rs[r].name);
            if (ri >= 0)
                req[p * nres + ri] = rs[r].value;
            else if (rs[r].value > 0)
                req[p * nres] += 0; /* not covered: see below */
        }
        if (s->have_pods_res) {
            int ri = fq_adm_find_resource(&s->adm, "pods");
            if (ri >= 0)
                req[p * nres + ri] = 1;
        }
        for (int f = 0; f < s->adm.nflv; f++) {
            if (!s->flv[f].exists)
                continue;
            const struct fq_resourceflavor *fv = &s->flv[f].view;
            if (selector_ok(&ps->template.spec, fv))
                ap->selector_ok |= 1ull << f;
            bool ok = true;
            for (size_t t = 0; t < fv->n_node_taints && ok; t++)
                ok = tolerated(&fv->node_taints[t], &ps->template.spec, fv);
            if (ok)
                ap->taint_ok |= 1ull << f;
        }
    }
}

void kq_wl_share_podsets(struct wl *w, struct psview *pv)
{
    pv->refs++;
    w->pv = pv;
    w->ps = pv->ps;
    w->npodsets = (uint8_t)pv->npodsets;
}

char *kq_qname_take(struct kueue *k, const char *name)
{
    struct qname *q = fq_smap_get(&k->qnames, name);
    if (!q) {
        if (k->qnames.n >= VIEWS_MAX)
            fq_smap_clear(&k->qnames); /* the records keep theirs */
        size_t n = strlen(name) + 1;
        q = fq_xmalloc(sizeof(*q) + n);
        memcpy(q->s, name, n);
        q->refs = 1; /* qnames' */
        fq_smap_put(&k->qnames, name, q);
    }
    q->refs++;
    return q->s;
}

void kq_qname_free(void *p)
{
    struct qname *q = p;
    if (--q->refs == 0)
        free(q);
}

void kq_qname_drop(char *s)
{
    if (s)
        kq_qname_free(s - offsetof(struct qname, s));
}

void kq_psview_free(void *p)
{
    struct psview *v = p;
    if (--v->refs > 0)
        return;
    for (int i = 0; i < v->npodsets; i++)
        free(v->psname[i]);
    free(v->psname);
    free(v->ps);
    free(v->req);
    free(v);
}

/* Sets the usage w holds (copies n pairs). */
void kq_wl_set_use(struct wl *w, int n, const uint16_t *fr, const int64_t *amt)
{
    free(w->use_fr);
    free(w->use_amt);
    w->nuse = n;
    w->use_fr = fq_xmalloc(((size_t)n + 1) * sizeof(*w->use_fr));
    w->use_amt = fq_xmalloc(((size_t)n + 1) * sizeof(*w->use_amt));
    memcpy(w->use_fr, fr, (size_t)n * sizeof(*fr));
    memcpy(w->use_amt, amt, (size_t)n * sizeof(*amt));
}

/* The ClusterQueue and the usage an admission holds, from the decoded
 * status.admission. */
void kq_adm_view(struct snap *s, const struct fq_workload *v,
                 struct admview *av)
{
    uint16_t *use_fr = av->use_fr;
    int64_t *use_amt = av->use_amt;
    int nuse = 0;
    av->cq = kq_find_cq(
        s, v->admission_cluster_queue ? v->admission_cluster_queue : "");
    av->assigned_flv = 0;
    for (size_t p = 0; p < v->n_assignments; p++) {
        const struct fq_podset_assignment *pa = &v->assignments[p];
        for (size_t r = 0; r < pa->resource_usage.n; r++) {
            const char *res = pa->resource_usage.items[r].name;
            const char *flv = fq_kvs_get(&pa->flavors, res);
            int ri = fq_adm_find_resource(&s->adm, res);
            int fi = flv ? fq_adm_find_flavor(&s->adm, flv) : -1;
            if (ri < 0 || fi < 0)
                continue;
            av->assigned_flv |= 1ull << fi;
            uint16_t fr = (uint16_t)(fi * s->adm.nres + ri);
            int k = 0;
            while (k < nuse && use_fr[k] != fr)
                k++;
            if (k == nuse) {
                if (nuse >= FQ_ADM_MAX_FLAVORS)
                    continue;
                use_fr[nuse] = fr;
                use_amt[nuse++] = 0;
            }
            use_amt[k] += pa->resource_usage.items[r].value;
        }
    }
    av->nuse = nuse;
}
