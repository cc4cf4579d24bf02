/*
 * loop.c - flexqd's event loop: libevent, the engine's clock, group commit.
 *
 * How it works. fq_daemon_run repeats one turn until asked to stop:
 *
 *      +--> event_base_loop(EVLOOP_ONCE): every ready callback runs
 *      |      (HTTP requests apply writes to the engine and queue their
 *      |       answers; signals; the wakeup timer; module events; the
 *      |       store's "sync ended" fd, which lands the turn in flight)
 *      |    turn hooks (runner: pod exits -> fq_engine_pod_update)
 *      |    fq_engine_run(now)
 *      |    if a turn is in flight (its sync runs): stop here; what this
 *      |      turn applied and queued joins the next commit
 *      |    changes = fq_objstore_take_changes
 *      |    fq_store_write(changes)       one transaction = group commit;
 *      |                                  --sync full starts the WAL's
 *      |                                  fdatasync on the store's syncer
 *      |    the turn goes in flight: its answers and changes
 *      +--- timer := fq_engine_next_wakeup
 *
 *   in flight --sync ended (or --sync normal: at once)--> landed:
 *      send the turn's answers          only now: persist before ack
 *      change listeners, watch streams  (after the answers' writes, on
 *                                        the loop's next pass: see land)
 *
 * All requests that arrive while a turn's callbacks run, or while the
 * previous turn's sync runs, share one commit, so under load one fsync
 * covers many writes, and the loop parses and applies requests while the
 * disk syncs (store.c explains why that is as durable as synchronous=FULL).
 * Time is the wall clock in ms, clamped so the engine never sees it go
 * backwards. --time-scale N runs the control plane N times faster: the
 * engine's time_scale, the factor its control-plane delays are multiplied
 * by, is 1/N (25: a 10-minute delay lasts 24 s); the loop just asks the
 * engine when to run next.
 *
 * Start-up: the store is opened, every stored object is created again in a
 * fresh engine's object store (keeping uid, creationTimestamp, status), the
 * resulting change log is dropped (it is what the disk already holds), and
 * the engine is settled once; what the controllers change then is
 * committed like any other turn. Nothing is admitted twice because quota
 * is rebuilt from the stored Workloads' status, which was committed in the
 * same transaction as the admission decision.
 *
 * Invariants:
 *   (1) no answer to a client, no watch line and no change listener call
 *       happens before the turn that served or caused it is durable;
 *   (2) at most one turn is in flight; the next commit waits for its sync;
 *   (3) a failed commit or sync stops the daemon with an error, answering
 *       500 to what was not known durable (the engine would be ahead of
 *       the disk); a restart rebuilds from the disk. Except a full disk:
 *       the commit is tried once more after the reserve is released
 *       (space.c), and client writes are refused (507) before they are
 *       applied while space is low;
 *   (4) fq_engine_run gets non-decreasing times.
 *
 * What it does not do: threads of its own. Everything but the WAL's fsync
 * (the store's syncer thread) runs on the loop, SQLite included.
 */
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/api_authz.h"
#include "api/api_estimate.h"
#include "api/api_gke.h"
#include "api/auth.h"
#include "api/https.h"
#include "api/openapi.h"
#include "api/portforward.h"
#include "api/reqgate.h"
#include "api/web.h"
#include "daemon.h"
#include "event_gc.h"
#include "flexq/alloc.h"
#include "flexq/timefmt.h"
#include "log.h"
#include "runner/runner.h"
#include "space.h"

struct pending {
    struct fq_http_req *req;
    int status;
    const char *ctype;
    char *body;
    size_t len;
};

struct hook {
    fq_turn_fn turn;
    fq_changes_fn changes;
    void *ctx;
};

struct sig {
    struct fq_daemon *d;
    struct event *ev;
    int signo;
    fq_signal_fn fn;
    void *ctx;
};

/* A committed turn waiting for its WAL sync: answers and changes leave
 * when it ends. */
struct flight {
    bool on;
    struct pending *pend;
    size_t npend, cappend;
    struct fq_change *ch;
    size_t n;
    uint64_t rev; /* the engine store's revision when committed */
};

/* A landed turn whose answers are on their way and whose changes the
 * change listeners and watch streams have yet to see (see land). */
struct relay {
    bool on;
    struct fq_change *ch;
    size_t n;
    uint64_t rev;
    struct event *ev; /* a zero timer: after the answers' writes */
};

