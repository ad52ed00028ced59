"""Generated DSA instances that are feasible by construction at a capacity equal to their peak.

``guillotine``: cut the rectangle [0, T) × [0, C) (time × address) by random guillotine cuts
into n pieces; each piece is a buffer (lifespan = its time side, size = its address side). The
pieces tile the rectangle, so the live bytes are C at every time and the capacity C is exactly
tight everywhere, like minimalloc's "challenging" benchmarks (which are tight at their peak).

``with_holes``: the same, then a fraction of the pieces that do not cover one chosen time
column are removed: the instance stays exactly tight at that column (peak = C) and gains
slack elsewhere, which widens the search (gaps are allowed) instead of forcing a tiling.
"""
from __future__ import annotations

import numpy as np

from .dsa import Buffer


def guillotine(n: int, seed: int = 0, horizon: int = 1000, capacity: int = 1 << 20,
               grain: int = 64) -> tuple[list[Buffer], dict[str, int], int]:
    """(buffers, offsets of the construction, capacity). Sizes are multiples of ``grain``."""
    rng = np.random.default_rng(seed)
    rects = [(0, horizon, 0, capacity // grain)]  # (t0, t1, y0, y1) in grain units for y
    while len(rects) < n:
        areas = np.array([(r[1] - r[0]) * (r[3] - r[2]) for r in rects], dtype=float)
        i = int(rng.choice(len(rects), p=areas / areas.sum()))
        t0, t1, y0, y1 = rects[i]
        # Cut across the longer side (relative to the whole), so pieces stay roughly square.
        vertical = (t1 - t0) / horizon > (y1 - y0) * grain / capacity
        if rng.random() < 0.25:
            vertical = not vertical
        if vertical and t1 - t0 >= 2:
            c = int(rng.integers(t0 + 1, t1))
            rects[i:i + 1] = [(t0, c, y0, y1), (c, t1, y0, y1)]
        elif y1 - y0 >= 2:
            c = int(rng.integers(y0 + 1, y1))
            rects[i:i + 1] = [(t0, t1, y0, c), (t0, t1, c, y1)]
        elif t1 - t0 >= 2:
            c = int(rng.integers(t0 + 1, t1))
            rects[i:i + 1] = [(t0, c, y0, y1), (c, t1, y0, y1)]
    order = rng.permutation(len(rects))  # ids carry no hint of the construction
    buffers, offsets = [], {}
    for k, i in enumerate(order.tolist()):
        t0, t1, y0, y1 = rects[i]
        name = f"b{k}"
        buffers.append(Buffer(name, t0, t1, (y1 - y0) * grain))
        offsets[name] = y0 * grain
    buffers.sort(key=lambda b: int(b.id[1:]))
    return buffers, offsets, (capacity // grain) * grain


def with_holes(n: int, seed: int = 0, drop: float = 0.2, **kw) -> tuple[list[Buffer], dict[str, int], int]:
    """A guillotine tiling of about n / (1 - drop) pieces with ``drop`` of those not covering a
    chosen time column removed (so about n remain); still exactly tight at that column."""
    rng = np.random.default_rng(seed + 7919)
    bufs, offs, cap = guillotine(round(n / (1 - drop)), seed, **kw)
    col = int(rng.integers(0, max(b.upper for b in bufs)))
    keep = [b for b in bufs if b.lower <= col < b.upper or rng.random() >= drop]
    return keep, {b.id: offs[b.id] for b in keep}, cap
