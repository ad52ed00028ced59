"""Capture time and peak RSS of full-size zoo models, and load time of every checked-in profile.

    python bench/bench_capture.py [--models gpt3-2.7b,bert-large] [--routes eager,aot] [--no-capture] [--no-load]

Capture: each model and route (eager: the ops eager PyTorch runs; aot: aot_autograd's
functional graph) in a fresh child process (its own peak RSS), after a baseline capture of
its ``-tiny`` variant in the same process (which also pays the one-off torch warm-up); prints
wall and CPU seconds (the CPU is shared: wall time depends on the load) and peak RSS, the
ratios full / tiny, and the ratios to the issue's targets (30 s, 2 GB).
Load: ``Graph.load`` of each profile against the baseline of just decompressing and parsing
its JSON in the same process (ratio = cost of building and checking the Graph).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_S, TARGET_RSS = 30.0, 2 * 10**9

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from planner.profile.build import capture_model
name, route = sys.argv[1], sys.argv[2]
cpu = lambda: (lambda r: r.ru_utime + r.ru_stime)(resource.getrusage(resource.RUSAGE_SELF))
t1 = time.perf_counter(); capture_model(name + "-tiny", capture=route); t2 = time.perf_counter()
rss_tiny = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
c2 = cpu(); g = capture_model(name, capture=route); t3 = time.perf_counter(); c3 = cpu()
print(json.dumps({"import_s": t1 - t0, "tiny_s": t2 - t1, "full_s": t3 - t2, "full_cpu_s": c3 - c2,
                  "rss_tiny": rss_tiny,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "ops": len(g.ops),
                  "hash": g.hash}))
"""


def bench_capture(models: list[str], routes: list[str]) -> None:
    print(f"{'model':<12} {'route':<6} {'ops':>6} {'capture s':>10} {'cpu s':>6} {'tiny s':>7} {'full/tiny':>9} {'/30s':>6} "
          f"{'peak RSS MB':>11} {'tiny RSS':>8} {'/2GB':>6}")
    for m, route in ((m, r) for m in models for r in routes):
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
        r = subprocess.run([sys.executable, "-c", CHILD, m, route], capture_output=True, text=True, env=env, cwd=ROOT)
        if r.returncode != 0:
            print(f"{m:<12} {route:<6} failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
            continue
        d = json.loads(r.stdout.strip().splitlines()[-1])
        print(f"{m:<12} {route:<6} {d['ops']:>6} {d['full_s']:>10.1f} {d['full_cpu_s']:>6.1f} {d['tiny_s']:>7.1f} "
              f"{d['full_s'] / d['tiny_s']:>9.2f} "
              f"{d['full_s'] / TARGET_S:>6.2f} {d['rss'] / 2**20:>11.0f} {d['rss_tiny'] / 2**20:>8.0f} "
              f"{d['rss'] / TARGET_RSS:>6.2f}")


def bench_load() -> None:
    from planner.graph import Graph
    from planner.models import PROFILES_DIR

    print(f"{'profile':<20} {'MB':>6} {'load s':>7} {'parse s':>8} {'load/parse':>10}")
    for p in sorted([*PROFILES_DIR.glob("*.json.gz"), *PROFILES_DIR.glob("eager/*.json.gz")]):
        t0 = time.perf_counter()
        json.loads(gzip.decompress(p.read_bytes()))
        t1 = time.perf_counter()
        Graph.load(str(p))
        t2 = time.perf_counter()
        print(f"{p.relative_to(PROFILES_DIR).as_posix()[:-8]:<20} {p.stat().st_size / 2**20:>6.2f} {t2 - t1:>7.3f} {t1 - t0:>8.3f} "
              f"{(t2 - t1) / (t1 - t0):>10.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="gpt3-2.7b,bert-large")
    ap.add_argument("--routes", default="eager,aot", help="capture routes to time (eager, aot)")
    ap.add_argument("--no-capture", action="store_true")
    ap.add_argument("--no-load", action="store_true")
    a = ap.parse_args()
    if not a.no_capture:
        bench_capture([m for m in a.models.split(",") if m], [r for r in a.routes.split(",") if r])
    if not a.no_load:
        bench_load()


if __name__ == "__main__":
    main()
