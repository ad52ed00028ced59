"""Cheap lower bounds on the recomputation cost: a covering knapsack per op, and its closure LP.

Why it is valid. Fix an op t and the moment M at which it runs for the first time (every
method here runs first computations in captured order: Checkmate's schedule class, and the
runtime heuristics). At M, the outputs of t are being allocated and every *pending* value
(produced by an op before t, read by an op at or after t, or required at the end) is either
live or *dropped*: not live at M, so it must be computed again after M, which costs its
producer's cost at least once (one recomputation restores all of an op's outputs, so the
charge is per producer). A value op t reads must be live at M, and so must one whose producer
may not run after stage t (``limit``, in-place writes over residents). Live units at M are at
most the capacity, so the dropped units must cover ``excess = pending + outputs of t -
capacity``. The cheapest such cover is at least the fractional (LP) knapsack value, computed
greedily by cost per unit. Every plan therefore recomputes at least the largest of these
values over t; views count with their bases (a view keeps its base storage live).

It ignores what a recomputation needs (its inputs must be live later), so it is weak where
cheap ops feed cheap ops, and it never sees memory between first computations. The closure
LP (``closure_bound``) adds what a recomputation needs. Both are checked against exhaustive
search (``tests/test_bounds.py``): never above the optimum, and "infeasible" (inf) only where
no plan exists, so ``exact`` uses inf as a proof. docs/exact.md has the measured values.
"""
from __future__ import annotations

import numpy as np

from .problem import RematProblem


