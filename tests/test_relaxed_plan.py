"""The plan read off the checkpoint relaxation's solution: runnable at exactly the
relaxation's cost, optimal whenever it fits (the relaxation is a lower bound), and its
overflows point at first runs."""
from __future__ import annotations

import random
import time

from formulation_graphs import brute_force, budget_case, random_graph
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from formulations.bounds import tight_ops
from formulations.checkpoints import lp_then_mip
from formulations.problem import extract
from formulations.relaxed_plan import memory_profile, overflow_checkpoints, relaxed_sequence
from formulations.schedule import Lifetimes, build_plan, lifetimes, place
from planner.validator import validate


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 9))
def test_any_runs_give_a_runnable_sequence_with_first_runs_in_order(seed, n):
    g = random_graph(seed, n)
    p = extract(g)
    rnd = random.Random(seed)
    cps = sorted(rnd.sample(range(p.n), rnd.randint(1, p.n)))
    limit = p.limit or (p.n,) * p.n
    runs = [sorted(k for k in range(t + 1) if limit[k] > t and rnd.random() < 0.4) for t in cps]
    seq = relaxed_sequence(p, cps, runs)
    firsts = []
    for k in seq:
        if k not in firsts:
            firsts.append(k)
    assert firsts == list(range(p.n))
    assert sorted(seq) == sorted(list(range(p.n)) + [k for ks in runs for k in ks])
    lt = lifetimes(p, seq)
    assert lt is not None, "every value read was computed before (and no in-place write passed)"
    # an op whose outputs are all still live is skipped: never more than the relaxation's cost
    assert lt.cost <= sum(p.cost) + sum(p.cost[k] for ks in runs for k in ks) + 1e-9


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 5), frac=st.floats(0.0, 0.7))
@example(seed=1422, n=4, frac=0.25)
@example(seed=116, n=5, frac=0.625)  # the plan recomputes 3 then 0 at the end: outside the brute force's class
def test_a_relaxed_plan_that_fits_is_the_optimum(seed, n, frac):
    # n <= 5: the brute force takes minutes on some 6-op graphs
    g, budget, p, cap = budget_case(seed, n, frac)
    cps = [t for _, t in tight_ops(p, cap)]
    if not cps:
        return
    out = lp_then_mip(p, cap, cps, lp_time=10, deadline=time.perf_counter() + 20)
    if out.get("runs") is None:
        return
    lt = lifetimes(p, relaxed_sequence(p, out["checkpoints"], out["runs"]))
    assert lt is not None
    total = sum(p.cost)
    assert lt.cost <= total + out["mip"][0] + 1e-9
    best, _ = brute_force(g, budget)
    if lt.peak_units > cap:
        assert not set(overflow_checkpoints(lt, out["checkpoints"], cap, limit=p.n)) & set(out["checkpoints"])
        return
    pl = place(lt, cap, 10)
    if pl.offsets is None:
        return
    # a valid plan whose cost is the relaxation's lower bound: nothing is cheaper. The brute
    # force runs a stage's recomputations in index order only, so it may miss this plan (it
    # may run them in another order: seed 1422, n 4, frac 0.25 recomputes op 1 then op 0
    # at the end) but never find a cheaper one
    assert validate(g, build_plan(p, lt, pl.offsets, budget, "relaxed")).valid
    assert best is None or best >= lt.cost - 1e-9 * max(1.0, best)


def test_overflows_name_the_next_first_run_outside_the_checkpoints():
    # ops 0..5 run in order, op 1 again before 4's first run; one unit per op output
    seq = (0, 1, 2, 3, 1, 4, 5)
    blocks = ((0, 0, 7, 1), (1, 1, 2, 2), (2, 2, 4, 1), (3, 3, 6, 3), (1, 4, 6, 2), (4, 5, 7, 1), (5, 6, 7, 1))
    lt = Lifetimes(seq, ((),) * 7, blocks, ((),) * 7, 0, 0.0)
    assert memory_profile(lt).tolist() == [1, 3, 2, 5, 6, 7, 3]
    # over 4 at positions 3 (first run of 3), 4 (op 1 again: next first run 4) and 5 (4)
    assert overflow_checkpoints(lt, [2], 4, limit=2) == [3, 4]
    assert overflow_checkpoints(lt, [2], 4) == [4]      # excess 3 at op 4, 1 at op 3
    assert overflow_checkpoints(lt, [2, 4], 4) == [3]   # 4 is already a checkpoint
    assert overflow_checkpoints(lt, [2], 7) == []


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(4, 12), frac=st.floats(0.0, 0.6))
@example(seed=235, n=6, frac=0.0)  # a move that made a later run needed again (cost 22 -> 25)
def test_fitting_moves_ops_run_again_without_raising_the_cost_or_the_overflow(seed, n, frac):
    from formulations.relaxed_plan import fit_sequence

    _g, _budget, p, cap = budget_case(seed, n, frac)
    rnd = random.Random(seed)
    cps = sorted(rnd.sample(range(p.n), rnd.randint(1, max(1, p.n // 3))))
    limit = p.limit or (p.n,) * p.n
    runs = [sorted(k for k in range(t + 1) if limit[k] > t and rnd.random() < 0.5) for t in cps]
    seq = relaxed_sequence(p, cps, runs)
    fitted = fit_sequence(p, seq, cps, cap, time.perf_counter() + 5)
    assert sorted(fitted) == sorted(seq)
    firsts = []
    for k in fitted:
        if k not in firsts:
            firsts.append(k)
    assert firsts == list(range(p.n)), "first runs stay in captured order"
    a, b = lifetimes(p, seq), lifetimes(p, fitted)
    # an op moved before a reader of its old copy may find its outputs still live: skipped
    assert b is not None and b.cost <= a.cost + 1e-9

    def over(lt):
        prof = memory_profile(lt)
        return int((prof[prof > cap] - cap).sum())
    assert over(b) <= over(a)
