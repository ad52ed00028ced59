"""Exact DSA feasibility search: depth-first over canonical solutions (after minimalloc).

Why it is complete. Take the *least* feasible placement: the least weighted sum of offsets
sum(size_b^2 * offset_b), ties broken by the offsets in buffer order, lexicographically (any
positive weights would do for the rules below but the last; these make it hold). No buffer
in it can move down, so each buffer sits at the lowest aligned offset above the buffers below
it that it meets in time ("canonical"). List its buffers by (offset, lower): each one's offset is
then exactly its *minimum offset* given the buffers listed before it, and offsets never
decrease. The search enumerates such lists, so it finds that placement unless a pruning rule
below removes it, and each rule is proved not to:

- *floor*: the next buffer's offset is >= the last one's (the floor), and at equal offsets
  lifespans go left to right (buffers at one offset do not meet in time, so any order gives
  the same placement, and this one fills the lowest level from the left, bottom-left style);
- *section inference*: time is cut into sections at lifespan ends; every unplaced buffer
  covering a section lies at or above max(its minimum offset, floor), and they stack there,
  so min over them + their total size <= capacity;
- *dominance*: placing a buffer at offset o is pointless when another unplaced buffer b'
  would fit entirely below o at its minimum offset (minoff(b') + size(b') <= o): moving b'
  down there keeps the placement valid and lowers the weighted sum, so the least placement
  never takes this branch;
- *decomposition*: when no unplaced buffer crosses some time boundary, the two sides are
  independent sub-problems (each keeps the floor); both must succeed, and the failure of
  one fails the node without trying other choices in the other (minimalloc's partitions,
  applied at every node, so they also appear once the long buffers are placed);
- *stranded*: an unplaced buffer b below the floor (or at it, left of ``last``) is not at
  its place in the least placement (that would list it earlier), so some unplaced buffer
  below it raises it there; take the first such z in the listing, the first to meet b: b's
  minimum offset is unchanged until z is placed, so by dominance z goes below minoff(b) +
  size(b), and at or above the floor and minoff(z). When no unplaced z meeting b has
  max(floor, minoff(z)) < minoff(b) + size(b), the node fails. Without it the search walked
  into such states on the schedules exact places (the hole-first order at one offset leaves
  a buffer left of ``last``): unet at 0.4, the optimal guided schedule's 212 blocks of 64
  units and more, was not placed in 60 s (10.8M nodes), now in 2.8 s (472k nodes);
  ``bench/bench_dsa.py --families holes,tiling,trace --no-cpsat --engine search``: 12/18 within
  60 s (was 11/18: trace 449 seed 0 now in 0.52 s);
- a lone unplaced buffer (nothing left meets it, minimalloc's "hatless" case) goes straight
  to its minimum offset; below the floor it cannot (the least placement would have it
  there), so the branch fails;
- *stacked twins*: twins are buffers with the same lifespan and alignment (sizes multiples
  of it). When q would sit directly on its twin p (offset(q) = offset(p) + size(p)), the two
  can swap: q at offset(p), p on top of it cover the same rectangle, and stay aligned. The
  swap changes the weighted sum by size(p) * size(q) * (size(p) - size(q)), so in the least
  placement the lower one of two stacked twins is the larger, or of equal size with the
  smaller index (the swap would lower the smaller index's offset). The search skips q when
  it breaks that, i.e. when the last placed twin of q (the highest: twins meet in time, so
  they are placed bottom-up) ends exactly at q's minimum offset and ranks after q by
  (size descending, index). The failure memo keys carry these flags, the only state outside a
  sub-problem that the rule reads.

Every rule above holds for the least placement, so the search follows its listing to the end.
The twin rule matters where stacks of equal lifespans are common (guillotine tilings cut them
horizontally; traces repeat layers): without it every order of such a stack is tried.
``bench/bench_dsa.py --families holes,tiling,trace --engine search --no-cpsat`` (60 s, 2 seeds,
150-450 buffers): 11/18 solved (was 10/18; tiling 300 seed 1 in 12.3 s, was a timeout), holes
150 seed 0 in 7.1k nodes (was 20.7k), 300 seed 0 in 2.3k (was 9.3k).

Candidates at a node are tried by minimum offset, then those that leave no hole under them
(every section they cover is already filled up to their offset) before those that do, then
leftmost start (bottom-left: leaving the leftmost gap of a level empty is the last resort),
then a static preorder. The hole test is an ordering only (every candidate is still tried);
on the ``holes`` family of ``bench/bench_dsa.py`` it is what lets the search finish where
holes accumulate past the slack of nearly tight sections (150 buffers, seed 1: 2.7k nodes,
was > 300k without an answer). Runs restart round-robin over preorders (lifespan / size /
area first, as minimalloc's "TAW,WAT,AWT") and over the instance and its time reversal
(right-to-left filling), with a backtrack limit that doubles after each round, so that a
lucky order finds a placement early; only a run that finishes within its limit proves
infeasibility. Everything is single-threaded and deterministic for a seed (apart from where a
time limit cuts it off).

The search runs compiled (``_JitSearch``: the node loop in ``planner.alloc.kernel``, numba)
once numba's cache holds it (``planner.alloc.jit_cache``), and in Python (``_Search``, the
reference) before that; both visit the same nodes in the same order, so the answer never
depends on which ran. Measured on holes 300 seed 1 (315 buffers): 8.3k nodes/s in Python,
175k compiled (21x); ``bench/bench_dsa_kernel.py`` (12 tight instances, 5,000 backtracks
each, the same nodes in both): median 21-26x, 7-39x. It does not change which instances are
solved: ``bench_dsa --engine search`` 11/18 in 60 s as before (tiling 300 seed 1 in 0.8 s,
was 12.3 s); the holes instances of 315, 448 and 467 buffers still time out (2.35M nodes in
300 s of the Python search, about 10M in 60 s compiled), as do the 250-500-buffer gap-eviction
schedules of layered graphs that CP-SAT places (``schedule.PLACE_CPSAT_LEAD``).
"""
from __future__ import annotations

