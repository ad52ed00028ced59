"""`planner info`: size and memory facts of a graph."""
from __future__ import annotations

from ..analysis import baseline_peak, min_feasible_budget
from ..models import load_graph_arg
from .common import add_graph_args, fmt_bytes, print_json
from .options import count


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="ops, tensors, baseline peak, parameter bytes, minimum feasible budget")
    add_graph_args(p)
    p.add_argument("--top", type=count, default=5, help="how many of the costliest ops to show, >= 0 (default 5)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def graph_info(g, top: int = 5) -> dict:
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
        "costliest_ops": [{"id": o.id, "name": o.name, "target": o.target, "cost": o.cost} for o in costly],
        "meta": g.meta,
    }


def run(args) -> int:
    info = graph_info(load_graph_arg(args.model, args.graph), args.top)
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
    print(f"total cost       {info['total_cost'] * 1e3:.3f} ms, {info['total_flops'] / 1e12:.3f} TFLOP")
    src = info["meta"].get("cost_source")
    if src:
        print(f"cost source      {src}")
    print("costliest ops:")
    for o in info["costliest_ops"]:
        print(f"  #{o['id']:<5} {o['cost'] * 1e3:9.3f} ms  {o['target']}  {o['name']}")
    return 0
