#!/usr/bin/env python3
"""Runs `flexq sim --compare kueue,flexq` over several seeds and prints the
table docs/simulation.md keeps: per config, the mean over seeds of each
policy's share of jobs started at once, wait percentiles and cost, and
flexq's p95 and cost against Kueue-exact's.

    scripts/sim_seeds.py --seeds 5 [--extra "FLAGS"]
        [--variant NAME="FLAGS"] NAME=CONFIG:TRACE[:MAP] ...

NAME labels the row; MAP is passed to --map (e.g. chips-per-host=8).
--extra adds flags to every run (e.g. "--size-plan-a auto"); each
--variant adds a row: flexq's policy run with those flags as well
(e.g. --variant route-9h="--route-b-over 9h").
Runs one simulation at a time, each comparing the two policies on
`--jobs` threads, with forecasts off unless asked for (they cost more
than the simulation).
"""
import argparse
import json
import subprocess
import sys


def run(flexq, config, trace, mapping, seed, extra, policies):
    cmd = [flexq, "sim", "--config", config, "--trace", trace,
           "--compare", ",".join(policies), "--seed", str(seed),
           "-o", "json", "--quiet"]
    if mapping:
        cmd += ["--map", mapping]
    if "--forecasts" not in extra:
        cmd += ["--forecasts", "0"]
    cmd += extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    doc = json.loads(out.stdout)
    return {r["policy"]: r for r in doc.get("runs", [doc])}


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--flexq", default="build/flexq")
    ap.add_argument("--policies", default="kueue,flexq")
    ap.add_argument("--extra", default="")
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    extra = args.extra.split()
    variants = [v.split("=", 1) for v in args.variant]
    pols = args.policies.split(",")
    base, other = pols[0], pols[-1]
    print("| config | policy | at once | >1 h | p50 (h) | p90 (h) | "
          "p95 (h) | p99 (h) | cost (kUSD) | p95 vs %s | cost vs %s |"
          % (base, base))
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.runs:
        name, rest = spec.split("=", 1)
        parts = rest.split(":")
        config, trace = parts[0], parts[1]
        mapping = parts[2] if len(parts) > 2 else ""
        per = {p: [] for p in pols + [v[0] for v in variants]}
        for seed in range(1, args.seeds + 1):
            res = run(args.flexq, config, trace, mapping, seed, extra, pols)
            for p in pols:
                per[p].append(res[p])
            for vname, vflags in variants:
                r = run(args.flexq, config, trace, mapping, seed,
                        extra + vflags.split(), ["flexq"])
                per[vname].append(r["flexq"])
            print(f"  {name} seed {seed} done", file=sys.stderr)
        agg = {}
        for p in per:
            rs = per[p]
            w = [r["wait_s"]["all"] for r in rs]
            agg[p] = {
                "once": mean([x["at_once"] for x in w]) * 100,
                "hour": mean([x["over_1h"] for x in w]) * 100,
                "p50": mean([x["p50"] for x in w]) / 3600,
                "p90": mean([x["p90"] for x in w]) / 3600,
                "p95": mean([x["p95"] for x in w]) / 3600,
                "p99": mean([x["p99"] for x in w]) / 3600,
                "cost": mean([r["cost_usd"] for r in rs]) / 1000,
            }
        for p in per:
            a, b = agg[p], agg[base]
            dp = (a["p95"] / b["p95"] - 1) * 100 if b["p95"] else 0
            dc = (a["cost"] / b["cost"] - 1) * 100 if b["cost"] else 0
            vs = ("" if p == base else f"{dp:+.0f}%",
                  "" if p == base else f"{dc:+.1f}%")
            print(f"| {name} | {p} | {a['once']:.0f}% | {a['hour']:.1f}% | "
                  f"{a['p50']:.2f} | {a['p90']:.2f} | {a['p95']:.2f} | "
                  f"{a['p99']:.2f} | {a['cost']:.1f} | {vs[0]} | {vs[1]} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
