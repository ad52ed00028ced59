"""A lower bound over several moments at once: Checkmate's model aggregated to checkpoints.

The closure LP (``formulations.bounds``) looks at one moment: the first run M_t of one op t.
Its weakness is that a recomputation counts for every moment at once: a value recomputed to
fit memory at one tight moment may be dropped and recomputed again for the next, and the
closure never sees that. This relaxation keeps several moments M_1 < ... < M_m (the first
runs of checkpoint ops t_1 < ... < t_m, in captured order as every method here runs them) and
the intervals between them:

- ``L[i, v]``: value v is live at M_i (v's producer ran before M_i; outputs of t_i are
  allocated at M_i and count as live);
- ``r[i, k]``: op k runs again in interval i (after M_i, before M_{i+1}; after M_m for the
  last), for k <= t_i that may still run then (``limit``). Cost sum c_k r[i, k].

Rows, each true of every plan (read each variable off the plan):
1. memory at M_i: live units + t_i's outputs <= capacity;
2. t_i's inputs are live at M_i; a live view keeps its base live;
3. persistence: a value live at M_i was live at M_{i-1} or produced in interval i-1:
   L[i, v] <= L[i-1, v] + r[i-1, p_v] (no row when p_v first runs in that interval or is
   t_{i-1}; none for i = 1: memory before M_1 is free);
4. use: an op that runs in interval i (its first run, or r[i, k]) needs each input live at
   M_i or produced in interval i: L[i, u] + r[i, p_u] (+1 when p_u first runs in interval i)
   >= run(k). The op t_{i+1} itself is covered by rows 2 and 3 at M_{i+1};
5. the end: a required value is live at M_m or produced in interval m;
6. each moment's closure (``formulations.bounds``) on z[i, k] <= sum over j >= i of r[j, k];
7. memory inside the intervals: ``W[i, v]`` (v live throughout interval i) >= L[i, v] +
   L[i+1, v] - 1 - r[i, p_v] (for the last interval, L[i+1, v] is "v is required"), and
   every op that runs in interval i (a first run, or r[i, k] = 1) finds the W values live
   beside its own inputs and outputs: sum of W sizes (its inputs counted once) + its inputs
   + its outputs <= capacity.

The order inside an interval is ignored, and between checkpoints only the values that live
through a whole interval are counted (a relaxation). With several checkpoints it is at least
the largest of their closures (project r onto min(1, sum over intervals)), and larger where
moments compete for the same recomputations. Solved as an LP or, within a time limit, a MIP
whose dual bound counts. The LP is weaker than the MIP by more than one would think: with
fractional values one recomputation serves two intervals (the projection argument above
needs integers), so adding checkpoints can lower the LP (unet 0.4: 10 checkpoints 14.46%,
40 13.95%) while the MIP's optimum never falls.

Measured (``python bench/bench_checkpoints.py``, 10 checkpoints, load 2; exact runs by
``planner solve``). Without rows 7 the relaxation was weak where memory is tight *between* first runs
because of recomputation chains: layered:100 at 0.9 gave 0.37% against the optimum 1.30%,
whatever the number of checkpoints. Rows 7 make it 1.296%, the optimum (MIP 1.3 s), and
layered:250 at 0.9 0.516% (was 0.147%), which proves gap eviction's 0.52% plan: exact proves
both in 3-4 s (they took 105 s and were open at 120 s). unet at 0.4 is unchanged: closure
13.67%, LP 14.46%, MIP 15.12% (12.7 s with rows 7, 6.9 s without; 20 checkpoints give the
same, 40 and 80 do not finish in 60 s). layered:100 and layered:250 at 0.8 are unchanged
(2.78%, 1.62%). For comparison, Checkmate's own LP relaxation on unet at 0.4 (the sparsified
model, interior point without crossover, 574 s) is 8.04%: the stage MILP's root is far weaker
than this relaxation there, and it cannot prove unet at 0.4 by branching in any time
measured here.
Checked against exhaustive search (random 3-5 op graphs) and Checkmate's MILP proven without
addresses (8-16 ops): never above the optimum (``tests/test_checkpoints.py``).
"""
from __future__ import annotations

import bisect
import logging
import time
from dataclasses import dataclass

import numpy as np

from .bounds import _value_arrays, tight_ops
from .problem import RematProblem

log = logging.getLogger(__name__)

