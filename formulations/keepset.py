"""Keep sets: a schedule built offline from the values it keeps, recomputing the rest on demand.

Runtime heuristics decide at the moment memory runs out and thrash on graphs where every
live value is needed again soon (random layered DAGs). Here the whole schedule is built from
a *keep set* K instead: ops run in captured order; before op t runs, each input that is not
live is recomputed from the nearest live ancestors (the missing ancestors, each once, in
index order: Checkmate's schedule class); after op t, a value stays live only if it is in K
and some later op (in captured order) reads it, or a later recomputation of a dropped
descendant needs it (kept values are the checkpoints the dropped ones are recomputed from).
K = every value is the plain schedule; dropping values from K trades recomputation for memory.

The search (``descend``) starts from K = every value and repeatedly drops from K one value
live at the peak moment of the sequence's minimal lifetimes (``schedule.lifetimes``
semantics, computed here without building blocks), alone or with up to ``GROUP_DEPTH``
levels of its inputs (moving its checkpoint back), taking the best of a few candidates by
(peak, moments at the peak, cost). It ends at a local optimum or the deadline. The search is
deterministic (no seed, no clock in its choices), so the same graph always yields the same
states; only the deadline can cut it short.

Used by ``formulations.constructive`` (the upper bound on the minimum feasible budget and
the ``constructive`` method).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from .problem import RematProblem, recompute_stage

log = logging.getLogger(__name__)

# candidates evaluated per descent step (ordered by size, largest first): more finds lower
# peaks per step but each costs a full rebuild of the sequence
CANDIDATES = 6
# levels of ancestors a group move may drop with a value (``_groups``: 1, 2, 4, ... of them)
GROUP_DEPTH = 64
# longest sequence a move may build: placing it (greedy best-fit is quadratic in the blocks)
# must stay within seconds (unet's lowest-peak sequence has 5.5k ops, bilstm's reached 55k)
MAX_SEQ = 20_000


@dataclass(frozen=True)
class State:
    seq: tuple[int, ...]    # op sequence (first computations in captured order, recomputations before)
    peak: int               # max live units of computed values over the sequence (residents excluded)
    at_peak: int            # positions of the sequence at that peak
    cost: float             # compute cost of the sequence
    argpeak: int            # first position at the peak
    dropped: int            # values removed from the keep set so far


@dataclass(frozen=True)
class Start:
    """A keep set to start the descent from, with its sticky values (``_Builder.sequence``)."""
    keep: np.ndarray     # bool per value: kept (a checkpoint for its dropped descendants)
    hold: np.ndarray     # int per value: stage a sticky value's first computation lives to (-1: not sticky)
    resume: np.ndarray   # int per value: stage a sticky value is recomputed at (-1: its last need)
    window: np.ndarray   # int per value: from this stage on a recomputation of it is held (-1: resume)


class _Builder:
    """Builds sequences from keep sets for one problem (precomputed reader lists)."""

    def __init__(self, p: RematProblem) -> None:
        self.p = p
        V = p.values
        n = p.n
        self.producer = [v.producer for v in V]
        self.size = [v.size for v in V]
        last = list(p.last_read)
        for v, val in enumerate(V):  # a view keeps its base: the base lives as long as the view
            if val.base is not None:
                last[val.base] = max(last[val.base], last[v])
        self.last = last
        self.required = set(p.required)
        self.limit = p.limit or (n,) * n
        # outputs of an op that writes over a resident can never be recomputed: always kept (other
        # ops with a limit may be recomputed before it: ``sequence`` refuses a keep set otherwise)
        self.forced = {v for v in range(len(V)) if self.limit[self.producer[v]] <= self.producer[v]}

    def sequence(self, keep: np.ndarray, hold: np.ndarray | None = None,
                 resume: np.ndarray | None = None, window: np.ndarray | None = None) -> list[int] | None:
        """Op sequence for keep mask ``keep`` (None: a needed recomputation is not allowed).
        ``hold`` (-1: none) makes a dropped value *sticky*: its first computation stays live
        to stage ``hold[v]``; ``resume[v]`` (-1: none) is the stage that recomputes it for its
        own next need, so only up to there its inputs must survive, and a recomputation from
        stage ``window[v]`` on (-1: the resume) stays live to its last need (a segment
        recomputed once, as in chain checkpointing). A recomputation before that only serves
        a descendant: it is freed at once."""
        p, limit, outs = self.p, self.limit, self.p.outs
        keep = keep.copy()
        keep[list(self.forced)] = True
        last = self.retention(keep, hold, resume)
        V = p.values
        live: dict[int, int] = {}                  # live value -> last stage it survives to
        expiring: list[list[int]] = [[] for _ in range(p.n)]
        seq: list[int] = []
        for t in range(p.n):
            ops = recompute_stage(p, t, live, limit)
            if ops is None:
                return None
            ops.append(t)
            seq.extend(ops)
            for k in ops:
                for v in outs[k]:
                    if keep[v]:
                        e = max(t, last[v])
                    elif hold is None or hold[v] < 0:
                        e = t
                    elif k == t:  # sticky: the first run lives to its hold
                        e = max(t, hold[v])
                    elif resume is not None and t < (
                            window[v] if window is not None and window[v] >= 0 else resume[v]):
                        e = t  # recomputed for a descendant before its segment is due: not held
                    else:  # past the gap: a recomputation lives to its last need
                        e = max(t, last[v])
                    live[v] = e
                    expiring[e].append(v)
                    bv = V[v].base  # a live view holds its base (``schedule.lifetimes`` does too)
                    if bv is not None and bv in live and live[bv] < e:
                        live[bv] = e
                        expiring[e].append(bv)
            for v in expiring[t]:
                if live.get(v) == t:
                    del live[v]
        return seq

    def retention(self, keep: np.ndarray, hold: np.ndarray | None = None,
                  resume: np.ndarray | None = None) -> list[int]:
        """Last stage each value must survive to: its last reader in captured order, or, for
        an input of a dropped value, the last stage that may recompute that value (a kept value
        is the nearest checkpoint its dropped descendants are recomputed from); for a sticky
        value, the stage that recomputes it (``resume``), or its own last need when that lies
        beyond its hold."""
        p, V = self.p, self.p.values
        eff = list(self.last)
        for u in range(len(V) - 1, -1, -1):  # values in production order: consumers come later
            if keep[u] or eff[u] < 0:
                continue
            need = eff[u]
            if hold is not None and hold[u] >= 0:
                if resume is not None and resume[u] >= 0:
                    need = min(need, int(resume[u]))
                elif need <= hold[u]:
                    continue
            for v in p.reads[V[u].producer]:
                eff[v] = max(eff[v], need)
                b = V[v].base
                if b is not None and eff[b] < need:
                    eff[b] = need
        return eff

    def state(self, seq: list[int], dropped: int) -> State | None:
        """Peak of ``seq``'s minimal lifetimes (same rules as ``schedule.lifetimes``)."""
        p = self.p
        V = p.values
        m = len(seq)
        inst_v: list[int] = []
        inst_s: list[int] = []
        inst_e: list[int] = []
        cur: dict[int, int] = {}
        cost = 0.0
        for i, k in enumerate(seq):
            for v in p.reads[k]:
                j = cur.get(v)
                if j is None:
                    return None
                inst_e[j] = i
                b = V[v].base
                if b is not None and b in cur:
                    inst_e[cur[b]] = i
            for v in p.outs[k]:
                cur[v] = len(inst_v)
                inst_v.append(v)
                inst_s.append(i)
                inst_e.append(i)
            cost += p.cost[k]
        for v in p.required:
            if v in cur:
                inst_e[cur[v]] = m - 1
        for v, j in cur.items():  # a live view holds its base to the end with it
            b = V[v].base
            if b is not None and b in cur and inst_e[j] == m - 1:
                inst_e[cur[b]] = m - 1
        sizes = np.fromiter((self.size[v] for v in inst_v), dtype=np.int64, count=len(inst_v))
        diff = np.zeros(m + 1, dtype=np.int64)
        np.add.at(diff, np.asarray(inst_s, dtype=np.int64), sizes)
        np.add.at(diff, np.asarray(inst_e, dtype=np.int64) + 1, -sizes)
        prof = np.cumsum(diff)[:m]
        peak = int(prof.max()) if m else 0
        at = np.flatnonzero(prof == peak)
        self._prof, self._inst = prof, (inst_v, inst_s, inst_e)
        return State(tuple(seq), peak, int(at.size), cost, int(at[0]) if at.size else 0, dropped)

    def live_at(self, pos: int) -> list[int]:
        """Values live at position ``pos`` of the last sequence passed to ``state``."""
        inst_v, inst_s, inst_e = self._inst
        return [v for v, s, e in zip(inst_v, inst_s, inst_e) if s <= pos <= e]


