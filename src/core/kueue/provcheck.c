/*
 * provcheck.c - the "provcheck" controller: Kueue's ProvisioningRequest
 * admission check controller (controllerName
 * kueue.x-k8s.io/provisioning-request), as kueue.md section 3 describes.
 *
 * How it works. For every Workload whose status.admissionChecks lists a
 * check handled here (its AdmissionCheck has our controllerName and its
 * parameters name a ProvisioningRequestConfig):
 *
 *   - nothing happens before quota is reserved (QuotaReserved=True with
 *     status.admission);
 *   - a request is needed only when some assigned podset with count > 0
 *     asks for one of the config's managedResources (all podsets when the
 *     list is empty); otherwise the check is Ready at once;
 *   - the request `<workload>-<check>-<attempt>` is created with the
 *     config's class and parameters, plus the workload's (or its job's)
 *     `provreq.kueue.x-k8s.io/...` annotations, which win; one podSet per
 *     needing podset, count as admitted, and the podset's template with
 *     the assigned flavor's nodeLabels (as nodeSelector) and tolerations
 *     merged in and limits copied to requests. Event
 *     ProvisioningRequestCreated;
 *   - the latest attempt's conditions become the check's state, first
 *     matching row wins:
 *
 *       request condition   workload not Admitted      workload Admitted
 *       Failed              Retry (attempt <= backoffLimitCount, with
 *                           requeueAfterSeconds = min(base*2^(attempt-1),
 *                           max)), else Rejected       same
 *       CapacityRevoked     Rejected                   Rejected
 *       BookingExpired      like Failed                ignored
 *       Provisioned         Ready + podSetUpdates      stays Ready
 *       Accepted            Pending, message = Provisioned's message
 *       none                Pending
 *
 *   - a new attempt (last + 1) is created only when the latest is Failed
 *     (or BookingExpired before admission), its failure was reported as
 *     Retry, the check is Pending again and quota is reserved again (the
 *     eviction and backoff cycle of the kueue controller happened);
 *   - requests of a finished or deleted workload are deleted; requests
 *     still waiting when their workload loses its quota are deleted;
 *   - while quota is reserved, a live request (not Failed, BookingExpired
 *     or CapacityRevoked) is kept only if it is the latest attempt of a
 *     check that status.admissionChecks still lists, that is ours and
 *     active and needs a request, and (check not Ready) it was made for
 *     the current reservation: same podsets, counts, flavor node labels
 *     and class. Others are deleted, as Kueue's
 *     deleteUnusedProvisioningRequests does: above all the request of a
 *     workload that migrate_to_preferred_flavor moved off the dws flavor
 *     (the check is dropped), whose nodes would otherwise idle until the
 *     booking expires. controller.c writes status.admission and the checks for
 *     its flavors in one update, so the list is never stale while quota
 *     is reserved; no check list is read without a reservation;
 *   - a new request never reuses a name that Nodes still carry (a deleted
 *     request's booting or unneeded nodes): the attempt number is bumped.
 *
 * Check state machine (per workload and check):
 *
 *            create attempt N           Provisioned=True
 *   Pending --------------------> Pending ---------------> Ready
 *      ^                             |  Failed / BookingExpired
 *      | kueue: evict, backoff,      v  (N <= limit)
 *      | requeue, reserve again    Retry -----> (N > limit, or
 *      +--------------------------------+       CapacityRevoked) Rejected
 *
 * Invariants:
 *  1. At most one non-terminal request per (workload, check), and none
 *     for a check the reserved workload no longer lists.
 *  2. Attempt numbers only grow: earlier attempts' finished requests are
 *     kept while the workload lives, so the number (and the retry limit)
 *     survives Kueue dropping a flavor-scoped check's retryCount when the
 *     admission is cleared (kueue.md 2.8 item 10). Kueue >= 0.19 deletes
 *     them on eviction instead; flexq keeps them, terminal and nodeless.
 *  3. Only state, message, lastTransitionTime, requeueAfterSeconds and
 *     podSetUpdates of our checks are written; conditions, quota and
 *     eviction belong to the kueue controller.
 *
 * What a run costs. A run reconciles only the workloads marked since the
 * last one (they, or one of their requests, changed, other than by this
 * controller's own status write or deletion), in the order of
 * their "ns/name" keys, or, after an AdmissionCheck or
 * ProvisioningRequestConfig changed, every workload by namespace then
 * name. It finds a workload's requests in an index kept between runs:
 * workload -> its requests (check, attempt, name, live), which on_change
 * updates from every ProvisioningRequest notice (ADDED and MODIFIED
 * record the request as stored, DELETED forgets it). Orphans, requests
 * naming a workload that does not exist, are looked for only among the
 * workloads deleted, or named by a request while absent, since the last
 * run. Which request names Nodes still carry, asked when a request is
 * created, comes from a count kept the same way from the Nodes'
 * notices, which start no run. The first run builds both from the store
 * and looks at every workload a request names, as objects may have been
 * restored before the controller watched.
 *
 * Invariants of the index:
 *  4. At a run's start it holds exactly the stored requests that carry
 *     flexq.dev/workload, and the node count exactly the stored Nodes'
 *     annotations: the engine dispatches every notice before a run.
 *     During a run only `gone` changes (set by each delete; the DELETED
 *     notice removes the entry after the run); the requests a run
 *     creates enter with their ADDED notice, after it, which is right
 *     because each workload is reconciled once per run, before its new
 *     requests exist, and a run changes no Node.
 *  5. After a run, every request in the index names an existing workload
 *     unless that workload is among those the next run looks at for
 *     orphans.
 *
 * podSetUpdates on Ready, per podset of the request: annotations
 * autoscaling.x-k8s.io/consume-provisioning-request=<request> and
 * autoscaling.x-k8s.io/provisioning-class-name=<class>, plus the config's
 * podSetUpdates.nodeSelector entries read from provisioningClassDetails.
 *
 * What it does not do: podSetMergePolicy (one request podSet per podset),
 * PodTemplate objects (flexq has no such kind: the template is inlined in
 * spec.podSets[].template beside podTemplateRef).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/controllers.h"
#include "kueue/provcheck.h"

#include "base/smap.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/conditions.h"
#include "flexq/names.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"
#include "kueue/kueue_slices.h"

#define ANN_REPORTED "flexq.dev/failure-reported"

static bool cond_is(const struct fq_value *status, const char *type,
                    const char *want)
{
    return fq_cond_status_is(fq_cond_in_status(status, type), want);
}

/* Member `key` of map m as a string or an integer, else def: what
 * fq_value_path_str / _int give for a one-key path, without parsing it
 * (a reconcile reads some ten of them per check). */