INTERVAL_MEMORY = True  # rows 7 (memory inside the intervals); False only for ablations


def choose_checkpoints(p: RematProblem, capacity: int, m: int) -> list[int]:
    """Up to ``m`` checkpoint ops: the tightest first, then spread so that each new one is
    the tightest op far from those chosen (neighbouring moments see the same values)."""
    tight = tight_ops(p, capacity)
    if len(tight) <= m:
        return sorted(t for _, t in tight)
    # greedy: repeatedly take the op of largest excess * distance to the chosen set
    chosen: list[int] = []
    ops = np.array([t for _, t in tight])
    exv = np.array([e for e, _ in tight], dtype=np.float64)
    dist = np.full(len(ops), np.inf)
    for _ in range(m):
        score = exv * np.minimum(dist, p.n)
        j = int(np.argmax(score))
        if score[j] <= 0:
            break
        chosen.append(int(ops[j]))
        dist = np.minimum(dist, np.abs(ops - ops[j]))
    return sorted(chosen)


def checkpoint_bound(p: RematProblem, capacity: int, checkpoints: list[int], *, integer: bool = False,
                     time_limit: float = 30.0, threads: int = 1, seed: int = 0, cutoff: float | None = None,
                     coarse: list[list[int]] = ()) -> tuple[float, str]:
    """(least recomputation cost every plan pays, HiGHS status word); inf when the rows are
    infeasible (no plan fits). ``integer``: solve the 0/1 model and return its dual bound;
    ``cutoff`` (with ``integer``): only solutions below it are sought; the bound returned is
    then at most the cutoff (the cutoff itself proves that every plan costs at least that).
    ``coarse``: coarser checkpoint sets whose rows join the model (see ``_build_levels``)."""
    built = _build_levels(p, capacity, checkpoints, coarse, threads, seed, time.perf_counter() + time_limit)
    if isinstance(built, tuple):
        return built
    return _solve(built.h, p, integer, time_limit, cutoff)


def lp_then_mip(p: RematProblem, capacity: int, checkpoints: list[int], *, lp_time: float, deadline: float,
                threads: int = 1, seed: int = 0, cutoff: float | None = None,
                coarse: list[list[int]] = ()) -> dict:
    """The LP, then (while ``deadline`` leaves time and the LP is below ``cutoff``) the MIP, on
    one model built once (building is the slow part on large graphs): ``{"lp": (value,
    status), "mip": (value, status), "windows": ...}``, "mip" absent when not run, "windows"
    (``recompute_windows`` of the MIP's best solution) only when the MIP found one.
    ``coarse``: coarser checkpoint sets whose rows join the model (see ``_build_levels``)."""
    built = _build_levels(p, capacity, checkpoints, coarse, threads, seed, deadline)
    if isinstance(built, tuple):
        return {"lp": built}
    out = {"lp": _solve(built.h, p, False, lp_time, None)}
    lp = out["lp"][0]
    left = deadline - time.perf_counter()
    if lp != float("inf") and (cutoff is None or lp < cutoff) and left > 0.5:
        out["mip"] = _solve(built.h, p, True, left, cutoff)
        runs = _runs_of(built, p, cutoff)
        if runs is not None:
            out["windows"] = recompute_windows(built.checkpoints, p.n, runs)
            out["runs"] = runs
            out["checkpoints"] = built.checkpoints
    return out


def recompute_windows(checkpoints: list[int], n: int, runs: list[list[int]]) -> dict[int, set[int]]:
    """Where the relaxation recomputes, in the stages of Checkmate's model (``formulations.model``:
    stage t ends with op t's first run; stage n follows the last): op k -> the stages of every
    interval i whose ``runs[i]`` holds k. Interval i (after M_i, before M_{i+1}) is the stages
    t with t_i < t <= t_{i+1}; the last one runs to n."""
    out: dict[int, set[int]] = {}
    for i, ks in enumerate(runs):
        lo = checkpoints[i] + 1
        hi = checkpoints[i + 1] if i + 1 < len(checkpoints) else n
        for k in ks:
            out.setdefault(k, set()).update(range(max(lo, k + 1), hi + 1))
    return {k: w for k, w in out.items() if w}


