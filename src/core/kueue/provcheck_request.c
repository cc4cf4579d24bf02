/*
 * provcheck_request.c - the ProvisioningRequest Kueue's check makes for a
 * workload: which check and config apply (resolve), the podsets that need
 * managed resources, the request's name and attempt, the merged pod
 * templates with the flavor's node selectors and tolerations, and the
 * parameters from the config and the workload's provreq annotations.
 *
 * What it does not do: decide when a request is made or what its state
 * means for the workload (provcheck.c).
 */
#include "kueue/provcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/smap.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

/* Reads check `check` from the store: false when it is not ours; else
 * its config (out->obj NULL when it has none: ours, but not active). */
static bool resolve_stored(struct fq_engine *e, const char *check,
                           struct prc *out)
{
    struct fq_objstore *s = fq_engine_store(e);
    memset(out, 0, sizeof(*out));
    const struct fq_object *ac =
        fq_objstore_get(s, FQ_KIND_ADMISSIONCHECK, "", check);
    if (!ac || strcmp(fq_value_path_str(ac->obj, FQ_AC_CONTROLLER, ""),
                      CONTROLLER_NAME))
        return false;
    const char *name = fq_value_path_str(ac->obj, FQ_AC_PARAMETERS_NAME, NULL);
    const struct fq_object *p =
        name ? fq_objstore_get(s, FQ_KIND_PROVISIONINGREQUESTCONFIG, "", name) :
               NULL;
    out->limit = 3;
    out->base_s = 60;
    out->max_s = 1800;
    if (!p)
        return true; /* ours, but not active */
    out->obj = p->obj;
    out->klass = fq_value_path_str(p->obj, FQ_PR_CLASS, "");
    out->managed = fq_value_path(p->obj, "spec.managedResources");
    const struct fq_value *rs = fq_value_path(p->obj, "spec.retryStrategy");
    out->limit = fq_value_path_int(rs, "backoffLimitCount", 3);
    out->base_s = fq_value_path_int(rs, "backoffBaseSeconds", 60);
    out->max_s = fq_value_path_int(rs, "backoffMaxSeconds", 1800);
    return true;
}

/* resolve_stored() through the list of resolved checks. */
bool pc_resolve(struct provcheck *pc, struct fq_engine *e, const char *check,
                struct prc *out)
{
    for (size_t i = 0; i < pc->nres; i++)
        if (!strcmp(pc->res[i].check, check)) {
            *out = pc->res[i].prc;
            return pc->res[i].ours;
        }
    FQ_GROW(pc->res, pc->capres, pc->nres + 1);
    struct resolved *r = &pc->res[pc->nres++];
    r->check = fq_xstrdup(check);
    r->ours = resolve_stored(e, check, &r->prc);
    *out = r->prc;
    return r->ours;
}

void pc_forget_resolved(struct provcheck *pc)
{
    for (size_t i = 0; i < pc->nres; i++)
        free(pc->res[i].check);
    pc->nres = 0;
}

/* What a reconcile reads of a workload, per check, by member: these
 * run for every workload reconciled (a path would be parsed per read). */
static const struct fq_value *get2(const struct fq_value *v, const char *a,
                                   const char *b)
{
    return fq_map_get(fq_map_get(v, a), b);
}

static const struct fq_value *find_podset(const struct fq_value *wl,
                                          const char *name)
{
    const struct fq_value *ps = get2(wl, "spec", "podSets"); /* FQ_WL_PODSETS */
    for (size_t i = 0; i < fq_value_len(ps); i++) {
        const char *n = fq_value_as_str(fq_map_get(fq_seq_at(ps, i), "name"));
        if (!strcmp(n ? n : "", name))
            return fq_seq_at(ps, i);
    }
    return NULL;
}

