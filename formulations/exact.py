"""Method ``exact``: the proven optimum of the joint problem (remat + an address for every
allocation), by decomposition.

Design (chosen by measurement, REFERENCE.md §7 and bench/bench_exact.py):
1. *Incumbent*: the plain schedule when it fits (then it is optimal: every op once), else the
   cheapest of gap eviction (``formulations.gapevict``, in Checkmate's schedule class: the only
   source that plans random layered graphs, where every other one thrashes or gets stuck), the
   runtime heuristic plans (``coop`` and two of its ablations, ``dtr``, ``dte``) and the greedy of
   ``formulations.greedy``, each also with its unneeded recomputations dropped
   (``formulations.improve``: unet 0.5 28.4% -> 13.0%), and then the best one through the
   exchange pass (``improve.exchange_recomputations``: a recomputation dropped, gap eviction
   repairs the excess from there; unet 0.4 17.42% -> 16.93%, 0.6 8.56% -> 8.48%);
   ``stats['incumbent']`` names the source.
   Right after the heuristics (hundredths of a second) and before the slow sources, the
   *checkpoint-guided MILP* (``_early``, ``_guided``): the checkpoint relaxation of 4. is
   solved, and Checkmate's MILP restricted to the ops and intervals in which its solution
   recomputes (``checkpoints.recompute_windows``; a restriction, so a plan and never a bound)
   gives a plan; when that plan meets the relaxation's bound it is optimal and the search ends.
   Measured on unet (60 s): 0.5-0.9 proven optimal in 1.6-20 s (0.5: 11.00%, 0.9: 1.25%), where
   every other source stops at 11.3-12.2% and 1.47% and nothing had proven any ratio; at 0.4
   the restricted model finds nothing within its share and the other sources continue.
   On layered:100 at 0.9 the gap-eviction plan is the optimum (547): cost fixing then leaves 62
   of 100 ops recomputable (17k columns instead of 30k) and HiGHS proves it in 39-70 s; at 0.8
   the slack (27) exceeds every op's cost (at most 10), so cost fixing removes nothing there.
2. *Master*: Checkmate's MILP on HiGHS (highspy, 1 thread by default) with exact cost fixing
   (slack = incumbent cost - cost of every op once; an op whose own cost reaches the slack is
   never recomputed in a better plan, so its R columns vanish), sparsification (S/F/U and
   dependency rows only where an op can run) and the incumbent's cost as cutoff.
3. *Addresses*: the master's optimal schedule gets minimal lifetimes and the DSA solver
   places them. The remat optimum is a lower bound on the joint optimum, so a schedule that
   places is joint-optimal. When the DSA *proves* that it cannot be placed, a no-good cut on the
   R columns excludes that stage schedule (sound: every plan with the same R has lifetimes
   containing the minimal ones) and the master is solved again. A DSA time-out stops the loop
   with an honest ``feasible`` (or the incumbent).
4. *Bounds without the big LP* (``formulations.bounds``): every op once plus the larger of a
   covering-knapsack bound and its closure LP, per op's first run. The incumbent is optimal
   when it meets that bound; an infinite one proves infeasibility. Then the checkpoint
   relaxation (``formulations.checkpoints``: Checkmate's model aggregated to the 10 tightest
   moments, each with its closure rows, and the memory of what lives through each interval),
   as an LP and then a MIP within a fifth of the time left (at most 15 s; 60% of it, uncapped,
   above ``LARGE_RS_COLUMNS``; all of it, over more and more checkpoints, when the MILP is too
   large to build): on unet at 0.4 it lifts the bound from 13.67% to 15.12% overhead (gap
   7.08% -> 5.89%), and it proves layered:100 and layered:250 at 0.9 in 3-4 s (the MILP took
   105 s and more than 120 s). On unet the MILP's root LP does not finish in 60 s (and its LP
   value is only 8.04%), so these are the only bounds there.
5. Status: ``optimal`` only when proven; otherwise ``feasible`` with the MILP's bound and gap, or
   ``timeout`` without a plan. ``params.addresses=False`` returns the remat-only optimum: its
   plan when the DSA places it, otherwise no plan and a message (the objective is then a lower
   bound on the joint optimum).

6. *The relaxation's own plan* (``formulations.relaxed_plan``, ``_relaxed_plan``): each
   checkpoint MIP solution says which ops run again in each interval; run just before their
   first readers (then moved earlier where that lowers the overflow) they form a plan of
   exactly the relaxation's cost, so when it fits and places it is proven optimal with no stage
   MILP. unet at 0.9 and 0.7 are proven that way in under a second. Above
   ``LARGE_RS_COLUMNS``, ``_refine`` then tightens the relaxation until its plan fits: the
   candidate checkpoint (where the plan overflows, where one recomputation serves several first
   runs, where the incumbent pays more) whose LP, with the earlier sets as coarse levels, is
   highest joins; the MIP is solved again on the new set alone (the coarse rows lift the LP but
   halve the MIP's speed), and the guided MILP runs on the new windows (from the incumbent
   until the change below) and stops at the first plan that meets the bound. Measured on unet at 0.4 (300 s): 132 is chosen
   (the only candidate that lifts the LP), the bound rises to the optimum 15.53%, and the guided
   MILP reaches it in 9-12 s (16 s before the model's kept values became constants): proven
   optimal in 108 s at 300 s and in 103-111 s at 120 s (126 s and not at 120 s before; 160-166 s
   before that; 472 s before the early guided MILP was capped; never before this loop). At 60 s
   the chain does not fit: 10-checkpoint MIP 9 s, early guided MILP 10 s, heuristics 18 s,
   lifting 4 s, 11-checkpoint MIP 24-30 s, guided MILP 10 s and its placement 1-8 s.
   Since then ``_refine``'s guided MILP seeks only plans at the bound, on windows widened to
   the first reader after each (``_guided``'s ``at_bound``), and needs no incumbent; so where
   the relaxation's plan is far over the capacity (and ``EARLY_REFINE_MIN_S`` are left) one
   round runs right after the early guided MILP, before the slow incumbent sources: unet at
   0.4 is proven at 120 s in 65-78 s (the 11-checkpoint MIP with no useful cutoff 32-35 s,
   the guided MILP 18-22 s). At 60 s the round does not fit (52 s left: its guided MILP timed
   out, 22.33% instead of 16.93%), so there the order is as before.

No cap on recomputations is imposed: an op may run once per stage.

Time limit (``params.time_limit``) is one budget for everything: the plain schedule, gap
eviction (at most 20 s) and the heuristics get 30% of what is left each (between the
heuristics and gap eviction, the early checkpoint relaxation gets 25% and the guided MILP 50%;
the heuristics' placements read
``time_limit``), the greedy 20% (at most 20 s), each pruning pass at least 2.5 s, the exchange
pass 25% (at most 30 s), the closure
LPs 10% (at most 20 s), the checkpoint relaxation 20% (at most 15 s; see 4.), the model build stops
at the deadline less a reserve (``BuildTimeout``; a model over ``model.MAX_RS_COLUMNS`` is
refused before it is built, ``ModelTooLarge``, and the answer is the incumbent with the bounds),
HiGHS gets what is left after loading the model minus the reserve (min(5 s, 10%)), and the
reserve places the master's schedule. Measured (bench_exact, 60 s): unet 0.5 55.6 s (was
74 s), layered:250 0.8 56.9 s (was 102.5 s), layered:500 0.8 56.2 s (was 90 s).

HiGHS options (measured on unet 0.5, 258k columns, 60 s, bench/bench_exact.py --highs): the
default MIP presolve ran 67 s uninterruptibly (total 90 s, nothing found); ``presolve=off``
keeps the limit (dual simplex root LP unfinished at 60 s); ``mip_lp_solver=ipm`` did not
finish the root LP either. So presolve is switched off above ``PRESOLVE_MAX_COLUMNS``.
``mip_rel_gap=0`` and a tiny ``mip_abs_gap`` are kept: HiGHS detects an integral objective
by itself ("objective function is integral with scale 1" on layered graphs). HiGHS overruns
its limit inside root cut separation (layered:250 at 0.9: 118 s for a 25 s limit), so large
masters run under ``backends.solve_highs``'s watchdog (child process, killed 2 s past the
limit; measured 29.2 s for a 30 s ``--time-limit``, with the streamed bound kept). A MIP start
from the incumbent (``MIP_START``) gave no gain and is off by default.
"""
from __future__ import annotations

