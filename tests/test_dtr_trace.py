"""DTR simulator trace import (docs/formats.md) on small hand-written traces."""
from __future__ import annotations

import json

import pytest

from planner.cli import main
from planner.errors import UserError
from planner.importers import importer
from planner.importers.dtr_trace import load_dtr_trace
from planner.registry import solve


def L(**kw):
    return json.dumps(kw)


TRACE = [
    L(INSTRUCTION="CONSTANT", NAME="old"),                       # before START: dropped
    L(INSTRUCTION="MEMORY", NAME="old", MEMORY="999"),
    L(INSTRUCTION="ANNOTATE", ANNOTATION="START"),
    L(INSTRUCTION="CONSTANT", NAME="w"),
    L(INSTRUCTION="MEMORY", NAME="w", MEMORY="4096"),
    L(INSTRUCTION="CONSTANT", NAME="x"),
    L(INSTRUCTION="MEMORY", NAME="x", MEMORY="2048"),
    L(INSTRUCTION="CALL", NAME="aten::mm", ARGS=["x", "w"], RESULT=["y"], TIME="1000"),
    L(INSTRUCTION="MEMORY", NAME="y", MEMORY="8192"),
    L(INSTRUCTION="ALIAS", NAME="y", ALIAS="-1"),
    L(INSTRUCTION="CALL", NAME="aten::view", ARGS=["y"], RESULT=["yv"], TIME="10"),
    L(INSTRUCTION="MEMORY", NAME="yv", MEMORY="8192"),           # a view's MEMORY is ignored
    L(INSTRUCTION="ALIAS", NAME="yv", ALIAS="0"),
    L(INSTRUCTION="CALL", NAME="aten::split", ARGS=["x"], RESULT=["s0", "s1"], TIME="20"),
    L(INSTRUCTION="MEMORY", NAME="s0", MEMORY="1024"),
    L(INSTRUCTION="ALIAS", NAME="s0", ALIAS="-1"),
    L(INSTRUCTION="MEMORY", NAME="s1", MEMORY="1024"),
    L(INSTRUCTION="ALIAS", NAME="s1", ALIAS="-1"),
    L(INSTRUCTION="MUTATE", NAME="aten::relu_", ARGS=["yv"], MUTATE=["0"], TIME="500"),  # via a view
    L(INSTRUCTION="COPY", DST="y2", SRC="y"),
    L(INSTRUCTION="RELEASE", NAME="y"),
    L(INSTRUCTION="RELEASE", NAME="s1"),
    L(INSTRUCTION="ANNOTATE", ANNOTATION="BACKWARD"),
    L(INSTRUCTION="CALL", NAME="aten::sum", ARGS=["y2", "s0"], RESULT=["l"], TIME="200"),
    L(INSTRUCTION="MEMORY", NAME="l", MEMORY="4"),
    L(INSTRUCTION="ALIAS", NAME="l", ALIAS="-1"),
    L(INSTRUCTION="COPY_FROM", DST="s0", SRC="l"),
    L(INSTRUCTION="MUTATE", NAME="aten::add_", ARGS=["w", "l"], MUTATE=["0"], TIME="300"),
    L(INSTRUCTION="RELEASE", NAME="y2"),
    L(INSTRUCTION="RELEASE", NAME="yv"),
    L(INSTRUCTION="RELEASE", NAME="never-seen"),                 # unknown release: ignored
]


