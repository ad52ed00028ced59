"""A flat address space [0, capacity): aligned first-fit / best-fit allocation over a sorted
list of holes, with the live blocks kept in address order too, so that a heuristic can walk
the pieces (block or hole) in address order (Coop's sliding window) and ask for the free
bytes next to a block (DTE). Used by the simulator, the plain schedule's online placement
and the replay of scalar runs; sizes are rounded up to the alignment by the callers, as
CUDA's caching allocator rounds them."""
from __future__ import annotations

import bisect


def align_up(x: int, a: int) -> int:
    return -(-x // a) * a


def align_down(x: int, a: int) -> int:
    return x - x % a


class AddressSpace:
    """Holes and live blocks of [0, capacity), both ordered by address. Sizes are multiples
    of the alignment and so is every hole's start, so first-fit and best-fit never pad."""
    addresses = True  # the simulator's memory protocol: this model has addresses

    def __init__(self, capacity: int, alignment: int, policy: str = "first-fit"):
        if policy not in ("first-fit", "best-fit"):
            raise ValueError(f"unknown allocation policy {policy!r}")
        self.capacity = capacity
        self.align = max(1, alignment)
        self.best = policy == "best-fit"
        self.hs: list[int] = [0] if capacity > 0 else []          # hole starts, sorted
        self.he: list[int] = [capacity] if capacity > 0 else []   # hole ends (exclusive)
        self.bs: list[int] = []         # live block starts, sorted (blocks of size > 0)
        self.block_at: dict[int, int] = {}  # block start -> block id
        self.used = 0                   # live bytes
        self.peak_used = 0
        self.peak_addr = 0              # highest end address ever used

    # ----- allocation -----
    def find(self, size: int, high: bool = False) -> int | None:
        """Offset where ``size`` (aligned) bytes fit; ``high`` takes the top end of the hole
        (Coop's cheap tensors), else the bottom. First-fit scans from the low end (from the
        high end when ``high``); best-fit takes the tightest hole (ties: first in scan order)."""
        if size == 0:
            return 0
        hs, he, a = self.hs, self.he, self.align
        n = len(hs)
        idx = range(n - 1, -1, -1) if high else range(n)
        if not self.best:
            for i in idx:
                if he[i] - hs[i] >= size:
                    return align_down(he[i] - size, a) if high else hs[i]
            return None
        best_i, best_slack = -1, None
        for i in idx:
            slack = he[i] - hs[i] - size
            if slack >= 0 and (best_slack is None or slack < best_slack):
                best_i, best_slack = i, slack
                if slack == 0:
                    break
        if best_i < 0:
            return None
        return align_down(he[best_i] - size, a) if high else hs[best_i]

    def take(self, off: int, size: int, block: int) -> None:
        """Mark [off, off+size) used by ``block``; it must lie inside one hole."""
        if size == 0:
            return
        hs, he = self.hs, self.he
        i = bisect.bisect_right(hs, off) - 1
        if i < 0 or off + size > he[i]:
            raise AssertionError(f"[{off}, {off + size}) is not free")
        s, e = hs[i], he[i]
        if s < off and off + size < e:
            he[i] = off
            hs.insert(i + 1, off + size)
            he.insert(i + 1, e)
        elif s < off:
            he[i] = off
        elif off + size < e:
            hs[i] = off + size
        else:
            del hs[i], he[i]
        bisect.insort(self.bs, off)
        self.block_at[off] = block
        self.used += size
        if self.used > self.peak_used:
            self.peak_used = self.used
        if off + size > self.peak_addr:
            self.peak_addr = off + size

    def alloc(self, size: int, block: int = -1) -> int | None:
        """Find and take ``size`` bytes by the space's policy; None when no hole fits."""
        off = self.find(size)
        if off is not None:
            self.take(off, size, block)
        return off

    def release(self, off: int, size: int, block: int = -1) -> None:
        """Return [off, off+size) to the free space, merging with neighbouring holes."""
        if size == 0:
            return
        hs, he = self.hs, self.he
        k = bisect.bisect_left(self.bs, off)
        del self.bs[k]
        del self.block_at[off]
        self.used -= size
        i = bisect.bisect_left(hs, off)
        e = off + size
        left = i > 0 and he[i - 1] == off
        right = i < len(hs) and hs[i] == e
        if left and right:
            he[i - 1] = he[i]
            del hs[i], he[i]
        elif left:
            he[i - 1] = e
        elif right:
            hs[i] = off
        else:
            hs.insert(i, off)
            he.insert(i, e)

    # ----- queries for heuristics -----
    def free_bytes(self) -> int:
        return self.capacity - self.used

    def holes(self) -> list[tuple[int, int]]:
        return list(zip(self.hs, self.he))

    def adjacent_free(self, off: int, size: int) -> int:
        """Free bytes immediately left and right of the block at [off, off+size) (DTE)."""
        hs, he = self.hs, self.he
        i = bisect.bisect_left(hs, off + size)
        free = 0
        if i < len(hs) and hs[i] == off + size:
            free += he[i] - hs[i]
        if i > 0 and he[i - 1] == off:
            free += he[i - 1] - hs[i - 1]
        return free

    def pieces(self):
        """(start, end, block id or -1 for a hole) over [0, capacity) in address order."""
        hs, he, bs, at = self.hs, self.he, self.bs, self.block_at
        i = j = 0
        nh, nb = len(hs), len(bs)
        while i < nh or j < nb:
            if j >= nb or (i < nh and hs[i] < bs[j]):
                yield hs[i], he[i], -1
                i += 1
            else:
                yield bs[j], -1, at[bs[j]]
                j += 1