import itertools
import logging
import time
from dataclasses import replace

from planner.graph import Graph
from planner.params import SolveParams
from planner.progress import Progress
from planner.result import Result, gap_of

from . import model
from .backends import solve_highs
from .bounds import knapsack_bound
from .common import Placed, place_stages, plan_result, setup
from .model import BuildTimeout, build, decode, rs_columns

log = logging.getLogger(__name__)

# incumbent sources: (label, method, ablation flags). The coop ablations earn their place:
# on unet at 0.4 coop fails (fragmentation) while coop without its sliding window plans (40%).
HEURISTICS: tuple[tuple[str, str, dict], ...] = (
    ("coop", "coop", {}),
    ("coop-no-window", "coop", {"sliding_window": False}),
    ("coop-no-partition", "coop", {"partition": False}),
    ("dtr", "dtr", {}),
    ("dte", "dte", {}),
)
# extra HiGHS options for the master (measured in bench/bench_exact.py; empty = HiGHS defaults)
HIGHS_OPTIONS: dict = {}
# Give HiGHS the incumbent's stages (R columns only: a partial start HiGHS completes by a
# sub-MIP) as a MIP start. Measured (bench_exact --models chain:64,chain:128 --ratios 0.5,
# 60 s): same objective and gap with and without (the cutoff already prunes as hard), and the
# completion sub-MIP overran the limit on chain:128 (71.6 s vs 56.5 s). Again with the
# gap-eviction incumbent (bench_exact --mip-start --models layered:100,layered:250 --ratios 0.9,
# 120 s): layered:100 not proven in 117 s (gap 0.37%) against proven in 39-70 s without; layered:250
# gap 0.36% against 0.37%. Off by default.
MIP_START = False
PRESOLVE_MAX_COLUMNS = 150_000  # above this the master runs without HiGHS presolve (see below)
# capacities the incumbent pruning aims at, as fractions of the real one: the first that places
PRUNE_TARGETS = (1.0, 0.97)
# the exchange pass over the incumbent (see _exchange): its share of the time left, capped
EXCHANGE_SHARE = 0.25
EXCHANGE_MAX_S = 30.0
PRUNE_MIN_S = 2.5  # time a pruning pass may take, when the time left allows (see _incumbent)
PLACE_TRY_S = 4.0  # DSA time per gap-eviction candidate (see _gap_incumbent)
# _guided: DSA share of the time left for its schedule; for a schedule that meets the bound
PLACE_SHARE, PLACE_AT_BOUND_SHARE = 0.25, 0.75
# the checkpoint bound (see _checkpoint): how many checkpoints, and its time share
CHECKPOINTS = 10
CHECKPOINT_SHARE = 0.2
CHECKPOINT_MAX_S = 15.0
# Above this many R and S columns the MILP's root LP is no help within the limits measured:
# unet at 0.4 (104,648): unfinished in 60 s and in 10 min, and Checkmate's LP there is 8.04%
# overhead (interior point, 574 s) against the checkpoint MIP's 15.12%; layered:250 at 0.8
# (188k columns): the root LP finished at 45 s with 1369, below the checkpoint MIP's 1379.
# There the checkpoint relaxation gets CHECKPOINT_SHARE_LARGE of the time left instead.
LARGE_RS_COLUMNS = 50_000
CHECKPOINT_SHARE_LARGE = 0.6
# the checkpoint-guided MILP (see _guided): its share of the time left, the checkpoint
# relaxation's share when it runs before the slow incumbent sources (see _early), the label
GUIDED_SHARE = 0.5
EARLY_CHECKPOINT_SHARE = 0.25
GUIDED = "checkpoint-guided MILP"
# _refine: the least time left (s) for another round of checkpoint separation
REFINE_MIN_S = 10.0
# The early guided MILP's cap (s) when the plan read off the relaxation's solution overflows
# the capacity by more than EARLY_GUIDED_OVERFLOW: its windows then miss recomputations the
# plans need, and the time goes better to _refine. Measured: unet at 0.4 (overflow 23%), 600 s:
# the guided MILP ran 295 s for 16.85%; _refine then proved 15.53% in 110 s. resnet50 at 0.5
# (overflow 0.9%): the guided MILP proves the optimum 9.41% (227 s at first, 17.8 s since the
# model's kept values are constants: exact proves it in 28-33 s), so it keeps its share.
# 10 s (was 30, then 15): where the capped run proves (unet at 0.5 and 0.6, overflow 8.6% and
# 7.5%) it takes 2.7 s and 6.1 s since the model's kept values are constants (7-9 s before); at
# 0.4 it spends the whole cap on a 17.1-17.9% plan that the heuristics beat (16.93%).
EARLY_GUIDED_MAX_S = 10.0
EARLY_GUIDED_OVERFLOW = 0.02
# There, with at least this many seconds left, one round of _refine runs instead (before the
# slow incumbent sources): its guided MILP seeks plans at the bound and needs no incumbent.
# Measured on unet at 0.4: at 120 s the round takes 56 s (lifting and the 11-checkpoint MIP
# 33.6 s, the guided MILP 22.4 s) and proves 15.53% at 65 s (104 s before); at 60 s (52 s left)
# its guided MILP timed out and the answer was 22.33% instead of the heuristics' 16.93%.
EARLY_REFINE_MIN_S = 80.0
# ... within this share of the time left. Without it, on inception-v3 at 0.5 with 600 s, the
# round's guided MILP found a schedule at the bound in 147 s that the DSA did not place in its
# 75% share, the slow sources were left 19 s, and the answer was 18.25% (gap 6.95%) where the
# 10-minute study had 13.87% (3.49%).
EARLY_REFINE_SHARE = 0.7
REFINE_RELAXATION_SHARE = 0.6  # of the time left, for each round's relaxation MIP
REFINE_GUIDED_SHARE = 0.6  # of the time left, for the guided MILP when a round's plan does not fit
RELAXED_PLACE_SHARE = 0.5  # of the time left, for placing the relaxation's plan when it fits
RELAXED = "checkpoint relaxation's plan"
FIT_SHARE, FIT_MAX_S = 0.1, 20.0  # relaxed_plan.fit_sequence: share of the time left, cap (s)
LIFT_MAX = 8  # _lifting: candidates whose LP is tried, ...
LIFT_SHARE = 0.1  # ... within this share of the time left


