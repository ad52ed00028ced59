"""`planner profile`: capture a zoo model's training step into a graph file (regenerates
``profiles/NAME.json.gz`` by default)."""
from __future__ import annotations

import logging
import time

from ..errors import UserError
from .common import fmt_bytes, print_json
from .options import SEED_MAX, seed
from .outpath import check_out_path, report_write_error, try_write

log = logging.getLogger(__name__)


def add_parser(sub) -> None:
    p = sub.add_parser("profile", help="capture a model's training step (fake tensors) into a graph file")
    p.add_argument("--model", help="zoo model name (see `planner list`)")
    p.add_argument("--module", help="your model: pkg.module:factory, factory() -> (model, batch[, loss_fn[, optimizer]])")
    p.add_argument("--capture", default="eager", choices=("eager", "aot"),
                   help="eager: the ops eager PyTorch runs, in-place ops included (default); aot: aot_autograd's functional graph")
    p.add_argument("--steps", type=int, default=1, help="training steps in one graph (eager capture; default 1)")
    p.add_argument("--batch", type=int, help="batch size (default: the zoo's)")
    p.add_argument("--optimizer", default="sgd", help="none | sgd | adam (default sgd)")
    p.add_argument("--device-profile", default="a100-80gb", help="a100-80gb | h100 | h200 (default a100-80gb)")
    p.add_argument("--precision", help="fp32 | tf32 | bf16 peak to use (default: bf16 for bf16 models, else tf32)")
    p.add_argument("--measure", action="store_true", help="time each op on this machine instead of the cost model")
    p.add_argument("--seed", type=seed, default=0,
                   help=f"seed recorded for the executor (weights and batch), in [0, {SEED_MAX}] (default 0)")
    p.add_argument("--out", help="output graph file (default profiles/NAME.json.gz, only with default options)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run)


def _check(args) -> None:
    """Every bad input is rejected before torch is imported (fast, one line)."""
    from ..profile.devices import DEVICES, PRECISIONS
    from ..profile.optim import OPTIMIZERS
    from ..profile.zoo import ZOO

    if args.steps < 1:
        raise UserError(f"--steps must be at least 1, got {args.steps}")
    if bool(args.model) == bool(args.module):
        raise UserError("give exactly one of --model NAME and --module pkg.module:factory")
    if args.module:
        if not args.out:
            raise UserError("--module needs --out PATH")
        if args.capture != "eager":
            raise UserError("--module captures with --capture eager only")
        return
    if args.model not in ZOO:
        raise UserError(f"unknown model {args.model!r}; zoo models: {', '.join(sorted(ZOO))}")
    if args.batch is not None and args.batch <= 0:
        raise UserError(f"--batch must be positive, got {args.batch}")
    if args.optimizer not in OPTIMIZERS:
        raise UserError(f"unknown optimizer {args.optimizer!r}; known: {', '.join(OPTIMIZERS)}")
    if args.device_profile not in DEVICES:
        raise UserError(f"unknown device profile {args.device_profile!r}; known: {', '.join(sorted(DEVICES))}")
    if args.precision is not None and args.precision not in PRECISIONS:
        raise UserError(f"unknown precision {args.precision!r}; known: {', '.join(PRECISIONS)}")


def _is_default(args) -> bool:
    from ..profile.zoo import ZOO
    return (args.batch in (None, ZOO[args.model].batch) and args.optimizer == "sgd" and args.seed == 0
            and args.device_profile == "a100-80gb" and args.precision is None and not args.measure
            and args.steps == 1)


def run(args) -> int:
    _check(args)
    from ..analysis import baseline_peak
    from ..models import PROFILES_DIR
    from ..profile.build import capture_model

    out = args.out
    if out is None:
        if not _is_default(args):
            raise UserError("give --out PATH: non-default options would replace the checked-in profile")
        # eager graphs sit in profiles/eager/ (load them as --model eager/NAME) beside the aot
        # ones that the checked-in results and tests were made on
        sub = "eager/" if args.capture == "eager" else ""
        out = str(PROFILES_DIR / f"{sub}{args.model}.json.gz")
    check_out_path(out, suffixes=(".json", ".json.gz"))
    t0 = time.perf_counter()
    if args.module:
        from ..profile.eager import capture_module
        g = capture_module(args.module, args.steps, args.seed, args.device_profile, args.precision)
    else:
        g = capture_model(args.model, args.batch, args.optimizer, args.device_profile, args.precision,
                          args.measure, args.seed, args.capture, args.steps)
    seconds = time.perf_counter() - t0
    write_error = try_write(lambda: g.save(out), out)
    if write_error:
        print(f"{g.name}: {len(g.ops)} ops, {len(g.tensors)} tensors (graph {g.hash}), captured in {seconds:.1f} s")
        return report_write_error(write_error) or 2
    T = g.tensors
    info = {"model": g.name, "path": out, "graph_hash": g.hash, "ops": len(g.ops), "tensors": len(T),
            "views": sum(1 for t in T if t.alias_of is not None),
            "param_bytes": sum(t.bytes for t in T if t.kind == "param" and t.alias_of is None),
            "baseline_peak_bytes": baseline_peak(g), "total_cost": g.total_cost(),
            "total_flops": float(sum(o.flops for o in g.ops)), "cost_source": g.meta.get("cost_source"),
            "capture_seconds": seconds}
    if args.json:
        print_json(info)
        return 0
    print(f"{g.name}: {info['ops']} ops, {info['tensors']} tensors ({info['views']} views), "
          f"parameters {fmt_bytes(info['param_bytes'])}, baseline peak {fmt_bytes(info['baseline_peak_bytes'])}, "
          f"{info['total_cost'] * 1e3:.2f} ms ({info['cost_source']}), {info['total_flops'] / 1e12:.3f} TFLOP")
    print(f"captured in {seconds:.1f} s -> {out}")
    return 0
