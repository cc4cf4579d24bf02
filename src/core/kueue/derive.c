/*
 * derive.c - records from stored workloads: rec_derive turns a Workload
 * into its struct wl, rec_refresh derives again only when the workload's
 * fingerprint (a hash of exactly what rec_derive reads) moved, and a
 * holder derived again to the usage it had keeps its place (held_*).
 *
 * The fingerprint is a cache key: a workload whose read fields did not
 * change keeps its record, so the cost of a status write that touches
 * nothing the scheduler reads is a hash. Every scenario and the golden
 * simulations (same trace, same seed, same bytes) run through it.
 */
#include "kueue/internal.h"

#include "flexq/names.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fp_value(uint64_t h, const struct fq_value *v);

/* A hash (fp_value's) in hex: a key of psviews and admviews. */
static void hex_key(uint64_t h, char key[17])
{
    *fq_hex_put(key, h, 16) = 0;
}

/* A pending workload's podsets as the assigner sees them, interned: two
 * workloads of one shape get one outcome from fq_adm_assign on a queue
 * that cannot preempt (ff_quiet). The key is every field the assigner
 * reads, each as fixed-width hex (count and min_count 8 digits, the
 * flavor masks and each request 16): of fixed width, so two shapes get
 * one key only when every field is equal, and written without printf,
 * as every new workload's record asks once (it was 5,300 instructions a
 * workload with fq_buf_printf). Ids are given in the order shapes are
 * first seen, whatever the key's spelling. */

int kq_shape_of(struct kueue *k, const struct wl *w)
{
    if (w->npodsets == 0)
        return -1;
    int nres = k->snap->adm.nres;
    /* per podset: 8 + 8 + 16 + 16 digits, 16 per resource */
    size_t need = (size_t)w->npodsets * (48 + 16 * (size_t)nres) + 1;
    char few[1024];
    char *key = need <= sizeof(few) ? few : fq_xmalloc(need);
    char *p = key;
    for (int q = 0; q < w->npodsets; q++) {
        const struct fq_adm_podset *ps = &w->ps[q];
        p = fq_hex_put(p, (uint32_t)ps->count, 8);
        p = fq_hex_put(p, (uint32_t)ps->min_count, 8);
        p = fq_hex_put(p, ps->selector_ok, 16);
        p = fq_hex_put(p, ps->taint_ok, 16);
        for (int r = 0; r < nres; r++)
            p = fq_hex_put(p, (uint64_t)ps->req[r], 16);
    }
    *p = 0;
    uintptr_t id = (uintptr_t)fq_smap_get(&k->shapes, key);
    if (!id) {
        id = (uintptr_t)++k->nshapes;
        fq_smap_put(&k->shapes, key, (void *)id);
    }
    if (key != few)
        free(key);
    return (int)id - 1;
}

static void held_save(const struct kueue *k, const struct rec *r,
                      struct held *h)
{
    const struct wl *w = &r->w;
    h->on = r->accounted && w->holds && w->nuse <= FQ_ADM_MAX_FLAVORS;
    if (!h->on)
        return;
    h->cq = w->cq;
    h->nuse = w->nuse;
    for (int u = 0; u < w->nuse; u++) {
        h->fr[u] = w->use_fr[u];
        h->amt[u] = w->use_amt[u];
    }
    memcpy(h->rel, k->rel_flv, sizeof(h->rel));
    h->mig_rel = k->mig_rel;
    h->mig_dirty = k->mig_dirty;
}

/* After the record is attached again: when it holds what it held, the
 * release its detach signalled is taken back (a candidate attached again
 * is new to the migration pass all the same: mig_add). */
static void held_restore(struct kueue *k, const struct rec *r,
                         const struct held *h)
{
    const struct wl *w = &r->w;
    if (!h->on || !r->accounted || !w->holds || w->cq != h->cq ||
        w->nuse != h->nuse)
        return;
    for (int u = 0; u < h->nuse; u++)
        if (w->use_fr[u] != h->fr[u] || w->use_amt[u] != h->amt[u])
            return;
    memcpy(k->rel_flv, h->rel, sizeof(h->rel));
    k->mig_rel = h->mig_rel;
    k->mig_dirty = h->mig_dirty || r->in_mig;
}

