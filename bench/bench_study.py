"""Parallel speed-up of the study runner: the same small grid with --jobs 2 and --jobs 1.

Prints wall seconds of each and the ratio jobs1 / jobs2 (ideal 2.0 on two idle cores; this
machine's cores are shared, so read it as a lower bound). Usage:
    python bench/bench_study.py [--models chain:400,ushape:7,layered:400:1] [--methods coop,dtr,dte]
"""
from __future__ import annotations

import argparse
import tempfile
import time

from planner.study.runner import run_study
from planner.study.spec import Grid, StudySpec, parse_ratios


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="chain:400,ushape:7,layered:400:1")
    ap.add_argument("--ratios", default="0.4:0.9:0.1")
    ap.add_argument("--methods", default="coop,dtr,dte")
    ap.add_argument("--time-limit", type=float, default=10.0)
    a = ap.parse_args()
    spec = StudySpec("bench", (Grid(tuple(a.models.split(",")), parse_ratios(a.ratios),
                                    tuple(a.methods.split(","))),), time_limit=a.time_limit)
    import os

    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (a busy machine caps the speed-up)")
    walls = {}
    for jobs in (1, 2):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            run = run_study(spec, d, jobs=jobs, outputs=False)
            walls[jobs] = time.perf_counter() - t0
            cell_sum = sum(r.get("wall_seconds") or 0 for r in run.records)
            print(f"jobs {jobs}: {len(run.records)} cells, wall {walls[jobs]:.2f} s "
                  f"(summed cell time {cell_sum:.2f} s)")
    print(f"speed-up jobs 2 vs jobs 1: {walls[1] / walls[2]:.2f}x  (load average after: {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
