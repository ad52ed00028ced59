"""Ops of the eager capture that write arguments in place (``Op.meta['inplace'] == "args"``):
in-place aten ops (``relu_``, ``add_``, the optimizer's updates), ops that also return fresh
tensors (batch norm updating its running statistics), writes through a view of a storage.

Without a planned offset, a written argument is overwritten where it lies (its old version is
gone); with one, the old value is first copied into the new slot and the op runs there (same
kernel, same bits). Fresh outputs go through the ``out=`` overload when there is one, else
they are computed outside the arena and copied in (counted as memory outside the arena).
"""
from __future__ import annotations

from typing import Any

from .recipe import out_call_args, out_variant


def _pick(res: Any, path: tuple) -> Any:
    for i in path:
        res = res[i]
    return res


def compile_mut(self, c, m: dict, outs: list) -> None:
    """Written arguments: path into (args, kwargs), the old version written over (or the slot
    it is first copied to, when the plan runs the op out of place) and the view written
    through; fresh outputs through the ``out=`` overload when there is one."""
    c.mode = "mut"
    writes, fresh = [], []
    mutated = set(self.g.ops[c.op].mutated)
    for (t, path, slot, _), raw in zip(outs, m["outputs"]):
        if t in mutated:
            ref = m["args"] if raw[0] == "arg" else m.get("kwargs", {})
            for p in raw[1:]:
                ref = ref[p]
            view = tuple(tuple(x) if isinstance(x, list) else x for x in ref["view"]) if "view" in ref else None
            writes.append((t, tuple(raw), slot, self.g.tensors[t].inplace_of, view))
        else:
            fresh.append((t, path, slot, None))
    c.writes, c.fresh = tuple(writes), tuple(fresh)
    c.outs = tuple((t, p, s, None if s is not None else old) for t, p, s, old, _ in writes) + c.fresh
    ov = out_variant(c.target) if fresh else None
    if (ov is not None and all(s is not None and len(p) == 1 for _, p, s, _ in fresh)
            and len(fresh) == len(ov.out_names) == len(self.g.ops[c.op].meta.get("outputs", [])) - len(writes)):
        c.ov = ov


def exec_mut(self, c, args: list, kwargs: dict, env: list, check: bool) -> int:
    bases = []
    for t, path, slot, old, view in c.writes:
        base = env[old]
        if slot is not None:
            slot.copy_(base)
            base = slot
        node: Any = args if path[0] == "arg" else kwargs
        for p in path[1:-1]:
            node = node[p]
        node[path[-1]] = base if view is None else base.as_strided(view[0], view[1], base.storage_offset() + view[2])
        bases.append(base)
    temp = 0
    if c.ov is not None:
        a, kw = out_call_args(c.ov, args, kwargs)
        for t, path, slot, _ in c.fresh:
            kw[c.ov.out_names[path[0]]] = slot
        c.ov.overload(*a, **kw)
        for t, _, slot, _ in c.fresh:
            env[t] = slot
    else:
        res = c.fn(*args, **kwargs)
        for t, path, slot, _ in c.fresh:
            v = _pick(res, path)
            if slot is not None:
                if check and not self.arena.holds(v):
                    temp += v.untyped_storage().nbytes()
                slot.copy_(v)
                env[t] = slot
            else:
                env[t] = v  # a view output
    for (t, _, slot, old, _), base in zip(c.writes, bases):
        env[t] = base
        if slot is None:
            env[old] = None  # overwritten: its old value is gone
    return temp




