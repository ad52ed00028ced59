"""Lower bounds for ``exact``: the closure LP, then the checkpoint relaxation (LP, then MIP)
over more checkpoints as time allows, and one round of tightening it (a new checkpoint chosen
by how much it lifts the LP). See docs/exact.md for the model and why each share."""
from __future__ import annotations

import logging
import time

from planner.result import Result, Status

from .state import CheckpointRound, Context, RelaxationState

log = logging.getLogger(__name__)


def closure(ctx: Context, deadline: float, stats: dict) -> tuple[float, int | None]:
    """The closure LP bound (``formulations.bounds``) within its share of the time left."""
    from ..bounds import closure_bound

    t = ctx.tuning
    t0 = time.perf_counter()
    budget_s = min(t.closure_max_s, t.closure_share * max(0.0, deadline - t0))
    cb, at, solved = closure_bound(ctx.p, ctx.cap, t0 + budget_s)
    stats["closure_bound_ops"] = solved
    stats["closure_bound_seconds"] = round(time.perf_counter() - t0, 3)
    return cb, at


def checkpoint(ctx: Context, deadline: float, state: RelaxationState, stats: dict, slack: float | None, *,
               everything: bool = False, large: bool = False, share: float | None = None,
               first: int | None = None, start: Result | None = None) -> tuple[float, dict[int, set[int]] | None]:
    """The checkpoint relaxation's bound (``formulations.checkpoints``): its LP over the
    tightest ops, then the same model as a MIP whose dual bound counts when it stops early.
    ``slack``: the incumbent's recomputation cost (the MIP stops once its bound reaches it).
    The time: ``share`` of the time left when given; ``everything`` (no MILP follows): all of
    it less a second, re-solving over twice as many checkpoints while each MIP is optimal;
    ``large`` (the MILP's root LP would not help): ``checkpoint_share_large``; else
    ``checkpoint_share``, capped. ``first``: checkpoints of the first round. Rounds of earlier
    calls (``state``) count: one list, one best. ``start``: the plan (the one ``slack`` comes
    from) read into each MIP as its start when ``relaxation_mip_start``. Returns (bound, the recomputation windows of
    the last MIP solution: ``checkpoints.recompute_windows``, None without one); ``state``
    keeps that solution."""
    from ..checkpoints import choose_checkpoints, lp_then_mip

    t = ctx.tuning
    t0 = time.perf_counter()
    if share is not None:
        stop = t0 + share * max(0.0, deadline - t0)
    elif everything:
        stop = deadline - min(1.0, 0.05 * max(0.0, deadline - t0))
    elif large:
        stop = t0 + t.checkpoint_share_large * max(0.0, deadline - t0)
    else:
        stop = t0 + min(t.checkpoint_max_s, t.checkpoint_share * max(0.0, deadline - t0))
    windows = None
    seq = ([st.ref for st in start.plan.steps if st.kind == "compute"]
           if start is not None and t.relaxation_mip_start else None)
    m = first or t.checkpoints
    rounds = state.rounds
    best = max([0.0] + [max(r.lp, r.mip or 0.0) for r in rounds])
    while True:
        cps = choose_checkpoints(ctx.p, ctx.cap, m)
        if not cps or (rounds and len(cps) <= rounds[-1].checkpoints):
            break  # no checkpoint, or no more than the last round had
        out = lp_then_mip(ctx.p, ctx.cap, cps, lp_time=max(0.01, stop - time.perf_counter()), deadline=stop,
                          threads=ctx.params.threads, seed=ctx.params.seed, cutoff=slack, start=seq)
        if "start" in out:
            stats.setdefault("checkpoint_starts", []).append(out["start"])
        lp = out["lp"][0]
        mip, mip_status = out.get("mip", (None, None))
        if not rounds:
            stats["checkpoints"] = len(cps)
            stats["checkpoint_lp"] = lp
            if mip is not None:
                stats["checkpoint_mip"], stats["checkpoint_mip_status"] = mip, mip_status
        state.record(CheckpointRound(len(cps), lp, mip, mip_status), stats)
        if out.get("windows") is not None:
            windows = out["windows"]
            state.solution = (out["checkpoints"], out["runs"])
            state.relaxed_lt = None  # the plan read off an older solution is not this one's
        best = max(best, lp, mip if mip is not None else 0.0)
        if (not everything or lp == float("inf") or mip_status != Status.OPTIMAL
                or (slack is not None and best >= slack) or stop - time.perf_counter() < 1.0):
            break
        m *= 2
    stats.setdefault("checkpoints", 0)
    state.best = best
    stats["checkpoint_best"] = best
    state.seconds = round(state.seconds + time.perf_counter() - t0, 3)
    stats["checkpoint_seconds"] = state.seconds
    return best, windows


