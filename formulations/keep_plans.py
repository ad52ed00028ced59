"""Plans from a set of saved forward values: the forward runs once, the backward recomputes.

What a user picks instead of a planner (PyTorch's partitioner, checkpointing every k-th
activation) fixes which forward values are *saved* for the backward; every other forward value
the backward reads is recomputed from saved ones (or residents) just before its first backward
reader, each op once, in index order (Checkmate's schedule class), and stays live until its last
reader. The sequence then gets the planner's minimal lifetimes and addresses
(``formulations.schedule``), so its memory is what the validator measures.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from planner.graph import Graph
from planner.plan import Plan

from .problem import RematProblem, recompute_stage

log = logging.getLogger(__name__)


def forward_ops(g: Graph) -> int:
    """Number of leading forward ops (the rest is backward/update): captured ops carry
    ``meta['phase']``, synthetic ones the target "fwd"."""
    n = 0
    for o in g.ops:
        phase = o.meta.get("phase") or ("fwd" if o.target == "fwd" else "bwd")
        if phase != "fwd":
            break
        n += 1
    return n


def saved_sequence(p: RematProblem, n_fwd: int, saved: frozenset[int]) -> list[int] | None:
    """Op sequence: ops 0..n_fwd-1 once, then each later op preceded by the recomputation of
    the forward values it reads that are neither saved nor recomputed already. ``saved``:
    tensor ids (a saved view keeps its base). None when a recomputation is not allowed
    (``p.limit``)."""
    V = p.values
    avail: set[int] = set()
    for v, val in enumerate(V):
        if val.producer >= n_fwd or val.tensor in saved or v in p.required:
            avail.add(v)
    for v, val in enumerate(V):  # a saved view holds its base
        if v in avail and val.base is not None and val.producer < n_fwd:
            avail.add(val.base)
    limit = p.limit or (p.n,) * p.n
    seq = list(range(n_fwd))
    for t in range(n_fwd, p.n):
        stage = recompute_stage(p, t, avail, limit)
        if stage is None:
            return None
        for k in stage:
            seq.append(k)
            avail.update(p.outs[k])
        seq.append(t)
    return seq


@dataclass(frozen=True)
class Placed:
    plan: Plan           # placed plan (validated by the caller)
    need: int            # bytes: residents plus the address top
    peak_units: int      # minimal-lifetime peak of the sequence (units above the residents)
    cost: float          # compute cost of the sequence
    recomputed: int      # op computations beyond each op once
    placement: str       # what placed it


def place_sequence(p: RematProblem, seq: list[int], budget: int, method: str, time_limit: float,
                   seed: int = 0, threads: int = 1, meta: dict | None = None) -> Placed | None:
    """Lifetimes and addresses for ``seq``: within ``budget`` when its peak fits there (None when
    that placement fails), else at the lowest top the allocator finds (the plan then carries
    its own need as its budget, so that it validates and its overrun is measured)."""
    from .constructive import place_fitting
    from .schedule import build_plan

    cap = p.capacity(budget)
    end = time.perf_counter() + time_limit
    placed = place_fitting(p, seq, cap, time_limit, seed, threads) if cap >= 0 else None
    if placed is None:
        placed = place_fitting(p, seq, None, max(0.5, end - time.perf_counter()), seed, threads)
    if placed is None:
        return None
    lt, offs, top, solver = placed
    need = (p.resident_units + top) * p.alignment
    plan = build_plan(p, lt, offs, max(budget, need), method, {"placement": solver, **(meta or {})})
    return Placed(plan, need, lt.peak_units, lt.cost, len(lt.seq) - p.n, solver)
