"""Benchmark: the checkpoint relaxation's bound with and without its interval-memory rows.

For each model and ratio it solves ``formulations.checkpoints`` over the ``--checkpoints``
tightest ops as an LP and as a MIP (``--time-limit`` each), first without rows 7 (memory
inside the intervals; the baseline, ``INTERVAL_MEMORY = False``) and then with them, in this
process and on one thread, and prints each bound as overhead above every op once, with the
time ratio against the baseline.

    python bench/bench_checkpoints.py
    python bench/bench_checkpoints.py --models unet --ratios 0.4 --checkpoints 20
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from formulations import checkpoint_model  # noqa: E402
from formulations import checkpoints as ck  # noqa: E402
from formulations.problem import extract  # noqa: E402
from planner.analysis import baseline_peak  # noqa: E402
from planner.models import load_model  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="layered:100,layered:250,unet")
    ap.add_argument("--ratios", default="0.8,0.9")
    ap.add_argument("--checkpoints", type=int, default=10)
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args(argv)
    print(f"{'model':<12} {'ratio':>5} {'cps':>4} {'kind':>4} {'baseline':>9} {'rows 7':>9} {'base s':>7} "
          f"{'rows 7 s':>8} {'time':>7}")
    for spec in args.models.split(","):
        g = load_model(spec)
        p = extract(g)
        total = sum(p.cost)
        for ratio in (float(r) for r in args.ratios.split(",")):
            cap = p.capacity(int(ratio * baseline_peak(g)))
            cps = ck.choose_checkpoints(p, cap, args.checkpoints)
            for integer in (False, True):
                got = []
                for rows7 in (False, True):
                    checkpoint_model.INTERVAL_MEMORY = rows7
                    t0 = time.perf_counter()
                    v, status = ck.checkpoint_bound(p, cap, cps, integer=integer, time_limit=args.time_limit)
                    got.append((v, status, time.perf_counter() - t0))
                checkpoint_model.INTERVAL_MEMORY = True
                (v0, s0, t0_), (v1, s1, t1) = got
                print(f"{spec:<12} {ratio:>5g} {len(cps):>4} {'MIP' if integer else 'LP':>4} "
                      f"{v0 / total:>8.3%}{'' if s0.lower() == 'optimal' else '*'} "
                      f"{v1 / total:>8.3%}{'' if s1.lower() == 'optimal' else '*'} {t0_:>7.2f} {t1:>8.2f} "
                      f"{t1 / max(t0_, 1e-9):>6.1f}x", flush=True)
    print("* = not solved to optimality within the limit (a MIP's dual bound)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
