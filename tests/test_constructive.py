"""The constructive upper bound on the minimum feasible budget and the ``constructive`` method."""
import json
import subprocess
import sys

import pytest
from graphgen import dags
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulations.constructive import construct, constructive_plan, feasible_upper_bound
from formulations.keepset import descend
from formulations.problem import extract
from planner.analysis import baseline_peak, min_feasible_budget
from planner.params import SolveParams
from planner.registry import solve
from planner.synthetic import chain, layered, ushape

_graphs = st.one_of(
    dags(max_ops=10),
    st.builds(layered, st.integers(1, 25), st.integers(0, 50)),
    st.builds(chain, st.integers(1, 6)),
)


def _above(ub: int, frac: float) -> int:
    return ub + int(frac * ub)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=_graphs, frac=st.sampled_from([0.0, 0.0, 0.05, 0.3]))
def test_lower_never_exceeds_upper_and_constructive_plans_above_it(g, frac):
    c = feasible_upper_bound(g, time_limit=5.0)
    assert c is not None  # the plain schedule is the descent's first state: always placed
    assert min_feasible_budget(g).bytes <= c.budget
    res = solve(g, _above(c.budget, frac), "constructive", SolveParams(time_limit=20.0))
    assert res.status == "feasible", res.message
    assert res.validation["valid"] and res.validation["peak_bytes"] <= _above(c.budget, frac)


# exact runs the construction when no other source plans: at or above the upper bound it plans
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=_graphs, frac=st.sampled_from([0.0, 0.05, 0.3]))
def test_exact_plans_at_or_above_the_upper_bound(g, frac):
    c = feasible_upper_bound(g, time_limit=5.0)
    res = solve(g, _above(c.budget, frac), "exact", SolveParams(time_limit=30.0))
    assert res.status in ("optimal", "feasible"), res.message
    assert res.validation["valid"]


def test_descent_lowers_the_peak_and_keeps_first_computations_in_order():
    g = chain(12)
    p = extract(g)
    states = list(descend(p, deadline=1e18))
    assert len(states) > 1
    keys = [(s.peak, s.at_peak, s.cost) for s in states]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == len(keys)
    assert states[0].cost == pytest.approx(g.total_cost())  # keep everything: the plain schedule
    for s in states:  # Checkmate's class: first computations follow the captured order
        firsts = list(dict.fromkeys(s.seq))
        assert firsts == sorted(firsts) and set(firsts) == set(range(p.n))


def test_upper_bound_beats_the_plain_schedule_where_recomputation_pays():
    g = ushape(3)
    c = feasible_upper_bound(g, time_limit=10.0)
    assert min_feasible_budget(g).bytes <= c.budget < baseline_peak(g)
    plan = constructive_plan(g, c.budget)
    assert plan is not None and plan.budget == c.budget


def test_below_the_lower_bound_is_proven_infeasible_and_between_is_not_claimed():
    g = layered(40, 2)
    lb = min_feasible_budget(g).bytes
    res = solve(g, lb - 1, "constructive", SolveParams(time_limit=5.0))
    assert res.status == "infeasible" and "minimum feasible" in res.message
    assert construct(g, lb - 1) is None


def test_cli_info_reports_both_bounds_and_solve_exits_3_without_a_plan():
    r = subprocess.run([sys.executable, "-m", "planner", "info", "--model", "layered:30:1", "--json",
                        "--upper-limit", "5"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["min_feasible_bytes"] <= d["upper_feasible_bytes"]
    assert d["upper_feasible_ratio"] == pytest.approx(d["upper_feasible_bytes"] / d["baseline_peak_bytes"])
    r = subprocess.run([sys.executable, "-m", "planner", "info", "--model", "layered:30:1",
                        "--upper-limit", "5"], capture_output=True, text=True)
    assert r.returncode == 0 and "known feasible" in r.stdout
    # between the bounds with no time to construct: no plan, reported as a timeout, exit 3
    ratio = (d["min_feasible_ratio"] + d["upper_feasible_ratio"]) / 2
    r = subprocess.run([sys.executable, "-m", "planner", "solve", "--model", "layered:30:1", "--ratio",
                        f"{ratio:.6f}", "--method", "constructive", "--time-limit", "0.01", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 3, r.stderr
    assert json.loads(r.stdout)["status"] == "timeout"
