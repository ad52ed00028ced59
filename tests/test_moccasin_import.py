"""planner import --format moccasin: Moccasin's layered-graph node-link JSON -> Graph."""
import json
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.errors import UserError
from planner.graph import Graph
from planner.importers.moccasin import load_moccasin, moccasin_dict
from planner.synthetic import layered


def _write(tmp_path, d, name="g.json"):
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return str(p)


def _check_round_trip(g, g2):
    """Ops, costs, output sizes, inputs (by producer), order and required outputs agree."""
    assert len(g2.ops) == len(g.ops)
    for o, o2 in zip(g.ops, g2.ops):
        assert o2.cost == o.cost
        assert g2.tensors[o2.outputs[0]].bytes == g.tensors[o.outputs[0]].bytes
        ins = sorted(g.tensors[t].producer for t in o.inputs if g.tensors[t].producer is not None)
        ins2 = sorted(g2.tensors[t].producer for t in o2.inputs if g2.tensors[t].producer is not None)
        assert ins2 == ins
        assert o2.meta["moccasin_name"] == o.id
    assert sorted(g2.tensors[t].producer for t in g2.required) == sorted(g.tensors[t].producer for t in g.required)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 1000))
def test_layered_round_trip(tmp_path_factory, n, seed):
    g = layered(n, seed)
    g2 = load_moccasin(_write(tmp_path_factory.mktemp("m"), moccasin_dict(g)))
    _check_round_trip(g, g2)
    assert g2.alignment == 1 and g2.meta["order"] == "graph.order"


def test_tags_are_read_names_may_be_strings_and_params_are_resident(tmp_path):
    # custom attribute names (the tags say which), string names, nodes listed out of order,
    # graph.order giving the sequence
    d = {"directed": True, "multigraph": False,
         "graph": {"node_output_cost_tag": "mem", "node_duration_tag": "time",
                   "node_param_cost_tag": "weights", "order": ["a", "b", "c", "d"]},
         "nodes": [{"name": "c", "mem": 5, "time": 3.0, "weights": 0},
                   {"name": "a", "mem": 2, "time": 1.0, "weights": 7},
                   {"name": "d", "mem": 1, "time": 0.5, "weights": 0},
                   {"name": "b", "mem": 4, "time": 2.0, "weights": 0}],
         "links": [{"0": "a", "1": "b"}, {"0": "a", "1": "c"}, {"0": "b", "1": "c"}, {"0": "c", "1": "d"},
                   {"0": "b", "1": "d"}]}
    g = load_moccasin(_write(tmp_path, d))
    assert [o.name for o in g.ops] == ["node a", "node b", "node c", "node d"]
    assert [o.cost for o in g.ops] == [1.0, 2.0, 3.0, 0.5]
    params = [t for t in g.tensors if t.kind == "param"]
    assert len(params) == 1 and params[0].bytes == 7 and params[0].producer is None
    assert g.consumers[params[0].id] == (0,)
    assert [g.tensors[t].producer for t in g.required] == [3]
    assert g.meta["tags"]["node_output_cost_tag"] == "mem"
    from planner.analysis import baseline_peak
    # plain schedule at c: the parameter 7 + a 2 + b 4 + c 5 (b is still read by d)
    assert baseline_peak(g) == 7 + 2 + 4 + 5


def test_no_order_falls_back_to_topological(tmp_path):
    d = {"graph": {"node_output_cost_tag": "o", "node_duration_tag": "t"},
         "nodes": [{"name": 2, "o": 1, "t": 1}, {"name": 1, "o": 1, "t": 1}, {"name": 0, "o": 1, "t": 1}],
         "links": [{"0": 2, "1": 0}, {"0": 0, "1": 1}]}
    g = load_moccasin(_write(tmp_path, d))
    assert [o.meta["moccasin_name"] for o in g.ops] == [2, 0, 1]
    assert g.meta["order"] == "topological"


