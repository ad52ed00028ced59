"""Issue 34, class "study folders": the spec is typed (unknown keys named), an input file is
never rewritten, everything is checked before the folder changes, another grid needs --force,
a killed study (SIGTERM or SIGKILL) leaves no worker behind and a rerun completes each cell
exactly once (cells are claimed by lock files)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cliutil import run

from planner.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


GRID = ["--models", "chain:4", "--ratios", "0.8,1", "--methods", "none"]


def test_unknown_spec_key_is_named_with_the_allowed_ones(tmp_path, capsys):
    spec = {"kind": "study", "schema_version": 1, "name": "s", "time_limt": 5,
            "grids": [{"models": ["chain:4"], "ratios": [1.0], "methods": ["none"]}]}
    p = tmp_path / "study.json"
    p.write_text(json.dumps(spec))
    rc, out, err = run(capsys, "study", "--spec", str(p))
    assert out == ""
    assert rc == 2 and "unknown field 'time_limt'" in err and "time_limit" in err and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["study.json"]


@pytest.mark.parametrize("grid,needle", [({"models": ["chain:4"], "methods": ["none"]}, "missing field 'ratios'"),
                                         ({"models": ["chain:4"], "ratios": ["0.5"], "methods": ["none"]},
                                          "ratios[0] must be a number"),
                                         ({"models": ["chain:4"], "ratios": [1], "methods": ["none"], "x": 1},
                                          "unknown field 'x'")])
def test_grid_fields_are_typed(tmp_path, capsys, grid, needle):
    p = tmp_path / "study.json"
    p.write_text(json.dumps({"kind": "study", "schema_version": 1, "grids": [grid]}))
    rc, _, err = run(capsys, "study", "--spec", str(p))
    assert rc == 2 and needle in err and "grid 0" in err and str(p) in err


def test_the_spec_file_is_never_rewritten(tmp_path, capsys):
    d = tmp_path / "s"
    d.mkdir()
    p = d / "study.json"
    spec = {"kind": "study", "schema_version": 1, "name": "mine", "time_limit": 5.0,
            "grids": [{"models": ["chain:4"], "ratios": [1.0], "methods": ["none"]}],
            "extra": {"comment": "hand-written, indented"}}
    p.write_text(json.dumps(spec, indent=2) + "\n")
    before = p.read_bytes()
    rc, _, err = run(capsys, "study", "--spec", str(p), "--no-plots")
    assert rc == 0, err
    assert p.read_bytes() == before
    assert (d / "table.csv").is_file()


def test_a_user_error_leaves_the_folder_untouched(tmp_path, capsys):
    out = tmp_path / "s"
    assert main(["study", *GRID, "--out", str(out), "--no-plots"]) == 0
    capsys.readouterr()
    before = _snapshot(out)
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "graph", "schema_version": 1, "tensors": [], "ops": [], "required": []}')
    rc, _, err = run(capsys, "study", "--models", f"chain:4,{bad}", "--ratios", "0.8,1", "--methods", "none",
                     "--out", str(out), "--no-plots")
    assert rc == 2 and str(bad) in err
    assert _snapshot(out) == before


def test_a_missing_backend_is_found_before_the_folder_is_made(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # ray is in the dev extras: hide it (import fails)
    rc, _, err = run(capsys, "study", *GRID, "--out", str(tmp_path / "s"), "--backend", "ray")
    assert rc == 2 and "ray" in err
    assert not (tmp_path / "s").exists()


def test_another_grid_needs_force(tmp_path, capsys):
    out = tmp_path / "s"
    assert main(["study", *GRID, "--out", str(out), "--no-plots"]) == 0
    capsys.readouterr()
    before = _snapshot(out)
    other = ["--models", "chain:4", "--ratios", "1", "--methods", "none"]
    rc, _, err = run(capsys, "study", *other, "--out", str(out), "--no-plots")
    assert rc == 2 and "another grid" in err and "--force" in err
    assert _snapshot(out) == before  # the table did not shrink
    rc, o, err = run(capsys, "study", *other, "--out", str(out), "--no-plots", "--force", "--json")
    assert rc == 0, err
    d = json.loads(o)
    assert d["cells"] == 1 and d["ran"] == 0  # the finished cell was kept and reused
    assert json.loads((out / "study.json").read_text())["grids"][0]["ratios"] == [1.0]


def test_the_same_grid_reruns_without_force(tmp_path, capsys):
    out = tmp_path / "s"
    assert main(["study", *GRID, "--out", str(out), "--no-plots"]) == 0
    capsys.readouterr()
    rc, o, _ = run(capsys, "study", *GRID, "--out", str(out), "--no-plots", "--json")
    assert rc == 0 and json.loads(o)["ran"] == 0


def _lock_files(out: Path) -> list[Path]:
    return sorted((out / "cells").glob("*.lock")) if (out / "cells").is_dir() else []


def test_a_cell_held_by_a_live_process_is_left_to_it_and_a_dead_ones_taken_over(tmp_path, capsys):
    from planner.study.folder import lock_path
    from planner.study.spec import Cell

    out = tmp_path / "s"
    (out / "cells").mkdir(parents=True)
    cell = Cell("chain:4", 1.0, "none", 60.0)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock_path(out, cell).write_text(json.dumps({"pid": holder.pid, "worker": None}))
        rc, o, err = run(capsys, "study", *GRID, "--out", str(out), "--no-plots", "--json")
        assert rc == 0, err
        d = json.loads(o)
        assert d["ran"] == 1 and d["cells"] == 1  # the held cell was neither run nor counted done
        assert "left to the run that holds them" in err and str(holder.pid) in err
    finally:
        holder.kill()
        holder.wait()
    rc, o, _ = run(capsys, "study", *GRID, "--out", str(out), "--no-plots", "--json")
    assert rc == 0 and json.loads(o)["ran"] == 1 and json.loads(o)["cells"] == 2  # the stale lock is taken over
    assert _lock_files(out) == []


# ---------------------------------------------------------------- killed studies (real processes)
SLOW = ["--models", "layered:60:3", "--ratios", "0.75", "--methods", "none,checkmate", "--time-limit", "3"]


def _study(out: Path) -> list[str]:
    return [sys.executable, "-m", "planner", "study", *SLOW, "--out", str(out), "--no-plots", "--json"]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _wait(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def _worker_of_slow_cell(out: Path) -> int:
    def worker():
        for lf in _lock_files(out):
            if "checkmate" in lf.name:
                try:
                    return json.loads(lf.read_text()).get("worker")
                except (OSError, ValueError):
                    return None
        return None

    assert _wait(lambda: worker() is not None, 60), "the slow cell never started"
    return worker()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_killed_study_leaves_no_worker_and_a_rerun_completes_each_cell_once(tmp_path, sig):
    out = tmp_path / "s"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    study = subprocess.Popen(_study(out), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        worker = _worker_of_slow_cell(out)
        time.sleep(0.3)
        study.send_signal(sig)
        _, err = study.communicate(timeout=30)
    finally:
        if study.poll() is None:
            study.kill()
    if sig == signal.SIGTERM:
        assert study.returncode == 130 and b"interrupted" in err and b"Traceback" not in err
    assert _wait(lambda: _gone(worker), 10), "the worker outlived its study"
    done = {p.name: p.read_bytes() for p in (out / "cells").glob("*.json")}
    assert len(done) == 1 and all("__none__" in n for n in done)  # the killed cell left no record
    if sig == signal.SIGTERM:
        assert _lock_files(out) == []  # released on the way out
    rerun = subprocess.run(_study(out), cwd=ROOT, env=env, capture_output=True, timeout=120, check=False)
    assert rerun.returncode == 0, rerun.stderr
    d = json.loads(rerun.stdout)
    assert d["cells"] == 2 and d["ran"] == 1 and d["skipped"] == 1
    after = {p.name: p.read_bytes() for p in (out / "cells").glob("*.json")}
    assert len(after) == 2 and all(after[n] == b for n, b in done.items())  # the finished cell untouched
    assert _lock_files(out) == []
