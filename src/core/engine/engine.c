/*
 * engine.c - settles the object store by running the controllers.
 *
 * How it works. The engine owns the object store and hooks into it: every
 * change (by a user through fq_engine_apply, by the runner through
 * fq_engine_pod_update, or by a controller) is queued as a notice. A settle
 * (fq_engine_run) repeats two phases until neither has work:
 *
 *   dispatch: hand each queued notice to the controllers watching its kind
 *             (on_change), oldest first;
 *   run:      call `run` of each controller that was kicked or whose
 *             next_wakeup has come, in table order.
 *
 * A controller's changes during on_change or run queue more notices, so a
 * chain of reactions (RayJob -> Workload -> admission -> pods -> binding)
 * completes inside one settle, at one instant of engine time. A round limit
 * stops a pair of controllers that would keep undoing each other; that is a
 * bug and is counted in the stats rather than looping forever.
 *
 * Each notice remembers which controller's run made it, so that a
 * controller's on_change can tell its own writes coming back
 * (fq_engine_change_is_own) and skip the run they would kick when its
 * tables hold them already. It also carries the object's "ns/name" key
 * and that key's hash (struct fq_change's key, key_hash), made once per
 * notice, so that the controllers watching the kind (three to six for a
 * Workload) do not each format and hash it for their own tables; and a
 * notice visits only the controllers that watch its kind, listed per
 * kind when the engine is made.
 *
 * Determinism: notices are dispatched in change order, controllers run in
 * table order, the PRNG is seeded from the config, and the store lists in
 * name order; so the same inputs give the same store.
 *
 * What it does not do: validation beyond identifying the kind (objects.c
 * does it, called from fq_engine_apply), any I/O, any clock.
 */
#include "flexq/engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/smap.h"
#include "engine/controllers.h"
#include "flexq/alloc.h"
#include "flexq/buf.h"
#include "flexq/objects.h"
#include "flexq/paths.h"
#include "flexq/timefmt.h"

/* The controllers (engine/controllers.h), in the order they run within a
 * round. */
static const struct fq_controller_ops *const controller_table[] = {
    &fq_jobframework_controller, &fq_kueue_controller,
    &fq_provcheck_controller,    &fq_rayjob_controller,
    &fq_raycluster_controller,   &fq_jobset_controller,
    &fq_pytorchjob_controller,   &fq_mpijob_controller,
    &fq_lws_controller,          &fq_trainjob_controller,
    &fq_job_controller,          &fq_tas_ungater_controller,
    &fq_binder_controller,       &fq_capacity_controller,
    &fq_gc_controller,
};

#define NCTRL (sizeof(controller_table) / sizeof(controller_table[0]))
/* A change's "ns/name" key handed to the watchers: a namespace (63) and a
 * name (253) with room to spare. */
#define FQ_ENGINE_KEY_MAX 600
#define MAX_ROUNDS        10000

struct notice {
    uint64_t rev;
    enum fq_change_type type;
    enum fq_kind kind;
    char *ns;              /* owned: one small block holds ns and name */
    char *name;            /* points into it */
    size_t text_size;      /* the block's size, to free it with */
    struct fq_value *last; /* owned: the object as deleted (DELETED only) */
    uint32_t nslen;        /* strlen(ns); the name's is text_size - nslen - 2 */
    bool by_controller;    /* made during a settle, not by the shell */
    unsigned char by_run;  /* the controller whose run made it, NCTRL: none */
};

struct ctrl {
    const struct fq_controller_ops *ops;
    void *self;
    bool kicked;
};

