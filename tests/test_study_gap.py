"""The gap study's outputs: the headline table pairs eager graphs with their aot twins, brackets
the optimum where it is not proven, and coop's excess follows from the cells."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.study import gap
from planner.study.presets import preset


def rec(model, ratio, method, status, objective=None, lower=None, kind="heuristic", base=100.0, **kw):
    r = {"model": model, "ratio": ratio, "method": method, "status": status, "objective": objective,
         "lower_bound": lower, "method_kind": kind, "baseline_cost": base,
         "overhead": None if objective is None else objective / base - 1.0}
    r.update(kw)
    return r


def test_twin_folding_and_aot_mark():
    rs = [rec("eager/m", 0.5, "coop", "feasible", 150.0),
          rec("eager/m", 0.5, "exact", "optimal", 120.0, 120.0, kind="exact"),
          rec("m", 0.5, "pytorch-budget", "feasible", 130.0)]
    assert gap.folded_twins(rs) == {"m": "eager/m"}
    rows = gap.headline_rows(rs, ["eager/m", "m"])
    assert [r["model"] for r in rows] == ["eager/m"]
    row = rows[0]
    assert row["cells"]["pytorch-budget"][1] is True          # from the twin, marked aot
    assert row["excess"][0] == pytest.approx(0.25)           # 150 / 120 - 1, proven
    text = "\n".join(gap.headline_section(rs, ["eager/m", "m"]))
    assert "30.0% (aot)" in text and "20.0% (proven)" in text and "+25.0%" in text


def test_twin_not_folded_when_it_shares_a_method():
    rs = [rec("eager/m", 0.5, "coop", "feasible", 150.0), rec("m", 0.5, "coop", "feasible", 140.0)]
    assert gap.folded_twins(rs) == {}
    assert {r["model"] for r in gap.headline_rows(rs, ["eager/m", "m"])} == {"eager/m", "m"}


@settings(max_examples=60, deadline=None)
@given(bound=st.floats(100.0, 200.0), best=st.floats(0.0, 100.0), extra=st.floats(0.0, 100.0))
def test_unproven_excess_brackets_the_truth(bound, best, extra):
    """Coop's excess over any optimum in [bound, best plan] lies in the reported range."""
    best_plan = bound + best
    coop = best_plan + extra
    rs = [rec("eager/m", 0.4, "coop", "feasible", coop),
          rec("eager/m", 0.4, "exact", "feasible", best_plan, bound,
              kind="exact")]
    (row,) = gap.headline_rows(rs, ["eager/m"])
    least, most = row["excess"]
    if row["point"].optimum is not None:        # the plan meets the bound: proven by it
        assert least == pytest.approx(coop / best_plan - 1)
        return
    for opt in (bound, (bound + best_plan) / 2, best_plan):
        assert least - 1e-9 <= coop / opt - 1 <= most + 1e-9


def test_no_plan_and_unplaceable_texts():
    rs = [rec("eager/m", 0.3, "coop", "infeasible"),
          rec("eager/m", 0.3, "dtr-ideal", "infeasible", stats={"scalar_feasible": True, "scalar_overhead": 0.18}),
          rec("eager/m", 0.3, "exact", "timeout", None, 110.0, kind="exact"),
          rec("m", 0.3, "pytorch-budget", "infeasible", budget_bytes=1000,
              stats={"measured_top_bytes": 1104})]
    text = "\n".join(gap.headline_section(rs, ["eager/m", "m"]))
    assert "unplaceable (scalar 18.0%)" in text
    assert "no fit (1.10× budget) (aot)" in text
    assert "≥ 10.0%, no plan known" in text
    assert "| no plan |" in text


def test_gap_zoo_preset_grid():
    s = preset("gap-zoo")
    assert s.time_limit == 300.0
    assert preset("gap-zoo", 30.0).time_limit == 30.0
    cells = s.cells()
    eager = {c.model for c in cells if c.method == "exact"}
    assert eager == {f"eager/{m}" for m in ("bert-large", "bilstm", "densenet121", "gpt3-2.7b", "inception-v3",
                                            "resnet50", "swin-t", "unet")}
    assert {c.model for c in cells if c.method == "pytorch-budget"} == {m[len("eager/"):] for m in eager}
    assert {c.ratio for c in cells} == {0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}


def test_study_end_to_end_draws_the_gap(tmp_path: Path):
    """A real study with coop and exact: the summary opens with the gap table, the heat map is drawn."""
    out = tmp_path / "st"
    cmd = [sys.executable, "-m", "planner", "--quiet", "study", "--models", "eager/unet-tiny,chain:12",
           "--ratios", "0.6,0.9", "--methods", "coop,exact", "--time-limit", "20", "--out", str(out), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    text = (out / "summary.md").read_text()
    assert text.index("## Headline: the heuristics against the optimum") < text.index("## Headline: coop against")
    assert "coop_excess.png" in json.loads(p.stdout).get("plots", []) or (out / "coop_excess.png").is_file()
    section = text[text.index("## Headline: the heuristics"):text.index("## Headline: coop against")]
    rows = [ln for ln in section.splitlines() if ln.startswith("| unet-tiny |") or ln.startswith("| chain:12 |")]
    assert len(rows) == 4


def test_study_shares_the_partitioner_trace(tmp_path: Path):
    """The study's parent traces once per graph (the method's prepare); every budget's cell says
    the trace was shared and how long it took."""
    out = tmp_path / "pb"
    cmd = [sys.executable, "-m", "planner", "--quiet", "study", "--models", "unet-tiny", "--ratios", "0.8,0.95",
           "--methods", "pytorch-budget", "--time-limit", "60", "--jobs", "2", "--no-plots", "--out", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    recs = [json.loads(f.read_text()) for f in sorted((out / "cells").glob("*.json"))]
    assert len(recs) == 2
    for r in recs:
        assert r["status"] in ("feasible", "optimal", "infeasible"), r
        assert r["stats"]["trace_shared"] is True
        assert r["stats"]["trace_seconds"] > 0


def test_monotonicity_problem_is_reported():
    ok = [rec("g", 0.5, "exact", "optimal", 130.0, 130.0, kind="exact"),
          rec("g", 0.7, "exact", "optimal", 110.0, 110.0, kind="exact")]
    assert gap.monotonicity_problems(ok) == []
    bad = [rec("g", 0.5, "coop", "feasible", 105.0),
           rec("g", 0.7, "exact", "optimal", 110.0, 110.0, kind="exact")]
    (line,) = gap.monotonicity_problems(bad)
    assert "ratio 0.5" in line and "0.7" in line
