"""Method ``pytorch-budget``: PyTorch's min-cut partitioner under ``activation_memory_budget``.

A user of ``torch.compile`` picks a value of ``torch._functorch.config.activation_memory_budget``
(0: save as little as possible, 1: the runtime-optimised min cut) and the partitioner decides
which forward values to save (``planner.baselines.torch_partition``). We ask it at every knob of
``KNOBS``, turn each saved set into a schedule (``formulations.keep_plans``: the backward
recomputes the rest) placed by the planner's allocator, and report the cheapest plan that fits
the byte budget: the knob a user tuning it would end with. When no knob fits, the result is
``infeasible`` with the validator's measured peak of the lowest plan in the message and stats,
rather than a plan that breaks the budget.
"""
from __future__ import annotations

import logging
import time

from planner.errors import UserError
from planner.graph import Graph
from planner.params import SolveParams
from planner.result import Result, gap_of

log = logging.getLogger(__name__)

# the knob values tried, from the runtime-optimised cut to the memory-minimal one
KNOBS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)
# the one candidate that is not the partitioner's: eager autograd (no torch.compile), which saves
# every forward value. Why: the min cut even at knob 1 recomputes fusible pointwise ops (free
# inside a fused kernel, not in an op-level cost model), and where the plain step fits, a user
# would not compile for memory at all
EAGER = "eager"


def knob_sequences(g: Graph, p, knobs=KNOBS) -> dict[str, list[int] | None]:
    """knob (as text) -> the schedule of what the partitioner saves at that knob; ``EAGER`` ->
    the schedule saving every forward value (each op once)."""
    from formulations.keep_plans import forward_ops, saved_sequence

    from .torch_partition import saved_tensors

    n_fwd = forward_ops(g)
    out = {f"{k:g}": saved_sequence(p, n_fwd, s) for k, s in saved_tensors(g, list(knobs)).items()}
    out[EAGER] = saved_sequence(p, n_fwd, frozenset(t.id for t in g.tensors))
    return out


def prepare(g: Graph) -> None:
    """Trace and partition once for every knob (the slow part, minutes on the large models);
    the answer depends on the graph only, so every budget's solve reuses it."""
    from .torch_partition import saved_tensors, zoo_name

    zoo_name(g)
    saved_tensors(g, list(KNOBS))


def solve_pytorch_budget(g: Graph, budget: int, params: SolveParams) -> Result:
    from formulations.common import setup
    from formulations.keep_plans import place_sequence
    from formulations.schedule import lifetimes
    from planner.validator import validate

    from .torch_partition import zoo_name

    zoo_name(g)  # a graph without fx provenance: a user error (one line, exit 2), before any work
    s = setup("pytorch-budget", g, budget, params)
    if isinstance(s, Result):
        return s
    p = s.p
    from .torch_partition import trace_state

    shared, _ = trace_state(g, list(KNOBS))
    try:
        seqs = knob_sequences(g, p)
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - the partitioner failing is the method's answer, in one line
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return Result("pytorch-budget", "error", backend="torch",
                      message=f"PyTorch's partitioner failed: {type(exc).__name__}: {msg}"[:400])
    rows = []  # (cost, peak units, is eager, knob, seq)
    per_knob = {}
    for knob, seq in seqs.items():
        lt = lifetimes(p, seq) if seq is not None else None
        if lt is None:
            per_knob[knob] = "not runnable"
            continue
        per_knob[knob] = {"cost": lt.cost, "recomputed": len(lt.seq) - p.n,
                               "peak_bytes": (p.resident_units + lt.peak_units) * p.alignment}
        rows.append((lt.cost, lt.peak_units, knob == EAGER, knob, seq))
    if not rows:
        return Result("pytorch-budget", "error", backend="torch",
                      message="no knob's schedule is runnable (a recomputation after an in-place update)")
    # a trace made before this solve (the study's prepare, or an earlier budget) is not in its
    # solve time: the stats say so and how long it took
    stats = {"knobs": per_knob, "trace_shared": shared, "trace_seconds": trace_state(g, list(KNOBS))[1]}
    total = g.total_cost()
    for cost, peak, _, knob, seq in sorted(rows, key=lambda r: r[:3]):
        if peak > s.cap:
            continue
        # the trace may have spent the time limit: each fitting candidate still gets a placement
        left = max(1.0, (s.deadline - time.perf_counter()) / 2)
        got = place_sequence(p, seq, budget, "pytorch-budget", left, params.seed, params.threads,
                             {"activation_memory_budget": knob})
        if got is not None and got.need <= budget:
            return Result("pytorch-budget", "feasible", plan=got.plan, objective=got.cost, lower_bound=total,
                          gap=gap_of(got.cost, total), backend="torch",
                          stats={**stats, "activation_memory_budget": knob, "recomputed": got.recomputed,
                                 "placement": got.placement})
    # nothing fits: measure the lowest-peak schedule as placed without a cap
    _, peak, _, knob, seq = min(rows, key=lambda r: (r[1], r[0]))
    got = place_sequence(p, seq, budget, "pytorch-budget", max(1.0, s.deadline - time.perf_counter()),
                         params.seed, params.threads, {"activation_memory_budget": knob})
    if got is None:
        return Result("pytorch-budget", "infeasible", backend="torch", stats=stats,
                      message=f"no activation_memory_budget in 0..1 fits {budget} bytes "
                              f"(lowest minimal-lifetime peak {(p.resident_units + peak) * p.alignment} bytes)")
    rep = validate(g, got.plan)
    stats.update(activation_memory_budget=knob, measured_peak_bytes=rep.peak_bytes,
                 measured_top_bytes=got.need, measured_valid=rep.valid)
    return Result("pytorch-budget", "infeasible", backend="torch", stats=stats,
                  message=f"no activation_memory_budget in 0..1 fits: the lowest plan (knob {knob}) needs "
                          f"{got.need} bytes ({got.need / budget:.3f} of the budget {budget}), measured peak "
                          f"{rep.peak_bytes} bytes")
