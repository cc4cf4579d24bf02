/*
 * cloud.c - the `sim` provider's cloud: stock, stockouts, boot latency and
 * flex-start queueing, decoded once from a CapacityModel object.
 *
 * How it works. fq_cloud_new copies the model's numbers into a flat array
 * of entries, one per (machine type, zone) row; lookups pick the first row
 * whose machine type matches and whose zone matches or is absent. Every
 * question the capacity controller asks is a pure function of the model,
 * the time and (for draws) a PRNG value it passes in:
 *
 *   on-demand: "can I have 4 more hosts at t?"  -> no inside a stockout
 *              window [start, end), no when in_use + want > hosts
 *   flex-start: "how long does this request queue?" -> a draw from the
 *              row's distribution; "how much stock is there at t?" -> the
 *              sum of arrivals so far, or hosts, or unlimited
 *
 * Example: a row {machineType: ct6e-standard-4t, onDemand: {stockouts:
 * [{startSeconds: 0, endSeconds: 1800}]}} makes every on-demand scale-up of
 * that type fail for the first 30 minutes after the model was created;
 * the autoscaler backs off (5, 10, 20, 30 min) and succeeds after.
 *
 * Invariants: all durations are >= 0 ms after decoding; a window's end is
 * after its start; the row count is capped (MAX_ROWS) like any input.
 *
 * What it does not do: keep state. Which hosts are in use is the capacity
 * controller's business (it counts Nodes); the model only answers.
 */
#include "cloud.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "flexq/alloc.h"
#include "flexq/engine.h"

#define MAX_ROWS     64
#define MAX_WINDOWS  32
#define MAX_ARRIVALS 64

#define DEFAULT_BOOT_MS    (60 * 1000LL)
#define DEFAULT_WAIT_MS    (120 * 1000LL)
#define DEFAULT_MAXWAIT_MS (7 * 24 * 3600 * 1000LL)
#define DEFAULT_MAXRUN_MS  (7 * 24 * 3600 * 1000LL)
#define DEFAULT_BOOKING_MS (10 * 60 * 1000LL)

enum dist {
    DIST_FIXED,
    DIST_UNIFORM,
    DIST_EXPONENTIAL,
    DIST_NEVER
};

struct window {
    int64_t start, end;
};

struct arrival {
    int64_t at, hosts;
};

struct row {
    char *machine;
    char *zone;       /* NULL: every zone */
    int64_t boot_ms;  /* -1: the model's */
    double price;     /* < 0: the catalog's */
    int64_t od_hosts; /* FQ_CLOUD_UNLIMITED when absent */
    struct window win[MAX_WINDOWS];
    int nwin;
    int64_t flex_hosts;
    enum dist dist;
    int64_t wait_ms, wait_min_ms, wait_max_ms;
    struct arrival arr[MAX_ARRIVALS];
    int narr;
};

struct fq_cloud {
    int64_t boot_ms, max_wait_ms, max_run_ms, booking_ms;
    int64_t default_wait_ms;
    struct row rows[MAX_ROWS];
    int nrows;
};

/* Seconds at `key` as ms; `def` when absent. FQ_EINVAL when negative or
 * not a number. */
static int seconds(const struct fq_value *v, const char *key, int64_t def,
                   int64_t *out, const char *where, struct fq_err *err)
{
    const struct fq_value *n = fq_map_get(v, key);
    *out = def;
    if (!n)
        return 0;
    if (n->type != FQ_V_NUM || !(n->u.num.d >= 0) || n->u.num.d > 1e12)
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.%s: must be a number of seconds "
                          ">= 0",
                          where, key);
    *out = (int64_t)llround(n->u.num.d * 1000.0);
    return 0;
}

static int count(const struct fq_value *v, const char *key, int64_t *out,
                 const char *where, struct fq_err *err)
{
    const struct fq_value *n = fq_map_get(v, key);
    *out = FQ_CLOUD_UNLIMITED;
    if (!n)
        return 0;
    if (n->type != FQ_V_NUM || !n->u.num.is_int || n->u.num.i < 0)
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.%s: must be a whole number >= 0",
                          where, key);
    *out = n->u.num.i;
    return 0;
}