def widen_windows(p: RematProblem, windows: dict[int, set[int]]) -> dict[int, set[int]]:
    """``windows`` with each op's stages extended from its first window up to its first reader
    after its last window (within ``p.limit``). Why: the relaxation sees memory only at the
    checkpoints, so of the intervals between one run and the next reader it picks any, while a
    plan recomputes just before the reader. Measured on unet at 0.4 (11 checkpoints): the
    optimum 15.53% recomputes op 38 at stage 187 and op 12 at 206, where the relaxation's
    solution ran them in (145, 159] and (137, 145]; the guided MILP on the widened windows
    (4,894 stages instead of 3,866) reaches the optimum with no incumbent, in 8.9-22.7 s over
    four optimal solutions of that relaxation (cutoff at the bound)."""
    readers: dict[int, list[int]] = {}  # op -> the ops that read one of its values
    for j in range(p.n):
        for v in p.reads[j]:
            readers.setdefault(p.values[v].producer, []).append(j)
    lim = p.limit or (p.n,) * p.n
    out = {}
    for k, w in windows.items():
        w = set(w)
        after = [j for j in readers.get(k, ()) if j > max(w)]
        if after:
            w.update(range(min(w), min(min(after), lim[k]) + 1))
        out[k] = w
    return out


def _runs_of(built: _Built, p: RematProblem, cutoff: float | None = None) -> list[list[int]] | None:
    """The ops the MIP's best solution runs again in each interval; None when it has none
    below ``cutoff``: HiGHS reports "Optimal" with a solution above its objective bound when
    it proves that nothing lies below (unet at 0.4, 11 checkpoints, cutoff at the optimum:
    a solution of 126% overhead, whose windows held 150 ops instead of about 80)."""
    from .backends import power_of_two_scale

    h = built.h
    info = h.getInfo()
    if info.primal_solution_status != 2:  # 2: feasible
        return None
    if cutoff is not None and info.objective_function_value / power_of_two_scale(p.cost) >= cutoff:
        return None
    x = np.asarray(h.getSolution().col_value)
    return [[k for k, c in Ri.items() if x[c] > 0.5] for Ri in built.r]


def separating_checkpoints(checkpoints: list[int], runs: list[list[int]], cost, seq: list[int],
                           limit: int = 2) -> list[int]:
    """New checkpoints where the plan ``seq`` (ops in run order, first runs in captured order)
    pays recomputation that the relaxation's solution ``runs`` does not see. The relaxation
    ignores the order inside an interval, so one run of an op there serves every use, while a
    plan short of memory frees the value and runs the op again before a later use in the same
    interval. So first, for every op of positive cost that the plan runs twice in one
    interval with first runs in between, the first run right after the earlier of the two
    becomes a checkpoint (it splits the two runs into two intervals, and each is counted);
    at most ``limit`` per interval, those that separate the most cost first. When no op runs
    twice in an interval: in each interval where the plan pays more than ``runs``, the first
    runs that follow its recomputations, the most recomputation cost before each first, at
    most ``limit``.
    Measured on unet at 0.4: a 16.40% plan runs a batch norm and its relu (110, 111) again
    after first runs 131 and 132, inside the interval (131, 137) of the 10 default
    checkpoints; with 132 added, the relaxation (the 10 as a coarse level) proves the 15.53%
    plan optimal in 15 s. The previous rule (the costliest recomputations, 2 per interval)
    added 4, 1 and 2 checkpoints in three rounds without moving the bound from 15.12%."""
    cps = sorted(checkpoints)
    if not cps:
        return []
    ends = cps[1:] + [float("inf")]

    def interval(op: int) -> int:
        """i with t_i <= op < t_{i+1}; -1 before the first checkpoint."""
        return bisect.bisect_right(cps, op) - 1

    paid = [0.0] * len(cps)
    before: dict[int, float] = {}   # first run -> recomputation cost right before it
    firsts: list[int] = []          # first runs, in order
    at: dict[int, list[int]] = {}   # op -> index in firsts of the latest first run before each of its runs
    pending = 0.0       # recomputation cost since the latest first run
    for k in seq:
        if k in at and firsts:
            i = interval(firsts[-1])
            if i >= 0:
                paid[i] += float(cost[k])
                pending += float(cost[k])
        else:
            if pending > 0:
                before[k] = before.get(k, 0.0) + pending
            pending = 0.0
            firsts.append(k)
        at.setdefault(k, []).append(len(firsts) - 1)
    split: dict[int, dict[int, float]] = {}  # interval -> new checkpoint -> cost it separates
    for k, idx in at.items():
        if float(cost[k]) <= 0:
            continue
        for f1, f2 in zip(idx, idx[1:]):
            i = interval(firsts[f1])
            if f2 > f1 and i >= 0 and interval(firsts[f2]) == i:
                c = firsts[f1 + 1]
                split.setdefault(i, {})
                split[i][c] = split[i].get(c, 0.0) + float(cost[k])
    if split:
        out = []
        for cands in split.values():
            out += [c for c, _ in sorted(cands.items(), key=lambda x: (-x[1], x[0]))[:limit]]
        return sorted(set(out) - set(cps))
    relaxed = [sum(float(cost[k]) for k in ks) for ks in runs]
    tol = 1e-9 * max(1.0, sum(float(c) for c in cost))
    out: list[int] = []
    for i, t in enumerate(cps):
        if paid[i] <= relaxed[i] + tol:
            continue
        inside = sorted((-c, k) for k, c in before.items() if t < k < ends[i])  # costliest, then earliest
        out += [k for _, k in inside[:limit]]
    return sorted(out)


