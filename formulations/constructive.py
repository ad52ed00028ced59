"""Plans built offline for tight budgets, and an upper bound on the minimum feasible budget.

``planner.analysis.min_feasible_budget`` is a lower bound: no plan fits below it. Deciding
feasibility exactly is as hard as black pebbling, so the other side is certified by
construction: a budget is *known feasible* once a validated plan fits it. Two constructions,
both offline (the whole schedule in view, unlike the runtime heuristics, which thrash on
random layered graphs):
- the keep-set descent (``formulations.keepset``): recompute what each op needs from the
  values kept, dropping kept values at the peak;
- segment checkpointing (``formulations.segments``, one or several levels) as a start of the
  descent, where values are saved across the plain schedule's peak (a training step's
  forward for its backward);
- on graphs of plain single-output values, the retention model (``formulations.retention``):
  every value dropped over at most one range, recomputed once, solved by CP-SAT;
- gap eviction (``formulations.gapevict``) aimed at capacities scanned downwards from what
  the others certified, for the lowest one it places;
- on the sequences of the first two, long lifetimes split across the peak
  (``formulations.split``): a large value held through the peak without being used there is
  rerun after it, a rerun whose reads the earlier copy can serve is dropped.
Every candidate sequence gets its unneeded recomputations pruned (``improve``), minimal
lifetimes and addresses (greedy-by-size, then the DSA at the sequence's own peak).

- ``upper_bound(g)``: the lowest budget either construction certifies (residents packed
  below plus the placed address top) with its plan; budgets between the two bounds are
  undecided.
- ``construct(g, budget)`` / ``constructive_plan`` / the ``constructive`` method: the
  cheapest plan the constructions place within a budget, falling back to the upper bound's
  own plan, so that every budget at or above ``upper_bound`` gets a plan (given the time).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

from planner.graph import Graph
from planner.params import SolveParams
from planner.plan import Plan
from planner.result import Result, gap_of

from .keepset import descend
from .problem import RematProblem, extract
from .retention import retention_applies, retention_sequence
from .segments import ranked_starts
from .split import split_state

log = logging.getLogger(__name__)

# gap eviction's capacity is scanned downwards in steps of this share of the baseline's
SCAN_STEP = 0.01
PRUNE_SHARE = 0.4  # of the time left, for pruning the keep-set plan in ``construct``
SCAN_MISSES = 8  # the scan stops after this many capacities in a row that place nothing
# targets of the keep-set descent in ``construct``, as shares of the capacity, tried in turn
# while the descent's sequence does not place (as ``greedy``'s shrinking targets)
SHRINK = (1.0, 0.97, 0.93, 0.88, 0.8)


@dataclass(frozen=True)
class Constructed:
    plan: Plan          # placed plan (validate before reporting)
    budget: int         # bytes the plan needs: residents plus its address top
    peak_units: int     # minimal-lifetime peak of its sequence (units above the residents)
    cost: float         # compute cost
    seconds: float      # time to construct
    source: str         # which construction: "keep-set" or "gap-eviction"
    placement: str      # what placed it


def place_fitting(p: RematProblem, seq: list[int], cap: int | None, time_limit: float, seed: int, threads: int):
    """(lifetimes, offsets, top units, solver) for ``seq`` within ``cap`` units (None: no cap:
    greedy-by-size, then the DSA at the sequence's own peak for a lower top), or None."""
    from planner.alloc import greedy_by_size

    from .schedule import lifetimes, place

    lt = lifetimes(p, seq)
    if lt is None or (cap is not None and lt.peak_units > cap):
        return None
    sizes = {i: size for i, (_, lo, hi, size) in enumerate(lt.blocks) if size > 0 and hi > lo}
    life = {i: (lt.blocks[i][1], lt.blocks[i][2] - 1) for i in sizes}
    # no cap: None, so that the greedy tries its other orders until one meets the live bound
    offs = greedy_by_size(sizes, life, cap, 1)  # type: ignore[arg-type]
    best = None
    if offs is not None:
        best = (lt, offs, max((offs[i] + sizes[i] for i in offs), default=0), "greedy-by-size")
    if cap is not None:
        targets = [cap]
    else:  # the sequence's own peak, then steps towards the greedy top, until one places
        gtop = best[2] if best else lt.peak_units * 2
        targets = [lt.peak_units + (gtop - lt.peak_units) * f // 4 for f in range(4)]
    end = time.perf_counter() + time_limit
    for target in dict.fromkeys(targets):
        if best is not None and best[2] <= target:
            break
        left = end - time.perf_counter()
        if left <= 0:
            break
        pl = place(lt, target, max(0.2, left / 2), seed, threads)
        if pl.offsets is not None:
            top = max((pl.offsets[i] + sizes[i] for i in sizes if i in pl.offsets), default=0)
            best = (lt, pl.offsets, top, pl.solver)
            break
    return best


def _constructed(p: RematProblem, placed, budget: int | None, method: str, t0: float, source: str) -> Constructed:
    from .schedule import build_plan

    lt, offs, top, solver = placed
    need = (p.resident_units + top) * p.alignment
    plan = build_plan(p, lt, offs, budget if budget is not None else need, method,
                      {"placement": solver, "construction": source})
    return Constructed(plan, need, lt.peak_units, lt.cost, time.perf_counter() - t0, source, solver)


def _gaps(p: RematProblem, cap: int, deadline: float):
    """Gap eviction's sequences for ``cap`` (each variant, seeded restarts when none fits),
    their unneeded recomputations pruned."""
    from .gapevict import gap_sequences
    from .improve import prune_recomputations

    for _, seq in gap_sequences(p, cap, deadline):
        yield prune_recomputations(p, seq, cap, deadline + 1.0)


def _place_first(p: RematProblem, seqs, cap: int, deadline: float, seed: int, threads: int):
    """The first of ``seqs`` that places within ``cap`` (lowest peak first is not worth the
    wait: each variant costs a gap-eviction run)."""
    for seq in seqs:
        placed = place_fitting(p, seq, cap, max(0.5, min(5.0, deadline - time.perf_counter())), seed, threads)
        if placed is not None:
            return placed
        if time.perf_counter() > deadline:
            break
    return None


def _split_fit(p: RematProblem, states, cap: int, budget: int, end: float, deadline: float, seed: int,
               threads: int, method: str, t0: float) -> list[Constructed]:
    """The first of ``states`` whose sequence, its long lifetimes split (``formulations.split``)
    down to the capacity (or a little below, as ``SHRINK``), places within it; [] when none
    does by ``end``."""
    for st0 in states:
        for shrink in SHRINK:
            if time.perf_counter() > end:
                return []
            target = int(cap * shrink)
            st = split_state(p, list(st0.seq), end, target)
            if st is None or st.peak > cap:
                break  # a lower target would not be reached either
            # missing a lower target, the split's local optimum may still place where the
            # state at the capacity did not (more room for the addresses)
            placed = place_fitting(p, list(st.seq), cap, max(0.5, min(5.0, deadline - time.perf_counter())),
                                   seed, threads)
            if placed is not None:
                return [_constructed(p, placed, budget, method, t0, "keep-set+split")]
            if st.peak > target:
                break
            st0 = st  # the next, lower target goes on from here
    return []


def upper_bound(g: Graph, time_limit: float = 10.0, alignment: int | None = None, seed: int = 0,
                threads: int = 1, method: str = "constructive", p: RematProblem | None = None) -> Constructed | None:
    """The lowest budget the constructions certify within ``time_limit``, with its plan (not
    yet validated: ``feasible_upper_bound`` validates): the segment starts, their long
    lifetimes split (``formulations.split``; to half of the time), the keep-set descents
    (from the lowest start, then plain) with their lowest state split, then gap eviction
    scanned down from there."""
    from planner.analysis import baseline_peak, min_feasible_budget

    t0 = time.perf_counter()
    p = p or extract(g, alignment)
    deadline = t0 + time_limit
    best: Constructed | None = None
    last = None
    starts = ranked_starts(p, t0 + time_limit / 8)
    # the segment starts, lowest first, with their long lifetimes split, as many as time
    # allows (to half of it: the lowest sequences of all where there are starts): the
    # split's result does not follow the starts' order
    for _, st0 in starts:
        if time.perf_counter() >= t0 + time_limit / 2:
            break
        st = split_state(p, list(st0.seq), t0 + time_limit / 2)
        if st is not None and (last is None or st.peak < last.peak):
            last = st
    descended = None
    if starts:  # the lowest start descended, to 9/16 of the time
        for st in descend(p, t0 + 9 * time_limit / 16, start=starts[0][0]):
            descended = st
    for st in descend(p, t0 + 5 * time_limit / 8):
        if descended is None or st.peak < descended.peak:
            descended = st
    if descended is not None:  # its long lifetimes split too, to 3/4 of the time
        descended = split_state(p, list(descended.seq), t0 + 3 * time_limit / 4) or descended
        if last is None or descended.peak < last.peak:
            last = descended
    if last is not None:
        placed = place_fitting(p, list(last.seq), None, max(0.5, min(5.0, deadline - time.perf_counter())), seed, threads)
        if placed is not None:
            best = _constructed(p, placed, None, method, t0, "keep-set")
            log.debug("upper bound: keep-set %d units at %.1f s", best.budget // p.alignment, time.perf_counter() - t0)
    # gap eviction is not monotone in the capacity (measured: layered:100 places at 0.75 of
    # the baseline peak, fails at 0.76 and 0.74), so scan capacities downwards instead of bisecting
    lo = p.capacity(min_feasible_budget(g, p.alignment).bytes)
    top = p.capacity(baseline_peak(g, p.alignment))
    hi = (best.budget // p.alignment - p.resident_units) if best else top
    step = max(1, int(top * SCAN_STEP))
    cap = hi - step
    misses = 0
    while cap >= lo and misses < SCAN_MISSES and time.perf_counter() < deadline:
        placed = _place_first(p, _gaps(p, cap, deadline), cap, deadline, seed, threads)
        misses += 1
        if placed is not None:
            misses = 0
            c = _constructed(p, placed, None, method, t0, "gap-eviction")
            if best is None or c.budget < best.budget:
                best = c
            cap = min(cap, c.budget // p.alignment - p.resident_units)
        cap -= step
    if best is not None:
        best = replace(best, seconds=time.perf_counter() - t0)
    return best


def feasible_upper_bound(g: Graph, time_limit: float = 10.0, alignment: int | None = None) -> Constructed | None:
    """``upper_bound`` with its plan validated (None when nothing was placed or, which would
    be a bug, the plan is invalid)."""
    from planner.validator import validate

    c = upper_bound(g, time_limit, alignment)
    if c is None:
        return None
    rep = validate(g, c.plan)
    if not rep.valid:
        log.error("constructive upper bound produced an invalid plan: %s", rep.violations[0])
        return None
    return c


def construct(g: Graph, budget: int, time_limit: float = 10.0, alignment: int | None = None,
              seed: int = 0, threads: int = 1, method: str = "constructive") -> Constructed | None:
    """The cheapest plan within ``budget`` among: the segment starts with long lifetimes split,
    the first keep-set descent state that fits (its lowest state split when none does), the
    retention model, gap eviction at the budget, and (when none places) the upper bound's own plan.
    None when none fits. Plans are not yet validated."""
    from .improve import prune_recomputations

    t0 = time.perf_counter()
    p = extract(g, alignment)
    cap = p.capacity(budget)
    if cap < 0:
        return None
    deadline = t0 + time_limit
    found: list[Constructed] = []
    starts = ranked_starts(p, t0 + time_limit / 12)
    start = starts[0][0] if starts else None
    # training steps: the segment starts, long lifetimes split (the lowest peaks of all, on an
    # unrolled LSTM), lowest start first, to half of the time
    found += _split_fit(p, [x[1] for x in starts], cap, budget, t0 + time_limit / 2, deadline,
                        seed, threads, method, t0)
    lowest = None  # the lowest-peak descent state seen, for the split below
    descend_end = max(t0 + time_limit / 3, time.perf_counter() + time_limit / 6)
    for st0 in ([start] if start is not None else []) + [None]:  # segment-checkpointed, then plain
        placed_one = False
        for shrink in SHRINK:  # a little below the capacity leaves the placement room
            if placed_one or time.perf_counter() > descend_end:
                break
            target = int(cap * shrink)
            for st in descend(p, descend_end, target=target, start=st0):
                if lowest is None or st.peak < lowest.peak:
                    lowest = st
                if st.peak > target:
                    continue
                now = time.perf_counter()
                left = max(0.5, min(5.0, deadline - now))
                # pruning a long sequence is slow (each try rebuilds its lifetimes): a share of the time
                prune_end = now + max(1.0, PRUNE_SHARE * (deadline - now))
                for seq in (prune_recomputations(p, list(st.seq), target, prune_end), list(st.seq)):
                    placed = place_fitting(p, seq, cap, left, seed, threads)
                    if placed is not None:
                        found.append(_constructed(p, placed, budget, method, t0, "keep-set"))
                        placed_one = True
                        break
    if not found and lowest is not None:  # the descent's lowest state, long lifetimes split
        found += _split_fit(p, [lowest], cap, budget, t0 + 3 * time_limit / 4, deadline, seed, threads, method, t0)
    if retention_applies(p) and time.perf_counter() < t0 + time_limit / 2:
        seq = retention_sequence(p, cap, t0 + time_limit / 2, threads, seed)
        placed = None if seq is None else place_fitting(
            p, seq, cap, max(0.5, min(5.0, deadline - time.perf_counter())), seed, threads)
        if placed is not None:
            found.append(_constructed(p, placed, budget, method, t0, "retention"))
    if time.perf_counter() < deadline:
        end = t0 + 2 * time_limit / 3
        placed = _place_first(p, _gaps(p, cap, end), cap, end, seed, threads)
        if placed is not None:
            found.append(_constructed(p, placed, budget, method, t0, "gap-eviction"))
    if not found and time.perf_counter() < deadline:
        ub = upper_bound(g, max(1.0, deadline - time.perf_counter()), alignment, seed, threads, method, p)
        if ub is not None and ub.budget <= budget:
            found.append(replace(ub, plan=replace(ub.plan, budget=budget)))
    if not found:
        return None
    return replace(min(found, key=lambda c: c.cost), seconds=time.perf_counter() - t0)


def constructive_plan(g: Graph, budget: int, time_limit: float = 10.0, alignment: int | None = None,
                      seed: int = 0, threads: int = 1, method: str = "constructive") -> Plan | None:
    """A validated plan within ``budget`` from ``construct``, or None: a pure function of the
    graph and budget (given the time), meant as an incumbent source for ``exact``."""
    from planner.validator import validate

    c = construct(g, budget, time_limit, alignment, seed, threads, method)
    if c is None:
        return None
    return c.plan if validate(g, c.plan).valid else None


def solve_constructive(g: Graph, budget: int, params: SolveParams) -> Result:
    """Method ``constructive``: ``construct`` within the time limit; ``infeasible`` when the
    budget is below the minimum feasible one (proven), else no plan is ``timeout``/``infeasible``
    as the constructions ran out of time or of moves (not a proof)."""
    from .common import setup

    s = setup("constructive", g, budget, params)
    if isinstance(s, Result):
        return s
    c = construct(g, budget, params.time_limit, params.alignment, params.seed, params.threads)
    spent = time.perf_counter() - s.t0
    if c is None:
        ran_out = spent >= params.time_limit
        return Result("constructive", "timeout" if ran_out else "infeasible", backend="constructive",
                      message=("no constructed plan within the budget in "
                               f"{params.time_limit:g} s" if ran_out else
                               "the constructions found no plan within the budget (not a proof)"))
    bound = g.total_cost()  # every op once: the only cost bound this method knows
    return Result("constructive", "feasible", plan=c.plan, objective=c.cost, lower_bound=bound,
                  gap=gap_of(c.cost, bound), backend="constructive",
                  stats={"construction": c.source, "placement": c.placement, "peak_units": c.peak_units})