static const char *mstr(const struct fq_value *m, const char *key,
                        const char *def)
{
    const char *s = fq_value_as_str(fq_map_get(m, key));
    return s ? s : def;
}

static int64_t mint(const struct fq_value *m, const char *key, int64_t def)
{
    const struct fq_value *n = fq_map_get(m, key);
    return n && n->type == FQ_V_NUM && n->u.num.is_int ? n->u.num.i : def;
}

static const char *ann(const struct fq_value *obj, const char *key)
{
    return fq_value_as_str(fq_map_get(fq_meta_annotations(obj), key));
}

/* "ns/name" into buf, or into an allocation when it does not fit (a
 * request may name any workload): release it with key_done. */
static char *key_of(char *buf, size_t n, const char *ns, const char *name)
{
    size_t a = strlen(ns), b = strlen(name);
    char *key = a + b + 2 <= n ? buf : fq_xmalloc(a + b + 2);
    memcpy(key, ns, a);
    key[a] = '/';
    memcpy(key + a + 1, name, b + 1);
    return key;
}

static void key_done(char *key, const char *buf)
{
    if (key != buf)
        free(key);
}

/*
 * The first attempt from `from` whose request name no Node carries in its
 * provisioning-request annotation. A request deleted while its nodes boot
 * or sit unneeded leaves them annotated with its name; a new request of
 * the same name would count them as its own (wrong pool, or capacity
 * that is about to go).
 */
static int64_t free_attempt(struct provcheck *pc, const char *ns,
                            const char *wl, const char *check, int64_t from)
{
    for (int64_t a = from;; a++) {
        char name[300], buf[600];
        pc_request_name(wl, check, a, name, sizeof(name));
        char *key = key_of(buf, sizeof(buf), ns, name);
        bool used = fq_smap_get(&pc->req_nodes, key) != NULL;
        key_done(key, buf);
        if (!used)
            return a;
    }
}

/* The requests that name workload ns/wl, or NULL when none does. */
static struct wlreqs *requests_of(const struct provcheck *pc, const char *ns,
                                  const char *wl)
{
    char buf[600];
    char *key = key_of(buf, sizeof(buf), ns, wl);
    struct wlreqs *g = fq_smap_get(&pc->by_wl, key);
    key_done(key, buf);
    return g;
}

/* Orders a workload's requests by check, attempt, then name. */
static int cmp_preq(const struct preq *x, const char *check, int64_t attempt,
                    const char *name)
{
    int c = strcmp(x->check, check);
    if (!c)
        c = (x->attempt > attempt) - (x->attempt < attempt);
    return c ? c : strcmp(x->name, name);
}

/* The latest request of check `check` among a workload's requests g
 * (NULL: none) still there, and its attempt (0 when none). */
static struct preq *latest_request(struct wlreqs *g, const char *check,
                                   int64_t *attempt)
{
    struct preq *best = NULL;
    *attempt = 0;
    for (size_t i = 0; g && i < g->n; i++) {
        struct preq *r = &g->v[i];
        if (r->gone || strcmp(r->check, check) || r->attempt < *attempt)
            continue;
        *attempt = r->attempt;
        best = r;
    }
    return best;
}

/* The change just made to the store was this controller's own and
 * calls for no reconcile of its workload. */
static void own_change(struct provcheck *pc, struct fq_engine *e)
{
    FQ_GROW(pc->own, pc->capown, pc->nown + 1);
    pc->own[pc->nown++] = fq_objstore_revision(fq_engine_store(e));
}

/*
 * Was the change of revision rev one of our own (own_change)? Notices
 * come in revision order, so the ones before it are behind us. A
 * reconcile right after our own change would change nothing: it reads
 * what the last one wrote, and what else it reads (the requests, the
 * checks and their configs) comes with notices of its own.
 */
static bool own_notice(struct provcheck *pc, uint64_t rev)
{
    while (pc->ownhead < pc->nown && pc->own[pc->ownhead] < rev)
        pc->ownhead++;
    bool own = pc->ownhead < pc->nown && pc->own[pc->ownhead] == rev;
    if (own)
        pc->ownhead++;
    if (pc->ownhead == pc->nown)
        pc->ownhead = pc->nown = 0;
    return own;
}

/* Deletes a request of namespace ns. Its entry stays, `gone`, until the
 * DELETED notice removes it after the run. */
static void drop(struct provcheck *pc, struct fq_engine *e, const char *ns,
                 struct preq *r)
{
    if (fq_objstore_delete(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST, ns,
                           r->name, NULL) == 0) {
        pc->deleted++;
        own_change(pc, e);
    }
    r->gone = true;
}

/* The entry as it stands: the copy's once there is one. */
static const struct fq_value *ck_get(const struct check_edit *ed)
{
    return fq_seq_at(ed->copy ? ed->copy : ed->stored, ed->i);
}

/* The entry, to change. */
static struct fq_value *ck_edit(struct check_edit *ed)
{
    if (!ed->copy)
        ed->copy = fq_value_clone(ed->stored);
    return fq_seq_at(ed->copy, ed->i);
}

