"""Building the checkpoint relaxation (``formulations.checkpoints``) as a HiGHS model.

Moments M_1 < ... < M_m are the first runs of checkpoint ops t_1 < ... < t_m (captured order,
as every method here runs first computations); interval i runs from M_i to M_{i+1} (the last
to the end). Columns: ``L[i, v]`` (value v live at M_i; outputs of t_i count as live) and
``r[i, k]`` (op k runs again in interval i, for k <= t_i that may still run then), cost
sum c_k r[i, k]. Rows, each true of every plan (read each variable off the plan):
1. memory at M_i: live units + t_i's outputs <= capacity;
2. t_i's inputs are live at M_i; a live view keeps its base live;
3. persistence: L[i, v] <= L[i-1, v] + r[i-1, p_v] (none for i = 1: memory before M_1 is free);
4. use: an op that runs in interval i needs each input live at M_i or produced in interval i;
5. the end: a required value is live at M_m or produced in interval m;
6. each moment's closure (``formulations.bounds``) on z[i, k] <= sum over j >= i of r[j, k];
7. memory inside the intervals: ``W[i, v]`` (v live throughout interval i) >= L[i, v] +
   L[i+1, v] - 1 - r[i, p_v], and every op run in interval i finds the W values live beside
   its own inputs and outputs (without these rows a recomputation chain runs for free
   between two moments).
docs/exact.md explains why each row is valid and what each adds.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from planner.result import Status

from .backends import new_highs, power_of_two_scale
from .bounds import _value_arrays
from .problem import RematProblem

log = logging.getLogger(__name__)

INTERVAL_MEMORY = True  # rows 7 (memory inside the intervals); False only for ablations


@dataclass(frozen=True)
class Built:
    h: object                        # the relaxation as a HiGHS instance (continuous columns)
    checkpoints: list[int]           # t_1 < ... < t_m
    r: list[dict[int, int]]          # r[i][k] -> column of "op k runs again in interval i"
    L: list[dict[int, int]]          # L[i][v] -> column of "v is live at M_i" (-1: always)


def build_levels(p: RematProblem, capacity: int, checkpoints: list[int], coarse: list[list[int]],
                  threads: int, seed: int, deadline: float = float("inf")):
    """The relaxation over ``checkpoints`` with the rows of each coarser set in ``coarse`` too
    (``build_relaxation`` and ``combine_levels``): (bound, status) when decided without a solver, like ``build_relaxation``.
    Each coarse set is made a subset of the finer ones (its moments must be theirs)."""
    fine = sorted({int(t) for t in checkpoints}.union(*[set(c) for c in coarse]))
    levels = sorted({tuple(sorted({int(t) for t in c})) for c in coarse if c} - {tuple(fine)}, key=len)
    last = build_relaxation(p, capacity, fine, threads, seed, deadline)
    if isinstance(last, tuple):
        return last
    built = []
    for c in levels:
        b = build_relaxation(p, capacity, list(c), threads, seed, deadline)
        if isinstance(b, tuple):
            if b[1] == Status.INFEASIBLE:
                return b  # then so is every plan
            continue  # nothing to add, or out of time: the finer level alone
        built.append(b)
    return combine_levels(built + [last], p, threads, seed) if built else last


def combine_levels(levels: list[Built], p: RematProblem, threads: int, seed: int) -> Built:
    """One model holding every level's columns and rows (each a relaxation over a subset of
    the last level's checkpoints), the cost on the last level's r only, and rows that read
    each variable of a coarse level off the finest one: at a shared checkpoint, L is the same
    value ("live at that moment"); r[i, k] of a coarse interval is the OR of r over the fine
    intervals inside it (r >= each of them, r <= their sum). Every row holds for the values
    read off any plan (each level is a relaxation of the same plans), so the bound stays
    valid, and it is at least every level's alone. Why: more checkpoints weaken the LP (one
    fractional recomputation serves several short intervals), and the coarse rows take that
    away (docs/exact.md has the figures)."""
    import highspy

    fine = levels[-1]
    lps = [b.h.getLp() for b in levels]
    offs = np.cumsum([0] + [lp.num_col_ for lp in lps]).tolist()
    nc = offs[-1]
    h = new_highs(threads, seed)
    h.addVars(nc, np.concatenate([lp.col_lower_ for lp in lps]), np.concatenate([lp.col_upper_ for lp in lps]))
    cost = np.zeros(nc)
    cost[offs[len(levels) - 1]:] = lps[-1].col_cost_
    h.changeColsCost(nc, np.arange(nc, dtype=np.int32), cost)
    for lp, off in zip(lps, offs):
        if lp.num_row_ == 0:
            continue
        a = lp.a_matrix_
        start, index, value = np.asarray(a.start_), np.asarray(a.index_), np.asarray(a.value_)
        if a.format_ != highspy.MatrixFormat.kRowwise:  # build_relaxation adds rows, so HiGHS keeps them row-wise
            from scipy.sparse import csc_matrix

            m = csc_matrix((value, index, start), shape=(lp.num_row_, lp.num_col_)).tocsr()
            start, index, value = m.indptr, m.indices, m.data
        h.addRows(lp.num_row_, np.asarray(lp.row_lower_), np.asarray(lp.row_upper_), len(index),
                  np.asarray(start[:-1], dtype=np.int32), np.asarray(index, dtype=np.int32) + off,
                  np.asarray(value, dtype=np.float64))
    rows = _Rows()
    row = rows.add
    f_off = offs[len(levels) - 1]  # the finest level's first column
    pos = {t: j for j, t in enumerate(fine.checkpoints)}
    for b, off in zip(levels[:-1], offs):
        for i, t in enumerate(b.checkpoints):
            j = pos[t]
            for v, c in b.L[i].items():
                d = fine.L[j].get(v)
                if c < 0 or d is None or d < 0:
                    continue  # a constant on either side: each level fixed it alone
                row([(off + c, 1.0), (f_off + d, -1.0)], 0.0, 0.0)
            nxt = b.checkpoints[i + 1] if i + 1 < len(b.checkpoints) else None
            subs = [jj for jj in range(j, len(fine.checkpoints)) if nxt is None or fine.checkpoints[jj] < nxt]
            for k, c in b.r[i].items():
                cols = [f_off + fine.r[jj][k] for jj in subs if k in fine.r[jj]]
                row([(off + c, 1.0)] + [(x, -1.0) for x in cols], -np.inf, 0.0)
                for x in cols:
                    row([(off + c, 1.0), (x, -1.0)], 0.0, np.inf)
    rows.add_to(h)
    log.info("checkpoint relaxation: %d levels (%s checkpoints), %d columns, %d rows", len(levels),
             "/".join(str(len(b.checkpoints)) for b in levels), nc, h.getNumRow())
    return Built(h, fine.checkpoints, [{k: c + f_off for k, c in Ri.items()} for Ri in fine.r],
                  [{v: (c + f_off if c >= 0 else c) for v, c in Li.items()} for Li in fine.L])


def build_relaxation(p: RematProblem, capacity: int, checkpoints: list[int], threads: int, seed: int,
           deadline: float = float("inf")):
    """The relaxation (``Built``), or (bound, status) when it is
    decided without a solver (optimal 0: no checkpoint or column; infeasible; timeout: building
    in Python passed ``deadline``, a ``time.perf_counter()`` value, and the bound is the
    trivial 0: on graphs of thousands of ops the build alone takes many seconds)."""
    cps = sorted({int(t) for t in checkpoints})
    n, V = p.n, p.values
    if not cps or n == 0:
        return 0.0, Status.OPTIMAL  # nothing to solve: 0 is exact
    m = len(cps)
    limit = list(p.limit or (n,) * n)
    prod = [v.producer for v in V]
    last = _value_arrays(p)[2]
    cols_lo: list[float] = []
    cols_hi: list[float] = []
    cols_c: list[float] = []

    def var(c: float = 0.0, hi: float = 1.0) -> int:
        cols_lo.append(0.0)
        cols_hi.append(hi)
        cols_c.append(c)
        return len(cols_c) - 1

    ONE = -1  # a constant 1 in place of a column
    L: list[dict[int, int]] = []   # L[i][v] -> column or ONE (values not in the dict: 0)
    R: list[dict[int, int]] = []   # R[i][k] -> column
    for i, t in enumerate(cps):
        if time.perf_counter() > deadline:
            return _timed_out(len(cps), n)
        Li: dict[int, int] = {}
        must = set()
        for u in p.reads[t]:
            must.add(u)
            if V[u].base is not None:
                must.add(V[u].base)
        for v, val in enumerate(V):
            if val.in_resident or prod[v] > t:
                continue
            Li[v] = ONE if (prod[v] == t or v in must) else var()
        L.append(Li)
        R.append({k: var(float(p.cost[k])) for k in range(t + 1) if limit[k] > t})
    rows = _Rows()

    def row(terms: list[tuple[int, float]], lo: float, hi: float) -> None:
        """sum coef*x + constants in [lo, hi]; terms with column ONE move to the bounds."""
        const = 0.0
        merged: dict[int, float] = {}
        for c, a in terms:
            if c == ONE:
                const += a
            else:
                merged[c] = merged.get(c, 0.0) + a
        lo, hi = lo - const, hi - const
        if not merged:
            if lo > 1e-9 or hi < -1e-9:
                raise _Infeasible
            return
        rows.add(merged.items(), lo, hi)

    def avail(i: int, u: int) -> list[tuple[int, float]] | None:
        """Terms of 'u is live at M_i or produced in interval i'; None: always available."""
        pu = prod[u]
        nxt = cps[i + 1] if i + 1 < m else n
        if cps[i] < pu < nxt:
            return None  # first run inside the interval
        terms = []
        c = L[i].get(u)
        if c == ONE:
            return None
        if c is not None:
            terms.append((c, 1.0))
        r = R[i].get(pu)
        if r is not None:
            terms.append((r, 1.0))
        return terms

    def check() -> None:
        if time.perf_counter() > deadline:
            raise _BuildTimeout

    try:
        for i, t in enumerate(cps):
            check()
            Li = L[i]
            # 1. memory at M_i
            const = float(p.out_units[t])
            mem = []
            for v, c in Li.items():
                s = V[v].size
                if not s or prod[v] == t:
                    continue
                mem.append((c, float(s)))
            row(mem, -np.inf, float(capacity) - const)
            # 2. live views keep their bases
            for v, c in Li.items():
                b = V[v].base
                if b is None or c == ONE:
                    continue
                cb = Li.get(b)
                if cb is None:
                    row([(c, 1.0)], -np.inf, 0.0)
                elif cb != ONE:
                    row([(cb, 1.0), (c, -1.0)], 0.0, np.inf)
            # 3. persistence from M_{i-1}
            if i > 0:
                prev = cps[i - 1]
                for v, c in Li.items():
                    if c == ONE and prod[v] == t:
                        continue
                    pv = prod[v]
                    if pv >= prev:
                        continue  # produced at M_{i-1} or first run in interval i-1
                    terms = [(c, 1.0)]
                    cp = L[i - 1].get(v)
                    if cp == ONE:
                        continue
                    if cp is not None:
                        terms.append((cp, -1.0))
                    r = R[i - 1].get(pv)
                    if r is not None:
                        terms.append((r, -1.0))
                    row(terms, -np.inf, 0.0)
            # 4. uses in interval i
            nxt = cps[i + 1] if i + 1 < m else n
            runners: list[tuple[int, int | None]] = [(k, None) for k in range(t + 1, nxt)]
            runners += [(k, rc) for k, rc in R[i].items()]
            for k, rc in runners:
                for u in p.reads[k]:
                    if V[u].in_resident:
                        continue
                    a = avail(i, u)
                    if a is None:
                        continue
                    if rc is None:
                        row(a, 1.0, np.inf)
                    else:
                        row(a + [(rc, -1.0)], 0.0, np.inf)
        # 6. each checkpoint's closure (formulations.bounds), on z[i, k] = "op k runs again
        # after M_i" <= sum over later intervals of r[j, k]: the interval rows alone are
        # weaker than one closure in the LP (one fractional recomputation in interval i
        # serves the uses of interval i and, through persistence, of interval i + 1 too)
        for i, t in enumerate(cps):
            check()
            Z: dict[int, int] = {}
            for k in R[i]:
                Z[k] = var()
                row([(Z[k], -1.0)] + [(R[j][k], 1.0) for j in range(i, m) if k in R[j]], 0.0, np.inf)
            Li = L[i]
            for k, zk in Z.items():
                for u in p.reads[k]:
                    if V[u].in_resident:
                        continue
                    c = Li.get(u)
                    if c == ONE:
                        continue
                    terms = [(zk, -1.0)]
                    if c is not None:
                        terms.append((c, 1.0))
                    if prod[u] in Z:
                        terms.append((Z[prod[u]], 1.0))
                    row(terms, 0.0, np.inf)
            for v, c in Li.items():
                if c == ONE or prod[v] >= t or last[v] < t:
                    continue  # not pending at M_i
                zp = Z.get(prod[v])
                row([(c, 1.0)] + ([(zp, 1.0)] if zp is not None else []), 1.0, np.inf)
        # 7. memory inside each interval: a value live at M_i and at M_{i+1} (at the end, for
        # the last interval, when it is required) whose producer does not run in between is
        # live throughout the interval: W[i, v] >= L[i, v] + L[i+1, v] - 1 - r[i, p_v]. Every
        # op that runs in the interval (a first run, or r[i, k]) finds those values live
        # beside its own inputs and outputs; that is the memory the recomputation chains need
        # (without these rows a chain runs for free between two moments)
        if INTERVAL_MEMORY:
            req_storage = {V[v].base if V[v].base is not None else v for v in p.required}
            for i, t in enumerate(cps):
                check()
                nxt = cps[i + 1] if i + 1 < m else n
                W: dict[int, int] = {}
                for v, c in L[i].items():
                    if not V[v].size:
                        continue
                    if i + 1 < m:
                        c2 = L[i + 1].get(v)
                        if c2 is None:
                            continue
                    elif v in req_storage:
                        c2 = ONE
                    else:
                        continue
                    rr = R[i].get(prod[v])
                    if c == ONE and c2 == ONE and rr is None:
                        W[v] = ONE
                        continue
                    W[v] = var()
                    row([(W[v], 1.0), (c, -1.0), (c2, -1.0)] + ([(rr, 1.0)] if rr is not None else []),
                        -1.0, np.inf)
                if not W:
                    continue
                wm = var(hi=np.inf)  # units live throughout interval i
                row([(wm, 1.0)] + [(c, -float(V[v].size)) for v, c in W.items()], 0.0, 0.0)
                runners = [(k, None) for k in range(t + 1, nxt)] + list(R[i].items())
                for k, rc in runners:
                    need = {V[u].base if V[u].base is not None else u for u in p.reads[k]
                            if not V[u].in_resident}
                    const = float(sum(V[u].size for u in need) + p.out_units[k])
                    terms = [(wm, 1.0)] + [(W[u], -float(V[u].size)) for u in need if u in W]
                    if rc is None:
                        row(terms, -np.inf, float(capacity) - const)
                    else:
                        row(terms + [(rc, const)], -np.inf, float(capacity))
        # 5. the end
        for v in p.required:
            if V[v].in_resident:
                continue
            a = avail(m - 1, v)
            if a is not None:
                row(a, 1.0, np.inf)
    except _Infeasible:
        return float("inf"), Status.INFEASIBLE
    except _BuildTimeout:
        return _timed_out(m, n)
    nc = len(cols_c)
    if nc == 0:
        return 0.0, Status.OPTIMAL  # nothing to solve: 0 is exact
    h = new_highs(threads, seed, reset_scheduler=True)
    f = power_of_two_scale(p.cost)
    h.addVars(nc, np.asarray(cols_lo), np.asarray(cols_hi))
    h.changeColsCost(nc, np.arange(nc, dtype=np.int32), np.asarray(cols_c) * f)
    rows.add_to(h)
    log.info("checkpoint relaxation: %d checkpoints, %d columns, %d rows", m, nc, len(rows.lo))
    return Built(h, cps, R, L)


def _timed_out(checkpoints: int, ops: int) -> tuple[float, str]:
    log.info("checkpoint relaxation: build passed its deadline (%d checkpoints, %d ops)", checkpoints, ops)
    return 0.0, Status.TIMEOUT


class _Rows:
    """Rows gathered in CSR form, added to a HiGHS model in one call."""

    def __init__(self) -> None:
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.starts: list[int] = [0]
        self.idx: list[int] = []
        self.val: list[float] = []

    def add(self, terms, lo: float, hi: float) -> None:
        """lo <= sum coef * column <= hi over ``terms`` (column, coef)."""
        for c, a in terms:
            self.idx.append(c)
            self.val.append(a)
        self.starts.append(len(self.idx))
        self.lo.append(lo)
        self.hi.append(hi)

    def add_to(self, h) -> None:
        if self.lo:
            h.addRows(len(self.lo), np.asarray(self.lo, dtype=np.float64), np.asarray(self.hi, dtype=np.float64),
                      len(self.idx), np.asarray(self.starts[:-1], dtype=np.int32),
                      np.asarray(self.idx, dtype=np.int32), np.asarray(self.val, dtype=np.float64))


class _BuildTimeout(Exception):
    """Building the relaxation passed its deadline."""


class _Infeasible(Exception):
    """A row with no columns whose constants violate it: no plan fits."""
