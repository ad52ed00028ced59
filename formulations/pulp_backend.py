"""Solving a ``Model`` through PuLP with ``params.solver`` (HiGHS, CBC, or Gurobi when
licensed): the path of Checkmate's MILP as published. Same ``MipOutcome`` as
``formulations.backends``."""
from __future__ import annotations

import logging
import time

import numpy as np

from planner.errors import UserError
from planner.params import SolveParams
from planner.result import Status

from .backends import MipOutcome, _confirm, cost_scale, stdout_to_devnull, stdout_to_stderr
from .model import Model

log = logging.getLogger(__name__)


def solve_pulp(m: Model, params: SolveParams, relax: bool = False, time_limit: float | None = None) -> MipOutcome:
    """Build the model through PuLP and solve it with ``params.solver`` (highs | cbc | gurobi);
    HiGHS's infeasible/error verdicts are confirmed without presolve (see ``_confirm``)."""
    tl = float(time_limit if time_limit is not None else params.time_limit)
    first = _solve_pulp_once(m, params, relax, tl)
    if params.solver.lower() != "highs":
        return first
    return _confirm(first, lambda left: _solve_pulp_once(m, params, relax, left, {"presolve": "off"}), tl, "pulp-highs")


def _solve_pulp_once(m: Model, params: SolveParams, relax: bool, tl: float, extra: dict | None = None) -> MipOutcome:
    import pulp

    t0 = time.perf_counter()
    prob = pulp.LpProblem("checkmate", pulp.LpMinimize)
    cat = pulp.LpContinuous if relax else pulp.LpInteger
    xs = [pulp.LpVariable(m.names[i], m.lb[i], m.ub[i], cat if m.integer[i] else pulp.LpContinuous)
          for i in range(m.ncols)]
    f = cost_scale(m)  # as in _solve_highs: the solver sees costs x f
    prob += pulp.LpAffineExpression([(xs[i], c * f) for i, c in enumerate(m.cost) if c]) + m.offset * f
    for r in range(m.nrows):
        e = pulp.LpAffineExpression(list(zip((xs[c] for c in m.row_idx[r]), m.row_val[r])))
        lo, hi = m.row_lo[r], m.row_hi[r]
        if lo == hi:
            prob += e == hi
        else:
            if hi != float("inf"):
                prob += e <= hi
            if lo != -float("inf"):
                prob += e >= lo
    build_s = time.perf_counter() - t0
    name = params.solver.lower()
    if name == "highs":
        solver = pulp.HiGHS(msg=bool(params.verbose), timeLimit=tl, threads=max(1, params.threads),
                            random_seed=params.seed, mip_rel_gap=0.0, **(extra or {}))
    elif name == "cbc":
        solver = pulp.PULP_CBC_CMD(msg=bool(params.verbose), timeLimit=tl, threads=max(1, params.threads),
                                   gapRel=0.0, options=[f"randomSeed {params.seed}", f"randomCbcSeed {params.seed + 1}"])
    elif name == "gurobi":
        solver = pulp.GUROBI(msg=bool(params.verbose), timeLimit=tl, Threads=max(1, params.threads),
                             Seed=params.seed, MIPGap=0.0)
        if not solver.available():
            raise UserError("solver gurobi is not available (gurobipy with a licence is needed)")
    else:
        raise UserError(f"unknown solver {params.solver!r}; choose highs, cbc or gurobi")
    with stdout_to_stderr() if params.verbose else stdout_to_devnull():  # PuLP's HiGHS prints its banner
        prob.solve(solver)
    secs = time.perf_counter() - t0
    st = pulp.LpStatus.get(prob.status, "Undefined")
    vals = [v.varValue for v in xs]
    # variables in no row and no objective term are not passed to the solver (value None): 0
    has_sol = prob.sol_status in (1, 2)
    x = np.asarray([0.0 if v is None else v for v in vals]) if has_sol else None
    obj = float(pulp.value(prob.objective)) / f if has_sol else None
    bound = _pulp_bound(solver, prob, m, relax)
    bound = bound / f if bound is not None else None
    log.debug("pulp/%s: %s (sol_status %s), build %.2fs, total %.2fs", name, st, prob.sol_status, build_s, secs)
    backend = f"pulp-{name}"
    if prob.sol_status == 1 and st == "Optimal":  # proven
        return MipOutcome(Status.OPTIMAL, x, obj, obj, secs, backend)
    if st == "Infeasible":
        return MipOutcome(Status.INFEASIBLE, None, None, None, secs, backend, "model infeasible")
    if has_sol:
        return MipOutcome(Status.FEASIBLE, x, obj, bound, secs, backend, f"pulp status {st}")
    if name == "highs" and _highs_failed(getattr(prob, "solverModel", None)):
        # PuLP maps HiGHS's solve errors to "Not Solved", as it does a time-out
        return MipOutcome(Status.ERROR, None, None, bound, secs, backend, f"pulp status {st} (HiGHS solve error)")
    return MipOutcome(Status.TIMEOUT, None, None, bound, secs, backend, f"pulp status {st}")


def _highs_failed(h) -> bool:
    """True when a HiGHS object ended in an error status (not a limit)."""
    if h is None:
        return False
    import highspy

    S = highspy.HighsModelStatus
    try:
        return h.getModelStatus() in (S.kLoadError, S.kModelError, S.kPresolveError, S.kSolveError,
                                      S.kPostsolveError)
    except Exception:  # noqa: BLE001 - not a HiGHS object
        return False


def _pulp_bound(solver, prob, m: Model, relax: bool) -> float | None:
    """Best bound PuLP exposes: HiGHS keeps its model object; CBC/Gurobi through PuLP do not."""
    h = getattr(solver, "solverModel", None) or getattr(prob, "solverModel", None)
    if h is None or relax:
        return None
    try:
        db = float(h.getInfo().mip_dual_bound)
        return db if np.isfinite(db) else None  # PuLP passes its own constant to HiGHS
    except Exception:  # noqa: BLE001 - not a HiGHS object
        return None