/* Sets a check's state; returns true when anything changed. */
static bool set_state(struct fq_engine *e, const struct fq_value *wl,
                      struct check_edit *ed, const char *state, const char *msg,
                      int64_t now)
{
    const char *old = mstr(ck_get(ed), "state", "Pending");
    bool changed = false;
    if (strcmp(old, state)) {
        char ts[40];
        fq_time_format(now, ts, sizeof(ts));
        fq_engine_event(e, wl, "Normal", "AdmissionCheckUpdated",
                        "Admission check %s updated state from %s to %s with "
                        "message: %s",
                        mstr(ck_get(ed), "name", ""), old, state, msg);
        struct fq_value *ch = ck_edit(ed);
        fq_map_set(ch, "state", fq_value_str(state));
        fq_map_set(ch, "lastTransitionTime", fq_value_str(ts));
        changed = true;
    }
    if (strcmp(mstr(ck_get(ed), "message", ""), msg)) {
        fq_map_set(ck_edit(ed), "message", fq_value_str(msg));
        changed = true;
    }
    return changed;
}

static struct fq_value *pod_set_updates(const struct fq_value *req,
                                        const struct prc *prc)
{
    struct fq_value *ups = fq_value_seq();
    const char *name = fq_meta_name(req);
    const char *klass = fq_value_path_str(req, FQ_PR_CLASS, "");
    const struct fq_value *details = fq_value_path(req, FQ_PR_CLASS_DETAILS);
    const struct fq_value *sel =
        fq_value_path(prc->obj, FQ_AC_PODSET_UPDATE_SELECTOR);
    const struct fq_value *sets = fq_value_path(req, FQ_WL_PODSETS);
    for (size_t i = 0; i < fq_value_len(sets); i++) {
        const struct fq_value *s = fq_seq_at(sets, i);
        struct fq_value *u = fq_value_map();
        fq_map_set(u, "name", fq_value_str(mstr(s, "podSetName", "")));
        struct fq_value *a = fq_map_ensure_map(u, "annotations");
        fq_map_set(a, FQ_ANN_CONSUME_PROVREQ, fq_value_str(name));
        fq_map_set(a, FQ_ANN_PROVREQ_CLASS, fq_value_str(klass));
        for (size_t k = 0; k < fq_value_len(sel); k++) {
            const struct fq_value *x = fq_seq_at(sel, k);
            const char *key = mstr(x, "key", NULL);
            const char *from =
                mstr(x, "valueFromProvisioningClassDetail", NULL);
            const char *v =
                from ? fq_value_as_str(fq_map_get(details, from)) : NULL;
            if (key && v)
                fq_map_set(fq_map_ensure_map(u, "nodeSelector"), key,
                           fq_value_str(v));
        }
        fq_seq_push(ups, u);
    }
    return ups;
}

/* Is v the string s, as fq_value_equal compares it with fq_value_str(s)? */
static bool str_equals(const struct fq_value *v, const char *s)
{
    size_t n = strlen(s);
    return v && v->type == FQ_V_STR && v->u.str.len == n &&
           !memcmp(v->u.str.s, s, n);
}

/* Is `have` what pod_set_updates(req, prc) would build (as fq_value_equal
 * compares)? A Ready check is reconciled again at each change of its
 * workload, and its podSetUpdates are nearly always the same: comparing
 * costs far less than building them to compare. */
static bool pod_set_updates_same(const struct fq_value *have,
                                 const struct fq_value *req,
                                 const struct prc *prc)
{
    const struct fq_value *sets = fq_value_path(req, FQ_WL_PODSETS);
    size_t n = fq_value_len(sets);
    if (!have || have->type != FQ_V_SEQ || have->u.seq.n != n)
        return false;
    const char *name = fq_meta_name(req);
    const char *klass = fq_value_path_str(req, FQ_PR_CLASS, "");
    const struct fq_value *details = fq_value_path(req, FQ_PR_CLASS_DETAILS);
    const struct fq_value *sel =
        fq_value_path(prc->obj, FQ_AC_PODSET_UPDATE_SELECTOR);
    size_t nsel = fq_value_len(sel);
    for (size_t i = 0; i < n; i++) {
        const struct fq_value *u = have->u.seq.items[i];
        const struct fq_value *a = fq_map_get(u, "annotations");
        const struct fq_value *ns = fq_map_get(u, "nodeSelector");
        if (!u || u->type != FQ_V_MAP || u->u.map.n != (ns ? 3u : 2u) ||
            !str_equals(fq_map_get(u, "name"),
                        mstr(fq_seq_at(sets, i), "podSetName", "")) ||
            !a || a->type != FQ_V_MAP || a->u.map.n != 2 ||
            !str_equals(fq_map_get(a, FQ_ANN_CONSUME_PROVREQ), name) ||
            !str_equals(fq_map_get(a, FQ_ANN_PROVREQ_CLASS), klass))
            return false;
        /* The selector's entries as pod_set_updates sets them: a later
         * one of the same key replaces an earlier one. */
        size_t want = 0;
        for (size_t k = 0; k < nsel; k++) {
            const struct fq_value *x = fq_seq_at(sel, k);
            const char *key = mstr(x, "key", NULL);
            const char *from =
                mstr(x, "valueFromProvisioningClassDetail", NULL);
            const char *v =
                from ? fq_value_as_str(fq_map_get(details, from)) : NULL;
            if (!key || !v)
                continue;
            bool replaced = false;
            for (size_t l = k + 1; !replaced && l < nsel; l++) {
                const struct fq_value *y = fq_seq_at(sel, l);
                const char *ykey = mstr(y, "key", NULL);
                const char *yfrom =
                    mstr(y, "valueFromProvisioningClassDetail", NULL);
                replaced = ykey && yfrom && !strcmp(ykey, key) &&
                           fq_value_as_str(fq_map_get(details, yfrom));
            }
            if (replaced)
                continue;
            want++;
            if (!str_equals(fq_map_get(ns, key), v))
                return false;
        }
        if (ns && (ns->type != FQ_V_MAP || ns->u.map.n != want || want == 0))
            return false;
        if (!ns && want > 0)
            return false;
    }
    return true;
}

