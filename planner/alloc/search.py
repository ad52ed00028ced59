"""The exact DSA feasibility search in Python: depth-first over canonical placements (after
minimalloc). This is the reference; ``jit_search.JitSearch`` runs the same nodes compiled, and
``searcher.Searcher`` drives either in restarts.

Complete: take the *least* feasible placement (least sum(size_b^2 * offset_b), ties by the
offsets in buffer order). Each of its buffers sits at the lowest aligned offset above the
buffers below it that it meets in time, so listed by offset (any fixed order among buffers at
one offset: they never meet in time) each buffer's offset is its minimum offset given those
before it. The search enumerates such lists and each pruning rule keeps that one:
- *floor*: offsets never decrease; at one offset buffers follow the tie order;
- *section inference*: the unplaced buffers covering a section stack at or above
  max(minimum offset, floor), so they must fit under the capacity together;
- *dominance*: offset o is pointless when another unplaced buffer would fit wholly below o;
- *decomposition*: when no unplaced buffer crosses a time boundary, the two sides are
  independent; the failure of one fails the node;
- *stranded*: an unplaced buffer below the floor must be raised there by an unplaced buffer
  that meets it and can still go below its top; when none can, the node fails;
- *hatless*: a buffer nothing unplaced meets goes straight to its minimum offset;
- *stacked twins*: two buffers of equal lifespan and alignment stacked directly can swap, so
  in the least placement the lower is the larger (ties: smaller index).
A run tries candidates in one of two orders: *bottom-left* (minimum offset, then no hole
under it, then leftmost start, then a static preorder; ties at one offset: lifespans left to
right) or *minimalloc's* (minimum offset, then the static preorder, which is also the tie
order). Failed sub-problems are memoised by a digest of what they read. The proofs and the
measurements behind each rule: ``docs/alloc.md``.
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

_BIG = np.int64(1) << np.int64(61)
# Static preorders, largest first: T lifespan, A area, W size (width), S the most bytes alive in
# a section the buffer covers (minimalloc's "total"). minimalloc's defaults WAT, TAW, TWA (its W
# is the lifespan, its T our S) are TAS, SAT, STA here.
PREORDERS = ("TAW", "WAT", "AWT")   # for the bottom-left order
MM_PREORDERS = ("STA", "TAS", "SAT")  # for minimalloc's dynamic order
ORDERS = ("bl", "mm")  # candidate orders of a run (``PySearch.run``)
TWINS = True  # the stacked-twins rule (the module docstring); False only for ablations
STRANDED = True  # the stranded-buffer rule; False only for ablations (of the Python search)
PAIR_LIMIT = 4_000_000  # (buffer, section) incidences kept for section inference
NBR_LIMIT = 3000        # neighbour lists precomputed up to this many buffers


class _Abort(Exception):
    """The backtrack limit or the deadline was reached: this run proves nothing."""


@dataclass(frozen=True)
class SearchOutcome:
    status: str                    # "found" | "infeasible" (proved) | "timeout" (deadline first)
    offsets: np.ndarray | None     # offset per buffer (input order) when found
    nodes: int                     # search nodes over all runs
    backtracks: int                # failed candidate placements over all runs
    runs: int                      # restarts used (1 = the first run finished)
    seconds: float                 # wall time


def _align_up(x, a):
    return -(-x // a) * a


def preorder_rank(lower: np.ndarray, upper: np.ndarray, size: np.ndarray, key: str,
                  tiebreak: np.ndarray) -> np.ndarray:
    """rank[b]: position of b when sorted by the criteria in ``key`` (largest first)."""
    length = upper - lower
    cols = {"T": -length, "A": -length * size, "W": -size}
    if "S" in key:
        bounds = np.unique(np.concatenate([lower, upper]))
        a, e = np.searchsorted(bounds, lower), np.searchsorted(bounds, upper)
        d = np.zeros(len(bounds) + 1, dtype=np.int64)
        np.add.at(d, a, size)
        np.add.at(d, e, -size)
        total = np.cumsum(d)[:len(bounds) - 1]
        cols["S"] = -np.array([total[x:y].max() for x, y in zip(a.tolist(), e.tolist())], dtype=np.int64)
    order = np.lexsort([tiebreak] + [cols[c] for c in reversed(key)])
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


class PySearch:
    """State of one feasibility search at a fixed capacity (all arrays, undo by a trail)."""

    def __init__(self, lower, upper, size, align, capacity: int):
        self.n = n = len(size)
        self.C = int(capacity)
        self.size = size.astype(np.int64)
        self.al = align.astype(np.int64)
        # Every canonical offset is a sum of sizes rounded up to alignments, hence a multiple of
        # g: a buffer that cannot sit at the floor sits at least g above it.
        self.g = int(np.gcd.reduce(np.concatenate([self.size, self.al])))
        self.aligned = bool((self.al == 1).all())  # fast path: no rounding needed
        bounds = np.unique(np.concatenate([lower, upper]))
        self.a = np.searchsorted(bounds, lower).astype(np.int64)   # first section covered
        self.e = np.searchsorted(bounds, upper).astype(np.int64)   # one past the last
        self.S = S = len(bounds) - 1
        a, e = self.a, self.e
        # Buffers meeting b in time (b excluded): whose minimum offsets b's placement raises.
        # Precomputed up to NBR_LIMIT buffers (memory grows with n^2), found on the fly beyond.
        self.nbrs = ([np.flatnonzero((a < e[b]) & (e > a[b]) & (np.arange(n) != b)) for b in range(n)]
                     if n <= NBR_LIMIT else None)
        # (section, buffer) incidences sorted by section, plus one sentinel per section (buffer
        # index n, value "infinitely high") so every section's segment is non-empty.
        lens = e - a
        # Section inference needs the incidences; on huge instances (long-lived buffers over
        # thousands of sections) they would not fit in memory, and the search keeps only the
        # weaker floor + largest-total bound (still exact, less pruning).
        self.strong = int(lens.sum()) <= PAIR_LIMIT
        if self.strong:
            owner = np.repeat(np.arange(n), lens)
            start = np.repeat(a - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
            sect = np.arange(int(lens.sum())) + start
            owner = np.concatenate([owner, np.full(S, n)])
            sect = np.concatenate([sect, np.arange(S)])
            order = np.argsort(sect, kind="stable")
            self.pair_buf = owner[order]
            self.sec_ptr = np.searchsorted(sect[order], np.arange(S + 1))
        # Twins: buffers with the same lifespan and alignment (sizes multiples of it). Two twins
        # stacked directly can swap (the pair covers the same rectangle either way), so the
        # least placement has them ordered by (size, index) from the bottom up.
        keys = np.stack([lower, upper, self.al, np.where(self.size % self.al == 0, 0, np.arange(n) + 1)], axis=1)
        _, cls, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        cls = cls.reshape(-1).astype(np.int64)
        self.twins = TWINS and bool((counts > 1).any())
        self.cls = cls
        # Rank of (size, index): the bottom-up order of stacked twins in the least placement.
        self.twin_rank = np.empty(n, dtype=np.int64)
        self.twin_rank[np.lexsort((np.arange(n), -self.size))] = np.arange(n)
        self.cls_last = np.full(int(cls.max()) + 1 if n else 1, -1, dtype=np.int64)  # last placed twin
        # Mutable state.
        self.minoff = np.zeros(n, dtype=np.int64)        # lowest aligned offset above placed neighbours
        self.unplaced = np.ones(n, dtype=bool)
        self.offset = np.full(n, -1, dtype=np.int64)
        d = np.zeros(S + 1, dtype=np.int64)
        np.add.at(d, a, self.size)
        np.add.at(d, e, -self.size)
        self.total = np.cumsum(d)[:S]                     # unplaced bytes covering each section
        self.cross = np.zeros(S + 1, dtype=np.int64)      # unplaced buffers spanning boundary j (j-1 | j)
        d = np.zeros(S + 2, dtype=np.int64)
        np.add.at(d, a + 1, 1)
        np.add.at(d, e, -1)
        self.cross = np.cumsum(d)[: S + 1]
        self.eff = np.full(n + 1, _BIG, dtype=np.int64)   # scratch: effective lower offsets (+ sentinel)
        self.sky = np.zeros(S, dtype=np.int64)           # highest top of a placed buffer per section
        self.trail: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
        # Digests of sub-problems proved infeasible. A sub-problem (a time-connected set of
        # unplaced buffers) is fully determined by its ids, their minimum offsets, the floor and
        # the last position at the floor: nothing else it reads depends on the other buffers.
        # Under the bottom-left order it does not depend on the preorder either, so the memo
        # survives restarts; under minimalloc's the tie rule at the floor follows the preorder,
        # so its keys carry a digest of it (``salt``).
        self.failed: set[bytes] = set()
        self.nodes = 0
        self.backtracks = 0
        self.limit = 0
        self.deadline = float("inf")
        self.rank = np.arange(n)
        # The tie rule at the floor: buffers at one offset never meet in time, so any fixed
        # order among them lists the same placement. ``fkey`` is that order: the first section
        # (bottom-left order, lifespans left to right) or the preorder rank (minimalloc's).
        self.fkey = self.a.copy()
        self.order = "bl"
        self.salt = 0

    # ----- placement and undo -----
    def place(self, b: int, o: int) -> None:
        s = int(self.size[b])
        top = o + s
        a, e = self.a[b], self.e[b]
        nb = self.nbrs[b] if self.nbrs is not None else np.flatnonzero((self.a < e) & (self.e > a))
        old = self.minoff[nb]
        new = top if self.aligned else _align_up(top, self.al[nb])
        self.minoff[nb] = np.maximum(old, new)
        self.total[a:e] -= s
        self.cross[a + 1:e] -= 1
        self.unplaced[b] = False
        self.offset[b] = o
        sky = self.sky[a:e].copy()
        np.maximum(self.sky[a:e], top, out=self.sky[a:e])
        prev = int(self.cls_last[self.cls[b]])
        self.cls_last[self.cls[b]] = b
        self.trail.append((b, nb, old, sky, prev))

    def undo_to(self, mark: int) -> None:
        trail = self.trail
        while len(trail) > mark:
            b, nb, old, sky, prev = trail.pop()
            self.cls_last[self.cls[b]] = prev
            self.minoff[nb] = old
            a, e = self.a[b], self.e[b]
            self.sky[a:e] = sky
            self.total[a:e] += self.size[b]
            self.cross[a + 1:e] += 1
            self.unplaced[b] = True
            self.offset[b] = -1

    # ----- checks -----
    def sections_ok(self, lo: int, hi: int, floor: int, last: int) -> bool:
        """Section inference over [lo, hi): min effective offset + unplaced total <= C."""
        if not self.strong:
            return True
        eff = self.eff
        mo = self.minoff
        # At the floor only buffers after the last one placed there (in the tie order) can
        # still go; the rest (and those straddling the floor) lie at least g higher.
        at_floor = (mo == floor) & (self.fkey > last)
        eff[: self.n] = np.where(mo > floor, mo, np.where(at_floor, floor, floor + self.g))
        eff[: self.n][~self.unplaced] = _BIG
        p0, p1 = self.sec_ptr[lo], self.sec_ptr[hi]
        level = np.minimum.reduceat(eff[self.pair_buf[p0:p1]], self.sec_ptr[lo:hi] - p0)
        tot = self.total[lo:hi]
        return not bool(((level + tot > self.C) & (tot > 0)).any())

    def split(self, U: np.ndarray):
        """Independent groups of U (no unplaced buffer crosses the boundaries between them),
        as [(ids, lo, hi)], or None when U is one group."""
        au, eu = self.a[U], self.e[U]
        ulo, uhi = int(au.min()), int(eu.max())
        zeros = np.flatnonzero(self.cross[ulo + 1:uhi] == 0)
        if zeros.size == 0:
            return None, ulo, uhi
        cuts = zeros + (ulo + 1)
        lab = np.searchsorted(cuts, au, side="right")
        groups = []
        for g in np.unique(lab).tolist():
            ids = U[lab == g]
            groups.append((ids, int(self.a[ids].min()), int(self.e[ids].max())))
        if len(groups) == 1:
            return None, ulo, uhi
        groups.sort(key=lambda x: len(x[0]))  # cheap groups first: a failure there is found fast
        return groups, ulo, uhi

    # ----- the search -----
    def node(self, U: np.ndarray, lo: int, hi: int, floor: int, last: int, placed: int = -1) -> bool:
        """Complete the placement of U (one time-connected region [lo, hi)) with every offset
        >= floor, and at offset == floor only after ``last`` in the tie order (``fkey``: by
        default the section where the last buffer placed at the floor starts). ``placed``: the buffer just placed (U was connected before
        it, so only its span can hold a new cut), -1 for a group just split off, -2 to look
        for cuts everywhere. On failure the state is as on entry."""
        if U.size == 0:
            return True
        self.nodes += 1
        if self.nodes & 63 == 0 and time.perf_counter() > self.deadline:
            raise _Abort
        if U.size == 1:  # nothing left meets it: straight to its minimum offset
            b = int(U[0])
            o = int(self.minoff[b])
            if o < floor or (o == floor and self.fkey[b] <= last) or o + self.size[b] > self.C:
                return False
            self.place(b, o)
            return True
        if placed == -2 or (placed >= 0 and (self.cross[self.a[placed] + 1:self.e[placed]] == 0).any()):
            groups, lo, hi = self.split(U)
        else:
            groups = None
        mark = len(self.trail)
        if groups is not None:
            for ids, glo, ghi in groups:
                if not self.node(ids, glo, ghi, floor, last):
                    self.undo_to(mark)
                    return False
            return True
        key = self._key(U, floor, last)
        if key in self.failed:
            return False
        if self._expand(U, lo, hi, floor, last, mark):
            return True
        self.failed.add(key)
        return False

    def _stranded(self, B: np.ndarray, U: np.ndarray, floor: int) -> bool:
        """Whether some buffer of B (unplaced, below the floor, or at it left of the last one
        placed there) can no longer be raised to its place: see *stranded* in the module
        docstring."""
        for b in B.tolist():
            top = self.minoff[b] + self.size[b]
            if self.nbrs is not None:
                nb = self.nbrs[b]
                nb = nb[self.unplaced[nb]]
            else:
                nb = U[(self.a[U] < self.e[b]) & (self.e[U] > self.a[b]) & (U != b)]
            if not (np.maximum(floor, self.minoff[nb]) < top).any():
                return True
        return False

    def _twin_forbidden(self, X: np.ndarray) -> np.ndarray:
        """For buffers X (unplaced): placing x at its minimum offset would put it directly on
        its last placed twin p with rank(p) > rank(x), which the least placement never does."""
        p = self.cls_last[self.cls[X]]
        q = np.maximum(p, 0)
        return (p >= 0) & (self.offset[q] + self.size[q] == self.minoff[X]) \
            & (self.twin_rank[q] > self.twin_rank[X])

    def _key(self, U: np.ndarray, floor: int, last: int) -> bytes:
        state = U.tobytes() + self.minoff[U].tobytes() + floor.to_bytes(8, "little", signed=True) \
            + last.to_bytes(8, "little", signed=True) + self.salt.to_bytes(8, "little", signed=True)
        if self.twins:
            state += np.packbits(self._twin_forbidden(U)).tobytes()
        return hashlib.blake2b(state, digest_size=20).digest()

    def _expand(self, U: np.ndarray, lo: int, hi: int, floor: int, last: int, mark: int) -> bool:
        """Branch over the candidates for the next placement (one time-connected group)."""
        if not self.sections_ok(lo, hi, floor, last):
            return False
        mo = self.minoff[U]
        blocked = (mo < floor) | ((mo == floor) & (self.fkey[U] <= last))
        if STRANDED and blocked.any() and self._stranded(U[blocked], U, floor):
            return False
        key = mo + self.size[U]
        i1 = int(np.argmin(key))
        k1 = key[i1]
        key[i1] = _BIG
        k2 = key.min()
        dom = np.full(U.size, k1)
        dom[i1] = k2
        omax = self.C - int(self.total[lo:hi].max())
        ok = (mo >= floor) & (mo <= omax) & (mo < dom) & ((mo > floor) | (self.fkey[U] > last))
        if self.twins:
            ok &= ~self._twin_forbidden(U)
        cand = U[ok]
        if cand.size == 0:
            return False
        cmo = mo[ok]
        if cand.size > 1 and self.order == "mm":
            # minimalloc's dynamic order: least minimum offset, then the static preorder
            order = np.lexsort((self.rank[cand], cmo)).tolist()
        elif cand.size > 1:
            # A candidate that leaves no hole under it (every section it covers is filled up to
            # its offset) goes before one that does, at equal offsets: holes are what slack
            # instances waste and tight sections cannot afford.
            hole = np.fromiter((self.sky[x:y].min() for x, y in zip(self.a[cand].tolist(),
                                                                    self.e[cand].tolist())),
                               dtype=np.int64, count=cand.size) < cmo
            order = np.lexsort((self.rank[cand], self.a[cand], hole, cmo)).tolist()
        else:
            order = [0]
        for j in order:
            b = int(cand[j])
            o = int(cmo[j])
            self.place(b, o)
            if self.node(U[U != b], lo, hi, o, int(self.fkey[b]), b):
                return True
            self.undo_to(mark)
            self.backtracks += 1
            if self.backtracks > self.limit:
                raise _Abort
        return False

    def run(self, rank: np.ndarray, limit: float, deadline: float, order: str = "bl") -> bool | None:
        """One run from scratch; True/False when it finished, None when cut off. ``order``:
        "bl" (bottom-left: least minimum offset, no hole under it, leftmost start, then
        ``rank``; lifespans left to right at one offset) or "mm" (minimalloc's: least minimum
        offset, then ``rank``, which also orders the buffers at one offset)."""
        self.undo_to(0)
        self._set_order(rank, order)
        self.limit, self.deadline = limit, deadline
        self.backtracks = 0
        try:
            return self.node(np.arange(self.n), 0, self.S, 0, -1, -2)
        except _Abort:
            self.undo_to(0)
            return None


    def _set_order(self, rank: np.ndarray, order: str) -> None:
        if order not in ORDERS:
            raise ValueError(f"unknown search order {order!r}")
        self.rank, self.order = np.asarray(rank, dtype=np.int64), order
        self.fkey[:] = self.rank if order == "mm" else self.a
        # 0 for "bl" (its memo holds across preorders), a 62-bit digest of the rank for "mm"
        self.salt = 0 if order == "bl" else 1 + int.from_bytes(
            hashlib.blake2b(self.rank.tobytes(), digest_size=8).digest(), "little") % (1 << 62)


def meeting_pairs(lower: np.ndarray, upper: np.ndarray) -> int:
    """Ordered pairs (b, j), b != j, of buffers that meet in time (lower < other's upper both
    ways): j meets b unless it ends by b's start (then it also starts before b's end)."""
    sl, su = np.sort(lower), np.sort(upper)
    return int((np.searchsorted(sl, upper, "left") - np.searchsorted(su, lower, "right") - 1).sum())
