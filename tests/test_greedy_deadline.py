"""The greedy incumbent stops at its time limit: its recursive recomputation thrashes on tight
budgets (a long chain near its minimum budget runs for tens of seconds without a deadline), and
``exact`` gives it a share of its own limit, so an overrun there is an overrun of ``exact``."""
from __future__ import annotations

import time

from formulations.greedy import greedy_plan
from formulations.problem import extract
from planner.analysis import baseline_peak, min_feasible_budget
from planner.synthetic import chain


def test_greedy_plan_stops_at_its_time_limit_on_a_thrashing_chain():
    g = chain(1200)
    p = extract(g)
    peak, lo = baseline_peak(g), min_feasible_budget(g).bytes
    cap = p.capacity(int(lo + 0.05 * (peak - lo)))
    t0 = time.perf_counter()
    got = greedy_plan(p, cap, 1.0)
    # the slack covers the last placement try and a loaded machine; unbounded it takes ~25 s
    assert time.perf_counter() - t0 < 8.0
    assert got is None or got[0].peak_units <= cap
