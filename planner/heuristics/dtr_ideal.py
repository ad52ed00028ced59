"""DTR as its paper's simulator models it: memory is one number (no addresses, so no
fragmentation), exact evicted neighbourhood e* (connected components of evicted tensors,
rebuilt after recomputes split them; ``--union-find`` for the prototype's approximation),
eager frees, pinned final outputs, and a thrashing limit (recompute cost above
``params.thrash_limit`` × baseline cost ends the run).

Its figures are comparable with published DTR results. The plan still needs addresses to
pass the validator: the realised sequence of allocations and releases is replayed on an
address space afterwards (first-fit, then best-fit). When neither fits the budget, the
result is infeasible and says so, with the scalar figures in ``stats``; that gap is the
fragmentation cost Coop is about.
"""
from __future__ import annotations

from ..addrspace import AddressSpace
from ..baseline import greedy_by_size
from ..graph import Graph
from ..params import SolveParams
from ..result import Result
from ..sim import SimConfig
from .common import dtr_score, evict_by_score, simulate


GREEDY_MAX_BLOCKS = 2000  # offline placement is O(n²) in pure Python


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
    tried = "first-fit or best-fit replay"
    if len(sizes) <= GREEDY_MAX_BLOCKS:
        # offline largest-first over the realised lifetimes (quadratic: small runs only)
        life: dict[int, list[int]] = {}
        for k, ev in enumerate(log):
            if ev >= 0:
                life[ev] = [k, len(log)]
            else:
                life[~ev][1] = k - 1
        got = greedy_by_size({b: sizes[b] for b in life}, {b: (s, e) for b, (s, e) in life.items()},
                             rt.budget, rt.cfg.alignment)
        if got is not None:
            off = [0] * len(sizes)
            for b, o in got.items():
                off[b] = o
            return off, "scalar run, addresses by offline greedy-by-size"
        tried = "first-fit or best-fit replay or offline greedy-by-size"
    return None, (f"the scalar run fits {rt.budget} bytes as a number (peak {rt.mem.peak_used}) but its "
                  f"allocations do not fit [0, {rt.budget}) with {tried}")


def solve_dtr_ideal(g: Graph, budget: int, params: SolveParams) -> Result:
    cfg = SimConfig(alignment=params.alignment, policy=params.alloc_policy, addresses=False,
                    inplace=False, partition=False, exact_neighbours=not params.union_find,
                    thrash_limit=params.thrash_limit, method="dtr-ideal")
    return simulate("dtr-ideal", g, budget, params, DTRIdeal(), cfg, place=place_afterwards)
