"""The incumbent of ``exact``: the best validated plan from the plain schedule, the runtime
heuristics, the early phase (``early``), gap eviction, the scalar-memory sequences, the
greedy and, when none of these plans, the offline construction, each also with its unneeded recomputations dropped, then the exchange pass. Every
source spends a share of the one time budget."""
from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from planner.params import SolveParams
from planner.registry import checked
from planner.result import Result

from .sources import Sources
from .state import Context

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Incumbent:
    plan: Result | None        # the best validated plan, or None
    source: str                # its source label ("none": the plain schedule fits)
    tried: dict                # every source -> the cost of its plan, or why none


def find_incumbent(ctx: Context, sources: Sources, deadline: float,
                   early: Callable[..., object] | None = None) -> Incumbent:
    """The best plan of every source. ``early(best, improve)`` (an ``early.EarlyPlan``;
    ``improve()`` prunes the heuristics' plans and returns the best plan then) runs right
    after the heuristics (hundredths of a second, where the other sources take most of the time
    limit); when it proves its plan optimal the other sources are skipped."""
    from ..greedy import greedy_plan
    from ..improve import ORDERS, prune_recomputations
    from ..schedule import build_plan, lifetimes, place
    from ..validator_bridge import validated

    g, p, budget, cap, params, t = ctx.g, ctx.p, ctx.budget, ctx.cap, ctx.params, ctx.tuning
    if params.alignment is None:
        params = replace(params, alignment=g.alignment)
    tried: dict[str, object] = {}

    def share(flags=(), fraction: float | None = None) -> SolveParams:
        # every source spends the one time budget (the placements inside read params.time_limit)
        f = t.source_share if fraction is None else fraction
        return replace(params, time_limit=max(0.1, f * (deadline - time.perf_counter())), **dict(flags))

    res = checked(g, "none", sources.plain(g, budget, share()))
    if res.has_plan:
        return Incumbent(res, "none", {"none": res.objective})
    tried["none"] = res.status
    best: Result | None = None
    src = ""
    seqs: dict[str, list[int]] = {}  # op sequences of the plans found, for the pruning pass

    def as_result(lt, offs) -> Result:
        return validated(g, Result("greedy", "feasible", plan=build_plan(p, lt, offs, budget, "exact"),
                                   objective=lt.cost))

    def late() -> bool:
        return deadline - time.perf_counter() < t.skip_share * params.time_limit

    pruned_done: set[tuple[str, str]] = set()  # (plan, order) pairs pruned already

    def prune_all(best: Result | None, src: str, names=None, orders=ORDERS) -> tuple[Result | None, str]:
        """Each plan of ``seqs`` (of ``names``: all by default) not yet pruned in each of
        ``orders``, without the recomputations it does not need (formulations.improve): each
        pass gets a share of the time left, and its result is placed and validated like any
        other plan."""
        for (name, seq), order in itertools.product(list(seqs.items()), orders):
            if (name, order) in pruned_done or (names is not None and name not in names):
                continue
            pruned_done.add((name, order))
            label = f"{name}+prune" + ("" if order == ORDERS[0] else f"({order})")
            left = deadline - time.perf_counter()
            if late():
                tried[label] = "skipped: time limit"
                continue
            # a schedule pruned up to the capacity may not place (fragmentation): prune to a
            # little less, as the greedy does, until it places
            pl = lt = None
            # a pass cut short keeps recomputations it never tried
            prune_s = max(0.03 * left, min(t.prune_min_s, 0.1 * left))
            for shrink in t.prune_targets:
                pruned = prune_recomputations(p, seq, int(cap * shrink), time.perf_counter() + prune_s, order)
                if len(pruned) == len(seq):
                    break
                lt = lifetimes(p, pruned)
                pl = place(lt, cap, max(0.1, 0.05 * left), params.seed, params.threads) if lt is not None else None
                if pl is not None and pl.offsets is not None:
                    break
            if lt is None or len(lt.seq) >= len(seq):
                continue
            if pl is None or pl.offsets is None:
                tried[label] = "not placed"
                continue
            r = as_result(lt, pl.offsets)
            tried[label] = r.objective if r.has_plan else r.status
            if r.has_plan and (best is None or r.objective < best.objective):
                best, src = r, label
        return best, src

    if params.warm_start:
        for source in sources.plans:
            if late():
                tried[source.label] = "skipped: time limit"
                continue
            try:
                r = checked(g, source.label, source.solve(g, budget, share(source.flags)))
            except Exception as exc:  # noqa: BLE001 - a broken heuristic must not sink the exact solve
                tried[source.label] = f"error: {exc}"[:80]
                continue
            tried[source.label] = r.objective if r.has_plan else r.status
            if r.has_plan:
                seqs[source.label] = [st.ref for st in r.plan.steps if st.kind == "compute"]
                if best is None or r.objective < best.objective:
                    best, src = r, source.label
    if early is not None:
        def pruned_best() -> Result | None:
            # the best heuristic plan pruned in one order (about a second on unet; all of them
            # in both orders take tens), asked for by the early phase only when its relaxation
            # did not prove at once: a cheaper incumbent is a tighter cutoff for its guided
            # MILP and refine round, and fixes more ops' costs
            nonlocal best, src
            if best is not None:
                best, src = prune_all(best, src, names={src}, orders=ORDERS[:1])
            return best

        e = early(best, pruned_best if t.prune_before_early else None)
        if e.plan is not None:
            tried[e.source] = e.plan.objective
            if best is None or e.plan.objective < best.objective:
                best, src = e.plan, e.source
        if e.proven:
            return Incumbent(best, src, tried)
    # gap eviction (formulations.gapevict): the only source that plans random layered graphs,
    # where the heuristics and the greedy thrash or get stuck
    r = gap_incumbent(p, cap, params, min(t.source_share * (deadline - time.perf_counter()), t.gap_max_s),
                      as_result, tried, t)
    if r is not None:
        seqs["gap"] = [st.ref for st in r.plan.steps if st.kind == "compute"]
        if best is None or r.objective < best.objective:
            best, src = r, "gap"
    if params.warm_start and not late():
        for source in sources.sequences:
            seq = source.sequence(g, budget, params)
            tried[source.label] = "sequence to prune" if seq is not None else "stuck"
            if seq is not None:
                seqs[source.label] = seq
    left = max(0.1, min(t.greedy_share * (deadline - time.perf_counter()), t.greedy_max_s))
    gp = greedy_plan(p, cap, left, params.seed, params.threads)
    if gp is not None:
        lt, offs, _solver = gp
        r = as_result(lt, offs)
        tried["greedy"] = r.objective if r.has_plan else r.status
        if r.has_plan:
            seqs["greedy"] = list(lt.seq)
            if best is None or r.objective < best.objective:
                best, src = r, "greedy"
    else:
        tried["greedy"] = "no plan"
    if best is None and params.warm_start:
        for source in sources.fallback:
            if late():
                tried[source.label] = "skipped: time limit"
                continue
            # no plan from any other source: what is left goes mostly to the construction (the
            # master MILP cannot start without a plan where every faster source failed)
            r = checked(g, source.label, source.solve(g, budget, share(source.flags, t.fallback_share)))
            tried[source.label] = r.objective if r.has_plan else r.status
            if r.has_plan and (best is None or r.objective < best.objective):
                best, src = r, source.label
                seqs[source.label] = [st.ref for st in r.plan.steps if st.kind == "compute"]
    best, src = prune_all(best, src)
    if best is not None and params.warm_start:
        try:
            best, src = exchange(ctx, best, src, deadline, as_result, tried)
        except Exception as exc:
            log.exception("exact: exchange pass failed")
            tried["exchange"] = f"error: {exc}"[:80]
    return Incumbent(best, src, tried)


