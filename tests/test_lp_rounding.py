"""``lp``: the rounding keeps every LP solution it has, also when the one at the budget is missing."""
from dataclasses import replace

import formulations.lp as lp_mod
from planner.analysis import baseline_peak, min_feasible_budget
from planner.models import load_model
from planner.params import SolveParams
from planner.registry import solve


def _budget(g, frac):
    lo, hi = min_feasible_budget(g).bytes, baseline_peak(g)
    return lo + int(frac * (hi - lo))


def test_the_09_solution_is_rounded_when_the_budget_lp_has_none(monkeypatch):
    g = load_model("chain:12")
    b = _budget(g, 0.5)
    params = SolveParams(time_limit=20)
    full = solve(g, b, "lp", params)
    assert full.has_plan, full.message

    real = lp_mod.solve_highs
    calls = []

    def first_without_solution(m, params, **kw):
        out = real(m, params, **kw)
        calls.append(out.status)
        if len(calls) == 1:  # the LP at the budget: as if stopped by its time limit
            return replace(out, status="timeout", x=None, objective=None)
        return out

    monkeypatch.setattr(lp_mod, "solve_highs", first_without_solution)
    r = solve(g, b, "lp", params)
    assert len(calls) == 2
    assert r.lower_bound is None  # no bound claimed from an unsolved LP
    assert r.has_plan and r.validation["valid"], r.message
    assert r.stats["roundings"] > 0
