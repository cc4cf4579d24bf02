/*
 * metrics_http.c - GET /metrics: the Prometheus text exposition of
 * src/core/views/metrics.c, served by flexqd.
 *
 * How: the counters and histograms that need history (admissions,
 * evictions, wait times) live in a struct fq_metrics owned here; it is
 * seeded from the store at start (so old admissions are not counted as
 * new) and fed every committed change through a daemon change listener.
 * A scrape renders gauges from the current objects plus those counters.
 * Kueue's admission attempts are read from the engine at the start of
 * each turn (and at a scrape), timed by the run that made them.
 *
 * Invariants: a scrape never changes the engine. The answer is deferred
 * like every other, so it reflects the turn's committed state.
 * Not done: gzip, OpenMetrics negotiation.
 */
#include <stdlib.h>

#include "api/api.h"
#include "api/web.h"
#include "flexq/alloc.h"
#include "flexq/metrics.h"

struct fq_metrics_http {
    struct fq_metrics *m;
};

static void on_changes(struct fq_daemon *d, const struct fq_change *c, size_t n,
                       void *ctx)
{
    (void)d;
    struct fq_metrics_http *mh = ctx;
    for (size_t i = 0; i < n; i++)
        fq_metrics_observe(mh->m, &c[i]);
}

/* At the start of each turn: the admission attempts the previous turn's
 * engine run made, with the time that run took (loop.c measures it). */
static void on_turn(struct fq_daemon *d, int64_t now_ms, void *ctx)
{
    (void)now_ms;
    struct fq_metrics_http *mh = ctx;
    fq_metrics_observe_attempts(mh->m, d->engine, d->last_run_s);
}

static void on_scrape(struct fq_daemon *d, struct fq_http_req *r, void *ctx)
{
    struct fq_metrics_http *mh = ctx;
    fq_metrics_observe_attempts(mh->m, d->engine, d->last_run_s);
    struct fq_buf b = FQ_BUF_INIT;
    fq_metrics_render(mh->m, fq_engine_store(d->engine), &b);
    fq_daemon_defer_reply(d, r, 200, "text/plain; version=0.0.4; charset=utf-8",
                          &b);
    fq_buf_release(&b);
}

struct fq_metrics_http *fq_metrics_http_attach(struct fq_daemon *d)
{
    struct fq_metrics_http *mh = fq_xcalloc(1, sizeof(*mh));
    mh->m = fq_metrics_new();
    fq_metrics_seed(mh->m, fq_engine_store(d->engine));
    fq_daemon_add_change_listener(d, on_changes, mh);
    fq_daemon_add_turn_hook(d, on_turn, mh);
    /* Cluster-wide figures (queues, flavors, nodes): admin tokens only. */
    static const struct fq_route_def def = {.prefix = "/metrics",
                                            .access = FQ_ROUTE_ADMIN};
    fq_api_add_route_def(d->api, &def, on_scrape, mh);
    return mh;
}

void fq_metrics_http_detach(struct fq_metrics_http *mh)
{
    if (!mh)
        return;
    fq_metrics_free(mh->m);
    free(mh);
}
