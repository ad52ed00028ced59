"""Static address assignment (DSA): give each buffer with a fixed lifespan a byte offset.

Problem (minimalloc's, REFERENCE.md §3-4): buffers with half-open lifespans [lower, upper),
sizes and alignments; buffers alive at the same time must not overlap in [offset,
offset + size); every offset is a multiple of the buffer's alignment. With a capacity the
question is feasibility (max(offset + size) <= capacity); without one, minimise that peak.

Engines (the ``method`` of a solution says which produced it):
- ``greedy``: TFLite's greedy-by-size best-fit (Pisarchyk & Lee 2020), the fast path; when it
  does not fit, the same fit with the buffers alive at the most loaded time stacked first
  (``_peak_stack_orders``): resnet50 at 0.5's remat-optimal schedule (821 blocks, 0.045% slack)
  is placed that way in 0.1 s, where size order left 3,408 units over and neither exact
  engine placed it in 90 s;
- ``search``: the exact depth-first search over canonical solutions (``dsa_search``);
- ``cp-sat``: the CP-SAT ``add_no_overlap_2d`` model (``dsa_cpsat``), run as a sequence of
  short runs (``CpsatRuns``) that alternate a bottom-left fixed search (lowest possible buffer
  first, at its lowest offset: the canonical search's branching, plus CP-SAT's clause learning
  and restarts) with CP-SAT's default search, a new seed per pair and slowly growing slices.
  Why: CP-SAT's time to a placement is heavy-tailed in the seed (trace 450 seed 1, 2 s per
  seed: the default search places it for 7 of 12 seeds), and the two searches succeed on
  different instances (20 gap-eviction schedules of layered graphs, 5 s: default 14, bottom-left
  11; tilings: bottom-left all in <= 2 s, default none). Alternating found 12 of 13 hard remat
  placements in 20 s where one bottom-left run then the portfolio found 6;
- engine ``auto`` (the default of ``solve_dsa``) is a portfolio of the two exact engines: the
  search for the first ``SEARCH_SHARE`` of the time (it either succeeds fast or thrashes,
  its run times are heavy-tailed), then CP-SAT, whose clause learning covers other instances.
  The solution's ``method`` names the engine that found (or refuted) it.

``solve_dsa`` never passes a greedy placement off as exact: the status says what was proved,
the method says who found it. ``check_solution`` is the independent validator.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

STATUSES = ("optimal", "feasible", "infeasible", "timeout")
ENGINES = ("auto", "search", "cp-sat")
SLICE_FIRST = 2.0   # engine auto: first time slice (s) of each engine; slices then grow ...
SLICE_GROWTH = 4.0  # ... by this factor after each search + CP-SAT pair
CPSAT_FIRST = 1.0   # CpsatRuns: first run (s) of each CP-SAT search; runs then grow ...
CPSAT_GROWTH = 1.5  # ... by this factor after each bottom-left + default pair (new seed per pair)


@dataclass(frozen=True)
class Buffer:
    id: str              # name (CSV id)
    lower: int           # lifespan start, inclusive
    upper: int           # lifespan end, exclusive (half-open [lower, upper))
    size: int            # bytes
    alignment: int = 1   # offset must be a multiple of this


@dataclass(frozen=True)
class DsaSolution:
    status: str                  # "optimal" (proved), "feasible", "infeasible" (proved: no placement
                                 # within capacity), "timeout" (none found, not proved infeasible)
    offsets: dict[str, int] | None  # buffer id -> offset; None when no placement was found
    peak: int | None             # max(offset + size) of the solution
    lower_bound: int             # max live bytes over time, or better when the search proved more
    method: str                  # engine that produced the placement (or the proof): search | cp-sat | greedy
    seconds: float               # wall time spent


def check_buffers(buffers: list[Buffer]) -> None:
    """Raise ValueError naming the first malformed buffer (duplicate id, empty lifespan, ...)."""
    seen: set[str] = set()
    for b in buffers:
        if b.id in seen:
            raise ValueError(f"buffer id {b.id!r} appears twice")
        seen.add(b.id)
        if b.upper <= b.lower:
            raise ValueError(f"buffer {b.id!r} has an empty lifespan [{b.lower}, {b.upper})")
        if b.size < 0:
            raise ValueError(f"buffer {b.id!r} has negative size {b.size}")
        if b.alignment < 1:
            raise ValueError(f"buffer {b.id!r} has alignment {b.alignment} (must be >= 1)")


def live_lower_bound(buffers: list[Buffer]) -> int:
    """The classic bound: the most bytes alive at one time (no placement can peak lower)."""
    if not buffers:
        return 0
    ev: dict[int, int] = {}
    for b in buffers:
        ev[b.lower] = ev.get(b.lower, 0) + b.size
        ev[b.upper] = ev.get(b.upper, 0) - b.size
    run = best = 0
    for t in sorted(ev):
        run += ev[t]
        best = max(best, run)
    return best


def check_solution(buffers: list[Buffer], offsets: dict[str, int] | None,
                   capacity: int | None) -> list[str]:
    """Independent validator: every problem with a placement, as one line each (empty = valid).

    Rules: every buffer has an integer offset >= 0, a multiple of its alignment; offset + size
    <= capacity (when given); two buffers whose lifespans intersect have disjoint address
    ranges (zero-size buffers occupy nothing). Unknown ids in ``offsets`` are reported too.
    """
    if offsets is None:
        return ["no offsets"]
    problems: list[str] = []
    ids = {b.id for b in buffers}
    for k in offsets:
        if k not in ids:
            problems.append(f"offset given for unknown buffer {k!r}")
    placed: list[tuple[int, int, int, int, str]] = []
    for b in buffers:
        if b.id not in offsets:
            problems.append(f"buffer {b.id!r} has no offset")
            continue
        o = offsets[b.id]
        if not isinstance(o, (int, np.integer)) or isinstance(o, bool):
            problems.append(f"buffer {b.id!r} has non-integer offset {o!r}")
            continue
        o = int(o)
        if o < 0:
            problems.append(f"buffer {b.id!r} has negative offset {o}")
        if o % b.alignment:
            problems.append(f"buffer {b.id!r} offset {o} is not a multiple of its alignment {b.alignment}")
        if capacity is not None and o + b.size > capacity:
            problems.append(f"buffer {b.id!r} ends at {o + b.size}, beyond capacity {capacity}")
        if b.size > 0:
            placed.append((b.lower, b.upper, o, o + b.size, b.id))
    # Sweep over time: compare each buffer with those still alive when it starts.
    placed.sort()
    active: list[tuple[int, int, int, int, str]] = []
    for cur in placed:
        active = [p for p in active if p[1] > cur[0]]
        for p in active:
            if p[2] < cur[3] and cur[2] < p[3]:
                problems.append(f"buffers {p[4]!r} [{p[2]}, {p[3]}) and {cur[4]!r} [{cur[2]}, {cur[3]}) "
                                f"overlap in address while both alive at time {cur[0]}")
        active.append(cur)
    return problems


def peak_of(buffers: list[Buffer], offsets: dict[str, int]) -> int:
    return max((offsets[b.id] + b.size for b in buffers), default=0)


def _arrays(buffers: list[Buffer]) -> tuple[np.ndarray, ...]:
    lo = np.array([b.lower for b in buffers], dtype=np.int64)
    up = np.array([b.upper for b in buffers], dtype=np.int64)
    sz = np.array([b.size for b in buffers], dtype=np.int64)
    al = np.array([b.alignment for b in buffers], dtype=np.int64)
    return lo, up, sz, al


def _greedy_offsets(lo: np.ndarray, up: np.ndarray, sz: np.ndarray, al: np.ndarray) -> np.ndarray:
    """TFLite greedy-by-size: largest first (ties: longer lifespan, then index), each into the
    tightest gap among the buffers it overlaps in time, or on top of them if none fits."""
    return _fit_offsets(lo, up, sz, al, _by_size(lo, up, sz), best_fit=True)


def _by_size(lo: np.ndarray, up: np.ndarray, sz: np.ndarray) -> np.ndarray:
    """Largest first; ties: longer lifespan, then index (TFLite's order)."""
    return np.lexsort((np.arange(len(sz)), -(up - lo), -sz))


def _fit_offsets(lo: np.ndarray, up: np.ndarray, sz: np.ndarray, al: np.ndarray, order: np.ndarray,
                 best_fit: bool) -> np.ndarray:
    """Each buffer in ``order`` into a gap among the placed buffers it overlaps in time: the
    tightest one (``best_fit``, lowest on ties) or the lowest one; on top of them if none fits."""
    n = len(sz)
    off = np.full(n, -1, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    for i in order.tolist():
        s, a = int(sz[i]), int(al[i])
        mask = done & (lo < up[i]) & (up > lo[i]) & (sz > 0)
        best = None
        if s > 0 and mask.any():
            idx = np.flatnonzero(mask)
            po, pe = off[idx], off[idx] + sz[idx]
            k = np.argsort(po, kind="stable")
            po, pe = po[k], pe[k]
            # prev_end[j] = highest end among the buffers below the j-th one (gap start)
            prev_end = np.concatenate(([0], np.maximum.accumulate(pe)[:-1]))
            start = -(-prev_end // a) * a
            gap = po - start
            fits = np.flatnonzero(gap >= s)
            if fits.size:
                j = fits[np.argmin(gap[fits])] if best_fit else fits[0]
                best = int(start[j])
            else:
                top = int(pe.max())
                best = -(-top // a) * a
        elif s > 0:
            best = 0
        off[i] = 0 if best is None else best
        done[i] = True
    return off


def _peak_stack_orders(lo: np.ndarray, up: np.ndarray, sz: np.ndarray) -> list[np.ndarray]:
    """Orders that stack the buffers alive at the most loaded time first, then the rest largest
    first. At that column every placement packs those buffers with at most capacity - peak of
    gaps, which size order rarely achieves when they have many sizes; stacked in the order of
    their ends (latest at the bottom), of their starts (earliest at the bottom) or of their
    lengths, each suffix of the stack dies first, so the stack stays contiguous after (or
    before) the column for nested lifetimes, the shape of a training step's activations."""
    if not len(sz):
        return []
    ts = np.concatenate((lo, up))
    dl = np.concatenate((sz, -sz))
    k = np.lexsort((dl, ts))  # at equal times ends (negative) come first: half-open lifespans
    run = np.cumsum(dl[k])
    col = int(ts[k][int(np.argmax(run))])
    inside = (lo <= col) & (col < up) & (sz > 0)
    rest = _by_size(lo, up, sz)
    rest = rest[~inside[rest]]
    idx = np.flatnonzero(inside)
    stacks = (np.lexsort((lo[idx], -up[idx])), np.lexsort((-up[idx], lo[idx])), np.lexsort((lo[idx], -(up[idx] - lo[idx]))))
    return [np.concatenate((idx[s], rest)) for s in stacks]


def greedy_best_fit(buffers: list[Buffer], capacity: int | None = None) -> DsaSolution:
    """Greedy-by-size best-fit placement (method "greedy"). Status: "optimal" when its peak meets
    the live-bytes bound (a proof), "feasible" when it fits the capacity (or none is given),
    "timeout" when it does not fit (the greedy proves nothing about infeasibility)."""
    t0 = time.perf_counter()
    check_buffers(buffers)
    lb = live_lower_bound(buffers)
    if not buffers:
        return DsaSolution("optimal", {}, 0, 0, "greedy", time.perf_counter() - t0)
    arr = _arrays(buffers)
    off = _greedy_offsets(*arr)
    peak = int((off + arr[2]).max())
    if peak > lb and (capacity is None or peak > capacity):
        # near a tight peak, size order leaves gaps at the peak column: stack it first
        for order in _peak_stack_orders(*arr[:3]):
            for best_fit in (False, True):
                o2 = _fit_offsets(*arr, order, best_fit)
                p2 = int((o2 + arr[2]).max())
                if p2 < peak:
                    off, peak = o2, p2
            if peak <= lb or (capacity is not None and peak <= capacity):
                break
    offsets = {b.id: int(o) for b, o in zip(buffers, off.tolist())}
    if capacity is not None and peak > capacity:
        return DsaSolution("timeout", None, None, lb, "greedy", time.perf_counter() - t0)
    status = "optimal" if peak <= lb else "feasible"
    return DsaSolution(status, offsets, peak, lb, "greedy", time.perf_counter() - t0)


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
    from .search import Searcher
    if searcher is None:
        searcher = Searcher(*_arrays(buffers), capacity, seed=seed)
    out = searcher.advance(deadline)
    log.debug("dsa search at %d: %s, %d nodes, %d runs, %.2f s", capacity, out.status, out.nodes,
              out.runs, out.seconds)
    if out.status == "found":
        return "found", {b.id: int(o) for b, o in zip(buffers, out.offsets.tolist())}, "search"
    return out.status, None, "search"


class CpsatRuns:
    """CP-SAT as a restartable engine: run k uses the bottom-left search when k is even, the
    default search when odd, seed ``seed + k // 2``, at most ``CPSAT_FIRST * CPSAT_GROWTH**(k // 2)``
    seconds. ``advance(deadline)`` goes on where the last call stopped, so a portfolio that
    interleaves it with the search never repeats a run; a run cut short by the deadline is run
    again in full next time, which keeps the sequence (and so the answer) fixed for a seed."""

    def __init__(self, buffers, capacity: int, seed: int = 0, threads: int = 1):
        self.arrays, self.capacity = _arrays(buffers), capacity
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
        return "found", {b.id: int(o) for b, o in zip(buffers, off.tolist())}, "cp-sat"
    return status, None, "cp-sat"


def _run_auto(buffers, capacity: int, deadline: float, seed: int, threads: int, runs: CpsatRuns | None = None):
    from .search import Searcher
    searcher = Searcher(*_arrays(buffers), capacity, seed=seed)
    if runs is None:
        runs = CpsatRuns(buffers, capacity, seed, threads)
    k = 0
    while True:
        now = time.perf_counter()
        if now >= deadline:
            return "timeout", None, "search"
        end = min(deadline, now + SLICE_FIRST * SLICE_GROWTH ** (k // 2))
        if k % 2 == 0:
            out = _run_search(buffers, capacity, end, seed, threads, searcher)
        else:
            out = _run_cpsat(buffers, capacity, end, seed, threads, runs)
        if out[0] != "timeout":
            return out
        k += 1
