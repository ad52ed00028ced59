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
evaluation counts). The opposite move too: when the value's next use is itself a rerun (a
chain rerun at the end for one small weight gradient, holding its inputs through the whole
backward), that rerun and the reruns it feeds are dropped, their reads served by the earlier
copies, and every rerun left dead is removed. The move with the lowest (peak, moments at the peak, cost) is kept, until
none lowers it (a local optimum) or the deadline. Candidates go largest first, and the first
move that lowers the peak itself is taken (each costs a rebuild of the lifetimes).

Recomputations go at the start of a stage in ascending op order, once per stage, so the result
stays in Checkmate's schedule class. Each candidate is evaluated by rebuilding the minimal
lifetimes (``keepset._Builder.state``, the rules of ``schedule.lifetimes``).
"""
from __future__ import annotations

import bisect
import itertools
import logging
import time

from .keepset import State, _Builder, _views
from .problem import RematProblem
from .schedule import lifetimes, recompute_stages, stage_sequence

log = logging.getLogger(__name__)

# largest values at the peak tried per step (each costs a rebuild of the sequence's lifetimes)
CANDIDATES = 16


def _stages(p: RematProblem, seq: list[int]) -> list[list[int]]:
    """Recomputations per stage (``schedule.recompute_stages``), ascending as in ``seq``."""
    out: list[list[int]] = [[] for _ in range(p.n)]
    for k, s in recompute_stages(seq):
        out[s].append(k)
    return out


def _flatten(stages: list[list[int]]) -> list[int]:
    """The sequence of ``_stages``' stages: each stage's reruns (all earlier ops), then its op."""
    return stage_sequence([[*rec, t] for t, rec in enumerate(stages)])


def _starts(stages: list[list[int]]) -> list[int]:
    """Position in the flat sequence where each stage's reruns begin."""
    out, pos = [], 0
    for rec in stages:
        out.append(pos)
        pos += len(rec) + 1
    return out


def split_peak(p: RematProblem, seq: list[int], deadline: float, target: int | None = None,
               b: _Builder | None = None, check_all: bool = True):
    """Yield states of ``seq`` improved by splitting lifetimes across the peak, each with a
    lower (peak, moments at the peak, cost) key than the one before; stop at a local optimum,
    the deadline or (``target``) once the peak is within ``target`` units. Each move taken is
    checked against ``schedule.lifetimes`` (``check_all`` False: none; the caller checks the
    end result: a rerun with views is rerun with its views, so the two rebuilds agree)."""
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
    banned: set[tuple] = set()
    st = b.state(_flatten(stages), 0)
    if st is None:
        return
    yield st
    while (target is None or st.peak > target) and time.perf_counter() < deadline:
        flat = list(st.seq)
        b.state(flat, st.dropped)
        prof = b._prof
        pos = st.argpeak
        starts = _starts(stages)
        at = seq_stage(starts, pos)
        busy = set(p.reads[flat[pos]]) | set(p.outs[flat[pos]])
        cands = [v for v in dict.fromkeys(b.live_at(pos))
                 if p.values[v].size > 0 and v not in busy and v not in b.forced
                 and p.values[v].base is None and not views.get(v)]
        cands += [v for v in dict.fromkeys(b.live_at(pos))
                  if p.values[v].size > 0 and v not in busy and v not in b.forced and views.get(v)]
        cands.sort(key=lambda v: -p.values[v].size)
        best = None
        for v in cands[:CANDIDATES]:
            k = p.values[v].producer
            if k > at:
                continue
            uses = [i for i, op in enumerate(flat) if op in users.get(v, ()) or op == k]
            moves = []
            added: list[int] = []
            for a, c in itertools.pairwise(uses):
                s = seq_stage(starts, c)
                if starts[s] <= a or k in stages[s] or s > limit[k] or s <= k:
                    continue
                if prof[a + 1:starts[s]].max(initial=0) < st.peak:
                    continue
                added.append(s)
            ops = _rerun(p, k, v, views, added, stages, limit) if added else None
            if ops is not None:
                moves.append((("rerun", k, tuple(added)), ops, []))
            nxt = next((c for c in uses if c > pos), None)
            if nxt is not None and flat[nxt] != seq_stage(starts, nxt):  # next used by a rerun
                s = seq_stage(starts, nxt)
                gone = _drop_rerun(p, stages, s, flat[nxt])
                moves.append((("drop", s, flat[nxt]), [], gone))
            for key, adds, removes in moves:
                if key in banned:
                    continue
                _apply(stages, adds, removes)
                dead = _dead_reruns(p, stages)
                _apply(stages, [], dead)
                removes = removes + dead
                got = b.state(_flatten(stages), st.dropped + 1)
                _undo(stages, adds, removes)
                if got is not None and (got.peak, got.at_peak, got.cost) < (st.peak, st.at_peak, st.cost) and (
                        best is None or (got.peak, got.at_peak, got.cost) < (best[1].peak, best[1].at_peak, best[1].cost)):
                    best = (key, got, adds, removes)
            if best is not None and best[1].peak < st.peak:  # the largest value that lowers the peak itself: taken
                break
            if time.perf_counter() > deadline:
                break
        if best is None:
            return
        key, got, adds, removes = best
        _apply(stages, adds, removes)
        lt = lifetimes(p, list(got.seq)) if check_all else None  # the fast rebuild must agree with the real rules
        if check_all and (lt is None or lt.peak_units != got.peak):
            _undo(stages, adds, removes)
            banned.add(key)
            log.debug("split: move %s disagrees with the lifetimes (%s vs %d): banned",
                      key, None if lt is None else lt.peak_units, got.peak)
            continue
        st = got
        log.debug("split: %s, peak %d", key, st.peak)
        yield st


