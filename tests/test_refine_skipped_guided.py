"""When the guided MILP of refine's last round is too large to build
(``Tuning.guided_max_rs_columns``), the round's new solution still gets its own plan read off
(``relaxed_plan``): without it that solution's plan would wait for a later call that may get
no time (swin-t 0.5: the early refine round's solution was never read)."""
from __future__ import annotations

import time
from dataclasses import replace

from formulation_graphs import budget_case

from formulations.bounds import tight_ops
from formulations.checkpoints import lp_then_mip
from formulations.exact import DEFAULT
from formulations.exact.refine import refine
from formulations.exact.state import Context, RelaxationState
from planner.params import SolveParams
from planner.progress import Progress
from planner.validator import validate


def _case(seed: int, n: int, frac: float) -> bool | None:
    """Refine one round with every guided MILP too large; None when the case does not apply,
    else whether the skipped branch ran (asserting what it must give)."""
    g, budget, p, cap = budget_case(seed, n, frac)
    tight = [t for _, t in tight_ops(p, cap)]
    if not tight:
        return None
    out = lp_then_mip(p, cap, tight[:1], lp_time=10, deadline=time.perf_counter() + 20)
    if out.get("runs") is None:
        return None
    stats: dict = {"incumbent_costs": {}}
    ctx = Context.make(g, budget, SolveParams(time_limit=8),
                       replace(DEFAULT, refine_min_s=0.5, guided_max_rs_columns=0), Progress("exact"), p)
    state = RelaxationState(solution=(out["checkpoints"], out["runs"]))
    r = refine(ctx, None, float(sum(p.cost)) + out["mip"][0], state, time.perf_counter() + 8, stats, rounds=1)
    if r.plan is not None:
        assert validate(g, r.plan.plan).valid
    if state.solution[0] == out["checkpoints"] or stats.get("guided", {}).get("status") != "too large":
        return False
    assert stats["relaxed_plans"][-1]["checkpoints"] == len(state.solution[0])
    assert state.relaxed_lt is not None
    return True


def test_the_last_rounds_plan_is_read_when_its_guided_milp_is_skipped():
    hits = [_case(seed, n, 0.3) for seed in range(40) for n in (5, 6)]
    assert sum(1 for h in hits if h) >= 3, "too few cases reach a skipped guided MILP after a round"
