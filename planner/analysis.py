"""Derived facts of a graph: the baseline schedule, its peak and cost, the minimum feasible budget.

These are computed from the graph's structure directly (storage intervals, ancestor sets),
not by replaying a plan, so that tests can compare them with the independent validator.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .addrspace import align_up
from .graph import Graph
from .plan import Step


def baseline_steps(g: Graph) -> list[Step]:
    """The plain schedule without addresses: each op once in captured order, in-place ops in
    place, and right after op j every tensor whose free point (``Graph.free_after``: its last
    use, or under "release" frees its last handle's release) is j is freed, except resident and required tensors and tensors overwritten in
    place (those are gone already)."""
    overwritten = {t.inplace_of for t in g.tensors if t.inplace_of is not None}
    dies_at: list[list[int]] = [[] for _ in g.ops]
    free_after = g.free_after
    for t in g.tensors:
        if t.producer is None or t.id in g.required_set or t.id in overwritten:
            continue
        dies_at[free_after[t.id]].append(t.id)
    steps: list[Step] = []
    for op in g.ops:
        steps.append(Step.compute(op.id))  # offsets filled in by an address policy
        steps.extend(Step.free(t) for t in dies_at[op.id])
    return steps


def storage_intervals(g: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each storage of the baseline schedule (in-place chains share one), its bytes and the
    op interval [start, end] during which it is live; resident storages start at -1 and
    storages holding a required tensor or a resident one never overwritten end at len(ops).

    Returns (roots, start, end) arrays indexed like ``roots`` (tensor ids owning a storage).
    """
    n = len(g.ops)
    root = g.storage_root
    last = g.free_after
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    overwritten = {t.inplace_of for t in g.tensors if t.inplace_of is not None}
    for t in g.tensors:
        r = root[t.id]
        s = -1 if t.producer is None else t.producer
        if r == t.id:
            start[r] = s
            end[r] = s
        e = max(s, last[t.id])
        # resident tensors stay to the end unless overwritten in place (the new version decides)
        if (t.producer is None and t.id not in overwritten) or t.id in g.required_set:
            e = n
        end[r] = max(end[r], e)
    roots = np.fromiter(start.keys(), dtype=np.int64, count=len(start))
    return roots, np.array([start[r] for r in roots], dtype=np.int64), np.array([end[r] for r in roots], dtype=np.int64)


def live_bytes_profile(g: Graph, alignment: int | None = None) -> np.ndarray:
    """live[k] = bytes live while op k-1 runs (live[0]: before any op, the resident storages).

    Every storage counts its size rounded up to ``alignment``, as it occupies the address
    space (CUDA's caching allocator rounds blocks to 512 bytes too); None: the graph's own."""
    alignment = alignment or g.alignment
    n = len(g.ops)
    roots, start, end = storage_intervals(g)
    sizes = np.array([align_up(g.tensors[r].bytes, alignment) for r in roots], dtype=np.int64)
    diff = np.zeros(n + 3, dtype=np.int64)
    np.add.at(diff, start + 1, sizes)
    np.add.at(diff, end + 2, -sizes)
    return np.cumsum(diff)[: n + 1]


def baseline_peak(g: Graph, alignment: int | None = None) -> int:
    """Peak live bytes of the baseline schedule (parameters and other resident storages
    included, each storage rounded up to ``alignment``). Budgets are ratios of this."""
    return int(live_bytes_profile(g, alignment).max()) if g.tensors else 0


def baseline_cost(g: Graph) -> float:
    """Compute cost of the baseline schedule: every op once."""
    return g.total_cost()


@dataclass(frozen=True)
class MinBudget:
    bytes: int        # the minimum feasible budget (a lower bound every valid plan respects)
    op: int | None    # op whose footprint sets it (None: the final required set does)
    permanent: int    # bytes that are live throughout any valid plan


def min_feasible_budget(g: Graph, alignment: int | None = None) -> MinBudget:
    """The least memory any valid plan can use: no plan fits a smaller budget.

    How it is computed (every term is forced in *every* valid plan):
    - *permanent* storages: resident tensors that must survive the whole step, because they
      (or the in-place version written over them) are required at the end. They cannot be
      recomputed, so either they or their successor are live at every moment: their bytes
      are counted throughout.
    - When op i runs for the first time, its input storages (views count their base) and its
      newly allocated outputs are live together. Every other resident storage r is live too
      if some op reading r depends on i (a strict descendant of i): that op has not run yet,
      and r, which nobody can recompute, must still exist for it. So is the output of a
      source op (never recomputed) when, besides such a later reader, a reader of it is i or
      one of i's ancestors (it exists already).
    - At the end all required tensors are live together.
    The budget is the maximum of these moments. Activations are not counted beyond the op
    that needs them because any plan may free and recompute them. The bound is tight when
    every non-resident value can be recomputed from resident ones with only one op's
    footprint live (chains and trees); tests check it on such graphs. Alignment padding is
    Sizes are rounded up to ``alignment`` (None: the graph's) as everywhere in the memory model.
    """
    alignment = alignment or g.alignment
    n = len(g.ops)
    T = g.tensors

    def size(t: int) -> int:
        return align_up(T[t].bytes, alignment)

    vbase = g.view_base
    root = g.storage_root
    permanent_roots: set[int] = set()
    for t in g.required:
        r = root[t]
        if T[r].producer is None:
            permanent_roots.add(r)
    permanent = sum(size(r) for r in permanent_roots)

    # Ancestor sets as Python int bitmasks over ops (bit i set = op i is an ancestor).
    anc = [0] * n
    for op in g.ops:
        m = 0
        for t in op.inputs:
            p = T[t].producer
            if p is not None:
                m |= anc[p] | (1 << p)
        anc[op.id] = m
    # For each non-permanent resident storage: the ops that precede one of its readers.
    readers: dict[int, set[int]] = {}
    for u in T:  # a storage is read through its tensor or any view of it
        b = vbase[u.id]
        if T[b].producer is None and root[b] not in permanent_roots:
            readers.setdefault(b, set()).update(g.consumers[u.id])
    # A source op's output (a constant loaded mid-step) cannot be recomputed either: once one
    # of its readers has run and while another is still to come, it is live.
    after_reader: dict[int, int] = {}
    for u in T:
        b = vbase[u.id]
        if T[b].producer is not None and g.is_source(T[b].producer) and g.consumers[u.id]:
            readers.setdefault(b, set()).update(g.consumers[u.id])
            after_reader[b] = 0
    for b in after_reader:
        rmask = 0
        for c in readers[b]:
            rmask |= 1 << c
        after_reader[b] = sum(1 << i for i in range(n) if (anc[i] | (1 << i)) & rmask)
    reader_mask: dict[int, int] = {}
    resident_at = np.zeros(n, dtype=np.int64)
    for b, cs in readers.items():
        mask = 0
        for c in cs:
            mask |= anc[c]
        if b in after_reader:
            mask &= after_reader[b]
        reader_mask[b] = mask
        while mask:
            low = mask & -mask
            resident_at[low.bit_length() - 1] += size(b)
            mask ^= low

    best, best_op = 0, None
    for op in g.ops:
        blocks: set[int] = set()
        fresh = 0
        for t in op.inputs:
            b = root[vbase[t]]  # a view of an old version and its in-place successor share storage
            if b not in permanent_roots:
                blocks.add(b)
        for t in op.outputs:
            tt = T[t]
            if tt.alias_of is None and tt.inplace_of is None:
                fresh += size(t)
        foot = sum(size(b) for b in blocks) + fresh
        # residents counted by resident_at that are also inputs would be counted twice
        foot += int(resident_at[op.id]) - sum(
            size(b) for b in blocks if reader_mask.get(b, 0) >> op.id & 1)
        if foot > best:
            best, best_op = foot, op.id
    end_blocks = {root[vbase[t]] for t in g.required if root[vbase[t]] not in permanent_roots}
    final = sum(size(b) for b in end_blocks)
    if final > best:
        best, best_op = final, None
    return MinBudget(permanent + best, best_op, permanent)