struct fq_loop {
    struct event_base *base;
    struct event *timer;
    struct event *wake;
    struct event *synced; /* the store's notify fd, or NULL */
    struct flight fl;
    struct relay rl;
    struct sig **sigs;
    size_t nsigs, capsigs;
    struct fq_timer **timers;
    size_t ntimers, captimers;
    struct pending *pend;
    size_t npend, cappend;
    struct hook *turns;
    size_t nturns, capturns;
    struct hook *listeners;
    size_t nlisteners, caplisteners;
    bool stop;
    int rc;
    int64_t last_now;
    int64_t timer_at;
    /* A commit no answer waits for, held back since (0: none); see
     * COMMIT_HOLD_MS. committed_rev: the engine store's revision at the
     * last commit. */
    int64_t held_since;
    uint64_t committed_rev;
};

/*
 * How long, at most, a turn's changes that no client waits for (a pod
 * ended, a timer fired) are held back so that they share the commit,
 * and its fsync, of the next turn that answers a client. One client
 * submitting job after job otherwise paid two syncs a job: its answer
 * waited for the sync of the previous job's completion, started just
 * before its request arrived. Nothing is acknowledged, streamed or
 * acted on before it is durable (invariant 1 holds); watchers of such
 * changes see them up to this much later.
 */
#define COMMIT_HOLD_MS 3

int64_t fq_daemon_now(struct fq_daemon *d)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (d->loop) {
        if (now < d->loop->last_now)
            now = d->loop->last_now;
        d->loop->last_now = now;
    }
    return now;
}

void *fq_daemon_event_base(struct fq_daemon *d)
{
    return d->loop->base;
}

int fq_daemon_port(const struct fq_daemon *d)
{
    return d->http ? fq_http_port(d->http) : 0;
}

void fq_daemon_wake(struct fq_daemon *d)
{
    event_active(d->loop->wake, EV_TIMEOUT, 0);
}

void fq_daemon_stop(struct fq_daemon *d)
{
    d->loop->stop = true;
    event_base_loopbreak(d->loop->base);
}

void fq_daemon_defer_reply(struct fq_daemon *d, struct fq_http_req *r,
                           int status, const char *ctype, struct fq_buf *body)
{
    struct fq_loop *l = d->loop;
    FQ_GROW(l->pend, l->cappend, l->npend + 1);
    struct pending *p = &l->pend[l->npend++];
    p->req = r;
    p->status = status;
    p->ctype = ctype;
    p->len = body ? body->len : 0;
    p->body = body ? fq_buf_detach(body) : NULL;
}

void fq_daemon_add_turn_hook(struct fq_daemon *d, fq_turn_fn fn, void *ctx)
{
    struct fq_loop *l = d->loop;
    FQ_GROW(l->turns, l->capturns, l->nturns + 1);
    l->turns[l->nturns++] = (struct hook){.turn = fn, .ctx = ctx};
}

void fq_daemon_add_change_listener(struct fq_daemon *d, fq_changes_fn fn,
                                   void *ctx)
{
    struct fq_loop *l = d->loop;
    FQ_GROW(l->listeners, l->caplisteners, l->nlisteners + 1);
    l->listeners[l->nlisteners++] = (struct hook){.changes = fn, .ctx = ctx};
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
    struct sig *s = arg;
    (void)fd;
    (void)what;
    s->fn(s->d, s->signo, s->ctx);
}

int fq_daemon_add_signal(struct fq_daemon *d, int signo, fq_signal_fn fn,
                         void *ctx)
{
    struct fq_loop *l = d->loop;
    struct sig *s = fq_xcalloc(1, sizeof(*s));
    s->d = d;
    s->signo = signo;
    s->fn = fn;
    s->ctx = ctx;
    s->ev = evsignal_new(l->base, signo, on_signal, s);
    if (!s->ev || evsignal_add(s->ev, NULL) < 0) {
        if (s->ev)
            event_free(s->ev);
        free(s);
        return FQ_EIO;
    }
    FQ_GROW(l->sigs, l->capsigs, l->nsigs + 1);
    l->sigs[l->nsigs++] = s;
    return 0;
}

struct fq_timer {
    struct fq_daemon *d;
    struct event *ev;
    fq_timer_fn fn;
    void *ctx;
};

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct fq_timer *t = arg;
    (void)fd;
    (void)what;
    t->fn(t->d, t->ctx);
}

struct fq_timer *fq_daemon_add_timer(struct fq_daemon *d, fq_timer_fn fn,
                                     void *ctx)
{
    struct fq_loop *l = d->loop;
    struct fq_timer *t = fq_xcalloc(1, sizeof(*t));
    t->d = d;
    t->fn = fn;
    t->ctx = ctx;
    t->ev = event_new(l->base, -1, EV_PERSIST, on_timer, t);
    FQ_GROW(l->timers, l->captimers, l->ntimers + 1);
    l->timers[l->ntimers++] = t;
    return t;
}

