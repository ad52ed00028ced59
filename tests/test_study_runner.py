"""Study runner: every cell recorded, resumable, interrupt-safe, hard limits, failures as results."""
from __future__ import annotations

import json
import os
import time

import pytest

from planner import registry
from planner.budget import budget_for
from planner.errors import UserError
from planner.models import load_model
from planner.params import SolveParams
from planner.result import Result
from planner.study.runner import cell_path, load_record, run_study
from planner.study.spec import Grid, StudySpec
from planner.study.table import COLUMNS

# ---- test-only methods (registered by module path; forked workers inherit this module) ----


def sleepy(g, budget, params):
    time.sleep(60)
    return Result("sleepy", "infeasible")


def dies(g, budget, params):
    os._exit(3)


def crashes(g, budget, params):
    raise RuntimeError("boom")


registry.register("test-sleepy", f"{__name__}:sleepy", "heuristic", "test: sleeps past any limit")
registry.register("test-dies", f"{__name__}:dies", "heuristic", "test: worker process exits")
registry.register("test-crash", f"{__name__}:crashes", "heuristic", "test: raises")

SMALL = StudySpec("small", (Grid(("chain:8", "ushape:2"), (0.6, 1.0), ("none", "coop")),), time_limit=5.0)


def test_study_records_every_cell_and_matches_direct_solve(tmp_path):
    run = run_study(SMALL, tmp_path, jobs=2, outputs=True, plots=False)
    assert run.ran == len(SMALL.cells()) == 8 and run.skipped == 0
    assert len(run.records) == 8
    # one table row per cell, with the documented columns
    lines = (tmp_path / "table.csv").read_text().splitlines()
    assert lines[0].split(",") == list(COLUMNS) and len(lines) == 9
    assert (tmp_path / "summary.md").read_text().count("## chain:8") == 1
    # a cell's record is what the registry returns for the same problem
    g = load_model("chain:8")
    res = registry.solve(g, budget_for(g, 0.6), "coop", SolveParams(time_limit=5.0))
    rec = next(r for r in run.records if r["model"] == "chain:8" and r["ratio"] == 0.6 and r["method"] == "coop")
    assert rec["status"] == res.status and rec["graph_hash"] == g.hash
    if res.has_plan:
        assert rec["objective"] == pytest.approx(res.objective)
        assert rec["overhead"] == pytest.approx(res.validation["overhead"])
    for r in run.records:
        assert r["status"] in ("optimal", "feasible", "infeasible", "timeout", "error")
        assert r["versions"]["python"]


def test_rerun_skips_finished_cells_and_deleted_cells_are_redone(tmp_path):
    run_study(SMALL, tmp_path, outputs=False)
    before = {c.file_name: cell_path(tmp_path, c).read_bytes() for c in SMALL.cells()}
    again = run_study(SMALL, tmp_path, outputs=False)
    assert again.ran == 0 and again.skipped == 8
    assert {c.file_name: cell_path(tmp_path, c).read_bytes() for c in SMALL.cells()} == before
    victim = SMALL.cells()[3]
    cell_path(tmp_path, victim).unlink()
    third = run_study(SMALL, tmp_path, outputs=False)
    assert third.ran == 1 and load_record(tmp_path, victim) is not None


def test_interrupted_study_keeps_finished_cells(tmp_path):
    seen = []

    def stop_after_two(p, rec):
        if rec is not None:
            seen.append(rec)
            if len(seen) == 2:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_study(SMALL, tmp_path, jobs=2, progress=stop_after_two, plots=False)
    on_disk = [c for c in SMALL.cells() if load_record(tmp_path, c) is not None]
    assert 2 <= len(on_disk) < 8
    for c in on_disk:  # whole JSON documents, never partial
        json.loads(cell_path(tmp_path, c).read_text())
    assert not list((tmp_path / "cells").glob(".*.tmp"))
    rest = run_study(SMALL, tmp_path, jobs=2, outputs=False)
    assert rest.ran == 8 - len(on_disk) and len(rest.records) == 8


def test_hard_wall_limit_and_dead_workers_become_results(tmp_path):
    spec = StudySpec("bad", (Grid(("chain:4",), (1.0,), ("test-sleepy", "test-dies", "test-crash", "none")),),
                     time_limit=1.0, wall_limit=1.5)
    t0 = time.perf_counter()
    run = run_study(spec, tmp_path, jobs=2, plots=False)
    assert time.perf_counter() - t0 < 30
    by = {r["method"]: r for r in run.records}
    assert by["test-sleepy"]["status"] == "timeout" and "wall limit" in by["test-sleepy"]["message"]
    assert by["test-dies"]["status"] == "error" and "code 3" in by["test-dies"]["message"]
    assert by["test-crash"]["status"] == "error" and "boom" in by["test-crash"]["message"]
    assert by["none"]["status"] == "optimal"
    # failures are recorded results: a rerun does not redo them unless asked
    assert run_study(spec, tmp_path, outputs=False).ran == 0
    assert "test-crash" in (tmp_path / "summary.md").read_text()


def test_below_minimum_budget_is_recorded_infeasible(tmp_path):
    spec = StudySpec("low", (Grid(("chain:8",), (0.01,), ("coop",)),))
    (rec,) = run_study(spec, tmp_path, outputs=False).records
    assert rec["status"] == "infeasible" and rec["backend"] == "analysis"
    assert "minimum feasible budget" in rec["message"]


def test_unwritable_out_dir_is_a_user_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UserError, match="cannot write"):
        run_study(SMALL, f / "sub", outputs=False)


def test_save_plans_keeps_validated_plans(tmp_path):
    from dataclasses import replace

    from planner.plan import Plan
    from planner.validator import validate

    spec = replace(SMALL, save_plans=True, grids=(Grid(("chain:8",), (0.6,), ("coop",)),))
    (rec,) = run_study(spec, tmp_path, outputs=False).records
    assert rec["status"] in ("optimal", "feasible"), rec  # coop plans chain:8 at 0.6
    plan = Plan.load(str(tmp_path / rec["plan_path"]))
    assert validate(load_model("chain:8"), plan).valid


def test_a_record_for_another_graph_version_is_run_again(tmp_path):
    spec = StudySpec("s", (Grid(("chain:8",), (0.6, 1.0), ("none",)),))
    run_study(spec, tmp_path, outputs=False)
    c = spec.cells()[0]
    p = cell_path(tmp_path, c)
    rec = json.loads(p.read_text())
    rec["graph_hash"] = "0000000000000000"  # as if the profile had been recaptured since
    p.write_text(json.dumps(rec))
    again = run_study(spec, tmp_path, outputs=False)
    assert again.ran == 1 and load_record(tmp_path, c)["graph_hash"] == load_model("chain:8").hash