/*
 * Derives a record again from its stored workload (decoded where it is
 * stored: the view is dropped before anything is written) and the
 * snapshot, and attaches it where it now belongs. What comes from the
 * spec (podsets, priority, queue) is kept while the generation and
 * the snapshot hold (spec_ok): then only the status is decoded. A new
 * spec whose podSets equal some decoded before (k->psviews) decodes all
 * but them, and a status.admission decoded before (k->admviews, by its
 * hash adm_h) is not decoded again. A workload that cannot be queued (no
 * LocalQueue, its ClusterQueue missing or inactive, its namespace not
 * selected) gets Kueue's QuotaReserved=False message. `cond` is obj's
 * cond_scan.
 */
/* A record derived again from status alone: the status-derived part of
 * its wl goes, the spec's view stays. */
static void forget_status(struct wl *w)
{
    free(w->why_msg);
    free(w->avoid_ann);
    free(w->replaces);
    free(w->use_fr);
    free(w->use_amt);
    free(w->slice);
    w->why_msg = w->avoid_ann = w->replaces = NULL;
    w->use_fr = NULL;
    w->use_amt = NULL;
    w->slice = NULL;
    w->nuse = 0;
    w->cq = -1;
    w->lq = NULL;
    w->holds = w->admitted = w->pending = w->evicting = false;
    if (w->hold) {
        w->hold->reserved_at = 0;
        w->hold->assigned_flv = 0;
    }
    w->waiting_check = w->is_slice = false;
}

/* A record derived from the whole Workload into *v: the spec's view
 * (priority, creation, queue, podsets) made again, the podsets taken
 * from a podset view when this spec.podSets was seen before. Returns
 * false when the Workload does not decode (the record is then not ok). */
static bool derive_spec(struct kueue *k, struct fq_engine *e, struct rec *r,
                        const struct fq_value *obj, int64_t gen,
                        struct fq_workload *v)
{
    struct snap *s = k->snap;
    struct wl *w = &r->w;
    char *ns = w->ns, *name = w->name;
    struct wl_hold *hold = w->hold;
    kq_wl_release(w);
    kq_qname_drop(r->queue_name);
    r->queue_name = NULL;
    memset(w, 0, sizeof(*w));
    w->ns = ns;
    w->name = name;
    w->hold = hold; /* what it carries across derivations stays */
    if (hold) {
        hold->reserved_at = 0;
        hold->assigned_flv = 0;
    }
    w->cq = -1;
    r->ok = r->spec_ok = false;
    r->shape = -1;
    char pkey[17];
    hex_key(fp_value(FP_SEED, fq_map_get(fq_map_get(obj, "spec"), "podSets")),
            pkey);
    struct psview *pv = fq_smap_get(&k->psviews, pkey);
    if ((pv ? fq_workload_decode_no_podsets(obj, v) :
              fq_workload_decode(obj, NULL, v, NULL)) != 0)
        return false;
    r->ok = r->spec_ok = true;
    r->spec_gen = gen;
    w->prio = kq_priority_of(e, v);
    w->created = parse_time(v->meta.creation_timestamp, 0);
    r->queue_name = v->queue_name ? kq_qname_take(k, v->queue_name) : NULL;
    r->active = v->active;
    if (pv) {
        kq_wl_share_podsets(w, pv);
    } else {
        kq_wl_podsets(s, w, v);
        if (k->psviews.n >= VIEWS_MAX)
            fq_smap_clear(&k->psviews); /* the records keep theirs */
        w->pv->refs++;                  /* psviews' reference */
        fq_smap_put(&k->psviews, pkey, w->pv);
    }
    r->shape = SHAPE_UNKNOWN;
    return true;
}

/* A workload that holds quota: its queue, usage and flavors from its
 * admission's view (made and kept under akey when av is NULL), and
 * whether it waits on a check with none Ready (a migration candidate). */