int fq_daemon_add_fd(struct fq_daemon *d, int fd, fq_timer_fn fn, void *ctx)
{
    /* a timer whose event is the descriptor: freed with the timers */
    struct fq_timer *t = fq_daemon_add_timer(d, fn, ctx);
    event_free(t->ev);
    t->ev = event_new(d->loop->base, fd, EV_READ | EV_PERSIST, on_timer, t);
    if (!t->ev)
        abort();
    return event_add(t->ev, NULL) == 0 ? 0 : FQ_EIO;
}

void fq_daemon_timer_arm(struct fq_timer *t, int64_t period_ms)
{
    if (!t)
        return;
    if (period_ms <= 0) {
        event_del(t->ev);
        return;
    }
    struct timeval tv = {(time_t)(period_ms / 1000),
                         (suseconds_t)(period_ms % 1000) * 1000};
    event_add(t->ev, &tv);
}

static void on_stop_signal(struct fq_daemon *d, int signo, void *ctx)
{
    (void)ctx;
    fq_log(FQ_LOG_INFO, "shutting down", "signal=%d", signo);
    fq_daemon_stop(d);
}

static void on_nothing(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

static void flush_replies(struct pending *pend, size_t *npend, int fail_code)
{
    for (size_t i = 0; i < *npend; i++) {
        struct pending *p = &pend[i];
        if (fail_code) {
            static const char msg[] =
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                "\"status\":\"Failure\",\"message\":\"the store could not "
                "commit; the write may not be saved\",\"reason\":"
                "\"InternalError\",\"code\":500}";
            fq_http_reply(p->req, 500, "application/json", msg,
                          sizeof(msg) - 1);
        } else {
            fq_http_reply(p->req, p->status, p->ctype, p->body, p->len);
        }
        free(p->body);
    }
    *npend = 0;
}

/* A landed turn's changes go to the change listeners (the runner starts
 * the pods) and the watch streams. */
static void relay(struct fq_daemon *d)
{
    struct fq_loop *l = d->loop;
    struct relay *r = &l->rl;
    if (!r->on)
        return;
    r->on = false;
    if (r->ev)
        evtimer_del(r->ev);
    for (size_t i = 0; i < l->nlisteners; i++)
        l->listeners[i].changes(d, r->ch, r->n, l->listeners[i].ctx);
    fq_api_feed(d->api, r->ch, r->n);
    fq_api_landed(d->api, r->rev);
    fq_changes_free(r->ch, r->n);
    r->ch = NULL;
    r->n = 0;
    /* The hold waits for a client's next request; while the listeners
     * held the loop (pods starting) none could be read: it starts over. */
    if (l->held_since)
        l->held_since = fq_daemon_now(d);
}

static void on_relay(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    relay(arg);
}

/*
 * The turn in flight is durable: answer, then notify. When it answered
 * someone, the notifying waits for the loop's next pass, whose writes
 * come first (libevent runs the sockets' events before a timer that is
 * due): the answers leave before the runner spends milliseconds starting
 * the turn's pods, so a client's next request travels while they start.
 * A landed turn is always relayed before the next one lands (watch lines
 * keep the store's order), and both were durable before either.
 */
static void land(struct fq_daemon *d)
{
    struct fq_loop *l = d->loop;
    struct flight *f = &l->fl;
    if (!f->on)
        return;
    f->on = false;
    bool answered = f->npend > 0;
    if (f->n == 0 && f->rev <= l->rl.rev) {
        /* Nothing changed (a turn with nothing to write lands at once):
         * nothing to relay, and a relay pending stays so. */
        flush_replies(f->pend, &f->npend, 0);
        return;
    }
    relay(d);
    flush_replies(f->pend, &f->npend, 0);
    l->rl = (struct relay){
        .on = true, .ch = f->ch, .n = f->n, .rev = f->rev, .ev = l->rl.ev};
    f->ch = NULL;
    f->n = 0;
    if (answered && l->rl.ev && !l->stop) {
        static const struct timeval now = {0, 0};
        evtimer_add(l->rl.ev, &now);
    } else {
        relay(d);
    }
}

/* A commit or its sync failed: nothing of the turn in flight or of the
 * turn at hand is known to be on disk. Answers 500 and stops. */
static void fatal_store(struct fq_daemon *d, const struct fq_err *err)
{
    struct fq_loop *l = d->loop;
    fq_log(FQ_LOG_ERROR, "commit failed, stopping", "error=\"%s\"", err->msg);
    flush_replies(l->fl.pend, &l->fl.npend, 1);
    fq_changes_free(l->fl.ch, l->fl.n);
    l->fl.ch = NULL;
    l->fl.n = 0;
    l->fl.on = false;
    flush_replies(l->pend, &l->npend, 1);
    l->rc = FQ_EIO;
    fq_daemon_stop(d);
}

/* The store's syncer ended a sync. */
static void on_synced(evutil_socket_t fd, short what, void *arg)
{
    struct fq_daemon *d = arg;
    struct fq_err err = {0};
    (void)fd;
    (void)what;
    int rc = fq_store_synced(d->store, &err);
    if (rc < 0)
        fatal_store(d, &err);
    else if (rc == 0)
        land(d);
}

/* Blocks until the turn in flight is durable, then lands it. */
static int settle_flight(struct fq_daemon *d)
{
    struct fq_err err = {0};
    if (!d->loop->fl.on)
        return 0;
    if (fq_store_wait(d->store, &err) < 0) {
        fatal_store(d, &err);
        return FQ_EIO;
    }
    land(d);
    return 0;
}

static void arm_timer(struct fq_daemon *d, int64_t now)
{
    struct fq_loop *l = d->loop;
    int64_t at = fq_engine_next_wakeup(d->engine);
    if (l->held_since && l->held_since + COMMIT_HOLD_MS < at)
        at = l->held_since + COMMIT_HOLD_MS;
    if (at == l->timer_at && evtimer_pending(l->timer, NULL))
        return;
    evtimer_del(l->timer);
    l->timer_at = at;
    if (at == FQ_NEVER)
        return;
    int64_t delay = at > now ? at - now : 0;
    if (delay > 3600 * 1000)
        delay = 3600 * 1000; /* re-check hourly; the clock may jump */
    struct timeval tv = {(time_t)(delay / 1000),
                         (suseconds_t)((delay % 1000) * 1000)};
    evtimer_add(l->timer, &tv);
}

/*
 * One turn after the callbacks: settle, then, unless the previous turn's
 * sync still runs, commit this turn's changes and put them in flight.
 * While a sync runs, requests keep being applied and answers queued; they
 * all go into the next commit (bigger groups under load).
 */
static void turn(struct fq_daemon *d)
{
    struct fq_loop *l = d->loop;
    if (l->rc < 0)
        return; /* the store failed: nothing more is written */
    int64_t now = fq_daemon_now(d);
    for (size_t i = 0; i < l->nturns; i++)
        l->turns[i].turn(d, now, l->turns[i].ctx);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fq_engine_run(d->engine, now);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    d->last_run_s = (double)(t1.tv_sec - t0.tv_sec) +
                    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (l->fl.on) {
        arm_timer(d, now);
        return;
    }
    uint64_t rev = fq_objstore_revision(fq_engine_store(d->engine));
    if (l->npend == 0 && rev != l->committed_rev &&
        d->opts.sync == FQ_STORE_SYNC_FULL && !l->stop) {
        if (!l->held_since)
            l->held_since = now;
        if (now < l->held_since + COMMIT_HOLD_MS) {
            arm_timer(d, now);
            return;
        }
    }
    l->held_since = 0;
    l->committed_rev = rev;
    struct fq_change *ch = NULL;
    size_t n = fq_objstore_take_changes(fq_engine_store(d->engine), &ch);
    struct fq_err err = {0};
    int wrc = fq_store_write(d->store, ch, n, &err);
    if (wrc == FQ_ENOSPACE && fq_space_release(d->space) == 0) {
        /* The disk filled since the last check (space.c): the reserve
         * makes room, and the turn is committed after all. */
        err = (struct fq_err){0};
        wrc = fq_store_write(d->store, ch, n, &err);
    }
    if (wrc < 0) {
        fq_changes_free(ch, n);
        fatal_store(d, &err);
        return;
    }
    if (n || l->npend)
        fq_log(FQ_LOG_DEBUG, "turn", "changes=%zu answers=%zu ms=%lld", n,
               l->npend, (long long)(fq_daemon_now(d) - now));
    /* The queued answers and the changes go in flight together. */
    struct flight *f = &l->fl;
    struct pending *tp = f->pend;
    size_t tcap = f->cappend;
    f->pend = l->pend;
    f->npend = l->npend;
    f->cappend = l->cappend;
    l->pend = tp;
    l->cappend = tcap;
    l->npend = 0;
    f->ch = ch;
    f->n = n;
    f->rev = fq_objstore_revision(fq_engine_store(d->engine));
    f->on = true;
    if (!fq_store_syncing(d->store))
        land(d); /* --sync normal, or nothing was written */
    arm_timer(d, now);
}

/* --- start-up ----------------------------------------------------------- */

static int load_one(void *ctx, enum fq_kind kind, struct fq_value *obj)
{
    struct fq_daemon *d = ctx;
    struct fq_err err = {0};
    (void)kind;
    /* As stored: uid, timestamps and resourceVersion stay what clients
     * saw before the restart. */
    int rc = fq_objstore_restore(fq_engine_store(d->engine), obj, NULL, &err);
    if (rc < 0)
        fq_log(FQ_LOG_WARN, "stored object not loaded", "error=\"%s\"",
               err.msg);
    return 0;
}

static bool opt_bool(const struct fq_value *m, const char *k, bool def)
{
    return fq_value_path_bool(m, k, def);
}

/* The namespaces every Kubernetes cluster has: `default` and
 * `kube-system` exist from the first start (kubectl and client libraries
 * look them up), labelled as the API server labels every namespace. */
static void seed_namespaces(struct fq_daemon *d)
{
    static const char *const names[] = {"default", "kube-system"};
    for (size_t i = 0; i < 2; i++) {
        if (fq_objstore_get(fq_engine_store(d->engine), FQ_KIND_NAMESPACE, "",
                            names[i]))
            continue;
        struct fq_value *ns = fq_value_map();
        fq_map_set(ns, "apiVersion", fq_value_str("v1"));
        fq_map_set(ns, "kind", fq_value_str("Namespace"));
        struct fq_value *md = fq_map_ensure_map(ns, "metadata");
        fq_map_set(md, "name", fq_value_str(names[i]));
        fq_map_set(fq_map_ensure_map(md, "labels"),
                   "kubernetes.io/metadata.name", fq_value_str(names[i]));
        fq_map_set(fq_map_ensure_map(ns, "status"), "phase",
                   fq_value_str("Active"));
        struct fq_err e = {0};
        if (fq_engine_apply(d->engine, ns, fq_daemon_now(d), NULL, NULL, &e) <
            0)
            fq_log(FQ_LOG_WARN, "namespace not created", "name=%s err=\"%s\"",
                   names[i], e.msg);
    }
}

/*
 * A policy duration `key` of the FlexqdConfig: seconds (fractional
 * allowed) or a duration ("30s", "10m"), from 0 to max_ms. Absent: *out
 * is left as it is. Else "--config: policy.KEY: ..." names what was
 * expected.
 */
static int read_policy_ms(const struct fq_value *p, const char *key,
                          int64_t max_ms, const char *example, int64_t *out,
                          struct fq_err *err)
{
    const struct fq_value *g = fq_map_get(p, key);
    if (!g)
        return 0;
    int64_t ms = -1;
    if (g->type == FQ_V_NUM) {
        double sec = g->u.num.d;
        if (sec >= 0 && sec <= (double)(max_ms / 1000))
            ms = (int64_t)(sec * 1000.0);
    } else if (fq_duration_parse(fq_value_as_str(g), &ms) < 0 || ms > max_ms) {
        ms = -1;
    }
    if (ms < 0)
        return fq_err_set(err, FQ_EINVAL,
                          "--config: policy.%s: seconds from 0 to %lld or a "
                          "duration (%s) was expected",
                          key, (long long)(max_ms / 1000), example);
    *out = ms;
    return 0;
}

/* The policy's durations: preemptionGraceSeconds (0 or absent: off,
 * Kueue), pendingMessageRefreshSeconds (0: every change of a pending
 * message written at once, Kueue), starvedAfterSeconds (absent: off,
 * moves take any room at once; docs/policies.md (b)). */
static int read_policy_durations(const struct fq_value *p,
                                 struct fq_policy *pol, struct fq_err *err)
{
    if (read_policy_ms(p, "preemptionGraceSeconds", FQ_DURATION_MAX_MS,
                       "\"30s\", \"10m\"", &pol->preemption_grace_ms,
                       err) < 0 ||
        read_policy_ms(p, "pendingMessageRefreshSeconds", 86400 * 1000LL,
                       "\"60s\", \"5m\"", &pol->pending_message_refresh_ms,
                       err) < 0 ||
        read_policy_ms(p, "starvedAfterSeconds", FQ_DURATION_MAX_MS,
                       "\"30m\", \"2h\"", &pol->starved_after_ms, err) < 0)
        return FQ_EINVAL;
    return 0;
}

/* Reads the FlexqdConfig document of --config into the engine config. */
static int read_options(const struct fq_value *doc, struct fq_engine_config *c,
                        struct fq_err *err)
{
    const struct fq_value *s = fq_map_get(doc, "spec");
    if (!s)
        s = doc;
    if (fq_value_path_bool(s, "policy.kueueExact", false))
        c->policy = fq_policy_kueue();
    const struct fq_value *p = fq_map_get(s, "policy");
    c->policy.max_admissions_per_cq_per_cycle =
        (int)fq_value_path_int(p, "maxAdmissionsPerClusterQueuePerCycle",
                               c->policy.max_admissions_per_cq_per_cycle);
    c->policy.migrate_to_preferred_flavor = opt_bool(
        p, "migrateToPreferredFlavor", c->policy.migrate_to_preferred_flavor);
    c->policy.flavor_failure_cooldown =
        opt_bool(p, "flavorFailureCooldown", c->policy.flavor_failure_cooldown);
    c->policy.flavor_cooldown_ms =
        fq_value_path_int(p, "flavorCooldownSeconds",
                          c->policy.flavor_cooldown_ms / 1000) *
        1000;
    c->policy.stockout_fallback =
        opt_bool(p, "stockoutFallback", c->policy.stockout_fallback);
    c->policy.stockout_fallback_after_ms =
        fq_value_path_int(p, "stockoutFallbackAfterSeconds",
                          c->policy.stockout_fallback_after_ms / 1000) *
        1000;
    c->policy.cycle_ms =
        fq_value_path_int(p, "cycleMilliseconds", c->policy.cycle_ms);
    if (read_policy_durations(p, &c->policy, err) < 0)
        return FQ_EINVAL;
    const struct fq_value *w = fq_map_get(s, "waitForPodsReady");
    if (w) {
        c->pods_ready.enable = opt_bool(w, "enable", true);
        c->pods_ready.timeout_ms =
            fq_value_path_int(w, "timeoutSeconds",
                              c->pods_ready.timeout_ms / 1000) *
            1000;
        c->pods_ready.block_admission =
            opt_bool(w, "blockAdmission", c->pods_ready.block_admission);
    }
    if (fq_map_get(s, "seed"))
        c->seed = (uint64_t)fq_value_path_int(s, "seed", 0);
    if (fq_afs_read(fq_map_get(s, "admissionFairSharing"), "--config", &c->afs,
                    err) < 0)
        return FQ_EINVAL;
    return fq_fair_sharing_read(fq_map_get(s, "fairSharing"), "--config",
                                &c->fair_sharing, err);
}

/* Parses --config: options into `c`, objects into `objs` (owned). */
static int read_config(const char *file, struct fq_engine_config *c,
                       struct fq_docs *objs, struct fq_err *err)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return fq_err_set(err, FQ_EIO, "--config: cannot read %s", file);
    struct fq_buf b = FQ_BUF_INIT;
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fq_buf_append(&b, chunk, got);
    fclose(f);
    struct fq_limits lim = fq_limits_default();
    struct fq_docs docs = {0};
    int rc = fq_yaml_parse(fq_buf_str(&b), b.len, file, &lim, &docs, err);
    fq_buf_release(&b);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < docs.n && rc == 0; i++)
        rc = fq_value_refuse_nonfinite(docs.items[i], file, err);
    for (size_t i = 0; i < docs.n && rc == 0; i++) {
        const char *kind = fq_value_path_str(docs.items[i], "kind", "");
        if (!strcmp(kind, "FlexqdConfig")) {
            rc = read_options(docs.items[i], c, err);
            if (rc < 0)
                break;
            continue;
        }
        FQ_GROW(objs->items, objs->cap, objs->n + 1);
        objs->items[objs->n++] = docs.items[i];
        docs.items[i] = NULL;
    }
    fq_docs_release(&docs);
    return rc;
}