Edit = list[tuple[int, list[int]]]  # (stage, ops) pairs: reruns added to or removed from a stage


def _apply(stages: list[list[int]], adds: Edit, removes: Edit) -> None:
    for s, ks in adds:
        for x in ks:
            bisect.insort(stages[s], x)
    for s, ks in removes:
        for x in ks:
            stages[s].remove(x)


def _undo(stages: list[list[int]], adds: Edit, removes: Edit) -> None:
    for s, ks in reversed(removes):
        for x in ks:
            bisect.insort(stages[s], x)
    for s, ks in adds:
        for x in ks:
            stages[s].remove(x)


def _drop_rerun(p: RematProblem, stages: list[list[int]], s: int, k: int) -> Edit:
    """Remove op k's rerun from stage s with the reruns of that stage fed by it (they would
    read the old copies of k's outputs, held since then, instead): the later reads are served
    by the copies computed before."""
    gone = {k}
    outs = set(p.outs[k])
    for x in stages[s]:  # ascending: a reader comes after what it reads
        if x in gone:
            continue
        if any(u in outs or p.values[u].base in outs for u in p.reads[x]):
            gone.add(x)
            outs.update(p.outs[x])
    return [(s, sorted(gone))]


def _dead_reruns(p: RematProblem, stages: list[list[int]]) -> Edit:
    """Reruns none of whose outputs is read before being computed again (or needed at the
    end): a backward liveness pass, as ``schedule.lifetimes`` does, that skips them."""
    V = p.values
    live: set[int] = set(p.required)
    for v in p.required:
        if V[v].base is not None:
            live.add(V[v].base)
    out: Edit = []
    for t in range(len(stages) - 1, -1, -1):
        dead = []
        for k in (t, *reversed(stages[t])):
            if k != t and not any(v in live for v in p.outs[k]):
                dead.append(k)
                continue
            live.difference_update(p.outs[k])
            for u in p.reads[k]:
                live.add(u)
                if V[u].base is not None:
                    live.add(V[u].base)
        if dead:
            out.append((t, dead))
    return out


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


def seq_stage(starts: list[int], pos: int) -> int:
    """Stage holding position ``pos`` of the flat sequence (``starts``: ``_starts``)."""
    return bisect.bisect_right(starts, pos) - 1


def split_state(p: RematProblem, seq: list[int], deadline: float, target: int | None = None) -> State | None:
    """The last state ``split_peak`` reaches (None: ``seq`` does not run), checked against
    ``schedule.lifetimes`` (when it differs, the split is redone checking every move)."""
    last = None
    for st in split_peak(p, seq, deadline, target, check_all=False):
        last = st
    lt = lifetimes(p, list(last.seq)) if last is not None else None
    if last is not None and (lt is None or lt.peak_units != last.peak):
        log.debug("split: the fast rebuild differs from the lifetimes; redone checking each move")
        for st in split_peak(p, seq, deadline, target):
            last = st
    return last