def shared_recomputations(p: RematProblem, checkpoints: list[int], runs: list[list[int]],
                          limit: int = 2) -> list[int]:
    """New checkpoints read off the relaxation's own solution (no plan needed): where one
    recomputation in an interval serves several first runs. The relaxation ignores the order
    inside an interval, so an op it runs again once there feeds every first run that needs it
    (directly, or through other ops it runs again there); a plan short of memory cannot keep
    the value from the first of those uses to the last, and pays again. For each op k of
    positive cost in ``runs[i]``, its *demand points* are the first runs in interval i (and the
    next checkpoint) that read its outputs, or those of an op in ``runs[i]`` that reads them,
    transitively; every demand point but the last is a candidate (a moment at which k's output
    is in use and still needed later), scored by the cost of the ops it splits. At most
    ``limit`` per interval, highest score first, then earliest.
    Measured on unet at 0.4: the 10 default checkpoints' solution (15.12%) runs the batch norm
    110 and the relu 111 once in (131, 137), for the first runs 132 (through the convolution
    114 it also runs again), 133 and 134; the candidates 132 and 133 lift the relaxation (the
    10 as a coarse level) to 15.53%, the optimum."""
    cps = sorted(checkpoints)
    out: list[int] = []
    for i, t in enumerate(cps):
        if i >= len(runs) or not runs[i]:
            continue
        nxt = cps[i + 1] if i + 1 < len(cps) else p.n
        again = set(runs[i])
        # consumers of each value inside the interval: first runs (and the next checkpoint)
        # and the ops run again there
        readers: dict[int, list[int]] = {}
        for k in list(range(t + 1, min(nxt + 1, p.n))) + sorted(again):
            for u in p.reads[k]:
                readers.setdefault(u, []).append(k)
        memo: dict[int, frozenset[int]] = {}

        def demand(k: int) -> frozenset[int]:
            """Demand points of k (readers come after k in captured order: no cycle)."""
            if k not in memo:
                pts: set[int] = set()
                for v in p.outs[k]:
                    for r in readers.get(v, ()):
                        if r in again:
                            if r != k:
                                pts |= demand(r)
                        elif t < r <= nxt:
                            pts.add(r)
                memo[k] = frozenset(pts)
            return memo[k]

        score: dict[int, float] = {}
        for k in again:
            c = float(p.cost[k])
            if c <= 0:
                continue
            pts = sorted(demand(k))
            for d in pts[:-1]:
                if d not in cps:
                    score[d] = score.get(d, 0.0) + c
        out += [d for d, _ in sorted(score.items(), key=lambda x: (-x[1], x[0]))[:limit]]
    return sorted(set(out))


@dataclass(frozen=True)
class _Built:
    h: object                        # the relaxation as a HiGHS instance (continuous columns)
    checkpoints: list[int]           # t_1 < ... < t_m
    r: list[dict[int, int]]          # r[i][k] -> column of "op k runs again in interval i"
    L: list[dict[int, int]]          # L[i][v] -> column of "v is live at M_i" (-1: always)