/* Anyone who can reach a non-loopback address could use an API without
 * tokens as its administrator (and run processes through pods): refuse to
 * start so unless the operator says so, and then say it loudly. */
static int check_exposure(const struct fq_daemon_opts *o, struct fq_err *err)
{
    struct fq_reqgate g;
    int rc = fq_reqgate_init(&g, o->listen, err);
    if (rc < 0 || g.loopback || o->tokens_file)
        return rc;
    if (!o->insecure_listen)
        return fq_err_set(err, FQ_EINVAL,
                          "--listen %s is not a loopback address and no "
                          "--tokens were given: anyone who can reach it "
                          "would be an administrator. Add --tokens FILE, or "
                          "--insecure-listen to do it anyway",
                          o->listen);
    fprintf(stderr,
            "flexqd: WARNING: listening on %s WITHOUT AUTHENTICATION "
            "(--insecure-listen): anyone who can reach this address can "
            "create, change and delete everything and run processes\n",
            o->listen);
    fq_log(FQ_LOG_WARN, "listening without authentication",
           "listen=%s hint=\"use --tokens FILE\"", o->listen);
    return 0;
}

int fq_daemon_init(struct fq_daemon *d, const struct fq_daemon_opts *o,
                   struct fq_err *err)
{
    memset(d, 0, sizeof(*d));
    d->opts = *o;
    struct fq_loop *l = d->loop = fq_xcalloc(1, sizeof(*l));
    l->timer_at = FQ_NEVER;
    d->started_ms = fq_daemon_now(d);
    struct fq_docs cfg_objs = {0};
    struct fq_engine_config cfg;
    fq_engine_config_init(&cfg);
    cfg.seed = o->seed ? o->seed :
                         (uint64_t)d->started_ms * 6364136223846793005ull ^
                             (uint64_t)getpid();
    /* --time-scale N means N times faster; the engine multiplies its
     * control-plane delays by time_scale. */
    cfg.time_scale = o->time_scale > 0 ? 1.0 / o->time_scale : 1.0;
    cfg.sim_provider = !o->provider || !strcmp(o->provider, "sim");
    cfg.provider_demand = !cfg.sim_provider; /* provider_demand.h */
    cfg.no_pods = false;
    int rc = 0;
    if (o->config_file)
        rc = read_config(o->config_file, &cfg, &cfg_objs, err);
    if (rc == 0 && o->tokens_file)
        rc = fq_auth_load(o->tokens_file, &d->auth, err);
    if (rc == 0)
        rc = check_exposure(o, err);
    if (rc < 0)
        goto fail;
    /* Bind before touching the store: a wrong or busy address fails fast
     * and creates no data directory. Nothing is served before the loop
     * runs, so early clients just wait in the listen queue. */
    l->base = event_base_new();
    l->timer = evtimer_new(l->base, on_nothing, NULL);
    l->wake = event_new(l->base, -1, 0, on_nothing, NULL);
    l->rl.ev = evtimer_new(l->base, on_relay, d);
    d->api = fq_api_new(d);
    rc = fq_http_new(l->base, o->listen, fq_api_handle, d, &d->http, err);
    if (rc == 0)
        fq_http_set_limits(d->http, o->header_timeout_s, o->max_client_conns);
    if (rc == 0)
        rc = fq_store_open(o->data_dir, o->sync, &d->store, err);
    if (rc < 0)
        goto fail;
    d->space = fq_space_new(o->data_dir);
    if (fq_store_notify_fd(d->store) >= 0) {
        l->synced = event_new(l->base, fq_store_notify_fd(d->store),
                              EV_READ | EV_PERSIST, on_synced, d);
        event_add(l->synced, NULL);
    }
    d->engine = fq_engine_new(&cfg);
    /* What the disk holds is not a change to commit again: no copy of
     * each object goes to the change log (at a million objects, that
     * copy was a second tree per object, made and freed). */
    struct fq_objstore *os = fq_engine_store(d->engine);
    fq_objstore_set_logging(os, false);
    rc = fq_store_load(d->store, load_one, d, err);
    fq_objstore_set_logging(os, true);
    if (rc < 0)
        goto fail;
    size_t n = 0;
    for (int k = 1; k < FQ_KIND__COUNT; k++)
        n += fq_objstore_count(os, (enum fq_kind)k);
    fq_log(FQ_LOG_INFO, "store loaded", "dir=%s objects=%zu", o->data_dir, n);
    /* Watches from before this start would miss what the disk already
     * held: they get 410 and list again. */
    fq_api_history_start(d->api,
                         fq_objstore_revision(fq_engine_store(d->engine)));
    for (size_t i = 0; i < cfg_objs.n; i++) {
        struct fq_err aerr = {0};
        struct fq_value *obj = cfg_objs.items[i];
        cfg_objs.items[i] = NULL;
        if (fq_engine_apply(d->engine, obj, fq_daemon_now(d), NULL, NULL,
                            &aerr) < 0) {
            rc = fq_err_set(err, aerr.code ? aerr.code : FQ_EINVAL,
                            "--config: %s", aerr.msg);
            goto fail;
        }
    }
    fq_docs_release(&cfg_objs);
    seed_namespaces(d);

