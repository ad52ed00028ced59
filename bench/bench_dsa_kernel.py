"""Benchmark: the DSA search compiled (``planner.alloc.kernel``) against the same search in
Python (``planner.alloc.search.PySearch``), in this process, on tight generated instances.

Each engine runs one search from scratch with the same backtrack limit, so both visit exactly
the same nodes (the script checks it); the figure is the ratio of their node rates. The first
compiled run loads (or, with a cold numba cache, compiles) the kernel: that time is printed
apart and kept out of the rates.

    python bench/bench_dsa_kernel.py                         # holes, tiling, trace at 150 and 300
    python bench/bench_dsa_kernel.py --sizes 450 --backtracks 20000
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.alloc.instances import guillotine, trace, with_holes
from planner.alloc.jit_search import JitSearch
from planner.alloc.problem import as_arrays
from planner.alloc.search import PySearch

FAMILIES = {"tiling": guillotine, "holes": with_holes, "trace": trace}


def one(cls, arrs, cap: int, limit: int) -> tuple[bool | None, int, int, float]:
    st = cls(*arrs, cap)
    t0 = time.perf_counter()
    r = st.run(np.arange(st.n), limit, float("inf"))
    return r, st.nodes, st.backtracks, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="150,300")
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--families", default="holes,tiling,trace")
    p.add_argument("--backtracks", type=int, default=5000, help="backtrack limit of each run")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    bufs, _, cap = with_holes(12, seed=0)
    one(JitSearch, as_arrays(bufs), cap, 10)
    print(f"kernel load (or compile): {time.perf_counter() - t0:.2f} s")
    print(f"{'family':<7} {'n':>4} {'seed':>4} {'nodes':>8} {'python s':>9} {'compiled s':>10} {'speed':>7}")
    ratios = []
    for fam in args.families.split(","):
        for n in [int(x) for x in args.sizes.split(",")]:
            for seed in range(args.seeds):
                bufs, _, cap = FAMILIES[fam](n, seed=seed)
                arrs = as_arrays(bufs)
                py = one(PySearch, arrs, cap, args.backtracks)
                jit = one(JitSearch, arrs, cap, args.backtracks)
                if py[:3] != jit[:3]:
                    print(f"{fam} {n} {seed}: the two searches differ: {py[:3]} vs {jit[:3]}")
                    return 1
                ratio = py[3] / max(jit[3], 1e-9)
                ratios.append(ratio)
                print(f"{fam:<7} {len(bufs):>4} {seed:>4} {py[1]:>8} {py[3]:>9.3f} {jit[3]:>10.4f} {ratio:>6.1f}x")
    print(f"compiled / python node rate: median {np.median(ratios):.1f}x, min {min(ratios):.1f}x, "
          f"max {max(ratios):.1f}x over {len(ratios)} instances (same nodes in both)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
