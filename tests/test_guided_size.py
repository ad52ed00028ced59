"""The guided MILP's size is counted before it is built (``model.rs_columns`` with stages), and a
model above ``Tuning.guided_max_rs_columns`` is skipped rather than built and timed out."""
from __future__ import annotations

import random
import time
from dataclasses import replace

from formulation_graphs import budget_case
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulations.checkpoints import recompute_windows
from formulations.exact.guided import guided_run
from formulations.exact.state import Context
from formulations.exact.tuning import DEFAULT
from formulations.model import build, rs_columns
from planner.params import SolveParams


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), n=st.integers(3, 12), frac=st.floats(0.0, 1.0))
def test_the_count_with_stages_is_the_built_one(seed, n, frac):
    _g, _budget, p, cap = budget_case(seed, n, frac)
    rnd = random.Random(seed)
    rec = {k for k in range(p.n) if rnd.random() < 0.8}
    stages = {k: {t for t in range(p.n + 1) if rnd.random() < 0.5} for k in range(p.n) if rnd.random() < 0.7}
    m = build(p, cap, rec, stages=stages)
    if m is None:
        return
    assert rs_columns(p, rec, stages=stages) == len(m.R) + len(m.S)


def test_a_guided_model_over_the_limit_is_skipped_unbuilt():
    g, budget, p, _cap = budget_case(7, 10, 0.2)
    windows = recompute_windows([3], p.n, [list(range(4))])
    rec = set(range(p.n))
    size = rs_columns(p, rec & set(windows), stages={k: w for k, w in windows.items() if k in rec})
    params = SolveParams(time_limit=10)
    for limit, skipped in ((size - 1, True), (size, False)):
        ctx = Context.make(g, budget, params, replace(DEFAULT, guided_max_rs_columns=limit), p=p)
        _res, info = guided_run(ctx, rec, windows, None, time.perf_counter() + 10)
        assert info["rs_columns"] == size
        assert (info["status"] == "too large") == skipped
        assert ("columns" in info) != skipped  # built only when not skipped

