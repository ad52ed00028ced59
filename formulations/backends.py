"""Solving a ``Model`` with HiGHS through highspy (fast build), in-process or under a watchdog;
``formulations.pulp_backend`` solves one through PuLP (HiGHS, CBC, Gurobi when licensed). Both
return the same ``MipOutcome``, whose status is a ``planner.result.Status``.

HiGHS prints a banner (and its log) on stdout, which would corrupt ``--json`` output: every
solve runs with file descriptor 1 pointed at stderr.
"""
from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from planner.fdredirect import redirect_fd
from planner.params import SolveParams
from planner.result import Status

from .model import Model

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MipOutcome:
    status: Status
    x: np.ndarray | None        # best solution (None when none)
    objective: float | None     # including the model's offset
    bound: float | None         # best proven lower bound, including the offset
    seconds: float
    backend: str
    message: str = ""
    nodes: int = 0


def stdout_to_stderr():
    """Send fd 1 to fd 2 for the duration (C libraries print there directly)."""
    return redirect_fd(1, 2)


def stdout_to_devnull():
    """Drop fd 1 for the duration: solver banners a non-verbose run does not show."""
    return redirect_fd(1, None)


# Models at least this large run in a child process that is killed when it overruns its time
# limit: HiGHS does not check the clock inside a root cut-separation round (docs/exact.md).
# Small models solve in-process (forking costs ~tens of ms, which hundreds of small solves
# would feel).
WATCHDOG_MIN_COLUMNS = 20_000
WATCHDOG_GRACE_S = 2.0  # time past the limit before the child is killed


def cost_scale(m: Model) -> float:
    return power_of_two_scale(m.cost)


def power_of_two_scale(costs) -> float:
    """A power of two that brings the median objective coefficient near 1 (1.0 when it is
    already within [1/16, 1024]). Captured graphs cost seconds per op (1e-7 to 1e-3): at
    that scale HiGHS's absolute tolerances (dual feasibility 1e-7, the MIP gap) swallow whole
    ops, so "optimal" could be off by a small op and the LP ran degenerate. A power of two
    scales every coefficient exactly."""
    c = np.abs(np.asarray(costs, dtype=np.float64))
    c = c[c > 0]
    if not len(c):
        return 1.0
    med = float(np.median(c))
    if 1 / 16 <= med <= 1024:
        return 1.0
    return float(2.0 ** -round(np.log2(med)))


def _new_highs(verbose: bool):
    """A Highs instance; its constructor prints a banner on fd 1, dropped unless verbose."""
    import highspy

    if verbose:
        return highspy.Highs()
    with stdout_to_devnull():
        return highspy.Highs()


def new_highs(threads: int = 1, seed: int | None = None, reset_scheduler: bool = False):
    """A quiet Highs instance on ``threads`` (``seed``: its random seed). ``reset_scheduler``:
    reset HiGHS's one global thread scheduler first (see ``_solve_highs_once``)."""
    import highspy

    h = _new_highs(False)
    h.setOptionValue("output_flag", False)
    if reset_scheduler:
        highspy.Highs.resetGlobalScheduler(True)
    h.setOptionValue("threads", max(1, int(threads)))
    if seed is not None:
        h.setOptionValue("random_seed", int(seed))
    return h


def highs_status(ms, has_solution: bool) -> Status:
    """A HiGHS model status in the project's vocabulary: a limit reached (time, iterations,
    interrupt, objective bound or target) is ``feasible`` with a solution, ``timeout`` without."""
    import highspy

    S = highspy.HighsModelStatus
    if ms == S.kOptimal:
        return Status.OPTIMAL
    if ms == S.kInfeasible:
        return Status.INFEASIBLE
    if ms in (S.kTimeLimit, S.kInterrupt, S.kIterationLimit, S.kSolutionLimit, S.kObjectiveBound,
              S.kObjectiveTarget) or (ms == S.kUnknown and has_solution):
        return Status.FEASIBLE if has_solution else Status.TIMEOUT
    return Status.ERROR


def run_status(h, time_limit: float) -> Status:
    """``run_confirmed`` on a built instance, its verdict as a ``Status``."""
    st = run_confirmed(h, time_limit)
    return highs_status(st, h.getInfo().primal_solution_status == 2)