/* Does the podset's template ask for a managed resource? */
static bool uses_managed(const struct fq_value *podset,
                         const struct fq_value *managed)
{
    if (fq_value_len(managed) == 0)
        return true;
    const struct fq_value *cs = /* FQ_TEMPLATE_CONTAINERS */
        get2(fq_map_get(podset, "template"), "spec", "containers");
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        const struct fq_value *res = fq_map_get(fq_seq_at(cs, i), "resources");
        const struct fq_value *req = fq_map_get(res, "requests");
        const struct fq_value *lim = fq_map_get(res, "limits");
        for (size_t m = 0; m < fq_value_len(managed); m++) {
            const char *r = fq_value_as_str(fq_seq_at(managed, m));
            if (r && (fq_map_get(req, r) || fq_map_get(lim, r)))
                return true;
        }
    }
    return false;
}

/* Does podset assignment psa go into a request (count > 0, a managed
 * resource asked for)? Sets its podset and admitted count. */
static bool podset_needs(const struct fq_value *wl, const struct fq_value *psa,
                         const struct prc *prc, const struct fq_value **ps,
                         int64_t *count)
{
    const char *name = fq_value_as_str(fq_map_get(psa, "name"));
    *ps = find_podset(wl, name ? name : "");
    const struct fq_value *admitted = fq_map_get(psa, "count");
    *count = admitted && admitted->type == FQ_V_NUM && admitted->u.num.is_int ?
                 admitted->u.num.i :
                 fq_value_path_int(*ps, "count", 1);
    return *ps && *count > 0 && uses_managed(*ps, prc->managed);
}

/* The podset assignments of the workload's reservation that go into a
 * request of the check (podset_needs), in order, found once for the
 * decision that a request is needed, the comparison with the latest
 * request and the new one. Returns how many; *out is `few` (room for
 * nfew) when they fit, else owned. */
size_t pc_needs_of(const struct fq_value *wl, const struct prc *prc,
                   struct need *few, size_t nfew, struct need **out)
{
    const struct fq_value *psas = /* FQ_WL_PODSET_ASSIGNMENTS */
        fq_map_get(get2(wl, "status", "admission"), "podSetAssignments");
    size_t n = 0, len = fq_value_len(psas);
    struct need *v = len <= nfew ? few : fq_xcalloc(len, sizeof(*v));
    for (size_t i = 0; i < fq_value_len(psas); i++) {
        v[n].psa = fq_seq_at(psas, i);
        if (podset_needs(wl, v[n].psa, prc, &v[n].ps, &v[n].count))
            n++;
    }
    *out = v;
    return n;
}

/* v in decimal at out (room for 21 bytes); returns its length. Names
 * and annotations are built by hand where a request is made: snprintf
 * cost more than the rest of their building. */
static size_t put_dec(char *out, int64_t v)
{
    char tmp[21];
    size_t n = 0, len = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10) > 0);
    if (v < 0)
        out[len++] = '-';
    while (n > 0)
        out[len++] = tmp[--n];
    return len;
}

