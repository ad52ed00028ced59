"""`planner study` on the command line: grids, presets, specs, bad input as one-line errors."""
from __future__ import annotations

import json
import sys

import pytest

from planner.cli import main


def _run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_study_json_and_rerun_from_spec(tmp_path, capsys):
    out = tmp_path / "s"
    rc, o, err = _run(capsys, "study", "--models", "chain:8", "--ratios", "0.6,1.0", "--methods", "none,coop",
                      "--out", str(out), "--jobs", "2", "--json", "--no-plots")
    assert rc == 0
    d = json.loads(o)
    assert d["cells"] == 4 and d["ran"] == 4
    assert "4/4 done" in err  # progress bar on stderr
    rc, o, _ = _run(capsys, "study", "--spec", str(out / "study.json"), "--json", "--no-plots")
    assert rc == 0 and json.loads(o)["ran"] == 0 and json.loads(o)["skipped"] == 4


@pytest.mark.parametrize("argv,needle", [
    (["--models", "nope", "--ratios", "0.5", "--methods", "none"], "unknown model"),
    (["--models", "chain:8", "--ratios", "0.5", "--methods", "nope"], "unknown method"),
    (["--models", "chain:8", "--ratios", "0.3:0.9", "--methods", "none"], "malformed ratios"),
    (["--models", "chain:8", "--ratios", "1.2", "--methods", "none"], "outside"),
    (["--models", "chain:8", "--methods", "none"], "needs --models, --ratios and --methods"),
    (["--preset", "nope"], "unknown preset"),
    (["--preset", "coop-paper-tiny", "--models", "chain:8"], "exactly one"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, argv, needle):
    rc, o, err = _run(capsys, "study", *argv, "--out", str(tmp_path / "x"))
    assert rc == 2 and o == ""
    assert needle in err and err.count("\n") == 1


def test_unwritable_out(tmp_path, capsys):
    f = tmp_path / "f"
    f.write_text("")
    rc, _, err = _run(capsys, "study", "--models", "chain:8", "--ratios", "0.5", "--methods", "none",
                      "--out", str(f / "x"))
    assert rc == 2 and "cannot write" in err


def test_ray_backend_without_ray_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # ray is in the dev extras: hide it (import fails)
    rc, _, err = _run(capsys, "study", "--models", "chain:8", "--ratios", "0.5", "--methods", "none",
                      "--backend", "ray", "--out", str(tmp_path / "r"))
    assert rc == 2 and "pip install" in err and "ray" in err and err.count("\n") == 1
