"""The node-level rematerialisation problem extracted from a Graph (what every formulation solves).

Checkmate's model has one node per op with one output; a captured graph has multi-output ops,
views, in-place writes and resident tensors. The mapping, and why each choice loses nothing
(or what it restricts, stated):

- **Nodes = ops**, in captured order. Stage t computes op t for the first time (R[t,t] = 1)
  and may recompute ops k < t, in index order, each at most once per stage (Checkmate's
  schedule class: first computations follow the captured order, as in Checkmate, Moccasin and
  the runtime heuristics).
- **Values = storages an op allocates**: every non-view output. Memory, keep (S) and free
  decisions are per value, not per op, so a multi-output op can keep one output (a weight
  gradient to the end) and drop another at once. All outputs of an op are allocated together
  when it runs.
- **Views** (``alias_of``) are values of 0 bytes whose base (``Graph.view_base``) must stay
  live while they are: the validator releases a storage only when its last user goes, so a
  kept view costs its base's bytes. We require "view kept => base kept" (S[t,w] <= S[t,b]) and
  count readers of a view as readers of its base for the in-stage free point. This loses
  nothing: keeping the base alongside a kept view costs no extra bytes.
- **In-place writes over a resident storage** (optimizer updates of parameters and state)
  run in place: the new version is a 0-byte value living in the resident storage, and since
  the old version is then gone, the writing op and every op reading the old version (or a
  view of it) may not run after the write: ``limit[k]`` is the last stage in which op k may
  run (the writing op itself is never recomputed). Other in-place writes (over activations)
  run out of place: the written tensor is a fresh value (an offset is legal for it).
- **Resident** storages (params, buffers, optimizer state, batch) are live throughout, packed
  at the bottom of the address space: [0, resident bytes). Packing loses nothing: they are
  permanent, so any placement can be compacted (each other buffer lies in a gap between
  residents; removing the resident intervals from the axis and shifting keeps every other
  pair disjoint and the top address unchanged).
- **Required** tensors must be live at the end: their values (and the base of a required view)
  are kept "into stage n".
- Sizes are counted in units of the plan alignment (every storage occupies
  ``align_up(bytes, alignment)`` bytes), so capacity = budget // alignment units.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from planner.addrspace import align_up
from planner.graph import Graph


@dataclass(frozen=True)
class Value:
    tensor: int        # tensor id (a storage owner, or a view)
    producer: int      # op id that produces it
    size: int          # units of `alignment` (0 for views)
    base: int | None   # value index of the base storage when this is a view of a computed tensor
    in_resident: bool = False  # a view of a resident, or an in-place write over one: no storage of its own


@dataclass(frozen=True)
class RematProblem:
    graph: Graph
    alignment: int                     # bytes per unit
    cost: tuple[float, ...]            # per op compute cost (seconds)
    values: tuple[Value, ...]          # computed tensors that occupy or pin storage
    outs: tuple[tuple[int, ...], ...]  # outs[k] = value indices produced by op k
    reads: tuple[tuple[int, ...], ...] # reads[k] = value indices op k reads directly (inputs, views included)
    touch: tuple[tuple[int, ...], ...] # touch[v] = ops after which value v may be freed in a stage
                                       #   (its producer, its readers, and for a base the readers of its views)
    required: tuple[int, ...]          # value indices that must be live at the end
    resident_units: int                # units of resident storage (live throughout)
    limit: tuple[int, ...] = ()        # limit[k] = last stage op k may run in (n: no limit)

    @property
    def n(self) -> int:
        return len(self.cost)

    @cached_property
    def out_units(self) -> tuple[int, ...]:
        return tuple(sum(self.values[v].size for v in self.outs[k]) for k in range(self.n))

    @cached_property
    def value_of(self) -> dict[int, int]:
        """tensor id -> value index."""
        return {val.tensor: i for i, val in enumerate(self.values)}

    @cached_property
    def last_read(self) -> tuple[int, ...]:
        """Per value: the last op (captured order) reading it or one of its views (-1: none)."""
        last = [-1] * len(self.values)
        for k, rs in enumerate(self.reads):
            for v in rs:
                last[v] = max(last[v], k)
                b = self.values[v].base
                if b is not None:
                    last[b] = max(last[b], k)
        return tuple(last)

    def capacity(self, budget: int) -> int:
        """Units available to computed values (residents packed below)."""
        return budget // self.alignment - self.resident_units


def extract(g: Graph, alignment: int | None = None) -> RematProblem:
    """Build the node-level problem of ``g`` (see the module docstring for the mapping);
    ``alignment`` None: the graph's own (``Graph.alignment``)."""
    alignment = alignment or g.alignment
    T = g.tensors
    values: list[Value] = []
    index: dict[int, int] = {}
    outs: list[list[int]] = [[] for _ in g.ops]
    vbase = g.view_base
    for op in g.ops:
        for t in op.outputs:
            tt = T[t]
            base = None
            if tt.alias_of is not None:
                b = vbase[t]
                if T[b].producer is None:
                    # a view of a resident storage pins nothing extra: it behaves as a 0-byte value
                    base = None
                else:
                    base = index[b]
            in_res = (tt.alias_of is not None and base is None) or (
                tt.inplace_of is not None and T[g.storage_root[t]].producer is None)
            size = 0 if tt.alias_of is not None or in_res else align_up(tt.bytes, alignment) // alignment
            index[t] = len(values)
            values.append(Value(t, op.id, size, base, in_res))
            outs[op.id].append(index[t])
    reads_l = [list(dict.fromkeys(index[t] for t in op.inputs if t in index)) for op in g.ops]
    for v, val in enumerate(values):  # producing a view needs its base live (the validator checks it)
        if (val.base is not None and values[val.base].producer != val.producer
                and val.base not in reads_l[val.producer]):
            reads_l[val.producer].append(val.base)
    reads = [tuple(r) for r in reads_l]
    touch: list[set[int]] = [{values[v].producer} for v in range(len(values))]
    for k, rs in enumerate(reads):
        for v in rs:
            touch[v].add(k)
            b = values[v].base
            if b is not None:
                touch[b].add(k)
    req: dict[int, None] = {}
    for t in g.required:
        if t in index:
            req[index[t]] = None
            b = values[index[t]].base
            if b is not None:
                req[b] = None
    resident = sum(align_up(t.bytes, alignment) // alignment
                   for t in T if t.producer is None and t.alias_of is None)
    n = len(g.ops)
    limit = [n] * n
    for t in T:  # in place over a resident: readers of the old version must run before the write
        if t.inplace_of is not None and T[g.storage_root[t.id]].producer is None:
            w = t.producer
            old = t.inplace_of
            for u in T:
                if u.id == old or (u.alias_of is not None and vbase[u.id] == old):
                    for c in g.consumers[u.id]:
                        limit[c] = min(limit[c], w)
            limit[w] = min(limit[w], w)
    for op in g.ops:  # a source op's outputs come from outside the step: it runs once, in its stage
        if g.is_source(op.id):
            limit[op.id] = op.id
    return RematProblem(
        graph=g, alignment=alignment, cost=tuple(float(op.cost) for op in g.ops),
        values=tuple(values), outs=tuple(tuple(o) for o in outs), reads=tuple(reads),
        touch=tuple(tuple(sorted(s)) for s in touch), required=tuple(req), resident_units=resident,
        limit=tuple(limit))


def recompute_stage(p: RematProblem, t: int, have, limit) -> list[int] | None:
    """The ops to rerun just before op ``t`` so that it finds every input: the producers of the
    values it reads (and, transitively, of their inputs) that are not in ``have``, in index
    order (Checkmate's schedule class). None when one of them may not run at stage ``t``
    (``limit``: last stage each op may run in)."""
    stage: set[int] = set()
    stack = [v for v in p.reads[t] if v not in have]
    while stack:
        v = stack.pop()
        k = p.values[v].producer
        if k in stage or k == t:
            continue
        if limit[k] < t:
            return None
        stage.add(k)
        stack.extend(u for u in p.reads[k] if u not in have)
    return sorted(stage)