    fq_daemon_add_signal(d, SIGTERM, on_stop_signal, NULL);
    fq_daemon_add_signal(d, SIGINT, on_stop_signal, NULL);
    /* pods as processes, logs, Ray Jobs API, providers (runner.h) */
    d->runtime = fq_runtime_attach(d, err);
    if (!d->runtime) {
        rc = err && err->code ? err->code : FQ_EINTERNAL;
        goto fail;
    }
    /* gcloud's container API (api_gke.h), SelfSubject{Access,}Review
     * (api_authz.h) and the HTTPS listener (https.h). */
    fq_gke_attach(d);
    fq_portforward_attach(d);
    fq_authz_attach(d);
    if ((rc = fq_https_attach(d, err)) < 0)
        goto fail;
    d->web = fq_web_attach(d); /* dashboard, /metrics, visibility */
    fq_api_estimate_attach(d); /* wait-time forecasts */
    fq_openapi_attach(d);      /* /openapi/v2, /openapi/v3 */
    fq_event_gc_attach(d);     /* Events expire (TTL, count cap) */
    return 0;
fail:
    fq_docs_release(&cfg_objs);
    fq_daemon_release(d);
    return rc;
}

int fq_daemon_run(struct fq_daemon *d)
{
    struct fq_loop *l = d->loop;
    fq_log(FQ_LOG_INFO, "listening", "port=%d provider=%s time_scale=%g",
           fq_daemon_port(d), d->opts.provider ? d->opts.provider : "sim",
           d->opts.time_scale);
    turn(d);
    while (!l->stop) {
        event_base_loop(l->base, EVLOOP_ONCE);
        turn(d);
    }
    relay(d);
    fq_api_close_watches(d->api);
    /* The last turn's answers leave once it is durable; then one more
     * turn commits what the loop applied meanwhile. */
    if (l->rc == 0 && settle_flight(d) == 0) {
        turn(d);
        settle_flight(d);
    }
    relay(d);
    /* Best effort: let the streams' last chunks and the final answers
     * leave before the sockets close. */
    for (int i = 0; i < 8; i++)
        event_base_loop(l->base, EVLOOP_NONBLOCK);
    uint64_t commits = 0, rows = 0;
    fq_store_stats(d->store, &commits, &rows);
    fq_log(FQ_LOG_INFO, "stopped", "commits=%llu rows=%llu",
           (unsigned long long)commits, (unsigned long long)rows);
    return l->rc;
}

