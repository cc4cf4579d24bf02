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
 *   on-demand: "can I have 4 more hosts at t?"  -> no when in_use + want
 *              exceeds the stock at t (hosts, changed by the schedule's
 *              steps: a step to 0 hosts is a stockout window)
 *   flex-start: "how long does this request queue?" -> a draw from the
 *              row's distribution; "how much stock is there at t?" -> the
 *              schedule's level at t, or hosts, or unlimited
 *
 * Example: {name: ct6e-standard-4t, onDemand: {hosts: 8, schedule: [{at:
 * 0, hosts: 0}, {at: 1800, hosts: 8}]}} makes every on-demand scale-up of
 * that type fail for the first 30 minutes after the model was created;
 * the autoscaler backs off (5, 10, 20, 30 min) and succeeds after.
 *
 * Invariants: all durations are >= 0 ms after decoding; schedule steps are
 * in time order; rows and steps are capped (MAX_ROWS, MAX_STEPS).
 *
 * What it does not do: keep state. Which hosts are in use is the capacity
 * controller's business (it counts Nodes); the model only answers.
 */
#include "flexq/cloud.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexq/alloc.h"
#include "flexq/catalog.h"
#include "flexq/engine.h"

#define MAX_ROWS  64
#define MAX_STEPS 64

#define DEFAULT_BOOT_MS    (60 * 1000LL)
#define DEFAULT_WAIT_MS    (120 * 1000LL)
#define DEFAULT_MAXWAIT_MS (7 * 24 * 3600 * 1000LL)
#define DEFAULT_MAXRUN_MS  (7 * 24 * 3600 * 1000LL)
#define DEFAULT_BOOKING_MS (10 * 60 * 1000LL)

enum dist {
    DIST_FIXED,
    DIST_UNIFORM,
    DIST_EXPONENTIAL
};

struct step {
    int64_t at, hosts; /* from `at` on, the stock is `hosts` */
};

struct row {
    const char *zone;    /* borrowed from `names` */
    const char *machine; /* borrowed from `names` */
    int64_t boot_ms;
    int64_t od_hosts;
    struct step od[MAX_STEPS];
    int nod;
    int64_t flex_hosts;
    struct step fx[MAX_STEPS];
    int nfx;
    enum dist dist;
    int64_t wait_min_ms, wait_max_ms, wait_mean_ms;
    int64_t max_wait_ms, max_run_ms, booking_ms;
    double price[3]; /* by enum fq_provisioning; < 0 when not given */
};

struct fq_cloud {
    int64_t unneeded_ms, backoff_initial_ms, backoff_max_ms;
    double scale; /* durations are divided by the model's timeScale and
                     multiplied by the engine's time_scale for defaults */
    struct row rows[MAX_ROWS];
    int nrows;
    char names[MAX_ROWS * 2][96];
};

/* Go-style "1h30m", "90s", "10m", "2d" or a number, in seconds. */
static int parse_duration(const struct fq_value *v, double *out)
{
    if (!v)
        return -1;
    if (v->type == FQ_V_NUM) {
        *out = v->u.num.d;
        return *out >= 0 && *out < 1e12 ? 0 : -1;
    }
    const char *s = fq_value_as_str(v);
    if (!s || !*s)
        return -1;
    double total = 0;
    while (*s) {
        char *end;
        double x = strtod(s, &end);
        if (end == s || x < 0)
            return -1;
        double unit;
        switch (*end) {
        case 'd':
            unit = 86400;
            break;
        case 'h':
            unit = 3600;
            break;
        case 'm':
            unit = end[1] == 's' ? 0.001 : 60;
            break;
        case 's':
            unit = 1;
            break;
        default:
            return -1;
        }
        end += (*end == 'm' && end[1] == 's') ? 2 : 1;
        total += x * unit;
        s = end;
    }
    *out = total;
    return total < 1e12 ? 0 : -1;
}

/* A duration at `key` as ms (divided by the model's timeScale), `def`
 * (already in ms) when absent. */
static int seconds(const struct fq_value *v, const char *key, int64_t def,
                   double div, int64_t *out, const char *where,
                   struct fq_err *err)
{
    const struct fq_value *n = fq_map_get(v, key);
    *out = def;
    if (!n)
        return 0;
    double sec;
    if (parse_duration(n, &sec) < 0)
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.%s: must be a duration >= 0 "
                          "(seconds, or like \"1h30m\")",
                          where, key);
    *out = (int64_t)llround(sec * 1000.0 / div);
    return 0;
}

