"""A flat address space [0, capacity) with aligned first-fit / best-fit allocation.

Free space is a sorted list of disjoint holes; allocation rounds offsets up to the alignment
(sizes stay exact, like offsets of CUDA's caching allocator blocks)."""
from __future__ import annotations

import bisect


def align_up(x: int, a: int) -> int:
    return -(-x // a) * a


class AddressSpace:
    def __init__(self, capacity: int, alignment: int = 512):
        self.capacity = capacity
        self.alignment = max(1, alignment)
        self._starts: list[int] = [0]      # hole starts, sorted
        self._ends: list[int] = [capacity]  # hole ends (exclusive), parallel to _starts

    def find(self, size: int, policy: str = "first-fit") -> int | None:
        """Offset where ``size`` bytes fit (lowest hole for first-fit, tightest for best-fit)."""
        best, best_slack = None, None
        for s, e in zip(self._starts, self._ends):
            off = align_up(s, self.alignment)
            if off + size <= e:
                if policy == "first-fit":
                    return off
                slack = e - s - size
                if best_slack is None or slack < best_slack:
                    best, best_slack = off, slack
        return best

    def take(self, off: int, size: int) -> None:
        """Mark [off, off+size) used; it must lie inside one hole."""
        if size == 0:
            return
        i = bisect.bisect_right(self._starts, off) - 1
        s, e = self._starts[i], self._ends[i]
        if i < 0 or not (s <= off and off + size <= e):
            raise ValueError(f"[{off}, {off + size}) is not free")
        del self._starts[i], self._ends[i]
        if off + size < e:
            self._starts.insert(i, off + size)
            self._ends.insert(i, e)
        if s < off:
            self._starts.insert(i, s)
            self._ends.insert(i, off)

    def alloc(self, size: int, policy: str = "first-fit") -> int | None:
        off = self.find(size, policy)
        if off is not None:
            self.take(off, size)
        return off

    def release(self, off: int, size: int) -> None:
        """Return [off, off+size) to the free space, merging with neighbouring holes."""
        if size == 0:
            return
        i = bisect.bisect_left(self._starts, off)
        s, e = off, off + size
        if i > 0 and self._ends[i - 1] == s:
            i -= 1
            s = self._starts[i]
            del self._starts[i], self._ends[i]
        if i < len(self._starts) and self._starts[i] == e:
            e = self._ends[i]
            del self._starts[i], self._ends[i]
        self._starts.insert(i, s)
        self._ends.insert(i, e)

    def free_bytes(self) -> int:
        return sum(e - s for s, e in zip(self._starts, self._ends))

    def holes(self) -> list[tuple[int, int]]:
        return list(zip(self._starts, self._ends))
