"""Time windows of a placed instance (``instances_windows``): feasible by construction at
their capacity, and the engine places them (or says timeout with the bound)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.alloc import check_solution, solve_dsa
from planner.alloc.instances import trace
from planner.alloc.instances_windows import windows
from planner.alloc.problem import live_lower_bound


@settings(max_examples=20, deadline=None)
@given(st.integers(20, 200), st.integers(0, 1000), st.integers(1, 4))
def test_windows_of_a_placed_instance_are_valid_at_their_capacity(n, seed, count):
    bufs, offsets, cap = trace(n, seed=seed)
    wins = windows(bufs, offsets, count, seed=seed)
    assert 1 <= len(wins) <= count
    h0, h1 = min(b.lower for b in bufs), max(b.upper for b in bufs)
    ids = {b.id: b for b in bufs}
    for sub, offs, wcap in wins:
        assert check_solution(sub, offs, wcap) == [] and wcap <= cap
        assert live_lower_bound(sub) <= wcap
        lo, up = min(b.lower for b in sub), max(b.upper for b in sub)
        assert up - lo < h1 - h0  # a strict window, its buffers clipped into it
        for b in sub:
            orig = ids[b.id]
            assert orig.lower <= b.lower < b.upper <= orig.upper and b.size == orig.size


def test_the_engine_places_windows_of_a_tight_instance():
    bufs, offsets, _ = trace(150, seed=2)
    for sub, _, cap in windows(bufs, offsets, 3, seed=1):
        sol = solve_dsa(sub, cap, time_limit=10)
        assert sol.offsets is not None and check_solution(sub, sol.offsets, cap) == []