def _incumbent(g: Graph, p, budget: int, params: SolveParams, deadline: float,
               early=None) -> tuple[Result | None, str, dict]:
    """Best validated plan from the plain schedule, the heuristics, gap eviction, or the greedy.
    ``early(best)`` runs right after the heuristics (which take hundredths of a second, while
    the other sources take most of the time limit) and returns (a plan or None, proven): when
    proven, that plan is optimal and the other sources are skipped."""
    from planner import registry

    tried: dict[str, object] = {}

    def share(**flags) -> SolveParams:
        # every incumbent source spends the one time budget (the DSA inside "none" and the
        # heuristics' placements read params.time_limit)
        return replace(params, time_limit=max(0.1, 0.3 * (deadline - time.perf_counter())), **flags)

    res = registry.solve(g, budget, "none", share())
    if res.has_plan:
        return res, "none", {"none": res.objective}
    tried["none"] = res.status
    best: Result | None = None
    src = ""
    seqs: dict[str, list[int]] = {}  # op sequences of the plans found, for the pruning pass
    from .greedy import greedy_plan
    from .improve import ORDERS, prune_recomputations
    from .schedule import build_plan, lifetimes, place
    from .validator_bridge import validated
    cap = p.capacity(budget)

    def as_result(lt, offs) -> Result:
        return validated(g, Result("greedy", "feasible", plan=build_plan(p, lt, offs, budget, "exact"),
                                   objective=lt.cost))

    known = registry.methods()
    if params.warm_start:
        for name, method, flags in HEURISTICS:
            if deadline - time.perf_counter() < 0.1 * params.time_limit:
                tried[name] = "skipped: time limit"
                continue
            if method not in known:
                tried[name] = "not registered"
                continue
            try:
                r = registry.solve(g, budget, method, share(**flags))
            except Exception as exc:  # noqa: BLE001 - a broken heuristic must not sink the exact solve
                tried[name] = f"error: {exc}"[:80]
                continue
            tried[name] = r.objective if r.has_plan else r.status
            if r.has_plan:
                seqs[name] = [st.ref for st in r.plan.steps if st.kind == "compute"]
                if best is None or r.objective < best.objective:
                    best, src = r, name
    if early is not None:
        r, proven, label = early(best)
        if r is not None:
            tried[label] = r.objective
            if best is None or r.objective < best.objective:
                best, src = r, label
        if proven:
            return best, src, tried
    # gap eviction (formulations.gapevict): the only source that plans random layered graphs,
    # where the heuristics and the greedy thrash or get stuck
    r = _gap_incumbent(p, cap, params, min(0.3 * (deadline - time.perf_counter()), 20.0), as_result, tried)
    if r is not None:
        seqs["gap"] = [st.ref for st in r.plan.steps if st.kind == "compute"]
        if best is None or r.objective < best.objective:
            best, src = r, "gap"
    if params.warm_start and deadline - time.perf_counter() >= 0.1 * params.time_limit:
        # DTR on the scalar memory model: where no runtime heuristic fits as addresses, its run
        # often fits as a number (unet at 0.4: 28.9%, peak 0.98 of the capacity); the pruning
        # passes below drop its needless recomputations and place it (17.4%, against 22.3%
        # from coop-no-window, the only heuristic that plans there)
        from planner.heuristics.dtr_ideal import scalar_sequence

        seq = scalar_sequence(g, budget, params)
        tried["dtr-ideal"] = "sequence to prune" if seq is not None else "stuck"
        if seq is not None:
            seqs["dtr-ideal"] = seq
    left = max(0.1, min(0.2 * (deadline - time.perf_counter()), 20.0))
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
    # drop the recomputations each plan does not need (formulations.improve); each pass gets a
    # share of the time left, and its result is placed and validated like any other plan
    for (name, seq), order in itertools.product(seqs.items(), ORDERS):
        label = f"{name}+prune" + ("" if order == ORDERS[0] else f"({order})")
        left = deadline - time.perf_counter()
        if left < 0.1 * params.time_limit:
            tried[label] = "skipped: time limit"
            continue
        # a schedule pruned up to the capacity may not place (fragmentation): prune to a little
        # less, as the greedy does, until it places
        pl = lt = None
        # a pass cut short keeps recomputations it never tried: on unet at 0.5 the full pass
        # over dte's plan takes 1.6 s and gives 12.15%, a 0.9 s one 13.0%
        prune_s = max(0.03 * left, min(PRUNE_MIN_S, 0.1 * left))
        for shrink in PRUNE_TARGETS:
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
    if best is not None and params.warm_start:
        try:
            best, src = _exchange(p, best, src, cap, params, deadline, as_result, tried)
        except Exception as exc:
            log.exception("exact: exchange pass failed")
            tried["exchange"] = f"error: {exc}"[:80]
    return best, src, tried


def _exchange(p, best: Result, src: str, cap: int, params: SolveParams, deadline: float, as_result,
              tried: dict) -> tuple[Result, str]:
    """The incumbent after ``improve.exchange_recomputations`` (a recomputation traded for
    cheaper ones), within ``EXCHANGE_SHARE`` of the time left (at most ``EXCHANGE_MAX_S``):
    each cheaper candidate is placed (60% of the time left, at least ``PLACE_TRY_S``) and
    validated, and the search restarts from the first one that places."""
    from .improve import exchange_recomputations
    from .schedule import place

    left = deadline - time.perf_counter()
    if left < 0.1 * params.time_limit:
        tried["exchange"] = "skipped: time limit"
        return best, src
    stop = time.perf_counter() + min(EXCHANGE_MAX_S, EXCHANGE_SHARE * left)
    seq = [st.ref for st in best.plan.steps if st.kind == "compute"]
    steps = 0
    while time.perf_counter() < stop:
        found = False
        for lt in exchange_recomputations(p, seq, cap, stop):
            # a cheaper schedule sits near the capacity, where placing takes longer (layered:100
            # at 0.8: 561 places in 9 s of CP-SAT, not in 4): the first candidates get most of the time
            left = stop - time.perf_counter()
            pl = place(lt, cap, max(0.1, min(left, max(PLACE_TRY_S, 0.6 * left))), params.seed, params.threads)
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


def _gap_incumbent(p, cap: int, params: SolveParams, seconds: float, as_result, tried: dict) -> Result | None:
    """The cheapest gap-eviction sequence that places, as a validated Result (None: none).
    Every variant's sequence and its pruned form (``formulations.improve``) are candidates;
    they are placed cheapest first, at most ``PLACE_TRY_S`` each, because near the capacity
    the DSA places one sequence in 2-4 s and times out on an equally tight other (measured on
    layered:250 at 0.8: pruned 1391 placed in 3.6 s, unpruned 1392 not in 10 s; layered:500 at
    0.9 the other way round). When none places, again at a little less capacity. The whole
    search spends at most ``seconds``."""
    from .gapevict import gap_sequences
    from .improve import prune_recomputations
    from .schedule import lifetimes, place

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
            pl = place(lt, cap, min(PLACE_TRY_S, left), params.seed, params.threads)
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


