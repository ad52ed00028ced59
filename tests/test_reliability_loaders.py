"""Issue 34, classes "typed fields at load", "sizes beyond the maximum" and "messages": graph,
plan and study files are read field by field, the message names the file, the record and the
field; one rule for a plan of another graph; content-only graph hashes."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from cliutil import _err2, run

from planner.analysis import baseline_peak
from planner.cli import main
from planner.models import load_model
from planner.registry import solve


def _graph_doc():
    return load_model("chain:4").to_dict()


# ---------------------------------------------------------------- graph JSON
GRAPH_CASES = [
    ("cost Infinity", lambda d: d["ops"][2].__setitem__(4, float("inf")), ["op 2", "cost must be finite"]),
    ("bytes 100.7", lambda d: d["tensors"][1].__setitem__(0, 100.7), ["tensor 1", "bytes must be an integer"]),
    ("bytes true", lambda d: d["tensors"][1].__setitem__(0, True), ["tensor 1", "bytes must be an integer"]),
    ("random 'false'", lambda d: d["ops"][0].__setitem__(8, "false"), ["op 0", "random must be true or false"]),
    ("bytes 2^63", lambda d: d["tensors"][1].__setitem__(0, 2**63), ["tensor 1", "bytes must be <="]),
    ("bytes 2^62", lambda d: d["tensors"][1].__setitem__(0, 2**62), ["tensor 1", "bytes must be <="]),
    ("sum beyond 2^53", lambda d: [t.__setitem__(0, 2**52) for t in d["tensors"][:3]], ["beyond the maximum"]),
    ("short row", lambda d: d["tensors"].__setitem__(0, [8]), ["tensor 0", "row must have 7 entries"]),
    ("no ops key", lambda d: d.pop("ops"), ["missing field 'ops'"]),
    ("no ops", lambda d: (d.__setitem__("ops", []), d.__setitem__("tensors", []), d.__setitem__("required", [])),
     ["no ops"]),
    ("unknown tensor", lambda d: d["ops"][1][2].append(99), ["unknown tensor 99"]),
]


@pytest.mark.parametrize("name,mutate,needles", GRAPH_CASES, ids=[c[0] for c in GRAPH_CASES])
def test_graph_fields_are_typed_and_named(tmp_path, capsys, name, mutate, needles):
    d = _graph_doc()
    mutate(d)
    p = tmp_path / "g.json"
    p.write_text(json.dumps(d))
    rc, out, err = run(capsys, "info", "--graph", str(p))
    _err2(rc, out, err, str(p), *needles)  # the file is named too (ambiguous among several)


def test_study_names_the_bad_graph_file_among_several(tmp_path, capsys):
    good, bad = tmp_path / "a.json", tmp_path / "b.json"
    load_model("chain:4").save(str(good))
    d = _graph_doc()
    d["ops"][1][2].append(99)
    bad.write_text(json.dumps(d))
    rc, out, err = run(capsys, "study", "--models", f"{good},{bad}", "--ratios", "1", "--methods", "none",
                       "--out", str(tmp_path / "s"))
    _err2(rc, out, err, str(bad), "unknown tensor 99")
    assert not (tmp_path / "s").exists()


def test_missing_graph_file_in_study_models_is_named_as_a_file(tmp_path, capsys):
    rc, out, err = run(capsys, "study", "--models", str(tmp_path / "nope.json"), "--ratios", "1",
                       "--methods", "none", "--out", str(tmp_path / "s"))
    _err2(rc, out, err, "graph file not found", "nope.json")


# ---------------------------------------------------------------- plan JSON
def _plan_file(tmp_path, mutate):
    g = load_model("chain:4")
    d = solve(g, baseline_peak(g), "none").plan.to_dict()
    mutate(d)
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(d))
    return p


def _first_compute(d):
    return next(s for s in d["steps"] if s[0] == "compute" and s[2])


PLAN_CASES = [
    ("fractional offset", lambda d: _first_compute(d)[2][0].__setitem__(1, 0.5), ["offsets[0] offset must be an integer"]),
    ("fractional budget", lambda d: d.__setitem__("budget", 1000.5), ["budget must be an integer"]),
    ("output listed twice", lambda d: _first_compute(d)[2].append(list(_first_compute(d)[2][0])),
     ["lists tensor", "twice"]),
    ("true as op id", lambda d: _first_compute(d).__setitem__(1, True), ["op must be an integer"]),
    ("no steps", lambda d: d.pop("steps"), ["missing field 'steps'"]),
    ("short row", lambda d: d["steps"].__setitem__(0, ["compute"]), ["step 0", "compute row must have 3 entries"]),
    ("unknown kind", lambda d: d["steps"].__setitem__(0, ["frobnicate", 1]), ["step 0", "unknown kind 'frobnicate'"]),
    ("budget 2^63", lambda d: d.__setitem__("budget", 2**63), ["budget must be <="]),
]


@pytest.mark.parametrize("name,mutate,needles", PLAN_CASES, ids=[c[0] for c in PLAN_CASES])
def test_plan_fields_are_typed_and_named(tmp_path, capsys, name, mutate, needles):
    p = _plan_file(tmp_path, mutate)
    rc, out, err = run(capsys, "validate", "--plan", str(p), "--model", "chain:4")
    _err2(rc, out, err, str(p), *needles)


def test_all_violations_are_counted(tmp_path, capsys):
    p = _plan_file(tmp_path, lambda d: None)
    g = load_model("chain:64")
    plan = replace(solve(g, baseline_peak(g), "none").plan, budget=1)  # every allocation breaks a rule
    plan.save(str(p))
    rc, out, _ = run(capsys, "validate", "--plan", str(p))
    assert rc == 1
    head = out.splitlines()[0]
    n = int(head.split()[1])
    assert n > 200 and f"INVALID: {n} violation(s), the first 200 listed" == head


# ---------------------------------------------------------------- one rule for a plan of another graph
def test_plan_for_another_graph_is_exit_2_in_validate_execute_and_plot(tmp_path, capsys):
    p = tmp_path / "plan.json"
    assert main(["solve", "--model", "chain:8", "--ratio", "1", "--method", "none", "--out", str(p)]) == 0
    other = tmp_path / "other.json"
    load_model("chain:9").save(str(other))
    capsys.readouterr()
    for argv in (["validate", "--plan", str(p), "--graph", str(other)],
                 ["execute", "--plan", str(p), "--graph", str(other), "--device", "cpu", "--repeats", "0"],
                 ["plot", "--plan", str(p), "--graph", str(other), "--out", str(tmp_path / "x.png")]):
        rc, out, err = run(capsys, *argv)
        _err2(rc, out, err, "made for another graph")


def test_plan_of_a_graph_file_suggests_graph(tmp_path, capsys):
    g = tmp_path / "mine.json"
    d = load_model("chain:4").to_dict()
    d["name"] = "mine.json"
    g.write_text(json.dumps(d))
    p = tmp_path / "plan.json"
    assert main(["solve", "--graph", str(g), "--ratio", "1", "--method", "none", "--out", str(p)]) == 0
    capsys.readouterr()
    for cmd in ("validate", "plot"):
        rc, out, err = run(capsys, cmd, "--plan", str(p))
        _err2(rc, out, err, "give --graph FILE")
    assert main(["validate", "--plan", str(p), "--graph", str(g)]) == 0


def test_execute_validates_the_plan_first_and_names_the_rule(tmp_path, capsys):
    pytest.importorskip("torch")
    from planner.executor.testplans import corrupt

    g = load_model("gpt3-2.7b-tiny")
    gp, bp = tmp_path / "g.json.gz", tmp_path / "bad.json"
    g.save(str(gp))
    bad, _ = corrupt(g, solve(g, int(baseline_peak(g) * 1.25), "none").plan)
    bad.save(str(bp))
    rc, out, err = run(capsys, "execute", "--plan", str(bp), "--graph", str(gp), "--device", "cpu", "--repeats", "0")
    assert rc == 1 and out == "" and "address-overlap" in err and err.count("\n") == 1


# ---------------------------------------------------------------- alloc capacity, hashes, zero-cost graphs
def test_alloc_names_the_buffer_beyond_the_capacity(tmp_path, capsys):
    p = tmp_path / "p.csv"
    p.write_text("id,lower,upper,size\nsmall,0,2,4\nbig,1,3,8\n")
    rc, out, _ = run(capsys, "alloc", "--csv", str(p), "--capacity", "7")
    assert rc == 3 and "buffer 'big' alone needs 8 bytes, more than the capacity 7" in out


def test_the_same_trace_from_two_paths_has_one_hash(tmp_path, capsys):
    trace = "\n".join(json.dumps(r) for r in [
        {"INSTRUCTION": "CONSTANT", "NAME": "w"}, {"INSTRUCTION": "MEMORY", "NAME": "w", "MEMORY": "64"},
        {"INSTRUCTION": "CALL", "NAME": "mm", "ARGS": ["w"], "RESULT": ["y"], "TIME": "10"},
        {"INSTRUCTION": "MEMORY", "NAME": "y", "MEMORY": "128"}, {"INSTRUCTION": "ALIAS", "NAME": "y", "ALIAS": "-1"}])
    hashes = []
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        src = tmp_path / sub / "t.jsonl"
        src.write_text(trace)
        assert main(["import", str(src), "--format", "dtr-trace", "--out", str(tmp_path / sub / "g.json"),
                     "--json"]) == 0
        hashes.append(json.loads(capsys.readouterr().out)["graph_hash"])
    assert hashes[0] == hashes[1]
    # a plan made on one carries over to the other
    pa = tmp_path / "a" / "plan.json"
    assert main(["solve", "--graph", str(tmp_path / "a" / "g.json"), "--ratio", "1", "--method", "none",
                 "--out", str(pa)]) == 0
    assert main(["validate", "--plan", str(pa), "--graph", str(tmp_path / "b" / "g.json")]) == 0


def _zero_cost_checkmate(tmp_path, n=6):
    nodes = [{"id": i, "cost_cpu": 0, "cost_ram": 100, "backward": i >= n} for i in range(2 * n)]
    links = [{"source": i, "target": i + 1} for i in range(2 * n - 1)]
    links += [{"source": n - 1 - k, "target": n + k} for k in range(1, n)]
    src = tmp_path / "zero.json"
    src.write_text(json.dumps({"nodes": nodes, "links": links}))
    out = tmp_path / "zg.json"
    assert main(["import", str(src), "--format", "checkmate", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("method", ["none", "coop", "dtr", "dte", "lp", "checkmate", "exact"])
def test_every_method_returns_a_result_on_a_zero_cost_graph(tmp_path, capsys, method):
    g = _zero_cost_checkmate(tmp_path)
    capsys.readouterr()
    rc, out, err = run(capsys, "solve", "--graph", str(g), "--ratio", "0.5", "--method", method,
                       "--time-limit", "5")
    assert rc in (0, 3), err
    assert "status" in out


def test_empty_checkmate_graph_is_refused(tmp_path, capsys):
    src = tmp_path / "empty.json"
    src.write_text(json.dumps({"nodes": [], "links": []}))
    rc, out, err = run(capsys, "import", str(src), "--format", "checkmate", "--out", str(tmp_path / "g.json"))
    _err2(rc, out, err, "no nodes")
