/*
 * daemon.h - flexqd's context and the hooks other daemon modules plug into.
 *
 * struct fq_daemon ties the core engine to the outside: the SQLite store
 * (store.h), the HTTP server (http.h), the API (api.h), tokens (auth.h) and
 * the libevent loop (loop.c). One loop turn is:
 *
 *   1. libevent runs every ready callback: HTTP requests (API writes go
 *      straight into the engine with fq_engine_apply; their answers are
 *      queued with fq_daemon_defer_reply), signals, timers, child exits;
 *   2. turn hooks run (the runner reports finished pods);
 *   3. fq_engine_run(now) settles the controllers;
 *   4. unless the previous turn's commit is still being synced, the change
 *      log is committed to SQLite in one transaction (group commit) and
 *      the turn goes in flight (its fsync runs on the store's syncer);
 *   5. when that commit is durable, the turn's queued answers are sent and
 *      watch streams and change listeners get its changes;
 *   6. a timer is set for fq_engine_next_wakeup.
 *
 * So a client is answered only after everything its request caused is on
 * disk. Modules owned by other engineers (runner, Ray Jobs API, metrics,
 * web) use the fq_daemon_add_* hooks and never touch loop internals.
 */
#ifndef FLEXQ_DAEMON_H
#define FLEXQ_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/http.h"
#include "flexq/buf.h"
#include "flexq/engine.h"
#include "flexq/err.h"
#include "store.h"

struct fq_daemon_opts {
    const char *listen;      /* "127.0.0.1:8265" */
    const char *data_dir;    /* the store's directory */
    const char *provider;    /* "sim", "local" or "exec" */
    const char *executor;    /* "local" (NULL) or "slurm": executor.h */
    const char *config_file; /* NULL or a YAML file (docs/api.md) */
    const char *tokens_file; /* NULL: no authentication */
    /* HTTPS listener (https.c): "HOST:PORT", "off", or NULL / "auto"
     * for --listen's host on its port + 1 (0 stays 0), skipped with a
     * warning when that port is taken. */
    const char *tls_listen;
    const char *pod_user;   /* NULL: flexq-pod (runner.h) */
    bool allow_run_as_user; /* pods' runAsUser / runAsGroup honoured */
    double time_scale;      /* 1.0 = real time */
    enum fq_store_sync sync;
    uint64_t seed; /* 0: pick one from the clock and pid */
    /* Listen on a non-loopback address without --tokens anyway (refused
     * otherwise; warned about loudly when set). */
    bool insecure_listen;
    /* Events: seconds kept after last seen (0: 3600) and most kept (0:
     * 10,000); event_gc.h. */
    int64_t event_ttl_s;
    size_t max_events;
    /* Connections: seconds a request's headers may take (0: 10) and open
     * connections per client address (0: 256); api/connguard.h. */
    int header_timeout_s;
    unsigned max_client_conns;
};

struct fq_auth;
struct fq_api;
struct fq_loop;
struct fq_runtime;
struct fq_web;
struct fq_tls;
struct fq_gke;
struct fq_portforward;

struct fq_daemon {
    struct fq_daemon_opts opts;
    struct fq_engine *engine;
    struct fq_store *store;
    struct fq_space *space; /* free space and the reserve (space.h) */
    struct fq_auth *auth;   /* NULL when --tokens is not given */
    struct fq_http *http;
    struct fq_api *api;
    struct fq_loop *loop;       /* libevent state, private to loop.c */
    struct fq_runtime *runtime; /* pods, logs, Ray API (runner.h) */
    struct fq_web *web;         /* dashboard, /metrics (web.h) */
    struct fq_tls *tls;         /* certificates, NULL without HTTPS */
    struct fq_http *https;      /* the HTTPS listener, or NULL */
    struct fq_gke *gke;         /* gcloud's API state (api_gke.h) */
    struct fq_portforward *pf;  /* port-forward sessions (portforward.h) */
    int64_t started_ms;
    int64_t events_swept_ms; /* event_gc.c */
    int64_t tidied_ms;       /* event_gc.c */
    double last_run_s;       /* wall time of the last fq_engine_run (metrics) */
};

/*
 * Opens the store, builds the engine from it, binds the port and sets up
 * signals. On error everything is released and the error is returned.
 */
int fq_daemon_init(struct fq_daemon *d, const struct fq_daemon_opts *o,
                   struct fq_err *err);
/* Runs until SIGTERM / SIGINT / fq_daemon_stop; returns 0, or negative if
 * a commit failed (the process should exit non-zero and be restarted). */
int fq_daemon_run(struct fq_daemon *d);
void fq_daemon_stop(struct fq_daemon *d);
void fq_daemon_release(struct fq_daemon *d);

/* Wall-clock ms since the epoch, never going backwards within a run. */
int64_t fq_daemon_now(struct fq_daemon *d);
/* The libevent base (a struct event_base *), for modules that add their
 * own events (the runner's pipes, for example). */
void *fq_daemon_event_base(struct fq_daemon *d);
/* Asks for a loop turn soon even if nothing else is ready. */
void fq_daemon_wake(struct fq_daemon *d);
/* The bound HTTP port. */
int fq_daemon_port(const struct fq_daemon *d);

/*
 * Queues an answer to be sent after this turn's commit. Takes `body`'s
 * contents (the buffer is left empty). Add headers before calling.
 */
void fq_daemon_defer_reply(struct fq_daemon *d, struct fq_http_req *r,
                           int status, const char *ctype, struct fq_buf *body);

/* Runs at the start of every turn, before fq_engine_run. */
typedef void (*fq_turn_fn)(struct fq_daemon *d, int64_t now_ms, void *ctx);
void fq_daemon_add_turn_hook(struct fq_daemon *d, fq_turn_fn fn, void *ctx);

/* Runs once every commit is durable, with its changes (borrowed). */
typedef void (*fq_changes_fn)(struct fq_daemon *d, const struct fq_change *c,
                              size_t n, void *ctx);
void fq_daemon_add_change_listener(struct fq_daemon *d, fq_changes_fn fn,
                                   void *ctx);

/* Runs (in the loop, not in the signal handler) when `signo` arrives;
 * SIGCHLD for the runner. */
typedef void (*fq_signal_fn)(struct fq_daemon *d, int signo, void *ctx);
int fq_daemon_add_signal(struct fq_daemon *d, int signo, fq_signal_fn fn,
                         void *ctx);

/* A repeating timer on the loop (no signal, no process-wide itimer): fn
 * runs in the loop every period while armed. Freed with the daemon. */
struct fq_timer;
typedef void (*fq_timer_fn)(struct fq_daemon *d, void *ctx);
struct fq_timer *fq_daemon_add_timer(struct fq_daemon *d, fq_timer_fn fn,
                                     void *ctx);
/* Arms t to fire every period_ms (0 disarms it). */
void fq_daemon_timer_arm(struct fq_timer *t, int64_t period_ms);
/* fn runs in the loop whenever `fd` (borrowed; open until the daemon is
 * released) is readable. */
int fq_daemon_add_fd(struct fq_daemon *d, int fd, fq_timer_fn fn, void *ctx);

#endif
