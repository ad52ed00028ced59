"""exact.refine, the loop that tightens the checkpoint relaxation until its plan fits (run by
``exact`` only on large graphs, so exercised here directly on small ones): whatever it returns
validates, its bound never passes the brute-force optimum, and a plan that meets the bound is
that optimum. Runs with and without an incumbent (with one, the guided MILP goes first)."""
from __future__ import annotations

import time
from dataclasses import replace

import pytest
from formulation_graphs import brute_force, budget_case
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulations.bounds import tight_ops
from formulations.checkpoints import lp_then_mip
from formulations.exact import DEFAULT
from formulations.exact.refine import refine
from formulations.exact.state import Context, RelaxationState
from formulations.greedy import greedy_plan
from formulations.schedule import build_plan
from formulations.validator_bridge import validated
from planner.params import SolveParams
from planner.progress import Progress
from planner.result import Result
from planner.validator import validate


def _greedy_incumbent(g, p, cap: int, budget: int) -> Result | None:
    got = greedy_plan(p, cap, 5.0)
    if got is None:
        return None
    lt, offs, _ = got
    res = validated(g, Result("greedy", "feasible", plan=build_plan(p, lt, offs, budget, "exact"), objective=lt.cost))
    return res if res.has_plan else None


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 5), frac=st.floats(0.0, 0.6),
       with_incumbent=st.booleans())
def test_refine_returns_valid_plans_and_bounds_below_the_optimum(seed, n, frac, with_incumbent):
    g, budget, p, cap = budget_case(seed, n, frac)
    best, _ = brute_force(g, budget)
    tight = [t for _, t in tight_ops(p, cap)]
    if not tight:
        return
    # one checkpoint: a loose relaxation, so that the loop has something to tighten
    out = lp_then_mip(p, cap, tight[:1], lp_time=10, deadline=time.perf_counter() + 20)
    if out.get("runs") is None:
        return
    inc = _greedy_incumbent(g, p, cap, budget) if with_incumbent else None
    total = float(sum(p.cost))
    bound0 = total + out["mip"][0]
    stats: dict = {"incumbent_costs": {}}
    # the loop runs while more than refine_min_s is left: a shorter floor keeps examples short
    ctx = Context.make(g, budget, SolveParams(time_limit=8), replace(DEFAULT, refine_min_s=0.5), Progress("exact"), p)
    r = refine(ctx, inc, bound0, RelaxationState(solution=(out["checkpoints"], out["runs"])),
               time.perf_counter() + 8, stats)
    got, bound = r.plan, r.bound
    if best is None:  # no plan in Checkmate's class (the minimum feasible budget allows others)
        assert got is None and inc is None
        return
    tol = 1e-9 * max(1.0, total)
    assert bound0 <= bound + tol
    assert bound <= best + tol, f"bound {bound} passes the optimum {best}"
    if inc is not None:
        assert got is not None and got.objective <= inc.objective + tol
    if got is not None:
        assert validate(g, got.plan).valid
        assert got.objective >= best - tol
        if got.objective <= bound * (1 + 1e-9):
            assert got.objective == pytest.approx(best)