static void mark_reported(struct fq_engine *e, const struct fq_object *req)
{
    struct fq_value *o = fq_objstore_edit(
        fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST, req->ns, req->name);
    if (!o)
        return;
    fq_map_set(
        fq_map_ensure_map(fq_map_ensure_map(o, "metadata"), "annotations"),
        ANN_REPORTED, fq_value_str("true"));
    fq_objstore_update(fq_engine_store(e), o, true, NULL, NULL, NULL);
}

/* Maps the latest request onto the check (the table at the top). Returns
 * true when the workload's status changed. */
static bool sync_state(struct fq_engine *e, const struct fq_value *wl,
                       struct check_edit *ch, const struct fq_object *req,
                       int64_t attempt, const struct prc *prc, bool admitted,
                       int64_t now)
{
    /* The request's conditions, found in one pass over its list. */
    static const char *const types[] = {"Provisioned", "Failed",
                                        "BookingExpired", "CapacityRevoked",
                                        "Accepted"};
    const struct fq_value *c[5];
    fq_conds_in_status(fq_map_get(req->obj, "status"), 5, types, c);
    const struct fq_value *prov = c[0], *failed_c = c[1], *expired_c = c[2],
                          *revoked_c = c[3], *accepted_c = c[4];
    const char *pmsg = mstr(prov, "message", "");
    bool reported = ann(req->obj, ANN_REPORTED) != NULL;
    bool failed = fq_cond_status_is(failed_c, "True");
    bool booking_expired = fq_cond_status_is(expired_c, "True");
    bool expired = booking_expired && !admitted;
    char msg[1024];
    if (failed || expired) {
        if (reported)
            return false; /* handled; a new attempt comes after requeue */
        const char *m = mstr(failed ? failed_c : expired_c, "message", "");
        bool changed;
        if (attempt <= prc->limit) {
            snprintf(msg, sizeof(msg), "Retrying after %s: %s",
                     failed ? "failure" : "booking expired", m);
            changed = set_state(e, wl, ch, "Retry", msg, now);
            int64_t after = prc->base_s;
            for (int64_t i = 1; i < attempt && after < prc->max_s; i++)
                after *= 2;
            if (after > prc->max_s)
                after = prc->max_s;
            fq_map_set(ck_edit(ch), "requeueAfterSeconds", fq_value_int(after));
        } else {
            changed = set_state(e, wl, ch, "Rejected", m, now);
        }
        mark_reported(e, req);
        (void)changed;
        return true;
    }
    if (fq_cond_status_is(revoked_c, "True")) {
        const char *m = mstr(revoked_c, "message", "");
        return set_state(e, wl, ch, "Rejected", m, now);
    }
    if (booking_expired)
        return false; /* admitted: ignored, the workload keeps running */
    if (fq_cond_status_is(prov, "True")) {
        bool changed = set_state(e, wl, ch, "Ready", pmsg, now);
        if (!pod_set_updates_same(fq_map_get(ck_get(ch), "podSetUpdates"),
                                  req->obj, prc)) {
            fq_map_set(ck_edit(ch), "podSetUpdates",
                       pod_set_updates(req->obj, prc));
            changed = true;
        }
        return changed;
    }
    if (!strcmp(mstr(ck_get(ch), "state", "Pending"), "Ready"))
        return false; /* stays Ready */
    if (fq_cond_status_is(accepted_c, "True") && prov)
        return set_state(e, wl, ch, "Pending", pmsg, now);
    return set_state(e, wl, ch, "Pending", "", now);
}

static bool kept(const struct preq *r, const struct keep *keep, size_t nkeep)
{
    for (size_t i = 0; i < nkeep; i++)
        if (!strcmp(keep[i].check, r->check) && r->attempt == keep[i].attempt)
            return true;
    return false;
}

/* Deletes a workload's requests g (NULL: none): all, or only the live
 * ones (not Failed, BookingExpired or CapacityRevoked) that `keep` does
 * not list. */
static void delete_requests(struct provcheck *pc, struct fq_engine *e,
                            struct wlreqs *g, bool only_live,
                            const struct keep *keep, size_t nkeep)
{
    for (size_t i = 0; g && i < g->n; i++) {
        struct preq *r = &g->v[i];
        if (r->gone || (only_live && (!r->live || kept(r, keep, nkeep))))
            continue;
        drop(pc, e, g->ns, r);
    }
}

/*
 * Was a request made for the workload's current reservation? Same class,
 * and per podset that needs one, in order, the same podset name, admitted
 * count and assigned flavor's node labels. A reservation that moved to
 * another flavor carrying the same check, or to other counts, makes the
 * request stale (Kueue deletes a request whose podsets or counts no longer
 * match the assignment, and one out of sync with its config's class).
 */
static bool request_matches(struct fq_engine *e, const struct fq_value *req,
                            const struct prc *prc, const struct need *needs,
                            size_t nneeds)
{
    if (strcmp(fq_value_path_str(req, FQ_PR_CLASS, ""), prc->klass))
        return false;
    const struct fq_value *sets = fq_value_path(req, FQ_WL_PODSETS);
    if (fq_value_len(sets) != nneeds)
        return false;
    for (size_t i = 0; i < nneeds; i++) {
        const struct fq_value *set = fq_seq_at(sets, i);
        if (strcmp(mstr(set, "podSetName", ""),
                   mstr(needs[i].psa, "name", "")) ||
            mint(set, "count", -1) != needs[i].count)
            return false;
        const struct fq_value *sel =
            fq_value_path(set, FQ_TEMPLATE_NODE_SELECTOR);
        const struct fq_value *nl = fq_value_path(
            pc_assigned_flavor(e, needs[i].psa), FQ_RF_NODE_LABELS);
        for (size_t k = 0; nl && nl->type == FQ_V_MAP && k < nl->u.map.n; k++)
            if (!fq_value_equal(fq_map_get(sel, nl->u.map.items[k].key),
                                nl->u.map.items[k].val))
                return false;
    }
    return true;
}