def solve_highs(m: Model, params: SolveParams, relax: bool = False, time_limit: float | None = None,
                cutoff: float | None = None, lp_method: str = "", start: dict[int, float] | None = None,
                options: dict | None = None, progress=None, target: float | None = None) -> MipOutcome:
    """``_solve_highs`` within a hard wall clock (``progress``: a ``planner.progress.Progress``
    that gets the best objective and bound every few seconds; a forked child logs them
    itself): large models run in a forked child that
    streams each improving solution (and the dual bound when HiGHS reports it) back, and is
    killed ``WATCHDOG_GRACE_S`` after the limit; the caller then gets the best streamed
    solution and bound with status ``feasible``/``timeout``, never a late answer."""
    import signal
    from multiprocessing.connection import Connection

    tl = float(time_limit if time_limit is not None else params.time_limit)
    kw = {"relax": relax, "time_limit": tl, "cutoff": cutoff, "lp_method": lp_method, "start": start,
          "options": options, "progress": progress, "target": target}
    if m.ncols < WATCHDOG_MIN_COLUMNS or not hasattr(os, "fork"):
        return _solve_highs(m, params, **kw)
    t0 = time.perf_counter()
    # a bare fork, not multiprocessing.Process: the study runner's workers are daemonic
    # processes, which multiprocessing forbids to have children
    r_fd, w_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r_fd)
        _child(Connection(w_fd, readable=False), m, params, kw)  # never returns
    os.close(w_fd)
    recv = Connection(r_fd, writable=False)
    best_x, best_obj, bound, final = None, None, None, None
    wall = t0 + tl + WATCHDOG_GRACE_S
    exit_code = None
    ended = False  # the child closed its end: it is exiting by itself
    try:
        while final is None:
            left = wall - time.perf_counter()
            if left <= 0 or not recv.poll(left):
                break
            try:
                kind, a, b = recv.recv()
            except EOFError:
                ended = True
                break  # the child died (crash or out of memory)
            if kind == "sol" and (best_obj is None or a < best_obj):
                best_obj, best_x = a, b
            elif kind == "bound":
                bound = a if bound is None else max(bound, a)
            elif kind == "done":
                final = a
    finally:
        done, status_word = os.waitpid(pid, 0 if (ended or final is not None) else os.WNOHANG)
        if done == 0:
            os.kill(pid, signal.SIGKILL)
            done, status_word = os.waitpid(pid, 0)
            exit_code = -9
        else:
            exit_code = os.waitstatus_to_exitcode(status_word)
        recv.close()
    secs = time.perf_counter() - t0
    if final is not None:
        return MipOutcome(**{**final, "status": Status(final["status"]), "seconds": secs})
    status = Status.FEASIBLE if best_x is not None else Status.TIMEOUT
    killed = exit_code == -9
    why = "time limit (HiGHS overran it and was stopped)" if killed else \
        f"HiGHS process ended without an answer (exit code {exit_code})"
    if not killed and best_x is None:
        status = Status.ERROR
    log.info("highs watchdog: %s after %.1fs", why, secs)
    return MipOutcome(status, best_x, best_obj, bound, secs, "highs", why)


def _child(conn, m: Model, params: SolveParams, kw: dict) -> None:
    """Forked child: solve, streaming improving solutions and bounds, then the outcome."""
    try:
        def on_solution(x: np.ndarray, obj: float) -> None:
            conn.send(("sol", obj, x))

        def on_bound(b: float) -> None:
            conn.send(("bound", b, None))

        try:
            out = _solve_highs(m, params, on_solution=on_solution, on_bound=on_bound, **kw)
        except Exception as exc:  # noqa: BLE001 - reported to the parent as an error outcome
            out = MipOutcome(Status.ERROR, None, None, None, 0.0, "highs", f"{type(exc).__name__}: {exc}")
        conn.send(("done", {f: getattr(out, f) for f in MipOutcome.__dataclass_fields__}, None))
    finally:
        conn.close()
        os._exit(0)  # no atexit handlers or inherited finalisers in the forked copy


# HiGHS's presolve is not always right about infeasibility: on small Checkmate models it
# called a feasible model infeasible and an infeasible one a solve error, both right with
# presolve off (docs/exact.md). A wrong "infeasible" under a cutoff would make
# exact call its incumbent optimal, so every infeasible or failed verdict reached with
# presolve on is re-solved without it, within what is left of the time limit; an
# unconfirmed verdict is reported as a timeout, never as infeasible.
_UNSURE = (Status.INFEASIBLE, Status.ERROR)


def _confirm(first: MipOutcome, again, time_limit: float, label: str) -> MipOutcome:
    """``first`` when it is not an (unproven without presolve) infeasible or error verdict;
    else ``again(seconds left)``, the same solve with presolve off."""
    if first.status not in _UNSURE:
        return first
    left = time_limit - first.seconds
    if left <= 0.01:
        return MipOutcome(Status.TIMEOUT, None, None, first.bound, first.seconds, first.backend,
                          f"{label} presolve said {first.status} ({first.message}); no time left to confirm it")
    second = again(left)
    log.debug("%s: presolve said %s (%s); without presolve: %s", label, first.status, first.message, second.status)
    secs = first.seconds + second.seconds
    if second.status in (Status.TIMEOUT, Status.ERROR):
        return MipOutcome(Status.TIMEOUT if second.x is None else Status.FEASIBLE, second.x, second.objective, second.bound,
                          secs, second.backend, f"{label} presolve said {first.status} ({first.message}); "
                          f"unconfirmed without presolve ({second.message})", second.nodes)
    return MipOutcome(second.status, second.x, second.objective, second.bound, secs, second.backend,
                      second.message, second.nodes)


