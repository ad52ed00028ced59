"""Property tests of the simulator and the four heuristics on random small graphs with
views, in-place ops, multi-output ops and an optimizer step (tests/graphgen.py)."""
from __future__ import annotations

import pytest
from graphgen import random_graph
from hypothesis import event, given, settings
from hypothesis import strategies as st

from planner.analysis import baseline_peak, min_feasible_budget
from planner.params import SolveParams
from planner.registry import solve

CONFIGS = {
    "coop": SolveParams(),
    "coop-no-window": SolveParams(sliding_window=False),
    "coop-no-partition": SolveParams(partition=False),
    "coop-no-inplace": SolveParams(inplace=False),
    "dtr": SolveParams(),
    "dte": SolveParams(),
    "dtr-ideal": SolveParams(),
    "dtr-ideal-uf": SolveParams(union_find=True),
    "coop-best-fit": SolveParams(alloc_policy="best-fit"),
}


def method_of(name: str) -> str:
    return name.split("-no-")[0].replace("-best-fit", "").replace("-uf", "")


graphs = st.builds(lambda seed, n, p, opt: random_graph(seed, n, inplace=True, params=p, optimizer=opt),
                   st.integers(0, 10_000), st.integers(3, 16), st.integers(0, 3), st.booleans())


@settings(max_examples=250, deadline=None)
@given(g=graphs, ratio=st.floats(0.3, 1.3), config=st.sampled_from(sorted(CONFIGS)))
def test_plans_validate_cost_at_least_baseline_and_deterministic(g, ratio, config):
    """Every plan passes the independent validator (registry.solve turns an invalid one into
    status error), costs at least the baseline, and the same run gives the same plan."""
    budget = max(int(ratio * baseline_peak(g)), min_feasible_budget(g).bytes)
    params = CONFIGS[config]
    res = solve(g, budget, method_of(config), params)
    assert res.status in ("feasible", "infeasible"), res.message
    event(f"{config}: {res.status}")
    if res.status == "infeasible":
        assert res.message and res.plan is None
        return
    v = res.validation
    assert v["valid"], v["violations"]
    assert v["compute_cost"] >= g.total_cost() - 1e-9
    assert v["overhead"] >= -1e-12
    assert v["peak_address"] <= budget
    assert res.stats["recomputations"] == v["recomputations"]
    again = solve(g, budget, method_of(config), params)
    assert again.plan == res.plan and again.stats["evictions"] == res.stats["evictions"]


# Configurations whose allocator places every block at the lowest address that fits
# (first-fit from the low end): a run that never fails an allocation with unlimited memory
# makes exactly the same choices at any budget at least as large as its highest address.
LOW_FIRST_FIT = ("dtr", "dte", "coop-no-partition", "coop-no-partition-no-inplace")


def params_for(config: str) -> SolveParams:
    return SolveParams(partition="no-partition" not in config, inplace="no-inplace" not in config)


@settings(max_examples=150, deadline=None)
@given(g=graphs, extra=st.integers(0, 64), config=st.sampled_from(LOW_FIRST_FIT))
def test_no_overhead_with_fragmentation_slack(g, extra, config):
    """Overhead is 0 at any budget >= baseline peak + slack, where the slack is what the
    allocator's own fragmentation (and, for DTR/DTE, out-of-place in-place ops) adds: the
    highest address the same run reaches with unlimited memory."""
    method = config.split("-no-")[0]
    params = params_for(config)
    unlimited = solve(g, 1 << 40, method, params)
    assert unlimited.status == "feasible" and unlimited.stats["evictions"] == 0
    need = unlimited.stats["sim_peak_address"]
    slack = need - baseline_peak(g)
    if method == "coop" and params.inplace:
        assert unlimited.validation["peak_bytes"] <= baseline_peak(g)  # only fragmentation adds
    budget = baseline_peak(g) + max(slack, 0) + extra * 512
    res = solve(g, budget, method, params)
    assert res.status == "feasible", res.message
    assert res.validation["overhead"] == 0.0 and res.stats["evictions"] == 0


@settings(max_examples=100, deadline=None)
@given(g=graphs, extra=st.integers(0, 64))
def test_dtr_ideal_no_recompute_at_its_scalar_peak(g, extra):
    """dtr-ideal's scalar memory has no fragmentation: at a budget >= the live-bytes peak of
    its own unlimited run (the baseline peak when the graph has no in-place ops, which DTR
    copies), it never recomputes."""
    unlimited = solve(g, 1 << 40, "dtr-ideal")
    assert unlimited.status == "feasible"
    need = unlimited.stats["sim_peak_bytes"]
    if not any(op.mutated for op in g.ops):
        assert need == baseline_peak(g)
    res = solve(g, need + extra * 512, "dtr-ideal")
    assert res.stats["recomputations"] == 0 and res.stats["evictions"] == 0


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_synthetic_chain_runs(config):
    from planner.budget import budget_for
    from planner.synthetic import chain

    g = chain(24)
    res = solve(g, budget_for(g, 0.5), method_of(config), CONFIGS[config])
    assert res.status == "feasible", res.message
    assert res.validation["valid"] and res.validation["overhead"] > 0
