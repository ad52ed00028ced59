"""Coop (Zhang et al., NeurIPS 2023): co-optimising rematerialization and the address space.

1. Sliding window: memory is a list of pieces ordered by address (blocks and holes). On a
   failed allocation of S bytes, find the contiguous run of pieces that frees at least S
   bytes with the least Σ c'(t)/stale(t) (holes cost 0, pinned blocks break the run; no size
   term: the window accounts for bytes), evict it whole and allocate there. Two pointers,
   one O(N) pass per failed allocation. Ties: lowest address.
2. Cheap-tensor partitioning (``params.partition``): tensors with a low cost density are
   allocated from the high end of holes (and of the window), expensive ones from the low
   end, so cheap tensors cluster into cheap contiguous regions (runtime: SimConfig.partition).
3. Recomputable in-place (``params.inplace``): in-place writes keep their address; the old
   value becomes a memory-less evicted version that keeps its recipe (SimConfig.inplace).
``--no-sliding-window`` replaces (1) by DTE's eviction loop, keeping (2) and (3).
"""
from __future__ import annotations

from ..addrspace import align_down
from ..graph import Graph
from ..params import SolveParams
from ..result import Result
from ..sim import SimConfig
from .dte import DTE
from .eviction import simulate

INF = float("inf")


class SlidingWindow:
    name = "coop"
    needs = frozenset({"addresses"})

    def make_room(self, rt, size: int, high: bool) -> int | None:
        mem = rt.mem
        a = mem.align
        bsize, members, access = rt.b_size, rt.b_members, rt.b_access
        ok, lock, is_view = rt.evictable_static, rt.lock, rt.is_view
        cprime = rt.nh.cprime
        now_eps = rt.now + rt.eps
        starts: list[int] = []
        ends: list[int] = []
        costs: list[float] = []
        blocks: list[int] = []
        best, best_l, best_r = INF, -1, -1
        left = 0
        run = 0.0
        for s, e, b in mem.pieces():
            if b < 0:
                w = 0.0
            else:
                e = s + bsize[b]
                ms = members[b]
                owner = -1
                for m in ms:
                    if not ok[m] or lock[m]:
                        owner = -2
                        break
                    if owner < 0 and not is_view[m]:
                        owner = m
                if owner == -2:   # pinned: no window may cross it
                    starts.clear(); ends.clear(); costs.clear(); blocks.clear()
                    left, run = 0, 0.0
                    continue
                if owner < 0:
                    owner = rt.view_base[ms[0]]  # only views left: their base's recompute
                w = cprime(owner) / (now_eps - access[b])
            starts.append(s)
            ends.append(e)
            costs.append(w)
            blocks.append(b)
            run += w
            top = align_down(e - size, a)
            if top < starts[left]:
                continue
            # shrink from the left while the window still fits
            while left + 1 < len(starts) and top >= starts[left + 1]:
                run -= costs[left]
                left += 1
            if run < best:
                best, best_l, best_r = run, left, len(starts) - 1
                best_start, best_end = starts[left], e
                best_blocks = [x for x in blocks[left:] if x >= 0]
        if best_l < 0:
            return None
        for b in best_blocks:
            rt.evict(b)
        return align_down(best_end - size, a) if high else best_start


def solve_coop(g: Graph, budget: int, params: SolveParams) -> Result:
    cfg = SimConfig(alignment=params.alignment, policy=params.alloc_policy, addresses=True,
                    inplace=params.inplace, partition=params.partition, exact_neighbours=False,
                    method="coop")
    heur = SlidingWindow() if params.sliding_window else _DTEFallback()
    res = simulate("coop", g, budget, params, heur, cfg)
    return res.with_(stats={**res.stats, "sliding_window": params.sliding_window})


class _DTEFallback(DTE):
    """``--no-sliding-window``: DTE's eviction loop inside Coop's runtime."""
    name = "coop-no-window"