static void derive_holding(struct kueue *k, struct rec *r,
                           const struct admview *av, const char *akey,
                           const struct fq_workload *v,
                           const struct fq_value *const cond[NCOND])
{
    struct snap *s = k->snap;
    struct wl *w = &r->w;
    struct admview made;
    if (!av) {
        kq_adm_view(s, v, &made);
        av = &made;
        if (k->admviews.n >= VIEWS_MAX)
            fq_smap_clear(&k->admviews);
        struct admview *keep = fq_xmalloc(sizeof(*keep));
        *keep = made;
        fq_smap_put(&k->admviews, akey, keep);
    }
    w->cq = av->cq;
    w->holds = w->cq >= 0;
    struct wl_hold *hd = kq_wl_hold(w);
    w->admitted = cond_is_true(cond[C_ADMITTED]);
    w->evicting = cond_is_true(cond[C_EVICTED]);
    hd->reserved_at = parse_time(
        str_at(cond[C_QUOTA_RESERVED], "lastTransitionTime", NULL), 0);
    kq_wl_set_use(w, av->nuse, av->use_fr, av->use_amt);
    hd->assigned_flv = av->assigned_flv;
    bool any = false, ready = false;
    for (size_t c = 0; c < v->n_check_states; c++) {
        any = true;
        if (v->check_states[c].state != FQ_CHECK_PENDING)
            ready = true;
    }
    w->waiting_check = any && !ready && !w->admitted;
    if (r->queue_name)
        w->lq = kq_find_lq(s, w->ns, r->queue_name);
}

/* A pending workload: is it admissible now (its LocalQueue and
 * ClusterQueue exist, the queue is active and selects its namespace)?
 * Returns why not into msg (NULL when it is, and then it is pending in
 * its ClusterQueue, a slice prepared against the one it replaces). */
static const char *derive_pending(struct kueue *k, struct fq_engine *e,
                                  struct rec *r, const struct fq_value *ann,
                                  char *msg, size_t n)
{
    struct snap *s = k->snap;
    struct wl *w = &r->w;
    const char *ns = w->ns, *queue = r->queue_name;
    w->lq = kq_find_lq(s, ns, queue);
    int ci = w->lq ? kq_find_cq(s, w->lq->cq) : -1;
    if (!w->lq) {
        snprintf(msg, n, "LocalQueue %s doesn't exist", queue);
        return msg;
    }
    if (w->lq->stop != FQ_STOP_NONE) {
        snprintf(msg, n, "LocalQueue %s is stopped", queue);
        return msg;
    }
    if (ci < 0) {
        snprintf(msg, n, "ClusterQueue %s doesn't exist", w->lq->cq);
        return msg;
    }
    if (!s->cqs[ci].active) {
        snprintf(msg, n, "ClusterQueue %s is inactive", w->lq->cq);
        return msg;
    }
    if (!kq_ns_matches(e, &s->cqs[ci], ns))
        return "Workload namespace doesn't match ClusterQueue selector";
    w->cq = ci;
    w->pending = true;
    const char *old = fq_value_as_str(fq_map_get(ann, FQ_SLICE_ANN_REPLACES));
    if (old) {
        w->replaces = fq_xstrdup(old);
        struct wl_slice sl = {{0}, {0}};
        w->is_slice = fq_kueue_slice_prepare(
            &s->adm, stored(e, FQ_KIND_WORKLOAD, ns, old), w->npodsets,
            w->pv->psname, sl.flv, sl.base);
        if (w->is_slice) {
            w->slice = fq_xmalloc(sizeof(*w->slice));
            *w->slice = sl;
        }
    }
    return NULL;
}

/*
 * Derives record r again from its stored workload: out of every index
 * first (rec_detach), the spec's view kept when only the status moved
 * (same generation) and made again otherwise, then the status's part
 * (holding quota, or pending and admissible or not), back into the
 * indexes (rec_attach), and a holder back at the usage it had
 * (held_restore). adm_h is the hash of status.admission (the key of its
 * view).
 */
