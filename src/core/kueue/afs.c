/*
 * afs.c - Kueue's admission fair sharing (the AdmissionFairSharing
 * feature): each LocalQueue's usage, sampled and decayed, and the order
 * it gives a ClusterQueue's pending workloads.
 *
 * The usage (Kueue's LocalQueue reconciler and admissionfairsharing
 * package)
 * ---------------------------------------------------------------------
 * With the configuration's admissionFairSharing on, every LocalQueue
 * keeps status.fairSharing.admissionFairSharingStatus: consumedResources
 * (per resource) and lastUpdate. Every usageSamplingInterval of engine
 * time after its lastUpdate (and at the next run after one of its
 * workloads got quota in a ClusterQueue that uses the feature), it is
 * sampled:
 *
 *   alpha    = 1 - 0.5 ^ (elapsed since lastUpdate / usageHalfLifeTime)
 *   consumed = consumed * (1 - alpha) + admitted * alpha + penalty
 *
 * where `admitted` is what the queue's admitted workloads hold now (per
 * resource, all flavors) and `penalty` the entry penalties since the last
 * sample: a workload that gets quota adds its requests times
 * 1 - 0.5 ^ (usageSamplingInterval / usageHalfLifeTime), so that a queue
 * that was just served does not win again before the next sample. A
 * half-life of 0 resets the usage to 0.
 *
 * Worked example: half-life 10 min, sampling 1 min (penalty factor
 * 1 - 0.5^0.1 = 0.0670). Queue A gets 8 cpu admitted at t=0: at once
 * consumed = 8 * 0.0670 = 0.536 cpu. One minute later it is
 * 0.536 * 0.933 + 8 * 0.0670 = 1.036 cpu; after the job ends the usage
 * halves every 10 minutes.
 *
 * The order (Kueue's ClusterQueue queue ordering)
 * ------------------------------------------------
 * In a ClusterQueue with spec.admissionScope.admissionMode
 * UsageBasedAdmissionFairSharing, pending workloads are ordered first by
 * their LocalQueue's key, lower first:
 *
 *   key = sum over resources r of weight(r) * (consumed(r) + penalty(r))
 *         / spec.fairSharing.weight
 *
 * (weight(r) from resourceWeights, 1 when not listed; amounts in the
 * quantity's base unit: cores, bytes, devices), then by Kueue's usual
 * order (priority, then queue-order time). A key moves only when its
 * queue is sampled or given a penalty: then that ClusterQueue's pending
 * arrays are sorted again (queues.c, kq_pq_resort). With the feature off
 * nothing here runs and the order is unchanged.
 *
 * Not done: within one flexq-paced cycle that admits several workloads
 * of one ClusterQueue, the penalties of the cycle's admissions reorder
 * the queue from the next cycle on (Kueue's one pop per cycle makes the
 * two the same under the kueue policy).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kueue/internal.h"

static double alpha_of(double elapsed_ms, int64_t half_ms)
{
    if (half_ms <= 0)
        return 0.0;
    return 1.0 - pow(0.5, elapsed_ms / (double)half_ms);
}

/* An amount in the snapshot's unit for resource r (milli for cpu) in its
 * base unit (cores), as Kueue's AsApproximateFloat64 reads it. */
static double base_units(const struct snap *s, int r, double v)
{
    return fq_quantity_scale_for(s->adm.res_names[r]) == FQ_Q_MILLI ?
               v / 1000.0 :
               v;
}

static void afs_key(struct kueue *k, struct fq_engine *e, struct lq_info *l)
{
    const struct snap *s = k->snap;
    const struct fq_afs_config *c = &fq_engine_config(e)->afs;
    double sum = 0;
    for (int r = 0; r < s->adm.nres; r++) {
        double v = l->afs_use[r] + l->afs_pen[r];
        if (v != 0)
            sum += fq_afs_weight(c, s->adm.res_names[r]) * base_units(s, r, v);
    }
    /* A weight of 0 sorts last when it has any usage (Kueue fixed the
     * reverse as a bug). */
    if (l->weight_milli <= 0)
        l->afs_key = sum > 0 ? INFINITY : 0;
    else
        l->afs_key = sum * 1000.0 / (double)l->weight_milli;
}

/* Reads a stored consumedResources back (a restart, a LocalQueue the
 * previous snapshot did not have). */
