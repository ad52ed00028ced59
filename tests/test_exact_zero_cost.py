"""``exact`` on graphs whose ops all cost 0 (views, free ops): every plan costs 0, so a plan
that fits is optimal; the method must answer with a proper Result, never divide by the total
cost (it did: a ZeroDivisionError in the progress line and in gap eviction's gain per cost)."""
from __future__ import annotations

from dataclasses import replace

from formulation_graphs import random_graph

from planner.analysis import baseline_peak, min_feasible_budget
from planner.graph import make_graph
from planner.params import SolveParams
from planner.registry import solve
from planner.result import STATUSES


def _zero_cost(seed: int, n: int):
    g = random_graph(seed, n)
    return make_graph(f"zero:{seed}", list(g.tensors), [replace(op, cost=0.0) for op in g.ops], list(g.required))


def test_exact_answers_zero_cost_graphs_with_a_proper_result():
    planned = 0
    for seed in range(6):
        g = _zero_cost(seed, 6)
        lo, hi = min_feasible_budget(g).bytes, baseline_peak(g)
        budget = (lo + hi) // 2  # below the plain schedule's peak: recomputation may be needed
        res = solve(g, budget, "exact", SolveParams(time_limit=10))
        assert res.status in STATUSES and res.status != "error", res.message
        if res.has_plan:
            planned += 1
            assert res.status == "optimal" and res.objective == 0.0 and res.lower_bound == 0.0
            assert res.validation["valid"]
        else:  # no plan: the published MILP agrees that none fits
            assert res.status == "infeasible"
            assert solve(g, budget, "checkmate", SolveParams(time_limit=10)).status == "infeasible"
    assert planned  # some budgets fit: the checks on plans ran


def test_every_formulation_answers_a_graph_without_ops_as_optimal():
    """The shared prologue (``formulations.common.setup``): nothing to schedule is the plain
    schedule, optimal at cost 0 (lp and milp-joint said "timeout" here before)."""
    from planner.graph import Tensor

    g = make_graph("empty", [Tensor(0, 512, "input", None, name="x")], [], [])
    for method in ("exact", "checkmate", "lp", "milp-joint"):
        res = solve(g, 1024, method, SolveParams(time_limit=5))
        assert res.status == "optimal" and res.objective == 0.0 and res.validation["valid"], (method, res)
    assert solve(g, 100, "exact", SolveParams(time_limit=5)).status == "infeasible"  # the input alone is over
