"""A validated plan read into the checkpoint relaxation (``formulations.checkpoint_start``) is a
solution of it: with its columns fixed the MIP stays feasible, at most the plan's own
recomputation cost; and the MIP given it as a start never reports a bound above it."""
from __future__ import annotations

import random
import time

import numpy as np
from formulation_graphs import random_graph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulations.backends import power_of_two_scale, run_status
from formulations.checkpoint_model import build_relaxation
from formulations.checkpoint_start import plan_start, start_cost
from formulations.checkpoints import lp_then_mip
from formulations.problem import extract
from planner.analysis import baseline_peak, min_feasible_budget
from planner.params import SolveParams
from planner.registry import solve
from planner.result import Status


def _planned(seed: int, n: int, frac: float):
    """A random graph, a budget between its minimum and its peak, and a validated plan there."""
    g = random_graph(seed, n)
    peak, lo = baseline_peak(g), min_feasible_budget(g).bytes
    budget = int(lo + frac * (peak - lo))
    res = solve(g, budget, "exact", SolveParams(time_limit=10))
    if not res.has_plan:
        return None
    p = extract(g)
    seq = [s.ref for s in res.plan.steps if s.kind == "compute"]
    return p, p.capacity(budget), seq


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(5, 9), frac=st.floats(0.2, 0.8))
def test_a_plan_read_into_the_relaxation_is_a_solution(seed, n, frac):
    import highspy

    got = _planned(seed, n, frac)
    if got is None:
        return
    p, cap, seq = got
    rnd = random.Random(seed)
    cps = sorted(rnd.sample(range(p.n), rnd.randint(1, p.n)))
    built = build_relaxation(p, cap, cps, 1, 0)
    if isinstance(built, tuple):
        return  # decided without columns
    start = plan_start(p, built, seq)
    assert start is not None
    plan_recompute = sum(p.cost[k] for k in seq) - sum(p.cost)
    cost = start_cost(p, built, start)
    assert cost <= plan_recompute + 1e-9
    h = built.h
    nc = h.getNumCol()
    h.changeColsIntegrality(nc, np.arange(nc, dtype=np.int32), np.full(nc, highspy.HighsVarType.kInteger))
    cols = np.fromiter(start.keys(), dtype=np.int32, count=len(start))
    vals = np.fromiter(start.values(), dtype=np.float64, count=len(start))
    h.changeColsBounds(len(cols), cols, vals, vals)
    st_ = run_status(h, 30.0)
    assert st_ == Status.OPTIMAL, f"the plan's values violate the relaxation ({st_})"
    obj = h.getInfo().objective_function_value / power_of_two_scale(p.cost)
    assert abs(obj - cost) <= 1e-9 * max(1.0, cost)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(5, 9), frac=st.floats(0.2, 0.6))
def test_the_mip_from_a_start_finds_a_solution_at_most_the_start(seed, n, frac):
    got = _planned(seed, n, frac)
    if got is None:
        return
    p, cap, seq = got
    cps = list(range(0, p.n, 2))
    loose = 2.0 * (sum(p.cost[k] for k in seq) - sum(p.cost)) + 1.0  # a cutoff the start lies below
    out = lp_then_mip(p, cap, cps, lp_time=10.0, deadline=time.perf_counter() + 20.0,
                      cutoff=loose, start=seq)
    if "mip" not in out:
        return  # the LP alone decided
    assert "start" in out
    mip, _status = out["mip"]
    assert out.get("runs") is not None, "the MIP lost the solution it was started from"
    assert mip <= out["start"] + 1e-9 * max(1.0, out["start"])