def solve_exact(g: Graph, budget: int, params: SolveParams) -> Result:
    s = setup("exact", g, budget, params)
    if isinstance(s, Result):
        return s
    p, cap, deadline = s.p, s.cap, s.deadline
    prog = Progress("exact", s.t0)
    total = float(sum(p.cost))
    kb, kb_at = knapsack_bound(p, cap)
    if kb == float("inf"):
        return Result("exact", "infeasible", backend="bound", message=(
            f"no plan fits: at the first run of op {kb_at} ({g.ops[kb_at].name}) the values that must be "
            f"live (its inputs, and what nothing can recompute later) plus every other value still "
            f"needed exceed the budget even with the cheapest drops (knapsack bound)"))
    prog.note(f"{p.n} ops, capacity {cap} units; looking for an incumbent (plain schedule, heuristics, "
              f"checkpoint-guided MILP, gap eviction, greedy)")
    early_stats: dict = {}
    pre: dict = {}  # what the early phase computed (see _early), reused below

    def early(best):
        return _early(g, p, budget, cap, kb, best, params, deadline, early_stats, pre, prog)

    inc, src, tried = _incumbent(g, p, budget, params, deadline, early=early)
    stats: dict = {"incumbent": src or "none found", "incumbent_costs": tried, **early_stats}
    prog.note(f"incumbent {src}: cost {inc.objective:.6g} (overhead {inc.objective / total - 1:.2%})"
              if inc is not None else "no incumbent found")
    if inc is not None and src == "none":
        plan = replace(inc.plan, method="exact")
        return Result("exact", "optimal", plan=plan, objective=inc.objective, lower_bound=total, gap=0.0,
                      backend="plain schedule", stats={**stats, "reason": "the plain schedule fits"})
    inc_cost = inc.objective if inc is not None else None
    rec = _cost_fixed(p, inc_cost)
    stats["recomputable_ops"] = len(rec)
    # a MILP too large for memory is refused before it is built (model.MAX_RS_COLUMNS); known
    # now, so the time it would have had goes to the checkpoint relaxation instead
    stats["milp_rs_columns"] = rs_columns(p, rec)
    milp_fits = stats["milp_rs_columns"] <= model.MAX_RS_COLUMNS
    log.info("exact: %d ops, incumbent %s (%s), %d recomputable", p.n, inc_cost, src, len(rec))
    cuts: list[list[tuple[int, int]]] = []   # excluded stage schedules: lists of (t, k) with R = 1
    # every op runs at least once, plus what every plan recomputes (formulations.bounds): a
    # bound for every plan that needs no big LP (the MILP's root LP does not finish on unet)
    cb, cb_at = pre["closure"] if "closure" in pre else _closure(p, cap, params, deadline, stats)
    if cb == float("inf"):
        if inc is not None:  # a validated plan outranks the proof: the bound would be wrong
            log.error("closure bound claims op %s infeasible but a plan exists; bound ignored", cb_at)
            cb = 0.0
        else:
            return Result("exact", "infeasible", backend="bound", stats=stats, message=(
                f"no plan fits: at the first run of op {cb_at} ({g.ops[cb_at].name}) the values that must "
                f"be live, with what recomputing the others needs, exceed the budget (closure bound)"))
    bound = total + max(kb, cb)
    windows = None
    if inc_cost is None or inc_cost > bound * (1 + 1e-9):
        ck = pre.get("checkpoint")
        if ck is None or (not milp_fits and ck != float("inf")):
            # not run early, or the MILP is too large: then over more and more checkpoints
            ck2, windows = _checkpoint(p, cap, params, deadline, stats, None if inc_cost is None else inc_cost - total,
                                       everything=not milp_fits, large=stats["milp_rs_columns"] > LARGE_RS_COLUMNS,
                                       first=CHECKPOINTS if ck is None else 2 * CHECKPOINTS, last=pre)
            ck = ck2 if ck is None else max(ck, ck2)
        if ck == float("inf") and inc is None:
            return Result("exact", "infeasible", backend="bound", stats=stats, message=(
                "no plan fits: the checkpoint relaxation (formulations.checkpoints) has no solution"))
        if ck == float("inf") and inc is not None:  # a validated plan outranks the relaxation
            log.error("checkpoint relaxation claims no plan fits but one exists; bound ignored")
        elif ck != float("inf"):
            bound = max(bound, total + ck)
    prog.figures("knapsack, closure and checkpoint bounds", inc.objective if inc is not None else None, bound,
                 force=True)
    stats["knapsack_bound"] = total + kb
    stats["bound_before_milp"] = bound
    if inc_cost is not None and inc_cost <= bound * (1 + 1e-9):
        return _meets_bound(inc, inc_cost, stats)
    if windows and "guided" not in stats:
        got = _guided(g, p, budget, cap, rec, windows, inc_cost, params, deadline, stats, bound=bound)
        if got is not None:
            inc, inc_cost = got, got.objective
            stats["incumbent"] = GUIDED
            tried[GUIDED] = inc_cost
            prog.figures(GUIDED, inc_cost, bound, force=True)
            if inc_cost <= bound * (1 + 1e-9):
                return _meets_bound(inc, inc_cost, stats)
    if pre.get("solution") is not None and (not milp_fits or stats["milp_rs_columns"] > LARGE_RS_COLUMNS):
        # the MILP's root LP is no help at this size (see LARGE_RS_COLUMNS): the time goes to
        # refining the relaxation until its own plan fits (the only plan source left when
        # every other one failed: unet at 0.3)
        inc, bound = _refine(g, p, budget, cap, inc, bound, pre["solution"], params, deadline, stats, prog,
                             pre.get("relaxed_lt"), fresh=pre.get("fresh", False))
        inc_cost = inc.objective if inc is not None else None
        if inc_cost is not None and inc_cost <= bound * (1 + 1e-9):
            return _meets_bound(inc, inc_cost, stats)
    if inc_cost is not None:  # the incumbent may have improved since cost fixing above (see 2.)
        rec &= _cost_fixed(p, inc_cost)
        stats["recomputable_ops"] = len(rec)
        stats["milp_rs_columns"] = rs_columns(p, rec)
    rounds = 0
    while True:
        rounds += 1
        left = deadline - time.perf_counter()
        if left <= 0.05:
            return _stop(inc, inc_cost, bound, stats, "time limit reached")
        try:
            m = build(p, cap, rec, deadline=deadline - min(5.0, 0.1 * params.time_limit))
        except BuildTimeout as exc:
            return _stop(inc, inc_cost, bound, stats, str(exc))
        if m is None:
            return _proven_or_infeasible(inc, inc_cost, stats, "model infeasible before solving")
        _add_cuts(m, cuts)
        if rounds == 1:
            stats["model"] = dict(m.stats)
        # building a large model takes a while; keep time for placing the master's schedule
        # (a schedule found but never placed is no plan at all)
        reserve = min(5.0, 0.1 * params.time_limit)
        left = deadline - reserve - time.perf_counter()
        if left <= 0.05:
            return _stop(inc, inc_cost, bound, stats, "time limit reached while building the model")
        start = None
        if inc is not None and params.warm_start and MIP_START and rounds == 1:
            seq = [st.ref for st in inc.plan.steps if st.kind == "compute"]
            start = stage_start(p, m, seq)
            stats["mip_start"] = "given" if start is not None else "not in the model's schedule class"
        opts = dict(HIGHS_OPTIONS)
        if m.ncols > PRESOLVE_MAX_COLUMNS:
            # measured on unet (258k columns): HiGHS's MIP presolve ran 67 s, cannot be
            # interrupted and overran a 60 s limit by 30 s; without it the limit holds
            opts.setdefault("presolve", "off")
        stats["highs_options"] = opts
        prog.note(f"MILP round {rounds}: {m.ncols} columns, {m.nrows} rows, {len(rec)} recomputable ops, "
                  f"{left:.0f} s left")
        out = solve_highs(m, params, time_limit=left, cutoff=inc_cost, start=start, options=opts, progress=prog)
        prog.figures(f"MILP round {rounds} {out.status}", out.objective if out.objective is not None else inc_cost,
                     out.bound, force=True)
        stats["milp_seconds"] = stats.get("milp_seconds", 0.0) + out.seconds
        stats["nodes"] = stats.get("nodes", 0) + out.nodes
        log.info("exact round %d: %s obj %s bound %s (%.1fs)", rounds, out.status, out.objective, out.bound, out.seconds)
        if out.status == "infeasible":
            # nothing in the model beats the cutoff: the incumbent is optimal (or nothing fits)
            return _proven_or_infeasible(inc, inc_cost, stats, "no schedule beats the incumbent")
        if out.bound is not None:
            bound = out.bound if bound is None else max(bound, out.bound)
        if out.x is None:
            return _stop(inc, inc_cost, bound, stats, f"MILP: {out.status} {out.message}")
        stages = decode(p, m, out.x)
        placed = place_stages(p, stages, cap, deadline, params)
        if placed is None:
            return Result("exact", "error", message="MILP schedule reads a value that is not live (model bug)",
                          stats=stats)
        proven = out.status == "optimal"
        if placed.offsets is not None:
            better = inc_cost is None or placed.lt.cost < inc_cost
            if proven:
                lb = out.objective
                if better:
                    return plan_result("exact", p, placed, budget, "optimal", lb, "highs+dsa",
                                       {**stats, "rounds": rounds, "remat_optimum": out.objective})
                return _incumbent_result(inc, "optimal", inc_cost, stats)
            if better:
                return plan_result("exact", p, placed, budget, "feasible", bound, "highs+dsa",
                                   {**stats, "rounds": rounds}, f"MILP stopped: {out.message}")
            return _stop(inc, inc_cost, bound, stats, f"MILP stopped: {out.message}")
        if not params.addresses and proven:
            return Result("exact", "optimal", objective=None, lower_bound=out.objective, gap=None,
                          backend="highs", stats={**stats, "remat_optimum": out.objective},
                          message=(f"remat-only optimum {out.objective:.6g} proven; its schedule does not place "
                                   f"within the budget (DSA: {placed.status}), so no plan is returned"))
        if placed.status != "infeasible" or not proven:
            return _stop(inc, inc_cost, bound, stats,
                         f"schedule of cost {placed.lt.cost:.6g} not placed (DSA {placed.status})")
        cuts.append([(t, k) for t, st in enumerate(stages) for k in st if k != t])
        stats["nogood_cuts"] = len(cuts)
        log.info("exact: optimal schedule does not place; cut %d added", len(cuts))