/* A window bound: RFC 3339 at `abs`, or seconds from origin at `rel`. */
static int bound(const struct fq_value *w, const char *abs, const char *rel,
                 int64_t origin, int64_t def, int64_t *out, const char *where,
                 struct fq_err *err)
{
    const char *s = fq_value_path_str(w, abs, NULL);
    if (s) {
        if (fq_time_parse(s, out) < 0)
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel %s.%s: not an RFC 3339 time: "
                              "\"%s\"",
                              where, abs, s);
        return 0;
    }
    int64_t ms;
    int rc = seconds(w, rel, -1, &ms, where, err);
    if (rc < 0)
        return rc;
    *out = ms < 0 ? def : origin + ms;
    return 0;
}

static int decode_row(const struct fq_value *m, size_t i, int64_t origin,
                      struct row *r, struct fq_err *err)
{
    char where[64];
    snprintf(where, sizeof(where), "spec.machines[%zu]", i);
    const char *mt = fq_value_path_str(m, "machineType", NULL);
    if (!mt)
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.machineType: required", where);
    if (!fq_catalog_find(mt)) {
        const char *near[3];
        size_t n = fq_catalog_closest(mt, near, 3);
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.machineType: unknown machine "
                          "type \"%s\"; closest: %s%s%s",
                          where, mt, n ? near[0] : "", n > 1 ? ", " : "",
                          n > 1 ? near[1] : "");
    }
    r->machine = fq_xstrdup(mt);
    const char *zone = fq_value_path_str(m, "zone", NULL);
    r->zone = zone ? fq_xstrdup(zone) : NULL;
    int rc = seconds(m, "bootSeconds", -1, &r->boot_ms, where, err);
    if (rc < 0)
        return rc;
    const struct fq_value *price = fq_map_get(m, "pricePerHour");
    r->price = -1;
    if (price) {
        if (price->type != FQ_V_NUM || price->u.num.d < 0)
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel %s.pricePerHour: must be a "
                              "number >= 0",
                              where);
        r->price = price->u.num.d;
    }

    const struct fq_value *od = fq_map_get(m, "onDemand");
    char sub[96];
    snprintf(sub, sizeof(sub), "%s.onDemand", where);
    if ((rc = count(od, "hosts", &r->od_hosts, sub, err)) < 0)
        return rc;
    const struct fq_value *wins = fq_map_get(od, "stockouts");
    if (fq_value_len(wins) > MAX_WINDOWS)
        return fq_err_set(err, FQ_ELIMIT,
                          "CapacityModel %s.stockouts: at most %d windows", sub,
                          MAX_WINDOWS);
    for (size_t k = 0; k < fq_value_len(wins); k++) {
        const struct fq_value *w = fq_seq_at(wins, k);
        char ws[128];
        snprintf(ws, sizeof(ws), "%s.stockouts[%zu]", sub, k);
        struct window *x = &r->win[r->nwin];
        if ((rc = bound(w, "start", "startSeconds", origin, origin, &x->start,
                        ws, err)) < 0 ||
            (rc = bound(w, "end", "endSeconds", origin, FQ_NEVER, &x->end, ws,
                        err)) < 0)
            return rc;
        if (x->end <= x->start)
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel %s: end must be after start", ws);
        r->nwin++;
    }

    const struct fq_value *fs = fq_map_get(m, "flexStart");
    snprintf(sub, sizeof(sub), "%s.flexStart", where);
    if ((rc = count(fs, "hosts", &r->flex_hosts, sub, err)) < 0)
        return rc;
    const struct fq_value *wait = fq_map_get(fs, "wait");
    const char *d = fq_value_path_str(wait, "distribution", "fixed");
    snprintf(sub, sizeof(sub), "%s.flexStart.wait", where);
    r->wait_ms = -1;
    if (!strcmp(d, "fixed")) {
        r->dist = DIST_FIXED;
        rc = seconds(wait, "seconds", -1, &r->wait_ms, sub, err);
    } else if (!strcmp(d, "uniform")) {
        r->dist = DIST_UNIFORM;
        if ((rc = seconds(wait, "minSeconds", 0, &r->wait_min_ms, sub, err)) <
                0 ||
            (rc = seconds(wait, "maxSeconds", 0, &r->wait_max_ms, sub, err)) <
                0)
            return rc;
        if (r->wait_max_ms < r->wait_min_ms)
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel %s: maxSeconds is below "
                              "minSeconds",
                              sub);
    } else if (!strcmp(d, "exponential")) {
        r->dist = DIST_EXPONENTIAL;
        rc = seconds(wait, "meanSeconds", -1, &r->wait_ms, sub, err);
    } else if (!strcmp(d, "never")) {
        r->dist = DIST_NEVER;
    } else {
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.distribution: \"%s\" is not one "
                          "of fixed, uniform, exponential, never",
                          sub, d);
    }
    if (rc < 0)
        return rc;
    const struct fq_value *arr = fq_map_get(fs, "arrivals");
    if (fq_value_len(arr) > MAX_ARRIVALS)
        return fq_err_set(err, FQ_ELIMIT,
                          "CapacityModel %s.arrivals: at most %d", where,
                          MAX_ARRIVALS);
    for (size_t k = 0; k < fq_value_len(arr); k++) {
        const struct fq_value *a = fq_seq_at(arr, k);
        char as[128];
        snprintf(as, sizeof(as), "%s.flexStart.arrivals[%zu]", where, k);
        struct arrival *x = &r->arr[r->narr];
        if ((rc = bound(a, "at", "atSeconds", origin, origin, &x->at, as,
                        err)) < 0 ||
            (rc = count(a, "hosts", &x->hosts, as, err)) < 0)
            return rc;
        if (x->hosts == FQ_CLOUD_UNLIMITED)
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel %s.hosts: "
                              "required",
                              as);
        r->narr++;
    }
    return 0;
}

