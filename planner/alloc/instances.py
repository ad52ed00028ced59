"""Generated DSA instances that are feasible by construction at a capacity equal to their peak.

``guillotine``: cut the rectangle [0, T) × [0, C) (time × address) by random guillotine cuts
into n pieces; each piece is a buffer (lifespan = its time side, size = its address side). The
pieces tile the rectangle, so the live bytes are C at every time and the capacity C is exactly
tight everywhere, like minimalloc's "challenging" benchmarks (which are tight at their peak).

``with_holes``: the same, then a fraction of the pieces that do not cover one chosen time
column are removed: the instance stays exactly tight at that column (peak = C) and gains
slack elsewhere, which widens the search (gaps are allowed) instead of forcing a tiling.

``trace``: closer to accelerator traces than tilings: mostly short-lived activations and
temporaries of power-of-two-ish sizes (64 B · 2^k, sometimes · 1.5), a few long-lived large
buffers (weights, saved activations), placed by greedy best-fit; the capacity is that
placement's peak. Then at a few time columns every gap under the peak is filled with
buffers (power-of-two pieces of the gap, lifespans around the column inside the free time
of that address range), so the live bytes there equal the capacity: the construction is a
witness and the capacity is exactly the minimum peak, tight at several columns.
"""
from __future__ import annotations

import numpy as np

from .greedy import by_size, fit_offsets
from .problem import Buffer, as_arrays


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


def trace(n: int, seed: int = 0, long_frac: float = 0.05, columns: int = 4,
          grain: int = 64) -> tuple[list[Buffer], dict[str, int], int]:
    """(buffers, offsets of the construction, capacity) with about n buffers (fillers included)."""
    rng = np.random.default_rng(seed + 104729)
    base = max(2, round(0.8 * n))
    horizon = max(8, base // 2)
    rows = []  # (lower, upper, size)
    for _ in range(base):
        if rng.random() < long_frac:  # long-lived and large: 16-32 KiB · 2^k, over much of the horizon
            length = int(rng.integers(horizon // 3, horizon + 1))
            size = (1 << int(rng.integers(14, 17))) * int(rng.choice([1, 1, 2, 3]))
        else:  # short-lived: a few steps, small sizes more likely (geometric exponent)
            length = int(min(horizon, rng.geometric(0.25)))
            k = min(int(rng.geometric(0.3)) - 1, 10)
            size = grain * (1 << k) * (3 if rng.random() < 0.2 else 2) // 2
        lo = int(rng.integers(0, horizon - length + 1))
        rows.append((lo, lo + length, size))
    bufs = [Buffer(f"t{i}", lo, up, sz) for i, (lo, up, sz) in enumerate(rows)]
    cols = rng.choice(horizon, size=min(columns, horizon), replace=False).tolist()
    return filled(bufs, cols, horizon, rng, unit=1, reach=6)


def filled(bufs: list[Buffer], cols: list[int], horizon: int, rng, unit: int = 1,
           reach: int = 6) -> tuple[list[Buffer], dict[str, int], int]:
    """``bufs`` placed by greedy best-fit, the capacity that placement's peak; then at each
    time column of ``cols`` every gap under it filled with pieces of the gap (``unit`` * 2^k,
    largest first; lifespans within ``reach`` of the column, inside the free time of those
    addresses), so the live bytes there equal the capacity: the construction is the witness.
    Returns (buffers shuffled and renamed, their offsets, capacity)."""
    arr = as_arrays(bufs)
    off = fit_offsets(*arr, by_size(*arr[:3])).tolist()
    cap = max(o + b.size for o, b in zip(off, bufs))
    placed = [(b.lower, b.upper, o, o + b.size) for b, o in zip(bufs, off)]
    bufs = list(bufs)
    for t in sorted(cols):
        live = sorted((y0, y1) for (lo, up, y0, y1) in placed if lo <= t < up)
        gaps, top = [], 0
        for y0, y1 in live + [(cap, cap)]:
            if y0 > top:
                gaps.append((top, y0))
            top = max(top, y1)
        for g0, g1 in gaps:
            y = g0
            while y < g1:  # pieces of the gap, largest first (gaps are multiples of unit)
                piece = unit << (((g1 - y) // unit).bit_length() - 1)
                # free time of [y, y + piece) around t: no placed buffer uses those addresses
                left = max([up for (lo, up, y0, y1) in placed if y0 < y + piece and y < y1 and up <= t] + [0])
                right = min([lo for (lo, up, y0, y1) in placed if y0 < y + piece and y < y1 and lo > t] + [horizon])
                lo = int(rng.integers(max(left, t - reach), t + 1))
                up = int(rng.integers(t + 1, min(right, t + reach + 1) + 1))
                bufs.append(Buffer(f"t{len(bufs)}", lo, up, piece))
                placed.append((lo, up, y, y + piece))
                off.append(y)
                y += piece
    order = rng.permutation(len(bufs))  # ids carry no hint of the construction
    out = [Buffer(f"b{k}", bufs[i].lower, bufs[i].upper, bufs[i].size) for k, i in enumerate(order.tolist())]
    offsets = {f"b{k}": int(off[i]) for k, i in enumerate(order.tolist())}
    return out, offsets, cap
