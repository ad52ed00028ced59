"""Greedy-by-size placement (TFLite's, Pisarchyk & Lee 2020): the one greedy every caller uses.

Largest buffer first, each into the tightest gap among the placed buffers it meets in time,
on top of them when none fits. When that misses the capacity (or, without one, the live-bytes
bound), equal sizes are taken by earliest start instead of longest lifespan, then the
buffers alive at the most loaded time are stacked first: size order rarely packs a peak
column of many sizes without gaps.
"""
from __future__ import annotations

import time

import numpy as np

from .problem import Buffer, DsaSolution, as_arrays, check_buffers, live_lower_bound, offsets_by_id


def by_size(lo: np.ndarray, up: np.ndarray, sz: np.ndarray) -> np.ndarray:
    """Largest first; ties: longer lifespan, then index (TFLite's order)."""
    return np.lexsort((np.arange(len(sz)), -(up - lo), -sz))


def fit_offsets(lo: np.ndarray, up: np.ndarray, sz: np.ndarray, al: np.ndarray, order: np.ndarray,
                best_fit: bool = True) -> np.ndarray:
    """Each buffer in ``order`` into a gap among the placed buffers it overlaps in time: the
    tightest one (``best_fit``, lowest on ties) or the lowest one; on top of them if none fits.
    Lifespans are half-open [lo, up); zero-size buffers go to 0."""
    n = len(sz)
    off = np.full(n, -1, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    for i in order.tolist():
        s, a = int(sz[i]), int(al[i])
        mask = done & (lo < up[i]) & (up > lo[i]) & (sz > 0)
        best = 0
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
                best = -(-int(pe.max()) // a) * a
        off[i] = best
        done[i] = True
    return off


def peak_stack_orders(lo: np.ndarray, up: np.ndarray, sz: np.ndarray) -> list[np.ndarray]:
    """Orders that stack the buffers alive at the most loaded time first, then the rest largest
    first. Stacked in the order of their ends (latest at the bottom), of their starts (earliest
    at the bottom) or of their lengths, each suffix of the stack dies first, so the stack stays
    contiguous around the column for nested lifetimes, the shape of a training step's activations."""
    if not len(sz):
        return []
    ts = np.concatenate((lo, up))
    dl = np.concatenate((sz, -sz))
    k = np.lexsort((dl, ts))  # at equal times ends (negative) come first: half-open lifespans
    run = np.cumsum(dl[k])
    col = int(ts[k][int(np.argmax(run))])
    inside = (lo <= col) & (col < up) & (sz > 0)
    rest = by_size(lo, up, sz)
    rest = rest[~inside[rest]]
    idx = np.flatnonzero(inside)
    stacks = (np.lexsort((lo[idx], -up[idx])), np.lexsort((-up[idx], lo[idx])),
              np.lexsort((lo[idx], -(up[idx] - lo[idx]))))
    return [np.concatenate((idx[s], rest)) for s in stacks]


def greedy_offsets(lo: np.ndarray, up: np.ndarray, sz: np.ndarray, al: np.ndarray,
                   capacity: int | None = None, bound: int | None = None) -> np.ndarray | None:
    """Offsets of the greedy (size order, then the peak-stacked orders when it misses), or None
    when none fits ``capacity``. ``bound``: a peak known to be the least possible (the stacked
    orders are not tried once it is met); the live-bytes bound when not given."""
    if not len(sz):
        return np.zeros(0, dtype=np.int64)
    if bound is None:
        bound = _live_bound(lo, up, sz)
    off = fit_offsets(lo, up, sz, al, by_size(lo, up, sz), best_fit=True)
    peak = int((off + sz).max())

    def good() -> bool:
        return peak <= bound or (capacity is not None and peak <= capacity)

    if not good():
        # equal sizes by earliest start: a chain's many equal buffers then nest in time order
        o2 = fit_offsets(lo, up, sz, al, np.lexsort((np.arange(len(sz)), lo, -sz)), best_fit=True)
        p2 = int((o2 + sz).max())
        if p2 < peak:
            off, peak = o2, p2
    if not good():
        for order in peak_stack_orders(lo, up, sz):
            for best_fit in (False, True):
                o2 = fit_offsets(lo, up, sz, al, order, best_fit)
                p2 = int((o2 + sz).max())
                if p2 < peak:
                    off, peak = o2, p2
            if good():
                break
    if capacity is not None and peak > capacity:
        return None
    return off


def _live_bound(lo: np.ndarray, up: np.ndarray, sz: np.ndarray) -> int:
    ts = np.concatenate((lo, up))
    dl = np.concatenate((sz, -sz))
    k = np.lexsort((dl, ts))
    return int(max(0, np.cumsum(dl[k]).max()))


def greedy_by_size(sizes: dict[int, int], life: dict[int, tuple[int, int]], capacity: int,
                   align: int = 1) -> dict[int, int] | None:
    """The greedy over fixed lifetimes keyed by id, inclusive [start, end] (the plain schedule's
    and the formulations' convention): offsets by id, or None when it does not fit ``capacity``."""
    ids = list(sizes)
    lo = np.array([life[r][0] for r in ids], dtype=np.int64)
    up = np.array([life[r][1] + 1 for r in ids], dtype=np.int64)
    sz = np.array([sizes[r] for r in ids], dtype=np.int64)
    off = greedy_offsets(lo, up, sz, np.full(len(ids), max(1, align), dtype=np.int64), capacity=capacity)
    return None if off is None else dict(zip(ids, off.tolist()))


def greedy_best_fit(buffers: list[Buffer], capacity: int | None = None) -> DsaSolution:
    """The greedy as a solution (method "greedy"). Status: "optimal" when its peak meets the
    live-bytes bound (a proof), "feasible" when it fits the capacity (or none is given),
    "timeout" when it does not fit (the greedy proves nothing about infeasibility)."""
    t0 = time.perf_counter()
    check_buffers(buffers)
    lb = live_lower_bound(buffers)
    if not buffers:
        return DsaSolution("optimal", {}, 0, 0, "greedy", time.perf_counter() - t0)
    arr = as_arrays(buffers)
    off = greedy_offsets(*arr, capacity=capacity, bound=lb)
    if off is None:
        return DsaSolution("timeout", None, None, lb, "greedy", time.perf_counter() - t0)
    peak = int((off + arr[2]).max())
    status = "optimal" if peak <= lb else "feasible"
    return DsaSolution(status, offsets_by_id(buffers, off), peak, lb, "greedy", time.perf_counter() - t0)
