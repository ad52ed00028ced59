"""Segment checkpointing (``formulations.segments``): valid plans, each segment recomputed once."""
import collections
import time

from graphgen import dags
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulations.constructive import _constructed, place_fitting
from formulations.keepset import _Builder, descend
from formulations.problem import extract
from formulations.segments import segment_start, segment_starts
from planner.synthetic import chain, ushape
from planner.validator import validate

_graphs = st.one_of(dags(max_ops=12), st.builds(chain, st.integers(2, 12)), st.builds(ushape, st.integers(1, 3)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=_graphs)
def test_every_segment_start_places_as_a_valid_plan_in_checkmates_class(g):
    p = extract(g)
    for _, start, state in segment_starts(p, time.perf_counter() + 30):
        firsts = list(dict.fromkeys(state.seq))
        assert firsts == sorted(firsts) and set(firsts) == set(range(p.n))
        placed = place_fitting(p, list(state.seq), None, 2.0, 0, 1)
        assert placed is not None
        c = _constructed(p, placed, None, "constructive", time.perf_counter(), "keep-set")
        rep = validate(g, c.plan)
        assert rep.valid, rep.violations[:1]
        # the descent from a start only lowers its key, and its states stay runnable
        keys = [(s.peak, s.at_peak, s.cost) for s in descend(p, time.perf_counter() + 2, start=start)]
        assert keys == sorted(keys, reverse=True)


def test_chain_segments_lower_the_peak_and_recompute_each_forward_op_at_most_once():
    g = chain(32)
    p = extract(g)
    b = _Builder(p)
    plain = b.state(b.sequence(__import__("numpy").ones(len(p.values), dtype=bool)), 0)
    assert segment_start(p, time.perf_counter() + 30) is not None
    # one level (several: tests/test_segments_levels.py)
    _, start, st = min((x for x in segment_starts(p, time.perf_counter() + 30) if x[0][2] == 1),
                       key=lambda x: x[2].peak)
    assert b.state(b.sequence(start.keep, start.hold, start.resume, start.window), 0).peak == st.peak
    assert st.peak < plain.peak
    runs = collections.Counter(st.seq)
    assert max(runs.values()) == 2  # recomputed, but once: not once per backward step
    assert not (~start.keep & (start.hold < 0)).any()  # every dropped value is sticky
