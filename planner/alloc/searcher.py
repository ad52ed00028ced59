"""The exact search as an engine: restarts over two candidate orders (minimalloc's dynamic
order under its static preorders; bottom-left under ours, on the instance and its time
reversal) with a doubling backtrack limit (a lucky order finds a placement early; only a run
that finishes within its limit proves infeasibility), on the compiled search when numba's cache holds it
and in Python otherwise. Both visit the same nodes in the same order, so the answer never
depends on which ran. Single-threaded and deterministic for a seed, unless a deadline cuts it.
"""
from __future__ import annotations

import itertools
import logging
import sys
import time

import numpy as np

from .jit_cache import mode
from .jit_search import JitSearch
from .search import MM_PREORDERS, PREORDERS, PySearch, SearchOutcome, meeting_pairs, preorder_rank

log = logging.getLogger(__name__)

JIT = True                  # the compiled search (``kernel.py``); False: the Python one
JIT_MAX_PAIRS = 20_000_000  # the compiled search's trail: 16 bytes per meeting pair, 8 per cover
MM_WEIGHT = 4  # a minimalloc-order run's backtrack limit, in bottom-left runs' limits (docs/alloc.md)


def engine_for(lower: np.ndarray, upper: np.ndarray):
    """The compiled search (``JitSearch``) when numba's cache holds it (``jit_cache``:
    else it is compiled in the background meanwhile) and its undo trail fits in memory
    (``JIT_MAX_PAIRS`` meeting pairs); otherwise the same search in Python."""
    if not JIT or mode() != "jit":
        return PySearch
    pairs = meeting_pairs(lower, upper)
    bounds = np.unique(np.concatenate([lower, upper]))
    covers = int((np.searchsorted(bounds, upper) - np.searchsorted(bounds, lower)).sum())
    if max(pairs, covers) > JIT_MAX_PAIRS:
        # the compiled trail is allocated whole up front, the Python one as the search deepens
        log.info("dsa search: %d meeting pairs, %d (buffer, section) covers, above %d: the Python "
                 "search (slower, same answers)", pairs, covers, JIT_MAX_PAIRS)
        return PySearch
    return JitSearch


class Searcher:
    """The exact search as a resumable object: ``advance(deadline)`` continues the round-robin
    of runs where the last call stopped (a run cut off by the deadline is redone), keeping
    the failure memos, so a portfolio can interleave it with another engine."""

    def __init__(self, lower, upper, size, align, capacity: int, seed: int = 0,
                 first_limit: int = 1000, preorders: tuple[str, ...] = PREORDERS,
                 mm_preorders: tuple[str, ...] = MM_PREORDERS):
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
        engine = engine_for(lo_, up_)
        fwd = engine(lo_, up_, sz_, al_, capacity)
        if int(fwd.total.max()) > capacity:
            self.decided = "infeasible"
            return
        states = [fwd, engine(horizon - up_, horizon - lo_, sz_, al_, capacity)]
        tiebreak = np.random.default_rng(seed).permutation(live.size)
        # One round: minimalloc's order under each of its preorders (forward only: that order
        # never looks at start times) interleaved with the bottom-left runs.
        # The two orders succeed on different instances (docs/alloc.md: measured history).
        mm = [(fwd, preorder_rank(lo_, up_, sz_, k, tiebreak), "mm", MM_WEIGHT) for k in mm_preorders]
        bl = [(st, preorder_rank(lo_, up_, sz_, k, tiebreak), "bl", 1) for k in preorders for st in states]
        self.cycle = [r for pair in itertools.zip_longest(mm, bl) for r in pair if r is not None]
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
            st, rank, order, weight = self.cycle[self.runs % len(self.cycle)]
            res = st.run(rank, self.limit * weight, deadline, order)
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
           first_limit: int = 1000, preorders: tuple[str, ...] = PREORDERS,
           mm_preorders: tuple[str, ...] = MM_PREORDERS) -> SearchOutcome:
    """Find offsets within ``capacity`` or prove there are none (before ``deadline``,
    a ``time.perf_counter()`` value). Zero-size buffers go to offset 0."""
    return Searcher(lower, upper, size, align, capacity, seed, first_limit, preorders,
                    mm_preorders).advance(deadline)
