"""The independent DSA validator: which rule a placement breaks, knowing nothing of how it
was made. Every placement an engine returns passes through it."""
from __future__ import annotations

import numpy as np

from .problem import Buffer


def check_solution(buffers: list[Buffer], offsets: dict[str, int] | None,
                   capacity: int | None) -> list[str]:
    """Every problem with a placement, as one line each (empty = valid).

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
    """max(offset + size) of a placement (0 for none)."""
    return max((offsets[b.id] + b.size for b in buffers), default=0)
