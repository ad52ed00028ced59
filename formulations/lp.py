"""Method ``lp``: Checkmate's LP relaxation (a lower bound) + two-phase rounding.

The relaxation of the published model is solved at the budget (its value is a lower bound on
the remat optimum, hence on the joint optimum) and, as in Checkmate's code, also at 0.9 x the
budget to leave room for rounding. Two-phase rounding: round S (thresholds 0.1 .. 0.9, then a
few seeded randomized roundings), recompute the minimal R that makes that S valid (every op
of a stage computed when an input is neither kept nor computed earlier in the stage; every
value kept into the next stage computed if not kept), derive minimal lifetimes, keep the
cheapest schedule that fits; the DSA solver places it.
"""
from __future__ import annotations

import random
import time

import numpy as np

from planner.graph import Graph
from planner.params import SolveParams
from planner.result import Result, Status

from .backends import solve_highs
from .common import Placed, plan_result, published_model, setup
from .model import build
from .problem import RematProblem
from .schedule import lifetimes, place, stage_sequence


def minimal_r(p: RematProblem, keep: list[set[int]]) -> list[list[int]]:
    """Stages (0..n, the last one computing no new op) with the fewest computations making
    the kept sets ``keep[t]`` (values kept into stage t, t = 0..n+1; keep[n+1] = values
    required at the end) valid. ``keep`` is extended where validity needs it: an op may not
    run after its ``limit`` stage (it reads a resident that an in-place write has replaced),
    so when a stage would need it, its outputs are kept into that stage instead, which the
    stage before must then provide. Stages are processed last to first so that each one sees
    what the later ones added to the sets it provides."""
    V = p.values
    n = p.n
    lim = p.limit or (n,) * n
    stages: list[list[int]] = [[] for _ in range(n + 1)]
    for t in range(n, -1, -1):
        while True:
            need = {t} if t < n else set()
            # values kept into t+1 that are not kept into t must be (re)computed in stage t
            for v in keep[t + 1]:
                if v not in keep[t] and V[v].producer <= t:
                    need.add(V[v].producer)
            order = sorted(need, reverse=True)
            done: set[int] = set()
            while order:
                c = order.pop(0)
                if c in done:
                    continue
                done.add(c)
                for v in p.reads[c]:
                    if v not in keep[t] and V[v].producer not in done:
                        order.append(V[v].producer)
                        order.sort(reverse=True)
            late = [c for c in done if c != t and lim[c] < t]
            if not late:
                break
            for c in late:  # not allowed here: keep its outputs into stage t
                keep[t].update(p.outs[c])
        stages[t] = sorted(done)
    return stages


def solve_lp(g: Graph, budget: int, params: SolveParams) -> Result:
    s = setup("lp", g, budget, params)
    if isinstance(s, Result):
        return s
    p, cap, deadline = s.p, s.cap, s.deadline
    m = published_model("lp", p, cap)
    if isinstance(m, Result):
        return m
    out = solve_highs(m, params, relax=True, time_limit=0.5 * params.time_limit)
    if out.status == Status.INFEASIBLE:
        return Result("lp", "infeasible", backend="highs-lp", message="LP relaxation infeasible")
    bound = out.objective if out.status == Status.OPTIMAL else None
    stats = {"lp_bound": bound, "lp_seconds": out.seconds, "model": dict(m.stats)}
    # (model, LP solution) pairs to round: the budget's and, as in Checkmate's code, 0.9 x it;
    # either may be missing (time limit) without losing the other
    sols = [] if out.x is None else [(m, out.x)]
    m90 = build(p, int(0.9 * cap), published=True)
    if m90 is not None and time.perf_counter() < deadline:
        o90 = solve_highs(m90, params, relax=True, time_limit=max(0.1, 0.25 * (deadline - time.perf_counter())))
        if o90.x is not None:
            sols.append((m90, o90.x))
    rng = random.Random(params.seed)
    best = None
    tried = 0
    for model, x in sols:
        svals = {key: x[c] for key, c in model.S.items()}
        rules = [("thr", th) for th in np.arange(0.1, 1.0, 0.1)] + [("rand", i) for i in range(8)]
        for kind, arg in rules:
            if time.perf_counter() > deadline:
                break
            keep = [set() for _ in range(p.n + 2)]
            keep[p.n + 1] = set(p.required)
            for (t, v), val in svals.items():
                if (val >= arg) if kind == "thr" else (rng.random() < val):
                    keep[t].add(v)
            stages = minimal_r(p, keep)
            lt = lifetimes(p, stage_sequence(stages))
            tried += 1
            if lt is None or lt.peak_units > cap:
                continue
            if best is not None and lt.cost >= best.cost:
                continue
            best = lt
    stats["roundings"] = tried
    if best is None:
        return Result("lp", "timeout", lower_bound=bound, backend="highs-lp", stats=stats,
                      message="no rounding of the LP fits the budget")
    pl = place(best, cap, max(0.5, deadline - time.perf_counter()), params.seed, params.threads)
    if pl.offsets is None:
        return Result("lp", "timeout", lower_bound=bound, backend="highs-lp", stats=stats,
                      message=f"best rounded schedule (cost {best.cost:.6g}) not placed (DSA {pl.status})")
    return plan_result("lp", p, Placed(best, pl.offsets, "placed", pl.solver), budget, "feasible", bound,
                       "highs-lp+dsa", stats)
