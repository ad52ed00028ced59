"""`planner validate`: independent check of a plan file; exit 0 only when valid."""
from __future__ import annotations

from ..models import load_graph_arg
from ..plan import Plan
from ..validator import validate
from .common import fmt_bytes, print_json


def add_parser(sub) -> None:
    p = sub.add_parser("validate", help="replay a plan against its graph and report every violation")
    p.add_argument("--plan", required=True, help="plan JSON file")
    p.add_argument("--model", help="model of the plan (default: the one recorded in the plan)")
    p.add_argument("--graph", help="graph JSON file (instead of the plan's model)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def run(args) -> int:
    plan = Plan.load(args.plan)
    model = args.model or (None if args.graph else plan.model)
    g = load_graph_arg(model, args.graph)
    rep = validate(g, plan)
    if args.json:
        print_json({"plan": args.plan, "model": g.name, **rep.to_dict()})
    else:
        if rep.valid:
            print(f"valid: {len(plan.steps)} steps, peak {fmt_bytes(rep.peak_bytes)} of budget "
                  f"{fmt_bytes(plan.budget)}, peak address {fmt_bytes(rep.peak_address)}, "
                  f"overhead {rep.overhead * 100:.2f}%, {rep.recomputations} recomputations")
        else:
            print(f"INVALID: {len(rep.violations)} violation(s)")
            for v in rep.violations:
                print(f"  {v}")
    return 0 if rep.valid else 1