def _build_levels(p: RematProblem, capacity: int, checkpoints: list[int], coarse: list[list[int]],
                  threads: int, seed: int, deadline: float = float("inf")):
    """The relaxation over ``checkpoints`` with the rows of each coarser set in ``coarse`` too
    (``_build`` and ``_combine``): (bound, status) when decided without a solver, like ``_build``.
    Each coarse set is made a subset of the finer ones (its moments must be theirs)."""
    fine = sorted({int(t) for t in checkpoints}.union(*[set(c) for c in coarse]))
    levels = sorted({tuple(sorted({int(t) for t in c})) for c in coarse if c} - {tuple(fine)}, key=len)
    last = _build(p, capacity, fine, threads, seed, deadline)
    if isinstance(last, tuple):
        return last
    built = []
    for c in levels:
        b = _build(p, capacity, list(c), threads, seed, deadline)
        if isinstance(b, tuple):
            if b[1] == "infeasible":
                return b  # then so is every plan
            continue  # nothing to add ("empty"), or out of time: the finer level alone
        built.append(b)
    return _combine(built + [last], p, threads, seed) if built else last


def _combine(levels: list[_Built], p: RematProblem, threads: int, seed: int) -> _Built:
    """One model holding every level's columns and rows (each a relaxation over a subset of
    the last level's checkpoints), the cost on the last level's r only, and rows that read
    each variable of a coarse level off the finest one: at a shared checkpoint, L is the same
    value ("live at that moment"); r[i, k] of a coarse interval is the OR of r over the fine
    intervals inside it (r >= each of them, r <= their sum). Every row holds for the values
    read off any plan (each level is a relaxation of the same plans), so the bound stays
    valid, and it is at least every level's alone. Why: more checkpoints weaken the LP (one
    fractional recomputation serves several short intervals; unet at 0.4: 10 checkpoints
    14.46%, 15 checkpoints 14.11%), and the coarse rows take that away: 14.66% with the 11 and
    15 sets together, whose MIP proves 15.53% in 83 s against 269 s for the 15 alone (2 cores,
    load 1)."""
    import highspy

    from .backends import _new_highs

    fine = levels[-1]
    lps = [b.h.getLp() for b in levels]
    offs = np.cumsum([0] + [lp.num_col_ for lp in lps]).tolist()
    nc = offs[-1]
    h = _new_highs(False)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", max(1, int(threads)))
    h.setOptionValue("random_seed", int(seed))
    h.addVars(nc, np.concatenate([lp.col_lower_ for lp in lps]), np.concatenate([lp.col_upper_ for lp in lps]))
    cost = np.zeros(nc)
    cost[offs[len(levels) - 1]:] = lps[-1].col_cost_
    h.changeColsCost(nc, np.arange(nc, dtype=np.int32), cost)
    for lp, off in zip(lps, offs):
        if lp.num_row_ == 0:
            continue
        a = lp.a_matrix_
        start, index, value = np.asarray(a.start_), np.asarray(a.index_), np.asarray(a.value_)
        if a.format_ != highspy.MatrixFormat.kRowwise:  # _build adds rows, so HiGHS keeps them row-wise
            from scipy.sparse import csc_matrix

            m = csc_matrix((value, index, start), shape=(lp.num_row_, lp.num_col_)).tocsr()
            start, index, value = m.indptr, m.indices, m.data
        h.addRows(lp.num_row_, np.asarray(lp.row_lower_), np.asarray(lp.row_upper_), len(index),
                  np.asarray(start[:-1], dtype=np.int32), np.asarray(index, dtype=np.int32) + off,
                  np.asarray(value, dtype=np.float64))
    lo: list[float] = []
    hi: list[float] = []
    starts: list[int] = [0]
    idx: list[int] = []
    val: list[float] = []

    def row(terms: list[tuple[int, float]], a: float, b: float) -> None:
        for c, v in terms:
            idx.append(c)
            val.append(v)
        starts.append(len(idx))
        lo.append(a)
        hi.append(b)

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
    if lo:
        h.addRows(len(lo), np.asarray(lo), np.asarray(hi), len(idx), np.asarray(starts[:-1], dtype=np.int32),
                  np.asarray(idx, dtype=np.int32), np.asarray(val, dtype=np.float64))
    log.info("checkpoint relaxation: %d levels (%s checkpoints), %d columns, %d rows", len(levels),
             "/".join(str(len(b.checkpoints)) for b in levels), nc, h.getNumRow())
    return _Built(h, fine.checkpoints, [{k: c + f_off for k, c in Ri.items()} for Ri in fine.r],
                  [{v: (c + f_off if c >= 0 else c) for v, c in Li.items()} for Li in fine.L])


