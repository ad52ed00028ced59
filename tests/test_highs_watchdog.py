"""The HiGHS wall clock: large models solve in a forked child that is killed past its limit."""
from __future__ import annotations

import multiprocessing as mp
import time

import numpy as np
import pytest

from formulations import backends
from formulations.model import Model
from planner.params import SolveParams

pytestmark = pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs fork")


def knapsack(n: int = 12) -> Model:
    """max sum (k+1) x_k s.t. sum 3(k+1) x_k <= 4n, as a minimisation (optimum known by DP)."""
    m = Model()
    cols = [m.var(f"x{k}", 0, 1, -(k + 1.0)) for k in range(n)]
    m.row([(c, 3.0 * (k + 1)) for k, c in enumerate(cols)], -float("inf"), 4.0 * n)
    m.offset = 100.0
    return m


def test_child_process_gives_the_in_process_answer(monkeypatch):
    m = knapsack()
    direct = backends.solve_highs(m, SolveParams(time_limit=10))
    monkeypatch.setattr(backends, "WATCHDOG_MIN_COLUMNS", 0)
    forked = backends.solve_highs(m, SolveParams(time_limit=10))
    assert direct.status == forked.status == "optimal"
    assert forked.objective == pytest.approx(direct.objective)
    assert np.allclose(forked.x, direct.x)
    # weights 3(k+1), capacity 48: the best value is 16 (weight exactly 48), offset 100
    assert forked.objective == pytest.approx(100.0 - 16.0)


def test_overrunning_solver_is_stopped_with_its_best_streamed_solution(monkeypatch):
    m = knapsack()

    def slow(m, params, on_solution=None, on_bound=None, **kw):
        on_solution(np.ones(m.ncols), 42.0)
        on_bound(7.0)
        time.sleep(30)  # a separation round that never looks at the clock
        raise AssertionError("not reached: the watchdog kills the child")

    monkeypatch.setattr(backends, "WATCHDOG_MIN_COLUMNS", 0)
    monkeypatch.setattr(backends, "WATCHDOG_GRACE_S", 0.3)
    monkeypatch.setattr(backends, "_solve_highs", slow)
    t0 = time.perf_counter()
    out = backends.solve_highs(m, SolveParams(time_limit=0.5))
    assert time.perf_counter() - t0 < 5
    assert out.status == "feasible" and out.objective == 42.0 and out.bound == 7.0
    assert "time limit" in out.message


def test_crashing_child_is_an_error_not_a_hang(monkeypatch):
    import os

    def crash(*a, **kw):
        os._exit(3)

    monkeypatch.setattr(backends, "WATCHDOG_MIN_COLUMNS", 0)
    monkeypatch.setattr(backends, "_solve_highs", crash)
    out = backends.solve_highs(knapsack(), SolveParams(time_limit=5))
    assert out.status == "error" and "exit code 3" in out.message


def test_exception_in_child_is_reported(monkeypatch):
    def boom(*a, **kw):
        raise RuntimeError("HiGHS rejected the model rows")

    monkeypatch.setattr(backends, "WATCHDOG_MIN_COLUMNS", 0)
    monkeypatch.setattr(backends, "_solve_highs", boom)
    out = backends.solve_highs(knapsack(), SolveParams(time_limit=5))
    assert out.status == "error" and "rejected the model rows" in out.message


def test_forked_solve_after_an_in_process_solve(monkeypatch):
    """HiGHS's worker threads from an earlier in-process run do not survive the fork; the child
    must start a fresh scheduler (it failed with model status "Not Set" before)."""
    from formulations.model import build
    from formulations.problem import extract
    from planner.analysis import baseline_peak
    from planner.models import load_model
    from planner.registry import solve

    g = load_model("layered:20")
    assert solve(g, int(0.9 * baseline_peak(g)), "exact", SolveParams(time_limit=20)).status == "optimal"
    g = load_model("layered:40")
    p = extract(g)
    m = build(p, p.capacity(int(0.9 * baseline_peak(g))))
    monkeypatch.setattr(backends, "WATCHDOG_MIN_COLUMNS", 0)
    out = backends.solve_highs(m, SolveParams(time_limit=60))
    assert out.status == "optimal", out.message


def _solve_in_daemon(q):
    backends.WATCHDOG_MIN_COLUMNS = 0
    out = backends.solve_highs(knapsack(), SolveParams(time_limit=10))
    q.put((out.status, out.objective))


def test_watchdog_works_inside_a_daemonic_worker():
    """The study runner's workers are daemonic; multiprocessing forbids them children, which
    made every large exact cell of a study crash ("daemonic processes are not allowed to have
    children") until the watchdog forked by hand."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_solve_in_daemon, args=(q,), daemon=True)
    p.start()
    status, obj = q.get(timeout=60)
    p.join(10)
    assert status == "optimal" and obj == pytest.approx(84.0)


def _uneven_knapsack(n: int = 40, seed: int = 0) -> Model:
    """A knapsack whose first solutions are not optimal (HiGHS improves on them)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(20, 60, n)
    v = w + rng.integers(-5, 6, n)
    m = Model()
    cols = [m.var(f"x{k}", 0, 1, -float(v[k])) for k in range(n)]
    m.row([(c, float(w[k])) for k, c in enumerate(cols)], -float("inf"), float(w.sum() // 2) + 0.5)
    return m


@pytest.mark.parametrize("forked", [False, True])
def test_a_target_ends_the_search_at_the_first_solution_that_meets_it(monkeypatch, forked):
    m = _uneven_knapsack()
    full = backends.solve_highs(m, SolveParams(time_limit=30))
    assert full.status == "optimal"
    target = full.objective + 5.0  # met before the optimum is found (the search improves past it)
    if forked:
        monkeypatch.setattr(backends, "WATCHDOG_MIN_COLUMNS", 0)
    stop = backends.solve_highs(m, SolveParams(time_limit=30), target=target)
    assert stop.status == "feasible"
    assert full.objective <= stop.objective <= target
    assert stop.objective > full.objective  # stopped early, not the optimum found anyway