struct fq_engine {
    struct fq_engine_config cfg;
    struct fq_objstore *store;
    int64_t now;
    uint64_t rng[FQ_RAND__N][4]; /* one xoshiro256** state per stream */
    struct ctrl ctrls[NCTRL];
    size_t nctrl;
    /* The controller whose on_change is being called (NCTRL: none): it
     * is most often the one that kicks itself. */
    size_t in_change;
    /* The controller whose run is being called (NCTRL: none), and the
     * one whose run made the notice being dispatched. */
    size_t in_run;
    size_t notice_by_run;
    /* Per kind, the controllers whose on_change watches it, in table
     * order, and the kinds anyone watches: worked out once, so that a
     * notice visits only its kind's watchers (a Workload's six of the
     * fifteen) and a dispatch does not ask every controller first. */
    unsigned char watchers[FQ_KIND__COUNT][NCTRL];
    unsigned char nwatchers[FQ_KIND__COUNT];
    uint64_t watched;
    struct notice *q; /* FIFO: [qhead, qlen) are pending */
    size_t qhead, qlen, qcap;
    bool settling;
    uint64_t round_limit_hits;
    fq_objstore_hook_fn observer; /* the shell's, or NULL */
    void *observer_ctx;
};

int fq_fs_strategy_parse(const char *s)
{
    if (s && !strcmp(s, "LessThanOrEqualToFinalShare"))
        return FQ_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
    if (s && !strcmp(s, "LessThanInitialShare"))
        return FQ_FS_LESS_THAN_INITIAL_SHARE;
    return -1;
}

int fq_fair_sharing_read(const struct fq_value *v, const char *where,
                         struct fq_fair_sharing_config *c, struct fq_err *err)
{
    if (!v)
        return 0;
    if (v->type != FQ_V_MAP)
        return fq_err_set(err, FQ_EINVAL, "%s: fairSharing must be a mapping",
                          where);
    struct fq_fair_sharing_config n = *c;
    n.enable = fq_value_path_bool(v, "enable", false);
    const struct fq_value *ps = fq_map_get(v, "preemptionStrategies");
    if (ps) {
        size_t len = fq_value_len(ps);
        if (ps->type != FQ_V_SEQ || len < 1 || len > 2)
            return fq_err_set(err, FQ_EINVAL,
                              "%s: fairSharing.preemptionStrategies must list "
                              "1 or 2 strategies",
                              where);
        for (size_t i = 0; i < len; i++) {
            const char *name = fq_value_as_str(fq_seq_at(ps, i));
            int st = fq_fs_strategy_parse(name);
            if (st < 0)
                return fq_err_set(err, FQ_EINVAL,
                                  "%s: fairSharing.preemptionStrategies[%zu]: "
                                  "unknown strategy \"%s\" (known: "
                                  "LessThanOrEqualToFinalShare, "
                                  "LessThanInitialShare)",
                                  where, i, name ? name : "");
            n.strategies[i] = (enum fq_fs_strategy)st;
        }
        if (len == 2 &&
            (n.strategies[0] != FQ_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE ||
             n.strategies[1] != FQ_FS_LESS_THAN_INITIAL_SHARE))
            return fq_err_set(
                err, FQ_EINVAL,
                "%s: fairSharing.preemptionStrategies: two "
                "strategies must be [LessThanOrEqualToFinalShare, "
                "LessThanInitialShare]",
                where);
        n.nstrategies = (int)len;
    }
    *c = n;
    return 0;
}

/* A Go duration ("1h30m", "5m", "300ms", "0"): sign, then decimal
 * numbers each with a unit (ns, us, µs, ms, s, m, h), into ms (rounded
 * down). -1 when malformed. */
static int64_t go_duration_ms(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return -1;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!strcmp(s, "0"))
        return 0;
    if (!*s)
        return -1;
    double total = 0;
    while (*s) {
        if (!((*s >= '0' && *s <= '9') || *s == '.'))
            return -1;
        char *end;
        double x = strtod(s, &end);
        if (end == s)
            return -1;
        s = end;

        static const struct {
            const char *u;
            double ms;
        } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"ms", 1},
                     {"s", 1e3},   {"m", 6e4},   {"h", 3.6e6}};

        size_t best = 0, bl = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t l = strlen(units[i].u);
            if (l > bl && !strncmp(s, units[i].u, l)) {
                best = i;
                bl = l;
            }
        }
        if (!bl)
            return -1;
        total += x * units[best].ms;
        s += bl;
    }
    if (total > 1e15)
        return -1;
    return neg ? -(int64_t)total : (int64_t)total;
}

