"""A lower bound over several moments at once: Checkmate's model aggregated to checkpoints.

The closure LP (``formulations.bounds``) looks at one moment, the first run of one op, and
counts a recomputation for every moment at once. This relaxation keeps several moments (the
first runs of checkpoint ops) and the intervals between them (the model:
``formulations.checkpoint_model``), so moments that compete for the same recomputations are
seen. The order inside an interval is ignored, so it is a relaxation; with several
checkpoints it is at least the largest of their closures. Solved as an LP or, within a time
limit, a MIP whose dual bound counts; the LP is weaker than one would think (one fractional
recomputation serves two intervals), the MIP's optimum never falls as checkpoints are added.
Checked against exhaustive search and Checkmate's MILP in ``tests/test_checkpoints.py``;
figures in docs/exact.md.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from planner.result import Status

from .backends import power_of_two_scale, run_status
from .bounds import tight_ops
from .checkpoint_model import Built, build_levels
from .checkpoint_start import plan_start, start_cost
from .problem import RematProblem

log = logging.getLogger(__name__)


def choose_checkpoints(p: RematProblem, capacity: int, m: int) -> list[int]:
    """Up to ``m`` checkpoint ops: the tightest first, then spread so that each new one is
    the tightest op far from those chosen (neighbouring moments see the same values)."""
    tight = tight_ops(p, capacity)
    if len(tight) <= m:
        return sorted(t for _, t in tight)
    # greedy: repeatedly take the op of largest excess * distance to the chosen set
    chosen: list[int] = []
    ops = np.array([t for _, t in tight])
    exv = np.array([e for e, _ in tight], dtype=np.float64)
    dist = np.full(len(ops), np.inf)
    for _ in range(m):
        score = exv * np.minimum(dist, p.n)
        j = int(np.argmax(score))
        if score[j] <= 0:
            break
        chosen.append(int(ops[j]))
        dist = np.minimum(dist, np.abs(ops - ops[j]))
    return sorted(chosen)


def checkpoint_bound(p: RematProblem, capacity: int, checkpoints: list[int], *, integer: bool = False,
                     time_limit: float = 30.0, threads: int = 1, seed: int = 0, cutoff: float | None = None,
                     coarse: list[list[int]] = ()) -> tuple[float, str]:
    """(least recomputation cost every plan pays, its Status); inf when the rows are
    infeasible (no plan fits). ``integer``: solve the 0/1 model and return its dual bound;
    ``cutoff`` (with ``integer``): only solutions below it are sought; the bound returned is
    then at most the cutoff (the cutoff itself proves that every plan costs at least that).
    ``coarse``: coarser checkpoint sets whose rows join the model (see ``build_levels``)."""
    built = build_levels(p, capacity, checkpoints, coarse, threads, seed, time.perf_counter() + time_limit)
    if isinstance(built, tuple):
        return built
    return _solve(built.h, p, integer, time_limit, cutoff)


def lp_then_mip(p: RematProblem, capacity: int, checkpoints: list[int], *, lp_time: float, deadline: float,
                threads: int = 1, seed: int = 0, cutoff: float | None = None,
                coarse: list[list[int]] = (), start: list[int] | None = None) -> dict:
    """The LP, then (while ``deadline`` leaves time and the LP is below ``cutoff``) the MIP, on
    one model built once (building is the slow part on large graphs): ``{"lp": (value,
    status), "mip": (value, status), "windows": ...}``, "mip" absent when not run, "windows"
    (``recompute_windows`` of the MIP's best solution) only when the MIP found one.
    ``coarse``: coarser checkpoint sets whose rows join the model (see ``build_levels``).
    ``start``: a plan's op sequence, read into the MIP's columns as its start
    (``checkpoint_start``); used only when its objective lies below ``cutoff``."""
    built = build_levels(p, capacity, checkpoints, coarse, threads, seed, deadline)
    if isinstance(built, tuple):
        return {"lp": built}
    out = {"lp": _solve(built.h, p, False, lp_time, None)}
    lp = out["lp"][0]
    left = deadline - time.perf_counter()
    if lp != float("inf") and (cutoff is None or lp < cutoff) and left > 0.5:
        mip_start = _start_of(built, p, start, cutoff)
        if mip_start is not None:
            out["start"] = start_cost(p, built, mip_start)
        out["mip"] = _solve(built.h, p, True, left, cutoff, mip_start)
        runs = _runs_of(built, p, cutoff)
        if runs is not None:
            out["windows"] = recompute_windows(built.checkpoints, p.n, runs)
            out["runs"] = runs
            out["checkpoints"] = built.checkpoints
    return out


def recompute_windows(checkpoints: list[int], n: int, runs: list[list[int]]) -> dict[int, set[int]]:
    """Where the relaxation recomputes, in the stages of Checkmate's model (``formulations.model``:
    stage t ends with op t's first run; stage n follows the last): op k -> the stages of every
    interval i whose ``runs[i]`` holds k. Interval i (after M_i, before M_{i+1}) is the stages
    t with t_i < t <= t_{i+1}; the last one runs to n."""
    out: dict[int, set[int]] = {}
    for i, ks in enumerate(runs):
        lo = checkpoints[i] + 1
        hi = checkpoints[i + 1] if i + 1 < len(checkpoints) else n
        for k in ks:
            out.setdefault(k, set()).update(range(max(lo, k + 1), hi + 1))
    return {k: w for k, w in out.items() if w}


def widen_windows(p: RematProblem, windows: dict[int, set[int]]) -> dict[int, set[int]]:
    """``windows`` with each op's stages extended from its first window up to its first reader
    after its last window (within ``p.limit``). Why: the relaxation sees memory only at the
    checkpoints, so of the intervals between one run and the next reader it picks any, while a
    plan recomputes just before the reader."""
    readers: dict[int, list[int]] = {}  # op -> the ops that read one of its values
    for j in range(p.n):
        for v in p.reads[j]:
            readers.setdefault(p.values[v].producer, []).append(j)
    lim = p.limit or (p.n,) * p.n
    out = {}
    for k, w in windows.items():
        w = set(w)
        after = [j for j in readers.get(k, ()) if j > max(w)]
        if after:
            w.update(range(min(w), min(min(after), lim[k]) + 1))
        out[k] = w
    return out


def _runs_of(built: Built, p: RematProblem, cutoff: float | None = None) -> list[list[int]] | None:
    """The ops the MIP's best solution runs again in each interval; None when it has none
    below ``cutoff``: HiGHS may report an optimum with a solution above its objective bound
    when it proves that nothing lies below (see ``backends``)"""
    h = built.h
    info = h.getInfo()
    if info.primal_solution_status != 2:  # 2: feasible
        return None
    if cutoff is not None and info.objective_function_value / power_of_two_scale(p.cost) >= cutoff:
        return None
    x = np.asarray(h.getSolution().col_value)
    return [[k for k, c in Ri.items() if x[c] > 0.5] for Ri in built.r]


def _start_of(built: Built, p: RematProblem, seq: list[int] | None, cutoff: float | None) -> dict[int, float] | None:
    """``seq`` read into ``built``'s columns when its objective lies below ``cutoff`` (HiGHS
    drops a start at or above its objective bound), else None."""
    if seq is None:
        return None
    got = plan_start(p, built, seq)
    if got is None or (cutoff is not None and start_cost(p, built, got) >= cutoff * (1 - 1e-9)):
        return None
    return got


def _solve(h, p: RematProblem, integer: bool, time_limit: float, cutoff: float | None,
           start: dict[int, float] | None = None) -> tuple[float, Status]:
    """Solve the built relaxation as an LP or (``integer``) as a MIP, from the (partial) MIP
    ``start`` (column -> value) when given; see ``checkpoint_bound``."""
    import highspy

    f = power_of_two_scale(p.cost)
    h.setOptionValue("time_limit", float(max(0.01, time_limit)))
    if integer:
        nc = h.getNumCol()
        h.changeColsIntegrality(nc, np.arange(nc, dtype=np.int32), np.full(nc, highspy.HighsVarType.kInteger))
        h.setOptionValue("mip_rel_gap", 0.0)
        if cutoff is not None:
            h.setOptionValue("objective_bound", float(cutoff) * f)
        if start:
            cols = np.fromiter(start.keys(), dtype=np.int32, count=len(start))
            st = h.setSolution(len(cols), cols, np.fromiter(start.values(), dtype=np.float64, count=len(start)))
            log.info("checkpoint MIP: start of %d columns (%s)", len(cols), st)
    t0 = time.perf_counter()
    st = run_status(h, float(max(0.01, time_limit)))
    log.info("checkpoint %s: %s in %.1fs", "MIP" if integer else "LP", st, time.perf_counter() - t0)
    if st == Status.INFEASIBLE:
        if integer and cutoff is not None:
            return float(cutoff), st  # nothing below the cutoff (or nothing at all)
        return float("inf"), st
    info = h.getInfo()
    if integer:
        b = float(info.mip_dual_bound)
        b = max(0.0, b / f) if np.isfinite(b) else 0.0
        if cutoff is not None:
            # nodes at or above the cutoff were pruned, not solved: what is proven beyond
            # the cutoff is only the cutoff itself
            b = min(b, float(cutoff))
        return b, st
    if st != Status.OPTIMAL:
        return 0.0, st
    return float(info.objective_function_value) / f, st
