"""Run a plan with real tensors and check it against eager PyTorch.

Checks (each named; a failed one makes ``execute`` exit non-zero naming it):
- ``values``: loss and updated parameters / gradients / buffers / optimizer state equal the
  eager step's. CPU: bitwise (same kernels on the same inputs in the same order; measured
  bit-exact: docs/executor.md). CUDA: within a tolerance (``TOLERANCE``; see there why).
- ``recompute``: every recomputation reproduces the first value (bitwise fingerprint).
- ``placement``: every output lands at its planned address inside the arena.
- ``memory``: measured memory within the budget. CPU: the peak of arena storages live (tracked
  step by step as the plan runs) plus temporaries held outside the arena at that moment.
  CUDA: the plan's peak live bytes plus ``torch.cuda.max_memory_allocated`` over the step minus
  what was allocated before it (arena included), a conservative sum.
Figures: step time of the plan, of the plain schedule through the same executor, and of eager
PyTorch (medians over ``repeats``); measured overhead (plan / plain schedule - 1) next to the
overhead the plan predicts (the validator's, from the graph's cost model).
"""
from __future__ import annotations

import functools
import logging
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

from ..graph import Graph
from ..plan import Plan
from .arena import ExecError
from .recipe import resident_value
from .reference import EagerRunner, Recipe, build, eager_reference, recipe_of
from .replay import Program

log = logging.getLogger(__name__)

CHECKS = ("values", "recompute", "placement", "memory")

#: CUDA tolerance (rtol, atol) per dtype. Eager and replay run the same ops on the same values,
#: but cuBLAS/cuDNN may pick different algorithms for out= calls and backward kernels with
#: atomics (embedding, index_add) sum in a nondeterministic order: differences are rounding
#: of reductions, a few ulps (fp32 eps 1.2e-7, bf16 eps 7.8e-3) amplified by depth.
TOLERANCE = {"float32": (1e-4, 1e-6), "bfloat16": (2e-2, 1e-3), "float16": (5e-3, 1e-4)}


@dataclass(frozen=True)
class Check:
    name: str        # one of CHECKS
    passed: bool
    detail: str      # what was compared, and the first difference when failed


@dataclass(frozen=True)
class ExecReport:
    device: str                      # cpu | cuda
    model: str
    method: str
    budget: int                      # plan budget, bytes (= arena bytes)
    planned_peak: int                # validator peak live bytes
    measured_peak: int               # planned storages live + executor temporaries (CPU); see CUDA in the docstring
    measured_all_peak: int | None    # CPU: arena storages live + every allocation outside the arena (profiler)
    arena_bytes: int                 # bytes of the one arena buffer
    outside_peak: int                # peak bytes held outside the arena during the step
    outside_ops: dict[str, int]      # aten target -> executions not fully placed (temporary + copy, or scratch)
    copy_temp_peak: int              # largest temporary of such an op, bytes
    rng_state_bytes: int             # saved RNG states (host memory)
    recomputations: int
    predicted_overhead: float        # validator: plan cost / plain cost - 1 (cost model)
    measured_overhead: float | None  # plan time / plain-schedule time through the executor - 1
    step_seconds: float | None       # median executor step time of the plan
    baseline_seconds: float | None   # median executor step time of the plain schedule
    eager_seconds: float | None      # median eager PyTorch step time
    checks: tuple[Check, ...]
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["passed"] = self.passed
        d["failed"] = self.failed
        d["vs_eager"] = (self.step_seconds / self.eager_seconds) if self.step_seconds and self.eager_seconds else None
        return d


def default_device() -> str:
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def check_device(device: str | None) -> str:
    import torch
    device = device or default_device()
    if device not in ("cpu", "cuda"):
        raise ExecError(f"unknown device {device!r}; use cpu or cuda")
    if device == "cuda" and not torch.cuda.is_available():
        raise ExecError("--device cuda: CUDA is not available on this machine (torch "
                        f"{torch.__version__}, no CUDA device); use --device cpu")
    return device


def _sync(device: str):
    import torch
    if device == "cuda":
        return torch.cuda.synchronize
    return lambda: None