int fq_afs_read(const struct fq_value *v, const char *where,
                struct fq_afs_config *c, struct fq_err *err)
{
    if (!v)
        return 0;
    if (v->type != FQ_V_MAP)
        return fq_err_set(err, FQ_EINVAL,
                          "%s: admissionFairSharing must be a mapping", where);
    struct fq_afs_config n = *c;
    n.enable = true;
    n.half_life_ms = 0;
    n.sampling_ms = 5 * 60 * 1000;
    n.nweights = 0;
    static const char *const keys[] = {
        "usageHalfLifeTime", "usageSamplingInterval", "resourceWeights"};
    for (size_t i = 0; i < fq_value_len(v); i++) {
        const struct fq_member *m = &v->u.map.items[i];
        bool known = false;
        for (size_t k = 0; k < 3; k++)
            known |= !strcmp(m->key, keys[k]);
        if (!known)
            return fq_err_set(err, FQ_EINVAL,
                              "%s: admissionFairSharing.%s: unknown key "
                              "(known: usageHalfLifeTime, "
                              "usageSamplingInterval, resourceWeights)",
                              where, m->key);
    }
    const struct fq_value *h = fq_map_get(v, "usageHalfLifeTime");
    if (h) {
        const char *hs = fq_value_as_str(h);
        n.half_life_ms = go_duration_ms(hs);
        if (n.half_life_ms < 0)
            return fq_err_set(err, FQ_EINVAL,
                              "%s: admissionFairSharing.usageHalfLifeTime: "
                              "\"%s\" is not a duration >= 0 (as \"168h\")",
                              where, hs ? hs : "");
    }
    const struct fq_value *si = fq_map_get(v, "usageSamplingInterval");
    if (si) {
        const char *ss = fq_value_as_str(si);
        n.sampling_ms = go_duration_ms(ss);
        if (n.sampling_ms <= 0)
            return fq_err_set(err, FQ_EINVAL,
                              "%s: admissionFairSharing.usageSamplingInterval: "
                              "\"%s\" is not a duration > 0 (as \"5m\")",
                              where, ss ? ss : "");
    }
    const struct fq_value *rw = fq_map_get(v, "resourceWeights");
    if (rw) {
        if (rw->type != FQ_V_MAP)
            return fq_err_set(err, FQ_EINVAL,
                              "%s: admissionFairSharing.resourceWeights must "
                              "map resource names to numbers",
                              where);
        if (fq_value_len(rw) > FQ_AFS_MAX_WEIGHTS)
            return fq_err_set(err, FQ_EINVAL,
                              "%s: admissionFairSharing.resourceWeights: at "
                              "most %d resources",
                              where, FQ_AFS_MAX_WEIGHTS);
        for (size_t i = 0; i < fq_value_len(rw); i++) {
            const struct fq_member *m = &rw->u.map.items[i];
            const struct fq_value *x = m->val;
            if (strlen(m->key) >= FQ_AFS_NAME_MAX)
                return fq_err_set(err, FQ_EINVAL,
                                  "%s: admissionFairSharing.resourceWeights: "
                                  "resource name longer than %d",
                                  where, FQ_AFS_NAME_MAX - 1);
            double w = x && x->type == FQ_V_NUM ?
                           (x->u.num.is_int ? (double)x->u.num.i : x->u.num.d) :
                           -1;
            if (!(w >= 0) || w > 1e9)
                return fq_err_set(
                    err, FQ_EINVAL,
                    "%s: admissionFairSharing.resourceWeights.%s: "
                    "must be a number >= 0",
                    where, m->key);
            snprintf(n.weight_names[n.nweights], FQ_AFS_NAME_MAX, "%s", m->key);
            n.weights[n.nweights++] = w;
        }
    }
    *c = n;
    return 0;
}

double fq_afs_weight(const struct fq_afs_config *c, const char *res)
{
    for (int i = 0; i < c->nweights; i++)
        if (!strcmp(c->weight_names[i], res))
            return c->weights[i];
    return 1.0;
}

