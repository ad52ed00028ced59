"""Shared steps of the formulation methods: budget checks, placing a schedule, results."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

from planner.analysis import min_feasible_budget
from planner.graph import Graph
from planner.params import SolveParams
from planner.result import Result, gap_of

from .problem import RematProblem
from .schedule import Lifetimes, build_plan, lifetimes, place, stage_sequence

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Setup:
    p: RematProblem      # the node-level problem
    cap: int             # budget left by residents, in the problem's units
    t0: float            # perf_counter at the start of the method
    deadline: float      # t0 + params.time_limit


def setup(method: str, g: Graph, budget: int, params: SolveParams) -> Setup | Result:
    """The prologue every formulation shares: extract the problem, its capacity and the
    deadline; or the answer without a model: ``infeasible`` when a budget bound already proves
    that no plan fits, the plain schedule as ``optimal`` when there is no op to schedule."""
    from .problem import extract

    t0 = time.perf_counter()
    p = extract(g, params.alignment)
    why = infeasible_reason(g, p, budget, params)
    if why:
        return Result(method, "infeasible", message=why, backend="bound")
    if p.n == 0:
        from planner.baseline import solve_none

        res = solve_none(g, budget, params)
        if res.has_plan:
            return res.with_(method=method, status="optimal", plan=replace(res.plan, method=method), lower_bound=0.0,
                             gap=0.0, backend="trivial", message="no op to schedule")
    return Setup(p, p.capacity(budget), t0, t0 + params.time_limit)


def infeasible_reason(g: Graph, p: RematProblem, budget: int, params: SolveParams) -> str | None:
    """A proof that no plan fits ``budget``, in one line (None when none is known)."""
    mb = min_feasible_budget(g, params.alignment)
    if budget < mb.bytes:
        return f"budget {budget} is below the minimum feasible budget {mb.bytes} bytes"
    cap = p.capacity(budget)
    for k in range(p.n):
        if p.out_units[k] > cap:
            return f"op {k} ({g.ops[k].name}) alone needs more than the budget left by residents"
    return None


@dataclass
class Placed:
    lt: Lifetimes
    offsets: dict[int, int] | None
    status: str      # DSA status: optimal|feasible (placed), infeasible (proven), timeout
    solver: str


def place_stages(p: RematProblem, stages: list[list[int]], capacity: int, deadline: float,
                 params: SolveParams) -> Placed | None:
    """Minimal lifetimes of a stage schedule and their addresses (None: schedule not runnable)."""
    lt = lifetimes(p, stage_sequence(stages))
    if lt is None:
        return None
    left = max(0.5, deadline - time.perf_counter())
    pl = place(lt, capacity, left, params.seed, params.threads)
    status = pl.status if pl.offsets is None else "placed"
    return Placed(lt, pl.offsets, status, pl.solver)


def plan_result(method: str, p: RematProblem, placed: Placed, budget: int, status: str,
                bound: float | None, backend: str, stats: dict, message: str = "") -> Result:
    plan = build_plan(p, placed.lt, placed.offsets or {}, budget, method,
                      {"placement": placed.solver})
    obj = placed.lt.cost
    if bound is not None:
        bound = min(bound, obj)
    return Result(method, status, plan=plan, objective=obj, lower_bound=bound,
                  gap=0.0 if status == "optimal" else gap_of(obj, bound), backend=backend,
                  message=message, stats={**stats, "placement": placed.solver})


def published_model(method: str, p: RematProblem, cap: int):
    """Checkmate's published MILP at ``cap`` units, or the Result that ends the method: an
    ``error`` when the model would be too large, ``infeasible`` when no schedule exists by
    construction."""
    from .model import ModelTooLarge, build

    try:
        m = build(p, cap, published=True)
    except ModelTooLarge as exc:
        return Result(method, "error", backend="model", message=f"{method}: {exc}; use exact, whose bounds need no MILP")
    if m is None:
        return Result(method, "infeasible", message="model infeasible by construction", backend="model")
    return m


def milp_failure(method: str, out, stats: dict) -> Result | None:
    """The Result of a MILP run that gave no schedule (infeasible, or a time limit without a
    solution); None when it has one to decode."""
    from planner.result import Status

    if out.status == Status.INFEASIBLE:
        return Result(method, "infeasible", backend=out.backend, stats=stats,
                      message=f"{method} MILP infeasible at this budget")
    if out.x is None:
        return Result(method, "timeout", lower_bound=out.bound, backend=out.backend, stats=stats,
                      message=f"no schedule found ({out.message})")
    return None