static void rec_derive(struct kueue *k, struct fq_engine *e, struct rec *r,
                       const struct fq_value *obj,
                       const struct fq_value *const cond[NCOND], uint64_t adm_h,
                       int64_t now)
{
    struct wl *w = &r->w;
    struct held was;
    held_save(k, r, &was);
    kq_rec_detach(k, r);
    const struct fq_value *md = fq_map_get(obj, "metadata");
    int64_t gen = int_at(md, "generation", 0);
    struct fq_workload v;
    /* An admission decoded before (so valid) is not decoded again. */
    char akey[17];
    hex_key(adm_h, akey);
    const struct admview *av = fq_smap_get(&k->admviews, akey);
    unsigned parts = FQ_WL_CHECKS | FQ_WL_REQUEUE;
    if (!av)
        parts |= FQ_WL_ADMISSION;
    bool light = r->spec_ok && r->spec_gen == gen &&
                 fq_workload_status_decode(obj, parts, &v) == 0;
    if (w->hold)
        w->hold->mig_valid = false;
    if (light)
        forget_status(w);
    else if (!derive_spec(k, e, r, obj, gen, &v))
        return;
    const struct fq_value *ann = fq_map_get(md, "annotations");
    const struct fq_value *qr = cond[C_QUOTA_RESERVED];
    const char *qr_status = str_at(qr, "status", "");
    if (qr && !strcmp(qr_status, "False")) {
        w->why_msg = fq_xstrdup(str_at(qr, "message", ""));
        r->why_rsn = kq_pendmsg_reason_code(str_at(qr, "reason", ""));
    }
    const struct fq_value *rq = cond[C_REQUEUED];
    bool in_backoff = rq && !strcmp(str_at(rq, "status", ""), "False");
    /* w->created is the spec's view's: the store keeps creationTimestamp
     * as it was created (server-owned), so a status write leaves it. */
    w->qts =
        kq_queue_order_ts(w->created, cond[C_EVICTED], fq_engine_config(e));
    const char *avoid = fq_value_as_str(fq_map_get(ann, FQ_ANN_AVOID_FLAVORS));
    w->avoid_ann = avoid ? fq_xstrdup(avoid) : NULL;
    const char *why = NULL; /* a message to write once the view is gone */
    char msg[512];
    if ((av || v.has_admission) && !strcmp(qr_status, "True"))
        derive_holding(k, r, av, akey, &v, cond);
    else if (r->active && !in_backoff && r->queue_name)
        why = derive_pending(k, e, r, ann, msg, sizeof(msg));
    fq_workload_release(&v);
    kq_rec_attach(k, r);
    held_restore(k, r, &was);
    if (why)
        kq_set_pending(k, e, w, "Inadmissible", why, now);
}

/*
 * A 64-bit hash of a subtree (its shape, scalars' text, maps' keys in
 * order), taken eight bytes a step: every change of a workload hashes
 * its conditions, whose messages are tens of bytes each. A step is a
 * multiply and a shift, each a bijection of the state, and every text
 * and container gives its length first, so two trees that differ in
 * what is hashed differ in the hash but by chance (2^-64).
 */
static uint64_t fp_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
}

static uint64_t fp_load(const char *s, size_t n)
{
    uint64_t w = 0;
    memcpy(&w, s, n); /* n is 4 or 8: a load */
    return w;
}

/* The n bytes at s, after n: eight a step, and a text's last bytes
 * (which do not fill a step) read as the word or half-words that end
 * where it does, so that no byte is read one at a time, and none after
 * the text. Given n, every byte lands in some word: texts of one
 * length that differ give steps that differ. */
static uint64_t fp_text(uint64_t h, const char *s, size_t n)
{
    h = fp_word(h, n);
    if (n < 4) {
        if (n > 0)
            h = fp_word(h, (uint64_t)(unsigned char)s[0] << 16 |
                               (uint64_t)(unsigned char)s[n / 2] << 8 |
                               (unsigned char)s[n - 1]);
        return h;
    }
    if (n < 8)
        return fp_word(h, fp_load(s, 4) << 32 | fp_load(s + n - 4, 4));
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        h = fp_word(h, fp_load(s + i, 8));
    if (i < n)
        h = fp_word(h, fp_load(s + n - 8, 8));
    return h;
}

static uint64_t fp_value(uint64_t h, const struct fq_value *v)
{
    if (!v)
        return fp_word(h, 1);
    h = fp_word(h, (uint64_t)v->type + 2);
    switch (v->type) {
    case FQ_V_NULL:
        return h;
    case FQ_V_BOOL:
        return fp_word(h, v->u.b);
    case FQ_V_NUM:
        return fp_text(h, v->u.num.raw, strlen(v->u.num.raw));
    case FQ_V_STR:
        return fp_text(h, v->u.str.s, v->u.str.len);
    case FQ_V_SEQ:
        h = fp_word(h, v->u.seq.n);
        for (size_t i = 0; i < v->u.seq.n; i++)
            h = fp_value(h, v->u.seq.items[i]);
        return h;
    case FQ_V_MAP:
        h = fp_word(h, v->u.map.n);
        for (size_t i = 0; i < v->u.map.n; i++) {
            const struct fq_member *m = &v->u.map.items[i];
            h = fp_value(fp_text(h, m->key, m->klen), m->val);
        }
        return h;
    }
    return h;
}

