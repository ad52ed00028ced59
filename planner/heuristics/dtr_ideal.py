"""DTR as its paper's simulator models it: memory is one number (no addresses, so no
fragmentation), exact evicted neighbourhood e* (connected components of evicted tensors,
rebuilt after recomputes split them; ``--union-find`` for the prototype's approximation),
eager frees, pinned final outputs, an input's last access stamped when the op reading it is
called (simrd's staleness clock), and a thrashing limit (recompute cost above
``params.thrash_limit`` × baseline cost ends the run). In-place ops run in place, as PyTorch
runs them; ``params.inplace`` False copies them as simrd does.

Its figures are comparable with published DTR results. The plan still needs addresses to
pass the validator: the realised sequence of allocations and releases is replayed on an
address space afterwards (first-fit, then best-fit, then offline greedy-by-size over the
realised lifetimes). When neither fits the budget, the
result is infeasible and says so, with the scalar figures in ``stats``; that gap is the
fragmentation cost Coop is about.
"""
from __future__ import annotations

from dataclasses import replace

from ..addrspace import AddressSpace
import numpy as np

from ..graph import Graph
from ..params import SolveParams
from ..result import Result
from ..sim import Infeasible, Runtime, SimConfig
from .common import dtr_score, evict_by_score, simulate


class DTRIdeal:
    name = "dtr-ideal"
    needs = frozenset()

    def make_room(self, rt, size: int, high: bool) -> int | None:
        return evict_by_score(rt, size, high, dtr_score)


def place_afterwards(rt) -> tuple[list[int] | None, str]:
    """Replay the scalar run's allocations on [0, budget); offsets per block or None."""
    log = rt.mem.log
    sizes = rt.b_size
    for policy in ("first-fit", "best-fit"):
        space = AddressSpace(rt.budget, rt.cfg.alignment)
        off = [0] * len(sizes)
        ok = True
        for ev in log:
            if ev >= 0:
                o = space.alloc(sizes[ev], policy)
                if o is None:
                    ok = False
                    break
                off[ev] = o
            else:
                b = ~ev
                space.release(off[b], sizes[b])
        if ok:
            return off, f"scalar run, addresses by {policy} replay"
    life_start = np.zeros(len(sizes), dtype=np.int64)
    life_end = np.full(len(sizes), len(log), dtype=np.int64)
    for k, ev in enumerate(log):
        if ev >= 0:
            life_start[ev] = k
        else:
            life_end[~ev] = k - 1
    got = greedy_by_size(np.asarray(sizes, dtype=np.int64), life_start, life_end, rt.budget)
    if got is not None:
        return got.tolist(), "scalar run, addresses by offline greedy-by-size"
    tried = "first-fit or best-fit replay or offline greedy-by-size"
    return None, (f"the scalar run fits {rt.budget} bytes as a number (peak {rt.mem.peak_used}) but its "
                  f"allocations do not fit [0, {rt.budget}) with {tried}")


def greedy_by_size(sizes: np.ndarray, start: np.ndarray, end: np.ndarray, capacity: int) -> np.ndarray | None:
    """Offline placement of fixed lifetimes (inclusive [start, end] in event order), largest
    first (ties: earliest start), each at the lowest offset free over its whole lifetime
    (TFLite's greedy-by-size); None when one does not fit ``capacity``. Sizes are aligned,
    so offsets are too. Vectorised: O(n) numpy work per block."""
    n = len(sizes)
    off = np.zeros(n, dtype=np.int64)
    placed = np.zeros(n, dtype=bool)
    for i in np.lexsort((start, -sizes)):
        s = sizes[i]
        if s == 0:
            continue
        idx = np.nonzero(placed & (start <= end[i]) & (end >= start[i]))[0]
        cand = 0
        if len(idx):
            o = off[idx]
            order = np.argsort(o, kind="stable")
            o = o[order]
            e = o + sizes[idx][order]
            reach = np.maximum.accumulate(e)
            lows = np.concatenate(([0], reach[:-1]))
            fits = np.nonzero(o - lows >= s)[0]
            cand = int(lows[fits[0]]) if len(fits) else int(reach[-1])
        if cand + s > capacity:
            return None
        off[i] = cand
        placed[i] = True
    return off


def _config(params: SolveParams) -> SimConfig:
    return SimConfig(alignment=params.alignment, policy=params.alloc_policy, addresses=False,
                     inplace=params.inplace, partition=False, exact_neighbours=not params.union_find,
                     thrash_limit=params.thrash_limit, inputs_touched_at_start=True, method="dtr-ideal")


def solve_dtr_ideal(g: Graph, budget: int, params: SolveParams) -> Result:
    return simulate("dtr-ideal", g, budget, params, DTRIdeal(), _config(params), place=place_afterwards)


def scalar_sequence(g: Graph, budget: int, params: SolveParams) -> list[int] | None:
    """The op sequence (compute steps, op ids) of DTR's scalar run, before any placement;
    None when the run gets stuck or thrashes. For callers that place sequences themselves
    after improving them (``formulations.exact``: on unet at 0.4 this run fits as a number
    but not as addresses, and with its needless recomputations dropped it places)."""
    cfg = _config(params)
    if cfg.alignment is None:
        cfg = replace(cfg, alignment=g.alignment)
    rt = Runtime(g, budget, DTRIdeal(), cfg)
    try:
        rt.run()
    except Infeasible:
        return None
    return [s[1] for s in rt.steps if s[0] == "c"]
