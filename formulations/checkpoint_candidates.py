"""Where to add checkpoints to the relaxation: moments at which a plan (or the relaxation's own
solution, read as a plan) pays recomputation that the relaxation does not see, because it
ignores the order inside an interval."""
from __future__ import annotations

import bisect

from .problem import RematProblem


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
    most ``limit``."""
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
    ``limit`` per interval, highest score first, then earliest."""
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
