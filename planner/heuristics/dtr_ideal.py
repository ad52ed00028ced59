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

import numpy as np

from ..addrspace import AddressSpace
from ..alloc import greedy_offsets
from ..graph import Graph
from ..params import SolveParams
from ..result import Result
from ..sim import Infeasible, Runtime, SimConfig
from .eviction import ByScore, dtr_score, simulate


class DTRIdeal(ByScore):
    name = "dtr-ideal"
    needs = frozenset()
    score = staticmethod(dtr_score)


def place_afterwards(rt) -> tuple[list[int] | None, str]:
    """Replay the scalar run's allocations on [0, budget); offsets per block or None."""
    log = rt.mem.log
    sizes = rt.b_size
    for policy in ("first-fit", "best-fit"):
        space = AddressSpace(rt.budget, rt.cfg.alignment, policy)
        off = [0] * len(sizes)
        ok = True
        for ev in log:
            if ev >= 0:
                o = space.alloc(sizes[ev])
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
    n = len(sizes)
    got = greedy_offsets(life_start, life_end + 1, np.asarray(sizes, dtype=np.int64),
                         np.ones(n, dtype=np.int64), capacity=rt.budget)  # sizes are aligned already
    if got is not None:
        return got.tolist(), "scalar run, addresses by offline greedy-by-size"
    tried = "first-fit or best-fit replay or offline greedy-by-size"
    return None, (f"the scalar run fits {rt.budget} bytes as a number (peak {rt.mem.peak_used}) but its "
                  f"allocations do not fit [0, {rt.budget}) with {tried}")


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
