"""From an op sequence to a validated-shape Plan: minimal lifetimes, then addresses.

Every formulation ends here: a stage schedule (Checkmate's R matrix) is flattened to a
sequence of op computations; each tensor is then kept exactly as long as it is read again
before being recomputed (backward liveness), so lifetimes are the shortest the sequence
allows. The resulting storage intervals go to the static address assignment solver
(``planner.alloc``); residents are packed at the bottom of the address space (see
``formulations.problem``). A computation whose outputs are all still live is dropped (it
could only be a zero-cost duplicate of the MILP), so the plan's cost never exceeds the
schedule's.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from planner.alloc import Buffer, solve_dsa
from planner.plan import Plan, Step

from .problem import RematProblem

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Lifetimes:
    seq: tuple[int, ...]                  # ops actually computed, in order
    frees: tuple[tuple[int, ...], ...]    # frees[i] = tensor ids freed right after seq[i]
    blocks: tuple[tuple[int, int, int, int], ...]  # (value, lower, upper, size units): one storage instance, half-open over seq positions
    block_at: tuple[tuple[int, ...], ...] # block_at[i] = block indices allocated by seq[i] (parallel to non-view outs)
    peak_units: int                       # max live units of computed values (residents excluded)
    cost: float                           # compute cost of seq


def stage_sequence(stages: list[list[int]]) -> list[int]:
    """Flatten stages (each a list of op ids) in order, ops ascending inside a stage."""
    return [k for st in stages for k in sorted(st)]


def recompute_stages(seq: list[int]) -> list[tuple[int, int]]:
    """(op, stage) of every recomputation in ``seq`` (ops in captured order of first runs), in
    the stages of Checkmate's model: the stage of a recomputation is the next first run."""
    out = []
    done: set[int] = set()
    for k in seq:
        if k in done:
            out.append((k, len(done)))
        else:
            done.add(k)
    return out


def lifetimes(p: RematProblem, seq: list[int]) -> Lifetimes | None:
    """Minimal lifetimes of ``seq``; None when it reads a value that is not live."""
    V = p.values
    m = len(seq)
    # backward liveness: need[i] = values that must be live right after position i
    need_after: list[frozenset[int]] = [frozenset()] * m
    live: set[int] = set()
    for v in p.required:
        live.add(v)
    for i in range(m - 1, -1, -1):
        need_after[i] = frozenset(live)
        k = seq[i]
        live.difference_update(p.outs[k])
        for v in p.reads[k]:
            live.add(v)
        for v in list(live):  # a live view keeps its base tensor live (one storage)
            b = V[v].base
            if b is not None:
                live.add(b)
    if live:
        log.debug("sequence reads values never computed before: %s", sorted(live)[:5])
        return None
    if p.limit:  # an op run after its limit stage would read a resident already overwritten in place
        first = {}
        for i, k in enumerate(seq):
            first.setdefault(k, i)
        for i, k in enumerate(seq):
            w = p.limit[k]
            if w < p.n and first.get(w, m) < i:
                log.debug("op %d runs after op %d overwrote what it reads", k, w)
                return None
    # forward: allocate, free after last use
    cur: dict[int, int] = {}       # live value -> block index
    blocks: list[list[int]] = []   # [value, lower, upper, size]
    users: dict[int, int] = {}     # block -> live tensors using it
    units = peak = 0
    out_seq: list[int] = []
    frees: list[tuple[int, ...]] = []
    block_at: list[tuple[int, ...]] = []
    cost = 0.0
    for i, k in enumerate(seq):
        if p.outs[k] and all(v in cur for v in p.outs[k]):
            # duplicate computation of live outputs: skip, but still drop what dies here
            if out_seq:
                dead = [v for v in cur if v not in need_after[i]]
                if dead:
                    frees[-1] = frees[-1] + tuple(V[v].tensor for v in dead)
                    for v in dead:
                        units -= _unref(cur, users, blocks, v, len(out_seq))
            continue
        pos = len(out_seq)
        for v in p.reads[k]:
            if v not in cur:
                return None
        new: list[int] = []
        for v in p.outs[k]:
            if v in cur:  # recomputing a live output: the old copy is dropped first
                units -= _unref(cur, users, blocks, v, pos)
        for v in p.outs[k]:
            if _is_view(p, v) or V[v].in_resident:
                b = V[v].base
                if V[v].in_resident:
                    # an in-place write over a resident version (Adam's v.mul_().addcmul_(), a
                    # weight decay then the update; through a view too) overwrites it: the old
                    # version is gone, not freed
                    gone = p.value_of.get(p.graph.tensors[V[v].tensor].inplace_of)
                    if gone is not None and gone in cur:
                        cur.pop(gone)
                if b is None:
                    cur[v] = -1  # view of / in place over a resident storage: no block of ours
                elif b in cur:
                    cur[v] = cur[b]
                    if cur[b] >= 0:
                        users[cur[b]] += 1
                else:
                    return None
                continue
            blocks.append([v, pos, -1, V[v].size])
            bi = len(blocks) - 1
            cur[v] = bi
            users[bi] = 1
            units += V[v].size
            new.append(bi)
        peak = max(peak, units)
        cost += p.cost[k]
        out_seq.append(k)
        block_at.append(tuple(new))
        dead = [v for v in cur if v not in need_after[i]]
        for v in dead:
            units -= _unref(cur, users, blocks, v, pos + 1)
        frees.append(tuple(V[v].tensor for v in dead))
    end = len(out_seq)
    for b in blocks:
        if b[2] < 0:
            b[2] = end
    return Lifetimes(tuple(out_seq), tuple(frees), tuple(tuple(b) for b in blocks), tuple(block_at), peak, cost)


