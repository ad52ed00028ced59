"""`planner study`: run a grid of (model x ratio x method) cells, resumable, in parallel workers.

The library reports progress through a callback; this command owns the terminal and draws the
bar on stderr (rewritten in place on a terminal, one line per finished cell otherwise)."""
from __future__ import annotations

import shlex
import sys

from ..errors import UserError
from ..ratio_of import RATIO_OF, RATIO_OF_HELP
from .common import print_json
from .options import SEED_MAX, positive_int, seconds, seed


def add_parser(sub) -> None:
    p = sub.add_parser("study", help="run a grid of models x ratios x methods; table, summary, plots")
    p.add_argument("--models", help="comma list of models (zoo names, synthetic specs or graph files)")
    p.add_argument("--ratios", help="LO:HI:STEP (inclusive, e.g. 0.3:0.9:0.1) or a comma list")
    p.add_argument("--methods", help="comma list of methods; ablations as METHOD/no-FLAG (e.g. coop/no-partition)")
    p.add_argument("--preset", help="a named study: zoo, coop-paper, coop-paper-tiny, gap-zoo (its own default time limit: 300 s)")
    p.add_argument("--spec", help="run the study described by this study.json")
    p.add_argument("--name", help="study name (default: the out folder's name)")
    p.add_argument("--time-limit", type=seconds, default=None, help="solver seconds per cell, > 0 (default 60; a preset may set its own)")
    p.add_argument("--wall-limit", type=seconds, default=None,
                   help="hard wall seconds per cell before it is killed, > 0 (default 2 x time limit + 120)")
    p.add_argument("--seed", type=seed, default=0, help=f"solver seed in [0, {SEED_MAX}] (default 0)")
    p.add_argument("--threads", type=positive_int, default=1, help="solver threads per cell, >= 1 (default 1)")
    p.add_argument("--ratio-of", default=None, choices=RATIO_OF, help=RATIO_OF_HELP)
    p.add_argument("--jobs", type=positive_int, default=1, help="cells in parallel, >= 1 (default 1)")
    p.add_argument("--force", action="store_true",
                   help="run a different grid in a folder that holds another study (its study.json is replaced)")
    p.add_argument("--out", help="study folder (default results/NAME)")
    p.add_argument("--backend", default="local", choices=("local", "ray"), help="worker processes or Ray tasks")
    p.add_argument("--address", help="Ray cluster address (with --backend ray; default: start a local one)")
    p.add_argument("--save-plans", action="store_true", help="keep each cell's plan under plans/")
    p.add_argument("--no-plots", action="store_true", help="table and summary only (no matplotlib needed)")
    p.add_argument("--retry-errors", action="store_true", help="rerun cells recorded as error")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout at the end")
    p.set_defaults(func=run)


def _spec_from_args(args):
    from ..study.presets import preset
    from ..study.spec import Grid, StudySpec, _split_list, parse_methods, parse_ratios

    grid_args = [args.models, args.ratios, args.methods]
    sources = sum(bool(x) for x in (args.preset, args.spec, any(grid_args)))
    if sources != 1:
        raise UserError("give exactly one of: --models/--ratios/--methods, --preset NAME, --spec study.json")
    tl = args.time_limit
    if args.spec:
        spec = StudySpec.load(args.spec)
        if tl is not None:
            raise UserError("--time-limit cannot override a --spec study (edit its study.json)")
        if args.ratio_of is not None and args.ratio_of != spec.ratio_of:
            raise UserError(f"--ratio-of cannot override a --spec study (it has ratio_of {spec.ratio_of})")
        return spec
    if args.preset:
        spec = preset(args.preset, tl)
    else:
        if not all(grid_args):
            raise UserError("a grid needs --models, --ratios and --methods")
        grid = Grid(_split_list(args.models, "model"), parse_ratios(args.ratios), parse_methods(args.methods))
        spec = StudySpec(name=args.name or "study", grids=(grid,), time_limit=tl if tl is not None else 60.0)
    from dataclasses import replace

    return replace(spec, name=args.name or (spec.name if args.preset else _name_from_out(args.out, spec.name)),
                   seed=args.seed, threads=args.threads, wall_limit=args.wall_limit,
                   save_plans=args.save_plans, ratio_of=args.ratio_of or "peak",
                   extra={**spec.extra, "command": "python -m planner " + shlex.join(sys.argv[1:])
                          if sys.argv and sys.argv[0].endswith(("__main__.py", "planner", "coop-planner"))
                          else ""})


def _name_from_out(out: str | None, default: str) -> str:
    from pathlib import Path

    return Path(out).name if out else default


class _Bar:
    """Progress on stderr: cells done/total, running, ETA."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last_len = 0

    def __call__(self, p, rec) -> None:
        width = 24
        fill = int(width * p.done / p.total) if p.total else width
        eta = "?" if p.eta is None else _dur(p.eta)
        line = (f"[{'#' * fill}{'.' * (width - fill)}] {p.done}/{p.total} done, {p.running} running, "
                f"elapsed {_dur(p.elapsed)}, ETA {eta}")
        if rec is not None:
            line += f"  last: {rec['model']} {rec['ratio']:g} {rec['method']} -> {rec.get('status')}"
        if self.tty:
            sys.stderr.write("\r" + line.ljust(self.last_len))
            self.last_len = len(line)
        elif rec is not None or p.done == p.total:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.tty and self.last_len:
            sys.stderr.write("\n")


def _dur(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def run(args) -> int:
    from pathlib import Path

    from ..study.runner import run_study

    spec = _spec_from_args(args)
    out = Path(args.out) if args.out else (Path(args.spec).parent if args.spec else Path("results") / spec.name)
    bar = _Bar()
    try:
        run_ = run_study(spec, out, jobs=args.jobs, backend=args.backend, address=args.address,
                         progress=bar, retry_errors=args.retry_errors,
                         plots=not args.no_plots, force=args.force)
    finally:
        bar.close()
    for note in run_.notes:
        print(f"note: {note}", file=sys.stderr)
    statuses: dict[str, int] = {}
    for r in run_.records:
        statuses[r.get("status", "?")] = statuses.get(r.get("status", "?"), 0) + 1
    if args.json:
        print_json({"out": str(out), "cells": len(run_.records), "ran": run_.ran, "skipped": run_.skipped,
                    "wall_seconds": run_.wall_seconds, "statuses": statuses,
                    "table": str(out / "table.csv"), "summary": str(out / "summary.md"), "notes": run_.notes})
    else:
        print(f"study {spec.name}: {len(run_.records)} cells ({run_.ran} run, {run_.skipped} already done) "
              f"in {run_.wall_seconds:.1f} s; " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
        print(f"table   {out / 'table.csv'}")
        print(f"summary {out / 'summary.md'}")
    return 0
