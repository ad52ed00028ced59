"""The checkpoint relaxation: a lower bound on every plan, at least the closure where it
should be, and stronger than it where moments compete for the same recomputations."""
from __future__ import annotations

import math
import random

from formulation_graphs import brute_force, random_graph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulations.bounds import closure_bound, tight_ops
from formulations.checkpoints import checkpoint_bound, choose_checkpoints
from formulations.problem import extract
from planner.analysis import baseline_peak, min_feasible_budget
from planner.models import load_model
from planner.params import SolveParams
from planner.registry import solve


def _case(seed: int, n: int, frac: float):
    g = random_graph(seed, n)
    peak, lo = baseline_peak(g), min_feasible_budget(g).bytes
    budget = int(lo + frac * (peak - lo))
    p = extract(g)
    cap = p.capacity(budget)
    return g, budget, p, cap, [t for _, t in tight_ops(p, cap)]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 5), frac=st.floats(0.0, 1.0))
def test_checkpoint_bound_never_exceeds_the_brute_force_optimum(seed, n, frac):
    g, budget, p, cap, cps = _case(seed, n, frac)
    if not cps:  # memory is never tight: no checkpoint, nothing to bound
        return
    rnd = random.Random(seed)
    sub = sorted(rnd.sample(cps, max(1, len(cps) // 2)))
    # any ops as checkpoints, tight or not: intervals with first runs inside them (rows 7)
    anyops = sorted(rnd.sample(range(p.n), rnd.randint(1, p.n)))
    vals = [checkpoint_bound(p, cap, c, integer=i)[0] for c in (cps, sub, anyops) for i in (False, True)]
    cost, _plan = brute_force(g, budget)
    if cost is None:
        return
    assert all(math.isfinite(v) for v in vals), "the relaxation claims infeasible where a plan exists"
    for v in vals:
        assert sum(p.cost) + v <= cost * (1 + 1e-9) + 1e-9


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 5), frac=st.floats(0.0, 1.0))
def test_coarse_levels_keep_the_bound_valid_and_at_least_each_level(seed, n, frac):
    """Rows of coarser checkpoint sets (``coarse``) joined to a finer one: never above the
    brute-force optimum, and at least what each set gives alone (LP and MIP)."""
    # n <= 5: the brute force takes minutes on some 6-op graphs (measured 138 s for one, and
    # 414 s for this test's 40 examples once it had to try earlier recomputations too)
    g, budget, p, cap, cps = _case(seed, n, frac)
    rnd = random.Random(seed)
    fine = sorted(set(rnd.sample(range(p.n), rnd.randint(1, p.n))) | set(cps[:2]))
    coarse = sorted(rnd.sample(fine, max(1, len(fine) // 2)))
    cost, _plan = brute_force(g, budget)
    for integer in (False, True):
        alone = [checkpoint_bound(p, cap, c, integer=integer)[0] for c in (fine, coarse)]
        both, _ = checkpoint_bound(p, cap, fine, integer=integer, coarse=[coarse])
        if cost is None:
            continue
        assert math.isfinite(both)
        assert both >= max(alone) * (1 - 1e-7) - 1e-9
        assert sum(p.cost) + both <= cost * (1 + 1e-9) + 1e-9


def test_coarse_levels_lift_the_lp_where_more_checkpoints_weaken_it():
    """unet at 0.4: 15 checkpoints alone give a weaker LP than 10 (one fractional recomputation
    serves several short intervals); with the 10 as a coarse level the LP is above both."""
    g = load_model("unet")
    p = extract(g)
    cap = p.capacity(int(0.4 * baseline_peak(g)))
    ten = choose_checkpoints(p, cap, 10)
    fine = sorted(set(ten) | {132, 133, 200, 205, 208})
    lp10, _ = checkpoint_bound(p, cap, ten)
    lp15, _ = checkpoint_bound(p, cap, fine)
    both, _ = checkpoint_bound(p, cap, fine, coarse=[ten])
    assert lp15 < lp10 and both > lp10 * (1 + 1e-3)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(8, 14), frac=st.floats(0.0, 1.0))
def test_checkpoint_bound_below_the_remat_optimum_on_larger_graphs(seed, n, frac):
    """Against Checkmate's MILP proven without addresses (an independent formulation)."""
    g, budget, p, cap, cps = _case(seed, n, frac)
    if not cps:  # memory is never tight: no checkpoint, nothing to bound
        return
    r = solve(g, budget, "checkmate", SolveParams(time_limit=20, addresses=False))
    if r.status != "optimal":
        return
    opt = r.lower_bound if r.lower_bound is not None else r.objective
    for integer in (False, True):
        v, _ = checkpoint_bound(p, cap, cps, integer=integer)
        assert sum(p.cost) + v <= opt * (1 + 1e-7) + 1e-9


def test_one_checkpoint_is_the_closure_lp():
    g = load_model("unet")
    p = extract(g)
    cap = p.capacity(int(0.4 * baseline_peak(g)))
    cb, at, _ = closure_bound(p, cap)
    v, st_ = checkpoint_bound(p, cap, [at])
    assert st_ == "optimal" and math.isclose(v, cb, rel_tol=1e-6)


def test_checkpoints_beat_the_closure_on_unet():
    g = load_model("unet")
    p = extract(g)
    cap = p.capacity(int(0.4 * baseline_peak(g)))
    cb, _, _ = closure_bound(p, cap)
    cps = choose_checkpoints(p, cap, 10)
    lp, _ = checkpoint_bound(p, cap, cps)
    mip, _ = checkpoint_bound(p, cap, cps, integer=True, time_limit=30)
    assert lp > 1.03 * cb and mip >= lp * (1 - 1e-9)
    # an incumbent's cost as cutoff below the optimum: at least the cutoff, never above the MIP
    v, _ = checkpoint_bound(p, cap, cps, integer=True, cutoff=0.5 * lp, time_limit=30)
    assert v == 0.5 * lp


def test_exact_reports_the_checkpoint_bound():
    g = load_model("unet-tiny")
    res = solve(g, int(0.5 * baseline_peak(g)), "exact", SolveParams(time_limit=4))
    s = res.stats
    if "checkpoint_lp" not in s:
        assert res.status == "optimal"  # proven before the bounds were needed
        return
    assert res.lower_bound >= sum(extract(g).cost) + s["checkpoint_lp"] - 1e-12


def test_interval_memory_proves_layered_100_at_09():
    """Rows 7 (memory inside the intervals) are what the relaxation lacked on random layered
    graphs: without them the MIP gives 0.37% at 0.9 against the optimum 1.30%; with them it
    meets gap eviction's plan, so exact proves it without the MILP."""
    import formulations.checkpoint_model as ck

    g = load_model("layered:100")
    budget = int(0.9 * baseline_peak(g))
    p = extract(g)
    cap = p.capacity(budget)
    cps = choose_checkpoints(p, cap, 10)
    with_rows, _ = checkpoint_bound(p, cap, cps, integer=True, time_limit=30)
    old = ck.INTERVAL_MEMORY
    try:
        ck.INTERVAL_MEMORY = False
        without, _ = checkpoint_bound(p, cap, cps, integer=True, time_limit=30)
    finally:
        ck.INTERVAL_MEMORY = old
    assert with_rows > 3 * without
    res = solve(g, budget, "exact", SolveParams(time_limit=60))
    assert res.status == "optimal" and "nodes" not in res.stats  # proven before any MILP
    assert sum(p.cost) + with_rows <= res.objective * (1 + 1e-9)


def test_separating_checkpoints_split_an_op_run_twice_in_one_interval():
    from formulations.checkpoint_candidates import separating_checkpoints
    cost = [1.0] * 12
    cps = [2, 6]
    # interval 0 is (2, 6): the plan runs 1 again after 3 and after 4; 4 splits the two runs
    seq = [0, 1, 2, 3, 1, 4, 1, 5, 6, 7, 0, 8, 9, 10, 11]
    assert separating_checkpoints(cps, [[1], [0]], cost, seq) == [4]
    # three runs: 4 and 5 split them; `limit` per interval, most cost first, then earliest
    seq3 = [0, 1, 2, 3, 1, 4, 1, 5, 1, 6, 7, 0, 8, 9, 10, 11]
    assert separating_checkpoints(cps, [[1], [0]], cost, seq3) == [4, 5]
    assert separating_checkpoints(cps, [[1], [0]], cost, seq3, limit=1) == [4]
    cost3 = list(cost)
    cost3[5] = 0.0
    # two runs with no first run between them cannot be split (the other rule follows them);
    # a free op is never worth a checkpoint
    assert separating_checkpoints(cps, [[1], [0]], cost, [0, 1, 2, 3, 1, 1, 4, 5, 6, 7, 8, 9, 10, 11]) == [4]
    assert separating_checkpoints([2], [[5]], cost3, [0, 1, 2, 3, 4, 5, 6, 5, 7, 5, 8, 9, 10, 11]) == []


def test_separating_checkpoints_otherwise_follow_recomputations_the_relaxation_does_not_pay():
    from formulations.checkpoint_candidates import separating_checkpoints
    cost = [1.0] * 12
    cps = [2, 6]
    # no op runs twice in an interval; the plan runs 1 again before 4 and 0 before 5
    seq = [0, 1, 2, 3, 1, 4, 0, 5, 6, 7, 8, 9, 10, 11]
    assert separating_checkpoints(cps, [[], []], cost, seq) == [4, 5]
    assert separating_checkpoints(cps, [[], []], cost, seq, limit=1) == [4]
    # the relaxation pays as much in every interval: nothing to separate
    assert separating_checkpoints(cps, [[1, 0], []], cost, seq) == []
    # recomputations before the first checkpoint are no interval's
    assert separating_checkpoints(cps, [[], [0]], cost, [0, 1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]) == []
    # a first run that is already a checkpoint is not proposed again
    assert separating_checkpoints([2, 4], [[], []], cost, [0, 1, 2, 3, 1, 4, 5, 6, 7, 8, 9, 10, 11]) == []


def test_shared_recomputations_split_the_demand_points_of_one_recomputation():
    from types import SimpleNamespace

    from formulations.checkpoint_candidates import shared_recomputations
    n = 10
    # op k writes value k; 1 reads 0; 3 and 5 read 1; 6 reads 0; the others read their predecessor
    reads = {1: (0,), 3: (1,), 5: (1,), 6: (0,)}
    p = SimpleNamespace(n=n, cost=(1.0, 2.0) + (1.0,) * 8, outs=tuple((k,) for k in range(n)),
                        reads=tuple(reads.get(k, (k - 1,) if k else ()) for k in range(n)))
    cps = [2, 7]
    # interval (2, 7) runs 1 again: one run serves 3 and 5, so 3 (its use before the last) splits them
    assert shared_recomputations(p, cps, [[1], []]) == [3]
    # 0 runs again there too: it feeds 6 directly and 3 and 5 through 1; 3 scores 1's and 0's cost
    assert shared_recomputations(p, cps, [[0, 1], []], limit=1) == [3]
    assert shared_recomputations(p, cps, [[0, 1], []]) == [3, 5]
    # a free op is never worth a checkpoint; an op with a single demand point shares nothing
    free = SimpleNamespace(**{**vars(p), "cost": (1.0, 0.0) + (1.0,) * 8})
    assert shared_recomputations(free, cps, [[1], []]) == []
    assert shared_recomputations(p, [2, 4], [[1], []]) == []