def write(tmp_path, lines, name="t.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def test_hand_written_trace(tmp_path):
    g = load_dtr_trace(write(tmp_path, TRACE))
    names = [t.name for t in g.tensors]
    assert "old" not in names
    by = {t.name: t for t in g.tensors}
    assert by["w"].resident and by["x"].resident and by["w"].bytes == 4096
    assert by["yv"].alias_of == by["y"].id and by["yv"].bytes == 0
    # the mutation through the view writes a new version of y's storage, in place
    y1 = by["y'"]
    assert y1.inplace_of == by["y"].id and y1.bytes == 8192
    relu = g.ops[y1.producer]
    assert relu.mutated == (y1.id,) and by["y"].id in relu.inputs and abs(relu.cost - 5e-7) < 1e-15
    split = g.ops[by["s0"].producer]
    assert split.outputs == (by["s0"].id, by["s1"].id)
    # COPY made y2 a handle of y, rebound to y' by the mutation: sum reads y'
    total = g.ops[by["l"].producer]
    assert total.inputs == (y1.id, by["s0"].id) and total.meta.get("backward")
    assert by["l"].kind == "gradient" and not g.ops[0].meta.get("backward")
    w1 = by["w'"]
    assert w1.kind == "param_update" and w1.inplace_of == by["w"].id
    # still named at the end: w' (w), x, l (l and s0); released: y2, yv, s1
    assert set(g.required) == {w1.id, by["x"].id, by["l"].id}


@pytest.mark.parametrize("method", ["coop", "dtr", "dte", "dtr-ideal", "none"])
def test_imported_trace_replays_with_every_method(tmp_path, method):
    g = load_dtr_trace(write(tmp_path, TRACE))
    res = solve(g, 1 << 20, method)
    assert res.has_plan and res.validation["valid"], res.message


def test_backward_from_op_names_without_annotation(tmp_path):
    lines = [L(INSTRUCTION="CONSTANT", NAME="x"), L(INSTRUCTION="MEMORY", NAME="x", MEMORY="64"),
             L(INSTRUCTION="CALL", NAME="relu", ARGS=["x"], RESULT=["a"], TIME="1"),
             L(INSTRUCTION="MEMORY", NAME="a", MEMORY="64"), L(INSTRUCTION="ALIAS", NAME="a", ALIAS="-1"),
             L(INSTRUCTION="CALL", NAME="relu_backward", ARGS=["a"], RESULT=["ga"], TIME="1"),
             L(INSTRUCTION="MEMORY", NAME="ga", MEMORY="64"), L(INSTRUCTION="ALIAS", NAME="ga", ALIAS="-1"),
             L(INSTRUCTION="CALL", NAME="mul", ARGS=["ga"], RESULT=["gb"], TIME="1"),
             L(INSTRUCTION="MEMORY", NAME="gb", MEMORY="64"), L(INSTRUCTION="ALIAS", NAME="gb", ALIAS="-1")]
    g = load_dtr_trace(write(tmp_path, lines))
    assert [bool(o.meta.get("backward")) for o in g.ops] == [False, True, True]


BAD = [
    (2, "not valid JSON", lambda t: t[:1] + ["{oops"] + t[1:]),
    (8, "unknown tensor handle 'ghost'",
     lambda t: t[:7] + [L(INSTRUCTION="CALL", NAME="f", ARGS=["ghost"], RESULT=["z"], TIME="1")] + t[7:]),
    (8, "field TIME is not an integer",
     lambda t: t[:7] + [L(INSTRUCTION="CALL", NAME="f", ARGS=["x"], RESULT=["z"], TIME="fast")] + t[7:]),
    (8, "unknown instruction 'JUMP'", lambda t: t[:7] + [L(INSTRUCTION="JUMP")] + t[7:]),
    (8, "missing field NAME", lambda t: t[:7] + [L(INSTRUCTION="RELEASE")] + t[7:]),
    (8, "MEMORY for 'q'", lambda t: t[:7] + [L(INSTRUCTION="MEMORY", NAME="q", MEMORY="1")] + t[7:]),
    (19, "MUTATE index 3 out of range",
     lambda t: t[:18] + [L(INSTRUCTION="MUTATE", NAME="f_", ARGS=["yv"], MUTATE=["3"], TIME="1")] + t[19:]),
    (8, "result y of this CALL has no MEMORY line", lambda t: t[:8] + t[9:]),  # y's MEMORY dropped
    (8, "aliases ARGS[4]", lambda t: t[:9] + [L(INSTRUCTION="ALIAS", NAME="y", ALIAS="4")] + t[10:]),
]


@pytest.mark.parametrize("line,text,edit", BAD, ids=[b[1][:24] for b in BAD])
def test_malformed_lines_name_the_line(tmp_path, line, text, edit):
    path = write(tmp_path, edit(list(TRACE)))
    with pytest.raises(UserError) as exc:
        load_dtr_trace(path)
    assert f"{path}:{line}:" in str(exc.value) and text in str(exc.value)


def test_import_command(tmp_path, capsys):
    src = write(tmp_path, TRACE)
    out = str(tmp_path / "g.json")
    assert main(["import", src, "--format", "dtr-trace", "--out", out, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["ops"] == 6
    assert main(["solve", "--graph", out, "--ratio", "1.0", "--method", "coop", "--json"]) == 0
    bad = write(tmp_path, ["{oops"], "bad.jsonl")
    assert main(["import", bad, "--format", "dtr-trace", "--out", str(tmp_path / "b.json")]) == 2
    assert "bad.jsonl:1:" in capsys.readouterr().err
    assert importer("dtr-trace") is load_dtr_trace


def test_trace_bytes_are_exact():
    # docs/formats.md: a trace's baseline peak is the highest total of live storages, constants
    # included, in the trace's own bytes (no allocator padding)
    lines = [L(INSTRUCTION="CONSTANT", NAME="x"), L(INSTRUCTION="MEMORY", NAME="x", MEMORY="100"),
             L(INSTRUCTION="CALL", NAME="f", ARGS=["x"], RESULT=["a"], TIME="1"),
             L(INSTRUCTION="MEMORY", NAME="a", MEMORY="30"), L(INSTRUCTION="ALIAS", NAME="a", ALIAS="-1"),
             L(INSTRUCTION="CALL", NAME="g", ARGS=["a"], RESULT=["b"], TIME="1"),
             L(INSTRUCTION="MEMORY", NAME="b", MEMORY="7"), L(INSTRUCTION="ALIAS", NAME="b", ALIAS="-1"),
             L(INSTRUCTION="RELEASE", NAME="a")]
    import tempfile
    from pathlib import Path

    from planner.analysis import baseline_peak

    with tempfile.TemporaryDirectory() as d:
        g = load_dtr_trace(write(Path(d), lines))
    assert g.alignment == 1 and baseline_peak(g) == 137
