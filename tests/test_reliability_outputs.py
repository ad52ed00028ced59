"""Issue 34, class "lost results and overwritten files": the output path is checked before the
work, a late write failure still prints the result, an input is never overwritten, a stale
file is named, written files honour the umask."""
from __future__ import annotations

import json
import os
import stat
import time

import pytest
from cliutil import run

from planner.cli import main
from planner.plan import Plan

CSV = "id,lower,upper,size\na,0,2,8\nb,1,3,8\n"


def _one_line_error(rc, out, err):
    assert rc == 2, (rc, out, err)
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_done_when_solve_into_a_folder_exits_2_before_solving(tmp_path, capsys, monkeypatch):
    """The issue's check: exact on unet-tiny with --out an existing folder: exit 2 in under a
    second, and the solver is never called."""
    from planner.commands import solve_cmd

    def never(*a, **k):
        raise AssertionError("solved although --out cannot be written")

    monkeypatch.setattr(solve_cmd, "solve", never)
    t0 = time.perf_counter()
    rc, out, err = run(capsys, "solve", "--model", "unet-tiny", "--ratio", "0.6", "--method", "exact",
                       "--time-limit", "10", "--out", str(tmp_path))
    assert time.perf_counter() - t0 < 1.0
    _one_line_error(rc, out, err)
    assert "is a folder" in err and out == ""


def _bad_outs(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    return {"folder": str(tmp_path), "under-a-file": str(f / "out.json"), "proc": "/proc/coop-x.json"}


COMMANDS = {
    "solve": lambda t, out: ["solve", "--model", "chain:8", "--ratio", "0.8", "--method", "coop", "--out", out],
    "alloc": lambda t, out: ["alloc", "--csv", str(t / "p.csv"), "--out", out],
    "import": lambda t, out: ["import", str(t / "p.csv"), "--format", "minimalloc", "--out", out],
    "plot": lambda t, out: ["plot", "--plan", str(t / "plan.json"), "--out", out],
    "profile": lambda t, out: ["profile", "--model", "unet-tiny", "--out", out],
}


@pytest.mark.parametrize("where", ["folder", "under-a-file", "proc"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_unwritable_out_is_refused_before_the_work(tmp_path, capsys, command, where):
    (tmp_path / "p.csv").write_text(CSV)
    assert main(["solve", "--model", "chain:8", "--ratio", "1", "--method", "none",
                 "--out", str(tmp_path / "plan.json")]) == 0
    capsys.readouterr()
    out = _bad_outs(tmp_path)[where]
    if command == "plot" and where != "folder":
        out = out.replace(".json", ".png")
    before = sorted(os.listdir(tmp_path))
    t0 = time.perf_counter()
    rc, o, err = run(capsys, *COMMANDS[command](tmp_path, out))
    _one_line_error(rc, o, err)
    assert time.perf_counter() - t0 < 5  # profile would capture for longer; solve etc. never start
    assert sorted(os.listdir(tmp_path)) == before  # nothing written, no temp file left


@pytest.mark.parametrize("argv", [
    lambda t: ["solve", "--graph", str(t / "g.json"), "--ratio", "1", "--method", "none", "--out", str(t / "g.json")],
    lambda t: ["import", str(t / "p.json"), "--format", "checkmate", "--out", str(t / "p.json")],
    lambda t: ["alloc", "--csv", str(t / "p.csv"), "--out", str(t / "p.csv")],
    lambda t: ["plot", "--plan", str(t / "plan.png"), "--out", str(t / "plan.png")],
])
def test_an_input_is_never_the_output(tmp_path, capsys, argv):
    assert main(["solve", "--model", "chain:4", "--ratio", "1", "--method", "none",
                 "--out", str(tmp_path / "plan.png")]) == 0  # a plan file that happens to end in .png
    from planner.models import load_model

    load_model("chain:4").save(str(tmp_path / "g.json"))
    (tmp_path / "p.csv").write_text(CSV)
    (tmp_path / "p.json").write_text(json.dumps({"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1}], "links": []}))
    capsys.readouterr()
    files = {p: (tmp_path / p).read_bytes() for p in os.listdir(tmp_path)}
    rc, o, err = run(capsys, *argv(tmp_path))
    _one_line_error(rc, o, err)
    assert "also an input" in err
    assert {p: (tmp_path / p).read_bytes() for p in os.listdir(tmp_path)} == files


def test_late_write_failure_still_prints_the_result(tmp_path, capsys, monkeypatch):
    def fail(self, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Plan, "save", fail)
    rc, out, err = run(capsys, "solve", "--model", "chain:8", "--ratio", "0.8", "--method", "coop",
                       "--out", str(tmp_path / "plan.json"))
    assert rc == 2
    assert "status    feasible" in out or "status    optimal" in out  # the result is on stdout
    assert "No space left on device" in err and "not saved" in err and err.count("\n") == 1


def test_no_plan_says_the_out_file_is_stale(tmp_path, capsys):
    out = tmp_path / "plan.json"
    out.write_text("old")
    rc, o, err = run(capsys, "solve", "--model", "chain:8", "--ratio", "0.5", "--method", "none",
                     "--out", str(out))
    assert rc == 3 and "status    infeasible" in o
    assert "not written" in err and "earlier run" in err
    assert out.read_text() == "old"


@pytest.mark.parametrize("umask,expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_honour_the_umask(tmp_path, capsys, umask, expected):
    old = os.umask(umask)
    try:
        for argv in (["solve", "--model", "chain:8", "--ratio", "1", "--method", "none",
                      "--out", str(tmp_path / "plan.json")],
                     ["import", str(tmp_path / "p.csv"), "--format", "minimalloc", "--out", str(tmp_path / "g.json")]):
            (tmp_path / "p.csv").write_text(CSV)
            assert main(argv) == 0
    finally:
        os.umask(old)
    for name in ("plan.json", "g.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == expected


def test_rewriting_a_file_keeps_its_mode(tmp_path, capsys):
    out = tmp_path / "plan.json"
    argv = ["solve", "--model", "chain:8", "--ratio", "1", "--method", "none", "--out", str(out)]
    assert main(argv) == 0
    os.chmod(out, 0o640)
    assert main(argv) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


@pytest.mark.parametrize("name", ["x.txt", "noext", "folder"])
def test_plot_out_without_a_picture_suffix_is_refused(tmp_path, capsys, name):
    pytest.importorskip("matplotlib")
    plan = tmp_path / "plan.json"
    assert main(["solve", "--model", "chain:8", "--ratio", "1", "--method", "none", "--out", str(plan)]) == 0
    (tmp_path / "folder").mkdir()
    capsys.readouterr()
    rc, o, err = run(capsys, "plot", "--plan", str(plan), "--out", str(tmp_path / name))
    _one_line_error(rc, o, err)
    assert not (tmp_path / name).is_file()


def test_plot_writes_atomically_where_it_says(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plan = tmp_path / "plan.json"
    assert main(["solve", "--model", "chain:8", "--ratio", "1", "--method", "none", "--out", str(plan)]) == 0
    capsys.readouterr()
    for name in ("a.png", "b.svg"):
        rc, o, _ = run(capsys, "plot", "--plan", str(plan), "--out", str(tmp_path / "sub" / name))
        assert rc == 0 and (tmp_path / "sub" / name).stat().st_size > 0 and str(tmp_path / "sub" / name) in o
    assert sorted(os.listdir(tmp_path / "sub")) == ["a.png", "b.svg"]  # no temp file left