def option_value(h, name: str):
    """A HiGHS option's value (highspy 1.16 returns (status, value), older ones the value)."""
    v = h.getOptionValue(name)
    return v[1] if isinstance(v, tuple) else v


def run_confirmed(h, time_limit: float):
    """``h.run()`` on a built Highs instance whose ``time_limit`` option is ``time_limit``; an
    infeasible or failed verdict reached with presolve on is re-run without presolve in the
    time left (see ``_UNSURE``). Returns the final model status."""
    import highspy

    S = highspy.HighsModelStatus
    t0 = time.perf_counter()
    h.run()
    st = h.getModelStatus()
    unsure = (S.kInfeasible, S.kUnboundedOrInfeasible, S.kPresolveError, S.kSolveError, S.kPostsolveError)
    presolve = option_value(h, "presolve")
    if st not in unsure or presolve == "off":
        return st
    h.setOptionValue("presolve", "off")
    h.setOptionValue("time_limit", float(max(0.01, time_limit - (time.perf_counter() - t0))))
    h.clearSolver()
    h.run()
    again = h.getModelStatus()
    h.setOptionValue("presolve", presolve)  # the instance may be solved again (LP, then MIP)
    log.debug("highs: presolve said %s; without presolve: %s", h.modelStatusToString(st), h.modelStatusToString(again))
    return again


def _solve_highs(m: Model, params: SolveParams, relax: bool = False, time_limit: float | None = None,
                 cutoff: float | None = None, lp_method: str = "", start: dict[int, float] | None = None,
                 options: dict | None = None, on_solution=None, on_bound=None, progress=None,
                 target: float | None = None) -> MipOutcome:
    """``_solve_highs_once``, its infeasible/error verdicts confirmed without presolve."""
    tl = float(time_limit if time_limit is not None else params.time_limit)
    kw = {"relax": relax, "cutoff": cutoff, "lp_method": lp_method, "start": start,
          "on_solution": on_solution, "on_bound": on_bound, "progress": progress, "target": target}
    first = _solve_highs_once(m, params, time_limit=tl, options=options, **kw)
    if (options or {}).get("presolve") == "off":
        return first
    return _confirm(first, lambda left: _solve_highs_once(
        m, params, time_limit=left, options={**(options or {}), "presolve": "off"}, **kw), tl, "highs")


