"""Method ``checkmate``: Checkmate's MILP as published (Jain et al., MLSys 2020).

The full model (every R[t,k<t], every S after the producer, no cost fixing, no incumbent),
built through PuLP and solved by ``params.solver`` (HiGHS by default, CBC, or Gurobi when
licensed). This is the baseline ``exact`` must beat. Its schedule is then given addresses by
the DSA solver (the classic two-step pipeline); the remat objective is a lower bound on the
joint optimum and ``stats['fragmentation_price']`` reports the difference when the placed
plan is the remat optimum's schedule (0) or, when it does not place, says so.
"""
from __future__ import annotations

import time

from planner.graph import Graph
from planner.params import SolveParams
from planner.progress import Progress
from planner.result import Result, Status

from .common import milp_failure, place_stages, plan_result, published_model, setup
from .model import decode
from .pulp_backend import solve_pulp


def solve_checkmate(g: Graph, budget: int, params: SolveParams) -> Result:
    s = setup("checkmate", g, budget, params)
    if isinstance(s, Result):
        return s
    p, cap, t0, deadline = s.p, s.cap, s.t0, s.deadline
    m = published_model("checkmate", p, cap)
    if isinstance(m, Result):
        return m
    reserve = min(5.0, 0.1 * params.time_limit)  # time kept for the address assignment
    prog = Progress("checkmate", t0)
    prog.note(f"published MILP: {m.ncols} columns, {m.nrows} rows, through PuLP/{params.solver} "
              f"(no progress until it returns)")
    out = solve_pulp(m, params, time_limit=max(0.1, params.time_limit - reserve - (time.perf_counter() - t0)))
    stats = {"model": dict(m.stats), "milp_seconds": out.seconds, "milp_status": out.status}
    prog.figures(f"MILP {out.status}", out.objective, out.bound, force=True)
    failed = milp_failure("checkmate", out, stats)
    if failed is not None:
        return failed
    stages = decode(p, m, out.x)
    placed = place_stages(p, stages, cap, deadline, params)
    if placed is None:
        return Result("checkmate", "error", message="MILP schedule not runnable (model bug)", stats=stats)
    remat_obj = out.objective
    stats["remat_objective"] = remat_obj
    if placed.offsets is None:
        return Result("checkmate", "feasible" if out.status == Status.FEASIBLE else "optimal", objective=None,
                      lower_bound=out.bound if out.status != Status.OPTIMAL else remat_obj, backend=out.backend + "+dsa",
                      stats={**stats, "placement": f"{placed.solver}: {placed.status}"},
                      message=(f"remat schedule of cost {remat_obj:.6g} found ({out.status}) but it does not "
                               f"place within the budget (DSA: {placed.status}); the price of fragmentation "
                               f"is not measurable by this two-step pipeline"))
    # the placed plan is the remat optimum's schedule: optimal for the joint problem too
    bound = remat_obj if out.status == Status.OPTIMAL else out.bound
    stats["fragmentation_price"] = round(placed.lt.cost - remat_obj, 9)
    return plan_result("checkmate", p, placed, budget, out.status, bound, out.backend + "+dsa", stats)