def _initial_values(g: Graph, rec: Recipe, device: str):
    """Resident values of a fresh build and the RNG state right after building (where the eager
    step's random stream starts). Kept on the host for CUDA so device memory holds the arena only."""
    import torch
    model, inputs = build(rec, device)
    rng = torch.cuda.get_rng_state() if device == "cuda" else torch.get_rng_state()
    init = {}
    for t in g.tensors:
        if t.producer is None and t.alias_of is None:
            bind = t.meta.get("bind")
            if bind is None:
                raise ExecError(f"resident tensor {t.id} ({t.name}) has no 'bind' in its recipe")
            v = resident_value(bind, model, inputs, device, t.meta)
            init[t.id] = v.detach().to("cpu", copy=True) if device == "cuda" else v.detach().clone()
    return init, rng, [n for n, _ in model.named_parameters()]


def final_values(g: Graph, env: list, grad_names: list[str]) -> dict[str, Any]:
    """Executor results named like ``reference.final_values``."""
    out: dict[str, Any] = {}
    grads = []
    for t in g.required:
        tt = g.tensors[t]
        v = env[t]
        if v is None:
            raise ExecError(f"required tensor {t} ({tt.name}) is not live at the end of the plan")
        if tt.kind == "loss":
            out["loss"] = v
        elif "writes" in tt.meta:
            out[tt.meta["writes"]] = v
        else:
            grads.append(v)
    for t in g.tensors:  # buffers the step only reads (constants) must come out unchanged
        bind = t.meta.get("bind", "") if t.producer is None else ""
        if bind.startswith("buffer:") and bind not in out and env[t.id] is not None:
            out[bind] = env[t.id]
    if grads:
        if len(grads) != len(grad_names):
            raise ExecError(f"{len(grads)} required gradients but the model has {len(grad_names)} parameters")
        out.update({f"grad:{n}": v for n, v in zip(grad_names, grads)})
    return out


def compare(ref: dict[str, Any], got: dict[str, Any], device: str) -> Check:
    import torch
    missing = sorted(set(got) - set(ref))
    if missing:
        return Check("values", False, f"executor produced {missing[0]}, which eager PyTorch has no value for")
    bitwise = device == "cpu"
    worst = 0.0
    n = 0
    for k, v in got.items():
        r = ref[k]
        v = v.detach().to("cpu")
        if tuple(v.shape) != tuple(r.shape) or v.dtype != r.dtype:
            return Check("values", False, f"{k}: shape/dtype {tuple(v.shape)} {v.dtype} vs eager {tuple(r.shape)} {r.dtype}")
        same = torch.equal(v, r) or bool(((v == r) | (torch.isnan(v) & torch.isnan(r))).all()) if v.is_floating_point() \
            else torch.equal(v, r)
        n += 1
        if same:
            continue
        diff = (v.double() - r.double()).abs().max().item() if v.numel() else 0.0
        worst = max(worst, diff)
        if bitwise:
            return Check("values", False, f"{k} differs from eager PyTorch (max abs diff {diff:.3g}; CPU requires bitwise)")
        rtol, atol = TOLERANCE.get(str(r.dtype).replace("torch.", ""), (1e-4, 1e-6))
        if not torch.allclose(v.double(), r.double(), rtol=rtol, atol=atol):
            return Check("values", False, f"{k} differs from eager PyTorch beyond rtol {rtol} atol {atol} (max abs diff {diff:.3g})")
    how = "bitwise" if bitwise or worst == 0 else f"within tolerance (max abs diff {worst:.3g})"
    missing_got = sorted({k for k in ref if k.startswith(("param:", "grad:", "buffer:"))} - set(got))
    if missing_got:
        return Check("values", False, f"eager result {missing_got[0]} has no counterpart in the plan's outputs")
    return Check("values", True, f"{n} tensors (loss, parameters/gradients, buffers, optimizer state) equal eager PyTorch {how}")


class _PlanRunner:
    def __init__(self, prog: Program, init, rng):
        self.prog, self.init, self.rng = prog, init, rng

    def step(self, sync) -> float:
        env = self.prog.reset(self.init, self.rng)  # not timed: restores the step's inputs
        sync()
        t0 = time.perf_counter()
        self.prog.run(env, check=False)
        sync()
        return time.perf_counter() - t0


