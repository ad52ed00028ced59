"""Parallel speed-up of the study runner: the same small grid with --jobs 2 and --jobs 1.

Prints wall seconds of each and the ratio jobs1 / jobs2 (ideal 2.0 on two idle cores; this
machine's cores are shared, so read it as a lower bound). With --ray: the same grid with
--jobs 2 (local processes) against --backend ray with 2 workers on a local Ray (num_cpus=2,
no dashboard), printed as ray / local; Ray's start-up is timed apart from the study. Usage:
    python bench/bench_study.py [--models chain:400,ushape:7,layered:400:1] [--methods coop,dtr,dte]
    python bench/bench_study.py --ray --models unet-tiny,resnet50-tiny --ratios 0.5,0.7 --methods coop,dtr
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
    ap.add_argument("--ray", action="store_true", help="--jobs 2 against --backend ray with 2 workers")
    a = ap.parse_args()
    spec = StudySpec("bench", (Grid(tuple(a.models.split(",")), parse_ratios(a.ratios),
                                    tuple(a.methods.split(","))),), time_limit=a.time_limit)
    import os

    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (a busy machine caps the speed-up)")
    if a.ray:
        return ray_vs_local(spec)
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


def ray_vs_local(spec: StudySpec) -> None:
    import os

    import ray

    walls = {}
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        run = run_study(spec, d, jobs=2, outputs=False)
        walls["local"] = time.perf_counter() - t0
    print(f"local --jobs 2: {len(run.records)} cells, wall {walls['local']:.2f} s")
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    start = time.perf_counter() - t0
    try:
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            run = run_study(spec, d, jobs=2, backend="ray", outputs=False)
            walls["ray"] = time.perf_counter() - t0
    finally:
        ray.shutdown()
    print(f"ray 2 workers: {len(run.records)} cells, wall {walls['ray']:.2f} s (+ ray.init {start:.2f} s)")
    print(f"ray / local wall: {walls['ray'] / walls['local']:.2f} (with ray.init: "
          f"{(walls['ray'] + start) / walls['local']:.2f}; load average after: {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