def exchange(ctx: Context, best: Result, src: str, deadline: float, as_result, tried: dict) -> tuple[Result, str]:
    """The incumbent after ``improve.exchange_recomputations`` (a recomputation traded for
    cheaper ones), within ``exchange_share`` of the time left (capped): each cheaper candidate
    is placed (the first ones get most of the time: a cheaper schedule sits near the capacity,
    where placing takes longer) and validated; the search restarts from the first that places."""
    from ..improve import exchange_recomputations
    from ..schedule import place

    p, cap, params, t = ctx.p, ctx.cap, ctx.params, ctx.tuning
    left = deadline - time.perf_counter()
    if left < t.skip_share * params.time_limit:
        tried["exchange"] = "skipped: time limit"
        return best, src
    stop = time.perf_counter() + min(t.exchange_max_s, t.exchange_share * left)
    seq = [st.ref for st in best.plan.steps if st.kind == "compute"]
    steps = 0
    while time.perf_counter() < stop:
        found = False
        for lt in exchange_recomputations(p, seq, cap, stop):
            left = stop - time.perf_counter()
            pl = place(lt, cap, max(0.1, min(left, max(t.place_try_s, 0.6 * left))), params.seed, params.threads)
            if pl.offsets is None:
                continue
            r = as_result(lt, pl.offsets)
            if r.has_plan and r.objective < best.objective:
                best, seq, found = r, list(lt.seq), True
                steps += 1
                break
        if not found:
            break
    tried["exchange"] = f"{steps} step(s)" if steps else "no gain"
    log.info("exact: exchange: %d step(s), %s", steps, best.objective)
    return best, (f"{src}+exchange" if steps else src)


