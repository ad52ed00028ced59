"""An incumbent in Checkmate's schedule class for graphs where eviction greedies thrash.

Why ``formulations.greedy`` (and the runtime heuristics) find nothing on random layered
graphs (``layered:N`` at 0.8 and 0.9 of the baseline peak): they decide at the step that goes
over budget, when every value still live is read again within a few stages; the value they
evict has inputs that are long dead, so its recompute needs their producers too, recursively,
every level pinned while the next runs, and the chain itself exceeds the budget
(``greedy_sequence`` gets stuck there with both scores).

*Gap eviction* plans with the whole schedule in view instead. It starts from the plain
schedule's live intervals and, while some moment is over the capacity, applies the move that
removes the most excess per unit of cost. A move evicts a value v between two consecutive
needs a < b and recomputes its producer at the start of b's stage, or *early*: at the start
of the stage right after a run of over-budget moments inside (a, b), where the inputs usually
need a shorter retention (docs/exact.md has the gains). The producer's inputs that would not be live then are *retained* (their
copy extended), so a recompute never needs another one (optionally, up to ``depth`` levels, an
input is recomputed in the same stage instead, when that scores better). When no single move helps, moves that share a retained
input are taken together (*group moves*: keeping one input alive pays for evicting several of
its consumers). The result is an op sequence, first computations in captured order and
recomputations at the start of stages: Checkmate's class. It is only a candidate: the caller
(``formulations.exact.incumbent``) gets minimal lifetimes, DSA addresses and the validator for it, as for
every incumbent.

Memory is counted in *moments*: 2t is the first computation of op t, 2t-1 the
recomputations at the start of stage t (2n-1: the final stage, where required values must be
live). A copy is counted at every moment from the one that (re)computes it to its last need;
all recomputations of a stage share one moment, so the profile over-approximates the live
units at every point of the sequence: a profile within the capacity is a sequence within it.
"""
from __future__ import annotations

import bisect
import logging
import time

import numpy as np

from .problem import RematProblem
from .schedule import lifetimes

log = logging.getLogger(__name__)

# (excess power, recompute depth) tried by ``gap_sequences``: on layered graphs neither power
# dominates after pruning and depth 0 is never worse
VARIANTS: tuple[tuple[int, int], ...] = ((1, 0), (2, 0), (1, 2), (2, 2))
RESTARTS = 8  # seeded runs when every variant is stuck (``gap_sequences``)