/*
 * One workload. Which requests stay is decided as Kueue's
 * activeOrLastPRForChecks / deleteUnusedProvisioningRequests do, and only
 * while quota is reserved (QuotaReserved=True, status.admission set, not
 * Evicted): controller.c writes the admission and the checks that apply to its
 * flavors in one update, so then status.admissionChecks is the truth. A
 * live request is kept only when it is the latest attempt of a check that
 * is listed there, is ours and active, needs a request for the assigned
 * podsets, and (unless the check is Ready) was made for this reservation.
 * Every other live request is deleted: a check dropped because the
 * workload moved to a flavor without it (migrate_to_preferred_flavor), a
 * check no longer needed, a request of an earlier reservation. Without a
 * reservation, live requests go too; finished attempts always stay
 * (invariant 2).
 */
static void reconcile(struct provcheck *pc, struct fq_engine *e,
                      const struct fq_object *wl, int64_t now)
{
    const struct fq_value *st = fq_map_get(wl->obj, "status");
    /* The workload's conditions, found in one pass over its list. */
    static const char *const types[] = {"Finished", "QuotaReserved", "Evicted",
                                        "Admitted"};
    const struct fq_value *c[4];
    fq_conds_in_status(st, 4, types, c);
    const struct fq_value *finished = c[0], *reserved_c = c[1], *evicted = c[2],
                          *admitted_c = c[3];
    /* The workload's requests, looked up once: during a run the index
     * only marks entries gone (invariant 4), so g stays put. */
    struct wlreqs *g = requests_of(pc, wl->ns, wl->name);
    if (fq_cond_status_is(finished, "True")) {
        /* An elastic job's old slice, replaced by a slice that still waits
         * on its own checks, keeps its requests: the job runs on their
         * nodes, and the slice may yet be withdrawn (jobframework_slices.c)
         * and this workload take its quota back. */
        if (!strcmp(mstr(finished, "reason", ""), FQ_SLICE_REASON_REPLACED))
            return;
        delete_requests(pc, e, g, false, NULL, 0);
        return;
    }
    bool reserved = fq_cond_status_is(reserved_c, "True") &&
                    fq_map_get(st, "admission") &&
                    !fq_cond_status_is(evicted, "True");
    if (!reserved) {
        delete_requests(pc, e, g, true, NULL, 0);
        return;
    }
    bool admitted = fq_cond_status_is(admitted_c, "True");
    if (admitted) {
        /* An admitted slice takes over: the requests the old slice kept
         * (see above) go now. */
        const char *old = fq_value_as_str(
            fq_map_get(fq_meta_annotations(wl->obj), FQ_SLICE_ANN_REPLACES));
        if (old)
            delete_requests(pc, e, requests_of(pc, wl->ns, old), false, NULL,
                            0);
    }
    const struct fq_value *chs = fq_map_get(st, "admissionChecks");
    /* Most workloads list a check or two: room for a few on the stack. */
    struct keep few[4] = {{0}};
    size_t nchs = fq_value_len(chs);
    struct keep *keep = nchs <= 4 ? few : fq_xcalloc(nchs, sizeof(*keep));
    size_t nkeep = 0;
    /* A copy of status.admissionChecks alone, written back in place: the
     * rest of the workload (its podsets' templates above all) is neither
     * copied nor compared. */
    struct check_edit ch = {.stored = chs};
    bool changed = false;
    for (size_t i = 0; i < fq_value_len(chs); i++) {
        const char *check = mstr(fq_seq_at(chs, i), "name", "");
        struct prc prc;
        if (!pc_resolve(pc, e, check, &prc))
            continue;
        ch.i = i;
        if (!prc.obj) {
            changed |= set_state(e, wl->obj, &ch, "Pending",
                                 "the check is not active", now);
            continue;
        }
        struct need few_needs[4], *needs;
        size_t nneeds = pc_needs_of(wl->obj, &prc, few_needs, 4, &needs);
        struct need *owned = needs != few_needs ? needs : NULL;
        if (nneeds == 0) {
            free(owned);
            changed |= set_state(e, wl->obj, &ch, "Ready",
                                 "ProvisioningRequest is not needed", now);
            continue;
        }
        int64_t attempt;
        struct preq *pr = latest_request(g, check, &attempt);
        const struct fq_object *req =
            pr ?
                fq_objstore_get(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST,
                                wl->ns, pr->name) :
                NULL;
        const char *state = mstr(ck_get(&ch), "state", "Pending");
        if (req && pr->live && strcmp(state, "Ready") &&
            !request_matches(e, req->obj, &prc, needs, nneeds)) {
            /* Made for an earlier reservation: replaced below. */
            drop(pc, e, wl->ns, pr);
            pr = latest_request(g, check, &attempt);
            req = pr ? fq_objstore_get(fq_engine_store(e),
                                       FQ_KIND_PROVISIONINGREQUEST, wl->ns,
                                       pr->name) :
                       NULL;
        }
        bool reported = req && ann(req->obj, ANN_REPORTED);
        keep[nkeep].check = check;
        if (!req || (reported && !strcmp(state, "Pending"))) {
            int64_t next = attempt + 1;
            int64_t rc = mint(ck_get(&ch), "retryCount", 0);
            if (rc + 1 > next)
                next = rc + 1;
            next = free_attempt(pc, wl->ns, wl->name, check, next);
            keep[nkeep++].attempt = next;
            pc_create_request(pc, e, wl, check, &prc, needs, nneeds, next, now);
            free(owned);
            changed |= set_state(e, wl->obj, &ch, "Pending", "", now);
            continue;
        }
        free(owned);
        keep[nkeep++].attempt = attempt;
        changed |=
            sync_state(e, wl->obj, &ch, req, attempt, &prc, admitted, now);
    }
    delete_requests(pc, e, g, true, keep, nkeep);
    if (keep != few)
        free(keep);
    if (ch.copy && changed) {
        bool written = false;
        fq_objstore_set_status_key(fq_engine_store(e), FQ_KIND_WORKLOAD, wl->ns,
                                   wl->name, "admissionChecks", ch.copy,
                                   &written, NULL);
        if (written)
            own_change(pc, e);
    } else {
        fq_value_free(ch.copy);
    }
}

