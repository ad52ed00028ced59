"""The DSA problem: buffers with fixed half-open lifespans, sizes and alignments, and the
shape of a solution (after minimalloc's data model).

Buffers alive at the same time must not overlap in [offset, offset + size); every offset is
a multiple of its buffer's alignment. With a capacity the question is feasibility
(max(offset + size) <= capacity); without one, minimise that peak.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

STATUSES = ("optimal", "feasible", "infeasible", "timeout")


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


def as_arrays(buffers: list[Buffer]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(lower, upper, size, alignment) as int64 arrays in buffer order: what the engines take."""
    lo = np.array([b.lower for b in buffers], dtype=np.int64)
    up = np.array([b.upper for b in buffers], dtype=np.int64)
    sz = np.array([b.size for b in buffers], dtype=np.int64)
    al = np.array([b.alignment for b in buffers], dtype=np.int64)
    return lo, up, sz, al


def offsets_by_id(buffers: list[Buffer], offsets: np.ndarray) -> dict[str, int]:
    """An engine's offset array (buffer order) as the solution's id -> offset map."""
    return {b.id: int(o) for b, o in zip(buffers, offsets.tolist())}
