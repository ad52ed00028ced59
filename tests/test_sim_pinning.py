"""The simulator's unevictability rule: a value is pinned only when rebuilding it could
need a value that is gone for good by then; the verdict stops at inputs held anyway."""
from __future__ import annotations

from planner.graph import Op, Tensor, make_graph
from planner.params import SolveParams
from planner.heuristics.dtr_ideal import DTRIdeal, _config
from planner.registry import solve
from planner.sim import Runtime

K = 1024


def graph():
    T = [Tensor(0, K, "param", None, name="w"), Tensor(1, K, "input", None, name="x"),
         Tensor(2, K, "activation", 0, name="a"),            # reads the old w
         Tensor(3, K, "param_update", 1, inplace_of=0, name="w'"),
         Tensor(4, K, "activation", 2, name="b"),            # from a, read after a dies
         Tensor(5, K, "activation", 3, name="b2"),           # from a, read while a is held
         Tensor(6, K, "activation", 4, name="c"),            # reads the updated w'
         Tensor(7, K, "activation", 5, name="d"),
         Tensor(8, K, "activation", 6, name="e")]
    ops = [Op(0, "f", "f", (1, 0), (2,), 1.0),
           Op(1, "add_", "add_", (0, 1), (3,), 1.0, mutated=(3,)),
           Op(2, "g", "g", (2,), (4,), 1.0),
           Op(3, "g2", "g2", (2,), (5,), 1.0),
           Op(4, "h", "h", (1, 3), (6,), 1.0),
           Op(5, "k", "k", (2, 6, 5), (7,), 1.0),               # a's last reader
           Op(6, "m", "m", (4, 7), (8,), 1.0)]
    return make_graph("pins", T, ops, [3, 8], {"alignment": 1})


def test_pins_exactly_what_cannot_be_rebuilt():
    g = graph()
    rt = Runtime(g, 10 * K, DTRIdeal(), _config(SolveParams(alignment=1)))
    pinned = {g.tensors[t].name for t in range(len(g.tensors))
              if g.tensors[t].producer is not None and not rt.evictable_static[t]}
    # a needs the old w after the update; b and d are read (by m) after a is released, so
    # rebuilding them would need a; b2 and c are rebuilt from values still held (a, w');
    # w' and e are required
    assert pinned == {"a", "b", "d", "w'", "e"}


def test_every_heuristic_runs_it():
    g = graph()
    for m in ("coop", "dtr", "dte", "dtr-ideal"):
        res = solve(g, 7 * K, m, SolveParams(alignment=1))  # the peak: a, b, b2, c, d, w', x
        assert res.status == "feasible" and res.validation["valid"], (m, res.message)
