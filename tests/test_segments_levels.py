"""Segments on several levels (``formulations.segments``, Revolve-like): every start is a valid
plan in Checkmate's class, its peak is ``schedule.lifetimes``' peak, and on long chains the
levels lower the one-level peak at a bounded number of runs per op."""
import collections
import time

from graphgen import dags
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_checks import assert_places_and_validates, in_checkmates_class

from formulations.problem import extract
from formulations.schedule import lifetimes
from formulations.segments import segment_starts
from planner.synthetic import chain, ushape

_graphs = st.one_of(st.builds(chain, st.integers(8, 48)), st.builds(ushape, st.integers(2, 4)),
                    dags(max_ops=24))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=_graphs)
def test_every_level_start_is_a_valid_plan_with_the_lifetimes_peak(g):
    p = extract(g)
    for (_, _, groups, depth), _, state in segment_starts(p, time.perf_counter() + 30):
        if groups == 1:
            continue  # one level: tests/test_segments.py
        assert in_checkmates_class(p, state.seq)
        lt = lifetimes(p, list(state.seq))
        assert lt is not None and lt.peak_units == state.peak
        assert_places_and_validates(g, p, state.seq, "segments")


def test_levels_lower_a_long_chains_peak_with_few_runs_per_op():
    p = extract(chain(64))
    one, multi = [], []
    for (_, _, groups, depth), _, state in segment_starts(p, time.perf_counter() + 60):
        runs = max(collections.Counter(state.seq).values())
        assert runs <= depth + 2  # each level recomputes an op once more, not once per backward step
        (one if groups == 1 else multi).append(state.peak)
    assert one and multi
    assert min(multi) < min(one)
