"""Plan pictures: the replay behind them, the PNG, and the memory_viz snapshot."""
from __future__ import annotations

import pickle

import pytest
from graphgen import dags
from hypothesis import HealthCheck, given, settings

from planner import registry
from planner.analysis import baseline_peak
from planner.budget import budget_for
from planner.cli import main
from planner.models import load_model
from planner.params import SolveParams
from planner.plotting.memviz import BASE, snapshot
from planner.plotting.timeline import RECOMPUTED, RESIDENT, replay
from planner.validator import validate


def _plan(model="chain:16", ratio=0.5, method="coop"):
    g = load_model(model)
    res = registry.solve(g, budget_for(g, ratio), method, SolveParams(time_limit=10))
    assert res.has_plan, f"{method} found no plan for {model} at {ratio}: {res.message}"
    return g, res.plan


def _check_timeline(g, plan):
    rep = validate(g, plan)
    assert rep.valid
    tl = replay(g, plan)
    assert tl.computes == rep.computations and sum(tl.recompute) == rep.recomputations
    assert max(tl.live, default=0) <= rep.peak_bytes
    # at every compute step, the spans live then are disjoint in address, inside the budget,
    # and add up to the live bytes the replay reports
    for k in range(tl.computes):
        now = sorted((s.offset, s.offset + s.size) for s in tl.spans if s.start <= k < s.end and s.size)
        assert all(a[1] <= b[0] for a, b in zip(now, now[1:]))
        assert all(0 <= lo and hi <= plan.budget for lo, hi in now)
        assert sum(hi - lo for lo, hi in now) == tl.live[k]
    return tl


def test_timeline_of_a_heuristic_plan_marks_recomputations():
    g, plan = _plan()
    tl = _check_timeline(g, plan)
    kinds = {s.kind for s in tl.spans}
    assert RESIDENT in kinds
    if any(tl.recompute):
        assert RECOMPUTED in kinds


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(max_ops=10))
def test_timeline_matches_the_validator_on_random_graphs(g):
    budget = baseline_peak(g) * 2 + 4096  # room for any placement: the plain plan must fit
    res = registry.solve(g, budget, "none", SolveParams())
    assert res.has_plan, res.message
    tl = _check_timeline(g, res.plan)
    assert max(tl.live, default=0) == validate(g, res.plan).peak_bytes or tl.computes == 0


def _replay_trace(snap):
    live = {}
    for e in snap["device_traces"][0]:
        if e["action"] == "alloc":
            assert all(not (a < e["addr"] + e["size"] and e["addr"] < a + s) for a, s in live.items())
            live[e["addr"]] = e["size"]
        elif e["action"] == "free_completed":
            assert live.pop(e["addr"]) == e["size"]
    return live


def test_memory_viz_snapshot_shape_and_consistency(tmp_path, capsys):
    g, plan = _plan()
    snap = snapshot(g, plan)
    (seg,) = snap["segments"]
    assert seg["address"] == BASE and seg["total_size"] >= plan.budget
    # blocks tile the segment; active blocks are exactly what the trace leaves allocated
    addr = seg["address"]
    for b in seg["blocks"]:
        assert b["address"] == addr and b["state"] in ("active_allocated", "inactive")
        addr += b["size"]
    assert addr == seg["address"] + seg["total_size"]
    live = _replay_trace(snap)
    assert live == {b["address"]: b["size"] for b in seg["blocks"] if b["state"] == "active_allocated"}
    actions = {e["action"] for e in snap["device_traces"][0]}
    assert actions <= {"alloc", "free_requested", "free_completed"} and "alloc" in actions
    assert all(f.keys() >= {"filename", "line", "name"} for e in snap["device_traces"][0] for f in e["frames"])
    # the CLI writes a protocol-4 pickle that loads back to the same dict
    p = tmp_path / "plan.json"
    plan.save(str(p))
    out = tmp_path / "snap.pickle"
    assert main(["plot", "--plan", str(p), "--format", "memory-viz", "--out", str(out)]) == 0
    raw = out.read_bytes()
    assert raw[:2] == b"\x80\x04"
    assert pickle.loads(raw) == pickle.loads(pickle.dumps(snap, protocol=4))


@pytest.mark.slow  # importing torch takes seconds; the structure is checked without it above
def test_torch_memory_viz_reads_the_snapshot():
    mv = pytest.importorskip("torch.cuda._memory_viz", reason="torch not installed")
    g, plan = _plan()
    snap = snapshot(g, plan)
    assert "segments: 1" in mv.segsum(snap)
    assert "alloc" in mv.trace(snap) or "=" in mv.trace(snap)
    assert "snapshot.pickle" in mv.trace_plot(snap)


def test_png_is_written(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) not installed")
    g, plan = _plan()
    p = tmp_path / "plan.json"
    plan.save(str(p))
    out = tmp_path / "pic" / "plan.png"
    assert main(["plot", "--plan", str(p), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000  # something was drawn


def test_plot_rejects_a_plan_for_another_graph(tmp_path, capsys):
    g, plan = _plan()
    p = tmp_path / "plan.json"
    plan.save(str(p))
    assert main(["plot", "--plan", str(p), "--model", "chain:12"]) == 2
    err = capsys.readouterr().err
    assert "another graph" in err and err.count("\n") == 1
    assert main(["plot", "--plan", str(tmp_path / "missing.json")]) == 2
