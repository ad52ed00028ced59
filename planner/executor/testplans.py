"""Plans made only to exercise the executor, independent of any method: the captured order with
forward activations evicted right after they are made and recomputed (recursively) when next
needed, and a plan with two live tensors placed over each other (a corrupted plan).

``remat_plan`` recomputes random ops (dropout) too, so the RNG replay is exercised, and reuses
freed addresses (first-fit), so slots are shared over time as in a real plan.
"""
from __future__ import annotations

import random as _random

from ..addrspace import AddressSpace, align_up
from ..graph import Graph
from ..plan import Plan, Step


def _regenerable(g: Graph, overwritten: set[int]) -> list[bool]:
    """regen[t]: t can be produced again at any time of the step: a resident never overwritten,
    or the output of an op without in-place outputs whose inputs are all regenerable."""
    regen = [False] * len(g.tensors)
    for t in g.tensors:  # producers precede consumers
        if t.producer is None:
            regen[t.id] = t.id not in overwritten
        else:
            op = g.ops[t.producer]
            writes_over = any(g.tensors[m].inplace_of in overwritten for m in op.mutated)
            regen[t.id] = not writes_over and all(regen[x] for x in op.inputs)
    return regen


def _evictable(g: Graph, t: int, regen: list[bool]) -> bool:
    tt = g.tensors[t]
    if tt.producer is None or tt.alias_of is not None or tt.inplace_of is not None or t in g.required_set:
        return False
    return regen[t] and g.ops[tt.producer].meta.get("phase") == "fwd"


def remat_plan(g: Graph, fraction: float = 0.5, seed: int = 0, alignment: int = 512,
               buffers_in_place: bool = False, out_of_place: bool = False) -> Plan:
    """Every op once in captured order, plus: each evictable forward output is, with probability
    ``fraction``, freed right after its op and recomputed before its next use. Budget = the
    highest address used (first-fit in a generous space). New buffer values (BatchNorm running
    stats, ``Op.meta['inplace'] == 'copy'``) get their own storage unless ``buffers_in_place``,
    so that the old values stay and batch-norm layers remain recomputable. ``out_of_place``:
    every in-place output (optimizer updates too) gets its own storage."""
    rnd = _random.Random(seed)
    T = g.tensors

    def in_place(t) -> bool:
        if out_of_place:
            return False
        return t.inplace_of is not None and (buffers_in_place or g.ops[t.producer].meta.get("inplace") != "copy")

    # values overwritten in place before the backward pass ends (the optimizer's updates come
    # after every recomputation of a forward value, so they do not count)
    overwritten = {t.inplace_of for t in T if in_place(t) and g.ops[t.producer].meta.get("phase") != "opt"}
    regen = _regenerable(g, overwritten)
    evict = {t.id for t in T if _evictable(g, t.id, regen) and rnd.random() < fraction}
    cap = 4 * sum(align_up(t.bytes, alignment) for t in T)
    space = AddressSpace(cap, alignment)
    block: dict[int, list[int]] = {}  # live tensor -> [offset, size, users] shared per storage
    steps: list[Step] = []
    res_off = []
    for t in T:
        if t.producer is None and t.alias_of is None:
            off = space.alloc(align_up(t.bytes, alignment))
            block[t.id] = [off, align_up(t.bytes, alignment), 1]
            res_off.append((t.id, off))
    for t in T:
        if t.producer is None and t.alias_of is not None:
            block[t.id] = block[g.view_base[t.id]]
            block[t.id][2] += 1
    top = [0]

    def drop(t: int) -> None:
        b = block.pop(t)
        b[2] -= 1
        if b[2] == 0 and b[1]:
            space.release(b[0], b[1])

    def free(t: int) -> None:
        steps.append(Step.free(t))
        drop(t)

    def run(j: int, stack: tuple = ()) -> None:
        op = g.ops[j]
        if j in stack:
            raise ValueError(f"cannot recompute op {j}: cycle")
        for x in dict.fromkeys(op.inputs):
            if x not in block:
                run(T[x].producer, stack + (j,))
        offs = {}
        for t in op.outputs:
            tt = T[t]
            if t in block:
                drop(t)
            if tt.alias_of is None and not in_place(tt):
                size = align_up(tt.bytes, alignment)
                off = space.alloc(size)
                offs[t] = off
                block[t] = [off, size, 1]
                top[0] = max(top[0], off + size)
        steps.append(Step.compute(j, offs))
        for t in op.outputs:
            tt = T[t]
            if tt.alias_of is not None:
                block[t] = block[tt.alias_of]
                block[t][2] += 1
            elif in_place(tt):
                block[t] = block[tt.inplace_of]
                block[t][2] += 1
                drop(tt.inplace_of)

    last = g.last_use
    for j, op in enumerate(g.ops):
        run(j)
        for t in list(block):
            tt = T[t]
            if tt.producer is None or t in g.required_set:
                continue
            if last[t] <= j or (t in evict and t in op.outputs and last[t] > j):
                free(t)
    budget = max(top[0], max((b[0] + b[1] for b in block.values()), default=0))
    budget = max(budget, max(o + align_up(T[t].bytes, alignment) for t, o in res_off))
    return Plan(g.hash, budget, "test-remat", tuple(steps), tuple(res_off), alignment, g.name,
                {"fraction": fraction, "seed": seed})


def corrupt(g: Graph, plan: Plan) -> tuple[Plan, str]:
    """A copy of ``plan`` in which one output is placed over a storage that is still live and
    read later (and which it does not read itself): the executor must notice the damage."""
    from ..plan import COMPUTE
    T = g.tensors
    live: dict[int, int] = {}          # live non-view tensor -> offset
    steps = list(plan.steps)
    for k, s in enumerate(steps):
        if s.kind != COMPUTE:
            live.pop(s.ref, None)
            continue
        op = g.ops[s.ref]
        offs = dict(s.offsets)
        for t, off in offs.items():
            for v, voff in live.items():
                if (v not in op.inputs and T[v].bytes >= T[t].bytes > 0 and _read_before_free(g, steps, k, v)
                        and T[v].producer is not None
                        and not any(T[x].alias_of == v for x in op.inputs)):
                    offs[t] = voff
                    steps[k] = Step.compute(s.ref, offs)
                    bad = Plan(plan.graph_hash, plan.budget, plan.method + "+corrupted", tuple(steps),
                               plan.resident_offsets, plan.alignment, plan.model, plan.meta)
                    return bad, f"step {k}: tensor {t} placed over live tensor {v} at offset {voff}"
        for t, off in offs.items():
            live[t] = off
    raise ValueError("no live tensor to corrupt in this plan")


def _read_before_free(g: Graph, steps: list, k: int, v: int) -> bool:
    """Whether some compute after step k reads v (or a view of it) before v is freed or recomputed."""
    from ..plan import COMPUTE
    for u in steps[k + 1:]:
        if u.kind != COMPUTE:
            if u.ref == v:
                return False
            continue
        op = g.ops[u.ref]
        if v in op.inputs or any(g.tensors[x].alias_of == v for x in op.inputs):
            return True
        if v in op.outputs:
            return False
    return False
