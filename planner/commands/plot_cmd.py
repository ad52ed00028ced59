"""`planner plot`: picture a plan (address-time map + live memory, PNG) or export it as a
PyTorch memory snapshot for memory_viz (``--format memory-viz``)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UserError
from .common import print_json
from .outpath import check_out_path
from .plan_graph import add_plan_args, graph_for_plan

FORMATS = ("png", "memory-viz")
# suffixes each format can write (matplotlib picks its writer from the suffix)
SUFFIXES = {"png": (".png", ".svg", ".pdf"), "memory-viz": (".pickle", ".pkl")}


def add_parser(sub) -> None:
    p = sub.add_parser("plot", help="draw a plan (address-time map, live memory) or export it for memory_viz")
    add_plan_args(p, "plan JSON (from solve --out or a study's plans/)")
    p.add_argument("--out", help="output file: .png, .svg or .pdf (png format), .pickle or .pkl (memory-viz); "
                                 "default PLAN.png or PLAN.pickle next to the plan")
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


def _draw_atomic(g, plan, out: Path, title: str | None) -> None:
    """matplotlib writes in place: draw to a temp file of the same suffix, then rename."""
    import os

    from ..jsonio import _file_mode
    from ..plotting.plan_plot import draw_plan

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.{os.getpid()}.tmp{out.suffix}")
    mode = _file_mode(out)
    try:
        draw_plan(g, plan, tmp, title)
        os.chmod(tmp, mode)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


def run(args) -> int:
    from ..plan import Plan
    from ..validator import validate

    ext = ".png" if args.format == "png" else ".pickle"
    out = Path(args.out) if args.out else Path(args.plan).with_name(_stem(args.plan) + ext)
    check_out_path(str(out), inputs=[args.plan, args.graph], suffixes=SUFFIXES[args.format])
    plan = Plan.load(args.plan)
    g = graph_for_plan(plan, args.model, args.graph)
    rep = validate(g, plan)
    if not rep.valid:
        print(f"error: the plan is not valid for {g.name}: {rep.violations[0]}", file=sys.stderr)
        return 1  # the same rule as validate: an invalid plan is exit 1
    try:
        if args.format == "png":
            _draw_atomic(g, plan, out, args.title)
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
