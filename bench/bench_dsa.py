"""Benchmark: exact static address assignment on tight generated instances.

Instances are feasible by construction at a capacity equal to their peak
(``planner.alloc.instances``): ``tiling`` cuts [0, T) × [0, 2^20) into n buffers by
guillotine cuts (exactly tight at every time), ``holes`` removes a fifth of the pieces away
from one time column (exactly tight there, slack elsewhere), ``trace`` is accelerator-like
(short-lived power-of-two-ish buffers, a few long-lived large ones, greedy-placed, then the
gaps under the peak filled at a few time columns: exactly tight there), ``blocks`` is shaped
like compiled workloads (block patterns repeated along time, coarse sizes, tight at a fifth of
its time columns; ``instances_blocks``). ``--families`` defaults to all four. For each instance it runs, in
this process and on one thread:
- greedy best-fit (does it fit the tight capacity at all?),
- ``solve_dsa`` (greedy fast path, then the exact engine, ``--engine``) with ``--time-limit``;
  the ``method`` column says which engine found the placement,
- the plain CP-SAT ``add_no_overlap_2d`` model with ``--cpsat-limit`` (the baseline),
and prints the time per instance and the ratio CP-SAT time / search time. When CP-SAT does
not finish, the ratio is a lower bound (">="), computed with its time limit.

With ``--csv FILE...`` it runs the same columns on problems in minimalloc's CSV format
instead (``--capacity`` bytes each; ``seed`` is then 0), e.g. minimalloc's "challenging"
benchmark at its best known peak; ``--windows N`` adds N time windows of each one once it is
placed (``instances_windows``: same kind, feasible by construction; ``seed`` numbers them).

    python bench/bench_dsa.py                      # 150, 300, 450 buffers, 2 seeds, all four families
    python bench/bench_dsa.py --sizes 150 --seeds 1 --time-limit 20 --cpsat-limit 5
    python bench/bench_dsa.py --csv path/to/*.csv --capacity 1048576 --time-limit 60 --no-cpsat
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.alloc import check_solution, greedy_best_fit, solve_dsa
from planner.alloc.cpsat import cpsat_place
from planner.alloc.csv_format import read_csv
from planner.alloc.instances import guillotine, trace, with_holes
from planner.alloc.instances_blocks import blocks
from planner.alloc.instances_windows import windows
from planner.alloc.problem import as_arrays

FAMILIES = {"tiling": guillotine, "holes": with_holes, "trace": trace, "blocks": blocks}


def _instances(args):
    """(label, seed, buffers, capacity) of each instance the arguments name."""
    if args.csv:
        for path in args.csv:
            bufs, _ = read_csv(path)
            name = Path(path).name.split(".")[0][:7]
            yield name, 0, bufs, args.capacity
            if args.windows:
                sol = solve_dsa(bufs, args.capacity, time_limit=args.time_limit, engine=args.engine)
                if sol.offsets is None:
                    print(f"{name}: not placed, so no windows", flush=True)
                    continue
                for k, (sub, _, cap) in enumerate(windows(bufs, sol.offsets, args.windows, seed=0)):
                    yield f"{name}/w", k, sub, cap
        return
    for fam in args.families.split(","):
        for n in [int(x) for x in args.sizes.split(",")]:
            for seed in range(args.seeds):
                bufs, _, cap = FAMILIES[fam](n, seed=seed)
                yield fam, seed, bufs, cap


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="150,300,450")
    p.add_argument("--seeds", type=int, default=2, help="instances per size and family")
    p.add_argument("--families", default="tiling,holes,trace,blocks")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds for solve_dsa per instance")
    p.add_argument("--cpsat-limit", type=float, default=10.0, help="seconds for plain CP-SAT per instance")
    p.add_argument("--engine", default="auto", choices=("auto", "search", "cp-sat"),
                   help="solve_dsa engine (auto: the search, then CP-SAT)")
    p.add_argument("--no-cpsat", action="store_true")
    p.add_argument("--csv", nargs="+", metavar="FILE", help="minimalloc CSV problems instead of generated ones")
    p.add_argument("--capacity", type=int, help="bytes available for the --csv problems (required with --csv)")
    p.add_argument("--windows", type=int, default=0,
                   help="with --csv: also this many time windows of each placed problem (instances_windows)")
    args = p.parse_args(argv)
    if args.csv and args.capacity is None:
        p.error("--csv needs --capacity")
    print(f"{'family':<7} {'n':>4} {'seed':>4} {'greedy':>7} {'status':>8} {'method':>7} {'search s':>9} "
          f"{'cp-sat':>8} {'cp-sat s':>9} {'ratio':>8}")
    solved = total = 0
    times = []
    for fam, seed, bufs, cap in _instances(args):
        g = greedy_best_fit(bufs, cap)
        t0 = time.perf_counter()
        sol = solve_dsa(bufs, cap, time_limit=args.time_limit, seed=0, engine=args.engine)
        ts = time.perf_counter() - t0
        ok = sol.offsets is not None and not check_solution(bufs, sol.offsets, cap)
        total += 1
        solved += ok
        if ok:
            times.append(ts)
        cp_status, tc, ratio = "-", float("nan"), "-"
        if not args.no_cpsat:
            t1 = time.perf_counter()
            cp_status, _ = cpsat_place(*as_arrays(bufs), cap, args.cpsat_limit, seed=0, threads=1)
            tc = time.perf_counter() - t1
            if ok and cp_status == "found":
                ratio = f"{tc / ts:.1f}x"
            elif ok:
                ratio = f">={args.cpsat_limit / ts:.1f}x"
            elif cp_status == "found":
                ratio = f"<={tc / args.time_limit:.2f}x"
        print(f"{fam:<7} {len(bufs):>4} {seed:>4} {'fits' if g.offsets else 'fails':>7} {sol.status:>8} "
              f"{sol.method:>7} {ts:>9.2f} {cp_status:>8} {tc:>9.2f} {ratio:>8}", flush=True)
    med = sorted(times)[len(times) // 2] if times else float("nan")
    print(f"engine {args.engine}: solved {solved}/{total} within {args.time_limit:g} s (median {med:.2f} s, "
          f"max {max(times) if times else float('nan'):.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
