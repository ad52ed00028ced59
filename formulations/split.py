"""Splitting long lifetimes across the peak: recompute a value again after the peak instead of
keeping its copy through it.

The keep-set and segment constructions (``formulations.keepset``, ``formulations.segments``)
decide per value whether it is kept; once a dropped value is recomputed it is held to its last
need. A large value read sparsely over a long stretch (an LSTM layer's input projection, read
by each segment recomputed in that layer's backward) then stays live through every peak moment
in between (the gradient accumulations), although its inputs are live there anyway. This pass
works on the op sequence itself: at the sequence's peak it takes a large value live there but
not used there and inserts a rerun of its producer at the start of the stage of its next use
after each peak moment between two uses (a gap); the old copy then dies at the use before the
gap. Inputs the rerun needs are live where they are (the copy is extended otherwise, which the
evaluation counts). The move with the lowest (peak, moments at the peak, cost) is kept, until
none lowers it (a local optimum) or the deadline.

Recomputations go at the start of a stage in ascending op order, once per stage, so the result
stays in Checkmate's schedule class. Each candidate is evaluated by rebuilding the minimal
lifetimes (``keepset._Builder.state``, the rules of ``schedule.lifetimes``).
"""
from __future__ import annotations

import bisect
import logging
import time

from .keepset import State, _Builder, _views
from .problem import RematProblem
from .schedule import lifetimes

log = logging.getLogger(__name__)

# largest values at the peak tried per step (each costs a rebuild of the sequence's lifetimes)
CANDIDATES = 8


def _stages(p: RematProblem, seq: list[int]) -> list[list[int]]:
    """Recomputations per stage: ``seq`` is stage 0's reruns, op 0, stage 1's reruns, op 1, ..."""
    out: list[list[int]] = [[] for _ in range(p.n)]
    done = 0
    for k in seq:
        if k == done:
            done += 1
        else:
            out[done].append(k)
    return out


def _flatten(stages: list[list[int]]) -> list[int]:
    return [k for t, rec in enumerate(stages) for k in (*rec, t)]


def _starts(stages: list[list[int]]) -> list[int]:
    """Position in the flat sequence where each stage's reruns begin."""
    out, pos = [], 0
    for rec in stages:
        out.append(pos)
        pos += len(rec) + 1
    return out


def split_peak(p: RematProblem, seq: list[int], deadline: float, target: int | None = None,
               b: _Builder | None = None):
    """Yield states of ``seq`` improved by splitting lifetimes across the peak, each with a
    lower (peak, moments at the peak, cost) key than the one before; stop at a local optimum,
    the deadline or (``target``) once the peak is within ``target`` units."""
    b = b or _Builder(p)
    limit = p.limit or (p.n,) * p.n
    views = _views(p)
    users: dict[int, set[int]] = {}  # value -> ops reading it or a view of it
    for k, rs in enumerate(p.reads):
        for v in rs:
            users.setdefault(v, set()).add(k)
            bv = p.values[v].base
            if bv is not None:
                users.setdefault(bv, set()).add(k)
    stages = _stages(p, seq)
    banned: set[tuple[int, tuple[int, ...]]] = set()
    st = b.state(_flatten(stages), 0)
    if st is None:
        return
    yield st
    while (target is None or st.peak > target) and time.perf_counter() < deadline:
        flat = list(st.seq)
        b.state(flat, st.dropped)
        prof = b._prof
        pos = st.argpeak
        at = seq_stage(stages, pos)
        busy = set(p.reads[flat[pos]]) | set(p.outs[flat[pos]])
        cands = [v for v in dict.fromkeys(b.live_at(pos))
                 if p.values[v].size > 0 and v not in busy and v not in b.forced
                 and p.values[v].base is None and not views.get(v)]
        cands += [v for v in dict.fromkeys(b.live_at(pos))
                  if p.values[v].size > 0 and v not in busy and v not in b.forced and views.get(v)]
        cands.sort(key=lambda v: -p.values[v].size)
        starts = _starts(stages)
        best = None
        for v in cands[:CANDIDATES]:
            k = p.values[v].producer
            if k > at:
                continue
            uses = [i for i, op in enumerate(flat) if op in users.get(v, ()) or op == k]
            added: list[int] = []
            for a, c in zip(uses, uses[1:]):
                s = seq_stage(stages, c)
                if starts[s] <= a or k in stages[s] or s > limit[k] or s <= k:
                    continue
                if prof[a + 1:starts[s]].max(initial=0) < st.peak:
                    continue
                added.append(s)
            if not added:
                continue
            ops = _rerun(p, k, v, views, added, stages, limit)
            if ops is None or (k, tuple(added)) in banned:
                continue
            for s, ks in ops:
                for x in ks:
                    bisect.insort(stages[s], x)
            got = b.state(_flatten(stages), st.dropped + len(added))
            for s, ks in ops:
                for x in ks:
                    stages[s].remove(x)
            if got is not None and (got.peak, got.at_peak, got.cost) < (st.peak, st.at_peak, st.cost) and (
                    best is None or (got.peak, got.at_peak, got.cost) < (best[2].peak, best[2].at_peak, best[2].cost)):
                best = (k, tuple(added), got, ops)
            if time.perf_counter() > deadline:
                break
        if best is None:
            return
        for s, ks in best[3]:
            for x in ks:
                bisect.insort(stages[s], x)
        lt = lifetimes(p, list(best[2].seq))  # the fast rebuild must agree with the real rules
        if lt is None or lt.peak_units != best[2].peak:
            for s, ks in best[3]:
                for x in ks:
                    stages[s].remove(x)
            banned.add(best[:2])
            log.debug("split: op %d's move disagrees with the lifetimes (%s vs %d): banned",
                      best[0], None if lt is None else lt.peak_units, best[2].peak)
            continue
        st = best[2]
        log.debug("split: op %d rerun in %d stages, peak %d", best[0], len(best[1]), st.peak)
        yield st


def _rerun(p: RematProblem, k: int, v: int, views: dict[int, list[int]], added: list[int],
           stages: list[list[int]], limit) -> list[tuple[int, list[int]]] | None:
    """Per stage of ``added``: op k, and the producers of v's views (a view read after the
    rerun must be a view of the new copy, or it would hold the old one), in that stage's reruns
    when not there yet. None when one of them may not run there."""
    vops = sorted({p.values[w].producer for w in views.get(v, ())} - {k})
    out = []
    for s in added:
        ks = [x for x in [k, *vops] if x < s and x not in stages[s]]
        if any(limit[x] < s for x in ks):
            return None
        out.append((s, ks))
    return out


def seq_stage(stages: list[list[int]], pos: int) -> int:
    """Stage holding position ``pos`` of the flat sequence (linear in the stages: called a few
    times per step)."""
    acc = 0
    for t, rec in enumerate(stages):
        acc += len(rec) + 1
        if pos < acc:
            return t
    return len(stages) - 1


def split_state(p: RematProblem, seq: list[int], deadline: float, target: int | None = None) -> State | None:
    """The last state ``split_peak`` reaches (None: ``seq`` does not run)."""
    last = None
    for st in split_peak(p, seq, deadline, target):
        last = st
    return last
