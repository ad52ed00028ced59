"""``solve_dsa``: place buffers with the engines in turn, never passing a greedy placement
off as exact.

Engines (a solution's ``method`` says which produced it): ``greedy`` (``greedy.py``, the fast
path), ``search`` (the exact depth-first search over canonical placements, ``searcher.py``)
and ``cp-sat`` (``add_no_overlap_2d``, ``cpsat.py``). Engine ``auto``, the default, alternates
the two exact engines in growing time slices: both have heavy-tailed run times and succeed on
different instances. CP-SAT itself alternates a bottom-left fixed search with its default
search, a new seed per pair (``CpsatRuns``). The status says what was proved; every placement
leaves through the validator. Measurements behind these choices: ``docs/alloc.md``.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from .greedy import greedy_best_fit
from .problem import Buffer, DsaSolution, as_arrays, check_buffers, live_lower_bound, offsets_by_id
from .validator import check_solution, peak_of

log = logging.getLogger(__name__)

ENGINES = ("auto", "search", "cp-sat")
SLICE_FIRST = 1.0   # engine auto: first time slice (s) of each engine; slices then grow ...
SLICE_GROWTH = 4.0  # ... by this factor after each search + CP-SAT pair
CPSAT_FIRST = 1.0   # CpsatRuns: first run (s) of each CP-SAT search; runs then grow ...
CPSAT_GROWTH = 1.5  # ... by this factor after each bottom-left + default pair (new seed per pair)
STARVED_FLOOR = 0.05  # engine auto: the least CPU share a stretched search slice assumes


def solve_dsa(buffers: list[Buffer], capacity: int | None = None, time_limit: float = 60.0,
              seed: int = 0, threads: int = 1, greedy_only: bool = False,
              engine: str = "auto", cpsat_lead: float = 0.0) -> DsaSolution:
    """Place ``buffers``. With ``capacity``: find a placement within it (greedy first, then the
    exact engine). Without: minimise the peak (proving optimality where the engine can).

    ``engine`` picks the exact engine: "search" (single-threaded, deterministic for a seed),
    "cp-sat" (``threads`` workers; deterministic for a seed and thread count when it finishes)
    or "auto" (default: both in turn, in growing time slices; see the module docstring).
    A fixed seed (and thread count) gives the same answer whenever the engine that answers
    finishes inside its slice; only a time cut-off can change which engine answers first.
    ``cpsat_lead`` (engine "auto", with a capacity): the share of the time CP-SAT gets before
    the portfolio starts (the placements of remat schedules, ``schedule.place``: see ``PLACE_CPSAT_LEAD``).
    The returned solution always passed ``check_solution``.
    """
    t0 = time.perf_counter()
    check_buffers(buffers)
    if engine not in ENGINES:
        raise ValueError(f"unknown DSA engine {engine!r} ({' | '.join(ENGINES)})")
    deadline = t0 + max(0.0, time_limit)
    lb = live_lower_bound(buffers)
    by_bound = "search" if engine == "auto" else engine  # who answers from the bound alone
    if not buffers:
        return DsaSolution("optimal", {}, 0, 0, by_bound, time.perf_counter() - t0)
    if capacity is not None and (lb > capacity or max(b.size for b in buffers) > capacity):
        return DsaSolution("infeasible", None, None, lb, by_bound, time.perf_counter() - t0)

    greedy = greedy_best_fit(buffers, capacity)
    if greedy.offsets is not None and (greedy_only or greedy.status == "optimal" or capacity is not None):
        return _checked(buffers, greedy, capacity, t0)
    if greedy_only:
        return _checked(buffers, greedy, capacity, t0)

    run = {"search": _run_search, "cp-sat": _run_cpsat, "auto": _run_auto}[engine]
    if capacity is not None:
        found, runs = "timeout", CpsatRuns(buffers, capacity, seed, threads)
        if engine == "auto" and cpsat_lead > 0:
            found, offsets, who = _run_cpsat(buffers, capacity, t0 + cpsat_lead * (deadline - t0), seed, threads,
                                             runs)
        if found == "timeout":
            # the portfolio goes on with the CP-SAT runs where the lead stopped
            kw = {} if engine == "search" else {"runs": runs}
            found, offsets, who = run(buffers, capacity, deadline, seed, threads, **kw)
        if found == "found":
            peak = peak_of(buffers, offsets)
            status = "optimal" if peak <= lb else "feasible"
            return _checked(buffers, DsaSolution(status, offsets, peak, lb, who, 0.0), capacity, t0)
        status = "infeasible" if found == "infeasible" else "timeout"
        return DsaSolution(status, None, None, max(lb, capacity + 1) if status == "infeasible" else lb,
                           who, time.perf_counter() - t0)
    return _minimise(buffers, greedy, lb, deadline, seed, threads, run, t0)


def _minimise(buffers, greedy: DsaSolution, lb: int, deadline: float, seed: int, threads: int,
              run, t0: float) -> DsaSolution:
    """Bisection on the capacity between the bound and the best peak found. The bound is probed
    first (most tight instances meet it); each proof of infeasibility at c raises the bound to c+1."""
    best, best_peak, method = greedy.offsets, greedy.peak, "greedy"
    lo, hi = lb, greedy.peak  # optimum in [lo, hi]; hi is achieved by ``best``
    first = True
    while lo < hi:
        now = time.perf_counter()
        if now >= deadline:
            break
        cap = lo if first else (lo + hi - 1) // 2
        # The first probe (at the bound) gets a third of the time, so that bisection can still
        # improve the incumbent when the bound is hard to reach or refute.
        slice_end = now + (deadline - now) / 3 if first and hi - lo > 1 else deadline
        first = False
        status, offsets, who = run(buffers, cap, slice_end, seed, threads)
        log.info("dsa probe capacity %d: %s by %s (bound %d, best %d)", cap, status, who, lo, hi)
        if status == "found":
            best, best_peak, method = offsets, peak_of(buffers, offsets), who
            hi = best_peak
        elif status == "infeasible":
            lo = cap + 1
        elif cap == lo and hi - lo > 1:
            continue  # the bound probe timed out: bisect above it with the remaining time
        else:
            break
    status = "optimal" if best_peak <= lo else "feasible"
    sol = DsaSolution(status, best, best_peak, min(lo, best_peak), method, 0.0)
    return _checked(buffers, sol, None, t0)


def _checked(buffers: list[Buffer], sol: DsaSolution, capacity: int | None, t0: float) -> DsaSolution:
    """Every placement leaves through the independent validator; a failure is a bug, not a result."""
    if sol.offsets is not None:
        problems = check_solution(buffers, sol.offsets, capacity)
        if problems:
            raise RuntimeError(f"DSA engine {sol.method} produced an invalid placement: {problems[0]}")
    return DsaSolution(sol.status, sol.offsets, sol.peak, sol.lower_bound, sol.method,
                       time.perf_counter() - t0)


# Engine runners: (buffers, capacity, deadline, seed, threads) -> ("found" | "infeasible" |
# "timeout", offsets or None, engine name).
def _run_search(buffers, capacity: int, deadline: float, seed: int, threads: int, searcher=None):
    from .searcher import Searcher
    if searcher is None:
        searcher = Searcher(*as_arrays(buffers), capacity, seed=seed)
    out = searcher.advance(deadline)
    log.debug("dsa search at %d: %s, %d nodes, %d runs, %.2f s", capacity, out.status, out.nodes,
              out.runs, out.seconds)
    if out.status == "found":
        return "found", offsets_by_id(buffers, out.offsets), "search"
    return out.status, None, "search"


class CpsatRuns:
    """CP-SAT as a restartable engine: run k uses the bottom-left search when k is even, the
    default search when odd, seed ``seed + k // 2``, at most ``CPSAT_FIRST * CPSAT_GROWTH**(k // 2)``
    seconds. ``advance(deadline)`` goes on where the last call stopped, so a portfolio that
    interleaves it with the search never repeats a run; a run cut short by the deadline is run
    again in full next time, which keeps the sequence (and so the answer) fixed for a seed."""

    def __init__(self, buffers, capacity: int, seed: int = 0, threads: int = 1):
        self.arrays, self.capacity = as_arrays(buffers), capacity
        self.seed, self.threads, self.k = seed, threads, 0

    def advance(self, deadline: float) -> tuple[str, np.ndarray | None]:
        from .cpsat import cpsat_place
        while True:
            left = deadline - time.perf_counter()
            if left <= 0.01:
                return "timeout", None
            r = self.k // 2
            planned = CPSAT_FIRST * CPSAT_GROWTH ** r
            status, off = cpsat_place(*self.arrays, self.capacity, min(left, planned), seed=self.seed + r,
                                      threads=self.threads, bottom_left=self.k % 2 == 0)
            log.debug("dsa cp-sat run %d (%s, seed %d) at %d: %s", self.k,
                      "bottom-left" if self.k % 2 == 0 else "default", self.seed + r, self.capacity, status)
            if status != "timeout":
                return status, off
            if planned > left:
                return "timeout", None  # cut short: run k again, in full, on the next call
            self.k += 1


def _run_cpsat(buffers, capacity: int, deadline: float, seed: int, threads: int, runs: CpsatRuns | None = None):
    if runs is None:
        runs = CpsatRuns(buffers, capacity, seed, threads)
    status, off = runs.advance(deadline)
    if status == "found":
        return "found", offsets_by_id(buffers, off), "cp-sat"
    return status, None, "cp-sat"


def _run_auto(buffers, capacity: int, deadline: float, seed: int, threads: int, runs: CpsatRuns | None = None):
    from .searcher import Searcher
    searcher = Searcher(*as_arrays(buffers), capacity, seed=seed)
    if runs is None:
        runs = CpsatRuns(buffers, capacity, seed, threads)
    # A slice is meant as the engine's CPU time. On a loaded machine a niced process may get a
    # tenth of a core, and a wall-clock slice then ends before the search has finished one run
    # (minimalloc's G: 64 nodes in the first 4 s); handing over to CP-SAT then only adds its
    # start-up. So a search slice that got less than half a core is run again once, its window
    # stretched by the CPU share it got (an idle machine never sees this).
    k, share, stretched = 0, 1.0, False
    while True:
        if k % 2 == 1:
            # ortools' import (about 0.5 s, once) is no part of CP-SAT's slice: counted in it,
            # the first slice cut its second run (the default search) short every time
            from ortools.sat.python import cp_model  # noqa: F401
        now = time.perf_counter()
        if now >= deadline:
            return "timeout", None, "search"
        planned = SLICE_FIRST * SLICE_GROWTH ** (k // 2)
        search_turn = k % 2 == 0
        end = min(deadline, now + (planned / share if search_turn else planned))
        cpu0 = time.process_time()
        if search_turn:
            out = _run_search(buffers, capacity, end, seed, threads, searcher)
        else:
            out = _run_cpsat(buffers, capacity, end, seed, threads, runs)
        if out[0] != "timeout":
            return out
        if search_turn:
            got = (time.process_time() - cpu0) / max(1e-6, time.perf_counter() - now)
            share = min(1.0, max(STARVED_FLOOR, got))
            if got < 0.5 and not stretched:
                stretched = True
                continue
        stretched = False
        k += 1
