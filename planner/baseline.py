"""Method ``none``: the plain schedule (each op once, in order) with first-fit addresses.

Lifetimes of the plain schedule are fixed, so placements are tried from the cheapest:
online first-fit in allocation order (what a caching allocator would do), offline
greedy-by-size (``planner.alloc.greedy``), and, when both miss the budget, the exact
static address assignment search (``planner.alloc``) within the time
limit. The plan says which one placed it. ``infeasible`` only when the search proves that no
placement of the plain schedule fits; ``timeout`` when it neither places nor proves.
"""
from __future__ import annotations

from .addrspace import AddressSpace, align_up
from .alloc import Buffer, solve_dsa
from .alloc.greedy import greedy_by_size
from .analysis import baseline_peak, baseline_steps, storage_intervals
from .graph import Graph
from .params import SolveParams
from .plan import COMPUTE, Plan, Step
from .result import Result


def _online(sizes: dict[int, int], life: dict[int, tuple[int, int]], n: int, budget: int,
            align: int, policy: str) -> dict[int, int] | None:
    by_start: dict[int, list[int]] = {}
    by_end: dict[int, list[int]] = {}
    for r, (s, e) in life.items():
        by_start.setdefault(s, []).append(r)
        by_end.setdefault(e, []).append(r)
    space = AddressSpace(budget, align, policy)
    offset: dict[int, int] = {}
    for j in range(-1, n):
        for r in by_end.get(j - 1, ()):
            space.release(offset[r], sizes[r])
        for r in sorted(by_start.get(j, ()), key=lambda r: -sizes[r]):
            off = space.alloc(sizes[r])
            if off is None:
                return None
            offset[r] = off
    return offset


def _exact_placement(sizes: dict[int, int], life: dict[int, tuple[int, int]], budget: int,
                     params: SolveParams) -> tuple[dict[int, int] | None, str]:
    # inclusive op intervals [s, e] with s = -1 for resident storages -> half-open [s+1, e+2)
    bufs = [Buffer(str(r), s + 1, e + 2, sizes[r], params.alignment) for r, (s, e) in life.items()]
    sol = solve_dsa(bufs, capacity=budget, time_limit=params.time_limit, seed=params.seed, threads=params.threads)
    if sol.offsets is None:
        return None, sol.status
    return {int(k): v for k, v in sol.offsets.items()}, sol.status


def solve_none(g: Graph, budget: int, params: SolveParams) -> Result:
    """Feasible only when the plain schedule fits the budget with first-fit placement."""
    roots, start, end = storage_intervals(g)
    T = g.tensors
    sizes = {r: align_up(T[r].bytes, params.alignment) for r in roots.tolist()}
    life = {r: (s, e) for r, s, e in zip(roots.tolist(), start.tolist(), end.tolist())}
    placement = "online first-fit"
    offset = _online(sizes, life, len(g.ops), budget, params.alignment, params.alloc_policy)
    if offset is None:
        placement = "offline greedy-by-size"
        offset = greedy_by_size(sizes, life, budget, params.alignment)
    if offset is None:
        if baseline_peak(g, params.alignment) > budget:
            return Result("none", "infeasible", backend="first-fit",
                          message=f"the plain schedule needs {baseline_peak(g, params.alignment)} live bytes, "
                                  f"more than the budget {budget}")
        placement = "exact DSA search"
        offset, status = _exact_placement(sizes, life, budget, params)
        if offset is None:
            what = ("no placement of the plain schedule fits" if status == "infeasible"
                    else f"no placement found within {params.time_limit:g} s (not proved impossible)")
            return Result("none", "infeasible" if status == "infeasible" else "timeout", backend="dsa",
                          message=f"{what} in {budget} bytes (first-fit and greedy-by-size failed too)")
    steps = []
    for s in baseline_steps(g):
        if s.kind == COMPUTE:
            outs = [t for t in g.ops[s.ref].outputs if g.storage_root[t] == t]
            s = Step.compute(s.ref, [(t, offset[t]) for t in outs])
        steps.append(s)
    plan = Plan(g.hash, budget, "none", tuple(steps),
                tuple((r, offset[r]) for r in g.resident_ids() if T[r].alias_of is None),
                params.alignment, g.name, {**g.meta, "placement": placement})
    # every op once is the least possible compute cost: this plan is optimal when it fits
    cost = g.total_cost()
    return Result("none", "optimal", plan=plan, objective=cost, lower_bound=cost, gap=0.0,
                  backend=placement, stats={"placement": placement})
