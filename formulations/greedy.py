"""A fast remat incumbent: DTR-style eviction on memory as one number, then addresses.

Used by ``exact`` when no runtime heuristic yields a plan (and to compare): run the ops in
captured order; before an op runs, its missing inputs are recomputed recursively (inputs
pinned); when its outputs do not fit, evict the live value with the lowest
cost / (size x staleness) or cost / (size x distance to next use) (required values last; both
scores are tried, the cheaper plan kept). The op sequence then gets minimal lifetimes
and DSA addresses (``formulations.schedule``); when the placement fails, the greedy reruns
with less memory (a few shrinking targets) so the fragmentation has room.
"""
from __future__ import annotations

import logging
import sys
import time

from .problem import RematProblem
from .schedule import Lifetimes, lifetimes, place

log = logging.getLogger(__name__)


class _OutOfTime(Exception):
    """The recursive recomputation passed its deadline (it thrashes on tight budgets)."""


def greedy_sequence(p: RematProblem, capacity: int, score: str = "stale",
                    deadline: float | None = None) -> list[int] | None:
    """Op sequence whose live units never exceed ``capacity`` (None when the greedy gets stuck
    or passes ``deadline``, a ``time.perf_counter()`` value).
    ``score``: "stale" evicts the lowest cost / (size x staleness) (DTR's runtime view);
    "next-use" the lowest cost / (size x distance to its next reader in captured order), which
    only a planner knows (Belady's rule weighted by cost per byte)."""
    import bisect
    V = p.values
    views_of: dict[int, list[int]] = {}
    for v, val in enumerate(V):
        if val.base is not None:
            views_of.setdefault(val.base, []).append(v)
    required = set(p.required)
    # remaining direct reads in captured order, to free dead values eagerly
    remaining = [0] * len(V)
    for rs in p.reads:
        for v in rs:
            remaining[v] += 1
    live: set[int] = set()
    units = 0
    clock = 0
    last: dict[int, int] = {}
    seq: list[int] = []
    first_done = [False] * p.n
    readers: list[list[int]] = [[] for _ in V]
    for k, rs in enumerate(p.reads):
        for v in rs:
            readers[v].append(k)

    def drop(v: int) -> None:
        nonlocal units
        if v in live:
            live.discard(v)
            units -= V[v].size
            for w in views_of.get(v, ()):
                drop(w)

    def evict_one(pinned: set[int]) -> bool:
        best, best_s = None, None
        for v in live:
            if v in pinned or V[v].size == 0:
                continue
            if any(w in pinned for w in views_of.get(v, ())):
                continue
            if score == "next-use":
                rd = readers[v]
                i = bisect.bisect_right(rd, stage[0])
                far = (rd[i] - stage[0]) if i < len(rd) else p.n + 1
                s = (p.cost[V[v].producer] + 1e-9) / (V[v].size * far)
            else:
                stale = clock - last.get(v, 0) + 1
                s = (p.cost[V[v].producer] + 1e-9) / (V[v].size * stale)
            if v in required:
                s *= 1e6
            if best_s is None or s < best_s:
                best, best_s = v, s
        if best is None:
            return False
        drop(best)
        return True

    stage = [0]
    lim = p.limit or (p.n,) * p.n
    calls = [0]

    def run(k: int, pinned: set[int], depth: int) -> bool:
        nonlocal units, clock
        calls[0] += 1
        # checked every 256 calls: one recursive recomputation can run for minutes
        if deadline is not None and not calls[0] & 255 and time.perf_counter() > deadline:
            raise _OutOfTime
        if depth > p.n + 5 or (k != stage[0] and stage[0] > lim[k]):
            return False
        pin = pinned | set(p.reads[k])
        for v in p.reads[k]:
            if v not in live:
                if not run(V[v].producer, pin, depth + 1):
                    return False
        need = sum(V[v].size for v in p.outs[k] if v not in live)
        while units + need > capacity:
            if not evict_one(pin):
                return False
        for v in p.outs[k]:
            if v not in live:
                live.add(v)
                units += V[v].size
        for v in p.reads[k]:
            last[v] = clock
        clock += 1
        seq.append(k)
        return True

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 4 * p.n + 1000))
    try:
        for k in range(p.n):
            stage[0] = k
            if not run(k, set(), 0):
                return None
            first_done[k] = True
            for v in p.reads[k]:
                remaining[v] -= 1
            for v in list(live):  # dead values (no later reader in captured order) go now
                if remaining[v] == 0 and v not in required and not any(
                        w in live for w in views_of.get(v, ())):
                    if V[v].producer <= k:
                        drop(v)
        stage[0] = p.n
        for v in p.required:
            if v not in live and not run(V[v].producer, set(p.required) & live, 0):
                return None
    except _OutOfTime:
        log.debug("greedy (%s) passed its deadline after %d recursive steps", score, calls[0])
        return None
    finally:
        sys.setrecursionlimit(old)
    return seq


def greedy_plan(p: RematProblem, capacity: int, time_limit: float = 10.0, seed: int = 0,
                threads: int = 1) -> tuple[Lifetimes, dict[int, int], str] | None:
    """Best effort: (lifetimes, offsets, placement solver) or None; the cheaper plan of the two
    eviction scores (neither dominates on unet: docs/exact.md)."""
    t0 = time.perf_counter()
    best = None
    for score in ("stale", "next-use"):
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0:
            break
        got = _greedy_plan(p, capacity, score, left / (2 if score == "stale" else 1), seed, threads)
        if got is not None and (best is None or got[0].cost < best[0].cost):
            best = got
    return best


def _greedy_plan(p: RematProblem, capacity: int, score: str, time_limit: float, seed: int,
                 threads: int) -> tuple[Lifetimes, dict[int, int], str] | None:
    t0 = time.perf_counter()
    for shrink in (1.0, 0.97, 0.93, 0.88, 0.8, 0.7):
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0:
            break
        seq = greedy_sequence(p, int(capacity * shrink), score, deadline=t0 + time_limit)
        if seq is None:
            continue
        lt = lifetimes(p, seq)
        if lt is None or lt.peak_units > capacity:
            continue
        pl = place(lt, capacity, min(left, 1.0), seed, threads)
        if pl.offsets is not None:
            return lt, pl.offsets, pl.solver
        log.debug("greedy (%s) at %.2f of capacity: placement %s", score, shrink, pl.status)
    return None
