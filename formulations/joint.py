"""Method ``milp-joint``: remat and addresses in one MILP (OLLA/MODeL-style big-M disjunctions).

On top of Checkmate's full model (``formulations.model``, published form, memory rows kept as a
redundant cumulative bound) it adds, for every stage t and computed value v of nonzero size:
- A[t,v]: address in units above the residents, 0 <= A <= capacity - size;
- liveness L[t,v,k] = S[t,v] + R[t,p_v](k >= p_v) - sum_{j<k} F[t,v,j] (an expression; "start"
  of the stage is L = S), and S[t,v] + R[t,p_v] <= 1 (recomputing a kept value is never
  needed: it costs >= 0 and only adds memory, so this loses no optimum);
- for each pair (u,v) that can share a stage: C[t,u,v] >= L[t,u,k] + L[t,v,k] - 1 at every
  position, and with an order binary O: A_u + s_u <= A_v + M(2 - O - C),
  A_v + s_v <= A_u + M(1 + O - C) (M = capacity): disjoint when both are live together;
- a kept value keeps its address: |A[t+1,v] - A[t,v]| <= M (1 - S[t+1,v]).
F is only bounded above, so L over-approximates liveness: disjointness is enforced at least
whenever the values are really live together. The plan uses the minimal lifetimes of the
schedule (a subset of the model's) with the model's own addresses, so the validator checks
this formulation independently of the DSA solver. Small graphs only (pairs x stages).
"""
from __future__ import annotations

import time

from planner.graph import Graph
from planner.params import SolveParams
from planner.result import Result, Status

from .backends import solve_highs
from .common import Placed, milp_failure, plan_result, published_model, setup
from .model import INF, decode
from .pulp_backend import solve_pulp
from .schedule import lifetimes, stage_sequence

MAX_OPS = 40  # beyond this the pair model is too large to be useful


def solve_joint(g: Graph, budget: int, params: SolveParams) -> Result:
    s = setup("milp-joint", g, budget, params)
    if isinstance(s, Result):
        return s
    p, cap, t0 = s.p, s.cap, s.t0
    if p.n > MAX_OPS:
        return Result("milp-joint", "error", message=f"milp-joint is for small graphs (<= {MAX_OPS} ops); "
                                                      f"this one has {p.n}: use exact")
    m = published_model("milp-joint", p, cap)
    if isinstance(m, Result):
        return m
    n, V = p.n, p.values
    M = float(cap)
    big = [v for v in range(len(V)) if V[v].size > 0]
    A: dict[tuple[int, int], int] = {}

    def r_terms(t: int, k: int, coef: float) -> tuple[list[tuple[int, float]], float]:
        if k == t and t < n:
            return [], coef
        c = m.R.get((t, k))
        return ([(c, coef)] if c is not None else []), 0.0

    def live_terms(t: int, v: int, k: int | None) -> tuple[list[tuple[int, float]], float]:
        """L[t,v,k] as (terms, constant); k None = stage start."""
        terms: list[tuple[int, float]] = []
        const = 0.0
        s = m.S.get((t, v))
        if s is not None:
            terms.append((s, 1.0))
        if k is not None:
            pv = V[v].producer
            if k >= pv:
                rt, rc = r_terms(t, pv, 1.0)
                terms += rt
                const += rc
            for j in range(k):
                f = m.F.get((t, v, j))
                if f is not None:
                    terms.append((f, -1.0))
        return terms, const

    for t in range(n + 1):
        for v in big:
            if V[v].producer <= t:
                A[t, v] = m.var(f"A_{t}_{v}", 0, cap - V[v].size)
                s = m.S.get((t, v))
                rt, rc = r_terms(t, V[v].producer, 1.0)
                if s is not None and rt:
                    m.row([(s, 1.0)] + rt, -INF, 1.0)
    for t in range(n):
        for v in big:
            s = m.S.get((t + 1, v))
            if s is not None and (t, v) in A:
                a0, a1 = A[t, v], A[t + 1, v]
                m.row([(a1, 1.0), (a0, -1.0), (s, M)], -INF, M)
                m.row([(a1, 1.0), (a0, -1.0), (s, -M)], -M, INF)
    npairs = 0
    for t in range(n + 1):
        here = [v for v in big if V[v].producer <= t]
        for i, u in enumerate(here):
            for v in here[i + 1:]:
                c = m.var(f"C_{t}_{u}_{v}", 0, 1)
                o = m.var(f"O_{t}_{u}_{v}", 0, 1)
                npairs += 1
                for k in [None] + list(range(min(t + 1, n))):
                    tu, cu = live_terms(t, u, k)
                    tv, cv = live_terms(t, v, k)
                    # C >= Lu + Lv - 1  ->  C - Lu - Lv >= cu + cv - 1
                    terms = [(c, 1.0)] + [(x, -w) for x, w in tu] + [(x, -w) for x, w in tv]
                    m.row(terms, cu + cv - 1.0, INF)
                au, av = A[t, u], A[t, v]
                su, sv = float(V[u].size), float(V[v].size)
                # A_u + s_u <= A_v + M(2 - O - C)
                m.row([(au, 1.0), (av, -1.0), (o, M), (c, M)], -INF, 2 * M - su)
                # A_v + s_v <= A_u + M(1 + O - C)
                m.row([(av, 1.0), (au, -1.0), (o, -M), (c, M)], -INF, M - sv)
    m.stats.update({"pairs": npairs, "address_columns": len(A), "columns": m.ncols, "rows": m.nrows})
    left = max(0.1, params.time_limit - (time.perf_counter() - t0))
    if params.solver == "highs":
        out = solve_highs(m, params, time_limit=left)
    else:
        out = solve_pulp(m, params, time_limit=left)
    stats = {"model": dict(m.stats), "milp_seconds": out.seconds}
    failed = milp_failure("milp-joint", out, stats)
    if failed is not None:
        return failed
    stages = decode(p, m, out.x)
    flat = [(t, k) for t, st in enumerate(stages) for k in sorted(st)]
    lt = lifetimes(p, stage_sequence(stages))
    if lt is None or len(lt.seq) != len(flat):
        return Result("milp-joint", "error", stats=stats,
                      message="joint MILP schedule is not runnable as solved (model bug)")
    offsets = {}
    for bi, (v, lo, hi, size) in enumerate(lt.blocks):
        offsets[bi] = int(round(out.x[A[flat[lo][0], v]]))
    placed = Placed(lt, offsets, "placed", "milp-joint addresses")
    status = "optimal" if out.status == Status.OPTIMAL else "feasible"
    return plan_result("milp-joint", p, placed, budget, status, out.bound if status != "optimal" else lt.cost,
                       out.backend, stats)
