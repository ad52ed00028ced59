"""Splitting lifetimes across the peak (``formulations.split``): monotone, runnable, valid plans."""
import time

import numpy as np
import pytest
from graphgen import dags
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_checks import assert_places_and_validates, in_checkmates_class

from formulations.keepset import _Builder, descend
from formulations.problem import extract
from formulations.schedule import lifetimes
from formulations.segments import segment_start
from formulations.split import split_peak, split_state
from planner.synthetic import chain, layered, ushape

_graphs = st.one_of(dags(max_ops=14), st.builds(chain, st.integers(2, 16)), st.builds(ushape, st.integers(1, 3)),
                    st.builds(layered, st.integers(5, 30), st.integers(0, 50)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=_graphs, plain=st.booleans())
def test_split_lowers_the_key_and_every_state_is_a_valid_plan(g, plain):
    p = extract(g)
    b = _Builder(p)
    seq = b.sequence(np.ones(len(p.values), dtype=bool))
    if not plain:  # from the keep-set descent's (or the segment start's) local optimum too
        for s in descend(p, time.perf_counter() + 2, start=segment_start(p, time.perf_counter() + 2)):
            seq = list(s.seq)
    states = list(split_peak(p, seq, time.perf_counter() + 5))
    keys = [(s.peak, s.at_peak, s.cost) for s in states]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == len(keys)
    for s in states[1:]:  # the split's own states (the first is the sequence given)
        assert in_checkmates_class(p, s.seq)
        lt = lifetimes(p, list(s.seq))
        assert lt is not None and lt.peak_units == s.peak  # the fast rebuild agrees with the real rules
    last = states[-1]
    fast = split_state(p, seq, time.perf_counter() + 5)  # moves unchecked, the end checked
    lt = lifetimes(p, list(fast.seq))
    assert lt is not None and lt.peak_units == fast.peak
    assert_places_and_validates(g, p, last.seq, "split")


@pytest.mark.parametrize("g", [chain(8), ushape(3)], ids=["chain8", "ushape3"])
def test_split_lowers_the_plain_peak_of_a_training_step(g):
    # the forward values kept for the backward are live across the peak without being used
    # there: rerunning them after it (from values live there) lowers the peak
    p = extract(g)
    b = _Builder(p)
    seq = b.sequence(np.ones(len(p.values), dtype=bool))
    first = b.state(seq, 0)
    states = list(split_peak(p, seq, time.perf_counter() + 10))
    assert states[-1].peak < first.peak


def test_split_stops_at_the_target():
    g = layered(40, 3)
    p = extract(g)
    b = _Builder(p)
    seq = b.sequence(np.ones(len(p.values), dtype=bool))
    states = list(split_peak(p, seq, time.perf_counter() + 10))
    if len(states) > 2:
        target = states[1].peak
        got = list(split_peak(p, seq, time.perf_counter() + 10, target=target))
        assert got[-1].peak <= target and len(got) == 2
