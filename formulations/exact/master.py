"""The master: Checkmate's stage MILP with exact cost fixing, the incumbent's cost as cutoff,
addresses for its optimal schedule by the DSA solver, and a no-good cut on the stage schedule
when the DSA proves it cannot be placed (sound: every plan with the same recomputations has
lifetimes containing the minimal ones)."""
from __future__ import annotations

import logging
import time

from planner.result import Result, Status

from .outcome import incumbent_result, proven_or_infeasible, stop
from .state import Context

log = logging.getLogger(__name__)


def cost_fixed(p, inc_cost: float | None) -> set[int]:
    """The ops a plan cheaper than ``inc_cost`` may recompute: those whose own cost is below
    the slack, inc_cost - the cost of every op once (one recomputation of any other already
    costs the slack); all without an incumbent."""
    if inc_cost is None:
        return set(range(p.n))
    total = float(sum(p.cost))
    slack = inc_cost - total
    return {k for k in range(p.n) if p.cost[k] < slack - 1e-9 * max(1.0, total)}


def stage_start(p, m, seq: list[int]) -> dict[int, float] | None:
    """A partial MIP start (every R column) from an op sequence in captured order with
    recomputations: stage t holds the recomputations after the first computation of op t-1 and
    up to that of op t; what runs after the last first computation is stage n. None when the
    sequence is not in Checkmate's schedule class as modelled (an op run twice in one stage, or
    a recomputation the model has no column for, e.g. one excluded by cost fixing)."""
    stage = 0
    seen: set[tuple[int, int]] = set()
    done = [False] * p.n
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
    return {col: (1.0 if key in seen else 0.0) for key, col in m.R.items()}


def add_cuts(m, cuts: list[list[tuple[int, int]]]) -> None:
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


def master(ctx: Context, inc: Result | None, inc_cost: float | None, bound: float, rec: set[int], deadline: float,
           stats: dict) -> Result:
    """Rounds of the cost-fixed MILP (ops ``rec`` recomputable) until its optimal schedule
    places, it proves the incumbent optimal, or time runs out (then the best plan with
    ``bound``)."""
    from ..backends import solve_highs
    from ..common import place_stages, plan_result
    from ..model import BuildTimeout, build, decode

    p, cap, params, t, prog = ctx.p, ctx.cap, ctx.params, ctx.tuning, ctx.prog
    cuts: list[list[tuple[int, int]]] = []   # excluded stage schedules: lists of (t, k) with R = 1
    rounds = 0
    milp_s, nodes = 0.0, 0
    while True:
        rounds += 1
        left = deadline - time.perf_counter()
        if left <= 0.05:
            return stop(inc, inc_cost, bound, stats, "time limit reached")
        try:
            m = build(p, cap, rec, deadline=deadline - t.reserve(params.time_limit))
        except BuildTimeout as exc:
            return stop(inc, inc_cost, bound, stats, str(exc))
        if m is None:
            return proven_or_infeasible(inc, inc_cost, stats, "model infeasible before solving")
        add_cuts(m, cuts)
        if rounds == 1:
            stats["model"] = dict(m.stats)
        # keep time for placing the master's schedule (a schedule never placed is no plan)
        left = deadline - t.reserve(params.time_limit) - time.perf_counter()
        if left <= 0.05:
            return stop(inc, inc_cost, bound, stats, "time limit reached while building the model")
        start = None
        if inc is not None and params.warm_start and t.mip_start and rounds == 1:
            seq = [st.ref for st in inc.plan.steps if st.kind == "compute"]
            start = stage_start(p, m, seq)
            stats["mip_start"] = "given" if start is not None else "not in the model's schedule class"
        opts = dict(t.highs_options)
        if m.ncols > t.presolve_max_columns:
            opts.setdefault("presolve", "off")
        stats["highs_options"] = opts
        prog.note(f"MILP round {rounds}: {m.ncols} columns, {m.nrows} rows, {len(rec)} recomputable ops, "
                  f"{left:.0f} s left")
        out = solve_highs(m, params, time_limit=left, cutoff=inc_cost, start=start, options=opts, progress=prog)
        prog.figures(f"MILP round {rounds} {out.status}", out.objective if out.objective is not None else inc_cost,
                     out.bound, force=True)
        milp_s, nodes = milp_s + out.seconds, nodes + out.nodes
        stats["milp_seconds"], stats["nodes"] = milp_s, nodes
        log.info("exact round %d: %s obj %s bound %s (%.1fs)", rounds, out.status, out.objective, out.bound, out.seconds)
        if out.status == Status.INFEASIBLE:
            # nothing in the model beats the cutoff: the incumbent is optimal (or nothing fits)
            return proven_or_infeasible(inc, inc_cost, stats, "no schedule beats the incumbent")
        if out.bound is not None:
            bound = out.bound if bound is None else max(bound, out.bound)
        if out.x is None:
            return stop(inc, inc_cost, bound, stats, f"MILP: {out.status} {out.message}")
        stages = decode(p, m, out.x)
        placed = place_stages(p, stages, cap, deadline, params)
        if placed is None:
            return Result("exact", "error", message="MILP schedule reads a value that is not live (model bug)",
                          stats=stats)
        proven = out.status == Status.OPTIMAL
        if placed.offsets is not None:
            better = inc_cost is None or placed.lt.cost < inc_cost
            if proven:
                if better:
                    return plan_result("exact", p, placed, ctx.budget, "optimal", out.objective, "highs+dsa",
                                       {**stats, "rounds": rounds, "remat_optimum": out.objective})
                return incumbent_result(inc, "optimal", inc_cost, stats)
            if better:
                return plan_result("exact", p, placed, ctx.budget, "feasible", bound, "highs+dsa",
                                   {**stats, "rounds": rounds}, f"MILP stopped: {out.message}")
            return stop(inc, inc_cost, bound, stats, f"MILP stopped: {out.message}")
        if not params.addresses and proven:
            return Result("exact", "optimal", objective=None, lower_bound=out.objective, gap=None,
                          backend="highs", stats={**stats, "remat_optimum": out.objective},
                          message=(f"remat-only optimum {out.objective:.6g} proven; its schedule does not place "
                                   f"within the budget (DSA: {placed.status}), so no plan is returned"))
        if placed.status != "infeasible" or not proven:
            return stop(inc, inc_cost, bound, stats,
                        f"schedule of cost {placed.lt.cost:.6g} not placed (DSA {placed.status})")
        cuts.append([(t_, k) for t_, st in enumerate(stages) for k in st if k != t_])
        stats["nogood_cuts"] = len(cuts)
        log.info("exact: optimal schedule does not place; cut %d added", len(cuts))