import hashlib
import logging
import sys
import time
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

_BIG = np.int64(1) << np.int64(61)
PREORDERS = ("TAW", "WAT", "AWT")  # T: lifespan, A: area, W: size (width), largest first
TWINS = True  # the stacked-twins rule (see the module docstring); False only for ablations
STRANDED = True  # the stranded-buffer rule; False only for ablations (of the Python search)
PAIR_LIMIT = 4_000_000  # (buffer, section) incidences kept for section inference
NBR_LIMIT = 3000        # neighbour lists precomputed up to this many buffers
JIT = True              # the compiled search (planner.alloc.kernel); False: the Python one
JIT_MAX_PAIRS = 20_000_000  # the compiled search's trail: 16 bytes per meeting pair, 8 per cover


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
    order = np.lexsort([tiebreak] + [cols[c] for c in reversed(key)])
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


class _Search:
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
        # Feasibility does not depend on the preorder, so the memo survives restarts.
        self.failed: set[bytes] = set()
        self.nodes = 0
        self.backtracks = 0
        self.limit = 0
        self.deadline = float("inf")
        self.rank = np.arange(n)

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
        # At the floor only buffers right of the last one placed there can still go; the rest
        # (and those straddling the floor) lie at least g higher.
        at_floor = (mo == floor) & (self.a > last)
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
        >= floor, and at offset == floor only right of section ``last`` (where the last buffer
        placed at the floor starts). ``placed``: the buffer just placed (U was connected before
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
            if o < floor or (o == floor and self.a[b] <= last) or o + self.size[b] > self.C:
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
            + last.to_bytes(8, "little", signed=True)
        if self.twins:
            state += np.packbits(self._twin_forbidden(U)).tobytes()
        return hashlib.blake2b(state, digest_size=20).digest()

    def _expand(self, U: np.ndarray, lo: int, hi: int, floor: int, last: int, mark: int) -> bool:
        """Branch over the candidates for the next placement (one time-connected group)."""
        if not self.sections_ok(lo, hi, floor, last):
            return False
        mo = self.minoff[U]
        blocked = (mo < floor) | ((mo == floor) & (self.a[U] <= last))
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
        ok = (mo >= floor) & (mo <= omax) & (mo < dom) & ((mo > floor) | (self.a[U] > last))
        if self.twins:
            ok &= ~self._twin_forbidden(U)
        cand = U[ok]
        if cand.size == 0:
            return False
        cmo = mo[ok]
        if cand.size > 1:
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
            if self.node(U[U != b], lo, hi, o, int(self.a[b]), b):
                return True
            self.undo_to(mark)
            self.backtracks += 1
            if self.backtracks > self.limit:
                raise _Abort
        return False

    def run(self, rank: np.ndarray, limit: float, deadline: float) -> bool | None:
        """One run from scratch; True/False when it finished, None when cut off."""
        self.undo_to(0)
        self.rank, self.limit, self.deadline = rank, limit, deadline
        self.backtracks = 0
        try:
            return self.node(np.arange(self.n), 0, self.S, 0, -1, -2)
        except _Abort:
            self.undo_to(0)
            return None


def meeting_pairs(lower: np.ndarray, upper: np.ndarray) -> int:
    """Ordered pairs (b, j), b != j, of buffers that meet in time (lower < other's upper both
    ways): j meets b unless it ends by b's start (then it also starts before b's end)."""
    sl, su = np.sort(lower), np.sort(upper)
    return int((np.searchsorted(sl, upper, "left") - np.searchsorted(su, lower, "right") - 1).sum())


def _engine(lower: np.ndarray, upper: np.ndarray):
    """The compiled search (``_JitSearch``) when numba's cache holds it (``planner.alloc.jit_cache``:
    else it is compiled in the background meanwhile) and its undo trail fits in memory
    (``JIT_MAX_PAIRS`` meeting pairs); otherwise the same search in Python."""
    from .jit_cache import mode

    if not JIT or mode() != "jit":
        return _Search
    pairs = meeting_pairs(lower, upper)
    bounds = np.unique(np.concatenate([lower, upper]))
    covers = int((np.searchsorted(bounds, upper) - np.searchsorted(bounds, lower)).sum())
    if max(pairs, covers) > JIT_MAX_PAIRS:
        # the compiled trail is allocated whole up front, the Python one as the search deepens
        log.info("dsa search: %d meeting pairs, %d (buffer, section) covers, above %d: the Python "
                 "search (slower, same answers)", pairs, covers, JIT_MAX_PAIRS)
        return _Search
    return _JitSearch


class Searcher:
    """The exact search as a resumable object: ``advance(deadline)`` continues the round-robin
    of runs where the last call stopped (a run cut off by the deadline is redone), keeping
    the failure memos, so a portfolio can interleave it with another engine."""

    def __init__(self, lower, upper, size, align, capacity: int, seed: int = 0,
                 first_limit: int = 1000, preorders: tuple[str, ...] = PREORDERS):
        lower, upper = np.asarray(lower, dtype=np.int64), np.asarray(upper, dtype=np.int64)
        size, align = np.asarray(size, dtype=np.int64), np.asarray(align, dtype=np.int64)
        self.n = len(size)
        self.live = live = np.flatnonzero(size > 0)
        self.decided: str | None = None   # "found" | "infeasible" once known
        self.offsets: np.ndarray | None = None
        self.nodes = self.backtracks = self.runs = 0
        self.seconds = 0.0
        if live.size == 0:
            self.decided, self.offsets = "found", np.zeros(self.n, dtype=np.int64)
            return
        if int(size.max()) > capacity:
            self.decided = "infeasible"
            return
        lo_, up_, sz_, al_ = lower[live], upper[live], size[live], align[live]
        horizon = int(up_.max())
        # Two searches: forward in time and on the time-reversed instance (same offsets solve
        # both). Bottom-left filling goes left-to-right in one and right-to-left in the other,
        # and run lengths are heavy-tailed, so alternating between them pays.
        engine = _engine(lo_, up_)
        fwd = engine(lo_, up_, sz_, al_, capacity)
        if int(fwd.total.max()) > capacity:
            self.decided = "infeasible"
            return
        states = [fwd, engine(horizon - up_, horizon - lo_, sz_, al_, capacity)]
        tiebreak = np.random.default_rng(seed).permutation(live.size)
        ranks = [preorder_rank(lo_, up_, sz_, k, tiebreak) for k in preorders]
        self.cycle = [(st, rank) for rank in ranks for st in states]
        self.limit = float(first_limit)

    def advance(self, deadline: float) -> SearchOutcome:
        t0 = time.perf_counter()
        if self.decided is None:
            old_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(old_limit, 4 * self.live.size + 1000))
            try:
                self._advance(deadline)
            finally:
                sys.setrecursionlimit(old_limit)
        self.seconds += time.perf_counter() - t0
        status = self.decided or "timeout"
        return SearchOutcome(status, self.offsets if status == "found" else None, self.nodes,
                             self.backtracks, self.runs, self.seconds)

    def _advance(self, deadline: float) -> None:
        while True:
            st, rank = self.cycle[self.runs % len(self.cycle)]
            res = st.run(rank, self.limit, deadline)
            self.nodes += st.nodes
            self.backtracks += st.backtracks
            st.nodes = 0
            if res is None and time.perf_counter() > deadline:
                return  # cut off by time: this run is redone on the next call
            self.runs += 1
            if res is not None:
                break
            if self.runs % len(self.cycle) == 0:
                self.limit *= 2
        log.debug("dsa search: %s after %d nodes, %d backtracks, %d runs", res, self.nodes,
                  self.backtracks, self.runs)
        if res:
            self.offsets = np.zeros(self.n, dtype=np.int64)
            self.offsets[self.live] = st.offset
            self.decided = "found"
        else:
            self.decided = "infeasible"


