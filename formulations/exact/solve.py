"""``solve_exact``: the phases of method ``exact`` in order (docs/exact.md describes them)."""
from __future__ import annotations

import logging
from dataclasses import replace

from planner.graph import Graph
from planner.params import SolveParams
from planner.progress import Progress
from planner.result import Result

from .. import model
from ..bounds import knapsack_bound
from ..common import setup
from ..model import rs_columns
from .early import early
from .incumbent import find_incumbent
from .master import cost_fixed, master
from .outcome import meets_bound
from .refine import refine
from .relaxation import checkpoint, closure
from .sources import DEFAULT_SOURCES, Sources
from .state import GUIDED, Context, RelaxationState
from .tuning import Tuning

log = logging.getLogger(__name__)


def solve_exact(g: Graph, budget: int, params: SolveParams, tuning: Tuning | None = None,
                sources: Sources = DEFAULT_SOURCES) -> Result:
    """The proven joint optimum (remat and addresses) within ``params.time_limit``, or the best
    plan with its bound and gap. ``tuning`` defaults to ``tuning.DEFAULT`` (read at call time)."""
    from . import tuning as tuning_mod
    from .guided import guided

    s = setup("exact", g, budget, params)
    if isinstance(s, Result):
        return s
    ctx = Context(g, s.p, budget, s.cap, params, tuning or tuning_mod.DEFAULT, Progress("exact", s.t0),
                  float(sum(s.p.cost)))
    p, cap, deadline, t, prog, total = ctx.p, ctx.cap, s.deadline, ctx.tuning, ctx.prog, ctx.total
    kb, kb_at = knapsack_bound(p, cap)
    if kb == float("inf"):
        return Result("exact", "infeasible", backend="bound", message=(
            f"no plan fits: at the first run of op {kb_at} ({g.ops[kb_at].name}) the values that must be "
            f"live (its inputs, and what nothing can recompute later) plus every other value still "
            f"needed exceed the budget even with the cheapest drops (knapsack bound)"))
    prog.note(f"{p.n} ops, capacity {cap} units; looking for an incumbent (plain schedule, heuristics, "
              f"checkpoint-guided MILP, gap eviction, greedy)")
    early_stats: dict = {}
    state = RelaxationState()  # what the early phase computed, reused below

    found = find_incumbent(ctx, sources, deadline,
                           early=lambda best, improve=None: early(ctx, kb, best, deadline, state, early_stats,
                                                                 improve))
    inc, src, tried = found.plan, found.source, found.tried
    stats: dict = {"incumbent": src or "none found", "incumbent_costs": tried, **early_stats}
    prog.note(f"incumbent {src}: cost {inc.objective:.6g} (overhead {_overhead(inc.objective, total)})"
              if inc is not None else "no incumbent found")
    if inc is not None and src == "none":
        plan = replace(inc.plan, method="exact")
        return Result("exact", "optimal", plan=plan, objective=inc.objective, lower_bound=total, gap=0.0,
                      backend="plain schedule", stats={**stats, "reason": "the plain schedule fits"})
    inc_cost = inc.objective if inc is not None else None
    rec = cost_fixed(p, inc_cost)
    stats["recomputable_ops"] = len(rec)
    # a MILP too large for memory is refused before it is built (model.MAX_RS_COLUMNS); known
    # now, so the time it would have had goes to the checkpoint relaxation instead
    rs = rs_columns(p, rec)
    stats["milp_rs_columns"] = rs
    milp_fits = rs <= model.MAX_RS_COLUMNS
    log.info("exact: %d ops, incumbent %s (%s), %d recomputable", p.n, inc_cost, src, len(rec))
    # every op runs at least once, plus what every plan recomputes (formulations.bounds): a
    # bound for every plan that needs no big LP
    cb, cb_at = state.closure if state.closure is not None else closure(ctx, deadline, stats)
    if cb == float("inf"):
        if inc is not None:  # a validated plan outranks the proof: the bound would be wrong
            log.error("closure bound claims op %s infeasible but a plan exists; bound ignored", cb_at)
            cb = 0.0
        else:
            return Result("exact", "infeasible", backend="bound", stats=stats, message=(
                f"no plan fits: at the first run of op {cb_at} ({g.ops[cb_at].name}) the values that must "
                f"be live, with what recomputing the others needs, exceed the budget (closure bound)"))
    bound = total + max(kb, cb)
    windows = None
    if not ctx.meets(inc_cost, bound):
        ck = state.checkpoint
        if ck is None or (not milp_fits and ck != float("inf")):
            # not run early, or the MILP is too large: then over more and more checkpoints
            # with a solution from the early phase the refine rounds follow: they get the rest
            ck2, windows = checkpoint(ctx, deadline, state, stats, None if inc_cost is None else inc_cost - total,
                                      everything=not milp_fits, large=rs > t.large_rs_columns,
                                      share=t.checkpoint_share_refine if state.solution is not None else None,
                                      first=t.checkpoints if ck is None else 2 * t.checkpoints, start=inc)
            ck = ck2 if ck is None else max(ck, ck2)
        if ck == float("inf") and inc is None:
            return Result("exact", "infeasible", backend="bound", stats=stats, message=(
                "no plan fits: the checkpoint relaxation (formulations.checkpoints) has no solution"))
        if ck == float("inf") and inc is not None:  # a validated plan outranks the relaxation
            log.error("checkpoint relaxation claims no plan fits but one exists; bound ignored")
        elif ck != float("inf"):
            bound = max(bound, total + ck)
    prog.figures("knapsack, closure and checkpoint bounds", inc.objective if inc is not None else None, bound,
                 force=True)
    stats["knapsack_bound"] = total + kb
    stats["bound_before_milp"] = bound
    if ctx.meets(inc_cost, bound):
        return meets_bound(inc, inc_cost, src, stats)
    if windows and not state.guided_ran:
        got = guided(ctx, rec, windows, inc_cost, deadline, stats, bound=bound)
        if got is not None:
            inc, inc_cost, src = got, got.objective, GUIDED
            stats["incumbent"] = GUIDED
            tried[GUIDED] = inc_cost
            prog.figures(GUIDED, inc_cost, bound, force=True)
            if ctx.meets(inc_cost, bound):
                return meets_bound(inc, inc_cost, src, stats)
    if state.solution is not None and (not milp_fits or rs > t.large_rs_columns):
        # the MILP's root LP is no help at this size: the time goes to refining the relaxation
        # until its own plan fits (the only plan source left when every other one failed)
        r = refine(ctx, inc, bound, state, deadline, stats, first_lt=state.relaxed_lt, fresh=state.fresh)
        inc, bound = r.plan, r.bound
        if r.source is not None:
            src = stats["incumbent"] = r.source
            tried.update(r.found)
        inc_cost = inc.objective if inc is not None else None
        if ctx.meets(inc_cost, bound):
            return meets_bound(inc, inc_cost, src, stats)
    if inc_cost is not None:  # the incumbent may have improved since cost fixing above
        rec &= cost_fixed(p, inc_cost)
        stats["recomputable_ops"] = len(rec)
        stats["milp_rs_columns"] = rs_columns(p, rec)
    return master(ctx, inc, inc_cost, bound, rec, deadline, stats)


def _overhead(cost: float, total: float) -> str:
    """``cost`` over every op once, as a percentage (a graph of zero cost has none)."""
    return f"{cost / total - 1:.2%}" if total > 0 else "n/a (zero total cost)"