def gap_sequence(p: RematProblem, capacity: int, deadline: float | None = None, power: int = 1,
                 depth: int = 0, groups: bool = True, early: bool = True,
                 seed: int | None = None, init: list[int] | None = None) -> list[int] | None:
    """Op sequence whose moment profile fits ``capacity``, or, when no move helps, whose own
    minimal-lifetime peak does (None when neither, or out of time).
    ``power``: the excess measured is sum over moments of max(0, live - capacity) ** power
    (2 also rewards moving excess from a high moment to a lower one); ``depth``: levels of
    inputs that may be recomputed with a value instead of retained; ``groups``: try group
    moves when no single move helps; ``early``: also recompute right after each run of
    over-budget moments, not only at the next need; ``seed``: pick at random among the moves
    within 70% of the best score (None: the best, deterministic); ``init``: start from this
    sequence (in Checkmate's class: first computations in captured order, recomputations
    before the first computation of their stage) instead of the plain schedule: its moves then
    repair whatever excess that sequence has (``formulations.improve.exchange_recomputations``)."""
    import random

    n, V = p.n, p.values
    lim = p.limit or (n,) * n
    rng = random.Random(seed) if seed is not None else None
    end = 2 * n - 1
    needs: list[list[int]] = [[2 * val.producer] for val in V]  # moments at which v must be live
    for k, rs in enumerate(p.reads):
        for v in rs:
            needs[v].append(2 * k)
            b = V[v].base
            if b is not None:
                needs[b].append(2 * k)
    for v in p.required:
        needs[v].append(end)
    needs = [sorted(set(x)) for x in needs]
    starts: list[list[int]] = [[2 * val.producer] for val in V]  # moments where a copy starts
    recs: dict[int, set[int]] = {}  # stage -> ops recomputed at its start
    mem = np.zeros(end + 1, dtype=np.int64)

    def copy_end(v: int, s: int) -> int:
        st = starts[v]
        i = st.index(s)
        nxt = st[i + 1] if i + 1 < len(st) else end + 1
        nd = needs[v]
        return nd[bisect.bisect_left(nd, nxt) - 1]

    if init is not None:
        done = 0  # first computations so far: recomputations now belong to stage ``done``
        for k in init:
            if k == done:
                done += 1
                continue
            if k > done:
                raise ValueError(f"sequence not in Checkmate's class: op {k} runs before op {done}")
            r = 2 * done - 1
            recs.setdefault(done, set()).add(k)
            for w in p.outs[k]:
                if r not in starts[w]:
                    bisect.insort(starts[w], r)
                if r not in needs[w]:
                    bisect.insort(needs[w], r)
            for u in p.reads[k]:
                for x in (u, V[u].base):
                    if x is not None and r not in needs[x]:
                        bisect.insort(needs[x], r)
    for v, val in enumerate(V):
        if val.size:
            for s0 in starts[v]:
                mem[s0:copy_end(v, s0) + 1] += val.size

    def extension(v: int, r: int) -> tuple[int, int] | None:
        """Moments (from, to) that keeping v live at r adds; None when a copy covers r."""
        st = starts[v]
        i = bisect.bisect_right(st, r) - 1
        if i < 0:
            return None  # not computed yet (cannot happen for an input)
        e = copy_end(v, st[i])
        return None if e >= r else (e + 1, r)

    def support(c: int) -> list[int]:
        out: list[int] = []
        for u in p.reads[c]:
            out.append(u)
            if V[u].base is not None:
                out.append(V[u].base)
        return list(dict.fromkeys(out))

    def over(d) -> float:
        x = np.maximum(mem + d - capacity, 0).astype(np.float64)
        return float((x * x).sum()) if power == 2 else float(x.sum())

    def inputs_plan(c, r, t, lvl, spent, delta, seen, total, pending):
        """(extra cost, actions) making the inputs of c live at moment r; ``delta`` (the
        move's change of the profile) is updated in place. ``pending``: moments up to which
        a group's earlier members already retain a value."""
        cost = 0.0
        acts: list[tuple[str, int]] = []
        for u in support(c):
            if u in seen:
                continue
            seen.add(u)
            x = extension(u, r)
            if x is not None and u in pending:
                x = None if pending[u] >= r else (max(x[0], pending[u] + 1), r)
            if x is None:
                acts.append(("need", u))
                continue
            ext = delta.copy()
            ext[x[0]:x[1] + 1] += V[u].size
            choice = (0.0, [("extend", u)], ext, None)
            cu = V[u].producer
            if lvl > 0 and t <= lim[cu] and V[u].base is None and V[u].size and over(ext) > over(delta):
                rec = delta.copy()
                rec[r] += V[u].size
                sub_seen = set(seen)
                c_rec = p.cost[cu]
                sub_c, sub_a = inputs_plan(cu, r, t, lvl - 1, spent + cost + c_rec, rec, sub_seen, total, pending)
                c_rec += sub_c
                n_ext, n_rec = total - over(ext), total - over(rec)
                here = max(spent + cost, 1e-6)
                better = (n_rec / (here + c_rec) > n_ext / here) if (n_rec > 0 or n_ext > 0) else n_rec > n_ext
                if better:
                    choice = (c_rec, sub_a + [("recompute", u)], rec, sub_seen)
            cost += choice[0]
            acts.extend(choice[1])
            delta[:] = choice[2]
            if choice[3] is not None:
                seen |= choice[3]
        return cost, acts

    def move(v, a, r, total, base_delta=None, pending=None):
        """(net excess removed, cost, actions, delta) of evicting v over (a, r)."""
        c = V[v].producer
        delta = np.zeros_like(mem) if base_delta is None else base_delta.copy()
        before = total if base_delta is None else over(base_delta)
        delta[a + 1:r] -= V[v].size
        for w in p.outs[c]:  # the other outputs of c are allocated at r too
            if w != v and V[w].size and extension(w, r) is not None:
                delta[r] += V[w].size
        cost, acts = inputs_plan(c, r, (r + 1) // 2, depth, p.cost[c], delta, {v}, before, pending or {})
        return before - over(delta), p.cost[c] + cost, acts, delta

    def apply(v, a, r, acts) -> bool:
        nd = needs[v]
        i = bisect.bisect_left(nd, a)
        if (i >= len(nd) or nd[i] != a or (i + 1 < len(nd) and nd[i + 1] < r) or extension(v, a) is not None
                or r in starts[v]):
            return False  # a group's earlier member changed v's needs: skip this one
        c = V[v].producer
        t = (r + 1) // 2
        for kind, u in acts:
            if kind in ("extend", "need"):
                # a "need" was live at r when the move was scored; in a group an earlier
                # member may have evicted it since, so its retention is counted here too
                x = extension(u, r)
                if x is not None and V[u].size:
                    mem[x[0]:x[1] + 1] += V[u].size
            elif kind == "recompute":  # u's producer runs at r too: a copy of u alive at r
                if extension(u, r) is not None:
                    bisect.insort(starts[u], r)
                    if V[u].size:
                        mem[r] += V[u].size
                recs.setdefault(t, set()).add(V[u].producer)
            if r not in needs[u]:
                bisect.insort(needs[u], r)
        for u in support(c):
            if r not in needs[u]:
                x = extension(u, r)
                if x is not None and V[u].size:
                    mem[x[0]:x[1] + 1] += V[u].size
                bisect.insort(needs[u], r)
        for w in p.outs[c]:  # every output of c gets a copy starting at r
            if w == v:
                bisect.insort(starts[v], r)
                if r not in needs[v]:
                    bisect.insort(needs[v], r)
                mem[a + 1:r] -= V[v].size
            elif extension(w, r) is not None:
                if r not in needs[w]:
                    bisect.insort(needs[w], r)
                bisect.insort(starts[w], r)
                if V[w].size:
                    mem[r] += V[w].size
        recs.setdefault(t, set()).add(c)
        return True

    it = 0
    while True:
        is_over = mem > capacity
        if not is_over.any():
            break
        if deadline is not None and time.perf_counter() > deadline:
            return None
        it += 1
        total = over(0)
        best, best_s = None, 0.0
        singles: list[tuple] = []
        for v, val in enumerate(V):
            if val.size == 0:
                continue
            c = val.producer
            nd = needs[v]
            for i in range(len(nd) - 1):
                a, b = nd[i], nd[i + 1]
                rb = b if b % 2 else b - 1
                if rb - a < 2 or not is_over[a + 1:rb].any() or extension(v, a) is not None:
                    continue  # nothing over to free, or v is not live at a
                if rb in starts[v]:
                    continue  # a copy starts at b's stage already: v is not live after a
                # recompute at b's stage, or early: right after each run of over moments
                # (the inputs then need a shorter retention)
                rs = [rb]
                if early:
                    ov = np.flatnonzero(is_over[a + 1:rb]) + a + 1
                    for j, o in enumerate(ov):
                        if j + 1 == len(ov) or ov[j + 1] != o + 1:
                            r = o + 1 if (o + 1) % 2 else o + 2
                            if r < rb:
                                rs.append(r)
                for r in rs:
                    if (r + 1) // 2 > lim[c] or r in starts[v]:
                        continue
                    net, cost, acts, delta = move(v, a, r, total)
                    singles.append((v, a, r, net, cost, acts, delta))
                    if net > 0 and net / max(cost, 1e-6) > best_s:
                        best, best_s = [(v, a, r, acts)], net / max(cost, 1e-6)
        if rng is not None and best is not None:
            near = [s for s in singles if s[3] > 0 and s[3] / max(s[4], 1e-6) >= 0.7 * best_s]
            v, a, r, _, _, acts, _ = near[rng.randrange(len(near))]
            best = [(v, a, r, acts)]
        if best is None and groups:
            best = _best_group(p, singles, move, total)
        if best is None:
            # the profile over-approximates: the sequence itself may still fit
            seq = _sequence(n, recs)
            lt = lifetimes(p, seq)
            fits = lt is not None and lt.peak_units <= capacity
            log.debug("gap eviction stuck after %d moves (power %d, depth %d): max excess %d at moment %d; "
                      "the sequence's own peak %s", it, power, depth, int((mem - capacity).max()),
                      int(np.argmax(mem)), "fits" if fits else "does not fit")
            return seq if fits else None
        for v, a, r, acts in best:
            apply(v, a, r, acts)
    seq = _sequence(n, recs)
    # the moment profile over-approximates the sequence's live units; it once did not (a group
    # member read a value an earlier member evicted: layered:49:0 at 0.75, power 1, depth 0,
    # the sequence 18% over the capacity), so the sequence itself is still checked
    lt = lifetimes(p, seq)
    if lt is None or lt.peak_units > capacity:
        log.debug("gap eviction: the profile fits but the sequence's own peak %s does not",
                  None if lt is None else lt.peak_units)
        return None
    return seq


def _sequence(n: int, recs: dict[int, set[int]]) -> list[int]:
    seq: list[int] = []
    for t in range(n + 1):
        seq.extend(sorted(recs.get(t, ())))
        if t < n:
            seq.append(t)
    return seq


def _support(p: RematProblem, c: int) -> set[int]:
    """What op c needs live: its inputs and the bases of those that are views."""
    return {w for u in p.reads[c] for w in (u, p.values[u].base) if w is not None}


def _best_group(p: RematProblem, singles: list[tuple], move, total: float) -> list[tuple] | None:
    """Moves taken together because they share a retained input: seeded by each single move
    that retains something, grown by the other moves that read a retained value no later than
    it is retained, each kept when it raises the group's net; the best net per cost wins."""
    V = p.values
    best, best_s = None, 0.0
    by_support: dict[int, list[int]] = {}
    for j, (v, a, r, net, cost, acts, delta) in enumerate(singles):
        for u in p.reads[V[v].producer]:
            by_support.setdefault(u, []).append(j)
    for j, (v, a, r, net, cost, acts, delta) in enumerate(singles):
        ext = [u for kind, u in acts if kind == "extend"]
        if not ext:
            continue
        pending = {u: r for u in ext}
        members = [(v, a, r, acts)]
        used = {v} | {u for _, u in acts}
        evicted = {v}  # a later member must not read these: it was scored with them live
        g_net, g_cost, g_delta = net, cost, delta
        for u in ext:
            for j2 in by_support.get(u, ()):
                v2, a2, r2 = singles[j2][:3]
                if v2 in used or r2 > pending.get(u, -1) or not evicted.isdisjoint(_support(p, V[v2].producer)):
                    continue
                n2, c2, acts2, d2 = move(v2, a2, r2, total, g_delta, pending)
                if n2 <= 0:
                    continue
                if _per_cost(g_net + n2, g_cost + c2) <= _per_cost(g_net, g_cost) and g_net > 0:
                    continue
                members.append((v2, a2, r2, acts2))
                used |= {v2} | {w for _, w in acts2}
                evicted.add(v2)
                for kind, w in acts2:
                    if kind == "extend":
                        pending[w] = max(pending.get(w, -1), r2)
                g_net, g_cost, g_delta = g_net + n2, g_cost + c2, d2
        if len(members) > 1 and g_net > 0 and _per_cost(g_net, g_cost) > best_s:
            best, best_s = members, _per_cost(g_net, g_cost)
    return best


def _per_cost(net: float, cost: float) -> float:
    """Net gain per unit of recomputation cost; a free gain (ops of zero cost) is infinite."""
    return net / cost if cost > 0 else (float("inf") if net > 0 else 0.0)


def gap_sequences(p: RematProblem, capacity: int, deadline: float):
    """Yield (label, sequence) for each variant (``VARIANTS``) that fits, until the deadline;
    when none does, ``RESTARTS`` seeded runs that pick among the near-best moves at random
    (with the stuck sequence's own peak checked, they plan some graphs neither plans alone)."""
    found = False
    for power, depth in VARIANTS:
        if time.perf_counter() > deadline:
            return
        seq = gap_sequence(p, capacity, deadline, power, depth)
        if seq is not None:
            found = True
            yield f"p{power}d{depth}", seq
    if found:
        return
    for seed in range(RESTARTS):
        for power, depth in VARIANTS[:2]:
            if time.perf_counter() > deadline:
                return
            seq = gap_sequence(p, capacity, deadline, power, depth, seed=seed)
            if seq is not None:
                yield f"p{power}d{depth}s{seed}", seq
