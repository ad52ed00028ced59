"""The early phase when the guided MILP on the relaxation's windows is too large to build
(``Tuning.guided_max_rs_columns``) and the relaxation's plan overflows on a large model: the
refine round runs in its place, however small the overflow (the "far" rule alone would not)."""
from __future__ import annotations

import time
from dataclasses import replace

from formulation_graphs import budget_case

from formulations.bounds import knapsack_bound
from formulations.exact import DEFAULT
from formulations.exact.early import early
from formulations.exact.state import Context, RelaxationState
from planner.params import SolveParams
from planner.progress import Progress
from planner.validator import validate

# every model counts as large, no overflow counts as far: only the new rule can start refining
T = replace(DEFAULT, guided_max_rs_columns=0, large_rs_columns=0, early_guided_overflow=float("inf"),
            early_refine_min_s=0.0, refine_min_s=0.5)


def _case(seed: int, n: int, frac: float) -> bool | None:
    g, budget, p, cap = budget_case(seed, n, frac)
    ctx = Context.make(g, budget, SolveParams(time_limit=8), T, Progress("exact"), p)
    kb, _ = knapsack_bound(p, cap)
    if kb == float("inf"):
        return None
    stats: dict = {"incumbent_costs": {}}
    state = RelaxationState()
    got = early(ctx, kb, None, time.perf_counter() + 8, state, stats)
    if got.plan is not None:
        assert validate(g, got.plan.plan).valid
    plans = stats.get("relaxed_plans") or []
    if not plans or plans[0].get("status") != "over capacity" or stats.get("guided", {}).get("status") != "too large":
        return None
    # a round ran: it tried candidates (``lifting``) or found none that separates
    assert "lifting" in stats or stats.get("refine") == "nothing separates", "no refine round"
    return True


def test_a_skipped_guided_milp_hands_its_time_to_a_refine_round():
    hits = [_case(seed, n, 0.3) for seed in range(60) for n in (5, 6)]
    assert sum(1 for h in hits if h) >= 3, "too few cases reach a skipped guided MILP with an overflowing plan"