struct fq_policy fq_policy_default(void)
{
    struct fq_policy p = {
        .max_admissions_per_cq_per_cycle = 0,
        .migrate_to_preferred_flavor = true,
        .flavor_failure_cooldown = true,
        .flavor_cooldown_ms = 10 * 60 * 1000,
        .stockout_fallback = true,
        .stockout_fallback_after_ms = 10 * 60 * 1000,
        .cycle_ms = 0,
        .pending_message_refresh_ms = 60 * 1000,
        .starved_after_ms = -1,
    };
    return p;
}

struct fq_policy fq_policy_kueue(void)
{
    struct fq_policy p = fq_policy_default();
    p.max_admissions_per_cq_per_cycle = 1;
    p.migrate_to_preferred_flavor = false;
    p.flavor_failure_cooldown = false;
    p.stockout_fallback = false;
    p.cycle_ms = FQ_KUEUE_CYCLE_MS;
    p.pending_message_refresh_ms = 0;
    return p;
}

void fq_engine_config_init(struct fq_engine_config *c)
{
    memset(c, 0, sizeof(*c));
    c->seed = 1;
    c->policy = fq_policy_default();
    c->pods_ready.enable = false;
    c->fair_sharing.enable = false;
    c->fair_sharing.nstrategies = 2;
    c->fair_sharing.strategies[0] = FQ_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
    c->fair_sharing.strategies[1] = FQ_FS_LESS_THAN_INITIAL_SHARE;
    c->pods_ready.timeout_ms = 30 * 60 * 1000;
    c->pods_ready.recovery_timeout_ms = 30 * 60 * 1000;
    c->pods_ready.timestamp_eviction = true;
    c->pods_ready.backoff_limit_count = -1;
    c->pods_ready.backoff_base_ms = 60 * 1000;
    c->pods_ready.backoff_max_ms = 3600 * 1000;
    c->time_scale = 1.0;
    c->sim_provider = true;
    c->no_pods = false;
    c->record_events = true;
}

/* --- PRNG: xoshiro256** seeded through splitmix64 ----------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t fq_engine_rand_in(struct fq_engine *e, enum fq_rand_stream stream)
{
    uint64_t *s = e->rng[stream];
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t fq_engine_rand(struct fq_engine *e)
{
    return fq_engine_rand_in(e, FQ_RAND_OBJECTS);
}

void fq_engine_rand_suffix_in(struct fq_engine *e, enum fq_rand_stream stream,
                              char *buf, int n)
{
    /* Kubernetes' rand.String alphabet: no vowels, no confusable digits. */
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    for (int i = 0; i < n; i++)
        buf[i] =
            alphabet[fq_engine_rand_in(e, stream) % (sizeof(alphabet) - 1)];
    buf[n] = '\0';
}

void fq_engine_rand_suffix(struct fq_engine *e, char *buf, int n)
{
    fq_engine_rand_suffix_in(e, FQ_RAND_OBJECTS, buf, n);
}

void fq_engine_new_uid(struct fq_engine *e, char *buf, size_t size)
{
    uint64_t a = fq_engine_rand(e), b = fq_engine_rand(e);
    /* What snprintf("%08x-%04x-4%03x-%04x-%012llx") writes, every field
     * fixed-width, built by hand: every object the simulator creates
     * gets a uid, and the formatting cost more than the rest of it. */
    char uid[37], *p = uid;
    p = fq_hex_put(p, a >> 32, 8);
    *p++ = '-';
    p = fq_hex_put(p, a >> 16, 4);
    *p++ = '-';
    *p++ = '4';
    p = fq_hex_put(p, a, 3);
    *p++ = '-';
    p = fq_hex_put(p, 0x8000 | ((b >> 48) & 0x3fff), 4);
    *p++ = '-';
    p = fq_hex_put(p, b, 12);
    *p = '\0';
    if (size > 0) {
        size_t n = size - 1 < sizeof(uid) - 1 ? size - 1 : sizeof(uid) - 1;
        memcpy(buf, uid, n);
        buf[n] = '\0';
    }
}

/* --- change notices ------------------------------------------------------ */

