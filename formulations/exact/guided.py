"""The checkpoint-guided MILP: Checkmate's MILP restricted to the ops and stages in which the
checkpoint relaxation's solution recomputes. A restriction, so it gives plans (upper bounds),
never bounds; a plan that meets the best bound is optimal. The restricted model is small (the
relaxation's recomputations are mostly the right ones), so it solves where the full MILP does
not."""
from __future__ import annotations

import logging
import time

from planner.result import Result, Status

from ..schedule import recompute_stages
from .master import cost_fixed, stage_start
from .state import Context

log = logging.getLogger(__name__)


def guided(ctx: Context, rec: set[int], windows: dict[int, set[int]], inc_cost: float | None, deadline: float,
           stats: dict, *, start: Result | None = None, share: float = 0.0, bound: float | None = None,
           at_bound: bool = False) -> Result | None:
    """A validated plan from the MILP restricted to ``windows`` (op -> stages) and the ops of
    ``rec``, cheaper than ``inc_cost``, within ``share`` (default ``guided_share``) of the
    time left; None when none is found. ``stats["guided"]`` gets the run's figures.
    ``start``: a plan whose recomputations join the windows and which HiGHS gets as a MIP
    start, so the search improves on it. ``bound``: the best bound known; a solution that
    meets it ends the search. ``at_bound``: only a plan at ``bound`` is sought (the bound is
    the cutoff, ``start`` is ignored, and the windows are widened to the first reader after
    each: ``checkpoints.widen_windows``)."""
    res, info = guided_run(ctx, rec, windows, inc_cost, deadline, start=start, share=share, bound=bound,
                           at_bound=at_bound)
    stats["guided"] = info
    return res


def guided_run(ctx: Context, rec: set[int], windows: dict[int, set[int]], inc_cost: float | None,
               deadline: float, *, start: Result | None = None, share: float = 0.0, bound: float | None = None,
               at_bound: bool = False) -> tuple[Result | None, dict]:
    """``guided``, returning its figures instead of recording them."""
    from ..backends import solve_highs
    from ..common import place_stages, plan_result
    from ..model import BuildTimeout, ModelTooLarge, build, decode, rs_columns
    from ..validator_bridge import validated

    p, cap, t, params = ctx.p, ctx.cap, ctx.tuning, ctx.params
    t0 = time.perf_counter()
    stop = t0 + (share or t.guided_share) * max(0.0, deadline - t0)
    at_bound = at_bound and bound is not None
    if at_bound:
        from ..checkpoints import widen_windows

        # a plan at the bound may recompute an op that costs exactly the slack
        rec = {k for k in rec if p.cost[k] <= bound - ctx.total + 1e-9 * max(1.0, ctx.total)}
        windows = widen_windows(p, windows)
    win = {k: set(w) for k, w in windows.items() if k in rec}
    seq = [st.ref for st in start.plan.steps if st.kind == "compute"] if start is not None else None
    if seq is not None and not at_bound:
        for k, stage in recompute_stages(seq):
            if k in rec:
                win.setdefault(k, set()).add(stage)
    info: dict = {"ops": len(win), "stages": sum(len(w) for w in win.values())}
    if not win:
        info["status"] = "nothing to recompute"
        return None, info
    info["rs_columns"] = rs = rs_columns(p, set(win), stages=win)
    if rs > t.guided_max_rs_columns:
        info["status"] = "too large"
        log.info("exact: guided MILP skipped: %d R and S columns", rs)
        return None, info
    try:
        m = build(p, cap, set(win), deadline=stop, stages=win)
    except (BuildTimeout, ModelTooLarge) as exc:
        info["status"] = str(exc)
        return None, info
    if m is None:
        info["status"] = "infeasible before solving"
        return None, info
    info["columns"] = m.ncols
    opts = dict(t.highs_options)
    if m.ncols > t.presolve_max_columns:
        opts.setdefault("presolve", "off")
    mip_start = stage_start(p, m, seq) if seq is not None and not at_bound else None
    cutoff = bound * (1 + 1e-9) if at_bound else inc_cost
    if at_bound:
        info["at_bound"] = True
    elif mip_start is not None:
        info["start"] = True
        cutoff = inc_cost * (1 + 1e-7)  # the start itself must pass the cutoff; not returned unless cheaper
    out = solve_highs(m, params, time_limit=max(0.1, stop - time.perf_counter()), cutoff=cutoff, options=opts,
                      start=mip_start, target=None if bound is None else bound * (1 + 1e-9))
    info["status"] = out.status
    info["seconds"] = round(time.perf_counter() - t0, 3)
    log.info("exact: guided MILP (%d ops, %d columns): %s %s in %.1fs", len(win), m.ncols, out.status,
             out.objective, info["seconds"])
    if out.x is None:
        return None, info
    # a schedule at the bound only needs its addresses to end the search: it gets most of the time left
    at_bound = bound is not None and out.objective is not None and out.objective <= bound * (1 + 1e-9)
    share_place = t.place_at_bound_share if at_bound else t.place_share
    placed = place_stages(p, decode(p, m, out.x), cap,
                          time.perf_counter() + max(t.place_try_s, share_place * (deadline - time.perf_counter())),
                          params)
    info["placement"] = "none" if placed is None else placed.status
    if placed is None or placed.offsets is None or (inc_cost is not None and placed.lt.cost >= inc_cost):
        return None, info
    res = validated(ctx.g, plan_result("exact", p, placed, ctx.budget, "feasible", None, "highs+dsa", {}))
    if not res.has_plan:
        log.error("guided plan failed validation: %s", res.message)
        return None, info
    info["objective"] = res.objective
    return res, info


def guided_to_bound(ctx: Context, windows: dict[int, set[int]], inc: Result | None, deadline: float, stats: dict,
                    bound: float) -> Result | None:
    """The guided MILP seeking a plan at ``bound`` within ``refine_guided_share`` of the time
    left; when it proves that its windows hold none, again below the incumbent (from it), or
    for any plan when there is none yet: a plan above the bound still beats no plan or a
    worse one. ``stats["guided_at_bound"]`` keeps the first run's figures."""
    t = ctx.tuning
    inc_cost = inc.objective if inc is not None else None
    got, info = guided_run(ctx, cost_fixed(ctx.p, inc_cost), windows, inc_cost, deadline,
                           share=t.refine_guided_share, bound=bound, at_bound=True)
    stats["guided"] = stats["guided_at_bound"] = info
    if got is None and info.get("status") == Status.INFEASIBLE and deadline - time.perf_counter() > t.refine_min_s:
        got = guided(ctx, cost_fixed(ctx.p, inc_cost), windows, inc_cost, deadline, stats, start=inc,
                     share=t.refine_guided_share, bound=bound)
    return got