def _key(s: State) -> tuple:
    return (s.peak, s.at_peak, s.cost)


def _better(a: State, b: State, base: State, target: int | None) -> bool:
    """Is move ``a`` better than ``b`` from ``base``? Without a target: the lower key (the
    least memory). With one: the least added cost per unit of peak removed (a move that only
    thins the peak's moments counts as removing half a unit), so that the first state under
    the target is a cheap one."""
    if target is None:
        return _key(a) < _key(b)

    def price(s: State) -> float:
        gain = base.peak - s.peak if s.peak < base.peak else 0.5
        return (s.cost - base.cost) / gain

    return (price(a), _key(a)) < (price(b), _key(b))


def descend(p: RematProblem, deadline: float, target: int | None = None, start: Start | None = None):
    """Yield the states of the keep-set descent, each with a lower (peak, moments, cost)
    key than the one before; stop at a local optimum, the deadline, or (``target``) after the
    first state whose peak is within ``target`` units. Without a target each step takes the
    candidate with the lowest key; with one, the cheapest per unit of peak (``_better``).
    ``start``: begin from that keep set (with its sticky values) instead of keep-everything."""
    b = _Builder(p)
    nv = len(p.values)
    views = _views(p)
    keep = np.ones(nv, dtype=bool) if start is None else start.keep.copy()
    hold = None if start is None else start.hold.copy()
    resume = None if start is None else start.resume.copy()
    window = None if start is None else start.window.copy()
    seq = b.sequence(keep, hold, resume, window)
    st = b.state(seq, 0) if seq is not None else None
    if st is None:
        return
    yield st
    while target is None or st.peak > target:
        if time.perf_counter() > deadline:
            log.debug("constructive: deadline after %d drops, peak %d", st.dropped, st.peak)
            return
        seq_pos = st.argpeak
        b.state(list(st.seq), st.dropped)  # refresh the instance table for this state
        k = st.seq[seq_pos]
        busy = set(p.reads[k]) | set(p.outs[k])
        cands = [v for v in dict.fromkeys(b.live_at(seq_pos))
                 if keep[v] and v not in busy and b.size[v] > 0 and v not in b.forced
                 and v not in b.required]
        cands.sort(key=lambda v: (-b.size[v], p.cost[b.producer[v]], v))
        droppable = [keep[v] and v not in busy and b.size[v] > 0 and v not in b.forced
                     and v not in b.required for v in range(nv)]
        best = None
        for wide in (False, True):  # the rest of the values at the peak only when stuck
            if best is not None or (wide and len(cands) <= CANDIDATES):
                break
            for group in _moves(p, cands, droppable, views, wide):
                keep[group] = False
                s2 = b.sequence(keep, hold, resume, window)
                got = b.state(s2, st.dropped + len(group)) if s2 is not None and len(s2) <= MAX_SEQ else None
                keep[group] = True
                if got is not None and _key(got) < _key(st) and (
                        best is None or _better(got, best[1], st, target)):
                    best = (group, got)
                if time.perf_counter() > deadline:
                    break
        if best is None:
            return
        keep[best[0]] = False
        st = best[1]
        yield st


