/*
 * policies.h - the named policies `flexq sim --policy` compares.
 *
 * A policy is three choices made on top of the user's own config:
 *   - which plans the ClusterQueues may use: both (A then B, as listed),
 *     Plan A only, or Plan B only (the other plan's flavors are removed
 *     from the queue before the run);
 *   - the engine's policy switches: Kueue-exact (fq_policy_kueue()) or
 *     flexq's defaults (fq_policy_default());
 *   - the rule for jobs longer than Plan B's max run (flex-start nodes live
 *     at most that long): keep them on Plan A, split them into checkpointed
 *     segments, or refuse them.
 *
 * Plan B flavors are those that a provisioning-request admission check
 * applies to, or whose nodes come from a pool with queued provisioning;
 * every other flavor that gives the accelerator is Plan A.
 */
#ifndef FLEXQ_SIM_POLICIES_H
#define FLEXQ_SIM_POLICIES_H

#include <stdbool.h>
#include <stddef.h>

#include "flexq/engine.h"
#include "flexq/err.h"

enum fq_sim_plans {
    FQ_SIM_PLANS_BOTH = 0,
    FQ_SIM_PLAN_A_ONLY,
    FQ_SIM_PLAN_B_ONLY,
};

enum fq_sim_long_rule {
    FQ_SIM_LONG_KEEP_A = 0, /* pinned to Plan A by a nodeSelector */
    FQ_SIM_LONG_SPLIT,      /* checkpointed segments shorter than max run */
    FQ_SIM_LONG_REFUSE,     /* not submitted; reported as refused */
    FQ_SIM_LONG_SPLIT_A,    /* checkpointed segments, each pinned to Plan A:
                               at every segment's end the job queues again,
                               so Plan A goes round instead of being held */
};

/* How --route-b-area guesses a job's run time (route.c). */
enum fq_sim_route_guess {
    FQ_SIM_GUESS_LAST = 0, /* the user's last two runs, capped by the
                              job's limit (fq_runhist_guess) */
    FQ_SIM_GUESS_SHARE,    /* the job's limit x the share of their limits
                              the user's last runs used
                              (fq_runhist_guess_share) */
};

struct fq_sim_policy {
    const char *name;
    const char *summary; /* one line for --help and the docs */
    enum fq_sim_plans plans;
    bool kueue_exact; /* fq_policy_kueue() instead of the defaults */
    enum fq_sim_long_rule long_rule;
    /* Defaults of --route-b-area (hours of Plan A's quota; 0: off) and
     * --segment (ms; 0: Plan B's max run less an hour). */
    double route_b_area;
    int64_t segment_ms;
    enum fq_sim_route_guess route_guess; /* default of --route-guess */
    int64_t pods_ready_ms;               /* default of --pods-ready (0: off) */
};

/* The policy of that name, or NULL. Borrowed (static). */
const struct fq_sim_policy *fq_sim_policy_find(const char *name);
size_t fq_sim_policy_count(void);

/* The engine's switches for a policy. */
struct fq_policy fq_sim_policy_engine(const struct fq_sim_policy *p);

/*
 * Applies `--switch` overrides to engine switches `p`: a comma-separated
 * list of admissions=N (0: all that fit), migrate=on|off,
 * cooldown=on|off, stockout-fallback=on|off, cycle-ms=N. NULL or "" changes
 * nothing. FQ_EINVAL with `err` naming the item that is not one of those.
 */
int fq_sim_switches_apply(const char *spec, struct fq_policy *p,
                          struct fq_err *err);

/* "kept on Plan A", "split into checkpointed segments", "refused". */
const char *fq_sim_long_rule_text(enum fq_sim_long_rule r);
/* Parses "keep-a", "split" or "refuse". */
/* "last" or "share" into *out; FQ_EINVAL for anything else. */
int fq_sim_route_guess_parse(const char *s, enum fq_sim_route_guess *out);

int fq_sim_long_rule_parse(const char *s, enum fq_sim_long_rule *out);

#endif
