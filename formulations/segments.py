"""Segment checkpointing on any DAG: keep the values that cross segment boundaries, recompute
each segment once when a later need reaches it (Chen et al.'s sqrt(n) scheme, generalised).

A training step saves forward values for a backward pass far later: the plain schedule's peak
is the pile of these *saved* values (in an unrolled LSTM, thousands of small ones). Dropping
them one at a time (``keepset.descend``) recomputes each from the nearest kept value at every
later need, so a step's values are recomputed once per backward step (quadratic) and the
descent stalls. Here, instead:
- *saved* values are those whose largest gap between two consecutive direct uses spans the
  plain schedule's peak stage and an eighth of the stages at least; the *region* is the
  stages that produce them;
- the region is cut into ``k`` segments of equal saved size; a value of the region read
  before its gap by an op of a later segment is a *checkpoint* (kept); every other value of
  the region is *sticky* (``keepset._Builder.sequence``): live for its first uses, dropped
  across its gap, recomputed at its first later need (with the rest of its segment, from the
  checkpoints) and then kept to its last need;
- on several levels (Revolve-like, as Chen's recursive variant): every ``groups`` segments
  form one of the level above, up to ``depth`` levels; only the checkpoints of the top
  level's cuts are kept, one of a lower level l is sticky too, recomputed (then held) when
  its level-l segment is first needed: the checkpoints of a far segment (an LSTM's lower
  layer, during the upper layer's backward) are then few and coarse;
- ``k``, ``groups`` and ``depth`` are searched (each candidate is one sequence build): few
  segments keep few checkpoints but recompute a large segment at once, many do the
  opposite; and so is whether an op gathering from several earlier segments keeps its own
  output instead.
Values outside the region keep their plain lifetimes. The result is a keep-set state, so the
descent can go on from it (``keepset.descend(..., start=...)``).
"""
from __future__ import annotations

import itertools
import logging
import time

import numpy as np

from .keepset import Start, State, _Builder, _uses
from .problem import RematProblem

log = logging.getLogger(__name__)

# a saved value's gap spans at least this share of the stages (a forward value kept for the
# backward pass; a forward-only graph has none, and the sweep is skipped)
MIN_GAP = 0.125
# a start must be at most this share of the plain peak to be used
GAIN = 0.9
# segment counts tried, as multiples of sqrt(number of saved values)
K_FACTORS = (0.125, 0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)
# several levels (Revolve-like): fine segment counts (as K_FACTORS), and per number of levels
# below the kept checkpoints, the fine segments grouped into one segment of the level above
FINE_FACTORS = (1.0, 1.4, 2.0, 2.8, 4.0, 5.6)
LEVELS = ((1, (2, 3, 4, 6, 8, 12, 16)), (2, (2, 3, 4, 6)))


def _largest_gap(us: list[int]) -> tuple[int, int]:
    """(a, b): the consecutive uses furthest apart ((-1, -1) with a single use)."""
    best = (-1, -1)
    for a, b in itertools.pairwise(us):
        if b - a > best[1] - best[0]:
            best = (a, b)
    return best


