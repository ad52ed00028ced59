"""`planner execute`: run a plan with PyTorch on one arena of its budget and check it.

Exit 0 when every check passes, 1 naming the failed checks or the violated rule of an invalid
plan (validated before it runs), 2 for user errors (plan for another graph, CUDA asked for but
absent, a graph without a replay recipe).
"""
from __future__ import annotations

import sys

from ..plan import Plan
from ..validator import validate
from .common import fmt_bytes, print_json
from .options import count, positive_int
from .plan_graph import graph_for_plan


def add_parser(sub) -> None:
    p = sub.add_parser("execute", help="run a plan with PyTorch (one arena, planned addresses) and check it against eager")
    p.add_argument("--plan", required=True, help="plan JSON file")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None,
                   help="default: cuda when available, else cpu")
    p.add_argument("--graph", help="graph JSON file (default: the checked-in profile of the plan's model)")
    p.add_argument("--repeats", type=count, default=3,
                   help="timed runs of the plan, the plain schedule and eager PyTorch, >= 0 (median; 0 = checks "
                        "only; default 3)")
    p.add_argument("--threads", type=positive_int, default=1, help="torch CPU threads, >= 1 (default 1)")
    p.add_argument("--strict-memory", action="store_true",
                   help="cpu: the memory check counts every allocation outside the arena (kernel scratch too)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    import torch

    from ..executor import execute
    from ..executor.checks import check_device

    plan = Plan.load(args.plan)
    device = check_device(args.device)  # before the (slow) model load: a missing CUDA is a user error
    g = graph_for_plan(plan, graph_file=args.graph)
    rep = validate(g, plan)  # a broken plan is named by its rule, not found by chance at run time
    if not rep.valid:
        print(f"error: the plan is not valid, not executed: {rep.violations[0]}", file=sys.stderr)
        return 1
    if device == "cpu":
        torch.set_num_threads(args.threads)
    rep = execute(g, plan, device, repeats=args.repeats, strict_memory=args.strict_memory)
    if args.json:
        print_json({"plan": args.plan, **rep.to_dict()})
    else:
        _print(rep)
    if not rep.passed:
        print(f"check failed: {', '.join(rep.failed)}", file=sys.stderr)
        return 1
    return 0


def _ms(s: float | None) -> str:
    return "-" if s is None else f"{s * 1e3:.2f} ms"


def _print(rep) -> None:
    print(f"executed {rep.method} plan for {rep.model} on {rep.device}")
    for c in rep.checks:
        print(f"  {'PASS' if c.passed else 'FAIL'} {c.name}: {c.detail}")
    print(f"memory: budget {fmt_bytes(rep.budget)} (arena), planned peak {fmt_bytes(rep.planned_peak)}, "
          f"measured {fmt_bytes(rep.measured_peak)}, outside the arena at most {fmt_bytes(rep.outside_peak)}")
    if rep.measured_all_peak is not None:
        print(f"  with every allocation outside the arena (kernel scratch included): {fmt_bytes(rep.measured_all_peak)} "
              f"({rep.measured_all_peak / rep.budget:.3f} of the budget)")
    if rep.outside_ops:
        ops = ", ".join(f"{k.replace('aten.', '')} x{v}" for k, v in sorted(rep.outside_ops.items()))
        print(f"  not placed in the arena (temporary + copy, or scratch): {ops}; largest {fmt_bytes(rep.copy_temp_peak)}")
    if rep.rng_state_bytes:
        print(f"  saved RNG states: {fmt_bytes(rep.rng_state_bytes)} (host memory)")
    vs = rep.to_dict()["vs_eager"]
    print(f"time: plan {_ms(rep.step_seconds)}, plain schedule {_ms(rep.baseline_seconds)}, eager {_ms(rep.eager_seconds)}"
          + (f", plan/eager {vs:.2f}x" if vs else ""))
    mo = "-" if rep.measured_overhead is None else f"{rep.measured_overhead * 100:.1f}%"
    print(f"overhead: predicted {rep.predicted_overhead * 100:.1f}%, measured {mo} ({rep.recomputations} recomputations)")
    for n in rep.notes:
        print(f"note: {n}")
