/*
 * policies.c - the table of named simulation policies (see policies.h).
 *
 * Each row is data: which plans, which engine switches, which long-job
 * rule. Adding a policy is adding a row. The rows and their reasons:
 *
 *   plan-a-only  Plan A flavors only; Kueue-exact switches. Long jobs stay
 *                on Plan A (there is nothing else). The baseline: what a
 *                fixed on-demand quota gives.
 *   plan-b-only  Plan B flavors only; Kueue-exact switches. Long jobs are
 *                split into checkpointed segments, the only way they can
 *                run on flex-start nodes at all.
 *   kueue        A then B exactly as Kueue does; a Kueue user keeps long
 *                jobs off Plan B by pinning them to Plan A with a
 *                nodeSelector, which is what this rule does.
 *   flexq        A then B with flexq's switches (several admissions per
 *                cycle, move to Plan A when it frees up, flavor cool-down,
 *                stockout fallback); jobs whose guessed chip-hours are at
 *                least an hour of Plan A's whole quota go to Plan B when
 *                its nodes cost no more per chip-hour for their shape
 *                (route.c); long jobs run in 6-hour checkpointed segments
 *                pinned to Plan A, so that they take turns with the jobs
 *                waiting for it instead of holding it for weeks. The
 *                run-time guess of that routing is the job's limit x
 *                the share of their limits its user's runs used; a
 *                workload whose pods find no room within 10 minutes of
 *                its admission (Kueue's waitForPodsReady) queues again.
 *
 * The simulator applies the plan choice to the config (simrun.c) and the
 * rule to each long job; `--long-jobs` overrides the rule of any policy.
 */
#include "policies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct fq_sim_policy policies[] = {
    {"plan-a-only", "Plan A (on-demand quota) only, Kueue-exact",
     FQ_SIM_PLAN_A_ONLY, true, FQ_SIM_LONG_KEEP_A, 0, 0, FQ_SIM_GUESS_LAST, 0},
    {"plan-b-only", "Plan B (flex-start, queued) only, Kueue-exact",
     FQ_SIM_PLAN_B_ONLY, true, FQ_SIM_LONG_SPLIT, 0, 0, FQ_SIM_GUESS_LAST, 0},
    {"kueue", "Plan A then Plan B exactly as Kueue does", FQ_SIM_PLANS_BOTH,
     true, FQ_SIM_LONG_KEEP_A, 0, 0, FQ_SIM_GUESS_LAST, 0},
    {"flexq", "Plan A then Plan B with flexq's policy switches",
     FQ_SIM_PLANS_BOTH, false, FQ_SIM_LONG_SPLIT_A, 1.0, 6 * 3600 * 1000LL,
     FQ_SIM_GUESS_SHARE, 10 * 60 * 1000LL},
};

#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

const struct fq_sim_policy *fq_sim_policy_find(const char *name)
{
    for (size_t i = 0; i < NPOLICIES; i++)
        if (strcmp(policies[i].name, name) == 0)
            return &policies[i];
    return NULL;
}

size_t fq_sim_policy_count(void)
{
    return NPOLICIES;
}

struct fq_policy fq_sim_policy_engine(const struct fq_sim_policy *p)
{
    return p->kueue_exact ? fq_policy_kueue() : fq_policy_default();
}

const char *fq_sim_long_rule_text(enum fq_sim_long_rule r)
{
    switch (r) {
    case FQ_SIM_LONG_SPLIT:
        return "split into checkpointed segments";
    case FQ_SIM_LONG_REFUSE:
        return "refused";
    case FQ_SIM_LONG_SPLIT_A:
        return "split into checkpointed segments on Plan A";
    case FQ_SIM_LONG_KEEP_A:
        break;
    }
    return "kept on Plan A";
}

int fq_sim_route_guess_parse(const char *s, enum fq_sim_route_guess *out)
{
    if (!strcmp(s, "last"))
        *out = FQ_SIM_GUESS_LAST;
    else if (!strcmp(s, "share"))
        *out = FQ_SIM_GUESS_SHARE;
    else
        return FQ_EINVAL;
    return 0;
}

int fq_sim_long_rule_parse(const char *s, enum fq_sim_long_rule *out)
{
    if (!strcmp(s, "keep-a"))
        *out = FQ_SIM_LONG_KEEP_A;
    else if (!strcmp(s, "split"))
        *out = FQ_SIM_LONG_SPLIT;
    else if (!strcmp(s, "refuse"))
        *out = FQ_SIM_LONG_REFUSE;
    else if (!strcmp(s, "split-a"))
        *out = FQ_SIM_LONG_SPLIT_A;
    else
        return FQ_EINVAL;
    return 0;
}

static int on_off(const char *v, bool *out)
{
    if (!strcmp(v, "on") || !strcmp(v, "true"))
        *out = true;
    else if (!strcmp(v, "off") || !strcmp(v, "false"))
        *out = false;
    else
        return FQ_EINVAL;
    return 0;
}

int fq_sim_switches_apply(const char *spec, struct fq_policy *p,
                          struct fq_err *err)
{
    if (!spec || !*spec)
        return 0;
    char buf[512];
    if (strlen(spec) >= sizeof(buf))
        return fq_err_set(err, FQ_EINVAL, "--switch: longer than %zu bytes",
                          sizeof(buf) - 1);
    snprintf(buf, sizeof(buf), "%s", spec);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            return fq_err_set(err, FQ_EINVAL,
                              "--switch: \"%s\" is not KEY=VALUE", t);
        *eq = '\0';
        const char *k = t, *v = eq + 1;
        char *end;
        int rc = 0;
        if (!strcmp(k, "admissions")) {
            long n = strtol(v, &end, 10);
            rc = *end || !*v || n < 0 || n > 1000000 ? FQ_EINVAL : 0;
            if (!rc)
                p->max_admissions_per_cq_per_cycle = (int)n;
        } else if (!strcmp(k, "cycle-ms")) {
            long long n = strtoll(v, &end, 10);
            rc = *end || !*v || n < 0 || n > 3600000 ? FQ_EINVAL : 0;
            if (!rc)
                p->cycle_ms = n;
        } else if (!strcmp(k, "message-refresh")) {
            long long n = strtoll(v, &end, 10);
            rc = *end || !*v || n < 0 || n > 86400 ? FQ_EINVAL : 0;
            if (!rc)
                p->pending_message_refresh_ms = n * 1000;
        } else if (!strcmp(k, "starved-after")) {
            long long n = strtoll(v, &end, 10);
            rc = !strcmp(v, "off")                         ? 0 :
                 *end || !*v || n < 0 || n > 366LL * 86400 ? FQ_EINVAL :
                                                             0;
            if (!rc)
                p->starved_after_ms = !strcmp(v, "off") ? -1 : n * 1000;
        } else if (!strcmp(k, "migrate")) {
            rc = on_off(v, &p->migrate_to_preferred_flavor);
        } else if (!strcmp(k, "cooldown")) {
            rc = on_off(v, &p->flavor_failure_cooldown);
        } else if (!strcmp(k, "stockout-fallback")) {
            rc = on_off(v, &p->stockout_fallback);
        } else {
            return fq_err_set(err, FQ_EINVAL,
                              "--switch: unknown switch \"%s\" (admissions, "
                              "migrate, starved-after, cooldown, "
                              "stockout-fallback, cycle-ms, "
                              "message-refresh)",
                              k);
        }
        if (rc)
            return fq_err_set(err, FQ_EINVAL, "--switch: %s: bad value \"%s\"",
                              k, v);
    }
    return 0;
}