static int decode(const struct fq_value *model, double scale, int64_t origin,
                  struct fq_cloud *c, struct fq_err *err)
{
    const struct fq_value *spec = fq_map_get(model, "spec");
    if (scale <= 0)
        scale = 1.0;
#define SCALED(ms) ((int64_t)llround((double)(ms)*scale))
    int rc;
    if ((rc = seconds(spec, "bootSeconds", SCALED(DEFAULT_BOOT_MS), &c->boot_ms,
                      "spec", err)) < 0 ||
        (rc = seconds(spec, "maxWaitSeconds", SCALED(DEFAULT_MAXWAIT_MS),
                      &c->max_wait_ms, "spec", err)) < 0 ||
        (rc = seconds(spec, "maxRunSeconds", SCALED(DEFAULT_MAXRUN_MS),
                      &c->max_run_ms, "spec", err)) < 0 ||
        (rc = seconds(spec, "bookingSeconds", SCALED(DEFAULT_BOOKING_MS),
                      &c->booking_ms, "spec", err)) < 0)
        return rc;
    c->default_wait_ms = SCALED(DEFAULT_WAIT_MS);
#undef SCALED
    const struct fq_value *machines = fq_map_get(spec, "machines");
    if (machines && machines->type != FQ_V_SEQ)
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel spec.machines: must be a list");
    if (fq_value_len(machines) > MAX_ROWS)
        return fq_err_set(err, FQ_ELIMIT,
                          "CapacityModel spec.machines: at most %d rows",
                          MAX_ROWS);
    for (size_t i = 0; i < fq_value_len(machines); i++) {
        struct row *r = &c->rows[c->nrows++];
        memset(r, 0, sizeof(*r));
        if ((rc = decode_row(fq_seq_at(machines, i), i, origin, r, err)) < 0)
            return rc;
    }
    return 0;
}

void fq_cloud_free(struct fq_cloud *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nrows; i++) {
        free(c->rows[i].machine);
        free(c->rows[i].zone);
    }
    free(c);
}

struct fq_cloud *fq_cloud_new(const struct fq_value *model, double time_scale,
                              int64_t origin_ms, struct fq_err *err)
{
    struct fq_cloud *c = fq_xcalloc(1, sizeof(*c));
    if (decode(model, time_scale, origin_ms, c, err) < 0) {
        fq_cloud_free(c);
        return NULL;
    }
    return c;
}

int fq_cloud_validate(const struct fq_value *model, struct fq_err *err)
{
    struct fq_cloud *c = fq_cloud_new(model, 1.0, 0, err);
    if (!c)
        return err && err->code ? err->code : FQ_EINVAL;
    fq_cloud_free(c);
    return 0;
}

