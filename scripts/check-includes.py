#!/usr/bin/env python3
"""Checks the include graph of flexq's C sources; exits 1 on any finding.

Three rules, each printed with the include line that breaks it:

1. No include cycle between modules. A module is a .c file with the .h of
   the same name, so kueue/kueue.c and kueue/kueue.h are one node; a cycle
   is a strongly connected component of two or more modules.
2. Layers only look down. The core's folders are ranked
   base < objects < engine < {kueue, capacity, jobs} < views, and a file may
   include headers of its own folder and of lower ranks only: the three
   controller families of rank 3 do not include each other. The public
   headers in include/flexq/ are ranked with the folder they belong to.
3. The shells (src/daemon, src/cli, src/sim) include the core only through
   include/flexq/; src/core's own headers are private to it, its unit
   tests and its benchmarks.

Usage: scripts/check-includes.py [--graph] [ROOT]   (ROOT: the checkout)
--graph also prints every module's includes.
"""
import os
import re
import sys

RANK = {"base": 0, "objects": 1, "engine": 2, "kueue": 3, "capacity": 3,
        "jobs": 3, "views": 4}
# The folder each public header belongs to.
PUBLIC = {
    "alloc": "base", "buf": "base", "base64": "base", "err": "base", "timefmt": "base", "heap": "base",
    "value": "objects", "kinds": "objects", "manifest": "objects",
    "objects": "objects", "objstore": "objects", "quantity": "objects",
    "conditions": "objects", "catalog": "objects", "names": "objects",
    "engine": "engine", "drive": "engine", "check": "engine",
    "assert": "base",
    "jobs": "jobs", "cloud": "capacity", "nodepool": "capacity",
    "gke": "capacity", "ssar_pb": "objects",
    "estimate": "views", "visibility": "views", "metrics": "views",
    "printcols": "views", "runhist": "views", "runguess": "views", "kpb": "objects", "patch": "objects",
    "schema": "objects", "ssa": "objects", "convert": "objects",
    "paths": "objects", "runtime": "objects",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for top in ("src", "include"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), root)


def resolve(root, path, inc):
    """The checkout-relative file an include names, or None (generated or
    system files)."""
    for base in (os.path.dirname(path), "include", "src/core", "src/daemon",
                 "src/cli", "src/sim"):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(os.path.join(root, cand)):
            return cand
    return None


def folder(path):
    """The core folder a file belongs to, or None outside the core."""
    parts = path.split("/")
    if parts[:2] == ["src", "core"] and len(parts) > 3:
        return parts[2]
    if parts[:2] == ["include", "flexq"]:
        return PUBLIC.get(os.path.splitext(parts[2])[0], "?")
    return None


def module(path):
    return os.path.splitext(path)[0].replace("include/flexq/", "include/")


def cycles(graph):
    """Strongly connected components of two or more nodes (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv):
    show = "--graph" in argv
    args = [a for a in argv if not a.startswith("--")]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..")
    graph, problems = {}, []
    for path in sources(root):
        text = open(os.path.join(root, path), encoding="utf-8").read()
        mine = folder(path)
        for inc in INCLUDE.findall(text):
            target = resolve(root, path, inc)
            if target is None or not target.endswith(".h"):
                continue
            if module(target) != module(path):
                graph.setdefault(module(path), set()).add(module(target))
            theirs = folder(target)
            where = f"{path}: #include \"{inc}\""
            if (path.startswith(("src/daemon", "src/cli", "src/sim"))
                    and target.startswith("src/core/")):
                problems.append(f"{where}: a shell includes a core-private "
                                "header (make it public in include/flexq/)")
            if mine and theirs and mine != theirs:
                if theirs not in RANK or mine not in RANK:
                    problems.append(f"{where}: no layer for {theirs or mine}")
                elif RANK[theirs] >= RANK[mine]:
                    problems.append(f"{where}: layer {mine} reaches up or "
                                    f"across into {theirs}")
    for comp in cycles(graph):
        problems.append("include cycle: " + " -> ".join(comp))
    if show:
        for m in sorted(graph):
            print(f"{m}: {' '.join(sorted(graph[m]))}")
    for p in problems:
        print(p)
    print(f"{len(problems)} include problem(s) among {len(graph)} modules")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
