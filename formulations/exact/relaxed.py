"""The plan read off a checkpoint relaxation's solution: it costs exactly the relaxation's
value, so when it fits and places it is proven optimal with no stage MILP."""
from __future__ import annotations

import logging
import time

from planner.result import Result

from .state import Context

log = logging.getLogger(__name__)


def relaxed_plan(ctx: Context, cps: list[int], runs: list[list[int]], inc: Result | None, deadline: float,
                 stats: dict):
    """The plan of ``formulations.relaxed_plan`` for the solution ``runs`` over ``cps``,
    fitted to the capacity when it overflows, placed within ``relaxed_place_share`` of the
    time left and validated: (the plan when it is cheaper than ``inc``, else None; its
    lifetimes, for ``overflow_checkpoints``)."""
    from ..common import Placed, plan_result
    from ..relaxed_plan import fit_sequence, relaxed_sequence
    from ..schedule import lifetimes, place
    from ..validator_bridge import validated

    p, cap, t = ctx.p, ctx.cap, ctx.tuning
    seq = relaxed_sequence(p, cps, runs)
    lt = lifetimes(p, seq)
    info: dict = {"checkpoints": len(cps)}
    stats.setdefault("relaxed_plans", []).append(info)
    if lt is None:  # relaxed_sequence runs what it reads: a bug, but no reason to stop
        log.error("the relaxation's plan reads a value it never computed")
        info["status"] = "not runnable"
        return None, None
    info.update(cost=lt.cost, lazy_peak_units=lt.peak_units)
    if lt.peak_units > cap and (inc is None or lt.cost < inc.objective):
        t0 = time.perf_counter()
        seq = fit_sequence(p, seq, cps, cap, t0 + min(t.fit_max_s, t.fit_share * (deadline - t0)))
        lt = lifetimes(p, seq)
        info["fit_seconds"] = round(time.perf_counter() - t0, 3)
    info["peak_units"] = lt.peak_units
    if lt.peak_units > cap:
        info["status"] = "over capacity"
        return None, lt
    if inc is not None and lt.cost >= inc.objective:
        info["status"] = "not cheaper"
        return None, lt
    t0 = time.perf_counter()
    pl = place(lt, cap, max(t.place_try_s, t.relaxed_place_share * (deadline - t0)), ctx.params.seed,
               ctx.params.threads)
    info.update(status=pl.status, place_seconds=round(time.perf_counter() - t0, 3))
    log.info("exact: the relaxation's plan (%d checkpoints, cost %.6g) fits; DSA %s in %.1fs", len(cps), lt.cost,
             pl.status, time.perf_counter() - t0)
    if pl.offsets is None:
        return None, lt
    res = validated(ctx.g, plan_result("exact", p, Placed(lt, pl.offsets, pl.status, pl.solver), ctx.budget,
                                       "feasible", None, "relaxed plan+dsa", {}))
    if not res.has_plan:
        log.error("the relaxation's plan failed validation: %s", res.message)
        info["status"] = "invalid"
        return None, lt
    return res, lt