def _cost_fixed(p, inc_cost: float | None) -> set[int]:
    """The ops a plan cheaper than ``inc_cost`` may recompute (exact cost fixing, see 2.): those
    whose own cost is below the slack, inc_cost - the cost of every op once; all without one."""
    if inc_cost is None:
        return set(range(p.n))
    total = float(sum(p.cost))
    slack = inc_cost - total
    return {k for k in range(p.n) if p.cost[k] < slack - 1e-9 * max(1.0, total)}


def _early(g: Graph, p, budget: int, cap: int, kb: float, best: Result | None, params: SolveParams,
           deadline: float, stats: dict, pre: dict, prog: Progress) -> tuple[Result | None, bool, str]:
    """The bounds and the checkpoint-guided MILP, run as soon as the (instant) heuristics have
    given what they can: the closure LP, the checkpoint relaxation within
    ``EARLY_CHECKPOINT_SHARE`` of the time left, the plan read off its solution
    (``_relaxed_plan``), then ``_guided`` on its solution. Returns (the plan or None, proven:
    the best plan known meets the bound, the plan's source). What it computes goes to
    ``pre`` (closure, checkpoint bound) for solve_exact. Measured on unet, 60 s: 0.5-0.9 proven
    in 1.6-20 s (the heuristics, gap eviction, pruning and exchange spend 45 s at 0.5 without
    reaching the optimum, and never prove it)."""
    total = float(sum(p.cost))
    cb, cb_at = _closure(p, cap, params, deadline, stats)
    pre["closure"] = (cb, cb_at)
    if cb == float("inf"):
        return None, False, GUIDED  # solve_exact decides (infeasible, or a plan outranks the bound)
    bound = total + max(kb, cb)
    inc_cost = best.objective if best is not None else None
    if inc_cost is not None and inc_cost <= bound * (1 + 1e-9):
        return None, True, GUIDED
    slack = None if inc_cost is None else inc_cost - total
    ck, windows = _checkpoint(p, cap, params, deadline, stats, slack, share=EARLY_CHECKPOINT_SHARE, last=pre)
    pre["checkpoint"] = ck
    if ck == float("inf"):
        return None, False, GUIDED
    bound = max(bound, total + ck)
    prog.figures("closure and checkpoint bounds", inc_cost, bound, force=True)
    if inc_cost is not None and inc_cost <= bound * (1 + 1e-9):
        return None, True, GUIDED
    relaxed = lt = None
    if pre.get("solution") is not None:
        # a fitting plan of the relaxation's cost is optimal; a cheaper one is a better cutoff
        relaxed, lt = _relaxed_plan(g, p, budget, cap, *pre["solution"], best, params, deadline, stats)
        pre["relaxed_lt"] = lt
        if relaxed is not None:
            prog.figures(RELAXED, relaxed.objective, bound, force=True)
            if relaxed.objective <= bound * (1 + 1e-9):
                return relaxed, True, RELAXED
            inc_cost = relaxed.objective
    got = None
    far = lt is not None and lt.peak_units > cap * (1 + EARLY_GUIDED_OVERFLOW)
    if windows:
        got = _guided(g, p, budget, cap, _cost_fixed(p, inc_cost), windows, inc_cost, params,
                      min(deadline, time.perf_counter() + EARLY_GUIDED_MAX_S / GUIDED_SHARE) if far else deadline,
                      stats, bound=bound)
        if got is not None:
            prog.figures(GUIDED, got.objective, bound, force=True)
            if got.objective <= bound * (1 + 1e-9):
                return got, True, GUIDED
    plans = [(r, label) for r, label in ((got, GUIDED), (relaxed, RELAXED), (best, None)) if r is not None]
    first, label = min(plans, key=lambda c: c[0].objective) if plans else (None, RELAXED)
    if (far and pre.get("solution") is not None and deadline - time.perf_counter() >= EARLY_REFINE_MIN_S
            and rs_columns(p, _cost_fixed(p, inc_cost)) > LARGE_RS_COLUMNS):
        # the relaxation's windows miss recomputations the plans need, and the MILP is too
        # large to prove anything: one round of _refine now, whose guided MILP needs no
        # incumbent (it seeks plans at the bound), before the slow incumbent sources
        # within EARLY_REFINE_SHARE of the time left: the slow sources still get the rest
        until = time.perf_counter() + EARLY_REFINE_SHARE * (deadline - time.perf_counter())
        r, lifted = _refine(g, p, budget, cap, first, bound, pre["solution"], params, until, stats, prog, lt,
                            rounds=1, state=pre)
        pre["checkpoint"] = max(ck, lifted - total)
        refined = stats.pop("incumbent", None)  # _incumbent names the source
        stats.pop("incumbent_costs", None)
        if r is not None and r is not first:
            return r, r.objective <= lifted * (1 + 1e-9), refined
    if label is None:  # the heuristics' plan is still the best: nothing new to report
        return None, False, RELAXED
    return first, False, label


def _guided(g: Graph, p, budget: int, cap: int, rec: set[int], windows: dict[int, set[int]],
            inc_cost: float | None, params: SolveParams, deadline: float, stats: dict,
            start: Result | None = None, share: float = 0.0, bound: float | None = None,
            at_bound: bool = False) -> Result | None:
    """A plan from Checkmate's MILP *restricted* to where the checkpoint relaxation's solution
    recomputes (``windows``: op -> stages, the intervals in which it runs again), within
    ``GUIDED_SHARE`` of the time left, below the incumbent's cost; placed by the DSA and
    validated. None when it finds nothing cheaper. The restriction's optimum is no bound: only
    its plan counts (an upper bound), and it is proven optimal when it meets the bound.
    Why it works: the relaxation's recomputations are mostly the right ones, and the model
    restricted to them is small (unet at 0.5: 1,305 R columns, against 7,803 for the same
    58 ops in every stage).
    ``start``: a plan (the incumbent) whose recomputations join the windows and which HiGHS
    gets as a MIP start, so the search improves on it instead of looking for a first solution
    below the cutoff (unet at 0.4, 300 s: the windows of a 15-checkpoint relaxation found
    nothing below 16.93% alone; with the 16.40% plan's stages and start, 16.09%). ``share``:
    of the time left (default ``GUIDED_SHARE``). ``bound``: the best bound known; a solution
    that meets it ends the search (its own proof could only repeat that bound). ``at_bound``:
    only a plan that meets ``bound`` is sought (the cutoff is the bound, so HiGHS prunes every
    node above it; ``start`` is then ignored: its MIP start would fail the cutoff, and the
    recomputations of a poor plan only enlarge the model: unet at 0.4, those of the 40% plan
    of the fast heuristics: 90 ops instead of 78, not found in 45 s), on the windows widened to
    the first reader after each
    (``checkpoints.widen_windows``). Measured on unet at 0.4 on the 11-checkpoint windows:
    15.53% in 8.9 s with no incumbent at all, against 20.4 s with the 16.93% incumbent as
    cutoff and 120 s (not found) with the 40% one the fast heuristics give."""
    from .model import ModelTooLarge
    from .validator_bridge import validated

    t0 = time.perf_counter()
    stop = t0 + (share or GUIDED_SHARE) * max(0.0, deadline - t0)
    at_bound = at_bound and bound is not None
    if at_bound:
        from .checkpoints import widen_windows

        # a plan at the bound may recompute an op that costs exactly the slack
        total = float(sum(p.cost))
        rec = {k for k in rec if p.cost[k] <= bound - total + 1e-9 * max(1.0, total)}
        windows = widen_windows(p, windows)
    win = {k: set(w) for k, w in windows.items() if k in rec}
    seq = [st.ref for st in start.plan.steps if st.kind == "compute"] if start is not None else None
    if seq is not None and not at_bound:
        for k, stage in _recompute_stages(seq):
            if k in rec:
                win.setdefault(k, set()).add(stage)
    info: dict = {"ops": len(win), "stages": sum(len(w) for w in win.values())}
    stats["guided"] = info
    if not win:
        info["status"] = "nothing to recompute"
        return None
    try:
        m = build(p, cap, set(win), deadline=stop, stages=win)
    except (BuildTimeout, ModelTooLarge) as exc:
        info["status"] = str(exc)
        return None
    if m is None:
        info["status"] = "infeasible before solving"
        return None
    info["columns"] = m.ncols
    opts = dict(HIGHS_OPTIONS)
    if m.ncols > PRESOLVE_MAX_COLUMNS:
        opts.setdefault("presolve", "off")
    mip_start = stage_start(p, m, seq) if seq is not None and not at_bound else None
    cutoff = bound * (1 + 1e-9) if at_bound else inc_cost
    if at_bound:
        info["at_bound"] = True
    elif mip_start is not None:
        info["start"] = True
        cutoff = inc_cost * (1 + 1e-7)  # the start itself must pass the cutoff; not returned unless cheaper
    out = solve_highs(m, params, time_limit=max(0.1, stop - time.perf_counter()), cutoff=cutoff, options=opts,
                      start=mip_start, target=None if bound is None else bound * (1 + 1e-9))
    info["status"] = out.status
    info["seconds"] = round(time.perf_counter() - t0, 3)
    log.info("exact: guided MILP (%d ops, %d columns): %s %s in %.1fs", len(win), m.ncols, out.status,
             out.objective, info["seconds"])
    if out.x is None:
        return None
    # a schedule at the bound only needs its addresses to end the search: it gets most of the
    # time left (unet at 0.4, 120 s: an optimal guided schedule with 20 s left got 5 s, every
    # DSA run timed out, and the answer stayed feasible 16.93%; alone the same instance
    # places in 4.5-20 s, seeds 0-2)
    at_bound = bound is not None and out.objective is not None and out.objective <= bound * (1 + 1e-9)
    share_place = PLACE_AT_BOUND_SHARE if at_bound else PLACE_SHARE
    placed = place_stages(p, decode(p, m, out.x), cap,
                          time.perf_counter() + max(PLACE_TRY_S, share_place * (deadline - time.perf_counter())),
                          params)
    info["placement"] = "none" if placed is None else placed.status
    if placed is None or placed.offsets is None or (inc_cost is not None and placed.lt.cost >= inc_cost):
        return None
    res = validated(g, plan_result("exact", p, placed, budget, "feasible", None, "highs+dsa", {}))
    if not res.has_plan:
        log.error("guided plan failed validation: %s", res.message)
        return None
    info["objective"] = res.objective
    return res


