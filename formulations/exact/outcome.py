"""The Results ``exact`` returns when its answer is the incumbent, a proof, or a stop."""
from __future__ import annotations

from dataclasses import replace

from planner.result import Result, gap_of


def incumbent_result(inc: Result, status: str, inc_cost: float, stats: dict, bound: float | None = None,
                     message: str = "") -> Result:
    plan = replace(inc.plan, method="exact")
    lb = inc_cost if status == "optimal" else bound
    if lb is not None:
        lb = min(lb, inc_cost)
    return Result("exact", status, plan=plan, objective=inc_cost, lower_bound=lb,
                  gap=0.0 if status == "optimal" else gap_of(inc_cost, lb), backend="highs+dsa",
                  message=message, stats={**stats, "returned": "incumbent"})


def meets_bound(inc: Result, inc_cost: float, source: str, stats: dict) -> Result:
    """The incumbent (from ``source``), proven optimal by a bound it meets."""
    from .state import GUIDED

    why = ("the guided plan meets the checkpoint bound" if source == GUIDED
           else "incumbent meets the lower bound")
    return incumbent_result(inc, "optimal", inc_cost, {**stats, "reason": why})


def proven_or_infeasible(inc: Result | None, inc_cost: float | None, stats: dict, why: str) -> Result:
    if inc is not None:
        return incumbent_result(inc, "optimal", inc_cost, stats, message=why)
    return Result("exact", "infeasible", backend="highs", stats=stats,
                  message="no schedule fits the budget (MILP infeasible)")


def stop(inc: Result | None, inc_cost: float | None, bound: float | None, stats: dict, why: str) -> Result:
    if inc is not None:
        return incumbent_result(inc, "feasible", inc_cost, stats, bound, why)
    return Result("exact", "timeout", lower_bound=bound, backend="highs", stats=stats, message=why)
