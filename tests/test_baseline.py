"""Method `none`: the plain schedule and its placements."""
import pytest

from planner.analysis import baseline_peak
from planner.params import SolveParams
from planner.registry import solve
from planner.synthetic import chain, layered


def test_exact_placement_when_greedy_misses_the_peak():
    # first-fit and greedy-by-size miss the peak of layered:20:0; the exact DSA search fits it exactly
    g = layered(20, 0)
    res = solve(g, baseline_peak(g), "none", SolveParams(time_limit=20))
    assert res.status == "optimal" and res.validation["valid"]
    assert res.stats["placement"] == "exact DSA search"
    assert res.validation["peak_address"] <= baseline_peak(g)


def test_cheap_placement_first():
    g = chain(16)
    res = solve(g, 2 * baseline_peak(g), "none")
    assert res.stats["placement"] == "online first-fit"


@pytest.mark.parametrize("g", [chain(8), layered(60, 4)], ids=lambda g: g.name)
def test_below_peak_is_infeasible_with_reason(g):
    res = solve(g, baseline_peak(g) - 512, "none")
    assert res.status == "infeasible" and "more than the budget" in res.message and res.plan is None
