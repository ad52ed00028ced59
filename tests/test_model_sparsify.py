"""The sparsified model (cost fixing, recompute windows, values kept for certain as constants)
has the optimum of Checkmate's full model with the same recomputations forbidden: the
sparsification removes columns, never plans."""
from __future__ import annotations

import math
import random

from formulation_graphs import budget_case
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulations import model
from formulations.backends import solve_highs
from planner.params import SolveParams

P = SolveParams(time_limit=20)


def _forbidding(p, cap, allowed):
    """The published model with R[t, k] fixed at 0 wherever ``allowed(t, k)`` is false."""
    m = model.build(p, cap, published=True)
    if m is not None:
        for (t, k), c in m.R.items():
            if not allowed(t, k):
                m.ub[c] = 0.0
    return m


def _same_optimum(a, b):
    oa, ob = solve_highs(a, P, time_limit=20), solve_highs(b, P, time_limit=20)
    if "optimal" not in (oa.status, ob.status):
        assert {oa.status, ob.status} <= {"infeasible", "timeout"}
        return
    assert oa.status == ob.status == "optimal", (oa.status, ob.status)
    assert math.isclose(oa.objective, ob.objective, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(6, 10), frac=st.floats(0.4, 0.9),
       keep=st.floats(0.2, 1.0), windows=st.booleans())
def test_sparsified_model_keeps_the_optimum_of_the_full_one(seed, n, frac, keep, windows):
    _g, _budget, p, cap = budget_case(seed, n, frac)
    rnd = random.Random(seed)
    rec = {k for k in range(p.n) if rnd.random() < keep}
    stages = None
    if windows:
        stages = {k: {t for t in range(k + 1, p.n + 1) if rnd.random() < 0.6} for k in rec}
    sparse = model.build(p, cap, rec, stages=stages)
    full = _forbidding(p, cap, lambda t, k: k in rec and (stages is None or t in stages[k]))
    if sparse is None or full is None:
        assert sparse is None and full is None
        return
    assert model.rs_columns(p, rec) >= len(sparse.R) + len(sparse.S)
    if stages is None:
        assert model.rs_columns(p, rec) == len(sparse.R) + len(sparse.S)
    _same_optimum(sparse, full)


def test_values_whose_producer_cannot_run_again_are_constants():
    # nothing recomputable: every value is kept from its producer to its last reader, so the
    # sparsified model has no S column at all and its optimum is every op once (or nothing)
    _g, _budget, p, cap = budget_case(3, 8, 1.0)
    m = model.build(p, cap, set())
    assert m is not None and not m.R and not m.S
    out = solve_highs(m, P, time_limit=20)
    assert out.status == "optimal" and math.isclose(out.objective, float(sum(p.cost)))