static void on_store_change(void *ctx, const struct fq_change *c)
{
    struct fq_engine *e = ctx;
    if (e->qhead > 0 && e->qhead == e->qlen)
        e->qhead = e->qlen = 0;
    FQ_GROW(e->q, e->qcap, e->qlen + 1);
    struct notice *n = &e->q[e->qlen++];
    n->rev = c->rev;
    n->type = c->type;
    n->kind = c->kind;
    /* Copies, as the object may be gone by dispatch; in one small block
     * (alloc.h), as every stored change makes a notice, and malloc and
     * free cost some 120 instructions a notice more. */
    size_t lns = strlen(c->ns), lname = strlen(c->name);
    n->text_size = lns + lname + 2;
    n->nslen = (uint32_t)lns;
    n->ns = fq_small_alloc(n->text_size);
    memcpy(n->ns, c->ns, lns + 1);
    n->name = n->ns + lns + 1;
    memcpy(n->name, c->name, lname + 1);
    n->last = NULL;
    n->by_controller = e->settling;
    n->by_run = (unsigned char)e->in_run;
    if (c->type == FQ_CHANGE_DELETED) /* the store frees it otherwise */
        n->last = fq_objstore_take_deleted(e->store);
    if (e->observer)
        e->observer(e->observer_ctx, c);
}

void fq_engine_set_observer(struct fq_engine *e, fq_objstore_hook_fn fn,
                            void *ctx)
{
    e->observer = fn;
    e->observer_ctx = ctx;
}

static void notice_release(struct notice *n)
{
    fq_small_free(n->ns, n->text_size); /* and the name */
    fq_value_free(n->last);
}

/* Dispatches queued notices; returns true if there were any. */
static bool dispatch(struct fq_engine *e)
{
    bool any = false;
    while (e->qhead < e->qlen) {
        struct notice n = e->q[e->qhead++];
        any = true;
        /* A notice of a kind nobody watches (at a start-up, a ConfigMap
         * or an Event read back from the store, most of a million) is
         * released without looking its object up. */
        if (!(e->watched & FQ_KIND_BIT(n.kind))) {
            notice_release(&n);
            continue;
        }
        struct fq_change c = {
            .rev = n.rev,
            .type = n.type,
            .kind = n.kind,
            .ns = n.ns,
            .name = n.name,
            .by_controller = n.by_controller,
        };
        /* The watchers' "ns/name" key and its hash, made here and not
         * when queued: a notice of a kind nobody watches (most of a
         * start-up's) is never keyed, and a queued notice holds no more
         * than its names. (A name too long for the buffer, which
         * validation does not let in, leaves each watcher to make its
         * own.) */
        char key[FQ_ENGINE_KEY_MAX];
        size_t lns = n.nslen, lname = n.text_size - lns - 2;
        if (n.text_size <= sizeof(key)) {
            memcpy(key, n.ns, lns);
            key[lns] = '/';
            memcpy(key + lns + 1, n.name, lname + 1);
            c.key = key;
            c.key_hash = fq_smap_hash(key);
        }
        if (n.type == FQ_CHANGE_DELETED) {
            c.obj = n.last;
        } else {
            const struct fq_object *o =
                fq_objstore_get(e->store, n.kind, n.ns, n.name);
            /* Gone since: its DELETED notice follows in the queue. */
            c.obj = o ? o->obj : NULL;
        }
        if (c.obj || n.type == FQ_CHANGE_DELETED) {
            e->notice_by_run = n.by_run;
            for (size_t j = 0; j < e->nwatchers[n.kind]; j++) {
                size_t i = e->watchers[n.kind][j];
                e->in_change = i;
                e->ctrls[i].ops->on_change(e->ctrls[i].self, e, &c);
            }
            e->in_change = NCTRL;
            e->notice_by_run = NCTRL;
        }
        notice_release(&n);
    }
    /* A drained queue is not kept at a start-up's size (a notice per
     * object read back from the store: 56 bytes per object held for
     * good); it grows again by doubling when a burst comes. */
    if (e->qcap > 65536) {
        free(e->q);
        e->q = NULL;
        e->qcap = e->qlen = e->qhead = 0;
    }
    return any;
}

/* --- lifecycle --------------------------------------------------------- */

