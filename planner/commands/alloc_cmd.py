"""`planner alloc`: static address assignment of a minimalloc CSV (fixed lifespans -> offsets).

With ``--capacity`` it looks for a placement within it (greedy best-fit first, then the exact
search); without, it minimises the peak. The placement is checked by the independent
validator before anything is written; the output CSV is the input plus an ``offset`` column.
Exit codes: 0 placement found, 3 infeasible or timed out (a result, not a crash), 2 user error.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UserError
from ..fields import MAX_BYTES
from .common import print_json
from .options import add_solver_options, count
from .outpath import check_out_path, report_write_error, try_write


def add_parser(sub) -> None:
    p = sub.add_parser("alloc", help="assign offsets to buffers with fixed lifespans (minimalloc CSV)")
    p.add_argument("--csv", required=True, help="problem CSV: id,lower,upper,size[,alignment]")
    p.add_argument("--capacity", type=count, help="bytes available, >= 0 (default: minimise the peak)")
    add_solver_options(p, 60.0, "time limit of the exact engine")
    p.add_argument("--engine", default="auto", choices=("auto", "search", "cp-sat"),
                   help="exact engine (auto: the search and CP-SAT in turn, in growing time slices; default auto)")
    p.add_argument("--greedy", action="store_true", help="greedy best-fit only (no exact engine)")
    p.add_argument("--out", help="solution CSV to write (the input plus an offset column)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def _too_big(buffers, capacity: int | None) -> str:
    """Why a capacity is infeasible on its face: the first buffer larger than it."""
    if capacity is None:
        return ""
    for b in buffers:
        if b.size > capacity:
            return f"buffer {b.id!r} alone needs {b.size} bytes, more than the capacity {capacity}"
    return ""


def run(args) -> int:
    from planner.alloc import check_solution, solve_dsa
    from planner.alloc.csv_format import write_csv
    from planner.alloc.jit_cache import mode, skip_blas_probe

    from ..importers.minimalloc import read_problem

    if args.capacity is not None and args.capacity > MAX_BYTES:
        raise UserError(f"--capacity {args.capacity} is beyond the maximum {MAX_BYTES} (2^53)")
    if args.out:
        check_out_path(args.out, inputs=[args.csv], example="solution.csv")
    buffers, _ = read_problem(args.csv)  # an offset column in the input is ignored
    if not args.greedy and mode() == "jit":
        skip_blas_probe()  # this process compiles nothing else: 0.2 s less start-up
    sol = solve_dsa(buffers, args.capacity, time_limit=args.time_limit, seed=args.seed,
                    threads=args.threads, greedy_only=args.greedy, engine=args.engine)
    problems = check_solution(buffers, sol.offsets, args.capacity) if sol.offsets is not None else []
    if problems:  # solve_dsa checks too; never write an invalid placement
        print(f"error: invalid placement from {sol.method}: {problems[0]}", file=sys.stderr)
        return 1
    written, write_error = None, None
    if args.out and sol.offsets is not None:
        write_error = try_write(lambda: write_csv(args.out, buffers, sol.offsets), args.out)
        written = None if write_error else args.out
    reason = _too_big(buffers, args.capacity) if sol.offsets is None else ""
    exact = sol.method != "greedy"
    out = {
        "csv": args.csv, "buffers": len(buffers), "capacity": args.capacity, "status": sol.status,
        "peak": sol.peak, "lower_bound": sol.lower_bound, "method": sol.method, "exact": exact,
        "valid": sol.offsets is not None, "solve_seconds": sol.seconds, "out": written,
        "seed": args.seed, "threads": args.threads, "reason": reason or None,
    }
    if args.json:
        print_json(out)
    else:
        who = sol.method if exact else "greedy best-fit (heuristic, not the exact engine)"
        if sol.method == "greedy" and sol.status == "optimal":
            who += "; optimal because its peak meets the live-bytes bound"
        cap = f"capacity {args.capacity}" if args.capacity is not None else "minimising the peak"
        print(f"{args.csv}: {len(buffers)} buffers, {cap}")
        print(f"status    {sol.status}" + (f"  ({reason})" if reason else ""))
        if sol.peak is not None:
            print(f"peak      {sol.peak}  (lower bound {sol.lower_bound})")
        else:
            print(f"bound     {sol.lower_bound}")
        print(f"{'found by' if sol.offsets is not None else 'engine  '}  {who}")
        print(f"time      {sol.seconds:.3f} s")
        if written:
            print(f"wrote     {written}")
    if args.out and sol.offsets is None and Path(args.out).exists():
        print(f"note: no placement, so {args.out} was not written (the file there is from an earlier run)",
              file=sys.stderr)
    return report_write_error(write_error) or (0 if sol.offsets is not None else 3)