static int count(const struct fq_value *v, const char *key, int64_t def,
                 int64_t *out, const char *where, struct fq_err *err)
{
    const struct fq_value *n = fq_map_get(v, key);
    *out = def;
    if (!n)
        return 0;
    if (n->type != FQ_V_NUM || !n->u.num.is_int || n->u.num.i < 0)
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.%s: must be a whole number >= 0",
                          where, key);
    *out = n->u.num.i;
    return 0;
}

static int steps(const struct fq_value *seq, struct step *out, int *n,
                 int64_t origin, double div, const char *where,
                 struct fq_err *err)
{
    if (seq && seq->type != FQ_V_SEQ)
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.schedule: must be a list", where);
    if (fq_value_len(seq) > MAX_STEPS)
        return fq_err_set(err, FQ_ELIMIT,
                          "CapacityModel %s.schedule: at most %d steps", where,
                          MAX_STEPS);
    int64_t last = INT64_MIN;
    for (size_t k = 0; k < fq_value_len(seq); k++) {
        const struct fq_value *s = fq_seq_at(seq, k);
        char ws[160];
        snprintf(ws, sizeof(ws), "%s.schedule[%zu]", where, k);
        int64_t at, hosts;
        int rc;
        if (!fq_map_get(s, "at") || !fq_map_get(s, "hosts"))
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel %s: needs `at` and `hosts`", ws);
        if ((rc = seconds(s, "at", 0, div, &at, ws, err)) < 0 ||
            (rc = count(s, "hosts", 0, &hosts, ws, err)) < 0)
            return rc;
        at += origin;
        if (at < last)
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel %s.at: steps must be in time "
                              "order",
                              ws);
        last = at;
        out[*n].at = at;
        out[*n].hosts = hosts;
        (*n)++;
    }
    return 0;
}

static int price(const struct fq_value *prices, const char *key, double *out,
                 const char *where, struct fq_err *err)
{
    const struct fq_value *v = fq_map_get(prices, key);
    *out = -1;
    if (!v)
        return 0;
    const char *s = fq_value_as_str(v);
    char *end = NULL;
    double x = v->type == FQ_V_NUM ? v->u.num.d : s ? strtod(s, &end) : -1;
    if ((s && (end == s || *end)) || !(x >= 0))
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.prices.%s: must be a decimal "
                          "number of USD per host-hour >= 0",
                          where, key);
    *out = x;
    return 0;
}

static int decode_row(struct fq_cloud *c, const struct fq_value *m,
                      const char *where, int64_t origin, double div,
                      double scale, struct row *r, struct fq_err *err)
{
    const char *mt = fq_value_path_str(m, "name", NULL);
    if (!mt)
        return fq_err_set(err, FQ_EINVAL, "CapacityModel %s.name: required",
                          where);
    if (!fq_catalog_find(mt)) {
        const char *near[3];
        size_t n = fq_catalog_closest(mt, near, 3);
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel %s.name: unknown machine type "
                          "\"%s\"; closest: %s%s%s",
                          where, mt, n ? near[0] : "", n > 1 ? ", " : "",
                          n > 1 ? near[1] : "");
    }
    snprintf(c->names[2 * c->nrows + 1], sizeof(c->names[0]), "%s", mt);
    r->machine = c->names[2 * c->nrows + 1];
