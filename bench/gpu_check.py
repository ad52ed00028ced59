"""Execute the coop and exact plans of unet and bert-large at ratio 0.5 on CUDA and print, per plan: torch.cuda.max_memory_allocated during the plan's
step against the budget, the plan's step time against eager PyTorch's, and whether the values
equal eager PyTorch's bitwise (else the largest difference).

    bash bench/gpu_check.sh                      # on the GPU machine (plans already made)
    python bench/gpu_check.py --make-plans       # here, on CPU: solve and write the plans

The plans are made beforehand (exact needs minutes on bert-large), validated, and kept in
results/gpu-check/plans/; the GPU run only executes them. The four cells use the aot graphs
(profiles/): the eager graphs record the CPU op stream (fake tensors on a CPU-only torch:
``native_batch_norm`` where CUDA runs cuDNN's, dropout as ``bernoulli_`` where CUDA runs one
``native_dropout``, which draws other random numbers, so bert-large's masks would differ). A
fifth cell runs eager unet's coop plan at 0.55 (no dropout) if time is left.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PLANS = ROOT / "results" / "gpu-check" / "plans"
RATIO = 0.5
# (model, method, route, ratio): eager unet's coop finds no plan at 0.5 (results/heuristics/eager/scan_unet.csv)
CELLS = [("unet", "coop", "", RATIO), ("unet", "exact", "", RATIO), ("bert-large", "coop", "", RATIO),
         ("bert-large", "exact", "", RATIO), ("unet", "coop", "eager/", 0.55)]


def _graph(name: str):
    from planner.models import load_model
    return load_model(name)


def _path(model: str, method: str, route: str, ratio: float) -> Path:
    return PLANS / f"{route.replace('/', '-')}{model}-{method}-{ratio}.json"


def make_plans(time_limit: float, only: str | None) -> None:
    import planner
    PLANS.mkdir(parents=True, exist_ok=True)
    for model, method, route, ratio in CELLS:
        if only and only != f"{route}{model}:{method}":
            continue
        g = _graph(route + model)
        t0 = time.perf_counter()
        res = planner.solve(g, ratio=ratio, method=method, time_limit=time_limit)
        dt = time.perf_counter() - t0
        line = f"{route}{model} {method} {ratio}: {res.status} in {dt:.0f} s"
        if res.has_plan:
            res.plan.save(str(_path(model, method, route, ratio)))
            line += f", overhead {res.validation['overhead'] * 100:.2f}%" if res.validation else ""
        print(line + (f" ({res.message})" if res.message else ""), flush=True)


def check(repeats: int) -> int:
    import torch

    import planner
    from planner.executor.checks import execute
    from planner.plan import Plan

    if not torch.cuda.is_available():
        print("no CUDA device: this check needs a GPU")
        return 2
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    failed = 0
    for model, method, route, ratio in CELLS:
        path = _path(model, method, route, ratio)
        model = route + model
        if not path.exists():
            print(f"{model} {method}: no plan at {path} (run --make-plans)")
            failed += 1
            continue
        g = _graph(model)
        plan = Plan.load(str(path))
        t0 = time.perf_counter()
        rep = planner.execute(plan, g, device="cuda", repeats=0)
        # execute() resets the peak statistics right before its unchecked run of the plan
        peak = torch.cuda.max_memory_allocated()
        timed = execute(g, plan, "cuda", repeats=repeats, baseline=False)  # plan and eager only
        values = rep.checks[0]
        print(f"{model} {method} {ratio}: budget {plan.budget / 2**30:.2f} GiB, max_memory_allocated "
              f"{peak / 2**30:.2f} GiB ({peak / plan.budget:.3f} of the budget; arena {rep.arena_bytes / 2**30:.2f} GiB "
              f"+ at most {rep.outside_peak / 2**20:.0f} MiB outside it)")
        vs = timed.step_seconds / timed.eager_seconds if timed.step_seconds and timed.eager_seconds else float("nan")
        print(f"  time: plan {timed.step_seconds * 1e3:.1f} ms, eager {timed.eager_seconds * 1e3:.1f} ms "
              f"({vs:.2f}x), predicted overhead {rep.predicted_overhead * 100:.1f}%, {rep.recomputations} recomputations")
        print(f"  values: {'PASS' if values.passed else 'FAIL'} {values.detail}; "
              f"bitwise: {'yes' if 'bitwise' in values.detail else 'no'}")
        for c in rep.checks[1:]:
            print(f"  {'PASS' if c.passed else 'FAIL'} {c.name}: {c.detail}")
        print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
        failed += not rep.passed
        del rep, timed
        torch.cuda.empty_cache()
    print(json.dumps({"failed": failed}))
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--make-plans", action="store_true", help="solve and save the plans (CPU)")
    ap.add_argument("--time-limit", type=float, default=300.0, help="--make-plans: seconds per solve")
    ap.add_argument("--only", help="--make-plans: one cell, ROUTE+MODEL:METHOD (e.g. eager/unet:coop)")
    ap.add_argument("--repeats", type=int, default=2, help="timed steps of the plan and of eager PyTorch")
    a = ap.parse_args()
    if a.make_plans:
        make_plans(a.time_limit, a.only)
        return 0
    return check(a.repeats)


if __name__ == "__main__":
    sys.exit(main())
