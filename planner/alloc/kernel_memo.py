"""The compiled search's failure memo (``kernel.run``): 128-bit digests of the sub-problems
proved infeasible, in an open-addressing hash table of two int64 arrays.

A numba typed dict did the same, but building one costs about 0.4 s per process (its methods
are compiled on first use, outside numba's cache), more than the whole search on most tight
instances. The table doubles while it is at most half full, up to ``MAX_SLOTS``; the memo is
only a cache, so past ``most`` entries it is emptied (holes 300 seed 1 made 29.7M failures in
300 s). A stored second word always has its low bit set, so 0 marks an empty slot.
"""
from __future__ import annotations

import numba as nb
import numpy as np

FIRST_SLOTS = 1 << 12
MAX_SLOTS = 1 << 24   # 16.8M slots, 256 MiB for both words
MEMO_MAX = MAX_SLOTS // 2  # entries at most (a half-full table at most)


def new_memo() -> tuple[np.ndarray, np.ndarray]:
    """An empty table: (first words, second words)."""
    return np.zeros(FIRST_SLOTS, dtype=np.int64), np.zeros(FIRST_SLOTS, dtype=np.int64)


@nb.njit(cache=True, inline="always")
def mix(h: np.uint64, x: np.int64, k: np.uint64) -> np.uint64:
    # splitmix64's finaliser over h + x * k: every input word changes every output bit
    z = h + np.uint64(x) * k
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True)
def digest(pool, cu, cm, minoff, twins, clast, cls, offset, size, trank, h1, h2):
    """Two 64-bit digests of U = pool[cu:cu + cm] with each buffer's minimum offset and twin
    flag (``kernel._twin_forbidden``), continuing h1 and h2: the memo's key (128 bits)."""
    k1, k2 = np.uint64(0xD6E8FEB86659FD93), np.uint64(0xA0761D6478BD642F)
    for q in range(cu, cu + cm):
        u = pool[q]
        w = minoff[u] * 4
        if twins:  # the twin flag written out: through the helper the search ran 25% slower
            p = clast[cls[u]]
            if p >= 0 and offset[p] + size[p] == minoff[u] and trank[p] > trank[u]:
                w += 2
        h1 = mix(h1 ^ np.uint64(u), w, k1)
        h2 = mix(h2 ^ np.uint64(u), w, k2)
    return h1, h2


@nb.njit(cache=True, inline="always")
def _slot(t1, t2, h1, h2):
    """Where key (h1, h2 | 1) is, or the empty slot where it would go."""
    mask = t1.size - 1
    i = h1 & mask
    while t2[i] != 0 and not (t1[i] == h1 and t2[i] == h2):
        i = (i + 1) & mask
    return i


@nb.njit(cache=True)
def has(t1, t2, h1, h2):
    return t2[_slot(t1, t2, h1, h2 | 1)] != 0


@nb.njit(cache=True)
def add(t1, t2, count, h1, h2, most):
    """Insert the key; returns the table (a new one when it grew) and its entry count."""
    h2 |= 1
    if count >= min(most, MAX_SLOTS // 2):  # full: empty it
        t1[:] = 0
        t2[:] = 0
        count = 0
    if 2 * (count + 1) > t1.size and t1.size < MAX_SLOTS:
        n1 = np.zeros(2 * t1.size, dtype=np.int64)
        n2 = np.zeros(2 * t1.size, dtype=np.int64)
        for i in range(t1.size):
            if t2[i] != 0:
                j = _slot(n1, n2, t1[i], t2[i])
                n1[j], n2[j] = t1[i], t2[i]
        t1, t2 = n1, n2
    i = _slot(t1, t2, h1, h2)
    if t2[i] == 0:
        t1[i], t2[i] = h1, h2
        count += 1
    return t1, t2, count
