"""Time to proven optimum: ``exact`` vs Checkmate's MILP as published, same graphs, solver, machine.

    python bench/bench_exact.py [--models layered:100,layered:250,layered:500] [--ratios 0.8,0.9]
                                [--time-limit 120] [--checkmate-limit 120] [--no-checkmate]
                                [--highs presolve=off ...] [--mip-start] [--tuning FIELD=VALUE ...]

A model may also be a graph JSON file (one written by `planner import` or `planner profile`).

Prints one row per (model, ratio): ops, exact's status / seconds / objective (overhead over the
plain schedule) / lower bound / gap / incumbent source / recomputable ops / master columns, Checkmate's
status / seconds, and the speed ratio checkmate_seconds / exact_seconds (measured in the same
process; ">=" when Checkmate did not prove within its limit, so the ratio is a lower bound).
Budgets below the minimum feasible budget are reported as such (proven infeasible by the bound).
Single-threaded (threads=1) on purpose: the CI machine has 2 shared cores.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from planner.analysis import baseline_peak, min_feasible_budget  # noqa: E402
from planner.graph import Graph  # noqa: E402
from planner.models import load_model  # noqa: E402
from planner.params import SolveParams  # noqa: E402
from planner.registry import solve  # noqa: E402


def row(model: str, ratio: float, tl: float, cm_tl: float, run_cm: bool) -> str:
    g = Graph.load(model) if model.endswith((".json", ".json.gz")) else load_model(model)
    peak = baseline_peak(g)
    budget = int(ratio * peak)
    mb = min_feasible_budget(g).bytes
    head = f"{model:16s} {ratio:4.2f} {len(g.ops):5d}"
    if budget < mb:
        return f"{head}  below minimum feasible budget (ratio {mb / peak:.3f}): infeasible by bound"
    t0 = time.perf_counter()
    ex = solve(g, budget, "exact", SolveParams(time_limit=tl))
    te = time.perf_counter() - t0
    gap = "-" if ex.gap is None else f"{ex.gap * 100:.2f}%"
    obj = "-" if ex.objective is None else f"{ex.objective:.6g}"
    plain = sum(op.cost for op in g.ops)
    over = "-" if ex.objective is None else f"{100 * (ex.objective / plain - 1):.2f}%"
    lb = "-" if ex.lower_bound is None else f"{ex.lower_bound:.6g}"
    cols = ex.stats.get("model", {}).get("columns", "-")
    out = (f"{head}  exact {ex.status:10s} {te:7.2f}s obj {obj:>9s} ({over:>6s}) bound {lb:>9s} gap {gap:>7s} "
           f"inc {ex.stats.get('incumbent', '-')}/{ex.stats.get('returned', 'milp')} "
           f"rec {ex.stats.get('recomputable_ops', '-')} cols {cols}")
    if not run_cm:
        return out
    t0 = time.perf_counter()
    cm = solve(g, budget, "checkmate", SolveParams(time_limit=cm_tl))
    tc = time.perf_counter() - t0
    if ex.status == "optimal" and cm.status == "optimal":
        ratio_s = f"{tc / te:6.1f}x"
    elif ex.status == "optimal":
        ratio_s = f">={tc / te:5.1f}x"
    else:
        ratio_s = "n/a"
    return out + f" | checkmate {cm.status:10s} {tc:7.2f}s | speed {ratio_s}"


def _option_value(val: str):
    """A HiGHS option value from the command line: int, float, bool or string."""
    if val.lstrip("-").isdigit():
        return int(val)
    if val in ("true", "false"):
        return val == "true"
    try:
        return float(val)
    except ValueError:
        return val


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="layered:100,layered:250,layered:500")
    ap.add_argument("--ratios", default="0.8,0.9")
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--checkmate-limit", type=float, default=120.0)
    ap.add_argument("--no-checkmate", action="store_true")
    ap.add_argument("--highs", action="append", default=[], metavar="KEY=VALUE",
                    help="extra HiGHS option for exact's master (repeatable), to measure options")
    ap.add_argument("--mip-start", action="store_true", help="exact with HiGHS's MIP start (off by default)")
    ap.add_argument("--tuning", action="append", default=[], metavar="FIELD=VALUE",
                    help="a formulations.exact.Tuning field for this run (repeatable), for ablations")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    if a.mip_start or a.highs:
        from dataclasses import replace

        from formulations.exact import tuning
        opts = dict(tuning.DEFAULT.highs_options)
        for kv in a.highs:
            key, val = kv.split("=", 1)
            opts[key] = _option_value(val)
        tuning.DEFAULT = replace(tuning.DEFAULT, mip_start=tuning.DEFAULT.mip_start or a.mip_start,
                                 highs_options=tuple(opts.items()))
        print(f"exact with MIP start {tuning.DEFAULT.mip_start}, HiGHS options {opts}")
    if a.tuning:
        from dataclasses import fields, replace

        from formulations.exact import tuning
        known = {f.name for f in fields(tuning.Tuning)}
        changes = {}
        for kv in a.tuning:
            key, val = kv.split("=", 1)
            if key not in known:
                ap.error(f"--tuning: no Tuning field {key!r}")
            changes[key] = _option_value(val)
        tuning.DEFAULT = replace(tuning.DEFAULT, **changes)
        print(f"exact with tuning {changes}")
    if a.v:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    print(f"{'model':16s} ratio   ops  (threads=1, exact limit {a.time_limit:g}s, checkmate limit {a.checkmate_limit:g}s)")
    for m in a.models.split(","):
        for r in a.ratios.split(","):
            print(row(m, float(r), a.time_limit, a.checkmate_limit, not a.no_checkmate), flush=True)


if __name__ == "__main__":
    main()