def segment_starts(p: RematProblem, deadline: float, b: _Builder | None = None):
    """Yield ((k, collect, groups, depth), Start, State) for each segment count, cut rule and
    levels tried (the lowest peak is the caller's pick); nothing when no value is saved across
    the plain schedule's peak."""
    b = b or _Builder(p)
    nv = len(p.values)
    keep0 = np.ones(nv, dtype=bool)
    seq = b.sequence(keep0)
    st = b.state(seq, 0) if seq is not None else None
    if st is None:
        return
    tstar = st.seq[st.argpeak]  # the plain schedule's peak position is its op's own stage
    uses = _uses(p)
    gaps = [_largest_gap(u) for u in uses]
    V = p.values
    fixed = set(p.required) | b.forced
    saved = [v for v in range(nv) if gaps[v][0] < tstar < gaps[v][1] and v not in fixed
             and gaps[v][1] - gaps[v][0] >= p.n * MIN_GAP and (V[v].size > 0 or V[v].base is not None)]
    if not saved:
        return
    lo = min(V[v].producer for v in saved)
    hi = max(V[v].producer for v in saved)
    lim = p.limit or (p.n,) * p.n  # a value whose producer may not run at its last need stays out
    region = [v for v in range(nv) if lo <= V[v].producer <= hi and v not in fixed
              and lim[V[v].producer] >= uses[v][-1]]
    saved_set = set(saved)
    in_region = set(region)
    ops = sorted({V[v].producer for v in region})
    # hold: the last use before the gap for saved values, the last use for the others
    hold = np.full(nv, -1, dtype=np.int64)
    resume = np.full(nv, -1, dtype=np.int64)
    for v in region:
        if v in saved_set:
            hold[v], resume[v] = gaps[v]
        else:
            hold[v] = uses[v][-1]
    order = sorted(saved, key=lambda v: V[v].producer)
    csize = np.cumsum([max(1, V[v].size) for v in order])
    tried = set()
    combos = [(f, c, 1, 1) for c in (False, True) for f in K_FACTORS]
    combos += [(f, True, grp, depth) for depth, groups in LEVELS for f in FINE_FACTORS for grp in groups]
    for f, collect, grp, depth in combos:
        k = max(1, min(len(order), round(f * len(order) ** 0.5)))
        if (k, collect, grp, depth) in tried or (grp > 1 and k < 2 * grp ** depth):
            continue
        tried.add((k, collect, grp, depth))
        if time.perf_counter() > deadline:
            return
        # segment j of a stage: by the saved size produced before it
        cuts = [V[order[int(np.searchsorted(csize, csize[-1] * j / k))]].producer for j in range(1, k)]
        seg = np.searchsorted(np.asarray(cuts, dtype=np.int64), np.arange(p.n + 1), side="right")
        keep = np.ones(nv, dtype=bool)
        keep[region] = False
        # level of a checkpoint (``_level``; 0: not one); above ``depth``: kept
        lev = np.zeros(nv, dtype=np.int64)
        for op in ops:  # each op reading across a cut: keep the smaller side of the cut
            sk = seg[op]
            cross = [v for v in p.reads[op] if v in in_region and seg[V[v].producer] < sk]
            if not cross:
                continue
            # ``collect``: an op gathering from several earlier segments (a stack of every
            # step's output) is a checkpoint itself, else its inputs would pin every segment
            if (sum(V[v].size for v in cross) >= sum(V[v].size for v in p.outs[op])
                    or (collect and len({seg[V[v].producer] for v in cross}) > 1)):
                side = [v for v in p.outs[op] if v in in_region]
            else:
                side = cross
            top = max(_level(int(seg[V[v].producer]), int(sk), grp, depth) for v in cross)
            for v in side:
                lev[v] = max(lev[v], top)
        keep[region] |= lev[region] > depth
        lev[keep] = 0
        for v in region:  # a view follows its base: a kept view would hold a dropped base
            bv = V[v].base
            if bv is not None and not keep[bv]:
                keep[v] = False
                lev[v] = lev[bv]
        # a segment is recomputed when its first value is needed again: from then on its
        # recomputed values are held (before, a later segment's chain only passes through)
        window = np.full(nv, -1, dtype=np.int64)
        first: dict[int, int] = {}
        for v in saved:
            if not keep[v]:
                j = int(seg[V[v].producer])
                first[j] = min(first.get(j, p.n), int(resume[v]))
        # a segment of level l (grp**l fine ones) is due at the first need of any of its fine ones
        due: dict[tuple[int, int], int] = {}
        for j, t in first.items():
            for lv in range(depth + 1):
                key = (lv, j // grp ** lv)
                due[key] = min(due.get(key, p.n), t)
        for v in region:  # the segment's other values too: none is held before it is due
            if not keep[v]:
                # a checkpoint of level l is recomputed (and then held) when its level-l segment is due
                lv = int(lev[v])
                window[v] = due.get((lv, int(seg[V[v].producer]) // grp ** lv), -1)
        seq = b.sequence(keep, hold, resume, window)
        got = b.state(seq, int((~keep).sum())) if seq is not None else None
        if got is None:
            continue
        log.debug("segments: k=%d collect=%s groups=%d depth=%d peak %d (plain %d) cost %.1f",
                  k, collect, grp, depth, got.peak, st.peak, got.cost)
        yield (k, collect, grp, depth), Start(keep, hold, resume, window), got


def _level(a: int, b: int, grp: int, depth: int) -> int:
    """Level of a checkpoint between fine segments a < b: 1 + the levels l (1..``depth``) whose
    segments (``grp``**l fine ones each) differ for a and b; above ``depth``: kept."""
    lv = 1
    while lv <= depth and a // grp ** lv != b // grp ** lv:
        lv += 1
    return lv


def ranked_starts(p: RematProblem, deadline: float) -> list[tuple[Start, State]]:
    """The segment-checkpointed keep sets tried, lowest (peak, cost) first, each at most a
    ``GAIN`` share of the plain peak (a start barely under it is not worth the time from it)."""
    got = sorted(((start, st) for _, start, st in segment_starts(p, deadline)),
                 key=lambda x: (x[1].peak, x[1].cost))
    if not got:
        return []
    b = _Builder(p)
    plain = b.state(b.sequence(np.ones(len(p.values), dtype=bool)), 0)
    return [x for x in got if x[1].peak <= GAIN * plain.peak]


def segment_start(p: RematProblem, deadline: float):
    """The segment-checkpointed keep set with the lowest peak (None: no value is saved across
    the plain schedule's peak, no candidate built, or none lowers the plain peak by a
    ``GAIN`` factor)."""
    got = ranked_starts(p, deadline)
    return got[0][0] if got else None