static const struct row *find(const struct fq_cloud *c, const char *machine,
                              const char *zone)
{
    for (int i = 0; c && i < c->nrows; i++) {
        const struct row *r = &c->rows[i];
        if (machine && strcmp(r->machine, machine) != 0)
            continue;
        if (r->zone && zone && strcmp(r->zone, zone) != 0)
            continue;
        return r;
    }
    return NULL;
}

int64_t fq_cloud_boot_ms(const struct fq_cloud *c, const char *machine,
                         const char *zone)
{
    const struct row *r = find(c, machine, zone);
    if (r && r->boot_ms >= 0)
        return r->boot_ms;
    return c ? c->boot_ms : DEFAULT_BOOT_MS;
}

int64_t fq_cloud_max_wait_ms(const struct fq_cloud *c)
{
    return c ? c->max_wait_ms : DEFAULT_MAXWAIT_MS;
}

int64_t fq_cloud_max_run_ms(const struct fq_cloud *c)
{
    return c ? c->max_run_ms : DEFAULT_MAXRUN_MS;
}

int64_t fq_cloud_booking_ms(const struct fq_cloud *c)
{
    return c ? c->booking_ms : DEFAULT_BOOKING_MS;
}

double fq_cloud_price(const struct fq_cloud *c, const char *machine,
                      const char *zone)
{
    const struct row *r = find(c, machine, zone);
    return r ? r->price : -1;
}

bool fq_cloud_ondemand_ok(const struct fq_cloud *c, const char *machine,
                          const char *zone, int64_t now, int64_t in_use,
                          int64_t want, int64_t *until)
{
    const struct row *r = find(c, machine, zone);
    if (until)
        *until = FQ_NEVER;
    if (!r)
        return true;
    for (int i = 0; i < r->nwin; i++)
        if (now >= r->win[i].start && now < r->win[i].end) {
            if (until)
                *until = r->win[i].end;
            return false;
        }
    if (r->od_hosts != FQ_CLOUD_UNLIMITED && in_use + want > r->od_hosts)
        return false;
    return true;
}

int64_t fq_cloud_flex_stock(const struct fq_cloud *c, const char *machine,
                            const char *zone, int64_t now)
{
    const struct row *r = find(c, machine, zone);
    if (!r)
        return FQ_CLOUD_UNLIMITED;
    if (r->narr == 0)
        return r->flex_hosts;
    int64_t s = 0;
    for (int i = 0; i < r->narr; i++)
        if (r->arr[i].at <= now)
            s += r->arr[i].hosts;
    return s;
}

int64_t fq_cloud_flex_next_arrival(const struct fq_cloud *c,
                                   const char *machine, const char *zone,
                                   int64_t now)
{
    const struct row *r = find(c, machine, zone);
    int64_t t = FQ_NEVER;
    for (int i = 0; r && i < r->narr; i++)
        if (r->arr[i].at > now && r->arr[i].at < t)
            t = r->arr[i].at;
    return t;
}

int64_t fq_cloud_flex_wait_ms(const struct fq_cloud *c, const char *machine,
                              const char *zone, uint64_t rnd)
{
    const struct row *r = find(c, machine, zone);
    /* A uniform draw in [0, 1) from the top 53 bits. */
    double u = (double)(rnd >> 11) * (1.0 / 9007199254740992.0);
    if (!r)
        return c ? c->default_wait_ms : DEFAULT_WAIT_MS;
    switch (r->dist) {
    case DIST_NEVER:
        return FQ_NEVER;
    case DIST_UNIFORM:
        return r->wait_min_ms +
               (int64_t)(u * (double)(r->wait_max_ms - r->wait_min_ms));
    case DIST_EXPONENTIAL: {
        int64_t mean = r->wait_ms >= 0 ? r->wait_ms : c->default_wait_ms;
        double x = -log(1.0 - u) * (double)mean;
        return x > 1e15 ? (int64_t)1e15 : (int64_t)x;
    }
    case DIST_FIXED:
    default:
        return r->wait_ms >= 0 ? r->wait_ms : c->default_wait_ms;
    }
}