def gap_incumbent(p, cap: int, params: SolveParams, seconds: float, as_result, tried: dict,
                  tuning=None) -> Result | None:
    """The cheapest gap-eviction sequence that places, as a validated Result (None: none).
    Every variant's sequence and its pruned form are candidates, placed cheapest first, at
    most ``place_try_s`` each (near the capacity the DSA places one sequence in seconds and
    times out on an equally tight other); when none places, again at a little less capacity.
    The whole search spends at most ``seconds``."""
    from ..gapevict import gap_sequences
    from ..improve import prune_recomputations
    from ..schedule import lifetimes, place
    from .tuning import DEFAULT

    t = tuning or DEFAULT
    t0 = time.perf_counter()
    stop = t0 + max(0.1, seconds)
    for shrink in (1.0, 0.97, 0.93):
        target = int(cap * shrink)
        cands: dict[tuple[int, ...], object] = {}
        for label, seq in gap_sequences(p, target, t0 + 0.5 * (stop - t0)):
            pruned = prune_recomputations(p, seq, target, time.perf_counter() + 0.05 * (stop - t0))
            for s, name in ((seq, label), (pruned, label + "+prune")):
                lt = lifetimes(p, s)
                if lt is not None and lt.peak_units <= cap and lt.seq not in cands:
                    cands[lt.seq] = (lt.cost, name, lt)
        if not cands:
            tried["gap"] = "stuck" if time.perf_counter() < stop else "skipped: time limit"
            if time.perf_counter() >= stop:
                return None
            continue
        for cost, name, lt in sorted(cands.values(), key=lambda c: (c[0], c[1])):
            left = stop - time.perf_counter()
            if left <= 0.1:
                break
            pl = place(lt, cap, min(t.place_try_s, left), params.seed, params.threads)
            if pl.offsets is None:
                tried["gap"] = f"not placed ({name}@{shrink:g})"
                continue
            r = as_result(lt, pl.offsets)
            tried["gap"] = r.objective if r.has_plan else r.status
            log.info("exact: gap eviction %s@%g: %s (%.2fs)", name, shrink, tried["gap"], time.perf_counter() - t0)
            if r.has_plan:
                return r
        if time.perf_counter() >= stop:
            return None
    return None