def _guided_to_bound(g: Graph, p, budget: int, cap: int, windows: dict[int, set[int]], inc: Result | None,
                     params: SolveParams, deadline: float, stats: dict, bound: float) -> Result | None:
    """The guided MILP seeking a plan at ``bound`` (``_guided``'s ``at_bound``) within
    ``REFINE_GUIDED_SHARE`` of the time left; when it proves that its windows hold none, the
    guided MILP again below the incumbent (from it: its recomputations join the windows and it is
    the MIP start), or for any plan when there is none yet: a plan above the bound still beats
    no plan (unet at 0.3) or a worse one. ``stats["guided_at_bound"]`` keeps the first run's
    figures."""
    inc_cost = inc.objective if inc is not None else None
    got = _guided(g, p, budget, cap, _cost_fixed(p, inc_cost), windows, inc_cost, params, deadline, stats,
                  share=REFINE_GUIDED_SHARE, bound=bound, at_bound=True)
    stats["guided_at_bound"] = stats.get("guided")
    if (got is None and (stats.get("guided") or {}).get("status") == "infeasible"
            and deadline - time.perf_counter() > REFINE_MIN_S):
        got = _guided(g, p, budget, cap, _cost_fixed(p, inc_cost), windows, inc_cost, params, deadline, stats,
                      start=inc, share=REFINE_GUIDED_SHARE, bound=bound)
    return got


def _refine(g: Graph, p, budget: int, cap: int, inc: Result | None, bound: float,
            solution: tuple[list[int], list[list[int]]], params: SolveParams, deadline: float, stats: dict,
            prog: Progress, first_lt=None, rounds: int | None = None, state: dict | None = None,
            fresh: bool = False) -> tuple[Result | None, float]:
    """Rounds that tighten the checkpoint relaxation until its own solution is a plan. Each
    round: (1) the plan read off the relaxation's solution (``formulations.relaxed_plan``);
    when it fits and places it costs the relaxation's optimum, so it is proven optimal;
    (2) otherwise new checkpoints where that plan overflows, where one recomputation serves
    several first runs (``checkpoints.shared_recomputations``) and where the incumbent pays
    more than the solution (``checkpoints.separating_checkpoints``), of which the one that
    lifts the LP most joins (``_lifting``); (3) the relaxation's MIP again on the new set, the
    incumbent as cutoff (its bound counts, the MIP's dual bound too when it stops early): (2)
    and (3) are ``_tighten``; (4) when its plan does not fit, the guided MILP on its windows,
    widened, seeking a plan at the bound (``_guided``'s ``at_bound``). Stops when proven, when nothing separates, or below
    ``REFINE_MIN_S`` left. ``inc`` may be None (no plan yet: no cutoff, nothing to separate
    against); ``first_lt``: the lifetimes of ``solution``'s plan, when the early phase tried
    it. ``rounds``: at most that many tightening rounds, each followed by the guided MILP only
    when the relaxation's MIP was solved to optimality (the windows of an unfinished one's
    solution do not lead to the optimum: unet at 0.4, 8 and 16 s solutions, nothing in 60 s).
    ``state`` (a dict) gets the last solution as ``state["solution"]`` and ``state["fresh"]``
    (its windows not yet through the guided MILP), for a later call (``fresh``). Returns
    (best plan or None, bound).
    Measured on unet at 0.4 (``--time-limit 600``): the 10 default checkpoints' solution
    (15.12%) overflows by 23% around first runs 132 to 138 and 207 to 216 (fitted); of 9
    candidates only 132 lifts the LP (14.46% to 14.66%); the 11-checkpoint MIP, cutoff at the
    16.93% incumbent, is 15.53% in 24-28 s (47-60 s with the 10 as a coarse level); its plan
    still overflows (8.6-11.5%), and the guided MILP started from the incumbent reaches 15.53%
    in 9-12 s (16-20 s before the model's kept values became constants; it stops there:
    ``bound``), or, on another optimal solution's windows, takes
    47-55 s and its plan does not place. By hand, other
    optimal solutions of the same MIP give a plan that fits once fitted (DSA 22.5 s), and with
    216 added (its overflow) a 12-checkpoint one fits as read off (DSA 54 s)."""
    from .checkpoints import recompute_windows

    total = float(sum(p.cost))
    cps, runs = solution
    base = cps
    done = 0  # tightening rounds

    def cost(r):
        return r.objective if r is not None else None

    def adopt(r: Result | None, label: str) -> bool:
        """Take ``r`` when it is cheaper; True when the best plan now meets the bound."""
        nonlocal inc
        if r is None or (inc is not None and r.objective >= inc.objective):
            return False
        inc = r
        stats["incumbent"] = label
        stats.setdefault("incumbent_costs", {})[label] = r.objective
        prog.figures(label, inc.objective, bound, force=True)
        return inc.objective <= bound * (1 + 1e-9)

    def guided(cps: list[int], runs: list[list[int]]) -> bool:
        """``_guided_to_bound`` on the windows of ``runs``; True when proven."""
        return adopt(_guided_to_bound(g, p, budget, cap, recompute_windows(cps, p.n, runs), inc, params, deadline,
                                      stats, bound), GUIDED)

    while deadline - time.perf_counter() > REFINE_MIN_S and (inc is None or inc.objective > bound * (1 + 1e-9)):
        # with an incumbent to start from, the guided MILP goes first: placing the relaxation's
        # plan can take minutes where its peak meets the capacity (unet at 0.4, one of the optimal
        # 11-checkpoint solutions: a DSA timeout after 89.6 s, where the guided MILP then reached
        # the optimum in 17.7 s)
        first_guided = fresh and inc is not None
        if first_guided and guided(cps, runs):
            break
        if not fresh and first_lt is not None:
            got, lt = None, first_lt  # tried by the early phase
        else:
            got, lt = _relaxed_plan(g, p, budget, cap, cps, runs, inc, params, deadline, stats)
        if got is not None:
            if adopt(got, RELAXED):
                break
        elif fresh and not first_guided and guided(cps, runs):
            break
        cps, new_runs, val = _tighten(p, cap, cps, base, runs, lt, inc, params, deadline, stats)
        done += 1
        if val is None:
            break
        if val == float("inf"):  # a validated plan outranks the relaxation
            log.error("refined checkpoint relaxation claims no plan fits but one exists; stopped")
            break
        bound = max(bound, total + val)
        prog.figures(f"refined checkpoints ({len(cps)})", cost(inc), bound, force=True)
        if new_runs is None or (inc is not None and inc.objective <= bound * (1 + 1e-9)):
            break
        runs = new_runs
        fresh = True
        if state is not None:
            state.update(solution=(cps, runs), fresh=True, relaxed_lt=None)
        if rounds is not None and done >= rounds:
            # the last round's windows: through the guided MILP only when its MIP was optimal
            if stats["checkpoint_rounds"][-1][3] == "Optimal" and deadline - time.perf_counter() > REFINE_MIN_S:
                proven = guided(cps, runs)
                if state is not None:
                    state["fresh"] = False
                if proven:
                    break
            break
    return inc, bound