/* The request name: <wl>-<check>-<attempt>, shortened with a hash to 253. */
void pc_request_name(const char *wl, const char *check, int64_t attempt,
                     char *buf, size_t n)
{
    size_t a = strlen(wl), b = strlen(check);
    if (a + b + 23 <= n && a + b + 22 <= 253) {
        memcpy(buf, wl, a);
        buf[a] = '-';
        memcpy(buf + a + 1, check, b);
        buf[a + 1 + b] = '-';
        buf[a + b + 2 + put_dec(buf + a + b + 2, attempt)] = '\0';
        return;
    }
    int len = snprintf(buf, n, "%s-%s-%lld", wl, check, (long long)attempt);
    if (len > 253 && n > 253) {
        uint64_t h = 1469598103934665603ull;
        for (const char *p = buf; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        char tail[64];
        snprintf(tail, sizeof(tail), "-%010llx-%lld",
                 (unsigned long long)(h & 0xffffffffffull), (long long)attempt);
        snprintf(buf + 253 - strlen(tail), strlen(tail) + 1, "%s", tail);
    }
}

/* The ResourceFlavor of a podset assignment: the first of its flavors that
 * exists (one flavor per podset is what a request can express), or NULL. */
const struct fq_value *pc_assigned_flavor(struct fq_engine *e,
                                          const struct fq_value *psa)
{
    const struct fq_value *fl = fq_map_get(psa, "flavors");
    for (size_t i = 0; fl && fl->type == FQ_V_MAP && i < fl->u.map.n; i++) {
        const char *flavor = fq_value_as_str(fl->u.map.items[i].val);
        const struct fq_object *rf =
            flavor ? fq_objstore_get(fq_engine_store(e), FQ_KIND_RESOURCEFLAVOR,
                                     "", flavor) :
                     NULL;
        if (rf)
            return rf->obj;
    }
    return NULL;
}

/* The merged template: flavor nodeLabels and tolerations, limits as
 * requests where no request is given. */
static struct fq_value *merged_template(struct fq_engine *e,
                                        const struct fq_value *podset,
                                        const struct fq_value *psa)
{
    struct fq_value *t = fq_value_clone(fq_map_get(podset, "template"));
    if (!t)
        t = fq_value_map();
    struct fq_value *spec = fq_map_ensure_map(t, "spec");
    const struct fq_value *rf = pc_assigned_flavor(e, psa);
    const struct fq_value *nl = fq_value_path(rf, FQ_RF_NODE_LABELS);
    for (size_t k = 0; nl && nl->type == FQ_V_MAP && k < nl->u.map.n; k++)
        fq_map_set(fq_map_ensure_map(spec, "nodeSelector"),
                   nl->u.map.items[k].key,
                   fq_value_clone(nl->u.map.items[k].val));
    const struct fq_value *tol = fq_value_path(rf, FQ_POD_TOLERATIONS);
    for (size_t k = 0; k < fq_value_len(tol); k++) {
        struct fq_value *seq = fq_map_get(spec, "tolerations");
        if (!seq || seq->type != FQ_V_SEQ) {
            seq = fq_value_seq();
            fq_map_set(spec, "tolerations", seq);
        }
        fq_seq_push(seq, fq_value_clone(fq_seq_at(tol, k)));
    }
    struct fq_value *cs = fq_map_get(spec, "containers");
    for (size_t i = 0; i < fq_value_len(cs); i++) {
        struct fq_value *res = fq_map_ensure_map(fq_seq_at(cs, i), "resources");
        const struct fq_value *lim = fq_map_get(res, "limits");
        for (size_t k = 0; lim && lim->type == FQ_V_MAP && k < lim->u.map.n;
             k++) {
            struct fq_value *req = fq_map_ensure_map(res, "requests");
            if (!fq_map_get(req, lim->u.map.items[k].key))
                fq_map_set(req, lim->u.map.items[k].key,
                           fq_value_clone(lim->u.map.items[k].val));
        }
    }
    return t;
}

/* provreq.kueue.x-k8s.io/... annotations of the workload and its job. */
static void add_params(struct fq_engine *e, const struct fq_value *wl,
                       struct fq_value *params)
{
    const struct fq_value *sources[2] = {wl, NULL};
    const struct fq_value *refs = fq_meta_owners(wl);
    const struct fq_value *r0 = fq_seq_at(refs, 0);
    if (r0) {
        enum fq_kind k = fq_kind_lookup(fq_value_path_str(r0, "kind", ""));
        const struct fq_object *owner =
            k != FQ_KIND_NONE ?
                fq_objstore_get(fq_engine_store(e), k, fq_meta_namespace(wl),
                                fq_value_path_str(r0, "name", "")) :
                NULL;
        if (owner)
            sources[1] = owner->obj;
    }
    for (int s = 1; s >= 0; s--) {
        const struct fq_value *a = fq_meta_annotations(sources[s]);
        for (size_t i = 0; a && a->type == FQ_V_MAP && i < a->u.map.n; i++) {
            const char *key = a->u.map.items[i].key;
            if (strncmp(key, PARAM_PREFIX, strlen(PARAM_PREFIX)) == 0)
                fq_map_set(params, key + strlen(PARAM_PREFIX),
                           fq_value_clone(a->u.map.items[i].val));
        }
    }
}

void pc_create_request(struct provcheck *pc, struct fq_engine *e,
                       const struct fq_object *wl, const char *check,
                       const struct prc *prc, const struct need *needs,
                       size_t nneeds, int64_t attempt, int64_t now)
{
    char name[300];
    pc_request_name(wl->name, check, attempt, name, sizeof(name));
    struct fq_value *o = fq_value_map();
    fq_map_set(o, "apiVersion", fq_value_str("autoscaling.x-k8s.io/v1"));
    fq_map_set(o, "kind", fq_value_str("ProvisioningRequest"));
    struct fq_value *md = fq_map_ensure_map(o, "metadata");
    fq_map_set(md, "name", fq_value_str(name));
    fq_map_set(md, "namespace", fq_value_str(wl->ns));
    fq_map_set(fq_map_ensure_map(md, "labels"), "kueue.x-k8s.io/managed",
               fq_value_str("true"));
    struct fq_value *an = fq_map_ensure_map(md, "annotations");
    fq_map_set(an, ANN_WORKLOAD, fq_value_str(wl->name));
    fq_map_set(an, ANN_CHECK, fq_value_str(check));
    char num[24];
    fq_map_set(an, ANN_ATTEMPT, fq_value_strn(num, put_dec(num, attempt)));
    struct fq_value *refs = fq_value_seq();
    struct fq_value *ref = fq_value_map();
    fq_map_set(ref, "apiVersion",
               fq_value_str(fq_value_path_str(wl->obj, "apiVersion",
                                              "kueue.x-k8s.io/v1beta1")));
    fq_map_set(ref, "kind", fq_value_str("Workload"));
    fq_map_set(ref, "name", fq_value_str(wl->name));
    fq_map_set(ref, "uid", fq_value_str(fq_meta_uid(wl->obj)));
    fq_map_set(ref, "controller", fq_value_bool(true));
    fq_seq_push(refs, ref);
    fq_map_set(md, "ownerReferences", refs);
    struct fq_value *spec = fq_map_ensure_map(o, "spec");
    fq_map_set(spec, "provisioningClassName", fq_value_str(prc->klass));
    struct fq_value *params = fq_value_map();
    const struct fq_value *pp = fq_value_path(prc->obj, FQ_AC_PARAMETERS);
    for (size_t i = 0; pp && pp->type == FQ_V_MAP && i < pp->u.map.n; i++)
        fq_map_set(params, pp->u.map.items[i].key,
                   fq_value_clone(pp->u.map.items[i].val));
    add_params(e, wl->obj, params);
    if (fq_value_len(params))
        fq_map_set(spec, "parameters", params);
    else
        fq_value_free(params);
    struct fq_value *sets = fq_value_seq();
    for (size_t i = 0; i < nneeds; i++) {
        const char *psname = fq_value_path_str(needs[i].psa, "name", "");
        struct fq_value *set = fq_value_map();
        size_t nl = strlen(name), pl = strlen(psname);
        char ppt[600];
        struct fq_value *pref;
        if (nl + pl + 5 <= sizeof(ppt)) {
            memcpy(ppt, "ppt-", 4);
            memcpy(ppt + 4, name, nl);
            ppt[4 + nl] = '-';
            memcpy(ppt + 5 + nl, psname, pl);
            pref = fq_value_strn(ppt, nl + pl + 5);
        } else {
            pref = fq_value_strf("ppt-%s-%s", name, psname);
        }
        fq_map_set(fq_map_ensure_map(set, "podTemplateRef"), "name", pref);
        fq_map_set(set, "count", fq_value_int(needs[i].count));
        fq_map_set(set, "podSetName", fq_value_str(psname));
        fq_map_set(set, "template",
                   merged_template(e, needs[i].ps, needs[i].psa));
        fq_seq_push(sets, set);
    }
    fq_map_set(spec, "podSets", sets);
    char uid[40];
    fq_hex_put(uid, fq_engine_rand(e), 16);
    memcpy(uid + 16, "-preq", 6);
    if (fq_objstore_create(fq_engine_store(e), o, now, uid, NULL, NULL) == 0) {
        pc->created++;
        fq_engine_event(e, wl->obj, "Normal", "ProvisioningRequestCreated",
                        "Created ProvisioningRequest: \"%s\"", name);
    }
}
