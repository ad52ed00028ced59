"""Generated DSA instances shaped like compiled accelerator workloads (minimalloc's
"challenging" kind), feasible by construction at a capacity equal to their peak.

What such traces share, and the other generators (``instances``) lack: a network is a few
block patterns repeated along time (a layer's activations and temporaries, the same shapes
again in the next layer), so few distinct sizes (multiples of a coarse unit, 1 KiB here) and
many buffers of one size; most buffers live a few steps, a few (skip connections, saved
activations) span many blocks; stages change the sizes (resolution halves, channels double).

``blocks``: such a trace, placed by greedy best-fit; the capacity is that placement's peak.
Then at a share ``tight`` of the time columns every gap under the peak is filled with pieces of the gap (unit ·
2^k, lifespans around the column inside the free time of those addresses), so the live bytes
there equal the capacity: the construction is a witness, the capacity is the minimum peak,
and it is exactly tight at those columns and loose elsewhere, like minimalloc's instances
(tight in 0-45% of their sections).
"""
from __future__ import annotations

import numpy as np

from .instances import filled
from .problem import Buffer

# skip-connection sizes in units
_UNITS = np.array([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128])


def blocks(n: int, seed: int = 0, unit: int = 1024, tight: float = 0.2,
           long_frac: float = 0.06) -> tuple[list[Buffer], dict[str, int], int]:
    """(buffers, offsets of the construction, capacity) with about n buffers (fillers included)."""
    rng = np.random.default_rng(seed + 7_000_003)
    m = int(rng.integers(8, 25))                    # buffers per block pattern
    period = max(2, int(rng.integers(m // 3, m // 2 + 2)))
    # sizes log-uniform in [1, 256] units; lifespans a few steps, some over several layers
    pattern = [(int(rng.integers(0, period)), int(min(4 * period, rng.geometric(0.2))),
                int(round(2 ** rng.uniform(0, 8)))) for _ in range(m)]
    reps = max(1, round(0.45 * n / m))  # the fillers bring about as many again
    stages = int(rng.integers(1, 4))
    rows = []  # (lower, upper, size)
    for r in range(reps):
        stage = r * stages // reps
        for start, length, k in pattern:
            if rng.random() < 0.1:
                continue  # a layer without this temporary
            k = k * 2 ** stage if rng.random() < 0.5 else max(1, k // 2 ** stage)
            if rng.random() < 0.3:  # shapes differ a little between layers
                k = max(1, round(k * rng.uniform(0.7, 1.4)))
            lo = r * period + start
            rows.append((lo, lo + length, k * unit))
        if rng.random() < long_frac * m:  # a skip connection / saved activation over several blocks
            lo = r * period + int(rng.integers(0, period))
            span = int(rng.integers(2, max(3, reps - r + 1))) * period
            rows.append((lo, lo + span, int(rng.choice(_UNITS[3:11])) * unit))
    horizon = max(u for _, u, _ in rows)
    bufs = [Buffer(f"t{i}", lo, up, sz) for i, (lo, up, sz) in enumerate(rows)]
    cols = rng.choice(horizon, size=max(1, min(horizon, round(tight * horizon))), replace=False).tolist()
    return filled(bufs, cols, horizon, rng, unit=unit, reach=4)
