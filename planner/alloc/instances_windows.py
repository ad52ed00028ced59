"""Instances cut from a placed one: a time window of a real trace, feasible by construction.

Keep the buffers alive in a window [t0, t1) of the horizon, their lifespans clipped to it;
the placement restricted to them is still valid (clipping only removes meetings in time), so
the peak it reaches inside the window is a capacity at which the window is feasible. From a
placed instance of minimalloc's benchmark this gives many instances of the same kind (the
same sizes, lifespans and tightness), which the generators only imitate. The capacity can sit
above the window's least peak (the placement was not made for the window), like minimalloc's
D, whose capacity is above its live-bytes bound.
"""
from __future__ import annotations

import numpy as np

from .problem import Buffer


def windows(buffers: list[Buffer], offsets: dict[str, int], count: int, seed: int = 0,
            share: tuple[float, float] = (0.3, 0.7)) -> list[tuple[list[Buffer], dict[str, int], int]]:
    """``count`` windows of ``buffers`` (placed at ``offsets``), each a random ``share`` of the
    horizon: (buffers, offsets, capacity) each. Windows with no buffer are skipped."""
    rng = np.random.default_rng(seed)
    h0, h1 = min(b.lower for b in buffers), max(b.upper for b in buffers)
    out = []
    for _ in range(count):
        width = max(1, int((h1 - h0) * rng.uniform(*share)))
        t0 = h0 + int(rng.integers(0, max(1, h1 - h0 - width + 1)))
        t1 = t0 + width
        sub = [Buffer(b.id, max(b.lower, t0), min(b.upper, t1), b.size, b.alignment)
               for b in buffers if max(b.lower, t0) < min(b.upper, t1)]
        if not sub:
            continue
        offs = {b.id: offsets[b.id] for b in sub}
        out.append((sub, offs, max(offs[b.id] + b.size for b in sub)))
    return out