#define SCALED(ms) ((int64_t)llround((double)(ms)*scale / div))
    double vdiv = div / scale; /* given values: the same rule as defaults */
    int rc;
    if ((rc = seconds(m, "bootSeconds", SCALED(DEFAULT_BOOT_MS), vdiv,
                      &r->boot_ms, where, err)) < 0)
        return rc;
    char sub[160];
    const struct fq_value *od = fq_map_get(m, "onDemand");
    snprintf(sub, sizeof(sub), "%s.onDemand", where);
    /* No onDemand: none at all (objects.h); onDemand without hosts: 0. */
    if ((rc = count(od, "hosts", 0, &r->od_hosts, sub, err)) < 0 ||
        (rc = steps(fq_map_get(od, "schedule"), r->od, &r->nod, origin, vdiv,
                    sub, err)) < 0)
        return rc;

    const struct fq_value *fs = fq_map_get(m, "flexStart");
    snprintf(sub, sizeof(sub), "%s.flexStart", where);
    /* Flex stock defaults to the on-demand stock when that is given,
     * else unlimited (a row that only describes flex-start waits). */
    if ((rc = count(fs, "hosts", od ? r->od_hosts : FQ_CLOUD_UNLIMITED,
                    &r->flex_hosts, sub, err)) < 0 ||
        (rc = steps(fq_map_get(fs, "schedule"), r->fx, &r->nfx, origin, vdiv,
                    sub, err)) < 0 ||
        (rc = seconds(fs, "maxWaitSeconds", SCALED(DEFAULT_MAXWAIT_MS), vdiv,
                      &r->max_wait_ms, sub, err)) < 0 ||
        (rc = seconds(fs, "maxRunSeconds", SCALED(DEFAULT_MAXRUN_MS), vdiv,
                      &r->max_run_ms, sub, err)) < 0 ||
        (rc = seconds(fs, "bookingSeconds", SCALED(DEFAULT_BOOKING_MS), vdiv,
                      &r->booking_ms, sub, err)) < 0)
        return rc;
    /* A schedule of arrivals starts from nothing unless hosts says. */
    if (r->nfx > 0 && !fq_map_get(fs, "hosts"))
        r->flex_hosts = 0;
    const struct fq_value *w = fq_map_get(fs, "waitSeconds");
    r->dist = DIST_FIXED;
    r->wait_min_ms = r->wait_max_ms = r->wait_mean_ms = SCALED(DEFAULT_WAIT_MS);
    if (w && w->type == FQ_V_MAP) {
        const char *d = fq_value_path_str(w, "distribution", NULL);
        int64_t dflt = SCALED(DEFAULT_WAIT_MS);
        snprintf(sub, sizeof(sub), "%s.flexStart.waitSeconds", where);
        if ((rc = seconds(w, "min", dflt, vdiv, &r->wait_min_ms, sub, err)) <
                0 ||
            (rc = seconds(w, "max", r->wait_min_ms, vdiv, &r->wait_max_ms, sub,
                          err)) < 0 ||
            (rc = seconds(w, "mean", dflt, vdiv, &r->wait_mean_ms, sub, err)) <
                0)
            return rc;
        if (!d)
            d = fq_map_get(w, "mean") ? "exponential" :
                fq_map_get(w, "max")  ? "uniform" :
                                        "fixed";
        if (!strcmp(d, "fixed"))
            r->dist = DIST_FIXED;
        else if (!strcmp(d, "uniform"))
            r->dist = DIST_UNIFORM;
        else if (!strcmp(d, "exponential"))
            r->dist = DIST_EXPONENTIAL;
        else
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel %s.distribution: \"%s\" is not "
                              "one of fixed, uniform, exponential",
                              sub, d);
        if (r->wait_max_ms < r->wait_min_ms)
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel %s: max is below min", sub);
    } else if (w) {
        int64_t ms;
        if ((rc = seconds(fs, "waitSeconds", 0, vdiv, &ms, sub, err)) < 0)
            return rc;
        r->wait_min_ms = r->wait_max_ms = r->wait_mean_ms = ms;
    }
#undef SCALED
    const struct fq_value *pr = fq_map_get(m, "prices");
    if ((rc = price(pr, "onDemand", &r->price[FQ_PROV_ON_DEMAND], where, err)) <
            0 ||
        (rc = price(pr, "flexStart", &r->price[FQ_PROV_FLEX_START], where,
                    err)) < 0 ||
        (rc = price(pr, "spot", &r->price[FQ_PROV_SPOT], where, err)) < 0)
        return rc;
    return 0;
}