def _time_interleaved(runners: dict[str, Any], repeats: int, sync) -> dict[str, float]:
    """Median step seconds per runner; runs are interleaved round-robin (one warm-up round
    first) so that drifting load on a shared machine hits every runner alike."""
    times: dict[str, list[float]] = {k: [] for k in runners}
    for i in range(repeats + 1):
        for k, r in runners.items():
            t = r.step(sync)
            if i:
                times[k].append(t)
    return {k: statistics.median(v) for k, v in times.items()}


def _plain_plan(g: Graph, alignment: int) -> Plan:
    """The plain schedule (method ``none``) at the smallest budget it fits among a few."""
    from ..analysis import baseline_peak
    from ..params import SolveParams
    from ..registry import solve
    peak = baseline_peak(g, alignment)
    for f in (1.0, 1.25, 1.5, 2.0, 4.0):
        res = solve(g, int(peak * f) + alignment, "none", SolveParams(alignment=alignment))
        if res.has_plan:
            return res.plan
    raise ExecError("could not place the plain schedule for the baseline timing")


class ZooSource:
    """Where the values of an aot-captured zoo graph come from: the zoo recipe (model, batch,
    seed, optimizer). ``planner.executor.user.ModelSource`` is the same for a user's objects."""

    def __init__(self, g: Graph):
        self.rec = recipe_of(g)
        self.name = self.rec.model
        self.names: list[str] = []

    def reference(self, device: str) -> dict[str, Any]:
        return eager_reference(self.rec, device)

    def initial(self, g: Graph, device: str):
        init, rng, self.names = _initial_values(g, self.rec, device)
        return init, rng

    def finals(self, g: Graph, env: list) -> dict[str, Any]:
        return final_values(g, env, self.names)

    def eager_runner(self, device: str):
        return EagerRunner(self.rec, device)


