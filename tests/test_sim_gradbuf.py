"""Why coop runs out of contiguous room on the CNN profiles (results/heuristics/README.md):
parameter gradients waiting for the optimizer can never be evicted, so each one is a pinned
piece wherever it landed, and pinned pieces break every sliding window. The bench's what-if
``NAME+gradbuf`` (persistent ``.grad`` storages) moves them next to the parameters."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from planner.graph import Op, Tensor, make_graph
from planner.heuristics.coop import SlidingWindow
from planner.params import SolveParams
from planner.registry import solve
from planner.sim import Runtime, SimConfig

K = 512  # one aligned unit


def _bench():
    path = Path(__file__).resolve().parent.parent / "bench" / "bench_simulator.py"
    spec = importlib.util.spec_from_file_location("bench_simulator", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def two_layer_step():
    """x -> a1 (w1) -> loss (w2); backward gw2, ga1, gw1; SGD on w1 then w2. gw2 is needed
    until the last op, but its recompute reads a1, which reads w1, overwritten at op 4."""
    T = [Tensor(0, K, "param", None, name="w1"), Tensor(1, K, "param", None, name="w2"),
         Tensor(2, K, "input", None, name="x")]
    ops = []

    def op(name, ins, outs, cost=1.0, mutated=()):
        ops.append(Op(len(ops), name, "f", tuple(ins), tuple(outs), cost, mutated=mutated))

    def t(nbytes, kind, name, inplace_of=None):
        T.append(Tensor(len(T), nbytes, kind, len(ops), inplace_of=inplace_of, name=name))
        return len(T) - 1

    a1 = t(4 * K, "activation", "a1"); op("f1", [2, 0], [a1])
    loss = t(K, "loss", "loss"); op("f2", [a1, 1], [loss])
    gw2, ga1 = t(K, "gradient", "gw2"), t(4 * K, "activation", "ga1"); op("b2", [loss, a1], [gw2, ga1])
    gw1 = t(K, "gradient", "gw1"); op("b1", [ga1, 2], [gw1])
    u1 = t(K, "param_update", "w1'", inplace_of=0); op("sgd.w1", [0, gw1], [u1], mutated=(u1,))
    u2 = t(K, "param_update", "w2'", inplace_of=1); op("sgd.w2", [1, gw2], [u2], mutated=(u2,))
    return make_graph("two-layer", T, ops, [loss, u1, u2])


def fragmented_graph():
    """x (1 unit), then a0 (2), g (1, a required output: pinned for the rest of the step),
    a1 (2); `big` (3 units) needs room while a0 and a1 are still needed later."""
    T = [Tensor(0, K, "input", None, name="x")]
    ops = []

    def op(name, ins, units, kind="activation"):
        T.append(Tensor(len(T), units * K, kind, len(ops), name=name))
        ops.append(Op(len(ops), name, "f", tuple(ins), (len(T) - 1,), 1.0))
        return len(T) - 1

    a0 = op("a0", [0], 2)
    g = op("g", [0], 1, "gradient")
    a1 = op("a1", [0], 2)
    big = op("big", [0], 3)
    s = op("s", [big], 1)
    t0 = op("t0", [s, a0], 1)
    t1 = op("t1", [t0, a1], 1, "loss")
    return make_graph("pinned-middle", T, ops, [g, t1])


def test_a_pinned_piece_breaks_every_window():
    g = fragmented_graph()
    budget = 6 * K   # x a0 g a1: evicting a0 and a1 frees 4 units, but 2 + 2 around g
    first_fit = SolveParams(partition=False)   # layout in allocation order, as drawn above
    res = solve(g, budget, "coop", first_fit)
    assert res.status == "infeasible"
    assert "op 3 (big) needs 1536 bytes" in res.message and "nothing evictable frees enough" in res.message
    ideal = solve(g, budget, "dtr-ideal")   # memory as one number: the same budget suffices
    assert ideal.stats.get("scalar_feasible")
    # one unit more and the window [a1, hole) holds `big`
    assert solve(g, 7 * K, "coop", first_fit).status == "feasible"


def test_gradients_waiting_for_the_optimizer_are_pinned_from_birth():
    g = two_layer_step()
    rt = Runtime(g, 10**9, SlidingWindow(), SimConfig())
    names = {t.name: t.id for t in g.tensors}
    assert not rt.evictable_static[names["gw2"]]   # recompute would read w1 after sgd.w1
    assert rt.evictable_static[names["gw1"]]       # last used before anything is overwritten
    assert rt.evictable_static[names["a1"]] and rt.evictable_static[names["ga1"]]


def test_persistent_grad_buffers_what_if():
    bench = _bench()
    g = two_layer_step()
    w = bench.persistent_grad_buffers(g)
    assert w.total_cost() == pytest.approx(g.total_cost())
    names = {t.name: t for t in w.tensors}
    for grad in ("gw1", "gw2"):
        buf, ver = names[grad + ".grad_buffer"], names[grad + ".grad"]
        assert buf.resident and ver.inplace_of == buf.id and ver.id in w.required
        copy = w.ops[ver.producer]
        assert copy.inputs == (buf.id, names[grad].id) and copy.cost == 0.0
        assert copy.id == names[grad].producer + 1          # right after the gradient is made
        assert w.last_use[names[grad].id] == copy.id        # the fresh gradient dies there
        sgd = [op for op in w.ops if op.mutated and ver.id in op.inputs]
        assert len(sgd) == 1 and names[grad].id not in sgd[0].inputs
    rt = Runtime(w, 10**9, SlidingWindow(), SimConfig())
    assert all(rt.evictable_static[t.id] or t.producer is None or t.id in w.required
               or t.inplace_of is not None for t in w.tensors if t.alias_of is None)
    # every heuristic still produces a valid plan on the what-if graph; coop writes the
    # buffers in place (no offset for the buffer versions)
    for m in ("coop", "dtr", "dte"):
        for budget in (10**6, 9 * K, 8 * K):
            res = solve(w, budget, m, SolveParams())
            assert res.status in ("feasible", "infeasible"), res.message
    res = solve(w, 10**6, "coop")
    assert res.status == "feasible"
    copies = {op.id for op in w.ops if op.name.startswith("grad_copy.")}
    for s in res.plan.steps:
        if s.kind == "compute" and s.ref in copies:
            assert not s.offsets


def test_explain_names_the_pinned_piece(tmp_path, capsys):
    from planner.analysis import baseline_peak

    bench = _bench()
    g = fragmented_graph()
    g.save(str(tmp_path / "pinned-middle.json"))
    ratio = (6 * K + 0.5) / baseline_peak(g)
    bench.explain("pinned-middle", ratio, "coop-no-partition", str(tmp_path))
    out = capsys.readouterr().out
    assert "op 3 (big) needs 1536 bytes" in out
    assert "ops in flight (outermost first): big" in out
    assert "computed blocks pinned for the rest of the step: 1," in out
    groups = out.split("groups of pinned pieces")[1].splitlines()[1:]
    assert [ln.split()[-1] for ln in groups] == ["x", "g"]   # the resident, then g between a0 and a1


def test_grad_buffer_of_a_view_gets_the_viewed_bytes():
    # a transposed weight gradient (a view, 0 bytes) still needs a buffer of its full size
    bench = _bench()
    T = [Tensor(0, 24, "param", None, name="w"), Tensor(1, K, "input", None, name="x")]
    T.append(Tensor(2, 24, "activation", 0, name="gT"))
    T.append(Tensor(3, 0, "gradient", 1, alias_of=2, name="g", meta={"shape": [2, 3], "dtype": "float32"}))
    T.append(Tensor(4, 24, "param_update", 2, inplace_of=0, name="w'"))
    ops = [Op(0, "mm", "f", (1,), (2,), 1.0), Op(1, "t", "f", (2,), (3,), 0.0),
           Op(2, "sgd.w", "f", (0, 3), (4,), 1.0, mutated=(4,))]
    w = bench.persistent_grad_buffers(make_graph("view-grad", T, ops, [4]))
    buf = [t for t in w.tensors if t.name == "g.grad_buffer"][0]
    assert buf.bytes == 24 and buf.resident
    assert solve(w, 10**6, "coop").status == "feasible"


def test_scan_marks_the_infeasible_points(tmp_path, capsys):
    from planner.analysis import baseline_peak

    bench = _bench()
    g = fragmented_graph()
    g.save(str(tmp_path / "pinned-middle.json"))
    peak = baseline_peak(g)
    lo = (6 * K + 0.5) / peak
    bench.scan("pinned-middle", lo, lo + K / peak, K / peak, str(tmp_path), None)
    rows = [ln.split(",") for ln in capsys.readouterr().out.splitlines()[1:]]
    assert rows[0][0] == "ratio" and rows[0][3] == "coop-no-partition"
    # 6 units: no window; 7 units: big fits over a1 and the hole, a1 and a0 come back (2 of 7)
    assert [r[3] for r in rows[1:]] == ["X", "28.6%"]