def _solve_highs_once(m: Model, params: SolveParams, relax: bool = False, time_limit: float | None = None,
                      cutoff: float | None = None, lp_method: str = "", start: dict[int, float] | None = None,
                      options: dict | None = None, on_solution=None, on_bound=None, progress=None,
                      target: float | None = None) -> MipOutcome:
    """Solve with highspy. ``cutoff``: objective value (offset included) that no wanted
    solution reaches or exceeds; the MILP then prunes on it (exact cost-fixing incumbents).
    ``target``: the search stops (status ``feasible``) at the first solution at or below it:
    a bound known from elsewhere, which that solution meets, so the rest of the search could
    only prove what is known.
    ``start``: a (partial) MIP start, column -> value; HiGHS completes a partial one by a
    sub-MIP and ignores it when it is infeasible. ``options``: extra HiGHS options
    (``bench/bench_exact.py --highs`` measures them)."""
    import highspy

    t0 = time.perf_counter()
    f = cost_scale(m)  # HiGHS sees costs x f; every objective and bound reported back / f
    with stdout_to_stderr():
        h = _new_highs(params.verbose)
        h.setOptionValue("output_flag", bool(params.verbose))
        h.setOptionValue("log_to_console", bool(params.verbose))
        # HiGHS keeps one global scheduler: a run with another thread count before (the
        # bounds' LPs, PuLP's HiGHS), or one in the parent of a forked child (the fork copies
        # the scheduler but not its threads), makes this run fail with "Not Set" unless reset
        highspy.Highs.resetGlobalScheduler(True)
        h.setOptionValue("threads", max(1, int(params.threads)))
        h.setOptionValue("random_seed", int(params.seed))
        h.setOptionValue("time_limit", float(max(0.01, time_limit if time_limit is not None else params.time_limit)))
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 1e-9)
        if lp_method:
            h.setOptionValue("solver", lp_method)
        if cutoff is not None and not relax:
            h.setOptionValue("objective_bound", float((cutoff - m.offset) * f))
        n = m.ncols
        lb = np.asarray(m.lb, dtype=np.float64)
        ub = np.asarray(m.ub, dtype=np.float64)
        h.addVars(n, lb, ub)
        h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(m.cost, dtype=np.float64) * f)
        starts, idx, val = m.csr()
        if m.nrows:
            st = h.addRows(m.nrows, np.asarray(m.row_lo, dtype=np.float64), np.asarray(m.row_hi, dtype=np.float64),
                      len(idx), starts[:-1].astype(np.int32), idx, val)
            if st != highspy.HighsStatus.kOk:
                raise RuntimeError(f"HiGHS rejected the model rows ({st})")
        if not relax:
            ints = np.flatnonzero(np.asarray(m.integer))
            if len(ints):
                h.changeColsIntegrality(len(ints), ints.astype(np.int32),
                                        np.full(len(ints), highspy.HighsVarType.kInteger))
        for key, val in (options or {}).items():
            h.setOptionValue(key, val)
        if start and not relax:
            cols = np.fromiter(start.keys(), dtype=np.int32, count=len(start))
            vals = np.fromiter(start.values(), dtype=np.float64, count=len(start))
            st = h.setSolution(len(cols), cols, vals)
            log.debug("highs: MIP start of %d columns (%s)", len(cols), st)
        reached = [False]  # a solution at or below ``target`` was found
        if (on_solution is not None or target is not None) and not relax:
            def solution_cb(e) -> None:
                obj = float(e.data_out.objective_function_value) / f + m.offset
                if target is not None and obj <= target:
                    reached[0] = True
                if on_solution is not None:
                    on_solution(np.asarray(e.data_out.mip_solution, dtype=np.float64).copy(), obj)
            h.cbMipImprovingSolution.subscribe(solution_cb)
        if (on_bound is not None or target is not None or (progress is not None and progress.enabled)) and not relax:
            last = [0.0]

            def interrupt_cb(e) -> None:
                if reached[0]:
                    e.data_in.user_interrupt = True
                    return
                now = time.perf_counter()
                if now - last[0] <= 1.0:
                    return
                last[0] = now
                db = float(e.data_out.mip_dual_bound)
                bound = db / f + m.offset if np.isfinite(db) else None
                if on_bound is not None and bound is not None:
                    on_bound(bound)
                if progress is not None:
                    ov = float(e.data_out.objective_function_value)
                    progress.figures("MILP", ov / f + m.offset if np.isfinite(ov) else None, bound)
            h.cbMipInterrupt.subscribe(interrupt_cb)
        build_s = time.perf_counter() - t0
        # HiGHS's clock starts at run(): loading a large model counts against the caller's limit
        h.setOptionValue("time_limit", float(max(0.01, (time_limit if time_limit is not None
                                                         else params.time_limit) - build_s)))
        h.run()
    ms = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    has_sol = info.primal_solution_status == 2
    x = np.asarray(h.getSolution().col_value) if has_sol else None
    obj = (float(info.objective_function_value) / f + m.offset) if has_sol else None
    nodes = int(getattr(info, "mip_node_count", 0) or 0)
    if relax:
        bound = obj if ms == S.kOptimal else None
    else:
        db = float(info.mip_dual_bound)
        bound = db / f + m.offset if np.isfinite(db) else None
    secs = time.perf_counter() - t0
    log.debug("highs: status %s, build %.2fs, total %.2fs", h.modelStatusToString(ms), build_s, secs)
    if ms == S.kOptimal and not relax and cutoff is not None and obj is not None \
            and obj > cutoff + 1e-9 * max(1.0, abs(cutoff)):
        # HiGHS reports "Optimal" with a solution above objective_bound when its search proved
        # that nothing lies below (a 5-op graph, cutoff 28: "optimal" 33, where the optimum is
        # 29; see also checkpoints._runs_of): that is "nothing below the cutoff"
        return MipOutcome(Status.INFEASIBLE, None, None, None, secs, "highs", "nothing below the cutoff", nodes)
    if ms == S.kObjectiveBound and not has_sol and not relax:
        return MipOutcome(Status.INFEASIBLE, None, None, None, secs, "highs", "nothing below the cutoff", nodes)
    st = highs_status(ms, has_sol)
    if st == Status.OPTIMAL:
        return MipOutcome(st, x, obj, obj, secs, "highs", nodes=nodes)
    if st == Status.INFEASIBLE:
        return MipOutcome(st, None, None, None, secs, "highs", "model infeasible", nodes)
    return MipOutcome(st, x, obj, bound, secs, "highs", h.modelStatusToString(ms), nodes)
