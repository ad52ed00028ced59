"""`planner plot`: picture a plan (address-time map + live memory, PNG) or export it as a
PyTorch memory snapshot for memory_viz (``--format memory-viz``)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UserError
from .common import print_json

FORMATS = ("png", "memory-viz")


def add_parser(sub) -> None:
    p = sub.add_parser("plot", help="draw a plan (address-time map, live memory) or export it for memory_viz")
    p.add_argument("--plan", required=True, help="plan JSON (from solve --out or a study's plans/)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--model", help="model the plan is for (default: the plan's own model field)")
    g.add_argument("--graph", help="graph file the plan is for")
    p.add_argument("--out", help="output file (default: PLAN.png or PLAN.pickle next to the plan)")
    p.add_argument("--format", default="png", choices=FORMATS,
                   help="png: picture; memory-viz: PyTorch snapshot pickle for pytorch.org/memory_viz")
    p.add_argument("--title", help="picture title")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def _stem(path: str) -> str:
    name = Path(path).name
    for suf in (".json.gz", ".json"):
        if name.endswith(suf):
            return name[: -len(suf)]
    return name


def run(args) -> int:
    from ..graph import Graph
    from ..models import load_model
    from ..plan import Plan
    from ..validator import validate

    plan = Plan.load(args.plan)
    if args.graph:
        g = Graph.load(args.graph)
    else:
        name = args.model or plan.model
        if not name:
            raise UserError("the plan names no model; give --model NAME or --graph FILE")
        g = load_model(name)
    rep = validate(g, plan)
    if not rep.valid:
        raise UserError(f"plan is not valid for {g.name}: {rep.violations[0]}")
    ext = ".png" if args.format == "png" else ".pickle"
    out = Path(args.out) if args.out else Path(args.plan).with_name(_stem(args.plan) + ext)
    try:
        if out.parent and not out.parent.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
        if args.format == "png":
            from ..plotting.plan_plot import draw_plan

            draw_plan(g, plan, out, args.title)
        else:
            from ..plotting.memviz import export

            export(g, plan, out)
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    if args.json:
        print_json({"out": str(out), "format": args.format, "model": g.name, "method": plan.method,
                    "peak_bytes": rep.peak_bytes, "budget": plan.budget, "recomputations": rep.recomputations})
    else:
        print(f"wrote {out}", file=sys.stdout)
    return 0
