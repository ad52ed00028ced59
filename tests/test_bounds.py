"""The knapsack lower bound: never above any plan's cost, and not trivial on a real graph."""
from __future__ import annotations

import math

import pytest
from formulation_graphs import brute_force, random_graph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulations.bounds import closure_bound, knapsack_bound
from formulations.problem import extract
from planner.analysis import baseline_peak, min_feasible_budget
from planner.models import load_model
from planner.params import SolveParams
from planner.registry import solve


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 5), frac=st.floats(0.0, 1.0))
def test_bound_never_exceeds_the_brute_force_optimum(seed, n, frac):
    g = random_graph(seed, n)
    peak, lo = baseline_peak(g), min_feasible_budget(g).bytes
    budget = int(lo + frac * (peak - lo))
    p = extract(g)
    kb, _ = knapsack_bound(p, p.capacity(budget))
    cb, _, _ = closure_bound(p, p.capacity(budget))
    # the closure LP holds the knapsack's rows and more, at every op
    assert cb >= kb - 1e-9 or cb == math.inf
    cost, _plan = brute_force(g, budget)
    if cost is None:
        return
    assert math.isfinite(kb) and math.isfinite(cb), "a bound claims infeasible where a plan exists"
    assert sum(p.cost) + cb <= cost * (1 + 1e-9) + 1e-9


# every (heuristic, ratio) that plans unet-tiny (dtr finds none at 0.5 and 0.6)
@pytest.mark.parametrize("method,ratio", [("coop", 0.5), ("coop", 0.6), ("coop", 0.8), ("dtr", 0.8),
                                          ("dte", 0.5), ("dte", 0.6), ("dte", 0.8)])
def test_bound_below_every_heuristic_plan(method, ratio):
    g = load_model("unet-tiny")
    budget = int(ratio * baseline_peak(g))
    res = solve(g, budget, method, SolveParams())
    assert res.has_plan, f"{method} found no plan for unet-tiny at {ratio}: {res.message}"
    p = extract(g)
    kb, _ = knapsack_bound(p, p.capacity(budget))
    cb, _, _ = closure_bound(p, p.capacity(budget))
    assert sum(p.cost) + max(kb, cb) <= res.objective * (1 + 1e-9)


def test_bound_is_informative_on_unet_and_grows_as_the_budget_shrinks():
    g = load_model("unet")
    p = extract(g)
    peak = baseline_peak(g)
    vals = [knapsack_bound(p, p.capacity(int(r * peak)))[0] / sum(p.cost) for r in (0.7, 0.5, 0.4)]
    assert vals[0] > 0.02 and vals == sorted(vals)


def test_closure_bound_on_unet_is_tighter_than_the_knapsack():
    g = load_model("unet")
    p = extract(g)
    cap = p.capacity(int(0.5 * baseline_peak(g)))
    kb, _ = knapsack_bound(p, cap)
    cb, _, solved = closure_bound(p, cap, max_stages=30)
    assert solved == 30 and cb > 1.3 * kb


def test_exact_reports_at_least_the_knapsack_bound():
    g = load_model("unet-tiny")
    res = solve(g, int(0.5 * baseline_peak(g)), "exact", SolveParams(time_limit=5))
    assert res.lower_bound is not None and res.lower_bound >= res.stats["knapsack_bound"] * (1 - 1e-12)
    assert res.lower_bound > sum(extract(g).cost)