struct fq_engine *fq_engine_new(const struct fq_engine_config *cfg)
{
    struct fq_engine *e = fq_xcalloc(1, sizeof(*e));
    if (cfg)
        e->cfg = *cfg;
    else
        fq_engine_config_init(&e->cfg);
    if (e->cfg.time_scale <= 0)
        e->cfg.time_scale = 1.0;
    /* Each stream from its own splitmix64 sequence of the seed: draws in
     * one never shift another (an extra Event's uid does not change how
     * long the cloud makes a flex-start request wait). */
    for (int st = 0; st < FQ_RAND__N; st++) {
        uint64_t seed = e->cfg.seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)st);
        for (int i = 0; i < 4; i++)
            e->rng[st][i] = splitmix64(&seed);
    }
    e->in_change = e->in_run = e->notice_by_run = NCTRL;
    e->store = fq_objstore_new();
    fq_objstore_set_hook(e->store, on_store_change, e);
    for (size_t i = 0; i < NCTRL; i++) {
        const struct fq_controller_ops *ops = controller_table[i];
        struct ctrl *c = &e->ctrls[e->nctrl++];
        c->ops = ops;
        c->self = ops->create ? ops->create(e) : NULL;
    }
    for (size_t i = 0; i < e->nctrl; i++) {
        const struct fq_controller_ops *ops = e->ctrls[i].ops;
        if (!ops->on_change)
            continue;
        e->watched |= ops->watch;
        for (int k = 0; k < FQ_KIND__COUNT; k++)
            if (ops->watch & FQ_KIND_BIT(k))
                e->watchers[k][e->nwatchers[k]++] = (unsigned char)i;
    }
    return e;
}

void fq_engine_free(struct fq_engine *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nctrl; i++)
        if (e->ctrls[i].ops->destroy)
            e->ctrls[i].ops->destroy(e->ctrls[i].self);
    for (size_t i = e->qhead; i < e->qlen; i++)
        notice_release(&e->q[i]);
    free(e->q);
    fq_objstore_free(e->store);
    free(e);
}

struct fq_objstore *fq_engine_store(struct fq_engine *e)
{
    return e->store;
}

const struct fq_engine_config *fq_engine_config(const struct fq_engine *e)
{
    return &e->cfg;
}

int64_t fq_engine_now(const struct fq_engine *e)
{
    return e->now;
}

void fq_engine_kick(struct fq_engine *e, const void *self)
{
    /* Controllers without state share self NULL, and all of them are
     * kicked then. */
    if (self && e->in_change < e->nctrl &&
        e->ctrls[e->in_change].self == self) {
        e->ctrls[e->in_change].kicked = true;
        return;
    }
    for (size_t i = 0; i < e->nctrl; i++)
        if (e->ctrls[i].self == self)
            e->ctrls[i].kicked = true;
}

bool fq_engine_change_is_own(const struct fq_engine *e)
{
    return e->in_change < e->nctrl && e->notice_by_run == e->in_change;
}

void *fq_engine_controller(struct fq_engine *e, const char *name)
{
    for (size_t i = 0; i < e->nctrl; i++)
        if (!strcmp(e->ctrls[i].ops->name, name))
            return e->ctrls[i].self;
    return NULL;
}

int64_t fq_engine_next_wakeup(const struct fq_engine *e)
{
    int64_t t = FQ_NEVER;
    for (size_t i = 0; i < e->nctrl; i++) {
        const struct ctrl *c = &e->ctrls[i];
        if (c->kicked || e->qhead < e->qlen)
            return e->now;
        if (c->ops->next_wakeup) {
            int64_t w = c->ops->next_wakeup(c->self);
            if (w < t)
                t = w;
        }
    }
    return t;
}