def lifting(ctx: Context, cps: list[int], cands: list[int], coarse: list[list[int]], deadline: float,
            stats: dict) -> tuple[int, float]:
    """Of ``cands``, the checkpoint whose LP (``cps`` and it, with ``coarse`` levels) is
    highest, when above the LP without it; the first candidate when none lifts it (the MIP may
    still rise). At most ``lift_max`` candidates within ``lift_share`` of the time left: the
    candidate that lifts the LP is the one that lifts the MIP, where scores by shared cost
    pick one that moves neither. Returns (that checkpoint, the highest LP: a bound)."""
    from ..checkpoints import checkpoint_bound

    t = ctx.tuning
    stop = time.perf_counter() + t.lift_share * max(0.0, deadline - time.perf_counter())

    def lp(checkpoints: list[int], levels: list[list[int]]) -> float:
        return checkpoint_bound(ctx.p, ctx.cap, checkpoints, time_limit=max(0.01, stop - time.perf_counter()),
                                threads=ctx.params.threads, seed=ctx.params.seed, coarse=levels)[0]

    base = lp(cps, [c for c in coarse if c != cps])
    tol = 1e-9 * max(1.0, ctx.total)
    best, best_lp = None, base
    tried = {}
    for c in cands[:t.lift_max]:
        if time.perf_counter() >= stop:
            break
        tried[c] = lp(sorted(set(cps) | {c}), coarse)
        if tried[c] > best_lp + tol:
            best, best_lp = c, tried[c]
    stats.setdefault("lifting", []).append({"base_lp": base, "candidates": tried, "chosen": best})
    return (best if best is not None else cands[0]), best_lp


def tighten(ctx: Context, cps: list[int], base: list[int], runs: list[list[int]], lt, inc: Result | None,
            deadline: float, state: RelaxationState, stats: dict
            ) -> tuple[list[int], list[list[int]] | None, float | None]:
    """One round of tightening: the candidate checkpoints (where the plan read off ``runs``
    overflows, its lifetimes ``lt``; where one recomputation serves several first runs; where
    ``inc`` pays more than the solution), of which the one that lifts the LP most joins
    (``lifting``, with ``base`` and ``cps`` as coarse levels), then the relaxation's MIP on the
    new set alone (coarse rows lift the LP but halve the MIP's speed), ``inc`` as cutoff,
    within ``refine_relaxation_share`` of the time left. Returns (the new checkpoints, the
    MIP's solution or None, the bound above every op once: None when no candidate is left,
    inf when the relaxation says nothing fits)."""
    from ..checkpoint_candidates import separating_checkpoints, shared_recomputations
    from ..checkpoints import lp_then_mip
    from ..relaxed_plan import overflow_checkpoints

    p = ctx.p
    # the largest excess first: when no candidate lifts the LP, the first one is taken
    cands = ((overflow_checkpoints(lt, cps, ctx.cap, by_excess=True) if lt is not None else [])
             + shared_recomputations(p, cps, runs, limit=1))
    if inc is not None:
        seq = [st.ref for st in inc.plan.steps if st.kind == "compute"]
        cands += separating_checkpoints(cps, runs, p.cost, seq)
    cands = list(dict.fromkeys(k for k in cands if k not in cps))
    if not cands:
        stats["refine"] = "nothing separates"
        return cps, None, None
    coarse = [base] if cps == base else [base, cps]
    new, lift_lp = lifting(ctx, cps, cands, coarse, deadline, stats)
    log.info("exact: refine: checkpoint %s of candidates %s added to %s", new, cands, cps)
    cps = sorted(set(cps) | {new})
    # a share of the time left: placing its plan, or the guided MILP, needs the rest (the
    # bound of an unfinished MIP counts)
    stop = time.perf_counter() + ctx.tuning.refine_relaxation_share * (deadline - time.perf_counter())
    out = lp_then_mip(p, ctx.cap, cps, lp_time=max(0.01, stop - time.perf_counter()), deadline=stop,
                      threads=ctx.params.threads, seed=ctx.params.seed,
                      cutoff=inc.objective - ctx.total if inc is not None else None)
    lp = max(out["lp"][0], lift_lp)
    mip, mip_status = out.get("mip", (None, None))
    state.record(CheckpointRound(len(cps), lp, mip, mip_status), stats)
    val = max(lp, mip if mip is not None else 0.0)
    if val != float("inf"):
        state.best = max(state.best, val)
        stats["checkpoint_best"] = state.best
    return cps, out.get("runs"), val
