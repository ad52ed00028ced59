"""A plan read off the checkpoint relaxation's solution, and where that plan overflows.

The relaxation (``formulations.checkpoints``) says which ops run again in each interval
between checkpoints, not in what order. Running each of them just before its first reader
in its interval (first runs stay in captured order, as in every plan here) gives a sequence
whose cost is exactly the relaxation's objective. When its minimal lifetimes fit the
capacity and the DSA places them, that plan costs the relaxation's optimum, a lower bound:
it is proven optimal with no stage MILP at all. When it does not fit, the moments at which
it exceeds the capacity are those the relaxation counts too loosely (rows 7 count only the
values live through a whole interval): the first runs there are the checkpoints that cut
the solution off (``overflow_checkpoints``).
"""
from __future__ import annotations

import bisect
import time

import numpy as np

from .problem import RematProblem
from .schedule import Lifetimes


def relaxed_sequence(p: RematProblem, checkpoints: list[int], runs: list[list[int]]) -> list[int]:
    """Ops in run order: first runs in captured order; each op of ``runs[i]`` run again just
    before its first reader among interval i's ops (first runs after checkpoint t_i up to
    t_{i+1}'s, and the other ops run again there), or just before t_{i+1} when nothing in the
    interval reads it (it is kept for later). Running late keeps the recomputed value's
    lifetime short; readers come later in captured order, so the result is topological."""
    cps = sorted(checkpoints)
    if not cps:
        return list(range(p.n))
    reads_from = [{p.values[v].producer for v in p.reads[k]} for k in range(p.n)]
    seq = list(range(cps[0] + 1))
    for i, t in enumerate(cps):
        last = i + 1 == len(cps)
        end = p.n - 1 if last else cps[i + 1]
        part = list(range(t + 1, end + 1))
        tail = len(part) if last else len(part) - 1  # where an op no one here reads goes
        # latest first: an op's readers among the ops run again are then already placed
        for k in sorted(runs[i] if i < len(runs) else (), reverse=True):
            at = next((j for j, c in enumerate(part) if k in reads_from[c]), tail)
            w = p.limit[k] if p.limit else p.n
            if t < w <= end:  # k reads what w overwrites in place: before w
                at = min(at, part.index(w))
            part.insert(at, k)
            if at <= tail:
                tail += 1
        seq += part
    return seq


def memory_profile(lt: Lifetimes) -> np.ndarray:
    """Live units at each position of ``lt.seq`` (inputs and outputs of the op there included)."""
    prof = np.zeros(len(lt.seq) + 1, dtype=np.int64)
    for _, lo, hi, size in lt.blocks:
        prof[lo] += size
        prof[hi] -= size
    return np.cumsum(prof)[:len(lt.seq)]


def overflow_checkpoints(lt: Lifetimes, checkpoints: list[int], capacity: int, limit: int = 1,
                         by_excess: bool = False) -> list[int]:
    """First runs at which ``lt`` exceeds ``capacity``, or the next after a recomputation that
    does (checkpoints excluded), at most ``limit`` per interval between ``checkpoints``, the
    largest excess first. Sorted op ids; ``by_excess``: the largest excess first instead."""
    cps = sorted(checkpoints)
    prof = memory_profile(lt)
    seen: set[int] = set()
    first: list[bool] = []
    for k in lt.seq:
        first.append(k not in seen)
        seen.add(k)
    # the next first run at or after each position that is not a checkpoint
    nxt: list[int | None] = [None] * len(lt.seq)
    cur = None
    for i in range(len(lt.seq) - 1, -1, -1):
        if first[i] and lt.seq[i] not in cps:
            cur = lt.seq[i]
        elif first[i]:
            cur = None  # a checkpoint ends the interval: nothing after it splits this moment
        nxt[i] = cur
    best: dict[int, dict[int, int]] = {}  # interval -> candidate -> largest excess
    for i in np.nonzero(prof > capacity)[0]:
        c = nxt[int(i)]
        if c is None:
            continue
        iv = bisect.bisect_right(cps, c) - 1
        d = best.setdefault(iv, {})
        d[c] = max(d.get(c, 0), int(prof[i]) - capacity)
    out: dict[int, int] = {}
    for d in best.values():
        out.update(sorted(d.items(), key=lambda x: (-x[1], x[0]))[:limit])
    return sorted(out, key=lambda c: (-out[c], c)) if by_excess else sorted(out)


def fit_sequence(p: RematProblem, seq: list[int], checkpoints: list[int], capacity: int,
                 deadline: float) -> list[int]:
    """``seq`` with ops run again moved earlier inside their interval while that lowers the
    memory above ``capacity`` (summed over positions, then the peak): first improvement,
    until it fits, nothing improves or ``deadline``. Same ops, never a higher cost: a move is
    taken only when ``lifetimes`` costs the result at most as much (it skips a run whose outputs
    are still live, so a move can make a later run needed again: hypothesis found a 6-op graph
    where moving one op raised the cost from 22 to 25). Why: running an op
    again just before its reader keeps its output short-lived, but keeps its inputs live until
    then; when its inputs are larger than its outputs, earlier is better. Candidate positions:
    right after the interval's checkpoint and right after each run of a producer of its
    inputs in the interval."""
    from .schedule import lifetimes

    cps = set(checkpoints)

    base = lifetimes(p, seq)
    if base is None:
        return seq
    most = base.cost + 1e-9 * max(1.0, abs(base.cost))

    def score(s: list[int]) -> tuple[int, int] | None:
        lt = lifetimes(p, s)
        if lt is None or lt.cost > most:
            return None
        prof = memory_profile(lt)
        over = prof[prof > capacity] - capacity
        return int(over.sum()), int(prof.max(initial=0))

    best = score(seq)
    if best is None or best[0] == 0:
        return seq
    seq = list(seq)
    improved = True
    while improved and best[0] > 0 and time.perf_counter() < deadline:
        improved = False
        seen: set[int] = set()
        start = 0  # position right after the current interval's checkpoint
        for j, k in enumerate(seq):
            if k not in seen:
                seen.add(k)
                if k in cps:
                    start = j + 1
                continue
            ins = {p.values[v].producer for v in p.reads[k]}
            cands = {start} | {i + 1 for i in range(start, j) if seq[i] in ins}
            for q in sorted(c for c in cands if c < j):
                s2 = seq[:q] + [k] + seq[q:j] + seq[j + 1:]
                sc = score(s2)
                if sc is not None and sc < best:
                    seq, best, improved = s2, sc, True
                    break
            if improved or time.perf_counter() >= deadline:
                break
    return seq
