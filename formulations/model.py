"""Checkmate's MILP over the node-level problem, as a solver-neutral sparse model.

Stages t = 0..n: stage t < n ends with the first computation of op t (Checkmate's); the
extra final stage n computes no new op and may recompute anything still required at the end
(heuristics end that way: a required output evicted earlier is recomputed last).
Variables (Checkmate's, per value instead of per node; see ``formulations.problem``):
- R[t,k]  op k computed in stage t (k < t; R[t,t] = 1 is a constant for t < n, R[t,k>t] = 0),
- S[t,v]  value v kept from stage t-1 into stage t (strictly after its producer's stage),
- F[t,v,k] v freed right after op k in stage t (k touches v: producer or reader),
- U[t,k]  units live right after op k in stage t (computed values only; residents are
          taken off the capacity), chained: U[t,first] = sum S M + R M, U[t,k] = U[t,prev]
          - sum F[t,.,prev] M + R[t,k] M_k, and U <= capacity.
Rows: S[t+1,v] <= S[t,v] + R[t,p_v]; R[t,c] <= R[t,p_v] + S[t,v] for each value v op c reads;
S[t,w] <= S[t,b] for a view w of b; required values present at the end of stage n;
F[t,v,k] <= R[t,k], F <= 1 - S[t+1,v], F <= 1 - R[t,j] for each later touch j in the stage
(F only needs upper bounds: it only loosens memory rows, so a solver sets it to 1 exactly when
the value really dies there). Objective: sum C_k R[t,k] (plus the constant sum C_t).

``published=True`` builds every variable of Checkmate's model (R for all k < t, S for all t
after the producer); otherwise the model is *sparsified*: R[t,k] exists only for ops in
``recomputable`` (cost fixing decides that set), S[t,v] only up to the last stage in which a
reader of v can run (with ``stages``, the last of the reader's windows), S[t,v] a constant 1
where every plan keeps v (``_kept_until``: its producer cannot run again and a later first
run reads it), and F/U/dependency rows only where their op can run. Both give the same
optimum whenever ``recomputable`` contains every op some better-than-incumbent plan recomputes
(``tests/test_model_sparsify.py``). docs/exact.md has what each step saves.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .problem import RematProblem


@dataclass
class Model:
    """A MILP in column/row form (rows as lists of (col, coef) with bounds)."""
    lb: list[float] = field(default_factory=list)
    ub: list[float] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    integer: list[bool] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    row_lo: list[float] = field(default_factory=list)
    row_hi: list[float] = field(default_factory=list)
    row_idx: list[list[int]] = field(default_factory=list)
    row_val: list[list[float]] = field(default_factory=list)
    offset: float = 0.0                        # constant added to the objective
    R: dict[tuple[int, int], int] = field(default_factory=dict)       # (t, k) -> column
    S: dict[tuple[int, int], int] = field(default_factory=dict)       # (t, v) -> column
    F: dict[tuple[int, int, int], int] = field(default_factory=dict)  # (t, v, k) -> column
    stats: dict = field(default_factory=dict)

    def var(self, name: str, lb: float, ub: float, cost: float = 0.0, integer: bool = True) -> int:
        self.lb.append(lb)
        self.ub.append(ub)
        self.cost.append(cost)
        self.integer.append(integer)
        self.names.append(name)
        return len(self.lb) - 1

    def row(self, terms: list[tuple[int, float]], lo: float, hi: float) -> None:
        merged: dict[int, float] = {}
        for c, v in terms:  # solvers reject a column twice in one row
            merged[c] = merged.get(c, 0.0) + v
        self.row_idx.append([c for c, v in merged.items() if v])
        self.row_val.append([v for v in merged.values() if v])
        self.row_lo.append(lo)
        self.row_hi.append(hi)

    @property
    def ncols(self) -> int:
        return len(self.lb)

    @property
    def nrows(self) -> int:
        return len(self.row_lo)

    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        starts = np.zeros(self.nrows + 1, dtype=np.int64)
        starts[1:] = np.cumsum([len(r) for r in self.row_idx])
        idx = np.fromiter((c for r in self.row_idx for c in r), dtype=np.int32, count=int(starts[-1]))
        val = np.fromiter((c for r in self.row_val for c in r), dtype=np.float64, count=int(starts[-1]))
        return starts, idx, val


INF = float("inf")


class BuildTimeout(Exception):
    """Building the model passed its deadline (large graphs take tens of seconds)."""


class ModelTooLarge(BuildTimeout):
    """The model would not fit in memory (its R and S columns are counted before any is built)."""


# R + S columns above which no model is built: about 830 bytes of Python model a column
# before HiGHS copies it, so 2.5M is about 4.5 GB in all (docs/exact.md: model size)
MAX_RS_COLUMNS = 2_500_000


def _horizons(p: RematProblem, rec: set[int], published: bool,
              stages: dict[int, set[int]] | None = None) -> tuple[tuple[int, ...], list[int], list[int]]:
    """(limit per op, last stage into which each value may be kept: its readers' stages, all
    of them up to the final stage n for a recomputable reader (up to the last of its
    ``stages`` when given) or a required value, last stage in which each op's recomputation
    can still be useful)."""
    n, V = p.n, p.values
    lim = p.limit or (n,) * n
    last_run = [min(n, lim[c]) if c in rec else c for c in range(n)]
    if stages is not None:
        last_run = [max([c] + [t for t in stages.get(c, ()) if t <= lim[c]]) if c in rec else c
                    for c in range(n)]
    need_until = [V[v].producer for v in range(len(V))]
    for v in range(len(V)):
        for c in p.touch[v]:
            if c != V[v].producer:
                need_until[v] = max(need_until[v], last_run[c])
    for v in p.required:
        need_until[v] = n
    if published:
        need_until = [n] * len(V)
    useful_until = [max((need_until[v] for v in p.outs[k]), default=-1) for k in range(n)]
    if published:
        useful_until = [n] * n
    return lim, need_until, useful_until


def _kept_until(p: RematProblem, rec: set[int], published: bool = False) -> list[int]:
    """Per value v, the last stage into which v must be kept in *every* plan of the model
    (S[t, v] = 1 for producer < t <= it; -1: none). Why: an op c reading v runs in stage c
    (its first computation, R[c, c] = 1), so when v's producer p_v cannot be recomputed (not in
    ``rec``) the dependency row forces S[c, v] = 1, and the keep rows S[t+1, v] <= S[t, v] +
    R[t, p_v], with R[t, p_v] = 0 after stage p_v, force every S[t, v] from p_v + 1 up to c;
    a required value likewise up to stage n. A view kept forces its base (S[t, w] <= S[t, b]):
    the base's stages are fixed along when its producer cannot be recomputed either, and the
    view's are left as columns otherwise. HiGHS's presolve finds these itself, but as
    constants they are never built."""
    n, V = p.n, p.values
    kept = [-1] * len(V)
    if published:  # Checkmate's model as published keeps every S column
        return kept
    for c in range(n):
        for v in p.reads[c]:
            if V[v].producer not in rec:
                kept[v] = max(kept[v], c)
    for v in p.required:
        if V[v].producer not in rec:
            kept[v] = n
    for v, val in enumerate(V):
        if val.base is not None and kept[v] >= 0:
            b = val.base
            if V[b].producer in rec:
                kept[v] = -1
            else:
                kept[b] = max(kept[b], kept[v])
    return kept


def _rs_count(p: RematProblem, rec: set[int], lim, need_until: list[int], useful_until: list[int],
              kept: list[int]) -> int:
    n, V = p.n, p.values
    n_r = sum(max(0, min(n, lim[k], useful_until[k]) - k) for k in rec)
    n_s = sum(max(0, min(need_until[v], n) - max(V[v].producer, kept[v])) for v in range(len(V)))
    return n_r + n_s


def rs_columns(p: RematProblem, recomputable: set[int] | None = None, published: bool = False,
               stages: dict[int, set[int]] | None = None) -> int:
    """The R and S columns ``build`` would create (counted without building anything);
    ``stages`` as in ``build``."""
    rec = set(range(p.n)) if recomputable is None or published else set(recomputable)
    if stages is None or published:
        return _rs_count(p, rec, *_horizons(p, rec, published), _kept_until(p, rec, published))
    rec &= set(stages)
    lim, need_until, useful_until = _horizons(p, rec, False, stages)
    n_s = _rs_count(p, set(), lim, need_until, useful_until, _kept_until(p, rec))
    return n_s + sum(1 for k in rec for t in stages[k] if k < t <= min(p.n, lim[k], useful_until[k]))


def build(p: RematProblem, capacity: int, recomputable: set[int] | None = None,
          published: bool = False, deadline: float | None = None,
          stages: dict[int, set[int]] | None = None) -> Model | None:
    """Checkmate's model at ``capacity`` units. None when trivially infeasible (an op's own
    outputs exceed the capacity). ``recomputable=None`` = every op. Raises ``BuildTimeout``
    when ``deadline`` (a ``time.perf_counter()`` value) passes during the build. ``stages``
    (op -> stages): R[t,k] exists only for t in ``stages[k]`` (ops without an entry are never
    recomputed). That model is a *restriction*: its plans are plans, its optimum is no bound."""
    import time

    def check() -> None:
        if deadline is not None and time.perf_counter() > deadline:
            raise BuildTimeout(f"model build passed its deadline ({p.n} ops)")

    n, V = p.n, p.values
    m = Model()
    rec = set(range(n)) if recomputable is None or published else set(recomputable)
    if published:
        stages = None
    if stages is not None:
        rec &= set(stages)
    if capacity < 0 or any(p.out_units[k] > capacity for k in range(n)):
        return None
    lim, need_until, useful_until = _horizons(p, rec, published, stages)
    m.offset = float(sum(p.cost))
    kept = _kept_until(p, rec, published)
    rs = _rs_count(p, rec, lim, need_until, useful_until, kept)
    if rs > MAX_RS_COLUMNS:
        raise ModelTooLarge(f"the MILP would have {rs:,} R and S columns ({p.n} ops; at most "
                            f"{MAX_RS_COLUMNS:,} are built, about 4.5 GB): too large for memory")
    # ----- R and S -----
    # Useless recomputations (exact): R[t,k] with t beyond every stage in which an output of k
    # can still be read or kept (need_until) never helps. Proof: no reader of k's outputs runs
    # in stage t (a non-recomputable reader only in its own stage, a recomputable one only up
    # to its limit, both <= need_until) and no S[t+1,.] of k's outputs exists, so setting
    # R[t,k] = 0 keeps every dependency and keep row satisfied, lowers memory and cost.
    for t in range(n + 1):
        check()
        for k in range(min(t, n)):
            if k in rec and t <= lim[k] and t <= useful_until[k] and (stages is None or t in stages[k]):
                m.R[t, k] = m.var(f"R_{t}_{k}", 0, 1, p.cost[k])
    for v, val in enumerate(V):
        check()
        for t in range(max(val.producer, kept[v]) + 1, min(need_until[v], n) + 1):
            m.S[t, v] = m.var(f"S_{t}_{v}", 0, 1)

    def r_term(t: int, k: int) -> tuple[str, int | None]:
        """('one'|'zero'|'var', col) for R[t,k]."""
        if k == t and t < n:
            return "one", None
        c = m.R.get((t, k))
        return ("var", c) if c is not None else ("zero", None)

    def s_term(t: int, v: int) -> tuple[str, int | None]:
        if t == n + 1:
            return ("one", None) if v in req else ("zero", None)
        if V[v].producer < t <= kept[v]:
            return "one", None
        c = m.S.get((t, v))
        return ("var", c) if c is not None else ("zero", None)

    req = set(p.required)
    # ----- keep: S[t+1,v] <= S[t,v] + R[t,p_v] (and required values present at the end) -----
    for v, val in enumerate(V):
        check()
        pv = val.producer
        for t in range(pv + 1, n + 1):
            kind, col = s_term(t + 1, v)
            if kind == "zero":
                continue
            terms: list[tuple[int, float]] = []
            lo = -INF
            hi = 0.0
            if kind == "var":
                terms.append((col, 1.0))
            else:
                hi = -1.0  # constant 1 on the left: 1 <= S[t] + R  ->  -S - R <= -1
            sk, sc = s_term(t, v)
            if sk == "var":
                terms.append((sc, -1.0))
            elif sk == "one":
                continue
            rk, rc = r_term(t, pv)
            if rk == "var":
                terms.append((rc, -1.0))
            elif rk == "one":
                continue
            if not terms:
                return None  # a required value cannot be present at the end
            m.row(terms, lo, hi)
    # views: kept view => kept base
    for v, val in enumerate(V):
        if val.base is None:
            continue
        for t in range(val.producer + 1, n + 1):
            wk, wc = s_term(t, v)
            if wk != "var":
                continue
            bk, bc = s_term(t, val.base)
            if bk == "var":
                m.row([(wc, 1.0), (bc, -1.0)], -INF, 0.0)
            elif bk == "zero":
                m.ub[wc] = 0.0
    # ----- dependencies: R[t,c] <= R[t,p_v] + S[t,v] -----
    for c in range(n):
        check()
        for t in range(c, n + 1):
            ck, cc = r_term(t, c)
            if ck == "zero":
                continue
            for v in p.reads[c]:
                pv = V[v].producer
                rk, rc = r_term(t, pv)
                if rk == "one":
                    continue
                sk, sc = s_term(t, v)
                if sk == "one":
                    continue
                terms = []
                if ck == "var":
                    terms.append((cc, 1.0))
                if rk == "var":
                    terms.append((rc, -1.0))
                if sk == "var":
                    terms.append((sc, -1.0))
                if ck == "one":
                    if len(terms) == 0:
                        return None  # op c must run in stage c but its input cannot be present
                    m.row(terms, -INF, -1.0)
                elif len(terms) == 1:
                    m.ub[cc] = 0.0
                else:
                    m.row(terms, -INF, 0.0)
    # ----- frees and memory -----
    nf = 0
    for t in range(n + 1):
        check()
        run = [k for k in range(min(t + 1, n)) if r_term(t, k)[0] != "zero"]
        frees_after: dict[int, list[tuple[int, int]]] = {}
        for v, val in enumerate(V):
            if val.size == 0 or val.producer > t:
                continue
            if t == n and v in req:
                continue
            tk = [k for k in p.touch[v] if k <= t and r_term(t, k)[0] != "zero"]
            if t < n and t in p.touch[v]:
                tk = [t]  # op t always runs in stage t: v can only die after it
            nk, nc = s_term(t + 1, v)
            if nk == "one":
                continue
            for k in tk:
                later = [j for j in p.touch[v] if k < j <= t]
                if any(r_term(t, j)[0] == "one" for j in later):
                    continue
                f = m.var(f"F_{t}_{v}_{k}", 0, 1)
                m.F[t, v, k] = f
                nf += 1
                rk, rc = r_term(t, k)
                if rk == "var":
                    m.row([(f, 1.0), (rc, -1.0)], -INF, 0.0)
                if nk == "var":
                    m.row([(f, 1.0), (nc, 1.0)], -INF, 1.0)
                for j in later:
                    jk, jc = r_term(t, j)
                    if jk == "var":
                        m.row([(f, 1.0), (jc, 1.0)], -INF, 1.0)
                frees_after.setdefault(k, []).append((f, val.size))
        prev, prev_k = None, -1
        for k in run:
            u = m.var(f"U_{t}_{k}", 0, capacity, integer=False)
            terms = [(u, 1.0)]
            lo = hi = 0.0
            if prev is None:
                for v, val in enumerate(V):
                    sk, sc = s_term(t, v)
                    if sk == "var" and val.size:
                        terms.append((sc, -float(val.size)))
                    elif sk == "one":
                        lo += float(val.size)  # kept for certain: a constant
            else:
                terms.append((prev, -1.0))
                for f, size in frees_after.get(prev_k, ()):
                    terms.append((f, float(size)))
            rk, rc = r_term(t, k)
            if rk == "var":
                terms.append((rc, -float(p.out_units[k])))
            else:
                lo += float(p.out_units[k])
            hi = lo
            m.row(terms, lo, hi)
            prev, prev_k = u, k
    m.stats = {"columns": m.ncols, "rows": m.nrows, "R": len(m.R), "S": len(m.S), "F": nf,
               "recomputable_ops": len(rec), "published": published}
    return m


def decode(p: RematProblem, m: Model, x: np.ndarray | list[float]) -> list[list[int]]:
    """Stages (lists of op ids) from a solution vector."""
    stages = [[t] for t in range(p.n)] + [[]]
    for (t, k), c in m.R.items():
        if x[c] > 0.5:
            stages[t].append(k)
    return [sorted(s) for s in stages]
