#!/usr/bin/env python3
"""Prints a Markdown table comparing the policies of one `flexq sim` run.

    scripts/sim_table.py OUT/summary.json [BIG_CLASS]

OUT is the --out directory of `flexq sim --compare ...`; BIG_CLASS names
the job-size class whose mean wait gets its own row (default 9-64). Waits
are in hours, costs in USD. Standard library only: docs/simulation.md's
tables are made with it.
"""
import json
import sys


def hours(s):
    return "%.2f" % (s / 3600.0)


def row(name, cells):
    return "| %s | %s |" % (name, " | ".join(cells))


def plan_share(run):
    busy_a = busy_b = chips_a = chips_b = 0.0
    for p in run["pools"]:
        if not p.get("flavor"):
            continue  # the default pool runs no trace job
        if p["queued"]:
            busy_b += p["busy_chip_hours"]
            chips_b += p["chip_hours"]
        else:
            busy_a += p["busy_chip_hours"]
            chips_a += p["chip_hours"]
    total = busy_a + busy_b
    share_b = busy_b / total if total else 0.0
    util = lambda busy, chips: "%d%%" % round(100 * busy / chips) if chips else "-"
    return share_b, util(busy_a, chips_a), util(busy_b, chips_b)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    runs = doc["runs"] if "runs" in doc else [doc]
    big = sys.argv[2] if len(sys.argv) > 2 else "9-64"
    print("| | " + " | ".join(r["policy"] for r in runs) + " |")
    print("|---" * (len(runs) + 1) + "|")
    w = [r["wait_s"]["all"] for r in runs]
    print(row("jobs finished / unfinished",
              ["%d / %d" % (r["finished"], r["unfinished"]) for r in runs]))
    for k in ("mean", "p50", "p95", "p99"):
        print(row("wait %s (h)" % k, [hours(x[k]) for x in w]))
    print(row("wait max (h)", ["%.1f" % (x["max"] / 3600.0) for x in w]))
    print(row("wait mean, %s chips (h)" % big,
              [hours(r["wait_s"][big]["mean"]) if r["wait_s"][big]["jobs"]
               else "-" for r in runs]))
    print(row("bounded slowdown, mean", ["%.1f" % x["slowdown_mean"] for x in w]))
    print(row("cost (kUSD)", ["%.1f" % (r["cost_usd"] / 1000.0) for r in runs]))
    print(row("cost per chip-hour (USD)",
              ["%.2f" % r["cost_per_chip_hour_usd"] for r in runs]))
    shares = [plan_share(r) for r in runs]
    print(row("chip-hours on Plan B", ["%d%%" % round(100 * s[0]) for s in shares]))
    print(row("utilisation Plan A / Plan B", ["%s / %s" % (s[1], s[2]) for s in shares]))
    exp = [r["expired_on_plan_b"] for r in runs]
    if any(exp):
        print(row("expired on Plan B", [str(x) for x in exp]))


if __name__ == "__main__":
    main()
