"""Retention gaps solved as one CP-SAT model (Moccasin's idea: a value lives in at most two
intervals, so it is recomputed at most once), for graphs of plain values.

The greedy constructions (``keepset``, ``gapevict``) take one move at a time and stall on
random layered graphs, where every way down first goes up somewhere else. Here every value v
with uses u_0 (its producer) < u_1 < ... (stages reading it) may instead be dropped after
one use u_j and recomputed at a stage s up to the next use u_{j+1} (Boolean x[v, j, s], at
most one per value; s before u_{j+1} where the inputs are still live). The recomputation
needs each input w live at s: not inside w's dropped range (w may itself be recomputed at
s), and, past w's last use, w's life is extended to s (Booleans ext[w, t], monotone in t). Memory is counted per stage, every
interval over whole stages: at least what the sequence's minimal lifetimes hold, so a model
peak within the capacity is a sequence within it. The solver minimises the peak (``cap``
None) or, within ``cap``, the recomputation cost. The sequence (recomputations at the start
of their stage, in index order, then the stage's op) is in Checkmate's class.

Only for problems whose ops have one output each, with no views and no op that may not run
late (``None`` otherwise): Moccasin's own graphs and ``layered:N``.
"""
from __future__ import annotations

import logging
import time

from .problem import RematProblem

log = logging.getLogger(__name__)


def retention_applies(p: RematProblem) -> bool:
    """Does the model cover ``p`` (one output per op, no views, every op may run late)?"""
    lim = p.limit or (p.n,) * p.n
    return (all(len(o) == 1 for o in p.outs) and all(v.base is None and not v.in_resident for v in p.values)
            and all(lim[k] >= p.n for k in range(p.n)))


# share of the time for the model without early recomputations (smaller: solved quickly,
# then a hint for the full one)
LATE_SHARE = 0.5


def retention_sequence(p: RematProblem, cap: int | None, deadline: float, threads: int = 1,
                       seed: int = 0) -> list[int] | None:
    """Op sequence from the CP-SAT model (see the module docstring), or None (not a plain
    problem, no solution in time, or none within ``cap``). The model with recomputations at
    the next use only is solved first, in ``LATE_SHARE`` of the time; its solution is the hint
    of the full model, whose result wins when it is at least as good."""
    if not retention_applies(p):
        return None
    now = time.perf_counter()
    late = _solve(p, cap, now + LATE_SHARE * (deadline - now), threads, seed, False, None)
    full = _solve(p, cap, deadline, threads, seed, True, late[1] if late else None)
    got = [r for r in (late, full) if r is not None]
    if not got:
        return None
    return min(got, key=lambda r: r[2])[0]


def _solve(p: RematProblem, cap: int | None, deadline: float, threads: int, seed: int, early: bool,
           hint: set[tuple[int, int, int]] | None):
    """(sequence, chosen drops, objective) of one model, or None."""
    from ortools.sat.python import cp_model

    n, V = p.n, p.values
    size = [v.size for v in V]
    prod = [v.producer for v in V]
    uses: list[list[int]] = [[prod[v]] for v in range(len(V))]
    for k, rs in enumerate(p.reads):
        for v in rs:
            uses[v].append(k)
    req = set(p.required)
    for v in req:
        uses[v].append(n - 1)
    uses = [sorted(set(u)) for u in uses]
    last = [u[-1] for u in uses]
    m = cp_model.CpModel()
    # x[v, j, s]: v dropped after its use u_j, recomputed at the start of stage s (u_j + 2 <=
    # s <= u_{j+1}: early, where its inputs may still be live, or at the next use)
    x: dict[tuple[int, int, int], object] = {}
    out: dict[tuple[int, int], list] = {}   # (w, t) -> the x of w whose dropped range holds t
    for v in range(len(V)):
        if v in req or size[v] == 0:
            continue
        us = uses[v]
        mine = []
        for j in range(len(us) - 1):
            if us[j + 1] - us[j] < 2:  # nothing between two uses to free
                continue
            for s in range(us[j] + 2 if early else us[j + 1], us[j + 1] + 1):
                xv = x[v, j, s] = m.NewBoolVar(f"x{v}_{j}_{s}")
                mine.append(xv)
                for t in range(us[j] + 1, s):
                    out.setdefault((v, t), []).append(xv)
        if len(mine) > 1:
            m.AddAtMostOne(mine)
    ext: dict[tuple[int, int], object] = {}
    for (v, j, s), xv in x.items():
        for w in p.reads[prod[v]]:
            dropped = out.get((w, s))
            if dropped:  # w must be live at s: not inside one of its dropped ranges
                m.Add(sum(dropped) + xv <= 1)
            for t in range(last[w] + 1, s + 1):
                if (w, t) not in ext:
                    ext[w, t] = m.NewBoolVar(f"e{w}_{t}")
                m.AddImplication(xv, ext[w, t])
    for (w, t), e in ext.items():
        if (w, t + 1) in ext:
            m.AddImplication(ext[w, t + 1], e)
    base = [0] * n
    for v in range(len(V)):
        for t in range(prod[v], last[v] + 1):
            base[t] += size[v]
    terms: list[list[tuple[int, object]]] = [[] for _ in range(n)]
    for (v, t), xs in out.items():
        terms[t].extend((-size[v], xv) for xv in xs)
    for (w, t), e in ext.items():
        terms[t].append((size[w], e))
    top = max(base) if base else 0
    peak = m.NewIntVar(0, top + sum(size), "peak")
    for t in range(n):
        m.Add(base[t] + sum(c * b for c, b in terms[t]) <= peak)
    cost = sum(round(p.cost[prod[v]] * 1000) * xv for (v, _, _), xv in x.items())
    if cap is None:
        m.Minimize(peak)
    else:
        m.Add(peak <= cap)
        m.Minimize(cost)
    if hint is not None:
        for key, xv in x.items():
            m.AddHint(xv, key in hint)
    if time.perf_counter() >= deadline:
        return None
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.1, deadline - time.perf_counter())
    solver.parameters.num_workers = max(1, threads)
    solver.parameters.random_seed = seed
    status = solver.Solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        log.debug("retention: %s", solver.StatusName(status))
        return None
    rec: list[list[int]] = [[] for _ in range(n)]
    chosen = {key for key, xv in x.items() if solver.Value(xv)}
    for v, _, s in chosen:
        rec[s].append(prod[v])
    log.debug("retention: %s peak %d, %d recomputations", solver.StatusName(status),
              solver.Value(peak), sum(map(len, rec)))
    seq: list[int] = []
    for t in range(n):
        seq.extend(sorted(rec[t]))
        seq.append(t)
    return seq, chosen, solver.ObjectiveValue()
