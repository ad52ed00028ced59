"""What every heuristic shares: the score-driven eviction loop (``ByScore``), the scores, the
simulator settings of the DTR family and the run -> Result wrapper."""
from __future__ import annotations

import time
from typing import Callable

from ..graph import Graph
from ..params import SolveParams
from ..result import Result, gap_of
from ..sim import Infeasible, Runtime, SimConfig

INF = float("inf")

Score = Callable[[Runtime, int], float]


def evict_by_score(rt: Runtime, size: int, high: bool, score: Score) -> int | None:
    """DTR's loop: evict the evictable block with the lowest score, retry, until ``size`` fits.
    Ties go to the oldest block (live blocks iterate in allocation order)."""
    mem = rt.mem
    sizes = rt.b_size
    while True:
        best, best_s = -1, INF
        for b in rt.live_blocks:
            if sizes[b] and rt.evictable(b):
                s = score(rt, b)
                if s < best_s:
                    best, best_s = b, s
        if best < 0:
            return None
        rt.evict(best)
        off = mem.find(size, high)
        if off is not None:
            return off


class ByScore:
    """DTR's rule with a pluggable score: evict the lowest-scoring evictable block, one at a
    time, until the allocation fits. Subclasses name the method, the score and ``needs``
    (what the runtime must offer for the score)."""
    name = ""
    needs: frozenset[str] = frozenset()

    @staticmethod
    def score(rt: Runtime, b: int) -> float:
        raise NotImplementedError

    def make_room(self, rt, size: int, high: bool) -> int | None:
        return evict_by_score(rt, size, high, self.score)


def address_config(method: str, params: SolveParams) -> SimConfig:
    """DTR's runtime on the address-level allocator: in-place ops out of place, no partition,
    union-find neighbourhoods (the settings of ``dtr`` and ``dte``)."""
    return SimConfig(alignment=params.alignment, policy=params.alloc_policy, addresses=True,
                     inplace=False, partition=False, exact_neighbours=False, method=method)


def dtr_score(rt: Runtime, b: int) -> float:
    """h(t) = c'(t) / (bytes(t) · stale(t))."""
    return rt.nh.cprime(rt.owner(b)) / (rt.b_size[b] * rt.stale(b))


def dte_score(rt: Runtime, b: int) -> float:
    """MegEngine: (c'(t)+ε)·1.0001^recomputes / ((bytes + free left + free right)·(stale+ε))."""
    t = rt.owner(b)
    p = rt.producer[t]
    rec = rt.op_runs[p] - 1 if p is not None else 0
    room = rt.b_size[b] + rt.mem.adjacent_free(rt.b_off[b], rt.b_size[b])
    return (rt.nh.cprime(t) + rt.eps) * 1.0001 ** rec / (room * rt.stale(b))


def simulate(method: str, g: Graph, budget: int, params: SolveParams, heuristic, cfg: SimConfig,
             place: Callable[[Runtime], tuple[list[int] | None, str]] | None = None) -> Result:
    """Run the simulator and wrap its realised plan into a Result (validated by registry.solve).

    ``place`` assigns addresses afterwards when the memory model has none (dtr-ideal); it
    returns (offsets by block or None, how)."""
    t0 = time.perf_counter()
    rt = Runtime(g, budget, heuristic, cfg)
    config = {"policy": cfg.policy, "inplace": cfg.inplace, "partition": cfg.partition,
              "addresses": cfg.addresses, "neighbours": "exact" if cfg.exact_neighbours else "union-find"}
    try:
        rt.run()
    except Infeasible as exc:
        st = rt.stats
        st.peak_used, st.peak_address = rt.mem.peak_used, rt.mem.peak_addr
        return Result(method, "infeasible", solve_seconds=time.perf_counter() - t0, backend="simulator",
                      message=str(exc), stats={**st.to_dict(), **config})
    offsets, how = None, ""
    if place is not None:
        offsets, how = place(rt)
        if offsets is None:
            cost = _cost(g, rt)
            return Result(method, "infeasible", solve_seconds=time.perf_counter() - t0, backend="simulator",
                          message=how, stats={**rt.stats.to_dict(), **config, "scalar_feasible": True,
                                              "scalar_overhead": cost / g.total_cost() - 1 if g.total_cost() else 0.0})
        config["placement"] = how
    plan = rt.plan(offsets)
    cost = _cost(g, rt)
    base = g.total_cost()
    stats = {**rt.stats.to_dict(), **config, "sim_seconds": time.perf_counter() - t0}
    if place is not None:
        stats["scalar_feasible"] = True
        stats["scalar_overhead"] = cost / base - 1 if base else 0.0
    # every op at least once: the baseline cost bounds every plan from below
    return Result(method, "feasible", plan=plan, objective=cost, lower_bound=base, gap=gap_of(cost, base),
                  solve_seconds=time.perf_counter() - t0, backend="simulator", stats=stats)


def _cost(g: Graph, rt: Runtime) -> float:
    cost = 0.0  # summed in step order, as the validator does
    ops = g.ops
    for s in rt.steps:
        if s[0] == "c":
            cost += ops[s[1]].cost
    return cost