static int decode(const struct fq_value *model, double scale, int64_t origin,
                  struct fq_cloud *c, struct fq_err *err)
{
    const struct fq_value *spec = fq_map_get(model, "spec");
    if (scale <= 0)
        scale = 1.0;
    c->scale = scale;
    double div = 1.0;
    const struct fq_value *ts = fq_map_get(spec, "timeScale");
    if (ts) {
        if (ts->type != FQ_V_NUM || !(ts->u.num.d > 0))
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel spec.timeScale: must be a "
                              "number > 0");
        div = ts->u.num.d;
    }
    /* One rule (docs/capacity.md, "Time scale"): every duration, given
     * here or defaulted, is divided by the model's timeScale and
     * multiplied by the engine's time_scale. `vdiv` divides given values
     * (seconds -> ms), defaults are scaled where they are made. */
    double vdiv = div / scale;
    const struct fq_value *as = fq_map_get(spec, "autoscaler");
    int rc;
    if ((rc = seconds(as, "scaleDownUnneededSeconds",
                      (int64_t)llround(600000.0 * scale / div), vdiv,
                      &c->unneeded_ms, "spec.autoscaler", err)) < 0 ||
        (rc = seconds(as, "initialBackoffSeconds",
                      (int64_t)llround(300000.0 * scale / div), vdiv,
                      &c->backoff_initial_ms, "spec.autoscaler", err)) < 0 ||
        (rc = seconds(as, "maxBackoffSeconds",
                      (int64_t)llround(1800000.0 * scale / div), vdiv,
                      &c->backoff_max_ms, "spec.autoscaler", err)) < 0)
        return rc;
    const struct fq_value *zones = fq_map_get(spec, "zones");
    if (zones && zones->type != FQ_V_SEQ)
        return fq_err_set(err, FQ_EINVAL,
                          "CapacityModel spec.zones: must be a list");
    for (size_t z = 0; z < fq_value_len(zones); z++) {
        const struct fq_value *zone = fq_seq_at(zones, z);
        const char *zn = fq_value_path_str(zone, "name", NULL);
        if (!zn)
            return fq_err_set(err, FQ_EINVAL,
                              "CapacityModel spec.zones[%zu].name: required",
                              z);
        const struct fq_value *ms = fq_map_get(zone, "machineTypes");
        for (size_t i = 0; i < fq_value_len(ms); i++) {
            if (c->nrows == MAX_ROWS)
                return fq_err_set(err, FQ_ELIMIT,
                                  "CapacityModel: at most %d machine types "
                                  "over all zones",
                                  MAX_ROWS);
            struct row *r = &c->rows[c->nrows];
            memset(r, 0, sizeof(*r));
            snprintf(c->names[2 * c->nrows], sizeof(c->names[0]), "%s", zn);
            r->zone = c->names[2 * c->nrows];
            char where[96];
            snprintf(where, sizeof(where), "spec.zones[%zu].machineTypes[%zu]",
                     z, i);
            rc = decode_row(c, fq_seq_at(ms, i), where, origin, div, scale, r,
                            err);
            if (rc < 0)
                return rc;
            c->nrows++;
        }
    }
    return 0;
}

bool fq_cloud_never_provisions(const struct fq_cloud *c, char *msg, size_t n)
{
    for (int i = 0; c && i < c->nrows; i++) {
        const struct row *r = &c->rows[i];
        if (r->flex_hosts == 0 && r->nfx == 0)
            continue;
        if (r->wait_min_ms > r->max_wait_ms) {
            snprintf(msg, n,
                     "flex-start %s in %s can never provision: its shortest "
                     "wait (%.0f s) is longer than the maximum wait (%.0f s) "
                     "after time scaling; every request fails at its "
                     "maximum wait (docs/capacity.md, \"Time scale\")",
                     r->machine, r->zone, (double)r->wait_min_ms / 1000.0,
                     (double)r->max_wait_ms / 1000.0);
            return true;
        }
    }
    return false;
}

