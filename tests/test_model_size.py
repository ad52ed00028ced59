"""A MILP too large for memory is refused before any column is built, with the count in the
message: exact still answers from its incumbent and bounds, checkmate and lp say why not."""
from __future__ import annotations

import pytest

import formulations.model as model
from formulations.problem import extract
from planner.analysis import baseline_peak
from planner.models import load_graph_arg
from planner.params import SolveParams
from planner.registry import solve


def test_column_count_is_the_built_one():
    g = load_graph_arg("chain:24", None)
    p = extract(g)
    cap = p.capacity(int(0.6 * baseline_peak(g)))
    m = model.build(p, cap, set(range(p.n)))
    old = model.MAX_RS_COLUMNS
    try:
        model.MAX_RS_COLUMNS = len(m.R) + len(m.S)
        assert model.build(p, cap, set(range(p.n))) is not None  # exactly at the limit: built
        model.MAX_RS_COLUMNS -= 1
        with pytest.raises(model.ModelTooLarge, match=f"{len(m.R) + len(m.S):,} R and S columns"):
            model.build(p, cap, set(range(p.n)))
    finally:
        model.MAX_RS_COLUMNS = old


@pytest.mark.parametrize("method", ["exact", "checkmate", "lp"])
def test_methods_refuse_a_model_too_large(monkeypatch, method):
    monkeypatch.setattr(model, "MAX_RS_COLUMNS", 10)
    spec, ratio = ("layered:100", 0.9) if method == "exact" else ("chain:24", 0.6)
    g = load_graph_arg(spec, None)
    res = solve(g, int(ratio * baseline_peak(g)), method, SolveParams(time_limit=10))
    if method == "exact":
        # the incumbent and the bounds need no MILP (their gap is open here): a plan, not optimal
        assert res.has_plan and res.status == "feasible" and "too large for memory" in res.message
    else:
        assert res.status == "error" and "too large for memory" in res.message