def _tighten(p, cap: int, cps: list[int], base: list[int], runs: list[list[int]], lt, inc: Result | None,
             params: SolveParams, deadline: float, stats: dict) -> tuple[list[int], list[list[int]] | None,
                                                                         float | None]:
    """One round of ``_refine``'s tightening: the candidate checkpoints (where the plan read off
    ``runs`` overflows, its lifetimes ``lt``; where one recomputation serves several first runs;
    where ``inc`` pays more than the solution), of which the one that lifts the LP most joins
    (``_lifting``, with ``base`` and ``cps`` as coarse levels), then the relaxation's MIP on the
    new set, with ``inc`` as cutoff, within ``REFINE_RELAXATION_SHARE`` of the time left.
    Returns (the new checkpoints, the MIP's solution or None, the bound above every op once:
    None when no candidate is left, inf when the relaxation says nothing fits)."""
    from .checkpoints import lp_then_mip, separating_checkpoints, shared_recomputations
    from .relaxed_plan import overflow_checkpoints

    total = float(sum(p.cost))
    cands = ((overflow_checkpoints(lt, cps, cap) if lt is not None else [])
             + shared_recomputations(p, cps, runs, limit=1))
    if inc is not None:
        seq = [st.ref for st in inc.plan.steps if st.kind == "compute"]
        cands += separating_checkpoints(cps, runs, p.cost, seq)
    cands = list(dict.fromkeys(k for k in cands if k not in cps))
    if not cands:
        stats["refine"] = "nothing separates"
        return cps, None, None
    coarse = [base] if cps == base else [base, cps]
    new, lift_lp = _lifting(p, cap, cps, cands, coarse, params, deadline, stats)
    log.info("exact: refine: checkpoint %s of candidates %s added to %s", new, cands, cps)
    cps = sorted(set(cps) | {new})
    # the relaxation's MIP gets a share of the time left: placing its plan, or the guided
    # MILP, needs the rest (the bound of an unfinished MIP counts). Without the coarse
    # levels: they lift the LP (which chose the checkpoint, and whose value counts) but
    # slow the MIP down (unet at 0.4, 16.93% cutoff: 11 checkpoints 24-28 s alone against
    # 47-60 s with the 10 as a coarse level, seeds 0-3; 12 checkpoints 43 s against 77 s)
    stop = time.perf_counter() + REFINE_RELAXATION_SHARE * (deadline - time.perf_counter())
    out = lp_then_mip(p, cap, cps, lp_time=max(0.01, stop - time.perf_counter()), deadline=stop,
                      threads=params.threads, seed=params.seed,
                      cutoff=inc.objective - total if inc is not None else None)
    lp = max(out["lp"][0], lift_lp)
    mip, mip_status = out.get("mip", (None, None))
    stats.setdefault("checkpoint_rounds", []).append((len(cps), lp, mip, mip_status))
    val = max(lp, mip if mip is not None else 0.0)
    if val != float("inf"):
        stats["checkpoint_best"] = max(stats.get("checkpoint_best", 0.0), val)
    return cps, out.get("runs"), val


def _relaxed_plan(g: Graph, p, budget: int, cap: int, cps: list[int], runs: list[list[int]], inc: Result | None,
                  params: SolveParams, deadline: float, stats: dict):
    """The plan read off the relaxation's solution (``formulations.relaxed_plan``), placed
    within ``RELAXED_PLACE_SHARE`` of the time left and validated: (the plan when it is
    cheaper than ``inc``, else None; its lifetimes, for ``overflow_checkpoints``)."""
    from .relaxed_plan import fit_sequence, relaxed_sequence
    from .schedule import lifetimes, place
    from .validator_bridge import validated

    seq = relaxed_sequence(p, cps, runs)
    lt = lifetimes(p, seq)
    info: dict = {"checkpoints": len(cps)}
    stats.setdefault("relaxed_plans", []).append(info)
    if lt is None:  # relaxed_sequence runs what it reads: a bug, but no reason to stop
        log.error("the relaxation's plan reads a value it never computed")
        info["status"] = "not runnable"
        return None, None
    info.update(cost=lt.cost, lazy_peak_units=lt.peak_units)
    if lt.peak_units > cap and (inc is None or lt.cost < inc.objective):
        t0 = time.perf_counter()
        seq = fit_sequence(p, seq, cps, cap, t0 + min(FIT_MAX_S, FIT_SHARE * (deadline - t0)))
        lt = lifetimes(p, seq)
        info["fit_seconds"] = round(time.perf_counter() - t0, 3)
    info["peak_units"] = lt.peak_units
    if lt.peak_units > cap:
        info["status"] = "over capacity"
        return None, lt
    if inc is not None and lt.cost >= inc.objective:
        info["status"] = "not cheaper"
        return None, lt
    t0 = time.perf_counter()
    pl = place(lt, cap, max(PLACE_TRY_S, RELAXED_PLACE_SHARE * (deadline - t0)), params.seed, params.threads)
    info.update(status=pl.status, place_seconds=round(time.perf_counter() - t0, 3))
    log.info("exact: the relaxation's plan (%d checkpoints, cost %.6g) fits; DSA %s in %.1fs", len(cps), lt.cost,
             pl.status, time.perf_counter() - t0)
    if pl.offsets is None:
        return None, lt
    res = validated(g, plan_result("exact", p, Placed(lt, pl.offsets, pl.status, pl.solver), budget, "feasible",
                                   None, "relaxed plan+dsa", {}))
    if not res.has_plan:
        log.error("the relaxation's plan failed validation: %s", res.message)
        info["status"] = "invalid"
        return None, lt
    return res, lt


def _lifting(p, cap: int, cps: list[int], cands: list[int], coarse: list[list[int]], params: SolveParams,
             deadline: float, stats: dict) -> tuple[int, float]:
    """Of ``cands``, the checkpoint whose LP (``cps`` and it, with ``coarse``) is highest, when
    above the LP without it; the first candidate when none lifts it (the MIP may still rise).
    Returns (that checkpoint, the highest LP: a bound).
    At most ``LIFT_MAX`` candidates, within ``LIFT_SHARE`` of the time left. Why: on unet at
    0.4 only one of the nine candidates (132) lifts the LP, and it alone lifts the MIP from 15.12% to
    the optimum 15.53% (24-28 s); the candidate that scores highest by shared cost (207) leaves the
    LP and nearly the MIP where they were (15.20%, 78 s, with the 10 as a coarse level)."""
    from .checkpoints import checkpoint_bound

    stop = time.perf_counter() + LIFT_SHARE * max(0.0, deadline - time.perf_counter())

    def lp(checkpoints: list[int], levels: list[list[int]]) -> float:
        return checkpoint_bound(p, cap, checkpoints, time_limit=max(0.01, stop - time.perf_counter()),
                                threads=params.threads, seed=params.seed, coarse=levels)[0]

    base = lp(cps, [c for c in coarse if c != cps])
    tol = 1e-9 * max(1.0, float(sum(p.cost)))
    best, best_lp = None, base
    tried = {}
    for c in cands[:LIFT_MAX]:
        if time.perf_counter() >= stop:
            break
        tried[c] = lp(sorted(set(cps) | {c}), coarse)
        if tried[c] > best_lp + tol:
            best, best_lp = c, tried[c]
    stats.setdefault("lifting", []).append({"base_lp": base, "candidates": tried, "chosen": best})
    return (best if best is not None else cands[0]), best_lp