def search(lower: np.ndarray, upper: np.ndarray, size: np.ndarray, align: np.ndarray,
           capacity: int, deadline: float = float("inf"), seed: int = 0,
           first_limit: int = 1000, preorders: tuple[str, ...] = PREORDERS) -> SearchOutcome:
    """Find offsets within ``capacity`` or prove there are none (before ``deadline``,
    a ``time.perf_counter()`` value). Zero-size buffers go to offset 0."""
    return Searcher(lower, upper, size, align, capacity, seed, first_limit, preorders).advance(deadline)


class _JitSearch(_Search):
    """``_Search`` with its node loop compiled (``planner.alloc.kernel``): the same
    precomputation, nodes, order and answers; the kernel works on this object's arrays."""

    def __init__(self, lower, upper, size, align, capacity: int):
        super().__init__(lower, upper, size, align, capacity)
        from . import kernel as K

        n = self.n
        i64 = np.int64
        if self.nbrs is not None:
            nbp = np.zeros(n + 1, dtype=i64)
            nbp[1:] = np.cumsum([len(x) for x in self.nbrs])
            nbi = np.concatenate(self.nbrs).astype(i64) if n else np.zeros(0, dtype=i64)
            moves = len(nbi)
        else:  # neighbours found on the fly; the trail still holds at most every pair once
            nbp = nbi = np.zeros(0, dtype=i64)
            moves = meeting_pairs(self.a, self.e)
        empty = np.zeros(1, dtype=i64)
        arrays = {
            K.SIZE: self.size, K.AL: self.al, K.A: self.a, K.E: self.e, K.NBP: nbp, K.NBI: nbi,
            K.MINOFF: self.minoff, K.UNPL: self._unpl, K.OFFSET: self.offset, K.TOTAL: self.total,
            K.CROSS: self.cross, K.SKY: self.sky,
            K.PBUF: self.pair_buf if self.strong else empty, K.SPTR: self.sec_ptr if self.strong else empty,
            K.CLS: self.cls, K.CLAST: self.cls_last, K.TRANK: self.twin_rank, K.RANK: np.arange(n, dtype=i64),
            K.TRB: np.zeros(n, dtype=i64), K.TRPREV: np.zeros(n, dtype=i64), K.TRMO: np.zeros(n + 1, dtype=i64),
            K.MOI: np.zeros(max(1, moves), dtype=i64), K.MOO: np.zeros(max(1, moves), dtype=i64),
            K.TRSKY: np.zeros(n + 1, dtype=i64), K.SKYSTK: np.zeros(max(1, int((self.e - self.a).sum())), dtype=i64),
        }
        for arr in arrays.values():
            assert arr.dtype == i64 and arr.flags.c_contiguous
        self.state = tuple(arrays[i] for i in range(len(arrays)))
        self.scalars = np.zeros(K.N_SCALARS, dtype=i64)
        sc = self.scalars
        sc[K.I_N], sc[K.I_C], sc[K.I_G] = n, self.C, self.g
        sc[K.I_ALIGNED], sc[K.I_TWINS], sc[K.I_STRONG] = int(self.aligned), int(self.twins), int(self.strong)
        sc[K.I_MEMO] = K.MEMO_MAX
        self.memo = K.new_memo()
        self._k = K

    @property
    def unplaced(self) -> np.ndarray:
        return self._unpl.astype(bool)

    @unplaced.setter
    def unplaced(self, value) -> None:
        self._unpl = np.asarray(value, dtype=np.int64).copy()

    def place(self, b: int, o: int) -> None:
        self._k.place(self.state, self.scalars, b, o)

    def undo_to(self, mark: int) -> None:
        self._k.undo_to(self.state, self.scalars, mark)

    def run(self, rank: np.ndarray, limit: float, deadline: float) -> bool | None:
        K = self._k
        self.state[K.RANK][:] = rank
        self.scalars[K.I_NODES] = self.nodes
        r = K.run(self.state, self.scalars, self.memo, int(min(limit, 2.0 ** 62)), float(deadline))
        self.nodes = int(self.scalars[K.I_NODES])
        self.backtracks = int(self.scalars[K.I_BT])
        return None if r == -1 else bool(r)