static int cmp_wlreqs(const void *a, const void *b)
{
    const struct wlreqs *x = *(const struct wlreqs *const *)a;
    const struct wlreqs *y = *(const struct wlreqs *const *)b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->wl, y->wl);
}

/* Requests whose workload is gone are deleted, workload by workload in
 * namespace then name order, as a walk over every request would. Only
 * the workloads in pc->orphans can be missing (invariant 5). */
static void orphans(struct provcheck *pc, struct fq_engine *e)
{
    if (pc->orphans.n == 0)
        return;
    struct wlreqs **gs = fq_xcalloc(pc->orphans.n, sizeof(*gs));
    size_t n = 0;
    for (size_t i = 0; i < pc->orphans.cap; i++) {
        const char *key = pc->orphans.t[i].key;
        struct wlreqs *g = key ? fq_smap_get(&pc->by_wl, key) : NULL;
        if (g && !fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, g->ns,
                                  g->wl))
            gs[n++] = g;
    }
    if (n > 1)
        qsort(gs, n, sizeof(*gs), cmp_wlreqs);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < gs[i]->n; k++)
            if (!gs[i]->v[k].gone)
                drop(pc, e, gs[i]->ns, &gs[i]->v[k]);
    free(gs);
    fq_smap_clear(&pc->orphans);
}

static void free_wlreqs(void *p)
{
    struct wlreqs *g = p;
    for (size_t i = 0; i < g->n; i++) {
        free(g->v[i].check);
        free(g->v[i].name);
    }
    free(g->v);
    free(g->ns);
    free(g->wl);
    free(g);
}

static void *pc_create(struct fq_engine *e)
{
    (void)e;
    struct provcheck *pc = fq_xcalloc(1, sizeof(struct provcheck));
    pc->by_wl.free_val = free_wlreqs;
    pc->node_req.free_val = free;
    pc->all = true;
    return pc;
}

static void pc_destroy(void *self)
{
    struct provcheck *pc = self;
    fq_smap_free(&pc->by_name);
    fq_smap_free(&pc->by_wl);
    fq_smap_free(&pc->orphans);
    fq_smap_free(&pc->node_req);
    fq_smap_free(&pc->req_nodes);
    for (size_t i = 0; i < pc->nmarked; i++)
        free(pc->marked[i]);
    free(pc->marked);
    free(pc->keys);
    free(pc->own);
    pc_forget_resolved(pc);
    free(pc->res);
    free(pc);
}

/* Forgets request ns/name, and its workload's entry when it was the last
 * request naming it. */
static void index_del(struct provcheck *pc, const char *ns, const char *name)
{
    char buf[600];
    char *key = key_of(buf, sizeof(buf), ns, name);
    struct wlreqs *g = fq_smap_get(&pc->by_name, key);
    if (g) {
        fq_smap_del(&pc->by_name, key);
        for (size_t i = 0; i < g->n; i++) {
            if (strcmp(g->v[i].name, name))
                continue;
            free(g->v[i].check);
            free(g->v[i].name);
            memmove(&g->v[i], &g->v[i + 1], (g->n - i - 1) * sizeof(*g->v));
            g->n--;
            break;
        }
        if (g->n == 0) {
            char gbuf[600];
            char *gkey = key_of(gbuf, sizeof(gbuf), g->ns, g->wl);
            fq_smap_del(&pc->by_wl, gkey); /* frees g */
            key_done(gkey, gbuf);
        }
    }
    key_done(key, buf);
}

/* Records request ns/name as `obj` (the stored tree) has it, replacing
 * what the index knew of it. A status change, the common case, only
 * updates `live`. Returns the workload it names (borrowed), or NULL. */
static const char *index_put(struct provcheck *pc, const char *ns,
                             const char *name, const struct fq_value *obj)
{
    const struct fq_value *an = fq_meta_annotations(obj);
    const char *w = fq_value_as_str(fq_map_get(an, ANN_WORKLOAD));
    const char *check = fq_value_as_str(fq_map_get(an, ANN_CHECK));
    const char *a = fq_value_as_str(fq_map_get(an, ANN_ATTEMPT));
    if (!check)
        check = "";
    int64_t attempt = a ? atoll(a) : 0;
    bool live = !fq_provreq_terminal(fq_map_get(obj, "status"));
    char buf[600];
    char *key = key_of(buf, sizeof(buf), ns, name);
    struct wlreqs *g = fq_smap_get(&pc->by_name, key);
    for (size_t i = 0; g && w && !strcmp(g->wl, w) && i < g->n; i++) {
        struct preq *r = &g->v[i];
        if (strcmp(r->name, name))
            continue;
        if (strcmp(r->check, check) || r->attempt != attempt)
            break;
        r->live = live;
        r->gone = false;
        key_done(key, buf);
        return w;
    }
    index_del(pc, ns, name);
    if (w) {
        char gbuf[600];
        char *gkey = key_of(gbuf, sizeof(gbuf), ns, w);
        g = fq_smap_get(&pc->by_wl, gkey);
        if (!g) {
            g = fq_xcalloc(1, sizeof(*g));
            g->ns = fq_xstrdup(ns);
            g->wl = fq_xstrdup(w);
            fq_smap_put(&pc->by_wl, gkey, g);
        }
        key_done(gkey, gbuf);
        size_t at = 0;
        while (at < g->n && cmp_preq(&g->v[at], check, attempt, name) < 0)
            at++;
        FQ_GROW(g->v, g->cap, g->n + 1);
        memmove(&g->v[at + 1], &g->v[at], (g->n - at) * sizeof(*g->v));
        g->v[at] = (struct preq){
            .check = fq_xstrdup(check),
            .name = fq_xstrdup(name),
            .attempt = attempt,
            .live = live,
        };
        g->n++;
        fq_smap_put(&pc->by_name, key, g);
    }
    key_done(key, buf);
    return w;
}

