"""The early phase of ``exact``, run as soon as the instant heuristics have given what they
can and before the slow incumbent sources: the closure LP, the checkpoint relaxation, the plan
read off its solution, the guided MILP on its windows, and (where that plan is far over the
capacity on a large model) one round of refining. On the models measured it proves most
budgets before the slow sources would have started."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from planner.result import Result

from ..model import rs_columns
from .guided import guided
from .master import cost_fixed
from .refine import refine
from .relaxation import checkpoint, closure
from .relaxed import relaxed_plan
from .state import GUIDED, RELAXED, Context, RelaxationState


@dataclass(frozen=True)
class EarlyPlan:
    plan: Result | None   # a plan better than the heuristics' best, or None
    proven: bool          # the best plan known meets the bound: the other sources are skipped
    source: str           # the plan's source label


def early(ctx: Context, kb: float, best: Result | None, deadline: float, state: RelaxationState,
          stats: dict, improve: Callable[[], Result | None] | None = None) -> EarlyPlan:
    """The early phase given the knapsack bound ``kb`` and the heuristics' ``best`` plan;
    ``state`` keeps what it computed (closure, checkpoint bound, the relaxation's solution).
    ``improve()``: a better plan than ``best`` at some cost (pruning), asked for only once
    neither the bounds nor the relaxation's plan proved, before the guided MILP and refine
    round, whose cutoff and cost fixing it tightens."""
    t, prog = ctx.tuning, ctx.prog
    cb, cb_at = closure(ctx, deadline, stats)
    state.closure = (cb, cb_at)
    if cb == float("inf"):
        return EarlyPlan(None, False, GUIDED)  # solve_exact decides (infeasible, or a plan outranks the bound)
    bound = ctx.total + max(kb, cb)
    inc_cost = best.objective if best is not None else None
    if ctx.meets(inc_cost, bound):
        return EarlyPlan(None, True, GUIDED)
    slack = None if inc_cost is None else inc_cost - ctx.total
    ck, windows = checkpoint(ctx, deadline, state, stats, slack, share=t.early_checkpoint_share, start=best)
    state.checkpoint = ck
    if ck == float("inf"):
        return EarlyPlan(None, False, GUIDED)
    bound = max(bound, ctx.total + ck)
    prog.figures("closure and checkpoint bounds", inc_cost, bound, force=True)
    if ctx.meets(inc_cost, bound):
        return EarlyPlan(None, True, GUIDED)
    relaxed = lt = None
    if state.solution is not None:
        # a fitting plan of the relaxation's cost is optimal; a cheaper one is a better cutoff
        relaxed, lt = relaxed_plan(ctx, *state.solution, best, deadline, stats)
        state.relaxed_lt = lt
        if relaxed is not None:
            prog.figures(RELAXED, relaxed.objective, bound, force=True)
            if ctx.meets(relaxed.objective, bound):
                return EarlyPlan(relaxed, True, RELAXED)
            inc_cost = relaxed.objective
    if improve is not None:
        better = improve()
        if better is not None and (best is None or better.objective < best.objective):
            best = better
            if inc_cost is None or better.objective < inc_cost:
                inc_cost = better.objective
            if ctx.meets(better.objective, bound):
                return EarlyPlan(None, True, GUIDED)  # the caller holds that plan already
    got = None
    far = lt is not None and lt.peak_units > ctx.cap * (1 + t.early_guided_overflow)
    large = state.solution is not None and rs_columns(ctx.p, cost_fixed(ctx.p, inc_cost)) > t.large_rs_columns
    refine_next = far and large
    # far over, the relaxation's windows lack most recomputations a plan needs and the guided
    # MILP spends its cap finding none; the refine round below gets the time instead
    hopeless = (refine_next and lt.peak_units > ctx.cap * (1 + t.early_guided_skip_overflow)
                and deadline - time.perf_counter() >= t.early_refine_min_s)
    if windows and not hopeless:
        state.guided_ran = True
        got = guided(ctx, cost_fixed(ctx.p, inc_cost), windows, inc_cost,
                     min(deadline, time.perf_counter() + t.early_guided_max_s / t.guided_share) if far else deadline,
                     stats, bound=bound)
        # too large to solve: when the relaxation's plan overflows, refining is the road left
        refine_next = refine_next or (large and lt is not None and lt.peak_units > ctx.cap
                                      and stats["guided"].get("status") == "too large")
        if got is not None:
            prog.figures(GUIDED, got.objective, bound, force=True)
            if ctx.meets(got.objective, bound):
                return EarlyPlan(got, True, GUIDED)
    plans = [(r, label) for r, label in ((got, GUIDED), (relaxed, RELAXED), (best, None)) if r is not None]
    first, label = min(plans, key=lambda c: c[0].objective) if plans else (None, RELAXED)
    if refine_next and deadline - time.perf_counter() >= t.early_refine_min_s:
        # the relaxation's windows miss recomputations the plans need, and the MILP is too
        # large to prove anything: one round of refining now, whose guided MILP needs no
        # incumbent (it seeks plans at the bound), within a share of the time left
        until = time.perf_counter() + t.early_refine_share * (deadline - time.perf_counter())
        r = refine(ctx, first, bound, state, until, stats, first_lt=lt, rounds=1)
        state.checkpoint = max(ck, r.bound - ctx.total)
        if r.plan is not None and r.plan is not first:
            return EarlyPlan(r.plan, ctx.meets(r.plan.objective, r.bound), r.source)
    if label is None:  # the heuristics' plan is still the best: nothing new to report
        return EarlyPlan(None, False, RELAXED)
    return EarlyPlan(first, False, label)