void fq_engine_run(struct fq_engine *e, int64_t now_ms)
{
    if (now_ms > e->now)
        e->now = now_ms;
    if (e->settling)
        return; /* a controller called back in: the outer settle goes on */
    e->settling = true;
    /* Only the controllers read the store until the settle ends: an
     * object's changes in it reach the log as one (objstore.h). */
    fq_objstore_log_window(e->store);
    for (int round = 0;; round++) {
        if (round == MAX_ROUNDS) {
            e->round_limit_hits++;
            break;
        }
        bool work = dispatch(e);
        for (size_t i = 0; i < e->nctrl; i++) {
            struct ctrl *c = &e->ctrls[i];
            bool due = c->kicked;
            if (!due && c->ops->next_wakeup)
                due = c->ops->next_wakeup(c->self) <= e->now;
            if (!due || !c->ops->run)
                continue;
            c->kicked = false;
            e->in_run = i;
            c->ops->run(c->self, e, e->now);
            e->in_run = NCTRL;
            work = true;
            dispatch(e);
        }
        if (!work && e->qhead == e->qlen)
            break;
        /* Stop when nothing is queued and nobody is kicked or due. */
        bool more = e->qhead < e->qlen;
        for (size_t i = 0; i < e->nctrl && !more; i++) {
            struct ctrl *c = &e->ctrls[i];
            more = c->kicked || (c->ops->next_wakeup &&
                                 c->ops->next_wakeup(c->self) <= e->now);
        }
        if (!more)
            break;
    }
    fq_objstore_log_window_end(e->store);
    e->settling = false;
}

/* --- user-facing inputs ---------------------------------------------------- */

int fq_engine_apply(struct fq_engine *e, struct fq_value *obj, int64_t now_ms,
                    bool *created, bool *changed, struct fq_err *err)
{
    if (created)
        *created = false;
    if (changed)
        *changed = false;
    if (now_ms > e->now)
        e->now = now_ms;
    struct fq_errlist errs;
    fq_errlist_init(&errs);
    int rc = fq_object_validate(obj, NULL, &errs);
    if (rc < 0 || errs.n > 0) {
        if (errs.n > 0 && err)
            *err = errs.items[0];
        else
            fq_err_set(err, rc < 0 ? rc : FQ_EINVAL, "invalid object");
        rc = errs.n > 0 ? errs.items[0].code : rc;
        if (rc >= 0)
            rc = FQ_EINVAL;
        fq_errlist_release(&errs);
        fq_value_free(obj);
        return rc;
    }
    fq_errlist_release(&errs);

    enum fq_kind kind =
        fq_kind_from_gvk(fq_value_path_str(obj, "apiVersion", ""),
                         fq_value_path_str(obj, "kind", ""));
    const char *name = fq_meta_name(obj);
    const char *ns = fq_meta_namespace(obj);
    const struct fq_object *old = fq_objstore_get(e->store, kind, ns, name);
    if (kind == FQ_KIND_SERVICE &&
        (rc = fq_service_defaults(obj, e->store, old ? old->obj : NULL)) < 0) {
        fq_err_set(err, rc,
                   "Service \"%s\": no cluster IP left in "
                   "10.96.0.0/12",
                   name);
        fq_value_free(obj);
        return rc;
    }
    if (kind == FQ_KIND_SECRET &&
        (rc = fq_secret_defaults(obj, old ? old->obj : NULL, err)) < 0) {
        fq_value_free(obj);
        return rc;
    }
    if (old) {
        if (kind == FQ_KIND_JOB)
            fq_job_default_selector(obj, fq_meta_uid(old->obj));
        /* apply replaces what the user owns; the store keeps the status */
        return fq_objstore_update(e->store, obj, false, changed, NULL, err);
    }
    char uid[40];
    fq_engine_new_uid(e, uid, sizeof(uid));
    if (kind == FQ_KIND_JOB)
        fq_job_default_selector(obj, uid);
    if (kind == FQ_KIND_POD && !fq_value_path_str(obj, FQ_POD_PHASE, NULL))
        /* as the API server creates a pod: Pending until it runs */
        fq_map_set(fq_map_ensure_map(obj, "status"), "phase",
                   fq_value_str("Pending"));
    rc = fq_objstore_create(e->store, obj, e->now, uid, NULL, err);
    if (rc == 0) {
        if (created)
            *created = true;
        if (changed)
            *changed = true;
    }
    return rc;
}

int fq_engine_create(struct fq_engine *e, struct fq_value *obj, int64_t now_ms,
                     struct fq_err *err)
{
    if (now_ms > e->now)
        e->now = now_ms;
    char uid[40];
    fq_engine_new_uid(e, uid, sizeof(uid));
    return fq_objstore_create(e->store, obj, e->now, uid, NULL, err);
}