def _is_view(p: RematProblem, v: int) -> bool:
    return p.graph.tensors[p.values[v].tensor].alias_of is not None


def _unref(cur: dict[int, int], users: dict[int, int], blocks: list[list[int]], v: int, at: int) -> int:
    """Drop value v; returns units released (when its block loses its last user)."""
    bi = cur.pop(v)
    if bi < 0:
        return 0
    users[bi] -= 1
    if users[bi] == 0:
        blocks[bi][2] = at
        return blocks[bi][3]
    return 0


@dataclass(frozen=True)
class Placement:
    offsets: dict[int, int] | None   # block index -> offset in units above the residents
    status: str                      # optimal | feasible | infeasible | timeout (the DSA's word)
    solver: str                      # what placed it
    seconds: float
    notes: dict = field(default_factory=dict)


# Share of a placement's time that CP-SAT (``CpsatRuns``: bottom-left and default search in
# turn, a new seed per pair) gets before the DSA portfolio: on remat schedules near the
# capacity CP-SAT places far more than the search (on tilings it is the other way round, so
# ``alloc`` keeps the search first); docs/exact.md has the counts.
PLACE_CPSAT_LEAD = 0.6


def place(lt: Lifetimes, capacity: int, time_limit: float, seed: int = 0, threads: int = 1) -> Placement:
    """Addresses for the blocks of ``lt`` within ``capacity`` units (DSA solver)."""
    t0 = time.perf_counter()
    if lt.peak_units > capacity:
        return Placement(None, "infeasible", "peak", 0.0, {"peak_units": lt.peak_units})
    items = [(i, lo, hi, size) for i, (_, lo, hi, size) in enumerate(lt.blocks) if size > 0 and hi > lo]
    if not items:
        return Placement({}, "optimal", "trivial", 0.0)
    bufs = [Buffer(str(i), lo, hi, size) for i, lo, hi, size in items]
    sol = solve_dsa(bufs, capacity=capacity, time_limit=max(0.1, time_limit), seed=seed, threads=threads,
                    cpsat_lead=PLACE_CPSAT_LEAD)
    offs = None if sol.offsets is None else {int(k): int(v) for k, v in sol.offsets.items()}
    return Placement(offs, sol.status, "planner.alloc", time.perf_counter() - t0)


def build_plan(p: RematProblem, lt: Lifetimes, offsets: dict[int, int], budget: int, method: str,
               meta: dict | None = None) -> Plan:
    """The Plan for ``lt`` with block offsets (units above the residents)."""
    g, a = p.graph, p.alignment
    res_off: list[tuple[int, int]] = []
    top = 0
    for t in g.tensors:
        if t.producer is None and t.alias_of is None:
            res_off.append((t.id, top * a))
            top += -(-t.bytes // a)
    steps: list[Step] = []
    for i, k in enumerate(lt.seq):
        offs = []
        for bi in lt.block_at[i]:
            v = lt.blocks[bi][0]
            offs.append((p.values[v].tensor, (top + offsets.get(bi, 0)) * a))
        steps.append(Step.compute(k, offs))
        steps.extend(Step.free(t) for t in lt.frees[i])
    return Plan(g.hash, budget, method, tuple(steps), tuple(res_off), a, g.name, {**g.meta, **(meta or {})})
