"""`planner validate`: independent check of a plan file; exit 0 only when valid, 1 when not, 2 when
the plan was made for another graph (the rule of ``plan_graph``, shared with execute and plot)."""
from __future__ import annotations

from ..plan import Plan
from ..validator import validate
from .common import fmt_bytes, print_json
from .plan_graph import add_plan_args, graph_for_plan


def add_parser(sub) -> None:
    p = sub.add_parser("validate", help="replay a plan against its graph and report every violation")
    add_plan_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    plan = Plan.load(args.plan)
    g = graph_for_plan(plan, args.model, args.graph)  # another graph's plan: exit 2, like execute and plot
    rep = validate(g, plan)
    if args.json:
        print_json({"plan": args.plan, "model": g.name, **rep.to_dict()})
    else:
        if rep.valid:
            print(f"valid: {len(plan.steps)} steps, peak {fmt_bytes(rep.peak_bytes)} of budget "
                  f"{fmt_bytes(plan.budget)}, peak address {fmt_bytes(rep.peak_address)}, "
                  f"overhead {rep.overhead * 100:.2f}%, {rep.recomputations} recomputations")
        else:
            total = rep.extra.get("violations_total", len(rep.violations))
            shown = f"{total} violation(s)" + (f", the first {len(rep.violations)} listed"
                                                if total > len(rep.violations) else "")
            print(f"INVALID: {shown}")
            for v in rep.violations:
                print(f"  {v}")
    return 0 if rep.valid else 1
