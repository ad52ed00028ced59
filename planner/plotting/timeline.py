"""Replay a plan into storage rectangles and a live-bytes curve (what the pictures draw).

Time is the index of the compute step (0 .. computes-1). A storage allocated by compute k and
released by a free after compute j occupies [k, j+1); resident storages start at 0; storages
live at the end run to the last compute. An in-place version run in place keeps its target's
rectangle (same storage); views draw nothing of their own. The replay assumes a valid plan:
callers validate first (the plot command does).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..addrspace import align_up
from ..graph import Graph
from ..plan import COMPUTE, Plan

RESIDENT, COMPUTED, RECOMPUTED = "resident", "computed", "recomputed"


@dataclass(frozen=True)
class Span:
    tensor: int        # tensor that allocated the storage (its root at allocation time)
    offset: int        # byte offset in the plan's address space
    size: int          # bytes of address space (aligned as the validator counts them)
    start: int         # first compute index it is live at
    end: int           # compute index it is released before (exclusive)
    kind: str          # RESIDENT | COMPUTED | RECOMPUTED
    op: int | None     # op that produced it (None for resident)
    freed: bool        # released before the end (False: live at the end of the step)


@dataclass(frozen=True)
class Timeline:
    spans: tuple[Span, ...]
    live: tuple[int, ...]       # live bytes after each compute step
    computes: int               # number of compute steps
    ops: tuple[int, ...]        # op id of each compute step
    recompute: tuple[bool, ...]  # whether each compute step is a recomputation
    budget: int


class _Blk:
    __slots__ = ("kind", "off", "op", "size", "start", "tensor", "users")

    def __init__(self, tensor: int, off: int, size: int, start: int, kind: str, op: int | None):
        self.tensor, self.off, self.size, self.start, self.kind, self.op = tensor, off, size, start, kind, op
        self.users = 0


def replay(g: Graph, plan: Plan) -> Timeline:
    T = g.tensors
    align = max(1, plan.alignment)
    where: dict[int, _Blk] = {}
    spans: list[Span] = []
    live = 0
    k = 0  # compute index of the next compute step

    def attach(t: int, b: _Blk) -> None:
        where[t] = b
        b.users += 1

    def unref(t: int, at: int) -> None:
        nonlocal live
        b = where.pop(t)
        b.users -= 1
        if b.users == 0:
            live -= b.size
            spans.append(Span(b.tensor, b.off, b.size, b.start, at, b.kind, b.op, True))

    def new(t: int, off: int, kind: str, op: int | None, start: int) -> _Blk:
        nonlocal live
        b = _Blk(t, off, align_up(T[t].bytes, align), start, kind, op)
        live += b.size
        return b

    for t, off in plan.resident_offsets:
        attach(t, new(t, off, RESIDENT, None, 0))
    for t in T:
        if t.producer is None and t.alias_of is not None and g.view_base[t.id] in where:
            attach(t.id, where[g.view_base[t.id]])
    seen: set[int] = set()
    lives: list[int] = []
    ops: list[int] = []
    rec: list[bool] = []
    for s in plan.steps:
        if s.kind != COMPUTE:
            if s.ref in where:
                unref(s.ref, k)
            continue
        op = g.ops[s.ref]
        kind = RECOMPUTED if op.id in seen else COMPUTED
        seen.add(op.id)
        offs = dict(s.offsets)
        for t in op.outputs:
            if t in where:
                unref(t, k)
            if t in offs:
                attach(t, new(t, offs[t], kind, op.id, k))
        for t in op.outputs:
            tt = T[t]
            if tt.alias_of is not None and tt.alias_of in where:
                attach(t, where[tt.alias_of])
            elif tt.inplace_of is not None and t not in offs and tt.inplace_of in where:
                b = where[tt.inplace_of]
                attach(t, b)
                unref(tt.inplace_of, k)
        lives.append(live)
        ops.append(op.id)
        rec.append(kind == RECOMPUTED)
        k += 1
    done: set[int] = set()
    for b in where.values():
        if id(b) not in done:
            done.add(id(b))
            spans.append(Span(b.tensor, b.off, b.size, b.start, k, b.kind, b.op, False))
    return Timeline(tuple(spans), tuple(lives), k, tuple(ops), tuple(rec), plan.budget)