void fq_daemon_release(struct fq_daemon *d)
{
    struct fq_loop *l = d->loop;
    if (l) {
        /* Answers never known to be durable get 500. */
        flush_replies(l->fl.pend, &l->fl.npend, 1);
        flush_replies(l->pend, &l->npend, 1);
        fq_changes_free(l->fl.ch, l->fl.n);
        l->fl.ch = NULL;
        l->fl.n = 0;
        fq_changes_free(l->rl.ch, l->rl.n);
        l->rl.ch = NULL;
        l->rl.n = 0;
    }
    /* The runtime's log streams and timers go before the HTTP server. */
    fq_runtime_detach(d->runtime);
    d->runtime = NULL;
    fq_web_detach(d->web);
    d->web = NULL;
    fq_portforward_detach(d);
    fq_http_free(d->http);
    d->http = NULL;
    fq_https_detach(d);
    fq_gke_detach(d);
    fq_api_free(d->api);
    d->api = NULL;
    if (l) {
        for (size_t i = 0; i < l->ntimers; i++) {
            event_free(l->timers[i]->ev);
            free(l->timers[i]);
        }
        free(l->timers);
        for (size_t i = 0; i < l->nsigs; i++) {
            event_free(l->sigs[i]->ev);
            free(l->sigs[i]);
        }
        free(l->sigs);
        if (l->timer)
            event_free(l->timer);
        if (l->wake)
            event_free(l->wake);
        if (l->rl.ev)
            event_free(l->rl.ev);
        if (l->synced)
            event_free(l->synced);
        free(l->pend);
        free(l->fl.pend);
        free(l->turns);
        free(l->listeners);
        if (l->base)
            event_base_free(l->base);
        free(l);
        d->loop = NULL;
    }
    if (d->engine)
        fq_engine_free(d->engine);
    d->engine = NULL;
    fq_store_close(d->store);
    d->store = NULL;
    fq_space_free(d->space);
    d->space = NULL;
    fq_auth_free(d->auth);
    d->auth = NULL;
}
