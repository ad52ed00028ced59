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
    assert model.rs_columns(p, set(range(p.n))) == len(m.R) + len(m.S)
    some = set(range(0, p.n, 3))
    m3 = model.build(p, cap, some)
    assert model.rs_columns(p, some) == len(m3.R) + len(m3.S)
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
    spec, ratio = ("layered:100", 0.8) if method == "exact" else ("chain:24", 0.6)
    g = load_graph_arg(spec, None)
    res = solve(g, int(ratio * baseline_peak(g)), method, SolveParams(time_limit=10))
    if method == "exact":
        # the incumbent and the bounds need no MILP (their gap is open here): a plan, not optimal
        assert res.has_plan and res.status == "feasible" and "too large for memory" in res.message
    else:
        assert res.status == "error" and "too large for memory" in res.message


def test_refused_milp_gives_its_time_to_the_checkpoints(monkeypatch):
    """Without a MILP to follow, the checkpoint relaxation is solved again over twice as many
    checkpoints while each MIP finishes: every round's bound is valid and the best one counts."""
    from dataclasses import replace

    from formulations.exact import tuning

    monkeypatch.setattr(model, "MAX_RS_COLUMNS", 10)
    monkeypatch.setattr(tuning, "DEFAULT", replace(tuning.DEFAULT, checkpoints=2))
    g = load_graph_arg("layered:60", None)
    # 60 s: gap eviction then has its full 20 s even on a loaded machine (the proof takes ~6 s)
    res = solve(g, int(0.8 * baseline_peak(g)), "exact", SolveParams(time_limit=60))
    st = res.stats
    rounds = st["checkpoint_rounds"]
    counts = [r[0] for r in rounds]
    assert len(rounds) >= 2 and counts == sorted(set(counts)) and counts[0] == 2
    assert st["checkpoint_best"] == max(max(r[1], r[2] or 0.0) for r in rounds)
    assert st["checkpoint_best"] > st["checkpoint_mip"]  # the extra rounds earned something here
    total = sum(extract(g).cost)
    assert res.lower_bound >= total + st["checkpoint_best"] - 1e-6
    # here the second round (4 checkpoints) meets the gap-eviction plan: proven with no MILP
    assert res.status == "optimal" and res.objective == res.lower_bound


def test_the_build_checks_its_deadline_while_it_creates_columns():
    """The deadline is checked inside the loops over ops and values, not only between the
    phases: inception-v3 at 0.5 with 40 s overran by 10 s building its MILP in its last 3 s
    (the first check came after every R and S column and the keep rows)."""
    import time

    g = load_graph_arg("layered:100", None)
    p = extract(g)
    cap = p.capacity(int(0.8 * baseline_peak(g)))
    cols = []       # columns created so far, at each deadline check
    made = [0]
    real_var, real_clock = model.Model.var, time.perf_counter

    def var(self, *a, **k):
        made[0] += 1
        return real_var(self, *a, **k)

    def clock():
        cols.append(made[0])
        return real_clock()

    model.Model.var, time.perf_counter = var, clock
    try:
        m = model.build(p, cap, set(range(p.n)), deadline=real_clock() + 1e6)
    finally:
        model.Model.var, time.perf_counter = real_var, real_clock
    rs = len(m.R) + len(m.S)
    assert cols and cols[0] == 0, "checked before the first column"
    assert sum(1 for c in cols if c < rs) > p.n, "checked at least once per op while R and S columns are made"
    with pytest.raises(model.BuildTimeout):
        model.build(p, cap, set(range(p.n)), deadline=real_clock() - 1.0)
