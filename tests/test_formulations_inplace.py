"""In-place writes over residents (optimizer updates) run in place in formulation plans."""
from planner.analysis import baseline_peak, min_feasible_budget
from planner.graph import Op, Tensor, make_graph
from planner.params import SolveParams
from planner.registry import solve

A = 512


def _sgd_graph():
    T = [Tensor(0, 2 * A, "input", None, name="x"), Tensor(1, A, "param", None, name="w")]
    ops = []

    def op(name, ins, outs, cost, mutated=()):
        j = len(ops)
        ids = []
        for nbytes, kind, inplace in outs:
            T.append(Tensor(len(T), nbytes, kind, j, inplace_of=inplace, name=f"{name}.out"))
            ids.append(len(T) - 1)
        ops.append(Op(j, name, "node", tuple(ins), tuple(ids), cost,
                      mutated=tuple(i for i, (_, _, ip) in zip(ids, outs) if ip is not None)))
        return ids

    (a,) = op("fwd1", [0, 1], [(3 * A, "activation", None)], 2.0)
    (b,) = op("fwd2", [a], [(3 * A, "activation", None)], 2.0)
    (loss,) = op("loss", [b], [(A, "loss", None)], 1.0)
    (gb,) = op("bwd2", [loss, a], [(3 * A, "gradient", None)], 4.0)
    (gw,) = op("bwd1", [gb, 0], [(A, "gradient", None)], 4.0)
    (w2,) = op("sgd_", [1, gw], [(A, "param_update", 1)], 0.5)
    return make_graph("sgd", T, ops, [loss, w2])


def test_inplace_update_plans_validate_at_every_budget():
    g = _sgd_graph()
    peak, mb = baseline_peak(g), min_feasible_budget(g).bytes
    seen_optimal = False
    for b in range(mb, peak + 1, A):
        for m in ("exact", "milp-joint"):
            r = solve(g, b, m, SolveParams(time_limit=20))
            assert r.status != "error", (m, b, r.message)
            if r.plan is not None:
                assert r.validation["valid"]
                # the update ran in place: no offset for the new parameter version
                upd = [s for s in r.plan.steps if s.kind == "compute" and s.ref == 5]
                assert len(upd) == 1 and upd[0].offsets == ()
                seen_optimal |= r.status == "optimal"
    assert seen_optimal
