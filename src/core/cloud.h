/*
 * cloud.h - the simulated cloud (the `sim` provider's model).
 *
 * A CapacityModel object (flexq.dev/v1alpha1) says what the cloud can
 * give, per machine type and zone:
 *
 *   spec:
 *     bootSeconds: 120          # node boot latency (default 60)
 *     maxWaitSeconds: 604800    # a queued request fails (Expired) after
 *     maxRunSeconds: 604800     # flex-start nodes are revoked after
 *     bookingSeconds: 600       # Provisioned capacity is kept unused for
 *     machines:
 *     - machineType: ct6e-standard-4t
 *       zone: us-east5-b        # optional; absent = every zone
 *       bootSeconds: 180        # optional override
 *       pricePerHour: 10.8      # optional override of the catalog
 *       onDemand:
 *         hosts: 8              # stock for on-demand and Spot (absent:
 *                               # unlimited)
 *         stockouts:            # windows with no on-demand stock at all
 *         - {startSeconds: 0, endSeconds: 3600}   # from the model's
 *                                                 # creation, or
 *         - {start: "2026-...Z", end: "2026-...Z"}
 *       flexStart:
 *         hosts: 16             # flex-start stock (absent: unlimited)
 *         wait: {distribution: fixed, seconds: 600}
 *               # or uniform {minSeconds, maxSeconds},
 *               # exponential {meanSeconds}, never
 *         arrivals:             # or a schedule: stock that appears
 *         - {atSeconds: 3600, hosts: 4}
 *
 * Durations written in the model are used as written; the defaults of
 * durations left out are multiplied by the engine's time_scale, so a demo
 * with time_scale 0.01 runs the 10-minute booking in 6 s.
 *
 * Random draws take a value from the engine's PRNG, so the model is
 * deterministic under the seed.
 */
#ifndef FLEXQ_CLOUD_H
#define FLEXQ_CLOUD_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/err.h"
#include "flexq/value.h"

#define FQ_CLOUD_UNLIMITED INT64_MAX

struct fq_cloud;

/* Checks a CapacityModel object: negative or impossible values, unknown
 * machine types or distributions. 0 or FQ_EINVAL with the field in err. */
int fq_cloud_validate(const struct fq_value *model, struct fq_err *err);

/*
 * Builds the model from a CapacityModel object (NULL: the defaults, an
 * unlimited cloud). `origin_ms` is the time relative windows count from
 * (the object's creationTimestamp). Returns owned, or NULL with err.
 */
struct fq_cloud *fq_cloud_new(const struct fq_value *model, double time_scale,
                              int64_t origin_ms, struct fq_err *err);
void fq_cloud_free(struct fq_cloud *c);

/* Node boot latency for a machine type in a zone. */
int64_t fq_cloud_boot_ms(const struct fq_cloud *c, const char *machine,
                         const char *zone);
int64_t fq_cloud_max_wait_ms(const struct fq_cloud *c);
int64_t fq_cloud_max_run_ms(const struct fq_cloud *c);
int64_t fq_cloud_booking_ms(const struct fq_cloud *c);

/* Price override (USD per host-hour) or a negative value for none. */
double fq_cloud_price(const struct fq_cloud *c, const char *machine,
                      const char *zone);

/*
 * Can on-demand (or Spot) give `want` more hosts at `now` when `in_use`
 * are already taken? False during a stockout window or when the stock is
 * short. *until (may be NULL) gets the end of the current stockout window
 * or FQ_NEVER (short stock never ends by itself).
 */
bool fq_cloud_ondemand_ok(const struct fq_cloud *c, const char *machine,
                          const char *zone, int64_t now, int64_t in_use,
                          int64_t want, int64_t *until);

/* Flex-start stock at `now` (arrivals so far, or hosts, or unlimited). */
int64_t fq_cloud_flex_stock(const struct fq_cloud *c, const char *machine,
                            const char *zone, int64_t now);

/* The next arrival of flex-start stock after `now`, or FQ_NEVER. */
int64_t fq_cloud_flex_next_arrival(const struct fq_cloud *c,
                                   const char *machine, const char *zone,
                                   int64_t now);

/*
 * How long a flex-start request waits in the queue, drawn with `rnd` (a
 * value of the engine's PRNG). FQ_NEVER for `never`.
 */
int64_t fq_cloud_flex_wait_ms(const struct fq_cloud *c, const char *machine,
                              const char *zone, uint64_t rnd);

#endif
