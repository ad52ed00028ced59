"""`planner solve`: run one method at one budget, validate, print and optionally save the plan."""
from __future__ import annotations

import sys
from pathlib import Path

from ..analysis import baseline_cost, baseline_peak
from ..budget import budget_for, parse_ratio
from ..errors import UserError
from ..models import load_graph_arg
from ..params import SolveParams
from ..ratio_of import add_ratio_of, ratio_of_fields
from ..registry import get_method, solve
from ..result import STARTING_PLANS, Status
from .common import add_graph_args, fmt_bytes, print_json
from .options import add_solver_options, positive_int
from .outpath import check_out_path, report_write_error, try_write

DEFAULT_METHOD = "exact"
# The default solver limit. 300 s, not 60: `exact` proves unet at 0.4 (the README's first
# command) in 65-148 s on 2 cores (measured 2026-12-06/07; the checkpoint relaxation's MIPs,
# its guided MILP and the placement take tens of seconds each), where a 60 s limit prints a
# plan with a 1.5% gap. Heuristics ignore the limit, a method that proves earlier returns
# earlier, and `study` keeps its own 60 s per cell (SolveParams' default).
DEFAULT_TIME_LIMIT = 300.0
# methods that build their MILP through PuLP and so honour --solver
SOLVER_METHODS = ("checkmate", "milp-joint")


def add_parser(sub) -> None:
    p = sub.add_parser("solve", help="plan one training step under a memory budget")
    add_graph_args(p)
    p.add_argument("--ratio", required=True, help="budget as a fraction of the baseline peak, in (0, 1]")
    add_ratio_of(p)
    p.add_argument("--method", default=DEFAULT_METHOD, help=f"method name (default {DEFAULT_METHOD}; see `planner list`)")
    add_solver_options(p, DEFAULT_TIME_LIMIT)
    p.add_argument("--solver", default=None, choices=("highs", "cbc", "gurobi"),
                   help=f"MILP backend of {' and '.join(SOLVER_METHODS)} (default highs; the other formulations "
                        "call HiGHS directly and refuse another)")
    p.add_argument("--alignment", type=positive_int, default=None,
                   help="bytes every storage is rounded up to, >= 1 (default: the graph's own: 512 for captured "
                        "models, 1 for imported Checkmate graphs, DTR traces and minimalloc CSVs)")
    p.add_argument("--alloc-policy", default="first-fit", choices=("first-fit", "best-fit"),
                   help="heuristics' simulated allocator: first-fit or best-fit (default first-fit)")
    p.add_argument("--no-sliding-window", action="store_true", help="coop: DTE's eviction instead of the window")
    p.add_argument("--no-partition", action="store_true", help="coop: no cheap-tensor partitioning")
    p.add_argument("--no-inplace", action="store_true", help="coop, dtr-ideal: in-place ops run out of place (DTR's simulator copies them)")
    p.add_argument("--union-find", action="store_true", help="dtr-ideal: union-find neighbourhood approximation")
    p.add_argument("--no-addresses", action="store_true", help="exact: remat only, memory as one number")
    p.add_argument("--out", help="write the plan JSON here")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def params_from_args(args) -> SolveParams:
    return SolveParams(
        time_limit=args.time_limit, threads=args.threads, seed=args.seed, solver=args.solver or "highs",
        alignment=_alignment(getattr(args, "alignment", None)),
        alloc_policy=args.alloc_policy, sliding_window=not args.no_sliding_window,
        partition=not args.no_partition, inplace=not args.no_inplace, union_find=args.union_find,
        addresses=not args.no_addresses, verbose=getattr(args, "verbose", False))


def _alignment(a: int | None) -> int | None:
    if a is not None and a < 1:
        raise UserError(f"--alignment must be a positive number of bytes, got {a}")
    return a


def _check_solver(method: str, solver: str | None) -> None:
    if solver not in (None, "highs") and method not in SOLVER_METHODS:
        raise UserError(f"--solver {solver} applies to {' and '.join(SOLVER_METHODS)} only; "
                        f"method {method!r} solves with HiGHS directly (drop --solver)")


