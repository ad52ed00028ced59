"""The two fragmentation samplings of the simulator: free/pool before each evicting allocation
(ours) and after its eviction and placement (OneFlow Coop's), on generated graphs."""
from __future__ import annotations

from graphgen import dags
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.analysis import baseline_peak, min_feasible_budget
from planner.params import SolveParams
from planner.registry import solve


@settings(max_examples=40, deadline=None)
@given(dags(max_ops=14), st.sampled_from(("coop", "dte", "dtr")), st.floats(0.3, 1.0))
def test_after_eviction_sample_is_a_fraction(g, method, ratio):
    budget = max(int(ratio * baseline_peak(g)), min_feasible_budget(g).bytes)
    res = solve(g, budget, method, SolveParams())
    s = res.stats
    if "evicting_allocations" not in s:
        return
    after = s["fragmentation_after_eviction"]
    assert 0.0 <= after <= 1.0
    if s["evicting_allocations"] == 0:
        assert after == 0.0 and s["fragmentation_sim"] == 0.0


def test_unet_reports_both():
    from planner.models import load_model

    g = load_model("unet-tiny")
    res = solve(g, int(0.5 * baseline_peak(g)), "coop", SolveParams())
    s = res.stats
    assert s["evicting_allocations"] > 0
    assert 0.0 <= s["fragmentation_after_eviction"] <= 1.0 and 0.0 < s["fragmentation_sim"] <= 1.0
