"""planner import --format checkmate: networkx node-link JSON -> Graph."""
import json
import subprocess
import sys

import pytest

from planner.errors import UserError
from planner.graph import Graph
from planner.importers.checkmate import load_checkmate


def _write(tmp_path, nodes, links, key="links"):
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"directed": True, "multigraph": False, "graph": {}, "nodes": nodes, key: links}))
    return str(p)


def _linear(n):
    nodes = [{"id": i, "cost_cpu": float(i + 1), "cost_ram": 1000 * (i + 1), "backward": i >= n // 2}
             for i in range(n)]
    links = [{"source": i, "target": i + 1} for i in range(n - 1)] + [{"source": 0, "target": n - 1}]
    return nodes, links


def test_linear_graph_maps_nodes_to_ops(tmp_path):
    nodes, links = _linear(6)
    g = load_checkmate(_write(tmp_path, nodes, links))
    assert len(g.ops) == 6 and len(g.tensors) == 6
    assert [o.cost for o in g.ops] == [1, 2, 3, 4, 5, 6]
    assert [t.bytes for t in g.tensors] == [1000 * (i + 1) for i in range(6)]
    assert g.ops[5].inputs == (0, 4)
    assert g.required == (5,)
    assert g.tensors[4].kind == "gradient" and g.tensors[0].kind == "activation"


def test_edges_key_and_unsorted_ids(tmp_path):
    # ids not in topological order: a stable topological sort is used
    nodes = [{"id": 2, "cost_cpu": 1, "cost_ram": 10}, {"id": 1, "cost_cpu": 1, "cost_ram": 10},
             {"id": 0, "cost_cpu": 1, "cost_ram": 10}]
    links = [{"source": 2, "target": 0}, {"source": 0, "target": 1}]
    g = load_checkmate(_write(tmp_path, nodes, links, key="edges"))
    assert [o.meta["checkmate_id"] for o in g.ops] == [2, 0, 1]
    assert g.ops[1].inputs == (0,) and g.ops[2].inputs == (1,)


@pytest.mark.parametrize("bad", [
    {"nodes": [{"id": 0, "cost_cpu": 1}], "links": []},                          # no cost_ram
    {"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1}], "links": [{"source": 0, "target": 9}]},
    {"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1}, {"id": 1, "cost_cpu": 1, "cost_ram": 1}],
     "links": [{"source": 0, "target": 1}, {"source": 1, "target": 0}]},         # cycle
    {"nodes": [{"id": 0, "cost_cpu": -1, "cost_ram": 1}], "links": []},
    {"graph": {}},
])
def test_malformed_is_a_user_error(tmp_path, bad):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(UserError):
        load_checkmate(str(p))


def _fwd_bwd(n):
    """Checkmate's linear forward/backward: f0..f(n-1), then b(n-1)..b0 reading f_i and b_(i+1)."""
    nodes = [{"id": i, "cost_cpu": 1.0, "cost_ram": 4096, "backward": False} for i in range(n)]
    nodes += [{"id": n + i, "cost_cpu": 2.0, "cost_ram": 4096, "backward": True} for i in range(n)]
    links = [{"source": i, "target": i + 1} for i in range(n - 1)]
    for i in range(n):  # node n + i is the gradient of f(n-1-i)
        f = n - 1 - i
        links.append({"source": f, "target": n + i})
        if i:
            links.append({"source": n + i - 1, "target": n + i})
    return nodes, links


def test_cli_import_then_solve(tmp_path):
    nodes, links = _fwd_bwd(5)
    src = _write(tmp_path, nodes, links)
    out = tmp_path / "g.json.gz"
    r = subprocess.run([sys.executable, "-m", "planner", "import", src, "--format", "checkmate",
                        "--out", str(out), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    g = Graph.load(str(out))
    assert info["ops"] == 10 and info["graph_hash"] == g.hash
    r = subprocess.run([sys.executable, "-m", "planner", "solve", "--graph", str(out), "--ratio", "0.7",
                        "--method", "exact", "--time-limit", "20", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["status"] == "optimal" and res["valid"]


def _small_units(tmp_path):
    # cost_ram in small abstract units (as in published random layered graphs): padding each
    # node to 512 bytes would make every node the same size
    nodes = [{"id": 0, "cost_cpu": 1, "cost_ram": 3}, {"id": 1, "cost_cpu": 2, "cost_ram": 5},
             {"id": 2, "cost_cpu": 3, "cost_ram": 2}, {"id": 3, "cost_cpu": 1, "cost_ram": 4, "backward": True},
             {"id": 4, "cost_cpu": 1, "cost_ram": 1, "backward": True}]
    links = [{"source": s, "target": t} for s, t in [(0, 1), (1, 2), (2, 3), (1, 3), (0, 4), (3, 4)]]
    return load_checkmate(_write(tmp_path, nodes, links))


def test_sizes_are_exact_units(tmp_path):
    from planner.analysis import baseline_peak, min_feasible_budget

    g = _small_units(tmp_path)
    assert g.alignment == 1
    # plain schedule: at node 3 the outputs of 0, 1, 2 and 3 are live together
    assert baseline_peak(g) == 3 + 5 + 2 + 4
    assert min_feasible_budget(g).bytes == 3 + 5 + 2 + 4 - 3  # node 3 needs 1, 2 and itself; 0 recomputable
    assert baseline_peak(g, 512) == 4 * 512  # the captured models' padding, asked for explicitly


def test_small_units_solve_exactly_and_alignment_survives_saving(tmp_path):
    from planner.params import SolveParams
    from planner.registry import solve

    g = _small_units(tmp_path)
    path = tmp_path / "g.graph.json"
    g.save(str(path))
    g2 = Graph.load(str(path))
    assert g2.alignment == 1 and g2.hash == g.hash
    # budget 11 (the minimum): node 0 must be freed before node 3 and recomputed for node 4
    res = solve(g2, 11, "exact", SolveParams(time_limit=20))
    assert res.status == "optimal" and res.validation["valid"]
    assert res.plan.alignment == 1 and res.validation["peak_bytes"] <= 11
    assert res.objective == pytest.approx(8 + 1)
    joint = solve(g2, 11, "milp-joint", SolveParams(time_limit=20))
    assert joint.status == "optimal" and joint.objective == pytest.approx(res.objective)


def test_solve_alignment_flag(tmp_path):
    g = _small_units(tmp_path)
    path = tmp_path / "g.graph.json"
    g.save(str(path))
    out = subprocess.run([sys.executable, "-m", "planner", "solve", "--graph", str(path), "--ratio", "1.0",
                          "--method", "none", "--alignment", "512", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["baseline_peak_bytes"] == 4 * 512 and d["status"] == "optimal"
    bad = subprocess.run([sys.executable, "-m", "planner", "solve", "--graph", str(path), "--ratio", "1.0",
                          "--alignment", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--alignment" in bad.stderr and "Traceback" not in bad.stderr