def _uses(p: RematProblem) -> list[list[int]]:
    """Per value: the sorted stages needing it directly (its producer, readers of it or of a
    view of it, ``n`` when required)."""
    V = p.values
    uses: list[set[int]] = [{val.producer} for val in V]
    for k, rs in enumerate(p.reads):
        for v in rs:
            uses[v].add(k)
            b = V[v].base
            if b is not None:
                uses[b].add(k)
    for v in p.required:
        uses[v].add(p.n)
    return [sorted(u) for u in uses]


def _moves(p: RematProblem, cands: list[int], droppable: list[bool], views: dict[int, list[int]],
           wide: bool = False):
    """The groups a descent step tries: each of the ``CANDIDATES`` largest values at the peak
    with 0, 1, 2, 4... levels of its ancestors (``_groups``), then *batches*: the cheapest
    1/8, 1/4, 1/2 and all of the values at the peak by recompute cost per unit (where the peak
    is made of many small values, as in an unrolled LSTM, one value per step is too slow).
    ``wide``: the groups of the other values at the peak instead (when those moves are stuck:
    layered:250 goes from 0.796 to 0.762 of the baseline with them)."""
    if wide:
        for v in cands[CANDIDATES:]:
            yield from _groups(p, v, droppable, views)
        return
    for v in cands[:CANDIDATES]:
        yield from _groups(p, v, droppable, views)
    if len(cands) <= CANDIDATES:
        return
    V = p.values
    cheap = sorted(cands, key=lambda v: (p.cost[V[v].producer] / V[v].size, v))
    for frac in (8, 4, 2, 1):
        batch = cheap[: max(1, len(cheap) // frac)]
        yield batch + [w for u in batch for w in views.get(u, ())]


def _groups(p: RematProblem, v: int, droppable: list[bool], views: dict[int, list[int]]):
    """{v}, then v with its droppable ancestors up to 1, 2, 4, ... ``GROUP_DEPTH`` levels back:
    dropping a value alone keeps its inputs live longer (they are its checkpoint), so a lower
    peak may need the checkpoint moved further back (a whole segment between two checkpoints
    dropped at once, as in chain checkpointing)."""
    V = p.values

    def with_views(vs: list[int]) -> list[int]:  # a view dropped with its base, or it would hold it
        return vs + [w for u in vs for w in views.get(u, ())]

    group = [v]
    seen = {v}
    frontier = [v]
    yield with_views(group)
    for level in range(1, GROUP_DEPTH + 1):
        nxt = []
        for u in frontier:
            for w in p.reads[V[u].producer]:
                if w not in seen and droppable[w]:
                    seen.add(w)
                    nxt.append(w)
        if not nxt:
            if level & (level - 1):  # the last group was not yielded yet
                yield with_views(group)
            return
        group.extend(nxt)
        frontier = nxt
        if level & (level - 1) == 0:  # powers of two
            yield with_views(group)


def _views(p: RematProblem) -> dict[int, list[int]]:
    """base value -> the values that are views of it."""
    out: dict[int, list[int]] = {}
    for w, val in enumerate(p.values):
        if val.base is not None:
            out.setdefault(val.base, []).append(w)
    return out
