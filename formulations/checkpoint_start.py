"""A plan read into the checkpoint relaxation's variables, as a MIP start.

Every row of the relaxation (``formulations.checkpoint_model``) holds for the values read off
any plan; so a validated plan's op sequence gives a solution of the relaxation: ``r[i, k]`` = 1
when op k runs again between the first runs of checkpoints t_i and t_{i+1}, ``L[i, v]`` = 1
when v is live at the first run of t_i. Its objective counts each (interval, op) once, so it
is at most the plan's own recomputation cost. Why: where HiGHS finds no solution of its own
below the incumbent's cutoff (large graphs whose relaxation MIP is far from any plan), a start
gives it one to improve on, and the later phases a solution to read windows and plans off.
"""
from __future__ import annotations

from .checkpoint_model import Built
from .problem import RematProblem
from .schedule import lifetimes


def plan_start(p: RematProblem, built: Built, seq: list[int]) -> dict[int, float] | None:
    """Column -> value of ``built``'s r and L columns read off the op sequence ``seq`` (first
    runs in captured order); None when ``seq`` does not run (``schedule.lifetimes``) or does
    not run every checkpoint. Columns the plan does not determine (views whose liveness the
    sequence leaves open, the auxiliary columns) are left out: HiGHS completes a partial start."""
    lt = lifetimes(p, seq)
    if lt is None:
        return None
    order = lt.seq
    first: dict[int, int] = {}
    for pos, k in enumerate(order):
        first.setdefault(k, pos)
    cps = built.checkpoints
    if any(t not in first for t in cps):
        return None
    moments = [first[t] for t in cps]
    start: dict[int, float] = {}
    for i, ri in enumerate(built.r):
        lo = moments[i]
        hi = moments[i + 1] if i + 1 < len(moments) else len(order)
        again = {k for pos, k in enumerate(order[lo + 1:hi], lo + 1) if first[k] < pos}
        for k, c in ri.items():
            start[c] = 1.0 if k in again else 0.0
    live: list[set[int]] = [set() for _ in cps]
    for v, lower, upper, _size in lt.blocks:
        for i, at in enumerate(moments):
            if lower <= at < upper:
                live[i].add(v)
    V = p.values
    for i, li in enumerate(built.L):
        for v, c in li.items():
            if c < 0:
                continue  # a constant of the model
            if V[v].size == 0 and V[v].base is not None:
                continue  # a view: the sequence says when its storage lives, not when it does
            start[c] = 1.0 if v in live[i] else 0.0
    return start


def start_cost(p: RematProblem, built: Built, start: dict[int, float]) -> float:
    """The relaxation's objective at ``start`` (the cost of its r columns), unscaled."""
    return sum(float(p.cost[k]) for ri in built.r for k, c in ri.items() if start.get(c, 0.0) > 0.5)