def run(args) -> int:
    ratio = parse_ratio(args.ratio)
    if args.out:  # before the work: a solve of minutes must not end in a write error
        check_out_path(args.out, inputs=[args.graph], example="plan.json")
    _check_solver(args.method, args.solver)
    get_method(args.method)  # an unknown method fails before the graph loads
    g = load_graph_arg(args.model, args.graph)
    params = params_from_args(args)
    peak = baseline_peak(g, params.alignment)
    budget = budget_for(g, ratio, params.alignment, ratio_of=args.ratio_of)
    res = solve(g, budget, args.method, params)
    plan_path, write_error = None, None
    if args.out and res.has_plan:
        write_error = try_write(lambda: res.plan.save(args.out), args.out)
        plan_path = None if write_error else args.out
    v = res.validation or {}
    out = {
        "model": g.name, "method": args.method, "ratio": ratio, "ratio_of": args.ratio_of,
        **ratio_of_fields(g, budget, params.alignment), "budget_bytes": budget, "baseline_peak_bytes": peak,
        "status": res.status,
        "overhead": v.get("overhead") if res.has_plan else None,
        "peak_bytes": v.get("peak_bytes") if res.has_plan else None,
        "peak_address": v.get("peak_address") if res.has_plan else None,
        "fragmentation": ({"eviction": v.get("frag_eviction"), "range": v.get("frag_range")}
                          if res.has_plan else None),
        "objective": res.objective if res.has_plan else None,
        "lower_bound": res.lower_bound, "gap": res.gap, "solve_seconds": res.solve_seconds,
        "valid": bool(v.get("valid")) if res.plan is not None else False,
        "plan_path": plan_path, "backend": res.backend, "message": res.message,
        "recomputations": v.get("recomputations") if res.has_plan else None,
        "graph_hash": g.hash, "stats": res.stats,
    }
    if args.json:
        print_json(out)
    else:
        of = "" if args.ratio_of == "peak" else f" of the activations ({budget / peak:.4f} of the peak)"
        print(f"{g.name}  method {args.method}  ratio {ratio:g}{of}  budget {fmt_bytes(budget)} "
              f"(baseline peak {fmt_bytes(peak)})")
        print(f"status    {res.status}" + (f"  ({res.message})" if res.message else ""))
        if res.has_plan:
            print(f"overhead  {out['overhead'] * 100:.2f}%  ({out['recomputations']} recomputations, "
                  f"cost {res.objective:.6g} s)")
            print(f"memory    peak {fmt_bytes(out['peak_bytes'])}, peak address {fmt_bytes(out['peak_address'])}, "
                  f"fragmentation {out['fragmentation']['eviction'] * 100:.2f}% (eviction) / "
                  f"{out['fragmentation']['range'] * 100:.2f}% (range)")
            print(f"valid     {out['valid']}")
        if res.lower_bound is not None:
            gap = f"{res.gap * 100:.3f}%" if res.gap is not None else "-"
            print(f"bound     {res.lower_bound:.6g} s  gap {gap}")
        inc = res.stats.get(STARTING_PLANS)
        if isinstance(inc, dict) and inc:
            # the heuristics exact started from, so a user sees the optimum beside coop
            base = baseline_cost(g)
            print("heuristics " + ", ".join(
                f"{k} {(c / base - 1) * 100:.2f}%" if isinstance(c, (int, float)) and base > 0 else f"{k} {c}"
                for k, c in inc.items() if k != "none"))
        for k, val in res.stats.items():
            if isinstance(val, (int, float, str)):
                print(f"  {k}: {val}")
        print(f"time      {res.solve_seconds:.3f} s ({res.backend})")
        if plan_path:
            print(f"plan      {plan_path}")
    if args.out and not res.has_plan and Path(args.out).exists():
        print(f"note: no plan, so {args.out} was not written (the file there is from an earlier run)",
              file=sys.stderr)
    if write_error:
        return report_write_error(write_error) or 2
    if res.status in (Status.OPTIMAL, Status.FEASIBLE):
        return 0
    if res.status == "error":
        print(f"error: {res.message}", file=sys.stderr)
        return 1
    return 3  # infeasible / timeout: a result, not a crash