/* Node `node` now carries provisioning-request annotation `v` (NULL:
 * none, or deleted). */
static void node_seen(struct provcheck *pc, const char *node, const char *v)
{
    const char *old = fq_smap_get(&pc->node_req, node);
    if (old == v || (old && v && !strcmp(old, v)))
        return;
    if (old) {
        uintptr_t n = (uintptr_t)fq_smap_get(&pc->req_nodes, old);
        if (n > 1)
            fq_smap_put(&pc->req_nodes, old, (void *)(n - 1));
        else
            fq_smap_del(&pc->req_nodes, old);
    }
    if (v) {
        uintptr_t n = (uintptr_t)fq_smap_get(&pc->req_nodes, v);
        fq_smap_put(&pc->req_nodes, v, (void *)(n + 1));
        fq_smap_put(&pc->node_req, node, fq_xstrdup(v)); /* frees old */
    } else {
        fq_smap_del(&pc->node_req, node);
    }
}

/* Builds the index of requests and nodes from the store, at the first
 * run: objects restored before the controller watched came with no
 * notice. Every workload a request names is then looked at for orphans. */
static void build_index(struct provcheck *pc, struct fq_engine *e)
{
    fq_smap_clear(&pc->by_name);
    fq_smap_clear(&pc->by_wl);
    const struct fq_object **list;
    size_t n = fq_objstore_list(fq_engine_store(e), FQ_KIND_PROVISIONINGREQUEST,
                                NULL, &list);
    for (size_t i = 0; i < n; i++)
        index_put(pc, list[i]->ns, list[i]->name, list[i]->obj);
    free(list);
    fq_smap_clear(&pc->node_req);
    fq_smap_clear(&pc->req_nodes);
    n = fq_objstore_list(fq_engine_store(e), FQ_KIND_NODE, NULL, &list);
    for (size_t i = 0; i < n; i++)
        node_seen(pc, list[i]->name, ann(list[i]->obj, FQ_ANN_NODE_PROVREQ));
    free(list);
    for (size_t i = 0; i < pc->by_wl.cap; i++)
        if (pc->by_wl.t[i].key)
            fq_smap_add(&pc->orphans, pc->by_wl.t[i].key);
    pc->indexed = true;
}

/* Does the workload own a live request? */
/* Whether some request of g (NULL: none) is live and not deleted. */
static bool any_live(const struct wlreqs *g)
{
    for (size_t i = 0; g && i < g->n; i++)
        if (g->v[i].live && !g->v[i].gone)
            return true;
    return false;
}

static bool owns_live(const struct provcheck *pc, const char *ns,
                      const char *name)
{
    return any_live(requests_of(pc, ns, name));
}

/* Does a workload whose status is `st` list a check this controller
 * handles? (Read on every notice of a workload: two member lookups, not
 * a path parsed.) */
static bool has_our_check(struct provcheck *pc, struct fq_engine *e,
                          const struct fq_value *st)
{
    const struct fq_value *chs = fq_map_get(st, "admissionChecks");
    for (size_t i = 0; i < fq_value_len(chs); i++) {
        struct prc prc;
        const char *name =
            fq_value_as_str(fq_map_get(fq_seq_at(chs, i), "name"));
        if (pc_resolve(pc, e, name ? name : "", &prc))
            return true;
    }
    return false;
}

/* Only changes that can matter kick a run: a run that changes nothing
 * still costs the engine a settle round. */
static void mark(struct provcheck *pc, const char *ns, const char *name)
{
    FQ_GROW(pc->marked, pc->capmarked, pc->nmarked + 1);
    pc->marked[pc->nmarked++] = key_of(NULL, 0, ns, name);
}

/* A workload whose requests may have lost it (see struct provcheck). */
static void maybe_orphaned(struct provcheck *pc, const char *ns,
                           const char *name)
{
    char buf[600];
    char *key = key_of(buf, sizeof(buf), ns, name);
    fq_smap_add(&pc->orphans, key);
    key_done(key, buf);
}

