"""Fuzzing every loader and importer (issue 34): any bytes in, a result or one UserError out.

Three kinds of input per format: arbitrary bytes; a valid document with one to three fields
replaced, deleted or duplicated by arbitrary JSON values (huge integers, Infinity, NaN,
booleans, strings, nesting); and the valid bytes truncated or gzipped and truncated. A loader
may accept the input (then what it returns must be usable: a plan is validated, a graph's
baseline peak computed) or raise UserError with a one-line message. Anything else (a
traceback) fails the test.
"""
from __future__ import annotations

import copy
import csv
import gzip
import io
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.analysis import baseline_peak
from planner.errors import UserError
from planner.graph import Graph
from planner.importers.checkmate import load_checkmate
from planner.importers.dtr_trace import load_dtr_trace
from planner.importers.minimalloc import load_minimalloc, read_problem
from planner.models import load_model
from planner.plan import Plan
from planner.registry import solve
from planner.study.spec import StudySpec
from planner.validator import validate

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=6)
    | st.sampled_from([2**53 + 1, 2**63, -1, 0, 1.5, "1", "false", "compute", "free"]),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=6)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


@st.composite
def mutated(draw, doc):
    """``doc`` with a few fields replaced, deleted or duplicated."""
    d = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(d) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = d
        for k in path[:-1]:
            parent = parent[k]
        key, how = path[-1], draw(st.sampled_from(["replace", "replace", "delete", "dup"]))
        if how == "replace":
            parent[key] = draw(JSON)
        elif how == "delete":
            del parent[key]
        elif isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:
            parent[key + "_"] = copy.deepcopy(parent[key])
    return d


@st.composite
def damaged(draw, raw: bytes):
    """The valid bytes truncated, a byte flipped, or gzipped and truncated."""
    how = draw(st.sampled_from(["cut", "flip", "gzcut", "nonutf8"]))
    if how == "gzcut":
        z = gzip.compress(raw)
        return z[: draw(st.integers(0, len(z) - 1))]
    if how == "nonutf8":
        i = draw(st.integers(0, len(raw)))
        return raw[:i] + b"\xff\xfe" + raw[i:]
    if how == "cut":
        return raw[: draw(st.integers(0, len(raw)))]
    i = draw(st.integers(0, len(raw) - 1))
    return raw[:i] + bytes([raw[i] ^ draw(st.integers(1, 255))]) + raw[i + 1:]


def _dump(doc) -> bytes:
    return json.dumps(doc).encode()  # Infinity/NaN written as Python does: what a user's tool may emit


def _written(tmp_path_factory, data: bytes, name: str):
    """``data`` in a fresh folder as ``name`` (the loaders read paths, some by suffix)."""
    p = tmp_path_factory.mktemp("fuzz") / name
    p.write_bytes(data)
    return p


def _load_or_user_error(load, path, check=lambda x: None):
    try:
        x = load(str(path))
    except UserError as exc:
        assert "\n" not in str(exc), str(exc)
        return None
    check(x)
    return x


def inputs(doc, raw: bytes | None = None):
    raw = raw if raw is not None else _dump(doc)
    return st.one_of(st.binary(max_size=200), mutated(doc).map(_dump), damaged(raw))


# ---------------------------------------------------------------- graph JSON
G = load_model("chain:3")
GRAPH_DOC = G.to_dict()


def _usable_graph(g: Graph) -> None:
    baseline_peak(g)
    r = solve(g, baseline_peak(g), "none")
    assert r.status in ("optimal", "feasible", "infeasible")


@SETTINGS
@given(data=inputs(GRAPH_DOC))
def test_graph_json(tmp_path_factory, data):
    _load_or_user_error(Graph.load, _written(tmp_path_factory, data, "g.json"), _usable_graph)


# ---------------------------------------------------------------- plan JSON (validated after loading)
PLAN_DOC = solve(G, baseline_peak(G), "none").plan.to_dict()


def _usable_plan(plan: Plan) -> None:
    rep = validate(G, plan)
    assert isinstance(rep.valid, bool)


@SETTINGS
@given(data=inputs(PLAN_DOC))
def test_plan_json(tmp_path_factory, data):
    _load_or_user_error(Plan.load, _written(tmp_path_factory, data, "p.json"), _usable_plan)


# ---------------------------------------------------------------- study spec
SPEC_DOC = {"kind": "study", "schema_version": 1, "name": "s", "time_limit": 5.0, "seed": 0, "threads": 1,
            "wall_limit": None, "save_plans": False, "preset": None, "extra": {},
            "grids": [{"models": ["chain:4"], "ratios": [0.5, 1.0], "methods": ["none", "coop/no-partition"]}]}


def _usable_spec(spec: StudySpec) -> None:
    try:
        spec.check()
    except UserError as exc:
        assert "\n" not in str(exc)
        return
    assert all(c.params() is not None for c in spec.cells())


@SETTINGS
@given(data=inputs(SPEC_DOC))
def test_study_spec(tmp_path_factory, data):
    _load_or_user_error(StudySpec.load, _written(tmp_path_factory, data, "study.json"), _usable_spec)


