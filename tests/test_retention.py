"""The retention model (``formulations.retention``): CP-SAT sequences that fit and validate."""
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulations.constructive import _constructed, place_fitting
from formulations.keepset import _Builder
from formulations.problem import extract
from formulations.retention import retention_applies, retention_sequence
from planner.synthetic import chain, layered
from planner.validator import validate


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 40), seed=st.integers(0, 100))
def test_lowest_peak_sequence_fits_its_bound_places_and_validates(n, seed):
    g = layered(n, seed)
    p = extract(g)
    assert retention_applies(p)
    b = _Builder(p)
    plain = b.state(b.sequence(__import__("numpy").ones(len(p.values), dtype=bool)), 0)
    seq = retention_sequence(p, None, time.perf_counter() + 3)
    assert seq is not None
    st_ = b.state(seq, 0)
    assert st_.peak <= plain.peak  # keeping everything is one of the model's solutions
    firsts = list(dict.fromkeys(seq))
    assert firsts == sorted(firsts) and set(firsts) == set(range(p.n))  # Checkmate's class
    # within the plain peak (keeping everything fits it), the cheapest sequence stays within it
    cheap = retention_sequence(p, plain.peak, time.perf_counter() + 3)
    assert cheap is not None and b.state(cheap, 0).peak <= plain.peak
    placed = place_fitting(p, cheap, None, 2.0, 0, 1)
    c = _constructed(p, placed, None, "constructive", time.perf_counter(), "retention")
    assert validate(g, c.plan).valid


def test_a_capacity_below_every_plan_of_the_model_gives_none_and_views_are_not_covered():
    p = extract(layered(30, 1))
    assert retention_sequence(p, 0, time.perf_counter() + 10) is None
    q = extract(chain(4))  # backward ops write two gradients: not a plain problem
    assert not retention_applies(q) and retention_sequence(q, None, time.perf_counter() + 5) is None