def _value_arrays(p: RematProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per value: producer op, size in units, last op reading it or one of its views (n when
    required): a value is pending at op t when producer < t <= last."""
    V = p.values
    nv = len(V)
    prod = np.fromiter((v.producer for v in V), dtype=np.int64, count=nv)
    size = np.fromiter((v.size for v in V), dtype=np.int64, count=nv)
    last = np.array(p.last_read, dtype=np.int64)
    for v in p.required:
        last[v] = p.n
    return prod, size, last


def tight_ops(p: RematProblem, capacity: int) -> list[tuple[int, int]]:
    """(excess, op) for every op whose first run cannot keep every pending value within the
    capacity, by decreasing excess (where memory is tightest the bounds are usually largest)."""
    prod, size, last = _value_arrays(p)
    out = []
    for t in range(p.n):
        pend = (prod < t) & (last >= t) & (size > 0)
        excess = int(size[pend].sum()) + p.out_units[t] - capacity
        if excess > 0:
            out.append((excess, t))
    out.sort(key=lambda e: (-e[0], e[1]))
    return out


def knapsack_bound(p: RematProblem, capacity: int) -> tuple[float, int | None]:
    """(least recomputation cost every plan pays, the op t where it binds); (inf, t) when the
    values that must be live at op t's first computation already exceed the capacity."""
    V = p.values
    n, nv = p.n, len(V)
    if n == 0 or nv == 0:
        return 0.0, None
    prod, size, last = _value_arrays(p)
    cost = np.asarray(p.cost, dtype=np.float64)
    limit = np.asarray(p.limit or (n,) * n, dtype=np.int64)
    out_units = np.asarray(p.out_units, dtype=np.int64)
    sized = size > 0
    best, where = 0.0, None
    for t in range(n):
        pend = sized & (prod < t) & (last >= t)
        excess = int(size[pend].sum()) + int(out_units[t]) - capacity
        if excess <= 0:
            continue
        must = np.zeros(nv, dtype=bool)
        for v in p.reads[t]:
            must[v] = True
            b = V[v].base
            if b is not None:
                must[b] = True
        droppable = pend & ~must & (limit[prod] > t)
        w = np.bincount(prod[droppable], weights=size[droppable], minlength=n)
        ks = np.flatnonzero(w > 0)
        if int(w[ks].sum()) < excess:
            return float("inf"), t
        order = ks[np.argsort(cost[ks] / w[ks], kind="stable")]
        cw = np.cumsum(w[order])
        j = int(np.searchsorted(cw, excess))  # first item whose cumulative weight covers it
        full = float(cost[order[:j]].sum())
        before = float(cw[j - 1]) if j else 0.0
        val = full + cost[order[j]] * (excess - before) / w[order[j]]
        if val > best:
            best, where = val, t
    return best, where


def closure_bound(p: RematProblem, capacity: int, deadline: float | None = None,
                  max_stages: int | None = None) -> tuple[float, int | None, int]:
    """A stronger per-op bound: the knapsack above plus what a recomputation needs, as one
    small LP per op t (HiGHS). Variables: d_v (pending value v not live at M), x_u (a value
    no op at or after t reads is live at M: only worth it to recompute something from it),
    r_k (op k < t runs again after M). Rows: r_{p_v} >= d_v; for every input u of an op k
    that may run again, live_u + r_{p_u} >= r_k (an input is live at M and kept, or computed
    again after M before k runs); a live view keeps its base live; live units at M <=
    capacity. Every plan gives a 0/1 point of these rows (read each variable off the plan at
    M) whose objective sum C_k r_k is at most its recomputation cost, so the LP value bounds
    it. Ops are tried by decreasing knapsack excess until ``deadline`` or ``max_stages``.
    Returns (bound, op where it binds, ops solved)."""
    import time

    from .backends import power_of_two_scale

    n, nv = p.n, len(p.values)
    if n == 0 or nv == 0:
        return 0.0, None, 0
    prod, size, last = _value_arrays(p)
    limit = list(p.limit or (n,) * n)
    order = tight_ops(p, capacity)
    best, where, done = 0.0, None, 0
    scale = power_of_two_scale(p.cost)  # seconds-scale costs sit at HiGHS's tolerances (backends.cost_scale)
    for _, t in order:
        if (deadline is not None and time.perf_counter() > deadline) or (max_stages is not None and done >= max_stages):
            break
        val = _closure_lp(p, capacity, t, prod, size, last, limit, scale)
        done += 1
        if val > best:
            best, where = val, t
    return best, where, done


def _closure_lp(p, capacity, t, prod, size, last, limit, f: float) -> float:
    from planner.result import Status

    from .backends import new_highs, option_value, run_status

    V = p.values
    must = set()
    for v in p.reads[t]:
        must.add(v)
        if V[v].base is not None:
            must.add(V[v].base)
    lo: list[float] = []
    hi: list[float] = []
    cost: list[float] = []
    live: dict[int, tuple[int, float, float]] = {}  # value -> (column, coef, const): live = coef*col + const
    col_r: dict[int, int] = {}

    def var(c: float, l: float = 0.0, h: float = 1.0) -> int:
        lo.append(l)
        hi.append(h)
        cost.append(c)
        return len(lo) - 1

    rows: list[tuple[list[int], list[float], float, float]] = []
    mem_idx: list[int] = []
    mem_val: list[float] = []
    mem_const = float(p.out_units[t])
    for k in range(t):
        if limit[k] > t:
            col_r[k] = var(float(p.cost[k]))
    for v in range(len(V)):
        if prod[v] >= t or V[v].in_resident:
            continue
        pending = last[v] >= t
        if pending and (v in must or prod[v] not in col_r):
            live[v] = (-1, 0.0, 1.0)  # must be live at M
            mem_const += float(size[v])
            continue
        c = var(0.0)
        if pending:  # c = d_v, live = 1 - d_v
            live[v] = (c, -1.0, 1.0)
            rows.append(([col_r[int(prod[v])], c], [1.0, -1.0], 0.0, np.inf))
            mem_const += float(size[v])
            if size[v]:
                mem_idx.append(c)
                mem_val.append(-float(size[v]))
        else:  # c = x_v, live = x_v
            live[v] = (c, 1.0, 0.0)
            if size[v]:
                mem_idx.append(c)
                mem_val.append(float(size[v]))
    for v, (c, a, b0) in live.items():  # a live view keeps its base live
        base = V[v].base
        if base is None or base not in live or c < 0:
            continue
        bc, ba, bb = live[base]
        idx, val = [c], [-a]
        rhs = b0 - bb  # live_base - live_view >= 0  ->  ba*bc - a*c >= b0 - bb
        if bc >= 0:
            idx.append(bc)
            val.append(ba)
        rows.append((idx, val, rhs, np.inf))
    for k, rk in col_r.items():
        for u in p.reads[k]:
            if u not in live:
                continue
            c, a, b0 = live[u]
            idx, val = [rk], [-1.0]
            if c >= 0:
                idx.append(c)
                val.append(a)
            pu = int(prod[u])
            if pu in col_r:
                idx.append(col_r[pu])
                val.append(1.0)
            # a*c + b0 + r_pu - r_k >= 0
            rows.append((idx, val, -b0, np.inf))
    rows.append((mem_idx, mem_val, -np.inf, float(capacity) - mem_const))
    h = new_highs(1)
    nc = len(lo)
    if nc == 0:
        return 0.0 if mem_const <= capacity else float("inf")
    h.addVars(nc, np.asarray(lo), np.asarray(hi))
    h.changeColsCost(nc, np.arange(nc, dtype=np.int32), np.asarray(cost) * f)
    for idx, val, rl, rh in rows:
        merged: dict[int, float] = {}
        for i, x in zip(idx, val):
            merged[i] = merged.get(i, 0.0) + x
        ii = np.fromiter(merged.keys(), dtype=np.int32, count=len(merged))
        vv = np.fromiter(merged.values(), dtype=np.float64, count=len(merged))
        h.addRow(rl, rh, len(ii), ii, vv)
    st = run_status(h, float(option_value(h, "time_limit")))
    if st == Status.INFEASIBLE:
        return float("inf")
    if st != Status.OPTIMAL:
        return 0.0  # no proof from this op
    return float(h.getInfo().objective_function_value) / f