/* What rec_derive reads of each condition type (0: nothing). */
static const unsigned cond_reads[NCOND] = {
    [C_QUOTA_RESERVED] = F_STATUS | F_MESSAGE | F_TIME,
    [C_ADMITTED] = F_STATUS,
    [C_EVICTED] = F_STATUS | F_REASON | F_TIME,
    [C_REQUEUED] = F_STATUS,
};

/* fp_value of condition c (or of its absence), but of only the members
 * in `want` (the first of each key, as str_at finds it): the others
 * (observedGeneration, most reasons and messages) are most of its bytes
 * and rec_derive does not read them. */
static uint64_t fp_cond(uint64_t h, const struct fq_value *c, unsigned want)
{
    if (!c || c->type != FQ_V_MAP)
        return fp_value(h, c);
    const struct fq_value *f[4] = {NULL, NULL, NULL, NULL};
    bool seen[4] = {false, false, false, false};
    for (size_t i = 0; i < c->u.map.n; i++) {
        const struct fq_member *x = &c->u.map.items[i];
        int at = member_is(x, "status")             ? 0 :
                 member_is(x, "reason")             ? 1 :
                 member_is(x, "message")            ? 2 :
                 member_is(x, "lastTransitionTime") ? 3 :
                                                      -1;
        if (at >= 0 && !seen[at]) {
            seen[at] = true;
            f[at] = x->val;
        }
    }
    h = fp_word(h, FQ_V_MAP + 2);
    for (int i = 0; i < 4; i++)
        if (want & (1u << i))
            h = fp_value(h, f[i]);
    return h;
}

/*
 * A hash of what rec_derive reads of a stored workload: generation (the
 * spec moves it), uid, creation, annotations, status.admission, the
 * members it reads of the conditions it looks at, and the check states.
 * Writes it does not read (PodsReady, cost, podSetUpdates, a condition's
 * message it does not show) leave it, so they cost no decode. What a
 * record reads from elsewhere (the snapshot, Namespaces, priority
 * classes, an old slice) clears fp_ok instead. *adm_h is the hash of
 * status.admission alone (its key in admviews).
 */
static uint64_t fingerprint(const struct fq_value *obj,
                            const struct fq_value *const found[NCOND],
                            uint64_t *adm_h)
{
    const struct fq_value *md = fq_map_get(obj, "metadata");
    uint64_t h = FP_SEED;
    h = fp_value(h, fq_map_get(md, "generation"));
    h = fp_value(h, fq_map_get(md, "uid"));
    h = fp_value(h, fq_map_get(md, "creationTimestamp"));
    h = fp_value(h, fq_map_get(md, "annotations"));
    const struct fq_value *st = fq_map_get(obj, "status");
    *adm_h = fp_value(FP_SEED, fq_map_get(st, "admission"));
    h = fp_word(h, *adm_h);

    /* The first entry of each type, as cond_find reads them. */
    for (int t = 0; t < NCOND; t++)
        if (cond_reads[t])
            h = fp_cond(h, found[t], cond_reads[t]);
    const struct fq_value *chs = fq_map_get(st, "admissionChecks");
    for (size_t i = 0; i < fq_value_len(chs); i++) {
        const struct fq_value *ch = fq_seq_at(chs, i);
        h = fp_value(h, fq_map_get(ch, "name"));
        h = fp_value(h, fq_map_get(ch, "state"));
    }
    return h;
}

/* Brings the record of workload `key` in line with the store: derived
 * again (unless nothing it reads moved), made, or dropped when the
 * workload is gone or Finished. */
