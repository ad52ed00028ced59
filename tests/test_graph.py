import gzip
import json

import pytest
from hypothesis import given, settings

from planner.errors import GraphError, UserError
from planner.graph import Graph, Op, Tensor, make_graph
from planner.synthetic import chain, layered, ushape

from graphgen import dags


def tiny(**over):
    """x (resident) -> op0 -> a -> op1 -> b (required)."""
    tensors = [Tensor(0, 512, "input", None, name="x"), Tensor(1, 1024, "activation", 0, name="a"),
               Tensor(2, 1024, "activation", 1, name="b")]
    ops = [Op(0, "op0", "f", (0,), (1,), 1.0), Op(1, "op1", "f", (1,), (2,), 1.0)]
    for k, v in over.items():
        if k == "tensors":
            tensors = v
        elif k == "ops":
            ops = v
    return tensors, ops


def test_tiny_graph_is_valid():
    t, o = tiny()
    g = make_graph("tiny", t, o, [2])
    assert g.consumers[1] == (1,) and g.last_use[1] == 1 and g.storage_root == (0, 1, 2)


@pytest.mark.parametrize("mutate, message", [
    (lambda t, o: (t, [Op(0, "op0", "f", (7,), (1,), 1.0), o[1]]), "unknown tensor 7"),
    (lambda t, o: (t, [o[1], o[0]]), "op ids must be dense"),
    (lambda t, o: (t, [Op(0, "op0", "f", (2,), (1,), 1.0), Op(1, "op1", "f", (1,), (2,), 1.0)]), "before it is produced"),
    (lambda t, o: ([t[0], Tensor(1, -5, "activation", 0), t[2]], o), "negative size"),
    (lambda t, o: (t, [Op(0, "op0", "f", (0,), (1,), -1.0), o[1]]), "negative or NaN cost"),
    (lambda t, o: ([t[0], Tensor(1, 0, "activation", 0, alias_of=9), t[2]], o), "alias_of unknown tensor 9"),
    (lambda t, o: (t, [o[0], Op(1, "op1", "f", (1,), (1, 2), 1.0)]), "produced twice"),
    (lambda t, o: ([t[0], Tensor(1, 1024, "weird", 0), t[2]], o), "unknown kind"),
])
def test_structural_faults_are_named(mutate, message):
    t, o = mutate(*tiny())
    with pytest.raises(GraphError, match=message):
        make_graph("bad", t, o, [2])


def test_cycle_is_rejected():
    # op0 reads b, which op1 produces from a, which op0 produces: a cycle, caught as non-topological
    t = [Tensor(0, 512, "input", None), Tensor(1, 512, "activation", 0), Tensor(2, 512, "activation", 1)]
    o = [Op(0, "op0", "f", (2,), (1,), 1.0), Op(1, "op1", "f", (1,), (2,), 1.0)]
    with pytest.raises(GraphError, match="not topological, or a cycle"):
        make_graph("cyc", t, o, [2])


def test_read_after_inplace_overwrite_is_rejected():
    t = [Tensor(0, 512, "param", None), Tensor(1, 512, "param_update", 0, inplace_of=0),
         Tensor(2, 512, "activation", 1)]
    o = [Op(0, "upd", "f", (0,), (1,), 1.0, mutated=(1,)), Op(1, "use", "f", (0,), (2,), 1.0)]
    with pytest.raises(GraphError, match="after op 0 overwrote it"):
        make_graph("ip", t, o, [1, 2])


def test_unknown_required_is_rejected():
    t, o = tiny()
    with pytest.raises(GraphError, match="unknown tensor 99"):
        make_graph("bad", t, o, [99])


@settings(max_examples=60, deadline=None)
@given(dags())
def test_json_round_trip_is_lossless(g):
    g2 = Graph.from_dict(json.loads(json.dumps(g.to_dict())))
    assert g2 == g and g2.hash == g.hash


def test_save_load_gzip(tmp_path):
    g = ushape(3)
    p = tmp_path / "g.json.gz"
    g.save(str(p))
    assert gzip.decompress(p.read_bytes())[:1] == b"{"
    assert Graph.load(str(p)) == g


def test_hash_changes_with_content():
    assert chain(4).hash != chain(5).hash
    assert layered(30, 1).hash != layered(30, 2).hash
    assert layered(30, 1).hash == layered(30, 1).hash


def test_malformed_graph_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("{not json")
    with pytest.raises(UserError, match="malformed graph file"):
        Graph.load(str(p))
    p.write_text(json.dumps({"kind": "graph", "schema_version": 99}))
    with pytest.raises(UserError, match="schema_version"):
        Graph.load(str(p))
    p.write_text(json.dumps({"kind": "plan", "schema_version": 1}))
    with pytest.raises(UserError, match="expected 'graph'"):
        Graph.load(str(p))


def test_synthetic_shapes():
    g = chain(8)
    assert len(g.ops) == 2 * 8 + 3  # 8 forward, loss, grad seed, loss backward, 8 backward
    assert len(layered(100, 3).ops) == 100
    u = ushape(3)
    assert any(len(o.inputs) >= 3 for o in u.ops)  # decoder backward reads the skip