def execute(g: Graph, plan: Plan, device: str | None = None, repeats: int = 3,
            baseline: bool = True, strict_memory: bool = False, source: Any = None) -> ExecReport:
    """Run ``plan`` on ``g``'s model with real tensors; check it and time it (``repeats`` timed
    runs each of the plan, the plain schedule and eager PyTorch; 0 = checks only). ``source``
    gives the model's values (default: the graph's own recipe, zoo or ``--module`` factory)."""
    import torch

    from ..validator import validate

    device = check_device(device)
    if source is None:
        if g.meta.get("capture") == "eager":
            from .user import source_from_recipe
            source = source_from_recipe(g)
        else:
            source = ZooSource(g)
    if plan.graph_hash != g.hash:
        raise ExecError(f"plan is for graph {plan.graph_hash}, but {g.name}'s graph is {g.hash}")
    rep = validate(g, plan)
    sync = _sync(device)
    ref = source.reference(device)
    init, rng = source.initial(g, device)
    prog = Program(g, plan, device)
    env = prog.reset(init, rng)
    try:
        peaks = None
        if device == "cpu":
            from .memory import profile_steps
            prog.mark = True
            stats, peaks = profile_steps(functools.partial(prog.run, env, check=True))
            prog.mark = False
        else:
            stats = prog.run(env, check=True)
        values = compare(ref, source.finals(g, env), device)
    except ExecError:
        raise
    except Exception as exc:  # noqa: BLE001 - corrupted values can make any op fail (bad indices, overlaps)
        msg = f"torch error while running the plan: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:300]}"
        return _failed_run(g, plan, device, source.name, rep, msg)
    del env
    checks = [values]
    checks.append(Check("recompute", not stats.recompute_mismatches,
                        f"{stats.recomputations} recomputations reproduce their first value" if not stats.recompute_mismatches
                        else f"{len(stats.recompute_mismatches)} recomputations differ, first: {stats.recompute_mismatches[0]}"))
    checks.append(Check("placement", not stats.placement_errors,
                        "every output at its planned arena address" if not stats.placement_errors
                        else f"{len(stats.placement_errors)} outputs misplaced, first: {stats.placement_errors[0]}"))
    notes = []
    step_s = base_s = eager_s = None
    measured = stats.live_peak
    outside = stats.outside_peak
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        env = prog.reset(init, rng)
        torch.cuda.synchronize()
        base_alloc = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        prog.run(env, check=False)
        torch.cuda.synchronize()
        extra = torch.cuda.max_memory_allocated() - base_alloc
        del env, before
        outside = extra
        measured = rep.peak_bytes + extra
        notes.append("cuda memory: planned peak live bytes + (max_memory_allocated during the step - allocated before)")
    else:
        notes.append("cpu memory: arena storages live (tracked per step) + the executor's temporaries outside the "
                     "arena; with kernel scratch: + every CPU allocation outside the arena during the step (profiler); "
                     f"saved RNG states ({stats.rng_bytes} B) reported apart")
    all_peak = all_op = None
    if device == "cpu" and peaks is not None and len(peaks) == len(stats.per_step):
        # every allocation outside the arena (kernel scratch included), saved RNG states apart
        for (op, live_b, _, rng_b), pk in zip(stats.per_step, peaks):
            tot = live_b + max(0, pk - rng_b)
            if all_peak is None or tot > all_peak:
                all_peak, all_op = tot, op
        outside = max([0] + [pk - rng_b for (_, _, _, rng_b), pk in zip(stats.per_step, peaks)]) + stats.rng_bytes
    elif device == "cpu":
        notes.append("cpu allocation profile unavailable: memory counts the executor's own temporaries only")
    crit = all_peak if (strict_memory and all_peak is not None) else measured
    mem_ok = crit <= plan.budget
    detail = (f"{'all allocations' if crit is all_peak and strict_memory else 'planned storages + executor temporaries'}: "
              f"measured {crit} B {'<=' if mem_ok else '>'} budget {plan.budget} B"
              + (f" (peak at op {stats.live_peak_op})" if device == "cpu" and stats.live_peak_op is not None else ""))
    if all_peak is not None and not strict_memory:
        detail += (f"; with every CPU allocation outside the arena (kernel scratch, profiler) {all_peak} B "
                   f"({all_peak / plan.budget:.3f} of the budget, at op {all_op})")
    checks.append(Check("memory", mem_ok, detail))
    arena_bytes = prog.arena.capacity
    if repeats > 0:
        runners: dict[str, Any] = {"plan": _PlanRunner(prog, init, rng)}
        if baseline:
            runners["plain"] = _PlanRunner(Program(g, _plain_plan(g, plan.alignment), device), init, rng)
        runners["eager"] = source.eager_runner(device)
        med = _time_interleaved(runners, repeats, sync)
        step_s, base_s, eager_s = med["plan"], med.get("plain"), med["eager"]
        del runners
    del prog
    return ExecReport(
        device=device, model=source.name, method=plan.method, budget=plan.budget,
        planned_peak=rep.peak_bytes, measured_peak=measured, measured_all_peak=all_peak, arena_bytes=arena_bytes,
        outside_peak=outside, outside_ops=dict(stats.outside_ops), copy_temp_peak=stats.copy_temp_peak,
        rng_state_bytes=stats.rng_bytes, recomputations=stats.recomputations,
        predicted_overhead=rep.overhead,
        measured_overhead=(step_s / base_s - 1.0) if step_s and base_s else None,
        step_seconds=step_s, baseline_seconds=base_s, eager_seconds=eager_s,
        checks=tuple(checks), notes=tuple(notes),
    )


def _failed_run(g: Graph, plan: Plan, device: str, model: str, rep, msg: str) -> ExecReport:
    """Report of a run that torch aborted: every check fails (none could be completed)."""
    checks = tuple(Check(n, False, msg if n == "values" else "not run: the plan did not run to the end")
                   for n in CHECKS)
    return ExecReport(
        device=device, model=model, method=plan.method, budget=plan.budget,
        planned_peak=rep.peak_bytes, measured_peak=0, measured_all_peak=None, arena_bytes=plan.budget, outside_peak=0,
        outside_ops={}, copy_temp_peak=0, rng_state_bytes=0, recomputations=0,
        predicted_overhead=rep.overhead, measured_overhead=None, step_seconds=None,
        baseline_seconds=None, eager_seconds=None, checks=checks, notes=(msg,))