def _closure(p, cap: int, params: SolveParams, deadline: float, stats: dict) -> tuple[float, int | None]:
    """The closure LP bound within a tenth of the time left (at most 20 s)."""
    from .bounds import closure_bound

    t0 = time.perf_counter()
    budget_s = min(20.0, 0.1 * max(0.0, deadline - t0))
    cb, at, solved = closure_bound(p, cap, t0 + budget_s)
    stats["closure_bound_ops"] = solved
    stats["closure_bound_seconds"] = round(time.perf_counter() - t0, 3)
    return cb, at


def _checkpoint(p, cap: int, params: SolveParams, deadline: float, stats: dict, slack: float | None,
                everything: bool = False, large: bool = False, share: float | None = None,
                first: int | None = None, last: dict | None = None) -> tuple[float, dict[int, set[int]] | None]:
    """The checkpoint relaxation's bound (``formulations.checkpoints``): its LP over
    ``CHECKPOINTS`` of the tightest ops, then the same model as a MIP, whose dual bound
    counts when it stops early, within ``CHECKPOINT_SHARE`` of the time left (at most
    ``CHECKPOINT_MAX_S``). Measured on unet at 0.4: closure 13.67%, LP 14.46% (0.1 s), MIP
    15.12% proven in 6.7 s. ``slack``: the incumbent's recomputation cost (the MIP stops
    once its bound reaches it: the incumbent is then optimal). ``everything``: no MILP
    follows (too large for memory), so the relaxation gets all the time left, less a
    second, and while each MIP is solved to optimality with time to spare it is solved again
    over twice as many checkpoints (the best bound counts: each one is valid). ``large``: the
    MILP that follows has more than ``LARGE_RS_COLUMNS`` R and S columns, where its root LP
    is weaker than this relaxation or does not finish, so this one gets ``CHECKPOINT_SHARE_LARGE``
    of the time left, without the cap. ``share``: that fraction of the time left instead.
    ``first``: the checkpoints of the first round (default ``CHECKPOINTS``). Returns (bound, the recomputation windows of
    the last MIP solution found: ``checkpoints.recompute_windows``, None without one); ``last``
    gets that solution as ``last["solution"] = (checkpoints, runs)`` (for ``_refine``)."""
    from .checkpoints import choose_checkpoints, lp_then_mip

    t0 = time.perf_counter()
    if share is not None:
        stop = t0 + share * max(0.0, deadline - t0)
    elif everything:
        stop = deadline - min(1.0, 0.05 * max(0.0, deadline - t0))
    elif large:
        stop = t0 + CHECKPOINT_SHARE_LARGE * max(0.0, deadline - t0)
    else:
        stop = t0 + min(CHECKPOINT_MAX_S, CHECKPOINT_SHARE * max(0.0, deadline - t0))
    best = 0.0
    windows = None
    m = first or CHECKPOINTS
    # rounds of an earlier call (the early phase's, see _early) count too: one list, one best
    rounds = stats.setdefault("checkpoint_rounds", [])
    best = max([0.0] + [max(r[1], r[2] or 0.0) for r in rounds])
    while True:
        cps = choose_checkpoints(p, cap, m)
        if not cps or (rounds and len(cps) <= rounds[-1][0]):
            break  # no checkpoint, or no more than the last round had
        out = lp_then_mip(p, cap, cps, lp_time=max(0.01, stop - time.perf_counter()), deadline=stop,
                          threads=params.threads, seed=params.seed, cutoff=slack)
        lp = out["lp"][0]
        mip, mip_status = out.get("mip", (None, None))
        if not rounds:
            stats["checkpoints"] = len(cps)
            stats["checkpoint_lp"] = lp
            if mip is not None:
                stats["checkpoint_mip"], stats["checkpoint_mip_status"] = mip, mip_status
        rounds.append((len(cps), lp, mip, mip_status))
        if out.get("windows") is not None:
            windows = out["windows"]
            if last is not None:
                last["solution"] = (out["checkpoints"], out["runs"])
        best = max(best, lp, mip if mip is not None else 0.0)
        if (not everything or lp == float("inf") or mip_status != "Optimal"
                or (slack is not None and best >= slack) or stop - time.perf_counter() < 1.0):
            break
        m *= 2
    stats.setdefault("checkpoints", 0)
    stats["checkpoint_best"] = best
    stats["checkpoint_seconds"] = round(stats.get("checkpoint_seconds", 0.0) + time.perf_counter() - t0, 3)
    return best, windows


def _recompute_stages(seq: list[int]) -> list[tuple[int, int]]:
    """(op, stage) of every recomputation in ``seq`` (ops in captured order of first runs), in
    the stages of Checkmate's model: the stage of a recomputation is the next first run."""
    out = []
    done: set[int] = set()
    for k in seq:
        if k in done:
            out.append((k, len(done)))
        else:
            done.add(k)
    return out


def stage_start(p, m, seq: list[int]) -> dict[int, float] | None:
    """A partial MIP start (every R column) from an op sequence in captured order with
    recomputations: stage t holds the recomputations after the first computation of op t-1 and
    up to that of op t; what runs after the last first computation is stage n. None when the
    sequence is not in Checkmate's schedule class as modelled (an op run twice in one stage, or
    a recomputation the model has no column for, e.g. one excluded by cost fixing)."""
    n = p.n
    stage = 0
    seen: set[tuple[int, int]] = set()
    done = [False] * n
    for k in seq:
        if not done[k]:
            if k != stage:
                return None  # first computations out of captured order
            done[k] = True
            stage += 1
            continue
        key = (stage, k)
        if key in seen or key not in m.R:
            return None
        seen.add(key)
    start = {col: (1.0 if key in seen else 0.0) for key, col in m.R.items()}
    return start


def _add_cuts(m, cuts: list[list[tuple[int, int]]]) -> None:
    """sum over R=1 of (1 - R) + sum over R=0 of R >= 1, on the R columns of the model."""
    for on in cuts:
        ons = set(on)
        terms = []
        rhs = 1.0
        for key, col in m.R.items():
            if key in ons:
                terms.append((col, -1.0))
                rhs -= 1.0
            else:
                terms.append((col, 1.0))
        m.row(terms, rhs, float("inf"))


def _incumbent_result(inc: Result, status: str, inc_cost: float, stats: dict, bound: float | None = None,
                      message: str = "") -> Result:
    plan = replace(inc.plan, method="exact")
    lb = inc_cost if status == "optimal" else bound
    if lb is not None:
        lb = min(lb, inc_cost)
    return Result("exact", status, plan=plan, objective=inc_cost, lower_bound=lb,
                  gap=0.0 if status == "optimal" else gap_of(inc_cost, lb), backend="highs+dsa",
                  message=message, stats={**stats, "returned": "incumbent"})


def _meets_bound(inc: Result, inc_cost: float, stats: dict) -> Result:
    """The incumbent, proven optimal by a bound it meets (``stats["incumbent"]`` names its source)."""
    why = ("the guided plan meets the checkpoint bound" if stats["incumbent"] == GUIDED
           else "incumbent meets the lower bound")
    return _incumbent_result(inc, "optimal", inc_cost, {**stats, "reason": why})


def _proven_or_infeasible(inc: Result | None, inc_cost: float | None, stats: dict, why: str) -> Result:
    if inc is not None:
        return _incumbent_result(inc, "optimal", inc_cost, stats, message=why)
    return Result("exact", "infeasible", backend="highs", stats=stats,
                  message="no schedule fits the budget (MILP infeasible)")


def _stop(inc: Result | None, inc_cost: float | None, bound: float | None, stats: dict, why: str) -> Result:
    if inc is not None:
        return _incumbent_result(inc, "feasible", inc_cost, stats, bound, why)
    return Result("exact", "timeout", lower_bound=bound, backend="highs", stats=stats, message=why)
