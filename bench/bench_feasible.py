"""Both bounds on the minimum feasible budget, and which methods plan between them.

    python bench/bench_feasible.py [--models layered:250,layered:500,unet,bilstm] [--upper-limit 60]
                                   [--ratio-model layered:250] [--ratio 0.8]
                                   [--methods coop,dtr,dte,exact,constructive] [--time-limit 60]

Part 1, one row per model: ops, the lower bound (``min_feasible_budget``) and the constructive
upper bound (``formulations.constructive.feasible_upper_bound``, a validated plan) as ratios
of the baseline peak, upper / lower, the seconds spent constructing, which construction won and
its overhead. Budgets between the two ratios are undecided.
Part 2: each method at ``--ratio`` on ``--ratio-model``: status, overhead, seconds (every plan
validated by ``planner.registry.solve``). Single-threaded (threads=1): the CI machine has 2
shared cores. A model may also be a graph JSON file (``planner import``).
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from formulations.constructive import feasible_upper_bound
from planner.analysis import baseline_peak, min_feasible_budget
from planner.graph import Graph
from planner.models import load_model
from planner.params import SolveParams
from planner.registry import solve


def _load(model: str) -> Graph:
    return Graph.load(model) if model.endswith((".json", ".json.gz")) else load_model(model)


def bounds_row(model: str, limit: float) -> str:
    g = _load(model)
    peak = baseline_peak(g)
    lb = min_feasible_budget(g).bytes
    t0 = time.perf_counter()
    c = feasible_upper_bound(g, limit)
    dt = time.perf_counter() - t0
    head = f"{model:14s} {len(g.ops):5d} ops  lower {lb / peak:.4f}"
    if c is None:
        return f"{head}  upper -  (nothing placed in {dt:.1f} s)"
    return (f"{head}  upper {c.budget / peak:.4f}  upper/lower {c.budget / lb:.3f}  "
            f"{dt:6.1f} s  {c.source:12s} overhead {c.cost / g.total_cost() - 1:8.2%}")


def method_row(g: Graph, method: str, ratio: float, limit: float) -> str:
    budget = int(ratio * baseline_peak(g))
    t0 = time.perf_counter()
    r = solve(g, budget, method, SolveParams(time_limit=limit))
    dt = time.perf_counter() - t0
    over = "-" if r.objective is None or not r.has_plan else f"{r.objective / g.total_cost() - 1:.2%}"
    valid = "" if r.validation is None else f" valid={r.validation['valid']}"
    return f"  {method:13s} {r.status:10s} overhead {over:>8s} {dt:7.1f} s{valid}  {r.message[:70]}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="layered:250,layered:500,unet,bilstm")
    ap.add_argument("--upper-limit", type=float, default=60.0, help="seconds for each upper bound")
    ap.add_argument("--ratio-model", default="layered:250")
    ap.add_argument("--ratio", type=float, default=0.8)
    ap.add_argument("--methods", default="coop,dtr,dte,exact,constructive")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds for each method")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for m in filter(None, args.models.split(",")):
        print(bounds_row(m, args.upper_limit), flush=True)
    if args.methods:
        g = _load(args.ratio_model)
        print(f"{args.ratio_model} at {args.ratio} (lower bound {min_feasible_budget(g).bytes / baseline_peak(g):.4f}):")
        for meth in args.methods.split(","):
            print(method_row(g, meth, args.ratio, args.time_limit), flush=True)


if __name__ == "__main__":
    main()
