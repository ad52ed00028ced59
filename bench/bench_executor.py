"""Executor step time vs eager PyTorch (CPU), and measured vs predicted overhead.

Prints, per model: the `none` plan's executor step time as a ratio of eager PyTorch's (target
<= 1.3x), then for each method at each ratio: predicted overhead (the validator's, from the cost
model), measured overhead (plan step time / plain-schedule step time through the same executor
- 1), and plan time / eager. All times are medians of --repeats runs in this process, one
thread. A method that finds no plan at a ratio is reported as such (with its message).

    python bench/bench_executor.py [--models unet-tiny,bert-large-tiny] [--methods coop,exact]
                                   [--ratios 0.5] [--fallback-ratios 0.7,0.8,0.9,0.95,1.0]
                                   [--repeats 20] [--time-limit 60]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="unet-tiny,bert-large-tiny")
    ap.add_argument("--methods", default="coop,exact")
    ap.add_argument("--ratios", default="0.5")
    ap.add_argument("--fallback-ratios", default="0.7,0.8,0.9,0.95,1.0",
                    help="when a method has no plan at --ratios, the lowest of these it solves is run too")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="cuda: the GPU run of issue 6 (e.g. --models unet,bert-large --ratios 0.5)")
    a = ap.parse_args()

    import torch

    from planner.analysis import baseline_peak
    from planner.executor import execute
    from planner.models import load_model
    from planner.params import SolveParams
    from planner.registry import solve

    torch.set_num_threads(1)
    params = SolveParams(time_limit=a.time_limit)
    print(f"torch {torch.__version__}, {a.device}, 1 CPU thread, medians of {a.repeats} steps")
    for model in a.models.split(","):
        g = load_model(model)
        peak = baseline_peak(g)
        res = solve(g, int(peak * 1.25), "none", params)
        rep = execute(g, res.plan, a.device, repeats=a.repeats)
        print(f"\n{model}: {len(g.ops)} ops; none plan: executor {rep.step_seconds * 1e3:.2f} ms, "
              f"eager {rep.eager_seconds * 1e3:.2f} ms, executor/eager {rep.step_seconds / rep.eager_seconds:.2f}x "
              f"(target <= 1.3x); checks {'pass' if rep.passed else 'FAIL ' + ','.join(rep.failed)}")
        ops = ", ".join(f"{k.replace('aten.', '')} x{v}" for k, v in sorted(rep.outside_ops.items())) or "none"
        print(f"  not placed in the arena: {ops}; largest temporary {rep.copy_temp_peak} B")
        for method in a.methods.split(","):
            ratios = [float(r) for r in a.ratios.split(",")]
            done = False
            for r in ratios + [float(x) for x in a.fallback_ratios.split(",")]:
                if done and r not in ratios:
                    break
                res = solve(g, int(peak * r), method, params)
                if not res.has_plan:
                    if r in ratios:
                        print(f"  {method:6s} ratio {r:.2f}: no plan ({res.status}: {res.message[:100]})")
                    continue
                done = True
                rep = execute(g, res.plan, a.device, repeats=a.repeats)
                print(f"  {method:6s} ratio {r:.2f}: {res.status}, {rep.recomputations} recomputations, "
                      f"predicted overhead {rep.predicted_overhead * 100:.1f}%, measured {rep.measured_overhead * 100:.1f}%, "
                      f"plan/eager {rep.step_seconds / rep.eager_seconds:.2f}x, measured memory "
                      f"{rep.measured_peak / res.plan.budget:.3f} of budget; values {rep.checks[0].detail.split(' equal ')[-1]}; checks "
                      f"{'pass' if rep.passed else 'FAIL ' + ','.join(rep.failed)}")


if __name__ == "__main__":
    main()
