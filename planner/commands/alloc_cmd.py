"""`planner alloc`: static address assignment of a minimalloc CSV (fixed lifespans -> offsets).

With ``--capacity`` it looks for a placement within it (greedy best-fit first, then the exact
search); without, it minimises the peak. The placement is checked by the independent
validator before anything is written; the output CSV is the input plus an ``offset`` column.
Exit codes: 0 placement found, 3 infeasible or timed out (a result, not a crash), 2 user error.
"""
from __future__ import annotations

import sys

from ..errors import UserError
from .common import print_json


def add_parser(sub) -> None:
    p = sub.add_parser("alloc", help="assign offsets to buffers with fixed lifespans (minimalloc CSV)")
    p.add_argument("--csv", required=True, help="problem CSV: id,lower,upper,size[,alignment]")
    p.add_argument("--capacity", type=int, help="bytes available (default: minimise the peak)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds for the exact engine")
    p.add_argument("--threads", type=int, default=1, help="CP-SAT workers (the search is single-threaded)")
    p.add_argument("--seed", type=int, default=0, help="tie-break seed: same seed (and threads) = same answer")
    p.add_argument("--engine", default="auto", choices=("auto", "search", "cp-sat"),
                   help="exact engine (auto: the search and CP-SAT in turn, in growing time slices)")
    p.add_argument("--greedy", action="store_true", help="greedy best-fit only (no exact engine)")
    p.add_argument("--out", help="solution CSV to write (the input plus an offset column)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    from planner.alloc import check_solution, solve_dsa
    from planner.alloc.csv_format import read_csv, write_csv

    if args.capacity is not None and args.capacity < 0:
        raise UserError(f"--capacity must be >= 0, got {args.capacity}")
    if args.time_limit < 0:
        raise UserError(f"--time-limit must be >= 0, got {args.time_limit}")
    if args.threads < 1:
        raise UserError(f"--threads must be >= 1, got {args.threads}")
    buffers, _ = read_csv(args.csv)  # an offset column in the input is ignored
    sol = solve_dsa(buffers, args.capacity, time_limit=args.time_limit, seed=args.seed,
                    threads=args.threads, greedy_only=args.greedy, engine=args.engine)
    problems = check_solution(buffers, sol.offsets, args.capacity) if sol.offsets is not None else []
    if problems:  # solve_dsa checks too; never write an invalid placement
        print(f"error: invalid placement from {sol.method}: {problems[0]}", file=sys.stderr)
        return 1
    written = None
    if args.out and sol.offsets is not None:
        write_csv(args.out, buffers, sol.offsets)
        written = args.out
    exact = sol.method != "greedy"
    out = {
        "csv": args.csv, "buffers": len(buffers), "capacity": args.capacity, "status": sol.status,
        "peak": sol.peak, "lower_bound": sol.lower_bound, "method": sol.method, "exact": exact,
        "valid": sol.offsets is not None, "solve_seconds": sol.seconds, "out": written,
        "seed": args.seed, "threads": args.threads,
    }
    if args.json:
        print_json(out)
    else:
        who = sol.method if exact else "greedy best-fit (heuristic, not the exact engine)"
        if sol.method == "greedy" and sol.status == "optimal":
            who += "; optimal because its peak meets the live-bytes bound"
        cap = f"capacity {args.capacity}" if args.capacity is not None else "minimising the peak"
        print(f"{args.csv}: {len(buffers)} buffers, {cap}")
        print(f"status    {sol.status}")
        if sol.peak is not None:
            print(f"peak      {sol.peak}  (lower bound {sol.lower_bound})")
        else:
            print(f"bound     {sol.lower_bound}")
        print(f"{'found by' if sol.offsets is not None else 'engine  '}  {who}")
        print(f"time      {sol.seconds:.3f} s")
        if written:
            print(f"wrote     {written}")
    return 0 if sol.offsets is not None else 3
