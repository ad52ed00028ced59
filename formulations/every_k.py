"""Method ``checkpoint-every-k``: Chen et al.'s sqrt(n) checkpointing.

The outputs of every k-th forward op are saved (k = ceil(sqrt(n)) for n forward ops with
storage outputs); the backward recomputes each segment from the checkpoint before it, just
before its first backward reader (``formulations.keep_plans``). On a chain this is Chen et
al.'s schedule; on a DAG it is the plain generalisation (every k-th op in captured order, as
``torch.utils.checkpoint.checkpoint_sequential`` does), not their articulation-point search.
A plan over the budget is reported ``infeasible`` with its measured peak, not hidden.
"""
from __future__ import annotations

import math

from planner.graph import Graph
from planner.params import SolveParams
from planner.result import Result, gap_of

METHOD = "checkpoint-every-k"


def checkpoints(g: Graph, n_fwd: int, k: int | None = None) -> tuple[int, frozenset[int]]:
    """(k, tensor ids saved): the outputs of every k-th forward op that allocates storage."""
    ops = [o for o in g.ops[:n_fwd] if any(g.tensors[t].alias_of is None for t in o.outputs)]
    k = k or max(1, math.ceil(math.sqrt(len(ops))))
    saved = {t for i, o in enumerate(ops) if (i + 1) % k == 0 for t in o.outputs}
    return k, frozenset(saved)


def solve_every_k(g: Graph, budget: int, params: SolveParams) -> Result:
    from planner.validator import validate

    from .common import setup
    from .keep_plans import forward_ops, place_sequence, saved_sequence

    s = setup(METHOD, g, budget, params)
    if isinstance(s, Result):
        return s
    p = s.p
    n_fwd = forward_ops(g)
    if n_fwd == 0 or n_fwd == p.n:
        return Result(METHOD, "error", message=f"graph {g.name} has no forward/backward split to checkpoint")
    k, saved = checkpoints(g, n_fwd)
    seq = saved_sequence(p, n_fwd, saved)
    got = None if seq is None else place_sequence(p, seq, budget, METHOD, params.time_limit, params.seed,
                                                  params.threads, {"k": k})
    if got is None:
        return Result(METHOD, "error", message="the checkpointed schedule is not runnable or not placed")
    stats = {"k": k, "checkpoints": len(saved), "recomputed": got.recomputed, "placement": got.placement}
    if got.need > budget:
        rep = validate(g, got.plan)
        return Result(METHOD, "infeasible", stats={**stats, "measured_peak_bytes": rep.peak_bytes,
                                                   "measured_top_bytes": got.need, "measured_valid": rep.valid},
                      message=f"checkpointing every {k} ops needs {got.need} bytes ({got.need / budget:.3f} of "
                              f"the budget {budget}), measured peak {rep.peak_bytes} bytes")
    total = g.total_cost()
    return Result(METHOD, "feasible", plan=got.plan, objective=got.cost, lower_bound=total,
                  gap=gap_of(got.cost, total), stats=stats)