static void afs_read_status(struct snap *s, struct lq_info *l,
                            const struct fq_value *obj, int64_t now)
{
    const struct fq_value *st =
        fq_value_path(obj, "status.fairSharing.admissionFairSharingStatus");
    l->afs_last = now;
    if (!st)
        return;
    const char *lu = fq_value_path_str(st, "lastUpdate", NULL);
    l->afs_last = parse_time(lu, now);
    if (l->afs_last > now)
        l->afs_last = now;
    const struct fq_value *cr = fq_map_get(st, "consumedResources");
    if (!cr || cr->type != FQ_V_MAP)
        return;
    for (size_t i = 0; i < cr->u.map.n; i++) {
        const struct fq_member *m = &cr->u.map.items[i];
        int r = -1;
        for (int j = 0; j < s->adm.nres; j++)
            if (!strcmp(s->adm.res_names[j], m->key))
                r = j;
        const char *q = fq_value_as_str(m->val);
        int64_t milli;
        if (r < 0 || !q ||
            fq_quantity_parse(q, FQ_Q_MILLI, &milli, NULL, NULL) != 0 ||
            milli < 0)
            continue;
        l->afs_use[r] = fq_quantity_scale_for(m->key) == FQ_Q_MILLI ?
                            (double)milli :
                            (double)milli / 1000.0;
    }
}

void kq_afs_setup(struct kueue *k, struct fq_engine *e, struct snap *old,
                  int64_t now)
{
    struct snap *s = k->snap;
    const struct fq_engine_config *cfg = fq_engine_config(e);
    k->afs_on = cfg->afs.enable;
    k->afs_next = INT64_MAX;
    k->afs_dirty = false;
    if (!k->afs_on)
        return;
    size_t nres = (size_t)s->adm.nres;
    k->lq_use = fq_xcalloc((size_t)s->nlq * nres + 1, sizeof(*k->lq_use));
    int64_t every = fq_time_scaled(e, cfg->afs.sampling_ms);
    for (int i = 0; i < s->nlq; i++) {
        struct lq_info *l = &s->lqs[i];
        const struct fq_value *obj =
            stored(e, FQ_KIND_LOCALQUEUE, l->ns, l->name);
        l->afs_use = fq_xcalloc(nres + 1, sizeof(*l->afs_use));
        l->afs_pen = fq_xcalloc(nres + 1, sizeof(*l->afs_pen));
        l->weight_milli = 1000;
        if (obj) {
            struct fq_localqueue v;
            if (fq_localqueue_decode(obj, NULL, &v, NULL) == 0) {
                l->weight_milli = v.fair_weight_milli;
                fq_localqueue_release(&v);
            }
        }
        int ci = kq_find_cq(s, l->cq);
        l->afs_cq = ci;
        l->afs = ci >= 0 && s->cqs[ci].view.usage_based_afs;
        struct lq_info *was = old ? kq_find_lq(old, l->ns, l->name) : NULL;
        if (was && was->afs_use) {
            /* Carried over by resource name: the configuration moved. */
            l->afs_last = was->afs_last;
            l->afs_penalty = was->afs_penalty;
            for (int r = 0; r < old->adm.nres; r++) {
                int to = fq_adm_find_resource(&s->adm, old->adm.res_names[r]);
                if (to < 0)
                    continue;
                l->afs_use[to] = was->afs_use[r];
                l->afs_pen[to] = was->afs_pen[r];
            }
        } else if (obj) {
            afs_read_status(s, l, obj, now);
        } else {
            l->afs_last = now;
        }
        k->afs_dirty |= l->afs_penalty;
        afs_key(k, e, l);
        int64_t due = l->afs_last + every;
        if (due < k->afs_next)
            k->afs_next = due;
    }
}

void kq_afs_release(struct snap *s)
{
    for (int i = 0; i < s->nlq; i++) {
        free(s->lqs[i].afs_use);
        free(s->lqs[i].afs_pen);
    }
}

void kq_afs_charge(struct kueue *k, const struct wl *w, int sign)
{
    const struct snap *s = k->snap;
    int nres = s->adm.nres;
    if (!w->lq || nres <= 0)
        return;
    int64_t *u = &k->lq_use[(size_t)(w->lq - s->lqs) * (size_t)nres];
    for (int i = 0; i < w->nuse; i++)
        u[w->use_fr[i] % nres] += sign * w->use_amt[i];
}