int fq_engine_delete(struct fq_engine *e, enum fq_kind kind, const char *ns,
                     const char *name, int64_t now_ms, struct fq_err *err)
{
    if (now_ms > e->now)
        e->now = now_ms;
    return fq_objstore_delete(e->store, kind, ns, name, err);
}

int fq_engine_pod_update(struct fq_engine *e, const char *ns, const char *name,
                         const struct fq_pod_report *r, int64_t now_ms,
                         struct fq_err *err)
{
    if (now_ms > e->now)
        e->now = now_ms;
    /* pods.c turns the report into pod status (phase, conditions,
     * container states, restarts for OnFailure / Always). Callers often
     * pass strings that live in the pod's own tree, which the update
     * replaces: work on copies. */
    char *ns_copy = fq_xstrdup(ns), *name_copy = fq_xstrdup(name);
    int rc = fq_pods_report(e, ns_copy, name_copy, r, e->now, err);
    free(ns_copy);
    free(name_copy);
    return rc;
}

/* --- events ------------------------------------------------------------- */

void fq_engine_event(struct fq_engine *e, const struct fq_value *involved,
                     const char *type, const char *reason, const char *fmt, ...)
{
    if (!e->cfg.record_events)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    const char *kind = fq_value_path_str(involved, "kind", "");
    const char *name = fq_meta_name(involved);
    const char *ns = fq_meta_namespace(involved);
    const char *uid = fq_meta_uid(involved);
    if (!*ns)
        ns = "default";

    /* Same object, reason and message: one Event with a count, as
     * Kubernetes' event recorder aggregates them. */
    uint64_t h = 1469598103934665603ull;
    const char *parts[] = {kind, name, uid, reason, msg};
    for (size_t i = 0; i < 5; i++) {
        for (const char *p = parts[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    char evname[300];
    snprintf(evname, sizeof(evname), "%.240s.%016llx", name,
             (unsigned long long)h);
    char ts[40];
    fq_time_format(e->now, ts, sizeof(ts));

    struct fq_value *ev = fq_objstore_edit(e->store, FQ_KIND_EVENT, ns, evname);
    if (ev) {
        fq_map_set(ev, "count",
                   fq_value_int(fq_value_path_int(ev, "count", 1) + 1));
        fq_map_set(ev, "lastTimestamp", fq_value_str(ts));
        fq_objstore_update(e->store, ev, true, NULL, NULL, NULL);
        return;
    }
    ev = fq_value_map();
    fq_map_set(ev, "apiVersion", fq_value_str("v1"));
    fq_map_set(ev, "kind", fq_value_str("Event"));
    struct fq_value *md = fq_map_ensure_map(ev, "metadata");
    fq_map_set(md, "name", fq_value_str(evname));
    fq_map_set(md, "namespace", fq_value_str(ns));
    struct fq_value *io = fq_map_ensure_map(ev, "involvedObject");
    fq_map_set(io, "apiVersion",
               fq_value_str(fq_value_path_str(involved, "apiVersion", "")));
    fq_map_set(io, "kind", fq_value_str(kind));
    fq_map_set(io, "name", fq_value_str(name));
    if (fq_value_path_str(involved, FQ_META_NAMESPACE, NULL))
        fq_map_set(io, "namespace", fq_value_str(ns));
    fq_map_set(io, "uid", fq_value_str(uid));
    fq_map_set(ev, "reason", fq_value_str(reason));
    fq_map_set(ev, "message", fq_value_str(msg));
    fq_map_set(ev, "type", fq_value_str(type));
    fq_map_set(ev, "count", fq_value_int(1));
    fq_map_set(ev, "firstTimestamp", fq_value_str(ts));
    fq_map_set(ev, "lastTimestamp", fq_value_str(ts));
    fq_map_set(fq_map_ensure_map(ev, "source"), "component",
               fq_value_str("flexq"));
    char uid2[40];
    fq_engine_new_uid(e, uid2, sizeof(uid2));
    fq_objstore_create(e->store, ev, e->now, uid2, NULL, NULL);
}
