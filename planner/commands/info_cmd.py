"""`planner info`: size and memory facts of a graph, with both bounds on the minimum feasible budget."""
from __future__ import annotations

from ..analysis import baseline_peak, min_feasible_budget
from ..models import load_graph_arg
from .common import add_graph_args, fmt_bytes, print_json
from .options import count, nonneg_seconds


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="ops, tensors, baseline peak, parameter bytes, bounds on the minimum feasible budget")
    add_graph_args(p)
    p.add_argument("--top", type=count, default=5, help="how many of the costliest ops to show, >= 0 (default 5)")
    p.add_argument("--upper-limit", type=nonneg_seconds, default=10.0, metavar="S",
                   help="seconds for the constructive upper bound on the minimum feasible budget, >= 0 (0: skip; default 10)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def upper_info(g, seconds: float, lower: int, peak: int) -> dict:
    """The constructive upper bound on the minimum feasible budget (a validated plan fits it):
    budgets from it up are known feasible, below ``lower`` infeasible, between undecided."""
    if seconds <= 0:
        return {"upper_feasible_bytes": None}
    from formulations.constructive import feasible_upper_bound  # lazy: solvers load on demand

    c = feasible_upper_bound(g, seconds)
    if c is None:
        return {"upper_feasible_bytes": None, "upper_feasible_seconds": seconds}
    return {"upper_feasible_bytes": c.budget, "upper_feasible_ratio": c.budget / peak if peak else None,
            "upper_feasible_seconds": round(c.seconds, 3), "upper_feasible_construction": c.source,
            "upper_feasible_overhead": c.cost / g.total_cost() - 1 if g.total_cost() else None,
            "undecided_bytes": [lower, c.budget] if c.budget > lower else None}


def graph_info(g, top: int = 5, upper_limit: float = 0.0) -> dict:
    peak = baseline_peak(g)
    mb = min_feasible_budget(g)
    T = g.tensors
    param_bytes = sum(t.bytes for t in T if t.kind == "param" and t.alias_of is None)
    costly = sorted(g.ops, key=lambda o: -o.cost)[:top]
    return {
        "model": g.name, "graph_hash": g.hash, "ops": len(g.ops), "tensors": len(T),
        "views": sum(1 for t in T if t.alias_of is not None),
        "inplace_ops": sum(1 for o in g.ops if o.mutated),
        "random_ops": sum(1 for o in g.ops if o.random),
        "param_bytes": param_bytes, "resident_bytes": g.resident_bytes(),
        "baseline_peak_bytes": peak, "frees": g.frees, "alignment": g.alignment, "total_cost": g.total_cost(),
        "total_flops": float(sum(o.flops for o in g.ops)),
        "min_feasible_bytes": mb.bytes, "min_feasible_ratio": mb.bytes / peak if peak else None,
        "min_feasible_op": mb.op,
        **upper_info(g, upper_limit, mb.bytes, peak),
        "costliest_ops": [{"id": o.id, "name": o.name, "target": o.target, "cost": o.cost} for o in costly],
        "meta": g.meta,
    }


def run(args) -> int:
    info = graph_info(load_graph_arg(args.model, args.graph), args.top, args.upper_limit)
    if args.json:
        print_json(info)
        return 0
    print(f"model            {info['model']}  (graph {info['graph_hash']})")
    print(f"ops / tensors    {info['ops']} / {info['tensors']}  ({info['views']} views, "
          f"{info['inplace_ops']} in-place ops, {info['random_ops']} random ops)")
    print(f"parameters       {fmt_bytes(info['param_bytes'])}  (resident {fmt_bytes(info['resident_bytes'])})")
    print(f"baseline peak    {fmt_bytes(info['baseline_peak_bytes'])}  ({info['baseline_peak_bytes']} bytes, storages rounded up to "
          f"{info['alignment']} B)")
    print("frees            " + ("release: a storage lives until its last handle is released (eager)"
                                 if info["frees"] == "release" else "last-use: right after a storage's last reader (idealised)"))
    ratio = info["min_feasible_ratio"]
    print(f"min feasible     {fmt_bytes(info['min_feasible_bytes'])}  (ratio {ratio:.4f})" if ratio is not None
          else "min feasible     -")
    ub, peak = info.get("upper_feasible_bytes"), info["baseline_peak_bytes"]
    if ub is not None and peak and ratio is not None:
        print(f"known feasible   {fmt_bytes(ub)}  (ratio {ub / peak:.4f}: a validated plan, "
              f"{info['upper_feasible_construction']}, overhead {info['upper_feasible_overhead']:.2%}, "
              f"{info['upper_feasible_seconds']:.1f} s)")
        print("                 " + (f"ratios {ratio:.4f}-{ub / peak:.4f} undecided (below: no plan; from "
                                     f"{ub / peak:.4f} up: a plan)" if info["undecided_bytes"] else
                                     "the two bounds meet: the minimum feasible budget is exact"))
    elif "upper_feasible_seconds" in info:
        print(f"known feasible   -  (no plan constructed in {info['upper_feasible_seconds']:g} s)")
    print(f"total cost       {info['total_cost'] * 1e3:.3f} ms, {info['total_flops'] / 1e12:.3f} TFLOP")
    src = info["meta"].get("cost_source")
    if src:
        print(f"cost source      {src}")
    print("costliest ops:")
    for o in info["costliest_ops"]:
        print(f"  #{o['id']:<5} {o['cost'] * 1e3:9.3f} ms  {o['target']}  {o['name']}")
    return 0