def _build(p: RematProblem, capacity: int, checkpoints: list[int], threads: int, seed: int,
           deadline: float = float("inf")):
    """The relaxation (``_Built``), or (bound, status) when it is
    decided without a solver ("empty": no checkpoint or column; "infeasible"; "build timeout":
    building in Python passed ``deadline``, a ``time.perf_counter()`` value, and the bound is
    the trivial 0: on bert-large, 3,349 ops, the build alone took 17 s)."""
    import highspy

    from .backends import _new_highs, power_of_two_scale

    cps = sorted({int(t) for t in checkpoints})
    n, V = p.n, p.values
    if not cps or n == 0:
        return 0.0, "empty"
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
    rows_lo: list[float] = []
    rows_hi: list[float] = []
    starts: list[int] = [0]
    idx: list[int] = []
    val: list[float] = []

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
        for c, a in merged.items():
            idx.append(c)
            val.append(a)
        starts.append(len(idx))
        rows_lo.append(lo)
        rows_hi.append(hi)

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
        return float("inf"), "infeasible"
    except _BuildTimeout:
        return _timed_out(m, n)
    nc = len(cols_c)
    if nc == 0:
        return 0.0, "empty"
    h = _new_highs(False)
    h.setOptionValue("output_flag", False)
    highspy.Highs.resetGlobalScheduler(True)
    h.setOptionValue("threads", max(1, int(threads)))
    h.setOptionValue("random_seed", int(seed))
    f = power_of_two_scale(p.cost)
    h.addVars(nc, np.asarray(cols_lo), np.asarray(cols_hi))
    h.changeColsCost(nc, np.arange(nc, dtype=np.int32), np.asarray(cols_c) * f)
    nr = len(rows_lo)
    h.addRows(nr, np.asarray(rows_lo, dtype=np.float64), np.asarray(rows_hi, dtype=np.float64), len(idx),
              np.asarray(starts[:-1], dtype=np.int32), np.asarray(idx, dtype=np.int32),
              np.asarray(val, dtype=np.float64))
    log.info("checkpoint relaxation: %d checkpoints, %d columns, %d rows", m, nc, nr)
    return _Built(h, cps, R, L)


def _solve(h, p: RematProblem, integer: bool, time_limit: float, cutoff: float | None) -> tuple[float, str]:
    """Solve the built relaxation as an LP or (``integer``) as a MIP; see ``checkpoint_bound``."""
    import highspy

    from .backends import power_of_two_scale, run_confirmed

    f = power_of_two_scale(p.cost)
    h.setOptionValue("time_limit", float(max(0.01, time_limit)))
    if integer:
        nc = h.getNumCol()
        h.changeColsIntegrality(nc, np.arange(nc, dtype=np.int32), np.full(nc, highspy.HighsVarType.kInteger))
        h.setOptionValue("mip_rel_gap", 0.0)
        if cutoff is not None:
            h.setOptionValue("objective_bound", float(cutoff) * f)
    t0 = time.perf_counter()
    st = run_confirmed(h, float(max(0.01, time_limit)))
    log.info("checkpoint %s: %s in %.1fs", "MIP" if integer else "LP", h.modelStatusToString(st),
             time.perf_counter() - t0)
    if st == highspy.HighsModelStatus.kInfeasible:
        if integer and cutoff is not None:
            return float(cutoff), "cutoff"  # nothing below the cutoff (or nothing at all)
        return float("inf"), "infeasible"
    info = h.getInfo()
    if integer:
        b = float(info.mip_dual_bound)
        b = max(0.0, b / f) if np.isfinite(b) else 0.0
        if cutoff is not None:
            # nodes at or above the cutoff were pruned, not solved: what is proven beyond
            # the cutoff is only the cutoff itself
            b = min(b, float(cutoff))
        return b, h.modelStatusToString(st)
    if st != highspy.HighsModelStatus.kOptimal:
        return 0.0, h.modelStatusToString(st)
    return float(info.objective_function_value) / f, "optimal"


def _timed_out(checkpoints: int, ops: int) -> tuple[float, str]:
    log.info("checkpoint relaxation: build passed its deadline (%d checkpoints, %d ops)", checkpoints, ops)
    return 0.0, "build timeout"


class _BuildTimeout(Exception):
    """Building the relaxation passed its deadline."""


class _Infeasible(Exception):
    """A row with no columns whose constants violate it: no plan fits."""
