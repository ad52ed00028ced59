"""Refining the checkpoint relaxation until its own solution is a plan (large models, where
the master MILP cannot prove anything). Each round: the plan read off the relaxation's
solution (proven optimal when it fits and places); otherwise a new checkpoint where that plan
or the incumbent pays what the relaxation does not see (``relaxation.tighten``), the
relaxation's MIP again, and the guided MILP on its windows seeking a plan at the bound."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from planner.result import Result, Status

from .guided import guided_to_bound
from .relaxation import tighten
from .relaxed import relaxed_plan
from .state import GUIDED, RELAXED, Context, RelaxationState

log = logging.getLogger(__name__)


@dataclass
class Refined:
    plan: Result | None          # the best plan: the one given, or a cheaper one found
    bound: float                 # the bound, lifted by the rounds
    source: str | None = None    # the source label of ``plan`` when a round found it
    found: dict[str, float] = field(default_factory=dict)  # each plan adopted: source -> cost


def refine(ctx: Context, inc: Result | None, bound: float, state: RelaxationState, deadline: float, stats: dict,
           *, first_lt=None, rounds: int | None = None, fresh: bool = False) -> Refined:
    """Rounds from ``state.solution`` while more than ``refine_min_s`` is left and ``inc`` is
    above the bound; stops when proven or when nothing separates. ``inc`` may be None (no
    cutoff, nothing to separate against). ``first_lt``: the lifetimes of the solution's plan
    when the early phase tried it. ``rounds``: at most that many tightening rounds, the last
    one's windows through the guided MILP only when its MIP was solved to optimality (an
    unfinished one's windows do not lead to the optimum). ``fresh``: the solution's windows
    have not been through the guided MILP; with an incumbent to start from, it goes first
    (placing the relaxation's plan can take minutes where its peak meets the capacity).
    ``state`` gets each new solution."""
    from ..checkpoints import recompute_windows

    t = ctx.tuning
    out = Refined(inc, bound)
    cps, runs = state.solution
    base = cps
    done = 0  # tightening rounds

    def adopt(r: Result | None, label: str) -> bool:
        """Take ``r`` when it is cheaper; True when the best plan now meets the bound."""
        if r is None or (out.plan is not None and r.objective >= out.plan.objective):
            return False
        out.plan, out.source = r, label
        out.found[label] = r.objective
        ctx.prog.figures(label, r.objective, out.bound, force=True)
        return ctx.meets(r.objective, out.bound)

    def guided(cps: list[int], runs: list[list[int]]) -> bool:
        """``guided_to_bound`` on the windows of ``runs``; True when proven."""
        state.guided_ran = True
        return adopt(guided_to_bound(ctx, recompute_windows(cps, ctx.p.n, runs), out.plan, deadline, stats,
                                     out.bound), GUIDED)

    while deadline - time.perf_counter() > t.refine_min_s and (out.plan is None
                                                              or not ctx.meets(out.plan.objective, out.bound)):
        first_guided = fresh and out.plan is not None
        if first_guided and guided(cps, runs):
            break
        if not fresh and first_lt is not None:
            got, lt = None, first_lt  # tried by the early phase
        else:
            got, lt = relaxed_plan(ctx, cps, runs, out.plan, deadline, stats)
        if got is not None:
            if adopt(got, RELAXED):
                break
        elif fresh and not first_guided and guided(cps, runs):
            break
        cps, new_runs, val = tighten(ctx, cps, base, runs, lt, out.plan, deadline, state, stats)
        done += 1
        if val is None:
            break
        if val == float("inf"):  # a validated plan outranks the relaxation
            log.error("refined checkpoint relaxation claims no plan fits but one exists; stopped")
            break
        out.bound = max(out.bound, ctx.total + val)
        ctx.prog.figures(f"refined checkpoints ({len(cps)})", out.plan.objective if out.plan is not None else None,
                         out.bound, force=True)
        if new_runs is None or (out.plan is not None and ctx.meets(out.plan.objective, out.bound)):
            break
        runs = new_runs
        fresh = True
        state.solution, state.fresh, state.relaxed_lt = (cps, runs), True, None
        if rounds is not None and done >= rounds:
            # the last round's windows: through the guided MILP only when its MIP was optimal
            if state.rounds[-1].mip_status == Status.OPTIMAL and deadline - time.perf_counter() > t.refine_min_s:
                proven = guided(cps, runs)
                state.fresh = False
                if not proven and stats["guided"].get("status") == "too large":
                    # no MILP on its windows: the solution's own plan is the one read off it
                    got, state.relaxed_lt = relaxed_plan(ctx, cps, runs, out.plan, deadline, stats)
                    adopt(got, RELAXED)
            break
    return out