_OK = {"graph": {"node_output_cost_tag": "o", "node_duration_tag": "t", "order": [0, 1]},
       "nodes": [{"name": 0, "o": 1, "t": 1}, {"name": 1, "o": 1, "t": 1}], "links": [{"0": 0, "1": 1}]}


def _bad(**over):
    d = json.loads(json.dumps(_OK))
    for k, v in over.items():
        d[k] = v
    return d


@pytest.mark.parametrize("bad, words", [
    (_bad(graph={"node_duration_tag": "t"}), "node_output_cost_tag"),
    (_bad(graph=None), "'graph'"),
    (_bad(nodes=[{"id": 0, "o": 1, "t": 1}]), "node 0 has no name"),
    (_bad(nodes=[{"name": 0, "t": 1}, {"name": 1, "o": 1, "t": 1}]), "node 0 has no o"),
    (_bad(nodes=[{"name": 0, "o": "x", "t": 1}, {"name": 1, "o": 1, "t": 1}]), "non-numeric o"),
    (_bad(nodes=[{"name": 0, "o": 1, "t": -1}, {"name": 1, "o": 1, "t": 1}]), "negative"),
    (_bad(links=[{"source": 0, "target": 1}]), 'without "0"/"1"'),
    (_bad(links=[{"0": 0, "1": 9}]), "unknown node"),
    (_bad(links=[{"0": [0], "1": 1}]), "unknown node"),
    (_bad(links=[{"0": 0, "1": 1}, {"0": 1, "1": 0}], graph={"node_output_cost_tag": "o",
                                                            "node_duration_tag": "t"}), "cycle"),
    (_bad(graph={"node_output_cost_tag": "o", "node_duration_tag": "t", "order": [1, 0]}), "before its input"),
    (_bad(graph={"node_output_cost_tag": "o", "node_duration_tag": "t", "order": [0]}), "leaves out node 1"),
    (_bad(graph={"node_output_cost_tag": "o", "node_duration_tag": "t", "order": [0, 0, 1]}), "twice"),
    ({"graph": {}}, "no 'nodes'"),
])
def test_malformed_is_a_one_line_user_error(tmp_path, bad, words):
    with pytest.raises(UserError) as e:
        load_moccasin(_write(tmp_path, bad))
    assert words in str(e.value) and "\n" not in str(e.value)


def test_moccasin_dict_refuses_other_shapes():
    from planner.synthetic import chain
    with pytest.raises(ValueError):
        moccasin_dict(chain(3))  # multi-output backward ops


def test_cli_import_then_solve_and_checkmate_format_refuses(tmp_path):
    g = layered(30, 4)
    d = moccasin_dict(g)
    random.Random(0).shuffle(d["nodes"])  # the node list's order does not matter, graph.order does
    src = _write(tmp_path, d)
    out = tmp_path / "g.json.gz"
    r = subprocess.run([sys.executable, "-m", "planner", "import", src, "--format", "moccasin",
                        "--out", str(out), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    g2 = Graph.load(str(out))
    assert json.loads(r.stdout)["graph_hash"] == g2.hash
    _check_round_trip(g, g2)
    r = subprocess.run([sys.executable, "-m", "planner", "solve", "--graph", str(out), "--ratio", "0.9",
                        "--method", "constructive", "--time-limit", "20", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["status"] == "feasible" and res["valid"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_bad(links=[{"0": 0}])))
    r = subprocess.run([sys.executable, "-m", "planner", "import", str(bad), "--format", "moccasin",
                        "--out", str(tmp_path / "x.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


def test_names_match_across_number_and_text(tmp_path):
    # numeric names in nodes, the same names as text in links and order (JSON keys are text)
    d = {"graph": {"node_output_cost_tag": "o", "node_duration_tag": "t", "order": ["0", "1"]},
         "nodes": [{"name": 0, "o": 1, "t": 1}, {"name": 1, "o": 2, "t": 1}], "links": [{"0": "0", "1": 1}]}
    g = load_moccasin(_write(tmp_path, d))
    assert [o.meta["moccasin_name"] for o in g.ops] == [0, 1] and g.ops[1].inputs == (0,)
