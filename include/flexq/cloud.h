/*
 * cloud.h - the simulated cloud (the `sim` provider's model).
 *
 * A CapacityModel object (flexq.dev/v1alpha1; the shape is the one
 * include/flexq/objects.h documents) says what the cloud can give, per
 * zone and machine type:
 *
 *   spec:
 *     timeScale: 1                 # every duration is divided by it
 *     zones:
 *     - name: us-east5-b
 *       machineTypes:
 *       - name: ct6e-standard-4t
 *         bootSeconds: 90          # node boot latency (default 60)
 *         onDemand:
 *           hosts: 8               # on-demand (and Spot) stock
 *           schedule:              # stock changes: {at: 3600, hosts: 0}
 *           - {at: 3600, hosts: 0} # is a stockout from 1 h on; `at` is
 *           - {at: 7200, hosts: 8} # seconds since the model was created,
 *                                  # or "1h30m"
 *         flexStart:
 *           hosts: 64              # flex-start stock (default: onDemand's
 *                                  # hosts if onDemand is given, else
 *                                  # unlimited)
 *           waitSeconds: 600       # or {min, max} (uniform), {mean}
 *                                  # (exponential), or {distribution, ...}
 *           schedule: [{at, hosts}] # stock over time instead of waits
 *           maxWaitSeconds: 604800 # request Failed/Expired after
 *           maxRunSeconds: 604800  # nodes revoked (CapacityRevoked) after
 *           bookingSeconds: 600    # Provisioned -> BookingExpired after
 *         prices: {onDemand: "10.80", flexStart: "5.08", spot: "3.24"}
 *     autoscaler:                  # the cluster autoscaler's timings
 *       scaleDownUnneededSeconds: 600  # idle time before scale-down
 *       initialBackoffSeconds: 300     # after a failed scale-up, doubling
 *       maxBackoffSeconds: 1800        # up to this
 *
 * A machine type without a row is unlimited, with the default durations.
 * A row without onDemand has no on-demand stock (always stocked out), as
 * objects.h says. Defaults of durations left out are multiplied by the
 * engine's time_scale (control-plane delays in demos); durations written
 * in the model are used as written (divided by timeScale).
 *
 * Random draws take a value from the engine's PRNG, so the model is
 * deterministic under the engine's seed.
 */
#ifndef FLEXQ_CLOUD_H
#define FLEXQ_CLOUD_H

#include <stdbool.h>
#include <stdint.h>

#include "flexq/catalog.h"
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
/* The autoscaler's idle time before a node is removed. */
int64_t fq_cloud_unneeded_ms(const struct fq_cloud *c);
/* Backoff of a pool after its `fails`-th failed scale-up in a row:
 * initial * 2^(fails-1), capped (5, 10, 20, 30, 30 min by default). */
int64_t fq_cloud_backoff_ms(const struct fq_cloud *c, int fails);

/* Flex-start limits: max queue wait, max run, booking time. */
/* Whether some flex-start row can never provision (its shortest wait
 * exceeds its maximum wait, after scaling); writes why into msg. */
bool fq_cloud_never_provisions(const struct fq_cloud *c, char *msg, size_t n);

int64_t fq_cloud_max_wait_ms(const struct fq_cloud *c, const char *machine,
                             const char *zone);
int64_t fq_cloud_max_run_ms(const struct fq_cloud *c, const char *machine,
                            const char *zone);
int64_t fq_cloud_booking_ms(const struct fq_cloud *c, const char *machine,
                            const char *zone);

/* USD per host-hour: the model's price, else the catalog's. */
double fq_cloud_price(const struct fq_cloud *c, const char *machine,
                      const char *zone, enum fq_provisioning p);

/*
 * Can on-demand (or Spot) give `want` more hosts at `now` when `in_use`
 * are already taken? False during a stockout window or when the stock is
 * short. *until (may be NULL) gets the end of the current stockout window
 * or FQ_NEVER (short stock never ends by itself).
 */
bool fq_cloud_ondemand_ok(const struct fq_cloud *c, const char *machine,
                          const char *zone, int64_t now, int64_t in_use,
                          int64_t want, int64_t *until);

/* Flex-start stock at `now` (the schedule's level, or hosts, or
 * FQ_CLOUD_UNLIMITED). */
int64_t fq_cloud_flex_stock(const struct fq_cloud *c, const char *machine,
                            const char *zone, int64_t now);

/* The next step of the flex-start schedule after `now`, or FQ_NEVER. */
int64_t fq_cloud_flex_next_arrival(const struct fq_cloud *c,
                                   const char *machine, const char *zone,
                                   int64_t now);

/*
 * How long a flex-start request waits in the queue, drawn with `rnd` (a
 * value of the engine's PRNG); 0 when a schedule gives the stock.
 */
int64_t fq_cloud_flex_wait_ms(const struct fq_cloud *c, const char *machine,
                              const char *zone, uint64_t rnd);

#endif