void fq_cloud_free(struct fq_cloud *c)
{
    if (!c)
        return;
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
    /* The row of this zone first, else the machine type in any zone. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; c && i < c->nrows; i++) {
            const struct row *r = &c->rows[i];
            if (strcmp(r->machine, machine ? machine : "") != 0)
                continue;
            if (pass == 0 && zone && strcmp(r->zone, zone) != 0)
                continue;
            return r;
        }
    return NULL;
}

static int64_t scaled_default(const struct fq_cloud *c, int64_t ms)
{
    return c ? (int64_t)llround((double)ms * c->scale) : ms;
}

int64_t fq_cloud_unneeded_ms(const struct fq_cloud *c)
{
    return c ? c->unneeded_ms : 600000;
}

int64_t fq_cloud_backoff_ms(const struct fq_cloud *c, int fails)
{
    int64_t b = c ? c->backoff_initial_ms : 300000;
    int64_t max = c ? c->backoff_max_ms : 1800000;
    for (int i = 1; i < fails && b < max; i++)
        b *= 2;
    return b < max ? b : max;
}

int64_t fq_cloud_boot_ms(const struct fq_cloud *c, const char *machine,
                         const char *zone)
{
    const struct row *r = find(c, machine, zone);
    return r ? r->boot_ms : scaled_default(c, DEFAULT_BOOT_MS);
}

int64_t fq_cloud_max_wait_ms(const struct fq_cloud *c, const char *machine,
                             const char *zone)
{
    const struct row *r = find(c, machine, zone);
    return r ? r->max_wait_ms : scaled_default(c, DEFAULT_MAXWAIT_MS);
}

int64_t fq_cloud_max_run_ms(const struct fq_cloud *c, const char *machine,
                            const char *zone)
{
    const struct row *r = find(c, machine, zone);
    return r ? r->max_run_ms : scaled_default(c, DEFAULT_MAXRUN_MS);
}

int64_t fq_cloud_booking_ms(const struct fq_cloud *c, const char *machine,
                            const char *zone)
{
    const struct row *r = find(c, machine, zone);
    return r ? r->booking_ms : scaled_default(c, DEFAULT_BOOKING_MS);
}

double fq_cloud_price(const struct fq_cloud *c, const char *machine,
                      const char *zone, enum fq_provisioning p)
{
    const struct row *r = find(c, machine, zone);
    double own = r ? r->price[p] : -1;
    return own >= 0 ? own : fq_catalog_price(fq_catalog_find(machine), p);
}

/* The stock at `now` of a step schedule over a base level. */
static int64_t stock_at(int64_t base, const struct step *s, int n, int64_t now)
{
    int64_t v = base;
    for (int i = 0; i < n && s[i].at <= now; i++)
        v = s[i].hosts;
    return v;
}

/* The first step after `now` that raises the stock above `need`. */
static int64_t next_rise(const struct step *s, int n, int64_t now, int64_t need)
{
    for (int i = 0; i < n; i++)
        if (s[i].at > now && s[i].hosts >= need)
            return s[i].at;
    return FQ_NEVER;
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
    int64_t stock = stock_at(r->od_hosts, r->od, r->nod, now);
    if (stock == FQ_CLOUD_UNLIMITED || in_use + want <= stock)
        return true;
    if (until)
        *until = next_rise(r->od, r->nod, now, in_use + want);
    return false;
}

int64_t fq_cloud_flex_stock(const struct fq_cloud *c, const char *machine,
                            const char *zone, int64_t now)
{
    const struct row *r = find(c, machine, zone);
    if (!r)
        return FQ_CLOUD_UNLIMITED;
    return stock_at(r->flex_hosts, r->fx, r->nfx, now);
}

int64_t fq_cloud_flex_next_arrival(const struct fq_cloud *c,
                                   const char *machine, const char *zone,
                                   int64_t now)
{
    const struct row *r = find(c, machine, zone);
    for (int i = 0; r && i < r->nfx; i++)
        if (r->fx[i].at > now)
            return r->fx[i].at;
    return FQ_NEVER;
}

int64_t fq_cloud_flex_wait_ms(const struct fq_cloud *c, const char *machine,
                              const char *zone, uint64_t rnd)
{
    const struct row *r = find(c, machine, zone);
    /* A uniform draw in [0, 1) from the top 53 bits. */
    double u = (double)(rnd >> 11) * (1.0 / 9007199254740992.0);
    if (!r)
        return scaled_default(c, DEFAULT_WAIT_MS);
    if (r->nfx > 0)
        return 0; /* a schedule of arrivals replaces the waits */
    switch (r->dist) {
    case DIST_UNIFORM:
        return r->wait_min_ms +
               (int64_t)(u * (double)(r->wait_max_ms - r->wait_min_ms));
    case DIST_EXPONENTIAL: {
        double x = -log(1.0 - u) * (double)r->wait_mean_ms;
        return x > 1e15 ? (int64_t)1e15 : (int64_t)x;
    }
    case DIST_FIXED:
    default:
        return r->wait_min_ms;
    }
}
