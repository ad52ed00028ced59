"""Unit tests of the runtime simulator: the sliding window, infeasibility reports, the
memory-model switches and the figures reported in Result.stats."""
from __future__ import annotations

import json

import pytest

from planner.cli import main
from planner.graph import Op, Tensor, make_graph
from planner.heuristics.coop import SlidingWindow
from planner.params import SolveParams
from planner.registry import solve
from planner.sim import Runtime, SimConfig
from planner.addrspace import AddressSpace

K = 512  # one aligned unit


def fan_graph(costs, big_units=2):
    """x (resident, 1 unit) -> a_i (1 unit each, cost c_i); then `big` (big_units) from x,
    s = h(big), and s = acc(s, a_i) for each i (the last s is the output). With a budget of
    n+1 units memory holds x, a_0..a_n-1 in address order when big asks for room."""
    T = [Tensor(0, K, "input", None, name="x")]
    ops = []

    def op(name, ins, nbytes, cost, kind="activation"):
        T.append(Tensor(len(T), nbytes, kind, len(ops), name=name))
        ops.append(Op(len(ops), name, "f", tuple(ins), (len(T) - 1,), float(cost)))
        return len(T) - 1

    acts = [op(f"a{i}", [0], K, c) for i, c in enumerate(costs)]
    big = op("big", [0], big_units * K, 1.0)
    s = op("h", [big], K, 1.0)
    for i, a in enumerate(acts):
        s = op(f"acc{i}", [s, a], K, 1.0, "loss" if i == len(acts) - 1 else "activation")
    return make_graph("fan", T, ops, [s])


def test_sliding_window_evicts_one_contiguous_run():
    # a1 and a3 are the cheapest one by one, but they are not adjacent: DTR evicts them and
    # still has no 2-unit hole; Coop evicts the cheapest adjacent pair at once.
    g = fan_graph([5.0, 1.0, 50.0, 1.0, 50.0])
    budget = 6 * K  # x + five a_i fill it; big needs 2 contiguous units
    coop = solve(g, budget, "coop", SolveParams(partition=False))
    dtr = solve(g, budget, "dtr")
    assert coop.status == dtr.status == "feasible"
    first_big = [s for s in coop.plan.steps if s.kind == "compute" and s.ref == 5][0]
    evicted = [s.ref for s in coop.plan.steps[: coop.plan.steps.index(first_big)] if s.kind == "free"]
    assert sorted(evicted) == [1, 2]                 # a0, a1: adjacent, [K, 3K)
    assert dict(first_big.offsets)[6] == K           # big goes into the freed window
    dtr_first_big = [s for s in dtr.plan.steps if s.kind == "compute" and s.ref == 5][0]
    dtr_evicted = [s.ref for s in dtr.plan.steps[: dtr.plan.steps.index(dtr_first_big)] if s.kind == "free"]
    assert dtr_evicted == [2, 4, 1]                  # a1, a3 (scattered: no hole), then a0


def test_window_ties_go_to_the_lowest_address():
    g = fan_graph([0.0] * 4)   # every window costs 0
    rt = Runtime(g, 5 * K, SlidingWindow(), SimConfig(partition=False))
    rt.run()
    frees = [s for s in rt.steps if s[0] == "f"]
    assert frees[:2] == [("f", 1), ("f", 2)]  # a0 and a1, at the bottom


def test_infeasible_names_the_step_and_the_request():
    T = [Tensor(0, 4 * K, "input", None, name="x"),
         Tensor(1, 4 * K, "activation", 0, name="a"), Tensor(2, 4 * K, "activation", 1, name="b")]
    ops = [Op(0, "fa", "f", (0,), (1,), 1.0), Op(1, "fb", "f", (0,), (2,), 1.0)]
    g = make_graph("pinned", T, ops, [1, 2])  # both outputs required: nothing is evictable
    for m in ("coop", "dtr", "dte", "dtr-ideal"):
        res = solve(g, 10 * K, m)
        assert res.status == "infeasible"
        assert "op 1 (fb) needs 2048 bytes for tensor 2 (b)" in res.message and "step" in res.message


def test_thrash_limit_ends_dtr_ideal():
    from planner.budget import budget_for
    from planner.synthetic import chain

    g = chain(40)
    low = budget_for(g, 0.25)  # a budget whose scalar run also places (at 0.3 its replay does not)
    assert solve(g, low, "dtr-ideal").status == "feasible"
    res = solve(g, low, "dtr-ideal", SolveParams(thrash_limit=0.01))
    assert res.status == "infeasible" and "thrashing" in res.message


def test_runtime_refuses_a_heuristic_it_cannot_serve():
    g = fan_graph([1.0, 2.0])
    with pytest.raises(ValueError, match="address space"):
        Runtime(g, 10 * K, SlidingWindow(), SimConfig(addresses=False))


def test_address_space_first_fit_best_fit_and_high_end():
    a = AddressSpace(10 * K, K, "first-fit")
    for i, off in enumerate((0, 2 * K, 5 * K)):
        a.take(off, K, i)
    # holes: [K,2K) [3K,5K) [6K,10K)
    assert a.find(K) == K and a.find(2 * K) == 3 * K and a.find(K, high=True) == 9 * K
    assert a.adjacent_free(2 * K, K) == 3 * K
    b = AddressSpace(10 * K, K, "best-fit")
    for i, off in enumerate((0, 2 * K, 5 * K)):
        b.take(off, K, i)
    assert b.find(2 * K) == 3 * K and b.find(3 * K) == 6 * K
    a.release(2 * K, K, 1)
    assert a.hs == [K, 6 * K] and a.he == [5 * K, 10 * K]
    assert [p[2] for p in a.pieces()] == [0, -1, 2, -1]


def test_inplace_switch_keeps_or_moves_parameters():
    """Coop's in-place idea: an optimizer update keeps the parameter's address; without it
    (and in DTR/DTE) the update gets new storage."""
    T = [Tensor(0, 4 * K, "param", None, name="w"), Tensor(1, K, "input", None, name="x"),
         Tensor(2, K, "activation", 0, name="y"), Tensor(3, 4 * K, "param_update", 1, inplace_of=0, name="w'")]
    ops = [Op(0, "f", "f", (1, 0), (2,), 1.0), Op(1, "upd", "sgd", (0, 2), (3,), 1.0, mutated=(3,))]
    g = make_graph("upd", T, ops, [3])
    on = solve(g, 20 * K, "coop", SolveParams(inplace=True))
    off = solve(g, 20 * K, "coop", SolveParams(inplace=False))
    upd_on = [s for s in on.plan.steps if s.kind == "compute" and s.ref == 1][0]
    upd_off = [s for s in off.plan.steps if s.kind == "compute" and s.ref == 1][0]
    assert upd_on.offsets == () and dict(upd_off.offsets)[3] != dict(on.plan.resident_offsets)[0]
    assert on.validation["peak_bytes"] < off.validation["peak_bytes"]


def test_solve_cli_prints_the_figures(capsys):
    assert main(["solve", "--model", "chain:32", "--ratio", "0.5", "--method", "coop", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] and out["status"] == "feasible" and out["overhead"] > 0
    st = out["stats"]
    for key in ("evictions", "recomputations", "search_latency_mean_s", "search_latency_total_s",
                "fragmentation_sim", "sim_peak_address"):
        assert key in st
    assert st["evictions"] > 0 and st["search_latency_total_s"] > 0
    assert out["peak_address"] <= out["budget_bytes"]