void kq_rec_refresh(struct kueue *k, struct fq_engine *e, const char *key,
                    int64_t now)
{
    struct rec *r = fq_smap_get(&k->recs, key);
    char ns[300];
    const char *name = key_split(key, ns, sizeof(ns));
    const struct fq_value *obj =
        name ? stored(e, FQ_KIND_WORKLOAD, ns, name) : NULL;
    const struct fq_value *cond[NCOND];
    kq_cond_scan(obj, cond);
    if (!obj || cond_is_true(cond[C_FINISHED])) {
        if (r) {
            kq_rec_detach(k, r);
            if (r->in_slices)
                fq_smap_del(&k->slices, key);
            if (r->gone) {
                fq_smap_del(&k->recs, key); /* frees r */
            } else {
                /* Its leaving was written after this run's notices were
                 * handed out: on_change has not seen it yet, and will ask
                 * the record whether the workload was live (struct
                 * rec's gone). Kept until then, as if never derived. */
                forget_status(&r->w);
                r->why_rsn = 0;
                r->own_rev = 0;
                r->ok = r->spec_ok = r->fp_ok = r->in_slices = false;
            }
        }
        return;
    }
    if (!r) {
        /* A workload written after this run's notices were handed out:
         * its notice, still to come, makes it live. */
        r = kq_rec_new(k, key);
        r->gone = true;
    }
    uint64_t adm_h;
    uint64_t fp = fingerprint(obj, cond, &adm_h);
    if (r->fp_ok && r->fp == fp && !r->w.replaces)
        return;
    rec_derive(k, e, r, obj, cond, adm_h, now);
    r->fp = fp;
    r->fp_ok = true;
    if (r->w.replaces && !r->in_slices)
        fq_smap_add(&k->slices, key);
    else if (!r->w.replaces && r->in_slices)
        fq_smap_del(&k->slices, key);
    r->in_slices = r->w.replaces != NULL;
}

/* A candidate of a migration pass: tried (try_migrate) when it may
 * move now, its cool-down's end kept for the next pass. True when it
 * moved. */
static bool mig_visit(struct kueue *k, struct fq_engine *e, struct rec *r,
                      int64_t now)
{
    const struct wl *w = &r->w;
    if (!(w->holds && w->waiting_check && w->cq >= 0 && !w->evicting &&
          k->snap->cqs[w->cq].active))
        return false;
    if (kq_try_migrate(k, e, r, now))
        return true;
    if (r->w.hold->mig_valid && r->w.hold->mig_retry < k->mig_retry)
        k->mig_retry = r->w.hold->mig_retry;
    return false;
}

static int rec_key_cmp(const void *x, const void *y)
{
    return fq_keyq_order((*(struct rec *const *)x)->key,
                         (*(struct rec *const *)y)->key);
}

/*
 * A pass of the migrate_to_preferred_flavor switch over the candidates,
 * in key order. When no candidate may have a reason to move but the new
 * ones (see mig_new), those alone are looked at, in that order, and the
 * others, which would only find what they found, are not; a move frees
 * quota, so after one every candidate after it is looked at, as a pass
 * over all of them does. mig_retry only needs to be no later than the
 * earliest cool-down end: a pass it brings early finds nothing to do.
 */
void kq_mig_pass(struct kueue *k, struct fq_engine *e, int64_t now)
{
    size_t n = k->nmig;
    FQ_GROW(k->mig_copy, k->capmig_copy, n);
    struct rec **v = k->mig_copy;
    memcpy(v, k->mig, n * sizeof(*v));
    uint64_t to = 0; /* flavors some candidate may move to */
    for (int f = 0; f < k->snap->adm.nflv; f++)
        if (k->mig_to[f] > 0)
            to |= 1ull << f;
    bool all = now >= k->mig_retry || (k->mig_rel & to);
    k->mig_dirty = false; /* a release during the pass sets both again */
    k->mig_rel = 0;
    size_t from = 0; /* the first candidate to look at in key order */
    if (all) {
        k->mig_retry = FQ_NEVER;
    } else {
        from = n;
        qsort(k->mig_new, k->nmig_new, sizeof(*k->mig_new), rec_key_cmp);
        for (size_t i = 0; i < k->nmig_new; i++)
            if (mig_visit(k, e, k->mig_new[i], now)) {
                from = kq_k_lower(v, n, k->mig_new[i]->key) + 1;
                break;
            }
    }
    for (size_t i = 0; i < k->nmig_new; i++)
        k->mig_new[i]->in_mig_new = false;
    k->nmig_new = 0;
    for (size_t i = from; i < n; i++)
        mig_visit(k, e, v[i], now);
}
