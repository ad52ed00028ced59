"""On a model whose MILP is too large to build, the relaxation rounds after the slow sources
take ``Tuning.checkpoint_share_refine`` of the time when the early phase left a solution to
refine (before, they took all of it: swin-t 0.5 spent its last minute on a round over 80
checkpoints and never refined)."""
from __future__ import annotations

from formulation_graphs import budget_case

import formulations.exact.solve as solve_mod
from formulations import model
from formulations.exact import DEFAULT, solve_exact
from planner.params import SolveParams


def test_the_later_rounds_leave_time_to_refine(monkeypatch):
    calls = []
    real = solve_mod.checkpoint

    def spy(ctx, deadline, state, stats, slack, **kw):
        calls.append((state.solution is not None, kw.get("share")))
        return real(ctx, deadline, state, stats, slack, **kw)

    monkeypatch.setattr(solve_mod, "checkpoint", spy)
    monkeypatch.setattr(model, "MAX_RS_COLUMNS", 0)  # every MILP counts as too large to build
    seen = 0
    for seed in range(30):
        g, budget, _p, _cap = budget_case(seed, 7, 0.3)
        calls.clear()
        res = solve_exact(g, budget, SolveParams(time_limit=10))
        assert res.status in ("optimal", "feasible", "infeasible", "timeout")
        for had_solution, share in calls:  # only solve_exact's own calls go through the spy
            seen += had_solution
            assert share == (DEFAULT.checkpoint_share_refine if had_solution else None)
    assert seen, "no case reached the later rounds with a solution from the early phase"