# ---------------------------------------------------------------- dtr-trace (JSON lines)
TRACE = [
    {"INSTRUCTION": "ANNOTATE", "ANNOTATION": "START"},
    {"INSTRUCTION": "CONSTANT", "NAME": "w"}, {"INSTRUCTION": "MEMORY", "NAME": "w", "MEMORY": "64"},
    {"INSTRUCTION": "CALL", "NAME": "mm", "ARGS": ["w"], "RESULT": ["y"], "TIME": "10"},
    {"INSTRUCTION": "MEMORY", "NAME": "y", "MEMORY": "128"}, {"INSTRUCTION": "ALIAS", "NAME": "y", "ALIAS": "-1"},
    {"INSTRUCTION": "MUTATE", "NAME": "relu_", "ARGS": ["y"], "MUTATE": ["0"], "TIME": "5"},
    {"INSTRUCTION": "CALL", "NAME": "backward", "ARGS": ["y", "w"], "RESULT": ["gw"], "TIME": "20"},
    {"INSTRUCTION": "MEMORY", "NAME": "gw", "MEMORY": "64"}, {"INSTRUCTION": "ALIAS", "NAME": "gw", "ALIAS": "-1"},
    {"INSTRUCTION": "RELEASE", "NAME": "y"},
]


def _trace_bytes(rows) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


@SETTINGS
@given(data=st.one_of(st.binary(max_size=200), mutated(TRACE).map(_trace_bytes), damaged(_trace_bytes(TRACE))))
def test_dtr_trace(tmp_path_factory, data):
    _load_or_user_error(load_dtr_trace, _written(tmp_path_factory, data, "trace.jsonl"), _usable_graph)


# ---------------------------------------------------------------- checkmate node-link JSON
CHECKMATE = {"directed": True, "nodes": [{"id": 0, "cost_cpu": 1.0, "cost_ram": 10, "backward": False},
                                         {"id": 1, "cost_cpu": 2.0, "cost_ram": 20, "backward": False},
                                         {"id": 2, "cost_cpu": 1.0, "cost_ram": 10, "backward": True}],
             "links": [{"source": 0, "target": 1}, {"source": 1, "target": 2}, {"source": 0, "target": 2}]}


@SETTINGS
@given(data=inputs(CHECKMATE))
def test_checkmate(tmp_path_factory, data):
    _load_or_user_error(load_checkmate, _written(tmp_path_factory, data, "graph.json"), _usable_graph)


# ---------------------------------------------------------------- minimalloc CSV
CSV_ROWS = [["id", "lower", "upper", "size"], ["a", "0", "3", "8"], ["b", "1", "4", "16"], ["c", "3", "5", "8"]]
CELL = st.one_of(st.text(max_size=8), st.integers(-(2**70), 2**70).map(str),
                 st.sampled_from(["9223372036854775808", "4611686018427387904", "1e3", "", " 7 ", "offset"]))


def _csv_bytes(rows) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


@st.composite
def csv_mutated(draw):
    rows = copy.deepcopy(CSV_ROWS)
    for _ in range(draw(st.integers(1, 3))):
        r = draw(st.integers(0, len(rows) - 1))
        if not rows[r]:
            continue
        c = draw(st.integers(0, len(rows[r]) - 1))
        rows[r][c] = draw(CELL)
    return _csv_bytes(rows)


def _usable_csv(path):
    from planner.alloc import solve_dsa

    buffers, _ = read_problem(path)
    sol = solve_dsa(buffers, None, time_limit=1.0, greedy_only=True)
    assert sol.peak is None or sol.peak >= 0


@SETTINGS
@given(data=st.one_of(st.binary(max_size=200), csv_mutated(), damaged(_csv_bytes(CSV_ROWS))))
def test_minimalloc_csv(tmp_path_factory, data):
    p = _written(tmp_path_factory, data, "problem.csv")
    if _load_or_user_error(load_minimalloc, p, _usable_graph) is not None:
        _usable_csv(str(p))


# ---------------------------------------------------------------- the same at the command line
CLI_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
CLI_CASES = {
    "dtr-trace": st.one_of(st.binary(max_size=100), mutated(TRACE).map(_trace_bytes)),
    "checkmate": inputs(CHECKMATE),
    "minimalloc": st.one_of(st.binary(max_size=100), csv_mutated()),
}


def _cli(capsys, argv) -> int:
    from planner.cli import main

    rc = main(argv)
    _, err = capsys.readouterr()
    assert rc in (0, 1, 2, 3), rc
    if rc == 2:
        assert err.startswith("error: ") and err.count("\n") == 1, err
    return rc


@CLI_SETTINGS
@given(fmt=st.sampled_from(sorted(CLI_CASES)), data=st.data())
def test_import_command(tmp_path_factory, capsys, fmt, data):
    d = tmp_path_factory.mktemp("cli")
    src, out = d / "in", d / "g.json"
    src.write_bytes(data.draw(CLI_CASES[fmt]))
    rc = _cli(capsys, ["import", str(src), "--format", fmt, "--out", str(out)])
    assert out.is_file() == (rc == 0)  # written only on success, never half


@CLI_SETTINGS
@given(data=inputs(PLAN_DOC))
def test_validate_command(tmp_path_factory, capsys, data):
    p = tmp_path_factory.mktemp("cli") / "plan.json"
    p.write_bytes(data)
    _cli(capsys, ["validate", "--plan", str(p), "--model", "chain:3"])


@CLI_SETTINGS
@given(data=st.one_of(st.binary(max_size=100), csv_mutated()))
def test_alloc_command(tmp_path_factory, capsys, data):
    d = tmp_path_factory.mktemp("cli")
    (d / "p.csv").write_bytes(data)
    rc = _cli(capsys, ["alloc", "--csv", str(d / "p.csv"), "--greedy", "--out", str(d / "s.csv")])
    assert (d / "s.csv").is_file() == (rc == 0)
