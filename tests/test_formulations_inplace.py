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


def test_a_reader_of_an_updated_resident_never_runs_after_the_update():
    # the loss (required) depends on fwd1, which reads w; once sgd_ has overwritten w in
    # place, recomputing fwd1 would read the new w. Lifetimes refuse such a sequence, and
    # Checkmate's rounding (lp) keeps fwd1's output instead of scheduling it late (it used
    # to, and the validator rejected lp's plan: "freed-then-used ... overwritten in place").
    from formulations.lp import minimal_r
    from formulations.problem import extract
    from formulations.schedule import lifetimes, stage_sequence

    g = _sgd_graph()
    p = extract(g)
    n = p.n
    assert lifetimes(p, list(range(n))) is not None
    assert lifetimes(p, list(range(n)) + [0, 1, 2]) is None  # fwd1 after sgd_
    keep = [set() for _ in range(n + 2)]
    keep[n + 1] = set(p.required)  # nothing kept between stages: everything recomputed
    seq = stage_sequence(minimal_r(p, keep))
    lt = lifetimes(p, seq)
    assert lt is not None
    sgd_at = seq.index(5)
    assert 0 not in seq[sgd_at + 1:]
    peak = baseline_peak(g)
    for b in range(min_feasible_budget(g).bytes, peak + 1, A):
        r = solve(g, b, "lp", SolveParams(time_limit=10))
        assert r.status != "error", (b, r.message)
