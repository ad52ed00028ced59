"""--ratio-of peak|activations: the two denominators on generated graphs, solve's JSON, study specs."""
from __future__ import annotations

import json

from graphgen import dags
from hypothesis import given, settings

from planner.analysis import baseline_peak, live_bytes_profile
from planner.models import load_model
from planner.ratio_of import budget_of, denominators
from planner.study.spec import Cell, Grid, StudySpec


@settings(max_examples=60, deadline=None)
@given(dags())
def test_denominators_split_the_peak(g):
    d = denominators(g)
    live = live_bytes_profile(g)
    assert d.peak == baseline_peak(g)
    assert d.resident == int(live[0])           # before the first op only resident storages exist
    assert 0 <= d.activations_peak <= d.peak
    assert d.resident + d.activations_peak >= d.peak
    overwritten = {t.inplace_of for t in g.tensors if t.inplace_of is not None}
    if not any(g.tensors[x].producer is None for x in overwritten):
        # resident storages then live through the whole step: the peak is exactly R + A
        assert d.resident + d.activations_peak == d.peak
    prev = -1
    for r in (0.1, 0.3, 0.5, 0.9, 1.0):
        b = budget_of(g, r, "activations")
        assert b >= prev and b >= d.resident
        prev = b
    assert budget_of(g, 1.0, "activations") >= budget_of(g, 1.0, "peak") == d.peak


def test_solve_json_reports_which_denominator(cli):
    g = load_model("unet-tiny")
    d = denominators(g)
    rc, out, _ = cli("solve", "--model", "unet-tiny", "--ratio", "0.5", "--method", "coop",
                     "--ratio-of", "activations", "--json")
    rec = json.loads(out)
    assert rc == 0 and rec["ratio_of"] == "activations"
    assert rec["budget_bytes"] == d.resident + int(0.5 * d.activations_peak)
    assert rec["resident_bytes"] == d.resident and rec["activations_peak_bytes"] == d.activations_peak
    assert abs(rec["budget_ratio_of_activations"] - 0.5) < 1e-6
    assert rec["budget_ratio_of_peak"] > 0.5  # unet-tiny's parameters are a part of its peak
    assert rec["valid"] and rec["peak_bytes"] <= rec["budget_bytes"]
    rc, out, _ = cli("solve", "--model", "unet-tiny", "--ratio", "0.5", "--method", "coop", "--json")
    assert json.loads(out)["ratio_of"] == "peak" and json.loads(out)["budget_bytes"] == int(0.5 * d.peak)


def test_below_the_floor_names_the_denominator(cli):
    rc, _, err = cli("solve", "--model", "unet-tiny", "--ratio", "0.05", "--ratio-of", "activations")
    assert rc == 2 and "of the activations" in err and len(err.strip().splitlines()) == 1
    rc, _, err = cli("solve", "--model", "unet-tiny", "--ratio", "0.5", "--ratio-of", "weights")
    assert rc == 2


def test_study_spec_keeps_ratio_of_and_old_cell_names(tmp_path, cli):
    spec = StudySpec("s", (Grid(("chain:8",), (0.7,), ("coop",)),), ratio_of="activations")
    back = StudySpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert back.ratio_of == "activations" and back.cells()[0].ratio_of == "activations"
    # a peak cell's key (and so its file name) is what it was before ratio_of existed
    assert "ratio_of" not in Cell("m", 0.5, "coop", 60.0).key
    assert Cell("m", 0.5, "coop", 60.0).file_name != Cell("m", 0.5, "coop", 60.0, ratio_of="activations").file_name
    rc, _, _ = cli("study", "--models", "unet-tiny", "--ratios", "0.6", "--methods", "coop",
                   "--ratio-of", "activations", "--out", str(tmp_path / "st"), "--no-plots")
    assert rc == 0
    (cell,) = (tmp_path / "st" / "cells").glob("*.json")
    rec = json.loads(cell.read_text())
    d = denominators(load_model("unet-tiny"))
    assert rec["ratio_of"] == "activations" and rec["budget_bytes"] == d.resident + int(0.6 * d.activations_peak)
    rc, _, err = cli("study", "--spec", str(tmp_path / "st" / "study.json"), "--out", str(tmp_path / "st"),
                     "--ratio-of", "peak")
    assert rc == 2 and "--ratio-of" in err