void kq_afs_penalty(struct kueue *k, struct fq_engine *e, const struct wl *w)
{
    struct lq_info *l = w->lq;
    if (!k->afs_on || !l || !l->afs || k->snap->adm.nres <= 0)
        return;
    const struct fq_afs_config *c = &fq_engine_config(e)->afs;
    double a = alpha_of((double)fq_time_scaled(e, c->sampling_ms),
                        fq_time_scaled(e, c->half_life_ms));
    for (int i = 0; i < w->nuse; i++)
        l->afs_pen[w->use_fr[i] % k->snap->adm.nres] +=
            (double)w->use_amt[i] * a;
    l->afs_penalty = true;
    k->afs_dirty = true;
}

/* Samples queue l (index i) at `now` (see the top of the file). */
static void afs_sample(struct kueue *k, struct fq_engine *e, int i, int64_t now)
{
    struct snap *s = k->snap;
    struct lq_info *l = &s->lqs[i];
    int nres = s->adm.nres;
    int64_t half = fq_time_scaled(e, fq_engine_config(e)->afs.half_life_ms);
    const int64_t *adm = &k->lq_use[(size_t)i * (size_t)nres];
    double a = alpha_of((double)(now - l->afs_last), half);
    for (int r = 0; r < nres; r++) {
        double v = half <= 0 ? 0.0 :
                               l->afs_use[r] * (1.0 - a) + (double)adm[r] * a +
                                   l->afs_pen[r];
        l->afs_use[r] = v;
        l->afs_pen[r] = 0;
    }
    l->afs_penalty = false;
    l->afs_last = now;
}

void kq_afs_run(struct kueue *k, struct fq_engine *e, int64_t now)
{
    if (!k->afs_on || !k->snap || (!k->afs_dirty && now < k->afs_next))
        return;
    struct snap *s = k->snap;
    int64_t every = fq_time_scaled(e, fq_engine_config(e)->afs.sampling_ms);
    k->afs_next = INT64_MAX;
    k->afs_dirty = false;
    /* The ClusterQueues whose order moved. */
    bool *moved = fq_xcalloc((size_t)s->ncq + 1, sizeof(*moved));
    for (int i = 0; i < s->nlq; i++) {
        struct lq_info *l = &s->lqs[i];
        if (l->afs_penalty || now >= l->afs_last + every) {
            double was = l->afs_key;
            afs_sample(k, e, i, now);
            afs_key(k, e, l);
            k->counts_dirty = true; /* its status shows the usage */
            if (l->afs && l->afs_cq >= 0 && l->afs_key != was)
                moved[l->afs_cq] = true;
        }
        if (l->afs_last + every < k->afs_next)
            k->afs_next = l->afs_last + every;
    }
    for (int c = 0; c < s->ncq; c++)
        if (moved[c]) {
            kq_pq_resort(k, c);
            k->need_cycle = true; /* another head may go first now */
        }
    free(moved);
}

/* A quantity of resource r from a double in the snapshot's unit: whole
 * units as the resource is written, a fraction in milli. */
static void afs_qty(const struct snap *s, int r, double v, char *buf, size_t n)
{
    const char *res = s->adm.res_names[r];
    if (fq_quantity_scale_for(res) == FQ_Q_MILLI ||
        fabs(v - llround(v)) < 1e-9) {
        kq_fmt_qty(res, (int64_t)llround(v), buf, n);
        return;
    }
    double m = v * 1000.0;
    if (m > 9e18)
        m = 9e18;
    fq_quantity_format((int64_t)llround(m), FQ_Q_MILLI, FQ_QF_DECIMAL_SI, buf,
                       n);
}

struct fq_value *kq_afs_status(const struct kueue *k, const struct lq_info *l)
{
    const struct snap *s = k->snap;
    struct fq_value *fs = fq_value_map();
    fq_map_set(fs, "weightedShare", fq_value_int(0));
    struct fq_value *as = fq_value_map();
    struct fq_value *cr = fq_value_map();
    for (int r = 0; r < s->adm.nres; r++) {
        if (l->afs_use[r] <= 0)
            continue;
        char q[48];
        afs_qty(s, r, l->afs_use[r], q, sizeof(q));
        if (strcmp(q, "0") != 0)
            fq_map_set(cr, s->adm.res_names[r], fq_value_str(q));
    }
    fq_map_set(as, "consumedResources", cr);
    char ts[40];
    fmt_time(l->afs_last, ts, sizeof(ts));
    fq_map_set(as, "lastUpdate", fq_value_str(ts));
    fq_map_set(fs, "admissionFairSharingStatus", as);
    return fs;
}