static void pc_on_change(void *self, struct fq_engine *e,
                         const struct fq_change *c)
{
    struct provcheck *pc = self;
    /* Our own status write or deletion: the index still takes it, but
     * nothing is reconciled for it. */
    bool own = own_notice(pc, c->rev);
    if (c->kind == FQ_KIND_WORKLOAD) {
        if (own)
            return;
        /* A deleted workload matters only through its requests: a run
         * skips a missing workload, and looks for orphans among those
         * noted here. Without requests in the index (a job that never
         * needed one, or whose requests are gone) a run for it would do
         * nothing. */
        bool has_requests = c->type == FQ_CHANGE_DELETED &&
                            requests_of(pc, c->ns, c->name) != NULL;
        if (has_requests)
            maybe_orphaned(pc, c->ns, c->name);
        /* A live workload that lists none of our checks matters only
         * through its requests: when it has none in the index, a run
         * would find nothing to delete even if it is Finished, so its
         * conditions are not read (most notices: Kueue's pending
         * messages to workloads that never needed a request). */
        const struct fq_value *st =
            c->type == FQ_CHANGE_DELETED ? NULL : fq_map_get(c->obj, "status");
        const struct wlreqs *g = NULL;
        bool relevant =
            c->type == FQ_CHANGE_DELETED ?
                has_requests &&
                    fq_objstore_count(fq_engine_store(e),
                                      FQ_KIND_PROVISIONINGREQUEST) > 0 :
                has_our_check(pc, e, st) ||
                    (fq_objstore_count(fq_engine_store(e),
                                       FQ_KIND_PROVISIONINGREQUEST) > 0 &&
                     (g = requests_of(pc, c->ns, c->name)) != NULL &&
                     (fq_cond_in_status_true(st, "Finished") || any_live(g)));
        if (!relevant)
            return;
        mark(pc, c->ns, c->name);
    } else if (c->kind == FQ_KIND_PROVISIONINGREQUEST) {
        const char *w = NULL;
        if (c->type == FQ_CHANGE_DELETED) {
            index_del(pc, c->ns, c->name);
            w = c->obj ? ann(c->obj, ANN_WORKLOAD) : NULL;
        } else {
            w = index_put(pc, c->ns, c->name, c->obj);
        }
        if (own)
            return;
        if (w) {
            mark(pc, c->ns, w);
            if (c->type != FQ_CHANGE_DELETED &&
                !fq_objstore_get(fq_engine_store(e), FQ_KIND_WORKLOAD, c->ns,
                                 w))
                maybe_orphaned(pc, c->ns, w);
        }
    } else if (c->kind == FQ_KIND_NODE) {
        /* Read only when a request is created: no run for it. */
        node_seen(pc, c->name,
                  c->type == FQ_CHANGE_DELETED ?
                      NULL :
                      ann(c->obj, FQ_ANN_NODE_PROVREQ));
        return;
    } else {
        /* A check or a config: any workload may change. */
        pc_forget_resolved(pc);
        pc->all = true;
    }
    fq_engine_kick(e, self);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The workloads this run looks at, "ns" and "name" interleaved in
 * pc->keys: each "ns" is owned, its "name" lies in the same allocation. */
static size_t run_keys(struct provcheck *pc, struct fq_engine *e)
{
    char **keys;
    size_t n = 0;
    char **v = pc->marked;
    size_t m = pc->nmarked;
    if (pc->all) {
        const struct fq_object **list;
        size_t nl =
            fq_objstore_list(fq_engine_store(e), FQ_KIND_WORKLOAD, NULL, &list);
        FQ_GROW(pc->keys, pc->capkeys, 2 * nl);
        keys = pc->keys;
        for (size_t i = 0; i < nl; i++) {
            size_t a = strlen(list[i]->ns);
            char *k = key_of(NULL, 0, list[i]->ns, list[i]->name);
            k[a] = '\0';
            keys[2 * n] = k;
            keys[2 * n + 1] = k + a + 1;
            n++;
        }
        free(list);
        for (size_t i = 0; i < m; i++)
            free(v[i]);
    } else {
        if (m > 1)
            qsort(v, m, sizeof(*v), cmp_str);
        FQ_GROW(pc->keys, pc->capkeys, 2 * m);
        keys = pc->keys;
        for (size_t i = 0; i < m; i++) {
            if (i + 1 < m && !strcmp(v[i], v[i + 1])) {
                free(v[i]); /* marked again: the last one stays */
                continue;
            }
            size_t l = strcspn(v[i], "/");
            char *name = v[i] + l + (v[i][l] ? 1 : 0);
            v[i][l] = '\0';
            keys[2 * n] = v[i];
            keys[2 * n + 1] = name;
            n++;
        }
    }
    pc->all = false;
    pc->nmarked = 0;
    return n;
}

static void pc_run(void *self, struct fq_engine *e, int64_t now)
{
    struct provcheck *pc = self;
    if (!pc->indexed)
        build_index(pc, e);
    /* Names first: reconcile writes to the store, which may move the
     * borrowed objects. */
    size_t n = run_keys(pc, e);
    char **keys = pc->keys;
    for (size_t i = 0; i < n; i++) {
        const struct fq_object *wl = fq_objstore_get(
            fq_engine_store(e), FQ_KIND_WORKLOAD, keys[2 * i], keys[2 * i + 1]);
        /* A workload owning a live request is reconciled even with no
         * check listed: its check may just have been dropped. */
        const struct fq_value *st = wl ? fq_map_get(wl->obj, "status") : NULL;
        if (wl && (fq_value_len(fq_map_get(st, "admissionChecks")) > 0 ||
                   owns_live(pc, keys[2 * i], keys[2 * i + 1])))
            reconcile(pc, e, wl, now);
        else if (wl && cond_is(st, "Finished", "True"))
            delete_requests(pc, e,
                            requests_of(pc, keys[2 * i], keys[2 * i + 1]),
                            false, NULL, 0);
        free(keys[2 * i]);
    }
    orphans(pc, e);
}

const struct fq_controller_ops fq_provcheck_controller = {
    .name = "provcheck",
    .watch = FQ_KIND_BIT(FQ_KIND_WORKLOAD) |
             FQ_KIND_BIT(FQ_KIND_PROVISIONINGREQUEST) |
             FQ_KIND_BIT(FQ_KIND_NODE) | FQ_KIND_BIT(FQ_KIND_ADMISSIONCHECK) |
             FQ_KIND_BIT(FQ_KIND_PROVISIONINGREQUESTCONFIG),
    .create = pc_create,
    .destroy = pc_destroy,
    .on_change = pc_on_change,
    .run = pc_run,
    .next_wakeup = NULL,
};
